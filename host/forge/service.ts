import { err, ok, rennetError, type Result } from '../../protocol/result';
import { FORGES_ENV, FORGES_SETTING, type ForgeEntry, type ForgeRepo } from '../../protocol/forge';
import type { PullRequestFreshness, PullRequestListResult } from '../../protocol/rpc';
import type { PullRequestTarget, Session } from '../../protocol/session';
import { currentBranch, openRepo } from '../capture/repo';
import type { TokenSources } from './auth';
import type { PullRequestSource } from '../service';
import { adapterFor, forgeFailure, forgeRepoFor, pullRequestSource, type ForgeAccess } from './pullRequests';
import { workspaceForge } from './remote';
import { liveHeadBehind } from './freshness';
import { forgeRegistry, parseForgeEntries, parsePullRequestInput, sameRepository } from './resolve';
import type { EarlierReview, ForgeAdapter } from './types';

/** Most open requests the picker lists. */
export const PULL_REQUEST_LIST_MAX = 100;

/**
 * The forge registry as the host holds it: RENNET_FORGES from its environment, joined with the
 * `rennet.forges` setting the extension sends. A malformed value is kept as an error that every
 * forge use reports (never half-applied).
 */
export class ForgeRegistryHolder {
  private setting: ForgeEntry[] = [];
  private settingError: string | null = null;
  private readonly envEntries: ForgeEntry[];
  private readonly envError: string | null;

  constructor(env: Readonly<Record<string, string | undefined>>) {
    const parsed = parseForgeEntries(env[FORGES_ENV] ?? '', FORGES_ENV);
    this.envEntries = parsed.ok ? parsed.value : [];
    this.envError = parsed.ok ? null : parsed.message;
  }

  configure(entries: unknown): void {
    const parsed = parseForgeEntries(entries ?? [], FORGES_SETTING);
    this.setting = parsed.ok ? parsed.value : [];
    this.settingError = parsed.ok ? null : parsed.message;
  }

  registry(): Result<ForgeEntry[]> {
    const problem = this.envError ?? this.settingError;
    if (problem) return err(rennetError('invalid-request', problem));
    // The setting wins over the environment for the same host.
    const hosts = new Set(this.setting.map((e) => e.host));
    return ok(forgeRegistry([...this.setting, ...this.envEntries.filter((e) => !hosts.has(e.host))]));
  }
}

/** The forge use cases the RPC handlers and the CLI share. */
export class ForgeService {
  constructor(
    private readonly registry: ForgeRegistryHolder,
    private readonly tokens: TokenSources,
    private readonly build: (repo: ForgeRepo, token: string) => ForgeAdapter,
  ) {}

  /** Pull requests made ready to capture with the access configured at the time of each call. */
  pullRequests(): PullRequestSource {
    return {
      prepare: (repoRoot, target) => {
        const access = this.access();
        return access.ok ? pullRequestSource(access.value).prepare(repoRoot, target) : Promise.resolve(access);
      },
    };
  }

  /** A ForgeAccess over the current registry. */
  access(): Result<ForgeAccess> {
    const registry = this.registry.registry();
    if (!registry.ok) return registry;
    return ok({ registry: registry.value, tokens: this.tokens, adapter: this.build });
  }

  /** The open requests of the workspace's forge repository (the push remote of the current branch). */
  async listOpen(repoDir: string): Promise<Result<PullRequestListResult>> {
    const located = await this.workspace(repoDir);
    if (!located.ok) return located;
    const { repo, adapter } = located.value;
    try {
      const [open, viewer] = await Promise.all([adapter.listOpen(PULL_REQUEST_LIST_MAX), adapter.currentUser().catch(() => null)]);
      return ok({
        repo: { provider: repo.provider, host: repo.host, owner: repo.owner, repo: repo.repo, webUrl: repo.webUrl },
        viewer,
        open: open.map((pr) => ({
          number: pr.number,
          title: pr.title,
          author: pr.author,
          headRef: pr.headRef,
          baseRef: pr.baseRef,
          draft: pr.draft,
          webUrl: pr.webUrl,
          target: { kind: 'pull-request', provider: repo.provider, host: repo.host, owner: repo.owner, repo: repo.repo, number: pr.number },
        })),
      });
    } catch (error) {
      return forgeFailure(error, `listing the open requests of ${repo.owner}/${repo.repo}`);
    }
  }

  /** A pasted number or URL as a target of the workspace's forge repository. */
  async resolve(repoDir: string, input: string): Promise<Result<PullRequestTarget>> {
    const access = this.access();
    if (!access.ok) return access;
    const parsed = parsePullRequestInput(input, access.value.registry);
    if (!parsed.ok) return err(rennetError('invalid-request', parsed.message));
    const located = await this.locate(repoDir, access.value);
    if (!located.ok) return located;
    const repo = located.value;
    const named = parsed.value.repo;
    if (named && !sameRepository(repo, named)) {
      return err(rennetError('invalid-request', `that request is in ${named.owner}/${named.repo} on ${named.host}; this workspace's forge repository is ${repo.owner}/${repo.repo} on ${repo.host}`));
    }
    return ok({ kind: 'pull-request', provider: repo.provider, host: repo.host, owner: repo.owner, repo: repo.repo, number: parsed.value.number });
  }

  /** The request's live head against the session's capture. */
  async freshness(session: Session, capturedHead: string, own = false): Promise<Result<PullRequestFreshness>> {
    if (session.target.kind !== 'pull-request') return err(rennetError('invalid-request', 'this session reviews no pull or merge request'));
    const access = this.access();
    if (!access.ok) return access;
    const repo = await forgeRepoFor(session.repoRoot, session.target, access.value.registry);
    if (!repo.ok) return repo;
    const adapter = await adapterFor(access.value, repo.value);
    if (!adapter.ok) return adapter;
    try {
      const live = await adapter.value.get(session.target.number);
      // Behind rather than moved: on one's own request, the review's head holds commits the request
      // lacks (a round's, not pushed yet); on a teammate's, a head that went back is their force push.
      const unpushed = own && live.headSha !== capturedHead ? await liveHeadBehind(session.repoRoot, live.headSha, capturedHead) : null;
      return ok({ capturedHeadSha: capturedHead, liveHeadSha: live.headSha, moved: live.headSha !== capturedHead, ...(unpushed !== null ? { unpushed } : {}), state: live.state });
    } catch (error) {
      return forgeFailure(error, `reading the live head of ${session.target.owner}/${session.target.repo}`);
    }
  }

  /**
   * The signed-in reviewer's earlier review of the session's request (the newest carrying Rennet's
   * marker, else their newest), and whether the request is theirs: what a re-review measures from.
   */
  async earlierReview(session: Session): Promise<Result<{ review: EarlierReview | null; ownRequest: boolean }>> {
    if (session.target.kind !== 'pull-request') return err(rennetError('invalid-request', 'this session reviews no pull or merge request'));
    const access = this.access();
    if (!access.ok) return access;
    const repo = await forgeRepoFor(session.repoRoot, session.target, access.value.registry);
    if (!repo.ok) return repo;
    const adapter = await adapterFor(access.value, repo.value);
    if (!adapter.ok) return adapter;
    const target = session.target;
    if (!adapter.value.earlierReview) return err(rennetError('invalid-request', `${target.provider} reviews cannot be read back here`));
    try {
      const [review, live, me] = await Promise.all([adapter.value.earlierReview(target.number), adapter.value.get(target.number), adapter.value.currentUser()]);
      return ok({ review, ownRequest: live.author === me });
    } catch (error) {
      return forgeFailure(error, `reading your earlier review of ${target.owner}/${target.repo}#${target.number}`);
    }
  }

  private async locate(repoDir: string, access: ForgeAccess): Promise<Result<ForgeRepo>> {
    const repo = await openRepo(repoDir);
    if (!repo.ok) return repo;
    const branch = await currentBranch(repo.value);
    const located = await workspaceForge(repo.value.root, branch, access.registry);
    return located.ok ? ok(located.value.repo) : located;
  }

  private async workspace(repoDir: string): Promise<Result<{ repo: ForgeRepo; adapter: ForgeAdapter }>> {
    const access = this.access();
    if (!access.ok) return access;
    const repo = await this.locate(repoDir, access.value);
    if (!repo.ok) return repo;
    const adapter = await adapterFor(access.value, repo.value);
    return adapter.ok ? ok({ repo: repo.value, adapter: adapter.value }) : adapter;
  }
}
