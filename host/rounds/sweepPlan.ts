import { sep } from 'node:path';
import { SIBLING_BRANCH_PREFIX } from '../../protocol/rounds';
import type { WorktreeEntry } from './workspace';

/**
 * PURE. What the daemon-start sweep does in one repository, decided from facts the runner
 * (host/rounds/sweep.ts) asked of git and the store:
 * - every sibling (`rennet/<branch>`, with or without a worktree) no live session is bound to is
 *   collected when its tip is reachable from `<branch>` (locally or through a remote's ref of it),
 *   and kept, with how far ahead it is, otherwise; a live session's sibling, and one the clone
 *   itself has out, are never touched;
 * - `git worktree prune` (which takes no path) runs only when every registration git cannot reach
 *   is Rennet's own (under the repository's placement root, or on a `rennet/*` branch) and claimed
 *   by no live session (by work branch, or by path in any of its spellings); otherwise nothing is
 *   pruned and the registrations that held it are named with why.
 * A sibling whose registration git cannot reach loses its branch only once that prune ran: git
 * will not delete a branch a registration still has out.
 */

/** A session of the repository as the sweep sees it. */
export interface SweepSession {
  id: string;
  /** Not archived. Only a live session claims a workspace. */
  live: boolean;
  /** Its recorded binding, null when it has none. */
  binding: { root: string; branch: string; workBranch?: string } | null;
}

/** Whether a sibling's tip is in its branch, asked of git by the runner. */
export interface SiblingReach {
  tip: string;
  /** The first ref found containing the tip (`refs/heads/<branch>`, `refs/remotes/<remote>/<branch>`), null when none does. */
  reachedVia: string | null;
  /** Commits the sibling holds that the branch does not; null when there is no branch here to count against. */
  ahead: number | null;
}

export interface SweepInput {
  /** `git worktree list --porcelain`, parsed (the first is the clone's own). */
  worktrees: readonly WorktreeEntry[];
  /** Local branches under `rennet/` (short names), worktree or not. */
  siblingBranches: readonly string[];
  sessions: readonly SweepSession[];
  /** The repository's placement root(s), in every spelling the runner resolved. */
  placementRoots: readonly string[];
  /** Other spellings of a path (a symlink resolved, a lost directory's nearest existing parent resolved); a path with none is spelled only as itself. */
  spellings: Readonly<Record<string, readonly string[]>>;
  /** Per sibling branch; a sibling missing here is kept (its tip could not be read). */
  reach: Readonly<Record<string, SiblingReach>>;
}

export type SiblingVerdict =
  | {
      action: 'collect';
      workBranch: string;
      branch: string;
      /** The worktree to remove first (git worktree remove, never --force); null when there is none to remove. */
      worktree: string | null;
      /** Its branch goes only once the prune ran (its registration git cannot reach still has the branch out). */
      afterPrune: boolean;
      reachedVia: string;
      tip: string;
    }
  | {
      action: 'keep';
      workBranch: string;
      branch: string;
      worktree: string | null;
      why: 'bound' | 'ahead' | 'clone' | 'unread' | 'not-pruned';
      /** For `ahead`: how far (null when there is no branch here to count against). */
      ahead: number | null;
      /** For `bound`: the live sessions bound to it. */
      sessions: readonly string[];
      reason: string;
    };

export type PruneVerdict = { action: 'none' } | { action: 'prune'; paths: readonly string[] } | { action: 'hold'; held: ReadonlyArray<{ path: string; reason: string }> };

export interface SweepPlan {
  siblings: readonly SiblingVerdict[];
  prune: PruneVerdict;
}

function spelled(input: SweepInput, path: string): string[] {
  return [path, ...(input.spellings[path] ?? [])];
}

function sameSpelling(input: SweepInput, a: string, b: string): boolean {
  const bs = spelled(input, b);
  return spelled(input, a).some((x) => bs.includes(x));
}

function under(path: string, root: string): boolean {
  return path.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
}

function workBranchOf(binding: NonNullable<SweepSession['binding']>): string {
  return binding.workBranch ?? binding.branch;
}

/** The live sessions bound to `path` (any spelling) or working on `branch`. */
function claimants(input: SweepInput, path: string | null, branch: string | null): string[] {
  return input.sessions
    .filter((s) => s.live && s.binding !== null)
    .filter((s) => (branch !== null && workBranchOf(s.binding!) === branch) || (path !== null && sameSpelling(input, s.binding!.root, path)))
    .map((s) => s.id);
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** What the sweep does in one repository. */
export function planSweep(input: SweepInput): SweepPlan {
  const clone = input.worktrees[0] ?? null;

  // The prune first: a sibling whose registration git cannot reach depends on it.
  const unreachable = input.worktrees.filter((w) => w.prunable !== null);
  const held: Array<{ path: string; reason: string }> = [];
  for (const w of unreachable) {
    const rennets = (w.branch !== null && w.branch.startsWith(SIBLING_BRANCH_PREFIX)) || spelled(input, w.path).some((p) => input.placementRoots.some((r) => under(p, r)));
    if (!rennets) {
      held.push({ path: w.path, reason: `not Rennet's (outside its placement root, on ${w.branch ?? 'no branch'}): git worktree repair or prune is yours to run` });
      continue;
    }
    const who = claimants(input, w.path, w.branch);
    if (who.length > 0) held.push({ path: w.path, reason: `the live review session${who.length === 1 ? '' : 's'} ${who.join(', ')} claim${who.length === 1 ? 's' : ''} it` });
  }
  const prune: PruneVerdict = unreachable.length === 0 ? { action: 'none' } : held.length === 0 ? { action: 'prune', paths: unreachable.map((w) => w.path) } : { action: 'hold', held };

  const names = new Set(input.siblingBranches.filter((b) => b.startsWith(SIBLING_BRANCH_PREFIX)));
  for (const w of input.worktrees) if (w.branch?.startsWith(SIBLING_BRANCH_PREFIX)) names.add(w.branch);
  const siblings: SiblingVerdict[] = [];
  for (const workBranch of [...names].sort()) {
    const branch = workBranch.slice(SIBLING_BRANCH_PREFIX.length);
    const entry = input.worktrees.find((w) => w.branch === workBranch) ?? null;
    const worktree = entry?.path ?? null;
    const keep = (why: Extract<SiblingVerdict, { action: 'keep' }>['why'], reason: string, extra: { ahead?: number | null; sessions?: string[] } = {}): SiblingVerdict => ({
      action: 'keep',
      workBranch,
      branch,
      worktree,
      why,
      ahead: extra.ahead ?? null,
      sessions: extra.sessions ?? [],
      reason,
    });
    const bound = input.sessions
      .filter((s) => s.live && s.binding !== null && (s.binding.workBranch === workBranch || (worktree !== null && sameSpelling(input, s.binding.root, worktree))))
      .map((s) => s.id);
    if (bound.length > 0) {
      siblings.push(keep('bound', `the live review session${bound.length === 1 ? '' : 's'} ${bound.join(', ')} ${bound.length === 1 ? 'is' : 'are'} bound to it`, { sessions: bound }));
      continue;
    }
    if (entry !== null && clone !== null && entry === clone) {
      siblings.push(keep('clone', `the repository's clone root has it out`));
      continue;
    }
    const reach = input.reach[workBranch];
    if (!reach) {
      siblings.push(keep('unread', `its tip could not be read`));
      continue;
    }
    if (reach.reachedVia === null) {
      siblings.push(
        keep(
          'ahead',
          reach.ahead === null ? `${branch} is not here to contain its tip` : `it is ${plural(reach.ahead, 'commit')} ahead of ${branch}, which does not contain its tip (land it or push it first)`,
          {
            ahead: reach.ahead,
          },
        ),
      );
      continue;
    }
    const afterPrune = entry !== null && entry.prunable !== null;
    if (afterPrune && prune.action !== 'prune') {
      siblings.push(keep('not-pruned', `its registration at ${worktree} cannot be reached and was not pruned this pass`));
      continue;
    }
    siblings.push({ action: 'collect', workBranch, branch, worktree: afterPrune ? null : worktree, afterPrune, reachedVia: reach.reachedVia, tip: reach.tip });
  }
  return { siblings, prune };
}
