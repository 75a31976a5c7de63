/**
 * What the board's ask affordances decide, with no DOM and no I/O: which exit lane an ask goes
 * to, how a finding and a span of board prose become anchors, what state a finding shows, and
 * which quote threads and Explain requests belong under which element. The host's fold is the
 * only source of ask state; everything here reads a projection it was handed.
 */
import {
  ASK_TEXT_MAX_BYTES,
  AskKeyPart,
  boundedQuote,
  cutToUtf8Bytes,
  CodeSpan,
  FindingRef,
  QuoteAnchorInput,
  findingKey,
  flaggedBoardId,
  type AskIntent,
  type AskProjection,
  type BoardElement,
  type ElementOf,
  type FindingAnchor,
  type Lens,
  type QuoteAnchor,
  type QuoteThread,
} from '../../protocol';

/** A result the caller decides on: the value, or the reason shown to the reviewer. */
export type Decided<T> = { ok: true; value: T } | { ok: false; reason: string };

/** The generation an act is about, as the panel shows it. */
export interface GenerationScope {
  sessionId: string;
  generationId: string;
  patchsetId: string;
}

// ─── Lanes and text ──────────────────────────────────────────────────────────────────────────

export { cutToUtf8Bytes };

/** Ask text as the reviewer typed it, or why it cannot be staged. */
export function askText(text: string): Decided<string> {
  if (text.trim().length === 0) return { ok: false, reason: 'Write what you ask first.' };
  if (cutToUtf8Bytes(text, ASK_TEXT_MAX_BYTES).length < text.length) {
    return { ok: false, reason: `The text is longer than ${ASK_TEXT_MAX_BYTES / 1024} KiB.` };
  }
  return { ok: true, value: text };
}

// ─── Findings ────────────────────────────────────────────────────────────────────────────────

/** The finding as the ask log names it (generation, Flagged board id, finding id), or why not. */
export function findingRefFor(scope: GenerationScope, findingId: string): Decided<FindingRef> {
  const ref = { generationId: scope.generationId, boardId: flaggedBoardId(scope.sessionId, scope.generationId), findingId };
  if (!AskKeyPart.safeParse(findingId).success) return { ok: false, reason: 'This finding’s id cannot be named in the ask log.' };
  if (!FindingRef.safeParse(ref).success) return { ok: false, reason: 'This generation cannot be named in the ask log.' };
  return { ok: true, value: ref };
}

/**
 * The anchor of a change request on a finding: its ref plus its first cited code span, read
 * against the generation's capture. A first anchor that is not a code ref of this board, or whose
 * span the protocol refuses, leaves the anchor pathless rather than pointing at the wrong lines.
 */
export function findingAnchorFor(scope: GenerationScope, finding: ElementOf<'finding'>, byId: ReadonlyMap<string, BoardElement>): Decided<FindingAnchor> {
  const ref = findingRefFor(scope, finding.id);
  if (!ref.ok) return ref;
  const anchor: FindingAnchor = { kind: 'finding', ...ref.value };
  const first = finding.anchor?.[0];
  const cited = first === undefined ? undefined : byId.get(first);
  if (cited?.kind === 'code_ref') {
    const span = CodeSpan.safeParse({
      patchsetId: scope.patchsetId,
      path: cited.path,
      side: cited.side === 'base' ? 'base' : 'head',
      startLine: cited.start_line,
      endLine: Math.max(cited.start_line, cited.end_line),
    });
    if (span.success) anchor.codeRef = span.data;
  }
  return { ok: true, value: anchor };
}

/**
 * The body of a change request staged from a finding: its claim and, when it has one, its
 * proposed remedy — what the coding agent or the author is asked to do. Bounded like any ask.
 */
export function findingRequestText(finding: Pick<ElementOf<'finding'>, 'title' | 'remedy_markdown'>): string {
  const title = (finding.title ?? '').trim();
  const remedy = (finding.remedy_markdown ?? '').trim();
  const text = title && remedy ? `${title}\n\n${remedy}` : title || remedy || 'Change what this finding describes.';
  return cutToUtf8Bytes(text, ASK_TEXT_MAX_BYTES);
}

/** What the ask log says about one finding of the shown generation. */
export interface FindingMarks {
  /** A finding disposition exists (restoring removes it). */
  dismissed: boolean;
  /** A staged request-change ask anchors this very finding (same generation, board and id). */
  requested: boolean;
}

export const NO_MARKS: FindingMarks = { dismissed: false, requested: false };

/** Every finding's marks in one pass over the projection, by findingKey. */
export function findingMarksIndex(projection: AskProjection): ReadonlyMap<string, FindingMarks> {
  const marks = new Map<string, FindingMarks>();
  const mark = (key: string, patch: Partial<FindingMarks>) => marks.set(key, { ...(marks.get(key) ?? NO_MARKS), ...patch });
  for (const key of Object.keys(projection.findingDispositions)) mark(key, { dismissed: true });
  for (const ask of projection.asks) {
    if (ask.state === 'staged' && ask.intent === 'request-change' && ask.anchor.kind === 'finding') mark(findingKey(ask.anchor), { requested: true });
  }
  return marks;
}

// ─── Quotes ──────────────────────────────────────────────────────────────────────────────────

/** Where a quote sits: the shown generation, the lens, and the nearest element. */
export interface QuotePlace {
  generationId: string;
  lens: Lens;
  elementId: string;
}

/**
 * A span of board prose as a quote anchor: the selected text with its ends trimmed, cut to
 * ASK_QUOTE_MAX_BYTES, under the nearest element. Whitespace only, or an id the ask log cannot
 * hold, is no anchor (with the reason).
 */
export function quoteAnchorFor(place: QuotePlace, selected: string): Decided<QuoteAnchor> {
  const quote = boundedQuote(selected);
  if (quote.trim().length === 0) return { ok: false, reason: 'The selection holds no text.' };
  if (!AskKeyPart.safeParse(place.elementId).success) return { ok: false, reason: 'This element’s id cannot be named in the ask log.' };
  if (!AskKeyPart.safeParse(place.generationId).success) return { ok: false, reason: 'This generation cannot be named in the ask log.' };
  const anchor: QuoteAnchor = { kind: 'quote', generationId: place.generationId, lens: place.lens, elementId: place.elementId, quote };
  // The command schema is the last word (it bounds the quote in bytes).
  return QuoteAnchorInput.safeParse(anchor).success ? { ok: true, value: anchor } : { ok: false, reason: 'The selection cannot be quoted.' };
}

/** The key of an element on one lens board of one generation. */
export function placeKey(generationId: string, lens: Lens, elementId: string): string {
  return `${generationId}|${lens}|${elementId}`;
}

export interface ThreadEntry {
  threadId: string;
  thread: QuoteThread;
}

/** Oldest first; ties by thread id. */
const byOpening = (x: ThreadEntry, y: ThreadEntry) =>
  x.thread.openedAt < y.thread.openedAt ? -1 : x.thread.openedAt > y.thread.openedAt ? 1 : x.threadId < y.threadId ? -1 : x.threadId > y.threadId ? 1 : 0;

/**
 * The quote threads of one generation, grouped under the element they anchor, oldest first. A
 * detached thread is under no element: its quote was not found once on a later board, so drawing
 * it on its old spot would be stale (it is in detachedByLens instead).
 */
export function threadsByPlace(projection: AskProjection | null, generationId: string): ReadonlyMap<string, ThreadEntry[]> {
  const out = new Map<string, ThreadEntry[]>();
  if (!projection) return out;
  for (const [threadId, thread] of Object.entries(projection.quoteThreads)) {
    const a = thread.anchor;
    if (a.generationId !== generationId || thread.detached) continue;
    const key = placeKey(a.generationId, a.lens, a.elementId);
    const list = out.get(key);
    if (list) list.push({ threadId, thread });
    else out.set(key, [{ threadId, thread }]);
  }
  for (const list of out.values()) list.sort(byOpening);
  return out;
}

/** Why a thread is listed as detached, as the panel says it. */
export const DETACHED_REASON = 'The quoted text no longer appears exactly once on the new board (it is gone, or it occurs more than once), so this thread is not placed on any passage.';

/** The shown generation as the Detached list needs it: its id, whether it is the latest, the frozen ones (newest first). */
export interface GenerationOrder {
  generationId: string;
  status: 'live' | 'frozen';
  frozen: ReadonlyArray<{ generationId: string }>;
}

/**
 * The detached threads a generation's view lists, by the lens they quote, oldest first: on the
 * live generation every detached thread; on a frozen one those detached from it or from a
 * generation before it (never one detached later than what is shown).
 */
export function detachedByLens(projection: AskProjection | null, shown: GenerationOrder): ReadonlyMap<Lens, ThreadEntry[]> {
  const out = new Map<Lens, ThreadEntry[]>();
  if (!projection) return out;
  let upTo: ReadonlySet<string> | null = null;
  if (shown.status === 'frozen') {
    const at = shown.frozen.findIndex((f) => f.generationId === shown.generationId);
    upTo = new Set([shown.generationId, ...(at < 0 ? [] : shown.frozen.slice(at + 1).map((f) => f.generationId))]);
  }
  for (const [threadId, thread] of Object.entries(projection.quoteThreads)) {
    if (!thread.detached || (upTo && !upTo.has(thread.anchor.generationId))) continue;
    const list = out.get(thread.anchor.lens);
    if (list) list.push({ threadId, thread });
    else out.set(thread.anchor.lens, [{ threadId, thread }]);
  }
  for (const list of out.values()) list.sort(byOpening);
  return out;
}

/** The open, attached thread anchored on exactly `anchor` (where Discuss and Explain continue), if any. */
export function openThreadOn(projection: AskProjection | null, anchor: QuoteAnchor): string | undefined {
  if (!projection) return undefined;
  for (const [id, thread] of Object.entries(projection.quoteThreads)) {
    const a = thread.anchor;
    if (thread.open && !thread.detached && a.generationId === anchor.generationId && a.lens === anchor.lens && a.elementId === anchor.elementId && a.quote === anchor.quote) return id;
  }
  return undefined;
}

/** An Explain the panel asked for, as the extension reported it. */
export interface ExplainRequest {
  /** What was asked about; null when only a status arrived (a request from before a reload). */
  anchor: QuoteAnchor | null;
  state: 'working' | 'answered' | 'failed';
  threadId: string | null;
  /** Why it failed, in the host's words. */
  message: string | null;
  /** Order of asking, for "the latest one here". */
  order: number;
}

/** The latest Explain asked under each element of one generation. */
export function latestExplainByPlace(explains: Readonly<Record<string, ExplainRequest>>, generationId: string): ReadonlyMap<string, ExplainRequest & { requestId: string }> {
  const out = new Map<string, ExplainRequest & { requestId: string }>();
  for (const [requestId, request] of Object.entries(explains)) {
    const a = request.anchor;
    if (!a || a.generationId !== generationId) continue;
    const key = placeKey(a.generationId, a.lens, a.elementId);
    const seen = out.get(key);
    if (!seen || seen.order < request.order) out.set(key, { ...request, requestId });
  }
  return out;
}

/** Whether a staged ask with exactly this anchor, text and intent is in the projection. */
export function hasStagedQuoteAsk(projection: AskProjection | null, anchor: QuoteAnchor, text: string, intent: AskIntent): boolean {
  if (!projection) return false;
  return projection.asks.some(
    (ask) =>
      ask.state === 'staged' &&
      ask.intent === intent &&
      ask.text === text &&
      ask.anchor.kind === 'quote' &&
      ask.anchor.generationId === anchor.generationId &&
      ask.anchor.lens === anchor.lens &&
      ask.anchor.elementId === anchor.elementId &&
      ask.anchor.quote === anchor.quote,
  );
}

/** Reader-facing words for who wrote a thread message. */
export const AUTHOR_LABELS = { reviewer: 'You', agent: 'Agent' } as const;
