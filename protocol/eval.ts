import { z } from 'zod';
import { Severity } from './board';
import { ReviewReport } from './review';

/**
 * `rennet eval`: a corpus of review cases (a bug re-introduced on top of its fix, with the fix's
 * lines as ground truth) and the deterministic score of a review run over it. The corpus file is
 * JSON a person may also write or edit by hand; host/eval/ builds, runs and scores it.
 */

/** Bug categories the built-in corpus covers; a history corpus may use any other word. */
export const BUILTIN_EVAL_CATEGORIES = ['off-by-one', 'missing-await', 'sql-injection', 'swapped-argument', 'missing-null-check', 'unclosed-handle', 'wrong-lock'] as const;

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

// ─── Run and score (`rennet eval run | score | compare`) ──────────────────────────────────────

/** Cases reviewed at once by default, and the most `--jobs` may ask for (each case runs every lens seat). */
export const EVAL_DEFAULT_JOBS = 1;
export const EVAL_MAX_JOBS = 8;
/** The widest `--tolerance` (lines either side of a truth range) a score may use. */
export const EVAL_MAX_LINE_TOLERANCE = 200;
/** Characters of a failed case's reason kept in its result file and the score. */
export const EVAL_FAILURE_REASON_MAX_CHARS = 2000;
/** Characters of one judge grade's reason. */
export const EVAL_JUDGE_REASON_MAX_CHARS = 1000;
/** How long one judge turn may take before it is stopped and its grade recorded as failed. */
export const EVAL_JUDGE_TURN_TIMEOUT_MS = 10 * 60_000;
/** Version of the run, case-result, score and compare documents. */
export const EVAL_DOCUMENT_VERSION = 1;

/** Severities from most to least severe (protocol/board.ts's Severity, in its declared order). */
export const EVAL_SEVERITY_ORDER = Severity.options;

/** True when `severity` is at or above `threshold` (blocker > major > minor > nit). */
export function severityAtLeast(severity: Severity, threshold: Severity): boolean {
  return EVAL_SEVERITY_ORDER.indexOf(severity) <= EVAL_SEVERITY_ORDER.indexOf(threshold);
}

/** Who reviewed: the `--harness` value and its companions, and the script's digest for `scripted:FILE`. */
export const EvalHarnessSettings = z.object({
  harness: z.string().min(1),
  baseUrl: z.string().nullable(),
  model: z.string().nullable(),
  /** sha256 of the script file, so an edited script is a different setting. */
  scriptDigest: z.string().nullable(),
});
export type EvalHarnessSettings = z.infer<typeof EvalHarnessSettings>;

/** Spend summed over a review's seat turns; a turn without a price or tokens is counted, never a zero. */
export const EvalSpend = z.object({
  turns: z.number().int().nonnegative(),
  /** Sum of the prices the harnesses reported. */
  priceUsd: z.number().nonnegative(),
  /** Turns that reported no price (their cost is not in priceUsd). */
  unpricedTurns: z.number().int().nonnegative(),
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  /** Turns that reported no token counts. */
  untokenedTurns: z.number().int().nonnegative(),
});
export type EvalSpend = z.infer<typeof EvalSpend>;

/**
 * `OUT/cases/<id>.json`: one case's review, written (temp file + rename) only when it finished.
 * `failed`: the review could not run, or its Flagged lane failed; `reason` says which and why.
 */
export const EvalCaseResult = z.object({
  version: z.literal(EVAL_DOCUMENT_VERSION),
  id: z.string(),
  /** sha256 of the case, its repository and the harness settings: a result counts only for the same key. */
  key: z.string(),
  case: EvalCase,
  /** The repository the case was reviewed in (absolute). */
  repo: z.string(),
  status: z.enum(['reviewed', 'failed']),
  reason: z.string().nullable(),
  startedAt: z.string(),
  durationMs: z.number().nonnegative(),
  spend: EvalSpend,
  sessionId: z.string().nullable(),
  /** The review report (docs/review-json.md); null when the review never ran. */
  report: ReviewReport.nullable(),
});
export type EvalCaseResult = z.infer<typeof EvalCaseResult>;

/** `OUT/run.json`: what was run, on which corpus, with which harness. */
export const EvalRunManifest = z.object({
  version: z.literal(EVAL_DOCUMENT_VERSION),
  casesFile: z.string(),
  /** sha256 of the corpus as canonical JSON (key-sorted): two runs compare only on the same digest. */
  casesDigest: z.string(),
  settings: EvalHarnessSettings,
  jobs: z.number().int().positive(),
  /** The data directory every generation of the run is kept in. */
  store: z.string(),
  startedAt: z.string(),
  /** Each later start of the same run (a resume). */
  resumedAt: z.array(z.string()),
  finishedAt: z.string().nullable(),
  cases: z.array(EvalCase),
});
export type EvalRunManifest = z.infer<typeof EvalRunManifest>;

/**
 * How one Flagged finding counts. catch: severity at or above the threshold and anchored within a
 * truth range (± tolerance); below-threshold: on target but under the threshold (neither catch nor
 * noise); noise: anchored on no truth line; false-positive: any finding on a clean twin.
 */
export const EvalFindingClass = z.enum(['catch', 'below-threshold', 'noise', 'false-positive']);
export type EvalFindingClass = z.infer<typeof EvalFindingClass>;

export const EvalAnchor = z.object({ path: z.string(), side: z.enum(['head', 'base']), startLine: z.number().int().positive(), endLine: z.number().int().positive() });
export type EvalAnchor = z.infer<typeof EvalAnchor>;

export const EvalFindingScore = z.object({
  id: z.string(),
  title: z.string(),
  severity: Severity,
  /** The cited spans of its anchor code_refs (an anchor id that names no code_ref is left out). */
  anchors: z.array(EvalAnchor),
  class: EvalFindingClass,
});
export type EvalFindingScore = z.infer<typeof EvalFindingScore>;

/**
 * caught / missed: a bug case reviewed; quiet / false-positive: a clean twin reviewed with no
 * finding / with at least one; failed: the review or its Flagged lane failed; not-run: no result
 * for this version of the case (the run was stopped before it, or the case changed since).
 */
export const EvalCaseOutcome = z.enum(['caught', 'missed', 'quiet', 'false-positive', 'failed', 'not-run']);
export type EvalCaseOutcome = z.infer<typeof EvalCaseOutcome>;

export const EvalCaseScore = z.object({
  id: z.string(),
  category: z.string(),
  clean: z.boolean(),
  outcome: EvalCaseOutcome,
  /** failed / not-run: why. */
  reason: z.string().nullable(),
  findings: z.array(EvalFindingScore),
  noise: z.number().int().nonnegative(),
  falsePositives: z.number().int().nonnegative(),
  durationMs: z.number().nonnegative().nullable(),
  spend: EvalSpend.nullable(),
});
export type EvalCaseScore = z.infer<typeof EvalCaseScore>;

export const EvalCategoryScore = z.object({
  category: z.string(),
  bugCases: z.number().int().nonnegative(),
  caught: z.number().int().nonnegative(),
  missed: z.number().int().nonnegative(),
  failed: z.number().int().nonnegative(),
  notRun: z.number().int().nonnegative(),
  /** caught / (caught + missed); null when no bug case of the category was reviewed. */
  catchRate: z.number().min(0).max(1).nullable(),
  cleanCases: z.number().int().nonnegative(),
  /** Clean twins of the category whose review finished (failed and not-run ones count no false positive). */
  cleanReviewed: z.number().int().nonnegative(),
  falsePositives: z.number().int().nonnegative(),
});
export type EvalCategoryScore = z.infer<typeof EvalCategoryScore>;

export const EvalTotals = z.object({
  cases: z.number().int().nonnegative(),
  /** Cases whose review ran and whose Flagged lane settled (bug and clean). */
  reviewed: z.number().int().nonnegative(),
  bugCases: z.number().int().nonnegative(),
  caught: z.number().int().nonnegative(),
  missed: z.number().int().nonnegative(),
  failed: z.number().int().nonnegative(),
  notRun: z.number().int().nonnegative(),
  catchRate: z.number().min(0).max(1).nullable(),
  cleanCases: z.number().int().nonnegative(),
  cleanReviewed: z.number().int().nonnegative(),
  falsePositives: z.number().int().nonnegative(),
  falsePositivesPerCleanCase: z.number().nonnegative().nullable(),
  findings: z.number().int().nonnegative(),
  findingsPerReview: z.number().nonnegative().nullable(),
  noise: z.number().int().nonnegative(),
  noisePerBugCase: z.number().nonnegative().nullable(),
  /** Over every case with a result, failed ones included (their turns were spent too). */
  spend: EvalSpend,
  priceUsdPerReview: z.number().nonnegative().nullable(),
  durationMsPerReview: z.number().nonnegative().nullable(),
});
export type EvalTotals = z.infer<typeof EvalTotals>;

export const EvalJudgeGradeValue = z.enum(['explains', 'partly', 'does-not-explain']);
export type EvalJudgeGradeValue = z.infer<typeof EvalJudgeGradeValue>;

/** One judge verdict on a catching finding; `grade` null when the judge turn gave none (`failure` says why). */
export const EvalJudgeGrade = z.object({
  caseId: z.string(),
  findingId: z.string(),
  grade: EvalJudgeGradeValue.nullable(),
  reason: z.string(),
  failure: z.string().nullable(),
  spend: EvalSpend,
});
export type EvalJudgeGrade = z.infer<typeof EvalJudgeGrade>;

export const EvalJudge = z.object({
  settings: EvalHarnessSettings,
  grades: z.array(EvalJudgeGrade),
});
export type EvalJudge = z.infer<typeof EvalJudge>;

/** What `rennet eval score` writes (and `run` writes as OUT/score.json). */
export const EvalScore = z.object({
  version: z.literal(EVAL_DOCUMENT_VERSION),
  run: z.object({
    dir: z.string(),
    casesDigest: z.string(),
    settings: EvalHarnessSettings,
    startedAt: z.string(),
    finishedAt: z.string().nullable(),
  }),
  rules: z.object({
    threshold: Severity,
    tolerance: z.number().int().nonnegative(),
  }),
  totals: EvalTotals,
  byCategory: z.array(EvalCategoryScore),
  cases: z.array(EvalCaseScore),
  /** The optional judge pass, beside the deterministic score; null when none ran. */
  judge: EvalJudge.nullable(),
});
export type EvalScore = z.infer<typeof EvalScore>;

export const EvalCaseChange = z.object({
  id: z.string(),
  category: z.string(),
  clean: z.boolean(),
  a: EvalCaseOutcome,
  b: EvalCaseOutcome,
});
export type EvalCaseChange = z.infer<typeof EvalCaseChange>;

/** `rennet eval compare`: two scores of the same corpus, and the cases whose outcome changed. */
export const EvalCompare = z.object({
  version: z.literal(EVAL_DOCUMENT_VERSION),
  casesDigest: z.string(),
  a: EvalScore,
  b: EvalScore,
  changed: z.array(EvalCaseChange),
});
export type EvalCompare = z.infer<typeof EvalCompare>;
