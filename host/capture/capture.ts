import { CAPTURE_CONTEXT_LINES, CAPTURE_MAX_FILE_BYTES, CAPTURE_MAX_PATCH_BYTES_PER_FILE } from '../../protocol/limits';
import type { CaptureOptions, FileChange, Patchset, PatchsetTotals } from '../../protocol/patchset';
import { err, ok, rennetError, type Result } from '../../protocol/result';
import type { CaptureTarget } from '../../protocol/session';
import { GitError, gitText, runGit, runGitSpooled } from '../git/run';
import { snapshotWorktree } from './snapshot';
import { PatchsetSpool, type SpooledPatchset } from './spool';
import { compareUtf8, totalsOf } from './fileList';
import { fileIdPart, patchsetIdOf } from './ids';
import { DiffParseError, DiffStreamParser, NonUtf8PathError } from './parseDiff';
import { currentBranch, resolveCommit, type RepoHandle } from './repo';

export { compareUtf8, totalsOf } from './fileList';

/** Hidden ref namespace that keeps synthetic working-tree commits reachable (never a branch). */
export const CAPTURE_REF_PREFIX = 'refs/rennet/captures/';
/** git's own binary heuristic looks at this many leading bytes for a NUL. */
const BINARY_SNIFF_BYTES = 8000;

export function captureOptions(overrides?: Partial<CaptureOptions>): CaptureOptions {
  return {
    maxFileBytes: overrides?.maxFileBytes ?? CAPTURE_MAX_FILE_BYTES,
    maxPatchBytesPerFile: overrides?.maxPatchBytesPerFile ?? CAPTURE_MAX_PATCH_BYTES_PER_FILE,
    contextLines: overrides?.contextLines ?? CAPTURE_CONTEXT_LINES,
  };
}

/**
 * The diff flags, fixed so that user configuration (diff.algorithm, diff.noprefix, color.ui,
 * external diff drivers, textconv, diff.context, diff.interHunkContext, diff.suppressBlankEmpty,
 * diff.renameLimit) cannot change a capture.
 */
export function diffArgs(options: CaptureOptions, base: string, head: string, fromMergeBase = false): string[] {
  return [
    '-c',
    `core.bigFileThreshold=${options.maxFileBytes}`,
    // A blank context line keeps its space marker: without it the line is lost at a section's end.
    '-c',
    'diff.suppressBlankEmpty=false',
    // git's own default: a user's lower limit would drop renames from large changes.
    '-c',
    'diff.renameLimit=1000',
    'diff',
    '--raw',
    '-p',
    '-z',
    '--no-color',
    '--no-ext-diff',
    '--no-textconv',
    '--no-relative',
    '--find-renames',
    `-U${options.contextLines}`,
    '--inter-hunk-context=0',
    '--diff-algorithm=myers',
    '--indent-heuristic',
    '--submodule=short',
    '--ignore-submodules=none',
    '--src-prefix=a/',
    '--dst-prefix=b/',
    '--full-index',
    '--no-abbrev',
    ...(fromMergeBase ? ['--merge-base'] : []),
    base,
    head,
    '--',
  ];
}

/** The command a person (or a seat) runs to see exactly this diff. */
export function diffCommandFor(options: CaptureOptions, base: string, head: string): string {
  return `git diff --find-renames -U${options.contextLines} --diff-algorithm=myers ${base} ${head}`;
}

interface ResolvedTarget {
  head: string;
  headRef: string;
  baseTip: string;
}

/** Captures a target into an immutable, content-addressed patchset. Writes nothing on failure. */
export async function capturePatchset(repo: RepoHandle, target: CaptureTarget, overrides?: Partial<CaptureOptions>): Promise<Result<Patchset>> {
  const options = captureOptions(overrides);
  try {
    const diffed = await diffTarget(repo, target, options);
    if (!diffed.ok) return diffed;
    const { files } = diffed.value;
    await settleOversizedFiles(repo, files, options);
    sortByPath(files);
    const body: Omit<Patchset, 'id'> = { ...patchsetMeta(diffed.value, target, options, totalsOf(files)), files };
    return ok({ id: patchsetId(body), ...body });
  } catch (error) {
    return captureFailure(error);
  }
}

/**
 * capturePatchset without the whole patchset in memory (`rennet capture --json` at any size):
 * each file is serialized as it is parsed into a spool (host/capture/spool.ts) and dropped, and
 * the result reads back `JSON.stringify` of the patchset capturePatchset answers, byte for byte,
 * with the same id. Only each file's path, counts and id part stay in memory. The caller must
 * `dispose()` it.
 */
export async function capturePatchsetSpooled(repo: RepoHandle, target: CaptureTarget, overrides?: Partial<CaptureOptions>): Promise<Result<SpooledPatchset>> {
  const options = captureOptions(overrides);
  const spool = new PatchsetSpool();
  try {
    const diffed = await diffTarget(repo, target, options, spool);
    if (!diffed.ok) {
      spool.dispose();
      return diffed;
    }
    // Only a file git called binary can change here, and such a file has no hunks: the spool held it.
    await settleOversizedFiles(repo, spool.heldFiles(), options);
    return ok(spool.finish((totals) => patchsetMeta(diffed.value, target, options, totals)));
  } catch (error) {
    spool.dispose();
    return captureFailure(error);
  }
}

function captureFailure(error: unknown): Result<never> {
  if (error instanceof NonUtf8PathError) return err(rennetError('invalid-path', error.message, { path: error.pathBytes }));
  if (error instanceof DiffParseError) return err(rennetError('git-failed', `could not read git's diff: ${error.message}`));
  if (error instanceof GitError) return err(rennetError('git-failed', error.message));
  throw error;
}

interface DiffedTarget {
  resolved: ResolvedTarget;
  mergeBase: string;
  headTree: string;
  /** The parsed files in git's order; [] when they went to a sink instead. */
  files: FileChange[];
}

/** The patchset's fields other than its id and files, in the order the JSON has them. */
function patchsetMeta(diffed: DiffedTarget, target: CaptureTarget, options: CaptureOptions, totals: PatchsetTotals): Omit<Patchset, 'id' | 'files'> {
  return {
    base: diffed.mergeBase,
    head: diffed.resolved.head,
    headTree: diffed.headTree,
    baseRef: target.base,
    headRef: diffed.resolved.headRef,
    baseTip: diffed.resolved.baseTip,
    targetKind: target.kind,
    diffCommand: diffCommandFor(options, diffed.mergeBase, diffed.resolved.head),
    options,
    totals,
  };
}

/**
 * A branch target's base commit, head commit and head tree from one git process instead of three
 * (each spawn costs the CLI a fork of itself). null unless git answers exactly three object ids —
 * an unknown ref, a non-commit, a range or a name git reads as a path — and then resolveCommit
 * resolves each ref alone and says precisely what is wrong.
 */
async function resolveBranchAtOnce(repo: RepoHandle, base: string, head: string): Promise<{ baseTip: string; head: string; headTree: string } | null> {
  // No option-like names (resolveCommit refuses them); without --verify, --end-of-options would be printed back.
  if (base.startsWith('-') || head.startsWith('-')) return null;
  const result = await runGit(['rev-parse', `${base}^{commit}`, `${head}^{commit}`, `${head}^{tree}`], { cwd: repo.root });
  if (result.code !== 0) return null;
  const ids = result.stdout.toString('utf8').split('\n');
  if (ids.length !== 4 || ids[3] !== '' || !ids.slice(0, 3).every((id) => OBJECT_ID.test(id))) return null;
  const [baseTip, headCommit, headTree] = ids as [string, string, string];
  return { baseTip, head: headCommit, headTree };
}

const OBJECT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/** Where a spooled capture's files go as they are parsed; `reset` drops them (a second diff follows). */
interface FileSink {
  add(file: FileChange): void;
  reset(): void;
}

/** Resolves the target, diffs it from the merge-base and parses the diff (each file to `sink` when given). */
async function diffTarget(repo: RepoHandle, target: CaptureTarget, options: CaptureOptions, sink?: FileSink): Promise<Result<DiffedTarget>> {
  const onFile = sink ? (file: FileChange) => sink.add(file) : undefined;
  const atOnce = target.kind === 'branch' ? await resolveBranchAtOnce(repo, target.base, target.head) : null;
  const [baseTip, branchHead] = atOnce
    ? [ok(atOnce.baseTip), ok(atOnce.head)]
    : await Promise.all([resolveCommit(repo, target.base), target.kind === 'branch' ? resolveCommit(repo, target.head) : Promise.resolve(null)]);
  if (!baseTip.ok) return baseTip;

  let resolved: ResolvedTarget;
  if (target.kind === 'branch') {
    const head = branchHead as Result<string>;
    if (!head.ok) return head;
    resolved = { head: head.value, headRef: target.head, baseTip: baseTip.value };
  } else {
    const head = await snapshotWorkingTree(repo);
    if (!head.ok) return head;
    resolved = { head: head.value.commit, headRef: head.value.branch, baseTip: baseTip.value };
  }

  // The diff computes the merge-base itself (--merge-base) while the same merge-base is asked
  // for the record, so neither waits on the other; both read the same resolved commit ids.
  // The diff, the long one, is spawned first (a spawn blocks this thread while it forks).
  const [streamed, mergeBase, headTree] = await Promise.all([
    streamDiff(repo, diffArgs(options, resolved.baseTip, resolved.head, true), options, onFile),
    findMergeBase(repo, target.base, resolved),
    atOnce ? atOnce.headTree : gitText(['rev-parse', `${resolved.head}^{tree}`], { cwd: repo.root }),
  ]);
  if (!mergeBase.ok) return mergeBase;
  let parser = streamed.parser;
  if (streamed.code !== 0) {
    // git refuses --merge-base when there are several merge-bases (criss-cross history);
    // diff from the one `git merge-base` chose instead.
    sink?.reset();
    const retry = await streamDiff(repo, diffArgs(options, mergeBase.value, resolved.head), options, onFile);
    if (retry.code !== 0) throw new GitError(['diff'], retry.code, retry.stderr);
    parser = retry.parser;
  }
  const files = parser.end();
  if (parser.parsedFiles === 0) {
    // Identical trees at the merge-base and the head: nothing to review.
    return err(
      rennetError(
        'empty-change',
        target.kind === 'branch'
          ? `nothing to review: ${target.head} has no changes against ${target.base} (their trees are identical at the merge-base ${mergeBase.value.slice(0, 12)})`
          : `nothing to review: the working tree has no changes against ${target.base}`,
      ),
    );
  }
  return ok({ resolved, mergeBase: mergeBase.value, headTree, files });
}

/**
 * The direct diff of two commits (no merge-base: `from` need not be an ancestor of `to`), parsed
 * with the same parser, options and oversize handling as a capture and sorted by path. An empty
 * diff is not an error here: it answers [].
 */
export async function captureTreeDiff(repo: RepoHandle, from: string, to: string, overrides?: Partial<CaptureOptions>): Promise<Result<FileChange[]>> {
  const options = captureOptions(overrides);
  try {
    const streamed = await streamDiff(repo, diffArgs(options, from, to), options);
    if (streamed.code !== 0) throw new GitError(['diff'], streamed.code, streamed.stderr);
    const files = streamed.parser.end();
    await settleOversizedFiles(repo, files, options);
    sortByPath(files);
    return ok(files);
  } catch (error) {
    if (error instanceof NonUtf8PathError) return err(rennetError('invalid-path', error.message, { path: error.pathBytes }));
    if (error instanceof DiffParseError) return err(rennetError('git-failed', `could not read git's diff: ${error.message}`));
    if (error instanceof GitError) return err(rennetError('git-failed', error.message));
    throw error;
  }
}

/**
 * What the author did inside a merge commit: `git show --remerge-diff` — the diff from git's own
 * re-merge of the parents (conflict markers included) to the committed merge, so a clean merge
 * shows nothing and only conflict resolutions (and edits slipped into the merge) remain. Parsed as
 * a capture is. The re-merge's blobs are git's temporary objects: only the lines are kept.
 */
export async function captureRemergeDiff(repo: RepoHandle, merge: string, overrides?: Partial<CaptureOptions>): Promise<Result<FileChange[]>> {
  const options = captureOptions(overrides);
  const args = diffArgs(options, merge, merge);
  // Same flags as a capture's diff; `show --remerge-diff --format=` of the one merge instead of `diff A B`.
  const at = args.indexOf('diff');
  const flags = args.slice(at + 1, args.length - 3);
  try {
    const streamed = await streamDiff(repo, [...args.slice(0, at), 'show', '--remerge-diff', '--format=', ...flags, merge, '--'], options);
    if (streamed.code !== 0) throw new GitError(['show', '--remerge-diff'], streamed.code, streamed.stderr);
    const files = streamed.parser.end();
    sortByPath(files);
    return ok(files);
  } catch (error) {
    if (error instanceof NonUtf8PathError) return err(rennetError('invalid-path', error.message, { path: error.pathBytes }));
    if (error instanceof DiffParseError) return err(rennetError('git-failed', `could not read git's remerge diff: ${error.message}`));
    if (error instanceof GitError) return err(rennetError('git-failed', error.message));
    throw error;
  }
}

function sortByPath(files: FileChange[]): void {
  files.sort((a, b) => compareUtf8(a.path, b.path));
}

/**
 * The patchset's content address. Hunk ids already hash every hunk's path, header and body, so
 * the id covers the whole capture by hashing the metadata and the hunk ids, not every line again.
 */
export function patchsetId(body: Omit<Patchset, 'id'>): string {
  const { files, ...meta } = body;
  return patchsetIdOf(meta, files.map(fileIdPart));
}

/**
 * Runs one diff and parses it while git is still writing: each file as soon as the next begins.
 * git writes to a spool file (runGitSpooled), so it never waits for the parser. It runs in the git
 * dir, where git has no work tree: a .gitattributes there (another branch's, or uncommitted) would
 * otherwise decide which files are binary and how hunk headers read, so the same range would
 * capture differently (another id) depending on what is checked out.
 */
async function streamDiff(repo: RepoHandle, args: string[], options: CaptureOptions, onFile?: (file: FileChange) => void): Promise<{ code: number; stderr: string; parser: DiffStreamParser }> {
  const parser = new DiffStreamParser(options, onFile);
  let parseError: { error: unknown } | undefined;
  const result = await runGitSpooled(args, {
    cwd: repo.gitDir,
    onStdout: (chunk) => {
      if (parseError) return;
      try {
        parser.push(chunk);
      } catch (error) {
        parseError = { error };
      }
    },
  });
  if (result.code === 0 && parseError) throw parseError.error;
  return { code: result.code, stderr: result.stderr, parser };
}

async function findMergeBase(repo: RepoHandle, baseRef: string, resolved: ResolvedTarget): Promise<Result<string>> {
  const result = await runGit(['merge-base', resolved.baseTip, resolved.head], { cwd: repo.root });
  if (result.code === 0) return ok(result.stdout.toString('utf8').trim());
  if (repo.shallow) {
    return err(
      rennetError(
        'shallow-missing-merge-base',
        `${repo.root} is a shallow clone and the merge-base of ${resolved.headRef} and ${baseRef} is not in it; fetch more history (git fetch --unshallow, or --deepen=<n>) and try again`,
      ),
    );
  }
  return err(rennetError('no-merge-base', `${resolved.headRef} and ${baseRef} share no history (no merge-base)`));
}

/**
 * Records the working tree as a commit on top of HEAD (host/capture/snapshot.ts: a temporary index, a
 * hidden ref under CAPTURE_REF_PREFIX), for a checked-out branch only.
 */
async function snapshotWorkingTree(repo: RepoHandle): Promise<Result<{ commit: string; branch: string }>> {
  if (repo.bare) return err(rennetError('bare-working-tree', `${repo.root} is a bare repository; it has no working tree to review`));
  const branch = await currentBranch(repo);
  if (!branch) {
    return err(rennetError('detached-head', 'Review Working Tree needs a checked-out branch, but HEAD is detached; check out a branch first'));
  }
  // Fixed identity and dates make the commit id a function of (tree, parent): capturing an
  // unchanged working tree twice yields the same commit and so the same patchset id.
  const snapshot = await snapshotWorktree(repo, {
    ref: (commit) => `${CAPTURE_REF_PREFIX}${commit}`,
    message: `rennet: working tree of ${branch}`,
  });
  if (!snapshot.ok) return snapshot;
  return ok({ commit: snapshot.value.commit, branch });
}

/**
 * git reports files over core.bigFileThreshold as binary. Tell the two apart: a text file over the
 * limit is captured truncated (its size and the limit stated), a real binary stays binary.
 */
async function settleOversizedFiles(repo: RepoHandle, files: FileChange[], options: CaptureOptions): Promise<void> {
  const candidates = files.filter((f) => f.binary);
  if (candidates.length === 0) return;
  const oids = [...new Set(candidates.flatMap((f) => [f.oldOid, f.newOid]).filter((o): o is string => o !== null))];
  const sizes = await blobSizes(repo, oids);
  for (const file of candidates) {
    const baseBytes = file.oldOid ? (sizes.get(file.oldOid) ?? null) : null;
    const headBytes = file.newOid ? (sizes.get(file.newOid) ?? null) : null;
    const oversized = (baseBytes ?? 0) > options.maxFileBytes || (headBytes ?? 0) > options.maxFileBytes;
    if (!oversized) continue;
    const sides = [file.oldOid, file.newOid].filter((o): o is string => o !== null);
    const looksBinary = (await Promise.all(sides.map((oid) => blobLooksBinary(repo, oid)))).some(Boolean);
    if (looksBinary) continue;
    file.binary = false;
    file.truncated = true;
    file.truncation = {
      reason: 'file-size',
      limitBytes: options.maxFileBytes,
      baseBytes,
      headBytes,
      tailFrom: { base: file.oldOid ? 1 : null, head: file.newOid ? 1 : null },
    };
  }
}

async function blobSizes(repo: RepoHandle, oids: readonly string[]): Promise<Map<string, number>> {
  const result = await runGit(['cat-file', '--batch-check=%(objectname) %(objectsize)'], {
    cwd: repo.root,
    input: `${oids.join('\n')}\n`,
  });
  const sizes = new Map<string, number>();
  for (const line of result.stdout.toString('utf8').split('\n')) {
    const [oid, size] = line.split(' ');
    if (oid && size && /^\d+$/.test(size)) sizes.set(oid, Number(size));
  }
  return sizes;
}

async function blobLooksBinary(repo: RepoHandle, oid: string): Promise<boolean> {
  const head = await runGit(['cat-file', 'blob', oid], { cwd: repo.root, maxStdoutBytes: BINARY_SNIFF_BYTES });
  return head.stdout.subarray(0, BINARY_SNIFF_BYTES).includes(0);
}
