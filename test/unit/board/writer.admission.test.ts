import assert from 'node:assert/strict';
import { admitReferences, applyVerb, placeNoiseMembers, referenceIdentity } from '../../../host/board/writer';
import type { BoardState, WriterContext } from '../../../host/board/state';
import type { BoardElement } from '../../../protocol/board';
import { assertSchema, boardFor, build, changeFixture, cite, contextFor, deepFreeze, refused, type ChangeFixture } from './writerFixtures';

type Loose = Record<string, unknown>;

/** An imported board: elements as another writer spelled them (ids not minted here). */
function imported(base: BoardState, elements: Loose[]): BoardState {
  const map = new Map<string, BoardElement>();
  elements.forEach((el, i) => map.set(el.id as string, { author: 'import', seq: i + 1, parent: null, ...el } as unknown as BoardElement));
  return { ...base, elements: map };
}

describe('board writer: host-only writes', function () {
  this.timeout(60_000);
  let fx: ChangeFixture;
  let ctx: WriterContext;
  let hostCtx: WriterContext;
  before(async () => {
    fx = await changeFixture();
    ctx = contextFor(fx.patchset, 'claude');
    hostCtx = { ...ctx, author: 'host' };
  });
  after(() => fx?.repo.cleanup());

  const memberOf = (path: string, index = 0) => {
    const file = fx.patchset.files.find((f) => f.path === path)!;
    const hunk = file.hunks[index]!;
    const head = hunk.newLines > 0;
    return {
      path,
      side: head ? ('head' as const) : ('base' as const),
      start_line: head ? hunk.newStart : hunk.oldStart,
      end_line: head ? hunk.newStart + hunk.newLines - 1 : hunk.oldStart + hunk.oldLines - 1,
      hunk_id: hunk.id,
    };
  };

  describe('placeNoiseMembers', () => {
    it('places host-stamped members in one write, with sequential ids', () => {
      const board = deepFreeze(boardFor('noise', fx.patchset));
      const placed = placeNoiseMembers(board, [memberOf('src/app.ts', 0), memberOf('src/app.ts', 1), memberOf('src/gone.ts')], hostCtx);
      assert.deepEqual(placed.ids, ['e1', 'e2', 'e3']);
      assert.equal(placed.state.revision, 1);
      const gone = placed.state.elements.get('e3') as unknown as Loose;
      assert.deepEqual(
        { author: gone.author, parent: gone.parent, side: gone.side, verdict: gone.verdict, judge: gone.judge },
        { author: 'host', parent: null, side: 'base', verdict: 'noise', judge: 'deterministic' },
      );
      assertSchema(placed.state);
      assert.equal(board.elements.size, 0);
    });
    it('refuses a lens that takes no members, and members that do not resolve to their own hunk', () => {
      refused(placeNoiseMembers(boardFor('flagged', fx.patchset), [memberOf('src/app.ts')], hostCtx).result, 'kind-allowlist');
      refused(placeNoiseMembers(boardFor('noise', fx.patchset), [{ ...memberOf('src/app.ts'), end_line: 40 }], hostCtx).result, 'citation-resolves');
      refused(placeNoiseMembers(boardFor('noise', fx.patchset), [{ ...memberOf('src/app.ts', 0), hunk_id: memberOf('src/app.ts', 1).hunk_id }], hostCtx).result, 'citation-resolves');
    });
    it('leaves members to the host: a seat may re-parent one but neither create nor remove it', () => {
      const board = build(placeNoiseMembers(boardFor('noise', fx.patchset), [memberOf('src/app.ts')], hostCtx).state, ctx, [
        { verb: 'add', kind: 'noise_group', input: { title: 'Renames', reason: 'Identifiers only.' } },
        { verb: 'update', kind: 'noise_member', input: { id: 'e1', parent_id: 'e2' } },
      ]).state;
      refused(applyVerb(board, { verb: 'add', kind: 'noise_member', input: {} }, ctx).result, 'kind-allowlist');
      refused(applyVerb(board, { verb: 'remove_element', input: { id: 'e1' } }, ctx).result, 'kind-allowlist');
      refused(applyVerb(board, { verb: 'remove_element', input: { id: 'e2' } }, ctx).result, 'kind-allowlist');
      refused(applyVerb(board, { verb: 'update', kind: 'noise_member', input: { id: 'e1', path: 'x' } }, ctx).result, 'host-owned-field', 'path');
      refused(applyVerb(board, { verb: 'update', kind: 'noise_member', input: { id: 'e1', parent_id: 'e1' } }, ctx).result);
      // a host-placed board is still unwritten by a seat; placed members never count as written
      assert.equal(board.elements.size, 2);
    });
  });

  describe('admitReferences', () => {
    let board: BoardState;
    before(() => {
      board = build(boardFor('sequence', fx.patchset), ctx, [
        { verb: 'add', kind: 'section', input: { title: 'Walk' } },
        cite('src/app.ts', 'head', 10),
        { verb: 'add', kind: 'order_step', input: { title: 'Read', explanation_markdown: 'It reads.', span: 'e2', parent_id: 'e1' } },
      ]).state;
    });
    const codeRef = (id: string, patchset = fx.patchset.id): Loose => ({ id, kind: 'code_ref', path: 'src/app.ts', side: 'head', start_line: 10, end_line: 10, patchset_id: patchset, hunk_ids: [] });
    const section = (id: string, parent: string | null = null): Loose => ({ id, kind: 'section', title: 'S', delta: null, parent });
    const step = (id: string, span: string, parent = 'sec-1'): Loose => ({ id, kind: 'order_step', title: 'T', explanation_markdown: 'x', span, parent });

    it('admits a board whose references are exact, unchanged', () => {
      const result = admitReferences(board);
      assert.ok('state' in result);
      assert.equal(result.state, board);
      assert.deepEqual(result.repairs, []);
    });

    it('folds case and the separator set only, and records every repair', () => {
      assert.equal(referenceIdentity('Code_Ref-1'), referenceIdentity('code.ref/1'));
      assert.equal(referenceIdentity('a b\\c'), 'abc');
      assert.notEqual(referenceIdentity('café'), referenceIdentity('cafe'));
      const input = imported(board, [section('sec-1'), codeRef('ref_1'), step('step-1', 'REF-1', 'SEC_1')]);
      const result = admitReferences(input);
      assert.ok('state' in result, JSON.stringify(result));
      assert.deepEqual(result.repairs, [
        { element: 'step-1', field: 'parent', from: 'SEC_1', to: 'sec-1' },
        { element: 'step-1', field: 'span', from: 'REF-1', to: 'ref_1' },
      ]);
      const repaired = result.state.elements.get('step-1') as unknown as Loose;
      assert.equal(repaired.span, 'ref_1');
      assert.equal(repaired.parent, 'sec-1');
      assert.deepEqual(result.state.repairs, result.repairs);
      assert.equal(result.state.revision, input.revision + 1);
      assert.equal((input.elements.get('step-1') as unknown as Loose).span, 'REF-1', 'the input is untouched');
    });

    it('repairs inside many-valued fields by position', () => {
      const decisions = imported(boardFor('decisions', fx.patchset), [
        section('sec-1'),
        codeRef('ref-1'),
        codeRef('ref-2'),
        { id: 'd1', kind: 'decision', parent: 'sec-1', title: 'D', statement: 's', rationale: 'r', alternatives: ['a'], evidence: ['ref-1', 'REF.2'] },
      ]);
      const result = admitReferences(decisions);
      assert.ok('state' in result, JSON.stringify(result));
      assert.deepEqual(result.repairs, [{ element: 'd1', field: 'evidence[1]', from: 'REF.2', to: 'ref-2' }]);
    });

    it('fails, naming element, field and reference, when the target is absent, ambiguous, itself, or the wrong kind', () => {
      const fail = (elements: Loose[]) => {
        const result = admitReferences(imported(board, elements));
        assert.ok('failure' in result, JSON.stringify(result));
        return result.failure;
      };
      assert.deepEqual(
        { ...fail([section('sec-1'), codeRef('ref-1'), step('step-1', 'ref-2')]), message: '' },
        { element: 'step-1', field: 'span', reference: 'ref-2', reason: 'absent', message: '' },
      );
      assert.equal(fail([section('sec-1'), codeRef('ref-1'), codeRef('REF_1'), step('step-1', 'ref.1')]).reason, 'ambiguous');
      assert.equal(fail([section('sec-1'), step('step-1', 'STEP_1')]).reason, 'self');
      const wrong = fail([section('sec-1'), codeRef('ref-1'), step('step-1', 'Sec-1')]);
      assert.equal(wrong.reason, 'wrong-kind');
      assert.match(wrong.message, /sec-1 is a section, and span takes code_ref/);
      // an exact id of the wrong kind is not a licence either
      assert.equal(fail([section('sec-1'), step('step-1', 'sec-1')]).reason, 'wrong-kind');
      // one letter of difference is a different id
      assert.equal(fail([section('sec-1'), codeRef('ref-1'), step('step-1', 'ref-l')]).reason, 'absent');
    });

    it('fails a code_ref from another patchset, whether the reference is exact or repaired', () => {
      const exact = admitReferences(imported(board, [section('sec-1'), codeRef('ref-1', 'ps-other'), step('step-1', 'ref-1')]));
      assert.ok('failure' in exact);
      assert.equal(exact.failure.reason, 'foreign-patchset');
      const repaired = admitReferences(imported(board, [section('sec-1'), codeRef('ref-1', 'ps-other'), step('step-1', 'REF1')]));
      assert.ok('failure' in repaired);
      assert.equal(repaired.failure.reason, 'foreign-patchset');
    });

    it('reports every failure, never dropping an element to make the rest pass', () => {
      const input = imported(board, [section('sec-1'), codeRef('ref-1'), step('s1', 'nope'), step('s2', 'gone')]);
      const result = admitReferences(input);
      assert.ok('failures' in result);
      assert.deepEqual(
        result.failures.map((f) => f.element),
        ['s1', 's2'],
      );
      assert.equal(input.elements.size, 4);
    });
  });
});
