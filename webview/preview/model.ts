/**
 * Every word the review preview shows, and what its Post area is, decided from the snapshot the
 * extension sends. Pure (no DOM, no preact): PreviewApp.tsx draws these answers, and
 * test/unit/webview/preview.model.test.ts tests them on reviews composed by the host's own composer.
 */
import {
  readReviewMarker,
  type VerdictOverride,
  type CommentSide,
  type ComposedReview,
  type ComposeRefusalReason,
  type FoldReason,
  type ForgeProvider,
  type PublishReceipt,
  type ReviewComment,
  type ReviewEvent,
  type ReviewPreview,
  type ReviewVerdict,
  type PreviewPostRefusal,
  type PreviewRepair,
  type PreviewSnapshot,
} from '../../protocol';

export function forgeName(provider: ForgeProvider): string {
  return provider === 'gitlab' ? 'GitLab' : 'GitHub';
}

const EVENT_WORDS: Record<ReviewEvent, string> = { APPROVE: 'Approve', COMMENT: 'Comment', REQUEST_CHANGES: 'Request changes' };

/** The forge's review event in words: "Approve", "Comment", "Request changes". */
export function eventWords(event: ReviewEvent): string {
  return EVENT_WORDS[event];
}

const OVERRIDE_EVENT: Record<VerdictOverride, ReviewEvent> = { approve: 'APPROVE', comment: 'COMMENT', 'request-changes': 'REQUEST_CHANGES' };

/** The verdict control's choices, in order; `null` clears the override (the asks decide again). */
export const VERDICT_CHOICES: ReadonlyArray<{ value: VerdictOverride | null; label: string }> = [
  { value: 'approve', label: 'Approve' },
  { value: 'comment', label: 'Comment' },
  { value: 'request-changes', label: 'Request changes' },
  { value: null, label: 'As the asks propose' },
];

/** Why the asks propose what they propose: the composer's rule, in words. */
const DERIVED_WHY: Record<ReviewEvent, string> = {
  REQUEST_CHANGES: 'a staged change request makes it Request changes',
  COMMENT: 'comments and questions, with no change request, make it Comment',
  APPROVE: 'with nothing asked, the review approves',
};

export interface VerdictView {
  /** What the forge receives, in words. */
  event: string;
  /** How that was reached. */
  how: string;
  /** Set when the wanted verdict had to become Comment (the reviewer's own request). */
  downgrade: string | null;
  /** The override in force (null: none); the control shows it selected. */
  override: VerdictOverride | null;
}

export function verdictView(verdict: ReviewVerdict, provider: ForgeProvider): VerdictView {
  const derived = eventWords(verdict.derived);
  const how =
    verdict.override === null
      ? `Proposed from your asks: ${DERIVED_WHY[verdict.derived]}.`
      : OVERRIDE_EVENT[verdict.override] === verdict.derived
        ? `Your choice, which is also what your asks propose (${derived}).`
        : `Your choice; your asks propose ${derived}.`;
  const downgrade = verdict.downgradedFrom
    ? (verdict.notice ?? `On your own request ${forgeName(provider)} takes no ${eventWords(verdict.downgradedFrom)}: it posts as ${eventWords(verdict.event)}.`)
    : null;
  return { event: eventWords(verdict.event), how, downgrade, override: verdict.override };
}

// ─── Comments ────────────────────────────────────────────────────────────────────────────────

/** RIGHT numbers the head side (new), LEFT the base side (old). */
export function sideWords(side: CommentSide): string {
  return side === 'RIGHT' ? 'new side' : 'old side';
}

/** Where a comment posts: "src/a.ts · new side · line 10", "… · lines 8–10". */
export function commentWhere(comment: Pick<ReviewComment, 'path' | 'side' | 'line' | 'startLine'>): string {
  const lines = comment.startLine !== undefined ? `lines ${comment.startLine}–${comment.line}` : `line ${comment.line}`;
  return `${comment.path} · ${sideWords(comment.side)} · ${lines}`;
}

// ─── The body ────────────────────────────────────────────────────────────────────────────────

/**
 * The body as the forge shows it (its last line, the idempotency marker, is an HTML comment the
 * forge hides) and the marker id; the raw view shows the body whole.
 */
export function splitMarker(body: string): { shown: string; markerId: string | null } {
  const markerId = readReviewMarker(body);
  if (!markerId) return { shown: body, markerId: null };
  const lines = body.replace(/\s+$/, '').split(/\r\n|\r|\n/);
  lines.pop();
  return { shown: lines.join('\n').replace(/\s+$/, ''), markerId };
}

// ─── Folded asks ─────────────────────────────────────────────────────────────────────────────

/** Why an ask is not a line comment, in words (one per reason). */
export const FOLD_REASON_WORDS: Record<FoldReason, string> = {
  pathless: 'It names no code (a conclusion from conversation), so it is a note in the body.',
  'board-prose': 'It quotes board prose, which has no line on the forge’s diff, so it is a note in the body.',
  'finding-without-code': 'It is about a Flagged finding that cites no captured code, so it is a note in the body.',
  'other-patchset': 'It was written on an earlier capture; its lines are never re-read onto the current code, so it is a note in the body.',
  'not-in-patchset': 'It names no file of the capture under review on its side, so it is a note in the body.',
  'binary-or-submodule': 'Its file is binary or a submodule, which the forge shows no lines of, so it is a note in the body.',
  truncated: 'It reaches past what the capture holds of a truncated file, so no line can be shown to be on the diff: a note in the body.',
  'outside-diff': 'None of its lines is on the forge’s diff (which shows each change with 3 lines around it), so it is a note in the body.',
  'range-across-hunks': 'Its range is not inside one hunk of the forge’s diff, so it is a note in the body naming the whole range.',
  superseded: 'A bare line comment on the same line as an ask’s comment: the ask’s comment posts and this one does not.',
};

// ─── The Post area ───────────────────────────────────────────────────────────────────────────

export type PostArea =
  /** Nothing to post from yet: the preview is being read, or could not be (message says why). */
  | { kind: 'unavailable'; message: string }
  /** The host refuses to compose this review (body too long, …): stated where Post would be. */
  | { kind: 'cannot-compose'; reason: ComposeRefusalReason; message: string }
  /** This composition is on the forge: what was posted replaces the Post button. */
  | { kind: 'posted'; receipt: PublishReceipt; words: string; reused: string | null }
  /** One Post button for this composition; disabled only while a post is in flight. */
  | { kind: 'post'; compositionId: string; disabled: boolean; label: string };

/**
 * The review the preview shows: the composition that would post, or — when the exit stands at a
 * review posted earlier with nothing staged since — that review as it was posted.
 */
export function shownReview(preview: ReviewPreview): { review: ComposedReview; posted: boolean } | null {
  const receipt = preview.receipt;
  const composed = preview.composed.ok ? preview.composed.value : null;
  if (receipt?.review && receipt.compositionId !== composed?.descriptor.compositionId) return { review: receipt.review, posted: true };
  return composed ? { review: composed, posted: false } : null;
}

/** "Posted: Approve · 2 comments". */
export function receiptWords(receipt: PublishReceipt): string {
  return `Posted: ${eventWords(receipt.event)} · ${receipt.comments} comment${receipt.comments === 1 ? '' : 's'}`;
}

/** A reused receipt (a retry found the review on the forge) in words; null for a fresh post. */
export function reusedWords(receipt: PublishReceipt): string | null {
  return receipt.reused ? `already on ${forgeName(receipt.provider)}: a retry found this review there, so it was not posted twice` : null;
}

/** `pending`: the reviewer clicked Post and the extension has not said it is posting yet. */
export function postArea(snapshot: PreviewSnapshot, pending: boolean): PostArea {
  const preview = snapshot.preview;
  if (!preview) return { kind: 'unavailable', message: snapshot.error ?? 'Composing the review…' };
  if (preview.receipt) return { kind: 'posted', receipt: preview.receipt, words: receiptWords(preview.receipt), reused: reusedWords(preview.receipt) };
  if (!preview.composed.ok) return { kind: 'cannot-compose', reason: preview.composed.error.reason, message: preview.composed.error.message };
  const posting = snapshot.posting || pending;
  return {
    kind: 'post',
    compositionId: preview.composed.value.descriptor.compositionId,
    disabled: posting,
    label: posting ? 'Posting…' : `Post to ${forgeName(preview.target.provider)}`,
  };
}

/** Compose refusals, in words beside the host's message. */
export const COMPOSE_REFUSAL_WORDS: Record<ComposeRefusalReason, string> = {
  'invalid-input': 'The review cannot be composed from what the session holds.',
  'target-mismatch': 'The request’s head or base is not the capture under review, so its lines would land elsewhere.',
  'body-too-long': 'The review body is longer than the forge accepts; nothing is cut.',
  'comment-too-long': 'A comment is longer than the forge accepts; nothing is cut.',
  'stale-composition': 'The review changed since it was composed.',
};

// ─── A refused post ──────────────────────────────────────────────────────────────────────────

export interface RefusalView {
  title: string;
  message: string;
  /** What the reviewer can do about it, beside the message (null: nothing obvious). */
  repair: { action: PreviewRepair | 'capture-new-head'; label: string } | null;
  note: string | null;
}

export function refusalView(refusal: PreviewPostRefusal, provider: ForgeProvider | null): RefusalView {
  const forge = provider ? forgeName(provider) : 'the forge';
  switch (refusal.code) {
    case 'stale-composition':
      return {
        title: 'The review changed since it was shown',
        message: refusal.message,
        repair: null,
        note: refusal.repreviewed
          ? 'It was composed again: what is shown now is what Post sends. Read it, then Post again. Nothing was posted.'
          : 'Nothing was posted. Compose it again, read it, then Post.',
      };
    case 'head-moved':
      return {
        title: 'The request moved since it was captured',
        message: refusal.message,
        repair: { action: 'capture-new-head', label: 'Capture New Head' },
        note: 'Nothing was posted. Capture the new head as the next patchset, read it, then post.',
      };
    case 'forge-unauthorized':
      return provider === 'gitlab'
        ? {
            title: `No credentials for ${forge}`,
            message: refusal.message,
            repair: { action: 'set-gitlab-token', label: 'Set GitLab Token' },
            note: 'Rennet posts with the token “Rennet: Set GitLab Token” stores (or GITLAB_TOKEN, or the glab CLI’s login). Nothing was posted.',
          }
        : {
            title: `No credentials for ${forge}`,
            message: refusal.message,
            repair: { action: 'sign-in-github', label: 'Sign in to GitHub' },
            note: 'Rennet posts with your VS Code GitHub sign-in (Accounts menu), or GITHUB_TOKEN, or the gh CLI’s login. Nothing was posted.',
          };
    case 'forge-failed':
      return {
        title: `${forge} refused the review or could not be reached`,
        message: refusal.message,
        repair: null,
        note: 'Posting again is safe: a review that landed is found by its marker, never posted twice.',
      };
    case 'host-unavailable':
      return { title: 'The Rennet host did not answer', message: refusal.message, repair: null, note: 'Posting again is safe: a review that landed is found by its marker.' };
    default:
      return {
        title: 'Not posted',
        message: refusal.message,
        repair: /not a registered forge|rennet\.forges|RENNET_FORGES/.test(refusal.message) ? { action: 'forge-settings', label: 'Open Settings' } : null,
        note: null,
      };
  }
}

// ─── The request's head ──────────────────────────────────────────────────────────────────────

export type FreshnessView =
  | { kind: 'checking'; text: string }
  | { kind: 'fresh'; text: string }
  | { kind: 'moved'; text: string; liveHeadSha: string }
  | { kind: 'unpushed'; text: string }
  | { kind: 'closed'; text: string }
  | { kind: 'unknown'; text: string };

export function freshnessView(snapshot: Pick<PreviewSnapshot, 'freshness' | 'freshnessError'>): FreshnessView {
  const f = snapshot.freshness;
  if (snapshot.freshnessError !== null) return { kind: 'unknown', text: `The request’s head could not be read: ${snapshot.freshnessError}` };
  if (!f) return { kind: 'checking', text: 'Reading the request’s head…' };
  if (f.moved && f.unpushed) {
    // Capturing the request's head would go back to before the round: the way on is a push.
    return {
      kind: 'unpushed',
      text: `The request’s head ${f.liveHeadSha.slice(0, 7)} is ${f.unpushed} commit${f.unpushed === 1 ? '' : 's'} behind ${f.capturedHeadSha.slice(0, 7)}, the head this review read: push your branch (Open pull request… in the Hand off view reuses this request), then post.`,
    };
  }
  if (f.moved) {
    return {
      kind: 'moved',
      text: `The request’s head moved to ${f.liveHeadSha.slice(0, 7)} since this review captured ${f.capturedHeadSha.slice(0, 7)}: a review is posted only on the head it read.`,
      liveHeadSha: f.liveHeadSha,
    };
  }
  if (f.state !== 'open') return { kind: 'closed', text: `The request is ${f.state}: a review is posted only to an open request.` };
  return { kind: 'fresh', text: `The request’s head is still ${f.liveHeadSha.slice(0, 7)}, the one this review read.` };
}

// ─── The target ──────────────────────────────────────────────────────────────────────────────

/** "Pull Request #12 · acme/widgets" and who the review is for. */
export function targetWords(preview: Pick<ReviewPreview, 'label' | 'target' | 'entry'>): { title: string; entry: string } {
  return {
    title: `${preview.label} · ${preview.target.owner}/${preview.target.repo}`,
    entry: preview.entry === 'own' ? 'your own request' : 'a teammate’s request',
  };
}

/** Earlier posts of this session (not the shown composition's), newest first. */
export function earlierPosts(preview: Pick<ReviewPreview, 'history' | 'receipt'>): PublishReceipt[] {
  return preview.history.filter((r) => r.markerId !== preview.receipt?.markerId);
}

/** "1 comment", "3 folded asks". */
export function count(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
