/**
 * Board fixtures for the webview's board tests (and the screenshot harness): real LensBoardViews,
 * built through the host's own reader (host/board/read.ts), so folds and counts are the ones a
 * panel receives. Every element kind appears on some board.
 */
import { buildCitationIndex } from '../../../host/board/citations';
import { readBoard } from '../../../host/board/read';
import type { BoardState } from '../../../host/board/state';
import { parseDiffOutput } from '../../../host/capture/parseDiff';
import { citationMarks } from '../../../host/generation/citationMarks';
import { buildExcerpts } from '../../../host/generation/excerpts';
import {
  LENSES,
  MEASURE_BY_LENS,
  type BoardElement,
  type BoardStatus,
  type ElementOf,
  type GenerationSnapshot,
  type LaneState,
  type LaneView,
  type Lens,
  type LensBoardView,
  type Patchset,
  type SeatSpend,
} from '../../../protocol';

export const PATCHSET = 'ps-0123456789abcdef';

type Without<T> = T extends unknown ? Omit<T, 'seq' | 'author' | 'parent'> & { parent?: string | null; author?: string } : never;
export type ElementInput = Without<BoardElement>;

/** Elements in creation order, with seq and author filled in. */
export function elements(inputs: readonly ElementInput[]): BoardElement[] {
  return inputs.map((input, seq) => ({ author: 'claude', parent: null, ...input, seq }) as BoardElement);
}

export function boardView(lens: Lens, pool: readonly BoardElement[], options: { title?: string; intro?: string; status?: BoardStatus; absence?: LensBoardView['absence'] } = {}): LensBoardView {
  const state: BoardState = {
    lens,
    patchsetId: PATCHSET,
    document: {
      title: options.title ?? '',
      intro_markdown: options.intro ?? '',
      measure: MEASURE_BY_LENS[lens],
      prose_register: 'authored',
    },
    elements: new Map(pool.map((e) => [e.id, e])),
    status: options.status ?? 'finished',
    absence: options.absence ?? null,
    revision: pool.length,
    nextId: pool.length + 1,
    repairs: [],
    lastFinish: null,
  };
  return readBoard(state);
}

export function codeRef(id: string, path: string, start: number, end: number, extra: Partial<ElementOf<'code_ref'>> = {}): ElementInput {
  return { id, kind: 'code_ref', path, side: 'head', start_line: start, end_line: end, patchset_id: PATCHSET, hunk_ids: [], ...extra };
}

// ─── One board per lens, every kind somewhere ───────────────────────────────────────────────

export function designBoard(): LensBoardView {
  return boardView(
    'design',
    elements([
      { id: 'd1', kind: 'stat', stat_labels: ['Format', 'Requirements', 'Tasks'], stat_values: ['OpenSpec', '2', '3'] },
      codeRef('d2', 'src/upload.ts', 5, 9, { label: 'The retry wrapper' }),
      {
        id: 'd3',
        kind: 'section',
        title: 'Retrying uploads',
        body_markdown: 'A caller of `upload` now gets up to three attempts before the error surfaces.',
        source_paths: ['openspec/changes/retry/specs/upload/spec.md'],
        delta: 'new',
      },
      {
        id: 'd4',
        kind: 'requirement',
        parent: 'd3',
        title: 'Retry a failed upload',
        shall: 'The client SHALL retry a failed upload up to three times.',
        source_path: 'openspec/changes/retry/specs/upload/spec.md',
        source_line: 12,
        spec_delta: 'added',
        trace: ['d2'],
        related_files: ['src/upload.ts', 'src/retry.ts'],
      },
      {
        id: 'd5',
        kind: 'scenario',
        parent: 'd4',
        name: 'Server error',
        text_markdown: '- **WHEN** the server answers 503\n- **AND** fewer than three attempts were made\n- **THEN** the upload is sent again',
      },
      {
        id: 'd6',
        kind: 'scenario',
        parent: 'd4',
        name: 'Client error',
        text_markdown: 'When the server answers 400, the error is returned at once.',
        scenario_condition: 'the server answers 400',
        scenario_response: 'the error is returned at once',
      },
      { id: 'd7', kind: 'scenario', parent: 'd4', name: 'Plain', text_markdown: 'An upload with no body is *never* retried.' },
      { id: 'd8', kind: 'section', title: 'Tasks', body_markdown: 'The change’s own task list, with its check marks.', delta: null },
      { id: 'd9', kind: 'task', parent: 'd8', text: 'Wrap `upload` in `retry`', done: true, source_path: 'openspec/changes/retry/tasks.md', source_line: 3 },
      { id: 'd10', kind: 'task', parent: 'd8', text: 'Add back-off', done: true },
      { id: 'd11', kind: 'task', parent: 'd8', text: 'Document the limit', done: false },
      {
        id: 'd12',
        kind: 'decision',
        parent: 'd8',
        title: 'Three attempts',
        statement: 'An upload is attempted at most three times.',
        rationale: 'Enough to ride out a restart without hiding an outage.',
        alternatives: ['Retry until a deadline.'],
        evidence: [],
        inferred: false,
        source_path: 'openspec/changes/retry/design.md',
      },
      { id: 'd13', kind: 'callout', tone: 'note', markdown: 'The spec names no timeout; see src/retry.ts:3-9.' },
    ]),
    { title: 'Uploads retry on failure', intro: 'An upload that fails is tried again, up to three times.' },
  );
}

export function sequenceBoard(): LensBoardView {
  return boardView(
    'sequence',
    elements([
      { id: 's1', kind: 'section', title: 'The upload path', body_markdown: 'One file travels from `upload` through the retry loop.', delta: null },
      codeRef('s2', 'src/upload.ts', 1, 5),
      { id: 's3', kind: 'order_step', parent: 's1', title: 'upload hands the request to retry', explanation_markdown: 'The body is read once; every attempt reuses it (src/upload.ts:2).', span: 's2' },
      codeRef('s4', 'src/retry.ts', 3, 9),
      { id: 's5', kind: 'order_step', parent: 's1', title: 'retry runs the attempt and backs off', explanation_markdown: 'A thrown error is kept; the loop waits longer each time.', span: 's4' },
      { id: 's6', kind: 'callout', parent: 's5', tone: 'question', markdown: 'Is the delay capped?' },
      { id: 's7', kind: 'prose', markdown: 'Both files are new: see src/retry.ts:1-20 and [the docs](https://example.com/retry).' },
      { id: 's8', kind: 'section', title: 'Round report', delta: null },
      { id: 's9', kind: 'round_outcome', parent: 's8', ask_id: 'ask-1', outcome: 'addressed', note: 'The retry loop now stops.', evidence: ['s4'] },
    ]),
    { title: 'How an upload travels', intro: 'Follow one file from `upload` through the retry loop.' },
  );
}

export function decisionsBoard(): LensBoardView {
  return boardView(
    'decisions',
    elements([
      { id: 'c1', kind: 'section', title: 'Retry policy', body_markdown: 'How often and how long the client retries.', delta: null },
      codeRef('c2', 'src/retry.ts', 8, 8),
      codeRef('c3', 'src/upload.ts', 4, 6),
      codeRef('c4', 'src/old.ts', 10, 12, { side: 'base' }),
      {
        id: 'c5',
        kind: 'decision',
        parent: 'c1',
        title: 'Exponential back-off',
        statement: 'Each retry waits twice as long as the one before.',
        rationale: 'A struggling server gets room to recover.',
        alternatives: ['A fixed delay between attempts.', 'No delay at all.'],
        evidence: ['c2', 'c3', 'c4'],
        inferred: true,
      },
      {
        id: 'c6',
        kind: 'decision',
        parent: 'c1',
        title: 'Only server errors are retried',
        statement: 'Errors other than 5xx are not retried.',
        rationale: 'A client error repeats identically.',
        alternatives: [],
        evidence: ['c2'],
      },
    ]),
    { title: 'Calls made in this change', intro: 'One call shapes the change: retry around the request.' },
  );
}

export function flaggedBoard(): LensBoardView {
  return boardView(
    'flagged',
    elements([
      { id: 'f1', kind: 'section', title: 'Retry helper', delta: null },
      codeRef('f2', 'src/retry.ts', 6, 8),
      codeRef('f3', 'src/upload.ts', 9, 9),
      {
        id: 'f4',
        kind: 'finding',
        parent: 'f1',
        author: 'claude',
        severity: 'major',
        category: 'reliability',
        title: 'The last attempt still sleeps before giving up',
        body_markdown: 'After the final failure the loop waits once more (src/retry.ts:8), delaying the error.',
        part_titles: ['Who waits', 'How long'],
        part_bodies: ['Every caller of `upload`.', 'Up to **four** seconds.'],
        remedy_markdown: 'Skip the wait when the attempt is the last one.',
        anchor: ['f2', 'f3'],
        status: 'open',
        concurrence: [
          { model: 'claude', agree: 1, total: 1 },
          { model: 'codex', agree: 1, total: 1 },
        ],
        accord: 'concur',
      },
      {
        id: 'f5',
        kind: 'finding',
        parent: 'f1',
        author: 'codex',
        severity: 'blocker',
        category: 'correctness',
        title: 'A thrown non-Error value is lost',
        body_markdown: 'The loop keeps only `Error` instances.',
        remedy_markdown: 'Keep whatever was thrown.',
        anchor: ['f2'],
        status: 'open',
        concurrence: [{ model: 'codex', agree: 1, total: 1 }],
        accord: 'split',
      },
      { id: 'f6', kind: 'section', title: 'Uploads', delta: null },
      { id: 'f7', kind: 'section', parent: 'f6', title: 'Body handling', delta: null },
      {
        id: 'f8',
        kind: 'finding',
        parent: 'f7',
        author: 'claude',
        severity: 'nit',
        category: 'maintainability',
        title: 'The body is read twice',
        body_markdown: 'Reading it once would be clearer.',
        remedy_markdown: 'Read the body before the loop.',
        anchor: ['f3'],
        status: 'open',
        concurrence: [
          { model: 'claude', agree: 1, total: 1 },
          { model: 'codex', agree: 1, total: 1 },
        ],
        accord: 'conflict',
      },
      { id: 'f9', kind: 'section', title: 'Orphan section without findings', delta: null },
    ]),
    { title: 'What could go wrong', intro: 'Two defects in the retry helper and one nit.' },
  );
}

export function noiseBoard(): LensBoardView {
  return boardView(
    'noise',
    elements([
      {
        id: 'n1',
        kind: 'noise_group',
        title: 'Prose reflow',
        reason:
          'A sentence is wrapped onto two lines; the words are unchanged. The guide and the README were re-flowed to eighty columns by an editor setting, so every changed line carries the same words in the same order, and the removed page only moved its paragraphs without editing them. Nothing here changes behaviour.',
      },
      { id: 'n2', kind: 'noise_member', parent: 'n1', author: 'host', path: 'README.md', side: 'head', start_line: 1, end_line: 4, hunk_id: 'h1', verdict: 'noise', judge: 'deterministic' },
      { id: 'n3', kind: 'noise_member', parent: 'n1', author: 'host', path: 'docs/guide.md', side: 'head', start_line: 10, end_line: 10, hunk_id: 'h2', verdict: 'noise', judge: 'deterministic' },
      { id: 'n4', kind: 'noise_member', parent: 'n1', author: 'host', path: 'docs/old.md', side: 'base', start_line: 3, end_line: 7, hunk_id: 'h3', verdict: 'noise', judge: 'deterministic' },
      { id: 'n5', kind: 'section', title: 'Formatting', delta: null },
      { id: 'n6', kind: 'noise_group', parent: 'n5', title: 'Import order', reason: 'Imports are sorted; nothing else moved.' },
      { id: 'n7', kind: 'noise_member', parent: 'n6', author: 'host', path: 'src/index.ts', side: 'head', start_line: 1, end_line: 3, hunk_id: 'h4', verdict: 'noise', judge: 'deterministic' },
    ]),
    { title: 'Safe to skip', intro: 'Changed lines no other reading needs.' },
  );
}

export const BOARDS: Record<Lens, () => LensBoardView> = {
  design: designBoard,
  sequence: sequenceBoard,
  decisions: decisionsBoard,
  flagged: flaggedBoard,
  noise: noiseBoard,
};

// ─── Lanes and generations ──────────────────────────────────────────────────────────────────

export function lane(lens: Lens, state: LaneState, overrides: Partial<LaneView> = {}): LaneView {
  return {
    lens,
    state,
    absence: null,
    failure: null,
    board: state === 'settled' ? BOARDS[lens]() : null,
    ...overrides,
  };
}

export function spend(lens: Lens, overrides: Partial<SeatSpend> = {}): SeatSpend {
  return {
    seat: `${lens}:drafter`,
    lens,
    role: 'drafter',
    harness: 'claude-code',
    model: 'claude-sonnet',
    durationMs: 12_500,
    inputTokens: 12_000,
    outputTokens: 1_500,
    toolCalls: 9,
    refusals: 1,
    priceUsd: null,
    ...overrides,
  };
}

// ─── The capture the boards cite, and the code their cards show ────────────────────────────

const UPLOAD_DIFF = [
  '@@ -1,9 +1,12 @@',
  "-import { fetchJson } from './http';",
  "+import { retry } from './retry';",
  ' ',
  ' export async function upload(url: string, body: Blob): Promise<Response> {',
  "-  const response = await fetch(url, { method: 'PUT', body });",
  '-  if (!response.ok) throw new Error(`upload failed: ${response.status}`);',
  '-  return response;',
  '+  const payload = await body.arrayBuffer();',
  '+  return retry(async () => {',
  "+    const response = await fetch(url, { method: 'PUT', body: payload });",
  '+    if (response.status >= 500) throw new Error(`upload failed: ${response.status}`);',
  '+    return response;',
  '+  }, { attempts: 3 });',
  ' }',
  ' ',
  ' export const UPLOAD_TIMEOUT_MS = 30_000;',
];

const RETRY_SOURCE = [
  'export interface RetryOptions {',
  '  attempts: number;',
  '}',
  '',
  'export async function retry<T>(run: () => Promise<T>, options: RetryOptions): Promise<T> {',
  '  let last: unknown;',
  '  for (let attempt = 1; attempt <= options.attempts; attempt++) {',
  '    try {',
  '      return await run();',
  '    } catch (error) {',
  '      if (error instanceof Error) last = error;',
  '      await sleep(2 ** attempt * 250);',
  '    }',
  '  }',
  '  throw last;',
  '}',
  '',
  'function sleep(ms: number): Promise<void> {',
  '  return new Promise((resolve) => setTimeout(resolve, ms));',
  '}',
];

const OLD_SOURCE = [
  '// Uploads every file, one after another.',
  "import { upload } from './upload';",
  '',
  'export async function uploadAll(urls: string[], body: Blob): Promise<void> {',
  '  for (const url of urls) {',
  '    await upload(url, body);',
  '  }',
  '}',
  '',
  'export async function uploadOrLog(url: string, body: Blob): Promise<void> {',
  '  await upload(url, body).catch((error) => console.error(error));',
  '}',
];

/**
 * The fixture boards' capture: src/upload.ts modified, src/retry.ts added, src/old.ts deleted, in
 * git's `diff --raw -p -z` format and read by the capture's own parser.
 */
export function fixturePatchset(): Patchset {
  const Z = '\0';
  const oid = (digit: string) => digit.repeat(40);
  const zero = oid('0');
  const raw = [`:100644 100644 ${oid('1')} ${oid('2')} M${Z}src/upload.ts${Z}`, `:000000 100644 ${zero} ${oid('3')} A${Z}src/retry.ts${Z}`, `:100644 000000 ${oid('4')} ${zero} D${Z}src/old.ts${Z}`];
  const patch = [
    `diff --git a/src/upload.ts b/src/upload.ts\nindex ${oid('1')}..${oid('2')} 100644\n--- a/src/upload.ts\n+++ b/src/upload.ts\n`,
    `${UPLOAD_DIFF.join('\n')}\n`,
    `diff --git a/src/retry.ts b/src/retry.ts\nnew file mode 100644\nindex ${zero}..${oid('3')}\n--- /dev/null\n+++ b/src/retry.ts\n`,
    `@@ -0,0 +1,${RETRY_SOURCE.length} @@\n${RETRY_SOURCE.map((l) => `+${l}\n`).join('')}`,
    `diff --git a/src/old.ts b/src/old.ts\ndeleted file mode 100644\nindex ${oid('4')}..${zero}\n--- a/src/old.ts\n+++ /dev/null\n`,
    `@@ -1,${OLD_SOURCE.length} +0,0 @@\n${OLD_SOURCE.map((l) => `-${l}\n`).join('')}`,
  ];
  const files = parseDiffOutput(Buffer.from(raw.join('') + Z + patch.join(''), 'utf8'), { maxPatchBytesPerFile: 1 << 20 });
  const additions = files.reduce((n, f) => n + (f.additions ?? 0), 0);
  const deletions = files.reduce((n, f) => n + (f.deletions ?? 0), 0);
  return {
    id: PATCHSET,
    base: oid('a'),
    head: oid('b'),
    headTree: oid('c'),
    baseRef: 'main',
    headRef: 'feature',
    baseTip: oid('a'),
    targetKind: 'branch',
    diffCommand: 'git diff main...feature',
    options: { maxFileBytes: 1 << 20, maxPatchBytesPerFile: 1 << 20, contextLines: 3 },
    totals: { files: files.length, additions, deletions, hunks: files.reduce((n, f) => n + f.hunks.length, 0), binary: 0, submodules: 0, truncated: 0, uncounted: 0 },
    files,
  };
}

/** Excerpts and citation marks of these lanes over the fixture capture, as the host builds them. */
export function codeOfLanes(lanes: readonly LaneView[], patchset: Patchset = fixturePatchset()): Pick<GenerationSnapshot, 'excerpts' | 'citations'> {
  const spans = lanes.flatMap((l) => (l.board?.elements ?? []).flatMap((e) => (e.kind === 'code_ref' ? [{ path: e.path, side: e.side, startLine: e.start_line, endLine: e.end_line }] : [])));
  return { excerpts: buildExcerpts(patchset, spans), citations: citationMarks(lanes, { citations: buildCitationIndex(patchset) }) };
}

export function generation(overrides: Partial<GenerationSnapshot> & { lanes?: LaneView[] } = {}): GenerationSnapshot {
  const lanes = overrides.lanes ?? LENSES.map((lens) => lane(lens, 'settled'));
  return {
    generationId: 'g-0011223344556677',
    sessionId: 'ses-1',
    patchsetId: PATCHSET,
    status: 'live',
    lanes,
    ...codeOfLanes(lanes),
    spend: LENSES.map((lens) => spend(lens)),
    timings: [
      { phase: 'lens-draft', lens: 'flagged', seat: 'flagged:drafter', startedAt: '2026-01-01T10:00:00.000Z', durationMs: 30_000 },
      { phase: 'lens-draft', lens: 'noise', seat: 'noise:drafter', startedAt: '2026-01-01T10:00:31.000Z', durationMs: 9_000 },
      { phase: 'first-core-board', lens: null, seat: null, startedAt: '2026-01-01T10:00:00.000Z', durationMs: 21_000 },
    ],
    frozen: [],
    ...overrides,
  };
}
