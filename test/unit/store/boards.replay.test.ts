import * as assert from 'node:assert/strict';
import { buildCitationIndex } from '../../../host/board/citations';
import { citedHunkIds, deriveNoiseMembers, proseCitationResolver } from '../../../host/board/noise';
import { BoardReplayError, boardEventsFor, boardMetaOf, boardOpenedEvent, loadBoard, persistOpenedBoard, persistVerb, replayBoard, type BoardEvent } from '../../../host/board/persist';
import { readBoard } from '../../../host/board/read';
import { emptyBoard, type BoardState, type VerbCall, type WriterContext } from '../../../host/board/state';
import { applyVerb, placeNoiseMembers } from '../../../host/board/writer';
import { capturePatchset } from '../../../host/capture/capture';
import { openRepo } from '../../../host/capture/repo';
import { Store, boardKeyOf } from '../../../host/store';
import { BoardElement, type Lens } from '../../../protocol/board';
import type { Patchset } from '../../../protocol/patchset';
import { TestRepo } from '../../fixtures/gitRepo';
import { WASM_PATH, tempDirs } from './helpers';

const T0 = '2025-03-01T00:00:00.000Z';
const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

/** The same board, compared field by field and in creation order (Map equality ignores order). */
function assertSameBoard(actual: BoardState | null, expected: BoardState, note = ''): void {
  assert.ok(actual, `no board ${note}`);
  assert.deepStrictEqual(actual, expected, note);
  assert.deepStrictEqual([...actual.elements.keys()], [...expected.elements.keys()], `creation order ${note}`);
}

describe('board persistence: replay equals the live state', function () {
  this.timeout(60_000);
  const dirs = tempDirs('rennet-replay-');
  let repo: TestRepo;
  let patchset: Patchset;
  let store: Store;
  let sessionId: string;

  before(async () => {
    repo = new TestRepo();
    repo.write('src/a.ts', lines(60)).write('src/b.ts', lines(10));
    repo.commit('base');
    repo.branch('feature');
    repo.write('src/a.ts', lines(60).replace('line 10\n', 'ten\n').replace('line 45\n', 'forty-five\n')).write('src/b.ts', lines(10).replace('line 3', 'three'));
    repo.commit('change');
    const handle = await openRepo(repo.dir);
    assert.ok(handle.ok);
    const captured = await capturePatchset(handle.value, { kind: 'branch', head: 'feature', base: 'main' });
    assert.ok(captured.ok);
    patchset = captured.value;
    store = await Store.open(dirs.make(), { wasmPath: WASM_PATH });
    sessionId = store.createSession({ repoRoot: repo.dir, target: { kind: 'branch', head: 'feature', base: 'main' }, now: T0 }).id;
  });
  after(() => {
    store?.close();
    repo?.cleanup();
    dirs.cleanup();
  });

  const place = (generationId: string) => ({ sessionId, generationId });
  const keyOf = (generationId: string, lens: Lens) => ({ sessionId, generationId, patchsetId: patchset.id, lens });

  /** Drives the real writer, persisting every call, and checks the durable board after each. */
  function drive(generationId: string, initial: BoardState, calls: VerbCall[], ctx: WriterContext, open = true): BoardState {
    let live = initial;
    if (open) persistOpenedBoard(store, place(generationId), live, T0);
    assertSameBoard(loadBoard(store, keyOf(generationId, live.lens)), live, 'before the calls');
    for (const call of calls) {
      const { state, result } = applyVerb(live, call, ctx);
      assert.notEqual(result.status, 'refused', `${call.verb}: ${JSON.stringify(result)}`);
      persistVerb(store, place(generationId), live, state, call, T0);
      live = state;
      assertSameBoard(loadBoard(store, keyOf(generationId, live.lens)), live, `after ${call.verb}`);
    }
    return live;
  }

  it('a Flagged board written by the real writer (document, add, cite, update, remove, finish) replays exactly', () => {
    const ctx: WriterContext = { author: 'claude', citations: buildCitationIndex(patchset) };
    const live = drive(
      'g-flagged',
      emptyBoard('flagged', patchset.id),
      [
        { verb: 'set_document', input: { title: 'Risky edits', intro_markdown: 'The loop bound moved. The reader changed too.' } },
        { verb: 'add', kind: 'section', input: { title: 'Correctness', body_markdown: 'Bounds.' } },
        { verb: 'cite', input: { path: 'src/a.ts', side: 'head', start_line: 10, end_line: 10 } },
        {
          verb: 'add',
          kind: 'finding',
          input: { parent_id: 'e1', severity: 'major', category: 'correctness', title: 'Off by one', body_markdown: 'Breaks the last row.', remedy_markdown: 'Use <=.', anchor: ['e2'] },
        },
        { verb: 'add', kind: 'prose', input: { parent_id: 'e1', markdown: 'Compare src/b.ts:3 as well.' } },
        { verb: 'update', kind: 'finding', input: { id: 'e3', title: 'Off by one at the end', origin: 'codex', agreement: 'concur' } },
        { verb: 'add', kind: 'section', input: { title: 'Scratch' } },
        { verb: 'remove_element', input: { id: 'e5' } },
        { verb: 'finish' },
      ],
      ctx,
    );
    assert.equal(live.status, 'finished');
    assert.deepEqual([...live.elements.keys()], ['e1', 'e2', 'e3', 'e4']);

    // A refused call changes nothing the store holds: no write at all.
    const seq = store.stats().seq;
    const refused = applyVerb(live, { verb: 'update', kind: 'finding', input: { id: 'e99', title: 'x' } }, ctx);
    assert.equal(refused.result.status, 'refused');
    assert.deepEqual(boardEventsFor(live, refused.state, { verb: 'update', kind: 'finding', input: {} }), []);
    assert.equal(persistVerb(store, place('g-flagged'), live, refused.state, { verb: 'update', kind: 'finding', input: {} }, T0), null);
    assert.equal(store.stats().seq, seq);

    // The log says what happened, in order.
    const verbs = store.readBoardEvents(boardKeyOf(keyOf('g-flagged', 'flagged'))).map((e) => e.verb);
    assert.deepEqual(verbs, [
      'board.opened',
      'document.set',
      'element.created',
      'element.created',
      'element.created',
      'element.created',
      'element.updated',
      'element.created',
      'element.removed',
      'status.set',
    ]);
    // Both readers agree: the live draft and the durable board read back the same.
    assert.deepStrictEqual(readBoard(loadBoard(store, keyOf('g-flagged', 'flagged'))!), readBoard(live));
  });

  it('a Noise board (host-placed members from the complement, grouped by update) replays exactly', () => {
    const index = buildCitationIndex(patchset);
    const flaggedCtx: WriterContext = { author: 'claude', citations: index };
    let flagged = emptyBoard('flagged', patchset.id);
    for (const call of [
      { verb: 'cite', input: { path: 'src/a.ts', side: 'head', start_line: 10, end_line: 10 } },
      { verb: 'add', kind: 'prose', input: { markdown: 'And src/b.ts:3 changed.' } },
    ] as VerbCall[]) {
      flagged = applyVerb(flagged, call, flaggedCtx).state;
    }
    const cited = citedHunkIds(flagged, proseCitationResolver(index));
    assert.equal(cited.size, 2);
    const derived = deriveNoiseMembers(patchset, {
      design: { kind: 'absent', absence: 'no-spec' },
      sequence: { kind: 'settled', citedHunkIds: new Set() },
      decisions: { kind: 'absent', absence: 'no-decisions' },
      flagged: { kind: 'settled', citedHunkIds: cited },
    });
    assert.equal(derived.kind, 'members');
    if (derived.kind !== 'members') return;
    assert.equal(derived.members.length, 1, 'only the hunk at a.ts:45 is left');

    const ctx: WriterContext = { author: 'claude', citations: index };
    const opened = emptyBoard('noise', patchset.id);
    persistOpenedBoard(store, place('g-noise'), opened, T0);
    const placed = placeNoiseMembers(opened, derived.members, { ...ctx, author: 'host' });
    assert.equal(placed.result.status, 'accepted', JSON.stringify(placed.result));
    persistVerb(store, place('g-noise'), opened, placed.state, { verb: 'add', kind: 'noise_member', input: {} }, T0);
    assertSameBoard(loadBoard(store, keyOf('g-noise', 'noise')), placed.state, 'after placing members');
    const memberId = placed.ids[0]!;
    const live = drive(
      'g-noise',
      placed.state,
      [
        { verb: 'set_document', input: { title: 'Skippable', intro_markdown: 'One renamed line. Nothing else.' } },
        { verb: 'add', kind: 'noise_group', input: { title: 'Renames', reason: 'A local variable renamed, no behaviour change.' } },
        { verb: 'update', kind: 'noise_member', input: { id: memberId, parent_id: `e${placed.state.nextId}` } },
      ],
      ctx,
      false,
    );
    assert.equal(live.elements.get(memberId)?.parent, `e${placed.state.nextId}`);
    const view = readBoard(loadBoard(store, keyOf('g-noise', 'noise'))!);
    assert.deepEqual(
      view.folds.map((f) => f.counts),
      [[{ key: 'groups', label: 'changed region', count: 1 }]],
    );
  });

  it('survives a reopen of the store', async () => {
    const key = keyOf('g-flagged', 'flagged');
    const before = loadBoard(store, key)!;
    const dir = store.dir;
    store.close();
    store = await Store.open(dir, { wasmPath: WASM_PATH });
    assertSameBoard(loadBoard(store, key), before, 'after reopen');
    assert.equal(loadBoard(store, keyOf('g-none', 'flagged')), null, 'a pair with no persisted board answers null');
  });
});

describe('board persistence: replayBoard by hand', () => {
  const el = (e: Record<string, unknown>): BoardElement =>
    BoardElement.parse({ author: 'claude', seq: Number(String(e.id).slice(1)), parent: null, ...(e.kind === 'section' ? { delta: null } : {}), ...e });

  // BoardElement is a wide union: build lists and maps one element at a time, never from literals.
  function board(lens: Lens, elements: readonly BoardElement[], patch: Partial<BoardState> = {}): BoardState {
    const map = new Map<string, BoardElement>();
    for (const e of elements) map.set(e.id, e);
    return { ...emptyBoard(lens, 'ps-1'), elements: map, ...patch };
  }
  const list = (...elements: BoardElement[]): BoardElement[] => elements;

  it('diffs two states into created/updated/removed/document/status/repairs events, and replays them', () => {
    const s0 = emptyBoard('design', 'ps-1', 'transcribed');
    const a = el({ id: 'e1', kind: 'section', title: 'A' });
    const b = el({ id: 'e2', kind: 'prose', parent: 'e1', markdown: 'text' });
    const s1 = board('design', list(a, b), { document: { ...s0.document, title: 'Spec', prose_register: 'transcribed' }, revision: 1, nextId: 3 });
    const e1 = boardEventsFor(s0, s1, { verb: 'add', kind: 'section', input: {} });
    assert.deepEqual(
      e1.map((e) => e.verb),
      ['document.set', 'element.created', 'element.created'],
    );
    const a2 = el({ ...(a as unknown as Record<string, unknown>), title: 'A2' });
    const c = el({ id: 'e3', kind: 'callout', parent: 'e1', tone: 'note', markdown: 'n' });
    const s2: BoardState = {
      ...s1,
      elements: board('design', list(a2, c)).elements,
      status: 'finished',
      revision: 2,
      nextId: 4,
      repairs: [{ element: 'e3', field: 'anchor', from: 'x', to: 'y' }],
      lastFinish: [],
    };
    const e2 = boardEventsFor(s1, s2, { verb: 'finish' });
    assert.deepEqual(
      e2.map((e) => e.verb),
      ['element.updated', 'element.created', 'element.removed', 'status.set', 'repairs.set'],
    );
    assert.deepEqual((e2[0] as Extract<BoardEvent, { verb: 'element.updated' }>).payload, { call: 'finish', revision: 2, element: a2 });

    const log = [boardOpenedEvent(s0), ...e1, ...e2].map((e, i) => ({ ...JSON.parse(JSON.stringify(e)), seq: i + 1 }));
    const meta = { ...boardMetaOf(s2, { sessionId: 's-1', generationId: null }, T0), eventSeq: log.length };
    assertSameBoard(replayBoard(meta, log), s2);
  });

  it('folds only the events its meta covers, and only the latest attempt', () => {
    const a = el({ id: 'e1', kind: 'section', title: 'First attempt' });
    const b = el({ id: 'e1', kind: 'section', title: 'Second attempt' });
    const fresh = emptyBoard('sequence', 'ps-1');
    const log = [
      boardOpenedEvent(fresh),
      { verb: 'element.created', payload: { call: 'add', revision: 1, element: a } },
      boardOpenedEvent(fresh),
      { verb: 'element.created', payload: { call: 'add', revision: 1, element: b } },
      { verb: 'element.created', payload: { call: 'add', revision: 2, element: el({ id: 'e2', kind: 'section', title: 'Uncommitted' }) } },
    ].map((e, i) => ({ ...e, seq: i + 1 }));
    const live = board('sequence', list(b), { revision: 1, nextId: 2 });
    const meta = { ...boardMetaOf(live, { sessionId: 's-1', generationId: 'g-1' }, T0), eventSeq: 4 };
    assertSameBoard(replayBoard(meta, log), live);
  });

  it('a board opened non-empty (host-placed members first) replays from its opening event', () => {
    const member = el({ id: 'e1', kind: 'noise_member', author: 'host', path: 'a.ts', side: 'head', start_line: 1, end_line: 2, hunk_id: 'h-1', verdict: 'noise', judge: 'deterministic' });
    const initial = board('noise', list(member), { revision: 1, nextId: 2 });
    const log = [boardOpenedEvent(initial)].map((e, i) => ({ ...JSON.parse(JSON.stringify(e)), seq: i + 1 }));
    assertSameBoard(replayBoard({ ...boardMetaOf(initial, { sessionId: 's-1', generationId: null }, T0), eventSeq: 1 }, log), initial);
  });

  it('refuses a log this module did not write', () => {
    const meta = boardMetaOf(emptyBoard('flagged', 'ps-1'), { sessionId: 's-1', generationId: null }, T0);
    const a = el({ id: 'e1', kind: 'section', title: 'A' });
    const bad: Array<[string, Array<{ verb: string; payload: unknown }>]> = [
      ['update of an unknown element', [{ verb: 'element.updated', payload: { element: a } }]],
      ['removal of an unknown element', [{ verb: 'element.removed', payload: { id: 'e9' } }]],
      [
        'a duplicate create',
        [
          { verb: 'element.created', payload: { element: a } },
          { verb: 'element.created', payload: { element: a } },
        ],
      ],
      ['a malformed element', [{ verb: 'element.created', payload: { element: { id: 'e1', kind: 'section' } } }]],
    ];
    for (const [name, log] of bad) assert.throws(() => replayBoard(meta, log), BoardReplayError, name);
  });
});
