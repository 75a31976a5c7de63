import { execFile } from 'node:child_process';

/**
 * Git for the fake forge: every call is argv (never a shell), asynchronous (tests drive the
 * forge from the same process, so a synchronous git call would block the server), with the
 * user's and system's configuration ignored.
 */

/** The environment of every git the forge runs (and of `git http-backend`). */
export function gitEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith('GIT_')) delete env[k];
  return { ...env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C', ...extra };
}

export class GitError extends Error {
  constructor(
    message: string,
    readonly code: number | null,
    readonly stderr: string,
  ) {
    super(message);
  }
}

/** Runs git in `cwd`; resolves stdout; rejects with GitError on a non-zero exit. */
export function git(cwd: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('git', args, { cwd, env: gitEnv(), encoding: 'utf8', maxBuffer: 512 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) {
        const code = typeof (error as { code?: unknown }).code === 'number' ? ((error as { code: number }).code as number) : null;
        reject(new GitError(`git ${args.join(' ')}: ${stderr.trim() || error.message}`, code, stderr));
      } else resolve(stdout);
    });
  });
}

/** Like git() but resolves null instead of rejecting. */
export async function gitMaybe(cwd: string, args: readonly string[]): Promise<string | null> {
  try {
    return await git(cwd, args);
  } catch {
    return null;
  }
}

/** refname → object id for the refs under `prefixes`. */
export async function readRefs(dir: string, prefixes: readonly string[]): Promise<Map<string, string>> {
  const out = await git(dir, ['for-each-ref', '--format=%(objectname) %(refname)', ...prefixes]);
  const refs = new Map<string, string>();
  for (const line of out.split('\n')) {
    const at = line.indexOf(' ');
    if (at > 0) refs.set(line.slice(at + 1), line.slice(0, at));
  }
  return refs;
}

/** The commit `rev` names, or null. */
export async function resolveCommit(dir: string, rev: string): Promise<string | null> {
  if (rev.startsWith('-')) return null;
  const out = await gitMaybe(dir, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`]);
  return out === null ? null : out.trim() || null;
}

export async function mergeBase(dir: string, a: string, b: string): Promise<string | null> {
  const out = await gitMaybe(dir, ['merge-base', a, b]);
  return out === null ? null : out.trim() || null;
}

/** Commits reachable from `head` and not from `base`. */
export async function countCommits(dir: string, base: string, head: string): Promise<number> {
  return Number.parseInt((await git(dir, ['rev-list', '--count', `${base}..${head}`])).trim(), 10);
}

/** Commits of `base..head`, oldest first: sha, author, committer, message. */
export async function listCommits(
  dir: string,
  base: string,
  head: string,
): Promise<{ sha: string; authorName: string; authorEmail: string; authorDate: string; committerName: string; committerEmail: string; committerDate: string; message: string; parents: string[] }[]> {
  const out = await git(dir, ['log', '--reverse', '-z', '--format=%H%x1f%an%x1f%ae%x1f%aI%x1f%cn%x1f%ce%x1f%cI%x1f%P%x1f%B', `${base}..${head}`]);
  return out
    .split('\0')
    .filter((r) => r.length > 0)
    .map((r) => {
      const [sha, authorName, authorEmail, authorDate, committerName, committerEmail, committerDate, parents, message] = r.split('\x1f');
      return {
        sha: sha ?? '',
        authorName: authorName ?? '',
        authorEmail: authorEmail ?? '',
        authorDate: authorDate ?? '',
        committerName: committerName ?? '',
        committerEmail: committerEmail ?? '',
        committerDate: committerDate ?? '',
        parents: (parents ?? '').split(' ').filter((p) => p.length > 0),
        message: (message ?? '').replace(/\n+$/, ''),
      };
    });
}
