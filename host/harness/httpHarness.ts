import type { Harness, SeatTool, TurnRequest, TurnResult } from '../pipeline/ports';
import { postJson, runToolLoop, SeatConversations, type ModelThread } from './toolLoop';

/**
 * What the HTTP model harnesses (anthropic.ts, openai.ts) share: their common options, the seat
 * system prompt, one conversation per seat id, a turn as the seat's prompt added to it and then
 * the tool loop (toolLoop.ts), and the POST that keeps the key out of every error. Each subclass
 * keeps its URL, its headers and body, and how it reads its vendor's answer (its `ModelThread`).
 */

/** The fixed short system prompt of every HTTP seat; the turn's prompt is the user message. */
export const SEAT_SYSTEM_PROMPT =
  'You are one seat of Rennet, a code review tool. Do what the user message asks by calling the tools you are given; they are the only way to write. When you are done, stop calling tools.';

export interface HttpHarnessOptions {
  baseUrl: string;
  /** Never logged or quoted. */
  apiKey?: string;
  model: string;
  origin?: 'claude' | 'codex' | 'other';
  /** Per-request timeout; default DEFAULT_REQUEST_TIMEOUT_MS (300 s). */
  requestTimeoutMs?: number;
  /** Default MAX_ROUND_TRIPS (64). */
  maxRoundTrips?: number;
}

/** Where a harness posts, and how its failures name the server (`the Anthropic API (https://…)`). */
export interface HttpEndpoint {
  url: string;
  label: string;
}

/** A bound POST to the harness's endpoint: JSON body, the key redacted from any error. */
export type PostModel = (headers: Record<string, string>, body: unknown, signal: AbortSignal) => Promise<Response>;

export abstract class HttpHarness<M, O extends HttpHarnessOptions> implements Harness {
  abstract readonly kind: string;
  readonly origin: 'claude' | 'codex' | 'other';
  readonly model: string;
  protected readonly url: string;
  protected readonly label: string;
  protected readonly post: PostModel;
  private readonly conversations: SeatConversations<M>;

  constructor(
    protected readonly options: O,
    endpoint: HttpEndpoint,
    defaultOrigin: 'claude' | 'codex' | 'other',
    /** A new seat thread's first messages (e.g. the system message). */
    start?: () => M[],
  ) {
    this.model = options.model;
    this.origin = options.origin ?? defaultOrigin;
    this.url = endpoint.url;
    this.label = endpoint.label;
    this.conversations = new SeatConversations<M>(start);
    const secrets = options.apiKey ? [options.apiKey] : [];
    this.post = (headers, body, signal) => postJson(endpoint.url, headers, body, signal, secrets, endpoint.label);
  }

  async runTurn(request: TurnRequest): Promise<TurnResult> {
    const messages = this.conversations.open(request);
    this.addPrompt(messages, request.prompt);
    return runToolLoop(request, this.thread(messages, request.tools.tools), this.options);
  }

  /** Adds the turn's prompt to the seat's thread as the user's words. */
  protected abstract addPrompt(messages: M[], prompt: string): void;

  /** The thread the tool loop drives this turn: it sends through `post` and records into `messages`. */
  protected abstract thread(messages: M[], tools: readonly SeatTool[]): ModelThread;
}
