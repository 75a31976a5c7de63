import type { EvalCompare, EvalScore, EvalTotals } from '../../protocol/eval';
import { escapeControls } from '../../protocol/text';
import { durationText } from './run';
import { spendText } from './scoreSpend';

/**
 * The score and the comparison as plain text for the terminal (pure). Corpus and model text
 * (case ids, categories) is printed with control characters escaped.
 */

export function percent(rate: number | null): string {
  return rate === null ? 'n/a' : `${(rate * 100).toFixed(rate === 0 || rate === 1 ? 0 : 1)}%`;
}

export function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function per(value: number | null, digits = 2): string {
  return value === null ? 'n/a' : value.toFixed(digits);
}

export function rulesText(score: EvalScore): string {
  return `a bug case is caught by a Flagged finding of severity ${score.rules.threshold} or higher anchored within ${score.rules.tolerance} line${score.rules.tolerance === 1 ? '' : 's'} of the ground truth`;
}

function totalsLines(t: EvalTotals): string[] {
  return [
    `  catch rate        ${percent(t.catchRate)} (${t.caught} of ${t.caught + t.missed} reviewed bug cases)`,
    `  failed            ${t.failed} (not counted as misses)${t.notRun > 0 ? `; not run: ${t.notRun}` : ''}`,
    `  findings/review   ${per(t.findingsPerReview)} (${plural(t.findings, 'Flagged finding')} over ${plural(t.reviewed, 'review')})`,
    `  noise/bug case    ${per(t.noisePerBugCase)} (${plural(t.noise, 'finding')} on no truth line)`,
    `  false positives   ${per(t.falsePositivesPerCleanCase)} per clean case (${t.falsePositives} over ${plural(t.cleanReviewed, 'reviewed clean twin')})`,
    `  time/review       ${t.durationMsPerReview === null ? 'n/a' : durationText(t.durationMsPerReview)}`,
    `  spend             ${spendText(t.spend)}${t.priceUsdPerReview === null ? '' : ` ($${t.priceUsdPerReview.toFixed(2)} per review)`}`,
  ];
}

export function scoreText(score: EvalScore): string {
  const s = score.run.settings;
  const lines = [
    `Eval score · ${escapeControls(score.run.dir)} · ${escapeControls(s.harness)}${s.model ? ` (${escapeControls(s.model)})` : ''}`,
    `Rule: ${rulesText(score)}.`,
    ...totalsLines(score.totals),
    'By category:',
    ...score.byCategory.map(
      (c) =>
        `  ${escapeControls(c.category).padEnd(22)} ${percent(c.catchRate).padStart(5)} (${c.caught}/${c.caught + c.missed})${c.failed > 0 ? ` · ${c.failed} failed` : ''}${c.cleanCases > 0 ? ` · ${c.falsePositives} false positive${c.falsePositives === 1 ? '' : 's'} on ${c.cleanReviewed} of ${c.cleanCases} clean reviewed` : ''}`,
    ),
  ];
  if (score.judge) {
    const graded = score.judge.grades.filter((g) => g.grade !== null);
    const explains = graded.filter((g) => g.grade === 'explains').length;
    lines.push(
      `Judge (${escapeControls(score.judge.settings.harness)}, beside the score): ${explains} of ${graded.length} graded catching findings explain the impact; ${score.judge.grades.length - graded.length} without a grade`,
    );
  }
  return `${lines.join('\n')}\n`;
}

export function compareText(compare: EvalCompare): string {
  const name = (s: EvalScore) => `${escapeControls(s.run.settings.harness)}${s.run.settings.model ? ` (${escapeControls(s.run.settings.model)})` : ''}`;
  const lines = [
    `Eval compare · ${compare.a.cases.length} cases · ${rulesText(compare.a)}`,
    `  A: ${escapeControls(compare.a.run.dir)} · ${name(compare.a)}`,
    `  B: ${escapeControls(compare.b.run.dir)} · ${name(compare.b)}`,
    `  catch rate        A ${percent(compare.a.totals.catchRate)}  B ${percent(compare.b.totals.catchRate)}`,
    `  failed            A ${compare.a.totals.failed}  B ${compare.b.totals.failed}`,
    `  noise/bug case    A ${per(compare.a.totals.noisePerBugCase)}  B ${per(compare.b.totals.noisePerBugCase)}`,
    `  false pos./clean  A ${per(compare.a.totals.falsePositivesPerCleanCase)}  B ${per(compare.b.totals.falsePositivesPerCleanCase)}`,
    compare.changed.length === 0 ? 'No case changed outcome.' : `Changed (${compare.changed.length}):`,
    ...compare.changed.map((c) => `  ${escapeControls(c.id)}: ${c.a} → ${c.b}`),
  ];
  return `${lines.join('\n')}\n`;
}
