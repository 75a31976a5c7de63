import type { AskProjection } from '../../protocol/asks';
import { rereviewAtHead } from '../rereview/run';
import { isLineCommentRef, PUBLISH_RECEIPT_EVENT_KIND, PublishReceipt, type ComposedReview, type ComposeReviewResult, type ReviewPreview, type ReviewTarget } from '../../protocol/exits';
import { pullRequestLabel, type PullRequestRecord } from '../../protocol/forge';
import type { Patchset } from '../../protocol/patchset';
import type { GenerationSnapshot } from '../../protocol/review';
import { err, ok, rennetError, type Result } from '../../protocol/result';
import type { Session } from '../../protocol/session';
import { adapterFor, forgeFailure, forgeRepoFor, type ForgeAccess } from '../forge/pullRequests';
import { liveHeadBehind } from '../forge/freshness';
import { ForgeError, type ForgeAdapter, type PostedReview } from '../forge/types';
import { composeReview, type ComposeReviewInput } from './compose';
import { groundingOf } from './grounding';
import { currentGenerationId, readGenerationSnapshot } from '../generation/generationSnapshot';

/**
 * Post review, end to end: compose from the durable state, and post exactly what was previewed,
 * exactly once. The order follows what each check proves:
 *   1. the rebuilt composition must be the previewed one (else stale-composition);
 *   2. a local receipt for its marker proves the whole post landed: answer it;
 *   3. a review on the forge carrying the marker proves the forge step landed (a retry after a lost
 *      answer): record it and answer it (GitLab APPROVE: add the approval if it is missing);
 *   4. only then read the live head: a head that moved since the capture is refused before any
 *      mutation, since the review would land on code nobody read; a head behind the capture (one's
 *      own request after a round whose commits are not pushed) is refused naming the push;
 *   5. post pinned to the captured head; when the answer is lost, look for the marker once more;
 *   6. persist the receipt (by session and marker) before answering.
 * Posts of one session run one at a time in this process (a double click waits, then finds the receipt).
 */

export interface PublishStore {
  getSession(id: string): Session | undefined;
  getPatchset(id: string): Patchset | undefined;
  appendEvent(sessionId: string, kind: string, payload: unknown, now: string): { seq: number };
  readEvents(sessionId: string, afterSeq?: number): Array<{ seq: number; kind: string; payload: unknown }>;
}

export interface PublishDeps {
  store: PublishStore;
  /** The session's ask projection (the ask log's fold). */
  projection(sessionId: string): Result<AskProjection>;
  /** The session's current generation, for the approving opener's facts; null when none. */
  generation(sessionId: string): GenerationSnapshot | null;
  /** The request as last read from its forge (the session's `forge.pullRequest` record). */
  pullRequest(sessionId: string): PullRequestRecord | null;
  /** Forge access as configured now (the registry can change while the host runs). */
  access(): Result<ForgeAccess>;
  /**
   * Marks what a posted review carried as sent (see `sentItems`): its asks retire with `reason`,
   * its bare line comments are cleared, a verdict override is cleared. Idempotent: what is no
   * longer staged is left alone.
   */
  markSent(sessionId: string, items: SentItems, reason: string): void;
  now?: () => Date;
}

/** What one posted review carried out of the ask projection. */
export interface SentItems {
  asks: string[];
  lineComments: string[];
  verdictOverride: boolean;
}

/** The asks and bare line comments a composed review carries (comments and body notes alike, superseded ones too). */
export function sentItems(review: ComposedReview): SentItems {
  const refs = [...review.placements.map((p) => p.ref), ...review.foldNotes.map((n) => n.ref)];
  return {
    asks: refs.filter((r) => !isLineCommentRef(r)),
    lineComments: refs.filter((r) => isLineCommentRef(r)),
    verdictOverride: review.verdict.override !== null,
  };
}

/** Whether a composition carries nothing the reviewer staged or chose: no ask, no line comment, no verdict override. */
export function carriesNothingStaged(review: ComposedReview): boolean {
  return review.placements.length === 0 && review.foldNotes.length === 0 && review.verdict.override === null;
}

interface Context {
  session: Session & { target: Extract<Session['target'], { kind: 'pull-request' }> };
  patchset: Patchset;
  record: PullRequestRecord;
  input: ComposeReviewInput;
}

export class Publisher {
  private readonly tails = new Map<string, Promise<unknown>>();
  private readonly now: () => Date;

  constructor(private readonly deps: PublishDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /** Every receipt of the session, newest first. */
  receipts(sessionId: string): PublishReceipt[] {
    const out: PublishReceipt[] = [];
    for (const event of this.deps.store.readEvents(sessionId)) {
      if (event.kind !== PUBLISH_RECEIPT_EVENT_KIND) continue;
      const parsed = PublishReceipt.safeParse(event.payload);
      if (parsed.success) out.push(parsed.data);
    }
    return out.reverse();
  }

  /** The exact review that would post now, beside the receipt of one already posted for it. */
  preview(sessionId: string): Result<ReviewPreview> {
    const context = this.context(sessionId);
    if (!context.ok) return context;
    const { session, record, input } = context.value;
    let composed = composeReview(input);
    const history = this.receipts(sessionId);
    const first = composed.ok ? composed.value : null;
    let receipt = first ? (history.find((r) => r.markerId === first.markerId) ?? null) : null;
    if (first && receipt && !carriesNothingStaged(first)) {
      // Posted, but what it carried is still staged (the host stopped between the receipt and
      // marking them sent): mark them now, so the next review does not carry them again.
      this.deps.markSent(sessionId, sentItems(first), sentReason(receipt));
      const again = this.context(sessionId);
      if (!again.ok) return again;
      composed = composeReview(again.value.input);
    }
    // Nothing staged or chosen since the last review posted on this head: that review is where
    // the exit stands (an approving review of nothing is not offered in its place).
    if (composed.ok && !receipt) receipt = this.standing(history, composed.value, context.value.patchset.head);
    const wire: ComposeReviewResult = composed.ok ? { ok: true, value: composed.value } : { ok: false, error: composed.error };
    return ok({ sessionId, target: input.target, label: pullRequestLabel(session.target), webUrl: record.webUrl, entry: record.entry, composed: wire, receipt, history });
  }

  /** The newest receipt on `head` when `review` carries nothing staged: the post the exit stands at. */
  private standing(history: PublishReceipt[], review: ComposedReview, head: string): PublishReceipt | null {
    if (!carriesNothingStaged(review)) return null;
    const latest = history[0];
    return latest && latest.headSha === head ? latest : null;
  }

  /** Posts the previewed composition (named by its id); see the order above. */
  post(sessionId: string, compositionId: string): Promise<Result<PublishReceipt>> {
    const previous = this.tails.get(sessionId) ?? Promise.resolve();
    const run = previous.then(
      () => this.postNow(sessionId, compositionId),
      () => this.postNow(sessionId, compositionId),
    );
    this.tails.set(sessionId, run);
    return run;
  }

  private async postNow(sessionId: string, compositionId: string): Promise<Result<PublishReceipt>> {
    const context = this.context(sessionId);
    if (!context.ok) return context;
    const { session, patchset, input } = context.value;
    // A retry of a composition that posted (a double click, a lost answer at the client): its
    // receipt, even though what it carried is no longer staged.
    const posted = this.receipts(sessionId).find((r) => r.compositionId === compositionId);
    if (posted) return ok({ ...posted, reused: true });
    const composed = composeReview(input);
    if (!composed.ok) return err(rennetError(composed.error.reason === 'stale-composition' ? 'stale-composition' : 'invalid-request', composed.error.message, composed.error.detail));
    if (composed.value.descriptor.compositionId !== compositionId) {
      return err(
        rennetError('stale-composition', 'the review changed since it was previewed (asks, verdict, patchset or request); preview it again before posting', {
          previewed: compositionId,
          now: composed.value.descriptor.compositionId,
        }),
      );
    }
    const review = composed.value;
    // Posted already (this answer creates nothing): the stored receipt, marked reused.
    const history = this.receipts(sessionId);
    const held = history.find((r) => r.markerId === review.markerId);
    if (held) {
      this.deps.markSent(sessionId, sentItems(review), sentReason(held));
      return ok({ ...held, reused: true });
    }
    // Nothing staged or chosen since the review posted on this head (a rerun after it landed):
    // that review is the answer; an approving review of nothing is never posted in its place.
    const standing = this.standing(history, review, patchset.head);
    if (standing) return ok({ ...standing, reused: true });

    const access = this.deps.access();
    if (!access.ok) return access;
    const repo = await forgeRepoFor(session.repoRoot, session.target, access.value.registry);
    if (!repo.ok) return repo;
    const adapter = await adapterFor(access.value, repo.value);
    if (!adapter.ok) return adapter;
    const number = session.target.number;
    try {
      const found = await adapter.value.findPosted(number, review.markerId, review.descriptor.comments);
      if (found) return await this.settleFound(adapter.value, context.value, review, found);
      const live = await adapter.value.get(number);
      if (live.state !== 'open') return err(rennetError('invalid-request', `${pullRequestLabel(session.target)} is ${live.state}: a review is posted only to an open request`));
      if (live.headSha !== patchset.head) {
        // One's own request after a round: the review read commits the forge does not have yet. (On
        // a teammate's request a head that went back is their force push: capture it again.)
        const unpushed = context.value.record.entry === 'own' ? await liveHeadBehind(session.repoRoot, live.headSha, patchset.head) : null;
        if (unpushed !== null) {
          const { headRef, baseRef } = context.value.record;
          return err(
            rennetError(
              'head-moved',
              `${pullRequestLabel(session.target)}'s head ${live.headSha.slice(0, 12)} is ${unpushed} commit${unpushed === 1 ? '' : 's'} behind ${patchset.head.slice(0, 12)}, the head this review read on ${headRef}: its commits are not pushed, so the forge has none of the lines this review is about. Push ${headRef} (Open pull request… in the Hand off view, or rennet open-pr --branch ${headRef} --base ${baseRef}: it reuses this request), then post again; nothing was posted`,
              { captured: patchset.head, live: live.headSha, unpushed: String(unpushed), branch: headRef },
            ),
          );
        }
        return err(
          rennetError(
            'head-moved',
            `${pullRequestLabel(session.target)} moved to ${live.headSha.slice(0, 12)} since it was captured at ${patchset.head.slice(0, 12)}: capture the new head, read it, and post again; nothing was posted`,
            {
              captured: patchset.head,
              live: live.headSha,
            },
          ),
        );
      }
      let posted: PostedReview;
      try {
        posted = await adapter.value.post(number, review, patchset.head, patchset.files);
      } catch (error) {
        // The mutation may have landed with its answer lost: the marker tells.
        if (error instanceof ForgeError && error.kind === 'unreachable') {
          const landed = await adapter.value.findPosted(number, review.markerId, review.descriptor.comments).catch(() => null);
          if (landed) return await this.settleFound(adapter.value, context.value, review, landed);
        }
        throw error;
      }
      return ok(this.record(sessionId, review, posted, false));
    } catch (error) {
      return forgeFailure(error, `posting the review to ${pullRequestLabel(session.target)}`);
    }
  }

  /** The marker is on the forge: record it; a GitLab approval still missing is added once, on the captured head. */
  private async settleFound(adapter: ForgeAdapter, context: Context, review: ComposedReview, found: PostedReview): Promise<Result<PublishReceipt>> {
    if (review.descriptor.event === 'APPROVE' && found.approved === false && adapter.approve) {
      const live = await adapter.get(context.session.target.number);
      if (live.headSha !== context.patchset.head) {
        return err(
          rennetError('head-moved', `the review is on the forge, but ${pullRequestLabel(context.session.target)} moved since: the approval was not added`, {
            captured: context.patchset.head,
            live: live.headSha,
          }),
        );
      }
      await adapter.approve(context.session.target.number, context.patchset.head);
    }
    return ok(this.record(context.session.id, review, found, true));
  }

  private record(sessionId: string, review: ComposedReview, posted: PostedReview, reused: boolean): PublishReceipt {
    const receipt: PublishReceipt = {
      sessionId,
      markerId: review.markerId,
      compositionId: review.descriptor.compositionId,
      provider: review.descriptor.provider,
      number: review.descriptor.target.number,
      url: posted.url,
      reviewId: posted.reviewId,
      event: posted.event,
      comments: posted.comments,
      reused,
      headSha: review.descriptor.target.headSha,
      postedAt: this.now().toISOString(),
      review,
    };
    this.deps.store.appendEvent(sessionId, PUBLISH_RECEIPT_EVENT_KIND, receipt, receipt.postedAt);
    // The receipt first: a host stopped between the two marks them on the next preview or post.
    this.deps.markSent(sessionId, sentItems(review), sentReason(receipt));
    return receipt;
  }

  private context(sessionId: string): Result<Context> {
    const session = this.deps.store.getSession(sessionId);
    if (!session) return err(rennetError('not-found', `no session ${sessionId}`));
    if (session.target.kind !== 'pull-request') {
      return err(rennetError('invalid-request', 'Post review is for a pull or merge request: this session reviews a branch or the working tree, which has no request to post to'));
    }
    if (!session.activePatchsetId) return err(rennetError('invalid-request', 'the session has no capture yet'));
    const patchset = this.deps.store.getPatchset(session.activePatchsetId);
    if (!patchset) return err(rennetError('store-failed', `the session's patchset ${session.activePatchsetId} is not in the store`));
    const record = this.deps.pullRequest(sessionId);
    if (!record) return err(rennetError('invalid-request', 'the request was never read from its forge; open its review again'));
    const projection = this.deps.projection(sessionId);
    if (!projection.ok) return projection;
    const t = session.target;
    const target: ReviewTarget = { provider: t.provider, host: t.host, owner: t.owner, repo: t.repo, number: t.number, headSha: patchset.head, baseSha: patchset.base };
    // A re-review at this head opens the body with its "Prior review:" line (host/rereview/run.ts);
    // with no earlier review of the reviewer's there is nothing to say about one.
    const found = rereviewAtHead(this.deps.store, sessionId, patchset.head);
    const prior = found && found.delta.kind !== 'none' ? found : null;
    const input: ComposeReviewInput = {
      sessionId,
      patchset,
      projection: projection.value,
      target,
      ownPullRequest: record.entry === 'own',
      grounding: groundingOf(this.deps.generation(sessionId), projection.value),
      ...(prior ? { prior: { line: prior.line, headTwins: prior.deltaPatchsetId ? [prior.deltaPatchsetId] : [] } } : {}),
    };
    return ok({ session: { ...session, target: t }, patchset, record, input });
  }
}

/** The retirement reason of a posted ask: where it went. */
export function sentReason(receipt: PublishReceipt): string {
  return `posted to ${receipt.provider === 'gitlab' ? 'GitLab' : 'GitHub'} in ${receipt.url}`;
}

/** Applies `SentItems` through the ask log's own commands (each one validated and logged as the reviewer's would be). */
export function markSentThrough(asks: { projection(sessionId: string): Result<AskProjection>; command(sessionId: string, input: unknown, now: string): Result<unknown> }, now: () => Date) {
  return (sessionId: string, items: SentItems, reason: string): void => {
    const projection = asks.projection(sessionId);
    if (!projection.ok) return;
    const at = now().toISOString();
    const staged = new Set(projection.value.asks.filter((a) => a.state === 'staged').map((a) => a.id));
    for (const askId of items.asks) if (staged.has(askId)) asks.command(sessionId, { type: 'retire', askId, reason }, at);
    for (const key of items.lineComments) if (key in projection.value.lineComments) asks.command(sessionId, { type: 'clearLineComment', key }, at);
    if (items.verdictOverride && projection.value.verdictOverride !== null) asks.command(sessionId, { type: 'setVerdictOverride', verdict: null }, at);
  };
}

/** The publisher of the host's sessions (the VS Code host and the CLI build the same one). */
export function sessionPublisher(
  store: PublishStore & Parameters<typeof currentGenerationId>[0],
  service: { pullRequestRecord(sessionId: string): PullRequestRecord | null },
  asks: { projection(sessionId: string): Result<AskProjection>; command(sessionId: string, input: unknown, now: string): Result<unknown> },
  access: () => Result<ForgeAccess>,
): Publisher {
  return new Publisher({
    store,
    markSent: markSentThrough(asks, () => new Date()),
    projection: (sessionId) => asks.projection(sessionId),
    generation: (sessionId) => {
      const id = currentGenerationId(store, sessionId);
      return id ? readGenerationSnapshot(store, id) : null;
    },
    pullRequest: (sessionId) => service.pullRequestRecord(sessionId),
    access,
  });
}
