import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CaptureOptions, Patchset } from '../../protocol/patchset';
import { err, ok, rennetError, type Result } from '../../protocol/result';
import { captureOptions, captureTreeDiff, diffCommandFor, patchsetId, totalsOf } from '../capture/capture';
import type { RepoHandle } from '../capture/repo';
import { GitError, gitText, runGit } from '../git/run';
import type { DeltaSegment } from './delta';
import { gitLineMap, type LineMap } from './evidenceLines';

/**
 * The fix delta the lenses read when the base was merged into the request since the review: only
 * the author's work, as one patchset whose head is the real head.
 *
 * The plain diff review-commit → head would carry everything the merged base brought. Instead the
 * host writes an "author base": the head's tree with the author's own work taken back out — every
 * line an author segment (or a merge's remerge-diff: its conflict resolutions) added is removed,
 * every reviewed-commit line an author segment deleted is put back, and the lines the base brought
 * stay. The delta patchset is the diff author base → head. So:
 * - its head side is the head itself: every citation names a head line a reader can open;
 * - its changed lines are exactly the author's (the same segments the closures' units come from);
 *   the base's own changes are unchanged lines (context at most), and a file only the base
 *   touched is not in the patchset at all;
 * - its base side is the author base, a real commit (parent: the reviewed commit) kept reachable
 *   under `refs/rennet/deltas/`, so a deleted line cites a blob anyone can open; `lineOf` carries a
 *   reviewed-commit line onto it (a closure's evidence on a deleted line).
 *
 * Which lines are the author's comes from the segments, each carried onto the head (added lines)
 * or the reviewed commit (deleted lines) through git's own `-U0` diff (evidenceLines.ts); a line
 * changed again later has no place there and is not counted twice. A file whose change has no
 * lines to follow (binary, a submodule, over the size limit, a type change) is taken whole: its
 * reviewed-commit version is the author base's when an author segment touched it.
 */

export const AUTHOR_BASE_REF_PREFIX = 'refs/rennet/deltas/';
/** Fixed identity: the author base's commit id depends on its tree, parent, message and the head's date only. */
const IDENTITY = { name: 'Rennet', email: 'rennet@localhost' } as const;

// ─── Pure parts ──────────────────────────────────────────────────────────────────────────────

/** One hunk of a `-U0` diff; a zero length sits after its start line. */
export interface ZeroHunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
}

/** PURE. The hunk headers of a `git diff -U0`, in order. */
export function parseZeroHunks(diff: string): ZeroHunk[] {
  const out: ZeroHunk[] = [];
  for (const m of diff.matchAll(/^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/gm)) {
    out.push({ oldStart: Number(m[1]), oldLines: m[2] === undefined ? 1 : Number(m[2]), newStart: Number(m[3]), newLines: m[4] === undefined ? 1 : Number(m[4]) });
  }
  return out;
}

/** PURE. A blob's lines as bytes, each with its `\n` (a last line without one stays without). */
export function splitLines(bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let at = 0;
  while (at < bytes.length) {
    const nl = bytes.indexOf(0x0a, at);
    const end = nl < 0 ? bytes.length : nl + 1;
    out.push(bytes.subarray(at, end));
    at = end;
  }
  return out;
}

export interface AuthorBaseFile {
  lines: Buffer[];
  /** Reviewed-commit line → its line in the author base (lines the author base has from it). */
  lineOf: Map<number, number>;
}

/** What the author did to one file, in head lines (added) and reviewed-commit lines (deleted). */
export interface AuthorLines {
  added: ReadonlySet<number>;
  /** The added lines that are a merge's conflict resolutions (a subset of `added`). */
  resolved: ReadonlySet<number>;
  deleted: ReadonlySet<number>;
}

/**
 * PURE. One file of the author base, walked along the diff reviewed → head (`hunks`): unchanged
 * lines stay; of a hunk's deleted lines only those the author deleted come back — or all of them
 * when every line the hunk adds is the author's and one is a conflict resolution (the resolution
 * replaced them: shown as the author's change of the reviewed lines, not as a bare insertion); of
 * its added lines only those the author did not add stay (the base's). An unchanged line the
 * author's segments say they added (git aligned the two diffs differently) is left out too, so it
 * shows as added. A line that would end up in the middle without a line end gets one.
 */
export function authorBaseFile(reviewed: readonly Buffer[], head: readonly Buffer[], hunks: readonly ZeroHunk[], author: AuthorLines): AuthorBaseFile {
  const { added: authorAdded, deleted: authorDeleted } = author;
  const lines: Buffer[] = [];
  const lineOf = new Map<number, number>();
  let r = 1;
  let h = 1;
  const keepUnchanged = (upTo: number) => {
    for (; r <= upTo; r++, h++) {
      if (authorAdded.has(h)) continue;
      lines.push(head[h - 1] as Buffer);
      lineOf.set(r, lines.length);
    }
  };
  for (const hunk of hunks) {
    keepUnchanged(hunk.oldLines === 0 ? hunk.oldStart : hunk.oldStart - 1);
    const added = Array.from({ length: hunk.newLines }, (_, i) => hunk.newStart + i);
    const replacedByResolution = added.length > 0 && added.every((k) => authorAdded.has(k)) && added.some((k) => author.resolved.has(k));
    for (let m = hunk.oldStart; m < hunk.oldStart + hunk.oldLines; m++) {
      if ((!authorDeleted.has(m) && !replacedByResolution) || reviewed[m - 1] === undefined) continue;
      lines.push(reviewed[m - 1] as Buffer);
      lineOf.set(m, lines.length);
    }
    for (const k of added) if (!authorAdded.has(k) && head[k - 1] !== undefined) lines.push(head[k - 1] as Buffer);
    r = hunk.oldLines === 0 ? hunk.oldStart + 1 : hunk.oldStart + hunk.oldLines;
    h = hunk.newLines === 0 ? hunk.newStart + 1 : hunk.newStart + hunk.newLines;
  }
  keepUnchanged(reviewed.length);
  for (let i = 0; i < lines.length - 1; i++) {
    const line = lines[i] as Buffer;
    if (line[line.length - 1] !== 0x0a) lines[i] = Buffer.concat([line, Buffer.from('\n')]);
  }
  return { lines, lineOf };
}

/** What the author's segments did, by path: the lines (carried onto the head and the reviewed commit) and the whole-file changes. */
export interface AuthorTouch {
  /** Head lines the author added, by head path. */
  added: Map<string, Set<number>>;
  /** Of those, the lines a merge's remerge-diff added (its conflict resolutions). */
  resolved: Map<string, Set<number>>;
  /** Reviewed-commit lines the author deleted, by their path there. */
  deleted: Map<string, Set<number>>;
  /** Every path (either name) an author segment touched. */
  touched: Set<string>;
  /** Paths the author created (added, or renamed to). */
  created: Set<string>;
  /** Paths the author removed (deleted, or renamed away). */
  removed: Set<string>;
  /** Paths whose author change has no lines to follow (binary, submodule, truncated): taken whole. */
  whole: Set<string>;
  /** Paths whose mode the author changed. */
  modeChanged: Set<string>;
}

function addTo(map: Map<string, Set<number>>, path: string, line: number): void {
  let set = map.get(path);
  if (!set) map.set(path, (set = new Set()));
  set.add(line);
}

/** The author's work in the segments, each line carried onto the head (added) or the reviewed commit (deleted) by `map`. */
export async function authorTouch(segments: readonly DeltaSegment[], ends: { from: string; to: string }, map: LineMap): Promise<AuthorTouch> {
  const touch: AuthorTouch = { added: new Map(), resolved: new Map(), deleted: new Map(), touched: new Set(), created: new Set(), removed: new Set(), whole: new Set(), modeChanged: new Set() };
  for (const segment of segments) {
    const headAt = segment.kind === 'diff' ? segment.to : segment.merge;
    // A remerge's deleted lines are lines of git's re-merge (conflict markers included): no commit has them.
    const baseAt = segment.kind === 'diff' ? segment.from : null;
    for (const file of segment.files) {
      const basePath = file.oldPath ?? file.path;
      touch.touched.add(file.path).add(basePath);
      if (file.status === 'added' || file.status === 'renamed') touch.created.add(file.path);
      if (file.status === 'deleted' || file.status === 'renamed') touch.removed.add(basePath);
      if (file.binary || file.submodule || file.truncated) touch.whole.add(file.path).add(basePath);
      if (file.modeChanged) touch.modeChanged.add(file.path).add(basePath);
      for (const hunk of file.hunks) {
        for (const line of hunk.lines) {
          if (line.kind === 'add' && line.newLine !== null) {
            const at = await map(headAt, ends.to, file.path, line.newLine);
            if (at !== null) addTo(touch.added, file.path, at);
            if (at !== null && segment.kind === 'remerge') addTo(touch.resolved, file.path, at);
          } else if (line.kind === 'del' && line.oldLine !== null && baseAt !== null) {
            const at = await map(baseAt, ends.from, basePath, line.oldLine);
            if (at !== null) addTo(touch.deleted, basePath, at);
          }
        }
      }
    }
  }
  return touch;
}

/** One entry of `git diff --raw -z --no-renames`. */
export interface RawChange {
  path: string;
  status: string;
  oldMode: string;
  newMode: string;
  oldOid: string;
  newOid: string;
}

/** PURE. `git diff --raw -z` output: `:<old mode> <new mode> <old oid> <new oid> <status>\0<path>\0` per change. */
export function parseRawZ(output: string): RawChange[] {
  const parts = output.split('\0');
  const out: RawChange[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const meta = /^:(\d+) (\d+) ([0-9a-f]+) ([0-9a-f]+) ([A-Z])\d*$/.exec(parts[i] as string);
    if (!meta) break;
    out.push({ oldMode: meta[1] as string, newMode: meta[2] as string, oldOid: meta[3] as string, newOid: meta[4] as string, status: meta[5] as string, path: parts[i + 1] as string });
  }
  return out;
}

// ─── The author base and its patchset ────────────────────────────────────────────────────────

export interface AuthorDelta {
  /** The fix delta as the lenses read it: author base → head. */
  patchset: Patchset;
  /** The author base commit (the patchset's base). */
  authorBase: string;
  /** A reviewed-commit line of `path`, as the author base numbers it; null when the author base has no such line. */
  lineOf(path: string, line: number): number | null;
}

export interface AuthorDeltaInput {
  /** The reviewed commit. */
  from: string;
  /** The head. */
  to: string;
  segments: readonly DeltaSegment[];
  options?: Partial<CaptureOptions>;
  /** The request's head ref, recorded on the patchset (it reads as this request's change). */
  headRef: string;
}

/**
 * The author-only delta patchset; ok(null) when the author's own work since the review changes no
 * file (the commits since only merged the base, cleanly). Writes the author base's blobs, tree and
 * commit into the repository and one hidden ref; never touches HEAD, a branch or the index.
 */
export async function authorDeltaPatchset(repo: RepoHandle, input: AuthorDeltaInput, map: LineMap = gitLineMap(repo.root)): Promise<Result<AuthorDelta | null>> {
  try {
    return await buildAuthorDelta(repo, input, map);
  } catch (error) {
    if (error instanceof GitError) return err(rennetError('git-failed', `the author's delta since ${input.from.slice(0, 7)} could not be built: ${error.message}`));
    throw error;
  }
}

async function buildAuthorDelta(repo: RepoHandle, input: AuthorDeltaInput, map: LineMap): Promise<Result<AuthorDelta | null>> {
  const options = captureOptions(input.options);
  const { from, to } = input;
  const cwd = repo.root;
  const touch = await authorTouch(input.segments, { from, to }, map);
  const raw = await gitText(['diff', '--raw', '-z', '--no-renames', '--no-abbrev', '--no-ext-diff', '--no-textconv', '--ignore-submodules=none', from, to, '--'], { cwd });
  const changes = parseRawZ(raw);
  const removal = (path: string) => ({ path, mode: '0', oid: changes[0]?.oldOid.replace(/./g, '0') ?? '0'.repeat(40) });

  const updates: Array<{ path: string; mode: string; oid: string }> = [];
  const lineMaps = new Map<string, Map<number, number> | 'same'>();
  /** The change taken whole: the author base has the reviewed commit's version (or, had it none, no file). */
  const whole = (c: RawChange, reviewedHas: boolean) => {
    if (!reviewedHas) return void updates.push(removal(c.path));
    updates.push({ path: c.path, mode: c.oldMode, oid: c.oldOid });
    lineMaps.set(c.path, 'same');
  };
  for (const c of changes) {
    // A file no author segment touched keeps the head's version (the base's change, or none).
    if (!touch.touched.has(c.path)) continue;
    const reviewedHas = !/^0+$/.test(c.oldMode);
    const headHas = !/^0+$/.test(c.newMode);
    if (!headHas) {
      if (touch.removed.has(c.path)) whole(c, reviewedHas);
      continue;
    }
    if (!reviewedHas && touch.created.has(c.path)) {
      updates.push(removal(c.path));
      continue;
    }
    const linesFollow = !touch.whole.has(c.path) && isRegular(c.newMode) && (!reviewedHas || isRegular(c.oldMode));
    const [reviewed, head] = linesFollow
      ? await Promise.all([reviewedHas ? readBlob(cwd, c.oldOid, options.maxFileBytes) : Promise.resolve(Buffer.alloc(0)), readBlob(cwd, c.newOid, options.maxFileBytes)])
      : [null, null];
    if (reviewed === null || head === null) {
      // No lines to follow (binary, a submodule, a type change, over the size limit): taken whole.
      whole(c, reviewedHas);
      continue;
    }
    const diff = await gitText(['diff', '-U0', '--no-color', '--no-ext-diff', '--no-textconv', '--no-renames', '--diff-algorithm=myers', from, to, '--', `:(literal)${c.path}`], { cwd });
    const file = authorBaseFile(splitLines(reviewed), splitLines(head), parseZeroHunks(diff), {
      added: touch.added.get(c.path) ?? new Set(),
      resolved: touch.resolved.get(c.path) ?? new Set(),
      deleted: touch.deleted.get(c.path) ?? new Set(),
    });
    const oid = await gitText(['hash-object', '-w', '--stdin'], { cwd, input: Buffer.concat(file.lines) });
    updates.push({ path: c.path, mode: touch.modeChanged.has(c.path) && reviewedHas ? c.oldMode : c.newMode, oid });
    lineMaps.set(c.path, file.lineOf);
  }

  const headTree = await gitText(['rev-parse', `${to}^{tree}`], { cwd });
  const baseTree = updates.length === 0 ? headTree : await writeTree(cwd, to, updates);
  if (baseTree === headTree) return ok(null);

  const date = await gitText(['show', '-s', '--format=%ct', to], { cwd });
  const identity = {
    GIT_AUTHOR_NAME: IDENTITY.name,
    GIT_AUTHOR_EMAIL: IDENTITY.email,
    GIT_COMMITTER_NAME: IDENTITY.name,
    GIT_COMMITTER_EMAIL: IDENTITY.email,
    GIT_AUTHOR_DATE: `@${date} +0000`,
    GIT_COMMITTER_DATE: `@${date} +0000`,
  };
  const message = `rennet: ${to.slice(0, 12)} without the author's work since ${from.slice(0, 12)} (the base of a re-review's delta)`;
  const commit = await gitText(['commit-tree', '--no-gpg-sign', baseTree, '-p', from, '-m', message], { cwd, env: identity });
  await gitText(['update-ref', `${AUTHOR_BASE_REF_PREFIX}${commit}`, commit], { cwd });

  const files = await captureTreeDiff(repo, commit, to, options);
  if (!files.ok) return files;
  if (files.value.length === 0) return ok(null);
  const body: Omit<Patchset, 'id'> = {
    base: commit,
    head: to,
    headTree,
    // Asked as "since the reviewed commit": that is the ref; the author base stands in for it as the diff's old side.
    baseRef: from,
    headRef: input.headRef,
    baseTip: commit,
    targetKind: 'branch',
    diffCommand: diffCommandFor(options, commit, to),
    options,
    totals: totalsOf(files.value),
    files: files.value,
  };
  const changed = new Set(changes.map((c) => c.path));
  return ok({
    patchset: { id: patchsetId(body), ...body },
    authorBase: commit,
    lineOf(path, line) {
      const known = lineMaps.get(path);
      if (known === 'same') return line;
      if (known) return known.get(line) ?? null;
      // A file the diff since the review does not name is the same in the reviewed commit, the author base and the head.
      return changed.has(path) ? null : line;
    },
  });
}

function isRegular(mode: string): boolean {
  return (Number.parseInt(mode, 8) & 0o170000) === 0o100000;
}

/** A blob's bytes; null when it is binary (a NUL in its first 8000 bytes) or over `maxBytes`. */
async function readBlob(cwd: string, oid: string, maxBytes: number): Promise<Buffer | null> {
  const r = await runGit(['cat-file', 'blob', oid], { cwd, maxStdoutBytes: maxBytes + 1 });
  if (r.cut || r.code !== 0 || r.stdout.length > maxBytes) return null;
  return r.stdout.subarray(0, 8000).includes(0) ? null : r.stdout;
}

/** The head's tree with `updates` applied (mode 0: removed), through a temporary index. */
async function writeTree(cwd: string, head: string, updates: ReadonlyArray<{ path: string; mode: string; oid: string }>): Promise<string> {
  const scratch = mkdtempSync(join(tmpdir(), 'rennet-author-base-'));
  try {
    const env = { GIT_INDEX_FILE: join(scratch, 'index') };
    await gitText(['read-tree', head], { cwd, env });
    await gitText(['update-index', '-z', '--index-info'], { cwd, env, input: Buffer.from(updates.map((u) => `${u.mode} ${u.oid}\t${u.path}\0`).join(''), 'utf8') });
    return await gitText(['write-tree'], { cwd, env });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
