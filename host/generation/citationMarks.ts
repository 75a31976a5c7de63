import MarkdownIt from 'markdown-it';
import { LENSES, PROSE_FIELDS, REFERENCE_FIELDS, elementStrings, type BoardElement, type CitationSide, type ElementKind, type ElementOf, type Lens } from '../../protocol/board';
import { CITATION_CLAIM_MAX_CHARS, type CitationMark, type LaneView } from '../../protocol/review';
import { findProseCitations } from '../board/prose';
import type { CitationIndexLike } from '../board/state';

/**
 * Citation marks (pure): every place a generation's boards cite code, as the editor marks it.
 *
 * - A code_ref is marked once per element that references it (finding.anchor, order_step.span,
 *   decision.evidence, requirement.trace, round_outcome.evidence — read from REFERENCE_FIELDS), with
 *   that element's title or claim. A code_ref nothing references lands on its parent step or
 *   requirement when it sits under one, else on itself (its label as the claim).
 * - A `path.ext:12[-20]` citation in an element's prose fields (PROSE_FIELDS) is found by the same
 *   reading the write boundary uses (host/board/prose.ts), head side; malformed shapes are not
 *   citations. Prose and callouts under a finding, decision or step land on it. A transcribed board
 *   (the Design assembler's) reads path-shaped prose as text, so its prose marks nothing; the
 *   document intro belongs to no element and marks nothing either.
 * - A noise member marks its region on the Noise lens, with its group's title.
 *
 * Lanes in canonical lens order, elements in creation order; no (lens, element, path, side, range)
 * twice. Claims are plain text (Markdown stripped), at most CITATION_CLAIM_MAX_CHARS.
 */

export interface CitationMarkOptions {
  /**
   * The generation's citation index: prose citations that do not resolve in it are dropped, and
   * bare basenames are recognised. Without it every well-formed prose citation is kept.
   */
  citations?: CitationIndexLike;
  /**
   * Marks read for elements by earlier calls with the same index, reused while nothing they
   * depend on changed (the element, its parent and grandparent, the code_refs it references, whether it is
   * referenced itself, the board's prose register — compared by identity, boards being
   * immutable values): a board marked again after every write re-reads only what the write
   * touched (host/review/generationPush.ts). The output is the same with or without it.
   */
  memo?: CitationMarkMemo;
}

/** What `citationMarks` keeps per element between calls (see CitationMarkOptions.memo). */
export type CitationMarkMemo = WeakMap<BoardElement, ElementMarks>;

interface ElementMarks {
  parent: BoardElement | undefined;
  /** A code_ref's claim may be its noise member parent's, which is its group's. */
  grandparent: BoardElement | undefined;
  refs: readonly (BoardElement | undefined)[];
  referenced: boolean;
  transcribed: boolean;
  marks: readonly CitationMark[];
}

export function citationMarkMemo(): CitationMarkMemo {
  return new WeakMap();
}

/** Kinds a reader lands on when something inside them cites code. */
const CLAIM_KINDS: ReadonlySet<ElementKind> = new Set(['finding', 'decision', 'order_step', 'requirement', 'round_outcome']);
/** Kinds that belong to the claim they sit under rather than standing on their own. */
const DEPENDENT_KINDS: ReadonlySet<ElementKind> = new Set(['prose', 'callout', 'code_ref']);

export function citationMarks(lanes: readonly LaneView[], options: CitationMarkOptions = {}): CitationMark[] {
  const marks: CitationMark[] = [];
  const seen = new Set<string>();
  const push = (mark: CitationMark) => {
    const key = `${mark.lens}\u0000${mark.elementId}\u0000${mark.path}\u0000${mark.side}\u0000${mark.startLine}-${mark.endLine}`;
    if (seen.has(key)) return;
    seen.add(key);
    marks.push(mark);
  };
  const ordered = [...lanes].sort((a, b) => LENSES.indexOf(a.lens) - LENSES.indexOf(b.lens));
  for (const lane of ordered) {
    if (lane.board) laneMarks(lane.lens, lane.board.elements, lane.board.document.prose_register === 'transcribed', options, push);
  }
  return marks;
}

function laneMarks(lens: Lens, elements: readonly BoardElement[], transcribed: boolean, options: CitationMarkOptions, push: (mark: CitationMark) => void): void {
  const byId = new Map(elements.map((e) => [e.id, e]));
  const claims = new Map<string, string>();
  const claim = (element: BoardElement): string => {
    let text = claims.get(element.id);
    if (text === undefined) {
      text = claimOf(element, byId, claim);
      claims.set(element.id, text);
    }
    return text;
  };
  const referenced = new Set<string>();
  const refsOf = new Map<BoardElement, string[]>();
  for (const element of elements) {
    const ids = referencedIds(element);
    refsOf.set(element, ids);
    for (const id of ids) if (byId.get(id)?.kind === 'code_ref') referenced.add(id);
  }

  const memo = options.memo;
  for (const element of elements) {
    const ids = refsOf.get(element) ?? [];
    const parent = element.parent !== null ? byId.get(element.parent) : undefined;
    const grandparent = parent && parent.parent !== null ? byId.get(parent.parent) : undefined;
    const refs = ids.map((id) => byId.get(id));
    const isReferenced = referenced.has(element.id);
    const kept = memo?.get(element);
    if (kept && kept.parent === parent && kept.grandparent === grandparent && kept.referenced === isReferenced && kept.transcribed === transcribed && sameItems(kept.refs, refs)) {
      for (const mark of kept.marks) push(mark);
      continue;
    }
    const marks: CitationMark[] = [];
    for (const ref of refs) {
      if (ref?.kind === 'code_ref') marks.push(spanMark(lens, element.id, ref, claim(element)));
    }
    if (element.kind === 'code_ref' && !isReferenced) {
      const landing = landingOf(element, byId);
      marks.push(spanMark(lens, landing.id, element, landing === element ? claim(element) : claim(landing)));
    }
    if (element.kind === 'noise_member') {
      marks.push({
        lens,
        elementId: element.id,
        path: element.path,
        side: sideOf(element.side),
        startLine: element.start_line,
        endLine: Math.max(element.start_line, element.end_line),
        claim: claim(element),
      });
    }
    if (!transcribed) {
      const landing = landingOf(element, byId);
      for (const text of proseTexts(element)) {
        for (const cite of findProseCitations(text, knowledgeOf(options.citations))) {
          if (cite.problem !== null) continue;
          if (options.citations && !options.citations.resolve(cite.path, 'head', cite.start, cite.end).ok) continue;
          marks.push({ lens, elementId: landing.id, path: cite.path, side: 'head', startLine: cite.start, endLine: cite.end, claim: claim(landing) });
        }
      }
    }
    memo?.set(element, { parent, grandparent, refs, referenced: isReferenced, transcribed, marks });
    for (const mark of marks) push(mark);
  }
}

function sameItems<T>(a: readonly T[], b: readonly T[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function spanMark(lens: Lens, elementId: string, ref: ElementOf<'code_ref'>, claim: string): CitationMark {
  return { lens, elementId, path: ref.path, side: sideOf(ref.side), startLine: ref.start_line, endLine: Math.max(ref.start_line, ref.end_line), claim };
}

function sideOf(side: unknown): CitationSide {
  return side === 'base' ? 'base' : 'head';
}

/** The code_ref ids an element's reference fields name. */
function referencedIds(element: BoardElement): string[] {
  const fields = REFERENCE_FIELDS[element.kind];
  if (!fields) return [];
  return Object.keys(fields).flatMap((name) => elementStrings(element, name));
}

/** Where a reader lands for a citation inside this element: the claim it belongs to, else itself. */
function landingOf(element: BoardElement, byId: ReadonlyMap<string, BoardElement>): BoardElement {
  if (!DEPENDENT_KINDS.has(element.kind) || element.parent === null) return element;
  const parent = byId.get(element.parent);
  return parent && CLAIM_KINDS.has(parent.kind) ? parent : element;
}

function proseTexts(element: BoardElement): string[] {
  return (PROSE_FIELDS[element.kind] ?? []).flatMap((name) => elementStrings(element, name));
}

function knowledgeOf(index: CitationIndexLike | undefined) {
  if (!index?.hasPath || !index.pathsNamed) return undefined;
  return { hasPath: index.hasPath.bind(index), pathsNamed: index.pathsNamed.bind(index) };
}

/** An element's title or claim, as hover text (`claim` answers for another element, memoised). */
function claimOf(element: BoardElement, byId: ReadonlyMap<string, BoardElement>, claim: (other: BoardElement) => string): string {
  switch (element.kind) {
    case 'finding':
    case 'order_step':
    case 'requirement':
    case 'section':
    case 'noise_group':
      return plainText(element.title);
    case 'decision':
      return plainText(element.title?.trim() ? element.title : element.statement);
    case 'round_outcome':
      return element.note?.trim() ? plainText(element.note) : `Ask ${element.ask_id}: ${element.outcome}`;
    case 'prose':
    case 'callout':
      return plainText(element.markdown);
    case 'scenario':
      return plainText(element.name);
    case 'task':
      return plainText(element.text);
    case 'stat':
      return plainText((element.stat_labels ?? []).join(', '));
    case 'code_ref': {
      if (element.label?.trim()) return plainText(element.label);
      const parent = element.parent !== null ? byId.get(element.parent) : undefined;
      if (parent && parent.kind !== 'code_ref') return claim(parent);
      const end = Math.max(element.start_line, element.end_line);
      return `${element.path}:${element.start_line === end ? element.start_line : `${element.start_line}-${end}`}`;
    }
    case 'noise_member': {
      const group = element.parent !== null ? byId.get(element.parent) : undefined;
      return group?.kind === 'noise_group' ? claim(group) : 'Filed as safe to skip';
    }
  }
}

// ─── Markdown to plain text ─────────────────────────────────────────────────────────────────

const md = new MarkdownIt({ html: false, linkify: false, typographer: false, breaks: false });

/**
 * Markdown as the words a reader sees (emphasis, links and code marks dropped; an image as its alt
 * text), whitespace collapsed, cut at `max` characters with an ellipsis. Only a bounded prefix is
 * parsed: a claim is a line of hover text, not the whole body.
 */
export function plainText(markdown: string, max = CITATION_CLAIM_MAX_CHARS): string {
  const parts: string[] = [];
  for (const token of md.parse(markdown.slice(0, max * 4), {})) {
    if (token.type === 'inline') {
      for (const child of token.children ?? []) {
        if (child.type === 'text' || child.type === 'code_inline') parts.push(child.content);
        else if (child.type === 'image') parts.push(child.content);
        else if (child.type === 'softbreak' || child.type === 'hardbreak') parts.push(' ');
      }
      parts.push(' ');
    } else if (token.type === 'fence' || token.type === 'code_block') parts.push(token.content, ' ');
  }
  const flat = parts.join('').replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1).trimEnd()}…`;
}
