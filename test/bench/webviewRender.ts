import type { Browser } from 'playwright-core';
import { BenchPanel } from './page/panel';
import type { FrameTiming, WaitSpec } from './page/probe';
import type { PanelServer } from './page/server';
import { mp, ms, ratio, summarize, type Summary } from './stats';
import { benchGeneration, withChangedFinding, type BenchGeneration } from './webviewFixture';

/**
 * The board panel in a real Chromium: dist/webview.js on the extension's own page shell, fed the
 * messages VS Code would post. Every act is timed on the page's clock from postMessage (or the
 * click) to the frame that paints its result; every figure has a baseline measured in the same
 * run on the same page — what the browser needs at minimum for the same visible change.
 *
 * 1. Render: the 1,000-element Flagged board, from postMessage of its generation to the painted
 *    frame holding all 1,000 elements ("Expand all" is pressed the moment the board mounts, before
 *    its first paint), and to its first, folded view. Baseline: the same 1,000 elements' text as
 *    plain `<div>` rows written with innerHTML from a posted message. A fresh page per run.
 * 2. With that board on screen, unfolded: a seat's write (the same generation with one finding
 *    changed, posted whole as the host sends it) to its paint; a jump (scrollIntoView) to the last
 *    finding and back to the first, to their paint — the panel's off-screen elements skip style,
 *    layout and paint until they come near the view (content-visibility), so the whole-board
 *    figure paints what is on screen and a jump pays for what comes into view; a lens switch on
 *    the rail (click) to the other board's paint, both ways. Baselines: a posted message / a click
 *    that sets one plain div's text (the jumps are set beside the click's).
 */

export interface WebviewRenderBench {
  generationBytes: number;
  lanes: Array<{ lens: string; elements: number }>;
  elements: number;
  folded: number;
  /** Element nodes the unfolded board put in the document, and the baseline's rows. */
  dom: { nodes: number; baselineNodes: number };
  render: { whole: Summary; wholeDom: Summary; wholeNextFrame: Summary; firstView: Summary; baseline: Summary; baselineNextFrame: Summary };
  write: { board: Summary; boardDom: Summary; baseline: Summary };
  scroll: { toEnd: Summary; toStart: Summary };
  lensSwitch: { toSequence: Summary; toFlagged: Summary; baseline: Summary };
}

const boardOf = (lens: string) => `[data-testid="board"][data-lens="${lens}"]`;

export async function benchWebviewRender(browser: Browser, server: PanelServer, runs: number, warmups = 1): Promise<WebviewRenderBench> {
  const fixture: BenchGeneration = benchGeneration();
  const message = { type: 'rennet/panel/generation', snapshot: fixture.generation };
  const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
  const panel = new BenchPanel(page, server);
  const whole: FrameTiming[] = [];
  const firstView: FrameTiming[] = [];
  const baseline: FrameTiming[] = [];
  const write: FrameTiming[] = [];
  const writeBaseline: FrameTiming[] = [];
  const toEnd: FrameTiming[] = [];
  const toStart: FrameTiming[] = [];
  const toSequence: FrameTiming[] = [];
  const toFlagged: FrameTiming[] = [];
  const clickBaseline: FrameTiming[] = [];
  let dom = { nodes: 0, baselineNodes: 0 };
  const all: WaitSpec = { kind: 'ids', within: boardOf(fixture.lens), atLeast: fixture.elementCount, expandAll: true };
  const folded: WaitSpec = { kind: 'ids', within: boardOf(fixture.lens), atLeast: fixture.foldedCount };
  try {
    for (let i = 0; i < warmups + runs; i++) {
      const keep = i >= warmups;
      // Interleaved, so drift on the machine touches every figure alike.
      await panel.open(fixture.session);
      await panel.stage('rows', fixture.rows);
      const b = await panel.baselineRows('rows');
      await panel.open(fixture.session);
      await panel.stage('generation', message);
      const f = await panel.post('generation', folded);
      await panel.open(fixture.session);
      await panel.stage('generation', message);
      const w = await panel.post('generation', all);
      if (keep) {
        baseline.push(b);
        firstView.push(f);
        whole.push(w);
      }
    }

    const board = boardOf(fixture.lens);
    dom = { nodes: await page.evaluate((selector) => document.querySelector(selector)?.querySelectorAll('*').length ?? 0, board), baselineNodes: fixture.rows.length };

    // The last page shows the whole board, unfolded: a seat writes one finding, again and again.
    for (let i = 0; i < warmups + runs; i++) {
      const marker = `revision ${i + 1}`;
      await panel.stage('write', { type: 'rennet/panel/generation', snapshot: withChangedFinding(fixture.generation, fixture.lens, fixture.findingId, marker) });
      const w = await panel.post('write', { kind: 'text', selector: `${board} [data-id="${fixture.findingId}"]`, includes: marker });
      const b = await panel.baselineText(marker);
      if (i >= warmups) {
        write.push(w);
        writeBaseline.push(b);
      }
    }

    // Jumps across the unfolded board, to its last finding and back: each lands on elements skipped while off screen.
    const findings = fixture.board.elements.filter((e) => e.kind === 'finding');
    const first = `${board} [data-id="${findings[0]?.id}"]`;
    const last = `${board} [data-id="${findings.at(-1)?.id}"]`;
    for (let i = 0; i < warmups + runs; i++) {
      const e = await panel.jump(last);
      const s = await panel.jump(first);
      if (i >= warmups) {
        toEnd.push(e);
        toStart.push(s);
      }
    }
    await page.evaluate(() => window.scrollTo(0, 0));

    // Lens switches on the rail, both ways (the Flagged board comes back folded, as a remount does).
    const tab = (lens: string) => `[data-testid="lens-tab"][data-lens="${lens}"]`;
    for (let i = 0; i < warmups + runs; i++) {
      const s = await panel.click(tab('sequence'), { kind: 'present', selector: boardOf('sequence') });
      const f = await panel.click(tab('flagged'), { kind: 'present', selector: boardOf('flagged') });
      const b = await panel.baselineClick(`switch ${i + 1}`);
      if (i >= warmups) {
        toSequence.push(s);
        toFlagged.push(f);
        clickBaseline.push(b);
      }
    }
    panel.check();
  } finally {
    await page.close();
  }
  const paint = (xs: FrameTiming[]) => summarize(xs.map((x) => x.paintMs));
  return {
    generationBytes: Buffer.byteLength(JSON.stringify(fixture.generation)),
    lanes: fixture.generation.lanes.map((l) => ({ lens: l.lens, elements: l.board?.elements.length ?? 0 })),
    elements: fixture.elementCount,
    folded: fixture.foldedCount,
    dom,
    render: {
      whole: paint(whole),
      wholeDom: summarize(whole.map((x) => x.domMs)),
      wholeNextFrame: summarize(whole.map((x) => x.nextFrameMs)),
      firstView: paint(firstView),
      baseline: paint(baseline),
      baselineNextFrame: summarize(baseline.map((x) => x.nextFrameMs)),
    },
    write: { board: paint(write), boardDom: summarize(write.map((x) => x.domMs)), baseline: paint(writeBaseline) },
    scroll: { toEnd: paint(toEnd), toStart: paint(toStart) },
    lensSwitch: { toSequence: paint(toSequence), toFlagged: paint(toFlagged), baseline: paint(clickBaseline) },
  };
}

export function formatWebviewRender(r: WebviewRenderBench): string {
  const lines = [
    `generation: ${r.lanes.map((l) => `${l.lens} ${l.elements}`).join(', ')} elements; ${(r.generationBytes / 1024).toFixed(0)} KiB as JSON; median / p95 of ${r.render.whole.runs} runs`,
    `render, post → all ${r.elements} elements painted   ${mp(r.render.whole)}  (DOM complete ${ms(r.render.wholeDom.median)}; double-rAF ${ms(r.render.wholeNextFrame.median)})`,
    `render, post → first view painted (${r.folded} folds)  ${mp(r.render.firstView)}`,
    `baseline: ${r.elements} plain <div> rows, innerHTML   ${mp(r.render.baseline)}  (double-rAF ${ms(r.render.baselineNextFrame.median)})`,
    `ratio                                          whole board ${ratio(r.render.whole, r.render.baseline)}, first view ${ratio(r.render.firstView, r.render.baseline)}`,
    `unfolded board: ${r.dom.nodes} element nodes in the document; the baseline's rows: ${r.dom.baselineNodes}`,
    `seat write (one finding changed) → paint       ${mp(r.write.board)}  (DOM ${ms(r.write.boardDom.median)})`,
    `baseline: posted text into one plain div       ${mp(r.write.baseline)}  (ratio ${ratio(r.write.board, r.write.baseline)})`,
    `jump to the last finding → painted             ${mp(r.scroll.toEnd)}  (ratio to the click baseline ${ratio(r.scroll.toEnd, r.lensSwitch.baseline)})`,
    `jump back to the first finding → painted       ${mp(r.scroll.toStart)}  (ratio to the click baseline ${ratio(r.scroll.toStart, r.lensSwitch.baseline)})`,
    `lens switch click → Sequence board painted     ${mp(r.lensSwitch.toSequence)}  (ratio ${ratio(r.lensSwitch.toSequence, r.lensSwitch.baseline)})`,
    `lens switch click → Flagged board painted      ${mp(r.lensSwitch.toFlagged)}  (ratio ${ratio(r.lensSwitch.toFlagged, r.lensSwitch.baseline)})`,
    `baseline: click that sets one plain div's text ${mp(r.lensSwitch.baseline)}`,
  ];
  return lines.join('\n');
}
