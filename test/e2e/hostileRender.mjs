// End-to-end: the hostile-board corpus rendered in the REAL board webview (code-server + Chromium),
// where test/unit/webview/board.hostile.test.ts renders it in happy-dom. Nothing a model writes may
// run, load, navigate or freeze the panel.
//
// The boards come through Rennet's real pipeline: scripted model servers (test/servers/e2eHostile.ts)
// play every lens seat, each of which lists the change, reads the diff of the file it cites and
// cites real changed lines (taken from git's own hunks of the fixture), then writes the payloads:
// the whole corpus of test/unit/webview/hostileFixtures.ts (one prose element each on Design), this
// scenario's own payloads whose scripts would leave a side effect anyone can see (a global, the
// document title, a message to the parent and the top window, a request to a loopback beacon),
// `command:` links, HTML entities, zero-width and RTL tricks, a 500-deep nested list, a 500-deep
// blockquote and one 1 MiB string; the other lenses carry the payloads in their own fields
// (titles, statements, alternatives, finding bodies and remedies, step explanations, noise groups).
//
// Order matters: every seat's first request is held (the plan's `hold` file) until the scenario has
// installed its probes in the board's frame (iframe#active-frame inside the webview): a
// `securitypolicyviolation` listener, message listeners in the webview's outer frame and the
// workbench, a long-task observer, a frame marker, and a Chrome DevTools Protocol recorder of every
// script V8 compiles in that frame's main world. Positive controls prove each probe sees what it
// is for (an inline script and an inline handler are blocked and reported; the recorder sees this
// scenario's own evaluations). Then the gate opens and the boards arrive.
//
// Verdicts: no side effect anywhere (no `__pwned` in any frame, titles unchanged, no message, no
// beacon request, no dialog, no new page, no terminal, no marker file); no script compiled in the
// board's frame but the bundle, VS Code's API shim and this scenario's evaluations; every CSP
// violation recorded is an enforced block (a blocked attempt is evidence, not a failure; the log
// is printed); no active element or attribute on any board and only http(s)/mailto/# links;
// clicking every `javascript:`, `data:`, `command:` and `vbscript:` target as drawn does nothing
// (the frame is not navigated, nothing opens); each payload is shown as text; and the panel stays
// responsive with the megabyte and the deep nesting on screen: a lens tab or a fold toggles within
// RESPONSIVE_MS (measured in the frame, click to the frame that shows the change), with the
// megabyte shown cut (the panel does not format a text past MARKDOWN_MAX_CHARS) and again after Show
// all put the whole of it on screen (that click itself is held to three times what the frame takes
// to lay out the same text in a bare paragraph), and a round trip into the frame stays under it (the
// measured values, long tasks included, are printed).
//
// Called from run.mjs; `RENNET_E2E_SCENARIOS=hostile-render RENNET_E2E_ONLY=1 node test/e2e/run.mjs`
// runs only this. Screenshots: test/e2e/artifacts/hostile-render-NN-*.png.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import * as rig from './rig.mjs';
import { LENS_ORDER, board, dumpDiagnostics, ptyChildren, scenarioKit, selectLens, startBeacon, terminalsDrawn, waitForTerminalGeneration, watchConsole } from './boardPage.mjs';
import { diffHunks, git, initRepo, uncitedHunkCount } from './fixture.mjs';
import { refusalsOf } from './hostile.mjs';
import { harnessSettings, startModelServers } from './modelServers.mjs';

const { expect } = rig;
const BRANCH = 'hostile-render';
/** A click on a lens tab or a fold toggle must show its change within this (measured in the frame). */
const RESPONSIVE_MS = 2_000;
/** Nesting depth of the deep list and the deep blockquote. */
const DEEP_LEVELS = 500;
const ONE_MB = 1 << 20;
const MARKER = 'rennet-pwned-render';

// ---------------------------------------------------------------------------------------------
// Payloads.

/**
 * The happy-dom corpus (test/unit/webview/hostileFixtures.ts) and the length past which the panel
 * shows a text cut (webview/board/markdown.ts), read through tsx: one source for both levels.
 */
function loadCorpus() {
  const tsx = path.join(rig.ROOT, 'node_modules/.bin/tsx');
  const source =
    "import { CANARY, PAYLOADS } from './test/unit/webview/hostileFixtures.ts'; import { MARKDOWN_MAX_CHARS } from './webview/board/markdown.ts'; " +
    'process.stdout.write(JSON.stringify({ CANARY, PAYLOADS, MARKDOWN_MAX_CHARS }));';
  const corpus = JSON.parse(execFileSync(tsx, ['--eval', source], { cwd: rig.ROOT, encoding: 'utf8', timeout: 180_000 }));
  expect(
    Array.isArray(corpus.PAYLOADS) && corpus.PAYLOADS.length > 20 && corpus.CANARY.includes('__pwned') && corpus.MARKDOWN_MAX_CHARS > 0,
    `the corpus read from hostileFixtures.ts is not what it should be: ${JSON.stringify(corpus).slice(0, 300)}`,
  );
  return corpus;
}

/** What a payload's script does if it runs: a global, the title, a message up, a beacon request. */
const sideEffect = (beacon, tag) =>
  `window.__pwned=(window.__pwned||0)+1;document.title='${MARKER}';parent.postMessage('${MARKER}','*');top.postMessage('${MARKER}','*');fetch('http://127.0.0.1:${beacon}/${tag}')`;

/** This scenario's own payloads (beyond the corpus), by name. */
function extraPayloads(beacon) {
  const s = (tag) => sideEffect(beacon, tag);
  return {
    'script-side-effect': `<script>${s('script')}</script>`,
    'img-onerror': `<img src=x onerror="${s('onerror')}">`,
    'svg-script': `<svg xmlns="http://www.w3.org/2000/svg"><script>${s('svg-script')}</script></svg>`,
    'svg-link': `<svg><a xlink:href="javascript:${s('svg-link')}"><text x="0" y="15">svg link</text></a></svg>`,
    'iframe-src': `<iframe src="javascript:${s('iframe')}"></iframe>`,
    'embed-data': `<embed src="data:text/html,<script>${s('embed')}</script>">`,
    'object-js': `<object data="javascript:${s('object')}"></object>`,
    'form-action': `<form action="javascript:${s('form')}"><button>send</button></form>`,
    'math-mxss': `<math><mtext><table><mglyph><style><img src=x onerror="${s('mxss')}">`,
    'meta-refresh': `<meta http-equiv="refresh" content="0;url=javascript:${s('meta')}">`,
    'base-href': `<base href="javascript:${s('base')}//">`,
    'style-overlay': `<div style="position:fixed;inset:0;z-index:9999;background:red">overlay</div><style>*{display:none!important}</style>`,
    'css-import': `<style>@import url(http://127.0.0.1:${beacon}/css-import);</style>`,
    'md-javascript': `[js link](javascript:${s('md-js')})`,
    'md-data-html': '[data link](data:text/html;base64,PHNjcmlwdD53aW5kb3cuX19wd25lZD0xPC9zY3JpcHQ+)',
    'md-data-svg-image': `![data svg](data:image/svg+xml,<svg onload="${s('data-svg')}">)`,
    'md-javascript-image': `![js image](javascript:${s('js-img')})`,
    'html-javascript-link': `<a href="javascript:${s('html-js')}">raw js link</a>`,
    'html-data-link': `<a href="data:text/html,<script>${s('html-data')}</script>">raw data link</a>`,
    'command-new': '[open a shell](command:workbench.action.terminal.new)',
    'command-run': `[run this](command:workbench.action.terminal.sendSequence?${encodeURIComponent(JSON.stringify({ text: `touch ${MARKER}\n` }))})`,
    'command-autolink': '<command:workbench.action.terminal.new>',
    entities: `&lt;script&gt;${s('entity')}&lt;/script&gt; &#60;img src=x onerror=alert(1)&#62; [entity link](&#x6A;avascript&#x3A;${s('entity-link')})`,
    'zero-width-scheme': `[zero width](java\u200Bscript:${s('zero-width')}) [bom](\uFEFFjavascript:${s('bom')})`,
    'rtl-override': `[rtl](\u202Ejavascript:${s('rtl')}) invoice\u202Etxt.exe \u2066isolated\u2069`,
    'beacon-image': `![beacon](http://127.0.0.1:${beacon}/md-image.png) <img src="http://127.0.0.1:${beacon}/html-image.png">`,
    'beacon-link': `[local](http://127.0.0.1:${beacon}/md-link)`,
  };
}

/** The fixture: main has a README; the branch adds src/render.js (12 lines) and edits the README. */
function makeRepo(dir) {
  initRepo(dir);
  fs.writeFileSync(path.join(dir, 'README.md'), '# Render\n\nA repository whose review boards attack the reviewer.\n');
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-q', '-m', 'initial']);
  git(dir, ['checkout', '-q', '-b', BRANCH]);
  fs.mkdirSync(path.join(dir, 'src'));
  const lines = Array.from({ length: 12 }, (_, i) => `export const step${i + 1} = ${i + 1};`);
  fs.writeFileSync(path.join(dir, 'src/render.js'), `${lines.join('\n')}\n`);
  fs.appendFileSync(path.join(dir, 'README.md'), '\nThe renderer lives in src/render.js.\n');
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-q', '-m', 'renderer']);
}

/** Which changed lines each lens cites (git's own hunks); the README's hunk is Noise's. */
function renderPlan(hunks) {
  const file = hunks.get('src/render.js');
  expect(file && file.hunks.length === 1, `fixture: git should show one hunk for src/render.js, it shows ${JSON.stringify([...hunks.keys()])}`);
  const added = file.hunks[0].lines.filter((l) => l.kind === 'add').map((l) => l.new);
  expect(added.length === 12, `fixture: src/render.js should add 12 lines, git shows ${added.length}`);
  const head = (start, end) => ({ path: 'src/render.js', side: 'head', start: added[start - 1], end: added[end - 1] });
  const plan = { design: head(1, 3), sequence: head(4, 6), decisions: head(7, 8), flagged: head(9, 10), noiseMembers: 0 };
  plan.noiseMembers = uncitedHunkCount(hunks, [plan.design, plan.sequence, plan.decisions, plan.flagged]);
  expect(plan.noiseMembers === 1, `fixture: exactly the README's hunk should be left for Noise; ${plan.noiseMembers} uncited hunks`);
  return plan;
}

/**
 * Payloads three to a prose element (one paragraph each, labelled), so a seat stays well within the
 * host's round trips per turn; one that cites a path (a board rule refuses it) goes alone.
 */
function proseGroups(entries) {
  const groups = [];
  let run = [];
  for (const entry of entries) {
    if (/\.ts:\d/.test(entry[1])) {
      groups.push([entry]);
      continue;
    }
    run.push(entry);
    if (run.length === 3) {
      groups.push(run);
      run = [];
    }
  }
  if (run.length) groups.push(run);
  return groups;
}

/**
 * Every seat's calls: list the change, read the diff of the cited file, then write. Design carries
 * the corpus and the extras (three to a prose element), the deep nesting and the megabyte (last,
 * so the conversation resent with every later request stays small until then).
 */
function seatScripts({ plan, corpus, extras, line, deepList, deepQuote, megabyte }) {
  const reads = (r) => [{ tool: 'list_changes' }, { tool: 'read_diff', input: { path: r.path } }];
  const cite = (r, as, label) => ({ tool: 'cite', input: { path: r.path, side: 'head', start_line: r.start, end_line: r.end, ...(label ? { label } : {}) }, as });
  const prose = (name, markdown) => ({ tool: 'add_prose', input: { markdown: `Payload ${name}: ${markdown}`, parent_id: '$s' } });
  const group = (entries) => ({ tool: 'add_prose', input: { markdown: entries.map(([name, markdown]) => `Payload ${name}: ${markdown}`).join('\n\n'), parent_id: '$s' } });
  const doc = (lens) => ({ tool: 'set_document', input: { title: `${lens} ${line}`, intro_markdown: `Intro ${line}` } });
  const section = (title) => ({ tool: 'add_section', input: { title: `${title} ${line}`, body_markdown: `Body ${line}` }, as: 's' });
  return {
    'design:drafter': [
      ...reads(plan.design),
      doc('Design'),
      section('Hostile corpus'),
      cite(plan.design, 'c0', `label ${line}`),
      ...proseGroups([...corpus.map((p, i) => [corpusName(i), p]), ...Object.entries(extras)]).map(group),
      { tool: 'add_callout', input: { tone: 'warning', markdown: `Callout ${line}`, parent_id: '$s' } },
      prose('deep-list', `nested ${DEEP_LEVELS} levels\n\n${deepList}`),
      prose('deep-quote', `nested ${DEEP_LEVELS} levels\n\n${deepQuote}`),
      prose('megabyte', megabyte),
      { tool: 'finish' },
    ],
    'sequence:drafter': [
      ...reads(plan.sequence),
      doc('Sequence'),
      section('Walkthrough'),
      cite(plan.sequence, 'c0', `label ${line}`),
      { tool: 'add_order_step', input: { title: `Step ${line}`, explanation_markdown: `Explained ${line}`, span: '$c0', parent_id: '$s' } },
      ...Object.entries(extras)
        .slice(0, 6)
        .map(([k, v]) => ({ tool: 'add_order_step', input: { title: `Step ${k} ${v}`, explanation_markdown: `Explained ${k}: ${v}`, span: '$c0', parent_id: '$s' } })),
      { tool: 'finish' },
    ],
    'decisions:drafter': [
      ...reads(plan.decisions),
      doc('Decisions'),
      section('Calls'),
      cite(plan.decisions, 'c0'),
      {
        tool: 'add_decision',
        input: { title: `Decision ${line}`, statement: `Stated ${line}`, rationale: `Because ${line}`, alternatives: Object.values(extras).slice(0, 10), evidence: ['$c0'], parent_id: '$s' },
      },
      { tool: 'finish' },
    ],
    'flagged:reviewer': [...reads(plan.flagged), { tool: 'submit_findings', input: { findings_markdown: `# Findings\n\n- ${plan.flagged.path}:${plan.flagged.start} ${line}\n` } }],
    'flagged:compiler': [
      ...reads(plan.flagged),
      doc('Flagged'),
      section('Correctness'),
      cite(plan.flagged, 'c0'),
      {
        tool: 'add_finding',
        input: {
          severity: 'minor',
          category: 'correctness',
          title: `Finding ${line}`,
          body_markdown: `Body ${line}`,
          remedy_markdown: `Remedy ${line}`,
          anchor: ['$c0'],
          parent_id: '$s',
          origin: 'claude',
          agreement: 'solo',
          score: 70,
        },
      },
      { tool: 'finish' },
    ],
    'noise:drafter': [
      ...reads(plan.flagged),
      doc('Noise'),
      { tool: 'add_noise_group', input: { title: `Group ${line}`, reason: `Reason ${line}` }, as: 'g' },
      ...Array.from({ length: plan.noiseMembers }, (_, i) => ({ tool: 'update_noise_member', input: { id: `e${i + 1}`, parent_id: '$g' } })),
      { tool: 'finish' },
    ],
  };
}
const corpusName = (i) => `corpus-${String(i).padStart(2, '0')}`;

// ---------------------------------------------------------------------------------------------
// Page-side functions (each self-contained: Playwright sends its source into the frame).

/** Installs the probes in the board's frame; answers what the board showed at that moment. */
function installProbes() {
  const probe = { violations: [], messages: [], longTasks: [], mark: `probe-${Math.random().toString(36).slice(2)}`, href: location.href, title: document.title, installedAt: performance.now() };
  globalThis.__rnProbe = probe;
  document.addEventListener(
    'securitypolicyviolation',
    (e) =>
      probe.violations.push({
        directive: e.effectiveDirective,
        blocked: String(e.blockedURI).slice(0, 120),
        sample: String(e.sample ?? '').slice(0, 120),
        disposition: e.disposition,
        source: String(e.sourceFile ?? '').slice(-80),
        line: e.lineNumber,
        target: e.target?.nodeName ?? null,
        at: Math.round(performance.now()),
      }),
    true,
  );
  // What a payload posts is the marker itself (Rennet's own messages carry the payloads' text as data).
  window.addEventListener('message', (e) => {
    if (typeof e.data === 'string' && e.data.includes('rennet-pwned')) probe.messages.push(e.data.slice(0, 200));
  });
  try {
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) probe.longTasks.push({ start: Math.round(entry.startTime), ms: Math.round(entry.duration) });
    }).observe({ type: 'longtask', buffered: false });
    probe.longTaskObserver = true;
  } catch (e) {
    probe.longTaskObserver = String(e);
  }
  const elements = document.querySelectorAll('[data-testid="board"] [data-testid="element"]').length;
  const csp = document.querySelector('meta[http-equiv="Content-Security-Policy"]')?.getAttribute('content') ?? null;
  return { mark: probe.mark, href: probe.href, title: probe.title, elements, csp, scripts: [...document.scripts].map((s) => s.id || s.src.split('/').slice(-2).join('/')) };
}

/** Positive controls: an inline script and an inline handler, both of which the CSP must block and report. */
function runControls() {
  const script = document.createElement('script');
  script.textContent = 'globalThis.__rnControl = (globalThis.__rnControl || 0) + 1';
  document.body.appendChild(script);
  const div = document.createElement('div');
  div.setAttribute('onclick', 'globalThis.__rnControl = (globalThis.__rnControl || 0) + 1');
  document.body.appendChild(div);
  div.click();
  return new Promise((resolve) =>
    setTimeout(() => {
      script.remove();
      div.remove();
      const probe = globalThis.__rnProbe;
      const controls = probe.violations.splice(0);
      resolve({ controls, ran: globalThis.__rnControl ?? 0 });
    }, 300),
  );
}

/** Listens in another frame (the webview's outer frame, the workbench) for the marker a payload posts. */
function listenForMessages() {
  globalThis.__rnMessages = [];
  window.addEventListener('message', (e) => {
    if (typeof e.data === 'string' && e.data.includes('rennet-pwned')) globalThis.__rnMessages.push(e.data.slice(0, 200));
  });
  return true;
}

/**
 * What the boards hold that could act: active elements, handler/style/source attributes, and every
 * href (with whether it is an allowed scheme). Scoped to the lens boards (where model text goes).
 */
function inertReport() {
  const boards = [...document.querySelectorAll('[data-testid="board"]')];
  const forbiddenTags = 'script, iframe, frame, frameset, object, embed, img, image, style, link, svg, math, base, meta, form, input, textarea, video, audio, source, picture, portal, applet';
  const badAttrs = new Set(['style', 'src', 'srcdoc', 'srcset', 'formaction', 'action', 'xlink:href', 'background', 'poster', 'data', 'ping', 'http-equiv']);
  const out = { boards: boards.length, elements: 0, forbidden: [], attrs: [], hrefs: [], badHrefs: [] };
  for (const b of boards) {
    out.elements += b.querySelectorAll('[data-testid="element"]').length;
    for (const el of b.querySelectorAll(forbiddenTags)) out.forbidden.push(`${el.tagName} in ${b.getAttribute('data-lens')}`);
    for (const el of b.querySelectorAll('*')) {
      for (const name of el.getAttributeNames()) {
        if (/^on/i.test(name) || badAttrs.has(name.toLowerCase())) out.attrs.push(`${el.tagName} ${name}=${String(el.getAttribute(name)).slice(0, 60)}`);
      }
      const href = el.getAttribute('href');
      if (href !== null) {
        out.hrefs.push(href.slice(0, 100));
        if (el.tagName !== 'A' || !/^(https?:|mailto:|#)/i.test(href) || /^https?:\/\/(127\.|localhost|\[::1\]|0x7f|2130706433|10\.|192\.168\.|169\.254\.)/i.test(href))
          out.badHrefs.push(`${el.tagName} ${href.slice(0, 100)}`);
      }
    }
  }
  out.documentScripts = [...document.scripts].map((s) => s.id || s.src.split('/').slice(-2).join('/'));
  out.documentFrames = document.querySelectorAll('iframe, frame, object, embed').length;
  return out;
}

/** The board's text and what each payload label reads as; the big element's length. */
function boardText({ labels, inner }) {
  const text = [...document.querySelectorAll('[data-testid="board"]')].map((b) => b.innerText).join('\n');
  const shown = labels.filter((l) => text.includes(`Payload ${l}:`));
  const prose = [...document.querySelectorAll('[data-testid="board"][data-lens="design"] [data-testid="element"][data-kind="prose"]')];
  const big = prose.find((p) => p.textContent.includes('Payload megabyte:'));
  const deep = prose.find((p) => p.textContent.includes('Payload deep-list:'));
  const quote = prose.find((p) => p.textContent.includes('Payload deep-quote:'));
  const depth = (root, sel) => {
    let max = 0;
    for (const el of root?.querySelectorAll(sel) ?? []) {
      let d = 0;
      for (let n = el; n && n !== root; n = n.parentElement) if (n.matches(sel)) d++;
      max = Math.max(max, d);
    }
    return max;
  };
  const lastLevel = (root) => {
    const m = [...(root?.textContent ?? '').matchAll(/level (\d+)/g)].map((x) => Number(x[1]));
    return m.length ? Math.max(...m) : null;
  };
  return {
    length: text.length,
    shown,
    bigId: big?.getAttribute('data-id') ?? null,
    bigLength: big?.textContent.length ?? 0,
    bigSample: big ? big.textContent.slice(0, 160) : null,
    bigNote: big?.querySelector('[data-testid="long-text-note"]')?.textContent ?? null,
    bigShowAll: big?.querySelector('[data-testid="show-long-text"]')?.textContent ?? null,
    deepId: deep?.getAttribute('data-id') ?? null,
    deepListDepth: depth(deep, 'ul'),
    deepListLastLevel: lastLevel(deep),
    deepListNote: deep?.querySelector('[data-testid="deep-text-note"]')?.textContent ?? null,
    deepListInner: inner.list.map((w) => (deep?.textContent ?? '').includes(w)),
    deepQuoteDepth: depth(quote, 'blockquote'),
    deepQuoteNote: quote?.querySelector('[data-testid="deep-text-note"]')?.textContent ?? null,
    deepQuoteInner: (quote?.textContent ?? '').includes(inner.quote),
    sectionId: big?.closest('[data-testid="element"][data-kind="section"]')?.getAttribute('data-id') ?? null,
  };
}

/**
 * Marks (data-rn-click) every element on the boards whose own text draws a `javascript:`, `data:`,
 * `command:` or `vbscript:` target, once per element (not inside a button: those are Rennet's own
 * controls), with the position of the scheme inside it; answers them.
 */
function markSchemeTargets({ limit }) {
  const re = /(?<![\w-])(javascript|data|command|vbscript):/i;
  const out = [];
  const seen = new Set();
  const range = document.createRange();
  for (const b of document.querySelectorAll('[data-testid="board"]')) {
    const walker = document.createTreeWalker(b, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n && out.length < limit; n = walker.nextNode()) {
      const m = re.exec(n.data);
      const el = n.parentElement;
      if (!m || !el || seen.has(el) || el.closest('button, a')) continue;
      seen.add(el);
      range.setStart(n, m.index);
      range.setEnd(n, Math.min(n.data.length, m.index + m[0].length));
      const r = range.getClientRects()[0];
      const box = el.getBoundingClientRect();
      if (!r || r.width === 0) continue;
      el.setAttribute('data-rn-click', String(out.length));
      out.push({
        index: out.length,
        scheme: m[1].toLowerCase(),
        tag: el.tagName,
        lens: b.getAttribute('data-lens'),
        text: n.data.slice(Math.max(0, m.index - 20), m.index + 60),
        position: { x: Math.max(1, r.left - box.left + r.width / 2), y: Math.max(1, r.top - box.top + r.height / 2) },
      });
    }
  }
  return out;
}

/** In the board's frame: clicks `click`, then checks every animation frame for `until`; answers the ms from the click to the first frame that shows it. */
function clickUntil({ click, until, limit }) {
  return new Promise((resolve) => {
    const el = document.querySelector(click);
    if (!el) return resolve({ ms: null, error: `nothing matches ${click}` });
    const t0 = performance.now();
    el.click();
    const tick = () => {
      const now = performance.now();
      if (document.querySelector(until)) return resolve({ ms: Math.round(now - t0) });
      if (now - t0 > limit) return resolve({ ms: null, error: `${until} did not show within ${Math.round(now - t0)} ms` });
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
}

/** The longest gap between animation frames over `ms` (an idle, unblocked main thread paints every ~16 ms). */
function frameGaps({ ms }) {
  return new Promise((resolve) => {
    const gaps = [];
    let last = performance.now();
    const t0 = last;
    const tick = (now) => {
      gaps.push(now - last);
      last = now;
      if (now - t0 < ms) requestAnimationFrame(tick);
      else resolve({ frames: gaps.length, maxGap: Math.round(Math.max(...gaps)), meanGap: Math.round(gaps.reduce((a, b) => a + b, 0) / gaps.length) });
    };
    requestAnimationFrame(tick);
  });
}

/** What the frame takes to lay out `text` in a bare paragraph as wide as `selector`, to the next frame (the floor for showing it). */
function layoutBaseline({ selector, text }) {
  return new Promise((resolve) => {
    const host = document.querySelector(selector);
    const p = document.createElement('p');
    p.className = 'rn-md-plain';
    const t0 = performance.now();
    p.textContent = text;
    (host ?? document.body).appendChild(p);
    const height = p.getBoundingClientRect().height;
    requestAnimationFrame(() => {
      const ms = Math.round(performance.now() - t0);
      p.remove();
      resolve({ ms, height: Math.round(height) });
    });
  });
}

const readProbe = () => {
  const p = globalThis.__rnProbe;
  return p
    ? {
        mark: p.mark,
        href: location.href,
        title: document.title,
        violations: p.violations,
        messages: p.messages,
        longTasks: p.longTasks,
        longTaskObserver: p.longTaskObserver,
        pwned: globalThis.__pwned ?? null,
      }
    : null;
};
const readPwned = () => globalThis.__pwned ?? null;
const readMessages = () => globalThis.__rnMessages ?? null;
const ping = () => 1;

// ---------------------------------------------------------------------------------------------

export async function runHostileRender({ paths, vsix, runner, browser }) {
  let page = null;
  let context = null;
  let cs = null;
  let models = null;
  let inner = null;
  let cdp = null;
  const consoleErrors = [];
  const { screenshot, test } = scenarioKit({ label: 'hostile-render', runner, page: () => page });
  const state = { phase: 'setup' };
  const popups = [];
  const dialogs = [];
  const first = runner.results.length;

  /** Sources of every function this scenario evaluates in the board's frame (V8 compiles each; they are ours). */
  const ownSources = new Set(['((utilityScript, ...args) => utilityScript.evaluate(...args))']);
  const innerEval = (fn, arg) => {
    ownSources.add(fn.toString());
    return inner.evaluate(fn, arg);
  };
  /** Every script V8 compiled in the board frame's main world, as the DevTools protocol reported it. */
  const compiled = [];
  let innerFrameId = null;

  const work = rig.mkTmp('rennet-hostile-render-');
  const repo = path.join(work, 'hostile render repo');
  const hold = path.join(work, 'hold-open');
  makeRepo(repo);
  const hunks = diffHunks(repo, { base: 'main', head: BRANCH });
  const plan = renderPlan(hunks);
  const beacon = await startBeacon(state);
  const corpus = loadCorpus();
  const extras = extraPayloads(beacon.port);
  const canary = corpus.CANARY;
  // One line of payloads for titles and other one-line fields: the corpus's one-line entries that cite no path, and a few of ours.
  const line = [...corpus.PAYLOADS.filter((p) => !p.includes('\n') && !/\.ts:\d/.test(p)).slice(0, 24), extras['md-javascript'], extras['command-new'], extras['svg-script']].join(' ');
  // 500 nested lists on one line (`- - - …`: each marker opens a list inside the item before), then
  // 150 nested by indentation (500 that way would be 250,000 spaces: past MARKDOWN_MAX_CHARS, shown as plain text).
  const deepList = [
    `${'- '.repeat(DEEP_LEVELS)}level ${DEEP_LEVELS} <b onclick="${canary}">x</b> [j](javascript:${canary})`,
    Array.from({ length: 150 }, (_, i) => `${'  '.repeat(i)}- level ${i} <b onclick="${canary}">x</b> [j](javascript:${canary})`).join('\n'),
  ].join('\n\n');
  const deepQuote = `${'> '.repeat(DEEP_LEVELS)}deep quote <script>${canary}</script>`;
  const unit = `<img src=x onerror='${canary}'> [j](javascript:${canary}) <script>${canary}</script> `;
  const megabyte = unit.repeat(Math.ceil(ONE_MB / unit.length)).slice(0, ONE_MB);
  const seats = seatScripts({ plan, corpus: corpus.PAYLOADS, extras, line, deepList, deepQuote, megabyte });
  const labels = [...corpus.PAYLOADS.map((_, i) => corpusName(i)), ...Object.keys(extras), 'deep-list', 'deep-quote', 'megabyte'];
  rig.log(`hostile-render: repository ${repo}; plan ${JSON.stringify(plan)}; beacon 127.0.0.1:${beacon.port}`);
  rig.log(
    `hostile-render: ${corpus.PAYLOADS.length} corpus payloads, ${Object.keys(extras).length} of this scenario's, a ${DEEP_LEVELS}-deep list (${deepList.length} chars), a ${DEEP_LEVELS}-deep quote, a ${megabyte.length}-char string`,
  );

  const markerFiles = () => [repo, rig.ROOT, work].filter((d) => fs.existsSync(path.join(d, MARKER))).map((d) => path.join(d, MARKER));
  const terminalCount = async () => {
    const t = await terminalsDrawn(page);
    return Math.max(t.xterms, t.wrappers, t.tabs, t.editorTabs, ptyChildren(cs).length);
  };
  for (const fn of [readPwned, readMessages, ping, listenForMessages]) ownSources.add(fn.toString());
  /** `__pwned` in any frame of any page. */
  async function pwnedAnywhere() {
    const out = [];
    for (const p of context?.pages() ?? []) {
      for (const f of p.frames()) {
        const v = await f.evaluate(readPwned).catch(() => null);
        if (v !== null && v !== undefined) out.push({ frame: f.url().slice(0, 120), value: v });
      }
    }
    return out;
  }
  async function findInnerFrame() {
    for (const f of page.frames()) {
      if (!f.url().includes('/fake.html')) continue;
      if (
        await f
          .locator('[data-testid="rennet-root"]')
          .count()
          .catch(() => 0)
      )
        return f;
    }
    return null;
  }

  await test('the model servers (seats held) answer on 127.0.0.1 and the workbench opens the fixture repository', async () => {
    models = await startModelServers({ script: 'e2eHostile.ts', plan: { seats, hold }, dir: work, label: 'hostile-render' });
    cs = await rig.startCodeServer({ paths, name: 'hostile-render', vsixes: [vsix], settings: { ...harnessSettings(models), 'workbench.editor.enablePreview': true } });
    context = await browser.newContext({ viewport: { width: 1600, height: 1000 } });
    page = await context.newPage();
    // The machine may be loaded: navigation and actions get generous time.
    page.setDefaultNavigationTimeout(180_000);
    page.setDefaultTimeout(60_000);
    context.on('page', (p) => {
      popups.push({ phase: state.phase, url: p.url() });
      rig.log(`hostile-render: a new browser page opened during ${state.phase}`);
    });
    page.on('dialog', (d) => {
      dialogs.push({ phase: state.phase, text: `browser ${d.type()}: ${d.message()}` });
      d.dismiss().catch(() => {});
    });
    watchConsole(page, consoleErrors);
    await rig.openWorkbench(page, cs, repo);
    await page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'src' }).first().waitFor({ timeout: 60_000 });
    await screenshot('workbench');
  });

  let installed = null;
  let controls = null;
  let workbenchTitle = null;
  await test('Review Branch opens the panel; the probes go into the board frame before any board arrives, and the positive controls are seen', async () => {
    expect(page, 'the workbench did not open (see the previous test)');
    state.phase = 'Review Branch';
    await rig.runCommand(page, 'Rennet: Review Branch');
    await rig.pickQuickPick(page, 'Branch to review', BRANCH);
    await rig.pickQuickPick(page, 'Base to compare with', 'main');
    await board(page).locator('[data-testid="patchset-header"]').waitFor({ state: 'visible', timeout: 120_000 });
    inner = await findInnerFrame();
    expect(inner, `no board frame (…/fake.html holding [data-testid="rennet-root"]) among ${JSON.stringify(page.frames().map((f) => f.url().slice(0, 120)))}`);

    // The DevTools protocol recorder: every script compiled in the board frame's main world.
    cdp = await context.newCDPSession(page);
    // The board frame is the one child of the webview's outer frame (pre/index.html?id=<webview id>);
    // its own URL changes when VS Code writes the page into it, so it is found through its parent.
    const tree = await cdp.send('Page.getFrameTree');
    const webviewId = new URL(inner.url()).searchParams.get('id');
    const flat = [];
    const walk = (n) => {
      flat.push(n);
      for (const c of n.childFrames ?? []) walk(c);
    };
    walk(tree.frameTree);
    const outer = flat.find((n) => new URL(n.frame.url).pathname.endsWith('/pre/index.html') && new URL(n.frame.url).searchParams.get('id') === webviewId);
    innerFrameId = outer?.childFrames?.length === 1 ? outer.childFrames[0].frame.id : null;
    expect(
      innerFrameId,
      `the DevTools frame tree has no webview frame ${webviewId} with one child: ${JSON.stringify(flat.map((n) => ({ url: n.frame.url.slice(0, 140), children: n.childFrames?.length ?? 0 })))}`,
    );
    cdp.on('Debugger.scriptParsed', (e) => {
      const aux = e.executionContextAuxData ?? {};
      if (aux.frameId !== innerFrameId || aux.type !== 'default') return;
      compiled.push({ scriptId: e.scriptId, url: e.url, embedder: e.embedderName ?? '', length: e.length, phase: state.phase, at: Date.now() });
    });
    await cdp.send('Debugger.enable');

    installed = await innerEval(installProbes);
    rig.log(`hostile-render: probes installed: ${JSON.stringify(installed)}`);
    await inner.parentFrame().evaluate(listenForMessages);
    await page.evaluate(listenForMessages);
    workbenchTitle = await page.title();
    controls = await innerEval(runControls);
    rig.log(`hostile-render: positive controls: ${JSON.stringify(controls)}`);
    await screenshot('panel-before-boards');
    expect(installed.elements === 0, `the boards already show ${installed.elements} element(s) when the probes went in: the hold did not hold`);
    expect(
      /script-src 'nonce-[^']+'(;|$)/.test(installed.csp ?? '') && !/unsafe-(inline|eval)/.test(installed.csp ?? ''),
      `the board frame's CSP should allow scripts by nonce only: ${JSON.stringify(installed.csp)}`,
    );
    const directives = controls.controls.map((v) => v.directive).sort();
    expect(
      controls.ran === 0 && JSON.stringify(directives) === JSON.stringify(['script-src-attr', 'script-src-elem']) && controls.controls.every((v) => v.disposition === 'enforce'),
      `the positive controls: an inline <script> and an onclick attribute should both be blocked and reported (script-src-elem, script-src-attr, enforced); ran ${controls.ran} time(s), reported ${JSON.stringify(controls.controls)}`,
    );
    const ownSeen = compiled.filter((c) => c.url === '').length;
    expect(ownSeen > 0, `the script recorder saw none of this scenario's own evaluations in the board frame (${compiled.length} scripts recorded): it is not watching that frame`);
  });

  let generation = null;
  await test('the gate opens: the seats list and read the change, cite its lines, and the five lenses settle', async () => {
    expect(installed, 'the probes are not installed (see the previous test)');
    state.phase = 'boards arriving';
    fs.writeFileSync(hold, 'open\n');
    generation = await waitForTerminalGeneration(page, { what: 'after Review Branch', requestCount: () => models?.requests.length ?? 0, timeout: 300_000 });
    await rig.sleep(500);
    await screenshot('rail-terminal');
    const refused = refusalsOf(models.requests, seats);
    rig.log(`hostile-render: rail ${JSON.stringify(generation.rail)}`);
    rig.log(`hostile-render: ${refused.length} scripted call(s) refused by the board tools:`);
    for (const r of refused) rig.log(`hostile-render:   ${r.seat} ${JSON.stringify(r.call)?.slice(0, 200)} → ${JSON.stringify(r.result.slice(0, 300))}`);
    // Every seat read the change before it wrote: its third request resends read_diff's answer with the cited file's added lines.
    const added = hunks
      .get('src/render.js')
      .hunks[0].lines.filter((l) => l.kind === 'add')
      .map((l) => `${String(l.new).padStart(5)} | ${l.text}`);
    for (const seat of Object.keys(seats)) {
      const answered = models.requests.filter((r) => r.seat === `${seat}@2`).map((r) => (r.toolResults ?? []).at(-1) ?? '');
      expect(
        answered.some((t) => added.some((l) => t.includes(l))),
        `${seat}: the read_diff result resent to the model does not carry src/render.js's added lines: ${JSON.stringify(answered[0]?.slice(0, 300) ?? null)}`,
      );
    }
    const citeRefused = refused.filter((r) => r.call?.tool === 'cite');
    expect(citeRefused.length === 0, `citations of real changed lines were refused: ${JSON.stringify(citeRefused)}`);
    const notSettled = generation.rail.filter((t) => t.state !== 'settled');
    expect(notSettled.length === 0, `every lens should settle on the scripted models; not settled: ${JSON.stringify(notSettled)} (rail ${JSON.stringify(generation.rail)})`);
  });

  /** Per lens: the inert report, after Expand all. */
  const reports = {};
  let shown = null;
  await test('every lens board, unfolded: no active element, no handler/style/source attribute, only http(s)/mailto/# links', async () => {
    expect(generation, 'the boards did not arrive (see the previous test)');
    state.phase = 'reading the boards';
    for (const lens of LENS_ORDER) {
      await selectLens(page, lens, { tolerateFoldFailures: true });
      await rig.sleep(300);
      reports[lens] = await innerEval(inertReport);
      await screenshot(`board-${lens}`);
    }
    await selectLens(page, 'design', { tolerateFoldFailures: true });
    shown = await innerEval(boardText, { labels, inner: { list: [`level ${DEEP_LEVELS} <b onclick=`, 'level 149 <b onclick='], quote: `deep quote <script>${canary}</script>` } });
    for (const [lens, r] of Object.entries(reports))
      rig.log(
        `hostile-render: ${lens}: ${r.elements} elements; forbidden ${JSON.stringify(r.forbidden)}; attrs ${JSON.stringify(r.attrs.slice(0, 10))}; hrefs ${JSON.stringify(r.hrefs)}; document scripts ${JSON.stringify(r.documentScripts)}; frames ${r.documentFrames}`,
      );
    const problems = [];
    for (const [lens, r] of Object.entries(reports)) {
      if (r.elements === 0) problems.push(`${lens}: the board shows no element`);
      if (r.forbidden.length) problems.push(`${lens}: active elements ${JSON.stringify(r.forbidden.slice(0, 10))}`);
      if (r.attrs.length) problems.push(`${lens}: attributes ${JSON.stringify(r.attrs.slice(0, 10))}`);
      if (r.badHrefs.length) problems.push(`${lens}: links ${JSON.stringify(r.badHrefs.slice(0, 10))}`);
      if (r.documentFrames) problems.push(`${lens}: ${r.documentFrames} frame/object/embed element(s) in the document`);
      if (JSON.stringify(r.documentScripts) !== JSON.stringify(['_vscodeApiScript', 'dist/webview.js']))
        problems.push(`${lens}: the document's scripts are ${JSON.stringify(r.documentScripts)}, expected VS Code's API shim and the bundle`);
    }
    expect(problems.length === 0, `the boards hold something that could act:\n    ${problems.join('\n    ')}`);
  });

  await test('each payload that landed reads as text on Design; the 1 MiB string and the 500-deep structures are on screen', async () => {
    expect(shown, 'the boards were not read (see the previous test)');
    const refusedLabels = new Set(refusalsOf(models.requests, seats).flatMap((r) => [...(r.call?.input?.markdown ?? '').matchAll(/(?:^|\n\n)Payload ([\w-]+):/g)].map((m) => m[1])));
    const missing = labels.filter((l) => !shown.shown.includes(l) && !refusedLabels.has(l));
    rig.log(`hostile-render: ${shown.shown.length} of ${labels.length} payload labels on Design; refused by a board rule: ${JSON.stringify([...refusedLabels])}`);
    rig.log(`hostile-render: megabyte element ${shown.bigId} (${shown.bigLength} chars, in section ${shown.sectionId}): ${JSON.stringify(shown.bigSample)}`);
    rig.log(
      `hostile-render: deep list: ${shown.deepListDepth} <ul> drawn, last level shown ${shown.deepListLastLevel}, note ${JSON.stringify(shown.deepListNote)}, innermost texts shown ${JSON.stringify(shown.deepListInner)}; deep quote: ${shown.deepQuoteDepth} <blockquote> drawn, note ${JSON.stringify(shown.deepQuoteNote)}, innermost text shown ${shown.deepQuoteInner}`,
    );
    expect(missing.length === 0, `${missing.length} payload(s) neither refused by a board rule nor shown on Design: ${JSON.stringify(missing)}`);
    expect(
      refusedLabels.size <= 3 && !['megabyte', 'deep-list', 'deep-quote'].some((l) => refusedLabels.has(l)),
      `too much was refused before the webview saw it (${JSON.stringify([...refusedLabels])}): this scenario would prove little`,
    );
    // Past MARKDOWN_MAX_CHARS the panel shows the start as plain text and says how much more there is (all of it on request: see the responsiveness test).
    const megabyteChars = 'Payload megabyte: '.length + ONE_MB;
    const hidden = (megabyteChars - corpus.MARKDOWN_MAX_CHARS).toLocaleString('en-US');
    expect(
      shown.bigSample.includes(`<img src=x onerror='${canary}'>`) &&
        shown.bigNote === `… ${hidden} more characters not shown: too long to format` &&
        shown.bigShowAll === `Show all ${megabyteChars.toLocaleString('en-US')} characters as plain text`,
      `the 1 MiB element should show its start as text, then "… ${hidden} more characters not shown" and a Show all: ${shown.bigLength} chars, note ${JSON.stringify(shown.bigNote)}, button ${JSON.stringify(shown.bigShowAll)}, start ${JSON.stringify(shown.bigSample)}`,
    );
    // Nested past what the panel formats, a text shows whole as plain text, saying so: nothing past the nesting cap vanishes.
    const deepNote = 'Nested too deep to format: shown as plain text';
    expect(
      deepList.length < corpus.MARKDOWN_MAX_CHARS && shown.deepListNote === deepNote && shown.deepListInner.every(Boolean) && shown.deepQuoteNote === deepNote && shown.deepQuoteInner,
      `the ${DEEP_LEVELS}-deep list and quote should show whole, as plain text, with the note: ${JSON.stringify({ list: [shown.deepListNote, shown.deepListInner, shown.deepListDepth], quote: [shown.deepQuoteNote, shown.deepQuoteInner, shown.deepQuoteDepth], listChars: deepList.length })}`,
    );
    const text = await inner.locator('[data-testid="board"][data-lens="design"]').innerText({ timeout: 60_000 });
    // Entities decode to the characters they name, shown as text (never markup). (In this scenario's
    // own payloads `__pwned=` may read as Markdown emphasis, so their fragments skip it.)
    const want = [
      `<script>${canary}</script>`,
      `[click me](javascript:${canary})`,
      '[image: img]',
      '[open a shell](command:workbench.action.terminal.new)',
      `<iframe srcdoc="<script>${canary}</script>"></iframe>`,
      '[data link](data:text/html;base64,',
      'Payload entities: <script>window.',
      `fetch('http://127.0.0.1:${beacon.port}/entity')</script> <img src=x onerror=alert(1)>`,
      '<svg xmlns="http://www.w3.org/2000/svg"><script>window.',
      `fetch('http://127.0.0.1:${beacon.port}/svg-script')</script></svg>`,
    ];
    const absent = want.filter((w) => !text.includes(w));
    expect(absent.length === 0, `Design does not show ${JSON.stringify(absent)} as text`);
  });

  await test('screenshots: the corpus, the deep nesting and the megabyte as drawn', async () => {
    expect(shown?.bigId, 'the megabyte element was not found (see the previous test)');
    const design = '[data-testid="board"][data-lens="design"]';
    const prose = inner.locator(`${design} [data-testid="element"][data-kind="prose"]`);
    for (const [name, label] of [
      ['corpus', 'Payload corpus-00:'],
      ['corpus-links', 'Payload corpus-10:'],
      ['extras', 'Payload script-side-effect:'],
      ['extras-links', 'Payload md-javascript:'],
      ['deep-list', 'Payload deep-list:'],
      ['deep-quote', 'Payload deep-quote:'],
    ]) {
      await prose
        .filter({ hasText: label })
        .first()
        .scrollIntoViewIfNeeded({ timeout: 30_000 })
        .catch((e) => rig.log(`hostile-render: scroll to ${label}: ${e.message.split('\n')[0]}`));
      await rig.sleep(300);
      await screenshot(`design-${name}`);
    }
    await inner.locator(`${design} [data-testid="element"][data-id="${shown.bigId}"]`).scrollIntoViewIfNeeded({ timeout: 30_000 });
    await rig.sleep(300);
    await screenshot('design-megabyte');
    // Where the cut ends: the note and Show all.
    await inner.locator(`${design} [data-testid="element"][data-id="${shown.bigId}"] [data-testid="show-long-text"]`).scrollIntoViewIfNeeded({ timeout: 30_000 });
    await rig.sleep(300);
    await screenshot('design-megabyte-cut');
  });

  const clicks = [];
  await test('clicking every javascript:, data:, command: and vbscript: target where the board draws it does nothing', async () => {
    expect(generation, 'the boards did not arrive');
    const before = { url: inner.url(), tabs: await page.locator('.tabs-container .tab').count(), terminals: await terminalCount() };
    for (const lens of LENS_ORDER) {
      await selectLens(page, lens, { tolerateFoldFailures: true });
      await rig.sleep(300);
      const targets = await innerEval(markSchemeTargets, { limit: 80 });
      for (const t of targets) {
        state.phase = `click ${t.scheme}: on ${lens}`;
        const how = await inner
          .locator(`[data-rn-click="${t.index}"]`)
          .click({ position: t.position, timeout: 10_000 })
          .then(
            () => 'clicked',
            (e) => `not clicked: ${e.message.split('\n')[0]}`,
          );
        await rig.sleep(100);
        const after = await innerEval(readProbe).catch((e) => ({ error: e.message }));
        clicks.push({ lens, scheme: t.scheme, text: t.text, how, sameDocument: after?.mark === installed.mark, href: after?.href ?? null, pwned: after?.pwned ?? null });
      }
      await innerEval(() => document.querySelectorAll('[data-rn-click]').forEach((e) => e.removeAttribute('data-rn-click')));
      await screenshot(`clicked-${lens}`);
    }
    await rig.sleep(1_000);
    const bySchemes = {};
    for (const c of clicks) bySchemes[c.scheme] = (bySchemes[c.scheme] ?? 0) + 1;
    rig.log(`hostile-render: ${clicks.length} scheme targets clicked ${JSON.stringify(bySchemes)}; not clicked: ${JSON.stringify(clicks.filter((c) => c.how !== 'clicked'))}`);
    const after = { url: inner.url(), tabs: await page.locator('.tabs-container .tab').count(), terminals: await terminalCount() };
    const dialogBoxes = await page.locator('.monaco-dialog-box').filter({ visible: true }).count();
    const moved = clicks.filter((c) => !c.sameDocument || c.href !== installed.href || c.pwned !== null);
    const failed = clicks.filter((c) => c.how !== 'clicked');
    expect(clicks.length >= 10 && ['javascript', 'data', 'command'].every((s) => bySchemes[s] > 0), `too few targets drawn to click: ${JSON.stringify(bySchemes)}`);
    expect(failed.length === 0, `${failed.length} target(s) could not be clicked: ${JSON.stringify(failed.slice(0, 5))}`);
    expect(moved.length === 0, `after ${moved.length} click(s) the board frame was navigated, replaced or ran a script: ${JSON.stringify(moved.slice(0, 5))}`);
    expect(
      after.url === before.url && after.tabs === before.tabs && after.terminals === before.terminals && dialogBoxes === 0 && popups.length === 0 && dialogs.length === 0,
      `a click did something: frame ${before.url} → ${after.url}, editor tabs ${before.tabs} → ${after.tabs}, terminals ${before.terminals} → ${after.terminals}, workbench dialogs ${dialogBoxes}, pages ${JSON.stringify(popups)}, browser dialogs ${JSON.stringify(dialogs)}`,
    );
  });

  const timings = {};
  await test(`with the megabyte and the deep nesting on Design, a lens tab and a fold toggle show their change within ${RESPONSIVE_MS} ms (cut, then whole); a round trip into the frame stays under it`, async () => {
    expect(shown?.bigId && shown?.sectionId, 'the megabyte element or its section was not found');
    state.phase = 'responsiveness';
    const design = '[data-testid="board"][data-lens="design"]';
    const big = `${design} [data-testid="element"][data-id="${shown.bigId}"]`;
    const section = `${design} [data-testid="element"][data-kind="section"][data-id="${shown.sectionId}"]`;
    const toggle = `${section} [data-testid="fold-toggle"]`;
    const showAll = `${big} [data-testid="show-long-text"]`;
    const whole = `${big} [data-testid="long-text"]:not(:has(~ [data-testid="long-text-note"]))`;
    const limit = 30_000;
    /** Brings Design up with the megabyte's section unfolded (the unfolded sections are per lens). */
    const designUnfolded = async () => {
      await selectLens(page, 'design', { tolerateFoldFailures: true });
      await inner.locator(big).waitFor({ state: 'attached', timeout: 60_000 });
    };
    /** Lens away and back, fold and unfold, in the frame: the click to the first frame that shows the change. */
    const actsInFrame = async (label) => {
      const out = {};
      out.toSequence = await innerEval(clickUntil, { click: '[data-testid="lens-tab"][data-lens="sequence"]', until: '[data-testid="board"][data-lens="sequence"]', limit });
      out.toDesign = await innerEval(clickUntil, { click: '[data-testid="lens-tab"][data-lens="design"]', until: design, limit });
      if ((await inner.locator(big).count()) === 0) out.unfoldAfterLens = await innerEval(clickUntil, { click: toggle, until: big, limit });
      if (label === 'whole') {
        // The lens switch drops the Show all (it is the element's own state): show all again, then fold the whole megabyte away.
        out.showAllAgain = await innerEval(clickUntil, { click: showAll, until: whole, limit });
      }
      out.fold = await innerEval(clickUntil, { click: toggle, until: `${section}[data-expanded="false"]`, limit });
      out.unfold = await innerEval(clickUntil, { click: toggle, until: big, limit });
      return out;
    };

    await designUnfolded();
    const inFrame = { cut: await actsInFrame('cut') };
    // The same acts as a person makes them (Playwright's real clicks), timed from outside.
    const outside = {};
    const timed = async (name, act, until) => {
      const t0 = Date.now();
      await act();
      await until();
      outside[name] = Date.now() - t0;
    };
    await timed(
      'toSequence',
      () => inner.locator('[data-testid="lens-tab"][data-lens="sequence"]').click(),
      () => inner.locator('[data-testid="board"][data-lens="sequence"]').waitFor({ state: 'visible' }),
    );
    await timed(
      'toDesign',
      () => inner.locator('[data-testid="lens-tab"][data-lens="design"]').click(),
      () => inner.locator(design).waitFor({ state: 'visible' }),
    );
    if ((await inner.locator(big).count()) === 0)
      await timed(
        'unfoldAfterLens',
        () => inner.locator(toggle).click(),
        () => inner.locator(big).waitFor({ state: 'attached' }),
      );
    await timed(
      'fold',
      () => inner.locator(toggle).click(),
      () => inner.locator(`${section}[data-expanded="false"]`).waitFor({ state: 'attached' }),
    );
    await timed(
      'unfold',
      () => inner.locator(toggle).click(),
      () => inner.locator(big).waitFor({ state: 'attached' }),
    );

    // The whole megabyte on request, against what the frame takes to lay out the same text in a bare
    // paragraph, measured just before (twice: the first layout of a text also fills the shaping caches).
    const bareRuns = [];
    for (let i = 0; i < 2; i++) bareRuns.push(await innerEval(layoutBaseline, { selector: design, text: `Payload megabyte: ${megabyte}` }));
    const bare = { ms: Math.min(...bareRuns.map((r) => r.ms)), runs: bareRuns.map((r) => r.ms), height: bareRuns[0].height };
    inFrame.showAll = await innerEval(clickUntil, { click: showAll, until: whole, limit });
    const wholeLength = await inner
      .locator(whole)
      .evaluate((p) => p.textContent.length)
      .catch(() => 0);
    await inner.locator(big).scrollIntoViewIfNeeded();
    await screenshot('design-megabyte-whole');
    inFrame.whole = await actsInFrame('whole');

    // Round trips into the frame and into the workbench, and the frame's paint cadence while idle.
    const roundTrips = async (frame, n) => {
      const out = [];
      for (let i = 0; i < n; i++) {
        const t0 = Date.now();
        if (frame === inner) await innerEval(ping);
        else await frame.evaluate(ping);
        out.push(Date.now() - t0);
      }
      return out;
    };
    const frameTrips = await roundTrips(inner, 7);
    const pageTrips = await roundTrips(page.mainFrame(), 7);
    const gaps = await innerEval(frameGaps, { ms: 1_500 });
    const probe = await innerEval(readProbe);
    const longTasks = probe.longTasks;
    const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    Object.assign(timings, {
      inFrame,
      outside,
      bareLayout: bare,
      wholeLength,
      frameTrips,
      pageTrips,
      gaps,
      longTaskObserver: probe.longTaskObserver,
      longTasks: {
        count: longTasks.length,
        maxMs: longTasks.length ? Math.max(...longTasks.map((t) => t.ms)) : 0,
        totalMs: longTasks.reduce((a, t) => a + t.ms, 0),
        top: [...longTasks].sort((a, b) => b.ms - a.ms).slice(0, 8),
      },
    });
    rig.log(`hostile-render: responsiveness ${JSON.stringify(timings)}`);
    const acts = [
      ...Object.entries(inFrame.cut).map(([k, r]) => [`cut ${k}`, r]),
      ...Object.entries(inFrame.whole)
        .filter(([k]) => k !== 'showAllAgain')
        .map(([k, r]) => [`whole ${k}`, r]),
    ];
    const slow = acts.filter(([, r]) => r.ms === null || r.ms > RESPONSIVE_MS);
    expect(slow.length === 0, `in the frame, click → change shown took over ${RESPONSIVE_MS} ms: ${JSON.stringify(Object.fromEntries(slow))} (all: ${JSON.stringify(inFrame)})`);
    expect(wholeLength >= ONE_MB, `Show all did not show the whole megabyte: ${wholeLength} characters`);
    // Showing a megabyte on request costs its layout: at most three times the bare paragraph's, or RESPONSIVE_MS.
    const showAllBound = Math.max(RESPONSIVE_MS, 3 * bare.ms);
    expect(
      inFrame.showAll.ms !== null && inFrame.showAll.ms <= showAllBound,
      `Show all took ${JSON.stringify(inFrame.showAll)}; the frame lays out the same text in a bare paragraph in ${bare.ms} ms (bound ${showAllBound} ms)`,
    );
    expect(
      median(frameTrips) <= RESPONSIVE_MS && median(pageTrips) <= RESPONSIVE_MS,
      `round trips: into the board frame ${JSON.stringify(frameTrips)} ms, into the workbench ${JSON.stringify(pageTrips)} ms (median over ${RESPONSIVE_MS} ms)`,
    );
  });

  // --- The verdicts --------------------------------------------------------------------------
  state.phase = 'verdicts';
  await rig.sleep(500);

  let finalProbe = null;
  await test('no side effect anywhere: no __pwned in any frame, the titles unchanged, no message, no beacon request, no dialog, no new page, no terminal, no marker file', async () => {
    expect(inner, 'the board frame was never found');
    finalProbe = await innerEval(readProbe).catch((e) => ({ error: e.message }));
    const pw = await pwnedAnywhere();
    const outerMessages = await inner
      .parentFrame()
      .evaluate(readMessages)
      .catch((e) => `unreadable: ${e.message}`);
    const topMessages = await page.evaluate(readMessages).catch((e) => `unreadable: ${e.message}`);
    const title = await page.title();
    const terms = await terminalCount();
    const markers = markerFiles();
    rig.log(`hostile-render: board frame probe ${JSON.stringify({ ...finalProbe, violations: finalProbe?.violations?.length, longTasks: finalProbe?.longTasks?.length })}`);
    rig.log(
      `hostile-render: messages: board frame ${JSON.stringify(finalProbe?.messages)}, outer frame ${JSON.stringify(outerMessages)}, workbench ${JSON.stringify(topMessages)}; beacon ${JSON.stringify(beacon.hits)}; dialogs ${JSON.stringify(dialogs)}; pages ${JSON.stringify(popups)}; terminals ${terms}; markers ${JSON.stringify(markers)}; workbench title ${JSON.stringify(title)}`,
    );
    expect(
      finalProbe?.mark === installed.mark,
      `the board frame is no longer the document the probes went into (${JSON.stringify(finalProbe)}): it was reloaded or navigated, and its probes are gone`,
    );
    const problems = [];
    if (pw.length) problems.push(`__pwned set in ${JSON.stringify(pw)}`);
    if (finalProbe.title !== installed.title || title.includes(MARKER))
      problems.push(`titles: board frame ${JSON.stringify(installed.title)} → ${JSON.stringify(finalProbe.title)}, workbench ${JSON.stringify(workbenchTitle)} → ${JSON.stringify(title)}`);
    if (finalProbe.messages.length || !Array.isArray(outerMessages) || outerMessages.length || !Array.isArray(topMessages) || topMessages.length)
      problems.push(`messages: ${JSON.stringify({ frame: finalProbe.messages, outer: outerMessages, top: topMessages })}`);
    if (beacon.hits.length) problems.push(`the beacon got ${JSON.stringify(beacon.hits)}`);
    if (dialogs.length || popups.length) problems.push(`dialogs ${JSON.stringify(dialogs)}, pages ${JSON.stringify(popups)}`);
    if (terms) problems.push(`${terms} terminal(s)`);
    if (markers.length) problems.push(`marker files ${JSON.stringify(markers)}`);
    expect(problems.length === 0, `a payload had an effect:\n    ${problems.join('\n    ')}`);
  });

  await test("no payload script was compiled in the board frame (every script V8 compiled there is the bundle, VS Code's API shim, this scenario's or Playwright's)", async () => {
    expect(cdp && compiled.length > 0, 'the script recorder recorded nothing');
    // Every payload that is script carries a marker (__pwned, rennet-pwned, alert(, onerror); a
    // compiled script with one that is not this scenario's own function is a payload that ran or was
    // about to. The page's own scripts are named too, to show the recorder sees what the page compiles.
    const markers = /__pwned|rennet-pwned|alert\(|onerror|msgbox/;
    const classified = [];
    for (const c of compiled) {
      const source = await cdp.send('Debugger.getScriptSource', { scriptId: c.scriptId }).then(
        (r) => r.scriptSource,
        (e) => `(source unavailable: ${e.message})`,
      );
      const bare = source.replace(/^\(([\s\S]*)\)$/, '$1');
      let kind;
      if (c.url.endsWith('/dist/webview.js')) kind = 'bundle';
      else if (source.includes('globalThis.acquireVsCodeApi')) kind = 'vscode-api';
      else if (ownSources.has(source) || ownSources.has(bare)) kind = 'this scenario';
      else if (markers.test(source)) kind = 'names a payload';
      else kind = 'playwright and page helpers';
      classified.push({ ...c, kind, head: source.slice(0, 160) });
    }
    const counts = {};
    for (const c of classified) counts[c.kind] = (counts[c.kind] ?? 0) + 1;
    const hostile = classified.filter((c) => c.kind === 'names a payload');
    const others = [...new Set(classified.filter((c) => c.kind === 'playwright and page helpers').map((c) => c.head.replace(/\s+/g, ' ').slice(0, 70)))];
    rig.log(
      `hostile-render: scripts compiled in the board frame's main world: ${JSON.stringify(counts)}; the page's own: ${JSON.stringify(classified.filter((c) => c.kind === 'bundle' || c.kind === 'vscode-api').map((c) => ({ kind: c.kind, url: c.url.slice(-50), phase: c.phase })))}`,
    );
    rig.log(`hostile-render: the other evaluated scripts (Playwright's runtime and the page helpers' functions), distinct: ${JSON.stringify(others)}`);
    for (const u of hostile) rig.log(`hostile-render:   names a payload [${u.phase}] ${JSON.stringify({ url: u.url.slice(0, 120), length: u.length, head: u.head })}`);
    await cdp.send('Debugger.disable').catch(() => {});
    expect(
      counts.bundle === 1 && counts['vscode-api'] === 1,
      `the bundle and VS Code's API shim should each be recorded once (Debugger.enable replays the scripts compiled before it): counts ${JSON.stringify(counts)}`,
    );
    expect(
      hostile.length === 0,
      `${hostile.length} script(s) carrying a payload's marker were compiled in the board frame: ${JSON.stringify(hostile.slice(0, 5).map((u) => ({ phase: u.phase, url: u.url.slice(0, 100), head: u.head })))}`,
    );
  });

  await test("the CSP violation log: every entry is an enforced block (a blocked attempt), none is the webview's own", async () => {
    expect(finalProbe?.violations, 'the probe was not read (see the previous test)');
    const v = finalProbe.violations;
    rig.log(`hostile-render: CSP violations after the controls: ${v.length}${v.length ? `: ${JSON.stringify(v.slice(0, 20))}` : ''}`);
    const notEnforced = v.filter((x) => x.disposition !== 'enforce');
    expect(notEnforced.length === 0, `violations that were only reported, not blocked: ${JSON.stringify(notEnforced)}`);
    // A violation whose sample is not a payload's is Rennet's own code tripping its CSP.
    const own = v.filter((x) => !/pwned|alert|onerror|javascript|evil|127\.0\.0\.1/i.test(`${x.sample} ${x.blocked}`));
    expect(own.length === 0, `violations that no payload explains (the webview's own code against its CSP): ${JSON.stringify(own)}`);
  });

  await test('the panel still answers after everything: the rail reads five settled lenses', async () => {
    const rail = await board(page)
      .locator('[data-testid="lens-tab"]')
      .evaluateAll((els) => els.map((e) => `${e.getAttribute('data-lens')}:${e.getAttribute('data-state')}`));
    await screenshot('end');
    expect(JSON.stringify(rail) === JSON.stringify(LENS_ORDER.map((l) => `${l}:settled`)), `the rail reads ${JSON.stringify(rail)}`);
  });

  if (runner.results.slice(first).some((r) => !r.ok)) dumpDiagnostics({ label: 'hostile-render', cs, models, consoleErrors, codeServerLines: 40, rennetLogLines: 80 });
  await cdp?.detach().catch(() => {});
  await context?.close().catch(() => {});
  await cs?.stop();
  await models?.stop();
}
