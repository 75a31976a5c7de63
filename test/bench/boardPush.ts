import { rmSync, watch, type FSWatcher } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Browser } from 'playwright-core';
import { buildCitationIndex } from '../../host/board/citations';
import type { BoardState } from '../../host/board/state';
import { GenerationPusher, type GenerationFields } from '../../host/review/generationPush';
import type { SnapshotCapture } from '../../host/generation/generationSnapshot';
import type { BoardElement, ElementOf, LensBoardView } from '../../protocol/board';
import type { GenerationDelta } from '../../protocol/generationDelta';
import type { GenerationSnapshot, HarnessConfig } from '../../protocol/review';
import { ReviewOpen, ReviewRunLenses } from '../../protocol/rpc';
import type { ToWebview } from '../../protocol/webview';
import { startHost, type HostUnderTest } from '../contract/hostProcess';
import { TestRepo, tempDir } from '../fixtures/gitRepo';
import { startOpenAiServer, type ScriptedOpenAiServer, type Step } from '../servers';
import { chromiumPath, launchChromium } from './page/browser';
import { BenchPanel } from './page/panel';
import type { FrameTiming } from './page/probe';
import { startPanelServer, type PanelServer } from './page/server';
import { relayGenerations } from './pushRelay';
import { mp, ms, ratio, summarize, type Summary } from './stats';
import { benchGeneration, withChangedFinding, type BenchGeneration } from './webviewFixture';

/**
 * `npm run bench -- --only board-push`: incremental board pushes (issue 15), before and after.
 *
 * 1. Bytes and host time per seat write, on the webview bench's 1.3 MB generation
 *    (webviewFixture.ts): before, the whole generation was read back and posted after every
 *    write; now one delta per lane changed (host/review/generationPush.ts). Two writes: one
 *    finding's title changed, and a finding added with a code_ref on a range nobody cited (so its
 *    excerpt and marks travel too). Host time: noting the frame, building the delta and
 *    serialising it, against serialising the whole generation (what the old path paid on top of
 *    replaying every lane from the store, which is not counted: the "before" is a floor).
 * 2. In Chromium, with that generation's Flagged board unfolded: a seat's write (one finding's
 *    title) posted as the delta → painted, and posted as the whole generation (before) → painted,
 *    each against the plain-DOM baseline (a posted message setting one plain div's text), in the
 *    same loop. Target: the delta within 1.2× of the baseline.
 * 3. End to end with the built host: two reviews drafting at once in one host, five seats whose
 *    first answers (one tool call each) are released at the same instant — Design, Sequence and
 *    Decisions of the review on the page, Sequence and Decisions of the other — and the page
 *    showing Sequence: the tool calls answered → Sequence's first element painted, and from the
 *    first journal write after them (a write of any of the five; so the figure can only be
 *    overstated). Pushes are relayed as the extension relays them (pushRelay.ts). Target: ≤ 100 ms.
 *    With `BENCH_BOARD_PUSH_BEFORE=<dist of an earlier build>` the same runs are made, interleaved,
 *    against that build's host.js and webview.js (whole pushes only) and printed beside.
 */

export interface BoardPushBench {
  load: { start: string; end: string };
  generationBytes: number;
  writes: Array<{ name: string; deltaBytes: number; host: Summary; wholeSerialize: Summary }>;
  paint: { delta: Summary; deltaDom: Summary; whole: Summary; baseline: Summary };
  concurrent: Array<{
    build: string;
    runs: number;
    total: Summary;
    fromWrite: Summary | null;
    writeToPush: Summary | null;
    relay: Summary;
    webview: Summary;
    relayedBytes: Summary;
    elementMessageBytes: Summary;
  }>;
}

const boardOf = (lens: string) => `[data-testid="board"][data-lens="${lens}"]`;

export async function benchBoardPush(distDir: string, runs: number, beforeDist = process.env.BENCH_BOARD_PUSH_BEFORE): Promise<string> {
  const executable = chromiumPath();
  const load = () => loadavg()[0]?.toFixed(2) ?? '?';
  const start = load();
  const fixture = benchGeneration();
  const writes = hostWrites(fixture, runs);
  const browser = await launchChromium(executable);
  const servers: PanelServer[] = [];
  try {
    const server = await startPanelServer(join(distDir, 'webview.js'));
    servers.push(server);
    const paint = await paintWrites(browser, server, fixture, runs);
    const builds: Array<{ build: string; host: string; server: PanelServer }> = [{ build: 'this build', host: join(distDir, 'host.js'), server }];
    if (beforeDist) {
      const before = await startPanelServer(join(beforeDist, 'webview.js'));
      servers.push(before);
      builds.push({ build: `before (${beforeDist})`, host: join(beforeDist, 'host.js'), server: before });
    }
    const concurrent = await concurrentFirstElement(browser, builds, runs);
    return formatBoardPush({ load: { start, end: load() }, generationBytes: Buffer.byteLength(JSON.stringify(fixture.generation)), writes, paint, concurrent });
  } finally {
    await browser.close();
    for (const s of servers) await s.close();
  }
}

// ─── 1. Bytes and host time per write ───────────────────────────────────────────────────────

function captureOf(fixture: BenchGeneration): SnapshotCapture {
  return { ok: true, patchset: fixture.patchset, citations: buildCitationIndex(fixture.patchset) };
}

/** A lane's board as the seat holds it (a Map in element order), from its view. */
function boardStateOf(view: LensBoardView, patchsetId: string): BoardState {
  return {
    lens: view.lens,
    patchsetId,
    document: view.document,
    elements: new Map(view.elements.map((e) => [e.id, e])),
    status: view.status,
    absence: view.absence,
    revision: view.revision,
    nextId: view.elements.length + 1,
    repairs: [],
    lastFinish: null,
  };
}

const fieldsOf = (g: GenerationSnapshot): GenerationFields => ({ status: g.status, spend: g.spend, timings: g.timings, frozen: g.frozen });

/** One write on a lane: the next board and the ids it touched. */
type Write = (board: BoardState, i: number) => { board: BoardState; touched: string[] };

function retitle(findingId: string): Write {
  return (board, i) => {
    const finding = board.elements.get(findingId) as ElementOf<'finding'>;
    const elements = new Map(board.elements);
    elements.set(findingId, { ...finding, title: `${finding.title.replace(/ \(write \d+\)$/, '')} (write ${i})` });
    return { board: { ...board, elements, revision: board.revision + 1 }, touched: [findingId] };
  };
}

/** A finding added under the first section, anchored to a new code_ref on a range no element cites yet. */
function addFinding(fixture: BenchGeneration): Write {
  const cited = new Set(Object.keys(fixture.generation.excerpts));
  const sites = fixture.patchset.files.flatMap((f) => f.hunks.map((h) => ({ path: f.path, hunk: h, line: h.lines.find((l) => l.kind === 'add')?.newLine ?? h.newStart })));
  const template = fixture.board.elements.find((e) => e.kind === 'finding') as ElementOf<'finding'>;
  const refTemplate = fixture.board.elements.find((e) => e.kind === 'code_ref') as ElementOf<'code_ref'>;
  return (board, i) => {
    const site = sites.filter((s) => !cited.has(`head|${s.line}-${s.line}|${s.path}`))[i % sites.length];
    if (!site) throw new Error('the bench change has no uncited range left');
    const ref: BoardElement = {
      ...refTemplate,
      id: `bench-ref-${i}`,
      parent: template.parent,
      path: site.path,
      side: 'head',
      start_line: site.line,
      end_line: site.line,
      hunk_ids: [site.hunk.id],
      seq: board.nextId,
    };
    const finding: BoardElement = { ...template, id: `bench-finding-${i}`, title: `Added by write ${i}`, anchor: [ref.id], seq: board.nextId + 1 };
    const elements = new Map(board.elements);
    elements.set(ref.id, ref);
    elements.set(finding.id, finding);
    return { board: { ...board, elements, nextId: board.nextId + 2, revision: board.revision + 1 }, touched: [ref.id, finding.id] };
  };
}

function hostWrites(fixture: BenchGeneration, runs: number): BoardPushBench['writes'] {
  const capture = captureOf(fixture);
  const cases: Array<{ name: string; write: Write }> = [
    { name: "one finding's title changed", write: retitle(fixture.findingId) },
    { name: 'a finding added, citing a new range', write: addFinding(fixture) },
  ];
  return cases.map(({ name, write }) => {
    const pusher = new GenerationPusher(fixture.generation, 'bench', capture);
    let board = boardStateOf(fixture.board, fixture.patchset.id);
    const host: number[] = [];
    const whole: number[] = [];
    let bytes = 0;
    for (let i = 0; i < runs + 2; i++) {
      const next = write(board, i);
      board = next.board;
      const t0 = performance.now();
      pusher.noteFrame({ generation: fixture.generation.generationId, lens: fixture.lens, kind: 'write', touched: next.touched, board });
      const deltas = pusher.drain(fieldsOf(fixture.generation));
      const json = deltas.map((d) => JSON.stringify(d));
      const t1 = performance.now();
      const wholeJson = JSON.stringify(pusher.snapshot);
      const t2 = performance.now();
      if (deltas.length !== 1) throw new Error(`one write made ${deltas.length} deltas`);
      if (i >= 2) {
        host.push(t1 - t0);
        whole.push(t2 - t1);
        bytes = Math.max(bytes, ...json.map((j) => Buffer.byteLength(j)));
      }
      if (wholeJson.length === 0) throw new Error('empty generation');
    }
    return { name, deltaBytes: bytes, host: summarize(host), wholeSerialize: summarize(whole) };
  });
}

// ─── 2. Paint in Chromium ───────────────────────────────────────────────────────────────────

async function paintWrites(browser: Browser, server: PanelServer, fixture: BenchGeneration, runs: number, warmups = 1): Promise<BoardPushBench['paint']> {
  const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
  const panel = new BenchPanel(page, server);
  const capture = captureOf(fixture);
  const board = boardOf(fixture.lens);
  // The finding by its DOM id (the webview's elementDomId, what a reveal finds it by): the probe's
  // check of the change then costs what the baseline's costs, not a selector walk over 38,000 nodes.
  const finding = `#rn-${fixture.lens}-el-${fixture.findingId}`;
  const delta: FrameTiming[] = [];
  const whole: FrameTiming[] = [];
  const baseline: FrameTiming[] = [];
  try {
    await panel.open(fixture.session);
    await panel.stage('first', { type: 'rennet/panel/generation', snapshot: fixture.generation });
    await panel.post('first', { kind: 'ids', within: board, atLeast: fixture.elementCount, expandAll: true });
    for (let i = 0; i < warmups + runs; i++) {
      // Before: the whole generation posted again, one finding's title changed (as webviewRender.ts measures it).
      const stream = `bench-${i}`;
      const posted: GenerationSnapshot = { ...withChangedFinding(fixture.generation, fixture.lens, fixture.findingId, `whole ${i}`), revision: { stream, n: 0 } };
      await panel.stage('whole', { type: 'rennet/panel/generation', snapshot: posted });
      const w = await panel.post('whole', { kind: 'text', selector: finding, includes: `whole ${i}` });
      // After: the host's delta for the next write on top of it, built by the host's own pusher.
      const pusher = new GenerationPusher(posted, stream, capture);
      const lane = posted.lanes.find((l) => l.lens === fixture.lens)?.board as LensBoardView;
      const next = retitleTo(boardStateOf(lane, fixture.patchset.id), fixture.findingId, `delta ${i}`);
      pusher.noteFrame({ generation: posted.generationId, lens: fixture.lens, kind: 'write', touched: [fixture.findingId], board: next });
      const [d] = pusher.drain(fieldsOf(posted)) as [GenerationDelta];
      const message: ToWebview = { type: 'rennet/panel/generationDelta', delta: d };
      await panel.stage('delta', message);
      const t = await panel.post('delta', { kind: 'text', selector: finding, includes: `delta ${i}` });
      const b = await panel.baselineText(`baseline ${i}`);
      if (i >= warmups) {
        whole.push(w);
        delta.push(t);
        baseline.push(b);
      }
    }
    panel.check();
  } finally {
    await page.close();
  }
  const paint = (xs: FrameTiming[]) => summarize(xs.map((x) => x.paintMs));
  return { delta: paint(delta), deltaDom: summarize(delta.map((x) => x.domMs)), whole: paint(whole), baseline: paint(baseline) };
}

function retitleTo(board: BoardState, findingId: string, marker: string): BoardState {
  const finding = board.elements.get(findingId) as ElementOf<'finding'>;
  const elements = new Map(board.elements);
  elements.set(findingId, { ...finding, title: `${finding.title} (${marker})` });
  return { ...board, elements, revision: board.revision + 1 };
}

// ─── 3. First element with five seats writing at once ───────────────────────────────────────

/** The moment the five writes are released: every writing seat has asked, then a model's think time. */
const THINK_MS = 300;
const HOLD_MS = 60_000;
const PAGE_WRITERS = ['design:drafter', 'sequence:drafter', 'decisions:drafter'];
const OTHER_WRITERS = ['sequence:drafter', 'decisions:drafter'];
const ALL_SEATS = ['design:drafter', 'sequence:drafter', 'decisions:drafter', 'flagged:reviewer', 'flagged:compiler', 'noise:drafter'];

function seatOfHeader(body: Record<string, unknown>, raw: string): string | null {
  if (!Array.isArray(body.tools) || body.tools.length === 0) return null;
  const match = /# Rennet: (Design|Sequence|Decisions|Flagged|Noise) \((writer|review|compiler)\)/.exec(raw);
  if (!match) return null;
  const role = { writer: 'drafter', review: 'reviewer', compiler: 'compiler' }[match[2] as 'writer' | 'review' | 'compiler'];
  return `${(match[1] as string).toLowerCase()}:${role}`;
}

const lines = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}`).join('\n') + '\n';

function smallChange(): TestRepo {
  const repo = new TestRepo();
  repo.write('src/app.ts', lines(40, 'line')).write('src/util.ts', lines(20, 'util')).commit('base');
  repo.branch('feature').write('src/app.ts', lines(40, 'line').replace('line 10\n', 'line ten\n')).write('src/util.ts', lines(20, 'util').replace('util 5\n', 'UTIL 5\n')).commit('change');
  return repo;
}

/** A writing seat's first answer: one add_section, released with the others. */
const writeStep = (release: Promise<void>, seat: string): Step => ({
  toolCalls: [{ name: 'add_section', input: { title: `Written by ${seat}`, body_markdown: 'Read the renamed lines in order.' } }],
  waitFor: () => release,
});

interface ConcurrentRun {
  callAt: number;
  writeAt: number | null;
  arrivedAt: number;
  timing: FrameTiming;
  relayedBytes: number;
  elementBytes: number;
}

async function concurrentRun(browser: Browser, server: PanelServer, hostBundle: string, repos: [TestRepo, TestRepo]): Promise<ConcurrentRun> {
  const storeDir = tempDir('rennet-bench-push-');
  const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
  const models: ScriptedOpenAiServer[] = [];
  let host: HostUnderTest | null = null;
  let watcher: FSWatcher | null = null;
  const journal: number[] = [];
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let callAt = 0;
  const asked = new Set<string>();
  const expected = PAGE_WRITERS.length + OTHER_WRITERS.length;
  const arrive = (key: string) => {
    if (asked.has(key)) return;
    asked.add(key);
    if (asked.size === expected) {
      setTimeout(() => {
        callAt = performance.now();
        release();
      }, THINK_MS);
    }
  };
  try {
    const held: Step[] = [{ text: 'Done.', delayMs: HOLD_MS }];
    const script = (writers: readonly string[], tag: string) => Object.fromEntries(ALL_SEATS.map((seat) => [seat, writers.includes(seat) ? [writeStep(released, `${tag} ${seat}`), ...held] : held]));
    for (const [tag, writers] of [
      ['page', PAGE_WRITERS],
      ['other', OTHER_WRITERS],
    ] as const) {
      models.push(
        await startOpenAiServer(
          { seats: script(writers, tag) },
          {
            seatOf: (body, raw) => {
              const seat = seatOfHeader(body, raw);
              if (seat && writers.includes(seat)) arrive(`${tag} ${seat}`);
              return seat;
            },
          },
        ),
      );
    }
    host = await startHost(storeDir, hostBundle);
    watcher = watch(storeDir, (_event, file) => {
      if (file === 'journal.log') journal.push(performance.now());
    });
    const panel = new BenchPanel(page, server);
    const sessions: string[] = [];
    for (const repo of repos) {
      const opened = await host.connection.sendRequest(ReviewOpen, { repo: repo.dir, target: { kind: 'branch', head: 'feature', base: 'main' } });
      if (!opened.ok) throw new Error(`the host refused to open the review: ${opened.error.message}`);
      sessions.push(opened.value.snapshot.session.id);
      if (sessions.length === 1) await panel.open(opened.value.snapshot, { sessionId: opened.value.snapshot.session.id, lens: 'sequence' });
    }
    let delivering: Promise<unknown> = Promise.resolve();
    let settle: (run: { arrivedAt: number; timing: FrameTiming; bytes: number }) => void = () => undefined;
    let fail: (error: Error) => void = () => undefined;
    const measured = new Promise<{ arrivedAt: number; timing: FrameTiming; bytes: number }>((resolve, reject) => {
      settle = resolve;
      fail = reject;
    });
    let found = false;
    let relayedBytes = 0;
    relayGenerations(
      host.connection,
      sessions[0] as string,
      ({ message, snapshot, arrivedAt, bytes }) => {
        relayedBytes += bytes;
        const element = snapshot.lanes.find((l) => l.lens === 'sequence')?.board?.elements[0];
        if (found || !element) {
          delivering = delivering.then(() => panel.deliver(message)).catch((error: unknown) => fail(error as Error));
          return;
        }
        found = true;
        delivering = delivering
          .then(() => panel.stageAndPost(message, { kind: 'present', selector: `${boardOf('sequence')} [data-id="${element.id}"]` }))
          .then(
            (timing) => settle({ arrivedAt, timing, bytes }),
            (error: unknown) => fail(error as Error),
          );
      },
      (error) => fail(error),
    );
    for (const [i, sessionId] of sessions.entries()) {
      const model = models[i] as ScriptedOpenAiServer;
      const harness: HarnessConfig = { default: 'openai', lenses: {}, vscodeLm: {}, openai: { baseUrl: model.baseUrl, model: 'scripted-model', apiKey: 'sk-rennet-bench' }, anthropic: {} };
      const started = await host.connection.sendRequest(ReviewRunLenses, { sessionId, harness });
      if (!started.ok) throw new Error(`the host refused to run the lenses: ${started.error.message}`);
    }
    const timeout = new Promise<never>((_, reject) =>
      setTimeout(
        () => reject(new Error(`no push with the Sequence element arrived within 30 s (seats asked: ${[...asked].join(', ')}); the host said: ${host?.stderr().slice(-2000)}`)),
        30_000,
      ).unref(),
    );
    const { arrivedAt, timing, bytes } = await Promise.race([measured, timeout]);
    const writeAt = journal.find((t) => t >= callAt && t <= arrivedAt) ?? null;
    // Every byte relayed to the page until the element showed.
    return { callAt, writeAt, arrivedAt, timing, relayedBytes, elementBytes: bytes };
  } finally {
    watcher?.close();
    await page.close();
    await host?.stop();
    for (const m of models) await m.close();
    rmSync(storeDir, { recursive: true, force: true });
  }
}

async function concurrentFirstElement(browser: Browser, builds: Array<{ build: string; host: string; server: PanelServer }>, runs: number, warmups = 1): Promise<BoardPushBench['concurrent']> {
  const repos: [TestRepo, TestRepo] = [smallChange(), smallChange()];
  const kept = new Map<string, ConcurrentRun[]>(builds.map((b) => [b.build, []]));
  try {
    // Interleaved, so drift on the machine touches every build alike.
    for (let i = 0; i < warmups + runs; i++) {
      for (const b of builds) {
        const run = await concurrentRun(browser, b.server, b.host, repos);
        if (i >= warmups) kept.get(b.build)?.push(run);
      }
    }
  } finally {
    for (const r of repos) r.cleanup();
  }
  return builds.map(({ build }) => {
    const xs = kept.get(build) ?? [];
    const painted = (r: ConcurrentRun) => r.timing.actEpochMs + r.timing.paintMs - performance.timeOrigin;
    const written = xs.filter((r): r is ConcurrentRun & { writeAt: number } => r.writeAt !== null);
    return {
      build,
      runs: xs.length,
      total: summarize(xs.map((r) => painted(r) - r.callAt)),
      fromWrite: written.length > 0 ? summarize(written.map((r) => painted(r) - r.writeAt)) : null,
      writeToPush: written.length > 0 ? summarize(written.map((r) => r.arrivedAt - r.writeAt)) : null,
      // Node's and the page's clocks are joined through their epoch origins (same machine, same wall clock).
      relay: summarize(xs.map((r) => r.timing.actEpochMs - (performance.timeOrigin + r.arrivedAt))),
      webview: summarize(xs.map((r) => r.timing.paintMs)),
      relayedBytes: summarize(xs.map((r) => r.relayedBytes)),
      elementMessageBytes: summarize(xs.map((r) => r.elementBytes)),
    };
  });
}

// ─── Report ─────────────────────────────────────────────────────────────────────────────────

const kib = (bytes: number) => (bytes >= 10 * 1024 ? `${(bytes / 1024).toFixed(0)} KiB` : `${bytes.toLocaleString('en-US')} B`);

export function formatBoardPush(r: BoardPushBench): string {
  const out = [`load average ${r.load.start} at the start, ${r.load.end} at the end; median / p95`, `bytes posted per seat write, on the ${kib(r.generationBytes)} bench generation:`];
  for (const w of r.writes) {
    out.push(`  ${w.name.padEnd(38)} before ${kib(r.generationBytes)} (whole)  after ${kib(w.deltaBytes)} (delta)  ${(r.generationBytes / w.deltaBytes).toFixed(0)}× fewer`);
    out.push(`  ${''.padEnd(38)} host: note + delta + JSON ${mp(w.host)}; the whole generation's JSON alone ${mp(w.wholeSerialize)}`);
  }
  out.push(
    `seat write → painted, board unfolded:`,
    `  delta posted (after)                    ${mp(r.paint.delta)}  (DOM ${ms(r.paint.deltaDom.median)})  ratio to baseline ${ratio(r.paint.delta, r.paint.baseline)} (target ≤ 1.2×)`,
    `  whole generation posted (before)        ${mp(r.paint.whole)}  ratio to baseline ${ratio(r.paint.whole, r.paint.baseline)}`,
    `  baseline: posted text into a plain div  ${mp(r.paint.baseline)}`,
    `first element on screen, five seats writing at once (two reviews in one host; the page shows Sequence):`,
  );
  for (const c of r.concurrent) {
    out.push(
      `  ${c.build}, ${c.runs} runs:`,
      `    tool calls answered → element painted   ${mp(c.total)}`,
      `    first journal write → element painted   ${c.fromWrite ? mp(c.fromWrite) : 'no journal write seen'}  (target ≤ 100 ms)`,
      `      of which: journal write → push        ${c.writeToPush ? mp(c.writeToPush) : '—'}`,
      `                relay stand-in              ${mp(c.relay)}  (the bench's Node process and a DevTools evaluate)`,
      `                webview: postMessage → painted ${mp(c.webview)}`,
      `    posted to the page until then           ${kib(c.relayedBytes.median)} (the message holding the element ${kib(c.elementMessageBytes.median)})`,
    );
  }
  return out.join('\n');
}
