import { createHash } from 'node:crypto';
import { createRequesterFn, getMatchingRateLimiter, type FormattedResponse, type RateLimiters, type RequestHandlerFn } from '@gitbeaker/requester-utils';
import { Gitlab } from '@gitbeaker/rest';
import { GITLAB_VERDICT_LABELS, readReviewMarker, type ComposedReview, type DiffLinePair, type ReviewComment, type ReviewEvent } from '../../protocol/exits';
import type { ForgeRepo } from '../../protocol/forge';
import type { Gate } from '../../protocol/gates';
import { errorMessage } from '../../protocol/result';
import { behindGate, draftGate, jobGate, pipelineGate, requiredReviewsGate, reviewAtHeadGate, sha7, type Approval } from './gateRules';
import {
  ForgeError,
  checkDescriptor,
  kindOfStatus,
  sleep,
  withoutToken,
  type EarlierReview,
  type ForgeAdapter,
  type ForgeAdapterOptions,
  type LinkedIssue,
  type PatchsetFiles,
  type PostedReview,
  type PullRequestGates,
  type PullRequestInfo,
} from './types';

/**
 * The GitLab adapter: @gitbeaker/rest (REST v4) against `repo.apiUrl` without its `/api/v4`
 * (gitbeaker adds it); the project is named by its path (`namespace/name`, URL-encoded).
 *
 * Retries. gitbeaker's own request handler re-sends every request — POSTs included — on 429 and
 * 502, ten times, without reading Retry-After. A 502 on a POST may come from a gateway after the
 * note was created, so re-sending it could post twice. The handler is replaced through gitbeaker's
 * requester seam (`requesterFn`, built with @gitbeaker/requester-utils' createRequesterFn: URL,
 * query, body encoding, auth headers and client-side rate limiting stay gitbeaker's) by one that
 * sends a mutation once — any 5xx or lost answer is 'unreachable' — re-sends a read after a 5xx or
 * no answer (`readRetries`, growing back-off), and waits out Retry-After on 429 for every method
 * (a rate-limited request was not processed) a bounded number of times, then 'rate-limited'.
 *
 * Posting a review. GitLab has no review event. The review is one draft note per comment, with a
 * position built from its placement on the MR's current `diff_refs`, and one draft note without a
 * position holding the body (its verdict label and the marker), all published by ONE bulk publish
 * so the review lands whole or not at all; APPROVE then adds the approval pinned to the head.
 */

const SAFE_METHODS = new Set(['GET', 'HEAD']);
const RETRIED_STATUSES = new Set([500, 502, 503, 504]);

// ─── Wire shapes (what this adapter reads) ───────────────────────────────────────────────────

interface GitlabDiffRefs {
  base_sha: string;
  start_sha: string;
  head_sha: string;
}

interface GitlabMr {
  iid: number;
  title: string;
  description: string | null;
  state: string;
  draft?: boolean;
  work_in_progress?: boolean;
  author: { username: string } | null;
  web_url: string;
  source_branch: string;
  target_branch: string;
  sha: string;
  source_project_id?: number;
  target_project_id?: number;
  diff_refs?: GitlabDiffRefs | null;
}

interface GitlabPipeline {
  id: number;
  sha: string;
  status: string;
}

interface GitlabJob {
  id: number;
  name: string;
  stage?: string | null;
  status: string;
  allow_failure?: boolean;
}

/** The merge request fields the gates read. */
interface GitlabMrGates extends GitlabMr {
  has_conflicts?: boolean;
  detailed_merge_status?: string;
  head_pipeline?: GitlabPipeline | null;
}

/** detailed_merge_status values another gate decides (or that mean "merges"); the mergeable gate passes them. */
const DECIDED_ELSEWHERE = new Set(['mergeable', 'not_approved', 'ci_must_pass', 'ci_still_running', 'draft_status', 'need_rebase']);
/** detailed_merge_status values that mean "GitLab has not worked it out yet". */
const STILL_CHECKING = new Set(['checking', 'unchecked', 'preparing', 'approvals_syncing']);
/** GitLab's system note for an approval. */
const APPROVED_NOTE = 'approved this merge request';

interface GitlabLineRangeEnd {
  line_code?: string | null;
  type?: string | null;
}

interface GitlabPosition {
  base_sha?: string;
  start_sha?: string;
  head_sha?: string;
  position_type?: string;
  old_path?: string | null;
  new_path?: string | null;
  old_line?: number | string | null;
  new_line?: number | string | null;
  line_range?: { start?: GitlabLineRangeEnd; end?: GitlabLineRangeEnd } | null;
}

interface GitlabNote {
  id: number;
  type: string | null;
  body: string;
  system?: boolean;
  created_at: string;
  author: { username: string } | null;
  position?: GitlabPosition | null;
}

interface GitlabDraft {
  id: number;
  note: string;
  position?: GitlabPosition | null;
}

interface Expanded<T> {
  data: T[];
  paginationInfo: { next: number | null };
}

// ─── Positions ───────────────────────────────────────────────────────────────────────────────

/** A draft note as this adapter creates it (snake_case: gitbeaker sends keys as given after decamelizing). */
interface PlannedDraft {
  note: string;
  position: Record<string, unknown> | null;
  /** Identity for matching a leftover draft: note and position, normalized. */
  key: string;
}

const sha1 = (text: string) => createHash('sha1').update(text, 'utf8').digest('hex');

/**
 * GitLab's line code and range `type` of the diff line with both numbers `pair`: `<sha1(new
 * path)>_<old>_<new>` with GitLab's counters — an added line carries the next old line number, a
 * deleted line the next new one; a side that is empty in the file (an added or deleted file) counts
 * 0. `type`: 'new' for an added line, 'old' for a deleted one, null for context (as GitLab's own
 * diff lines have it).
 */
export function gitlabLineCode(file: PatchsetFiles[number], pair: DiffLinePair): { lineCode: string; type: 'new' | 'old' | null } | null {
  const pathSha = sha1(file.path);
  for (const hunk of file.hunks) {
    let oldPos = hunk.oldLines === 0 ? (file.status === 'added' ? 0 : hunk.oldStart + 1) : hunk.oldStart;
    let newPos = hunk.newLines === 0 ? (file.status === 'deleted' ? 0 : hunk.newStart + 1) : hunk.newStart;
    for (const line of hunk.lines) {
      if (line.oldLine === pair.oldLine && line.newLine === pair.newLine) {
        return { lineCode: `${pathSha}_${oldPos}_${newPos}`, type: line.kind === 'add' ? 'new' : line.kind === 'del' ? 'old' : null };
      }
      if (line.oldLine !== null) oldPos = line.oldLine + 1;
      if (line.newLine !== null) newPos = line.newLine + 1;
    }
  }
  return null;
}

const num = (v: unknown): number | null => (v === null || v === undefined || v === '' ? null : Number(v));

/** A position (as sent, or as GitLab answers it) reduced to what identifies it. */
function positionKey(p: GitlabPosition | Record<string, unknown> | null | undefined): unknown {
  const q = (p ?? null) as GitlabPosition | null;
  if (q === null || typeof q !== 'object' || typeof q.base_sha !== 'string') return null;
  const range =
    q.line_range && q.line_range.start && q.line_range.end
      ? [q.line_range.start.line_code ?? null, q.line_range.start.type ?? null, q.line_range.end.line_code ?? null, q.line_range.end.type ?? null]
      : null;
  return [q.base_sha, q.start_sha ?? null, q.head_sha ?? null, q.position_type ?? null, q.old_path ?? null, q.new_path ?? null, num(q.old_line), num(q.new_line), range];
}

const draftKey = (note: string, position: GitlabPosition | Record<string, unknown> | null | undefined) => JSON.stringify([note, positionKey(position)]);

/** The draft notes a review is: one per comment (positioned), then the body. Refuses what cannot be placed. */
function planDrafts(composed: ComposedReview, refs: GitlabDiffRefs, files: PatchsetFiles): PlannedDraft[] {
  const refuse = (message: string): never => {
    throw new ForgeError('refused', `${message}; nothing was posted`);
  };
  const drafts: PlannedDraft[] = composed.descriptor.comments.map((c: ReviewComment, i) => {
    const placement = composed.placements[i];
    if (placement === undefined) return refuse(`comment ${i + 1} has no placement`);
    const file = files.find((f) => f.path === c.path);
    if (file === undefined) return refuse(`comment ${i + 1} names ${JSON.stringify(c.path)}, not a file of the patchset`);
    const { start, end } = placement;
    const endNumber = c.side === 'RIGHT' ? end.newLine : end.oldLine;
    if (endNumber !== c.line) return refuse(`comment ${i + 1}'s placement does not end on its line ${c.line} (${c.side})`);
    const position: Record<string, unknown> = {
      base_sha: refs.base_sha,
      start_sha: refs.start_sha,
      head_sha: refs.head_sha,
      position_type: 'text',
      old_path: file.oldPath ?? file.path,
      new_path: file.path,
    };
    // An added line is named by its new number only, a deleted line by its old one, context by both.
    if (end.oldLine !== null) position['old_line'] = end.oldLine;
    if (end.newLine !== null) position['new_line'] = end.newLine;
    if (c.startLine !== undefined) {
      const from = gitlabLineCode(file, start);
      const to = gitlabLineCode(file, end);
      if (from === null || to === null) return refuse(`comment ${i + 1}'s lines are not lines of the captured diff of ${c.path}`);
      position['line_range'] = {
        start: { line_code: from.lineCode, type: from.type, old_line: start.oldLine, new_line: start.newLine },
        end: { line_code: to.lineCode, type: to.type, old_line: end.oldLine, new_line: end.newLine },
      };
    }
    return { note: c.body, position, key: draftKey(c.body, position) };
  });
  drafts.push({ note: composed.descriptor.body, position: null, key: draftKey(composed.descriptor.body, null) });
  return drafts;
}

// ─── Errors ──────────────────────────────────────────────────────────────────────────────────

/** GitLab's own words: `{message}` (a string, a list, or field → messages) or `{error}`, else the text. */
function gitlabWords(text: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text.trim();
  }
  const words = (v: unknown): string => {
    if (typeof v === 'string') return v;
    if (Array.isArray(v)) return v.map(words).filter(Boolean).join('; ');
    if (v !== null && typeof v === 'object') {
      return Object.entries(v as Record<string, unknown>)
        .map(([k, x]) => `${k} ${words(x)}`)
        .join('; ');
    }
    return v === undefined || v === null ? '' : String(v);
  };
  if (parsed !== null && typeof parsed === 'object') {
    const o = parsed as { message?: unknown; error?: unknown };
    return (words(o.message ?? o.error) || text).trim();
  }
  return text.trim();
}

/** Seconds to wait from Retry-After (seconds or an HTTP date), else RateLimit-Reset, else 60. */
function retryAfterSeconds(headers: Headers): number {
  const after = headers.get('retry-after');
  if (after !== null) {
    const n = Number(after);
    if (Number.isFinite(n)) return Math.max(0, n);
    const at = Date.parse(after);
    if (Number.isFinite(at)) return Math.max(0, Math.ceil((at - Date.now()) / 1000));
  }
  const reset = Number(headers.get('ratelimit-reset'));
  if (Number.isFinite(reset) && reset > 0) return Math.max(0, Math.ceil(reset - Date.now() / 1000));
  return 60;
}

// ─── The adapter ─────────────────────────────────────────────────────────────────────────────

export function gitlabAdapter(repo: ForgeRepo, token: string, options: ForgeAdapterOptions = {}): ForgeAdapter {
  const pageSize = Math.min(100, Math.max(1, options.pageSize ?? 100));
  const rateLimitRetries = options.rateLimitRetries ?? 2;
  const maxRetryAfter = options.maxRetryAfterSeconds ?? 60;
  const unitMs = options.retryAfterUnitMs ?? 1000;
  const readRetries = options.readRetries ?? 3;
  const readBaseMs = options.readRetryBaseMs ?? 1000;
  const timeoutMs = options.requestTimeoutMs ?? 60_000;
  const host = repo.apiUrl.replace(/\/+$/, '').replace(/\/api\/v4$/, '');
  const project = `${repo.owner}/${repo.repo}`;
  const clean = (text: string) => withoutToken(text, token);

  /** gitbeaker's request handler, with this adapter's retry policy (see the file comment). */
  const handler: RequestHandlerFn = async (endpoint, raw = {}) => {
    const {
      rateLimiters,
      asStream,
      prefixUrl,
      searchParams,
      method: m,
      agent: _agent,
      signal: _signal,
      ...init
    } = raw as {
      rateLimiters?: RateLimiters;
      asStream?: boolean;
      prefixUrl?: string;
      searchParams?: string;
      method?: string;
      agent?: unknown;
      signal?: AbortSignal;
      headers?: Record<string, string>;
      body?: string | FormData;
    };
    const method = (m ?? 'GET').toUpperCase();
    const safe = SAFE_METHODS.has(method);
    const rateLimit = getMatchingRateLimiter(endpoint, rateLimiters, method);
    const base = prefixUrl ?? `${host}/api/v4`;
    const url = new URL(endpoint, base.endsWith('/') ? base : `${base}/`);
    url.search = searchParams ?? '';
    let limited = 0;
    let failed = 0;
    for (;;) {
      await rateLimit();
      let response: Response;
      try {
        response = await fetch(new Request(url, { ...init, method, signal: AbortSignal.timeout(timeoutMs) }));
      } catch (error) {
        if (safe && failed < readRetries) {
          failed++;
          await sleep(readBaseMs * failed * failed);
          continue;
        }
        const e = error as { name?: string; message?: string; cause?: { message?: string } };
        const why = e.name === 'TimeoutError' || e.name === 'AbortError' ? `no answer within ${timeoutMs} ms` : (e.cause?.message ?? e.message ?? String(error));
        throw new ForgeError('unreachable', clean(`GitLab at ${repo.host} did not answer${safe ? '' : ` (${method} not re-sent: it may have landed)`}: ${why}`));
      }
      const status = response.status;
      if (response.ok) {
        if (asStream) return { body: response.body as ReadableStream, headers: Object.fromEntries(response.headers.entries()), status };
        const type = (response.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? '';
        const text = status === 204 ? '' : await response.text();
        const body = status === 204 ? null : type === 'application/json' ? (text === '' ? {} : (JSON.parse(text) as Record<string, unknown>)) : text;
        return { body, headers: Object.fromEntries(response.headers.entries()), status } as FormattedResponse;
      }
      if (status === 429) {
        const after = retryAfterSeconds(response.headers);
        await response.body?.cancel();
        if (limited < rateLimitRetries && after <= maxRetryAfter) {
          limited++;
          await sleep(after * unitMs);
          continue;
        }
        throw new ForgeError('rate-limited', `GitLab rate limit: retry after ${after} s`, status);
      }
      if (safe && RETRIED_STATUSES.has(status) && failed < readRetries) {
        await response.body?.cancel();
        failed++;
        await sleep(readBaseMs * failed * failed);
        continue;
      }
      const words = clean(gitlabWords(await response.text().catch(() => '')) || `HTTP ${status}`);
      throw new ForgeError(kindOfStatus(status), status >= 500 && !safe ? `${words} (${method} not re-sent: it may have landed)` : words, status);
    }
  };

  const api = new Gitlab({
    host,
    // `Authorization: Bearer`, which GitLab takes for personal, project and group access tokens and
    // OAuth tokens (glab's) alike, and which fetch drops on a redirect to another origin (a
    // PRIVATE-TOKEN header would follow it).
    oauthToken: token,
    queryTimeout: null, // each attempt has its own timeout (the handler's)
    requesterFn: createRequesterFn((_service, requestOptions) => Promise.resolve(requestOptions), handler),
  });

  const call = async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      if (error instanceof ForgeError) throw error;
      throw new ForgeError('unreachable', clean(`GitLab at ${repo.host}: ${errorMessage(error)}`));
    }
  };

  /** Every page of a list, `pageSize` at a time. */
  const all = async <T>(page: (n: number) => Promise<unknown>): Promise<T[]> => {
    const out: T[] = [];
    for (let n: number | null = 1; n !== null;) {
      const got = (await page(n)) as Expanded<T>;
      out.push(...got.data);
      n = got.paginationInfo.next !== null && got.paginationInfo.next > n ? got.paginationInfo.next : null;
    }
    return out;
  };

  const projectPaths = new Map<number, Promise<string>>();
  const projectPath = (id: number): Promise<string> => {
    let hit = projectPaths.get(id);
    if (hit === undefined) {
      hit = api.Projects.show(id).then(
        (p) => String((p as { path_with_namespace?: unknown }).path_with_namespace ?? `project ${id}`),
        () => `project ${id}`,
      );
      projectPaths.set(id, hit);
    }
    return hit;
  };

  const infoOf = async (mr: GitlabMr): Promise<PullRequestInfo> => {
    const refs = mr.diff_refs ?? null;
    const fork = mr.source_project_id !== undefined && mr.target_project_id !== undefined && mr.source_project_id !== mr.target_project_id;
    return {
      number: mr.iid,
      title: mr.title,
      body: mr.description ?? '',
      state: mr.state === 'merged' ? 'merged' : mr.state === 'closed' ? 'closed' : 'open',
      draft: mr.draft ?? mr.work_in_progress ?? false,
      author: mr.author?.username ?? 'ghost',
      webUrl: mr.web_url,
      headRef: mr.source_branch,
      headSha: refs?.head_sha ?? mr.sha,
      baseRef: mr.target_branch,
      baseSha: refs?.start_sha ?? '',
      diffRefs: refs === null ? null : { baseSha: refs.base_sha, startSha: refs.start_sha, headSha: refs.head_sha },
      headRepo: fork ? await projectPath(mr.source_project_id as number) : null,
    };
  };

  const showMr = async (number: number): Promise<GitlabMr> => (await api.MergeRequests.show(project, number)) as unknown as GitlabMr;

  let me: Promise<string> | null = null;
  const currentUser = (): Promise<string> => {
    me ??= call(async () => String(((await api.Users.showCurrentUser()) as { username: string }).username));
    me.catch(() => {
      me = null;
    });
    return me;
  };

  const approvedBy = async (number: number): Promise<string[]> => {
    const state = (await api.MergeRequestApprovals.showConfiguration(project, { mergerequestIId: number })) as { approved_by?: { user?: { username?: string } }[] };
    return (state.approved_by ?? []).map((a) => (a.user?.username ?? '').toLowerCase());
  };

  const approve = (number: number, headSha: string): Promise<void> =>
    call(async () => {
      try {
        await api.MergeRequestApprovals.approve(project, number, { sha: headSha });
      } catch (error) {
        // GitLab answers 401 both for a bad token and for "you may not approve this": tell them apart.
        if (error instanceof ForgeError && error.kind === 'unauthorized') {
          const user = await currentUser().catch(() => null);
          if (user !== null) {
            throw new ForgeError(
              'forbidden',
              `GitLab refused the approval (${error.message}): the author may not approve their own merge request, ${user} may have approved it already, or it is not open`,
              error.status,
            );
          }
        }
        throw error;
      }
    });

  const findPosted = (number: number, markerId: string, expected?: readonly ReviewComment[]): Promise<PostedReview | null> =>
    call(async () => {
      const user = (await currentUser()).toLowerCase();
      const notes = await all<GitlabNote>((page) => api.MergeRequestNotes.all(project, number, { page, perPage: pageSize, showExpanded: true }));
      const mine = notes.filter((n) => !n.system && (n.author?.username ?? '').toLowerCase() === user);
      const body = mine.find((n) => n.type !== 'DiffNote' && readReviewMarker(n.body) === markerId);
      if (body === undefined) return null;
      const diffNotes = mine.filter((n) => n.type === 'DiffNote' && n.position);
      let comments: number;
      if (expected !== undefined) {
        const used = new Set<number>();
        comments = 0;
        for (const c of expected) {
          const hit = diffNotes.find((n) => {
            const p = n.position as GitlabPosition;
            return !used.has(n.id) && n.body === c.body && p.new_path === c.path && num(c.side === 'RIGHT' ? p.new_line : p.old_line) === c.line;
          });
          if (hit) {
            used.add(hit.id);
            comments++;
          }
        }
      } else {
        const second = body.created_at.slice(0, 19);
        comments = diffNotes.filter((n) => n.created_at.slice(0, 19) === second).length;
      }
      const firstLine = verdictLineOf(body.body);
      const event = (Object.entries(GITLAB_VERDICT_LABELS).find(([, label]) => label === firstLine)?.[0] as ReviewEvent | undefined) ?? 'COMMENT';
      const mr = await showMr(number);
      const posted: PostedReview = { reviewId: body.id, url: `${mr.web_url}#note_${body.id}`, event, comments };
      if (event === 'APPROVE') posted.approved = (await approvedBy(number)).includes(user);
      return posted;
    });

  /**
   * GitLab has no review object: the earlier review is the user's newest body note carrying
   * Rennet's marker (else their newest general note), with the diff notes published with it (the
   * same second). Its commit is those diff notes' head; a review with no diff note has none known.
   * A note on a context line carries both numbers: it reads as the head side's line.
   */
  const earlierReview = (number: number): Promise<EarlierReview | null> =>
    call(async () => {
      const user = (await currentUser()).toLowerCase();
      const notes = await all<GitlabNote>((page) => api.MergeRequestNotes.all(project, number, { page, perPage: pageSize, showExpanded: true }));
      const mine = notes.filter((n) => !n.system && (n.author?.username ?? '').toLowerCase() === user);
      const general = mine.filter((n) => n.type !== 'DiffNote').sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : b.id - a.id));
      const body = general.find((n) => readReviewMarker(n.body) !== null) ?? general[0];
      if (!body) return null;
      const second = body.created_at.slice(0, 19);
      const diffNotes = mine.filter((n) => n.type === 'DiffNote' && n.position && n.created_at.slice(0, 19) === second);
      const firstLine = verdictLineOf(body.body);
      const event = Object.entries(GITLAB_VERDICT_LABELS).find(([, label]) => label === firstLine)?.[0];
      const mr = await showMr(number);
      return {
        reviewId: body.id,
        url: `${mr.web_url}#note_${body.id}`,
        commitId: (diffNotes[0]?.position as GitlabPosition | undefined)?.head_sha ?? null,
        state: event === 'REQUEST_CHANGES' ? 'CHANGES_REQUESTED' : event === 'APPROVE' ? 'APPROVED' : 'COMMENTED',
        body: body.body,
        markerId: readReviewMarker(body.body),
        submittedAt: body.created_at,
        comments: diffNotes.map((n) => {
          const p = n.position as GitlabPosition;
          const newLine = num(p.new_line);
          const path = (newLine !== null ? p.new_path : (p.old_path ?? p.new_path)) ?? '';
          return newLine !== null ? { path, line: newLine, side: 'RIGHT' as const, body: n.body } : { path, line: num(p.old_line), side: 'LEFT' as const, body: n.body };
        }),
      };
    });

  /**
   * The pipeline whose jobs are the gates: the merge request's head pipeline when it ran on the
   * head, else the newest of its pipelines that did; else the newest it has (its gate then says
   * none ran on the head), or null when it has none.
   */
  const headPipeline = async (number: number, mr: GitlabMrGates, head: string): Promise<GitlabPipeline | null> => {
    if (mr.head_pipeline && mr.head_pipeline.sha === head) return mr.head_pipeline;
    const pipelines = await all<GitlabPipeline>((page) => api.MergeRequests.allPipelines(project, number, { page, perPage: pageSize, showExpanded: true }));
    return pipelines.find((p) => p.sha === head) ?? mr.head_pipeline ?? pipelines[0] ?? null;
  };

  /**
   * Approvals with the commit each was given on. GitLab's approvals list names no commit; its
   * diff versions say when the head was pushed and its system notes when each approval was given,
   * so an approval given after the head's version was recorded is an approval of the head. One
   * given before it approved an earlier commit (null: which one GitLab does not say).
   */
  const approvalsWithCommits = async (number: number, head: string, approvers: readonly string[]): Promise<Approval[] | null> => {
    if (approvers.length === 0) return [];
    const versions = (await api.MergeRequests.allDiffVersions(project, number)) as unknown as Array<{ head_commit_sha: string; created_at: string }>;
    const version = versions.find((v) => v.head_commit_sha === head);
    if (version === undefined) return null;
    const notes = await all<GitlabNote>((page) => api.MergeRequestNotes.all(project, number, { page, perPage: pageSize, showExpanded: true }));
    const latest = new Map<string, string>();
    for (const n of notes) {
      if (!n.system || n.body.trim() !== APPROVED_NOTE) continue;
      const who = (n.author?.username ?? '').toLowerCase();
      if (who !== '' && (latest.get(who) ?? '') < n.created_at) latest.set(who, n.created_at);
    }
    const pushedAt = Date.parse(version.created_at);
    return approvers.map((login) => {
      const at = latest.get(login.toLowerCase());
      return { login, commit: at !== undefined && Date.parse(at) >= pushedAt ? head : null };
    });
  };

  const readGates = async (number: number): Promise<PullRequestGates> => {
    const mr = (await showMr(number)) as GitlabMrGates;
    const info = await infoOf(mr);
    const head = info.headSha;
    const [pipeline, approvalState] = await Promise.all([
      headPipeline(number, mr, head),
      api.MergeRequestApprovals.showConfiguration(project, { mergerequestIId: number }) as unknown as Promise<{
        approvals_required?: number;
        approvals_left?: number;
        approved_by?: Array<{ user?: { username?: string } }>;
      }>,
    ]);
    const gates: Gate[] = [];
    const detailed = mr.detailed_merge_status ?? 'unchecked';
    if (pipeline !== null && pipeline.sha === head) {
      const jobs = await all<GitlabJob>((page) => api.Jobs.all(project, { pipelineId: pipeline.id, page, perPage: pageSize, showExpanded: true }));
      // The newest job per name (a retried job supersedes its earlier run).
      const byName = new Map<string, GitlabJob>();
      for (const j of [...jobs].sort((a, b) => a.id - b.id)) byName.set(j.name, j);
      gates.push(...[...byName.values()].sort((a, b) => a.name.localeCompare(b.name)).map((j) => jobGate(j)));
      gates.push(pipelineGate(pipeline, head));
    } else if (pipeline !== null) gates.push(pipelineGate(pipeline, head));
    else if (detailed === 'ci_must_pass' || detailed === 'ci_still_running')
      gates.push({ name: 'pipeline', kind: 'pipeline', state: 'fail', detail: `the project requires a successful pipeline and none ran on the head ${sha7(head)}` });
    gates.push(draftGate(info.draft));
    if (info.state !== 'open') gates.push({ name: 'mergeable', kind: 'mergeable', state: 'fail', detail: `the request is ${info.state}` });
    else if (mr.has_conflicts === true || detailed === 'conflict')
      gates.push({ name: 'mergeable', kind: 'mergeable', state: 'fail', detail: `conflicts with ${info.baseRef}: merge or rebase ${info.baseRef} into it, resolve, and push` });
    else if (STILL_CHECKING.has(detailed)) gates.push({ name: 'mergeable', kind: 'mergeable', state: 'pending', detail: `GitLab is still checking (${detailed}): read again` });
    else if (DECIDED_ELSEWHERE.has(detailed)) gates.push({ name: 'mergeable', kind: 'mergeable', state: 'pass', detail: `merges cleanly into ${info.baseRef} (${detailed})` });
    else gates.push({ name: 'mergeable', kind: 'mergeable', state: 'fail', detail: `GitLab blocks the merge: ${detailed.replace(/_/g, ' ')}` });
    const refs = info.diffRefs;
    if (refs === null) gates.push({ name: 'behind-base', kind: 'behind-base', state: 'pending', detail: 'GitLab has not computed the diff yet: read again' });
    else gates.push(behindGate(info.baseRef, null, refs.baseSha !== refs.startSha || detailed === 'need_rebase'));
    const approvers = (approvalState.approved_by ?? []).map((a) => a.user?.username ?? '').filter((u) => u !== '');
    const need = approvalState.approvals_required ?? 0;
    const left = approvalState.approvals_left ?? Math.max(0, need - approvers.length);
    gates.push(requiredReviewsGate(need, need - left, [], [], "the project's approval rules"));
    const approvals = await approvalsWithCommits(number, head, approvers);
    gates.push(
      approvals === null
        ? { name: 'review-at-head', kind: 'review-at-head', state: 'pending', detail: `GitLab has not recorded the head ${sha7(head)} as a version yet: read again` }
        : reviewAtHeadGate(head, info.author, approvals),
    );
    return { number, head, headRef: info.headRef, baseRef: info.baseRef, state: info.state, gates };
  };

  const merge = (number: number, options: { expectHead: string; method: 'merge' | 'squash' | 'rebase' }) =>
    call(async () => {
      const { expectHead, method } = options;
      if (method === 'rebase') throw new ForgeError('refused', 'GitLab merges by the project’s merge method; per request it takes merge or squash, not rebase; nothing was merged');
      const live = await showMr(number);
      const head = live.diff_refs?.head_sha ?? live.sha;
      if (head !== expectHead) throw new ForgeError('head-moved', `!${number}'s head moved to ${sha7(head)}; the merge was pinned to ${sha7(expectHead)}; nothing was merged`);
      try {
        const merged = (await api.MergeRequests.accept(project, number, { sha: expectHead, ...(method === 'squash' ? { squash: true } : {}) })) as unknown as {
          merge_commit_sha?: string | null;
          squash_commit_sha?: string | null;
          web_url: string;
        };
        return { sha: merged.merge_commit_sha ?? merged.squash_commit_sha ?? '', url: merged.web_url };
      } catch (error) {
        if (error instanceof ForgeError && error.status === 409)
          throw new ForgeError('head-moved', `GitLab refused the merge (${error.message}): !${number}'s head is no longer ${sha7(expectHead)}; nothing was merged`, 409);
        if (error instanceof ForgeError && (error.status === 405 || error.status === 406 || error.status === 422))
          throw new ForgeError('refused', `GitLab refused the merge: ${error.message}`, error.status);
        throw error;
      }
    });

  return {
    provider: 'gitlab',
    repo,
    currentUser,
    earlierReview,
    readGates: (number) => call(() => readGates(number)),
    merge,

    listOpen: (limit) =>
      call(async () => {
        if (limit <= 0) return [];
        const per = Math.min(pageSize, limit);
        const mrs = (await api.MergeRequests.all({
          projectId: project,
          state: 'opened',
          orderBy: 'created_at',
          sort: 'desc',
          perPage: per,
          maxPages: Math.ceil(limit / per),
        })) as unknown as GitlabMr[];
        return Promise.all(mrs.slice(0, limit).map(infoOf));
      }),

    get: (number) => call(async () => infoOf(await showMr(number))),

    linkedIssues: (numbers) =>
      call(async () => {
        const out: LinkedIssue[] = [];
        for (const number of [...new Set(numbers)]) {
          try {
            const issue = (await api.Issues.show(number, { projectId: project })) as { iid: number; title: string; description: string | null; web_url: string; state?: string };
            out.push({ number: issue.iid, title: issue.title, body: issue.description ?? '', webUrl: issue.web_url, state: issue.state === 'closed' ? 'closed' : 'open' });
          } catch (error) {
            if (error instanceof ForgeError && error.kind === 'not-found') continue;
            throw error;
          }
        }
        return out;
      }),

    findPosted,

    post: (number, composed, headSha, files) =>
      call(async () => {
        checkDescriptor(repo, number, composed, headSha);
        const mr = await showMr(number);
        const refs = mr.diff_refs ?? null;
        if (refs === null) throw new ForgeError('refused', `GitLab has not computed the diff of !${number} yet (no diff_refs); nothing was posted`);
        if (refs.head_sha !== headSha) {
          throw new ForgeError('refused', `!${number}'s head moved to ${refs.head_sha.slice(0, 12)}; the review is pinned to ${headSha.slice(0, 12)}; nothing was posted`);
        }
        const planned = planDrafts(composed, refs, files);
        const ours = new Set(planned.map((d) => d.key));

        // The user's pending drafts: leftovers of this review are deleted; any other would be
        // published by the bulk publish, so the post is refused rather than send them.
        const pending = await all<GitlabDraft>((page) => api.MergeRequestDraftNotes.all(project, number, { page, perPage: pageSize, showExpanded: true }));
        const leftovers = pending.filter((d) => ours.has(draftKey(d.note, d.position)));
        const others = pending.length - leftovers.length;
        if (others > 0) {
          throw new ForgeError(
            'refused',
            `you have ${others} pending draft note${others === 1 ? '' : 's'} on !${number} that this review did not write; publishing the review would publish ${others === 1 ? 'it' : 'them'} too. Submit or discard ${others === 1 ? 'it' : 'them'} in GitLab, then post again; nothing was posted`,
          );
        }
        for (const d of leftovers) await api.MergeRequestDraftNotes.remove(project, number, d.id);

        const created: number[] = [];
        const discard = async () => {
          for (const id of created) await api.MergeRequestDraftNotes.remove(project, number, id).catch(() => undefined);
        };
        try {
          for (const d of planned) {
            const draft = (await api.MergeRequestDraftNotes.create(project, number, d.note, d.position === null ? {} : { position: d.position as never })) as unknown as GitlabDraft;
            created.push(draft.id);
          }
          await api.MergeRequestDraftNotes.publishBulk(project, number);
        } catch (error) {
          // Refused (publishing is all or nothing): take back what this attempt drafted. Lost
          // answers leave the drafts; the next attempt deletes them as leftovers, or finds the marker.
          if (!(error instanceof ForgeError) || error.kind !== 'unreachable') await discard();
          throw error;
        }
        const event = composed.descriptor.event;
        if (event === 'APPROVE') await approve(number, headSha);
        const found = await findPosted(number, composed.markerId, composed.descriptor.comments).catch(() => null);
        return found ?? { reviewId: 0, url: mr.web_url, event, comments: composed.descriptor.comments.length, ...(event === 'APPROVE' ? { approved: true } : {}) };
      }),

    approve,

    findOpenFor: (headBranch, baseBranch) =>
      call(async () => {
        const mrs = (await api.MergeRequests.all({ projectId: project, state: 'opened', sourceBranch: headBranch, targetBranch: baseBranch, perPage: pageSize, maxPages: 1 })) as unknown as GitlabMr[];
        const mr = mrs.find((x) => x.source_branch === headBranch && x.target_branch === baseBranch && (x.source_project_id === undefined || x.source_project_id === x.target_project_id));
        return mr === undefined ? null : infoOf(await showMr(mr.iid));
      }),

    create: (input) =>
      call(async () => {
        const mr = (await api.MergeRequests.create(project, input.headBranch, input.baseBranch, input.title, { description: input.body })) as unknown as GitlabMr;
        return infoOf(mr);
      }),
  };
}

/**
 * The line of a Rennet body note that carries its verdict label: the first, or — on a re-review,
 * whose body opens with its "Prior review:" line (host/exits/compose.ts) — the first after it.
 */
export function verdictLineOf(body: string): string {
  const lines = body.split(/\r?\n/).map((l) => l.trim());
  const first = lines.findIndex((l) => l !== '');
  if (first === -1) return '';
  if (!(lines[first] as string).startsWith('Prior review:')) return lines[first] as string;
  return lines.slice(first + 1).find((l) => l !== '') ?? '';
}
