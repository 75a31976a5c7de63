import { ALIGNED_FIELDS, elementField, PARENT_KINDS, RESULT_MAX_HELD_IDS, TOP_LEVEL_KINDS, type BoardElement, type Refusal } from '../../../protocol/board';
import { clip } from '../prose';
import { boundedList, formatCount } from '../render';
import type { BoardState } from '../state';
import type { BoundaryRule } from './context';
import { heldText, referencesOf, refusal, article } from './reading';

/** Boundary rules on the board's structure: references resolve, parents admit, nothing cycles, arrays align. */

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
        const s = elementField(t.element, spine);
        const c = elementField(t.element, companion);
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

/** The structure rules, in registry order (BOUNDARY_TIER in index.ts). */
export const STRUCTURE_RULES: readonly BoundaryRule[] = [referencesResolve, parentAdmissible, referencesAcyclic, alignedArrays];
