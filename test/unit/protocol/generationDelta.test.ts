import assert from 'node:assert/strict';
import fc from 'fast-check';
import { markSplice } from '../../../host/review/generationPush';
import { LENSES, type BoardElement, type Lens } from '../../../protocol/board';
import { applyGenerationDelta, GenerationDelta, laneMarkRun, sameJson, type LanePatch } from '../../../protocol/generationDelta';
import { GenerationSnapshot, type CitationMark } from '../../../protocol/review';
import { ToWebview } from '../../../protocol/webview';
import { generation } from '../webview/boardFixtures';

/**
 * protocol/generationDelta.ts: the one fold of a generation delta, run by the host on its own copy,
 * by the extension and by the panel. Fixtures are the webview's board fixtures (real board views
 * through the host's reader, excerpts and marks from the host's builders).
 */

const STREAM = 'g-0011223344556677.s1';
const held = (n = 0): GenerationSnapshot => ({ ...generation(), revision: { stream: STREAM, n } });
const laneOf = (s: GenerationSnapshot, lens: Lens) => s.lanes.find((l) => l.lens === lens)!;
const boardOf = (s: GenerationSnapshot, lens: Lens) => laneOf(s, lens).board!;

function delta(base: number, lane: LanePatch | null, extra: Partial<GenerationDelta> = {}): GenerationDelta {
  return GenerationDelta.parse({ sessionId: 'ses-1', generationId: 'g-0011223344556677', stream: STREAM, baseRevision: base, revision: base + 1, lane, ...extra });
}

function boardPatch(s: GenerationSnapshot, lens: Lens, upserted: BoardElement[], removed: string[] = []) {
  const board = boardOf(s, lens);
  return { replace: false, status: board.status, absence: board.absence, revision: board.revision + 1, upserted, removed };
}

function applied(s: GenerationSnapshot | null, d: GenerationDelta): GenerationSnapshot {
  const outcome = applyGenerationDelta(s, d);
  assert.ok(outcome.ok, outcome.ok ? '' : `${outcome.refusal}: ${outcome.message}`);
  return outcome.snapshot;
}

describe('protocol/generationDelta: applyGenerationDelta', () => {
  it('an update keeps the element in place, a new id goes last, a removed id leaves; everything else stays the same object', () => {
    const s = held();
    const flagged = boardOf(s, 'flagged');
    const [first, second] = flagged.elements as [BoardElement, BoardElement];
    const changed = { ...second, ...(second.kind === 'section' ? { title: 'Renamed' } : {}), seq: 99 } as BoardElement;
    const added = { ...first, id: 'e-new', seq: 100 } as BoardElement;
    const next = applied(s, delta(0, { lens: 'flagged', board: boardPatch(s, 'flagged', [changed, added], [first.id]) }));
    const ids = boardOf(next, 'flagged').elements.map((e) => e.id);
    assert.deepEqual(ids, [...flagged.elements.slice(1).map((e) => e.id), 'e-new']);
    assert.deepEqual(boardOf(next, 'flagged').elements[0], changed, 'the update kept its place (first, once the removed one left)');
    assert.equal(boardOf(next, 'flagged').elements[1], flagged.elements[2], 'an element the delta does not name is the same object');
    for (const lens of LENSES.filter((l) => l !== 'flagged')) assert.equal(laneOf(next, lens), laneOf(s, lens), `${lens} is the same lane object`);
    assert.equal(next.excerpts, s.excerpts, 'no excerpt patch: the same excerpts');
    assert.equal(next.citations, s.citations, 'no marks splice: the same marks');
    assert.deepEqual(next.revision, { stream: STREAM, n: 1 });
    assert.equal(boardOf(next, 'flagged').revision, flagged.revision + 1);
    assert.equal(boardOf(next, 'flagged').folds, flagged.folds, 'fold lines not sent: kept');
    assert.equal(s.revision?.n, 0, 'the input is not changed');
  });

  it("a replaced board is the upserted elements, its document and folds; a null board clears the lane's", () => {
    const s = held();
    const design = boardOf(s, 'design');
    const replaced = applied(
      s,
      delta(0, {
        lens: 'design',
        state: 'working',
        board: { replace: true, document: { ...design.document, title: 'Again' }, status: 'drafting', absence: null, revision: 7, upserted: [], removed: [], folds: [] },
      }),
    );
    assert.deepEqual(boardOf(replaced, 'design').elements, []);
    assert.equal(boardOf(replaced, 'design').document.title, 'Again');
    assert.equal(laneOf(replaced, 'design').state, 'working');
    const gone = applied(replaced, delta(1, { lens: 'design', board: null }));
    assert.equal(laneOf(gone, 'design').board, null);
    // A lane with no board takes only a replacement.
    const refused = applyGenerationDelta(gone, delta(2, { lens: 'design', board: { replace: false, status: 'drafting', absence: null, revision: 8, upserted: [], removed: [] } }));
    assert.equal(refused.ok ? 'ok' : refused.refusal, 'malformed');
  });

  it('settlement, round verdict, excerpts and generation-wide fields', () => {
    const s = held();
    const key = Object.keys(s.excerpts)[0]!;
    const excerpt = s.excerpts[key]!;
    const next = applied(
      s,
      delta(
        0,
        { lens: 'noise', state: 'failed', failure: { message: 'stopped', retryable: true, attempts: 1 }, roundDelta: { verdict: 'reworked', round: 2, added: 1, reworked: 0, removed: [] } },
        { excerpts: { upserted: { 'head|1-1|new.ts': { ...excerpt, path: 'new.ts', startLine: 1, endLine: 1 } }, removed: [key] }, generation: { status: 'frozen', spend: [], priorReview: null } },
      ),
    );
    const noise = laneOf(next, 'noise');
    assert.equal(noise.state, 'failed');
    assert.equal(noise.failure?.message, 'stopped');
    assert.equal(noise.delta?.verdict, 'reworked');
    assert.ok(!(key in next.excerpts) && 'head|1-1|new.ts' in next.excerpts);
    assert.equal(next.status, 'frozen');
    assert.deepEqual(next.spend, []);
    assert.equal(next.timings, s.timings);
    const cleared = applied(next, delta(1, { lens: 'noise', roundDelta: null }));
    assert.equal('delta' in laneOf(cleared, 'noise'), false);
  });

  it("a marks splice works inside the lane's run, even an empty one, and never touches another lane's marks", () => {
    const s = held();
    const run = laneMarkRun(s.citations, 'decisions');
    const mark: CitationMark = { lens: 'decisions', elementId: 'e-x', path: 'src/a.ts', side: 'head', startLine: 3, endLine: 3, claim: 'x' };
    const next = applied(s, delta(0, { lens: 'decisions', citations: { start: 0, deleteCount: run.end - run.start, insert: [mark] } }));
    assert.deepEqual(
      next.citations.filter((m) => m.lens === 'decisions'),
      [mark],
    );
    assert.deepEqual(
      next.citations.filter((m) => m.lens !== 'decisions'),
      s.citations.filter((m) => m.lens !== 'decisions'),
    );
    // Past the run, or another lens's mark: refused whole.
    for (const citations of [
      { start: 1, deleteCount: 1, insert: [] },
      { start: 0, deleteCount: 0, insert: [{ ...mark, lens: 'flagged' as const }] },
    ]) {
      const refused = applyGenerationDelta(next, delta(1, { lens: 'decisions', citations }));
      assert.equal(refused.ok ? 'ok' : refused.refusal, 'malformed');
    }
    // A lane with no marks yet: inserted where its run belongs (lens order).
    const empty = { ...s, citations: s.citations.filter((m) => m.lens !== 'decisions') };
    const placed = applied(empty, delta(0, { lens: 'decisions', citations: { start: 0, deleteCount: 0, insert: [mark] } }));
    assert.deepEqual(
      placed.citations.map((m) => m.lens),
      [
        ...s.citations.filter((m) => LENSES.indexOf(m.lens) < LENSES.indexOf('decisions')).map((m) => m.lens),
        'decisions',
        ...s.citations.filter((m) => LENSES.indexOf(m.lens) > LENSES.indexOf('decisions')).map((m) => m.lens),
      ],
    );
  });

  it('refuses a delta that is not for what is held, saying why, and changes nothing', () => {
    const s = held(3);
    const cases: Array<[GenerationSnapshot | null, GenerationDelta, string]> = [
      [null, delta(3, null), 'no-generation'],
      [{ ...s, generationId: 'g-other' }, delta(3, null), 'other-generation'],
      [{ ...s, revision: undefined }, delta(3, null), 'no-stream'],
      [{ ...s, revision: { stream: 'g-0011223344556677.s2', n: 3 } }, delta(3, null), 'other-stream'],
      [s, delta(2, null), 'stale'],
      [s, delta(4, null), 'gap'],
      [s, { ...delta(3, null), revision: 5 }, 'gap'],
      [s, delta(3, { lens: 'flagged', board: { replace: true, status: 'drafting', absence: null, revision: 1, upserted: [], removed: [] } }), 'malformed'],
    ];
    for (const [holding, d, refusal] of cases) {
      const before = JSON.stringify(holding);
      const outcome = applyGenerationDelta(holding, d);
      assert.equal(outcome.ok ? 'ok' : outcome.refusal, refusal, JSON.stringify(d));
      assert.ok(!outcome.ok && outcome.message.length > 10);
      assert.equal(JSON.stringify(holding), before);
    }
  });

  it("the panel's message carries a delta through ToWebview, and refuses a malformed one", () => {
    const d = delta(0, { lens: 'flagged', board: boardPatch(held(), 'flagged', []) });
    assert.ok(ToWebview.safeParse({ type: 'rennet/panel/generationDelta', delta: d }).success);
    assert.ok(!ToWebview.safeParse({ type: 'rennet/panel/generationDelta', delta: { ...d, revision: -1 } }).success);
    assert.ok(!ToWebview.safeParse({ type: 'rennet/panel/generationDelta', delta: { ...d, lane: { lens: 'nope' } } }).success);
    assert.ok(GenerationSnapshot.safeParse(held()).success, 'a snapshot with its revision is a GenerationSnapshot');
  });

  it('property: element upserts and removals on a lane, folded one delta at a time, make the board a Map would hold', () => {
    const s = held();
    const base = boardOf(s, 'sequence').elements;
    const template = base[0]!;
    const op = fc.oneof(
      fc.record({ kind: fc.constant('upsert' as const), id: fc.integer({ min: 0, max: base.length + 6 }), mark: fc.nat({ max: 9 }) }),
      fc.record({ kind: fc.constant('remove' as const), id: fc.integer({ min: 0, max: base.length + 6 }) }),
    );
    const idOf = (n: number) => (n < base.length ? base[n]!.id : `e-extra-${n}`);
    fc.assert(
      fc.property(fc.array(fc.array(op, { maxLength: 5 }), { maxLength: 12 }), (batches) => {
        // The model: a Map in insertion order, as the host's board holds its elements.
        const model = new Map(base.map((e) => [e.id, e]));
        // Ids are never reused on a board (the host mints them): a removed id does not come back.
        const dead = new Set<string>();
        let fold = s;
        batches.forEach((batch, i) => {
          const upserted = new Map<string, BoardElement>();
          const removed = new Set<string>();
          for (const o of batch) {
            const id = idOf(o.id);
            if (o.kind === 'upsert') {
              if (dead.has(id)) continue;
              const element = { ...template, id, seq: o.mark } as BoardElement;
              model.set(id, element);
              upserted.set(id, element);
              removed.delete(id);
            } else if (model.delete(id)) {
              dead.add(id);
              upserted.delete(id);
              removed.add(id);
            }
          }
          // What the host sends for a batch: removals, and the touched ids still on the board in board order.
          const onBoard = [...model.values()].filter((e) => upserted.has(e.id));
          fold = applied(fold, delta(i, { lens: 'sequence', board: { ...boardPatch(fold, 'sequence', onBoard, [...removed]) } }));
          for (const id of upserted.keys()) if (!model.has(id)) assert.fail('an upserted id left the model');
        });
        assert.deepEqual(
          boardOf(fold, 'sequence').elements.map((e) => `${e.id}:${e.seq}`),
          [...model.values()].map((e) => `${e.id}:${e.seq}`),
        );
      }),
      { numRuns: 200 },
    );
  });

  it('property: a marks splice made by the host turns any run into any other', () => {
    const s = held();
    const mark = (n: number): CitationMark => ({ lens: 'flagged', elementId: `e${n}`, path: 'src/a.ts', side: 'head', startLine: n + 1, endLine: n + 1, claim: `c${n}` });
    fc.assert(
      fc.property(fc.array(fc.nat({ max: 8 }), { maxLength: 10 }), fc.array(fc.nat({ max: 8 }), { maxLength: 10 }), (from, to) => {
        const others = s.citations.filter((m) => m.lens !== 'flagged');
        const at = others.findIndex((m) => LENSES.indexOf(m.lens) > LENSES.indexOf('flagged'));
        const withRun = (run: CitationMark[]) => (at < 0 ? [...others, ...run] : [...others.slice(0, at), ...run, ...others.slice(at)]);
        const start = { ...s, citations: withRun(from.map(mark)) };
        const splice = markSplice(from.map(mark), to.map(mark));
        const end = splice ? applied(start, delta(0, { lens: 'flagged', citations: splice })) : start;
        assert.deepEqual(end.citations, withRun(to.map(mark)));
      }),
      { numRuns: 200 },
    );
  });
});

describe('protocol/generationDelta: sameJson', () => {
  it('equal as the wire carries them: key order, an undefined property, 0 and -0 do not count', () => {
    assert.ok(sameJson({ a: [1, { b: 'x' }], c: null }, { c: null, a: [1, { b: 'x' }] }));
    assert.ok(sameJson({ a: 1 }, { a: 1, b: undefined }));
    assert.ok(sameJson({ a: 1, b: undefined }, { a: 1, c: undefined }));
    assert.ok(sameJson({ n: { a: 1, b: undefined } }, { n: { a: 1 } }));
    assert.ok(sameJson(0, -0));
    assert.ok(sameJson(Number.NaN, Number.NaN));
    assert.ok(sameJson(Object.assign(Object.create(null) as object, { a: 1 }), { a: 1 }), 'a null-prototype record is a plain object');
    assert.ok(sameJson(undefined, undefined));
  });

  it('different: order in an array, null against undefined, a list against a record, a string against a number', () => {
    assert.ok(!sameJson({ a: [1, 2] }, { a: [2, 1] }));
    assert.ok(!sameJson([[1], [2]], [[1], [2, 3]]));
    assert.ok(!sameJson({ a: null }, { a: undefined }));
    assert.ok(!sameJson({ a: null }, {}));
    assert.ok(!sameJson(null, undefined));
    assert.ok(!sameJson([1], { 0: 1 }));
    assert.ok(!sameJson({ 0: 1, length: 1 }, [1]));
    assert.ok(!sameJson('1', 1));
    assert.ok(!sameJson({ a: 1 }, { a: 1, b: 2 }));
    assert.ok(!sameJson({ a: 1, b: 2 }, { a: 1 }));
  });

  it('reads own keys only, and a value that is not JSON equals only itself', () => {
    // An own `__proto__` key (as JSON.parse makes it) is data: the other side's prototype does not answer for it.
    const own = JSON.parse('{"__proto__":{}}') as unknown;
    assert.ok(!sameJson(own, { b: {} }));
    assert.ok(!sameJson({ b: {} }, own));
    assert.ok(sameJson(own, JSON.parse('{"__proto__":{}}')));
    assert.ok(!sameJson({ constructor: {} }, { other: {} }));
    const date = new Date(0);
    assert.ok(!sameJson(date, new Date(0)));
    assert.ok(sameJson(date, date));
    assert.ok(!sameJson({}, new Map()));
    assert.ok(!sameJson(new Map(), {}));
    class Point {
      x = 1;
    }
    assert.ok(!sameJson(new Point(), { x: 1 }));
  });

  it('property: two values are sameJson exactly when their JSON, keys sorted, is the same text; a JSON round trip is sameJson', () => {
    // A small domain, so that equal pairs come up often; objects may hold undefined and a `__proto__` key.
    const { value } = fc.letrec((tie) => ({
      value: fc.oneof(
        { maxDepth: 3 },
        fc.constantFrom<unknown>(0, -0, 1, 'a', '', null, true, false),
        fc.array(tie('value'), { maxLength: 2 }),
        fc.dictionary(fc.constantFrom('a', 'b', '__proto__'), fc.option(tie('value'), { nil: undefined }), { maxKeys: 2 }),
      ),
    }));
    const sorted = (v: unknown): string => {
      if (Array.isArray(v)) return `[${v.map(sorted).join(',')}]`;
      if (v !== null && typeof v === 'object') {
        const record = v as Record<string, unknown>;
        const keys = Object.keys(record)
          .filter((k) => record[k] !== undefined)
          .sort();
        return `{${keys.map((k) => `${JSON.stringify(k)}:${sorted(record[k])}`).join(',')}}`;
      }
      return JSON.stringify(v);
    };
    // The same value built again: keys in reverse order, an undefined property added, -0 for 0.
    const rebuilt = (v: unknown): unknown => {
      if (Array.isArray(v)) return v.map(rebuilt);
      if (v !== null && typeof v === 'object') {
        const record = v as Record<string, unknown>;
        const entries: Array<[string, unknown]> = Object.keys(record)
          .reverse()
          .map((k) => [k, rebuilt(record[k])]);
        return Object.fromEntries([...entries, ['z', undefined]]);
      }
      return v === 0 ? -v : v;
    };
    const pair = fc.oneof(
      fc.tuple(value, value),
      value.map((a) => [a, rebuilt(a)] as const),
    );
    const seen = { same: 0, different: 0 };
    fc.assert(
      fc.property(pair, ([a, b]) => {
        const same = sameJson(a, b);
        assert.equal(same, sorted(a) === sorted(b), `${sorted(a)} against ${sorted(b)}`);
        assert.equal(sameJson(b, a), same, 'symmetric');
        assert.ok(sameJson(a, JSON.parse(JSON.stringify(a))), `round trip of ${sorted(a)}`);
        seen[same ? 'same' : 'different']++;
      }),
      { numRuns: 400 },
    );
    assert.ok(seen.same > 50 && seen.different > 50, `both answers come up (${seen.same} same, ${seen.different} different)`);
  });
});
