import { RESULT_MAX_BYTES, WRITE_BOARD_MAX_BYTES } from '../../protocol/board';
import { errorMessage } from '../../protocol/result';
import type { TurnRequest, TurnResult, TurnUsage } from '../pipeline/ports';

/**
 * The in-host tool loop shared by the harnesses that talk to a model directly (the Anthropic and
 * OpenAI-compatible HTTP adapters; vscode.lm may use it too). A vendor adapter supplies a
 * `ModelThread` — one conversation, able to send itself and to record a round — and the loop does
 * the rest: round trips bounded by `MAX_ROUND_TRIPS`, tool calls through the turn's in-process
 * ToolPort, every tool result bounded to RESULT_MAX_BYTES with an honest marker, abort via the
 * turn's signal, a per-request timeout, usage summed over round trips, events.
 *
 * Malformed model output is a typed state, never a crash or a hang:
 * - arguments that are not a JSON object → the tool is not called; the model gets an error
 *   result saying so, and the loop goes on;
 * - a tool the seat does not have → an error result naming the seat's tools;
 * - oversized text → cut to MAX_TEXT_BYTES (events and the thread both);
 * - HTTP 4xx/5xx → `failed` with the status and the server's message (bounded, keys redacted);
 * - a stream that stops before its message completed → `failed`, "the model stream ended before
 *   the message completed";
 * - no answer within the request timeout → `failed`.
 * The turn ends (`ended`) when the model answers without calling a tool.
 */

/** Model round trips one turn may make before the host stops it. */
export const MAX_ROUND_TRIPS = 64;
/** Per-request timeout (request sent → message complete), unless the adapter is told otherwise. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 300_000;
/** Assistant text kept per reply (in events and in the thread sent back). */
export const MAX_TEXT_BYTES = 16 * 1024;
/** Tool-call arguments longer than this are refused unparsed (write_board's payload ceiling plus room). */
export const MAX_ARGUMENT_BYTES = WRITE_BOARD_MAX_BYTES + 64 * 1024;
/** Tool calls run from one reply; the rest are answered "not run". */
export const MAX_CALLS_PER_REPLY = 64;
/** A server's error message, as quoted in a failure. */
export const MAX_ERROR_CHARS = 500;
/** Bytes read from a non-streamed response, and from one SSE event. */
export const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

export const STREAM_ENDED = 'the model stream ended before the message completed';

// ─── The adapter's side ──────────────────────────────────────────────────────────────────────

export interface ModelToolCall {
  /** The vendor's call id (tool_use id, tool_call id). */
  id: string;
  name: string;
  /** As received: a JSON text (may be malformed) or an already-parsed object. */
  arguments: string | Record<string, unknown>;
  /** Set (to the bytes received) when the arguments exceeded MAX_ARGUMENT_BYTES and were not kept. */
  oversizedArguments?: number;
}

export interface ModelUsage {
  input: number | null;
  output: number | null;
}

export interface ModelReply {
  text: string;
  calls: ModelToolCall[];
  /** null when the server reported none for this round trip. */
  usage: ModelUsage | null;
}

/** The host's answer to one call. `input` is the parsed arguments (null when they did not parse). */
export interface CallAnswer {
  call: ModelToolCall;
  input: Record<string, unknown> | null;
  text: string;
  isError: boolean;
}

/** One seat's conversation with the model, as the adapter keeps it. */
export interface ModelThread {
  /** One round trip over the thread so far. Throws ModelError (or the abort) on failure. */
  send(signal: AbortSignal): Promise<ModelReply>;
  /** Records a round: the model's reply (text already bounded) and the answers to its calls. */
  commit(reply: ModelReply, answers: readonly CallAnswer[]): void;
}

export type ModelErrorKind = 'http' | 'disconnect' | 'network' | 'protocol';

export class ModelError extends Error {
  constructor(
    readonly kind: ModelErrorKind,
    message: string,
    readonly status: number | null = null,
    /** Another attempt cannot succeed as configured (credentials rejected, consent denied, no model). */
    readonly final = false,
  ) {
    super(message);
    this.name = 'ModelError';
  }
}

export interface ToolLoopOptions {
  maxRoundTrips?: number;
  requestTimeoutMs?: number;
}

// ─── The loop ────────────────────────────────────────────────────────────────────────────────

export async function runToolLoop(request: TurnRequest, thread: ModelThread, options: ToolLoopOptions = {}): Promise<TurnResult> {
  const maxTrips = options.maxRoundTrips ?? MAX_ROUND_TRIPS;
  const timeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const usage = new UsageSum();
  const names = request.tools.tools.map((t) => t.name);
  const known = new Set(names);
  const emit = (event: Parameters<TurnRequest['onEvent']>[0]) => {
    try {
      request.onEvent(event);
    } catch {
      // an observer's failure is not the turn's
    }
  };
  const aborted = (): TurnResult => ({ outcome: 'aborted', message: 'the turn was cancelled', usage: usage.result() });
  const failed = (message: string, final = false): TurnResult => ({ outcome: 'failed', message, usage: usage.result(), ...(final ? { final } : {}) });

  for (let trip = 0; trip < maxTrips; trip++) {
    if (request.signal.aborted) return aborted();
    const sent = await sendBounded(thread, request.signal, timeoutMs);
    if (sent.kind === 'aborted') return aborted();
    if (sent.kind === 'timeout') return failed(`the model did not answer within ${timeoutMs < 10_000 ? `${timeoutMs} ms` : `${Math.round(timeoutMs / 1000)} s`}`);
    if (sent.kind === 'error') return failed(sent.message, sent.final);
    const raw = sent.reply;
    usage.add(raw.usage);
    const reply: ModelReply = { ...raw, text: boundText(raw.text, MAX_TEXT_BYTES) };
    if (reply.text.trim().length > 0) emit({ type: 'text', text: reply.text });
    if (reply.calls.length === 0) {
      thread.commit(reply, []);
      return { outcome: 'ended', message: null, usage: usage.result() };
    }

    const answers: CallAnswer[] = [];
    let broken: string | null = null;
    for (const [index, call] of reply.calls.entries()) {
      if (broken !== null || request.signal.aborted || index >= MAX_CALLS_PER_REPLY) {
        const why =
          broken !== null ? 'an earlier call of this reply failed in the host' : request.signal.aborted ? 'the turn was cancelled' : `one reply may make at most ${MAX_CALLS_PER_REPLY} calls`;
        answers.push({ call, input: null, text: `Not run: ${why}.`, isError: true });
        continue;
      }
      emit({ type: 'tool-call', name: call.name });
      const answer = await answerCall(call, request, known, names).catch((error: unknown) => {
        broken = `a tool call failed in the host: ${(error as Error).message}`;
        return { call, input: null, text: `Not run: the host could not run ${call.name}.`, isError: true } satisfies CallAnswer;
      });
      emit({ type: 'tool-result', name: call.name, isError: answer.isError });
      answers.push(answer);
    }
    thread.commit(reply, answers);
    if (broken !== null) return failed(broken);
    if (request.signal.aborted) return aborted();
  }
  return failed(`stopped after ${maxTrips} model round trips: the model kept calling tools without ending its turn`);
}

async function answerCall(call: ModelToolCall, request: TurnRequest, known: ReadonlySet<string>, names: readonly string[]): Promise<CallAnswer> {
  if (!known.has(call.name)) {
    const text = `There is no tool named "${boundText(call.name, 100)}"; nothing was called. The tools are: ${names.join(', ')}.`;
    return { call, input: null, text: boundResult(text), isError: true };
  }
  const parsed: ParsedArguments =
    call.oversizedArguments !== undefined ? { ok: false, reason: `${call.oversizedArguments} bytes, over the ${MAX_ARGUMENT_BYTES}-byte ceiling` } : parseArguments(call.arguments);
  if (!parsed.ok) {
    const text = `The arguments of this ${call.name} call were not valid JSON (${parsed.reason}); the tool was not called. Call it again with the arguments as one JSON object.`;
    return { call, input: null, text: boundResult(text), isError: true };
  }
  const result = await request.tools.call(call.name, parsed.value);
  return { call, input: parsed.value, text: boundResult(result.text), isError: result.isError };
}

type Sent = { kind: 'reply'; reply: ModelReply } | { kind: 'aborted' } | { kind: 'timeout' } | { kind: 'error'; message: string; final: boolean };

/** One round trip under the turn's signal and the request timeout. */
async function sendBounded(thread: ModelThread, turnSignal: AbortSignal, timeoutMs: number): Promise<Sent> {
  const controller = new AbortController();
  let timedOut = false;
  const onAbort = () => controller.abort(turnSignal.reason);
  turnSignal.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error('timeout'));
  }, timeoutMs);
  try {
    const reply = await thread.send(controller.signal);
    if (turnSignal.aborted) return { kind: 'aborted' };
    return { kind: 'reply', reply };
  } catch (error) {
    if (turnSignal.aborted) return { kind: 'aborted' };
    if (timedOut) return { kind: 'timeout' };
    if (error instanceof ModelError) return { kind: 'error', message: error.message, final: error.final };
    return { kind: 'error', message: `the model request failed: ${boundText(errorMessage(error), MAX_ERROR_CHARS)}`, final: false };
  } finally {
    clearTimeout(timer);
    turnSignal.removeEventListener('abort', onAbort);
  }
}

// ─── Bounds and parsing ──────────────────────────────────────────────────────────────────────

export type ParsedArguments = { ok: true; value: Record<string, unknown> } | { ok: false; reason: string };

/** A call's arguments as one JSON object. An empty text is `{}` (a call with no arguments). */
export function parseArguments(raw: string | Record<string, unknown>): ParsedArguments {
  if (typeof raw !== 'string') return { ok: true, value: raw };
  if (raw.trim().length === 0) return { ok: true, value: {} };
  const bytes = Buffer.byteLength(raw, 'utf8');
  if (bytes > MAX_ARGUMENT_BYTES) return { ok: false, reason: `${bytes} bytes, over the ${MAX_ARGUMENT_BYTES}-byte ceiling` };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    return { ok: false, reason: boundText((error as Error).message, 200) };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return { ok: false, reason: `a JSON ${value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value}, not an object` };
  return { ok: true, value: value as Record<string, unknown> };
}

/** Cuts `text` to at most `maxBytes` UTF-8 bytes (on a character boundary). */
function cutBytes(text: string, maxBytes: number): string {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= maxBytes) return text;
  let end = Math.max(0, maxBytes);
  while (end > 0 && ((buf[end] ?? 0) & 0xc0) === 0x80) end--;
  return buf.subarray(0, end).toString('utf8');
}

/** A tool result at most RESULT_MAX_BYTES, saying how much it cut. */
export function boundResult(text: string, maxBytes = RESULT_MAX_BYTES): string {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes <= maxBytes) return text;
  const marker = `\n…(cut by the host: the result was ${bytes} bytes, over the ${maxBytes}-byte ceiling)`;
  return cutBytes(text, maxBytes - Buffer.byteLength(marker, 'utf8')) + marker;
}

/** Text at most `maxBytes` UTF-8 bytes, saying how much it cut. */
export function boundText(text: string, maxBytes: number): string {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes <= maxBytes) return text;
  const marker = ` …(cut: ${bytes} bytes)`;
  return cutBytes(text, Math.max(0, maxBytes - Buffer.byteLength(marker, 'utf8'))) + marker;
}

class UsageSum {
  private input: number | null = null;
  private output: number | null = null;

  add(usage: ModelUsage | null): void {
    if (usage === null) return;
    if (usage.input !== null) this.input = (this.input ?? 0) + usage.input;
    if (usage.output !== null) this.output = (this.output ?? 0) + usage.output;
  }

  result(): TurnUsage | null {
    if (this.input === null && this.output === null) return null;
    return { inputTokens: this.input, outputTokens: this.output, priceUsd: null };
  }
}

/** A non-negative integer token count, else null. */
export function tokens(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : null;
}

// ─── Per-seat conversations ──────────────────────────────────────────────────────────────────

/**
 * One conversation per seat id, shared by the adapters that run the tool loop in the host: a
 * follow-up turn continues the seat's thread, a first turn starts a fresh one.
 */
export class SeatConversations<M> {
  private readonly threads = new Map<string, M[]>();

  constructor(private readonly start: () => M[] = () => []) {}

  /** The thread this turn writes to. */
  open(request: Pick<TurnRequest, 'seat' | 'followUp'>): M[] {
    const existing = request.followUp ? this.threads.get(request.seat.seatId) : undefined;
    const messages = existing ?? this.start();
    this.threads.set(request.seat.seatId, messages);
    return messages;
  }

  /** The seat's thread as it stands, or an empty one. */
  peek(seatId: string): readonly M[] {
    return this.threads.get(seatId) ?? [];
  }
}

// ─── HTTP plumbing for the adapters ──────────────────────────────────────────────────────────

/**
 * An adapter's configured base URL, parsed; a value that is not a URL is refused with the
 * adapter's name (`what`) and the value as written, cut and with the key redacted.
 */
export function parseBaseUrl(baseUrl: string, apiKey: string | undefined, what: string): URL {
  try {
    return new URL(baseUrl);
  } catch {
    throw new Error(`the ${what} base URL is not a URL: ${boundText(redact(baseUrl, [apiKey ?? '']), 200)}`);
  }
}

/** True for a base URL on this machine (a key is optional there). */
export function isLoopback(url: URL): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Replaces every secret in `text` (keys never reach a message). */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length > 0) out = out.split(s).join('[redacted]');
  return out;
}

/**
 * POSTs a JSON body. A connection failure is a `network` ModelError; a 4xx/5xx is an `http`
 * ModelError quoting the status and the server's message (bounded, secrets redacted). Redirects
 * are refused (a key header must not follow one). The abort propagates as thrown by fetch.
 */
export async function postJson(url: string, headers: Record<string, string>, body: unknown, signal: AbortSignal, secrets: readonly string[], label: string): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body), signal, redirect: 'error' });
  } catch (error) {
    if (signal.aborted) throw error;
    const cause = (error as { cause?: { message?: string; code?: string } }).cause;
    const detail = cause?.code ?? cause?.message ?? (error as Error).message;
    throw new ModelError('network', redact(`could not reach ${label} at ${new URL(url).origin}: ${boundText(String(detail), MAX_ERROR_CHARS)}`, secrets));
  }
  if (!response.ok) {
    let text = '';
    try {
      text = await readBounded(response, 64 * 1024, signal);
    } catch (error) {
      if (signal.aborted) throw error;
    }
    const message = serverMessage(text);
    const status = `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
    // 401/403: the credentials (or their absence) are refused; retrying the same request cannot help.
    const refused = response.status === 401 || response.status === 403;
    throw new ModelError('http', redact(`${label} answered ${status}${message ? `: ${message}` : ''}`, secrets), response.status, refused);
  }
  return response;
}

/** The message of a vendor error body ({error:{message}}, {message}, {error:"…"}), else the text; bounded. */
export function serverMessage(text: string): string {
  let message = text.trim();
  try {
    const value = JSON.parse(text) as Record<string, unknown>;
    const error = value['error'];
    if (typeof error === 'string') message = error;
    else if (error !== null && typeof error === 'object' && typeof (error as Record<string, unknown>)['message'] === 'string') message = (error as Record<string, unknown>)['message'] as string;
    else if (typeof value['message'] === 'string') message = value['message'];
  } catch {
    // not JSON: the text itself
  }
  return boundText(message.replace(/\s+/g, ' '), MAX_ERROR_CHARS);
}

/** A response body as text, at most `maxBytes` (more is a protocol error). A cut connection is a disconnect. */
export async function readBounded(response: Response, maxBytes: number, signal: AbortSignal): Promise<string> {
  if (!response.body) return '';
  const reader: ReadableStreamDefaultReader<Uint8Array> = response.body.getReader();
  const decoder = new TextDecoder();
  let out = '';
  let bytes = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.byteLength;
      if (bytes > maxBytes) throw new ModelError('protocol', `the model's answer exceeded ${maxBytes} bytes`);
      out += decoder.decode(value, { stream: true });
    }
  } catch (error) {
    if (signal.aborted || error instanceof ModelError) throw error;
    throw new ModelError('disconnect', STREAM_ENDED);
  } finally {
    reader.releaseLock();
  }
  return out + decoder.decode();
}

/** A parsed JSON response body (bounded); a cut or unparsable body is a typed error. */
export async function readJson(response: Response, signal: AbortSignal): Promise<Record<string, unknown>> {
  const text = await readBounded(response, MAX_RESPONSE_BYTES, signal);
  try {
    const value = JSON.parse(text) as unknown;
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw new ModelError('protocol', `the model server's answer was not a JSON object: ${boundText(text.replace(/\s+/g, ' '), 200)}`);
}

export interface SseEvent {
  event: string | null;
  data: string;
}

/**
 * Server-sent events of a response body. A connection cut mid-stream is a `disconnect`
 * ModelError; an event over MAX_RESPONSE_BYTES is a protocol error. Whether the stream ended
 * early (before its terminal event) is the adapter's call.
 */
export async function* readSse(response: Response, signal: AbortSignal): AsyncGenerator<SseEvent> {
  if (!response.body) throw new ModelError('protocol', 'the model server sent no body');
  const reader: ReadableStreamDefaultReader<Uint8Array> = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const parse = (block: string): SseEvent | null => {
    let event: string | null = null;
    const data: string[] = [];
    for (const line of block.split(/\r?\n|\r/)) {
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
    return data.length === 0 ? null : { event, data: data.join('\n') };
  };
  try {
    for (;;) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (error) {
        if (signal.aborted) throw error;
        throw new ModelError('disconnect', STREAM_ENDED);
      }
      if (chunk.done) break;
      buffer += decoder.decode(chunk.value, { stream: true });
      for (;;) {
        const match = /\r?\n\r?\n|\r\r/.exec(buffer);
        if (!match) break;
        const block = buffer.slice(0, match.index);
        buffer = buffer.slice(match.index + match[0].length);
        const event = parse(block);
        if (event) yield event;
      }
      if (buffer.length > MAX_RESPONSE_BYTES) throw new ModelError('protocol', `one server-sent event exceeded ${MAX_RESPONSE_BYTES} bytes`);
    }
    buffer += decoder.decode();
    const last = buffer.trim().length > 0 ? parse(buffer) : null;
    if (last) yield last;
  } finally {
    reader.cancel().catch(() => undefined);
  }
}

/** Parses one SSE data payload as a JSON object (a protocol error otherwise). */
export function eventJson(event: SseEvent): Record<string, unknown> {
  try {
    const value = JSON.parse(event.data) as unknown;
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // fall through
  }
  throw new ModelError('protocol', `the model stream sent an event that is not a JSON object: ${boundText(event.data, 200)}`);
}

/** A grow-only text buffer with a byte ceiling (the rest is counted, not kept). */
export class BoundedText {
  private parts: string[] = [];
  private kept = 0;
  private dropped = 0;

  constructor(private readonly maxBytes: number) {}

  append(piece: string): void {
    const bytes = Buffer.byteLength(piece, 'utf8');
    if (this.kept + bytes <= this.maxBytes) {
      this.parts.push(piece);
      this.kept += bytes;
    } else {
      const room = this.maxBytes - this.kept;
      if (room > 0) {
        const cut = cutBytes(piece, room);
        this.parts.push(cut);
        this.kept += Buffer.byteLength(cut, 'utf8');
        this.dropped += bytes - Buffer.byteLength(cut, 'utf8');
      } else this.dropped += bytes;
    }
  }

  /** True when some of the text was dropped. */
  get overflowed(): boolean {
    return this.dropped > 0;
  }

  /** Bytes appended in all. */
  get bytes(): number {
    return this.kept + this.dropped;
  }

  /** The kept text; when some was dropped, cut to leave room for a marker saying so (≤ maxBytes in all). */
  text(): string {
    const kept = this.parts.join('');
    if (this.dropped === 0) return kept;
    const marker = ` …(cut: ${this.kept + this.dropped} bytes)`;
    return cutBytes(kept, Math.max(0, this.maxBytes - Buffer.byteLength(marker, 'utf8'))) + marker;
  }
}
