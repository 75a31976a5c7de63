import './zodConfig';
import * as vscode from 'vscode';
import type { RennetApi } from './api';
import { BlobDocumentProvider, BLOB_SCHEME } from './blobDocuments';
import { BOARD_VIEW_TYPE, BoardPanels } from './boardPanel';
import { restartHost } from './commands/restartHost';
import { reviewBranch } from './commands/reviewBranch';
import { reviewWorkingTree } from './commands/reviewWorkingTree';
import { showBoard } from './commands/showBoard';
import type { CommandFactory, Ctx } from './ctx';
import { HostClient } from './hostClient';
import { openReview } from './review';

let host: HostClient | undefined;

/**
 * Registers commands, the panel serializer and the blob documents. Starts nothing: the host is
 * started by the first Rennet command or by a restored panel.
 */
export function activate(context: vscode.ExtensionContext): RennetApi {
  const log = vscode.window.createOutputChannel('Rennet', { log: true });
  context.subscriptions.push(log);

  host = new HostClient(context, log);
  const panels = new BoardPanels(context, host, log);
  const ctx: Ctx = { extension: context, host, panels, log };
  context.subscriptions.push(panels);

  const commands: Record<string, CommandFactory> = {
    'rennet.reviewBranch': reviewBranch,
    'rennet.reviewWorkingTree': reviewWorkingTree,
    'rennet.showBoard': showBoard,
    'rennet.restartHost': restartHost,
  };
  for (const [name, factory] of Object.entries(commands)) {
    context.subscriptions.push(vscode.commands.registerCommand(name, factory(ctx)));
  }

  context.subscriptions.push(
    vscode.window.registerWebviewPanelSerializer(BOARD_VIEW_TYPE, panels),
    vscode.workspace.registerTextDocumentContentProvider(BLOB_SCHEME, new BlobDocumentProvider(host)),
  );

  const client = host;
  return {
    hostInfo: () => client.start(),
    hostStatus: () => client.status,
    openSessions: () => panels.openSessionIds(),
    async openReview(repo, target) {
      const result = await openReview(client, repo, target);
      if (!result.ok) return result;
      const { snapshot, reattached, captured } = result.value;
      panels.show(snapshot);
      return { ok: true, value: { sessionId: snapshot.session.id, reattached, captured } };
    },
    restartHost: () => client.restart(),
  };
}

export async function deactivate(): Promise<void> {
  const running = host;
  host = undefined;
  await running?.dispose();
}
