import { z } from 'zod';
import { err, ok, rennetError, type Result } from '../../protocol/result';
import { type RoundsLandResult, type RoundsLanding } from '../../protocol/rounds';
import type { Session } from '../../protocol/session';
import { runGit } from '../git/run';
import { capGitWords, listWorktrees, recordedBinding, type WorkspaceStore } from './workspace';
import { pullRequestRecordOf } from './request';

/**
 * Where a sibling's commits stand against the reviewed branch, and the land that carries them back.
 *
 * Only a session bound on a sibling (`rennet/<branch>`, workspace `own`) has anything here: under
 * `share` the round's commits are on the branch itself.
 * - `landingLine` (PURE) words the one line shown beside the branch, from facts `readLandingFacts`
 *   asks of git at that moment (never stamped on the session): behind the recorded push
 *   destination once the sibling's tip reached it; "has not moved" while it has not; nothing once
 *   the branch contains the sibling's tip (containment — `merge-base --is-ancestor` —, not equal
 *   tips, so work committed or pulled on top of a landing does not bring the line back).
 * - `landWorkBranch` runs `git merge --ff-only <workBranch>` inside the worktree that has the
 *   reviewed branch out (found with `git worktree list`, never assumed to be the repository root).
 *   Git alone decides: a refusal comes back in git's words, capped (LAND_REFUSAL_MAX_CHARS) with an
 *   honest marker, and nothing has changed.
 */

/** The session's recorded push destination: where a push of its work branch landed (remote and branch name). */
export const PUSH_DESTINATION_EVENT_KIND = 'session.pushDestination';
export const PushDestination = z.object({ remote: z.string().min(1), branch: z.string().min(1), workBranch: z.string().min(1) });
export type PushDestination = z.infer<typeof PushDestination>;

/** Records where a push of the session's work branch went. Only for a work branch that is not the reviewed branch. */
export function recordPushDestination(store: WorkspaceStore, sessionId: string, destination: PushDestination, now: string): void {
  store.appendEvent(sessionId, PUSH_DESTINATION_EVENT_KIND, destination, now);
}

export function recordedPushDestination(store: WorkspaceStore, sessionId: string): PushDestination | null {
  const last = store
    .readEvents(sessionId)
    .filter((e) => e.kind === PUSH_DESTINATION_EVENT_KIND)
    .map((e) => PushDestination.safeParse(e.payload))
    .filter((p) => p.success)
    .at(-1);
  return last?.success ? last.data : null;
}

/** What the landing line is worded from. */
export interface LandingFacts {
  branch: string;
  workBranch: string;
  /** The reviewed branch contains the work branch's tip. */
  branchContains: boolean;
  /** The recorded push destination's remote-tracking ref as git has it now, or null (none recorded, or not fetched). */
  destination: {
    /** `<remote>/<branch>`: a name `git log` takes. */
    name: string;
    /** The destination contains the work branch's tip. */
    contains: boolean;
    /** Commits the destination holds that the branch does not. */
    behind: number;
  } | null;
}

/** PURE. The line beside the branch, or null when there is nothing to say. */
export function landingLine(facts: LandingFacts): string | null {
  if (facts.branchContains) return null;
  const d = facts.destination;
  if (d && d.contains && d.behind > 0) return `${facts.branch} is behind ${d.name} by ${d.behind} commit${d.behind === 1 ? '' : 's'}.`;
  return `The round's commits are on ${facts.workBranch}. ${facts.branch} has not moved.`;
}

async function revParse(cwd: string, ref: string): Promise<string | null> {
  const r = await runGit(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], { cwd });
  return r.code === 0 ? r.stdout.toString('utf8').trim() : null;
}

/** `git merge-base --is-ancestor`: true, false, or git's error. */
export async function isAncestor(cwd: string, ancestor: string, of: string): Promise<Result<boolean>> {
  const r = await runGit(['merge-base', '--is-ancestor', ancestor, of], { cwd });
  if (r.code === 0) return ok(true);
  if (r.code === 1) return ok(false);
  return err(rennetError('git-failed', `git could not tell whether ${ancestor} is an ancestor of ${of}: ${r.stderr.trim()}`));
}

/** Commits `to` holds that `from` does not (`git rev-list --count from..to`). */
export async function countBetween(cwd: string, from: string, to: string): Promise<Result<number>> {
  const r = await runGit(['rev-list', '--count', `${from}..${to}`], { cwd });
  if (r.code !== 0) return err(rennetError('git-failed', `git could not count ${from}..${to}: ${r.stderr.trim()}`));
  return ok(Number(r.stdout.toString('utf8').trim()));
}

/** The facts of the line, asked of git now; null when the work branch no longer exists. */
export async function readLandingFacts(repoRoot: string, branch: string, workBranch: string, destination: PushDestination | null): Promise<Result<LandingFacts | null>> {
  const tip = await revParse(repoRoot, `refs/heads/${workBranch}`);
  if (!tip) return ok(null);
  const branchTip = await revParse(repoRoot, `refs/heads/${branch}`);
  let branchContains = false;
  if (branchTip) {
    const contains = await isAncestor(repoRoot, tip, branchTip);
    if (!contains.ok) return contains;
    branchContains = contains.value;
  }
  let dest: LandingFacts['destination'] = null;
  if (destination && destination.workBranch === workBranch) {
    const ref = `refs/remotes/${destination.remote}/${destination.branch}`;
    const destTip = await revParse(repoRoot, ref);
    if (destTip) {
      const contains = await isAncestor(repoRoot, tip, destTip);
      if (!contains.ok) return contains;
      let behind = 0;
      if (branchTip) {
        const counted = await countBetween(repoRoot, branchTip, destTip);
        if (!counted.ok) return counted;
        behind = counted.value;
      }
      dest = { name: `${destination.remote}/${destination.branch}`, contains: contains.value, behind };
    }
  }
  return ok({ branch, workBranch, branchContains, destination: dest });
}

/** The reviewed branch: a branch review's head; for one's own request, the head branch it bound on (else its record's). */
function landingBranch(store: WorkspaceStore, session: Session, bound: ReturnType<typeof recordedBinding>): string {
  if (session.target.kind === 'branch') return session.target.head;
  return bound?.branch ?? pullRequestRecordOf(store, session.id)?.headRef ?? '';
}

/** The session's landing line, read from git now. */
export async function landingFor(store: WorkspaceStore, session: Session): Promise<Result<RoundsLanding>> {
  if (session.target.kind === 'working-tree') return ok({ branch: '', workBranch: null, line: null });
  const bound = recordedBinding(store, session.id);
  const branch = landingBranch(store, session, bound);
  if (!bound?.workBranch) return ok({ branch, workBranch: null, line: null });
  const facts = await readLandingFacts(session.repoRoot, branch, bound.workBranch, recordedPushDestination(store, session.id));
  if (!facts.ok) return facts;
  return ok({ branch, workBranch: bound.workBranch, line: facts.value ? landingLine(facts.value) : null });
}

// git's words, capped (workspace.ts holds it: the drift repair reports git's refusal the same way).
export { capGitWords };

/**
 * Land: the reviewed branch fast-forwarded to the session's work branch, in the worktree that has
 * the branch out. Under `share` (no work branch) there is nothing to land, and it says so.
 */
export async function landWorkBranch(store: WorkspaceStore, session: Session): Promise<Result<RoundsLandResult>> {
  if (session.target.kind === 'working-tree') return err(rennetError('invalid-request', 'only a branch review, or one of your own request, has a work branch to land'));
  const bound = recordedBinding(store, session.id);
  const branch = landingBranch(store, session, bound);
  const workBranch = bound?.workBranch ?? null;
  const nothing = (message: string): Result<RoundsLandResult> => ok({ branch, workBranch, landed: false, worktree: null, from: null, to: null, message });
  if (!workBranch) {
    return nothing(
      bound
        ? `Nothing to land: this review's rounds commit on ${branch} itself (the workspace is shared), so their commits are already there.`
        : `Nothing to land: this review is bound to no workspace now, so no sibling holds its rounds' commits.`,
    );
  }
  const root = session.repoRoot;
  const tip = await revParse(root, `refs/heads/${workBranch}`);
  if (!tip) return nothing(`Nothing to land: ${workBranch} no longer exists.`);
  const worktrees = await listWorktrees(root);
  if (!worktrees.ok) return worktrees;
  const holder = worktrees.value.find((w) => w.branch === branch);
  if (!holder) {
    return err(
      rennetError(
        'invalid-request',
        `no checkout has ${branch} out, so there is nowhere to fast-forward it: check ${branch} out, then land (git merge --ff-only ${workBranch} runs in that checkout); nothing changed`,
      ),
    );
  }
  if (holder.prunable) {
    return err(
      rennetError('invalid-request', `${holder.path}, the worktree that has ${branch} out, is one git cannot reach (${holder.prunable}); nothing changed`, {
        path: holder.path,
        reason: holder.prunable,
      }),
    );
  }
  const from = await revParse(holder.path, 'HEAD');
  const merged = await runGit(['merge', '--ff-only', workBranch], { cwd: holder.path });
  const to = await revParse(holder.path, 'HEAD');
  if (merged.code !== 0) {
    const words = capGitWords([merged.stdout.toString('utf8').trim(), merged.stderr.trim()].filter((w) => w.length > 0).join('\n') || `git exited ${merged.code}`);
    const moved = from !== to ? ` (${branch} is now at ${to ?? 'an unreadable commit'}, though git refused)` : '; nothing changed';
    return err(rennetError('git-failed', `git refused to fast-forward ${branch} to ${workBranch} in ${holder.path}${moved}:\n${words}`, { git: words, worktree: holder.path }));
  }
  if (from === to) return ok({ branch, workBranch, landed: false, worktree: holder.path, from, to, message: `Nothing to land: ${branch} already contains ${workBranch}.` });
  const count = from && to ? await countBetween(holder.path, from, to) : null;
  const n = count?.ok ? count.value : null;
  return ok({
    branch,
    workBranch,
    landed: true,
    worktree: holder.path,
    from,
    to,
    message: `${branch} fast-forwarded to ${workBranch}${n !== null ? ` (${n} commit${n === 1 ? '' : 's'})` : ''} in ${holder.path}: ${from?.slice(0, 12) ?? '?'}..${to?.slice(0, 12) ?? '?'}.`,
  });
}
