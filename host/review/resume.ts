import { CORE_LENSES, LENSES, type Lens } from '../../protocol/board';
import { AskLog } from '../asks/log';
import type { ContextDirInput } from '../pipeline/contextDir';
import type { GenerationOutcome, HarnessAssignment, LensPipelineInput, LensPipelineSeams } from '../pipeline/types';
import { applyComposition, roundCompose } from '../rounds/compose';
import { foldRounds } from '../rounds/ledger';
import { claimGenerationRun, describeHolder, generationRunHolder, type Store } from '../store';
import { currentGenerationId } from '../generation/generationSnapshot';

/**
 * Resuming an interrupted generation instead of drawing a new one (host/pipeline/README.md,
 * "Persistence and restart"). A process that stopped mid-generation (the VS Code host killed, the
 * CLI interrupted) leaves the session's live generation with lanes that have no outcome; the next
 * request to draft that session's boards — `rennet/review/runLenses` (the panel's "Draft again",
 * opening the review again), `rennet review`, a vscode-lm draft — resumes it with
 * resumeLensPipeline: the same generation id, settled lanes rebuilt from the store with no model
 * call, only the unsettled (and retryable failed) lanes drafted.
 *
 * Every run of a generation holds its run claim (host/store/runClaims.ts) while it is in flight,
 * so a generation another live process is drafting is never resumed (it would clear that
 * process's lanes under it).
 */

export interface ResumePlan {
  generationId: string;
  /** Lanes with an outcome the resume keeps (settled, absent, terminal failures). */
  kept: Lens[];
  /** Lanes the resume drafts again (no outcome, or a retryable failure; Noise when a core lane is). */
  redrafted: Lens[];
}

export type ResumeDecision = { plan: ResumePlan } | { plan: null; why: string };

const MISSING_HARNESS = /^no model harness is configured/;

/**
 * Whether a lens run of `patchsetId` for the session resumes its current generation: it is live,
 * reads that patchset, some lane has no outcome, no live process is drafting it, and no lane failed
 * for want of a harness that this run's assignment now has (a fresh generation draws that lane).
 */
export function resumableGeneration(store: Store, sessionId: string, patchsetId: string, harnesses: HarnessAssignment): ResumeDecision {
  const id = currentGenerationId(store, sessionId);
  if (id === null) return { plan: null, why: 'the session has no generation' };
  const generation = store.getGeneration(id);
  if (!generation || generation.status !== 'live') return { plan: null, why: `generation ${id} is frozen` };
  if (generation.patchsetId !== patchsetId) return { plan: null, why: `generation ${id} reads patchset ${generation.patchsetId}, not ${patchsetId}` };
  const outcomes = new Map(store.listLaneOutcomes(id).map((o) => [o.lens, o]));
  if (LENSES.every((lens) => outcomes.has(lens))) return { plan: null, why: `every lane of generation ${id} settled` };
  const holder = generationRunHolder(store.dir, id);
  if (holder) return { plan: null, why: `generation ${id} is being drafted by ${describeHolder(holder)}` };
  for (const [lens, outcome] of outcomes) {
    if (outcome.state === 'failed' && MISSING_HARNESS.test(outcome.failure?.message ?? '') && hasHarness(harnesses, lens)) {
      return { plan: null, why: `the ${lens} lane of generation ${id} had no model harness, and this run has one` };
    }
  }
  const redrafted = new Set<Lens>();
  for (const lens of CORE_LENSES) {
    const outcome = outcomes.get(lens);
    if (!outcome || (outcome.state === 'failed' && outcome.failure?.retryable !== false)) redrafted.add(lens);
  }
  const noise = outcomes.get('noise');
  if (redrafted.size > 0 || !noise || (noise.state === 'failed' && noise.failure?.retryable !== false)) redrafted.add('noise');
  return { plan: { generationId: id, kept: LENSES.filter((l) => !redrafted.has(l)), redrafted: LENSES.filter((l) => redrafted.has(l)) } };
}

function hasHarness(h: HarnessAssignment, lens: Lens): boolean {
  if (lens === 'flagged') return h.flagged.reviewers.length > 0 && h.flagged.compiler !== null;
  return h[lens] !== null;
}

/**
 * A round's successor generation carries the round's verified report in its context directory
 * (round-report.md); a resume writes it again from the rounds ledger and the ask log. null: the
 * generation is no round's.
 */
export function roundReportOfGeneration(store: Store, sessionId: string, generationId: string): NonNullable<ContextDirInput['roundReport']> | null {
  const events = store.readEvents(sessionId);
  const round = foldRounds(sessionId, events).trails.find((t) => t.round.generationId === generationId)?.round;
  if (!round?.report) return null;
  // The asks in the reviewer's words, from the ask log (retired asks stay in it); else as the verified report quoted them.
  const projection = new AskLog(store).projection(sessionId);
  const text = new Map(projection.ok ? projection.value.asks.map((a) => [a.id, a.text] as const) : []);
  const quoted = new Map(round.report.outcomes.map((o) => [o.askId, o.askText] as const));
  return { ordinal: round.ordinal, report: round.report, asks: round.asks.map((id) => ({ id, text: text.get(id) ?? quoted.get(id) ?? '' })) };
}

type Pipeline = (input: LensPipelineInput, seams: LensPipelineSeams) => Promise<GenerationOutcome>;

/**
 * A pipeline run holding the generation's run claim while it is in flight (with a store; none
 * without). The claim is taken synchronously before the pipeline starts, so the pipeline still
 * files the generation synchronously; a generation another live process holds is refused.
 */
export function claimedPipeline(pipeline: Pipeline): Pipeline {
  return (input, seams) => {
    const store = seams.store;
    if (!store) return pipeline(input, seams);
    const claimed = claimGenerationRun(store.dir, input.generationId);
    if (!claimed.ok) return Promise.reject(new Error(`generation ${input.generationId} is being drafted by ${describeHolder(claimed.holder)}`));
    let running: Promise<GenerationOutcome>;
    try {
      running = pipeline(input, seams);
    } catch (error) {
      claimed.claim.release();
      throw error;
    }
    return running.finally(() => claimed.claim.release());
  };
}

/**
 * A resumed round successor is composed as its first run would have been: against the round's
 * predecessor generation, with the verified report's addressed asks and the findings it settled
 * (host/rounds/compose.ts); null for a generation no round drafted.
 */
export function roundCompositionOfGeneration(store: Store, sessionId: string, generationId: string): (Pick<LensPipelineInput, 'compose'> & Pick<LensPipelineSeams, 'onComposed'>) | null {
  const round = foldRounds(sessionId, store.readEvents(sessionId)).trails.find((t) => t.round.generationId === generationId)?.round;
  if (!round?.report) return null;
  const asks = new AskLog(store);
  const projection = asks.projection(sessionId);
  if (!projection.ok) return null;
  const compose = roundCompose(store, { sessionId, round, report: round.report, projection: projection.value });
  if (!compose) return null;
  return {
    compose,
    onComposed: (successor, lens, composition) =>
      applyComposition(asks, { sessionId, priorGenerationId: compose.priorGenerationId, generationId: successor }, lens, composition, new Date().toISOString()),
  };
}
