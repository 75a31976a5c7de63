import { runGit } from '../git/run';
import type { ItemClosure } from './closures';

/**
 * Evidence lines as the delta patchset numbers them. A closure's evidence is derived from a unit
 * of the fix delta, and a unit's lines count at its own segment's ends: a segment that ends before
 * the head (a merge of the base came after it) numbers its added lines at that segment's last
 * commit, not at the head. Each such line is carried onto the head (added lines) or the reviewed
 * commit (deleted lines) through `git diff -U0` between the two commits: a line in no hunk moves
 * by the hunks before it; a line a later commit changed again has no place and is left out (the
 * closure stands; its reason still says why). A remerge unit's deleted lines belong to no commit
 * and are left out too. When the base was merged in since the review, the delta patchset's base is
 * the author base (authorDelta.ts): a deleted line is carried from the reviewed commit onto it.
 */

/** The commits a unit's base-side and head-side line numbers are counted at; null: no commit has those lines (a merge's remerge tree). */
export interface UnitFrame {
  base: string | null;
  head: string;
}

export type LineMap = (from: string, to: string, path: string, line: number) => Promise<number | null>;

/** The line `line` of `path` at `from`, at `to`; null when the diff between them changes it (or git cannot say). */
export function gitLineMap(root: string): LineMap {
  const cache = new Map<string, Promise<Array<{ a: number; b: number; d: number }> | null>>();
  const hunks = (from: string, to: string, path: string) => {
    const key = `${from}\0${to}\0${path}`;
    let found = cache.get(key);
    if (!found) {
      found = runGit(['diff', '-U0', '--no-color', '--no-ext-diff', '--no-renames', from, to, '--', `:(literal)${path}`], { cwd: root }).then((r) => {
        if (r.code !== 0) return null;
        return parseUnifiedZero(r.stdout.toString('utf8'));
      });
      cache.set(key, found);
    }
    return found;
  };
  return async (from, to, path, line) => {
    if (from === to) return line;
    const parsed = await hunks(from, to, path);
    return parsed === null ? null : mapLine(parsed, line);
  };
}

/** The old-side start and length and the new-side length of each `-U0` hunk, in order. */
export function parseUnifiedZero(diff: string): Array<{ a: number; b: number; d: number }> {
  const out: Array<{ a: number; b: number; d: number }> = [];
  for (const m of diff.matchAll(/^@@ -(\d+)(?:,(\d+))? \+\d+(?:,(\d+))? @@/gm)) {
    out.push({ a: Number(m[1]), b: m[2] === undefined ? 1 : Number(m[2]), d: m[3] === undefined ? 1 : Number(m[3]) });
  }
  return out;
}

/** PURE. Old line → new line through `-U0` hunks; null when a hunk replaces it. */
export function mapLine(hunks: ReadonlyArray<{ a: number; b: number; d: number }>, line: number): number | null {
  let offset = 0;
  for (const { a, b, d } of hunks) {
    // A pure insertion (b = 0) sits after old line a; a replacement covers old lines a…a+b-1.
    const end = b === 0 ? a : a + b - 1;
    if (b > 0 && line >= a && line <= end) return null;
    if (line > end) offset += d - b;
    else break;
  }
  return line + offset;
}

/**
 * The closures with every evidence line counted as the delta patchset counts it: head lines at
 * `to`; deleted lines at `from` (the reviewed commit), then through `baseLine` onto the delta
 * patchset's own base when that is the author base (authorDelta.ts; absent: the reviewed commit is the base).
 */
export async function evidenceOnDelta(
  closures: readonly ItemClosure[],
  frames: ReadonlyMap<string, UnitFrame>,
  delta: { from: string; to: string },
  map: LineMap,
  baseLine?: (path: string, line: number) => number | null,
): Promise<ItemClosure[]> {
  const out: ItemClosure[] = [];
  for (const closure of closures) {
    const evidence: ItemClosure['evidence'] = [];
    for (const e of closure.evidence) {
      const frame = frames.get(e.evidenceId);
      if (!frame || e.line === null || e.side === null) {
        evidence.push(e);
        continue;
      }
      const at = e.side === 'head' ? frame.head : frame.base;
      if (at === null) continue;
      const target = e.side === 'head' ? delta.to : delta.from;
      const mapped = await map(at, target, e.path, e.line);
      const line = mapped !== null && e.side === 'base' && baseLine ? baseLine(e.path, mapped) : mapped;
      if (line !== null) evidence.push({ ...e, line });
    }
    out.push({ ...closure, evidence });
  }
  return out;
}
