/**
 * The webview's one seam to the extension. This is the only module that touches
 * `acquireVsCodeApi()`; everything else receives a PanelBridge, so tests pass a fake.
 */
import { FromPreview, FromWebview, PanelState, PreviewState, ToPreview } from '../protocol/webview';
import type { ToWebview } from '../protocol/webview';
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

/** The review preview's seam to the extension (the same page API, its own messages). */
export interface PreviewBridge {
  post(message: FromPreview): void;
  /** Subscribe to validated messages from the extension; returns the unsubscribe function. */
  onMessage(callback: (message: ToPreview) => void): () => void;
  getState(): PreviewState | undefined;
  setState(state: PreviewState): void;
}

/** Validate what VS Code kept for a preview. */
export function parsePreviewState(data: unknown): PreviewState | undefined {
  const parsed = PreviewState.safeParse(data);
  return parsed.success ? parsed.data : undefined;
}

/** Validate one message for the preview with the ToPreview schema, whole. */
export function parseToPreview(data: unknown): { ok: true; value: ToPreview } | { ok: false; reason: string } {
  const parsed = ToPreview.safeParse(data);
  if (parsed.success) return { ok: true, value: parsed.data };
  return { ok: false, reason: parsed.error.issues.map((i) => `${i.path.map(String).join('.') || '(root)'}: ${i.message}`).join('; ') };
}

/** The real preview bridge: the same cached `acquireVsCodeApi()` and window messages, checked with ToPreview. */
export function createPreviewBridge(target: Window = window): PreviewBridge {
  api ??= acquireVsCodeApi();
  const vscode = api;
  return {
    post: (message) => vscode.postMessage(FromPreview.parse(message)),
    onMessage(callback) {
      const listener = (event: MessageEvent<unknown>) => {
        const parsed = parseToPreview(event.data);
        if (parsed.ok) callback(parsed.value);
        else console.warn(`[rennet] dropped an invalid message from the extension: ${parsed.reason}`);
      };
      target.addEventListener('message', listener);
      return () => target.removeEventListener('message', listener);
    },
    getState: () => parsePreviewState(vscode.getState()),
    setState: (state) => vscode.setState(PreviewState.parse(state)),
  };
}
