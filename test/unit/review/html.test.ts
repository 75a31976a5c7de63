import assert from 'node:assert/strict';
import { citedLines, renderReviewHtml } from '../../../host/review/html';
import { markdownBlock, markdownInline } from '../../../host/review/markdown';
import { toReviewReport } from '../../../host/review/report';
import { LENSES, LENS_ADMISSIBLE_ABSENCES, LENS_TITLES } from '../../../protocol/board';
import type { ReportBoard, ReportElement, ReviewReport } from '../../../protocol/review';
import { reviewFixture, settledOutcome, type ReviewFixture } from './fixtures';

/** Every start tag in the page, as written. */
function tags(html: string): string[] {
  return html.match(/<[a-zA-Z][^>]*>/g) ?? [];
}

function boardOf(report: ReviewReport, lens: ReportBoard['lens']): ReportBoard {
  return report.boards.find((b) => b.lens === lens)!;
}

const HOSTILE = [
  'Intro <script>alert(1)</script> and <img src=x onerror=alert(2)> and <a href="javascript:alert(3)">a</a>.',
  '',
  '[click me](javascript:alert(4)) [data](data:text/html;base64,PHNjcmlwdD4=) [vb](VBScript:msgbox) ![tracker](https://tracker.example/p.png)',
  '',
  '<iframe src="https://evil.example"></iframe><svg onload=alert(5)><style>body{display:none}</style>',
  '',
  '# A model heading',
].join('\n');

describe('review page: renderReviewHtml', function () {
  this.timeout(30_000);
  let fx: ReviewFixture;
  let report: ReviewReport;
  let html: string;
  before(async () => {
    fx = await reviewFixture();
    report = toReviewReport(settledOutcome(fx), fx.patchset, 'g-0123456789abcdef');
    html = renderReviewHtml(report, fx.patchset);
  });
  after(() => fx.repo.cleanup());

  it('is one self-contained page: no script, no external resource, a CSP that forbids loads', () => {
    assert.match(html, /^<!DOCTYPE html>\n<html lang="en">/);
    assert.doesNotMatch(html, /<script/i);
    assert.doesNotMatch(html, /https?:\/\//i, 'no http(s) URL anywhere');
    assert.doesNotMatch(html, /<link\b/i);
    assert.doesNotMatch(html, /<(img|iframe|object|embed|video|audio|source)\b/i);
    assert.doesNotMatch(html, /\ssrc=/i);
    assert.doesNotMatch(html, /url\(/i, 'no CSS resource');
    assert.doesNotMatch(html, /@import/i);
    assert.ok(html.includes(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'`));
    for (const tag of tags(html)) assert.doesNotMatch(tag, /\son\w+\s*=/i, `no event handler attribute: ${tag}`);
  });

  it('shows the header ids, range and generation', () => {
    assert.ok(html.includes(`title="${fx.patchset.head}"`));
    assert.ok(html.includes(`title="${fx.patchset.base}"`));
    assert.ok(html.includes(`${fx.patchset.base.slice(0, 12)}..${fx.patchset.head.slice(0, 12)}`));
    assert.ok(html.includes('g-0123456789abcdef'));
    assert.ok(html.includes(fx.patchset.id));
    assert.match(html, /<h1>feature <span class="muted">against<\/span> main<\/h1>/);
  });

  it('has a rail and a board for every lens in canonical order, each with its state and document title', () => {
    const railOrder = [...html.matchAll(/<label class="rail-item state-(\w+)" for="tab-(\w+)">/g)].map((m) => [m[2], m[1]]);
    assert.deepEqual(
      railOrder,
      LENSES.map((l) => [l, 'settled']),
    );
    const boardOrder = [...html.matchAll(/<section class="board" id="board-(\w+)"/g)].map((m) => m[1]);
    assert.deepEqual(boardOrder, [...LENSES]);
    assert.equal((html.match(/<input class="tab" type="radio" name="lens"/g) ?? []).length, 5);
    assert.equal((html.match(/ checked>/g) ?? []).length, 1, 'one board shown at a time');
    for (const board of report.boards) assert.ok(html.includes(`>${board.document.title}</h2>`), board.document.title);
  });

  it('renders each kind the way a reader expects', () => {
    // Design: stats, requirement with its scenario as WHEN/THEN, tasks with check marks.
    assert.match(html, /<div class="stat"><dt>Requirements<\/dt><dd>1<\/dd><\/div>/);
    assert.match(html, /<blockquote class="shall">The client SHALL retry a failed upload up to three times\.<\/blockquote>/);
    assert.match(html, /<dt>WHEN<\/dt><dd>the server answers 503<\/dd><dt>THEN<\/dt><dd>the upload is sent again after a pause<\/dd>/);
    assert.match(html, /<li class="task done"><span class="check" role="img" aria-label="done">✓<\/span> <span>Wrap the PUT request in a retry<\/span>/);
    assert.match(html, /<li class="task"><span class="check" role="img" aria-label="not done"><\/span> <span>Make the attempt count configurable<\/span>/);
    // Sequence: numbered steps in order.
    assert.match(html, /aria-label="Step 1">1<\/span> upload hands the request to retry/);
    assert.match(html, /aria-label="Step 2">2<\/span> retry runs the attempt and backs off/);
    // Decisions: the inferred label, alternatives.
    assert.match(html, /Exponential back-off <span class="badge inferred"[^>]*>model analysis<\/span>/);
    assert.match(html, /<ul class="alternatives"><li>A fixed delay between attempts\.<\/li><li>No delay at all\.<\/li><\/ul>/);
    // Flagged: severity + claim, Markdown body, part subheading, remedy callout.
    assert.match(html, /<span class="badge sev sev-major">major<\/span> The last attempt still sleeps before giving up/);
    assert.ok(html.includes('<p>After the <strong>final</strong> failure the loop waits once more, delaying the error by 400 ms.</p>'));
    assert.match(html, /<h5 class="sub">Who notices<\/h5>/);
    assert.match(html, /<aside class="callout tone-remedy" role="note"><p class="callout-label">Remedy<\/p><p>Skip the wait when <code>attempt<\/code> is the last one\.<\/p>/);
    // Noise: the group, its reason and member regions as path:start-end.
    const member = boardOf(report, 'noise').elements.find((e) => e.kind === 'noise_member')!;
    assert.ok(html.includes(`<code>README.md:${member.startLine}-${member.endLine}</code>`));
    assert.match(html, /Prose reflow <span class="count">1 changed region<\/span>/);
  });

  it('code cards show the captured hunk lines of the cited range, with both line numbers and markers', () => {
    // Sequence step 1 cites src/upload.ts head 1-5: two added lines, two kept lines, then the
    // three deleted lines the new line 5 replaces, then the new line 5.
    const { blocks } = citedLines(fx.patchset, { path: 'src/upload.ts', side: 'head', start: 1, end: 5, hunkIds: [] });
    assert.equal(blocks.length, 1);
    const rows = blocks[0]!.lines.map((l) => `${l.kind} ${l.oldLine ?? '-'} ${l.newLine ?? '-'} ${l.text.trim()}`.trimEnd());
    assert.deepEqual(rows, [
      "add - 1 import { retry } from './retry';",
      'add - 2',
      'context 1 3 export async function upload(file: Blob, url: string): Promise<Response> {',
      'context 2 4 const body = await file.arrayBuffer();',
      "del 3 - const response = await fetch(url, { method: 'PUT', body });",
      'del 4 - if (!response.ok) throw new Error(`upload failed: ${response.status}`);',
      'del 5 - return response;',
      'add - 5 return retry(3, async () => {',
    ]);
    // The same lines, escaped, in the page's card for that step.
    const card = /<figure class="code-card" id="sequence-e2">[\s\S]*?<\/figure>/.exec(html)?.[0] ?? '';
    assert.ok(card.includes('<code class="path">src/upload.ts</code> <span class="range">lines 1-5</span>'));
    assert.ok(card.includes('<tr class="add"><td class="ln"></td><td class="ln">1</td><td class="mk" aria-hidden="true">+</td><td class="tx">import { retry } from &#39;./retry&#39;;</td></tr>'));
    assert.ok(
      card.includes(
        '<tr class="context"><td class="ln">1</td><td class="ln">3</td><td class="mk" aria-hidden="true"> </td><td class="tx">export async function upload(file: Blob, url: string): Promise&lt;Response&gt; {</td></tr>',
      ),
    );
    assert.ok(card.includes('<tr class="del"><td class="ln">5</td><td class="ln"></td><td class="mk" aria-hidden="true">−</td>'));
    assert.equal((card.match(/<tr class=/g) ?? []).length, 8);
    // A base-side range shows the deleted lines by their base numbers.
    const base = citedLines(fx.patchset, { path: 'src/upload.ts', side: 'base', start: 3, end: 4, hunkIds: [] });
    assert.deepEqual(
      base.blocks[0]!.lines.map((l) => [l.kind, l.oldLine]),
      [
        ['del', 3],
        ['del', 4],
      ],
    );
    // The Flagged anchor (src/retry.ts 6-8, an added file) shows exactly those head lines.
    const anchor = citedLines(fx.patchset, { path: 'src/retry.ts', side: 'head', start: 6, end: 8, hunkIds: [] });
    assert.deepEqual(
      anchor.blocks[0]!.lines.map((l) => l.newLine),
      [6, 7, 8],
    );
    assert.ok(html.includes('await new Promise((resolve) =&gt; setTimeout(resolve, 100 * 2 ** attempt));'));
  });

  it('states a range that is not in the captured hunks instead of showing nothing', () => {
    const withRefs = structuredClone(report);
    const sequence = boardOf(withRefs, 'sequence');
    sequence.elements.push(
      { id: 'e90', kind: 'code_ref', parent: null, path: 'src/nowhere.ts', side: 'head', startLine: 1, endLine: 2 },
      { id: 'e91', kind: 'code_ref', parent: null, path: 'src/upload.ts', side: 'head', startLine: 900, endLine: 901 },
    );
    const page = renderReviewHtml(withRefs, fx.patchset);
    assert.ok(page.includes('src/nowhere.ts:1-2 is not a changed file of this capture.'));
    assert.ok(page.includes('src/upload.ts:900-901 (head) is not in the captured hunks.'));
  });

  it('renders model Markdown with raw HTML escaped, unsafe links dropped and no image loaded', () => {
    const hostile = structuredClone(report);
    const flagged = boardOf(hostile, 'flagged');
    flagged.document.introMarkdown = HOSTILE;
    const finding = flagged.elements.find((e) => e.kind === 'finding') as ReportElement;
    finding.bodyMarkdown = HOSTILE;
    finding.title = 'Claim <img src=x onerror=alert(6)>';
    finding.remedyMarkdown = '<script>alert(7)</script>';
    const page = renderReviewHtml(hostile, fx.patchset);
    assert.doesNotMatch(page, /<script/i);
    assert.doesNotMatch(page, /<(img|iframe|svg)\b/i);
    assert.equal((page.match(/<style>/g) ?? []).length, 1, 'only the page’s own stylesheet');
    for (const tag of tags(page)) {
      assert.doesNotMatch(tag, /\son\w+\s*=/i, `no event handler attribute: ${tag}`);
      assert.doesNotMatch(tag, /(href|src|action|formaction)\s*=\s*["']?\s*(javascript|vbscript|data):/i, `no script URL: ${tag}`);
    }
    for (const tag of tags(page)) assert.doesNotMatch(tag, /https?:/i, `no tag names a URL: ${tag}`);
    assert.ok(!page.includes('tracker.example'), 'the image is not loaded and its URL is not written');
    assert.ok(page.includes('&lt;script&gt;alert(1)&lt;/script&gt;'), 'the model’s raw HTML is shown as text');
    assert.ok(page.includes('Claim &lt;img src=x onerror=alert(6)&gt;'));
    assert.ok(page.includes('<span class="md-image">[image: tracker]</span>'));
    assert.ok(!page.includes('<h1>A model heading'), 'model headings never outrank the page’s');
    assert.ok(page.includes('<h4>A model heading</h4>'));
  });

  it('keeps safe model links and marks them noopener', () => {
    assert.equal(markdownBlock('[spec](https://example.org/spec)'), '<p><a href="https://example.org/spec" rel="noopener noreferrer">spec</a></p>\n');
    assert.equal(markdownBlock('[x](https://example.com)'), '<p><a href="https://example.com" rel="noopener noreferrer">x</a></p>\n');
    assert.equal(
      markdownBlock('[pr](https://github.com/o/r/pull/1) [n](http://11.0.0.1/)'),
      '<p><a href="https://github.com/o/r/pull/1" rel="noopener noreferrer">pr</a> <a href="http://11.0.0.1/" rel="noopener noreferrer">n</a></p>\n',
    );
    assert.equal(markdownBlock('[m](mailto:a@b.test)'), '<p><a href="mailto:a@b.test" rel="noopener noreferrer">m</a></p>\n');
    assert.equal(markdownBlock('[doc](docs/a.md#b)'), '<p><a href="docs/a.md#b" rel="noopener noreferrer">doc</a></p>\n');
    assert.equal(markdownBlock('[x](javascript:alert(1))'), '<p>[x](javascript:alert(1))</p>\n');
    assert.equal(markdownBlock('[x](  jAvAsCrIpT:alert(1))'), '<p>[x](  jAvAsCrIpT:alert(1))</p>\n');
    assert.equal(markdownBlock('[x](file:///etc/passwd)'), '<p>[x](file:///etc/passwd)</p>\n');
  });

  it('shows a link to this machine or a private network as text with its URL, never as a link', () => {
    const note = 'not opened: it points at this machine or a private network';
    assert.equal(markdownBlock('See [docs](http://127.0.0.1:8080/x) now.'), `<p>See <span class="md-link-inert">docs (http://127.0.0.1:8080/x — ${note})</span> now.</p>\n`);
    assert.equal(markdownInline('[**meta**](http://169.254.169.254/latest/meta-data)'), `<span class="md-link-inert"><strong>meta</strong> (http://169.254.169.254/latest/meta-data — ${note})</span>`);
    assert.equal(markdownInline('<http://localhost:3000/>'), `<span class="md-link-inert">http://localhost:3000/ (${note})</span>`);
    // The URL is written as escaped text, whatever it holds.
    assert.equal(markdownInline('[q](http://localhost/?a=1&b="2")'), `<span class="md-link-inert">q (http://localhost/?a=1&amp;b=%222%22 — ${note})</span>`);
    const spellings = [
      'http://localhost:3000',
      'HTTP://LOCALHOST.',
      'http://0x7f.1/',
      'http://2130706433/',
      'http://[::1]/',
      'http://[::ffff:127.0.0.1]/',
      'https://user:pass@10.0.0.1/',
      'http://192.168.1.1/',
      'http://172.16.0.1/',
      'http://[fd00::1]/',
      'http://router/',
      'http://printer.local/',
    ];
    for (const target of spellings) {
      const out = markdownBlock(`[t](${target}) and\n\n[ref]\n\n[ref]: ${target}`);
      assert.doesNotMatch(out, /<a\b/, target);
      assert.doesNotMatch(out, /href=/, target);
      // markdown-it percent-encodes an IPv6 host's brackets (`http://%5B::1%5D/`), which no URL
      // parser reads: those stay text as "not a valid URL" instead.
      const expected = target.includes('[') ? 'not opened: not a valid URL' : note;
      assert.equal((out.match(new RegExp(expected, 'g')) ?? []).length, 2, `${target}: ${out}`);
    }
    // In the page: the hostile intro's private link is text, the public one a link.
    const hostile = structuredClone(report);
    boardOf(hostile, 'flagged').document.introMarkdown = '[local](http://127.0.0.1:9/x) [pub](https://example.org/p)';
    const page = renderReviewHtml(hostile, fx.patchset);
    assert.ok(page.includes(`<span class="md-link-inert">local (http://127.0.0.1:9/x — ${note})</span>`));
    assert.ok(page.includes('<a href="https://example.org/p" rel="noopener noreferrer">pub</a>'));
    for (const tag of tags(page)) assert.doesNotMatch(tag, /127\.0\.0\.1/, tag);
  });

  it('shows failed lanes with their message and ladder, and absent lanes with their meaning', () => {
    const mixed = structuredClone(report);
    const sequence = boardOf(mixed, 'sequence');
    Object.assign(sequence, { state: 'failed', failure: { message: 'no model harness is configured: Sequence writer (pass --harness scripted:FILE).', retryable: false, attempts: 0 } });
    const flagged = boardOf(mixed, 'flagged');
    Object.assign(flagged, { state: 'failed', failure: { message: 'The drafter stopped: rate limited <429>.', retryable: true, attempts: 3 } });
    const decisions = boardOf(mixed, 'decisions');
    Object.assign(decisions, { state: 'absent', absence: 'no-decisions', elements: [], document: { ...decisions.document, title: '' } });
    const noise = boardOf(mixed, 'noise');
    Object.assign(noise, { state: 'absent', absence: 'spec-only', elements: [], document: { ...noise.document, title: '' } });
    const page = renderReviewHtml(mixed, fx.patchset);
    const railOrder = [...page.matchAll(/<label class="rail-item state-(\w+)" for="tab-(\w+)">/g)].map((m) => [m[2], m[1]]);
    assert.deepEqual(railOrder, [
      ['design', 'settled'],
      ['sequence', 'failed'],
      ['decisions', 'absent'],
      ['flagged', 'failed'],
      ['noise', 'absent'],
    ]);
    assert.ok(page.includes('no model harness is configured: Sequence writer (pass --harness scripted:FILE).'));
    assert.ok(page.includes('<strong>terminal.</strong>'));
    assert.ok(page.includes('The drafter stopped: rate limited &lt;429&gt;.'));
    assert.ok(page.includes('This lane failed (retryable after 3 attempts).'));
    assert.ok(page.includes('The unfinished draft ('), 'a failed lane’s leftover draft is named, not shown');
    assert.ok(!page.includes('The last attempt still sleeps'), 'the failed Flagged draft is not presented as a finding');
    const meaning = (lens: 'decisions' | 'noise', absence: string) => LENS_ADMISSIBLE_ABSENCES[lens].find((r) => r.absence === absence)!.meaning;
    assert.ok(page.includes(`Settled absent: <code>no-decisions</code></p>\n<p>${meaning('decisions', 'no-decisions')}</p>`));
    assert.ok(page.includes(meaning('noise', 'spec-only')));
    for (const lens of LENSES) assert.ok(page.includes(`<span class="rail-title">${LENS_TITLES[lens]}</span>`));
  });
});

describe('review page: the spend table', function () {
  this.timeout(30_000);
  let fx: ReviewFixture;
  before(async () => {
    fx = await reviewFixture();
  });
  after(() => fx.repo.cleanup());

  /** The spend table's header cells and each body row's cells, as text. */
  function spendTable(page: string): { head: string[]; rows: string[][] } {
    const table = /<summary>Spend: [^<]*<\/summary>\s*<div class="scroll"><table class="data">([\s\S]*?)<\/table>/.exec(page)?.[1] ?? '';
    const text = (cell: string) => cell.replace(/<[^>]+>/g, '');
    const head = [...(/<thead>([\s\S]*?)<\/thead>/.exec(table)?.[1] ?? '').matchAll(/<th>([\s\S]*?)<\/th>/g)].map((m) => text(m[1] as string));
    const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(table)?.[1] ?? '';
    const rows = [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((r) => [...(r[1] as string).matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((m) => text(m[1] as string)));
    return { head, rows };
  }

  it('shows each seat turn’s reads: calls with their KiB, and the read time; a record from before the read tools shows neither', () => {
    const outcome = settledOutcome(fx);
    const reading = { ...outcome.spend[0]!, seat: 'flagged:reviewer:claude', role: 'reviewer' as const, readCalls: 7, readBytes: 5 * 1024 + 1, readMs: 340 };
    const slow = { ...reading, seat: 'noise:drafter', lens: 'noise' as const, role: 'drafter' as const, readCalls: 2, readBytes: 900, readMs: 2_450 };
    const report = toReviewReport({ ...outcome, spend: [...outcome.spend, reading, slow] }, fx.patchset, 'g-0123456789abcdef');
    const { head, rows } = spendTable(renderReviewHtml(report, fx.patchset));
    assert.deepEqual(head, ['Seat', 'Lens', 'Role', 'Harness', 'Model', 'Time', 'Input tokens', 'Output tokens', 'Tool calls', 'Refusals', 'Reads', 'Read time', 'Price']);
    const col = (name: string) => head.indexOf(name);
    assert.equal(rows.length, 3);
    for (const row of rows) assert.equal(row.length, head.length, JSON.stringify(row));
    // The fixture's record predates the read tools: no reads, no read time (never a fake zero).
    assert.deepEqual([rows[0]![col('Reads')], rows[0]![col('Read time')]], ['—', '—']);
    assert.deepEqual([rows[1]![col('Seat')], rows[1]![col('Reads')], rows[1]![col('Read time')]], ['flagged:reviewer:claude', '7 (6 KiB)', '340 ms']);
    assert.deepEqual([rows[2]![col('Seat')], rows[2]![col('Reads')], rows[2]![col('Read time')]], ['noise:drafter', '2 (1 KiB)', '2.5 s']);
  });
});
