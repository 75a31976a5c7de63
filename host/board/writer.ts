import {
  FindingOrigin,
  reviewKind,
  HOST_DERIVED_MEMBER_KINDS,
  LENS_TYPED_KINDS,
  PARENT_KINDS,
  REFERENCE_FIELDS,
  RESULT_MAX_HELD_IDS,
  elementField,
  seatAbsence,
  type Accord,
  type BoardElement,
  type ElementKind,
  type ReferenceRepair,
  type Refusal,
} from '../../protocol/board';
import { boundedList, formatCount } from './render';
import { AGREEMENT_OF_ACCORD, HOST_AUTHOR, parseCallInput, referencesOf, resolveCodeRef, runCallStage, runElementStage, runFinishTier, type ElementContext, type Touched } from './rules';
import type { BoardState, VerbCall, VerbResult, WriterContext } from './state';

/**
 * The board writer: one verb at a time, purely. The host mints every id; a child names its
 * parent; every mutation re-runs the boundary tier over the board the call would produce. The
 * input state is never mutated — each accepted write returns a new state sharing unchanged
 * elements with the old one.
 */

export interface Applied {
  state: BoardState;
  result: VerbResult;
}

export function applyVerb(state: BoardState, call: VerbCall, ctx: WriterContext): Applied {
  if (call.verb === 'finish') return finish(state);

  const parsed = parseCallInput(call);
  const callRefusals = runCallStage({ state, call, ctx, parsed });
  if (callRefusals.length > 0) return refuse(state, call, callRefusals);

  if (call.verb === 'settle_absent') return settleAbsent(state);

  if (!parsed.ok) return refuse(state, call, [{ rule: 'input-shape', field: '(input)', message: 'the input does not parse', admissible: 'the declared input' }]);
  const data = parsed.data;

  switch (call.verb) {
    case 'set_document':
      return setDocument(state, call, ctx, data);
    case 'add':
      return add(state, call, ctx, call.kind, data);
    case 'cite':
      return add(state, call, ctx, 'code_ref', data);
    case 'update':
      return update(state, call, ctx, data);
    case 'remove_element':
      return remove(state, call, ctx, data.id as string);
  }
}

// ─── Verbs ───────────────────────────────────────────────────────────────────────────────────

function setDocument(state: BoardState, call: VerbCall, ctx: WriterContext, data: Record<string, unknown>): Applied {
  const named = new Set(Object.keys(data));
  const next: BoardState = { ...state, document: { ...state.document, ...(data as Partial<BoardState['document']>) } };
  const refusals = runElementStage(elementContext(state, next, call, ctx, [], named, null));
  if (refusals.length > 0) return refuse(state, call, refusals);
  return accept(state, next, call, null, `document updated (${[...named].join(', ')})`);
}

function add(state: BoardState, call: VerbCall, ctx: WriterContext, kind: ElementKind, data: Record<string, unknown>): Applied {
  const n = state.nextId;
  const id = `e${n}`;
  const element = buildElement(kind, data, id, n, ctx);
  const elements = new Map(state.elements);
  elements.set(id, element);
  const next: BoardState = { ...state, elements, nextId: n + 1 };
  const named = new Set(Object.keys(data));
  const refusals = runElementStage(elementContext(state, next, call, ctx, [{ element, named, created: true }], new Set(), null));
  if (refusals.length > 0) return refuse(state, call, refusals);
  const where = element.parent === null ? 'at the top level' : `under ${element.parent}`;
  const message =
    call.verb === 'cite'
      ? `cited ${data.path as string}:${rangeOf(data.start_line as number, data.end_line as number)} (${data.side as string}) as ${id}; pass ${id} wherever a code_ref id goes (span, evidence, anchor, trace)`
      : `created ${id} (${kind}) ${where}`;
  return accept(state, next, call, id, message);
}

function update(state: BoardState, call: Extract<VerbCall, { verb: 'update' }>, ctx: WriterContext, data: Record<string, unknown>): Applied {
  const id = data.id as string;
  const current = state.elements.get(id) as BoardElement; // references-resolve guaranteed it exists with this kind
  const { id: _id, ...changes } = data;
  const named = new Set(Object.keys(changes));
  const element = updatedElement(current, changes, ctx);
  const elements = new Map(state.elements);
  elements.set(id, element);
  const next: BoardState = { ...state, elements };
  const refusals = runElementStage(elementContext(state, next, call, ctx, [{ element, named, created: false }], new Set(), null));
  if (refusals.length > 0) return refuse(state, call, refusals);
  const fields = [...named];
  return accept(state, next, call, id, `updated ${id} (${boundedList(fields, 12)})`);
}

function remove(state: BoardState, call: VerbCall, ctx: WriterContext, id: string): Applied {
  const removed = subtreeOf(state, id);
  const refusals = runElementStage(elementContext(state, state, call, ctx, [], new Set(), removed));
  if (refusals.length > 0) return refuse(state, call, refusals);
  const elements = new Map<string, BoardElement>();
  const order: string[] = [];
  for (const [key, el] of state.elements) {
    if (removed.has(key)) order.push(key);
    else elements.set(key, el);
  }
  const next: BoardState = { ...state, elements };
  const others = order.length - 1;
  const message = `removed ${id}${others > 0 ? ` and ${formatCount(others)} element${others === 1 ? '' : 's'} under it` : ''} (${formatCount(order.length)} in all)`;
  return accept(state, next, call, id, message, order);
}

function finish(state: BoardState): Applied {
  const pointers = runFinishTier(state);
  if (pointers.length > 0) {
    return { state: { ...state, lastFinish: pointers }, result: { status: 'pointers', pointers } };
  }
  const next: BoardState = { ...state, status: 'finished', absence: null, lastFinish: [], revision: state.revision + 1 };
  return {
    state: next,
    result: {
      status: 'settled',
      absence: null,
      message: `settled: the board is finished with ${formatCount(state.elements.size)} element${state.elements.size === 1 ? '' : 's'} (revision ${next.revision}).`,
    },
  };
}

function settleAbsent(state: BoardState): Applied {
  const row = seatAbsence(state.lens);
  if (!row) throw new Error('settle_absent reached the writer on a lens with no seat absence'); // kind-allowlist refuses first
  const next: BoardState = { ...state, status: 'absent', absence: row.absence, lastFinish: [], revision: state.revision + 1 };
  return { state: next, result: { status: 'settled', absence: row.absence, message: `settled absent (${row.absence}): ${row.meaning}` } };
}

// ─── Building elements ───────────────────────────────────────────────────────────────────────

const PAIRED_MODELS = FindingOrigin.options.filter((o) => o !== 'other');

/**
 * origin/agreement → the finding's author, concurrence tallies and accord stamp. The second review
 * of a concurrence is the other compiled review when the reviews are known (two Claude seats pair
 * with each other), else the other paired model kind.
 */
export function expandFindingAgreement(
  origin: string,
  agreement: string,
  reviews?: readonly string[],
): { author: string; concurrence: Array<{ model: string; agree: number; total: number }>; accord: Accord } {
  const self = { model: origin, agree: 1, total: 1 };
  if (agreement === 'solo') return { author: origin, concurrence: [self], accord: 'split' };
  const other = (reviews ? reviews.find((r) => r !== origin) : PAIRED_MODELS.find((m) => m !== reviewKind(origin))) ?? 'other';
  return { author: origin, concurrence: [self, { model: other, agree: 1, total: 1 }], accord: agreement === 'concur' ? 'concur' : 'conflict' };
}

/**
 * Elements are assembled as plain records and typed once at the end: the BoardElement union is
 * too large for the checker to follow through spreads.
 */
type Loose = Record<string, unknown> & { id: string; kind: ElementKind; parent: string | null; author: string; seq: number };
const loose = (el: BoardElement): Loose => el as unknown as Loose;
const typed = (el: Loose): BoardElement => el as unknown as BoardElement;

function buildElement(kind: ElementKind, data: Record<string, unknown>, id: string, seq: number, ctx: WriterContext): BoardElement {
  const { parent_id, origin, agreement, score: _score, ...fields } = data;
  const base: Loose = { id, kind, parent: (parent_id as string | undefined) ?? null, author: ctx.author, seq, ...fields };
  switch (kind) {
    case 'section':
      return typed({ ...base, delta: null });
    case 'finding': {
      const expanded = expandFindingAgreement((origin as string | undefined) ?? ctx.author, (agreement as string | undefined) ?? 'solo', ctx.reviewedBy);
      return typed({ ...base, ...expanded, status: 'open' });
    }
    case 'code_ref':
      return withResolution(base, ctx);
    default:
      return typed(base);
  }
}

function updatedElement(currentElement: BoardElement, changes: Record<string, unknown>, ctx: WriterContext): BoardElement {
  const current = loose(currentElement);
  const { parent_id, origin, agreement, score: _score, ...fields } = changes;
  let next: Loose = { ...current, ...fields };
  if (parent_id !== undefined) next = { ...next, parent: parent_id as string };
  if (current.kind === 'finding' && (origin !== undefined || agreement !== undefined)) {
    const accord = current.accord as Accord;
    const expanded = expandFindingAgreement((origin as string | undefined) ?? current.author, (agreement as string | undefined) ?? AGREEMENT_OF_ACCORD[accord], ctx.reviewedBy);
    next = { ...next, ...expanded };
  }
  if (next.kind === 'code_ref' && ['path', 'side', 'start_line', 'end_line'].some((f) => f in fields)) return withResolution(next, ctx);
  return typed(next);
}

function withResolution(given: Loose, ctx: WriterContext): BoardElement {
  // A path cited as read_diff prints it (control characters escaped) is stored as the change names it.
  const el = typeof given.path === 'string' && ctx.citations.changedPath ? { ...given, path: ctx.citations.changedPath(given.path) } : given;
  const resolution = resolveCodeRef(typed(el), ctx.citations);
  return typed({ ...el, patchset_id: ctx.citations.patchsetId, hunk_ids: resolution.ok ? [...resolution.hunkIds] : [] });
}

// ─── Host-only writes ────────────────────────────────────────────────────────────────────────

/** A changed region the host files on a derived board (one per uncited hunk). */
export interface NoiseMemberPlacement {
  path: string;
  side: 'base' | 'head';
  start_line: number;
  end_line: number;
  hunk_id: string;
}

/**
 * Places host-derived members (verdict noise, judge deterministic, author host) at the top
 * level of a board whose lens takes them. One accepted write: one revision. No seat verb can
 * do this. Each placement must resolve to its own hunk on the captured patchset.
 */
export function placeNoiseMembers(state: BoardState, members: readonly NoiseMemberPlacement[], ctx: WriterContext): Applied & { ids: string[] } {
  const call: VerbCall = { verb: 'add', kind: 'noise_member', input: {} };
  const memberKind = LENS_TYPED_KINDS[state.lens].find((k) => HOST_DERIVED_MEMBER_KINDS.includes(k));
  if (!memberKind) {
    return {
      ...refuse(state, call, [
        { rule: 'kind-allowlist', field: 'kind', message: `a ${state.lens} board takes no host-derived members`, admissible: 'place members on the board whose lens takes them' },
      ]),
      ids: [],
    };
  }
  const bad: string[] = [];
  for (const m of members) {
    const resolution = ctx.citations.resolve(m.path, m.side, m.start_line, m.end_line);
    if (!resolution.ok || !resolution.hunkIds.includes(m.hunk_id)) bad.push(`${m.path}:${rangeOf(m.start_line, m.end_line)} (${m.side})`);
  }
  if (bad.length > 0) {
    return {
      ...refuse(state, call, [
        {
          rule: 'citation-resolves',
          field: 'members',
          message: `${formatCount(bad.length)} member${bad.length === 1 ? '' : 's'} do not resolve to their own hunk: ${boundedList(bad, RESULT_MAX_HELD_IDS)}`,
          admissible: 'one member per captured changed region, carrying that region’s hunk id',
        },
      ]),
      ids: [],
    };
  }
  const elements = new Map(state.elements);
  const ids: string[] = [];
  let n = state.nextId;
  for (const m of members) {
    const id = `e${n}`;
    elements.set(
      id,
      typed({
        id,
        kind: memberKind,
        parent: null,
        author: HOST_AUTHOR,
        seq: n,
        path: m.path,
        side: m.side,
        start_line: m.start_line,
        end_line: m.end_line,
        hunk_id: m.hunk_id,
        verdict: 'noise',
        judge: 'deterministic',
      }),
    );
    ids.push(id);
    n++;
  }
  const next: BoardState = { ...state, elements, nextId: n };
  const applied = accept(
    state,
    next,
    call,
    null,
    `placed ${formatCount(ids.length)} ${memberKind} element${ids.length === 1 ? '' : 's'}${ids.length > 0 ? ` (${ids[0]}…${ids[ids.length - 1]})` : ''}`,
  );
  return { ...applied, ids };
}

/** Why a reference could not be admitted. */
export interface AdmissionFailure {
  element: string;
  field: string;
  reference: string;
  reason: 'absent' | 'ambiguous' | 'self' | 'wrong-kind' | 'foreign-patchset';
  message: string;
}

/** Identity of a reference: case folded, the separators -_./\ and space removed, nothing else. */
export function referenceIdentity(id: string): string {
  return id.toLowerCase().replace(/[-_./\\ ]/g, '');
}

/**
 * Reference admission at the write boundary, for host-owned passes and imported boards: every
 * reference (parent and REFERENCE_FIELDS) must name an element of this board of the declared
 * kind, and a code_ref target must cite this board's patchset. An inadmissible reference is
 * repaired only when exactly one other element shares its identity and is the declared kind;
 * every repair is recorded. Anything else is a typed failure, and nothing is dropped.
 */
export function admitReferences(state: BoardState): { state: BoardState; repairs: ReferenceRepair[] } | { failure: AdmissionFailure; failures: AdmissionFailure[] } {
  let byIdentity: Map<string, BoardElement[]> | null = null;
  const identityIndex = () => {
    if (!byIdentity) {
      byIdentity = new Map();
      for (const el of state.elements.values()) {
        const key = referenceIdentity(el.id);
        const list = byIdentity.get(key);
        if (list) list.push(el);
        else byIdentity.set(key, [el]);
      }
    }
    return byIdentity;
  };

  const failures: AdmissionFailure[] = [];
  const repairs: ReferenceRepair[] = [];
  const replaced = new Map<string, BoardElement>();

  for (const el of state.elements.values()) {
    const refs: Array<{ field: string; target: string; kinds: readonly ElementKind[]; index: number | null }> = [];
    if (el.parent !== null) refs.push({ field: 'parent', target: el.parent, kinds: PARENT_KINDS[el.kind], index: null });
    const declared = REFERENCE_FIELDS[el.kind] ?? {};
    for (const ref of referencesOf(el)) {
      const value = elementField(el, ref.field);
      const index = Array.isArray(value) ? refs.filter((r) => r.field === ref.field).length : null;
      refs.push({ ...ref, kinds: declared[ref.field]?.kinds ?? ref.kinds, index });
    }
    let updated: Loose | null = null;
    for (const ref of refs) {
      const fieldName = ref.index === null ? ref.field : `${ref.field}[${ref.index}]`;
      const exact = state.elements.get(ref.target);
      let target: BoardElement | null = null;
      if (exact && exact.id !== el.id && ref.kinds.includes(exact.kind)) {
        target = exact;
      } else {
        const candidates = identityIndex().get(referenceIdentity(ref.target)) ?? [];
        const fail = (reason: AdmissionFailure['reason'], message: string) => failures.push({ element: el.id, field: fieldName, reference: ref.target, reason, message });
        if (candidates.length === 0) {
          fail('absent', `${el.id}.${fieldName} names ${ref.target}, and no element of this board shares its identity`);
          continue;
        }
        if (candidates.length > 1) {
          fail(
            'ambiguous',
            `${el.id}.${fieldName} names ${ref.target}, and ${candidates.length} elements share its identity (${boundedList(
              candidates.map((c) => c.id),
              5,
            )})`,
          );
          continue;
        }
        const only = candidates[0] as BoardElement;
        if (only.id === el.id) {
          fail('self', `${el.id}.${fieldName} names ${ref.target}, whose only match is ${el.id} itself`);
          continue;
        }
        if (!ref.kinds.includes(only.kind)) {
          fail('wrong-kind', `${el.id}.${fieldName} names ${ref.target}, whose only match ${only.id} is a ${only.kind}, and ${ref.field} takes ${ref.kinds.join('/')}`);
          continue;
        }
        target = only;
        if (only.id !== ref.target) {
          repairs.push({ element: el.id, field: fieldName, from: ref.target, to: only.id });
          updated = repointed(updated ?? loose(el), ref.field, ref.index, only.id);
        }
      }
      const targetKind: ElementKind = target.kind;
      const targetPatchset = (target as unknown as { patchset_id?: string }).patchset_id;
      if (targetKind === 'code_ref' && targetPatchset !== state.patchsetId) {
        failures.push({
          element: el.id,
          field: fieldName,
          reference: ref.target,
          reason: 'foreign-patchset',
          message: `${el.id}.${fieldName} names ${target.id}, which cites patchset ${targetPatchset ?? '(none)'}, and this board reads ${state.patchsetId}`,
        });
      }
    }
    if (updated) replaced.set(el.id, typed(updated));
  }

  if (failures.length > 0) return { failure: failures[0] as AdmissionFailure, failures };
  if (repairs.length === 0) return { state, repairs };
  const elements = new Map(state.elements);
  for (const [id, el] of replaced) elements.set(id, el);
  return { state: { ...state, elements, repairs: [...state.repairs, ...repairs], revision: state.revision + 1 }, repairs };
}

function repointed(el: Loose, fieldName: string, index: number | null, to: string): Loose {
  if (fieldName === 'parent') return { ...el, parent: to };
  if (index === null) return { ...el, [fieldName]: to };
  const list = [...(el[fieldName] as string[])];
  list[index] = to;
  return { ...el, [fieldName]: list };
}

// ─── Plumbing ────────────────────────────────────────────────────────────────────────────────

function elementContext(
  state: BoardState,
  next: BoardState,
  call: VerbCall,
  ctx: WriterContext,
  touched: Touched[],
  documentNamed: ReadonlySet<string>,
  removed: ReadonlySet<string> | null,
): ElementContext {
  return { state, next, call, ctx, parsed: { ok: true, data: {} }, touched, documentNamed, removed };
}

function refuse(state: BoardState, call: VerbCall, refusals: Refusal[]): Applied {
  return { state, result: { status: 'refused', verb: call.verb, refusals } };
}

function accept(before: BoardState, next: BoardState, call: VerbCall, id: string | null, message: string, removed?: string[]): Applied {
  const reopened = before.status !== 'drafting';
  const state: BoardState = { ...next, status: 'drafting', absence: null, revision: before.revision + 1 };
  const text = reopened ? `${message}. The board was ${before.status}; this write reopened it (status: drafting).` : message;
  return { state, result: { status: 'accepted', verb: call.verb, id, message: text, ...(removed ? { removed } : {}) } };
}

/** The element and every descendant (parent links), in no particular order. */
function subtreeOf(state: BoardState, id: string): Set<string> {
  const children = new Map<string, string[]>();
  for (const el of state.elements.values()) {
    if (el.parent === null) continue;
    const list = children.get(el.parent);
    if (list) list.push(el.id);
    else children.set(el.parent, [el.id]);
  }
  const out = new Set<string>([id]);
  const stack = [id];
  while (stack.length > 0) {
    for (const child of children.get(stack.pop() as string) ?? []) {
      if (!out.has(child)) {
        out.add(child);
        stack.push(child);
      }
    }
  }
  return out;
}

function rangeOf(start: number, end: number): string {
  return start === end ? `${start}` : `${start}-${end}`;
}
