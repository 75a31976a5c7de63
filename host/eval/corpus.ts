import { randomBytes } from 'node:crypto';
import { accessSync, constants, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { evalCaseRef, type EvalCase, type EvalCorpus, type EvalTruthRange } from '../../protocol/eval';
import type { FileChange } from '../../protocol/patchset';
import { err, ok, rennetError, type Result } from '../../protocol/result';
import { captureOptions, diffArgs } from '../capture/capture';
import { DiffParseError, parseDiffOutput } from '../capture/parseDiff';
import { openRepo } from '../capture/repo';
import { GitError, gitText, runGit } from '../git/run';
import { categoryOf, fixSignal, judgeChange, subjectOf, type SkipReason } from './corpusSelect';
import { truthOfDiff } from './corpusTruth';

/**
 * `rennet eval corpus --repo`: review cases from a repository's own history. Walks the
 * first-parent history of HEAD (newest first), keeps the commits corpusSelect.ts calls bug fixes,
 * and for each makes the fix's revert on top of it with git plumbing only: `commit-tree` with the
 * fix's parent tree (for a single-parent commit F the revert of F on F has exactly tree(F^)), a
 * fixed identity and the fix's own committer time, so the same history always yields the same
 * commit ids. The revert is kept under refs/rennet/eval/<id>; HEAD, the index, the branches and
 * the working tree are never touched.
 */

/** Who the synthetic head commits are by (never a real person). */
export const EVAL_COMMIT_NAME = 'Rennet eval';
export const EVAL_COMMIT_EMAIL = 'eval@rennet.invalid';
/**
 * The synthetic head's message: the same for every case (a bug's revert and a clean twin alike),
 * so the message never tells the reviewer which is which.
 */
export const EVAL_HEAD_MESSAGE = 'Change under review\n';
/** What the history walk is, in words (the CLI says it). */
export const EVAL_HISTORY_WALK = 'the first-parent history of HEAD';

/** The environment that fixes a synthetic commit's identity and time. */
export function evalCommitEnv(unixSeconds: number): Record<string, string> {
  const date = `@${unixSeconds} +0000`;
  return {
    GIT_AUTHOR_NAME: EVAL_COMMIT_NAME,
    GIT_AUTHOR_EMAIL: EVAL_COMMIT_EMAIL,
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_NAME: EVAL_COMMIT_NAME,
    GIT_COMMITTER_EMAIL: EVAL_COMMIT_EMAIL,
    GIT_COMMITTER_DATE: date,
  };
}

/**
 * Writes a commit object (tree, parents, message) with the fixed identity, never signed and
 * always UTF-8 whatever the user's configuration says, so its id depends only on its inputs.
 * Touches no ref, index or file.
 */
export async function writeEvalCommit(root: string, tree: string, parents: readonly string[], message: string, unixSeconds: number): Promise<string> {
  return gitText(['-c', 'commit.gpgSign=false', '-c', 'i18n.commitEncoding=UTF-8', 'commit-tree', '--no-gpg-sign', tree, ...parents.flatMap((parent) => ['-p', parent])], {
    cwd: root,
    env: evalCommitEnv(unixSeconds),
    input: message,
  });
}

/** The revert of `fix` (whose only parent is `parent`, a commit id) on top of it: tree(parent), parent fix. */
export async function writeRevertCommit(root: string, fix: string, parent: string, unixSeconds: number): Promise<string> {
  return writeEvalCommit(root, `${parent}^{tree}`, [fix], EVAL_HEAD_MESSAGE, unixSeconds);
}

/** Points refs/rennet/eval/<id> at a case's head so gc keeps it. */
export async function keepCaseHead(root: string, id: string, head: string): Promise<void> {
  await gitText(['update-ref', '-m', 'rennet eval corpus', evalCaseRef(id), head], { cwd: root });
}

/**
 * The diff base → head as the review's capture reads it (same flags: Myers, indent heuristic,
 * rename detection), at zero context and with no patch size cut.
 */
export async function changeBetween(root: string, base: string, head: string): Promise<FileChange[]> {
  const options = captureOptions({ contextLines: 0, maxPatchBytesPerFile: Number.MAX_SAFE_INTEGER });
  const result = await runGit(diffArgs(options, base, head), { cwd: root });
  if (result.code !== 0) throw new GitError(['diff'], result.code, result.stderr);
  return parseDiffOutput(result.stdout, options);
}

/** A case's ground truth: exactly the diff base → head (corpusTruth.ts says how it reads). */
export async function truthBetween(root: string, base: string, head: string): Promise<EvalTruthRange[]> {
  return truthOfDiff(await changeBetween(root, base, head));
}

/** The case id of a history fix: stable for the commit, safe in a file name and a ref. */
export function historyCaseId(fix: string): string {
  return `fix-${fix.slice(0, 12)}`;
}

export interface HistoryCorpusOptions {
  /** Only commits whose committer time is at or after this (Unix seconds). */
  since: number | null;
  /** Stop after this many cases (newest first). */
  limit: number;
}

export interface HistoryCorpusReport {
  corpus: EvalCorpus;
  /** Commits on the walk. */
  scanned: number;
  /** Of those, commits whose message says they fix a bug. */
  fixMessages: number;
  /** Fix commits left out, by reason. */
  skipped: Partial<Record<SkipReason, number>>;
  /** True when the walk stopped at --limit (older fixes were not examined). */
  limited: boolean;
}

interface LoggedCommit {
  commit: string;
  parents: string[];
  committedAt: number;
  message: string;
}

/** The walk: every commit on the first-parent history of HEAD, newest first. */
async function firstParentHistory(root: string): Promise<Result<LoggedCommit[]>> {
  const result = await runGit(['-c', 'log.showSignature=false', 'log', '--first-parent', '-z', '--no-color', '--encoding=UTF-8', '--format=%H%x1f%P%x1f%ct%x1f%B', 'HEAD', '--'], { cwd: root });
  if (result.code !== 0) {
    const head = await runGit(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], { cwd: root });
    if (head.code !== 0) return err(rennetError('not-found', `${root} has no commits yet (HEAD does not name a commit)`));
    return err(rennetError('git-failed', `git log failed: ${result.stderr.trim() || `exit ${result.code}`}`));
  }
  const commits: LoggedCommit[] = [];
  for (const record of result.stdout.toString('utf8').split('\0')) {
    if (record.length === 0) continue;
    const [commit, parents, committedAt, ...message] = record.split('\x1f');
    if (!commit || parents === undefined || !committedAt) return err(rennetError('git-failed', `could not read git log's record "${record.slice(0, 80)}"`));
    commits.push({ commit: commit.trim(), parents: parents.split(' ').filter((p) => p.length > 0), committedAt: Number(committedAt), message: message.join('\x1f') });
  }
  return ok(commits);
}

/**
 * Builds the history corpus of the repository at `dir` and keeps every case's head under its
 * ref. Returns the corpus with what was scanned and skipped; an empty corpus is not an error
 * here (the CLI refuses it).
 */
export async function buildHistoryCorpus(dir: string, options: HistoryCorpusOptions): Promise<Result<HistoryCorpusReport>> {
  const repo = await openRepo(dir);
  if (!repo.ok) return repo;
  const root = repo.value.root;
  try {
    const history = await firstParentHistory(root);
    if (!history.ok) return history;
    const cases: EvalCase[] = [];
    const skipped: Partial<Record<SkipReason, number>> = {};
    const skip = (reason: SkipReason) => {
      skipped[reason] = (skipped[reason] ?? 0) + 1;
    };
    let fixMessages = 0;
    let limited = false;
    for (const logged of history.value) {
      if (fixSignal(logged.message) === null) continue;
      if (cases.length >= options.limit) {
        limited = true;
        break;
      }
      fixMessages++;
      if (options.since !== null && logged.committedAt < options.since) {
        skip('before-since');
        continue;
      }
      const parent = logged.parents.length === 1 ? (logged.parents[0] as string) : null;
      if (parent === null) {
        skip('merge-or-root');
        continue;
      }
      const reason = judgeChange(await changeBetween(root, parent, logged.commit));
      if (reason !== null) {
        skip(reason);
        continue;
      }
      const id = historyCaseId(logged.commit);
      const head = await writeRevertCommit(root, logged.commit, parent, logged.committedAt);
      const truth = await truthBetween(root, logged.commit, head);
      if (truth.length === 0) {
        skip('no-changed-lines');
        continue;
      }
      await keepCaseHead(root, id, head);
      cases.push({ id, fix: logged.commit, base: logged.commit, head, category: categoryOf(logged.message), truth, note: subjectOf(logged.message) });
    }
    return ok({ corpus: { repo: root, cases }, scanned: history.value.length, fixMessages, skipped, limited });
  } catch (error) {
    if (error instanceof GitError) return err(rennetError('git-failed', error.message));
    if (error instanceof DiffParseError) return err(rennetError('git-failed', `could not read git's diff: ${error.message}`));
    throw error;
  }
}

// ── The corpus file ─────────────────────────────────────────────────────────────────────────────

/** A case with its keys in the documented order (hand-written cases may come in any order). */
function orderedCase(item: EvalCase): EvalCase {
  const truth = item.truth.map((range) => ({ path: range.path, side: range.side, startLine: range.startLine, endLine: range.endLine }));
  return {
    id: item.id,
    fix: item.fix,
    base: item.base,
    head: item.head,
    category: item.category,
    truth,
    ...(item.clean !== undefined ? { clean: item.clean } : {}),
    ...(item.repo !== undefined ? { repo: item.repo } : {}),
    ...(item.note !== undefined ? { note: item.note } : {}),
  };
}

/** The corpus file's text: stable key order, cases in the given order, two-space indent, final newline. */
export function corpusJson(corpus: EvalCorpus): string {
  const ordered = { ...(corpus.repo !== undefined ? { repo: corpus.repo } : {}), cases: corpus.cases.map(orderedCase) };
  return `${JSON.stringify(ordered, null, 2)}\n`;
}

/**
 * Whether --out can be written, checked before anything is built: its folder exists and is
 * writable, and the path is not a folder. Null when it can; else why not.
 */
export function outUnwritableReason(out: string): string | null {
  const path = resolve(out);
  try {
    if (statSync(path).isDirectory()) return `${out} is a directory`;
    accessSync(path, constants.W_OK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return `${out} cannot be written (${(error as NodeJS.ErrnoException).code ?? 'error'})`;
  }
  const folder = dirname(path);
  try {
    if (!statSync(folder).isDirectory()) return `${folder} is not a directory`;
    accessSync(folder, constants.W_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? `the folder ${folder} does not exist` : `the folder ${folder} cannot be written (${code ?? 'error'})`;
  }
  return null;
}

/** Writes the corpus file whole or not at all (a temporary file renamed over it). */
export function writeCorpusFile(out: string, corpus: EvalCorpus): void {
  const path = resolve(out);
  const temporary = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    writeFileSync(temporary, corpusJson(corpus));
    renameSync(temporary, path);
  } catch (error) {
    try {
      unlinkSync(temporary);
    } catch {
      /* never written */
    }
    throw error;
  }
}
