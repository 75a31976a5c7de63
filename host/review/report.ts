import { LENSES, LENS_TITLES, LENS_TYPED_KINDS, type Absence, type BoardElement, type ElementKind, type Lens } from '../../protocol/board';
import type { Patchset } from '../../protocol/patchset';
import type { LaneFailure, PhaseTiming, ReportBoard, ReportElement, ReviewReport, SeatSpend } from '../../protocol/review';
import { readBoard } from '../board/read';
import type { BoardState } from '../board/state';

/**
 * The review report (pure): what `rennet review --json FILE` writes and the static HTML page
 * renders (docs/review-json.md). Board fields are snake_case (the tool-input names a seat
 * passes); the report is camelCase, converted here and nowhere else.
 */

/** One lane as the pipeline settles it (host/pipeline/run.ts's lane outcome, structurally). */
export interface ReviewLaneOutcome {
  lens: Lens;
  state: 'settled' | 'absent' | 'failed';
  absence: Absence | null;
  failure: LaneFailure | null;
  board: BoardState;
}

/** What the report reads from a generation's outcome (host/pipeline/run.ts, structurally). */
export interface ReviewOutcome {
  lanes: readonly ReviewLaneOutcome[];
  spend: readonly SeatSpend[];
  timings: readonly PhaseTiming[];
}

export function toReviewReport(outcome: ReviewOutcome, patchset: Pick<Patchset, 'id' | 'base' | 'head'>, generationId: string): ReviewReport {
  const boards = LENSES.map((lens): ReportBoard => {
    const lane = outcome.lanes.find((l) => l.lens === lens);
    if (!lane) return missingLane(lens);
    const view = readBoard(lane.board);
    return {
      lens,
      state: lane.state,
      absence: lane.state === 'absent' ? (lane.absence ?? view.absence) : null,
      failure: lane.state === 'failed' ? (lane.failure ?? { message: `The ${LENS_TITLES[lens]} lane failed without an account.`, retryable: null, attempts: 0 }) : null,
      document: {
        title: view.document.title,
        introMarkdown: view.document.intro_markdown,
        measure: view.document.measure,
        proseRegister: view.document.prose_register,
      },
      elements: view.elements.map(toReportElement),
    };
  });
  return {
    patchset: patchset.id,
    generation: generationId,
    base: patchset.base,
    head: patchset.head,
    boards,
    spend: outcome.spend.map((s) => ({ ...s })),
    timings: outcome.timings.map((t) => ({ ...t })),
  };
}

/** A lane the outcome does not name: stated as a typed failure, never left out. */
function missingLane(lens: Lens): ReportBoard {
  return {
    lens,
    state: 'failed',
    absence: null,
    failure: { message: `The pipeline returned no ${LENS_TITLES[lens]} lane.`, retryable: null, attempts: 0 },
    document: { title: '', introMarkdown: '', measure: lens === 'design' ? 'structured' : 'reading', proseRegister: 'authored' },
    elements: [],
  };
}

/** `start_line` → `startLine`. Keys only: values are scalars or arrays of scalars. */
export function camelKey(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

export function toReportElement(element: BoardElement): ReportElement {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(element)) {
    if (value === undefined) continue;
    out[camelKey(key)] = Array.isArray(value) ? value.map((v: unknown) => (v !== null && typeof v === 'object' ? { ...v } : v)) : value;
  }
  return out as ReportElement;
}

// ─── Counts (the CLI's progress and summary lines, the HTML rail) ──────────────────────────

const NOUNS: Partial<Record<ElementKind, [one: string, many: string]>> = {
  requirement: ['requirement', 'requirements'],
  scenario: ['scenario', 'scenarios'],
  task: ['task', 'tasks'],
  stat: ['stat', 'stats'],
  decision: ['decision', 'decisions'],
  order_step: ['step', 'steps'],
  finding: ['finding', 'findings'],
  noise_group: ['group', 'groups'],
  noise_member: ['changed region', 'changed regions'],
  section: ['section', 'sections'],
};

/** "4 steps", "2 groups, 7 changed regions": the lens's typed kinds, else its sections; "" for none. */
export function countSummary(lens: Lens, elements: ReadonlyArray<{ kind: string }>): string {
  const tally = new Map<string, number>();
  for (const e of elements) tally.set(e.kind, (tally.get(e.kind) ?? 0) + 1);
  const say = (kind: ElementKind) => {
    const n = tally.get(kind) ?? 0;
    const noun = NOUNS[kind];
    return n > 0 && noun ? `${n} ${n === 1 ? noun[0] : noun[1]}` : null;
  };
  const typed = LENS_TYPED_KINDS[lens].map(say).filter((s): s is string => s !== null);
  if (typed.length > 0) return typed.join(', ');
  return say('section') ?? '';
}

/** How a failure's ladder reads: retryable, terminal, or no account. */
export function retryText(failure: LaneFailure): string {
  const attempts = failure.attempts > 0 ? ` after ${failure.attempts} attempt${failure.attempts === 1 ? '' : 's'}` : '';
  if (failure.retryable === null) return `no retry account${attempts}`;
  return `${failure.retryable ? 'retryable' : 'terminal'}${attempts}`;
}
