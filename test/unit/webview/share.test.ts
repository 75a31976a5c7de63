/**
 * Structural sharing of generation snapshots (webview/share.ts), the element tree's node reuse
 * (webview/board/tree.ts reuseNodes), and what they buy: a write to one element re-renders that
 * element's view only (happy-dom, the real App and reducer).
 */
import * as assert from 'node:assert/strict';
import { options, type VNode } from 'preact';
import { sameJson, type BoardElement, type ElementOf, type GenerationSnapshot, type LensBoardView } from '../../../protocol';
import { buildTree, reuseNodes, type BoardTree, type TreeNode } from '../../../webview/board/tree';
import { share, shareGeneration } from '../../../webview/share';
import { initialModel, reduce } from '../../../webview/state';
import { codeRef, elements, generation, sequenceBoard } from './boardFixtures';
import { snapshot } from './fixtures';
import { all, byTestId, click, FakeBridge, happyDomPerTest, mountApp, one, text } from './happyDom';

const copy = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

function flaggedOf(g: GenerationSnapshot): LensBoardView {
  const board = g.lanes.find((l) => l.lens === 'flagged')?.board;
  assert.ok(board, 'the fixture generation has a Flagged board');
  return board;
}

/** A copy of `g` with the title of Flagged finding `id` changed. */
function withTitle(g: GenerationSnapshot, id: string, title: string): GenerationSnapshot {
  const next = copy(g);
  const finding = flaggedOf(next).elements.find((e): e is ElementOf<'finding'> => e.id === id && e.kind === 'finding');
  assert.ok(finding);
  finding.title = title;
  return next;
}

describe('webview/share: structural sharing', () => {
  it('gives back the previous value itself when the next one is equal', () => {
    const g = generation();
    const again = copy(g);
    assert.notEqual(again, g);
    assert.equal(share(g, again), g);
    assert.equal(shareGeneration(g, again), g);
  });

  it('renews only the changed element and what holds it', () => {
    const g = generation();
    const next = withTitle(g, 'f4', 'A new claim');
    const shared = shareGeneration(g, next);
    assert.ok(shared && shared !== g);
    assert.deepEqual(shared, next, 'the result says what the new snapshot says');
    const before = flaggedOf(g);
    const after = flaggedOf(shared);
    assert.notEqual(after, before);
    assert.notEqual(after.elements, before.elements);
    for (const [i, element] of after.elements.entries()) {
      if (element.id === 'f4') assert.notEqual(element, before.elements[i]);
      else assert.equal(element, before.elements[i], `${element.id} is the previous object`);
    }
    assert.equal(after.folds, before.folds);
    assert.equal(after.document, before.document);
    assert.equal(shared.excerpts, g.excerpts, 'excerpts did not change');
    for (const lane of shared.lanes.filter((l) => l.lens !== 'flagged')) {
      assert.equal(
        lane,
        g.lanes.find((l) => l.lens === lane.lens),
        `the ${lane.lens} lane is the previous object`,
      );
    }
  });

  it('matches pool items by id, so an element added in the middle leaves the others shared', () => {
    const g = generation();
    const next = copy(g);
    const pool = flaggedOf(next).elements;
    pool.splice(3, 0, { ...(pool[3] as BoardElement), id: 'f-new', seq: 99 } as BoardElement);
    const shared = shareGeneration(g, next);
    assert.ok(shared);
    assert.deepEqual(shared, next);
    const before = new Map(flaggedOf(g).elements.map((e) => [e.id, e]));
    for (const element of flaggedOf(shared).elements) {
      if (element.id === 'f-new') assert.ok(!before.has(element.id));
      else assert.equal(element, before.get(element.id), `${element.id} is the previous object`);
    }
  });

  it('shares a shortened pool, and a removed excerpt leaves the others shared', () => {
    const g = generation();
    const next = copy(g);
    flaggedOf(next).elements.pop();
    const [dropped] = Object.keys(next.excerpts);
    assert.ok(dropped);
    delete next.excerpts[dropped];
    const shared = shareGeneration(g, next);
    assert.ok(shared);
    assert.deepEqual(shared, next);
    assert.notEqual(shared.excerpts, g.excerpts);
    for (const [key, excerpt] of Object.entries(shared.excerpts)) assert.equal(excerpt, g.excerpts[key]);
    const before = flaggedOf(g).elements;
    flaggedOf(shared).elements.forEach((element, i) => assert.equal(element, before[i]));
  });

  it('leaves another generation alone, and keeps a key named __proto__ as data', () => {
    const g = generation();
    const other = copy({ ...g, generationId: 'g-other' });
    assert.equal(shareGeneration(g, other), other);
    assert.equal(shareGeneration(null, g), g);
    const previous = JSON.parse('{"a":{"x":1},"__proto__":{"y":2}}') as unknown;
    const next = JSON.parse('{"a":{"x":1},"__proto__":{"y":3}}') as Record<string, unknown>;
    const shared = share(previous, next) as Record<string, unknown>;
    assert.ok(Object.prototype.hasOwnProperty.call(shared, '__proto__'));
    assert.equal(Object.getPrototypeOf(shared), Object.prototype);
    assert.ok(sameJson(shared, next));
    assert.equal(shared['a'], (previous as Record<string, unknown>)['a']);
  });

  it('the reducer keeps the shown generation for an equal push', () => {
    const g = generation();
    const shown = reduce(initialModel, { type: 'message', message: { type: 'rennet/panel/generation', snapshot: g } });
    const again = reduce(shown, { type: 'message', message: { type: 'rennet/panel/generation', snapshot: copy(g) } });
    assert.equal(again.generation, g);
  });
});

describe('webview/board/tree: reuseNodes', () => {
  const nodes = (tree: BoardTree): Map<string, TreeNode> => {
    const out = new Map<string, TreeNode>();
    const walk = (list: readonly TreeNode[]) => {
      for (const node of list) {
        out.set(node.element.id, node);
        walk(node.children);
      }
    };
    walk(tree.roots);
    return out;
  };
  const replaced = (pool: readonly BoardElement[], id: string, change: (e: BoardElement) => BoardElement) => pool.map((e) => (e.id === id ? change(e) : e));

  it('keeps every node when the pool is the same elements', () => {
    const pool = generation().lanes.find((l) => l.lens === 'flagged')?.board?.elements ?? [];
    const first = buildTree(pool);
    const second = reuseNodes(first, buildTree([...pool]));
    assert.deepEqual(second.roots, first.roots);
    second.roots.forEach((root, i) => assert.equal(root, first.roots[i]));
  });

  it('renews a changed element, its ancestors, and nothing else', () => {
    const pool = flaggedOf(generation()).elements;
    const first = buildTree(pool);
    const next = reuseNodes(first, buildTree(replaced(pool, 'f5', (e) => ({ ...e, title: 'changed' }) as BoardElement)));
    const a = nodes(first);
    const b = nodes(next);
    assert.notEqual(b.get('f5'), a.get('f5'));
    assert.notEqual(b.get('f1'), a.get('f1'), 'its section holds a new child');
    for (const id of ['f4', 'f6', 'f7', 'f8', 'f9', 'f2', 'f3']) assert.equal(b.get(id), a.get(id), `${id} is kept`);
    assert.equal((b.get('f5')?.element as ElementOf<'finding'>).title, 'changed');
  });

  it('renews an element whose named code ref changed, though the element itself did not', () => {
    const pool = flaggedOf(generation()).elements;
    const first = buildTree(pool);
    const next = reuseNodes(first, buildTree(replaced(pool, 'f3', (e) => ({ ...e, label: 'moved' }) as BoardElement)));
    const a = nodes(first);
    const b = nodes(next);
    assert.equal(b.get('f4')?.element, a.get('f4')?.element);
    assert.notEqual(b.get('f4'), a.get('f4'), 'f4 anchors f3');
    assert.notEqual(b.get('f8'), a.get('f8'), 'f8 anchors f3');
    assert.equal(b.get('f5'), a.get('f5'), 'f5 anchors f2 only');
  });

  it('renews a step whose number changed when a step is added before it', () => {
    const pool = sequenceBoard().elements;
    const first = buildTree(pool);
    const firstStep = pool.find((e) => e.kind === 'order_step');
    assert.ok(firstStep);
    const extra = elements([{ id: 'q-new', kind: 'order_step', parent: firstStep.parent, title: 'A step first', explanation_markdown: 'x', span: 'none' }])[0] as BoardElement;
    const at = pool.indexOf(firstStep);
    const next = reuseNodes(first, buildTree([...pool.slice(0, at), extra, ...pool.slice(at)]));
    const a = nodes(first);
    const b = nodes(next);
    for (const step of pool.filter((e) => e.kind === 'order_step')) {
      assert.equal(b.get(step.id)?.element, step);
      assert.notEqual(b.get(step.id), a.get(step.id), `${step.id} moved one place (number and index)`);
    }
  });

  it('renews a code ref that became shown at a referrer', () => {
    const pool = elements([codeRef('r1', 'src/a.ts', 1, 2), { id: 'p1', kind: 'prose', markdown: 'text' }]);
    const first = buildTree(pool);
    const finding = elements([
      { id: 'x1', kind: 'finding', severity: 'minor', category: 'testing', title: 't', body_markdown: 'b', remedy_markdown: 'r', anchor: ['r1'], status: 'open', concurrence: [], accord: 'concur' },
    ])[0] as BoardElement;
    const next = reuseNodes(first, buildTree([...pool, finding]));
    assert.ok(next.referenced.has('r1'));
    assert.notEqual(nodes(next).get('r1'), nodes(first).get('r1'));
    assert.equal(nodes(next).get('p1'), nodes(first).get('p1'));
  });
});

describe('webview: a write re-renders the changed element only (happy-dom)', () => {
  const { dom } = happyDomPerTest();

  /** Counts the finding views built while `run` runs (a memoized element that skips builds none). */
  async function findingViewsBuilt(run: () => Promise<void>): Promise<string[]> {
    const built: string[] = [];
    const previous = options.vnode;
    options.vnode = (vnode: VNode) => {
      const type = vnode.type as { name?: string } | string;
      if (typeof type === 'function' && (type as { name?: string }).name === 'FindingView') {
        built.push(String((vnode.props as { element?: { id?: string } }).element?.id));
      }
      previous?.(vnode);
    };
    try {
      await run();
    } finally {
      if (previous) options.vnode = previous;
      else delete options.vnode;
    }
    return built;
  }

  it('rebuilds the one finding a seat changed, and draws its new title', async () => {
    const bridge = new FakeBridge();
    await mountApp(dom.root, bridge);
    await bridge.send({ type: 'rennet/panel/snapshot', snapshot: snapshot() });
    const g = generation();
    await bridge.send({ type: 'rennet/panel/generation', snapshot: g });
    await click(one(dom.root, byTestId('expand-all')));
    assert.equal(all(dom.root, '[data-kind="finding"]').length, 3);

    const same = await findingViewsBuilt(() => bridge.send({ type: 'rennet/panel/generation', snapshot: copy(g) }));
    assert.deepEqual(same, [], 'an equal push builds no finding');

    const changed = await findingViewsBuilt(() => bridge.send({ type: 'rennet/panel/generation', snapshot: withTitle(g, 'f8', 'The body is read three times') }));
    assert.deepEqual(changed, ['f8']);
    assert.match(text(one(dom.root, '[data-id="f8"] .rn-finding-title')), /read three times/);
    assert.match(text(one(dom.root, '[data-id="f4"] .rn-finding-title')), /still sleeps/);
  });
});
