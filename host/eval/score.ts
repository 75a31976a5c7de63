import { Severity } from '../../protocol/board';
import {
  EVAL_DOCUMENT_VERSION,
  severityAtLeast,
  type EvalAnchor,
  type EvalCase,
  type EvalCaseResult,
  type EvalCaseScore,
  type EvalCategoryScore,
  type EvalFindingScore,
  type EvalJudge,
  type EvalRunManifest,
  type EvalScore,
  type EvalSpend,
  type EvalTotals,
  type EvalTruthRange,
} from '../../protocol/eval';
import type { ReportElement, ReviewReport } from '../../protocol/review';
import { canonicalJson } from './runKey';
import { addSpend, NO_SPEND } from './scoreSpend';

/**
 * The deterministic score of a run (pure; docs/eval.md states the rules):
 *
 * - Only the Flagged board's findings count; the other lenses' elements are not findings.
 * - A finding's place is its anchor code_refs (path, side, start–end). It is on target when a line
 *   of an anchor span is within `tolerance` lines of a truth range on the same path and side.
 * - A bug case is caught when a finding of severity ≥ threshold is on target. Every finding on no
 *   truth line is noise; an on-target finding under the threshold is neither catch nor noise.
 * - On a clean twin every Flagged finding, whatever its severity, is a false positive.
 * - A case whose review or Flagged lane failed is `failed`, one with no result for this version of
 *   the case `not-run`: both counted apart, never as misses; catch rate is caught / (caught + missed).
 */

export interface ScoreOptions {
  threshold: Severity;
  tolerance: number;
  /** The run directory, as the score names it. */
  dir: string;
  judge?: EvalJudge | null;
}

export function scoreRun(manifest: EvalRunManifest, results: ReadonlyMap<string, EvalCaseResult>, options: ScoreOptions): EvalScore {
  const cases = manifest.cases.map((c) => scoreCase(c, results.get(c.id) ?? null, options));
  return {
    version: EVAL_DOCUMENT_VERSION,
    run: { dir: options.dir, casesDigest: manifest.casesDigest, settings: manifest.settings, startedAt: manifest.startedAt, finishedAt: manifest.finishedAt },
    rules: { threshold: options.threshold, tolerance: options.tolerance },
    totals: totalsOf(cases),
    byCategory: byCategory(cases),
    cases,
    judge: options.judge ?? null,
  };
}

export function scoreCase(evalCase: EvalCase, result: EvalCaseResult | null, options: Pick<ScoreOptions, 'threshold' | 'tolerance'>): EvalCaseScore {
  const clean = evalCase.clean === true;
  const base = { id: evalCase.id, category: evalCase.category, clean };
  if (!result) return { ...base, outcome: 'not-run', reason: 'no result: the run has not reviewed this case yet', findings: [], noise: 0, falsePositives: 0, durationMs: null, spend: null };
  if (canonicalJson(result.case) !== canonicalJson(evalCase)) {
    return {
      ...base,
      outcome: 'not-run',
      reason: 'the result is of an earlier version of this case (the corpus changed since it was reviewed)',
      findings: [],
      noise: 0,
      falsePositives: 0,
      durationMs: null,
      spend: null,
    };
  }
  const measured = { durationMs: result.durationMs, spend: result.spend };
  const flagged = result.report?.boards.find((b) => b.lens === 'flagged') ?? null;
  const failure =
    result.status === 'failed'
      ? (result.reason ?? 'the review failed without a reason')
      : !flagged
        ? 'the review report has no Flagged board'
        : flagged.state === 'failed'
          ? `the Flagged lane failed: ${flagged.failure?.message ?? 'without an account'}`
          : null;
  if (failure !== null || !flagged) return { ...base, outcome: 'failed', reason: failure, findings: [], noise: 0, falsePositives: 0, ...measured };

  const findings = flaggedFindings(result.report as ReviewReport).map((f): EvalFindingScore => {
    if (clean) return { ...f, class: 'false-positive' };
    const onTarget = f.anchors.some((a) => evalCase.truth.some((t) => near(a, t, options.tolerance)));
    return { ...f, class: !onTarget ? 'noise' : severityAtLeast(f.severity, options.threshold) ? 'catch' : 'below-threshold' };
  });
  const count = (cls: EvalFindingScore['class']) => findings.filter((f) => f.class === cls).length;
  const outcome = clean ? (findings.length > 0 ? 'false-positive' : 'quiet') : count('catch') > 0 ? 'caught' : 'missed';
  return { ...base, outcome, reason: null, findings, noise: count('noise'), falsePositives: count('false-positive'), ...measured };
}

/** A span is near a truth range when one of its lines lies within `tolerance` lines of it, on the same path and side. */
export function near(anchor: EvalAnchor, truth: EvalTruthRange, tolerance: number): boolean {
  if (anchor.path !== truth.path || anchor.side !== truth.side) return false;
  return anchor.startLine <= truth.endLine + tolerance && anchor.endLine >= truth.startLine - tolerance;
}

/** The Flagged board's findings with the spans their anchors cite (the report's camelCase elements). */
export function flaggedFindings(report: ReviewReport): Array<Omit<EvalFindingScore, 'class'>> {
  const board = report.boards.find((b) => b.lens === 'flagged');
  if (!board) return [];
  const byId = new Map(board.elements.map((e) => [e.id, e] as const));
  return board.elements
    .filter((e) => e.kind === 'finding')
    .map((e) => {
      const severity = Severity.safeParse(e.severity);
      const anchorIds = Array.isArray(e.anchor) ? e.anchor.filter((a): a is string => typeof a === 'string') : [];
      return {
        id: e.id,
        title: typeof e.title === 'string' ? e.title : '',
        // A finding without a readable severity ranks lowest: it can never catch on its own say-so.
        severity: severity.success ? severity.data : 'nit',
        anchors: anchorIds.map((id) => spanOf(byId.get(id))).filter((a): a is EvalAnchor => a !== null),
      };
    });
}

function spanOf(element: ReportElement | undefined): EvalAnchor | null {
  if (!element || element.kind !== 'code_ref') return null;
  const { path, side, startLine, endLine } = element;
  if (typeof path !== 'string' || (side !== 'head' && side !== 'base') || !isLine(startLine) || !isLine(endLine)) return null;
  return { path, side, startLine, endLine };
}

function isLine(n: unknown): n is number {
  return typeof n === 'number' && Number.isInteger(n) && n > 0;
}

function ratio(n: number, d: number): number | null {
  return d > 0 ? n / d : null;
}

export function totalsOf(cases: readonly EvalCaseScore[]): EvalTotals {
  const bug = cases.filter((c) => !c.clean);
  const clean = cases.filter((c) => c.clean);
  const is = (list: readonly EvalCaseScore[], ...outcomes: EvalCaseScore['outcome'][]) => list.filter((c) => outcomes.includes(c.outcome)).length;
  const reviewed = cases.filter((c) => c.outcome !== 'failed' && c.outcome !== 'not-run');
  const caught = is(bug, 'caught');
  const missed = is(bug, 'missed');
  const cleanReviewed = is(clean, 'quiet', 'false-positive');
  const falsePositives = clean.reduce((n, c) => n + c.falsePositives, 0);
  const findings = reviewed.reduce((n, c) => n + c.findings.length, 0);
  const noise = bug.reduce((n, c) => n + c.noise, 0);
  const withResult = cases.filter((c) => c.spend !== null);
  const spend = withResult.reduce<EvalSpend>((sum, c) => addSpend(sum, c.spend as EvalSpend), NO_SPEND);
  const timed = cases.filter((c) => c.durationMs !== null);
  return {
    cases: cases.length,
    reviewed: reviewed.length,
    bugCases: bug.length,
    caught,
    missed,
    failed: is(cases, 'failed'),
    notRun: is(cases, 'not-run'),
    catchRate: ratio(caught, caught + missed),
    cleanCases: clean.length,
    cleanReviewed,
    falsePositives,
    falsePositivesPerCleanCase: ratio(falsePositives, cleanReviewed),
    findings,
    findingsPerReview: ratio(findings, reviewed.length),
    noise,
    noisePerBugCase: ratio(noise, caught + missed),
    spend,
    // Per case with a result: a failed review spent its turns too.
    priceUsdPerReview: spend.unpricedTurns > 0 || withResult.length === 0 ? null : spend.priceUsd / withResult.length,
    durationMsPerReview: ratio(
      timed.reduce((n, c) => n + (c.durationMs ?? 0), 0),
      timed.length,
    ),
  };
}

/** One row per category, in first-seen order of the corpus. */
export function byCategory(cases: readonly EvalCaseScore[]): EvalCategoryScore[] {
  const order: string[] = [];
  for (const c of cases) if (!order.includes(c.category)) order.push(c.category);
  return order.map((category) => {
    const of = cases.filter((c) => c.category === category);
    const bug = of.filter((c) => !c.clean);
    const n = (outcome: EvalCaseScore['outcome']) => of.filter((c) => c.outcome === outcome).length;
    const caught = n('caught');
    const missed = n('missed');
    return {
      category,
      bugCases: bug.length,
      caught,
      missed,
      failed: bug.filter((c) => c.outcome === 'failed').length,
      notRun: bug.filter((c) => c.outcome === 'not-run').length,
      catchRate: ratio(caught, caught + missed),
      cleanCases: of.length - bug.length,
      cleanReviewed: of.filter((c) => c.clean && (c.outcome === 'quiet' || c.outcome === 'false-positive')).length,
      falsePositives: of.reduce((sum, c) => sum + c.falsePositives, 0),
    };
  });
}
