import { parseArgs } from 'node:util';
import type { EvalCorpus } from '../../protocol/eval';
import type { RennetError } from '../../protocol/result';
import { writeBuiltinCorpus } from './builtin';
import { buildHistoryCorpus, EVAL_HISTORY_WALK, outUnwritableReason, writeCorpusFile, type HistoryCorpusReport } from './corpus';
import { EVAL_CORPUS_DEFAULT_LIMIT, EVAL_CORPUS_MAX_LIMIT, parseSinceDate, SKIP_REASON_WORDS, type SkipReason } from './corpusSelect';
import { EvalUsageError } from './usage';

/**
 * `rennet eval corpus --repo DIR [--since DATE] [--limit N] --out FILE` and
 * `rennet eval corpus --builtin DIR --out FILE`. A wrong command line is a usage error (exit 2)
 * before anything is read; a refusal (not a repository, no fix found, --out not writable, DIR
 * not empty) exits 1 and writes no corpus file.
 */
export async function evalCorpusCli(argv: readonly string[]): Promise<number> {
  let values: { repo?: string; builtin?: string; since?: string; limit?: string; out?: string };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: { repo: { type: 'string' }, builtin: { type: 'string' }, since: { type: 'string' }, limit: { type: 'string' }, out: { type: 'string' } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new EvalUsageError(`eval corpus: ${(error as Error).message}`);
  }
  if ((values.repo === undefined) === (values.builtin === undefined)) throw new EvalUsageError('eval corpus needs exactly one of --repo DIR or --builtin DIR');
  if (!values.out) throw new EvalUsageError('eval corpus needs --out FILE');
  if (values.builtin !== undefined && (values.since !== undefined || values.limit !== undefined)) {
    throw new EvalUsageError('--since and --limit apply to --repo only');
  }
  let since: number | null = null;
  if (values.since !== undefined) {
    since = parseSinceDate(values.since);
    if (since === null) throw new EvalUsageError(`--since "${values.since}" is not a date: write YYYY-MM-DD (midnight UTC) or YYYY-MM-DDTHH:MM[:SS] with Z or an offset`);
  }
  let limit = EVAL_CORPUS_DEFAULT_LIMIT;
  if (values.limit !== undefined) {
    limit = /^\d+$/.test(values.limit) ? Number(values.limit) : Number.NaN;
    if (!(limit >= 1 && limit <= EVAL_CORPUS_MAX_LIMIT)) throw new EvalUsageError(`--limit "${values.limit}" is not a whole number from 1 to ${EVAL_CORPUS_MAX_LIMIT}`);
  }
  const unwritable = outUnwritableReason(values.out);
  if (unwritable !== null) return refuse(`cannot write --out: ${unwritable}`);

  if (values.builtin !== undefined) {
    const built = await writeBuiltinCorpus(values.builtin);
    if (!built.ok) return refuseError(built.error);
    const written = writeOut(values.out, built.value);
    if (written !== null) return refuse(written);
    const clean = built.value.cases.filter((item) => item.clean === true).length;
    process.stdout.write(
      `wrote ${built.value.cases.length} built-in cases (${built.value.cases.length - clean} bugs, ${clean} clean twins) to ${values.out}; their repositories are under ${values.builtin}\n`,
    );
    return 0;
  }

  const built = await buildHistoryCorpus(values.repo as string, { since, limit });
  if (!built.ok) return refuseError(built.error);
  const summary = historySummary(built.value, values.since);
  if (built.value.corpus.cases.length === 0) return refuse(`no case found on ${summary}; nothing written`);
  const written = writeOut(values.out, built.value.corpus);
  if (written !== null) return refuse(written);
  process.stdout.write(`wrote ${built.value.corpus.cases.length} cases to ${values.out} from ${summary}\n`);
  return 0;
}

/** What the walk saw, in words: "the first-parent history of HEAD of /repo: 1634 commits, …". */
function historySummary(report: HistoryCorpusReport, since: string | undefined): string {
  const skipped = (Object.keys(report.skipped) as SkipReason[]).sort().map((reason) => `${report.skipped[reason]} ${SKIP_REASON_WORDS[reason]}`);
  return [
    `${EVAL_HISTORY_WALK} of ${report.corpus.repo ?? '?'}${since !== undefined ? ` since ${since}` : ''}`,
    `: ${report.scanned} commits, ${report.fixMessages} whose message says they fix a bug`,
    skipped.length > 0 ? `; left out: ${skipped.join(', ')}` : '',
    report.limited ? `; stopped at --limit ${report.corpus.cases.length}` : '',
  ].join('');
}

/** Writes the corpus file; null when written, else why not (checked writable before, it may still fail: a full disk). */
function writeOut(out: string, corpus: EvalCorpus): string | null {
  try {
    writeCorpusFile(out, corpus);
    return null;
  } catch (error) {
    return `cannot write ${out}: ${(error as Error).message}`;
  }
}

function refuse(message: string): number {
  process.stderr.write(`rennet: ${message}\n`);
  return 1;
}

function refuseError(error: RennetError): number {
  return refuse(error.message);
}
