import { z } from 'zod';

/**
 * `rennet eval`: a corpus of review cases (a bug re-introduced on top of its fix, with the fix's
 * lines as ground truth) and the deterministic score of a review run over it. The corpus file is
 * JSON a person may also write or edit by hand; host/eval/ builds, runs and scores it.
 */

/** Bug categories the built-in corpus covers; a history corpus may use any other word. */
export const BUILTIN_EVAL_CATEGORIES = [
  'off-by-one',
  'missing-await',
  'sql-injection',
  'swapped-argument',
  'missing-null-check',
  'unclosed-handle',
  'wrong-lock',
] as const;

/** A ground-truth line range: `head` ranges are lines the head added; `base` ranges lines it deleted. */
export const EvalTruthRange = z.object({
  path: z.string().min(1),
  side: z.enum(['head', 'base']),
  startLine: z.number().int().positive(),
  endLine: z.number().int().positive(),
});
export type EvalTruthRange = z.infer<typeof EvalTruthRange>;

export const EvalCase = z.object({
  /** Stable, filename- and ref-safe id (`[A-Za-z0-9._-]`), unique in its corpus. */
  id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/),
  /** The fix commit (for a clean twin: the commit the twin starts from). */
  fix: z.string().min(1),
  /** What is reviewed: base..head. For a history case base is the fix and head its revert. */
  base: z.string().min(1),
  head: z.string().min(1),
  category: z.string().min(1),
  /** Ground truth; empty for a clean twin (every finding on it is a false positive). */
  truth: z.array(EvalTruthRange),
  /** True for a clean twin: the same kind of change with no bug. */
  clean: z.boolean().optional(),
  /** The repository the case lives in, when the corpus spans more than one (relative to the corpus file, or absolute). */
  repo: z.string().optional(),
  /** Where the case came from, in words (the fix's subject line, or the generator's name). */
  note: z.string().optional(),
});
export type EvalCase = z.infer<typeof EvalCase>;

export const EvalCorpus = z.object({
  /** The repository the cases live in (absolute path), unless a case names its own. */
  repo: z.string().optional(),
  cases: z.array(EvalCase),
});
export type EvalCorpus = z.infer<typeof EvalCorpus>;

/** Hidden ref that keeps a case's head reachable so gc never drops it. */
export function evalCaseRef(id: string): string {
  return `refs/rennet/eval/${id}`;
}

/** Defaults of the deterministic score (documented in docs/eval.md). */
export const EVAL_DEFAULT_SEVERITY_THRESHOLD = 'major';
export const EVAL_DEFAULT_LINE_TOLERANCE = 3;
