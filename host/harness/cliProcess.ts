import { spawn, type ChildProcess } from 'node:child_process';

/**
 * Runs a vendor agent CLI (Claude Code, Codex) for one seat turn: its own process group, stdout
 * read line by line, stderr kept as a bounded tail, and an abort that ends the whole group
 * (SIGTERM, then SIGKILL after a grace period). Whatever the CLI left behind in its group when
 * it exits (a stray MCP stdio server, a shell) is killed too, and a host that exits kills every
 * group still running. Used by claudeCode.ts and codex.ts.
 */

/** A CLI's own words in a TurnResult are cut to this many characters. */
export const MESSAGE_MAX_CHARS = 2000;
/** Bytes of stderr kept (the tail). */
const STDERR_TAIL_BYTES = 16 * 1024;
/** A prompt longer than this goes through stdin (Linux refuses a single argument over 128 KiB). */
export const ARGV_PROMPT_MAX_BYTES = 96 * 1024;
const DEFAULT_GRACE_MS = 3000;
/** After the leader exits, how long its pipes may stay open (held by an escaped grandchild). */
const CLOSE_AFTER_EXIT_MS = 5000;

export interface CliRun {
  bin: string;
  args: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
  /** Each complete stdout line (without its newline). A throw here is ignored. */
  onLine(line: string): void;
  /** Written to stdin, then stdin is closed. Omitted: stdin is /dev/null. */
  stdin?: string;
  /** SIGTERM to SIGKILL, in milliseconds (default 3000). */
  graceMs?: number;
}

export interface CliExit {
  /** The leader's exit code (null when killed by a signal or never started). */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The turn's signal fired while the CLI ran (or before it started). */
  aborted: boolean;
  /** Why the CLI could not be started (ENOENT, EACCES, …), else null. */
  spawnError: string | null;
  /** The last bytes the CLI wrote to stderr. */
  stderr: string;
  /** The leader's pid (= its process group id), null when it never started. */
  pid: number | null;
}

const liveGroups = new Set<number>();
let exitHooked = false;

function hookExit(): void {
  if (exitHooked) return;
  exitHooked = true;
  process.on('exit', () => {
    for (const pgid of liveGroups) killGroup(pgid, 'SIGKILL');
  });
}

function killGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

export function runCli(run: CliRun): Promise<CliExit> {
  return new Promise((resolve) => {
    if (run.signal.aborted) {
      resolve({ code: null, signal: null, aborted: true, spawnError: null, stderr: '', pid: null });
      return;
    }
    hookExit();
    let child: ChildProcess;
    try {
      child = spawn(run.bin, [...run.args], {
        cwd: run.cwd,
        env: run.env,
        stdio: [run.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
        // Its own process group (setsid), so an abort reaches everything the CLI started.
        detached: true,
        windowsHide: true,
      });
    } catch (error) {
      resolve({ code: null, signal: null, aborted: false, spawnError: (error as Error).message, stderr: '', pid: null });
      return;
    }
    const pid = child.pid ?? null;
    if (pid !== null) liveGroups.add(pid);

    let aborted = false;
    let spawnError: string | null = null;
    let stderr = '';
    let buffer = '';
    let exitCode: number | null = null;
    let exitSignal: NodeJS.Signals | null = null;
    let killTimer: NodeJS.Timeout | null = null;
    let closeTimer: NodeJS.Timeout | null = null;
    let done = false;

    const emit = (line: string) => {
      try {
        run.onLine(line);
      } catch {
        // A parser's fault must not take the turn down with it.
      }
    };

    const finish = () => {
      if (done) return;
      done = true;
      run.signal.removeEventListener('abort', onAbort);
      if (killTimer) clearTimeout(killTimer);
      if (closeTimer) clearTimeout(closeTimer);
      if (pid !== null) {
        killGroup(pid, 'SIGKILL');
        liveGroups.delete(pid);
      }
      if (buffer.length > 0) emit(buffer.replace(/\r$/, ''));
      buffer = '';
      resolve({ code: exitCode, signal: exitSignal, aborted, spawnError, stderr, pid });
    };

    const onAbort = () => {
      if (done || pid === null) return;
      aborted = true;
      killGroup(pid, 'SIGTERM');
      killTimer = setTimeout(() => killGroup(pid, 'SIGKILL'), run.graceMs ?? DEFAULT_GRACE_MS);
    };
    run.signal.addEventListener('abort', onAbort, { once: true });

    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      buffer += chunk;
      let nl = buffer.indexOf('\n');
      while (nl >= 0) {
        const line = buffer.slice(0, nl).replace(/\r$/, '');
        buffer = buffer.slice(nl + 1);
        if (line.length > 0) emit(line);
        nl = buffer.indexOf('\n');
      }
    });
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      stderr += chunk;
      if (stderr.length > STDERR_TAIL_BYTES * 2) stderr = stderr.slice(-STDERR_TAIL_BYTES);
    });
    if (run.stdin !== undefined && child.stdin) {
      child.stdin.on('error', () => undefined); // EPIPE when the CLI exits without reading it
      child.stdin.end(run.stdin);
    }

    child.on('error', (error) => {
      spawnError ??= error.message;
      // A process that never started emits no close of its own on every platform.
      if (child.pid === undefined) finish();
    });
    child.on('exit', (code, signal) => {
      exitCode = code;
      exitSignal = signal;
      // Whatever the CLI left in its group is a straggler now.
      if (pid !== null) killGroup(pid, 'SIGKILL');
      closeTimer = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
        finish();
      }, CLOSE_AFTER_EXIT_MS);
    });
    child.on('close', () => {
      if (stderr.length > STDERR_TAIL_BYTES) stderr = stderr.slice(-STDERR_TAIL_BYTES);
      finish();
    });
  });
}

/** Cuts a CLI's text to `max` characters, marking the cut. */
export function bounded(text: string, max = MESSAGE_MAX_CHARS): string {
  const trimmed = text.trim();
  return trimmed.length <= max ? trimmed : `${trimmed.slice(0, max)}… [${trimmed.length - max} more characters]`;
}

/** The last lines of stderr worth quoting: without blank lines, cut from the front. */
export function stderrTail(stderr: string, max = MESSAGE_MAX_CHARS): string {
  const text = stderr
    .split(/\r?\n/)
    .filter((l) => l.trim().length > 0)
    .join('\n');
  return text.length <= max ? text : `…${text.slice(-max)}`;
}

/** How a CLI ended, in words, for a failure message. */
export function exitWords(exit: CliExit): string {
  if (exit.signal) return `was killed by ${exit.signal}`;
  return `exited with code ${exit.code ?? 'unknown'}`;
}

/** A JSON object line, or null (a CLI may print non-JSON lines). */
export function parseJsonLine(line: string): Record<string, unknown> | null {
  if (!line.startsWith('{')) return null;
  try {
    const value = JSON.parse(line) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

export function asRecord(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

export function asCount(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : null;
}

/**
 * Per-seat conversation state a CLI harness keeps between a seat's first turn and its follow-ups.
 * Keyed by seat id and the seat's MCP endpoint (each seat run has its own loopback server), so
 * two generations reusing one harness never share a thread. Bounded: the oldest entries go.
 */
export class ThreadBook<T> {
  private readonly entries = new Map<string, T>();
  constructor(private readonly max = 128) {}

  static keyOf(seatId: string, mcpUrl: string | null): string {
    return `${seatId}\u0000${mcpUrl ?? ''}`;
  }

  get(key: string): T | undefined {
    return this.entries.get(key);
  }

  set(key: string, value: T): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    while (this.entries.size > this.max) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }
}
