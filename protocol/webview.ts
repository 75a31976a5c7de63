import { z } from 'zod';
import { SessionSnapshot } from './session';

/**
 * The webview ⇄ extension contract (postMessage). The webview owns only UI state; host data
 * arrives as full snapshots after the webview says it is ready.
 */

/** Panel state VS Code keeps across reloads (webview serializer). */
export const PanelState = z.object({
  sessionId: z.string(),
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
]);
export type ToWebview = z.infer<typeof ToWebview>;

/** webview → extension */
export const FromWebview = z.discriminatedUnion('type', [
  /** The app mounted and listens; the extension answers with a snapshot. */
  z.object({ type: z.literal('rennet/panel/ready') }),
  /** Open a captured file in the editor. */
  z.object({ type: z.literal('rennet/panel/openFile'), path: z.string(), side: z.enum(['base', 'head']) }),
  /** Capture the target again (new commits on the branch, edits in the working tree). */
  z.object({ type: z.literal('rennet/panel/refresh') }),
]);
export type FromWebview = z.infer<typeof FromWebview>;
