import assert from 'node:assert/strict';
import type { EvalCaseResult } from '../../../protocol/eval';
import { compareScores } from '../../../host/eval/compare';
import { near, scoreCase, scoreRun } from '../../../host/eval/score';
import { BUG, CLEAN, manifestOf, OTHER, reportWith, resultOf } from './scoreFixtures';

const RULES = { threshold: 'major', tolerance: 3 } as const;

describe('eval score (pure): catches, noise, false positives, failures', () => {
  it('near: same path and side, a line of the span within tolerance of the range', () => {
    const truth = { path: 'src/a.ts', side: 'head', startLine: 10, endLine: 12 } as const;
    const span = (startLine: number, endLine: number, path = 'src/a.ts', side: 'head' | 'base' = 'head') => ({ path, side, startLine, endLine });
    assert.equal(near(span(11, 11), truth, 0), true, 'inside');
    assert.equal(near(span(1, 30), truth, 0), true, 'covering');
    assert.equal(near(span(13, 13), truth, 0), false, 'one past, no tolerance');
    assert.equal(near(span(15, 15), truth, 3), true, 'three past, tolerance 3');
    assert.equal(near(span(16, 20), truth, 3), false, 'four past');
    assert.equal(near(span(5, 7), truth, 3), true, 'three before');
    assert.equal(near(span(5, 6), truth, 3), false, 'four before');
    assert.equal(near(span(11, 11, 'src/b.ts'), truth, 3), false, 'another path');
    assert.equal(near(span(11, 11, 'src/a.ts', 'base'), truth, 3), false, 'the other side');
  });

  it('a major finding on a truth range catches; the other findings are noise; one on target under the threshold is neither', () => {
    const report = reportWith([
      { severity: 'major', title: 'the bug', at: [['src/a.ts', 'head', 13, 14]] },
      { severity: 'minor', title: 'on target, minor', at: [['src/b.ts', 'base', 5, 5]] },
      { severity: 'blocker', title: 'elsewhere', at: [['src/a.ts', 'head', 40, 41]] },
      { severity: 'nit', title: 'wrong side', at: [['src/a.ts', 'base', 11, 11]] },
    ]);
    const score = scoreCase(BUG, resultOf(BUG, report), RULES);
    assert.equal(score.outcome, 'caught');
    assert.deepEqual(
      score.findings.map((f) => [f.title, f.class]),
      [
        ['the bug', 'catch'],
        ['on target, minor', 'below-threshold'],
        ['elsewhere', 'noise'],
        ['wrong side', 'noise'],
      ],
    );
    assert.equal(score.noise, 2);
    assert.equal(score.falsePositives, 0);
  });

  it('a finding anchored on two spans catches when either is on target', () => {
    const report = reportWith([
      {
        severity: 'blocker',
        at: [
          ['src/z.ts', 'head', 1, 1],
          ['src/a.ts', 'head', 10, 10],
        ],
      },
    ]);
    assert.equal(scoreCase(BUG, resultOf(BUG, report), RULES).outcome, 'caught');
  });

  it('nothing on target is a miss; the threshold and tolerance move the line', () => {
    const report = reportWith([{ severity: 'minor', at: [['src/a.ts', 'head', 16, 16]] }]);
    const result = resultOf(BUG, report);
    assert.equal(scoreCase(BUG, result, RULES).outcome, 'missed');
    assert.equal(scoreCase(BUG, result, RULES).noise, 1);
    assert.equal(scoreCase(BUG, result, { threshold: 'minor', tolerance: 3 }).outcome, 'missed', 'four lines away');
    assert.equal(scoreCase(BUG, result, { threshold: 'minor', tolerance: 4 }).outcome, 'caught');
    assert.equal(scoreCase(BUG, result, { threshold: 'major', tolerance: 4 }).findings[0]?.class, 'below-threshold');
  });

  it('only the Flagged board counts: elements of other lenses are not findings', () => {
    const report = reportWith([], { otherLensElements: [{ id: 'e9', kind: 'finding', parent: null, severity: 'blocker', title: 'not Flagged', anchor: [] }] });
    const score = scoreCase(BUG, resultOf(BUG, report), RULES);
    assert.deepEqual([score.outcome, score.findings.length], ['missed', 0]);
  });

  it('on a clean twin every Flagged finding is a false positive, whatever its severity; none is quiet', () => {
    const noisy = scoreCase(
      CLEAN,
      resultOf(
        CLEAN,
        reportWith([
          { severity: 'nit', at: [['src/a.ts', 'head', 10, 10]] },
          { severity: 'blocker', at: [['src/a.ts', 'head', 90, 90]] },
        ]),
      ),
      RULES,
    );
    assert.deepEqual([noisy.outcome, noisy.falsePositives, noisy.noise], ['false-positive', 2, 0]);
    assert.deepEqual(
      noisy.findings.map((f) => f.class),
      ['false-positive', 'false-positive'],
    );
    const quiet = scoreCase(CLEAN, resultOf(CLEAN, reportWith([])), RULES);
    assert.deepEqual([quiet.outcome, quiet.falsePositives], ['quiet', 0]);
  });

  it('a failed review, a failed Flagged lane, an absent result and a stale one are never misses', () => {
    const failed = scoreCase(BUG, resultOf(BUG, null, 'failed', 'cannot capture f1..h1: unknown ref'), RULES);
    assert.deepEqual([failed.outcome, failed.reason], ['failed', 'cannot capture f1..h1: unknown ref']);
    const lane = scoreCase(BUG, resultOf(BUG, reportWith([{ severity: 'major', at: [['src/a.ts', 'head', 10, 10]] }], { flaggedState: 'failed' })), RULES);
    assert.deepEqual([lane.outcome, lane.reason, lane.findings.length], ['failed', 'the Flagged lane failed: the compiler gave up', 0]);
    const absent = scoreCase(BUG, null, RULES);
    assert.equal(absent.outcome, 'not-run');
    const stale = scoreCase({ ...BUG, truth: [] }, resultOf(BUG, reportWith([])), RULES);
    assert.deepEqual([stale.outcome, stale.reason], ['not-run', 'the result is of an earlier version of this case (the corpus changed since it was reviewed)']);
  });

  it('totals and categories: catch rate over reviewed bug cases only, failures apart, spend summed honestly', () => {
    const results = new Map<string, EvalCaseResult>([
      [
        BUG.id,
        resultOf(
          BUG,
          reportWith([
            { severity: 'major', at: [['src/a.ts', 'head', 10, 10]] },
            { severity: 'minor', at: [['src/a.ts', 'head', 50, 50]] },
          ]),
        ),
      ],
      [CLEAN.id, resultOf(CLEAN, reportWith([{ severity: 'minor', at: [['src/a.ts', 'head', 50, 50]] }]))],
      [OTHER.id, resultOf(OTHER, null, 'failed', 'the review broke')],
    ]);
    const score = scoreRun(manifestOf([BUG, CLEAN, OTHER]), results, { ...RULES, dir: '/out' });
    const t = score.totals;
    assert.deepEqual([t.cases, t.reviewed, t.bugCases, t.caught, t.missed, t.failed, t.notRun], [3, 2, 2, 1, 0, 1, 0]);
    assert.equal(t.catchRate, 1, 'the failed case is not a miss');
    assert.deepEqual([t.cleanCases, t.cleanReviewed, t.falsePositives, t.falsePositivesPerCleanCase], [1, 1, 1, 1]);
    assert.deepEqual([t.findings, t.findingsPerReview, t.noise, t.noisePerBugCase], [3, 1.5, 1, 1]);
    assert.deepEqual([t.spend.turns, t.spend.priceUsd, t.spend.unpricedTurns, t.spend.inputTokens], [6, 0.75, 3, 450]);
    assert.equal(t.priceUsdPerReview, null, 'some turns reported no price: no per-review price is made up');
    assert.equal(t.durationMsPerReview, 2000);
    assert.deepEqual(
      score.byCategory.map((c) => [c.category, c.bugCases, c.caught, c.missed, c.failed, c.catchRate, c.cleanCases, c.falsePositives]),
      [
        ['off-by-one', 1, 1, 0, 0, 1, 1, 1],
        ['missing-await', 1, 0, 0, 1, null, 0, 0],
      ],
    );
    assert.deepEqual(score.rules, { threshold: 'major', tolerance: 3 });
    assert.equal(score.judge, null);
  });

  it('compare: the cases whose outcome changed; different corpora or rules are refused with the reason', () => {
    const manifest = manifestOf([BUG, CLEAN]);
    const caught = new Map([
      [BUG.id, resultOf(BUG, reportWith([{ severity: 'major', at: [['src/a.ts', 'head', 10, 10]] }]))],
      [CLEAN.id, resultOf(CLEAN, reportWith([]))],
    ]);
    const missed = new Map([
      [BUG.id, resultOf(BUG, reportWith([{ severity: 'major', at: [['src/a.ts', 'head', 80, 80]] }]))],
      [CLEAN.id, resultOf(CLEAN, reportWith([]))],
    ]);
    const a = scoreRun(manifest, caught, { ...RULES, dir: '/a' });
    const b = scoreRun(manifest, missed, { ...RULES, dir: '/b' });
    const compared = compareScores(a, b);
    assert.ok(compared.ok);
    assert.deepEqual(compared.value.changed, [{ id: BUG.id, category: 'off-by-one', clean: false, a: 'caught', b: 'missed' }]);
    const other = scoreRun({ ...manifest, casesDigest: 'e'.repeat(64) }, missed, { ...RULES, dir: '/c' });
    const refused = compareScores(a, other);
    assert.ok(!refused.ok);
    assert.match(refused.error, /different corpora \(cases digest dddddddddddd in \/a, eeeeeeeeeeee in \/c\)/);
    const strict = scoreRun(manifest, missed, { threshold: 'blocker', tolerance: 3, dir: '/b' });
    const rules = compareScores(a, strict);
    assert.ok(!rules.ok);
    assert.match(rules.error, /different rules/);
  });
});
