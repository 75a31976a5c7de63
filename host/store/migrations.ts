import type { DurableDb, Reader, Tx } from './durable-db';
import { StoreError } from './errors';

/**
 * The domain schema, as an ordered list of migrations. A migration's statements are journaled
 * like any write, so they must be deterministic. Never edit a released migration; append one.
 * The version lives in SQLite's `PRAGMA user_version`, inside the snapshot, so it moves
 * atomically with the tables it describes.
 */
export interface Migration {
  version: number;
  description: string;
  up(tx: Tx): void;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'sessions, patchset metadata, session patchsets, events',
    up(tx) {
      tx.run(`CREATE TABLE sessions (
        id TEXT PRIMARY KEY NOT NULL,
        repo_root TEXT NOT NULL,
        target_key TEXT NOT NULL,
        target_json TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        active_patchset_id TEXT,
        UNIQUE (repo_root, target_key)
      )`);
      tx.run('CREATE INDEX sessions_by_updated ON sessions (updated_at DESC, created_at DESC)');
      tx.run(`CREATE TABLE patchsets (
        id TEXT PRIMARY KEY NOT NULL,
        base TEXT NOT NULL,
        head TEXT NOT NULL,
        base_ref TEXT NOT NULL,
        head_ref TEXT NOT NULL,
        target_kind TEXT NOT NULL,
        created_at TEXT NOT NULL,
        file_count INTEGER NOT NULL,
        hunk_count INTEGER NOT NULL,
        byte_size INTEGER NOT NULL
      )`);
      tx.run(`CREATE TABLE session_patchsets (
        session_id TEXT NOT NULL REFERENCES sessions (id),
        ord INTEGER NOT NULL,
        patchset_id TEXT NOT NULL REFERENCES patchsets (id),
        attached_at TEXT NOT NULL,
        PRIMARY KEY (session_id, ord),
        UNIQUE (session_id, patchset_id)
      ) WITHOUT ROWID`);
      tx.run(`CREATE TABLE events (
        session_id TEXT NOT NULL REFERENCES sessions (id),
        seq INTEGER NOT NULL,
        kind TEXT NOT NULL,
        payload_json TEXT NOT NULL,
        at TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
      ) WITHOUT ROWID`);
    },
  },
  {
    version: 2,
    description: 'lens boards: per-board element event log and board metadata',
    up(tx) {
      // A board is keyed by `<sessionId>/<generationId or patchsetId>/<lens>` (host/store/boards.ts).
      // Its elements are an append-only log; its envelope is one row, rewritten per accepted write.
      tx.run(`CREATE TABLE board_events (
        board_key TEXT NOT NULL,
        seq INTEGER NOT NULL,
        verb TEXT NOT NULL,
        payload_json TEXT NOT NULL,
        at TEXT NOT NULL,
        PRIMARY KEY (board_key, seq)
      ) WITHOUT ROWID`);
      tx.run(`CREATE TABLE board_meta (
        board_key TEXT PRIMARY KEY NOT NULL,
        session_id TEXT NOT NULL REFERENCES sessions (id),
        generation_id TEXT,
        patchset_id TEXT NOT NULL,
        lens TEXT NOT NULL,
        status TEXT NOT NULL,
        absence TEXT,
        revision INTEGER NOT NULL,
        next_id INTEGER NOT NULL,
        document_json TEXT NOT NULL,
        repairs_json TEXT NOT NULL,
        last_finish_json TEXT,
        event_seq INTEGER NOT NULL,
        updated_at TEXT NOT NULL
      )`);
      tx.run('CREATE INDEX board_meta_by_session ON board_meta (session_id, board_key)');
    },
  },
  {
    version: 3,
    description: 'generations (live or frozen, with timings and spend) and their lane outcomes',
    up(tx) {
      // host/store/generations.ts: one live generation per session; creating one freezes the rest.
      tx.run(`CREATE TABLE generations (
        id TEXT PRIMARY KEY NOT NULL,
        session_id TEXT NOT NULL REFERENCES sessions (id),
        patchset_id TEXT NOT NULL REFERENCES patchsets (id),
        status TEXT NOT NULL,
        created_at TEXT NOT NULL,
        frozen_at TEXT,
        updated_at TEXT NOT NULL,
        timings_json TEXT NOT NULL,
        spend_json TEXT NOT NULL,
        revision_floors_json TEXT NOT NULL
      )`);
      tx.run('CREATE INDEX generations_by_session ON generations (session_id, created_at)');
      tx.run(`CREATE TABLE lane_outcomes (
        generation_id TEXT NOT NULL REFERENCES generations (id),
        lens TEXT NOT NULL,
        state TEXT NOT NULL,
        absence TEXT,
        failure_json TEXT,
        attempts INTEGER NOT NULL,
        settled_at TEXT NOT NULL,
        PRIMARY KEY (generation_id, lens)
      ) WITHOUT ROWID`);
    },
  },
];

export const SCHEMA_VERSION = latestVersion(MIGRATIONS);

export function latestVersion(migrations: readonly Migration[]): number {
  return migrations.length === 0 ? 0 : (migrations[migrations.length - 1] as Migration).version;
}

export function readSchemaVersion(reader: Reader): number {
  const value = reader.get('PRAGMA user_version')?.user_version;
  return typeof value === 'number' ? value : 0;
}

export function newerSchemaError(dir: string, found: number, supported: number): StoreError {
  return new StoreError(
    'store-failed',
    `The Rennet store at ${dir} has schema version ${found}, but this Rennet understands up to version ${supported}. ` +
      'It was written by a newer Rennet: update Rennet (or point it at another data directory).',
    { dir, schemaVersion: String(found), supportedVersion: String(supported) },
  );
}

/** Throws a StoreError when the loaded state was written by a newer schema. */
export function assertSupportedSchema(reader: Reader, dir: string, supported = SCHEMA_VERSION): void {
  const found = readSchemaVersion(reader);
  if (found > supported) throw newerSchemaError(dir, found, supported);
}

/**
 * Brings the store up to the latest version in one journaled transaction (all pending
 * migrations or none). Safe when several processes open the same directory: it runs under the
 * store's lock after catching up, so the second process finds nothing to do.
 */
export function migrate(durable: DurableDb, migrations: readonly Migration[] = MIGRATIONS): { from: number; to: number } {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`migration ${i} has version ${m.version}; versions must be 1, 2, 3, …`);
  });
  const latest = latestVersion(migrations);
  return durable.write((tx) => {
    const from = readSchemaVersion(tx);
    if (from > latest) throw newerSchemaError(durable.dir, from, latest);
    for (const m of migrations) {
      if (m.version <= from) continue;
      m.up(tx);
      // A literal, not a bound parameter: PRAGMA takes none. Deterministic either way.
      tx.run(`PRAGMA user_version = ${m.version}`);
    }
    return { from, to: latest };
  });
}
