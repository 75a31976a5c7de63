import { isUtf8 } from 'node:buffer';
import { typeChanged, type ChangedRegion, type DiffLine, type FileChange, type FileStatus, type Hunk, type Truncation } from '../../protocol/patchset';
import { hunkId } from './ids';

/**
 * Pure parsing of `git diff --raw -p -z` output into file changes. The raw records (NUL
 * separated, exact paths) say what changed; the patch sections, in the same order, say how.
 * Paths are never read from patch headers, which git quotes.
 *
 * One record has one section, except a type change (file ↔ symlink ↔ submodule): git lists the
 * path once (status T) but prints two sections for it, the old kind's deletion then the new
 * kind's creation. Both become one `modified` file: the deletion's hunks carry its base lines and
 * the creation's its head lines, so each side keeps its own line numbers.
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

/**
 * git named a changed file by a path that is not valid UTF-8. Paths are text everywhere past the
 * capture, so decoding it would replace its bytes and could merge it with another file's name
 * (two such files read as one): the capture is refused instead, naming the path's bytes.
 */
export class NonUtf8PathError extends DiffParseError {
  override name = 'NonUtf8PathError';
  constructor(readonly pathBytes: string) {
    super(
      `git names a changed file by a path that is not valid UTF-8 ("${pathBytes}"); Rennet names files by their UTF-8 paths, so nothing was captured — rename the file to a UTF-8 name to review this change`,
    );
  }
}

/** A path's bytes as UTF-8 text; a path that is not valid UTF-8 throws NonUtf8PathError. */
function pathText(buf: Buffer, from: number, to: number): string {
  const bytes = buf.subarray(from, to);
  if (!isUtf8(bytes)) throw new NonUtf8PathError(escapedBytes(bytes));
  return bytes.toString('utf8');
}

/** Printable ASCII as is; every other byte (and \ and ") as \xNN. */
function escapedBytes(bytes: Buffer): string {
  let out = '';
  for (const b of bytes) out += b >= 0x20 && b < 0x7f && b !== 0x5c && b !== 0x22 ? String.fromCharCode(b) : `\\x${b.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}

const NUL = 0;
const COLON = 0x3a;
const ZERO_OID = /^0+$/;
const SUBMODULE_MODE = '160000';
const PLUS = 0x2b;
const MINUS = 0x2d;
const SPACE = 0x20;
const BACKSLASH = 0x5c;
const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;
const DIFF_HEADER = Buffer.from('diff --git ');

/** The raw records at the start of the combined output and the offset where the patch begins. */
export function parseRaw(buf: Buffer): { records: RawRecord[]; patchStart: number } {
  const records: RawRecord[] = [];
  let p = 0;
  while (p < buf.length && buf[p] === COLON) {
    const read = tryReadRecord(buf, p);
    if (!read) throw new DiffParseError(`unterminated raw record at byte ${p}`);
    records.push(read.record);
    p = read.next;
  }
  while (p < buf.length && buf[p] === NUL) p++;
  return { records, patchStart: p };
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
}

/** One file's patch section as git printed it. */
export interface PatchSection {
  text: string;
  /** Its length in bytes (the text is decoded UTF-8). */
  bytes: number;
}

/** Parses one file's patch section (header lines, then @@ hunks), scanning by offsets. */
export function parseSection(path: string, text: string): ParsedSection {
  const hunks: Hunk[] = [];
  let binary = false;
  let pos = 0;
  const length = text.endsWith('\n') ? text.length - 1 : text.length;
  /** The line at an offset (without its newline) and the offset after it; null at the end. */
  const lineAt = (at: number): [string, number] | null => {
    if (at >= length) return null;
    let nl = text.indexOf('\n', at);
    if (nl < 0 || nl > length) nl = length;
    return [text.slice(at, nl), nl + 1];
  };
  for (let line = lineAt(pos); line; line = lineAt(pos)) {
    if (line[0].startsWith('@@ ')) break;
    if (line[0].startsWith('Binary files ') && line[0].endsWith(' differ')) binary = true;
    pos = line[1];
  }
  for (let headerLine = lineAt(pos); headerLine; headerLine = lineAt(pos)) {
    const header = headerLine[0];
    const match = HUNK_HEADER.exec(header);
    if (!match) throw new DiffParseError(`expected a hunk header in ${path}, found "${header.slice(0, 80)}"`);
    const oldStart = Number(match[1]);
    const oldLines = match[2] === undefined ? 1 : Number(match[2]);
    const newStart = Number(match[3]);
    const newLines = match[4] === undefined ? 1 : Number(match[4]);
    pos = headerLine[1];
    const bodyStart = pos;
    let bodyEnd = pos;
    let oldLeft = oldLines;
    let newLeft = newLines;
    let oldLine = oldStart;
    let newLine = newStart;
    let additions = 0;
    let deletions = 0;
    const diffLines: DiffLine[] = [];
    // Hot loop (every diff line): index arithmetic, one string per line, no tuples. A line may
    // start at `length` itself: an empty last line before the section's final newline.
    while (pos < length || (pos === length && length < text.length)) {
      let nl = text.indexOf('\n', pos);
      if (nl < 0 || nl > length) nl = length;
      const marker = text.charCodeAt(pos);
      if (oldLeft <= 0 && newLeft <= 0 && marker !== BACKSLASH) break;
      if (marker === BACKSLASH) {
        const previous = diffLines[diffLines.length - 1];
        if (previous) previous.noNewlineAtEof = true;
      } else if (marker === PLUS) {
        diffLines.push({ kind: 'add', text: text.slice(pos + 1, nl), oldLine: null, newLine: newLine++ });
        newLeft--;
        additions++;
      } else if (marker === MINUS) {
        diffLines.push({ kind: 'del', text: text.slice(pos + 1, nl), oldLine: oldLine++, newLine: null });
        oldLeft--;
        deletions++;
      } else if (marker === SPACE || nl === pos) {
        // An empty line inside a hunk is a context line whose marker space was lost by a tool.
        diffLines.push({ kind: 'context', text: nl === pos ? '' : text.slice(pos + 1, nl), oldLine: oldLine++, newLine: newLine++ });
        oldLeft--;
        newLeft--;
      } else {
        throw new DiffParseError(`unexpected line in hunk of ${path}: "${text.slice(pos, Math.min(nl, pos + 80))}"`);
      }
      bodyEnd = nl;
      pos = nl + 1;
    }
    if (oldLeft > 0 || newLeft > 0) throw new DiffParseError(`hunk "${header}" of ${path} ends early`);
    const bodyText = text.slice(bodyStart, Math.max(bodyStart, bodyEnd));
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
  }
  return { binary, hunks };
}

/** UTF-8 bytes of a hunk as git printed it: header, then one marker + text + newline per line. */
function hunkByteLength(hunk: Hunk): number {
  let bytes = Buffer.byteLength(hunk.header) + 1;
  for (const line of hunk.lines) bytes += Buffer.byteLength(line.text) + 2 + (line.noNewlineAtEof ? 29 : 0);
  return bytes;
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

/**
 * Incremental parser: git's output is pushed as it arrives, and each file's section is parsed as
 * soon as the next section starts, so parsing overlaps git's own work.
 */
export class DiffStreamParser {
  private pending: Buffer = Buffer.alloc(0);
  private inPatch = false;
  private scanFrom = 1;
  /** git's raw records in order; each is dropped (undefined) once its file is parsed. */
  private readonly records: (RawRecord | undefined)[] = [];
  private readonly files: FileChange[] = [];
  /** Files parsed so far (kept in `files`, or handed to `onFile`). */
  private fileCount = 0;
  /** A type change's deletion section, waiting for the creation section that follows it. */
  private typeChangeDeletion: PatchSection | null = null;

  /**
   * With `onFile`, each file is handed over as soon as it is parsed and not kept (`end()` then
   * answers []): a caller that spills files holds no whole-diff object graph.
   */
  constructor(
    private readonly options: ParseOptions,
    private readonly onFile?: (file: FileChange) => void,
  ) {}

  push(chunk: Buffer): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    if (!this.inPatch) this.readRaw();
    if (this.inPatch) this.readSections(false);
  }

  end(): FileChange[] {
    if (!this.inPatch) this.readRaw(true);
    this.readSections(true);
    if (this.typeChangeDeletion !== null) {
      const record = this.records[this.fileCount] as RawRecord;
      throw new DiffParseError(`git reported a type change of ${record.path} but printed only one of its two patch sections`);
    }
    if (this.fileCount !== this.records.length) {
      throw new DiffParseError(`git reported ${this.records.length} changed files but printed patches for ${this.fileCount}`);
    }
    return this.files;
  }

  private readRaw(final = false): void {
    let p = 0;
    while (p < this.pending.length && this.pending[p] === COLON) {
      const record = tryReadRecord(this.pending, p);
      if (!record) break;
      this.records.push(record.record);
      p = record.next;
    }
    const rest = this.pending.subarray(p);
    if (rest.length > 0 && rest[0] !== COLON) {
      let skip = 0;
      while (skip < rest.length && rest[skip] === NUL) skip++;
      this.pending = rest.subarray(skip);
      this.inPatch = true;
      this.scanFrom = 1;
    } else {
      this.pending = rest;
      if (final && rest.length > 0) throw new DiffParseError("unterminated raw record at the end of git's output");
      if (final) this.inPatch = true;
    }
  }

  private readSections(final: boolean): void {
    for (;;) {
      if (this.pending.length === 0) return;
      if (!startsWithDiffHeader(this.pending, 0)) throw new DiffParseError('patch output does not start with a diff header');
      let boundary = -1;
      let at = this.pending.indexOf(SECTION_BOUNDARY, Math.max(0, this.scanFrom - 1));
      if (at >= 0) boundary = at + 1;
      if (boundary < 0) {
        if (!final) {
          this.scanFrom = Math.max(1, this.pending.length - SECTION_BOUNDARY.length);
          return;
        }
        boundary = this.pending.length;
      }
      this.takeSection(this.pending.subarray(0, boundary));
      this.pending = this.pending.subarray(boundary);
      this.scanFrom = 1;
      at = -1;
    }
  }

  private takeSection(section: Buffer): void {
    const record = this.records[this.fileCount];
    if (!record) throw new DiffParseError(`more patch sections than the ${this.records.length} changed files git reported`);
    const taken: PatchSection = { text: section.toString('utf8'), bytes: section.length };
    if (!typeChanged(record)) {
      this.emit(fileChangeOf(record, [taken], this.options));
      return;
    }
    // Checking each half's mode line keeps a missing or extra section from pairing two files.
    if (this.typeChangeDeletion === null) {
      expectHeaderLine(record, taken.text, `deleted file mode ${record.oldMode}`);
      this.typeChangeDeletion = taken;
      return;
    }
    expectHeaderLine(record, taken.text, `new file mode ${record.newMode}`);
    this.emit(fileChangeOf(record, [this.typeChangeDeletion, taken], this.options));
    this.typeChangeDeletion = null;
  }

  /** How many files have been parsed so far. */
  get parsedFiles(): number {
    return this.fileCount;
  }

  private emit(file: FileChange): void {
    this.records[this.fileCount] = undefined;
    this.fileCount++;
    if (this.onFile) this.onFile(file);
    else this.files.push(file);
  }
}

const SECTION_BOUNDARY = Buffer.from('\ndiff --git ');

/** Throws unless the section's extended header (the lines before its first hunk) has `line`. */
function expectHeaderLine(record: RawRecord, text: string, line: string): void {
  let at = text.indexOf('\n') + 1;
  while (at > 0 && at < text.length && !text.startsWith('@@ ', at)) {
    const nl = text.indexOf('\n', at);
    const end = nl < 0 ? text.length : nl;
    if (end - at === line.length && text.startsWith(line, at)) return;
    at = nl + 1;
  }
  throw new DiffParseError(`git reported a type change of ${record.path}, but its patch section has no "${line}" line`);
}

function startsWithDiffHeader(buf: Buffer, at: number): boolean {
  return buf.length - at >= DIFF_HEADER.length && buf.subarray(at, at + DIFF_HEADER.length).equals(DIFF_HEADER);
}

function tryReadRecord(buf: Buffer, from: number): { record: RawRecord; next: number } | null {
  const metaEnd = buf.indexOf(NUL, from + 1);
  if (metaEnd < 0) return null;
  const meta = buf.toString('utf8', from + 1, metaEnd);
  const [oldMode, newMode, oldOid, newOid, status] = meta.split(' ');
  if (!oldMode || !newMode || !oldOid || !newOid || !status) throw new DiffParseError(`malformed raw record ":${meta}"`);
  const letter = status.charAt(0);
  const score = status.length > 1 ? Number.parseInt(status.slice(1), 10) : null;
  const firstEnd = buf.indexOf(NUL, metaEnd + 1);
  if (firstEnd < 0) return null;
  let path = pathText(buf, metaEnd + 1, firstEnd);
  let next = firstEnd + 1;
  let oldPath: string | null = null;
  if (letter === 'R' || letter === 'C') {
    const secondEnd = buf.indexOf(NUL, next);
    if (secondEnd < 0) return null;
    oldPath = path;
    path = pathText(buf, next, secondEnd);
    next = secondEnd + 1;
  }
  return {
    record: {
      oldMode: oldMode === '000000' ? null : oldMode,
      newMode: newMode === '000000' ? null : newMode,
      oldOid: ZERO_OID.test(oldOid) ? null : oldOid,
      newOid: ZERO_OID.test(newOid) ? null : newOid,
      letter,
      score: score !== null && Number.isFinite(score) ? score : null,
      path,
      oldPath,
    },
    next,
  };
}

/** Parses the whole combined output at once (the same parser, one push). */
export function parseDiffOutput(buf: Buffer, options: ParseOptions): FileChange[] {
  const parser = new DiffStreamParser(options);
  parser.push(buf);
  return parser.end();
}

/** One file change from its raw record and its patch sections (two for a type change). */
export function fileChangeOf(record: RawRecord, sections: readonly PatchSection[], options: ParseOptions): FileChange {
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
  const parsed = sections.map((section) => parseSection(record.path, section.text));
  if (parsed.some((p) => p.binary)) {
    return { ...base, binary: true, submodule: false, truncated: false, truncation: null, additions: null, deletions: null, hunks: [], regions: [] };
  }
  let hunks = parsed.length === 1 ? (parsed[0] as ParsedSection).hunks : parsed.flatMap((p) => p.hunks);
  const additions = hunks.reduce((n, h) => n + h.additions, 0);
  const deletions = hunks.reduce((n, h) => n + h.deletions, 0);
  const sectionBytes = sections.reduce((n, s) => n + s.bytes, 0);
  let truncation: Truncation | null = null;
  if (sectionBytes > options.maxPatchBytesPerFile) {
    let used = 0;
    let kept = 0;
    while (kept < hunks.length && used + hunkByteLength(hunks[kept] as Hunk) <= options.maxPatchBytesPerFile) {
      used += hunkByteLength(hunks[kept] as Hunk);
      kept++;
    }
    if (kept < hunks.length) {
      const firstDropped = hunks[kept] as Hunk;
      const dropped = hunks.slice(kept);
      truncation = {
        reason: 'patch-size',
        limitBytes: options.maxPatchBytesPerFile,
        baseBytes: null,
        headBytes: null,
        // A type change's hunks are one side each (its deletion's, then its creation's): a side
        // has a tail only if one of its own hunks was dropped.
        tailFrom:
          sections.length > 1
            ? {
                base: dropped.find((h) => h.oldLines > 0)?.oldStart ?? null,
                head: dropped.find((h) => h.newLines > 0)?.newStart ?? null,
              }
            : {
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
