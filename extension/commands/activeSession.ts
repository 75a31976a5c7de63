import { SessionGet } from '../../protocol/rpc';
import type { PullRequestTarget, SessionSnapshot } from '../../protocol/session';
import type { Ctx } from '../ctx';
import { errorMessage } from '../../protocol/result';
import { notify } from '../ui';
import { ui, uiText } from '../uiText';

/**
 * The session a command acts on: the one named by its argument (a Hand off row, the preview), else
 * the active review (the focused, else last active, board). Undefined after saying why there is none.
 */
export async function sessionFor(ctx: Ctx, arg: unknown, commandName: string): Promise<SessionSnapshot | undefined> {
  const sessionId = typeof arg === 'string' && arg.length > 0 ? arg : ctx.review.current?.sessionId;
  if (!sessionId) {
    void notify('info', ui`${commandName} acts on the active review: open a review's board first (Rennet: Review Pull Request, or Show Board).`);
    return undefined;
  }
  const open = ctx.review.current?.sessionId === sessionId ? ctx.review.current.session : ctx.panels.get(sessionId)?.sessionSnapshot;
  if (open) return open;
  try {
    const read = await ctx.host.request(SessionGet, { sessionId });
    if (read.ok) return read.value;
    void notify('error', uiText(read.error.message));
  } catch (error) {
    void notify('error', uiText(errorMessage(error)));
  }
  return undefined;
}

/** The session's pull-request target, or undefined after saying the command is for requests only. */
export function requestTarget(snapshot: SessionSnapshot, commandName: string): PullRequestTarget | undefined {
  const target = snapshot.session.target;
  if (target.kind === 'pull-request') return target;
  void notify(
    'info',
    ui`${commandName} is for a pull or merge request; this review is of ${target.kind === 'branch' ? 'a branch' : 'the working tree'}, which has no request on a forge. Review the request with “Rennet: Review Pull Request”.`,
  );
  return undefined;
}
