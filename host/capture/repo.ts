import { realpathSync, statSync } from 'node:fs';
import { simpleGit } from 'simple-git';
import { BRANCH_LIST_MAX } from '../../protocol/limits';
import { err, ok, rennetError, type Result } from '../../protocol/result';
import type { BranchList } from '../../protocol/session';
import { GitError, gitText, runGit } from '../git/run';

/** A repository Rennet can read: its root (work tree or bare git dir) and what kind it is. */
export interface RepoHandle {
  /** Canonical path: the work tree's top level, or the git dir of a bare repository. */
  root: string;
  /**
   * Canonical git dir (the root itself when bare). The capture's diffs run here: git reads no work
   * tree from inside it, so no .gitattributes of the checkout can change a capture.
   */
  gitDir: string;
  bare: boolean;
  shallow: boolean;
}

export async function openRepo(dir: string): Promise<Result<RepoHandle>> {
  try {
    if (!statSync(dir).isDirectory()) return err(rennetError('not-a-repository', `${dir} is not a directory`));
  } catch {
    return err(rennetError('not-a-repository', `${dir} does not exist`));
  }
  // One call: in a bare repository --show-toplevel fails after the other answers are printed.
  const probe = await runGit(['rev-parse', '--is-bare-repository', '--absolute-git-dir', '--is-shallow-repository', '--show-toplevel'], { cwd: dir });
  const [bareFlag, gitDir, shallowFlag, topLevel] = probe.stdout.toString('utf8').trim().split('\n');
  if (bareFlag !== 'true' && bareFlag !== 'false') {
    return err(rennetError('not-a-repository', `${dir} is not a git repository`, { path: dir }));
  }
  const bare = bareFlag === 'true';
  if (!bare && (probe.code !== 0 || !topLevel)) {
    return err(rennetError('not-a-repository', `${dir} is inside a git directory, not a work tree`));
  }
  const root = bare ? (gitDir ?? dir) : (topLevel as string);
  return ok({ root: realpathSync(root), gitDir: realpathSync(gitDir ?? root), bare, shallow: shallowFlag === 'true' });
}

/** Resolves a ref to a full commit id, or says precisely why not. */
export async function resolveCommit(repo: RepoHandle, ref: string): Promise<Result<string>> {
  if (ref.startsWith('-')) return err(rennetError('unknown-ref', `"${ref}" is not a ref`, { ref }));
  const commit = await runGit(['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`], { cwd: repo.root });
  if (commit.code === 0) return ok(commit.stdout.toString('utf8').trim());
  // Only on failure: tell an unknown ref from one that names a tree or a blob.
  const object = await runGit(['rev-parse', '--verify', '--quiet', '--end-of-options', ref], { cwd: repo.root });
  if (object.code !== 0) return err(rennetError('unknown-ref', `unknown ref "${ref}" in ${repo.root}`, { ref }));
  return err(rennetError('not-a-commit', `"${ref}" names a ${await objectType(repo, ref)}, not a commit`, { ref }));
}

async function objectType(repo: RepoHandle, ref: string): Promise<string> {
  const type = await runGit(['cat-file', '-t', '--end-of-options', ref], { cwd: repo.root });
  return type.code === 0 ? type.stdout.toString('utf8').trim() : 'non-commit object';
}

/** The branch HEAD is on, or null when detached (or unborn). */
export async function currentBranch(repo: RepoHandle): Promise<string | null> {
  const head = await runGit(['symbolic-ref', '--quiet', '--short', 'HEAD'], { cwd: repo.root });
  return head.code === 0 ? head.stdout.toString('utf8').trim() : null;
}

/** origin/HEAD's branch, else main, else master; local name when a local branch exists. */
export async function defaultBase(repo: RepoHandle, localBranches: readonly string[]): Promise<string | null> {
  const local = new Set(localBranches);
  const originHead = await runGit(['symbolic-ref', '--quiet', '--short', 'refs/remotes/origin/HEAD'], { cwd: repo.root });
  if (originHead.code === 0) {
    const remoteName = originHead.stdout.toString('utf8').trim(); // e.g. origin/main
    const short = remoteName.replace(/^origin\//, '');
    return local.has(short) ? short : remoteName;
  }
  for (const candidate of ['main', 'master']) {
    if (local.has(candidate)) return candidate;
    const remote = await runGit(['rev-parse', '--verify', '--quiet', `refs/remotes/origin/${candidate}`], { cwd: repo.root });
    if (remote.code === 0) return `origin/${candidate}`;
  }
  return null;
}

/** Local branches for the picker: current first, then most recently committed. */
export async function listBranches(repo: RepoHandle): Promise<Result<BranchList>> {
  try {
    // simple-git (the user's choice) for the repository queries; argv underneath, no shell.
    // A minimal environment: simple-git refuses editor/pager/ssh variables a user's shell may carry,
    // and a read of refs needs none of them.
    const git = simpleGit({ baseDir: repo.root }).env(minimalGitEnvironment());
    const refs = await git.raw(['for-each-ref', '--sort=-committerdate', '--format=%(refname:short)', `--count=${BRANCH_LIST_MAX}`, 'refs/heads']);
    const byDate = refs.split('\n').filter((name) => name.length > 0);
    const current = await currentBranch(repo);
    const branches = current ? [current, ...byDate.filter((b) => b !== current)] : byDate;
    return ok({ repoRoot: repo.root, current, branches, defaultBase: await defaultBase(repo, byDate) });
  } catch (error) {
    return err(rennetError('git-failed', `could not list branches: ${(error as Error).message}`));
  }
}

function minimalGitEnvironment(): Record<string, string> {
  const env: Record<string, string> = { LC_ALL: 'C' };
  for (const name of ['PATH', 'HOME', 'USERPROFILE', 'SYSTEMROOT', 'TMPDIR', 'TEMP', 'TMP', 'XDG_CONFIG_HOME']) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

export { GitError, gitText };
