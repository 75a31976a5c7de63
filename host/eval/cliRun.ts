import { EvalUsageError } from './usage';

/** `rennet eval run|score|compare`: placeholder until the runner lands. */
export async function evalRunCli(sub: 'run' | 'score' | 'compare', argv: readonly string[]): Promise<number> {
  throw new EvalUsageError(`eval ${sub} is not built yet (${argv.length} arguments)`);
}
