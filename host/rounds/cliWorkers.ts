import { resolve } from 'node:path';
import { err, ok, rennetError, type Result } from '../../protocol/result';
import type { RoundWorker } from '../../protocol/rounds';
import { gitText } from '../git/run';
import { ClaudeStream } from '../harness/claudeCode';
import { ARGV_PROMPT_MAX_BYTES, asRecord, bounded, exitWords, parseJsonLine, runCli, stderrTail } from '../harness/cliProcess';
import { CodexStream, codexStderrReason } from '../harness/codex';
import { discoverCliHarnesses, version, type CliHarnessKind } from '../harness/discover';
import type { HarnessEvent } from '../pipeline/ports';
import type { WorkerPort } from './runner';

/**
 * The round worker on the user's own agent CLI: ONE non-interactive `claude -p` or `codex exec`
 * run in the bound workspace, which reads the work order, edits files and commits with git. It is
 * the one seat that writes (the lens seats stay read-only), so unlike the lens harnesses
 * (host/harness/claudeCode.ts, codex.ts) it gets the edit and shell tools — and no Rennet MCP
 * server: its only input is the work order file the prompt names.
 *
 * Claude Code: built-ins Read, Grep, Glob, Edit, Write, Bash; `--permission-mode acceptEdits`
 * (edits inside the workspace need no approval) and `--allowedTools` pre-approving the git
 * commands a worker needs and the check commands a work order can name (CLAUDE_WORKER_BASH).
 * Anything else it tries is refused at once (`-p` never prompts: measured, "This Bash command
 * contains multiple operations. The following part requires approval: git push origin main"),
 * listed in the result's `permission_denials`, and named in the turn's message. No MCP server at
 * all (`--strict-mcp-config` with no config), the user's own settings only (`--setting-sources
 * user`: the repository's `.claude/` settings and hooks never load).
 *
 * Codex: `-s workspace-write` plus the repository's git directories as writable roots
 * (`--add-dir`): workspace-write alone keeps `.git` read-only (measured: "Unable to create
 * '…/.git/index.lock': Read-only file system"), so a worker could not commit. exec's approval
 * policy is `never`: a command the sandbox refuses fails, nothing waits. No Rennet MCP server;
 * the repository's AGENTS.md is not instructions (`project_doc_max_bytes=0`), as for the lenses.
 *
 * Both: the caller's signal is the turn's only deadline (abort ends the CLI's whole process group,
 * host/harness/cliProcess.ts); the environment is inherited (the user's login, HOME, CODEX_HOME)
 * with `options.env` added, git's repository-location variables removed (the worker commits in
 * `root`, nowhere else) and git's editor and credential prompts turned off (nothing can wait for a
 * terminal).
 */

/** The built-in tools the Claude Code worker is offered (`--tools`). */
export const CLAUDE_WORKER_TOOLS = 'Read,Grep,Glob,Edit,Write,Bash';

/**
 * The shell commands pre-approved for the Claude Code worker (each `Bash(<prefix>:*)`): the git it
 * needs to look at and commit its work, and the check commands a work order can name
 * (host/rounds/workOrder.ts `discoverCheckCommand`). Not push, reset, rebase or checkout: the
 * order says not to push nor rewrite commits, and the permission list holds it to that.
 */
export const CLAUDE_WORKER_BASH: readonly string[] = [
  'git status',
  'git diff',
  'git log',
  'git show',
  'git add',
  'git rm',
  'git mv',
  'git restore',
  'git commit',
  'npm test',
  'pnpm test',
  'yarn test',
  'make test',
  'cargo test',
  'go test',
  'pytest',
];

export interface CliWorkerOptions {
  /** The executable (default `claude` / `codex`, looked up on PATH). */
  bin?: string;
  /** Recorded as `worker.version` (a round pins it); see workerVersion. Default null. */
  version?: string | null;
  /** `--model` / `-m`; omitted: the user's own default. */
  model?: string;
  /** Added to (never replacing) the inherited environment; `undefined` removes a variable. */
  env?: NodeJS.ProcessEnv;
  /** SIGTERM to SIGKILL on abort, in milliseconds (default 3000). */
  graceMs?: number;
}

type WorkerTurn = Awaited<ReturnType<WorkerPort['run']>>;

/** The exact argv (after the executable) of the Claude Code worker's turn. `prompt` null: it goes through stdin. */
export function claudeWorkerArgs(input: { prompt: string | null; model: string | null }): string[] {
  return [
    '-p',
    '--output-format',
    'stream-json',
    '--verbose',
    // No MCP server at all: no Rennet seat server, none of the user's, none of the repository's .mcp.json.
    '--strict-mcp-config',
    // The user's own settings only: the repository's .claude/settings*.json (hooks, permissions) do not load.
    '--setting-sources',
    'user',
    '--tools',
    CLAUDE_WORKER_TOOLS,
    // Edits inside the workspace need no approval; the shell only for the listed commands.
    '--permission-mode',
    'acceptEdits',
    '--allowedTools',
    CLAUDE_WORKER_BASH.map((command) => `Bash(${command}:*)`).join(','),
    ...(input.model ? ['--model', input.model] : []),
    // `--` ends the options: `--tools` and `--allowedTools` are variadic and would swallow the prompt.
    ...(input.prompt === null ? [] : ['--', input.prompt]),
  ];
}

/** The exact argv (after the executable) of the Codex worker's turn. `writableGitDirs`: absolute. */
export function codexWorkerArgs(input: { prompt: string | null; model: string | null; writableGitDirs: readonly string[] }): string[] {
  return [
    'exec',
    '--json',
    '--skip-git-repo-check',
    '-s',
    'workspace-write',
    // workspace-write keeps `.git` read-only; a commit writes there (and, in a linked worktree, in the main repository's git directory).
    ...input.writableGitDirs.flatMap((dir) => ['--add-dir', dir]),
    ...(input.model ? ['-m', input.model] : []),
    // No AGENTS.md (or other project doc) from the repository becomes instructions: the work order is the task.
    '-c',
    'project_doc_max_bytes=0',
    '--',
    input.prompt ?? '-',
  ];
}

/** Git's variables that would point a commit at another repository, index or work tree than `root`'s (as host/git/run.ts removes them). */
const GIT_LOCATION_VARIABLES = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_COMMON_DIR', 'GIT_NAMESPACE', 'GIT_PREFIX'];

/** The worker's environment: inherited, `extra` added, git pointed at nothing but the workspace and never waiting for a terminal. */
export function workerEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const name of GIT_LOCATION_VARIABLES) env[name] = undefined;
  // A `git commit` without -m would open an editor and wait for ever; with `true` it ends ("empty commit message").
  env.GIT_EDITOR = 'true';
  env.GIT_TERMINAL_PROMPT = '0';
  return env;
}

/** The Claude Code worker: one `claude -p` turn in `root` (claudeWorkerArgs). */
export function claudeCodeWorker(options: CliWorkerOptions = {}): WorkerPort {
  const bin = options.bin ?? 'claude';
  const worker: RoundWorker = { kind: 'claude-code', version: options.version ?? null };
  return {
    worker,
    async run({ root, prompt, signal }) {
      if (signal.aborted) return aborted();
      const viaStdin = Buffer.byteLength(prompt, 'utf8') > ARGV_PROMPT_MAX_BYTES;
      const texts: string[] = [];
      const stream = new ClaudeStream((event) => collectText(event, texts));
      const denials: string[] = [];
      const exit = await runCli({
        bin,
        args: claudeWorkerArgs({ prompt: viaStdin ? null : prompt, model: options.model ?? null }),
        cwd: root,
        env: workerEnv(options.env),
        signal,
        onLine: (line) => {
          stream.line(line);
          denials.push(...claudeDenials(line));
        },
        ...(viaStdin ? { stdin: prompt } : {}),
        ...(options.graceMs === undefined ? {} : { graceMs: options.graceMs }),
      });
      if (exit.aborted || signal.aborted) return aborted();
      if (exit.spawnError !== null) return failed(`could not start Claude Code (${bin}): ${exit.spawnError}`);
      const result = stream.result;
      if (result && (result.isError || result.subtype !== 'success')) return failed(`Claude Code: ${result.text ?? result.subtype}${denialWords(denials)}`);
      if (!result) {
        const said = stderrTail(exit.stderr);
        return failed(`Claude Code ${exitWords(exit)} before its result${said ? `: ${said}` : ''}`);
      }
      if (exit.code !== 0) {
        const said = stderrTail(exit.stderr);
        return failed(`Claude Code ${exitWords(exit)}${said ? `: ${said}` : ''}`);
      }
      return done(result.text ?? texts.at(-1) ?? null, denials);
    },
  };
}

/** The Codex worker: one `codex exec` turn in `root` (codexWorkerArgs). */
export function codexWorker(options: CliWorkerOptions = {}): WorkerPort {
  const bin = options.bin ?? 'codex';
  const worker: RoundWorker = { kind: 'codex', version: options.version ?? null };
  return {
    worker,
    async run({ root, prompt, signal }) {
      if (signal.aborted) return aborted();
      const dirs = await writableGitDirs(root);
      if (!dirs.ok) return failed(dirs.error.message);
      const viaStdin = Buffer.byteLength(prompt, 'utf8') > ARGV_PROMPT_MAX_BYTES;
      const texts: string[] = [];
      const stream = new CodexStream((event) => collectText(event, texts));
      const exit = await runCli({
        bin,
        args: codexWorkerArgs({ prompt: viaStdin ? null : prompt, model: options.model ?? null, writableGitDirs: dirs.value }),
        cwd: root,
        env: workerEnv(options.env),
        signal,
        onLine: (line) => stream.line(line),
        ...(viaStdin ? { stdin: prompt } : {}),
        ...(options.graceMs === undefined ? {} : { graceMs: options.graceMs }),
      });
      if (exit.aborted || signal.aborted) return aborted();
      if (exit.spawnError !== null) return failed(`could not start Codex (${bin}): ${exit.spawnError}`);
      if (stream.failure !== null) return failed(`Codex: ${stream.failure}`);
      if (!stream.completed || exit.code !== 0) {
        const said = stream.lastError ?? codexStderrReason(exit.stderr);
        return failed(`Codex ${exitWords(exit)}${stream.completed ? '' : ' before the turn completed'}${said ? `: ${said}` : ''}`);
      }
      return done(texts.at(-1) ?? null, []);
    },
  };
}

/**
 * The git directories a commit in `root` writes, absolute: its git directory and, for a linked
 * worktree, the main repository's common directory (objects, refs). Both are named even when one
 * lies inside the other: Codex makes a linked worktree's own git directory (the one its `.git`
 * file points at) read-only unless it is named itself (measured: "Unable to create
 * '…/.git/worktrees/wt/index.lock': Read-only file system" with only the common directory added).
 */
export async function writableGitDirs(root: string): Promise<Result<string[]>> {
  let found: string[];
  try {
    const [gitDir, commonDir] = await Promise.all([gitText(['rev-parse', '--git-dir'], { cwd: root }), gitText(['rev-parse', '--git-common-dir'], { cwd: root })]);
    found = [resolve(root, gitDir), resolve(root, commonDir)];
  } catch (error) {
    return err(rennetError('not-a-repository', `the worker's workspace ${root} is not a git repository it can commit in: ${(error as Error).message}`));
  }
  return ok([...new Set(found)]);
}

/** The CLI's version (`--version`, the first x.y.z it prints), or why it did not answer. */
export async function workerVersion(bin: string, options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<Result<string>> {
  const answer = await version(bin, { ...process.env, ...options.env }, options.timeoutMs ?? 10_000);
  return answer.ok ? ok(answer.version) : err(rennetError('invalid-request', answer.reason));
}

const INSTALL: Record<CliHarnessKind, { name: string; variable: string; install: string }> = {
  'claude-code': { name: 'Claude Code', variable: 'RENNET_CLAUDE_BIN', install: 'npm install -g @anthropic-ai/claude-code' },
  codex: { name: 'Codex', variable: 'RENNET_CODEX_BIN', install: 'npm install -g @openai/codex' },
};

/**
 * The worker for `--worker claude-code|codex`: the CLI found as the lens harnesses find it
 * (RENNET_CLAUDE_BIN / RENNET_CODEX_BIN, else PATH; host/harness/discover.ts) and its version
 * recorded. A missing CLI is refused, naming what to install.
 */
export async function cliWorker(kind: CliHarnessKind, options: { model?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<Result<WorkerPort>> {
  const env = { ...process.env, ...options.env };
  const found = (await discoverCliHarnesses(env, options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs })).find((cli) => cli.kind === kind);
  const words = INSTALL[kind];
  if (!found || !found.available) {
    return err(
      rennetError(
        'invalid-request',
        `the ${kind} worker needs ${words.name}, which is not available here (${found?.reason ?? 'not found'}): install it (${words.install}) and log in, or point ${words.variable} at its executable`,
      ),
    );
  }
  const port = { bin: found.bin, version: found.version, ...(options.model ? { model: options.model } : {}), ...(options.env ? { env: options.env } : {}) };
  return ok(kind === 'claude-code' ? claudeCodeWorker(port) : codexWorker(port));
}

// ─── Helpers ─────────────────────────────────────────────────────────────────────────────────

function collectText(event: HarnessEvent, texts: string[]): void {
  if (event.type === 'text') texts.push(event.text);
}

/** The shell commands (or other tools) Claude Code refused in this turn: the result line's `permission_denials`. */
function claudeDenials(line: string): string[] {
  const msg = parseJsonLine(line);
  if (!msg || msg.type !== 'result' || !Array.isArray(msg.permission_denials)) return [];
  return msg.permission_denials.map((d) => {
    const denial = asRecord(d);
    const tool = typeof denial?.tool_name === 'string' ? denial.tool_name : 'a tool';
    const input = asRecord(denial?.tool_input);
    const what = typeof input?.command === 'string' ? input.command : typeof input?.file_path === 'string' ? input.file_path : null;
    return what ? `${tool}: ${what}` : tool;
  });
}

function denialWords(denials: readonly string[]): string {
  if (denials.length === 0) return '';
  return ` (refused as not pre-approved: ${denials.map((d) => bounded(d, 200)).join('; ')})`;
}

function done(text: string | null, denials: readonly string[]): WorkerTurn {
  const said = text?.trim() ?? '';
  const message = `${said}${denialWords(denials)}`.trim();
  return { outcome: 'done', message: message ? bounded(message) : null };
}

function failed(message: string): WorkerTurn {
  return { outcome: 'failed', message: bounded(message) };
}

function aborted(): WorkerTurn {
  return { outcome: 'aborted', message: 'the worker turn was cancelled' };
}
