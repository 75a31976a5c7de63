import * as vscode from 'vscode';
import type { Ctx } from '../ctx';
import { openTarget } from './openTarget';
import { baseItems, listBranches, pickRef, pickRepository } from './pickers';

/** "Rennet: Review Working Tree": the checked-out branch with its uncommitted edits, against a base. */
export const reviewWorkingTree = (ctx: Ctx) => async (): Promise<string | undefined> => {
  const repo = await pickRepository('Rennet: Review Working Tree');
  if (!repo) return undefined;
  const list = await listBranches(ctx, repo);
  if (!list) return undefined;
  if (list.current === null) {
    void vscode.window.showErrorMessage('Review Working Tree needs a checked-out branch; HEAD is detached.');
    return undefined;
  }
  const base = await pickRef(baseItems(list, list.current), {
    title: `Rennet: Review the working tree of ${list.current}`,
    placeholder: 'Base to compare with',
  });
  if (!base) return undefined;
  return openTarget(ctx, list.repoRoot, { kind: 'working-tree', base }, list.current);
};
