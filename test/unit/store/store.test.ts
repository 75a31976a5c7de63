import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { targetKey, type Target } from '../../../protocol';
import { SCHEMA_VERSION, Store, StoreError, defaultDataDir } from '../../../host/store';
import { JOURNAL_FILE } from '../../../host/store/durable-db';
import { WASM_PATH, fileSize, makePatchset, tempDirs } from './helpers';

const branch: Target = { kind: 'branch', head: 'feature/x', base: 'main' };
const tree: Target = { kind: 'working-tree', base: 'main' };
const T0 = '2025-01-01T00:00:00.000Z';
const T1 = '2025-01-02T00:00:00.000Z';
const T2 = '2025-01-03T00:00:00.000Z';

function storeError(code: string, pattern?: RegExp) {
  return (error: unknown) => {
    assert.ok(error instanceof StoreError, `expected a StoreError, got ${String(error)}`);
    assert.equal(error.code, code);
    if (pattern) assert.match(error.message, pattern);
    return true;
  };
}

describe('store: API', function () {
  this.timeout(20_000);
  const dirs = tempDirs();
  const open: Store[] = [];
  const openStore = async (dir: string, opts: Parameters<typeof Store.open>[1] = {}) => {
    const store = await Store.open(dir, { wasmPath: WASM_PATH, ...opts });
    open.push(store);
    return store;
  };
  afterEach(() => {
    for (const s of open.splice(0)) s.close();
  });
  after(() => dirs.cleanup());

  it('creates a missing directory and migrates an empty one to the latest schema', async () => {
    const dir = path.join(dirs.make(), 'nested', 'data');
    const store = await openStore(dir);
    assert.equal(store.dir, dir);
    assert.equal(store.schemaVersion, SCHEMA_VERSION);
    assert.ok(SCHEMA_VERSION >= 1);
    assert.ok(fs.existsSync(path.join(dir, JOURNAL_FILE)));
    assert.ok(fs.statSync(path.join(dir, 'patchsets')).isDirectory());
    assert.deepEqual(store.listSessions(), []);
    assert.equal(store.countEvents(), 0);
    assert.ok(!fs.existsSync(path.join(dir, 'store.lock')), 'the lock is released between calls');
  });

  it('round-trips a patchset; a second put of the same id writes nothing', async () => {
    const dir = dirs.make();
    const store = await openStore(dir);
    const ps = makePatchset('alpha', 3, 4);
    assert.equal(store.hasPatchset(ps.id), false);
    assert.equal(store.getPatchset(ps.id), undefined);
    assert.deepEqual(store.putPatchset(ps), { created: true });
    assert.equal(store.hasPatchset(ps.id), true);
    assert.deepEqual(store.getPatchset(ps.id), ps);

    const file = path.join(dir, 'patchsets', `${ps.id}.json`);
    const journal = path.join(dir, JOURNAL_FILE);
    const before = { journal: fileSize(journal), mtime: fs.statSync(file).mtimeMs, seq: store.stats().seq };
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(store.putPatchset(ps), { created: false });
    assert.equal(fileSize(journal), before.journal, 'no journal record');
    assert.equal(fs.statSync(file).mtimeMs, before.mtime, 'no file write');
    assert.equal(store.stats().seq, before.seq);
  });

  it('adopts a complete patchset file left without its row (crash between file and journal)', async () => {
    const dir = dirs.make();
    const store = await openStore(dir);
    const ps = makePatchset('orphan');
    const file = path.join(dir, 'patchsets', `${ps.id}.json`);
    fs.writeFileSync(file, JSON.stringify(ps));
    const mtime = fs.statSync(file).mtimeMs;
    assert.equal(store.hasPatchset(ps.id), false);
    assert.deepEqual(store.putPatchset(ps), { created: true });
    assert.equal(fs.statSync(file).mtimeMs, mtime);
    assert.deepEqual(store.getPatchset(ps.id), ps);
  });

  it('refuses unsafe patchset ids and reports a recorded patchset whose file is gone', async () => {
    const dir = dirs.make();
    const store = await openStore(dir);
    assert.throws(() => store.putPatchset({ ...makePatchset('x'), id: '../escape' }), storeError('invalid-request'));
    const ps = makePatchset('gone');
    store.putPatchset(ps);
    fs.unlinkSync(path.join(dir, 'patchsets', `${ps.id}.json`));
    assert.throws(() => store.getPatchset(ps.id), storeError('store-failed', /cannot be read/));
    fs.writeFileSync(path.join(dir, 'patchsets', `${ps.id}.json`), JSON.stringify({ id: ps.id }));
    assert.throws(() => store.getPatchset(ps.id), storeError('store-failed', /does not match the Patchset schema/));
  });

  it('keeps one session per (repoRoot, targetKey) and reattaches', async () => {
    const store = await openStore(dirs.make());
    const first = store.getOrCreateSession({ repoRoot: '/repo', target: branch, now: T0 });
    assert.equal(first.created, true);
    assert.match(first.session.id, /^s-[0-9a-f]{16}$/);
    assert.deepEqual(first.session, {
      id: first.session.id,
      repoRoot: '/repo',
      targetKey: targetKey(branch),
      target: branch,
      createdAt: T0,
      updatedAt: T0,
      activePatchsetId: null,
      patchsetIds: [],
    });
    const again = store.getOrCreateSession({ repoRoot: '/repo', target: { ...branch }, now: T1 });
    assert.equal(again.created, false);
    assert.deepEqual(again.session, first.session);
    assert.throws(() => store.createSession({ repoRoot: '/repo', target: branch, now: T1 }), storeError('invalid-request', /already exists/));

    const other = store.createSession({ repoRoot: '/repo', target: tree, now: T1 });
    const elsewhere = store.createSession({ repoRoot: '/other', target: branch, now: T1 });
    assert.notEqual(other.id, first.session.id);
    assert.notEqual(elsewhere.id, first.session.id);
    assert.deepEqual(store.findSession('/repo', targetKey(tree)), other);
    assert.deepEqual(store.findSession('/repo', targetKey(branch)), first.session);
    assert.equal(store.findSession('/nope', targetKey(branch)), undefined);
    assert.deepEqual(store.getSession(other.id), other);
    assert.equal(store.getSession('s-missing'), undefined);
    assert.throws(() => store.createSession({ repoRoot: '/repo', target: { kind: 'branch', head: '', base: 'main' }, now: T0 }), storeError('invalid-request'));
  });

  it('attaches patchsets in order, idempotently, and lists sessions by last update', async () => {
    const store = await openStore(dirs.make());
    const a = store.createSession({ repoRoot: '/repo', target: branch, now: T0 });
    const b = store.createSession({ repoRoot: '/repo', target: tree, now: T1 });
    assert.deepEqual(
      store.listSessions().map((s) => s.id),
      [b.id, a.id],
    );

    const p1 = makePatchset('one');
    const p2 = makePatchset('two');
    store.putPatchset(p1);
    store.putPatchset(p2);
    let s = store.attachPatchset(a.id, p1.id, T1);
    assert.deepEqual(s.patchsetIds, [p1.id]);
    assert.equal(s.activePatchsetId, p1.id);
    s = store.attachPatchset(a.id, p2.id, T2);
    assert.deepEqual(s.patchsetIds, [p1.id, p2.id]);
    assert.equal(s.activePatchsetId, p2.id);
    assert.equal(s.updatedAt, T2);
    s = store.attachPatchset(a.id, p1.id, T2);
    assert.deepEqual(s.patchsetIds, [p1.id, p2.id], 'no duplicate');
    assert.equal(s.activePatchsetId, p1.id, 'reattaching an old patchset makes it active');
    assert.deepEqual(store.getSession(a.id), s);
    assert.deepEqual(
      store.listSessions().map((x) => x.id),
      [a.id, b.id],
    );
    assert.deepEqual(store.listSessions()[0], s);

    assert.throws(() => store.attachPatchset('s-missing', p1.id, T2), storeError('not-found'));
    assert.throws(() => store.attachPatchset(a.id, 'ps-missing', T2), storeError('not-found'));
  });

  it('numbers events per session from 1 and reads them back', async () => {
    const store = await openStore(dirs.make());
    const a = store.createSession({ repoRoot: '/repo', target: branch, now: T0 });
    const b = store.createSession({ repoRoot: '/repo', target: tree, now: T0 });
    for (let i = 1; i <= 5; i++) assert.deepEqual(store.appendEvent(a.id, 'ask', { i }, T1), { seq: i });
    assert.deepEqual(store.appendEvent(b.id, 'ask', 'text', T1), { seq: 1 });
    assert.deepEqual(store.appendEvent(b.id, 'none', undefined, T2), { seq: 2 });
    assert.deepEqual(
      store.appendEvents(
        a.id,
        [
          { kind: 'x', payload: 1 },
          { kind: 'y', payload: [2] },
        ],
        T2,
      ),
      { firstSeq: 6, lastSeq: 7 },
    );

    const events = store.readEvents(a.id);
    assert.deepEqual(
      events.map((e) => e.seq),
      [1, 2, 3, 4, 5, 6, 7],
    );
    assert.deepEqual(events[0], { seq: 1, kind: 'ask', payload: { i: 1 }, at: T1 });
    assert.deepEqual(
      store.readEvents(a.id, 5).map((e) => e.payload),
      [1, [2]],
    );
    assert.deepEqual(store.readEvents(b.id), [
      { seq: 1, kind: 'ask', payload: 'text', at: T1 },
      { seq: 2, kind: 'none', payload: null, at: T2 },
    ]);
    assert.deepEqual(store.readEvents('s-missing'), []);
    assert.equal(store.countEvents(), 9);
    assert.equal(store.countEvents(a.id), 7);
    assert.equal(store.countEvents('s-missing'), 0);
    assert.throws(() => store.appendEvent('s-missing', 'ask', {}, T1), storeError('not-found'));
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    assert.throws(() => store.appendEvent(a.id, 'ask', cyclic, T1), storeError('invalid-request'));
    assert.equal(store.countEvents(a.id), 7);
  });

  it('shows everything after close and reopen, across compactions', async () => {
    const dir = dirs.make();
    const store = await Store.open(dir, { wasmPath: WASM_PATH, compactEvery: 3 });
    const s = store.createSession({ repoRoot: '/repo', target: branch, now: T0 });
    const ps = makePatchset('reopen');
    store.putPatchset(ps);
    store.attachPatchset(s.id, ps.id, T1);
    for (let i = 0; i < 20; i++) store.appendEvent(s.id, 'ask', { i }, T2);
    assert.ok(store.stats().journalRecords < 3, 'compaction ran');
    const sessions = store.listSessions();
    const events = store.readEvents(s.id);
    store.close();
    assert.throws(() => store.listSessions(), storeError('store-failed', /closed/));

    const again = await openStore(dir);
    assert.deepEqual(again.listSessions(), sessions);
    assert.deepEqual(again.readEvents(s.id), events);
    assert.deepEqual(again.getPatchset(ps.id), ps);
    assert.equal(again.schemaVersion, SCHEMA_VERSION);
    assert.deepEqual(again.appendEvent(s.id, 'ask', {}, T2), { seq: 21 });
  });

  it('two stores on one directory see each other, including across compactions', async () => {
    const dir = dirs.make();
    const a = await openStore(dir, { compactEvery: 4 });
    const b = await openStore(dir, { compactEvery: 1000 });
    const s = a.createSession({ repoRoot: '/repo', target: branch, now: T0 });
    assert.deepEqual(b.getSession(s.id), s);
    assert.deepEqual(b.getOrCreateSession({ repoRoot: '/repo', target: branch, now: T1 }), { session: s, created: false });
    for (let i = 0; i < 30; i++) {
      const writer = i % 3 === 0 ? b : a;
      assert.deepEqual(writer.appendEvent(s.id, 'ask', { i }, T1), { seq: i + 1 });
    }
    // b read nothing while a compacted several times: it must reload the snapshot.
    assert.deepEqual(
      b.readEvents(s.id).map((e) => (e.payload as { i: number }).i),
      Array.from({ length: 30 }, (_, i) => i),
    );
    const ps = makePatchset('shared');
    assert.deepEqual(b.putPatchset(ps), { created: true });
    assert.deepEqual(a.putPatchset(ps), { created: false });
    assert.deepEqual(a.getPatchset(ps.id), ps);
  });
});

describe('store: defaultDataDir', () => {
  it('prefers RENNET_DATA_DIR, then the platform convention', () => {
    assert.equal(defaultDataDir({ RENNET_DATA_DIR: '/custom', HOME: '/home/u' }, 'linux'), '/custom');
    assert.equal(defaultDataDir({ XDG_DATA_HOME: '/xdg', HOME: '/home/u' }, 'linux'), '/xdg/rennet');
    assert.equal(defaultDataDir({ HOME: '/home/u' }, 'linux'), '/home/u/.local/share/rennet');
    assert.equal(defaultDataDir({ XDG_DATA_HOME: 'relative', HOME: '/home/u' }, 'linux'), '/home/u/.local/share/rennet');
    assert.equal(defaultDataDir({ HOME: '/Users/u' }, 'darwin'), '/Users/u/Library/Application Support/rennet');
    assert.equal(defaultDataDir({ LOCALAPPDATA: 'C:\\Users\\u\\AppData\\Local', USERPROFILE: 'C:\\Users\\u' }, 'win32'), 'C:\\Users\\u\\AppData\\Local\\rennet');
  });
});
