/**
 * A board's element pool as the tree the view walks (pure). Every element is placed exactly once:
 * - an element whose parent is null, unknown or itself is a root, in creation order;
 * - children keep creation order;
 * - a parent cycle (which the host's rules refuse, but a reader never trusts) is broken where it
 *   is first met: the unplaced element becomes a root, so nothing is dropped and nothing loops;
 * - nesting deeper than MAX_ELEMENT_DEPTH is shown flat under the deepest shown ancestor.
 * Code refs another element names (span, evidence, anchor, trace) are collected so the view shows
 * them at their referrer rather than again in place.
 */
import type { BoardElement, ElementOf } from '../../protocol';

/** Levels of element nesting shown (the top level counts as one). */
export const MAX_ELEMENT_DEPTH = 24;

export interface TreeNode {
  element: BoardElement;
  /** Position in the pool (unique even when ids are not): a stable key. */
  index: number;
  children: TreeNode[];
}

export interface BoardTree {
  roots: TreeNode[];
  /** First element per id. */
  byId: ReadonlyMap<string, BoardElement>;
  /** Code refs shown at their referrer (a step's span, a decision's evidence, …). */
  referenced: ReadonlySet<string>;
  /** Order-step numbers, 1-based, in reading order. */
  stepNumbers: ReadonlyMap<string, number>;
  /** Some nesting was shown flat (deeper than MAX_ELEMENT_DEPTH). */
  flattened: boolean;
}

export function buildTree(elements: readonly BoardElement[]): BoardTree {
  const byId = new Map<string, BoardElement>();
  for (const element of elements) if (!byId.has(element.id)) byId.set(element.id, element);

  const nodes: TreeNode[] = elements.map((element, index) => ({ element, index, children: [] }));
  const childIndexes = new Map<string, number[]>();
  const rootIndexes: number[] = [];
  nodes.forEach((node, index) => {
    const parent = node.element.parent;
    if (parent === null || parent === node.element.id || !byId.has(parent)) {
      rootIndexes.push(index);
      return;
    }
    const list = childIndexes.get(parent);
    if (list) list.push(index);
    else childIndexes.set(parent, [index]);
  });

  const placed = new Uint8Array(nodes.length);
  let flattened = false;

  /** Unplaced descendants of `start`, in creation order (iterative; cycles stop at placed nodes). */
  const descendants = (start: TreeNode): TreeNode[] => {
    const found: TreeNode[] = [];
    const stack = [start];
    while (stack.length > 0) {
      const node = stack.pop() as TreeNode;
      for (const childIndex of childIndexes.get(node.element.id) ?? []) {
        if (placed[childIndex]) continue;
        placed[childIndex] = 1;
        const child = nodes[childIndex] as TreeNode;
        found.push(child);
        stack.push(child);
      }
    }
    return found.sort((a, b) => a.index - b.index);
  };

  const attach = (node: TreeNode, depth: number): void => {
    if (depth >= MAX_ELEMENT_DEPTH - 2) {
      const flat = descendants(node);
      if (flat.length > 0 && flat.some((d) => (childIndexes.get(d.element.id) ?? []).length > 0)) flattened = true;
      node.children = flat;
      return;
    }
    for (const childIndex of childIndexes.get(node.element.id) ?? []) {
      if (placed[childIndex]) continue;
      placed[childIndex] = 1;
      const child = nodes[childIndex] as TreeNode;
      node.children.push(child);
      attach(child, depth + 1);
    }
  };

  const roots: TreeNode[] = [];
  const place = (index: number) => {
    if (placed[index]) return;
    placed[index] = 1;
    const node = nodes[index] as TreeNode;
    roots.push(node);
    attach(node, 0);
  };
  for (const index of rootIndexes) place(index);
  // Whatever a cycle kept unreachable from the top level becomes a root, in creation order.
  for (let index = 0; index < nodes.length; index++) place(index);
  roots.sort((a, b) => a.index - b.index);

  const referenced = new Set<string>();
  for (const element of elements) {
    for (const id of namedRefs(element)) if (typeof id === 'string' && byId.get(id)?.kind === 'code_ref') referenced.add(id);
  }

  const stepNumbers = new Map<string, number>();
  const walk: TreeNode[] = [...roots].reverse();
  while (walk.length > 0) {
    const node = walk.pop() as TreeNode;
    if (node.element.kind === 'order_step' && !stepNumbers.has(node.element.id)) stepNumbers.set(node.element.id, stepNumbers.size + 1);
    for (let i = node.children.length - 1; i >= 0; i--) walk.push(node.children[i] as TreeNode);
  }

  return { roots, byId, referenced, stepNumbers, flattened };
}

/** The ids of the code refs an element names (a step's span, a decision's evidence, …). */
export function namedRefs(element: BoardElement): readonly unknown[] {
  switch (element.kind) {
    case 'order_step':
      return [element.span];
    case 'decision':
    case 'round_outcome':
      return element.evidence ?? [];
    case 'finding':
      return element.anchor ?? [];
    case 'requirement':
      return element.trace ?? [];
    default:
      return [];
  }
}

/**
 * `next` with every node that draws exactly as its counterpart in `previous` replaced by that
 * counterpart (pure; `next` is not changed). A node is kept when its element is the same object
 * (see ../share.ts) at the same index, its children are the kept nodes themselves, and what its
 * view reads from the tree is the same: the elements its named refs resolve to, its step number,
 * whether it is shown at a referrer instead. An unchanged element then keeps its node, and its
 * memoized view (Elements.tsx) skips it by identity; a changed one renews its node and its
 * ancestors' nodes only.
 */
export function reuseNodes(previous: BoardTree | null, next: BoardTree): BoardTree {
  if (previous === null || previous === next) return next;
  const old = new Map<BoardElement, TreeNode>();
  const index = (nodes: readonly TreeNode[]) => {
    for (const node of nodes) {
      if (!old.has(node.element)) old.set(node.element, node);
      index(node.children);
    }
  };
  index(previous.roots);
  const readsSame = (element: BoardElement): boolean => {
    const id = element.id;
    if (previous.referenced.has(id) !== next.referenced.has(id)) return false;
    if (previous.stepNumbers.get(id) !== next.stepNumbers.get(id)) return false;
    for (const ref of namedRefs(element)) {
      if (typeof ref === 'string' && previous.byId.get(ref) !== next.byId.get(ref)) return false;
    }
    return true;
  };
  const visit = (node: TreeNode): TreeNode => {
    const children = node.children.map(visit);
    const before = old.get(node.element);
    if (before && before.index === node.index && sameNodes(before.children, children) && readsSame(node.element)) return before;
    return sameNodes(node.children, children) ? node : { ...node, children };
  };
  const roots = next.roots.map(visit);
  return sameNodes(roots, next.roots) ? next : { ...next, roots };
}

/** A tree as last shown, with the pool it was built from. */
export interface ShownTree {
  elements: readonly BoardElement[];
  tree: BoardTree;
}

/**
 * The tree of `elements`, sharing every node it can with the tree last shown: `reuseNodes` over a
 * fresh `buildTree`, or, when a write only changed elements in place (same ids, kinds, parents and
 * named refs at the same positions, none of them a referenced code ref), the shown tree with just
 * those elements' nodes and their ancestors renewed — a seat's write costs its path to the root,
 * not a walk over the board. Either way the result equals `reuseNodes(shown.tree, buildTree(elements))`.
 */
export function updateTree(shown: ShownTree | null, elements: readonly BoardElement[]): BoardTree {
  if (shown) {
    const patched = patchInPlace(shown, elements);
    if (patched) return patched;
  }
  return reuseNodes(shown?.tree ?? null, buildTree(elements));
}

function patchInPlace({ elements: before, tree }: ShownTree, elements: readonly BoardElement[]): BoardTree | null {
  if (before === elements) return tree;
  if (before.length !== elements.length || tree.flattened) return null;
  const changed: number[] = [];
  for (let i = 0; i < elements.length; i++) {
    const a = before[i] as BoardElement;
    const b = elements[i] as BoardElement;
    if (a === b) continue;
    if (a.id !== b.id || a.kind !== b.kind || a.parent !== b.parent || tree.referenced.has(a.id) || !sameRefs(namedRefs(a), namedRefs(b))) return null;
    changed.push(i);
  }
  if (changed.length === 0) return tree;
  const links = linksOf(tree);
  // An element another names (not only as a code ref) is read by its referrers' views: rebuild.
  for (const i of changed) if (links.named.has((elements[i] as BoardElement).id)) return null;
  const dirty = new Set<TreeNode>();
  for (const i of changed) {
    let node = links.nodeAt.get(i);
    if (!node) return null;
    while (node && !dirty.has(node)) {
      dirty.add(node);
      node = links.parentOf.get(node) ?? undefined;
    }
  }
  // The links move to the new tree (the shown tree is never patched again): renewed nodes take
  // their old nodes' places, and their children point at them.
  const renew = (node: TreeNode, parent: TreeNode | null): TreeNode => {
    if (!dirty.has(node)) {
      if (parent) links.parentOf.set(node, parent);
      return node;
    }
    const next: TreeNode = { element: elements[node.index] as BoardElement, index: node.index, children: [] };
    next.children = node.children.map((child) => renew(child, next));
    links.parentOf.delete(node);
    links.parentOf.set(next, parent);
    links.nodeAt.set(next.index, next);
    return next;
  };
  const byId = new Map(tree.byId);
  for (const i of changed) {
    const a = before[i] as BoardElement;
    if (byId.get(a.id) === a) byId.set(a.id, elements[i] as BoardElement);
  }
  const next: BoardTree = { ...tree, roots: tree.roots.map((root) => renew(root, null)), byId };
  linksCache.delete(tree);
  linksCache.set(next, links);
  return next;
}

function sameRefs(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((ref, i) => ref === b[i]);
}

interface TreeLinks {
  nodeAt: Map<number, TreeNode>;
  parentOf: Map<TreeNode, TreeNode | null>;
  /** Every id some element names as a ref. */
  named: Set<unknown>;
}

/** Each node by pool index and its parent, walked once per tree (a plain walk, no sorting). */
const linksCache = new WeakMap<BoardTree, TreeLinks>();
function linksOf(tree: BoardTree): TreeLinks {
  let links = linksCache.get(tree);
  if (links) return links;
  links = { nodeAt: new Map(), parentOf: new Map(), named: new Set() };
  const stack: Array<[TreeNode, TreeNode | null]> = tree.roots.map((root) => [root, null]);
  while (stack.length > 0) {
    const [node, parent] = stack.pop() as [TreeNode, TreeNode | null];
    links.nodeAt.set(node.index, node);
    links.parentOf.set(node, parent);
    for (const ref of namedRefs(node.element)) links.named.add(ref);
    for (const child of node.children) stack.push([child, node]);
  }
  linksCache.set(tree, links);
  return links;
}

function sameNodes(a: readonly TreeNode[], b: readonly TreeNode[]): boolean {
  return a.length === b.length && a.every((node, i) => node === b[i]);
}

/** The code refs a list of ids names, in the order named; ids that do not resolve are counted. */
export function codeRefs(tree: BoardTree, ids: readonly string[] | undefined): { refs: ElementOf<'code_ref'>[]; missing: string[] } {
  const refs: ElementOf<'code_ref'>[] = [];
  const missing: string[] = [];
  for (const id of ids ?? []) {
    const element = tree.byId.get(id);
    if (element?.kind === 'code_ref') refs.push(element);
    else missing.push(id);
  }
  return { refs, missing };
}

export interface ScenarioClause {
  keyword: string;
  text: string;
}

const CLAUSE = /^\s*[-*+]\s+\*\*(WHEN|THEN|AND|GIVEN|BUT)\*\*:?\s*(.*)$/;

/**
 * A scenario's own `- **WHEN** …` / `**THEN**` / `**AND**` / `**GIVEN**` items as clause rows;
 * else its condition/response pair as WHEN/THEN; else none (it renders as the prose it is).
 */
export function scenarioClauses(scenario: Pick<ElementOf<'scenario'>, 'text_markdown' | 'scenario_condition' | 'scenario_response'>): ScenarioClause[] {
  const fromText: ScenarioClause[] = [];
  for (const line of (scenario.text_markdown ?? '').split('\n')) {
    const match = CLAUSE.exec(line);
    if (match) fromText.push({ keyword: match[1] as string, text: (match[2] ?? '').trim() });
  }
  if (fromText.length > 0) return fromText;
  const when = scenario.scenario_condition?.trim();
  const then = scenario.scenario_response?.trim();
  const pair: ScenarioClause[] = [];
  if (when) pair.push({ keyword: 'WHEN', text: when });
  if (then) pair.push({ keyword: 'THEN', text: then });
  return pair;
}
