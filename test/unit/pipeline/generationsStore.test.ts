import assert from 'node:assert/strict';
import { DurableDb } from '../../../host/store/durable-db';
import { MIGRATIONS, migrate } from '../../../host/store/migrations';
import { SCHEMA_VERSION, Store, StoreError, boardKeyOf, type BoardMetaInput } from '../../../host/store';
import { makePatchset } from '../store/helpers';
import { T0, Temp, WASM_PATH } from './fixtures';

const T1 = '2026-12-01T11:00:00.000Z';

function storeError(code: string, pattern?: RegExp) {
  return (error: unknown) => error instanceof StoreError && error.code === code && (pattern === undefined || pattern.test(error.message));
}

describe('store: generations and lane outcomes (migration 3)', function () {
  this.timeout(30_000);
  const temp = new Temp();
  const open: Store[] = [];
  after(() => {
    for (const s of open.splice(0)) s.close();
    temp.cleanup();
  });

  async function fresh(): Promise<{ store: Store; sessionId: string }> {
    const store = await Store.open(temp.dir('rennet-gen-'), { wasmPath: WASM_PATH });
    open.push(store);
    const session = store.createSession({ repoRoot: '/repo', target: { kind: 'branch', head: 'feature', base: 'main' }, now: T0 });
    store.putPatchset(makePatchset('one'));
    store.putPatchset(makePatchset('two'));
    return { store, sessionId: session.id };
  }

  const meta = (sessionId: string, generationId: string, patchsetId: string): BoardMetaInput => ({
    sessionId,
    generationId,
    patchsetId,
    lens: 'sequence',
    status: 'drafting',
    absence: null,
    revision: 4,
    nextId: 1,
    document: { title: '', intro_markdown: '', measure: 'reading', prose_register: 'authored' },
    repairs: [],
    lastFinish: null,
    updatedAt: T0,
  });

  it('migrates a version-2 store in place; boards written before it stay', async () => {
    const dir = temp.dir('rennet-gen-migrate-');
    const v2 = await DurableDb.open(dir, { wasmPath: WASM_PATH });
    assert.deepEqual(migrate(v2, MIGRATIONS.slice(0, 2)), { from: 0, to: 2 });
    v2.close();
    const store = await Store.open(dir, { wasmPath: WASM_PATH });
    open.push(store);
    assert.equal(store.schemaVersion, SCHEMA_VERSION);
    assert.equal(SCHEMA_VERSION, 3);
    assert.match(MIGRATIONS[2]!.description, /generations/);
    assert.deepEqual(store.listGenerations('s-none'), []);
  });

  it('appends then freezes: a new generation freezes every live one of its session, in one transaction', async () => {
    const { store, sessionId } = await fresh();
    const g1 = store.createGeneration({ id: 'g-1', sessionId, patchsetId: 'ps-one0000000000000', now: T0 });
    assert.deepEqual([g1.status, g1.frozenAt, g1.timings, g1.spend], ['live', null, [], []]);
    const seq = store.stats().seq;
    store.createGeneration({ id: 'g-2', sessionId, patchsetId: 'ps-two0000000000000', now: T1 });
    assert.equal(store.stats().seq, seq + 1, 'one journal record');
    assert.deepEqual(
      store.listGenerations(sessionId).map((g) => [g.id, g.status, g.frozenAt]),
      [
        ['g-1', 'frozen', T1],
        ['g-2', 'live', null],
      ],
    );
    assert.throws(() => store.createGeneration({ id: 'g-2', sessionId, patchsetId: 'ps-two0000000000000', now: T1 }), storeError('invalid-request', /already exists/));
    assert.throws(() => store.createGeneration({ id: 'g-3', sessionId: 's-nope', patchsetId: 'ps-two0000000000000', now: T1 }), storeError('not-found'));
    assert.throws(() => store.createGeneration({ id: 'g-3', sessionId, patchsetId: 'ps-nope', now: T1 }), storeError('not-found'));
    assert.throws(() => store.createGeneration({ id: '../g', sessionId, patchsetId: 'ps-two0000000000000', now: T1 }), storeError('invalid-request'));
    assert.equal(store.freezeGeneration('g-2', T1).status, 'frozen');
    assert.equal(store.freezeGeneration('g-2', T1).status, 'frozen', 'idempotent');
  });

  it('a lane outcome must be coherent, and an absence one its lens admits (refused at the write)', async () => {
    const { store, sessionId } = await fresh();
    store.createGeneration({ id: 'g-1', sessionId, patchsetId: 'ps-one0000000000000', now: T0 });
    const base = { generationId: 'g-1', absence: null, failure: null, attempts: 0, now: T0 } as const;
    assert.throws(() => store.putLaneOutcome({ ...base, lens: 'sequence', state: 'absent', absence: 'no-decisions' }), storeError('invalid-request', /does not admit the absence no-decisions/));
    assert.throws(() => store.putLaneOutcome({ ...base, lens: 'design', state: 'absent', absence: 'spec-only' }), storeError('invalid-request'));
    assert.throws(() => store.putLaneOutcome({ ...base, lens: 'decisions', state: 'absent' }), storeError('invalid-request', /names its absence/));
    assert.throws(() => store.putLaneOutcome({ ...base, lens: 'decisions', state: 'failed' }), storeError('invalid-request'));
    assert.throws(() => store.putLaneOutcome({ ...base, lens: 'decisions', state: 'settled', absence: 'no-decisions' }), storeError('invalid-request'));
    assert.throws(() => store.putLaneOutcome({ ...base, generationId: 'g-x', lens: 'decisions', state: 'settled' }), storeError('not-found'));
    store.putLaneOutcome({ ...base, lens: 'decisions', state: 'absent', absence: 'spec-only' });
    store.putLaneOutcome({ ...base, lens: 'noise', state: 'failed', failure: { message: 'Noise cannot be derived', retryable: null, attempts: 0 } });
    store.putLaneOutcome({ ...base, lens: 'design', state: 'settled', attempts: 2 });
    assert.deepEqual(
      store.listLaneOutcomes('g-1').map((o) => [o.lens, o.state, o.absence, o.failure === null ? 'n/a' : o.failure.retryable, o.attempts]),
      [
        ['design', 'settled', null, 'n/a', 2],
        ['decisions', 'absent', 'spec-only', 'n/a', 0],
        ['noise', 'failed', null, null, 0],
      ],
    );
  });

  it('timings and spend are validated records on the generation', async () => {
    const { store, sessionId } = await fresh();
    store.createGeneration({ id: 'g-1', sessionId, patchsetId: 'ps-one0000000000000', now: T0 });
    const timing = { phase: 'lens-draft' as const, lens: 'sequence' as const, seat: 'sequence:drafter', startedAt: T0, durationMs: 12 };
    const spend = {
      seat: 'sequence:drafter',
      lens: 'sequence' as const,
      role: 'drafter' as const,
      harness: 'scripted',
      model: null,
      durationMs: 12,
      inputTokens: null,
      outputTokens: null,
      toolCalls: 3,
      refusals: 1,
      priceUsd: null,
    };
    store.putGenerationRecords('g-1', { timings: [timing], spend: [spend] }, T1);
    assert.deepEqual(store.getGeneration('g-1')!.timings, [timing]);
    assert.deepEqual(store.getGeneration('g-1')!.spend, [spend]);
    assert.throws(() => store.putGenerationRecords('g-1', { timings: [{ ...timing, durationMs: -1 }], spend: [] }, T1), storeError('invalid-request'));
  });

  it('clearLane removes the metadata and the outcome in one record, keeps the element log, and remembers the revision floor', async () => {
    const { store, sessionId } = await fresh();
    store.createGeneration({ id: 'g-1', sessionId, patchsetId: 'ps-one0000000000000', now: T0 });
    const m = meta(sessionId, 'g-1', 'ps-one0000000000000');
    store.commitBoardWrite(m, [{ verb: 'board.opened', payload: { elements: [] } }]);
    store.putLaneOutcome({ generationId: 'g-1', lens: 'sequence', state: 'failed', absence: null, failure: { message: 'x', retryable: true, attempts: 3 }, attempts: 3, now: T0 });
    const key = boardKeyOf(m);
    const seq = store.stats().seq;
    assert.equal(store.clearLane('g-1', 'sequence', key, T1), 4);
    assert.equal(store.stats().seq, seq + 1);
    assert.equal(store.getBoardMeta(key), undefined);
    assert.deepEqual(store.listLaneOutcomes('g-1'), []);
    assert.equal(store.readBoardEvents(key).length, 1, 'the log is history, not deleted');
    assert.equal(store.clearLane('g-1', 'sequence', key, T1), 4, 'repeatable: the floor survives the metadata');
    assert.deepEqual(store.getGeneration('g-1')!.revisionFloors, { sequence: 4 });
  });

  it('refuses every write filed under a frozen generation; patchset-scoped boards are untouched by the rule', async () => {
    const { store, sessionId } = await fresh();
    store.createGeneration({ id: 'g-1', sessionId, patchsetId: 'ps-one0000000000000', now: T0 });
    const m = meta(sessionId, 'g-1', 'ps-one0000000000000');
    store.commitBoardWrite(m, [{ verb: 'board.opened', payload: { elements: [] } }]);
    store.createGeneration({ id: 'g-2', sessionId, patchsetId: 'ps-two0000000000000', now: T1 });
    const frozen = storeError('invalid-request', /g-1 is frozen/);
    assert.throws(() => store.commitBoardWrite(m, []), frozen);
    assert.throws(() => store.putBoardMeta(m), frozen);
    assert.throws(() => store.appendBoardEvents(boardKeyOf(m), [{ verb: 'element.removed', payload: { id: 'e1' } }], T1), frozen);
    assert.throws(() => store.putLaneOutcome({ generationId: 'g-1', lens: 'sequence', state: 'settled', absence: null, failure: null, attempts: 0, now: T1 }), frozen);
    assert.throws(() => store.putGenerationRecords('g-1', { timings: [], spend: [] }, T1), frozen);
    assert.throws(() => store.clearLane('g-1', 'sequence', boardKeyOf(m), T1), frozen);
    assert.equal(store.getBoardMeta(boardKeyOf(m))!.revision, 4, 'reads are unaffected');
    store.putBoardMeta({ ...m, generationId: null });
    store.putBoardMeta({ ...m, generationId: 'g-2', patchsetId: 'ps-two0000000000000' });
  });
});
