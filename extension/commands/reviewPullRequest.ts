import * as vscode from 'vscode';
import { errorMessage, type Result } from '../../protocol/result';
import { PullRequestList, PullRequestResolve, type PullRequestListResult } from '../../protocol/rpc';
import type { PullRequestTarget } from '../../protocol/session';
import type { Ctx } from '../ctx';
import { pullRequestPicks, pullRequestPlaceholder, refusalMessage, type PullRequestPick } from '../forgePlan';
import { inputBox, notify, quickPick, withProgress } from '../ui';
import { ui, uiText } from '../uiText';
import { openTarget } from './openTarget';
import { pickRepository } from './pickers';

const TITLE = ui`Rennet: Review Pull Request`;

/**
 * "Rennet: Review Pull Request": the open requests of the workspace's forge repository (its push
 * remote) in a QuickPick, or a pasted number or URL; then the review opens as Review Branch's does
 * (capture with progress, the board panel, the lens boards drafted). The host fetches the request's
 * head and base into hidden refs: the checkout, index and branches are never touched.
 */
export const reviewPullRequest = (ctx: Ctx) => async (): Promise<string | undefined> => {
  const repo = await pickRepository(TITLE);
  if (!repo) return undefined;
  const list = await listOpen(ctx, repo);
  if (!list) return undefined;
  const picked = await pickRequest(list);
  if (!picked) return undefined;
  const target = picked.pick.pick === 'request' ? picked.pick.target : await resolvePasted(ctx, repo, picked.typed);
  if (!target) return undefined;
  return openTarget(ctx, repo, target);
};

/** PullRequestList with progress; a refusal is said with its repair and answers undefined. */
async function listOpen(ctx: Ctx, repo: string): Promise<PullRequestListResult | undefined> {
  const list = () => withProgress({ location: vscode.ProgressLocation.Window, title: ui`Rennet: reading the open requests…` }, () => ctx.host.request(PullRequestList, { repo }));
  try {
    ctx.forges.clearMissing();
    let result: Result<PullRequestListResult> = await list();
    if (!result.ok && result.error.code === 'forge-unauthorized') {
      const missing = ctx.forges.missingToken();
      // The host asks the editor for a GitHub token silently: a background call never prompts.
      // This command is the moment the reviewer asked for forge access, so when VS Code holds no
      // GitHub sign-in Rennet may use (none, or Rennet not allowed yet), ask for one here, once,
      // and list again. A token from GITHUB_TOKEN or gh would have answered already: no prompt then.
      if (missing?.provider === 'github' && (await ctx.forges.signInToGitHub(missing.host))) result = await list();
    }
    if (!result.ok) {
      void ctx.forges.showRefusal(refusalMessage('list the open requests', result.error), result.error);
      return undefined;
    }
    return result.value;
  } catch (error) {
    void notify('error', uiText(errorMessage(error)));
    return undefined;
  }
}

/** The QuickPick of open requests; the paste row carries what was typed into the filter. */
function pickRequest(list: PullRequestListResult): Promise<{ pick: PullRequestPick; typed: string } | undefined> {
  return new Promise((resolve) => {
    const picker = quickPick<PullRequestPick>({ title: TITLE, placeholder: pullRequestPlaceholder(list), matchOnDescription: true });
    picker.matchOnDetail = true;
    picker.items = pullRequestPicks(list);
    let settled = false;
    const finish = (value: { pick: PullRequestPick; typed: string } | undefined) => {
      if (settled) return;
      settled = true;
      resolve(value);
      picker.dispose();
    };
    picker.onDidAccept(() => {
      const pick = picker.selectedItems[0] ?? picker.activeItems[0];
      finish(pick ? { pick, typed: picker.value.trim() } : undefined);
    });
    picker.onDidHide(() => finish(undefined));
    picker.show();
  });
}

/** A pasted number or URL, resolved by the host against the workspace's forge repository. */
async function resolvePasted(ctx: Ctx, repo: string, typed: string): Promise<PullRequestTarget | undefined> {
  const input = await inputBox({
    title: TITLE,
    prompt: ui`A request number (12, #12, !7) or its URL, of this workspace's forge repository`,
    placeHolder: ui`#12 or https://github.com/owner/repo/pull/12`,
    value: typed,
    ignoreFocusOut: true,
    validateInput: (value) => (value.trim().length === 0 ? ui`Paste a number or the request's URL.` : undefined),
  });
  if (input === undefined) return undefined;
  try {
    const result = await ctx.host.request(PullRequestResolve, { repo, input: input.trim() });
    if (!result.ok) {
      void ctx.forges.showRefusal(refusalMessage(`find the request ${input.trim()}`, result.error), result.error);
      return undefined;
    }
    return result.value;
  } catch (error) {
    void notify('error', uiText(errorMessage(error)));
    return undefined;
  }
}
