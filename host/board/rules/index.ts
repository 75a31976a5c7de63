import { BOUNDARY_RULES, type FinishPointer, type Refusal, type RuleId } from '../../../protocol/board';
import type { BoardState } from '../state';
import { CALL_SHAPE_RULES } from './callShape';
import type { BoundaryRule, BoundaryRuleId, CallContext, ElementContext, FinishRule } from './context';
import { FINDING_RULES } from './findings';
import { FINISH_TIER } from './finish';
import { STRUCTURE_RULES } from './structure';
import { TEXT_RULES } from './text';

/**
 * The rule registry, in two tiers by what a rule reads. A boundary rule is decidable from the
 * call and the element(s) it would create or change (plus the patchset), and refuses the call. A
 * finish rule needs the whole board and answers finish with pointers. Rule ids come from the
 * protocol's BOUNDARY_RULES / FINISH_RULES; every kind, parent, reference and alignment fact is
 * read from the protocol tables.
 */

export { HOST_AUTHOR, type BoundaryRule, type BoundaryRuleId, type CallContext, type ElementContext, type FinishRule, type FinishRuleId, type Touched } from './context';
export { HOST_OWNED_FIELD_NAMES, inputSchemaOf, parseCallInput, type ParsedInput } from './input';
export { heldText, referencesOf } from './reading';
export { AGREEMENT_OF_ACCORD, compiledReviewsText } from './findings';
export { resolveCodeRef } from './text';
export { FINISH_TIER, materialKinds } from './finish';

/** The boundary tier, in the order its rules run: the call's shape, the board's structure, decisions and findings, authored text. */
export const BOUNDARY_TIER: readonly BoundaryRule[] = [...CALL_SHAPE_RULES, ...STRUCTURE_RULES, ...FINDING_RULES, ...TEXT_RULES];

/** The whole registry, both tiers: what the writer actually runs. */
export const RULE_REGISTRY: ReadonlyArray<BoundaryRule | FinishRule> = [...BOUNDARY_TIER, ...FINISH_TIER];

// ─── Running the tiers ───────────────────────────────────────────────────────────────────────

export function runCallStage(c: CallContext): Refusal[] {
  const out: Refusal[] = [];
  for (const rule of BOUNDARY_TIER) if (rule.onCall) out.push(...rule.onCall(c));
  return out;
}

export function runElementStage(c: ElementContext): Refusal[] {
  const out: Refusal[] = [];
  for (const rule of BOUNDARY_TIER) if (rule.onElements) out.push(...rule.onElements(c));
  return out;
}

export function runFinishTier(state: BoardState): FinishPointer[] {
  const out: FinishPointer[] = [];
  for (const rule of FINISH_TIER) out.push(...rule.check(state));
  return out;
}

/** Rules a caller may not silence: a Refusal's rule is always a registered boundary id. */
export function isBoundaryRule(rule: RuleId): rule is BoundaryRuleId {
  return (BOUNDARY_RULES as readonly string[]).includes(rule);
}
