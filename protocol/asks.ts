import { z } from 'zod';
import { CitationSide, Lens } from './board';

/**
 * Asks: what the reviewer concludes, staged as typed messages (anchor, text, intent, exit lane),
 * plus the other durable reviewer acts that live on the same per-session log — quote threads,
 * the verdict override, bare line comments and finding dispositions.
 *
 * Three layers, all here so extension, host and webview share them:
 * - `AskCommand`: what a client sends (`rennet/asks/command`). No ids, no timestamps: the host
 *   mints both. Size limits are enforced here.
 * - `AskEvent`: what the host appends to the session's event log (kind `ask.<type>`), one per
 *   command. Carries every id and timestamp, so folding is pure. Two events exist only as
 *   inverses (`quoteRetract`, `quoteDiscard`) and one only as a host act (`quoteAnchor`: a round
 *   re-anchors a quote thread on its successor board, or detaches it); every event has an exact
 *   inverse event.
 * - `AskProjection`: the fold of the log. Never stored; always recomputed from events.
 *
 * Host code: host/asks/ (fold.ts is the pure fold; log.ts appends through the store).
 */

// ─── Limits ──────────────────────────────────────────────────────────────────────────────────

/** Largest ask body, line comment, thread message or edit, in UTF-8 bytes. */
export const ASK_TEXT_MAX_BYTES = 64 * 1024;
/** Largest quoted span of board prose a quote anchor carries, in UTF-8 bytes. */
export const ASK_QUOTE_MAX_BYTES = 16 * 1024;
/** Largest retirement reason, in UTF-8 bytes. */
export const ASK_REASON_MAX_BYTES = 4 * 1024;
/** Longest repo-relative path an anchor names, in characters. */
export const ASK_PATH_MAX_CHARS = 4096;
/** Messages one quote thread holds; a reply past it is refused ('limit'). */
export const ASK_THREAD_MAX_MESSAGES = 500;
/** Asks (staged and retired) one session holds; a stage past it is refused ('limit'). */
export const ASK_MAX_ASKS = 5000;
/** Quote threads one session holds. */
export const ASK_MAX_QUOTE_THREADS = 2000;
/** Bare line comments one session holds. */
export const ASK_MAX_LINE_COMMENTS = 5000;
/** Ceiling on one Explain turn in the host; past it the turn is aborted and the refusal says so. */
export const EXPLAIN_TURN_TIMEOUT_MS = 5 * 60_000;
/** Finding dispositions one session holds. */
export const ASK_MAX_FINDING_DISPOSITIONS = 20_000;

/** UTF-8 length of a string without allocating (lone surrogates count as U+FFFD, 3 bytes). */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** The longest prefix of `text` within `maxBytes` UTF-8 bytes; never splits a surrogate pair. */
export function cutToUtf8Bytes(text: string, maxBytes: number): string {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const pair = c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
    const step = c < 0x80 ? 1 : c < 0x800 ? 2 : pair ? 4 : 3;
    if (bytes + step > maxBytes) return text.slice(0, i);
    bytes += step;
    if (pair) i++;
  }
  return text;
}

/**
 * The quote a span of board prose is anchored by: trimmed and cut to ASK_QUOTE_MAX_BYTES. Every
 * surface (the panel's selection and Discuss, the editor's Discuss) quotes with it, so the same
 * span names the same thread.
 */
export function boundedQuote(text: string): string {
  return cutToUtf8Bytes(text.trim(), ASK_QUOTE_MAX_BYTES);
}

const bounded = (maxBytes: number, what: string) =>
  z
    .string()
    .min(1, `${what} is empty`)
    .refine((s) => s.trim().length > 0, `${what} is blank`)
    .refine((s) => utf8Length(s) <= maxBytes, `${what} is longer than ${maxBytes} bytes`);

// ─── Identifiers ─────────────────────────────────────────────────────────────────────────────

/**
 * Ids of sessions, generations, patchsets, board elements, asks, threads and messages: the
 * store's key-part alphabet, so none contains `|` or `/` (the separators of the keys below).
 */
export const AskKeyPart = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/, 'not an id (letters, digits, . _ : -; at most 128)');

const repoPath = z
  .string()
  .min(1)
  .max(ASK_PATH_MAX_CHARS)
  .refine((p) => !p.includes('\0') && !p.startsWith('/'), 'not a repo-relative path');
const lineNo = z.number().int().positive();
const timestamp = z.string().min(1);

// ─── Anchors ─────────────────────────────────────────────────────────────────────────────────

const spanShape = {
  patchsetId: AskKeyPart,
  path: repoPath,
  side: CitationSide,
  startLine: lineNo,
  endLine: lineNo,
};
const spanOrdered = (s: { startLine: number; endLine: number }) => s.startLine <= s.endLine;
const spanOrderedMessage = { message: 'endLine is before startLine' };

/** A captured code span: patchset, path, side and the full inclusive line range. */
export const CodeSpan = z.object(spanShape).refine(spanOrdered, spanOrderedMessage);
export type CodeSpan = z.infer<typeof CodeSpan>;

/** The Flagged board a finding lives on: `<sessionId>/<generationId>/flagged` (the store's board key). */
export function flaggedBoardId(sessionId: string, generationId: string): string {
  return `${sessionId}/${generationId}/flagged`;
}

/**
 * A finding, named by (generation, Flagged board id, finding id). The generation is part of the
 * identity, so a retried draft (a new generation) reusing an element id is a different finding.
 */
export const FindingRef = z.object({ generationId: AskKeyPart, boardId: z.string().min(1), findingId: AskKeyPart }).refine(
  (f) => {
    const parts = f.boardId.split('/');
    return parts.length === 3 && AskKeyPart.safeParse(parts[0]).success && parts[1] === f.generationId && parts[2] === 'flagged';
  },
  { message: 'boardId is not <sessionId>/<generationId>/flagged of this generation' },
);
export type FindingRef = z.infer<typeof FindingRef>;

export const LineAnchor = z.object({ kind: z.literal('line'), ...spanShape }).refine(spanOrdered, spanOrderedMessage);
export const FindingAnchor = z
  .object({
    kind: z.literal('finding'),
    generationId: AskKeyPart,
    boardId: z.string().min(1),
    findingId: AskKeyPart,
    /** The finding's first captured code_ref, when it has one. */
    codeRef: CodeSpan.optional(),
  })
  .refine((a) => FindingRef.safeParse({ generationId: a.generationId, boardId: a.boardId, findingId: a.findingId }).success, {
    message: 'boardId is not <sessionId>/<generationId>/flagged of this generation',
  });
/** A span of board prose: the element it sits in and its exact text. */
export const QuoteAnchor = z.object({
  kind: z.literal('quote'),
  generationId: AskKeyPart,
  lens: Lens,
  elementId: AskKeyPart,
  quote: z.string().min(1),
});
/** Pathless: a conclusion from conversation; travels in the review body. */
export const NoneAnchor = z.object({ kind: z.literal('none') });

/** Anchors as the log and the projection hold them. */
export const AskAnchor = z.discriminatedUnion('kind', [LineAnchor, FindingAnchor, QuoteAnchor, NoneAnchor]);
export type AskAnchor = z.infer<typeof AskAnchor>;

/** Anchors as a command may send them: the quote is bounded (ASK_QUOTE_MAX_BYTES) and not blank. */
export const QuoteAnchorInput = QuoteAnchor.extend({ quote: bounded(ASK_QUOTE_MAX_BYTES, 'quote') });
export const AskAnchorInput = z.discriminatedUnion('kind', [LineAnchor, FindingAnchor, QuoteAnchorInput, NoneAnchor]);
export type LineAnchor = z.infer<typeof LineAnchor>;
export type FindingAnchor = z.infer<typeof FindingAnchor>;
export type QuoteAnchor = z.infer<typeof QuoteAnchor>;

// ─── Value enums ─────────────────────────────────────────────────────────────────────────────

export const AskIntent = z.enum(['request-change', 'comment', 'question', 'approval']);
export type AskIntent = z.infer<typeof AskIntent>;
export const ASK_LANES = ['post-review', 'dispatch-round', 'changes'] as const;
export const AskLane = z.enum(ASK_LANES);
export type AskLane = z.infer<typeof AskLane>;
export const AskState = z.enum(['staged', 'retired']);
export type AskState = z.infer<typeof AskState>;
export const VerdictOverride = z.enum(['approve', 'request-changes', 'comment']);
export type VerdictOverride = z.infer<typeof VerdictOverride>;
/** Who wrote a quote-thread message: the reviewer, or the session's agent answering. */
export const QuoteAuthor = z.enum(['reviewer', 'agent']);
export type QuoteAuthor = z.infer<typeof QuoteAuthor>;

// ─── Keys ────────────────────────────────────────────────────────────────────────────────────

/**
 * The key of a bare line comment: `<patchsetId>|<side>|<path>:<start>-<end>`. Unambiguous: the
 * patchset id and side contain no `|`, and the range is read from the end.
 */
export function lineCommentKey(span: { patchsetId: string; path: string; side: CitationSide; startLine: number; endLine: number }): string {
  return `${span.patchsetId}|${span.side}|${span.path}:${span.startLine}-${span.endLine}`;
}

/** The key of a finding disposition: `<generationId>|<boardId>|<findingId>`. */
export function findingKey(ref: { generationId: string; boardId: string; findingId: string }): string {
  return `${ref.generationId}|${ref.boardId}|${ref.findingId}`;
}

// ─── Projection ──────────────────────────────────────────────────────────────────────────────

export const Ask = z.object({
  /** Minted by the host (`ask-<hex>`). */
  id: AskKeyPart,
  anchor: AskAnchor,
  text: z.string(),
  intent: AskIntent,
  lane: AskLane,
  state: AskState,
  createdAt: timestamp,
  /** null until the first edit. */
  editedAt: timestamp.nullable(),
  /** When and why it was retired; both null while staged. */
  retiredAt: timestamp.nullable(),
  retiredReason: z.string().nullable(),
  /**
   * Position in staging order: the session log's seq when the ask was first staged. Undoing an
   * unstage restores it, so the ask returns to its place. Ties (two processes) break by id.
   */
  ordinal: z.number().int().nonnegative(),
});
export type Ask = z.infer<typeof Ask>;

export const QuoteMessage = z.object({ id: AskKeyPart, author: QuoteAuthor, text: z.string(), at: timestamp });
export type QuoteMessage = z.infer<typeof QuoteMessage>;

export const QuoteThread = z.object({
  /**
   * Where the thread sits. A round moves it onto the successor generation's board when its quote
   * occurs there exactly once; a detached thread keeps the anchor it was last placed by.
   */
  anchor: QuoteAnchor,
  messages: z.array(QuoteMessage),
  open: z.boolean(),
  openedAt: timestamp,
  /**
   * True when a round could not place the thread on the successor board (its quote occurs there
   * never, or more than once): it is listed as detached and drawn on no board. False until then
   * (a log written before quoteAnchor existed folds to false).
   */
  detached: z.boolean().default(false),
});
export type QuoteThread = z.infer<typeof QuoteThread>;

export const LineComment = z.object({ anchor: CodeSpan, text: z.string(), createdAt: timestamp, updatedAt: timestamp });
export type LineComment = z.infer<typeof LineComment>;

export const FindingDisposition = z.literal('dismissed');
export type FindingDisposition = z.infer<typeof FindingDisposition>;

/**
 * The current ask state of one session: the pure fold of its log. Records are keyed and sorted
 * by key (code-unit order), so two folds of the same log are equal down to key order.
 */
export const AskProjection = z.object({
  /** Every ask (staged and retired — the retired ledger), in staging order. */
  asks: z.array(Ask),
  /** thread id → thread. */
  quoteThreads: z.record(z.string(), QuoteThread),
  verdictOverride: VerdictOverride.nullable(),
  /** lineCommentKey → comment. */
  lineComments: z.record(z.string(), LineComment),
  /** findingKey → 'dismissed'. A restored finding has no entry. */
  findingDispositions: z.record(z.string(), FindingDisposition),
  /** Derived from `asks`: staged asks, in all and per exit lane. */
  counts: z.object({ staged: z.number().int(), byLane: z.record(AskLane, z.number().int()) }),
});
export type AskProjection = z.infer<typeof AskProjection>;

// ─── Commands (client → host) ────────────────────────────────────────────────────────────────

const text = bounded(ASK_TEXT_MAX_BYTES, 'text');
const findingFields = { generationId: AskKeyPart, boardId: z.string().min(1), findingId: AskKeyPart };
const boardIdMatches = (f: { generationId: string; boardId: string; findingId: string }) => FindingRef.safeParse(f).success;
const boardIdMessage = { message: 'boardId is not <sessionId>/<generationId>/flagged of this generation' };

/**
 * The thirteen reviewer commands. Each carries exactly what the reviewer decides; the host mints
 * ids and timestamps and turns it into one AskEvent.
 */
export const AskCommand = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('stage'), anchor: AskAnchorInput, text, intent: AskIntent, lane: AskLane }),
  z
    .strictObject({ type: z.literal('edit'), askId: AskKeyPart, text: text.optional(), intent: AskIntent.optional() })
    .refine((c) => c.text !== undefined || c.intent !== undefined, { message: 'an edit changes text, intent or both' }),
  z.strictObject({ type: z.literal('retire'), askId: AskKeyPart, reason: bounded(ASK_REASON_MAX_BYTES, 'reason').optional() }),
  z.strictObject({ type: z.literal('restore'), askId: AskKeyPart }),
  /** A new thread on `anchor`, or the reopening of closed thread `threadId`: exactly one of the two. */
  z
    .strictObject({ type: z.literal('quoteOpen'), anchor: QuoteAnchorInput.optional(), threadId: AskKeyPart.optional() })
    .refine((c) => (c.anchor === undefined) !== (c.threadId === undefined), { message: 'quoteOpen names an anchor (new thread) or a threadId (reopen), not both' }),
  z.strictObject({ type: z.literal('quoteReply'), threadId: AskKeyPart, author: QuoteAuthor, text }),
  z.strictObject({ type: z.literal('quoteClose'), threadId: AskKeyPart }),
  z.strictObject({ type: z.literal('setVerdictOverride'), verdict: VerdictOverride.nullable() }),
  z.strictObject({ type: z.literal('setLineComment'), anchor: CodeSpan, text }),
  z.strictObject({ type: z.literal('clearLineComment'), key: z.string().min(1) }),
  z.strictObject({ type: z.literal('dismissFinding'), ...findingFields }).refine(boardIdMatches, boardIdMessage),
  z.strictObject({ type: z.literal('restoreFinding'), ...findingFields }).refine(boardIdMatches, boardIdMessage),
  z.strictObject({ type: z.literal('unstage'), askId: AskKeyPart }),
]);
export type AskCommand = z.infer<typeof AskCommand>;
export type AskCommandType = AskCommand['type'];

// ─── Events (the log) ────────────────────────────────────────────────────────────────────────

const eventText = z.string().min(1);

/**
 * What the log holds: one event per command, kind `ask.<type>`, payload = the event. Events are
 * lenient on sizes (limits are a command-time rule, so a lowered limit never drops logged acts).
 * `quoteRetract` and `quoteDiscard` are written only as inverses (undo of quoteReply and of a
 * quoteOpen that created its thread); `quoteAnchor` only by the host (ASK_HOST_EVENT_TYPES), when
 * a round re-anchors quote threads, and as its own inverse.
 */
export const AskEvent = z.discriminatedUnion('type', [
  /** Adds an ask (fresh: state staged, editedAt null). Inverse: unstage. */
  z.object({
    type: z.literal('stage'),
    askId: AskKeyPart,
    anchor: AskAnchor,
    text: eventText,
    intent: AskIntent,
    lane: AskLane,
    createdAt: timestamp,
    editedAt: timestamp.nullable(),
    ordinal: z.number().int().nonnegative(),
  }),
  /** Sets a staged ask's text and intent. Inverse: edit back (old text, intent, editedAt). */
  z.object({ type: z.literal('edit'), askId: AskKeyPart, text: eventText, intent: AskIntent, editedAt: timestamp.nullable() }),
  /** Staged → retired. Inverse: restore. */
  z.object({ type: z.literal('retire'), askId: AskKeyPart, reason: z.string().nullable(), at: timestamp }),
  /** Retired → staged. Inverse: retire (with the old reason and time). */
  z.object({ type: z.literal('restore'), askId: AskKeyPart }),
  /**
   * Creates thread `threadId` (open, no messages), or reopens it when it exists closed with this
   * exact anchor and openedAt. Inverse: quoteDiscard (created) or quoteClose (reopened).
   */
  z.object({ type: z.literal('quoteOpen'), threadId: AskKeyPart, anchor: QuoteAnchor, openedAt: timestamp }),
  /** Appends a message to an open thread. Inverse: quoteRetract of that message. */
  z.object({ type: z.literal('quoteReply'), threadId: AskKeyPart, message: QuoteMessage.extend({ text: eventText }) }),
  /** Removes an open thread's last message, named by id. Inverse: quoteReply of it. */
  z.object({ type: z.literal('quoteRetract'), threadId: AskKeyPart, messageId: AskKeyPart }),
  /** Open → closed. Inverse: quoteOpen (reopen). */
  z.object({ type: z.literal('quoteClose'), threadId: AskKeyPart }),
  /**
   * Removes an open, attached thread with no messages (a detached one is refused: its re-creation
   * could not say it was detached). Inverse: quoteOpen (create).
   */
  z.object({ type: z.literal('quoteDiscard'), threadId: AskKeyPart }),
  /**
   * Host only: sets an existing thread's anchor and detached flag (open or closed; messages
   * kept). Setting both to what they are is refused (no-change). Inverse: quoteAnchor back to the
   * previous anchor and flag.
   */
  z.object({ type: z.literal('quoteAnchor'), threadId: AskKeyPart, anchor: QuoteAnchor, detached: z.boolean() }),
  /** Inverse: set back to the previous value (null included). */
  z.object({ type: z.literal('setVerdictOverride'), verdict: VerdictOverride.nullable() }),
  /** Puts the comment at lineCommentKey(anchor). Inverse: the previous comment, or clearLineComment. */
  z.object({ type: z.literal('setLineComment'), anchor: CodeSpan, text: eventText, createdAt: timestamp, updatedAt: timestamp }),
  /** Inverse: setLineComment of the removed comment. */
  z.object({ type: z.literal('clearLineComment'), key: z.string().min(1) }),
  /** Inverse: restoreFinding. */
  z.object({ type: z.literal('dismissFinding'), ...findingFields }).refine(boardIdMatches, boardIdMessage),
  /** Inverse: dismissFinding. */
  z.object({ type: z.literal('restoreFinding'), ...findingFields }).refine(boardIdMatches, boardIdMessage),
  /** Removes a staged ask. Inverse: stage of the removed ask, ordinal and editedAt included. */
  z.object({ type: z.literal('unstage'), askId: AskKeyPart }),
]);
export type AskEvent = z.infer<typeof AskEvent>;
export type AskEventType = AskEvent['type'];

const EVENT_TYPE_TABLE: Record<AskEventType, true> = {
  stage: true,
  edit: true,
  retire: true,
  restore: true,
  quoteOpen: true,
  quoteReply: true,
  quoteRetract: true,
  quoteClose: true,
  quoteDiscard: true,
  quoteAnchor: true,
  setVerdictOverride: true,
  setLineComment: true,
  clearLineComment: true,
  dismissFinding: true,
  restoreFinding: true,
  unstage: true,
};
/** Every event type (the thirteen commands, the two inverse-only events and the one host-only event). */
export const ASK_EVENT_TYPES = Object.keys(EVENT_TYPE_TABLE) as readonly AskEventType[];

/** The host-only event: no command makes it; the host appends it (host/asks/log.ts appendHostEvent). */
export type QuoteAnchorEvent = Extract<AskEvent, { type: 'quoteAnchor' }>;
/** Event types the host appends of its own accord, never from a reviewer's command. */
export const ASK_HOST_EVENT_TYPES = ['quoteAnchor'] as const satisfies readonly AskEventType[];

/** The store event kind of an ask event: `ask.<type>`. */
export const ASK_EVENT_KIND_PREFIX = 'ask.';
export function askEventKind(type: AskEventType): string {
  return `${ASK_EVENT_KIND_PREFIX}${type}`;
}

/**
 * What a command returns besides the new projection: the inverse event, and the seq of the event
 * it reverses. Handing it to `rennet/asks/undo` appends the inverse (once; a receipt the host did
 * not issue for that seq is refused).
 */
export const AskReceipt = z.object({ undoes: z.number().int().positive(), event: AskEvent });
export type AskReceipt = z.infer<typeof AskReceipt>;

// ─── Refusals ────────────────────────────────────────────────────────────────────────────────

/**
 * Why a command (or an undo) was refused. A refusal appends nothing. Over the wire it is a
 * RennetError (`invalid-request`, or `not-found` for unknown-*) with `detail.refusal` = the code.
 */
export const AskRefusalCode = z.enum([
  'invalid',
  'wrong-session',
  'limit',
  'unknown-ask',
  'duplicate-id',
  'not-staged',
  'not-retired',
  'no-change',
  'unknown-thread',
  'thread-open',
  'thread-closed',
  'thread-not-empty',
  'thread-detached',
  'anchor-mismatch',
  'not-last-message',
  'unknown-line-comment',
  'already-dismissed',
  'not-dismissed',
  'unknown-receipt',
  'already-undone',
]);
export type AskRefusalCode = z.infer<typeof AskRefusalCode>;

export interface AskRefusal {
  code: AskRefusalCode;
  message: string;
}

// ─── Derived ──────────────────────────────────────────────────────────────────────────────────

/**
 * Flagged findings still open: the given findings (by generation, board id, finding id; listed
 * twice counts once) minus the dismissed ones minus those a staged request-change ask names.
 * Derived on every call from the board's findings and the projection; never stored.
 */
export function flaggedOpenCount(findings: readonly FindingRef[], projection: AskProjection): number {
  const requested = new Set<string>();
  for (const ask of projection.asks) {
    if (ask.state === 'staged' && ask.intent === 'request-change' && ask.anchor.kind === 'finding') requested.add(findingKey(ask.anchor));
  }
  const open = new Set<string>();
  for (const finding of findings) {
    const key = findingKey(finding);
    if (!Object.hasOwn(projection.findingDispositions, key) && !requested.has(key)) open.add(key);
  }
  return open.size;
}
