import { LENSES, type Lens } from '../../protocol/board';
import type { Patchset } from '../../protocol/patchset';
import type { GenerationSnapshot, LaneDelta, LaneFailure, LaneState, LaneView } from '../../protocol/review';
import { lensDelta } from '../board/compose';
import type { BoardState } from '../board/state';
import { rereviewRecords } from '../rereview/run';
import { foldRounds } from '../rounds/ledger';
import { buildCitationIndex, type CitationIndex } from '../board/citations';
import { loadBoard } from '../board/persist';
import { readBoard } from '../board/read';
import { generationRunHolder, type Store, type StoredGeneration } from '../store';
import { citationMarks } from './citationMarks';
import { buildExcerpts, excerptSpans } from './excerpts';

/**
 * A generation as the panel reads it (protocol/review.ts GenerationSnapshot), read back from the
 * store: the generation row (status, spend, timings), its lane outcomes, and each lane's board
 * replayed from its event log (host/board/persist.ts loadBoard) and projected by readBoard. The
 * same function serves the live pushes and `rennet/generation/get`, before and after a restart,
 * so both always say the same thing.
 *
 * A lane with no stored outcome is in flight when a run of the generation is live in this
 * process (its state is the run's last lane change), or `working` while another run holds the
 * generation's run claim (another process, or a draft this runner does not track); otherwise the
 * run that drafted it is gone
 * (the host stopped, or the run was cancelled or broke), and the lane reads as failed, retryable,
 * saying so — never as a lane still coming — and, while the generation is live, that drafting
 * again resumes it (host/review/resume.ts): the settled boards are kept, only these are drafted.
 *
 * Every span a code_ref of any lane cites gets an excerpt (host/generation/excerpts.ts) read from the
 * generation's own patchset, and every citation becomes a mark (host/generation/citationMarks.ts). A
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

export const INTERRUPTED_MESSAGE = 'The run drafting this board stopped before it settled (the Rennet host stopped or the run was cancelled).';

/** Said of an unsettled lane of a live generation: what drafting again does with it (host/review/resume.ts). */
export const RESUMABLE_NOTE =
  'Draft again resumes this generation: the boards that settled are kept as they are, with no model call, and only the boards that did not settle are drafted (a review recaptured since draws a new generation instead).';

/** Said of an unsettled lane of a frozen generation: a newer one replaced it. */
export const FROZEN_NOTE = 'A newer generation replaced this one, so it is not drafted again.';

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
  // A run of this generation that is not this caller's (another window's host, the CLI, a draft in
  // this process) holds its run claim while it drafts (host/store/runClaims.ts): its lanes are in flight.
  let elsewhere: boolean | undefined;
  const draftedElsewhere = () => (elsewhere ??= generation.status === 'live' && !context.stopped && generationRunHolder(store.dir, generation.id) !== null);
  const events = store.readEvents(generation.sessionId);
  // A round's successor: each settled lane reads what its re-draft changed, from the composition's stamps.
  const round = foldRounds(generation.sessionId, events).trails.find((t) => t.round.generationId === generation.id)?.round ?? null;
  const predecessor = round?.fromGenerationId ? store.getGeneration(round.fromGenerationId) : undefined;
  const lanes = LENSES.map((lens): LaneView => {
    const state = boardState(store, generation, lens, context);
    const board = state ? readBoard(state) : null;
    const outcome = outcomes.get(lens);
    if (outcome) {
      const delta = round && predecessor && state && outcome.state !== 'failed' ? laneDelta(store, predecessor, lens, state, round.ordinal) : null;
      return { lens, state: outcome.state, absence: outcome.absence, failure: outcome.failure, board, ...(delta ? { delta } : {}) };
    }
    const live = context.live?.get(lens);
    if (live && live !== 'settled' && live !== 'absent' && live !== 'failed') return { lens, state: live, absence: null, failure: null, board };
    if (!live && draftedElsewhere()) return { lens, state: 'working', absence: null, failure: null, board };
    return { lens, state: 'failed', absence: null, failure: interrupted(context.stopped ?? null, generation.status === 'live'), board };
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
    ...priorReviewOf(events, generation.id),
  };
}

/** A re-review's record for this generation (host/rereview/run.ts): the earlier items and their closures. */
function priorReviewOf(events: ReadonlyArray<{ kind: string; payload: unknown }>, generationId: string): Pick<GenerationSnapshot, 'priorReview'> {
  const record = rereviewRecords({ readEvents: () => [...events] }, '')
    .filter((r) => r.generationId === generationId)
    .at(-1);
  return record ? { priorReview: record.prior } : {};
}

/** What a round successor's lane changed against the predecessor's board of that lens (host/board/compose.ts). */
function laneDelta(store: Store, predecessor: StoredGeneration, lens: Lens, board: BoardState, round: number): LaneDelta | null {
  let prior: BoardState | null = null;
  try {
    prior = loadBoard(store, { sessionId: predecessor.sessionId, generationId: predecessor.id, patchsetId: predecessor.patchsetId, lens });
  } catch {
    // A predecessor board that does not replay: composed against nothing, every section reads new.
  }
  const delta = lensDelta(board, prior && prior.status !== 'drafting' ? prior : null);
  return { verdict: delta.verdict, round, added: delta.added.length, reworked: delta.reworked.length, removed: [...delta.removed] };
}

/** Excerpts and citation marks of the lanes, over the generation's patchset. */
function codeOf(store: Store, patchsetId: string, lanes: readonly LaneView[]): Pick<GenerationSnapshot, 'excerpts' | 'citations'> {
  const capture = captureOf(store, patchsetId);
  const spans = lanes.flatMap((lane) => excerptSpans(lane.board?.elements ?? []));
  if (!capture.ok) {
    return { excerpts: buildExcerpts(null, spans, { missingReason: capture.reason }), citations: citationMarks(lanes) };
  }
  return { excerpts: buildExcerpts(capture.patchset, spans), citations: citationMarks(lanes, { citations: capture.citations }) };
}

/** The patchset a generation reads and its citation index, or why the store cannot give it. */
export type SnapshotCapture = { ok: true; patchset: Patchset; citations: CitationIndex } | { ok: false; reason: string };
type Capture = SnapshotCapture;

/** What readGenerationSnapshot builds a generation's excerpts and citation marks over (cached per store). */
export function snapshotCapture(store: Store, patchsetId: string): SnapshotCapture {
  return captureOf(store, patchsetId);
}

/**
 * One lane's round verdict (LaneView.delta), as readGenerationSnapshot reads it: null when the
 * generation is no round's successor, the lane has no outcome yet or failed, or its board does not
 * replay. Read when such a lane settles (host/review/runner.ts), not on every write.
 */
export function readLaneRoundDelta(store: Store, generationId: string, lens: Lens): LaneDelta | null {
  const generation = store.getGeneration(generationId);
  if (!generation) return null;
  const outcome = store.listLaneOutcomes(generationId).find((o) => o.lens === lens);
  if (!outcome || outcome.state === 'failed') return null;
  const round = foldRounds(generation.sessionId, store.readEvents(generation.sessionId)).trails.find((t) => t.round.generationId === generation.id)?.round ?? null;
  const predecessor = round?.fromGenerationId ? store.getGeneration(round.fromGenerationId) : undefined;
  if (!round || !predecessor) return null;
  const state = boardState(store, generation, lens, {});
  return state ? laneDelta(store, predecessor, lens, state, round.ordinal) : null;
}

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

function boardState(store: Store, generation: StoredGeneration, lens: Lens, context: SnapshotContext): BoardState | null {
  try {
    return loadBoard(store, { sessionId: generation.sessionId, generationId: generation.id, patchsetId: generation.patchsetId, lens });
  } catch (error) {
    context.onBoardError?.(lens, error as Error);
    return null;
  }
}

function interrupted(stopped: string | null, live: boolean): LaneFailure {
  const what = stopped ? `The run drafting this board stopped before it settled: ${stopped.replace(/\.?\s*$/, '.')}` : INTERRUPTED_MESSAGE;
  return { message: `${what} ${live ? RESUMABLE_NOTE : FROZEN_NOTE}`, retryable: true, attempts: 0 };
}
