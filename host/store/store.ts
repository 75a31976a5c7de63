import * as fs from 'node:fs';
import * as path from 'node:path';
import { Patchset, Target, targetKey, type Session } from '../../protocol';
import { DurableDb, type DurableOptions, type Reader, type Row } from './durable-db';
import { numberColumn, textColumn } from './columns';
import { StoreError, describeError, storeFailed } from './errors';
import { fsyncDir, randomHex, removeStaleTemps, tempPathFor, writeFully } from './fsutil';
import { patchsetJsonChunks } from './patchsetJson';
import { SCHEMA_VERSION, assertSupportedSchema, migrate } from './migrations';
import {
  appendBoardEventsTx,
  boardEventFromRow,
  boardKeyOf,
  boardMetaFromRow,
  compareBoardMeta,
  putBoardMetaTx,
  type BoardEventInput,
  type BoardMetaInput,
  type StoredBoardEvent,
  type StoredBoardMeta,
} from './boards';
import {
  clearLaneTx,
  createGenerationTx,
  freezeGenerationTx,
  getGeneration,
  listGenerations,
  listLaneOutcomes,
  putGenerationRecordsTx,
  putLaneOutcomeTx,
  type GenerationInput,
  type LaneOutcomeInput,
  type StoredGeneration,
  type StoredLaneOutcome,
} from './generations';
import type { Lens } from '../../protocol/board';
import type { PhaseTiming, SeatSpend } from '../../protocol/review';

export interface StoreOptions {
  /** Compact (snapshot + fresh journal) after this many journal records. Default 1000. */
  compactEvery?: number;
  /** …or once the journal reaches this many bytes. Default 16 MiB. */
  compactBytes?: number;
  /** sql-wasm.wasm location; default: next to the running bundle, else node_modules. */
  wasmPath?: string;
  /** How long to wait for another process holding the store lock. Default 10 s. */
  lockTimeoutMs?: number;
  /** A compaction after an acknowledged write failed (the write stands; compaction is retried later). */
  onCompactionError?: (error: unknown) => void;
  /** Test hook (crash injection); see DurableStep. */
  onStep?: NonNullable<DurableOptions['onStep']>;
}

/** What a patchset's row records besides its body's size (Store.beginPatchsetBody). */
export interface PatchsetRowInput {
  id: string;
  base: string;
  head: string;
  baseRef: string;
  headRef: string;
  targetKind: Patchset['targetKind'];
  fileCount: number;
  hunkCount: number;
}

/** A patchset body being stored (Store.beginPatchset). */
export interface PatchsetBodyWriter {
  /** Appends the next chunk of `patchsetJsonChunks(patchset)` (a string, or its UTF-8); written, not yet durable. */
  write(chunk: string | Uint8Array): void;
  /** fsyncs the body, renames it into place and journals its row: durable on return. */
  commit(): { created: boolean };
  /** Drops the body written so far; nothing is stored. */
  abort(): void;
}

export interface StoredEvent {
  seq: number;
  kind: string;
  payload: unknown;
  at: string;
}

export interface SessionInput {
  repoRoot: string;
  target: Target;
  now: string;
}

const PATCHSET_DIR = 'patchsets';
const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * Rennet's durable store: sessions, patchset metadata and per-session event logs in sql.js,
 * made durable by DurableDb; patchset bodies as content-addressed files. Every method is
 * synchronous after `open`; a write that returns is on disk (README.md).
 */
export class Store {
  private constructor(
    private readonly durable: DurableDb,
    readonly dir: string,
    readonly schemaVersion: number,
  ) {}

  static async open(dir: string, opts: StoreOptions = {}): Promise<Store> {
    const resolved = path.resolve(dir);
    const durable = await DurableDb.open(resolved, {
      ...opts,
      onExternalChange: (reader) => assertSupportedSchema(reader, resolved, SCHEMA_VERSION),
    });
    try {
      const patchsets = path.join(resolved, PATCHSET_DIR);
      fs.mkdirSync(patchsets, { recursive: true });
      removeStaleTemps(patchsets);
      const { to } = migrate(durable);
      return new Store(durable, resolved, to);
    } catch (error) {
      durable.close();
      throw error instanceof StoreError ? error : storeFailed(`Could not open the store at ${resolved}`, error);
    }
  }

  // --- patchsets --------------------------------------------------------------------------------

  /**
   * Stores a captured patchset: its body as `patchsets/<id>.json` (durable before the row that
   * names it is journaled), its metadata as a row. Content-addressed: a second put of a known id
   * writes nothing at all.
   */
  putPatchset(patchset: Patchset): { created: boolean } {
    const body = this.beginPatchset(patchset);
    if (!body) return { created: false };
    try {
      for (const chunk of patchsetJsonChunks(patchset)) body.write(chunk);
    } catch (error) {
      body.abort();
      throw error;
    }
    return body.commit();
  }

  /**
   * putPatchset in steps, for a caller that hands the same body elsewhere while it is stored
   * (`rennet capture --json` prints it): the caller writes `patchsetJsonChunks(patchset)` through
   * the writer, then `commit()` makes the body durable and journals its row. null when the store
   * already holds the id (nothing to write). The body goes to a temp file of this process; until
   * commit or abort, no other Store of this process may open the directory (its stale-temp sweep
   * counts this process's temps as leftovers).
   */
  beginPatchset(patchset: Patchset): PatchsetBodyWriter | null {
    return this.beginPatchsetBody({
      id: patchset.id,
      base: patchset.base,
      head: patchset.head,
      baseRef: patchset.baseRef,
      headRef: patchset.headRef,
      targetKind: patchset.targetKind,
      fileCount: patchset.files.length,
      hunkCount: patchset.files.reduce((n, f) => n + f.hunks.length, 0),
    });
  }

  /**
   * beginPatchset from what the row records, for a caller that never holds the whole patchset
   * (`rennet capture --json` reads its body back from a spool, host/capture/spool.ts). The caller
   * writes exactly `JSON.stringify` of the patchset the row describes.
   */
  beginPatchsetBody(row: PatchsetRowInput): PatchsetBodyWriter | null {
    const id = checkId(row.id, 'patchset');
    if (this.hasPatchset(id)) return null;
    const file = this.patchsetPath(id);
    const tmp = tempPathFor(file);
    let fd: number | null;
    try {
      fd = fs.openSync(tmp, 'w', 0o644);
    } catch (error) {
      throw storeFailed(`Could not write patchset ${id} to ${tmp}`, error, { patchsetId: id });
    }
    let bytes = 0;
    const dropTemp = () => {
      if (fd !== null) {
        try {
          fs.closeSync(fd);
        } catch {
          // closing is all that is left to do with it
        }
        fd = null;
      }
      fs.rmSync(tmp, { force: true });
    };
    const fail = (error: unknown): never => {
      dropTemp();
      throw error instanceof StoreError ? error : storeFailed(`Could not write patchset ${id} to ${tmp}`, error, { patchsetId: id });
    };
    return {
      write: (chunk) => {
        if (fd === null) throw storeFailed(`Patchset ${id}'s body is already committed or aborted`, undefined, { patchsetId: id });
        try {
          const data = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
          writeFully(fd, data, null);
          bytes += data.length;
        } catch (error) {
          fail(error);
        }
      },
      commit: () => {
        if (fd === null) throw storeFailed(`Patchset ${id}'s body is already committed or aborted`, undefined, { patchsetId: id });
        try {
          fs.fsyncSync(fd);
          fs.closeSync(fd);
          fd = null;
        } catch (error) {
          fail(error);
        }
        const createdAt = new Date().toISOString();
        try {
          return this.durable.write((tx) => {
            if (tx.get('SELECT 1 AS x FROM patchsets WHERE id = ?', [id])) {
              dropTemp();
              return { created: false };
            }
            // A file without a row is left from a crash between the two steps; it is complete (atomic rename).
            if (sameSize(file, bytes)) {
              dropTemp();
            } else {
              fs.renameSync(tmp, file);
              fsyncDir(path.dirname(file));
            }
            tx.run(
              `INSERT INTO patchsets (id, base, head, base_ref, head_ref, target_kind, created_at, file_count, hunk_count, byte_size)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
              [id, row.base, row.head, row.baseRef, row.headRef, row.targetKind, createdAt, row.fileCount, row.hunkCount, bytes],
            );
            return { created: true };
          });
        } catch (error) {
          return fail(error);
        }
      },
      abort: dropTemp,
    };
  }

  hasPatchset(id: string): boolean {
    return this.durable.read((r) => r.get('SELECT 1 AS x FROM patchsets WHERE id = ?', [id]) !== undefined);
  }

  /** The patchset, read from its file and validated; undefined when the store does not hold it. */
  getPatchset(id: string): Patchset | undefined {
    if (!this.hasPatchset(id)) return undefined;
    const file = this.patchsetPath(checkId(id, 'patchset'));
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (error) {
      throw storeFailed(`Patchset ${id} is recorded in the store but its file ${file} cannot be read`, error, { patchsetId: id });
    }
    let parsed: ReturnType<typeof Patchset.safeParse>;
    try {
      parsed = Patchset.safeParse(JSON.parse(text));
    } catch (error) {
      throw storeFailed(`Patchset file ${file} is not valid JSON`, error, { patchsetId: id });
    }
    if (!parsed.success) {
      throw storeFailed(`Patchset file ${file} does not match the Patchset schema: ${parsed.error.message}`, undefined, { patchsetId: id });
    }
    if (parsed.data.id !== id) throw storeFailed(`Patchset file ${file} holds ${parsed.data.id}, not ${id}`, undefined, { patchsetId: id });
    return parsed.data;
  }

  // --- sessions ---------------------------------------------------------------------------------

  findSession(repoRoot: string, key: string): Session | undefined {
    return this.durable.read((r) => {
      const row = r.get('SELECT * FROM sessions WHERE repo_root = ? AND target_key = ?', [repoRoot, key]);
      return row ? sessionFromRow(r, row) : undefined;
    });
  }

  /** Creates the session for (repoRoot, target); refuses ('invalid-request') when one exists. */
  createSession(input: SessionInput): Session {
    const { session, created } = this.getOrCreateSession(input);
    if (!created) {
      throw new StoreError('invalid-request', `A session for ${session.targetKey} in ${session.repoRoot} already exists (${session.id})`, { sessionId: session.id });
    }
    return session;
  }

  getOrCreateSession(input: SessionInput): { session: Session; created: boolean } {
    const target = parseTarget(input.target);
    const key = targetKey(target);
    return this.durable.write((tx) => {
      const existing = tx.get('SELECT * FROM sessions WHERE repo_root = ? AND target_key = ?', [input.repoRoot, key]);
      if (existing) return { session: sessionFromRow(tx, existing), created: false };
      const session: Session = {
        id: `s-${randomHex(8)}`,
        repoRoot: input.repoRoot,
        targetKey: key,
        target,
        createdAt: input.now,
        updatedAt: input.now,
        activePatchsetId: null,
        patchsetIds: [],
      };
      tx.run(
        `INSERT INTO sessions (id, repo_root, target_key, target_json, created_at, updated_at, active_patchset_id)
         VALUES (?, ?, ?, ?, ?, ?, NULL)`,
        [session.id, session.repoRoot, key, JSON.stringify(target), input.now, input.now],
      );
      return { session, created: true };
    });
  }

  getSession(id: string): Session | undefined {
    return this.durable.read((r) => {
      const row = r.get('SELECT * FROM sessions WHERE id = ?', [id]);
      return row ? sessionFromRow(r, row) : undefined;
    });
  }

  /** Every session, most recently updated first. */
  listSessions(): Session[] {
    return this.durable.read((r) => {
      const byId = new Map<string, string[]>();
      for (const link of r.all('SELECT session_id, patchset_id FROM session_patchsets ORDER BY session_id, ord')) {
        const sid = textColumn(link, 'session_id');
        const list = byId.get(sid) ?? [];
        list.push(textColumn(link, 'patchset_id'));
        byId.set(sid, list);
      }
      return r.all('SELECT * FROM sessions ORDER BY updated_at DESC, created_at DESC, id').map((row) => toSession(row, byId.get(textColumn(row, 'id')) ?? []));
    });
  }

  /** Adds the patchset to the session's list (if new), makes it active and sets updatedAt = now. */
  attachPatchset(sessionId: string, patchsetId: string, now: string): Session {
    return this.durable.write((tx) => {
      if (!tx.get('SELECT 1 AS x FROM sessions WHERE id = ?', [sessionId])) throw notFound('session', sessionId);
      if (!tx.get('SELECT 1 AS x FROM patchsets WHERE id = ?', [patchsetId])) throw notFound('patchset', patchsetId);
      if (!tx.get('SELECT 1 AS x FROM session_patchsets WHERE session_id = ? AND patchset_id = ?', [sessionId, patchsetId])) {
        const next = numberColumn(tx.get('SELECT COALESCE(MAX(ord), 0) + 1 AS next FROM session_patchsets WHERE session_id = ?', [sessionId]) ?? {}, 'next');
        tx.run('INSERT INTO session_patchsets (session_id, ord, patchset_id, attached_at) VALUES (?, ?, ?, ?)', [sessionId, next, patchsetId, now]);
      }
      tx.run('UPDATE sessions SET active_patchset_id = ?, updated_at = ? WHERE id = ?', [patchsetId, now, sessionId]);
      const row = tx.get('SELECT * FROM sessions WHERE id = ?', [sessionId]);
      if (!row) throw notFound('session', sessionId);
      return sessionFromRow(tx, row);
    });
  }

  // --- events -----------------------------------------------------------------------------------

  /** Appends to the session's log; seq is per session, from 1, without gaps. Durable when it returns. */
  appendEvent(sessionId: string, kind: string, payload: unknown, now: string): { seq: number } {
    const { firstSeq } = this.appendEvents(sessionId, [{ kind, payload }], now);
    return { seq: firstSeq };
  }

  /** Appends several events in one transaction (one journal record, one fsync). */
  appendEvents(sessionId: string, events: ReadonlyArray<{ kind: string; payload: unknown }>, now: string): { firstSeq: number; lastSeq: number } {
    const encoded = events.map((e) => ({ kind: e.kind, json: encodePayload(e.payload) }));
    return this.durable.write((tx) => {
      if (!tx.get('SELECT 1 AS x FROM sessions WHERE id = ?', [sessionId])) throw notFound('session', sessionId);
      const last = numberColumn(tx.get('SELECT COALESCE(MAX(seq), 0) AS last FROM events WHERE session_id = ?', [sessionId]) ?? {}, 'last');
      let seq = last;
      for (const e of encoded) {
        seq += 1;
        tx.run('INSERT INTO events (session_id, seq, kind, payload_json, at) VALUES (?, ?, ?, ?, ?)', [sessionId, seq, e.kind, e.json, now]);
      }
      return { firstSeq: last + 1, lastSeq: seq };
    });
  }

  readEvents(sessionId: string, afterSeq = 0): StoredEvent[] {
    return this.durable.read((r) =>
      r
        .all('SELECT seq, kind, payload_json, at FROM events WHERE session_id = ? AND seq > ? ORDER BY seq', [sessionId, afterSeq])
        .map((row) => ({ seq: numberColumn(row, 'seq'), kind: textColumn(row, 'kind'), payload: JSON.parse(textColumn(row, 'payload_json')) as unknown, at: textColumn(row, 'at') })),
    );
  }

  countEvents(sessionId?: string): number {
    return this.durable.read((r) =>
      numberColumn((sessionId === undefined ? r.get('SELECT COUNT(*) AS n FROM events') : r.get('SELECT COUNT(*) AS n FROM events WHERE session_id = ?', [sessionId])) ?? {}, 'n'),
    );
  }

  // --- boards (boards.ts: key design, the two tables, and how the halves stay consistent) -------

  /** Appends to a board's element event log; seq is per board, from 1, without gaps. Durable when it returns. */
  appendBoardEvents(boardKey: string, events: readonly BoardEventInput[], now: string): { firstSeq: number; lastSeq: number } {
    return this.durable.write((tx) => appendBoardEventsTx(tx, boardKey, events, now));
  }

  /** A board's events in seq order: after `afterSeq`, up to `uptoSeq` (inclusive) when given. */
  readBoardEvents(boardKey: string, afterSeq = 0, uptoSeq?: number): StoredBoardEvent[] {
    return this.durable.read((r) =>
      r
        .all('SELECT seq, verb, payload_json, at FROM board_events WHERE board_key = ? AND seq > ? AND seq <= ? ORDER BY seq', [boardKey, afterSeq, uptoSeq ?? Number.MAX_SAFE_INTEGER])
        .map(boardEventFromRow),
    );
  }

  /**
   * Inserts or replaces a board's envelope; the key is derived from its parts (boardKeyOf) and the
   * row records the board's last event seq. 'not-found' for an unknown session.
   */
  putBoardMeta(meta: BoardMetaInput): StoredBoardMeta {
    return this.durable.write((tx) => putBoardMetaTx(tx, meta));
  }

  /** Appends a write's events and the envelope after it in one transaction (one journal record). */
  commitBoardWrite(meta: BoardMetaInput, events: readonly BoardEventInput[]): { firstSeq: number; lastSeq: number; meta: StoredBoardMeta } {
    const boardKey = boardKeyOf(meta);
    return this.durable.write((tx) => {
      const { firstSeq, lastSeq } = appendBoardEventsTx(tx, boardKey, events, meta.updatedAt);
      return { firstSeq, lastSeq, meta: putBoardMetaTx(tx, meta) };
    });
  }

  getBoardMeta(boardKey: string): StoredBoardMeta | undefined {
    return this.durable.read((r) => {
      const row = r.get('SELECT * FROM board_meta WHERE board_key = ?', [boardKey]);
      return row ? boardMetaFromRow(row) : undefined;
    });
  }

  /** Every board's envelope (of one session, when given): by session, generation or patchset, then lens order. */
  listBoardMeta(sessionId?: string): StoredBoardMeta[] {
    return this.durable.read((r) =>
      (sessionId === undefined ? r.all('SELECT * FROM board_meta') : r.all('SELECT * FROM board_meta WHERE session_id = ?', [sessionId])).map(boardMetaFromRow).sort(compareBoardMeta),
    );
  }

  // --- generations (generations.ts: append-then-freeze, lane outcomes, timings and spend) -------

  /** Files a new live generation and freezes every other live generation of its session (one transaction). */
  createGeneration(input: GenerationInput): StoredGeneration {
    return this.durable.write((tx) => createGenerationTx(tx, input));
  }

  getGeneration(id: string): StoredGeneration | undefined {
    return this.durable.read((r) => getGeneration(r, id));
  }

  /** A session's generations, oldest first. */
  listGenerations(sessionId: string): StoredGeneration[] {
    return this.durable.read((r) => listGenerations(r, sessionId));
  }

  /** Freezes a generation (idempotent). Nothing rewrites it afterwards. */
  freezeGeneration(id: string, now: string): StoredGeneration {
    return this.durable.write((tx) => freezeGenerationTx(tx, id, now));
  }

  /** A lane's settlement, durable when it returns; refused on a frozen generation or an inadmissible absence. */
  putLaneOutcome(input: LaneOutcomeInput): StoredLaneOutcome {
    return this.durable.write((tx) => putLaneOutcomeTx(tx, input));
  }

  listLaneOutcomes(generationId: string): StoredLaneOutcome[] {
    return this.durable.read((r) => listLaneOutcomes(r, generationId));
  }

  /** Replaces a live generation's per-phase timings and per-turn spend. */
  putGenerationRecords(id: string, records: { timings: readonly PhaseTiming[]; spend: readonly SeatSpend[] }, now: string): void {
    this.durable.write((tx) => putGenerationRecordsTx(tx, id, records, now));
  }

  /**
   * First step of redrafting a lane: removes its board metadata and its outcome in one
   * transaction (metadata first; the caller then opens a fresh attempt on the element log).
   * Returns the revision floor the next attempt must open above.
   */
  clearLane(generationId: string, lens: Lens, boardKey: string, now: string): number {
    return this.durable.write((tx) => clearLaneTx(tx, generationId, lens, boardKey, now));
  }

  // --- maintenance ------------------------------------------------------------------------------

  /** Snapshot now and start a fresh journal (normally automatic). */
  compact(): void {
    this.durable.compact();
  }

  /** Diagnostics: last transaction seq and the journal's size. */
  stats(): { seq: number; journalBytes: number; journalRecords: number } {
    const { seq, journalBytes, journalRecords } = this.durable.stats();
    return { seq, journalBytes, journalRecords };
  }

  close(): void {
    this.durable.close();
  }

  private patchsetPath(id: string): string {
    return path.join(this.dir, PATCHSET_DIR, `${id}.json`);
  }
}

function checkId(id: string, what: string): string {
  if (!SAFE_ID.test(id)) throw new StoreError('invalid-request', `Refusing ${what} id ${JSON.stringify(id)}: not a safe file name`);
  return id;
}

function sameSize(file: string, size: number): boolean {
  try {
    return fs.statSync(file).size === size;
  } catch {
    return false;
  }
}

function parseTarget(target: Target): Target {
  const parsed = Target.safeParse(target);
  if (!parsed.success) throw new StoreError('invalid-request', `Invalid review target: ${parsed.error.message}`);
  return parsed.data;
}

function encodePayload(payload: unknown): string {
  try {
    return JSON.stringify(payload) ?? 'null';
  } catch (error) {
    throw new StoreError('invalid-request', `Event payload cannot be stored as JSON: ${describeError(error)}`);
  }
}

function notFound(what: string, id: string): StoreError {
  return new StoreError('not-found', `No ${what} ${id} in the store`, { [`${what}Id`]: id });
}

function sessionFromRow(r: Reader, row: Row): Session {
  const ids = r.all('SELECT patchset_id FROM session_patchsets WHERE session_id = ? ORDER BY ord', [textColumn(row, 'id')]).map((link) => textColumn(link, 'patchset_id'));
  return toSession(row, ids);
}

function toSession(row: Row, patchsetIds: string[]): Session {
  const active = row.active_patchset_id;
  return {
    id: textColumn(row, 'id'),
    repoRoot: textColumn(row, 'repo_root'),
    targetKey: textColumn(row, 'target_key'),
    target: Target.parse(JSON.parse(textColumn(row, 'target_json'))),
    createdAt: textColumn(row, 'created_at'),
    updatedAt: textColumn(row, 'updated_at'),
    activePatchsetId: typeof active === 'string' ? active : null,
    patchsetIds,
  };
}
