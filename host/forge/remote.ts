import { err, ok, rennetError, type Result } from '../../protocol/result';
import { forgeHeadRefName, pullRequestRefs, type ForgeEntry, type ForgeRepo, type PullRequestRef } from '../../protocol/forge';
import { runGit } from '../git/run';
import { resolveForge, sameRepository } from './resolve';

/**
 * The git side of forges: which remote is the forge's repository, where a branch pushes, and
 * fetching a request's head and base into hidden refs. git runs with argv; nothing here checks
 * anything out, writes FETCH_HEAD, or moves the user's HEAD, index or branches.
 */

export interface RemoteInfo {
  name: string;
  fetchUrl: string;
  pushUrl: string;
}

async function gitOut(repoRoot: string, args: readonly string[]): Promise<string | null> {
  const result = await runGit(args, { cwd: repoRoot });
  return result.code === 0 ? result.stdout.toString('utf8').trim() : null;
}

export async function listRemotes(repoRoot: string): Promise<RemoteInfo[]> {
  const names = (await gitOut(repoRoot, ['remote']))?.split('\n').filter(Boolean) ?? [];
  const remotes: RemoteInfo[] = [];
  for (const name of names) {
    const fetchUrl = await gitOut(repoRoot, ['remote', 'get-url', '--', name]);
    const pushUrl = await gitOut(repoRoot, ['remote', 'get-url', '--push', '--', name]);
    if (fetchUrl) remotes.push({ name, fetchUrl, pushUrl: pushUrl ?? fetchUrl });
  }
  return remotes;
}

/**
 * The remote a branch pushes to, as git decides it: `branch.<b>.pushRemote`, else
 * `remote.pushDefault`, else `branch.<b>.remote`, else the only remote, else `origin`.
 */
export async function pushRemoteOf(repoRoot: string, branch: string | null): Promise<Result<RemoteInfo>> {
  const remotes = await listRemotes(repoRoot);
  if (remotes.length === 0) return err(rennetError('invalid-request', 'this repository has no remote, so there is no forge to reach'));
  const configured = [
    branch ? await gitOut(repoRoot, ['config', '--get', `branch.${branch}.pushRemote`]) : null,
    await gitOut(repoRoot, ['config', '--get', 'remote.pushDefault']),
    branch ? await gitOut(repoRoot, ['config', '--get', `branch.${branch}.remote`]) : null,
  ].find((n): n is string => Boolean(n) && n !== '.');
  const name = configured ?? (remotes.length === 1 ? remotes[0]?.name : 'origin');
  const remote = remotes.find((r) => r.name === name);
  if (!remote) {
    return err(rennetError('invalid-request', `the push remote is ambiguous: ${remotes.length} remotes (${remotes.map((r) => r.name).join(', ')}) and none is named by the branch or is origin`));
  }
  return ok(remote);
}

/** The forge repository the branch's push URL names (the workspace's forge). */
export async function workspaceForge(repoRoot: string, branch: string | null, registry: readonly ForgeEntry[]): Promise<Result<{ remote: RemoteInfo; repo: ForgeRepo }>> {
  const remote = await pushRemoteOf(repoRoot, branch);
  if (!remote.ok) return remote;
  const resolved = resolveForge(remote.value.pushUrl, registry);
  if (!resolved.ok) return err(rennetError('invalid-request', `remote ${remote.value.name}: ${resolved.message}`));
  return ok({ remote: remote.value, repo: resolved.value });
}

/**
 * Fetches a request's head (`refs/pull/<n>/head`, `refs/merge-requests/<n>/head`) and its base
 * branch into the request's hidden refs, from the remote whose URL is the forge repository (else
 * from the repository's URL itself). Answers the fetched commits.
 */
export async function fetchPullRequest(
  repoRoot: string,
  ref: PullRequestRef,
  baseBranch: string,
  registry: readonly ForgeEntry[],
  webUrl: string,
): Promise<Result<{ head: string; baseTip: string; headRef: string; baseRef: string; from: string }>> {
  if (!/^[^\s~^:?*[\\]+$/.test(baseBranch) || baseBranch.startsWith('-') || baseBranch.includes('..')) {
    return err(rennetError('invalid-request', `the request's base branch is not a branch name git accepts (${JSON.stringify(baseBranch)})`));
  }
  const remotes = await listRemotes(repoRoot);
  const match = remotes.find((r) => {
    const resolved = resolveForge(r.fetchUrl, registry);
    return resolved.ok && sameRepository(resolved.value, ref);
  });
  const from = match?.name ?? `${webUrl}.git`;
  const hidden = pullRequestRefs(ref);
  const result = await runGit(
    ['fetch', '--no-tags', '--no-write-fetch-head', '--quiet', '--', from, `+${forgeHeadRefName(ref.provider, ref.number)}:${hidden.head}`, `+refs/heads/${baseBranch}:${hidden.base}`],
    { cwd: repoRoot },
  );
  if (result.code !== 0) {
    const said = result.stderr.trim().split('\n').slice(-2).join(' ');
    return err(rennetError('git-failed', `git could not fetch the request's head and base from ${match ? `remote ${match.name}` : from}: ${said || `exit ${result.code}`}`));
  }
  const head = await gitOut(repoRoot, ['rev-parse', '--verify', '--quiet', `${hidden.head}^{commit}`]);
  const baseTip = await gitOut(repoRoot, ['rev-parse', '--verify', '--quiet', `${hidden.base}^{commit}`]);
  if (!head || !baseTip) return err(rennetError('git-failed', 'the fetch left no head or base commit under the hidden refs'));
  return ok({ head, baseTip, headRef: hidden.head, baseRef: hidden.base, from: match ? match.name : from });
}
