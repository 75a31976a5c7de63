import { z } from 'zod';
import { AskCommand, AskProjection, QuoteAnchorInput, VerdictOverride } from './asks';
import { Lens } from './board';
import { ReviewPreview } from './exits';
import { ErrorCode } from './result';
import { GenerationSnapshot } from './review';
import { GenerationDelta } from './generationDelta';
import { Round } from './rounds';
import { SessionSnapshot } from './session';

/**
 * The webview ⇄ extension contract (postMessage). The webview owns only UI state; host data
 * arrives as full snapshots after the webview says it is ready, and the generation shown also as
 * deltas on top of the last one posted.
 */

/**
 * Panel state VS Code keeps across reloads (webview serializer). `lens` and `generationId` are the
 * reviewer's reading position; both optional (older saved states have neither), and an unreadable
 * value falls back to "not chosen" rather than losing the session.
 */
export const PanelState = z.object({
  sessionId: z.string(),
  /** The lens the reviewer chose; absent: the default (Flagged when it has a board). */
  lens: Lens.optional().catch(undefined),
  /** The frozen generation the reviewer pinned with the switcher; absent or null: the live one. */
  generationId: z.string().nullable().optional().catch(undefined),
});
export type PanelState = z.infer<typeof PanelState>;

export const HostStatus = z.object({
  state: z.enum(['starting', 'running', 'restarting', 'failed']),
  message: z.string().nullable(),
});
export type HostStatus = z.infer<typeof HostStatus>;

/** extension → webview */
export const ToWebview = z.discriminatedUnion('type', [
  z.object({ type: z.literal('rennet/panel/snapshot'), snapshot: SessionSnapshot }),
  z.object({ type: z.literal('rennet/panel/hostStatus'), status: HostStatus }),
  z.object({ type: z.literal('rennet/panel/error'), message: z.string() }),
  /** The session's current generation (or the one the panel asked for), whole. null: none yet. */
  z.object({ type: z.literal('rennet/panel/generation'), snapshot: GenerationSnapshot.nullable() }),
  /**
   * One lane of the shown generation changed (protocol/generationDelta.ts), on top of the last
   * generation posted; one that does not apply there is answered with `rennet/panel/generationGap`.
   */
  z.object({ type: z.literal('rennet/panel/generationDelta'), delta: GenerationDelta }),
  /**
   * The session's ask projection, whole, after every append to its log (and after ready). `undo`
   * names the reviewer's last act this window can still undo (null: nothing to undo).
   */
  z.object({ type: z.literal('rennet/panel/asks'), projection: AskProjection, undo: z.object({ label: z.string() }).nullable() }),
  /** Select `lens` and bring element `elementId` into view (a gutter hover's link, a thread's "Show on board"). */
  z.object({ type: z.literal('rennet/panel/reveal'), generationId: z.string(), lens: Lens, elementId: z.string() }),
  /** Progress of an Explain the panel asked for (`requestId` is the panel's own). */
  z.object({
    type: z.literal('rennet/panel/explainStatus'),
    requestId: z.string(),
    state: z.enum(['working', 'answered', 'failed']),
    /** The quote thread the question and the answer live in, once it exists. */
    threadId: z.string().nullable(),
    /** Why it failed (no harness configured, the model's error); null otherwise. */
    message: z.string().nullable(),
  }),
  /** An ask command from the panel was refused: nothing was appended. */
  z.object({ type: z.literal('rennet/panel/askRefused'), message: z.string() }),
  /**
   * The session's rounds (its ledger), whole, oldest first: after ready and after every change the
   * extension hears of (`rennet/rounds/changed`). The panel's run view, report greeting and ledger
   * are drawn from these records alone.
   */
  z.object({ type: z.literal('rennet/panel/rounds'), sessionId: z.string(), rounds: z.array(Round) }),
]);
export type ToWebview = z.infer<typeof ToWebview>;

/**
 * Where in a round's diff to open: a file, and a line on one side of it (`base` = the round's
 * range.from, `head` = its range.to; null: the file's diff as a whole).
 */
export const RoundDiffFocus = z.object({
  path: z.string().min(1).max(4096),
  side: z.enum(['base', 'head']),
  line: z.number().int().positive().nullable(),
});
export type RoundDiffFocus = z.infer<typeof RoundDiffFocus>;

/** webview → extension */
export const FromWebview = z.discriminatedUnion('type', [
  /** The app mounted and listens; the extension answers with a snapshot. */
  z.object({ type: z.literal('rennet/panel/ready') }),
  /** Open a captured file in the editor. */
  z.object({ type: z.literal('rennet/panel/openFile'), path: z.string(), side: z.enum(['base', 'head']) }),
  /** Capture the target again (new commits on the branch, edits in the working tree). */
  z.object({ type: z.literal('rennet/panel/refresh') }),
  /** Open a cited range in the editor (head: the workspace file when unchanged, else the captured blob). */
  z.object({
    type: z.literal('rennet/panel/openCitation'),
    path: z.string(),
    side: z.enum(['base', 'head']),
    startLine: z.number().int().positive(),
    endLine: z.number().int().positive(),
  }),
  /**
   * A generation delta did not apply on the generation the panel shows (a revision missed, another
   * stream): the panel asks for the generation whole, and says why (logged by the extension).
   */
  z.object({
    type: z.literal('rennet/panel/generationGap'),
    generationId: z.string().max(200),
    reason: z.string().max(2000),
  }),
  /** Show a frozen generation (read-only) or, with null, the live one. */
  z.object({ type: z.literal('rennet/panel/selectGeneration'), generationId: z.string().nullable() }),
  /** Draft the lens boards for the session's active patchset (again). */
  z.object({ type: z.literal('rennet/panel/runLenses') }),
  /** One reviewer act on the ask log (stage, edit, dismissFinding, quoteOpen, …); the host mints ids. */
  z.object({ type: z.literal('rennet/panel/askCommand'), command: AskCommand }),
  /** Undo the reviewer's last act in this session (the newest receipt the extension holds). */
  z.object({ type: z.literal('rennet/panel/undo') }),
  /** Explain a span of board prose through the configured harness, in a thread anchored to it. */
  z.object({
    type: z.literal('rennet/panel/explain'),
    requestId: z.string().min(1).max(64),
    anchor: QuoteAnchorInput,
    /** An open thread on exactly this anchor to ask in again (else the host opens one). */
    threadId: z.string().optional(),
  }),
  /**
   * Open a round's own diff, read-only (range.from → range.to of its workspace); with `at`, one
   * file of it at a line (a report's evidence). Never the review's diff: no commenting, no marks.
   */
  z.object({ type: z.literal('rennet/panel/openRoundDiff'), roundId: z.string().min(1).max(200), at: RoundDiffFocus.optional() }),
]);
export type FromWebview = z.infer<typeof FromWebview>;

// ─── The review preview (a second root of the same bundle: `<div id="root" data-view="review-preview">`) ──

/** The view a webview page boots into: the board panel, or the preview of a forge review. */
export const WebviewView = z.enum(['board', 'review-preview']);
export type WebviewView = z.infer<typeof WebviewView>;

/** Preview panel state VS Code keeps across reloads (its serializer reopens the same session's preview). */
export const PreviewState = z.object({ sessionId: z.string() });
export type PreviewState = z.infer<typeof PreviewState>;

/** The request's live head against the capture (`rennet/pr/freshness`), as the preview shows it. */
export const PreviewFreshness = z.object({
  capturedHeadSha: z.string(),
  liveHeadSha: z.string(),
  moved: z.boolean(),
  /** The live head is an ancestor of the captured one: how many commits the request lacks (a round's, not pushed yet). */
  unpushed: z.number().int().positive().optional(),
  state: z.enum(['open', 'closed', 'merged']),
});
export type PreviewFreshness = z.infer<typeof PreviewFreshness>;

/** Why the last Post did not post (the host's typed refusal), stated where the Post button is. */
export const PreviewPostRefusal = z.object({
  code: ErrorCode,
  message: z.string(),
  /** The composition the reviewer clicked Post on. */
  compositionId: z.string(),
  /** stale-composition: the preview was composed again after the refusal; what is shown now is the new one. */
  repreviewed: z.boolean(),
});
export type PreviewPostRefusal = z.infer<typeof PreviewPostRefusal>;

/** Everything the preview draws, sent whole after `ready` and after every change. */
export const PreviewSnapshot = z.object({
  sessionId: z.string(),
  /** The exact review that would post now; null while it is read, or when it cannot be (`error`). */
  preview: ReviewPreview.nullable(),
  /** Why there is no preview (the host's words); null when there is one or it is being read. */
  error: z.string().nullable(),
  /** The request's live head; null until it was read (or when it could not be: `freshnessError`). */
  freshness: PreviewFreshness.nullable(),
  freshnessError: z.string().nullable(),
  /** A Post is in flight: the Post button is disabled until it answers. */
  posting: z.boolean(),
  /** The last Post's refusal, until the next Post or until the review shown changes again. */
  refusal: PreviewPostRefusal.nullable(),
});
export type PreviewSnapshot = z.infer<typeof PreviewSnapshot>;

/** extension → preview webview */
export const ToPreview = z.discriminatedUnion('type', [
  z.object({ type: z.literal('rennet/preview/snapshot'), snapshot: PreviewSnapshot }),
  z.object({ type: z.literal('rennet/preview/hostStatus'), status: HostStatus }),
]);
export type ToPreview = z.infer<typeof ToPreview>;

/** Repairs the preview offers beside a refusal; the extension runs them (sign-in, token, settings). */
export const PreviewRepair = z.enum(['sign-in-github', 'set-gitlab-token', 'forge-settings']);
export type PreviewRepair = z.infer<typeof PreviewRepair>;

/** preview webview → extension */
export const FromPreview = z.discriminatedUnion('type', [
  /** The preview mounted and listens; the extension answers with a snapshot. */
  z.object({ type: z.literal('rennet/preview/ready') }),
  /** Post the review shown, named by its composition id (the host refuses any other composition). */
  z.object({ type: z.literal('rennet/preview/post'), compositionId: z.string().regex(/^[0-9a-f]{64}$/) }),
  /** The reviewer's verdict override (null: clear it), a durable ask-log act; the preview is composed again. */
  z.object({ type: z.literal('rennet/preview/setVerdict'), verdict: VerdictOverride.nullable() }),
  /** Compose the preview again and re-read the request's head. */
  z.object({ type: z.literal('rennet/preview/refresh') }),
  /** Capture the request's new head as the session's next patchset (Rennet: Capture New Head). */
  z.object({ type: z.literal('rennet/preview/captureNewHead') }),
  /** Open a link the preview shows (the request, a posted review): only http(s) on the forge's host is opened. */
  z.object({ type: z.literal('rennet/preview/openLink'), url: z.string().max(4096) }),
  z.object({ type: z.literal('rennet/preview/repair'), action: PreviewRepair }),
]);
export type FromPreview = z.infer<typeof FromPreview>;
