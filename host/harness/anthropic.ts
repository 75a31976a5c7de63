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
  isLoopback,
  parseBaseUrl,
  readSse,
  tokens,
  type CallAnswer,
  type ModelReply,
  type ModelThread,
  type ModelToolCall,
  type ModelUsage,
} from './toolLoop';

/**
 * The `anthropic` harness: the Anthropic Messages API with tool use, streamed (SSE parsed here,
 * no SDK), driving the in-host tool loop (toolLoop.ts) over the turn's in-process ToolPort.
 *
 * One thread per seat id: a follow-up turn (`request.followUp`) continues the seat's conversation
 * with the new user message; a first turn starts a new one. The system prompt is fixed and short;
 * the turn's prompt is the user message. Usage is the sum over the turn's round trips (input
 * includes cache reads and writes); the price is unknown (null).
 */

export const ANTHROPIC_VERSION = '2023-06-01';
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 8192;

/**
 * `baseUrl` e.g. `https://api.anthropic.com` (with or without a trailing `/v1`); `apiKey` is sent
 * as `x-api-key`, required unless the base URL is loopback; `origin` defaults to `claude`.
 */
export interface AnthropicHarnessOptions extends HttpHarnessOptions {
  /** `max_tokens` per request. Default 8192. */
  maxTokens?: number;
}

type Block = Record<string, unknown>;
interface Message {
  role: 'user' | 'assistant';
  content: Block[];
}

export class AnthropicHarness extends HttpHarness<Message, AnthropicHarnessOptions> {
  readonly kind = 'anthropic';

  constructor(options: AnthropicHarnessOptions) {
    super(options, anthropicEndpoint(options), 'claude');
  }

  protected addPrompt(messages: Message[], prompt: string): void {
    addUserText(messages, prompt);
  }

  protected thread(messages: Message[], tools: readonly SeatTool[]): AnthropicThread {
    return new AnthropicThread(messages, tools, this.options, this.post, this.label);
  }
}

function anthropicEndpoint(options: AnthropicHarnessOptions): HttpEndpoint {
  const base = parseBaseUrl(options.baseUrl, options.apiKey, 'Anthropic');
  if (!options.apiKey && !isLoopback(base)) throw new Error(`an API key is required for the Anthropic API at ${base.origin}`);
  const root = options.baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
  return { url: `${root}/v1/messages`, label: `the Anthropic API (${base.origin})` };
}

/** An ephemeral cache breakpoint (Anthropic prompt caching); three per request at most here, of the four allowed. */
const CACHE = { type: 'ephemeral' } as const;

/** The conversation with a cache breakpoint on its first user block (the seat prompt), never mutating it. */
function withCachedPrompt(messages: readonly Message[]): Message[] {
  const [first, ...rest] = messages;
  if (!first || first.role !== 'user' || first.content.length === 0) return [...messages];
  const [block, ...blocks] = first.content;
  return [{ ...first, content: [{ ...block, cache_control: CACHE } as Block, ...blocks] }, ...rest];
}

function addUserText(messages: Message[], text: string): void {
  const last = messages[messages.length - 1];
  const block = { type: 'text', text: text.length > 0 ? text : '(no message)' };
  if (last && last.role === 'user') last.content.push(block);
  else messages.push({ role: 'user', content: [block] });
}

class AnthropicThread implements ModelThread {
  constructor(
    private readonly messages: Message[],
    private readonly tools: readonly SeatTool[],
    private readonly options: AnthropicHarnessOptions,
    private readonly post: PostModel,
    private readonly label: string,
  ) {}

  async send(signal: AbortSignal): Promise<ModelReply> {
    const headers: Record<string, string> = { 'anthropic-version': ANTHROPIC_VERSION, accept: 'text/event-stream' };
    if (this.options.apiKey) headers['x-api-key'] = this.options.apiKey;
    const body = {
      model: this.options.model,
      max_tokens: this.options.maxTokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS,
      // Prompt caching: the tools, the system prompt and the seat's prompt (the first user block)
      // are the same on every request of a turn and across reviews, so each ends a cached prefix.
      system: [{ type: 'text', text: SEAT_SYSTEM_PROMPT, cache_control: CACHE }],
      messages: withCachedPrompt(this.messages),
      tools: this.tools.map((t, i) => ({ name: t.name, description: t.description, input_schema: t.inputSchema, ...(i === this.tools.length - 1 ? { cache_control: CACHE } : {}) })),
      stream: true,
    };
    const response = await this.post(headers, body, signal);
    return readAnthropicStream(response, signal, this.label);
  }

  commit(reply: ModelReply, answers: readonly CallAnswer[]): void {
    const content: Block[] = [];
    if (reply.text.length > 0) content.push({ type: 'text', text: reply.text });
    for (const call of reply.calls) {
      const answer = answers.find((a) => a.call === call);
      content.push({ type: 'tool_use', id: call.id, name: call.name, input: answer?.input ?? {} });
    }
    if (content.length > 0) this.messages.push({ role: 'assistant', content });
    if (answers.length > 0) {
      this.messages.push({
        role: 'user',
        content: answers.map((a) => ({ type: 'tool_result', tool_use_id: a.call.id, content: a.text.length > 0 ? a.text : '(empty)', ...(a.isError ? { is_error: true } : {}) })),
      });
    }
  }
}

interface OpenBlock {
  type: 'text' | 'tool_use' | 'other';
  id: string;
  name: string;
  args: BoundedText;
}

/** Reads one streamed Messages answer into a reply. A stream without message_stop is a disconnect. */
export async function readAnthropicStream(response: Response, signal: AbortSignal, label: string): Promise<ModelReply> {
  const text = new BoundedText(MAX_TEXT_BYTES);
  const blocks = new Map<number, OpenBlock>();
  const order: OpenBlock[] = [];
  let input: number | null = null;
  let output: number | null = null;
  let sawUsage = false;
  let stopped = false;
  for await (const event of readSse(response, signal)) {
    const data = eventJson(event);
    const type = typeof data['type'] === 'string' ? data['type'] : event.event;
    switch (type) {
      case 'message_start': {
        const usage = ((data['message'] as Record<string, unknown> | undefined)?.['usage'] ?? null) as Record<string, unknown> | null;
        if (usage) {
          sawUsage = true;
          input = inputTokens(usage) ?? input;
          output = tokens(usage['output_tokens']) ?? output;
        }
        break;
      }
      case 'content_block_start': {
        const index = Number(data['index']);
        const block = (data['content_block'] ?? {}) as Record<string, unknown>;
        const open: OpenBlock = {
          type: block['type'] === 'text' ? 'text' : block['type'] === 'tool_use' ? 'tool_use' : 'other',
          id: String(block['id'] ?? ''),
          name: String(block['name'] ?? ''),
          args: new BoundedText(MAX_ARGUMENT_BYTES),
        };
        if (open.type === 'text' && typeof block['text'] === 'string') text.append(block['text']);
        if (open.type === 'tool_use' && block['input'] !== undefined && JSON.stringify(block['input']) !== '{}') open.args.append(JSON.stringify(block['input']));
        blocks.set(index, open);
        order.push(open);
        break;
      }
      case 'content_block_delta': {
        const open = blocks.get(Number(data['index']));
        const delta = (data['delta'] ?? {}) as Record<string, unknown>;
        if (!open) break;
        if (delta['type'] === 'text_delta' && typeof delta['text'] === 'string') text.append(delta['text']);
        else if (delta['type'] === 'input_json_delta' && typeof delta['partial_json'] === 'string') open.args.append(delta['partial_json']);
        break;
      }
      case 'message_delta': {
        const usage = (data['usage'] ?? null) as Record<string, unknown> | null;
        if (usage) {
          sawUsage = true;
          input = inputTokens(usage) ?? input;
          output = tokens(usage['output_tokens']) ?? output;
        }
        break;
      }
      case 'message_stop':
        stopped = true;
        break;
      case 'error': {
        const error = (data['error'] ?? {}) as Record<string, unknown>;
        const kind = typeof error['type'] === 'string' ? `${error['type']}: ` : '';
        throw new ModelError('http', `${label} reported an error mid-stream: ${kind}${boundText(String(error['message'] ?? 'no message'), 500)}`);
      }
      default:
        break; // ping, and block types this harness does not use
    }
    if (stopped) break;
  }
  if (!stopped) throw new ModelError('disconnect', STREAM_ENDED);
  const calls: ModelToolCall[] = order
    .filter((b) => b.type === 'tool_use')
    .map((b) => ({ id: b.id, name: b.name, arguments: b.args.overflowed ? '' : b.args.text(), ...(b.args.overflowed ? { oversizedArguments: b.args.bytes } : {}) }));
  const usage: ModelUsage | null = sawUsage && (input !== null || output !== null) ? { input, output } : null;
  return { text: text.text(), calls, usage };
}

/** Input tokens including cache writes and reads (the Messages API counts them apart). */
function inputTokens(usage: Record<string, unknown>): number | null {
  const base = tokens(usage['input_tokens']);
  if (base === null) return null;
  return base + (tokens(usage['cache_creation_input_tokens']) ?? 0) + (tokens(usage['cache_read_input_tokens']) ?? 0);
}
