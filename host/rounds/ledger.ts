import type { FileChange } from '../../protocol/patchset';
import { ROUND_EVENT_PREFIX, Round, RoundFailure, RoundPhase, RoundReport, RoundState, RoundWorker, RoundWorkspace, type RoundDiffTotals } from '../../protocol/rounds';
import { z } from 'zod';

/**
 * PURE. A round's durable receipts, and the ledger folded from them. Every phase of a round ends in
 * one event on the session log (kind `round.<receipt>`, payload naming the round); the ledger is
 * the fold of those events, so a restarted host reads the same rounds back and resumes a running
 * one from its last receipt.
 */

export const ROUND_EVENT_KINDS = {
  started: `${ROUND_EVENT_PREFIX}started`,
  phase: `${ROUND_EVENT_PREFIX}phase`,
  checkpoint: `${ROUND_EVENT_PREFIX}checkpoint`,
  worker: `${ROUND_EVENT_PREFIX}worker`,
  measured: `${ROUND_EVENT_PREFIX}measured`,
  successor: `${ROUND_EVENT_PREFIX}successor`,
  reported: `${ROUND_EVENT_PREFIX}reported`,
  generation: `${ROUND_EVENT_PREFIX}generation`,
  ended: `${ROUND_EVENT_PREFIX}ended`,
  resumed: `${ROUND_EVENT_PREFIX}resumed`,
} as const;

export const StartedReceipt = z.object({
  round: z.string(),
  ordinal: z.number().int().positive(),
  asks: z.array(z.string()),
  workOrderDigest: z.string(),
  worker: RoundWorker,
  workspace: RoundWorkspace,
  fromPatchsetId: z.string(),
  fromGenerationId: z.string().nullable(),
  startedAt: z.string(),
});
export type StartedReceipt = z.infer<typeof StartedReceipt>;

export const PhaseReceipt = z.object({ round: z.string(), phase: RoundPhase });
export const CheckpointReceipt = z.object({ round: z.string(), label: z.enum(['before', 'after']), commit: z.string(), head: z.string() });
export type CheckpointReceipt = z.infer<typeof CheckpointReceipt>;
export const WorkerReceipt = z.object({ round: z.string(), outcome: z.enum(['done', 'failed', 'aborted', 'lost']), message: z.string().nullable() });
export type WorkerReceipt = z.infer<typeof WorkerReceipt>;
/** The measured diff is kept whole: the report is verified against it, and re-verified after a restart. */
export const MeasuredReceipt = z.object({
  round: z.string(),
  range: z.object({ from: z.string(), to: z.string() }),
  diff: z.object({ files: z.number().int(), additions: z.number().int(), deletions: z.number().int() }),
  changedPaths: z.array(z.string()),
  files: z.array(z.unknown()),
});
export type MeasuredReceipt = Omit<z.infer<typeof MeasuredReceipt>, 'files'> & { files: FileChange[] };
export const SuccessorReceipt = z.object({ round: z.string(), patchsetId: z.string() });
export const ReportedReceipt = z.object({ round: z.string(), report: RoundReport, harness: z.string(), model: z.string().nullable() });
export const GenerationReceipt = z.object({ round: z.string(), generationId: z.string() });
export const EndedReceipt = z.object({ round: z.string(), state: RoundState.exclude(['running']), failure: RoundFailure.nullable(), at: z.string() });
export type EndedReceipt = z.infer<typeof EndedReceipt>;
/** Retry: a failed round runs again from its last receipt (its worker is never run twice). */
export const ResumedReceipt = z.object({ round: z.string(), at: z.string() });

/** Everything the receipts say about one round, beyond its ledger row (what a resume needs). */
export interface RoundTrail {
  round: Round;
  checkpoints: { before: CheckpointReceipt | null; after: CheckpointReceipt | null };
  worker: WorkerReceipt | null;
  measured: MeasuredReceipt | null;
}

/** The session's rounds, oldest first, folded from its event log. Unreadable round events are skipped (and counted). */
export function foldRounds(sessionId: string, events: ReadonlyArray<{ kind: string; payload: unknown }>): { trails: RoundTrail[]; skipped: number } {
  const trails = new Map<string, RoundTrail>();
  let skipped = 0;
  const trailOf = (id: string) => trails.get(id);
  for (const event of events) {
    if (!event.kind.startsWith(ROUND_EVENT_PREFIX)) continue;
    const p = event.payload;
    switch (event.kind) {
      case ROUND_EVENT_KINDS.started: {
        const r = StartedReceipt.safeParse(p);
        if (!r.success || trails.has(r.data.round)) {
          skipped++;
          break;
        }
        const s = r.data;
        trails.set(s.round, {
          round: {
            id: s.round,
            sessionId,
            ordinal: s.ordinal,
            asks: s.asks,
            workOrderDigest: s.workOrderDigest,
            worker: s.worker,
            workspace: s.workspace,
            fromPatchsetId: s.fromPatchsetId,
            fromGenerationId: s.fromGenerationId,
            startedAt: s.startedAt,
            phase: 'prep',
            state: 'running',
            failure: null,
            range: null,
            diff: null,
            successorPatchsetId: null,
            report: null,
            generationId: null,
            endedAt: null,
          },
          checkpoints: { before: null, after: null },
          worker: null,
          measured: null,
        });
        break;
      }
      case ROUND_EVENT_KINDS.phase: {
        const r = PhaseReceipt.safeParse(p);
        const t = r.success ? trailOf(r.data.round) : undefined;
        if (!r.success || !t) skipped++;
        else t.round.phase = r.data.phase;
        break;
      }
      case ROUND_EVENT_KINDS.checkpoint: {
        const r = CheckpointReceipt.safeParse(p);
        const t = r.success ? trailOf(r.data.round) : undefined;
        if (!r.success || !t) skipped++;
        else t.checkpoints[r.data.label] = r.data;
        break;
      }
      case ROUND_EVENT_KINDS.worker: {
        const r = WorkerReceipt.safeParse(p);
        const t = r.success ? trailOf(r.data.round) : undefined;
        if (!r.success || !t) skipped++;
        else t.worker = r.data;
        break;
      }
      case ROUND_EVENT_KINDS.measured: {
        const r = MeasuredReceipt.safeParse(p);
        const t = r.success ? trailOf(r.data.round) : undefined;
        if (!r.success || !t) skipped++;
        else {
          t.measured = r.data as MeasuredReceipt;
          t.round.range = r.data.range;
          t.round.diff = r.data.diff satisfies RoundDiffTotals;
        }
        break;
      }
      case ROUND_EVENT_KINDS.successor: {
        const r = SuccessorReceipt.safeParse(p);
        const t = r.success ? trailOf(r.data.round) : undefined;
        if (!r.success || !t) skipped++;
        else t.round.successorPatchsetId = r.data.patchsetId;
        break;
      }
      case ROUND_EVENT_KINDS.reported: {
        const r = ReportedReceipt.safeParse(p);
        const t = r.success ? trailOf(r.data.round) : undefined;
        if (!r.success || !t) skipped++;
        else t.round.report = r.data.report;
        break;
      }
      case ROUND_EVENT_KINDS.generation: {
        const r = GenerationReceipt.safeParse(p);
        const t = r.success ? trailOf(r.data.round) : undefined;
        if (!r.success || !t) skipped++;
        else t.round.generationId = r.data.generationId;
        break;
      }
      case ROUND_EVENT_KINDS.ended: {
        const r = EndedReceipt.safeParse(p);
        const t = r.success ? trailOf(r.data.round) : undefined;
        if (!r.success || !t) skipped++;
        else {
          t.round.state = r.data.state;
          t.round.failure = r.data.failure;
          t.round.endedAt = r.data.at;
        }
        break;
      }
      case ROUND_EVENT_KINDS.resumed: {
        const r = ResumedReceipt.safeParse(p);
        const t = r.success ? trailOf(r.data.round) : undefined;
        if (!r.success || !t) skipped++;
        else {
          t.round.state = 'running';
          t.round.failure = null;
          t.round.endedAt = null;
        }
        break;
      }
      default:
        skipped++;
    }
  }
  return { trails: [...trails.values()].sort((a, b) => a.round.ordinal - b.round.ordinal), skipped };
}

/** The ledger rows, validated: what `rennet rounds` prints and the panel shows. */
export function ledgerRows(trails: readonly RoundTrail[]): Round[] {
  return trails.map((t) => Round.parse(t.round));
}
