/**
 * Structural sharing between two snapshots of the same data (pure). The host sends a generation
 * whole after every write, so the panel receives a fresh copy of every element each time; keeping
 * the previous objects wherever the new ones hold the same values lets the views skip what did
 * not change by identity (memoized element views, the element tree, code cards).
 *
 * `share(previous, next)` returns a value deep-equal to `next` in which every part that equals
 * the corresponding part of `previous` IS that part of `previous`; when everything is equal it
 * returns `previous` itself. Neither argument is changed. Values are JSON-shaped (what a message
 * carries): plain objects, arrays, strings, numbers, booleans, null.
 */
import type { GenerationSnapshot } from '../protocol';

/** The generation to keep: `next`, sharing every unchanged part with `previous` (same generation only). */
export function shareGeneration(previous: GenerationSnapshot | null, next: GenerationSnapshot | null): GenerationSnapshot | null {
  // Another generation is drawn from scratch anyway (its lane panels are keyed by generation id).
  if (previous === null || next === null || previous.generationId !== next.generationId) return next;
  return share(previous, next) as GenerationSnapshot;
}

export function share(previous: unknown, next: unknown): unknown {
  if (previous === next) return previous;
  if (Array.isArray(next)) return Array.isArray(previous) ? shareArray(previous, next) : next;
  if (isRecord(next)) return isRecord(previous) ? shareRecord(previous, next) : next;
  // Primitives: equal ones were returned above.
  return next;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The id a pool item is matched by (board elements, folds by section), if it has one. */
function idOf(value: unknown): string | undefined {
  if (!isRecord(value)) return undefined;
  const id = value['id'] ?? value['sectionId'];
  return typeof id === 'string' ? id : undefined;
}

function shareArray(previous: readonly unknown[], next: readonly unknown[]): readonly unknown[] {
  // Items with ids are matched by id, so an insertion or removal does not unshare everything after
  // it; the match only says which old item to compare with, equality is still checked in full.
  let byId: Map<string, unknown> | null = null;
  if (idOf(next[0]) !== undefined) {
    byId = new Map();
    for (const item of previous) {
      const id = idOf(item);
      if (id !== undefined && !byId.has(id)) byId.set(id, item);
    }
  }
  let out: unknown[] | null = null;
  for (let i = 0; i < next.length; i++) {
    const item = next[i];
    const id = byId ? idOf(item) : undefined;
    const counterpart = id !== undefined && byId?.has(id) ? byId.get(id) : previous[i];
    const shared = share(counterpart, item);
    if (out === null && (i >= previous.length || shared !== previous[i])) out = next.slice(0, i).map((_, j) => previous[j]);
    if (out !== null) out.push(shared);
  }
  if (out === null) return next.length === previous.length ? previous : previous.slice(0, next.length);
  return out;
}

function shareRecord(previous: Record<string, unknown>, next: Record<string, unknown>): Record<string, unknown> {
  const keys = Object.keys(next);
  let same = keys.length === Object.keys(previous).length;
  const values = new Array<unknown>(keys.length);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    const had = Object.prototype.hasOwnProperty.call(previous, key);
    const value = had ? share(previous[key], next[key]) : next[key];
    values[i] = value;
    if (!had || value !== previous[key]) same = false;
  }
  if (same) return previous;
  // fromEntries defines own properties: a key named `__proto__` (record keys are data) stays a key.
  return Object.fromEntries(keys.map((key, i) => [key, values[i]]));
}
