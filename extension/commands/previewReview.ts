import * as vscode from 'vscode';
import type { Ctx } from '../ctx';
import { requestLabel } from '../handOffPlan';
import { withProgress } from '../ui';
import { ui, uiJoin } from '../uiText';
import { requestTarget, sessionFor } from './activeSession';

/**
 * "Rennet: Preview Review" (`rennet.previewReview [sessionId]`): read the request's live head, then
 * open (or reveal) the preview of the exact review that would post, with its one Post button. A
 * moved head is stated in the preview (and in Hand off) with Capture New Head.
 */
export const previewReview =
  (ctx: Ctx) =>
  async (sessionArg?: unknown): Promise<string | undefined> => {
    const snapshot = await sessionFor(ctx, sessionArg, 'Preview Review');
    if (!snapshot || !requestTarget(snapshot, 'Preview Review')) return undefined;
    const sessionId = snapshot.session.id;
    // Every exit reads the live head first; the preview shows the answer (or why it could not be read).
    await withProgress({ location: vscode.ProgressLocation.Window, title: ui`Rennet: reading the request's head…` }, () => ctx.exits.freshness(sessionId));
    const label = requestLabel(snapshot);
    ctx.previews.show(sessionId, label ? uiJoin([ui`Post review`, label], ' · ') : ui`Post review`);
    return sessionId;
  };
