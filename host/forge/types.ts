import type { ComposedReview, ForgeProvider, ReviewComment, ReviewEvent } from '../../protocol/exits';
import type { ForgeRepo } from '../../protocol/forge';
import type { Gate, MergeMethod } from '../../protocol/gates';
import type { FileChange } from '../../protocol/patchset';

/**
 * What the host asks of a forge. One adapter per provider (github.ts over @octokit/rest, gitlab.ts
 * over @gitbeaker/rest); both are driven in tests against the loopback fake forge
 * (test/servers/fakeForge), which enforces the real APIs' rules. Every method throws a ForgeError
 * on failure; callers turn it into a typed refusal.
 */

/** A pull or merge request as the forge reports it now. */
export interface PullRequestInfo {
  number: number;
  title: string;
  /** The description, as written (data, never instructions). */
  body: string;
  state: 'open' | 'closed' | 'merged';
  draft: boolean;
  /** The forge user who opened it. */
  author: string;
  webUrl: string;
  headRef: string;
  headSha: string;
  baseRef: string;
  /**
   * The base branch's tip now (GitHub `base.sha`; GitLab `diff_refs.start_sha`, '' where GitLab
   * gives no `diff_refs`: list entries, a request it has not diffed yet).
   */
  baseSha: string;
  /** GitLab: the MR's current `diff_refs` (positions must name them); null on GitHub. */
  diffRefs: { baseSha: string; startSha: string; headSha: string } | null;
  /** The repository the head lives in, when it is a fork (`owner/name`); null when it is this one. */
  headRepo: string | null;
}

/** A review (GitHub) or the note carrying the review body (GitLab) that is already on the forge. */
export interface PostedReview {
  /** GitHub review id; GitLab note id. */
  reviewId: number;
  url: string;
  event: ReviewEvent;
  /** Line comments posted with it. */
  comments: number;
  /** GitLab APPROVE: whether the approval is in place. */
  approved?: boolean;
}

/** An issue a request links to, read for context (data). */
/** A review the signed-in user posted earlier, as a re-review reads it. */
export interface EarlierReview {
  reviewId: number;
  url: string;
  /** The head the review was posted on; null when the forge does not say. */
  commitId: string | null;
  state: 'APPROVED' | 'CHANGES_REQUESTED' | 'COMMENTED';
  body: string;
  /** Rennet's marker in its body, when Rennet posted it. */
  markerId: string | null;
  submittedAt: string | null;
  comments: Array<{ path: string; line: number | null; side: 'RIGHT' | 'LEFT'; body: string }>;
}

export interface LinkedIssue {
  number: number;
  title: string;
  body: string;
  webUrl: string;
  state: 'open' | 'closed';
}

/** A request's merge gates as its forge reports them now (protocol/gates.ts; no freshness: that is local). */
export interface PullRequestGates {
  number: number;
  head: string;
  headRef: string;
  baseRef: string;
  state: 'open' | 'closed' | 'merged';
  gates: Gate[];
}

/** What a merge answered. */
export interface MergedPullRequest {
  /** The commit the base branch now points at; '' when the forge does not say. */
  sha: string;
  url: string;
}

export type ForgeErrorKind =
  /** 401, or no token at all. */
  | 'unauthorized'
  /** 403 without a rate limit: the token cannot do this. */
  | 'forbidden'
  | 'not-found'
  /** 422 / 400 / 409: the forge refused the content; `message` carries its words. */
  | 'refused'
  /** Rate limited past the retries. */
  | 'rate-limited'
  /** No answer, a dropped connection, a 5xx past the retries: the mutation may or may not have landed. */
  | 'unreachable'
  /** The request's head is not the one a mutation was pinned to (read before the call, or the forge's own 409): nothing was changed. */
  | 'head-moved';

export class ForgeError extends Error {
  constructor(
    readonly kind: ForgeErrorKind,
    message: string,
    readonly status: number | null = null,
  ) {
    super(message);
    this.name = 'ForgeError';
  }
}

/**
 * What `post` needs of the active patchset beyond the descriptor: its files (`patchset.files`).
 * A comment carries only the file's current path and the placement only the lines' numbers;
 * GitLab's positions also name the file's old path (a rename, a deletion) and, for a range, line
 * codes built from GitLab's line counters (an added line carries the next old line number), which
 * the hunks give. The GitHub adapter does not read it.
 */
export type PatchsetFiles = readonly Pick<FileChange, 'path' | 'oldPath' | 'status' | 'hunks'>[];

/** How an adapter talks to its forge. Every field has a production default; tests shrink the waits and pages. */
export interface ForgeAdapterOptions {
  /** Items per page when listing (default 100, both forges' maximum). Tests use 2 to cross pages. */
  pageSize?: number;
  /**
   * Times a rate-limited request (GitHub 403/429 rate limit, GitLab 429) is sent again after its
   * Retry-After (default 2). A rate-limited request was not processed, so this holds for
   * mutations too. Past it: ForgeError 'rate-limited'.
   */
  rateLimitRetries?: number;
  /** A Retry-After (or rate-limit reset) further away than this, in seconds, is not waited out: 'rate-limited' at once (default 60). */
  maxRetryAfterSeconds?: number;
  /** Milliseconds waited per second of Retry-After (default 1000). Tests shrink it. */
  retryAfterUnitMs?: number;
  /**
   * Times a READ (GET) is sent again after a 5xx or no answer (default 3). A mutation (POST, PUT,
   * PATCH, DELETE) is never re-sent after a 5xx or no answer: it may have landed (a dropped
   * response), and a second review would post. It fails 'unreachable' and the caller looks for
   * the marker (`findPosted`).
   */
  readRetries?: number;
  /** Base of the read retry back-off, in ms (default 1000): waits of 1, 4, 9 × base. */
  readRetryBaseMs?: number;
  /** Ceiling on one HTTP attempt, in ms (default 60 000); a timed-out attempt is 'unreachable'. */
  requestTimeoutMs?: number;
  /**
   * GitHub: space mutations as GitHub asks, to avoid secondary rate limits (plugin-throttling: 1 s
   * between writes, 3 s between content-creating ones such as a review or a pull request). Default
   * true; tests turn it off.
   */
  spaceWrites?: boolean;
}

export interface ForgeAdapter {
  readonly provider: ForgeProvider;
  readonly repo: ForgeRepo;
  /** The login the token belongs to. */
  currentUser(): Promise<string>;
  /**
   * Open requests, newest first (every page, bounded by `limit`). GitLab's list carries no
   * `diff_refs`: its entries have `diffRefs: null` and `baseSha: ''` (read `get` for them).
   */
  listOpen(limit: number): Promise<PullRequestInfo[]>;
  get(number: number): Promise<PullRequestInfo>;
  /** Issues the request links (`#12`, `closes #12`, full URLs to this repository), read for context. */
  linkedIssues(numbers: readonly number[]): Promise<LinkedIssue[]>;
  /**
   * The review the signed-in user already posted with this marker (the body's last line),
   * searching every page; null when none. Only the current user's reviews (GitHub) or notes
   * (GitLab) count: the marker identifies a composition, not who may claim it. GitLab APPROVE: also
   * reports whether the current user's approval is in place.
   *
   * `expected`: the composition's comments. GitLab notes carry no review id, so its adapter counts
   * the user's diff notes matching them (body, path, line) for `comments`; without it, the user's
   * diff notes created in the same second as the body note. GitHub counts the review's own
   * comments and ignores it.
   */
  findPosted(number: number, markerId: string, expected?: readonly ReviewComment[]): Promise<PostedReview | null>;
  /**
   * Posts the composed review pinned to `headSha` in as few requests as the forge allows (GitHub:
   * one createReview with every comment; GitLab: one draft note per comment and one for the body,
   * published in one bulk publish, then the approval for APPROVE). Exactly the descriptor's body
   * and comments. `files`: the active patchset's files (see PatchsetFiles; GitLab needs them).
   *
   * Refused ('refused', nothing sent) when the descriptor is not for this forge, repository,
   * request and head. GitLab: refused when the request's head is no longer `headSha`, and when the
   * user has other pending draft notes on the request (a bulk publish would post them too); the
   * user's drafts that equal one this post creates (left by an attempt that failed before
   * publishing) are deleted first. A mutation whose answer was lost fails 'unreachable' and is
   * never re-sent: look for the marker (`findPosted`) before posting again.
   */
  post(number: number, composed: ComposedReview, headSha: string, files: PatchsetFiles): Promise<PostedReview>;
  /**
   * GitLab APPROVE retry (findPosted found the notes, `approved: false`): the approval alone,
   * pinned to `headSha` (a moved head is 'refused' with GitLab's words).
   */
  approve?(number: number, headSha: string): Promise<void>;
  /**
   * The signed-in user's earlier review of the request, for a re-review: the newest one carrying
   * Rennet's marker, else their newest submitted review; null when they have none. Its commit, its
   * state, its body and its line comments (every page). GitLab: the body note and the diff notes
   * published with it (it has no review object).
   */
  earlierReview?(number: number): Promise<EarlierReview | null>;
  /**
   * The request's merge gates, read now, fail-closed (a gate that cannot be read is pending or
   * failing, never a pass): one per check run and commit status context (GitHub) or per job of
   * the head pipeline and the pipeline itself (GitLab), then draft, mergeable, behind-base,
   * required-reviews and review-at-head (an approval of an earlier commit does not count).
   */
  readGates?(number: number): Promise<PullRequestGates>;
  /**
   * Merges the request pinned to `expectHead`: the live head is read first and a different one is
   * refused ('head-moved', nothing sent); the forge's own 409 for a head that moved during the call
   * is the same refusal. Sent once (a lost answer is 'unreachable': read the request before trying
   * again). The forge's other refusals are 'refused' in its words.
   */
  merge?(number: number, options: { expectHead: string; method: MergeMethod }): Promise<MergedPullRequest>;
  /** The open request for head → base, if any. */
  findOpenFor(headBranch: string, baseBranch: string): Promise<PullRequestInfo | null>;
  create(input: { headBranch: string; baseBranch: string; title: string; body: string }): Promise<PullRequestInfo>;
}

// ─── Shared by the adapters ──────────────────────────────────────────────────────────────────

/** The ForgeErrorKind of an HTTP status (a rate limit on GitHub's 403 is told apart by the adapter). */
export function kindOfStatus(status: number): ForgeErrorKind {
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status === 404 || status === 410) return 'not-found';
  if (status === 429) return 'rate-limited';
  if (status >= 500) return 'unreachable';
  return 'refused';
}

/** `text` with every occurrence of the token replaced: no message ever carries it. */
export function withoutToken(text: string, token: string): string {
  return token.length > 0 ? text.split(token).join('[token]') : text;
}

/** Refuses (nothing sent) a descriptor composed for another forge, repository, request or head. */
export function checkDescriptor(repo: ForgeRepo, number: number, composed: ComposedReview, headSha: string): void {
  const d = composed.descriptor;
  const refuse = (what: string) => {
    throw new ForgeError('refused', `the composed review is for ${what}; nothing was posted`);
  };
  if (d.provider !== repo.provider) refuse(`${d.provider}, not ${repo.provider}`);
  if (d.target.owner.toLowerCase() !== repo.owner.toLowerCase() || d.target.repo.toLowerCase() !== repo.repo.toLowerCase())
    refuse(`${d.target.owner}/${d.target.repo}, not ${repo.owner}/${repo.repo}`);
  if (d.target.number !== number) refuse(`request ${d.target.number}, not ${number}`);
  if (d.target.headSha !== headSha) refuse(`head ${d.target.headSha.slice(0, 12)}, not ${headSha.slice(0, 12)}`);
  if (composed.placements.length !== d.comments.length) refuse('a different set of comments than its placements (it was altered)');
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
