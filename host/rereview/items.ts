import { readReviewMarker } from '../../protocol/exits';
import type { Ancestry } from './delta';

/**
 * PURE. The earlier review's items, and the line a re-review's body opens with.
 *
 * Every inline comment of the earlier review is an item, and so is every top-level list item of
 * its body (a body with no list is one item when it says anything beyond its marker). An item is
 * a blocker when the earlier review requested changes, or when the review was on one's own request
 * (the forge let it be only a comment, but it was meant as work); otherwise a nit.
 */

export interface PriorReviewInput {
  /** The forge's state of the earlier review. */
  state: 'APPROVED' | 'CHANGES_REQUESTED' | 'COMMENTED';
  body: string;
  comments: ReadonlyArray<{ path: string; line: number | null; side: 'RIGHT' | 'LEFT'; body: string }>;
  /** The review was on the reviewer's own request. */
  ownRequest: boolean;
}

export interface PriorItem {
  /** `R1`, `R2`, …: inline comments first (in the forge's order), then body items. */
  id: string;
  path: string | null;
  line: number | null;
  side: 'head' | 'base' | null;
  text: string;
  severity: 'blocker' | 'nit';
}

/** Characters of an item's text kept (the rest is cut, said). */
export const PRIOR_ITEM_TEXT_MAX_CHARS = 4_000;

export function priorItems(review: PriorReviewInput): PriorItem[] {
  const severity: PriorItem['severity'] = review.state === 'CHANGES_REQUESTED' || review.ownRequest ? 'blocker' : 'nit';
  const items: PriorItem[] = [];
  for (const c of review.comments) {
    const text = c.body.trim();
    if (!text) continue;
    items.push({ id: `R${items.length + 1}`, path: c.path, line: c.line, side: c.side === 'LEFT' ? 'base' : 'head', text: cut(text), severity });
  }
  for (const text of bodyItems(review.body)) items.push({ id: `R${items.length + 1}`, path: null, line: null, side: null, text: cut(text), severity });
  return items;
}

/**
 * The body's items: its top-level list items, or the whole body (without the marker line) when it
 * has none. A body Rennet composed (it carries the marker) is read by its layout
 * (host/exits/compose.ts): Rennet's own lines — a "Prior review:" line, GitLab's verdict label, the
 * grounded opener's "Reviewed …", "Lens boards: …" and "N line comments; N notes below." — are no
 * items; every note under "### Notes" is one (an approval's note asks for nothing, so it is none);
 * any other text before the notes (a written opener) is read as above.
 */
export function bodyItems(body: string): string[] {
  const lines = body.replace(/\r\n?/g, '\n').split('\n');
  if (readReviewMarker(body) === null) return listOrWhole(lines);
  while (lines.length > 0 && (lines[lines.length - 1] as string).trim() === '') lines.pop();
  lines.pop();
  const notesAt = lines.indexOf('### Notes');
  const before = (notesAt < 0 ? lines : lines.slice(0, notesAt))
    .join('\n')
    .split(/\n{2,}/)
    .filter((p) => !RENNET_OWN_PARAGRAPH.some((re) => re.test(p.trim())));
  const notes: string[][] = [];
  for (const line of notesAt < 0 ? [] : lines.slice(notesAt + 1)) {
    if (NOTE_LABEL.test(line)) notes.push([line]);
    else notes.at(-1)?.push(line);
  }
  return [...listOrWhole(before.join('\n\n').split('\n')), ...notes.filter((n) => !(n[0] as string).startsWith('**Approval**')).map((n) => n.join('\n').trim())];
}

/** A note's first line in a Rennet-composed body: its intent's label, then where it points. */
const NOTE_LABEL = /^\*\*(Change requested|Comment|Question|Approval)\*\*(?: · .*)?$/;
/** Paragraphs Rennet writes itself into a composed body: never an item. */
const RENNET_OWN_PARAGRAPH = [
  /^Prior review: [^\n]*$/,
  /^\*\*Verdict: (approved|changes requested|comments)\*\*$/,
  /^Reviewed `+[0-9a-f]+`+: \d+ files?, \+\d+ −\d+\.$/,
  /^Lens boards: [^\n]*\.$/,
  /^(\d+ line comments?(; \d+ notes? below)?|\d+ notes? below)\.$/,
];

function listOrWhole(lines: readonly string[]): string[] {
  const items: string[] = [];
  let current: string[] | null = null;
  for (const line of lines) {
    const start = /^[-*+] +(.*)$|^\d+[.)] +(.*)$/.exec(line);
    if (start) {
      if (current) items.push(current.join('\n').trim());
      current = [start[1] ?? start[2] ?? ''];
    } else if (current && (/^\s{2,}\S/.test(line) || line.trim() === '')) {
      current.push(line.trim());
    } else if (current) {
      items.push(current.join('\n').trim());
      current = null;
    }
  }
  if (current) items.push(current.join('\n').trim());
  const listed = items.filter(Boolean);
  if (listed.length > 0) return listed;
  const whole = lines.join('\n').trim();
  return whole ? [whole] : [];
}

function cut(text: string): string {
  return text.length > PRIOR_ITEM_TEXT_MAX_CHARS ? `${text.slice(0, PRIOR_ITEM_TEXT_MAX_CHARS)} [cut: the comment is longer]` : text;
}

/**
 * The re-review body's first line. Ancestor: "Prior review: k of n resolved" (and "- no commits
 * since <sha7>" when the head is the reviewed commit), or that no items were posted at <sha7>; not
 * an ancestor: that the whole change was reviewed, with the reason as the ancestry check gave it.
 */
export function priorReviewLine(ancestry: Ancestry, resolved: number, total: number): string {
  if (ancestry.kind === 'not-ancestor') {
    return `Prior review: baseline ${ancestry.from ? ancestry.from.slice(0, 7) : 'unknown'} is not an ancestor of the head (${ancestry.reason}), so the whole diff was reviewed`;
  }
  const sha7 = ancestry.from.slice(0, 7);
  if (total === 0) return `Prior review: no items posted at ${sha7}; the delta since it was reviewed`;
  return `Prior review: ${resolved} of ${total} resolved${ancestry.equal ? ` - no commits since ${sha7}` : ''}`;
}
