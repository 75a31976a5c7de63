import { lstatSync, mkdirSync, realpathSync, unlinkSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';
import type { z } from 'zod';
import { err, ok, rennetError, type Result } from '../../protocol/result';
import { ScriptedWorkerFile } from '../../protocol/rounds';
import { checkRepoRelativePath } from '../capture/paths';
import { openRepo } from '../capture/repo';
import { GitError, gitText, runGit } from '../git/run';

/**
 * The scripted worker: a file of edits and commits applied in the bound workspace in order, as a
 * worker's turn would. For tests and demos; never presented as a model. It stops at the first
 * failing step and says which; what it already wrote stays (a real worker's partial work stays too).
 * A `wait` step makes the turn take time (the host stopped or the round cancelled mid-turn).
 */

export const SCRIPTED_WORKER_IDENTITY = { name: 'Rennet Scripted Worker', email: 'scripted-worker@localhost' } as const;

export interface ScriptedWorkerOptions {
  /** Checked between steps: once aborted, no further step starts (and a `wait` ends at once). */
  signal?: AbortSignal;
  /** The commits' author and committer (default SCRIPTED_WORKER_IDENTITY). */
  identity?: { name: string; email: string };
}

export interface ScriptedWorkerRun {
  /** Steps applied (all of them, on success). */
  steps: number;
  /** The commits made, in order. */
  commits: string[];
}

type Step = ScriptedWorkerFile['steps'][number];

/** Reads and validates a scripted worker file (JSON). */
export async function loadScriptedWorkerFile(path: string): Promise<Result<ScriptedWorkerFile>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    return err(rennetError('not-found', `could not read the scripted worker file ${path}: ${(error as Error).message}`, { path }));
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return err(rennetError('invalid-request', `the scripted worker file ${path} is not JSON: ${(error as Error).message}`, { path }));
  }
  const file = parseScriptedWorkerFile(parsed);
  if (!file.ok) return err(rennetError('invalid-request', `${path}: ${file.error.message}`, { path }));
  return file;
}

/** Validates a scripted worker script, naming its first problem. */
export function parseScriptedWorkerFile(script: unknown): Result<ScriptedWorkerFile> {
  const parsed = ScriptedWorkerFile.safeParse(script);
  if (parsed.success) return ok(parsed.data);
  return err(rennetError('invalid-request', `the scripted worker file is invalid: ${firstProblem(parsed.error.issues, script)}`));
}

const STEP_KINDS = ['write', 'delete', 'commit', 'wait'] as const;

function firstProblem(issues: z.ZodError['issues'], script: unknown): string {
  const issue = issues[0];
  if (!issue) return 'unknown problem';
  if (issue.code === 'invalid_union' && issue.path.length === 2 && issue.path[0] === 'steps' && typeof issue.path[1] === 'number') {
    // A step matched none of the shapes: say what a step is, or pick the branch its key names.
    const index = issue.path[1];
    const step = (script as { steps: unknown[] }).steps[index];
    const where = `steps[${index}]`;
    if (typeof step !== 'object' || step === null || Array.isArray(step)) return `${where}: a step is an object with one of write, delete, commit, wait`;
    const keys = Object.keys(step);
    const kind = STEP_KINDS.findIndex((k) => keys.length === 1 && keys[0] === k);
    if (kind < 0) return `${where}: a step has exactly one key, write, delete, commit or wait (it has ${keys.length === 0 ? 'none' : keys.map((k) => JSON.stringify(k)).join(', ')})`;
    const branch = issue.errors[kind]?.[0];
    if (branch) return `${where}${formatPath(branch.path)}: ${branch.message}`;
  }
  return `${formatPath(issue.path).replace(/^\./, '') || '(the file)'}: ${issue.message}`;
}

function formatPath(path: readonly PropertyKey[]): string {
  return path.map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`)).join('');
}

/**
 * Applies a script's steps in order in the workspace at `root`: `write` (creates parent
 * directories), `delete` (a file or symlink; a missing one is an error), `commit` (`git add --all`
 * then a commit with the scripted worker's identity, no pre-commit or commit-msg hook, no signing;
 * nothing staged is an error), `wait` (pauses that many milliseconds; an abort ends the wait and
 * the run, as stopped during that step). Paths are repo-relative, never inside `.git`, and never reach outside the workspace
 * through a symlink. Stops at the first failing step and names it.
 */
export async function runScriptedWorker(root: string, script: unknown, options: ScriptedWorkerOptions = {}): Promise<Result<ScriptedWorkerRun>> {
  const file = parseScriptedWorkerFile(script);
  if (!file.ok) return file;
  const repo = await openRepo(root);
  if (!repo.ok) return repo;
  if (repo.value.bare) return err(rennetError('bare-working-tree', `${repo.value.root} is a bare repository; the scripted worker needs a working tree`));
  const top = repo.value.root;
  let gitDir: string;
  try {
    gitDir = realpathSync(await gitText(['rev-parse', '--absolute-git-dir'], { cwd: top }));
  } catch (error) {
    return err(rennetError('git-failed', `could not find the git directory of ${top}: ${(error as Error).message}`));
  }
  const identity = options.identity ?? SCRIPTED_WORKER_IDENTITY;
  const workspace = { top, gitDir };
  const commits: string[] = [];

  const steps = file.value.steps;
  for (let index = 0; index < steps.length; index++) {
    const step = steps[index] as Step;
    const name = `step ${index + 1} (${describe(step)})`;
    if (options.signal?.aborted) {
      return err(rennetError('invalid-request', `the scripted worker was stopped before ${name}; ${index} of ${steps.length} steps applied`, { step: String(index + 1), reason: 'aborted' }));
    }
    const applied = await applyStep(workspace, step, identity, options.signal);
    if (!applied.ok) {
      if (applied.error.detail?.reason === 'aborted') {
        return err(rennetError('invalid-request', `the scripted worker was stopped during ${name}; ${index} of ${steps.length} steps applied`, { step: String(index + 1), reason: 'aborted' }));
      }
      return err(rennetError(applied.error.code, `${name} failed: ${applied.error.message}`, { ...applied.error.detail, step: String(index + 1) }));
    }
    if (applied.value) commits.push(applied.value);
  }
  return ok({ steps: steps.length, commits });
}

function describe(step: Step): string {
  if ('write' in step) return `write ${step.write.path}`;
  if ('delete' in step) return `delete ${step.delete}`;
  if ('wait' in step) return `wait ${step.wait} ms`;
  return `commit "${step.commit}"`;
}

interface Workspace {
  /** The work tree's top level (canonical). */
  top: string;
  /** The git directory (canonical). */
  gitDir: string;
}

/** Applies one step; a commit step answers its commit id, the others null. */
async function applyStep(workspace: Workspace, step: Step, identity: { name: string; email: string }, signal?: AbortSignal): Promise<Result<string | null>> {
  if ('wait' in step) return pause(step.wait, signal);
  if ('write' in step) {
    const target = checkWorkspacePath(workspace, step.write.path, 'write');
    if (!target.ok) return target;
    try {
      mkdirSync(dirname(target.value), { recursive: true });
      writeFileSync(target.value, step.write.content, 'utf8');
    } catch (error) {
      return err(rennetError('invalid-request', `could not write ${step.write.path}: ${(error as Error).message}`, { path: step.write.path }));
    }
    return ok(null);
  }
  if ('delete' in step) {
    const target = checkWorkspacePath(workspace, step.delete, 'delete');
    if (!target.ok) return target;
    const stat = lstatOrNull(target.value);
    if (!stat) return err(rennetError('not-found', `${step.delete} does not exist`, { path: step.delete }));
    if (stat.isDirectory()) return err(rennetError('invalid-path', `${step.delete} is a directory; delete removes a file`, { path: step.delete }));
    try {
      unlinkSync(target.value);
    } catch (error) {
      return err(rennetError('invalid-request', `could not delete ${step.delete}: ${(error as Error).message}`, { path: step.delete }));
    }
    return ok(null);
  }
  return commitAll(workspace, step.commit, identity);
}

/** Waits `ms` milliseconds; an abort ends the wait early, as an error whose reason is `aborted`. */
function pause(ms: number, signal?: AbortSignal): Promise<Result<null>> {
  return new Promise((resolve) => {
    const stopped = () => {
      clearTimeout(timer);
      resolve(err(rennetError('invalid-request', 'stopped while waiting', { reason: 'aborted' })));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', stopped);
      resolve(ok(null));
    }, ms);
    if (signal?.aborted) stopped();
    else signal?.addEventListener('abort', stopped, { once: true });
  });
}

async function commitAll(workspace: Workspace, message: string, identity: { name: string; email: string }): Promise<Result<string>> {
  const cwd = workspace.top;
  try {
    await gitText(['add', '--all', '--', '.'], { cwd });
    const staged = await runGit(['diff', '--cached', '--quiet', '--no-ext-diff', '--ignore-submodules=none'], { cwd });
    if (staged.code === 0) return err(rennetError('empty-change', 'nothing to commit: no change is staged'));
    if (staged.code !== 1) throw new GitError(['diff'], staged.code, staged.stderr);
    const env = {
      GIT_AUTHOR_NAME: identity.name,
      GIT_AUTHOR_EMAIL: identity.email,
      GIT_COMMITTER_NAME: identity.name,
      GIT_COMMITTER_EMAIL: identity.email,
    };
    await gitText(['commit', '--quiet', '--no-gpg-sign', '--no-verify', '-m', message], { cwd, env });
    return ok(await gitText(['rev-parse', 'HEAD'], { cwd }));
  } catch (error) {
    if (error instanceof GitError) return err(rennetError('git-failed', error.message));
    throw error;
  }
}

/**
 * The absolute path a step may touch: repo-relative, no `.git` segment, and every existing
 * directory on the way (and, for a write, an existing file itself) resolving inside the work tree
 * and outside the git directory. A delete removes a final symlink itself, so its target is not
 * followed.
 */
function checkWorkspacePath(workspace: Workspace, path: string, action: 'write' | 'delete'): Result<string> {
  const checked = checkRepoRelativePath(path);
  if (!checked.ok) return checked;
  const refuse = (why: string) => err(rennetError('invalid-path', `"${path}" is outside what the worker may ${action}: ${why}`, { path }));
  const segments = path.split('/');
  if (segments.some((segment) => segment.toLowerCase() === '.git')) return refuse('it is inside a .git directory');

  const inside = (resolved: string) => isWithin(workspace.top, resolved) && !isWithin(workspace.gitDir, resolved);
  let current = workspace.top;
  // Parents first: the first one that does not exist yet will be created as a real directory.
  for (let i = 0; i < segments.length - 1; i++) {
    current = join(current, segments[i] as string);
    const stat = lstatOrNull(current);
    if (!stat) break;
    const resolved = realpathOrNull(current);
    if (resolved === null || !inside(resolved)) return refuse(`${segments.slice(0, i + 1).join('/')} resolves outside the workspace`);
  }
  const target = join(workspace.top, ...segments);
  if (action === 'write' && lstatOrNull(target)?.isSymbolicLink()) {
    const resolved = realpathOrNull(target);
    if (resolved === null || !inside(resolved)) return refuse('it is a symlink that resolves outside the workspace');
  }
  return ok(target);
}

function isWithin(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

function lstatOrNull(path: string): ReturnType<typeof lstatSync> | null {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

function realpathOrNull(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}
