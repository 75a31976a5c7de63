/**
 * The panel's UI state and its pure reducer. Host data arrives as whole snapshots, and the shown
 * generation also as deltas on top of the last one (protocol/generationDelta.ts, folded by the
 * same `applyGenerationDelta` the host and the extension run); the webview adds what belongs to
 * the UI (a recapture in flight, a dismissed error, the lens the reviewer chose, a reveal waiting
 * for its generation, the Explains it asked for). A delta that does not apply on the shown
 * generation changes nothing it shows: the model records the gap, and the App asks the extension
 * for the generation whole (`rennet/panel/generationGap`), once per gap.
 */
import {
  applyGenerationDelta,
  type AskProjection,
  type GenerationSnapshot,
  type HostStatus,
  type Lens,
  type PanelState,
  type QuoteAnchor,
  type Round,
  type SessionSnapshot,
  type ToWebview,
} from '../protocol';
import type { ExplainRequest } from './board/asks';
import { shareGeneration } from './share';

/** A `rennet/panel/reveal` not yet carried out: its generation is not shown, or its element not focused. */
export interface RevealRequest {
  generationId: string;
  lens: Lens;
  elementId: string;
  /** Bumped by every reveal, so revealing the same element twice runs twice. */
  seq: number;
}

/** A generation delta that did not apply on the shown generation: the panel asks for it whole. */
export interface GenerationGap {
  generationId: string;
  /** Why it did not apply (the fold's words), reported to the extension. */
  reason: string;
  /** Bumped by every gap, so each is asked about once. */
  seq: number;
  /** Asked about and not answered yet (no whole generation has arrived since): later gaps wait for it. */
  open: boolean;
}

/** An inline notice the reviewer dismisses: an ask act the host refused, or a reveal that found nothing. */
export interface PanelNotice {
  kind: 'ask-refused' | 'reveal-missing';
  message: string;
  /** Bumped by every notice, so the same words twice still show as new. */
  seq: number;
}

export interface PanelModel {
  /** The last snapshot received; null until the first arrives. */
  snapshot: SessionSnapshot | null;
  /** A snapshot has arrived at least once (distinguishes "loading" from "not captured yet"). */
  received: boolean;
  hostStatus: HostStatus | null;
  /** The last error the extension reported, until dismissed or answered by a recapture. */
  error: string | null;
  /** The reviewer asked for a recapture and no answer has arrived yet. */
  refreshing: boolean;
  /** The generation shown (live, or a frozen one the reviewer picked); null: none yet. */
  generation: GenerationSnapshot | null;
  /** A `rennet/panel/generation` message has arrived (distinguishes "none yet" from "not told"). */
  generationReceived: boolean;
  /** The last delta that did not apply; null: none yet. */
  generationGap: GenerationGap | null;
  /** The lens the reviewer chose; null: the default (Flagged when it has a board). */
  lens: Lens | null;
  /** The session's ask projection, whole; null until the first `rennet/panel/asks`. */
  asks: AskProjection | null;
  /** The act the extension can undo next ("dismiss finding"); null: nothing to undo. */
  undoLabel: string | null;
  /** A reveal waiting to be carried out. */
  reveal: RevealRequest | null;
  /** The seq of the last reveal received (monotonic, so a late "done" never ends a newer one). */
  revealSeq: number;
  /** Explains this panel asked for, by its own requestId. */
  explains: Readonly<Record<string, ExplainRequest>>;
  /** The last refusal or failed reveal, until dismissed or replaced. */
  notice: PanelNotice | null;
  /** Acts refused (or unsendable) so far: a composer waiting on its act stops waiting when it moves. */
  refusals: number;
  /** The session's rounds, whole, oldest first (`rennet/panel/rounds`); null until the first arrives. */
  rounds: readonly Round[] | null;
}

export type PanelAction =
  | { type: 'message'; message: ToWebview }
  | { type: 'refresh-requested' }
  | { type: 'dismiss-error' }
  | { type: 'select-lens'; lens: Lens }
  /** The panel sent `rennet/panel/explain` (shown as working until the extension reports). */
  | { type: 'explain-requested'; requestId: string; anchor: QuoteAnchor }
  | { type: 'dismiss-notice' }
  /** The reveal `seq` was carried out (`found`: its element was on the board and got focus). */
  | { type: 'reveal-done'; seq: number; found: boolean }
  /** The panel could not send an act (it did not pass the contract); said inline like a refusal. */
  | { type: 'ask-unsendable'; message: string };

export const initialModel: PanelModel = {
  snapshot: null,
  received: false,
  hostStatus: null,
  error: null,
  refreshing: false,
  generation: null,
  generationReceived: false,
  generationGap: null,
  lens: null,
  asks: null,
  undoLabel: null,
  reveal: null,
  revealSeq: 0,
  explains: {},
  notice: null,
  refusals: 0,
  rounds: null,
};

/** The model a (re)opened panel starts from: the reviewer's lens survives a reload. */
export function initModel(restored: PanelState | undefined): PanelModel {
  return restored?.lens ? { ...initialModel, lens: restored.lens } : initialModel;
}

export function reduce(model: PanelModel, action: PanelAction): PanelModel {
  switch (action.type) {
    case 'refresh-requested':
      return { ...model, refreshing: true, error: null };
    case 'dismiss-error':
      return { ...model, error: null };
    case 'select-lens':
      return model.lens === action.lens ? model : { ...model, lens: action.lens };
    case 'message':
      return onMessage(model, action.message);
    case 'explain-requested':
      return {
        ...model,
        explains: { ...model.explains, [action.requestId]: { anchor: action.anchor, state: 'working', threadId: null, message: null, order: nextOrder(model.explains) } },
      };
    case 'dismiss-notice':
      return model.notice === null ? model : { ...model, notice: null };
    case 'reveal-done': {
      if (model.reveal?.seq !== action.seq) return model; // a newer reveal replaced it
      if (action.found) return { ...model, reveal: null };
      const { elementId, lens } = model.reveal;
      return { ...model, reveal: null, notice: notice(model, 'reveal-missing', `Element “${elementId}” is not on the ${lens} board shown here.`) };
    }
    case 'ask-unsendable':
      return { ...model, notice: notice(model, 'ask-refused', action.message), refusals: model.refusals + 1 };
  }
}

function notice(model: PanelModel, kind: PanelNotice['kind'], message: string): PanelNotice {
  return { kind, message, seq: (model.notice?.seq ?? 0) + 1 };
}

function nextOrder(explains: Readonly<Record<string, ExplainRequest>>): number {
  let max = 0;
  for (const request of Object.values(explains)) max = Math.max(max, request.order);
  return max + 1;
}

function onMessage(model: PanelModel, message: ToWebview): PanelModel {
  switch (message.type) {
    case 'rennet/panel/snapshot':
      return {
        ...model,
        snapshot: message.snapshot,
        received: true,
        // A snapshot answers a recapture; an error stays until dismissed or a new recapture.
        refreshing: false,
      };
    case 'rennet/panel/hostStatus':
      return {
        ...model,
        hostStatus: message.status,
        refreshing: message.status.state === 'failed' ? false : model.refreshing,
      };
    case 'rennet/panel/error':
      return { ...model, error: message.message, refreshing: false };
    case 'rennet/panel/generation':
      // Taken whole; the chosen lens stays (a lens is a reading, not an element of one generation).
      // Parts equal to the shown generation's are kept as they were, so unchanged elements skip their render.
      return {
        ...model,
        generation: shareGeneration(model.generation, message.snapshot),
        generationReceived: true,
        generationGap: model.generationGap?.open ? { ...model.generationGap, open: false } : model.generationGap,
      };
    case 'rennet/panel/generationDelta': {
      // Parts the delta does not touch stay the same objects, so unchanged elements skip their render.
      const applied = applyGenerationDelta(model.generation, message.delta);
      if (applied.ok) return { ...model, generation: applied.snapshot };
      if (applied.refusal === 'stale' || model.generationGap?.open) return model;
      return { ...model, generationGap: { generationId: message.delta.generationId, reason: applied.message, seq: (model.generationGap?.seq ?? 0) + 1, open: true } };
    }
    case 'rennet/panel/asks':
      return { ...model, asks: message.projection, undoLabel: message.undo?.label ?? null };
    case 'rennet/panel/reveal':
      // The lens is chosen now; the element is focused once its generation is the shown one.
      return {
        ...model,
        lens: message.lens,
        reveal: { generationId: message.generationId, lens: message.lens, elementId: message.elementId, seq: model.revealSeq + 1 },
        revealSeq: model.revealSeq + 1,
      };
    case 'rennet/panel/explainStatus': {
      const known = Object.hasOwn(model.explains, message.requestId) ? model.explains[message.requestId] : undefined;
      const request: ExplainRequest = {
        anchor: known?.anchor ?? null,
        state: message.state,
        threadId: message.threadId ?? known?.threadId ?? null,
        message: message.message,
        order: known?.order ?? nextOrder(model.explains),
      };
      return { ...model, explains: { ...model.explains, [message.requestId]: request } };
    }
    case 'rennet/panel/askRefused':
      return { ...model, notice: notice(model, 'ask-refused', message.message), refusals: model.refusals + 1 };
    case 'rennet/panel/rounds':
      // Taken whole; a ledger of another session (a panel reused for another review) is not this one's.
      if (model.snapshot && message.sessionId !== model.snapshot.session.id) return model;
      return { ...model, rounds: message.rounds };
  }
}
