import { citedHunkIds, type CoreLaneOutcomes } from '../../../host/board/noise';
import { openDraftingBoard } from '../../../host/board/seat';
import type { BoardState, VerbCall } from '../../../host/board/state';
import { applyVerb } from '../../../host/board/writer';
import type { ReviewOutcome } from '../../../host/review/report';
import type { Patchset } from '../../../protocol/patchset';
import type { SeatSpend } from '../../../protocol/review';
import { TestRepo } from '../../fixtures/gitRepo';
import { boardFor, build, capture, contextFor } from '../board/writerFixtures';

/**
 * A real change (upload gains a retry helper; a README reflows) captured from a temp repository,
 * and a board per lens written through the real writer, as a seat would.
 */

export const UPLOAD_BASE = `export async function upload(file: Blob, url: string): Promise<Response> {
  const body = await file.arrayBuffer();
  const response = await fetch(url, { method: 'PUT', body });
  if (!response.ok) throw new Error(\`upload failed: \${response.status}\`);
  return response;
}
`;

export const UPLOAD_HEAD = `import { retry } from './retry';

export async function upload(file: Blob, url: string): Promise<Response> {
  const body = await file.arrayBuffer();
  return retry(3, async () => {
    const response = await fetch(url, { method: 'PUT', body });
    if (!response.ok) throw new Error(\`upload failed: \${response.status}\`);
    return response;
  });
}
`;

export const RETRY = `export async function retry<T>(times: number, run: () => Promise<T>): Promise<T> {
  let last: unknown;
  for (let attempt = 0; attempt < times; attempt++) {
    try {
      return await run();
    } catch (error) {
      last = error;
      await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** attempt));
    }
  }
  throw last;
}
`;

const README_BASE = '# Uploads\n\nThe client uploads files with one PUT request per file and reports the status.\n';
const README_HEAD = '# Uploads\n\nThe client uploads files with one PUT request per file\nand reports the status.\n';

export function reviewRepo(): TestRepo {
  const repo = new TestRepo();
  repo.write('src/upload.ts', UPLOAD_BASE).write('README.md', README_BASE).commit('base');
  repo.branch('feature').write('src/upload.ts', UPLOAD_HEAD).write('src/retry.ts', RETRY).write('README.md', README_HEAD).commit('retry uploads');
  return repo;
}

export interface ReviewFixture {
  repo: TestRepo;
  patchset: Patchset;
  boards: Record<'design' | 'sequence' | 'decisions' | 'flagged' | 'noise', BoardState>;
}

export async function reviewFixture(): Promise<ReviewFixture> {
  const repo = reviewRepo();
  const patchset = await capture(repo);
  const ctx = contextFor(patchset, 'claude');
  const write = (lens: keyof ReviewFixture['boards'], calls: VerbCall[]) => {
    const board = build(boardFor(lens, patchset), ctx, calls).state;
    const finished = applyVerb(board, { verb: 'finish' }, ctx);
    if (finished.result.status !== 'settled') throw new Error(`finish on ${lens}: ${JSON.stringify(finished.result)}`);
    return finished.state;
  };

  const design = write('design', [
    { verb: 'set_document', input: { title: 'Uploads retry on failure', intro_markdown: 'An upload that fails is tried **three times** with back-off before it reports an error.' } },
    { verb: 'add', kind: 'stat', input: { stat_labels: ['Requirements', 'Tasks'], stat_values: ['1', '2'] } }, // e1
    { verb: 'add', kind: 'section', input: { title: 'Retrying uploads', body_markdown: 'What the change promises a caller of `upload`.' } }, // e2
    { verb: 'add', kind: 'requirement', input: { title: 'Retry a failed upload', shall: 'The client SHALL retry a failed upload up to three times.', parent_id: 'e2' } }, // e3
    {
      verb: 'add',
      kind: 'scenario',
      input: {
        name: 'Server error',
        text_markdown: 'When the server answers 503, the upload is sent again.',
        scenario_condition: 'the server answers 503',
        scenario_response: 'the upload is sent again after a pause',
        parent_id: 'e3',
      },
    },
    { verb: 'cite', input: { path: 'src/upload.ts', side: 'head', start_line: 5, end_line: 9, label: 'the retry wrapper' } }, // e5
    { verb: 'update', kind: 'requirement', input: { id: 'e3', trace: ['e5'] } },
    { verb: 'add', kind: 'section', input: { title: 'Tasks', body_markdown: 'The work the change lists.' } }, // e6
    { verb: 'add', kind: 'task', input: { text: 'Wrap the PUT request in a retry', done: true, parent_id: 'e6' } },
    { verb: 'add', kind: 'task', input: { text: 'Make the attempt count configurable', done: false, parent_id: 'e6' } },
  ]);

  const sequence = write('sequence', [
    { verb: 'set_document', input: { title: 'How an upload travels', intro_markdown: 'Follow one file from `upload` through the retry loop.' } },
    { verb: 'add', kind: 'section', input: { title: 'The upload path' } }, // e1
    { verb: 'cite', input: { path: 'src/upload.ts', side: 'head', start_line: 1, end_line: 5 } }, // e2
    {
      verb: 'add',
      kind: 'order_step',
      input: { title: 'upload hands the request to retry', explanation_markdown: 'The body is read once, then every attempt reuses it.', span: 'e2', parent_id: 'e1' },
    },
    { verb: 'cite', input: { path: 'src/retry.ts', side: 'head', start_line: 3, end_line: 9 } }, // e4
    {
      verb: 'add',
      kind: 'order_step',
      input: {
        title: 'retry runs the attempt and backs off',
        explanation_markdown: 'A thrown error is kept and the loop waits twice as long as before each new attempt.',
        span: 'e4',
        parent_id: 'e1',
      },
    },
  ]);

  const decisions = write('decisions', [
    { verb: 'set_document', input: { title: 'Calls made in this change', intro_markdown: 'One call shapes the change: retry around the request.' } },
    { verb: 'add', kind: 'section', input: { title: 'Retry policy' } }, // e1
    { verb: 'cite', input: { path: 'src/retry.ts', side: 'head', start_line: 8, end_line: 8 } }, // e2
    {
      verb: 'add',
      kind: 'decision',
      input: {
        title: 'Exponential back-off',
        statement: 'Each retry waits twice as long as the one before.',
        rationale: 'A struggling server gets room to recover.',
        alternatives: ['A fixed delay between attempts.', 'No delay at all.'],
        evidence: ['e2'],
        inferred: true,
        parent_id: 'e1',
      },
    },
  ]);

  const flagged = write('flagged', [
    { verb: 'set_document', input: { title: 'What could go wrong', intro_markdown: 'One defect in the retry helper.' } },
    { verb: 'add', kind: 'section', input: { title: 'Retry helper' } }, // e1
    { verb: 'cite', input: { path: 'src/retry.ts', side: 'head', start_line: 6, end_line: 8 } }, // e2
    {
      verb: 'add',
      kind: 'finding',
      input: {
        severity: 'major',
        category: 'reliability',
        title: 'The last attempt still sleeps before giving up',
        body_markdown: 'After the **final** failure the loop waits once more, delaying the error by 400 ms.',
        part_titles: ['Who notices'],
        part_bodies: ['A caller showing a progress bar sees it stall before the error.'],
        remedy_markdown: 'Skip the wait when `attempt` is the last one.',
        anchor: ['e2'],
        parent_id: 'e1',
        origin: 'claude',
        agreement: 'solo',
      },
    },
  ]);

  const cores: CoreLaneOutcomes = {
    design: { kind: 'settled', citedHunkIds: citedHunkIds(design) },
    sequence: { kind: 'settled', citedHunkIds: citedHunkIds(sequence) },
    decisions: { kind: 'settled', citedHunkIds: citedHunkIds(decisions) },
    flagged: { kind: 'settled', citedHunkIds: citedHunkIds(flagged) },
  };
  const placed = openDraftingBoard('noise', patchset, { author: 'host', citations: ctx.citations }, cores);
  const members = [...placed.elements.values()].filter((e) => e.kind === 'noise_member').map((e) => e.id);
  const group = `e${placed.nextId}`;
  const noiseCalls: VerbCall[] = [
    { verb: 'set_document', input: { title: 'Safe to skip', intro_markdown: 'Changed lines no other reading needs.' } },
    { verb: 'add', kind: 'noise_group', input: { title: 'Prose reflow', reason: 'A sentence is wrapped onto two lines; the words are unchanged.' } },
    ...members.map((id): VerbCall => ({ verb: 'update', kind: 'noise_member', input: { id, parent_id: group } })),
  ];
  const noise = settleWith(build(placed, ctx, noiseCalls).state, ctx);
  return { repo, patchset, boards: { design, sequence, decisions, flagged, noise } };
}

function settleWith(state: BoardState, ctx: ReturnType<typeof contextFor>): BoardState {
  const finished = applyVerb(state, { verb: 'finish' }, ctx);
  if (finished.result.status !== 'settled') throw new Error(`finish on ${state.lens}: ${JSON.stringify(finished.result)}`);
  return finished.state;
}

export const SPEND: SeatSpend[] = [
  { seat: 'flagged:drafter', lens: 'flagged', role: 'drafter', harness: 'scripted', model: null, durationMs: 1234, inputTokens: null, outputTokens: null, toolCalls: 4, refusals: 0, priceUsd: null },
];

/** Every lane settled from the fixture's boards. */
export function settledOutcome(fx: ReviewFixture): ReviewOutcome {
  return {
    lanes: (['design', 'sequence', 'decisions', 'flagged', 'noise'] as const).map((lens) => ({ lens, state: 'settled' as const, absence: null, failure: null, board: fx.boards[lens] })),
    spend: SPEND,
    timings: [{ phase: 'report', lens: null, seat: null, startedAt: '2026-01-01T00:00:00.000Z', durationMs: 5 }],
  };
}
