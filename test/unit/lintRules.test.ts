import * as assert from 'node:assert/strict';
import { join } from 'node:path';
import { ESLint } from 'eslint';

/**
 * The layering rules of eslint.config.mjs, run through ESLint's own API on snippets placed (by
 * file path only: nothing is written) in each folder: a forbidden import must be reported, so a
 * layering violation fails `npm run lint` and CI, and a permitted one must not.
 */
const root = join(__dirname, '..', '..');
const LAYERING_RULES = new Set(['@typescript-eslint/no-restricted-imports', 'no-restricted-syntax']);

// Only the layering rules run, without type information: they read import specifiers, and the
// snippets' paths exist in no TypeScript project.
const eslint = new ESLint({
  cwd: root,
  overrideConfig: { languageOptions: { parserOptions: { projectService: false, project: null } } },
  ruleFilter: ({ ruleId }) => LAYERING_RULES.has(ruleId),
});

async function layeringMessages(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${code}\n`, { filePath: join(root, file) });
  assert.ok(result, `no lint result for ${file}`);
  return result.messages.map((m) => `${m.ruleId ?? 'fatal'}: ${m.message}`);
}

async function assertRefused(file: string, code: string, says: RegExp): Promise<void> {
  const messages = await layeringMessages(file, code);
  assert.equal(messages.length, 1, `${file}: \`${code}\` should be refused once, got ${JSON.stringify(messages)}`);
  assert.match(messages[0]!, says, `${file}: \`${code}\``);
}

async function assertPermitted(file: string, code: string): Promise<void> {
  assert.deepEqual(await layeringMessages(file, code), [], `${file}: \`${code}\` should be permitted`);
}

describe('lint: layering from the folder READMEs (eslint.config.mjs)', function () {
  this.timeout(60_000);

  it('protocol/ imports only zod, vscode-jsonrpc and itself', async () => {
    const file = 'protocol/example.ts';
    for (const code of [
      "import { readFileSync } from 'node:fs';",
      "import { join } from 'path';",
      "import * as vscode from 'vscode';",
      "import { Store } from '../host/store';",
      "import { ui } from '../extension/ui';",
      "import MarkdownIt from 'markdown-it';",
      "export { h } from 'preact';",
      "const store = import('../host/store');",
    ]) {
      await assertRefused(file, code, /protocol\/ imports only zod, vscode-jsonrpc/);
    }
    await assertPermitted(file, "import { z } from 'zod';\nimport { RequestType } from 'vscode-jsonrpc';\nimport { ok } from './result';\nexport * from './board';");
    await assertRefused('protocol/index.ts', "export * from './rpc';", /re-exports everything except the JSON-RPC modules/);
    await assertRefused('protocol/index.ts', "export * from './gatesRpc';", /re-exports everything except the JSON-RPC modules/);
    await assertPermitted('protocol/index.ts', "export * from './board';");
  });

  it('webview/ imports only protocol/ of ours, preact and zod, never the JSON-RPC modules', async () => {
    const file = 'webview/board/Example.tsx';
    await assertRefused(file, "import { Store } from '../../host/store';", /webview\/ imports only protocol\/ of ours/);
    await assertRefused(file, "import type { ActiveReview } from '../../extension/activeReview';", /webview\/ imports only protocol\/ of ours/);
    await assertRefused(file, "type R = import('../../host/service').ReviewService;", /webview\/ imports only protocol\/ of ours/);
    await assertRefused(file, "const s = await import('../../host/store');", /webview\/ imports only protocol\/ of ours/);
    await assertRefused(file, "import { HostLog } from '../../protocol/rpc';", /never its JSON-RPC modules/);
    await assertRefused(file, "import * as vscode from 'vscode';", /never vscode or Node built-ins/);
    await assertRefused(file, "import { join } from 'node:path';", /never vscode or Node built-ins/);
    await assertRefused(file, "import MarkdownIt from 'markdown-it';", /markdown-it only in board\/markdown.ts/);
    await assertRefused(file, "import { Button } from '@vscode/webview-ui-toolkit';", /webview-ui-toolkit only in components.tsx/);
    await assertPermitted(
      file,
      "import { h } from 'preact';\nimport { useState } from 'preact/hooks';\nimport { z } from 'zod';\nimport { LENSES } from '../../protocol';\nimport { ToWebview } from '../../protocol/webview';\nimport { Button } from '../components';",
    );
    await assertPermitted('webview/board/markdown.ts', "import MarkdownIt from 'markdown-it';");
    await assertPermitted('webview/components.tsx', "const toolkit = import('@vscode/webview-ui-toolkit/dist/button/index.js');");
  });

  it('extension/ imports only protocol/ of ours', async () => {
    const file = 'extension/commands/example.ts';
    await assertRefused(file, "import { ReviewService } from '../../host/service';", /extension\/ imports only protocol\/ of ours/);
    await assertRefused(file, "import type { PanelState } from '../../webview/state';", /extension\/ imports only protocol\/ of ours/);
    await assertRefused('extension/example.ts', "import { Store } from '../host/store';", /extension\/ imports only protocol\/ of ours/);
    await assertPermitted(
      file,
      "import * as vscode from 'vscode';\nimport { LanguageClient } from 'vscode-languageclient/node';\nimport { HostLog } from '../../protocol/rpc';\nimport { join } from 'node:path';\nimport { notify } from '../ui';",
    );
  });

  it('host/ never imports vscode, extension/ or webview/, nor prompts/generate.ts', async () => {
    const file = 'host/review/example.ts';
    await assertRefused(file, "import * as vscode from 'vscode';", /The host never imports vscode/);
    await assertRefused(file, "import { LanguageClient } from 'vscode-languageclient/node';", /The host never imports vscode/);
    await assertRefused(file, "import { notify } from '../../extension/ui';", /never imports extension\/ or webview\//);
    await assertRefused(file, "import { reduce } from '../../webview/state';", /never imports extension\/ or webview\//);
    await assertRefused(file, "import { generate } from '../../prompts/generate';", /build tool/);
    await assertPermitted(
      file,
      "import { readFileSync } from 'node:fs';\nimport { createConnection } from 'vscode-languageserver/node';\nimport { HostLog } from '../../protocol/rpc';\nimport { Store } from '../store';\nimport { SEAT_PROMPTS } from '../../prompts/manifest';",
    );
  });

  it('production code never imports test/ or a bench; benches and tests may', async () => {
    for (const [file, code] of [
      ['extension/example.ts', "import { TestRepo } from '../test/fixtures/gitRepo';"],
      ['host/review/example.ts', "import { TestRepo } from '../../test/fixtures/gitRepo';"],
      ['webview/example.ts', "import { miniDom } from '../test/unit/webview/miniDom';"],
      ['protocol/example.ts', "import { x } from '../test/tools/manifest';"],
    ] as const) {
      const messages = await layeringMessages(file, code);
      assert.ok(
        messages.some((m) => /never imports test\//.test(m)),
        `${file}: ${JSON.stringify(messages)}`,
      );
    }
    await assertRefused('host/store/index.ts', "export { benchStoreAppend } from './bench';", /Benches run under `npm run bench` only/);
    await assertRefused('host/review/example.ts', "import { syntheticPatchset } from '../board/bench';", /Benches run under `npm run bench` only/);
    await assertRefused('host/review/example.ts', "import { syntheticPatchset } from '../../test/bench/boardTools';", /never imports test\//);
    await assertPermitted('test/bench/example.ts', "import { syntheticPatchset } from './boardTools';\nimport { Store } from '../../host/store';\nimport * as vscode from 'vscode';");
  });

  it('host/forge, host/read, host/generation and quoteAnchors.ts keep to what their READMEs allow', async () => {
    await assertRefused('host/forge/example.ts', "import { BoardSeat } from '../board/seat';", /host\/forge imports of ours only/);
    await assertRefused('host/forge/example.ts', "import { ReviewService } from '../service';", /host\/forge takes only types from here/);
    await assertPermitted(
      'host/forge/example.ts',
      "import type { PullRequestSource } from '../service';\nimport type { RelatedContextItem } from '../pipeline/contextDir';\nimport { runGit } from '../git/run';\nimport { Octokit } from '@octokit/rest';",
    );
    await assertRefused('host/read/example.ts', "import { runLensPipeline } from '../pipeline/run';", /host\/read imports of ours only/);
    await assertPermitted('host/read/example.ts', "import { toolSchema } from '../board/tools';\nimport { readBlobBounded } from '../capture/blob';");
    await assertRefused('host/generation/example.ts', "import { runLensPipeline } from '../pipeline/run';", /host\/generation never imports/);
    await assertRefused('host/generation/example.ts', "import { describeAssignment } from '../harness/harnessConfig';", /host\/generation never imports/);
    await assertRefused('host/generation/example.ts', "import { resumableGeneration } from '../review/resume';", /host\/generation never imports/);
    await assertPermitted(
      'host/generation/example.ts',
      "import { loadBoard } from '../board/persist';\nimport { foldRounds } from '../rounds/ledger';\nimport { Store } from '../store';\nimport MarkdownIt from 'markdown-it';",
    );
    await assertRefused('host/board/quoteAnchors.ts', "import type { BoardState } from './state';", /quoteAnchors.ts imports only protocol\//);
    await assertPermitted('host/board/quoteAnchors.ts', "import { LENSES } from '../../protocol/board';");
  });

  it('prompts/ takes protocol/ types only; only generate.ts uses Node built-ins', async () => {
    await assertRefused('prompts/manifest.ts', "import { LENSES } from '../protocol/board';", /protocol\/ types only/);
    await assertRefused('prompts/manifest.ts', "import { readFileSync } from 'node:fs';", /Only prompts\/generate.ts/);
    await assertPermitted('prompts/manifest.ts', "import type { Lens } from '../protocol/board';");
    await assertPermitted('prompts/generate.ts', "import { readFileSync } from 'node:fs';\nimport { join } from 'node:path';");
  });
});
