import type { BranchList } from '../protocol';
import { ui, uiText, type UiPickItem } from './uiText';

/** Pure QuickPick item lists for the branch pickers (no runtime `vscode` import: unit-tested). */

/** A ref row: the label is the ref as UI text (a branch may be named `$(terminal)`); `ref` is the ref itself. */
export type RefItem = UiPickItem & {
  ref: string;
};

/** Branch items for "Branch to review": the current branch first, marked "current". */
export function headItems(list: BranchList): RefItem[] {
  const ordered = list.current ? [list.current, ...list.branches.filter((b) => b !== list.current)] : [...list.branches];
  return ordered.map((ref) => ({ label: uiText(ref), ref, ...(ref === list.current ? { description: ui`current` } : {}) }));
}

/** Items for "Base to compare with": the default base first, marked "default"; never the head. */
export function baseItems(list: BranchList, head: string | null): RefItem[] {
  const items: RefItem[] = [];
  if (list.defaultBase && list.defaultBase !== head) {
    items.push({ label: uiText(list.defaultBase), ref: list.defaultBase, description: ui`default` });
  }
  for (const ref of list.branches) {
    if (ref === head || ref === list.defaultBase) continue;
    items.push({ label: uiText(ref), ref, ...(ref === list.current ? { description: ui`current` } : {}) });
  }
  return items;
}
