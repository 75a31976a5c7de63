import type { Ctx } from '../ctx';
import { openTarget } from './openTarget';
import { baseItems, headItems, listBranches, pickRef, pickRepository } from './pickers';

/** "Rennet: Review Branch": pick a branch, pick a base, capture, show the board. */
export const reviewBranch = (ctx: Ctx) => async (): Promise<string | undefined> => {
  const repo = await pickRepository('Rennet: Review Branch');
  if (!repo) return undefined;
  const list = await listBranches(ctx, repo);
  if (!list) return undefined;
  const head = await pickRef(headItems(list), { title: 'Rennet: Review Branch (1/2)', placeholder: 'Branch to review' });
  if (!head) return undefined;
  const base = await pickRef(baseItems(list, head), { title: `Rennet: Review ${head} (2/2)`, placeholder: 'Base to compare with' });
  if (!base) return undefined;
  return openTarget(ctx, list.repoRoot, { kind: 'branch', head, base }, list.current);
};
