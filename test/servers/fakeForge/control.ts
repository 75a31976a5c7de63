import type { IncomingMessage, ServerResponse } from 'node:http';
import { git, resolveCommit } from './git';
import { githubIssueJson, githubPullJson, reviewCommentJson, reviewJson, type ApiContext } from './github';
import { approvalsJson, discussionsOf, draftNoteJson, gitlabMrJson, noteJson } from './gitlab';
import { addPipeline } from './gitlabPipelines';
import { readBody } from './http';
import { ForgeState, nowIso, type BranchProtectionRecord, type FaultSpec, type Provider, type PullRecord, type RepoRecord, type RequestRecord } from './state';

/**
 * The fake forge's test-control API: set-up (users, repositories, pull requests, issues), faults,
 * and inspection (what was posted, in the forge's own wire shapes, and the request log). The same
 * methods are served as JSON over `/_fake/<method>` for a test in another process.
 */

export interface RepoRef {
  /** Checked when given; owner/name are unique across providers. */
  provider?: Provider;
  owner: string;
  name: string;
}

export interface PullRef extends RepoRef {
  /** GitHub number / GitLab iid (`iid` is accepted as an alias). */
  number?: number;
  iid?: number;
}

export interface CreatedRepo {
  id: number;
  provider: Provider;
  owner: string;
  name: string;
  defaultBranch: string;
  /** `http://127.0.0.1:<port>/<owner>/<name>.git` */
  cloneUrl: string;
  /** The bare repository on disk. */
  dir: string;
}

export interface OpenedPull {
  id: number;
  number: number;
  iid: number;
  headSha: string;
  baseSha: string;
  htmlUrl: string;
}

export interface RequestFilter {
  method?: string;
  /** Regular expression (source) tested against the path without its query. */
  pathPattern?: string | RegExp;
  surface?: RequestRecord['surface'];
}

export class ForgeControl {
  constructor(readonly state: ForgeState) {}

  private repoOf(ref: RepoRef): RepoRecord {
    const repo = this.state.repo(ref.owner, ref.name);
    if (repo === undefined || (ref.provider !== undefined && repo.provider !== ref.provider)) throw new Error(`no ${ref.provider ?? ''} repository ${ref.owner}/${ref.name}`.replace('  ', ' '));
    return repo;
  }

  private pullOf(ref: PullRef): { repo: RepoRecord; pull: PullRecord } {
    const repo = this.repoOf(ref);
    const n = ref.number ?? ref.iid;
    const pull = n === undefined ? undefined : repo.pulls.get(Number(n));
    if (pull === undefined) throw new Error(`no pull request ${String(n)} in ${repo.owner}/${repo.name}`);
    return { repo, pull };
  }

  private ctx(): ApiContext {
    return { state: this.state, method: 'GET', segments: [], query: new URLSearchParams(), raw: Buffer.alloc(0), headers: {}, origin: this.state.origin, pathname: '/', setUser: () => undefined };
  }

  // ------------------------------------------------------------ set-up

  /** Adds a user (or a token to an existing user). Tokens authenticate API and git requests. */
  addUser(o: { login: string; token?: string; name?: string; email?: string }): { id: number; login: string } {
    const u = this.state.addUser(o.login, o.token, o.name, o.email);
    return { id: u.id, login: u.login };
  }

  /** A bare clone of the local repository `from`, served at `<url>/<owner>/<name>.git` (default branch: `defaultBranch`, else `from`'s HEAD). */
  async createRepo(o: { provider: Provider; owner: string; name: string; from: string; defaultBranch?: string; private?: boolean; preventAuthorApproval?: boolean }): Promise<CreatedRepo> {
    const r = await this.state.createRepo(o);
    return { id: r.id, provider: r.provider, owner: r.owner, name: r.name, defaultBranch: r.defaultBranch, cloneUrl: `${this.state.origin}/${r.owner}/${r.name}.git`, dir: r.dir };
  }

  /**
   * Either: `private` (fetch needs auth). GitLab: whether the author may approve (default:
   * prevented), `approvalsRequired` (default 0), `onlyAllowMergeIfPipelineSucceeds` (default
   * false), `resetApprovalsOnPush` (default false). GitHub: `admins`, who may read branch
   * protection (default null: every known user).
   */
  setRepoOptions(
    o: RepoRef & {
      preventAuthorApproval?: boolean;
      private?: boolean;
      approvalsRequired?: number;
      onlyAllowMergeIfPipelineSucceeds?: boolean;
      resetApprovalsOnPush?: boolean;
      admins?: string[] | null;
    },
  ): void {
    const repo = this.repoOf(o);
    if (o.preventAuthorApproval !== undefined) repo.preventAuthorApproval = o.preventAuthorApproval;
    if (o.private !== undefined) repo.private = o.private;
    if (o.approvalsRequired !== undefined) {
      if (!Number.isInteger(o.approvalsRequired) || o.approvalsRequired < 0) throw new Error('approvalsRequired must be a non-negative integer');
      repo.approvalsRequired = o.approvalsRequired;
    }
    if (o.onlyAllowMergeIfPipelineSucceeds !== undefined) repo.onlyAllowMergeIfPipelineSucceeds = o.onlyAllowMergeIfPipelineSucceeds;
    if (o.resetApprovalsOnPush !== undefined) repo.resetApprovalsOnPush = o.resetApprovalsOnPush;
    if (o.admins !== undefined) repo.admins = o.admins;
  }

  /** Opens a pull/merge request (no API rules: set-up may open anything with existing branches). */
  async openPullRequest(o: RepoRef & { author: string; head: string; base: string; title: string; body?: string; draft?: boolean }): Promise<OpenedPull> {
    const repo = this.repoOf(o);
    const author = this.state.userByLogin(o.author) ?? this.state.addUser(o.author);
    const pull = await this.state.openPull(repo, { authorId: author.id, head: o.head, base: o.base, title: o.title, body: o.body ?? '', draft: o.draft ?? false });
    const htmlUrl =
      repo.provider === 'github' ? `${this.state.origin}/${repo.owner}/${repo.name}/pull/${pull.number}` : `${this.state.origin}/${repo.owner}/${repo.name}/-/merge_requests/${pull.number}`;
    return { id: pull.id, number: pull.number, iid: pull.number, headSha: pull.headSha, baseSha: pull.baseSha, htmlUrl };
  }

  /** Moves the head branch to `sha` (a commit in the repository), and so the pull request's head. */
  async movePullRequestHead(o: PullRef & { sha: string }): Promise<{ headSha: string }> {
    const { repo, pull } = this.pullOf(o);
    const sha = await resolveCommit(repo.dir, o.sha);
    if (sha === null) throw new Error(`no commit ${o.sha} in ${repo.owner}/${repo.name}`);
    await git(repo.dir, ['update-ref', `refs/heads/${pull.head}`, sha]);
    await this.state.sync(repo);
    return { headSha: pull.headSha };
  }

  /** Moves any branch to `sha` (a base branch moving on, say); open requests follow on their next read. */
  async moveBranch(o: RepoRef & { branch: string; sha: string }): Promise<{ sha: string }> {
    const repo = this.repoOf(o);
    const sha = await resolveCommit(repo.dir, o.sha);
    if (sha === null) throw new Error(`no commit ${o.sha} in ${repo.owner}/${repo.name}`);
    if ((await this.state.branchTip(repo, o.branch)) === null) throw new Error(`no branch ${o.branch} in ${repo.owner}/${repo.name}`);
    await git(repo.dir, ['update-ref', `refs/heads/${o.branch}`, sha]);
    await this.state.sync(repo);
    return { sha };
  }

  /** `draft`; GitHub `mergeableComputing` (`mergeable: null` while true). */
  async setPullRequestOptions(o: PullRef & { draft?: boolean; mergeableComputing?: boolean }): Promise<void> {
    const { repo, pull } = this.pullOf(o);
    if (o.draft !== undefined) pull.draft = o.draft;
    if (o.mergeableComputing !== undefined) pull.mergeableComputing = o.mergeableComputing;
    await this.state.sync(repo);
  }

  /** GitHub: asks users for a review (they are listed in `requested_reviewers` until they submit one). */
  requestReviewers(o: PullRef & { reviewers: string[] }): void {
    const { pull } = this.pullOf(o);
    for (const login of o.reviewers) {
      const u = this.state.userByLogin(login) ?? this.state.addUser(login);
      if (!pull.requestedReviewerIds.includes(u.id)) pull.requestedReviewerIds.push(u.id);
    }
  }

  /** The commit a check or status is set on: `sha`, else the pull request's current head. */
  private async commitOf(o: PullRef & { sha?: string }): Promise<{ repo: RepoRecord; sha: string; pull: PullRecord | null }> {
    if (o.sha !== undefined) {
      const repo = this.repoOf(o);
      const sha = await resolveCommit(repo.dir, o.sha);
      if (sha === null) throw new Error(`no commit ${o.sha} in ${repo.owner}/${repo.name}`);
      const n = o.number ?? o.iid;
      return { repo, sha, pull: n === undefined ? null : (repo.pulls.get(Number(n)) ?? null) };
    }
    const { repo, pull } = this.pullOf(o);
    await this.state.sync(repo);
    return { repo, sha: pull.headSha, pull };
  }

  /**
   * GitHub: a check run on `sha` (default: the pull request's head). A new run of the same name
   * supersedes the earlier one. `status` defaults to completed, `conclusion` then to success.
   */
  async setCheckRun(
    o: PullRef & { sha?: string; check: string; status?: 'queued' | 'in_progress' | 'completed'; conclusion?: string | null; title?: string; summary?: string },
  ): Promise<{ id: number; headSha: string }> {
    const { repo, sha } = await this.commitOf(o);
    if (repo.provider !== 'github') throw new Error('check runs are GitHub’s');
    const status = o.status ?? 'completed';
    const at = nowIso();
    const run = {
      id: this.state.id(),
      name: o.check,
      headSha: sha,
      status,
      conclusion: status === 'completed' ? (o.conclusion ?? 'success') : null,
      title: o.title ?? null,
      summary: o.summary ?? null,
      startedAt: at,
      completedAt: status === 'completed' ? at : null,
    };
    repo.checkRuns.push(run);
    return { id: run.id, headSha: sha };
  }

  /** GitHub: a commit status on `sha` (default: the pull request's head); the newest per context counts. */
  async setCommitStatus(
    o: PullRef & { sha?: string; context: string; state: 'error' | 'failure' | 'pending' | 'success'; description?: string; targetUrl?: string },
  ): Promise<{ id: number; headSha: string }> {
    const { repo, sha } = await this.commitOf(o);
    if (repo.provider !== 'github') throw new Error('commit statuses are GitHub’s here');
    if (!['error', 'failure', 'pending', 'success'].includes(o.state)) throw new Error(`unknown status state ${o.state}`);
    const st = { id: this.state.id(), sha, context: o.context, state: o.state, description: o.description ?? null, targetUrl: o.targetUrl ?? null, createdAt: nowIso() };
    repo.statuses.push(st);
    return { id: st.id, headSha: sha };
  }

  /** GitHub: protects `branch` (`protection: null` removes it). */
  setBranchProtection(o: RepoRef & { branch: string; protection: Partial<BranchProtectionRecord> | null }): void {
    const repo = this.repoOf(o);
    if (o.protection === null) {
      repo.protections.delete(o.branch);
      return;
    }
    const p = o.protection;
    repo.protections.set(o.branch, {
      requiredApprovingReviewCount: p.requiredApprovingReviewCount ?? null,
      dismissStaleReviews: p.dismissStaleReviews ?? false,
      requiredStatusChecks: p.requiredStatusChecks ?? null,
      strict: p.strict ?? false,
    });
  }

  /**
   * GitLab: a pipeline for the merge request's head (or `sha`), with its jobs; its status is derived
   * from them unless given. The newest pipeline for the head is the request's head pipeline.
   */
  async setPipeline(
    o: PullRef & { sha?: string; status?: string; jobs?: { name: string; stage?: string; status: string; allowFailure?: boolean }[] },
  ): Promise<{ id: number; status: string; sha: string }> {
    const { repo, pull } = this.pullOf(o);
    if (repo.provider !== 'gitlab') throw new Error('pipelines are GitLab’s');
    await this.state.sync(repo);
    const p = addPipeline(this.state, repo, pull, o);
    return { id: p.id, status: p.status, sha: p.sha };
  }

  /** Closes, reopens or marks merged (no API rules). */
  async setPullRequestState(o: PullRef & { state: 'open' | 'closed' | 'merged' }): Promise<void> {
    const { repo, pull } = this.pullOf(o);
    pull.state = o.state;
    pull.closedAt = o.state === 'open' ? null : new Date().toISOString();
    await this.state.sync(repo);
  }

  addIssue(o: RepoRef & { number?: number; iid?: number; title: string; body?: string; author?: string }): { number: number; iid: number; id: number } {
    const repo = this.repoOf(o);
    const author = o.author === undefined ? (this.state.userByLogin(repo.owner) ?? this.state.addUser(repo.owner)) : (this.state.userByLogin(o.author) ?? this.state.addUser(o.author));
    const n = o.number ?? o.iid;
    const issue = this.state.addIssue(repo, { ...(n === undefined ? {} : { number: Number(n) }), title: o.title, body: o.body ?? '', authorId: author.id });
    return { number: issue.number, iid: issue.number, id: issue.id };
  }

  // ------------------------------------------------------------ faults

  /** Arms a fault (see README.md); returns its id. */
  setFault(f: FaultSpec): { id: number } {
    return { id: this.state.setFault(f) };
  }

  clearFaults(): void {
    this.state.clearFaults();
  }

  // ------------------------------------------------------------ inspection

  async pullRequests(o: RepoRef): Promise<Record<string, unknown>[]> {
    const repo = this.repoOf(o);
    await this.state.sync(repo);
    const pulls = [...repo.pulls.values()];
    return Promise.all(pulls.map((p) => (repo.provider === 'github' ? githubPullJson(this.ctx(), repo, p, true) : gitlabMrJson(this.state, repo, p, true))));
  }

  async pullRequest(o: PullRef): Promise<Record<string, unknown>> {
    const { repo, pull } = this.pullOf(o);
    await this.state.sync(repo);
    return repo.provider === 'github' ? githubPullJson(this.ctx(), repo, pull, true) : gitlabMrJson(this.state, repo, pull, true);
  }

  /** GitHub reviews (pending ones too), each with its `comments`. */
  reviews(o: PullRef): Record<string, unknown>[] {
    const { repo, pull } = this.pullOf(o);
    return pull.reviews.map((r) => ({
      ...reviewJson(this.state, repo, pull, r),
      comments: pull.reviewComments.filter((c) => c.reviewId === r.id).map((c) => reviewCommentJson(this.state, repo, pull, c)),
    }));
  }

  /** GitHub review comments (of every review, pending ones too). */
  reviewComments(o: PullRef): Record<string, unknown>[] {
    const { repo, pull } = this.pullOf(o);
    return pull.reviewComments.map((c) => reviewCommentJson(this.state, repo, pull, c));
  }

  /** GitHub issue comments on a pull request or an issue. */
  issueComments(o: PullRef): Record<string, unknown>[] {
    const repo = this.repoOf(o);
    const n = Number(o.number ?? o.iid);
    const list = repo.pulls.get(n)?.issueComments ?? repo.issues.get(n)?.comments;
    if (list === undefined) throw new Error(`no #${n} in ${repo.owner}/${repo.name}`);
    return list.map((c) => ({ id: c.id, body: c.body, user: { login: this.state.user(c.userId).login }, created_at: c.createdAt }));
  }

  /** GitLab notes users wrote, oldest first (system notes: `systemNotes`). */
  notes(o: PullRef): Record<string, unknown>[] {
    const { repo, pull } = this.pullOf(o);
    return pull.notes.filter((n) => n.system !== true).map((n) => noteJson(this.state, repo, pull, n));
  }

  /** GitLab system notes ("approved this merge request"), oldest first. */
  systemNotes(o: PullRef): Record<string, unknown>[] {
    const { repo, pull } = this.pullOf(o);
    return pull.notes.filter((n) => n.system === true).map((n) => noteJson(this.state, repo, pull, n));
  }

  discussions(o: PullRef): Record<string, unknown>[] {
    const { repo, pull } = this.pullOf(o);
    return discussionsOf(this.state, repo, pull);
  }

  /** GitLab draft notes of every user. */
  draftNotes(o: PullRef): Record<string, unknown>[] {
    const { pull } = this.pullOf(o);
    return pull.draftNotes.map((d) => draftNoteJson(pull, d));
  }

  /** GitLab approval state (`approved_by[].user.username`). */
  approvals(o: PullRef): Record<string, unknown> {
    const { repo, pull } = this.pullOf(o);
    return approvalsJson(this.state, repo, pull, null);
  }

  issue(o: PullRef): Record<string, unknown> {
    const repo = this.repoOf(o);
    const n = Number(o.number ?? o.iid);
    if (repo.provider === 'github') {
      const pull = repo.pulls.get(n) ?? null;
      const issue = repo.issues.get(n) ?? null;
      if (pull === null && issue === null) throw new Error(`no #${n}`);
      return githubIssueJson(this.state, repo, n, issue, pull);
    }
    const issue = repo.issues.get(n);
    if (issue === undefined) throw new Error(`no issue #${n}`);
    return { iid: issue.number, title: issue.title, description: issue.body };
  }

  /** The request log (control requests excluded), optionally filtered. */
  requests(filter: RequestFilter = {}): RequestRecord[] {
    const pattern = filter.pathPattern === undefined ? null : filter.pathPattern instanceof RegExp ? filter.pathPattern : new RegExp(filter.pathPattern);
    return this.state.requests
      .filter(
        (r) =>
          (filter.method === undefined || r.method === filter.method.toUpperCase()) && (filter.surface === undefined || r.surface === filter.surface) && (pattern === null || pattern.test(r.path)),
      )
      .map((r) => ({ ...r }));
  }

  clearRequests(): void {
    this.state.requests.length = 0;
  }
}

/** Methods served over `/_fake/<name>` (JSON body or query string as the one argument). */
export const CONTROL_METHODS = [
  'addUser',
  'createRepo',
  'setRepoOptions',
  'openPullRequest',
  'movePullRequestHead',
  'moveBranch',
  'setPullRequestOptions',
  'requestReviewers',
  'setCheckRun',
  'setCommitStatus',
  'setBranchProtection',
  'setPipeline',
  'setPullRequestState',
  'addIssue',
  'setFault',
  'clearFaults',
  'pullRequests',
  'pullRequest',
  'reviews',
  'reviewComments',
  'issueComments',
  'notes',
  'systemNotes',
  'discussions',
  'draftNotes',
  'approvals',
  'issue',
  'requests',
  'clearRequests',
] as const;

function send(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** `/_fake/<method>`: POST a JSON object (or GET with query parameters) → `{result}` or 400 `{error}`. */
export async function handleControl(control: ForgeControl, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const name = url.pathname.slice('/_fake/'.length);
  if (name === '' && req.method === 'GET') return send(res, 200, { methods: CONTROL_METHODS });
  if (!(CONTROL_METHODS as readonly string[]).includes(name)) return send(res, 404, { error: `no control method ${name}` });
  let arg: Record<string, unknown> = {};
  try {
    const raw = await readBody(req);
    if (raw.length > 0) {
      const parsed: unknown = JSON.parse(raw.toString('utf8'));
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('the body must be a JSON object');
      arg = parsed as Record<string, unknown>;
    } else
      for (const [k, v] of url.searchParams)
        arg[k] = /^\d+$/.test(v) && ['number', 'iid', 'times', 'status', 'retryAfterSeconds'].includes(k) ? Number(v) : v === 'true' ? true : v === 'false' ? false : v;
    const method = (control as unknown as Record<string, (a: unknown) => unknown>)[name] as (a: unknown) => unknown;
    const result = await method.call(control, arg);
    send(res, 200, { result: result ?? null });
  } catch (e) {
    send(res, 400, { error: (e as Error).message });
  }
}
