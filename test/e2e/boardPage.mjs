// The board and the workbench as the end-to-end scenarios that draft lens boards see them
// (reading.mjs, hostile.mjs): named tests with screenshots, the board webview, its lens rail,
// the editor beside it, and what to print after a failure. Every helper takes the scenario's
// Playwright `page` (or an editor locator) and whatever else differs between the scenarios.
import fs from 'node:fs';
import path from 'node:path';
import * as rig from './rig.mjs';

/** The rail's lenses in canonical order. */
export const LENS_ORDER = ['design', 'sequence', 'decisions', 'flagged', 'noise'];
/** The states a lens lane ends in. */
export const TERMINAL_STATES = new Set(['settled', 'absent', 'failed']);
/** How long a generation may take to end. */
export const DRAFT_TIMEOUT = 180_000;

/**
 * A scenario's named tests and full-page screenshots: `screenshot(name)` writes
 * test/e2e/artifacts/<label>-NN-<name>.png (NN counts up per scenario); `test(name, fn)` runs
 * `<label>: <name>` on the runner and leaves a FAIL screenshot when it fails. `page` answers the
 * scenario's current page (null until the workbench opens).
 */
export function scenarioKit({ label, runner, page }) {
  let shot = 0;
  async function screenshot(name) {
    const p = page();
    if (!p) return null;
    const file = path.join(rig.ARTIFACTS, `${label}-${String(++shot).padStart(2, '0')}-${name}.png`);
    await p.screenshot({ path: file, fullPage: true }).catch((e) => rig.log(`screenshot ${name}: ${e.message}`));
    return file;
  }
  async function test(name, fn) {
    const before = runner.results.length;
    await runner.test(`${label}: ${name}`, fn);
    const result = runner.results[before];
    if (result && !result.ok) await screenshot(`FAIL-${name.replace(/[^a-z0-9]+/gi, '-').slice(0, 50)}`);
  }
  return { screenshot, test };
}

/** Keeps the page's console errors and uncaught errors in `into`. */
export function watchConsole(page, into) {
  page.on('console', (m) => {
    if (m.type() === 'error') into.push(`[${m.location()?.url?.split('/').pop() ?? ''}] ${m.text()}`);
  });
  page.on('pageerror', (e) => into.push(`[pageerror] ${e.message}`));
}

/** The visible board webview's inner document. */
export const board = (page) => page.locator('iframe.webview').filter({ visible: true }).first().contentFrame().locator('iframe#active-frame').contentFrame();

/** The rail's lens tabs, in order: lens, state, title, state words, aria-selected. */
export async function readRail(page) {
  return board(page)
    .locator('[data-testid="lens-tab"]')
    .evaluateAll((els) =>
      els.map((e) => ({
        lens: e.getAttribute('data-lens'),
        state: e.getAttribute('data-state'),
        title: e.querySelector('.rn-tab-title')?.textContent?.trim() ?? null,
        words: e.querySelector('[data-testid="lens-tab-state"]')?.textContent?.replace(/\s+/g, ' ').trim() ?? null,
        selected: e.getAttribute('aria-selected'),
      })),
    )
    .catch(() => []);
}

/** The generation the board shows, or null. */
export async function generationId(page) {
  return board(page)
    .locator('[data-testid="generation"]')
    .getAttribute('data-generation-id', { timeout: 2_000 })
    .catch(() => null);
}

/**
 * Waits until the board shows a generation (other than `previous`, when given) whose five lanes
 * are terminal; answers `{ id, rail }`. `what` names the wait in the error, `requestCount` says
 * how many model requests the servers saw so far.
 */
export async function waitForTerminalGeneration(page, { previous = null, what = 'the board', requestCount = () => 0, timeout = DRAFT_TIMEOUT } = {}) {
  const deadline = Date.now() + timeout;
  let rail = [];
  let id = null;
  for (;;) {
    id = await generationId(page);
    rail = await readRail(page);
    if (id && id !== previous && rail.length === 5 && rail.every((t) => TERMINAL_STATES.has(t.state))) return { id, rail };
    if (Date.now() > deadline) {
      const body = await board(page).locator('body').innerText({ timeout: 2_000 }).catch(() => '(webview not reachable)');
      throw new Error(
        `${what}: no terminal generation after ${timeout / 1000} s (generation ${id}, previous ${previous}; rail ${JSON.stringify(rail)}; ` +
          `model requests so far ${requestCount()}; webview text ${JSON.stringify(body.slice(0, 500))})`,
      );
    }
    await rig.sleep(500);
  }
}

/**
 * Selects `lens` on the rail, waits for its board and unfolds every section (Expand all, then any
 * fold toggle still closed); answers the board's locator. With `tolerateFoldFailures` a fold
 * toggle that cannot be clicked is passed over instead of failing the test.
 */
export async function selectLens(page, lens, { tolerateFoldFailures = false } = {}) {
  await board(page).locator(`[data-testid="lens-tab"][data-lens="${lens}"]`).click();
  const shown = board(page).locator(`[data-testid="board"][data-lens="${lens}"]`);
  await shown.waitFor({ state: 'visible', timeout: 15_000 });
  // Top-level sections may be folded: unfold everything so the elements render.
  const expandAll = board(page).locator('[data-testid="expand-all"]');
  if ((await expandAll.count()) > 0 && /^Expand/.test((await expandAll.first().innerText()).trim())) await expandAll.first().click();
  for (const toggle of await board(page).locator('[data-testid="fold-toggle"][aria-expanded="false"]').all()) {
    if (tolerateFoldFailures) await toggle.click().catch(() => {});
    else await toggle.click();
  }
  return shown;
}

/** The visible text editor beside the board (not the editor inside a comment box). */
export const editorOf = (page) => page.locator('.part.editor .editor-instance .monaco-editor:not(.review-widget .monaco-editor)').filter({ visible: true }).last();

/** Line number → the rendered line-number element's top within the editor (visible lines only). */
export async function visibleLineTops(editor) {
  return editor.evaluate((ed) => {
    const tops = {};
    for (const n of ed.querySelectorAll('.margin-view-overlays .line-numbers')) {
      const line = Number(n.textContent.trim());
      const top = n.parentElement?.style.top ?? n.style.top;
      if (line) tops[line] = parseFloat(top);
    }
    return tops;
  });
}

/**
 * After a failure: code-server's last `codeServerLines` lines, the Rennet output channels' last
 * `rennetLogLines`, the extension host's Rennet/error lines (`extHostErrors`), the model requests
 * (`modelRequests`) and the model servers' other stderr, and the last 20 browser console errors;
 * each block headed `--- <label>: … ---`.
 */
export function dumpDiagnostics({ label, cs, models, consoleErrors, codeServerLines, rennetLogLines, extHostErrors = false, modelRequests = false }) {
  if (cs) {
    console.log(`\n--- ${label}: code-server output (last ${codeServerLines} lines) ---\n${cs.tail(codeServerLines)}`);
    for (const f of cs.logsMatching(/^(\d+-)?Rennet( Host)?\.log$/i)) {
      console.log(`--- ${label}: ${path.relative(cs.userData, f)} (last ${rennetLogLines} lines) ---\n${fs.readFileSync(f, 'utf8').split('\n').slice(-rennetLogLines).join('\n')}`);
    }
    if (extHostErrors) {
      for (const f of cs.logsMatching(/^remoteexthost\.log$/)) {
        const lines = fs.readFileSync(f, 'utf8').split('\n').filter((l) => /rennet|error/i.test(l)).slice(-40);
        if (lines.length) console.log(`--- ${label}: ${path.relative(cs.userData, f)} (Rennet/error lines) ---\n${lines.join('\n')}`);
      }
    }
  }
  if (models) {
    if (modelRequests) console.log(`--- ${label}: model requests (${models.requests.length}) ---\n${models.requests.map((r) => JSON.stringify(r)).join('\n')}`);
    if (models.stderr.length) console.log(`--- ${label}: model server stderr ---\n${models.stderr.join('\n')}`);
  }
  if (consoleErrors.length) console.log(`--- ${label}: browser console errors (last 20) ---\n${consoleErrors.slice(-20).join('\n')}`);
}

/**
 * Opens VS Code's comment widget on `line` of `editor` through the line's comment glyph (the
 * commenting range's bar between the line numbers and the text): hovers it until VS Code turns it
 * into a "+" (line-hover), then clicks. VS Code opens the widget only when the element under the
 * pointer at both mouse down and mouse up is the glyph; a gutter re-render between them
 * (decorations being re-applied as a generation lands) swallows the click, as it would a person's,
 * who clicks again: up to three clicks. `onHover` runs after the first hover (a screenshot of the
 * "+"), `onRetried` once when a click had to be repeated. Answers the visible widget's locator.
 */
export async function openCommentWidget(page, editor, line, { label = 'e2e', onHover = null, onRetried = null } = {}) {
  const tops = await visibleLineTops(editor);
  rig.expect(line in tops, `line ${line} is not visible in the editor (visible: ${Object.keys(tops).join(',')})`);
  const glyphAt = async () => {
    const boxes = await editor.locator('.comment-range-glyph').evaluateAll((els) =>
      els.map((e) => {
        const holder = e.style.top ? e : e.parentElement;
        const r = e.getBoundingClientRect();
        return { top: parseFloat(holder?.style.top || 'NaN'), x: r.x + r.width / 2, y: r.y + r.height / 2, cls: e.className };
      }),
    );
    return boxes.find((b) => Math.abs(b.top - tops[line]) < 2) ?? null;
  };
  const widget = page.locator('.review-widget').filter({ visible: true }).last();
  const attempts = [];
  for (let attempt = 1; attempt <= 3; attempt++) {
    const glyph = await glyphAt();
    rig.expect(glyph, `line ${line} has no comment glyph (.comment-range-glyph): no commenting range there? (${await editor.locator('.comment-range-glyph').count()} glyphs in the editor)`);
    await page.mouse.move(glyph.x - 20, glyph.y);
    await page.mouse.move(glyph.x, glyph.y);
    let hovered = null;
    for (let i = 0; i < 20; i++) {
      hovered = await glyphAt();
      if (/line-hover/.test(hovered?.cls ?? '')) break;
      await rig.sleep(150);
    }
    if (attempt === 1 && onHover) await onHover();
    const under = await page.evaluate(([x, y]) => document.elementFromPoint(x, y)?.className ?? null, [hovered?.x ?? glyph.x, hovered?.y ?? glyph.y]);
    await page.mouse.click(hovered?.x ?? glyph.x, hovered?.y ?? glyph.y);
    const opened = await widget.waitFor({ state: 'visible', timeout: 5_000 }).then(() => true, () => false);
    if (opened) break;
    attempts.push(`attempt ${attempt}: glyph class ${JSON.stringify(hovered?.cls)}, element under the pointer ${JSON.stringify(under)}`);
    rig.log(`${label}: clicking line ${line}'s comment glyph opened no widget (${attempts.at(-1)}); clicking again`);
  }
  if (attempts.length > 0 && onRetried) await onRetried();
  rig.expect(attempts.length < 3, `clicking line ${line}'s comment glyph opened no comment widget, three times:\n    ${attempts.join('\n    ')}`);
  return widget;
}
