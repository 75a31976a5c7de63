import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { gitlabPaths, type DiffFile } from './diff';
import { listCommits } from './git';
import type { ApiContext } from './github';
import { checkPosition, type DiffRefs } from './gitlabPosition';
import { BodyError, gitlabParams, intOf, linkHeader, noContent, paginate, reply, textReply, type Params, type Reply } from './http';
import { acceptRoute, approvalsLeft, detailedMergeStatus, mrListRoute, pipelineJson, pipelineRoute } from './gitlabPipelines';
import { nowIso, preciseNow, type ArmedFault, type DraftNoteRecord, type ForgeState, type IssueRecord, type NoteRecord, type PullRecord, type RepoRecord, type UserRecord } from './state';

/**
 * A subset of the GitLab REST API v4 under `/api/v4`: projects by numeric id or URL-encoded
 * `owner/name`, merge requests, notes, discussions with diff positions, draft notes, approvals
 * and issues, with GitLab's status codes and bodies (`{message}` from the application, `{error}`
 * from parameter validation) and its pagination headers. See README.md.
 */

export const gitlabUnauthorized = (): Reply => reply(401, { message: '401 Unauthorized' });
const notFound = (what = 'Not found') => reply(404, { message: `404 ${what}` });
const routeNotFound = () => reply(404, { error: '404 Not Found' });
const missingParams = (names: string[]) => reply(400, { error: names.map((n) => `${n} is missing`).join(', ') });

/** A rate-limit fault, as GitLab's Rack::Attack answers it. */
export function gitlabRateLimited(fault: ArmedFault): Reply {
  const after = fault.spec.kind === 'rate-limit' ? (fault.spec.retryAfterSeconds ?? 60) : 60;
  const reset = Math.floor(Date.now() / 1000) + after;
  return textReply(429, 'Retry later\n', 'text/plain', {
    'retry-after': String(after),
    'ratelimit-name': 'throttle_authenticated_api',
    'ratelimit-limit': '2000',
    'ratelimit-observed': '2001',
    'ratelimit-remaining': '0',
    'ratelimit-reset': String(reset),
    'ratelimit-resettime': new Date(reset * 1000).toUTCString(),
  });
}

export function gitlabHeaders(): Record<string, string> {
  return { 'x-request-id': randomBytes(13).toString('hex').toUpperCase(), 'x-gitlab-meta': '{"correlation_id":"fake","version":"1"}', 'cache-control': 'max-age=0, private, must-revalidate' };
}

/** The user a request authenticates as: `PRIVATE-TOKEN: X` or `Authorization: Bearer X`. */
export function gitlabUser(state: ForgeState, headers: IncomingHttpHeaders): UserRecord | null {
  const pt = headers['private-token'];
  const token = typeof pt === 'string' && pt !== '' ? pt : (/^bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? '')?.[1] ?? null);
  return token === null ? null : (state.userByToken(token) ?? null);
}

// ------------------------------------------------------------ wire shapes

function userJson(origin: string, u: UserRecord): Record<string, unknown> {
  return { id: u.id, username: u.login, name: u.name, state: 'active', locked: false, avatar_url: `${origin}/uploads/-/system/user/avatar/${u.id}/avatar.png`, web_url: `${origin}/${u.login}` };
}

function projectJson(state: ForgeState, repo: RepoRecord): Record<string, unknown> {
  const origin = state.origin;
  const full = `${repo.owner}/${repo.name}`;
  return {
    id: repo.id,
    description: null,
    name: repo.name,
    name_with_namespace: `${repo.owner} / ${repo.name}`,
    path: repo.name,
    path_with_namespace: full,
    created_at: repo.createdAt,
    default_branch: repo.defaultBranch,
    ssh_url_to_repo: `git@127.0.0.1:${full}.git`,
    http_url_to_repo: `${origin}/${full}.git`,
    web_url: `${origin}/${full}`,
    visibility: repo.private ? 'private' : 'public',
    namespace: { id: repo.id * 100, name: repo.owner, path: repo.owner, kind: 'group', full_path: repo.owner, parent_id: null, web_url: `${origin}/groups/${repo.owner}` },
    archived: false,
    merge_requests_enabled: true,
    issues_enabled: true,
    merge_method: 'merge',
    merge_requests_author_approval: !repo.preventAuthorApproval,
    _links: {
      self: `${origin}/api/v4/projects/${repo.id}`,
      merge_requests: `${origin}/api/v4/projects/${repo.id}/merge_requests`,
      repo_branches: `${origin}/api/v4/projects/${repo.id}/repository/branches`,
    },
  };
}

function mrState(p: PullRecord): string {
  return p.state === 'open' ? 'opened' : p.state;
}

async function diffRefs(state: ForgeState, repo: RepoRecord, pull: PullRecord): Promise<DiffRefs> {
  const s = await state.shas(repo, pull);
  return { base_sha: s.mergeBase, start_sha: s.baseTip, head_sha: s.head };
}

async function mrJson(state: ForgeState, repo: RepoRecord, pull: PullRecord, full: boolean): Promise<Record<string, unknown>> {
  const origin = state.origin;
  const ref = `!${pull.number}`;
  const conflicts = pull.state === 'open' && (await state.hasConflicts(repo, pull));
  const detailed = await detailedMergeStatus(state, repo, pull);
  const mergedBy = pull.mergedById === null ? null : userJson(origin, state.user(pull.mergedById));
  const out: Record<string, unknown> = {
    id: pull.id,
    iid: pull.number,
    project_id: repo.id,
    title: pull.title,
    description: pull.body,
    state: mrState(pull),
    created_at: pull.createdAt,
    updated_at: pull.updatedAt,
    merged_by: mergedBy,
    merge_user: mergedBy,
    merged_at: pull.state === 'merged' ? pull.closedAt : null,
    closed_by: null,
    closed_at: pull.state === 'closed' ? pull.closedAt : null,
    target_branch: pull.base,
    source_branch: pull.head,
    user_notes_count: pull.notes.length,
    upvotes: 0,
    downvotes: 0,
    author: userJson(origin, state.user(pull.authorId)),
    assignees: [],
    assignee: null,
    reviewers: [],
    source_project_id: repo.id,
    target_project_id: repo.id,
    labels: [],
    draft: pull.draft,
    work_in_progress: pull.draft,
    milestone: null,
    merge_when_pipeline_succeeds: false,
    merge_status: conflicts ? 'cannot_be_merged' : 'can_be_merged',
    detailed_merge_status: detailed,
    sha: pull.headSha,
    merge_commit_sha: pull.mergeCommitSha,
    squash_commit_sha: null,
    discussion_locked: null,
    should_remove_source_branch: null,
    force_remove_source_branch: false,
    prepared_at: pull.createdAt,
    reference: ref,
    references: { short: ref, relative: ref, full: `${repo.owner}/${repo.name}${ref}` },
    web_url: `${origin}/${repo.owner}/${repo.name}/-/merge_requests/${pull.number}`,
    time_stats: { time_estimate: 0, total_time_spent: 0, human_time_estimate: null, human_total_time_spent: null },
    squash: false,
    squash_on_merge: false,
    task_completion_status: { count: 0, completed_count: 0 },
    has_conflicts: conflicts,
    blocking_discussions_resolved: true,
  };
  if (full) {
    const d = await state.diff(repo, pull);
    out['subscribed'] = true;
    out['changes_count'] = String(d.files.length);
    out['latest_build_started_at'] = null;
    out['latest_build_finished_at'] = null;
    out['first_deployed_to_production_at'] = null;
    const head = state.headPipeline(repo, pull);
    out['pipeline'] = head === null ? null : pipelineJson(state, repo, head);
    out['head_pipeline'] = head === null ? null : pipelineJson(state, repo, head);
    out['diff_refs'] = await diffRefs(state, repo, pull);
    out['merge_error'] = null;
    out['first_contribution'] = false;
    out['user'] = { can_merge: true };
  }
  return out;
}

export function noteJson(state: ForgeState, repo: RepoRecord, pull: PullRecord, n: NoteRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: n.id,
    type: n.type,
    body: n.body,
    attachment: null,
    author: userJson(state.origin, state.user(n.authorId)),
    created_at: n.createdAt,
    updated_at: n.createdAt,
    system: n.system === true,
    noteable_id: pull.id,
    noteable_type: 'MergeRequest',
    project_id: repo.id,
    commit_id: null,
    resolvable: n.type !== null,
    confidential: false,
    internal: false,
    imported: false,
    imported_from: 'none',
    noteable_iid: pull.number,
    commands_changes: {},
  };
  if (n.type !== null) {
    out['resolved'] = false;
    out['resolved_by'] = null;
    out['resolved_at'] = null;
  }
  if (n.position !== null) {
    out['position'] = n.position;
    out['line_code'] = n.lineCode;
  }
  return out;
}

export function discussionsOf(state: ForgeState, repo: RepoRecord, pull: PullRecord): Record<string, unknown>[] {
  const byId = new Map<string, NoteRecord[]>();
  for (const n of [...pull.notes].sort((a, b) => a.id - b.id)) {
    if (n.system === true) continue;
    const list = byId.get(n.discussionId) ?? [];
    list.push(n);
    byId.set(n.discussionId, list);
  }
  return [...byId.entries()].map(([id, notes]) => ({ id, individual_note: notes[0]?.individual ?? false, notes: notes.map((n) => noteJson(state, repo, pull, n)) }));
}

export function draftNoteJson(pull: PullRecord, d: DraftNoteRecord): Record<string, unknown> {
  return {
    id: d.id,
    author_id: d.authorId,
    merge_request_id: pull.id,
    resolve_discussion: d.resolveDiscussion,
    discussion_id: d.inReplyToDiscussionId,
    note: d.note,
    commit_id: d.commitId,
    line_code: d.lineCode,
    position: d.position,
  };
}

export function approvalsJson(state: ForgeState, repo: RepoRecord, pull: PullRecord, viewer: UserRecord | null): Record<string, unknown> {
  const left = approvalsLeft(repo, pull);
  const approved = repo.approvalsRequired > 0 ? left === 0 : pull.approvals.length > 0;
  const userHas = viewer !== null && pull.approvals.some((a) => a.userId === viewer.id);
  return {
    id: pull.id,
    iid: pull.number,
    project_id: repo.id,
    title: pull.title,
    description: pull.body,
    state: mrState(pull),
    created_at: pull.createdAt,
    updated_at: pull.updatedAt,
    merge_status: 'can_be_merged',
    approved,
    approvals_required: repo.approvalsRequired,
    approvals_left: left,
    require_password_to_approve: false,
    approved_by: pull.approvals.map((a) => ({ user: userJson(state.origin, state.user(a.userId)) })),
    suggested_approvers: [],
    approvers: [],
    approver_groups: [],
    user_has_approved: userHas,
    user_can_approve: viewer !== null && !userHas && !(repo.preventAuthorApproval && viewer.id === pull.authorId),
    approval_rules_left: [],
    has_approval_rules: false,
    merge_request_approvers_available: false,
    multiple_approval_rules_available: false,
    invalid_approvers_rules: [],
  };
}

function issueJson(state: ForgeState, repo: RepoRecord, i: IssueRecord): Record<string, unknown> {
  const ref = `#${i.number}`;
  return {
    id: i.id,
    iid: i.number,
    project_id: repo.id,
    title: i.title,
    description: i.body,
    state: i.state === 'open' ? 'opened' : 'closed',
    created_at: i.createdAt,
    updated_at: i.createdAt,
    closed_at: null,
    closed_by: null,
    labels: [],
    milestone: null,
    assignees: [],
    author: userJson(state.origin, state.user(i.authorId)),
    type: 'ISSUE',
    assignee: null,
    user_notes_count: i.comments.length,
    web_url: `${state.origin}/${repo.owner}/${repo.name}/-/issues/${i.number}`,
    references: { short: ref, relative: ref, full: `${repo.owner}/${repo.name}${ref}` },
    confidential: false,
  };
}

function diffJson(f: DiffFile): Record<string, unknown> {
  const p = gitlabPaths(f);
  const body = f.binary ? '' : f.hunks.length === 0 ? '' : `${f.patch}\n`;
  return {
    old_path: p.oldPath,
    new_path: p.newPath,
    a_mode: f.status === 'added' ? '0' : f.oldMode,
    b_mode: f.status === 'removed' ? '0' : f.newMode,
    diff: body,
    new_file: f.status === 'added',
    renamed_file: f.status === 'renamed',
    deleted_file: f.status === 'removed',
    generated_file: false,
  };
}

// ------------------------------------------------------------ routing

function paged(ctx: ApiContext, all: readonly unknown[]): Reply {
  const p = paginate(all, ctx.query, 20, 100);
  const headers: Record<string, string> = {
    'x-page': String(p.page),
    'x-per-page': String(p.perPage),
    'x-next-page': p.page < p.totalPages ? String(p.page + 1) : '',
    'x-prev-page': p.page > 1 ? String(p.page - 1) : '',
    'x-total': String(p.total),
    'x-total-pages': String(p.totalPages),
  };
  headers['link'] = linkHeader(ctx.origin, ctx.pathname, ctx.query, p, ['prev', 'next', 'first', 'last']);
  return reply(200, p.items, headers);
}

/** The project an `:id` segment names: a numeric id or a URL-encoded `owner/name`. */
function projectOf(state: ForgeState, id: string): RepoRecord | undefined {
  const repo = /^\d+$/.test(id)
    ? state.repoById(Number(id))
    : (() => {
        const at = id.lastIndexOf('/');
        return at <= 0 ? undefined : state.repo(id.slice(0, at), id.slice(at + 1));
      })();
  return repo?.provider === 'gitlab' ? repo : undefined;
}

async function params(ctx: ApiContext): Promise<{ params: Params } | { reply: Reply }> {
  try {
    return { params: await gitlabParams(ctx.raw, ctx.headers['content-type'], ctx.query) };
  } catch (e) {
    return { reply: reply(400, { error: e instanceof BodyError ? e.message : 'The request body is invalid' }) };
  }
}

const strOf = (v: unknown): string | undefined => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined);

export async function handleGitlab(ctx: ApiContext, user: UserRecord): Promise<Reply> {
  const { method, segments: s, state } = ctx;
  ctx.setUser(user.login);
  if (s.length === 1 && s[0] === 'user' && method === 'GET') return reply(200, { ...userJson(ctx.origin, user), email: user.email, created_at: user.createdAt, bot: false, is_admin: false });
  if (s[0] !== 'projects' || s.length < 2) return routeNotFound();
  const repo = projectOf(state, s[1] as string);
  if (repo === undefined) return notFound('Project Not Found');
  await state.sync(repo);
  if (s.length === 2) return method === 'GET' ? reply(200, projectJson(state, repo)) : routeNotFound();
  if (s[2] === 'issues' && s.length === 4 && method === 'GET') {
    const iid = intOf(s[3]);
    const issue = iid === null ? undefined : repo.issues.get(iid);
    return issue === undefined ? notFound() : reply(200, issueJson(state, repo, issue));
  }
  if (s[2] === 'pipelines' && (s.length === 4 || s.length === 5)) return pipelineRoute(ctx, repo, s[3], s[4]);
  if (s[2] !== 'merge_requests') return routeNotFound();
  if (s.length === 3) {
    if (method === 'GET') return listMrs(ctx, repo);
    if (method === 'POST') return createMr(ctx, repo, user);
    return routeNotFound();
  }
  const iid = /^\d+$/.test(s[3] as string) ? Number(s[3]) : null;
  const pull = iid === null ? undefined : repo.pulls.get(iid);
  if (pull === undefined) return notFound();
  const sub = s[4];
  if (s.length === 4) {
    if (method === 'GET') return reply(200, await mrJson(state, repo, pull, true));
    if (method === 'PUT') return updateMr(ctx, repo, pull);
    return routeNotFound();
  }
  if ((sub === 'diffs' || sub === 'changes') && s.length === 5 && method === 'GET') {
    const d = await state.diff(repo, pull);
    if (sub === 'diffs') return paged(ctx, d.files.map(diffJson));
    return reply(200, { ...(await mrJson(state, repo, pull, true)), changes: d.files.map(diffJson), overflow: false });
  }
  if (sub === 'commits' && s.length === 5 && method === 'GET') {
    const sh = await state.shas(repo, pull);
    const commits = (await listCommits(repo.dir, sh.mergeBase, sh.head)).reverse();
    return paged(
      ctx,
      commits.map((c) => ({
        id: c.sha,
        short_id: c.sha.slice(0, 8),
        title: c.message.split('\n')[0] ?? '',
        message: c.message,
        author_name: c.authorName,
        author_email: c.authorEmail,
        authored_date: c.authorDate,
        committer_name: c.committerName,
        committer_email: c.committerEmail,
        committed_date: c.committerDate,
        created_at: c.committerDate,
        parent_ids: c.parents,
        web_url: `${ctx.origin}/${repo.owner}/${repo.name}/-/commit/${c.sha}`,
      })),
    );
  }
  if (sub === 'notes' && s.length === 5) {
    if (method === 'GET') {
      const asc = ctx.query.get('sort') === 'asc';
      const notes = [...pull.notes].sort((a, b) => (asc ? a.id - b.id : b.id - a.id));
      return paged(
        ctx,
        notes.map((n) => noteJson(state, repo, pull, n)),
      );
    }
    if (method === 'POST') {
      const p = await params(ctx);
      if ('reply' in p) return p.reply;
      const body = strOf(p.params['body']);
      if (body === undefined) return missingParams(['body']);
      if (body.trim() === '') return reply(400, { message: `400 Bad request - Note {:note=>["can't be blank"]}` });
      const note: NoteRecord = { id: state.id(), discussionId: discussionId(), individual: true, type: null, body, authorId: user.id, createdAt: nowIso(), position: null, lineCode: null };
      pull.notes.push(note);
      pull.updatedAt = nowIso();
      return reply(201, noteJson(state, repo, pull, note));
    }
    return routeNotFound();
  }
  if ((sub === 'pipelines' || sub === 'versions') && s.length === 5) return mrListRoute(ctx, repo, pull, sub);
  if (sub === 'merge' && s.length === 5 && method === 'PUT') return acceptRoute(ctx, repo, pull, user, () => mrJson(state, repo, pull, true));
  if (sub === 'discussions') return discussions(ctx, repo, pull, user);
  if (sub === 'draft_notes') return draftNotes(ctx, repo, pull, user);
  if (sub === 'approve' && s.length === 5 && method === 'POST') return approve(ctx, repo, pull, user);
  if (sub === 'unapprove' && s.length === 5 && method === 'POST') {
    const at = pull.approvals.findIndex((a) => a.userId === user.id);
    if (at < 0) return notFound();
    pull.approvals.splice(at, 1);
    systemNote(state, pull, user, 'unapproved this merge request');
    return reply(201, approvalsJson(state, repo, pull, user));
  }
  if (sub === 'approvals' && s.length === 5 && method === 'GET') return reply(200, approvalsJson(state, repo, pull, user));
  return routeNotFound();
}

function discussionId(): string {
  return randomBytes(20).toString('hex');
}

// ------------------------------------------------------------ merge requests

async function listMrs(ctx: ApiContext, repo: RepoRecord): Promise<Reply> {
  const q = ctx.query;
  const st = q.get('state') ?? 'all';
  if (!['opened', 'closed', 'locked', 'merged', 'all'].includes(st)) return reply(400, { error: 'state does not have a valid value' });
  let pulls = [...repo.pulls.values()].filter((p) => st === 'all' || mrState(p) === st);
  const source = q.get('source_branch');
  if (source !== null) pulls = pulls.filter((p) => p.head === source);
  const target = q.get('target_branch');
  if (target !== null) pulls = pulls.filter((p) => p.base === target);
  const author = q.get('author_username');
  if (author !== null) pulls = pulls.filter((p) => ctx.state.user(p.authorId).login === author);
  const orderBy = q.get('order_by') ?? 'created_at';
  const key = (p: PullRecord) => (orderBy === 'updated_at' ? `${p.updatedAt}|${String(p.id).padStart(12, '0')}` : String(p.id).padStart(12, '0'));
  pulls.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  if ((q.get('sort') ?? 'desc') === 'desc') pulls.reverse();
  const all = await Promise.all(pulls.map((p) => mrJson(ctx.state, repo, p, false)));
  return paged(ctx, all);
}

function openDuplicate(repo: RepoRecord, head: string, base: string, except: PullRecord | null): PullRecord | undefined {
  return [...repo.pulls.values()].find((p) => p !== except && p.state === 'open' && p.head === head && p.base === base);
}

async function createMr(ctx: ApiContext, repo: RepoRecord, user: UserRecord): Promise<Reply> {
  const p = await params(ctx);
  if ('reply' in p) return p.reply;
  const b = p.params;
  const absent = ['source_branch', 'target_branch', 'title'].filter((k) => strOf(b[k]) === undefined);
  if (absent.length > 0) return missingParams(absent);
  const source = strOf(b['source_branch']) as string;
  const target = strOf(b['target_branch']) as string;
  const title = strOf(b['title']) as string;
  if (title.trim() === '') return reply(400, { message: { title: ["can't be blank"] } });
  if (source === target) return reply(422, { message: ["You can't use same project/branch for source and target"] });
  if ((await ctx.state.branchTip(repo, source)) === null) return reply(400, { message: { source_branch: [`Source branch "${source}" does not exist`] } });
  if ((await ctx.state.branchTip(repo, target)) === null) return reply(400, { message: { target_branch: [`Target branch "${target}" does not exist`] } });
  const dup = openDuplicate(repo, source, target, null);
  if (dup !== undefined) return reply(409, { message: [`Another open merge request already exists for this source branch: !${dup.number}`] });
  const draft = /^\s*(\[draft\]|\(draft\)|draft:|draft\s-\s|draft\s)/i.test(title) || b['draft'] === true || b['draft'] === 'true';
  const pull = await ctx.state.openPull(repo, { authorId: user.id, head: source, base: target, title, body: strOf(b['description']) ?? '', draft });
  return reply(201, await mrJson(ctx.state, repo, pull, true));
}

async function updateMr(ctx: ApiContext, repo: RepoRecord, pull: PullRecord): Promise<Reply> {
  const p = await params(ctx);
  if ('reply' in p) return p.reply;
  const b = p.params;
  const keys = ['title', 'description', 'state_event', 'target_branch', 'draft'];
  if (!keys.some((k) => b[k] !== undefined)) return reply(400, { error: `${keys.join(', ')} are missing, at least one parameter must be provided` });
  const ev = strOf(b['state_event']);
  if (ev !== undefined && ev !== 'close' && ev !== 'reopen') return reply(400, { error: 'state_event does not have a valid value' });
  const target = strOf(b['target_branch']) ?? pull.base;
  let baseSha = pull.baseSha;
  if (target !== pull.base) {
    const tip = await ctx.state.branchTip(repo, target);
    if (tip === null) return reply(400, { message: { target_branch: [`Target branch "${target}" does not exist`] } });
    if (target === pull.head) return reply(422, { message: ["You can't use same project/branch for source and target"] });
    baseSha = tip;
  }
  const willBeOpen = ev === 'reopen' ? pull.state !== 'merged' : pull.state === 'open' && ev !== 'close';
  if (willBeOpen) {
    const dup = openDuplicate(repo, pull.head, target, pull);
    if (dup !== undefined) return reply(409, { message: [`Another open merge request already exists for this source branch: !${dup.number}`] });
  }
  const title = strOf(b['title']);
  if (title !== undefined) pull.title = title;
  const description = strOf(b['description']);
  if (description !== undefined) pull.body = description;
  if (b['draft'] !== undefined) pull.draft = b['draft'] === true || b['draft'] === 'true';
  pull.base = target;
  pull.baseSha = baseSha;
  if (ev === 'close' && pull.state === 'open') {
    pull.state = 'closed';
    pull.closedAt = nowIso();
  }
  if (ev === 'reopen' && pull.state === 'closed') {
    pull.state = 'open';
    pull.closedAt = null;
  }
  pull.updatedAt = nowIso();
  await ctx.state.sync(repo);
  return reply(200, await mrJson(ctx.state, repo, pull, true));
}

// ------------------------------------------------------------ discussions and draft notes

async function discussions(ctx: ApiContext, repo: RepoRecord, pull: PullRecord, user: UserRecord): Promise<Reply> {
  const { method, segments: s, state } = ctx;
  if (s.length === 5) {
    if (method === 'GET') return paged(ctx, discussionsOf(state, repo, pull));
    if (method !== 'POST') return routeNotFound();
    const p = await params(ctx);
    if ('reply' in p) return p.reply;
    const body = strOf(p.params['body']);
    if (body === undefined) return missingParams(['body']);
    if (body.trim() === '') return reply(400, { message: `400 Bad request - Note {:note=>["can't be blank"]}` });
    let position: NoteRecord['position'] = null;
    let lineCode: string | null = null;
    if (p.params['position'] !== undefined) {
      const check = checkPosition(p.params['position'], await diffRefs(state, repo, pull), await state.diff(repo, pull));
      if (!check.ok) return check.reply;
      position = check.position;
      lineCode = check.lineCode;
    }
    const note: NoteRecord = {
      id: state.id(),
      discussionId: discussionId(),
      individual: false,
      type: position === null ? 'DiscussionNote' : 'DiffNote',
      body,
      authorId: user.id,
      createdAt: nowIso(),
      position,
      lineCode,
    };
    pull.notes.push(note);
    pull.updatedAt = nowIso();
    return reply(201, { id: note.discussionId, individual_note: false, notes: [noteJson(state, repo, pull, note)] });
  }
  const id = s[5] as string;
  const found = discussionsOf(state, repo, pull).find((d) => d.id === id);
  if (found === undefined) return notFound();
  if (s.length === 6 && method === 'GET') return reply(200, found);
  if (s.length === 7 && s[6] === 'notes' && method === 'POST') {
    const p = await params(ctx);
    if ('reply' in p) return p.reply;
    const body = strOf(p.params['body']);
    if (body === undefined) return missingParams(['body']);
    if (body.trim() === '') return reply(400, { message: `400 Bad request - Note {:note=>["can't be blank"]}` });
    const first = pull.notes.find((n) => n.discussionId === id) as NoteRecord;
    if (first.individual) return reply(400, { message: '400 Bad request - Note {:base=>["Discussion to reply to cannot be found"]}' });
    const note: NoteRecord = { ...first, id: state.id(), body, authorId: user.id, createdAt: nowIso() };
    pull.notes.push(note);
    return reply(201, noteJson(state, repo, pull, note));
  }
  return routeNotFound();
}

async function draftNotes(ctx: ApiContext, repo: RepoRecord, pull: PullRecord, user: UserRecord): Promise<Reply> {
  const { method, segments: s, state } = ctx;
  const mine = () => pull.draftNotes.filter((d) => d.authorId === user.id);
  if (s.length === 5) {
    if (method === 'GET')
      return paged(
        ctx,
        mine().map((d) => draftNoteJson(pull, d)),
      );
    if (method !== 'POST') return routeNotFound();
    const p = await params(ctx);
    if ('reply' in p) return p.reply;
    const note = strOf(p.params['note']);
    if (note === undefined) return missingParams(['note']);
    const reply_to = strOf(p.params['in_reply_to_discussion_id']) ?? null;
    if (reply_to !== null && !pull.notes.some((n) => n.discussionId === reply_to && !n.individual)) return notFound();
    let position: DraftNoteRecord['position'] = null;
    let lineCode: string | null = null;
    if (p.params['position'] !== undefined && reply_to === null) {
      const check = checkPosition(p.params['position'], await diffRefs(state, repo, pull), await state.diff(repo, pull));
      if (!check.ok) return check.reply;
      position = check.position;
      lineCode = check.lineCode;
    }
    const draft: DraftNoteRecord = {
      id: state.id(),
      authorId: user.id,
      note,
      position,
      lineCode,
      inReplyToDiscussionId: reply_to,
      commitId: strOf(p.params['commit_id']) ?? null,
      resolveDiscussion: p.params['resolve_discussion'] === true || p.params['resolve_discussion'] === 'true',
    };
    pull.draftNotes.push(draft);
    return reply(201, draftNoteJson(pull, draft));
  }
  if (s.length === 6 && s[5] === 'bulk_publish' && method === 'POST') return publish(ctx, repo, pull, mine());
  const id = intOf(s[5]);
  const draft = mine().find((d) => d.id === id);
  if (draft === undefined) return notFound();
  if (s.length === 6 && method === 'GET') return reply(200, draftNoteJson(pull, draft));
  if (s.length === 6 && method === 'DELETE') {
    pull.draftNotes = pull.draftNotes.filter((d) => d !== draft);
    return noContent();
  }
  if (s.length === 7 && s[6] === 'publish' && method === 'PUT') return publish(ctx, repo, pull, [draft]);
  return routeNotFound();
}

/** Publishes drafts atomically: every position is re-checked first; then every note is created. */
async function publish(ctx: ApiContext, repo: RepoRecord, pull: PullRecord, drafts: DraftNoteRecord[]): Promise<Reply> {
  const { state } = ctx;
  const refs = await diffRefs(state, repo, pull);
  const diff = await state.diff(repo, pull);
  for (const d of drafts) {
    if (d.position === null) continue;
    const check = checkPosition(d.position, refs, diff);
    if (!check.ok) return check.reply;
  }
  const at = nowIso();
  for (const d of drafts) {
    const note: NoteRecord = {
      id: state.id(),
      discussionId: d.inReplyToDiscussionId ?? discussionId(),
      individual: false,
      type: d.position !== null ? 'DiffNote' : 'DiscussionNote',
      body: d.note,
      authorId: d.authorId,
      createdAt: at,
      position: d.position,
      lineCode: d.lineCode,
    };
    if (d.inReplyToDiscussionId !== null) {
      const first = pull.notes.find((n) => n.discussionId === d.inReplyToDiscussionId);
      if (first !== undefined) {
        note.type = first.type;
        note.position = first.position;
        note.lineCode = first.lineCode;
      }
    }
    pull.notes.push(note);
  }
  pull.draftNotes = pull.draftNotes.filter((d) => !drafts.includes(d));
  pull.updatedAt = at;
  return noContent();
}

// ------------------------------------------------------------ approvals

async function approve(ctx: ApiContext, repo: RepoRecord, pull: PullRecord, user: UserRecord): Promise<Reply> {
  const p = await params(ctx);
  if ('reply' in p) return p.reply;
  const sha = strOf(p.params['sha']);
  if (sha !== undefined && sha !== pull.headSha) return reply(409, { message: `SHA does not match HEAD of source branch: ${pull.headSha}` });
  if (repo.preventAuthorApproval && pull.authorId === user.id) return gitlabUnauthorized();
  if (pull.approvals.some((a) => a.userId === user.id)) return gitlabUnauthorized();
  if (pull.state !== 'open') return gitlabUnauthorized();
  const at = systemNote(ctx.state, pull, user, 'approved this merge request');
  pull.approvals.push({ userId: user.id, at, headSha: pull.headSha });
  return reply(201, approvalsJson(ctx.state, repo, pull, user));
}

/** A system note, as GitLab writes one for an approval (its time, to the millisecond, orders it against the diff versions). */
function systemNote(state: ForgeState, pull: PullRecord, user: UserRecord, body: string): string {
  const at = preciseNow();
  pull.notes.push({ id: state.id(), system: true, discussionId: discussionId(), individual: true, type: null, body, authorId: user.id, createdAt: at, position: null, lineCode: null });
  return at;
}

export { mrJson as gitlabMrJson };
