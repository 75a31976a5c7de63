/**
 * The webview's one seam to the extension. This is the only module that touches
 * `acquireVsCodeApi()`; everything else receives a PanelBridge, so tests pass a fake.
 */
import { FromWebview, PanelState, type ToWebview } from '../protocol/webview';
import { createMessageReader } from './reader';

export { parseToWebview, type Parsed } from './reader';

export interface PanelBridge {
  post(message: FromWebview): void;
  /** Subscribe to validated messages from the extension; returns the unsubscribe function. */
  onMessage(callback: (message: ToWebview) => void): () => void;
  getState(): PanelState | undefined;
  setState(state: PanelState): void;
}

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare function acquireVsCodeApi(): VsCodeApi;

/** Validate what VS Code kept for this panel. */
export function parsePanelState(data: unknown): PanelState | undefined {
  const parsed = PanelState.safeParse(data);
  return parsed.success ? parsed.data : undefined;
}

let api: VsCodeApi | undefined;

/** The real bridge: `acquireVsCodeApi()` (callable once per page, so cached) and window messages. */
export function createVsCodeBridge(target: Window = window): PanelBridge {
  api ??= acquireVsCodeApi();
  const vscode = api;
  return {
    post: (message) => vscode.postMessage(FromWebview.parse(message)),
    onMessage(callback) {
      // One reader per subscription: it keeps the last generation it accepted (./reader.ts).
      const reader = createMessageReader();
      const listener = (event: MessageEvent<unknown>) => {
        const parsed = reader.read(event.data);
        if (parsed.ok) callback(parsed.value);
        else console.warn(`[rennet] dropped an invalid message from the extension: ${parsed.reason}`);
      };
      target.addEventListener('message', listener);
      return () => target.removeEventListener('message', listener);
    },
    getState: () => parsePanelState(vscode.getState()),
    setState: (state) => vscode.setState(PanelState.parse(state)),
  };
}
