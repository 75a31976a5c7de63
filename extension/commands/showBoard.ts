import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Session } from '../../protocol';
import { SessionGet, SessionList } from '../../protocol/rpc';
import type { Ctx } from '../ctx';
import { errorMessage } from '../../protocol/result';
import { targetLabel } from '../titles';
import { notify, pickOne } from '../ui';
import { ui, uiText, type UiPickItem } from '../uiText';

type SessionItem = UiPickItem & {
  session: Session;
};

/** "Rennet: Show Board": pick one of the stored reviews and show its panel. */
export const showBoard =
  (ctx: Ctx) =>
  async (sessionId?: unknown): Promise<string | undefined> => {
    try {
      let id = typeof sessionId === 'string' ? sessionId : undefined;
      if (!id) {
        const sessions = await ctx.host.request(SessionList, {});
        if (sessions.length === 0) {
          const choice = await notify('info', ui`No Rennet reviews yet. Start one with “Rennet: Review Branch”.`, ui`Review Branch`);
          if (choice) void vscode.commands.executeCommand('rennet.reviewBranch');
          return undefined;
        }
        const open = new Set(ctx.panels.openSessionIds());
        const items: SessionItem[] = sessions.map((session) => ({
          label: targetLabel(session.target),
          description: open.has(session.id) ? ui`${path.basename(session.repoRoot)} · open` : ui`${path.basename(session.repoRoot)}`,
          detail: ui`${session.repoRoot} · updated ${session.updatedAt} · ${session.patchsetIds.length} capture(s)`,
          session,
        }));
        const pick = await pickOne(items, {
          title: ui`Rennet: Show Board`,
          placeHolder: ui`Review to show`,
          matchOnDescription: true,
          matchOnDetail: true,
        });
        if (!pick) return undefined;
        id = pick.session.id;
      }
      const existing = ctx.panels.get(id);
      if (existing) {
        existing.reveal();
        return id;
      }
      const result = await ctx.host.request(SessionGet, { sessionId: id });
      if (!result.ok) {
        void notify('error', uiText(result.error.message));
        return undefined;
      }
      ctx.panels.show(result.value);
      return id;
    } catch (error) {
      void notify('error', uiText(errorMessage(error)));
      return undefined;
    }
  };
