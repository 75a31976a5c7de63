import type { EvidenceUnit, ReportEvidence } from '../../protocol/rounds';
import type { Result } from '../../protocol/result';
import { evidenceManifest } from '../rounds/evidence';
import { reportEvidence } from '../rounds/verify';
import type { DeltaSegment } from './delta';
import type { PriorItem } from './items';

/**
 * PURE. Prior-item closures, verified like a round report: a seat says of each earlier item that
 * it is resolved — citing evidence ids of the fix delta's own units, never a location — or open,
 * with why. The host refuses a closure for an item that does not exist or a second one for the
 * same item, and a resolved closure that cites no changed line of the delta (an id it does not
 * know, or only a rename, mode or binary change). An item nobody closed stays open and says so:
 * nothing is resolved by a push alone.
 */

export interface ClosureInput {
  itemId: string;
  closure: 'resolved' | 'open';
  reason: string;
  evidenceIds: readonly string[];
}

export interface ItemClosure {
  item: PriorItem;
  closure: 'resolved' | 'open';
  reason: string;
  /** The delta's changed lines it rests on (host-derived); empty for open. */
  evidence: ReportEvidence[];
}

export type ClosureRefusal = { reason: 'unknown-item' | 'duplicate-item' | 'unknown-evidence' | 'no-line-evidence' | 'no-reason' | 'bad-delta'; message: string };

/** The evidence units of a fix delta: every segment's units (a remerge segment's are the resolutions). */
export function deltaManifest(segments: readonly DeltaSegment[]): Result<EvidenceUnit[], ClosureRefusal> {
  const units: EvidenceUnit[] = [];
  const seen = new Set<string>();
  for (const segment of segments) {
    const manifest = evidenceManifest(segment.files);
    if (!manifest.ok) return { ok: false, error: { reason: 'bad-delta', message: manifest.error.message } };
    for (const u of manifest.value) {
      // The same hunk twice in one delta (a change undone and redone across a merge) is one unit.
      if (seen.has(u.id)) continue;
      seen.add(u.id);
      units.push(u);
    }
  }
  return { ok: true, value: units };
}

export function verifyClosures(items: readonly PriorItem[], manifest: readonly EvidenceUnit[], closures: readonly ClosureInput[]): Result<ItemClosure[], ClosureRefusal> {
  const byId = new Map(items.map((i) => [i.id, i]));
  const units = new Map(manifest.map((u) => [u.id, u]));
  const given = new Map<string, ClosureInput>();
  for (const c of closures) {
    if (!byId.has(c.itemId)) return { ok: false, error: { reason: 'unknown-item', message: `a closure names item ${c.itemId.slice(0, 40)}, which the earlier review does not have` } };
    if (given.has(c.itemId)) return { ok: false, error: { reason: 'duplicate-item', message: `item ${c.itemId} is closed twice` } };
    if (!c.reason.trim()) return { ok: false, error: { reason: 'no-reason', message: `the closure of ${c.itemId} says nothing about why` } };
    if (c.closure === 'resolved') {
      const unknown = c.evidenceIds.find((id) => !units.has(id));
      if (unknown !== undefined) return { ok: false, error: { reason: 'unknown-evidence', message: `the closure of ${c.itemId} cites ${unknown.slice(0, 40)}, which is not a unit of the fix delta` } };
      if (!c.evidenceIds.some((id) => units.get(id)?.kind === 'text-hunk')) {
        return { ok: false, error: { reason: 'no-line-evidence', message: `${c.itemId} is closed as resolved without a changed line of the fix delta to show it` } };
      }
    }
    given.set(c.itemId, c);
  }
  return {
    ok: true,
    value: items.map((item) => {
      const c = given.get(item.id);
      if (!c) return { item, closure: 'open', reason: 'no closure was given for it: it stays open', evidence: [] };
      const evidence = c.closure === 'resolved' ? [...new Set(c.evidenceIds)].map((id) => reportEvidence(units.get(id) as EvidenceUnit)) : [];
      return { item, closure: c.closure, reason: c.reason.trim(), evidence };
    }),
  };
}
