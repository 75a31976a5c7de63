import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { persistOpenedBoard, persistVerb } from '../../../host/board/persist';
import type { BoardState, VerbCall } from '../../../host/board/state';
import { applyVerb } from '../../../host/board/writer';
import { FROZEN_NOTE, INTERRUPTED_MESSAGE, RESUMABLE_NOTE, readGenerationSnapshot } from '../../../host/generation/generationSnapshot';
import { Store, claimGenerationRun } from '../../../host/store';
import { GenerationSnapshot, excerptKey } from '../../../protocol/review';
import { T0, Temp, WASM_PATH, sessionFor } from '../pipeline/fixtures';
import { boardFor, changeFixture, cite, contextFor, type ChangeFixture } from '../board/writerFixtures';

/**
 * readGenerationSnapshot carries the excerpts of every code_ref and the citation marks, read from
 * the generation's patchset in a real store; a patchset the store cannot read is stated on every
 * excerpt.
 */
describe('generation/generationSnapshot: excerpts and citation marks', function () {
  this.timeout(60_000);
  const temp = new Temp();
  let fx: ChangeFixture;
  const open: Store[] = [];
  before(async () => {
    fx = await changeFixture();
  });
  after(() => {
    for (const s of open.splice(0)) s.close();
    fx?.repo.cleanup();
    temp.cleanup();
  });

  /** A store holding one generation with a Flagged board written verb by verb, as a seat writes it. */
  async function filed(): Promise<{ dir: string; store: Store; generationId: string }> {
    const dir = temp.dir('rennet-snapshot-');
    const store = await Store.open(dir, { wasmPath: WASM_PATH });
    open.push(store);
    const sessionId = sessionFor(store, fx.repo, fx.patchset);
    const generationId = 'g-snapshot';
    store.createGeneration({ id: generationId, sessionId, patchsetId: fx.patchset.id, now: T0 });
    const ctx = contextFor(fx.patchset, 'claude');
    const place = { sessionId, generationId };
    let board: BoardState = boardFor('flagged', fx.patchset);
    persistOpenedBoard(store, place, board, T0);
    const calls: VerbCall[] = [
      { verb: 'add', kind: 'section', input: { title: 'Parsing' } },
      cite('src/app.ts', 'head', 10),
      cite('src/gone.ts', 'base', 2, 3),
      cite('src/added.ts', 'head', 1),
      {
        verb: 'add',
        kind: 'finding',
        input: {
          severity: 'major',
          category: 'correctness',
          title: 'Line ten breaks parse',
          body_markdown: 'See src/app.ts:31 too.',
          remedy_markdown: 'Fix it.',
          anchor: ['e2', 'e3'],
          parent_id: 'e1',
        },
      },
    ];
    for (const call of calls) {
      const { state, result } = applyVerb(board, call, ctx);
      assert.equal(result.status, 'accepted', JSON.stringify(result));
      persistVerb(store, place, board, state, call, T0);
      board = state;
    }
    return { dir, store, generationId };
  }

  it('carries an excerpt for every code_ref span and a mark for every citation', async () => {
    const { store, generationId } = await filed();
    const snapshot = readGenerationSnapshot(store, generationId);
    assert.ok(snapshot);
    GenerationSnapshot.parse(snapshot);
    assert.deepEqual(Object.keys(snapshot.excerpts).sort(), ['base|2-3|src/gone.ts', 'head|1-1|src/added.ts', 'head|10-10|src/app.ts']);
    const app = snapshot.excerpts[excerptKey({ path: 'src/app.ts', side: 'head', startLine: 10, endLine: 10 })]!;
    assert.equal(app.state, 'captured');
    assert.deepEqual(
      app.lines.map((l) => [l.kind, l.oldLine, l.newLine]),
      [
        ['context', 7, 7],
        ['context', 8, 8],
        ['context', 9, 9],
        ['del', 10, null],
        ['add', null, 10],
        ['context', 11, 11],
        ['context', 12, 12],
        ['context', 13, 13],
      ],
    );
    assert.deepEqual(
      snapshot.excerpts['base|2-3|src/gone.ts']?.lines.map((l) => l.kind),
      ['del', 'del', 'del', 'del', 'del', 'del'],
    );
    assert.deepEqual(
      snapshot.citations.map((m) => `${m.lens} ${m.elementId} ${m.path}:${m.startLine} ${m.side}`),
      ['flagged e4 src/added.ts:1 head', 'flagged e5 src/app.ts:10 head', 'flagged e5 src/gone.ts:2 base', 'flagged e5 src/app.ts:31 head'],
    );
  });

  it('a patchset the store cannot read leaves every excerpt not-captured, saying why; the marks stay', async () => {
    const { dir, store, generationId } = await filed();
    store.close();
    open.splice(open.indexOf(store), 1);
    const file = join(dir, 'patchsets', `${fx.patchset.id}.json`);
    assert.ok(existsSync(file), file);
    rmSync(file);
    const reopened = await Store.open(dir, { wasmPath: WASM_PATH });
    open.push(reopened);
    const snapshot = readGenerationSnapshot(reopened, generationId);
    assert.ok(snapshot);
    const excerpts = Object.values(snapshot.excerpts);
    assert.equal(excerpts.length, 3);
    for (const excerpt of excerpts) {
      assert.equal(excerpt.state, 'not-captured');
      assert.deepEqual(excerpt.lines, []);
      assert.match(excerpt.note ?? '', new RegExp(`The capture this generation reads \\(${fx.patchset.id}\\) could not be read from the store`));
    }
    assert.equal(snapshot.citations.length, 4);
  });
  it('a lane with no outcome and no live run reads as failed, stopped, and — while the generation is live — resumable', async () => {
    const { store, generationId } = await filed();
    store.putLaneOutcome({ generationId, lens: 'design', state: 'settled', absence: null, failure: null, attempts: 0, now: T0 });
    const live = readGenerationSnapshot(store, generationId);
    assert.ok(live);
    assert.equal(live.lanes[0]!.state, 'settled');
    for (const lane of live.lanes.slice(1)) {
      assert.equal(lane.state, 'failed', lane.lens);
      assert.deepEqual(lane.failure, { message: `${INTERRUPTED_MESSAGE} ${RESUMABLE_NOTE}`, retryable: true, attempts: 0 });
    }
    assert.match(RESUMABLE_NOTE, /^Draft again resumes this generation: the boards that settled are kept/);
    // This process's run stopped, with a reason: the reason, then the same note.
    const stopped = readGenerationSnapshot(store, generationId, { stopped: 'the run was cancelled' });
    assert.equal(stopped?.lanes[1]?.failure?.message, `The run drafting this board stopped before it settled: the run was cancelled. ${RESUMABLE_NOTE}`);
    // A run in flight here: its lane states, no failure.
    const inFlight = readGenerationSnapshot(store, generationId, { live: new Map([['flagged', 'working']]) });
    assert.equal(inFlight?.lanes[3]?.state, 'working');
    assert.equal(inFlight?.lanes[3]?.failure, null);
    // Another run holds the generation's run claim (another window's host, the CLI): its lanes are in flight, not stopped.
    const claimed = claimGenerationRun(store.dir, generationId);
    assert.ok(claimed.ok);
    const elsewhere = readGenerationSnapshot(store, generationId);
    assert.deepEqual(
      elsewhere?.lanes.map((l) => [l.state, l.failure]),
      [['settled', null], ...Array.from({ length: 4 }, () => ['working', null])],
    );
    claimed.claim.release();
    assert.equal(readGenerationSnapshot(store, generationId)?.lanes[1]?.state, 'failed', 'released: stopped again');
    // Frozen: a newer generation replaced it, nothing drafts it again.
    store.freezeGeneration(generationId, T0);
    const frozen = readGenerationSnapshot(store, generationId);
    assert.equal(frozen?.lanes[1]?.failure?.message, `${INTERRUPTED_MESSAGE} ${FROZEN_NOTE}`);
    assert.equal(frozen?.lanes[0]?.state, 'settled');
  });
});
