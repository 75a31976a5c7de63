// The board and the workbench as the end-to-end scenarios that draft lens boards see them
// (reading.mjs, hostile.mjs, forge.mjs): named tests with screenshots, the board webview, its lens
// rail, the editor beside it, the Hand off view and the Source Control badge, what an attack would
// leave behind (a beacon, terminals, scripts run in a frame), and what to print after a failure. Every helper takes the scenario's
// Playwright `page` (or an editor locator) and whatever else differs between the scenarios.
import fs from 'node:fs';
import http from 'node:http';
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
      const body = await board(page)
        .locator('body')
        .innerText({ timeout: 2_000 })
        .catch(() => '(webview not reachable)');
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
        const lines = fs
          .readFileSync(f, 'utf8')
          .split('\n')
          .filter((l) => /rennet|error/i.test(l))
          .slice(-40);
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
 * Puts the cursor alone on `line` of `editor`: a code card opens its file with the cited range
 * selected, and that selection may be applied after the tab shows (after a first click, on a busy
 * machine); clicks until the editor shows no selected text, so a comment anchors on the one line.
 */
export async function collapseSelectionOnLine(page, editor, line) {
  const tops = await visibleLineTops(editor);
  rig.expect(line in tops, `line ${line} is not visible in the editor (visible: ${Object.keys(tops).join(',')})`);
  const lineBox = await editor.locator('.view-lines .view-line').evaluateAll((els, top) => {
    const el = els.find((e) => Math.abs(parseFloat(e.style.top) - top) < 2);
    const r = el?.getBoundingClientRect();
    // Past the end of the text (its start may hold a code-action light bulb).
    return r ? { x: r.x + Math.min(300, r.width - 10), y: r.y + r.height / 2 } : null;
  }, tops[line]);
  rig.expect(lineBox, `line ${line} has no rendered text to click`);
  let selected = -1;
  for (const until = Date.now() + 10_000; selected !== 0 && Date.now() < until;) {
    await page.mouse.click(lineBox.x, lineBox.y);
    await rig.sleep(300);
    selected = await editor.locator('.view-overlays .selected-text').count();
  }
  rig.expect(selected === 0, `the editor still shows the card's selection after clicking line ${line}`);
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
    // VS Code asks the extension for the editor's commenting ranges after it opens: on a busy
    // machine the glyphs come a few seconds later.
    let glyph = await glyphAt();
    for (const until = Date.now() + 10_000; !glyph && Date.now() < until; glyph = await glyphAt()) await rig.sleep(200);
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
    const opened = await widget.waitFor({ state: 'visible', timeout: 5_000 }).then(
      () => true,
      () => false,
    );
    if (opened) break;
    attempts.push(`attempt ${attempt}: glyph class ${JSON.stringify(hovered?.cls)}, element under the pointer ${JSON.stringify(under)}`);
    rig.log(`${label}: clicking line ${line}'s comment glyph opened no widget (${attempts.at(-1)}); clicking again`);
  }
  if (attempts.length > 0 && onRetried) await onRetried();
  rig.expect(attempts.length < 3, `clicking line ${line}'s comment glyph opened no comment widget, three times:\n    ${attempts.join('\n    ')}`);
  return widget;
}

/**
 * The Hand off view's pane in Source Control: its header (title, description), its rows (depth,
 * label, description, aria label, text, codicons drawn, anchors), every codicon drawn in its body,
 * every anchor in the pane (`links`: a row's label is an anchor too) and the anchors with a target
 * (`targets`: href or data-href, i.e. links). `{ found: false, panes }` when no pane is titled "Hand off".
 */
export async function readHandOff(page) {
  return page
    .locator('body')
    .evaluate(() => {
      const txt = (n) => (n ? n.textContent.replace(/\s+/g, ' ').trim() : null);
      const iconsIn = (root) => [...root.querySelectorAll('.codicon')].map((i) => [...i.classList].find((c) => c.startsWith('codicon-') && c !== 'codicon') ?? null).filter(Boolean);
      const panes = [...document.querySelectorAll('.part.sidebar .pane')];
      const pane = panes.find((p) => /^Hand off/i.test(txt(p.querySelector('.pane-header .title')) ?? ''));
      if (!pane) return { found: false, panes: panes.map((p) => txt(p.querySelector('.pane-header .title'))) };
      const rows = [...pane.querySelectorAll('.monaco-list-row')].map((r) => ({
        level: Number(r.getAttribute('aria-level') ?? '0'),
        label: txt(r.querySelector('.label-name')),
        description: txt(r.querySelector('.label-description')),
        aria: r.getAttribute('aria-label'),
        text: txt(r),
        icons: iconsIn(r),
        links: [...r.querySelectorAll('a')].map((a) => a.getAttribute('href')),
      }));
      // A tree row's label is an <a> without a target; a link has one.
      const target = (a) => a.getAttribute('href') ?? a.getAttribute('data-href');
      return {
        found: true,
        expanded: pane.querySelector('.pane-header')?.getAttribute('aria-expanded') ?? null,
        title: txt(pane.querySelector('.pane-header .title')),
        description: txt(pane.querySelector('.pane-header .description')),
        message: txt(pane.querySelector('.message, .tree-explorer-viewlet-tree-view-message')),
        rows,
        bodyIcons: iconsIn(pane.querySelector('.pane-body') ?? pane),
        links: [...pane.querySelectorAll('a')].map((a) => ({ href: a.getAttribute('href'), text: txt(a) })),
        targets: [...pane.querySelectorAll('a')].filter((a) => target(a) !== null).map((a) => ({ href: target(a), text: txt(a) })),
      };
    })
    .catch((e) => ({ found: false, error: e.message }));
}

/** The badge on the Source Control activity bar entry (where a view's badge shows). */
export async function scmBadge(page) {
  return page
    .locator('body')
    .evaluate(() => {
      const items = [...document.querySelectorAll('.activitybar .action-item, .composite-bar .action-item')];
      const scm = items.find((i) => /Source Control/i.test(i.querySelector('.action-label')?.getAttribute('aria-label') ?? i.getAttribute('aria-label') ?? ''));
      if (!scm) return { found: false };
      const badge = scm.querySelector('.badge .badge-content');
      const visible = badge ? badge.offsetParent !== null && getComputedStyle(scm.querySelector('.badge')).display !== 'none' : false;
      return { found: true, text: badge?.textContent?.trim() ?? null, visible, label: scm.querySelector('.action-label')?.getAttribute('aria-label') ?? null };
    })
    .catch((e) => ({ found: false, error: e.message }));
}

/**
 * Brings the Hand off view up in Source Control, expanded, with the Changes pane (git is off in
 * these profiles) folded out of its way. Focus leaves any webview first (the palette opens on the
 * workbench).
 */
export async function focusHandOff(page) {
  await page.locator('#workbench\\.parts\\.statusbar').click({ position: { x: 2, y: 2 }, force: true });
  await rig.runCommand(page, 'Source Control: Focus on Hand off View');
  const header = page.locator('.part.sidebar .pane-header', { hasText: /Hand off/i }).first();
  await header.waitFor({ state: 'visible', timeout: 15_000 }).catch(async () => {
    throw new Error(`the Source Control view shows no "Hand off" pane: ${JSON.stringify(await readHandOff(page))}`);
  });
  if ((await header.getAttribute('aria-expanded')) === 'false') await header.click();
  const changes = page.locator('.part.sidebar .pane-header', { hasText: /^\s*Changes/ }).first();
  if ((await changes.count()) > 0 && (await changes.getAttribute('aria-expanded')) === 'true') await changes.click();
}

/**
 * What an attack reaches for, counted: a loopback HTTP server answering 204 to everything, each
 * request kept with the phase `state.phase` named when it arrived. Closed by the rig's cleanup.
 */
export async function startBeacon(state) {
  const hits = [];
  const server = http.createServer((req, res) => {
    const h = req.headers;
    hits.push({
      method: req.method,
      url: req.url,
      phase: state.phase,
      referer: h.referer ?? null,
      dest: h['sec-fetch-dest'] ?? null,
      mode: h['sec-fetch-mode'] ?? null,
      at: new Date().toISOString().slice(11, 23),
    });
    res.writeHead(204, { 'access-control-allow-origin': '*' });
    res.end();
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = server.address().port;
  rig.onCleanup(
    () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return { port, hits };
}

/** Terminals the workbench draws: xterm instances, terminal wrappers, the terminal tabs list, terminal editor tabs (-1 each when the page cannot be read). */
export async function terminalsDrawn(page) {
  if (!page) return { xterms: 0, wrappers: 0, tabs: 0, editorTabs: 0 };
  return page
    .evaluate(() => ({
      xterms: document.querySelectorAll('.xterm').length,
      wrappers: document.querySelectorAll('.terminal-wrapper').length,
      tabs: document.querySelectorAll('.terminal-tabs-entry').length,
      editorTabs: [...document.querySelectorAll('.tabs-container .tab')].filter((t) => /terminal/i.test(t.className)).length,
    }))
    .catch(() => ({ xterms: -1, wrappers: -1, tabs: -1, editorTabs: -1 }));
}

/**
 * The processes a terminal runs, seen from the OS: the children of code-server's pty host
 * (VS Code's `--type=ptyHost` process, a descendant of code-server `cs`). Linux /proc; [] elsewhere.
 */
export function ptyChildren(cs) {
  if (!cs || process.platform !== 'linux') return [];
  const procs = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const ppid = Number(stat.slice(close + 2).split(' ')[1]);
      const cmd = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').join(' ').trim();
      procs.push({ pid: Number(d), ppid, comm: stat.slice(stat.indexOf('(') + 1, close), cmd });
    } catch {}
  }
  const under = new Set([cs.pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of procs) {
      if (!under.has(p.pid) && under.has(p.ppid)) {
        under.add(p.pid);
        grew = true;
      }
    }
  }
  const ptyHosts = new Set(procs.filter((p) => under.has(p.pid) && /ptyHost/.test(p.cmd)).map((p) => p.pid));
  return procs.filter((p) => ptyHosts.has(p.ppid)).map((p) => ({ pid: p.pid, comm: p.comm, cmd: p.cmd.slice(0, 80) }));
}

/**
 * Every frame of every page in `pages` (the workbench, its webviews' outer and inner frames, any
 * page opened since) where a payload's script set `rennetPwned`; `main` is the workbench page.
 */
export async function pwnedFrames(pages, main) {
  const out = [];
  for (const p of pages) {
    for (const f of p.frames()) {
      const v = await f.evaluate(() => globalThis.rennetPwned ?? null).catch(() => null);
      if (v !== null && v !== undefined) out.push({ page: p === main ? 'workbench' : 'popup', frame: f.url().slice(0, 140), value: v });
    }
  }
  return out;
}
