import { z } from 'zod';

/**
 * The immutable capture of a target. Field names here are a public contract: `rennet capture
 * --json` prints exactly this shape (docs/capture-json.md).
 */

export const FileStatus = z.enum(['added', 'modified', 'deleted', 'renamed']);
export type FileStatus = z.infer<typeof FileStatus>;

export const Side = z.enum(['base', 'head']);
export type Side = z.infer<typeof Side>;

/** One diff line. `text` excludes the +/-/space marker and the newline; a CR stays. */
export const DiffLine = z.object({
  kind: z.enum(['context', 'add', 'del']),
  text: z.string(),
  /** 1-based line on the base side; null for an added line. */
  oldLine: z.number().int().positive().nullable(),
  /** 1-based line on the head side; null for a deleted line. */
  newLine: z.number().int().positive().nullable(),
  /** git's "\ No newline at end of file" followed this line. */
  noNewlineAtEof: z.boolean().optional(),
});
export type DiffLine = z.infer<typeof DiffLine>;

export const Hunk = z.object({
  /** Content-derived: `h-` + 16 hex of SHA-256 over path, @@ header and body. */
  id: z.string(),
  /** The verbatim @@ line. */
  header: z.string(),
  oldStart: z.number().int().nonnegative(),
  oldLines: z.number().int().nonnegative(),
  newStart: z.number().int().nonnegative(),
  newLines: z.number().int().nonnegative(),
  additions: z.number().int().nonnegative(),
  deletions: z.number().int().nonnegative(),
  lines: z.array(DiffLine),
});
export type Hunk = z.infer<typeof Hunk>;

/** A 1-based inclusive line span on one side of one hunk: what a citation may name. */
export const ChangedRegion = z.object({
  side: Side,
  startLine: z.number().int().positive(),
  endLine: z.number().int().positive(),
  /** The hunk this region came from; null for a truncated file's uncaptured tail. */
  hunkId: z.string().nullable(),
});
export type ChangedRegion = z.infer<typeof ChangedRegion>;

export const Truncation = z.object({
  reason: z.enum(['file-size', 'patch-size']),
  /** The limit that was hit, in bytes. */
  limitBytes: z.number().int().positive(),
  /** Blob sizes when known. */
  baseBytes: z.number().int().nonnegative().nullable(),
  headBytes: z.number().int().nonnegative().nullable(),
  /** First line per side that was not captured; everything from there to end of file counts as changed. */
  tailFrom: z.object({ base: z.number().int().positive().nullable(), head: z.number().int().positive().nullable() }),
});
export type Truncation = z.infer<typeof Truncation>;

export const FileChange = z.object({
  path: z.string(),
  /** The previous path of a rename; null otherwise. */
  oldPath: z.string().nullable(),
  status: FileStatus,
  /** git mode strings ("100644", "100755", "120000", "160000"); null on the absent side. */
  oldMode: z.string().nullable(),
  newMode: z.string().nullable(),
  modeChanged: z.boolean(),
  /** Full blob ids; null on the absent side. A submodule's are commit ids. */
  oldOid: z.string().nullable(),
  newOid: z.string().nullable(),
  binary: z.boolean(),
  /** A gitlink: its content is another repository and is not reviewed here (blocked, stated). */
  submodule: z.boolean(),
  truncated: z.boolean(),
  truncation: Truncation.nullable(),
  /** Rename similarity in percent, when git reported one. */
  similarity: z.number().int().min(0).max(100).nullable(),
  /** Counted lines; null when unknown (binary, submodule, or truncated by file size). */
  additions: z.number().int().nonnegative().nullable(),
  deletions: z.number().int().nonnegative().nullable(),
  hunks: z.array(Hunk),
  regions: z.array(ChangedRegion),
});
export type FileChange = z.infer<typeof FileChange>;

/** What a git mode says a path is (its S_IFMT bits): an executable is still a regular file. */
export type ModeKind = 'regular' | 'symlink' | 'submodule' | 'other';

export function modeKind(mode: string): ModeKind {
  switch (Number.parseInt(mode, 8) & 0o170000) {
    case 0o100000:
      return 'regular';
    case 0o120000:
      return 'symlink';
    case 0o160000:
      return 'submodule';
    default:
      return 'other';
  }
}

/**
 * A type change (file ↔ symlink ↔ submodule): both sides exist and their modes name different
 * kinds. It is captured as one `modified` file with `modeChanged`; no separate field says so.
 */
export function typeChanged(file: Pick<FileChange, 'oldMode' | 'newMode'>): boolean {
  return file.oldMode !== null && file.newMode !== null && modeKind(file.oldMode) !== modeKind(file.newMode);
}

export const TargetKind = z.enum(['branch', 'working-tree']);
export type TargetKind = z.infer<typeof TargetKind>;

export const PatchsetTotals = z.object({
  files: z.number().int().nonnegative(),
  additions: z.number().int().nonnegative(),
  deletions: z.number().int().nonnegative(),
  hunks: z.number().int().nonnegative(),
  binary: z.number().int().nonnegative(),
  submodules: z.number().int().nonnegative(),
  truncated: z.number().int().nonnegative(),
  /** Files whose line counts are unknown (binary, submodule, size-truncated). */
  uncounted: z.number().int().nonnegative(),
});
export type PatchsetTotals = z.infer<typeof PatchsetTotals>;

export const CaptureOptions = z.object({
  maxFileBytes: z.number().int().positive(),
  maxPatchBytesPerFile: z.number().int().positive(),
  contextLines: z.number().int().nonnegative(),
});
export type CaptureOptions = z.infer<typeof CaptureOptions>;

export const Patchset = z.object({
  /** Content-addressed: `ps-` + 16 hex of SHA-256 over everything below. */
  id: z.string(),
  /** The merge-base of the requested base and head: the diff's old side (full commit id). */
  base: z.string(),
  /** The reviewed commit (full id). A working-tree capture records a synthetic commit held by a hidden ref. */
  head: z.string(),
  headTree: z.string(),
  /** The refs as asked; for a working-tree capture, headRef is the checked-out branch. */
  baseRef: z.string(),
  headRef: z.string(),
  /** The base ref's own commit (may be ahead of `base`). */
  baseTip: z.string(),
  targetKind: TargetKind,
  /** The exact command that reproduces this diff. */
  diffCommand: z.string(),
  options: CaptureOptions,
  totals: PatchsetTotals,
  files: z.array(FileChange),
});
export type Patchset = z.infer<typeof Patchset>;

/** What the panel and lists need without the hunks. */
export const FileSummary = FileChange.omit({ hunks: true, regions: true }).extend({
  hunkCount: z.number().int().nonnegative(),
});
export type FileSummary = z.infer<typeof FileSummary>;

export const PatchsetSummary = Patchset.omit({ files: true }).extend({ files: z.array(FileSummary) });
export type PatchsetSummary = z.infer<typeof PatchsetSummary>;

export function summarizePatchset(patchset: Patchset): PatchsetSummary {
  const { files, ...rest } = patchset;
  return {
    ...rest,
    files: files.map(({ hunks, regions: _regions, ...file }) => ({ ...file, hunkCount: hunks.length })),
  };
}

// ─── Naming a file on a side ─────────────────────────────────────────────────────────────────

/** What naming a captured file by path needs (`FileChange` and `FileSummary` both fit). */
export type SideNamedFile = Pick<FileChange, 'path' | 'oldPath' | 'status'>;

/** The path a file has on a side: a rename's base side carries its old path. */
export function pathOnSide(file: SideNamedFile, side: Side): string {
  return side === 'base' ? (file.oldPath ?? file.path) : file.path;
}

/** Whether a file has that side at all: an added file has no base, a deleted one no head. */
export function hasSide(file: SideNamedFile, side: Side): boolean {
  return side === 'base' ? file.status !== 'added' : file.status !== 'deleted';
}

/** The files of one capture by the names they have on each side (see `filesOnSides`). */
export interface FilesOnSides<F> {
  on(path: string, side: Side): F | undefined;
}

/**
 * THE rule for which captured file a path names on a side; the host (citations, excerpts, blob
 * reads, the HTML report) and the extension (marks, threads, Open Changes, the panel) all ask it,
 * so a path that could name two files (a rename's old path that is also another file's path, or a
 * deleted and an added file at one path) means the same file everywhere:
 * - head: the file whose path it is, unless that file was deleted;
 * - base: among the files that have a base (not added), the one whose base path (`pathOnSide`) it
 *   is; failing that, a rename named by its new path (citations may name a rename's base either way).
 * Built once in O(files); each lookup is a map read. Should two files still tie, the first wins.
 */
export function filesOnSides<F extends SideNamedFile>(files: readonly F[]): FilesOnSides<F> {
  const head = new Map<string, F>();
  const base = new Map<string, F>();
  const renamedTo = new Map<string, F>();
  const keep = (map: Map<string, F>, path: string, file: F): void => {
    if (!map.has(path)) map.set(path, file);
  };
  for (const file of files) {
    if (hasSide(file, 'head')) keep(head, file.path, file);
    if (!hasSide(file, 'base')) continue;
    keep(base, pathOnSide(file, 'base'), file);
    if (file.oldPath !== null) keep(renamedTo, file.path, file);
  }
  return { on: (path, side) => (side === 'head' ? head.get(path) : (base.get(path) ?? renamedTo.get(path))) };
}

/** The captured file `path` names on `side` (`filesOnSides` for one lookup); undefined: none. */
export function fileOnSide<F extends SideNamedFile>(files: readonly F[], path: string, side: Side): F | undefined {
  return filesOnSides(files).on(path, side);
}
