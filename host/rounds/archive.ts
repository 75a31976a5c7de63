import { dropHeadWorkspaces } from '../read/headWorkspace';
import { err, ok, rennetError, type Result } from '../../protocol/result';
import type { SessionArchiveResult, SiblingCollection } from '../../protocol/rounds';
import type { Session } from '../../protocol/session';
import { runGit } from '../git/run';
import { countBetween, isAncestor, recordedPushDestination } from './landing';
import { foldRounds, ledgerRows } from './ledger';
import { ARCHIVED_EVENT_KIND, clearBinding, isArchived, listWorktrees, recordedBinding, samePath, sessionsBoundTo, type WorkspaceStore } from './workspace';

/**
 * Archiving a branch review (`rennet archive`, `rennet/session/archive`): the session is marked
 * archived (`session.archived` on its log; a later bind makes it live again), and a sibling it was
 * bound on is collected — its worktree removed and `rennet/<branch>` deleted — only when the
 * sibling's tip is reachable from the reviewed branch, locally or through a remote-tracking ref of
 * it (`merge-base --is-ancestor`). A sibling holding commits the branch lacks keeps its worktree and
 * its branch, and the answer says how many commits ahead it is. A sibling another live session is
 * bound to is never collected. `git worktree remove` runs without --force (a worktree git refuses to
 * remove keeps its branch too); the branch goes with `git branch -d`, falling back to `-D` only
 * because its reachability was proven above (`-d` measures against whatever HEAD the clone has out).
 * The session's recorded workspace is cleared once its worktree is removed.
 */

async function revParse(cwd: string, ref: string): Promise<string | null> {
  const r = await runGit(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], { cwd });
  return r.code === 0 ? r.stdout.toString('utf8').trim() : null;
}

/** The refs a sibling's tip may be reached through: the branch, each remote's ref of it, the recorded push destination. */
async function reachRefs(store: WorkspaceStore, session: Session, branch: string): Promise<string[]> {
  const refs = [`refs/heads/${branch}`];
  const remotes = await runGit(['remote'], { cwd: session.repoRoot });
  if (remotes.code === 0) {
    for (const name of remotes.stdout
      .toString('utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean))
      refs.push(`refs/remotes/${name}/${branch}`);
  }
  const dest = recordedPushDestination(store, session.id);
  if (dest) refs.push(`refs/remotes/${dest.remote}/${dest.branch}`);
  return [...new Set(refs)];
}

/** Archives the session, collecting its sibling when that is safe. */
/**
 * `snapshots`: the head snapshots the review's seats ran in (host/read/headWorkspace.ts), dropped
 * once it is archived — a cache of the captured heads, written again if a review needs one.
 */
export async function archiveSession(
  store: WorkspaceStore,
  session: Session,
  options: { now: () => string; snapshots?: { dataDir: string; patchsetIds: readonly string[] } },
): Promise<Result<SessionArchiveResult>> {
  const running = ledgerRows(foldRounds(session.id, store.readEvents(session.id)).trails).find((r) => r.state === 'running');
  if (running) return err(rennetError('invalid-request', `round ${running.ordinal} of this review is running: cancel it or let it end before archiving; nothing changed`));
  const bound = recordedBinding(store, session.id);
  if (!isArchived(store, session.id)) store.appendEvent(session.id, ARCHIVED_EVENT_KIND, { at: options.now() }, options.now());
  if (options.snapshots) dropHeadWorkspaces(options.snapshots.dataDir, options.snapshots.patchsetIds);
  const done = (collection: SiblingCollection, message: string): Result<SessionArchiveResult> => ok({ sessionId: session.id, archived: true, collection, message });
  if (!bound || bound.kind !== 'sibling' || !bound.workBranch || session.target.kind === 'working-tree') {
    return done({ outcome: 'none' }, 'Archived. It was bound on no sibling, so there was nothing to collect.');
  }
  // A branch review's head, or the head branch one's own request bound on.
  const branch = session.target.kind === 'branch' ? session.target.head : bound.branch;
  const workBranch = bound.workBranch;
  const root = session.repoRoot;
  const tip = await revParse(root, `refs/heads/${workBranch}`);
  if (!tip) return done({ outcome: 'none' }, `Archived. ${workBranch} no longer exists, so there was nothing to collect.`);
  const branchTip = await revParse(root, `refs/heads/${branch}`);
  const ahead = async (): Promise<number> => {
    const counted = branchTip ? await countBetween(root, branchTip, tip) : null;
    return counted?.ok ? counted.value : 0;
  };
  const kept = async (reason: string, n?: number): Promise<Result<SessionArchiveResult>> => {
    const a = n ?? (await ahead());
    return done({ outcome: 'kept', workBranch, root: bound.root, ahead: a, reason }, `Archived; ${workBranch} and its worktree ${bound.root} are kept: ${reason}`);
  };

  const others = sessionsBoundTo(store, root, { root: bound.root, workBranch }, session.id);
  if (others.length > 0) return kept(`the review session${others.length === 1 ? '' : 's'} ${others.join(', ')} ${others.length === 1 ? 'is' : 'are'} still bound to it.`);

  let reachedVia: string | null = null;
  for (const ref of await reachRefs(store, session, branch)) {
    const at = await revParse(root, ref);
    if (!at) continue;
    const contains = await isAncestor(root, tip, at);
    if (!contains.ok) return contains;
    if (contains.value) {
      reachedVia = ref;
      break;
    }
  }
  if (!reachedVia) {
    const n = await ahead();
    return kept(`it is ${n} commit${n === 1 ? '' : 's'} ahead of ${branch}, which does not contain its tip (land it or push it first).`, n);
  }

  const worktrees = await listWorktrees(root);
  if (!worktrees.ok) return worktrees;
  const entry = worktrees.value.find((w) => w.branch === workBranch) ?? worktrees.value.find((w) => samePath(w.path, bound.root));
  if (entry) {
    const removed = await runGit(['worktree', 'remove', entry.path], { cwd: root });
    if (removed.code !== 0) return kept(`git would not remove the worktree: ${removed.stderr.trim()}`, 0);
  }
  clearBinding(store, session.id, bound.root, `${workBranch} was collected when the review was archived`, options.now());
  const soft = await runGit(['branch', '-d', workBranch], { cwd: root });
  // -d asks whether HEAD (of whichever checkout) contains it; containment by the reviewed branch or its remote ref was proven above.
  const hard = soft.code === 0 ? soft : await runGit(['branch', '-D', workBranch], { cwd: root });
  const via = reachedVia.startsWith('refs/heads/') ? branch : reachedVia.slice('refs/remotes/'.length);
  if (hard.code !== 0) {
    return done(
      { outcome: 'collected', workBranch, root: bound.root, tip },
      `Archived; the worktree ${bound.root} was removed (${workBranch}'s tip is in ${via}), but git would not delete ${workBranch}: ${hard.stderr.trim()}`,
    );
  }
  return done({ outcome: 'collected', workBranch, root: bound.root, tip }, `Archived; ${workBranch} (its tip ${tip.slice(0, 12)} is in ${via}) and its worktree ${bound.root} were removed.`);
}

/** Every patchset a review's generations were drafted over, and its active one. */
export function sessionPatchsetIds(
  store: { listGenerations(sessionId: string): ReadonlyArray<{ patchsetId: string }>; getSession(id: string): { activePatchsetId: string | null } | undefined },
  sessionId: string,
): string[] {
  const active = store.getSession(sessionId)?.activePatchsetId ?? null;
  return [...new Set([...store.listGenerations(sessionId).map((g) => g.patchsetId), ...(active ? [active] : [])])];
}
