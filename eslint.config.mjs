// ESLint (flat config, type-aware through each folder's tsconfig.json). `npm run lint` runs it with
// --max-warnings 0; `npm test` and `npm run check` run that script. The type checkers hold the
// whole tree (~2.7 GB of heap), so the script raises Node's heap limit to 4 GB: by default a
// machine with 8 GB of memory gives a process about a quarter of it, and linting would run out.
//
// Two jobs: the promise and `any` rules that matter in a host that runs long and talks JSON-RPC,
// and the layering each folder's README states, as per-folder import restrictions, so a layering
// violation fails CI. test/unit/lintRules.test.ts lints a forbidden and a permitted import per
// folder through this file.
import { builtinModules } from 'node:module';
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

const escapeRegex = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * An import that climbs out of its folder into one of our top-level folders: `../host`,
 * `../../host/board/x`. Exact while no production subfolder is named after a top-level folder.
 */
const climbsInto = (...folders) => `^(?:\\.\\./)+(?:${folders.join('|')})(?:/|$)`;

const BUILTIN_NAMES = builtinModules.filter((m) => !m.startsWith('_')).map(escapeRegex);
const NODE_BUILTIN = `^(?:node:|(?:${BUILTIN_NAMES.join('|')})(?:/|$))`;

/** A bare npm specifier that is none of `allowed` (nor relative). */
const npmOtherThan = (...allowed) => `^(?![./])(?!(?:${allowed.map(escapeRegex).join('|')})(?:/|$))`;

/**
 * One restriction: an import specifier matching `regex` is refused with `message`;
 * `allowTypeImports` lets `import type` through (a README that says "types only").
 * @typedef {{ regex: string, message: string, allowTypeImports?: boolean }} Restriction
 */

/** @type {Restriction[]} Every production folder (extension, host, webview, protocol, prompts). */
const PRODUCTION = [
  { regex: climbsInto('test'), message: 'Production code never imports test/ (test helpers, benches, fixtures, servers).' },
  { regex: '(?:^|/)bench$', message: 'Benches run under `npm run bench` only; production code never imports one.' },
];

/** @type {Restriction[]} */
const PROTOCOL = [
  ...PRODUCTION,
  {
    regex: `^(?!\\./)(?!(?:zod|vscode-jsonrpc)(?:/|$))`,
    message: 'protocol/ imports only zod, vscode-jsonrpc and its own modules: never Node built-ins, vscode or another folder of ours (protocol/README.md).',
  },
];

/** The protocol modules that carry the JSON-RPC runtime (vscode-jsonrpc): rpc.ts, gatesRpc.ts, rpcSchema.ts, … */
const RPC_MODULE = '(?:rpc\\w*|\\w*Rpc)';

/** @type {Restriction[]} */
const PROTOCOL_INDEX = [
  ...PROTOCOL,
  { regex: `^\\./${RPC_MODULE}$`, message: 'protocol/index.ts re-exports everything except the JSON-RPC modules, so the webview bundle never pulls in the JSON-RPC runtime (protocol/README.md).' },
];

/** @param {string[]} packages npm packages this webview file may import besides preact and zod */
const webview = (...packages) => [
  ...PRODUCTION,
  { regex: climbsInto('extension', 'host', 'prompts'), message: 'webview/ imports only protocol/ of ours: never extension/ or host/ (webview/README.md).' },
  {
    regex: `^(?:\\.\\./)+protocol/${RPC_MODULE}$`,
    message: 'The webview imports protocol/ through protocol/index.ts or protocol/webview.ts, never its JSON-RPC modules (they pull the JSON-RPC runtime into the bundle).',
  },
  {
    regex: npmOtherThan('preact', 'zod', ...packages),
    message:
      'webview/ may import preact and zod from npm (markdown-it only in board/markdown.ts, @vscode/webview-ui-toolkit only in components.tsx); never vscode or Node built-ins (webview/README.md).',
  },
];

/** @type {Restriction[]} */
const EXTENSION = [
  ...PRODUCTION,
  {
    regex: climbsInto('host', 'webview', 'prompts'),
    message: 'extension/ imports only protocol/ of ours: the host is reached over JSON-RPC, the webview by postMessage (extension/README.md).',
  },
];

/** @type {Restriction[]} */
const HOST = [
  ...PRODUCTION,
  { regex: '^vscode(?:-languageclient)?(?:/|$)', message: 'The host never imports vscode: when it needs VS Code it asks the extension over JSON-RPC (host/README.md).' },
  { regex: climbsInto('extension', 'webview'), message: 'The host never imports extension/ or webview/ (host/README.md).' },
  { regex: '^(?:\\.\\./)+prompts/generate$', message: 'prompts/generate.ts is a build tool; the host never imports it (prompts/README.md).' },
];

/** @type {Restriction[]} host/forge/README.md */
const HOST_FORGE = [
  ...HOST,
  {
    regex: '^\\.\\./(?!(?:git|capture)/|\\.\\./protocol/|pipeline/contextDir$|service$)',
    message: 'host/forge imports of ours only protocol/, host/git, host/capture and the types of host/pipeline/contextDir and host/service (host/forge/README.md).',
  },
  { regex: '^\\.\\./(?:pipeline/contextDir|service)$', message: 'host/forge takes only types from here (host/forge/README.md).', allowTypeImports: true },
];

/** @type {Restriction[]} host/read/README.md */
const HOST_READ = [
  ...HOST,
  {
    regex: '^\\.\\./(?!(?:git|capture)/|\\.\\./protocol/|board/tools$)',
    message: 'host/read imports of ours only protocol/, host/git, host/capture and host/board/tools.ts (host/read/README.md).',
  },
];

/** @type {Restriction[]} host/generation/README.md: it reads what the store holds; nothing that drafts or reads it. */
const HOST_GENERATION = [
  ...HOST,
  {
    regex: '^\\.\\./(?:pipeline|harness|review|asks|exits|eval)(?:/|$)',
    message: 'host/generation never imports host/pipeline, host/harness or the folders that read it (review, asks, exits, eval) (host/generation/README.md).',
  },
];

/** @type {Restriction[]} host/board/README.md: quote threads across a round import only protocol/. */
const HOST_QUOTE_ANCHORS = [...HOST, { regex: '^(?!\\.\\./\\.\\./protocol/)', message: 'quoteAnchors.ts imports only protocol/ (host/board/README.md).' }];

/** @type {Restriction[]} prompts/README.md: manifest.ts takes protocol/ types only; only generate.ts uses Node built-ins. */
const PROMPTS = [
  ...PRODUCTION,
  { regex: climbsInto('extension', 'host', 'webview'), message: 'prompts/ imports nothing of ours but protocol/ types (prompts/README.md).' },
  { regex: '^\\.\\./protocol/', message: 'prompts/ takes protocol/ types only (prompts/README.md).', allowTypeImports: true },
  { regex: NODE_BUILTIN, message: 'Only prompts/generate.ts (a build tool) uses Node built-ins (prompts/README.md).' },
];
const PROMPTS_GENERATOR = PROMPTS.filter((r) => r.regex !== NODE_BUILTIN);

/**
 * The import declarations (`import`, `export … from`, `import x = require()`) are checked by
 * @typescript-eslint/no-restricted-imports; a dynamic `import()` and a type's `import('…')` by
 * no-restricted-syntax, from the same list.
 * @param {string[]} files
 * @param {Restriction[]} restrictions
 */
function layer(files, restrictions) {
  // esquery's regex literal cannot hold a `/`; \x2F is the same character to RegExp.
  const inSelector = (regex) => regex.replaceAll('/', '\\x2F');
  const dynamic = restrictions.filter((r) => !r.allowTypeImports);
  return {
    files,
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { patterns: restrictions.map(({ regex, message, allowTypeImports }) => ({ regex, message, ...(allowTypeImports ? { allowTypeImports } : {}) })) },
      ],
      'no-restricted-syntax': [
        'error',
        ...dynamic.map(({ regex, message }) => ({ selector: `ImportExpression[source.value=/${inSelector(regex)}/]`, message })),
        ...dynamic.map(({ regex, message }) => ({ selector: `TSImportType[argument.literal.value=/${inSelector(regex)}/]`, message })),
      ],
    },
  };
}

const TS = ['**/*.ts', '**/*.tsx'];

export default defineConfig(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      '.tsbuild/**',
      'test/e2e/artifacts/**',
      '.scratch/**',
      '.rennet/**',
      // generated from prompts/*.md by prompts/generate.ts
      'prompts/generated.ts',
      // Plain JavaScript (build scripts, the e2e driver, the test runner) is in no tsconfig.json, so the
      // type-aware rules cannot run on it; it is checked by running it.
      '**/*.js',
      '**/*.mjs',
      '**/*.cjs',
    ],
  },
  {
    files: TS,
    extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      // The project service types each file by its folder's tsconfig.json (its runtime's globals)
      // and reads the projects it references from source. (`project` would read their emitted
      // declarations in .tsbuild/, which exist only after `tsc -b`.)
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      // Rethrowing a caught value (typed `unknown`) is fine; throwing a string or a literal is not.
      '@typescript-eslint/only-throw-error': ['error', { allowThrowingUnknown: true }],

      // Off, with the count measured when this file was written (recommendedTypeChecked over the tree):
      // 97: assertions TypeScript already proves; harmless, and worth a pass of their own.
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
      // 79 (67 in tests): async functions with no await, mostly implementing async interfaces.
      '@typescript-eslint/require-await': 'off',
      // 50: mostly callbacks our own interfaces declare in method syntax (`onDone(): void`),
      // destructured or passed on as values.
      '@typescript-eslint/unbound-method': 'off',
      // 37: tsc's noUnusedLocals / noUnusedParameters check this (tsconfig.base.json), not two tools.
      '@typescript-eslint/no-unused-vars': 'off',
      // 27: String(x ?? '') over unknown wire values from models and forges; each wants its own reading.
      '@typescript-eslint/no-base-to-string': 'off',
      // 13: dead stores (a value assigned, then overwritten before use); worth a pass of their own.
      'no-useless-assignment': 'off',
      // The code matches control characters on purpose (visible escapes, Trojan Source, inert links).
      'no-control-regex': 'off',
    },
  },
  {
    // Tests read loosely typed JSON and DOM shapes on purpose; the promise rules still hold.
    files: ['test/**/*.ts', 'test/**/*.tsx'],
    rules: {
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/restrict-template-expressions': 'off',
      '@typescript-eslint/no-this-alias': 'off',
      'no-regex-spaces': 'off',
    },
  },

  // Layering, from each folder's README. Later entries replace earlier ones for the same files, so
  // each list is whole.
  layer(['protocol/**/*.ts'], PROTOCOL),
  layer(['protocol/index.ts'], PROTOCOL_INDEX),
  layer(['webview/**/*.ts', 'webview/**/*.tsx'], webview()),
  layer(['webview/board/markdown.ts'], webview('markdown-it')),
  layer(['webview/components.tsx'], webview('@vscode/webview-ui-toolkit')),
  layer(['extension/**/*.ts'], EXTENSION),
  layer(['host/**/*.ts'], HOST),
  layer(['host/forge/**/*.ts'], HOST_FORGE),
  layer(['host/read/**/*.ts'], HOST_READ),
  layer(['host/generation/**/*.ts'], HOST_GENERATION),
  layer(['host/board/quoteAnchors.ts'], HOST_QUOTE_ANCHORS),
  layer(['prompts/**/*.ts'], PROMPTS),
  layer(['prompts/generate.ts'], PROMPTS_GENERATOR),
);
