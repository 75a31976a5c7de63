import type { ComposedReview, ForgeProvider, ReviewEvent } from '../../protocol/exits';
import type { ForgeRepo } from '../../protocol/forge';

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
  /** The base branch's tip now (GitHub `base.sha`; GitLab `diff_refs.start_sha`). */
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
export interface LinkedIssue {
  number: number;
  title: string;
  body: string;
  webUrl: string;
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
  | 'unreachable';

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

export interface ForgeAdapter {
  readonly provider: ForgeProvider;
  readonly repo: ForgeRepo;
  /** The login the token belongs to. */
  currentUser(): Promise<string>;
  /** Open requests, newest first (every page, bounded by `limit`). */
  listOpen(limit: number): Promise<PullRequestInfo[]>;
  get(number: number): Promise<PullRequestInfo>;
  /** Issues the request links (`#12`, `closes #12`, full URLs to this repository), read for context. */
  linkedIssues(numbers: readonly number[]): Promise<LinkedIssue[]>;
  /**
   * The review already posted with this marker (the body's last line), searching every page; null
   * when none. GitLab APPROVE: also reports whether the current user's approval is in place.
   */
  findPosted(number: number, markerId: string): Promise<PostedReview | null>;
  /**
   * Posts the composed review pinned to `headSha` in as few requests as the forge allows (GitHub:
   * one createReview with every comment; GitLab: draft notes published in one bulk publish, the
   * body note, then the approval for APPROVE). Exactly the descriptor's body and comments.
   */
  post(number: number, composed: ComposedReview, headSha: string): Promise<PostedReview>;
  /** GitLab APPROVE retry: the approval alone, pinned to `headSha`. */
  approve?(number: number, headSha: string): Promise<void>;
  /** The open request for head → base, if any. */
  findOpenFor(headBranch: string, baseBranch: string): Promise<PullRequestInfo | null>;
  create(input: { headBranch: string; baseBranch: string; title: string; body: string }): Promise<PullRequestInfo>;
}
