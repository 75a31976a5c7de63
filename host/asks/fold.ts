import {
  ASK_LANES,
  findingKey,
  lineCommentKey,
  type Ask,
  type AskAnchor,
  type AskEvent,
  type AskLane,
  type AskProjection,
  type AskRefusal,
  type AskRefusalCode,
  type CodeSpan,
  type FindingRef,
  type LineComment,
  type QuoteAnchor,
  type QuoteMessage,
  type QuoteThread,
  type VerdictOverride,
} from '../../protocol/asks';

/**
 * The ask fold: pure, no I/O, inputs never mutated. The projection is a function of the event
 * sequence alone. An event that does not apply to the state it meets (a refusal) changes
 * nothing — commands are refused before they are appended, so the log holds such an event only
 * after a race between two processes; every reader skips it the same way.
 *
 * Projections are deep-frozen; events are copied, never shared with or frozen into the projection.
 */

// ─── The working state ───────────────────────────────────────────────────────────────────────

/** Mutable working form of a projection; only this module touches one. */
interface Draft {
  asks: Map<string, Ask>;
  threads: Map<string, QuoteThread>;
  verdict: VerdictOverride | null;
  lineComments: Map<string, LineComment>;
  dismissed: Set<string>;
}

function emptyDraft(): Draft {
  return { asks: new Map(), threads: new Map(), verdict: null, lineComments: new Map(), dismissed: new Set() };
}

function fromProjection(p: AskProjection): Draft {
  return {
    asks: new Map(p.asks.map((a) => [a.id, a])),
    threads: new Map(Object.entries(p.quoteThreads)),
    verdict: p.verdictOverride,
    lineComments: new Map(Object.entries(p.lineComments)),
    dismissed: new Set(Object.keys(p.findingDispositions)),
  };
}

const byKey = <V>(a: [string, V], b: [string, V]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
// Sort is stable: two asks staged with one ordinal (two writers raced) keep the order their
// events landed in, which a replay reproduces; a random id would not.
const byStagingOrder = (a: Ask, b: Ask) => a.ordinal - b.ordinal;

function toProjection(d: Draft): AskProjection {
  const asks = [...d.asks.values()].sort(byStagingOrder);
  const byLane = Object.fromEntries(ASK_LANES.map((lane) => [lane, 0])) as Record<AskLane, number>;
  let staged = 0;
  for (const ask of asks) {
    if (ask.state !== 'staged') continue;
    staged += 1;
    byLane[ask.lane] += 1;
  }
  return deepFreeze({
    asks,
    quoteThreads: Object.fromEntries([...d.threads].sort(byKey)),
    verdictOverride: d.verdict,
    lineComments: Object.fromEntries([...d.lineComments].sort(byKey)),
    findingDispositions: Object.fromEntries([...d.dismissed].sort().map((key) => [key, 'dismissed' as const])),
    counts: { staged, byLane },
  });
}

/** Freezes what is not frozen yet (a frozen object's subtree was frozen with it). */
function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const child of Object.values(value as object)) deepFreeze(child);
  return value;
}

/** The projection of an empty log. */
export const EMPTY_ASK_PROJECTION: AskProjection = toProjection(emptyDraft());

// ─── Copies (events are never shared into the projection) ────────────────────────────────────

function copySpan(s: CodeSpan): CodeSpan {
  return { patchsetId: s.patchsetId, path: s.path, side: s.side, startLine: s.startLine, endLine: s.endLine };
}

function copyQuoteAnchor(a: QuoteAnchor): QuoteAnchor {
  return { kind: 'quote', generationId: a.generationId, lens: a.lens, elementId: a.elementId, quote: a.quote };
}

function copyAnchor(a: AskAnchor): AskAnchor {
  switch (a.kind) {
    case 'line':
      return { kind: 'line', ...copySpan(a) };
    case 'finding':
      return a.codeRef
        ? { kind: 'finding', generationId: a.generationId, boardId: a.boardId, findingId: a.findingId, codeRef: copySpan(a.codeRef) }
        : { kind: 'finding', generationId: a.generationId, boardId: a.boardId, findingId: a.findingId };
    case 'quote':
      return copyQuoteAnchor(a);
    case 'none':
      return { kind: 'none' };
  }
}

function copyMessage(m: QuoteMessage): QuoteMessage {
  return { id: m.id, author: m.author, text: m.text, at: m.at };
}

function sameQuoteAnchor(a: QuoteAnchor, b: QuoteAnchor): boolean {
  return a.generationId === b.generationId && a.lens === b.lens && a.elementId === b.elementId && a.quote === b.quote;
}

function findingRefOf(e: FindingRef): FindingRef {
  return { generationId: e.generationId, boardId: e.boardId, findingId: e.findingId };
}

// ─── Applicability ───────────────────────────────────────────────────────────────────────────

function must<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`ask fold: ${what} missing after its check`);
  return value;
}

const refuse = (code: AskRefusalCode, message: string): AskRefusal => ({ code, message });

function notStaged(d: Draft, askId: string): AskRefusal | null {
  const ask = d.asks.get(askId);
  if (!ask) return refuse('unknown-ask', `no ask ${askId}`);
  return ask.state === 'staged' ? null : refuse('not-staged', `ask ${askId} is retired`);
}

function notOpen(d: Draft, threadId: string): AskRefusal | null {
  const thread = d.threads.get(threadId);
  if (!thread) return refuse('unknown-thread', `no quote thread ${threadId}`);
  return thread.open ? null : refuse('thread-closed', `quote thread ${threadId} is closed`);
}

/** Why `e` does not apply to `d`, or null when it does. */
function check(d: Draft, e: AskEvent): AskRefusal | null {
  switch (e.type) {
    case 'stage':
      return d.asks.has(e.askId) ? refuse('duplicate-id', `ask ${e.askId} already exists`) : null;
    case 'edit': {
      const refusal = notStaged(d, e.askId);
      if (refusal) return refusal;
      const ask = must(d.asks.get(e.askId), 'ask');
      return ask.text === e.text && ask.intent === e.intent ? refuse('no-change', `ask ${e.askId} already has this text and intent`) : null;
    }
    case 'retire':
    case 'unstage':
      return notStaged(d, e.askId);
    case 'restore': {
      const ask = d.asks.get(e.askId);
      if (!ask) return refuse('unknown-ask', `no ask ${e.askId}`);
      return ask.state === 'retired' ? null : refuse('not-retired', `ask ${e.askId} is not retired`);
    }
    case 'quoteOpen': {
      const thread = d.threads.get(e.threadId);
      if (!thread) return null;
      if (thread.open) return refuse('thread-open', `quote thread ${e.threadId} is already open`);
      return sameQuoteAnchor(thread.anchor, e.anchor) && thread.openedAt === e.openedAt ? null : refuse('anchor-mismatch', `quote thread ${e.threadId} exists with another anchor`);
    }
    case 'quoteReply': {
      const refusal = notOpen(d, e.threadId);
      if (refusal) return refusal;
      const thread = must(d.threads.get(e.threadId), 'thread');
      return thread.messages.some((m) => m.id === e.message.id) ? refuse('duplicate-id', `message ${e.message.id} is already in thread ${e.threadId}`) : null;
    }
    case 'quoteRetract': {
      const refusal = notOpen(d, e.threadId);
      if (refusal) return refusal;
      const thread = must(d.threads.get(e.threadId), 'thread');
      return thread.messages.at(-1)?.id === e.messageId ? null : refuse('not-last-message', `message ${e.messageId} is not the last of thread ${e.threadId}`);
    }
    case 'quoteClose':
      return notOpen(d, e.threadId);
    case 'quoteDiscard': {
      const refusal = notOpen(d, e.threadId);
      if (refusal) return refusal;
      const thread = must(d.threads.get(e.threadId), 'thread');
      if (thread.messages.length > 0) return refuse('thread-not-empty', `quote thread ${e.threadId} has messages`);
      // Its inverse (quoteOpen, create) makes an attached thread: it could not restore this one.
      return thread.detached ? refuse('thread-detached', `quote thread ${e.threadId} is detached`) : null;
    }
    case 'quoteAnchor': {
      const thread = d.threads.get(e.threadId);
      if (!thread) return refuse('unknown-thread', `no quote thread ${e.threadId}`);
      return sameQuoteAnchor(thread.anchor, e.anchor) && thread.detached === e.detached
        ? refuse('no-change', `quote thread ${e.threadId} already has this anchor and is ${e.detached ? 'detached' : 'attached'}`)
        : null;
    }
    case 'setVerdictOverride':
      return d.verdict === e.verdict ? refuse('no-change', `the verdict override is already ${String(e.verdict)}`) : null;
    case 'setLineComment': {
      const existing = d.lineComments.get(lineCommentKey(e.anchor));
      return existing && existing.text === e.text ? refuse('no-change', 'the line comment already has this text') : null;
    }
    case 'clearLineComment':
      return d.lineComments.has(e.key) ? null : refuse('unknown-line-comment', `no line comment at ${e.key}`);
    case 'dismissFinding':
      return d.dismissed.has(findingKey(e)) ? refuse('already-dismissed', `finding ${findingKey(e)} is already dismissed`) : null;
    case 'restoreFinding':
      return d.dismissed.has(findingKey(e)) ? null : refuse('not-dismissed', `finding ${findingKey(e)} is not dismissed`);
  }
}

// ─── Application (on a checked event) ────────────────────────────────────────────────────────

/** Applies a checked event to the draft. Replaces entries; never mutates an existing one. */
function apply(d: Draft, e: AskEvent): void {
  switch (e.type) {
    case 'stage':
      d.asks.set(e.askId, {
        id: e.askId,
        anchor: copyAnchor(e.anchor),
        text: e.text,
        intent: e.intent,
        lane: e.lane,
        state: 'staged',
        createdAt: e.createdAt,
        editedAt: e.editedAt,
        retiredAt: null,
        retiredReason: null,
        ordinal: e.ordinal,
      });
      return;
    case 'edit':
      d.asks.set(e.askId, { ...must(d.asks.get(e.askId), 'ask'), text: e.text, intent: e.intent, editedAt: e.editedAt });
      return;
    case 'retire':
      d.asks.set(e.askId, { ...must(d.asks.get(e.askId), 'ask'), state: 'retired', retiredAt: e.at, retiredReason: e.reason });
      return;
    case 'restore':
      d.asks.set(e.askId, { ...must(d.asks.get(e.askId), 'ask'), state: 'staged', retiredAt: null, retiredReason: null });
      return;
    case 'unstage':
      d.asks.delete(e.askId);
      return;
    case 'quoteOpen': {
      const thread = d.threads.get(e.threadId);
      d.threads.set(e.threadId, thread ? { ...thread, open: true } : { anchor: copyQuoteAnchor(e.anchor), messages: [], open: true, openedAt: e.openedAt, detached: false });
      return;
    }
    case 'quoteReply': {
      const thread = must(d.threads.get(e.threadId), 'thread');
      d.threads.set(e.threadId, { ...thread, messages: [...thread.messages, copyMessage(e.message)] });
      return;
    }
    case 'quoteRetract': {
      const thread = must(d.threads.get(e.threadId), 'thread');
      d.threads.set(e.threadId, { ...thread, messages: thread.messages.slice(0, -1) });
      return;
    }
    case 'quoteClose':
      d.threads.set(e.threadId, { ...must(d.threads.get(e.threadId), 'thread'), open: false });
      return;
    case 'quoteDiscard':
      d.threads.delete(e.threadId);
      return;
    case 'quoteAnchor':
      d.threads.set(e.threadId, { ...must(d.threads.get(e.threadId), 'thread'), anchor: copyQuoteAnchor(e.anchor), detached: e.detached });
      return;
    case 'setVerdictOverride':
      d.verdict = e.verdict;
      return;
    case 'setLineComment':
      d.lineComments.set(lineCommentKey(e.anchor), { anchor: copySpan(e.anchor), text: e.text, createdAt: e.createdAt, updatedAt: e.updatedAt });
      return;
    case 'clearLineComment':
      d.lineComments.delete(e.key);
      return;
    case 'dismissFinding':
      d.dismissed.add(findingKey(e));
      return;
    case 'restoreFinding':
      d.dismissed.delete(findingKey(e));
      return;
  }
}

// ─── Inverses (against the state BEFORE the event) ───────────────────────────────────────────

function setLineCommentEvent(c: LineComment): AskEvent {
  return { type: 'setLineComment', anchor: copySpan(c.anchor), text: c.text, createdAt: c.createdAt, updatedAt: c.updatedAt };
}

/** The event that undoes checked event `e` on draft `d` (the state before `e`). */
function inverse(d: Draft, e: AskEvent): AskEvent {
  switch (e.type) {
    case 'stage':
      return { type: 'unstage', askId: e.askId };
    case 'edit': {
      const ask = must(d.asks.get(e.askId), 'ask');
      return { type: 'edit', askId: e.askId, text: ask.text, intent: ask.intent, editedAt: ask.editedAt };
    }
    case 'retire':
      return { type: 'restore', askId: e.askId };
    case 'restore': {
      const ask = must(d.asks.get(e.askId), 'ask');
      return { type: 'retire', askId: e.askId, reason: ask.retiredReason, at: must(ask.retiredAt ?? undefined, 'retiredAt') };
    }
    case 'unstage': {
      const ask = must(d.asks.get(e.askId), 'ask');
      return {
        type: 'stage',
        askId: ask.id,
        anchor: copyAnchor(ask.anchor),
        text: ask.text,
        intent: ask.intent,
        lane: ask.lane,
        createdAt: ask.createdAt,
        editedAt: ask.editedAt,
        ordinal: ask.ordinal,
      };
    }
    case 'quoteOpen':
      return d.threads.has(e.threadId) ? { type: 'quoteClose', threadId: e.threadId } : { type: 'quoteDiscard', threadId: e.threadId };
    case 'quoteReply':
      return { type: 'quoteRetract', threadId: e.threadId, messageId: e.message.id };
    case 'quoteRetract': {
      const thread = must(d.threads.get(e.threadId), 'thread');
      return { type: 'quoteReply', threadId: e.threadId, message: copyMessage(must(thread.messages.at(-1), 'message')) };
    }
    case 'quoteClose':
    case 'quoteDiscard': {
      const thread = must(d.threads.get(e.threadId), 'thread');
      return { type: 'quoteOpen', threadId: e.threadId, anchor: copyQuoteAnchor(thread.anchor), openedAt: thread.openedAt };
    }
    case 'quoteAnchor': {
      const thread = must(d.threads.get(e.threadId), 'thread');
      return { type: 'quoteAnchor', threadId: e.threadId, anchor: copyQuoteAnchor(thread.anchor), detached: thread.detached };
    }
    case 'setVerdictOverride':
      return { type: 'setVerdictOverride', verdict: d.verdict };
    case 'setLineComment': {
      const key = lineCommentKey(e.anchor);
      const previous = d.lineComments.get(key);
      return previous ? setLineCommentEvent(previous) : { type: 'clearLineComment', key };
    }
    case 'clearLineComment':
      return setLineCommentEvent(must(d.lineComments.get(e.key), 'line comment'));
    case 'dismissFinding':
      return { type: 'restoreFinding', ...findingRefOf(e) };
    case 'restoreFinding':
      return { type: 'dismissFinding', ...findingRefOf(e) };
  }
}

// ─── Public API ──────────────────────────────────────────────────────────────────────────────

/** Why `event` does not apply to `projection`, or null when it does. */
export function checkAskEvent(projection: AskProjection, event: AskEvent): AskRefusal | null {
  return check(fromProjection(projection), event);
}

/** One step: the projection after `event` and the event that undoes it — or the refusal. */
export type AskStep = { ok: true; projection: AskProjection; inverse: AskEvent } | { ok: false; refusal: AskRefusal };

export function stepAsks(projection: AskProjection, event: AskEvent): AskStep {
  const d = fromProjection(projection);
  const refusal = check(d, event);
  if (refusal) return { ok: false, refusal };
  const inv = inverse(d, event);
  apply(d, event);
  return { ok: true, projection: toProjection(d), inverse: inv };
}

/** The projection after `event`; `projection` itself (unchanged) when the event does not apply. */
export function applyAskEvent(projection: AskProjection, event: AskEvent): AskProjection {
  const step = stepAsks(projection, event);
  return step.ok ? step.projection : projection;
}

/**
 * The event that undoes `event` on `projection` (the state BEFORE it): applying `event` then
 * the inverse gives back `projection` exactly. Throws when `event` does not apply there.
 */
export function inverseOf(projection: AskProjection, event: AskEvent): AskEvent {
  const d = fromProjection(projection);
  const refusal = check(d, event);
  if (refusal) throw new Error(`inverseOf: the event does not apply (${refusal.code}: ${refusal.message})`);
  return inverse(d, event);
}

export interface AskFold {
  projection: AskProjection;
  /** Events that did not apply where they stood (index into the input), in order. */
  skipped: Array<{ index: number; refusal: AskRefusal }>;
}

/** Folds events onto `from` (default: empty) in one pass, reporting the ones that did not apply. */
export function foldAskLog(events: Iterable<AskEvent>, from: AskProjection = EMPTY_ASK_PROJECTION): AskFold {
  const d = fromProjection(from);
  const skipped: AskFold['skipped'] = [];
  let index = 0;
  for (const event of events) {
    const refusal = check(d, event);
    if (refusal) skipped.push({ index, refusal });
    else apply(d, event);
    index += 1;
  }
  return { projection: toProjection(d), skipped };
}

/** The current ask state: the fold of the log from empty. */
export function foldAsks(events: Iterable<AskEvent>): AskProjection {
  return foldAskLog(events).projection;
}

/** Re-exported: the derivation lives in the protocol so the panel counts exactly as the host does. */
export { flaggedOpenCount } from '../../protocol/asks';
