import type { IncomingMessage, ServerResponse } from 'node:http';
import { git, resolveCommit } from './git';
import { githubIssueJson, githubPullJson, reviewCommentJson, reviewJson, type ApiContext } from './github';
import { approvalsJson, discussionsOf, draftNoteJson, gitlabMrJson, noteJson } from './gitlab';
import { readBody } from './http';
import { ForgeState, type FaultSpec, type Provider, type PullRecord, type RepoRecord, type RequestRecord } from './state';

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

  /** GitLab: whether the author may approve (default: prevented). Either: private (fetch needs auth). */
  setRepoOptions(o: RepoRef & { preventAuthorApproval?: boolean; private?: boolean }): void {
    const repo = this.repoOf(o);
    if (o.preventAuthorApproval !== undefined) repo.preventAuthorApproval = o.preventAuthorApproval;
    if (o.private !== undefined) repo.private = o.private;
  }

  /** Opens a pull/merge request (no API rules: set-up may open anything with existing branches). */
  async openPullRequest(o: RepoRef & { author: string; head: string; base: string; title: string; body?: string; draft?: boolean }): Promise<OpenedPull> {
    const repo = this.repoOf(o);
    const author = this.state.userByLogin(o.author) ?? this.state.addUser(o.author);
    const pull = await this.state.openPull(repo, { authorId: author.id, head: o.head, base: o.base, title: o.title, body: o.body ?? '', draft: o.draft ?? false });
    const htmlUrl = repo.provider === 'github' ? `${this.state.origin}/${repo.owner}/${repo.name}/pull/${pull.number}` : `${this.state.origin}/${repo.owner}/${repo.name}/-/merge_requests/${pull.number}`;
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
    return pull.reviews.map((r) => ({ ...reviewJson(this.state, repo, pull, r), comments: pull.reviewComments.filter((c) => c.reviewId === r.id).map((c) => reviewCommentJson(this.state, repo, pull, c)) }));
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

  /** GitLab notes, oldest first. */
  notes(o: PullRef): Record<string, unknown>[] {
    const { repo, pull } = this.pullOf(o);
    return pull.notes.map((n) => noteJson(this.state, repo, pull, n));
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
    return this.state.requests.filter((r) => (filter.method === undefined || r.method === filter.method.toUpperCase()) && (filter.surface === undefined || r.surface === filter.surface) && (pattern === null || pattern.test(r.path))).map((r) => ({ ...r }));
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
      for (const [k, v] of url.searchParams) arg[k] = /^\d+$/.test(v) && ['number', 'iid', 'times', 'status', 'retryAfterSeconds'].includes(k) ? Number(v) : v === 'true' ? true : v === 'false' ? false : v;
    const method = (control as unknown as Record<string, (a: unknown) => unknown>)[name] as (a: unknown) => unknown;
    const result = await method.call(control, arg);
    send(res, 200, { result: result ?? null });
  } catch (e) {
    send(res, 400, { error: (e as Error).message });
  }
}
