import { REFERENCE_FIELDS, elementField, type BoardElement, type Severity } from '../../protocol/board';
import { filesOnSides, type Patchset, type Side } from '../../protocol/patchset';
import type { BoardState } from '../board/state';

/**
 * PURE. A re-review's new findings, kept by where they sit: the delta generation's Flagged board
 * keeps a finding anchored on a changed line of the fix delta at its severity, and one anchored
 * only off those lines (on a hunk's context: code the author did not touch since the review, such
 * as what the merged base brought) only at `blocker`, the critical tier. The others leave the
 * board with the code cards only they cited, and one host callout names each of them — title,
 * severity, where it was anchored — so nothing leaves unsaid. A finding whose anchors cannot be
 * read as lines stays. Applying it again changes nothing.
 */

/** The severity a finding outside the delta needs to stay. */
export const OUTSIDE_DELTA_KEPT: Severity = 'blocker';
/** How many left-out findings the callout names one by one. */
export const OUTSIDE_DELTA_LISTED = 10;

export interface DeltaLines {
  /** Whether [start, end] on `side` of `path` holds an added (head) or deleted (base) line of the delta. */
  touches(path: string, side: Side, start: number, end: number): boolean;
}

/** The delta patchset's changed lines: added lines on the head side, deleted lines on the base; a truncated file's uncaptured tail counts as changed. */
export function deltaLines(patchset: Patchset): DeltaLines {
  const named = filesOnSides(patchset.files);
  const lines = new Map<object, { head: number[]; base: number[] }>();
  for (const file of patchset.files) {
    const head: number[] = [];
    const base: number[] = [];
    for (const hunk of file.hunks) {
      for (const line of hunk.lines) {
        if (line.kind === 'add' && line.newLine !== null) head.push(line.newLine);
        if (line.kind === 'del' && line.oldLine !== null) base.push(line.oldLine);
      }
    }
    lines.set(file, { head: head.sort((a, b) => a - b), base: base.sort((a, b) => a - b) });
  }
  return {
    touches(path, side, start, end) {
      const file = named.on(path, side);
      if (!file) return false;
      const tail = file.truncation?.tailFrom[side] ?? null;
      if (tail !== null && end >= tail) return true;
      const sorted = lines.get(file)?.[side] ?? [];
      // The first changed line at or after `start`, by binary search.
      let lo = 0;
      let hi = sorted.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if ((sorted[mid] as number) < start) lo = mid + 1;
        else hi = mid;
      }
      return lo < sorted.length && (sorted[lo] as number) <= end;
    },
  };
}

export interface LeftOutFinding {
  id: string;
  title: string;
  severity: Severity;
  /** Where it was anchored: `path:line` or `path:start-end`, with the side when it is the base. */
  places: string[];
}

export interface DeltaScoped {
  board: BoardState;
  leftOut: LeftOutFinding[];
}

type Finding = Extract<BoardElement, { kind: 'finding' }>;
type CodeRef = Extract<BoardElement, { kind: 'code_ref' }>;

/** The Flagged board with every finding below blocker anchored only off the delta's changed lines left out, and said. */
export function keepFindingsInDelta(board: BoardState, lines: DeltaLines, reviewedCommit: string): DeltaScoped {
  const leftOut: LeftOutFinding[] = [];
  for (const el of board.elements.values()) {
    if (el.kind !== 'finding' || el.severity === OUTSIDE_DELTA_KEPT) continue;
    const refs = el.anchor.map((id) => board.elements.get(id));
    if (refs.length === 0 || !refs.every((r): r is CodeRef => r?.kind === 'code_ref')) continue;
    if (refs.some((r) => lines.touches(r.path, r.side, r.start_line, r.end_line))) continue;
    leftOut.push({ id: el.id, title: el.title, severity: el.severity, places: refs.map(placeOf) });
  }
  if (leftOut.length === 0) return { board, leftOut };
  // The note's seq follows every element the board had, the removed included: a seq is never reused.
  const seq = Math.max(-1, ...[...board.elements.values()].map((e) => e.seq)) + 1;
  const removed = withoutFindings(board, new Set(leftOut.map((f) => f.id)));
  return { board: withHostNote(removed, outsideDeltaNote(leftOut, reviewedCommit), seq), leftOut };
}

/** The callout: how many left, why, and each one's title, severity and place. */
export function outsideDeltaNote(leftOut: readonly LeftOutFinding[], reviewedCommit: string): string {
  const n = leftOut.length;
  const listed = leftOut.slice(0, OUTSIDE_DELTA_LISTED).map((f) => `${quote(f.title)} (${f.severity}; ${f.places.join(', ')})`);
  const more = n > OUTSIDE_DELTA_LISTED ? `, and ${n - OUTSIDE_DELTA_LISTED} more` : '';
  return (
    `${n} finding${n === 1 ? '' : 's'} outside the fix delta below ${OUTSIDE_DELTA_KEPT} ${n === 1 ? 'was' : 'were'} left out: ` +
    `a re-review keeps a new finding on lines the author did not change since ${reviewedCommit.slice(0, 7)} only when it is a ${OUTSIDE_DELTA_KEPT} — ${listed.join('; ')}${more}.`
  );
}

function placeOf(ref: CodeRef): string {
  const lines = ref.start_line === ref.end_line ? `${ref.start_line}` : `${ref.start_line}-${ref.end_line}`;
  return `${ref.path}:${lines}${ref.side === 'base' ? ' (base)' : ''}`;
}

function quote(title: string): string {
  return `“${title.replace(/[\\`*_[\]<>]/g, (c) => `\\${c}`)}”`;
}

/** Removes findings, their subtrees, and the code cards only they cited. */
function withoutFindings(board: BoardState, ids: ReadonlySet<string>): BoardState {
  const children = new Map<string, string[]>();
  for (const el of board.elements.values()) if (el.parent) children.set(el.parent, [...(children.get(el.parent) ?? []), el.id]);
  const gone = new Set<string>();
  const collect = (id: string): void => {
    gone.add(id);
    for (const c of children.get(id) ?? []) collect(c);
  };
  for (const id of ids) collect(id);
  const citedElsewhere = (refId: string) =>
    [...board.elements.values()].some((el) => {
      if (gone.has(el.id)) return false;
      return Object.keys(REFERENCE_FIELDS[el.kind] ?? {}).some((field) => {
        const v = elementField(el, field);
        return Array.isArray(v) ? v.includes(refId) : v === refId;
      });
    });
  for (const id of ids) {
    for (const refId of (board.elements.get(id) as Finding).anchor) {
      const ref = board.elements.get(refId);
      if (ref?.kind === 'code_ref' && !(children.get(refId) ?? []).length && !citedElsewhere(refId)) gone.add(refId);
    }
  }
  return { ...board, elements: new Map([...board.elements].filter(([id]) => !gone.has(id))), revision: board.revision + 1 };
}

/** A host note at the top of the board, once. */
function withHostNote(board: BoardState, markdown: string, seq: number): BoardState {
  if ([...board.elements.values()].some((el) => el.kind === 'callout' && el.author === 'host' && el.markdown === markdown)) return board;
  const id = `e${board.nextId}`;
  const note = { id, kind: 'callout', parent: null, author: 'host', seq, tone: 'note', markdown } as unknown as BoardElement;
  return { ...board, elements: new Map([...board.elements, [id, note]]), nextId: board.nextId + 1, revision: board.revision + 1 };
}
