import { createHash } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import { basename, join, sep } from 'node:path';
import { z } from 'zod';
import { err, ok, rennetError, type Result } from '../../protocol/result';
import { LAND_REFUSAL_MAX_CHARS, ROUNDS_WORKSPACE_DEFAULT, siblingBranchOf, type RoundsWorkspaceMode } from '../../protocol/rounds';
import type { Session } from '../../protocol/session';
import { runGit } from '../git/run';
import { reviewedBranch } from './request';

/**
 * The one workspace a session's rounds run in, decided once and recorded (`session.workspace`).
 * The reviewed branch is a branch review's head, or the head branch of one's own pull request
 * (host/rounds/request.ts: a teammate's request, a fork's head and a head branch not here are refused):
 * - `share`: a checkout Rennet did not place has the reviewed branch out (the reviewer's own, or
 *   any registered worktree) — the worker commits on the branch itself;
 * - `worktree`: Rennet's own worktree of the branch (`<data>/worktrees/<repo>-<8 hex>/<branch>`),
 *   added when no checkout has the branch out, taken as it is when it already has;
 * - `sibling` (only when the first bind asks for `own`): a checkout Rennet did not place has the
 *   branch out, so the round's commits go on `rennet/<branch>` instead — a branch forked from the
 *   reviewed branch's head, in its own worktree placed as Rennet's worktree of `rennet/<branch>`.
 *   One per repository and branch: a later session's bind takes it as it stands. The record names
 *   it as `workBranch`; without one the work branch is the reviewed branch.
 * Worktrees are asked of git (`git worktree list --porcelain`), never guessed from the filesystem,
 * and a bind prunes nothing. Placing a worktree is refused, naming the path, when git's
 * registration there cannot be reached (git's own reason), when the placement is a worktree on
 * another ref (naming the ref, and the session bound there when one is), when it is a directory git
 * does not know, and — for the branch worktree — when it is the repository's clone root. A workspace
 * that cannot be made records nothing. A recorded workspace that no longer has its work branch out
 * refuses the round, naming both. `dryRun` (reading what a round would do) decides without adding a
 * worktree or recording.
 * Two repairs, neither re-deciding a live binding: the branch worktree at Rennet's placement that
 * has drifted onto another branch, with no live session bound there, is checked back out to the
 * branch (`git switch`; git's refusal, capped, is the only thing that stops it — the sibling's
 * placement stays refused whatever is on it); and an archived session used again whose recorded
 * root no longer exists (the start sweep, host/rounds/sweep.ts, collected it) binds afresh.
 */

export const WORKSPACE_EVENT_KIND = 'session.workspace';
/** The session was archived (host/rounds/archive.ts); a later bind makes it live again. */
export const ARCHIVED_EVENT_KIND = 'session.archived';

export const BoundWorkspace = z.object({
  root: z.string(),
  /** The reviewed branch. */
  branch: z.string(),
  kind: z.enum(['share', 'worktree', 'sibling']),
  /** Only when the commits land on another branch than the reviewed one (a sibling's `rennet/<branch>`). */
  workBranch: z.string().exactOptional(),
});
export type BoundWorkspace = z.infer<typeof BoundWorkspace>;

/** The record that clears a binding (its worktree was collected): the next use binds again. */
const ClearedWorkspace = z.object({ cleared: z.literal(true), root: z.string(), reason: z.string() });

export interface WorkspaceStore {
  appendEvent(sessionId: string, kind: string, payload: unknown, now: string): unknown;
  readEvents(sessionId: string): Array<{ kind: string; payload: unknown }>;
  /** Every session: to name the one working in a placement, and to see who shares a sibling. */
  listSessions?(): Array<{ id: string; repoRoot: string }>;
}

export interface WorktreeEntry {
  path: string;
  /** The branch it has out (short name); null when detached or bare. */
  branch: string | null;
  head: string | null;
  detached: boolean;
  bare: boolean;
  /** git's reason when it cannot reach the registration (`prunable …`); null when it can. */
  prunable: string | null;
}

/** `git worktree list --porcelain`, parsed: every registered worktree, what it has out, and whether git can reach it. The first is the clone's own. */
export async function listWorktrees(repoRoot: string): Promise<Result<WorktreeEntry[]>> {
  const listed = await runGit(['worktree', 'list', '--porcelain', '-z'], { cwd: repoRoot });
  if (listed.code !== 0) return err(rennetError('git-failed', `git could not list the worktrees of ${repoRoot}: ${listed.stderr.trim()}`));
  return ok(parseWorktreeList(listed.stdout.toString('utf8')));
}

/** PURE. The output of `git worktree list --porcelain -z` as registrations, in git's order. */
export function parseWorktreeList(porcelain: string): WorktreeEntry[] {
  const entries: WorktreeEntry[] = [];
  let current: WorktreeEntry | null = null;
  for (const field of porcelain.split('\0')) {
    if (field.startsWith('worktree ')) {
      if (current) entries.push(current);
      current = { path: field.slice('worktree '.length), branch: null, head: null, detached: false, bare: false, prunable: null };
    } else if (!current) {
      continue;
    } else if (field.startsWith('branch ')) {
      const ref = field.slice('branch '.length);
      current.branch = ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : null;
    } else if (field.startsWith('HEAD ')) {
      current.head = field.slice('HEAD '.length);
    } else if (field === 'detached') {
      current.detached = true;
    } else if (field === 'bare') {
      current.bare = true;
    } else if (field === 'prunable' || field.startsWith('prunable ')) {
      current.prunable = field.slice('prunable'.length).trim() || 'git reports it prunable';
    }
  }
  if (current) entries.push(current);
  return entries;
}

/** Where Rennet places its own worktree of `branch` for the repository at `repoRoot`. */
export function worktreePlacement(dataDir: string, repoRoot: string, branch: string): string {
  return join(placementRoot(dataDir, repoRoot), ...branch.split('/'));
}

/** The directory every Rennet worktree of the repository at `repoRoot` is placed under. */
export function placementRoot(dataDir: string, repoRoot: string): string {
  const tag = createHash('sha256').update(repoRoot).digest('hex').slice(0, 8);
  return join(worktreesRoot(dataDir), `${basename(repoRoot)}-${tag}`);
}

function worktreesRoot(dataDir: string): string {
  return join(dataDir, 'worktrees');
}

function real(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

export function samePath(a: string, b: string): boolean {
  return a === b || real(a) === real(b);
}

/** Whether Rennet placed the worktree at `path` (it is under `<data>/worktrees/`). */
export function isRennetPlaced(dataDir: string, path: string): boolean {
  const root = worktreesRoot(dataDir);
  const under = (p: string, r: string) => p.startsWith(r.endsWith(sep) ? r : `${r}${sep}`);
  return under(path, root) || under(real(path), real(root));
}

/** The session's recorded binding; null when it has none (never bound, or its worktree was collected). */
export function recordedBinding(store: WorkspaceStore, sessionId: string): BoundWorkspace | null {
  const events = store.readEvents(sessionId).filter((e) => e.kind === WORKSPACE_EVENT_KIND);
  for (let i = events.length - 1; i >= 0; i--) {
    const payload = events[i]?.payload;
    if (ClearedWorkspace.safeParse(payload).success) return null;
    const bound = BoundWorkspace.safeParse(payload);
    if (bound.success) return bound.data;
  }
  return null;
}

/** Records that the session's workspace is gone (its worktree collected): the next use binds again. */
export function clearBinding(store: WorkspaceStore, sessionId: string, root: string, reason: string, now: string): void {
  store.appendEvent(sessionId, WORKSPACE_EVENT_KIND, { cleared: true, root, reason }, now);
}

/** Archived, and not bound again since. */
export function isArchived(store: WorkspaceStore, sessionId: string): boolean {
  let archived = false;
  for (const e of store.readEvents(sessionId)) {
    if (e.kind === ARCHIVED_EVENT_KIND) archived = true;
    else if (e.kind === WORKSPACE_EVENT_KIND && BoundWorkspace.safeParse(e.payload).success) archived = false;
  }
  return archived;
}

/** The other live (unarchived) sessions of the repository bound to `root`, or to the work branch `workBranch`. */
export function sessionsBoundTo(store: WorkspaceStore, repoRoot: string, where: { root?: string; workBranch?: string }, exceptId: string): string[] {
  if (!store.listSessions) return [];
  return store
    .listSessions()
    .filter((s) => s.id !== exceptId && samePath(s.repoRoot, repoRoot) && !isArchived(store, s.id))
    .filter((s) => {
      const bound = recordedBinding(store, s.id);
      if (!bound) return false;
      return (where.root !== undefined && samePath(bound.root, where.root)) || (where.workBranch !== undefined && bound.workBranch === where.workBranch);
    })
    .map((s) => s.id);
}

function unreachable(path: string, reason: string, what: string): Result<never> {
  return err(
    rennetError(
      'invalid-request',
      `${path}, ${what}, is registered with git as a worktree git cannot reach (${reason}): restore the directory, or run git worktree prune in the repository, then try again`,
      {
        path,
        reason,
      },
    ),
  );
}

/**
 * Why Rennet cannot place a worktree of `ref` at `place`, or null when it can: an unreachable
 * registration, a worktree on another ref (naming who works there), a directory git does not know.
 */
function placementRefusal(store: WorkspaceStore, session: Session, worktrees: readonly WorktreeEntry[], place: string, ref: string): Result<never> | null {
  const what = `where Rennet places its worktree of ${ref}`;
  const occupant = worktrees.find((w) => samePath(w.path, place));
  if (occupant?.prunable) return unreachable(place, occupant.prunable, what);
  if (occupant) {
    const out = occupant.branch ?? (occupant.detached ? `a detached HEAD${occupant.head ? ` at ${occupant.head.slice(0, 12)}` : ''}` : occupant.bare ? 'a bare repository' : 'no branch');
    const who = sessionsBoundTo(store, session.repoRoot, { root: place }, session.id);
    const working = who.length > 0 ? ` (the review session${who.length === 1 ? '' : 's'} ${who.join(', ')} work${who.length === 1 ? 's' : ''} there)` : '';
    return err(rennetError('invalid-request', `${place}, ${what}, is already a worktree on ${out}${working}: Rennet does not take it over`, { path: place, ref: occupant.branch ?? out }));
  }
  if (existsSync(place)) return err(rennetError('invalid-request', `${place}, ${what}, is occupied by something git does not know as a worktree`, { path: place }));
  return null;
}

export interface BindOptions {
  dataDir: string;
  now: () => string;
  dryRun?: boolean;
  /** How a first bind takes its workspace; a recorded binding is never decided again. Default `share`. */
  mode?: RoundsWorkspaceMode;
  /** Where a bind says what it repaired (a stale record cleared, a drifted worktree checked back out). */
  log?: (level: 'info' | 'warn', line: string) => void;
}

/** git's words, whole up to LAND_REFUSAL_MAX_CHARS, then an honest marker of what was cut. */
export function capGitWords(words: string, max = LAND_REFUSAL_MAX_CHARS): string {
  if (words.length <= max) return words;
  return `${words.slice(0, max)}… [git's message cut here: ${max} of its ${words.length} characters shown]`;
}

/** The session's workspace: the recorded one (checked), else decided now and recorded. */
export async function bindWorkspace(store: WorkspaceStore, session: Session, options: BindOptions): Promise<Result<BoundWorkspace>> {
  // A branch review's head, or one's own request's head branch (host/rounds/request.ts).
  const reviewed = await reviewedBranch(store, session);
  if (!reviewed.ok) return reviewed;
  const branch = reviewed.value;
  const worktrees = await listWorktrees(session.repoRoot);
  if (!worktrees.ok) return worktrees;
  let recorded = recordedBinding(store, session.id);
  if (recorded && isArchived(store, session.id) && !existsSync(recorded.root)) {
    // Un-archiving: the start sweep may have collected this workspace without a session record in
    // hand, so a recorded root that is gone is cleared and the session binds afresh.
    const gone = recorded.root;
    if (!options.dryRun) {
      clearBinding(store, session.id, gone, `${gone} no longer exists when the archived review was used again`, options.now());
      options.log?.('info', `session ${session.id}: its recorded workspace ${gone} no longer exists; it binds afresh`);
    }
    recorded = null;
  }
  if (recorded) {
    const bound = recorded;
    const out = bound.workBranch ?? bound.branch;
    const entry = worktrees.value.find((w) => samePath(w.path, bound.root));
    if (!entry)
      return err(rennetError('invalid-request', `this review's workspace ${bound.root} is no longer a worktree git knows (git worktree list); restore it, or archive the review and open it again`));
    if (entry.prunable) return unreachable(bound.root, entry.prunable, "this review's workspace");
    if (entry.branch !== out) {
      return err(
        rennetError('invalid-request', `this review's workspace ${bound.root} has ${entry.branch ? `${entry.branch}` : 'a detached HEAD'} out, not ${out}: check ${out} out there before a round runs`),
      );
    }
    return ok(bound);
  }
  const mode = options.mode ?? ROUNDS_WORKSPACE_DEFAULT;
  const holding = worktrees.value.find((w) => w.branch === branch);
  // The clone root is the reviewer's tree wherever it sits, never Rennet's worktree.
  const clone = worktrees.value[0] && !worktrees.value[0].bare ? worktrees.value[0].path : null;
  let bound: Result<BoundWorkspace>;
  if (holding && isRennetPlaced(options.dataDir, holding.path) && !(clone !== null && samePath(clone, holding.path))) {
    // Rennet's own worktree of the branch: not a tree the reviewer works in, so `own` binds there as `share` does.
    bound = holding.prunable ? unreachable(holding.path, holding.prunable, `Rennet's worktree of ${branch}`) : ok({ root: holding.path, branch, kind: 'worktree' });
  } else if (holding && mode === 'own') {
    bound = await bindSibling(store, session, worktrees.value, branch, options);
  } else if (holding) {
    // The arm that binds to a checkout holding the branch takes git's registration as it stands.
    bound = ok({ root: holding.path, branch, kind: 'share' });
  } else {
    bound = await addBranchWorktree(store, session, worktrees.value, branch, options);
  }
  if (!bound.ok) return bound;
  if (!options.dryRun) store.appendEvent(session.id, WORKSPACE_EVENT_KIND, bound.value, options.now());
  return bound;
}

/** Rennet's worktree of the reviewed branch, added at its placement (never the clone root). */
async function addBranchWorktree(store: WorkspaceStore, session: Session, worktrees: readonly WorktreeEntry[], branch: string, options: BindOptions): Promise<Result<BoundWorkspace>> {
  const place = worktreePlacement(options.dataDir, session.repoRoot, branch);
  if (worktrees[0] && !worktrees[0].bare && samePath(worktrees[0].path, place)) {
    return err(
      rennetError('invalid-request', `${place} is this repository's clone root: Rennet never uses it as its worktree of ${branch} (it is the reviewer's tree; only a shared workspace binds there)`, {
        path: place,
      }),
    );
  }
  const drifted = worktrees.find((w) => samePath(w.path, place));
  // Drifted onto another branch only: leaving a detached HEAD could strand commits made on it, and git would not refuse.
  if (drifted && !drifted.prunable && drifted.branch !== null && drifted.branch !== branch && sessionsBoundTo(store, session.repoRoot, { root: place }, session.id).length === 0) {
    return driftBack(session, drifted, branch, options);
  }
  const refused = placementRefusal(store, session, worktrees, place, branch);
  if (refused) return refused;
  // A read of what a round would do decides the placement without making it.
  if (options.dryRun) return ok({ root: place, branch, kind: 'worktree' });
  const added = await runGit(['worktree', 'add', '--quiet', place, branch], { cwd: session.repoRoot });
  if (added.code !== 0) return err(rennetError('git-failed', `git could not add a worktree for ${branch} at ${place}: ${added.stderr.trim()}`));
  return ok({ root: place, branch, kind: 'worktree' });
}

/**
 * The drift repair (the branch bind's alone): Rennet's worktree of `branch`, at its placement, has
 * drifted onto another ref and no live session is bound there, so it is checked back out to the
 * branch. Only git's own refusal stops it (an uncommitted change the switch would overwrite), and
 * that refusal comes back in git's words, capped; nothing is recorded then.
 */
async function driftBack(session: Session, worktree: WorktreeEntry, branch: string, options: BindOptions): Promise<Result<BoundWorkspace>> {
  const was = worktree.branch ?? 'another ref';
  if (options.dryRun) return ok({ root: worktree.path, branch, kind: 'worktree' });
  // --no-guess: the reviewed branch is checked out as it is here, never created from a remote's ref.
  const switched = await runGit(['switch', '--no-guess', branch], { cwd: worktree.path });
  if (switched.code !== 0) {
    const words = capGitWords([switched.stdout.toString('utf8').trim(), switched.stderr.trim()].filter((w) => w.length > 0).join('\n') || `git exited ${switched.code}`);
    return err(
      rennetError('git-failed', `${worktree.path}, Rennet's worktree of ${branch}, has drifted onto ${was}, and git refused to check ${branch} back out there:\n${words}`, {
        path: worktree.path,
        ref: was,
        git: words,
      }),
    );
  }
  options.log?.('info', `session ${session.id}: Rennet's worktree ${worktree.path} had drifted onto ${was}; ${branch} is checked back out there`);
  return ok({ root: worktree.path, branch, kind: 'worktree' });
}

/** The sibling: `rennet/<branch>` where a worktree has it out (shared as it stands), else forked from the branch's head into Rennet's placement of it. */
async function bindSibling(store: WorkspaceStore, session: Session, worktrees: readonly WorktreeEntry[], branch: string, options: BindOptions): Promise<Result<BoundWorkspace>> {
  const workBranch = siblingBranchOf(branch);
  const existing = worktrees.find((w) => w.branch === workBranch);
  if (existing) {
    if (existing.prunable) return unreachable(existing.path, existing.prunable, `the worktree of ${workBranch}`);
    return ok({ root: existing.path, branch, kind: 'sibling', workBranch });
  }
  const place = worktreePlacement(options.dataDir, session.repoRoot, workBranch);
  const refused = placementRefusal(store, session, worktrees, place, workBranch);
  if (refused) return refused;
  if (options.dryRun) return ok({ root: place, branch, kind: 'sibling', workBranch });
  const head = await runGit(['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`], { cwd: session.repoRoot });
  if (head.code !== 0) return err(rennetError('unknown-ref', `${branch} is not a branch here: its sibling has no head to fork from`));
  const fork = head.stdout.toString('utf8').trim();
  // A sibling branch left behind with no worktree (an archive kept it: it holds commits) is taken as it stands.
  const had = (await runGit(['rev-parse', '--verify', '--quiet', `refs/heads/${workBranch}^{commit}`], { cwd: session.repoRoot })).code === 0;
  const added = await runGit(had ? ['worktree', 'add', '--quiet', place, workBranch] : ['worktree', 'add', '--quiet', '-b', workBranch, place, fork], { cwd: session.repoRoot });
  if (added.code !== 0) {
    if (!had) {
      // Nothing is left behind: a branch this bind created for a worktree git refused is deleted again (it holds only the fork point).
      const made = await runGit(['rev-parse', '--verify', '--quiet', `refs/heads/${workBranch}^{commit}`], { cwd: session.repoRoot });
      if (made.code === 0 && made.stdout.toString('utf8').trim() === fork) await runGit(['branch', '-D', workBranch], { cwd: session.repoRoot });
    }
    return err(rennetError('git-failed', `git could not add the worktree of ${workBranch} at ${place}: ${added.stderr.trim()}`));
  }
  return ok({ root: place, branch, kind: 'sibling', workBranch });
}
