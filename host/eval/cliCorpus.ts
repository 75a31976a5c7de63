import { EvalUsageError } from './usage';

/** `rennet eval corpus`: placeholder until the corpus builder lands. */
export async function evalCorpusCli(argv: readonly string[]): Promise<number> {
  throw new EvalUsageError(`eval corpus is not built yet (${argv.length} arguments)`);
}
