/**
 * webview/board/tree.ts updateTree: a seat's write patches the shown tree in place (its path to
 * the root), and the result is always what a full rebuild with node reuse gives — the same
 * shape, the same lookups, and the very same nodes kept.
 */
import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import type { BoardElement } from '../../../protocol';
import { buildTree, reuseNodes, updateTree, type BoardTree, type ShownTree, type TreeNode } from '../../../webview/board/tree';

type Kind = 'section' | 'finding' | 'code_ref' | 'order_step' | 'decision';

/** The fields the tree reads (id, kind, parent, named refs) and a title a write changes. */
function element(id: string, kind: Kind, parent: string | null, refs: string[], title: string): BoardElement {
  const base = { id, kind, parent, title };
  const named = kind === 'finding' ? { anchor: refs } : kind === 'decision' ? { evidence: refs } : kind === 'order_step' ? { span: refs[0] ?? 'none' } : {};
  return { ...base, ...named } as unknown as BoardElement;
}

const kinds: Kind[] = ['section', 'finding', 'code_ref', 'order_step', 'decision'];

const pool = fc.integer({ min: 1, max: 40 }).chain((n) =>
  fc
    .array(
      fc.record({
        kind: fc.constantFrom(...kinds),
        // parents anywhere in the pool (cycles and self-parents included), or none, or unknown
        parent: fc.oneof(
          fc.constant(null),
          fc.integer({ min: 0, max: n + 2 }).map((i) => `e${i}`),
        ),
        refs: fc.array(
          fc.integer({ min: 0, max: n }).map((i) => `e${i}`),
          { maxLength: 2 },
        ),
        dupe: fc.boolean().map((b) => b && Math.random() < 0.05),
      }),
      { minLength: n, maxLength: n },
    )
    .map((specs) => specs.map((s, i) => element(s.dupe && i > 0 ? `e${i - 1}` : `e${i}`, s.kind, s.parent, s.refs, `t${i}`))),
);

/** A write: retitle some elements; sometimes also move one, change its refs, or add one. */
const write = fc.record({
  retitle: fc.array(fc.nat(), { maxLength: 3 }),
  structural: fc.constantFrom('none', 'none', 'none', 'move', 'refs', 'add'),
  at: fc.nat(),
  to: fc.nat(),
});

function apply(elements: readonly BoardElement[], w: { retitle: number[]; structural: string; at: number; to: number }, step: number): BoardElement[] {
  const next = elements.slice();
  for (const r of w.retitle) {
    const i = r % next.length;
    next[i] = { ...(next[i] as BoardElement), title: `w${step}.${r}` } as BoardElement;
  }
  const i = w.at % next.length;
  const e = next[i] as BoardElement & { anchor?: string[] };
  if (w.structural === 'move') next[i] = { ...e, parent: `e${w.to % (next.length + 1)}` } as BoardElement;
  if (w.structural === 'refs' && e.kind === 'finding') next[i] = { ...e, anchor: [`e${w.to % next.length}`] } as BoardElement;
  if (w.structural === 'add') next.push(element(`n${step}`, 'finding', `e${w.to % next.length}`, [], 'new'));
  return next;
}

/** Shape, lookups and derived sets, compared by value (elements by identity). */
function assertSameTree(actual: BoardTree, expected: BoardTree): void {
  const shape = (nodes: readonly TreeNode[]): unknown => nodes.map((n) => ({ index: n.index, element: n.element, children: shape(n.children) }));
  assert.deepEqual(shape(actual.roots), shape(expected.roots));
  assert.deepEqual([...actual.byId], [...expected.byId]);
  assert.deepEqual([...actual.referenced].sort(), [...expected.referenced].sort());
  assert.deepEqual([...actual.stepNumbers], [...expected.stepNumbers]);
  assert.equal(actual.flattened, expected.flattened);
}

function nodesOf(tree: BoardTree): TreeNode[] {
  const out: TreeNode[] = [];
  const walk = (nodes: readonly TreeNode[]) => nodes.forEach((n) => (out.push(n), walk(n.children)));
  walk(tree.roots);
  return out;
}

describe('webview/board/tree: updateTree', () => {
  it('equals a rebuild with node reuse after every write, keeping exactly the same nodes', () => {
    fc.assert(
      fc.property(pool, fc.array(write, { minLength: 1, maxLength: 8 }), (elements, writes) => {
        let shown: ShownTree = { elements, tree: buildTree(elements) };
        writes.forEach((w, step) => {
          const next = apply(shown.elements, w, step);
          const expected = reuseNodes(shown.tree, buildTree(next));
          const actual = updateTree(shown, next);
          assertSameTree(actual, expected);
          const before = new Set(nodesOf(shown.tree));
          const keptExpected = nodesOf(expected).map((n) => before.has(n));
          const keptActual = nodesOf(actual).map((n) => before.has(n));
          assert.deepEqual(keptActual, keptExpected, 'the same nodes are kept');
          shown = { elements: next, tree: actual };
        });
      }),
      { numRuns: 300 },
    );
  });

  it('renews only the written element and its ancestors on an in-place write', () => {
    const elements = [element('s1', 'section', null, [], 'S'), element('f1', 'finding', 's1', [], 'a'), element('f2', 'finding', 's1', [], 'b'), element('s2', 'section', null, [], 'T')];
    const first = buildTree(elements);
    const next = elements.map((e) => (e.id === 'f1' ? ({ ...e, title: 'changed' } as BoardElement) : e));
    const tree = updateTree({ elements, tree: first }, next);
    const [s1, s2] = tree.roots as [TreeNode, TreeNode];
    assert.notEqual(s1, first.roots[0]);
    assert.equal(s2, first.roots[1]);
    assert.notEqual(s1.children[0], first.roots[0]?.children[0]);
    assert.equal(s1.children[1], first.roots[0]?.children[1]);
    assert.equal((s1.children[0]?.element as { title: string }).title, 'changed');
    assert.equal(tree.byId.get('f1'), next[1]);
  });
});
