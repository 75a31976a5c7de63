import { KIND_INPUTS, REFERENCE_FIELDS, type BoardElement, type ElementKind } from '../../protocol/board';
import { canonicalJson } from '../capture/ids';
import type { BoardState } from './state';

/**
 * Round composition: the pure pass between a successor board's drafting and its persistence.
 * A round re-drafts every lens; this pass says what the re-draft changed and applies what the
 * round settled, without touching the predecessor (a frozen generation is never rewritten).
 *
 * - Section stamps (the one signal): a successor section is `new` when no section of the
 *   predecessor sits at its title path, carried (delta null) when one there has the same whole
 *   subtree signature, else `reworked`. Predecessor sections with no successor at their title path
 *   are removals, read separately (a stamp can only sit on what exists). The lane's verdict —
 *   "carrying forward" or "reworked" — is read from these stamps and removals, never guessed.
 * - Signatures cover what a reader reads: each element's kind and authored fields, references
 *   followed to the signature of what they name (ids are per board and mean nothing across two).
 *   Host stamps (ids, seq, author, patchset id, hunk ids, delta) are left out.
 * - Finding lifecycle (Flagged): a predecessor finding whose dispatched ask the report verified
 *   addressed is dropped from the successor, and a dismissed one has its dismissal cloned — only
 *   when exactly one successor finding matches it (same category and title). No match leaves
 *   nothing to do; more than one leaves every candidate visible, says so in a host callout and
 *   reports the disposition detached.
 * - Sequence keeps the predecessor's host chapters (`Round k · Addressed`) and appends this
 *   round's, built from the report's addressed asks, each with the changed lines it rests on.
 *
 * Idempotent: composing a composed board again changes nothing (a host restart between the
 * composition's write and the lane's outcome composes again).
 */

export type SectionDelta = 'new' | 'reworked' | null;

export interface RoundAddressed {
  askId: string;
  /** The ask's words, exactly as dispatched. */
  text: string;
  /** Where the report's evidence rests on the successor (host-derived anchors). */
  evidence: ReadonlyArray<{ path: string; side: 'base' | 'head'; line: number }>;
}

export interface FindingDispositionInput {
  /** The predecessor Flagged board's finding id. */
  findingId: string;
  disposition: 'addressed' | 'dismissed';
}

export interface RoundComposeInput {
  ordinal: number;
  /** The predecessor's board of this lens; null when it had none (failed, or no predecessor board). */
  prior: BoardState | null;
  /** Sequence: the asks the report verified addressed, in dispatch order. */
  addressed: readonly RoundAddressed[];
  /** Flagged: predecessor findings the round settled (an addressed ask on them, or a dismissal). */
  dispositions: readonly FindingDispositionInput[];
  /** Hunk ids of a successor span (the writer's citation index); null when the span is not changed lines. */
  resolveHunks(path: string, side: 'base' | 'head', start: number, end: number): readonly string[] | null;
}

export interface FindingLifecycle {
  prior: string;
  disposition: 'addressed' | 'dismissed';
  /** dropped / dismissed: applied to `successor`; unmatched: nothing re-raised it; detached: ambiguous, nothing applied. */
  result: 'dropped' | 'dismissed' | 'unmatched' | 'detached' | 'unknown';
  successor: string | null;
  candidates: readonly string[];
}

export interface LensDelta {
  verdict: 'carrying-forward' | 'reworked';
  /** Successor section ids by stamp. */
  added: readonly string[];
  reworked: readonly string[];
  carried: readonly string[];
  /** Titles of predecessor sections with no successor (outermost only). */
  removed: readonly string[];
  /** True when something outside the sections changed (document, loose elements, absence). */
  envelopeChanged: boolean;
}

export interface LensComposition {
  board: BoardState;
  delta: LensDelta;
  findings: readonly FindingLifecycle[];
}

export const ROUND_CHAPTER_PATTERN = /^Round (\d+) · Addressed$/;
export function roundChapterTitle(ordinal: number): string {
  return `Round ${ordinal} · Addressed`;
}

export function composeRound(drafted: BoardState, input: RoundComposeInput): LensComposition {
  let board = drafted;
  let findings: FindingLifecycle[] = [];
  if (drafted.status === 'finished') {
    if (drafted.lens === 'flagged') ({ board, findings } = applyFindingLifecycle(board, input.prior, input.dispositions, input.ordinal));
    if (drafted.lens === 'sequence') board = withRoundChapters(board, input);
  }
  const stamped = stampSections(board, input.prior);
  return { board: stamped.board, delta: stamped.delta, findings };
}

// ─── Signatures and stamps ───────────────────────────────────────────────────────────────────

type Loose = Record<string, unknown> & { id: string; kind: ElementKind; parent: string | null; author: string; seq: number };
const loose = (el: BoardElement): Loose => el as unknown as Loose;
const typed = (el: Loose): BoardElement => el as unknown as BoardElement;

function childrenIndex(board: BoardState): Map<string | null, BoardElement[]> {
  const index = new Map<string | null, BoardElement[]>();
  for (const el of board.elements.values()) {
    const list = index.get(el.parent) ?? [];
    list.push(el);
    index.set(el.parent, list);
  }
  return index;
}

/** Signatures of every element's subtree, memoized per board. */
function signer(board: BoardState): (id: string) => string {
  const children = childrenIndex(board);
  const memo = new Map<string, string>();
  const own = (el: BoardElement, seen: ReadonlySet<string>): unknown => {
    const fields = loose(el);
    const refs = REFERENCE_FIELDS[el.kind] ?? {};
    const out: Record<string, unknown> = { kind: el.kind };
    for (const key of Object.keys(KIND_INPUTS[el.kind].shape)) {
      const value = fields[key];
      // A round chapter's code cards cite its own round's capture: carried on, they are left behind (see withRoundChapters).
      if (value === undefined || (el.kind === 'round_outcome' && key === 'evidence')) continue;
      if (key in refs) {
        const named = Array.isArray(value) ? (value as string[]) : [value as string];
        out[key] = named.map((id) => (board.elements.has(id) && !seen.has(id) ? sign(id, seen) : `missing:${id}`));
      } else {
        out[key] = value;
      }
    }
    return out;
  };
  const sign = (id: string, seen: ReadonlySet<string> = new Set()): string => {
    const cached = memo.get(id);
    if (cached !== undefined) return cached;
    const el = board.elements.get(id) as BoardElement;
    const path = new Set(seen).add(id);
    const chapter = isRoundChapter(el);
    const kids = (children.get(id) ?? []).filter((c) => !(chapter && c.kind === 'code_ref'));
    const value = canonicalJson([own(el, path), kids.map((c) => sign(c.id, path))]);
    memo.set(id, value);
    return value;
  };
  return (id) => sign(id);
}

function isRoundChapter(el: BoardElement): boolean {
  return el.kind === 'section' && el.parent === null && el.author === 'host' && ROUND_CHAPTER_PATTERN.test(el.title);
}

function sectionPaths(board: BoardState): Map<string, string> {
  const paths = new Map<string, string>();
  const pathOf = (el: BoardElement): string => {
    const known = paths.get(el.id);
    if (known !== undefined) return known;
    const parent = el.parent ? board.elements.get(el.parent) : undefined;
    const prefix = parent && parent.kind === 'section' ? `${pathOf(parent)}\u0000` : '';
    const path = `${prefix}${el.kind === 'section' ? el.title.trim() : ''}`;
    paths.set(el.id, path);
    return path;
  };
  for (const el of board.elements.values()) if (el.kind === 'section') pathOf(el);
  return paths;
}

function envelopeSignature(board: BoardState, sign: (id: string) => string): string {
  const loose = [...board.elements.values()].filter((el) => el.parent === null && el.kind !== 'section').map((el) => sign(el.id));
  return canonicalJson([board.status, board.absence, board.document.title, board.document.intro_markdown, loose]);
}

function stampSections(board: BoardState, prior: BoardState | null): { board: BoardState; delta: LensDelta } {
  const sign = signer(board);
  const paths = sectionPaths(board);
  const priorSign = prior ? signer(prior) : null;
  const priorPaths = prior ? sectionPaths(prior) : new Map<string, string>();
  const priorByPath = new Map<string, string[]>();
  for (const [id, path] of priorPaths) priorByPath.set(path, [...(priorByPath.get(path) ?? []), id]);

  const elements = new Map(board.elements);
  const added: string[] = [];
  const reworked: string[] = [];
  const carried: string[] = [];
  for (const [id, path] of paths) {
    const candidates = priorByPath.get(path) ?? [];
    const signature = sign(id);
    const stamp: SectionDelta = candidates.length === 0 ? 'new' : candidates.some((c) => (priorSign as (id: string) => string)(c) === signature) ? null : 'reworked';
    (stamp === 'new' ? added : stamp === 'reworked' ? reworked : carried).push(id);
    const el = board.elements.get(id) as BoardElement;
    if (el.kind === 'section' && el.delta !== stamp) elements.set(id, typed({ ...loose(el), delta: stamp }));
  }
  const present = new Set(paths.values());
  const removed: string[] = [];
  if (prior) {
    for (const [id, path] of priorPaths) {
      if (present.has(path)) continue;
      const el = prior.elements.get(id) as BoardElement;
      const parent = el.parent ? prior.elements.get(el.parent) : undefined;
      // Outermost only: a removed section's own sections went with it.
      if (parent && parent.kind === 'section' && !present.has(priorPaths.get(parent.id) as string)) continue;
      if (el.kind === 'section') removed.push(el.title);
    }
  }
  const envelopeChanged = prior === null || envelopeSignature(board, sign) !== envelopeSignature(prior, priorSign as (id: string) => string);
  const verdict = added.length > 0 || reworked.length > 0 || removed.length > 0 || envelopeChanged ? 'reworked' : 'carrying-forward';
  const changed = [...elements].some(([id, el]) => board.elements.get(id) !== el);
  return {
    board: changed ? { ...board, elements, revision: board.revision + 1 } : board,
    delta: { verdict, added, reworked, carried, removed, envelopeChanged },
  };
}

/**
 * The delta a settled successor board shows against its predecessor, read from the stamps the
 * composition wrote (new / reworked sections) and the removals beside them: the lane's verdict
 * after a reload, by the same matcher that stamped it.
 */
export function lensDelta(board: BoardState, prior: BoardState | null): LensDelta {
  return stampSections(board, prior).delta;
}

// ─── Findings ────────────────────────────────────────────────────────────────────────────────

function findingKey(el: BoardElement): string | null {
  if (el.kind !== 'finding') return null;
  return `${el.category}\u0000${el.title.normalize('NFC').toLowerCase().replace(/\s+/g, ' ').trim().replace(/[.!]+$/, '')}`;
}

function applyFindingLifecycle(
  board: BoardState,
  prior: BoardState | null,
  dispositions: readonly FindingDispositionInput[],
  ordinal: number,
): { board: BoardState; findings: FindingLifecycle[] } {
  const findings: FindingLifecycle[] = [];
  const drop = new Set<string>();
  const detachedTitles: string[] = [];
  const droppedTitles: string[] = [];
  for (const d of dispositions) {
    const priorFinding = prior?.elements.get(d.findingId);
    const key = priorFinding ? findingKey(priorFinding) : null;
    if (!priorFinding || key === null) {
      findings.push({ prior: d.findingId, disposition: d.disposition, result: 'unknown', successor: null, candidates: [] });
      continue;
    }
    const candidates = [...board.elements.values()].filter((el) => findingKey(el) === key).map((el) => el.id);
    if (candidates.length === 0) {
      findings.push({ prior: d.findingId, disposition: d.disposition, result: 'unmatched', successor: null, candidates });
    } else if (candidates.length > 1) {
      findings.push({ prior: d.findingId, disposition: d.disposition, result: 'detached', successor: null, candidates });
      detachedTitles.push((priorFinding as Extract<BoardElement, { kind: 'finding' }>).title);
    } else {
      const successor = candidates[0] as string;
      findings.push({ prior: d.findingId, disposition: d.disposition, result: d.disposition === 'addressed' ? 'dropped' : 'dismissed', successor, candidates });
      if (d.disposition === 'addressed') {
        drop.add(successor);
        droppedTitles.push((priorFinding as Extract<BoardElement, { kind: 'finding' }>).title);
      }
    }
  }
  let next = board;
  if (drop.size > 0) next = removeFindings(next, drop);
  // Said on the board, so a finding that left reads as addressed, never as one that was not found.
  if (droppedTitles.length > 0) next = withHostCallout(next, `Round ${ordinal}: addressed as asked, so no longer listed here — ${quoteTitles(droppedTitles)}.`);
  if (detachedTitles.length > 0) next = withHostCallout(next, `Round ${ordinal}: an earlier disposition of ${quoteTitles(detachedTitles)} matches more than one finding here, so none of them was hidden.`);
  return { board: next, findings };
}

function quoteTitles(titles: readonly string[]): string {
  return titles.map((t) => `“${t.replace(/[\\`*_[\]<>]/g, (c) => `\\${c}`)}”`).join(', ');
}

/** Removes findings, their subtrees, and the code_refs only they cited. */
function removeFindings(board: BoardState, ids: ReadonlySet<string>): BoardState {
  const children = childrenIndex(board);
  const gone = new Set<string>();
  const collect = (id: string) => {
    gone.add(id);
    for (const c of children.get(id) ?? []) collect(c.id);
  };
  for (const id of ids) collect(id);
  const citedBy = (id: string, excluding: ReadonlySet<string>) =>
    [...board.elements.values()].some((el) => {
      if (excluding.has(el.id)) return false;
      const refs = REFERENCE_FIELDS[el.kind] ?? {};
      return Object.keys(refs).some((field) => {
        const v = loose(el)[field];
        return Array.isArray(v) ? (v as string[]).includes(id) : v === id;
      });
    });
  for (const id of ids) {
    const finding = board.elements.get(id);
    if (finding?.kind !== 'finding') continue;
    for (const ref of finding.anchor) {
      const el = board.elements.get(ref);
      if (el?.kind === 'code_ref' && !(children.get(ref) ?? []).length && !citedBy(ref, gone)) gone.add(ref);
    }
  }
  const elements = new Map([...board.elements].filter(([id]) => !gone.has(id)));
  return { ...board, elements, revision: board.revision + 1 };
}

/** A host note at the top of the board, once (composing again adds no second one). */
function withHostCallout(board: BoardState, markdown: string): BoardState {
  const exists = [...board.elements.values()].some((el) => el.kind === 'callout' && el.author === 'host' && el.markdown === markdown);
  if (exists) return board;
  return addElements(board, [{ kind: 'callout', parent: null, fields: { tone: 'note', markdown } }]);
}

// ─── Sequence chapters ───────────────────────────────────────────────────────────────────────

interface NewElement {
  kind: ElementKind;
  /** An existing element id, or `#<n>`: the n-th element of this same batch. */
  parent: string | null;
  fields: Record<string, unknown>;
}

function addElements(board: BoardState, batch: readonly NewElement[]): BoardState {
  const elements = new Map(board.elements);
  let n = board.nextId;
  let seq = Math.max(-1, ...[...board.elements.values()].map((e) => e.seq)) + 1;
  const minted: string[] = [];
  const resolve = (ref: unknown): unknown => (typeof ref === 'string' && ref.startsWith('#') ? minted[Number(ref.slice(1))] : ref);
  for (const item of batch) {
    const id = `e${n++}`;
    minted.push(id);
    const fields: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(item.fields)) fields[k] = Array.isArray(v) ? v.map(resolve) : resolve(v);
    elements.set(id, typed({ id, kind: item.kind, parent: (resolve(item.parent) as string | null) ?? null, author: 'host', seq: seq++, ...fields }));
  }
  return { ...board, elements, nextId: n, revision: board.revision + 1 };
}

function withRoundChapters(board: BoardState, input: RoundComposeInput): BoardState {
  const titles = new Set([...board.elements.values()].filter((el) => el.kind === 'section' && el.author === 'host').map((el) => (el as Extract<BoardElement, { kind: 'section' }>).title));
  let next = board;
  // Earlier rounds' chapters, carried as they were (in their order), then this round's.
  if (input.prior) {
    const children = childrenIndex(input.prior);
    const chapters = [...input.prior.elements.values()].filter(
      (el): el is Extract<BoardElement, { kind: 'section' }> => isRoundChapter(el) && !titles.has((el as Extract<BoardElement, { kind: 'section' }>).title),
    );
    for (const chapter of chapters) {
      const batch: NewElement[] = [];
      const index = new Map<string, number>();
      const walk = (el: BoardElement) => {
        // An earlier round's code cards cite lines of that round's capture, which this one may
        // number differently: the chapter carries its asks and outcomes, the ledger keeps its diff.
        if (el.kind === 'code_ref') return;
        index.set(el.id, batch.length);
        const fields = { ...loose(el) };
        for (const k of ['id', 'kind', 'parent', 'author', 'seq']) delete fields[k];
        if (el.kind === 'round_outcome') fields.evidence = [];
        batch.push({ kind: el.kind, parent: el.parent && index.has(el.parent) ? `#${index.get(el.parent)}` : null, fields });
        for (const c of children.get(el.id) ?? []) walk(c);
      };
      walk(chapter);
      next = addElements(next, batch);
      titles.add(chapter.title);
    }
  }
  const title = roundChapterTitle(input.ordinal);
  if (input.addressed.length === 0 || titles.has(title)) return next;
  const batch: NewElement[] = [
    { kind: 'section', parent: null, fields: { title, body_markdown: `What round ${input.ordinal}'s verified report found addressed, in the order the asks went out, on the lines it rests on.`, delta: null } },
  ];
  for (const ask of input.addressed) {
    const refs: string[] = [];
    for (const ev of ask.evidence) {
      const hunks = input.resolveHunks(ev.path, ev.side, ev.line, ev.line);
      if (hunks === null) continue;
      refs.push(`#${batch.length}`);
      batch.push({ kind: 'code_ref', parent: '#0', fields: { path: ev.path, side: ev.side, start_line: ev.line, end_line: ev.line, patchset_id: board.patchsetId, hunk_ids: [...hunks] } });
    }
    batch.push({ kind: 'round_outcome', parent: '#0', fields: { ask_id: ask.askId, outcome: 'addressed', note: ask.text, evidence: refs } });
  }
  return addElements(next, batch);
}
