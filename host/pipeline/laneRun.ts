import type { Absence, Lens, ReviewName } from '../../protocol/board';
import type { LaneFailure, LaneState } from '../../protocol/review';
import type { CitationIndex } from '../board/citations';
import type { ResolveProseCitations } from '../board/noise';
import type { BoardSeat, SeatFrame } from '../board/seat';
import type { BoardState, VerbCall } from '../board/state';
import type { Harness, McpEndpoint, SeatSpec, ToolPort } from './ports';
import type { ChangeSource } from '../read/tools';
import type { Settlement } from './settlement';
import type { LaneOutcome, LensPipelineInput, LensPipelineSeams, PipelineFrame } from './types';

/** A lane of a generation run, and the attempt ladder's shapes (run.ts). */

export interface Lane {
  lens: Lens;
  state: LaneState;
  board: BoardState;
  /** What the store holds for this board (null: nothing persisted yet, or no store). */
  persisted: BoardState | null;
  /** The last frame revision published for (generation, lens). */
  frameRevision: number;
  seat: BoardSeat | null;
  buffered: SeatFrame[];
  flushQueued: boolean;
  outcome: LaneOutcome | null;
  done: Promise<void>;
  resolveDone(): void;
}

export type LadderResult =
  { kind: 'settled' | 'absent'; attempts: number } | { kind: 'exhausted'; attempts: number; lastVerdict: string | null; harnessFailure: string | null; final?: boolean } | { kind: 'cancelled' };

export interface LadderParams {
  lane: Lane;
  spec: SeatSpec;
  harness: Harness;
  budget: number;
  tools: ToolPort;
  mcp: McpEndpoint | null;
  settled(): 'settled' | 'absent' | null;
  verdict(): string | null;
  stats(): { calls: number; refusals: number; readCalls?: number; readBytes?: number; readMs?: number };
  afterTurn(): void;
}

/**
 * What a lane's own logic (lanes.ts) asks of the generation run it belongs to. GenerationRun
 * (run.ts) is the one implementation: the scheduler core keeps the lanes, the seats, settlement,
 * frames and records; the lanes decide how each lens is drafted.
 */
export interface LaneRun {
  readonly input: LensPipelineInput;
  readonly seams: LensPipelineSeams;
  readonly lanes: Record<Lens, Lane>;
  readonly citations: CitationIndex;
  readonly proseCitations: ResolveProseCitations;
  /** The context directory, absolute. */
  readonly contextAbs: string;
  /** The context directory as the seats' prompts name it. */
  readonly promptContextDir: string;
  /** Where every seat's read tools read: the capture and the context directory. */
  readonly changeSource: ChangeSource;
  /** The run failed or was cancelled: a lane stops where it is. */
  readonly stopped: boolean;
  log(line: string): void;
  laneChange(lane: Lane, state: LaneState, absence?: Absence | null, failure?: LaneFailure | null): void;
  runBoardSeat(lane: Lane, spec: SeatSpec, harness: Harness, budget: number, reviewedBy?: readonly ReviewName[]): Promise<LadderResult>;
  ladder(p: LadderParams): Promise<LadderResult>;
  settleSeat(lane: Lane, result: LadderResult): void;
  settle(lane: Lane, settlement: Settlement, attempts: number): void;
  hostAbsence(lane: Lane, absence: Absence): void;
  commit(lane: Lane, next: BoardState, call: VerbCall): void;
  emitFrame(lane: Lane, kind: PipelineFrame['kind'], revision: number, touched: string[], board: BoardState): void;
}
