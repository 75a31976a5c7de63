/**
 * The panel's UI state and its pure reducer. Host data only ever arrives as whole snapshots; the
 * webview adds what belongs to the UI (a recapture in flight, a dismissed error, the lens the
 * reviewer chose).
 */
import type { GenerationSnapshot, HostStatus, Lens, PanelState, SessionSnapshot, ToWebview } from '../protocol';

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
  /** The lens the reviewer chose; null: the default (Flagged when it has a board). */
  lens: Lens | null;
}

export type PanelAction =
  | { type: 'message'; message: ToWebview }
  | { type: 'refresh-requested' }
  | { type: 'dismiss-error' }
  | { type: 'select-lens'; lens: Lens };

export const initialModel: PanelModel = {
  snapshot: null,
  received: false,
  hostStatus: null,
  error: null,
  refreshing: false,
  generation: null,
  generationReceived: false,
  lens: null,
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
  }
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
      return { ...model, generation: message.snapshot, generationReceived: true };
  }
}
