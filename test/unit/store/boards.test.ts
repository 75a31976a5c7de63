import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildSync } from 'esbuild';
import { MEASURE_BY_LENS, type Lens } from '../../../protocol/board';
import { SCHEMA_VERSION, Store, StoreError, boardKeyOf, parseBoardKey, type BoardMetaInput } from '../../../host/store';
import { DurableDb } from '../../../host/store/durable-db';
import { MIGRATIONS, migrate, readSchemaVersion } from '../../../host/store/migrations';
import { WASM_PATH, tempDirs } from './helpers';

const T0 = '2025-02-01T00:00:00.000Z';
const T1 = '2025-02-02T00:00:00.000Z';

function storeError(code: string, pattern?: RegExp) {
  return (error: unknown) => {
    assert.ok(error instanceof StoreError, `expected a StoreError, got ${String(error)}`);
    assert.equal(error.code, code);
    if (pattern) assert.match(error.message, pattern);
    return true;
  };
}

function meta(sessionId: string, lens: Lens, overrides: Partial<BoardMetaInput> = {}): BoardMetaInput {
  return {
    sessionId,
    generationId: 'g-1',
    patchsetId: 'ps-0123456789abcdef',
    lens,
    status: 'drafting',
    absence: null,
    revision: 0,
    nextId: 1,
    document: { title: '', intro_markdown: '', measure: MEASURE_BY_LENS[lens], prose_register: 'authored' },
    repairs: [],
    lastFinish: null,
    updatedAt: T0,
    ...overrides,
  };
}

describe('store: boards (migration 2, event log + metadata)', function () {
  this.timeout(60_000);
  const dirs = tempDirs('rennet-boards-');
  const open: Store[] = [];
  const openStore = async (dir: string, opts: Parameters<typeof Store.open>[1] = {}) => {
    const store = await Store.open(dir, { wasmPath: WASM_PATH, ...opts });
    open.push(store);
    return store;
  };
  const session = (store: Store, head = 'feature/x') => store.createSession({ repoRoot: '/repo', target: { kind: 'branch', head, base: 'main' }, now: T0 }).id;
  afterEach(() => {
    for (const s of open.splice(0)) s.close();
  });
  after(() => dirs.cleanup());

  it('migrates a version-1 store with data to the current schema in one journal record, keeping its data', async () => {
    const dir = dirs.make();
    const v1 = await DurableDb.open(dir, { wasmPath: WASM_PATH });
    assert.deepEqual(migrate(v1, MIGRATIONS.slice(0, 1)), { from: 0, to: 1 });
    v1.write((tx) => {
      tx.run(`INSERT INTO sessions (id, repo_root, target_key, target_json, created_at, updated_at, active_patchset_id) VALUES (?, ?, ?, ?, ?, ?, NULL)`, [
        's-old',
        '/repo',
        'branch:old...main',
        JSON.stringify({ kind: 'branch', head: 'old', base: 'main' }),
        T0,
        T0,
      ]);
      tx.run('INSERT INTO events (session_id, seq, kind, payload_json, at) VALUES (?, ?, ?, ?, ?)', ['s-old', 1, 'note', '{"a":1}', T0]);
    });
    const before = v1.lastSeq;
    v1.close();

    const store = await openStore(dir);
    assert.equal(store.schemaVersion, SCHEMA_VERSION);
    assert.match(MIGRATIONS[1]?.description ?? '', /lens boards/, 'migration 2 adds the board tables');
    assert.equal(store.stats().seq, before + 1, 'the pending migration is one record');
    assert.equal(store.getSession('s-old')?.targetKey, 'branch:old...main');
    assert.deepEqual(
      store.readEvents('s-old').map((e) => e.payload),
      [{ a: 1 }],
    );
    assert.deepEqual(store.listBoardMeta(), []);
    assert.deepEqual(store.readBoardEvents('s-old/g-1/design'), []);
    // A board can be filed against the migrated session right away.
    store.putBoardMeta(meta('s-old', 'design'));
    assert.equal(store.listBoardMeta('s-old').length, 1);
    store.close();
    open.splice(0);

    const reopened = await DurableDb.open(dir, { wasmPath: WASM_PATH });
    assert.equal(readSchemaVersion(reopened.reader), SCHEMA_VERSION);
    reopened.close();
  });

  it('board keys: <sessionId>/<generationId or patchsetId>/<lens>, with unsafe parts refused', () => {
    assert.equal(boardKeyOf({ sessionId: 's-1', generationId: 'g-7', patchsetId: 'ps-1', lens: 'flagged' }), 's-1/g-7/flagged');
    assert.equal(boardKeyOf({ sessionId: 's-1', generationId: null, patchsetId: 'ps-1', lens: 'noise' }), 's-1/ps-1/noise');
    assert.deepEqual(parseBoardKey('s-1/g-7/flagged'), { sessionId: 's-1', scope: 'g-7', lens: 'flagged' });
    assert.throws(() => boardKeyOf({ sessionId: 's/1', generationId: null, patchsetId: 'ps-1', lens: 'noise' }), storeError('invalid-request'));
    assert.throws(() => boardKeyOf({ sessionId: 's-1', generationId: '../x', patchsetId: 'ps-1', lens: 'noise' }), storeError('invalid-request'));
    assert.throws(() => boardKeyOf({ sessionId: 's-1', generationId: null, patchsetId: 'ps-1', lens: 'other' as Lens }), storeError('invalid-request'));
    for (const bad of ['s-1/g-1', 's-1/g-1/other', 's-1//design', 's-1/g-1/design/x']) assert.throws(() => parseBoardKey(bad), storeError('invalid-request'), bad);
  });

  it('puts, replaces, gets and lists board metadata', async () => {
    const store = await openStore(dirs.make());
    const s1 = session(store, 'one');
    const s2 = session(store, 'two');
    assert.equal(store.getBoardMeta(`${s1}/g-1/design`), undefined);

    const flagged = store.putBoardMeta(meta(s1, 'flagged'));
    assert.equal(flagged.boardKey, `${s1}/g-1/flagged`);
    assert.equal(flagged.eventSeq, 0);
    const design = meta(s1, 'design', {
      status: 'finished',
      revision: 7,
      nextId: 12,
      document: { title: 'Add retries', intro_markdown: 'Retries **failed** uploads.', measure: 'structured', prose_register: 'transcribed' },
      repairs: [{ element: 'e4', field: 'anchor', from: 'e9', to: 'e3' }],
      lastFinish: [],
      updatedAt: T1,
    });
    store.putBoardMeta(design);
    store.putBoardMeta(meta(s2, 'noise', { generationId: null, status: 'absent', absence: 'no-noise', revision: 1 }));

    const got = store.getBoardMeta(`${s1}/g-1/design`);
    assert.deepEqual(got, { ...design, boardKey: `${s1}/g-1/design`, eventSeq: 0 });
    assert.deepEqual(
      store.listBoardMeta(s1).map((m) => m.lens),
      ['design', 'flagged'],
      'canonical lens order',
    );
    assert.deepEqual(
      store.listBoardMeta(s2).map((m) => [m.boardKey, m.absence]),
      [[`${s2}/ps-0123456789abcdef/noise`, 'no-noise']],
    );
    assert.equal(store.listBoardMeta().length, 3);

    // A second put replaces the row.
    store.putBoardMeta({ ...design, status: 'drafting', revision: 8, lastFinish: [{ rule: 'material-present', element: 'e1', sentence: 'Add a requirement.' }] });
    const replaced = store.getBoardMeta(`${s1}/g-1/design`);
    assert.equal(replaced?.revision, 8);
    assert.deepEqual(replaced?.lastFinish, [{ rule: 'material-present', element: 'e1', sentence: 'Add a requirement.' }]);
    assert.equal(store.listBoardMeta(s1).length, 2);
  });

  it('refuses metadata for an unknown session, an invalid record, and a key filed for other parts', async () => {
    const store = await openStore(dirs.make());
    const s1 = session(store);
    assert.throws(() => store.putBoardMeta(meta('s-missing', 'design')), storeError('not-found', /No session s-missing/));
    assert.throws(() => store.putBoardMeta(meta(s1, 'design', { status: 'done' as never })), storeError('invalid-request', /Invalid board metadata/));
    assert.throws(() => store.putBoardMeta(meta(s1, 'design', { revision: -1 })), storeError('invalid-request'));
    assert.throws(() => store.putBoardMeta(meta(s1, 'design', { document: { title: 1 } as never })), storeError('invalid-request'));
    // A board filed by patchset; a generation whose id equals that patchset id cannot share it.
    store.putBoardMeta(meta(s1, 'design', { generationId: null, patchsetId: 'ps-a' }));
    assert.throws(() => store.putBoardMeta(meta(s1, 'design', { generationId: 'ps-a', patchsetId: 'ps-b' })), storeError('invalid-request', /is filed for/));
    assert.equal(store.listBoardMeta().length, 1);
  });

  it('appends and reads a board event log: seq per board from 1, windows by seq, payloads round-trip', async () => {
    const store = await openStore(dirs.make());
    const s1 = session(store);
    const design = `${s1}/g-1/design`;
    const flagged = `${s1}/g-1/flagged`;
    assert.deepEqual(store.appendBoardEvents(design, [{ verb: 'board.opened', payload: { lens: 'design' } }], T0), { firstSeq: 1, lastSeq: 1 });
    assert.deepEqual(
      store.appendBoardEvents(
        design,
        [
          { verb: 'element.created', payload: { element: { id: 'e1', text: 'ünïcödé "quoted"' } } },
          { verb: 'element.removed', payload: { id: 'e1' } },
        ],
        T1,
      ),
      { firstSeq: 2, lastSeq: 3 },
    );
    assert.deepEqual(store.appendBoardEvents(flagged, [{ verb: 'status.set', payload: { status: 'absent' } }], T1), { firstSeq: 1, lastSeq: 1 });
    assert.deepEqual(store.appendBoardEvents(design, [], T1), { firstSeq: 4, lastSeq: 3 }, 'an empty append writes nothing');

    assert.deepEqual(store.readBoardEvents(design), [
      { seq: 1, verb: 'board.opened', payload: { lens: 'design' }, at: T0 },
      { seq: 2, verb: 'element.created', payload: { element: { id: 'e1', text: 'ünïcödé "quoted"' } }, at: T1 },
      { seq: 3, verb: 'element.removed', payload: { id: 'e1' }, at: T1 },
    ]);
    assert.deepEqual(
      store.readBoardEvents(design, 1).map((e) => e.seq),
      [2, 3],
    );
    assert.deepEqual(
      store.readBoardEvents(design, 0, 2).map((e) => e.seq),
      [1, 2],
    );
    assert.deepEqual(
      store.readBoardEvents(flagged).map((e) => e.verb),
      ['status.set'],
    );
    assert.deepEqual(store.readEvents(s1), [], 'board events are not session events');

    assert.throws(() => store.appendBoardEvents('not-a-key', [{ verb: 'x', payload: 1 }], T0), storeError('invalid-request'));
    assert.throws(() => store.appendBoardEvents(design, [{ verb: '', payload: 1 }], T0), storeError('invalid-request'));
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    assert.throws(() => store.appendBoardEvents(design, [{ verb: 'x', payload: cyclic }], T0), storeError('invalid-request', /JSON/));
    assert.equal(store.readBoardEvents(design).length, 3, 'a refused append wrote nothing');
  });

  it('meta records the last event it covers; commitBoardWrite is one transaction (one journal record)', async () => {
    const store = await openStore(dirs.make());
    const s1 = session(store);
    const key = `${s1}/g-1/sequence`;
    store.appendBoardEvents(
      key,
      [
        { verb: 'board.opened', payload: {} },
        { verb: 'element.created', payload: { n: 1 } },
      ],
      T0,
    );
    assert.equal(store.putBoardMeta(meta(s1, 'sequence')).eventSeq, 2);

    const seq = store.stats().seq;
    const written = store.commitBoardWrite(meta(s1, 'sequence', { revision: 1, nextId: 3 }), [
      { verb: 'element.created', payload: { n: 2 } },
      { verb: 'element.created', payload: { n: 3 } },
    ]);
    assert.equal(store.stats().seq, seq + 1, 'events and meta in one record');
    assert.deepEqual([written.firstSeq, written.lastSeq, written.meta.eventSeq], [3, 4, 4]);
    assert.equal(store.getBoardMeta(key)?.eventSeq, 4);

    // A refused meta rolls the events of the same commit back.
    assert.throws(() => store.commitBoardWrite(meta(s1, 'sequence', { revision: -5 }), [{ verb: 'element.created', payload: { n: 4 } }]), storeError('invalid-request'));
    assert.equal(store.readBoardEvents(key).length, 4);
    assert.equal(store.stats().seq, seq + 1);
  });

  it('shows the same boards after close and reopen, across compactions, and to a second store on the directory', async () => {
    const dir = dirs.make();
    const store = await openStore(dir, { compactEvery: 3 });
    const s1 = session(store);
    const key = `${s1}/g-1/decisions`;
    for (let i = 1; i <= 10; i++) {
      store.commitBoardWrite(meta(s1, 'decisions', { revision: i, nextId: i + 1, updatedAt: T1 }), [{ verb: 'element.created', payload: { i } }]);
    }
    const other = await openStore(dir);
    assert.deepEqual(other.getBoardMeta(key), store.getBoardMeta(key));
    other.commitBoardWrite(meta(s1, 'decisions', { revision: 11, nextId: 12, updatedAt: T1 }), [{ verb: 'element.removed', payload: { i: 11 } }]);
    assert.equal(store.getBoardMeta(key)?.revision, 11, 'the first store catches up');
    const events = store.readBoardEvents(key);
    const metas = store.listBoardMeta();
    store.close();
    other.close();
    open.splice(0);

    const reopened = await openStore(dir);
    assert.deepEqual(reopened.readBoardEvents(key), events);
    assert.deepEqual(reopened.listBoardMeta(), metas);
    assert.deepEqual(
      events.map((e) => e.seq),
      Array.from({ length: 11 }, (_, i) => i + 1),
    );
    assert.equal(reopened.getBoardMeta(key)?.eventSeq, 11);
  });
});

describe('store: boards survive kill -9 (the inherited durability path)', function () {
  this.timeout(90_000);
  const dirs = tempDirs('rennet-boards-kill-');
  after(() => dirs.cleanup());

  /** A child that commits board writes forever and prints `ack <lastSeq> <revision>` after each returned. */
  function bundleChild(): string {
    const out = dirs.make();
    const entry = path.join(out, 'boards-child.ts');
    const storeModule = path.resolve(__dirname, '../../../host/store/index.ts');
    fs.writeFileSync(
      entry,
      `import * as fs from 'node:fs';
import { Store } from ${JSON.stringify(storeModule)};
const config = JSON.parse(process.env.RENNET_CHILD ?? '{}');
async function main() {
  const store = await Store.open(config.dir, { wasmPath: config.wasmPath, compactEvery: config.compactEvery });
  const now = () => new Date().toISOString();
  const { session } = store.getOrCreateSession({ repoRoot: '/repo/boards', target: { kind: 'branch', head: 'kill', base: 'main' }, now: now() });
  const key = session.id + '/g-1/flagged';
  let revision = store.getBoardMeta(key)?.revision ?? 0;
  fs.writeSync(1, 'ready ' + session.id + '\\n');
  for (;;) {
    revision += 1;
    const { lastSeq } = store.commitBoardWrite({
      sessionId: session.id, generationId: 'g-1', patchsetId: 'ps-kill', lens: 'flagged',
      status: 'drafting', absence: null, revision, nextId: revision + 1,
      document: { title: 'T', intro_markdown: '', measure: 'reading', prose_register: 'authored' },
      repairs: [], lastFinish: null, updatedAt: now(),
    }, [{ verb: 'element.created', payload: { revision } }, { verb: 'element.updated', payload: { revision } }]);
    fs.writeSync(1, 'ack ' + lastSeq + ' ' + revision + '\\n');
  }
}
main().catch((e) => { console.error(e); process.exit(2); });
`,
    );
    const bundle = path.join(out, 'boards-child.js');
    buildSync({ entryPoints: [entry], outfile: bundle, bundle: true, platform: 'node', format: 'cjs', target: 'node20', logLevel: 'error' });
    return bundle;
  }

  function runAndKill(bundle: string, config: object, afterMs: number): Promise<{ acks: Array<{ seq: number; revision: number }>; session: string; signal: NodeJS.Signals | null; stderr: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [bundle], { env: { ...process.env, RENNET_CHILD: JSON.stringify(config) }, stdio: ['ignore', 'pipe', 'pipe'] });
      const acks: Array<{ seq: number; revision: number }> = [];
      let session = '';
      let pending = '';
      let stderr = '';
      const backstop = setTimeout(() => child.kill('SIGKILL'), 15_000);
      child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        pending += chunk;
        let nl: number;
        while ((nl = pending.indexOf('\n')) !== -1) {
          const [word, a, b] = pending.slice(0, nl).split(' ');
          pending = pending.slice(nl + 1);
          if (word === 'ready') {
            session = a ?? '';
            setTimeout(() => child.kill('SIGKILL'), afterMs);
          }
          if (word === 'ack') acks.push({ seq: Number(a), revision: Number(b) });
        }
      });
      child.on('error', reject);
      child.on('close', (_code, signal) => {
        clearTimeout(backstop);
        resolve({ acks, session, signal, stderr });
      });
    });
  }

  it('every acknowledged board write is there after SIGKILL, events and meta together (8 kills)', async () => {
    const dir = dirs.make();
    const bundle = bundleChild();
    let last = { seq: 0, revision: 0 };
    let total = 0;
    for (let round = 0; round < 8; round++) {
      const run = await runAndKill(bundle, { dir, wasmPath: WASM_PATH, compactEvery: [4, 9, 50][round % 3] }, 20 + Math.floor(Math.random() * 80));
      assert.equal(run.signal, 'SIGKILL', run.stderr);
      total += run.acks.length;
      if (run.acks.length > 0) last = run.acks[run.acks.length - 1]!;
      const store = await Store.open(dir, { wasmPath: WASM_PATH });
      try {
        const key = `${run.session}/g-1/flagged`;
        const meta = store.getBoardMeta(key);
        const events = store.readBoardEvents(key);
        events.forEach((e, i) => assert.equal(e.seq, i + 1, 'contiguous'));
        assert.ok((meta?.revision ?? 0) >= last.revision, `acknowledged revision ${last.revision} lost (have ${meta?.revision})`);
        assert.ok(events.length >= last.seq, `acknowledged event ${last.seq} lost (have ${events.length})`);
        // Events and meta are written in one transaction: the meta always covers exactly the log.
        assert.equal(meta?.eventSeq ?? 0, events.length);
        assert.equal(events.length, 2 * (meta?.revision ?? 0));
      } finally {
        store.close();
      }
    }
    assert.ok(total > 0, 'the children acknowledged some writes');
    // Eight child processes and eight store opens: on a loaded 2-core machine this outlasts the default timeout.
  }).timeout(180_000);
});
