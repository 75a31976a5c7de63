import { z } from 'zod';
import {
  ALIGNED_FIELDS,
  BOUNDARY_RULES,
  BoardDocument,
  DOCUMENT_AUTHORED_FIELDS,
  ElementBase,
  FINISH_RULES,
  FINDING_SCORE_FLOOR,
  FindingOrigin,
  type Accord,
  type FindingAgreement,
  HOST_DERIVED_MEMBER_KINDS,
  HOST_FIELDS,
  HOST_ONLY_KINDS,
  INPUT_ONLY_FIELDS,
  KIND_INPUTS,
  LENS_TYPED_KINDS,
  MEASURE_BY_LENS,
  PARENT_KINDS,
  PROSE_FIELDS,
  REFERENCE_FIELDS,
  RESULT_MAX_HELD_IDS,
  TOP_LEVEL_KINDS,
  lensAuthoredKinds,
  reviewKind,
  seatAbsence,
  type BoardElement,
  type ElementKind,
  type FinishPointer,
  type Lens,
  type Refusal,
  type RuleId,
} from '../../../protocol/board';
import { clip, codeRegions, findCodeBytes, findProcessVocabulary, findProseCitations, isChangeVocabulary, type PathKnowledge } from '../prose';
import { boundedList, formatCount } from '../render';
import type { BoardState, CitationIndexLike, VerbCall, WriterContext } from '../state';

/**
 * The rule registry, in two tiers by what a rule reads. A boundary rule is decidable from the
 * call and the element(s) it would create or change (plus the patchset), and refuses the call. A
 * finish rule needs the whole board and answers finish with pointers. Rule ids come from the
 * protocol's BOUNDARY_RULES / FINISH_RULES; every kind, parent, reference and alignment fact is
 * read from the protocol tables.
 */

export type BoundaryRuleId = (typeof BOUNDARY_RULES)[number];
export type FinishRuleId = (typeof FINISH_RULES)[number];

/** The author the host stamps on what it writes itself (noise members, repairs). */
export const HOST_AUTHOR = 'host';

// ─── Contexts ────────────────────────────────────────────────────────────────────────────────

/** What a call-stage check reads: the board before the call, and the call. */
export interface CallContext {
  state: BoardState;
  call: VerbCall;
  ctx: WriterContext;
  /** The call's input parsed once against its strict schema (parseCallInput). */
  parsed: ParsedInput;
}

/** An element the call would create or change, and the input fields the call named for it. */
export interface Touched {
  element: BoardElement;
  named: ReadonlySet<string>;
  created: boolean;
}

/** What an element-stage check reads: also the board the call WOULD produce. */
export interface ElementContext extends CallContext {
  next: BoardState;
  touched: readonly Touched[];
  /** set_document: the document fields the call named. */
  documentNamed: ReadonlySet<string>;
  /** remove_element: every id the call would remove (the element and its descendants). */
  removed: ReadonlySet<string> | null;
}

export interface BoundaryRule {
  id: BoundaryRuleId;
  tier: 'boundary';
  /** One line: what the rule holds. */
  summary: string;
  /** Runs on the raw call before anything is built; any refusal stops the call there. */
  onCall?(c: CallContext): Refusal[];
  /** Runs over the element(s) the call would create or change, on the board it would produce. */
  onElements?(c: ElementContext): Refusal[];
}

export interface FinishRule {
  id: FinishRuleId;
  tier: 'finish';
  summary: string;
  check(state: BoardState): FinishPointer[];
}

// ─── Input schemas (derived from KIND_INPUTS / INPUT_ONLY_FIELDS / BoardDocument) ────────────

const ID = z.string().min(1);
type AnyObject = z.ZodObject;

/** set_document's input: the authored document fields, each a non-empty string. */
const documentInput = z.object(Object.fromEntries(DOCUMENT_AUTHORED_FIELDS.map((f) => [f, z.string().min(1)])));

function inputOnly(kind: ElementKind): AnyObject | undefined {
  return (INPUT_ONLY_FIELDS as Partial<Record<ElementKind, AnyObject>>)[kind];
}

const schemaCache = new Map<string, AnyObject>();
function cached(key: string, build: () => AnyObject): AnyObject {
  let schema = schemaCache.get(key);
  if (!schema) {
    schema = build();
    schemaCache.set(key, schema);
  }
  return schema;
}

/** The strict input schema of a call, or null for verbs that take none. */
export function inputSchemaOf(call: VerbCall): AnyObject | null {
  switch (call.verb) {
    case 'add':
      return cached(`add:${call.kind}`, () => (KIND_INPUTS[call.kind] as AnyObject).extend({ ...(inputOnly(call.kind)?.shape ?? {}), parent_id: ID.optional() }).strict());
    case 'update':
      return cached(`update:${call.kind}`, () =>
        (KIND_INPUTS[call.kind] as AnyObject)
          .partial()
          .extend({ ...(inputOnly(call.kind)?.partial().shape ?? {}), id: ID, parent_id: ID.optional() })
          .strict(),
      );
    case 'cite':
      return cached('cite', () => (KIND_INPUTS.code_ref as AnyObject).strict());
    case 'set_document':
      return cached('set_document', () => documentInput.partial().strict());
    case 'remove_element':
      return cached('remove_element', () => z.object({ id: ID }).strict());
    case 'finish':
    case 'settle_absent':
      return null;
  }
}

type Issue = z.ZodError['issues'][number];
export type ParsedInput = { ok: true; data: Record<string, unknown> } | { ok: false; issues: readonly Issue[] };

/** Parses a call's input against its strict schema. */
export function parseCallInput(call: VerbCall): ParsedInput {
  const schema = inputSchemaOf(call);
  if (!schema) return { ok: true, data: {} };
  const input = 'input' in call && call.input && typeof call.input === 'object' ? call.input : null;
  if (!input) return { ok: false, issues: [{ code: 'invalid_type', expected: 'object', path: [], message: 'the call carries no input object', input: undefined } as unknown as Issue] };
  const result = schema.safeParse(input);
  return result.success ? { ok: true, data: result.data as Record<string, unknown> } : { ok: false, issues: result.error.issues };
}

/** Every field name the host owns anywhere: element base fields, kind, host-owned document fields, per-kind host fields. */
export const HOST_OWNED_FIELD_NAMES: ReadonlySet<string> = new Set([
  ...Object.keys(ElementBase.shape),
  'kind',
  ...Object.keys(BoardDocument.shape).filter((f) => !(DOCUMENT_AUTHORED_FIELDS as readonly string[]).includes(f)),
  ...Object.values(HOST_FIELDS).flatMap((schema) => Object.keys(schema.shape)),
]);

const fieldDescriptions = new Map<string, Record<string, string>>();
/** Plain words for what a field admits, read off the field's JSON Schema. */
function admissibleFor(call: VerbCall, field: string): string {
  const schema = inputSchemaOf(call);
  if (!schema) return '';
  const key = `${call.verb}:${'kind' in call ? call.kind : ''}`;
  let described = fieldDescriptions.get(key);
  if (!described) {
    const json = z.toJSONSchema(schema, { unrepresentable: 'any' }) as { properties?: Record<string, Record<string, unknown>> };
    described = Object.fromEntries(Object.entries(json.properties ?? {}).map(([name, prop]) => [name, describeJson(prop)]));
    fieldDescriptions.set(key, described);
  }
  return described[field] ?? '';
}

function describeJson(prop: Record<string, unknown>): string {
  if (Array.isArray(prop.enum)) return `one of: ${(prop.enum as unknown[]).map(String).join(', ')}`;
  switch (prop.type) {
    case 'string':
      return typeof prop.minLength === 'number' && prop.minLength > 0 ? 'a non-empty string' : 'a string';
    case 'integer':
      return prop.exclusiveMinimum === 0 || prop.minimum === 1 ? 'a whole number, 1 or more' : 'a whole number';
    case 'number':
      return 'a number';
    case 'boolean':
      return 'true or false';
    case 'array': {
      const items = (prop.items ?? {}) as Record<string, unknown>;
      const item = describeJson(items).replace(/^an? /, '');
      return `a list of ${item.endsWith('s') ? item : `${item}s`}`.replace(/strings?s$/, 'strings');
    }
    default:
      return 'a value of the declared type';
  }
}

function fieldList(call: VerbCall, except: readonly string[] = []): string {
  const schema = inputSchemaOf(call);
  return schema
    ? Object.keys(schema.shape)
        .filter((f) => !except.includes(f))
        .join(', ')
    : '';
}

function verbName(call: VerbCall): string {
  return call.verb === 'add' || call.verb === 'update' ? `${call.verb}_${call.kind}` : call.verb;
}

// ─── Board reading helpers ───────────────────────────────────────────────────────────────────

function idsOfKinds(state: BoardState, kinds: readonly ElementKind[], exclude?: string): string[] {
  const out: string[] = [];
  for (const el of state.elements.values()) if (kinds.includes(el.kind) && el.id !== exclude) out.push(el.id);
  return out;
}

/** "the board holds 3 code_ref elements: e1, e2, e3" — bounded, with an honest remainder. */
export function heldText(state: BoardState, kinds: readonly ElementKind[], exclude?: string): string {
  const ids = idsOfKinds(state, kinds, exclude);
  const what = kinds.join('/');
  if (ids.length === 0) return `the board holds no ${what} element`;
  return `the board holds ${formatCount(ids.length)} ${what} element${ids.length === 1 ? '' : 's'}: ${boundedList(ids, RESULT_MAX_HELD_IDS)}`;
}

function field<T = unknown>(el: BoardElement, name: string): T | undefined {
  return (el as unknown as Record<string, unknown>)[name] as T | undefined;
}

/** Every id an element's reference fields name, with the field and the kinds it admits. */
export function referencesOf(el: BoardElement): Array<{ field: string; target: string; kinds: readonly ElementKind[] }> {
  const refs = REFERENCE_FIELDS[el.kind];
  if (!refs) return [];
  const out: Array<{ field: string; target: string; kinds: readonly ElementKind[] }> = [];
  for (const [name, rule] of Object.entries(refs)) {
    const value = field(el, name);
    if (typeof value === 'string') out.push({ field: name, target: value, kinds: rule.kinds });
    else if (Array.isArray(value)) for (const v of value) if (typeof v === 'string') out.push({ field: name, target: v, kinds: rule.kinds });
  }
  return out;
}

function proseFieldsOf(kind: ElementKind): readonly string[] {
  return PROSE_FIELDS[kind] ?? [];
}

/** The prose strings of an element's named fields, as (field label, text) pairs. */
function proseOf(t: Touched): Array<{ field: string; text: string }> {
  const out: Array<{ field: string; text: string }> = [];
  for (const name of proseFieldsOf(t.element.kind)) {
    if (!t.created && !t.named.has(name)) continue;
    const value = field(t.element, name);
    if (typeof value === 'string') out.push({ field: name, text: value });
    else if (Array.isArray(value)) value.forEach((v, i) => typeof v === 'string' && out.push({ field: `${name}[${i}]`, text: v }));
  }
  return out;
}

function documentProse(c: ElementContext): Array<{ field: string; text: string }> {
  const out: Array<{ field: string; text: string }> = [];
  for (const name of DOCUMENT_AUTHORED_FIELDS) {
    if (c.documentNamed.has(name)) out.push({ field: `/document/${name}`, text: c.next.document[name] });
  }
  return out;
}

/** Prose the call writes: the touched elements' named prose fields and the document's. */
function writtenProse(c: ElementContext): Array<{ field: string; text: string }> {
  return [...c.touched.flatMap(proseOf), ...documentProse(c)];
}

function isTranscribed(state: BoardState): boolean {
  return state.document.prose_register === 'transcribed';
}

function knowledgeOf(index: CitationIndexLike): PathKnowledge | undefined {
  if (typeof index.hasPath !== 'function' || typeof index.pathsNamed !== 'function') return undefined;
  return { hasPath: (p) => index.hasPath!(p), pathsNamed: (b) => index.pathsNamed!(b) };
}

function refusal(rule: BoundaryRuleId, fieldName: string, message: string, admissible: string): Refusal {
  return { rule, field: fieldName, message, admissible };
}

// ─── Boundary rules ──────────────────────────────────────────────────────────────────────────

const kindAllowlist: BoundaryRule = {
  id: 'kind-allowlist',
  tier: 'boundary',
  summary:
    'A lens writes only its own kinds (LENS_TYPED_KINDS + SHARED_AUTHORING_KINDS); host-derived members and host-only kinds are written by no verb; settle_absent exists only where the lens admits a seat absence.',
  onCall({ state, call }) {
    const authored = lensAuthoredKinds(state.lens);
    const palette = `one of the kinds this board takes: ${authored.filter((k) => !HOST_DERIVED_MEMBER_KINDS.includes(k)).join(', ')}`;
    if (call.verb === 'add' || call.verb === 'update') {
      const kind = call.kind;
      if (HOST_ONLY_KINDS.includes(kind) || !authored.includes(kind)) {
        return [refusal('kind-allowlist', 'kind', `a ${state.lens} board does not take ${kind} elements`, palette)];
      }
      if (call.verb === 'add' && HOST_DERIVED_MEMBER_KINDS.includes(kind)) {
        return [refusal('kind-allowlist', 'kind', `${kind} elements are placed by the host from the change itself; no call creates one`, `update_${kind} to place an existing one under a parent`)];
      }
    }
    if (call.verb === 'cite' && !authored.includes('code_ref')) {
      return [refusal('kind-allowlist', 'kind', `a ${state.lens} board does not take code_ref elements`, palette)];
    }
    if (call.verb === 'settle_absent' && !seatAbsence(state.lens)) {
      return [refusal('kind-allowlist', 'settle_absent', `a ${state.lens} board admits no absence its writer may declare`, 'write the board and call finish')];
    }
    return [];
  },
  onElements({ state, removed }) {
    if (!removed) return [];
    const protectedIds: string[] = [];
    for (const id of removed) {
      const el = state.elements.get(id);
      if (el && (HOST_DERIVED_MEMBER_KINDS.includes(el.kind) || HOST_ONLY_KINDS.includes(el.kind))) protectedIds.push(id);
    }
    if (protectedIds.length === 0) return [];
    return [
      refusal(
        'kind-allowlist',
        'id',
        `removing it would remove ${formatCount(protectedIds.length)} host-placed element${protectedIds.length === 1 ? '' : 's'} (${boundedList(protectedIds, RESULT_MAX_HELD_IDS)}), and no call removes those`,
        'move them elsewhere with their update verb first, or remove a different element',
      ),
    ];
  },
};

function unknownKeys(parsed: ParsedInput): string[] {
  if (parsed.ok) return [];
  return parsed.issues.flatMap((issue) => (issue.code === 'unrecognized_keys' ? (issue as { keys: string[] }).keys : []));
}

const hostOwnedField: BoundaryRule = {
  id: 'host-owned-field',
  tier: 'boundary',
  summary: 'No input carries a field the host owns (author, status, accord, patchset_id, verdict, judge, delta, measure, …).',
  onCall({ call, parsed }) {
    return unknownKeys(parsed)
      .filter((key) => HOST_OWNED_FIELD_NAMES.has(key))
      .map((key) =>
        refusal(
          'host-owned-field',
          key,
          `${key} is written by the host, not by a call`,
          key === 'parent' ? 'parent_id to place the element' : key === 'id' ? 'no id: the host mints it and returns it' : `omit ${key}; ${verbName(call)} takes: ${fieldList(call)}`,
        ),
      );
  },
};

const inputShape: BoundaryRule = {
  id: 'input-shape',
  tier: 'boundary',
  summary: 'The input parses against the kind’s flat input schema (KIND_INPUTS + INPUT_ONLY_FIELDS); unknown fields are refused by name.',
  onCall({ call, parsed, ctx }) {
    const out: Refusal[] = [];
    if (!parsed.ok) {
      for (const issue of parsed.issues) {
        if (issue.code === 'unrecognized_keys') {
          for (const key of (issue as { keys: string[] }).keys) {
            if (HOST_OWNED_FIELD_NAMES.has(key)) continue;
            out.push(refusal('input-shape', key, `${verbName(call)} has no field ${clip(key, 40)}`, `only these fields: ${fieldList(call)}`));
          }
          continue;
        }
        const name = issue.path.map(String).join('.') || '(input)';
        const top = String(issue.path[0] ?? '');
        const missing = issue.code === 'invalid_type' && (issue as { input?: unknown }).input === undefined && issue.path.length > 0;
        out.push(refusal('input-shape', name, missing ? `${name} is required and missing` : issue.message, admissibleFor(call, top) || `the input of ${verbName(call)}`));
      }
      return out;
    }
    if (call.verb === 'set_document' && DOCUMENT_AUTHORED_FIELDS.every((f) => !(f in parsed.data))) {
      out.push(refusal('input-shape', '(input)', 'set_document names no field', `at least one of: ${DOCUMENT_AUTHORED_FIELDS.join(', ')}`));
    }
    if (call.verb === 'update' && Object.keys(parsed.data).every((f) => f === 'id')) {
      out.push(refusal('input-shape', '(input)', `update_${call.kind} names no field to change`, `id plus at least one of: ${fieldList(call, ['id'])}`));
    }
    // Where the compiled reviews are known, origin-compiled pairs them; elsewhere a concurrence
    // pairs the two model kinds, so a review of neither kind has no pair.
    if ((call.verb === 'add' || call.verb === 'update') && call.kind === 'finding' && !ctx.reviewedBy) {
      const origin = parsed.data.origin as string | undefined;
      const agreement = parsed.data.agreement as string | undefined;
      const paired = FindingOrigin.options.filter((o) => o !== 'other');
      if (agreement && agreement !== 'solo' && origin && !paired.includes(reviewKind(origin) as (typeof paired)[number])) {
        out.push(refusal('input-shape', 'agreement', `agreement ${agreement} needs a second model, and origin ${origin} has no pair`, `origin ${paired.join(' or ')}, or agreement solo`));
      }
    }
    return out;
  },
};

const absenceAdmissible: BoundaryRule = {
  id: 'absence-admissible',
  tier: 'boundary',
  summary: 'settle_absent settles only a board its writer has not written on: an absence claims there is nothing here.',
  onCall({ state, call }) {
    if (call.verb !== 'settle_absent' || !seatAbsence(state.lens)) return [];
    const written: string[] = [];
    for (const el of state.elements.values()) if (el.author !== HOST_AUTHOR) written.push(el.id);
    if (written.length === 0) return [];
    return [
      refusal(
        'absence-admissible',
        'settle_absent',
        `the board holds ${formatCount(written.length)} written element${written.length === 1 ? '' : 's'} (${boundedList(written, RESULT_MAX_HELD_IDS)}), so it is not absent`,
        'call finish to settle what is written, or remove those elements first',
      ),
    ];
  },
};

const referencesResolve: BoundaryRule = {
  id: 'references-resolve',
  tier: 'boundary',
  summary: 'Every id a call names (id, reference fields) is an element this board holds, of an admissible kind; a removal may not strand a reference.',
  onCall({ state, call }) {
    if (call.verb !== 'update' && call.verb !== 'remove_element') return [];
    const id = call.input?.id;
    if (typeof id !== 'string' || id === '') return [];
    const el = state.elements.get(id);
    if (call.verb === 'update') {
      if (!el) return [refusal('references-resolve', 'id', `${clip(id, 40)} names no element on this board`, `an id of a ${call.kind}: ${heldText(state, [call.kind])}`)];
      if (el.kind !== call.kind) {
        return [refusal('references-resolve', 'id', `${id} is a ${el.kind}, not a ${call.kind}`, `update_${el.kind} for ${id}, or an id of a ${call.kind}: ${heldText(state, [call.kind])}`)];
      }
      return [];
    }
    if (!el)
      return [
        refusal(
          'references-resolve',
          'id',
          `${clip(id, 40)} names no element on this board`,
          `an id the board holds (${formatCount(state.elements.size)} element${state.elements.size === 1 ? '' : 's'})`,
        ),
      ];
    return [];
  },
  onElements({ next, touched, removed, state }) {
    const out: Refusal[] = [];
    for (const t of touched) {
      for (const ref of referencesOf(t.element)) {
        if (!t.created && !t.named.has(ref.field)) continue;
        const target = next.elements.get(ref.target);
        if (!target) {
          out.push(
            refusal(
              'references-resolve',
              ref.field,
              `${clip(ref.target, 40)} names no element on this board`,
              `an id of a ${ref.kinds.join('/')}: ${heldText(next, ref.kinds, t.element.id)}${ref.kinds.includes('code_ref') ? '; cite returns a new one' : ''}`,
            ),
          );
        } else if (!ref.kinds.includes(target.kind)) {
          out.push(
            refusal(
              'references-resolve',
              ref.field,
              `${ref.target} is a ${target.kind}, and ${ref.field} takes ${ref.kinds.join('/')}`,
              `an id of a ${ref.kinds.join('/')}: ${heldText(next, ref.kinds, t.element.id)}`,
            ),
          );
        }
      }
    }
    if (removed) {
      const citers: string[] = [];
      for (const el of state.elements.values()) {
        if (removed.has(el.id)) continue;
        for (const ref of referencesOf(el)) {
          if (removed.has(ref.target)) {
            citers.push(`${el.id}.${ref.field}→${ref.target}`);
            break;
          }
        }
      }
      if (citers.length > 0) {
        out.push(
          refusal(
            'references-resolve',
            'id',
            `${formatCount(citers.length)} element${citers.length === 1 ? '' : 's'} outside it refer${citers.length === 1 ? 's' : ''} to what it would remove (${boundedList(citers, RESULT_MAX_HELD_IDS)})`,
            'change or remove those references first',
          ),
        );
      }
    }
    return out;
  },
};

/** What an element depends on: its parent and every id it references (each must exist first). */
function dependencies(el: BoardElement): Array<{ field: string; target: string }> {
  const out: Array<{ field: string; target: string }> = [];
  if (el.parent !== null) out.push({ field: 'parent_id', target: el.parent });
  for (const ref of referencesOf(el)) out.push({ field: ref.field, target: ref.target });
  return out;
}

/** A dependency path from `from` back to `to`, or null. */
function pathBetween(state: BoardState, from: string, to: string): string[] | null {
  const cameFrom = new Map<string, string | null>([[from, null]]);
  const stack = [from];
  while (stack.length > 0) {
    const id = stack.pop() as string;
    if (id === to) {
      const path: string[] = [];
      for (let at: string | null = id; at !== null; at = cameFrom.get(at) ?? null) path.unshift(at);
      return path;
    }
    const el = state.elements.get(id);
    if (!el) continue;
    for (const dep of dependencies(el)) {
      if (cameFrom.has(dep.target)) continue;
      cameFrom.set(dep.target, id);
      stack.push(dep.target);
    }
  }
  return null;
}

const referencesAcyclic: BoundaryRule = {
  id: 'references-acyclic',
  tier: 'boundary',
  summary: 'Parenting plus references stay acyclic on the board the call would produce, so every target can exist before what depends on it.',
  onElements({ next, touched }) {
    const out: Refusal[] = [];
    for (const t of touched) {
      for (const dep of dependencies(t.element)) {
        if (!next.elements.has(dep.target)) continue;
        const path = pathBetween(next, dep.target, t.element.id);
        if (!path) continue;
        const loop = [t.element.id, ...path];
        const shown = loop.length > 8 ? [...loop.slice(0, 4), '…', ...loop.slice(-3)] : loop;
        out.push(
          refusal(
            'references-acyclic',
            dep.field,
            `${dep.field} ${dep.target} would close a loop (${shown.join(' → ')}): ${t.element.id} would depend on itself`,
            dep.field === 'parent_id' ? `a parent that does not sit under ${t.element.id}` : `an element that does not sit under or depend on ${t.element.id}`,
          ),
        );
        break;
      }
    }
    return out;
  },
};

const parentAdmissible: BoundaryRule = {
  id: 'parent-admissible',
  tier: 'boundary',
  summary: 'A parent exists and is a kind PARENT_KINDS admits; no parent only for TOP_LEVEL_KINDS.',
  onElements({ next, touched }) {
    const out: Refusal[] = [];
    for (const t of touched) {
      const el = t.element;
      const admits = PARENT_KINDS[el.kind];
      if (el.parent === null) {
        if (!TOP_LEVEL_KINDS.includes(el.kind)) {
          out.push(
            refusal(
              'parent-admissible',
              'parent_id',
              `${article(el.kind)} ${el.kind} cannot sit at the top level`,
              `parent_id naming ${article(admits[0] ?? '')} ${admits.join('/')}: ${heldText(next, admits, el.id)}`,
            ),
          );
        }
        continue;
      }
      const parent = next.elements.get(el.parent);
      if (!parent) {
        out.push(
          refusal(
            'parent-admissible',
            'parent_id',
            `${clip(el.parent, 40)} names no element on this board`,
            `parent_id naming ${article(admits[0] ?? '')} ${admits.join('/')}: ${heldText(next, admits, el.id)}`,
          ),
        );
      } else if (!admits.includes(parent.kind)) {
        out.push(
          refusal(
            'parent-admissible',
            'parent_id',
            `a ${el.kind} cannot sit under a ${parent.kind} (${parent.id})`,
            `parent_id naming ${article(admits[0] ?? '')} ${admits.join('/')}: ${heldText(next, admits, el.id)}`,
          ),
        );
      }
    }
    return out;
  },
};

function presentValue(value: unknown): boolean {
  return value !== undefined && value !== null;
}

const alignedArrays: BoundaryRule = {
  id: 'aligned-arrays',
  tier: 'boundary',
  summary: 'Parallel fields (ALIGNED_FIELDS) travel together: no companion without its spine, no spine without its companion, equal lengths; an update names both or neither.',
  onCall({ call }) {
    if (call.verb !== 'update') return [];
    const input = call.input ?? {};
    const out: Refusal[] = [];
    for (const { spine, companion } of ALIGNED_FIELDS[call.kind] ?? []) {
      const hasSpine = spine in input;
      const hasCompanion = companion in input;
      if (hasSpine !== hasCompanion) {
        const given = hasSpine ? spine : companion;
        const missing = hasSpine ? companion : spine;
        out.push(
          refusal(
            'aligned-arrays',
            missing,
            `${given} was given without ${missing}; they are aligned by index and change together`,
            `${spine} and ${companion} in the same call, with matching lengths`,
          ),
        );
      }
    }
    return out;
  },
  onElements({ touched }) {
    const out: Refusal[] = [];
    for (const t of touched) {
      for (const { spine, companion } of ALIGNED_FIELDS[t.element.kind] ?? []) {
        const s = field(t.element, spine);
        const c = field(t.element, companion);
        if (presentValue(c) && !presentValue(s)) {
          out.push(refusal('aligned-arrays', companion, `${companion} was given without its spine ${spine}`, `${spine} and ${companion} together, aligned by index`));
        } else if (presentValue(s) && !presentValue(c)) {
          out.push(refusal('aligned-arrays', companion, `${spine} was given without ${companion}`, `one ${companion} entry per ${spine} entry`));
        } else if (Array.isArray(s) && Array.isArray(c) && s.length !== c.length) {
          out.push(
            refusal(
              'aligned-arrays',
              companion,
              `${companion} has ${c.length} entr${c.length === 1 ? 'y' : 'ies'} and ${spine} has ${s.length}`,
              `exactly one ${companion} entry per ${spine} entry (${s.length})`,
            ),
          );
        }
      }
    }
    return out;
  },
};

const ELEMENT_ID_SHAPE = /^e\d+$/;

const decisionGrounded: BoundaryRule = {
  id: 'decision-grounded',
  tier: 'boundary',
  summary: 'A decision carries non-empty evidence and at least one plain-text alternative (a sentence, not an id).',
  onElements({ touched, next }) {
    const out: Refusal[] = [];
    for (const t of touched) {
      if (t.element.kind !== 'decision') continue;
      const evidence = field<string[]>(t.element, 'evidence') ?? [];
      const alternatives = field<string[]>(t.element, 'alternatives') ?? [];
      if (evidence.length === 0)
        out.push(refusal('decision-grounded', 'evidence', 'a decision with no evidence is not grounded in the change', 'at least one code_ref id (cite returns one) where the decision shows'));
      const prose = alternatives.filter((a) => a.trim() !== '');
      if (prose.length === 0) out.push(refusal('decision-grounded', 'alternatives', 'a decision needs at least one road not taken', 'one plain sentence per viable alternative'));
      alternatives.forEach((a, i) => {
        const trimmed = a.trim();
        if (ELEMENT_ID_SHAPE.test(trimmed) || next.elements.has(trimmed)) {
          out.push(refusal('decision-grounded', `alternatives[${i}]`, `${clip(trimmed, 20)} is an element id, and alternatives are plain text`, 'one plain sentence per viable alternative'));
        }
      });
    }
    return out;
  },
};

const findingAnchored: BoundaryRule = {
  id: 'finding-anchored',
  tier: 'boundary',
  summary: 'A finding carries at least one anchor (a code_ref id).',
  onElements({ touched }) {
    return touched
      .filter((t) => t.element.kind === 'finding' && (field<string[]>(t.element, 'anchor') ?? []).length === 0)
      .map(() => refusal('finding-anchored', 'anchor', 'a finding with no anchor points at no code', 'at least one code_ref id (cite returns one) showing the defect'));
  },
};

/** The agreement a finding was written with, read back from the accord it expanded into. */
export const AGREEMENT_OF_ACCORD: Readonly<Record<Accord, FindingAgreement>> = { split: 'solo', concur: 'concur', conflict: 'diverge' };

/** What ran, in words: "only the claude review was compiled", "the claude and claude-2 reviews were compiled". */
export function compiledReviewsText(reviewedBy: readonly string[]): string {
  const names = [...new Set(reviewedBy)];
  if (names.length === 0) return 'no review was compiled';
  if (names.length === 1) return `only the ${names[0]} review was compiled`;
  return `the ${names.slice(0, -1).join(', ')} and ${names.at(-1)} reviews were compiled`;
}

/**
 * A compiler's agreement marks become the tallies a reader trusts ("claude 1/1, codex 1/1"), so
 * they must be facts about the reviews this generation compiled, not the compiler's say-so. Only
 * checked where the seat's reviews are known (the pipeline's Flagged compiler). Reviews pair by
 * name, not by model kind: two Claude reviews are two reviews.
 */
const originCompiled: BoundaryRule = {
  id: 'origin-compiled',
  tier: 'boundary',
  summary: 'Where the reviews a seat compiles are known (the Flagged compiler), a finding’s origin names one of them, and concur/diverge only when a second review was compiled.',
  onElements({ touched, ctx }) {
    const reviewedBy = ctx.reviewedBy;
    if (!reviewedBy) return [];
    const compiled = new Set<string>(reviewedBy);
    const ran = compiledReviewsText(reviewedBy);
    const names = [...compiled];
    const out: Refusal[] = [];
    for (const t of touched) {
      if (t.element.kind !== 'finding') continue;
      if (!t.created && !t.named.has('origin') && !t.named.has('agreement')) continue;
      const origin = t.element.author;
      if (!compiled.has(origin)) {
        const said = t.named.has('origin')
          ? `origin ${clip(origin, 40)} names a review that was not compiled`
          : `the finding names no origin, so it would be attributed to ${clip(origin, 40)}, which is not a compiled review`;
        out.push(
          refusal('origin-compiled', 'origin', `${said}; ${ran}`, names.length > 0 ? `origin ${names.join(' or ')}: the review that raised it` : 'no finding: there is no review to attribute it to'),
        );
      }
      const accord = field<Accord>(t.element, 'accord') ?? 'split';
      if (accord === 'split') continue;
      const pair = field<Array<{ model: string }>>(t.element, 'concurrence')?.[1]?.model ?? 'other';
      if (compiled.has(origin) && compiled.has(pair) && pair !== origin) continue;
      out.push(refusal('origin-compiled', 'agreement', `agreement ${AGREEMENT_OF_ACCORD[accord]} says a second review raised it too, and ${ran}; a finding can only be solo`, 'agreement solo'));
    }
    return out;
  },
};

/** Section titles that name a severity or a leftover pile, not an area of the change. */
const PILE_TITLE =
  /^(nits?|nitpicks?|minor|minor (issues|findings|nits|points)|polish|style|style (issues|nits)|misc\.?|miscellaneous|other|other (issues|findings)|low[- ]priority( issues| findings)?|optional|suggestions)$/i;

/**
 * The Flagged compiler scores every finding it writes, and one under FINDING_SCORE_FLOOR does not
 * reach the board: it is left out, or folded into the finding it belongs with as a part. Nor do
 * low-value findings gather under a section of their own: sections name areas of the change.
 */
const findingScored: BoundaryRule = {
  id: 'finding-scored',
  tier: 'boundary',
  summary: `Where the seat compiles reviews (the Flagged compiler), each added finding carries a score, none under ${FINDING_SCORE_FLOOR}, and no section is a pile of nits.`,
  onCall({ call, parsed, ctx }) {
    if (!ctx.reviewedBy || !parsed.ok) return [];
    if ((call.verb === 'add' || call.verb === 'update') && call.kind === 'finding') {
      const score = parsed.data.score as number | undefined;
      if (score === undefined && call.verb === 'add') {
        return [
          refusal('finding-scored', 'score', 'the finding carries no score', `score 0-100: how much fixing it matters times how sure the code makes it; under ${FINDING_SCORE_FLOOR}, leave it out`),
        ];
      }
      if (score !== undefined && score < FINDING_SCORE_FLOOR) {
        return [
          refusal(
            'finding-scored',
            'score',
            `score ${score} is under the floor of ${FINDING_SCORE_FLOOR}: a finding worth this little does not go on the board`,
            'leave it out, or add it as a part (part_titles, part_bodies) of the finding it belongs with',
          ),
        ];
      }
    }
    if ((call.verb === 'add' || call.verb === 'update') && call.kind === 'section') {
      const title = parsed.data.title as string | undefined;
      if (title !== undefined && PILE_TITLE.test(title.trim())) {
        return [
          refusal(
            'finding-scored',
            'title',
            `section "${clip(title.trim(), 40)}" gathers findings by how little they matter`,
            'a section named for the area of the change its findings concern; a low-value finding is left out or folded into another',
          ),
        ];
      }
    }
    return [];
  },
};

const noCodeBytes: BoundaryRule = {
  id: 'no-code-bytes',
  tier: 'boundary',
  summary:
    'Prose carries no code bytes (fenced, indented, or inline spans that are not identifier-like); code on a board is a code_ref. In the transcribed register an inline span is the source’s own inline formatting and passes; code blocks do not.',
  onElements(c) {
    const out: Refusal[] = [];
    // Transcribed prose quotes the project's artifacts with their inline formatting; only a code
    // block there is code carried as bytes. The register drops no rule: this one still screens it.
    const transcribed = isTranscribed(c.next);
    for (const { field: name, text } of writtenProse(c)) {
      const found = findCodeBytes(text).filter((bytes) => !(transcribed && bytes.kind === 'inline'));
      if (found.length === 0) continue;
      const first = found[0]!;
      const what = first.kind === 'inline' ? `an inline code span (\`${first.excerpt}\`) that is code, not a name` : `a ${first.kind} code block (${first.excerpt || 'empty'})`;
      out.push(
        refusal(
          'no-code-bytes',
          name,
          `it carries ${what}${found.length > 1 ? ` and ${found.length - 1} more` : ''}`,
          'describe the code in prose and show it with a code_ref (cite); backticks are for identifiers, paths and ids',
        ),
      );
    }
    return out;
  },
};

const PROBLEM_WORDS: Record<string, string> = {
  absolute: 'is an absolute path',
  'home-rooted': 'is rooted at ~',
  'github-anchor': 'uses the #L line-anchor form',
  'bare-basename': 'is a bare file name that is not a changed file at the repository root',
  'not-canonical': 'is not written from the repository root',
  backslash: 'uses backslashes',
  'bad-range': 'is not a 1-based range with start ≤ end',
};

function codeRefPathProblem(path: string): string | null {
  if (path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path)) return 'is an absolute path';
  if (path.startsWith('~')) return 'is rooted at ~';
  if (path.includes('\\')) return 'uses backslashes';
  if (/#L\d/.test(path)) return 'carries a #L line anchor';
  if (/^\.\.?\//.test(path) || path.includes('/./') || path.includes('/../') || path.includes('//')) return 'is not written from the repository root';
  return null;
}

const citationWellFormed: BoundaryRule = {
  id: 'citation-well-formed',
  tier: 'boundary',
  summary: 'A path:line in prose (left side ending in a source/config/markup extension) and every code_ref are repo-relative with a 1-based start ≤ end.',
  onElements(c) {
    const out: Refusal[] = [];
    if (!isTranscribed(c.next)) {
      const knowledge = knowledgeOf(c.ctx.citations);
      for (const { field: name, text } of writtenProse(c)) {
        for (const cite of findProseCitations(text, knowledge, codeRegions(text))) {
          if (!cite.problem) continue;
          out.push(
            refusal(
              'citation-well-formed',
              name,
              `${clip(cite.raw, 80)} ${PROBLEM_WORDS[cite.problem] ?? 'is not a repo-relative citation'}, so a reader cannot resolve it`,
              cite.advice ?? 'a repo-relative path:line',
            ),
          );
        }
      }
    }
    for (const t of c.touched) {
      if (t.element.kind !== 'code_ref') continue;
      const path = field<string>(t.element, 'path') ?? '';
      // A path the change itself names is well formed however it reads (`~notes.md`, `a\b.txt`, `x#L1.md` are legal git paths).
      const problem = c.ctx.citations.hasPath?.(path) ? null : codeRefPathProblem(path);
      if (problem) out.push(refusal('citation-well-formed', 'path', `${clip(path, 80)} ${problem}`, 'the repo-relative path exactly as the change names it, e.g. src/app.ts'));
      const start = field<number>(t.element, 'start_line') ?? 0;
      const end = field<number>(t.element, 'end_line') ?? 0;
      if (end < start) out.push(refusal('citation-well-formed', 'end_line', `end_line ${end} is before start_line ${start}`, `end_line ≥ start_line (${start})`));
    }
    return out;
  },
};

const CITE_ADVICE = 'cite lines inside a hunk, or cite the base side for deleted lines';

/** Resolves a code_ref's range; the same predicate the writer uses to stamp hunk_ids. */
export function resolveCodeRef(el: BoardElement, index: CitationIndexLike) {
  return index.resolve(field<string>(el, 'path') ?? '', field<'base' | 'head'>(el, 'side') ?? 'head', field<number>(el, 'start_line') ?? 0, field<number>(el, 'end_line') ?? 0);
}

const citationResolves: BoundaryRule = {
  id: 'citation-resolves',
  tier: 'boundary',
  summary: 'Every cited line sits inside one captured changed region on the named side (a rename’s base answers to either name; a truncated tail counts); code_refs cite this board’s patchset.',
  onElements(c) {
    const out: Refusal[] = [];
    const index = c.ctx.citations;
    if (!isTranscribed(c.next)) {
      const knowledge = knowledgeOf(index);
      for (const { field: name, text } of writtenProse(c)) {
        for (const cite of findProseCitations(text, knowledge, codeRegions(text))) {
          if (cite.problem) continue;
          const resolution = index.resolve(cite.path, 'head', cite.start, cite.end);
          if (resolution.ok) continue;
          out.push(
            refusal(
              'citation-resolves',
              name,
              `${resolution.message}${resolution.nearest ? `; nearest changed range: ${resolution.nearest}` : ''}`,
              resolution.reason === 'outside-changed-regions'
                ? `${CITE_ADVICE}; prose citations name the head side, so deleted lines need a code_ref with side base`
                : admissibleForReason(resolution.reason),
            ),
          );
        }
      }
    }
    for (const t of c.touched) {
      if (t.element.kind !== 'code_ref') continue;
      if (!t.created && !['path', 'side', 'start_line', 'end_line'].some((f) => t.named.has(f))) continue;
      if (index.patchsetId !== c.next.patchsetId) {
        out.push(
          refusal('citation-resolves', 'path', `the citation index reads patchset ${index.patchsetId}, and this board reads ${c.next.patchsetId}`, 'a citation of the patchset this board reads'),
        );
        continue;
      }
      const start = field<number>(t.element, 'start_line') ?? 0;
      const end = field<number>(t.element, 'end_line') ?? 0;
      if (end < start) continue; // citation-well-formed answers that
      const resolution = resolveCodeRef(t.element, index);
      if (resolution.ok) continue;
      const at = resolution.reason === 'past-end-of-file' ? 'end_line' : resolution.reason === 'side-absent' ? 'side' : resolution.reason === 'outside-changed-regions' ? 'start_line' : 'path';
      out.push(
        refusal(
          'citation-resolves',
          at,
          `${resolution.message}${resolution.nearest ? `; nearest changed range: ${resolution.nearest}` : ''}`,
          resolution.reason === 'outside-changed-regions' ? CITE_ADVICE : admissibleForReason(resolution.reason),
        ),
      );
    }
    return out;
  },
};

function admissibleForReason(reason: string): string {
  switch (reason) {
    case 'unknown-path':
      return 'a path this change touches, written from the repository root';
    case 'past-end-of-file':
      return 'a range that ends on or before the last line of the file';
    case 'side-absent':
      return 'the side the file has in this change';
    case 'not-line-addressable':
      return 'mention the file by path in prose; it has no lines to cite';
    default:
      return CITE_ADVICE;
  }
}

const processVocabulary: BoundaryRule = {
  id: 'process-vocabulary',
  tier: 'boundary',
  summary:
    "Authored prose names the change, never the review machinery (lenses, boards, agents, seats, drafts); the transcribed register is exempt, and a word the change's own code uses is the change's vocabulary.",
  onElements(c) {
    if (isTranscribed(c.next)) return [];
    const out: Refusal[] = [];
    for (const { field: name, text } of writtenProse(c)) {
      const changeWords = c.ctx.changeWords;
      const hits = findProcessVocabulary(text).filter((h) => !changeWords || !isChangeVocabulary(h.word, changeWords));
      if (hits.length === 0) continue;
      const words = [...new Set(hits.map((h) => `"${clip(h.word, 30)}"`))];
      out.push(
        refusal(
          'process-vocabulary',
          name,
          `${words.slice(0, 3).join(', ')}${words.length > 3 ? ` and ${words.length - 3} more` : ''} name${hits.length === 1 ? 's' : ''} the review process rather than the change`,
          'describe what the code does and why it matters, without naming lenses, boards, agents, seats or drafts',
        ),
      );
    }
    return out;
  },
};

export const BOUNDARY_TIER: readonly BoundaryRule[] = [
  kindAllowlist,
  hostOwnedField,
  inputShape,
  absenceAdmissible,
  referencesResolve,
  parentAdmissible,
  referencesAcyclic,
  alignedArrays,
  decisionGrounded,
  findingAnchored,
  originCompiled,
  findingScored,
  noCodeBytes,
  citationWellFormed,
  citationResolves,
  processVocabulary,
];

// ─── Finish rules ────────────────────────────────────────────────────────────────────────────

function pointer(rule: FinishRuleId, element: string, sentence: string): FinishPointer {
  return { rule, element, sentence };
}

/** True when the element's parent chain ends at a top-level section (every link present). */
function reachesTopSection(state: BoardState, el: BoardElement): boolean {
  const seen = new Set<string>();
  let at: BoardElement | undefined = el;
  while (at && at.parent !== null) {
    if (seen.has(at.id)) return false;
    seen.add(at.id);
    at = state.elements.get(at.parent);
  }
  return !!at && at !== el && at.kind === 'section';
}

/** The kinds whose presence counts as a lens's material (structured boards may be an overview: any element). */
export function materialKinds(lens: Lens): readonly ElementKind[] | 'any' {
  if (MEASURE_BY_LENS[lens] === 'structured') return 'any';
  return LENS_TYPED_KINDS[lens].filter((k) => !HOST_DERIVED_MEMBER_KINDS.includes(k));
}

function titled(el: BoardElement): boolean {
  if (!('title' in (KIND_INPUTS[el.kind] as AnyObject).shape)) return false;
  const title = field<string>(el, 'title');
  return typeof title === 'string' && title.trim() !== '';
}

function childrenIndex(state: BoardState): Map<string, BoardElement[]> {
  const children = new Map<string, BoardElement[]>();
  for (const el of state.elements.values()) {
    if (el.parent === null) continue;
    const list = children.get(el.parent);
    if (list) list.push(el);
    else children.set(el.parent, [el]);
  }
  return children;
}

const documentPresent: FinishRule = {
  id: 'document-present',
  tier: 'finish',
  summary: 'The document has a title and an introduction.',
  check(state) {
    const missing = DOCUMENT_AUTHORED_FIELDS.filter((f) => state.document[f].trim() === '');
    if (missing.length === 0) return [];
    return [pointer('document-present', '/document', `The document has no ${missing.join(' and no ')}; set it with set_document.`)];
  },
};

const materialPresent: FinishRule = {
  id: 'material-present',
  tier: 'finish',
  summary: 'The board holds its lens’s material at all (Sequence an order_step, Decisions a decision, Flagged a finding, Noise a group, Design any element); reachability is answered separately.',
  check(state) {
    const kinds = materialKinds(state.lens);
    if (kinds === 'any') {
      return state.elements.size > 0 ? [] : [pointer('material-present', '/document', 'The board holds no element; write its content, or settle it absent if the lens admits that.')];
    }
    for (const el of state.elements.values()) if (kinds.includes(el.kind)) return [];
    return [pointer('material-present', '/document', `The board holds no ${kinds.join(' or ')}, which is what it exists to show.`)];
  },
};

const stepReachable: FinishRule = {
  id: 'step-reachable',
  tier: 'finish',
  summary: 'Every order_step is reachable from a top-level section through its parents.',
  check(state) {
    const out: FinishPointer[] = [];
    for (const el of state.elements.values()) {
      if (el.kind === 'order_step' && !reachesTopSection(state, el))
        out.push(pointer('step-reachable', el.id, `Step ${el.id} is not reachable from a top-level section; re-parent it under one with update_order_step.`));
    }
    return out;
  },
};

const materialReachable: FinishRule = {
  id: 'material-reachable',
  tier: 'finish',
  summary: 'Every decision and finding sits under a top-level section.',
  check(state) {
    const out: FinishPointer[] = [];
    for (const el of state.elements.values()) {
      if ((el.kind === 'decision' || el.kind === 'finding') && !reachesTopSection(state, el)) {
        out.push(pointer('material-reachable', el.id, `This ${el.kind} is not under a top-level section, so no reader reaches it; re-parent it with update_${el.kind}.`));
      }
    }
    return out;
  },
};

const sectionPreview: FinishRule = {
  id: 'section-preview',
  tier: 'finish',
  summary: 'Every section has a folded preview: a titled child or its own body_markdown.',
  check(state) {
    const children = childrenIndex(state);
    const out: FinishPointer[] = [];
    for (const el of state.elements.values()) {
      if (el.kind !== 'section') continue;
      const body = field<string>(el, 'body_markdown');
      if (typeof body === 'string' && body.trim() !== '') continue;
      if ((children.get(el.id) ?? []).some(titled)) continue;
      out.push(pointer('section-preview', el.id, 'This section has no titled child and no body_markdown, so it folds to nothing; give it an opening paragraph or titled children.'));
    }
    return out;
  },
};

const designStatsUnique: FinishRule = {
  id: 'design-stats-unique',
  tier: 'finish',
  summary: 'A stat label appears once across the board.',
  check(state) {
    const firstSeen = new Map<string, string>();
    const out: FinishPointer[] = [];
    for (const el of state.elements.values()) {
      if (el.kind !== 'stat') continue;
      const reported = new Set<string>();
      for (const label of field<string[]>(el, 'stat_labels') ?? []) {
        const key = label.trim().toLowerCase();
        const earlier = firstSeen.get(key);
        if (earlier === undefined) firstSeen.set(key, el.id);
        else if (!reported.has(key)) {
          reported.add(key);
          out.push(pointer('design-stats-unique', el.id, `The stat label "${clip(label, 40)}" already appears on ${earlier}; keep one.`));
        }
      }
    }
    return out;
  },
};

const designRequirementScenarios: FinishRule = {
  id: 'design-requirement-scenarios',
  tier: 'finish',
  summary: 'Every requirement carries its shall text, and every scenario sits under a requirement.',
  check(state) {
    const out: FinishPointer[] = [];
    for (const el of state.elements.values()) {
      if (el.kind === 'requirement' && (field<string>(el, 'shall') ?? '').trim() === '') {
        out.push(pointer('design-requirement-scenarios', el.id, 'This requirement has no shall text; quote its normative sentence.'));
      } else if (el.kind === 'scenario' && (el.parent === null || state.elements.get(el.parent)?.kind !== 'requirement')) {
        out.push(pointer('design-requirement-scenarios', el.id, 'This scenario is not under a requirement; re-parent it under the requirement it illustrates.'));
      }
    }
    return out;
  },
};

const noiseMemberGrouped: FinishRule = {
  id: 'noise-member-grouped',
  tier: 'finish',
  summary: 'Every noise_member is parented to a noise_group.',
  check(state) {
    const out: FinishPointer[] = [];
    for (const el of state.elements.values()) {
      if (el.kind !== 'noise_member') continue;
      const parentKind: ElementKind | undefined = el.parent === null ? undefined : state.elements.get(el.parent)?.kind;
      if (parentKind !== 'noise_group') out.push(pointer('noise-member-grouped', el.id, 'This changed region is in no group; place it under a noise_group with update_noise_member.'));
    }
    return out;
  },
};

const noiseGroupReason: FinishRule = {
  id: 'noise-group-reason',
  tier: 'finish',
  summary: 'Every noise_group has a non-empty reason and at least one member.',
  check(state) {
    const children = childrenIndex(state);
    const out: FinishPointer[] = [];
    for (const el of state.elements.values()) {
      if (el.kind !== 'noise_group') continue;
      const noReason = (field<string>(el, 'reason') ?? '').trim() === '';
      const noMember = !(children.get(el.id) ?? []).some((child) => child.kind === 'noise_member');
      if (!noReason && !noMember) continue;
      const what = noReason && noMember ? 'has no reason and no member' : noReason ? 'has no reason' : 'has no member';
      out.push(pointer('noise-group-reason', el.id, `This group ${what}; give it a reason and place members under it, or remove it.`));
    }
    return out;
  },
};

export const FINISH_TIER: readonly FinishRule[] = [
  documentPresent,
  materialPresent,
  stepReachable,
  materialReachable,
  sectionPreview,
  designStatsUnique,
  designRequirementScenarios,
  noiseMemberGrouped,
  noiseGroupReason,
];

/** The whole registry, both tiers: what the writer actually runs. */
export const RULE_REGISTRY: ReadonlyArray<BoundaryRule | FinishRule> = [...BOUNDARY_TIER, ...FINISH_TIER];

// ─── Running the tiers ───────────────────────────────────────────────────────────────────────

export function runCallStage(c: CallContext): Refusal[] {
  const out: Refusal[] = [];
  for (const rule of BOUNDARY_TIER) if (rule.onCall) out.push(...rule.onCall(c));
  return out;
}

export function runElementStage(c: ElementContext): Refusal[] {
  const out: Refusal[] = [];
  for (const rule of BOUNDARY_TIER) if (rule.onElements) out.push(...rule.onElements(c));
  return out;
}

export function runFinishTier(state: BoardState): FinishPointer[] {
  const out: FinishPointer[] = [];
  for (const rule of FINISH_TIER) out.push(...rule.check(state));
  return out;
}

/** Rules a caller may not silence: a Refusal's rule is always a registered boundary id. */
export function isBoundaryRule(rule: RuleId): rule is BoundaryRuleId {
  return (BOUNDARY_RULES as readonly string[]).includes(rule);
}

/** "a" or "an" before a kind name. */
function article(word: string): string {
  return /^[aeiou]/i.test(word) ? 'an' : 'a';
}
