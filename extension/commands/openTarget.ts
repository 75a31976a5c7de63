import * as vscode from 'vscode';
import type { Target } from '../../protocol';
import type { Ctx } from '../ctx';
import { describe } from '../hostClient';
import { openReview } from '../review';
import { notify } from '../ui';
import { uiText } from '../uiText';

/**
 * Capture `target` (or reattach to its session), open or reveal its board panel, and start
 * drafting its lens boards in the background (unless its current generation already covers this
 * capture). Every refusal is shown as a message; returns the session id when a panel is shown.
 */
export async function openTarget(ctx: Ctx, repo: string, target: Target, currentBranch?: string | null): Promise<string | undefined> {
  try {
    const result = await openReview(ctx.host, repo, target, currentBranch);
    if (!result.ok) {
      void notify('error', uiText(result.error.message));
      return undefined;
    }
    const { snapshot, reattached, captured } = result.value;
    ctx.log.info(
      `Review ${snapshot.session.id} ${reattached ? 'reattached' : 'opened'}${captured ? ', new capture' : ''} (${snapshot.session.targetKey}).`,
    );
    ctx.panels.show(snapshot);
    void ctx.lenses.startUnlessDrafted(snapshot.session.id, snapshot.patchset?.id ?? null);
    return snapshot.session.id;
  } catch (error) {
    void notify('error', uiText(describe(error)));
    return undefined;
  }
}
