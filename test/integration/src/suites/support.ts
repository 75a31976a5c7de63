// What the integration suites share: reaching Rennet's API, unwrapping its results, polling for
// what the extension draws asynchronously, and the scripted Sequence draft of the fixture's feature
// branch with the harness settings that give only Sequence a model.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { RennetApi } from '../../../../extension/api';
import type { GenerationSnapshot } from '../../../../protocol/review';
import { MODELS, SCRIPTED_VENDOR, type ScriptedRound } from '../lmProvider';

/** The fixture's branch review (`feature` checked out, against `main`). */
export const FEATURE_BRANCH = { kind: 'branch', head: 'feature', base: 'main' } as const;

/** Rennet's API; activating it when nothing has yet. */
export async function rennetApi(): Promise<RennetApi> {
  const ext = vscode.extensions.getExtension<RennetApi>('rennet.rennet');
  assert.ok(ext, 'Rennet is not installed');
  return ext.activate();
}

/** Answers what the API resolves with, or fails the test with the host's refusal. */
export function unwrap<T>(result: { ok: true; value: T } | { ok: false; error: { code: string; message: string } }, what: string): T {
  if (!result.ok) assert.fail(`${what} was refused: ${result.error.code}: ${result.error.message}`);
  return result.value;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `read` until `done` holds (marks and threads are drawn after host answers and blob reads), else fails with the last value. */
export async function until<T>(read: () => T, done: (value: T) => boolean, what: string, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  let value = read();
  while (!done(value) && Date.now() < end) {
    await sleep(100);
    value = read();
  }
  if (!done(value)) assert.fail(`${what}: still ${JSON.stringify(value)} after ${timeoutMs / 1000} s`);
  return value;
}

const TERMINAL = new Set(['settled', 'absent', 'failed']);

/** Waits until the panel accepted a snapshot of `generationId` with every lane settled. */
export async function panelSettled(api: RennetApi, sessionId: string, generationId: string, timeoutMs = 60_000): Promise<GenerationSnapshot> {
  const end = Date.now() + timeoutMs;
  let seen: GenerationSnapshot | null = null;
  while (Date.now() < end) {
    seen = api.generation(sessionId);
    if (seen?.generationId === generationId && seen.lanes.every((l) => TERMINAL.has(l.state))) return seen;
    await sleep(100);
  }
  assert.fail(`the panel never received generation ${generationId} settled; it last had ${seen ? `${seen.generationId}: ${seen.lanes.map((l) => `${l.lens} ${l.state}`).join(', ')}` : 'nothing'}`);
}

/**
 * The Sequence board of the fixture's feature branch in four model responses: it cites
 * src/app.js:5 and src/new feature.js:1–12 (head), one reading-order step each under one section.
 */
export const SEQUENCE_SCRIPT: ScriptedRound[] = [
  {
    calls: [
      { name: 'set_document', input: { title: 'The feature branch in reading order', intro_markdown: 'Start with the edit to app.js, then read the new feature file.' } },
      { name: 'cite', input: { path: 'src/app.js', side: 'head', start_line: 5, end_line: 5 }, as: 'c1' },
      { name: 'add_section', input: { title: 'Reading order', body_markdown: 'Two stops: the changed line in app.js, then the added file.' }, as: 's' },
    ],
  },
  {
    calls: [
      { name: 'add_order_step', input: { title: 'app.js changes line 5', explanation_markdown: 'The fifth line now says it changed.', span: '$c1', parent_id: '$s' } },
      { name: 'cite', input: { path: 'src/new feature.js', side: 'head', start_line: 1, end_line: 12 }, as: 'c2' },
    ],
  },
  {
    calls: [
      { name: 'add_order_step', input: { title: 'The new feature file', explanation_markdown: 'Twelve new lines, read top to bottom.', span: '$c2', parent_id: '$s' } },
      { name: 'finish', input: {} },
    ],
  },
  { text: 'The Sequence board is written.' },
];

/** `rennet.harness.*` settings under which Sequence drafts with the scripted model and every other lens has no harness. */
const SEQUENCE_ONLY_SETTINGS: ReadonlyArray<[string, unknown]> = [
  ['default', 'vscode-lm'],
  ['lenses', { design: 'none', decisions: 'none', flagged: 'none', noise: 'none' }],
  ['vscodeLm.vendor', SCRIPTED_VENDOR],
  ['vscodeLm.family', MODELS.drafter.family],
];

/** Sets (or, with `clear`, removes) the Sequence-only harness settings, globally. */
export async function sequenceOnlyHarness(clear = false): Promise<void> {
  const harness = vscode.workspace.getConfiguration('rennet.harness');
  for (const [key, value] of SEQUENCE_ONLY_SETTINGS) await harness.update(key, clear ? undefined : value, vscode.ConfigurationTarget.Global);
}
