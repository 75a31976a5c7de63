import type { Target } from '../../protocol';
import type { Ctx } from '../ctx';
import { errorMessage } from '../../protocol/result';
import { openReview } from '../review';
import { notify } from '../ui';
import { ui, uiText } from '../uiText';

/**
 * Capture `target` (or reattach to its session), open or reveal its board panel, and start
 * drafting its lens boards in the background (unless its current generation already covers this
 * capture). Every refusal is shown as a message; returns the session id when a panel is shown.
 */
export async function openTarget(ctx: Ctx, repo: string, target: Target, currentBranch?: string | null): Promise<string | undefined> {
  try {
    if (target.kind === 'pull-request') ctx.forges.clearMissing();
    const result = await openReview(ctx.host, repo, target, currentBranch);
    if (!result.ok) {
      if (target.kind === 'pull-request') {
        // A forge refusal (no credentials, an unregistered host, a moved head) comes with its repair.
        void ctx.forges.showRefusal(ui`Rennet could not open the review: ${result.error.message}`, result.error);
      } else {
        void notify('error', uiText(result.error.message));
      }
      return undefined;
    }
    const { snapshot, reattached, captured } = result.value;
    ctx.log.info(`Review ${snapshot.session.id} ${reattached ? 'reattached' : 'opened'}${captured ? ', new capture' : ''} (${snapshot.session.targetKey}).`);
    ctx.panels.show(snapshot);
    void ctx.lenses.startUnlessDrafted(snapshot.session.id, snapshot.patchset?.id ?? null);
    return snapshot.session.id;
  } catch (error) {
    void notify('error', uiText(errorMessage(error)));
    return undefined;
  }
}
