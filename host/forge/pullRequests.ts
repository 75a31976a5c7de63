import { err, errorMessage, ok, rennetError, type Result } from '../../protocol/result';
import { linkedIssueNumbers, type ForgeEntry, type ForgeRepo, type PullRequestRecord } from '../../protocol/forge';
import type { PullRequestTarget } from '../../protocol/session';
import type { PullRequestSource } from '../service';
import { missingTokenRepair, resolveToken, type TokenSources } from './auth';
import { fetchPullRequest, listRemotes } from './remote';
import { resolveForge, sameRepository } from './resolve';
import { ForgeError, type ForgeAdapter } from './types';

/**
 * Forge access as the host uses it: the registry, credentials, and an adapter per repository. The
 * VS Code host and the CLI build one each (the editor's credentials only in the former).
 */
export interface ForgeAccess {
  registry: readonly ForgeEntry[];
  tokens: TokenSources;
  /** Builds the adapter for a repository with a token (github.ts / gitlab.ts). */
  adapter(repo: ForgeRepo, token: string): ForgeAdapter;
}

/**
 * The forge repository a request lives in: resolved from the workspace remote that names it (so a
 * loopback or self-hosted forge keeps its scheme and port), else from the registry's entry.
 */
export async function forgeRepoFor(repoRoot: string, ref: Pick<PullRequestTarget, 'provider' | 'host' | 'owner' | 'repo'>, registry: readonly ForgeEntry[]): Promise<Result<ForgeRepo>> {
  for (const remote of await listRemotes(repoRoot)) {
    for (const url of [remote.fetchUrl, remote.pushUrl]) {
      const resolved = resolveForge(url, registry);
      if (resolved.ok && sameRepository(resolved.value, ref)) return ok(resolved.value);
    }
  }
  const entry = registry.find((e) => e.host === ref.host.toLowerCase());
  if (!entry) return err(rennetError('invalid-request', `${ref.host} is not a registered forge`));
  const scheme = entry.apiUrl?.startsWith('http://') ? 'http' : 'https';
  const resolved = resolveForge(`${scheme}://${ref.host}/${ref.owner}/${ref.repo}`, registry);
  return resolved.ok ? ok(resolved.value) : err(rennetError('invalid-request', resolved.message));
}

/** An adapter with credentials for the repository, or the refusal naming the repair. */
export async function adapterFor(access: ForgeAccess, repo: ForgeRepo): Promise<Result<ForgeAdapter>> {
  const token = await resolveToken(repo.provider, repo.host, access.tokens);
  if (!token) {
    return err(
      rennetError(
        'forge-unauthorized',
        `no ${repo.provider === 'github' ? 'GitHub' : 'GitLab'} credentials for ${repo.host}: ${missingTokenRepair(repo.provider, repo.host, Boolean(access.tokens.editor))}`,
      ),
    );
  }
  return ok(access.adapter(repo, token.token));
}

/** A ForgeError as the typed error a caller decides on. */
export function forgeFailure(error: unknown, doing: string): Result<never> {
  if (error instanceof ForgeError) {
    const code = error.kind === 'unauthorized' ? 'forge-unauthorized' : error.kind === 'not-found' ? 'not-found' : error.kind === 'head-moved' ? 'head-moved' : 'forge-failed';
    return err(rennetError(code, `${doing}: ${error.message}`, error.status !== null ? { status: String(error.status), kind: error.kind } : { kind: error.kind }));
  }
  return err(rennetError('forge-failed', `${doing}: ${errorMessage(error)}`));
}

/** Reads the request, fetches its head and base into hidden refs, and records who it is for. */
export function pullRequestSource(access: ForgeAccess, now: () => Date = () => new Date()): PullRequestSource {
  return {
    async prepare(repoRoot, target) {
      const repo = await forgeRepoFor(repoRoot, target, access.registry);
      if (!repo.ok) return repo;
      const adapter = await adapterFor(access, repo.value);
      if (!adapter.ok) return adapter;
      let info;
      let viewer: string | null = null;
      try {
        [info, viewer] = await Promise.all([adapter.value.get(target.number), adapter.value.currentUser().catch(() => null)]);
      } catch (error) {
        return forgeFailure(error, `reading ${target.provider === 'gitlab' ? `!${target.number}` : `#${target.number}`} on ${repo.value.host}`);
      }
      const fetched = await fetchPullRequest(repoRoot, target, info.baseRef, access.registry, repo.value.webUrl);
      if (!fetched.ok) return fetched;
      // Linked issues are context, not a condition: a forge that will not show one still reviews.
      const linked = linkedIssueNumbers(info.body, repo.value).filter((n) => n !== info.number);
      const issues = linked.length > 0 ? await adapter.value.linkedIssues(linked).catch(() => []) : [];
      const record: PullRequestRecord = {
        number: info.number,
        title: info.title,
        body: info.body,
        author: info.author,
        viewer,
        entry: viewer !== null && viewer.toLowerCase() === info.author.toLowerCase() ? 'own' : 'teammate',
        webUrl: info.webUrl,
        state: info.state,
        draft: info.draft,
        headRef: info.headRef,
        // What was fetched is what is captured, even if the request moved between the two reads.
        headSha: fetched.value.head,
        headRepo: info.headRepo,
        baseRef: info.baseRef,
        baseSha: fetched.value.baseTip,
        readAt: now().toISOString(),
        issues: issues.map((i) => ({ number: i.number, title: i.title, body: i.body, webUrl: i.webUrl, state: i.state })),
      };
      return ok({ capture: { kind: 'branch', head: fetched.value.headRef, base: fetched.value.baseRef }, record });
    },
  };
}
