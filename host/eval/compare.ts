import { err, ok, type Result } from '../../protocol/result';
import { EVAL_DOCUMENT_VERSION, type EvalCaseChange, type EvalCompare, type EvalScore } from '../../protocol/eval';

/**
 * `rennet eval compare` (pure): two scores side by side and every case whose outcome differs.
 * Only runs over the same corpus compare (the same cases digest) and under the same rules
 * (threshold, tolerance); anything else is refused with the reason.
 */

export function compareScores(a: EvalScore, b: EvalScore): Result<EvalCompare, string> {
  if (a.run.casesDigest !== b.run.casesDigest) {
    return err(
      `the runs reviewed different corpora (cases digest ${a.run.casesDigest.slice(0, 12)} in ${a.run.dir}, ${b.run.casesDigest.slice(0, 12)} in ${b.run.dir}); compare runs of the same cases file`,
    );
  }
  if (a.rules.threshold !== b.rules.threshold || a.rules.tolerance !== b.rules.tolerance) {
    return err(`the scores use different rules (threshold ${a.rules.threshold}, tolerance ${a.rules.tolerance} against ${b.rules.threshold}, ${b.rules.tolerance})`);
  }
  const other = new Map(b.cases.map((c) => [c.id, c] as const));
  const changed: EvalCaseChange[] = [];
  for (const ca of a.cases) {
    const cb = other.get(ca.id);
    if (cb && cb.outcome !== ca.outcome) changed.push({ id: ca.id, category: ca.category, clean: ca.clean, a: ca.outcome, b: cb.outcome });
  }
  return ok({ version: EVAL_DOCUMENT_VERSION, casesDigest: a.run.casesDigest, a, b, changed });
}
