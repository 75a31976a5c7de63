import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { EvalCase, EvalCorpus } from '../../protocol/eval';
import { err, ok, rennetError, type Result } from '../../protocol/result';
import { GitError, gitText } from '../git/run';
import { BUILTIN_CASE_SPECS, buggyProgram, twinProgram, type BuiltinCaseSpec } from './builtinCases';
import { EVAL_HEAD_MESSAGE, keepCaseHead, truthBetween, writeEvalCommit, writeRevertCommit } from './corpus';

/**
 * `rennet eval corpus --builtin DIR`: writes the built-in corpus (builtinCases.ts) as real git
 * repositories, one per category under DIR/<category>, each holding two cases: the bug (base =
 * the fix, head = its revert, made and scored exactly as a history case) and its clean twin
 * (base = the same fix, head = a harmless change, no truth). Dates and identities are fixed, so
 * every commit id is the same on every machine.
 */

/** The first commit's time (2024-03-01T10:00:00Z); the fix follows an hour later, the heads two. */
export const BUILTIN_EPOCH = 1_709_287_200;
const HOUR = 3600;

export function builtinCaseId(spec: BuiltinCaseSpec, clean: boolean): string {
  return clean ? `builtin-${spec.category}-clean` : `builtin-${spec.category}`;
}

/**
 * Writes the trees of several file maps: every distinct content as a blob in one hash-object
 * call, then each tree through its own throwaway index. Returns the tree ids in order.
 */
async function writeTrees(root: string, programs: ReadonlyArray<Readonly<Record<string, string>>>): Promise<string[]> {
  const scratch = mkdtempSync(join(tmpdir(), 'rennet-eval-trees-'));
  try {
    const contents = [...new Set(programs.flatMap((files) => Object.values(files)))];
    const paths = contents.map((content, index) => {
      const path = join(scratch, `blob-${index}`);
      writeFileSync(path, content);
      return path;
    });
    const blobs = (await gitText(['hash-object', '-w', '--no-filters', '--stdin-paths'], { cwd: root, input: paths.map((p) => `${p}\n`).join('') })).split('\n');
    const blobOf = new Map(contents.map((content, index) => [content, blobs[index] as string]));
    const trees: string[] = [];
    for (const [index, files] of programs.entries()) {
      const env = { GIT_INDEX_FILE: join(scratch, `index-${index}`) };
      const entries = Object.keys(files)
        .sort()
        .map((path) => `100644 ${blobOf.get(files[path] as string)}\t${path}\n`);
      await gitText(['update-index', '--add', '--index-info'], { cwd: root, env, input: entries.join('') });
      trees.push(await gitText(['write-tree'], { cwd: root, env }));
    }
    return trees;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** One category's repository and its two cases. */
async function writeCaseRepository(dir: string, spec: BuiltinCaseSpec): Promise<EvalCase[]> {
  mkdirSync(dir, { recursive: true });
  await gitText(['init', '-q', '-b', 'main', '--template=', dir], { cwd: dir });
  const root = realpathSync(dir);
  const [buggyTree, fixedTree, twinTree] = (await writeTrees(root, [buggyProgram(spec), spec.files, twinProgram(spec)])) as [string, string, string];
  const introduced = await writeEvalCommit(root, buggyTree, [], `${spec.introducedBy}\n`, BUILTIN_EPOCH);
  const fix = await writeEvalCommit(root, fixedTree, [introduced], `${spec.fixMessage}\n`, BUILTIN_EPOCH + HOUR);
  const revert = await writeRevertCommit(root, fix, introduced, BUILTIN_EPOCH + 2 * HOUR);
  const twin = await writeEvalCommit(root, twinTree, [fix], EVAL_HEAD_MESSAGE, BUILTIN_EPOCH + 2 * HOUR);
  // main stays at the fix, checked out, so the folder looks like an ordinary clone of it.
  await gitText(['update-ref', 'refs/heads/main', fix], { cwd: root });
  await gitText(['read-tree', '--reset', '-u', 'HEAD'], { cwd: root });
  const bugId = builtinCaseId(spec, false);
  const twinId = builtinCaseId(spec, true);
  await keepCaseHead(root, bugId, revert);
  await keepCaseHead(root, twinId, twin);
  return [
    { id: bugId, fix, base: fix, head: revert, category: spec.category, truth: await truthBetween(root, fix, revert), repo: root, note: `built-in: ${spec.fixMessage}` },
    { id: twinId, fix, base: fix, head: twin, category: spec.category, truth: [], clean: true, repo: root, note: `built-in clean twin: ${spec.twinNote}` },
  ];
}

/**
 * Writes every built-in case's repository under `dir` (which must be absent or empty: nothing
 * is overwritten) and returns the corpus, cases in BUILTIN_CASE_SPECS order, each bug before its
 * twin.
 */
export async function writeBuiltinCorpus(dir: string, specs: readonly BuiltinCaseSpec[] = BUILTIN_CASE_SPECS): Promise<Result<EvalCorpus>> {
  const target = resolve(dir);
  try {
    if (readdirSync(target).length > 0) return err(rennetError('invalid-request', `${dir} is not empty; the built-in corpus is written only into an empty or new folder`));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTDIR') return err(rennetError('invalid-request', `${dir} is not a directory`));
    if (code !== 'ENOENT') return err(rennetError('invalid-request', `${dir} cannot be read (${code ?? 'error'})`));
  }
  const written: string[] = [];
  try {
    mkdirSync(target, { recursive: true });
    const cases: EvalCase[] = [];
    for (const spec of specs) {
      const repoDir = join(target, spec.category);
      written.push(repoDir);
      cases.push(...(await writeCaseRepository(repoDir, spec)));
    }
    return ok({ cases });
  } catch (error) {
    // Half a corpus is no corpus: the folder is left as empty as it was found.
    for (const repoDir of written) rmSync(repoDir, { recursive: true, force: true });
    if (error instanceof GitError) return err(rennetError('git-failed', error.message));
    const code = (error as NodeJS.ErrnoException).code;
    if (typeof code === 'string') return err(rennetError('invalid-request', `cannot write the built-in corpus under ${dir}: ${(error as Error).message}`));
    throw error;
  }
}
