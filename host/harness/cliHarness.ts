import type { Harness, HarnessEvent, McpEndpoint, TurnRequest, TurnResult, TurnUsage } from '../pipeline/ports';
import { ARGV_PROMPT_MAX_BYTES, ThreadBook, bounded, runCli, type CliExit } from './cliProcess';

/**
 * What the vendor CLI harnesses (claudeCode.ts, codex.ts) share: their options, the seat's thread
 * across turns (resume the vendor's session, or carry the first prompt into a new one when the
 * first turn never started one), the prompt through argv or stdin, and the failure shape. Each
 * subclass keeps its argv, its stream reader and how it reads the CLI's end.
 */

export interface CliHarnessOptions {
  /** The executable (default the vendor's own name, looked up on PATH). */
  bin?: string;
  /** The CLI's model flag; omitted: the user's own default. */
  model?: string;
  /** Added to (never replacing) the inherited environment. */
  env?: NodeJS.ProcessEnv;
  /** SIGTERM to SIGKILL on abort, in milliseconds (default 3000). */
  graceMs?: number;
}

/** A seat's thread: the vendor's session/thread id once its stream named one, and the seat's first prompt. */
export interface CliThread {
  id: string | null;
  firstPrompt: string;
}

/** One turn as the base opened it: the seat's thread, the prompt to send and the id to resume (null: a new thread). */
export interface CliTurn<T extends CliThread> {
  request: TurnRequest;
  mcp: McpEndpoint;
  thread: T;
  prompt: string;
  resume: string | null;
}

export const CANCELLED = 'the turn was cancelled';

export abstract class CliHarness<T extends CliThread> implements Harness {
  abstract readonly kind: string;
  abstract readonly origin: 'claude' | 'codex';
  readonly model: string | null;
  readonly bin: string;
  private readonly env: NodeJS.ProcessEnv;
  private readonly graceMs: number | undefined;
  private readonly threads = new ThreadBook<T>();

  /** `name` is the CLI as a failure message names it (`Claude Code`, `Codex`). */
  constructor(
    options: CliHarnessOptions,
    defaultBin: string,
    protected readonly name: string,
  ) {
    this.bin = options.bin ?? defaultBin;
    this.model = options.model ?? null;
    this.env = options.env ?? {};
    this.graceMs = options.graceMs;
  }

  async runTurn(request: TurnRequest): Promise<TurnResult> {
    if (!request.mcp) return cliFailed(`${this.name} writes the board through the seat's MCP server, and this turn has none`, null);
    if (request.signal.aborted) return { outcome: 'aborted', message: CANCELLED, usage: null };
    const key = ThreadBook.keyOf(request.seat.seatId, request.mcp.url);
    const known = request.followUp ? this.threads.get(key) : undefined;
    let prompt = request.prompt;
    let resume: string | null = null;
    if (request.followUp && known?.id) {
      resume = known.id;
    } else if (request.followUp && known) {
      // The first turn never started a thread (the CLI failed before it): a new one that carries
      // the seat's first prompt, then the follow-up.
      prompt = `${known.firstPrompt.replace(/\s+$/, '')}\n\n${request.prompt}`;
    }
    const thread = known ?? this.newThread(request.prompt);
    this.threads.set(key, thread);
    return this.turn({ request, mcp: request.mcp, thread, prompt, resume });
  }

  /** A fresh thread for a seat whose first prompt is `firstPrompt`. */
  protected abstract newThread(firstPrompt: string): T;

  /** Runs the opened turn: spawn the CLI (`spawn`), read its stream, say how it ended. */
  protected abstract turn(turn: CliTurn<T>): Promise<TurnResult>;

  /**
   * Runs the CLI once in the seat's directory. The prompt is the argv's last word, or goes through
   * stdin when too long for one argument (`args` then gets null). The environment is the
   * inherited one, plus the harness's `env`, plus `env` here.
   */
  protected spawn(run: { turn: CliTurn<T>; args: (prompt: string | null) => string[]; signal: AbortSignal; onLine: (line: string) => void; env?: Record<string, string> }): Promise<CliExit> {
    const { prompt } = run.turn;
    const viaStdin = Buffer.byteLength(prompt, 'utf8') > ARGV_PROMPT_MAX_BYTES;
    return runCli({
      bin: this.bin,
      args: run.args(viaStdin ? null : prompt),
      cwd: run.turn.request.cwd,
      env: { ...process.env, ...this.env, ...run.env },
      signal: run.signal,
      onLine: run.onLine,
      ...(viaStdin ? { stdin: prompt } : {}),
      ...(this.graceMs === undefined ? {} : { graceMs: this.graceMs }),
    });
  }

  /** The failure when the executable could not be started. */
  protected startFailed(spawnError: string): TurnResult {
    return cliFailed(`could not start ${this.name} (${this.bin}): ${spawnError}`, null);
  }
}

export function cliFailed(message: string, usage: TurnUsage | null): TurnResult {
  return { outcome: 'failed', message: bounded(message), usage };
}

/** Hands a stream event to the turn's observer; an observer's failure is its own. */
export function emitEvent(onEvent: (event: HarnessEvent) => void, event: HarnessEvent): void {
  try {
    onEvent(event);
  } catch {
    // An observer's failure is its own.
  }
}
