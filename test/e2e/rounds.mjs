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
// What the panel shows of it: the rounds area's run view while the round runs (its phases read from
// the round's record), the report greeting after ("Round 1 is back", the ask's outcome, the ask's
// own words rendered as text), the composed successor (the rail's lane verdicts, Sequence's
// "Round 1 · Addressed" chapter stamped new and opened, the addressed finding dropped from Flagged,
// the earlier generation frozen behind the switcher), the ledger's row and its "Open round diff"
// (VS Code's multi-file diff over read-only `rennet-round:` documents, no comment gutter). Last,
// with the question unstaged, the Hand off view's "Open pull request…" against the fake forge
// (test/servers/fakeForge, served as acme/rounds and the checkout's origin): the modal shows the
// Design lens's scripted title and description, and Push and Open Pull Request pushes the worker's
// commit and opens #1.
//
// Its own fixture repository (no submodule: rounds refuse repositories with one), code-server
// profile and browser page. Called from run.mjs; `RENNET_E2E_SCENARIOS=rounds` runs only this.
// Screenshots: test/e2e/artifacts/rounds-NN-*.png.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import * as rig from './rig.mjs';
import {
  board,
  collapseSelectionOnLine,
  dumpDiagnostics,
  editorOf,
  generationId,
  openCommentWidget,
  scenarioKit,
  selectLens,
  visibleLineTops,
  waitForTerminalGeneration,
  watchConsole,
} from './boardPage.mjs';
import { diffHunks, git, initRepo, uncitedHunkCount } from './fixture.mjs';
import { harnessSettings, startModelServers, startServerProcess } from './modelServers.mjs';

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
/** A round's phases in order (protocol ROUND_PHASES) and the run view's label of each (webview/board/roundsModel.ts). */
const ROUND_PHASES = ['prep', 'worker', 'commit', 'report', 'verification', 'regeneration'];
const PHASE_LABELS = { prep: 'Prep', worker: 'Worker', commit: 'Commit', report: 'Report', verification: 'Verification', regeneration: 'Regeneration' };
/** The lane verdicts the composition must reach (host/board/compose.ts): Design, Decisions and Noise are re-drafted from the same script on unchanged lines; Sequence gains the round's chapter; Flagged loses the addressed finding. */
const LANE_VERDICTS = { design: 'carrying-forward', sequence: 'reworked', decisions: 'carrying-forward', flagged: 'reworked', noise: 'carrying-forward' };
const CHAPTER_TITLE = 'Round 1 · Addressed';
/** The fake forge's repository (the checkout's origin) and what the Design lens's scripted opener writes. */
const OWNER = 'acme';
const NAME = 'rounds';
const OPENER_TITLE = 'Name the helper on the two inserted lines of app.js';
const OPENER_BODY = ['`src/app.js` changes three lines and inserts two near its end, which now name the helper `totalOf`.', '', '- `src/new feature.js`: twelve new lines'].join('\n');

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
  expect(
    text[inserted.start - 1] === 'app inserted A' && text[inserted.end - 1] === 'app inserted B',
    `fixture: src/app.js lines ${inserted.start}-${inserted.end} are ${JSON.stringify(text.slice(inserted.start - 1, inserted.end))}`,
  );
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

/**
 * `tsx test/servers/fakeForge/main.ts` in its own process group: answers `{url, githubApiUrl,
 * call(method, args), stop()}`; `call` is its control API (POST /_fake/<method>).
 */
async function startForgeProcess() {
  const { urls, stderr, stop, pid } = await startServerProcess({ script: 'test/servers/fakeForge/main.ts', what: 'the fake forge' });
  async function call(method, args = {}) {
    const res = await fetch(`${urls.url}/_fake/${method}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(args) });
    const answer = await res.json().catch(() => ({ error: `HTTP ${res.status}, not JSON` }));
    if (!res.ok || 'error' in answer) throw new Error(`fake forge ${method}(${JSON.stringify(args)}): ${answer.error ?? res.status}`);
    return answer.result;
  }
  rig.log(`rounds: fake forge on ${urls.url} (pid ${pid})`);
  return { ...urls, call, stop, stderr };
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
  let forge = null;
  const consoleErrors = [];
  const { screenshot, test } = scenarioKit({ label: 'rounds', runner, page: () => page });
  const requestCount = () => models?.requests.length ?? 0;
  const first = runner.results.length;

  const work = rig.mkTmp('rennet-rounds-');
  const repo = makeRoundsFixture(path.join(work, 'rounds repo'));
  const hunks = diffHunks(repo, { base: 'main', head: 'feature' });
  const reportFile = path.join(work, 'round-report.json');
  const plan = roundsPlan(hunks, reportFile);
  // Open Pull Request's draft: the Design lens's one-turn pass over the branch's review (the plan's opener seat).
  plan.opener = { path: 'src/app.js', title: OPENER_TITLE, description: OPENER_BODY };
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
    if (
      await page
        .locator('[id="workbench.parts.panel"]')
        .isVisible()
        .catch(() => false)
    )
      await rig.runCommand(page, 'View: Hide Panel');
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
    return page
      .locator('.notifications-toasts .notification-toast, .notification-list-item-message')
      .allInnerTexts()
      .catch(() => []);
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
    expect(
      hunksOfApp[0].anchor.side === 'head' && hunksOfApp[0].anchor.line === inserted.start,
      `the oracle's hunk is anchored at ${JSON.stringify(hunksOfApp[0].anchor)}, expected head line ${inserted.start}`,
    );
    expect(/^ev-[0-9a-f]{16}$/.test(hunksOfApp[0].id), `the oracle's evidence id is ${JSON.stringify(hunksOfApp[0].id)}`);
    expect(git(repo, ['rev-parse', 'feature']).trim() === headBefore && git(repo, ['status', '--porcelain']).trim() === '', 'the oracle touched the fixture repository');

    // The fake forge serves the repository as acme/rounds, the checkout's origin: fetched without
    // credentials, pushed with bob's (the fake forge's git push needs HTTP basic auth).
    forge = await startForgeProcess();
    const forgeUrl = new URL(forge.url);
    expect(/^127\.0\.0\.1:\d+$/.test(forgeUrl.host), `the fake forge is not on loopback: ${forge.url}`);
    await forge.call('addUser', { login: 'bob', token: 'bob-token' });
    await forge.call('createRepo', { provider: 'github', owner: OWNER, name: NAME, from: repo, defaultBranch: 'main' });
    git(repo, ['remote', 'add', 'origin', `${forge.url}/${OWNER}/${NAME}.git`]);
    git(repo, ['remote', 'set-url', '--push', 'origin', `${forgeUrl.protocol}//bob:bob-token@${forgeUrl.host}/${OWNER}/${NAME}.git`]);
    git(repo, ['fetch', '--quiet', 'origin']);
    expect(git(repo, ['rev-parse', 'origin/feature']).trim() === headBefore && git(repo, ['status', '--porcelain']).trim() === '', 'the fetch from the fake forge did not bring feature as it is');

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
      // The forge's host:port → github; bob's token as GH_TOKEN (code-server swallows GITHUB_TOKEN).
      env: {
        RENNET_FORGES: JSON.stringify([{ host: forgeUrl.host, provider: 'github', apiUrl: forge.githubApiUrl }]),
        GITHUB_TOKEN: '',
        GH_TOKEN: 'bob-token',
        RENNET_FORGE_CLI_TOKENS: '0',
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
  await test("Review Branch (feature vs main): the board shows feature's head and the five lenses settle", async () => {
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

  await test("Hand off before anything is staged: the Changes lane is empty and where Dispatch would be, the host's refusal", async () => {
    expect(generation, 'no settled generation (see the previous test)');
    await focusHandOff();
    const view = await poll(readHandOff, (v) => v.rows.some((r) => r.label?.startsWith(NOTHING_STAGED)), 20_000);
    await screenshot('hand-off-empty');
    rig.log(`rounds: hand off before staging ${showRows(view)}`);
    const lane = changesLane(view);
    expect(lane?.lane.description === 'nothing staged', `the Changes lane reads ${JSON.stringify(lane?.lane)}, expected "nothing staged" (rows ${showRows(view)})`);
    expect(
      view.rows.some((r) => r.level === 1 && r.label?.startsWith(NOTHING_STAGED)),
      `no refusal row "${NOTHING_STAGED}…" (rows ${showRows(view)})`,
    );
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
    const uri = await poll(
      () => editor.getAttribute('data-uri').catch(() => null),
      (u) => /app\.js$/.test(u ?? ''),
      10_000,
    );
    expect(
      !/^rennet-blob:/.test(uri ?? '') && (uri ?? '').endsWith(`${encodeURI(repo)}/src/app.js`),
      `the code card opened ${JSON.stringify(uri)}, expected the checkout's src/app.js (feature is checked out), not the captured blob`,
    );
    // The cursor onto the line alone (the card selected the cited range).
    await collapseSelectionOnLine(page, editor, questionLine);
    const widget = await openCommentWidget(page, editor, questionLine, { label: 'rounds', onHover: () => screenshot('comment-plus') });
    await widget.locator('.comment-form .monaco-editor .view-lines').first().click();
    await page.keyboard.type(QUESTION);
    const typed = await poll(
      () => widget.locator('.comment-form .monaco-editor .view-lines').first().innerText(),
      (t) => t.replace(/\s+/g, ' ').includes(QUESTION),
      3_000,
    );
    expect(typed.replace(/\s+/g, ' ').includes(QUESTION), `the comment box shows ${JSON.stringify(typed)} after typing`);
    const stage = widget.locator('.form-actions .monaco-button, .form-actions button', { hasText: 'Stage Ask' }).first();
    await stage.waitFor({ state: 'visible', timeout: 10_000 });
    await stage.click();
    const staged = page.locator('.review-widget').filter({ hasText: QUESTION }).filter({ hasText: 'Staged ask · comment' }).first();
    await staged.waitFor({ state: 'visible', timeout: 15_000 }).catch(async () => {
      const shown = await page
        .locator('.review-widget')
        .filter({ hasText: QUESTION })
        .first()
        .innerText()
        .catch(() => '(no widget holds it)');
      throw new Error(`the gutter ask was not staged as a comment; its thread shows ${JSON.stringify(shown.replace(/\s+/g, ' ').slice(0, 300))}`);
    });
    await screenshot('comment-staged');
    // Its intent: the comment's "More Actions…" menu, "Ask as Question".
    const comment = staged.locator('.review-comment').filter({ hasText: QUESTION }).first();
    await comment.hover();
    const moreButton = comment.locator('.action-label.codicon-toolbar-more, .action-label[aria-label^="More Actions"]').first();
    await moreButton.click({ timeout: 10_000 }).catch(async (e) => {
      const labels = await comment
        .locator('.action-label')
        .evaluateAll((els) => els.map((a) => `${a.getAttribute('aria-label')} ${a.className}`))
        .catch(() => []);
      throw new Error(`the staged comment has no "More Actions" button (${e.message.split('\n')[0]}); its actions: ${JSON.stringify(labels)}`);
    });
    const item = page
      .locator('.monaco-menu .action-item, .context-view .action-item')
      .filter({ hasText: /^\s*Ask as Question\s*$/ })
      .first();
    await item.waitFor({ state: 'visible', timeout: 10_000 }).catch(async () => {
      const items = await page
        .locator('.monaco-menu .action-item')
        .allInnerTexts()
        .catch(() => []);
      throw new Error(`the comment's menu offers no "Ask as Question": ${JSON.stringify(items)}`);
    });
    await screenshot('ask-as-question-menu');
    await item.click();
    const asQuestion = page.locator('.review-widget').filter({ hasText: QUESTION }).filter({ hasText: 'Staged ask · question' }).first();
    await asQuestion.waitFor({ state: 'visible', timeout: 15_000 }).catch(async () => {
      const shown = await page
        .locator('.review-widget')
        .filter({ hasText: QUESTION })
        .first()
        .innerText()
        .catch(() => '(no widget holds it)');
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
    expect(
      request?.description === `finding: ${FINDING_TITLE}` && request.icons.includes('codicon-request-changes'),
      `the change request's row is ${JSON.stringify(request)} (rows ${showRows(view)})`,
    );
    const question = lane.children.find((r) => r.label === QUESTION);
    expect(question?.description === `src/app.js:${questionLine} (new)` && question.icons.includes('codicon-question'), `the question's row is ${JSON.stringify(question)} (rows ${showRows(view)})`);
    const dispatch = view.rows.find((r) => r.label === 'Dispatch round 1…');
    expect(
      dispatch?.level === 1 && dispatch.description === '1 ask to the coding agent' && dispatch.icons.includes('codicon-run-all'),
      `the Dispatch row is ${JSON.stringify(dispatch)}, expected "Dispatch round 1…" · "1 ask to the coding agent"`,
    );
    expect(!view.rows.some((r) => r.label === 'Rounds'), `a "Rounds" row before any round: ${showRows(view)}`);
  });

  let workOrderShown = null;
  await test('Dispatch round 1…: the modal names 1 ask and the worker; Show Work Order opens the order and the modal comes back; the order quotes the ask and fences its lines as diff; Dispatch', async () => {
    expect(generation, 'no settled generation (see the previous test)');
    await clickRow('Dispatch round 1…');
    await dialog()
      .waitFor({ state: 'visible', timeout: 20_000 })
      .catch(async () => {
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
      const tabs = await page
        .locator('.tabs-container .tab .label-name')
        .allInnerTexts()
        .catch(() => []);
      throw new Error(`Show Work Order opened no read-only work order editor (tabs ${JSON.stringify(tabs)})`);
    });
    // The modal comes back by itself once the order is shown.
    await dialog()
      .waitFor({ state: 'visible', timeout: 15_000 })
      .catch(() => {
        throw new Error('after Show Work Order the Dispatch modal did not come back');
      });
    const again = await readDialog();
    const top = await poll(
      () => drawnLines(orderEditor),
      (t) => t[1] === '# Work order',
      10_000,
    );
    expect(top[1] === '# Work order', `the work order editor draws ${JSON.stringify(top)}`);
    await screenshot('work-order-and-modal');
    expect(again?.message === modal.message, `the modal came back reading ${JSON.stringify(again)}`);
    // Cancel it to read the whole order (the modal holds the keyboard), then dispatch from the row again.
    await dialog()
      .locator('.dialog-buttons .monaco-button', { hasText: /^Cancel$/ })
      .first()
      .click();
    await dialog().waitFor({ state: 'hidden', timeout: 10_000 });
    const shown = await wholeEditor(orderEditor);
    workOrderShown = shown;
    await screenshot('work-order');
    const text = shown.map((l) => l.text);
    rig.log(`rounds: work order as shown (${text.length} lines):\n${text.join('\n')}`);
    expect(
      shown.every((l, i) => l.n === i + 1),
      `the work order's lines were not all read: numbers ${JSON.stringify(shown.map((l) => l.n))}`,
    );
    expect(text[0] === '# Work order', `the shown order opens ${JSON.stringify(text[0])}, expected "# Work order"`);
    const heading = text.find((l) => /^### 1\. /.test(l)) ?? '';
    const id = /ask `([A-Za-z0-9][A-Za-z0-9._:-]*)`/.exec(heading)?.[1] ?? null;
    expect(
      id && heading.includes('Change request') && heading.includes('`src/app.js`') && heading.includes(`lines ${inserted.start}–${inserted.end}`),
      `the order's ask heading is ${JSON.stringify(heading)}, expected the change request on src/app.js lines ${inserted.start}–${inserted.end} with its ask id`,
    );
    expect(text.includes(`> ${FINDING_TITLE}`) && text.includes(`> ${FINDING_REMEDY}`), `the order does not quote the ask's text as "> " lines: ${JSON.stringify(text)}`);
    const fence = text.indexOf('```diff');
    const fenced = fence < 0 ? [] : text.slice(fence + 1, fence + 1 + text.slice(fence + 1).indexOf('```'));
    expect(
      fence > 0 && fenced.includes('+app inserted A') && fenced.includes('+app inserted B'),
      `the order has no \`\`\`diff fence carrying the inserted lines: ${JSON.stringify(text.slice(fence))}`,
    );
    expect(!text.some((l) => l.includes(QUESTION)), `the question reached the work order: ${JSON.stringify(text)}`);
    expect(!text.some((l) => /^### 2\. /.test(l)), `the order holds more than one ask: ${JSON.stringify(text)}`);
    askId = id;

    // The classification the scripted report seat hands in: the ask, addressed, citing every manifest id once.
    fs.writeFileSync(reportFile, JSON.stringify({ outcomes: [{ askId, outcome: 'addressed', evidenceIds: oracle.manifest.map((u) => u.id), note: REPORT_NOTE }], beyond: [] }, null, 2));
    // The board in front of the work order, so the panel's run view can be watched while the round runs.
    await page.locator('.tabs-container .tab', { hasText: 'Rennet · feature vs main' }).first().click();
    await focusHandOff();
    await clickRow('Dispatch round 1…');
    await dialog().waitFor({ state: 'visible', timeout: 20_000 });
    const last = await readDialog();
    expect(last?.message === modal.message, `the second modal reads ${JSON.stringify(last)}`);
    await dialog()
      .locator('.dialog-buttons .monaco-button', { hasText: /^Dispatch$/ })
      .first()
      .click();
    await dialog()
      .waitFor({ state: 'hidden', timeout: 10_000 })
      .catch(() => {});
    dispatched = true;
  });

  const seenRunning = [];
  /** What the panel's run view drew while the round ran: each distinct reading, in order. */
  const runViews = [];
  /** The panel's rounds run view (data-testid rounds-run): its round, state, phase, title, facts, current-phase line and phase list; null when not drawn. */
  async function readRunView() {
    const read = board(page)
      .locator('[data-testid="rounds-run"]')
      .evaluateAll((els) =>
        els.map((e) => ({
          roundId: e.getAttribute('data-round-id'),
          state: e.getAttribute('data-state'),
          phase: e.getAttribute('data-phase'),
          title: e.querySelector('.rn-round-title')?.textContent?.trim() ?? null,
          facts: e.querySelector('[data-testid="rounds-facts"]')?.textContent?.replace(/\s+/g, ' ').trim() ?? null,
          now: e.querySelector('[data-testid="rounds-now"]')?.textContent?.trim() ?? null,
          steps: [...e.querySelectorAll('[data-testid="rounds-phase"]')].map((li) => ({
            phase: li.getAttribute('data-phase'),
            mark: li.getAttribute('data-mark'),
            current: li.getAttribute('aria-current'),
            text: li.textContent.replace(/\s+/g, ' ').trim(),
          })),
        })),
      )
      .then((views) => (views.length === 0 ? null : views.length === 1 ? views[0] : { many: views.length, ...views[0] }))
      .catch(() => null);
    return Promise.race([read, rig.sleep(1_500).then(() => null)]);
  }
  let returned = null;
  await test('the round runs: Hand off shows "Round 1: …" while it runs, then "Round 1 is back: 1 addressed · 0 partial · 0 untouched" under Rounds', async () => {
    expect(dispatched, 'the round was not dispatched (see the previous test)');
    const deadline = Date.now() + 240_000;
    let shotRunning = false;
    let shotRunView = false;
    let view = null;
    for (;;) {
      const run = await readRunView();
      if (run) {
        const key = JSON.stringify(run);
        if (runViews.at(-1)?.key !== key) {
          runViews.push({ key, at: Date.now(), ...run });
          rig.log(`rounds: panel run view ${key}`);
          if (!shotRunView && run.state === 'running') {
            shotRunView = true;
            await screenshot('panel-run-view');
          }
        }
      }
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
      if (Date.now() > deadline)
        throw new Error(
          `the round did not end within 240 s; Hand off rows ${showRows(view)}; running rows seen ${JSON.stringify(seenRunning)}; notifications ${JSON.stringify(await notificationTexts())}`,
        );
      await rig.sleep(100);
    }
    await rig.sleep(300);
    view = await readHandOff();
    await screenshot('round-back');
    rig.log(`rounds: running rows seen ${JSON.stringify(seenRunning)}; final rows ${showRows(view)}`);
    const short = (sha) => sha.slice(0, 7);
    const headAfter = git(repo, ['rev-parse', 'feature']).trim();
    expect(
      returned.label === 'Round 1 is back: 1 addressed · 0 partial · 0 untouched',
      `the round's row reads ${JSON.stringify(returned)} (rows ${showRows(view)}; model requests of the report seat ${JSON.stringify(models.requests.filter((r) => r.seat?.startsWith('round:report')).map((r) => ({ seat: r.seat, last: r.toolResults?.at(-1)?.slice(0, 300) })))})`,
    );
    expect(
      returned.description === `scripted · ${short(headBefore)}..${short(headAfter)}`,
      `the round's row is described ${JSON.stringify(returned.description)}, expected "scripted · ${short(headBefore)}..${short(headAfter)}"`,
    );
    expect(returned.icons.includes('codicon-pass'), `the round's row has icons ${JSON.stringify(returned.icons)}, expected codicon-pass`);
    expect(roundsRows(view)?.row.description === '1', `the Rounds row reads ${JSON.stringify(roundsRows(view)?.row)}`);
    expect(seenRunning.length > 0, `no "Round 1: …" row was seen while the round ran (polled every 100 ms); rows at the end ${showRows(view)}`);
    expect(
      seenRunning.every((l) => /^Round 1: .+…$/.test(l)),
      `running rows ${JSON.stringify(seenRunning)}`,
    );
  });

  let successorGeneration = null;
  await test("after the round: the change request left the Changes lane and the question stayed; the board shows the worker's commit as its head; git has the commit on feature; the report seat read the evidence only through its tool and its report was accepted", async () => {
    expect(returned, 'the round did not return (see the previous test)');
    // git: the worker's one commit on feature, in the reviewer's checkout, nothing left uncommitted.
    const headAfter = git(repo, ['rev-parse', 'feature']).trim();
    const [subject, author, parent] = git(repo, ['log', '-1', '--format=%s%x00%an%x00%P', 'feature']).trim().split('\0');
    const status = git(repo, ['status', '--porcelain']).trim();
    const branch = git(repo, ['rev-parse', '--abbrev-ref', 'HEAD']).trim();
    const appNow = fs.readFileSync(path.join(repo, 'src/app.js'), 'utf8').split('\n');
    rig.log(`rounds: feature ${headBefore} → ${headAfter} "${subject}" by ${author}; status ${JSON.stringify(status)}`);
    expect(
      headAfter !== headBefore && parent === headBefore && subject === COMMIT_MESSAGE && author === 'Rennet Scripted Worker',
      `feature is at ${headAfter} ("${subject}" by ${author}, parent ${parent}); expected the worker's commit "${COMMIT_MESSAGE}" on ${headBefore}`,
    );
    expect(branch === 'feature' && status === '', `the checkout is on ${branch} with status ${JSON.stringify(status)}, expected feature and clean`);
    expect(
      appNow[inserted.start - 1] === NAMED[0] && appNow[inserted.end - 1] === NAMED[1],
      `src/app.js lines ${inserted.start}-${inserted.end} read ${JSON.stringify(appNow.slice(inserted.start - 1, inserted.end))}`,
    );

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
    successorGeneration = successor;
    const headShown = await poll(
      () =>
        board(page)
          .locator('[data-testid="head-id"]')
          .getAttribute('data-full-id', { timeout: 2_000 })
          .catch(() => null),
      (h) => h === headAfter,
      15_000,
    );
    await rig.sleep(300);
    await screenshot('board-after');
    const headText = await board(page)
      .locator('[data-testid="head-id"]')
      .innerText()
      .catch(() => null);
    rig.log(`rounds: board after the round: generation ${generation.id} → ${successor.id}; head ${headShown} (${headText}); rail ${successor.rail.map((t) => `${t.lens}=${t.state}`).join(', ')}`);
    expect(
      successor.rail.every((t) => t.state === 'settled'),
      `the successor's lenses did not all settle: ${JSON.stringify(successor.rail)}`,
    );

    // The host's evidence file in the workspace carries exactly the oracle's manifest.
    const contextRoot = path.join(repo, '.rennet/context');
    const sessions = fs.existsSync(contextRoot) ? fs.readdirSync(contextRoot) : [];
    const evidenceFile = sessions.map((s) => path.join(contextRoot, s, 'evidence.json')).find((f) => fs.existsSync(f));
    expect(evidenceFile, `no evidence.json under ${contextRoot} (sessions ${JSON.stringify(sessions)})`);
    const evidence = JSON.parse(fs.readFileSync(evidenceFile, 'utf8'));
    expect(
      JSON.stringify(evidence.manifest.map((u) => u.id)) === JSON.stringify(oracle.manifest.map((u) => u.id)),
      `the host's manifest ids ${JSON.stringify(evidence.manifest.map((u) => u.id))} differ from the oracle's ${JSON.stringify(oracle.manifest.map((u) => u.id))}`,
    );
    expect(
      JSON.stringify(evidence.asks.map((a) => a.id)) === JSON.stringify([askId]) && evidence.range?.from === headBefore && evidence.range?.to === headAfter,
      `evidence.json names asks ${JSON.stringify(evidence.asks?.map((a) => a.id))} and range ${JSON.stringify(evidence.range)}`,
    );
    // The work order the host wrote is the one shown (the lines the editor drew are its lines).
    const orderOnDisk = fs.readFileSync(path.join(path.dirname(evidenceFile), 'work-order.md'), 'utf8').split('\n');
    const collapse = (s) => s.replace(/\s+/g, ' ').trim();
    const differing = workOrderShown.filter((l) => collapse(orderOnDisk[l.n - 1] ?? '') !== collapse(l.text));
    const extra = orderOnDisk.slice(workOrderShown.length).filter((l) => l.trim() !== '');
    expect(
      differing.length === 0 && extra.length === 0,
      `the work order shown differs from ${path.join(path.dirname(evidenceFile), 'work-order.md')}: lines ${JSON.stringify(differing.slice(0, 5))}, not shown ${JSON.stringify(extra.slice(0, 5))}`,
    );

    // The report seat on the OpenAI-compatible server (the Design lens's harness): three requests.
    const seat = await poll(
      () => models.requests.filter((r) => r.seat?.startsWith('round:report@')),
      (rs) => rs.length >= 3,
      5_000,
    );
    rig.log(
      `rounds: report seat requests ${JSON.stringify(seat.map((r) => ({ server: r.server, seat: r.seat, step: r.step, promptBytes: r.prompt?.join('').length, lastResult: r.toolResults?.at(-1)?.slice(0, 200) })))}`,
    );
    expect(
      JSON.stringify(seat.map((r) => `${r.server} ${r.seat}`)) === JSON.stringify(['openai round:report@0', 'openai round:report@1', 'openai round:report@2']),
      `the report seat's requests were ${JSON.stringify(seat.map((r) => `${r.server} ${r.seat}`))}`,
    );
    const prompt = seat[0].prompt?.join('\n') ?? '';
    expect(prompt.includes('# Rennet: round report'), `the report seat's prompt has no "# Rennet: round report" header: ${JSON.stringify(prompt.slice(0, 300))}`);
    const leaked = [askId, FINDING_TITLE, ...oracle.manifest.map((u) => u.id)].filter((s) => prompt.includes(s));
    expect(leaked.length === 0, `the report seat's prompt carries ${JSON.stringify(leaked)}: the evidence must reach it only through read_evidence`);
    const page1 = seat[1].toolResults?.at(-1) ?? '';
    expect(
      page1.includes(askId) && oracle.manifest.every((u) => page1.includes(u.id)) && /\[page 1 of 1: the last\]/.test(page1),
      `read_evidence's page 1 (resent to the model) does not carry the ask and every oracle id: ${JSON.stringify(page1.slice(0, 600))}`,
    );
    const accepted = seat[2].toolResults?.at(-1) ?? '';
    expect(/^The report is accepted: 1 addressed, 0 partial, 0 untouched, 0 beyond\./.test(accepted), `submit_report was answered ${JSON.stringify(accepted)}`);
    const unresolved = models.requests.filter((r) => r.unresolved?.length > 0);
    expect(unresolved.length === 0, `scripted ids did not resolve: ${JSON.stringify(unresolved.map((r) => [r.seat, r.unresolved]))}`);

    // Last, so the checks above run either way: the panel (in view through the whole round) shows the successor's head.
    expect(
      headShown === headAfter,
      `the board's head is ${headShown}, git rev-parse feature is ${headAfter} (the panel shows generation ${successor.id}, drafted over the successor, but its header still reads the capture before the round)`,
    );
    expect(headText && headAfter.startsWith(headText.trim()), `the header shows head ${JSON.stringify(headText)}, not a prefix of ${headAfter}`);
  });

  // ─── The panel: run view, greeting, composed successor, ledger and round diff ───────────────

  const short7 = (sha) => sha.slice(0, 7);
  const shortGen = (id) => (id.length > 14 ? id.slice(0, 14) : id);
  /** The board tab in front, its generation drawn. */
  async function showBoard() {
    await page.locator('.tabs-container .tab', { hasText: 'Rennet · feature vs main' }).first().click();
    await board(page).locator('[data-testid="generation"]').waitFor({ state: 'visible', timeout: 15_000 });
  }
  /** Selects `lens` on the rail (no Expand all: the board's own folding is what is read). */
  async function showLens(lens) {
    await board(page).locator(`[data-testid="lens-tab"][data-lens="${lens}"]`).click();
    const shown = board(page).locator(`[data-testid="board"][data-lens="${lens}"]`);
    await shown.waitFor({ state: 'visible', timeout: 15_000 });
    await rig.sleep(300);
    return shown;
  }

  await test("the panel's run view while the round ran: \"Round 1 is running\" with its phases read from the round's record (done before the current one, pending after, in order, through the report seat's turn); once back, the run view is gone and the greeting names the same round", async () => {
    expect(returned, 'the round did not return (see "the round runs")');
    rig.log(`rounds: panel run views seen ${JSON.stringify(runViews.map((v) => ({ phase: v.phase, state: v.state, marks: v.steps.map((s) => `${s.phase}:${s.mark}`).join(' '), now: v.now })))}`);
    expect(runViews.length > 0, `the panel drew no run view (data-testid rounds-run) while the round ran (Hand off rows seen ${JSON.stringify(seenRunning)})`);
    const marksWords = { done: 'done', current: 'in progress', pending: 'pending' };
    for (const v of runViews) {
      const at = ROUND_PHASES.indexOf(v.phase);
      const want = ROUND_PHASES.map((_, i) => (i < at ? 'done' : i === at ? 'current' : 'pending'));
      expect(!v.many && v.state === 'running' && v.title === 'Round 1 is running', `the run view read ${JSON.stringify(v)}, expected one running view titled "Round 1 is running"`);
      expect(v.facts === 'scripted worker · 1 ask dispatched' || v.facts?.startsWith('scripted worker · 1 ask dispatched · '), `the run view's facts read ${JSON.stringify(v.facts)}`);
      expect(
        JSON.stringify(v.steps.map((s) => s.phase)) === JSON.stringify(ROUND_PHASES),
        `the run view lists phases ${JSON.stringify(v.steps.map((s) => s.phase))}, expected ${JSON.stringify(ROUND_PHASES)}`,
      );
      expect(
        at >= 0 && JSON.stringify(v.steps.map((s) => s.mark)) === JSON.stringify(want),
        `at phase ${v.phase} the run view marks ${JSON.stringify(v.steps.map((s) => s.mark))}, expected ${JSON.stringify(want)}`,
      );
      expect(
        v.steps
          .filter((s) => s.current === 'step')
          .map((s) => s.phase)
          .join() === v.phase,
        `aria-current="step" sits on ${JSON.stringify(v.steps.filter((s) => s.current).map((s) => s.phase))}, the round is at ${v.phase}`,
      );
      expect(
        v.steps.every((s) => s.text.includes(PHASE_LABELS[s.phase]) && s.text.endsWith(marksWords[s.mark])),
        `the phase rows read ${JSON.stringify(v.steps.map((s) => s.text))}`,
      );
      expect(v.now?.startsWith(`${PHASE_LABELS[v.phase]}: `) && v.now.endsWith('…'), `the current-phase line reads ${JSON.stringify(v.now)} at phase ${v.phase}`);
    }
    const order = runViews.map((v) => ROUND_PHASES.indexOf(v.phase));
    expect(
      order.every((n, i) => i === 0 || n >= order[i - 1]),
      `the run view went back a phase: ${JSON.stringify(runViews.map((v) => v.phase))}`,
    );
    // The host records the report seat's turn in the verification phase (report: the successor's capture, quick).
    const verifying = runViews.find((v) => v.phase === 'verification');
    expect(
      verifying,
      `the run view was never seen in the verification phase (the report seat's turn, whose first answer waits ${REPORT_DELAY_MS} ms): phases seen ${JSON.stringify(runViews.map((v) => v.phase))}`,
    );
    expect(
      verifying.now === 'Verification: drafting the report on each ask and checking every claim against the measured diff…' && verifying.steps.find((s) => s.phase === 'report')?.mark === 'done',
      `while the report seat drafts, the run view reads ${JSON.stringify(verifying.now)} with Report ${verifying.steps.find((s) => s.phase === 'report')?.mark}`,
    );
    expect(new Set(runViews.map((v) => v.phase)).size >= 2, `the run view was seen in one phase only: it did not follow the round (${JSON.stringify(runViews.map((v) => v.phase))})`);
    const ids = [...new Set(runViews.map((v) => v.roundId))];
    expect(ids.length === 1 && ids[0], `the run view named rounds ${JSON.stringify(ids)}`);
    await showBoard();
    const after = await readRunView();
    const greetingRound = await board(page)
      .locator('[data-testid="rounds-greeting"]')
      .getAttribute('data-round-id', { timeout: 10_000 })
      .catch(() => null);
    expect(after === null, `the run view is still drawn after the round returned: ${JSON.stringify(after)}`);
    expect(greetingRound === ids[0], `the greeting names round ${JSON.stringify(greetingRound)}, the run view named ${ids[0]}`);
  });

  let roundId = null;
  await test('the report greeting: "Round 1 is back", its facts and verified counts, the dispatched ask\'s outcome "Addressed" with the ask\'s own words rendered as text, the report\'s note and its evidence; an "Open round diff" button', async () => {
    expect(returned && askId, 'the round did not return (see "the round runs")');
    await showBoard();
    const greeting = board(page).locator('[data-testid="rounds-greeting"]');
    await greeting.waitFor({ state: 'visible', timeout: 15_000 });
    await greeting.scrollIntoViewIfNeeded();
    const g = await greeting.evaluate((e) => {
      const txt = (n) => (n ? n.textContent.replace(/\s+/g, ' ').trim() : null);
      return {
        roundId: e.getAttribute('data-round-id'),
        state: e.getAttribute('data-state'),
        title: txt(e.querySelector('.rn-round-title')),
        facts: txt(e.querySelector('[data-testid="rounds-facts"]')),
        // Each count after the first carries its " · " separator.
        counts: Object.fromEntries([...e.querySelectorAll('[data-count]')].map((c) => [c.getAttribute('data-count'), { value: c.getAttribute('data-value'), text: txt(c).replace(/^·\s*/, '') }])),
        outcomes: [...e.querySelectorAll('[data-testid="rounds-outcome"]')].map((o) => {
          const ask = o.querySelector('[data-testid="rounds-ask-text"]');
          return {
            askId: o.getAttribute('data-ask-id'),
            outcome: o.getAttribute('data-outcome'),
            kind: txt(o.querySelector('[data-testid="rounds-outcome-kind"]')),
            paragraphs: ask ? [...ask.querySelectorAll('p')].map((p) => txt(p)) : null,
            askTags: ask ? [...new Set([...ask.querySelectorAll('*')].map((n) => n.tagName.toLowerCase()))] : null,
            askText: ask?.innerText ?? null,
            note: txt(o.querySelector('[data-testid="rounds-note"]')),
            evidence: [...o.querySelectorAll('[data-testid="rounds-evidence"]')].map((b) => ({
              tag: b.tagName.toLowerCase(),
              text: txt(b),
              path: b.getAttribute('data-path'),
              side: b.getAttribute('data-side'),
              line: b.getAttribute('data-line'),
            })),
          };
        }),
        diffButton: txt(e.querySelector('[data-testid="round-diff"]')),
      };
    });
    await screenshot('round-greeting');
    rig.log(`rounds: greeting ${JSON.stringify(g)}`);
    roundId = g.roundId;
    const range = `${short7(headBefore)}..${short7(git(repo, ['rev-parse', 'feature']).trim())}`;
    expect(g.title === 'Round 1 is back' && g.state === 'returned', `the greeting reads ${JSON.stringify({ title: g.title, state: g.state })}`);
    expect(g.facts === `scripted worker · 1 ask dispatched · ${range}`, `the greeting's facts read ${JSON.stringify(g.facts)}, expected "scripted worker · 1 ask dispatched · ${range}"`);
    const counts = Object.fromEntries(Object.entries(g.counts).map(([k, v]) => [k, v.text]));
    expect(
      JSON.stringify(counts) === JSON.stringify({ addressed: '1 addressed', partial: '0 partial', untouched: '0 untouched', beyond: '0 beyond' }),
      `the greeting's counts read ${JSON.stringify(g.counts)}`,
    );
    expect(g.outcomes.length === 1, `the greeting lists ${g.outcomes.length} outcomes, expected the one dispatched ask: ${JSON.stringify(g.outcomes)}`);
    const [o] = g.outcomes;
    expect(
      o.askId === askId && o.outcome === 'addressed' && o.kind === 'Addressed',
      `the outcome row is ${JSON.stringify({ askId: o.askId, outcome: o.outcome, kind: o.kind })}, expected ask ${askId} "Addressed"`,
    );
    expect(
      JSON.stringify(o.paragraphs) === JSON.stringify([FINDING_TITLE, FINDING_REMEDY]),
      `the ask's words are drawn as ${JSON.stringify(o.paragraphs)} (text ${JSON.stringify(o.askText)}), expected the two paragraphs ${JSON.stringify([FINDING_TITLE, FINDING_REMEDY])}`,
    );
    expect(
      o.askTags.every((t) => ['div', 'p'].includes(t)),
      `the ask's words are drawn with ${JSON.stringify(o.askTags)}: plain paragraphs expected (no link, no citation, no markup left raw)`,
    );
    expect(o.note === REPORT_NOTE, `the report's note reads ${JSON.stringify(o.note)}, expected ${JSON.stringify(REPORT_NOTE)}`);
    expect(
      o.evidence.length === 1 &&
        o.evidence[0].tag === 'button' &&
        o.evidence[0].text === `src/app.js:${inserted.start} (new)` &&
        o.evidence[0].side === 'head' &&
        o.evidence[0].line === String(inserted.start),
      `the outcome's evidence is ${JSON.stringify(o.evidence)}, expected one button "src/app.js:${inserted.start} (new)"`,
    );
    expect(g.diffButton === 'Open round diff', `the greeting's round diff button reads ${JSON.stringify(g.diffButton)}`);
  });

  await test("the composed successor: the rail's lane verdicts (Sequence and Flagged reworked, Design, Decisions and Noise carrying forward); Sequence's \"Round 1 · Addressed\" chapter stamped new and opened, its outcome on the worker's lines, carried sections folded; the addressed finding gone from Flagged; the switcher lists the earlier generation, frozen, which still holds it", async () => {
    expect(successorGeneration && askId, 'no successor generation (see "after the round")');
    await showBoard();
    const rail = await board(page)
      .locator('[data-testid="lens-tab"]')
      .evaluateAll((els) =>
        els.map((e) => {
          const d = e.querySelector('[data-testid="lens-tab-delta"]');
          return {
            lens: e.getAttribute('data-lens'),
            verdict: d?.getAttribute('data-verdict') ?? null,
            words: d ? d.textContent.replace(/[•\s]+/g, ' ').trim() : null,
            title: e.getAttribute('title'),
          };
        }),
      );
    rig.log(`rounds: successor rail ${JSON.stringify(rail)}`);
    const verdicts = Object.fromEntries(rail.map((t) => [t.lens, t.verdict]));
    expect(JSON.stringify(verdicts) === JSON.stringify(LANE_VERDICTS), `the rail's lane verdicts are ${JSON.stringify(verdicts)}, expected ${JSON.stringify(LANE_VERDICTS)}`);
    const wordsOf = { 'carrying-forward': 'carrying forward', reworked: 'reworked' };
    expect(
      rail.every((t) => t.words === wordsOf[t.verdict]),
      `the rail's verdict words read ${JSON.stringify(rail.map((t) => [t.lens, t.words]))}`,
    );
    const seqTitle = rail.find((t) => t.lens === 'sequence')?.title ?? '';
    expect(seqTitle.endsWith('Round 1: re-drafted; sections 1 new.'), `the Sequence tab's title reads ${JSON.stringify(seqTitle)}, expected it to end "Round 1: re-drafted; sections 1 new."`);
    expect(
      rail.filter((t) => t.verdict === 'carrying-forward').every((t) => t.title?.endsWith('Round 1: re-drafted, and nothing on this board changed.')),
      `the carrying-forward tabs' titles read ${JSON.stringify(rail.map((t) => [t.lens, t.title]))}`,
    );

    // Sequence, freshly drawn (another lens first): touched sections open, carried ones folded.
    await showLens('design');
    const sequence = await showLens('sequence');
    const sections = await sequence.locator('[data-testid="element"][data-kind="section"]').evaluateAll((els) =>
      els.map((e) => {
        const txt = (n) => (n ? n.textContent.replace(/\s+/g, ' ').trim() : null);
        const heading = e.querySelector(':scope > :is(h1,h2,h3,h4,h5,h6)');
        return {
          id: e.getAttribute('data-id'),
          folded: e.classList.contains('rn-fold'),
          expanded: e.getAttribute('data-expanded'),
          title: txt(heading?.querySelector('.rn-fold-title') ?? heading)?.replace(/\s*(new|reworked)$/, '') ?? null,
          delta: txt(heading?.querySelector('[data-testid="delta"]')),
          outcomes: [...e.querySelectorAll('[data-kind="round_outcome"]')].map((o) => ({
            badge: txt(o.querySelector('[data-testid="outcome"]')),
            ask: txt(o.querySelector('code')),
            text: o.innerText,
          })),
          cards: [...e.querySelectorAll('[data-testid="code-card"]')].map((c) => ({
            path: c.getAttribute('data-path'),
            side: c.getAttribute('data-side'),
            start: Number(c.getAttribute('data-start')),
            end: Number(c.getAttribute('data-end')),
          })),
        };
      }),
    );
    const chapterEl = sequence.locator('[data-testid="element"][data-kind="section"]').filter({ hasText: CHAPTER_TITLE }).first();
    await chapterEl.scrollIntoViewIfNeeded().catch(() => {});
    await rig.sleep(200);
    await screenshot('sequence-round-chapter');
    rig.log(`rounds: successor Sequence sections ${JSON.stringify(sections.map((s) => ({ ...s, outcomes: s.outcomes.map((o) => ({ ...o, text: o.text.slice(0, 120) })) })))}`);
    const chapter = sections.find((s) => s.title === CHAPTER_TITLE);
    expect(chapter, `Sequence has no section titled ${JSON.stringify(CHAPTER_TITLE)}: ${JSON.stringify(sections.map((s) => s.title))}`);
    expect(chapter.delta === 'new', `the chapter's delta badge reads ${JSON.stringify(chapter.delta)}, expected "new"`);
    expect(!chapter.folded || chapter.expanded === 'true', `the chapter is folded (data-expanded ${chapter.expanded}): a touched section opens expanded`);
    expect(
      chapter.outcomes.length === 1 && chapter.outcomes[0].badge === 'addressed' && chapter.outcomes[0].ask === askId,
      `the chapter's round outcomes are ${JSON.stringify(chapter.outcomes)}, expected one "addressed" for ask ${askId}`,
    );
    expect(
      chapter.outcomes[0].text.includes(FINDING_TITLE) && chapter.outcomes[0].text.includes(FINDING_REMEDY),
      `the chapter's outcome does not carry the ask's words: ${JSON.stringify(chapter.outcomes[0].text)}`,
    );
    expect(
      chapter.cards.some((c) => c.path === 'src/app.js' && c.side === 'head' && c.start === inserted.start),
      `the chapter's code cards are ${JSON.stringify(chapter.cards)}, expected one on src/app.js head line ${inserted.start} (the worker's lines)`,
    );
    const carried = sections.filter((s) => s.folded && s.delta === null);
    expect(
      carried.length > 0 && carried.every((s) => s.expanded === 'false'),
      `carried (unstamped) top-level sections should stay folded: ${JSON.stringify(sections.map((s) => [s.title, s.delta, s.folded, s.expanded]))}`,
    );
    expect(
      sections.filter((s) => s.folded && s.delta !== null).every((s) => s.expanded === 'true'),
      `a stamped section is folded: ${JSON.stringify(sections.map((s) => [s.title, s.delta, s.folded, s.expanded]))}`,
    );

    // Flagged: the compiler re-raised the same finding (same category and title); the report verified its ask addressed, so the composition dropped it.
    const flagged = await showLens('flagged');
    const findings = await flagged.locator('[data-testid="element"][data-kind="finding"]').allInnerTexts();
    const flaggedText = (await flagged.innerText()).replace(/\s+/g, ' ');
    await screenshot('flagged-after-round');
    rig.log(`rounds: successor Flagged: ${findings.length} findings; text ${JSON.stringify(flaggedText.slice(0, 500))}`);
    expect(findings.length === 0, `the successor's Flagged board still shows ${findings.length} findings: ${JSON.stringify(findings.map((f) => f.slice(0, 120)))}`);
    // Its title is read only in the host's note that says why it left.
    const note = `Round 1: addressed as asked, so no longer listed here — “${FINDING_TITLE}”.`;
    expect(flaggedText.includes(note), `the successor's Flagged board does not say the finding left as addressed (expected ${JSON.stringify(note)}): ${JSON.stringify(flaggedText.slice(0, 400))}`);
    expect(flaggedText.split(FINDING_TITLE).length === 2, `the successor's Flagged board reads ${JSON.stringify(FINDING_TITLE)} beside its note: ${JSON.stringify(flaggedText.slice(0, 400))}`);
    expect(!/Round 1: an earlier disposition/.test(flaggedText), `Flagged says the disposition matched more than one finding: ${JSON.stringify(flaggedText.slice(0, 400))}`);

    // The switcher: the latest, and the earlier generation, read-only.
    const switcher = board(page).locator('[data-testid="generation-switcher"]');
    const options = await switcher.locator('option').evaluateAll((os) => os.map((o) => ({ value: o.value, label: o.textContent.trim(), selected: o.selected })));
    rig.log(`rounds: generation switcher ${JSON.stringify(options)}`);
    expect(
      options.length === 2 && options[0].value === '' && options[0].label === `Latest (${shortGen(successorGeneration.id)})` && options[0].selected,
      `the switcher's first option is ${JSON.stringify(options[0])} (of ${options.length}), expected "Latest (${shortGen(successorGeneration.id)})", selected`,
    );
    expect(
      options[1]?.value === generation.id && options[1].label.endsWith(`· ${shortGen(generation.id)} (read-only)`),
      `the switcher's second option is ${JSON.stringify(options[1])}, expected the earlier generation ${generation.id}, read-only`,
    );
    await switcher.selectOption(generation.id);
    try {
      const frozen = await poll(
        async () => ({
          id: await generationId(page),
          status: await board(page)
            .locator('[data-testid="generation"]')
            .getAttribute('data-status', { timeout: 2_000 })
            .catch(() => null),
        }),
        (g) => g.id === generation.id && g.status === 'frozen',
        15_000,
      );
      expect(frozen.id === generation.id && frozen.status === 'frozen', `after picking the earlier generation the board shows ${JSON.stringify(frozen)}`);
      // Its Flagged board folds the finding's section: unfolded (Expand all) to draw the finding.
      const oldFlagged = await selectLens(page, 'flagged');
      const oldFinding = oldFlagged.locator('[data-testid="element"][data-kind="finding"]').filter({ hasText: FINDING_TITLE });
      await oldFinding
        .first()
        .waitFor({ state: 'visible', timeout: 10_000 })
        .catch(() => {});
      const oldCount = await oldFinding.count();
      const note = await board(page)
        .locator('[data-testid="frozen-note"]')
        .textContent({ timeout: 5_000 })
        .then((t) => t.replace(/\s+/g, ' ').trim())
        .catch(() => null);
      const oldDeltas = await board(page).locator('[data-testid="lens-tab-delta"]').count();
      const requestButtons = await oldFinding
        .first()
        .locator('[data-testid="finding-request"]')
        .evaluateAll((bs) => bs.map((b) => ({ disabled: b.disabled || b.getAttribute('aria-disabled') === 'true' })))
        .catch(() => []);
      await screenshot('frozen-generation-flagged');
      rig.log(
        `rounds: frozen generation ${generation.id}: ${oldCount} "${FINDING_TITLE}"; note ${JSON.stringify(note)}; lane verdicts ${oldDeltas}; request buttons ${JSON.stringify(requestButtons)}`,
      );
      expect(oldCount === 1, `the frozen generation's Flagged board shows ${oldCount} findings titled ${JSON.stringify(FINDING_TITLE)}, expected the one the change request was staged on`);
      expect(note?.includes('Read-only') && note.includes('An earlier generation of this review'), `the frozen generation's note reads ${JSON.stringify(note)}`);
      expect(oldDeltas === 0, `the first generation's rail shows ${oldDeltas} lane verdicts (it has no predecessor)`);
    } finally {
      await board(page)
        .locator('[data-testid="show-live"]')
        .click({ timeout: 10_000 })
        .catch((e) => rig.log(`rounds: "Show the latest": ${e.message.split('\n')[0]}`));
    }
    const live = await poll(
      async () => ({
        id: await generationId(page),
        status: await board(page)
          .locator('[data-testid="generation"]')
          .getAttribute('data-status', { timeout: 2_000 })
          .catch(() => null),
      }),
      (g) => g.id === successorGeneration.id && g.status === 'live',
      15_000,
    );
    expect(live.id === successorGeneration.id && live.status === 'live', `"Show the latest" shows ${JSON.stringify(live)}, expected the successor ${successorGeneration.id}, live`);
  });

  await test('the ledger: one row for round 1 (back, 1 ask, its range, the scripted worker, the checkout, the generation it minted and the frozen one before it); "Open round diff" opens VS Code\'s multi-file diff over rennet-round: documents showing the worker\'s change, read-only, with no comment gutter', async () => {
    expect(successorGeneration && roundId, 'no successor or no greeting (see the previous tests)');
    await showBoard();
    const headAfter = git(repo, ['rev-parse', 'feature']).trim();
    const range = `${short7(headBefore)}..${short7(headAfter)}`;
    const ledger = board(page).locator('[data-testid="rounds-ledger"]');
    await ledger.waitFor({ state: 'visible', timeout: 10_000 });
    const summary = (await ledger.locator('summary').innerText()).trim();
    if (!(await ledger.evaluate((d) => d.open))) await ledger.locator('summary').click();
    const rows = await ledger.locator('[data-testid="rounds-row"]').evaluateAll((els) =>
      els.map((e) => {
        const txt = (sel) => e.querySelector(sel)?.textContent?.replace(/\s+/g, ' ').trim() ?? null;
        return {
          id: e.getAttribute('data-round-id'),
          ordinal: e.getAttribute('data-ordinal'),
          state: e.getAttribute('data-state'),
          title: txt('.rn-rounds-row-title'),
          stateWords: txt('[data-testid="rounds-row-state"]'),
          asks: txt('[data-testid="rounds-row-asks"]'),
          range: txt('[data-testid="rounds-row-range"]'),
          worker: txt('[data-testid="rounds-row-worker"]'),
          workspace: txt('[data-testid="rounds-row-workspace"]'),
          generation: txt('[data-testid="rounds-row-generation"]'),
          earlier: txt('[data-testid="rounds-row-earlier"]'),
          earlierSelect: e.querySelector('[data-testid="rounds-row-earlier"] [data-testid="rounds-select-generation"]')?.getAttribute('data-generation-id') ?? null,
          diff: txt('[data-testid="round-diff"]'),
        };
      }),
    );
    const rowEl = ledger.locator('[data-testid="rounds-row"][data-ordinal="1"]').first();
    await rowEl.scrollIntoViewIfNeeded();
    await rig.sleep(200);
    await screenshot('rounds-ledger');
    rig.log(`rounds: ledger ${JSON.stringify(summary)} ${JSON.stringify(rows)}`);
    expect(summary === 'Rounds (1)' && rows.length === 1, `the ledger reads ${JSON.stringify(summary)} with ${rows.length} rows`);
    const [row] = rows;
    expect(row.id === roundId && row.ordinal === '1' && row.state === 'returned' && row.title === 'Round 1' && row.stateWords === 'back', `the ledger row is ${JSON.stringify(row)}`);
    expect(
      row.asks === '1 ask' && row.range === range && row.worker === 'scripted worker' && row.workspace === `${repo} · feature`,
      `the ledger row's facts are ${JSON.stringify({ asks: row.asks, range: row.range, worker: row.worker, workspace: row.workspace })}, expected 1 ask, ${range}, scripted worker, ${repo} · feature`,
    );
    expect(row.generation === `${shortGen(successorGeneration.id)} minted by this round; shown now`, `the row's generation reads ${JSON.stringify(row.generation)}`);
    expect(
      row.earlier?.startsWith(`${shortGen(generation.id)} frozen, kept read-only`) && row.earlierSelect === generation.id,
      `the row's earlier generation reads ${JSON.stringify(row.earlier)} (select ${row.earlierSelect}), expected ${shortGen(generation.id)}, frozen`,
    );
    expect(row.diff === 'Open round diff', `the row's diff button reads ${JSON.stringify(row.diff)}`);

    // Open round diff → vscode.changes over rennet-round: documents.
    const controlGlyphs = await page.locator('.part.editor .monaco-editor[data-uri$="/src/app.js"]:not([data-uri^="rennet-"]) .comment-range-glyph').count();
    await rowEl.locator('[data-testid="round-diff"]').click();
    const tabTitle = `Round 1 · ${range} (read-only)`;
    await page
      .locator('.tabs-container .tab', { hasText: tabTitle })
      .first()
      .waitFor({ state: 'visible', timeout: 20_000 })
      .catch(async () => {
        const tabs = await page
          .locator('.tabs-container .tab .label-name')
          .allInnerTexts()
          .catch(() => []);
        throw new Error(`"Open round diff" opened no tab titled ${JSON.stringify(tabTitle)} (tabs ${JSON.stringify(tabs)}; notifications ${JSON.stringify(await notificationTexts())})`);
      });
    const roundEditors = page.locator('.part.editor .monaco-editor[data-uri^="rennet-round:"]').filter({ visible: true });
    await poll(
      () => roundEditors.count(),
      (n) => n >= 2,
      15_000,
    );
    const sides = await roundEditors.evaluateAll((els) =>
      els.map((e) => {
        const raw = e.getAttribute('data-uri');
        const decoded = decodeURIComponent(raw);
        const q = new URLSearchParams(decoded.slice(decoded.indexOf('?') + 1));
        return {
          raw,
          path: decoded.slice('rennet-round:'.length, decoded.indexOf('?')),
          side: q.get('side'),
          round: q.get('round'),
          pane: e.closest('.editor.original') ? 'original' : e.closest('.editor.modified') ? 'modified' : null,
          multi: Boolean(e.closest('.multiDiffEditor, [class*="multiDiff"]')),
        };
      }),
    );
    rig.log(`rounds: round diff editors ${JSON.stringify(sides)}`);
    const base = sides.findIndex((s) => s.side === 'base');
    const headIdx = sides.findIndex((s) => s.side === 'head');
    expect(
      base >= 0 && headIdx >= 0 && sides.every((s) => s.path === '/src/app.js' && s.round === roundId),
      `the round diff's editors are ${JSON.stringify(sides)}, expected src/app.js before (side=base) and after (side=head) of round ${roundId}`,
    );
    expect(
      sides[base].pane === 'original' && sides[headIdx].pane === 'modified' && sides.every((s) => s.multi),
      `the round diff's editors sit in ${JSON.stringify(sides.map((s) => [s.side, s.pane, s.multi]))}: expected VS Code's multi-file diff, before as original, after as modified`,
    );
    const before = await poll(
      () => drawnLines(roundEditors.nth(base)),
      (l) => l[inserted.start] === 'app inserted A' && l[inserted.end] === 'app inserted B',
      10_000,
    );
    const after = await poll(
      () => drawnLines(roundEditors.nth(headIdx)),
      (l) => l[inserted.start] === NAMED[0] && l[inserted.end] === NAMED[1],
      10_000,
    );
    await rig.sleep(300);
    await screenshot('round-diff');
    expect(
      before[inserted.start] === 'app inserted A' && before[inserted.end] === 'app inserted B',
      `the round diff's before side draws ${JSON.stringify(before)}, expected lines ${inserted.start}-${inserted.end} "app inserted A/B"`,
    );
    expect(
      after[inserted.start] === NAMED[0] && after[inserted.end] === NAMED[1],
      `the round diff's after side draws ${JSON.stringify(after)}, expected lines ${inserted.start}-${inserted.end} ${JSON.stringify(NAMED)}`,
    );

    // No comment gutter: no commenting-range glyph, and hovering and clicking the gutter opens nothing. The
    // positive control is the question staged earlier through src/app.js's glyph (openCommentWidget). The
    // checkout's src/app.js beside the diff is only logged: after the round the window still holds the
    // pre-round session (see "after the round"), so it offers no range there either.
    const modified = roundEditors.nth(headIdx);
    const glyphs = await roundEditors.locator('.comment-range-glyph').count();
    const tops = await visibleLineTops(modified);
    expect(inserted.start in tops, `line ${inserted.start} is not drawn in the round diff's after side (drawn: ${Object.keys(tops).join(',')})`);
    const gutter = await modified.evaluate((ed, top) => {
      const n = [...ed.querySelectorAll('.margin-view-overlays .line-numbers')].find((e) => Math.abs(parseFloat(e.parentElement?.style.top || e.style.top) - top) < 2);
      const text = ed.querySelector('.view-lines')?.getBoundingClientRect();
      const r = n?.getBoundingClientRect();
      return r && text ? { x: Math.round((r.right + text.left) / 2), y: Math.round(r.y + r.height / 2), numberRight: r.right, textLeft: text.left } : null;
    }, tops[inserted.start]);
    expect(gutter, `no line number ${inserted.start} to hover in the round diff's after side`);
    await page.mouse.move(gutter.x - 30, gutter.y);
    await page.mouse.move(gutter.x, gutter.y);
    await rig.sleep(800);
    const hoverGlyphs = await roundEditors.locator('.comment-range-glyph').count();
    await screenshot('round-diff-gutter-hover');
    await page.mouse.click(gutter.x, gutter.y);
    await rig.sleep(1_500);
    const widgets = await roundEditors.locator('.review-widget').count();
    // Read-only: a key typed on the after side changes nothing.
    const lineBox = await modified.locator('.view-lines .view-line').evaluateAll((els, top) => {
      const el = els.find((e) => Math.abs(parseFloat(e.style.top) - top) < 2);
      const r = el?.getBoundingClientRect();
      return r ? { x: r.x + 20, y: r.y + r.height / 2 } : null;
    }, tops[inserted.start]);
    await page.mouse.click(lineBox.x, lineBox.y);
    await page.keyboard.type('x');
    await rig.sleep(500);
    const typed = await drawnLines(modified);
    const readOnlyNote = await page
      .locator('.monaco-editor-overlaymessage, .monaco-hover')
      .filter({ hasText: /read-only/i })
      .allInnerTexts()
      .catch(() => []);
    await screenshot('round-diff-gutter-clicked');
    rig.log(
      `rounds: round diff gutter at ${JSON.stringify(gutter)}: comment glyphs ${glyphs} (the checkout's app.js: ${controlGlyphs}), on hover ${hoverGlyphs}, review widgets after the click ${widgets}; after typing line ${inserted.start} reads ${JSON.stringify(typed[inserted.start])}; read-only notes ${JSON.stringify(readOnlyNote)}`,
    );
    expect(glyphs === 0 && hoverGlyphs === 0, `the round diff offers a comment gutter: ${glyphs} comment-range glyphs, ${hoverGlyphs} on hover`);
    expect(widgets === 0, `clicking the round diff's gutter opened ${widgets} comment widgets`);
    expect(typed[inserted.start] === NAMED[0], `typing on the round diff's after side changed line ${inserted.start} to ${JSON.stringify(typed[inserted.start])}: it is not read-only`);
    await page.keyboard.press('Escape');
    await rig.runCommand(page, 'View: Close Editor');
    await page
      .locator('.tabs-container .tab', { hasText: tabTitle })
      .first()
      .waitFor({ state: 'detached', timeout: 10_000 })
      .catch(() => {});
  });

  await test("Dispatch with only the question staged: the row reads the host's refusal, not a Dispatch action; Dispatch Round says so and opens no modal", async () => {
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
    const modalShown = await dialog()
      .isVisible()
      .catch(() => false);
    await screenshot('dispatch-refused');
    rig.log(`rounds: Dispatch Round with only the question: notifications ${JSON.stringify(notes)}; modal ${modalShown}`);
    expect(
      notes.some((t) => t.includes('no round to dispatch') && t.includes(ONLY_QUESTIONS)),
      `Dispatch Round's notification reads ${JSON.stringify(notes)}, expected "Rennet: no round to dispatch — ${ONLY_QUESTIONS} …"`,
    );
    expect(!modalShown, `Dispatch Round opened a modal with only a question staged: ${modalShown ? JSON.stringify(await readDialog()) : ''}`);
    const after = await readHandOff();
    expect(
      after.rows.some((r) => r.level === 1 && r.label?.startsWith(ONLY_QUESTIONS)) && !after.rows.some((r) => /^Dispatch round/.test(r.label ?? '')),
      `after Dispatch Round the Hand off rows are ${showRows(after)}`,
    );
    expect(
      git(repo, ['rev-parse', 'feature']).trim() === git(repo, ['rev-parse', 'HEAD']).trim() && git(repo, ['rev-list', '--count', `${headBefore}..feature`]).trim() === '1',
      'a second round ran: feature moved again',
    );
  });

  await test('Open pull request… from the Hand off view: while the question is staged the row waits; with it unstaged "Open pull request…" is offered for feature → main; its modal shows the Design lens\'s title and description; Push and Open Pull Request pushes the worker\'s commit and the fake forge holds #1 with exactly that text', async () => {
    expect(returned && forge, 'the round did not return or the forge did not start (see the previous tests)');
    const headAfter = git(repo, ['rev-parse', 'feature']).trim();
    const waiting = 'Pull request: feature → main opens from here once nothing is left to ask.';
    await focusHandOff();
    let view = await poll(readHandOff, (v) => v.rows.some((r) => r.label === waiting), 10_000);
    rig.log(`rounds: hand off before unstaging the question ${showRows(view)}`);
    expect(
      view.rows.some((r) => r.level === 1 && r.label === waiting) && !view.rows.some((r) => r.label === 'Open pull request…'),
      `with the question staged the Hand off rows are ${showRows(view)}, expected "${waiting}" and no "Open pull request…"`,
    );
    // Unstage the question: its row's inline Unstage action.
    const questionRow = page.locator('.part.sidebar .pane .monaco-list-row').filter({ hasText: QUESTION }).first();
    const box = await questionRow.boundingBox();
    await page.mouse.move(box.x + 60, box.y + box.height / 2);
    await questionRow.locator('.action-label[aria-label="Unstage"]').click();
    view = await poll(readHandOff, (v) => v.rows.some((r) => r.label === 'Open pull request…'), 15_000);
    await screenshot('hand-off-open-pr');
    rig.log(`rounds: hand off with nothing staged ${showRows(view)}`);
    const row = view.rows.find((r) => r.label === 'Open pull request…');
    expect(
      row?.level === 1 && row.description === 'feature → main' && row.icons.includes('codicon-git-pull-request-create'),
      `the "Open pull request…" row is ${JSON.stringify(row)} (rows ${showRows(view)})`,
    );
    expect(changesLane(view)?.lane.description === 'nothing staged' && !view.rows.some((r) => r.label === QUESTION), `after Unstage the Changes lane reads ${JSON.stringify(changesLane(view))}`);
    expect((await forge.call('pullRequests', { owner: OWNER, name: NAME })).length === 0, 'the forge holds a request before Open');

    const requestsBefore = models.requests.length;
    await rig.runCommand(page, 'Notifications: Clear All Notifications');
    await clickRow('Open pull request…');
    await dialog()
      .waitFor({ state: 'visible', timeout: 120_000 })
      .catch(async () => {
        throw new Error(
          `no modal within 120 s of "Open pull request…" (notifications ${JSON.stringify(await notificationTexts())}; opener requests ${JSON.stringify(models.requests.slice(requestsBefore).map((r) => r.seat))})`,
        );
      });
    const modal = await dialog().evaluate((d) => ({
      message: d.querySelector('.dialog-message-text')?.innerText ?? null,
      detail: d.querySelector('.dialog-message-detail')?.innerText ?? null,
      buttons: [...d.querySelectorAll('.dialog-buttons .monaco-button')].map((b) => b.textContent.trim()),
    }));
    await rig.sleep(300);
    await screenshot('open-pr-modal');
    rig.log(`rounds: the Open Pull Request modal ${JSON.stringify(modal)}`);
    const opener = models.requests
      .slice(requestsBefore)
      .filter((r) => /^design:opener@/.test(r.seat ?? ''))
      .map((r) => `${r.server} ${r.seat}`);
    expect(JSON.stringify(opener) === JSON.stringify([0, 1, 2, 3, 4, 5].map((n) => `openai design:opener@${n}`)), `the opener's requests were ${JSON.stringify(opener)}`);
    expect(modal.message === `feature → main: ${OPENER_TITLE}`, `the modal's message reads ${JSON.stringify(modal.message)}, expected ${JSON.stringify(`feature → main: ${OPENER_TITLE}`)}`);
    const host = new URL(forge.url).host;
    const wantDetail = [
      `Pushes feature to ${OWNER}/${NAME} on ${host} (remote origin) and opens a request feature → main with this title and description:`,
      '',
      OPENER_TITLE,
      '',
      OPENER_BODY,
      '',
      "Title and description written by openai-compatible (scripted-model) from the branch's review.",
    ].join('\n');
    expect(modal.detail === wantDetail, `the modal's detail reads\n  ${JSON.stringify(modal.detail)}\nexpected\n  ${JSON.stringify(wantDetail)}`);
    const open = 'Push and Open Pull Request';
    expect(modal.buttons.includes(open), `the modal's buttons are ${JSON.stringify(modal.buttons)}`);

    await dialog().locator('.dialog-buttons .monaco-button', { hasText: open }).first().click();
    const toast = page
      .locator('.notifications-toasts .notification-toast')
      .filter({ hasText: /Rennet: opened / })
      .first();
    await toast.waitFor({ state: 'visible', timeout: 60_000 }).catch(async () => {
      throw new Error(`no "Rennet: opened …" notification within 60 s of ${open} (notifications ${JSON.stringify(await notificationTexts())})`);
    });
    const said = (await toast.locator('.notification-list-item-message').first().innerText()).trim();
    await rig.sleep(300);
    await screenshot('open-pr-opened');
    const pulls = await forge.call('pullRequests', { owner: OWNER, name: NAME });
    const remoteHead = git(repo, ['ls-remote', 'origin', 'refs/heads/feature']).trim().split(/\s+/)[0];
    rig.log(
      `rounds: after ${open}: ${JSON.stringify(said)}; the forge's requests ${JSON.stringify(pulls.map((p) => ({ number: p.number, head: p.head?.ref, sha: p.head?.sha, base: p.base?.ref, user: p.user?.login, title: p.title })))}; origin's feature ${remoteHead}`,
    );
    expect(
      pulls.length === 1 && said === `Rennet: opened Pull Request #${pulls[0].number}.` && pulls[0].number === 1,
      `the notification says ${JSON.stringify(said)}; the forge holds ${JSON.stringify(pulls.map((p) => p.number))}, expected #1`,
    );
    const [pr] = pulls;
    expect(
      pr.user?.login === 'bob' && pr.state === 'open' && pr.head?.ref === 'feature' && pr.base?.ref === 'main',
      `the forge's request is ${JSON.stringify({ user: pr.user?.login, state: pr.state, head: pr.head?.ref, base: pr.base?.ref })}, expected bob's open feature → main`,
    );
    expect(pr.head?.sha === headAfter && remoteHead === headAfter, `the request's head is ${pr.head?.sha} (origin's feature ${remoteHead}), expected the worker's commit ${headAfter}`);
    expect(pr.title === OPENER_TITLE && pr.body === OPENER_BODY, `the request reads ${JSON.stringify({ title: pr.title, body: pr.body })}, expected the modal's text`);
    await focusHandOff();
    await rig.sleep(500);
    const afterOpen = await readHandOff();
    await screenshot('hand-off-after-open-pr');
    rig.log(`rounds: hand off after the request opened ${showRows(afterOpen)} (description ${JSON.stringify(afterOpen.description)})`);
  });

  if (runner.results.slice(first).some((r) => !r.ok)) {
    dumpDiagnostics({ label: 'rounds', cs, models, consoleErrors, codeServerLines: 60, rennetLogLines: 150, extHostErrors: true, modelRequests: true });
    if (forge?.stderr.length) console.log(`--- rounds: fake forge stderr ---\n${forge.stderr.join('\n')}`);
  }
  await page?.close().catch(() => {});
  await cs?.stop();
  await models?.stop();
  await forge?.stop();
}
