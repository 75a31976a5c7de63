// End-to-end: one round of the own-branch loop in a real VS Code (code-server + Chromium). A branch
// review (feature vs main, feature checked out: the round SHARES the reviewer's checkout) drafted by
// the scripted model servers (test/servers/e2eReading.ts); a change request staged on a Flagged
// finding and a question staged from the editor gutter; the Hand off view's Changes lane and its
// "Dispatch round 1…" row; the modal, Show Work Order, Dispatch; the scripted worker
// (`rennet.rounds.worker: scripted:<file>`, a machine setting) edits and commits in the workspace; the round report
// seat (the scripted model, routed by `# Rennet: round report`) reads the evidence and hands in a
// classification citing the evidence ids an oracle computed beforehand (the same worker on a copy
// of the repository, measured with host/rounds/checkpoint.ts + evidence.ts); the round returns, the
// change request is consumed, the question stays, the board shows the worker's commit as its head;
// a second dispatch with only the question staged is refused in the host's words.
//
// Its own fixture repository (no submodule: rounds refuse repositories with one), code-server
// profile and browser page. Called from run.mjs; `RENNET_E2E_SCENARIOS=rounds` runs only this.
// Screenshots: test/e2e/artifacts/rounds-NN-*.png.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import * as rig from './rig.mjs';
import { board, dumpDiagnostics, editorOf, openCommentWidget, scenarioKit, selectLens, visibleLineTops, waitForTerminalGeneration, watchConsole } from './boardPage.mjs';
import { diffHunks, git, initRepo, uncitedHunkCount } from './fixture.mjs';
import { harnessSettings, startModelServers } from './modelServers.mjs';

const { expect } = rig;

/** The finding the change request is staged on (the Flagged compiler writes it on the two inserted lines). */
const FINDING_TITLE = 'The inserted lines should name the helper';
const FINDINGS = [{ origin: 'claude', agreement: 'solo', title: FINDING_TITLE }];
/** compileTurn's remedy for every finding (test/unit/pipeline/fixtures.ts): the request's second paragraph. */
const FINDING_REMEDY = 'Update the caller to the new text.';
const QUESTION = 'Why does line five change here?';
const COMMIT_MESSAGE = 'Name the helper as asked';
/** What the scripted worker puts where the two inserted lines were. */
const NAMED = ['app helper totalOf (named)', 'app helper totalOf (returns)'];
const REPORT_NOTE = 'The two inserted lines now name the helper totalOf.';
/** How long the report seat's first answer waits: the round stays in its report phase long enough to be seen. */
const REPORT_DELAY_MS = 2_500;
const ONLY_QUESTIONS = 'Only questions and approvals are staged.';
const NOTHING_STAGED = 'Nothing is staged for the Changes lane';

// ---------------------------------------------------------------------------------------------
// The repository and what each lens cites of it (from git's own hunks).

const lines = (prefix, n) => Array.from({ length: n }, (_, i) => `${prefix} line ${i + 1}`).join('\n') + '\n';

function write(repo, rel, content) {
  const p = path.join(repo, rel);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, content);
}

/**
 * `main`, and `feature` (checked out): src/app.js modified in two hunks (the second inserts two
 * lines), src/new feature.js added, notes.md edited (nobody cites it: Noise); main moves on after
 * the branch point. No submodule: a round refuses a repository with one.
 */
function makeRoundsFixture(dir) {
  initRepo(dir);
  write(dir, 'README.md', '# Rounds\n\nA repository for Rennet round tests.\n');
  write(dir, 'src/app.js', lines('app', 30));
  write(dir, 'notes.md', lines('note', 10));
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-q', '-m', 'initial']);
  git(dir, ['checkout', '-q', '-b', 'feature']);
  const app = lines('app', 30).split('\n');
  app[4] = 'app line 5 (changed)';
  app[9] = 'app line 10 (changed)';
  app[19] = 'app line 20 (changed)';
  app.splice(25, 0, 'app inserted A', 'app inserted B');
  write(dir, 'src/app.js', app.join('\n'));
  write(dir, 'src/new feature.js', lines('feature', 12));
  write(dir, 'notes.md', lines('note', 10).replace('note line 3', 'note line 3, decided'));
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-q', '-m', 'feature work']);
  git(dir, ['checkout', '-q', 'main']);
  write(dir, 'README.md', '# Rounds\n\nA repository for Rennet round tests, moved on.\n');
  git(dir, ['commit', '-q', '-am', 'main moves on']);
  git(dir, ['checkout', '-q', 'feature']);
  return dir;
}

const addedSpan = (hunk) => {
  const adds = hunk.lines.filter((l) => l.kind === 'add').map((l) => l.new);
  return { start: Math.min(...adds), end: Math.max(...adds) };
};

/**
 * The plan test/servers/e2eReading.ts drafts from (the reading scenario's shape): Flagged cites the
 * two inserted lines, where its one finding sits; `roundReport` names the file the report seat hands
 * in (written once the ask is staged and its id known).
 */
function roundsPlan(hunks, reportFile) {
  const app = hunks.get('src/app.js');
  const added = hunks.get('src/new feature.js');
  expect(app?.hunks.length === 2 && added?.hunks.length === 1 && hunks.has('notes.md'), `fixture: git shows ${JSON.stringify([...hunks].map(([p, f]) => [p, f.hunks.length]))}`);
  const head = (p, span) => ({ path: p, side: 'head', start: span.start, end: span.end });
  const inserted = app.hunks[1].lines.filter((l) => l.kind === 'add' && /^app inserted /.test(l.text)).map((l) => l.new);
  expect(inserted.length === 2 && inserted[1] === inserted[0] + 1, `fixture: the second hunk of src/app.js has no two inserted lines: ${JSON.stringify(app.hunks[1].lines)}`);
  const plan = {
    design: [head('src/new feature.js', addedSpan(added.hunks[0]))],
    sequence: [head('src/app.js', addedSpan(app.hunks[0])), head('src/app.js', addedSpan(app.hunks[1]))],
    decisions: [head('src/new feature.js', { start: addedSpan(added.hunks[0]).start, end: addedSpan(added.hunks[0]).start + 2 })],
    flagged: [head('src/app.js', { start: inserted[0], end: inserted[1] })],
    findings: FINDINGS,
    explain: { excerpt: head('src/app.js', addedSpan(app.hunks[0])), answer: `src/app.js:${addedSpan(app.hunks[0]).start} changed.` },
    review: `# Findings\n\n- src/app.js:${inserted[0]}-${inserted[1]} inserts two lines that name no helper.\n`,
    noiseMembers: 0,
    roundReport: { file: reportFile, delayMs: REPORT_DELAY_MS },
  };
  plan.noiseMembers = uncitedHunkCount(hunks, [...plan.design, ...plan.sequence, ...plan.decisions, ...plan.flagged]);
  return plan;
}

/** The scripted worker's file: src/app.js with the two inserted lines rewritten, then one commit. */
function workerScript(repo, inserted) {
  const text = fs.readFileSync(path.join(repo, 'src/app.js'), 'utf8').split('\n');
  expect(text[inserted.start - 1] === 'app inserted A' && text[inserted.end - 1] === 'app inserted B', `fixture: src/app.js lines ${inserted.start}-${inserted.end} are ${JSON.stringify(text.slice(inserted.start - 1, inserted.end))}`);
  text.splice(inserted.start - 1, 2, ...NAMED);
  return { steps: [{ write: { path: 'src/app.js', content: text.join('\n') } }, { commit: COMMIT_MESSAGE }] };
}

/**
 * The oracle: the same scripted worker applied to a copy of the repository, measured as the round
 * measures (host/rounds/checkpoint.ts: checkpoints before and after, the direct diff; evidence.ts:
 * the manifest). Answers the manifest units (ids, kinds, paths, anchors). Runs the host's own
 * TypeScript through tsx, in a child process.
 */
function oracleManifest(repo, workerFile, work) {
  const copy = path.join(work, 'oracle copy');
  fs.cpSync(repo, copy, { recursive: true });
  const module = (rel) => JSON.stringify(path.join(rig.ROOT, rel));
  const code = `
    import { readFileSync } from 'node:fs';
    import { measureRound, takeCheckpoint } from ${module('host/rounds/checkpoint.ts')};
    import { evidenceManifest } from ${module('host/rounds/evidence.ts')};
    import { loadScriptedWorkerFile, runScriptedWorker } from ${module('host/rounds/scriptedWorker.ts')};
    (async () => {
      const { copy, workerFile } = JSON.parse(readFileSync(0, 'utf8'));
      const fail = (what, r) => { throw new Error(what + ': ' + JSON.stringify(r.error)); };
      const before = await takeCheckpoint(copy, 'oracle', 'before');
      if (!before.ok) fail('before', before);
      const script = await loadScriptedWorkerFile(workerFile);
      if (!script.ok) fail('worker file', script);
      const ran = await runScriptedWorker(copy, script.value);
      if (!ran.ok) fail('worker', ran);
      const after = await takeCheckpoint(copy, 'oracle', 'after');
      if (!after.ok) fail('after', after);
      const measured = await measureRound(copy, before.value.commit, after.value.commit);
      if (!measured.ok) fail('measure', measured);
      const manifest = evidenceManifest(measured.value.files);
      if (!manifest.ok) fail('manifest', manifest);
      process.stdout.write(JSON.stringify({ manifest: manifest.value, changedPaths: measured.value.changedPaths, totals: measured.value.totals }));
    })().catch((e) => { process.stderr.write(String(e?.stack ?? e)); process.exit(1); });
  `;
  const out = execFileSync(path.join(rig.ROOT, 'node_modules/.bin/tsx'), ['--eval', code], { cwd: rig.ROOT, input: JSON.stringify({ copy, workerFile }), encoding: 'utf8' });
  fs.rmSync(copy, { recursive: true, force: true });
  return JSON.parse(out);
}

async function poll(read, ok, timeout = 15_000, every = 200) {
  const deadline = Date.now() + timeout;
  let value = await read();
  while (!ok(value) && Date.now() < deadline) {
    await rig.sleep(every);
    value = await read();
  }
  return value;
}

// ---------------------------------------------------------------------------------------------

export async function runRounds({ paths, vsix, runner, browser }) {
  let page = null;
  let cs = null;
  let models = null;
  const consoleErrors = [];
  const { screenshot, test } = scenarioKit({ label: 'rounds', runner, page: () => page });
  const requestCount = () => models?.requests.length ?? 0;
  const first = runner.results.length;

  const work = rig.mkTmp('rennet-rounds-');
  const repo = makeRoundsFixture(path.join(work, 'rounds repo'));
  const hunks = diffHunks(repo, { base: 'main', head: 'feature' });
  const reportFile = path.join(work, 'round-report.json');
  const plan = roundsPlan(hunks, reportFile);
  const inserted = plan.flagged[0];
  const questionLine = plan.sequence[0].start;
  const headBefore = git(repo, ['rev-parse', 'feature']).trim();
  const workerFile = path.join(work, 'worker.json');
  fs.writeFileSync(workerFile, JSON.stringify(workerScript(repo, inserted), null, 2));
  const worker = `scripted:${workerFile}`;
  rig.log(`rounds: fixture ${repo}; head ${headBefore}; worker ${workerFile}; plan ${JSON.stringify({ ...plan, review: undefined })}`);

  // ─── Page helpers ──────────────────────────────────────────────────────────────────────────

  /** The Hand off view's pane: its header and its rows (depth, label, description, codicons). */
  async function readHandOff() {
    return page
      .locator('body')
      .evaluate(() => {
        const txt = (n) => (n ? n.textContent.replace(/\s+/g, ' ').trim() : null);
        const panes = [...document.querySelectorAll('.part.sidebar .pane')];
        const pane = panes.find((p) => /^Hand off/i.test(txt(p.querySelector('.pane-header .title')) ?? ''));
        if (!pane) return { found: false, rows: [], panes: panes.map((p) => txt(p.querySelector('.pane-header .title'))) };
        const rows = [...pane.querySelectorAll('.monaco-list-row')]
          .map((r) => ({
            top: parseFloat(r.style.top || '0'),
            level: Number(r.getAttribute('aria-level') ?? '0'),
            label: txt(r.querySelector('.label-name')),
            description: txt(r.querySelector('.label-description')),
            icons: [...r.querySelectorAll('.codicon')].map((i) => [...i.classList].find((c) => c.startsWith('codicon-') && c !== 'codicon') ?? null).filter(Boolean),
          }))
          .sort((a, b) => a.top - b.top)
          .map(({ top: _top, ...row }) => row);
        return { found: true, description: txt(pane.querySelector('.pane-header .description')), message: txt(pane.querySelector('.message')), rows };
      })
      .catch((e) => ({ found: false, rows: [], error: e.message }));
  }
  const showRows = (view) => JSON.stringify((view?.rows ?? []).map((r) => `${'  '.repeat(Math.max(0, r.level - 1))}${r.label}${r.description ? ` [${r.description}]` : ''}`));
  /** The rows under the Changes lane (level 2 rows after the lane row, until the next level 1 row). */
  function changesLane(view) {
    const rows = view?.rows ?? [];
    const at = rows.findIndex((r) => r.level === 1 && r.label === 'Changes');
    if (at < 0) return null;
    const children = [];
    for (const r of rows.slice(at + 1)) {
      if (r.level <= 1) break;
      children.push(r);
    }
    return { lane: rows[at], children };
  }
  /** The rows under the "Rounds" row. */
  function roundsRows(view) {
    const rows = view?.rows ?? [];
    const at = rows.findIndex((r) => r.level === 1 && r.label === 'Rounds');
    if (at < 0) return null;
    const children = [];
    for (const r of rows.slice(at + 1)) {
      if (r.level <= 1) break;
      children.push(r);
    }
    return { row: rows[at], children };
  }

  /**
   * Source Control → Hand off, expanded, with the room the Changes pane (git is off here) would
   * take: a tree draws only the rows that fit, so a cramped pane would hide rows from the reads.
   */
  async function focusHandOff() {
    await page.locator('#workbench\\.parts\\.statusbar').click({ position: { x: 2, y: 2 }, force: true });
    if (await page.locator('[id="workbench.parts.panel"]').isVisible().catch(() => false)) await rig.runCommand(page, 'View: Hide Panel');
    await rig.runCommand(page, 'Source Control: Focus on Hand off View');
    const header = page.locator('.part.sidebar .pane-header', { hasText: /Hand off/i }).first();
    await header.waitFor({ state: 'visible', timeout: 15_000 }).catch(async () => {
      throw new Error(`the Source Control view shows no "Hand off" pane: ${JSON.stringify(await readHandOff())}`);
    });
    if ((await header.getAttribute('aria-expanded')) === 'false') await header.click();
    const changes = page.locator('.part.sidebar .pane-header', { hasText: /^\s*Changes/ }).first();
    if ((await changes.count()) > 0 && (await changes.getAttribute('aria-expanded')) === 'true') await changes.click();
  }

  /**
   * Clicks the Hand off row whose text contains `text`, by coordinates near its label's start:
   * Playwright's click() would first scroll a long label inside its overflow-hidden container,
   * shifting the text out of sight.
   */
  async function clickRow(text) {
    const row = page.locator('.part.sidebar .pane .monaco-list-row').filter({ hasText: text }).first();
    await row.waitFor({ state: 'visible', timeout: 10_000 });
    const box = await row.locator('.monaco-icon-label').first().boundingBox();
    await page.mouse.click(box.x + 40, box.y + box.height / 2);
  }

  async function stagedCount() {
    return board(page)
      .locator('[data-testid="asks-count"]')
      .getAttribute('data-count', { timeout: 2_000 })
      .then((v) => (v === null ? null : Number(v)))
      .catch(() => null);
  }

  async function notificationTexts() {
    return page.locator('.notifications-toasts .notification-toast, .notification-list-item-message').allInnerTexts().catch(() => []);
  }

  const dialog = () => page.locator('.monaco-dialog-box').filter({ visible: true }).first();
  async function readDialog() {
    return dialog()
      .evaluate((d) => ({
        message: d.querySelector('.dialog-message-text')?.textContent?.trim() ?? null,
        detail: d.querySelector('.dialog-message-detail')?.textContent?.trim() ?? null,
        buttons: [...d.querySelectorAll('.dialog-buttons .monaco-button')].map((b) => b.textContent.trim()),
      }))
      .catch(() => null);
  }

  /**
   * The lines of an editor Monaco draws now: line number (its gutter) → its text, no-break spaces
   * read as spaces. Word wrap is off in this profile (settings), so each line is one view line.
   */
  async function drawnLines(editor) {
    return editor.evaluate((ed) => {
      const tops = new Map();
      for (const n of ed.querySelectorAll('.margin-view-overlays .line-numbers')) {
        const line = Number(n.textContent.trim());
        if (line > 0) tops.set(Math.round(parseFloat(n.parentElement?.style.top || n.style.top || 'NaN')), line);
      }
      const out = {};
      for (const v of ed.querySelectorAll('.view-lines .view-line')) {
        const line = tops.get(Math.round(parseFloat(v.style.top)));
        if (line) out[line] = v.textContent.replace(/\u00a0/g, ' ');
      }
      return out;
    });
  }

  /**
   * Every line of an editor shown from its top: what it draws, then the mouse wheel a page down at a
   * time, until a page draws no new line.
   */
  async function wholeEditor(editor) {
    const box = await editor.boundingBox();
    const all = {};
    for (let stale = 0, i = 0; stale < 2 && i < 40; i++) {
      const shown = await drawnLines(editor);
      const fresh = Object.keys(shown).filter((n) => !(n in all));
      Object.assign(all, shown);
      stale = fresh.length === 0 ? stale + 1 : 0;
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      await page.mouse.wheel(0, box.height * 0.8);
      await rig.sleep(250);
    }
    return Object.entries(all)
      .sort(([a], [b]) => Number(a) - Number(b))
      .map(([n, text]) => ({ n: Number(n), text }));
  }

  // ─── The tests ─────────────────────────────────────────────────────────────────────────────

  let oracle = null;
  await test('the oracle measures the scripted worker on a copy; the model servers answer on 127.0.0.1; the workbench opens the feature checkout with Rennet pointed at them and at the worker', async () => {
    oracle = oracleManifest(repo, workerFile, work);
    rig.log(`rounds: oracle ${JSON.stringify(oracle)}`);
    const hunksOfApp = oracle.manifest.filter((u) => u.kind === 'text-hunk' && u.path === 'src/app.js');
    expect(oracle.manifest.length === 1 && hunksOfApp.length === 1, `the oracle's manifest should be the one src/app.js hunk the worker rewrites: ${JSON.stringify(oracle.manifest)}`);
    expect(hunksOfApp[0].anchor.side === 'head' && hunksOfApp[0].anchor.line === inserted.start, `the oracle's hunk is anchored at ${JSON.stringify(hunksOfApp[0].anchor)}, expected head line ${inserted.start}`);
    expect(/^ev-[0-9a-f]{16}$/.test(hunksOfApp[0].id), `the oracle's evidence id is ${JSON.stringify(hunksOfApp[0].id)}`);
    expect(git(repo, ['rev-parse', 'feature']).trim() === headBefore && git(repo, ['status', '--porcelain']).trim() === '', 'the oracle touched the fixture repository');

    models = await startModelServers({ script: 'e2eReading.ts', plan, dir: work, label: 'rounds' });
    for (const url of [models.openaiBaseUrl, models.anthropicOrigin]) expect(/^http:\/\/127\.0\.0\.1:\d+/.test(url), `a model server is not on loopback: ${url}`);
    cs = await rig.startCodeServer({
      paths,
      name: 'rounds',
      vsixes: [vsix],
      settings: {
        ...harnessSettings(models),
        'javascript.validate.enable': false,
        // The work order is read line by line from the editor: one view line per line.
        '[markdown]': { 'editor.wordWrap': 'off' },
      },
    });
    // rennet.rounds.worker is a machine-scoped setting: in a remote window (code-server's is one)
    // VS Code reads it from the remote machine's settings, not the user's (a user setting is ignored).
    fs.mkdirSync(path.join(cs.userData, 'Machine'), { recursive: true });
    fs.writeFileSync(path.join(cs.userData, 'Machine/settings.json'), JSON.stringify({ 'rennet.rounds.worker': worker }, null, 2));
    page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    watchConsole(page, consoleErrors);
    await rig.openWorkbench(page, cs, repo);
    await page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'src' }).first().waitFor({ timeout: 30_000 });
    await screenshot('workbench');
  });

  let generation = null;
  await test('Review Branch (feature vs main): the board shows feature\'s head and the five lenses settle', async () => {
    expect(page, 'the workbench did not open (see the previous test)');
    await rig.runCommand(page, 'Rennet: Review Branch');
    await rig.pickQuickPick(page, 'Branch to review', 'feature');
    await rig.pickQuickPick(page, 'Base to compare with', 'main');
    await page.locator('.tabs-container .tab', { hasText: 'Rennet · feature vs main' }).first().waitFor({ timeout: 90_000 });
    await board(page).locator('[data-testid="patchset-header"]').waitFor({ state: 'visible', timeout: 90_000 });
    generation = await waitForTerminalGeneration(page, { what: 'after Review Branch', requestCount });
    await rig.sleep(300);
    await screenshot('board');
    const headFull = await board(page).locator('[data-testid="head-id"]').getAttribute('data-full-id');
    expect(headFull === headBefore, `the board captured head ${headFull}, feature is at ${headBefore}`);
    const unsettled = generation.rail.filter((t) => t.state !== 'settled');
    expect(unsettled.length === 0, `every lens should settle on the scripted models; not settled: ${JSON.stringify(unsettled)}`);
  });

  await test('Hand off before anything is staged: the Changes lane is empty and where Dispatch would be, the host\'s refusal', async () => {
    expect(generation, 'no settled generation (see the previous test)');
    await focusHandOff();
    const view = await poll(readHandOff, (v) => v.rows.some((r) => r.label?.startsWith(NOTHING_STAGED)), 20_000);
    await screenshot('hand-off-empty');
    rig.log(`rounds: hand off before staging ${showRows(view)}`);
    const lane = changesLane(view);
    expect(lane?.lane.description === 'nothing staged', `the Changes lane reads ${JSON.stringify(lane?.lane)}, expected "nothing staged" (rows ${showRows(view)})`);
    expect(view.rows.some((r) => r.level === 1 && r.label?.startsWith(NOTHING_STAGED)), `no refusal row "${NOTHING_STAGED}…" (rows ${showRows(view)})`);
    expect(!view.rows.some((r) => /^Dispatch round/.test(r.label ?? '')), `a Dispatch row is offered with nothing staged: ${showRows(view)}`);
    expect(view.description === 'feature vs main', `the view's description is ${JSON.stringify(view.description)}, expected "feature vs main"`);
  });

  await test('a change request staged on the Flagged finding, and a question staged from the editor gutter', async () => {
    expect(generation, 'no settled generation (see the previous test)');
    // The change request: the finding's Request change (anchored on the two inserted lines).
    await page.locator('.tabs-container .tab', { hasText: 'Rennet · feature vs main' }).first().click();
    await selectLens(page, 'flagged');
    const finding = board(page).locator('[data-testid="element"][data-kind="finding"]').filter({ hasText: FINDING_TITLE }).first();
    await finding.waitFor({ state: 'visible', timeout: 15_000 });
    await finding.locator('[data-testid="finding-request"]').click();
    const afterFinding = await poll(stagedCount, (n) => n === 1);
    const marked = await finding.locator('[data-testid="finding-state"][data-state="requested"]').count();
    await screenshot('finding-requested');
    expect(afterFinding === 1 && marked === 1, `after Request change the board counts ${afterFinding} staged asks (expected 1) and the finding carries ${marked} "requested" marks`);

    // The question: a comment staged from the gutter of src/app.js (the checkout: feature is out), then "Ask as Question".
    await selectLens(page, 'sequence');
    const cite = plan.sequence[0];
    const card = board(page).locator(`[data-testid="code-card"][data-path="${cite.path}"][data-start="${cite.start}"][data-end="${cite.end}"]`).first();
    await card.locator('[data-testid="code-card-file"]').click();
    await page.locator('.part.editor .tabs-container .tab.active', { hasText: 'app.js' }).first().waitFor({ timeout: 15_000 });
    const editor = editorOf(page);
    const uri = await poll(() => editor.getAttribute('data-uri').catch(() => null), (u) => /app\.js$/.test(u ?? ''), 10_000);
    expect(!/^rennet-blob:/.test(uri ?? '') && (uri ?? '').endsWith(`${encodeURI(repo)}/src/app.js`), `the code card opened ${JSON.stringify(uri)}, expected the checkout's src/app.js (feature is checked out), not the captured blob`);
    const tops = await visibleLineTops(editor);
    expect(questionLine in tops, `line ${questionLine} is not visible (visible ${Object.keys(tops).join(',')})`);
    // The cursor onto the line alone (the card selected the cited range).
    const lineBox = await editor.locator('.view-lines .view-line').evaluateAll((els, top) => {
      const el = els.find((e) => Math.abs(parseFloat(e.style.top) - top) < 2);
      const r = el?.getBoundingClientRect();
      return r ? { x: r.x + Math.min(300, r.width - 10), y: r.y + r.height / 2 } : null;
    }, tops[questionLine]);
    await page.mouse.click(lineBox.x, lineBox.y);
    await rig.sleep(300);
    const widget = await openCommentWidget(page, editor, questionLine, { label: 'rounds', onHover: () => screenshot('comment-plus') });
    await widget.locator('.comment-form .monaco-editor .view-lines').first().click();
    await page.keyboard.type(QUESTION);
    const typed = await poll(() => widget.locator('.comment-form .monaco-editor .view-lines').first().innerText(), (t) => t.replace(/\s+/g, ' ').includes(QUESTION), 3_000);
    expect(typed.replace(/\s+/g, ' ').includes(QUESTION), `the comment box shows ${JSON.stringify(typed)} after typing`);
    const stage = widget.locator('.form-actions .monaco-button, .form-actions button', { hasText: 'Stage Ask' }).first();
    await stage.waitFor({ state: 'visible', timeout: 10_000 });
    await stage.click();
    const staged = page.locator('.review-widget').filter({ hasText: QUESTION }).filter({ hasText: 'Staged ask · comment' }).first();
    await staged.waitFor({ state: 'visible', timeout: 15_000 }).catch(async () => {
      const shown = await page.locator('.review-widget').filter({ hasText: QUESTION }).first().innerText().catch(() => '(no widget holds it)');
      throw new Error(`the gutter ask was not staged as a comment; its thread shows ${JSON.stringify(shown.replace(/\s+/g, ' ').slice(0, 300))}`);
    });
    await screenshot('comment-staged');
    // Its intent: the comment's "More Actions…" menu, "Ask as Question".
    const comment = staged.locator('.review-comment').filter({ hasText: QUESTION }).first();
    await comment.hover();
    const moreButton = comment.locator('.action-label.codicon-toolbar-more, .action-label[aria-label^="More Actions"]').first();
    await moreButton.click({ timeout: 10_000 }).catch(async (e) => {
      const labels = await comment.locator('.action-label').evaluateAll((els) => els.map((a) => `${a.getAttribute('aria-label')} ${a.className}`)).catch(() => []);
      throw new Error(`the staged comment has no "More Actions" button (${e.message.split('\n')[0]}); its actions: ${JSON.stringify(labels)}`);
    });
    const item = page.locator('.monaco-menu .action-item, .context-view .action-item').filter({ hasText: /^\s*Ask as Question\s*$/ }).first();
    await item.waitFor({ state: 'visible', timeout: 10_000 }).catch(async () => {
      const items = await page.locator('.monaco-menu .action-item').allInnerTexts().catch(() => []);
      throw new Error(`the comment's menu offers no "Ask as Question": ${JSON.stringify(items)}`);
    });
    await screenshot('ask-as-question-menu');
    await item.click();
    const asQuestion = page.locator('.review-widget').filter({ hasText: QUESTION }).filter({ hasText: 'Staged ask · question' }).first();
    await asQuestion.waitFor({ state: 'visible', timeout: 15_000 }).catch(async () => {
      const shown = await page.locator('.review-widget').filter({ hasText: QUESTION }).first().innerText().catch(() => '(no widget holds it)');
      throw new Error(`after "Ask as Question" the thread should say "Staged ask · question"; it shows ${JSON.stringify(shown.replace(/\s+/g, ' ').slice(0, 300))}`);
    });
    await page.locator('.tabs-container .tab', { hasText: 'Rennet · feature vs main' }).first().click();
    const total = await poll(stagedCount, (n) => n === 2);
    await screenshot('two-staged');
    expect(total === 2, `the board counts ${total} staged asks, expected the change request and the question`);
  });

  let askId = null;
  let dispatched = false;
  await test('Source Control → Hand off: the Changes lane lists both asks, and "Dispatch round 1…" offers 1 ask to the coding agent (the question is not work)', async () => {
    expect(generation, 'no settled generation (see the previous test)');
    await focusHandOff();
    const view = await poll(readHandOff, (v) => v.rows.some((r) => r.label === 'Dispatch round 1…') && (changesLane(v)?.children.length ?? 0) === 2, 20_000);
    await screenshot('hand-off-staged');
    rig.log(`rounds: hand off staged ${showRows(view)}`);
    const lane = changesLane(view);
    expect(lane?.lane.description === '2 staged', `the Changes lane reads ${JSON.stringify(lane?.lane)}, expected "2 staged" (rows ${showRows(view)})`);
    const request = lane.children.find((r) => r.label === FINDING_TITLE);
    expect(request?.description === `finding: ${FINDING_TITLE}` && request.icons.includes('codicon-request-changes'), `the change request's row is ${JSON.stringify(request)} (rows ${showRows(view)})`);
    const question = lane.children.find((r) => r.label === QUESTION);
    expect(question?.description === `src/app.js:${questionLine} (new)` && question.icons.includes('codicon-question'), `the question's row is ${JSON.stringify(question)} (rows ${showRows(view)})`);
    const dispatch = view.rows.find((r) => r.label === 'Dispatch round 1…');
    expect(dispatch?.level === 1 && dispatch.description === '1 ask to the coding agent' && dispatch.icons.includes('codicon-run-all'), `the Dispatch row is ${JSON.stringify(dispatch)}, expected "Dispatch round 1…" · "1 ask to the coding agent"`);
    expect(!view.rows.some((r) => r.label === 'Rounds'), `a "Rounds" row before any round: ${showRows(view)}`);
  });

  let workOrderShown = null;
  await test('Dispatch round 1…: the modal names 1 ask and the worker; Show Work Order opens the order and the modal comes back; the order quotes the ask and fences its lines as diff; Dispatch', async () => {
    expect(generation, 'no settled generation (see the previous test)');
    await clickRow('Dispatch round 1…');
    await dialog().waitFor({ state: 'visible', timeout: 20_000 }).catch(async () => {
      throw new Error(`no modal after clicking "Dispatch round 1…" (notifications ${JSON.stringify(await notificationTexts())})`);
    });
    const modal = await readDialog();
    await screenshot('dispatch-modal');
    rig.log(`rounds: dispatch modal ${JSON.stringify(modal)}`);
    expect(modal.message === `Dispatch round 1: 1 ask to ${worker}`, `the modal says ${JSON.stringify(modal.message)}, expected "Dispatch round 1: 1 ask to ${worker}"`);
    expect(modal.detail?.includes(repo) && modal.detail.includes('feature'), `the modal's detail should name the workspace ${repo} and the branch feature: ${JSON.stringify(modal.detail)}`);
    expect(modal.buttons.includes('Dispatch') && modal.buttons.includes('Show Work Order'), `the modal's buttons are ${JSON.stringify(modal.buttons)}`);

    await dialog().locator('.dialog-buttons .monaco-button', { hasText: 'Show Work Order' }).first().click();
    const orderEditor = page.locator('.part.editor .monaco-editor[data-uri^="rennet-work-order:"]').filter({ visible: true }).first();
    await orderEditor.waitFor({ state: 'visible', timeout: 15_000 }).catch(async () => {
      const tabs = await page.locator('.tabs-container .tab .label-name').allInnerTexts().catch(() => []);
      throw new Error(`Show Work Order opened no read-only work order editor (tabs ${JSON.stringify(tabs)})`);
    });
    // The modal comes back by itself once the order is shown.
    await dialog().waitFor({ state: 'visible', timeout: 15_000 }).catch(() => {
      throw new Error('after Show Work Order the Dispatch modal did not come back');
    });
    const again = await readDialog();
    const top = await poll(() => drawnLines(orderEditor), (t) => t[1] === '# Work order', 10_000);
    expect(top[1] === '# Work order', `the work order editor draws ${JSON.stringify(top)}`);
    await screenshot('work-order-and-modal');
    expect(again?.message === modal.message, `the modal came back reading ${JSON.stringify(again)}`);
    // Cancel it to read the whole order (the modal holds the keyboard), then dispatch from the row again.
    await dialog().locator('.dialog-buttons .monaco-button', { hasText: /^Cancel$/ }).first().click();
    await dialog().waitFor({ state: 'hidden', timeout: 10_000 });
    const shown = await wholeEditor(orderEditor);
    workOrderShown = shown;
    await screenshot('work-order');
    const text = shown.map((l) => l.text);
    rig.log(`rounds: work order as shown (${text.length} lines):\n${text.join('\n')}`);
    expect(shown.every((l, i) => l.n === i + 1), `the work order's lines were not all read: numbers ${JSON.stringify(shown.map((l) => l.n))}`);
    expect(text[0] === '# Work order', `the shown order opens ${JSON.stringify(text[0])}, expected "# Work order"`);
    const heading = text.find((l) => /^### 1\. /.test(l)) ?? '';
    const id = /ask `([A-Za-z0-9][A-Za-z0-9._:-]*)`/.exec(heading)?.[1] ?? null;
    expect(id && heading.includes('Change request') && heading.includes('`src/app.js`') && heading.includes(`lines ${inserted.start}–${inserted.end}`), `the order's ask heading is ${JSON.stringify(heading)}, expected the change request on src/app.js lines ${inserted.start}–${inserted.end} with its ask id`);
    expect(text.includes(`> ${FINDING_TITLE}`) && text.includes(`> ${FINDING_REMEDY}`), `the order does not quote the ask's text as "> " lines: ${JSON.stringify(text)}`);
    const fence = text.indexOf('```diff');
    const fenced = fence < 0 ? [] : text.slice(fence + 1, fence + 1 + text.slice(fence + 1).indexOf('```'));
    expect(fence > 0 && fenced.includes('+app inserted A') && fenced.includes('+app inserted B'), `the order has no \`\`\`diff fence carrying the inserted lines: ${JSON.stringify(text.slice(fence))}`);
    expect(!text.some((l) => l.includes(QUESTION)), `the question reached the work order: ${JSON.stringify(text)}`);
    expect(!text.some((l) => /^### 2\. /.test(l)), `the order holds more than one ask: ${JSON.stringify(text)}`);
    askId = id;

    // The classification the scripted report seat hands in: the ask, addressed, citing every manifest id once.
    fs.writeFileSync(reportFile, JSON.stringify({ outcomes: [{ askId, outcome: 'addressed', evidenceIds: oracle.manifest.map((u) => u.id), note: REPORT_NOTE }], beyond: [] }, null, 2));
    await focusHandOff();
    await clickRow('Dispatch round 1…');
    await dialog().waitFor({ state: 'visible', timeout: 20_000 });
    const last = await readDialog();
    expect(last?.message === modal.message, `the second modal reads ${JSON.stringify(last)}`);
    await dialog().locator('.dialog-buttons .monaco-button', { hasText: /^Dispatch$/ }).first().click();
    await dialog().waitFor({ state: 'hidden', timeout: 10_000 }).catch(() => {});
    dispatched = true;
  });

  const seenRunning = [];
  let returned = null;
  await test('the round runs: Hand off shows "Round 1: …" while it runs, then "Round 1 is back: 1 addressed · 0 partial · 0 untouched" under Rounds', async () => {
    expect(dispatched, 'the round was not dispatched (see the previous test)');
    const deadline = Date.now() + 240_000;
    let shotRunning = false;
    let view = null;
    for (;;) {
      view = await readHandOff();
      const running = view.rows.find((r) => /^Round 1: /.test(r.label ?? ''));
      if (running && seenRunning.at(-1) !== running.label) {
        seenRunning.push(running.label);
        rig.log(`rounds: running row ${JSON.stringify(running)}`);
        if (!shotRunning) {
          shotRunning = true;
          await screenshot('round-running');
        }
      }
      const back = roundsRows(view)?.children.find((r) => /^Round 1 /.test(r.label ?? ''));
      if (back && !running) {
        returned = back;
        break;
      }
      if (Date.now() > deadline) throw new Error(`the round did not end within 240 s; Hand off rows ${showRows(view)}; running rows seen ${JSON.stringify(seenRunning)}; notifications ${JSON.stringify(await notificationTexts())}`);
      await rig.sleep(100);
    }
    await rig.sleep(300);
    view = await readHandOff();
    await screenshot('round-back');
    rig.log(`rounds: running rows seen ${JSON.stringify(seenRunning)}; final rows ${showRows(view)}`);
    const short = (sha) => sha.slice(0, 7);
    const headAfter = git(repo, ['rev-parse', 'feature']).trim();
    expect(returned.label === 'Round 1 is back: 1 addressed · 0 partial · 0 untouched', `the round's row reads ${JSON.stringify(returned)} (rows ${showRows(view)}; model requests of the report seat ${JSON.stringify(models.requests.filter((r) => r.seat?.startsWith('round:report')).map((r) => ({ seat: r.seat, last: r.toolResults?.at(-1)?.slice(0, 300) })))})`);
    expect(returned.description === `scripted · ${short(headBefore)}..${short(headAfter)}`, `the round's row is described ${JSON.stringify(returned.description)}, expected "scripted · ${short(headBefore)}..${short(headAfter)}"`);
    expect(returned.icons.includes('codicon-pass'), `the round's row has icons ${JSON.stringify(returned.icons)}, expected codicon-pass`);
    expect(roundsRows(view)?.row.description === '1', `the Rounds row reads ${JSON.stringify(roundsRows(view)?.row)}`);
    expect(seenRunning.length > 0, `no "Round 1: …" row was seen while the round ran (polled every 100 ms); rows at the end ${showRows(view)}`);
    expect(seenRunning.every((l) => /^Round 1: .+…$/.test(l)), `running rows ${JSON.stringify(seenRunning)}`);
  });

  await test('after the round: the change request left the Changes lane and the question stayed; the board shows the worker\'s commit as its head; git has the commit on feature; the report seat read the evidence only through its tool and its report was accepted', async () => {
    expect(returned, 'the round did not return (see the previous test)');
    // git: the worker's one commit on feature, in the reviewer's checkout, nothing left uncommitted.
    const headAfter = git(repo, ['rev-parse', 'feature']).trim();
    const [subject, author, parent] = git(repo, ['log', '-1', '--format=%s%x00%an%x00%P', 'feature']).trim().split('\0');
    const status = git(repo, ['status', '--porcelain']).trim();
    const branch = git(repo, ['rev-parse', '--abbrev-ref', 'HEAD']).trim();
    const appNow = fs.readFileSync(path.join(repo, 'src/app.js'), 'utf8').split('\n');
    rig.log(`rounds: feature ${headBefore} → ${headAfter} "${subject}" by ${author}; status ${JSON.stringify(status)}`);
    expect(headAfter !== headBefore && parent === headBefore && subject === COMMIT_MESSAGE && author === 'Rennet Scripted Worker', `feature is at ${headAfter} ("${subject}" by ${author}, parent ${parent}); expected the worker's commit "${COMMIT_MESSAGE}" on ${headBefore}`);
    expect(branch === 'feature' && status === '', `the checkout is on ${branch} with status ${JSON.stringify(status)}, expected feature and clean`);
    expect(appNow[inserted.start - 1] === NAMED[0] && appNow[inserted.end - 1] === NAMED[1], `src/app.js lines ${inserted.start}-${inserted.end} read ${JSON.stringify(appNow.slice(inserted.start - 1, inserted.end))}`);

    // The Hand off view: the question alone in the Changes lane.
    await focusHandOff();
    const view = await poll(readHandOff, (v) => changesLane(v)?.children.length === 1, 15_000);
    await screenshot('hand-off-after');
    rig.log(`rounds: hand off after the round ${showRows(view)}`);
    const lane = changesLane(view);
    expect(lane?.lane.description === '1 staged', `the Changes lane reads ${JSON.stringify(lane?.lane)}, expected "1 staged" (rows ${showRows(view)})`);
    expect(!lane.children.some((r) => r.label === FINDING_TITLE), `the change request is still in the Changes lane: ${showRows(view)}`);
    const question = lane.children.find((r) => r.label === QUESTION);
    expect(question && question.icons.includes('codicon-question'), `the question left the Changes lane: ${showRows(view)}`);

    // The board: a new generation over the successor, whose head is the worker's commit.
    await page.locator('.tabs-container .tab', { hasText: 'Rennet · feature vs main' }).first().click();
    const successor = await waitForTerminalGeneration(page, { previous: generation.id, what: 'after the round', requestCount });
    const headShown = await poll(
      () => board(page).locator('[data-testid="head-id"]').getAttribute('data-full-id', { timeout: 2_000 }).catch(() => null),
      (h) => h === headAfter,
      15_000,
    );
    await rig.sleep(300);
    await screenshot('board-after');
    const headText = await board(page).locator('[data-testid="head-id"]').innerText().catch(() => null);
    rig.log(`rounds: board after the round: generation ${generation.id} → ${successor.id}; head ${headShown} (${headText}); rail ${successor.rail.map((t) => `${t.lens}=${t.state}`).join(', ')}`);
    expect(headShown === headAfter, `the board's head is ${headShown}, git rev-parse feature is ${headAfter}`);
    expect(headText && headAfter.startsWith(headText.trim()), `the header shows head ${JSON.stringify(headText)}, not a prefix of ${headAfter}`);
    expect(successor.rail.every((t) => t.state === 'settled'), `the successor's lenses did not all settle: ${JSON.stringify(successor.rail)}`);

    // The host's evidence file in the workspace carries exactly the oracle's manifest.
    const contextRoot = path.join(repo, '.rennet/context');
    const sessions = fs.existsSync(contextRoot) ? fs.readdirSync(contextRoot) : [];
    const evidenceFile = sessions.map((s) => path.join(contextRoot, s, 'evidence.json')).find((f) => fs.existsSync(f));
    expect(evidenceFile, `no evidence.json under ${contextRoot} (sessions ${JSON.stringify(sessions)})`);
    const evidence = JSON.parse(fs.readFileSync(evidenceFile, 'utf8'));
    expect(JSON.stringify(evidence.manifest.map((u) => u.id)) === JSON.stringify(oracle.manifest.map((u) => u.id)), `the host's manifest ids ${JSON.stringify(evidence.manifest.map((u) => u.id))} differ from the oracle's ${JSON.stringify(oracle.manifest.map((u) => u.id))}`);
    expect(JSON.stringify(evidence.asks.map((a) => a.id)) === JSON.stringify([askId]) && evidence.range?.from === headBefore && evidence.range?.to === headAfter, `evidence.json names asks ${JSON.stringify(evidence.asks?.map((a) => a.id))} and range ${JSON.stringify(evidence.range)}`);
    // The work order the host wrote is the one shown (the lines the editor drew are its lines).
    const orderOnDisk = fs.readFileSync(path.join(path.dirname(evidenceFile), 'work-order.md'), 'utf8').split('\n');
    const collapse = (s) => s.replace(/\s+/g, ' ').trim();
    const differing = workOrderShown.filter((l) => collapse(orderOnDisk[l.n - 1] ?? '') !== collapse(l.text));
    const extra = orderOnDisk.slice(workOrderShown.length).filter((l) => l.trim() !== '');
    expect(differing.length === 0 && extra.length === 0, `the work order shown differs from ${path.join(path.dirname(evidenceFile), 'work-order.md')}: lines ${JSON.stringify(differing.slice(0, 5))}, not shown ${JSON.stringify(extra.slice(0, 5))}`);

    // The report seat on the OpenAI-compatible server (the Design lens's harness): three requests.
    const seat = await poll(
      () => models.requests.filter((r) => r.seat?.startsWith('round:report@')),
      (rs) => rs.length >= 3,
      5_000,
    );
    rig.log(`rounds: report seat requests ${JSON.stringify(seat.map((r) => ({ server: r.server, seat: r.seat, step: r.step, promptBytes: r.prompt?.join('').length, lastResult: r.toolResults?.at(-1)?.slice(0, 200) })))}`);
    expect(JSON.stringify(seat.map((r) => `${r.server} ${r.seat}`)) === JSON.stringify(['openai round:report@0', 'openai round:report@1', 'openai round:report@2']), `the report seat's requests were ${JSON.stringify(seat.map((r) => `${r.server} ${r.seat}`))}`);
    const prompt = seat[0].prompt?.join('\n') ?? '';
    expect(prompt.includes('# Rennet: round report'), `the report seat's prompt has no "# Rennet: round report" header: ${JSON.stringify(prompt.slice(0, 300))}`);
    const leaked = [askId, FINDING_TITLE, ...oracle.manifest.map((u) => u.id)].filter((s) => prompt.includes(s));
    expect(leaked.length === 0, `the report seat's prompt carries ${JSON.stringify(leaked)}: the evidence must reach it only through read_evidence`);
    const page1 = seat[1].toolResults?.at(-1) ?? '';
    expect(page1.includes(askId) && oracle.manifest.every((u) => page1.includes(u.id)) && /\[page 1 of 1: the last\]/.test(page1), `read_evidence's page 1 (resent to the model) does not carry the ask and every oracle id: ${JSON.stringify(page1.slice(0, 600))}`);
    const accepted = seat[2].toolResults?.at(-1) ?? '';
    expect(/^The report is accepted: 1 addressed, 0 partial, 0 untouched, 0 beyond\./.test(accepted), `submit_report was answered ${JSON.stringify(accepted)}`);
    const unresolved = models.requests.filter((r) => r.unresolved?.length > 0);
    expect(unresolved.length === 0, `scripted ids did not resolve: ${JSON.stringify(unresolved.map((r) => [r.seat, r.unresolved]))}`);
  });

  await test('Dispatch with only the question staged: the row reads the host\'s refusal, not a Dispatch action; Dispatch Round says so and opens no modal', async () => {
    expect(returned, 'the round did not return (see the previous test)');
    await focusHandOff();
    const view = await poll(readHandOff, (v) => v.rows.some((r) => r.label?.startsWith(ONLY_QUESTIONS)), 15_000);
    await screenshot('hand-off-only-question');
    rig.log(`rounds: hand off with only the question ${showRows(view)}`);
    const refusal = view.rows.find((r) => r.label?.startsWith(ONLY_QUESTIONS));
    expect(refusal?.level === 1 && refusal.icons.includes('codicon-circle-slash'), `no refusal row "${ONLY_QUESTIONS}…" where Dispatch was (rows ${showRows(view)})`);
    expect(!view.rows.some((r) => /^Dispatch round/.test(r.label ?? '')), `a Dispatch row is offered with only a question staged: ${showRows(view)}`);
    // Clicking the refusal does nothing; the palette's Dispatch Round answers with the host's words.
    await clickRow(ONLY_QUESTIONS);
    await rig.runCommand(page, 'Notifications: Clear All Notifications');
    await rig.runCommand(page, 'Rennet: Dispatch Round');
    const notes = await poll(notificationTexts, (n) => n.some((t) => t.includes(ONLY_QUESTIONS)), 15_000);
    const modalShown = await dialog().isVisible().catch(() => false);
    await screenshot('dispatch-refused');
    rig.log(`rounds: Dispatch Round with only the question: notifications ${JSON.stringify(notes)}; modal ${modalShown}`);
    expect(notes.some((t) => t.includes('no round to dispatch') && t.includes(ONLY_QUESTIONS)), `Dispatch Round's notification reads ${JSON.stringify(notes)}, expected "Rennet: no round to dispatch — ${ONLY_QUESTIONS} …"`);
    expect(!modalShown, `Dispatch Round opened a modal with only a question staged: ${modalShown ? JSON.stringify(await readDialog()) : ''}`);
    const after = await readHandOff();
    expect(after.rows.some((r) => r.level === 1 && r.label?.startsWith(ONLY_QUESTIONS)) && !after.rows.some((r) => /^Dispatch round/.test(r.label ?? '')), `after Dispatch Round the Hand off rows are ${showRows(after)}`);
    expect(git(repo, ['rev-parse', 'feature']).trim() === git(repo, ['rev-parse', 'HEAD']).trim() && git(repo, ['rev-list', '--count', `${headBefore}..feature`]).trim() === '1', 'a second round ran: feature moved again');
  });

  if (runner.results.slice(first).some((r) => !r.ok)) {
    dumpDiagnostics({ label: 'rounds', cs, models, consoleErrors, codeServerLines: 60, rennetLogLines: 150, extHostErrors: true, modelRequests: true });
  }
  await page?.close().catch(() => {});
  await cs?.stop();
  await models?.stop();
}
