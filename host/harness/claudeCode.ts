import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HarnessEvent, McpEndpoint, TurnResult, TurnUsage } from '../pipeline/ports';
import { CANCELLED, CliHarness, cliFailed, emitEvent, type CliHarnessOptions, type CliThread, type CliTurn } from './cliHarness';
import { asCount, asRecord, exitWords, parseJsonLine, stderrTail } from './cliProcess';

/**
 * The Claude Code harness: one seat turn is one `claude -p` run in the seat's working directory,
 * connected to the seat's loopback MCP server (host/harness/README.md, docs/harnesses.md).
 *
 * - Inherits the user's environment (HOME, login, settings): only `options.env` is added.
 * - Restricts the built-in tools to Read, Grep and Glob (`--tools`), loads only Rennet's MCP
 *   server (`--strict-mcp-config`, from a private temp file that holds the seat secret), and
 *   pre-approves exactly the seat's board tools (`--allowedTools mcp__rennet__<name>`).
 * - A follow-up turn resumes the seat's thread (`--resume <session id>` from the first turn's
 *   stream) and sends only the follow-up prompt.
 * - Abort ends the CLI's whole process group.
 */

export const CLAUDE_MCP_SERVER = 'rennet';
/** Read-only built-ins a lens seat may use. `--allowedTools` alone would still offer Bash, Write, Edit. */
export const CLAUDE_READ_ONLY_TOOLS = 'Read,Grep,Glob';
const MCP_PREFIX = `mcp__${CLAUDE_MCP_SERVER}__`;

/** `bin` defaults to `claude`; `model` is `--model`. */
export type ClaudeCodeHarnessOptions = CliHarnessOptions;

export interface ClaudeArgsInput {
  /** Null: the prompt goes through stdin (too long for one argument). */
  prompt: string | null;
  mcpConfigPath: string;
  /** Board tool names as the seat lists them (`cite`, `finish`, …). */
  tools: readonly string[];
  model: string | null;
  /** The session to continue, or null for a new thread. */
  resume: string | null;
}

/** The exact argv (after the executable) of one turn. */
export function claudeArgs(input: ClaudeArgsInput): string[] {
  const allowed = input.tools.map((name) => `${MCP_PREFIX}${name}`).join(',');
  return [
    '-p',
    '--output-format',
    'stream-json',
    '--verbose',
    '--mcp-config',
    input.mcpConfigPath,
    '--strict-mcp-config',
    // The workspace is the reviewed change: its .claude/settings*.json (hooks, permissions, env)
    // is the change author's, not the user's. Only the user's own settings load.
    '--setting-sources',
    'user',
    '--tools',
    CLAUDE_READ_ONLY_TOOLS,
    ...(allowed.length > 0 ? ['--allowedTools', allowed] : []),
    ...(input.model ? ['--model', input.model] : []),
    ...(input.resume ? ['--resume', input.resume] : []),
    // `--` ends the options: the variadic ones above would otherwise swallow the prompt.
    ...(input.prompt === null ? [] : ['--', input.prompt]),
  ];
}

/** The `--mcp-config` document: Rennet's seat server and nothing else. */
export function claudeMcpConfig(mcp: McpEndpoint): string {
  return JSON.stringify({ mcpServers: { [CLAUDE_MCP_SERVER]: { type: 'http', url: mcp.url, headers: { ...mcp.headers } } } });
}

/** The thread's id is the session id the stream's lines carry (`--resume`). */
export class ClaudeCodeHarness extends CliHarness<CliThread> {
  readonly kind = 'claude-code';
  readonly origin = 'claude' as const;

  constructor(options: ClaudeCodeHarnessOptions = {}) {
    super(options, 'claude', 'Claude Code');
  }

  protected newThread(firstPrompt: string): CliThread {
    return { id: null, firstPrompt };
  }

  protected async turn(turn: CliTurn<CliThread>): Promise<TurnResult> {
    const { request, mcp, thread, resume } = turn;
    // Stopped early when init says the seat server failed: the model would run without the board tools.
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    request.signal.addEventListener('abort', onAbort, { once: true });
    const dir = mkdtempSync(join(tmpdir(), 'rennet-claude-mcp-'));
    const configPath = join(dir, 'mcp.json');
    try {
      writeFileSync(configPath, claudeMcpConfig(mcp), { mode: 0o600 });
      const tools = request.tools.tools.map((t) => t.name);
      const stream = new ClaudeStream(request.onEvent, () => stop.abort());
      const exit = await this.spawn({
        turn,
        args: (prompt) => claudeArgs({ prompt, mcpConfigPath: configPath, tools, model: this.model, resume }),
        signal: stop.signal,
        onLine: (line) => stream.line(line),
      });
      if (stream.sessionId) thread.id = stream.sessionId;
      const usage = stream.usage();
      if (request.signal.aborted) return { outcome: 'aborted', message: CANCELLED, usage };
      if (stream.mcpFailed()) return cliFailed(`Claude Code could not connect to the seat's MCP server (its status was "${stream.mcpStatus}")`, usage);
      if (exit.spawnError !== null) return this.startFailed(exit.spawnError);
      const result = stream.result;
      if (result && (result.isError || result.subtype !== 'success')) {
        return cliFailed(`Claude Code: ${result.text ?? result.subtype}`, usage);
      }
      if (!result) {
        const said = stderrTail(exit.stderr);
        return cliFailed(`Claude Code ${exitWords(exit)} before its result${said ? `: ${said}` : ''}`, usage);
      }
      if (exit.code !== 0) {
        const said = stderrTail(exit.stderr);
        return cliFailed(`Claude Code ${exitWords(exit)}${said ? `: ${said}` : ''}`, usage);
      }
      return { outcome: 'ended', message: null, usage };
    } finally {
      request.signal.removeEventListener('abort', onAbort);
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

interface ClaudeResult {
  subtype: string;
  isError: boolean;
  text: string | null;
  usage: Record<string, unknown> | null;
  costUsd: number | null;
}

/**
 * Reads `--output-format stream-json` lines: `system/init` (session id, MCP server status),
 * `assistant` messages (text, tool_use), `user` messages (tool_result), and the final `result`
 * (usage, cost, is_error).
 */
export class ClaudeStream {
  sessionId: string | null = null;
  /** The status `system/init` gave Rennet's MCP server, or null when none was seen. */
  mcpStatus: string | null = null;
  result: ClaudeResult | null = null;
  private readonly toolNames = new Map<string, string>();

  constructor(
    private readonly onEvent: (event: HarnessEvent) => void,
    private readonly onMcpFailed: () => void = () => undefined,
  ) {}

  /** True when init reported Rennet's server as anything but connected (or still pending). */
  mcpFailed(): boolean {
    return this.mcpStatus !== null && this.mcpStatus !== 'connected' && this.mcpStatus !== 'pending';
  }

  line(line: string): void {
    const msg = parseJsonLine(line);
    if (!msg) return;
    if (typeof msg.session_id === 'string' && msg.session_id.length > 0) this.sessionId = msg.session_id;
    switch (msg.type) {
      case 'system': {
        if (msg.subtype !== 'init' || !Array.isArray(msg.mcp_servers)) return;
        for (const server of msg.mcp_servers as unknown[]) {
          const s = asRecord(server);
          if (s && s.name === CLAUDE_MCP_SERVER && typeof s.status === 'string') this.mcpStatus = s.status;
        }
        if (this.mcpFailed()) this.onMcpFailed();
        return;
      }
      case 'assistant':
        for (const block of contentOf(msg)) {
          if (block.type === 'text' && typeof block.text === 'string' && block.text.length > 0) this.emit({ type: 'text', text: block.text });
          else if (block.type === 'tool_use' && typeof block.name === 'string') {
            const name = block.name.startsWith(MCP_PREFIX) ? block.name.slice(MCP_PREFIX.length) : block.name;
            if (typeof block.id === 'string') this.toolNames.set(block.id, name);
            this.emit({ type: 'tool-call', name });
          }
        }
        return;
      case 'user':
        for (const block of contentOf(msg)) {
          if (block.type !== 'tool_result') continue;
          const id = typeof block.tool_use_id === 'string' ? block.tool_use_id : '';
          this.emit({ type: 'tool-result', name: this.toolNames.get(id) ?? 'unknown', isError: block.is_error === true });
        }
        return;
      case 'result': {
        const cost = typeof msg.total_cost_usd === 'number' ? msg.total_cost_usd : typeof msg.costUSD === 'number' ? msg.costUSD : sumModelCost(msg.modelUsage);
        this.result = {
          subtype: typeof msg.subtype === 'string' ? msg.subtype : 'unknown',
          isError: msg.is_error === true,
          text: typeof msg.result === 'string' && msg.result.length > 0 ? msg.result : Array.isArray(msg.errors) && msg.errors.length > 0 ? msg.errors.map(String).join('; ') : null,
          usage: asRecord(msg.usage),
          costUsd: cost,
        };
        return;
      }
      default:
        return;
    }
  }

  /**
   * The turn's usage from the result line: input tokens counts every prompt token the model read
   * (uncached + cache writes + cache reads), output tokens as reported, and the CLI's own cost.
   * Null when no result line came.
   */
  usage(): TurnUsage | null {
    const r = this.result;
    if (!r) return null;
    const u = r.usage;
    const input = asCount(u?.input_tokens);
    const inputTokens = input === null ? null : input + (asCount(u?.cache_creation_input_tokens) ?? 0) + (asCount(u?.cache_read_input_tokens) ?? 0);
    const priceUsd = r.costUsd !== null && Number.isFinite(r.costUsd) && r.costUsd >= 0 ? r.costUsd : null;
    return { inputTokens, outputTokens: asCount(u?.output_tokens), priceUsd };
  }

  private emit(event: HarnessEvent): void {
    emitEvent(this.onEvent, event);
  }
}

function contentOf(msg: Record<string, unknown>): Array<Record<string, unknown>> {
  const content = asRecord(msg.message)?.content;
  if (!Array.isArray(content)) return [];
  return content.map(asRecord).filter((b): b is Record<string, unknown> => b !== null);
}

function sumModelCost(modelUsage: unknown): number | null {
  const models = asRecord(modelUsage);
  if (!models) return null;
  let sum: number | null = null;
  for (const entry of Object.values(models)) {
    const cost = asRecord(entry)?.costUSD;
    if (typeof cost === 'number') sum = (sum ?? 0) + cost;
  }
  return sum;
}
