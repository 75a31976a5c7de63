import type { MessageConnection } from 'vscode-jsonrpc';
import { applyGenerationDelta, GenerationDelta } from '../../protocol/generationDelta';
import { GenerationSnapshot } from '../../protocol/review';
import { GenerationChanged, GenerationDeltaPushed } from '../../protocol/rpc';

/**
 * What a host's generation pushes make, as the extension folds them (extension/generationFold.ts):
 * every `rennet/generation/changed` taken whole, every `rennet/generation/delta` folded on the
 * generation of its session held before it with protocol's `applyGenerationDelta`. Each message
 * is parsed with its schema first (what the extension's edge accepts). A delta that does not apply
 * is recorded in `problems`, never skipped silently.
 */

export interface GenerationPush {
  /** Arrival, Date.now(). */
  at: number;
  kind: 'whole' | 'delta';
  /** The session's generation after this message. */
  snapshot: GenerationSnapshot;
  /** The delta as it came (kind 'delta'). */
  delta: GenerationDelta | null;
  /** The message's params as JSON, in bytes. */
  bytes: number;
}

export interface GenerationPushes {
  pushes: GenerationPush[];
  /** Deltas that did not apply, and messages that did not parse, in words. */
  problems: string[];
  /** The last generation each push made, in order (what `pushes.map(p => p.snapshot)` says). */
  snapshots(): GenerationSnapshot[];
}

export function listenGenerations(connection: MessageConnection): GenerationPushes {
  const pushes: GenerationPush[] = [];
  const problems: string[] = [];
  const held = new Map<string, GenerationSnapshot>();
  connection.onNotification(GenerationChanged, (raw) => {
    const parsed = GenerationSnapshot.safeParse(raw);
    if (!parsed.success) return void problems.push(`a whole push does not parse: ${parsed.error.message}`);
    held.set(parsed.data.sessionId, parsed.data);
    pushes.push({ at: Date.now(), kind: 'whole', snapshot: parsed.data, delta: null, bytes: Buffer.byteLength(JSON.stringify(raw)) });
  });
  connection.onNotification(GenerationDeltaPushed, (raw) => {
    const parsed = GenerationDelta.safeParse(raw);
    if (!parsed.success) return void problems.push(`a delta does not parse: ${parsed.error.message}`);
    const delta = parsed.data;
    const applied = applyGenerationDelta(held.get(delta.sessionId) ?? null, delta);
    if (!applied.ok) return void problems.push(`delta ${delta.revision} of ${delta.generationId} (${delta.lane?.lens ?? 'no lane'}) does not apply: ${applied.refusal}: ${applied.message}`);
    held.set(delta.sessionId, applied.snapshot);
    pushes.push({ at: Date.now(), kind: 'delta', snapshot: applied.snapshot, delta, bytes: Buffer.byteLength(JSON.stringify(raw)) });
  });
  return { pushes, problems, snapshots: () => pushes.map((p) => p.snapshot) };
}

/** A generation as it says itself: without its push-stream revision, as JSON carries it. */
export function generationContent(snapshot: GenerationSnapshot): unknown {
  const { revision: _revision, ...rest } = snapshot;
  return JSON.parse(JSON.stringify(rest)) as unknown;
}
