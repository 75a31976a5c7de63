import assert from 'node:assert/strict';
import fc from 'fast-check';
import { persistOpenedBoard, persistVerb } from '../../../host/board/persist';
import { touchedIds } from '../../../host/board/seat';
import { emptyBoard, type BoardState, type VerbCall } from '../../../host/board/state';
import { applyVerb } from '../../../host/board/writer';
import { GenerationPusher, markSplice, type GenerationFields } from '../../../host/review/generationPush';
import { readGenerationSnapshot, snapshotCapture } from '../../../host/generation/generationSnapshot';
import { boardKeyOf, Store } from '../../../host/store';
import { LENSES, type Lens } from '../../../protocol/board';
import { applyGenerationDelta, GenerationDelta } from '../../../protocol/generationDelta';
import type { CitationMark, GenerationSnapshot, LaneState } from '../../../protocol/review';
import { T0, Temp, WASM_PATH, sessionFor } from '../pipeline/fixtures';
import { changeFixture, cite, contextFor, type ChangeFixture } from '../board/writerFixtures';

/**
 * The host's delta builder (host/review/generationPush.ts) over a real store: boards written verb
 * by verb as a seat writes them (persisted, then a frame with the ids the write touched), the
 * deltas sent through JSON and the schema as the wire carries them, folded with protocol's
 * applyGenerationDelta — and the fold compared with the generation read whole from the store
 * (readGenerationSnapshot), the same function `rennet/generation/get` answers with.
 */

const content = (snapshot: GenerationSnapshot): unknown => {
  const { revision: _revision, ...rest } = snapshot;
  return JSON.parse(JSON.stringify(rest)) as unknown;
};
/** A delta as the receiving end holds it: JSON, then the schema. */
const wire = (delta: GenerationDelta): GenerationDelta => GenerationDelta.parse(JSON.parse(JSON.stringify(delta)));

describe('review/generationPush: per-lane deltas from seat frames fold to the generation the store reads', function () {
  this.timeout(240_000);
  const temp = new Temp();
  let fx: ChangeFixture;
  let store: Store;
  let sessionId: string;
  let counter = 0;

  before(async () => {
    fx = await changeFixture();
    store = await Store.open(temp.dir('rennet-push-'), { wasmPath: WASM_PATH });
    sessionId = sessionFor(store, fx.repo, fx.patchset);
  });
  after(() => {
    store?.close();
    fx?.repo.cleanup();
    temp.cleanup();
  });

  /** A generation with its five boards open, a pusher opened on its whole read, and the writes a seat would make. */
  function open() {
    const generationId = `g-push-${String(++counter).padStart(4, '0')}`;
    store.createGeneration({ id: generationId, sessionId, patchsetId: fx.patchset.id, now: T0 });
    const place = { sessionId, generationId };
    const ctx = contextFor(fx.patchset, 'claude');
    const boards = new Map<Lens, BoardState>();
    const live = new Map<Lens, LaneState>(LENSES.map((lens) => [lens, 'queued']));
    for (const lens of LENSES) {
      const board = emptyBoard(lens, fx.patchset.id);
      persistOpenedBoard(store, place, board, T0);
      boards.set(lens, board);
    }
    const whole = () => readGenerationSnapshot(store, generationId, { live }) as GenerationSnapshot;
    const pusher = new GenerationPusher(JSON.parse(JSON.stringify(whole())) as GenerationSnapshot, `${generationId}.test`, snapshotCapture(store, fx.patchset.id));
    let fold: GenerationSnapshot = JSON.parse(JSON.stringify(pusher.snapshot)) as GenerationSnapshot;
    const sent: GenerationDelta[] = [];

    /** One verb on a lane: applied, persisted, then its frame noted. Refused verbs change nothing. */
    const write = (lens: Lens, call: VerbCall): { accepted: boolean; id: string | null } => {
      const before = boards.get(lens) as BoardState;
      const { state, result } = applyVerb(before, call, ctx);
      if (result.status !== 'accepted' && result.status !== 'settled') return { accepted: false, id: null };
      persistVerb(store, place, before, state, call, T0);
      boards.set(lens, state);
      pusher.noteFrame({ generation: generationId, lens, kind: 'write', touched: touchedIds(before, state, call, result), board: state });
      return { accepted: true, id: result.status === 'accepted' ? result.id : null };
    };
    /** A lane opened again (a redraft): the old attempt cleared, a fresh board filed, an `opened` frame. */
    const reopen = (lens: Lens) => {
      const floor = store.clearLane(generationId, lens, boardKeyOf({ ...place, patchsetId: fx.patchset.id, lens }), T0);
      const board: BoardState = { ...emptyBoard(lens, fx.patchset.id), revision: floor + 2 };
      persistOpenedBoard(store, place, board, T0);
      boards.set(lens, board);
      live.set(lens, 'working');
      pusher.noteFrame({ generation: generationId, lens, kind: 'opened', touched: [], board });
      pusher.noteLane(lens, { state: 'working', absence: null, failure: null });
    };
    const lane = (lens: Lens, state: LaneState) => {
      live.set(lens, state);
      pusher.noteLane(lens, { state, absence: null, failure: null });
    };
    const fields = (): GenerationFields => {
      const row = store.getGeneration(generationId)!;
      return { status: row.status, spend: row.spend, timings: row.timings, frozen: pusher.snapshot.frozen };
    };
    /** The deltas of one throttle tick, through the wire, folded as a receiver folds them. */
    const drain = (): GenerationDelta[] => {
      const deltas = pusher.drain(fields()).map(wire);
      for (const delta of deltas) {
        const applied = applyGenerationDelta(fold, delta);
        assert.ok(applied.ok, applied.ok ? '' : `${applied.refusal}: ${applied.message}`);
        fold = applied.snapshot;
      }
      sent.push(...deltas);
      return deltas;
    };
    return { generationId, boards, live, pusher, write, reopen, lane, drain, whole, sent, fold: () => fold };
  }

  it('one write: one delta with the element it touched, its fold lines, its marks and its excerpt — nothing of the other lanes', () => {
    const g = open();
    const section = g.write('flagged', { verb: 'add', kind: 'section', input: { title: 'Parsing' } });
    g.drain();
    const ref = g.write('flagged', cite('src/app.ts', 'head', 10));
    const prose = g.write('flagged', { verb: 'add', kind: 'prose', input: { markdown: 'Line ten moved: src/app.ts:31.', parent_id: section.id } });
    const deltas = g.drain();
    assert.equal(deltas.length, 1, 'one lane changed, one delta');
    const [delta] = deltas as [GenerationDelta];
    assert.equal(delta.lane?.lens, 'flagged');
    assert.deepEqual(
      delta.lane?.board?.upserted.map((e) => e.id),
      [ref.id, prose.id],
      'only the touched elements, whole',
    );
    assert.deepEqual(delta.lane?.board?.removed, []);
    assert.equal(delta.lane?.board?.replace, false);
    assert.deepEqual(Object.keys(delta.excerpts?.upserted ?? {}), ['head|10-10|src/app.ts'], "the new span's excerpt, and no other");
    assert.ok(delta.lane?.citations, "the lane's marks moved");
    assert.ok(delta.lane.citations.insert.every((m) => m.lens === 'flagged'));
    assert.equal(delta.baseRevision + 1, delta.revision);
    assert.deepEqual(content(g.fold()), content(g.whole()));
  });

  it('a removal names the id and takes its excerpt with it; a lane opened again is sent whole', () => {
    const g = open();
    const ref = g.write('sequence', cite('src/gone.ts', 'base', 2, 3));
    g.write('sequence', { verb: 'add', kind: 'section', input: { title: 'Walk' } });
    g.drain();
    g.write('sequence', { verb: 'remove_element', input: { id: ref.id } });
    const [removal] = g.drain() as [GenerationDelta];
    assert.deepEqual(removal.lane?.board?.removed, [ref.id]);
    assert.deepEqual(removal.lane?.board?.upserted, []);
    assert.deepEqual(removal.excerpts?.removed, ['base|2-3|src/gone.ts']);
    assert.deepEqual(content(g.fold()), content(g.whole()));

    g.reopen('sequence');
    g.write('sequence', { verb: 'add', kind: 'section', input: { title: 'Again' } });
    const [reopened] = g.drain() as [GenerationDelta];
    assert.equal(reopened.lane?.board?.replace, true);
    assert.equal(reopened.lane?.state, 'working');
    assert.deepEqual(
      reopened.lane?.board?.upserted.map((e) => e.kind),
      ['section'],
      'the new attempt whole: the old elements are gone',
    );
    assert.deepEqual(content(g.fold()), content(g.whole()));
  });

  it('a lane change alone carries the state, no board; spend and timings ride the next delta, or one of their own', () => {
    const g = open();
    g.lane('design', 'working');
    const [state] = g.drain() as [GenerationDelta];
    assert.deepEqual(state.lane, { lens: 'design', state: 'working' });
    assert.equal(state.excerpts, undefined);
    assert.deepEqual(g.drain(), [], 'nothing noted, nothing sent');

    store.putGenerationRecords(g.generationId, { timings: [{ phase: 'first-element', lens: null, seat: null, startedAt: T0, durationMs: 12 }], spend: [] }, T0);
    const [records] = g.drain() as [GenerationDelta];
    assert.equal(records.lane, null);
    assert.deepEqual(
      records.generation?.timings?.map((t) => t.phase),
      ['first-element'],
    );
    assert.deepEqual(content(g.fold()), content(g.whole()));
  });

  it('reconcile: nothing to send when the stream was exact; a write no frame carried is sent and named', () => {
    const g = open();
    g.write('decisions', { verb: 'add', kind: 'section', input: { title: 'Choices' } });
    g.drain();
    const exact = g.pusher.reconcile(JSON.parse(JSON.stringify(g.whole())) as GenerationSnapshot);
    assert.deepEqual(exact, { deltas: [], repaired: [] });

    // A write persisted without its frame: only the store knows it.
    const before = g.boards.get('decisions')!;
    const call: VerbCall = { verb: 'add', kind: 'section', input: { title: 'Unseen' } };
    const { state } = applyVerb(before, call, contextFor(fx.patchset, 'claude'));
    persistVerb(store, { sessionId, generationId: g.generationId }, before, state, call, T0);
    const repaired = g.pusher.reconcile(JSON.parse(JSON.stringify(g.whole())) as GenerationSnapshot);
    assert.deepEqual(repaired.repaired, [{ lens: 'decisions', ids: ['e2'] }]);
    let fold = g.fold();
    for (const delta of repaired.deltas.map(wire)) {
      const applied = applyGenerationDelta(fold, delta);
      assert.ok(applied.ok, applied.ok ? '' : applied.message);
      fold = applied.snapshot;
    }
    assert.deepEqual(content(fold), content(g.whole()));
  });

  it('property: any sequence of writes, removals, reopenings and lane changes, drained at any points, folds to exactly the whole read', () => {
    const SPANS: Array<[string, 'base' | 'head', number, number]> = [
      ['src/app.ts', 'head', 10, 10],
      ['src/app.ts', 'head', 30, 32],
      ['src/gone.ts', 'base', 2, 3],
      ['src/added.ts', 'head', 1, 2],
      ['src/new_name.ts', 'head', 15, 15],
      ['README.md', 'head', 2, 2],
      ['src/nowhere.ts', 'head', 1, 1],
    ];
    const PROSE = ['Plain words.', 'See src/app.ts:10.', 'Also src/added.ts:1-2 and README.md:2.', 'A wrong one: src/app.ts:900.', 'new_name.ts:15 reads so.'];
    const lens = fc.constantFrom(...LENSES);
    const op = fc.oneof(
      { weight: 4, arbitrary: fc.record({ kind: fc.constant('section' as const), lens, title: fc.string({ maxLength: 12 }) }) },
      { weight: 4, arbitrary: fc.record({ kind: fc.constant('prose' as const), lens, text: fc.constantFrom(...PROSE), parent: fc.nat() }) },
      { weight: 4, arbitrary: fc.record({ kind: fc.constant('cite' as const), lens, span: fc.constantFrom(...SPANS), parent: fc.nat() }) },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant('callout' as const), lens, text: fc.constantFrom(...PROSE), parent: fc.nat() }) },
      { weight: 3, arbitrary: fc.record({ kind: fc.constant('update' as const), lens, pick: fc.nat(), text: fc.constantFrom(...PROSE) }) },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant('remove' as const), lens, pick: fc.nat() }) },
      { weight: 4, arbitrary: fc.record({ kind: fc.constant('move' as const), lens, pick: fc.nat(), parent: fc.nat() }) },
      { weight: 3, arbitrary: fc.record({ kind: fc.constant('finding' as const), refs: fc.array(fc.nat(), { minLength: 1, maxLength: 2 }), parent: fc.nat(), text: fc.constantFrom(...PROSE) }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('document' as const), lens, text: fc.constantFrom(...PROSE) }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('reopen' as const), lens }) },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant('lane' as const), lens, state: fc.constantFrom<LaneState>('waiting', 'working') }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('records' as const), ms: fc.nat({ max: 5000 }) }) },
      { weight: 4, arbitrary: fc.constant({ kind: 'drain' as const }) },
    );
    fc.assert(
      fc.property(fc.array(op, { minLength: 10, maxLength: 60, size: 'max' }), (ops) => {
        const g = open();
        const ids = (l: Lens, kinds?: readonly string[]) => [...g.boards.get(l)!.elements.values()].filter((e) => !kinds || kinds.includes(e.kind)).map((e) => e.id);
        const pick = <T>(xs: readonly T[], n: number): T | undefined => (xs.length > 0 ? xs[n % xs.length] : undefined);
        for (const o of ops) {
          switch (o.kind) {
            case 'section':
              g.write(o.lens, { verb: 'add', kind: 'section', input: { title: o.title || 'Untitled' } });
              break;
            case 'prose':
            case 'callout': {
              const parent = pick(ids(o.lens, ['section']), o.parent);
              g.write(o.lens, { verb: 'add', kind: o.kind, input: { markdown: o.text, ...(o.kind === 'callout' ? { tone: 'note' } : {}), ...(parent ? { parent_id: parent } : {}) } });
              break;
            }
            case 'cite': {
              const [path, side, start, end] = o.span;
              g.write(o.lens, cite(path, side, start, end));
              break;
            }
            case 'update': {
              const id = pick(ids(o.lens, ['section', 'prose']), o.pick);
              const element = id ? g.boards.get(o.lens)!.elements.get(id) : undefined;
              if (element) g.write(o.lens, { verb: 'update', kind: element.kind, input: element.kind === 'section' ? { id, title: o.text } : { id, markdown: o.text } });
              break;
            }
            case 'move': {
              // Re-parent an element under a section: marks and fold lines follow their parents.
              const id = pick(ids(o.lens), o.pick);
              const element = id ? g.boards.get(o.lens)!.elements.get(id) : undefined;
              const parent = pick(
                ids(o.lens, ['section']).filter((s) => s !== id),
                o.parent,
              );
              if (element && parent) g.write(o.lens, { verb: 'update', kind: element.kind, input: { id, parent_id: parent } });
              break;
            }
            case 'finding': {
              const refs = ids('flagged', ['code_ref']);
              const anchor = [...new Set(o.refs.map((n) => pick(refs, n)).filter((r): r is string => r !== undefined))];
              const parent = pick(ids('flagged', ['section']), o.parent);
              if (anchor.length > 0) {
                g.write('flagged', {
                  verb: 'add',
                  kind: 'finding',
                  input: {
                    severity: 'major',
                    category: 'correctness',
                    title: `Finding: ${o.text}`,
                    body_markdown: o.text,
                    remedy_markdown: 'Fix it.',
                    anchor,
                    ...(parent ? { parent_id: parent } : {}),
                  },
                });
              }
              break;
            }
            case 'remove': {
              const id = pick(ids(o.lens), o.pick);
              if (id) g.write(o.lens, { verb: 'remove_element', input: { id } });
              break;
            }
            case 'document':
              g.write(o.lens, { verb: 'set_document', input: { title: 'Parsing changes', intro_markdown: o.text } });
              break;
            case 'reopen':
              g.reopen(o.lens);
              break;
            case 'lane':
              g.lane(o.lens, o.state);
              break;
            case 'records':
              store.putGenerationRecords(g.generationId, { timings: [{ phase: 'reveal', lens: null, seat: null, startedAt: T0, durationMs: o.ms }], spend: [] }, T0);
              break;
            case 'drain':
              g.drain();
              break;
          }
        }
        g.drain();
        const whole = g.whole();
        assert.deepEqual(content(g.fold()), content(whole));
        assert.deepEqual(content(g.pusher.snapshot), content(whole), "the pusher's own copy is what it sent");
        assert.deepEqual(g.pusher.reconcile(JSON.parse(JSON.stringify(whole)) as GenerationSnapshot).repaired, [], 'nothing for the end of the run to repair');
        // Revisions run one by one on one stream.
        g.sent.forEach((d, i) => assert.equal(d.revision, i + 1));
      }),
      { numRuns: 60 },
    );
  });
});

describe('review/generationPush: markSplice', () => {
  const mark = (elementId: string, startLine = 1): CitationMark => ({ lens: 'flagged', elementId, path: 'a.ts', side: 'head', startLine, endLine: startLine, claim: elementId });
  it('keeps the common head and tail, and says null when nothing moved', () => {
    const a = [mark('e1'), mark('e2'), mark('e3')];
    assert.equal(
      markSplice(
        a,
        a.map((m) => ({ ...m })),
      ),
      null,
    );
    assert.deepEqual(markSplice(a, [mark('e1'), mark('e2'), mark('e3'), mark('e4')]), { start: 3, deleteCount: 0, insert: [mark('e4')] });
    assert.deepEqual(markSplice(a, [mark('e1'), mark('e3')]), { start: 1, deleteCount: 1, insert: [] });
    assert.deepEqual(markSplice(a, [mark('e1'), mark('e2', 9), mark('e3')]), { start: 1, deleteCount: 1, insert: [mark('e2', 9)] });
    assert.deepEqual(markSplice([], [mark('e1')]), { start: 0, deleteCount: 0, insert: [mark('e1')] });
  });
});
