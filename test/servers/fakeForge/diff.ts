import { createHash } from 'node:crypto';
import { git } from './git';

/**
 * The diff a pull/merge request shows and the rules for placing a comment on it, as the real
 * forges apply them: `git diff -M <merge-base> <head>` with 3 lines of context.
 *
 * - GitHub `line`/`side`: RIGHT names a new-side line number of an added or context line, LEFT an
 *   old-side number of a deleted or context line; a range (`start_line`/`start_side` … `line`/
 *   `side`) lies in one hunk and starts strictly before it ends. The legacy `position` counts
 *   patch lines below the file's first `@@` header (later headers count).
 * - GitLab positions: an added line is named by `new_line` only, a deleted line by `old_line`
 *   only, a context line by both; `line_code` is `<sha1(new_path)>_<old>_<new>` with GitLab's
 *   counters (an added line carries the next old line number, a deleted line the next new one).
 */

export type LineKind = 'add' | 'del' | 'ctx';

export interface DiffLine {
  kind: LineKind;
  /** Old-side line number (deleted and context lines), else null. */
  oldLine: number | null;
  /** New-side line number (added and context lines), else null. */
  newLine: number | null;
  /** GitLab's counters at this line (used in line codes). */
  oldPos: number;
  newPos: number;
  /** GitHub's diff position (1-based, below the first `@@` of the file). */
  position: number;
  /** Index of the hunk in the file. */
  hunk: number;
  text: string;
}

export interface Hunk {
  header: string;
  oldStart: number;
  oldCount: number;
  newStart: number;
  newCount: number;
  /** GitHub position of the header line itself (0 for the first hunk). */
  position: number;
  /** Patch lines of the hunk, header first (for `diff_hunk`). */
  patchLines: string[];
  lines: DiffLine[];
}

export type FileStatus = 'added' | 'removed' | 'modified' | 'renamed' | 'copied' | 'changed';

export interface DiffFile {
  status: FileStatus;
  /** The path before (null for an added file) and after (null for a removed file). */
  oldPath: string | null;
  newPath: string | null;
  oldMode: string;
  newMode: string;
  oldBlob: string;
  newBlob: string;
  similarity: number | null;
  binary: boolean;
  hunks: Hunk[];
  lines: DiffLine[];
  /** GitHub's `patch`: the hunks, from the first `@@`, without the diff header. */
  patch: string;
  additions: number;
  deletions: number;
  /** The diff text of this file as `git diff` printed it (header included). */
  raw: string;
}

export interface PullDiff {
  base: string;
  head: string;
  files: DiffFile[];
  /** The whole `git diff` text. */
  text: string;
}

const ZERO = '0000000000000000000000000000000000000000';

/** GitHub's and GitLab's name of a file: the new path, or the old one for a removed file. */
export function fileName(f: DiffFile): string {
  return (f.newPath ?? f.oldPath) as string;
}

/** GitLab's paths: an added file has old_path = new_path, a removed one new_path = old_path. */
export function gitlabPaths(f: DiffFile): { oldPath: string; newPath: string } {
  const newPath = f.newPath ?? (f.oldPath as string);
  return { oldPath: f.oldPath ?? newPath, newPath };
}

const DIFF_FLAGS = ['-M', '--no-color', '--no-ext-diff', '--no-textconv', '--ignore-submodules=none', '--diff-algorithm=myers'];

const cache = new Map<string, Promise<PullDiff>>();

/** The diff of `base..head` in the repository at `dir` (cached: commits are immutable). */
export function computeDiff(dir: string, base: string, head: string): Promise<PullDiff> {
  const key = `${dir}\0${base}\0${head}`;
  let hit = cache.get(key);
  if (hit === undefined) {
    hit = computeDiffUncached(dir, base, head);
    hit.catch(() => cache.delete(key));
    cache.set(key, hit);
    if (cache.size > 500) cache.delete(cache.keys().next().value as string);
  }
  return hit;
}

async function computeDiffUncached(dir: string, base: string, head: string): Promise<PullDiff> {
  const [raw, text] = await Promise.all([
    git(dir, ['-c', 'core.quotepath=false', 'diff', ...DIFF_FLAGS, '--raw', '-z', '--no-abbrev', base, head, '--']),
    git(dir, ['-c', 'core.quotepath=false', 'diff', ...DIFF_FLAGS, '--src-prefix=a/', '--dst-prefix=b/', base, head, '--']),
  ]);
  const entries = parseRaw(raw);
  const sections = splitSections(text);
  if (sections.length !== entries.length) throw new Error(`diff parse: ${entries.length} files in --raw, ${sections.length} in the patch`);
  const files = entries.map((e, i) => buildFile(e, sections[i] as string));
  return { base, head, files, text };
}

interface RawEntry {
  oldMode: string;
  newMode: string;
  oldBlob: string;
  newBlob: string;
  letter: string;
  score: number | null;
  src: string;
  dst: string | null;
}

function parseRaw(raw: string): RawEntry[] {
  const tokens = raw.split('\0');
  const out: RawEntry[] = [];
  let i = 0;
  while (i < tokens.length) {
    const meta = tokens[i++] ?? '';
    if (!meta.startsWith(':')) continue;
    const [oldMode, newMode, oldBlob, newBlob, status] = meta.slice(1).split(' ');
    const letter = (status ?? 'M').charAt(0);
    const score = status && status.length > 1 ? Number.parseInt(status.slice(1), 10) : null;
    const src = tokens[i++] ?? '';
    const dst = letter === 'R' || letter === 'C' ? (tokens[i++] ?? '') : null;
    out.push({ oldMode: oldMode ?? '', newMode: newMode ?? '', oldBlob: oldBlob ?? ZERO, newBlob: newBlob ?? ZERO, letter, score, src, dst });
  }
  return out;
}

function splitSections(text: string): string[] {
  if (text.length === 0) return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const out: string[][] = [];
  for (const line of lines) {
    if (line.startsWith('diff --git ')) out.push([line]);
    else out[out.length - 1]?.push(line);
  }
  return out.map((l) => l.join('\n'));
}

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

function buildFile(e: RawEntry, section: string): DiffFile {
  const status: FileStatus = e.letter === 'A' ? 'added' : e.letter === 'D' ? 'removed' : e.letter === 'R' ? 'renamed' : e.letter === 'C' ? 'copied' : e.letter === 'T' ? 'changed' : 'modified';
  const oldPath = status === 'added' ? null : e.src;
  const newPath = status === 'removed' ? null : (e.dst ?? e.src);
  const all = section.split('\n');
  const first = all.findIndex((l) => l.startsWith('@@ '));
  const binary = all.some((l, i) => (first < 0 || i < first) && l.startsWith('Binary files ') && l.endsWith(' differ'));
  const patchLines = first < 0 ? [] : all.slice(first);
  const hunks: Hunk[] = [];
  const lines: DiffLine[] = [];
  let oldCounter = 0;
  let newCounter = 0;
  let additions = 0;
  let deletions = 0;
  patchLines.forEach((text, index) => {
    const position = index; // the first header is position 0; every later line counts
    const m = HUNK.exec(text);
    if (m) {
      const h: Hunk = {
        header: text,
        oldStart: Number(m[1]),
        oldCount: m[2] === undefined ? 1 : Number(m[2]),
        newStart: Number(m[3]),
        newCount: m[4] === undefined ? 1 : Number(m[4]),
        position,
        patchLines: [text],
        lines: [],
      };
      hunks.push(h);
      // With 3 lines of context a side has 0 lines only when it is empty (`-0,0`): its counter
      // stays 0, as GitLab's parser leaves it (line codes `<sha>_0_<n>` in an added file).
      oldCounter = h.oldStart;
      newCounter = h.newStart;
      return;
    }
    const h = hunks[hunks.length - 1];
    if (h === undefined) return;
    h.patchLines.push(text);
    const c = text.charAt(0);
    if (c === '\\') return;
    const kind: LineKind = c === '+' ? 'add' : c === '-' ? 'del' : 'ctx';
    const line: DiffLine = {
      kind,
      oldLine: kind === 'add' ? null : oldCounter,
      newLine: kind === 'del' ? null : newCounter,
      oldPos: oldCounter,
      newPos: newCounter,
      position,
      hunk: hunks.length - 1,
      text: text.slice(1),
    };
    h.lines.push(line);
    lines.push(line);
    if (kind === 'add') {
      newCounter++;
      additions++;
    } else if (kind === 'del') {
      oldCounter++;
      deletions++;
    } else {
      oldCounter++;
      newCounter++;
    }
  });
  return {
    status,
    oldPath,
    newPath,
    oldMode: e.oldMode,
    newMode: e.newMode,
    oldBlob: e.oldBlob,
    newBlob: e.newBlob,
    similarity: e.score,
    binary,
    hunks,
    lines,
    patch: patchLines.join('\n'),
    additions,
    deletions,
    raw: section,
  };
}

// ---------------------------------------------------------------- GitHub

export type Side = 'LEFT' | 'RIGHT';

/** The diff line a GitHub (line, side) names, or undefined. */
export function githubLine(f: DiffFile, line: number, side: Side): DiffLine | undefined {
  return f.lines.find((l) => (side === 'RIGHT' ? l.newLine === line : l.oldLine === line));
}

/** The diff line at a legacy `position`, or undefined. */
export function lineAtPosition(f: DiffFile, position: number): DiffLine | undefined {
  return f.lines.find((l) => l.position === position);
}

/** GitHub's `diff_hunk` for a comment ending at `line`: the hunk from its header to that line. */
export function diffHunkThrough(f: DiffFile, line: DiffLine): string {
  const h = f.hunks[line.hunk] as Hunk;
  return h.patchLines.slice(0, line.position - h.position + 1).join('\n');
}

export type GithubPlacement = { ok: true; end: DiffLine; start: DiffLine | null } | { ok: false; error: string };

/**
 * Checks a GitHub review comment's (start_line, start_side) … (line, side) against the diff.
 * Messages are GitHub's.
 */
export function placeGithubComment(f: DiffFile, line: number, side: Side, startLine: number | null, startSide: Side | null): GithubPlacement {
  const end = githubLine(f, line, side);
  if (end === undefined) return { ok: false, error: 'Line could not be resolved' };
  if (startLine === null) return { ok: true, end, start: null };
  const start = githubLine(f, startLine, startSide ?? side);
  if (start === undefined) return { ok: false, error: 'Start line could not be resolved' };
  if (start.hunk !== end.hunk) return { ok: false, error: 'Pull request review thread start line must be part of the same hunk as the line.' };
  if (start.position >= end.position) return { ok: false, error: 'Pull request review thread start line must precede the end line.' };
  return { ok: true, end, start };
}

// ---------------------------------------------------------------- GitLab

export function sha1(text: string): string {
  return createHash('sha1').update(text).digest('hex');
}

/** GitLab's line code of a diff line: `<sha1(new path)>_<old counter>_<new counter>`. */
export function gitlabLineCode(f: DiffFile, l: DiffLine): string {
  return `${sha1(gitlabPaths(f).newPath)}_${l.oldPos}_${l.newPos}`;
}

/** The diff line a GitLab (old_line, new_line) pair names, or undefined. */
export function gitlabLine(f: DiffFile, oldLine: number | null, newLine: number | null): DiffLine | undefined {
  return f.lines.find((l) => l.oldLine === oldLine && l.newLine === newLine);
}

/** The diff file a GitLab position's (old_path, new_path) names, or undefined. */
export function gitlabFile(d: PullDiff, oldPath: string | null, newPath: string | null): DiffFile | undefined {
  return d.files.find((f) => {
    const p = gitlabPaths(f);
    if (newPath !== null && newPath !== p.newPath) return false;
    if (oldPath !== null && oldPath !== p.oldPath) return false;
    if (newPath === null && oldPath === null) return false;
    // A renamed file is found only by both of its names (GitLab diffs the two paths).
    if (f.status === 'renamed' && (oldPath === null || newPath === null)) return false;
    return true;
  });
}
