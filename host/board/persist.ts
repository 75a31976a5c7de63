import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { BoardDocument, BoardElement, BoardStatus, Absence, Lens, ReferenceRepair } from '../../protocol/board';
import type { BoardKeyParts, BoardMetaInput, Store, StoredBoardMeta } from '../store';
import { boardKeyOf } from '../store';
import type { BoardState, VerbCall } from './state';

/**
 * Boards in the durable store. A board is two halves (host/store/boards.ts):
 *
 * - its ELEMENT EVENT LOG: every element created, updated (full element JSON) or removed, in the
 *   order the writer made them, plus the envelope changes (document set, status, repairs) as an
 *   audit trail of when they happened;
 * - its METADATA record: the envelope as of the last accepted write (document, status, absence,
 *   revision, repairs, the id counter, the last finish verdict) and `eventSeq`, the last event it
 *   covers.
 *
 * `replayBoard(meta, events)` rebuilds the BoardState exactly: elements by folding the element
 * events (up to meta.eventSeq, from the last `board.opened`), everything else from the meta. So
 * the envelope has one source of truth (the meta) and the elements another (the log); a restart
 * re-reads exactly what a reader was shown.
 *
 * A new drafting attempt on the same board key starts with `board.opened`: events before it
 * belong to an earlier attempt and are history, never elements of this board.
 */

export const BOARD_EVENT_VERBS = ['board.opened', 'element.created', 'element.updated', 'element.removed', 'document.set', 'status.set', 'repairs.set'] as const;
export type BoardEventVerb = (typeof BOARD_EVENT_VERBS)[number];

/** Which write produced an event: the verb called and the board revision after it. */
interface Stamp {
  call: VerbCall['verb'];
  revision: number;
}

export type BoardEvent =
  | { verb: 'board.opened'; payload: { lens: Lens; patchsetId: string; document: BoardDocument; elements: BoardElement[] } }
  | { verb: 'element.created'; payload: Stamp & { element: BoardElement } }
  | { verb: 'element.updated'; payload: Stamp & { element: BoardElement } }
  | { verb: 'element.removed'; payload: Stamp & { id: string } }
  | { verb: 'document.set'; payload: Stamp & { document: BoardDocument } }
  | { verb: 'status.set'; payload: Stamp & { status: BoardStatus; absence: Absence | null } }
  | { verb: 'repairs.set'; payload: Stamp & { repairs: ReferenceRepair[] } };

/**
 * The event that begins a board (or a fresh attempt at one): nothing logged before it is this
 * board's. It carries the initial elements (normally none) so a board opened non-empty replays.
 */
export function boardOpenedEvent(initial: BoardState): BoardEvent {
  return {
    verb: 'board.opened',
    payload: { lens: initial.lens, patchsetId: initial.patchsetId, document: initial.document, elements: [...initial.elements.values()] },
  };
}

/**
 * The events that take `previous` to `next`, the state the writer returned for `call`. Elements
 * created (in creation order), updated (any field differs; full element) and removed; the
 * document when it changed; status/absence when either changed; repairs when they changed. A
 * refused call (or any call that changed none of these) yields no events.
 */
export function boardEventsFor(previous: BoardState, next: BoardState, call: VerbCall): BoardEvent[] {
  const stamp: Stamp = { call: call.verb, revision: next.revision };
  const events: BoardEvent[] = [];
  if (!isDeepStrictEqual(previous.document, next.document)) {
    events.push({ verb: 'document.set', payload: { ...stamp, document: next.document } });
  }
  // Replay keeps a surviving element where it was and appends created ones, and Map order is the
  // board's order of record. A write that moved elements (a round carrying predecessor ids onto
  // the draft) re-lays them: from the first element out of place on, each is removed and created
  // again in the new order, so the replayed board has the order the writer made.
  const nextIds = [...next.elements.keys()];
  const replayed = [...[...previous.elements.keys()].filter((id) => next.elements.has(id)), ...nextIds.filter((id) => !previous.elements.has(id))];
  let inPlace = 0;
  while (inPlace < nextIds.length && nextIds[inPlace] === replayed[inPlace]) inPlace += 1;
  const relaid = new Set(nextIds.slice(inPlace).filter((id) => previous.elements.has(id)));
  for (const id of nextIds.slice(0, inPlace)) {
    const element = next.elements.get(id) as BoardElement;
    const before = previous.elements.get(id);
    if (before === undefined) events.push({ verb: 'element.created', payload: { ...stamp, element } });
    else if (!isDeepStrictEqual(before, element)) events.push({ verb: 'element.updated', payload: { ...stamp, element } });
  }
  for (const id of previous.elements.keys()) {
    if (relaid.has(id)) events.push({ verb: 'element.removed', payload: { ...stamp, id } });
  }
  for (const id of nextIds.slice(inPlace)) events.push({ verb: 'element.created', payload: { ...stamp, element: next.elements.get(id) as BoardElement } });
  for (const id of previous.elements.keys()) {
    if (!next.elements.has(id)) events.push({ verb: 'element.removed', payload: { ...stamp, id } });
  }
  if (previous.status !== next.status || previous.absence !== next.absence) {
    events.push({ verb: 'status.set', payload: { ...stamp, status: next.status, absence: next.absence } });
  }
  if (!isDeepStrictEqual(previous.repairs, next.repairs)) {
    events.push({ verb: 'repairs.set', payload: { ...stamp, repairs: [...next.repairs] } });
  }
  return events;
}

/** The metadata record for a board state, filed under `parts` (sessionId, generationId). */
export function boardMetaOf(state: BoardState, parts: Omit<BoardKeyParts, 'lens' | 'patchsetId'>, now: string): BoardMetaInput {
  return {
    sessionId: parts.sessionId,
    generationId: parts.generationId,
    patchsetId: state.patchsetId,
    lens: state.lens,
    status: state.status,
    absence: state.absence,
    revision: state.revision,
    nextId: state.nextId,
    document: state.document,
    repairs: state.repairs,
    lastFinish: state.lastFinish,
    updatedAt: now,
  };
}

/** What replay needs of a metadata record (a StoredBoardMeta is one). */
export type ReplayMeta = Pick<BoardMetaInput, 'lens' | 'patchsetId' | 'status' | 'absence' | 'revision' | 'nextId' | 'document' | 'repairs' | 'lastFinish'> & {
  /** Fold only events with seq ≤ this (events without a seq are always folded). */
  eventSeq?: number;
};

/** An event as read back from the store (or as produced, without a seq). */
export interface ReplayEvent {
  seq?: number;
  verb: string;
  payload: unknown;
}

export class BoardReplayError extends Error {
  override readonly name = 'BoardReplayError';
}

const ElementPayload = z.object({ element: BoardElement });
const OpenedPayload = z.object({ elements: z.array(BoardElement).optional() });
const RemovedPayload = z.object({ id: z.string() });

/**
 * Rebuilds a BoardState from its metadata record and its event log (see the module comment).
 * Throws BoardReplayError when the log is not one this module wrote (an update or removal of an
 * unknown element, a created id that already exists, a malformed element).
 */
export function replayBoard(meta: ReplayMeta, events: readonly ReplayEvent[]): BoardState {
  const covered = events.filter((e) => e.seq === undefined || meta.eventSeq === undefined || e.seq <= meta.eventSeq);
  let from = -1;
  covered.forEach((e, i) => {
    if (e.verb === 'board.opened') from = i;
  });
  const elements = new Map<string, BoardElement>();
  const opened = from >= 0 ? covered[from] : undefined;
  if (opened) {
    const parsed = OpenedPayload.safeParse(opened.payload);
    if (!parsed.success) throw new BoardReplayError(`board.opened #${opened.seq ?? '?'}: malformed initial elements: ${parsed.error.message}`);
    for (const element of (opened.payload as { elements?: BoardElement[] }).elements ?? []) elements.set(element.id, structuredClone(element));
  }
  for (const event of covered.slice(from + 1)) {
    const where = () => (event.seq === undefined ? event.verb : `${event.verb} #${event.seq}`);
    switch (event.verb) {
      case 'element.created':
      case 'element.updated': {
        const parsed = ElementPayload.safeParse(event.payload);
        if (!parsed.success) throw new BoardReplayError(`${where()}: not a board element: ${parsed.error.message}`);
        // The stored element itself (validated above), not zod's copy, so replay is byte-faithful.
        const element = structuredClone((event.payload as { element: BoardElement }).element);
        const exists = elements.has(element.id);
        if (event.verb === 'element.created' && exists) throw new BoardReplayError(`${where()}: element ${element.id} already exists`);
        if (event.verb === 'element.updated' && !exists) throw new BoardReplayError(`${where()}: element ${element.id} does not exist`);
        elements.set(element.id, element);
        break;
      }
      case 'element.removed': {
        const parsed = RemovedPayload.safeParse(event.payload);
        if (!parsed.success) throw new BoardReplayError(`${where()}: no element id`);
        if (!elements.delete(parsed.data.id)) throw new BoardReplayError(`${where()}: element ${parsed.data.id} does not exist`);
        break;
      }
      default:
        // Envelope events are the audit trail; the meta record is the envelope.
        break;
    }
  }
  return {
    lens: meta.lens,
    patchsetId: meta.patchsetId,
    document: structuredClone(meta.document),
    elements,
    status: meta.status,
    absence: meta.absence,
    revision: meta.revision,
    nextId: meta.nextId,
    repairs: structuredClone([...meta.repairs]),
    lastFinish: meta.lastFinish === null ? null : structuredClone([...meta.lastFinish]),
  };
}

// ─── Store glue ──────────────────────────────────────────────────────────────────────────────

type BoardPlace = Omit<BoardKeyParts, 'lens' | 'patchsetId'>;

/** Files a fresh board (or a fresh attempt at one): `board.opened` and its meta, in one transaction. */
export function persistOpenedBoard(store: Store, place: BoardPlace, initial: BoardState, now: string): StoredBoardMeta {
  return store.commitBoardWrite(boardMetaOf(initial, place, now), [boardOpenedEvent(initial)]).meta;
}

/**
 * Persists what one verb did: its events and the envelope after it, in one transaction. Writes
 * nothing when the call changed nothing the store holds.
 */
export function persistVerb(store: Store, place: BoardPlace, previous: BoardState, next: BoardState, call: VerbCall, now: string): StoredBoardMeta | null {
  const events = boardEventsFor(previous, next, call);
  const envelopeSame = previous.revision === next.revision && previous.nextId === next.nextId && isDeepStrictEqual(previous.lastFinish, next.lastFinish);
  if (events.length === 0 && envelopeSame) return null;
  return store.commitBoardWrite(boardMetaOf(next, place, now), events).meta;
}

/** The board filed under these parts, rebuilt from the store; null when no board is filed there. */
export function loadBoard(store: Pick<Store, 'getBoardMeta' | 'readBoardEvents'>, parts: BoardKeyParts): BoardState | null {
  const key = boardKeyOf(parts);
  const meta = store.getBoardMeta(key);
  if (!meta) return null;
  return replayBoard(meta, store.readBoardEvents(key, 0, meta.eventSeq));
}
