import { codeRegions } from '../board/prose';
import { LABELS, codeBlockLabel, type CodeSpan } from './model';

/**
 * A small line-based Markdown reader, enough for specification files: front matter, fenced
 * blocks, ATX headings as an outline, and the blocks under a heading (paragraphs, lists with
 * their items and check marks, fences). It never rewrites text: every string it returns is the
 * file's own lines, dedented, with each code block replaced by a fixed label naming the file and
 * its lines. Inline code spans are the text's own formatting and stay as written.
 */

export interface Heading {
  level: number;
  text: string;
  /** 0-based line index. */
  index: number;
}

export interface MdFile {
  path: string;
  lines: string[];
  /** Line is part of a fenced block (delimiters included). */
  fenced: boolean[];
  /** Fenced blocks as inclusive 0-based line ranges. */
  fences: Array<{ start: number; end: number }>;
  /** Front matter as an inclusive 0-based range, when the file opens with one. */
  frontMatter: { start: number; end: number } | null;
  headings: Heading[];
}

const FENCE = /^(\s*)(`{3,}|~{3,})(.*)$/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$/;
export const LIST_ITEM = /^(\s*)([-*+]|\d{1,9}[.)])(?:[ \t]+|$)/;
/**
 * A check box; Kiro marks an optional task with a star right after it ("- [ ]* 2.3 …"), which stays
 * in the text. An in-progress mark ("[-]", "[~]", "[/]") is an open check box whose mark stays in
 * the text, since the board's task has only done or not done.
 */
const CHECKBOX = /^\[([ xX~/-])\](?=[ \t*]|$)[ \t]*/;
const HEADING_LINE = /^ {0,3}#{1,6}(?:[ \t]|$)/;

export function parseMarkdown(path: string, text: string): MdFile {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const fenced = lines.map(() => false);
  const fences: Array<{ start: number; end: number }> = [];
  let frontMatter: MdFile['frontMatter'] = null;
  let i = 0;
  if (lines[0]?.trim() === '---') {
    const close = lines.findIndex((l, n) => n > 0 && (l.trim() === '---' || l.trim() === '...'));
    if (close > 0) {
      frontMatter = { start: 0, end: close };
      i = close + 1;
    }
  }
  const headings: Heading[] = [];
  for (; i < lines.length; i++) {
    const line = lines[i] as string;
    const open = line.match(FENCE);
    if (open && !(open[2]?.startsWith('`') && open[3]?.includes('`'))) {
      const marker = open[2] as string;
      let end = lines.length - 1;
      for (let j = i + 1; j < lines.length; j++) {
        const close = (lines[j] as string).match(/^\s*(`{3,}|~{3,})\s*$/);
        if (close && close[1]?.[0] === marker[0] && (close[1]?.length ?? 0) >= marker.length) {
          end = j;
          break;
        }
      }
      for (let j = i; j <= end; j++) fenced[j] = true;
      fences.push({ start: i, end });
      i = end;
      continue;
    }
    const heading = line.match(HEADING);
    if (heading) {
      const raw = (heading[2] ?? '')
        .replace(/[ \t]+#+$/, '')
        .replace(/^#+$/, '')
        .trim();
      headings.push({ level: (heading[1] as string).length, text: raw, index: i });
    }
  }
  return { path, lines, fenced, fences, frontMatter, headings };
}

// ─── Outline ─────────────────────────────────────────────────────────────────────────────────

export interface MdNode {
  /** null for the file root. */
  heading: Heading | null;
  /** 0-based line range of the node's own content (after the heading, before its first child). */
  contentStart: number;
  contentEnd: number;
  /** End of the node's whole subtree (exclusive). */
  end: number;
  children: MdNode[];
}

export function outline(file: MdFile): MdNode {
  const start = file.frontMatter ? file.frontMatter.end + 1 : 0;
  const root: MdNode = { heading: null, contentStart: start, contentEnd: file.lines.length, end: file.lines.length, children: [] };
  const stack: MdNode[] = [root];
  for (const heading of file.headings) {
    while (stack.length > 1 && (stack[stack.length - 1]?.heading?.level ?? 0) >= heading.level) {
      const done = stack.pop() as MdNode;
      done.end = heading.index;
      if (done.children.length === 0) done.contentEnd = heading.index;
    }
    const parent = stack[stack.length - 1] as MdNode;
    if (parent.children.length === 0) parent.contentEnd = heading.index;
    const node: MdNode = { heading, contentStart: heading.index + 1, contentEnd: file.lines.length, end: file.lines.length, children: [] };
    parent.children.push(node);
    stack.push(node);
  }
  return root;
}

/** The node's heading text, or '' for the root. */
export function titleOf(node: MdNode): string {
  return node.heading?.text ?? '';
}

// ─── Blocks ──────────────────────────────────────────────────────────────────────────────────

export interface ListItem {
  /** 0-based line of the marker. */
  start: number;
  /** Exclusive end: the next item's marker, or the list's end (trailing blanks dropped). */
  end: number;
  indent: number;
  /** Column where the item's content begins (after marker and spacing). */
  contentIndent: number;
  ordered: boolean;
  /** The item number for an ordered list. */
  number: string | null;
  checkbox: 'open' | 'done' | null;
  /** The check box as written ("[ ]", "[x]", "[X]", or an in-progress "[-]", "[~]", "[/]"), or null. */
  box: string | null;
  /**
   * The item's first paragraph after marker and check box: the marker line, then the lines that
   * continue it (no blank line, no list marker), each trimmed and kept on its own line.
   */
  first: string;
  /** Exclusive end of the first paragraph: where the item's further content (its tail) starts. */
  firstEnd: number;
}

export type MdBlock = { kind: 'para'; start: number; end: number } | { kind: 'list'; start: number; end: number; items: ListItem[] } | { kind: 'fence'; start: number; end: number };

const blank = (line: string | undefined) => line === undefined || line.trim() === '';
const indentOf = (line: string) => {
  let n = 0;
  for (const ch of line) {
    if (ch === ' ') n++;
    else if (ch === '\t') n += 4 - (n % 4);
    else break;
  }
  return n;
};

/** The blocks of a 0-based line range [start, end), in order. */
export function blocksOf(file: MdFile, start: number, end: number): MdBlock[] {
  const out: MdBlock[] = [];
  const { lines, fenced } = file;
  let i = start;
  while (i < end) {
    const line = lines[i] as string;
    if (blank(line)) {
      i++;
      continue;
    }
    if (fenced[i]) {
      const fence = file.fences.find((f) => f.start === i);
      const last = Math.min(fence ? fence.end : i, end - 1);
      out.push({ kind: 'fence', start: i, end: last + 1 });
      i = last + 1;
      continue;
    }
    if (LIST_ITEM.test(line)) {
      const listStart = i;
      let j = i + 1;
      while (j < end) {
        const next = lines[j] as string;
        if (fenced[j] || LIST_ITEM.test(next) || (!blank(next) && indentOf(next) > 0)) {
          j++;
          continue;
        }
        if (blank(next)) {
          // A blank line continues the list only when an item or indented text follows.
          let k = j;
          while (k < end && blank(lines[k])) k++;
          if (k < end && (LIST_ITEM.test(lines[k] as string) || indentOf(lines[k] as string) > 0 || fenced[k])) {
            j = k;
            continue;
          }
          break;
        }
        // Lazy continuation: unindented text directly under an item line.
        if (!blank(lines[j - 1])) {
          j++;
          continue;
        }
        break;
      }
      let listEnd = j;
      while (listEnd > listStart && blank(lines[listEnd - 1])) listEnd--;
      out.push({ kind: 'list', start: listStart, end: listEnd, items: itemsOf(file, listStart, listEnd) });
      i = j;
      continue;
    }
    const paraStart = i;
    while (i < end && !blank(lines[i]) && !fenced[i] && !(i > paraStart && LIST_ITEM.test(lines[i] as string))) i++;
    out.push({ kind: 'para', start: paraStart, end: i });
  }
  return out;
}

/**
 * True when the list marker on line `i` starts an item. Under an open item (`openIndent`), an
 * ordered marker other than 1 deeper than that item cannot interrupt its paragraph to open a
 * nested list (CommonMark): "      2026. …" wrapped under an item's text continues that text.
 */
function startsItem(file: MdFile, i: number, openIndent: number | null): boolean {
  const line = file.lines[i] as string;
  const match = line.match(LIST_ITEM);
  if (!match) return false;
  if (openIndent === null || !/^\d/.test(match[2] as string) || /^0*1[.)]$/.test(match[2] as string)) return true;
  return !(indentOf(line) > openIndent && !blank(file.lines[i - 1]) && !file.fenced[i - 1]);
}

function itemsOf(file: MdFile, start: number, end: number): ListItem[] {
  const items: ListItem[] = [];
  for (let i = start; i < end; i++) {
    if (file.fenced[i]) continue;
    const line = file.lines[i] as string;
    const match = line.match(LIST_ITEM);
    if (!match || !startsItem(file, i, items.length > 0 ? (items[items.length - 1] as ListItem).indent : null)) continue;
    const indent = indentOf(line);
    const marker = match[2] as string;
    let rest = line.slice((match[0] as string).length);
    const contentIndent = indent + marker.length + Math.max(1, (match[0] as string).length - (match[1] as string).length - marker.length);
    const box = rest.match(CHECKBOX);
    let checkbox: ListItem['checkbox'] = null;
    if (box) {
      checkbox = box[1] === 'x' || box[1] === 'X' ? 'done' : 'open';
      // An in-progress mark is kept as written at the head of the text.
      rest = /[ xX]/.test(box[1] as string) ? rest.slice((box[0] as string).length) : `[${box[1]}] ${rest.slice((box[0] as string).length)}`;
    }
    // The first paragraph goes on over the lines that continue it: a text wrapped under the item's
    // own text (whatever its indentation) is that text, never an indented code block.
    const paragraph = [rest.trim()];
    let firstEnd = i + 1;
    while (firstEnd < end) {
      const next = file.lines[firstEnd] as string;
      if (blank(next) || file.fenced[firstEnd] || startsItem(file, firstEnd, indent) || HEADING_LINE.test(next)) break;
      paragraph.push(next.trim());
      firstEnd++;
    }
    const ordered = /^\d/.test(marker);
    const first = paragraph[0] === '' && paragraph.length > 1 ? paragraph.slice(1).join('\n') : paragraph.join('\n');
    // A check box item whose wrapped lines sit under its text (past the box) was written to that
    // column: its further paragraphs there are its text too, not indented code blocks.
    const textColumn = contentIndent + (box ? (box[0] as string).length : 0);
    const aligned = box !== null && firstEnd > i + 1 && file.lines.slice(i + 1, firstEnd).every((l) => indentOf(l) === textColumn);
    items.push({
      start: i,
      end,
      indent,
      contentIndent: aligned ? textColumn : contentIndent,
      ordered,
      number: ordered ? marker.slice(0, -1) : null,
      checkbox,
      box: box ? `[${box[1]}]` : null,
      first,
      firstEnd,
    });
  }
  for (let n = 0; n < items.length - 1; n++) (items[n] as ListItem).end = (items[n + 1] as ListItem).start;
  for (const item of items) {
    while (item.end > item.start + 1 && blank(file.lines[item.end - 1])) item.end--;
    item.firstEnd = Math.min(item.firstEnd, item.end);
  }
  return items;
}

// ─── Text ────────────────────────────────────────────────────────────────────────────────────

/** A fenced block's code lines, 1-based inclusive (the fence lines themselves when it holds none). */
export function fenceSpan(file: MdFile, fence: { start: number; end: number }): CodeSpan {
  const closed = fence.end > fence.start && /^\s*(`{3,}|~{3,})\s*$/.test(file.lines[fence.end] as string);
  const first = fence.start + 1;
  const last = closed ? fence.end - 1 : fence.end;
  return first <= last ? { path: file.path, start: first + 1, end: last + 1 } : { path: file.path, start: fence.start + 1, end: fence.end + 1 };
}

/** Adds a span to a sink once. */
function collect(sink: CodeSpan[] | undefined, span: CodeSpan): void {
  if (sink && !sink.some((s) => s.path === span.path && s.start === span.start && s.end === span.end)) sink.push(span);
}

/**
 * The file's own lines [start, end), dedented by `dedent` columns at most, with each fenced
 * block (and any indented code block the board's own reader would find) replaced by its label,
 * which names the file and the block's lines. Each such block is added to `sink`. Leading and
 * trailing blank lines are dropped. `continues`: the range goes on from a paragraph's text with no
 * blank line between (a list item's lines after its first paragraph), so its opening lines, however
 * deep, continue that text and cannot open an indented code block.
 */
export function textOf(file: MdFile, start: number, end: number, dedent = 0, sink?: CodeSpan[], continues = false): string {
  const out: string[] = [];
  /** The 0-based file line each output line was read from (null for a label line). */
  const from: Array<number | null> = [];
  for (let i = start; i < end; i++) {
    const line = file.lines[i] as string;
    if (file.frontMatter && i >= file.frontMatter.start && i <= file.frontMatter.end) continue;
    if (file.fenced[i]) {
      const fence = file.fences.find((f) => f.start <= i && i <= f.end) ?? { start: i, end: i };
      const fenceIndent = Math.max(0, indentOf(file.lines[fence.start] as string) - dedent);
      const span = fenceSpan(file, fence);
      collect(sink, span);
      out.push(' '.repeat(Math.min(fenceIndent, 3)) + codeBlockLabel(span));
      from.push(null);
      i = Math.min(fence.end, end - 1);
      continue;
    }
    out.push(dedentLine(line, dedent).trimEnd());
    from.push(i);
  }
  while (out.length > 0 && blank(out[0])) {
    out.shift();
    from.shift();
  }
  while (out.length > 0 && blank(out[out.length - 1])) {
    out.pop();
    from.pop();
  }
  const joined = out.join('\n');
  // A paragraph line ahead of a continuing range, so the board's reader sees what it continues.
  const lead = continues && joined !== '' && !blank(file.lines[start]) ? '.\n' : '';
  return labelCodeRegions(lead + joined, (leadStart, leadEnd) => {
    // The file lines a region of the joined text was read from.
    const startOffset = leadStart - lead.length;
    const endOffset = leadEnd - lead.length;
    if (startOffset < 0) return null;
    const firstLine = lineIndexAt(joined, startOffset);
    const lastLine = lineIndexAt(joined, lastNonBlankOffset(joined, startOffset, endOffset));
    const lines = from.slice(firstLine, lastLine + 1).filter((n): n is number => n !== null);
    if (lines.length === 0) return null;
    const span = { path: file.path, start: Math.min(...lines) + 1, end: Math.max(...lines) + 1 };
    collect(sink, span);
    return span;
  }).slice(lead.length);
}

function lineIndexAt(text: string, offset: number): number {
  let n = 0;
  for (let i = 0; i < offset && i < text.length; i++) if (text[i] === '\n') n++;
  return n;
}

function lastNonBlankOffset(text: string, start: number, end: number): number {
  let at = end - 1;
  while (at > start && /\s/.test(text[at] as string)) at--;
  return at;
}

function dedentLine(line: string, columns: number): string {
  let n = 0;
  let cut = 0;
  while (cut < line.length && n < columns) {
    const ch = line[cut];
    if (ch === ' ') n++;
    else if (ch === '\t') n += 4 - (n % 4);
    else break;
    cut++;
  }
  return line.slice(cut);
}

/**
 * Replaces the fenced and indented code regions the board's no-code-bytes reader finds with a
 * label: the file and lines `locate` names for the region, or the generic label when it names none.
 */
function labelCodeRegions(text: string, locate: (start: number, end: number, text: string) => CodeSpan | null): string {
  const regions = codeRegions(text).filter((r) => r.kind !== 'inline');
  if (regions.length === 0) return text;
  let out = '';
  let at = 0;
  for (const region of regions) {
    if (region.start < at) continue;
    // A region may end on the blank lines after it; they stay, so paragraphs do not merge.
    const trailing = (text.slice(region.start, region.end).match(/\n\s*$/)?.[0] ?? '').replace(/[^\n]/g, '');
    const span = locate(region.start, region.end, text);
    out += text.slice(at, region.start) + (span ? codeBlockLabel(span) : LABELS.codeBlock) + trailing;
    at = region.end;
  }
  return out + text.slice(at);
}

/**
 * Replaces fenced and indented code regions of an already-read text with the generic label: only
 * texts joined from several reads go through it, where a region can no longer be placed in the file.
 */
export function withoutCodeBlocks(text: string): string {
  return labelCodeRegions(text, () => null);
}

/** An item's own text: the marker line after marker (and check box), then its continuation lines dedented to its content column. */
export function itemText(file: MdFile, item: ListItem, withNested = true, sink?: CodeSpan[]): string {
  const rest: string[] = [];
  const end = withNested ? item.end : ownEnd(file, item);
  const tail = end > item.firstEnd ? textOf(file, item.firstEnd, end, item.contentIndent, sink, item.first !== '') : '';
  if (item.first !== '') rest.push(item.first);
  if (tail !== '') rest.push(tail);
  const gap = blank(file.lines[item.firstEnd]) ? '\n\n' : '\n';
  return withoutCodeBlocks(rest.join(gap));
}

/** Where an item's own lines stop: before the first nested list item. */
export function ownEnd(file: MdFile, item: ListItem): number {
  for (let i = item.firstEnd; i < item.end; i++) {
    if (!file.fenced[i] && startsItem(file, i, item.indent)) return i;
  }
  return item.end;
}

export function blockText(file: MdFile, block: MdBlock, sink?: CodeSpan[]): string {
  if (block.kind !== 'fence') return textOf(file, block.start, block.end, 0, sink);
  const span = fenceSpan(file, file.fences.find((f) => f.start === block.start) ?? { start: block.start, end: block.end - 1 });
  collect(sink, span);
  return codeBlockLabel(span);
}

/** 1-based first and last non-blank lines of a 0-based range, or null when the range is blank. */
export function lineSpan(file: MdFile, start: number, end: number): { start: number; end: number } | null {
  let a = start;
  let b = end - 1;
  while (a <= b && blank(file.lines[a])) a++;
  while (b >= a && blank(file.lines[b])) b--;
  return a > b ? null : { start: a + 1, end: b + 1 };
}

/** The file's one top-level H1 when it opens with it (only front matter or blank lines before it). */
export function leadingTitle(file: MdFile, root: MdNode): MdNode | null {
  const h1s = root.children.filter((c) => c.heading?.level === 1);
  if (h1s.length !== 1 || root.children[0] !== h1s[0]) return null;
  const only = h1s[0] as MdNode;
  if (lineSpan(file, root.contentStart, root.contentEnd) !== null) return null;
  return only;
}
