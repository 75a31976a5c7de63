import { appendFileSync, closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import {
  EVAL_DEFAULT_LINE_TOLERANCE,
  EVAL_DEFAULT_SEVERITY_THRESHOLD,
  EVAL_DOCUMENT_VERSION,
  EVAL_FAILURE_REASON_MAX_CHARS,
  EvalCaseResult,
  EvalRunManifest,
  type EvalCase,
  type EvalCorpus,
  type EvalHarnessSettings,
  type EvalSpend,
} from '../../protocol/eval';
import type { ReviewReport } from '../../protocol/review';
import { isPidAlive, writeFileAtomic } from '../store/fsutil';
import { caseKey, casesDigest, canonicalJson } from './runKey';
import { scoreCase } from './score';
import { addSpend, NO_SPEND, spendOf, spendText } from './scoreSpend';

/**
 * `rennet eval run`: review every case of a corpus and keep each finished review as
 * `OUT/cases/<id>.json` (temp file + rename, so a kill leaves the old file or the whole new one).
 * A start over the same OUT skips every case whose result was reviewed under the same key (the
 * case, its repository, the harness settings); a failed case, a changed case and a case never
 * finished are reviewed (again). `OUT/run.json` says what ran: the corpus digest, the harness, the
 * store, when it started and was resumed. Progress goes to stderr; each case's own lane lines to
 * `OUT/logs/<id>.log`.
 *
 * The review itself is a dep (`reviewCase`): the CLI wires the normal pipeline (runCase.ts), tests
 * may wire anything that answers a review report.
 */

export class EvalRunRefusal extends Error {}

export interface EvalRunOptions {
  /** The corpus file (absolute): case repositories are resolved against its directory. */
  casesFile: string;
  corpus: EvalCorpus;
  settings: EvalHarnessSettings;
  jobs: number;
  /** The run directory (absolute). */
  outDir: string;
  /** The data directory every generation is kept in (absolute). */
  storeDir: string;
}

/** What reviewing one case answered. */
export interface CaseReview {
  status: 'reviewed' | 'failed';
  reason: string | null;
  report: ReviewReport | null;
  sessionId: string | null;
}

export interface EvalRunDeps {
  reviewCase(evalCase: EvalCase, repo: string, log: (text: string) => void): Promise<CaseReview>;
  now(): Date;
  /** A monotonic clock in milliseconds (performance.now). */
  monotonicMs(): number;
  stderr(text: string): void;
}

export interface EvalRunOutcome {
  manifest: EvalRunManifest;
  results: Map<string, EvalCaseResult>;
  reviewed: number;
  skipped: number;
  failed: number;
}

export const RUN_MANIFEST = 'run.json';
export const RUN_LOCK = 'run.lock';
export const CASES_DIR = 'cases';
export const LOGS_DIR = 'logs';

export function caseResultPath(outDir: string, id: string): string {
  return join(outDir, CASES_DIR, `${id}.json`);
}

/**
 * The repository of a case: its own `repo`, else the corpus's, each relative to the corpus file's
 * directory unless absolute; null when neither names one.
 */
export function caseRepo(evalCase: EvalCase, corpus: EvalCorpus, casesFile: string): string | null {
  const named = evalCase.repo ?? corpus.repo;
  if (!named) return null;
  return isAbsolute(named) ? named : resolve(dirname(casesFile), named);
}

/** Checks a corpus before anything runs: unique ids, and a repository for every case. */
export function checkCorpus(corpus: EvalCorpus, casesFile: string): void {
  const seen = new Set<string>();
  const dupes = new Set<string>();
  for (const c of corpus.cases) (seen.has(c.id) ? dupes : seen).add(c.id);
  if (dupes.size > 0) throw new EvalRunRefusal(`${casesFile}: case ids must be unique; repeated: ${[...dupes].slice(0, 10).join(', ')}`);
  const homeless = corpus.cases.filter((c) => caseRepo(c, corpus, casesFile) === null).map((c) => c.id);
  if (homeless.length > 0)
    throw new EvalRunRefusal(`${casesFile}: no repository for ${homeless.slice(0, 10).join(', ')}${homeless.length > 10 ? ' and more' : ''} (give the corpus a "repo", or each case its own)`);
  if (corpus.cases.length === 0) throw new EvalRunRefusal(`${casesFile} has no cases`);
}

/** Reads OUT/run.json; null when absent; refuses one that is not a run manifest. */
export function readManifest(outDir: string): EvalRunManifest | null {
  const file = join(outDir, RUN_MANIFEST);
  if (!existsSync(file)) return null;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8')) as unknown;
  } catch (error) {
    throw new EvalRunRefusal(`${file} is not JSON (${(error as Error).message})`);
  }
  const parsed = EvalRunManifest.safeParse(raw);
  if (!parsed.success) throw new EvalRunRefusal(`${file} is not an eval run manifest (${parsed.error.issues[0]?.path.join('.') ?? ''}: ${parsed.error.issues[0]?.message ?? 'invalid'})`);
  return parsed.data;
}

/** A case's result file, or null when absent or unreadable (a torn or foreign file is reviewed again). */
export function readCaseResult(outDir: string, id: string): EvalCaseResult | null {
  try {
    const parsed = EvalCaseResult.safeParse(JSON.parse(readFileSync(caseResultPath(outDir, id), 'utf8')) as unknown);
    return parsed.success && parsed.data.id === id ? parsed.data : null;
  } catch {
    return null;
  }
}

/** Every case result of a run, by case id (absent ones left out). */
export function readCaseResults(outDir: string, manifest: EvalRunManifest): Map<string, EvalCaseResult> {
  const out = new Map<string, EvalCaseResult>();
  for (const c of manifest.cases) {
    const result = readCaseResult(outDir, c.id);
    if (result) out.set(c.id, result);
  }
  return out;
}

function describeSettings(s: EvalHarnessSettings): string {
  return [`--harness ${s.harness}`, s.baseUrl ? `--base-url ${s.baseUrl}` : '', s.model ? `--model ${s.model}` : '', s.scriptDigest ? `(script ${s.scriptDigest.slice(0, 12)})` : '']
    .filter(Boolean)
    .join(' ');
}

/**
 * Holds OUT/run.lock for the run: one writer per run directory. A lock whose process is gone (a
 * kill -9) is taken over.
 */
function lockRun(outDir: string): () => void {
  const file = join(outDir, RUN_LOCK);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, `${process.pid}\n`);
      closeSync(fd);
      return () => {
        try {
          unlinkSync(file);
        } catch {
          // already gone
        }
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw new EvalRunRefusal(`cannot lock ${outDir}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
      const pid = Number.parseInt(readFileSync(file, 'utf8').trim(), 10);
      if (isPidAlive(pid) && pid !== process.pid) throw new EvalRunRefusal(`another eval run (pid ${pid}) is writing ${outDir}; wait for it or stop it first`);
      unlinkSync(file);
    }
  }
  throw new EvalRunRefusal(`cannot lock ${outDir}: the lock file keeps coming back`);
}

/**
 * Everything about the corpus and OUT checked before anything is written: unique ids, a repository
 * per case, OUT a new or empty directory or a run of the same settings and store. Answers the
 * earlier manifest when OUT holds one.
 */
export function checkRun(options: EvalRunOptions): EvalRunManifest | null {
  const { corpus, casesFile, outDir, settings } = options;
  checkCorpus(corpus, casesFile);
  if (existsSync(outDir) && !statSync(outDir).isDirectory()) throw new EvalRunRefusal(`--out ${outDir} is a file; name a directory`);
  const previous = readManifest(outDir);
  if (!previous && existsSync(outDir) && readdirSync(outDir).some((name) => name !== 'store' && resolve(outDir, name) !== options.storeDir)) {
    throw new EvalRunRefusal(`--out ${outDir} is not empty and holds no ${RUN_MANIFEST}; name a new or empty directory`);
  }
  if (previous && canonicalJson(previous.settings) !== canonicalJson(settings)) {
    throw new EvalRunRefusal(`${outDir} holds a run with ${describeSettings(previous.settings)}; this is ${describeSettings(settings)}: use another --out for another setting`);
  }
  if (previous && resolve(previous.store) !== resolve(options.storeDir)) {
    throw new EvalRunRefusal(`${outDir} keeps its generations in ${previous.store}; pass --store ${previous.store} (or leave --store out) to resume it`);
  }
  return previous;
}

export async function runEval(options: EvalRunOptions, deps: EvalRunDeps): Promise<EvalRunOutcome> {
  const { corpus, casesFile, outDir, settings } = options;
  const previous = checkRun(options);
  mkdirSync(join(outDir, CASES_DIR), { recursive: true });
  mkdirSync(join(outDir, LOGS_DIR), { recursive: true });
  const unlock = lockRun(outDir);
  try {
    const started = deps.now().toISOString();
    let manifest: EvalRunManifest = {
      version: EVAL_DOCUMENT_VERSION,
      casesFile,
      casesDigest: casesDigest(corpus.cases),
      settings,
      jobs: options.jobs,
      store: options.storeDir,
      startedAt: previous?.startedAt ?? started,
      resumedAt: previous ? [...previous.resumedAt, started] : [],
      finishedAt: null,
      cases: corpus.cases,
    };
    writeFileAtomic(join(outDir, RUN_MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);

    const results = new Map<string, EvalCaseResult>();
    const todo: Array<{ evalCase: EvalCase; repo: string; key: string }> = [];
    let spent: EvalSpend = NO_SPEND;
    for (const evalCase of corpus.cases) {
      const repo = caseRepo(evalCase, corpus, casesFile) as string;
      const key = caseKey(evalCase, repo, settings);
      const existing = readCaseResult(outDir, evalCase.id);
      if (existing && existing.status === 'reviewed' && existing.key === key) {
        results.set(evalCase.id, existing);
        spent = addSpend(spent, existing.spend);
      } else {
        todo.push({ evalCase, repo, key });
      }
    }
    const total = corpus.cases.length;
    const skipped = total - todo.length;
    const jobs = Math.max(1, Math.min(options.jobs, todo.length || 1));
    deps.stderr(
      `eval: ${total} case${total === 1 ? '' : 's'}; ${skipped} already reviewed (skipped); ${todo.length} to review with ${describeSettings(settings)}, ${jobs} at a time\n` +
        `eval: results in ${join(outDir, CASES_DIR)}, generations in ${options.storeDir}\n`,
    );

    let done = skipped;
    let failed = 0;
    let reviewedNow = 0;
    let elapsedMs = 0;
    const queue = [...todo];
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const { evalCase, repo, key } = next;
        const logFile = join(outDir, LOGS_DIR, `${evalCase.id}.log`);
        const startedAt = deps.now().toISOString();
        const t0 = deps.monotonicMs();
        const log = (text: string) => appendFileSync(logFile, text);
        log(`── ${startedAt} reviewing ${evalCase.id} (${evalCase.base}..${evalCase.head}) in ${repo}\n`);
        let review: CaseReview;
        try {
          review = await deps.reviewCase(evalCase, repo, log);
        } catch (error) {
          review = { status: 'failed', reason: `the review broke: ${(error as Error).message}`, report: null, sessionId: null };
        }
        const durationMs = Math.max(0, deps.monotonicMs() - t0);
        const result: EvalCaseResult = {
          version: EVAL_DOCUMENT_VERSION,
          id: evalCase.id,
          key,
          case: evalCase,
          repo,
          status: review.status,
          reason: review.reason === null ? null : clip(review.reason),
          startedAt,
          durationMs,
          spend: spendOf(review.report?.spend ?? []),
          sessionId: review.sessionId,
          report: review.report,
        };
        writeFileAtomic(caseResultPath(outDir, evalCase.id), `${JSON.stringify(result, null, 2)}\n`);
        results.set(evalCase.id, result);
        done++;
        reviewedNow++;
        elapsedMs += durationMs;
        spent = addSpend(spent, result.spend);
        if (result.status === 'failed') failed++;
        const remaining = total - done;
        const eta = remaining === 0 ? 'done' : `ETA ${durationText(((elapsedMs / reviewedNow) * remaining) / jobs)}`;
        deps.stderr(`eval: [${done}/${total}] ${evalCase.id} ${outcomeText(evalCase, result)} in ${durationText(durationMs)}\n`);
        deps.stderr(`eval: ${done} of ${total} done (${skipped} skipped, ${failed} failed) · spend so far: ${spendText(spent)} · ${eta}\n`);
      }
    };
    await Promise.all(Array.from({ length: jobs }, worker));

    manifest = { ...manifest, finishedAt: deps.now().toISOString() };
    writeFileAtomic(join(outDir, RUN_MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
    return { manifest, results, reviewed: reviewedNow, skipped, failed };
  } finally {
    unlock();
  }
}

/** What a finished case came to, with the default rules (the score says it with the chosen ones). */
function outcomeText(evalCase: EvalCase, result: EvalCaseResult): string {
  const score = scoreCase(evalCase, result, { threshold: EVAL_DEFAULT_SEVERITY_THRESHOLD, tolerance: EVAL_DEFAULT_LINE_TOLERANCE });
  if (score.outcome === 'failed') return `failed: ${oneLine(score.reason ?? '')}`;
  const n = score.findings.length;
  return `${score.outcome} (${n} Flagged finding${n === 1 ? '' : 's'})`;
}

function clip(text: string): string {
  return text.length > EVAL_FAILURE_REASON_MAX_CHARS ? `${text.slice(0, EVAL_FAILURE_REASON_MAX_CHARS - 1)}…` : text;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** `850 ms`, `12.3 s`, `4 min 05 s`, `1 h 02 min`. */
export function durationText(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(Math.floor(s - m * 60)).padStart(2, '0')} s`;
  const h = Math.floor(m / 60);
  return `${h} h ${String(m - h * 60).padStart(2, '0')} min`;
}
