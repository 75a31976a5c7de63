import type { Ctx } from '../ctx';
import { notify } from '../ui';
import { ui } from '../uiText';

/**
 * "Rennet: Re-review Since Last Review": the active pull-request review measured against your
 * earlier review of it — the delta since, each earlier item resolved (with the changed lines that
 * show it) or open — drafted as a new generation. Takes a session id as its argument too.
 */
export const rereviewSinceLastReview =
  (ctx: Ctx) =>
  async (sessionIdArg?: unknown): Promise<string | null | undefined> => {
    const sessionId = typeof sessionIdArg === 'string' && sessionIdArg ? sessionIdArg : ctx.panels.activeSessionId();
    if (!sessionId) {
      void notify('info', ui`Rennet: open the review of a pull or merge request first (“Rennet: Review Pull Request”), then re-review it since your last review.`);
      return undefined;
    }
    const result = await ctx.lenses.rereview(sessionId);
    return result.ok ? result.value.generationId : undefined;
  };
