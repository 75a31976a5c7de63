import * as vscode from 'vscode';
import { pullRequestLabel } from '../../protocol/forge';
import { ExitsOpenPullRequest, ExitsPreviewPullRequest, type OpenPullRequestResult } from '../../protocol/rpc';
import type { Ctx } from '../ctx';
import { isForgeLink, openPullRequestDetail, refusalMessage, unlinkableUrl } from '../forgePlan';
import { errorMessage } from '../../protocol/result';
import { confirmModal, inputBox, notify, withProgress } from '../ui';
import { ui } from '../uiText';
import { readHarnessConfig } from '../lenses';
import { pickRepository } from './pickers';

const TITLE = ui`Rennet: Open Pull Request`;

/** A model pass may take one harness turn; the host gives it this long, and the window a little more. */
const POLISH_REQUEST_TIMEOUT_MS = 6 * 60_000;

/**
 * "Rennet: Open Pull Request" (own branch): the host drafts the title and description from the
 * branch's commits and boards and resolves the destination from its push URL; a modal shows
 * exactly what is pushed and submitted, with "Edit Title…" and "Edit Description…" (the edits ride
 * the next preview); Open pushes `refs/heads/<b>:refs/heads/<b>` and opens or reuses the request,
 * refused by the host if anything drifted since the preview.
 */
export const openPullRequestCommand =
  (ctx: Ctx) =>
  async (arg?: unknown): Promise<OpenPullRequestResult | undefined> => {
    // From the Hand off view: the reviewed branch and base; from the palette: the current branch.
    const given = arg !== null && typeof arg === 'object' ? (arg as { repo?: unknown; branch?: unknown; base?: unknown }) : {};
    const named = (v: unknown) => (typeof v === 'string' && v.length > 0 ? v : undefined);
    const repo = named(given.repo) ?? (await pickRepository(TITLE));
    if (!repo) return undefined;
    const branch = named(given.branch);
    const base = named(given.base);
    const edits: { title?: string; body?: string } = {};
    try {
      // The Design lens's harness polishes the draft; the same settings ride Open, so it reuses that text.
      const harness = await readHarnessConfig(ctx.extension.secrets);
      for (;;) {
        const preview = await withProgress({ location: vscode.ProgressLocation.Notification, title: ui`Rennet: drafting the pull request's title and description…` }, () =>
          ctx.host.request(ExitsPreviewPullRequest, { repo, ...(branch ? { branch } : {}), ...(base ? { base } : {}), ...edits, harness }, POLISH_REQUEST_TIMEOUT_MS),
        );
        if (!preview.ok) {
          void ctx.forges.showRefusal(refusalMessage('draft the pull request', preview.error), preview.error);
          return undefined;
        }
        const p = preview.value;
        const open = p.existing
          ? ui`Push and Reuse ${pullRequestLabel({ provider: p.provider, number: p.existing.number })}`
          : p.provider === 'gitlab'
            ? ui`Push and Open Merge Request`
            : ui`Push and Open Pull Request`;
        const editTitle = ui`Edit Title…`;
        const editBody = ui`Edit Description…`;
        const chosen = await confirmModal('info', ui`${p.branch} → ${p.base}: ${p.title}`, openPullRequestDetail(p), open, editTitle, editBody);
        if (chosen === undefined) return undefined;
        if (chosen === editTitle) {
          const title = await inputBox({
            title: TITLE,
            prompt: ui`The request's title.`,
            value: p.title,
            ignoreFocusOut: true,
            validateInput: (v) => (v.trim() ? undefined : ui`A title is not empty.`),
          });
          if (title !== undefined) edits.title = title.trim();
          continue;
        }
        if (chosen === editBody) {
          const body = await inputBox({ title: TITLE, prompt: ui`The request's description (⏎ in the text stands for a line break).`, value: p.body.replace(/\n/g, '⏎'), ignoreFocusOut: true });
          if (body !== undefined) edits.body = body.replace(/⏎/g, '\n');
          continue;
        }
        const opened = await withProgress({ location: vscode.ProgressLocation.Notification, title: ui`Rennet: pushing ${p.branch} and opening the request…` }, () =>
          ctx.host.request(ExitsOpenPullRequest, { repo, branch: p.branch, base: p.base, ...edits, harness, compositionId: p.compositionId }, POLISH_REQUEST_TIMEOUT_MS),
        );
        if (!opened.ok) {
          if (opened.error.code === 'stale-composition') {
            void notify('warning', ui`Rennet: the request changed since the preview (${opened.error.message}); here is the new one.`);
            continue;
          }
          void ctx.forges.showRefusal(refusalMessage('open the pull request', opened.error), opened.error);
          return undefined;
        }
        const o = opened.value;
        const view = ui`Open on ${p.provider === 'gitlab' ? 'GitLab' : 'GitHub'}`;
        void notify('info', ui`Rennet: ${o.reused ? 'reused' : 'opened'} ${pullRequestLabel({ provider: o.provider, number: o.number })}.`, view).then((a) => {
          if (a !== view) return;
          // The URL is the forge's answer: opened only as a page of the request's own forge.
          const forgeHost = p.destination.host;
          if (!isForgeLink(o.url, forgeHost)) {
            ctx.log.warn(`Open Pull Request: the forge answered a request link that is not an http(s) page of ${forgeHost}; it was not opened: ${unlinkableUrl(o.url)}`);
            void notify('warning', ui`Rennet did not open ${o.url}: it is not a page of ${forgeHost}.`);
            return;
          }
          void vscode.env.openExternal(vscode.Uri.parse(o.url, true));
        });
        return o;
      }
    } catch (error) {
      void notify('error', ui`Rennet could not open the pull request: ${errorMessage(error)}`);
      return undefined;
    }
  };
