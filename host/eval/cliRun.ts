import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Severity } from '../../protocol/board';
import {
  EVAL_DEFAULT_JOBS,
  EVAL_DEFAULT_LINE_TOLERANCE,
  EVAL_DEFAULT_SEVERITY_THRESHOLD,
  EVAL_MAX_JOBS,
  EVAL_MAX_LINE_TOLERANCE,
  EvalCorpus,
  type EvalHarnessSettings,
  type EvalRunManifest,
  type EvalScore,
} from '../../protocol/eval';
import { discoverCliHarnesses, discoverLocalModels, type DiscoveredCli, type DiscoveredLocalServer } from '../harness/discover';
import type { HarnessAssignment } from '../pipeline/types';
import { checkOutputPath, ReviewRefusal } from '../review/command';
import { HarnessChoiceError, HarnessLoadError, loadHarnessAssignment, parseHarnessChoice, type HarnessChoice, type HarnessDiscovery, type HarnessFlags } from '../harness/harnessChoice';
import { Store } from '../store';
import { writeFileAtomic } from '../store/fsutil';
import { compareScores } from './compare';
import { runJudge } from './judge';
import { renderCompareHtml, renderScoreHtml } from './reportHtml';
import { compareText, scoreText } from './reportText';
import { checkRun, EvalRunRefusal, readCaseResults, readManifest, runEval } from './run';
import { caseReviewer } from './runCase';
import { sha256 } from './runKey';
import { scoreRun } from './score';
import { EvalUsageError } from './usage';

/**
 * `rennet eval run | score | compare` (host/eval/README.md, docs/eval.md). Everything the command
 * line names is checked before anything is reviewed or written; a refusal (exit 1) names its reason
 * and changes nothing, a usage error throws EvalUsageError (exit 2).
 */

/** The score `run` writes beside the cases, with the default rules. */
export const RUN_SCORE_FILE = 'score.json';
export const RUN_REPORT_FILE = 'report.html';

class Refusal extends Error {}

export async function evalRunCli(sub: 'run' | 'score' | 'compare', argv: readonly string[]): Promise<number> {
  try {
    if (sub === 'run') return await runCommand(argv);
    if (sub === 'score') return await scoreCommand(argv);
    return await compareCommand(argv);
  } catch (error) {
    if (error instanceof Refusal || error instanceof EvalRunRefusal || error instanceof HarnessLoadError || error instanceof ReviewRefusal) {
      process.stderr.write(`rennet: ${error.message}\n`);
      return 1;
    }
    if (error instanceof HarnessChoiceError) throw new EvalUsageError(error.message);
    if ((error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) throw new EvalUsageError((error as Error).message);
    throw error;
  }
}

function need(value: string | undefined, flag: string, sub: string): string {
  if (value === undefined || value === '') throw new EvalUsageError(`eval ${sub} needs ${flag}`);
  return value;
}

function integerFlag(value: string | undefined, flag: string, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new EvalUsageError(`${flag} is a whole number from ${min} to ${max}, not "${value}"`);
  return n;
}

function severityFlag(value: string | undefined): Severity {
  if (value === undefined) return EVAL_DEFAULT_SEVERITY_THRESHOLD;
  const parsed = Severity.safeParse(value);
  if (!parsed.success) throw new EvalUsageError(`--threshold is one of ${Severity.options.join(', ')}, not "${value}"`);
  return parsed.data;
}

function stderr(text: string): void {
  process.stderr.write(text);
}

/** The settings a run is keyed by: the harness, its companions, and the script's digest for scripted:FILE. */
function harnessSettings(name: string, choice: HarnessChoice, flags: HarnessFlags): EvalHarnessSettings {
  if (choice.kind === 'scripted') {
    let bytes: Buffer;
    try {
      bytes = readFileSync(choice.file);
    } catch (error) {
      throw new Refusal(`cannot read the harness script ${choice.file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
    return { harness: 'scripted', baseUrl: null, model: null, scriptDigest: sha256(bytes) };
  }
  const baseUrl = choice.kind === 'openai' || choice.kind === 'anthropic' ? choice.baseUrl : null;
  return { harness: name, baseUrl, model: flags.model ?? null, scriptDigest: null };
}

/**
 * A harness loader for many turns: each call builds a fresh assignment (a scripted harness plays
 * its script from the first turn again; a CLI's threads are per instance). `auto` discovers once,
 * says what it found once, and reuses that answer.
 */
async function harnessLoader(choice: HarnessChoice, flags: HarnessFlags): Promise<() => Promise<HarnessAssignment>> {
  let clis: DiscoveredCli[] | null = null;
  let servers: DiscoveredLocalServer[] | null = null;
  const discovery: HarnessDiscovery = {
    discover: async () => (clis ??= await discoverCliHarnesses()),
    discoverLocal: async () => (servers ??= await discoverLocalModels()),
  };
  // The first load checks the choice (a bad script is refused here, before anything runs).
  await loadHarnessAssignment(choice, flags, { ...discovery, report: (lines) => stderr(`${lines.join('\n')}\n`) });
  return () => loadHarnessAssignment(choice, flags, discovery);
}

function readCorpus(file: string): EvalCorpus {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new Refusal(`cannot read --cases ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text) as unknown;
  } catch (error) {
    throw new Refusal(`--cases ${file} is not JSON: ${(error as Error).message}`);
  }
  const parsed = EvalCorpus.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Refusal(`--cases ${file} is not a case file (${issue?.path.map(String).join('.') || '(file)'}: ${issue?.message ?? 'invalid'}); see docs/eval.md`);
  }
  return parsed.data;
}

async function runCommand(argv: readonly string[]): Promise<number> {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: false,
    options: {
      cases: { type: 'string' },
      harness: { type: 'string' },
      'base-url': { type: 'string' },
      model: { type: 'string' },
      jobs: { type: 'string' },
      store: { type: 'string' },
      out: { type: 'string' },
    },
  });
  const casesFile = resolve(need(values.cases, '--cases FILE', 'run'));
  const harnessName = need(values.harness, '--harness NAME', 'run');
  const outDir = resolve(need(values.out, '--out DIR', 'run'));
  const jobs = integerFlag(values.jobs, '--jobs', 1, EVAL_MAX_JOBS, EVAL_DEFAULT_JOBS);
  const flags: HarnessFlags = { baseUrl: values['base-url'], model: values.model };
  const choice = parseHarnessChoice(harnessName, flags);
  const corpus = readCorpus(casesFile);
  const settings = harnessSettings(harnessName, choice, flags);
  const storeDir = resolve(values.store ?? join(outDir, 'store'));
  const options = { casesFile, corpus, settings, jobs, outDir, storeDir };
  checkRun(options);
  const harnesses = await harnessLoader(choice, flags);

  const store = await Store.open(storeDir);
  try {
    const outcome = await runEval(options, { reviewCase: caseReviewer(store, harnesses), now: () => new Date(), monotonicMs: () => performance.now(), stderr });
    const score = scoreRun(outcome.manifest, outcome.results, { threshold: EVAL_DEFAULT_SEVERITY_THRESHOLD, tolerance: EVAL_DEFAULT_LINE_TOLERANCE, dir: outDir });
    writeFileAtomic(join(outDir, RUN_SCORE_FILE), `${JSON.stringify(score, null, 2)}\n`);
    writeFileAtomic(join(outDir, RUN_REPORT_FILE), renderScoreHtml(score));
    process.stdout.write(scoreText(score));
    process.stdout.write(`Score:       ${join(outDir, RUN_SCORE_FILE)}\nHTML report: ${join(outDir, RUN_REPORT_FILE)}\n`);
    // A case that failed was not measured: the run is not a whole measurement, so it does not exit 0.
    // Running the same command again reviews only the failed and unfinished cases.
    const unmeasured = score.totals.failed + score.totals.notRun;
    if (unmeasured > 0) {
      stderr(
        `rennet: ${unmeasured} of ${score.totals.cases} case${score.totals.cases === 1 ? '' : 's'} failed or did not run (reasons in the score); run the same command again to retry only those\n`,
      );
      return 1;
    }
    return 0;
  } finally {
    store.close();
  }
}

function runDir(dir: string): { dir: string; manifest: EvalRunManifest } {
  const full = resolve(dir);
  if (!existsSync(full) || !statSync(full).isDirectory()) throw new Refusal(`--run ${dir} is not a directory`);
  const manifest = readManifest(full);
  if (!manifest) throw new Refusal(`--run ${dir} holds no run.json (is it the --out of rennet eval run?)`);
  return { dir: full, manifest };
}

async function scoreCommand(argv: readonly string[]): Promise<number> {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: false,
    options: {
      run: { type: 'string' },
      threshold: { type: 'string' },
      tolerance: { type: 'string' },
      json: { type: 'string' },
      html: { type: 'string' },
      judge: { type: 'string' },
      'judge-base-url': { type: 'string' },
      'judge-model': { type: 'string' },
    },
  });
  const threshold = severityFlag(values.threshold);
  const tolerance = integerFlag(values.tolerance, '--tolerance', 0, EVAL_MAX_LINE_TOLERANCE, EVAL_DEFAULT_LINE_TOLERANCE);
  if (values.judge === undefined && (values['judge-base-url'] !== undefined || values['judge-model'] !== undefined)) throw new EvalUsageError('--judge-base-url and --judge-model go with --judge');
  const json = values.json === undefined ? null : checkOutputPath(values.json, '--json');
  const html = values.html === undefined ? null : checkOutputPath(values.html, '--html');
  const run = runDir(need(values.run, '--run DIR', 'score'));
  const judgeFlags: HarnessFlags = { baseUrl: values['judge-base-url'], model: values['judge-model'] };
  const judgeChoice = values.judge === undefined ? null : parseHarnessChoice(values.judge, judgeFlags);
  const judgeHarnesses = judgeChoice ? await harnessLoader(judgeChoice, judgeFlags) : null;

  const results = readCaseResults(run.dir, run.manifest);
  let score: EvalScore = scoreRun(run.manifest, results, { threshold, tolerance, dir: run.dir });
  if (judgeChoice && judgeHarnesses && values.judge) {
    const store = await Store.open(run.manifest.store);
    try {
      const judge = await runJudge(score, results, harnessSettings(values.judge, judgeChoice, judgeFlags), {
        harness: async () => {
          const a = await judgeHarnesses();
          return { harness: a.flagged.compiler ?? a.flagged.reviewers[0] ?? a.design, hint: a.missingHint ?? null };
        },
        patchset: (result) => (result.report ? (store.getPatchset(result.report.patchset) ?? null) : null),
        log: (line) => stderr(`${line}\n`),
      });
      score = { ...score, judge };
    } finally {
      store.close();
    }
  }
  if (json) writeFileAtomic(json, `${JSON.stringify(score, null, 2)}\n`);
  if (html) writeFileAtomic(html, renderScoreHtml(score));
  process.stdout.write(scoreText(score));
  if (json) process.stdout.write(`Score:       ${json}\n`);
  if (html) process.stdout.write(`HTML report: ${html}\n`);
  return 0;
}

async function compareCommand(argv: readonly string[]): Promise<number> {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: false,
    options: { run: { type: 'string', multiple: true }, threshold: { type: 'string' }, tolerance: { type: 'string' }, json: { type: 'string' }, html: { type: 'string' } },
  });
  const runs = values.run ?? [];
  if (runs.length !== 2) throw new EvalUsageError(`eval compare takes two runs: --run DIR --run DIR (got ${runs.length})`);
  const threshold = severityFlag(values.threshold);
  const tolerance = integerFlag(values.tolerance, '--tolerance', 0, EVAL_MAX_LINE_TOLERANCE, EVAL_DEFAULT_LINE_TOLERANCE);
  const json = values.json === undefined ? null : checkOutputPath(values.json, '--json');
  const html = values.html === undefined ? null : checkOutputPath(values.html, '--html');
  const [a, b] = runs.map(runDir) as [ReturnType<typeof runDir>, ReturnType<typeof runDir>];
  const score = (r: typeof a) => scoreRun(r.manifest, readCaseResults(r.dir, r.manifest), { threshold, tolerance, dir: r.dir });
  const compared = compareScores(score(a), score(b));
  if (!compared.ok) throw new Refusal(`cannot compare: ${compared.error}`);
  if (json) writeFileAtomic(json, `${JSON.stringify(compared.value, null, 2)}\n`);
  if (html) writeFileAtomic(html, renderCompareHtml(compared.value));
  process.stdout.write(compareText(compared.value));
  if (json) process.stdout.write(`Comparison:  ${json}\n`);
  if (html) process.stdout.write(`HTML report: ${html}\n`);
  return 0;
}
