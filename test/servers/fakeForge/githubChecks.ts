import { resolveCommit } from './git';
import { githubError, githubUserJson, type ApiContext } from './github';
import { jsonObject, linkHeader, paginate, reply, type Reply } from './http';
import { type BranchProtectionRecord, type CheckRunRecord, type CommitStatusRecord, type ForgeState, type PullRecord, type RepoRecord, type ReviewRecord, type UserRecord } from './state';

/**
 * GitHub's merge surface on the fake forge: check runs and commit statuses of a commit, branch
 * protection's required reviews, compare, requested reviewers, the pull request's mergeability
 * (`mergeable`, `mergeable_state`) and `PUT …/pulls/{n}/merge` with its 405 and 409 refusals. See
 * README.md.
 */

const DOCS = 'https://docs.github.com/rest';
const DOC = {
  merge: `${DOCS}/pulls/pulls#merge-a-pull-request`,
  checkRuns: `${DOCS}/checks/runs#list-check-runs-for-a-git-reference`,
  status: `${DOCS}/commits/statuses#get-the-combined-status-for-a-specific-reference`,
  protection: `${DOCS}/branches/branch-protection#get-pull-request-review-protection`,
  reviewers: `${DOCS}/pulls/review-requests#request-reviewers-for-a-pull-request`,
};

export const MERGE_METHODS = ['merge', 'squash', 'rebase'] as const;

// ------------------------------------------------------------ what holds at a commit

/** The newest check run per name at `sha` (GitHub's `filter=latest`). */
export function latestCheckRuns(repo: RepoRecord, sha: string): CheckRunRecord[] {
  const byName = new Map<string, CheckRunRecord>();
  for (const run of repo.checkRuns) if (run.headSha === sha) byName.set(run.name, run);
  return [...byName.values()];
}

/** The newest status per context at `sha`, newest first. */
export function latestStatuses(repo: RepoRecord, sha: string): CommitStatusRecord[] {
  const byContext = new Map<string, CommitStatusRecord>();
  for (const st of repo.statuses) if (st.sha === sha) byContext.set(st.context, st);
  return [...byContext.values()].sort((a, b) => b.id - a.id);
}

/** Each reviewer's latest review that decides (APPROVED, CHANGES_REQUESTED, DISMISSED); comments do not. */
export function decidingReviews(pull: PullRecord): Map<number, ReviewRecord> {
  const out = new Map<number, ReviewRecord>();
  for (const r of pull.reviews) if (r.state === 'APPROVED' || r.state === 'CHANGES_REQUESTED' || r.state === 'DISMISSED') out.set(r.userId, r);
  return out;
}

/** What a required context says at the head: success, pending, failing or absent. */
function contextState(repo: RepoRecord, sha: string, context: string): 'success' | 'pending' | 'failing' | 'expected' {
  const run = latestCheckRuns(repo, sha).find((r) => r.name === context);
  const st = latestStatuses(repo, sha).find((x) => x.context === context);
  if (!run && !st) return 'expected';
  if (run) {
    if (run.status !== 'completed') return 'pending';
    if (!['success', 'neutral', 'skipped'].includes(run.conclusion ?? '')) return 'failing';
  }
  if (st) {
    if (st.state === 'pending') return 'pending';
    if (st.state !== 'success') return 'failing';
  }
  return 'success';
}

export interface Mergeability {
  mergeable: boolean | null;
  /** clean, dirty, blocked, behind, unstable, draft, unknown. */
  mergeableState: string;
  /** Why a merge would be refused now (GitHub's 405 words), or null. */
  refusal: string | null;
}

/** Whether GitHub would merge the pull request now, and the words it refuses with. */
export async function mergeability(state: ForgeState, repo: RepoRecord, pull: PullRecord): Promise<Mergeability> {
  if (pull.state !== 'open') return { mergeable: null, mergeableState: 'unknown', refusal: 'Pull Request is not mergeable' };
  if (pull.mergeableComputing) return { mergeable: null, mergeableState: 'unknown', refusal: 'Pull Request is not mergeable' };
  if (await state.hasConflicts(repo, pull)) return { mergeable: false, mergeableState: 'dirty', refusal: 'Pull Request is not mergeable' };
  if (pull.draft) return { mergeable: true, mergeableState: 'draft', refusal: 'Pull Request is still a draft' };
  const protection = repo.protections.get(pull.base);
  if (protection) {
    const blocked = await protectionRefusal(state, repo, pull, protection);
    if (blocked !== null) return { mergeable: true, mergeableState: blocked.behind ? 'behind' : 'blocked', refusal: blocked.words };
  }
  const head = pull.headSha;
  const unstable =
    latestCheckRuns(repo, head).some((r) => r.status !== 'completed' || !['success', 'neutral', 'skipped'].includes(r.conclusion ?? '')) ||
    latestStatuses(repo, head).some((s) => s.state !== 'success');
  return { mergeable: true, mergeableState: unstable ? 'unstable' : 'clean', refusal: null };
}

async function protectionRefusal(state: ForgeState, repo: RepoRecord, pull: PullRecord, p: BranchProtectionRecord): Promise<{ words: string; behind: boolean } | null> {
  if (p.requiredApprovingReviewCount !== null) {
    const deciding = [...decidingReviews(pull).values()].filter((r) => r.userId !== pull.authorId);
    if (deciding.some((r) => r.state === 'CHANGES_REQUESTED')) return { words: 'Changes must be made if a reviewer requests them.', behind: false };
    const approvals = deciding.filter((r) => r.state === 'APPROVED').length;
    const n = p.requiredApprovingReviewCount;
    if (approvals < n) return { words: `At least ${n} approving review${n === 1 ? ' is' : 's are'} required by reviewers with write access.`, behind: false };
  }
  for (const context of p.requiredStatusChecks ?? []) {
    const st = contextState(repo, pull.headSha, context);
    if (st === 'expected') return { words: `Required status check "${context}" is expected.`, behind: false };
    if (st === 'pending') return { words: `Required status check "${context}" is in progress.`, behind: false };
    if (st === 'failing') return { words: `Required status check "${context}" is failing.`, behind: false };
  }
  if (p.strict && (p.requiredStatusChecks?.length ?? 0) > 0 && (await state.aheadBehind(repo, pull.baseSha, pull.headSha)).behind > 0)
    return { words: 'Head branch is not up to date with the base branch', behind: true };
  return null;
}

// ------------------------------------------------------------ wire shapes

function checkRunJson(ctx: ApiContext, repo: RepoRecord, run: CheckRunRecord): Record<string, unknown> {
  const api = `${ctx.origin}/api/v3/repos/${repo.owner}/${repo.name}`;
  const html = `${ctx.origin}/${repo.owner}/${repo.name}/runs/${run.id}`;
  return {
    id: run.id,
    name: run.name,
    node_id: Buffer.from(`08:CheckRun${run.id}`).toString('base64'),
    head_sha: run.headSha,
    external_id: '',
    url: `${api}/check-runs/${run.id}`,
    html_url: html,
    details_url: html,
    status: run.status,
    conclusion: run.conclusion,
    started_at: run.startedAt,
    completed_at: run.completedAt,
    output: { title: run.title, summary: run.summary, text: null, annotations_count: 0, annotations_url: `${api}/check-runs/${run.id}/annotations` },
    check_suite: { id: run.id },
    app: { id: 1, slug: 'fake-ci', name: 'Fake CI' },
    pull_requests: [],
  };
}

function statusJson(ctx: ApiContext, repo: RepoRecord, st: CommitStatusRecord): Record<string, unknown> {
  return {
    url: `${ctx.origin}/api/v3/repos/${repo.owner}/${repo.name}/statuses/${st.sha}`,
    avatar_url: null,
    id: st.id,
    node_id: Buffer.from(`012:StatusContext${st.id}`).toString('base64'),
    state: st.state,
    description: st.description,
    target_url: st.targetUrl,
    context: st.context,
    created_at: st.createdAt,
    updated_at: st.createdAt,
  };
}

function protectionReviewsJson(ctx: ApiContext, repo: RepoRecord, branch: string, p: BranchProtectionRecord): Record<string, unknown> {
  return {
    url: `${ctx.origin}/api/v3/repos/${repo.owner}/${repo.name}/branches/${encodeURIComponent(branch)}/protection/required_pull_request_reviews`,
    dismiss_stale_reviews: p.dismissStaleReviews,
    require_code_owner_reviews: false,
    required_approving_review_count: p.requiredApprovingReviewCount,
    require_last_push_approval: false,
  };
}

function pageHeaders(ctx: ApiContext, p: ReturnType<typeof paginate>): Record<string, string> {
  if (p.totalPages <= 1) return {};
  const rels: ('first' | 'prev' | 'next' | 'last')[] = p.page === 1 ? ['next', 'last'] : p.page >= p.totalPages ? ['prev', 'first'] : ['prev', 'next', 'last', 'first'];
  return { link: linkHeader(ctx.origin, ctx.pathname, ctx.query, p, rels) };
}

// ------------------------------------------------------------ routes

/** `GET /repos/{o}/{r}/commits/{ref}/check-runs` and `…/status` (combined) and `…/statuses`. */
export async function commitRoute(ctx: ApiContext, repo: RepoRecord, ref: string, what: string): Promise<Reply> {
  if (ctx.method !== 'GET') return githubError(404, 'Not Found');
  const sha = await resolveCommit(repo.dir, ref);
  if (sha === null) return githubError(422, `No commit found for SHA: ${ref}`, { documentation_url: what === 'check-runs' ? DOC.checkRuns : DOC.status });
  if (what === 'check-runs') {
    const q = ctx.query;
    let runs = q.get('filter') === 'all' ? repo.checkRuns.filter((r) => r.headSha === sha) : latestCheckRuns(repo, sha);
    const name = q.get('check_name');
    if (name !== null) runs = runs.filter((r) => r.name === name);
    const status = q.get('status');
    if (status !== null) runs = runs.filter((r) => r.status === status);
    const p = paginate(runs, q, 30, 100);
    return reply(200, { total_count: runs.length, check_runs: p.items.map((r) => checkRunJson(ctx, repo, r)) }, pageHeaders(ctx, p));
  }
  if (what === 'statuses') {
    const all = repo.statuses.filter((s) => s.sha === sha).sort((a, b) => b.id - a.id);
    const p = paginate(all, ctx.query, 30, 100);
    return reply(
      200,
      p.items.map((s) => statusJson(ctx, repo, s)),
      pageHeaders(ctx, p),
    );
  }
  const latest = latestStatuses(repo, sha);
  const combined = latest.some((s) => s.state === 'error' || s.state === 'failure') ? 'failure' : latest.length === 0 || latest.some((s) => s.state === 'pending') ? 'pending' : 'success';
  const p = paginate(latest, ctx.query, 30, 100);
  const api = `${ctx.origin}/api/v3/repos/${repo.owner}/${repo.name}`;
  return reply(
    200,
    {
      state: combined,
      statuses: p.items.map((s) => statusJson(ctx, repo, s)),
      sha,
      total_count: latest.length,
      repository: { id: repo.id, full_name: `${repo.owner}/${repo.name}` },
      commit_url: `${api}/commits/${sha}`,
      url: `${api}/commits/${sha}/status`,
    },
    pageHeaders(ctx, p),
  );
}

/** `GET /repos/{o}/{r}/branches/{b}/protection[/required_pull_request_reviews]`: admins only; 404 when none. */
export async function protectionRoute(ctx: ApiContext, repo: RepoRecord, user: UserRecord, branch: string, part: string | undefined): Promise<Reply> {
  if (ctx.method !== 'GET') return githubError(404, 'Not Found');
  if (repo.admins !== null && !repo.admins.some((a) => a.toLowerCase() === user.login.toLowerCase()))
    return githubError(403, 'Must have admin rights to Repository.', { documentation_url: DOC.protection });
  if ((await ctx.state.branchTip(repo, branch)) === null) return githubError(404, 'Branch not found', { documentation_url: DOC.protection });
  const p = repo.protections.get(branch);
  if (p === undefined) return githubError(404, 'Branch not protected', { documentation_url: DOC.protection });
  if (part === 'required_pull_request_reviews') {
    if (p.requiredApprovingReviewCount === null) return githubError(404, 'Required pull request reviews not enabled', { documentation_url: DOC.protection });
    return reply(200, protectionReviewsJson(ctx, repo, branch, p));
  }
  if (part !== undefined) return githubError(404, 'Not Found');
  const url = `${ctx.origin}/api/v3/repos/${repo.owner}/${repo.name}/branches/${encodeURIComponent(branch)}/protection`;
  const out: Record<string, unknown> = { url, enforce_admins: { url: `${url}/enforce_admins`, enabled: false } };
  if (p.requiredApprovingReviewCount !== null) out['required_pull_request_reviews'] = protectionReviewsJson(ctx, repo, branch, p);
  if (p.requiredStatusChecks !== null)
    out['required_status_checks'] = {
      url: `${url}/required_status_checks`,
      strict: p.strict,
      contexts: p.requiredStatusChecks,
      checks: p.requiredStatusChecks.map((c) => ({ context: c, app_id: null })),
    };
  return reply(200, out);
}

/** `GET /repos/{o}/{r}/compare/{base}...{head}`: status, ahead_by, behind_by, merge_base_commit, commits (no files). */
export async function compareRoute(ctx: ApiContext, repo: RepoRecord, basehead: string): Promise<Reply> {
  if (ctx.method !== 'GET') return githubError(404, 'Not Found');
  const at = basehead.indexOf('...');
  if (at <= 0) return githubError(404, 'Not Found');
  const base = await resolveCommit(repo.dir, basehead.slice(0, at));
  const head = await resolveCommit(repo.dir, basehead.slice(at + 3));
  if (base === null || head === null) return githubError(404, 'Not Found');
  const { ahead, behind } = await ctx.state.aheadBehind(repo, base, head);
  const mb = (await ctx.state.mergeBaseOf(repo, base, head)) ?? base;
  const api = `${ctx.origin}/api/v3/repos/${repo.owner}/${repo.name}`;
  return reply(200, {
    url: `${api}/compare/${basehead}`,
    html_url: `${ctx.origin}/${repo.owner}/${repo.name}/compare/${basehead}`,
    base_commit: { sha: base, url: `${api}/commits/${base}` },
    merge_base_commit: { sha: mb, url: `${api}/commits/${mb}` },
    status: ahead === 0 && behind === 0 ? 'identical' : behind === 0 ? 'ahead' : ahead === 0 ? 'behind' : 'diverged',
    ahead_by: ahead,
    behind_by: behind,
    total_commits: ahead,
    commits: [],
  });
}

/** `GET|POST /repos/{o}/{r}/pulls/{n}/requested_reviewers`. */
export function requestedReviewersRoute(ctx: ApiContext, repo: RepoRecord, pull: PullRecord, pullJson: () => Promise<Record<string, unknown>>): Promise<Reply> | Reply {
  const { state } = ctx;
  if (ctx.method === 'GET') return reply(200, { users: pull.requestedReviewerIds.map((id) => githubUserJson(ctx.origin, state.user(id))), teams: [] });
  if (ctx.method !== 'POST') return githubError(404, 'Not Found');
  let b: Record<string, unknown>;
  try {
    b = jsonObject(ctx.raw);
  } catch {
    return githubError(400, 'Problems parsing JSON');
  }
  const logins = b['reviewers'];
  if (!Array.isArray(logins) || logins.some((l) => typeof l !== 'string'))
    return githubError(422, "Invalid request.\n\nFor 'properties/reviewers', is not an array of strings.", { documentation_url: DOC.reviewers });
  const users = (logins as string[]).map((l) => state.userByLogin(l));
  if (users.some((u) => u === undefined))
    return githubError(422, `Reviews may only be requested from collaborators. One or more of the users or teams you specified is not a collaborator of the ${repo.owner}/${repo.name} repository.`, {
      documentation_url: DOC.reviewers,
    });
  if (users.some((u) => u?.id === pull.authorId)) return githubError(422, 'Review cannot be requested from pull request author.', { documentation_url: DOC.reviewers });
  for (const u of users as UserRecord[]) if (!pull.requestedReviewerIds.includes(u.id)) pull.requestedReviewerIds.push(u.id);
  return pullJson().then((json) => reply(201, json));
}

/** `PUT /repos/{o}/{r}/pulls/{n}/merge` (`sha`, `merge_method`) and `GET` (204 when merged, else 404). */
export async function mergeRoute(ctx: ApiContext, repo: RepoRecord, pull: PullRecord, user: UserRecord): Promise<Reply> {
  if (ctx.method === 'GET') return pull.state === 'merged' ? { status: 204, headers: {}, body: null } : githubError(404, 'Not Found');
  if (ctx.method !== 'PUT') return githubError(404, 'Not Found');
  let b: Record<string, unknown>;
  try {
    b = jsonObject(ctx.raw);
  } catch {
    return githubError(400, 'Problems parsing JSON');
  }
  for (const k of ['sha', 'merge_method', 'commit_title', 'commit_message'] as const)
    if (b[k] !== undefined && b[k] !== null && typeof b[k] !== 'string')
      return githubError(422, `Invalid request.\n\nFor 'properties/${k}', ${JSON.stringify(b[k])} is not a string.`, { documentation_url: DOC.merge });
  const method = (b['merge_method'] as string | undefined) ?? 'merge';
  if (!(MERGE_METHODS as readonly string[]).includes(method))
    return githubError(422, `Invalid request.\n\nFor 'properties/merge_method', ${JSON.stringify(method)} is not one of ${JSON.stringify(MERGE_METHODS)}.`, { documentation_url: DOC.merge });
  if (pull.state !== 'open') return githubError(405, 'Pull Request is not mergeable', { documentation_url: DOC.merge });
  const sha = b['sha'] as string | undefined;
  if (sha !== undefined && sha !== pull.headSha) return githubError(409, 'Head branch was modified. Review and try the merge again.', { documentation_url: DOC.merge });
  const m = await mergeability(ctx.state, repo, pull);
  if (m.refusal !== null) return githubError(405, m.refusal, { documentation_url: DOC.merge });
  const title = typeof b['commit_title'] === 'string' ? b['commit_title'] : undefined;
  const commit = await ctx.state.mergePull(
    repo,
    pull,
    method as (typeof MERGE_METHODS)[number],
    user.id,
    title === undefined ? undefined : `${title}${typeof b['commit_message'] === 'string' ? `\n\n${b['commit_message']}` : ''}`,
  );
  return reply(200, { sha: commit, merged: true, message: 'Pull Request successfully merged' });
}

/** The extra fields of a full pull request: mergeability, who merged it, requested reviewers. */
export async function mergeFields(ctx: ApiContext, repo: RepoRecord, pull: PullRecord): Promise<Record<string, unknown>> {
  const m = await mergeability(ctx.state, repo, pull);
  return {
    mergeable: m.mergeable,
    rebaseable: m.mergeable,
    mergeable_state: m.mergeableState,
    merged_by: pull.mergedById === null ? null : githubUserJson(ctx.origin, ctx.state.user(pull.mergedById)),
  };
}
