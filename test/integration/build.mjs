// Bundles the integration test extension (mocha + suites + entry, one CommonJS file) and packages it
// as its own .vsix. `node test/integration/build.mjs` prints the .vsix path.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');
export const INTEGRATION_VSIX = path.join(HERE, 'dist/rennet-integration-tests.vsix');

export async function buildIntegrationExtension() {
  fs.rmSync(path.join(HERE, 'dist'), { recursive: true, force: true });
  await esbuild.build({
    entryPoints: [path.join(HERE, 'src/extension.ts')],
    outfile: path.join(HERE, 'dist/extension.js'),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
    sourcemap: 'inline',
    logLevel: 'warning',
    // mocha's parallel mode resolves worker files at run time; serial mode (used here) never
    // reaches those require.resolve calls.
    logOverride: { 'require-resolve-not-external': 'silent' },
  });
  execFileSync(process.execPath, [path.join(ROOT, 'node_modules/@vscode/vsce/vsce'), 'package', '--no-dependencies', '--allow-missing-repository', '--skip-license', '-o', INTEGRATION_VSIX], {
    cwd: HERE,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return INTEGRATION_VSIX;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(await buildIntegrationExtension());
}
