import {
  DOCUMENT_AUTHORED_FIELDS,
  PROSE_FIELDS,
  elementField,
  elementStrings,
  REFERENCE_FIELDS,
  RESULT_MAX_HELD_IDS,
  type BoardElement,
  type ElementKind,
  type Refusal,
} from '../../../protocol/board';
import type { PathKnowledge } from '../prose';
import { boundedList, formatCount } from '../render';
import type { BoardState, CitationIndexLike } from '../state';
import type { BoundaryRuleId, Touched, ElementContext } from './context';

/** Reading a board and a call for the rules: ids of kinds, references, written prose, refusals. */

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

/** Every id an element's reference fields name, with the field and the kinds it admits. */
export function referencesOf(el: BoardElement): Array<{ field: string; target: string; kinds: readonly ElementKind[] }> {
  const refs = REFERENCE_FIELDS[el.kind];
  if (!refs) return [];
  const out: Array<{ field: string; target: string; kinds: readonly ElementKind[] }> = [];
  for (const [name, rule] of Object.entries(refs)) {
    for (const target of elementStrings(el, name)) out.push({ field: name, target, kinds: rule.kinds });
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
    const value = elementField(t.element, name);
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
export function writtenProse(c: ElementContext): Array<{ field: string; text: string }> {
  return [...c.touched.flatMap(proseOf), ...documentProse(c)];
}

export function isTranscribed(state: BoardState): boolean {
  return state.document.prose_register === 'transcribed';
}

export function knowledgeOf(index: CitationIndexLike): PathKnowledge | undefined {
  if (typeof index.hasPath !== 'function' || typeof index.pathsNamed !== 'function') return undefined;
  return { hasPath: (p) => index.hasPath!(p), pathsNamed: (b) => index.pathsNamed!(b) };
}

export function refusal(rule: BoundaryRuleId, fieldName: string, message: string, admissible: string): Refusal {
  return { rule, field: fieldName, message, admissible };
}

/** "a" or "an" before a kind name. */
export function article(word: string): string {
  return /^[aeiou]/i.test(word) ? 'an' : 'a';
}
