import type { Ctx } from '../ctx';
import { notify } from '../ui';
import { ui } from '../uiText';

/**
 * "Rennet: Draft Boards": draft the lens boards of the active panel's review again (a new
 * generation; the previous one is kept, frozen, for the generation switcher). Takes a session id
 * as its argument too. Answers the new generation's id, or undefined (refusals are shown).
 */
export const draftBoards =
  (ctx: Ctx) =>
  async (sessionIdArg?: unknown): Promise<string | undefined> => {
    const sessionId = typeof sessionIdArg === 'string' && sessionIdArg ? sessionIdArg : ctx.panels.activeSessionId();
    if (!sessionId) {
      void notify('info', ui`Rennet: open a review first (“Rennet: Review Branch” or “Rennet: Show Board”), then draft its boards.`);
      return undefined;
    }
    const result = await ctx.panels.runLenses(sessionId);
    return result.ok ? result.value.generationId : undefined;
  };
