import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Store, StoreError } from '../../../host/store';
import { DurableDb, JOURNAL_FILE, SNAPSHOT_FILE, type DurableStep } from '../../../host/store/durable-db';
import { encodeRecord, findValidFrameAfter, readFrame, scanFrames } from '../../../host/store/journal';
import { MIGRATIONS, migrate, readSchemaVersion, type Migration } from '../../../host/store/migrations';
import { WASM_PATH, fileSize, tempDirs } from './helpers';

const NOW = '2025-01-01T00:00:00.000Z';
const target = { kind: 'branch' as const, head: 'feature', base: 'main' };

function storeError(pattern: RegExp) {
  return (error: unknown) => {
    assert.ok(error instanceof StoreError, `expected a StoreError, got ${String(error)}`);
    assert.equal(error.code, 'store-failed');
    assert.match(error.message, pattern);
    return true;
  };
}

/** A pid that certainly belongs to no running process. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(r.stdout);
}

async function seeded(dir: string, events: number, opts: { compactEvery?: number } = {}) {
  const store = await Store.open(dir, { wasmPath: WASM_PATH, compactEvery: opts.compactEvery ?? 10_000 });
  const { session } = store.getOrCreateSession({ repoRoot: '/repo', target, now: NOW });
  for (let i = 0; i < events; i++) store.appendEvent(session.id, 'ask', { i }, NOW);
  return { store, sessionId: session.id };
}

describe('store: journal format', () => {
  it('frames round-trip, and a flipped byte or a short read is detected', () => {
    const frame = encodeRecord({ seq: 7, ops: [{ sql: 'INSERT INTO t VALUES (?, ?)', params: ['a\nb', 1.5] }] });
    const ok = readFrame(frame, 0);
    assert.equal(ok.kind, 'ok');
    assert.deepEqual(ok.kind === 'ok' && ok.record, { seq: 7, ops: [{ sql: 'INSERT INTO t VALUES (?, ?)', params: ['a\nb', 1.5] }] });
    assert.equal(readFrame(frame.subarray(0, frame.length - 1), 0).kind, 'incomplete');
    assert.equal(readFrame(frame.subarray(0, 3), 0).kind, 'incomplete');
    const flipped = Buffer.from(frame);
    flipped[frame.length - 5] = (flipped[frame.length - 5] as number) ^ 0x01;
    assert.deepEqual(readFrame(flipped, 0), { kind: 'bad', reason: 'checksum mismatch' });
    const two = Buffer.concat([flipped, frame]);
    const scan = scanFrames(two);
    assert.equal(scan.records.length, 0);
    assert.equal(scan.stop.kind, 'bad');
    assert.equal(findValidFrameAfter(two, 0), frame.length);
  });
});

describe('store: crash recovery and refusals', function () {
  this.timeout(20_000);
  const dirs = tempDirs();
  after(() => dirs.cleanup());

  for (const [name, damage] of [
    ['half of a real record', (whole: Buffer) => whole.subarray(0, Math.floor(whole.length / 2))],
    ['a record missing only its final newline', (whole: Buffer) => whole.subarray(0, whole.length - 1)],
    ['a partial frame header', () => Buffer.from('12')],
    ['zero-filled blocks (size extended, data never written)', () => Buffer.alloc(4096)],
    ['a whole frame whose checksum fails', (whole: Buffer) => Buffer.from(whole).fill(0x41, whole.length - 10, whole.length - 2)],
  ] as const) {
    it(`discards a torn final record (${name}) and truncates the journal to the last good record`, async () => {
      const dir = dirs.make();
      const { store, sessionId } = await seeded(dir, 5);
      const journal = path.join(dir, JOURNAL_FILE);
      const good = fileSize(journal);
      store.appendEvent(sessionId, 'ask', { i: 5 }, NOW);
      const whole = fs.readFileSync(journal).subarray(good);
      store.close();
      fs.truncateSync(journal, good);
      fs.appendFileSync(journal, damage(Buffer.from(whole)));

      const again = await Store.open(dir, { wasmPath: WASM_PATH });
      try {
        assert.equal(fileSize(journal), good, 'truncated back to the last good record');
        assert.deepEqual(
          again.readEvents(sessionId).map((e) => e.seq),
          [1, 2, 3, 4, 5],
        );
        assert.deepEqual(again.appendEvent(sessionId, 'ask', { i: 'after' }, NOW), { seq: 6 });
      } finally {
        again.close();
      }
      const third = await Store.open(dir, { wasmPath: WASM_PATH });
      assert.deepEqual(third.readEvents(sessionId, 5)[0]?.payload, { i: 'after' });
      third.close();
    });
  }

  it('refuses a journal damaged in the middle (valid records follow) and leaves it untouched', async () => {
    const dir = dirs.make();
    const { store } = await seeded(dir, 6);
    store.close();
    const journal = path.join(dir, JOURNAL_FILE);
    const bytes = fs.readFileSync(journal);
    const scan = scanFrames(bytes, bytes.indexOf(0x0a) + 1);
    const victim = scan.records[3];
    assert.ok(victim);
    bytes[victim.end - 3] = (bytes[victim.end - 3] as number) ^ 0x20;
    fs.writeFileSync(journal, bytes);
    await assert.rejects(Store.open(dir, { wasmPath: WASM_PATH }), storeError(/is corrupt at byte \d+ \(checksum mismatch\) and valid records follow/));
    assert.deepEqual(fs.readFileSync(journal), bytes, 'nothing was truncated');
  });

  it('a lock-free reader never truncates; the next writer does', async () => {
    const dir = dirs.make();
    const { store: writer, sessionId } = await seeded(dir, 2);
    const reader = await Store.open(dir, { wasmPath: WASM_PATH });
    try {
      const journal = path.join(dir, JOURNAL_FILE);
      const good = fileSize(journal);
      fs.appendFileSync(journal, '999 0000'); // a writer's half-finished append, as another process sees it
      assert.equal(reader.countEvents(sessionId), 2);
      assert.equal(fileSize(journal), good + 8);
      writer.appendEvent(sessionId, 'ask', { i: 2 }, NOW);
      assert.deepEqual(
        reader.readEvents(sessionId).map((e) => e.seq),
        [1, 2, 3],
      );
    } finally {
      writer.close();
      reader.close();
    }
  });

  const crashSteps: DurableStep[] = ['snapshot-temp-written', 'snapshot-renamed', 'journal-temp-written', 'journal-renamed'];
  for (const step of crashSteps) {
    it(`a compaction interrupted at "${step}" loses nothing`, async () => {
      const dir = dirs.make();
      let armed = true;
      const store = await Store.open(dir, {
        wasmPath: WASM_PATH,
        compactEvery: 5,
        onStep: (s) => {
          if (armed && s === step) {
            armed = false;
            throw new Error(`simulated crash at ${s}`);
          }
        },
        onCompactionError: () => undefined,
      });
      // Journal records: migration, session, then events; the 5th record (3rd event) starts a compaction that "crashes".
      const { session } = store.getOrCreateSession({ repoRoot: '/repo', target, now: NOW });
      for (let i = 0; i < 3; i++) store.appendEvent(session.id, 'ask', { i }, NOW);
      assert.equal(armed, false, 'the crash point was reached');
      const snapshotTaken = fs.existsSync(path.join(dir, SNAPSHOT_FILE));
      assert.equal(snapshotTaken, step !== 'snapshot-temp-written');
      // Abandon the store without close(), as a crash would, then recover in a fresh instance.
      const again = await Store.open(dir, { wasmPath: WASM_PATH, compactEvery: 5 });
      try {
        assert.deepEqual(
          again.readEvents(session.id).map((e) => e.seq),
          [1, 2, 3],
        );
        for (let i = 3; i < 12; i++) assert.deepEqual(again.appendEvent(session.id, 'ask', { i }, NOW), { seq: i + 1 });
      } finally {
        again.close();
      }
      const third = await Store.open(dir, { wasmPath: WASM_PATH });
      assert.equal(third.countEvents(session.id), 12);
      third.close();
      store.close();
    });
  }

  it('removes temp files and breaks a lock left by a dead process', async () => {
    const dir = dirs.make();
    const { store } = await seeded(dir, 1);
    store.close();
    const pid = deadPid();
    fs.writeFileSync(path.join(dir, 'store.lock'), `${pid} ${os.hostname()} deadbeef\n`);
    fs.writeFileSync(path.join(dir, `${SNAPSHOT_FILE}.tmp-${pid}-abcd1234`), 'partial');
    fs.writeFileSync(path.join(dir, 'patchsets', `ps-x.json.tmp-${pid}-abcd1234`), 'partial');
    const again = await Store.open(dir, { wasmPath: WASM_PATH, lockTimeoutMs: 2_000 });
    again.close();
    assert.deepEqual(fs.readdirSync(dir).sort(), [JOURNAL_FILE, 'patchsets']);
    assert.deepEqual(fs.readdirSync(path.join(dir, 'patchsets')), []);
  });

  it('waits for a live lock holder, then fails with a clear error', async () => {
    const dir = dirs.make();
    const { store } = await seeded(dir, 1);
    store.close();
    // The parent of this test process is alive for the whole test.
    fs.writeFileSync(path.join(dir, 'store.lock'), `${process.ppid} ${os.hostname()} cafe\n`);
    const started = Date.now();
    await assert.rejects(Store.open(dir, { wasmPath: WASM_PATH, lockTimeoutMs: 300 }), storeError(/stayed locked by process \d+/));
    assert.ok(Date.now() - started >= 300);
    fs.rmSync(path.join(dir, 'store.lock'));

    // An open store whose write times out on the lock stays usable afterwards.
    const store2 = await Store.open(dir, { wasmPath: WASM_PATH, lockTimeoutMs: 200 });
    try {
      const [session] = store2.listSessions();
      assert.ok(session);
      fs.writeFileSync(path.join(dir, 'store.lock'), `${process.ppid} ${os.hostname()} cafe\n`);
      assert.throws(() => store2.appendEvent(session.id, 'ask', {}, NOW), storeError(/stayed locked/));
      assert.equal(store2.countEvents(session.id), 1, 'reads need no lock');
      fs.rmSync(path.join(dir, 'store.lock'));
      assert.deepEqual(store2.appendEvent(session.id, 'ask', {}, NOW), { seq: 2 });
    } finally {
      store2.close();
    }
  });

  it('treats a lock file left empty by a creator that died before writing it as stale after 2 s', async () => {
    const dir = dirs.make();
    const { store } = await seeded(dir, 1);
    store.close();
    const lock = path.join(dir, 'store.lock');
    fs.writeFileSync(lock, '');
    const old = new Date(Date.now() - 5_000);
    fs.utimesSync(lock, old, old);
    const again = await Store.open(dir, { wasmPath: WASM_PATH, lockTimeoutMs: 1_000 });
    again.close();
    assert.ok(!fs.existsSync(lock));
  });

  it('refuses a store with a newer schema, on open and while running', async () => {
    const dir = dirs.make();
    const { store, sessionId } = await seeded(dir, 1);
    const durable = await DurableDb.open(dir, { wasmPath: WASM_PATH });
    durable.write((tx) => tx.run('PRAGMA user_version = 99'));
    durable.close();
    assert.throws(() => store.readEvents(sessionId), storeError(new RegExp(`schema version 99.*understands up to version ${MIGRATIONS.length}`)));
    assert.throws(() => store.appendEvent(sessionId, 'ask', {}, NOW), storeError(/schema version 99/));
    store.close();
    await assert.rejects(Store.open(dir, { wasmPath: WASM_PATH }), storeError(/schema version 99.*newer Rennet/));
    // Also when the newer version is already inside the snapshot.
    const d2 = await DurableDb.open(dir, { wasmPath: WASM_PATH });
    d2.compact();
    d2.close();
    await assert.rejects(Store.open(dir, { wasmPath: WASM_PATH }), storeError(/schema version 99/));
  });

  it('migrates an older store forward exactly once, in one journal record', async () => {
    const dir = dirs.make();
    const durable = await DurableDb.open(dir, { wasmPath: WASM_PATH });
    const current = MIGRATIONS.length;
    assert.deepEqual(migrate(durable, MIGRATIONS), { from: 0, to: current });
    const v2: Migration = {
      version: current + 1,
      description: 'test: labels',
      up: (tx) => {
        tx.run('CREATE TABLE labels (id TEXT PRIMARY KEY, name TEXT NOT NULL)');
        tx.run("INSERT INTO labels VALUES ('l1', 'default')");
      },
    };
    const seq = durable.lastSeq;
    assert.deepEqual(migrate(durable, [...MIGRATIONS, v2]), { from: current, to: current + 1 });
    assert.equal(durable.lastSeq, seq + 1);
    assert.deepEqual(migrate(durable, [...MIGRATIONS, v2]), { from: current + 1, to: current + 1 });
    assert.equal(durable.lastSeq, seq + 1, 'nothing to do writes nothing');
    durable.close();
    const reopened = await DurableDb.open(dir, { wasmPath: WASM_PATH });
    assert.equal(readSchemaVersion(reopened.reader), current + 1);
    assert.deepEqual(
      reopened.read((r) => r.all('SELECT name FROM labels')),
      [{ name: 'default' }],
    );
    reopened.close();
    await assert.rejects(Store.open(dir, { wasmPath: WASM_PATH }), storeError(new RegExp(`schema version ${current + 1}`)));
  });

  it('refuses unreadable files with a clear error', async () => {
    const a = dirs.make();
    fs.writeFileSync(path.join(a, SNAPSHOT_FILE), 'this is not sqlite at all, not even close......................................................');
    await assert.rejects(Store.open(a, { wasmPath: WASM_PATH }), storeError(/store\.sqlite is not a readable Rennet store/));

    const b = dirs.make();
    fs.writeFileSync(path.join(b, JOURNAL_FILE), 'rennet-journal v9 gen=abc base=0\n');
    await assert.rejects(Store.open(b, { wasmPath: WASM_PATH }), storeError(/format v9 is newer/));

    const c = dirs.make();
    fs.writeFileSync(path.join(c, JOURNAL_FILE), 'hello\n');
    await assert.rejects(Store.open(c, { wasmPath: WASM_PATH }), storeError(/not a Rennet journal/));

    const d = dirs.make();
    fs.writeFileSync(path.join(d, JOURNAL_FILE), 'rennet-journal v1 gen=abc base=40\n');
    await assert.rejects(Store.open(d, { wasmPath: WASM_PATH }), storeError(/snapshot is older than the journal/));
  });

  it('refuses non-deterministic SQL in a journaled transaction', async () => {
    const durable = await DurableDb.open(dirs.make(), { wasmPath: WASM_PATH });
    try {
      durable.write((tx) => tx.run('CREATE TABLE t (v)'));
      assert.throws(() => durable.write((tx) => tx.run("INSERT INTO t VALUES (datetime('now'))")), /non-deterministic/);
      assert.throws(() => durable.write((tx) => tx.run('INSERT INTO t VALUES (random())')), /non-deterministic/);
      assert.deepEqual(
        durable.read((r) => r.all('SELECT * FROM t')),
        [],
      );
    } finally {
      durable.close();
    }
  });
});
