import { existsSync, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { LENSES, LENS_TITLES, type Lens } from '../../protocol/board';
import type { Patchset } from '../../protocol/patchset';
import type { Result } from '../../protocol/result';
import type { LaneFailure, ReportTarget, ReviewReport } from '../../protocol/review';
import type { BoardState } from '../board/state';
import type { Store } from '../store';
import { FORMAT_NAMES, type DesignAssembly } from '../design/model';
import type { ContextDirInput, ContextDirResult, RelatedContextItem, writeNoiseOffer } from '../pipeline/contextDir';
import type { Clock, PromptReader } from '../pipeline/ports';
import type { GenerationOutcome, HarnessAssignment, LaneChange, LensPipelineInput, LensPipelineSeams, RoundCompose } from '../pipeline/types';
import { renderReviewHtml } from './html';
import { resumableGeneration, roundCompositionOfGeneration, roundReportOfGeneration } from './resume';
import { countSummary, retryText, toReviewReport } from './report';

/**
 * `rennet review` after the capture: run the lens pipeline, stream one progress line per lane
 * state change to stderr, print each board's title, state and counts to stdout, and write the
 * JSON report and the static HTML page when asked. Every seam is injected (cli.ts wires the real
 * ones), so this runs in-process in tests.
 *
 * A capture whose session's live generation was interrupted (the process stopped mid-run) resumes
 * that generation (resume.ts): the same id, its settled lanes kept with no model call.
 *
 * Outcomes: the pipeline ran → exit 0, whatever the lanes settled as. A refusal (an output path
 * that cannot be written, a workspace the seats cannot run in) → ReviewRefusal, exit 1.
 */

export class ReviewRefusal extends Error {}

export interface ReviewRunOptions extends LensRunOptions {
  jsonFile: string | null;
  htmlFile: string | null;
  /** The report's `target` (a pull-request review). */
  reportTarget?: ReportTarget;
  /** `--since-last-review`: the report's `delta` and `priorItems` (host/rereview/run.ts). */
  rereview?: Pick<ReviewReport, 'delta' | 'priorItems'>;
}

export interface ReviewRunDeps {
  runPipeline(input: LensPipelineInput, seams: LensPipelineSeams): Promise<GenerationOutcome>;
  /**
   * resumeLensPipeline (holding the run claim, resume.ts): picks an interrupted generation back
   * up. Absent: a lens run never resumes, it always draws a new generation.
   */
  resumePipeline?(input: LensPipelineInput, seams: LensPipelineSeams): Promise<GenerationOutcome>;
  writeContextDir(input: ContextDirInput): Promise<ContextDirResult>;
  writeNoiseOffer(input: Parameters<typeof writeNoiseOffer>[0]): Promise<ContextDirResult>;
  prompts: PromptReader;
  clock: Clock;
  /**
   * The Design fast path (host/design): assembled once, before the context directory is written,
   * so design-sources.md names the same sources the pipeline's Design lane reads.
   */
  assembleDesign?(patchset: Patchset): Promise<DesignAssembly>;
  stdout(text: string): void;
  stderr(text: string): void;
  newGenerationId(): string;
  /** The reviewed head as the seats' working directory (host/read/headWorkspace.ts); absent: the checkout. */
  headWorkspace?(dataDir: string, repoDir: string, patchset: Patchset): Promise<Result<string>>;
}

/** Refuses an output path before any work: its directory must exist and it must not be a directory. */
export function checkOutputPath(file: string, flag: string): string {
  const full = resolve(file);
  if (existsSync(full) && statSync(full).isDirectory()) throw new ReviewRefusal(`${flag} ${file} is a directory; name a file`);
  const parent = dirname(full);
  if (!existsSync(parent) || !statSync(parent).isDirectory()) throw new ReviewRefusal(`${flag} ${file}: the directory ${parent} does not exist`);
  return full;
}

/** What a lens run needs, whoever asks for it (`rennet review`, or the VS Code host's runner). */
export interface LensRunOptions {
  patchset: Patchset;
  sessionId: string;
  /** The repository's work tree: the seats' working directory and the context directory's home. */
  workspace: string;
  harnesses: HarnessAssignment;
  /** Durable persistence for the generation; null runs in memory only. */
  store: Store | null;
  /** A pull-request review: its title and description (pr.md) and linked issues (related-context.md), read from the forge as data. */
  pullRequest?: { title: string; body: string; related: RelatedContextItem[] } | null;
  /** A round's successor: the round's verified report (round-report.md), the lenses' round context. */
  roundReport?: ContextDirInput['roundReport'];
  /** A round's successor: what its lanes are composed against (host/board/compose.ts). */
  compose?: RoundCompose | null;
  /** A resume (resume.ts): the interrupted generation's id, instead of a freshly minted one. */
  generationId?: string;
  /** A re-review's delta generation: the patchset is the fix delta since `from` (LensPipelineInput.rereviewDelta). */
  rereviewDelta?: { from: string } | null;
}

export type LensRunDeps = Pick<ReviewRunDeps, 'writeContextDir' | 'writeNoiseOffer' | 'prompts' | 'clock' | 'assembleDesign' | 'newGenerationId' | 'headWorkspace'>;

/** The caller's view of a run: frames, lane changes, diagnostic lines, cancellation. */
export type LensRunObservers = Pick<LensPipelineSeams, 'onFrame' | 'onLane' | 'log' | 'signal' | 'onComposed'>;

/** A run ready to start: `runPipeline(input, seams)`. */
export interface PreparedLensRun {
  generationId: string;
  input: LensPipelineInput;
  seams: LensPipelineSeams;
}

/**
 * Everything between a capture and the pipeline, shared by `rennet review` and the VS Code host
 * (host/review/runner.ts): the Design fast path assembled once, the context directory written
 * (naming the same design sources), a fresh generation id (or the resumed one), and the seams (the Noise offer written
 * into the context directory). Throws ReviewRefusal when the seats cannot run in the workspace.
 */
export async function prepareLensRun(options: LensRunOptions, deps: LensRunDeps, observers: LensRunObservers = {}): Promise<PreparedLensRun> {
  const assembly = deps.assembleDesign ? await deps.assembleDesign(options.patchset) : null;
  const designSources = assembly && assembly.kind !== 'none' && assembly.sources.length > 0 ? { format: FORMAT_NAMES[assembly.format], paths: assembly.sources } : null;

  let context: ContextDirResult;
  try {
    context = await deps.writeContextDir({
      workspace: options.workspace,
      sessionId: options.sessionId,
      patchset: options.patchset,
      designSources,
      ...(options.pullRequest ? { pr: { title: options.pullRequest.title, body: options.pullRequest.body }, relatedContext: options.pullRequest.related } : {}),
      ...(options.roundReport ? { roundReport: options.roundReport } : {}),
    });
  } catch (error) {
    const message = (error as Error).message;
    const bare = /must be run in a work tree|is not a git work tree/.test(message);
    throw new ReviewRefusal(
      bare
        ? `the lenses run in a work tree, and ${options.workspace} has none (a bare repository?); review a checkout of it (rennet capture works on a bare repository)`
        : `cannot prepare the seats' context directory in ${options.workspace}: ${message}`,
    );
  }

  const generationId = options.generationId ?? deps.newGenerationId();
  const seatDir = await seatDirectory(options, deps, observers);
  const seams: LensPipelineSeams = {
    prompts: deps.prompts,
    clock: deps.clock,
    store: options.store,
    // No assembler given: the pipeline falls back to its own default (host/pipeline/design.ts).
    ...(assembly ? { design: () => assembly } : {}),
    ...observers,
    // The Noise seat reads the placed members (ids and regions, no line bodies) from the context dir.
    async onNoiseOffer(regions) {
      await deps.writeNoiseOffer({ workspace: options.workspace, sessionId: options.sessionId, patchset: options.patchset, regions });
    },
  };
  const input: LensPipelineInput = {
    patchset: options.patchset,
    sessionId: options.sessionId,
    generationId,
    workspaceDir: options.workspace,
    ...(seatDir ? { seatDir } : {}),
    contextDir: context.relative,
    harnesses: options.harnesses,
    ...(options.compose ? { compose: options.compose } : {}),
    ...(options.rereviewDelta ? { rereviewDelta: options.rereviewDelta } : {}),
  };
  return { generationId, input, seams };
}

/** Harnesses that run a process in the seat's directory and read files there with their own tools. */
const DIRECTORY_HARNESSES: ReadonlySet<string> = new Set(['claude-code', 'codex']);

/**
 * Where the seats run: the reviewed head as a snapshot under the data directory when there is a
 * store (its directory), a headWorkspace dep, and a seat whose harness reads its directory (a
 * CLI); else the checkout itself — HTTP and vscode.lm seats read only through the read tools, so
 * no snapshot is written for them. A snapshot that could not be made says why in the log (the
 * read tools still read the capture either way).
 */
async function seatDirectory(options: LensRunOptions, deps: LensRunDeps, observers: LensRunObservers): Promise<string | null> {
  if (!deps.headWorkspace || !options.store) return null;
  const h = options.harnesses;
  const harnesses = [h.design, h.sequence, h.decisions, h.noise, ...h.flagged.reviewers, h.flagged.compiler];
  if (!harnesses.some((harness) => harness !== null && DIRECTORY_HARNESSES.has(harness.kind))) return null;
  const made = await deps.headWorkspace(options.store.dir, options.workspace, options.patchset);
  if (made.ok) return made.value;
  observers.log?.(`[seat] the seats run in ${options.workspace}: ${made.error.message}`);
  return null;
}

export async function runReview(options: ReviewRunOptions, deps: ReviewRunDeps): Promise<ReviewReport> {
  const jsonPath = options.jsonFile === null ? null : checkOutputPath(options.jsonFile, '--json');
  const htmlPath = options.htmlFile === null ? null : checkOutputPath(options.htmlFile, '--html');

  // An interrupted generation of this capture is resumed: its settled lanes are not drafted again.
  const decision = options.store && deps.resumePipeline && !options.generationId ? resumableGeneration(options.store, options.sessionId, options.patchset.id, options.harnesses) : null;
  const plan = decision?.plan ?? null;
  const roundReport = options.roundReport ?? (plan && options.store ? roundReportOfGeneration(options.store, options.sessionId, plan.generationId) : null);
  const composition = !options.compose && plan && options.store ? roundCompositionOfGeneration(options.store, options.sessionId, plan.generationId) : null;
  const latest = new Map<Lens, BoardState>();
  const { generationId, input, seams } = await prepareLensRun(
    { ...options, ...(plan ? { generationId: plan.generationId } : {}), ...(roundReport ? { roundReport } : {}), ...(composition?.compose ? { compose: composition.compose } : {}) },
    deps,
    {
      ...(composition?.onComposed ? { onComposed: composition.onComposed } : {}),
      onFrame(frame) {
        latest.set(frame.lens, frame.board);
      },
      onLane(change) {
        deps.stderr(progressLine(change, latest.get(change.lens)));
      },
    },
  );
  if (plan && deps.resumePipeline) {
    deps.stderr(`Generation ${generationId}: resuming the lenses interrupted earlier (kept: ${plan.kept.join(', ') || 'none'}; drafting: ${plan.redrafted.join(', ')})\n`);
  } else {
    deps.stderr(`Generation ${generationId}: running the lenses\n`);
  }
  const outcome = await (plan && deps.resumePipeline ? deps.resumePipeline(input, seams) : deps.runPipeline(input, seams));
  const built = toReviewReport(outcome, options.patchset, outcome.generationId || generationId);
  const report: ReviewReport = { ...(options.reportTarget ? { target: options.reportTarget } : {}), ...built, ...(options.rereview ?? {}) };

  if (jsonPath) writeOutput(jsonPath, `${JSON.stringify(report, null, 2)}\n`, '--json');
  if (htmlPath) writeOutput(htmlPath, renderReviewHtml(report, options.patchset), '--html');
  deps.stdout(summaryText(report, { json: options.jsonFile, html: options.htmlFile }));
  return report;
}

function writeOutput(path: string, text: string, flag: string): void {
  try {
    writeFileSync(path, text);
  } catch (error) {
    throw new ReviewRefusal(`${flag}: cannot write ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

// ─── Text ──────────────────────────────────────────────────────────────────────────────────

const LENS_WIDTH = Math.max(...LENSES.map((l) => l.length)) + 1;

/** `  sequence   working…`, `  sequence   settled (4 steps)`, `  flagged    failed: … (retryable)`. */
export function progressLine(change: Pick<LaneChange, 'lens' | 'state' | 'absence' | 'failure'>, board?: BoardState): string {
  const lens = change.lens.padEnd(LENS_WIDTH);
  switch (change.state) {
    case 'queued':
      return `  ${lens} queued\n`;
    case 'waiting':
      return `  ${lens} waiting…\n`;
    case 'working':
      return `  ${lens} working…\n`;
    case 'settled': {
      const counts = board ? countSummary(change.lens, [...board.elements.values()]) : '';
      return `  ${lens} settled${counts ? ` (${counts})` : ''}\n`;
    }
    case 'absent':
      return `  ${lens} absent${change.absence ? ` (${change.absence})` : ''}\n`;
    case 'failed':
      return `  ${lens} failed${change.failure ? `: ${oneLine(change.failure.message)} (${retryText(change.failure)})` : ''}\n`;
  }
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

const TITLE_WIDTH = Math.max(...LENSES.map((l) => LENS_TITLES[l].length)) + 2;

/** The stdout summary: one line per board in canonical order, then the files written. */
export function summaryText(report: ReviewReport, files: { json: string | null; html: string | null }): string {
  const lines = [`Review ${report.generation} · patchset ${report.patchset}`];
  for (const board of report.boards) {
    const name = LENS_TITLES[board.lens].padEnd(TITLE_WIDTH);
    const state = board.state.padEnd(9);
    if (board.state === 'settled') {
      const counts = countSummary(board.lens, board.elements);
      const title = board.document.title.trim();
      lines.push(`  ${name}${state}${[title ? `“${oneLine(title)}”` : '', counts].filter(Boolean).join(' · ')}`);
    } else if (board.state === 'absent') {
      lines.push(`  ${name}${state}${board.absence ?? ''}`);
    } else {
      lines.push(`  ${name}${state}${failureText(board.failure)}`);
    }
  }
  if (files.json) lines.push(`JSON report: ${files.json}`);
  if (files.html) lines.push(`HTML page:   ${files.html}`);
  return `${lines.join('\n')}\n`;
}

function failureText(failure: LaneFailure | null): string {
  return failure ? `${oneLine(failure.message)} (${retryText(failure)})` : '';
}
