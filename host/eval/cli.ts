/**
 * `rennet eval …`: its own sub-commands and flags, parsed here so the main CLI's option table
 * stays the review's. `corpus` builds a case file (cliCorpus.ts); `run`, `score` and `compare`
 * review and score one (cliRun.ts). Exit codes as the main CLI: 0 success, 1 refused, 2 usage.
 */
import { evalCorpusCli } from './cliCorpus';
import { evalRunCli } from './cliRun';
import { EVAL_USAGE, EvalUsageError } from './usage';

export { EVAL_USAGE, EvalUsageError };

export async function evalCli(argv: readonly string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '--help' || sub === '-h') {
    process.stdout.write(EVAL_USAGE);
    return sub === undefined ? 2 : 0;
  }
  if (sub === 'corpus') return evalCorpusCli(rest);
  if (sub === 'run' || sub === 'score' || sub === 'compare') return evalRunCli(sub, rest);
  throw new EvalUsageError(`unknown eval command "${sub}" (corpus, run, score, compare)`);
}
