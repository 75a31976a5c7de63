import { join } from 'node:path';
import { CONTEXT_ROOT } from '../pipeline/contextDir';
import { withReadTools } from '../read/compose';
import { gitChangeSource } from '../read/gitSource';
import { seatWorkingDir } from '../read/headWorkspace';
import { readSurface } from '../read/tools';
import { EXPLAIN_TURN_TIMEOUT_MS, type QuoteAnchor } from '../../protocol/asks';
import { LENS_TITLES, type Lens } from '../../protocol/board';
import type { HarnessConfig } from '../../protocol/review';
import { err, ok, rennetError, type ErrorCode, type RennetError, type Result } from '../../protocol/result';
import { AsksExplainParams, type AsksExplainResult } from '../../protocol/rpc';
import { buildCitationIndex } from '../board/citations';
import { oneTurnSpend, readsText, runOneTurn } from '../pipeline/oneTurn';
import { loadBoard } from '../board/persist';
import type { SeatSpec } from '../pipeline/ports';
import { HarnessConfigRefusal, type LensHarness } from '../harness/harnessConfig';
import type { Store } from '../store';
import { explainPrompt, explainSurface, provenanceLine } from './explainTools';
import { canonicalJson, type AskLog } from './log';

/**
 * `rennet/asks/explain`: explain a span of board prose through the harness the anchor's lens
 * drafts with, as a quote thread.
 *
 * 1. Validate: the params' shape (the quote bounded as a command's is), the generation belongs to
 *    the session, the element is on that lens's board of that generation. A refusal here appends
 *    nothing.
 * 2. Open a thread on the anchor (quoteOpen), or use `threadId` when it names an open thread on the
 *    same anchor; append the reviewer's question (quoteReply, author `reviewer`).
 * 3. Resolve the lens's harness exactly as a draft would (lensHarnessFromConfig). None → refused
 *    `no-harness`, and the thread keeps only the question: no agent message is made up.
 * 4. Run ONE turn: the static explain prompt, its four read-only tools (explainTools.ts) and the
 *    read tools every seat gets (host/read/), served in-process and over a per-turn seat MCP
 *    server for the CLI harnesses, which run in a snapshot of the generation's reviewed head
 *    (host/read/headWorkspace.ts), never the user's checkout. The turn's spend — its reads of the
 *    change included — goes to the host log.
 * 5. Append the answer (quoteReply, author `agent`) ending with its provenance line.
 *
 * Every refusal after step 2 carries `detail.threadId`: the thread exists and holds the question.
 * `detail.reason` names why (ExplainRefusalReason). AsksChanged goes out through AskLog's onAppend.
 */

/** The reviewer's message that opens an explanation. */
export const EXPLAIN_QUESTION = 'Explain this passage.';
export { EXPLAIN_TURN_TIMEOUT_MS };

export type ExplainRefusalReason =
  | 'invalid'
  | 'unknown-session'
  | 'unknown-generation'
  | 'wrong-session'
  | 'unknown-board'
  | 'unreadable-board'
  | 'unknown-element'
  | 'unknown-patchset'
  | 'unknown-thread'
  | 'thread-closed'
  | 'anchor-mismatch'
  | 'ask-log'
  | 'harness-config'
  | 'no-harness'
  | 'harness-failed'
  | 'cancelled'
  | 'no-answer';

/** rennet/asks/explain's params, as protocol/rpc.ts declares them (the CLI's explain is checked the same way). */
export const ExplainInput = AsksExplainParams;

export interface ExplainDeps {
  store: Store;
  asks: AskLog;
  /** The harness `lens` drafts with under `config` (lensHarnessFromConfig over the host's ports). May throw HarnessConfigRefusal. */
  harnessFor(config: HarnessConfig, lens: Lens, signal: AbortSignal): Promise<LensHarness>;
  now(): string;
  log?(level: 'info' | 'warn', message: string): void;
  /** Default EXPLAIN_TURN_TIMEOUT_MS. */
  timeoutMs?: number;
}

function refused(code: ErrorCode, reason: ExplainRefusalReason, message: string, threadId?: string): Result<never> {
  return err(rennetError(code, message, threadId ? { reason, threadId } : { reason }));
}

/** An ask-log refusal, carrying the thread when there is one. */
function withThread(error: RennetError, threadId: string | undefined): Result<never> {
  const detail = { reason: 'ask-log', ...(error.detail ?? {}), ...(threadId ? { threadId } : {}) };
  return err({ ...error, detail });
}

export async function explainSpan(deps: ExplainDeps, raw: unknown, signal?: AbortSignal): Promise<Result<AsksExplainResult>> {
  const parsed = ExplainInput.safeParse(raw);
  if (!parsed.success) {
    // Paths and zod's words only: zod does not quote values, and a key rides in `harness`.
    const issues = parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    return refused('invalid-request', 'invalid', `invalid explain request: ${issues.join('; ')}`);
  }
  const { sessionId, anchor, threadId: askedThread, harness: config } = parsed.data;
  const { store, asks } = deps;

  // 1. The anchor names a real element of this session.
  const session = store.getSession(sessionId);
  if (!session) return refused('not-found', 'unknown-session', `no session ${sessionId} in the store`);
  const generation = store.getGeneration(anchor.generationId);
  if (!generation) return refused('not-found', 'unknown-generation', `no generation ${anchor.generationId} in the store`);
  if (generation.sessionId !== sessionId) {
    return refused('invalid-request', 'wrong-session', `generation ${anchor.generationId} is not a generation of session ${sessionId}`);
  }
  let board;
  try {
    board = loadBoard(store, { sessionId, generationId: generation.id, patchsetId: generation.patchsetId, lens: anchor.lens });
  } catch (error) {
    return refused('store-failed', 'unreadable-board', `the ${LENS_TITLES[anchor.lens]} board of generation ${generation.id} does not read back: ${(error as Error).message}`);
  }
  if (!board) return refused('not-found', 'unknown-board', `generation ${generation.id} has no ${LENS_TITLES[anchor.lens]} board`);
  if (!board.elements.has(anchor.elementId)) {
    return refused('not-found', 'unknown-element', `the ${LENS_TITLES[anchor.lens]} board of generation ${generation.id} has no element ${anchor.elementId}`);
  }
  const patchset = store.getPatchset(generation.patchsetId);
  if (!patchset) return refused('not-found', 'unknown-patchset', `the store does not hold patchset ${generation.patchsetId} of generation ${generation.id}`);

  // 2. The thread, and the reviewer's question in it.
  let threadId: string;
  if (askedThread !== undefined) {
    const projection = asks.projection(sessionId);
    if (!projection.ok) return projection;
    const thread = Object.hasOwn(projection.value.quoteThreads, askedThread) ? projection.value.quoteThreads[askedThread] : undefined;
    if (!thread) return refused('not-found', 'unknown-thread', `no quote thread ${askedThread} in session ${sessionId}`);
    if (!thread.open) return refused('invalid-request', 'thread-closed', `quote thread ${askedThread} is closed; reopen it first`);
    if (canonicalJson(thread.anchor) !== canonicalJson(anchor)) {
      return refused('invalid-request', 'anchor-mismatch', `quote thread ${askedThread} is on another passage than the one to explain`);
    }
    threadId = askedThread;
  } else {
    const opened = asks.command(sessionId, { type: 'quoteOpen', anchor }, deps.now());
    if (!opened.ok) return withThread(opened.error, undefined);
    if (opened.value.event.type !== 'quoteOpen') return refused('store-failed', 'ask-log', 'the ask log answered quoteOpen with another event');
    threadId = opened.value.event.threadId;
  }
  const asked = asks.command(sessionId, { type: 'quoteReply', threadId, author: 'reviewer', text: EXPLAIN_QUESTION }, deps.now());
  if (!asked.ok) return withThread(asked.error, threadId);

  // Both the harness lookup (vscode-lm lists models) and the turn stop on the caller's signal or the deadline.
  const abort = new AbortController();
  let timedOut = false;
  const onAbort = () => abort.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  if (signal?.aborted) abort.abort();
  const timer = setTimeout(() => {
    timedOut = true;
    abort.abort();
  }, deps.timeoutMs ?? EXPLAIN_TURN_TIMEOUT_MS);
  try {
    // 3. The lens's harness.
    let chosen: LensHarness;
    try {
      chosen = await deps.harnessFor(config, anchor.lens, abort.signal);
    } catch (error) {
      if (error instanceof HarnessConfigRefusal) return refused(error.code, 'harness-config', error.message, threadId);
      return refused('invalid-request', 'harness-config', `the harness configuration could not be used: ${(error as Error).message}`, threadId);
    }
    const harness = chosen.harness;
    if (!harness) {
      const why = chosen.hint ? ` (${chosen.hint})` : '';
      return refused(
        'invalid-request',
        'no-harness',
        `No harness is configured to explain ${LENS_TITLES[anchor.lens]} passages${why}. Choose one in rennet.harness.default, or for this lens in rennet.harness.lenses; “Rennet: Show Harnesses” lists what this machine has. The question stays in its thread.`,
        threadId,
      );
    }

    // 4. One read-only turn.
    const surface = explainSurface({
      anchor: anchor as QuoteAnchor,
      elements: board.elements,
      boardTitle: board.document.title,
      patchset,
      paths: buildCitationIndex(patchset),
    });
    const seat: SeatSpec = {
      seatId: `${anchor.lens}:explain`,
      lens: anchor.lens,
      // The ports name three roles; an explainer is closest to a review seat: it writes no board
      // and hands in text through one tool.
      role: 'reviewer',
    };
    // The explainer reads the change as every seat does (host/read), besides its own four tools.
    const served = withReadTools(surface, readSurface(gitChangeSource({ repoDir: session.repoRoot, patchset, contextDir: join(CONTEXT_ROOT, sessionId) })));
    const where = `${anchor.lens} element ${anchor.elementId} of generation ${generation.id} (session ${sessionId}, thread ${threadId})`;
    // A CLI explainer's own file tools see the reviewed head, as a lens seat's do; the others read only through the tools.
    const cwd = await seatWorkingDir(harness.kind, store.dir, session.repoRoot, patchset);
    if (cwd.note) deps.log?.('warn', `explain ${where}: the explainer runs in ${session.repoRoot}: ${cwd.note}`);
    const started = performance.now();
    const turn = await runOneTurn(harness, { seat, prompt: explainPrompt(anchor.lens), cwd: cwd.dir, surface: served, signal: abort.signal });
    const spend = oneTurnSpend(seat, harness, turn, performance.now() - started, served.stats());
    deps.log?.('info', `explain ${where}: spend ${JSON.stringify(spend)} (${readsText(spend)} of the change)`);

    const provenance = { harness: harness.kind, model: harness.model };
    const answer = surface.answer;
    // An answer handed in stands even when the harness failed after it (it is complete as given).
    if (answer === null) {
      const stats = served.stats();
      const by = `${harness.kind}${harness.model ? ` (${harness.model})` : ''}`;
      deps.log?.('warn', `explain ${where}: no answer from ${by}: ${turn.outcome}${turn.message ? `: ${turn.message}` : ''}`);
      if (turn.outcome === 'aborted' || abort.signal.aborted) {
        const why = timedOut ? `it did not answer within ${Math.round((deps.timeoutMs ?? EXPLAIN_TURN_TIMEOUT_MS) / 1000)} s` : 'the request was cancelled';
        return refused('invalid-request', 'cancelled', `The explanation stopped before an answer: ${why}. The question stays in its thread.`, threadId);
      }
      if (turn.outcome === 'failed') {
        return refused('invalid-request', 'harness-failed', `${by} could not explain the passage: ${turn.message ?? 'it failed without saying why'}`, threadId);
      }
      return refused(
        'invalid-request',
        'no-answer',
        `${by} ended its turn without handing in an explanation (${stats.calls} tool calls, ${stats.refusals} refused; ${readsText(spend)} of the change). The question stays in its thread; ask again.`,
        threadId,
      );
    }

    // 5. The answer, with where it came from.
    const replied = asks.command(sessionId, { type: 'quoteReply', threadId, author: 'agent', text: `${answer}\n\n${provenanceLine(provenance.harness, provenance.model)}` }, deps.now());
    if (!replied.ok) return withThread(replied.error, threadId);
    if (replied.value.event.type !== 'quoteReply') return refused('store-failed', 'ask-log', 'the ask log answered quoteReply with another event', threadId);
    deps.log?.('info', `explain ${where}: answered by ${provenance.harness}${provenance.model ? ` (${provenance.model})` : ''}`);
    return ok({ threadId, answer: replied.value.event.message, provenance });
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}
