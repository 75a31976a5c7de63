import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { CaptureOptions, FileChange } from '../../protocol/patchset';
import { err, ok, rennetError, type Result } from '../../protocol/result';
import { CHECKPOINT_REF_PREFIX, type RoundDiffTotals } from '../../protocol/rounds';
import { captureTreeDiff, totalsOf } from '../capture/capture';
import { openRepo, resolveCommit, type RepoHandle } from '../capture/repo';
import { GitError, gitText, runGit } from '../git/run';
import { snapshotWorktree } from '../capture/snapshot';

/**
 * What a round measures itself against: a checkpoint is a snapshot of the bound workspace's
 * working tree (tracked, deleted and non-ignored untracked files) taken before and after the
 * worker's turn, held by hidden refs under `refs/rennet/checkpoints/<roundId>/<label>`. The round's
 * diff is the direct diff of the two checkpoints, so dirty state that was there before the worker
 * started is in both and never counts as the worker's, and a failed or crashed worker still yields
 * its diff: measuring needs only the two checkpoints.
 */

export type CheckpointLabel = 'before' | 'after';
export const CHECKPOINT_LABELS: readonly CheckpointLabel[] = ['before', 'after'];

const ROUND_ID_MAX_CHARS = 128;

/** A round id that can name a ref component: letters, digits, `-`, `_`, `.`; no `..`, no `/`. */
export function checkRoundId(roundId: string): Result<string> {
  const refuse = (why: string) => err(rennetError('invalid-request', `"${roundId}" is not a round id: ${why}`, { roundId }));
  if (roundId.length === 0) return refuse('it is empty');
  if (roundId.length > ROUND_ID_MAX_CHARS) return refuse(`it is longer than ${ROUND_ID_MAX_CHARS} characters`);
  if (!/^[A-Za-z0-9._-]+$/.test(roundId)) return refuse('only letters, digits, "-", "_" and "." are allowed');
  if (roundId.includes('..')) return refuse('it contains ".."');
  // git's own ref-name rules on a component.
  if (roundId.startsWith('.') || roundId.endsWith('.') || roundId.endsWith('.lock')) return refuse('git refuses a ref component that starts or ends with "." or ends with ".lock"');
  return ok(roundId);
}

/** The hidden ref that holds one checkpoint of a round. */
export function checkpointRef(roundId: string, label: CheckpointLabel): string {
  return `${CHECKPOINT_REF_PREFIX}${roundId}/${label}`;
}

export interface Checkpoint {
  /** The snapshot commit (parent: HEAD at that moment), held by checkpointRef(roundId, label). */
  commit: string;
  /** HEAD's commit at that moment: the observed commit range is head(before)..head(after). */
  head: string;
}

/**
 * Records the workspace's working tree as a checkpoint. Never touches HEAD, the branch or the
 * user's index; works on a branch or a detached HEAD. Taking the same label again moves its ref.
 */
export async function takeCheckpoint(root: string, roundId: string, label: CheckpointLabel): Promise<Result<Checkpoint>> {
  const id = checkRoundId(roundId);
  if (!id.ok) return id;
  if (!CHECKPOINT_LABELS.includes(label)) return err(rennetError('invalid-request', `"${String(label)}" is not a checkpoint label (before or after)`));
  const repo = await openRepo(root);
  if (!repo.ok) return repo;
  try {
    const snapshot = await snapshotWorktree(repo.value, {
      ref: () => checkpointRef(roundId, label),
      message: `rennet: checkpoint ${label} of round ${roundId}`,
    });
    if (!snapshot.ok) return snapshot;
    return ok({ commit: snapshot.value.commit, head: snapshot.value.parent });
  } catch (error) {
    if (error instanceof GitError) return err(rennetError('git-failed', `could not take the ${label} checkpoint: ${error.message}`));
    throw error;
  }
}

export interface RoundMeasure {
  /** The direct diff before → after, parsed as a capture parses it, sorted by path. */
  files: FileChange[];
  /**
   * Every path that differs between the two checkpoints, as `git diff --name-only --no-renames`
   * lists them (git's order): a rename appears as both its old and its new path, since each of
   * them changed. `files` carries the rename as one FileChange (path and oldPath).
   */
  changedPaths: string[];
  totals: RoundDiffTotals;
}

/**
 * The round's measured change: the DIRECT diff of the two checkpoint commits (no merge-base: the
 * before checkpoint is a side commit, not an ancestor of the after one). An empty diff answers
 * files [] (the worker changed nothing), not an error.
 */
export async function measureRound(root: string, before: string, after: string, options?: Partial<CaptureOptions>): Promise<Result<RoundMeasure>> {
  const repo = await openRepo(root);
  if (!repo.ok) return repo;
  const [from, to] = await Promise.all([resolveCommit(repo.value, before), resolveCommit(repo.value, after)]);
  if (!from.ok) return from;
  if (!to.ok) return to;
  try {
    const [files, changedPaths] = await Promise.all([captureTreeDiff(repo.value, from.value, to.value, options), namesChanged(repo.value, from.value, to.value)]);
    if (!files.ok) return files;
    const totals = totalsOf(files.value);
    return ok({ files: files.value, changedPaths, totals: { files: totals.files, additions: totals.additions, deletions: totals.deletions } });
  } catch (error) {
    if (error instanceof GitError) return err(rennetError('git-failed', error.message));
    throw error;
  }
}

/** `git diff --name-only -z` with the flags fixed against user configuration (renames off: both sides listed). */
async function namesChanged(repo: RepoHandle, from: string, to: string): Promise<string[]> {
  const args = ['diff', '--name-only', '-z', '--no-renames', '--no-ext-diff', '--no-textconv', '--no-relative', '--ignore-submodules=none', from, to, '--'];
  const result = await runGit(args, { cwd: repo.root });
  if (result.code !== 0) throw new GitError(args, result.code, result.stderr);
  return result.stdout
    .toString('utf8')
    .split('\0')
    .filter((path) => path.length > 0);
}

/** Deletes the round's checkpoint refs. Idempotent: a round with none left answers 0. */
export async function dropCheckpoints(root: string, roundId: string): Promise<Result<{ dropped: number }>> {
  const id = checkRoundId(roundId);
  if (!id.ok) return id;
  const repo = await openRepo(root);
  if (!repo.ok) return repo;
  try {
    const listed = await gitText(['for-each-ref', '--format=%(refname)', `${CHECKPOINT_REF_PREFIX}${roundId}/`], { cwd: repo.value.root });
    const refs = listed.split('\n').filter((ref) => ref.length > 0);
    for (const ref of refs) await gitText(['update-ref', '-d', ref], { cwd: repo.value.root });
    return ok({ dropped: refs.length });
  } catch (error) {
    if (error instanceof GitError) return err(rennetError('git-failed', `could not drop the checkpoints of round ${roundId}: ${error.message}`));
    throw error;
  }
}

const GITLINK_MODE = '160000 ';

/**
 * Whether the repository has submodules: a gitlink (mode 160000) anywhere in `commit`'s tree, or
 * a top-level `.gitmodules` in it. For 'HEAD' (the default) the index's gitlinks and the working
 * tree's `.gitmodules` count too. Rounds refuse such repositories before they start: a gitlink's
 * content is another repository and can escape the checkpoint diff. Passing the before
 * checkpoint's commit also catches an untracked embedded repository (a snapshot records it as a
 * gitlink). Throws GitError when git cannot read the commit.
 */
export async function hasSubmodules(root: string, commit = 'HEAD'): Promise<boolean> {
  const lsTree = ['ls-tree', '-r', '-z', '--full-tree', '--end-of-options', commit];
  const tree = await runGit(lsTree, { cwd: root });
  if (tree.code !== 0) throw new GitError(lsTree, tree.code, tree.stderr);
  for (const entry of entries(tree.stdout)) {
    if (entry.startsWith(GITLINK_MODE)) return true;
    if (entry.slice(entry.indexOf('\t') + 1) === '.gitmodules') return true;
  }
  if (commit !== 'HEAD') return false;

  const lsFiles = ['ls-files', '-s', '-z'];
  const index = await runGit(lsFiles, { cwd: root });
  if (index.code !== 0) throw new GitError(lsFiles, index.code, index.stderr);
  if (entries(index.stdout).some((entry) => entry.startsWith(GITLINK_MODE))) return true;
  const top = await gitText(['rev-parse', '--show-toplevel'], { cwd: root });
  return existsSync(join(top, '.gitmodules'));
}

function entries(output: Buffer): string[] {
  return output
    .toString('utf8')
    .split('\0')
    .filter((entry) => entry.length > 0);
}
