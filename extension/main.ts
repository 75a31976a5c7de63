import './zodConfig';
import * as vscode from 'vscode';
import type { RennetApi } from './api';
import { AskClient } from './asks';
import { Captures } from './captures';
import { explainSpan } from './explain';
import { BlobDocumentProvider } from './blobDocuments';
import { CapturedHeads } from './capturedHeads';
import { BLOB_SCHEME } from './documentRefs';
import { BOARD_VIEW_TYPE, BoardPanels } from './boardPanel';
import { ReviewDraftLens } from '../protocol/rpc';
import { draftBoards } from './commands/draftBoards';
import { rereviewSinceLastReview } from './commands/rereview';
import { restartHost } from './commands/restartHost';
import { reviewBranch } from './commands/reviewBranch';
import { reviewWorkingTree } from './commands/reviewWorkingTree';
import { setApiKey } from './commands/setApiKey';
import { showBoard } from './commands/showBoard';
import { showHarnesses } from './commands/showHarnesses';
import type { CommandFactory, Ctx } from './ctx';
import { HostClient } from './hostClient';
import { LensRuns } from './lenses';
import { registerLmHandlers } from './lm';
import { openReview } from './review';
import { ActiveReview } from './activeReview';
import { CitationMarks } from './citationMarks';
import { openChanges } from './commands/openChanges';
import { revealElement } from './commands/revealElement';
import { toggleCitationMarks } from './commands/toggleCitationMarks';
import { ReviewComments } from './comments';
import { captureNewHead } from './commands/captureNewHead';
import { previewReview } from './commands/previewReview';
import { reviewPullRequest } from './commands/reviewPullRequest';
import { setGitLabToken } from './commands/setGitLabToken';
import { openPullRequestCommand } from './commands/openPullRequest';
import { ExitsState } from './exits';
import { RoundsState } from './rounds';
import { RoundDiffs } from './roundDiff';
import { Forges } from './forges';
import { GatesState } from './gates';
import { HandOffView } from './handOff';
import { PREVIEW_VIEW_TYPE, ReviewPreviews } from './reviewPreview';

/** Ceiling on a lens draft by a model (many round trips); a timeout cancels it in the host. */
const DRAFT_TIMEOUT_MS = 30 * 60_000;

let host: HostClient | undefined;

/**
 * Registers commands, the panel serializer and the blob documents. Starts nothing: the host is
 * started by the first Rennet command or by a restored panel.
 */
export function activate(context: vscode.ExtensionContext): RennetApi {
  const log = vscode.window.createOutputChannel('Rennet', { log: true });
  context.subscriptions.push(log);

  const hostClient = new HostClient(context, log);
  host = hostClient;
  // The host asks VS Code's language models through the extension (rennet/lm/*).
  host.installHostRequestHandlers((edge) => registerLmHandlers(edge, log));
  // rennet.forges reaches every fresh host; the host asks forge tokens of the editor (rennet/auth/token).
  const forges = new Forges(host, context.secrets, log);
  const exits = new ExitsState(host);
  const lenses = new LensRuns(host, context.secrets, log);
  const asks = new AskClient(host, log);
  // Whether checkout files still read as their captured heads: one answer for the panel, the marks and the threads.
  const heads = new CapturedHeads(host, log);
  // Whole captures, read once per id for the panels, the marks and the threads.
  const captures = new Captures(hostClient, log);
  // The rounds of each session (the Hand off rows, the panel's rounds area) and their read-only diffs.
  const rounds = new RoundsState(host, context.secrets);
  const roundDiffs = new RoundDiffs(host);
  context.subscriptions.push(rounds, roundDiffs);
  const panels = new BoardPanels(context, host, log, lenses, asks, heads, captures, rounds, roundDiffs);
  const review = new ActiveReview(captures, panels, asks);
  const previews = new ReviewPreviews({ context, host, log, asks, exits, forges });
  const ctx: Ctx = { extension: context, host, panels, lenses, log, asks, review, forges, exits, previews };
  context.subscriptions.push(asks, heads, panels, lenses, review, forges, exits, previews);
  // The Hand off view (Source Control container): the active review's asks by exit, and the exit.
  // A pull request's merge gates (rennet/gates/read) and its merge (rennet/gates/merge).
  const gates = new GatesState(host);
  context.subscriptions.push(gates);
  const handOff = new HandOffView({ host, review, asks, exits, rounds, gates, panels, log });
  context.subscriptions.push(handOff);
  // Combined gutter icons (a line several lenses cite) are written beside the store, in their own folder.
  const citationMarks = new CitationMarks(context.extensionUri, vscode.Uri.joinPath(context.globalStorageUri, 'gutter-icons'), heads, review, log);
  context.subscriptions.push(citationMarks);
  const comments = new ReviewComments({ heads, asks, review, log, explain: (sessionId, anchor, threadId) => explainSpan(hostClient, context.secrets, sessionId, anchor, threadId) });
  context.subscriptions.push(comments);

  const commands: Record<string, CommandFactory> = {
    'rennet.reviewBranch': reviewBranch,
    'rennet.reviewWorkingTree': reviewWorkingTree,
    'rennet.showBoard': showBoard,
    'rennet.restartHost': restartHost,
    'rennet.showHarnesses': showHarnesses,
    'rennet.setApiKey': setApiKey,
    'rennet.draftBoards': draftBoards,
    'rennet.rereviewSinceLastReview': rereviewSinceLastReview,
    'rennet.openChanges': openChanges,
    'rennet.toggleCitationMarks': toggleCitationMarks,
    'rennet.revealElement': revealElement,
    'rennet.reviewPullRequest': reviewPullRequest,
    'rennet.setGitLabToken': setGitLabToken,
    'rennet.openPullRequest': openPullRequestCommand,
    'rennet.previewReview': previewReview,
    'rennet.captureNewHead': captureNewHead,
    // Open in Editor, Show on Board, Edit Text, Unstage and the links of the Hand off rows.
    ...handOff.commands,
    // Stage Ask, the staged asks' and findings' thread actions, Undo Last Ask Action, Toggle Flagged Findings.
    ...comments.commands,
  };
  for (const [name, factory] of Object.entries(commands)) {
    context.subscriptions.push(vscode.commands.registerCommand(name, factory(ctx)));
  }

  context.subscriptions.push(
    vscode.window.registerWebviewPanelSerializer(BOARD_VIEW_TYPE, panels),
    vscode.window.registerWebviewPanelSerializer(PREVIEW_VIEW_TYPE, previews),
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
    draftLens(sessionId, lens, options = {}) {
      const config = vscode.workspace.getConfiguration('rennet.harness.vscodeLm');
      const vendor = options.vendor ?? (config.get<string>('vendor')?.trim() || undefined);
      const family = options.family ?? (config.get<string>('family')?.trim() || undefined);
      return client.request(
        ReviewDraftLens,
        { sessionId, lens, harness: 'vscode-lm', ...(vendor ? { vendor } : {}), ...(family ? { family } : {}), ...(options.model ? { model: options.model } : {}) },
        DRAFT_TIMEOUT_MS,
      );
    },
    runLenses: (sessionId, config) => {
      panels.get(sessionId)?.followLive();
      return lenses.start(sessionId, config);
    },
    generation: (sessionId) => panels.get(sessionId)?.lastGeneration ?? null,
    openCitation: async (sessionId, citation) => {
      await panels.get(sessionId)?.openCitation(citation);
    },
    citationMarks: (uri) => citationMarks.marksOf(uri),
    citationGutter: (uri) => citationMarks.gutterOf(uri),
    commentThreads: (uri) => comments.threadsOn(uri),
    async asks(sessionId) {
      const read = await asks.refresh(sessionId);
      if (!read.ok) throw new Error(`${read.error.code}: ${read.error.message}`);
      return read.value;
    },
    undoAsk: (sessionId) => comments.undo(sessionId),
    stageLineComment: (uri, startLine, endLine, text) => comments.stageLines(uri, startLine, endLine, text),
    handOff: () => handOff.snapshot(),
    reviewPreview: (sessionId) => previews.get(sessionId)?.shown ?? null,
  };
}

export async function deactivate(): Promise<void> {
  const running = host;
  host = undefined;
  await running?.dispose();
}
