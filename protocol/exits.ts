import { z } from 'zod';
import { AskIntent, AskKeyPart, VerdictOverride } from './asks';
import { Lens } from './board';

/**
 * The review exit: what Rennet posts to a forge as one review, composed from the ask projection
 * (host/exits/compose.ts is the pure composer; the forge adapters post exactly its descriptor).
 *
 * A review has two strata: one body, and comments pinned to lines of the forge's diff. An
 * outbound item (a staged `post-review` ask, or a bare line comment) becomes a comment when its
 * captured span lies on lines the forge's diff shows, inside one hunk; otherwise it folds into the
 * body as a note, and `folded` records why. The preview shows the descriptor itself: what is
 * previewed is what posts, and a rebuild at post time must reproduce its `compositionId`.
 */

// ─── Limits ──────────────────────────────────────────────────────────────────────────────────

/** GitHub refuses a review body longer than this (characters). */
export const GITHUB_REVIEW_BODY_MAX_CHARS = 65_536;
/** GitHub refuses a review comment body longer than this (characters). */
export const GITHUB_REVIEW_COMMENT_MAX_CHARS = 65_536;
/** GitLab's text limit on a note (the review body note, each diff discussion), in characters. */
export const GITLAB_NOTE_MAX_CHARS = 1_000_000;

/**
 * Context lines around every hunk of the forge's pull/merge request diff (GitHub and GitLab both
 * show git's default, 3). A forge accepts a comment only on a line its diff shows.
 */
export const FORGE_DIFF_CONTEXT_LINES = 3;

/**
 * Characters of text, per forge, that one body or comment may hold. Counted as UTF-16 code units
 * (JavaScript's `length`), which is never less than the code points a forge counts: the check
 * never passes a text the forge would refuse.
 */
export const FORGE_TEXT_LIMITS = {
  github: { bodyMaxChars: GITHUB_REVIEW_BODY_MAX_CHARS, commentMaxChars: GITHUB_REVIEW_COMMENT_MAX_CHARS },
  gitlab: { bodyMaxChars: GITLAB_NOTE_MAX_CHARS, commentMaxChars: GITLAB_NOTE_MAX_CHARS },
} as const satisfies Record<ForgeProvider, { bodyMaxChars: number; commentMaxChars: number }>;

/** Hex characters of the composition id (SHA-256, whole). */
export const COMPOSITION_ID_HEX_LENGTH = 64;
/** Hex characters of the marker id: the composition id's first 24. */
export const REVIEW_MARKER_ID_HEX_LENGTH = 24;
/** Characters of a quoted span of board prose a body note repeats before it is cut (and says so). */
export const REVIEW_NOTE_QUOTE_MAX_CHARS = 280;

// ─── The idempotency marker ──────────────────────────────────────────────────────────────────

/**
 * The marker is the body's LAST line, exactly `<!-- rennet-review: <24 hex> -->`, nothing after
 * it. An adapter reads a posted body's marker with `readReviewMarker`, which looks at that line
 * only, so text elsewhere in a body can never pass for the marker. No reviewer or model text can
 * open an HTML comment in a composed body either (the composer writes every `<!--` in it as
 * `<!\--`), so none can hide what follows it or reach the marker.
 */
export const REVIEW_MARKER_PREFIX = '<!-- rennet-review: ';
export const REVIEW_MARKER_SUFFIX = ' -->';
const MARKER_LINE = /^<!-- rennet-review: ([0-9a-f]{24}) -->$/;

export const ReviewMarkerId = z.string().regex(/^[0-9a-f]{24}$/, 'not a marker id (24 lowercase hex)');

/** The marker line for a marker id. */
export function reviewMarker(markerId: string): string {
  return `${REVIEW_MARKER_PREFIX}${markerId}${REVIEW_MARKER_SUFFIX}`;
}

/**
 * The marker id of a posted body, read from its last line only (trailing blank lines and line
 * breaks a forge may have normalized to CRLF are tolerated); null when that line is not a marker.
 */
export function readReviewMarker(body: string): string | null {
  const lines = body.replace(/\s+$/, '').split(/\r\n|\r|\n/);
  const match = MARKER_LINE.exec((lines[lines.length - 1] ?? '').trim());
  return match ? (match[1] ?? null) : null;
}

// ─── Targets and payload ─────────────────────────────────────────────────────────────────────

export const ForgeProvider = z.enum(['github', 'gitlab']);
export type ForgeProvider = z.infer<typeof ForgeProvider>;

/** The forge's review event. GitLab has none; its adapter posts notes and, for APPROVE, an approval. */
export const ReviewEvent = z.enum(['APPROVE', 'COMMENT', 'REQUEST_CHANGES']);
export type ReviewEvent = z.infer<typeof ReviewEvent>;

const CommitSha = z.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/, 'not a full commit id');

/**
 * The pull or merge request a review posts to, as the forge reports it.
 * - `headSha`: the request's head commit; must be the active patchset's `head`.
 * - `baseSha`: the commit the forge's diff starts from — the merge-base (GitLab's
 *   `diff_refs.base_sha`; GitHub's compare `merge_base_commit`); must be the patchset's `base`.
 *   Line numbers are placed on the captured diff, so they hold only when the forge's diff is the
 *   same one.
 */
export const ReviewTarget = z.object({
  provider: ForgeProvider,
  /** The forge's host name (github.com, gitlab.com, or a self-hosted one). */
  host: z.string().regex(/^[A-Za-z0-9.-]+(:[0-9]{1,5})?$/, 'not a host name'),
  /** GitHub: the owner; GitLab: the namespace, which may hold subgroups (`group/sub`). */
  owner: z
    .string()
    .min(1)
    .max(255)
    .refine((s) => !s.startsWith('/') && !s.endsWith('/') && !s.includes('//'), 'not an owner or namespace'),
  repo: z
    .string()
    .min(1)
    .max(255)
    .refine((s) => !s.includes('/'), 'not a repository name'),
  number: z.number().int().positive(),
  headSha: CommitSha,
  baseSha: CommitSha,
});
export type ReviewTarget = z.infer<typeof ReviewTarget>;

export const CommentSide = z.enum(['RIGHT', 'LEFT']);
export type CommentSide = z.infer<typeof CommentSide>;

/**
 * One review comment: GitHub's review-comment fields in camelCase (the GitHub adapter maps them to
 * `path`, `line`, `side`, `start_line`, `start_side`, `body`). `line` is the last line of the span;
 * a multi-line comment adds `startLine` (< `line`) and `startSide` (= `side`). RIGHT numbers
 * lines of the head side, LEFT of the base side; `path` is always the file's current path.
 */
export const ReviewComment = z
  .object({
    path: z.string().min(1),
    line: z.number().int().positive(),
    side: CommentSide,
    startLine: z.number().int().positive().optional(),
    startSide: CommentSide.optional(),
    body: z.string().min(1),
  })
  .refine((c) => (c.startLine === undefined) === (c.startSide === undefined), { message: 'startLine and startSide come together' })
  .refine((c) => c.startLine === undefined || (c.startLine < c.line && c.startSide === c.side), {
    message: 'a multi-line comment starts before its line, on the same side',
  });
export type ReviewComment = z.infer<typeof ReviewComment>;

/** Why an outbound item did not become a line comment. */
export const FoldReason = z.enum([
  /** The ask has no anchor (a conclusion from conversation): a body note. */
  'pathless',
  /** The ask quotes board prose, which has no diff line: a body note. */
  'board-prose',
  /** The ask names a Flagged finding that cites no captured code: a body note. */
  'finding-without-code',
  /** The span belongs to another capture than the active patchset; never re-read onto current code: a body note. */
  'other-patchset',
  /** The span names no file of the active patchset on its side (or a side the file lacks): a body note. */
  'not-in-patchset',
  /** The file is binary or a submodule: the forge shows no lines for it: a body note. */
  'binary-or-submodule',
  /** The span reaches past what the capture holds of a truncated file, so no line can be proven shown: a body note. */
  'truncated',
  /** No line of the span is one the forge's diff shows (this includes a file whose change shows no lines): a body note. */
  'outside-diff',
  /** The span is partly on shown lines but not wholly inside one hunk (it spans two, or runs past one's edge): a body note naming the full range. */
  'range-across-hunks',
  /** A bare single-line comment on the exact line of a single-line ask's comment: the ask wins; NOT in the body. */
  'superseded',
]);
export type FoldReason = z.infer<typeof FoldReason>;

/** Whether a fold reason's text travels in the body (every reason but `superseded`). */
export function foldReachesBody(reason: FoldReason): boolean {
  return reason !== 'superseded';
}

/**
 * An outbound item that is not a comment. `ask` is an ask id, or — for a bare line comment — its
 * projection key (`lineCommentKey`, the key of `AskProjection.lineComments`). The two never
 * collide: an ask id never contains `|`, a line-comment key always does (`isLineCommentRef`).
 */
export const FoldedItem = z.object({ ask: z.string().min(1), reason: FoldReason });
export type FoldedItem = z.infer<typeof FoldedItem>;

/** Whether a `FoldedItem.ask` (or a placement's `ref`) names a bare line comment rather than an ask. */
export function isLineCommentRef(ref: string): boolean {
  return ref.includes('|');
}

/**
 * What is posted, exactly: the CLI's dry run prints this object, the preview renders it, and the
 * adapter sends its `event`, `body` and `comments` unchanged. `folded` is the ledger of outbound
 * items that are not comments, in outbound order (asks by staging order, then bare line comments
 * by key); it does not egress.
 */
export const ReviewDescriptor = z.object({
  /** SHA-256 (hex) of the canonical composition: session, patchset, target, event, body without its marker, comments. */
  compositionId: z.string().regex(/^[0-9a-f]{64}$/),
  provider: ForgeProvider,
  target: z.object({ owner: z.string(), repo: z.string(), number: z.number().int().positive(), headSha: CommitSha }),
  event: ReviewEvent,
  /** Never empty; its last line is the marker (`readReviewMarker`). */
  body: z.string().min(1),
  /** In (path code-unit order, start line, end line, ask ordinal) order; see host/exits/compose.ts. */
  comments: z.array(ReviewComment),
  folded: z.array(FoldedItem),
});
export type ReviewDescriptor = z.infer<typeof ReviewDescriptor>;

// ─── Grounding (facts an opener states) ──────────────────────────────────────────────────────

/** What a lens's board came to in the active generation. */
export const GroundingLensState = z.enum(['settled', 'absent', 'failed']);
export type GroundingLensState = z.infer<typeof GroundingLensState>;

export const LensGrounding = z.object({
  lens: Lens,
  state: GroundingLensState,
  /** Sections on the board (0 unless settled). */
  sections: z.number().int().nonnegative(),
  /** Findings on the board (Flagged; 0 elsewhere). */
  findings: z.number().int().nonnegative(),
  /** Noise groups on the board (Noise; 0 elsewhere): Noise groups skippable hunks, it writes no sections. */
  groups: z.number().int().nonnegative(),
});
export type LensGrounding = z.infer<typeof LensGrounding>;

/**
 * The persisted facts the deterministic opener states (the patchset's head and totals come from
 * the patchset itself). Findings: open = not dismissed and not asked about (`flaggedOpenCount`).
 */
export const ReviewGrounding = z.object({
  lenses: z.array(LensGrounding).refine((ls) => new Set(ls.map((l) => l.lens)).size === ls.length, { message: 'a lens is listed twice' }),
  findings: z.object({ open: z.number().int().nonnegative(), dismissed: z.number().int().nonnegative() }),
});
export type ReviewGrounding = z.infer<typeof ReviewGrounding>;

// ─── The preview (descriptor + what sits beside it) ──────────────────────────────────────────

/** A line of a placed comment on both sides of the diff (a context line has both numbers). */
export const DiffLinePair = z.object({ oldLine: z.number().int().positive().nullable(), newLine: z.number().int().positive().nullable() });
export type DiffLinePair = z.infer<typeof DiffLinePair>;

/**
 * Where each comment came from, beside the descriptor (index = the comment's index). `start` and
 * `end` give both sides' numbers of its first and last line: GitLab's positions need them.
 */
export const ReviewPlacement = z.object({
  /** An ask id, or a bare line comment's key (`isLineCommentRef`). */
  ref: z.string().min(1),
  intent: AskIntent,
  start: DiffLinePair,
  end: DiffLinePair,
});
export type ReviewPlacement = z.infer<typeof ReviewPlacement>;

/** One folded item as the preview explains it (index = its index in `descriptor.folded`). */
export const ReviewFoldNote = z.object({
  ref: z.string().min(1),
  reason: FoldReason,
  intent: AskIntent,
  /** The anchor in words, as the body note names it. */
  where: z.string(),
  /** Whether its text is in the body (all but `superseded`). */
  inBody: z.boolean(),
  /** For `superseded`: the ask whose comment took the line. */
  supersededBy: AskKeyPart.nullable(),
});
export type ReviewFoldNote = z.infer<typeof ReviewFoldNote>;

/** How the event was reached; the preview states it beside the descriptor (never forge text). */
export const ReviewVerdict = z.object({
  /** What the outbound set proposes. */
  derived: ReviewEvent,
  override: VerdictOverride.nullable(),
  /** The event the forge receives. */
  event: ReviewEvent,
  /** Set when the review is on the reviewer's own request and the wanted event had to become COMMENT. */
  downgradedFrom: ReviewEvent.nullable(),
  /** Why, in words, when downgraded; null otherwise. */
  notice: z.string().nullable(),
});
export type ReviewVerdict = z.infer<typeof ReviewVerdict>;

export const ComposedReview = z.object({
  descriptor: ReviewDescriptor,
  markerId: ReviewMarkerId,
  verdict: ReviewVerdict,
  placements: z.array(ReviewPlacement),
  foldNotes: z.array(ReviewFoldNote),
});
export type ComposedReview = z.infer<typeof ComposedReview>;

// ─── Refusals ────────────────────────────────────────────────────────────────────────────────

/** Why a review is not composed (or, at post time, not posted). */
export const ComposeRefusalReason = z.enum([
  /** An input failed its schema (target, grounding, session id, opener). */
  'invalid-input',
  /** The target's head or merge-base is not the active patchset's: its lines would land elsewhere. */
  'target-mismatch',
  /** The composed body is over the forge's limit (nothing is cut). */
  'body-too-long',
  /** A comment body is over the forge's limit (nothing is cut); the detail names its source. */
  'comment-too-long',
  /** The rebuilt composition differs from the one previewed. */
  'stale-composition',
]);
export type ComposeRefusalReason = z.infer<typeof ComposeRefusalReason>;

export const ComposeRefusal = z.object({
  reason: ComposeRefusalReason,
  message: z.string(),
  detail: z.record(z.string(), z.string()).optional(),
});
export type ComposeRefusal = z.infer<typeof ComposeRefusal>;

/** The deterministic review-body line GitLab gets first (it has no review event). */
export const GITLAB_VERDICT_LABELS: Record<ReviewEvent, string> = {
  APPROVE: '**Verdict: approved**',
  REQUEST_CHANGES: '**Verdict: changes requested**',
  COMMENT: '**Verdict: comments**',
};

/** The wire form of a review composition: a composed review or the refusal. */
export const ComposeReviewResult = z.discriminatedUnion('ok', [z.object({ ok: z.literal(true), value: ComposedReview }), z.object({ ok: z.literal(false), error: ComposeRefusal })]);
export type ComposeReviewResult = z.infer<typeof ComposeReviewResult>;

// ─── Publication (the receipt a posted review leaves) ────────────────────────────────────────

/** The session event a publication's receipt is kept under (written before the post answers). */
export const PUBLISH_RECEIPT_EVENT_KIND = 'publish.receipt';

/** A review on the forge, as the host recorded it: by session and marker. */
export const PublishReceipt = z.object({
  sessionId: z.string().min(1),
  markerId: ReviewMarkerId,
  compositionId: z.string().regex(/^[0-9a-f]{64}$/),
  provider: ForgeProvider,
  number: z.number().int().positive(),
  /** The review's page on the forge. */
  url: z.string(),
  reviewId: z.number().int(),
  event: ReviewEvent,
  /** Line comments posted with it. */
  comments: z.number().int().nonnegative(),
  /** True when the post found the review already on the forge (a retry after a lost answer) instead of creating one. */
  reused: z.boolean(),
  /** The head the review is pinned to. */
  headSha: CommitSha,
  postedAt: z.string(),
  /**
   * What was posted, as composed (receipts written before it was kept lack it). A post sends
   * what it carried — its asks retire — so this is the one record of the review's text.
   */
  review: ComposedReview.optional(),
});
export type PublishReceipt = z.infer<typeof PublishReceipt>;

/** What the Hand off view and the preview show for a pull-request session. */
export const ReviewPreview = z.object({
  sessionId: z.string(),
  target: ReviewTarget,
  /** "Pull Request #12", "Merge Request !7". */
  label: z.string(),
  webUrl: z.string(),
  entry: z.enum(['teammate', 'own']),
  /** The exact review that would post, or why none can be composed. */
  composed: ComposeReviewResult,
  /**
   * Where the exit stands, if posted: the receipt of this composition's marker, or — when nothing
   * has been staged or chosen since the last review posted on this head — that review's (its
   * `review` is what the preview shows then). Post is not offered while it is set.
   */
  receipt: PublishReceipt.nullable(),
  /** Every receipt of the session, newest first (earlier posts of earlier compositions). */
  history: z.array(PublishReceipt),
});
export type ReviewPreview = z.infer<typeof ReviewPreview>;

// ─── Open pull request: the model's polish of the drafted text ───────────────────────────────

/**
 * What became of the model's pass over an own-branch request's drafted title and description:
 * - `off`: no model pass (no harness configured, the branch has no review to read, or both parts
 *   are the reviewer's edit) — the deterministic draft, `reason` says why;
 * - `polished`: the text is the harness's (`reused`: the stored text of the same evidence, no new turn);
 * - `failed`: the pass did not hand in both parts; the deterministic draft stands, `message` says why.
 */
export const PrPolish = z.discriminatedUnion('state', [
  z.object({ state: z.literal('off'), reason: z.string() }),
  z.object({ state: z.literal('polished'), harness: z.string(), model: z.string().nullable(), evidenceId: z.string().regex(/^[0-9a-f]{64}$/), reused: z.boolean() }),
  z.object({ state: z.literal('failed'), harness: z.string().nullable(), model: z.string().nullable(), message: z.string() }),
]);
export type PrPolish = z.infer<typeof PrPolish>;
