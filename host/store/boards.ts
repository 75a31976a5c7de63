import { z } from 'zod';
import { Absence, BoardDocument, BoardStatus, FinishPointer, LENSES, Lens, ReferenceRepair } from '../../protocol/board';
import type { Row, Tx } from './durable-db';
import { jsonColumn, numberColumn, textColumn } from './columns';
import { StoreError, describeError, storeFailed } from './errors';
import { assertScopeWritableTx } from './generations';

/**
 * Lens boards in the store (migration 2): an append-only element event log per board
 * (`board_events`) and one metadata row per board (`board_meta`) holding the document envelope,
 * status, absence, revision, repairs and the host's id counter.
 *
 * Board key: `<sessionId>/<scope>/<lens>`, where scope is the generation id when the board
 * belongs to a generation and the patchset id otherwise. The key is what the log is filed under;
 * the meta row also keeps each part in its own column, so nothing parses keys to query, and a
 * put whose parts disagree with the row already filed under that key is refused (a generation id
 * that happens to equal a patchset id cannot silently share a board).
 *
 * Consistency between the halves: a meta row records `event_seq`, the last event of its board
 * that existed when it was written. A reader folds events up to that seq only, so events appended
 * after the last meta write (a crash between the two calls) never leak into a read.
 * `commitBoardWrite` writes both in one transaction and is the path the writer should use.
 */

const KEY_PART = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

export interface BoardKeyParts {
  sessionId: string;
  /** The generation the board belongs to; null when boards are filed by patchset. */
  generationId: string | null;
  patchsetId: string;
  lens: Lens;
}

/** `<sessionId>/<generationId ?? patchsetId>/<lens>`. Throws 'invalid-request' on an unsafe part. */
export function boardKeyOf(parts: BoardKeyParts): string {
  const scope = parts.generationId ?? parts.patchsetId;
  for (const [name, value] of [
    ['sessionId', parts.sessionId],
    [parts.generationId === null ? 'patchsetId' : 'generationId', scope],
    ['patchsetId', parts.patchsetId],
  ] as const) {
    if (!KEY_PART.test(value)) throw new StoreError('invalid-request', `Refusing board ${name} ${JSON.stringify(value)}: not a safe key part`);
  }
  if (!Lens.safeParse(parts.lens).success) throw new StoreError('invalid-request', `Refusing board lens ${JSON.stringify(parts.lens)}`);
  return `${parts.sessionId}/${scope}/${parts.lens}`;
}

/** The three segments of a board key; throws 'invalid-request' when it is not one. */
export function parseBoardKey(boardKey: string): { sessionId: string; scope: string; lens: Lens } {
  const [sessionId, scope, lens, ...rest] = boardKey.split('/');
  const parsedLens = Lens.safeParse(lens);
  if (rest.length > 0 || !sessionId || !scope || !KEY_PART.test(sessionId) || !KEY_PART.test(scope) || !parsedLens.success) {
    throw new StoreError('invalid-request', `${JSON.stringify(boardKey)} is not a board key (<sessionId>/<generationId or patchsetId>/<lens>)`);
  }
  return { sessionId, scope, lens: parsedLens.data };
}

/** What the host writes for a board's envelope. */
export interface BoardMetaInput extends BoardKeyParts {
  status: BoardStatus;
  absence: Absence | null;
  revision: number;
  /** The next element id number the host mints (BoardState.nextId). */
  nextId: number;
  document: BoardDocument;
  repairs: readonly ReferenceRepair[];
  lastFinish: readonly FinishPointer[] | null;
  updatedAt: string;
}

/** A board's envelope as stored. */
export interface StoredBoardMeta extends BoardMetaInput {
  boardKey: string;
  /** The last board event that existed when this row was written: readers fold up to here. */
  eventSeq: number;
  repairs: ReferenceRepair[];
  lastFinish: FinishPointer[] | null;
}

export interface BoardEventInput {
  verb: string;
  payload: unknown;
}

export interface StoredBoardEvent {
  seq: number;
  verb: string;
  payload: unknown;
  at: string;
}

const MetaInput = z.object({
  sessionId: z.string(),
  generationId: z.string().nullable(),
  patchsetId: z.string(),
  lens: Lens,
  status: BoardStatus,
  absence: Absence.nullable(),
  revision: z.number().int().nonnegative(),
  nextId: z.number().int().positive(),
  document: BoardDocument,
  repairs: z.array(ReferenceRepair),
  lastFinish: z.array(FinishPointer).nullable(),
  updatedAt: z.string().min(1),
});

function checkMeta(meta: BoardMetaInput): BoardMetaInput {
  const parsed = MetaInput.safeParse(meta);
  if (!parsed.success) throw new StoreError('invalid-request', `Invalid board metadata: ${parsed.error.message}`);
  return parsed.data;
}

function encode(value: unknown, what: string): string {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch (error) {
    throw new StoreError('invalid-request', `${what} cannot be stored as JSON: ${describeError(error)}`);
  }
}

/** Appends events under `boardKey` inside `tx`; seq is per board, from 1, without gaps. */
export function appendBoardEventsTx(tx: Tx, boardKey: string, events: readonly BoardEventInput[], now: string): { firstSeq: number; lastSeq: number } {
  // A board filed under a frozen generation is never rewritten (generations.ts).
  assertScopeWritableTx(tx, parseBoardKey(boardKey).scope);
  const encoded = events.map((e) => {
    if (typeof e.verb !== 'string' || e.verb.length === 0) throw new StoreError('invalid-request', 'A board event needs a verb');
    return { verb: e.verb, json: encode(e.payload, 'Board event payload') };
  });
  const last = lastBoardSeq(tx, boardKey);
  let seq = last;
  for (const e of encoded) {
    seq += 1;
    tx.run('INSERT INTO board_events (board_key, seq, verb, payload_json, at) VALUES (?, ?, ?, ?, ?)', [boardKey, seq, e.verb, e.json, now]);
  }
  return { firstSeq: last + 1, lastSeq: seq };
}

/** Writes (inserts or replaces) a board's meta row inside `tx`, stamping the current event seq. */
export function putBoardMetaTx(tx: Tx, input: BoardMetaInput): StoredBoardMeta {
  const meta = checkMeta(input);
  const boardKey = boardKeyOf(meta);
  assertScopeWritableTx(tx, meta.generationId);
  if (!tx.get('SELECT 1 AS x FROM sessions WHERE id = ?', [meta.sessionId])) {
    throw new StoreError('not-found', `No session ${meta.sessionId} in the store`, { sessionId: meta.sessionId });
  }
  const existing = tx.get('SELECT generation_id, patchset_id FROM board_meta WHERE board_key = ?', [boardKey]);
  if (existing && (existing.generation_id !== meta.generationId || existing.patchset_id !== meta.patchsetId)) {
    throw new StoreError(
      'invalid-request',
      `Board ${boardKey} is filed for generation ${String(existing.generation_id)} / patchset ${String(existing.patchset_id)}, ` +
        `not generation ${String(meta.generationId)} / patchset ${meta.patchsetId}`,
    );
  }
  const eventSeq = lastBoardSeq(tx, boardKey);
  tx.run(
    `INSERT OR REPLACE INTO board_meta
       (board_key, session_id, generation_id, patchset_id, lens, status, absence, revision, next_id, document_json, repairs_json, last_finish_json, event_seq, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      boardKey,
      meta.sessionId,
      meta.generationId,
      meta.patchsetId,
      meta.lens,
      meta.status,
      meta.absence,
      meta.revision,
      meta.nextId,
      encode(meta.document, 'Board document'),
      encode(meta.repairs, 'Board repairs'),
      meta.lastFinish === null ? null : encode(meta.lastFinish, 'Board finish pointers'),
      eventSeq,
      meta.updatedAt,
    ],
  );
  return { ...meta, boardKey, eventSeq, repairs: [...meta.repairs], lastFinish: meta.lastFinish === null ? null : [...meta.lastFinish] };
}

function lastBoardSeq(tx: Tx, boardKey: string): number {
  const row = tx.get('SELECT COALESCE(MAX(seq), 0) AS last FROM board_events WHERE board_key = ?', [boardKey]);
  const last = row?.last;
  if (typeof last !== 'number') throw storeFailed('Store column last is not a number');
  return last;
}

export function boardEventFromRow(row: Row): StoredBoardEvent {
  return {
    seq: numberColumn(row, 'seq'),
    verb: textColumn(row, 'verb'),
    payload: jsonColumn(row, 'payload_json'),
    at: textColumn(row, 'at'),
  };
}

const StoredMetaRow = MetaInput.extend({ boardKey: z.string(), eventSeq: z.number().int().nonnegative() });

export function boardMetaFromRow(row: Row): StoredBoardMeta {
  const candidate = {
    boardKey: row.board_key,
    sessionId: row.session_id,
    generationId: row.generation_id,
    patchsetId: row.patchset_id,
    lens: row.lens,
    status: row.status,
    absence: row.absence,
    revision: row.revision,
    nextId: row.next_id,
    document: jsonColumn(row, 'document_json'),
    repairs: jsonColumn(row, 'repairs_json'),
    lastFinish: row.last_finish_json === null ? null : jsonColumn(row, 'last_finish_json'),
    eventSeq: row.event_seq,
    updatedAt: row.updated_at,
  };
  const parsed = StoredMetaRow.safeParse(candidate);
  if (!parsed.success) throw storeFailed(`Board metadata ${String(row.board_key)} does not match its schema: ${parsed.error.message}`);
  return parsed.data;
}

/** Canonical order for listings: session, then scope, then Design…Noise. */
export function compareBoardMeta(a: StoredBoardMeta, b: StoredBoardMeta): number {
  const scope = (m: StoredBoardMeta) => m.generationId ?? m.patchsetId;
  return a.sessionId.localeCompare(b.sessionId) || scope(a).localeCompare(scope(b)) || LENSES.indexOf(a.lens) - LENSES.indexOf(b.lens);
}
