import { assembleDesignBoard } from '../design/assemble';
import { writeContextDir, writeNoiseOffer } from '../pipeline/contextDir';
import { readFileAtCommit } from '../pipeline/design';
import { createPromptReader } from '../pipeline/prompts';
import { newGenerationId, resumeLensPipeline, runLensPipeline } from '../pipeline/run';
import { headWorkspace } from '../read/headWorkspace';
import type { ReviewRunDeps } from './command';
import { claimedPipeline } from './resume';

/**
 * The production seams of `rennet review` (cli.ts): the real pipeline, the prompts/ reader, the
 * wall clock, the context directory writer, and the Design assembler reading specification files
 * at the captured head from the repository's object store (the pipeline's own reader). Every run,
 * fresh or resumed, holds its generation's run claim while it is in flight (resume.ts).
 */
export function reviewDeps(repoRoot: string, out: Pick<ReviewRunDeps, 'stdout' | 'stderr'>): ReviewRunDeps {
  return {
    runPipeline: claimedPipeline(runLensPipeline),
    resumePipeline: claimedPipeline(resumeLensPipeline),
    writeContextDir,
    writeNoiseOffer,
    prompts: createPromptReader(),
    clock: { now: () => new Date() },
    assembleDesign: (patchset) => assembleDesignBoard(patchset, (path) => readFileAtCommit(repoRoot, patchset.head, path)),
    newGenerationId,
    headWorkspace,
    ...out,
  };
}
