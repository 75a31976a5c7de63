import type { CaptureOptions, FileChange } from '../../protocol/patchset';
import { err, ok, rennetError, type Result } from '../../protocol/result';
import { captureRemergeDiff, captureTreeDiff } from '../capture/capture';
import { openRepo } from '../capture/repo';
import { runGit } from '../git/run';

/**
 * The second look at a pull request: what changed since the reviewer's earlier review.
 *
 * Ancestry first (`git merge-base --is-ancestor <review commit> <head>`): exit 0 — the review's
 * commit is an ancestor of the head (equal included); exit 1 — it is not (a force push or a
 * rebase); any other exit — not an ancestor, with git's first stderr line as the reason; no review
 * commit at all — not an ancestor because it is missing (git is not asked). The answer is bound to
 * that exact pair: a different review commit or head is a new question.
 *
 * The fix delta, only for an ancestor: equal commits → no diff at all, said in words; otherwise the
 * diff from the review's commit to the head — cut at every merge on the first-parent line: the
 * author's segment up to the merge's first parent, then the merge's remerge-diff (only what the
 * author resolved or added inside the merge counts as their work), then on from the merge.
 */

export type Ancestry = { kind: 'ancestor'; from: string; to: string; equal: boolean } | { kind: 'not-ancestor'; from: string | null; to: string; reason: string };

export async function checkAncestry(root: string, reviewCommit: string | null, head: string): Promise<Ancestry> {
  if (!reviewCommit) return { kind: 'not-ancestor', from: null, to: head, reason: 'review commit is missing' };
  const r = await runGit(['merge-base', '--is-ancestor', reviewCommit, head], { cwd: root });
  if (r.code === 0) return { kind: 'ancestor', from: reviewCommit, to: head, equal: await sameCommit(root, reviewCommit, head) };
  if (r.code === 1) return { kind: 'not-ancestor', from: reviewCommit, to: head, reason: 'force push or rebase' };
  const first =
    r.stderr
      .split('\n')
      .find((l) => l.trim() !== '')
      ?.trim() ?? `git exited ${r.code}`;
  return { kind: 'not-ancestor', from: reviewCommit, to: head, reason: first };
}

async function sameCommit(root: string, a: string, b: string): Promise<boolean> {
  const r = await runGit(['rev-parse', `${a}^{commit}`, `${b}^{commit}`], { cwd: root });
  const [x, y] = r.stdout.toString('utf8').trim().split('\n');
  return r.code === 0 && x !== undefined && x === y;
}

/** One piece of the fix delta. */
export type DeltaSegment =
  /** The author's commits between two points of the first-parent line. */
  | { kind: 'diff'; from: string; to: string; files: FileChange[] }
  /** What the author resolved (or added) inside a merge: its remerge-diff. Empty for a clean merge. */
  | { kind: 'remerge'; merge: string; files: FileChange[] };

export type FixDelta =
  | { kind: 'none'; ancestry: Extract<Ancestry, { kind: 'ancestor' }>; statement: string; segments: [] }
  | { kind: 'delta'; ancestry: Extract<Ancestry, { kind: 'ancestor' }>; segments: DeltaSegment[] }
  | { kind: 'full'; ancestry: Extract<Ancestry, { kind: 'not-ancestor' }>; statement: string };

/** The fix delta for an ancestry answer (a not-ancestor is a full review, stated). */
export async function fixDelta(root: string, ancestry: Ancestry, options?: Partial<CaptureOptions>): Promise<Result<FixDelta>> {
  if (ancestry.kind === 'not-ancestor') {
    const sha7 = ancestry.from ? ancestry.from.slice(0, 7) : 'unknown';
    return ok({ kind: 'full', ancestry, statement: `the earlier review's commit ${sha7} is not an ancestor of the head (${ancestry.reason}), so the whole change is reviewed` });
  }
  if (ancestry.equal) return ok({ kind: 'none', ancestry, statement: `no commits since ${ancestry.from.slice(0, 7)} - no code diff`, segments: [] });
  const repo = await openRepo(root);
  if (!repo.ok) return repo;
  const listed = await runGit(['rev-list', '--first-parent', '--reverse', '--merges', `${ancestry.from}..${ancestry.to}`], { cwd: repo.value.root });
  if (listed.code !== 0) return err(rennetError('git-failed', `git could not list the merges since ${ancestry.from.slice(0, 7)}: ${listed.stderr.trim()}`));
  const merges = listed.stdout.toString('utf8').split('\n').filter(Boolean);
  const segments: DeltaSegment[] = [];
  let from = ancestry.from;
  for (const merge of merges) {
    const parent = await runGit(['rev-parse', `${merge}^1`], { cwd: repo.value.root });
    if (parent.code !== 0) return err(rennetError('git-failed', `git could not read the first parent of ${merge.slice(0, 7)}: ${parent.stderr.trim()}`));
    const firstParent = parent.stdout.toString('utf8').trim();
    if (firstParent !== from) {
      const own = await captureTreeDiff(repo.value, from, firstParent, options);
      if (!own.ok) return own;
      segments.push({ kind: 'diff', from, to: firstParent, files: own.value });
    }
    const inside = await captureRemergeDiff(repo.value, merge, options);
    if (!inside.ok) return inside;
    segments.push({ kind: 'remerge', merge, files: inside.value });
    from = merge;
  }
  if (from !== ancestry.to) {
    const tail = await captureTreeDiff(repo.value, from, ancestry.to, options);
    if (!tail.ok) return tail;
    segments.push({ kind: 'diff', from, to: ancestry.to, files: tail.value });
  }
  return ok({ kind: 'delta', ancestry, segments });
}
