import { isAbsolute, join } from 'node:path';
import { z } from 'zod';
import { RESULT_MAX_BYTES } from '../../protocol/board';
import type { Patchset } from '../../protocol/patchset';
import type { Result } from '../../protocol/result';
import type { SeatSpend } from '../../protocol/review';
import { REPORT_BEYOND_MAX_ENTRIES, REPORT_NOTE_MAX_CHARS, REPORT_RESPONSE_MAX_BYTES, type EvidenceFile, type ReportRefusal, type RoundReport } from '../../protocol/rounds';
import { jsonLinePages, oneTurnSpend, readsText, runOneTurn } from '../pipeline/oneTurn';
import { renderInputSchema, type JsonSchemaObject } from '../board/tools';
import type { SeatSpec } from '../pipeline/ports';
import { roundReportPrompt } from '../pipeline/prompts';
import { withReadTools } from '../read/compose';
import { gitChangeSource } from '../read/gitSource';
import { readSurface } from '../read/tools';
import type { LensHarness } from '../harness/harnessConfig';
import { verifyClassification } from './verify';

/**
 * The round report's one classification turn. The seat gets its two own tools — `read_evidence`
 * (evidence.json page by page: the asks and the round's facts on page 1, manifest units on every
 * page, each page within the read tools' result limit) and `submit_report` (the classification,
 * verified by the host the moment it is handed in — a refusal names what is wrong, and the seat may
 * correct it within the same turn) — and the read tools every seat gets (host/read/), over the
 * round's successor patchset, so it can read the code around a unit before it judges it. Nothing
 * of the change is in the prompt. No second turn is ever spawned: a turn that ends without an
 * accepted report fails the round at this boundary.
 */

export const READ_EVIDENCE = 'read_evidence';
export const SUBMIT_REPORT = 'submit_report';
/** The report seat's turn deadline. */
export const REPORT_TURN_TIMEOUT_MS = 10 * 60_000;

interface ReportTool {
  name: string;
  description: string;
  inputSchema: JsonSchemaObject;
  zod: z.ZodObject;
}

const TOOLS: readonly ReportTool[] = [
  tool(
    READ_EVIDENCE,
    'Read evidence.json, page by page: page 1 first (the successor patchset id, the dispatched asks, the changed paths, the commit range, and the first manifest units); every page names the next. Read them all.',
    z.strictObject({ page: z.number().int().positive().optional().describe('1 for the first page (the default).') }),
  ),
  tool(
    SUBMIT_REPORT,
    `Hand in the classification: one outcome per dispatched ask (addressed, partial or untouched, with the ev- ids it rests on and a short note) and the beyond entries (ev- ids of changes no ask asked for, with a note; at most ${REPORT_BEYOND_MAX_ENTRIES}). Every manifest id exactly once overall; untouched cites none. The host checks it at once and answers what is wrong, if anything.`,
    z.strictObject({
      outcomes: z
        .array(
          z.strictObject({
            askId: z.string().min(1).describe('The ask id, exactly as evidence.json gives it.'),
            outcome: z.enum(['addressed', 'partial', 'untouched']),
            evidenceIds: z.array(z.string()).describe('ev- ids from the manifest; none for untouched.'),
            note: z.string().max(REPORT_NOTE_MAX_CHARS).describe('One or two sentences: what the round changed for this ask, or left undone.'),
          }),
        )
        .describe('Exactly one per dispatched ask.'),
      beyond: z.array(z.strictObject({ evidenceIds: z.array(z.string()).min(1), note: z.string().max(REPORT_NOTE_MAX_CHARS) })).describe('Changes no ask asked for.'),
    }),
  ),
];

function tool(name: string, description: string, zod: z.ZodObject): ReportTool {
  return { name, description, inputSchema: renderInputSchema(zod), zod };
}

/** evidence.json as pages of whole JSON lines, each page within the read tools' limit; page 1 starts with the round's facts. */
export function evidencePages(evidence: EvidenceFile): string[] {
  const head = JSON.stringify({ successorPatchsetId: evidence.successorPatchsetId, asks: evidence.asks, changedPaths: evidence.changedPaths, range: evidence.range, units: evidence.manifest.length });
  return jsonLinePages([head, ...evidence.manifest.map((u) => JSON.stringify(u))], READ_EVIDENCE);
}

export interface ReportSurface {
  readonly tools: readonly ReportTool[];
  call(name: string, input: unknown): { text: string; isError: boolean };
  /** The accepted, verified report; null until one is accepted. */
  readonly report: RoundReport | null;
  /** The last refusal of a handed-in report, if the seat never got one accepted. */
  readonly lastRefusal: { reason: ReportRefusal; message: string } | null;
  stats(): { calls: number; refusals: number; pagesRead: number };
}

export interface ReportSubject {
  roundId: string;
  evidence: EvidenceFile;
  /** The dispatched asks in dispatch order, with their exact text. */
  asks: ReadonlyArray<{ id: string; text: string }>;
}

export function reportSurface(subject: ReportSubject): ReportSurface {
  const pages = evidencePages(subject.evidence);
  const read = new Set<number>();
  let report: RoundReport | null = null;
  let lastRefusal: { reason: ReportRefusal; message: string } | null = null;
  let calls = 0;
  let refusals = 0;
  const byName = new Map(TOOLS.map((t) => [t.name, t]));
  const refuse = (text: string) => {
    refusals++;
    return { text: text.length > RESULT_MAX_BYTES ? `${text.slice(0, RESULT_MAX_BYTES - 40)} [cut]` : text, isError: true };
  };
  return {
    tools: TOOLS,
    get report() {
      return report;
    },
    get lastRefusal() {
      return lastRefusal;
    },
    stats: () => ({ calls, refusals, pagesRead: read.size }),
    call(name, input) {
      calls++;
      const t = byName.get(name);
      if (!t) return refuse(`There is no tool named "${String(name).slice(0, 60)}". The tools are: ${TOOLS.map((x) => x.name).join(', ')}.`);
      if (name === SUBMIT_REPORT) {
        if (report) return refuse('A report was already accepted; it stands. End your turn now.');
        // Measured before anything is parsed: the response cap is the first check.
        const bytes = Buffer.byteLength(JSON.stringify(input ?? null), 'utf8');
        const verified = verifyClassification({
          roundId: subject.roundId,
          successorPatchsetId: subject.evidence.successorPatchsetId,
          manifest: subject.evidence.manifest,
          asks: subject.asks,
          raw: input,
          rawBytes: bytes,
        });
        if (!verified.ok) {
          lastRefusal = { reason: verified.error.reason, message: verified.error.message };
          return refuse(`The report was not accepted (${verified.error.reason}): ${verified.error.message} Correct it and call ${SUBMIT_REPORT} again.`);
        }
        report = verified.value;
        return {
          text: `The report is accepted: ${report.counts.addressed} addressed, ${report.counts.partial} partial, ${report.counts.untouched} untouched, ${report.counts.beyond} beyond. End your turn now.`,
          isError: false,
        };
      }
      const parsed = t.zod.safeParse(input ?? {});
      if (!parsed.success) return refuse(`The input of ${name} is not valid (${parsed.error.issues[0]?.message ?? 'unknown'}).`);
      const page = (parsed.data as { page?: number }).page ?? 1;
      if (page > pages.length) return refuse(`evidence.json has ${pages.length} page${pages.length === 1 ? '' : 's'}; page ${page} does not exist.`);
      read.add(page);
      return { text: pages[page - 1] as string, isError: false };
    },
  };
}

export interface ReportTurnInput extends ReportSubject {
  /** The bound workspace: the turn's working directory, and the repository the read tools read. */
  workspace: string;
  /** The context directory, relative to the workspace (`.rennet/context/<session>`): what read_context reads. */
  contextDir: string;
  /** The round's successor patchset (its id is the evidence's): what the read tools serve. */
  successor: Patchset;
}

export type ReportTurnFailure =
  { kind: 'no-harness'; message: string } | { kind: 'refused'; reason: ReportRefusal; message: string } | { kind: 'no-report' | 'harness-failed' | 'cancelled'; message: string };

/** One classification turn; the verified report, or why there is none. Never throws. */
export async function runReportTurn(
  harnessOf: (signal: AbortSignal) => Promise<LensHarness>,
  input: ReportTurnInput,
  options: { signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<Result<{ report: RoundReport; harness: string; model: string | null; spend: SeatSpend }, ReportTurnFailure>> {
  const abort = new AbortController();
  const onAbort = () => abort.abort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    abort.abort();
  }, options.timeoutMs ?? REPORT_TURN_TIMEOUT_MS);
  try {
    let chosen: LensHarness;
    try {
      chosen = await harnessOf(abort.signal);
    } catch (error) {
      return { ok: false, error: { kind: 'no-harness', message: `the report seat's harness could not be used: ${(error as Error).message}` } };
    }
    const harness = chosen.harness;
    if (!harness) return { ok: false, error: { kind: 'no-harness', message: `no harness is available for the round report${chosen.hint ? ` (${chosen.hint})` : ''}` } };
    const surface = reportSurface(input);
    const contextDir = isAbsolute(input.contextDir) ? input.contextDir : join(input.workspace, input.contextDir);
    const served = withReadTools(surface, readSurface(gitChangeSource({ repoDir: input.workspace, patchset: input.successor, contextDir })));
    const seat: SeatSpec = { seatId: 'round:report', lens: 'flagged', role: 'reviewer' };
    const started = performance.now();
    const turn = await runOneTurn(harness, { seat, prompt: roundReportPrompt({ contextDir: input.contextDir }), cwd: input.workspace, surface: served, signal: abort.signal });
    const spend = oneTurnSpend(seat, harness, turn, performance.now() - started, served.stats());
    if (surface.report) return { ok: true, value: { report: surface.report, harness: harness.kind, model: harness.model, spend } };
    if (turn.outcome === 'aborted' || abort.signal.aborted)
      return {
        ok: false,
        error: { kind: 'cancelled', message: timedOut ? `the report seat did not finish within ${Math.round((options.timeoutMs ?? REPORT_TURN_TIMEOUT_MS) / 1000)} s` : 'the round was cancelled' },
      };
    if (surface.lastRefusal)
      return {
        ok: false,
        error: { kind: 'refused', reason: surface.lastRefusal.reason, message: `the report seat's last report was refused (${surface.lastRefusal.reason}): ${surface.lastRefusal.message}` },
      };
    if (turn.outcome === 'failed') return { ok: false, error: { kind: 'harness-failed', message: turn.message ?? 'the report seat failed without saying why' } };
    const s = surface.stats();
    return {
      ok: false,
      error: {
        kind: 'no-report',
        message: `the report seat ended its turn without handing in a report (${s.calls} tool calls, ${s.pagesRead} evidence pages read; ${readsText(spend)} of the change)`,
      },
    };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
  }
}

/** Exported for the tool-budget and prompt tests. */
export const REPORT_TOOLS = TOOLS;
export { REPORT_RESPONSE_MAX_BYTES };
