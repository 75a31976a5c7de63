import type { BranchFreshness, FreshnessState, RefreshAction } from '../../protocol/gates';
import { pullRequestRefs, type ForgeEntry, type PullRequestRef } from '../../protocol/forge';
import { runGit } from '../git/run';
import { listRemotes } from './remote';
import { resolveForge, sameRepository } from './resolve';

/**
 * The local copy of a request against its head on the forge, by comparing refs (never dates):
 * the local ref (the request's branch here, else the head a review captured), the remote-tracking
 * ref of the forge's remote, and the request's live head. One stated state and the one action
 * that brings the local copy to the head. git runs with argv; nothing here changes a ref.
 */

export interface FreshnessRefs {
  /** `refs/heads/<b>` (kind 'branch') or a review's hidden head ref (kind 'captured'); null: none here. */
  local: { ref: string; kind: 'branch' | 'captured' } | null;
  /** `refs/remotes/<remote>/<b>`; null when the forge's remote has none. */
  trackingRef: string | null;
  /** The remote whose URL is the forge repository (for the commands named); null when none is. */
  remote: string | null;
  /** The request's head branch name (for the commands named). */
  branch: string;
}

async function revParse(repoRoot: string, ref: string): Promise<string | null> {
  const r = await runGit(['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`], { cwd: repoRoot });
  return r.code === 0 ? r.stdout.toString('utf8').trim() || null : null;
}

async function hasCommit(repoRoot: string, sha: string): Promise<boolean> {
  if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(sha)) return false;
  const r = await runGit(['cat-file', '-e', '--end-of-options', `${sha}^{commit}`], { cwd: repoRoot });
  return r.code === 0;
}

/** Commits `a` has that `b` lacks, and the other way round. */
async function aheadBehind(repoRoot: string, a: string, b: string): Promise<{ ahead: number; behind: number } | null> {
  const r = await runGit(['rev-list', '--left-right', '--count', `${a}...${b}`, '--'], { cwd: repoRoot });
  if (r.code !== 0) return null;
  const [ahead, behind] = r.stdout.toString('utf8').trim().split(/\s+/).map(Number);
  return ahead === undefined || behind === undefined || Number.isNaN(ahead) || Number.isNaN(behind) ? null : { ahead, behind };
}

/**
 * How many commits the reviewed head has that the request's live head lacks, when the live head
 * is one of its ancestors (one's own request after a round whose commits are not pushed yet); null
 * when it is not (the head moved its own way, or is not in this repository), or they are equal.
 */
export async function liveHeadBehind(repoRoot: string, liveHead: string, reviewedHead: string): Promise<number | null> {
  if (liveHead === reviewedHead || !(await hasCommit(repoRoot, liveHead)) || !(await hasCommit(repoRoot, reviewedHead))) return null;
  const ancestor = await runGit(['merge-base', '--is-ancestor', liveHead, reviewedHead], { cwd: repoRoot });
  if (ancestor.code !== 0) return null;
  const counts = await aheadBehind(repoRoot, reviewedHead, liveHead);
  return counts && counts.ahead > 0 ? counts.ahead : null;
}

const short = (sha: string) => sha.slice(0, 7);
const commits = (n: number) => `${n} commit${n === 1 ? '' : 's'}`;

/** A branch name git accepts and that cannot be read as an option or a range. */
export function plainBranchName(name: string): boolean {
  return /^[^\s~^:?*[\\]+$/.test(name) && !name.startsWith('-') && !name.includes('..') && !name.endsWith('.lock') && !name.endsWith('/');
}

/**
 * The refs to compare for a request: its head branch here if this repository has one, else the
 * head Rennet captured for its review; the tracking ref of the remote whose URL is the forge's.
 */
export async function freshnessRefs(repoRoot: string, target: PullRequestRef, headBranch: string, registry: readonly ForgeEntry[]): Promise<FreshnessRefs> {
  const named = plainBranchName(headBranch);
  let local: FreshnessRefs['local'] = null;
  if (named && (await revParse(repoRoot, `refs/heads/${headBranch}`)) !== null) local = { ref: `refs/heads/${headBranch}`, kind: 'branch' };
  else {
    const captured = pullRequestRefs(target).head;
    if ((await revParse(repoRoot, captured)) !== null) local = { ref: captured, kind: 'captured' };
  }
  const remote = (await listRemotes(repoRoot)).find((r) => {
    const resolved = resolveForge(r.fetchUrl, registry);
    return resolved.ok && sameRepository(resolved.value, target);
  });
  const tracking = remote && named ? `refs/remotes/${remote.name}/${headBranch}` : null;
  return { local, trackingRef: tracking !== null && (await revParse(repoRoot, tracking)) !== null ? tracking : null, remote: remote?.name ?? null, branch: headBranch };
}

/**
 * The stated freshness, checked in this order (the first that holds):
 * - `no-local-ref`: no branch and no captured head here → check out the remote-tracking branch when
 *   it is at the head, else fetch;
 * - `in-sync`: the local ref is the head;
 * - `remote-moved`: the head is not in this repository, or the remote-tracking ref is not at the
 *   head (the forge moved since the last fetch) → fetch;
 * - `local-behind` (the head contains the local ref) → pull (a branch) or Capture New Head;
 * - `local-ahead` (the local ref contains the head) → push (a branch) or Capture New Head;
 * - `diverged` → rebase onto the head (a branch) or Capture New Head.
 */
export async function readFreshness(repoRoot: string, refs: FreshnessRefs, prHead: string): Promise<BranchFreshness> {
  const remote = refs.remote ?? '<remote>';
  const b = refs.branch;
  const tracking = refs.trackingRef === null ? null : await revParse(repoRoot, refs.trackingRef);
  const local = refs.local === null ? null : await revParse(repoRoot, refs.local.ref);
  const base = { localRef: refs.local?.ref ?? null, localKind: refs.local?.kind ?? null, local, trackingRef: refs.trackingRef, tracking, prHead };
  const say = (state: FreshnessState, action: RefreshAction, message: string, counts: { ahead: number; behind: number } | null = null): BranchFreshness => ({
    ...base,
    state,
    action,
    message,
    ahead: counts?.ahead ?? null,
    behind: counts?.behind ?? null,
  });
  if (local === null) {
    if (tracking === prHead)
      return say('no-local-ref', 'checkout', `No branch ${b} here; ${refs.trackingRef?.replace(/^refs\/remotes\//, '')} is at the request's head ${short(prHead)}: check it out (git switch ${b}).`);
    return say('no-local-ref', 'fetch', `No copy of ${b} here: fetch it (git fetch ${remote} ${b}), or review the request to capture its head.`);
  }
  const captured = refs.local?.kind === 'captured';
  const what = captured ? 'The review' : `Your ${b}`;
  if (local === prHead) return say('in-sync', 'none', `${what} is at the request's head ${short(prHead)}.`, { ahead: 0, behind: 0 });
  if (!(await hasCommit(repoRoot, prHead)))
    return say('remote-moved', 'fetch', `The request's head ${short(prHead)} is not in this repository: the forge moved since your last fetch. Fetch (git fetch ${remote}).`);
  if (tracking !== null && tracking !== prHead)
    return say(
      'remote-moved',
      'fetch',
      `${refs.trackingRef?.replace(/^refs\/remotes\//, '')} is at ${short(tracking)}, the request's head is ${short(prHead)}: the forge moved since your last fetch. Fetch (git fetch ${remote}).`,
    );
  const counts = await aheadBehind(repoRoot, local, prHead);
  if (counts === null) return say('remote-moved', 'fetch', `Could not compare ${short(local)} with the request's head ${short(prHead)}: fetch (git fetch ${remote}) and read again.`);
  if (captured) {
    const how =
      counts.ahead === 0
        ? `${commits(counts.behind)} behind`
        : counts.behind === 0
          ? `${commits(counts.ahead)} ahead of it (the head was rewound)`
          : `diverged from it (${counts.ahead} ahead, ${counts.behind} behind: the head was rewritten)`;
    const state: FreshnessState = counts.ahead === 0 ? 'local-behind' : counts.behind === 0 ? 'local-ahead' : 'diverged';
    return say(state, 'capture-new-head', `The review read ${short(local)}, ${how} the request's head ${short(prHead)}: Capture New Head.`, counts);
  }
  if (counts.ahead === 0)
    return say('local-behind', 'pull', `Your ${b} is ${commits(counts.behind)} behind the request's head ${short(prHead)}: pull (git merge --ff-only ${short(prHead)}, on ${b}).`, counts);
  if (counts.behind === 0)
    return say('local-ahead', 'push', `Your ${b} is ${commits(counts.ahead)} ahead of the request's head ${short(prHead)}: push them (git push ${remote} ${b}) or the merge leaves them out.`, counts);
  return say(
    'diverged',
    'rebase',
    `Your ${b} and the request's head ${short(prHead)} diverged (${counts.ahead} here, ${counts.behind} there): rebase onto it (git rebase ${short(prHead)}, on ${b}), then push.`,
    counts,
  );
}
