import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { diffHunkThrough, fileName, lineAtPosition, placeGithubComment, type DiffFile, type Side } from './diff';
import { countCommits, listCommits } from './git';
import { BodyError, jsonObject, linkHeader, paginate, reply, textReply, type Page, type Params, type Reply } from './http';
import { commitRoute, compareRoute, mergeFields, mergeRoute, protectionRoute, requestedReviewersRoute } from './githubChecks';
import { nowIso, type ArmedFault, type ForgeState, type IssueRecord, type PullRecord, type RepoRecord, type ReviewCommentRecord, type ReviewRecord, type UserRecord } from './state';

/**
 * A subset of the GitHub REST API v3 under `/api/v3` (Octokit's `baseUrl` for GitHub Enterprise
 * Server), with GitHub's status codes, error bodies (`{message, errors, documentation_url,
 * status}`), rate-limit headers and `Link` pagination. See README.md for the routes and rules.
 */

export interface ApiContext {
  state: ForgeState;
  method: string;
  /** Decoded path segments after the API prefix. */
  segments: string[];
  query: URLSearchParams;
  raw: Buffer;
  headers: IncomingHttpHeaders;
  origin: string;
  /** The request's pathname as sent (for Link headers). */
  pathname: string;
  /** Reports the authenticated user (request log). */
  setUser(login: string): void;
}

const DOCS = 'https://docs.github.com/rest';
const DOC = {
  createPull: `${DOCS}/pulls/pulls#create-a-pull-request`,
  updatePull: `${DOCS}/pulls/pulls#update-a-pull-request`,
  createReview: `${DOCS}/pulls/reviews#create-a-review-for-a-pull-request`,
  submitReview: `${DOCS}/pulls/reviews#submit-a-review-for-a-pull-request`,
  createIssueComment: `${DOCS}/issues/comments#create-an-issue-comment`,
};
const RATE_LIMIT = 5000;
const startedAt = Math.floor(Date.now() / 1000);

export function githubError(status: number, message: string, extra: { errors?: unknown[]; documentation_url?: string } = {}, headers: Record<string, string> = {}): Reply {
  const body: Record<string, unknown> = { message };
  if (extra.errors !== undefined) body['errors'] = extra.errors;
  body['documentation_url'] = extra.documentation_url ?? DOCS;
  body['status'] = String(status);
  return reply(status, body, headers);
}

const notFound = () => githubError(404, 'Not Found');
const validationFailed = (errors: unknown[], doc: string) => githubError(422, 'Validation Failed', { errors, documentation_url: doc });
const unprocessable = (errors: string[], doc: string) => githubError(422, 'Unprocessable Entity', { errors, documentation_url: doc });
const invalidRequest = (detail: string, doc: string) => githubError(422, `Invalid request.\n\n${detail}`, { documentation_url: doc });

/** Headers GitHub sends on every API response. */
export function githubHeaders(state: ForgeState, user: UserRecord | null): Record<string, string> {
  const key = user === null ? 'anonymous' : `u${user.id}`;
  const used = (state.rateUsed.get(key) ?? 0) + 1;
  state.rateUsed.set(key, used);
  const limit = user === null ? 60 : RATE_LIMIT;
  return {
    'x-github-media-type': 'github.v3; format=json',
    'x-github-api-version-selected': '2022-11-28',
    'x-github-request-id': randomBytes(8).toString('hex').toUpperCase(),
    'x-ratelimit-limit': String(limit),
    'x-ratelimit-remaining': String(Math.max(0, limit - used)),
    'x-ratelimit-reset': String(startedAt + 3600),
    'x-ratelimit-used': String(used),
    'x-ratelimit-resource': 'core',
  };
}

/** A rate-limit fault, as GitHub answers it: 403 with a secondary-limit message and `retry-after`, or a primary limit (`x-ratelimit-remaining: 0`). */
export function githubRateLimited(fault: ArmedFault): Reply {
  const spec = fault.spec.kind === 'rate-limit' ? fault.spec : { retryAfterSeconds: 60, variant: 'secondary' as const };
  const after = spec.retryAfterSeconds ?? 60;
  const reset = String(Math.floor(Date.now() / 1000) + after);
  if (spec.variant === 'primary')
    return githubError(
      403,
      'API rate limit exceeded for user ID 1. If you reach out to GitHub Support for help, please include the request ID.',
      { documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api' },
      { 'x-ratelimit-limit': String(RATE_LIMIT), 'x-ratelimit-remaining': '0', 'x-ratelimit-used': String(RATE_LIMIT), 'x-ratelimit-reset': reset, 'x-ratelimit-resource': 'core' },
    );
  return githubError(
    403,
    'You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID.',
    { documentation_url: 'https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits' },
    { 'retry-after': String(after), 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset },
  );
}

/** The user a request authenticates as: `Authorization: token X` or `Bearer X`. */
export function githubUser(state: ForgeState, headers: IncomingHttpHeaders): UserRecord | null | 'bad' {
  const h = headers.authorization;
  if (h === undefined || h.trim() === '') return null;
  const m = /^(token|bearer)\s+(\S+)\s*$/i.exec(h);
  if (m === null) return 'bad';
  return state.userByToken(m[2] as string) ?? 'bad';
}

// ------------------------------------------------------------ wire shapes

function userJson(origin: string, u: UserRecord): Record<string, unknown> {
  return {
    login: u.login,
    id: u.id,
    node_id: Buffer.from(`04:User${u.id}`).toString('base64'),
    avatar_url: `${origin}/avatars/${u.login}`,
    url: `${origin}/api/v3/users/${u.login}`,
    html_url: `${origin}/${u.login}`,
    type: 'User',
    site_admin: false,
  };
}

function association(repo: RepoRecord, u: UserRecord): string {
  return u.login.toLowerCase() === repo.owner.toLowerCase() ? 'OWNER' : 'COLLABORATOR';
}

function repoJson(state: ForgeState, repo: RepoRecord): Record<string, unknown> {
  const origin = state.origin;
  const owner = state.userByLogin(repo.owner);
  const full = `${repo.owner}/${repo.name}`;
  return {
    id: repo.id,
    node_id: Buffer.from(`010:Repository${repo.id}`).toString('base64'),
    name: repo.name,
    full_name: full,
    private: repo.private,
    owner: owner === undefined ? { login: repo.owner, id: 0, type: 'Organization', url: `${origin}/api/v3/users/${repo.owner}`, html_url: `${origin}/${repo.owner}` } : userJson(origin, owner),
    html_url: `${origin}/${full}`,
    description: null,
    fork: false,
    url: `${origin}/api/v3/repos/${full}`,
    pulls_url: `${origin}/api/v3/repos/${full}/pulls{/number}`,
    clone_url: `${origin}/${full}.git`,
    git_url: `${origin}/${full}.git`,
    ssh_url: `git@127.0.0.1:${full}.git`,
    default_branch: repo.defaultBranch,
    visibility: repo.private ? 'private' : 'public',
    created_at: repo.createdAt,
    updated_at: repo.createdAt,
    permissions: { admin: true, maintain: true, push: true, triage: true, pull: true },
  };
}

async function pullJson(ctx: ApiContext, repo: RepoRecord, pull: PullRecord, full: boolean): Promise<Record<string, unknown>> {
  const { state, origin } = ctx;
  const api = `${origin}/api/v3/repos/${repo.owner}/${repo.name}`;
  const html = `${origin}/${repo.owner}/${repo.name}/pull/${pull.number}`;
  const author = state.user(pull.authorId);
  const owner = state.userByLogin(repo.owner);
  const side = (ref: string, sha: string) => ({
    label: `${repo.owner}:${ref}`,
    ref,
    sha,
    user: owner === undefined ? { login: repo.owner } : userJson(origin, owner),
    repo: repoJson(state, repo),
  });
  const out: Record<string, unknown> = {
    url: `${api}/pulls/${pull.number}`,
    id: pull.id,
    node_id: Buffer.from(`011:PullRequest${pull.id}`).toString('base64'),
    html_url: html,
    diff_url: `${html}.diff`,
    patch_url: `${html}.patch`,
    issue_url: `${api}/issues/${pull.number}`,
    commits_url: `${api}/pulls/${pull.number}/commits`,
    review_comments_url: `${api}/pulls/${pull.number}/comments`,
    review_comment_url: `${api}/pulls/comments{/number}`,
    comments_url: `${api}/issues/${pull.number}/comments`,
    statuses_url: `${api}/statuses/${pull.headSha}`,
    number: pull.number,
    state: pull.state === 'open' ? 'open' : 'closed',
    locked: false,
    title: pull.title,
    user: userJson(origin, author),
    body: pull.body === '' ? null : pull.body,
    labels: [],
    milestone: null,
    active_lock_reason: null,
    created_at: pull.createdAt,
    updated_at: pull.updatedAt,
    closed_at: pull.closedAt,
    merged_at: pull.state === 'merged' ? pull.closedAt : null,
    merge_commit_sha: pull.mergeCommitSha,
    assignee: null,
    assignees: [],
    requested_reviewers: pull.requestedReviewerIds.map((id) => userJson(origin, state.user(id))),
    requested_teams: [],
    head: side(pull.head, pull.headSha),
    base: side(pull.base, pull.baseSha),
    _links: { self: { href: `${api}/pulls/${pull.number}` }, html: { href: html } },
    author_association: association(repo, author),
    auto_merge: null,
    draft: pull.draft,
  };
  if (full) {
    const s = await state.shas(repo, pull);
    const d = await state.diff(repo, pull);
    out['merged'] = pull.state === 'merged';
    Object.assign(out, await mergeFields(ctx, repo, pull));
    out['comments'] = pull.issueComments.length;
    out['review_comments'] = pull.reviewComments.filter((c) => visibleReview(pull, c.reviewId, null)).length;
    out['maintainer_can_modify'] = false;
    out['commits'] = await countCommits(repo.dir, s.mergeBase, s.head);
    out['additions'] = d.files.reduce((n, f) => n + f.additions, 0);
    out['deletions'] = d.files.reduce((n, f) => n + f.deletions, 0);
    out['changed_files'] = d.files.length;
  }
  return out;
}

function visibleReview(pull: PullRecord, reviewId: number, viewer: UserRecord | null): boolean {
  const r = pull.reviews.find((x) => x.id === reviewId);
  return r !== undefined && (r.state !== 'PENDING' || (viewer !== null && r.userId === viewer.id));
}

export function reviewJson(state: ForgeState, repo: RepoRecord, pull: PullRecord, r: ReviewRecord): Record<string, unknown> {
  const origin = state.origin;
  const html = `${origin}/${repo.owner}/${repo.name}/pull/${pull.number}#pullrequestreview-${r.id}`;
  const prUrl = `${origin}/api/v3/repos/${repo.owner}/${repo.name}/pulls/${pull.number}`;
  const u = state.user(r.userId);
  const out: Record<string, unknown> = {
    id: r.id,
    node_id: Buffer.from(`017:PullRequestReview${r.id}`).toString('base64'),
    user: userJson(origin, u),
    body: r.body,
    state: r.state,
    html_url: html,
    pull_request_url: prUrl,
    author_association: association(repo, u),
    _links: { html: { href: html }, pull_request: { href: prUrl } },
    commit_id: r.commitId,
  };
  if (r.submittedAt !== null) out['submitted_at'] = r.submittedAt;
  return out;
}

export function reviewCommentJson(state: ForgeState, repo: RepoRecord, pull: PullRecord, c: ReviewCommentRecord): Record<string, unknown> {
  const origin = state.origin;
  const api = `${origin}/api/v3/repos/${repo.owner}/${repo.name}`;
  const html = `${origin}/${repo.owner}/${repo.name}/pull/${pull.number}#discussion_r${c.id}`;
  const u = state.user(c.userId);
  const out: Record<string, unknown> = {
    url: `${api}/pulls/comments/${c.id}`,
    pull_request_review_id: c.reviewId,
    id: c.id,
    node_id: Buffer.from(`024:PullRequestReviewComment${c.id}`).toString('base64'),
    diff_hunk: c.diffHunk,
    path: c.path,
    position: c.position,
    original_position: c.position,
    commit_id: c.commitId,
    original_commit_id: c.commitId,
    user: userJson(origin, u),
    body: c.body,
    created_at: c.createdAt,
    updated_at: c.createdAt,
    html_url: html,
    pull_request_url: `${api}/pulls/${pull.number}`,
    author_association: association(repo, u),
    _links: { self: { href: `${api}/pulls/comments/${c.id}` }, html: { href: html }, pull_request: { href: `${api}/pulls/${pull.number}` } },
    start_line: c.startLine,
    original_start_line: c.startLine,
    start_side: c.startSide,
    line: c.line,
    original_line: c.line,
    side: c.side,
    subject_type: c.subjectType,
  };
  if (c.inReplyToId !== null) out['in_reply_to_id'] = c.inReplyToId;
  return out;
}

function issueJson(state: ForgeState, repo: RepoRecord, n: number, issue: IssueRecord | null, pull: PullRecord | null): Record<string, unknown> {
  const origin = state.origin;
  const api = `${origin}/api/v3/repos/${repo.owner}/${repo.name}`;
  const kind = pull !== null ? 'pull' : 'issues';
  const html = `${origin}/${repo.owner}/${repo.name}/${kind}/${n}`;
  const author = state.user(pull?.authorId ?? (issue as IssueRecord).authorId);
  const out: Record<string, unknown> = {
    url: `${api}/issues/${n}`,
    repository_url: api,
    comments_url: `${api}/issues/${n}/comments`,
    html_url: html,
    id: pull?.id ?? (issue as IssueRecord).id,
    node_id: Buffer.from(`05:Issue${pull?.id ?? (issue as IssueRecord).id}`).toString('base64'),
    number: n,
    title: pull?.title ?? (issue as IssueRecord).title,
    user: userJson(origin, author),
    labels: [],
    state: pull !== null ? (pull.state === 'open' ? 'open' : 'closed') : (issue as IssueRecord).state,
    locked: false,
    assignee: null,
    assignees: [],
    milestone: null,
    comments: pull?.issueComments.length ?? (issue as IssueRecord).comments.length,
    created_at: pull?.createdAt ?? (issue as IssueRecord).createdAt,
    updated_at: pull?.updatedAt ?? (issue as IssueRecord).createdAt,
    closed_at: pull?.closedAt ?? null,
    author_association: association(repo, author),
    active_lock_reason: null,
    body: (pull?.body ?? (issue as IssueRecord).body) || null,
    state_reason: null,
  };
  if (pull !== null)
    out['pull_request'] = { url: `${api}/pulls/${n}`, html_url: html, diff_url: `${html}.diff`, patch_url: `${html}.patch`, merged_at: pull.state === 'merged' ? pull.closedAt : null };
  return out;
}

function fileJson(ctx: ApiContext, repo: RepoRecord, head: string, f: DiffFile): Record<string, unknown> {
  const name = fileName(f);
  const enc = name.split('/').map(encodeURIComponent).join('/');
  const out: Record<string, unknown> = {
    sha: f.status === 'removed' ? f.oldBlob : f.newBlob,
    filename: name,
    status: f.status,
    additions: f.additions,
    deletions: f.deletions,
    changes: f.additions + f.deletions,
    blob_url: `${ctx.origin}/${repo.owner}/${repo.name}/blob/${head}/${enc}`,
    raw_url: `${ctx.origin}/${repo.owner}/${repo.name}/raw/${head}/${enc}`,
    contents_url: `${ctx.origin}/api/v3/repos/${repo.owner}/${repo.name}/contents/${enc}?ref=${head}`,
  };
  if (!f.binary && f.hunks.length > 0) out['patch'] = f.patch;
  if (f.status === 'renamed' || f.status === 'copied') out['previous_filename'] = f.oldPath;
  return out;
}

// ------------------------------------------------------------ routing

function paged(ctx: ApiContext, all: readonly unknown[], extra: Record<string, string> = {}): Reply {
  const p: Page<unknown> = paginate(all, ctx.query, 30, 100);
  const headers = { ...extra };
  if (p.totalPages > 1) {
    const rels: ('first' | 'prev' | 'next' | 'last')[] = p.page === 1 ? ['next', 'last'] : p.page >= p.totalPages ? ['prev', 'first'] : ['prev', 'next', 'last', 'first'];
    headers['link'] = linkHeader(ctx.origin, ctx.pathname, ctx.query, p, rels);
  }
  return reply(200, p.items, headers);
}

function intParam(s: string | undefined): number | null {
  return s !== undefined && /^\d+$/.test(s) ? Number.parseInt(s, 10) : null;
}

export async function handleGithub(ctx: ApiContext, user: UserRecord): Promise<Reply> {
  const { method, segments: s, state } = ctx;
  const seg = (i: number) => s[i];
  ctx.setUser(user.login);
  if (s.length === 1 && seg(0) === 'user' && method === 'GET') return reply(200, { ...userJson(ctx.origin, user), name: user.name, email: user.email, created_at: user.createdAt });
  if (s.length === 1 && seg(0) === 'rate_limit' && method === 'GET') {
    const used = state.rateUsed.get(`u${user.id}`) ?? 0;
    const core = { limit: RATE_LIMIT, remaining: Math.max(0, RATE_LIMIT - used), reset: startedAt + 3600, used, resource: 'core' };
    return reply(200, { resources: { core }, rate: core });
  }
  if (seg(0) !== 'repos' || s.length < 3) return notFound();
  const repo = state.repo(seg(1) as string, seg(2) as string);
  if (repo === undefined || repo.provider !== 'github') return notFound();
  await state.sync(repo);
  if (s.length === 3) return method === 'GET' ? reply(200, repoJson(state, repo)) : notFound();
  if (seg(3) === 'commits' && s.length === 6 && ['check-runs', 'status', 'statuses'].includes(seg(5) as string)) return commitRoute(ctx, repo, seg(4) as string, seg(5) as string);
  if (seg(3) === 'branches' && (s.length === 6 || s.length === 7) && seg(5) === 'protection') return protectionRoute(ctx, repo, user, seg(4) as string, seg(6));
  if (seg(3) === 'compare' && s.length === 5) return compareRoute(ctx, repo, seg(4) as string);
  const n = intParam(seg(4));
  if (seg(3) === 'pulls') {
    if (s.length === 4) {
      if (method === 'GET') return listPulls(ctx, repo);
      if (method === 'POST') return createPull(ctx, repo, user);
      return notFound();
    }
    if (n === null) return notFound();
    const pull = repo.pulls.get(n);
    if (pull === undefined) return notFound();
    if (s.length === 5) {
      if (method === 'GET') return getPull(ctx, repo, pull);
      if (method === 'PATCH') return updatePull(ctx, repo, pull);
      return notFound();
    }
    const sub = seg(5);
    if (s.length === 6 && sub === 'merge') return mergeRoute(ctx, repo, pull, user);
    if (s.length === 6 && sub === 'requested_reviewers') return requestedReviewersRoute(ctx, repo, pull, () => pullJson(ctx, repo, pull, false));
    if (s.length === 6 && sub === 'files' && method === 'GET') {
      const d = await state.diff(repo, pull);
      return paged(
        ctx,
        d.files.map((f) => fileJson(ctx, repo, pull.headSha, f)),
      );
    }
    if (s.length === 6 && sub === 'commits' && method === 'GET') {
      const sh = await state.shas(repo, pull);
      const commits = await listCommits(repo.dir, sh.mergeBase, sh.head);
      return paged(
        ctx,
        commits.map((c) => ({
          sha: c.sha,
          node_id: Buffer.from(`06:Commit${c.sha}`).toString('base64'),
          url: `${ctx.origin}/api/v3/repos/${repo.owner}/${repo.name}/commits/${c.sha}`,
          html_url: `${ctx.origin}/${repo.owner}/${repo.name}/commit/${c.sha}`,
          commit: {
            author: { name: c.authorName, email: c.authorEmail, date: c.authorDate },
            committer: { name: c.committerName, email: c.committerEmail, date: c.committerDate },
            message: c.message,
          },
          parents: c.parents.map((p) => ({ sha: p })),
        })),
      );
    }
    if (sub === 'reviews') {
      if (s.length === 6 && method === 'GET')
        return paged(
          ctx,
          pull.reviews.filter((r) => visibleReview(pull, r.id, user)).map((r) => reviewJson(state, repo, pull, r)),
        );
      if (s.length === 6 && method === 'POST') return createReview(ctx, repo, pull, user);
      const id = intParam(seg(6));
      const review = id === null ? undefined : pull.reviews.find((r) => r.id === id && visibleReview(pull, r.id, user));
      if (review === undefined) return notFound();
      if (s.length === 7 && method === 'GET') return reply(200, reviewJson(state, repo, pull, review));
      if (s.length === 8 && seg(7) === 'comments' && method === 'GET')
        return paged(
          ctx,
          pull.reviewComments.filter((c) => c.reviewId === review.id).map((c) => reviewCommentJson(state, repo, pull, c)),
        );
      if (s.length === 8 && seg(7) === 'events' && method === 'POST') return submitReview(ctx, repo, pull, user, review);
      return notFound();
    }
    if (s.length === 6 && sub === 'comments' && method === 'GET')
      return paged(
        ctx,
        pull.reviewComments.filter((c) => visibleReview(pull, c.reviewId, null)).map((c) => reviewCommentJson(state, repo, pull, c)),
      );
    return notFound();
  }
  if (seg(3) === 'issues' && n !== null) {
    const pull = repo.pulls.get(n) ?? null;
    const issue = repo.issues.get(n) ?? null;
    if (pull === null && issue === null) return notFound();
    if (s.length === 5 && method === 'GET') return reply(200, issueJson(state, repo, n, issue, pull));
    if (s.length === 6 && seg(5) === 'comments') {
      const list = pull?.issueComments ?? (issue as IssueRecord).comments;
      const json = (c: (typeof list)[number]) => ({
        id: c.id,
        node_id: Buffer.from(`012:IssueComment${c.id}`).toString('base64'),
        url: `${ctx.origin}/api/v3/repos/${repo.owner}/${repo.name}/issues/comments/${c.id}`,
        html_url: `${ctx.origin}/${repo.owner}/${repo.name}/${pull ? 'pull' : 'issues'}/${n}#issuecomment-${c.id}`,
        issue_url: `${ctx.origin}/api/v3/repos/${repo.owner}/${repo.name}/issues/${n}`,
        body: c.body,
        user: userJson(ctx.origin, state.user(c.userId)),
        created_at: c.createdAt,
        updated_at: c.createdAt,
        author_association: association(repo, state.user(c.userId)),
      });
      if (method === 'GET') return paged(ctx, list.map(json));
      if (method === 'POST') {
        const body = parse(ctx);
        if ('reply' in body) return body.reply;
        const text = body.params['body'];
        if (typeof text !== 'string' || text.length === 0) return validationFailed([{ resource: 'IssueComment', code: 'missing_field', field: 'body' }], DOC.createIssueComment);
        const c = { id: state.id(), userId: user.id, body: text, createdAt: nowIso() };
        list.push(c);
        return reply(201, json(c), { location: `${ctx.origin}/api/v3/repos/${repo.owner}/${repo.name}/issues/comments/${c.id}` });
      }
    }
    return notFound();
  }
  return notFound();
}

function parse(ctx: ApiContext): { params: Params } | { reply: Reply } {
  try {
    return { params: jsonObject(ctx.raw) };
  } catch (e) {
    const message = e instanceof BodyError ? e.message : 'Problems parsing JSON';
    return { reply: githubError(400, message) };
  }
}

// ------------------------------------------------------------ pulls

async function listPulls(ctx: ApiContext, repo: RepoRecord): Promise<Reply> {
  const q = ctx.query;
  const state = q.get('state') ?? 'open';
  if (!['open', 'closed', 'all'].includes(state)) return validationFailed([{ resource: 'PullRequest', field: 'state', code: 'invalid' }], `${DOCS}/pulls/pulls#list-pull-requests`);
  let pulls = [...repo.pulls.values()].filter((p) => state === 'all' || (state === 'open' ? p.state === 'open' : p.state !== 'open'));
  const head = q.get('head');
  // GitHub filters by `user:ref-name`; a bare branch name does not filter.
  if (head !== null && head.includes(':')) {
    const [owner, ref] = [head.slice(0, head.indexOf(':')), head.slice(head.indexOf(':') + 1)];
    pulls = pulls.filter((p) => owner.toLowerCase() === repo.owner.toLowerCase() && p.head === ref);
  }
  const base = q.get('base');
  if (base !== null) pulls = pulls.filter((p) => p.base === base);
  const sort = q.get('sort') ?? 'created';
  const direction = q.get('direction') ?? (sort === 'created' ? 'desc' : 'desc');
  const key = (p: PullRecord) => (sort === 'updated' ? `${p.updatedAt}|${String(p.id).padStart(12, '0')}` : String(p.id).padStart(12, '0'));
  pulls.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  if (direction === 'desc') pulls.reverse();
  const all = await Promise.all(pulls.map((p) => pullJson(ctx, repo, p, false)));
  return paged(ctx, all);
}

async function getPull(ctx: ApiContext, repo: RepoRecord, pull: PullRecord): Promise<Reply> {
  const accept = String(ctx.headers.accept ?? '');
  if (/application\/vnd\.github(\.v3)?\.(diff|patch)/.test(accept)) {
    const d = await ctx.state.diff(repo, pull);
    const kind = /\.patch/.test(accept) ? 'patch' : 'diff';
    return textReply(200, d.text, `application/vnd.github.${kind}; charset=utf-8`);
  }
  return reply(200, await pullJson(ctx, repo, pull, true));
}

function openDuplicate(repo: RepoRecord, head: string, base: string, except: PullRecord | null): PullRecord | undefined {
  return [...repo.pulls.values()].find((p) => p !== except && p.state === 'open' && p.head === head && p.base === base);
}

async function createPull(ctx: ApiContext, repo: RepoRecord, user: UserRecord): Promise<Reply> {
  const parsed = parse(ctx);
  if ('reply' in parsed) return parsed.reply;
  const b = parsed.params;
  const missing = (['title', 'head', 'base'] as const).filter((k) => typeof b[k] !== 'string' || (b[k] as string).length === 0);
  if (missing.length > 0)
    return validationFailed(
      missing.map((field) => ({ resource: 'PullRequest', code: 'missing_field', field })),
      DOC.createPull,
    );
  let head = b['head'] as string;
  const base = b['base'] as string;
  if (head.includes(':')) {
    const owner = head.slice(0, head.indexOf(':'));
    if (owner.toLowerCase() !== repo.owner.toLowerCase()) return validationFailed([{ resource: 'PullRequest', field: 'head', code: 'invalid' }], DOC.createPull);
    head = head.slice(head.indexOf(':') + 1);
  }
  const headSha = await ctx.state.branchTip(repo, head);
  if (headSha === null) return validationFailed([{ resource: 'PullRequest', field: 'head', code: 'invalid' }], DOC.createPull);
  const baseSha = await ctx.state.branchTip(repo, base);
  if (baseSha === null) return validationFailed([{ resource: 'PullRequest', field: 'base', code: 'invalid' }], DOC.createPull);
  if (openDuplicate(repo, head, base, null) !== undefined)
    return validationFailed([{ resource: 'PullRequest', code: 'custom', message: `A pull request already exists for ${repo.owner}:${head}.` }], DOC.createPull);
  if (head === base || (await countCommits(repo.dir, baseSha, headSha)) === 0)
    return validationFailed([{ resource: 'PullRequest', code: 'custom', message: `No commits between ${base} and ${head}` }], DOC.createPull);
  const pull = await ctx.state.openPull(repo, { authorId: user.id, head, base, title: b['title'] as string, body: typeof b['body'] === 'string' ? b['body'] : '', draft: b['draft'] === true });
  return reply(201, await pullJson(ctx, repo, pull, true), { location: `${ctx.origin}/api/v3/repos/${repo.owner}/${repo.name}/pulls/${pull.number}` });
}

async function updatePull(ctx: ApiContext, repo: RepoRecord, pull: PullRecord): Promise<Reply> {
  const parsed = parse(ctx);
  if ('reply' in parsed) return parsed.reply;
  const b = parsed.params;
  for (const k of ['title', 'body', 'state', 'base'] as const)
    if (b[k] !== undefined && b[k] !== null && typeof b[k] !== 'string') return invalidRequest(`For 'properties/${k}', ${JSON.stringify(b[k])} is not a string.`, DOC.updatePull);
  if (b['state'] !== undefined && b['state'] !== 'open' && b['state'] !== 'closed') return validationFailed([{ resource: 'PullRequest', code: 'invalid', field: 'state' }], DOC.updatePull);
  let baseSha = pull.baseSha;
  const base = typeof b['base'] === 'string' ? b['base'] : pull.base;
  if (base !== pull.base) {
    const tip = await ctx.state.branchTip(repo, base);
    if (tip === null) return validationFailed([{ resource: 'PullRequest', field: 'base', code: 'invalid' }], DOC.updatePull);
    baseSha = tip;
  }
  const reopening = b['state'] === 'open' && pull.state === 'closed';
  if ((reopening || (pull.state === 'open' && base !== pull.base)) && openDuplicate(repo, pull.head, base, pull) !== undefined)
    return validationFailed([{ resource: 'PullRequest', code: 'custom', message: `A pull request already exists for ${repo.owner}:${pull.head}.` }], DOC.updatePull);
  if (pull.state === 'merged' && b['state'] !== undefined)
    return validationFailed([{ resource: 'PullRequest', code: 'custom', message: 'Cannot change the state of a merged pull request.' }], DOC.updatePull);
  if (typeof b['title'] === 'string') pull.title = b['title'];
  if (typeof b['body'] === 'string') pull.body = b['body'];
  pull.base = base;
  pull.baseSha = baseSha;
  if (b['state'] === 'closed' && pull.state === 'open') {
    pull.state = 'closed';
    pull.closedAt = nowIso();
  }
  if (reopening) {
    pull.state = 'open';
    pull.closedAt = null;
  }
  pull.updatedAt = nowIso();
  await ctx.state.sync(repo);
  return reply(200, await pullJson(ctx, repo, pull, true));
}

// ------------------------------------------------------------ reviews

const EVENTS = ['APPROVE', 'REQUEST_CHANGES', 'COMMENT'] as const;
type ReviewEvent = (typeof EVENTS)[number];

interface CommentInput {
  path: string;
  body: string;
  line: number | null;
  side: Side | null;
  startLine: number | null;
  startSide: Side | null;
  position: number | null;
}

function schemaCheckReview(b: Params): { event: ReviewEvent | null; body: string; commitId: string | null; comments: CommentInput[] } | { error: string } {
  const isInt = (v: unknown) => typeof v === 'number' && Number.isInteger(v);
  if (b['commit_id'] !== undefined && b['commit_id'] !== null && typeof b['commit_id'] !== 'string') return { error: `For 'properties/commit_id', ${JSON.stringify(b['commit_id'])} is not a string.` };
  if (b['body'] !== undefined && b['body'] !== null && typeof b['body'] !== 'string') return { error: `For 'properties/body', ${JSON.stringify(b['body'])} is not a string.` };
  const ev = b['event'];
  if (ev !== undefined && ev !== null && !(typeof ev === 'string' && (EVENTS as readonly string[]).includes(ev)))
    return { error: `For 'properties/event', ${JSON.stringify(ev)} is not one of ${JSON.stringify(EVENTS)}.` };
  const raw = b['comments'] ?? [];
  if (!Array.isArray(raw)) return { error: `For 'properties/comments', ${JSON.stringify(raw)} is not an array.` };
  const comments: CommentInput[] = [];
  for (const [i, c] of raw.entries()) {
    if (c === null || typeof c !== 'object' || Array.isArray(c)) return { error: `For 'items', ${JSON.stringify(c)} is not an object.` };
    const o = c as Params;
    if (typeof o['path'] !== 'string') return { error: `No subschema in "anyOf" matched.\n"path" wasn't supplied. (comments[${i}])` };
    if (typeof o['body'] !== 'string') return { error: `"body" wasn't supplied. (comments[${i}])` };
    for (const k of ['line', 'start_line', 'position'] as const)
      if (o[k] !== undefined && o[k] !== null && !isInt(o[k])) return { error: `For 'properties/${k}', ${JSON.stringify(o[k])} is not an integer. (comments[${i}])` };
    for (const k of ['side', 'start_side'] as const)
      if (o[k] !== undefined && o[k] !== null && o[k] !== 'LEFT' && o[k] !== 'RIGHT')
        return { error: `For 'properties/${k}', ${JSON.stringify(o[k])} is not one of ["LEFT", "RIGHT"]. (comments[${i}])` };
    comments.push({
      path: o['path'],
      body: o['body'],
      line: isInt(o['line']) ? (o['line'] as number) : null,
      side: (o['side'] as Side | undefined) ?? null,
      startLine: isInt(o['start_line']) ? (o['start_line'] as number) : null,
      startSide: (o['start_side'] as Side | undefined) ?? null,
      position: isInt(o['position']) ? (o['position'] as number) : null,
    });
  }
  return { event: (ev as ReviewEvent | undefined) ?? null, body: typeof b['body'] === 'string' ? b['body'] : '', commitId: typeof b['commit_id'] === 'string' ? b['commit_id'] : null, comments };
}

/** The rules every submitted review obeys (author and body). */
function eventRules(pull: PullRecord, user: UserRecord, event: ReviewEvent, body: string): string | null {
  if (pull.authorId === user.id && event === 'APPROVE') return 'Can not approve your own pull request';
  if (pull.authorId === user.id && event === 'REQUEST_CHANGES') return 'Can not request changes on your own pull request';
  if (event === 'REQUEST_CHANGES' && body.trim() === '') return 'You need to leave a comment indicating the requested changes.';
  if (event === 'COMMENT' && body.trim() === '') return 'You need to leave a comment.';
  return null;
}

const STATE_OF: Record<ReviewEvent, ReviewRecord['state']> = { APPROVE: 'APPROVED', REQUEST_CHANGES: 'CHANGES_REQUESTED', COMMENT: 'COMMENTED' };

async function createReview(ctx: ApiContext, repo: RepoRecord, pull: PullRecord, user: UserRecord): Promise<Reply> {
  const parsed = parse(ctx);
  if ('reply' in parsed) return parsed.reply;
  const input = schemaCheckReview(parsed.params);
  if ('error' in input) return invalidRequest(input.error, DOC.createReview);
  const { state } = ctx;
  const head = pull.headSha;
  // Deliberately stricter than GitHub: a review must name the pull request's current head.
  if (input.commitId !== null && input.commitId !== head) return unprocessable(['The commitOID is not part of the pull request'], DOC.createReview);
  if (pull.reviews.some((r) => r.userId === user.id && r.state === 'PENDING')) return unprocessable(['User can only have one pending review per pull request'], DOC.createReview);
  if (input.event !== null) {
    const rule = eventRules(pull, user, input.event, input.body);
    if (rule !== null) return unprocessable([rule], DOC.createReview);
  }
  const diff = await state.diff(repo, pull);
  const errors: string[] = [];
  const placed: Omit<ReviewCommentRecord, 'id' | 'reviewId'>[] = [];
  for (const c of input.comments) {
    const file = diff.files.find((f) => fileName(f) === c.path);
    if (file === undefined) {
      errors.push('Path could not be resolved');
      continue;
    }
    let line = c.line;
    let side: Side = c.side ?? 'RIGHT';
    if (line === null && c.position !== null) {
      const at = lineAtPosition(file, c.position);
      if (at === undefined) {
        errors.push('Position could not be resolved');
        continue;
      }
      side = at.kind === 'del' ? 'LEFT' : 'RIGHT';
      line = side === 'LEFT' ? at.oldLine : at.newLine;
    }
    if (line === null) {
      errors.push('Line could not be resolved');
      continue;
    }
    const p = placeGithubComment(file, line, side, c.startLine, c.startLine === null ? null : (c.startSide ?? side));
    if (!p.ok) {
      errors.push(p.error);
      continue;
    }
    placed.push({
      userId: user.id,
      path: c.path,
      subjectType: 'line',
      line,
      side,
      startLine: c.startLine,
      startSide: c.startLine === null ? null : (c.startSide ?? side),
      position: p.end.position,
      diffHunk: diffHunkThrough(file, p.end),
      body: c.body,
      commitId: head,
      inReplyToId: null,
      createdAt: nowIso(),
    });
  }
  if (errors.length > 0) return unprocessable([...new Set(errors)], DOC.createReview);
  // All or nothing: the review and every comment are stored together, after every check passed.
  const at = nowIso();
  const review: ReviewRecord = {
    id: state.id(),
    userId: user.id,
    body: input.body,
    state: input.event === null ? 'PENDING' : STATE_OF[input.event],
    commitId: head,
    submittedAt: input.event === null ? null : at,
  };
  pull.reviews.push(review);
  if (review.state !== 'PENDING') pull.requestedReviewerIds = pull.requestedReviewerIds.filter((id) => id !== user.id);
  for (const c of placed) pull.reviewComments.push({ ...c, id: state.id(), reviewId: review.id });
  return reply(200, reviewJson(state, repo, pull, review));
}

async function submitReview(ctx: ApiContext, repo: RepoRecord, pull: PullRecord, user: UserRecord, review: ReviewRecord): Promise<Reply> {
  const parsed = parse(ctx);
  if ('reply' in parsed) return parsed.reply;
  const b = parsed.params;
  if (review.userId !== user.id) return notFound();
  if (review.state !== 'PENDING') return unprocessable(['Can not submit a review that is not pending'], DOC.submitReview);
  const ev = b['event'];
  if (typeof ev !== 'string' || !(EVENTS as readonly string[]).includes(ev))
    return invalidRequest(`For 'properties/event', ${JSON.stringify(ev ?? null)} is not one of ${JSON.stringify(EVENTS)}.`, DOC.submitReview);
  const body = typeof b['body'] === 'string' ? b['body'] : review.body;
  if (review.commitId !== pull.headSha) return unprocessable(['The commitOID is not part of the pull request'], DOC.submitReview);
  const rule = eventRules(pull, user, ev as ReviewEvent, body);
  if (rule !== null) return unprocessable([rule], DOC.submitReview);
  review.state = STATE_OF[ev as ReviewEvent];
  review.body = body;
  review.submittedAt = nowIso();
  pull.requestedReviewerIds = pull.requestedReviewerIds.filter((id) => id !== user.id);
  return reply(200, reviewJson(ctx.state, repo, pull, review));
}

export { pullJson as githubPullJson, issueJson as githubIssueJson, userJson as githubUserJson };
