/**
 * The panel's UI state and its pure reducer. Host data only ever arrives as whole snapshots; the
 * webview adds what belongs to the UI (a recapture in flight, a dismissed error).
 */
import type { HostStatus, SessionSnapshot, ToWebview } from '../protocol';

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
}

export type PanelAction =
  | { type: 'message'; message: ToWebview }
  | { type: 'refresh-requested' }
  | { type: 'dismiss-error' };

export const initialModel: PanelModel = {
  snapshot: null,
  received: false,
  hostStatus: null,
  error: null,
  refreshing: false,
};

export function reduce(model: PanelModel, action: PanelAction): PanelModel {
  switch (action.type) {
    case 'refresh-requested':
      return { ...model, refreshing: true, error: null };
    case 'dismiss-error':
      return { ...model, error: null };
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
      // Rendered by the board view (issue E); the capture panel keeps its own model.
      return model;
  }
}
