import { BOUNDARY_RULES, FINISH_RULES, type BoardElement, type FinishPointer, type Refusal } from '../../../protocol/board';
import type { BoardState, VerbCall, WriterContext } from '../state';
import type { ParsedInput } from './input';

/** What a rule is and what it reads: the rule ids, the call and element contexts, the two rule shapes. */

export type BoundaryRuleId = (typeof BOUNDARY_RULES)[number];
export type FinishRuleId = (typeof FINISH_RULES)[number];

/** The author the host stamps on what it writes itself (noise members, repairs). */
export const HOST_AUTHOR = 'host';

// ─── Contexts ────────────────────────────────────────────────────────────────────────────────

/** What a call-stage check reads: the board before the call, and the call. */
export interface CallContext {
  state: BoardState;
  call: VerbCall;
  ctx: WriterContext;
  /** The call's input parsed once against its strict schema (parseCallInput). */
  parsed: ParsedInput;
}

/** An element the call would create or change, and the input fields the call named for it. */
export interface Touched {
  element: BoardElement;
  named: ReadonlySet<string>;
  created: boolean;
}

/** What an element-stage check reads: also the board the call WOULD produce. */
export interface ElementContext extends CallContext {
  next: BoardState;
  touched: readonly Touched[];
  /** set_document: the document fields the call named. */
  documentNamed: ReadonlySet<string>;
  /** remove_element: every id the call would remove (the element and its descendants). */
  removed: ReadonlySet<string> | null;
}

export interface BoundaryRule {
  id: BoundaryRuleId;
  tier: 'boundary';
  /** One line: what the rule holds. */
  summary: string;
  /** Runs on the raw call before anything is built; any refusal stops the call there. */
  onCall?(c: CallContext): Refusal[];
  /** Runs over the element(s) the call would create or change, on the board it would produce. */
  onElements?(c: ElementContext): Refusal[];
}

export interface FinishRule {
  id: FinishRuleId;
  tier: 'finish';
  summary: string;
  check(state: BoardState): FinishPointer[];
}
