import { ELEMENT_KINDS, HOST_FIELDS, KIND_INPUTS, REFERENCE_FIELDS, type BoardElement, type ElementKind, type FinishPointer, type ReferenceRepair } from '../../protocol/board';
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
 * - Signatures cover what a reader reads: each element's kind, authored fields and the host fields
 *   that mean the same in every generation (a finding's status and accord, a noise member's
 *   region), references followed to the signature of what they name (ids are per board and mean
 *   nothing across two). Left out: ids, seq, author, and the GENERATION_FIELDS below.
 * - Verbatim carry: an element whose subtree signature equals a predecessor element's in the same
 *   place (the same parent title path) IS that element, so the successor holds the predecessor's
 *   bytes — id, seq, author and every field — and whatever is keyed by element id (quote threads,
 *   a finding's disposition, the panel's folds) sees one element across generations. A reworked
 *   section keeps its predecessor's id too (the same section, re-drafted), so what did not change
 *   inside it carries with its parent intact. Only GENERATION_FIELDS stay the successor's, and a
 *   reference or parent naming an element that was not carried names it by its successor id.
 *   An id both generations hold names one element: any other successor element drafted under a
 *   predecessor id is renumbered past every id either board used, and every reference to it
 *   (REFERENCE_FIELDS, parents, repairs, finish pointers) follows.
 * - Finding lifecycle (Flagged): a predecessor finding whose dispatched ask the report verified
 *   addressed is dropped from the successor, and a dismissed one has its dismissal cloned — only
 *   when exactly one successor finding matches it (same category and title). No match leaves
 *   nothing to do; more than one leaves every candidate visible, says so in a host callout and
 *   reports the disposition detached. Results name the composed board's ids.
 * - Sequence keeps the predecessor's host chapters (`Round k · Addressed`) and appends this
 *   round's, built from the report's addressed asks, each with the changed lines it rests on.
 *
 * Idempotent: composing a composed board again changes nothing (a host restart between the
 * composition's write and the lane's outcome composes again).
 */

/**
 * Host fields that belong to one generation, never compared and never carried: a section's
 * stamp is this composition's verdict (the predecessor's was about its own predecessor), and the
 * patchset and hunk ids of a code citation or a noise member name this generation's capture —
 * hunk ids are per patchset, and a carried code_ref must cite the patchset its board reads, at the
 * lines the signature proved unchanged.
 */
const GENERATION_FIELDS: Partial<Record<ElementKind, readonly string[]>> = {
  section: ['delta'],
  code_ref: ['patchset_id', 'hunk_ids'],
  noise_member: ['hunk_id'],
};

/** The fields a signature reads, per kind: authored inputs and the host fields that are not GENERATION_FIELDS. */
const SIGNED_FIELDS = {} as Record<ElementKind, readonly string[]>;
for (const kind of ELEMENT_KINDS) {
  const host = Object.keys((HOST_FIELDS as Partial<Record<ElementKind, { shape: object }>>)[kind]?.shape ?? {});
  const own = GENERATION_FIELDS[kind] ?? [];
  SIGNED_FIELDS[kind] = [...Object.keys(KIND_INPUTS[kind].shape), ...host.filter((k) => !own.includes(k))];
}

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
  /**
   * Drafted id → composed id, for every element of the drafted board whose id the composition
   * changed (carried onto its predecessor's id, or renumbered off an id the predecessor used).
   * What was anchored on the draft while it was live follows these (host/rounds/compose.ts).
   */
  renamed: ReadonlyMap<string, string>;
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
  const carry = carryForward(stamped.board, input.prior, stamped.sign, stamped.priorSign);
  // One composition is one write, however many passes it took.
  const composed = carry.board === drafted ? drafted : { ...carry.board, revision: drafted.revision + 1 };
  // Ids not on the composed board (a dropped finding) are the drafted board's and stay as they were.
  const final = (id: string) => carry.ids.get(id) ?? id;
  const delta: LensDelta = { ...stamped.delta, added: stamped.delta.added.map(final), reworked: stamped.delta.reworked.map(final), carried: stamped.delta.carried.map(final) };
  return {
    board: composed,
    delta,
    findings: findings.map((f) => ({ ...f, successor: f.successor === null ? null : final(f.successor), candidates: f.candidates.map(final) })),
    renamed: new Map([...carry.ids].filter(([from, to]) => from !== to && drafted.elements.has(from))),
  };
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

/** Children per parent as signatures read them: a round chapter's code cards are left out (see withRoundChapters). */
function signedChildren(board: BoardState): Map<string | null, BoardElement[]> {
  const index = childrenIndex(board);
  for (const [parent, kids] of index) {
    const el = parent === null ? undefined : board.elements.get(parent);
    if (el && isRoundChapter(el))
      index.set(
        parent,
        kids.filter((c) => c.kind !== 'code_ref'),
      );
  }
  return index;
}

/** Signatures of every element's subtree, memoized per board. */
function signer(board: BoardState): Signer {
  const children = signedChildren(board);
  const memo = new Map<string, string>();
  const own = (el: BoardElement, seen: ReadonlySet<string>): unknown => {
    const fields = loose(el);
    const refs = REFERENCE_FIELDS[el.kind] ?? {};
    const out: Record<string, unknown> = { kind: el.kind };
    for (const key of SIGNED_FIELDS[el.kind]) {
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
    const kids = children.get(id) ?? [];
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

type Signer = (id: string) => string;

function stampSections(board: BoardState, prior: BoardState | null): { board: BoardState; delta: LensDelta; sign: Signer; priorSign: Signer | null } {
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
    sign,
    priorSign,
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

// ─── Verbatim carry ──────────────────────────────────────────────────────────────────────────

/**
 * Which successor elements are which predecessor elements, matched top down place by place: the
 * top level, then inside every section both boards hold at one title path. In a place, a successor
 * element whose subtree signature equals an unmatched predecessor element's there is carried with
 * its whole subtree, child for child (equal signatures have equal children, in order); then each
 * successor section left over continues the first unmatched predecessor section of its title
 * there, and the match goes on inside the two. A predecessor element is matched at most once.
 */
function matchPredecessor(board: BoardState, prior: BoardState, sign: Signer, priorSign: Signer): { carried: Map<string, string>; continued: Map<string, string> } {
  const kids = signedChildren(board);
  const priorKids = signedChildren(prior);
  const carried = new Map<string, string>();
  const continued = new Map<string, string>();
  const used = new Set<string>();
  const free = (id: string): boolean => !used.has(id) && (priorKids.get(id) ?? []).every((c) => free(c.id));
  const zip = (successor: string, predecessor: string) => {
    carried.set(successor, predecessor);
    used.add(predecessor);
    const theirs = priorKids.get(predecessor) ?? [];
    (kids.get(successor) ?? []).forEach((c, i) => zip(c.id, (theirs[i] as BoardElement).id));
  };
  const place = (successor: string | null, predecessor: string | null) => {
    const theirs = priorKids.get(predecessor) ?? [];
    const bySignature = new Map<string, BoardElement[]>();
    for (const c of theirs) {
      const signature = priorSign(c.id);
      bySignature.set(signature, [...(bySignature.get(signature) ?? []), c]);
    }
    const left: BoardElement[] = [];
    for (const el of kids.get(successor) ?? []) {
      const match = (bySignature.get(sign(el.id)) ?? []).find((c) => free(c.id));
      if (match) zip(el.id, match.id);
      else left.push(el);
    }
    for (const el of left) {
      if (el.kind !== 'section') continue;
      const title = el.title.trim();
      const match = theirs.find((c) => c.kind === 'section' && c.title.trim() === title && !used.has(c.id));
      if (!match) continue;
      continued.set(el.id, match.id);
      used.add(match.id);
      place(el.id, match.id);
    }
  };
  place(null, null);
  return { carried, continued };
}

const idNumber = (id: string): number => {
  const m = /^e(\d+)$/.exec(id);
  return m ? Number(m[1]) : 0;
};

/**
 * The successor with what it carried in the predecessor's own bytes (see the module comment), and
 * the id every element of `board` ends under. Nothing matched: `board` itself, ids unchanged.
 */
function carryForward(board: BoardState, prior: BoardState | null, sign: Signer, priorSign: Signer | null): { board: BoardState; ids: Map<string, string> } {
  const ids = new Map<string, string>([...board.elements.keys()].map((id) => [id, id]));
  if (!prior || !priorSign) return { board, ids };
  const { carried, continued } = matchPredecessor(board, prior, sign, priorSign);
  const predecessorOf = new Map([...carried, ...continued]);
  // Positions stay unique the same way ids do: a matched element keeps its predecessor's, any other
  // element at one of those is moved past them all.
  const takenSeqs = new Set([...predecessorOf.values()].map((id) => (prior.elements.get(id) as BoardElement).seq));
  // Renumbered past every id and position either board used, so a renumbered element is never
  // taken for a predecessor element, nor for another element of the draft.
  let nextId = Math.max(board.nextId, prior.nextId);
  let nextSeq = 0;
  for (const el of [...board.elements.values(), ...prior.elements.values()]) {
    nextId = Math.max(nextId, idNumber(el.id) + 1);
    nextSeq = Math.max(nextSeq, el.seq + 1);
  }
  for (const id of board.elements.keys()) {
    const predecessor = predecessorOf.get(id);
    ids.set(id, predecessor ?? (prior.elements.has(id) ? `e${nextId++}` : id));
  }
  // A reference to an element the board does not hold stays as written.
  const final = (id: string) => ids.get(id) ?? id;

  const elements = new Map<string, BoardElement>();
  let changed = false;
  for (const el of board.elements.values()) {
    const predecessor = predecessorOf.get(el.id);
    const from = predecessor === undefined ? undefined : (prior.elements.get(predecessor) as BoardElement);
    const carriedFrom = carried.has(el.id) ? from : undefined;
    const out: Loose = carriedFrom ? { ...loose(carriedFrom) } : { ...loose(el), id: final(el.id) };
    if (!carriedFrom) out.seq = from ? from.seq : takenSeqs.has(el.seq) ? nextSeq++ : el.seq;
    out.parent = el.parent === null ? null : final(el.parent);
    for (const field of Object.keys(REFERENCE_FIELDS[el.kind] ?? {})) {
      const value = loose(el)[field];
      if (value === undefined) delete out[field];
      else out[field] = Array.isArray(value) ? (value as string[]).map(final) : final(value as string);
    }
    if (carriedFrom) {
      for (const field of GENERATION_FIELDS[el.kind] ?? []) {
        const value = loose(el)[field];
        if (value === undefined) delete out[field];
        else out[field] = value;
      }
    }
    const same = JSON.stringify(out) === JSON.stringify(el);
    changed ||= !same;
    elements.set(out.id, same ? el : typed(out));
  }
  if (!changed) return { board, ids };
  const repairs: ReferenceRepair[] = board.repairs.map((r) => ({ ...r, element: final(r.element), to: final(r.to) }));
  const lastFinish: FinishPointer[] | null = board.lastFinish === null ? null : board.lastFinish.map((f) => ({ ...f, element: final(f.element) }));
  return { board: { ...board, elements, nextId, repairs, lastFinish, revision: board.revision + 1 }, ids };
}

// ─── Findings ────────────────────────────────────────────────────────────────────────────────

function findingKey(el: BoardElement): string | null {
  if (el.kind !== 'finding') return null;
  return `${el.category}\u0000${el.title
    .normalize('NFC')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[.!]+$/, '')}`;
}

function applyFindingLifecycle(board: BoardState, prior: BoardState | null, dispositions: readonly FindingDispositionInput[], ordinal: number): { board: BoardState; findings: FindingLifecycle[] } {
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
  if (detachedTitles.length > 0)
    next = withHostCallout(next, `Round ${ordinal}: an earlier disposition of ${quoteTitles(detachedTitles)} matches more than one finding here, so none of them was hidden.`);
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
    {
      kind: 'section',
      parent: null,
      fields: { title, body_markdown: `What round ${input.ordinal}'s verified report found addressed, in the order the asks went out, on the lines it rests on.`, delta: null },
    },
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
