// One esbuild context per bundle. `node esbuild.mjs [--watch] [--production]`.
import * as esbuild from 'esbuild';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { version } = JSON.parse(readFileSync('package.json', 'utf8'));

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');

const common = {
  bundle: true,
  sourcemap: production ? false : 'linked',
  minify: production,
  logLevel: 'warning',
  legalComments: 'none',
  define: { __RENNET_VERSION__: JSON.stringify(version) },
};

/** The entry's `import('./cli')` stays a require of the whole CLI's own bundle beside it. */
/** @type {import('esbuild').Plugin} */
const wholeCliBesideEntry = {
  name: 'whole-cli-beside-entry',
  setup(build) {
    build.onResolve({ filter: /^\.\/cli$/ }, (args) => (args.importer.endsWith('cliEntry.ts') ? { path: './cli-full.js', external: true } : undefined));
  },
};

/** @type {Record<string, import('esbuild').BuildOptions>} */
const bundles = {
  // VS Code loads the extension as CommonJS and provides `vscode` itself.
  extension: {
    ...common,
    entryPoints: ['extension/main.ts'],
    outfile: 'dist/extension.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
  },
  // The sidecar host: a plain Node process started over IPC by the extension.
  host: {
    ...common,
    entryPoints: ['host/main.ts'],
    outfile: 'dist/host.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
  },
  // The board panel, loaded into a webview with a strict CSP.
  webview: {
    ...common,
    entryPoints: ['webview/main.tsx'],
    outfile: 'dist/webview.js',
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    loader: { '.css': 'text' },
  },
  // The headless CLI: the same host code in-process. dist/cli.js is the entry (host/cliEntry.ts):
  // --version and capture load only what they need; every other command loads dist/cli-full.js
  // (host/cli.ts), kept a separate file so a short command never parses the forge clients,
  // harnesses and MCP server.
  cli: {
    ...common,
    entryPoints: { cli: 'host/cliEntry.ts', 'cli-full': 'host/cli.ts' },
    outdir: 'dist',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    banner: { js: '#!/usr/bin/env node' },
    plugins: [wholeCliBesideEntry],
  },
  // Benchmarks (npm run bench); not shipped in the .vsix.
  bench: {
    ...common,
    entryPoints: ['test/bench/main.ts'],
    outfile: 'dist/bench.js',
    platform: 'node',
    format: 'cjs',
    target: 'node20',
  },
};

const only = process.env.RENNET_BUNDLES?.split(',');
const selected = Object.entries(bundles).filter(([name]) => !only || only.includes(name));
const contexts = await Promise.all(selected.map(([, options]) => esbuild.context(options)));

// sql.js loads its WebAssembly from beside the bundle that runs it (host and cli).
mkdirSync('dist', { recursive: true });
copyFileSync(require.resolve('sql.js/dist/sql-wasm.wasm'), 'dist/sql-wasm.wasm');

if (watch) {
  await Promise.all(contexts.map((ctx) => ctx.watch()));
  console.log(`[esbuild] watching ${selected.map(([n]) => n).join(', ')}`);
} else {
  try {
    await Promise.all(contexts.map((ctx) => ctx.rebuild()));
  } finally {
    await Promise.all(contexts.map((ctx) => ctx.dispose()));
  }
}
