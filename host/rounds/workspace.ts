import { createHash } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import { basename, join } from 'node:path';
import { z } from 'zod';
import { err, ok, rennetError, type Result } from '../../protocol/result';
import type { Session } from '../../protocol/session';
import { runGit } from '../git/run';

/**
 * The one workspace a session's rounds run in, decided once and recorded (`session.workspace`):
 * - `share`: a checkout that has the reviewed branch out (the reviewer's own, or any registered
 *   worktree) — the worker commits on the branch itself;
 * - `worktree`: no checkout has the branch out — Rennet adds a worktree for it under the data
 *   directory (`<data>/worktrees/<repo>-<8 hex>/<branch>`), never touching the reviewer's tree.
 * Worktrees are asked of git (`git worktree list --porcelain`), never guessed from the filesystem.
 * A recorded workspace that no longer has the branch out refuses the round, naming both.
 * `dryRun` (reading what a round would do) decides without adding a worktree or recording.
 */

export const WORKSPACE_EVENT_KIND = 'session.workspace';

export const BoundWorkspace = z.object({ root: z.string(), branch: z.string(), kind: z.enum(['share', 'worktree']) });
export type BoundWorkspace = z.infer<typeof BoundWorkspace>;

export interface WorkspaceStore {
  appendEvent(sessionId: string, kind: string, payload: unknown, now: string): unknown;
  readEvents(sessionId: string): Array<{ kind: string; payload: unknown }>;
}

interface WorktreeEntry {
  path: string;
  branch: string | null;
}

/** `git worktree list --porcelain`, parsed: every registered worktree and the branch it has out. */
export async function listWorktrees(repoRoot: string): Promise<Result<WorktreeEntry[]>> {
  const listed = await runGit(['worktree', 'list', '--porcelain', '-z'], { cwd: repoRoot });
  if (listed.code !== 0) return err(rennetError('git-failed', `git could not list the worktrees of ${repoRoot}: ${listed.stderr.trim()}`));
  const entries: WorktreeEntry[] = [];
  let current: WorktreeEntry | null = null;
  for (const field of listed.stdout.toString('utf8').split('\0')) {
    if (field.startsWith('worktree ')) {
      if (current) entries.push(current);
      current = { path: field.slice('worktree '.length), branch: null };
    } else if (field.startsWith('branch ') && current) {
      const ref = field.slice('branch '.length);
      current.branch = ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : null;
    }
  }
  if (current) entries.push(current);
  return ok(entries);
}

/** Where Rennet places its own worktree of `branch` for the repository at `repoRoot`. */
export function worktreePlacement(dataDir: string, repoRoot: string, branch: string): string {
  const tag = createHash('sha256').update(repoRoot).digest('hex').slice(0, 8);
  return join(dataDir, 'worktrees', `${basename(repoRoot)}-${tag}`, ...branch.split('/'));
}

function same(a: string, b: string): boolean {
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return p;
    }
  };
  return real(a) === real(b);
}

/** The session's workspace: the recorded one (checked), else decided now and recorded. */
export async function bindWorkspace(store: WorkspaceStore, session: Session, options: { dataDir: string; now: () => string; dryRun?: boolean }): Promise<Result<BoundWorkspace>> {
  if (session.target.kind !== 'branch') return err(rennetError('invalid-request', 'only a branch review binds a workspace for rounds'));
  const branch = session.target.head;
  const recorded = store
    .readEvents(session.id)
    .filter((e) => e.kind === WORKSPACE_EVENT_KIND)
    .map((e) => BoundWorkspace.safeParse(e.payload))
    .filter((p) => p.success)
    .at(-1);
  const worktrees = await listWorktrees(session.repoRoot);
  if (!worktrees.ok) return worktrees;
  if (recorded?.success) {
    const bound = recorded.data;
    const entry = worktrees.value.find((w) => same(w.path, bound.root));
    if (!entry) return err(rennetError('invalid-request', `this review's workspace ${bound.root} is no longer a worktree git knows (git worktree list); restore it, or archive the review and open it again`));
    if (entry.branch !== bound.branch) {
      return err(rennetError('invalid-request', `this review's workspace ${bound.root} has ${entry.branch ? `${entry.branch}` : 'a detached HEAD'} out, not ${bound.branch}: check ${bound.branch} out there before a round runs`));
    }
    return ok(bound);
  }
  const holding = worktrees.value.find((w) => w.branch === branch);
  let bound: BoundWorkspace;
  if (holding) {
    bound = { root: holding.path, branch, kind: 'share' };
  } else {
    const place = worktreePlacement(options.dataDir, session.repoRoot, branch);
    if (existsSync(place)) {
      const occupant = worktrees.value.find((w) => same(w.path, place));
      return err(
        rennetError('invalid-request', occupant ? `Rennet's worktree for ${branch} at ${place} has ${occupant.branch ?? 'a detached HEAD'} out instead` : `${place}, where Rennet puts its worktree for ${branch}, is occupied by something git does not know as a worktree`),
      );
    }
    // A read of what a round would do decides the placement without making it.
    if (options.dryRun) return ok({ root: place, branch, kind: 'worktree' });
    const added = await runGit(['worktree', 'add', '--quiet', place, branch], { cwd: session.repoRoot });
    if (added.code !== 0) return err(rennetError('git-failed', `git could not add a worktree for ${branch} at ${place}: ${added.stderr.trim()}`));
    bound = { root: place, branch, kind: 'worktree' };
  }
  if (!options.dryRun) store.appendEvent(session.id, WORKSPACE_EVENT_KIND, bound, options.now());
  return ok(bound);
}
