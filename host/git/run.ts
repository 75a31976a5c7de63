import { spawn } from 'node:child_process';

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
const REPO_LOCATION_VARIABLES = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_COMMON_DIR',
  'GIT_NAMESPACE',
  'GIT_PREFIX',
];

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
