import type { EvalCaseScore, EvalCompare, EvalJudge, EvalScore, EvalTotals } from '../../protocol/eval';
import { escapeHtml as esc } from '../review/markdown';
import { durationText } from './run';
import { percent, plural, rulesText } from './reportText';
import { spendText } from './scoreSpend';

/**
 * The eval score and the comparison of two runs as ONE self-contained HTML page each (pure): no
 * script, no external resource (a CSP meta forbids every load but inline style), the chart an
 * inline SVG. Every string that came from a repository, a corpus file or a model (case ids,
 * categories, finding titles, reasons, paths) goes through escapeHtml, the review page's helper.
 */

const CSP = `default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; base-uri 'none'; form-action 'none'`;

const CSS = String.raw`
:root{color-scheme:light dark;--bg:#fff;--fg:#1f2328;--muted:#59636e;--border:#d1d9e0;--panel:#f6f8fa;
  --a:#0969da;--b:#bc4c00;--good:#1a7f37;--bad:#cf222e;--warn:#9a6700;
  --sans:system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Liberation Sans",sans-serif;
  --mono:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--border:#3d444d;--panel:#151b23;
  --a:#4493f8;--b:#f0883e;--good:#3fb950;--bad:#f85149;--warn:#d29922}}
*{box-sizing:border-box}
body{margin:0;padding:1.5rem 2rem 3rem;font:15px/1.5 var(--sans);background:var(--bg);color:var(--fg);max-width:80rem}
h1{font-size:1.45rem;margin:.2rem 0 .5rem}
h2{font-size:1.1rem;margin:2rem 0 .6rem;border-bottom:1px solid var(--border);padding-bottom:.25rem}
code{font-family:var(--mono);font-size:.88em;overflow-wrap:anywhere}
.brand{margin:0;font-size:.8rem;letter-spacing:.08em;text-transform:uppercase;color:var(--muted);font-weight:600}
.muted{color:var(--muted)}
.rule{background:var(--panel);border:1px solid var(--border);border-radius:6px;padding:.5rem .8rem}
table{border-collapse:collapse;margin:.4rem 0;font-size:.92rem}
th,td{border:1px solid var(--border);padding:.3rem .55rem;text-align:left;vertical-align:top}
th{background:var(--panel);font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.outcome-caught,.outcome-quiet,.grade-explains{color:var(--good);font-weight:600}
.outcome-missed,.outcome-false-positive,.grade-does-not-explain{color:var(--bad);font-weight:600}
.outcome-failed,.outcome-not-run,.grade-partly{color:var(--warn);font-weight:600}
ul.findings{margin:.2rem 0;padding-left:1.1rem}
.chart{max-width:100%;height:auto}
.chart text{fill:var(--fg);font:12px var(--sans)}
.chart .axis{stroke:var(--border)}
.chart .bar-a{fill:var(--a)}
.chart .bar-b{fill:var(--b)}
.chart .none{fill:var(--muted)}
.legend span{display:inline-block;width:.8em;height:.8em;margin:0 .3em 0 .8em;vertical-align:-.05em}
.key-a{background:var(--a)}.key-b{background:var(--b)}
.scroll{overflow-x:auto}
`;

function page(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="rennet eval">
<title>${esc(title)}</title>
<style>${CSS}</style>
</head>
<body>
${body}
<footer><h2>Reading these numbers</h2>
<p class="muted">The score is deterministic: it reads only where each Flagged finding is anchored and its severity. It does not say whether a finding is right, only whether it lands on the lines a fix changed; a correct finding elsewhere counts as noise. Small corpora swing by whole cases; reverted fixes are easier than bugs nobody has found yet; a model may have seen a public history in training; two runs of the same model differ. See docs/eval.md.</p>
</footer>
</body>
</html>
`;
}

function settingsText(score: EvalScore): string {
  const s = score.run.settings;
  return [s.harness, s.model ? `model ${s.model}` : '', s.baseUrl ? `at ${s.baseUrl}` : ''].filter(Boolean).join(' · ');
}

function num(value: number | null, digits = 2): string {
  return value === null ? 'n/a' : value.toFixed(digits);
}

function totalsRows(t: EvalTotals): Array<[string, string, string]> {
  return [
    ['Catch rate', percent(t.catchRate), `${t.caught} of ${t.caught + t.missed} reviewed bug cases`],
    ['Failed cases', String(t.failed), 'not counted as misses'],
    ['Not run', String(t.notRun), 'no result for this version of the case'],
    ['Findings per review', num(t.findingsPerReview), `${plural(t.findings, 'Flagged finding')} over ${plural(t.reviewed, 'review')}`],
    ['Noise per bug case', num(t.noisePerBugCase), `${plural(t.noise, 'finding')} anchored on no truth line`],
    ['False positives per clean case', num(t.falsePositivesPerCleanCase), `${plural(t.falsePositives, 'finding')} over ${plural(t.cleanReviewed, 'reviewed clean twin')}`],
    ['Time per review', t.durationMsPerReview === null ? 'n/a' : durationText(t.durationMsPerReview), 'wall time of the review, as run'],
    ['Spend', t.priceUsdPerReview === null ? 'n/a' : `$${t.priceUsdPerReview.toFixed(2)} per review`, spendText(t.spend)],
  ];
}

/** Horizontal bars of catch rate by category; two bars per category when `b` is given. */
export function catchRateChart(a: EvalScore, b: EvalScore | null): string {
  const categories = a.byCategory.map((c) => c.category);
  for (const c of b?.byCategory ?? []) if (!categories.includes(c.category)) categories.push(c.category);
  const label = 170;
  const width = 420;
  const barH = 16;
  const gap = 10;
  const runs = b ? [a, b] : [a];
  const rowH = runs.length * barH + gap;
  const height = categories.length * rowH + 28;
  const rows = categories.map((category, i) => {
    const y = i * rowH + 4;
    const bars = runs.map((run, j) => {
      const row = run.byCategory.find((c) => c.category === category);
      const rate = row?.catchRate ?? null;
      const by = y + j * barH;
      const w = rate === null ? 0 : Math.round(rate * width);
      const text = rate === null ? 'n/a' : `${percent(rate)} (${row?.caught ?? 0}/${(row?.caught ?? 0) + (row?.missed ?? 0)})`;
      const cls = j === 0 ? 'bar-a' : 'bar-b';
      return `<rect class="${rate === null ? 'none' : cls}" x="${label}" y="${by}" width="${Math.max(w, rate === null ? 2 : 0)}" height="${barH - 2}"><title>${esc(category)}${b ? (j === 0 ? ' · A' : ' · B') : ''}: ${esc(text)}</title></rect><text x="${label + w + 6}" y="${by + barH - 5}">${esc(text)}</text>`;
    });
    return `<text x="${label - 8}" y="${y + barH - 4}" text-anchor="end">${esc(category.length > 26 ? `${category.slice(0, 25)}…` : category)}</text>${bars.join('')}`;
  });
  const axisY = categories.length * rowH + 6;
  return `<svg class="chart" role="img" aria-label="Catch rate by category" viewBox="0 0 ${label + width + 110} ${height}" width="${label + width + 110}" height="${height}">
<line class="axis" x1="${label}" y1="0" x2="${label}" y2="${axisY}"/>
<line class="axis" x1="${label}" y1="${axisY}" x2="${label + width}" y2="${axisY}"/>
<text x="${label}" y="${axisY + 16}">0%</text><text x="${label + width / 2}" y="${axisY + 16}" text-anchor="middle">50%</text><text x="${label + width}" y="${axisY + 16}" text-anchor="end">100%</text>
${rows.join('\n')}
</svg>`;
}

function categoryTable(score: EvalScore): string {
  const rows = score.byCategory.map(
    (c) =>
      `<tr><td>${esc(c.category)}</td><td class="num">${percent(c.catchRate)}</td><td class="num">${c.caught}</td><td class="num">${c.missed}</td><td class="num">${c.failed}</td><td class="num">${c.notRun}</td><td class="num">${c.cleanCases}</td><td class="num">${c.falsePositives}</td></tr>`,
  );
  return `<div class="scroll"><table><thead><tr><th>Category</th><th>Catch rate</th><th>Caught</th><th>Missed</th><th>Failed</th><th>Not run</th><th>Clean twins</th><th>False positives</th></tr></thead><tbody>
${rows.join('\n')}
</tbody></table></div>`;
}

function findingsList(c: EvalCaseScore): string {
  if (c.findings.length === 0) return '<span class="muted">none</span>';
  const items = c.findings.map((f) => {
    const anchors = f.anchors.map((a) => `${a.path}:${a.side === 'base' ? 'base:' : ''}${a.startLine}${a.endLine !== a.startLine ? `-${a.endLine}` : ''}`).join(', ');
    return `<li><strong>${esc(f.severity)}</strong> · ${esc(f.class)} · ${esc(f.title)}${anchors ? ` <code>${esc(anchors)}</code>` : ' <span class="muted">(no anchor)</span>'}</li>`;
  });
  return `<ul class="findings">${items.join('')}</ul>`;
}

function casesTable(score: EvalScore): string {
  const rows = score.cases.map(
    (c) =>
      `<tr id="case-${esc(c.id)}"><td><code>${esc(c.id)}</code></td><td>${esc(c.category)}${c.clean ? ' <span class="muted">(clean twin)</span>' : ''}</td><td class="outcome-${esc(c.outcome)}">${esc(c.outcome)}${c.reason ? `<br><span class="muted">${esc(c.reason)}</span>` : ''}</td><td class="num">${c.noise}</td><td class="num">${c.falsePositives}</td><td class="num">${c.durationMs === null ? 'n/a' : esc(durationText(c.durationMs))}</td><td>${findingsList(c)}</td></tr>`,
  );
  return `<div class="scroll"><table><thead><tr><th>Case</th><th>Category</th><th>Outcome</th><th>Noise</th><th>False positives</th><th>Time</th><th>Flagged findings</th></tr></thead><tbody>
${rows.join('\n')}
</tbody></table></div>`;
}

function judgeSection(judge: EvalJudge | null): string {
  if (!judge)
    return `<h2>Judge</h2><p class="muted">No judge pass ran (<code>rennet eval score --judge HARNESS</code> grades whether each catching finding explains the impact; its grades sit beside the score, never in it).</p>`;
  const rows = judge.grades.map(
    (g) =>
      `<tr><td><code>${esc(g.caseId)}</code></td><td><code>${esc(g.findingId)}</code></td><td class="${g.grade ? `grade-${esc(g.grade)}` : 'outcome-failed'}">${esc(g.grade ?? 'no grade')}</td><td>${esc(g.failure ?? g.reason)}</td></tr>`,
  );
  return `<h2>Judge <span class="muted">(${esc(judge.settings.harness)}${judge.settings.model ? ` · ${esc(judge.settings.model)}` : ''}; beside the score, never in it)</span></h2>
${judge.grades.length === 0 ? '<p class="muted">No finding caught a bug, so there was nothing to grade.</p>' : `<div class="scroll"><table><thead><tr><th>Case</th><th>Finding</th><th>Explains the impact?</th><th>Reason</th></tr></thead><tbody>\n${rows.join('\n')}\n</tbody></table></div>`}`;
}

export function renderScoreHtml(score: EvalScore): string {
  const totals = totalsRows(score.totals)
    .map(([name, value, note]) => `<tr><th scope="row">${esc(name)}</th><td class="num">${esc(value)}</td><td class="muted">${esc(note)}</td></tr>`)
    .join('\n');
  const body = `<header><p class="brand">Rennet eval</p>
<h1>Catch rate ${esc(percent(score.totals.catchRate))} <span class="muted">· ${esc(settingsText(score))}</span></h1>
<p class="muted">Run <code>${esc(score.run.dir)}</code> · corpus <code>${esc(score.run.casesDigest.slice(0, 16))}</code> · ${score.totals.cases} cases · started ${esc(score.run.startedAt)}${score.run.finishedAt ? ` · finished ${esc(score.run.finishedAt)}` : ' · not finished'}</p>
<p class="rule">Rule: ${esc(rulesText(score))}. Noise is every Flagged finding anchored on no truth line; on a clean twin every Flagged finding is a false positive. Failed cases are counted apart, never as misses.</p></header>
<h2>Totals</h2>
<table><tbody>
${totals}
</tbody></table>
<h2>Catch rate by category</h2>
${catchRateChart(score, null)}
${categoryTable(score)}
${judgeSection(score.judge)}
<h2>Cases</h2>
${casesTable(score)}`;
  return page(`Rennet eval · ${percent(score.totals.catchRate)} · ${settingsText(score)}`, body);
}

export function renderCompareHtml(compare: EvalCompare): string {
  const { a, b } = compare;
  const ra = totalsRows(a.totals);
  const rb = totalsRows(b.totals);
  const cell = (row: [string, string, string] | undefined) => (row ? `<td class="num">${esc(row[1])}<br><span class="muted">${esc(row[2])}</span></td>` : '<td></td>');
  const totals = ra.map((row, i) => `<tr><th scope="row">${esc(row[0])}</th>${cell(row)}${cell(rb[i])}</tr>`).join('\n');
  const changed =
    compare.changed.length === 0
      ? '<p>No case changed outcome.</p>'
      : `<div class="scroll"><table><thead><tr><th>Case</th><th>Category</th><th>A</th><th>B</th></tr></thead><tbody>
${compare.changed.map((c) => `<tr><td><code>${esc(c.id)}</code></td><td>${esc(c.category)}${c.clean ? ' <span class="muted">(clean twin)</span>' : ''}</td><td class="outcome-${esc(c.a)}">${esc(c.a)}</td><td class="outcome-${esc(c.b)}">${esc(c.b)}</td></tr>`).join('\n')}
</tbody></table></div>`;
  const body = `<header><p class="brand">Rennet eval · compare</p>
<h1>${esc(percent(a.totals.catchRate))} <span class="muted">against</span> ${esc(percent(b.totals.catchRate))}</h1>
<p><span class="legend"><span class="key-a"></span></span>A: <code>${esc(a.run.dir)}</code> · ${esc(settingsText(a))}<br>
<span class="legend"><span class="key-b"></span></span>B: <code>${esc(b.run.dir)}</code> · ${esc(settingsText(b))}</p>
<p class="muted">Same corpus (<code>${esc(compare.casesDigest.slice(0, 16))}</code>, ${a.totals.cases} cases).</p>
<p class="rule">Rule (both): ${esc(rulesText(a))}.</p></header>
<h2>Side by side</h2>
<table><thead><tr><th></th><th>A</th><th>B</th></tr></thead><tbody>
${totals}
</tbody></table>
<h2>Catch rate by category</h2>
<p class="legend"><span class="key-a"></span>A<span class="key-b"></span>B</p>
${catchRateChart(a, b)}
<h2>Cases that changed (${compare.changed.length})</h2>
${changed}
<h2>A · cases</h2>
${casesTable(a)}
<h2>B · cases</h2>
${casesTable(b)}`;
  return page(`Rennet eval compare · ${percent(a.totals.catchRate)} against ${percent(b.totals.catchRate)}`, body);
}
