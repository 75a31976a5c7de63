// End-to-end: the board's reading surfaces in a real VS Code (code-server + Chromium), drafted by
// Rennet's real pipeline against scripted model servers on 127.0.0.1 (test/servers/e2eReading.ts:
// the OpenAI-compatible wire format for four lenses, the Anthropic one for Flagged).
//
// Its own fixture repository, code-server profile and browser page, so nothing from the capture
// scenarios (run.mjs) leaks in. Called from run.mjs; `RENNET_E2E_SCENARIOS=reading` runs only this.
//
// What it checks: the rail's five lenses in canonical order, each settled; a Sequence code card
// with the captured lines git has; Flagged findings whose agreement marks say what really ran (one
// Anthropic review, so every finding is solo: split, "claude 1/1", no codex tally); a code card opening
// its file with the cited lines selected; the lens marks in that editor's gutter; a line comment
// staged through VS Code's own comment UI, kept across a host restart and undone; Request change
// on a finding and the panel's Undo (staged count, mark, open count); a finding's comment thread in
// the editor dismissed and restored from its title actions; a mouse selection of board prose and
// Explain answered by a scripted explainer whose prompt never carries the quote; Open Changes as a
// diff of two rennet-blob documents with the lens marks on its head side.
// Screenshots: test/e2e/artifacts/reading-NN-*.png (full page), artifacts/docs/*.png (regions).
import fs from 'node:fs';
import path from 'node:path';
import * as rig from './rig.mjs';
import {
  LENS_ORDER,
  board,
  collapseSelectionOnLine,
  dumpDiagnostics,
  editorOf,
  openCommentWidget,
  scenarioKit,
  selectLens,
  visibleLineTops,
  waitForTerminalGeneration,
  watchConsole,
} from './boardPage.mjs';
import { diffHunks, makeFixtureRepo, uncitedHunkCount } from './fixture.mjs';
import { harnessSettings, startModelServers } from './modelServers.mjs';

const { expect } = rig;
const LENS_TITLES = { design: 'Design', sequence: 'Sequence', decisions: 'Decisions', flagged: 'Flagged', noise: 'Noise' };
const COMMENT_TEXT = 'Say why line five changes here.';

/**
 * The findings the Flagged compiler writes (origin/agreement as the board tools take them). The
 * settings give Flagged one review harness (anthropic, origin claude), so the compiler may claim
 * nothing but solo findings from that review: the writer refuses a concur with no codex review.
 */
const FINDINGS = [
  { origin: 'claude', agreement: 'solo', title: 'Callers match the old text' },
  { origin: 'claude', agreement: 'solo', title: 'The inserted lines are not covered by a test' },
];

// ---------------------------------------------------------------------------------------------
// The citation plan: which changed lines each lens cites, taken from git's own hunks.

/** The first and last added line of a hunk (head side). */
function addedSpan(hunk) {
  const adds = hunk.lines.filter((l) => l.kind === 'add').map((l) => l.new);
  return { start: Math.min(...adds), end: Math.max(...adds) };
}

/** Contiguous runs of added lines (head side). */
function addedRuns(hunk) {
  const runs = [];
  for (const l of hunk.lines) {
    if (l.kind !== 'add') continue;
    const last = runs[runs.length - 1];
    if (last && last.end === l.new - 1) last.end = l.new;
    else runs.push({ start: l.new, end: l.new });
  }
  return runs;
}

/**
 * Design cites the added file, Sequence both hunks of src/app.js, Decisions the renamed file's
 * edit, Flagged the two lines inserted in src/app.js; what nobody cites is Noise.
 */
export function readingPlan(hunks) {
  const file = (p) => {
    const f = hunks.get(p);
    if (!f) throw new Error(`fixture: git shows no hunks for ${p}; it shows ${JSON.stringify([...hunks.keys()])}`);
    return f;
  };
  const app = file('src/app.js');
  expect(app.hunks.length === 2, `fixture: src/app.js should have two hunks, git shows ${app.hunks.length}`);
  const head = (p, span) => ({ path: p, side: 'head', start: span.start, end: span.end });
  const inserted = addedRuns(app.hunks[1]).at(-1);
  const plan = {
    design: [head('src/new feature.js', addedSpan(file('src/new feature.js').hunks[0]))],
    sequence: [head('src/app.js', addedSpan(app.hunks[0])), head('src/app.js', addedSpan(app.hunks[1]))],
    decisions: [head('docs/new-name.md', addedSpan(file('docs/new-name.md').hunks[0]))],
    flagged: [head('src/app.js', inserted)],
    findings: FINDINGS,
    // Every explainer reads the quote, then the first hunk of src/app.js, and answers citing its changed lines.
    explain: {
      excerpt: head('src/app.js', addedSpan(app.hunks[0])),
      answer:
        `Callers read the changed line first: src/app.js:${addedSpan(app.hunks[0]).start} now ends in "(changed)", ` +
        `and src/app.js:${addedSpan(app.hunks[0]).end} follows the same pattern, so the step's claim rests on those two lines.`,
    },
    review: `# Findings\n\n- src/app.js:${inserted.start}-${inserted.end} inserts two lines that callers matching the old text do not expect.\n`,
    noiseMembers: 0,
  };
  // Noise: every hunk no core lens cites.
  plan.noiseMembers = uncitedHunkCount(hunks, [...plan.design, ...plan.sequence, ...plan.decisions, ...plan.flagged]);
  return plan;
}

// ---------------------------------------------------------------------------------------------

export async function runReading({ paths, vsix, runner, browser }) {
  let page = null;
  let cs = null;
  let models = null;
  const consoleErrors = [];
  const { screenshot, test } = scenarioKit({ label: 'reading', runner, page: () => page });
  const requestCount = () => models?.requests.length ?? 0;

  /**
   * A small PNG of one region for docs/screenshots/ (test/e2e/artifacts/docs/<name>.png): the
   * editor area, or one editor group, cut to `maxWidth` × `maxHeight` CSS pixels.
   */
  async function docShot(name, { group = null, maxWidth = 1300, maxHeight = 1000, top = null } = {}) {
    if (!page) return;
    const target = group === null ? page.locator('.part.editor').first() : page.locator('.part.editor .editor-group-container').nth(group);
    const box = await target.boundingBox().catch(() => null);
    if (!box) return rig.log(`doc screenshot ${name}: no region`);
    fs.mkdirSync(path.join(rig.ARTIFACTS, 'docs'), { recursive: true });
    // `top`: a page y inside the region to start from (the default is the region's top).
    const y = top === null ? box.y : Math.min(Math.max(box.y, top), box.y + box.height - 1);
    const clip = { x: box.x, y, width: Math.min(box.width, maxWidth), height: Math.min(box.y + box.height - y, maxHeight) };
    await page.screenshot({ path: path.join(rig.ARTIFACTS, 'docs', `${name}.png`), clip, scale: 'css' }).catch((e) => rig.log(`doc screenshot ${name}: ${e.message}`));
  }

  /**
   * The active editor tab's aria-label ("app.js, preview, Editor Group 2": the file name comes
   * first) and the status bar's "Ln N, Col M (K selected)".
   */
  async function activeEditor() {
    const aria = await page
      .locator('.part.editor .tabs-container .tab.active')
      .last()
      .getAttribute('aria-label', { timeout: 2_000 })
      .catch(() => null);
    const status = await page
      .locator('[id="status.editor.selection"]')
      .innerText({ timeout: 2_000 })
      .catch(() => null);
    return { aria, status };
  }

  /**
   * The glyph-margin decorations of an editor: per element its top, the lenses whose gutter icon
   * decoration class it carries, and the lenses of the icon actually drawn (its computed background
   * image). An icon is `lens-<lens>.svg`, or for a line several lenses cite one combined icon named
   * by them all, `lens-sequence_lens-flagged.svg` (VS Code draws one icon per line).
   */
  async function glyphMarks(editor) {
    return editor.evaluate((ed) => {
      const lensesOf = (text) => {
        const m = /((?:lens-[a-z]+_)*lens-[a-z]+)\.svg/.exec(text ?? '');
        return m ? m[1].split('_').map((part) => part.slice('lens-'.length)) : [];
      };
      const lensesOfClass = new Map();
      for (const sheet of document.styleSheets) {
        let rules = [];
        try {
          rules = [...sheet.cssRules];
        } catch {}
        for (const r of rules) {
          const lenses = lensesOf(r.cssText);
          const cls = [...(r.selectorText ?? '').matchAll(/\.([\w-]+)/g)].at(-1)?.[1];
          if (lenses.length && cls) lensesOfClass.set(cls, lenses);
        }
      }
      const rows = [];
      for (const g of ed.querySelectorAll('.cgmr')) {
        const lenses = [...g.classList].flatMap((c) => lensesOfClass.get(c) ?? []);
        const shown = lensesOf(getComputedStyle(g).backgroundImage);
        if (!lenses.length && !shown.length) continue;
        const holder = g.style.top ? g : g.parentElement;
        rows.push({ top: parseFloat(holder?.style.top || '0'), lenses, shown, classes: g.className });
      }
      return rows;
    });
  }

  /** Pids of the Rennet hosts the output channel reported running, in order. */
  function hostPids() {
    const pids = [];
    for (const f of cs?.logsMatching(/^(\d+-)?Rennet\.log$/i) ?? []) {
      for (const m of fs.readFileSync(f, 'utf8').matchAll(/Rennet host \S+ running \(pid (\d+)/g)) pids.push(Number(m[1]));
    }
    return pids;
  }

  /**
   * The lines comment zone widgets sit under: VS Code inserts an open thread's widget below its
   * last line, so those are the visible lines followed by a gap taller than a line.
   */
  async function threadLines(editor) {
    const tops = await visibleLineTops(editor);
    const lines = Object.keys(tops)
      .map(Number)
      .sort((a, b) => a - b);
    const height = Math.min(...lines.slice(1).map((n, i) => tops[n] - tops[lines[i]]));
    const gaps = lines.slice(0, -1).filter((n, i) => tops[lines[i + 1]] - tops[n] > height * 1.5);
    return gaps;
  }

  const first = runner.results.length;
  const work = rig.mkTmp('rennet-reading-');
  const repo = makeFixtureRepo(path.join(work, 'reading repo'));
  const hunks = diffHunks(repo, { base: 'main', head: 'feature' });
  const plan = readingPlan(hunks);
  const appText = fs.readFileSync(path.join(repo, 'src/app.js'), 'utf8').split('\n');
  rig.log(`reading: fixture ${repo}; plan ${JSON.stringify({ ...plan, review: undefined })}`);

  await test('the model servers answer on 127.0.0.1 and the workbench opens with Rennet pointed at them', async () => {
    models = await startModelServers({ script: 'e2eReading.ts', plan, dir: work, label: 'reading' });
    for (const url of [models.openaiBaseUrl, models.anthropicOrigin]) expect(/^http:\/\/127\.0\.0\.1:\d+/.test(url), `a model server is not on loopback: ${url}`);
    const listed = await fetch(`${models.openaiBaseUrl}/models`).then((r) => r.json());
    expect(listed?.data?.[0]?.id === models.model, `GET /v1/models answers ${JSON.stringify(listed)}`);
    cs = await rig.startCodeServer({
      paths,
      name: 'reading',
      vsixes: [vsix],
      settings: {
        ...harnessSettings(models),
        // The fixture's .js files are lines of text, not JavaScript: keep the editor free of squiggles.
        'javascript.validate.enable': false,
      },
    });
    page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    watchConsole(page, consoleErrors);
    await rig.openWorkbench(page, cs, repo);
    await page.locator('.explorer-folders-view .monaco-list-row', { hasText: 'src' }).first().waitFor({ timeout: 30_000 });
    await screenshot('workbench');
  });

  let generation = null;
  await test('Review Branch, then Draft Boards: the rail shows Design, Sequence, Decisions, Flagged, Noise, each settled', async () => {
    expect(page, 'the workbench did not open (see the previous test)');
    await rig.runCommand(page, 'Rennet: Review Branch');
    await rig.pickQuickPick(page, 'Branch to review', 'feature');
    await rig.pickQuickPick(page, 'Base to compare with', 'main');
    await page.locator('.tabs-container .tab', { hasText: 'Rennet · feature vs main' }).first().waitFor({ timeout: 90_000 });
    await board(page).locator('[data-testid="patchset-header"]').waitFor({ state: 'visible', timeout: 90_000 });
    // Opening a review drafts its boards once; Draft Boards then drafts a new generation.
    const opened = await waitForTerminalGeneration(page, { what: 'after Review Branch', requestCount });
    await screenshot('first-generation');
    const requestsBefore = models.requests.length;
    await rig.runCommand(page, 'Rennet: Draft Boards');
    generation = await waitForTerminalGeneration(page, { previous: opened.id, what: 'after Draft Boards', requestCount });
    await rig.sleep(300);
    await screenshot('rail-settled');
    await docShot('lens-rail', { maxHeight: 560 });
    const rail = generation.rail;
    rig.log(`reading: rail ${rail.map((t) => `${t.title}=${t.state}`).join(', ')}`);
    expect(
      JSON.stringify(rail.map((t) => t.lens)) === JSON.stringify(LENS_ORDER),
      `the rail's lenses are ${JSON.stringify(rail.map((t) => t.lens))}, canonical order is ${JSON.stringify(LENS_ORDER)}`,
    );
    expect(JSON.stringify(rail.map((t) => t.title)) === JSON.stringify(LENS_ORDER.map((l) => LENS_TITLES[l])), `the rail's titles are ${JSON.stringify(rail.map((t) => t.title))}`);
    const unsettled = rail.filter((t) => t.state !== 'settled' || !/settled/.test(t.words ?? ''));
    expect(unsettled.length === 0, `every lens should settle on the scripted models; not settled: ${JSON.stringify(unsettled)}`);
    // The second generation was drafted by the scripted servers: every seat asked again.
    const seats = new Set(models.requests.slice(requestsBefore).map((r) => `${r.server} ${r.seat?.replace(/@\d+$/, '')}`));
    for (const want of ['openai design:drafter', 'openai sequence:drafter', 'openai decisions:drafter', 'anthropic flagged:reviewer', 'anthropic flagged:compiler', 'openai noise:drafter']) {
      expect(seats.has(want), `Draft Boards should have asked the ${want.split(' ')[0]} server for ${want.split(' ')[1]}; it asked ${JSON.stringify([...seats])}`);
    }
    const unresolved = models.requests.filter((r) => r.unresolved.length > 0);
    expect(unresolved.length === 0, `scripted ids did not resolve: ${JSON.stringify(unresolved)}`);
    // Every lens seat read the change before it wrote: its third request resends read_diff's answer,
    // which carries the head lines git shows for the file it cites (the checkout is not consulted).
    const readOf = {
      'design:drafter': plan.design,
      'sequence:drafter': plan.sequence,
      'decisions:drafter': plan.decisions,
      'flagged:reviewer': plan.flagged,
      'flagged:compiler': plan.flagged,
      'noise:drafter': plan.sequence,
    };
    for (const [seat, ranges] of Object.entries(readOf)) {
      const file = ranges[0].path;
      const added = hunks
        .get(file)
        .hunks.flatMap((h) => h.lines)
        .filter((l) => l.kind === 'add')
        .map((l) => `${String(l.new).padStart(5)} | ${l.text}`);
      const answered = models.requests.filter((r) => r.seat === `${seat}@2`).map((r) => (r.toolResults ?? []).at(-1) ?? '');
      expect(answered.length > 0, `${seat} made no request after its read_diff call`);
      const read = answered.find((t) => added.some((line) => t.includes(line)));
      expect(read, `${seat}: the read_diff result resent to the model does not carry ${file}'s added lines as git shows them: ${JSON.stringify(answered[0]?.slice(0, 300))}`);
    }
    // The seats' context folder lives in the repository (git-excluded) and is hidden from the
    // Explorer by the extension's configurationDefaults (files.exclude **/.rennet).
    expect(fs.existsSync(path.join(repo, '.rennet')), 'the run wrote no .rennet context folder, so the Explorer check below would prove nothing');
    const rows = (await page.locator('.explorer-folders-view .monaco-list-row').allInnerTexts()).map((r) => r.trim());
    expect(rows.includes('src') && !rows.includes('.rennet'), `the Explorer should list src and not .rennet: ${JSON.stringify(rows)}`);
  });

  const sequenceCite = plan.sequence[0];
  await test('Sequence shows a code card with the captured lines git has', async () => {
    expect(generation, 'no settled generation (see the previous test)');
    await selectLens(page, 'sequence');
    const card = board(page).locator(`[data-testid="code-card"][data-path="${sequenceCite.path}"][data-start="${sequenceCite.start}"][data-end="${sequenceCite.end}"]`).first();
    await card.waitFor({ state: 'visible', timeout: 15_000 }).catch(async () => {
      const cards = await board(page)
        .locator('[data-testid="code-card"]')
        .evaluateAll((els) => els.map((e) => `${e.dataset.path}:${e.dataset.start}-${e.dataset.end}`));
      throw new Error(`Sequence shows no code card for ${sequenceCite.path}:${sequenceCite.start}-${sequenceCite.end}; cards: ${JSON.stringify(cards)}`);
    });
    await card.scrollIntoViewIfNeeded();
    await screenshot('sequence-code-card');
    await docShot('sequence-code-card', { maxWidth: 920 });
    const shown = await card.locator('[data-testid="code-line"]').evaluateAll((els) =>
      els.map((e) => {
        const num = (...names) => {
          for (const n of names) {
            const v = e.getAttribute(n);
            if (v !== null && v !== '') return Number(v);
          }
          return null;
        };
        return {
          kind: e.getAttribute('data-kind'),
          old: num('data-old'),
          new: num('data-new'),
          cited: e.getAttribute('data-cited') === 'true',
          text: (e.querySelector('[data-testid="code-line-text"]') ?? e.querySelector('code') ?? e).textContent.replace(/\s+$/, ''),
        };
      }),
    );
    rig.log(`reading: code lines ${JSON.stringify(shown)}`);
    expect(shown.length > 0, `the code card ${sequenceCite.path}:${sequenceCite.start}-${sequenceCite.end} shows no [data-testid="code-line"]`);
    // Every line is git's: same kind, same numbers, its text ends the shown text (a gutter may precede it).
    const gitLines = hunks.get(sequenceCite.path).hunks.flatMap((h) => h.lines);
    const problems = [];
    for (const line of shown) {
      const match = gitLines.find((g) => g.kind === line.kind && g.old === line.old && g.new === line.new);
      if (!match) problems.push(`no ${line.kind} line old ${line.old} new ${line.new} in git's hunks: ${JSON.stringify(line)}`);
      else if (!line.text.endsWith(match.text)) problems.push(`line old ${line.old} new ${line.new} shows ${JSON.stringify(line.text)}, git has ${JSON.stringify(match.text)}`);
    }
    // Every added line of the cited range is there, and the kinds cover add, del and context.
    for (const g of gitLines.filter((l) => l.kind === 'add' && l.new >= sequenceCite.start && l.new <= sequenceCite.end)) {
      if (!shown.some((s) => s.kind === 'add' && s.new === g.new)) problems.push(`added line ${g.new} (${JSON.stringify(g.text)}) is cited but not shown`);
    }
    // The cited lines are marked as such: every shown head line in the range, and none outside it.
    for (const s of shown.filter((l) => l.new !== null)) {
      const inRange = s.new >= sequenceCite.start && s.new <= sequenceCite.end;
      if (s.cited !== inRange) problems.push(`head line ${s.new} is ${s.cited ? '' : 'not '}marked cited (data-cited), the citation is ${sequenceCite.start}-${sequenceCite.end}`);
    }
    for (const kind of ['add', 'del', 'context']) if (!shown.some((s) => s.kind === kind)) problems.push(`no ${kind} line shown (git has all three in ${sequenceCite.start}-${sequenceCite.end})`);
    expect(problems.length === 0, `code card lines disagree with git:\n    ${problems.join('\n    ')}`);
  });

  await test('Flagged shows its findings with agreement marks naming only the review that ran', async () => {
    expect(generation, 'no settled generation (see the previous test)');
    await selectLens(page, 'flagged');
    const findings = board(page).locator('[data-testid="element"][data-kind="finding"]');
    await findings.first().waitFor({ state: 'visible', timeout: 15_000 });
    const read = await findings.evaluateAll((els) =>
      els.map((e) => {
        const t = (id) => e.querySelector(`[data-testid="${id}"]`)?.textContent?.replace(/\s+/g, ' ').trim() ?? null;
        return {
          title: e.querySelector('.rn-finding-title')?.textContent?.replace(/\s+/g, ' ').trim() ?? null,
          accord: e.querySelector('[data-testid="accord"]')?.getAttribute('data-accord') ?? null,
          accordText: t('accord'),
          meta: e.querySelector('.rn-finding-meta')?.textContent?.replace(/\s+/g, ' ').trim() ?? null,
          concurrence: t('concurrence'),
          raisedBy: t('raised-by'),
          severity: t('severity'),
          anchors: [...e.querySelectorAll('[data-testid="code-card"]')].map((c) => `${c.dataset.path}:${c.dataset.start}-${c.dataset.end}`),
        };
      }),
    );
    await findings.first().scrollIntoViewIfNeeded();
    await screenshot('flagged-finding');
    await docShot('flagged-findings', { maxWidth: 920 });
    rig.log(`reading: findings ${JSON.stringify(read)}`);
    const anchor = `${plan.flagged[0].path}:${plan.flagged[0].start}-${plan.flagged[0].end}`;
    // One review ran (claude): every mark says exactly that, and nothing names a codex review.
    const want = FINDINGS.map((f) => ({ title: f.title, accord: 'split', accordText: 'solo', concurrence: 'claude 1/1' }));
    const problems = [];
    for (const w of want) {
      const f = read.find((r) => r.title?.endsWith(w.title));
      if (!f) {
        problems.push(`no finding titled ${JSON.stringify(w.title)}`);
        continue;
      }
      if (f.accord !== w.accord || f.accordText !== w.accordText)
        problems.push(`${JSON.stringify(w.title)}: accord ${JSON.stringify(f.accord)} reading ${JSON.stringify(f.accordText)}, expected ${w.accord} reading ${w.accordText}`);
      if (/codex/i.test(f.meta ?? '')) problems.push(`${JSON.stringify(w.title)}: its marks name codex, and no codex review ran: ${JSON.stringify(f.meta)}`);
      if (f.concurrence !== w.concurrence) problems.push(`${JSON.stringify(w.title)}: concurrence ${JSON.stringify(f.concurrence)}, expected ${JSON.stringify(w.concurrence)}`);
      if (f.raisedBy !== 'raised by claude') problems.push(`${JSON.stringify(w.title)}: ${JSON.stringify(f.raisedBy)}, expected "raised by claude"`);
      if (!f.anchors.includes(anchor)) problems.push(`${JSON.stringify(w.title)}: anchored at ${JSON.stringify(f.anchors)}, expected ${anchor}`);
    }
    expect(read.length === want.length, `${read.length} findings shown, the compiler wrote ${want.length}: ${JSON.stringify(read)}`);
    expect(problems.length === 0, `Flagged findings:\n    ${problems.join('\n    ')}`);
  });

  await test('a code card opens its file in the editor with the cited lines selected', async () => {
    expect(generation, 'no settled generation (see the previous test)');
    await selectLens(page, 'sequence');
    const card = board(page).locator(`[data-testid="code-card"][data-path="${sequenceCite.path}"][data-start="${sequenceCite.start}"][data-end="${sequenceCite.end}"]`).first();
    await card.locator('[data-testid="code-card-file"]').click();
    const fileName = path.basename(sequenceCite.path);
    await page
      .locator('.part.editor .tabs-container .tab.active', { hasText: fileName })
      .first()
      .waitFor({ timeout: 15_000 })
      .catch(async () => {
        const tabs = await page
          .locator('.tabs-container .tab .label-name')
          .allInnerTexts()
          .catch(() => []);
        throw new Error(`clicking the code card's file opened no "${fileName}" editor; tabs: ${JSON.stringify(tabs)}`);
      });
    // The selection is start..end of the cited lines: the cursor ends on the last one.
    const selectedChars = appText.slice(sequenceCite.start - 1, sequenceCite.end).join('\n').length;
    const wantStatus = new RegExp(`^Ln ${sequenceCite.end}, Col ${appText[sequenceCite.end - 1].length + 1} \\(${selectedChars} selected\\)$`);
    let ed = await activeEditor();
    for (let i = 0; i < 20 && !wantStatus.test(ed.status ?? ''); i++) {
      await rig.sleep(250);
      ed = await activeEditor();
    }
    await screenshot('citation-opened');
    rig.log(`reading: active editor ${JSON.stringify(ed)}`);
    expect((ed.aria ?? '').split(',')[0].trim() === fileName, `the active editor tab is ${JSON.stringify(ed)}, expected ${fileName}`);
    expect(wantStatus.test(ed.status ?? ''), `the status bar says ${JSON.stringify(ed.status)}, expected ${wantStatus} (lines ${sequenceCite.start}-${sequenceCite.end} selected)`);
    const tops = await visibleLineTops(editorOf(page));
    for (let n = sequenceCite.start; n <= sequenceCite.end; n++) expect(n in tops, `line ${n} is not visible in the editor (visible: ${Object.keys(tops).join(',')})`);
  });

  await test('the cited lines carry a lens mark in the editor gutter', async () => {
    expect(generation, 'no settled generation (see the previous test)');
    const editor = editorOf(page);
    let marks = [];
    for (let i = 0; i < 40; i++) {
      marks = await glyphMarks(editor);
      if (marks.some((m) => m.lenses.length > 0)) break;
      await rig.sleep(250);
    }
    await screenshot('gutter-marks');
    await docShot('citation-in-editor', { maxHeight: 560 });
    const tops = await visibleLineTops(editor);
    const lineAt = (top) => Number(Object.entries(tops).find(([, t]) => Math.abs(t - top) < 2)?.[0] ?? NaN);
    const byLine = {};
    const shownByLine = {};
    for (const m of marks) {
      const n = lineAt(m.top);
      for (const lens of m.lenses) (byLine[n] ??= new Set()).add(lens);
      for (const lens of m.shown) (shownByLine[n] ??= new Set()).add(lens);
    }
    const show = (o) => JSON.stringify(Object.fromEntries(Object.entries(o).map(([l, v]) => [l, [...v]])));
    rig.log(`reading: gutter decorations per line ${show(byLine)}; icon drawn per line ${show(shownByLine)}`);
    expect(marks.length > 0, `no glyph-margin element with a lens-*.svg decoration in the ${path.basename(sequenceCite.path)} editor`);
    const problems = [];
    const cited = {};
    for (const lens of ['sequence', 'flagged']) for (const c of plan[lens]) if (c.path === sequenceCite.path) for (let n = c.start; n <= c.end; n++) (cited[n] ??= new Set()).add(lens);
    for (const [n, lenses] of Object.entries(cited)) {
      if (!(n in tops)) continue;
      for (const lens of lenses) if (!byLine[n]?.has(lens)) problems.push(`line ${n} is cited by ${lens} but carries ${JSON.stringify([...(byLine[n] ?? [])])}`);
      // One icon per line: on a line several lenses cite, it is the icon combining them all.
      for (const lens of lenses)
        if (!shownByLine[n]?.has(lens)) problems.push(`line ${n} is cited by ${[...lenses].join(' and ')}, but the icon drawn there shows ${JSON.stringify([...(shownByLine[n] ?? [])])}`);
    }
    for (const n of Object.keys(tops)) if (!cited[n] && byLine[n]) problems.push(`line ${n} is cited by no lens but carries ${JSON.stringify([...byLine[n]])}`);
    expect(problems.length === 0, `gutter marks:\n    ${problems.join('\n    ')}`);
  });

  await test('a line comment staged in the editor survives a host restart and is undone', async () => {
    expect(generation, 'no settled generation (see the previous test)');
    const editor = editorOf(page);
    const line = plan.sequence[0].start;
    // Put the cursor on the line first: with the cited range still selected, VS Code would open the
    // comment on the whole selection instead of the one line.
    await collapseSelectionOnLine(page, editor, line);
    const collapsed = new RegExp(`^Ln ${line}, Col \\d+$`);
    let cursor = await activeEditor();
    for (let i = 0; i < 20 && !collapsed.test(cursor.status ?? ''); i++) {
      await rig.sleep(150);
      cursor = await activeEditor();
    }
    expect(collapsed.test(cursor.status ?? ''), `clicking line ${line} should leave the cursor there with nothing selected; the status bar says ${JSON.stringify(cursor.status)}`);
    const widget = await openCommentWidget(page, editor, line, { label: 'reading', onHover: () => screenshot('comment-plus'), onRetried: () => screenshot('comment-click-retried') });
    await widget.locator('.comment-form .monaco-editor .view-lines').first().click();
    await page.keyboard.type(COMMENT_TEXT);
    // Monaco draws typed text on a later frame: read until it is all there (or time runs out).
    const commentLines = widget.locator('.comment-form .monaco-editor .view-lines').first();
    let typed = await commentLines.innerText();
    for (let i = 0; i < 20 && !typed.replace(/\s+/g, ' ').includes(COMMENT_TEXT); i++) {
      await rig.sleep(100);
      typed = await commentLines.innerText();
    }
    await screenshot('comment-typed');
    await docShot('comment-box', { group: 1, maxHeight: 480 });
    expect(typed.replace(/\s+/g, ' ').includes(COMMENT_TEXT), `the comment box shows ${JSON.stringify(typed)} after typing`);
    const stage = widget.locator('.form-actions .monaco-button, .form-actions button', { hasText: 'Stage Ask' }).first();
    await stage.waitFor({ state: 'visible', timeout: 10_000 }).catch(async () => {
      const buttons = await widget
        .locator('.monaco-button, button')
        .allInnerTexts()
        .catch(() => []);
      throw new Error(`the comment form has no "Stage Ask" button; it has ${JSON.stringify(buttons)}`);
    });
    await stage.click();
    // The draft box holds the text too until the staged thread replaces it: wait for the thread's label.
    const thread = page.locator('.review-widget').filter({ hasText: COMMENT_TEXT }).filter({ hasText: 'Staged ask' });
    await thread
      .first()
      .waitFor({ state: 'visible', timeout: 15_000 })
      .catch(() => {});
    await rig.sleep(300);
    await screenshot('comment-staged');
    const drawn = page.locator('.review-widget').filter({ hasText: COMMENT_TEXT });
    const text = (
      await drawn
        .first()
        .innerText({ timeout: 2_000 })
        .catch(() => '(no widget holds the comment)')
    ).replace(/\s+/g, ' ');
    expect(/Staged ask · comment/.test(text), `the staged thread should say "Staged ask · comment"; it shows ${JSON.stringify(text.slice(0, 300))}`);
    const under = await threadLines(editor);
    expect(
      under.includes(line) && !under.some((n) => n > line && n <= sequenceCite.end),
      `the staged thread should sit below line ${line} alone (the one line commented); widgets sit below lines ${JSON.stringify(under)}`,
    );

    const pidBefore = hostPids().at(-1);
    expect(pidBefore, 'the Rennet log names no running host pid before the restart');

    await rig.runCommand(page, 'Rennet: Restart Host');
    // The host is back when it says so (a new pid); the thread must still be drawn then.
    let pidAfter = null;
    for (let i = 0; i < 120 && !pidAfter; i++) {
      pidAfter = hostPids().find((p, idx, all) => idx > all.lastIndexOf(pidBefore) && p !== pidBefore) ?? null;
      if (!pidAfter) await rig.sleep(250);
    }
    expect(pidAfter, `"Rennet: Restart Host" started no new host within 30 s (pids in the log: ${JSON.stringify(hostPids())})`);
    rig.log(`reading: host restarted, pid ${pidBefore} → ${pidAfter}`);
    await rig.sleep(1_000);
    await page
      .locator('.review-widget')
      .filter({ hasText: COMMENT_TEXT })
      .first()
      .waitFor({ state: 'visible', timeout: 30_000 })
      .catch(() => {
        throw new Error('after "Rennet: Restart Host" the staged thread is gone');
      });
    await screenshot('comment-after-restart');
    await docShot('staged-ask', { group: 1, maxHeight: 480 });
    const underAfter = await threadLines(editor);
    expect(underAfter.includes(line), `after the restart no thread widget sits below line ${line}; widgets sit below lines ${JSON.stringify(underAfter)}`);

    await rig.runCommand(page, 'Rennet: Undo Last Ask Action');
    const gone = await page
      .waitForFunction((t) => ![...document.querySelectorAll('.review-widget')].some((w) => w.offsetParent && w.textContent.includes(t)), COMMENT_TEXT, { timeout: 15_000 })
      .then(
        () => true,
        () => false,
      );
    await screenshot('comment-undone');
    expect(gone, 'after "Rennet: Undo Last Ask Action" the staged thread is still shown');
  });

  // ---------------------------------------------------------------------------------------------
  // Acts on findings, finding threads in the editor, Explain, Open Changes.

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
   * What the panel says about asks: the staged count (asks-count), the Flagged tab's and the
   * Flagged board's open counts, and per finding its title, marks and which acts it offers.
   */
  async function askState() {
    // One read of the document, so the counts and marks are of one render.
    return board(page)
      .locator('body')
      .evaluate(
        (body) => {
          const count = (id) => {
            const v = body.querySelector(`[data-testid="${id}"]`)?.getAttribute('data-count');
            return v == null ? null : Number(v);
          };
          return {
            staged: count('asks-count'),
            stagedText: body.querySelector('[data-testid="asks-count"]')?.textContent?.trim() ?? null,
            open: count('open-count'),
            boardOpen: count('board-open-count'),
            findings: [...body.querySelectorAll('[data-testid="element"][data-kind="finding"]')].map((e) => ({
              title: e.querySelector('.rn-finding-title')?.textContent?.replace(/\s+/g, ' ').trim() ?? null,
              states: [...e.querySelectorAll('[data-testid="finding-state"]')].map((x) => x.getAttribute('data-state')),
              dismissed: e.hasAttribute('data-dismissed'),
              dismiss: Boolean(e.querySelector('[data-testid="finding-dismiss"]')),
              restore: Boolean(e.querySelector('[data-testid="finding-restore"]')),
              requestDisabled: e.querySelector('[data-testid="finding-request"]')?.disabled ?? null,
            })),
          };
        },
        null,
        { timeout: 2_000 },
      )
      .catch(() => ({ staged: null, stagedText: null, open: null, boardOpen: null, findings: [] }));
  }

  /** Hides VS Code's bottom panel (the Comments view opens there with the first comment) and clears notifications: room for the board and the editor. */
  async function clearTheView() {
    if (
      await page
        .locator('[id="workbench.parts.panel"]')
        .isVisible()
        .catch(() => false)
    )
      await rig.runCommand(page, 'View: Hide Panel');
    await rig.runCommand(page, 'Notifications: Clear All Notifications');
  }

  const findingNamed = (state, title) => state.findings.find((f) => f.title?.endsWith(title));

  await test('Request change on a Flagged finding stages one ask, marks it and lowers the open count; the panel’s Undo takes it back', async () => {
    expect(generation, 'no settled generation (see the previous test)');
    await clearTheView();
    await selectLens(page, 'flagged');
    const before = await poll(askState, (s) => s.staged !== null && s.open !== null && s.findings.length === FINDINGS.length);
    rig.log(`reading: asks before ${JSON.stringify(before)}`);
    expect(before.staged === 0, `the panel counts ${before.staged} staged asks (${JSON.stringify(before.stagedText)}) before the request; the previous test undid its comment`);
    expect(
      before.open === FINDINGS.length && before.boardOpen === FINDINGS.length,
      `open counts before the request: tab ${before.open}, board ${before.boardOpen}; the board has ${FINDINGS.length} open findings`,
    );
    expect(
      before.findings.every((f) => f.states.length === 0 && f.requestDisabled === false),
      `findings carry marks before any act: ${JSON.stringify(before.findings)}`,
    );

    const first = board(page).locator('[data-testid="element"][data-kind="finding"]').first();
    await first.locator('[data-testid="finding-request"]').click();
    const after = await poll(askState, (s) => s.staged === 1 && s.findings[0]?.states.includes('requested') && s.open === before.open - 1 && s.boardOpen === before.open - 1);
    // The staged count (in the header) and the marked finding in one picture: the board from its top.
    await board(page)
      .locator('body')
      .evaluate((b) => b.ownerDocument.scrollingElement?.scrollTo(0, 0));
    await rig.sleep(200);
    await screenshot('finding-requested');
    const groupTop = (await page.locator('.part.editor .editor-group-container').first().boundingBox())?.y ?? 0;
    const actions = await first.locator('[data-testid="finding-actions"]').boundingBox();
    await docShot('finding-requested', { group: 0, maxWidth: 920, maxHeight: actions ? Math.ceil(actions.y + actions.height + 40 - groupTop) : 760 });
    rig.log(`reading: asks after Request change ${JSON.stringify(after)}`);
    expect(after.staged === 1 && /^1 ask staged$/.test(after.stagedText ?? ''), `after Request change the panel counts ${after.staged} staged asks (${JSON.stringify(after.stagedText)}), expected 1`);
    expect(JSON.stringify(after.findings[0]?.states) === '["requested"]', `the first finding's marks are ${JSON.stringify(after.findings[0]?.states)}, expected ["requested"] ("Change requested")`);
    expect(after.findings[0]?.requestDisabled === true, 'the first finding still offers Request change with its request staged');
    expect(
      after.findings.slice(1).every((f) => f.states.length === 0),
      `a finding that was not acted on carries marks: ${JSON.stringify(after.findings.slice(1))}`,
    );
    // A requested finding is decided: it leaves the open count (protocol/asks.ts flaggedOpenCount).
    expect(after.open === before.open - 1 && after.boardOpen === before.open - 1, `open counts after the request: tab ${after.open}, board ${after.boardOpen}; expected ${before.open - 1}`);

    await board(page).locator('[data-testid="undo-ask"]').click();
    const undone = await poll(askState, (s) => s.staged === 0 && s.findings.every((f) => f.states.length === 0) && s.open === before.open);
    await screenshot('finding-request-undone');
    rig.log(`reading: asks after Undo ${JSON.stringify(undone)}`);
    expect(undone.staged === 0, `after Undo the panel counts ${undone.staged} staged asks (${JSON.stringify(undone.stagedText)})`);
    expect(
      undone.findings.every((f) => f.states.length === 0 && f.requestDisabled === false),
      `after Undo a finding is still marked: ${JSON.stringify(undone.findings)}`,
    );
    expect(undone.open === before.open && undone.boardOpen === before.open, `after Undo the open counts are tab ${undone.open}, board ${undone.boardOpen}; expected ${before.open}`);
  });

  /** The glyphs of the comment gutter with their line (by top), centre and classes. */
  async function commentGlyphs(editor) {
    const tops = await visibleLineTops(editor);
    const boxes = await editor.locator('.comment-range-glyph').evaluateAll((els) =>
      els.map((e) => {
        const holder = e.style.top ? e : e.parentElement;
        const r = e.getBoundingClientRect();
        return { top: parseFloat(holder?.style.top || 'NaN'), x: r.x + r.width / 2, y: r.y + r.height / 2, cls: e.className };
      }),
    );
    return boxes.map((b) => ({ ...b, line: Number(Object.entries(tops).find(([, t]) => Math.abs(t - b.top) < 2)?.[0] ?? NaN) }));
  }

  /** A comment thread widget's label and the title actions it offers. */
  async function threadHead(widget) {
    return widget.evaluate((w) => ({
      label: w.querySelector('.head .review-title')?.textContent?.replace(/\s+/g, ' ').trim() ?? null,
      actions: [...w.querySelectorAll('.head .review-actions .action-label, .head .actions .action-label')]
        .filter((a) => a.offsetParent !== null)
        .map((a) => (a.getAttribute('aria-label') || a.textContent || '').trim()),
    }));
  }

  await test('a Flagged finding shows as a thread at its anchor in the editor; Dismiss, Restore and Discuss there act on the board', async () => {
    expect(generation, 'no settled generation (see the previous test)');
    const anchor = plan.flagged[0];
    const fileName = path.basename(anchor.path);
    const title = FINDINGS[0].title;
    await page.locator('.part.editor .tabs-container .tab', { hasText: fileName }).first().click();
    const editor = editorOf(page);
    const before = await poll(askState, (s) => s.open !== null && s.findings.length === FINDINGS.length);
    // A thread's gutter glyph sits on its range; the findings' threads start collapsed.
    const glyphs = await poll(
      () => commentGlyphs(editor),
      (gs) => gs.some((g) => /comment-thread/.test(g.cls) && g.line >= anchor.start && g.line <= anchor.end),
    );
    const glyph = glyphs.find((g) => /comment-thread/.test(g.cls) && g.line >= anchor.start && g.line <= anchor.end);
    rig.log(`reading: comment glyphs ${JSON.stringify(glyphs.map((g) => ({ line: g.line, cls: g.cls })))}`);
    expect(glyph, `no comment thread glyph on ${anchor.path}:${anchor.start}-${anchor.end} (glyphs: ${JSON.stringify(glyphs.map((g) => ({ line: g.line, cls: g.cls })))})`);
    expect(
      !glyphs.some((g) => /comment-thread/.test(g.cls) && (g.line < anchor.start || g.line > anchor.end) && Number.isFinite(g.line)),
      `a thread glyph sits outside the findings' anchor: ${JSON.stringify(glyphs.map((g) => ({ line: g.line, cls: g.cls })))}`,
    );
    await page.mouse.click(glyph.x, glyph.y);
    const widget = page
      .locator('.review-widget')
      .filter({ visible: true })
      .filter({ has: page.locator('.head .review-title', { hasText: /^\s*Flagged · / }) })
      .filter({ hasText: title })
      .first();
    await widget.waitFor({ state: 'visible', timeout: 10_000 }).catch(() => {
      throw new Error(`clicking the thread glyph on line ${glyph.line} showed no thread with the finding "${title}"`);
    });
    await rig.sleep(300);
    const head = await poll(
      () => threadHead(widget),
      (h) => h.actions.includes('Dismiss'),
      5_000,
    );
    await screenshot('finding-thread');
    const shotBox = await widget.boundingBox();
    await docShot('finding-thread', { group: 1, top: shotBox ? shotBox.y - 180 : null, maxHeight: shotBox ? Math.ceil(shotBox.height + 190) : 600 });
    rig.log(`reading: finding thread ${JSON.stringify(head)}`);
    expect(/^Flagged · minor · .*claude 1\/1/.test(head.label ?? ''), `the thread's label is ${JSON.stringify(head.label)}, expected "Flagged · minor · … (claude 1/1)"`);
    for (const want of ['Request Change', 'Dismiss', 'Discuss']) expect(head.actions.includes(want), `the open finding's thread offers ${JSON.stringify(head.actions)}, missing ${want}`);
    expect(!head.actions.includes('Restore'), `an open finding's thread offers Restore: ${JSON.stringify(head.actions)}`);
    // VS Code puts a thread's widget right below its range's last line: no line lies between them.
    const lineBoxes = await editor
      .locator('.view-lines .view-line')
      .evaluateAll((els) => els.map((e) => ({ top: parseFloat(e.style.top), r: e.getBoundingClientRect() })).map(({ top, r }) => ({ top, y: r.y, bottom: r.bottom })));
    const tops = await visibleLineTops(editor);
    const lineBox = (n) => lineBoxes.find((b) => Math.abs(b.top - tops[n]) < 2);
    const widgetBox = await widget.boundingBox();
    const endBox = lineBox(anchor.end);
    expect(endBox && widgetBox, `line ${anchor.end} or the thread widget is not rendered`);
    const between = Object.keys(tops)
      .map(Number)
      .filter((n) => n > anchor.end && lineBox(n) && lineBox(n).y < widgetBox.y);
    expect(
      widgetBox.y >= endBox.bottom - 1 && between.length === 0 && !(anchor.end + 1 in tops && lineBox(anchor.end + 1)?.y < widgetBox.y + widgetBox.height),
      `the thread widget (y ${widgetBox.y}) should sit right below line ${anchor.end} (bottom ${endBox.bottom}); lines between: ${JSON.stringify(between)}`,
    );

    await widget.locator('.head .action-label[aria-label="Dismiss"]').first().click();
    const dismissed = await poll(askState, (s) => findingNamed(s, title)?.states.includes('dismissed') && s.open === before.open - 1);
    const headDismissed = await poll(
      () => threadHead(widget),
      (h) => h.actions.includes('Restore'),
      10_000,
    );
    await screenshot('finding-thread-dismissed');
    rig.log(`reading: after Dismiss in the editor: panel ${JSON.stringify(dismissed)}; thread ${JSON.stringify(headDismissed)}`);
    const f = findingNamed(dismissed, title);
    expect(
      f && JSON.stringify(f.states) === '["dismissed"]' && f.dismissed && f.restore && !f.dismiss,
      `after Dismiss in the editor the panel shows the finding as ${JSON.stringify(f)}, expected dismissed with Restore`,
    );
    expect(
      dismissed.findings.filter((x) => x !== f).every((x) => x.states.length === 0),
      `another finding is marked: ${JSON.stringify(dismissed.findings)}`,
    );
    expect(
      dismissed.open === before.open - 1 && dismissed.boardOpen === before.open - 1,
      `after Dismiss the open counts are tab ${dismissed.open}, board ${dismissed.boardOpen}; expected ${before.open - 1}`,
    );
    expect(/dismissed by you/.test(headDismissed.label ?? ''), `the dismissed finding's thread label is ${JSON.stringify(headDismissed.label)}`);
    expect(
      headDismissed.actions.includes('Restore') && !headDismissed.actions.includes('Dismiss') && !headDismissed.actions.includes('Request Change'),
      `the dismissed finding's thread offers ${JSON.stringify(headDismissed.actions)}, expected Restore (and Discuss) only`,
    );

    await widget.locator('.head .action-label[aria-label="Restore"]').first().click();
    const restored = await poll(askState, (s) => findingNamed(s, title)?.states.length === 0 && s.open === before.open);
    const headRestored = await poll(
      () => threadHead(widget),
      (h) => h.actions.includes('Dismiss'),
      10_000,
    );
    await screenshot('finding-thread-restored');
    const r = findingNamed(restored, title);
    expect(r && r.states.length === 0 && !r.dismissed && r.dismiss, `after Restore in the editor the panel shows the finding as ${JSON.stringify(r)}`);
    expect(restored.open === before.open && restored.boardOpen === before.open, `after Restore the open counts are tab ${restored.open}, board ${restored.boardOpen}; expected ${before.open}`);
    expect(!/dismissed by you/.test(headRestored.label ?? '') && headRestored.actions.includes('Dismiss'), `the restored finding's thread is ${JSON.stringify(headRestored)}`);

    // Discuss, from the editor as from the panel: the board shows the finding, and the agent
    // answers in a quote thread on its claim (one anchored explain turn through the host).
    await widget.locator('.head .action-label[aria-label="Discuss"]').first().click();
    const findingId = await board(page).locator('[data-testid="element"][data-kind="finding"]', { hasText: title }).first().getAttribute('data-id', { timeout: 10_000 });
    expect(findingId, `the finding "${title}" is not on the board after Discuss`);
    const discussion = board(page).locator(`[data-testid="ask-area"][data-for="${findingId}"] [data-testid="quote-thread"]`).first();
    const answer = discussion.locator('[data-testid="quote-message"][data-author="agent"]').first();
    await answer.waitFor({ state: 'visible', timeout: 30_000 }).catch(async () => {
      const seen = await board(page)
        .locator(`[data-testid="ask-area"][data-for="${findingId}"]`)
        .first()
        .innerText()
        .catch(() => '(no ask area)');
      throw new Error(`Discuss in the editor brought no agent answer under finding ${findingId}; its ask area reads ${JSON.stringify(seen)}`);
    });
    const quote = ((await discussion.locator('blockquote').first().innerText()) ?? '').trim();
    const authors = await discussion.locator('[data-testid="quote-message"]').evaluateAll((ms) => ms.map((m) => m.getAttribute('data-author')));
    const answerText = await answer.innerText();
    await screenshot('finding-discussed');
    rig.log(`reading: Discuss from the editor: quote ${JSON.stringify(quote)}, authors ${JSON.stringify(authors)}`);
    expect(quote === title, `the discussion quotes ${JSON.stringify(quote)}, expected the finding's claim ${JSON.stringify(title)}`);
    expect(JSON.stringify(authors) === '["reviewer","agent"]', `the discussion holds ${JSON.stringify(authors)}, expected the question and one answer`);
    expect(/— explained by /.test(answerText), `the answer carries no provenance line: ${JSON.stringify(answerText)}`);
  });

  const EXPLAINED = 'The renamed line is what callers now read.';
  await test('selecting board prose shows the toolbar; Explain answers in a quote thread, and the quote reaches the model only through its tools', async () => {
    expect(generation, 'no settled generation (see the previous test)');
    await selectLens(page, 'sequence');
    const paragraph = board(page).locator('[data-testid="board"][data-lens="sequence"] [data-testid="element"] p', { hasText: EXPLAINED }).first();
    await paragraph.waitFor({ state: 'visible', timeout: 10_000 });
    await paragraph.scrollIntoViewIfNeeded();
    const elementId = await paragraph.evaluate((p) => p.closest('[data-testid="element"]')?.getAttribute('data-id') ?? null);
    expect(elementId, `the paragraph "${EXPLAINED}" is in no board element`);
    // Drag the mouse over the sentence: from just left of its first character to just past its last.
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
    const selected = await paragraph.evaluate((p) => p.ownerDocument.getSelection()?.toString() ?? '');
    expect(selected.trim() === EXPLAINED, `dragging over the sentence selected ${JSON.stringify(selected)}`);
    const area = board(page).locator(`[data-testid="ask-area"][data-for="${elementId}"]`);
    const toolbar = area.locator('[data-testid="selection-toolbar"]');
    await toolbar.waitFor({ state: 'visible', timeout: 5_000 }).catch(() => {
      throw new Error(`selecting text in element ${elementId} showed no selection toolbar under it`);
    });
    const buttons = await toolbar.locator('button').evaluateAll((bs) => bs.map((b) => ({ text: b.textContent.trim(), disabled: b.disabled })));
    await screenshot('selection-toolbar');
    expect(JSON.stringify(buttons.map((b) => b.text)) === '["Comment","Request changes","Explain"]' && buttons.every((b) => !b.disabled), `the toolbar offers ${JSON.stringify(buttons)}`);

    const requestsBefore = models.requests.length;
    await toolbar.locator('[data-testid="selection-explain"]').click();
    const thread = area.locator('[data-testid="quote-thread"]').first();
    const readThread = () =>
      thread
        .evaluate((t) => ({
          quote: t.querySelector('[data-testid="quote-thread-quote"]')?.textContent ?? null,
          state: t.getAttribute('data-state'),
          messages: [...t.querySelectorAll('[data-testid="quote-message"]')].map((m) => ({
            author: m.getAttribute('data-author'),
            text: (m.querySelector('.rn-thread-text') ?? m).textContent.replace(/\s+/g, ' ').trim(),
            citations: [...m.querySelectorAll('[data-testid="citation"]')].map(
              (c) => `${c.dataset.path}:${c.dataset.start}${c.dataset.end && c.dataset.end !== c.dataset.start ? `-${c.dataset.end}` : ''}`,
            ),
          })),
        }))
        .catch(() => null);
    const shown = await poll(readThread, (t) => t?.messages.some((m) => m.author === 'agent'), 60_000);
    const status = await area
      .locator('[data-testid="explain-status"]')
      .first()
      .getAttribute('data-state', { timeout: 5_000 })
      .catch(() => null);
    const failure = await area
      .locator('[data-testid="explain-failure"]')
      .first()
      .innerText({ timeout: 500 })
      .catch(() => null);
    // The explained sentence at the top of the view, its code card and the thread below it.
    await paragraph.evaluate((p) => p.scrollIntoView({ block: 'start' })).catch(() => {});
    await rig.sleep(200);
    await screenshot('explain-answer');
    const from = await paragraph.boundingBox();
    const to =
      (await area
        .locator('[data-testid="explain-status"]')
        .first()
        .boundingBox()
        .catch(() => null)) ?? (await thread.boundingBox().catch(() => null));
    await docShot('explain-thread', { group: 0, maxWidth: 920, top: from ? from.y - 40 : null, maxHeight: from && to ? Math.ceil(to.y + to.height + 16 - (from.y - 40)) : 760 });
    rig.log(`reading: explain thread ${JSON.stringify(shown)}; status ${status}${failure ? ` (${failure})` : ''}`);
    expect(shown, `Explain opened no quote thread under element ${elementId} (status ${status}${failure ? `: ${failure}` : ''})`);
    expect(shown.quote === selected, `the thread quotes ${JSON.stringify(shown.quote)}, the selection was ${JSON.stringify(selected)}`);
    const [asked, answered, ...more] = shown.messages;
    expect(asked?.author === 'reviewer' && asked.text.length > 0, `the thread's first message is ${JSON.stringify(asked)}, expected the reviewer's question`);
    expect(
      answered?.author === 'agent' && more.length === 0,
      `the thread holds ${JSON.stringify(shown.messages)}, expected the question, then one agent answer (status ${status}${failure ? `: ${failure}` : ''})`,
    );
    // The settings' default harness is the OpenAI-compatible one, model scripted-model.
    expect(
      /— explained by openai-compatible · scripted-model$/.test(answered.text),
      `the answer does not end with its provenance line ("— explained by openai-compatible · scripted-model"): ${JSON.stringify(answered.text)}`,
    );
    const cited = `${plan.explain.excerpt.path}:${plan.explain.excerpt.start}`;
    expect(
      answered.text.startsWith('Callers read the changed line first') && answered.citations.includes(cited),
      `the answer should be the scripted one, its ${cited} drawn as a citation: ${JSON.stringify(answered)}`,
    );
    expect(status === 'answered', `the Explain status is ${JSON.stringify(status)}, expected answered`);

    // The servers' record of the turn: one conversation of the Sequence explainer on the OpenAI
    // server (the settings' default), whose prompt never carries the quote; read_quote's result does.
    const turn = await poll(
      () => models.requests.slice(requestsBefore).filter((r) => r.seat?.startsWith('sequence:explainer@')),
      (rs) => rs.some((r) => r.seat === 'sequence:explainer@3'),
      5_000,
    );
    rig.log(
      `reading: explainer requests ${JSON.stringify(turn.map((r) => ({ server: r.server, seat: r.seat, step: r.step, promptBytes: r.prompt?.join('').length, toolResults: r.toolResults?.length })))}`,
    );
    const seats = turn.map((r) => `${r.server} ${r.seat}`);
    expect(
      JSON.stringify(seats) === JSON.stringify([0, 1, 2, 3].map((n) => `openai sequence:explainer@${n}`)),
      `the explain turn's model requests were ${JSON.stringify(seats)}, expected openai sequence:explainer@0…@3`,
    );
    const header = turn[0].prompt?.join('\n') ?? '';
    expect(header.includes('# Rennet: Sequence (explain)'), `the explainer's prompt has no "# Rennet: Sequence (explain)" header: ${JSON.stringify(header.slice(0, 300))}`);
    const leaked = turn.filter((r) => (r.prompt ?? []).some((t) => t.includes(EXPLAINED)));
    expect(leaked.length === 0, `the quote is in the explainer's prompt (not a tool result) of ${JSON.stringify(leaked.map((r) => r.seat))}`);
    expect(
      turn[1].toolResults?.some((t) => t.includes(EXPLAINED)),
      `read_quote's result (resent in the second request) does not carry the quote: ${JSON.stringify(turn[1].toolResults)}`,
    );
  });

  await test('Open Changes on app.js opens a diff of its captured base and head blobs, with the lens marks on the head side', async () => {
    expect(generation, 'no settled generation (see the previous test)');
    const file = sequenceCite.path;
    const fileName = path.basename(file);
    await page.locator('.part.editor .tabs-container .tab', { hasText: fileName }).first().click();
    await poll(activeEditor, (e) => (e.aria ?? '').startsWith(fileName), 5_000);
    await rig.runCommand(page, 'Rennet: Open Changes');
    const labels = await rig.waitForQuickPick(page, 'base ↔ head');
    const focused = await page
      .locator('.quick-input-widget .monaco-list-row.focused .label-name')
      .first()
      .innerText({ timeout: 5_000 })
      .catch(() => null);
    await screenshot('open-changes-pick');
    expect(focused?.trim() === file, `the picker focuses ${JSON.stringify(focused)}, expected the current editor's file ${file} (rows ${JSON.stringify(labels)})`);
    await page.keyboard.press('Enter');
    const tab = page.locator('.part.editor .tabs-container .tab.active', { hasText: 'base ↔ head' }).first();
    await tab.waitFor({ timeout: 15_000 }).catch(async () => {
      const tabs = await page
        .locator('.tabs-container .tab .label-name')
        .allInnerTexts()
        .catch(() => []);
      throw new Error(`Open Changes opened no "base ↔ head" tab; tabs: ${JSON.stringify(tabs)}`);
    });
    const tabTitle = (await tab.locator('.label-name').first().innerText()).trim();
    // Beside the board the group is too narrow for two sides (VS Code falls back to an inline diff): maximize it.
    await rig.runCommand(page, 'View: Toggle Maximize Editor Group');
    await rig.sleep(500);
    const diff = page.locator('.part.editor .monaco-diff-editor').filter({ visible: true }).last();
    await diff.waitFor({ state: 'visible', timeout: 10_000 });
    const original = diff.locator('.editor.original .monaco-editor').first();
    const modified = diff.locator('.editor.modified .monaco-editor').first();
    const sideBySide = await poll(
      async () => Object.keys(await visibleLineTops(original)).length,
      (n) => n > 0,
      5_000,
    );
    expect(sideBySide > 0, 'the maximized diff editor shows no base side (still inline?)');
    const uris = { original: await original.getAttribute('data-uri'), modified: await modified.getAttribute('data-uri') };
    rig.log(`reading: diff tab ${JSON.stringify(tabTitle)}; ${JSON.stringify(uris)}`);
    expect(tabTitle === `${fileName} (base ↔ head) · Rennet`, `the diff tab is titled ${JSON.stringify(tabTitle)}`);
    const blob = (uri, side) => {
      const m = /^rennet-blob:\/(.*)\?(.*)$/.exec(uri ?? '');
      if (!m) return false;
      // VS Code's Uri.toString() percent-encodes the query's = and &.
      const q = new URLSearchParams(decodeURIComponent(m[2]));
      return decodeURIComponent(m[1]) === file && q.get('side') === side && Boolean(q.get('patchset'));
    };
    expect(blob(uris.original, 'base'), `the diff's left side is ${JSON.stringify(uris.original)}, expected the rennet-blob base of ${file}`);
    expect(blob(uris.modified, 'head'), `the diff's right side is ${JSON.stringify(uris.modified)}, expected the rennet-blob head of ${file}`);

    // The head side carries every cited line's lens mark; the base side, which nothing cites, none.
    const marks = await poll(
      () => glyphMarks(modified),
      (ms) => ms.some((m) => m.lenses.length > 0),
      10_000,
    );
    await rig.sleep(300);
    await screenshot('open-changes-diff');
    await docShot('open-changes', { maxHeight: 620 });
    const tops = await visibleLineTops(modified);
    const lineAt = (top) => Number(Object.entries(tops).find(([, t]) => Math.abs(t - top) < 2)?.[0] ?? NaN);
    const byLine = {};
    const shownByLine = {};
    for (const m of marks) {
      for (const lens of m.lenses) (byLine[lineAt(m.top)] ??= new Set()).add(lens);
      for (const lens of m.shown) (shownByLine[lineAt(m.top)] ??= new Set()).add(lens);
    }
    rig.log(`reading: head-side marks ${JSON.stringify(Object.fromEntries(Object.entries(byLine).map(([l, v]) => [l, [...v]])))}`);
    const problems = [];
    for (const lens of ['sequence', 'flagged']) {
      for (const c of plan[lens]) {
        if (c.path !== file) continue;
        for (let n = c.start; n <= c.end; n++) {
          if (!(n in tops)) continue;
          if (!byLine[n]?.has(lens)) problems.push(`head line ${n} is cited by ${lens} but carries ${JSON.stringify([...(byLine[n] ?? [])])}`);
          if (!shownByLine[n]?.has(lens)) problems.push(`head line ${n} is cited by ${lens}, but the icon drawn there shows ${JSON.stringify([...(shownByLine[n] ?? [])])}`);
        }
      }
    }
    const citedHere = (n) => ['design', 'sequence', 'decisions', 'flagged'].some((lens) => plan[lens].some((c) => c.path === file && n >= c.start && n <= c.end));
    for (const n of Object.keys(tops).map(Number)) if (!citedHere(n) && byLine[n]) problems.push(`head line ${n} is cited by no lens but carries ${JSON.stringify([...byLine[n]])}`);
    const baseMarks = (await glyphMarks(original)).filter((m) => m.lenses.length > 0);
    if (baseMarks.length > 0) problems.push(`the base side, which no lens cites, carries ${baseMarks.length} lens marks: ${JSON.stringify(baseMarks)}`);
    expect(problems.length === 0, `Open Changes marks:\n    ${problems.join('\n    ')}`);
  });

  if (runner.results.slice(first).some((r) => !r.ok)) {
    dumpDiagnostics({ label: 'reading', cs, models, consoleErrors, codeServerLines: 60, rennetLogLines: 120, extHostErrors: true, modelRequests: true });
  }
  await page?.close().catch(() => {});
  await cs?.stop();
  await models?.stop();
}
