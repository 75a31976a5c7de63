import type { ApiContext } from './github';
import { gitlabParams, intOf, linkHeader, paginate, reply, type Reply } from './http';
import { preciseNow, type ForgeState, type JobRecord, type PipelineRecord, type PullRecord, type RepoRecord, type UserRecord } from './state';

/**
 * GitLab's merge surface on the fake forge: pipelines of a merge request and their jobs, diff
 * versions, approval counts, the merge request's `detailed_merge_status` / `has_conflicts`, and
 * `PUT …/merge_requests/:iid/merge` with its 405 and 409 refusals. See README.md.
 */

const methodNotAllowed = () => reply(405, { message: '405 Method Not Allowed' });

/** Job statuses that have not finished. */
const UNFINISHED = new Set(['created', 'pending', 'running', 'preparing', 'waiting_for_resource', 'scheduled']);

/** A pipeline's status from its jobs, as GitLab derives it. */
export function pipelineStatusOf(jobs: readonly Pick<JobRecord, 'status' | 'allowFailure'>[]): string {
  if (jobs.length === 0) return 'success';
  if (jobs.some((j) => j.status === 'failed' && !j.allowFailure)) return 'failed';
  if (jobs.some((j) => j.status === 'canceled' && !j.allowFailure)) return 'canceled';
  if (jobs.some((j) => j.status === 'running')) return 'running';
  if (jobs.some((j) => UNFINISHED.has(j.status))) return 'pending';
  if (jobs.some((j) => j.status === 'manual' && !j.allowFailure)) return 'manual';
  if (jobs.every((j) => j.status === 'skipped')) return 'skipped';
  return 'success';
}

/** Approvals still missing (GitLab's `approvals_left`). */
export function approvalsLeft(repo: RepoRecord, pull: PullRecord): number {
  return Math.max(0, repo.approvalsRequired - pull.approvals.length);
}

/**
 * GitLab's `detailed_merge_status` (its checks in its order, for the project merge method
 * `merge`: a branch behind its target still merges, so `need_rebase` never appears here).
 */
export async function detailedMergeStatus(state: ForgeState, repo: RepoRecord, pull: PullRecord): Promise<string> {
  if (pull.state !== 'open') return 'not_open';
  if (pull.draft) return 'draft_status';
  if (await state.hasConflicts(repo, pull)) return 'conflict';
  if (repo.onlyAllowMergeIfPipelineSucceeds) {
    const p = state.headPipeline(repo, pull);
    if (p === null || p.status !== 'success') return p !== null && (UNFINISHED.has(p.status) || p.status === 'running') ? 'ci_still_running' : 'ci_must_pass';
  }
  if (approvalsLeft(repo, pull) > 0) return 'not_approved';
  return 'mergeable';
}

export function pipelineJson(ctx: { origin: string }, repo: RepoRecord, p: PipelineRecord): Record<string, unknown> {
  return {
    id: p.id,
    iid: p.iid,
    project_id: repo.id,
    sha: p.sha,
    ref: p.ref,
    status: p.status,
    source: p.source,
    created_at: p.createdAt,
    updated_at: p.createdAt,
    web_url: `${ctx.origin}/${repo.owner}/${repo.name}/-/pipelines/${p.id}`,
  };
}

function jobJson(ctx: { origin: string }, repo: RepoRecord, p: PipelineRecord, j: JobRecord): Record<string, unknown> {
  return {
    id: j.id,
    status: j.status,
    stage: j.stage,
    name: j.name,
    ref: p.ref,
    tag: false,
    coverage: null,
    allow_failure: j.allowFailure,
    created_at: j.createdAt,
    started_at: UNFINISHED.has(j.status) && j.status !== 'running' ? null : j.createdAt,
    finished_at: UNFINISHED.has(j.status) || j.status === 'running' || j.status === 'manual' ? null : j.createdAt,
    commit: { id: p.sha, short_id: p.sha.slice(0, 8) },
    pipeline: { id: p.id, project_id: repo.id, ref: p.ref, sha: p.sha, status: p.status },
    web_url: `${ctx.origin}/${repo.owner}/${repo.name}/-/jobs/${j.id}`,
  };
}

function paged(ctx: ApiContext, all: readonly unknown[]): Reply {
  const p = paginate(all, ctx.query, 20, 100);
  const headers: Record<string, string> = {
    'x-page': String(p.page),
    'x-per-page': String(p.perPage),
    'x-next-page': p.page < p.totalPages ? String(p.page + 1) : '',
    'x-prev-page': p.page > 1 ? String(p.page - 1) : '',
    'x-total': String(p.total),
    'x-total-pages': String(p.totalPages),
    link: linkHeader(ctx.origin, ctx.pathname, ctx.query, p, ['prev', 'next', 'first', 'last']),
  };
  return reply(200, p.items, headers);
}

/** `GET /projects/:id/pipelines/:pipeline_id[/jobs]`. */
export function pipelineRoute(ctx: ApiContext, repo: RepoRecord, id: string | undefined, sub: string | undefined): Reply {
  const pid = intOf(id);
  const p = pid === null ? undefined : repo.pipelines.find((x) => x.id === pid);
  if (ctx.method !== 'GET') return reply(404, { error: '404 Not Found' });
  if (p === undefined) return reply(404, { message: '404 Not found' });
  if (sub === undefined)
    return reply(200, {
      ...pipelineJson(ctx, repo, p),
      before_sha: '0'.repeat(40),
      tag: false,
      yaml_errors: null,
      started_at: p.createdAt,
      finished_at: null,
      duration: null,
      detailed_status: { group: p.status, text: p.status },
    });
  if (sub === 'jobs') {
    const scopes = ctx.query.getAll('scope[]').concat(ctx.query.getAll('scope'));
    const jobs = p.jobs.filter((j) => scopes.length === 0 || scopes.includes(j.status)).sort((a, b) => b.id - a.id);
    return paged(
      ctx,
      jobs.map((j) => jobJson(ctx, repo, p, j)),
    );
  }
  return reply(404, { error: '404 Not Found' });
}

/** `GET …/merge_requests/:iid/pipelines` (newest first) and `GET …/versions` (newest first). */
export function mrListRoute(ctx: ApiContext, repo: RepoRecord, pull: PullRecord, sub: 'pipelines' | 'versions'): Reply {
  if (ctx.method !== 'GET') return reply(404, { error: '404 Not Found' });
  if (sub === 'pipelines')
    return paged(
      ctx,
      repo.pipelines
        .filter((p) => p.mergeRequestIid === pull.number)
        .sort((a, b) => b.id - a.id)
        .map((p) => pipelineJson(ctx, repo, p)),
    );
  return reply(
    200,
    [...pull.versions].reverse().map((v) => ({
      id: v.id,
      head_commit_sha: v.headSha,
      base_commit_sha: v.baseSha,
      start_commit_sha: v.startSha,
      created_at: v.createdAt,
      merge_request_id: pull.id,
      state: 'collected',
      real_size: '1',
    })),
  );
}

/**
 * `PUT …/merge_requests/:iid/merge`: 405 "Method Not Allowed" while it cannot be merged (not open,
 * a draft, conflicts, a required pipeline that has not succeeded, approvals missing — GitLab's docs
 * give 406 for conflicts, but GitLab answers 405 first, gitlab-org/gitlab#364102), then 409 when
 * `sha` is not the head, else the merge (`squash` for one commit) and the merged request.
 */
export async function acceptRoute(ctx: ApiContext, repo: RepoRecord, pull: PullRecord, user: UserRecord, mrJson: () => Promise<Record<string, unknown>>): Promise<Reply> {
  let params: Record<string, unknown>;
  try {
    params = await gitlabParams(ctx.raw, ctx.headers['content-type'], ctx.query);
  } catch {
    return reply(400, { error: 'The request body is invalid' });
  }
  if (pull.state !== 'open') return methodNotAllowed();
  const status = await detailedMergeStatus(ctx.state, repo, pull);
  if (status !== 'mergeable') return methodNotAllowed();
  const sha = typeof params['sha'] === 'string' ? params['sha'] : undefined;
  if (sha !== undefined && sha !== pull.headSha) return reply(409, { message: `SHA does not match HEAD of source branch: ${pull.headSha}` });
  const squash = params['squash'] === true || params['squash'] === 'true';
  const message =
    typeof params['merge_commit_message'] === 'string'
      ? params['merge_commit_message']
      : squash
        ? pull.title
        : `Merge branch '${pull.head}' into '${pull.base}'\n\n${pull.title}\n\nSee merge request ${repo.owner}/${repo.name}!${pull.number}`;
  await ctx.state.mergePull(repo, pull, squash ? 'squash' : 'merge', user.id, message);
  return reply(200, await mrJson());
}

/** A new pipeline for the merge request's head (control API), its status derived from its jobs unless given. */
export function addPipeline(
  state: ForgeState,
  repo: RepoRecord,
  pull: PullRecord,
  o: { sha?: string; status?: string; jobs?: { name: string; stage?: string; status: string; allowFailure?: boolean }[] },
): PipelineRecord {
  const at = preciseNow();
  const jobs: JobRecord[] = (o.jobs ?? []).map((j) => ({ id: state.id(), name: j.name, stage: j.stage ?? 'test', status: j.status, allowFailure: j.allowFailure ?? false, createdAt: at }));
  const p: PipelineRecord = {
    id: state.id(),
    iid: repo.nextPipelineIid++,
    sha: o.sha ?? pull.headSha,
    ref: `refs/merge-requests/${pull.number}/head`,
    status: o.status ?? pipelineStatusOf(jobs),
    source: 'merge_request_event',
    mergeRequestIid: pull.number,
    createdAt: at,
    jobs,
  };
  repo.pipelines.push(p);
  return p;
}
