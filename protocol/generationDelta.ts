import { z } from 'zod';
import { Absence, BoardDocument, BoardElement, BoardStatus, LENSES, Lens, SectionFold } from './board';
import { CitationMark, CodeExcerpt, GenerationSnapshot, LaneDelta, LaneFailure, LaneState, PhaseTiming, PriorReview, SeatSpend, type LaneView } from './review';
import type { LensBoardView } from './board';

/**
 * Incremental board pushes. While a generation's run writes, the host sends one delta per lane it
 * changed (`rennet/generation/delta`, forwarded to the panel as `rennet/panel/generationDelta`)
 * instead of the whole generation: the elements a seat's writes touched, the lane's settlement,
 * and the parts of the generation's derived data that moved with them. A full snapshot opens the
 * stream (GenerationSnapshot.revision, n = 0); every delta names the revision it applies on
 * (`baseRevision`) and the one it makes (`revision`, one more).
 *
 * `applyGenerationDelta` is the one fold: the host applies each delta it sends to its own copy
 * (so its `rennet/generation/get` answers what the deltas made), the extension to the snapshot it
 * holds per session, the webview to the one it shows. A delta that does not apply on top of what
 * a receiver holds — another generation or stream, a revision missed — is refused with a reason,
 * never half-applied: the receiver reads the generation whole instead.
 *
 * Derived data, and where it comes from:
 * - A lane's fold lines and counts (readBoard) are per lane: the host sends the lines that changed
 *   (a section's preview lists its children's titles, so a retitled finding changes its section's
 *   line), or all of them when their order moved.
 * - Citation marks are per lane too (the generation's list is the lanes' lists in lens order):
 *   the host sends a splice of the lane's run of marks, never the generation's list.
 * - Excerpts are generation-wide (keyed by span, one line budget over all lanes): the host
 *   computes them over every lane's spans and sends the keys that changed or went away.
 * - Spend, timings, status, the frozen list and a re-review's prior items are sent whole when they
 *   change (small).
 */

/** One lane's board, patched: the elements touched (full objects) and the ids removed. */
export const BoardPatch = z.object({
  /** The lane's board was replaced (opened again): `upserted` is every element, in order. */
  replace: z.boolean(),
  /** The document envelope, when it changed (always with `replace`). */
  document: BoardDocument.optional(),
  status: BoardStatus,
  absence: Absence.nullable(),
  revision: z.number().int().nonnegative(),
  /** Elements created or changed, whole; a new id goes after every element the board holds. */
  upserted: z.array(BoardElement),
  /** Ids no longer on the board. */
  removed: z.array(z.string()),
  /** The lane's fold lines, whole (always with `replace`; else when their order moved). */
  folds: z.array(SectionFold).optional(),
  /** Fold lines changed (whole, by sectionId: in place, a new one last) and gone, when `folds` is not sent. */
  foldUpdates: z.object({ upserted: z.array(SectionFold), removed: z.array(z.string()) }).optional(),
});
export type BoardPatch = z.infer<typeof BoardPatch>;

/** A splice of one lane's run of citation marks (positions inside that run, not the generation's list). */
export const CitationSplice = z.object({
  start: z.number().int().nonnegative(),
  deleteCount: z.number().int().nonnegative(),
  insert: z.array(CitationMark),
});
export type CitationSplice = z.infer<typeof CitationSplice>;

/** What changed on one lane; an absent field did not change. */
export const LanePatch = z.object({
  lens: Lens,
  state: LaneState.optional(),
  absence: Absence.nullable().optional(),
  failure: LaneFailure.nullable().optional(),
  /** LaneView.delta (a round successor's lane verdict); null: the lane has none now. */
  roundDelta: LaneDelta.nullable().optional(),
  /** null: the lane has no board now (it does not replay). */
  board: BoardPatch.nullable().optional(),
  citations: CitationSplice.optional(),
});
export type LanePatch = z.infer<typeof LanePatch>;

/** Excerpts whose span was added or whose lines changed (whole), and spans no longer cited. */
export const ExcerptPatch = z.object({
  upserted: z.record(z.string(), CodeExcerpt),
  removed: z.array(z.string()),
});
export type ExcerptPatch = z.infer<typeof ExcerptPatch>;

/** Generation-wide fields, each whole when it changed. */
export const GenerationFieldsPatch = z.object({
  status: GenerationSnapshot.shape.status.optional(),
  spend: z.array(SeatSpend).optional(),
  timings: z.array(PhaseTiming).optional(),
  frozen: GenerationSnapshot.shape.frozen.optional(),
  /** null: the generation has no prior review now. */
  priorReview: PriorReview.nullable().optional(),
});
export type GenerationFieldsPatch = z.infer<typeof GenerationFieldsPatch>;

export const GenerationDelta = z.object({
  sessionId: z.string(),
  generationId: z.string(),
  /** The push stream (GenerationRevision.stream) this delta continues. */
  stream: z.string().min(1).max(200),
  /** The revision it applies on… */
  baseRevision: z.number().int().nonnegative(),
  /** …and the one it makes: baseRevision + 1. */
  revision: z.number().int().positive(),
  /** The lane it is about; null: only generation-wide fields changed. */
  lane: LanePatch.nullable(),
  excerpts: ExcerptPatch.optional(),
  generation: GenerationFieldsPatch.optional(),
});
export type GenerationDelta = z.infer<typeof GenerationDelta>;

/**
 * Why a delta was not applied. `stale`: the holder is already past it on the same stream (a whole
 * read answered after it was sent) — nothing to do. Every other reason means the holder's copy is
 * not the delta's base: read the generation whole.
 */
export type DeltaRefusal = 'no-generation' | 'other-generation' | 'no-stream' | 'other-stream' | 'stale' | 'gap' | 'malformed';

export type DeltaOutcome = { ok: true; snapshot: GenerationSnapshot } | { ok: false; refusal: DeltaRefusal; message: string };

/**
 * `delta` applied on `snapshot` (pure; neither is changed). Every part the delta does not touch is
 * the same object as before (lanes, elements, marks, excerpts), so views can skip it by identity.
 */
export function applyGenerationDelta(snapshot: GenerationSnapshot | null, delta: GenerationDelta): DeltaOutcome {
  const refuse = (refusal: DeltaRefusal, message: string): DeltaOutcome => ({ ok: false, refusal, message });
  if (snapshot === null) return refuse('no-generation', `no generation is held, so delta ${delta.revision} of ${delta.generationId} has nothing to apply on`);
  if (snapshot.generationId !== delta.generationId) return refuse('other-generation', `the delta is about ${delta.generationId}, the generation held is ${snapshot.generationId}`);
  const at = snapshot.revision;
  if (!at) return refuse('no-stream', `generation ${snapshot.generationId} is held without a revision, so no delta applies on it`);
  if (at.stream !== delta.stream) return refuse('other-stream', `the delta continues push stream ${delta.stream}, the generation held is at stream ${at.stream}`);
  if (delta.revision <= at.n) return refuse('stale', `revision ${delta.revision} is already held (the generation is at ${at.n})`);
  if (delta.baseRevision !== at.n || delta.revision !== delta.baseRevision + 1) {
    return refuse('gap', `the delta goes from revision ${delta.baseRevision} to ${delta.revision}, the generation held is at ${at.n}`);
  }

  let lanes = snapshot.lanes;
  let citations = snapshot.citations;
  if (delta.lane) {
    const patch = delta.lane;
    const index = lanes.findIndex((lane) => lane.lens === patch.lens);
    if (index < 0) return refuse('malformed', `generation ${snapshot.generationId} has no ${patch.lens} lane`);
    const lane = applyLane(lanes[index] as LaneView, patch);
    if (typeof lane === 'string') return refuse('malformed', lane);
    lanes = lanes.map((l, i) => (i === index ? lane : l));
    if (patch.citations) {
      const spliced = spliceLaneMarks(citations, patch.lens, patch.citations);
      if (typeof spliced === 'string') return refuse('malformed', spliced);
      citations = spliced;
    }
  }

  const next: GenerationSnapshot = { ...snapshot, lanes, citations, revision: { stream: at.stream, n: delta.revision } };
  if (delta.excerpts) next.excerpts = patchExcerpts(snapshot.excerpts, delta.excerpts);
  const fields = delta.generation;
  if (fields) {
    if (fields.status !== undefined) next.status = fields.status;
    if (fields.spend !== undefined) next.spend = fields.spend;
    if (fields.timings !== undefined) next.timings = fields.timings;
    if (fields.frozen !== undefined) next.frozen = fields.frozen;
    if (fields.priorReview === null) delete next.priorReview;
    else if (fields.priorReview !== undefined) next.priorReview = fields.priorReview;
  }
  return { ok: true, snapshot: next };
}

/** The lane with its patch applied, or why it cannot be. */
function applyLane(lane: LaneView, patch: LanePatch): LaneView | string {
  const next: LaneView = { ...lane };
  if (patch.state !== undefined) next.state = patch.state;
  if (patch.absence !== undefined) next.absence = patch.absence;
  if (patch.failure !== undefined) next.failure = patch.failure;
  if (patch.roundDelta === null) delete next.delta;
  else if (patch.roundDelta !== undefined) next.delta = patch.roundDelta;
  if (patch.board === null) next.board = null;
  else if (patch.board !== undefined) {
    const board = applyBoard(lane.board, patch.lens, patch.board);
    if (typeof board === 'string') return board;
    next.board = board;
  }
  return next;
}

function applyBoard(board: LensBoardView | null, lens: Lens, patch: BoardPatch): LensBoardView | string {
  if (!patch.replace && board === null) return `the ${lens} lane has no board to patch (a patch of a board that is not held)`;
  if (patch.replace && (!patch.document || !patch.folds)) return `the ${lens} board is replaced without its document or its fold lines`;
  const document = patch.document ?? board?.document;
  const folds = patch.folds ?? (board && patch.foldUpdates ? upsertById(board.folds, patch.foldUpdates.upserted, patch.foldUpdates.removed, (f) => f.sectionId) : board?.folds);
  if (!document || !folds) return `the ${lens} board has no document or fold lines`;
  const elements = patch.replace || board === null ? patch.upserted : upsertById(board.elements, patch.upserted, patch.removed, (e) => e.id);
  return { lens: board?.lens ?? lens, document, status: patch.status, absence: patch.absence, revision: patch.revision, elements, folds };
}

/**
 * `items` with `removed` taken out and `upserted` put in, as a Map keyed by `idOf` holds them (a
 * board's element ids, a lane's section ids are unique): an update keeps its place, a new id goes
 * last. Unchanged: the same array.
 */
function upsertById<T>(items: T[], upserted: readonly T[], removedIds: readonly string[], idOf: (item: T) => string): T[] {
  if (upserted.length === 0 && removedIds.length === 0) return items;
  const removed = new Set(removedIds);
  const out = removed.size > 0 ? items.filter((item) => !removed.has(idOf(item))) : items.slice();
  if (upserted.length > 0) {
    const at = new Map<string, number>();
    out.forEach((item, i) => at.set(idOf(item), i));
    for (const item of upserted) {
      const i = at.get(idOf(item));
      if (i === undefined) {
        at.set(idOf(item), out.length);
        out.push(item);
      } else out[i] = item;
    }
  }
  return out;
}

/** The bounds of a lane's run in a generation's marks (lane by lane, in lens order). */
export function laneMarkRun(marks: readonly CitationMark[], lens: Lens): { start: number; end: number } {
  const order = LENSES.indexOf(lens);
  let start = 0;
  while (start < marks.length && LENSES.indexOf((marks[start] as CitationMark).lens) < order) start++;
  let end = start;
  while (end < marks.length && (marks[end] as CitationMark).lens === lens) end++;
  return { start, end };
}

function spliceLaneMarks(marks: CitationMark[], lens: Lens, splice: CitationSplice): CitationMark[] | string {
  const run = laneMarkRun(marks, lens);
  if (splice.start + splice.deleteCount > run.end - run.start) {
    return `the ${lens} marks splice (${splice.start} +${splice.deleteCount}) reaches past the lane's ${run.end - run.start} marks`;
  }
  if (splice.insert.some((mark) => mark.lens !== lens)) return `the ${lens} marks splice inserts another lens's marks`;
  const at = run.start + splice.start;
  return [...marks.slice(0, at), ...splice.insert, ...marks.slice(at + splice.deleteCount)];
}

function patchExcerpts(excerpts: Record<string, CodeExcerpt>, patch: ExcerptPatch): Record<string, CodeExcerpt> {
  const next: Record<string, CodeExcerpt> = { ...excerpts };
  for (const key of patch.removed) delete next[key];
  // As zod's record does, an own `__proto__` key is never taken.
  for (const [key, excerpt] of Object.entries(patch.upserted)) if (key !== '__proto__') next[key] = excerpt;
  return next;
}

/**
 * Equality as the wire sees it, the rule a delta's differ and its receivers share: JSON-shaped
 * values compared deeply, arrays item by item, plain objects by their own keys in any order, a
 * property holding undefined the same as no property (JSON drops it), numbers by value (0 and -0
 * are both written 0; NaN equals itself). Anything that is not JSON-shaped (a Date, a Map, an
 * object of another prototype) equals only itself, so a value that cannot travel is never taken
 * for an unchanged one.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b || Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (!isPlainObject(a) || !isPlainObject(b)) return false;
  let count = 0;
  for (const key of Object.keys(a)) {
    const value = a[key];
    if (value === undefined) continue;
    count++;
    // Own keys only: b's prototype answers for a key it lacks (`constructor`, `__proto__`).
    if (!Object.prototype.hasOwnProperty.call(b, key) || !sameJson(value, b[key])) return false;
  }
  for (const key of Object.keys(b)) if (b[key] !== undefined) count--;
  return count === 0;
}

function isPlainObject(value: object): value is Record<string, unknown> {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}
