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
// alice's push is her fix of bob's gutter comment (line 5 of src/app.js says why it changed; plus a
// line of the added file and a reworded note). Re-review since your last review (the Hand off row):
// the notification states the delta since bob's reviewed commit and "Prior review: 1 of 3 resolved";
// the scripted closure seat (prompt `# Rennet: prior items`, on the Flagged lens's harness) reads
// read_prior_items and the fixed file's diff, resolves the item on src/app.js:5 citing the ev- id it
// read, leaves the finding's and the body note's items open; the lens seats, reading the delta,
// play a delta plan (test/servers/e2eReading.ts `rereview`), so the new generation settles; its
// Flagged lens shows Prior items (the line, each item, the reasons; the evidence opens the fixed line
// at alice's head), the still-open finding's ask is staged again; Request change on the delta's
// finding, the preview and Post land a second review pinned to alice's head whose body opens with the
// line, and the Hand off view shows its receipt.
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
// and one positioned discussion per comment, the posted state after a window reload; then alice pushes
// the same fix to !1, Capture New Head, Re-review since your last review ("Prior review: 1 of 2
// resolved"), the Prior items, and a post whose body note opens with the line, then the verdict label.
// Screenshots: test/e2e/artifacts/forge-gitlab-NN-*.png.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import * as rig from './rig.mjs';
import {
  board,
  collapseSelectionOnLine,
  dumpDiagnostics,
  editorOf,
  focusHandOff,
  openCommentWidget,
  ptyChildren,
  pwnedFrames,
  readHandOff as readHandOffOf,
  scenarioKit,
  scmBadge as scmBadgeOf,
  selectLens,
  startBeacon,
  terminalsDrawn,
  visibleLineTops,
  waitForTerminalGeneration,
  watchConsole,
} from './boardPage.mjs';
import { diffHunks, git, initRepo, uncitedHunkCount } from './fixture.mjs';
import { harnessSettings, startModelServers, startServerProcess } from './modelServers.mjs';

const { expect } = rig;
const execFileP = promisify(execFile);

const OWNER = 'acme';
const NAME = 'widgets';
/** A `command:` link that would open a terminal: in the request's title and body, it must stay text. */
const COMMAND_LINK = '[run](command:workbench.action.terminal.new)';
/** A marker file the sendSequence payload would write (cwd: the workspace). */
const MARKER = 'rennet-pwned-forge';
/**
 * What a forge or a reviewer could write, on one line, each part of it a way out: `$(…)` icons, HTML
 * with an `onerror` that calls the beacon, a `javascript:` link, an image and a link at a loopback
 * address (the beacon), a U+202E, and a `command:` link that would type `touch <MARKER>` into a
 * terminal. In the request's title and body and in one staged ask, it must stay text everywhere.
 */
function hostileText(beacon) {
  const run = `[go](command:workbench.action.terminal.sendSequence?${encodeURIComponent(JSON.stringify({ text: `touch ${MARKER}\n` }))})`;
  return [
    '$(terminal) $(alert)',
    `<img src=x onerror="self.rennetPwned=1;fetch('http://127.0.0.1:${beacon}/onerror')">`,
    '[js](javascript:self.rennetPwned=1)',
    `![i](http://127.0.0.1:${beacon}/img.png)`,
    `[local](http://127.0.0.1:${beacon}/link)`,
    'invoice\u202Etxt.exe',
    run,
  ].join(' ');
}
/** The request's title and body (set once the beacon's port is known): words, the command link, the hostile text. */
let PR_TITLE = null;
let PR_BODY = null;
const ISSUE_TITLE = 'Lines should say what changed';
const GUTTER_TEXT = 'Say why line five changes here.';
const PROSE = 'The renamed line is what callers now read.';
const PROSE_ASK_WORDS = 'Say which callers read the renamed line.';
/**
 * The reviewer's text carries the link and the hostile text too: it reaches the Hand off view, the
 * preview and the posted body. Set with the beacon's port.
 */
let PROSE_ASK = null;
/** What the UI shows of a text once the escaping seam's word joiners (U+2060, inside "](" and "$(") are read past. */
const asRead = (text) => (text ?? '').replace(/\u2060/g, '');
/**
 * Whether a Hand off row's label reads as the ask `text`: its plain UI text, whole, or cut with "…"
 * (a label holds the first ASK_LABEL_MAX_CHARS characters, extension/handOffPlan.ts).
 */
const labelReads = (label, text) => {
  const shown = asRead(label);
  const full = shownAs(text);
  return shown === full || (shown.endsWith('…') && shown.length > 40 && full.startsWith(shown.slice(0, -1)));
};
/** Plain UI text of `text` (protocol/text.ts escapeControls): a bidi control reads as its escape, `\u202E`. */
const shownAs = (text) =>
  /[\u202A-\u202E\u2066-\u2069]/.test(text) ? text.replace(/\\/g, '\\\\').replace(/[\u202A-\u202E\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase()}`) : text;
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

/**
 * alice's fix, pushed to the request after bob's review (the same edit made in the plan's scratch
 * clone and in alice's own): line 5 of src/app.js now says why it changed (what bob's gutter
 * comment asked), one more line of src/new feature.js, and a reworded note (nobody cites it: Noise).
 * Nothing moves: every line keeps its number, so the request's own plan still cites changed lines.
 */
const FIXED_LINE_5 = 'app line 5 (changed: callers now read the new name)';
function writeAliceFix(dir) {
  const app = fs.readFileSync(path.join(dir, 'src/app.js'), 'utf8').split('\n');
  expect(app[4] === 'app line 5 (changed)', `alice's fix: line 5 of src/app.js reads ${JSON.stringify(app[4])}`);
  app[4] = FIXED_LINE_5;
  write(dir, 'src/app.js', app.join('\n'));
  fs.appendFileSync(path.join(dir, 'src/new feature.js'), 'feature line 13\n');
  const notes = fs.readFileSync(path.join(dir, 'notes.md'), 'utf8');
  expect(notes.includes('note line 3, decided\n'), `alice's fix: notes.md reads ${JSON.stringify(notes)}`);
  write(dir, 'notes.md', notes.replace('note line 3, decided\n', 'note line 3, decided and dated\n'));
}

/**
 * What the closure seat hands in for bob's earlier items, found by what they are (not by id): the
 * one written on src/app.js:5 (his gutter comment) resolved on the fix's hunk; any other inline
 * item (the finding's change request on the inserted lines) open; an item of the body (the folded
 * prose ask) open.
 */
const CLOSURES = {
  path: 'src/app.js',
  line: 5,
  resolved: 'Line 5 now says why it changed: callers read the new name.',
  openInline: 'The two inserted lines are unchanged: callers matching the old text still do not expect them.',
  openBody: 'The fix does not say which callers read the renamed line.',
};
/** The Flagged finding the re-review's generation raises on the fix delta. */
const DELTA_FINDING = { origin: 'claude', agreement: 'solo', title: 'No test reads the new reason on line 5' };

/**
 * The re-review's plan (test/servers/e2eReading.ts `rereview`), from git's own hunks of alice's fix
 * made in a scratch clone of `source` (the reviewed commit `reviewed` → the fix): the lens seats of
 * the delta generation cite the fix's lines (Noise groups the reworded note), and the closure seat
 * resolves R1 on the fix's hunk of src/app.js. Answers `{ rereview, deltaHunks, fixTree }`.
 */
function rereviewPlan(source, reviewed, dir) {
  git(path.dirname(dir), ['clone', '--quiet', '--branch', 'feature', source, dir]);
  expect(git(dir, ['rev-parse', 'HEAD']).trim() === reviewed, 'fixture: the scratch clone is not at the reviewed head');
  writeAliceFix(dir);
  git(dir, ['-c', 'user.name=Alice', '-c', 'user.email=alice@example.invalid', 'commit', '-q', '-am', 'Say why line five changes']);
  const fix = git(dir, ['rev-parse', 'HEAD']).trim();
  const deltaHunks = diffHunks(dir, { base: reviewed, head: fix });
  const app = deltaHunks.get('src/app.js');
  const added = deltaHunks.get('src/new feature.js');
  expect(
    app?.hunks.length === 1 && added?.hunks.length === 1 && deltaHunks.get('notes.md')?.hunks.length === 1 && deltaHunks.size === 3,
    `fixture: the fix delta is ${JSON.stringify([...deltaHunks].map(([p, f]) => [p, f.hunks.length]))}`,
  );
  const head = (p, span) => ({ path: p, side: 'head', start: span.start, end: span.end });
  const line5 = addedSpan(app.hunks[0]);
  expect(line5.start === 5 && line5.end === 5, `fixture: the fix's hunk of src/app.js adds ${JSON.stringify(line5)}, expected line 5`);
  const rereview = {
    base: reviewed,
    design: [head('src/new feature.js', addedSpan(added.hunks[0]))],
    sequence: [head('src/app.js', line5), head('src/new feature.js', addedSpan(added.hunks[0]))],
    decisions: [head('src/app.js', line5)],
    flagged: [head('src/app.js', line5)],
    findings: [DELTA_FINDING],
    review: `# Findings\n\n- src/app.js:5 now says why it changed; no test reads the new text.\n`,
    noiseMembers: 0,
    closures: CLOSURES,
  };
  rereview.noiseMembers = uncitedHunkCount(deltaHunks, [...rereview.design, ...rereview.sequence, ...rereview.decisions, ...rereview.flagged]);
  expect(rereview.noiseMembers === 1, `fixture: ${rereview.noiseMembers} hunks of the fix delta are uncited, expected the note's one`);
  return { rereview, deltaHunks, fixTree: git(dir, ['rev-parse', 'HEAD^{tree}']).trim() };
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
  const inserted = app.hunks[1].lines
    .filter((l) => l.kind === 'add')
    .map((l) => l.new)
    .filter((n, i, all) => all.includes(n + 1) || all.includes(n - 1))
    .slice(-2);
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
        if (
          (await inner
            .locator(selector)
            .count()
            .catch(() => 0)) > 0
        )
          return inner;
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
    const tabs = await page
      .locator('.tabs-container .tab .label-name')
      .allInnerTexts()
      .catch(() => []);
    throw new Error(`no visible webview shows [data-testid="review-preview"] within ${timeout / 1000} s (tabs: ${JSON.stringify(tabs)})`);
  }

  /** What the preview shows, read from its DOM in one go. */
  async function readPreview(frame) {
    return frame
      .locator('[data-testid="review-preview"]')
      .evaluate(
        (root) => {
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
            bodyFirst: q('body-rendered')?.firstElementChild
              ? {
                  tag: q('body-rendered').firstElementChild.tagName.toLowerCase(),
                  text: txt(q('body-rendered').firstElementChild),
                  strong: [...q('body-rendered').firstElementChild.querySelectorAll('strong')].map(txt),
                }
              : null,
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
            posted: q('posted')
              ? {
                  event: q('posted').getAttribute('data-event'),
                  comments: Number(q('posted').getAttribute('data-comments')),
                  words: txt(q('posted-words')),
                  link: q('posted-link')?.getAttribute('title') ?? null,
                  linkText: txt(q('posted-link')),
                }
              : null,
            refused: txt(q('post-refused')),
            error: txt(q('preview-error')),
            links: [...root.querySelectorAll('a')].map((a) => ({ href: a.getAttribute('href'), text: txt(a) })),
          };
        },
        null,
        { timeout: 5_000 },
      )
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

  /** The Hand off view and the Source Control badge (boardPage.mjs), on the pass's current page. */
  const readHandOff = () => readHandOffOf(current());
  const scmBadge = () => scmBadgeOf(current());

  return { webviewWith, previewFrame, readPreview, stagedCount, readHandOff, scmBadge };
}

/** The Prior items section of the board's Flagged lens (the re-review's), read in one go. */
async function readPriorItems(page) {
  return board(page)
    .locator('[data-testid="prior-items"]')
    .evaluate(
      (root) => {
        const txt = (n) => (n ? n.textContent.replace(/\s+/g, ' ').trim() : null);
        return {
          line: txt(root.querySelector('[data-testid="prior-line"]')),
          statement: txt(root.querySelector('[data-testid="prior-statement"]')),
          failure: txt(root.querySelector('[data-testid="prior-failure"]')),
          items: [...root.querySelectorAll('[data-testid="prior-item"]')].map((li) => ({
            id: li.getAttribute('data-item'),
            closure: li.getAttribute('data-closure'),
            badge: txt(li.querySelector('[data-testid="prior-closure"]')),
            severity: txt(li.querySelector('[data-testid="prior-severity"]')),
            where: txt(li.querySelector('.rn-prior-head .rn-muted')),
            text: txt(li.querySelector('.rn-prior-text')),
            reason: txt(li.querySelector('[data-testid="prior-reason"]')),
            evidence: [...li.querySelectorAll('[data-testid="prior-evidence"]')].map((b) => ({ text: txt(b), title: b.getAttribute('title') })),
            anchors: [...li.querySelectorAll('a')].map((a) => a.getAttribute('href')),
            images: li.querySelectorAll('img').length,
            icons: [...li.querySelectorAll('.codicon')].map((c) => c.className),
          })),
        };
      },
      null,
      { timeout: 5_000 },
    )
    .catch((e) => ({ error: `the Prior items could not be read: ${e.message}` }));
}

/** The text of line `line` of `editor` as drawn (the line must be visible). */
async function editorLineText(editor, line) {
  const tops = await visibleLineTops(editor);
  if (!(line in tops)) return null;
  return editor.locator('.view-lines .view-line').evaluateAll((els, top) => els.find((e) => Math.abs(parseFloat(e.style.top) - top) < 2)?.textContent.replace(/\u00a0/g, ' ') ?? null, tops[line]);
}

/** Hides the bottom panel and clears notifications (room for the board and the editor). */
async function clearTheView(page) {
  if (
    await page
      .locator('[id="workbench.parts.panel"]')
      .isVisible()
      .catch(() => false)
  )
    await rig.runCommand(page, 'View: Hide Panel');
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
  const uri = await poll(
    () => editor.getAttribute('data-uri').catch(() => null),
    (u) => /^rennet-blob:/.test(u ?? ''),
    10_000,
  );
  expect(
    /^rennet-blob:\/src\/app\.js\?/.test(uri ?? '') && /side(=|%3D)head/.test(uri),
    `the code card opened ${JSON.stringify(uri)}, expected the captured head of src/app.js (rennet-blob:, side head)`,
  );
  // The cursor onto the line alone (the card selected the cited range), then its comment glyph.
  await collapseSelectionOnLine(page, editor, line);
  const widget = await openCommentWidget(page, editor, line, { label, onHover: () => screenshot('comment-plus') });
  await widget.locator('.comment-form .monaco-editor .view-lines').first().click();
  await page.keyboard.type(text);
  const typed = await poll(
    () => widget.locator('.comment-form .monaco-editor .view-lines').first().innerText(),
    (t) => t.replace(/\s+/g, ' ').includes(text),
    3_000,
  );
  expect(typed.replace(/\s+/g, ' ').includes(text), `the comment box shows ${JSON.stringify(typed)} after typing`);
  const stage = widget.locator('.form-actions .monaco-button, .form-actions button', { hasText: 'Stage Ask' }).first();
  await stage.waitFor({ state: 'visible', timeout: 10_000 }).catch(async () => {
    throw new Error(
      `the comment form has no "Stage Ask" button; it has ${JSON.stringify(
        await widget
          .locator('.monaco-button, button')
          .allInnerTexts()
          .catch(() => []),
      )}`,
    );
  });
  await stage.click();
  const thread = page.locator('.review-widget').filter({ hasText: text }).filter({ hasText: 'Staged ask' }).first();
  await thread.waitFor({ state: 'visible', timeout: 15_000 }).catch(() => {});
  await rig.sleep(300);
  await screenshot('gutter-staged');
  const shown = (
    await page
      .locator('.review-widget')
      .filter({ hasText: text })
      .first()
      .innerText({ timeout: 2_000 })
      .catch(() => '(no widget holds the comment)')
  ).replace(/\s+/g, ' ');
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

  // The hostile text's beacon, and what its payloads would leave behind, looked for after each surface shows it.
  const watch = { phase: 'setup', events: [], dialogs: [], popups: [], seen: { terminals: 0, markers: 0, pwned: 0, hits: 0 } };
  const beacon = await startBeacon(watch);
  const HOSTILE = hostileText(beacon.port);
  PR_TITLE = `Name the lines ${COMMAND_LINK} ${HOSTILE}`;
  PR_BODY = `Fixes #2.\n\nSpells the changed lines out. ${COMMAND_LINK}\n\n${HOSTILE}\n`;
  PROSE_ASK = `${PROSE_ASK_WORDS} ${COMMAND_LINK} ${HOSTILE}`;
  const markers = () =>
    [clone, rig.ROOT, os.homedir(), cs?.dir].filter(Boolean).flatMap((d) =>
      fs.existsSync(d)
        ? fs
            .readdirSync(d)
            .filter((n) => n.startsWith(MARKER))
            .map((n) => path.join(d, n))
        : [],
    );
  /** After a surface showed the hostile text: a terminal, a marker file, a script run in a frame (webviews' too), a beacon request, a dialog. */
  async function observe(phase) {
    watch.phase = phase;
    await rig.sleep(150);
    const box = page.locator('.monaco-dialog-box').filter({ visible: true }).first();
    if (await box.isVisible().catch(() => false)) {
      watch.dialogs.push({ phase, text: (await box.innerText().catch(() => '')).replace(/\s+/g, ' ').slice(0, 300) });
      await page.keyboard.press('Escape');
    }
    const t = terminalsDrawn(page).then((d) => Math.max(d.xterms, d.wrappers, d.tabs, d.editorTabs, ptyChildren(cs).length));
    const now = { terminals: await t, markers: markers().length, pwned: (await pwnedFrames(page.context().pages(), page)).length, hits: beacon.hits.length };
    for (const k of Object.keys(now)) if (now[k] > watch.seen[k]) watch.events.push({ phase, what: `${k} ${watch.seen[k]} → ${now[k]}` });
    for (const k of Object.keys(now)) watch.seen[k] = Math.max(watch.seen[k], now[k]);
  }

  const work = rig.mkTmp('rennet-forge-');
  const source = makeForgeFixture(path.join(work, 'source'));
  const hunks = diffHunks(source, { base: 'main', head: 'feature' });
  const plan = forgePlan(hunks);
  const headSha = git(source, ['rev-parse', 'feature']).trim();
  // alice's fix, pushed after bob's review: the re-review's lens plan and closures come from its hunks.
  const { rereview, fixTree } = rereviewPlan(source, headSha, path.join(work, 'fix plan'));
  plan.rereview = rereview;
  /** The request's head after alice's fix (set when she pushes it). */
  let fixHead = null;
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
      body: PR_BODY,
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
    page.context().on('page', (p) => watch.popups.push({ phase: watch.phase, url: p.url() }));
    page.on('dialog', (d) => {
      watch.dialogs.push({ phase: watch.phase, text: `browser ${d.type()}: ${d.message()}` });
      d.dismiss().catch(() => {});
    });
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
    // A bidi control reads as its escape; "$(" and "](" carry a word joiner; nothing of the title is an icon or a link.
    expect(asRead(labels[0]) === `#1 ${shownAs(PR_TITLE)}`, `the picker's first row is ${JSON.stringify(labels[0])}, expected "#1 ${shownAs(PR_TITLE)}" (rows ${JSON.stringify(labels)})`);
    const drawn = await page.locator('.quick-input-widget .monaco-list-row').evaluateAll((rows) =>
      rows.map((r) => ({
        icons: [...r.querySelectorAll('.codicon')].map((c) => c.className),
        links: [...r.querySelectorAll('a[href], a[data-href]')].length,
        images: r.querySelectorAll('img').length,
      })),
    );
    await observe('the request picker');
    expect(
      drawn.every((r) => !r.icons.some((c) => /codicon-(terminal|alert)\b/.test(c)) && r.links === 0 && r.images === 0),
      `the picker draws the title's payloads: ${JSON.stringify(drawn)}`,
    );
    // Type to filter, as a reviewer does, then pick the request.
    await page.locator('.quick-input-widget .quick-input-box input').fill('#1');
    const row = page
      .locator('.quick-input-widget .monaco-list-row')
      .filter({ has: page.locator('.label-name', { hasText: /^#1 / }) })
      .first();
    await row.waitFor({ state: 'visible', timeout: 10_000 });
    const description = await row
      .locator('.label-description')
      .first()
      .innerText()
      .catch(() => null);
    await screenshot('pick-request');
    expect(/^alice · feature → main$/.test(description?.trim() ?? ''), `the request's row describes it as ${JSON.stringify(description)}, expected "alice · feature → main"`);
    // The list came from the forge, asked as bob (the token from the environment, not a sign-in).
    const listed = await forge.call('requests', { method: 'GET', pathPattern: `^/api/v3/repos/${OWNER}/${NAME}/pulls$` });
    expect(listed.length > 0 && listed.every((r) => r.user === 'bob' && r.status === 200), `the forge's list requests were ${JSON.stringify(listed)}, expected bob's`);
    await row.click();
    const title = `Rennet · Pull Request #1 · ${OWNER}/${NAME}`;
    await page
      .locator('.tabs-container .tab', { hasText: title })
      .first()
      .waitFor({ timeout: 90_000 })
      .catch(async () => {
        const tabs = await page
          .locator('.tabs-container .tab .label-name')
          .allInnerTexts()
          .catch(() => []);
        const notes = await page
          .locator('.notifications-toasts .notification-toast, .notification-list-item-message')
          .allInnerTexts()
          .catch(() => []);
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
    const rows = await board(page)
      .locator('[data-testid="file-row"]')
      .evaluateAll((els) => els.map((e) => e.getAttribute('data-path')).sort());
    expect(JSON.stringify(rows) === JSON.stringify(['notes.md', 'src/app.js', 'src/new feature.js']), `the board lists ${JSON.stringify(rows)}`);
    const unsettled = generation.rail.filter((t) => t.state !== 'settled');
    expect(unsettled.length === 0, `every lens should settle on the scripted models; not settled: ${JSON.stringify(unsettled)}`);
    // The seats read the request and the issue its body links (as data) from the context folder.
    const contextRoot = path.join(clone, '.rennet/context');
    const sessions = fs.existsSync(contextRoot) ? fs.readdirSync(contextRoot) : [];
    const context = sessions.length === 1 ? path.join(contextRoot, sessions[0]) : null;
    const prMd = context && fs.existsSync(path.join(context, 'pr.md')) ? fs.readFileSync(path.join(context, 'pr.md'), 'utf8') : null;
    const related = context && fs.existsSync(path.join(context, 'related-context.md')) ? fs.readFileSync(path.join(context, 'related-context.md'), 'utf8') : null;
    expect(
      prMd?.includes('Name the lines') && prMd.includes('Spells the changed lines out.'),
      `the context folder's pr.md should quote the request's title and body: ${JSON.stringify(prMd?.slice(0, 400) ?? `(no pr.md; sessions ${JSON.stringify(sessions)})`)}`,
    );
    expect(
      related?.includes(ISSUE_TITLE) && /#2\b/.test(related),
      `related-context.md should carry issue #2 "${ISSUE_TITLE}" the request's body links: ${JSON.stringify(related?.slice(0, 400) ?? '(none)')}`,
    );
    // The checkout was not touched: still main, nothing changed.
    const status = (await execFileP('git', ['status', '--porcelain', '--branch'], { cwd: clone, encoding: 'utf8' })).stdout.trim();
    expect(
      /^## main\.\.\.origin\/main$/.test(status.split('\n')[0]) &&
        status
          .split('\n')
          .filter((l) => !l.startsWith('## '))
          .every((l) => /\.rennet/.test(l)),
      `the checkout changed: ${JSON.stringify(status)}`,
    );
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
    await page
      .locator('.part.sidebar .pane-header', { hasText: /Hand off/i })
      .first()
      .waitFor({ state: 'visible', timeout: 15_000 })
      .catch(async () => {
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
      const row = asks.find((r) => r.description === w.description && labelReads(r.label, w.label) && r.icons.includes(w.icon));
      if (!row) problems.push(`no ask row ${JSON.stringify(w)}`);
    }
    if (asks.length !== 3) problems.push(`${asks.length} rows under the lane, expected the 3 staged asks`);
    expect(problems.length === 0, `Hand off rows: ${problems.join('; ')}; rows ${JSON.stringify(handOff.rows)}`);
    expect(/Pull Request #1 · acme\/widgets/.test(handOff.description ?? ''), `the view's description is ${JSON.stringify(handOff.description)}, expected it to name the request`);
    const exit = handOff.rows.find((r) => r.label === 'Preview and post review…');
    expect(exit && exit.level === 1, `no top-level "Preview and post review…" row: ${JSON.stringify(handOff.rows)}`);

    // A click on the finding's row opens its captured code in the editor, the cited lines selected.
    const status = () =>
      page
        .locator('[id="status.editor.selection"]')
        .innerText({ timeout: 2_000 })
        .catch(() => null);
    const statusBefore = await status();
    await page
      .locator('.part.sidebar .pane .monaco-list-row')
      .filter({ hasText: `finding: ${FINDINGS[0].title}` })
      .first()
      .locator('.label-name')
      .click();
    const { start, end } = plan.flagged[0];
    const wantStatus = new RegExp(`^Ln ${end}, Col \\d+ \\(\\d+ selected\\)$`);
    const statusAfter = await poll(status, (t) => wantStatus.test(t ?? ''), 10_000);
    const opened = await editorOf(page)
      .getAttribute('data-uri')
      .catch(() => null);
    rig.log(`forge: the finding's row opened ${opened}; status ${JSON.stringify(statusBefore)} → ${JSON.stringify(statusAfter)}`);
    expect(
      wantStatus.test(statusAfter ?? '') && /^rennet-blob:\/src\/app\.js\?/.test(opened ?? ''),
      `clicking the finding's row should open the head of src/app.js with lines ${start}-${end} selected; the editor is ${opened}, the status bar says ${JSON.stringify(statusAfter)} (before: ${JSON.stringify(statusBefore)})`,
    );

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
      () =>
        box.evaluate((h) => ({
          text: h.textContent.replace(/\s+/g, ' ').trim(),
          links: [...h.querySelectorAll('a')].map((a) => a.getAttribute('href') ?? a.getAttribute('data-href')),
          icons: [...h.querySelectorAll('.codicon:not(.hover-copy-button)')].map((c) => c.className),
          images: h.querySelectorAll('img').length,
        })),
      () => null,
    );
    await screenshot('hand-off-hover');
    rig.log(`forge: the prose ask's hover ${JSON.stringify(hover)}`);
    expect(hover, `hovering the prose ask's row showed no hover`);
    // mdModel (extension/uiText.ts) keeps a non-web link's label and names its target as text.
    expect(
      /^Request change · board: Sequence/.test(hover.text) && hover.text.includes(`${PROSE_ASK_WORDS} run (command:workbench.action.terminal.new — not opened: not a web link)`),
      `the hover should read the ask with its link as inert text: ${JSON.stringify(hover)}`,
    );
    expect(
      hover.links.every((h) => !/command:/i.test(h ?? '')),
      `the hover draws command: links: ${JSON.stringify(hover.links)}`,
    );
    // The hostile text as mdModel leaves it: every target named as text, HTML and icons as written, the bidi control escaped.
    const inert = [
      '$(terminal) $(alert)',
      `<img src=x onerror="self.rennetPwned=1;fetch('http://127.0.0.1:${beacon.port}/onerror')">`,
      'js (javascript:self.rennetPwned=1 — not opened: not a web link)',
      '[image: i]',
      `local (http://127.0.0.1:${beacon.port}/link — not opened: it points at this machine or a private network)`,
      'invoice\\u202Etxt.exe',
      'go (command:workbench.action.terminal.sendSequence?',
    ].filter((w) => !hover.text.includes(w));
    expect(inert.length === 0, `the hover does not show ${JSON.stringify(inert)} as text: ${JSON.stringify(hover.text)}`);
    expect(
      hover.links.length === 0 && hover.icons.length === 0 && hover.images === 0,
      `the hover draws links ${JSON.stringify(hover.links)}, icons ${JSON.stringify(hover.icons)}, ${hover.images} image(s)`,
    );
    await observe("the Hand off view and the ask's hover");
    await page.mouse.move(5, 500);
  });

  let shownBody = null;
  let shownComments = null;
  await test('the preview shows Request changes, the two line comments with path and line, the folded prose ask with its reason, and the body', async () => {
    expect(handOff?.found, 'the Hand off view was not read (see the previous test)');
    await page.locator('.part.sidebar .pane .monaco-list-row', { hasText: 'Preview and post review…' }).first().click();
    const frame = await previewFrame();
    let shown = await poll(
      () => readPreview(frame),
      (p) => p.postArea === 'post' && p.freshness === 'fresh' && p.comments?.length > 0,
      30_000,
    );
    await rig.sleep(300);
    await screenshot('preview');
    rig.log(`forge: preview ${JSON.stringify({ ...shown, text: shown.text?.slice(0, 400) })}`);
    const tab = (
      await page
        .locator('.tabs-container .tab.active .label-name')
        .last()
        .innerText()
        .catch(() => '')
    ).trim();
    expect(tab === `Post review · Pull Request #1 · ${OWNER}/${NAME}`, `the preview's tab is ${JSON.stringify(tab)}`);
    expect(shown.target === `Post review · Pull Request #1 · ${OWNER}/${NAME}`, `the preview's title is ${JSON.stringify(shown.target)}`);
    expect(shown.entry === 'a teammate’s request', `the preview says the request is ${JSON.stringify(shown.entry)}, expected a teammate's (alice's, reviewed by bob)`);
    expect(
      shown.event === 'REQUEST_CHANGES' && shown.eventText === 'Request changes',
      `the verdict is ${JSON.stringify([shown.event, shown.eventText])}, expected REQUEST_CHANGES / "Request changes"`,
    );
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
    expect(
      shown.folded.length === 1 && shown.folded[0].reason === 'board-prose' && /board: Sequence|Sequence/.test(shown.folded[0].text) && /quotes board prose/.test(shown.folded[0].why ?? ''),
      `the folded asks are ${JSON.stringify(shown.folded)}, expected the prose request folded as board-prose with its reason`,
    );
    expect(
      (shown.bodyRendered ?? '').includes(PROSE_ASK_WORDS) && /### Notes|Notes/.test(shown.bodyRendered ?? ''),
      `the rendered body does not carry the folded ask's note ${JSON.stringify(PROSE_ASK_WORDS)}: ${JSON.stringify(shown.bodyRendered)}`,
    );
    // The opener states what the boards came to; Noise by its one group of skippable hunks (notes.md).
    expect(
      (shown.bodyRendered ?? '').includes('Lens boards: Design 1 section · Sequence 1 section · Decisions 1 section · Flagged 2 findings (1 open, 0 dismissed) · Noise 1 group.'),
      `the rendered body's opener does not state the boards: ${JSON.stringify(shown.bodyRendered)}`,
    );
    expect(
      (shown.bodyRendered ?? '').includes(`Reviewed ${headSha.slice(0, 12)}`),
      `the rendered body does not open with the reviewed head ${headSha.slice(0, 12)}: ${JSON.stringify(shown.bodyRendered)}`,
    );
    expect(shown.postButton && !shown.postButton.disabled && shown.postButton.text === 'Post to GitHub', `the Post button is ${JSON.stringify(shown.postButton)}`);

    const firstComposition = await frame.locator('[data-testid="body-marker"]').getAttribute('data-marker-id');

    // The preview follows the asks: Unstage on the prose ask's Hand off row takes its note out of
    // the review; Undo Last Ask Action puts it back (the same composition again).
    const proseRow = page.locator('.part.sidebar .pane .monaco-list-row').filter({ hasText: PROSE_ASK_WORDS }).first();
    const proseBox = await proseRow.boundingBox();
    await page.mouse.move(proseBox.x + 60, proseBox.y + proseBox.height / 2);
    await proseRow.locator('.action-label[aria-label="Unstage"]').click();
    const unstaged = await poll(
      () => readPreview(frame),
      (p) => p.folded?.length === 0 && p.event === 'REQUEST_CHANGES',
      15_000,
    );
    await screenshot('preview-after-unstage');
    expect(
      unstaged.folded.length === 0 && !(unstaged.bodyRendered ?? '').includes(PROSE_ASK_WORDS) && unstaged.comments.length === 2 && unstaged.marker !== firstComposition,
      `after Unstage on the prose ask the preview shows ${JSON.stringify({ folded: unstaged.folded, comments: unstaged.comments?.length, marker: unstaged.marker, body: unstaged.bodyRendered })}, expected no folded ask, no note, a new composition`,
    );
    expect((await scmBadge()).text === '2', `after Unstage the Source Control badge reads ${JSON.stringify(await scmBadge())}, expected 2`);
    const laneOf = (h) => h.rows?.find((r) => r.level === 1 && r.label === 'Post review');
    const afterUnstage = await poll(readHandOff, (h) => laneOf(h)?.description === '2 staged' && !h.rows.some((r) => labelReads(r.label, PROSE_ASK)), 10_000);
    await screenshot('hand-off-after-unstage');
    expect(
      laneOf(afterUnstage)?.description === '2 staged' && !afterUnstage.rows.some((r) => labelReads(r.label, PROSE_ASK)),
      `after Unstage the Hand off view still shows ${JSON.stringify(afterUnstage.rows?.map((r) => [r.level, r.label, r.description]))}, expected the lane at "2 staged" without the prose ask`,
    );
    await page.locator('#workbench\\.parts\\.statusbar').click({ position: { x: 2, y: 2 }, force: true });
    await rig.runCommand(page, 'Rennet: Undo Last Ask Action');
    shown = await poll(
      () => readPreview(frame),
      (p) => p.folded?.length === 1 && p.marker === firstComposition,
      15_000,
    );
    expect(
      shown.folded.length === 1 && shown.marker === firstComposition && (await scmBadge()).text === '3',
      `after Undo the preview shows ${JSON.stringify({ folded: shown.folded, marker: shown.marker })} (badge ${JSON.stringify(await scmBadge())}), expected the prose ask back in the first composition ${firstComposition}`,
    );
    const afterUndo = await poll(readHandOff, (h) => laneOf(h)?.description === '3 staged' && h.rows.some((r) => labelReads(r.label, PROSE_ASK)), 10_000);
    expect(
      laneOf(afterUndo)?.description === '3 staged',
      `after Undo the Hand off view shows ${JSON.stringify(afterUndo.rows?.map((r) => [r.level, r.label, r.description]))}, expected the lane back at "3 staged"`,
    );

    // The verdict control: Comment overrides the asks (a new composition), "As the asks propose" undoes it.
    await frame.locator('[data-testid="verdict-choice"][data-choice="comment"]').click();
    const overridden = await poll(
      () => readPreview(frame),
      (p) => p.event === 'COMMENT' && p.postArea === 'post',
      15_000,
    );
    const pressed = await frame
      .locator('[data-testid="verdict-choice"][aria-pressed="true"]')
      .getAttribute('data-choice')
      .catch(() => null);
    await screenshot('preview-verdict-comment');
    expect(
      overridden.event === 'COMMENT' && overridden.eventText === 'Comment' && overridden.how === 'Your choice; your asks propose Request changes.' && pressed === 'comment',
      `after choosing Comment the verdict reads ${JSON.stringify([overridden.event, overridden.eventText, overridden.how, pressed])}`,
    );
    expect(
      overridden.marker && overridden.marker !== firstComposition,
      `choosing Comment left the composition's marker at ${overridden.marker} (was ${firstComposition}): what posts changed, so must its id`,
    );
    await frame.locator('[data-testid="verdict-choice"][data-choice="clear"]').click();
    shown = await poll(
      () => readPreview(frame),
      (p) => p.event === 'REQUEST_CHANGES' && /^Proposed from your asks/.test(p.how ?? '') && p.postArea === 'post',
      15_000,
    );
    expect(
      shown.event === 'REQUEST_CHANGES' && shown.marker === firstComposition,
      `after "As the asks propose" the verdict is ${JSON.stringify([shown.event, shown.how])} and the marker ${shown.marker}, expected REQUEST_CHANGES and the first composition ${firstComposition}`,
    );

    // The raw text: exactly what is sent.
    await frame.locator('[data-testid="body-raw-toggle"]').click();
    shown = await poll(
      () => readPreview(frame),
      (p) => p.bodyRaw !== null,
      5_000,
    );
    await screenshot('preview-raw');
    shownBody = shown.bodyRaw;
    shownComments = shown.comments.map((c) => ({ path: c.path, side: c.side, line: c.line, startLine: c.startLine, body: c.raw }));
    // The raw text is what is sent, its invisible characters drawn as escapes (the ask's U+202E reads "\u202E").
    expect(
      shownBody && shownBody.includes(shownAs(PROSE_ASK)) && /\n<!-- rennet-review: [0-9a-f]+ -->$/.test(shownBody),
      `the raw body ${JSON.stringify(shownBody)} should carry the folded ask's text as typed (its U+202E drawn as an escape) and end with the marker`,
    );
    expect(shown.marker && shownBody.endsWith(`<!-- rennet-review: ${shown.marker} -->`), `the marker note names ${JSON.stringify(shown.marker)}, not the raw body's last line`);
    expect(
      shownComments.every((c) => typeof c.body === 'string' && c.body.length > 0),
      `raw comments: ${JSON.stringify(shownComments)}`,
    );
    const reviews = await forge.call('reviews', { owner: OWNER, name: NAME, number: 1 });
    expect(reviews.length === 0, `the forge holds ${reviews.length} reviews before Post`);
  });

  await test("the reviewer's command: link is drawn inert in the preview and the request's is a link nowhere (Hand off, preview); no terminal opened", async () => {
    expect(page, 'no workbench');
    const frame = await previewFrame();
    const rawOn = frame.locator('[data-testid="body-raw-toggle"][aria-pressed="true"]');
    if ((await rawOn.count()) > 0) await rawOn.click();
    const rendered = await frame.locator('[data-testid="body-rendered"]').evaluate((b) => ({
      anchors: [...b.querySelectorAll('a')].map((a) => a.getAttribute('href')),
      text: b.textContent.replace(/\u2060/g, ''),
    }));
    // The whole preview (the folded ask, the body): no image, no codicon drawn from the hostile text.
    const drawn = await frame.locator('[data-testid="review-preview"]').evaluate((root) => ({
      images: [...root.querySelectorAll('img')].map((i) => i.getAttribute('src')),
      icons: [...root.querySelectorAll('.codicon')].map((c) => c.className),
      onerror: root.querySelectorAll('[onerror]').length,
    }));
    const everywhere = await readPreview(frame);
    await frame
      .locator('[data-testid="body-rendered"]')
      .scrollIntoViewIfNeeded()
      .catch(() => {});
    await screenshot('preview-hostile');
    await observe('the preview');
    rig.log(`forge: the preview's body links ${JSON.stringify(rendered)}; drawn ${JSON.stringify(drawn)}`);
    expect(rendered.anchors.length === 0, `the preview's body renders links ${JSON.stringify(rendered.anchors)}`);
    expect(drawn.images.length === 0 && drawn.onerror === 0 && !drawn.icons.some((c) => /codicon-(terminal|alert)\b/.test(c)), `the preview draws the hostile text: ${JSON.stringify(drawn)}`);
    expect(
      rendered.text.includes('$(terminal) $(alert)') && rendered.text.includes(`<img src=x onerror="self.rennetPwned=1;fetch('http://127.0.0.1:${beacon.port}/onerror')">`),
      `the rendered body does not show the ask's "$(terminal)" and HTML as written text: ${JSON.stringify(rendered.text)}`,
    );
    // The Markdown reader takes http(s) and mailto links only: the ask's [run](command:…) is text, as written.
    expect(rendered.text.includes(`${PROSE_ASK_WORDS} ${COMMAND_LINK}`), `the rendered body does not show the ask's [run](command:…) as written text: ${JSON.stringify(rendered.text)}`);
    expect(
      (everywhere.links ?? []).every((l) => !/command:/i.test(l.href ?? '')),
      `the preview has command: links: ${JSON.stringify(everywhere.links)}`,
    );

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

  await test("the hostile request title and body and the hostile ask ran nothing (request picker, Hand off view and hover, preview): no terminal, no marker file, no script in any frame (the preview's too), no beacon request, no dialog, no new page", async () => {
    expect(page, 'no workbench');
    await observe('verdicts');
    const terminals = await terminalsDrawn(page);
    const shells = ptyChildren(cs);
    const pwned = await pwnedFrames(page.context().pages(), page);
    const frames = page.frames().length;
    rig.log(
      `forge: hostile text: events ${JSON.stringify(watch.events)}; ${frames} frames looked into; beacon ${JSON.stringify(beacon.hits)}; dialogs ${JSON.stringify(watch.dialogs)}; pages ${JSON.stringify(watch.popups)}`,
    );
    const problems = [];
    if (Math.max(terminals.xterms, terminals.wrappers, terminals.tabs, terminals.editorTabs) !== 0 || shells.length > 0 || watch.seen.terminals > 0)
      problems.push(`a terminal: DOM ${JSON.stringify(terminals)}, pty host children ${JSON.stringify(shells)}`);
    if (markers().length > 0 || watch.seen.markers > 0) problems.push(`marker file(s) ${JSON.stringify(markers())}`);
    if (pwned.length > 0 || watch.seen.pwned > 0) problems.push(`a script ran: rennetPwned in ${JSON.stringify(pwned)}`);
    if (beacon.hits.length > 0) problems.push(`the beacon on 127.0.0.1:${beacon.port} got ${JSON.stringify(beacon.hits)}`);
    if (watch.dialogs.length > 0) problems.push(`dialog(s) ${JSON.stringify(watch.dialogs)}`);
    if (watch.popups.length > 0) problems.push(`browser page(s) opened ${JSON.stringify(watch.popups)}`);
    expect(problems.length === 0, `${problems.join('; ')} (first seen: ${JSON.stringify(watch.events)})`);
  });

  let receiptUrl = null;
  await test("Post: the preview shows what was posted, and the forge holds exactly one review whose body and comments are the preview's", async () => {
    expect(shownBody, 'the preview was not read (see the previous test)');
    const frame = await previewFrame();
    await frame.locator('[data-testid="post-review"]').click();
    const shown = await poll(
      () => readPreview(frame),
      (p) => p.postArea === 'posted' || p.refused !== null,
      60_000,
    );
    await rig.sleep(300);
    await screenshot('posted');
    rig.log(`forge: after Post ${JSON.stringify({ postArea: shown.postArea, posted: shown.posted, refused: shown.refused })}`);
    expect(shown.postArea === 'posted' && shown.posted, `after Post the preview shows ${JSON.stringify({ postArea: shown.postArea, refused: shown.refused, error: shown.error })}`);
    expect(
      shown.posted.event === 'REQUEST_CHANGES' && shown.posted.comments === 2 && shown.posted.words === 'Posted: Request changes · 2 comments',
      `the posted state reads ${JSON.stringify(shown.posted)}`,
    );
    expect(shown.postButton === null, `a Post button is still offered after posting: ${JSON.stringify(shown.postButton)}`);
    receiptUrl = shown.posted.link;
    expect(new RegExp(`^${rig.escapeRe(forge.url)}/${OWNER}/${NAME}/pull/1#pullrequestreview-\\d+$`).test(receiptUrl ?? ''), `the posted link is ${JSON.stringify(receiptUrl)}`);
    const reviews = await forge.call('reviews', { owner: OWNER, name: NAME, number: 1 });
    rig.log(`forge: reviews on the forge ${JSON.stringify(reviews)}`);
    expect(reviews.length === 1, `the forge holds ${reviews.length} reviews, expected exactly one`);
    const [review] = reviews;
    expect(
      review.user?.login === 'bob' && review.state === 'CHANGES_REQUESTED' && review.commit_id === headSha,
      `the review is ${JSON.stringify({ user: review.user?.login, state: review.state, commit: review.commit_id })}, expected bob's CHANGES_REQUESTED on ${headSha}`,
    );
    expect(
      shownAs(review.body) === shownBody && review.body.includes(PROSE_ASK),
      `the posted body differs from the preview's raw body (invisible characters drawn as escapes there), or does not carry the ask exactly as typed:\n  posted  ${JSON.stringify(review.body)}\n  preview ${JSON.stringify(shownBody)}`,
    );
    const posted = review.comments.map((c) => ({ path: c.path, side: c.side, line: c.line, startLine: c.start_line ?? null, body: c.body }));
    expect(JSON.stringify(posted) === JSON.stringify(shownComments), `the posted comments differ from the preview's:\n  posted  ${JSON.stringify(posted)}\n  preview ${JSON.stringify(shownComments)}`);
    expect(receiptUrl === review.html_url, `the preview links ${receiptUrl}, the forge's review is ${review.html_url}`);
    const creates = await forge.call('requests', { method: 'POST', pathPattern: '/reviews$' });
    expect(creates.length === 1, `the forge saw ${creates.length} review creations: ${JSON.stringify(creates)}`);
  });

  /** The preview as it is now: it must show the posted review (link, verdict, count) and offer no Post. */
  async function expectPosted(frame, what) {
    const shown = await poll(
      () => readPreview(frame),
      (p) => p.postArea === 'posted',
      45_000,
    );
    rig.log(`forge: preview ${what} ${JSON.stringify({ postArea: shown.postArea, posted: shown.posted, postButton: shown.postButton, error: shown.error })}`);
    expect(
      shown.postArea === 'posted' && shown.posted?.event === 'REQUEST_CHANGES' && shown.posted?.comments === 2,
      `${what} the preview shows ${JSON.stringify({ postArea: shown.postArea, posted: shown.posted, error: shown.error, refused: shown.refused })}, expected the posted review`,
    );
    expect(
      shown.posted.link === receiptUrl && shown.posted.words === 'Posted: Request changes · 2 comments',
      `${what} the posted state reads ${JSON.stringify(shown.posted)}; the posted review is ${receiptUrl}`,
    );
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
    const tabs = await page
      .locator('.tabs-container .tab .label-name')
      .allInnerTexts()
      .catch(() => []);
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
    expect(
      receiptRow?.label === 'Posted: Request changes · 2 comments' && receiptRow.level === 1,
      `after the reload the Hand off view's receipt row is ${JSON.stringify(receiptRow)} (rows ${JSON.stringify(view.rows)})`,
    );
    // A post sends what it carried: the three asks left the lane, so a follow-up cannot post them twice.
    const laneRow = view.rows?.find((r) => r.level === 1 && r.label === 'Post review');
    expect(
      laneRow?.description === 'nothing staged' && !view.rows.some((r) => asRead(r.label) === GUTTER_TEXT),
      `after the post the Hand off lane reads ${JSON.stringify(laneRow)} (rows ${JSON.stringify(view.rows?.map((r) => [r.label, r.description]))}), expected nothing staged`,
    );
    const badge = await scmBadge();
    expect(badge.found && !badge.visible, `after the post the Source Control badge still counts asks: ${JSON.stringify(badge)}`);

    // A new host reads the receipt from the store: restart it, close the preview, open it again.
    const known = new Set(hostPids());
    const before = hostPids().at(-1);
    expect(before, 'the Rennet log names no running host before the restart');
    await rig.runCommand(page, 'Rennet: Restart Host');
    const after = await poll(
      () => hostPids().find((p) => !known.has(p)) ?? null,
      (p) => p !== null,
      30_000,
    );
    expect(after, `"Rennet: Restart Host" started no new host within 30 s (pids in the log ${JSON.stringify(hostPids())})`);
    rig.log(`forge: host restarted, pid ${before} → ${after}`);
    const previewTab = page.locator('.tabs-container .tab', { hasText: 'Post review · Pull Request #1' }).first();
    await previewTab.click();
    await rig.runCommand(page, 'View: Close Editor');
    await poll(
      () => previewTab.count(),
      (n) => n === 0,
      10_000,
    );
    expect((await previewTab.count()) === 0, 'the preview tab did not close');
    await rig.runCommand(page, 'Rennet: Preview Review');
    const reopened = await previewFrame();
    await expectPosted(reopened, 'reopened after the host restart');
    await rig.sleep(300);
    await screenshot('posted-after-restart');
    const reviews = await forge.call('reviews', { owner: OWNER, name: NAME, number: 1 });
    expect(reviews.length === 1, `the forge holds ${reviews.length} reviews after the reload and restart, expected still one`);
  });

  await test("alice pushes to the request: Refresh says the head moved (preview and Hand off); a follow-up Post is refused before anything is sent; Capture New Head makes the new head the review's, what was posted an earlier review", async () => {
    expect(receiptUrl, 'nothing was posted (see the previous tests)');
    // alice pushes one more commit to feature from her own clone (the workspace is not touched).
    const forgeUrl = new URL(forge.url);
    const aliceClone = path.join(work, 'alice');
    const gitAsAlice = (args, cwd = aliceClone) =>
      execFileP('git', args, {
        cwd,
        encoding: 'utf8',
        env: {
          ...process.env,
          GIT_TERMINAL_PROMPT: '0',
          GIT_AUTHOR_NAME: 'Alice',
          GIT_AUTHOR_EMAIL: 'alice@example.invalid',
          GIT_COMMITTER_NAME: 'Alice',
          GIT_COMMITTER_EMAIL: 'alice@example.invalid',
        },
      });
    await gitAsAlice(['clone', '--quiet', '--branch', 'feature', `${forgeUrl.protocol}//alice:alice-token@${forgeUrl.host}/${OWNER}/${NAME}.git`, aliceClone], work);
    // Her fix of what bob asked on line 5, one more line of the added file, a reworded note.
    writeAliceFix(aliceClone);
    await gitAsAlice(['commit', '--quiet', '-am', 'Say why line five changes']);
    await gitAsAlice(['push', '--quiet', 'origin', 'feature']);
    const moved = (await gitAsAlice(['rev-parse', 'HEAD'])).stdout.trim();
    const tree = (await gitAsAlice(['rev-parse', 'HEAD^{tree}'])).stdout.trim();
    expect(tree === fixTree, `alice's pushed tree ${tree} is not the fix the re-review's plan was made from (${fixTree})`);
    fixHead = moved;
    const live = await forge.call('pullRequest', { owner: OWNER, name: NAME, number: 1 });
    expect(live.head?.sha === moved, `after alice's push the forge says the request's head is ${live.head?.sha}, expected ${moved}`);

    const frame = await previewFrame();
    await frame.locator('[data-testid="preview-refresh"]').click();
    let shown = await poll(
      () => readPreview(frame),
      (p) => p.freshness === 'moved',
      20_000,
    );
    const banner = await frame
      .locator('[data-testid="preview-freshness"]')
      .innerText()
      .catch(() => null);
    expect(
      shown.freshness === 'moved' && banner?.includes(moved.slice(0, 7)) && banner.includes(headSha.slice(0, 7)) && (await frame.locator('[data-testid="capture-new-head"]').count()) === 1,
      `after Refresh the preview's head banner is ${JSON.stringify({ state: shown.freshness, banner })}, expected it moved ${headSha.slice(0, 7)} → ${moved.slice(0, 7)} with Capture New Head`,
    );
    // What was posted stays posted; choosing a verdict composes a follow-up review, which offers Post.
    expect(shown.postArea === 'posted', `the head move replaced the posted state: ${shown.postArea}`);
    await frame.locator('[data-testid="verdict-choice"][data-choice="comment"]').click();
    shown = await poll(
      () => readPreview(frame),
      (p) => p.event === 'COMMENT' && p.postArea === 'post' && p.postButton && !p.postButton.disabled,
      15_000,
    );
    expect(
      shown.postArea === 'post' && shown.comments.length === 0,
      `choosing Comment after the post offers ${shown.postArea} with ${shown.comments?.length} comments, expected Post for a follow-up carrying none of the posted comments`,
    );
    await frame.locator('[data-testid="post-review"]').click();
    shown = await poll(
      () => readPreview(frame),
      (p) => p.refused !== null && p.postButton && !p.postButton.disabled,
      30_000,
    );
    const code = await frame
      .locator('[data-testid="post-refused"]')
      .getAttribute('data-code')
      .catch(() => null);
    const repair = await frame
      .locator('[data-testid="post-repair"]')
      .innerText()
      .catch(() => null);
    await frame
      .locator('[data-testid="post-refused"]')
      .scrollIntoViewIfNeeded()
      .catch(() => {});
    await screenshot('post-refused-head-moved');
    rig.log(`forge: post after the head moved: ${JSON.stringify({ code, repair, refused: shown.refused })}`);
    expect(
      code === 'head-moved' && /moved/.test(shown.refused ?? '') && repair?.trim() === 'Capture New Head',
      `the refused post reads ${JSON.stringify({ code, refused: shown.refused, repair })}, expected head-moved with Capture New Head`,
    );
    const reviews = await forge.call('reviews', { owner: OWNER, name: NAME, number: 1 });
    const creates = await forge.call('requests', { method: 'POST', pathPattern: '/reviews$' });
    expect(reviews.length === 1 && creates.length === 1, `the refused post reached the forge: ${reviews.length} reviews, ${creates.length} review creations`);

    // The Hand off view says the head moved, with Capture New Head.
    await page.locator('#workbench\\.parts\\.statusbar').click({ position: { x: 2, y: 2 }, force: true });
    await rig.runCommand(page, 'Source Control: Focus on Hand off View');
    const view = await poll(readHandOff, (h) => h.found && h.rows.some((r) => /^Head moved to /.test(r.label ?? '')), 15_000);
    await screenshot('hand-off-head-moved');
    const movedRow = view.rows?.find((r) => /^Head moved to /.test(r.label ?? ''));
    expect(
      movedRow?.label === `Head moved to ${moved.slice(0, 7)} since capture — Capture New Head`,
      `the Hand off view's rows are ${JSON.stringify(view.rows?.map((r) => r.label))}, expected "Head moved to ${moved.slice(0, 7)} since capture — Capture New Head"`,
    );
    // Back to no choice: nothing is staged since the post, so the preview stands at the posted review.
    await frame.locator('[data-testid="verdict-choice"][data-choice="clear"]').click();
    const standing = await poll(
      () => readPreview(frame),
      (p) => p.postArea === 'posted' && p.event === 'REQUEST_CHANGES',
      15_000,
    );
    expect(
      standing.asPosted && standing.comments?.length === 2,
      `with nothing staged since the post the preview shows ${JSON.stringify({ postArea: standing.postArea, asPosted: standing.asPosted, comments: standing.comments?.length })}, expected the review as posted`,
    );
    // Capture New Head from the preview: the new head is the review's capture; nothing is staged on it yet.
    await frame.locator('[data-testid="capture-new-head"]').click();
    const fresh = await poll(
      () => readPreview(frame),
      (p) => p.freshness === 'fresh' && p.postArea === 'post',
      90_000,
    );
    const freshBanner = await frame
      .locator('[data-testid="preview-freshness"]')
      .innerText()
      .catch(() => null);
    await screenshot('preview-new-head');
    rig.log(
      `forge: after Capture New Head ${JSON.stringify({ freshness: fresh.freshness, banner: freshBanner, event: fresh.event, comments: fresh.comments?.length, folded: fresh.folded?.length, postArea: fresh.postArea })}`,
    );
    expect(
      fresh.freshness === 'fresh' && freshBanner?.includes(moved.slice(0, 7)),
      `after Capture New Head the head banner reads ${JSON.stringify({ state: fresh.freshness, banner: freshBanner })}, expected the new head ${moved.slice(0, 7)}`,
    );
    expect(
      !fresh.asPosted && fresh.comments.length === 0 && fresh.folded.length === 0 && (fresh.bodyRendered ?? '').includes(`Reviewed ${moved.slice(0, 12)}`),
      `after Capture New Head the preview shows ${JSON.stringify({ asPosted: fresh.asPosted, comments: fresh.comments, folded: fresh.folded, body: fresh.bodyRendered?.slice(0, 200) })}, expected a review of the new head carrying nothing posted before`,
    );
    // The Hand off view follows: no stale "Head moved" row, and what was posted is an earlier review now.
    await page.locator('#workbench\\.parts\\.statusbar').click({ position: { x: 2, y: 2 }, force: true });
    await rig.runCommand(page, 'Source Control: Focus on Hand off View');
    const settled = await poll(readHandOff, (h) => h.found && !h.rows.some((r) => /^Head moved/.test(r.label ?? '')) && h.rows.some((r) => /^Posted earlier: /.test(r.label ?? '')), 15_000);
    await screenshot('hand-off-new-head');
    rig.log(`forge: hand off after Capture New Head ${JSON.stringify(settled.rows?.map((r) => [r.level, r.label, r.description]))}`);
    expect(!settled.rows.some((r) => /^Head moved/.test(r.label ?? '')), `after Capture New Head the Hand off view still says the head moved: ${JSON.stringify(settled.rows?.map((r) => r.label))}`);
    expect(
      settled.rows.some((r) => r.label === 'Posted earlier: Request changes · 2 comments'),
      `after Capture New Head the Hand off view's receipt row is ${JSON.stringify(settled.rows?.filter((r) => /^Posted/.test(r.label ?? '')))}, expected "Posted earlier: Request changes · 2 comments"`,
    );
    expect(
      !settled.rows.some((r) => asRead(r.label) === GUTTER_TEXT || asRead(r.label) === FINDINGS[0].title),
      `after Capture New Head the posted asks are listed again: ${JSON.stringify(settled.rows?.map((r) => r.label))}`,
    );
  });

  // ─── Re-review since the last review: alice's push above is her fix of bob's gutter comment ───

  const priorLine = 'Prior review: 1 of 3 resolved';
  let captured = null;
  let rereviewed = null;
  await test('Re-review since your last review… from the Hand off row, after alice\'s fix and Capture New Head: the notification states the delta since bob\'s review and "Prior review: 1 of 3 resolved"; the ask of the inline item still open (R2, the finding) is staged again', async () => {
    expect(fixHead, 'alice did not push her fix (see the previous test)');
    // The board of the new head first: Capture New Head drafted it; a re-review waits for no running generation.
    await clearTheView(page);
    await page.locator('.tabs-container .tab', { hasText: 'Rennet · Pull Request #1' }).first().click();
    const headShown = () =>
      board(page)
        .locator('[data-testid="head-id"]')
        .getAttribute('data-full-id', { timeout: 2_000 })
        .catch(() => null);
    await poll(headShown, (h) => h === fixHead, 60_000);
    captured = await waitForTerminalGeneration(page, { previous: generation?.id ?? null, what: 'after Capture New Head', requestCount });
    const capturedHead = await headShown();
    expect(capturedHead === fixHead, `the board shows head ${capturedHead}, alice's fix is ${fixHead}: Capture New Head did not make it the review's`);
    expect(
      captured.rail.every((t) => t.state === 'settled'),
      `the new head's lanes did not settle: ${JSON.stringify(captured.rail)}`,
    );
    await screenshot('rereview-new-head-board');

    await focusHandOff(page);
    const row = page.locator('.part.sidebar .pane .monaco-list-row', { hasText: 'Re-review since your last review…' }).first();
    await row.waitFor({ state: 'visible', timeout: 15_000 }).catch(async () => {
      throw new Error(`the Hand off view has no "Re-review since your last review…" row: ${JSON.stringify((await readHandOff()).rows?.map((r) => r.label))}`);
    });
    await page.mouse.move(5, 500);
    await screenshot('rereview-hand-off-row');
    const requestsBefore = models.requests.length;
    await row.click();
    const toast = page
      .locator('.notifications-toasts .notification-toast')
      .filter({ hasText: /Rennet: .*Prior review: / })
      .first();
    await toast.waitFor({ state: 'visible', timeout: 180_000 }).catch(async () => {
      const notes = await page
        .locator('.notifications-toasts .notification-toast')
        .allInnerTexts()
        .catch(() => []);
      throw new Error(
        `no "Rennet: … Prior review: …" notification within 180 s of the row's click (notifications ${JSON.stringify(notes)}; model requests since ${JSON.stringify(models.requests.slice(requestsBefore).map((r) => r.seat))})`,
      );
    });
    const said = (await toast.locator('.notification-list-item-message').first().innerText()).replace(/\s+/g, ' ').trim();
    await rig.sleep(300);
    await screenshot('rereview-notification');
    rig.log(`forge: re-review notification ${JSON.stringify(said)}`);
    const want = `Rennet: The delta since your review at ${headSha.slice(0, 7)} is reviewed. ${priorLine}.`;
    expect(said === want, `the notification says ${JSON.stringify(said)}, expected ${JSON.stringify(want)}`);
    rereviewed = { requestsBefore };
    // host/rereview/run.ts carryForwardOpenAsks: the finding's posted change request (R2) is still open, so it is staged
    // again for the next post; bob's gutter comment (R1, resolved) and the prose note (R3, no line) are not.
    await focusHandOff(page);
    const lane = (h) => h.rows?.find((r) => r.level === 1 && r.label === 'Post review');
    const view = await poll(readHandOff, (h) => lane(h)?.description === '1 staged', 20_000);
    await page.mouse.move(5, 500);
    await rig.sleep(300);
    await screenshot('rereview-hand-off-carried');
    rig.log(`forge: hand off after the re-review ${JSON.stringify(view.rows?.map((r) => [r.level, r.label, r.description]))}`);
    // The rows under the lane (the merge gates' rows below are level 2 too).
    const rows = view.rows ?? [];
    const at = rows.indexOf(lane(view));
    const end = rows.findIndex((r, i) => i > at && r.level === 1);
    const asks = rows.slice(at + 1, end < 0 ? rows.length : end).filter((r) => r.level === 2);
    // Its finding is not on the new generation's boards: the row names its lines on the capture it was written on.
    const carried = `finding on src/app.js:${plan.flagged[0].start}-${plan.flagged[0].end} (new) · earlier capture`;
    expect(
      lane(view)?.description === '1 staged' && asks.length === 1 && asRead(asks[0].label) === FINDINGS[0].title && asks[0].description === carried,
      `after the re-review the Hand off lane is ${JSON.stringify(lane(view))} with asks ${JSON.stringify(asks.map((r) => [r.label, r.description]))}, expected R2's change request "${FINDINGS[0].title}" (${carried}) staged again`,
    );
  });

  await test("the re-review's generation over the fix delta (base: bob's reviewed commit) settles, and its Flagged lens shows Prior items: the line, R1 resolved with the fix's line as evidence, R2 and R3 open with their reasons; the closure seat read the items and the fixed file first", async () => {
    expect(rereviewed, 'the re-review did not run (see the previous test)');
    await clearTheView(page);
    await page.locator('.tabs-container .tab', { hasText: 'Rennet · Pull Request #1' }).first().click();
    const generation = await waitForTerminalGeneration(page, { previous: captured.id, what: 'after the re-review', requestCount });
    const ids = {
      head: await board(page).locator('[data-testid="head-id"]').getAttribute('data-full-id'),
      base: await board(page).locator('[data-testid="base-id"]').getAttribute('data-full-id'),
      rows: await board(page)
        .locator('[data-testid="file-row"]')
        .evaluateAll((els) => els.map((e) => e.getAttribute('data-path')).sort()),
    };
    await rig.sleep(300);
    await screenshot('rereview-board');
    rig.log(`forge: the re-review's generation ${generation.id} ${JSON.stringify({ ...ids, rail: generation.rail })}`);
    expect(
      generation.rail.every((t) => t.state === 'settled'),
      `every lens of the re-review's generation should settle on the scripted delta plan; not settled: ${JSON.stringify(generation.rail.filter((t) => t.state !== 'settled'))}`,
    );
    // The panel's header stays the request's capture (what posts); the lens seats read the fix delta: their
    // list_changes answered from bob's reviewed commit to alice's head, with the delta's three one-hunk files.
    expect(ids.head === fixHead && ids.base !== headSha, `the board's header reads ${ids.base} → ${ids.head}, expected the request's capture at alice's head ${fixHead}`);
    const listed = models.requests
      .slice(rereviewed.requestsBefore)
      .filter((r) => /^rereview:(design|sequence|decisions|flagged|noise):\w+@1$/.test(r.seat ?? ''))
      .map((r) => r.toolResults?.at(-1) ?? '');
    const deltaLine = `Reviewed change: base ${headSha.slice(0, 12)} → head ${fixHead.slice(0, 12)}; 3 files, +3 −2, 3 hunks.`;
    expect(
      listed.length === 6 && listed.every((t) => t.split('\n')[0] === deltaLine),
      `the re-review's lens seats' list_changes answered ${JSON.stringify(listed.map((t) => t.split('\n')[0]))}, expected six times ${JSON.stringify(deltaLine)}`,
    );

    // The delta plan's Sequence cites the fix: its first code card is line 5 of src/app.js, the fixed text cited.
    await selectLens(page, 'sequence');
    const card = board(page).locator('[data-testid="code-card"][data-path="src/app.js"][data-start="5"][data-end="5"]').first();
    await card.waitFor({ state: 'visible', timeout: 15_000 });
    await card.scrollIntoViewIfNeeded();
    const cardLines = await card.locator('[data-testid="code-line"]').evaluateAll((rows) =>
      rows.map((r) => ({
        kind: r.getAttribute('data-kind'),
        old: r.getAttribute('data-old'),
        new: r.getAttribute('data-new'),
        cited: r.getAttribute('data-cited'),
        text: r.querySelector('.rn-code-text')?.textContent ?? null,
      })),
    );
    await rig.sleep(300);
    await screenshot('rereview-sequence');
    const cited = cardLines.filter((l) => l.cited === 'true');
    expect(
      cited.length === 1 && cited[0].new === '5' && cited[0].text === FIXED_LINE_5 && cardLines.some((l) => l.old === '5' && l.new === null && l.text === 'app line 5 (changed)'),
      `the re-review's Sequence card of src/app.js:5 shows ${JSON.stringify(cardLines)}, expected the fix: line 5 "app line 5 (changed)" replaced by ${JSON.stringify(FIXED_LINE_5)}, cited`,
    );

    await selectLens(page, 'flagged');
    const section = board(page).locator('[data-testid="prior-items"]');
    await section.waitFor({ state: 'visible', timeout: 15_000 });
    await section.scrollIntoViewIfNeeded();
    const prior = await readPriorItems(page);
    await rig.sleep(300);
    await screenshot('rereview-prior-items');
    rig.log(`forge: Prior items ${JSON.stringify(prior)}`);
    expect(!prior.error, prior.error);
    expect(prior.line === priorLine, `the Prior items line reads ${JSON.stringify(prior.line)}, expected ${JSON.stringify(priorLine)}`);
    expect(prior.statement === `The delta since your review at ${headSha.slice(0, 7)} is reviewed. 1 of 3 earlier items resolved.`, `the statement reads ${JSON.stringify(prior.statement)}`);
    expect(prior.failure === null, `the Prior items say the closures were not judged: ${JSON.stringify(prior.failure)}`);
    const got = prior.items.map((i) => ({ id: i.id, closure: i.closure, badge: i.badge, severity: i.severity, reason: i.reason, evidence: i.evidence.map((e) => e.text) }));
    const want = [
      { id: 'R1', closure: 'resolved', badge: 'resolved', severity: 'blocker', reason: CLOSURES.resolved, evidence: ['src/app.js:5'] },
      { id: 'R2', closure: 'open', badge: 'open', severity: 'blocker', reason: CLOSURES.openInline, evidence: [] },
      { id: 'R3', closure: 'open', badge: 'open', severity: 'blocker', reason: CLOSURES.openBody, evidence: [] },
    ];
    expect(JSON.stringify(got) === JSON.stringify(want), `the Prior items are ${JSON.stringify(got)}, expected ${JSON.stringify(want)}`);
    // The items are bob's earlier review as posted: his gutter comment, the finding's comment, the folded prose ask.
    const [r1, r2, r3] = prior.items;
    expect(r1.where === `R1 · src/app.js:${gutterLine}` && r1.text === GUTTER_TEXT, `R1 reads ${JSON.stringify([r1.where, r1.text])}, expected bob's gutter comment on src/app.js:${gutterLine}`);
    expect(
      r2.where === `R2 · src/app.js:${plan.flagged[0].end}` && (r2.text ?? '').includes(FINDINGS[0].title),
      `R2 reads ${JSON.stringify([r2.where, r2.text])}, expected the finding's comment on src/app.js:${plan.flagged[0].end}`,
    );
    expect(r3.where === 'R3' && asRead(r3.text).includes(PROSE_ASK_WORDS), `R3 reads ${JSON.stringify([r3.where, r3.text])}, expected the folded prose ask (a note of the body)`);
    // R3 is the reviewer's hostile text, drawn through the Markdown sanitizer: no image, icon or link of it.
    expect(
      prior.items.every(
        (i) =>
          i.images === 0 &&
          i.anchors.every((h) => !/^(command|javascript):/i.test(h ?? '') && !(h ?? '').includes(`127.0.0.1:${beacon.port}`)) &&
          !i.icons.some((c) => /codicon-(terminal|alert)\b/.test(c)),
      ),
      `the Prior items draw the hostile text: ${JSON.stringify(prior.items.map((i) => ({ id: i.id, images: i.images, anchors: i.anchors, icons: i.icons })))}`,
    );
    const eventsBefore = watch.events.length;
    await observe('the Prior items');
    expect(
      watch.events.length === eventsBefore && beacon.hits.length === 0,
      `showing the Prior items ran something: ${JSON.stringify(watch.events.slice(eventsBefore))}; beacon ${JSON.stringify(beacon.hits)}`,
    );
    // The delta's own finding shows on the board under them.
    const finding = board(page).locator('[data-testid="element"][data-kind="finding"]').filter({ hasText: DELTA_FINDING.title });
    expect((await finding.count()) === 1, `the re-review's Flagged board does not show its finding "${DELTA_FINDING.title}"`);

    // The closure seat (the Flagged lens's harness: the Anthropic server) read before it judged: page 1 (the items and the
    // delta's units), the fixed file's diff, then handed in closures the host accepted — the earlier items never in its prompt.
    const closure = models.requests.slice(rereviewed.requestsBefore).filter((r) => /^rereview:closures@/.test(r.seat ?? ''));
    const route = closure.map((r) => `${r.server} ${r.seat}`);
    const wantRoute = [0, 1, 2, 3].map((n) => `anthropic rereview:closures@${n}`);
    expect(JSON.stringify(route) === JSON.stringify(wantRoute), `the closure seat's requests were ${JSON.stringify(route)}, expected ${JSON.stringify(wantRoute)}`);
    const results = closure[3].toolResults ?? [];
    const page1 = results[0] ?? '';
    const unit = page1
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l))
      .find((u) => u.kind === 'text-hunk' && u.path === 'src/app.js');
    expect(
      /"items":\[\{"id":"R1"/.test(page1) && unit && /^ev-[0-9a-f]{16}$/.test(unit.id) && unit.body.includes(`+${FIXED_LINE_5}`),
      `read_prior_items answered ${JSON.stringify(page1.slice(0, 600))}: no item R1, or no text-hunk unit of src/app.js carrying the fix`,
    );
    expect(
      (results[1] ?? '').split('\n').some((l) => l.startsWith('+') && l.endsWith(`| ${FIXED_LINE_5}`)),
      `read_diff of src/app.js answered ${JSON.stringify((results[1] ?? '').slice(0, 600))}, without the fixed line`,
    );
    expect(/^The closures are accepted: 1 of 3 items resolved/.test(results[2] ?? ''), `submit_closures answered ${JSON.stringify(results[2])}`);
    const prompt = (closure[0].prompt ?? []).join('\n');
    expect(
      prompt.includes('# Rennet: prior items') && !prompt.includes(GUTTER_TEXT) && !prompt.includes(headSha),
      `the closure seat's prompt ${prompt.includes('# Rennet: prior items') ? 'carries the earlier review (its items or the reviewed commit)' : 'is not the prior-items prompt'}`,
    );
    // The lens seats read the delta and played the delta plan.
    const lensSeats = new Set(
      models.requests
        .slice(rereviewed.requestsBefore)
        .map((r) => r.seat?.replace(/@\d+$/, ''))
        .filter((s) => /^rereview:(design|sequence|decisions|flagged|noise):/.test(s ?? '')),
    );
    expect(lensSeats.size === 6, `the delta plan answered the seats ${JSON.stringify([...lensSeats])}, expected the six lens seats`);
    rereviewed.generation = generation.id;
  });

  await test("a resolved item's evidence opens the fixed line of src/app.js at alice's head in an editor", async () => {
    expect(rereviewed?.generation, "the re-review's board was not read (see the previous test)");
    const button = board(page).locator('[data-testid="prior-item"][data-item="R1"] [data-testid="prior-evidence"]').first();
    const title = await button.getAttribute('title');
    expect(title === 'Open src/app.js line 5 (after the fix)', `the evidence button's title is ${JSON.stringify(title)}`);
    await button.click();
    const tab = page.locator('.part.editor .tabs-container .tab.active', { hasText: 'app.js' }).first();
    await tab.waitFor({ timeout: 15_000 });
    const editor = editorOf(page);
    const uri = await poll(
      () => editor.getAttribute('data-uri').catch(() => null),
      (u) => /^rennet-blob:\/src\/app\.js\?/.test(u ?? ''),
      10_000,
    );
    const status = await poll(
      () =>
        page
          .locator('[id="status.editor.selection"]')
          .innerText({ timeout: 2_000 })
          .catch(() => null),
      (t) => /^Ln 5, Col \d+/.test(t ?? ''),
      10_000,
    );
    const text = await poll(
      () => editorLineText(editor, 5),
      (t) => t === FIXED_LINE_5,
      10_000,
    );
    await rig.sleep(300);
    await screenshot('rereview-evidence-editor');
    rig.log(`forge: the evidence opened ${uri}; status ${JSON.stringify(status)}; line 5 ${JSON.stringify(text)}`);
    expect(
      /^rennet-blob:\/src\/app\.js\?/.test(uri ?? '') && /side(=|%3D)head/.test(uri),
      `the evidence opened ${JSON.stringify(uri)}, expected the captured head of src/app.js (the checkout is main)`,
    );
    expect(/^Ln 5, Col \d+/.test(status ?? ''), `the status bar says ${JSON.stringify(status)}, expected the cursor on line 5`);
    expect(text === FIXED_LINE_5, `line 5 of the opened editor reads ${JSON.stringify(text)}, expected alice's fix ${JSON.stringify(FIXED_LINE_5)}`);
  });

  await test("Request change on the delta's finding, then the preview and Post: the forge holds a second review of bob's, pinned to alice's head, whose body opens with \"Prior review: 1 of 3 resolved\" and carries R2's ask again, and whose comment is on line 5; the Hand off view shows its receipt", async () => {
    expect(rereviewed?.generation, "the re-review's board was not read (see the previous tests)");
    await clearTheView(page);
    await page.locator('.tabs-container .tab', { hasText: 'Rennet · Pull Request #1' }).first().click();
    await selectLens(page, 'flagged');
    const finding = board(page).locator('[data-testid="element"][data-kind="finding"]').filter({ hasText: DELTA_FINDING.title }).first();
    await finding.waitFor({ state: 'visible', timeout: 15_000 });
    await finding.scrollIntoViewIfNeeded();
    await finding.locator('[data-testid="finding-request"]').click();
    const staged = await poll(stagedCount, (n) => n === 2);
    await screenshot('rereview-finding-requested');
    expect(staged === 2, `after Request change on the delta's finding the board counts ${staged} staged asks, expected 2 (it and R2's, staged again)`);

    await focusHandOff(page);
    await page.locator('.part.sidebar .pane .monaco-list-row', { hasText: 'Preview and post review…' }).first().click();
    const frame = await previewFrame();
    let shown = await poll(
      () => readPreview(frame),
      (p) => p.postArea === 'post' && p.freshness === 'fresh' && p.comments?.length === 1 && p.event === 'REQUEST_CHANGES',
      30_000,
    );
    await rig.sleep(300);
    await screenshot('rereview-preview');
    rig.log(`forge: the re-review's preview ${JSON.stringify({ ...shown, text: shown.text?.slice(0, 400) })}`);
    expect(
      shown.postArea === 'post' && shown.freshness === 'fresh' && shown.event === 'REQUEST_CHANGES',
      `the preview shows ${JSON.stringify({ postArea: shown.postArea, freshness: shown.freshness, event: shown.event, error: shown.error, refused: shown.refused })}, expected a fresh Request changes to post`,
    );
    expect(shown.bodyFirst?.text === priorLine, `the rendered body's first block is ${JSON.stringify(shown.bodyFirst)}, expected ${JSON.stringify(priorLine)}`);
    const wantComment = [{ path: 'src/app.js', side: 'RIGHT', line: 5, startLine: null, where: 'src/app.js · new side · line 5' }];
    const gotComment = shown.comments.map((c) => ({ path: c.path, side: c.side, line: c.line, startLine: c.startLine, where: c.where?.split(' · ').slice(0, 3).join(' · ') }));
    expect(
      JSON.stringify(gotComment) === JSON.stringify(wantComment) && (shown.comments[0].body ?? '').includes(DELTA_FINDING.title),
      `the preview's comments are ${JSON.stringify(shown.comments)}, expected the delta finding's change request on src/app.js line 5 of the request's head`,
    );
    expect(
      (shown.bodyRendered ?? '').includes(`Reviewed ${fixHead.slice(0, 12)}`),
      `the rendered body does not state the reviewed head ${fixHead.slice(0, 12)}: ${JSON.stringify(shown.bodyRendered)}`,
    );
    // R2's ask, staged again, was written on the first capture: it goes in the body, said.
    const foldedAt = `src/app.js lines ${plan.flagged[0].start}–${plan.flagged[0].end}`;
    expect(
      shown.folded.length === 1 &&
        shown.folded[0].reason === 'other-patchset' &&
        shown.folded[0].text.startsWith(foldedAt) &&
        (shown.bodyRendered ?? '').includes(`Change requested · ${foldedAt}`) &&
        (shown.bodyRendered ?? '').includes(FINDINGS[0].title),
      `the folded asks are ${JSON.stringify(shown.folded)} (body ${JSON.stringify(shown.bodyRendered)}), expected R2's change request "${FINDINGS[0].title}" on ${foldedAt} folded as other-patchset into the body's notes`,
    );
    await frame.locator('[data-testid="body-raw-toggle"]').click();
    shown = await poll(
      () => readPreview(frame),
      (p) => p.bodyRaw !== null,
      5_000,
    );
    const rawBody = shown.bodyRaw;
    const rawComments = shown.comments.map((c) => ({ path: c.path, side: c.side, line: c.line, startLine: c.startLine, body: c.raw }));
    await screenshot('rereview-preview-raw');
    expect(
      rawBody?.split('\n')[0] === priorLine && shown.marker && rawBody.endsWith(`<!-- rennet-review: ${shown.marker} -->`),
      `the raw body ${JSON.stringify(rawBody)} should open with ${JSON.stringify(priorLine)} and end with its marker`,
    );
    expect((await forge.call('reviews', { owner: OWNER, name: NAME, number: 1 })).length === 1, 'a review was posted before Post');

    await frame.locator('[data-testid="post-review"]').click();
    shown = await poll(
      () => readPreview(frame),
      (p) => p.postArea === 'posted' || p.refused !== null,
      60_000,
    );
    await rig.sleep(300);
    await screenshot('rereview-posted');
    rig.log(`forge: after the re-review's Post ${JSON.stringify({ postArea: shown.postArea, posted: shown.posted, refused: shown.refused, error: shown.error })}`);
    expect(
      shown.postArea === 'posted' && shown.posted?.words === 'Posted: Request changes · 1 comment' && shown.postButton === null,
      `after Post the preview shows ${JSON.stringify({ postArea: shown.postArea, posted: shown.posted, refused: shown.refused, error: shown.error })}`,
    );
    const reviews = await forge.call('reviews', { owner: OWNER, name: NAME, number: 1 });
    rig.log(
      `forge: reviews after the re-review ${JSON.stringify(reviews.map((r) => ({ id: r.id, user: r.user?.login, state: r.state, commit: r.commit_id, body: r.body.slice(0, 120), comments: r.comments.length })))}`,
    );
    expect(reviews.length === 2, `the forge holds ${reviews.length} reviews, expected two (the first and the re-review's)`);
    const second = reviews[1];
    expect(
      second.user?.login === 'bob' && second.state === 'CHANGES_REQUESTED' && second.commit_id === fixHead,
      `the second review is ${JSON.stringify({ user: second.user?.login, state: second.state, commit: second.commit_id })}, expected bob's CHANGES_REQUESTED pinned to alice's head ${fixHead}`,
    );
    expect(
      second.body.split('\n')[0] === priorLine && shownAs(second.body) === rawBody && second.body.includes(FINDINGS[0].title),
      `the second review's body differs from the preview's raw body or does not open with the line:\n  posted  ${JSON.stringify(second.body)}\n  preview ${JSON.stringify(rawBody)}`,
    );
    const posted = second.comments.map((c) => ({ path: c.path, side: c.side, line: c.line, startLine: c.start_line ?? null, body: c.body }));
    expect(
      JSON.stringify(posted) === JSON.stringify(rawComments),
      `the second review's comments differ from the preview's:\n  posted  ${JSON.stringify(posted)}\n  preview ${JSON.stringify(rawComments)}`,
    );
    expect(shown.posted.link === second.html_url, `the preview links ${shown.posted.link}, the forge's review is ${second.html_url}`);

    await focusHandOff(page);
    const view = await poll(readHandOff, (h) => h.found && h.rows.some((r) => r.label === 'Posted: Request changes · 1 comment'), 20_000);
    await page.mouse.move(5, 500);
    await rig.sleep(300);
    await screenshot('rereview-hand-off-posted');
    rig.log(`forge: hand off after the re-review's post ${JSON.stringify(view.rows?.map((r) => [r.level, r.label, r.description]))}`);
    const receipt = view.rows?.find((r) => /^Posted: /.test(r.label ?? ''));
    expect(
      receipt?.label === 'Posted: Request changes · 1 comment' && receipt.level === 1,
      `the Hand off view's receipt row is ${JSON.stringify(receipt)} (rows ${JSON.stringify(view.rows?.map((r) => r.label))})`,
    );
  });

  await test("Open Pull Request on bob's own branch bob/feature: after Review Branch the modal shows the title and description the Design lens's model wrote from the review; Push and Open Pull Request pushes the branch (no upstream written) and the forge holds the request with exactly that text", async () => {
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
    expect(
      local === headSha && fetchUrl === `${forge.url}/${OWNER}/${NAME}.git`,
      `the clone's bob/feature is at ${local} (expected feature as cloned, ${headSha}) and origin fetches from ${fetchUrl}`,
    );
    expect((await configOf('branch.bob/feature.remote')) === null && (await configOf('branch.bob/feature.merge')) === null, 'checking out bob/feature wrote an upstream');

    // Review Branch bob/feature against main: the lens seats cite the feature branch's lines, so
    // the lanes settle as in the request's review; the opener's pass reads this review's capture.
    await clearTheView(page);
    await rig.runCommand(page, 'View: Close All Editors');
    await rig.runCommand(page, 'Rennet: Review Branch');
    await rig.pickQuickPick(page, 'Branch to review', 'bob/feature');
    await rig.pickQuickPick(page, 'Base to compare with', 'main');
    const boardTitle = 'Rennet · bob/feature vs main';
    await page
      .locator('.tabs-container .tab', { hasText: boardTitle })
      .first()
      .waitFor({ timeout: 90_000 })
      .catch(async () => {
        const tabs = await page
          .locator('.tabs-container .tab .label-name')
          .allInnerTexts()
          .catch(() => []);
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
    const repoPicker = page
      .locator('.quick-input-widget')
      .filter({ visible: true })
      .filter({ has: page.locator('.quick-input-box input[placeholder="Repository to review"]') });
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
      const notes = await page
        .locator('.notifications-toasts .notification-toast')
        .allInnerTexts()
        .catch(() => []);
      throw new Error(
        `no modal dialog within 120 s of "Rennet: Open Pull Request" (notifications ${JSON.stringify(notes)}; opener requests ${JSON.stringify(models.requests.slice(requestsBefore).map((r) => r.seat))})`,
      );
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
    const added = hunks
      .get(file)
      .hunks.flatMap((h) => h.lines)
      .filter((l) => l.kind === 'add')
      .map((l) => `${String(l.new).padStart(5)} | ${l.text}`);
    const readDiff = openerSeats.find((r) => r.seat === 'design:opener@3')?.toolResults?.at(-1) ?? '';
    const missing = added.filter((line) => !readDiff.includes(line));
    expect(
      added.length > 0 && missing.length === 0,
      `the opener's read_diff result resent to the model lacks ${missing.length} of ${file}'s ${added.length} added lines (${JSON.stringify(missing.slice(0, 3))}): ${JSON.stringify(readDiff.slice(0, 400))}`,
    );
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
    const toast = page
      .locator('.notifications-toasts .notification-toast')
      .filter({ hasText: /Rennet: opened / })
      .first();
    await toast.waitFor({ state: 'visible', timeout: 60_000 }).catch(async () => {
      const notes = await page
        .locator('.notifications-toasts .notification-toast')
        .allInnerTexts()
        .catch(() => []);
      throw new Error(`no "Rennet: opened …" notification within 60 s of ${open} (notifications ${JSON.stringify(notes)})`);
    });
    const said = (await toast.locator('.notification-list-item-message').first().innerText()).trim();
    await rig.sleep(300);
    await screenshot('open-pr-opened');
    const pulls = await forge.call('pullRequests', { owner: OWNER, name: NAME });
    rig.log(
      `forge: after ${open}: ${JSON.stringify(said)}; the forge's requests ${JSON.stringify(pulls.map((p) => ({ number: p.number, head: p.head?.ref, base: p.base?.ref, user: p.user?.login })))}`,
    );
    const mine = pulls.filter((p) => p.head?.ref === 'bob/feature');
    expect(mine.length === 1 && pulls.length === 2, `the forge holds ${JSON.stringify(pulls.map((p) => [p.number, p.head?.ref]))}, expected #1 and one request of bob/feature`);
    const [opened] = mine;
    // GitHub numbers issues and pull requests together: #1 (alice's request) and #2 (the issue) are taken.
    expect(
      opened.number === 3 && said === `Rennet: opened Pull Request #${opened.number}.`,
      `the notification says ${JSON.stringify(said)}; the forge numbered bob's request #${opened.number} (expected #3)`,
    );
    const live = await forge.call('pullRequest', { owner: OWNER, name: NAME, number: opened.number });
    expect(
      live.user?.login === 'bob' && live.state === 'open' && live.head?.ref === 'bob/feature' && live.base?.ref === 'main',
      `the forge's request #${opened.number} is ${JSON.stringify({ user: live.user?.login, state: live.state, head: live.head?.ref, base: live.base?.ref })}, expected bob's open bob/feature → main`,
    );
    expect(live.title === OPENER_TITLE, `the request's title is ${JSON.stringify(live.title)}, expected the model's ${JSON.stringify(OPENER_TITLE)}`);
    expect(live.body === OPENER_BODY, `the request's body is ${JSON.stringify(live.body)}, expected the model's ${JSON.stringify(OPENER_BODY)}`);
    const remoteHead = (await inClone(['ls-remote', 'origin', 'refs/heads/bob/feature'])).split(/\s+/)[0];
    expect(live.head?.sha === local && remoteHead === local, `the pushed head is ${live.head?.sha} (the forge's branch ${remoteHead}), the local bob/feature is ${local}`);
    const creates = await forge.call('requests', { method: 'POST', pathPattern: `^/api/v3/repos/${OWNER}/${NAME}/pulls$` });
    expect(creates.length === 1 && creates[0].user === 'bob' && creates[0].status === 201, `the forge saw ${JSON.stringify(creates)} request creations, expected one of bob's`);
    expect(
      (await configOf('branch.bob/feature.remote')) === null && (await configOf('branch.bob/feature.merge')) === null,
      `the push wrote an upstream for bob/feature (branch.bob/feature.remote ${JSON.stringify(await configOf('branch.bob/feature.remote'))})`,
    );
  });

  if (runner.results.slice(first).some((r) => !r.ok)) await printDiagnostics({ label: 'forge', cs, models, consoleErrors, forge, surface: 'github' });
  await page?.close().catch(() => {});
  await cs?.stop();
  page = null;
  cs = null;

  // The same requests on GitLab: the same forge process serves grp/widgets; a code-server of its own
  // registers the forge as GitLab, and the token comes from "Rennet: Set GitLab Token".
  await runForgeGitLab({ paths, vsix, runner, browser, forge, models, source, plan, work, fixTree });
  await models?.stop();
  await forge?.stop();
}

/** What a failed pass prints: code-server's and Rennet's logs, the console errors, the forge's stderr and its requests on `surface` (and git's). */
async function printDiagnostics({ label, cs, models, consoleErrors, forge, surface }) {
  dumpDiagnostics({ label, cs, models, consoleErrors, codeServerLines: 60, rennetLogLines: 150, extHostErrors: true, modelRequests: false });
  if (forge?.stderr.length) console.log(`--- ${label}: fake forge stderr ---\n${forge.stderr.slice(-40).join('\n')}`);
  if (forge) {
    const requests = (await forge.call('requests', {}).catch(() => [])).filter((r) => r.surface === surface || r.surface === 'git');
    console.log(
      `--- ${label}: fake forge requests (${requests.length}) ---\n${requests
        .slice(-40)
        .map((r) => `${r.method} ${r.path} → ${r.status}${r.user ? ` (${r.user})` : ''}`)
        .join('\n')}`,
    );
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
async function runForgeGitLab({ paths, vsix, runner, browser, forge, models, source, plan, work, fixTree }) {
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
    expect(forge && models, "the fake forge or the model servers did not start (see the forge scenario's first test)");
    host = new URL(forge.url).host;
    await forge.call('createRepo', { provider: 'gitlab', owner: GL_GROUP, name: GL_NAME, from: source, defaultBranch: 'main' });
    const opened = await forge.call('openPullRequest', {
      provider: 'gitlab',
      owner: GL_GROUP,
      name: GL_NAME,
      author: 'alice',
      head: 'feature',
      base: 'main',
      title: MR_TITLE,
      body: 'Spells the changed lines out.\n',
    });
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

  await test("\"Rennet: Set GitLab Token\" takes the forge's host:port, then bob's token in a password box, into VS Code's secret storage", async () => {
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
      const notes = await page
        .locator('.notifications-toasts .notification-toast')
        .allInnerTexts()
        .catch(() => []);
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
    const row = page
      .locator('.quick-input-widget .monaco-list-row')
      .filter({ has: page.locator('.label-name', { hasText: /^!1 / }) })
      .first();
    await row.waitFor({ state: 'visible', timeout: 10_000 });
    const description = await row
      .locator('.label-description')
      .first()
      .innerText()
      .catch(() => null);
    await screenshot('pick-request');
    expect(description?.trim() === 'alice · feature → main', `the request's row describes it as ${JSON.stringify(description)}, expected "alice · feature → main"`);
    // The list came from GitLab, asked as bob: the host had no token of its own and asked the editor for the stored one.
    const listed = await gitlabRequests({ method: 'GET', pathPattern: `^/api/v4/projects/(${GL_GROUP}%2F${GL_NAME}|\\d+)/merge_requests$` });
    const all = await gitlabRequests();
    expect(
      listed.length > 0 && all.every((r) => r.user === 'bob' && r.status < 400),
      `the forge's GitLab requests were ${JSON.stringify(all.map((r) => [r.method, r.path, r.status, r.user]))}, expected bob's merge request list among them and nothing else`,
    );
    const answered = `Forge credentials for ${host} (gitlab): answered from VS Code.`;
    const logged = await poll(rennetLog, (t) => t.includes(answered), 10_000);
    expect(
      logged.includes(answered),
      `the Rennet log does not say the editor answered the host's token request (${JSON.stringify(answered)}): ${JSON.stringify(logged.split('\n').filter((l) => /credentials|token/i.test(l)))}`,
    );
    await row.click();
    await page
      .locator('.tabs-container .tab', { hasText: title })
      .first()
      .waitFor({ timeout: 90_000 })
      .catch(async () => {
        const tabs = await page
          .locator('.tabs-container .tab .label-name')
          .allInnerTexts()
          .catch(() => []);
        const notes = await page
          .locator('.notifications-toasts .notification-toast, .notification-list-item-message')
          .allInnerTexts()
          .catch(() => []);
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
    const header = await board(page)
      .locator('[data-testid="patchset-header"]')
      .evaluate((h) => ({ title: h.querySelector('[data-testid="target-title"]')?.textContent?.trim() ?? null, kind: h.querySelector('[data-testid="target-kind"]')?.textContent?.trim() ?? null }));
    expect(
      header.title === `Merge Request !1 · ${full}` && header.kind === 'merge request',
      `the board's header reads ${JSON.stringify(header)}, expected "Merge Request !1 · ${full}" with the chip "merge request"`,
    );
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
    expect(
      handOff.found && /Merge Request !1 · grp\/widgets/.test(handOff.description ?? ''),
      `the Hand off view's description is ${JSON.stringify(handOff.description)} (found: ${handOff.found}), expected it to name Merge Request !1 · ${full}`,
    );
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
  await test("the preview: Request changes, GitLab's verdict label as the body's first line, the two line comments, Post to GitLab", async () => {
    expect(handOff?.found, 'the Hand off view was not read (see the previous test)');
    await page.locator('.part.sidebar .pane .monaco-list-row', { hasText: 'Preview and post review…' }).first().click();
    const frame = await previewFrame();
    let shown = await poll(
      () => readPreview(frame),
      (p) => p.postArea === 'post' && p.freshness === 'fresh' && p.comments?.length === 2,
      30_000,
    );
    await rig.sleep(300);
    await screenshot('preview');
    rig.log(`forge-gitlab: preview ${JSON.stringify({ ...shown, text: shown.text?.slice(0, 300) })}`);
    const tab = (
      await page
        .locator('.tabs-container .tab.active .label-name')
        .last()
        .innerText()
        .catch(() => '')
    ).trim();
    expect(
      tab === `Post review · Merge Request !1 · ${full}` && shown.target === tab,
      `the preview's tab is ${JSON.stringify(tab)} and its title ${JSON.stringify(shown.target)}, expected "Post review · Merge Request !1 · ${full}"`,
    );
    expect(shown.freshness === 'fresh' && shown.entry === 'a teammate’s request', `the preview's head state is ${JSON.stringify(shown.freshness)} and its request ${JSON.stringify(shown.entry)}`);
    expect(
      shown.event === 'REQUEST_CHANGES' && shown.eventText === 'Request changes' && /a staged change request makes it Request changes/.test(shown.how ?? ''),
      `the verdict is ${JSON.stringify([shown.event, shown.eventText, shown.how])}`,
    );
    // GitLab has no review event: the verdict is the body's first line, drawn bold.
    expect(
      shown.bodyFirst?.text === 'Verdict: changes requested' && JSON.stringify(shown.bodyFirst.strong) === '["Verdict: changes requested"]',
      `the rendered body's first block is ${JSON.stringify(shown.bodyFirst)}, expected "Verdict: changes requested" in bold`,
    );
    expect(
      (shown.bodyRendered ?? '').includes(`Reviewed ${headSha.slice(0, 12)}`),
      `the rendered body does not state the reviewed head ${headSha.slice(0, 12)}: ${JSON.stringify(shown.bodyRendered)}`,
    );
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
    shown = await poll(
      () => readPreview(frame),
      (p) => p.bodyRaw !== null,
      5_000,
    );
    await screenshot('preview-raw');
    shownBody = shown.bodyRaw;
    shownComments = shown.comments.map((c) => ({ path: c.path, side: c.side, line: c.line, startLine: c.startLine, body: c.raw }));
    expect(shownBody?.split('\n')[0] === GL_VERDICT_LABEL, `the raw body's first line is ${JSON.stringify(shownBody?.split('\n')[0])}, expected ${JSON.stringify(GL_VERDICT_LABEL)}`);
    expect(shown.marker && shownBody.endsWith(`\n<!-- rennet-review: ${shown.marker} -->`), `the raw body does not end with the marker ${JSON.stringify(shown.marker)}: ${JSON.stringify(shownBody)}`);
    expect(
      shownComments.every((c) => typeof c.body === 'string' && c.body.length > 0),
      `raw comments: ${JSON.stringify(shownComments)}`,
    );
    const notes = await forge.call('notes', mr);
    expect(notes.length === 0, `the merge request holds ${notes.length} notes before Post`);
  });

  let receiptUrl = null;
  await test("Post: the posted state, and the merge request holds exactly one body note equal to the preview's raw body and one positioned discussion per comment", async () => {
    expect(shownBody, 'the preview was not read (see the previous test)');
    const frame = await previewFrame();
    await frame.locator('[data-testid="post-review"]').click();
    const shown = await poll(
      () => readPreview(frame),
      (p) => p.postArea === 'posted' || p.refused !== null,
      60_000,
    );
    await rig.sleep(300);
    await screenshot('posted');
    rig.log(`forge-gitlab: after Post ${JSON.stringify({ postArea: shown.postArea, posted: shown.posted, refused: shown.refused })}`);
    expect(shown.postArea === 'posted' && shown.posted, `after Post the preview shows ${JSON.stringify({ postArea: shown.postArea, refused: shown.refused, error: shown.error })}`);
    expect(
      shown.posted.event === 'REQUEST_CHANGES' && shown.posted.comments === 2 && shown.posted.words === 'Posted: Request changes · 2 comments' && shown.postButton === null,
      `the posted state reads ${JSON.stringify(shown.posted)} (Post button ${JSON.stringify(shown.postButton)})`,
    );
    const notes = await forge.call('notes', mr);
    rig.log(
      `forge-gitlab: notes on the merge request ${JSON.stringify(notes.map((n) => ({ id: n.id, type: n.type, author: n.author?.username, position: n.position ?? null, body: n.body.slice(0, 60) })))}`,
    );
    const bodies = notes.filter((n) => !n.position);
    expect(
      bodies.length === 1,
      `the merge request holds ${bodies.length} notes without a position, expected exactly one (the review's body): ${JSON.stringify(bodies.map((n) => n.body.slice(0, 80)))}`,
    );
    const [body] = bodies;
    expect(
      body.author?.username === 'bob' && body.body === shownBody,
      `the body note is bob's? ${body.author?.username}; it differs from the preview's raw body:\n  posted  ${JSON.stringify(body.body)}\n  preview ${JSON.stringify(shownBody)}`,
    );
    const positioned = notes
      .filter((n) => n.position)
      .map((n) => {
        const p = n.position;
        const side = p.new_line !== null ? 'RIGHT' : 'LEFT';
        const pick = (o) => (side === 'RIGHT' ? o.new_line : o.old_line);
        return { path: p.new_path, side, line: pick(p), startLine: p.line_range ? pick(p.line_range.start) : null, body: n.body, type: n.type, author: n.author?.username, head: p.head_sha };
      });
    const wantPositioned = shownComments.map((c) => ({ ...c, type: 'DiffNote', author: 'bob', head: headSha }));
    expect(
      JSON.stringify(positioned) === JSON.stringify(wantPositioned),
      `the positioned notes differ from the preview's comments:\n  posted  ${JSON.stringify(positioned)}\n  preview ${JSON.stringify(wantPositioned)}`,
    );
    const discussions = await forge.call('discussions', mr);
    const shapes = discussions.map((d) => d.notes.map((n) => n.type));
    expect(
      discussions.length === 3 && discussions.every((d) => d.notes.length === 1),
      `the merge request holds discussions ${JSON.stringify(shapes)}, expected three of one note each (the body, the two comments)`,
    );
    const drafts = await forge.call('draftNotes', mr);
    const approvals = await forge.call('approvals', mr);
    expect(drafts.length === 0 && approvals.approved_by.length === 0, `after Post ${drafts.length} draft notes are left and the merge request is approved by ${JSON.stringify(approvals.approved_by)}`);
    const publishes = await gitlabRequests({ method: 'POST', pathPattern: '/draft_notes/bulk_publish$' });
    expect(publishes.length === 1 && publishes[0].user === 'bob', `the forge saw ${JSON.stringify(publishes)} bulk publishes, expected one of bob's`);
    receiptUrl = shown.posted.link;
    expect(
      receiptUrl === `${forge.url}/${full}/-/merge_requests/1#note_${body.id}`,
      `the posted link is ${JSON.stringify(receiptUrl)}, expected the body note ${forge.url}/${full}/-/merge_requests/1#note_${body.id}`,
    );
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
    const tabs = await page
      .locator('.tabs-container .tab .label-name')
      .allInnerTexts()
      .catch(() => []);
    expect(restored, `after the reload no preview was restored (tabs ${JSON.stringify(tabs)})`);
    const shown = await poll(
      () => readPreview(restored),
      (p) => p.postArea === 'posted' && p.freshness === 'fresh',
      45_000,
    );
    await rig.sleep(300);
    await screenshot('posted-after-reload');
    rig.log(`forge-gitlab: preview after the reload ${JSON.stringify({ postArea: shown.postArea, freshness: shown.freshness, posted: shown.posted, error: shown.error })}`);
    expect(
      shown.postArea === 'posted' && shown.posted?.words === 'Posted: Request changes · 2 comments' && shown.posted.link === receiptUrl && shown.postButton === null,
      `after the reload the preview shows ${JSON.stringify({ postArea: shown.postArea, posted: shown.posted, postButton: shown.postButton, error: shown.error })}, expected the posted review ${receiptUrl}`,
    );
    expect(shown.freshness === 'fresh', `after the reload the preview's head state is ${JSON.stringify(shown.freshness)}: the head could not be read again with the stored token?`);
    await page.locator('#workbench\\.parts\\.statusbar').click({ position: { x: 2, y: 2 }, force: true });
    await rig.runCommand(page, 'Source Control: Focus on Hand off View');
    const view = await poll(readHandOff, (h) => h.found && h.rows.some((r) => /^Posted: /.test(r.label ?? '')), 20_000);
    await page.mouse.move(5, 500);
    await rig.sleep(300);
    await screenshot('hand-off-posted');
    const receiptRow = view.rows?.find((r) => /^Posted: /.test(r.label ?? ''));
    expect(
      receiptRow?.label === 'Posted: Request changes · 2 comments',
      `after the reload the Hand off view's receipt row is ${JSON.stringify(receiptRow)} (rows ${JSON.stringify(view.rows?.map((r) => r.label))})`,
    );
    const notes = await forge.call('notes', mr);
    expect(notes.filter((n) => !n.position).length === 1 && notes.length === 3, `after the reload the merge request holds ${notes.length} notes, expected still the three posted`);
    // Every GitLab call was bob's, and the token is in no log.
    const all = await gitlabRequests();
    expect(
      all.length > 0 && all.every((r) => r.user === 'bob' && r.status < 400),
      `the forge's GitLab requests: ${JSON.stringify(all.filter((r) => r.user !== 'bob' || r.status >= 400))} were not bob's or failed`,
    );
    const logs = [cs.logFile, ...cs.logsMatching(/\.log$/)].filter((f) => fs.existsSync(f) && fs.readFileSync(f, 'utf8').includes('bob-token'));
    expect(logs.length === 0, `bob's token is written in ${JSON.stringify(logs.map((f) => path.relative(cs.dir, f)))}`);
  });

  // ─── Re-review since the last review on GitLab: alice pushes the same fix to !1 ───
  const glPriorLine = 'Prior review: 1 of 2 resolved';
  let glFixHead = null;
  let glCaptured = null;
  await test(`alice pushes her fix to !1; Refresh and Capture New Head in the preview make it the review's head; Re-review since your last review… from the Hand off row says "${glPriorLine}"`, async () => {
    expect(receiptUrl, 'nothing was posted (see the previous tests)');
    const forgeUrl = new URL(forge.url);
    const aliceClone = path.join(work, 'alice gitlab');
    const gitAsAlice = (args, cwd = aliceClone) =>
      execFileP('git', args, {
        cwd,
        encoding: 'utf8',
        env: {
          ...process.env,
          GIT_TERMINAL_PROMPT: '0',
          GIT_AUTHOR_NAME: 'Alice',
          GIT_AUTHOR_EMAIL: 'alice@example.invalid',
          GIT_COMMITTER_NAME: 'Alice',
          GIT_COMMITTER_EMAIL: 'alice@example.invalid',
        },
      });
    await gitAsAlice(['clone', '--quiet', '--branch', 'feature', `${forgeUrl.protocol}//alice:alice-token@${forgeUrl.host}/${full}.git`, aliceClone], work);
    writeAliceFix(aliceClone);
    await gitAsAlice(['commit', '--quiet', '-am', 'Say why line five changes']);
    await gitAsAlice(['push', '--quiet', 'origin', 'feature']);
    glFixHead = (await gitAsAlice(['rev-parse', 'HEAD'])).stdout.trim();
    const tree = (await gitAsAlice(['rev-parse', 'HEAD^{tree}'])).stdout.trim();
    expect(tree === fixTree, `alice's pushed tree ${tree} is not the fix the re-review's plan was made from (${fixTree})`);
    const live = await forge.call('pullRequest', mr);
    expect(live.diff_refs?.head_sha === glFixHead, `after alice's push the merge request's head is ${live.diff_refs?.head_sha}, expected ${glFixHead}`);

    // The restored preview: Refresh sees the push; Capture New Head makes it the review's head.
    const frame = await previewFrame();
    await frame.locator('[data-testid="preview-refresh"]').click();
    await poll(
      () => readPreview(frame),
      (p) => p.freshness === 'moved',
      20_000,
    );
    await frame.locator('[data-testid="capture-new-head"]').click();
    const fresh = await poll(
      () => readPreview(frame),
      (p) => p.freshness === 'fresh' && (p.bodyRendered ?? '').includes(`Reviewed ${glFixHead.slice(0, 12)}`),
      90_000,
    );
    await screenshot('rereview-new-head-preview');
    expect(
      fresh.freshness === 'fresh' && (fresh.bodyRendered ?? '').includes(`Reviewed ${glFixHead.slice(0, 12)}`),
      `after Capture New Head the preview shows ${JSON.stringify({ freshness: fresh.freshness, body: fresh.bodyRendered?.slice(0, 200), error: fresh.error })}, expected a review of ${glFixHead.slice(0, 12)}`,
    );
    await clearTheView(page);
    await page.locator('.tabs-container .tab', { hasText: 'Rennet · Merge Request !1' }).first().click();
    const headShown = () =>
      board(page)
        .locator('[data-testid="head-id"]')
        .getAttribute('data-full-id', { timeout: 2_000 })
        .catch(() => null);
    await poll(headShown, (h) => h === glFixHead, 60_000);
    glCaptured = await waitForTerminalGeneration(page, { previous: generation?.id ?? null, what: 'after Capture New Head (GitLab)', requestCount: () => models?.requests.length ?? 0 });
    expect(
      (await headShown()) === glFixHead && glCaptured.rail.every((t) => t.state === 'settled'),
      `the board after Capture New Head shows head ${await headShown()} with lanes ${JSON.stringify(glCaptured.rail)}, expected alice's fix ${glFixHead}, settled`,
    );

    await focusHandOff(page);
    const row = page.locator('.part.sidebar .pane .monaco-list-row', { hasText: 'Re-review since your last review…' }).first();
    await row.waitFor({ state: 'visible', timeout: 15_000 });
    const requestsBefore = models.requests.length;
    await row.click();
    const toast = page
      .locator('.notifications-toasts .notification-toast')
      .filter({ hasText: /Rennet: .*Prior review: / })
      .first();
    await toast.waitFor({ state: 'visible', timeout: 180_000 }).catch(async () => {
      const notes = await page
        .locator('.notifications-toasts .notification-toast')
        .allInnerTexts()
        .catch(() => []);
      throw new Error(
        `no "Rennet: … Prior review: …" notification within 180 s of the row's click (notifications ${JSON.stringify(notes)}; model requests since ${JSON.stringify(models.requests.slice(requestsBefore).map((r) => r.seat))})`,
      );
    });
    const said = (await toast.locator('.notification-list-item-message').first().innerText()).replace(/\s+/g, ' ').trim();
    await rig.sleep(300);
    await screenshot('rereview-notification');
    rig.log(`forge-gitlab: re-review notification ${JSON.stringify(said)}`);
    const want = `Rennet: The delta since your review at ${headSha.slice(0, 7)} is reviewed. ${glPriorLine}.`;
    expect(said === want, `the notification says ${JSON.stringify(said)}, expected ${JSON.stringify(want)}`);
    const closure = models.requests.slice(requestsBefore).filter((r) => /^rereview:closures@/.test(r.seat ?? ''));
    expect(
      closure.length === 4 && /^The closures are accepted: 1 of 2 items resolved/.test(closure[3].toolResults?.at(-1) ?? ''),
      `the closure seat's requests were ${JSON.stringify(closure.map((r) => r.seat))}; submit_closures answered ${JSON.stringify(closure[3]?.toolResults?.at(-1))}`,
    );
  });

  await test(`the re-review's board shows Prior items (R1 resolved on the fix's line, R2 open); Request change on the delta's finding; Post → a second body note opening with "${glPriorLine}" and the verdict label, and a discussion on line 5 pinned to alice's head`, async () => {
    expect(glCaptured, 'the re-review did not run (see the previous test)');
    await clearTheView(page);
    await page.locator('.tabs-container .tab', { hasText: 'Rennet · Merge Request !1' }).first().click();
    const rereviewed = await waitForTerminalGeneration(page, { previous: glCaptured.id, what: 'after the re-review (GitLab)', requestCount: () => models?.requests.length ?? 0 });
    expect(
      rereviewed.rail.every((t) => t.state === 'settled'),
      `the re-review's lanes did not settle: ${JSON.stringify(rereviewed.rail)}`,
    );
    await selectLens(page, 'flagged');
    const section = board(page).locator('[data-testid="prior-items"]');
    await section.waitFor({ state: 'visible', timeout: 15_000 });
    await section.scrollIntoViewIfNeeded();
    const prior = await readPriorItems(page);
    await rig.sleep(300);
    await screenshot('rereview-prior-items');
    rig.log(`forge-gitlab: Prior items ${JSON.stringify(prior)}`);
    // The items in GitLab's order of the diff notes (host/forge/gitlab.ts earlierReview), which need not be the posting order.
    const got = (prior.items ?? []).map((i) => ({ id: i.id, closure: i.closure, place: i.where?.replace(/^R\d+ · /, ''), text: i.text, reason: i.reason, evidence: i.evidence.map((e) => e.text) }));
    const gutterItem = got.find((i) => i.place === `src/app.js:${gutterLine}`);
    const findingItem = got.find((i) => i.place === `src/app.js:${plan.flagged[0].end}`);
    expect(
      prior.line === glPriorLine && prior.failure === null && got.length === 2 && JSON.stringify(got.map((i) => i.id).sort()) === '["R1","R2"]',
      `the Prior items read ${JSON.stringify({ line: prior.line, failure: prior.failure, items: got, error: prior.error })}, expected ${glPriorLine} with items R1 and R2`,
    );
    expect(
      gutterItem?.closure === 'resolved' && gutterItem.text === GL_GUTTER_TEXT && gutterItem.reason === CLOSURES.resolved && JSON.stringify(gutterItem.evidence) === '["src/app.js:5"]',
      `bob's gutter comment's item is ${JSON.stringify(gutterItem)}, expected it resolved on src/app.js:5`,
    );
    expect(
      findingItem?.closure === 'open' && (findingItem.text ?? '').includes(FINDINGS[0].title) && findingItem.reason === CLOSURES.openInline && findingItem.evidence.length === 0,
      `the finding's item is ${JSON.stringify(findingItem)}, expected it open with its reason`,
    );

    const finding = board(page).locator('[data-testid="element"][data-kind="finding"]').filter({ hasText: DELTA_FINDING.title }).first();
    await finding.waitFor({ state: 'visible', timeout: 15_000 });
    await finding.scrollIntoViewIfNeeded();
    await finding.locator('[data-testid="finding-request"]').click();
    // With R2's change request, staged again (its item is still open).
    const staged = await poll(stagedCount, (n) => n === 2);
    expect(staged === 2, `after Request change on the delta's finding the board counts ${staged} staged asks, expected 2 (it and R2's, staged again)`);

    await focusHandOff(page);
    await page.locator('.part.sidebar .pane .monaco-list-row', { hasText: 'Preview and post review…' }).first().click();
    const frame = await previewFrame();
    let shown = await poll(
      () => readPreview(frame),
      (p) => p.postArea === 'post' && p.freshness === 'fresh' && p.comments?.length === 1 && p.folded?.length === 1,
      30_000,
    );
    await frame.locator('[data-testid="body-raw-toggle"]').click();
    shown = await poll(
      () => readPreview(frame),
      (p) => p.bodyRaw !== null,
      5_000,
    );
    await rig.sleep(300);
    await screenshot('rereview-preview-raw');
    rig.log(`forge-gitlab: the re-review's preview ${JSON.stringify({ ...shown, text: shown.text?.slice(0, 300) })}`);
    const rawBody = shown.bodyRaw;
    expect(
      JSON.stringify(rawBody?.split('\n').slice(0, 3)) === JSON.stringify([glPriorLine, '', GL_VERDICT_LABEL]),
      `the raw body opens ${JSON.stringify(rawBody?.split('\n').slice(0, 3))}, expected the Prior review line, then GitLab's verdict label`,
    );
    const c = shown.comments[0];
    expect(
      c.path === 'src/app.js' && c.side === 'RIGHT' && c.line === 5 && c.startLine === null && shown.folded[0].reason === 'other-patchset',
      `the preview's comment is ${JSON.stringify(c)} and its folded ask ${JSON.stringify(shown.folded)}, expected line 5 of src/app.js and R2's ask folded (other-patchset)`,
    );
    const notesBefore = await forge.call('notes', mr);

    await frame.locator('[data-testid="post-review"]').click();
    shown = await poll(
      () => readPreview(frame),
      (p) => p.postArea === 'posted' || p.refused !== null,
      60_000,
    );
    await rig.sleep(300);
    await screenshot('rereview-posted');
    rig.log(`forge-gitlab: after the re-review's Post ${JSON.stringify({ postArea: shown.postArea, posted: shown.posted, refused: shown.refused, error: shown.error })}`);
    expect(shown.postArea === 'posted', `after Post the preview shows ${JSON.stringify({ postArea: shown.postArea, refused: shown.refused, error: shown.error })}`);
    const notes = await forge.call('notes', mr);
    const added = notes.filter((n) => !notesBefore.some((b) => b.id === n.id));
    rig.log(
      `forge-gitlab: notes the re-review posted ${JSON.stringify(added.map((n) => ({ id: n.id, type: n.type, author: n.author?.username, position: n.position ?? null, body: n.body.slice(0, 80) })))}`,
    );
    const bodies = added.filter((n) => !n.position);
    const positioned = added.filter((n) => n.position);
    expect(
      bodies.length === 1 && bodies[0].author?.username === 'bob' && bodies[0].body === rawBody && bodies[0].body.split('\n')[0] === glPriorLine,
      `the re-review posted body notes ${JSON.stringify(bodies.map((n) => [n.author?.username, n.body.slice(0, 120)]))}, expected one of bob's equal to the preview's raw body, opening with ${JSON.stringify(glPriorLine)}`,
    );
    const p = positioned[0]?.position;
    expect(
      positioned.length === 1 && p.new_path === 'src/app.js' && p.new_line === 5 && p.head_sha === glFixHead,
      `the re-review posted positioned notes ${JSON.stringify(positioned.map((n) => n.position))}, expected one on src/app.js new line 5 at alice's head ${glFixHead}`,
    );
    // What was posted, as the preview and the Hand off view say it: a change request (the body's verdict label,
    // after the Prior review line), read back from the forge by the review's marker.
    await focusHandOff(page);
    const view = await poll(readHandOff, (h) => h.found && h.rows.some((r) => /^Posted: /.test(r.label ?? '')), 20_000);
    await page.mouse.move(5, 500);
    await rig.sleep(300);
    await screenshot('rereview-hand-off-posted');
    const receipt = view.rows?.find((r) => /^Posted: /.test(r.label ?? ''));
    expect(
      shown.posted?.event === 'REQUEST_CHANGES' && shown.posted.words === 'Posted: Request changes · 1 comment' && receipt?.label === 'Posted: Request changes · 1 comment',
      `the re-review posted Request changes (its body's verdict label reads ${JSON.stringify(bodies[0]?.body.split('\n')[2])}), but the preview says ${JSON.stringify(shown.posted?.words)} and the Hand off view ${JSON.stringify(receipt?.label)}`,
    );
  });

  if (runner.results.slice(first).some((r) => !r.ok)) await printDiagnostics({ label: 'forge-gitlab', cs, models, consoleErrors, forge, surface: 'gitlab' });
  await page?.close().catch(() => {});
  await cs?.stop();
}
