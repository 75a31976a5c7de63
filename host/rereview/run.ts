import type { Patchset } from '../../protocol/patchset';
import { ok, type Result } from '../../protocol/result';
import { isLineCommentRef, PUBLISH_RECEIPT_EVENT_KIND, PublishReceipt } from '../../protocol/exits';
import { PriorReview, type PriorItemView } from '../../protocol/review';
import type { EarlierReview } from '../forge/types';
import type { LensHarness } from '../harness/harnessConfig';
import { runClosureTurn } from './closureSeat';
import type { ItemClosure } from './closures';
import { evidenceOnDelta, gitLineMap } from './evidenceLines';
import { priorReviewLine } from './items';
import { sinceLastReview, type SinceLastReview } from './sinceLast';

/**
 * "Re-review since the last review", shared by `rennet review --pr N --since-last-review` and the
 * VS Code host: the decision (sinceLast.ts), the closure seat's one turn over the earlier items
 * and the fix delta (closureSeat.ts), and the record a generation is shown and posted with
 * (`rereview.result` on the session: the Flagged lens's Prior items, the next post's first line).
 * The caller drafts the lenses over `plan.since.lensPatchset` (told `rereviewDeltaOf(plan)`) between
 * `planRereview` and `recordRereview`.
 */

export const REREVIEW_EVENT_KIND = 'rereview.result';

export interface RereviewPlan {
  since: SinceLastReview;
  closures: ItemClosure[];
  /** Why no item was judged; null when the seat's closures were accepted (or there were no items). */
  closureFailure: string | null;
  /** "Prior review: k of n resolved", or what stands in for it. */
  line: string;
}

export interface RereviewDeps {
  /** The signed-in reviewer's earlier review of the request, and whether the request is theirs. */
  earlier(): Promise<Result<{ review: EarlierReview | null; ownRequest: boolean }>>;
  /** The closure seat's harness (the Flagged compiler's, else Design's). */
  closureHarness(signal: AbortSignal): Promise<LensHarness>;
  /** The context directory read_context serves (absolute). */
  contextDir: string;
  log?(line: string): void;
  signal?: AbortSignal;
}

export async function planRereview(deps: RereviewDeps, root: string, full: Patchset): Promise<Result<RereviewPlan>> {
  const earlier = await deps.earlier();
  if (!earlier.ok) return earlier;
  const since = await sinceLastReview({ root, full, earlier: earlier.value.review, ownRequest: earlier.value.ownRequest });
  if (!since.ok) return since;
  const s = since.value;
  let closures: ItemClosure[] = [];
  let closureFailure: string | null = null;
  if (s.items.length > 0) {
    if (s.deltaPatchset) {
      const turn = await runClosureTurn(
        deps.closureHarness,
        { from: s.delta.from as string, to: s.delta.to, items: s.items, manifest: s.manifest, workspace: root, delta: s.deltaPatchset, contextDir: deps.contextDir },
        deps.signal ? { signal: deps.signal } : {},
      );
      if (!turn.ok) return turn;
      closures = s.unitFrames
        ? await evidenceOnDelta(turn.value.closures, s.unitFrames, { from: s.delta.from as string, to: s.delta.to }, gitLineMap(root), s.reviewedLineOnBase)
        : turn.value.closures;
      closureFailure = turn.value.failure;
      if (turn.value.spend)
        deps.log?.(`[closures] ${turn.value.harness}${turn.value.model ? ` ${turn.value.model}` : ''}: ${closures.filter((c) => c.closure === 'resolved').length} of ${closures.length} resolved`);
    } else {
      // Nothing since the review (no commits, or none that change a file), or a history rewritten under it: no delta can resolve an item.
      const why =
        s.delta.kind === 'not-ancestor'
          ? `the earlier review's commit is not an ancestor of the head (${s.delta.reason ?? 'unknown'}): there is no delta to show a fix`
          : s.onlyBaseMerged
            ? "nothing of the author's own changed since the earlier review (its commits only merge the base, resolving nothing): nothing can have resolved it"
            : s.ancestry?.kind === 'ancestor' && !s.ancestry.equal
              ? 'no code changed since the earlier review (its commits change no file): nothing can have resolved it'
              : 'no commits since the earlier review: nothing can have resolved it';
      closures = s.items.map((item) => ({ item, closure: 'open', reason: why, evidence: [] }));
    }
  }
  const resolved = closures.filter((c) => c.closure === 'resolved').length;
  const line = s.ancestry ? priorReviewLine(s.ancestry, resolved, s.items.length) : 'Prior review: none of yours on this request; the whole change was reviewed';
  return ok({ since: s, closures, closureFailure, line });
}

/**
 * When the lenses read the fix delta, what their pipeline is told (LensPipelineInput.rereviewDelta:
 * Flagged keeps a finding outside it only at blocker); null when they read the whole change or nothing.
 */
export function rereviewDeltaOf(plan: RereviewPlan): { from: string } | null {
  const { since } = plan;
  return since.deltaPatchset && since.lensPatchset === since.deltaPatchset && since.delta.from ? { from: since.delta.from } : null;
}

export function priorReviewOf(plan: RereviewPlan): PriorReview {
  const items: PriorItemView[] = plan.closures.map((c) => ({
    id: c.item.id,
    path: c.item.path,
    line: c.item.line,
    text: c.item.text,
    severity: c.item.severity,
    closure: c.closure,
    reason: c.reason,
    evidence: c.evidence.flatMap((e) => (e.side !== null && e.line !== null ? [{ path: e.path, side: e.side, line: e.line }] : [])),
  }));
  const e = plan.since.earlier;
  return PriorReview.parse({
    delta: plan.since.delta,
    line: plan.line,
    statement: plan.since.statement,
    earlier: e ? { reviewId: e.reviewId, url: e.url, state: e.state, commitId: e.commitId } : null,
    items,
    closureFailure: plan.closureFailure,
    deltaPatchsetId: plan.since.deltaPatchset?.id ?? null,
  });
}

/** The record, filed on the session for the generation drafted from the plan (null: none was drafted). */
export function recordRereview(
  store: { appendEvent(sessionId: string, kind: string, payload: unknown, now: string): unknown },
  sessionId: string,
  generationId: string | null,
  plan: RereviewPlan,
  now: string,
): PriorReview {
  const prior = priorReviewOf(plan);
  store.appendEvent(sessionId, REREVIEW_EVENT_KIND, { generationId, prior }, now);
  return prior;
}

/** Every re-review record of a session, oldest first. */
export function rereviewRecords(store: { readEvents(sessionId: string): Array<{ kind: string; payload: unknown }> }, sessionId: string): Array<{ generationId: string | null; prior: PriorReview }> {
  const out: Array<{ generationId: string | null; prior: PriorReview }> = [];
  for (const event of store.readEvents(sessionId)) {
    if (event.kind !== REREVIEW_EVENT_KIND) continue;
    const payload = event.payload as { generationId?: unknown; prior?: unknown };
    const prior = PriorReview.safeParse(payload?.prior);
    if (prior.success) out.push({ generationId: typeof payload.generationId === 'string' ? payload.generationId : null, prior: prior.data });
  }
  return out;
}

/** The newest re-review of the request at this head: what the next post opens with. */
export function rereviewAtHead(store: { readEvents(sessionId: string): Array<{ kind: string; payload: unknown }> }, sessionId: string, head: string): PriorReview | null {
  return (
    rereviewRecords(store, sessionId)
      .filter((r) => r.prior.delta.to === head)
      .at(-1)?.prior ?? null
  );
}

/**
 * The reviewer's asks on still-open items carry forward: when the earlier review is one Rennet
 * posted from this session (its publish receipt holds what it carried), every ask that became an
 * inline comment whose item is still open is staged again, so the next post asks it again (on
 * the new capture it lands in the body, written on an earlier capture). Asks already staged are
 * left alone. Returns the ask ids restored.
 */
export function carryForwardOpenAsks(
  store: { readEvents(sessionId: string): Array<{ kind: string; payload: unknown }> },
  asks: { command(sessionId: string, input: unknown, now: string): { ok: boolean } },
  sessionId: string,
  plan: RereviewPlan,
  now: string,
): string[] {
  const markerId = plan.since.earlier?.markerId ?? null;
  if (!markerId) return [];
  const receipt = store
    .readEvents(sessionId)
    .filter((e) => e.kind === PUBLISH_RECEIPT_EVENT_KIND)
    .map((e) => PublishReceipt.safeParse(e.payload))
    .flatMap((p) => (p.success && p.data.markerId === markerId && p.data.review ? [p.data.review] : []))
    .at(-1);
  if (!receipt) return [];
  const restored: string[] = [];
  for (const closure of plan.closures) {
    if (closure.closure !== 'open' || closure.item.path === null || closure.item.line === null) continue;
    const side = closure.item.side === 'base' ? 'LEFT' : 'RIGHT';
    receipt.descriptor.comments.forEach((comment, i) => {
      if (comment.path !== closure.item.path || comment.line !== closure.item.line || comment.side !== side) return;
      const ref = receipt.placements[i]?.ref;
      if (!ref || isLineCommentRef(ref) || restored.includes(ref)) return;
      if (asks.command(sessionId, { type: 'restore', askId: ref }, now).ok) restored.push(ref);
    });
  }
  return restored;
}

/**
 * Files the fix delta as one of the review's captures: its blobs are read through the session
 * (the Prior items' evidence and the delta boards' citations open it; a patchset of no session
 * has no repository). The request's own capture stays the active one, the one a post is pinned to.
 */
export function fileDeltaPatchset(
  store: { putPatchset(patchset: Patchset): unknown; attachPatchset(sessionId: string, patchsetId: string, now: string): unknown },
  sessionId: string,
  plan: RereviewPlan,
  full: Patchset,
  now: string,
): void {
  const delta = plan.since.deltaPatchset;
  if (!delta) return;
  store.putPatchset(delta);
  store.attachPatchset(sessionId, delta.id, now);
  store.attachPatchset(sessionId, full.id, now);
}
