import { retry } from '@octokit/plugin-retry';
import { throttling } from '@octokit/plugin-throttling';
import { Octokit } from '@octokit/rest';
import { readReviewMarker, type ComposedReview, type ReviewEvent } from '../../protocol/exits';
import type { ForgeRepo } from '../../protocol/forge';
import type { Gate } from '../../protocol/gates';
import { behindGate, checkRunGate, draftGate, requiredReviewsGate, reviewAtHeadGate, sha7, statusGate, type Approval } from './gateRules';
import {
  ForgeError,
  checkDescriptor,
  kindOfStatus,
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
 * The GitHub adapter: @octokit/rest (REST v3, `paginate` built in) with @octokit/plugin-retry and
 * @octokit/plugin-throttling, against `repo.apiUrl` (api.github.com, GitHub Enterprise's
 * `/api/v3`, the tests' fake forge).
 *
 * Retries. plugin-retry re-sends a request that failed with a 5xx or got no answer; that is right
 * for a read and wrong for a mutation, whose answer may have been lost after it landed (a second
 * createReview would post the review twice). A policy plugin registered before it sets
 * `request.retries = 0` on every request that is not GET/HEAD — plugin-retry reads that per
 * request (`options.request.retries ?? state.retries`) — so mutations are sent once and a lost
 * answer is 'unreachable'. plugin-throttling handles rate limits (403 "secondary rate limit", or
 * `x-ratelimit-remaining: 0`, and 429) by waiting out Retry-After / the reset time a bounded number
 * of times (`rateLimitRetries`, `maxRetryAfterSeconds`); a rate-limited request was not processed,
 * so mutations wait and retry too. plugin-retry leaves 4xx alone (doNotRetry below).
 */

const SAFE_METHODS = new Set(['GET', 'HEAD']);
const QUIET = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * A Bottleneck group that does not space its jobs (the public `key(id).schedule(options, fn,
 * ...args)` plugin-throttling calls), for `spaceWrites: false`.
 */
const UNSPACED = {
  key: () => ({
    schedule: (_options: unknown, fn: (...args: unknown[]) => unknown, ...args: unknown[]) => Promise.resolve().then(() => fn(...args)),
  }),
};

/** The statuses plugin-retry never re-sends: refusals, and rate limits (plugin-throttling's). */
const DO_NOT_RETRY = [400, 401, 403, 404, 409, 410, 422, 429, 451];

interface GithubPull {
  number: number;
  title: string;
  body?: string | null;
  state: string;
  draft?: boolean;
  merged?: boolean;
  merged_at?: string | null;
  user: { login: string } | null;
  html_url: string;
  head: { ref: string; sha: string; label?: string; repo: { full_name: string } | null };
  base: { ref: string; sha: string };
}

const EVENT_OF_STATE: Record<string, ReviewEvent> = { APPROVED: 'APPROVE', CHANGES_REQUESTED: 'REQUEST_CHANGES', COMMENTED: 'COMMENT', DISMISSED: 'COMMENT' };

export function githubAdapter(repo: ForgeRepo, token: string, options: ForgeAdapterOptions = {}): ForgeAdapter {
  const pageSize = Math.min(100, Math.max(1, options.pageSize ?? 100));
  const rateLimitRetries = options.rateLimitRetries ?? 2;
  const maxRetryAfter = options.maxRetryAfterSeconds ?? 60;
  const timeoutMs = options.requestTimeoutMs ?? 60_000;
  const owner = repo.owner;
  const name = repo.repo;
  const fullName = `${owner}/${name}`.toLowerCase();

  /** Runs before plugin-retry's and plugin-throttling's hooks, on every attempt. */
  const policy = (octokit: { hook: InstanceType<typeof Octokit>['hook'] }) => {
    octokit.hook.before('request', (o) => {
      // A fresh object: `o.request` may be the instance's defaults, shared by every request.
      const request: Record<string, unknown> = { ...(o.request ?? {}), signal: AbortSignal.timeout(timeoutMs) };
      if (!SAFE_METHODS.has(String(o.method).toUpperCase())) request['retries'] = 0;
      o.request = request as typeof o.request;
    });
  };
  const Kit = Octokit.plugin(policy, retry, throttling);
  const wantRetry = (retryAfter: number, retryCount: number) => retryCount < rateLimitRetries && retryAfter <= maxRetryAfter;
  const octokit = new Kit({
    auth: token,
    baseUrl: repo.apiUrl.replace(/\/+$/, ''),
    userAgent: 'rennet',
    log: QUIET,
    retry: { retries: options.readRetries ?? 3, retryAfterBaseValue: options.readRetryBaseMs ?? 1000, doNotRetry: DO_NOT_RETRY },
    throttle: {
      // plugin-throttling spaces writes (1 s) and content-creating requests (3 s), as GitHub asks
      // to avoid secondary rate limits; tests turn that off.
      ...(options.spaceWrites === false ? { write: UNSPACED as never, notifications: UNSPACED as never } : {}),
      retryAfterBaseValue: options.retryAfterUnitMs ?? 1000,
      fallbackSecondaryRateRetryAfter: 60,
      onRateLimit: (retryAfter: number, _o: unknown, _k: unknown, retryCount: number) => wantRetry(retryAfter, retryCount),
      onSecondaryRateLimit: (retryAfter: number, _o: unknown, _k: unknown, retryCount: number) => wantRetry(retryAfter, retryCount),
    },
  });

  /** Every failure as a ForgeError, in the forge's words, never with the token. */
  const fail = (error: unknown): ForgeError => {
    if (error instanceof ForgeError) return error;
    const e = error as { status?: number; message?: string; name?: string; request?: { method?: string }; response?: { status: number; headers?: Record<string, string | undefined>; data?: unknown } };
    const clean = (text: string) => withoutToken(text, token);
    if (!e.response) {
      const method = String(e.request?.method ?? 'GET').toUpperCase();
      const why = e.name === 'TimeoutError' || e.name === 'AbortError' || /due to timeout/.test(e.message ?? '') ? `no answer within ${timeoutMs} ms` : (e.message ?? String(error));
      return new ForgeError('unreachable', clean(`GitHub at ${repo.host} did not answer${SAFE_METHODS.has(method) ? '' : ` (${method} not re-sent: it may have landed)`}: ${why}`));
    }
    const status = e.response.status;
    const data = e.response.data;
    const words = clean(githubWords(data) || `HTTP ${status}`);
    const headers = e.response.headers ?? {};
    const rateLimited = status === 429 || (status === 403 && (headers['x-ratelimit-remaining'] === '0' || /rate limit/i.test(words)));
    if (rateLimited) return new ForgeError('rate-limited', `GitHub rate limit: ${words}`, status);
    return new ForgeError(kindOfStatus(status), words, status);
  };
  const call = async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      throw fail(error);
    }
  };

  const infoOf = (p: GithubPull): PullRequestInfo => {
    const headRepo = p.head.repo?.full_name ?? null;
    return {
      number: p.number,
      title: p.title,
      body: p.body ?? '',
      state: p.merged === true || (p.merged_at ?? null) !== null ? 'merged' : p.state === 'open' ? 'open' : 'closed',
      draft: p.draft ?? false,
      author: p.user?.login ?? 'ghost',
      webUrl: p.html_url,
      headRef: p.head.ref,
      headSha: p.head.sha,
      baseRef: p.base.ref,
      baseSha: p.base.sha,
      diffRefs: null,
      // A deleted fork leaves no repository: name it by the head's label (`owner:branch`).
      headRepo: headRepo === null ? (p.head.label ?? 'unknown') : headRepo.toLowerCase() === fullName ? null : headRepo,
    };
  };

  /** Every commit status context at `ref`, newest per context (the combined status, every page). */
  const combinedStatuses = async (ref: string): Promise<Array<{ context: string; state: string; description: string | null }>> => {
    const out: Array<{ context: string; state: string; description: string | null }> = [];
    for (let page = 1; ; page++) {
      const { data } = await octokit.rest.repos.getCombinedStatusForRef({ owner, repo: name, ref, per_page: pageSize, page });
      out.push(...data.statuses.map((x) => ({ context: x.context, state: x.state, description: x.description ?? null })));
      if (data.statuses.length < pageSize || out.length >= data.total_count) return out;
    }
  };

  /**
   * required-reviews from branch protection: its required approving review count (404 "Branch not
   * protected" or "… not enabled": none required). Reading protection takes admin rights; when it
   * cannot be read, GitHub's own verdict stands in: `mergeable_state` "blocked" fails, "clean",
   * "unstable" and "has_hooks" pass (GitHub would merge), anything else is pending.
   */
  const requiredReviews = async (baseRef: string, author: string, deciding: Map<string, { state: string; commit_id: string | null }>, waiting: string[], mergeableState: string): Promise<Gate> => {
    const changes = [...deciding].filter(([login, r]) => r.state === 'CHANGES_REQUESTED' && login !== author.toLowerCase()).map(([login]) => login);
    let need: number;
    try {
      const { data } = await octokit.rest.repos.getPullRequestReviewProtection({ owner, repo: name, branch: baseRef });
      need = data.required_approving_review_count ?? 0;
    } catch (error) {
      const f = fail(error);
      if (f.kind === 'not-found' && /not protected|not enabled/i.test(f.message)) need = 0;
      else {
        const why = `branch protection of ${baseRef} is not readable with this token (${f.message}); GitHub reports the request ${mergeableState}`;
        if (changes.length > 0) return requiredReviewsGate(1, 0, changes, waiting, baseRef);
        const state = mergeableState === 'blocked' ? 'fail' : ['clean', 'unstable', 'has_hooks'].includes(mergeableState) ? 'pass' : 'pending';
        return { name: 'required-reviews', kind: 'required-reviews', state, detail: why };
      }
    }
    const approvals = [...deciding].filter(([login, r]) => r.state === 'APPROVED' && login !== author.toLowerCase()).length;
    return requiredReviewsGate(need, approvals, changes, waiting, `${baseRef}'s branch protection`);
  };

  const readGates = async (number: number): Promise<PullRequestGates> => {
    const pull = (await octokit.rest.pulls.get({ owner, repo: name, pull_number: number })).data as unknown as GithubPull & {
      mergeable: boolean | null;
      mergeable_state: string;
      requested_reviewers?: Array<{ login: string }> | null;
    };
    const info = infoOf(pull);
    const head = info.headSha;
    const [runs, statuses, compare, reviews] = await Promise.all([
      octokit.paginate(octokit.rest.checks.listForRef, { owner, repo: name, ref: head, filter: 'latest', per_page: pageSize }),
      combinedStatuses(head),
      octokit.rest.repos.compareCommitsWithBasehead({ owner, repo: name, basehead: `${info.baseRef}...${head}`, per_page: 1 }),
      octokit.paginate(octokit.rest.pulls.listReviews, { owner, repo: name, pull_number: number, per_page: pageSize }),
    ]);
    // Each reviewer's latest deciding review (a comment neither approves nor withdraws an approval).
    const deciding = new Map<string, { state: string; commit_id: string | null; login: string }>();
    for (const r of reviews) {
      const login = r.user?.login ?? '';
      if (login !== '' && ['APPROVED', 'CHANGES_REQUESTED', 'DISMISSED'].includes(r.state)) deciding.set(login.toLowerCase(), { state: r.state, commit_id: r.commit_id ?? null, login });
    }
    const waiting = (pull.requested_reviewers ?? []).map((u) => u.login);
    const gates: Gate[] = [
      ...[...runs].sort((a, b) => a.name.localeCompare(b.name)).map((r) => checkRunGate(r)),
      ...[...statuses].sort((a, b) => a.context.localeCompare(b.context)).map((x) => statusGate(x)),
      draftGate(info.draft),
    ];
    if (info.state !== 'open') gates.push({ name: 'mergeable', kind: 'mergeable', state: 'fail', detail: `the request is ${info.state}` });
    else if (pull.mergeable === null) gates.push({ name: 'mergeable', kind: 'mergeable', state: 'pending', detail: 'GitHub is still working out whether it merges cleanly: read again' });
    else if (pull.mergeable === false || pull.mergeable_state === 'dirty')
      gates.push({ name: 'mergeable', kind: 'mergeable', state: 'fail', detail: `conflicts with ${info.baseRef}: merge or rebase ${info.baseRef} into it, resolve, and push` });
    else gates.push({ name: 'mergeable', kind: 'mergeable', state: 'pass', detail: `merges cleanly into ${info.baseRef}; GitHub's merge state: ${pull.mergeable_state}` });
    gates.push(behindGate(info.baseRef, compare.data.behind_by, compare.data.behind_by > 0));
    gates.push(await requiredReviews(info.baseRef, info.author, deciding, waiting, pull.mergeable_state));
    const approvals: Approval[] = [...deciding.values()].filter((r) => r.state === 'APPROVED').map((r) => ({ login: r.login, commit: r.commit_id }));
    gates.push(reviewAtHeadGate(head, info.author, approvals));
    return { number, head, headRef: info.headRef, baseRef: info.baseRef, state: info.state, gates };
  };

  let me: Promise<string> | null = null;
  const currentUser = (): Promise<string> => {
    me ??= call(async () => (await octokit.rest.users.getAuthenticated()).data.login);
    me.catch(() => {
      me = null;
    });
    return me;
  };

  return {
    provider: 'github',
    repo,
    currentUser,

    listOpen: (limit) =>
      call(async () => {
        if (limit <= 0) return [];
        const per = Math.min(pageSize, limit);
        let seen = 0;
        const pulls = await octokit.paginate(octokit.rest.pulls.list, { owner, repo: name, state: 'open', sort: 'created', direction: 'desc', per_page: per }, (response, done) => {
          seen += response.data.length;
          if (seen >= limit) done();
          return response.data;
        });
        return (pulls as unknown as GithubPull[]).slice(0, limit).map(infoOf);
      }),

    get: (number) => call(async () => infoOf((await octokit.rest.pulls.get({ owner, repo: name, pull_number: number })).data as unknown as GithubPull)),

    linkedIssues: (numbers) =>
      call(async () => {
        const out: LinkedIssue[] = [];
        for (const number of [...new Set(numbers)]) {
          try {
            const issue = (await octokit.rest.issues.get({ owner, repo: name, issue_number: number })).data;
            // GitHub serves pull requests as issues too; a linked pull request is not an issue.
            if (issue.pull_request) continue;
            out.push({ number: issue.number, title: issue.title, body: issue.body ?? '', webUrl: issue.html_url, state: issue.state === 'closed' ? 'closed' : 'open' });
          } catch (error) {
            const f = fail(error);
            if (f.kind === 'not-found') continue;
            throw f;
          }
        }
        return out;
      }),

    findPosted: (number, markerId) =>
      call(async () => {
        const login = (await currentUser()).toLowerCase();
        let found: { id: number; html_url: string; state: string } | null = null;
        await octokit.paginate(octokit.rest.pulls.listReviews, { owner, repo: name, pull_number: number, per_page: pageSize }, (response, done) => {
          for (const r of response.data) {
            if (r.state === 'PENDING' || (r.user?.login ?? '').toLowerCase() !== login) continue;
            if (readReviewMarker(r.body ?? '') === markerId) {
              found = { id: r.id, html_url: r.html_url, state: r.state };
              done();
              break;
            }
          }
          return [];
        });
        const review = found as { id: number; html_url: string; state: string } | null;
        if (review === null) return null;
        const comments = await octokit.paginate(octokit.rest.pulls.listCommentsForReview, { owner, repo: name, pull_number: number, review_id: review.id, per_page: pageSize });
        return { reviewId: review.id, url: review.html_url, event: EVENT_OF_STATE[review.state] ?? 'COMMENT', comments: comments.length } satisfies PostedReview;
      }),

    earlierReview: (number) =>
      call(async () => {
        const login = (await currentUser()).toLowerCase();
        const mine: Array<{ id: number; html_url: string; state: string; body: string | null; commit_id: string | null; submitted_at?: string | null }> = [];
        await octokit.paginate(octokit.rest.pulls.listReviews, { owner, repo: name, pull_number: number, per_page: pageSize }, (response) => {
          for (const r of response.data) if (r.state !== 'PENDING' && r.state !== 'DISMISSED' && (r.user?.login ?? '').toLowerCase() === login) mine.push(r);
          return [];
        });
        // Reviews come oldest first: the newest carrying Rennet's marker, else the newest.
        const chosen = [...mine].reverse().find((r) => readReviewMarker(r.body ?? '') !== null) ?? mine.at(-1);
        if (!chosen) return null;
        const comments = await octokit.paginate(octokit.rest.pulls.listCommentsForReview, { owner, repo: name, pull_number: number, review_id: chosen.id, per_page: pageSize });
        const state = chosen.state === 'APPROVED' || chosen.state === 'CHANGES_REQUESTED' ? chosen.state : 'COMMENTED';
        return {
          reviewId: chosen.id,
          url: chosen.html_url,
          commitId: chosen.commit_id ?? null,
          state,
          body: chosen.body ?? '',
          markerId: readReviewMarker(chosen.body ?? ''),
          submittedAt: chosen.submitted_at ?? null,
          comments: comments.map((c) => {
            const raw = c as { path: string; line?: number | null; original_line?: number | null; side?: string | null; body: string };
            return { path: raw.path, line: raw.line ?? raw.original_line ?? null, side: raw.side === 'LEFT' ? 'LEFT' : 'RIGHT', body: raw.body };
          }),
        } satisfies EarlierReview;
      }),

    post: (number: number, composed: ComposedReview, headSha: string, _files?: PatchsetFiles) =>
      call(async () => {
        checkDescriptor(repo, number, composed, headSha);
        const d = composed.descriptor;
        const { data } = await octokit.rest.pulls.createReview({
          owner,
          repo: name,
          pull_number: number,
          commit_id: headSha,
          event: d.event,
          body: d.body,
          comments: d.comments.map((c) =>
            c.startLine === undefined
              ? { path: c.path, line: c.line, side: c.side, body: c.body }
              : { path: c.path, line: c.line, side: c.side, start_line: c.startLine, start_side: c.startSide ?? c.side, body: c.body },
          ),
          request: { retries: 0 },
        });
        return { reviewId: data.id, url: data.html_url, event: d.event, comments: d.comments.length };
      }),

    readGates: (number) => call(() => readGates(number)),

    merge: (number, { expectHead, method }) =>
      call(async () => {
        const live = (await octokit.rest.pulls.get({ owner, repo: name, pull_number: number })).data as unknown as GithubPull;
        if (live.head.sha !== expectHead) throw new ForgeError('head-moved', `#${number}'s head moved to ${sha7(live.head.sha)}; the merge was pinned to ${sha7(expectHead)}; nothing was merged`);
        try {
          const { data } = await octokit.rest.pulls.merge({ owner, repo: name, pull_number: number, sha: expectHead, merge_method: method, request: { retries: 0 } });
          return { sha: data.sha ?? '', url: live.html_url };
        } catch (error) {
          const f = fail(error);
          if (f.status === 409) throw new ForgeError('head-moved', `GitHub refused the merge (${f.message}): #${number}'s head is no longer ${sha7(expectHead)}; nothing was merged`, 409);
          if (f.status === 405) throw new ForgeError('refused', `GitHub refused the merge: ${f.message}`, 405);
          throw f;
        }
      }),

    findOpenFor: (headBranch, baseBranch) =>
      call(async () => {
        const { data } = await octokit.rest.pulls.list({ owner, repo: name, state: 'open', head: `${owner}:${headBranch}`, base: baseBranch, per_page: pageSize });
        const pull = (data as unknown as GithubPull[]).find((p) => p.head.ref === headBranch && p.base.ref === baseBranch);
        return pull === undefined ? null : infoOf(pull);
      }),

    create: (input) =>
      call(async () => {
        const { data } = await octokit.rest.pulls.create({ owner, repo: name, head: input.headBranch, base: input.baseBranch, title: input.title, body: input.body, request: { retries: 0 } });
        return infoOf(data as unknown as GithubPull);
      }),
  };
}

/** GitHub's own words for a refusal: its `errors` (strings, or objects with a message), else its `message`. */
function githubWords(data: unknown): string {
  if (typeof data === 'string') return data.trim();
  if (data === null || typeof data !== 'object') return '';
  const o = data as { message?: unknown; errors?: unknown };
  const errors = Array.isArray(o.errors)
    ? o.errors
        .map((x: unknown) => {
          if (typeof x === 'string') return x;
          if (x !== null && typeof x === 'object') {
            const e = x as { message?: unknown; resource?: unknown; field?: unknown; code?: unknown };
            if (typeof e.message === 'string' && e.message !== '') return e.message;
            return [e.resource, e.field, e.code].filter((v) => typeof v === 'string' && v !== '').join(' ');
          }
          return '';
        })
        .filter((x) => x !== '')
    : [];
  if (errors.length > 0) return errors.join('; ');
  return typeof o.message === 'string' ? o.message.trim() : '';
}
