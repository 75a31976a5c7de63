import type { BoardElement, FoldCount, FoldCountKey, FoldPreview, LensBoardView, SectionFold } from '../../protocol/board';
import { FOLD_COUNT_KEYS, elementField } from '../../protocol/board';
import type { BoardState } from './state';

/**
 * Reading a board back (pure): the same projection for a live draft (the writer's state) and a
 * durable board (replayBoard's state), so both readers agree.
 *
 * One fold line per top-level section, in creation order. Its counts are reader-facing domain
 * objects from the section's DIRECT children, never raw kind tallies:
 *   findings (finding), decisions (decision), requirements (requirement), steps (order_step),
 *   outcomes (round_outcome), groups (noise_group: counts the noise MEMBERS inside those groups,
 *   labelled "changed regions"), files (code_ref: distinct paths, so repeated refs to one file
 *   count once), comments (callout: the authored annotations).
 * Prose, nested sections, stats, tasks and scenarios are structure or detail and count nothing.
 * Zero counts are left out.
 *
 * The Flagged lens differs: its findings count is every finding the section reaches through
 * nested sections, a code_ref is never a file there (it is a finding's own citation), and a
 * top-level section that reaches no finding gets no fold line at all (the orphan-section guard,
 * `flaggedSectionReachesFinding`, exported so every reader applies the same predicate). The
 * element pool is still the whole pool.
 *
 * On the Noise board a top-level noise group (groups may sit at the top level) gets a fold line
 * of its own, counting its members as changed regions and previewing its reason.
 *
 * Preview: the headings (titles) of the section's titled direct children, in document order,
 * never repeating the section's own title; when there are none, the section's body_markdown or
 * else its first direct prose child, stored whole (the UI clamps it to two lines), with a leading
 * line that only restates the section's title dropped. A section with neither previews [].
 */

const LABELS: Record<FoldCountKey, [one: string, many: string]> = {
  findings: ['finding', 'findings'],
  decisions: ['decision', 'decisions'],
  requirements: ['requirement', 'requirements'],
  steps: ['step', 'steps'],
  outcomes: ['outcome', 'outcomes'],
  groups: ['changed region', 'changed regions'],
  files: ['file', 'files'],
  comments: ['comment', 'comments'],
};

/** Direct children per parent id (null: the top level), each list in creation order. */
export type ChildIndex = ReadonlyMap<string | null, readonly BoardElement[]>;

export function childIndex(elements: ReadonlyMap<string, BoardElement>): ChildIndex {
  const index = new Map<string | null, BoardElement[]>();
  for (const element of elements.values()) {
    const list = index.get(element.parent) ?? [];
    list.push(element);
    index.set(element.parent, list);
  }
  return index;
}

/** The findings a section reaches: its own and those inside its nested sections, in document order. */
export function reachableFindings(elements: ReadonlyMap<string, BoardElement>, sectionId: string, index: ChildIndex = childIndex(elements)): BoardElement[] {
  const found: BoardElement[] = [];
  const seen = new Set<string>();
  const walk = (id: string) => {
    if (seen.has(id)) return;
    seen.add(id);
    for (const child of index.get(id) ?? []) {
      if (child.kind === 'finding') found.push(child);
      else if (child.kind === 'section') walk(child.id);
    }
  };
  walk(sectionId);
  return found;
}

/**
 * The orphan-section guard: a Flagged section is shown only when it reaches at least one finding
 * (through nested sections too). Shared by the live-draft and durable readers.
 */
export function flaggedSectionReachesFinding(elements: ReadonlyMap<string, BoardElement>, sectionId: string, index?: ChildIndex): boolean {
  return reachableFindings(elements, sectionId, index).length > 0;
}

export function readBoard(state: BoardState): LensBoardView {
  const index = childIndex(state.elements);
  const folds: SectionFold[] = [];
  for (const top of index.get(null) ?? []) {
    if (top.kind === 'section') {
      if (state.lens === 'flagged' && !flaggedSectionReachesFinding(state.elements, top.id, index)) continue;
      folds.push(sectionFold(state, top, index));
    } else if (top.kind === 'noise_group') {
      folds.push(groupFold(top, index));
    }
  }
  return {
    lens: state.lens,
    document: state.document,
    status: state.status,
    absence: state.absence,
    revision: state.revision,
    elements: [...state.elements.values()],
    folds,
  };
}

function sectionFold(state: BoardState, section: BoardElement, index: ChildIndex): SectionFold {
  const children = index.get(section.id) ?? [];
  const tally = new Map<FoldCountKey, number>();
  const add = (key: FoldCountKey, n = 1) => tally.set(key, (tally.get(key) ?? 0) + n);
  const files = new Set<string>();
  const flagged = state.lens === 'flagged';
  for (const child of children) {
    switch (child.kind) {
      case 'finding':
        if (!flagged) add('findings');
        break;
      case 'decision':
        add('decisions');
        break;
      case 'requirement':
        add('requirements');
        break;
      case 'order_step':
        add('steps');
        break;
      case 'round_outcome':
        add('outcomes');
        break;
      case 'noise_group':
        add('groups', members(child, index));
        break;
      case 'code_ref': {
        const path = elementField(child, 'path');
        if (!flagged && typeof path === 'string') files.add(path);
        break;
      }
      case 'callout':
        add('comments');
        break;
      default:
        break;
    }
  }
  if (flagged) add('findings', reachableFindings(state.elements, section.id, index).length);
  if (files.size > 0) add('files', files.size);
  const title = stringField(section, 'title');
  return { sectionId: section.id, title, preview: sectionPreview(section, title, children), counts: counted(tally) };
}

function groupFold(group: BoardElement, index: ChildIndex): SectionFold {
  const title = stringField(group, 'title');
  const tally = new Map<FoldCountKey, number>([['groups', members(group, index)]]);
  const reason = stripTitleLine(stringField(group, 'reason'), title);
  return { sectionId: group.id, title, preview: reason ? { text: reason } : [], counts: counted(tally) };
}

function members(group: BoardElement, index: ChildIndex): number {
  return (index.get(group.id) ?? []).filter((e) => e.kind === 'noise_member').length;
}

function counted(tally: ReadonlyMap<FoldCountKey, number>): FoldCount[] {
  const counts: FoldCount[] = [];
  for (const key of FOLD_COUNT_KEYS) {
    const count = tally.get(key) ?? 0;
    if (count <= 0) continue;
    const [one, many] = LABELS[key];
    counts.push({ key, label: count === 1 ? one : many, count });
  }
  return counts;
}

function sectionPreview(section: BoardElement, title: string, children: readonly BoardElement[]): FoldPreview {
  const own = normalize(title);
  const headings = children.map((child) => stringField(child, 'title').trim()).filter((heading) => heading.length > 0 && normalize(heading) !== own);
  if (headings.length > 0) return headings;
  const body = stringField(section, 'body_markdown');
  const firstProse = children.find((child) => child.kind === 'prose');
  const text = stripTitleLine(body || (firstProse ? stringField(firstProse, 'markdown') : ''), title);
  return text ? { text } : [];
}

/** Drops leading lines that only restate the title (`# Title`, `**Title**`, `Title:`), then trims. */
function stripTitleLine(text: string, title: string): string {
  const own = normalize(title);
  const lines = text.trim().split('\n');
  while (lines.length > 0 && own.length > 0 && normalize(lines[0] as string) === own) lines.shift();
  return lines.join('\n').trim();
}

/** A heading's words, without Markdown heading, emphasis or trailing punctuation, case-folded. */
function normalize(text: string): string {
  return text
    .trim()
    .replace(/^#{1,6}\s+/, '')
    .replace(/^[*_]+|[*_]+$/g, '')
    .replace(/[:.\s]+$/, '')
    .trim()
    .toLowerCase();
}

function stringField(element: BoardElement, name: string): string {
  const value = elementField(element, name);
  return typeof value === 'string' ? value : '';
}
