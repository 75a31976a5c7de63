import * as vscode from 'vscode';
import { randomBytes } from 'node:crypto';
import { errorMessage, FromWebview, PanelState, type GenerationDelta, type GenerationSnapshot, type HostStatus, type RoundDiffFocus, type SessionSnapshot, type ToWebview } from '../protocol';
import type { Lens } from '../protocol/board';
import { fileOnSide, type FileStatus } from '../protocol/patchset';
import { GenerationGet, SessionGet } from '../protocol/rpc';
import { askActLabel, type AskClient } from './asks';
import type { Captures } from './captures';
import { blobUri } from './blobDocuments';
import type { CapturedHeads } from './capturedHeads';
import type { HostClient } from './hostClient';
import { deltaAppliesOn, withoutRevision, type GenerationChange } from './generationFold';
import { panelHtml } from './html';
import { explainSpan } from './explain';
import type { LensRuns } from './lenses';
import { checkRepoRelativePath, resolvesInsideRepo } from './paths';
import { openReview } from './review';
import type { RoundDiffs } from './roundDiff';
import type { RoundsState } from './rounds';
import { panelTitle } from './titles';
import { notify, webviewPanel } from './ui';
import { ui } from './uiText';

export const BOARD_VIEW_TYPE = 'rennet.board';

/**
 * One WebviewPanel per session. The manager routes host events to the right panel and keeps
 * panels unique per session id (re-opening a target reveals the panel that is already open).
 */
export class BoardPanels implements vscode.Disposable, vscode.WebviewPanelSerializer<unknown> {
  private readonly panels = new Map<string, BoardPanel>();
  private readonly disposables: vscode.Disposable[] = [];
  /** The session of the panel that was active last. */
  private lastActive: string | null = null;
  private readonly shownEmitter = new vscode.EventEmitter<string>();
  /**
   * A panel's shown state moved: it became active, took a session snapshot or a generation, or
   * closed. Carries the session id; editor surfaces re-read `activeSessionId` and `get`.
   */
  readonly onDidChangeShown = this.shownEmitter.event;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly host: HostClient,
    private readonly log: vscode.LogOutputChannel,
    private readonly lenses: LensRuns,
    private readonly asks: AskClient,
    private readonly heads: CapturedHeads,
    private readonly captures: Captures,
    private readonly rounds: RoundsState,
    private readonly roundDiffs: RoundDiffs,
  ) {
    this.disposables.push(
      this.shownEmitter,
      // The session's rounds, whole, to its panel after every change the window hears of.
      rounds.onDidChange((sessionId) => this.panels.get(sessionId)?.postRounds()),
      asks.onDidChange(({ sessionId, projection }) => this.panels.get(sessionId)?.postAsks(projection, asks.undoLabel(sessionId))),
      host.onSessionChanged((snapshot) => this.panels.get(snapshot.session.id)?.update(snapshot)),
      host.onGenerationChanged((change) => this.panels.get(change.snapshot.sessionId)?.onGeneration(change)),
      host.onDidChangeStatus((status) => {
        for (const panel of this.panels.values()) panel.postStatus(status);
      }),
      host.onDidRecover(() => {
        // Sessions, generations and rounds are in the store: read them back and send them again.
        for (const panel of this.panels.values()) {
          void panel.reloadAll();
          void rounds.readLedger(panel.sessionId);
        }
      }),
    );
  }

  /** Session ids with an open panel, in opening order. */
  openSessionIds(): string[] {
    return [...this.panels.keys()];
  }

  get(sessionId: string): BoardPanel | undefined {
    return this.panels.get(sessionId);
  }

  /** The session of the active board panel, else of the one active last, else of the only one open. */
  activeSessionId(): string | undefined {
    for (const [id, panel] of this.panels) if (panel.panel.active) return id;
    if (this.lastActive && this.panels.has(this.lastActive)) return this.lastActive;
    return this.panels.size === 1 ? [...this.panels.keys()][0] : undefined;
  }

  /** Draft the session's boards (again): its panel follows the new live generation. */
  runLenses(sessionId: string): ReturnType<LensRuns['start']> {
    this.panels.get(sessionId)?.followLive();
    return this.lenses.start(sessionId);
  }

  /** Reveal the panel of this session, or open one; push the snapshot either way. */
  show(snapshot: SessionSnapshot): BoardPanel {
    const existing = this.panels.get(snapshot.session.id);
    if (existing) {
      existing.update(snapshot);
      existing.reveal();
      return existing;
    }
    const panel = webviewPanel(BOARD_VIEW_TYPE, panelTitle(snapshot.session.target), { viewColumn: vscode.ViewColumn.Active, preserveFocus: false }, this.webviewOptions());
    return this.attach(snapshot.session.id, panel, snapshot);
  }

  /** WebviewPanelSerializer: a panel comes back after a window reload. */
  async deserializeWebviewPanel(panel: vscode.WebviewPanel, state: unknown): Promise<void> {
    const parsed = PanelState.safeParse(state);
    if (!parsed.success) {
      this.log.warn(`A Rennet panel could not be restored: its saved state is not a PanelState (${parsed.error.message}).`);
      panel.dispose();
      return;
    }
    const { sessionId, generationId } = parsed.data;
    const existing = this.panels.get(sessionId);
    if (existing) {
      panel.dispose();
      existing.reveal();
      return;
    }
    panel.webview.options = this.webviewOptions();
    // The generation the reviewer had pinned with the switcher, if any.
    this.attach(sessionId, panel, undefined).select(generationId ?? null);
    // Warm the host up while the webview loads; the panel's ready message reads the session.
    this.host.start().catch((error: unknown) => this.log.warn(`Restoring a Rennet panel: ${errorMessage(error)}`));
  }

  dispose(): void {
    for (const panel of [...this.panels.values()]) panel.dispose();
    for (const d of this.disposables.splice(0)) d.dispose();
  }

  private attach(sessionId: string, panel: vscode.WebviewPanel, snapshot: SessionSnapshot | undefined): BoardPanel {
    const board = new BoardPanel(sessionId, panel, snapshot, {
      context: this.context,
      host: this.host,
      log: this.log,
      asks: this.asks,
      heads: this.heads,
      captures: this.captures,
      rounds: this.rounds,
      roundDiffs: this.roundDiffs,
      onShown: () => this.shownEmitter.fire(sessionId),
      onDisposed: () => {
        if (this.panels.get(sessionId) === board) this.panels.delete(sessionId);
        this.shownEmitter.fire(sessionId);
      },
      onOtherSession: (other) => this.show(other),
      onActive: () => {
        this.lastActive = sessionId;
        this.shownEmitter.fire(sessionId);
      },
      runLenses: () => this.runLenses(sessionId),
    });
    this.panels.set(sessionId, board);
    this.lastActive = sessionId;
    return board;
  }

  private webviewOptions(): vscode.WebviewPanelOptions & vscode.WebviewOptions {
    return {
      enableScripts: true,
      retainContextWhenHidden: false,
      enableFindWidget: true,
      localResourceRoots: [vscode.Uri.joinPath(this.context.extensionUri, 'dist')],
    };
  }
}

interface BoardPanelDeps {
  context: vscode.ExtensionContext;
  host: HostClient;
  log: vscode.LogOutputChannel;
  asks: AskClient;
  heads: CapturedHeads;
  /** Whole captures (a frozen generation's earlier one), the window's one cache. */
  captures: Captures;
  /** The window's rounds ledgers (the panel's rounds area) and the read-only round diffs. */
  rounds: RoundsState;
  roundDiffs: RoundDiffs;
  /** The panel took a session snapshot or a generation (editor surfaces follow it). */
  onShown(): void;
  onDisposed(): void;
  /** A recapture answered with a different session (should not happen; shown, not lost). */
  onOtherSession(snapshot: SessionSnapshot): void;
  /** The panel became the active editor. */
  onActive(): void;
  /** The panel asked to draft its session's boards (again). */
  runLenses(): Promise<unknown>;
}

export class BoardPanel implements vscode.Disposable {
  /** The webview said `ready` and has not been torn down since. */
  private ready = false;
  /** Bumped by every snapshot we receive, so a slow SessionGet cannot overwrite a newer push. */
  private generation = 0;
  private refreshing = false;
  private disposed = false;
  /** The generation the reviewer pinned (`selectGeneration`); null: the live one, following pushes. */
  private selected: string | null = null;
  /** Bumped by every generation we post, so a slow GenerationGet cannot overwrite a newer push. */
  private generationSeq = 0;
  /** The last generation the webview accepted (undefined: none posted yet); read by the test API. */
  private postedGeneration: GenerationSnapshot | null | undefined = undefined;
  /**
   * The generation the webview was last sent, whole or by delta, in send order (messages reach it
   * in order): a delta is forwarded only on top of it. undefined: unknown (not ready, a send
   * failed, a gap) — the next generation goes whole.
   */
  private sentGeneration: GenerationSnapshot | null | undefined = undefined;
  /** `postedGeneration` without its push-stream revision, for readers (the test API, the editor surfaces). */
  private shownGeneration: { of: GenerationSnapshot; without: GenerationSnapshot } | null = null;
  /** A reveal asked for before the webview showed its generation (sent once it does). */
  private pendingReveal: { generationId: string; lens: Lens; elementId: string } | null = null;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    readonly sessionId: string,
    readonly panel: vscode.WebviewPanel,
    private snapshot: SessionSnapshot | undefined,
    private readonly deps: BoardPanelDeps,
  ) {
    const webview = panel.webview;
    const nonce = randomBytes(16).toString('hex');
    const scriptUri = webview.asWebviewUri(vscode.Uri.joinPath(deps.context.extensionUri, 'dist', 'webview.js'));
    webview.html = panelHtml({ cspSource: webview.cspSource, scriptUri: scriptUri.toString(), nonce, title: panel.title });
    this.disposables.push(
      webview.onDidReceiveMessage((raw: unknown) => this.onMessage(raw)),
      panel.onDidChangeViewState(({ webviewPanel }) => {
        // Without retainContextWhenHidden a hidden webview is torn down; it says ready again.
        if (!webviewPanel.visible) {
          this.ready = false;
          this.sentGeneration = undefined;
        }
        if (webviewPanel.active) deps.onActive();
      }),
      panel.onDidDispose(() => this.dispose()),
    );
    if (snapshot) panel.title = panelTitle(snapshot.session.target);
  }

  reveal(): void {
    this.panel.reveal(undefined, false);
  }

  /** A new snapshot for this session (host push, recapture, reattach). */
  update(snapshot: SessionSnapshot): void {
    if (snapshot.session.id !== this.sessionId) return;
    this.generation++;
    this.snapshot = snapshot;
    this.panel.title = panelTitle(snapshot.session.target);
    void this.post({ type: 'rennet/panel/snapshot', snapshot });
    this.deps.onShown();
  }

  /** The last session snapshot this panel holds (undefined until the host answered). */
  get sessionSnapshot(): SessionSnapshot | undefined {
    return this.snapshot;
  }

  /** The session's ask projection, whole (after ready and after every append). */
  postAsks(projection: import('../protocol').AskProjection, undoLabel: string | null): void {
    void this.post({ type: 'rennet/panel/asks', projection, undo: undoLabel ? { label: undoLabel } : null });
  }

  /**
   * Select `lens` and bring `elementId` into view, showing `generationId` first when another one
   * is on screen (a frozen one is pinned, read-only).
   */
  async revealElement(generationId: string, lens: Lens, elementId: string): Promise<void> {
    this.reveal();
    // A new or hidden panel's webview is not listening yet: the reveal waits for its generation.
    this.pendingReveal = { generationId, lens, elementId };
    if (this.ready && this.postedGeneration?.generationId === generationId) {
      this.flushReveal();
      return;
    }
    if (this.ready) {
      this.selected = generationId;
      this.generationSeq++;
      await this.reloadGeneration();
    } else {
      this.selected = generationId;
    }
  }

  private flushReveal(): void {
    const pending = this.pendingReveal;
    if (!pending || this.postedGeneration?.generationId !== pending.generationId) return;
    this.pendingReveal = null;
    void this.post({ type: 'rennet/panel/reveal', ...pending });
  }

  /** The session's rounds, whole, as the window knows them (after ready and after every change). */
  postRounds(): void {
    void this.post({ type: 'rennet/panel/rounds', sessionId: this.sessionId, rounds: this.deps.rounds.ledger(this.sessionId) });
  }

  postStatus(status: HostStatus): void {
    void this.post({ type: 'rennet/panel/hostStatus', status });
  }

  /**
   * The last generation snapshot the webview accepted, without its push-stream revision (what it
   * says, comparable across host restarts); undefined when none was posted yet.
   */
  get lastGeneration(): GenerationSnapshot | null | undefined {
    const posted = this.postedGeneration;
    if (!posted) return posted;
    if (this.shownGeneration?.of !== posted) this.shownGeneration = { of: posted, without: withoutRevision(posted) };
    return this.shownGeneration.without;
  }

  /**
   * A generation the host changed: shown when it is the one the panel follows — as the delta that
   * made it when the webview was last sent that delta's base, else whole.
   */
  onGeneration({ snapshot, delta }: GenerationChange): void {
    if (snapshot.sessionId !== this.sessionId) return;
    if (this.selected !== null && snapshot.generationId !== this.selected) return; // a pinned generation is shown
    this.generationSeq++;
    if (delta && deltaAppliesOn(this.sentGeneration, delta)) void this.postGenerationDelta(snapshot, delta);
    else void this.postGeneration(snapshot);
  }

  /** Show the live generation from now on (a new draft was started). */
  followLive(): void {
    this.selected = null;
  }

  /** Pin a generation (null: the live one); the next GenerationGet reads it. */
  select(generationId: string | null): void {
    this.selected = generationId;
  }

  /**
   * Open a captured span (an ask's line anchor, a finding's code_ref) at its lines, on the capture
   * it names: the workspace file when it still reads as that capture's head, else the captured blob.
   */
  openSpan(span: { patchsetId: string; path: string; side: 'base' | 'head'; startLine: number; endLine: number }): Promise<void> {
    return this.openFile(span.path, span.side, { startLine: span.startLine, endLine: span.endLine }, span.patchsetId);
  }

  /** Open a cited range of the shown generation's capture (a frozen generation's may be an older one). */
  openCitation(citation: { path: string; side: 'base' | 'head'; startLine: number; endLine: number }): Promise<void> {
    return this.openFile(citation.path, citation.side, { startLine: citation.startLine, endLine: citation.endLine }, this.postedGeneration?.patchsetId);
  }

  /** Read the session and then its generation back (after ready, or a host restart). */
  async reloadAll(): Promise<void> {
    await this.reload();
    await this.reloadGeneration();
  }

  /** Read the shown generation (the pinned one, else the live one) from the host and post it. */
  async reloadGeneration(): Promise<void> {
    const seq = this.generationSeq;
    const pinned = this.selected;
    try {
      const result = await this.deps.host.request(GenerationGet, { sessionId: this.sessionId, ...(pinned ? { generationId: pinned } : {}) });
      if (this.disposed) return;
      if (!result.ok) {
        this.postError(`Could not read the boards of this review: ${result.error.message}`);
        return;
      }
      if (seq !== this.generationSeq || pinned !== this.selected) return; // a newer push or another pick arrived meanwhile
      // Picking the live generation by its id is following it.
      if (result.value?.status === 'live') this.selected = null;
      await this.postGeneration(result.value);
    } catch (error) {
      if (!this.disposed) this.postError(errorMessage(error));
    }
  }

  /** Read the session from the host again (after ready, a host restart, or a restore). */
  async reload(): Promise<void> {
    const generation = this.generation;
    try {
      const result = await this.deps.host.request(SessionGet, { sessionId: this.sessionId });
      if (this.disposed) return;
      if (!result.ok) {
        this.postError(`Could not read this review: ${result.error.message}`);
        if (this.snapshot) void this.post({ type: 'rennet/panel/snapshot', snapshot: this.snapshot });
        return;
      }
      if (generation !== this.generation) return; // a newer snapshot arrived meanwhile
      this.update(result.value);
    } catch (error) {
      if (this.disposed) return;
      this.postError(errorMessage(error));
      if (this.snapshot) void this.post({ type: 'rennet/panel/snapshot', snapshot: this.snapshot });
    }
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.ready = false;
    for (const d of this.disposables.splice(0)) d.dispose();
    this.panel.dispose();
    this.deps.onDisposed();
  }

  // ---------------------------------------------------------------------------------------------

  private onMessage(raw: unknown): void {
    const parsed = FromWebview.safeParse(raw);
    if (!parsed.success) {
      this.deps.log.warn(
        `Dropped an invalid message from the Rennet panel (${this.sessionId}): ${parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ')}`,
      );
      return;
    }
    const message = parsed.data;
    switch (message.type) {
      case 'rennet/panel/ready':
        this.ready = true;
        this.sentGeneration = undefined;
        this.postStatus(this.deps.host.status ?? { state: 'starting', message: null });
        void this.reloadAll().then(() => this.deps.asks.refresh(this.sessionId));
        // What the window knows now, then the ledger read whole (onDidChange posts it again).
        this.postRounds();
        void this.deps.rounds.readLedger(this.sessionId);
        return;
      case 'rennet/panel/refresh':
        void this.recapture();
        return;
      case 'rennet/panel/openFile':
        void this.openFile(message.path, message.side);
        return;
      case 'rennet/panel/openCitation':
        void this.openCitation(message);
        return;
      case 'rennet/panel/generationGap':
        // The webview's generation is not the delta's base: send it whole.
        this.deps.log.warn(`[panel ${this.sessionId}] a generation delta did not apply on the panel's generation ${message.generationId} (${message.reason}); sending it whole.`);
        this.sentGeneration = undefined;
        this.generationSeq++;
        void this.reloadGeneration();
        return;
      case 'rennet/panel/selectGeneration':
        this.selected = message.generationId;
        this.generationSeq++;
        void this.reloadGeneration();
        return;
      case 'rennet/panel/runLenses':
        void this.deps.runLenses();
        return;
      case 'rennet/panel/askCommand':
        void this.runAskCommand(message.command);
        return;
      case 'rennet/panel/undo':
        void this.undoLast();
        return;
      case 'rennet/panel/explain':
        void this.explain(message.requestId, message.anchor, message.threadId);
        return;
      case 'rennet/panel/openRoundDiff':
        void this.openRoundDiff(message.roundId, message.at);
        return;
    }
  }

  private async recapture(): Promise<void> {
    if (this.refreshing) return;
    this.refreshing = true;
    try {
      if (!this.snapshot) await this.reload();
      const snapshot = this.snapshot;
      if (!snapshot) {
        this.postError('This review cannot be recaptured: its session could not be read.');
        return;
      }
      const { repoRoot, target } = snapshot.session;
      const result = await openReview(this.deps.host, repoRoot, target);
      if (this.disposed) return;
      if (!result.ok) {
        this.postError(result.error.message);
        return;
      }
      const next = result.value.snapshot;
      if (next.session.id === this.sessionId) {
        this.update(next);
      } else {
        this.deps.log.warn(`Recapturing ${this.sessionId} answered session ${next.session.id}; showing it in its own panel.`);
        void this.post({ type: 'rennet/panel/snapshot', snapshot });
        this.deps.onOtherSession(next);
      }
    } catch (error) {
      if (!this.disposed) this.postError(errorMessage(error));
    } finally {
      this.refreshing = false;
    }
  }

  /**
   * Open a captured file, or a cited range of it (`lines`, 1-based and inclusive: selected and
   * revealed in the centre). The head side opens the workspace file when it exists and, for a
   * citation, still reads as captured (else its lines would not be the cited ones); the base side,
   * a deleted file, or a head that has changed since the capture open the captured blob through
   * the read-only `rennet-blob:` documents.
   */
  private async openFile(path: string, side: 'base' | 'head', lines?: { startLine: number; endLine: number }, capture?: string): Promise<void> {
    const check = checkRepoRelativePath(path);
    if (!check.ok) {
      this.deps.log.warn(`Refused to open a path from the Rennet panel: ${check.reason}.`);
      this.postError(`Refused to open “${path}”: ${check.reason}.`);
      return;
    }
    const snapshot = this.snapshot;
    const patchsetId = capture ?? snapshot?.patchset?.id;
    const files: ReadonlyArray<{ path: string; oldPath: string | null; status: FileStatus; submodule: boolean }> | undefined =
      patchsetId && patchsetId === snapshot?.patchset?.id ? snapshot.patchset.files : patchsetId ? (await this.deps.captures.get(patchsetId))?.files : undefined;
    // The file the path names on the asked side, else on the other (a deleted file's only text is its base).
    const onSide = files ? fileOnSide(files, path, side) : undefined;
    const file = onSide ?? (files ? fileOnSide(files, path, side === 'head' ? 'base' : 'head') : undefined);
    if (!snapshot || !patchsetId || !file) {
      this.postError(`“${path}” is not a file of this capture.`);
      return;
    }
    if (file.submodule) {
      void notify('info', ui`${path} is a submodule; its content is another repository and is not reviewed here.`);
      return;
    }
    const blobSide = onSide ? side : side === 'head' ? 'base' : 'head';
    try {
      const workspaceUri = vscode.Uri.joinPath(vscode.Uri.file(snapshot.session.repoRoot), ...check.segments);
      const useWorkspace =
        blobSide === 'head' &&
        (await exists(workspaceUri)) &&
        (await this.staysInRepo(snapshot.session.repoRoot, check.segments, path)) &&
        (!lines || (await this.readsAsCaptured(workspaceUri, patchsetId, path)));
      const uri = useWorkspace ? workspaceUri : blobUri(patchsetId, path, blobSide);
      // Always the group right of the board, so repeated clicks do not keep adding columns.
      const viewColumn = ((this.panel.viewColumn ?? vscode.ViewColumn.One) + 1) as vscode.ViewColumn;
      if (!lines) {
        await vscode.commands.executeCommand('vscode.open', uri, { viewColumn, preview: true, preserveFocus: false } satisfies vscode.TextDocumentShowOptions);
        return;
      }
      const document = await vscode.workspace.openTextDocument(uri);
      const range = citedRange(document, lines.startLine, lines.endLine);
      const editor = await vscode.window.showTextDocument(document, { viewColumn, preview: true, preserveFocus: false, selection: range });
      editor.revealRange(range, vscode.TextEditorRevealType.InCenter);
    } catch (error) {
      this.postError(`Could not open ${path}: ${errorMessage(error)}`);
    }
  }

  /**
   * Whether the workspace file is inside the repository once symlinks are followed: a committed
   * symlink (or a symlinked folder) may point anywhere on the machine, and then the captured blob
   * is opened instead.
   */
  private async staysInRepo(repoRoot: string, segments: readonly string[], path: string): Promise<boolean> {
    if (await resolvesInsideRepo(repoRoot, segments)) return true;
    this.deps.log.warn(`[panel ${this.sessionId}] ${JSON.stringify(path)} resolves outside the repository (a symlink); opening its captured blob instead.`);
    return false;
  }

  /**
   * Whether the workspace file still reads as the captured head (so a cited line number means the
   * same line there). An open document with unsaved edits is what the editor will show, so its text
   * is compared; otherwise the file on disk is, since an open document follows it (it may not have
   * caught up with an edit made outside the editor yet). Only a file known to differ is not; a head
   * that cannot be compared whole (binary, truncated, unreadable) trusts the file.
   */
  private async readsAsCaptured(uri: vscode.Uri, patchsetId: string, path: string): Promise<boolean> {
    const heads = this.deps.heads;
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    try {
      const reading =
        open?.isDirty === true ? await heads.reading(open, patchsetId, path) : await heads.readingOfText(Buffer.from(await vscode.workspace.fs.readFile(uri)).toString('utf8'), patchsetId, path);
      return reading.kind !== 'changed';
    } catch (error) {
      this.deps.log.warn(`Could not compare ${path} with its capture: ${errorMessage(error)}; it is opened as it is.`);
      return true;
    }
  }

  private async postGeneration(snapshot: GenerationSnapshot | null): Promise<void> {
    await this.postShown(snapshot, { type: 'rennet/panel/generation', snapshot });
  }

  private async postGenerationDelta(snapshot: GenerationSnapshot, delta: GenerationDelta): Promise<void> {
    await this.postShown(snapshot, { type: 'rennet/panel/generationDelta', delta });
  }

  /** Sends the webview `message`, which makes it show `snapshot`; a failed send makes the next generation go whole. */
  private async postShown(snapshot: GenerationSnapshot | null, message: ToWebview): Promise<void> {
    if (this.ready && !this.disposed) this.sentGeneration = snapshot;
    if (await this.post(message)) {
      this.postedGeneration = snapshot;
      this.deps.onShown();
      this.flushReveal();
    } else if (this.sentGeneration === snapshot) this.sentGeneration = undefined;
  }

  /** Open a round's own diff, read-only, beside the board (with `at`: one file at a line). */
  private async openRoundDiff(roundId: string, at: RoundDiffFocus | undefined): Promise<void> {
    const round = this.deps.rounds.ledger(this.sessionId).find((r) => r.id === roundId);
    if (!round) {
      this.postError(`Round ${roundId} is not a round of this review.`);
      return;
    }
    if (at) {
      const check = checkRepoRelativePath(at.path);
      if (!check.ok) {
        this.postError(`Refused to open “${at.path}”: ${check.reason}.`);
        return;
      }
    }
    const viewColumn = ((this.panel.viewColumn ?? vscode.ViewColumn.One) + 1) as vscode.ViewColumn;
    const opened = await this.deps.roundDiffs.open(this.sessionId, round, at, viewColumn);
    if (!opened.ok && !this.disposed) this.postError(opened.message);
  }

  private async runAskCommand(command: import('../protocol').AskCommand): Promise<void> {
    const result = await this.deps.asks.command(this.sessionId, command, askActLabel(command));
    if (!result.ok && !this.disposed) void this.post({ type: 'rennet/panel/askRefused', message: result.error.message });
  }

  private async undoLast(): Promise<void> {
    const result = await this.deps.asks.undoLast(this.sessionId);
    if (!result.ok && !this.disposed) void this.post({ type: 'rennet/panel/askRefused', message: `Undo: ${result.error.message}` });
  }

  /** Explain a span of board prose through the configured harness; progress goes back as explainStatus. */
  private async explain(requestId: string, anchor: import('../protocol').QuoteAnchor, threadId: string | undefined): Promise<void> {
    const status = (state: 'working' | 'answered' | 'failed', threadId: string | null, message: string | null) =>
      void this.post({ type: 'rennet/panel/explainStatus', requestId, state, threadId, message });
    status('working', null, null);
    const result = await explainSpan(this.deps.host, this.deps.context.secrets, this.sessionId, anchor, threadId);
    if (this.disposed) return;
    if (result.ok) status('answered', result.value.threadId, null);
    else status('failed', result.error.detail?.threadId ?? null, result.error.message);
  }

  private postError(message: string): void {
    this.deps.log.warn(`[panel ${this.sessionId}] ${message}`);
    void this.post({ type: 'rennet/panel/error', message });
  }

  /** Resolves true when the webview took the message. */
  private post(message: ToWebview): Promise<boolean> {
    if (!this.ready || this.disposed) return Promise.resolve(false); // the webview asks again with `ready`
    return Promise.resolve(this.panel.webview.postMessage(message)).then(
      (delivered) => delivered,
      (error: unknown) => {
        this.deps.log.warn(`Posting ${message.type} to the Rennet panel failed: ${errorMessage(error)}`);
        return false;
      },
    );
  }
}

/** Lines `start`..`end` (1-based, inclusive) of a document, clamped to it, whole lines. */
function citedRange(document: vscode.TextDocument, startLine: number, endLine: number): vscode.Range {
  const last = Math.max(0, document.lineCount - 1);
  const start = Math.min(Math.max(0, startLine - 1), last);
  const end = Math.min(Math.max(start, endLine - 1), last);
  return new vscode.Range(start, 0, end, document.lineAt(end).range.end.character);
}

async function exists(uri: vscode.Uri): Promise<boolean> {
  try {
    const stat = await vscode.workspace.fs.stat(uri);
    return (stat.type & vscode.FileType.File) !== 0;
  } catch {
    return false;
  }
}
