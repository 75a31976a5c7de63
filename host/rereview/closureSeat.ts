import { z } from 'zod';
import { RESULT_MAX_BYTES } from '../../protocol/board';
import type { Patchset } from '../../protocol/patchset';
import type { Result } from '../../protocol/result';
import type { SeatSpend } from '../../protocol/review';
import type { EvidenceUnit } from '../../protocol/rounds';
import { checkToolCall, jsonLinePages, oneTurnSpend, readsText, runOneTurn } from '../pipeline/oneTurn';
import { renderInputSchema, type JsonSchemaObject } from '../board/tools';
import type { SeatSpec } from '../pipeline/ports';
import { priorClosurePrompt } from '../pipeline/prompts';
import { withReadTools } from '../read/compose';
import { gitChangeSource } from '../read/gitSource';
import { readSurface } from '../read/tools';
import type { LensHarness } from '../harness/harnessConfig';
import { verifyClosures, type ClosureRefusal, type ItemClosure } from './closures';
import type { PriorItem } from './items';

/**
 * The re-review's closure seat: one turn that reads the earlier review's items and the fix
 * delta's units (`read_prior_items`, page by page), may read the code through the read tools over
 * the delta patchset, and hands in one closure per item (`submit_closures`), verified by the host
 * the moment it arrives (closures.ts) — a refusal names what is wrong and the seat may correct it
 * within the turn. Nothing of the pull request is in the prompt. A turn that ends without accepted
 * closures leaves every item open, with the reason said: nothing is resolved by a push alone.
 */

export const READ_PRIOR_ITEMS = 'read_prior_items';
export const SUBMIT_CLOSURES = 'submit_closures';
export const CLOSURE_TURN_TIMEOUT_MS = 10 * 60_000;
/** Longest reason of one closure, in characters. */
export const CLOSURE_REASON_MAX_CHARS = 1_000;

interface ClosureTool {
  name: string;
  description: string;
  inputSchema: JsonSchemaObject;
  zod: z.ZodObject;
}

function tool(name: string, description: string, zod: z.ZodObject): ClosureTool {
  return { name, description, inputSchema: renderInputSchema(zod), zod };
}

export const CLOSURE_TOOLS: readonly ClosureTool[] = [
  tool(
    READ_PRIOR_ITEMS,
    'Read the earlier review and the fix delta, page by page: page 1 first (the reviewed commit, the head, and every earlier item with its id, place, text and weight), then the delta units with their ev- ids; every page names the next. Read them all.',
    z.strictObject({ page: z.number().int().positive().optional().describe('1 for the first page (the default).') }),
  ),
  tool(
    SUBMIT_CLOSURES,
    'Hand in the closures: per item you judge, resolved (with the ev- ids of the text hunks that resolve it) or open, and a reason. An item you leave out stays open. The host checks them at once and answers what is wrong, if anything.',
    z.strictObject({
      closures: z.array(
        z.strictObject({
          itemId: z.string().min(1).describe('The item id, exactly as read_prior_items gives it (R1, R2, …).'),
          closure: z.enum(['resolved', 'open']),
          evidenceIds: z.array(z.string()).describe('ev- ids of the fix delta; at least one text hunk for resolved, none needed for open.'),
          reason: z.string().max(CLOSURE_REASON_MAX_CHARS).describe('One or two sentences: what the delta changed for this item, or what is still missing.'),
        }),
      ),
    }),
  ),
];

export interface ClosureSubject {
  from: string;
  to: string;
  items: readonly PriorItem[];
  manifest: readonly EvidenceUnit[];
}

/** The items and the units as pages of whole JSON lines, each within the read tools' result limit. */
export function priorItemPages(subject: ClosureSubject): string[] {
  const head = JSON.stringify({
    reviewedCommit: subject.from,
    head: subject.to,
    items: subject.items.map((i) => ({ id: i.id, path: i.path, line: i.line, side: i.side, severity: i.severity, text: i.text })),
    units: subject.manifest.length,
  });
  return jsonLinePages([head, ...subject.manifest.map((u) => JSON.stringify(u))], READ_PRIOR_ITEMS);
}

export interface ClosureSurface {
  readonly tools: readonly ClosureTool[];
  call(name: string, input: unknown): { text: string; isError: boolean };
  readonly closures: ItemClosure[] | null;
  readonly lastRefusal: ClosureRefusal | null;
  stats(): { calls: number; refusals: number; pagesRead: number };
}

export function closureSurface(subject: ClosureSubject): ClosureSurface {
  const pages = priorItemPages(subject);
  const read = new Set<number>();
  let closures: ItemClosure[] | null = null;
  let lastRefusal: ClosureRefusal | null = null;
  let calls = 0;
  let refusals = 0;
  const refuse = (text: string) => {
    refusals++;
    return { text: text.length > RESULT_MAX_BYTES ? `${text.slice(0, RESULT_MAX_BYTES - 40)} [cut]` : text, isError: true };
  };
  return {
    tools: CLOSURE_TOOLS,
    get closures() {
      return closures;
    },
    get lastRefusal() {
      return lastRefusal;
    },
    stats: () => ({ calls, refusals, pagesRead: read.size }),
    call(name, input) {
      calls++;
      // The name and the input's shape, checked as every one-shot seat checks them (oneTurn.ts).
      const checked = checkToolCall(CLOSURE_TOOLS, name, input, 'nothing was handed in');
      if (!checked.ok) return refuse(checked.text);
      if (name === SUBMIT_CLOSURES) {
        if (closures) return refuse('The closures were already accepted; they stand. End your turn now.');
        const given = (checked.value as { closures: Array<{ itemId: string; closure: 'resolved' | 'open'; evidenceIds: string[]; reason: string }> }).closures;
        const verified = verifyClosures(subject.items, subject.manifest, given);
        if (!verified.ok) {
          lastRefusal = verified.error;
          return refuse(`The closures were not accepted (${verified.error.reason}): ${verified.error.message}. Correct them and call ${SUBMIT_CLOSURES} again.`);
        }
        closures = verified.value;
        const resolved = closures.filter((c) => c.closure === 'resolved').length;
        return { text: `The closures are accepted: ${resolved} of ${closures.length} items resolved. End your turn now.`, isError: false };
      }
      const page = (checked.value as { page?: number }).page ?? 1;
      if (page > pages.length) return refuse(`There ${pages.length === 1 ? 'is 1 page' : `are ${pages.length} pages`}; page ${page} does not exist.`);
      read.add(page);
      return { text: pages[page - 1] as string, isError: false };
    },
  };
}

export interface ClosureTurnInput extends ClosureSubject {
  /** The repository the read tools read (by object id, never its working tree) and the turn's directory. */
  workspace: string;
  /** The fix delta as a patchset (base: the reviewed commit): what the read tools serve. */
  delta: Patchset;
  /** The context directory read_context reads (absolute). */
  contextDir: string;
}

export interface ClosureOutcome {
  closures: ItemClosure[];
  /** null when the seat's closures were accepted; else why every item stayed open. */
  failure: string | null;
  harness: string | null;
  model: string | null;
  spend: SeatSpend | null;
}

/** Every item open, with why: what a re-review says when no closure could be had. */
export function allOpen(items: readonly PriorItem[], why: string): ItemClosure[] {
  return items.map((item) => ({ item, closure: 'open', reason: why, evidence: [] }));
}

/** One closure turn. Never throws; a failed turn leaves every item open and says why. */
export async function runClosureTurn(
  harnessOf: (signal: AbortSignal) => Promise<LensHarness>,
  input: ClosureTurnInput,
  options: { signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<Result<ClosureOutcome>> {
  if (input.items.length === 0) return { ok: true, value: { closures: [], failure: null, harness: null, model: null, spend: null } };
  const abort = new AbortController();
  const onAbort = () => abort.abort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(() => abort.abort(), options.timeoutMs ?? CLOSURE_TURN_TIMEOUT_MS);
  const open = (why: string, extra: Partial<ClosureOutcome> = {}): Result<ClosureOutcome> => ({
    ok: true,
    value: { closures: allOpen(input.items, why), failure: why, harness: null, model: null, spend: null, ...extra },
  });
  try {
    let chosen: LensHarness;
    try {
      chosen = await harnessOf(abort.signal);
    } catch (error) {
      return open(`the closure seat's harness could not be used: ${(error as Error).message}`);
    }
    const harness = chosen.harness;
    if (!harness) return open(`no harness is available to judge the earlier items${chosen.hint ? ` (${chosen.hint})` : ''}; they stay open`);
    const surface = closureSurface(input);
    const served = withReadTools(surface, readSurface(gitChangeSource({ repoDir: input.workspace, patchset: input.delta, contextDir: input.contextDir })));
    const seat: SeatSpec = { seatId: 'rereview:closures', lens: 'flagged', role: 'reviewer' };
    const started = performance.now();
    const turn = await runOneTurn(harness, { seat, prompt: priorClosurePrompt(), cwd: input.workspace, surface: served, signal: abort.signal });
    const spend = oneTurnSpend(seat, harness, turn, performance.now() - started, served.stats());
    const who = { harness: harness.kind, model: harness.model, spend };
    if (surface.closures) return { ok: true, value: { closures: surface.closures, failure: null, ...who } };
    if (abort.signal.aborted) return open('the closure seat was stopped before it handed in its closures; every item stays open', who);
    if (surface.lastRefusal) return open(`the closure seat's last closures were refused (${surface.lastRefusal.reason}: ${surface.lastRefusal.message}); every item stays open`, who);
    if (turn.outcome === 'failed') return open(`the closure seat failed (${turn.message ?? 'without saying why'}); every item stays open`, who);
    const s = surface.stats();
    return open(
      `the closure seat ended its turn without handing in closures (${s.calls} tool call${s.calls === 1 ? '' : 's'}, ${s.pagesRead} page${s.pagesRead === 1 ? '' : 's'} read; ${readsText(spend)} of the change); every item stays open`,
      who,
    );
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
  }
}
