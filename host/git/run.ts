import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, read, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Runs git with an argv array (never a shell string). Output is collected as bytes, because
 * diffs and blobs are not guaranteed to be UTF-8 and paths may contain any byte.
 */
export interface GitRunOptions {
  cwd: string;
  /** Extra environment (e.g. GIT_INDEX_FILE for a temporary index). */
  env?: Record<string, string>;
  /** Bytes written to git's stdin, then closed. */
  input?: string | Buffer;
  /** Read at most this many stdout bytes, then stop git (used for binary sniffing). */
  maxStdoutBytes?: number;
  /** Receive stdout as it arrives instead of collecting it (result.stdout is then empty). */
  onStdout?: (chunk: Buffer) => void;
}

export interface GitRunResult {
  code: number;
  stdout: Buffer;
  stderr: string;
  /** True when maxStdoutBytes cut the output short. */
  cut: boolean;
}

/** Variables that would point git at another repository or index than the one we name. */
const REPO_LOCATION_VARIABLES = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_COMMON_DIR', 'GIT_NAMESPACE', 'GIT_PREFIX'];

export function gitEnvironment(extra?: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of REPO_LOCATION_VARIABLES) delete env[name];
  // Never prompt (credentials, editors) from a background process; stable English messages.
  env.GIT_TERMINAL_PROMPT = '0';
  env.GIT_OPTIONAL_LOCKS = '0';
  env.LC_ALL = 'C';
  return { ...env, ...extra };
}

export function runGit(args: readonly string[], options: GitRunOptions): Promise<GitRunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, {
      cwd: options.cwd,
      env: gitEnvironment(options.env),
      stdio: ['pipe', 'pipe', 'pipe'],
      windowsHide: true,
    });
    const chunks: Buffer[] = [];
    let size = 0;
    let cut = false;
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      if (cut) return;
      if (options.onStdout) {
        options.onStdout(chunk);
        return;
      }
      chunks.push(chunk);
      size += chunk.length;
      if (options.maxStdoutBytes !== undefined && size >= options.maxStdoutBytes) {
        cut = true;
        child.kill('SIGTERM');
      }
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      if (stderr.length < 64 * 1024) stderr += chunk;
    });
    child.on('error', reject);
    child.stdin.on('error', () => {
      /* git may exit before reading all input; its exit code says what happened */
    });
    child.on('close', (code) => {
      resolve({ code: cut ? 0 : (code ?? 1), stdout: Buffer.concat(chunks), stderr, cut });
    });
    if (options.input !== undefined) child.stdin.end(options.input);
    else child.stdin.end();
  });
}

/** How much of a spooled output is read at a time. */
const SPOOL_READ_BYTES = 1 << 20;
/** How long the reader waits for more output before it looks again (git has not exited yet). */
const SPOOL_POLL_MS = 5;

/**
 * Runs git with its stdout going to a temp file (removed from its directory at once, so nothing
 * is left behind) and hands the output to `onStdout` as it is read back behind git. Through a
 * pipe, git stops each time 64 KiB are unread, and a busy consumer (the diff parser) with it: on
 * a loaded machine every stop waits for both processes to be scheduled again, and a large diff
 * made hundreds of them. A file never fills, so git runs at its own speed and the reader follows.
 * The output is handed on in chunks of at most 1 MiB, each a buffer of its own.
 */
export async function runGitSpooled(args: readonly string[], options: { cwd: string; onStdout: (chunk: Buffer) => void }): Promise<{ code: number; stderr: string }> {
  let dir: string;
  let writeFd: number | null = null;
  let readFd: number | null = null;
  try {
    dir = mkdtempSync(join(tmpdir(), 'rennet-git-'));
  } catch {
    // No temp directory to spool in (full or read-only): the pipe, slower on a busy machine, still works.
    return runGit(args, options);
  }
  const file = join(dir, 'stdout');
  try {
    writeFd = openSync(file, 'w', 0o600);
    readFd = openSync(file, 'r');
    try {
      // Both descriptors stay valid without the name (Windows refuses while open: removed below).
      unlinkSync(file);
    } catch {
      // removed with its directory at the end
    }
    const child = spawn('git', args, { cwd: options.cwd, env: gitEnvironment(), stdio: ['ignore', writeFd, 'pipe'], windowsHide: true });
    // The child holds its own copy of the descriptor.
    closeSync(writeFd);
    writeFd = null;
    let stderr = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      if (stderr.length < 64 * 1024) stderr += chunk;
    });
    // Set by the child's events (an object: the loop below reads what they wrote since).
    const ended: { code: number | null; error?: Error; wake: (() => void) | null } = { code: null, wake: null };
    child.once('close', (code) => {
      ended.code ??= code ?? 1;
      ended.wake?.();
    });
    child.once('error', (error) => {
      ended.error = error;
      ended.code ??= 1;
      ended.wake?.();
    });
    const fd = readFd;
    let position = 0;
    const readNext = () =>
      new Promise<Buffer>((done, fail) => {
        const buffer = Buffer.allocUnsafe(SPOOL_READ_BYTES);
        read(fd, buffer, 0, buffer.length, position, (error, bytes) => (error ? fail(error) : done(buffer.subarray(0, bytes))));
      });
    try {
      for (;;) {
        // Read after seeing the exit: what git wrote before exiting is in the file by then.
        const exited = ended.code !== null;
        const chunk = await readNext();
        if (chunk.length > 0) {
          position += chunk.length;
          options.onStdout(chunk);
          continue;
        }
        if (exited) break;
        await new Promise<void>((resume) => {
          const timer = setTimeout(() => resume(), SPOOL_POLL_MS);
          ended.wake = () => {
            clearTimeout(timer);
            resume();
          };
        });
        ended.wake = null;
      }
    } catch (error) {
      child.kill('SIGTERM');
      throw error;
    }
    if (ended.error !== undefined) throw ended.error;
    return { code: ended.code ?? 1, stderr };
  } finally {
    for (const fd of [writeFd, readFd]) {
      if (fd !== null) closeSync(fd);
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs git and returns trimmed stdout as text, or throws GitError with git's own message. */
export async function gitText(args: readonly string[], options: GitRunOptions): Promise<string> {
  const result = await runGit(args, options);
  if (result.code !== 0) throw new GitError(args, result.code, result.stderr);
  return result.stdout.toString('utf8').replace(/\n$/, '');
}

export class GitError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly exitCode: number,
    readonly stderr: string,
  ) {
    super(`git ${args[0] ?? ''} failed (${exitCode}): ${stderr.trim() || 'no message'}`);
    this.name = 'GitError';
  }
}
