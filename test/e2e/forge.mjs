// End-to-end: the Post review exit in a real VS Code (code-server + Chromium) against the fake
// forge (test/servers/fakeForge, GitHub flavour) run as its own process, the boards drafted by
// Rennet's real pipeline against the reading scenario's scripted model servers.
//
// Its own fixture repository (main, and feature: a file modified in two hunks, an added file, an
// uncited edit for Noise), served by the forge as acme/widgets with pull request #1 by alice whose
// body links an issue; a clone of it on main is the workspace. The reviewer is bob: code-server's
// environment carries RENNET_FORGES (the forge's host:port → github), GH_TOKEN=bob-token (code-server
// swallows GITHUB_TOKEN) and RENNET_FORGE_CLI_TOKENS=0, which the extension host and Rennet's host
// process inherit.
//
// What it checks: Review Pull Request lists the request and opens its board; asks staged from the
// editor gutter (on the captured head: the checkout is main), from a Flagged finding and from board
// prose; the Hand off view (Source Control) lists them with their anchors, its badge counts them,
// and offers the preview; the preview shows the verdict, the line comments, the folded ask with its
// reason and the body, and follows Unstage/Undo and a verdict override; Post lands exactly one
// review on the forge whose body and comments are the preview's; after a window reload and a host
// restart the preview shows what was posted and no Post button; a push to the request is stated
// (preview, Hand off), a new Post refused before anything is sent, and Capture New Head folds the
// earlier asks; the `command:` links in the request's title and body and in an ask are links nowhere.
// Last, bob's own branch: bob/feature (made from feature in the clone, no upstream, origin pushing
// with his credentials) reviewed with Review Branch, then Open Pull Request: the modal shows the title
// and description the Design lens's scripted model wrote (the plan's `opener` seat: read_draft,
// list_changes, read_diff, set_title, set_description), and Push and Open Pull Request pushes the
// branch and opens #3 on the forge with exactly that text, writing no upstream.
// Screenshots: test/e2e/artifacts/forge-NN-*.png (full page).
//
// Then the GitLab pass (runForgeGitLab), on the same forge process: the same repository as grp/widgets
// with merge request !1 by alice, a code-server of its own registering the forge as GitLab with no
// token in its environment; bob's token goes in through "Rennet: Set GitLab Token" (SecretStorage,
// asked for by the host); Review Pull Request → !1, a gutter comment and a finding's Request change,
// the Hand off view, the preview (the verdict's label as the body's first line), Post → one body note
// and one positioned discussion per comment, the posted state after a window reload.
// Screenshots: test/e2e/artifacts/forge-gitlab-NN-*.png.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import * as rig from './rig.mjs';
import { board, dumpDiagnostics, editorOf, openCommentWidget, scenarioKit, selectLens, visibleLineTops, waitForTerminalGeneration, watchConsole } from './boardPage.mjs';
import { diffHunks, git, initRepo, uncitedHunkCount } from './fixture.mjs';
import { harnessSettings, startModelServers, startServerProcess } from './modelServers.mjs';

const { expect } = rig;
const execFileP = promisify(execFile);

const OWNER = 'acme';
const NAME = 'widgets';
/** A `command:` link that would open a terminal: in the request's title and body, it must stay text. */
const COMMAND_LINK = '[run](command:workbench.action.terminal.new)';
const PR_TITLE = `Name the lines ${COMMAND_LINK}`;
const ISSUE_TITLE = 'Lines should say what changed';
const GUTTER_TEXT = 'Say why line five changes here.';
const PROSE = 'The renamed line is what callers now read.';
const PROSE_ASK_WORDS = 'Say which callers read the renamed line.';
/** The reviewer's text carries the link too: it reaches the Hand off view, the preview and the posted body. */
const PROSE_ASK = `${PROSE_ASK_WORDS} ${COMMAND_LINK}`;
/** What the UI shows of a text once the escaping seam's word joiners (U+2060, inside "](" and "$(") are read past. */
const asRead = (text) => (text ?? '').replace(/\u2060/g, '');
/**
 * What the scripted Design model hands in when bob opens a request for his own branch (the plan's
 * `opener`): nothing the deterministic draft (host/exits/prDraft.ts) would write. The description
 * has no trailing newline: the host trims it (prPolish.ts checkDescription), and the forge must hold
 * exactly this.
 */
const OPENER_TITLE = 'Mark the changed lines of app.js and add the feature module';
const OPENER_BODY = [
  'Lines 5, 10 and 20 of `src/app.js` now say that they changed, two lines are inserted near its end, and `src/new feature.js` is new.',
  '',
  '- `src/app.js`: three lines renamed, two inserted',
  '- `src/new feature.js`: twelve lines',
].join('\n');
const FINDINGS = [
  { origin: 'claude', agreement: 'solo', title: 'Callers match the old text' },
  { origin: 'claude', agreement: 'solo', title: 'The inserted lines are not covered by a test' },
];

// ---------------------------------------------------------------------------------------------
// The repository the forge serves, and what each lens cites of it (from git's own hunks).

const lines = (prefix, n) => Array.from({ length: n }, (_, i) => `${prefix} line ${i + 1}`).join('\n') + '\n';

function write(repo, rel, content) {
  const p = path.join(repo, rel);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, content);
}

/** `main`, and `feature`: src/app.js modified in two hunks, src/new feature.js added, notes.md edited (nobody cites it: Noise). */
function makeForgeFixture(dir) {
  initRepo(dir);
  write(dir, 'README.md', '# Widgets\n\nA repository for Rennet forge tests.\n');
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
  return dir;
}

const addedSpan = (hunk) => {
  const adds = hunk.lines.filter((l) => l.kind === 'add').map((l) => l.new);
  return { start: Math.min(...adds), end: Math.max(...adds) };
};

/** The plan test/servers/e2eReading.ts drafts from (its shape is the reading scenario's). */
function forgePlan(hunks) {
  const app = hunks.get('src/app.js');
  const added = hunks.get('src/new feature.js');
  expect(app?.hunks.length === 2 && added?.hunks.length === 1 && hunks.has('notes.md'), `fixture: git shows ${JSON.stringify([...hunks].map(([p, f]) => [p, f.hunks.length]))}`);
  const head = (p, span) => ({ path: p, side: 'head', start: span.start, end: span.end });
  // The last run of added lines of the second hunk: the two inserted lines.
  const inserted = app.hunks[1].lines.filter((l) => l.kind === 'add').map((l) => l.new).filter((n, i, all) => all.includes(n + 1) || all.includes(n - 1)).slice(-2);
  expect(inserted.length === 2, `fixture: the second hunk of src/app.js has no two inserted lines: ${JSON.stringify(app.hunks[1].lines)}`);
  const plan = {
    design: [head('src/new feature.js', addedSpan(added.hunks[0]))],
    sequence: [head('src/app.js', addedSpan(app.hunks[0])), head('src/app.js', addedSpan(app.hunks[1]))],
    decisions: [head('src/new feature.js', { start: addedSpan(added.hunks[0]).start, end: addedSpan(added.hunks[0]).start + 2 })],
    flagged: [head('src/app.js', { start: inserted[0], end: inserted[1] })],
    findings: FINDINGS,
    explain: { excerpt: head('src/app.js', addedSpan(app.hunks[0])), answer: `src/app.js:${addedSpan(app.hunks[0]).start} changed.` },
    review: `# Findings\n\n- src/app.js:${inserted[0]}-${inserted[1]} inserts two lines that callers matching the old text do not expect.\n`,
    noiseMembers: 0,
  };
  plan.noiseMembers = uncitedHunkCount(hunks, [...plan.design, ...plan.sequence, ...plan.decisions, ...plan.flagged]);
  // The Design lens's pass over bob's own request (the last GitHub test): it reads the diff of the file Design cites.
  plan.opener = { path: plan.design[0].path, title: OPENER_TITLE, description: OPENER_BODY };
  return plan;
}

// ---------------------------------------------------------------------------------------------
// The fake forge as its own process.

/**
 * `tsx test/servers/fakeForge/main.ts` in its own process group: answers `{url, githubApiUrl,
 * gitlabApiUrl, call(method, args), stop()}`; `call` is its control API (POST /_fake/<method>).
 */
async function startForgeProcess() {
  const { urls, stderr, stop, pid } = await startServerProcess({ script: 'test/servers/fakeForge/main.ts', what: 'the fake forge' });
  const child = { pid };
  async function call(method, args = {}) {
    const res = await fetch(`${urls.url}/_fake/${method}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(args) });
    const answer = await res.json().catch(() => ({ error: `HTTP ${res.status}, not JSON` }));
    if (!res.ok || 'error' in answer) throw new Error(`fake forge ${method}(${JSON.stringify(args)}): ${answer.error ?? res.status}`);
    return answer.result;
  }
  rig.log(`forge: fake forge on ${urls.url} (pid ${child.pid})`);
  return { ...urls, call, stop, stderr };
}

// ---------------------------------------------------------------------------------------------
// Reading the workbench.

/** Polls `read` until `ok(value)` holds or `timeout` ms pass; answers the last value read. */
async function poll(read, ok, timeout = 15_000) {
  const deadline = Date.now() + timeout;
  let value = await read();
  while (!ok(value) && Date.now() < deadline) {
    await rig.sleep(200);
    value = await read();
  }
  return value;
}

/**
 * The page helpers both passes use, over the pass's current page (`current()`): the visible
 * webview holding a selector, the preview (its frame and what it shows), the board's staged count,
 * the Hand off view and the Source Control badge.
 */
function forgePageKit(current) {
  /** The inner document of the visible webview that holds `selector` (the board and the preview may both be visible). */
  async function webviewWith(selector, timeout = 30_000) {
    const page = current();
    const deadline = Date.now() + timeout;
    for (;;) {
      const outers = page.locator('iframe.webview');
      const n = await outers.count();
      for (let i = 0; i < n; i++) {
        const outer = outers.nth(i);
        if (!(await outer.isVisible().catch(() => false))) continue;
        const inner = outer.contentFrame().locator('iframe#active-frame').contentFrame();
        if ((await inner.locator(selector).count().catch(() => 0)) > 0) return inner;
      }
      if (Date.now() > deadline) return null;
      await rig.sleep(250);
    }
  }

  /** The preview's inner document (throws naming the tabs when there is none). */
  async function previewFrame(timeout = 30_000) {
    const page = current();
    const frame = await webviewWith('[data-testid="review-preview"]', timeout);
    if (frame) return frame;
    const tabs = await page.locator('.tabs-container .tab .label-name').allInnerTexts().catch(() => []);
    throw new Error(`no visible webview shows [data-testid="review-preview"] within ${timeout / 1000} s (tabs: ${JSON.stringify(tabs)})`);
  }

  /** What the preview shows, read from its DOM in one go. */
  async function readPreview(frame) {
    return frame
      .locator('[data-testid="review-preview"]')
      .evaluate((root) => {
        const q = (id) => root.querySelector(`[data-testid="${id}"]`);
        const txt = (n) => (n ? n.textContent.replace(/\s+/g, ' ').trim() : null);
        return {
          text: txt(root),
          target: txt(q('preview-target')),
          entry: txt(q('preview-entry')),
          freshness: q('preview-freshness')?.getAttribute('data-state') ?? null,
          event: q('verdict-event')?.getAttribute('data-event') ?? null,
          eventText: txt(q('verdict-event')),
          how: txt(q('verdict-how')),
          bodyRendered: txt(q('body-rendered')),
          bodyFirst: q('body-rendered')?.firstElementChild ? { tag: q('body-rendered').firstElementChild.tagName.toLowerCase(), text: txt(q('body-rendered').firstElementChild), strong: [...q('body-rendered').firstElementChild.querySelectorAll('strong')].map(txt) } : null,
          bodyRaw: q('body-raw')?.textContent ?? null,
          marker: q('body-marker')?.getAttribute('data-marker-id') ?? null,
          commentCount: txt(q('comment-count')),
          comments: [...root.querySelectorAll('[data-testid="preview-comment"]')].map((c) => ({
            path: c.getAttribute('data-path'),
            side: c.getAttribute('data-side'),
            line: Number(c.getAttribute('data-line')),
            startLine: c.getAttribute('data-start-line') === null ? null : Number(c.getAttribute('data-start-line')),
            where: txt(c.querySelector('[data-testid="comment-where"]')),
            body: txt(c.querySelector('[data-testid="comment-body"]')),
            raw: c.querySelector('[data-testid="comment-raw"]')?.textContent ?? null,
          })),
          folded: [...root.querySelectorAll('[data-testid="folded-ask"]')].map((f) => ({
            reason: f.getAttribute('data-reason'),
            inBody: f.getAttribute('data-in-body'),
            text: txt(f),
            why: txt(f.querySelector('[data-testid="fold-reason"]')),
          })),
          postArea: q('post-area')?.getAttribute('data-state') ?? null,
          asPosted: q('preview-as-posted') !== null,
          postButton: q('post-review') ? { text: txt(q('post-review')), disabled: q('post-review').disabled || q('post-review').getAttribute('disabled') !== null } : null,
          posted: q('posted') ? { event: q('posted').getAttribute('data-event'), comments: Number(q('posted').getAttribute('data-comments')), words: txt(q('posted-words')), link: q('posted-link')?.getAttribute('title') ?? null, linkText: txt(q('posted-link')) } : null,
          refused: txt(q('post-refused')),
          error: txt(q('preview-error')),
          links: [...root.querySelectorAll('a')].map((a) => ({ href: a.getAttribute('href'), text: txt(a) })),
        };
      }, null, { timeout: 5_000 })
      .catch((e) => ({ error: `the preview could not be read: ${e.message}` }));
  }

  /** What the panel says about asks: the staged count and its words. */
  async function stagedCount() {
    const page = current();
    return board(page)
      .locator('[data-testid="asks-count"]')
      .getAttribute('data-count', { timeout: 2_000 })
      .then((v) => (v === null ? null : Number(v)))
      .catch(() => null);
  }

  /** The Hand off view's pane: its header (title, description) and its rows with their depth, label and description. */
  async function readHandOff() {
    const page = current();
    return page
      .locator('body')
      .evaluate(() => {
        const txt = (n) => (n ? n.textContent.replace(/\s+/g, ' ').trim() : null);
        const panes = [...document.querySelectorAll('.part.sidebar .pane')];
        const pane = panes.find((p) => /^Hand off/i.test(txt(p.querySelector('.pane-header .title')) ?? ''));
        if (!pane) return { found: false, panes: panes.map((p) => txt(p.querySelector('.pane-header .title'))) };
        const rows = [...pane.querySelectorAll('.monaco-list-row')].map((r) => ({
          level: Number(r.getAttribute('aria-level') ?? '0'),
          label: txt(r.querySelector('.label-name')),
          description: txt(r.querySelector('.label-description')),
          aria: r.getAttribute('aria-label'),
          icons: [...r.querySelectorAll('.codicon')].map((i) => [...i.classList].find((c) => c.startsWith('codicon-') && c !== 'codicon') ?? null).filter(Boolean),
          links: [...r.querySelectorAll('a')].map((a) => a.getAttribute('href')),
        }));
        return {
          found: true,
          expanded: pane.querySelector('.pane-header')?.getAttribute('aria-expanded') ?? null,
          title: txt(pane.querySelector('.pane-header .title')),
          description: txt(pane.querySelector('.pane-header .description')),
          message: txt(pane.querySelector('.message, .tree-explorer-viewlet-tree-view-message')),
          rows,
          links: [...pane.querySelectorAll('a')].map((a) => ({ href: a.getAttribute('href'), text: txt(a) })),
        };
      })
      .catch((e) => ({ found: false, error: e.message }));
  }

  /** The badge on the Source Control activity bar entry (where a view's badge shows). */
  async function scmBadge() {
    const page = current();
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

  return { webviewWith, previewFrame, readPreview, stagedCount, readHandOff, scmBadge };
}

/** Hides the bottom panel and clears notifications (room for the board and the editor). */
async function clearTheView(page) {
  if (await page.locator('[id="workbench.parts.panel"]').isVisible().catch(() => false)) await rig.runCommand(page, 'View: Hide Panel');
  await rig.runCommand(page, 'Notifications: Clear All Notifications');
}

/**
 * Stages a comment from VS Code's comment widget on `line` of the captured head of `cite.path`: the
 * Sequence card citing `cite` opens it (the checkout is main, so a `rennet-blob:` editor), the line's
 * comment glyph opens the widget, `text` is typed and staged with Stage Ask; the thread must say
 * "Staged ask · comment". Screenshots `comment-plus` and `gutter-staged`.
 */
async function stageGutterComment({ page, cite, line, text, screenshot, label }) {
  await selectLens(page, 'sequence');
  const card = board(page).locator(`[data-testid="code-card"][data-path="${cite.path}"][data-start="${cite.start}"][data-end="${cite.end}"]`).first();
  await card.locator('[data-testid="code-card-file"]').click();
  // The checkout is main, so the head opens as Rennet's captured blob, not the workspace file.
  const tab = page.locator('.part.editor .tabs-container .tab.active', { hasText: 'app.js' }).first();
  await tab.waitFor({ timeout: 15_000 });
  const editor = editorOf(page);
  const uri = await poll(() => editor.getAttribute('data-uri').catch(() => null), (u) => /^rennet-blob:/.test(u ?? ''), 10_000);
  expect(/^rennet-blob:\/src\/app\.js\?/.test(uri ?? '') && /side(=|%3D)head/.test(uri), `the code card opened ${JSON.stringify(uri)}, expected the captured head of src/app.js (rennet-blob:, side head)`);
  // Collapse the card's selection onto the line, then its comment glyph.
  const tops = await visibleLineTops(editor);
  expect(line in tops, `line ${line} is not visible (visible ${Object.keys(tops).join(',')})`);
  const lineBox = await editor.locator('.view-lines .view-line').evaluateAll((els, top) => {
    const el = els.find((e) => Math.abs(parseFloat(e.style.top) - top) < 2);
    const r = el?.getBoundingClientRect();
    return r ? { x: r.x + Math.min(300, r.width - 10), y: r.y + r.height / 2 } : null;
  }, tops[line]);
  await page.mouse.click(lineBox.x, lineBox.y);
  await rig.sleep(300);
  const widget = await openCommentWidget(page, editor, line, { label, onHover: () => screenshot('comment-plus') });
  await widget.locator('.comment-form .monaco-editor .view-lines').first().click();
  await page.keyboard.type(text);
  const typed = await poll(() => widget.locator('.comment-form .monaco-editor .view-lines').first().innerText(), (t) => t.replace(/\s+/g, ' ').includes(text), 3_000);
  expect(typed.replace(/\s+/g, ' ').includes(text), `the comment box shows ${JSON.stringify(typed)} after typing`);
  const stage = widget.locator('.form-actions .monaco-button, .form-actions button', { hasText: 'Stage Ask' }).first();
  await stage.waitFor({ state: 'visible', timeout: 10_000 }).catch(async () => {
    throw new Error(`the comment form has no "Stage Ask" button; it has ${JSON.stringify(await widget.locator('.monaco-button, button').allInnerTexts().catch(() => []))}`);
  });
  await stage.click();
  const thread = page.locator('.review-widget').filter({ hasText: text }).filter({ hasText: 'Staged ask' }).first();
  await thread.waitFor({ state: 'visible', timeout: 15_000 }).catch(() => {});
  await rig.sleep(300);
  await screenshot('gutter-staged');
  const shown = (await page.locator('.review-widget').filter({ hasText: text }).first().innerText({ timeout: 2_000 }).catch(() => '(no widget holds the comment)')).replace(/\s+/g, ' ');
  expect(/Staged ask · comment/.test(shown), `the staged thread should say "Staged ask · comment"; it shows ${JSON.stringify(shown.slice(0, 300))}`);
}

// ---------------------------------------------------------------------------------------------

export async function runForge({ paths, vsix, runner, browser }) {
  let page = null;
  let cs = null;
  let models = null;
  let forge = null;
  const consoleErrors = [];
  const { screenshot, test } = scenarioKit({ label: 'forge', runner, page: () => page });
  const requestCount = () => models?.requests.length ?? 0;
  const first = runner.results.length;

  const { webviewWith, previewFrame, readPreview, stagedCount, readHandOff, scmBadge } = forgePageKit(() => page);

  const work = rig.mkTmp('rennet-forge-');
  const source = makeForgeFixture(path.join(work, 'source'));
  const hunks = diffHunks(source, { base: 'main', head: 'feature' });
  const plan = forgePlan(hunks);
  const headSha = git(source, ['rev-parse', 'feature']).trim();
  const gutterLine = plan.sequence[0].start;
  const clone = path.join(work, 'widgets checkout');
  let pr = null;
  let issue = null;
  rig.log(`forge: fixture ${source}; plan ${JSON.stringify({ ...plan, review: undefined })}`);

  await test('the fake forge serves acme/widgets with pull request #1 by alice; the workbench opens a clone of it on main, Rennet pointed at the forge', async () => {
    forge = await startForgeProcess();
    const forgeHost = new URL(forge.url).host;
    expect(/^127\.0\.0\.1:\d+$/.test(forgeHost), `the fake forge is not on loopback: ${forge.url}`);
    await forge.call('addUser', { login: 'alice', token: 'alice-token' });
    await forge.call('addUser', { login: 'bob', token: 'bob-token' });
    await forge.call('createRepo', { provider: 'github', owner: OWNER, name: NAME, from: source, defaultBranch: 'main' });
    // GitHub numbers issues and pull requests together: the request is #1, the issue it links #2.
    pr = await forge.call('openPullRequest', {
      provider: 'github',
      owner: OWNER,
      name: NAME,
      author: 'alice',
      head: 'feature',
      base: 'main',
      title: PR_TITLE,
      body: `Fixes #2.\n\nSpells the changed lines out. ${COMMAND_LINK}\n`,
    });
    issue = await forge.call('addIssue', { provider: 'github', owner: OWNER, name: NAME, title: ISSUE_TITLE, body: 'Each changed line should say so.', author: 'alice' });
    expect(pr.number === 1 && pr.headSha === headSha, `the forge opened ${JSON.stringify(pr)}, expected #1 at ${headSha}`);
    expect(issue.number === 2, `the forge numbered the issue ${JSON.stringify(issue)}, expected #2 (linked from the request's body)`);
    const api = await fetch(`${forge.githubApiUrl}/repos/${OWNER}/${NAME}/pulls/1`, { headers: { authorization: 'token bob-token' } }).then((r) => r.json());
    expect(api.user?.login === 'alice' && api.head?.sha === headSha && api.title === PR_TITLE, `GET /pulls/1 answers ${JSON.stringify(api).slice(0, 300)}`);

    await execFileP('git', ['clone', '--quiet', `${forge.url}/${OWNER}/${NAME}.git`, clone], { env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } });
    const branch = (await execFileP('git', ['rev-parse', '--abbrev-ref', 'HEAD'], { cwd: clone, encoding: 'utf8' })).stdout.trim();
    expect(branch === 'main', `the clone is on ${branch}, expected main`);

    models = await startModelServers({ script: 'e2eReading.ts', plan, dir: work, label: 'forge' });
    cs = await rig.startCodeServer({
      paths,
      name: 'forge',
      vsixes: [vsix],
      settings: { ...harnessSettings(models), 'javascript.validate.enable': false },
      // The extension host and Rennet's host inherit code-server's environment. Not GITHUB_TOKEN:
      // code-server takes that one for its own --github-auth and deletes it from its environment
      // (out/node/cli.js), so no child of it ever sees it; GH_TOKEN, Rennet's next source, gets through.
      env: {
        RENNET_FORGES: JSON.stringify([{ host: forgeHost, provider: 'github', apiUrl: forge.githubApiUrl }]),
        GITHUB_TOKEN: '',
        GH_TOKEN: 'bob-token',
        RENNET_FORGE_CLI_TOKENS: '0',
      },
    });
    page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    watchConsole(page, consoleErrors);
    await rig.openWorkbench(page, cs, clone);
    await page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'src' }).first().waitFor({ timeout: 30_000 });
    await screenshot('workbench');
  });

  let generation = null;
  await test('Review Pull Request lists #1; picking it opens the board "Rennet · Pull Request #1 · acme/widgets" and the lenses settle', async () => {
    expect(page, 'the workbench did not open (see the previous test)');
    await rig.runCommand(page, 'Rennet: Review Pull Request');
    const labels = await rig.waitForQuickPick(page, 'open pull request');
    const placeholder = await page.locator('.quick-input-widget .quick-input-box input').getAttribute('placeholder');
    rig.log(`forge: request picker ${JSON.stringify({ placeholder, labels })}`);
    expect(/1 open pull request on acme\/widgets on 127\.0\.0\.1:\d+/.test(placeholder ?? ''), `the picker's placeholder is ${JSON.stringify(placeholder)}`);
    // Rennet's escaping seam puts a word joiner (U+2060) inside "](" so no renderer makes a link of it; it reads the same.
    expect(asRead(labels[0]) === `#1 ${PR_TITLE}`, `the picker's first row is ${JSON.stringify(labels[0])}, expected "#1 ${PR_TITLE}" (rows ${JSON.stringify(labels)})`);
    // Type to filter, as a reviewer does, then pick the request.
    await page.locator('.quick-input-widget .quick-input-box input').fill('#1');
    const row = page.locator('.quick-input-widget .monaco-list-row').filter({ has: page.locator('.label-name', { hasText: /^#1 / }) }).first();
    await row.waitFor({ state: 'visible', timeout: 10_000 });
    const description = await row.locator('.label-description').first().innerText().catch(() => null);
    await screenshot('pick-request');
    expect(/^alice · feature → main$/.test(description?.trim() ?? ''), `the request's row describes it as ${JSON.stringify(description)}, expected "alice · feature → main"`);
    // The list came from the forge, asked as bob (the token from the environment, not a sign-in).
    const listed = await forge.call('requests', { method: 'GET', pathPattern: `^/api/v3/repos/${OWNER}/${NAME}/pulls$` });
    expect(listed.length > 0 && listed.every((r) => r.user === 'bob' && r.status === 200), `the forge's list requests were ${JSON.stringify(listed)}, expected bob's`);
    await row.click();
    const title = `Rennet · Pull Request #1 · ${OWNER}/${NAME}`;
    await page.locator('.tabs-container .tab', { hasText: title }).first().waitFor({ timeout: 90_000 }).catch(async () => {
      const tabs = await page.locator('.tabs-container .tab .label-name').allInnerTexts().catch(() => []);
      const notes = await page.locator('.notifications-toasts .notification-toast, .notification-list-item-message').allInnerTexts().catch(() => []);
      throw new Error(`no tab titled "${title}" (tabs ${JSON.stringify(tabs)}; notifications ${JSON.stringify(notes)})`);
    });
    await board(page).locator('[data-testid="patchset-header"]').waitFor({ state: 'visible', timeout: 90_000 });
    generation = await waitForTerminalGeneration(page, { what: 'after Review Pull Request', requestCount });
    await rig.sleep(300);
    await screenshot('board');
    const tab = (await page.locator('.tabs-container .tab.active .label-name').first().innerText()).trim();
    expect(tab === title, `the board's tab is ${JSON.stringify(tab)}, expected ${JSON.stringify(title)}`);
    const headFull = await board(page).locator('[data-testid="head-id"]').getAttribute('data-full-id');
    expect(headFull === headSha, `the board captured head ${headFull}, the request's head is ${headSha}`);
    const kind = await board(page).locator('[data-testid="target-kind"]').innerText();
    expect(kind.trim() === 'pull request', `the board's header chip reads ${JSON.stringify(kind)}, expected "pull request"`);
    const rows = await board(page).locator('[data-testid="file-row"]').evaluateAll((els) => els.map((e) => e.getAttribute('data-path')).sort());
    expect(JSON.stringify(rows) === JSON.stringify(['notes.md', 'src/app.js', 'src/new feature.js']), `the board lists ${JSON.stringify(rows)}`);
    const unsettled = generation.rail.filter((t) => t.state !== 'settled');
    expect(unsettled.length === 0, `every lens should settle on the scripted models; not settled: ${JSON.stringify(unsettled)}`);
    // The seats read the request and the issue its body links (as data) from the context folder.
    const contextRoot = path.join(clone, '.rennet/context');
    const sessions = fs.existsSync(contextRoot) ? fs.readdirSync(contextRoot) : [];
    const context = sessions.length === 1 ? path.join(contextRoot, sessions[0]) : null;
    const prMd = context && fs.existsSync(path.join(context, 'pr.md')) ? fs.readFileSync(path.join(context, 'pr.md'), 'utf8') : null;
    const related = context && fs.existsSync(path.join(context, 'related-context.md')) ? fs.readFileSync(path.join(context, 'related-context.md'), 'utf8') : null;
    expect(prMd?.includes('Name the lines') && prMd.includes('Spells the changed lines out.'), `the context folder's pr.md should quote the request's title and body: ${JSON.stringify(prMd?.slice(0, 400) ?? `(no pr.md; sessions ${JSON.stringify(sessions)})`)}`);
    expect(related?.includes(ISSUE_TITLE) && /#2\b/.test(related), `related-context.md should carry issue #2 "${ISSUE_TITLE}" the request's body links: ${JSON.stringify(related?.slice(0, 400) ?? '(none)')}`);
    // The checkout was not touched: still main, nothing changed.
    const status = (await execFileP('git', ['status', '--porcelain', '--branch'], { cwd: clone, encoding: 'utf8' })).stdout.trim();
    expect(/^## main\.\.\.origin\/main$/.test(status.split('\n')[0]) && status.split('\n').filter((l) => !l.startsWith('## ')).every((l) => /\.rennet/.test(l)), `the checkout changed: ${JSON.stringify(status)}`);
  });

  await test('a comment staged from the editor gutter on the captured head of src/app.js', async () => {
    expect(generation, 'no settled generation (see the previous test)');
    await stageGutterComment({ page, cite: plan.sequence[0], line: gutterLine, text: GUTTER_TEXT, screenshot, label: 'forge' });
    const staged = await poll(stagedCount, (n) => n === 1);
    expect(staged === 1, `the board counts ${staged} staged asks after the gutter comment, expected 1`);
  });

  await test('Request change on a Flagged finding and Request changes on Sequence prose stage two more asks', async () => {
    expect(generation, 'no settled generation (see the previous test)');
    await clearTheView(page);
    // The board's group back in front.
    await page.locator('.tabs-container .tab', { hasText: 'Rennet · Pull Request #1' }).first().click();
    await selectLens(page, 'flagged');
    const finding = board(page).locator('[data-testid="element"][data-kind="finding"]').filter({ hasText: FINDINGS[0].title }).first();
    await finding.waitFor({ state: 'visible', timeout: 15_000 });
    await finding.locator('[data-testid="finding-request"]').click();
    const afterFinding = await poll(stagedCount, (n) => n === 2);
    const marked = await finding.locator('[data-testid="finding-state"][data-state="requested"]').count();
    await screenshot('finding-requested');
    expect(afterFinding === 2 && marked === 1, `after Request change the board counts ${afterFinding} staged asks (expected 2) and the finding carries ${marked} "requested" marks`);

    await selectLens(page, 'sequence');
    const paragraph = board(page).locator('[data-testid="board"][data-lens="sequence"] [data-testid="element"] p', { hasText: PROSE }).first();
    await paragraph.waitFor({ state: 'visible', timeout: 10_000 });
    await paragraph.scrollIntoViewIfNeeded();
    const elementId = await paragraph.evaluate((p) => p.closest('[data-testid="element"]')?.getAttribute('data-id') ?? null);
    const box = await paragraph.boundingBox();
    const span = await paragraph.evaluate((p) => {
      const range = p.ownerDocument.createRange();
      range.selectNodeContents(p);
      const r = range.getClientRects()[0];
      const pr = p.getBoundingClientRect();
      return { left: r.left - pr.left, right: r.right - pr.left, mid: r.top - pr.top + r.height / 2 };
    });
    await page.mouse.move(box.x + Math.max(0, span.left - 2), box.y + span.mid);
    await page.mouse.down();
    await page.mouse.move(box.x + span.right + 3, box.y + span.mid, { steps: 8 });
    await page.mouse.up();
    const area = board(page).locator(`[data-testid="ask-area"][data-for="${elementId}"]`);
    const toolbar = area.locator('[data-testid="selection-toolbar"]');
    await toolbar.waitFor({ state: 'visible', timeout: 5_000 });
    await toolbar.locator('[data-testid="selection-request"]').click();
    const composer = area.locator('[data-testid="ask-composer"][data-intent="request-change"]');
    await composer.waitFor({ state: 'visible', timeout: 5_000 });
    await composer.locator('[data-testid="ask-composer-text"]').fill(PROSE_ASK);
    await screenshot('prose-request');
    await composer.locator('[data-testid="ask-composer-stage"]').click();
    const afterProse = await poll(stagedCount, (n) => n === 3);
    await screenshot('three-staged');
    expect(afterProse === 3, `after Request changes on the prose the board counts ${afterProse} staged asks, expected 3`);
  });

  /** The rows the Hand off view must show for the three asks: label → anchor words. */
  const flaggedAnchor = `src/app.js:${plan.flagged[0].start}-${plan.flagged[0].end}`;
  let handOff = null;
  await test('Source Control: the Hand off view counts the three asks, lists each with its anchor in words, and offers "Preview and post review…"', async () => {
    expect(generation, 'no settled generation (see the previous test)');
    // Focus out of the board's webview (its text box had it): the palette opens on the workbench.
    await page.locator('#workbench\\.parts\\.statusbar').click({ position: { x: 2, y: 2 }, force: true });
    await rig.runCommand(page, 'Source Control: Focus on Hand off View');
    await page.locator('.part.sidebar .pane-header', { hasText: /Hand off/i }).first().waitFor({ state: 'visible', timeout: 15_000 }).catch(async () => {
      throw new Error(`the Source Control view shows no "Hand off" pane: ${JSON.stringify(await readHandOff())}`);
    });
    // Expanded (a collapsed pane draws no rows), with the room the Changes pane (git is off here) would take.
    const header = page.locator('.part.sidebar .pane-header', { hasText: /Hand off/i }).first();
    if ((await header.getAttribute('aria-expanded')) === 'false') await header.click();
    const changes = page.locator('.part.sidebar .pane-header', { hasText: /^\s*Changes/ }).first();
    if ((await changes.count()) > 0 && (await changes.getAttribute('aria-expanded')) === 'true') await changes.click();
    handOff = await poll(readHandOff, (h) => h.found && h.rows.some((r) => /^Preview and post review/.test(r.label ?? '')) && h.rows.filter((r) => r.level === 2).length >= 3, 20_000);
    const badge = await poll(scmBadge, (b) => b.text === '3', 10_000);
    await screenshot('hand-off');
    rig.log(`forge: hand off ${JSON.stringify(handOff)}; badge ${JSON.stringify(badge)}`);
    expect(handOff.found, `no Hand off pane: ${JSON.stringify(handOff)}`);
    expect(badge.found && badge.text === '3' && badge.visible, `the Source Control badge is ${JSON.stringify(badge)}, expected 3 (the staged asks)`);
    const lane = handOff.rows.find((r) => r.level === 1 && r.label === 'Post review');
    expect(lane && lane.description === '3 staged', `the "Post review" lane row is ${JSON.stringify(lane)}, expected "3 staged"`);
    const asks = handOff.rows.filter((r) => r.level === 2);
    const want = [
      { label: GUTTER_TEXT, description: `src/app.js:${gutterLine} (new)`, icon: 'codicon-comment' },
      { label: FINDINGS[0].title, description: `finding: ${FINDINGS[0].title}`, icon: 'codicon-request-changes' },
      { label: PROSE_ASK, description: 'board: Sequence', icon: 'codicon-request-changes' },
    ];
    const problems = [];
    for (const w of want) {
      const row = asks.find((r) => r.description === w.description && asRead(r.label) === w.label && r.icons.includes(w.icon));
      if (!row) problems.push(`no ask row ${JSON.stringify(w)}`);
    }
    if (asks.length !== 3) problems.push(`${asks.length} rows under the lane, expected the 3 staged asks`);
    expect(problems.length === 0, `Hand off rows: ${problems.join('; ')}; rows ${JSON.stringify(handOff.rows)}`);
    expect(/Pull Request #1 · acme\/widgets/.test(handOff.description ?? ''), `the view's description is ${JSON.stringify(handOff.description)}, expected it to name the request`);
    const exit = handOff.rows.find((r) => r.label === 'Preview and post review…');
    expect(exit && exit.level === 1, `no top-level "Preview and post review…" row: ${JSON.stringify(handOff.rows)}`);

    // A click on the finding's row opens its captured code in the editor, the cited lines selected.
    const status = () => page.locator('[id="status.editor.selection"]').innerText({ timeout: 2_000 }).catch(() => null);
    const statusBefore = await status();
    await page.locator('.part.sidebar .pane .monaco-list-row').filter({ hasText: `finding: ${FINDINGS[0].title}` }).first().locator('.label-name').click();
    const { start, end } = plan.flagged[0];
    const wantStatus = new RegExp(`^Ln ${end}, Col \\d+ \\(\\d+ selected\\)$`);
    const statusAfter = await poll(status, (t) => wantStatus.test(t ?? ''), 10_000);
    const opened = await editorOf(page).getAttribute('data-uri').catch(() => null);
    rig.log(`forge: the finding's row opened ${opened}; status ${JSON.stringify(statusBefore)} → ${JSON.stringify(statusAfter)}`);
    expect(wantStatus.test(statusAfter ?? '') && /^rennet-blob:\/src\/app\.js\?/.test(opened ?? ''), `clicking the finding's row should open the head of src/app.js with lines ${start}-${end} selected; the editor is ${opened}, the status bar says ${JSON.stringify(statusAfter)} (before: ${JSON.stringify(statusBefore)})`);

    // The prose ask's row carries the reviewer's [run](command:…) as text; its hover (Markdown) draws it as no link.
    const row = page.locator('.part.sidebar .pane .monaco-list-row').filter({ hasText: PROSE_ASK_WORDS }).first();
    // The pointer over the row's label by coordinates: Playwright's hover() would first scroll the
    // label into view inside its overflow-hidden container, shifting the text out of sight.
    // From a neutral spot (a pointer already resting on another hover target keeps VS Code from starting this one).
    await page.mouse.move(5, 500);
    await rig.sleep(300);
    const rowBox = await row.locator('.monaco-icon-label').first().boundingBox();
    await page.mouse.move(rowBox.x + 40, rowBox.y + rowBox.height / 2, { steps: 4 });
    const box = page.locator('.monaco-hover, .workbench-hover').filter({ visible: true }).first();
    const hover = await box.waitFor({ state: 'visible', timeout: 10_000 }).then(
      () => box.evaluate((h) => ({ text: h.textContent.replace(/\s+/g, ' ').trim(), links: [...h.querySelectorAll('a')].map((a) => a.getAttribute('href') ?? a.getAttribute('data-href')) })),
      () => null,
    );
    await screenshot('hand-off-hover');
    rig.log(`forge: the prose ask's hover ${JSON.stringify(hover)}`);
    expect(hover, `hovering the prose ask's row showed no hover`);
    // mdModel (extension/uiText.ts) keeps a non-web link's label and names its target as text.
    expect(/^Request change · board: Sequence/.test(hover.text) && hover.text.includes(`${PROSE_ASK_WORDS} run (command:workbench.action.terminal.new — not opened: not a web link)`), `the hover should read the ask with its link as inert text: ${JSON.stringify(hover)}`);
    expect(hover.links.every((h) => !/command:/i.test(h ?? '')), `the hover draws command: links: ${JSON.stringify(hover.links)}`);
    await page.mouse.move(5, 500);
  });

  let shownBody = null;
  let shownComments = null;
  await test('the preview shows Request changes, the two line comments with path and line, the folded prose ask with its reason, and the body', async () => {
    expect(handOff?.found, 'the Hand off view was not read (see the previous test)');
    await page.locator('.part.sidebar .pane .monaco-list-row', { hasText: 'Preview and post review…' }).first().click();
    const frame = await previewFrame();
    let shown = await poll(() => readPreview(frame), (p) => p.postArea === 'post' && p.freshness === 'fresh' && p.comments?.length > 0, 30_000);
    await rig.sleep(300);
    await screenshot('preview');
    rig.log(`forge: preview ${JSON.stringify({ ...shown, text: shown.text?.slice(0, 400) })}`);
    const tab = (await page.locator('.tabs-container .tab.active .label-name').last().innerText().catch(() => '')).trim();
    expect(tab === `Post review · Pull Request #1 · ${OWNER}/${NAME}`, `the preview's tab is ${JSON.stringify(tab)}`);
    expect(shown.target === `Post review · Pull Request #1 · ${OWNER}/${NAME}`, `the preview's title is ${JSON.stringify(shown.target)}`);
    expect(shown.entry === 'a teammate’s request', `the preview says the request is ${JSON.stringify(shown.entry)}, expected a teammate's (alice's, reviewed by bob)`);
    expect(shown.event === 'REQUEST_CHANGES' && shown.eventText === 'Request changes', `the verdict is ${JSON.stringify([shown.event, shown.eventText])}, expected REQUEST_CHANGES / "Request changes"`);
    expect(/a staged change request makes it Request changes/.test(shown.how ?? ''), `the verdict's reason reads ${JSON.stringify(shown.how)}`);
    const wantComments = [
      { path: 'src/app.js', side: 'RIGHT', line: gutterLine, startLine: null, where: `src/app.js · new side · line ${gutterLine}` },
      { path: 'src/app.js', side: 'RIGHT', line: plan.flagged[0].end, startLine: plan.flagged[0].start, where: `src/app.js · new side · lines ${plan.flagged[0].start}–${plan.flagged[0].end}` },
    ];
    const got = shown.comments.map((c) => ({ path: c.path, side: c.side, line: c.line, startLine: c.startLine, where: c.where?.split(' · ').slice(0, 3).join(' · ') }));
    expect(JSON.stringify(got) === JSON.stringify(wantComments), `the preview's comments are ${JSON.stringify(got)}, expected ${JSON.stringify(wantComments)}`);
    expect(shown.comments[0].body === GUTTER_TEXT, `the first comment reads ${JSON.stringify(shown.comments[0].body)}, expected the gutter comment`);
    expect(/comment$/.test(shown.comments[0].where) && /change request$/.test(shown.comments[1].where), `the comments' intents: ${JSON.stringify(shown.comments.map((c) => c.where))}`);
    expect((shown.comments[1].body ?? '').includes(FINDINGS[0].title), `the finding's comment reads ${JSON.stringify(shown.comments[1].body)}, expected it to name the finding`);
    expect(shown.commentCount === '2', `the comment count badge reads ${JSON.stringify(shown.commentCount)}`);
    expect(shown.folded.length === 1 && shown.folded[0].reason === 'board-prose' && /board: Sequence|Sequence/.test(shown.folded[0].text) && /quotes board prose/.test(shown.folded[0].why ?? ''), `the folded asks are ${JSON.stringify(shown.folded)}, expected the prose request folded as board-prose with its reason`);
    expect((shown.bodyRendered ?? '').includes(PROSE_ASK_WORDS) && /### Notes|Notes/.test(shown.bodyRendered ?? ''), `the rendered body does not carry the folded ask's note ${JSON.stringify(PROSE_ASK_WORDS)}: ${JSON.stringify(shown.bodyRendered)}`);
    // The opener states what the boards came to; Noise by its one group of skippable hunks (notes.md).
    expect((shown.bodyRendered ?? '').includes('Lens boards: Design 1 section · Sequence 1 section · Decisions 1 section · Flagged 2 findings (1 open, 0 dismissed) · Noise 1 group.'), `the rendered body's opener does not state the boards: ${JSON.stringify(shown.bodyRendered)}`);
    expect((shown.bodyRendered ?? '').includes(`Reviewed ${headSha.slice(0, 12)}`), `the rendered body does not open with the reviewed head ${headSha.slice(0, 12)}: ${JSON.stringify(shown.bodyRendered)}`);
    expect(shown.postButton && !shown.postButton.disabled && shown.postButton.text === 'Post to GitHub', `the Post button is ${JSON.stringify(shown.postButton)}`);

    const firstComposition = await frame.locator('[data-testid="body-marker"]').getAttribute('data-marker-id');

    // The preview follows the asks: Unstage on the prose ask's Hand off row takes its note out of
    // the review; Undo Last Ask Action puts it back (the same composition again).
    const proseRow = page.locator('.part.sidebar .pane .monaco-list-row').filter({ hasText: PROSE_ASK_WORDS }).first();
    const proseBox = await proseRow.boundingBox();
    await page.mouse.move(proseBox.x + 60, proseBox.y + proseBox.height / 2);
    await proseRow.locator('.action-label[aria-label="Unstage"]').click();
    const unstaged = await poll(() => readPreview(frame), (p) => p.folded?.length === 0 && p.event === 'REQUEST_CHANGES', 15_000);
    await screenshot('preview-after-unstage');
    expect(unstaged.folded.length === 0 && !(unstaged.bodyRendered ?? '').includes(PROSE_ASK_WORDS) && unstaged.comments.length === 2 && unstaged.marker !== firstComposition, `after Unstage on the prose ask the preview shows ${JSON.stringify({ folded: unstaged.folded, comments: unstaged.comments?.length, marker: unstaged.marker, body: unstaged.bodyRendered })}, expected no folded ask, no note, a new composition`);
    expect((await scmBadge()).text === '2', `after Unstage the Source Control badge reads ${JSON.stringify(await scmBadge())}, expected 2`);
    const laneOf = (h) => h.rows?.find((r) => r.level === 1 && r.label === 'Post review');
    const afterUnstage = await poll(readHandOff, (h) => laneOf(h)?.description === '2 staged' && !h.rows.some((r) => asRead(r.label) === PROSE_ASK), 10_000);
    await screenshot('hand-off-after-unstage');
    expect(laneOf(afterUnstage)?.description === '2 staged' && !afterUnstage.rows.some((r) => asRead(r.label) === PROSE_ASK), `after Unstage the Hand off view still shows ${JSON.stringify(afterUnstage.rows?.map((r) => [r.level, r.label, r.description]))}, expected the lane at "2 staged" without the prose ask`);
    await page.locator('#workbench\\.parts\\.statusbar').click({ position: { x: 2, y: 2 }, force: true });
    await rig.runCommand(page, 'Rennet: Undo Last Ask Action');
    shown = await poll(() => readPreview(frame), (p) => p.folded?.length === 1 && p.marker === firstComposition, 15_000);
    expect(shown.folded.length === 1 && shown.marker === firstComposition && (await scmBadge()).text === '3', `after Undo the preview shows ${JSON.stringify({ folded: shown.folded, marker: shown.marker })} (badge ${JSON.stringify(await scmBadge())}), expected the prose ask back in the first composition ${firstComposition}`);
    const afterUndo = await poll(readHandOff, (h) => laneOf(h)?.description === '3 staged' && h.rows.some((r) => asRead(r.label) === PROSE_ASK), 10_000);
    expect(laneOf(afterUndo)?.description === '3 staged', `after Undo the Hand off view shows ${JSON.stringify(afterUndo.rows?.map((r) => [r.level, r.label, r.description]))}, expected the lane back at "3 staged"`);

    // The verdict control: Comment overrides the asks (a new composition), "As the asks propose" undoes it.
    await frame.locator('[data-testid="verdict-choice"][data-choice="comment"]').click();
    const overridden = await poll(() => readPreview(frame), (p) => p.event === 'COMMENT' && p.postArea === 'post', 15_000);
    const pressed = await frame.locator('[data-testid="verdict-choice"][aria-pressed="true"]').getAttribute('data-choice').catch(() => null);
    await screenshot('preview-verdict-comment');
    expect(overridden.event === 'COMMENT' && overridden.eventText === 'Comment' && overridden.how === 'Your choice; your asks propose Request changes.' && pressed === 'comment', `after choosing Comment the verdict reads ${JSON.stringify([overridden.event, overridden.eventText, overridden.how, pressed])}`);
    expect(overridden.marker && overridden.marker !== firstComposition, `choosing Comment left the composition's marker at ${overridden.marker} (was ${firstComposition}): what posts changed, so must its id`);
    await frame.locator('[data-testid="verdict-choice"][data-choice="clear"]').click();
    shown = await poll(() => readPreview(frame), (p) => p.event === 'REQUEST_CHANGES' && /^Proposed from your asks/.test(p.how ?? '') && p.postArea === 'post', 15_000);
    expect(shown.event === 'REQUEST_CHANGES' && shown.marker === firstComposition, `after "As the asks propose" the verdict is ${JSON.stringify([shown.event, shown.how])} and the marker ${shown.marker}, expected REQUEST_CHANGES and the first composition ${firstComposition}`);

    // The raw text: exactly what is sent.
    await frame.locator('[data-testid="body-raw-toggle"]').click();
    shown = await poll(() => readPreview(frame), (p) => p.bodyRaw !== null, 5_000);
    await screenshot('preview-raw');
    shownBody = shown.bodyRaw;
    shownComments = shown.comments.map((c) => ({ path: c.path, side: c.side, line: c.line, startLine: c.startLine, body: c.raw }));
    expect(shownBody && shownBody.includes(PROSE_ASK) && /\n<!-- rennet-review: [0-9a-f]+ -->$/.test(shownBody), `the raw body ${JSON.stringify(shownBody)} should carry the folded ask's text as typed and end with the marker`);
    expect(shown.marker && shownBody.endsWith(`<!-- rennet-review: ${shown.marker} -->`), `the marker note names ${JSON.stringify(shown.marker)}, not the raw body's last line`);
    expect(shownComments.every((c) => typeof c.body === 'string' && c.body.length > 0), `raw comments: ${JSON.stringify(shownComments)}`);
    const reviews = await forge.call('reviews', { owner: OWNER, name: NAME, number: 1 });
    expect(reviews.length === 0, `the forge holds ${reviews.length} reviews before Post`);
  });

  await test('the reviewer\'s command: link is drawn inert in the preview and the request\'s is a link nowhere (Hand off, preview); no terminal opened', async () => {
    expect(page, 'no workbench');
    const frame = await previewFrame();
    const rawOn = frame.locator('[data-testid="body-raw-toggle"][aria-pressed="true"]');
    if ((await rawOn.count()) > 0) await rawOn.click();
    const rendered = await frame.locator('[data-testid="body-rendered"]').evaluate((b) => ({
      anchors: [...b.querySelectorAll('a')].map((a) => a.getAttribute('href')),
      text: b.textContent.replace(/\u2060/g, ''),
    }));
    const everywhere = await readPreview(frame);
    rig.log(`forge: the preview's body links ${JSON.stringify(rendered)}`);
    expect(rendered.anchors.length === 0, `the preview's body renders links ${JSON.stringify(rendered.anchors)}`);
    // The Markdown reader takes http(s) and mailto links only: the ask's [run](command:…) is text, as written.
    expect(rendered.text.includes(`${PROSE_ASK_WORDS} ${COMMAND_LINK}`), `the rendered body does not show the ask's [run](command:…) as written text: ${JSON.stringify(rendered.text)}`);
    expect((everywhere.links ?? []).every((l) => !/command:/i.test(l.href ?? '')), `the preview has command: links: ${JSON.stringify(everywhere.links)}`);

    await page.locator('#workbench\\.parts\\.statusbar').click({ position: { x: 2, y: 2 }, force: true });
    await rig.runCommand(page, 'Source Control: Focus on Hand off View');
    const view = await poll(readHandOff, (h) => h.found && h.rows.length > 0, 10_000);
    const viewLinks = (view.links ?? []).filter((l) => /command:/i.test(l.href ?? ''));
    expect(viewLinks.length === 0, `the Hand off view has command: links: ${JSON.stringify(viewLinks)}`);
    await page.mouse.move(5, 500);
    await rig.sleep(500);
    const terminals = await page.evaluate(() => ({
      xterms: document.querySelectorAll('.xterm').length,
      wrappers: document.querySelectorAll('.terminal-wrapper').length,
      tabs: document.querySelectorAll('.terminal-tabs-entry').length,
    }));
    expect(Math.max(terminals.xterms, terminals.wrappers, terminals.tabs) === 0, `a terminal exists: ${JSON.stringify(terminals)}`);
  });

  let receiptUrl = null;
  await test('Post: the preview shows what was posted, and the forge holds exactly one review whose body and comments are the preview\'s', async () => {
    expect(shownBody, 'the preview was not read (see the previous test)');
    const frame = await previewFrame();
    await frame.locator('[data-testid="post-review"]').click();
    const shown = await poll(() => readPreview(frame), (p) => p.postArea === 'posted' || p.refused !== null, 60_000);
    await rig.sleep(300);
    await screenshot('posted');
    rig.log(`forge: after Post ${JSON.stringify({ postArea: shown.postArea, posted: shown.posted, refused: shown.refused })}`);
    expect(shown.postArea === 'posted' && shown.posted, `after Post the preview shows ${JSON.stringify({ postArea: shown.postArea, refused: shown.refused, error: shown.error })}`);
    expect(shown.posted.event === 'REQUEST_CHANGES' && shown.posted.comments === 2 && shown.posted.words === 'Posted: Request changes · 2 comments', `the posted state reads ${JSON.stringify(shown.posted)}`);
    expect(shown.postButton === null, `a Post button is still offered after posting: ${JSON.stringify(shown.postButton)}`);
    receiptUrl = shown.posted.link;
    expect(new RegExp(`^${rig.escapeRe(forge.url)}/${OWNER}/${NAME}/pull/1#pullrequestreview-\\d+$`).test(receiptUrl ?? ''), `the posted link is ${JSON.stringify(receiptUrl)}`);
    const reviews = await forge.call('reviews', { owner: OWNER, name: NAME, number: 1 });
    rig.log(`forge: reviews on the forge ${JSON.stringify(reviews)}`);
    expect(reviews.length === 1, `the forge holds ${reviews.length} reviews, expected exactly one`);
    const [review] = reviews;
    expect(review.user?.login === 'bob' && review.state === 'CHANGES_REQUESTED' && review.commit_id === headSha, `the review is ${JSON.stringify({ user: review.user?.login, state: review.state, commit: review.commit_id })}, expected bob's CHANGES_REQUESTED on ${headSha}`);
    expect(review.body === shownBody, `the posted body differs from the preview's raw body:\n  posted  ${JSON.stringify(review.body)}\n  preview ${JSON.stringify(shownBody)}`);
    const posted = review.comments.map((c) => ({ path: c.path, side: c.side, line: c.line, startLine: c.start_line ?? null, body: c.body }));
    expect(JSON.stringify(posted) === JSON.stringify(shownComments), `the posted comments differ from the preview's:\n  posted  ${JSON.stringify(posted)}\n  preview ${JSON.stringify(shownComments)}`);
    expect(receiptUrl === review.html_url, `the preview links ${receiptUrl}, the forge's review is ${review.html_url}`);
    const creates = await forge.call('requests', { method: 'POST', pathPattern: '/reviews$' });
    expect(creates.length === 1, `the forge saw ${creates.length} review creations: ${JSON.stringify(creates)}`);
  });

  /** The preview as it is now: it must show the posted review (link, verdict, count) and offer no Post. */
  async function expectPosted(frame, what) {
    const shown = await poll(() => readPreview(frame), (p) => p.postArea === 'posted', 45_000);
    rig.log(`forge: preview ${what} ${JSON.stringify({ postArea: shown.postArea, posted: shown.posted, postButton: shown.postButton, error: shown.error })}`);
    expect(shown.postArea === 'posted' && shown.posted?.event === 'REQUEST_CHANGES' && shown.posted?.comments === 2, `${what} the preview shows ${JSON.stringify({ postArea: shown.postArea, posted: shown.posted, error: shown.error, refused: shown.refused })}, expected the posted review`);
    expect(shown.posted.link === receiptUrl && shown.posted.words === 'Posted: Request changes · 2 comments', `${what} the posted state reads ${JSON.stringify(shown.posted)}; the posted review is ${receiptUrl}`);
    expect(shown.postButton === null && !/Post to GitHub/.test(shown.text ?? ''), `${what} the preview offers Post again: ${JSON.stringify(shown.postButton)}`);
    return shown;
  }

  /** Pids of the Rennet hosts the output channel reported running, in order. */
  function hostPids() {
    const pids = [];
    for (const f of cs?.logsMatching(/^(\d+-)?Rennet\.log$/i) ?? []) {
      for (const m of fs.readFileSync(f, 'utf8').matchAll(/Rennet host \S+ running \(pid (\d+)/g)) pids.push(Number(m[1]));
    }
    return pids;
  }

  await test('after Developer: Reload Window the restored preview shows the posted review and no Post; after Rennet: Restart Host, reopened, it still does', async () => {
    expect(receiptUrl, 'nothing was posted (see the previous test)');
    await page.evaluate(() => {
      window.__rennetBeforeReload = true;
    });
    await rig.runCommand(page, 'Developer: Reload Window');
    await page.waitForFunction(() => !window.__rennetBeforeReload, null, { timeout: 60_000 });
    await rig.waitForWorkbench(page);
    // Restored by its serializer (no command run): the posted state comes from the stored receipt.
    const restored = await webviewWith('[data-testid="review-preview"]', 45_000);
    const tabs = await page.locator('.tabs-container .tab .label-name').allInnerTexts().catch(() => []);
    expect(restored, `after the reload no preview was restored (tabs ${JSON.stringify(tabs)})`);
    await expectPosted(restored, 'after the reload');
    await rig.sleep(300);
    await screenshot('posted-after-reload');
    // The Hand off view says so too.
    await page.locator('#workbench\\.parts\\.statusbar').click({ position: { x: 2, y: 2 }, force: true });
    await rig.runCommand(page, 'Source Control: Focus on Hand off View');
    const view = await poll(readHandOff, (h) => h.found && h.rows.some((r) => /^Posted: /.test(r.label ?? '')), 20_000);
    await screenshot('hand-off-posted');
    rig.log(`forge: hand off after the reload ${JSON.stringify(view.rows?.map((r) => [r.level, r.label, r.description]))}`);
    const receiptRow = view.rows?.find((r) => /^Posted: /.test(r.label ?? ''));
    expect(receiptRow?.label === 'Posted: Request changes · 2 comments' && receiptRow.level === 1, `after the reload the Hand off view's receipt row is ${JSON.stringify(receiptRow)} (rows ${JSON.stringify(view.rows)})`);
    // A post sends what it carried: the three asks left the lane, so a follow-up cannot post them twice.
    const laneRow = view.rows?.find((r) => r.level === 1 && r.label === 'Post review');
    expect(laneRow?.description === 'nothing staged' && !view.rows.some((r) => asRead(r.label) === GUTTER_TEXT), `after the post the Hand off lane reads ${JSON.stringify(laneRow)} (rows ${JSON.stringify(view.rows?.map((r) => [r.label, r.description]))}), expected nothing staged`);
    const badge = await scmBadge();
    expect(badge.found && !badge.visible, `after the post the Source Control badge still counts asks: ${JSON.stringify(badge)}`);

    // A new host reads the receipt from the store: restart it, close the preview, open it again.
    const known = new Set(hostPids());
    const before = hostPids().at(-1);
    expect(before, 'the Rennet log names no running host before the restart');
    await rig.runCommand(page, 'Rennet: Restart Host');
    const after = await poll(() => hostPids().find((p) => !known.has(p)) ?? null, (p) => p !== null, 30_000);
    expect(after, `"Rennet: Restart Host" started no new host within 30 s (pids in the log ${JSON.stringify(hostPids())})`);
    rig.log(`forge: host restarted, pid ${before} → ${after}`);
    const previewTab = page.locator('.tabs-container .tab', { hasText: 'Post review · Pull Request #1' }).first();
    await previewTab.click();
    await rig.runCommand(page, 'View: Close Editor');
    await poll(() => previewTab.count(), (n) => n === 0, 10_000);
    expect((await previewTab.count()) === 0, 'the preview tab did not close');
    await rig.runCommand(page, 'Rennet: Preview Review');
    const reopened = await previewFrame();
    await expectPosted(reopened, 'reopened after the host restart');
    await rig.sleep(300);
    await screenshot('posted-after-restart');
    const reviews = await forge.call('reviews', { owner: OWNER, name: NAME, number: 1 });
    expect(reviews.length === 1, `the forge holds ${reviews.length} reviews after the reload and restart, expected still one`);
  });

  await test('alice pushes to the request: Refresh says the head moved (preview and Hand off); a follow-up Post is refused before anything is sent; Capture New Head makes the new head the review\'s, what was posted an earlier review', async () => {
    expect(receiptUrl, 'nothing was posted (see the previous tests)');
    // alice pushes one more commit to feature from her own clone (the workspace is not touched).
    const forgeUrl = new URL(forge.url);
    const aliceClone = path.join(work, 'alice');
    const gitAsAlice = (args, cwd = aliceClone) =>
      execFileP('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_AUTHOR_NAME: 'Alice', GIT_AUTHOR_EMAIL: 'alice@example.invalid', GIT_COMMITTER_NAME: 'Alice', GIT_COMMITTER_EMAIL: 'alice@example.invalid' } });
    await gitAsAlice(['clone', '--quiet', '--branch', 'feature', `${forgeUrl.protocol}//alice:alice-token@${forgeUrl.host}/${OWNER}/${NAME}.git`, aliceClone], work);
    fs.appendFileSync(path.join(aliceClone, 'src/new feature.js'), 'feature line 13\n');
    await gitAsAlice(['commit', '--quiet', '-am', 'One more line']);
    await gitAsAlice(['push', '--quiet', 'origin', 'feature']);
    const moved = (await gitAsAlice(['rev-parse', 'HEAD'])).stdout.trim();
    const live = await forge.call('pullRequest', { owner: OWNER, name: NAME, number: 1 });
    expect(live.head?.sha === moved, `after alice's push the forge says the request's head is ${live.head?.sha}, expected ${moved}`);

    const frame = await previewFrame();
    await frame.locator('[data-testid="preview-refresh"]').click();
    let shown = await poll(() => readPreview(frame), (p) => p.freshness === 'moved', 20_000);
    const banner = await frame.locator('[data-testid="preview-freshness"]').innerText().catch(() => null);
    expect(shown.freshness === 'moved' && banner?.includes(moved.slice(0, 7)) && banner.includes(headSha.slice(0, 7)) && (await frame.locator('[data-testid="capture-new-head"]').count()) === 1, `after Refresh the preview's head banner is ${JSON.stringify({ state: shown.freshness, banner })}, expected it moved ${headSha.slice(0, 7)} → ${moved.slice(0, 7)} with Capture New Head`);
    // What was posted stays posted; choosing a verdict composes a follow-up review, which offers Post.
    expect(shown.postArea === 'posted', `the head move replaced the posted state: ${shown.postArea}`);
    await frame.locator('[data-testid="verdict-choice"][data-choice="comment"]').click();
    shown = await poll(() => readPreview(frame), (p) => p.event === 'COMMENT' && p.postArea === 'post' && p.postButton && !p.postButton.disabled, 15_000);
    expect(shown.postArea === 'post' && shown.comments.length === 0, `choosing Comment after the post offers ${shown.postArea} with ${shown.comments?.length} comments, expected Post for a follow-up carrying none of the posted comments`);
    await frame.locator('[data-testid="post-review"]').click();
    shown = await poll(() => readPreview(frame), (p) => p.refused !== null && p.postButton && !p.postButton.disabled, 30_000);
    const code = await frame.locator('[data-testid="post-refused"]').getAttribute('data-code').catch(() => null);
    const repair = await frame.locator('[data-testid="post-repair"]').innerText().catch(() => null);
    await frame.locator('[data-testid="post-refused"]').scrollIntoViewIfNeeded().catch(() => {});
    await screenshot('post-refused-head-moved');
    rig.log(`forge: post after the head moved: ${JSON.stringify({ code, repair, refused: shown.refused })}`);
    expect(code === 'head-moved' && /moved/.test(shown.refused ?? '') && repair?.trim() === 'Capture New Head', `the refused post reads ${JSON.stringify({ code, refused: shown.refused, repair })}, expected head-moved with Capture New Head`);
    const reviews = await forge.call('reviews', { owner: OWNER, name: NAME, number: 1 });
    const creates = await forge.call('requests', { method: 'POST', pathPattern: '/reviews$' });
    expect(reviews.length === 1 && creates.length === 1, `the refused post reached the forge: ${reviews.length} reviews, ${creates.length} review creations`);

    // The Hand off view says the head moved, with Capture New Head.
    await page.locator('#workbench\\.parts\\.statusbar').click({ position: { x: 2, y: 2 }, force: true });
    await rig.runCommand(page, 'Source Control: Focus on Hand off View');
    const view = await poll(readHandOff, (h) => h.found && h.rows.some((r) => /^Head moved to /.test(r.label ?? '')), 15_000);
    await screenshot('hand-off-head-moved');
    const movedRow = view.rows?.find((r) => /^Head moved to /.test(r.label ?? ''));
    expect(movedRow?.label === `Head moved to ${moved.slice(0, 7)} since capture — Capture New Head`, `the Hand off view's rows are ${JSON.stringify(view.rows?.map((r) => r.label))}, expected "Head moved to ${moved.slice(0, 7)} since capture — Capture New Head"`);
    // Back to no choice: nothing is staged since the post, so the preview stands at the posted review.
    await frame.locator('[data-testid="verdict-choice"][data-choice="clear"]').click();
    const standing = await poll(() => readPreview(frame), (p) => p.postArea === 'posted' && p.event === 'REQUEST_CHANGES', 15_000);
    expect(standing.asPosted && standing.comments?.length === 2, `with nothing staged since the post the preview shows ${JSON.stringify({ postArea: standing.postArea, asPosted: standing.asPosted, comments: standing.comments?.length })}, expected the review as posted`);
    // Capture New Head from the preview: the new head is the review's capture; nothing is staged on it yet.
    await frame.locator('[data-testid="capture-new-head"]').click();
    const fresh = await poll(() => readPreview(frame), (p) => p.freshness === 'fresh' && p.postArea === 'post', 90_000);
    const freshBanner = await frame.locator('[data-testid="preview-freshness"]').innerText().catch(() => null);
    await screenshot('preview-new-head');
    rig.log(`forge: after Capture New Head ${JSON.stringify({ freshness: fresh.freshness, banner: freshBanner, event: fresh.event, comments: fresh.comments?.length, folded: fresh.folded?.length, postArea: fresh.postArea })}`);
    expect(fresh.freshness === 'fresh' && freshBanner?.includes(moved.slice(0, 7)), `after Capture New Head the head banner reads ${JSON.stringify({ state: fresh.freshness, banner: freshBanner })}, expected the new head ${moved.slice(0, 7)}`);
    expect(!fresh.asPosted && fresh.comments.length === 0 && fresh.folded.length === 0 && (fresh.bodyRendered ?? '').includes(`Reviewed ${moved.slice(0, 12)}`), `after Capture New Head the preview shows ${JSON.stringify({ asPosted: fresh.asPosted, comments: fresh.comments, folded: fresh.folded, body: fresh.bodyRendered?.slice(0, 200) })}, expected a review of the new head carrying nothing posted before`);
    // The Hand off view follows: no stale "Head moved" row, and what was posted is an earlier review now.
    await page.locator('#workbench\\.parts\\.statusbar').click({ position: { x: 2, y: 2 }, force: true });
    await rig.runCommand(page, 'Source Control: Focus on Hand off View');
    const settled = await poll(readHandOff, (h) => h.found && !h.rows.some((r) => /^Head moved/.test(r.label ?? '')) && h.rows.some((r) => /^Posted earlier: /.test(r.label ?? '')), 15_000);
    await screenshot('hand-off-new-head');
    rig.log(`forge: hand off after Capture New Head ${JSON.stringify(settled.rows?.map((r) => [r.level, r.label, r.description]))}`);
    expect(!settled.rows.some((r) => /^Head moved/.test(r.label ?? '')), `after Capture New Head the Hand off view still says the head moved: ${JSON.stringify(settled.rows?.map((r) => r.label))}`);
    expect(settled.rows.some((r) => r.label === 'Posted earlier: Request changes · 2 comments'), `after Capture New Head the Hand off view's receipt row is ${JSON.stringify(settled.rows?.filter((r) => /^Posted/.test(r.label ?? '')))}, expected "Posted earlier: Request changes · 2 comments"`);
    expect(!settled.rows.some((r) => asRead(r.label) === GUTTER_TEXT || asRead(r.label) === FINDINGS[0].title), `after Capture New Head the posted asks are listed again: ${JSON.stringify(settled.rows?.map((r) => r.label))}`);
  });

  await test('Open Pull Request on bob\'s own branch bob/feature: after Review Branch the modal shows the title and description the Design lens\'s model wrote from the review; Push and Open Pull Request pushes the branch (no upstream written) and the forge holds the request with exactly that text', async () => {
    expect(page && forge && models, 'the workbench, the forge or the model servers did not start (see the first test)');
    // bob's own branch, made from the test process in the workspace clone: feature as the clone
    // fetched it (alice's later push was never fetched), no upstream; origin pushes with bob's
    // credentials (the fake forge's git push needs HTTP basic auth), fetches without any.
    const forgeUrl = new URL(forge.url);
    const inClone = async (args) => (await execFileP('git', args, { cwd: clone, encoding: 'utf8', env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } })).stdout.trim();
    /** A git config value of the clone, or null when unset (`git config --get` exits 1). */
    const configOf = (key) => inClone(['config', '--get', key]).catch((e) => (e.code === 1 ? null : Promise.reject(e)));
    await inClone(['checkout', '--quiet', '--no-track', '-b', 'bob/feature', 'origin/feature']);
    await inClone(['remote', 'set-url', '--push', 'origin', `${forgeUrl.protocol}//bob:bob-token@${forgeUrl.host}/${OWNER}/${NAME}.git`]);
    const local = await inClone(['rev-parse', 'refs/heads/bob/feature']);
    const fetchUrl = await inClone(['remote', 'get-url', 'origin']);
    expect(local === headSha && fetchUrl === `${forge.url}/${OWNER}/${NAME}.git`, `the clone's bob/feature is at ${local} (expected feature as cloned, ${headSha}) and origin fetches from ${fetchUrl}`);
    expect((await configOf('branch.bob/feature.remote')) === null && (await configOf('branch.bob/feature.merge')) === null, 'checking out bob/feature wrote an upstream');

    // Review Branch bob/feature against main: the lens seats cite the feature branch's lines, so
    // the lanes settle as in the request's review; the opener's pass reads this review's capture.
    await clearTheView(page);
    await rig.runCommand(page, 'View: Close All Editors');
    await rig.runCommand(page, 'Rennet: Review Branch');
    await rig.pickQuickPick(page, 'Branch to review', 'bob/feature');
    await rig.pickQuickPick(page, 'Base to compare with', 'main');
    const boardTitle = 'Rennet · bob/feature vs main';
    await page.locator('.tabs-container .tab', { hasText: boardTitle }).first().waitFor({ timeout: 90_000 }).catch(async () => {
      const tabs = await page.locator('.tabs-container .tab .label-name').allInnerTexts().catch(() => []);
      throw new Error(`no tab titled "${boardTitle}" (tabs ${JSON.stringify(tabs)})`);
    });
    await board(page).locator('[data-testid="patchset-header"]').waitFor({ state: 'visible', timeout: 90_000 });
    const branchGeneration = await waitForTerminalGeneration(page, { what: 'after Review Branch bob/feature', requestCount });
    await rig.sleep(300);
    await screenshot('branch-board');
    const unsettled = branchGeneration.rail.filter((t) => t.state !== 'settled');
    expect(unsettled.length === 0, `every lens of bob/feature's review should settle on the scripted models; not settled: ${JSON.stringify(unsettled)}`);
    const reviewed = await board(page).locator('[data-testid="head-id"]').getAttribute('data-full-id');
    expect(reviewed === local, `the branch's board captured head ${reviewed}, bob/feature is at ${local}`);

    // Open Pull Request: one workspace folder, so no repository to pick (picked if it is asked for).
    await clearTheView(page);
    const requestsBefore = models.requests.length;
    await rig.runCommand(page, 'Rennet: Open Pull Request');
    const dialog = page.locator('.monaco-dialog-box').filter({ visible: true }).first();
    const repoPicker = page.locator('.quick-input-widget').filter({ visible: true }).filter({ has: page.locator('.quick-input-box input[placeholder="Repository to review"]') });
    const appeared = await poll(
      async () => ((await dialog.count()) > 0 ? 'dialog' : (await repoPicker.count()) > 0 ? 'picker' : null),
      (v) => v !== null,
      120_000,
    );
    if (appeared === 'picker') {
      rig.log('forge: Open Pull Request asked for the repository; picking the clone');
      await rig.pickQuickPick(page, 'Repository to review', path.basename(clone));
    }
    await dialog.waitFor({ state: 'visible', timeout: 120_000 }).catch(async () => {
      const notes = await page.locator('.notifications-toasts .notification-toast').allInnerTexts().catch(() => []);
      throw new Error(`no modal dialog within 120 s of "Rennet: Open Pull Request" (notifications ${JSON.stringify(notes)}; opener requests ${JSON.stringify(models.requests.slice(requestsBefore).map((r) => r.seat))})`);
    });
    const modal = await dialog.evaluate((d) => ({
      message: d.querySelector('.dialog-message-text')?.innerText ?? null,
      detail: d.querySelector('.dialog-message-detail')?.innerText ?? null,
      buttons: [...d.querySelectorAll('.dialog-buttons .monaco-button')].map((b) => b.textContent.trim()),
    }));
    await rig.sleep(300);
    await screenshot('open-pr-modal');
    rig.log(`forge: the Open Pull Request modal ${JSON.stringify(modal)}`);

    // Honest only if the polish ran: without the Design lens's harness (or with a pass that did not
    // finish) the modal shows the deterministic draft from the commits and the boards, whose title
    // is not OPENER_TITLE and whose last line says "Drafted without a model" or "did not finish":
    // every assertion below then fails.
    const wantMessage = `bob/feature → main: ${OPENER_TITLE}`;
    expect(modal.message === wantMessage, `the modal's message reads ${JSON.stringify(modal.message)}, expected ${JSON.stringify(wantMessage)}`);
    // The opener seat's turn on the Design lens's (OpenAI-compatible) server, as scripted: read_draft,
    // list_changes, read_diff, set_title, set_description, then its closing text.
    const openerSeats = await poll(
      () => models.requests.slice(requestsBefore).filter((r) => /^design:opener@/.test(r.seat ?? '')),
      (rs) => rs.length >= 6,
      5_000,
    );
    const openerRoute = openerSeats.map((r) => `${r.server} ${r.seat}`);
    const wantRoute = [0, 1, 2, 3, 4, 5].map((n) => `openai design:opener@${n}`);
    expect(JSON.stringify(openerRoute) === JSON.stringify(wantRoute), `the opener's requests were ${JSON.stringify(openerRoute)}, expected ${JSON.stringify(wantRoute)}`);
    // Its fourth request resends read_diff's answer: the added lines of the file as git shows them.
    const file = plan.opener.path;
    const added = hunks.get(file).hunks.flatMap((h) => h.lines).filter((l) => l.kind === 'add').map((l) => `${String(l.new).padStart(5)} | ${l.text}`);
    const readDiff = openerSeats.find((r) => r.seat === 'design:opener@3')?.toolResults?.at(-1) ?? '';
    const missing = added.filter((line) => !readDiff.includes(line));
    expect(added.length > 0 && missing.length === 0, `the opener's read_diff result resent to the model lacks ${missing.length} of ${file}'s ${added.length} added lines (${JSON.stringify(missing.slice(0, 3))}): ${JSON.stringify(readDiff.slice(0, 400))}`);
    const polishLine = "Title and description written by openai-compatible (scripted-model) from the branch's review.";
    const detailLines = (modal.detail ?? '').split('\n');
    expect(detailLines.includes(polishLine), `the modal's detail has no line ${JSON.stringify(polishLine)}: ${JSON.stringify(modal.detail)}`);
    expect((modal.detail ?? '').includes(OPENER_BODY), `the modal's detail does not hold the model's description ${JSON.stringify(OPENER_BODY)}: ${JSON.stringify(modal.detail)}`);
    const wantDetail = [
      `Pushes bob/feature to ${OWNER}/${NAME} on ${forgeUrl.host} (remote origin) and opens a request bob/feature → main with this title and description:`,
      '',
      OPENER_TITLE,
      '',
      OPENER_BODY,
      '',
      polishLine,
    ].join('\n');
    expect(modal.detail === wantDetail, `the modal's detail reads\n  ${JSON.stringify(modal.detail)}\nexpected\n  ${JSON.stringify(wantDetail)}`);
    const open = 'Push and Open Pull Request';
    expect(modal.buttons.includes(open) && modal.buttons.includes('Edit Title…') && modal.buttons.includes('Edit Description…'), `the modal's buttons are ${JSON.stringify(modal.buttons)}`);
    expect((await forge.call('pullRequests', { owner: OWNER, name: NAME })).length === 1, 'a request was opened before the modal was answered');

    // Push and Open: the branch goes to the forge and the request is opened with the modal's text.
    await dialog.locator('.dialog-buttons .monaco-button', { hasText: open }).first().click();
    const toast = page.locator('.notifications-toasts .notification-toast').filter({ hasText: /Rennet: opened / }).first();
    await toast.waitFor({ state: 'visible', timeout: 60_000 }).catch(async () => {
      const notes = await page.locator('.notifications-toasts .notification-toast').allInnerTexts().catch(() => []);
      throw new Error(`no "Rennet: opened …" notification within 60 s of ${open} (notifications ${JSON.stringify(notes)})`);
    });
    const said = (await toast.locator('.notification-list-item-message').first().innerText()).trim();
    await rig.sleep(300);
    await screenshot('open-pr-opened');
    const pulls = await forge.call('pullRequests', { owner: OWNER, name: NAME });
    rig.log(`forge: after ${open}: ${JSON.stringify(said)}; the forge's requests ${JSON.stringify(pulls.map((p) => ({ number: p.number, head: p.head?.ref, base: p.base?.ref, user: p.user?.login })))}`);
    const mine = pulls.filter((p) => p.head?.ref === 'bob/feature');
    expect(mine.length === 1 && pulls.length === 2, `the forge holds ${JSON.stringify(pulls.map((p) => [p.number, p.head?.ref]))}, expected #1 and one request of bob/feature`);
    const [opened] = mine;
    // GitHub numbers issues and pull requests together: #1 (alice's request) and #2 (the issue) are taken.
    expect(opened.number === 3 && said === `Rennet: opened Pull Request #${opened.number}.`, `the notification says ${JSON.stringify(said)}; the forge numbered bob's request #${opened.number} (expected #3)`);
    const live = await forge.call('pullRequest', { owner: OWNER, name: NAME, number: opened.number });
    expect(live.user?.login === 'bob' && live.state === 'open' && live.head?.ref === 'bob/feature' && live.base?.ref === 'main', `the forge's request #${opened.number} is ${JSON.stringify({ user: live.user?.login, state: live.state, head: live.head?.ref, base: live.base?.ref })}, expected bob's open bob/feature → main`);
    expect(live.title === OPENER_TITLE, `the request's title is ${JSON.stringify(live.title)}, expected the model's ${JSON.stringify(OPENER_TITLE)}`);
    expect(live.body === OPENER_BODY, `the request's body is ${JSON.stringify(live.body)}, expected the model's ${JSON.stringify(OPENER_BODY)}`);
    const remoteHead = (await inClone(['ls-remote', 'origin', 'refs/heads/bob/feature'])).split(/\s+/)[0];
    expect(live.head?.sha === local && remoteHead === local, `the pushed head is ${live.head?.sha} (the forge's branch ${remoteHead}), the local bob/feature is ${local}`);
    const creates = await forge.call('requests', { method: 'POST', pathPattern: `^/api/v3/repos/${OWNER}/${NAME}/pulls$` });
    expect(creates.length === 1 && creates[0].user === 'bob' && creates[0].status === 201, `the forge saw ${JSON.stringify(creates)} request creations, expected one of bob's`);
    expect((await configOf('branch.bob/feature.remote')) === null && (await configOf('branch.bob/feature.merge')) === null, `the push wrote an upstream for bob/feature (branch.bob/feature.remote ${JSON.stringify(await configOf('branch.bob/feature.remote'))})`);
  });

  if (runner.results.slice(first).some((r) => !r.ok)) await printDiagnostics({ label: 'forge', cs, models, consoleErrors, forge, surface: 'github' });
  await page?.close().catch(() => {});
  await cs?.stop();
  page = null;
  cs = null;

  // The same requests on GitLab: the same forge process serves grp/widgets; a code-server of its own
  // registers the forge as GitLab, and the token comes from "Rennet: Set GitLab Token".
  await runForgeGitLab({ paths, vsix, runner, browser, forge, models, source, plan, work });
  await models?.stop();
  await forge?.stop();
}

/** What a failed pass prints: code-server's and Rennet's logs, the console errors, the forge's stderr and its requests on `surface` (and git's). */
async function printDiagnostics({ label, cs, models, consoleErrors, forge, surface }) {
  dumpDiagnostics({ label, cs, models, consoleErrors, codeServerLines: 60, rennetLogLines: 150, extHostErrors: true, modelRequests: false });
  if (forge?.stderr.length) console.log(`--- ${label}: fake forge stderr ---\n${forge.stderr.slice(-40).join('\n')}`);
  if (forge) {
    const requests = (await forge.call('requests', {}).catch(() => [])).filter((r) => r.surface === surface || r.surface === 'git');
    console.log(`--- ${label}: fake forge requests (${requests.length}) ---\n${requests.slice(-40).map((r) => `${r.method} ${r.path} → ${r.status}${r.user ? ` (${r.user})` : ''}`).join('\n')}`);
  }
}


// ---------------------------------------------------------------------------------------------
// The GitLab pass.

const GL_GROUP = 'grp';
const GL_NAME = 'widgets';
const MR_TITLE = 'Spell out the changed lines';
const GL_GUTTER_TEXT = 'Say on GitLab why line five changes.';
/** GitLab has no review event: the body's first line is the verdict's label (protocol/exits.ts GITLAB_VERDICT_LABELS). */
const GL_VERDICT_LABEL = '**Verdict: changes requested**';

/**
 * The VS Code surfaces against GitLab, on the forge process the GitHub pass used: grp/widgets (the
 * same repository) with merge request !1 by alice, a clone of it on main opened by a code-server of
 * its own whose environment registers the forge as GitLab (one host:port is one provider in
 * RENNET_FORGES) and carries no GitLab token. bob's token goes in through "Rennet: Set GitLab Token"
 * (a password box, VS Code's SecretStorage), and the host gets it by asking the editor
 * (`rennet/auth/token`). Review Pull Request → !1, a gutter comment and a finding's Request change,
 * the Hand off view, the preview (the verdict's label first in the body), Post → one body note equal
 * to the preview's raw body and one positioned discussion per comment, the posted state after a
 * window reload. Screenshots: test/e2e/artifacts/forge-gitlab-NN-*.png.
 */
async function runForgeGitLab({ paths, vsix, runner, browser, forge, models, source, plan, work }) {
  let page = null;
  let cs = null;
  const consoleErrors = [];
  const { screenshot, test } = scenarioKit({ label: 'forge-gitlab', runner, page: () => page });
  const { webviewWith, previewFrame, readPreview, stagedCount, readHandOff, scmBadge } = forgePageKit(() => page);
  const first = runner.results.length;
  const headSha = git(source, ['rev-parse', 'feature']).trim();
  const gutterLine = plan.sequence[0].start;
  const clone = path.join(work, 'widgets gitlab checkout');
  const mr = { owner: GL_GROUP, name: GL_NAME, number: 1 };
  const full = `${GL_GROUP}/${GL_NAME}`;
  let host = null;
  /** The forge's GitLab API requests (the GitHub pass's and git's are other surfaces). */
  const gitlabRequests = (filter = {}) => forge.call('requests', { ...filter, surface: 'gitlab' });
  /** Everything the Rennet output channel wrote in this code-server. */
  const rennetLog = () => (cs?.logsMatching(/^(\d+-)?Rennet\.log$/i) ?? []).map((f) => fs.readFileSync(f, 'utf8')).join('\n');

  await test(`the fake forge serves ${full} with merge request !1 by alice; a code-server registering it as GitLab, with no GitLab token in its environment, opens a clone on main`, async () => {
    expect(forge && models, 'the fake forge or the model servers did not start (see the forge scenario\'s first test)');
    host = new URL(forge.url).host;
    await forge.call('createRepo', { provider: 'gitlab', owner: GL_GROUP, name: GL_NAME, from: source, defaultBranch: 'main' });
    const opened = await forge.call('openPullRequest', { provider: 'gitlab', owner: GL_GROUP, name: GL_NAME, author: 'alice', head: 'feature', base: 'main', title: MR_TITLE, body: 'Spells the changed lines out.\n' });
    expect(opened.iid === 1 && opened.headSha === headSha, `the forge opened ${JSON.stringify(opened)}, expected !1 at ${headSha}`);
    const live = await forge.call('pullRequest', mr);
    expect(live.author?.username === 'alice' && live.diff_refs?.head_sha === headSha && live.references?.short === '!1', `the forge's merge request reads ${JSON.stringify(live).slice(0, 300)}`);

    await execFileP('git', ['clone', '--quiet', `${forge.url}/${full}.git`, clone], { env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } });
    const branch = (await execFileP('git', ['rev-parse', '--abbrev-ref', 'HEAD'], { cwd: clone, encoding: 'utf8' })).stdout.trim();
    expect(branch === 'main', `the clone is on ${branch}, expected main`);

    cs = await rig.startCodeServer({
      paths,
      name: 'forge-gitlab',
      vsixes: [vsix],
      settings: { ...harnessSettings(models), 'javascript.validate.enable': false },
      // One RENNET_FORGES entry names one provider for a host:port: this code-server's says GitLab.
      // No token in the environment (GITLAB_TOKEN would win over the stored one), no CLI logins.
      env: {
        RENNET_FORGES: JSON.stringify([{ host, provider: 'gitlab', apiUrl: forge.gitlabApiUrl }]),
        GITLAB_TOKEN: '',
        GITHUB_TOKEN: '',
        GH_TOKEN: '',
        RENNET_FORGE_CLI_TOKENS: '0',
      },
    });
    page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    watchConsole(page, consoleErrors);
    await rig.openWorkbench(page, cs, clone);
    await page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'src' }).first().waitFor({ timeout: 30_000 });
    await screenshot('workbench');
    const asked = await gitlabRequests();
    expect(asked.length === 0, `the GitLab API was called before anything asked it: ${JSON.stringify(asked)}`);
  });

  await test('"Rennet: Set GitLab Token" takes the forge\'s host:port, then bob\'s token in a password box, into VS Code\'s secret storage', async () => {
    expect(page, 'the workbench did not open (see the previous test)');
    await rig.runCommand(page, 'Rennet: Set GitLab Token');
    const widget = page.locator('.quick-input-widget');
    const title = widget.locator('.quick-input-title');
    const input = widget.locator('.quick-input-box input');
    const titleText = () => title.innerText({ timeout: 1_000 }).catch(() => null);
    const hostTitle = await poll(titleText, (t) => /\(1\/2\)/.test(t ?? ''), 10_000);
    expect(hostTitle === 'Rennet: Set GitLab Token (1/2)', `the host box's title is ${JSON.stringify(hostTitle)}`);
    const offered = await input.inputValue();
    expect(offered === 'gitlab.com', `the host box offers ${JSON.stringify(offered)}, expected gitlab.com`);
    await input.fill(host);
    await input.press('Enter');
    const second = await poll(titleText, (t) => /\(2\/2\)/.test(t ?? ''), 10_000);
    expect(second === `Rennet: GitLab token for ${host} (2/2)`, `the token box's title is ${JSON.stringify(second)}, expected it to name ${host}`);
    const type = await input.getAttribute('type');
    expect(type === 'password', `the token box's input is type=${JSON.stringify(type)}, expected a password field`);
    await input.fill('bob-token');
    await screenshot('token-box');
    await input.press('Enter');
    const toast = page.locator('.notifications-toasts .notification-toast', { hasText: `the GitLab token for ${host} is stored` }).first();
    await toast.waitFor({ state: 'visible', timeout: 15_000 }).catch(async () => {
      const notes = await page.locator('.notifications-toasts .notification-toast').allInnerTexts().catch(() => []);
      throw new Error(`no notification says the token is stored (notifications ${JSON.stringify(notes)})`);
    });
    await screenshot('token-stored');
    const logged = await poll(rennetLog, (t) => t.includes(`A GitLab token for ${host} was stored in secret storage.`), 10_000);
    expect(logged.includes(`A GitLab token for ${host} was stored in secret storage.`), `the Rennet log does not say the token was stored: ${JSON.stringify(logged.split('\n').slice(-10))}`);
    const asked = await gitlabRequests();
    expect(asked.length === 0, `storing the token called the GitLab API: ${JSON.stringify(asked)}`);
  });

  let generation = null;
  const title = `Rennet · Merge Request !1 · ${full}`;
  await test(`Review Pull Request lists !1 (asked as bob, the token from secret storage); picking it opens "${title}" and the lenses settle`, async () => {
    expect(page, 'the workbench did not open (see the previous tests)');
    await clearTheView(page);
    await rig.runCommand(page, 'Rennet: Review Pull Request');
    const labels = await rig.waitForQuickPick(page, 'open merge request');
    const placeholder = await page.locator('.quick-input-widget .quick-input-box input').getAttribute('placeholder');
    rig.log(`forge-gitlab: request picker ${JSON.stringify({ placeholder, labels })}`);
    expect(placeholder === `1 open merge request on ${full} on ${host}: pick one to review, or paste a number or URL`, `the picker's placeholder is ${JSON.stringify(placeholder)}`);
    expect(labels[0] === `!1 ${MR_TITLE}`, `the picker's first row is ${JSON.stringify(labels[0])}, expected "!1 ${MR_TITLE}" (rows ${JSON.stringify(labels)})`);
    await page.locator('.quick-input-widget .quick-input-box input').fill('!1');
    const row = page.locator('.quick-input-widget .monaco-list-row').filter({ has: page.locator('.label-name', { hasText: /^!1 / }) }).first();
    await row.waitFor({ state: 'visible', timeout: 10_000 });
    const description = await row.locator('.label-description').first().innerText().catch(() => null);
    await screenshot('pick-request');
    expect(description?.trim() === 'alice · feature → main', `the request's row describes it as ${JSON.stringify(description)}, expected "alice · feature → main"`);
    // The list came from GitLab, asked as bob: the host had no token of its own and asked the editor for the stored one.
    const listed = await gitlabRequests({ method: 'GET', pathPattern: `^/api/v4/projects/(${GL_GROUP}%2F${GL_NAME}|\\d+)/merge_requests$` });
    const all = await gitlabRequests();
    expect(listed.length > 0 && all.every((r) => r.user === 'bob' && r.status < 400), `the forge's GitLab requests were ${JSON.stringify(all.map((r) => [r.method, r.path, r.status, r.user]))}, expected bob's merge request list among them and nothing else`);
    const answered = `Forge credentials for ${host} (gitlab): answered from VS Code.`;
    const logged = await poll(rennetLog, (t) => t.includes(answered), 10_000);
    expect(logged.includes(answered), `the Rennet log does not say the editor answered the host's token request (${JSON.stringify(answered)}): ${JSON.stringify(logged.split('\n').filter((l) => /credentials|token/i.test(l)))}`);
    await row.click();
    await page.locator('.tabs-container .tab', { hasText: title }).first().waitFor({ timeout: 90_000 }).catch(async () => {
      const tabs = await page.locator('.tabs-container .tab .label-name').allInnerTexts().catch(() => []);
      const notes = await page.locator('.notifications-toasts .notification-toast, .notification-list-item-message').allInnerTexts().catch(() => []);
      throw new Error(`no tab titled "${title}" (tabs ${JSON.stringify(tabs)}; notifications ${JSON.stringify(notes)})`);
    });
    await board(page).locator('[data-testid="patchset-header"]').waitFor({ state: 'visible', timeout: 90_000 });
    generation = await waitForTerminalGeneration(page, { what: 'after Review Pull Request (GitLab)', requestCount: () => models?.requests.length ?? 0 });
    await rig.sleep(300);
    await screenshot('board');
    const tab = (await page.locator('.tabs-container .tab.active .label-name').first().innerText()).trim();
    expect(tab === title, `the board's tab is ${JSON.stringify(tab)}, expected ${JSON.stringify(title)}`);
    const headFull = await board(page).locator('[data-testid="head-id"]').getAttribute('data-full-id');
    expect(headFull === headSha, `the board captured head ${headFull}, the merge request's head is ${headSha}`);
    const header = await board(page).locator('[data-testid="patchset-header"]').evaluate((h) => ({ title: h.querySelector('[data-testid="target-title"]')?.textContent?.trim() ?? null, kind: h.querySelector('[data-testid="target-kind"]')?.textContent?.trim() ?? null }));
    expect(header.title === `Merge Request !1 · ${full}` && header.kind === 'merge request', `the board's header reads ${JSON.stringify(header)}, expected "Merge Request !1 · ${full}" with the chip "merge request"`);
    const unsettled = generation.rail.filter((t) => t.state !== 'settled');
    expect(unsettled.length === 0, `every lens should settle on the scripted models; not settled: ${JSON.stringify(unsettled)}`);
    const fetched = (await execFileP('git', ['for-each-ref', '--format=%(refname) %(objectname)', 'refs/rennet/pr/'], { cwd: clone, encoding: 'utf8' })).stdout;
    expect(fetched.includes(headSha), `the merge request's head ${headSha} was not fetched into refs/rennet/pr/: ${JSON.stringify(fetched)}`);
  });

  await test('a comment staged from the editor gutter and Request change on a Flagged finding: two asks staged', async () => {
    expect(generation, 'no settled generation (see the previous test)');
    await stageGutterComment({ page, cite: plan.sequence[0], line: gutterLine, text: GL_GUTTER_TEXT, screenshot, label: 'forge-gitlab' });
    const afterGutter = await poll(stagedCount, (n) => n === 1);
    expect(afterGutter === 1, `the board counts ${afterGutter} staged asks after the gutter comment, expected 1`);
    await clearTheView(page);
    await page.locator('.tabs-container .tab', { hasText: 'Rennet · Merge Request !1' }).first().click();
    await selectLens(page, 'flagged');
    const finding = board(page).locator('[data-testid="element"][data-kind="finding"]').filter({ hasText: FINDINGS[0].title }).first();
    await finding.waitFor({ state: 'visible', timeout: 15_000 });
    await finding.locator('[data-testid="finding-request"]').click();
    const staged = await poll(stagedCount, (n) => n === 2);
    const marked = await finding.locator('[data-testid="finding-state"][data-state="requested"]').count();
    await screenshot('finding-requested');
    expect(staged === 2 && marked === 1, `after Request change the board counts ${staged} staged asks (expected 2) and the finding carries ${marked} "requested" marks`);
  });

  let handOff = null;
  await test('Source Control: the Hand off view counts two staged asks for the merge request and offers the preview', async () => {
    expect(generation, 'no settled generation (see the previous tests)');
    await page.locator('#workbench\\.parts\\.statusbar').click({ position: { x: 2, y: 2 }, force: true });
    await rig.runCommand(page, 'Source Control: Focus on Hand off View');
    const header = page.locator('.part.sidebar .pane-header', { hasText: /Hand off/i }).first();
    await header.waitFor({ state: 'visible', timeout: 15_000 });
    if ((await header.getAttribute('aria-expanded')) === 'false') await header.click();
    const changes = page.locator('.part.sidebar .pane-header', { hasText: /^\s*Changes/ }).first();
    if ((await changes.count()) > 0 && (await changes.getAttribute('aria-expanded')) === 'true') await changes.click();
    handOff = await poll(readHandOff, (h) => h.found && h.rows.some((r) => /^Preview and post review/.test(r.label ?? '')) && h.rows.filter((r) => r.level === 2).length >= 2, 20_000);
    const badge = await poll(scmBadge, (b) => b.text === '2', 10_000);
    await page.mouse.move(5, 500);
    await rig.sleep(300);
    await screenshot('hand-off');
    rig.log(`forge-gitlab: hand off ${JSON.stringify(handOff.rows?.map((r) => [r.level, r.label, r.description]))}; badge ${JSON.stringify(badge)}`);
    expect(handOff.found && /Merge Request !1 · grp\/widgets/.test(handOff.description ?? ''), `the Hand off view's description is ${JSON.stringify(handOff.description)} (found: ${handOff.found}), expected it to name Merge Request !1 · ${full}`);
    expect(badge.text === '2' && badge.visible, `the Source Control badge is ${JSON.stringify(badge)}, expected 2`);
    const lane = handOff.rows.find((r) => r.level === 1 && r.label === 'Post review');
    expect(lane?.description === '2 staged', `the "Post review" lane row is ${JSON.stringify(lane)}, expected "2 staged"`);
    const asks = handOff.rows.filter((r) => r.level === 2);
    const want = [
      { label: GL_GUTTER_TEXT, description: `src/app.js:${gutterLine} (new)`, icon: 'codicon-comment' },
      { label: FINDINGS[0].title, description: `finding: ${FINDINGS[0].title}`, icon: 'codicon-request-changes' },
    ];
    const same = asks.length === want.length && want.every((w, i) => asRead(asks[i].label) === w.label && asks[i].description === w.description && asks[i].icons.includes(w.icon));
    expect(same, `the Hand off view's asks are ${JSON.stringify(asks.map((r) => ({ label: r.label, description: r.description, icons: r.icons })))}, expected ${JSON.stringify(want)}`);
  });

  let shownBody = null;
  let shownComments = null;
  await test('the preview: Request changes, GitLab\'s verdict label as the body\'s first line, the two line comments, Post to GitLab', async () => {
    expect(handOff?.found, 'the Hand off view was not read (see the previous test)');
    await page.locator('.part.sidebar .pane .monaco-list-row', { hasText: 'Preview and post review…' }).first().click();
    const frame = await previewFrame();
    let shown = await poll(() => readPreview(frame), (p) => p.postArea === 'post' && p.freshness === 'fresh' && p.comments?.length === 2, 30_000);
    await rig.sleep(300);
    await screenshot('preview');
    rig.log(`forge-gitlab: preview ${JSON.stringify({ ...shown, text: shown.text?.slice(0, 300) })}`);
    const tab = (await page.locator('.tabs-container .tab.active .label-name').last().innerText().catch(() => '')).trim();
    expect(tab === `Post review · Merge Request !1 · ${full}` && shown.target === tab, `the preview's tab is ${JSON.stringify(tab)} and its title ${JSON.stringify(shown.target)}, expected "Post review · Merge Request !1 · ${full}"`);
    expect(shown.freshness === 'fresh' && shown.entry === 'a teammate’s request', `the preview's head state is ${JSON.stringify(shown.freshness)} and its request ${JSON.stringify(shown.entry)}`);
    expect(shown.event === 'REQUEST_CHANGES' && shown.eventText === 'Request changes' && /a staged change request makes it Request changes/.test(shown.how ?? ''), `the verdict is ${JSON.stringify([shown.event, shown.eventText, shown.how])}`);
    // GitLab has no review event: the verdict is the body's first line, drawn bold.
    expect(shown.bodyFirst?.text === 'Verdict: changes requested' && JSON.stringify(shown.bodyFirst.strong) === '["Verdict: changes requested"]', `the rendered body's first block is ${JSON.stringify(shown.bodyFirst)}, expected "Verdict: changes requested" in bold`);
    expect((shown.bodyRendered ?? '').includes(`Reviewed ${headSha.slice(0, 12)}`), `the rendered body does not state the reviewed head ${headSha.slice(0, 12)}: ${JSON.stringify(shown.bodyRendered)}`);
    const wantComments = [
      { path: 'src/app.js', side: 'RIGHT', line: gutterLine, startLine: null, where: `src/app.js · new side · line ${gutterLine}` },
      { path: 'src/app.js', side: 'RIGHT', line: plan.flagged[0].end, startLine: plan.flagged[0].start, where: `src/app.js · new side · lines ${plan.flagged[0].start}–${plan.flagged[0].end}` },
    ];
    const got = shown.comments.map((c) => ({ path: c.path, side: c.side, line: c.line, startLine: c.startLine, where: c.where?.split(' · ').slice(0, 3).join(' · ') }));
    expect(JSON.stringify(got) === JSON.stringify(wantComments), `the preview's comments are ${JSON.stringify(got)}, expected ${JSON.stringify(wantComments)}`);
    expect(shown.comments[0].body === GL_GUTTER_TEXT && (shown.comments[1].body ?? '').includes(FINDINGS[0].title), `the comments read ${JSON.stringify(shown.comments.map((c) => c.body))}`);
    expect(shown.folded.length === 0, `asks folded into the body: ${JSON.stringify(shown.folded)}`);
    expect(shown.postButton && !shown.postButton.disabled && shown.postButton.text === 'Post to GitLab', `the Post button is ${JSON.stringify(shown.postButton)}, expected "Post to GitLab"`);

    await frame.locator('[data-testid="body-raw-toggle"]').click();
    shown = await poll(() => readPreview(frame), (p) => p.bodyRaw !== null, 5_000);
    await screenshot('preview-raw');
    shownBody = shown.bodyRaw;
    shownComments = shown.comments.map((c) => ({ path: c.path, side: c.side, line: c.line, startLine: c.startLine, body: c.raw }));
    expect(shownBody?.split('\n')[0] === GL_VERDICT_LABEL, `the raw body's first line is ${JSON.stringify(shownBody?.split('\n')[0])}, expected ${JSON.stringify(GL_VERDICT_LABEL)}`);
    expect(shown.marker && shownBody.endsWith(`\n<!-- rennet-review: ${shown.marker} -->`), `the raw body does not end with the marker ${JSON.stringify(shown.marker)}: ${JSON.stringify(shownBody)}`);
    expect(shownComments.every((c) => typeof c.body === 'string' && c.body.length > 0), `raw comments: ${JSON.stringify(shownComments)}`);
    const notes = await forge.call('notes', mr);
    expect(notes.length === 0, `the merge request holds ${notes.length} notes before Post`);
  });

  let receiptUrl = null;
  await test('Post: the posted state, and the merge request holds exactly one body note equal to the preview\'s raw body and one positioned discussion per comment', async () => {
    expect(shownBody, 'the preview was not read (see the previous test)');
    const frame = await previewFrame();
    await frame.locator('[data-testid="post-review"]').click();
    const shown = await poll(() => readPreview(frame), (p) => p.postArea === 'posted' || p.refused !== null, 60_000);
    await rig.sleep(300);
    await screenshot('posted');
    rig.log(`forge-gitlab: after Post ${JSON.stringify({ postArea: shown.postArea, posted: shown.posted, refused: shown.refused })}`);
    expect(shown.postArea === 'posted' && shown.posted, `after Post the preview shows ${JSON.stringify({ postArea: shown.postArea, refused: shown.refused, error: shown.error })}`);
    expect(shown.posted.event === 'REQUEST_CHANGES' && shown.posted.comments === 2 && shown.posted.words === 'Posted: Request changes · 2 comments' && shown.postButton === null, `the posted state reads ${JSON.stringify(shown.posted)} (Post button ${JSON.stringify(shown.postButton)})`);
    const notes = await forge.call('notes', mr);
    rig.log(`forge-gitlab: notes on the merge request ${JSON.stringify(notes.map((n) => ({ id: n.id, type: n.type, author: n.author?.username, position: n.position ?? null, body: n.body.slice(0, 60) })))}`);
    const bodies = notes.filter((n) => !n.position);
    expect(bodies.length === 1, `the merge request holds ${bodies.length} notes without a position, expected exactly one (the review's body): ${JSON.stringify(bodies.map((n) => n.body.slice(0, 80)))}`);
    const [body] = bodies;
    expect(body.author?.username === 'bob' && body.body === shownBody, `the body note is bob's? ${body.author?.username}; it differs from the preview's raw body:\n  posted  ${JSON.stringify(body.body)}\n  preview ${JSON.stringify(shownBody)}`);
    const positioned = notes
      .filter((n) => n.position)
      .map((n) => {
        const p = n.position;
        const side = p.new_line !== null ? 'RIGHT' : 'LEFT';
        const pick = (o) => (side === 'RIGHT' ? o.new_line : o.old_line);
        return { path: p.new_path, side, line: pick(p), startLine: p.line_range ? pick(p.line_range.start) : null, body: n.body, type: n.type, author: n.author?.username, head: p.head_sha };
      });
    const wantPositioned = shownComments.map((c) => ({ ...c, type: 'DiffNote', author: 'bob', head: headSha }));
    expect(JSON.stringify(positioned) === JSON.stringify(wantPositioned), `the positioned notes differ from the preview's comments:\n  posted  ${JSON.stringify(positioned)}\n  preview ${JSON.stringify(wantPositioned)}`);
    const discussions = await forge.call('discussions', mr);
    const shapes = discussions.map((d) => d.notes.map((n) => n.type));
    expect(discussions.length === 3 && discussions.every((d) => d.notes.length === 1), `the merge request holds discussions ${JSON.stringify(shapes)}, expected three of one note each (the body, the two comments)`);
    const drafts = await forge.call('draftNotes', mr);
    const approvals = await forge.call('approvals', mr);
    expect(drafts.length === 0 && approvals.approved_by.length === 0, `after Post ${drafts.length} draft notes are left and the merge request is approved by ${JSON.stringify(approvals.approved_by)}`);
    const publishes = await gitlabRequests({ method: 'POST', pathPattern: '/draft_notes/bulk_publish$' });
    expect(publishes.length === 1 && publishes[0].user === 'bob', `the forge saw ${JSON.stringify(publishes)} bulk publishes, expected one of bob's`);
    receiptUrl = shown.posted.link;
    expect(receiptUrl === `${forge.url}/${full}/-/merge_requests/1#note_${body.id}`, `the posted link is ${JSON.stringify(receiptUrl)}, expected the body note ${forge.url}/${full}/-/merge_requests/1#note_${body.id}`);
  });

  await test('after Developer: Reload Window the restored preview shows the posted review (the head read again with the stored token) and the Hand off view its receipt', async () => {
    expect(receiptUrl, 'nothing was posted (see the previous test)');
    await page.evaluate(() => {
      window.__rennetBeforeReload = true;
    });
    await rig.runCommand(page, 'Developer: Reload Window');
    await page.waitForFunction(() => !window.__rennetBeforeReload, null, { timeout: 60_000 });
    await rig.waitForWorkbench(page);
    const restored = await webviewWith('[data-testid="review-preview"]', 45_000);
    const tabs = await page.locator('.tabs-container .tab .label-name').allInnerTexts().catch(() => []);
    expect(restored, `after the reload no preview was restored (tabs ${JSON.stringify(tabs)})`);
    const shown = await poll(() => readPreview(restored), (p) => p.postArea === 'posted' && p.freshness === 'fresh', 45_000);
    await rig.sleep(300);
    await screenshot('posted-after-reload');
    rig.log(`forge-gitlab: preview after the reload ${JSON.stringify({ postArea: shown.postArea, freshness: shown.freshness, posted: shown.posted, error: shown.error })}`);
    expect(shown.postArea === 'posted' && shown.posted?.words === 'Posted: Request changes · 2 comments' && shown.posted.link === receiptUrl && shown.postButton === null, `after the reload the preview shows ${JSON.stringify({ postArea: shown.postArea, posted: shown.posted, postButton: shown.postButton, error: shown.error })}, expected the posted review ${receiptUrl}`);
    expect(shown.freshness === 'fresh', `after the reload the preview's head state is ${JSON.stringify(shown.freshness)}: the head could not be read again with the stored token?`);
    await page.locator('#workbench\\.parts\\.statusbar').click({ position: { x: 2, y: 2 }, force: true });
    await rig.runCommand(page, 'Source Control: Focus on Hand off View');
    const view = await poll(readHandOff, (h) => h.found && h.rows.some((r) => /^Posted: /.test(r.label ?? '')), 20_000);
    await page.mouse.move(5, 500);
    await rig.sleep(300);
    await screenshot('hand-off-posted');
    const receiptRow = view.rows?.find((r) => /^Posted: /.test(r.label ?? ''));
    expect(receiptRow?.label === 'Posted: Request changes · 2 comments', `after the reload the Hand off view's receipt row is ${JSON.stringify(receiptRow)} (rows ${JSON.stringify(view.rows?.map((r) => r.label))})`);
    const notes = await forge.call('notes', mr);
    expect(notes.filter((n) => !n.position).length === 1 && notes.length === 3, `after the reload the merge request holds ${notes.length} notes, expected still the three posted`);
    // Every GitLab call was bob's, and the token is in no log.
    const all = await gitlabRequests();
    expect(all.length > 0 && all.every((r) => r.user === 'bob' && r.status < 400), `the forge's GitLab requests: ${JSON.stringify(all.filter((r) => r.user !== 'bob' || r.status >= 400))} were not bob's or failed`);
    const logs = [cs.logFile, ...cs.logsMatching(/\.log$/)].filter((f) => fs.existsSync(f) && fs.readFileSync(f, 'utf8').includes('bob-token'));
    expect(logs.length === 0, `bob's token is written in ${JSON.stringify(logs.map((f) => path.relative(cs.dir, f)))}`);
  });

  if (runner.results.slice(first).some((r) => !r.ok)) await printDiagnostics({ label: 'forge-gitlab', cs, models, consoleErrors, forge, surface: 'gitlab' });
  await page?.close().catch(() => {});
  await cs?.stop();
}
