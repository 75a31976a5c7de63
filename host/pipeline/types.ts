import type { Absence, Lens } from '../../protocol/board';
import type { Patchset } from '../../protocol/patchset';
import type { LaneFailure, LaneState, PhaseTiming, SeatSpend } from '../../protocol/review';
import type { BoardState } from '../board/state';
import type { FindingDispositionInput, LensComposition, RoundAddressed } from '../board/compose';
import type { Store } from '../store';
import type { NoiseOfferRegion } from './contextDir';
import type { ChangeSource } from '../read/tools';
import type { Clock, Harness, PromptReader } from './ports';

/** The pipeline's input and output shapes (run.ts drives them). */

/** Which harness drafts each lens. null: no harness is configured for it. */
export interface HarnessAssignment {
  design: Harness | null;
  sequence: Harness | null;
  decisions: Harness | null;
  noise: Harness | null;
  /** One review harness per available model, then one compiler. */
  flagged: { reviewers: readonly Harness[]; compiler: Harness | null };
  /** Appended to a "no model harness is configured" failure (what to install or set). */
  missingHint?: string;
}

/** Turns a seat may end unsettled before its lane fails: a first run, and a repeat (restart) run. */
export interface AttemptBudget {
  first: number;
  /** Reduced but never zero. */
  repeat: number;
}

export const DEFAULT_ATTEMPT_BUDGET: AttemptBudget = { first: 3, repeat: 2 };

/** What the Design assembler (host/design) answers for a patchset. */
export type DesignAssembly =
  /** The host settled the Design board from the specification: no seat runs. */
  | { kind: 'board'; state: BoardState }
  /** No specification in a format Rennet reads: the seat runs. */
  | { kind: 'none' }
  /** A specification the assembler could not settle: the seat renders it (the reason is logged). */
  | { kind: 'fallback'; reason: string; sources: readonly string[] };

export type DesignAssembler = (patchset: Patchset) => DesignAssembly | Promise<DesignAssembly>;

export interface LensPipelineInput {
  patchset: Patchset;
  sessionId: string;
  generationId: string;
  /** The reviewed checkout: where the context directory lives (and each seat's working directory unless seatDir says otherwise). */
  workspaceDir: string;
  /**
   * The seats' working directory: a snapshot of the reviewed head
   * (host/read/headWorkspace.ts), so a CLI seat's own reads agree with the capture. Default workspaceDir.
   */
  seatDir?: string;
  /**
   * The session's context directory as the prompts name it (repo-relative, e.g.
   * `.rennet/context/<sessionId>`); resolved against workspaceDir for the files the host writes
   * there (`findings/<origin>.md`). An absolute path is used as is.
   */
  contextDir: string;
  harnesses: HarnessAssignment;
  /**
   * When the reviewer's wait began (capture ready; a round landing). first-core-board,
   * first-element and reveal are measured from it. Default: the moment the pipeline started.
   */
  waitOrigin?: Date;
  budget?: Partial<AttemptBudget>;
  /**
   * A round's successor: each lane's settled board is composed against the predecessor's
   * (host/board/compose.ts) before its outcome is written — section stamps, the finding
   * lifecycle on Flagged, the round's chapter on Sequence.
   */
  compose?: RoundCompose;
  /**
   * A re-review's delta generation (host/rereview/): `patchset` is the fix delta since the reviewed
   * commit `from`. The settled Flagged board keeps a finding anchored off the delta's changed lines
   * only at blocker; the others leave, said in a host callout (host/pipeline/outsideDelta.ts).
   */
  rereviewDelta?: { from: string };
}

/** What a round's successor is composed against. */
export interface RoundCompose {
  ordinal: number;
  priorGenerationId: string;
  /** The predecessor's boards, by lens (a lens it has no board for is composed as all new). */
  prior: Partial<Record<Lens, BoardState>>;
  addressed: readonly RoundAddressed[];
  dispositions: readonly FindingDispositionInput[];
}

/** One progressive frame: an accepted write, a lane opening (its whole board), or a lane closing. */
export interface PipelineFrame {
  generation: string;
  lens: Lens;
  /** Monotonic within (generation, lens), across restarts of the same generation. */
  revision: number;
  kind: 'opened' | 'write' | 'closed';
  /** Element ids the write created, changed or removed (`/document` for the envelope); every id on an opened frame. */
  touched: string[];
  board: BoardState;
}

/** A lane's state change, emitted in the order they happen (settlements in settlement order). */
export interface LaneChange {
  generation: string;
  lens: Lens;
  state: LaneState;
  absence: Absence | null;
  failure: LaneFailure | null;
}

export interface LensPipelineSeams {
  prompts: PromptReader;
  clock: Clock;
  /** Durable persistence (boards, lane outcomes, timings, spend). Without it the run is in-memory only. */
  store?: Store | null;
  onFrame?(frame: PipelineFrame): void;
  /** Serialized: a returned promise is awaited before the next change is delivered. */
  onLane?(change: LaneChange): void | Promise<void>;
  /**
   * The Design fast path. Omitted: host/design's assembler reading files at the captured head
   * in workspaceDir. null: none (the Design seat always drafts).
   */
  design?: DesignAssembler | null;
  /**
   * Called with the members the host placed on the Noise board, before the Noise seat's first
   * turn (awaited): where each member is, never what it says (the caller writes noise-offer.json).
   */
  onNoiseOffer?(regions: NoiseOfferRegion[]): void | Promise<void>;
  /**
   * Where every seat's read tools read (list_changes, read_diff, read_file, search_code,
   * read_context). Omitted: git over the captured commits in workspaceDir, and the context directory.
   */
  changeSource?(input: LensPipelineInput): ChangeSource;
  /**
   * A lane's round composition, after its composed board is durable and before its outcome is
   * (`compose` runs only): the caller applies what lives outside boards (cloned dismissals).
   */
  onComposed?(generationId: string, lens: Lens, composition: LensComposition): void;
  /** Diagnostic lines (`[seat] …`). */
  log?(line: string): void;
  /** Cancels the run: seats are aborted, unsettled lanes stay unsettled, the promise rejects. */
  signal?: AbortSignal;
}

/** One placed Noise member as offered to the Noise seat (defined with the context directory that renders it). */
export type { NoiseOfferRegion } from './contextDir';

export type SettledState = 'settled' | 'absent' | 'failed';

export interface LaneOutcome {
  lens: Lens;
  state: SettledState;
  absence: Absence | null;
  failure: LaneFailure | null;
  /** The lane's board: finished, absent, or (failed) whatever the seat wrote, kept. */
  board: BoardState;
  /** Attempts spent (turns that ended with the board unsettled). */
  attempts: number;
  /** True when this run rebuilt the lane from the store without any harness call. */
  reconstructed: boolean;
}

export interface GenerationOutcome {
  generationId: string;
  sessionId: string;
  patchsetId: string;
  specOnly: boolean;
  /** Canonical order (Design…Noise), whatever order they settled in. */
  lanes: LaneOutcome[];
  /** Every seat turn of this generation (a restart adds to what earlier runs recorded). */
  spend: SeatSpend[];
  timings: PhaseTiming[];
}
