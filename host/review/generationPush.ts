import { LENSES, type Absence, type BoardElement, type Lens, type LensBoardView, type SectionFold } from '../../protocol/board';
import {
  applyGenerationDelta,
  laneMarkRun,
  sameJson,
  type BoardPatch,
  type CitationSplice,
  type ExcerptPatch,
  type GenerationDelta,
  type GenerationFieldsPatch,
  type LanePatch,
} from '../../protocol/generationDelta';
import type { CitationMark, CodeExcerpt, GenerationSnapshot, LaneDelta, LaneFailure, LaneState, LaneView } from '../../protocol/review';
import { readBoard } from '../board/read';
import type { BoardState } from '../board/state';
import type { PipelineFrame } from '../pipeline/types';
import { citationMarkMemo, citationMarks } from '../generation/citationMarks';
import { buildExcerpts, excerptSpans, seedExcerptMemo, type ExcerptSpan } from '../generation/excerpts';
import type { SnapshotCapture } from '../generation/generationSnapshot';

/**
 * The host's half of incremental board pushes (pure: no store, no I/O; protocol/generationDelta.ts
 * holds the messages and the fold). One pusher per open push stream: a live generation, opened
 * with the generation read whole from the store. While its run writes, the runner notes each seat
 * frame (the lane's board and the element ids it touched) and each lane change here, and every
 * throttle tick `drain`s them into one delta per lane changed:
 *
 * - the touched ids' elements, whole, read from the frame's board (a removed id is named); a lane
 *   opened again is replaced whole. No other lane is read, nothing is read from the store;
 * - the lane's seat state and settlement, as the lane change said them;
 * - the lane's fold lines (readBoard over that board), when they changed;
 * - a splice of the lane's citation marks (citationMarks over that board), when they changed;
 * - the excerpts that changed, over every lane's spans (one line budget over the generation; each
 *   span is read once, memoised, so this costs a walk over the spans, not over the diff);
 * - generation-wide fields (status, spend, timings, frozen list) the caller read from the store's
 *   generation row, when they changed.
 *
 * Each delta is applied to the pusher's own copy with the same fold the panel runs, so the copy is
 * what every receiver holds, and `rennet/generation/get` answers it while the stream is open.
 * When the run ends, `reconcile` compares the copy with the generation read whole from the store
 * and sends what differs (the interrupted lanes' words, the final timings, a re-review's record):
 * the store stays the source of truth, and a difference in elements — which the frames should
 * have carried — is counted for the log.
 */

/** A lane change as the pipeline reports it, and a round successor's verdict once the lane settled. */
export interface LaneNote {
  state: LaneState;
  absence: Absence | null;
  failure: LaneFailure | null;
  roundDelta?: LaneDelta | null;
}

/** Generation-wide fields the caller reads from the store's generation row at each tick. */
export type GenerationFields = Pick<GenerationSnapshot, 'status' | 'spend' | 'timings' | 'frozen'>;

interface PendingBoard {
  board: BoardState;
  touched: Set<string>;
  /** The lane's board was opened (again): send it whole. */
  replace: boolean;
}

export class GenerationPusher {
  private mirror: GenerationSnapshot;
  private readonly stream: string;
  private readonly boards = new Map<Lens, PendingBoard>();
  private readonly lanes = new Map<Lens, LaneNote>();
  private readonly memo = new Map<string, CodeExcerpt>();
  /** Each element's marks, re-read only when it or what it depends on changed. */
  private readonly marksMemo = citationMarkMemo();
  /** Each lane's spans, with the elements array they were read from. */
  private readonly spans = new Map<Lens, { elements: readonly BoardElement[]; spans: ExcerptSpan[] }>();

  constructor(
    whole: GenerationSnapshot,
    stream: string,
    private readonly capture: SnapshotCapture,
  ) {
    this.stream = stream;
    this.mirror = { ...whole, revision: { stream, n: 0 } };
    seedExcerptMemo(this.memo, whole.excerpts);
  }

  get generationId(): string {
    return this.mirror.generationId;
  }

  /** The generation as the stream's receivers hold it after the last delta sent. */
  get snapshot(): GenerationSnapshot {
    return this.mirror;
  }

  /** A seat frame of this generation: its board is the lane's latest, its touched ids wait for the next drain. */
  noteFrame(frame: Pick<PipelineFrame, 'generation' | 'lens' | 'kind' | 'touched' | 'board'>): void {
    if (frame.generation !== this.mirror.generationId) return;
    const pending = this.boards.get(frame.lens) ?? { board: frame.board, touched: new Set<string>(), replace: false };
    pending.board = frame.board;
    if (frame.kind === 'opened') {
      pending.replace = true;
      pending.touched.clear();
    } else if (!pending.replace) {
      for (const id of frame.touched) pending.touched.add(id);
    }
    this.boards.set(frame.lens, pending);
  }

  /** A lane change (the last one before a drain wins). */
  noteLane(lens: Lens, note: LaneNote): void {
    this.lanes.set(lens, { ...this.lanes.get(lens), ...note });
  }

  /** The deltas for everything noted since the last drain: one per lane changed, in lens order; each is applied to the copy. */
  drain(fields: GenerationFields): GenerationDelta[] {
    const out: GenerationDelta[] = [];
    let generation = fieldsPatch(this.mirror, fields);
    for (const lens of LENSES) {
      const pending = this.boards.get(lens);
      const note = this.lanes.get(lens);
      if (!pending && !note) continue;
      this.boards.delete(lens);
      this.lanes.delete(lens);
      const lane = laneOf(this.mirror, lens);
      const patch: LanePatch = { lens, ...(note ? notePatch(lane, note) : {}) };
      if (pending) {
        const board = boardPatch(lane.board, pending);
        if (board) patch.board = board;
      }
      const delta = this.send(patch, generation);
      if (delta) {
        out.push(delta);
        generation = undefined;
      }
    }
    if (generation) {
      const delta = this.send(null, generation);
      if (delta) out.push(delta);
    }
    return out;
  }

  /**
   * The deltas that take the copy to `whole` (the generation read from the store when the run
   * ended): one per lane that differs, the excerpts and generation-wide fields with the last one.
   * `repaired` names the elements, by lane, the frames did not carry (empty when the stream was exact).
   */
  reconcile(whole: GenerationSnapshot): { deltas: GenerationDelta[]; repaired: Array<{ lens: Lens; ids: string[] }> } {
    this.boards.clear();
    this.lanes.clear();
    const patches: LanePatch[] = [];
    const repaired: Array<{ lens: Lens; ids: string[] }> = [];
    for (const lens of LENSES) {
      const from = laneOf(this.mirror, lens);
      const to = whole.lanes.find((l) => l.lens === lens);
      if (!to) continue;
      const patch: LanePatch = { lens };
      if (from.state !== to.state) patch.state = to.state;
      if (!sameJson(from.absence, to.absence)) patch.absence = to.absence;
      if (!sameJson(from.failure, to.failure)) patch.failure = to.failure;
      if (!sameJson(from.delta ?? null, to.delta ?? null)) patch.roundDelta = to.delta ?? null;
      const board = boardDiff(from.board, to.board);
      if (board !== undefined) {
        patch.board = board;
        const ids = board === null ? (from.board?.elements ?? []).map((e) => e.id) : [...board.upserted.map((e) => e.id), ...board.removed];
        if (ids.length > 0) repaired.push({ lens, ids });
      }
      const splice = markSplice(runOf(this.mirror.citations, lens), runOf(whole.citations, lens));
      if (splice) patch.citations = splice;
      if (Object.keys(patch).length > 1) patches.push(patch);
    }
    const generation: GenerationFieldsPatch = fieldsPatch(this.mirror, whole) ?? {};
    if (!sameJson(this.mirror.priorReview ?? null, whole.priorReview ?? null)) generation.priorReview = whole.priorReview ?? null;
    const excerpts = excerptDiff(this.mirror.excerpts, whole.excerpts, (a, b) => sameJson(a, b));

    const deltas: GenerationDelta[] = [];
    patches.forEach((patch, i) => {
      const last = i === patches.length - 1;
      deltas.push(this.commit(this.draft(patch, last ? generationOrNone(generation) : undefined, last ? excerpts : null)));
    });
    if (patches.length === 0 && (generationOrNone(generation) || excerpts)) deltas.push(this.commit(this.draft(null, generationOrNone(generation), excerpts)));
    return { deltas, repaired };
  }

  // ─── Internals ─────────────────────────────────────────────────────────────────────────────

  /** One delta: the lane patch, then what its board derives (marks, excerpts); null when nothing changed. */
  private send(patch: LanePatch | null, generation: GenerationFieldsPatch | undefined): GenerationDelta | null {
    let excerpts: ExcerptPatch | null = null;
    if (patch?.board !== undefined) {
      // The lane's marks and the generation's excerpts, over the lane as the patch leaves it.
      const patched = applyGenerationDelta(this.mirror, this.draft(patch, undefined, null));
      if (!patched.ok) throw new Error(`a generation delta does not apply on the pusher's own copy: ${patched.message}`);
      const lane = laneOf(patched.snapshot, patch.lens);
      const splice = markSplice(runOf(this.mirror.citations, patch.lens), this.laneMarks(lane));
      if (splice) patch.citations = splice;
      excerpts = excerptDiff(this.mirror.excerpts, this.excerptsOf(patched.snapshot.lanes), (a, b) => a === b);
    }
    const lanePart = patch && Object.keys(patch).length > 1 ? patch : null;
    if (!lanePart && !generation && !excerpts) return null;
    return this.commit(this.draft(lanePart, generation, excerpts));
  }

  private draft(lane: LanePatch | null, generation: GenerationFieldsPatch | undefined, excerpts: ExcerptPatch | null): GenerationDelta {
    const n = this.mirror.revision?.n ?? 0;
    return {
      sessionId: this.mirror.sessionId,
      generationId: this.mirror.generationId,
      stream: this.stream,
      baseRevision: n,
      revision: n + 1,
      lane,
      ...(excerpts ? { excerpts } : {}),
      ...(generation ? { generation } : {}),
    };
  }

  /** Applies a delta to the copy, with the fold every receiver runs. */
  private commit(delta: GenerationDelta): GenerationDelta {
    const applied = applyGenerationDelta(this.mirror, delta);
    if (!applied.ok) throw new Error(`a generation delta does not apply on the pusher's own copy: ${applied.message}`);
    this.mirror = applied.snapshot;
    return delta;
  }

  /** A lane's marks as readGenerationSnapshot makes them (the index when the capture reads; else every well-formed citation). */
  private laneMarks(lane: LaneView): CitationMark[] {
    return citationMarks([lane], this.capture.ok ? { citations: this.capture.citations, memo: this.marksMemo } : { memo: this.marksMemo });
  }

  /** The generation's excerpts over every lane's spans, in lens order (as readGenerationSnapshot builds them). */
  private excerptsOf(lanes: readonly LaneView[]): Record<string, CodeExcerpt> {
    const spans: ExcerptSpan[] = [];
    for (const lane of lanes) {
      const elements = lane.board?.elements ?? [];
      let cached = this.spans.get(lane.lens);
      if (!cached || cached.elements !== elements) {
        cached = { elements, spans: excerptSpans(elements) };
        this.spans.set(lane.lens, cached);
      }
      spans.push(...cached.spans);
    }
    return this.capture.ok ? buildExcerpts(this.capture.patchset, spans, { memo: this.memo }) : buildExcerpts(null, spans, { missingReason: this.capture.reason, memo: this.memo });
  }
}

function laneOf(snapshot: GenerationSnapshot, lens: Lens): LaneView {
  const lane = snapshot.lanes.find((l) => l.lens === lens);
  if (!lane) throw new Error(`generation ${snapshot.generationId} has no ${lens} lane`);
  return lane;
}

function runOf(marks: readonly CitationMark[], lens: Lens): readonly CitationMark[] {
  const { start, end } = laneMarkRun(marks, lens);
  return marks.slice(start, end);
}

/** The lane fields a note changes. */
function notePatch(lane: LaneView, note: LaneNote): Partial<LanePatch> {
  const patch: Partial<LanePatch> = {};
  if (lane.state !== note.state) patch.state = note.state;
  if (!sameJson(lane.absence, note.absence)) patch.absence = note.absence;
  if (!sameJson(lane.failure, note.failure)) patch.failure = note.failure;
  if (note.roundDelta !== undefined && !sameJson(lane.delta ?? null, note.roundDelta)) patch.roundDelta = note.roundDelta;
  return patch;
}

/** What a lane's frames changed on its board since the copy's view of it; null when nothing shows. */
function boardPatch(view: LensBoardView | null, pending: PendingBoard): BoardPatch | null {
  const { board } = pending;
  const read = readBoard(board);
  if (pending.replace || view === null) {
    return { replace: true, document: board.document, status: board.status, absence: board.absence, revision: board.revision, upserted: read.elements, removed: [], folds: read.folds };
  }
  const upserted: BoardElement[] = [];
  const removed: string[] = [];
  let held: Set<string> | null = null;
  for (const id of pending.touched) {
    if (id === '/document') continue;
    const element = board.elements.get(id);
    if (element) upserted.push(element);
    else if ((held ??= new Set(view.elements.map((e) => e.id))).has(id)) removed.push(id);
  }
  const patch: BoardPatch = { replace: false, status: board.status, absence: board.absence, revision: board.revision, upserted, removed };
  if (!sameJson(view.document, board.document)) patch.document = board.document;
  const folds = foldChanges(view.folds, read.folds);
  if (folds) Object.assign(patch, folds);
  const moved = upserted.length > 0 || removed.length > 0 || patch.document || folds;
  if (!moved && view.status === board.status && view.absence === board.absence && view.revision === board.revision) return null;
  return patch;
}

/**
 * How a lane's fold lines changed: the lines that differ and the ones gone (by sectionId), or all
 * of them when the fold would put them in another order; null when none changed.
 */
function foldChanges(from: readonly SectionFold[], to: SectionFold[]): Pick<BoardPatch, 'folds' | 'foldUpdates'> | null {
  const before = new Map(from.map((f) => [f.sectionId, f]));
  const after = new Set(to.map((f) => f.sectionId));
  const upserted = to.filter((f) => {
    const prior = before.get(f.sectionId);
    return prior === undefined || !sameJson(prior, f);
  });
  const removed = from.filter((f) => !after.has(f.sectionId)).map((f) => f.sectionId);
  if (upserted.length === 0 && removed.length === 0) return null;
  const order = [...from.filter((f) => after.has(f.sectionId)).map((f) => f.sectionId), ...to.filter((f) => !before.has(f.sectionId)).map((f) => f.sectionId)];
  if (order.length !== to.length || order.some((id, i) => id !== to[i]?.sectionId)) return { folds: to };
  return { foldUpdates: { upserted, removed } };
}

/**
 * What takes one board view to another, compared by value (the end-of-run reconcile): undefined
 * when they are equal, null when the board is gone, a replacement when the order of the elements
 * the fold would make is not the target's.
 */
function boardDiff(from: LensBoardView | null, to: LensBoardView | null): BoardPatch | null | undefined {
  if (to === null) return from === null ? undefined : null;
  const whole: BoardPatch = { replace: true, document: to.document, status: to.status, absence: to.absence, revision: to.revision, upserted: to.elements, removed: [], folds: to.folds };
  if (from === null) return whole;
  const before = new Map(from.elements.map((e) => [e.id, e]));
  const after = new Set(to.elements.map((e) => e.id));
  const removed = from.elements.filter((e) => !after.has(e.id)).map((e) => e.id);
  const upserted = to.elements.filter((e) => {
    const prior = before.get(e.id);
    return prior === undefined || !sameJson(prior, e);
  });
  // The fold keeps held ids in place and appends new ones: a reordered board is sent whole.
  const kept = from.elements.filter((e) => after.has(e.id)).map((e) => e.id);
  const order = [...kept, ...to.elements.filter((e) => !before.has(e.id)).map((e) => e.id)];
  if (order.length !== to.elements.length || order.some((id, i) => id !== to.elements[i]?.id)) return whole;
  const patch: BoardPatch = { replace: false, status: to.status, absence: to.absence, revision: to.revision, upserted, removed };
  if (!sameJson(from.document, to.document)) patch.document = to.document;
  const folds = foldChanges(from.folds, to.folds);
  if (folds) Object.assign(patch, folds);
  const moved = upserted.length > 0 || removed.length > 0 || patch.document || folds;
  if (!moved && from.status === to.status && from.absence === to.absence && from.revision === to.revision) return undefined;
  return patch;
}

/** The splice that turns one run of marks into another (common head and tail kept); null when equal. */
export function markSplice(from: readonly CitationMark[], to: readonly CitationMark[]): CitationSplice | null {
  let head = 0;
  while (head < from.length && head < to.length && sameMark(from[head] as CitationMark, to[head] as CitationMark)) head++;
  let tail = 0;
  while (tail < from.length - head && tail < to.length - head && sameMark(from[from.length - 1 - tail] as CitationMark, to[to.length - 1 - tail] as CitationMark)) tail++;
  const deleteCount = from.length - head - tail;
  const insert = to.slice(head, to.length - tail);
  return deleteCount === 0 && insert.length === 0 ? null : { start: head, deleteCount, insert };
}

function sameMark(a: CitationMark, b: CitationMark): boolean {
  return a.lens === b.lens && a.elementId === b.elementId && a.path === b.path && a.side === b.side && a.startLine === b.startLine && a.endLine === b.endLine && a.claim === b.claim;
}

/** Excerpt keys added or changed (by `same`), and keys gone; null when none. */
function excerptDiff(from: Readonly<Record<string, CodeExcerpt>>, to: Readonly<Record<string, CodeExcerpt>>, same: (a: CodeExcerpt, b: CodeExcerpt) => boolean): ExcerptPatch | null {
  const upserted: Record<string, CodeExcerpt> = {};
  let changed = 0;
  for (const [key, excerpt] of Object.entries(to)) {
    const prior = Object.prototype.hasOwnProperty.call(from, key) ? from[key] : undefined;
    if (prior === undefined || !same(prior, excerpt)) {
      upserted[key] = excerpt;
      changed++;
    }
  }
  const removed = Object.keys(from).filter((key) => !Object.prototype.hasOwnProperty.call(to, key));
  return changed === 0 && removed.length === 0 ? null : { upserted, removed };
}

/** Generation-wide fields that differ from the copy's; undefined when none. */
function fieldsPatch(mirror: GenerationSnapshot, fields: GenerationFields): GenerationFieldsPatch | undefined {
  const patch: GenerationFieldsPatch = {};
  if (mirror.status !== fields.status) patch.status = fields.status;
  if (!sameJson(mirror.spend, fields.spend)) patch.spend = fields.spend;
  if (!sameJson(mirror.timings, fields.timings)) patch.timings = fields.timings;
  if (!sameJson(mirror.frozen, fields.frozen)) patch.frozen = fields.frozen;
  return Object.keys(patch).length > 0 ? patch : undefined;
}

function generationOrNone(patch: GenerationFieldsPatch): GenerationFieldsPatch | undefined {
  return Object.keys(patch).length > 0 ? patch : undefined;
}
