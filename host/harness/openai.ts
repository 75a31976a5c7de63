import type { SeatTool } from '../pipeline/ports';
import { HttpHarness, SEAT_SYSTEM_PROMPT, type HttpEndpoint, type HttpHarnessOptions, type PostModel } from './httpHarness';
import {
  BoundedText,
  MAX_ARGUMENT_BYTES,
  MAX_TEXT_BYTES,
  ModelError,
  STREAM_ENDED,
  boundText,
  eventJson,
  parseBaseUrl,
  readJson,
  readSse,
  tokens,
  type CallAnswer,
  type ModelReply,
  type ModelThread,
  type ModelToolCall,
  type ModelUsage,
} from './toolLoop';

/**
 * The `openai-compatible` harness: Chat Completions with tools (`type: 'function'`,
 * `parameters` = the tool's JSON Schema), streamed with `stream_options.include_usage` by default,
 * driving the in-host tool loop (toolLoop.ts). Works with OpenAI and with servers that copy its
 * API (vLLM, llama.cpp, Ollama, LiteLLM, gateways). `tool_choice` is sent (`"auto"`) only when
 * `supportsToolChoice` says the server accepts it; some compatible servers refuse the field.
 *
 * One thread per seat id, as in anthropic.ts. Origin defaults to `other`: the origin names who
 * raised a finding, and only the Codex CLI harness maps to `codex`; pass `origin` to override.
 */

/**
 * `baseUrl` is the API root including `/v1`, e.g. `https://api.openai.com/v1` or
 * `http://127.0.0.1:8000/v1`; `apiKey` is sent as `Authorization: Bearer …` when given; `origin`
 * defaults to `other`.
 */
export interface OpenAiCompatibleHarnessOptions extends HttpHarnessOptions {
  /** Send `tool_choice: "auto"`. Default false (the field is omitted). */
  supportsToolChoice?: boolean;
  /** Stream the answer (SSE, with include_usage). Default true; false for servers that cannot stream tools. */
  stream?: boolean;
}

type ChatMessage = Record<string, unknown> & { role: 'system' | 'user' | 'assistant' | 'tool' };

export class OpenAiCompatibleHarness extends HttpHarness<ChatMessage, OpenAiCompatibleHarnessOptions> {
  readonly kind = 'openai-compatible';

  constructor(options: OpenAiCompatibleHarnessOptions) {
    super(options, chatEndpoint(options), 'other', () => [{ role: 'system', content: SEAT_SYSTEM_PROMPT }]);
  }

  protected addPrompt(messages: ChatMessage[], prompt: string): void {
    messages.push({ role: 'user', content: prompt });
  }

  protected thread(messages: ChatMessage[], tools: readonly SeatTool[]): ChatThread {
    return new ChatThread(messages, tools, this.options, this.post, this.label);
  }
}

function chatEndpoint(options: OpenAiCompatibleHarnessOptions): HttpEndpoint {
  const base = parseBaseUrl(options.baseUrl, options.apiKey, 'OpenAI-compatible');
  return { url: `${options.baseUrl.replace(/\/+$/, '')}/chat/completions`, label: `the model server (${base.origin})` };
}

class ChatThread implements ModelThread {
  constructor(
    private readonly messages: ChatMessage[],
    private readonly tools: readonly SeatTool[],
    private readonly options: OpenAiCompatibleHarnessOptions,
    private readonly post: PostModel,
    private readonly label: string,
  ) {}

  async send(signal: AbortSignal): Promise<ModelReply> {
    const stream = this.options.stream ?? true;
    const headers: Record<string, string> = { accept: stream ? 'text/event-stream' : 'application/json' };
    if (this.options.apiKey) headers['authorization'] = `Bearer ${this.options.apiKey}`;
    const body: Record<string, unknown> = {
      model: this.options.model,
      messages: this.messages,
      tools: this.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.inputSchema } })),
    };
    if (this.options.supportsToolChoice) body['tool_choice'] = 'auto';
    if (stream) {
      body['stream'] = true;
      body['stream_options'] = { include_usage: true };
    }
    const response = await this.post(headers, body, signal);
    return stream ? readChatStream(response, signal, this.label) : chatReply(await readJson(response, signal), this.label);
  }

  commit(reply: ModelReply, answers: readonly CallAnswer[]): void {
    if (reply.text.length === 0 && reply.calls.length === 0) return;
    const message: ChatMessage = { role: 'assistant', content: reply.text.length > 0 ? reply.text : null };
    if (reply.calls.length > 0) {
      message['tool_calls'] = reply.calls.map((call) => {
        const answer = answers.find((a) => a.call === call);
        // Arguments that did not parse go back as `{}`: some servers re-parse them in chat templates.
        return { id: call.id, type: 'function', function: { name: call.name, arguments: JSON.stringify(answer?.input ?? {}) } };
      });
    }
    this.messages.push(message);
    for (const a of answers) this.messages.push({ role: 'tool', tool_call_id: a.call.id, content: a.text });
  }
}

function chatUsage(value: unknown): ModelUsage | null {
  if (value === null || typeof value !== 'object') return null;
  const usage = value as Record<string, unknown>;
  const input = tokens(usage['prompt_tokens']);
  const output = tokens(usage['completion_tokens']);
  return input === null && output === null ? null : { input, output };
}

function serverError(data: Record<string, unknown>, label: string): ModelError | null {
  const error = data['error'];
  if (error === undefined || error === null) return null;
  const message = typeof error === 'string' ? error : String((error as Record<string, unknown>)['message'] ?? JSON.stringify(error));
  return new ModelError('http', `${label} reported an error: ${boundText(message, 500)}`);
}

/** A non-streamed chat completion as a reply. */
export function chatReply(data: Record<string, unknown>, label: string): ModelReply {
  const error = serverError(data, label);
  if (error) throw error;
  const choice = Array.isArray(data['choices']) ? (data['choices'][0] as Record<string, unknown> | undefined) : undefined;
  const message = (choice?.['message'] ?? null) as Record<string, unknown> | null;
  if (!message) throw new ModelError('protocol', `${label} answered without a message`);
  const text = new BoundedText(MAX_TEXT_BYTES);
  if (typeof message['content'] === 'string') text.append(message['content']);
  const calls: ModelToolCall[] = [];
  const raw = Array.isArray(message['tool_calls']) ? (message['tool_calls'] as Array<Record<string, unknown>>) : [];
  for (const [i, c] of raw.entries()) {
    const fn = (c['function'] ?? {}) as Record<string, unknown>;
    const args = fn['arguments'];
    const call: ModelToolCall = {
      id: String(c['id'] ?? `call_${i}`),
      name: String(fn['name'] ?? ''),
      arguments: typeof args === 'string' ? args : args !== null && typeof args === 'object' ? (args as Record<string, unknown>) : '',
    };
    if (typeof args === 'string' && Buffer.byteLength(args, 'utf8') > MAX_ARGUMENT_BYTES) {
      call.arguments = '';
      call.oversizedArguments = Buffer.byteLength(args, 'utf8');
    }
    calls.push(call);
  }
  return { text: text.text(), calls, usage: chatUsage(data['usage']) };
}

interface PartialCall {
  id: string;
  name: string;
  args: BoundedText;
}

/**
 * Reads a streamed chat completion. Complete when `[DONE]` arrives, or when the stream closes
 * after a `finish_reason`; a stream that closes before either is a disconnect.
 */
export async function readChatStream(response: Response, signal: AbortSignal, label: string): Promise<ModelReply> {
  const text = new BoundedText(MAX_TEXT_BYTES);
  const calls = new Map<number, PartialCall>();
  let usage: ModelUsage | null = null;
  let finished = false;
  let done = false;
  for await (const event of readSse(response, signal)) {
    if (event.data.trim() === '[DONE]') {
      done = true;
      break;
    }
    const data = eventJson(event);
    const error = serverError(data, label);
    if (error) throw error;
    usage = chatUsage(data['usage']) ?? usage;
    const choices = Array.isArray(data['choices']) ? (data['choices'] as Array<Record<string, unknown>>) : [];
    for (const choice of choices) {
      if ((choice['index'] ?? 0) !== 0) continue;
      const delta = (choice['delta'] ?? {}) as Record<string, unknown>;
      if (typeof delta['content'] === 'string') text.append(delta['content']);
      const pieces = Array.isArray(delta['tool_calls']) ? (delta['tool_calls'] as Array<Record<string, unknown>>) : [];
      for (const piece of pieces) {
        const index = typeof piece['index'] === 'number' ? piece['index'] : calls.size;
        const call = calls.get(index) ?? { id: '', name: '', args: new BoundedText(MAX_ARGUMENT_BYTES) };
        calls.set(index, call);
        if (typeof piece['id'] === 'string' && piece['id'].length > 0) call.id = piece['id'];
        const fn = (piece['function'] ?? {}) as Record<string, unknown>;
        if (typeof fn['name'] === 'string') call.name += fn['name'];
        if (typeof fn['arguments'] === 'string') call.args.append(fn['arguments']);
      }
      if (typeof choice['finish_reason'] === 'string' && choice['finish_reason'].length > 0) finished = true;
    }
  }
  if (!done && !finished) throw new ModelError('disconnect', STREAM_ENDED);
  const out: ModelToolCall[] = [...calls.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, c]) => ({
      id: c.id || `call_${index}`,
      name: c.name,
      arguments: c.args.overflowed ? '' : c.args.text(),
      ...(c.args.overflowed ? { oversizedArguments: c.args.bytes } : {}),
    }));
  return { text: text.text(), calls: out, usage };
}
