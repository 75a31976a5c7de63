import type { Ctx } from '../ctx';
import { openTarget } from './openTarget';
import { baseItems, headItems, listBranches, pickRef, pickRepository } from './pickers';
import { ui } from '../uiText';

/** "Rennet: Review Branch": pick a branch, pick a base, capture, show the board. */
export const reviewBranch = (ctx: Ctx) => async (): Promise<string | undefined> => {
  const repo = await pickRepository(ui`Rennet: Review Branch`);
  if (!repo) return undefined;
  const list = await listBranches(ctx, repo);
  if (!list) return undefined;
  const head = await pickRef(headItems(list), { title: ui`Rennet: Review Branch (1/2)`, placeholder: ui`Branch to review` });
  if (!head) return undefined;
  const base = await pickRef(baseItems(list, head), { title: ui`Rennet: Review ${head} (2/2)`, placeholder: ui`Base to compare with` });
  if (!base) return undefined;
  return openTarget(ctx, list.repoRoot, { kind: 'branch', head, base }, list.current);
};
