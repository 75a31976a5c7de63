import { spawn, spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { capturePatchset } from '../../host/capture/capture';
import { openRepo } from '../../host/capture/repo';
import { runGit } from '../../host/git/run';
import { benchStoreAppend } from './storeAppend';
import { benchToolCalls, formatToolCallBench } from './boardTools';
import { benchPipeline, formatPipelineBench } from './pipeline';
import { benchAskFold, formatAskFoldBench } from './askFold';
import { benchExits } from './exits';
import { startHost } from '../contract/hostProcess';
import { chromiumPath } from './page/browser';
import { benchWebview } from './webview';
import { HostHello } from '../../protocol/rpc';
import { tempDir } from '../fixtures/gitRepo';
import { benchBoardPush } from './boardPush';
import { benchCaptureCli, benchCaptureScale, makeLargeRange } from './capture';

/**
 * `npm run bench`: figures printed, never asserted. Every timing is reported beside a baseline
 * measured in the same run, as a ratio.
 */
const FILES = Number(process.env.BENCH_FILES ?? 1000);
const HUNKS_PER_FILE = Number(process.env.BENCH_HUNKS_PER_FILE ?? 10);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 50_000);
const WEBVIEW_RUNS = Number(process.env.BENCH_WEBVIEW_RUNS ?? 7);
/** The scale section's range sizes in files (a comma list): peak RSS at each shows whether it grows with the range. */
const SCALE_FILES = (process.env.BENCH_SCALE_FILES ?? '5000,10000,20000').split(',').map(Number);

/** Section names `--only a,b` accepts, in the order they run. */
const SECTIONS = ['capture', 'scale', 'store', 'cold-start', 'tools', 'pipeline', 'asks', 'exits', 'webview', 'board-push'] as const;
type Section = (typeof SECTIONS)[number];

/** `--only a,b` (or `--only=a,b`): run just those sections; an unknown name is refused. */
function selectedSections(argv: readonly string[]): ReadonlySet<Section> {
  const at = argv.findIndex((a) => a === '--only' || a.startsWith('--only='));
  if (at < 0) return new Set(SECTIONS);
  const arg = argv[at] as string;
  const value = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : (argv[at + 1] ?? '');
  const names = value
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  const unknown = names.filter((n) => !(SECTIONS as readonly string[]).includes(n));
  if (names.length === 0 || unknown.length > 0) throw new Error(`--only takes section names from ${SECTIONS.join(', ')}; got ${JSON.stringify(value)}`);
  return new Set(names as Section[]);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const ms = (x: number) => `${x.toFixed(1)} ms`;

/** Child mode: capture once and print this process's peak RSS (the host's memory for a capture). */
async function childCapture(dir: string): Promise<void> {
  const repo = await openRepo(dir);
  if (!repo.ok) throw new Error(repo.error.message);
  const before = process.resourceUsage().maxRSS;
  const result = await capturePatchset(repo.value, { kind: 'branch', head: 'feature', base: 'main' });
  if (!result.ok) throw new Error(result.error.message);
  process.stdout.write(JSON.stringify({ idleMaxRssKb: before, maxRssKb: process.resourceUsage().maxRSS, hunks: result.value.totals.hunks }));
}

async function benchCapture(): Promise<void> {
  console.log(`\n## Capture: ${FILES} files × ${HUNKS_PER_FILE} hunks (median of ${RUNS} runs)`);
  const t0 = performance.now();
  const { repo, base, head } = makeLargeRange(FILES, HUNKS_PER_FILE);
  console.log(`fixture built in ${ms(performance.now() - t0)}`);
  try {
    const handle = await openRepo(repo.dir);
    if (!handle.ok) throw new Error(handle.error.message);
    const plain: number[] = [];
    const captured: number[] = [];
    let hunks = 0;
    let files = 0;
    for (let i = 0; i < RUNS; i++) {
      let s = performance.now();
      const diff = await runGit(['diff', base, head], { cwd: repo.dir });
      plain.push(performance.now() - s);
      if (diff.code !== 0) throw new Error(diff.stderr);
      s = performance.now();
      const result = await capturePatchset(handle.value, { kind: 'branch', head: 'feature', base: 'main' });
      captured.push(performance.now() - s);
      if (!result.ok) throw new Error(result.error.message);
      hunks = result.value.totals.hunks;
      files = result.value.totals.files;
    }
    const ratio = median(captured) / median(plain);
    console.log(`captured ${files} files, ${hunks} hunks (complete: ${files === FILES && hunks === FILES * HUNKS_PER_FILE})`);
    console.log(`plain git diff      ${ms(median(plain))}`);
    console.log(`rennet capture      ${ms(median(captured))}`);
    console.log(`ratio               ${ratio.toFixed(2)}× (target ≤ 1.3×)`);

    const child = spawnSync(process.execPath, [__filename, '--child-capture', repo.dir], { encoding: 'utf8', maxBuffer: 1 << 20 });
    if (child.status !== 0) throw new Error(child.stderr);
    const mem = JSON.parse(child.stdout) as { idleMaxRssKb: number; maxRssKb: number };
    console.log(
      `host peak RSS       ${(mem.maxRssKb / 1024).toFixed(0)} MiB during capture (idle process ${(mem.idleMaxRssKb / 1024).toFixed(0)} MiB; ratio ${(mem.maxRssKb / mem.idleMaxRssKb).toFixed(2)}×)`,
    );

    console.log(`\n### End to end: the built CLI, JSON to a file (median of ${RUNS} runs, interleaved)`);
    // The bench runs as dist/bench.js, beside the CLI bundle it measures.
    console.log(await benchCaptureCli(__dirname, repo.dir, base, head, RUNS, process.env.BENCH_CLI_BEFORE || null));
  } finally {
    repo.cleanup();
  }
}

async function benchStore(): Promise<void> {
  console.log(`\n## Store: acknowledged append with ${EVENTS} existing events`);
  const dir = tempDir('rennet-bench-store-');
  try {
    const r = await benchStoreAppend(dir, EVENTS, 2000);
    // Baseline: one fsync'd append of the same size to a plain file, in this run.
    const file = join(tmpdir(), `rennet-bench-fsync-${process.pid}`);
    const { openSync, writeSync, fsyncSync, closeSync } = await import('node:fs');
    const fd = openSync(file, 'a');
    const lat: number[] = [];
    for (let i = 0; i < 2000; i++) {
      const s = performance.now();
      writeSync(fd, `{"seq":${i},"kind":"ask.stage","payload":{"text":"baseline"}}\n`);
      fsyncSync(fd);
      lat.push(performance.now() - s);
    }
    closeSync(fd);
    rmSync(file, { force: true });
    const p = (q: number) => [...lat].sort((a, b) => a - b)[Math.floor(lat.length * q)] as number;
    console.log(`preload             ${ms(r.preloadMs)}`);
    console.log(`append p50          ${ms(r.p50Ms)}  (plain write+fsync p50 ${ms(p(0.5))}; ratio ${(r.p50Ms / p(0.5)).toFixed(2)}×)`);
    console.log(`append p99          ${ms(r.p99Ms)}  (plain write+fsync p99 ${ms(p(0.99))}; ratio ${(r.p99Ms / p(0.99)).toFixed(2)}×)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function benchColdStart(): Promise<void> {
  console.log('\n## Host cold start (spawn → hello answered), median of 5');
  const host: number[] = [];
  const bare: number[] = [];
  for (let i = 0; i < 5; i++) {
    const dir = tempDir('rennet-bench-host-');
    let s = performance.now();
    // The bench runs as dist/bench.js, beside the host bundle it measures.
    const h = await startHost(dir, join(__dirname, 'host.js'));
    await h.connection.sendRequest(HostHello, {});
    host.push(performance.now() - s);
    await h.stop();
    rmSync(dir, { recursive: true, force: true });
    s = performance.now();
    await new Promise((resolve) => spawn(process.execPath, ['-e', '0']).once('exit', resolve));
    bare.push(performance.now() - s);
  }
  console.log(`host ready          ${ms(median(host))}`);
  console.log(`node -e 0           ${ms(median(bare))}  (ratio ${(median(host) / median(bare)).toFixed(2)}×)`);
}

/**
 * The SDK's Streamable HTTP client passes one AbortSignal to every fetch, and Node's fetch keeps a
 * listener per request until it is collected; a 1,693-call burst trips the listener-leak warning
 * on that signal. Counted and reported once instead of printed a thousand times.
 */
function quietListenerWarnings(): () => number {
  let count = 0;
  process.removeAllListeners('warning');
  process.on('warning', (warning) => {
    if (warning.name === 'MaxListenersExceededWarning') count++;
    else console.warn(`${warning.name}: ${warning.message}`);
  });
  return () => count;
}

async function main(): Promise<void> {
  if (process.argv[2] === '--child-capture') return childCapture(process.argv[3] as string);
  const only = selectedSections(process.argv.slice(2));
  // Fails at once, saying how to install it, rather than after the other sections have run.
  if (only.has('webview') || only.has('board-push')) chromiumPath();
  const listenerWarnings = quietListenerWarnings();
  console.log(`# Rennet bench · node ${process.version} · ${new Date().toISOString()}`);
  if (only.has('capture')) await benchCapture();
  if (only.has('scale')) {
    for (const files of SCALE_FILES) {
      console.log(`\n## Capture at scale: ${files} files × ${HUNKS_PER_FILE} hunks through the built CLI (one run)`);
      console.log(await benchCaptureScale(__dirname, files, HUNKS_PER_FILE));
    }
  }
  if (only.has('store')) await benchStore();
  if (only.has('cold-start')) await benchColdStart();
  if (only.has('tools')) {
    console.log('\n## Board tool calls on the 1,252-element Noise board (in-process vs MCP over loopback)');
    console.log(formatToolCallBench(await benchToolCalls()));
  }
  if (only.has('pipeline')) {
    console.log('\n## Lens pipeline: zero-latency scripted seats, 95-file change, five lenses');
    console.log(formatPipelineBench([await benchPipeline()]));
  }
  if (only.has('asks')) {
    console.log('\n## Ask log: fold of 100,000 events');
    console.log(formatAskFoldBench(benchAskFold(100_000)));
  }
  if (only.has('exits')) {
    console.log('\n## Post review: compose 1,000 asks, post 300 comments to the loopback fake forge');
    console.log(await benchExits());
  }
  if (only.has('webview')) {
    console.log('\n## Board panel in Chromium: render, seat write and lens switch, first element end to end');
    // The bench runs as dist/bench.js, beside the webview and host bundles it measures.
    console.log(await benchWebview(__dirname, WEBVIEW_RUNS));
  }
  if (only.has('board-push')) {
    console.log('\n## Incremental board pushes: bytes and paint per seat write, first element with five seats writing at once');
    // The bench runs as dist/bench.js, beside the webview and host bundles it measures.
    console.log(await benchBoardPush(__dirname, WEBVIEW_RUNS));
  }
  const warned = listenerWarnings();
  if (warned > 0) console.log(`\n(${warned} MaxListenersExceededWarning on the MCP client's shared fetch signal, from the SDK client used to drive the bench; not host code)`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
