import type { Patchset } from '../../protocol/patchset';
import { ok, type Result } from '../../protocol/result';
import type { EvidenceUnit } from '../../protocol/rounds';
import { capturePatchset, patchsetId } from '../capture/capture';
import { openRepo } from '../capture/repo';
import type { EarlierReview } from '../forge/types';
import { evidenceManifest } from '../rounds/evidence';
import { authorDeltaPatchset } from './authorDelta';
import type { UnitFrame } from './evidenceLines';
import { deltaManifest } from './closures';
import { checkAncestry, fixDelta, type Ancestry } from './delta';
import { priorItems, type PriorItem } from './items';

/**
 * "Re-review since the last review", as one decision over git and the earlier review: which
 * review it is measured against, the ancestry of that review's commit and the head, what the
 * lenses read (the fix delta as a patchset: the diff from the review's commit, or, when the base
 * was merged in since, only the author's work — authorDelta.ts; the whole change
 * when the commit is not an ancestor or there is no earlier review; nothing when the head is the
 * reviewed commit), the earlier review's items, and the fix delta's evidence units the closure
 * seat cites. Bound to the pair (review commit, head): another pair is another question.
 */

export type DeltaKind = 'ancestor' | 'not-ancestor' | 'none';

export interface SinceLastReview {
  /** The report's `delta`: none = no earlier review of the signed-in reviewer was found. */
  delta: { kind: DeltaKind; from: string | null; to: string; reason: string | null };
  ancestry: Ancestry | null;
  /** One sentence for a reader: what is reviewed and why. */
  statement: string;
  earlier: Pick<EarlierReview, 'reviewId' | 'url' | 'state' | 'commitId' | 'markerId'> | null;
  items: PriorItem[];
  /** What the lenses read; null when nothing changed since the reviewed commit. */
  lensPatchset: Patchset | null;
  /**
   * The fix delta as a patchset, null unless the ancestry is a real delta. Its head is the head;
   * its base is the review's commit, or — when the base was merged in since — the author base
   * (authorDelta.ts), so that its changed lines are only the author's.
   */
  deltaPatchset: Patchset | null;
  /** The fix delta's units (merges: only their resolutions). */
  manifest: EvidenceUnit[];
  /**
   * Where each unit's line numbers count, by unit id: at its segment's ends (a segment that ends
   * before the head numbers its lines there; host/rereview/evidenceLines.ts carries them onto the
   * delta patchset's base and head). Present with a real delta.
   */
  unitFrames?: ReadonlyMap<string, UnitFrame>;
  /** A reviewed-commit line as the delta patchset's base numbers it; present when that base is the author base. */
  reviewedLineOnBase?: (path: string, line: number) => number | null;
  /** The commits since only merge the base, resolving nothing: there is no author delta. */
  onlyBaseMerged?: true;
}

export interface SinceLastInput {
  root: string;
  /** The pull request's capture (base…head): what a full review reads. */
  full: Patchset;
  earlier: EarlierReview | null;
  /** The pull request is the signed-in reviewer's own: its earlier items are all blockers. */
  ownRequest: boolean;
}

export async function sinceLastReview(input: SinceLastInput): Promise<Result<SinceLastReview>> {
  const head = input.full.head;
  if (!input.earlier) {
    return ok({
      delta: { kind: 'none', from: null, to: head, reason: 'no earlier review of yours on this request' },
      ancestry: null,
      statement: 'You have no earlier review of this request, so the whole change is reviewed.',
      earlier: null,
      items: [],
      lensPatchset: input.full,
      deltaPatchset: null,
      manifest: [],
    });
  }
  const earlier = input.earlier;
  const items = priorItems({ state: earlier.state, body: earlier.body, comments: earlier.comments, ownRequest: input.ownRequest });
  const summary = { reviewId: earlier.reviewId, url: earlier.url, state: earlier.state, commitId: earlier.commitId, markerId: earlier.markerId };
  const ancestry = await checkAncestry(input.root, earlier.commitId, head);
  const delta = await fixDelta(input.root, ancestry, input.full.options);
  if (!delta.ok) return delta;
  const value = delta.value;
  if (value.kind === 'full') {
    return ok({
      delta: { kind: 'not-ancestor', from: earlier.commitId, to: head, reason: value.ancestry.reason },
      ancestry,
      statement: sentence(value.statement),
      earlier: summary,
      items,
      lensPatchset: input.full,
      deltaPatchset: null,
      manifest: [],
    });
  }
  if (value.kind === 'none') {
    return ok({
      delta: { kind: 'ancestor', from: value.ancestry.from, to: head, reason: value.statement },
      ancestry,
      statement: sentence(value.statement),
      earlier: summary,
      items,
      lensPatchset: null,
      deltaPatchset: null,
      manifest: [],
    });
  }
  const manifest = deltaManifest(value.segments);
  if (!manifest.ok) return { ok: false, error: { code: 'git-failed', message: manifest.error.message } };
  const repo = await openRepo(input.root);
  if (!repo.ok) return repo;
  const merges = value.segments.filter((s) => s.kind === 'remerge').length;
  const from = value.ancestry.from;
  let deltaPatchset: Patchset;
  let reviewedLineOnBase: SinceLastReview['reviewedLineOnBase'];
  if (merges === 0) {
    // No merge since the review: every commit since is the author's, and the plain diff is their work.
    const captured = await capturePatchset(repo.value, { kind: 'branch', base: from, head }, input.full.options);
    if (!captured.ok && captured.error.code === 'empty-change') {
      // Commits since the review that change no file (an empty commit, a change and its revert): no code diff, said.
      const none = `no code changed since ${from.slice(0, 7)}: the commits since change no file`;
      return ok({ delta: { kind: 'ancestor', from, to: head, reason: none }, ancestry, statement: sentence(none), earlier: summary, items, lensPatchset: null, deltaPatchset: null, manifest: [] });
    }
    if (!captured.ok) return captured;
    // Recorded under the request's own refs, so the delta reads as this request's change.
    const { id: _id, ...body } = { ...captured.value, headRef: input.full.headRef, baseRef: from, baseTip: from };
    deltaPatchset = { id: patchsetId(body), ...body };
  } else {
    // The base was merged in since: the lenses read only the author's work (authorDelta.ts).
    const authored = await authorDeltaPatchset(repo.value, { from, to: head, segments: value.segments, options: input.full.options, headRef: input.full.headRef });
    if (!authored.ok) return authored;
    if (authored.value === null) {
      const none = `nothing of the author's own changed since ${from.slice(0, 7)}: the commits since only merge the base, and ${merges === 1 ? 'the merge resolves' : 'the merges resolve'} nothing`;
      return ok({
        delta: { kind: 'ancestor', from, to: head, reason: none },
        ancestry,
        statement: sentence(none),
        earlier: summary,
        items,
        lensPatchset: null,
        deltaPatchset: null,
        manifest: [],
        onlyBaseMerged: true,
      });
    }
    deltaPatchset = authored.value.patchset;
    reviewedLineOnBase = authored.value.lineOf;
  }
  const statement = `The delta since your review at ${from.slice(0, 7)} is reviewed${merges > 0 ? ` (inside ${merges} merge${merges === 1 ? '' : 's'}, only what was resolved there counts)` : ''}.`;
  const unitFrames = new Map<string, UnitFrame>();
  for (const segment of value.segments) {
    const frame: UnitFrame = segment.kind === 'diff' ? { base: segment.from, head: segment.to } : { base: null, head: segment.merge };
    const units = evidenceManifest(segment.files);
    if (!units.ok) continue;
    for (const u of units.value) if (!unitFrames.has(u.id)) unitFrames.set(u.id, frame);
  }
  return ok({
    delta: { kind: 'ancestor', from, to: head, reason: null },
    ancestry,
    statement,
    earlier: summary,
    items,
    lensPatchset: deltaPatchset,
    deltaPatchset,
    manifest: manifest.value,
    unitFrames,
    ...(reviewedLineOnBase ? { reviewedLineOnBase } : {}),
  });
}

function sentence(text: string): string {
  const t = text.trim();
  return `${t[0]?.toUpperCase() ?? ''}${t.slice(1)}${/[.!?]$/.test(t) ? '' : '.'}`;
}
