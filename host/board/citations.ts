import { filesOnSides, type FileChange, type Patchset } from '../../protocol/patchset';
import { escapeControls } from '../../protocol/text';
import type { CitationIndexLike, CitationResolution } from './state';

/**
 * The citation predicate: is every line of a 1-based inclusive range inside ONE captured changed
 * region on the named side of a path? Built once per patchset in O(files + regions); each
 * resolution is a map lookup plus a binary search over that side's sorted regions.
 */

type SideName = 'base' | 'head';

export interface LineCounts {
  base?: number;
  head?: number;
}

export interface CitationIndexOptions {
  /** Known file lengths per path (the head path; a rename's old name may be given too). */
  lineCounts?: ReadonlyMap<string, LineCounts> | Readonly<Record<string, LineCounts>>;
}

/** One side of one file: its regions sorted by start line, as parallel arrays. */
interface SideRegions {
  /** The name the file has on this side (a rename's base side is its old name). */
  path: string;
  starts: number[];
  ends: number[];
  hunkIds: string[];
  /** First uncaptured line of a truncated side: everything from it to end of file counts as changed. */
  tailFrom: number | null;
  lineCount: number | null;
}

interface FileEntry {
  file: FileChange;
  base: SideRegions | null;
  head: SideRegions | null;
  lineAddressable: boolean;
}

export interface CitationIndex extends CitationIndexLike {
  /** Every path a citation may name: head paths, and a rename's old name. */
  readonly paths: readonly string[];
  hasPath(path: string): boolean;
  /** Changed paths whose last segment is `basename`. */
  pathsNamed(basename: string): readonly string[];
  /** Number of captured changed regions (both sides). */
  readonly regionCount: number;
  changedPath(path: string): string;
}

/**
 * Which changed file a path names on a side, as citations read it: the one rule of
 * protocol/patchset.ts (`filesOnSides`), with each file's value computed once. Built in O(files).
 */
export interface FilesBySide<T> {
  on(path: string, side: SideName): T | undefined;
  /** Every path a citation may name: head paths, then renames' old names. */
  readonly paths: readonly string[];
}

export function filesBySide<T>(files: readonly FileChange[], valueOf: (file: FileChange) => T): FilesBySide<T> {
  const named = filesOnSides(files);
  const values = new Map<FileChange, T>();
  for (const file of files) values.set(file, valueOf(file));
  const oldNames = files.flatMap((file) => (file.oldPath !== null ? [file.oldPath] : []));
  return {
    on: (path, side) => {
      const file = named.on(path, side);
      return file === undefined ? undefined : values.get(file);
    },
    paths: [...new Set([...files.map((file) => file.path), ...oldNames])],
  };
}

export function buildCitationIndex(patchset: Patchset, options: CitationIndexOptions = {}): CitationIndex {
  const counts = toCountLookup(options.lineCounts);
  const files = filesBySide(patchset.files, (file) => entryOf(file, counts));
  const byBasename = new Map<string, string[]>();
  const namedSeen = new Set<string>();
  let regionCount = 0;

  for (const file of patchset.files) {
    regionCount += file.regions.length;
    for (const path of file.oldPath !== null ? [file.path, file.oldPath] : [file.path]) {
      if (namedSeen.has(path)) continue;
      namedSeen.add(path);
      const name = basenameOf(path);
      const list = byBasename.get(name);
      if (list) list.push(path);
      else byBasename.set(name, [path]);
    }
  }
  const paths = files.paths;
  const known = new Set(paths);
  // The read tools print a path with control characters escaped and accept either form; so does a citation.
  const byEscaped = new Map<string, string>();
  for (const path of paths) {
    const escaped = escapeControls(path);
    if (escaped !== path && !known.has(escaped) && !byEscaped.has(escaped)) byEscaped.set(escaped, path);
  }
  const changedPath = (path: string): string => (known.has(path) ? path : (byEscaped.get(path) ?? path));

  function resolve(givenPath: string, side: SideName, start: number, end: number): CitationResolution {
    const path = changedPath(givenPath);
    const onSide = files.on(path, side);
    // A path that names no file on this side may name one on the other: say why it cannot be cited.
    const entry = onSide ?? files.on(path, side === 'head' ? 'base' : 'head');
    const range = `${path}:${rangeText(start, end)}`;
    if (!entry) return refuse('unknown-path', null, `${path} is not a changed file of this patchset`);
    if (!onSide && side === 'head' && entry.file.oldPath === path) {
      return refuse('side-absent', null, `${path} was renamed to ${entry.file.path}; its head side is ${entry.file.path}, and ${path} names only the base side`);
    }
    if (!entry.lineAddressable) {
      const what = entry.file.submodule ? 'a submodule (its content is another repository)' : 'a binary file';
      return refuse('not-line-addressable', null, `${path} is ${what}; it has no lines to cite`);
    }
    const regions = onSide ? entry[side] : null;
    if (!regions) {
      const why = side === 'base' ? 'was added by this change, so it has no base side' : 'was deleted by this change, so it has no head side';
      return refuse('side-absent', null, `${path} ${why}; cite the ${side === 'base' ? 'head' : 'base'} side`);
    }
    if (!Number.isInteger(start) || !Number.isInteger(end) || start < 1 || end < start) {
      return refuse('outside-changed-regions', nearestText(regions, start, end), `${range} is not a 1-based line range with start ≤ end`);
    }
    if (regions.lineCount !== null && end > regions.lineCount) {
      return refuse(
        'past-end-of-file',
        null,
        `${range} (${side}) runs past the end of the file, which has ${regions.lineCount.toLocaleString('en-US')} line${regions.lineCount === 1 ? '' : 's'} on that side`,
      );
    }
    if (regions.tailFrom !== null && start >= regions.tailFrom) {
      return { ok: true, path: regions.path, hunkIds: [] };
    }
    const i = lastStartAtOrBefore(regions.starts, start);
    if (i >= 0 && end <= (regions.ends[i] as number)) {
      return { ok: true, path: regions.path, hunkIds: [regions.hunkIds[i] as string] };
    }
    return refuse('outside-changed-regions', nearestText(regions, start, end), `${range} (${side}) is not inside a changed region`);
  }

  return {
    patchsetId: patchset.id,
    paths,
    regionCount,
    resolve,
    changedPath,
    hasPath: (path) => known.has(path),
    pathsNamed: (basename) => byBasename.get(basename) ?? [],
  };
}

function refuse(reason: Extract<CitationResolution, { ok: false }>['reason'], nearest: string | null, message: string): CitationResolution {
  return { ok: false, reason, nearest, message };
}

function entryOf(file: FileChange, counts: (path: string) => LineCounts | undefined): FileEntry {
  const lineAddressable = !file.binary && !file.submodule;
  const hasBase = file.oldOid !== null && file.status !== 'added';
  const hasHead = file.newOid !== null && file.status !== 'deleted';
  const known = counts(file.path);
  const knownOld = file.oldPath !== null ? counts(file.oldPath) : undefined;
  const side = (name: SideName, path: string, lineCount: number | undefined): SideRegions => {
    const own = file.regions.filter((r) => r.side === name && r.hunkId !== null).sort((a, b) => a.startLine - b.startLine);
    return {
      path,
      starts: own.map((r) => r.startLine),
      ends: own.map((r) => r.endLine),
      hunkIds: own.map((r) => r.hunkId as string),
      tailFrom: file.truncation?.tailFrom[name] ?? null,
      lineCount: lineCount ?? null,
    };
  };
  return {
    file,
    lineAddressable,
    base: hasBase ? side('base', file.oldPath ?? file.path, knownOld?.base ?? known?.base) : null,
    head: hasHead ? side('head', file.path, known?.head) : null,
  };
}

function toCountLookup(counts: CitationIndexOptions['lineCounts']): (path: string) => LineCounts | undefined {
  if (!counts) return () => undefined;
  if (counts instanceof Map) return (path) => (counts as ReadonlyMap<string, LineCounts>).get(path);
  const record = counts as Readonly<Record<string, LineCounts>>;
  return (path) => (Object.prototype.hasOwnProperty.call(record, path) ? record[path] : undefined);
}

/** Index of the last of ascending `starts` that is ≤ line, or -1 (a binary search). */
export function lastStartAtOrBefore(starts: readonly number[], line: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if ((starts[mid] as number) <= line) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/** The changed range on this side closest to [start, end] (a truncated tail counts), as "path:a-b". */
function nearestText(regions: SideRegions, start: number, end: number): string | null {
  const i = lastStartAtOrBefore(regions.starts, start);
  let best: { start: number; end: number | null; distance: number } | null = null;
  const consider = (s: number, e: number | null) => {
    const distance = e !== null && e < start ? start - e : s > end ? s - end : 0;
    if (!best || distance < best.distance) best = { start: s, end: e, distance };
  };
  for (const j of [i, i + 1]) {
    if (j >= 0 && j < regions.starts.length) consider(regions.starts[j] as number, regions.ends[j] as number);
  }
  if (regions.tailFrom !== null) consider(regions.tailFrom, null);
  if (!best) return null;
  const found = best as { start: number; end: number | null };
  return found.end === null ? `${regions.path}:${found.start} to end of file` : `${regions.path}:${rangeText(found.start, found.end)}`;
}

export function rangeText(start: number, end: number): string {
  return start === end ? `${start}` : `${start}-${end}`;
}

function basenameOf(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash < 0 ? path : path.slice(slash + 1);
}
