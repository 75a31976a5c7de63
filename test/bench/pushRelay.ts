import { performance } from 'node:perf_hooks';
import type { MessageConnection } from 'vscode-jsonrpc';
import { deltaAppliesOn, GenerationFold } from '../../extension/generationFold';
import { GenerationDelta } from '../../protocol/generationDelta';
import { GenerationSnapshot } from '../../protocol/review';
import { GenerationChanged, GenerationDeltaPushed } from '../../protocol/rpc';
import type { ToWebview } from '../../protocol/webview';

/**
 * What the extension does with a host's generation pushes for one session's panel
 * (extension/hostClient.ts and boardPanel.ts, with their pure fold, extension/generationFold.ts):
 * a whole push is posted whole; a delta is folded on the session's generation and posted as the
 * delta when the panel was last sent its base, else the folded generation goes whole. A delta that
 * does not apply is a bench failure (the extension would read the generation whole; a bench run
 * that needs that is not measuring the path it claims to). A host that sends only whole pushes (an
 * earlier build) is relayed as it is.
 */

export interface Relayed {
  /** What the page is posted. */
  message: ToWebview;
  /** The session's generation once the page has taken it. */
  snapshot: GenerationSnapshot;
  /** performance.now() when the push arrived. */
  arrivedAt: number;
  /** The posted message as JSON, in bytes. */
  bytes: number;
}

export function relayGenerations(connection: MessageConnection, sessionId: string, onRelayed: (relayed: Relayed) => void, onError: (error: Error) => void): void {
  const fold = new GenerationFold();
  let sent: GenerationSnapshot | null = null;
  const post = (snapshot: GenerationSnapshot, message: ToWebview, arrivedAt: number) => {
    sent = snapshot;
    onRelayed({ message, snapshot, arrivedAt, bytes: Buffer.byteLength(JSON.stringify(message)) });
  };
  connection.onNotification(GenerationChanged, (raw) => {
    const arrivedAt = performance.now();
    const parsed = GenerationSnapshot.safeParse(raw);
    if (!parsed.success) return onError(new Error(`a rennet/generation/changed push does not parse (the extension would drop it): ${parsed.error.message}`));
    if (parsed.data.sessionId !== sessionId) return;
    fold.whole(parsed.data);
    post(parsed.data, { type: 'rennet/panel/generation', snapshot: parsed.data }, arrivedAt);
  });
  connection.onNotification(GenerationDeltaPushed, (raw) => {
    const arrivedAt = performance.now();
    const parsed = GenerationDelta.safeParse(raw);
    if (!parsed.success) return onError(new Error(`a rennet/generation/delta push does not parse (the extension would drop it): ${parsed.error.message}`));
    const delta = parsed.data;
    if (delta.sessionId !== sessionId) return;
    const applied = fold.delta(delta);
    if (!applied.ok) return onError(new Error(`delta ${delta.revision} of ${delta.generationId} does not apply on what the relay holds: ${applied.message}`));
    if (deltaAppliesOn(sent, delta)) post(applied.snapshot, { type: 'rennet/panel/generationDelta', delta }, arrivedAt);
    else post(applied.snapshot, { type: 'rennet/panel/generation', snapshot: applied.snapshot }, arrivedAt);
  });
}
