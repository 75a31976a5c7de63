import assert from 'node:assert/strict';
import { runFinishTier } from '../../../host/board/rules';
import { applyVerb, placeNoiseMembers } from '../../../host/board/writer';
import type { BoardState, WriterContext } from '../../../host/board/state';
import type { BoardElement, FinishPointer } from '../../../protocol/board';
import { boardFor, build, changeFixture, cite, contextFor, type ChangeFixture } from './writerFixtures';

const DOC = { verb: 'set_document' as const, input: { title: 'Header parsing', intro_markdown: 'The parser reads each header once. Large files load faster.' } };

function rules(pointers: readonly FinishPointer[]): string[] {
  return pointers.map((p) => `${p.rule}@${p.element}`);
}

/** Places elements on a board as an imported board would carry them (bypassing the writer). */
function withElements(state: BoardState, elements: Array<Record<string, unknown>>): BoardState {
  const map = new Map(state.elements);
  for (const el of elements) map.set(el.id as string, { author: 'import', seq: map.size + 1, parent: null, ...el } as unknown as BoardElement);
  return { ...state, elements: map };
}

describe('board rules: the finish tier', function () {
  this.timeout(60_000);
  let fx: ChangeFixture;
  let ctx: WriterContext;
  before(async () => {
    fx = await changeFixture();
    ctx = contextFor(fx.patchset);
  });
  after(() => fx?.repo.cleanup());

  describe('document-present', () => {
    it('points at /document until title and intro are set', () => {
      const empty = build(boardFor('design', fx.patchset), ctx, [{ verb: 'add', kind: 'section', input: { title: 'Overview', body_markdown: 'What changes.' } }]).state;
      const pointers = runFinishTier(empty);
      assert.deepEqual(rules(pointers), ['document-present@/document']);
      assert.match(pointers[0]!.sentence, /no title and no intro_markdown/);
      assert.deepEqual(runFinishTier(build(empty, ctx, [DOC]).state), []);
    });
  });

  describe('material-present', () => {
    it('asks each lens for its own material', () => {
      for (const [lens, kind] of [
        ['sequence', 'order_step'],
        ['decisions', 'decision'],
        ['flagged', 'finding'],
        ['noise', 'noise_group'],
      ] as const) {
        const board = build(boardFor(lens, fx.patchset), ctx, [DOC, { verb: 'add', kind: 'section', input: { title: 'S', body_markdown: 'Body.' } }]).state;
        const pointers = runFinishTier(board);
        assert.deepEqual(rules(pointers), ['material-present@/document'], lens);
        assert.match(pointers[0]!.sentence, new RegExp(kind));
      }
      const design = build(boardFor('design', fx.patchset), ctx, [DOC]).state;
      assert.deepEqual(rules(runFinishTier(design)), ['material-present@/document']);
      assert.deepEqual(runFinishTier(build(design, ctx, [{ verb: 'add', kind: 'section', input: { title: 'Overview', body_markdown: 'Prose only.' } }]).state), []);
    });
    it('does not double-report: one orphaned step gets the reachability pointer only', () => {
      const board = withElements(build(boardFor('sequence', fx.patchset), ctx, [DOC, cite('src/app.ts', 'head', 10)]).state, [
        { id: 'x1', kind: 'order_step', title: 'Read', explanation_markdown: 'Reads it.', span: 'e1' },
      ]);
      assert.deepEqual(rules(runFinishTier(board)), ['step-reachable@x1']);
    });
  });

  describe('step-reachable', () => {
    it('accepts a step under a nested section and points at one whose chain breaks', () => {
      const board = build(boardFor('sequence', fx.patchset), ctx, [
        { verb: 'add', kind: 'section', input: { title: 'Outer', body_markdown: 'Context.' } },
        { verb: 'add', kind: 'section', input: { title: 'Inner', parent_id: 'e1' } },
        cite('src/app.ts', 'head', 10),
        { verb: 'add', kind: 'order_step', input: { title: 'Read', explanation_markdown: 'It reads the header.', span: 'e3', parent_id: 'e2' } },
        DOC,
      ]).state;
      assert.deepEqual(runFinishTier(board), []);
      const broken = withElements(board, [{ id: 'x9', kind: 'order_step', parent: 'gone', title: 'Lost', explanation_markdown: 'x', span: 'e3' }]);
      const pointers = runFinishTier(broken);
      assert.deepEqual(rules(pointers), ['step-reachable@x9']);
      assert.match(pointers[0]!.sentence, /re-parent/);
    });
  });

  describe('material-reachable', () => {
    it('points at findings and decisions no top-level section reaches', () => {
      const board = build(boardFor('flagged', fx.patchset), ctx, [
        { verb: 'add', kind: 'section', input: { title: 'Parsing' } },
        cite('src/app.ts', 'head', 10),
        { verb: 'add', kind: 'finding', input: { severity: 'minor', category: 'correctness', title: 'Off by one', body_markdown: 'b', remedy_markdown: 'r', anchor: ['e2'], parent_id: 'e1' } },
        DOC,
      ]).state;
      assert.deepEqual(runFinishTier(board), []);
      const orphan = withElements(board, [
        {
          id: 'x1',
          kind: 'finding',
          status: 'open',
          concurrence: [],
          accord: 'split',
          severity: 'minor',
          category: 'correctness',
          title: 'Orphan',
          body_markdown: 'b',
          remedy_markdown: 'r',
          anchor: ['e2'],
        },
        { id: 'x2', kind: 'decision', parent: 'x1', title: 'D', statement: 's', rationale: 'r', alternatives: ['a'], evidence: ['e2'] },
      ]);
      assert.deepEqual(rules(runFinishTier(orphan)), ['material-reachable@x1', 'material-reachable@x2']);
    });
  });

  describe('section-preview', () => {
    it('points at a section with neither a titled child nor a body', () => {
      const board = build(boardFor('flagged', fx.patchset), ctx, [
        { verb: 'add', kind: 'section', input: { title: 'Has body', body_markdown: 'Opening.' } },
        { verb: 'add', kind: 'section', input: { title: 'Has titled child' } },
        { verb: 'add', kind: 'section', input: { title: 'Child', body_markdown: 'Opening.', parent_id: 'e2' } },
        { verb: 'add', kind: 'section', input: { title: 'Bare' } },
        { verb: 'add', kind: 'prose', input: { markdown: 'Untitled prose does not fold.', parent_id: 'e4' } },
        cite('src/app.ts', 'head', 10),
        { verb: 'add', kind: 'finding', input: { severity: 'nit', category: 'testing', title: 'T', body_markdown: 'b', remedy_markdown: 'r', anchor: ['e6'], parent_id: 'e1' } },
        DOC,
      ]).state;
      assert.deepEqual(rules(runFinishTier(board)), ['section-preview@e4']);
    });
  });

  describe('design-stats-unique', () => {
    it('points at a stat label that appears twice, and not at distinct labels', () => {
      const board = build(boardFor('design', fx.patchset), ctx, [
        { verb: 'add', kind: 'stat', input: { stat_labels: ['Files', 'Hunks'], stat_values: ['11', '40'] } },
        { verb: 'add', kind: 'stat', input: { stat_labels: ['Lines'], stat_values: ['300'] } },
        DOC,
      ]).state;
      assert.deepEqual(runFinishTier(board), []);
      const dup = build(board, ctx, [{ verb: 'add', kind: 'stat', input: { stat_labels: ['files '], stat_values: ['12'] } }]).state;
      const pointers = runFinishTier(dup);
      assert.deepEqual(rules(pointers), ['design-stats-unique@e3']);
      assert.match(pointers[0]!.sentence, /already appears on e1/);
    });
  });

  describe('design-requirement-scenarios', () => {
    it('points at a requirement with blank shall text and at a scenario outside a requirement', () => {
      const board = build(boardFor('design', fx.patchset), ctx, [
        { verb: 'add', kind: 'section', input: { title: 'Spec', body_markdown: 'Requirements.' } },
        { verb: 'add', kind: 'requirement', input: { title: 'Headers', shall: 'The parser shall read each header once.', parent_id: 'e1' } },
        { verb: 'add', kind: 'scenario', input: { name: 'Large file', text_markdown: 'When a file is large, it loads fast.', parent_id: 'e2' } },
        DOC,
      ]).state;
      assert.deepEqual(runFinishTier(board), []);
      const blank = build(board, ctx, [{ verb: 'add', kind: 'requirement', input: { title: 'Blank', shall: '   ', parent_id: 'e1' } }]).state;
      assert.deepEqual(rules(runFinishTier(blank)), ['design-requirement-scenarios@e4']);
      const stray = withElements(board, [{ id: 'x1', kind: 'scenario', parent: 'e1', name: 'n', text_markdown: 't' }]);
      assert.deepEqual(rules(runFinishTier(stray)), ['design-requirement-scenarios@x1']);
    });
  });

  describe('noise-member-grouped and noise-group-reason', () => {
    it('points at ungrouped members and at groups without a reason or members, then settles', () => {
      const app = fx.patchset.files.find((f) => f.path === 'src/app.ts')!;
      const members = app.hunks.map((h) => ({ path: 'src/app.ts', side: 'head' as const, start_line: h.newStart, end_line: h.newStart + h.newLines - 1, hunk_id: h.id }));
      const placed = placeNoiseMembers(boardFor('noise', fx.patchset), members, { ...ctx, author: 'host' });
      let board = build(placed.state, ctx, [
        DOC,
        { verb: 'add', kind: 'noise_group', input: { title: 'Renames', reason: 'Only identifiers change.' } }, // e3
        { verb: 'add', kind: 'noise_group', input: { title: 'Empty', reason: ' ' } }, // e4
      ]).state;
      assert.deepEqual(rules(runFinishTier(board)), ['noise-member-grouped@e1', 'noise-member-grouped@e2', 'noise-group-reason@e3', 'noise-group-reason@e4']);
      assert.match(runFinishTier(board).at(-1)!.sentence, /no reason and no member/);
      board = build(board, ctx, [
        { verb: 'update', kind: 'noise_member', input: { id: 'e1', parent_id: 'e3' } },
        { verb: 'update', kind: 'noise_member', input: { id: 'e2', parent_id: 'e3' } },
        { verb: 'remove_element', input: { id: 'e4' } },
      ]).state;
      const { result } = applyVerb(board, { verb: 'finish' }, ctx);
      assert.equal(result.status, 'settled');
    });
  });
});
