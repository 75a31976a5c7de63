import * as vscode from 'vscode';
import type { Round } from '../protocol/rounds';
import { RoundsDiffFiles, RoundsReadBlob } from '../protocol/rpc';
import type { RoundDiffFocus } from '../protocol/webview';
import { errorMessage } from '../protocol/result';
import type { HostClient } from './hostClient';
import { parseRoundUri, planRoundDiff, ROUND_SCHEME, roundUriParts, type RoundAddress } from './roundDiffPlan';
import { notify } from './ui';

/**
 * A round's own diff, read-only (range.from → range.to of its workspace): the `rennet-round:`
 * documents, served from the host's `rennet/rounds/readBlob` (git belongs to the host), and the
 * opener the board panel's "Open round diff" and evidence buttons run — VS Code's multi-file diff
 * (`vscode.changes`) over the files `rennet/rounds/diffFiles` lists, or one file at a line. The
 * plan is roundDiffPlan.ts; nothing here decides.
 */
export class RoundDiffs implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly registration: vscode.Disposable;

  constructor(private readonly host: HostClient) {
    this.registration = vscode.workspace.registerTextDocumentContentProvider(ROUND_SCHEME, this);
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const address = parseRoundUri(uri);
    if (!address) throw new Error(`Not a Rennet round address: ${uri.toString()}`);
    if (address.side === 'absent') return '';
    const { sessionId, roundId, path, side } = address;
    const result = await this.host.request(RoundsReadBlob, { sessionId, roundId, path, side });
    if (!result.ok) throw new Error(result.error.message);
    const blob = result.value;
    const when = side === 'base' ? 'before the round' : 'after the round';
    if (blob.text === null) return `Rennet: ${path} is binary ${when} (${blob.bytes} bytes); it has no text to show.`;
    return blob.truncated ? `${blob.text}\n\n[Rennet: truncated — ${path} is ${blob.bytes} bytes ${when}; only the start is shown.]` : blob.text;
  }

  /**
   * Opens the round's diff beside the panel: every file, or with `at` one file at a line. Resolves
   * with the reason when it could not (the panel says it); a round whose commits change no file
   * is said as a notice.
   */
  async open(sessionId: string, round: Round, at: RoundDiffFocus | undefined, viewColumn: vscode.ViewColumn): Promise<{ ok: true } | { ok: false; message: string }> {
    let listed;
    try {
      listed = await this.host.request(RoundsDiffFiles, { sessionId, roundId: round.id });
    } catch (error) {
      return { ok: false, message: errorMessage(error) };
    }
    if (!listed.ok) return { ok: false, message: listed.error.message };
    const plan = planRoundDiff(sessionId, round, listed.value, at);
    const uri = (address: RoundAddress) => vscode.Uri.from(roundUriParts(address));
    try {
      switch (plan.kind) {
        case 'none':
          void notify('info', plan.message);
          return { ok: true };
        case 'changes':
          await vscode.commands.executeCommand(
            'vscode.changes',
            plan.title,
            plan.entries.map((e) => [uri(e.label), uri(e.original), uri(e.modified)]),
          );
          return { ok: true };
        case 'diff': {
          const options: vscode.TextDocumentShowOptions = { viewColumn, preview: true };
          if (plan.line !== null) options.selection = new vscode.Range(plan.line - 1, 0, plan.line - 1, 0);
          await vscode.commands.executeCommand('vscode.diff', uri(plan.entry.original), uri(plan.entry.modified), plan.title, options);
          return { ok: true };
        }
        case 'before': {
          const document = await vscode.workspace.openTextDocument(uri(plan.address));
          const line = Math.min(Math.max(0, plan.line - 1), Math.max(0, document.lineCount - 1));
          const range = document.lineAt(line).range;
          const editor = await vscode.window.showTextDocument(document, { viewColumn, preview: true, selection: range });
          editor.revealRange(range, vscode.TextEditorRevealType.InCenter);
          return { ok: true };
        }
      }
    } catch (error) {
      return { ok: false, message: `Could not open round ${round.ordinal}'s diff: ${errorMessage(error)}` };
    }
  }

  dispose(): void {
    this.registration.dispose();
  }
}
