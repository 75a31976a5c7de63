import assert from 'node:assert/strict';
import type { EvalCaseResult } from '../../../protocol/eval';
import { compareScores } from '../../../host/eval/compare';
import { catchRateChart, renderCompareHtml, renderScoreHtml } from '../../../host/eval/reportHtml';
import { compareText, scoreText } from '../../../host/eval/reportText';
import { scoreRun } from '../../../host/eval/score';
import { BUG, CLEAN, manifestOf, OTHER, reportWith, resultOf } from './scoreFixtures';

const HOSTILE = '<img src=x onerror=alert(1)>"\'&';
const ESCAPED = '&lt;img src=x onerror=alert(1)&gt;&quot;&#39;&amp;';

function scores() {
  const hostileCase = { ...OTHER, id: 'await-2', category: `cat${HOSTILE}` };
  const manifest = manifestOf([BUG, CLEAN, OTHER, hostileCase]);
  const a = new Map<string, EvalCaseResult>([
    [BUG.id, resultOf(BUG, reportWith([{ severity: 'major', title: `title${HOSTILE}`, at: [['src/a.ts', 'head', 10, 10]] }]))],
    [CLEAN.id, resultOf(CLEAN, reportWith([]))],
    [OTHER.id, resultOf(OTHER, null, 'failed', `reason${HOSTILE}`)],
  ]);
  const b = new Map<string, EvalCaseResult>([
    [BUG.id, resultOf(BUG, reportWith([{ severity: 'major', at: [['src/a.ts', 'head', 99, 99]] }]))],
    [CLEAN.id, resultOf(CLEAN, reportWith([]))],
  ]);
  return { a: scoreRun(manifest, a, { threshold: 'major', tolerance: 3, dir: '/runs/a' }), b: scoreRun(manifest, b, { threshold: 'major', tolerance: 3, dir: '/runs/b' }) };
}

describe('eval report pages (pure): self-contained, escaped, with a chart', () => {
  it('the score page: strict CSP, no script or external load, every corpus and model string escaped', () => {
    const page = renderScoreHtml(scores().a);
    assert.match(page, /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; base-uri 'none'; form-action 'none'">/);
    assert.doesNotMatch(page, /<script|<link|<img|<iframe|https?:\/\/|url\(/i);
    assert.ok(!page.includes(HOSTILE));
    assert.ok(page.includes(`title${ESCAPED}`), 'the finding title, escaped');
    assert.ok(page.includes(`reason${ESCAPED}`), 'the failure reason, escaped');
    assert.ok(page.includes(`cat${ESCAPED}`), 'the category, escaped (table and chart)');
    assert.match(page, /Catch rate 100%/);
    assert.match(page, /Rule: a bug case is caught by a Flagged finding of severity major or higher anchored within 3 lines of the ground truth/);
    assert.match(page, /No judge pass ran/);
  });

  it('the chart: one bar per category with its rate, a category with no reviewed bug case drawn as n/a', () => {
    const { a } = scores();
    const svg = catchRateChart(a, null);
    assert.match(svg, /^<svg class="chart" role="img" aria-label="Catch rate by category"/);
    assert.match(svg, /<rect class="bar-a" x="170" y="\d+" width="420"[^>]*><title>off-by-one: 100% \(1\/1\)<\/title>/);
    assert.match(svg, /<rect class="none"[^>]*><title>missing-await: n\/a<\/title>/);
    assert.equal((svg.match(/<rect /g) ?? []).length, 3, 'one bar per category');
    const both = catchRateChart(a, scores().b);
    assert.equal((both.match(/<rect /g) ?? []).length, 6, 'two bars per category when comparing');
    assert.match(both, /<title>off-by-one · B: 0% \(0\/1\)<\/title>/);
  });

  it('the compare page: both runs side by side and the cases that changed', () => {
    const { a, b } = scores();
    const compared = compareScores(a, b);
    assert.ok(compared.ok);
    const page = renderCompareHtml(compared.value);
    assert.match(page, /<h1>100% <span class="muted">against<\/span> 0%<\/h1>/);
    assert.match(page, /<tr><td><code>bug-1<\/code><\/td><td>off-by-one<\/td><td class="outcome-caught">caught<\/td><td class="outcome-missed">missed<\/td><\/tr>/);
    assert.match(
      page,
      /<tr><th scope="row">Catch rate<\/th><td class="num">100%<br><span class="muted">1 of 1 reviewed bug cases<\/span><\/td><td class="num">0%<br><span class="muted">0 of 1 reviewed bug cases<\/span><\/td><\/tr>/,
    );
    assert.doesNotMatch(page, /<script|<img|https?:\/\//i);
    assert.ok(!page.includes(HOSTILE));
    assert.match(compareText(compared.value), /bug-1: caught → missed/);
  });

  it('the terminal text escapes control characters of corpus text', () => {
    const { a } = scores();
    const text = scoreText({ ...a, byCategory: [{ ...a.byCategory[0]!, category: 'bad\u001b[31m' }] });
    assert.ok(!text.includes('\u001b'));
    assert.ok(text.includes('bad\\u001B[31m'));
  });
});
