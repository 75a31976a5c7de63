import { z } from 'zod';
import { Lens } from '../../protocol/board';
import type { Ctx } from '../ctx';
import { showBoard } from './showBoard';
import { notify } from '../ui';
import { ui } from '../uiText';

/**
 * What `rennet.revealElement` takes: the element of a generation to bring into view. Any object
 * carrying these four fields is accepted (extra fields are ignored), so a comment or a hover link
 * can pass its own record.
 */
export const RevealElementArgs = z.object({
  sessionId: z.string().min(1),
  generationId: z.string().min(1),
  lens: Lens,
  elementId: z.string().min(1),
});

/**
 * "Show on Board" (from a gutter mark's hover, or a finding's comment): reveal the element on its
 * session's board, opening the board the way "Rennet: Show Board" does when none is open.
 * Answers whether the board was asked to reveal it.
 */
export const revealElement =
  (ctx: Ctx) =>
  async (raw?: unknown): Promise<boolean> => {
    const parsed = RevealElementArgs.safeParse(raw);
    if (!parsed.success) {
      ctx.log.warn(`rennet.revealElement ignored arguments that do not name a board element: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
      void notify('warning', ui`Rennet cannot show this on the board: the link does not name a board element.`);
      return false;
    }
    const { sessionId, generationId, lens, elementId } = parsed.data;
    // The board holds the reveal until its webview shows that generation (a new or hidden board
    // is not listening yet), so opening it first is enough.
    if (!ctx.panels.get(sessionId) && (await showBoard(ctx)(sessionId)) !== sessionId) return false; // Show Board said why
    const panel = ctx.panels.get(sessionId);
    if (!panel) return false;
    await panel.revealElement(generationId, lens, elementId);
    return true;
  };
