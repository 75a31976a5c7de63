// End-to-end: a hostile repository and hostile model output in a real VS Code (code-server +
// Chromium). Nothing a repository or a model writes may run a command, a script or a request.
//
// The repository (real git, made here): a branch whose name carries `$(terminal)` and `<script>`,
// reviewed against main; changed files, submodules (gitlinks) and binary files whose NAMES carry
// `command:` links (each would open a terminal or type `touch rennet-pwned-<where>` into one),
// `javascript:` links, images pointing at a loopback beacon, `$(codicon)` syntax, HTML with
// `onerror`/`onmouseover`, a newline, U+202E, and `#`, `?` and `%2F` (URI delimiters); file
// CONTENTS with `</style>`, `<script>` and links; one remote, on no forge, whose URL is payloads.
// The boards: Rennet's real pipeline against scripted model servers (test/servers/e2eHostile.ts)
// whose every title, body, claim, finding title/body/remedy and noise group carries the same
// payloads; a payload a board tool refuses is logged by the scenario.
//
// The reviewer then does everything a reviewer does: picks the branch, reads the Hand off view
// (its description, its "Open pull request…" row and tooltip name the branch as written) and
// clicks "Open pull request…" (refused: no forge; the refusal quotes the remote as text), clicks
// every file row, runs Open Changes on every changed file (each must go through: no failed click,
// no error, and the `#`/`?` file opens as itself), clicks every link in every toast and in the
// notification centre (each submodule's "… is a submodule" names it as text), hovers the gutter
// marks of a cited file and clicks every link there (except Rennet's own "Show on board"; the
// claims' payloads read as text), opens the Flagged findings' threads in the editor (each payload
// inert text) and clicks every link in them, and clicks every link on every lens board. Then, each
// its own named test: no terminal (workbench DOM and the pty host's processes), no marker file, no
// script ran in any frame, the beacon got nothing, no dialog (open-external or other) and no new
// browser page, no notification carries a link made of a file name, every file row rendered, Noise
// settled; and the pickers draw `$(…)` as text, a claim's U+202E does not reverse Rennet's own
// "Show on board", and no bidi control draws board or picker text out of order.
// Every act is followed by a look (terminals, markers, frames, beacon): the log ends with the
// phase each effect was first seen after ("events by phase").
//
// Called from run.mjs; `RENNET_E2E_SCENARIOS=hostile` runs only this. Screenshots:
// test/e2e/artifacts/hostile-NN-*.png.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as rig from './rig.mjs';
import {
  LENS_ORDER,
  board,
  dumpDiagnostics,
  editorOf,
  focusHandOff,
  ptyChildren,
  pwnedFrames,
  readHandOff,
  readRail,
  scenarioKit,
  selectLens,
  startBeacon,
  terminalsDrawn,
  visibleLineTops,
  waitForTerminalGeneration,
  watchConsole,
} from './boardPage.mjs';
import { diffHunks, git, initRepo, pngBytes, uncitedHunkCount } from './fixture.mjs';
import { harnessSettings, startModelServers } from './modelServers.mjs';

const { expect } = rig;
const MARKER_PREFIX = 'rennet-pwned';
/** JavaScript payloads cannot write "/" in a file name: build it. */
const JS_SLASH = 'String.fromCharCode(47)';

// ---------------------------------------------------------------------------------------------
// Payloads.

/** A `command:` link that opens a new terminal. */
const cmdNew = (label) => `[${label}](command:workbench.action.terminal.new)`;
/** A `command:` link that types `touch <marker>` and Enter into the active terminal (cwd: the workspace folder). */
const cmdRun = (label, marker) => `[${label}](command:workbench.action.terminal.sendSequence?${encodeURIComponent(JSON.stringify({ text: `touch ${marker}\n` }))})`;
const jsLink = (label) => `[${label}](javascript:self.rennetPwned=1)`;

/** JavaScript that marks the frame it runs in and calls the beacon, without a "/" in its text. */
function jsNoSlash(beacon, tag) {
  return `self.rennetPwned=1;fetch('http:'+${JS_SLASH}+${JS_SLASH}+'127.0.0.1:${beacon}'+${JS_SLASH}+'${tag}')`;
}

/** The payloads model-written text carries, each tagged with where it was written (the beacon path, the marker name). */
function textPayloads(beacon, where) {
  return {
    'command-new': cmdNew('open a shell'),
    'command-run': cmdRun('run this', `${MARKER_PREFIX}-${where}`),
    javascript: jsLink('js link'),
    image: `![i](http://127.0.0.1:${beacon}/img-${where}.png)`,
    'local-link': `[local](http://127.0.0.1:${beacon}/link-${where})`,
    html: `<img src=x onerror="self.rennetPwned=1;fetch('http://127.0.0.1:${beacon}/onerror-${where}')">`,
    codicon: '$(terminal) $(alert)',
    bidi: 'invoice\u202Etxt.exe',
  };
}
const allOf = (p) => Object.values(p).join(' ');
/** Text as a reader sees it: invisible format characters (word joiner, zero-width space/joiners, BOM) dropped. */
const asRead = (text) => (text ?? '').replace(/[\u200B-\u200D\u2060\uFEFF]/g, '');

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
 * Text under `root` that a bidi control (U+202A–U+202E, U+2066–U+2069) it carries draws out of
 * order: a text node holding one, whose following characters land right to left on one line.
 * Runs in the page (self-contained); answers a short sample of each.
 */
function reversedIn(root) {
  const out = [];
  const range = root.ownerDocument.createRange();
  const walker = root.ownerDocument.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const t = n.data;
    const at = t.search(/[\u202A-\u202E\u2066-\u2069]/);
    if (at < 0 || !n.parentElement || n.parentElement.getClientRects().length === 0) continue;
    const boxes = [];
    for (let i = at + 1; i < Math.min(t.length, at + 40); i++) {
      range.setStart(n, i);
      range.setEnd(n, i + 1);
      const r = range.getBoundingClientRect();
      if (r.width > 0 && t[i].trim()) boxes.push({ x: r.x, y: r.y });
    }
    if (boxes.slice(1).some((b, i) => Math.abs(b.y - boxes[i].y) < 2 && b.x < boxes[i].x)) out.push(JSON.stringify(t.slice(Math.max(0, at - 24), at + 24)));
  }
  return out;
}

/**
 * The hostile tree: every name is a single path segment (no "/"), each with a token zqNN that
 * the Open Changes picker can filter on.
 */
function hostileFiles(beacon) {
  const text = (name, content) => ({ kind: 'text', name, content });
  const lines = (tag, n = 8) => Array.from({ length: n }, (_, i) => `${tag} line ${i + 1}`).join('\n') + '\n';
  return [
    text(
      'payload.md',
      [
        '# Payload',
        '</style><style>*{display:none}</style>',
        '<script>self.rennetPwned=1</script>',
        cmdNew('content shell'),
        cmdRun('content run', `${MARKER_PREFIX}-content`),
        jsLink('content js'),
        `![i](http://127.0.0.1:${beacon}/img-content.png)`,
        `<img src=x onerror="self.rennetPwned=1;fetch('http://127.0.0.1:${beacon}/onerror-content')">`,
        '$(terminal) $(alert) invoice\u202Etxt.exe',
        'last line',
      ].join('\n') + '\n',
    ),
    text(`zq10 ${cmdRun('run', `${MARKER_PREFIX}-name-txt`)}.txt`, lines('zq10')),
    text('zq11 $(terminal) $(alert) open.txt', lines('zq11')),
    text(`zq12 <img src=x onerror="${jsNoSlash(beacon, 'onerror-name')}">.txt`, lines('zq12')),
    text('zq13 " onmouseover="self.rennetPwned=1" x=".txt', lines('zq13')),
    text('zq14 evil\nname.txt', lines('zq14')),
    text('zq15 invoice\u202Etxt.exe', lines('zq15')),
    text(`zq16 ${jsLink('x')}.txt`, lines('zq16')),
    text(`zq17 ![i](http:127.0.0.1:${beacon}).txt`, lines('zq17')),
    // URI delimiters in a name: a workspace or rennet-blob: URI that does not encode them opens another file (or none).
    text(HASH_NAME, lines('zq18')),
    { kind: 'submodule', name: `zq01 ${cmdNew('term')}` },
    { kind: 'submodule', name: `zq02 ${cmdRun('run', `${MARKER_PREFIX}-name-sub`)}` },
    { kind: 'submodule', name: `zq03 ${jsLink('x')} $(terminal) ![i](http:127.0.0.1:${beacon})` },
    { kind: 'binary', name: `zq04 ${cmdRun('run', `${MARKER_PREFIX}-name-bin`)}.png` },
    { kind: 'binary', name: `zq05 $(alert) ${jsLink('x')} ![i](http:127.0.0.1:${beacon}).png` },
    { kind: 'binary', name: `zq06 ${cmdNew('shell')}.png` },
    // A committed symlink to a file outside the repository: the board must not open what it points at.
    { kind: 'symlink', name: LINK_NAME },
  ];
}

const BRANCH = 'feat/$(terminal)<script>self.rennetPwned=1</script>';
/** A file whose name carries `#`, `?` and an encoded slash. */
const HASH_NAME = 'zq18 a#b?c%2F.txt';
/** A committed symlink, and the file outside the repository it points at (beside the repository, in the scenario's temp folder). */
const LINK_NAME = 'zq19 outside-link.txt';
const OUTSIDE_NAME = 'outside-the-repository.txt';
const OUTSIDE_TEXT = 'zq19 a secret outside the repository';
/**
 * The hostile repository's one remote: no forge, and a URL no forge parser reads, made of payloads
 * (a refusal that quotes it must show it as text). Never fetched or pushed.
 */
const REMOTE_URL = `[run](command:workbench.action.terminal.new) $(terminal) <img src=x onerror="self.rennetPwned=1">`;

function makeHostileRepo(dir, beacon) {
  initRepo(dir);
  fs.writeFileSync(path.join(dir, 'README.md'), '# Hostile\n\nA repository whose names and contents attack the reviewer.\n');
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-q', '-m', 'initial']);
  const mainSha = git(dir, ['rev-parse', 'HEAD']).trim();
  git(dir, ['checkout', '-q', '-b', BRANCH]);
  const files = hostileFiles(beacon);
  let seed = 0;
  for (const f of files) {
    if (f.kind === 'text') fs.writeFileSync(path.join(dir, f.name), f.content);
    if (f.kind === 'binary') fs.writeFileSync(path.join(dir, f.name), pngBytes(++seed, 256));
    if (f.kind === 'symlink') {
      const outside = path.join(path.dirname(dir), OUTSIDE_NAME);
      fs.writeFileSync(outside, `${OUTSIDE_TEXT}\n`);
      fs.symlinkSync(outside, path.join(dir, f.name));
    }
  }
  git(dir, ['add', '-A']);
  for (const f of files.filter((x) => x.kind === 'submodule')) {
    git(dir, ['update-index', '--add', '--cacheinfo', `160000,${mainSha},${f.name}`]);
    fs.mkdirSync(path.join(dir, f.name), { recursive: true });
  }
  git(dir, ['commit', '-q', '-m', 'hostile names and contents']);
  git(dir, ['remote', 'add', 'origin', REMOTE_URL]);
  return files;
}

// ---------------------------------------------------------------------------------------------
// The scripted seats: every authored string carries the payloads.

function seatScripts({ beacon, plan }) {
  const cite = (r, as, label) => ({ tool: 'cite', input: { path: r.path, side: 'head', start_line: r.start, end_line: r.end, ...(label ? { label } : {}) }, as });
  const docCalls = (lens, p) => [
    { tool: 'set_document', input: { title: `${lens} of the hostile change`, intro_markdown: 'The change adds files with hostile names. Nothing here may run.' } },
    { tool: 'set_document', input: { title: `${lens} ${allOf(p)}`, intro_markdown: allOf(p) } },
  ];
  /** One prose element per payload under `$s`, so a refusal loses only that one. */
  const proseEach = (p) => Object.entries(p).map(([k, v]) => ({ tool: 'add_prose', input: { markdown: `Payload ${k}: ${v}`, parent_id: '$s' } }));

  const design = textPayloads(beacon, 'design');
  const sequence = textPayloads(beacon, 'sequence');
  const decisions = textPayloads(beacon, 'decisions');
  const flagged = textPayloads(beacon, 'flagged');
  const noise = textPayloads(beacon, 'noise');
  const review = textPayloads(beacon, 'review');

  return {
    'design:drafter': [
      ...docCalls('Design', design),
      { tool: 'add_section', input: { title: 'Overview', body_markdown: 'The change adds files with hostile names.' }, as: 's' },
      cite(plan.design[0], 'c0', 'added line'),
      cite(plan.design[0], 'cp', `label ${allOf(design)}`),
      { tool: 'add_section', input: { title: `Section ${allOf(design)}`, body_markdown: allOf(design) } },
      ...Object.entries(design).map(([k, v]) => ({ tool: 'add_section', input: { title: `Section ${k} ${v}`, body_markdown: `Body ${k}: ${v}` } })),
      ...proseEach(design),
      { tool: 'add_callout', input: { tone: 'warning', markdown: allOf(design), parent_id: '$s' } },
      { tool: 'finish' },
    ],
    'sequence:drafter': [
      ...docCalls('Sequence', sequence),
      { tool: 'add_section', input: { title: 'Walkthrough', body_markdown: 'Read the added lines in order.' }, as: 's' },
      ...plan.sequence.map((r, i) => cite(r, `c${i}`)),
      cite(plan.sequence[0], 'cp', `label ${allOf(sequence)}`),
      // The claims of the gutter hover: step titles.
      { tool: 'add_order_step', input: { title: `Step ${allOf(sequence)}`, explanation_markdown: allOf(sequence), span: '$c0', parent_id: '$s' } },
      ...Object.entries(sequence).map(([k, v]) => ({ tool: 'add_order_step', input: { title: `Step ${k} ${v}`, explanation_markdown: `Explained ${k}: ${v}`, span: '$c0', parent_id: '$s' } })),
      { tool: 'add_order_step', input: { title: 'Step on the label', explanation_markdown: 'The labelled citation.', span: '$cp', parent_id: '$s' } },
      ...plan.sequence.map((_, i) => ({
        tool: 'add_order_step',
        input: { title: `Plain step ${i + 1}`, explanation_markdown: 'The added line is what callers now read.', span: `$c${i}`, parent_id: '$s' },
      })),
      ...proseEach(sequence),
      { tool: 'finish' },
    ],
    'decisions:drafter': [
      ...docCalls('Decisions', decisions),
      { tool: 'add_section', input: { title: 'Naming', body_markdown: 'One naming call shapes the change.' }, as: 's' },
      cite(plan.decisions[0], 'c0'),
      {
        tool: 'add_decision',
        input: { title: `Decision ${allOf(decisions)}`, statement: allOf(decisions), rationale: allOf(decisions), alternatives: Object.values(decisions), evidence: ['$c0'], parent_id: '$s' },
      },
      ...Object.entries(decisions).map(([k, v]) => ({
        tool: 'add_decision',
        input: { title: `Decision ${k} ${v}`, statement: `Stated ${k}: ${v}`, rationale: `Because ${k}: ${v}`, alternatives: [`Instead ${k}: ${v}`], evidence: ['$c0'], parent_id: '$s' },
      })),
      {
        tool: 'add_decision',
        input: {
          title: 'Keep the names',
          statement: 'Files keep the names they were given.',
          rationale: 'Renaming is out of scope.',
          alternatives: ['Rename them.'],
          evidence: ['$c0'],
          parent_id: '$s',
        },
      },
      ...proseEach(decisions),
      { tool: 'finish' },
    ],
    'flagged:reviewer': [{ tool: 'submit_findings', input: { findings_markdown: `# Findings\n\n- ${plan.flagged[0].path}:${plan.flagged[0].start} ${allOf(review)}\n` } }],
    'flagged:compiler': [
      ...docCalls('Flagged', flagged),
      { tool: 'add_section', input: { title: 'Correctness', body_markdown: 'Places where the names may hurt.' }, as: 's' },
      cite(plan.flagged[0], 'c0'),
      ...[['all', allOf(flagged)], ...Object.entries(flagged)].map(([k, v]) => ({
        tool: 'add_finding',
        input: {
          severity: 'minor',
          category: 'correctness',
          title: `Finding ${k} ${v}`,
          body_markdown: `Body ${k}: ${v}`,
          remedy_markdown: `Remedy ${k}: ${v}`,
          anchor: ['$c0'],
          parent_id: '$s',
          origin: 'claude',
          agreement: 'solo',
          score: 70,
        },
      })),
      {
        tool: 'add_finding',
        input: {
          severity: 'minor',
          category: 'correctness',
          title: 'The names are not checked',
          body_markdown: 'A name can carry markup.',
          remedy_markdown: 'Show names as text.',
          anchor: ['$c0'],
          parent_id: '$s',
          origin: 'claude',
          agreement: 'solo',
          score: 70,
        },
      },
      ...proseEach(flagged),
      { tool: 'finish' },
    ],
    'noise:drafter': [
      ...docCalls('Noise', noise),
      { tool: 'add_noise_group', input: { title: 'Files', reason: 'Added files with fixed contents.' }, as: 'g' },
      ...Array.from({ length: plan.noiseMembers }, (_, i) => ({ tool: 'update_noise_member', input: { id: `e${i + 1}`, parent_id: '$g' } })),
      { tool: 'add_noise_group', input: { title: `Group ${allOf(noise)}`, reason: allOf(noise) }, as: 'gp' },
      ...(plan.noiseMembers > 1 ? [{ tool: 'update_noise_member', input: { id: 'e1', parent_id: '$gp' } }] : []),
      { tool: 'finish' },
    ],
  };
}

/** Which lines each lens cites (every text file was added: one hunk each). */
function hostilePlan(hunks) {
  const file = (p) => {
    const f = hunks.get(p);
    if (!f) throw new Error(`hostile fixture: git shows no hunks for ${JSON.stringify(p)}; it shows ${JSON.stringify([...hunks.keys()])}`);
    return f;
  };
  const head = (p, start, end) => {
    const h = file(p).hunks[0];
    return { path: p, side: 'head', start: Math.max(start, h.newStart), end: Math.min(end, h.newStart + h.newLines - 1) };
  };
  const named = (token) => {
    const p = [...hunks.keys()].find((k) => k.startsWith(token));
    if (!p) throw new Error(`hostile fixture: no text file starting with ${token}`);
    return p;
  };
  const commandFile = named('zq10 ');
  const codiconFile = named('zq11 ');
  const htmlFile = named('zq13 ');
  const plan = {
    design: [head('payload.md', 1, 4)],
    sequence: [head(commandFile, 1, 3), head(codiconFile, 2, 4)],
    decisions: [head(htmlFile, 1, 2)],
    flagged: [head(commandFile, 2, 3)],
    noiseMembers: 0,
  };
  plan.noiseMembers = uncitedHunkCount(hunks, [...plan.design, ...plan.sequence, ...plan.decisions, ...plan.flagged]);
  return plan;
}

// ---------------------------------------------------------------------------------------------

/**
 * What the board tools answered to each scripted call: request n+1 of a seat's conversation resends
 * the result of call n. Answers one row per call whose result says "refused" (or names an error).
 */
export function refusalsOf(requests, seats) {
  const out = [];
  const seen = new Set();
  for (const r of requests) {
    const m = /^(.*)@(\d+)$/.exec(r.seat ?? '');
    if (!m) continue;
    const seat = m[1];
    const n = Number(m[2]);
    if (n === 0) continue;
    const key = `${seat}@${n}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const result = (r.toolResults ?? []).at(-1) ?? '';
    const call = seats[seat]?.[n - 1];
    if (/refused|unknown tool|not a tool|error/i.test(result.slice(0, 200))) out.push({ seat, call: call ? { tool: call.tool, input: call.input } : null, result: result.slice(0, 400) });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

export async function runHostile({ paths, vsix, runner, browser }) {
  let page = null;
  let context = null;
  let cs = null;
  let models = null;
  const consoleErrors = [];
  const { screenshot, test } = scenarioKit({ label: 'hostile', runner, page: () => page });
  const state = { phase: 'setup' };
  /** Facts seen along the way: the phase each first appeared in. */
  const events = [];
  const popups = [];
  const dialogs = [];
  /** Every link found in a notification or toast: {where, message, text, href}. */
  const notificationLinks = [];
  const clicked = [];
  /** Text a U+202E (or another bidi control) it carries draws out of order: {where, sample}. */
  const reversedText = [];

  // --- What the attack would leave behind ----------------------------------------------------

  let repo = null;
  const markerDirs = () => [...new Set([repo, rig.ROOT, os.homedir(), cs?.dir, path.dirname(repo ?? os.tmpdir())].filter(Boolean))];
  function markers() {
    const found = [];
    for (const d of markerDirs()) {
      let names = [];
      try {
        names = fs.readdirSync(d);
      } catch {}
      for (const n of names) if (n.startsWith(MARKER_PREFIX)) found.push(path.join(d, n));
    }
    return found;
  }

  const terminals = () => terminalsDrawn(page);
  const terminalCount = (t) => Math.max(t.xterms, t.wrappers, t.tabs, t.editorTabs);

  const pwned = () => pwnedFrames(context?.pages() ?? [], page);

  const seen = { terminals: 0, markers: new Set(), pwned: 0, hits: 0 };
  /** After every act: what changed (a terminal, a marker, a script, a beacon request), and in which phase. */
  async function observe(phase) {
    state.phase = phase;
    await rig.sleep(150);
    await handleDialogs(phase);
    const t = Math.max(terminalCount(await terminals()), ptyChildren(cs).length);
    if (t > seen.terminals) events.push({ phase, what: `terminal count ${seen.terminals} → ${t}` });
    seen.terminals = Math.max(seen.terminals, t);
    for (const m of markers()) {
      if (!seen.markers.has(m)) events.push({ phase, what: `marker file ${m}` });
      seen.markers.add(m);
    }
    const pw = await pwned();
    if (pw.length > seen.pwned) events.push({ phase, what: `rennetPwned set in ${JSON.stringify(pw)}` });
    seen.pwned = Math.max(seen.pwned, pw.length);
    if (beacon.hits.length > seen.hits) events.push({ phase, what: `beacon ${JSON.stringify(beacon.hits.slice(seen.hits).map((h) => h.url))}` });
    seen.hits = beacon.hits.length;
  }

  /** A workbench dialog (e.g. "open the external website?") is recorded and declined. */
  async function handleDialogs(phase) {
    for (let i = 0; i < 3; i++) {
      const box = page.locator('.monaco-dialog-box').filter({ visible: true }).first();
      if (!(await box.isVisible().catch(() => false))) return;
      const text = (await box.innerText().catch(() => '')).replace(/\s+/g, ' ').trim();
      dialogs.push({ phase, text: text.slice(0, 300) });
      rig.log(`hostile: dialog during ${phase}: ${JSON.stringify(text.slice(0, 200))} — declined`);
      const cancel = box.locator('.monaco-button', { hasText: /^(Cancel|No|Close)$/ }).first();
      if (await cancel.isVisible().catch(() => false)) await cancel.click().catch(() => {});
      else await page.keyboard.press('Escape');
      await rig.sleep(200);
    }
  }

  // --- Workbench helpers ---------------------------------------------------------------------

  /** The board's tab in front (Open Changes opens its diffs in the board's group). */
  async function showBoard() {
    await page.keyboard.press('Escape');
    await page
      .locator('.tabs-container .tab', { has: page.locator('.label-name', { hasText: /^Rennet · / }) })
      .first()
      .click();
    await board(page).locator('[data-testid="patchset-header"]').waitFor({ state: 'visible', timeout: 15_000 });
  }

  /** The rows of the visible QuickPick: text, and the codicons drawn inside each. */
  async function quickPickRows() {
    return page.locator('.quick-input-widget .monaco-list-row').evaluateAll((rows) =>
      rows.map((r) => ({
        text: r.textContent,
        label: r.querySelector('.label-name')?.textContent ?? null,
        icons: [...r.querySelectorAll('.codicon')].map((c) => [...c.classList].find((k) => k.startsWith('codicon-')) ?? 'codicon'),
        index: Number(r.getAttribute('data-index')),
      })),
    );
  }

  /** Links inside visible toasts (or the notification centre), each with its message. */
  async function notificationAnchors(scope) {
    const sel = scope === 'toast' ? '.notifications-toasts .notification-toast' : '.notifications-center .notification-list-item';
    return page.locator(sel).evaluateAll((items) =>
      items
        .filter((n) => n.offsetParent !== null)
        .map((n, i) => ({
          index: i,
          message: (n.querySelector('.notification-list-item-message')?.textContent ?? n.textContent).slice(0, 300),
          // The message's links only (the toolbar's actions are anchors too).
          links: [...n.querySelectorAll('.notification-list-item-message a')].map((a) => ({ text: a.textContent, href: a.getAttribute('href') ?? a.getAttribute('data-href') ?? '' })),
        })),
    );
  }

  /** Click every link in every visible toast; each click is observed. */
  async function clickToastLinks(phase) {
    await rig.sleep(400);
    for (let round = 0; round < 20; round++) {
      const toasts = await notificationAnchors('toast').catch(() => []);
      let did = false;
      for (const t of toasts) {
        for (let li = 0; li < t.links.length; li++) {
          const key = `toast|${t.message}|${li}`;
          if (clicked.includes(key)) continue;
          clicked.push(key);
          notificationLinks.push({ where: 'toast', message: t.message, ...t.links[li] });
          const link = page.locator('.notifications-toasts .notification-toast').filter({ visible: true }).nth(t.index).locator('.notification-list-item-message a').nth(li);
          rig.log(`hostile: clicking toast link ${JSON.stringify(t.links[li])} in ${JSON.stringify(t.message.slice(0, 120))}`);
          await link.click({ timeout: 3_000 }).catch((e) => rig.log(`hostile: toast link click: ${e.message.split('\n')[0]}`));
          await observe(`${phase}: toast link ${t.links[li].text}`);
          did = true;
          break;
        }
        if (did) break;
      }
      if (!did) return;
    }
  }

  async function lineBox(editor, line) {
    const tops = await visibleLineTops(editor);
    if (!(line in tops)) return null;
    return editor.locator('.view-lines .view-line').evaluateAll((els, top) => {
      const el = els.find((e) => Math.abs(parseFloat(e.style.top) - top) < 2);
      const span = el?.querySelector('span');
      const r = (span ?? el)?.getBoundingClientRect();
      return r ? { x: r.x + Math.min(20, r.width / 2), y: r.y + r.height / 2 } : null;
    }, tops[line]);
  }

  // --- The scenario --------------------------------------------------------------------------

  const first = runner.results.length;
  const work = rig.mkTmp('rennet-hostile-');
  const beacon = await startBeacon(state);
  repo = path.join(work, 'hostile repo');
  const files = makeHostileRepo(repo, beacon.port);
  const mergeBase = git(repo, ['merge-base', 'main', BRANCH]).trim();
  const gitNames = git(repo, ['diff', '--name-only', '-z', '--no-renames', mergeBase, BRANCH]).split('\0').filter(Boolean);
  const hunks = diffHunks(repo, { base: 'main', head: BRANCH });
  const plan = hostilePlan(hunks);
  const seats = seatScripts({ beacon: beacon.port, plan });
  rig.log(`hostile: repository ${repo}; branch ${JSON.stringify(BRANCH)}; beacon 127.0.0.1:${beacon.port}`);
  rig.log(`hostile: git names ${gitNames.length} changed files: ${JSON.stringify(gitNames)}`);
  rig.log(`hostile: plan ${JSON.stringify(plan)}`);
  expect(gitNames.length === files.length, `fixture: git names ${gitNames.length} changed files, the fixture wrote ${files.length}`);
  for (const m of markers()) {
    rig.log(`hostile: removing a marker left by an earlier run: ${m}`);
    fs.rmSync(m, { force: true, recursive: true });
  }

  await test('the model servers answer on 127.0.0.1 and the workbench opens the hostile repository', async () => {
    models = await startModelServers({ script: 'e2eHostile.ts', plan: { seats }, dir: work, label: 'hostile' });
    cs = await rig.startCodeServer({
      paths,
      name: 'hostile',
      vsixes: [vsix],
      settings: {
        ...harnessSettings(models),
        'rennet.editor.findingThreads': true,
        'javascript.validate.enable': false,
        'workbench.editor.enablePreview': true,
      },
    });
    context = await browser.newContext({ viewport: { width: 1600, height: 1000 } });
    page = await context.newPage();
    context.on('page', (p) => {
      const entry = { phase: state.phase, url: p.url() };
      popups.push(entry);
      p.on('framenavigated', (f) => {
        if (f === p.mainFrame()) entry.url = f.url();
      });
      rig.log(`hostile: a new browser page opened during ${state.phase}`);
    });
    page.on('dialog', (d) => {
      dialogs.push({ phase: state.phase, text: `browser ${d.type()}: ${d.message()}` });
      d.dismiss().catch(() => {});
    });
    watchConsole(page, consoleErrors);
    await rig.openWorkbench(page, cs, repo);
    await page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'payload.md' }).first().waitFor({ timeout: 30_000 });
    await screenshot('workbench');
    await observe('workbench opened');
  });

  let branchRows = [];
  await test('Review Branch: the branch QuickPick shows "$(terminal)" literally, not as an icon', async () => {
    expect(page, 'the workbench did not open (see the previous test)');
    state.phase = 'Review Branch';
    await rig.runCommand(page, 'Rennet: Review Branch');
    await rig.waitForQuickPick(page, 'Branch to review');
    await rig.sleep(300);
    branchRows = await quickPickRows();
    await screenshot('pick-branch');
    rig.log(`hostile: branch rows ${JSON.stringify(branchRows)}`);
    const row = branchRows.find((r) => (r.text ?? '').includes('rennetPwned'));
    // Pick it whatever the outcome: the rest of the scenario reviews that branch.
    if (row) await page.locator(`.quick-input-widget .monaco-list-row[data-index="${row.index}"]`).click();
    expect(row, `the branch QuickPick offers no row for ${JSON.stringify(BRANCH)}: ${JSON.stringify(branchRows)}`);
    const iconed = branchRows.filter((r) => r.icons.some((i) => i === 'codicon-terminal' || i === 'codicon-alert'));
    expect(
      iconed.length === 0 && asRead(row.label).includes('$(terminal)'),
      `the branch QuickPick renders the branch name's "$(terminal)" as an icon: rows ${JSON.stringify(iconed.length ? iconed : [row])} (label text ${JSON.stringify(row.label)}, expected it to read "$(terminal)")`,
    );
  });

  let generation = null;
  await test('the review opens against main and the five lenses end; Noise settles (not failed)', async () => {
    expect(page, 'the workbench did not open');
    state.phase = 'Review Branch: base';
    await rig.waitForQuickPick(page, 'Base to compare with', { timeout: 15_000 });
    await rig.pickQuickPick(page, 'Base to compare with', 'main');
    await page
      .locator('.tabs-container .tab .label-name', { hasText: /^Rennet · / })
      .first()
      .waitFor({ timeout: 90_000 });
    await board(page).locator('[data-testid="patchset-header"]').waitFor({ state: 'visible', timeout: 90_000 });
    await screenshot('board-opened');
    generation = await waitForTerminalGeneration(page, { what: 'after Review Branch', requestCount: () => models?.requests.length ?? 0 });
    await rig.sleep(300);
    await screenshot('rail-terminal');
    const refused = refusalsOf(models.requests, seats);
    const bySeat = {};
    for (const r of models.requests) if (r.seat) bySeat[r.seat.replace(/@\d+$/, '')] = (bySeat[r.seat.replace(/@\d+$/, '')] ?? 0) + 1;
    rig.log(
      `hostile: model requests per seat ${JSON.stringify(bySeat)}; a sample tool result: ${JSON.stringify(
        models.requests
          .find((r) => r.seat === 'sequence:drafter@5')
          ?.toolResults?.at(-1)
          ?.slice(0, 300) ?? null,
      )}`,
    );
    rig.log(`hostile: rail ${JSON.stringify(generation.rail)}`);
    rig.log(`hostile: ${refused.length} scripted call(s) refused or failed by the board tools:`);
    for (const r of refused) rig.log(`hostile:   ${r.seat} ${JSON.stringify(r.call)?.slice(0, 260)} → ${JSON.stringify(r.result.slice(0, 300))}`);
    const unresolved = models.requests.filter((r) => r.unresolved?.length);
    if (unresolved.length) rig.log(`hostile: calls with unresolved ids (naming a refused element): ${JSON.stringify(unresolved.map((r) => `${r.seat}: ${r.unresolved.join(',')}`))}`);
    await observe('lenses drafted');
    const noise = generation.rail.find((t) => t.lens === 'noise');
    const notSettled = generation.rail.filter((t) => t.state !== 'settled');
    expect(JSON.stringify(generation.rail.map((t) => t.lens)) === JSON.stringify(LENS_ORDER), `the rail shows ${JSON.stringify(generation.rail.map((t) => t.lens))}`);
    expect(noise?.state === 'settled', `Noise is ${JSON.stringify(noise)}, expected settled (rail ${JSON.stringify(generation.rail)})`);
    expect(notSettled.length === 0, `every lens should settle on the scripted models; not settled: ${JSON.stringify(notSettled)}`);
  });

  let handOff = null;
  await test('the Hand off view (Source Control) reads the branch "$(terminal)<script>…" literally in its description, its "Open pull request…" row and that row\'s tooltip: no icon, no link', async () => {
    expect(generation, 'the review did not open (see the previous test)');
    state.phase = 'Hand off view';
    await focusHandOff(page);
    handOff = await poll(
      () => readHandOff(page),
      (h) => h.found && h.rows.some((r) => r.label === 'Open pull request…'),
      20_000,
    );
    await page.mouse.move(5, 500);
    await rig.sleep(300);
    await screenshot('hand-off');
    await observe('Hand off view');
    rig.log(`hostile: hand off ${JSON.stringify(handOff)}`);
    expect(handOff.found, `no Hand off pane in Source Control: ${JSON.stringify(handOff)}`);
    const row = handOff.rows.find((r) => r.label === 'Open pull request…');
    expect(row, `the Hand off view offers no "Open pull request…" row: ${JSON.stringify(handOff.rows)}`);
    // No codicon in the pane is a payload's: Rennet's own icons are named in extension/handOffPlan.ts, none is a terminal or an alert.
    const payloadIcons = handOff.bodyIcons.filter((i) => i === 'codicon-terminal' || i === 'codicon-alert');
    expect(payloadIcons.length === 0, `the Hand off pane draws ${JSON.stringify(payloadIcons)} (icons ${JSON.stringify(handOff.bodyIcons)}): "$(terminal)" of the branch name rendered as an icon`);
    expect(asRead(handOff.description).includes(BRANCH), `the view's description reads ${JSON.stringify(handOff.description)}, expected the branch ${JSON.stringify(BRANCH)} as written`);
    expect(asRead(row.description) === `${BRANCH} → main`, `the "Open pull request…" row's description reads ${JSON.stringify(row.description)}, expected ${JSON.stringify(`${BRANCH} → main`)}`);
    expect(handOff.targets.length === 0, `the Hand off pane renders links: ${JSON.stringify(handOff.targets)}`);

    // The row's tooltip (plain text) names the branch as written.
    const label = page.locator('.part.sidebar .pane .monaco-list-row').filter({ hasText: 'Open pull request…' }).first().locator('.monaco-icon-label').first();
    const box = await label.boundingBox();
    expect(box, 'the "Open pull request…" row is not drawn');
    await page.mouse.move(box.x + 40, box.y + box.height / 2, { steps: 4 });
    const tip = page.locator('.monaco-hover, .workbench-hover').filter({ visible: true }).first();
    const tooltip = await tip.waitFor({ state: 'visible', timeout: 10_000 }).then(
      () =>
        tip.evaluate((h) => ({
          text: h.textContent.replace(/\s+/g, ' ').trim(),
          links: [...h.querySelectorAll('a')].map((a) => a.getAttribute('href') ?? a.getAttribute('data-href')),
          icons: [...h.querySelectorAll('.codicon:not(.hover-copy-button)')].map((c) => c.className),
          images: h.querySelectorAll('img').length,
        })),
      () => null,
    );
    await screenshot('hand-off-tooltip');
    await observe('Hand off: "Open pull request…" tooltip');
    await page.mouse.move(5, 500);
    rig.log(`hostile: the "Open pull request…" tooltip ${JSON.stringify(tooltip)}`);
    expect(tooltip, 'hovering the "Open pull request…" row showed no tooltip');
    expect(asRead(tooltip.text).includes(`Push ${BRANCH} and open`), `the tooltip reads ${JSON.stringify(tooltip.text)}, expected "Push ${BRANCH} and open…" as written`);
    expect(
      tooltip.links.length === 0 && tooltip.icons.length === 0 && tooltip.images === 0,
      `the tooltip draws links ${JSON.stringify(tooltip.links)}, icons ${JSON.stringify(tooltip.icons)}, ${tooltip.images} image(s)`,
    );
  });

  await test('"Open pull request…" with no forge: refused in a notification that quotes the payload remote as text (no link); every link in it clicked', async () => {
    expect(handOff?.found, 'the Hand off view was not read (see the previous test)');
    await page.locator('.part.sidebar .pane .monaco-list-row').filter({ hasText: 'Open pull request…' }).first().locator('.label-name').click();
    await observe('Hand off: "Open pull request…" clicked');
    const toast = page
      .locator('.notifications-toasts .notification-toast')
      .filter({ hasText: /Rennet could not/ })
      .first();
    const shown = await toast.waitFor({ state: 'visible', timeout: 60_000 }).then(
      () => true,
      () => false,
    );
    const toasts = await notificationAnchors('toast').catch(() => []);
    await rig.sleep(300);
    await screenshot('open-pr-refused');
    rig.log(`hostile: after "Open pull request…": ${JSON.stringify(toasts)}`);
    await clickToastLinks('Hand off: "Open pull request…" refusal');
    await observe('Hand off: "Open pull request…" refusal');
    expect(shown, `no "Rennet could not …" notification after "Open pull request…" (toasts ${JSON.stringify(toasts)})`);
    const refusal = toasts.find((t) => /^Rennet could not/.test(t.message));
    expect(refusal, `no refusal among the toasts ${JSON.stringify(toasts)}`);
    expect(asRead(refusal.message).includes(REMOTE_URL), `the refusal reads ${JSON.stringify(refusal.message)}, expected it to quote the remote ${JSON.stringify(REMOTE_URL)} as written`);
    expect(refusal.links.length === 0, `the refusal renders links: ${JSON.stringify(refusal.links)}`);
    // Read and clicked: cleared, so the row clicks that follow are judged by what they show, not by this toast.
    await rig.runCommand(page, 'Notifications: Clear All Notifications');
  });

  let rows = [];
  await test('every changed file git names is a file row on the board', async () => {
    expect(generation, 'the review did not open (see the previous test)');
    rows = await board(page)
      .locator('[data-testid="file-row"]')
      .evaluateAll((els) => els.map((e) => ({ path: e.getAttribute('data-path'), text: e.textContent })));
    await board(page)
      .locator('[data-testid="file-list"]')
      .scrollIntoViewIfNeeded()
      .catch(() => {});
    await screenshot('file-rows');
    const shown = new Set(rows.map((r) => r.path));
    const missing = gitNames.filter((n) => !shown.has(n));
    const extra = rows.filter((r) => !gitNames.includes(r.path));
    rig.log(`hostile: ${rows.length} file rows: ${JSON.stringify(rows.map((r) => r.path))}`);
    expect(
      missing.length === 0 && extra.length === 0 && rows.length === gitNames.length,
      `file rows disagree with git diff --name-only: missing ${JSON.stringify(missing)}, extra ${JSON.stringify(extra.map((r) => r.path))} (${rows.length} rows, git names ${gitNames.length})`,
    );
  });

  /** Acts that did not go through: a row click or an Open Changes pick that failed, or made the board or a notification say so. */
  const actFailures = [];
  /** What the editor showed after a row click (`row`: the `#`/`?` file, `link`: the symlink) and Open Changes (`diff`: the `#`/`?` file): {label, uri, text}. */
  const opened = {};

  /** The board's error banner, dismissed once read (null when none shows). */
  async function boardError() {
    const banner = board(page).locator('[data-testid="error-banner"]');
    if (!(await banner.isVisible().catch(() => false))) return null;
    const message = (
      await banner
        .locator('[data-testid="error-message"]')
        .innerText()
        .catch(() => '')
    ).trim();
    await banner
      .locator('[data-testid="dismiss-error"]')
      .click({ timeout: 2_000 })
      .catch(() => {});
    return message || '(an error banner without a message)';
  }

  /** Rennet's failure toasts showing now ("could not", "failed"), by message; `before` (toasts shown before the act) left out. */
  async function failureToasts(before = []) {
    const toasts = await notificationAnchors('toast').catch(() => []);
    return toasts.map((t) => t.message).filter((m) => /^Rennet could not|failed:/.test(m) && !before.includes(m));
  }
  const toastsNow = async () => (await notificationAnchors('toast').catch(() => [])).map((t) => t.message);

  /** The editor in front (the group right of the board): its tab's label, its document URI and its text. */
  async function activeEditor() {
    const label = await page
      .locator('.part.editor .tabs-container .tab.active .label-name')
      .last()
      .innerText({ timeout: 1_000 })
      .catch(() => null);
    const editor = editorOf(page);
    const uri = await editor.getAttribute('data-uri', { timeout: 1_000 }).catch(() => null);
    // Every .view-lines of the editor (an inline diff draws its removed side in view zones of its own); Monaco draws spaces as U+00A0.
    const text = await editor
      .locator('.view-lines')
      .evaluateAll((els) => els.map((e) => e.innerText).join('\n'))
      .then(
        (t) => t.replace(/\u00a0/g, ' '),
        () => null,
      );
    return { label, uri, text };
  }

  /** The decoded path of a document URI (before its query), or null. */
  const uriPath = (uri) => {
    if (!uri) return null;
    try {
      return decodeURIComponent(uri.replace(/^[a-z-]+:(\/\/[^/]*)?/i, '').split('?')[0]);
    } catch {
      return null;
    }
  };

  await test('clicking every file row (text, submodule, binary) runs nothing; every toast link clicked', async () => {
    expect(generation, 'the review did not open');
    await showBoard();
    const count = await board(page).locator('[data-testid="file-row"]').count();
    for (let i = 0; i < count; i++) {
      const row = board(page).locator('[data-testid="file-row"]').nth(i);
      const p = await row.getAttribute('data-path').catch(() => null);
      const act = `file row ${JSON.stringify(p ?? `#${i}`)}`;
      const before = await toastsNow();
      const failed = await row
        .locator('[data-testid="open-file"]')
        .click({ timeout: 10_000 })
        .then(
          () => null,
          (e) => e.message.split('\n')[0],
        );
      if (failed) actFailures.push({ act, error: `the click failed: ${failed}` });
      await observe(act);
      if (p === LINK_NAME) {
        opened.link = await poll(activeEditor, (e) => (e.label ?? '').startsWith('zq19') && e.text !== null, 10_000);
        rig.log(`hostile: the ${JSON.stringify(LINK_NAME)} row opened ${JSON.stringify(opened.link)}`);
        await screenshot('row-zq19-clicked');
      }
      if (p === HASH_NAME) {
        opened.row = await poll(activeEditor, (e) => (e.text ?? '').includes('zq18 line 1'), 10_000);
        rig.log(`hostile: the ${JSON.stringify(HASH_NAME)} row opened ${JSON.stringify(opened.row)}`);
        await screenshot('row-zq18-clicked');
      }
      const said = await boardError();
      if (said) actFailures.push({ act, error: `the board says ${JSON.stringify(said)}` });
      for (const m of await failureToasts(before)) actFailures.push({ act, error: `a notification says ${JSON.stringify(m)}` });
      if (i === 0 || /^zq0[12] /.test(p ?? '')) await screenshot(`row-${(p ?? String(i)).slice(0, 4).replace(/[^a-z0-9]/gi, '')}-clicked`);
      await clickToastLinks(act);
    }
    await screenshot('rows-clicked');
  });

  const openChangesPicks = [];
  /** Every notification the notification centre listed (its message text). */
  const centreMessages = [];
  await test('Rennet: Open Changes on every changed file runs nothing; every toast link clicked', async () => {
    expect(generation, 'the review did not open');
    for (const name of gitNames) {
      const token = /^(zq\d\d) /.exec(name)?.[1] ?? name;
      const act = `Open Changes ${JSON.stringify(name)}`;
      const file = files.find((f) => f.name === name);
      const before = await toastsNow();
      try {
        await rig.runCommand(page, 'Rennet: Open Changes');
        await rig.waitForQuickPick(page, 'base ↔ head');
        const input = page.locator('.quick-input-widget .quick-input-box input');
        await input.fill(token);
        await rig.sleep(300);
        const shownRows = await quickPickRows();
        openChangesPicks.push({ name, token, rows: shownRows });
        if (openChangesPicks.length === 1 || token === 'zq11') await screenshot(`open-changes-pick-${token.replace(/[^a-z0-9]/gi, '')}`);
        // The filter is fuzzy: pick the row of this file (its label starts with the token; icons aside).
        const mine = shownRows.find((r) => (r.label ?? '').startsWith(token === name ? name : `${token} `));
        if (mine && token === 'zq15') {
          const reversed = await page.locator(`.quick-input-widget .monaco-list-row[data-index="${mine.index}"]`).evaluate(reversedIn);
          for (const sample of reversed) reversedText.push({ where: 'Open Changes picker', sample });
        }
        if (mine) {
          await page.locator(`.quick-input-widget .monaco-list-row[data-index="${mine.index}"]`).click();
        } else {
          actFailures.push({ act, error: `the picker filtered on ${JSON.stringify(token)} offers no row for the file: ${JSON.stringify(shownRows.map((r) => r.label))}` });
          await page.keyboard.press('Escape');
        }
        await observe(act);
        // A text file opens as a diff titled by its name; a binary or a submodule says why not, in a notification.
        if (mine && file?.kind === 'text') {
          const shown = await poll(activeEditor, (e) => (e.label ?? '').startsWith(token) && /\(added\)/.test(e.label ?? ''), 10_000);
          if (!(shown.label ?? '').startsWith(token)) actFailures.push({ act, error: `no diff of the file opened: the editor in front is ${JSON.stringify(shown)}` });
          if (name === HASH_NAME) {
            opened.diff = await poll(activeEditor, (e) => (e.text ?? '').includes('zq18 line 1'), 10_000);
            rig.log(`hostile: Open Changes on ${JSON.stringify(HASH_NAME)} shows ${JSON.stringify(opened.diff)}`);
            await screenshot('open-changes-zq18');
          }
        }
        for (const m of await failureToasts(before)) actFailures.push({ act, error: `a notification says ${JSON.stringify(m)}` });
        if (token === 'zq04') await screenshot('open-changes-zq04');
        await clickToastLinks(act);
      } catch (e) {
        actFailures.push({ act, error: e.message.split('\n')[0] });
        await page.keyboard.press('Escape').catch(() => {});
      }
    }
    await screenshot('open-changes-done');
  });

  await test('every file row click and every Open Changes pick went through (no failed click, no error on the board or in a notification, no missing picker row)', async () => {
    expect(generation, 'the review did not open');
    rig.log(`hostile: acts that did not go through: ${JSON.stringify(actFailures)}`);
    expect(actFailures.length === 0, `${actFailures.length} act(s) did not go through:\n    ${actFailures.map((f) => `${f.act}: ${f.error}`).join('\n    ')}`);
  });

  await test(`the file named ${JSON.stringify(HASH_NAME)} opens as itself: its row shows the workspace file, Open Changes its captured diff`, async () => {
    expect(opened.row, `its file row was not clicked (see the row test)`);
    const rowPath = uriPath(opened.row.uri);
    expect(
      // The workspace file: file: (vscode-remote: in code-server's browser window).
      rowPath === `${repo}/${HASH_NAME}` && /^(file|vscode-remote):/.test(opened.row.uri ?? '') && (opened.row.text ?? '').includes('zq18 line 1'),
      `its row opened ${JSON.stringify(opened.row)} (path ${JSON.stringify(rowPath)}), expected the workspace file …/${HASH_NAME} reading "zq18 line 1"`,
    );
    expect(opened.diff, 'Open Changes opened no diff of it (see the Open Changes test)');
    const diffPath = uriPath(opened.diff.uri);
    expect(
      diffPath === `/${HASH_NAME}` && /^rennet-blob:/.test(opened.diff.uri ?? '') && (opened.diff.text ?? '').includes('zq18 line 1') && (opened.diff.label ?? '').startsWith(HASH_NAME),
      `Open Changes showed ${JSON.stringify(opened.diff)} (path ${JSON.stringify(diffPath)}), expected the captured head rennet-blob:/${HASH_NAME} reading "zq18 line 1" in a tab titled by the name`,
    );
  });

  await test(`the committed symlink ${JSON.stringify(LINK_NAME)} to a file outside the repository: its row opens the captured blob, not the file it points at`, async () => {
    expect(opened.link, 'its file row was not clicked, or opened no editor (see the row test)');
    const outside = path.join(path.dirname(repo), OUTSIDE_NAME);
    expect(
      /^rennet-blob:/.test(opened.link.uri ?? '') && uriPath(opened.link.uri) === `/${LINK_NAME}` && !(opened.link.text ?? '').includes(OUTSIDE_TEXT) && (opened.link.text ?? '').includes(outside),
      `its row opened ${JSON.stringify(opened.link)}, expected the captured blob rennet-blob:/${LINK_NAME} (the link's target path ${JSON.stringify(outside)} as its text), not the file outside the repository`,
    );
  });

  await test('the Open Changes picker shows "$(terminal)" in a path literally, not as an icon', async () => {
    const pick = openChangesPicks.find((p) => p.token === 'zq11');
    expect(pick, 'Open Changes was not run on the "$(terminal)" file (see the previous test)');
    const iconed = pick.rows.filter((r) => r.icons.some((i) => i === 'codicon-terminal' || i === 'codicon-alert'));
    const row = pick.rows.find((r) => (r.label ?? '').startsWith('zq11 '));
    expect(iconed.length === 0 && asRead(row?.label).includes('$(terminal)'), `the picker renders "$(terminal) $(alert)" of ${JSON.stringify(pick.name)} as icons: ${JSON.stringify(pick.rows)}`);
  });

  await test('the notification centre: every link in every notification clicked', async () => {
    expect(page, 'the workbench did not open');
    await rig.runCommand(page, 'Notifications: Show Notifications');
    await page.locator('.notifications-center').filter({ visible: true }).first().waitFor({ timeout: 10_000 });
    await rig.sleep(300);
    const centre = page.locator('.notifications-center').filter({ visible: true });
    const done = new Set();
    const messages = new Set();
    let shotTaken = false;
    for (let round = 0, stale = 0; round < 60 && stale < 3; round++) {
      if (!(await centre.count())) {
        await rig.runCommand(page, 'Notifications: Show Notifications');
        await rig.sleep(300);
      }
      const listed = await notificationAnchors('center');
      if (!shotTaken) {
        await screenshot('notification-centre');
        shotTaken = true;
      }
      for (const n of listed) {
        if (!messages.has(n.message)) for (const l of n.links) notificationLinks.push({ where: 'centre', message: n.message, ...l });
        messages.add(n.message);
      }
      const next = listed.flatMap((n) => n.links.map((l, li) => ({ n, l, li }))).find((x) => !done.has(`${x.n.message}|${x.li}`));
      if (!next) {
        // The list is virtual: scroll it for notifications not drawn yet.
        const before = messages.size;
        await centre
          .locator('.monaco-list')
          .first()
          .hover()
          .catch(() => {});
        await page.mouse.wheel(0, 300);
        await rig.sleep(300);
        for (const n of await notificationAnchors('center')) messages.add(n.message);
        stale = messages.size === before ? stale + 1 : 0;
        continue;
      }
      done.add(`${next.n.message}|${next.li}`);
      const item = page.locator('.notifications-center .notification-list-item').filter({ visible: true }).nth(next.n.index);
      rig.log(`hostile: clicking centre link ${JSON.stringify(next.l)} in ${JSON.stringify(next.n.message.slice(0, 120))}`);
      await item
        .locator('.notification-list-item-message a')
        .nth(next.li)
        .click({ timeout: 3_000 })
        .catch((e) => rig.log(`hostile: centre link click: ${e.message.split('\n')[0]}`));
      await observe(`notification centre link ${JSON.stringify(next.l.text)} in ${JSON.stringify(next.n.message.slice(0, 80))}`);
    }
    rig.log(`hostile: notification centre: ${messages.size} notification(s): ${JSON.stringify([...messages])}`);
    centreMessages.push(...messages);
    await screenshot('notification-centre-clicked');
  });

  await test('each submodule\'s "… is a submodule" notifications (its row, Open Changes) name it as text, payload and all', async () => {
    const submodules = files.filter((f) => f.kind === 'submodule').map((f) => f.name);
    const read = centreMessages.map(asRead);
    const missing = [];
    for (const name of submodules) {
      // The row click says "…; its content…", Open Changes "…: its content…".
      for (const [how, words] of [
        ['file row', `${name} is a submodule; its content is another repository`],
        ['Open Changes', `${name} is a submodule: its content is another repository`],
      ]) {
        if (!read.some((m) => m.startsWith(words))) missing.push(`${how}: ${JSON.stringify(words)}`);
      }
    }
    const linked = notificationLinks.filter((l) => /is a submodule/.test(l.message));
    expect(
      missing.length === 0,
      `${missing.length} submodule notification(s) not in the notification centre as text (word joiners read past):\n    ${missing.join('\n    ')}\n  centre: ${JSON.stringify(centreMessages)}`,
    );
    expect(linked.length === 0, `the submodule notifications render links: ${JSON.stringify(linked)}`);
  });

  let hoverLinkOrder = null;
  let reopenHover = null;
  /** What the gutter hover showed: its text, links, codicons and images. */
  let hoverShown = null;
  await test('the gutter hover of a cited file: every link except "Show on board" clicked', async () => {
    expect(generation, 'the review did not open');
    // Close the notification centre (its own "Hide" action; Escape otherwise).
    const hide = page.locator('.notifications-center .action-label[aria-label^="Hide Notifications"]').filter({ visible: true }).first();
    if (await hide.isVisible().catch(() => false)) await hide.click().catch(() => {});
    else await page.keyboard.press('Escape');
    await showBoard();
    const target = plan.flagged[0];
    // Open the cited file from its file row (the workspace file, which the marks decorate).
    const row = board(page)
      .locator('[data-testid="file-row"]')
      .filter({ has: board(page).locator('[data-testid="open-file"]') });
    const idx = rows.findIndex((r) => r.path === target.path);
    expect(idx >= 0, `no file row for the cited file ${JSON.stringify(target.path)}`);
    await row.nth(idx).locator('[data-testid="open-file"]').click();
    await rig.sleep(1_500);
    const editor = editorOf(page);
    let box = null;
    for (let i = 0; i < 30 && !box; i++) {
      box = await lineBox(editor, target.start);
      if (!box) await rig.sleep(250);
    }
    expect(box, `line ${target.start} of ${JSON.stringify(target.path)} is not shown in an editor`);
    const hover = page.locator('.monaco-hover').filter({ visible: true }).filter({ hasText: 'Show on board' }).first();
    const showHover = async () => {
      for (let attempt = 0; attempt < 5; attempt++) {
        await page.mouse.move(box.x + 200, box.y + 200);
        await rig.sleep(150);
        await page.mouse.move(box.x, box.y);
        if (
          await hover.waitFor({ state: 'visible', timeout: 4_000 }).then(
            () => true,
            () => false,
          )
        )
          return true;
      }
      return false;
    };
    const shown = await showHover();
    reopenHover = async () => ((await showHover()) ? hover : null);
    await screenshot('gutter-hover');
    expect(shown, `hovering line ${target.start} of ${JSON.stringify(target.path)} showed no Rennet hover (with "Show on board")`);
    const hoverText = (await hover.innerText()).replace(/\s+/g, ' ');
    const links = await hover.locator('a').evaluateAll((as) => as.map((a) => ({ text: a.textContent, href: a.getAttribute('href') ?? a.getAttribute('data-href') ?? '' })));
    hoverShown = {
      text: hoverText,
      links,
      icons: await hover.locator('.codicon:not(.hover-copy-button)').evaluateAll((els) => els.map((e) => e.className)),
      images: await hover.locator('img').count(),
    };
    rig.log(`hostile: hover text ${JSON.stringify(hoverText.slice(0, 1200))}`);
    rig.log(`hostile: hover links ${JSON.stringify(links)}`);
    // U+202E in a claim must not run on into Rennet's own text: "Show on board" reads left to right.
    hoverLinkOrder = await hover.locator('a').evaluateAll((as) =>
      as
        .filter((a) => a.textContent.trim() === 'Show on board')
        .map((a) => {
          const text = a.firstChild;
          if (!text || text.nodeType !== 3) return { ok: true, note: 'no text node' };
          const range = document.createRange();
          const boxes = [...text.data].map((ch, i) => {
            range.setStart(text, i);
            range.setEnd(text, i + 1);
            const r = range.getBoundingClientRect();
            return { ch, x: r.x, y: r.y };
          });
          // Reversed: a character drawn left of the one before it on the same line (a wrap starts a new line).
          const backwards = boxes.slice(1).filter((b, i) => b.ch !== ' ' && boxes[i].ch !== ' ' && Math.abs(b.y - boxes[i].y) < 2 && b.x < boxes[i].x);
          return { ok: backwards.length === 0, drawn: boxes.map((b) => `${b.ch}@${Math.round(b.x)},${Math.round(b.y)}`).join(' ') };
        }),
    );
    for (let li = 0; li < links.length; li++) {
      if (links[li].text.trim() === 'Show on board') continue;
      if (!(await hover.isVisible().catch(() => false))) await showHover();
      await hover
        .locator('a')
        .nth(li)
        .click({ timeout: 3_000 })
        .catch((e) => rig.log(`hostile: hover link click: ${e.message.split('\n')[0]}`));
      await observe(`gutter hover link ${JSON.stringify(links[li])}`);
    }
    await screenshot('gutter-hover-clicked');
  });

  await test('the gutter hover shows the claims\' payloads as inert text: "$(terminal)", the HTML, the javascript: link, the U+202E escape; no link but "Show on board", no icon, no image', async () => {
    expect(hoverShown, 'the gutter hover was not read (see the previous test)');
    // The claims are the elements' titles as plain text (host/generation/citationMarks.ts): link labels
    // stay, their command: targets go; what is left of each payload must read as written.
    const want = [
      '$(terminal) $(alert)',
      `<img src=x onerror="self.rennetPwned=1;fetch('http://127.0.0.1:${beacon.port}/onerror-sequence')">`,
      '[js link](javascript:self.rennetPwned=1)',
      'invoice\\u202Etxt.exe',
      'open a shell',
      'run this',
    ];
    const text = asRead(hoverShown.text);
    const absent = want.filter((w) => !text.includes(w));
    const foreign = hoverShown.links.filter((l) => l.text.trim() !== 'Show on board');
    expect(absent.length === 0, `the hover does not show ${JSON.stringify(absent)} as text: ${JSON.stringify(hoverShown.text.slice(0, 1500))}`);
    expect(foreign.length === 0 && hoverShown.links.length > 0, `the hover's links are ${JSON.stringify(hoverShown.links)}, expected "Show on board" only`);
    expect(hoverShown.icons.length === 0 && hoverShown.images === 0, `the hover draws ${hoverShown.icons.length} codicon(s) ${JSON.stringify(hoverShown.icons)} and ${hoverShown.images} image(s)`);
  });

  await test('U+202E in a claim does not reverse Rennet\'s own "Show on board" in the gutter hover', async () => {
    expect(hoverLinkOrder, 'the gutter hover was not read (see the previous test)');
    const reversed = hoverLinkOrder.filter((l) => !l.ok);
    expect(
      reversed.length === 0,
      `${reversed.length} of ${hoverLinkOrder.length} "Show on board" links in the hover are drawn right to left (the claim's U+202E runs on into them): ${JSON.stringify(reversed)}`,
    );
  });

  // The positive control: the one link the hover may run still runs.
  await test('"Show on board" in the hover still runs: its MarkdownString trusts exactly rennet.revealElement', async () => {
    expect(reopenHover, 'the gutter hover was not shown (see the earlier test)');
    const hover = await reopenHover();
    expect(hover, 'the gutter hover did not come back');
    await hover.locator('a', { hasText: 'Show on board' }).first().click();
    const revealed = board(page).locator('[data-testid="element"].rn-revealed');
    const flashed = await revealed
      .first()
      .waitFor({ state: 'attached', timeout: 15_000 })
      .then(
        () => true,
        () => false,
      );
    await screenshot('show-on-board');
    await observe('"Show on board" clicked');
    const rail = await readRail(page);
    // The mark is a flash: it may be gone by the time its id is read.
    const id = flashed
      ? await revealed
          .first()
          .getAttribute('data-id', { timeout: 1_000 })
          .catch(() => '(the flash ended before its id was read)')
      : null;
    rig.log(`hostile: Show on board revealed ${JSON.stringify(id)}; rail ${JSON.stringify(rail.map((t) => `${t.lens}:${t.selected}`))}`);
    expect(flashed, 'clicking "Show on board" revealed no element on the board (the trusted command did not run)');
  });

  /** The finding threads' comment bodies as drawn (text, codicons, images) and the links in them. */
  let threadsShown = null;
  let threadLinks = null;
  await test('the Flagged findings as threads in the editor: every link in them clicked', async () => {
    expect(generation, 'the review did not open');
    await page.keyboard.press('Escape');
    const editor = editorOf(page);
    const anchor = plan.flagged[0];
    const widgets = page.locator('.review-widget').filter({ visible: true });
    // The threads start collapsed: open them from the thread glyph on the anchor, else "Expand All Comments".
    const glyphs = await editor.locator('.comment-range-glyph.comment-thread, .comment-range-glyph.comment-thread-unresolved').evaluateAll((els) =>
      els.map((e) => {
        const r = e.getBoundingClientRect();
        return { x: r.x + r.width / 2, y: r.y + r.height / 2 };
      }),
    );
    if (glyphs.length) await page.mouse.click(glyphs[0].x, glyphs[0].y);
    if (
      !(await widgets
        .first()
        .waitFor({ state: 'visible', timeout: 5_000 })
        .then(
          () => true,
          () => false,
        ))
    ) {
      await rig.runCommand(page, 'Comments: Expand All Comments').catch((e) => rig.log(`hostile: ${e.message}`));
    }
    await widgets
      .first()
      .waitFor({ state: 'visible', timeout: 10_000 })
      .catch(() => {});
    const count = await widgets.count();
    await rig.sleep(500);
    await screenshot('finding-threads');
    const full = await page.locator('.review-widget').evaluateAll((ws) =>
      ws.map((w) => ({
        body: [...w.querySelectorAll('.comment-body')].map((b) => b.textContent.replace(/\s+/g, ' ')).join(' | '),
        icons: [...w.querySelectorAll('.comment-body .codicon')].map((c) => c.className),
        images: w.querySelectorAll('.comment-body img').length,
      })),
    );
    threadsShown = full;
    const texts = full.map((w) => w.body.slice(0, 400));
    rig.log(`hostile: ${count} thread widget(s) on ${JSON.stringify(anchor.path)}: ${JSON.stringify(texts)}`);
    expect(count > 0, `no Flagged finding thread opened on ${JSON.stringify(anchor.path)} (glyphs ${JSON.stringify(glyphs)})`);
    // Links inside the comments' bodies (the thread's title actions are Rennet's own, and act on the review).
    const bodyLinks = () => page.locator('.review-widget .comment-body a');
    const links = await bodyLinks().evaluateAll((as) => as.map((a) => ({ text: a.textContent, href: a.getAttribute('href') ?? a.getAttribute('data-href') ?? '' })));
    threadLinks = links;
    rig.log(`hostile: ${links.length} link(s) in the finding threads' bodies: ${JSON.stringify(links)}`);
    for (let li = 0; li < links.length; li++) {
      const link = bodyLinks().nth(li);
      // A thread's body scrolls inside Monaco's own scrollbars, which Playwright cannot scroll: a
      // link out of view gets the click event the mouse would have sent.
      const how = await link.click({ timeout: 1_500 }).then(
        () => 'clicked',
        () =>
          link.dispatchEvent('click').then(
            () => 'click event dispatched',
            (e) => `not clicked: ${e.message.split('\n')[0]}`,
          ),
      );
      await observe(`finding thread link ${JSON.stringify(links[li])} (${how})`);
    }
    await screenshot('finding-threads-clicked');
  });

  await test('the finding threads show each payload as inert text (command: and javascript: targets named, "not opened"), no link, icon or image', async () => {
    expect(threadsShown?.length > 0, 'no finding thread was read (see the previous test)');
    const text = asRead(threadsShown.map((w) => w.body).join(' | '));
    const enc = encodeURIComponent(JSON.stringify({ text: `touch ${MARKER_PREFIX}-flagged\n` }));
    const want = [
      'open a shell (command:workbench.action.terminal.new — not opened: not a web link)',
      `run this (command:workbench.action.terminal.sendSequence?${enc} — not opened: not a web link)`,
      'js link (javascript:self.rennetPwned=1 — not opened: not a web link)',
      `local (http://127.0.0.1:${beacon.port}/link-flagged — not opened: it points at this machine or a private network)`,
      '[image: i]',
      `<img src=x onerror="self.rennetPwned=1;fetch('http://127.0.0.1:${beacon.port}/onerror-flagged')">`,
      '$(terminal) $(alert)',
      'invoice\\u202Etxt.exe',
    ];
    const absent = want.filter((w) => !text.includes(w));
    expect(absent.length === 0, `the threads' bodies do not show ${absent.length} payload(s) as inert text: ${JSON.stringify(absent)}; bodies ${JSON.stringify(text.slice(0, 2000))}`);
    const hostileLinks = (threadLinks ?? []).filter((l) => /^(command:|javascript:)/i.test(l.href) || l.href.includes('127.0.0.1'));
    const drawn = threadsShown.filter((w) => w.icons.length > 0 || w.images > 0);
    expect(hostileLinks.length === 0, `the threads' bodies render payload links: ${JSON.stringify(hostileLinks)}`);
    expect(drawn.length === 0, `the threads' bodies draw codicons or images: ${JSON.stringify(drawn.map((w) => ({ icons: w.icons, images: w.images })))}`);
  });

  await test('every link on every lens board clicked', async () => {
    expect(generation, 'the review did not open');
    await showBoard();
    const summary = {};
    for (const lens of LENS_ORDER) {
      await selectLens(page, lens, { tolerateFoldFailures: true });
      await rig.sleep(300);
      await screenshot(`board-${lens}`);
      for (const sample of await board(page).locator('body').evaluate(reversedIn)) {
        if (!reversedText.some((r) => r.sample === sample)) reversedText.push({ where: `${lens} board`, sample });
      }
      const links = await board(page)
        .locator('a')
        .evaluateAll((as) => as.map((a) => ({ text: a.textContent.slice(0, 80), href: a.getAttribute('href') ?? '' })));
      summary[lens] = links;
      for (let li = 0; li < links.length; li++) {
        const link = board(page).locator('a').nth(li);
        await link.scrollIntoViewIfNeeded({ timeout: 2_000 }).catch(() => {});
        await link.click({ timeout: 3_000, force: true }).catch((e) => rig.log(`hostile: board link click: ${e.message.split('\n')[0]}`));
        await observe(`${lens} board link ${JSON.stringify(links[li])}`);
        // A link may take the board off screen: bring it back.
        if (
          !(await board(page)
            .locator(`[data-testid="board"][data-lens="${lens}"]`)
            .isVisible()
            .catch(() => false))
        ) {
          await page
            .locator('.tabs-container .tab', { has: page.locator('.label-name', { hasText: /^Rennet · / }) })
            .first()
            .click()
            .catch(() => {});
          await selectLens(page, lens, { tolerateFoldFailures: true }).catch(() => {});
        }
      }
    }
    rig.log(`hostile: board links ${JSON.stringify(summary)}`);
    await screenshot('board-links-clicked');
  });

  // --- The verdicts --------------------------------------------------------------------------

  await observe('verdicts').catch(() => {});
  rig.log(`hostile: events by phase: ${events.length ? '' : '(none)'}`);
  for (const e of events) rig.log(`hostile:   [${e.phase}] ${e.what}`);
  if (dialogs.length) rig.log(`hostile: dialogs: ${JSON.stringify(dialogs)}`);
  if (popups.length) rig.log(`hostile: browser pages opened: ${JSON.stringify(popups)}`);
  rig.log(`hostile: pages in the browser context now: ${JSON.stringify((context?.pages() ?? []).map((p) => p.url().slice(0, 100)))}`);
  rig.log(`hostile: links rendered in notifications: ${JSON.stringify(notificationLinks)}`);

  await test('no terminal was created', async () => {
    const t = await terminals();
    const shells = ptyChildren(cs);
    const opened = events.filter((e) => e.what.startsWith('terminal'));
    expect(
      terminalCount(t) === 0 && shells.length === 0 && seen.terminals === 0,
      `a terminal exists: workbench DOM ${JSON.stringify(t)}, processes under the pty host ${JSON.stringify(shells)}; first seen: ${JSON.stringify(opened)}`,
    );
  });

  await test('no marker file exists', async () => {
    const found = markers();
    const when = events.filter((e) => e.what.startsWith('marker'));
    expect(found.length === 0 && seen.markers.size === 0, `payload marker file(s) exist: ${JSON.stringify([...new Set([...found, ...seen.markers])])}; created during ${JSON.stringify(when)}`);
  });

  await test('no script ran in any frame', async () => {
    const pw = await pwned();
    const when = events.filter((e) => e.what.startsWith('rennetPwned'));
    expect(pw.length === 0 && seen.pwned === 0, `rennetPwned is set in ${JSON.stringify(pw)}; first seen ${JSON.stringify(when)}`);
  });

  await test('the beacon received zero requests', async () => {
    expect(
      beacon.hits.length === 0,
      `the beacon on 127.0.0.1:${beacon.port} received ${beacon.hits.length} request(s): ${JSON.stringify(beacon.hits)}${popups.length ? `; browser pages opened: ${JSON.stringify(popups)}` : ''}`,
    );
  });

  await test('no open-external (or other) dialog was asked and no browser page opened', async () => {
    expect(
      dialogs.length === 0 && popups.length === 0,
      `${dialogs.length} dialog(s) came up (each declined) and ${popups.length} browser page(s) opened: dialogs ${JSON.stringify(dialogs)}; pages ${JSON.stringify(popups)}`,
    );
  });

  await test('no notification carries a link made from a file name', async () => {
    const hostile = notificationLinks.filter((l) => /^(command:|javascript:)/i.test(l.href) || l.href.includes('127.0.0.1'));
    expect(hostile.length === 0, `notifications rendered ${hostile.length} link(s) out of file names: ${JSON.stringify(hostile)}`);
  });

  await test('every file row rendered', async () => {
    const now = await board(page)
      .locator('[data-testid="file-row"]')
      .evaluateAll((els) => els.map((e) => ({ path: e.getAttribute('data-path'), visible: e.getBoundingClientRect().height > 0, text: e.textContent })))
      .catch(() => []);
    const missing = gitNames.filter((n) => !now.some((r) => r.path === n && r.visible));
    expect(
      now.length === gitNames.length && missing.length === 0,
      `after everything, ${now.length} file rows are rendered (git names ${gitNames.length}); missing or hidden: ${JSON.stringify(missing)}`,
    );
  });

  await test('a U+202E in a file name or in model text reads as written on the board and in the picker (nothing drawn reversed)', async () => {
    expect(reversedText.length === 0, `${reversedText.length} text(s) drawn out of order by the bidi control they carry: ${JSON.stringify(reversedText.slice(0, 12))}`);
  });

  await test('Noise settled', async () => {
    const rail = await readRail(page);
    const noise = rail.find((t) => t.lens === 'noise');
    expect(noise?.state === 'settled', `Noise is ${JSON.stringify(noise)} (rail ${JSON.stringify(rail)})`);
  });

  await screenshot('end');
  if (runner.results.slice(first).some((r) => !r.ok)) dumpDiagnostics({ label: 'hostile', cs, models, consoleErrors, codeServerLines: 40, rennetLogLines: 80 });
  await context?.close().catch(() => {});
  await cs?.stop();
  await models?.stop();
}
