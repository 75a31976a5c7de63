import { applyGenerationDelta, type DeltaOutcome, type GenerationDelta, type GenerationSnapshot } from '../protocol';

/**
 * The live generation of each session as the host's pushes made it (pure: no vscode): a whole
 * snapshot (`rennet/generation/changed`, or a whole read after a gap) replaces what is held, a
 * delta (`rennet/generation/delta`) is folded on it with protocol's `applyGenerationDelta`. A
 * delta that does not apply changes nothing held; the caller reads the generation whole.
 */
export class GenerationFold {
  private readonly held = new Map<string, GenerationSnapshot>();

  /** A whole generation of its session: what later deltas apply on. */
  whole(snapshot: GenerationSnapshot): void {
    this.held.set(snapshot.sessionId, snapshot);
  }

  /** Folds a delta on its session's generation; refused (and nothing changed) when it is not the delta's base. */
  delta(delta: GenerationDelta): DeltaOutcome {
    const applied = applyGenerationDelta(this.held.get(delta.sessionId) ?? null, delta);
    if (applied.ok) this.held.set(delta.sessionId, applied.snapshot);
    return applied;
  }

  get(sessionId: string): GenerationSnapshot | undefined {
    return this.held.get(sessionId);
  }

  /** Every session's generation is read whole again (a new host process: its streams are new). */
  clear(): void {
    this.held.clear();
  }
}

/** A generation the host changed, as the extension's listeners hear it: whole, and the delta that made it (null: it came whole). */
export interface GenerationChange {
  snapshot: GenerationSnapshot;
  delta: GenerationDelta | null;
}

/** Whether `delta` applies on `shown` (the same generation and stream, at its base revision). */
export function deltaAppliesOn(shown: GenerationSnapshot | null | undefined, delta: GenerationDelta): boolean {
  return !!shown && shown.generationId === delta.generationId && shown.revision?.stream === delta.stream && shown.revision.n === delta.baseRevision;
}

/** A generation without its push-stream revision: what it says, for readers that compare generations. */
export function withoutRevision(snapshot: GenerationSnapshot): GenerationSnapshot {
  if (snapshot.revision === undefined) return snapshot;
  const { revision: _revision, ...rest } = snapshot;
  return rest;
}
