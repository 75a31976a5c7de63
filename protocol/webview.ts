import { z } from 'zod';
import { Lens } from './board';
import { GenerationSnapshot } from './review';
import { SessionSnapshot } from './session';

/**
 * The webview ⇄ extension contract (postMessage). The webview owns only UI state; host data
 * arrives as full snapshots after the webview says it is ready.
 */

/**
 * Panel state VS Code keeps across reloads (webview serializer). `lens` and `generationId` are the
 * reviewer's reading position; both optional (older saved states have neither), and an unreadable
 * value falls back to "not chosen" rather than losing the session.
 */
export const PanelState = z.object({
  sessionId: z.string(),
  /** The lens the reviewer chose; absent: the default (Flagged when it has a board). */
  lens: Lens.optional().catch(undefined),
  /** The frozen generation the reviewer pinned with the switcher; absent or null: the live one. */
  generationId: z.string().nullable().optional().catch(undefined),
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
  /** The session's current generation (or the one the panel asked for), whole. null: none yet. */
  z.object({ type: z.literal('rennet/panel/generation'), snapshot: GenerationSnapshot.nullable() }),
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
  /** Open a cited range in the editor (head: the workspace file when unchanged, else the captured blob). */
  z.object({
    type: z.literal('rennet/panel/openCitation'),
    path: z.string(),
    side: z.enum(['base', 'head']),
    startLine: z.number().int().positive(),
    endLine: z.number().int().positive(),
  }),
  /** Show a frozen generation (read-only) or, with null, the live one. */
  z.object({ type: z.literal('rennet/panel/selectGeneration'), generationId: z.string().nullable() }),
  /** Draft the lens boards for the session's active patchset (again). */
  z.object({ type: z.literal('rennet/panel/runLenses') }),
]);
export type FromWebview = z.infer<typeof FromWebview>;
