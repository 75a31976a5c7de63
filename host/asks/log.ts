import { randomBytes } from 'node:crypto';
import { canonicalJson } from '../capture/ids';
import { ASK_EVENT_KIND_PREFIX, ASK_HOST_EVENT_TYPES, AskEvent, AskReceipt, askEventKind, type AskProjection, type AskRefusal } from '../../protocol/asks';
import { err, errorMessage, ok, rennetError, type RennetError, type Result } from '../../protocol/result';
import type { Session } from '../../protocol/session';
import { isStoreError } from '../store/errors';
import type { StoredEvent } from '../store/store';
import { reanchorThreads, type ReanchorSuccessor, type ThreadReanchor } from '../board/quoteAnchors';
import { mintAskEvent, parseAskCommand } from './commands';
import { EMPTY_ASK_PROJECTION, foldAskLog, inverseOf, stepAsks, checkAskEvent } from './fold';

/** What the ask log needs from the store (host/store's Store implements it). */
export interface AskLogStore {
  appendEvent(sessionId: string, kind: string, payload: unknown, now: string): { seq: number };
  readEvents(sessionId: string, afterSeq?: number): StoredEvent[];
  getSession(id: string): Session | undefined;
}

/** One append, as the host pushes it (`rennet/asks/changed`). */
export interface AskAppend {
  sessionId: string;
  seq: number;
  event: AskEvent;
  projection: AskProjection;
}

export interface AskLogOptions {
  /** Called after every append (command or undo), with the projection after it. */
  onAppend?: (change: AskAppend) => void;
  /** Id minting (tests pin it); default `<prefix>-<16 hex>`. */
  newId?: (prefix: 'ask' | 'qt' | 'qm') => string;
  /** Called once per logged ask event the fold skipped (unreadable, or not applicable where it stands). */
  onSkipped?: (sessionId: string, seq: number, reason: string) => void;
}

/** What a command or an undo answers. */
export interface AskCommandOutcome {
  /** The appended event (its ids are the host's: a staged ask's id is `event.askId`). */
  event: AskEvent;
  seq: number;
  /** Hand it to `undo` to reverse this append (once). */
  receipt: AskReceipt;
  projection: AskProjection;
}

/** A logged ask event, decoded: the event, and the seq it undoes when it was an undo. */
export type DecodedAskEvent = { ok: true; event: AskEvent; undoes: number | null } | { ok: false; reason: string };

/**
 * Decodes a stored event of the session log: null when it is not an ask event (another kind), a
 * failure when it is one but unreadable. Payload = the event, plus `undoes: <seq>` on an undo.
 */
export function decodeAskEvent(stored: StoredEvent): DecodedAskEvent | null {
  if (!stored.kind.startsWith(ASK_EVENT_KIND_PREFIX)) return null;
  const parsed = AskEvent.safeParse(stored.payload);
  if (!parsed.success) return { ok: false, reason: `unreadable ${stored.kind} payload: ${parsed.error.issues[0]?.message ?? 'unknown'}` };
  if (askEventKind(parsed.data.type) !== stored.kind) return { ok: false, reason: `kind ${stored.kind} holds a ${parsed.data.type} event` };
  const undoes = (stored.payload as { undoes?: unknown }).undoes;
  return { ok: true, event: parsed.data, undoes: typeof undoes === 'number' && Number.isInteger(undoes) && undoes > 0 ? undoes : null };
}

/** Deterministic JSON (sorted keys, undefined dropped): one implementation, the content ids'. */
export { canonicalJson };

interface Cached {
  /** Last seq of the session log this projection has seen (ask events or not). */
  lastSeq: number;
  projection: AskProjection;
}

/** Past this many new events a catch-up folds in one pass instead of stepping. */
const STEP_CATCH_UP_MAX = 32;

function refusalError(refusal: AskRefusal, prefix = ''): RennetError {
  return rennetError(refusal.code.startsWith('unknown-') ? 'not-found' : 'invalid-request', `${prefix}${refusal.message}`, { refusal: refusal.code });
}

/**
 * The durable ask log of each session, over the store's per-session event log. The one write
 * path: a command is validated against the current projection and appends exactly one event
 * (kind `ask.<type>`, durable when `command` returns); an undo appends the receipt's inverse.
 * Nothing is ever deleted or rewritten. The projection is the fold of the log: a restarted host
 * folds the same projection. The cache (last seq → projection) only saves work: it catches up
 * from the log before every use and equals a fresh fold (`read`).
 */
export class AskLog {
  private readonly cache = new Map<string, Cached>();
  private readonly newId: (prefix: 'ask' | 'qt' | 'qm') => string;

  constructor(
    private readonly store: AskLogStore,
    private readonly options: AskLogOptions = {},
  ) {
    this.newId = options.newId ?? ((prefix) => `${prefix}-${randomBytes(8).toString('hex')}`);
  }

  /** Validates a command against the current projection and appends its one event. */
  command(sessionId: string, input: unknown, now: string): Result<AskCommandOutcome> {
    return this.guard(sessionId, () => {
      const parsed = parseAskCommand(input);
      if (!parsed.ok) return err(refusalError(parsed.refusal));
      const current = this.current(sessionId);
      const minted = mintAskEvent(current.projection, parsed.command, {
        sessionId,
        now,
        ordinal: current.lastSeq + 1,
        newId: this.newId,
      });
      if (!minted.ok) return err(refusalError(minted.refusal));
      return this.append(sessionId, current, minted.event, null, now);
    });
  }

  /**
   * Appends a receipt's inverse event. Refused when the host did not issue this receipt for that
   * seq ('unknown-receipt'), when that seq was undone already ('already-undone'), or when the
   * inverse no longer applies (the fold's refusal). Answers a receipt that redoes.
   */
  undo(sessionId: string, input: unknown, now: string): Result<AskCommandOutcome> {
    return this.guard(sessionId, () => {
      const parsed = AskReceipt.safeParse(input);
      if (!parsed.success) {
        return err(refusalError({ code: 'invalid', message: `invalid receipt: ${parsed.error.issues[0]?.message ?? 'unknown'}` }));
      }
      const receipt = parsed.data;
      const unknown = (why: string) => err(refusalError({ code: 'unknown-receipt', message: `receipt for #${receipt.undoes}: ${why}` }));
      const before: AskEvent[] = [];
      let target: AskEvent | undefined;
      let lastSeq = 0;
      for (const stored of this.store.readEvents(sessionId)) {
        lastSeq = stored.seq;
        const decoded = decodeAskEvent(stored);
        if (!decoded?.ok) {
          if (stored.seq === receipt.undoes) return unknown('that event is not a readable ask event');
          continue;
        }
        if (decoded.undoes === receipt.undoes) {
          return err(refusalError({ code: 'already-undone', message: `#${receipt.undoes} was undone already (by #${stored.seq})` }));
        }
        if (stored.seq < receipt.undoes) before.push(decoded.event);
        else if (stored.seq === receipt.undoes) target = decoded.event;
      }
      if (!target) return unknown('no ask event has that seq');
      const prior = foldAskLog(before).projection;
      if (checkAskEvent(prior, target)) return unknown('that event had no effect, so there is nothing to undo');
      if (canonicalJson(inverseOf(prior, target)) !== canonicalJson(receipt.event)) return unknown('it is not the receipt the host issued');
      const current = this.current(sessionId);
      if (current.lastSeq !== lastSeq) return err(rennetError('store-failed', 'the ask log moved while the receipt was checked; try again'));
      return this.append(sessionId, current, receipt.event, receipt.undoes, now);
    });
  }

  /**
   * Appends one host-only event (ASK_HOST_EVENT_TYPES: `quoteAnchor`) through the same path as a
   * command: validated with the event schema, checked against the caught-up projection, one
   * durable append, `onAppend` pushed, a receipt that undoes it. Any other event type is refused
   * ('invalid'): a reviewer's act is a command, an inverse is an undo.
   */
  appendHostEvent(sessionId: string, input: unknown, now: string): Result<AskCommandOutcome> {
    return this.guard(sessionId, () => {
      const parsed = AskEvent.safeParse(input);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
        return err(refusalError({ code: 'invalid', message: `invalid host ask event: ${where}${issue?.message ?? 'unknown'}` }));
      }
      const event = parsed.data;
      if (!(ASK_HOST_EVENT_TYPES as readonly string[]).includes(event.type)) {
        return err(refusalError({ code: 'invalid', message: `${event.type} is not a host event (host events: ${ASK_HOST_EVENT_TYPES.join(', ')})` }));
      }
      return this.append(sessionId, this.current(sessionId), event, null, now);
    });
  }

  /**
   * After a round composed `successor`: re-anchors every quote thread anchored on generation
   * `priorGenerationId` (reanchorThreads, host/board/quoteAnchors.ts) against the current
   * projection, appending one quoteAnchor per thread that changes. Each append stands alone:
   * a refused one (another writer moved the thread first) is reported in its entry and the
   * others still land.
   */
  reanchorQuoteThreads(sessionId: string, priorGenerationId: string, successor: ReanchorSuccessor, now: string): Result<Array<ThreadReanchor & { appended: Result<AskCommandOutcome> }>> {
    return this.guard(sessionId, () => {
      const planned = reanchorThreads(this.current(sessionId).projection, priorGenerationId, successor);
      return ok(planned.map((entry) => ({ ...entry, appended: this.appendHostEvent(sessionId, entry.event, now) })));
    });
  }

  /** The current projection (cached, caught up from the log). Reads never write. */
  projection(sessionId: string): Result<AskProjection> {
    return this.guard(sessionId, () => ok(this.current(sessionId).projection));
  }

  /** A fresh fold of the whole log, bypassing the cache: the projection, its last seq, what was skipped. */
  read(sessionId: string): Result<{ projection: AskProjection; lastSeq: number; skipped: Array<{ seq: number; reason: string }> }> {
    return this.guard(sessionId, () => {
      const fresh = this.foldFrom(sessionId, { lastSeq: 0, projection: EMPTY_ASK_PROJECTION }, this.store.readEvents(sessionId), false);
      return ok({ projection: fresh.cached.projection, lastSeq: fresh.cached.lastSeq, skipped: fresh.skipped });
    });
  }

  /** Drops the cache (of one session, or all). The next read folds from the log. */
  forget(sessionId?: string): void {
    if (sessionId === undefined) this.cache.clear();
    else this.cache.delete(sessionId);
  }

  // ─── internals ──────────────────────────────────────────────────────────────────────────────

  private guard<T>(sessionId: string, body: () => Result<T>): Result<T> {
    try {
      if (typeof sessionId !== 'string' || !this.store.getSession(sessionId)) {
        return err(rennetError('not-found', `no session ${String(sessionId)} in the store`, { sessionId: String(sessionId) }));
      }
      return body();
    } catch (error) {
      if (isStoreError(error)) return err(error.toRennetError());
      return err(rennetError('store-failed', `the ask log failed: ${errorMessage(error)}`));
    }
  }

  /** The cached projection, caught up with whatever the log gained since (other processes too). */
  private current(sessionId: string): Cached {
    const cached = this.cache.get(sessionId) ?? { lastSeq: 0, projection: EMPTY_ASK_PROJECTION };
    const fresh = this.store.readEvents(sessionId, cached.lastSeq);
    if (fresh.length === 0 && this.cache.has(sessionId)) return cached;
    const next = this.foldFrom(sessionId, cached, fresh, true).cached;
    this.cache.set(sessionId, next);
    return next;
  }

  private foldFrom(sessionId: string, start: Cached, stored: readonly StoredEvent[], report: boolean): { cached: Cached; skipped: Array<{ seq: number; reason: string }> } {
    const skipped: Array<{ seq: number; reason: string }> = [];
    const events: AskEvent[] = [];
    const seqs: number[] = [];
    let lastSeq = start.lastSeq;
    for (const e of stored) {
      lastSeq = e.seq;
      const decoded = decodeAskEvent(e);
      if (!decoded) continue;
      if (!decoded.ok) skipped.push({ seq: e.seq, reason: decoded.reason });
      else {
        events.push(decoded.event);
        seqs.push(e.seq);
      }
    }
    let projection = start.projection;
    if (events.length <= STEP_CATCH_UP_MAX) {
      events.forEach((event, i) => {
        const step = stepAsks(projection, event);
        if (step.ok) projection = step.projection;
        else skipped.push({ seq: seqs[i] ?? 0, reason: `${step.refusal.code}: ${step.refusal.message}` });
      });
    } else {
      const fold = foldAskLog(events, projection);
      projection = fold.projection;
      for (const s of fold.skipped) skipped.push({ seq: seqs[s.index] ?? 0, reason: `${s.refusal.code}: ${s.refusal.message}` });
    }
    skipped.sort((a, b) => a.seq - b.seq);
    if (report && this.options.onSkipped) for (const s of skipped) this.options.onSkipped(sessionId, s.seq, s.reason);
    return { cached: { lastSeq, projection }, skipped };
  }

  /** Checks `event` against `current`, appends it (one durable event) and answers its receipt. */
  private append(sessionId: string, current: Cached, event: AskEvent, undoes: number | null, now: string): Result<AskCommandOutcome> {
    const step = stepAsks(current.projection, event);
    if (!step.ok) return err(refusalError(step.refusal, undoes === null ? '' : 'the receipt no longer applies: '));
    const payload = undoes === null ? event : { ...event, undoes };
    const { seq } = this.store.appendEvent(sessionId, askEventKind(event.type), payload, now);
    let projection = step.projection;
    let inverse = step.inverse;
    if (seq === current.lastSeq + 1) {
      this.cache.set(sessionId, { lastSeq: seq, projection });
    } else {
      // Another process appended between our read and our append: fold what is really there.
      this.cache.delete(sessionId);
      const all = this.store.readEvents(sessionId);
      const before = all
        .filter((e) => e.seq < seq)
        .map(decodeAskEvent)
        .flatMap((d) => (d?.ok ? [d.event] : []));
      const prior = foldAskLog(before).projection;
      const raced = stepAsks(prior, event);
      projection = this.current(sessionId).projection;
      if (!raced.ok) {
        this.options.onAppend?.({ sessionId, seq, event, projection });
        return err(refusalError(raced.refusal, 'another writer changed the asks first; this act was recorded but has no effect: '));
      }
      inverse = raced.inverse;
    }
    this.options.onAppend?.({ sessionId, seq, event, projection });
    return ok({ event, seq, receipt: { undoes: seq, event: inverse }, projection });
  }
}
