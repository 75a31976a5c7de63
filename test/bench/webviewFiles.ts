import type { Browser } from 'playwright-core';
import type { FileSummary, SessionSnapshot } from '../../protocol';
import { file, patchset, snapshot } from '../unit/webview/fixtures';
import { BenchPanel } from './page/panel';
import type { FrameTiming } from './page/probe';
import type { PanelServer } from './page/server';
import { mp, ms, ratio, summarize, type Summary } from './stats';

/**
 * The changed-files table of a 20,000-file capture in a real Chromium (the panel's rows are
 * virtualized: webview/fileWindow.ts). Timed on the page's clock to the painted frame:
 * 1. the session snapshot posted to the panel until the table is on screen;
 * 2. the page scrolled to its end until the last file's row is painted, and back to the start.
 * Baseline, in the same run on the same page: the same 20,000 rows' text as plain `<div>`s written
 * with innerHTML from a posted message, and the page scrolled to their end. Beside each figure, the
 * longest main-thread task it caused (a freeze is a long task). A fresh page per run.
 */

export interface FileListBench {
  files: number;
  /** Rows the panel put in the DOM for the whole list. */
  rowsInDom: number;
  render: Summary;
  scrollEnd: Summary;
  scrollStart: Summary;
  baselineRender: Summary;
  baselineScroll: Summary;
  longestTask: { render: number; scroll: number; baselineRender: number; baselineScroll: number };
}

function manyFiles(count: number): FileSummary[] {
  return Array.from({ length: count }, (_, i) =>
    file({
      path: `packages/pkg${i % 40}/src/module${String(i).padStart(6, '0')}.ts`,
      ...(i % 97 === 0 ? { status: 'renamed' as const, oldPath: `packages/pkg${i % 40}/src/old${i}.ts`, similarity: 90 } : {}),
      additions: 10 + (i % 7),
      deletions: 10,
      hunkCount: 10,
    }),
  );
}

export async function benchFileList(browser: Browser, server: PanelServer, runs: number, count = 20_000): Promise<FileListBench> {
  const files = manyFiles(count);
  const big: SessionSnapshot = snapshot({ patchset: patchset({ files, totals: { ...patchset().totals, files: count } }) });
  const small: SessionSnapshot = snapshot({ patchset: patchset({ files: files.slice(0, 1), totals: { ...patchset().totals, files: 1 } }) });
  const rows = files.map((f) => `${f.status} ${f.path} +${f.additions} -${f.deletions} ${f.hunkCount}`);
  const last = files[count - 1] as FileSummary;
  const first = files[0] as FileSummary;
  const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
  const panel = new BenchPanel(page, server);
  const render: FrameTiming[] = [];
  const scrollEnd: FrameTiming[] = [];
  const scrollStart: FrameTiming[] = [];
  const baselineRender: FrameTiming[] = [];
  const baselineScroll: FrameTiming[] = [];
  const longest = { render: 0, scroll: 0, baselineRender: 0, baselineScroll: 0 };
  let rowsInDom = 0;
  try {
    for (let run = 0; run < runs; run++) {
      await panel.open(small);
      await panel.stage('rows', rows);
      const b = await panel.baselineRows('rows');
      baselineRender.push(b);
      longest.baselineRender = Math.max(longest.baselineRender, await panel.longestTask(b));
      const bs = await panel.scrollPage('end', { kind: 'present', selector: `#bench-baseline [data-row="${count - 1}"]` });
      baselineScroll.push(bs);
      longest.baselineScroll = Math.max(longest.baselineScroll, await panel.longestTask(bs));
      await panel.clearBaseline();
      await panel.scrollPage('start', { kind: 'present', selector: '[data-testid="patchset-header"]' });

      await panel.stage('files', { type: 'rennet/panel/snapshot', snapshot: big });
      const r = await panel.post('files', { kind: 'present', selector: `[data-testid="file-count"][data-count="${count}"]` });
      render.push(r);
      longest.render = Math.max(longest.render, await panel.longestTask(r));
      rowsInDom = await page.evaluate(() => document.querySelectorAll('[data-testid="file-row"]').length);
      const end = await panel.scrollPage('end', { kind: 'present', selector: `[data-testid="file-row"][data-path="${last.path}"]` });
      scrollEnd.push(end);
      longest.scroll = Math.max(longest.scroll, await panel.longestTask(end));
      const start = await panel.scrollPage('start', { kind: 'present', selector: `[data-testid="file-row"][data-path="${first.path}"]` });
      scrollStart.push(start);
      longest.scroll = Math.max(longest.scroll, await panel.longestTask(start));
    }
  } finally {
    await page.close();
  }
  const paint = (timings: FrameTiming[]) => summarize(timings.map((t) => t.paintMs));
  return {
    files: count,
    rowsInDom,
    render: paint(render),
    scrollEnd: paint(scrollEnd),
    scrollStart: paint(scrollStart),
    baselineRender: paint(baselineRender),
    baselineScroll: paint(baselineScroll),
    longestTask: longest,
  };
}

export function formatFileList(b: FileListBench): string {
  const task = (x: number) => (x > 0 ? ms(x) : 'none ≥ 50 ms');
  return [
    `${b.files} files; ${b.rowsInDom} rows in the DOM. Median / p95 of ${b.render.runs} runs, to the painted frame; longest main-thread task of any run in brackets.`,
    `snapshot → table painted      ${mp(b.render)}  [${task(b.longestTask.render)}]  (plain 20,000 <div> rows: ${mp(b.baselineRender)} [${task(b.longestTask.baselineRender)}]; ratio ${ratio(b.render, b.baselineRender)})`,
    `scroll to the end → last row  ${mp(b.scrollEnd)}  [${task(b.longestTask.scroll)}]  (the plain rows: ${mp(b.baselineScroll)} [${task(b.longestTask.baselineScroll)}]; ratio ${ratio(b.scrollEnd, b.baselineScroll)})`,
    `scroll back → first row       ${mp(b.scrollStart)}`,
  ].join('\n');
}
