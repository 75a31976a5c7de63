import * as vscode from 'vscode';
import type { BranchList } from '../../protocol';
import { RepoListBranches } from '../../protocol/rpc';
import type { RefItem } from '../branchItems';
import type { Ctx } from '../ctx';
import { errorMessage } from '../../protocol/result';
import { notify, pickOne, quickPick, withProgress } from '../ui';
import { ui, uiText, type UiText } from '../uiText';

export { baseItems, headItems } from '../branchItems';

/**
 * The repository to review: the only workspace folder, or a pick among several. Undefined when
 * there is none (after a clear error) or the user pressed Esc.
 */
export async function pickRepository(title: UiText): Promise<string | undefined> {
  const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file');
  if (folders.length === 0) {
    void notify('error', ui`Rennet needs an open folder: open the git repository you want to review (File › Open Folder…), then run the command again.`);
    return undefined;
  }
  if (folders.length === 1) return folders[0]!.uri.fsPath;
  const pick = await pickOne(
    folders.map((folder) => ({ label: uiText(folder.name), description: uiText(folder.uri.fsPath), folder })),
    { title, placeHolder: ui`Repository to review`, matchOnDescription: true },
  );
  return pick?.folder.uri.fsPath;
}

/** RepoListBranches; shows the host's refusal (or a transport failure) and returns undefined. */
export async function listBranches(ctx: Ctx, repo: string): Promise<BranchList | undefined> {
  try {
    const result = await withProgress({ location: vscode.ProgressLocation.Window, title: ui`Rennet: reading branches…` }, () => ctx.host.request(RepoListBranches, { repo }));
    if (!result.ok) {
      void notify('error', uiText(result.error.message));
      return undefined;
    }
    return result.value;
  } catch (error) {
    void notify('error', uiText(errorMessage(error)));
    return undefined;
  }
}

/**
 * A QuickPick over refs that also accepts a typed ref that is not in the list (a tag, a remote
 * branch such as origin/main, a commit id). Resolves undefined on Esc.
 */
export function pickRef(items: RefItem[], options: { title: UiText; placeholder: UiText }): Promise<string | undefined> {
  return new Promise((resolve) => {
    const picker = quickPick<RefItem>({ title: options.title, placeholder: options.placeholder, matchOnDescription: true });
    picker.items = items;
    let settled = false;
    const finish = (value: string | undefined) => {
      if (settled) return;
      settled = true;
      resolve(value);
      picker.dispose();
    };
    picker.onDidChangeValue((value) => {
      const typed = value.trim();
      const known = items.some((item) => item.ref === typed);
      picker.items = typed && !known && !/\s/.test(typed) ? [...items, { label: uiText(typed), ref: typed, description: ui`use this ref`, alwaysShow: true }] : items;
    });
    picker.onDidAccept(() => finish(picker.selectedItems[0]?.ref));
    picker.onDidHide(() => finish(undefined));
    picker.show();
  });
}
