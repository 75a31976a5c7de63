import * as fs from 'node:fs';
import * as path from 'node:path';
import initSqlJs from 'sql.js';
import type { Database, SqlJsStatic, SqlValue } from 'sql.js';
import { StoreError, storeFailed } from './errors';
import { readFully, randomHex, removeStaleTemps, writeFileAtomic, writeFully } from './fsutil';
import { encodeHeader, encodeRecord, findValidFrameAfter, parseHeader, scanFrames, type JournalOp, type JournalRecord, type SqlParam } from './journal';
import { FileLock } from './lock';

/**
 * A sql.js database made durable by a journal + snapshot in one directory, shared safely by
 * several processes. Knows nothing about Rennet's tables: callers hand it transactions.
 * See README.md for the contract and the crash reasoning.
 */

export type { SqlParam } from './journal';
export type Row = Record<string, SqlValue>;

export interface Reader {
  all(sql: string, params?: readonly SqlParam[]): Row[];
  get(sql: string, params?: readonly SqlParam[]): Row | undefined;
}

export interface Tx extends Reader {
  /** Executes now and records the statement in this transaction's journal record. Must be deterministic. */
  run(sql: string, params?: readonly SqlParam[]): void;
}

/** Points in the write and compaction paths where a test may crash the process. */
export type DurableStep = 'before-journal-fsync' | 'snapshot-temp-written' | 'snapshot-renamed' | 'journal-temp-written' | 'journal-renamed';

export interface DurableOptions {
  /** Compact after this many journal records (default 1000). */
  compactEvery?: number;
  /** Compact once the journal reaches this many bytes (default 16 MiB). */
  compactBytes?: number;
  /** Location of sql-wasm.wasm (default: next to the running bundle, else from node_modules). */
  wasmPath?: string;
  /** How long to wait for another process's lock (default 10 s). */
  lockTimeoutMs?: number;
  /** Called after state written by another process (or found on open) was loaded; may throw to refuse it. */
  onExternalChange?: (reader: Reader) => void;
  /** A compaction after an acknowledged write failed; the write itself stands. */
  onCompactionError?: (error: unknown) => void;
  /** Test hook: called at each DurableStep (a crash test kills the process there). */
  onStep?: (step: DurableStep) => void;
}

export const SNAPSHOT_FILE = 'store.sqlite';
export const JOURNAL_FILE = 'journal.log';
export const LOCK_FILE = 'store.lock';

const META_TABLE = '_rennet_durable';
const CREATE_META = `CREATE TABLE ${META_TABLE} (key TEXT PRIMARY KEY, value INTEGER NOT NULL)`;
const SET_SEQ = `UPDATE ${META_TABLE} SET value = ? WHERE key = 'seq'`;
const GET_SEQ = `SELECT value FROM ${META_TABLE} WHERE key = 'seq'`;
/** Statements whose result depends on the clock or chance would replay differently. */
const NONDETERMINISTIC = /\brandom(?:blob)?\s*\(|'now'|\bcurrent_(?:timestamp|date|time)\b|\bchanges\s*\(|\blast_insert_rowid\s*\(/i;

const sqlJsByWasm = new Map<string, Promise<SqlJsStatic>>();

/** Not a literal, so a bundler leaves the lookup to run time (the bundle ships the file beside itself). */
const SQLJS_WASM_MODULE = ['sql.js', 'dist', 'sql-wasm.wasm'].join('/');

export function defaultWasmPath(): string {
  const beside = typeof __dirname === 'string' ? path.join(__dirname, 'sql-wasm.wasm') : undefined;
  if (beside && fs.existsSync(beside)) return beside;
  try {
    return require.resolve(SQLJS_WASM_MODULE);
  } catch (error) {
    throw storeFailed(`Could not find sql-wasm.wasm ${beside ? `next to the bundle (${beside}) or ` : ''}in node_modules; pass wasmPath`, error);
  }
}

function loadSqlJs(wasmPath: string): Promise<SqlJsStatic> {
  let pending = sqlJsByWasm.get(wasmPath);
  if (!pending) {
    pending = (async () => {
      const bytes = fs.readFileSync(wasmPath);
      const wasmBinary = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
      return initSqlJs({ wasmBinary });
    })();
    sqlJsByWasm.set(wasmPath, pending);
    pending.catch(() => sqlJsByWasm.delete(wasmPath));
  }
  return pending;
}

export class DurableDb {
  readonly snapshotPath: string;
  readonly journalPath: string;
  private readonly lock: FileLock;
  private readonly compactEvery: number;
  private readonly compactBytes: number;
  private db!: Database;
  /** Last transaction applied to `db`. */
  private seq = 0;
  /** Identity (gen) of the journal file we have read, and how far (bytes, header included). */
  private gen: string | null = null;
  private offset = 0;
  /** The journal's base seq and the seq of the last record we consumed from it. */
  private journalBase = 0;
  private journalSeq = 0;
  private closed = false;
  private inWrite = false;
  private inWriteTx = false;
  /** Set when onExternalChange refused what another process wrote; every later call throws it. */
  private refused: { error: unknown } | undefined;
  /** The last compaction failure after an acknowledged write, if any. */
  lastCompactionError: unknown;

  readonly reader: Reader = {
    all: (sql, params) => queryAll(this.db, sql, params),
    get: (sql, params) => queryAll(this.db, sql, params)[0],
  };

  private constructor(
    readonly dir: string,
    private readonly SQL: SqlJsStatic,
    private readonly opts: DurableOptions,
  ) {
    this.snapshotPath = path.join(dir, SNAPSHOT_FILE);
    this.journalPath = path.join(dir, JOURNAL_FILE);
    this.lock = new FileLock(path.join(dir, LOCK_FILE), opts.lockTimeoutMs);
    this.compactEvery = Math.max(1, opts.compactEvery ?? 1000);
    this.compactBytes = Math.max(1024, opts.compactBytes ?? 16 * 1024 * 1024);
  }

  static async open(dir: string, opts: DurableOptions = {}): Promise<DurableDb> {
    let SQL: SqlJsStatic;
    const wasmPath = opts.wasmPath ?? defaultWasmPath();
    try {
      SQL = await loadSqlJs(wasmPath);
    } catch (error) {
      throw storeFailed(`Could not load the SQLite engine from ${wasmPath}`, error);
    }
    try {
      fs.mkdirSync(dir, { recursive: true });
    } catch (error) {
      throw storeFailed(`Could not create the store directory ${dir}`, error);
    }
    const store = new DurableDb(dir, SQL, opts);
    store.lock.acquire();
    try {
      removeStaleTemps(dir);
      const snapshot = store.loadSnapshot();
      store.db = snapshot.db;
      store.seq = snapshot.seq;
      store.withJournal((fd) => store.catchUp(fd, true));
      store.checkExternalChange();
      if (store.shouldCompact()) store.compactQuietly();
    } catch (error) {
      store.closed = true;
      store.db?.close();
      throw error instanceof StoreError ? error : storeFailed(`Could not open the store at ${dir}`, error);
    } finally {
      store.lock.release();
    }
    return store;
  }

  /** Last applied transaction seq. */
  get lastSeq(): number {
    return this.seq;
  }

  /** For tests and diagnostics. */
  stats(): { seq: number; journalGen: string | null; journalBytes: number; journalRecords: number } {
    return { seq: this.seq, journalGen: this.gen, journalBytes: this.offset, journalRecords: this.journalSeq - this.journalBase };
  }

  /** Catches up with other processes (no lock), then runs `fn` against the current state. */
  read<T>(fn: (reader: Reader) => T): T {
    this.assertOpen();
    if (!this.inWrite) this.refresh();
    return fn(this.reader);
  }

  /**
   * Runs `fn` as one transaction under the cross-process lock, after catching up. If it ran any
   * statement, one journal record is appended and fsynced before this returns: returned = durable.
   * If `fn` throws, nothing is written and the in-memory database is rolled back.
   */
  write<T>(fn: (tx: Tx) => T): T {
    this.assertOpen();
    if (this.inWrite) throw new Error('DurableDb.write is not re-entrant');
    this.lock.acquire();
    this.inWrite = true;
    try {
      let appended = false;
      const result = this.withJournal((fd) => {
        this.catchUp(fd, true);
        const out = this.runTx(fd, fn);
        appended = out.appended;
        return out.result;
      });
      if (appended && this.shouldCompact()) this.compactQuietly();
      return result;
    } finally {
      this.inWrite = false;
      this.lock.release();
    }
  }

  /** Writes a snapshot now and starts a fresh journal. */
  compact(): void {
    this.assertOpen();
    this.lock.acquire();
    try {
      this.withJournal((fd) => this.catchUp(fd, true));
      this.compactLocked();
    } finally {
      this.lock.release();
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.db.close();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  // ---------------------------------------------------------------------------------------------

  private step(step: DurableStep): void {
    this.opts.onStep?.(step);
  }

  private assertOpen(): void {
    if (this.closed) throw storeFailed(`The store at ${this.dir} is closed`);
    if (this.refused) throw this.refused.error;
  }

  private refresh(): void {
    let fd: number;
    try {
      fd = fs.openSync(this.journalPath, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return; // replaced by rename: never absent for long
      throw storeFailed(`Could not read ${this.journalPath}`, error);
    }
    try {
      this.catchUp(fd, false);
    } finally {
      fs.closeSync(fd);
    }
  }

  /** Opens the journal read-write (creating it when absent); only under the lock. */
  private withJournal<T>(fn: (fd: number) => T): T {
    let fd: number;
    try {
      fd = fs.openSync(this.journalPath, 'r+');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw storeFailed(`Could not open ${this.journalPath}`, error);
      // A fresh store, or a journal someone deleted: start one at what the snapshot covers.
      const snapshot = this.loadSnapshot();
      if (snapshot.seq > this.seq) this.replaceDb(snapshot.db, snapshot.seq);
      else snapshot.db.close();
      writeFileAtomic(this.journalPath, encodeHeader(randomHex(8), this.seq));
      fd = fs.openSync(this.journalPath, 'r+');
    }
    try {
      return fn(fd);
    } finally {
      fs.closeSync(fd);
    }
  }

  /**
   * Applies journal records this process has not seen. `strict` (under the lock): a torn tail is
   * truncated away and damage followed by valid records is an error. Not strict (lock-free
   * reads): stop quietly at the first frame that is not whole — a writer may be mid-append.
   */
  private catchUp(fd: number, strict: boolean): void {
    const size = fs.fstatSync(fd).size;
    const header = parseHeader(readFully(fd, Math.min(size, 128), 0));
    if (typeof header === 'string') throw storeFailed(`${this.journalPath}: ${header}`);
    let changed = false;
    if (header.gen !== this.gen) {
      // Another process compacted (or this is our first look). Records up to `base` are only in the snapshot.
      if (header.base > this.seq) {
        const snapshot = this.loadSnapshot();
        this.replaceDb(snapshot.db, snapshot.seq);
        changed = true;
        if (header.base > this.seq) {
          throw storeFailed(
            `${this.journalPath} starts after transaction ${header.base} but ${this.snapshotPath} covers only ${this.seq}: ` + 'the snapshot is older than the journal (was a file replaced by hand?)',
          );
        }
      }
      this.gen = header.gen;
      this.offset = header.length;
      this.journalBase = header.base;
      this.journalSeq = header.base;
    }
    if (size < this.offset) {
      throw storeFailed(`${this.journalPath} shrank below records already read (${size} < ${this.offset} bytes)`);
    }
    if (size > this.offset) {
      const start = this.offset;
      const buf = readFully(fd, size - start, start);
      const { records, stop } = scanFrames(buf);
      for (const { record, end } of records) {
        if (record.seq !== this.journalSeq + 1) {
          throw storeFailed(`${this.journalPath} is corrupt: record ${record.seq} at byte ${start} follows record ${this.journalSeq}`);
        }
        if (record.seq > this.seq) {
          this.applyRecord(record);
          changed = true;
        }
        this.journalSeq = record.seq;
        this.offset = start + end;
      }
      if (strict && stop.kind !== 'end') {
        const at = start + stop.at;
        if (stop.kind === 'bad') {
          const next = findValidFrameAfter(buf, stop.at);
          if (next !== undefined) {
            throw storeFailed(
              `${this.journalPath} is corrupt at byte ${at} (${stop.reason}) and valid records follow at byte ${start + next}. ` +
                'Refusing to drop acknowledged data: move the store directory aside and report this.',
              undefined,
              { path: this.journalPath, offset: String(at) },
            );
          }
        }
        // A torn final append: it was never acknowledged (fsync had not returned). Cut it off.
        fs.ftruncateSync(fd, at);
        fs.fsyncSync(fd);
      }
    }
    if (changed && !this.inWriteTx) this.checkExternalChange();
  }

  /** Lets the owner refuse state written by someone else (a newer schema). A refusal sticks: we hold that state now. */
  private checkExternalChange(): void {
    try {
      this.opts.onExternalChange?.(this.reader);
    } catch (error) {
      this.refused = { error };
      throw error;
    }
  }

  private runTx<T>(fd: number, fn: (tx: Tx) => T): { result: T; appended: boolean } {
    const db = this.db;
    const ops: JournalOp[] = [];
    let sealed = false;
    const tx: Tx = {
      all: (sql, params) => queryAll(db, sql, params),
      get: (sql, params) => queryAll(db, sql, params)[0],
      run: (sql, params = []) => {
        if (sealed) throw new Error('transaction already finished');
        if (NONDETERMINISTIC.test(sql)) throw new Error(`non-deterministic SQL cannot be journaled: ${sql}`);
        for (const p of params) {
          if (typeof p === 'number' && !Number.isFinite(p)) throw new Error(`cannot journal a non-finite number in: ${sql}`);
        }
        db.run(sql, params as SqlValue[]);
        ops.push({ sql, params: [...params] });
      },
    };
    db.exec('BEGIN');
    let done = false;
    this.inWriteTx = true;
    try {
      let result: T;
      try {
        result = fn(tx);
      } catch (error) {
        if (error instanceof StoreError) throw error;
        throw storeFailed(`A write to the store at ${this.dir} failed`, error);
      } finally {
        sealed = true;
      }
      if (ops.length === 0) return { result, appended: false };
      const seq = this.seq + 1;
      db.run(SET_SEQ, [seq]);
      const frame = encodeRecord({ seq, ops });
      const size = fs.fstatSync(fd).size;
      if (size !== this.offset) {
        throw storeFailed(`${this.journalPath} changed under this process's lock (${size} bytes, expected ${this.offset}); another process may have broken the lock`);
      }
      try {
        writeFully(fd, frame, this.offset);
        this.step('before-journal-fsync');
        fs.fsyncSync(fd);
      } catch (error) {
        try {
          fs.ftruncateSync(fd, this.offset);
        } catch {
          // the next writer's catch-up truncates the torn tail instead
        }
        throw error instanceof StoreError ? error : storeFailed(`Could not write ${this.journalPath}`, error);
      }
      db.exec('COMMIT');
      done = true;
      this.seq = seq;
      this.journalSeq = seq;
      this.offset += frame.length;
      return { result, appended: true };
    } finally {
      this.inWriteTx = false;
      if (!done) {
        try {
          db.exec('ROLLBACK');
        } catch {
          // no transaction left to roll back
        }
      }
    }
  }

  private applyRecord(record: JournalRecord): void {
    const db = this.db;
    db.exec('BEGIN');
    try {
      for (const op of record.ops) db.run(op.sql, op.params);
      db.run(SET_SEQ, [record.seq]);
      db.exec('COMMIT');
    } catch (error) {
      try {
        db.exec('ROLLBACK');
      } catch {
        // nothing to roll back
      }
      throw storeFailed(`Replaying journal record ${record.seq} of ${this.journalPath} failed`, error);
    }
    this.seq = record.seq;
  }

  private shouldCompact(): boolean {
    return this.journalSeq - this.journalBase >= this.compactEvery || this.offset >= this.compactBytes;
  }

  private compactQuietly(): void {
    try {
      this.compactLocked();
    } catch (error) {
      this.lastCompactionError = error;
      this.opts.onCompactionError?.(error);
    }
  }

  /**
   * Under the lock, caught up. Order matters for crash safety:
   *  1. snapshot (which carries its own seq) → temp, fsync, rename over store.sqlite, fsync dir;
   *  2. new journal header (new gen, base = seq) → temp, fsync, rename over journal.log, fsync dir.
   * A crash before 1's rename leaves the old pair; between 1 and 2, the old journal's records are
   * all ≤ the snapshot's seq or contiguous after it, and replay skips by seq.
   */
  private compactLocked(): void {
    const bytes = this.db.export();
    writeFileAtomic(this.snapshotPath, bytes, () => this.step('snapshot-temp-written'));
    this.step('snapshot-renamed');
    const gen = randomHex(8);
    const header = encodeHeader(gen, this.seq);
    writeFileAtomic(this.journalPath, header, () => this.step('journal-temp-written'));
    this.step('journal-renamed');
    this.gen = gen;
    this.offset = header.length;
    this.journalBase = this.seq;
    this.journalSeq = this.seq;
    this.lastCompactionError = undefined;
  }

  private loadSnapshot(): { db: Database; seq: number } {
    let bytes: Buffer | undefined;
    try {
      bytes = fs.readFileSync(this.snapshotPath);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw storeFailed(`Could not read ${this.snapshotPath}`, error);
    }
    let db: Database | undefined;
    try {
      db = bytes ? new this.SQL.Database(bytes) : new this.SQL.Database();
      if (!bytes) {
        db.run(CREATE_META);
        db.run(`INSERT INTO ${META_TABLE} (key, value) VALUES ('seq', 0)`);
      }
      const value = queryAll(db, GET_SEQ)[0]?.value;
      if (typeof value !== 'number') throw new Error(`no ${META_TABLE} seq`);
      return { db, seq: value };
    } catch (error) {
      db?.close();
      throw storeFailed(`${this.snapshotPath} is not a readable Rennet store`, error, { path: this.snapshotPath });
    }
  }

  private replaceDb(db: Database, seq: number): void {
    this.db?.close();
    this.db = db;
    this.seq = seq;
  }
}

function queryAll(db: Database, sql: string, params: readonly SqlParam[] = []): Row[] {
  const stmt = db.prepare(sql);
  try {
    if (params.length > 0) stmt.bind(params as SqlValue[]);
    const rows: Row[] = [];
    while (stmt.step()) rows.push(stmt.getAsObject());
    return rows;
  } finally {
    stmt.free();
  }
}
