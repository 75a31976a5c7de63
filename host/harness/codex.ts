import type { HarnessEvent, McpEndpoint, TurnResult, TurnUsage } from '../pipeline/ports';
import { CANCELLED, CliHarness, cliFailed, emitEvent, type CliHarnessOptions, type CliThread, type CliTurn } from './cliHarness';
import { asCount, asRecord, exitWords, parseJsonLine, stderrTail } from './cliProcess';

/**
 * The Codex harness: one seat turn is one `codex exec --json` run in the seat's working
 * directory, read-only sandbox, with Rennet's seat server added as an MCP server whose tools are
 * approved (host/harness/README.md, docs/harnesses.md).
 *
 * - Inherits the user's environment and CODEX_HOME (their login, providers, config.toml): only
 *   `options.env` and the seat secret's variable are added.
 * - The seat secret travels in the environment (`env_http_headers`), never in argv.
 * - A follow-up turn is `codex exec … resume <thread id>` with only the follow-up prompt.
 * - Abort ends the CLI's whole process group (the npm `codex` launcher and the native binary).
 */

export const CODEX_MCP_SERVER = 'rennet';
/** `RENNET_MCP_HEADER_<n>` holds the n-th header value of the seat's MCP endpoint. */
export const CODEX_HEADER_ENV_PREFIX = 'RENNET_MCP_HEADER_';

/** `bin` defaults to `codex`; `model` is `-m`. */
export type CodexHarnessOptions = CliHarnessOptions;

export interface CodexArgsInput {
  /** Null: the prompt goes through stdin (`-`: too long for one argument). */
  prompt: string | null;
  mcp: McpEndpoint;
  model: string | null;
  /** The thread to resume, or null for a new one. */
  resume: string | null;
}

/** A TOML basic string. */
export function tomlString(value: string): string {
  let out = '"';
  for (const ch of value) {
    const code = ch.codePointAt(0) as number;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (code < 0x20 || code === 0x7f) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/**
 * `mcp_servers.rennet={…}`: the seat server, its header values read from the environment (never
 * argv), its tools approved (exec's approval policy is "never": unapproved MCP calls fail), and
 * required (Codex refuses to start the turn when it cannot connect).
 */
export function codexMcpOverride(mcp: McpEndpoint): string {
  const headers = Object.keys(mcp.headers)
    .map((name, i) => `${tomlString(name)}=${tomlString(`${CODEX_HEADER_ENV_PREFIX}${i}`)}`)
    .join(',');
  // required=true: an unreachable seat server fails the run before any model call (measured).
  return `mcp_servers.${CODEX_MCP_SERVER}={url=${tomlString(mcp.url)},env_http_headers={${headers}},default_tools_approval_mode="approve",required=true}`;
}

/** The variables codexMcpOverride names, with the header values. */
export function codexHeaderEnv(mcp: McpEndpoint): Record<string, string> {
  return Object.fromEntries(Object.values(mcp.headers).map((value, i) => [`${CODEX_HEADER_ENV_PREFIX}${i}`, value]));
}

/** The exact argv (after the executable) of one turn. */
export function codexArgs(input: CodexArgsInput): string[] {
  return [
    'exec',
    '--json',
    '--skip-git-repo-check',
    '-s',
    'read-only',
    ...(input.model ? ['-m', input.model] : []),
    '-c',
    codexMcpOverride(input.mcp),
    // No AGENTS.md (or other project doc) from the reviewed change becomes instructions.
    '-c',
    'project_doc_max_bytes=0',
    // exec's options above apply to `resume` too (measured: -s before `resume` sets its sandbox).
    ...(input.resume ? ['resume', input.resume] : []),
    '--',
    input.prompt ?? '-',
  ];
}

interface Totals {
  input: number | null;
  output: number | null;
}

/** The thread's id is `thread.started`'s (`resume <id>`). */
interface Thread extends CliThread {
  /** The thread's cumulative usage after its last completed turn (Codex reports thread totals). */
  totals: Totals | null;
}

export class CodexHarness extends CliHarness<Thread> {
  readonly kind = 'codex';
  readonly origin = 'codex' as const;

  constructor(options: CodexHarnessOptions = {}) {
    super(options, 'codex', 'Codex');
  }

  protected newThread(firstPrompt: string): Thread {
    return { id: null, firstPrompt, totals: null };
  }

  protected async turn(turn: CliTurn<Thread>): Promise<TurnResult> {
    const { request, mcp, thread, resume } = turn;
    const stream = new CodexStream(request.onEvent);
    const exit = await this.spawn({
      turn,
      args: (prompt) => codexArgs({ prompt, mcp, model: this.model, resume }),
      env: codexHeaderEnv(mcp),
      signal: request.signal,
      onLine: (line) => stream.line(line),
    });
    const resumed = resume !== null && stream.threadId === resume;
    if (stream.threadId) thread.id = stream.threadId;
    const usage = stream.turnUsage(resumed ? thread.totals : null);
    if (stream.totals) thread.totals = stream.totals;
    if (exit.aborted) return { outcome: 'aborted', message: CANCELLED, usage };
    if (exit.spawnError !== null) return this.startFailed(exit.spawnError);
    if (stream.failure !== null) return cliFailed(`Codex: ${stream.failure}`, usage);
    if (!stream.completed || exit.code !== 0) {
      const said = stream.lastError ?? codexStderrReason(exit.stderr);
      return cliFailed(`Codex ${exitWords(exit)}${stream.completed ? '' : ' before the turn completed'}${said ? `: ${said}` : ''}`, usage);
    }
    return { outcome: 'ended', message: null, usage };
  }
}

/**
 * Reads `codex exec --json` lines: `thread.started` (thread id), `item.started`/`item.completed`
 * (mcp_tool_call, command_execution, agent_message; an `error` item is a warning),
 * `turn.completed` (usage), `turn.failed` and `error`.
 */
export class CodexStream {
  threadId: string | null = null;
  completed = false;
  /** turn.failed's message. */
  failure: string | null = null;
  /** The last top-level `error` event (Codex also reports retries this way). */
  lastError: string | null = null;
  /** turn.completed's usage: the thread's totals so far. */
  totals: Totals | null = null;
  private readonly started = new Set<string>();

  constructor(private readonly onEvent: (event: HarnessEvent) => void) {}

  line(line: string): void {
    const msg = parseJsonLine(line);
    if (!msg) return;
    switch (msg.type) {
      case 'thread.started':
        if (typeof msg.thread_id === 'string') this.threadId = msg.thread_id;
        return;
      case 'item.started':
      case 'item.completed': {
        const item = asRecord(msg.item);
        if (item) this.item(item, msg.type === 'item.completed');
        return;
      }
      case 'turn.completed': {
        this.completed = true;
        const u = asRecord(msg.usage);
        this.totals = u ? { input: asCount(u.input_tokens), output: asCount(u.output_tokens) } : null;
        return;
      }
      case 'turn.failed':
        this.failure = messageOf(msg.error) ?? 'the turn failed';
        return;
      case 'error':
        this.lastError = messageOf(msg) ?? this.lastError;
        return;
      default:
        return;
    }
  }

  /**
   * This turn's usage. Codex's turn.completed carries the thread's running totals, so a resumed
   * turn's usage is the difference from the totals after the thread's previous completed turn.
   */
  turnUsage(previous: Totals | null): TurnUsage | null {
    const t = this.totals;
    if (!t) return null;
    const minus = (now: number | null, before: number | null | undefined) => (now === null ? null : before != null && now >= before ? now - before : now);
    return { inputTokens: minus(t.input, previous?.input), outputTokens: minus(t.output, previous?.output), priceUsd: null };
  }

  private item(item: Record<string, unknown>, completed: boolean): void {
    const id = typeof item.id === 'string' ? item.id : '';
    const name = toolName(item);
    if (name !== null) {
      if (!this.started.has(id)) {
        this.started.add(id);
        this.emit({ type: 'tool-call', name });
      }
      if (completed) this.emit({ type: 'tool-result', name, isError: toolFailed(item) });
      return;
    }
    if (completed && item.type === 'agent_message' && typeof item.text === 'string' && item.text.length > 0) this.emit({ type: 'text', text: item.text });
  }

  private emit(event: HarnessEvent): void {
    emitEvent(this.onEvent, event);
  }
}

function toolName(item: Record<string, unknown>): string | null {
  if (item.type === 'mcp_tool_call') {
    const tool = typeof item.tool === 'string' ? item.tool : 'unknown';
    return item.server === CODEX_MCP_SERVER ? tool : `mcp__${String(item.server)}__${tool}`;
  }
  if (item.type === 'command_execution') return 'shell';
  return null;
}

function toolFailed(item: Record<string, unknown>): boolean {
  if (item.type === 'command_execution') return item.status !== 'completed' || (typeof item.exit_code === 'number' && item.exit_code !== 0);
  // A refused board call comes back as status "failed" with the seat's text as its result.
  return item.status !== 'completed' || (item.error !== null && item.error !== undefined);
}

/**
 * What Codex said on stderr when it stopped without a JSON account (e.g. "required MCP servers
 * failed to initialize"): its last ERROR log line without the timestamp and module, else the tail.
 */
export function codexStderrReason(stderr: string): string {
  const errors = stderr.split(/\r?\n/).filter((l) => /\bERROR\b/.test(l));
  const last = errors[errors.length - 1];
  if (last === undefined) return stderrTail(stderr);
  return last.replace(/^\S*\s+ERROR\s+[\w:]+:\s*/, '').trim();
}

function messageOf(value: unknown): string | null {
  const record = asRecord(value);
  const message = record?.message;
  return typeof message === 'string' && message.length > 0 ? message : null;
}
