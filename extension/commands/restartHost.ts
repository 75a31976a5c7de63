import * as vscode from 'vscode';
import type { HostInfo } from '../../protocol/rpc';
import type { Ctx } from '../ctx';
import { errorMessage } from '../../protocol/result';
import { notify, withProgress } from '../ui';
import { ui } from '../uiText';

/** "Rennet: Restart Host": stop the host (if any) and start a fresh one; panels re-read their sessions. */
export const restartHost = (ctx: Ctx) => async (): Promise<HostInfo | undefined> => {
  try {
    const info = await withProgress({ location: vscode.ProgressLocation.Notification, title: ui`Rennet: restarting the host…` }, () => ctx.host.restart());
    void notify('info', ui`Rennet host restarted (pid ${info.pid}); ${info.sessions} session(s) in the store.`);
    return info;
  } catch (error) {
    // HostClient already offered "Restart Rennet Host" with the reason; log the detail.
    ctx.log.error(`Restart failed: ${errorMessage(error)}`);
    return undefined;
  }
};
