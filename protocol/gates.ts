import { z } from 'zod';
import { ForgeProvider } from './exits';

/**
 * Merge gates: what must hold before a pull or merge request is merged, read from its forge by
 * name, each with the forge's own detail (data: shown as text, never rendered), and the freshness
 * of the local copy against the request's head. A gate that cannot be read is never a pass.
 * host/forge/gates.ts reads them; `rennet gates` prints them; the Hand off view lists them.
 */

export const GateState = z.enum(['pass', 'fail', 'pending']);
export type GateState = z.infer<typeof GateState>;

/**
 * What a gate is. Forge-named gates (`check`: a GitHub check run; `status`: a GitHub commit status
 * context; `job`: a job of the GitLab head pipeline; `pipeline`: that pipeline) carry their own
 * name; the others are named by their kind.
 */
export const GateKind = z.enum(['check', 'status', 'job', 'pipeline', 'draft', 'mergeable', 'behind-base', 'required-reviews', 'review-at-head']);
export type GateKind = z.infer<typeof GateKind>;

/** The gates every request has, in the order they are listed after the forge-named ones. */
export const FIXED_GATES = ['draft', 'mergeable', 'behind-base', 'required-reviews', 'review-at-head'] as const;

export const Gate = z.object({
  name: z.string(),
  kind: GateKind,
  state: GateState,
  /** Why, in words (the forge's words where it has them). */
  detail: z.string(),
});
export type Gate = z.infer<typeof Gate>;

/**
 * The local copy against the request's head. `local` is the request's branch in this repository
 * (`refs/heads/<head branch>`), else the head Rennet captured for its review; `tracking` is the
 * remote-tracking ref of the forge's remote.
 */
export const FreshnessState = z.enum(['in-sync', 'local-behind', 'local-ahead', 'diverged', 'remote-moved', 'no-local-ref']);
export type FreshnessState = z.infer<typeof FreshnessState>;

/** The one action that brings the local copy to the request's head. */
export const RefreshAction = z.enum(['none', 'fetch', 'checkout', 'pull', 'push', 'rebase', 'capture-new-head']);
export type RefreshAction = z.infer<typeof RefreshAction>;

export const BranchFreshness = z.object({
  state: FreshnessState,
  /** The local ref compared (`refs/heads/feature`, or the review's hidden head ref); null when there is none. */
  localRef: z.string().nullable(),
  localKind: z.enum(['branch', 'captured']).nullable(),
  local: z.string().nullable(),
  trackingRef: z.string().nullable(),
  tracking: z.string().nullable(),
  /** The request's head on the forge. */
  prHead: z.string(),
  /** Commits the local ref has that the head lacks, and the other way round (null when unknown). */
  ahead: z.number().int().nonnegative().nullable(),
  behind: z.number().int().nonnegative().nullable(),
  action: RefreshAction,
  /** The state and its action in words, naming the exact git command where one applies. */
  message: z.string(),
});
export type BranchFreshness = z.infer<typeof BranchFreshness>;

export const GatesReport = z.object({
  provider: ForgeProvider,
  number: z.number().int().positive(),
  /** The request's head the gates were read at: a merge is pinned to it. */
  head: z.string(),
  headRef: z.string(),
  baseRef: z.string(),
  state: z.enum(['open', 'closed', 'merged']),
  freshness: BranchFreshness,
  gates: z.array(Gate),
});
export type GatesReport = z.infer<typeof GatesReport>;

/** GitLab merges by the project's method; per request it offers `merge` and `squash` only. */
export const MergeMethod = z.enum(['merge', 'squash', 'rebase']);
export type MergeMethod = z.infer<typeof MergeMethod>;

export const MergeResult = z.object({
  provider: ForgeProvider,
  number: z.number().int().positive(),
  merged: z.literal(true),
  /** The head that was merged (the one the merge was pinned to). */
  head: z.string(),
  method: MergeMethod,
  /** The commit the base branch now points at (merge, squash or rebased commit), '' when the forge does not say. */
  sha: z.string(),
  url: z.string(),
});
export type MergeResult = z.infer<typeof MergeResult>;

/** Every gate passes. */
export function allGatesPass(gates: readonly Gate[]): boolean {
  return gates.length > 0 && gates.every((g) => g.state === 'pass');
}

/** The merge methods a provider takes per request. */
export function mergeMethodsOf(provider: ForgeProvider): MergeMethod[] {
  return provider === 'gitlab' ? ['merge', 'squash'] : ['merge', 'squash', 'rebase'];
}

export const GatesReadParams = z.object({ sessionId: z.string().min(1) });
export type GatesReadParams = z.infer<typeof GatesReadParams>;

export const GatesMergeParams = z.object({
  sessionId: z.string().min(1),
  /** The head the reviewer confirmed; a request whose head is another now is refused (`head-moved`). */
  expectHead: z.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/),
  method: MergeMethod,
});
export type GatesMergeParams = z.infer<typeof GatesMergeParams>;
