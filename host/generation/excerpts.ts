import type { BoardElement, CitationSide } from '../../protocol/board';
import type { DiffLine, FileChange, Hunk, Patchset } from '../../protocol/patchset';
import { EXCERPT_CONTEXT_LINES, EXCERPT_MAX_LINES, GENERATION_EXCERPT_MAX_LINES, excerptKey, type CodeExcerpt } from '../../protocol/review';
import { filesBySide, lastStartAtOrBefore, type FilesBySide } from '../board/citations';

/**
 * Code excerpts (pure, no I/O): for each cited span, the captured diff lines a code card shows.
 *
 * The lines come from the file's hunks that overlap the span on its side, kept from
 * EXCERPT_CONTEXT_LINES before the span to EXCERPT_CONTEXT_LINES after it, counted in that side's
 * numbering (oldLine for base, newLine for head). A line the side does not number (a head span's
 * deletion, a base span's addition) stays when the gap it sits in is inside that window, so the
 * excerpt reads as the diff does: the removed lines stay beside the lines that replace them. Nothing is invented: what the capture lacks (a truncated tail, a binary file, a
 * submodule, an unknown path or range, a missing capture) is a state with a sentence, never an
 * empty "captured" excerpt.
 */

/** A cited span: what a code_ref names. */
export interface ExcerptSpan {
  path: string;
  side: CitationSide;
  startLine: number;
  endLine: number;
}

export interface ExcerptOptions {
  /** Per-excerpt line ceiling (default EXCERPT_MAX_LINES). */
  maxLines?: number;
  /** Ceiling over all excerpts of one call (default GENERATION_EXCERPT_MAX_LINES). */
  budgetLines?: number;
  /** Why there is no patchset, when `patchset` is null (said on every excerpt). */
  missingReason?: string;
  /**
   * Excerpts built by earlier calls over the same patchset and options, reused by key (and kept
   * for the next call): a span's excerpt depends on nothing else, so a caller building a
   * generation's excerpts again after every write reads each span once, and unchanged excerpts
   * come back as the same objects (host/review/generationPush.ts).
   */
  memo?: Map<string, CodeExcerpt>;
}

/** One side of one file: its hunks sorted by their first line on that side, with those spans. */
interface SideHunks {
  file: FileChange;
  hunks: Hunk[];
  starts: number[];
  ends: number[];
}

/** The files a span may name, as citations name them, and their hunks per side (read when first asked). */
interface HunkIndex {
  files: FilesBySide<FileChange>;
  sides: Map<FileChange, { base: SideHunks; head: SideHunks }>;
}

function indexHunks(patchset: Patchset): HunkIndex {
  return { files: filesBySide(patchset.files, (file) => file), sides: new Map() };
}

function sidesOf(index: HunkIndex, file: FileChange): { base: SideHunks; head: SideHunks } {
  let sides = index.sides.get(file);
  if (!sides) {
    sides = { base: sideHunks(file, 'base'), head: sideHunks(file, 'head') };
    index.sides.set(file, sides);
  }
  return sides;
}

function sideHunks(file: FileChange, side: CitationSide): SideHunks {
  const spans = file.hunks
    .map((hunk) => {
      const start = side === 'base' ? hunk.oldStart : hunk.newStart;
      const count = side === 'base' ? hunk.oldLines : hunk.newLines;
      return { hunk, start, end: start + count - 1, count };
    })
    .filter((s) => s.count > 0)
    .sort((a, b) => a.start - b.start);
  return { file, hunks: spans.map((s) => s.hunk), starts: spans.map((s) => s.start), ends: spans.map((s) => s.end) };
}

/** The spans a board's code_refs cite, in element order (what a lane's excerpts are built over). */
export function excerptSpans(elements: Iterable<BoardElement>): ExcerptSpan[] {
  const spans: ExcerptSpan[] = [];
  for (const element of elements) {
    if (element.kind === 'code_ref') spans.push({ path: element.path, side: element.side, startLine: element.start_line, endLine: element.end_line });
  }
  return spans;
}

/**
 * Seeds a memo (ExcerptOptions.memo) with excerpts an earlier call built over the same patchset
 * and options — a generation read whole — so the next calls answer those same objects.
 */
export function seedExcerptMemo(memo: Map<string, CodeExcerpt>, excerpts: Readonly<Record<string, CodeExcerpt>>): void {
  for (const [key, excerpt] of Object.entries(excerpts)) memo.set(excerpt.state === 'omitted' ? `${OMITTED}${key}` : key, excerpt);
}

/**
 * The excerpt of every span, keyed by excerptKey. Spans are read in the order given (the caller
 * passes them lane by lane in canonical order); a repeated key is built once. Once the excerpts
 * carry `budgetLines` lines, every later one with lines is `omitted`.
 */
export function buildExcerpts(patchset: Patchset | null, spans: Iterable<ExcerptSpan>, options: ExcerptOptions = {}): Record<string, CodeExcerpt> {
  const maxLines = options.maxLines ?? EXCERPT_MAX_LINES;
  const budget = options.budgetLines ?? GENERATION_EXCERPT_MAX_LINES;
  const memo = options.memo;
  let index: HunkIndex | null | undefined;
  const out: Record<string, CodeExcerpt> = {};
  let used = 0;
  let budgetClosed = false;
  for (const span of spans) {
    const key = excerptKey(span);
    if (Object.prototype.hasOwnProperty.call(out, key)) continue;
    let excerpt = memo?.get(key);
    if (!excerpt) {
      // The hunk index is built on the first span no earlier call read.
      if (index === undefined) index = patchset ? indexHunks(patchset) : null;
      excerpt = index
        ? excerptOf(index, span, maxLines)
        : unavailable(span, 'not-captured', options.missingReason ?? 'The capture this generation reads is not in the store, so no lines of it can be shown.');
      memo?.set(key, excerpt);
    }
    if (excerpt.lines.length > 0) {
      if (budgetClosed || used + excerpt.lines.length > budget) {
        budgetClosed = true;
        const omittedKey = `${OMITTED}${key}`;
        let omitted = memo?.get(omittedKey);
        if (!omitted) {
          omitted = unavailable(span, 'omitted', `These lines were not sent: this generation's excerpts already carry the ${budget.toLocaleString('en-US')}-line limit. Open the file to read them.`);
          memo?.set(omittedKey, omitted);
        }
        excerpt = omitted;
      } else used += excerpt.lines.length;
    }
    out[key] = excerpt;
  }
  return out;
}

/** The memo key prefix of a span's `omitted` stand-in (excerpt keys never start with a NUL). */
const OMITTED = '\u0000omitted|';

function excerptOf(index: HunkIndex, span: ExcerptSpan, maxLines: number): CodeExcerpt {
  const { path, side } = span;
  const onSide = index.files.on(path, side);
  // A path that names no file on this side may name one on the other (added, deleted, a rename's
  // old name): the checks below say why it has no lines here.
  const file = onSide ?? index.files.on(path, side === 'head' ? 'base' : 'head');
  if (!file) return unavailable(span, 'not-captured', `${path} is not a changed file of this capture, so no lines of it were captured.`);
  if (!onSide && side === 'head' && file.oldPath === path) {
    return unavailable(span, 'not-captured', `${path} was renamed to ${file.path}, so it has lines on the base side only.`);
  }
  if (file.submodule) return unavailable(span, 'submodule', `${path} is a submodule: its content is another repository and is not captured here.`);
  if (file.binary) return unavailable(span, 'binary', `${path} is a binary file: it has no lines to show.`);
  if (side === 'base' && (file.status === 'added' || file.oldOid === null)) {
    return unavailable(span, 'not-captured', `${path} was added by this change, so it has no base side.`);
  }
  if (side === 'head' && (file.status === 'deleted' || file.newOid === null)) {
    return unavailable(span, 'not-captured', `${path} was deleted by this change, so it has no head side.`);
  }

  const start = span.startLine;
  const end = Math.max(span.startLine, span.endLine);
  const tailFrom = file.truncation?.tailFrom[side] ?? null;
  const lines = linesOver(sidesOf(index, file)[side], side, start, Math.min(end, tailFrom !== null ? tailFrom - 1 : end));

  if (tailFrom !== null && end >= tailFrom) {
    const why = truncationWords(file, path, tailFrom);
    const clipped = clip(lines, maxLines);
    return {
      ...spanFields(span),
      state: 'truncated',
      lines: clipped.lines,
      clipped: clipped.clipped,
      note: start >= tailFrom ? why : `${why} The lines before it are shown.`,
    };
  }
  if (lines.length === 0) {
    return unavailable(span, 'not-captured', `No captured hunk of ${path} covers ${side} ${rangeWords(start, end)}.`);
  }
  const clipped = clip(lines, maxLines);
  return {
    ...spanFields(span),
    state: 'captured',
    lines: clipped.lines,
    clipped: clipped.clipped,
    note: clipped.clipped ? `Showing the first ${maxLines.toLocaleString('en-US')} of ${lines.length.toLocaleString('en-US')} lines; open the file for the rest.` : null,
  };
}

/** The diff lines of the hunks over [start, end] on `side`, with context either side. */
function linesOver(hunks: SideHunks, side: CitationSide, start: number, end: number): DiffLine[] {
  if (end < start || hunks.hunks.length === 0) return [];
  const from = start - EXCERPT_CONTEXT_LINES;
  const to = end + EXCERPT_CONTEXT_LINES;
  const out: DiffLine[] = [];
  // First hunk that may overlap: the last whose start is ≤ start (a span may begin before it, too).
  let i = Math.max(0, lastStartAtOrBefore(hunks.starts, start));
  for (; i < hunks.hunks.length && (hunks.starts[i] as number) <= end; i++) {
    if ((hunks.ends[i] as number) < start) continue;
    const hunk = hunks.hunks[i] as Hunk;
    // A line the side does not number sits just before the side's next line (a head span's
    // deletions before the additions that replace them), so it stays exactly when that gap is
    // inside the window. Positions only grow along the hunk, so the kept lines are one run.
    let next = side === 'base' ? hunk.oldStart : hunk.newStart;
    for (const line of hunk.lines) {
      const n = side === 'base' ? line.oldLine : line.newLine;
      const position = n ?? next - 0.5;
      if (n !== null) next = n + 1;
      if (position >= from && position <= to) out.push(line);
    }
  }
  return out;
}

function clip(lines: DiffLine[], maxLines: number): { lines: DiffLine[]; clipped: boolean } {
  return lines.length > maxLines ? { lines: lines.slice(0, maxLines), clipped: true } : { lines, clipped: false };
}

function truncationWords(file: FileChange, path: string, tailFrom: number): string {
  const truncation = file.truncation;
  if (!truncation) return `Lines from ${tailFrom.toLocaleString('en-US')} of ${path} were not captured.`;
  const limit = limitWords(truncation.limitBytes);
  if (truncation.reason === 'file-size') {
    return `${path} is over the ${limit} file-size limit of the capture, so none of its lines were captured. Open the file to read them.`;
  }
  return `Lines from ${tailFrom.toLocaleString('en-US')} of ${path} were not captured: its patch is over the ${limit} per-file limit. Open the file to read them.`;
}

/** A limit as configured: whole KiB when it is one, else exact bytes (never a rounded figure). */
function limitWords(bytes: number): string {
  return bytes % 1024 === 0 ? `${(bytes / 1024).toLocaleString('en-US')} KiB` : `${bytes.toLocaleString('en-US')}-byte`;
}

function rangeWords(start: number, end: number): string {
  return start === end ? `line ${start}` : `lines ${start}–${end}`;
}

function spanFields(span: ExcerptSpan): Pick<CodeExcerpt, 'path' | 'side' | 'startLine' | 'endLine'> {
  return { path: span.path, side: span.side, startLine: span.startLine, endLine: span.endLine };
}

function unavailable(span: ExcerptSpan, state: Exclude<CodeExcerpt['state'], 'captured'>, note: string): CodeExcerpt {
  return { ...spanFields(span), state, lines: [], clipped: false, note };
}
