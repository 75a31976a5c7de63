import type { QuickPickItem } from 'vscode';
import type { BranchList } from '../protocol';

/** Pure QuickPick item lists for the branch pickers (no runtime `vscode` import: unit-tested). */

export interface RefItem extends QuickPickItem {
  ref: string;
}

/** Branch items for "Branch to review": the current branch first, marked "current". */
export function headItems(list: BranchList): RefItem[] {
  const ordered = list.current
    ? [list.current, ...list.branches.filter((b) => b !== list.current)]
    : [...list.branches];
  return ordered.map((ref) => ({ label: ref, ref, description: ref === list.current ? 'current' : undefined }));
}

/** Items for "Base to compare with": the default base first, marked "default"; never the head. */
export function baseItems(list: BranchList, head: string | null): RefItem[] {
  const items: RefItem[] = [];
  if (list.defaultBase && list.defaultBase !== head) {
    items.push({ label: list.defaultBase, ref: list.defaultBase, description: 'default' });
  }
  for (const ref of list.branches) {
    if (ref === head || ref === list.defaultBase) continue;
    items.push({ label: ref, ref, description: ref === list.current ? 'current' : undefined });
  }
  return items;
}
