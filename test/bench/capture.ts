import { spawn } from 'node:child_process';
import { closeSync, cpSync, mkdirSync, openSync, readFileSync, readSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Store } from '../../host/store';
import { TestRepo, tempDir } from '../fixtures/gitRepo';

/**
 * The capture figures of `npm run bench` that run the built CLI (dist/cli.js) as a user does:
 * end to end against `git diff` plus the CLI's own start, and the memory of a 200,000-hunk capture.
 */

/** A repository whose feature branch changes every one of `files` files in `hunksPerFile` separate hunks. */
export function makeLargeRange(
  files: number,
  hunksPerFile: number,
  lineText = (i: number, n: number) => `file ${i} line ${n} some ordinary source text`,
): { repo: TestRepo; base: string; head: string } {
  const repo = new TestRepo();
  // No automatic gc: a detached gc after these large commits would still be writing when the fixture is removed.
  repo.git('config', 'gc.auto', '0');
  // Changed lines 20 apart with 3 context lines never merge, so each file yields hunksPerFile hunks.
  const linesPerFile = hunksPerFile * 20 + 10;
  const body = (i: number, changed: boolean) => Array.from({ length: linesPerFile }, (_, n) => (changed && n % 20 === 10 ? `changed ${i}:${n}` : lineText(i, n))).join('\n') + '\n';
  for (let i = 0; i < files; i++) {
    const dir = join(repo.dir, `pkg${i % 20}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `module${i}.ts`), body(i, false));
  }
  const base = repo.commit('base');
  repo.branch('feature');
  for (let i = 0; i < files; i++) writeFileSync(join(repo.dir, `pkg${i % 20}`, `module${i}.ts`), body(i, true));
  const head = repo.commit('change every file');
  return { repo, base, head };
}

interface Run {
  ms: number;
  /** CPU time (user + system) of the process and the children it waited for (git), in ms; null off Linux. */
  cpuMs: number | null;
  /** Peak RSS of the process in KiB, when it was probed. */
  maxRssKb: number | null;
}

/**
 * CPU time of this process's waited-for children so far (cutime + cstime of /proc/self/stat, in
 * Linux's 100 Hz ticks): a child's own CPU and that of the git processes it waited for. Wall time
 * on a loaded machine is mostly waiting for a core; CPU time says what the work cost.
 */
function childrenCpuMs(): number | null {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields 16 and 17 of stat(5), counted from the state (field 3) here.
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return null;
  }
}

/**
 * Runs a command with stdout to a file and stderr collected; with `rssProbe`, node is started
 * with a preload that records its peak RSS at exit (the CLI itself runs unchanged).
 */
function timed(command: string, args: string[], out: string, rssProbe: string | null = null): Promise<Run> {
  const rssFile = `${out}.rss`;
  rmSync(rssFile, { force: true });
  const argv = rssProbe ? ['-r', rssProbe, ...args] : args;
  const fd = openSync(out, 'w');
  const cpuBefore = childrenCpuMs();
  const start = performance.now();
  const child = spawn(command, argv, { stdio: ['ignore', fd, 'pipe'], env: { ...process.env, RENNET_BENCH_RSS_FILE: rssFile } });
  closeSync(fd);
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      const ms = performance.now() - start;
      const cpuAfter = childrenCpuMs();
      if (code !== 0) return reject(new Error(`${command} ${args.join(' ')} exited ${code}: ${stderr}`));
      resolve({ ms, cpuMs: cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore, maxRssKb: rssProbe ? Number(readFileSync(rssFile, 'utf8')) : null });
    });
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const ms = (x: number) => `${x.toFixed(0)} ms`;
const mib = (kb: number) => `${(kb / 1024).toFixed(0)} MiB`;

/** The preload the memory figures use: writes process.resourceUsage().maxRSS (KiB) to $RENNET_BENCH_RSS_FILE at exit. */
function writeRssProbe(dir: string): string {
  const file = join(dir, 'rss-probe.cjs');
  writeFileSync(file, "process.on('exit', () => require('node:fs').writeFileSync(process.env.RENNET_BENCH_RSS_FILE, String(process.resourceUsage().maxRSS)));\n");
  return file;
}

/** An initialized store (schema migrated, nothing in it) to copy for each run: a user's existing store. */
async function storeTemplate(dir: string): Promise<string> {
  const template = join(dir, 'store-template');
  const store = await Store.open(template);
  store.close();
  return template;
}

/** The totals object near the start of the printed patchset (read without parsing the whole output). */
function printedTotals(file: string): { files: number; hunks: number } {
  const fd = openSync(file, 'r');
  try {
    const head = Buffer.alloc(4096);
    const n = readSync(fd, head, 0, head.length, 0);
    const match = /"totals":(\{[^}]*\})/.exec(head.subarray(0, n).toString('utf8'));
    if (!match) throw new Error(`no totals near the start of ${file}`);
    return JSON.parse(match[1] as string) as { files: number; hunks: number };
  } finally {
    closeSync(fd);
  }
}

/**
 * `rennet capture --json` end to end (spawn to exit, JSON to a file, a fresh copy of an
 * initialized store each run so every run stores the body) against the baseline of the same run:
 * `git diff base head` (to a file) plus `rennet --version` (the CLI's own start). Interleaved, so
 * a busy machine slows all three alike. Target ≤ 1.5×.
 */
export async function benchCaptureCli(distDir: string, repoDir: string, base: string, head: string, runs: number, beforeDistDir: string | null = null): Promise<string> {
  const cli = join(distDir, 'cli.js');
  // BENCH_CLI_BEFORE: another build's dist (an older commit's), whose capture runs interleaved with this one's.
  const beforeCli = beforeDistDir === null ? null : join(beforeDistDir, 'cli.js');
  const work = tempDir('rennet-bench-cli-');
  try {
    const template = await storeTemplate(work);
    const probe = writeRssProbe(work);
    const out = join(work, 'out');
    const store = join(work, 'store');
    const capture = ['capture', '--repo', repoDir, '--base', 'main', '--head', 'feature', '--json', '--store', store];
    const git: Run[] = [];
    const version: Run[] = [];
    const captured: Run[] = [];
    const capturedBefore: Run[] = [];
    for (let i = 0; i < runs; i++) {
      git.push(await timed('git', ['-C', repoDir, 'diff', base, head], out));
      version.push(await timed(process.execPath, [cli, '--version'], out));
      // With a before build, the two captures take turns going first (a run's place in the round changes its time).
      const order: [string, Run[]][] =
        beforeCli === null
          ? [[cli, captured]]
          : [
              [beforeCli, capturedBefore],
              [cli, captured],
            ];
      if (i % 2 === 1) order.reverse();
      for (const [which, into] of order) {
        rmSync(store, { recursive: true, force: true });
        cpSync(template, store, { recursive: true });
        into.push(await timed(process.execPath, [which, ...capture], out));
      }
    }
    const wall = (runs: Run[]) => median(runs.map((r) => r.ms));
    const cpu = (runs: Run[]) => (runs.every((r) => r.cpuMs !== null) ? median(runs.map((r) => r.cpuMs as number)) : null);
    const bytes = statSync(out).size;
    const totals = printedTotals(out);
    const stored = readdirSync(join(store, 'patchsets')).filter((f) => f.endsWith('.json'));
    // One more of each with the peak-RSS preload (kept out of the timed runs).
    const idle = await timed(process.execPath, [cli, '--version'], out, probe);
    rmSync(store, { recursive: true, force: true });
    cpSync(template, store, { recursive: true });
    const mem = await timed(process.execPath, [cli, ...capture], out, probe);
    const baseline = wall(git) + wall(version);
    const [gitCpu, versionCpu, captureCpu] = [cpu(git), cpu(version), cpu(captured)];
    const cpuNote = (x: number | null) => (x === null ? '' : `, CPU ${ms(x)}`);
    return [
      `git diff (to a file)        ${ms(wall(git))}${cpuNote(gitCpu)}`,
      `rennet --version            ${ms(wall(version))}${cpuNote(versionCpu)}`,
      `rennet capture --json       ${ms(wall(captured))}${cpuNote(captureCpu)} with its git  (${(bytes / 1e6).toFixed(1)} MB of JSON, ${totals.files} files, ${totals.hunks} hunks; body stored: ${stored.length === 1 && statSync(join(store, 'patchsets', stored[0] as string)).size + 1 === bytes})`,
      `ratio                       ${(wall(captured) / baseline).toFixed(2)}× of git diff + --version, wall (target ≤ 1.5×)` +
        (gitCpu !== null && versionCpu !== null && captureCpu !== null ? `; ${(captureCpu / (gitCpu + versionCpu)).toFixed(2)}× in CPU time` : ''),
      ...(beforeCli === null
        ? []
        : [
            `before (${beforeCli})  ${ms(wall(capturedBefore))}${cpuNote(cpu(capturedBefore))}; ${(wall(capturedBefore) / baseline).toFixed(2)}× of git diff + --version, wall` +
              (gitCpu !== null && versionCpu !== null && cpu(capturedBefore) !== null ? `; ${((cpu(capturedBefore) as number) / (gitCpu + versionCpu)).toFixed(2)}× in CPU time` : ''),
          ]),
      `CLI peak RSS                ${mib(mem.maxRssKb as number)} capturing (rennet --version: ${mib(idle.maxRssKb as number)})`,
    ].join('\n');
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Scale: a files × hunksPerFile range (main.ts runs 5,000, 10,000 and 20,000 files × 10) captured by the built CLI with
 * --json, its peak RSS against `rennet --version`'s, and its time beside `git diff`'s.
 */
export async function benchCaptureScale(distDir: string, files: number, hunksPerFile: number): Promise<string> {
  const cli = join(distDir, 'cli.js');
  const t0 = performance.now();
  // Short lines: the figure is about hunks and files, not bytes per line.
  const { repo, base, head } = makeLargeRange(files, hunksPerFile, (i, n) => `f${i} ${n}`);
  const built = performance.now() - t0;
  const work = tempDir('rennet-bench-scale-');
  try {
    const probe = writeRssProbe(work);
    const out = join(work, 'out');
    const store = join(work, 'store');
    const git = await timed('git', ['-C', repo.dir, 'diff', base, head], out);
    const gitBytes = statSync(out).size;
    const idle = await timed(process.execPath, [cli, '--version'], out, probe);
    const run = await timed(process.execPath, [cli, 'capture', '--repo', repo.dir, '--base', 'main', '--head', 'feature', '--json', '--store', store], out, probe);
    const totals = printedTotals(out);
    return [
      `fixture built in ${ms(built)}; git diff ${(gitBytes / 1e6).toFixed(1)} MB`,
      `captured ${totals.files} files, ${totals.hunks} hunks (complete: ${totals.files === files && totals.hunks === files * hunksPerFile}); ${(statSync(out).size / 1e6).toFixed(1)} MB of JSON`,
      `rennet capture --json       ${ms(run.ms)}  (git diff ${ms(git.ms)}; ratio ${(run.ms / git.ms).toFixed(2)}×)`,
      `CLI peak RSS                ${mib(run.maxRssKb as number)} (rennet --version: ${mib(idle.maxRssKb as number)}; ${((run.maxRssKb as number) / (idle.maxRssKb as number)).toFixed(1)}×; per 1,000 hunks ${(((run.maxRssKb as number) - (idle.maxRssKb as number)) / 1024 / (totals.hunks / 1000)).toFixed(2)} MiB)`,
    ].join('\n');
  } finally {
    rmSync(work, { recursive: true, force: true });
    repo.cleanup();
  }
}
