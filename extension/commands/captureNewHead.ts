import type { Ctx } from '../ctx';
import { openTarget } from './openTarget';
import { requestTarget, sessionFor } from './activeSession';

/**
 * "Rennet: Capture New Head" (`rennet.captureNewHead [sessionId]`): open the review of the same
 * pull-request target again; the host fetches the request's head as it is now and captures it as
 * the session's next patchset (asks on the earlier capture keep their anchors and say so). The
 * request's head is read again after.
 */
export const captureNewHead =
  (ctx: Ctx) =>
  async (sessionArg?: unknown): Promise<string | undefined> => {
    const snapshot = await sessionFor(ctx, sessionArg, 'Capture New Head');
    const target = snapshot && requestTarget(snapshot, 'Capture New Head');
    if (!snapshot || !target) return undefined;
    const opened = await openTarget(ctx, snapshot.session.repoRoot, target);
    if (opened) {
      // The new capture is what the review posts on now: compose it again and read the head again.
      void ctx.exits.preview(opened);
      void ctx.exits.freshness(opened);
    }
    return opened;
  };
