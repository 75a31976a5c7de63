// End-to-end level: the packaged Rennet .vsix in a real VS Code (code-server) driven through a real
// browser (Debian chromium via playwright-core), against a real git repository. Then the
// integration suites (test/integration) in their own code-server.
//
//   npm run test:e2e                 everything (install, build, package, e2e, integration)
//   RENNET_SKIP_BUILD=1 npm run test:e2e     reuse dist/ as it is
//   RENNET_E2E_ONLY=1 npm run test:e2e       skip the integration suites
//   RENNET_E2E_SCENARIOS=reading npm run test:e2e   only the named scenarios (comma-separated:
//                                            capture, reading, hostile, hostile-render, forge, rounds, integration; default all)
//
// Scenarios: capture (below: the patchset board against git), reading (reading.mjs: the lens
// boards drafted against scripted model servers, citations, gutter marks, comments), hostile
// (hostile.mjs: names, contents and model text that try to run commands, scripts or requests),
// hostile-render (hostileRender.mjs: the hostile-board corpus, a 1 MiB string and 500-deep nesting
// rendered in the real board webview with CSP, side-effect and script probes; responsiveness timed),
// forge (forge.mjs: Review Pull Request, asks, the Hand off view, the preview and Post against the
// fake forge), rounds (rounds.mjs: a branch review's asks dispatched as one round to the scripted
// worker, the report verified against the measured diff, the successor made the review's), then the
// integration suites.
// Screenshots: test/e2e/artifacts/*.png (full page, one per step; FAIL-*.png on failures).
import fs from 'node:fs';
import path from 'node:path';
import * as rig from './rig.mjs';
import { expectedDiff, git, makeFixtureRepo } from './fixture.mjs';
import { runIntegration } from '../integration/run.mjs';
import { runForge } from './forge.mjs';
import { runHostile } from './hostile.mjs';
import { runHostileRender } from './hostileRender.mjs';
import { runReading } from './reading.mjs';
import { runRounds } from './rounds.mjs';

const { expect } = rig;
const PANEL_TIMEOUT = 90_000;
const SCENARIOS = ['capture', 'reading', 'hostile', 'hostile-render', 'forge', 'rounds', 'integration'];
const scenarios = new Set(
  process.env.RENNET_E2E_SCENARIOS
    ? process.env.RENNET_E2E_SCENARIOS.split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : SCENARIOS,
);
if (process.env.RENNET_E2E_ONLY === '1') scenarios.delete('integration');
for (const s of scenarios) if (!SCENARIOS.includes(s)) throw new Error(`RENNET_E2E_SCENARIOS names "${s}"; the scenarios are ${SCENARIOS.join(', ')}`);

fs.rmSync(rig.ARTIFACTS, { recursive: true, force: true });
fs.mkdirSync(rig.ARTIFACTS, { recursive: true });

let page = null;
let cs = null;
let shot = 0;
const consoleErrors = [];

async function screenshot(name) {
  if (!page) return null;
  const file = path.join(rig.ARTIFACTS, `${String(++shot).padStart(2, '0')}-${name}.png`);
  await page.screenshot({ path: file, fullPage: true }).catch((e) => rig.log(`screenshot ${name}: ${e.message}`));
  return file;
}

const runner = rig.testRunner({
  onFailure: async (name) => {
    await screenshot(`FAIL-${name.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}`);
  },
});

// ---------------------------------------------------------------------------------------------
// Workbench helpers specific to Rennet's board.

/** Editor tabs whose label starts with "Rennet ·". */
function rennetTabs() {
  return page.locator('.tabs-container .tab').filter({ has: page.locator('.label-name', { hasText: /^Rennet · / }) });
}

/** The visible board webview's inner document (outer iframe.webview → inner iframe#active-frame). */
function board() {
  return page.locator('iframe.webview').filter({ visible: true }).first().contentFrame().locator('iframe#active-frame').contentFrame();
}

async function waitForBoard(title) {
  const tab = rennetTabs().filter({ has: page.locator('.label-name', { hasText: title }) });
  await tab
    .first()
    .waitFor({ state: 'visible', timeout: PANEL_TIMEOUT })
    .catch(async () => {
      const tabs = await page
        .locator('.tabs-container .tab .label-name')
        .allInnerTexts()
        .catch(() => []);
      const notes = await notificationTexts();
      throw new Error(`no editor tab titled "${title}" within ${PANEL_TIMEOUT / 1000} s (tabs: ${JSON.stringify(tabs)}; notifications: ${JSON.stringify(notes)})`);
    });
  const header = board().locator('[data-testid="patchset-header"]');
  await header.waitFor({ state: 'visible', timeout: PANEL_TIMEOUT }).catch(async () => {
    const body = await board()
      .locator('body')
      .innerText({ timeout: 2_000 })
      .catch(() => '(webview not reachable)');
    const notes = await notificationTexts();
    throw new Error(
      `panel "${title}" is open but shows no [data-testid="patchset-header"] within ${PANEL_TIMEOUT / 1000} s; ` +
        `webview text: ${JSON.stringify(body.slice(0, 600))}; notifications: ${JSON.stringify(notes)}`,
    );
  });
  // Rows render from the same snapshot as the header; give them a moment to appear.
  await board()
    .locator('[data-testid="file-row"]')
    .first()
    .waitFor({ state: 'visible', timeout: 15_000 })
    .catch(() => {});
}

async function notificationTexts() {
  return page
    .locator('.notifications-toasts .notification-toast, .notification-list-item-message')
    .allInnerTexts()
    .catch(() => []);
}

/** What the board shows, read from its DOM (the webview's data-testid contract). */
async function readBoard() {
  const b = board();
  const rows = await b.locator('[data-testid="file-row"]').evaluateAll((els) =>
    els.map((el) => {
      const q = (id) => el.querySelector(`[data-testid="${id}"]`);
      const txt = (node) => (node ? node.textContent.replace(/\s+/g, ' ').trim() : null);
      return {
        path: el.getAttribute('data-path'),
        text: txt(el),
        status: txt(q('file-status')),
        renamedFrom: txt(q('renamed-from')),
        badges: [...el.querySelectorAll('[data-testid="file-badge"]')].map((n) => ({ kind: n.getAttribute('data-kind'), text: txt(n) })),
        additions: txt(q('file-additions')),
        deletions: txt(q('file-deletions')),
        hunks: txt(q('file-hunks')),
      };
    }),
  );
  const header = await b.locator('[data-testid="patchset-header"]').evaluate((h) => {
    const txt = (node) => (node ? node.textContent.replace(/\s+/g, ' ').trim() : null);
    const id = (tid) => {
      const n = h.querySelector(`[data-testid="${tid}"]`);
      return n ? { text: txt(n), full: n.getAttribute('data-full-id'), title: n.getAttribute('title') } : null;
    };
    const totals = {};
    for (const n of h.querySelectorAll('[data-testid="totals"] [data-total]')) totals[n.getAttribute('data-total')] = txt(n);
    return {
      text: txt(h),
      sessionId: h.getAttribute('data-session-id'),
      base: id('base-id'),
      head: id('head-id'),
      totalsText: txt(h.querySelector('[data-testid="totals"]')),
      totals,
    };
  });
  return { ...header, rows };
}

/** The full ids, as the header shows them once "Full commit ids" is opened. */
async function readFullIds() {
  const b = board();
  const details = b.locator('[data-testid="capture-details"]');
  expect((await details.count()) === 1, 'the header has no [data-testid="capture-details"] with the full commit ids');
  if ((await details.getAttribute('open')) === null) await details.locator('summary').click();
  const base = b.locator('[data-testid="base-id-full"]');
  const head = b.locator('[data-testid="head-id-full"]');
  await base.waitFor({ state: 'visible', timeout: 5_000 });
  return { base: (await base.innerText()).trim(), head: (await head.innerText()).trim() };
}

const showRow = (r) => JSON.stringify(r.text);

/** Every file git names is a row with the right status, badges and counts; no row is extra. */
function checkRows(shown, expected, label) {
  const problems = [];
  const byPath = new Map(shown.rows.map((r) => [r.path, r]));
  for (const f of expected.files) {
    const row = byPath.get(f.path);
    if (!row) {
      problems.push(`missing row for ${JSON.stringify(f.path)} (${f.status})`);
      continue;
    }
    const p = JSON.stringify(f.path);
    if (row.status !== f.status) problems.push(`${p}: status badge says ${JSON.stringify(row.status)}, git says "${f.status}"`);
    const kinds = row.badges.map((b) => b.kind);
    const binary = row.badges.find((b) => b.kind === 'binary');
    if (f.binary && !binary) problems.push(`${p}: git says binary, no "binary" badge: ${showRow(row)}`);
    if (!f.binary && binary) problems.push(`${p}: not binary, but has a "binary" badge: ${showRow(row)}`);
    const mode = row.badges.find((b) => b.kind === 'mode');
    if (f.modeChanged) {
      if (!mode) problems.push(`${p}: git says mode ${f.oldMode}→${f.newMode}, no mode badge: ${showRow(row)}`);
      else if (!(mode.text.includes(f.oldMode) && mode.text.includes(f.newMode))) problems.push(`${p}: mode badge ${JSON.stringify(mode.text)} does not name ${f.oldMode}→${f.newMode}`);
    } else if (mode) problems.push(`${p}: no mode change in git, but a mode badge ${JSON.stringify(mode.text)}`);
    const submodule = row.badges.find((b) => b.kind === 'submodule');
    if (f.submodule !== Boolean(submodule)) problems.push(`${p}: git says submodule=${f.submodule}, badge ${submodule ? 'present' : 'absent'}: ${showRow(row)}`);
    const truncated = row.badges.find((b) => b.kind === 'truncated');
    if (f.truncated !== Boolean(truncated)) problems.push(`${p}: over the capture limit=${f.truncated}, truncated badge ${truncated ? 'present' : 'absent'}: ${showRow(row)}`);
    if (truncated && !/1024 KiB/.test(truncated.text)) problems.push(`${p}: truncated badge ${JSON.stringify(truncated.text)} does not state the 1024 KiB limit`);
    for (const k of kinds) if (!['binary', 'mode', 'submodule', 'truncated'].includes(k)) problems.push(`${p}: unexpected "${k}" badge: ${showRow(row)}`);
    if (f.oldPath) {
      if (!row.renamedFrom || !row.renamedFrom.includes(f.oldPath)) problems.push(`${p}: should say renamed from ${JSON.stringify(f.oldPath)}: ${showRow(row)}`);
    } else if (row.renamedFrom) problems.push(`${p}: not a rename, but says ${JSON.stringify(row.renamedFrom)}`);
    const wantAdd = f.additions === null ? '—' : `+${f.additions}`;
    const wantDel = f.deletions === null ? '—' : `\u2212${f.deletions}`;
    if (row.additions !== wantAdd) problems.push(`${p}: additions ${JSON.stringify(row.additions)}, git --numstat says ${JSON.stringify(wantAdd)}`);
    if (row.deletions !== wantDel) problems.push(`${p}: deletions ${JSON.stringify(row.deletions)}, git --numstat says ${JSON.stringify(wantDel)}`);
    if (row.hunks !== String(f.hunks)) problems.push(`${p}: ${row.hunks} hunks shown, git diff -U3 has ${f.hunks}`);
  }
  const expectedPaths = new Set(expected.files.map((f) => f.path));
  for (const r of shown.rows) if (!expectedPaths.has(r.path)) problems.push(`unexpected row ${JSON.stringify(r.path)}: ${showRow(r)}`);
  if (shown.rows.length !== expected.files.length) problems.push(`${shown.rows.length} rows shown, git names ${expected.files.length} files`);
  expect(problems.length === 0, `${label}: ${problems.length} mismatch(es) with git:\n    ${problems.join('\n    ')}`);
}

function checkTotals(shown, expected, label) {
  const t = shown.totals;
  const want = {
    files: `${expected.totals.files} file${expected.totals.files === 1 ? '' : 's'}`,
    additions: `+${expected.totals.additions}`,
    deletions: `\u2212${expected.totals.deletions}`,
    hunks: `${expected.totals.hunks} hunk${expected.totals.hunks === 1 ? '' : 's'}`,
  };
  if (expected.totals.binary) want.binary = `${expected.totals.binary} binary`;
  if (expected.totals.submodules) want.submodules = `${expected.totals.submodules} submodule${expected.totals.submodules === 1 ? '' : 's'}`;
  if (expected.totals.truncated) want.truncated = `${expected.totals.truncated} truncated`;
  if (expected.totals.uncounted) want.uncounted = `${expected.totals.uncounted} uncounted`;
  const problems = [];
  for (const [k, v] of Object.entries(want)) if (t[k] !== v) problems.push(`${k}: shows ${JSON.stringify(t[k] ?? null)}, git says ${JSON.stringify(v)}`);
  expect(problems.length === 0, `${label}: totals ${JSON.stringify(shown.totalsText)} disagree with git diff --numstat: ${problems.join('; ')}`);
}

/** The visible short ids are prefixes of git's ids; the header carries the full ids. */
function checkIds(shown, full, expected, label) {
  const problems = [];
  for (const side of ['base', 'head']) {
    const want = expected[side];
    const got = shown[side];
    const what = side === 'base' ? 'the merge-base (git merge-base main HEAD)' : 'git rev-parse of the head';
    if (!got) {
      problems.push(`no [data-testid="${side}-id"] in the header`);
      continue;
    }
    if (want) {
      if (got.full !== want) problems.push(`${side}-id data-full-id is ${JSON.stringify(got.full)}, expected ${what} ${want}`);
      if (!(got.text.length >= 7 && want.startsWith(got.text))) problems.push(`${side}-id shows ${JSON.stringify(got.text)}, not a prefix of ${want}`);
      if (full[side] !== want) problems.push(`full ${side} id shows ${JSON.stringify(full[side])}, expected ${what} ${want}`);
    } else {
      if (!/^[0-9a-f]{40}$/.test(full[side] ?? '')) problems.push(`full ${side} id shows ${JSON.stringify(full[side])}, expected a full commit id`);
      if (got.full !== full[side]) problems.push(`${side}-id data-full-id ${got.full} differs from the full id shown ${full[side]}`);
    }
  }
  expect(problems.length === 0, `${label}: ${problems.length} mismatch(es) with git:\n    ${problems.join('\n    ')}`);
}

async function dumpDiagnostics() {
  if (!cs) return;
  console.log(`\n--- code-server output (last 100 lines) ---\n${cs.tail(100)}`);
  const rennetLogs = cs.logsMatching(/^(\d+-)?Rennet( Host)?\.log$/i);
  if (!rennetLogs.length) console.log('--- Rennet output channel: no log file found under the user-data logs ---');
  for (const f of rennetLogs) {
    console.log(`--- ${path.relative(cs.userData, f)} (last 100 lines) ---\n${fs.readFileSync(f, 'utf8').split('\n').slice(-100).join('\n')}`);
  }
  const exthost = cs.logsMatching(/^remoteexthost\.log$/);
  for (const f of exthost) {
    const lines = fs
      .readFileSync(f, 'utf8')
      .split('\n')
      .filter((l) => /rennet|error/i.test(l))
      .slice(-40);
    if (lines.length) console.log(`--- ${path.relative(cs.userData, f)} (Rennet/error lines) ---\n${lines.join('\n')}`);
  }
  if (consoleErrors.length) console.log(`--- browser console errors (last 30) ---\n${consoleErrors.slice(-30).join('\n')}`);
}

// ---------------------------------------------------------------------------------------------

/** The capture scenarios: Review Branch / Working Tree boards against git's own answer. */
async function runCapture({ paths, repo, branchExpect, vsix, browser }) {
  cs = await rig.startCodeServer({ paths, name: 'e2e', vsixes: [vsix] });
  page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(`[${m.location()?.url?.split('/').pop() ?? ''}] ${m.text()}`);
  });
  page.on('pageerror', (e) => consoleErrors.push(`[pageerror] ${e.message}`));

  await runner.test('workbench opens the fixture repository', async () => {
    await rig.openWorkbench(page, cs, repo);
    await page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'src' }).first().waitFor({ timeout: 30_000 });
    await screenshot('workbench');
  });

  await runner.test('Rennet: Review Branch asks for the branch (current first), then the base (default first)', async () => {
    await rig.runCommand(page, 'Rennet: Review Branch');
    const branches = await rig.waitForQuickPick(page, 'Branch to review');
    await screenshot('pick-branch');
    expect(branches[0] === 'feature', `the branch QuickPick should list the current branch "feature" first; it lists ${JSON.stringify(branches)}`);
    expect(branches.includes('main'), `the branch QuickPick should offer "main"; it lists ${JSON.stringify(branches)}`);
    await rig.pickQuickPick(page, 'Branch to review', 'feature');
    const bases = await rig.waitForQuickPick(page, 'Base to compare with');
    await screenshot('pick-base');
    expect(bases[0] === 'main', `the base QuickPick should list the default base "main" first; it lists ${JSON.stringify(bases)}`);
    await rig.pickQuickPick(page, 'Base to compare with', 'main');
    await rig.sleep(500);
    await screenshot('capturing');
  });

  let shown = null;
  await runner.test('the board opens as "Rennet · feature vs main" and shows the patchset', async () => {
    await waitForBoard('Rennet · feature vs main');
    await rig.sleep(500);
    shown = await readBoard();
    await screenshot('board-branch');
    rig.log(`board header: ${shown.text}`);
    rig.log(`board rows: ${shown.rows.map((r) => r.text).join(' | ')}`);
  });

  await runner.test('the header shows the merge-base and head ids git gives', async () => {
    expect(shown, 'the board did not open (see the previous test)');
    const full = await readFullIds();
    await screenshot('board-full-ids');
    checkIds(shown, full, branchExpect, 'branch board');
  });

  await runner.test('every changed file is a row with its status badge and +/- counts', async () => {
    expect(shown, 'the board did not open (see the previous test)');
    checkRows(shown, branchExpect, 'branch board');
  });

  await runner.test('the totals match git diff --numstat', async () => {
    expect(shown, 'the board did not open (see the previous test)');
    checkTotals(shown, branchExpect, 'branch board');
  });

  await runner.test('running Review Branch again reveals the same panel (one Rennet tab)', async () => {
    // Put another editor in front of the panel so "reveal" has something to do.
    await rig.quickOpen(page, 'README.md');
    await page.locator('.tabs-container .tab.active', { hasText: 'README.md' }).waitFor({ timeout: 15_000 });
    await screenshot('readme-in-front');
    await rig.runCommand(page, 'Rennet: Review Branch');
    await rig.pickQuickPick(page, 'Branch to review', 'feature');
    await rig.pickQuickPick(page, 'Base to compare with', 'main');
    await waitForBoard('Rennet · feature vs main');
    await page.locator('.tabs-container .tab.active', { hasText: 'Rennet · feature vs main' }).waitFor({ timeout: 15_000 });
    await rig.sleep(1_000);
    const tabs = await rennetTabs().locator('.label-name').allInnerTexts();
    await screenshot('board-again');
    expect(tabs.length === 1, `expected exactly one Rennet panel tab, found ${tabs.length}: ${JSON.stringify(tabs)}`);
    const again = await readBoard();
    expect(again.sessionId && again.sessionId === shown?.sessionId, `the panel shows session ${again.sessionId}, the first run showed ${shown?.sessionId}`);
    checkRows(again, branchExpect, 'board after the second run');
  });

  await runner.test('Developer: Reload Window restores the panel with the same rows', async () => {
    await page.evaluate(() => {
      window.__rennetBeforeReload = true;
    });
    await rig.runCommand(page, 'Developer: Reload Window');
    await page.waitForFunction(() => !window.__rennetBeforeReload, null, { timeout: 60_000 });
    await rig.waitForWorkbench(page);
    await waitForBoard('Rennet · feature vs main');
    await rig.sleep(500);
    const restored = await readBoard();
    await screenshot('board-after-reload');
    const tabs = await rennetTabs().locator('.label-name').allInnerTexts();
    expect(tabs.length === 1, `after reload expected exactly one Rennet panel tab, found ${tabs.length}: ${JSON.stringify(tabs)}`);
    expect(restored.sessionId === shown?.sessionId, `the restored panel shows session ${restored.sessionId}, before the reload it was ${shown?.sessionId}`);
    checkIds(restored, await readFullIds(), branchExpect, 'board after reload');
    checkRows(restored, branchExpect, 'board after reload');
    checkTotals(restored, branchExpect, 'board after reload');
  });

  await runner.test('Rennet: Review Working Tree lists a modified tracked file and an untracked one', async () => {
    fs.appendFileSync(path.join(repo, 'src/app.js'), 'uncommitted line 1\nuncommitted line 2\n');
    fs.writeFileSync(path.join(repo, 'untracked file.txt'), 'not yet added\nsecond line\nthird line\n');
    const status = git(repo, ['status', '--porcelain', '-z']).split('\0');
    expect(status.includes(' M src/app.js') && status.includes('?? untracked file.txt'), `fixture: unexpected git status ${JSON.stringify(status)}`);
    const wtExpect = expectedDiff(repo, { base: 'main', head: null, untracked: ['untracked file.txt'] });
    await rig.runCommand(page, 'Rennet: Review Working Tree');
    const bases = await rig.waitForQuickPick(page, 'Base to compare with');
    await screenshot('pick-base-working-tree');
    expect(bases[0] === 'main', `the base QuickPick should list the default base "main" first; it lists ${JSON.stringify(bases)}`);
    await rig.pickQuickPick(page, 'Base to compare with', 'main');
    await waitForBoard('Rennet · working tree vs main');
    await rig.sleep(500);
    const wt = await readBoard();
    await screenshot('board-working-tree');
    rig.log(`working-tree rows: ${wt.rows.map((r) => r.text).join(' | ')}`);
    const app = wt.rows.find((r) => r.path === 'src/app.js');
    const untracked = wt.rows.find((r) => r.path === 'untracked file.txt');
    expect(app && untracked, `the working-tree board should list src/app.js and "untracked file.txt"; rows: ${JSON.stringify(wt.rows.map((r) => r.path))}`);
    checkRows(wt, wtExpect, 'working-tree board');
    checkTotals(wt, wtExpect, 'working-tree board');
    const full = await readFullIds();
    await screenshot('board-working-tree-full-ids');
    checkIds(wt, full, { base: wtExpect.base, head: null }, 'working-tree board');
    expect(full.head !== wtExpect.head, `the working-tree head ${full.head} is HEAD itself, not a snapshot of the working tree`);
    const tabs = await rennetTabs().locator('.label-name').allInnerTexts();
    expect(tabs.length === 2, `expected the branch panel and the working-tree panel, found tabs ${JSON.stringify(tabs)}`);
  });

  if (runner.results.some((r) => !r.ok)) await dumpDiagnostics();
  await page.close().catch(() => {});
  page = null;
  await cs.stop();
}

async function main() {
  const paths = rig.installCodeServer();
  const vsix = rig.buildAndPackageRennet();
  const work = rig.mkTmp('rennet-e2e-');
  const repo = makeFixtureRepo(path.join(work, 'fixture repo'));
  rig.log(`fixture repository: ${repo}`);
  const branchExpect = expectedDiff(repo, { base: 'main', head: 'feature' });

  const browser = await rig.launchBrowser(paths);
  if (scenarios.has('capture')) await runCapture({ paths, repo, branchExpect, vsix, browser });
  if (scenarios.has('reading')) await runReading({ paths, vsix, runner, browser });
  if (scenarios.has('hostile')) await runHostile({ paths, vsix, runner, browser });
  if (scenarios.has('hostile-render')) await runHostileRender({ paths, vsix, runner, browser });
  if (scenarios.has('forge')) await runForge({ paths, vsix, runner, browser });
  if (scenarios.has('rounds')) await runRounds({ paths, vsix, runner, browser });

  if (scenarios.has('integration')) {
    await runIntegration({ paths, rennetVsix: vsix, runner, browser });
  }
}

let code = 1;
const t0 = Date.now();
try {
  await main();
  code = runner.summary() ? 1 : 0;
} catch (e) {
  console.error(`[e2e] aborted: ${e?.stack ?? e}`);
  await screenshot('FAIL-aborted');
  await dumpDiagnostics();
  runner.results.push({ name: 'setup', ok: false, error: e });
  runner.summary();
} finally {
  rig.log(`total ${((Date.now() - t0) / 1000).toFixed(0)} s; screenshots in ${path.relative(rig.ROOT, rig.ARTIFACTS)}/`);
  await rig.cleanup({ keepTmp: code !== 0 });
}
process.exit(code);
