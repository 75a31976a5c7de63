import * as vscode from 'vscode';
import type { BranchList } from '../../protocol';
import { RepoListBranches } from '../../protocol/rpc';
import type { RefItem } from '../branchItems';
import type { Ctx } from '../ctx';
import { describe } from '../hostClient';

export { baseItems, headItems } from '../branchItems';

/**
 * The repository to review: the only workspace folder, or a pick among several. Undefined when
 * there is none (after a clear error) or the user pressed Esc.
 */
export async function pickRepository(title: string): Promise<string | undefined> {
  const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file');
  if (folders.length === 0) {
    void vscode.window.showErrorMessage(
      'Rennet needs an open folder: open the git repository you want to review (File › Open Folder…), then run the command again.',
    );
    return undefined;
  }
  if (folders.length === 1) return folders[0]!.uri.fsPath;
  const pick = await vscode.window.showQuickPick(
    folders.map((folder) => ({ label: folder.name, description: folder.uri.fsPath, folder })),
    { title, placeHolder: 'Repository to review', matchOnDescription: true },
  );
  return pick?.folder.uri.fsPath;
}

/** RepoListBranches; shows the host's refusal (or a transport failure) and returns undefined. */
export async function listBranches(ctx: Ctx, repo: string): Promise<BranchList | undefined> {
  try {
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: 'Rennet: reading branches…' },
      () => ctx.host.request(RepoListBranches, { repo }),
    );
    if (!result.ok) {
      void vscode.window.showErrorMessage(result.error.message);
      return undefined;
    }
    return result.value;
  } catch (error) {
    void vscode.window.showErrorMessage(describe(error));
    return undefined;
  }
}

/**
 * A QuickPick over refs that also accepts a typed ref that is not in the list (a tag, a remote
 * branch such as origin/main, a commit id). Resolves undefined on Esc.
 */
export function pickRef(items: RefItem[], options: { title: string; placeholder: string }): Promise<string | undefined> {
  return new Promise((resolve) => {
    const quickPick = vscode.window.createQuickPick<RefItem>();
    quickPick.title = options.title;
    quickPick.placeholder = options.placeholder;
    quickPick.matchOnDescription = true;
    quickPick.items = items;
    let settled = false;
    const finish = (value: string | undefined) => {
      if (settled) return;
      settled = true;
      resolve(value);
      quickPick.dispose();
    };
    quickPick.onDidChangeValue((value) => {
      const typed = value.trim();
      const known = items.some((item) => item.ref === typed);
      quickPick.items =
        typed && !known && !/\s/.test(typed)
          ? [...items, { label: typed, ref: typed, description: 'use this ref', alwaysShow: true }]
          : items;
    });
    quickPick.onDidAccept(() => finish(quickPick.selectedItems[0]?.ref));
    quickPick.onDidHide(() => finish(undefined));
    quickPick.show();
  });
}
