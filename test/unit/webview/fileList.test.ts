import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { act } from 'preact/test-utils';
import type { FileSummary } from '../../../protocol';
import { FILE_GAP_MAX_BLOCK, FILE_ROW_HEIGHT_PX, FILE_ROW_OVERSCAN, gapBlocks, navigatedRow, rowWindow, windowPieces } from '../../../webview/fileWindow';
import { file, patchset, snapshot } from './fixtures';
import { all, byTestId, FakeBridge, happyDomPerTest, key, mountApp, one } from './happyDom';

const MANY = 20_000;
const manyFiles = (): FileSummary[] => Array.from({ length: MANY }, (_, i) => file({ path: `pkg${i % 20}/module${String(i).padStart(5, '0')}.ts`, hunkCount: 10 }));

describe('webview/fileWindow (pure)', () => {
  it('renders the rows in view plus the overscan, snapped to steps, within the list', () => {
    assert.deepEqual(rowWindow(0, 0, 800), { start: 0, end: 0 });
    assert.deepEqual(rowWindow(10, 0, 800), { start: 0, end: 10 });
    const top = rowWindow(MANY, 0, 800);
    assert.equal(top.start, 0);
    assert.ok(top.end >= Math.ceil(800 / FILE_ROW_HEIGHT_PX) + FILE_ROW_OVERSCAN && top.end < 100, JSON.stringify(top));
    const middle = rowWindow(MANY, 10_000 * FILE_ROW_HEIGHT_PX, 800);
    assert.ok(middle.start <= 10_000 - FILE_ROW_OVERSCAN && middle.start > 10_000 - 3 * FILE_ROW_OVERSCAN, JSON.stringify(middle));
    assert.ok(middle.end >= 10_000 + 800 / FILE_ROW_HEIGHT_PX + FILE_ROW_OVERSCAN && middle.end - middle.start < 150, JSON.stringify(middle));
    // A scroll of a few pixels keeps the same window (no render).
    assert.deepEqual(rowWindow(MANY, 10_000 * FILE_ROW_HEIGHT_PX + 5, 800), middle);
    assert.deepEqual(rowWindow(MANY, MANY * FILE_ROW_HEIGHT_PX, 800).end, MANY);
    assert.deepEqual(rowWindow(100, -5000, 800), { start: 0, end: FILE_ROW_OVERSCAN }, 'a table below the view renders its first rows');
    assert.deepEqual(rowWindow(100, 1e9, 800), { start: 100, end: 100 }, 'a view past the end renders none');
  });

  it('stands gaps in for the rows not rendered, and renders a kept row outside the window', () => {
    assert.deepEqual(
      windowPieces(5, { start: 0, end: 5 }),
      [0, 1, 2, 3, 4].map((index) => ({ kind: 'row', index })),
    );
    assert.deepEqual(windowPieces(10, { start: 4, end: 6 }, 8), [
      { kind: 'gap', rows: 4, key: 'gap-0' },
      { kind: 'row', index: 4 },
      { kind: 'row', index: 5 },
      { kind: 'gap', rows: 2, key: 'gap-6' },
      { kind: 'row', index: 8 },
      { kind: 'gap', rows: 1, key: 'gap-9' },
    ]);
    assert.deepEqual(windowPieces(10, { start: 4, end: 6 }, 0)[0], { kind: 'row', index: 0 });
    assert.deepEqual(windowPieces(10, { start: 4, end: 6 }, 5).length, 4, 'a kept row inside the window is not drawn twice');
  });

  it('splits a gap into power-of-two blocks that add up to it', () => {
    for (const rows of [0, 1, 2, 3, 37, 19_950, FILE_GAP_MAX_BLOCK, 3 * FILE_GAP_MAX_BLOCK + 5]) {
      const blocks = gapBlocks(rows);
      assert.equal(
        blocks.reduce((a, b) => a + b, 0),
        rows,
        `${rows}`,
      );
      assert.ok(blocks.every((b) => b <= FILE_GAP_MAX_BLOCK && (b & (b - 1)) === 0));
    }
    assert.deepEqual(gapBlocks(37), [32, 4, 1]);
  });

  it('moves with the navigation keys, clamped to the list', () => {
    assert.equal(navigatedRow('ArrowDown', 3, 10, 5), 4);
    assert.equal(navigatedRow('ArrowDown', 9, 10, 5), 9);
    assert.equal(navigatedRow('ArrowUp', 0, 10, 5), 0);
    assert.equal(navigatedRow('PageDown', 3, 10, 5), 8);
    assert.equal(navigatedRow('PageUp', 3, 10, 5), 0);
    assert.equal(navigatedRow('Home', 7, 10, 5), 0);
    assert.equal(navigatedRow('End', 0, 10, 5), 9);
    assert.equal(navigatedRow('a', 0, 10, 5), null);
  });

  it('agrees with styles.css on the row height and has a class for every gap block', () => {
    const css = readFileSync(join(__dirname, '..', '..', '..', 'webview', 'styles.css'), 'utf8');
    assert.match(css, new RegExp(`--rn-file-row-height: ${FILE_ROW_HEIGHT_PX}px;`));
    for (let block = 1; block <= FILE_GAP_MAX_BLOCK; block *= 2) {
      assert.match(css, new RegExp(`\\.rn-gap-${block}\\s*\\{\\s*height: calc\\(var\\(--rn-file-row-height\\) \\* ${block}\\);\\s*\\}`), `.rn-gap-${block}`);
    }
  });
});

describe('webview/App file list at 20,000 files (happy-dom)', function () {
  this.timeout(60_000);
  const { dom } = happyDomPerTest();
  let bridge: FakeBridge;
  const files = manyFiles();

  beforeEach(async () => {
    bridge = new FakeBridge();
    await mountApp(dom.root, bridge);
    await bridge.send({ type: 'rennet/panel/snapshot', snapshot: snapshot({ patchset: patchset({ files, totals: { ...patchset().totals, files: MANY } }) }) });
  });

  const rows = () => all(dom.root, byTestId('file-row'));
  const indexes = () => rows().map((r) => Number(r.getAttribute('data-index')));
  /** Every gap's rows, and checks that its blocks add up to them. */
  const gaps = () =>
    all(dom.root, byTestId('file-gap')).map((gap) => {
      const stated = Number(gap.getAttribute('data-rows'));
      const blocks = all(gap, '.rn-gap').map((b) => Number(/rn-gap-(\d+)/.exec(b.className)?.[1]));
      assert.equal(
        blocks.reduce((a, b) => a + b, 0),
        stated,
      );
      return stated;
    });
  const tbody = () => one(dom.root, `${byTestId('file-list')} tbody`);
  /** The page scrolled so the view's top is `top` pixels below the first row's top. */
  const scrollTo = async (top: number) => {
    const body = tbody();
    body.getBoundingClientRect = () =>
      ({ top: -top, bottom: MANY * FILE_ROW_HEIGHT_PX - top, left: 0, right: 800, width: 800, height: MANY * FILE_ROW_HEIGHT_PX, x: 0, y: -top, toJSON: () => ({}) }) as DOMRect;
    await act(async () => {
      dom.window.dispatchEvent(new dom.window.Event('scroll'));
      // The window follows on the next animation frame.
      await new Promise((resolve) => setTimeout(resolve, 50));
    });
  };
  const buttonOf = (index: number) => one(dom.root, `${byTestId('file-row')}[data-index="${index}"] ${byTestId('open-file')}`);

  it('puts a bounded number of rows in the DOM, gaps standing for the rest', () => {
    const shown = indexes();
    assert.ok(shown.length > 20 && shown.length <= 150, `${shown.length} rows in the DOM`);
    assert.deepEqual(
      shown,
      shown.map((_, i) => i),
      'the first rows, in order',
    );
    assert.equal(rows()[0]?.getAttribute('data-path'), files[0]?.path);
    assert.equal(shown.length + gaps().reduce((a, b) => a + b, 0), MANY);
    assert.equal(one(dom.root, byTestId('file-list')).getAttribute('aria-rowcount'), String(MANY + 1));
    assert.equal(rows()[3]?.getAttribute('aria-rowindex'), '5');
    assert.ok(dom.root.querySelectorAll('*').length < 3000, `${dom.root.querySelectorAll('*').length} elements in the panel`);
  });

  it('shows the rows in view after a scroll, and opens the file of a row reached that way', async () => {
    const viewRows = Math.ceil(dom.window.innerHeight / FILE_ROW_HEIGHT_PX);
    await scrollTo(12_345 * FILE_ROW_HEIGHT_PX + 10);
    const shown = indexes();
    assert.ok(shown.length <= 150, `${shown.length} rows`);
    for (let i = 12_345; i <= 12_345 + viewRows; i++) assert.ok(shown.includes(i), `row ${i} is in view and rendered`);
    assert.ok(!shown.includes(0), 'the first row is gone');
    assert.deepEqual(
      shown,
      shown.map((_, i) => (shown[0] as number) + i),
      'one contiguous run',
    );
    const [above, below] = gaps();
    assert.equal(above, shown[0]);
    assert.equal(shown.length + (above ?? 0) + (below ?? 0), MANY);
    const row = one(dom.root, `${byTestId('file-row')}[data-index="12345"]`);
    assert.equal(row.getAttribute('data-path'), files[12_345]?.path);
    await act(() => buttonOf(12_345).click());
    assert.deepEqual(bridge.posted.at(-1), { type: 'rennet/panel/openFile', path: files[12_345]?.path, side: 'head' });
    await scrollTo(MANY * FILE_ROW_HEIGHT_PX - 700);
    assert.equal(indexes().at(-1), MANY - 1, 'the last row at the end');
  });

  it('moves the focus with the keyboard through rows not yet rendered, and keeps the focused row when it scrolls away', async () => {
    buttonOf(0).focus();
    await key(buttonOf(0), 'ArrowDown');
    assert.equal(dom.document.activeElement, buttonOf(1));
    await key(buttonOf(1), 'End');
    assert.equal(dom.document.activeElement, buttonOf(MANY - 1), 'the last file, rendered for the focus');
    assert.ok(indexes().length <= 151);
    await key(buttonOf(MANY - 1), 'ArrowUp');
    assert.equal(dom.document.activeElement, buttonOf(MANY - 2));
    await key(buttonOf(MANY - 2), 'Home');
    assert.equal(dom.document.activeElement, buttonOf(0));
    await key(buttonOf(0), 'PageDown');
    const paged = Number(dom.document.activeElement?.closest('[data-index]')?.getAttribute('data-index'));
    assert.equal(paged, Math.floor(dom.window.innerHeight / FILE_ROW_HEIGHT_PX) - 1);
    // Scrolled far away, the focused row stays in the DOM and keeps the focus.
    await scrollTo(15_000 * FILE_ROW_HEIGHT_PX);
    assert.ok(indexes().includes(paged) && indexes().includes(15_000));
    assert.equal(dom.document.activeElement, buttonOf(paged));
  });
});
