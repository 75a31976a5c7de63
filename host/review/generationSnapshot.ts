import { LENSES, type Lens } from '../../protocol/board';
import type { Patchset } from '../../protocol/patchset';
import type { GenerationSnapshot, LaneFailure, LaneState, LaneView } from '../../protocol/review';
import { buildCitationIndex, type CitationIndex } from '../board/citations';
import { loadBoard } from '../board/persist';
import { readBoard } from '../board/read';
import type { Store, StoredGeneration } from '../store';
import { citationMarks } from './citationMarks';
import { buildExcerpts, type ExcerptSpan } from './excerpts';

/**
 * A generation as the panel reads it (protocol/review.ts GenerationSnapshot), read back from the
 * store: the generation row (status, spend, timings), its lane outcomes, and each lane's board
 * replayed from its event log (host/board/persist.ts loadBoard) and projected by readBoard. The
 * same function serves the live pushes and `rennet/generation/get`, before and after a restart,
 * so both always say the same thing.
 *
 * A lane with no stored outcome is in flight when a run of the generation is live in this
 * process (its state is the run's last lane change); otherwise the run that drafted it is gone
 * (the host stopped, or the run was cancelled or broke), and the lane reads as failed, retryable,
 * saying so — never as a lane still coming.
 *
 * Every span a code_ref of any lane cites gets an excerpt (host/review/excerpts.ts) read from the
 * generation's own patchset, and every citation becomes a mark (host/review/citationMarks.ts). A
 * patchset the store lacks, or cannot read, leaves every excerpt `not-captured` with the reason.
 */

export interface SnapshotContext {
  /** Lane states of a run of this generation in progress in this process. */
  live?: ReadonlyMap<Lens, LaneState>;
  /** Why this process's run of the generation stopped before every lane settled. */
  stopped?: string | null;
  /** A board that does not replay (reported, then shown as no board). */
  onBoardError?(lens: Lens, error: Error): void;
}

export const INTERRUPTED_MESSAGE =
  'The run drafting this board stopped before it settled (the Rennet host stopped or the run was cancelled); draft the boards again.';

/** The session's current generation: the live one, else the newest; null when it has none. */
export function currentGenerationId(store: Store, sessionId: string): string | null {
  const all = store.listGenerations(sessionId);
  const live = [...all].reverse().find((g) => g.status === 'live');
  return (live ?? all[all.length - 1])?.id ?? null;
}

export function readGenerationSnapshot(store: Store, generationId: string, context: SnapshotContext = {}): GenerationSnapshot | null {
  const generation = store.getGeneration(generationId);
  if (!generation) return null;
  const outcomes = new Map(store.listLaneOutcomes(generationId).map((o) => [o.lens, o]));
  const lanes = LENSES.map((lens): LaneView => {
    const board = boardView(store, generation, lens, context);
    const outcome = outcomes.get(lens);
    if (outcome) return { lens, state: outcome.state, absence: outcome.absence, failure: outcome.failure, board };
    const live = context.live?.get(lens);
    if (live && live !== 'settled' && live !== 'absent' && live !== 'failed') return { lens, state: live, absence: null, failure: null, board };
    return { lens, state: 'failed', absence: null, failure: interrupted(context.stopped ?? null), board };
  });
  const frozen = store
    .listGenerations(generation.sessionId)
    .filter((g) => g.status === 'frozen')
    .reverse()
    .map((g) => ({ generationId: g.id, patchsetId: g.patchsetId, createdAt: g.createdAt }));
  return {
    generationId: generation.id,
    sessionId: generation.sessionId,
    patchsetId: generation.patchsetId,
    status: generation.status,
    lanes,
    spend: generation.spend,
    timings: generation.timings,
    frozen,
    ...codeOf(store, generation.patchsetId, lanes),
  };
}

/** Excerpts and citation marks of the lanes, over the generation's patchset. */
function codeOf(store: Store, patchsetId: string, lanes: readonly LaneView[]): Pick<GenerationSnapshot, 'excerpts' | 'citations'> {
  const capture = captureOf(store, patchsetId);
  const spans: ExcerptSpan[] = [];
  for (const lane of lanes) {
    for (const element of lane.board?.elements ?? []) {
      if (element.kind === 'code_ref') spans.push({ path: element.path, side: element.side, startLine: element.start_line, endLine: element.end_line });
    }
  }
  if (!capture.ok) {
    return { excerpts: buildExcerpts(null, spans, { missingReason: capture.reason }), citations: citationMarks(lanes) };
  }
  return { excerpts: buildExcerpts(capture.patchset, spans), citations: citationMarks(lanes, { citations: capture.citations }) };
}

type Capture = { ok: true; patchset: Patchset; citations: CitationIndex } | { ok: false; reason: string };

/**
 * The last patchset read per store, with its citation index. A patchset is immutable and
 * content-addressed, so a snapshot pushed again during a run reuses it instead of re-reading and
 * re-validating the file each time.
 */
const lastCapture = new WeakMap<Store, { id: string; patchset: Patchset; citations: CitationIndex }>();

function captureOf(store: Store, patchsetId: string): Capture {
  const cached = lastCapture.get(store);
  if (cached?.id === patchsetId) return { ok: true, patchset: cached.patchset, citations: cached.citations };
  let patchset: Patchset | undefined;
  try {
    patchset = store.getPatchset(patchsetId);
  } catch (error) {
    return { ok: false, reason: `The capture this generation reads (${patchsetId}) could not be read from the store, so no lines of it can be shown: ${(error as Error).message}` };
  }
  if (!patchset) return { ok: false, reason: `The capture this generation reads (${patchsetId}) is not in the store, so no lines of it can be shown.` };
  const citations = buildCitationIndex(patchset);
  lastCapture.set(store, { id: patchsetId, patchset, citations });
  return { ok: true, patchset, citations };
}

function boardView(store: Store, generation: StoredGeneration, lens: Lens, context: SnapshotContext): LaneView['board'] {
  try {
    const state = loadBoard(store, { sessionId: generation.sessionId, generationId: generation.id, patchsetId: generation.patchsetId, lens });
    return state ? readBoard(state) : null;
  } catch (error) {
    context.onBoardError?.(lens, error as Error);
    return null;
  }
}

function interrupted(stopped: string | null): LaneFailure {
  return { message: stopped ? `The run drafting this board stopped before it settled: ${stopped}` : INTERRUPTED_MESSAGE, retryable: true, attempts: 0 };
}
