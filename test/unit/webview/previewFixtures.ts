/**
 * Review previews as the host composes them: a real capture (test/unit/exits/fixtures.ts), asks
 * folded by the host's fold, composed by host/exits/compose.ts, wrapped as `rennet/exits/previewReview`
 * answers it. Every fixture passes the ReviewPreview and PreviewSnapshot schemas.
 */
import assert from 'node:assert/strict';
import { composeReview } from '../../../host/exits/compose';
import { PreviewSnapshot, ReviewPreview, type PublishReceipt } from '../../../protocol';
import type { Patchset } from '../../../protocol/patchset';
import type { TestRepo } from '../../fixtures/gitRepo';
import { Asks, captureFixture, input, line, SESSION, target } from '../exits/fixtures';
import { PAYLOADS } from './hostileFixtures';

export interface PreviewWorld {
  repo: TestRepo;
  patchset: Patchset;
  /** Composes a preview over `asks` (receipt and history as given). */
  preview(asks: Asks, over?: { ownPullRequest?: boolean; receipt?: PublishReceipt | null; history?: PublishReceipt[] }): ReviewPreview;
  /** The asks most tests use: one line comment, a range, a general note, a board quote, a line off the diff. */
  standardAsks(): Asks;
  receipt(preview: ReviewPreview, over?: Partial<PublishReceipt>): PublishReceipt;
}

export async function previewWorld(): Promise<PreviewWorld> {
  const { repo, patchset } = await captureFixture();
  const world: PreviewWorld = {
    repo,
    patchset,
    preview(asks, over = {}) {
      const composed = composeReview(input(patchset, asks.projection(), { ownPullRequest: over.ownPullRequest ?? false }));
      return ReviewPreview.parse({
        sessionId: SESSION,
        target: target(patchset),
        label: 'Pull Request #42',
        webUrl: 'https://github.com/acme/widgets/pull/42',
        entry: over.ownPullRequest ? 'own' : 'teammate',
        composed: composed.ok ? { ok: true, value: composed.value } : { ok: false, error: composed.error },
        receipt: over.receipt ?? null,
        history: over.history ?? (over.receipt ? [over.receipt] : []),
      });
    },
    standardAsks() {
      const asks = new Asks();
      asks.ask(line(patchset, 'src/a.ts', 'head', 10), 'Rename **this** variable', 'request-change');
      asks.ask(line(patchset, 'wide.ts', 'head', 9, 11), 'Split this block', 'comment');
      asks.ask({ kind: 'none' }, 'Overall the retry logic reads well.', 'comment');
      asks.ask({ kind: 'quote', generationId: 'g-one', lens: 'design', elementId: 'e-1', quote: 'The client owns retries' }, 'Why the client?', 'question');
      asks.ask(line(patchset, 'src/a.ts', 'head', 1), 'Header comment is stale', 'comment');
      return asks;
    },
    receipt(preview, over = {}) {
      assert.ok(preview.composed.ok);
      const review = preview.composed.value;
      return {
        sessionId: SESSION,
        markerId: review.markerId,
        compositionId: review.descriptor.compositionId,
        provider: 'github',
        number: 42,
        url: 'https://github.com/acme/widgets/pull/42#pullrequestreview-77',
        reviewId: 77,
        event: review.descriptor.event,
        comments: review.descriptor.comments.length,
        reused: false,
        headSha: review.descriptor.target.headSha,
        postedAt: '2026-01-02T10:00:00.000Z',
        review,
        ...over,
      };
    },
  };
  return world;
}

/** A snapshot the extension would send for a preview. */
export function previewSnapshot(preview: ReviewPreview | null, over: Partial<PreviewSnapshot> = {}): PreviewSnapshot {
  return PreviewSnapshot.parse({
    sessionId: SESSION,
    preview,
    error: null,
    freshness: preview ? { capturedHeadSha: preview.target.headSha, liveHeadSha: preview.target.headSha, moved: false, state: 'open' } : null,
    freshnessError: null,
    posting: false,
    refusal: null,
    ...over,
  });
}

/** Asks whose text is every hostile payload (markup, handlers, script URLs), on lines and in the body. */
export function hostileAsks(world: PreviewWorld): Asks {
  const asks = new Asks();
  PAYLOADS.forEach((payload, i) => {
    if (i % 2 === 0) asks.ask(line(world.patchset, 'src/a.ts', 'head', 10), payload, 'comment');
    else asks.ask({ kind: 'none' }, payload, 'question');
  });
  return asks;
}
