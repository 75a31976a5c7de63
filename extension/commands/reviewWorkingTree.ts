import type { Ctx } from '../ctx';
import { openTarget } from './openTarget';
import { baseItems, listBranches, pickRef, pickRepository } from './pickers';
import { notify } from '../ui';
import { ui } from '../uiText';

/** "Rennet: Review Working Tree": the checked-out branch with its uncommitted edits, against a base. */
export const reviewWorkingTree = (ctx: Ctx) => async (): Promise<string | undefined> => {
  const repo = await pickRepository(ui`Rennet: Review Working Tree`);
  if (!repo) return undefined;
  const list = await listBranches(ctx, repo);
  if (!list) return undefined;
  if (list.current === null) {
    void notify('error', ui`Review Working Tree needs a checked-out branch; HEAD is detached.`);
    return undefined;
  }
  const base = await pickRef(baseItems(list, list.current), {
    title: ui`Rennet: Review the working tree of ${list.current}`,
    placeholder: ui`Base to compare with`,
  });
  if (!base) return undefined;
  return openTarget(ctx, list.repoRoot, { kind: 'working-tree', base }, list.current);
};
