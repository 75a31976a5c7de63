import type { Lens } from '../../protocol/board';

/**
 * The seams the lens pipeline runs over. runLensPipeline is pure over these: tests inject the
 * scripted harness, a fixed clock and an in-memory or temp-dir prompt reader; production injects
 * real harnesses (Claude Code, Codex, vscode.lm, HTTP APIs) and the prompts/ reader.
 */

export type SeatRole = 'drafter' | 'reviewer' | 'compiler';

export interface SeatSpec {
  /** Unique within a generation, e.g. `sequence:drafter`, `flagged:reviewer:claude`. */
  seatId: string;
  lens: Lens;
  role: SeatRole;
}

/** A tool as a seat sees it: exactly what the MCP server lists. */
export interface SeatTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** The seat's tools called in-process (harnesses that run their own tool loop call these). */
export interface ToolPort {
  readonly tools: readonly SeatTool[];
  call(name: string, input: Record<string, unknown>): Promise<{ text: string; isError: boolean }>;
}

/** The same tools over the seat's loopback MCP server (CLI harnesses connect to it). */
export interface McpEndpoint {
  url: string;
  headers: Record<string, string>;
}

export type HarnessEvent = { type: 'text'; text: string } | { type: 'tool-call'; name: string } | { type: 'tool-result'; name: string; isError: boolean };

export interface TurnRequest {
  seat: SeatSpec;
  /** The whole user message of this turn. A follow-up turn carries only the last finish verdict. */
  prompt: string;
  /** True for a repair turn on the seat's own thread (same conversation). */
  followUp: boolean;
  /** The bound workspace the seat reads (read-only tools only). */
  cwd: string;
  tools: ToolPort;
  mcp: McpEndpoint | null;
  signal: AbortSignal;
  onEvent(event: HarnessEvent): void;
}

export interface TurnUsage {
  inputTokens: number | null;
  outputTokens: number | null;
  priceUsd: number | null;
}

export interface TurnResult {
  /** ended: the turn finished (settled or not, the board says); failed: the harness broke. */
  outcome: 'ended' | 'aborted' | 'failed';
  /** The drafter's or harness's own words when it failed. */
  message: string | null;
  /** null when the harness reported no usage (say so; never a zero). */
  usage: TurnUsage | null;
  /**
   * A failed turn another attempt cannot mend as configured (credentials refused, consent denied,
   * no such model): the ladder stops there and the lane's failure is not retryable.
   */
  final?: boolean;
}

export interface Harness {
  /** `scripted`, `claude-code`, `codex`, `vscode-lm`, `openai-compatible`, `anthropic`. */
  readonly kind: string;
  /** Who raised a finding: the origin enum value this harness maps to (claude, codex, other). */
  readonly origin: 'claude' | 'codex' | 'other';
  /** Model name when known; the scripted harness reports null (it is never shown as a model). */
  readonly model: string | null;
  runTurn(request: TurnRequest): Promise<TurnResult>;
}

/** What a seat's prompt is assembled from: files the prompt names, never interpolated content. */
export interface SeatPromptContext {
  /** Repo-relative path of the session's context directory, e.g. `.rennet/context/s-…`. */
  contextDir: string;
}

export interface PromptReader {
  /** The full first-turn prompt of a seat. Byte-identical for any change with the same context dir. */
  seatPrompt(seat: SeatSpec, context: SeatPromptContext): string;
  /** A follow-up turn: the last finish verdict and nothing else. */
  followUpPrompt(seat: SeatSpec, lastVerdict: string | null): string;
}

export interface Clock {
  now(): Date;
}
