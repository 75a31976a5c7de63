import type { ChangedRegion, DiffLine, FileChange, FileStatus, Hunk, Truncation } from '../../protocol/patchset';
import { hunkId } from './ids';

/**
 * Pure parsing of `git diff --raw -p -z` output into file changes. The raw records (NUL
 * separated, exact paths) say what changed; the patch sections, in the same order, say how.
 * Paths are never read from patch headers, which git quotes.
 */

export interface RawRecord {
  oldMode: string | null;
  newMode: string | null;
  oldOid: string | null;
  newOid: string | null;
  /** git's status letter (A, D, M, T, R, C, U, X). */
  letter: string;
  score: number | null;
  path: string;
  oldPath: string | null;
}

export interface ParseOptions {
  /** A file whose patch text is longer keeps only the hunks that fit; the rest is a stated tail. */
  maxPatchBytesPerFile: number;
}

export class DiffParseError extends Error {
  override name = 'DiffParseError';
}

const NUL = 0;
const COLON = 0x3a;
const ZERO_OID = /^0+$/;
const SUBMODULE_MODE = '160000';
const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;
const DIFF_HEADER = Buffer.from('diff --git ');

function readUntilNul(buf: Buffer, from: number): [string, number] {
  const end = buf.indexOf(NUL, from);
  if (end < 0) throw new DiffParseError(`unterminated raw record at byte ${from}`);
  return [buf.toString('utf8', from, end), end + 1];
}

/** Splits the combined output into raw records and the byte offset where the patch begins. */
export function parseRaw(buf: Buffer): { records: RawRecord[]; patchStart: number } {
  const records: RawRecord[] = [];
  let p = 0;
  while (p < buf.length && buf[p] === COLON) {
    let meta: string;
    [meta, p] = readUntilNul(buf, p + 1);
    const [oldMode, newMode, oldOid, newOid, status] = meta.split(' ');
    if (!oldMode || !newMode || !oldOid || !newOid || !status) {
      throw new DiffParseError(`malformed raw record ":${meta}"`);
    }
    const letter = status.charAt(0);
    const score = status.length > 1 ? Number.parseInt(status.slice(1), 10) : null;
    let path: string;
    [path, p] = readUntilNul(buf, p);
    let oldPath: string | null = null;
    if (letter === 'R' || letter === 'C') {
      oldPath = path;
      [path, p] = readUntilNul(buf, p);
    }
    records.push({
      oldMode: oldMode === '000000' ? null : oldMode,
      newMode: newMode === '000000' ? null : newMode,
      oldOid: ZERO_OID.test(oldOid) ? null : oldOid,
      newOid: ZERO_OID.test(newOid) ? null : newOid,
      letter,
      score: score !== null && Number.isFinite(score) ? score : null,
      path,
      oldPath,
    });
  }
  while (p < buf.length && buf[p] === NUL) p++;
  return { records, patchStart: p };
}

/** Byte ranges of each "diff --git" section. Content lines never start with it (they carry a marker). */
export function splitPatchSections(buf: Buffer, start: number): Array<[number, number]> {
  const starts: number[] = [];
  let p = start;
  while (p < buf.length) {
    const at = buf.indexOf(DIFF_HEADER, p);
    if (at < 0) break;
    if (at === start || buf[at - 1] === 0x0a) starts.push(at);
    p = at + DIFF_HEADER.length;
  }
  return starts.map((s, i) => [s, starts[i + 1] ?? buf.length]);
}

function statusOf(letter: string): FileStatus {
  switch (letter) {
    case 'A':
    case 'C':
      return 'added';
    case 'D':
      return 'deleted';
    case 'R':
      return 'renamed';
    default:
      return 'modified';
  }
}

interface ParsedSection {
  binary: boolean;
  hunks: Hunk[];
  /** Byte length of each hunk's text, parallel to hunks. */
  hunkBytes: number[];
}

/** Parses one file's patch section (header lines, then @@ hunks). */
export function parseSection(path: string, text: string): ParsedSection {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const hunks: Hunk[] = [];
  const hunkBytes: number[] = [];
  let binary = false;
  let i = 0;
  for (; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.startsWith('@@ ')) break;
    if (line.startsWith('Binary files ') && line.endsWith(' differ')) binary = true;
  }
  while (i < lines.length) {
    const header = lines[i] as string;
    const match = HUNK_HEADER.exec(header);
    if (!match) throw new DiffParseError(`expected a hunk header in ${path}, found "${header.slice(0, 80)}"`);
    const oldStart = Number(match[1]);
    const oldLines = match[2] === undefined ? 1 : Number(match[2]);
    const newStart = Number(match[3]);
    const newLines = match[4] === undefined ? 1 : Number(match[4]);
    i++;
    let oldLeft = oldLines;
    let newLeft = newLines;
    let oldLine = oldStart;
    let newLine = newStart;
    let additions = 0;
    let deletions = 0;
    const body: string[] = [];
    const diffLines: DiffLine[] = [];
    while (i < lines.length && (oldLeft > 0 || newLeft > 0 || (lines[i] as string).startsWith('\\'))) {
      const raw = lines[i] as string;
      const marker = raw.charAt(0);
      const content = raw.slice(1);
      if (marker === '\\') {
        const previous = diffLines[diffLines.length - 1];
        if (previous) previous.noNewlineAtEof = true;
      } else if (marker === '+') {
        diffLines.push({ kind: 'add', text: content, oldLine: null, newLine: newLine++ });
        newLeft--;
        additions++;
      } else if (marker === '-') {
        diffLines.push({ kind: 'del', text: content, oldLine: oldLine++, newLine: null });
        oldLeft--;
        deletions++;
      } else if (marker === ' ' || raw === '') {
        // An empty line inside a hunk is a context line whose marker space was lost by a tool.
        diffLines.push({ kind: 'context', text: content, oldLine: oldLine++, newLine: newLine++ });
        oldLeft--;
        newLeft--;
      } else {
        throw new DiffParseError(`unexpected line in hunk of ${path}: "${raw.slice(0, 80)}"`);
      }
      body.push(raw);
      i++;
    }
    if (oldLeft > 0 || newLeft > 0) throw new DiffParseError(`hunk "${header}" of ${path} ends early`);
    const bodyText = body.join('\n');
    hunks.push({
      id: hunkId(path, header, bodyText),
      header,
      oldStart,
      oldLines,
      newStart,
      newLines,
      additions,
      deletions,
      lines: diffLines,
    });
    hunkBytes.push(Buffer.byteLength(header) + Buffer.byteLength(bodyText) + 2);
  }
  return { binary, hunks, hunkBytes };
}

export function regionsOf(hunks: readonly Hunk[]): ChangedRegion[] {
  const regions: ChangedRegion[] = [];
  for (const hunk of hunks) {
    if (hunk.oldLines > 0) {
      regions.push({ side: 'base', startLine: hunk.oldStart, endLine: hunk.oldStart + hunk.oldLines - 1, hunkId: hunk.id });
    }
    if (hunk.newLines > 0) {
      regions.push({ side: 'head', startLine: hunk.newStart, endLine: hunk.newStart + hunk.newLines - 1, hunkId: hunk.id });
    }
  }
  return regions;
}

/** Parses the whole combined output. Files appear in git's order. */
export function parseDiffOutput(buf: Buffer, options: ParseOptions): FileChange[] {
  const { records, patchStart } = parseRaw(buf);
  const sections = splitPatchSections(buf, patchStart);
  if (sections.length !== records.length) {
    throw new DiffParseError(`git reported ${records.length} changed files but ${sections.length} patch sections`);
  }
  return records.map((record, index) => {
    const [from, to] = sections[index] as [number, number];
    return fileChangeOf(record, buf.toString('utf8', from, to), to - from, options);
  });
}

export function fileChangeOf(record: RawRecord, sectionText: string, sectionBytes: number, options: ParseOptions): FileChange {
  const submodule = record.oldMode === SUBMODULE_MODE || record.newMode === SUBMODULE_MODE;
  const base = {
    path: record.path,
    oldPath: record.letter === 'R' ? record.oldPath : null,
    status: statusOf(record.letter),
    oldMode: record.oldMode,
    newMode: record.newMode,
    modeChanged: record.oldMode !== null && record.newMode !== null && record.oldMode !== record.newMode,
    oldOid: record.oldOid,
    newOid: record.newOid,
    similarity: record.letter === 'R' ? record.score : null,
  };
  if (submodule) {
    // A gitlink's "content" is another repository's commit id; it is not reviewed here.
    return { ...base, binary: false, submodule: true, truncated: false, truncation: null, additions: null, deletions: null, hunks: [], regions: [] };
  }
  const parsed = parseSection(record.path, sectionText);
  if (parsed.binary) {
    return { ...base, binary: true, submodule: false, truncated: false, truncation: null, additions: null, deletions: null, hunks: [], regions: [] };
  }
  const additions = parsed.hunks.reduce((n, h) => n + h.additions, 0);
  const deletions = parsed.hunks.reduce((n, h) => n + h.deletions, 0);
  let hunks = parsed.hunks;
  let truncation: Truncation | null = null;
  if (sectionBytes > options.maxPatchBytesPerFile) {
    let used = 0;
    let kept = 0;
    while (kept < hunks.length && used + (parsed.hunkBytes[kept] as number) <= options.maxPatchBytesPerFile) {
      used += parsed.hunkBytes[kept] as number;
      kept++;
    }
    if (kept < hunks.length) {
      const firstDropped = hunks[kept] as Hunk;
      truncation = {
        reason: 'patch-size',
        limitBytes: options.maxPatchBytesPerFile,
        baseBytes: null,
        headBytes: null,
        tailFrom: {
          base: record.oldOid ? Math.max(1, firstDropped.oldStart) : null,
          head: record.newOid ? Math.max(1, firstDropped.newStart) : null,
        },
      };
      hunks = hunks.slice(0, kept);
    }
  }
  return {
    ...base,
    binary: false,
    submodule: false,
    truncated: truncation !== null,
    truncation,
    additions,
    deletions,
    hunks,
    regions: regionsOf(hunks),
  };
}
