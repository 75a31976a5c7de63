import { LENS_TITLES, type Lens } from '../../protocol/board';
import { errorMessage } from '../../protocol/result';
import type { LmChatParams, LmChatResult, LmFailureReason, LmMessage, LmModelInfo, LmTool, LmToolCall } from '../../protocol/rpc';
import type { Harness, SeatSpec, TurnRequest, TurnResult } from '../pipeline/ports';
import type { HarnessAssignment } from '../pipeline/types';
import { ModelError, parseArguments, runToolLoop, SeatConversations, type ModelReply, type ModelThread, type ModelToolCall } from './toolLoop';

/**
 * The `vscode-lm` harness: a seat drafted by a chat model the user has in VS Code (Copilot, or any
 * extension's `languageModelChatProviders`). The host never imports `vscode`, so the tool loop
 * runs HERE and each round trip asks the extension for one model response (`rennet/lm/chat`, see
 * protocol/rpc.ts); the extension turns the JSON transcript into LanguageModelChatMessages and
 * calls `model.sendRequest`. Tool calls are executed in-process against `request.tools` (the same
 * board functions the MCP server serves), and their results go back in the next round.
 *
 * The loop is toolLoop.ts's `runToolLoop` (shared with the HTTP adapters): bounded round trips,
 * calls per reply and bytes per tool result (RESULT_MAX_BYTES), a timeout per round trip, unknown
 * tools and non-object arguments answered as error results, abort, usage. This file supplies the
 * `ModelThread`: the JSON transcript and one `rennet/lm/chat` per `send`. A typed failure from the
 * extension (no-model, consent-denied, blocked, cancelled, error) fails the turn with a sentence
 * naming it. Abort: the turn's signal, and the harness's own (a cancelled draft), cancel the round
 * trip in flight through its JSON-RPC token. Usage: vscode.lm reports none, so turns report null.
 *
 * Origin: `other` by default, whatever the vendor (Copilot serves several model families; which
 * of them "is" Claude or Codex is not Rennet's to guess); a caller may pass `origin` explicitly.
 */

/** Asks the extension for one model response. `signal` cancels it (the JSON-RPC token). */
export type LmAsk = (params: LmChatParams, signal: AbortSignal) => Promise<LmChatResult>;

export interface VscodeLmHarnessOptions {
  ask: LmAsk;
  /** `lm.selectChatModels` selector. */
  vendor?: string;
  family?: string;
  /** A model the caller selected already (`rennet/lm/models`): every round trip pins its id. */
  model?: Pick<LmModelInfo, 'vendor' | 'id'>;
  origin?: 'claude' | 'codex' | 'other';
  /** Aborts every turn of this harness (a cancelled draft). */
  signal?: AbortSignal;
  /** Tool-loop bounds (toolLoop.ts defaults: MAX_ROUND_TRIPS, DEFAULT_REQUEST_TIMEOUT_MS). */
  maxRoundTrips?: number;
  requestTimeoutMs?: number;
}

/** Thrown by a thread's send for a typed `rennet/lm/chat` failure; the loop fails the turn with its sentence. */
export class LmChatFailure extends ModelError {
  constructor(
    readonly reason: LmFailureReason,
    message: string,
  ) {
    // Consent denied, blocked, or no such model: VS Code answers the same until the reviewer acts.
    super('protocol', message, null, reason === 'consent-denied' || reason === 'blocked' || reason === 'no-model');
  }
}

export class VscodeLmHarness implements Harness {
  readonly kind = 'vscode-lm';
  readonly origin: 'claude' | 'codex' | 'other';
  private readonly options: VscodeLmHarnessOptions;
  /** The transcript of each seat's thread: a follow-up turn continues it. */
  private readonly conversations = new SeatConversations<LmMessage>();
  private answeredBy: string | null;

  constructor(options: VscodeLmHarnessOptions) {
    this.options = options;
    this.origin = options.origin ?? 'other';
    this.answeredBy = options.model ? modelName(options.model.vendor, options.model.id) : null;
  }

  /** `<vendor>/<id>` of the model: the pinned one, else the last that answered; null before any answer. */
  get model(): string | null {
    return this.answeredBy;
  }

  /** A copy of a seat's transcript (tests). */
  transcript(seatId: string): LmMessage[] {
    return structuredClone([...this.conversations.peek(seatId)]);
  }

  async runTurn(request: TurnRequest): Promise<TurnResult> {
    const { seat } = request;
    const messages = this.conversations.open(request);
    messages.push({ role: 'user', text: request.prompt });
    const tools: LmTool[] = request.tools.tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema }));
    const signal = this.options.signal ? AbortSignal.any([request.signal, this.options.signal]) : request.signal;
    const thread: ModelThread = {
      send: (roundSignal) => this.send(seat, messages, tools, roundSignal),
      commit: (reply, answers) => {
        messages.push({ role: 'assistant', text: reply.text, toolCalls: reply.calls.map(toLmCall) });
        if (answers.length > 0) messages.push({ role: 'tool-results', results: answers.map((a) => ({ callId: a.call.id, text: a.text, isError: a.isError })) });
      },
    };
    return runToolLoop({ ...request, signal }, thread, {
      ...(this.options.maxRoundTrips !== undefined ? { maxRoundTrips: this.options.maxRoundTrips } : {}),
      ...(this.options.requestTimeoutMs !== undefined ? { requestTimeoutMs: this.options.requestTimeoutMs } : {}),
    });
  }

  /** One round trip: ask the extension, check its answer, and hand the loop a ModelReply. */
  private async send(seat: SeatSpec, messages: readonly LmMessage[], tools: LmTool[], signal: AbortSignal): Promise<ModelReply> {
    const params = this.chatParams(seat, messages, tools);
    let raw: LmChatResult;
    let onAbort: () => void = () => undefined;
    // The JSON-RPC cancellation asks the extension to stop; the turn does not wait for it to agree.
    const stopped = new Promise<never>((_, reject) => {
      onAbort = () => reject(new Error('the round trip was cancelled'));
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      raw = await Promise.race([this.options.ask(params, signal), stopped]);
    } catch (error) {
      throw new ModelError('network', `could not reach VS Code's language models through the extension: ${clip(errorMessage(error), 500)}`);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
    const answer = checkAnswer(raw);
    if (answer === null) throw new ModelError('protocol', "VS Code's language model answer was malformed");
    if (!answer.ok) throw new LmChatFailure(answer.reason, failureSentence(answer.reason, answer.message, params));
    if (answer.model) this.answeredBy = answer.model;
    return {
      text: answer.text,
      calls: normalizeCalls(answer.toolCalls, messages.length),
      usage: answer.usage ? { input: answer.usage.inputTokens, output: answer.usage.outputTokens } : null,
    };
  }

  private chatParams(seat: SeatSpec, messages: readonly LmMessage[], tools: LmTool[]): LmChatParams {
    const { vendor, family, model } = this.options;
    return {
      seatId: seat.seatId,
      ...(model ? { vendor: model.vendor, model: model.id } : {}),
      ...(!model && vendor !== undefined ? { vendor } : {}),
      ...(!model && family !== undefined ? { family } : {}),
      // A snapshot: the thread grows after the answer, and a test's fake may keep what it was sent.
      messages: structuredClone(messages) as LmMessage[],
      tools,
      justification: `Rennet drafts its ${LENS_TITLES[seat.lens]} review board with this model (seat ${seat.seatId}).`,
    };
  }
}

/**
 * A generation in which only `lens` is drafted, by `harness` (`rennet/review/draftLens`): Flagged
 * gets it as its one reviewer and its compiler. Every other lane that needs a model fails "no
 * model harness is configured", saying why.
 */
export function singleLensAssignment(lens: Lens, harness: Harness): HarnessAssignment {
  const only = (l: Exclude<Lens, 'flagged'>) => (l === lens ? harness : null);
  return {
    design: only('design'),
    sequence: only('sequence'),
    decisions: only('decisions'),
    noise: only('noise'),
    flagged: lens === 'flagged' ? { reviewers: [harness], compiler: harness } : { reviewers: [], compiler: null },
    missingHint: `this draft runs only the ${LENS_TITLES[lens]} lens with ${harness.kind}`,
  };
}

export function modelName(vendor: string, id: string): string {
  return `${vendor}/${id}`;
}

// ─── Helpers ─────────────────────────────────────────────────────────────────────────────────

function failureSentence(reason: LmFailureReason, message: string, params: LmChatParams): string {
  const selector = [params.vendor && `vendor "${params.vendor}"`, params.family && `family "${params.family}"`, params.model && `model "${params.model}"`].filter(Boolean).join(', ');
  const words = message.trim() ? `: ${clip(message.trim(), 500)}` : '';
  switch (reason) {
    case 'no-model':
      return `no VS Code language model is available${selector ? ` for ${selector}` : ''}${words}`;
    case 'consent-denied':
      return `VS Code did not allow Rennet to use the language model (consent denied)${words}; allow it when VS Code asks, or under "Manage Language Model Access"`;
    case 'blocked':
      return `the language model refused Rennet's request (blocked: quota or policy)${words}`;
    case 'cancelled':
      return `the language model request was cancelled in VS Code${words}`;
    case 'error':
      return `the language model failed${words}`;
  }
}

/** An answer from the wire, checked: null when it is not an LmChatResult. */
function checkAnswer(value: unknown): LmChatResult | null {
  if (!isPlainObject(value)) return null;
  if (value.ok === false) {
    const reasons: readonly string[] = ['no-model', 'consent-denied', 'blocked', 'cancelled', 'error'];
    const reason = typeof value.reason === 'string' && reasons.includes(value.reason) ? (value.reason as LmFailureReason) : 'error';
    return { ok: false, reason, message: typeof value.message === 'string' ? value.message : '' };
  }
  if (value.ok !== true || typeof value.text !== 'string' || !Array.isArray(value.toolCalls)) return null;
  const usage =
    isPlainObject(value.usage) && isCount(value.usage.inputTokens) && isCount(value.usage.outputTokens) ? { inputTokens: value.usage.inputTokens, outputTokens: value.usage.outputTokens } : null;
  return {
    ok: true,
    text: value.text,
    toolCalls: value.toolCalls as LmToolCall[],
    model: typeof value.model === 'string' ? value.model : '',
    usage,
  };
}

/**
 * The extension's tool calls as the loop takes them: a unique, non-empty id each; an input that is
 * not a JSON object goes as its JSON text, so the loop refuses it ("not an object") unrun.
 */
function normalizeCalls(raw: readonly unknown[], round: number): ModelToolCall[] {
  const seen = new Set<string>();
  return raw.map((item, index) => {
    const call = isPlainObject(item) ? item : {};
    let id = typeof call.callId === 'string' && call.callId.trim() !== '' ? call.callId : `rennet-${round}-${index}`;
    if (seen.has(id)) id = `${id}#${index}`;
    seen.add(id);
    const input = call.input;
    const args = isPlainObject(input) ? input : input === undefined ? '' : (JSON.stringify(input) ?? String(input));
    return { id, name: typeof call.name === 'string' ? call.name : String(call.name), arguments: args };
  });
}

function toLmCall(call: ModelToolCall): LmToolCall {
  let input: Record<string, unknown> = {};
  if (typeof call.arguments !== 'string') input = call.arguments;
  else {
    const parsed = parseArguments(call.arguments);
    if (parsed.ok) input = parsed.value;
  }
  return { callId: call.id, name: call.name, input };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
