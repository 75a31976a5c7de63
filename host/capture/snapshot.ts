import { copyFileSync, existsSync, mkdtempSync, rmSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { err, ok, rennetError, type Result } from '../../protocol/result';
import { resolveCommit, type RepoHandle } from './repo';
import { gitText } from '../git/run';

export interface SnapshotOptions {
  /** The hidden ref that keeps the snapshot reachable, given its commit id. */
  ref: (commit: string) => string;
  /** The snapshot commit's message. */
  message: string;
}

export interface Snapshot {
  /** The snapshot commit (its parent is HEAD). */
  commit: string;
  /** HEAD's commit at the moment of the snapshot. */
  parent: string;
  tree: string;
}

/** Fixed identity: a snapshot's commit id depends on its tree, parent and message only. */
const SNAPSHOT_IDENTITY = { name: 'Rennet', email: 'rennet@localhost' } as const;

/**
 * Copies an index file keeping its modification time. git trusts a cached stat only for an entry
 * older than the index file itself; an entry as new as the index is "racily clean" and is hashed
 * again. A plain copy is newer than every entry, so a file rewritten with the same size just after
 * the index was written (in the same second, as git compares it) would be taken as unchanged and
 * left out of the snapshot. The time is rounded down, which can only make more entries racy.
 */
function copyIndex(from: string, to: string): void {
  copyFileSync(from, to);
  const { atimeMs, mtimeMs } = statSync(from);
  utimesSync(to, Math.floor(atimeMs) / 1000, Math.floor(mtimeMs) / 1000);
}

/**
 * Records the working tree (tracked, deleted and non-ignored untracked files) as a commit whose
 * parent is HEAD, without touching HEAD, the branch or the user's index: a temporary index file
 * (a copy of the user's, for its stat cache) takes the writes, and a hidden ref keeps the commit
 * reachable so its blobs stay readable. Works on a branch or a detached HEAD (callers that need a
 * branch check for one themselves); needs a work tree and a HEAD commit. Identity and dates are
 * fixed (the dates are HEAD's committer date), so the same tree, parent and message give the same
 * commit id. May throw GitError.
 */
export async function snapshotWorktree(repo: RepoHandle, options: SnapshotOptions): Promise<Result<Snapshot>> {
  if (repo.bare) return err(rennetError('bare-working-tree', `${repo.root} is a bare repository; it has no working tree`));
  const headCommit = await resolveCommit(repo, 'HEAD');
  if (!headCommit.ok) return headCommit;

  const scratch = mkdtempSync(join(tmpdir(), 'rennet-index-'));
  try {
    const tempIndex = join(scratch, 'index');
    const indexEnv = { GIT_INDEX_FILE: tempIndex };
    let userIndex = await gitText(['rev-parse', '--git-path', 'index'], { cwd: repo.root });
    if (!isAbsolute(userIndex)) userIndex = join(repo.root, userIndex);
    // Starting from a copy of the user's index reuses its stat cache; the copy is all we write.
    if (existsSync(userIndex)) copyIndex(userIndex, tempIndex);
    else await gitText(['read-tree', headCommit.value], { cwd: repo.root, env: indexEnv });
    await gitText(['add', '--all', '--', '.'], { cwd: repo.root, env: indexEnv });
    const tree = await gitText(['write-tree'], { cwd: repo.root, env: indexEnv });

    const headDate = await gitText(['show', '-s', '--format=%ct', headCommit.value], { cwd: repo.root });
    const identity = {
      GIT_AUTHOR_NAME: SNAPSHOT_IDENTITY.name,
      GIT_AUTHOR_EMAIL: SNAPSHOT_IDENTITY.email,
      GIT_COMMITTER_NAME: SNAPSHOT_IDENTITY.name,
      GIT_COMMITTER_EMAIL: SNAPSHOT_IDENTITY.email,
      GIT_AUTHOR_DATE: `@${headDate} +0000`,
      GIT_COMMITTER_DATE: `@${headDate} +0000`,
    };
    const commit = await gitText(['commit-tree', '--no-gpg-sign', tree, '-p', headCommit.value, '-m', options.message], {
      cwd: repo.root,
      env: identity,
    });
    await gitText(['update-ref', options.ref(commit), commit], { cwd: repo.root });
    return ok({ commit, parent: headCommit.value, tree });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
