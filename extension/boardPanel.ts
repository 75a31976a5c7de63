import * as vscode from 'vscode';
import { randomBytes } from 'node:crypto';
import { FromWebview, PanelState, type HostStatus, type SessionSnapshot, type ToWebview } from '../protocol';
import { SessionGet } from '../protocol/rpc';
import { blobUri } from './blobDocuments';
import { describe, type HostClient } from './hostClient';
import { panelHtml } from './html';
import { checkRepoRelativePath } from './paths';
import { openReview } from './review';
import { panelTitle } from './titles';

export const BOARD_VIEW_TYPE = 'rennet.board';

/**
 * One WebviewPanel per session. The manager routes host events to the right panel and keeps
 * panels unique per session id (re-opening a target reveals the panel that is already open).
 */
export class BoardPanels implements vscode.Disposable, vscode.WebviewPanelSerializer<unknown> {
  private readonly panels = new Map<string, BoardPanel>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly host: HostClient,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.disposables.push(
      host.onSessionChanged((snapshot) => this.panels.get(snapshot.session.id)?.update(snapshot)),
      host.onDidChangeStatus((status) => {
        for (const panel of this.panels.values()) panel.postStatus(status);
      }),
      host.onDidRecover(() => {
        for (const panel of this.panels.values()) void panel.reload();
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

  /** Reveal the panel of this session, or open one; push the snapshot either way. */
  show(snapshot: SessionSnapshot): BoardPanel {
    const existing = this.panels.get(snapshot.session.id);
    if (existing) {
      existing.update(snapshot);
      existing.reveal();
      return existing;
    }
    const panel = vscode.window.createWebviewPanel(
      BOARD_VIEW_TYPE,
      panelTitle(snapshot.session.target),
      { viewColumn: vscode.ViewColumn.Active, preserveFocus: false },
      this.webviewOptions(),
    );
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
    const { sessionId } = parsed.data;
    const existing = this.panels.get(sessionId);
    if (existing) {
      panel.dispose();
      existing.reveal();
      return;
    }
    panel.webview.options = this.webviewOptions();
    this.attach(sessionId, panel, undefined);
    // Warm the host up while the webview loads; the panel's ready message reads the session.
    this.host.start().catch((error: unknown) => this.log.warn(`Restoring a Rennet panel: ${describe(error)}`));
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
      onDisposed: () => {
        if (this.panels.get(sessionId) === board) this.panels.delete(sessionId);
      },
      onOtherSession: (other) => this.show(other),
    });
    this.panels.set(sessionId, board);
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
  onDisposed(): void;
  /** A recapture answered with a different session (should not happen; shown, not lost). */
  onOtherSession(snapshot: SessionSnapshot): void;
}

export class BoardPanel implements vscode.Disposable {
  /** The webview said `ready` and has not been torn down since. */
  private ready = false;
  /** Bumped by every snapshot we receive, so a slow SessionGet cannot overwrite a newer push. */
  private generation = 0;
  private refreshing = false;
  private disposed = false;
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
        if (!webviewPanel.visible) this.ready = false;
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
    this.post({ type: 'rennet/panel/snapshot', snapshot });
  }

  postStatus(status: HostStatus): void {
    this.post({ type: 'rennet/panel/hostStatus', status });
  }

  /** Read the session from the host again (after ready, a host restart, or a restore). */
  async reload(): Promise<void> {
    const generation = this.generation;
    try {
      const result = await this.deps.host.request(SessionGet, { sessionId: this.sessionId });
      if (this.disposed) return;
      if (!result.ok) {
        this.postError(`Could not read this review: ${result.error.message}`);
        if (this.snapshot) this.post({ type: 'rennet/panel/snapshot', snapshot: this.snapshot });
        return;
      }
      if (generation !== this.generation) return; // a newer snapshot arrived meanwhile
      this.update(result.value);
    } catch (error) {
      if (this.disposed) return;
      this.postError(describe(error));
      if (this.snapshot) this.post({ type: 'rennet/panel/snapshot', snapshot: this.snapshot });
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
        `Dropped an invalid message from the Rennet panel (${this.sessionId}): ${parsed.error.issues
          .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
          .join('; ')}`,
      );
      return;
    }
    const message = parsed.data;
    switch (message.type) {
      case 'rennet/panel/ready':
        this.ready = true;
        this.postStatus(this.deps.host.status ?? { state: 'starting', message: null });
        void this.reload();
        return;
      case 'rennet/panel/refresh':
        void this.recapture();
        return;
      case 'rennet/panel/openFile':
        void this.openFile(message.path, message.side);
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
        this.post({ type: 'rennet/panel/snapshot', snapshot });
        this.deps.onOtherSession(next);
      }
    } catch (error) {
      if (!this.disposed) this.postError(describe(error));
    } finally {
      this.refreshing = false;
    }
  }

  private async openFile(path: string, side: 'base' | 'head'): Promise<void> {
    const check = checkRepoRelativePath(path);
    if (!check.ok) {
      this.deps.log.warn(`Refused to open a path from the Rennet panel: ${check.reason}.`);
      this.postError(`Refused to open “${path}”: ${check.reason}.`);
      return;
    }
    const snapshot = this.snapshot;
    const file = snapshot?.patchset?.files.find((f) => f.path === path || f.oldPath === path);
    if (!snapshot?.patchset || !file) {
      this.postError(`“${path}” is not a file of this capture.`);
      return;
    }
    if (file.submodule) {
      void vscode.window.showInformationMessage(`${path} is a submodule; its content is another repository and is not reviewed here.`);
      return;
    }
    try {
      const workspaceUri = vscode.Uri.joinPath(vscode.Uri.file(snapshot.session.repoRoot), ...check.segments);
      const useWorkspace = side === 'head' && file.status !== 'deleted' && (await exists(workspaceUri));
      const uri = useWorkspace ? workspaceUri : blobUri(snapshot.patchset.id, path, side);
      await vscode.commands.executeCommand('vscode.open', uri, {
        // Always the group right of the board, so repeated clicks do not keep adding columns.
        viewColumn: ((this.panel.viewColumn ?? vscode.ViewColumn.One) + 1) as vscode.ViewColumn,
        preview: true,
        preserveFocus: false,
      } satisfies vscode.TextDocumentShowOptions);
    } catch (error) {
      this.postError(`Could not open ${path}: ${describe(error)}`);
    }
  }

  private postError(message: string): void {
    this.deps.log.warn(`[panel ${this.sessionId}] ${message}`);
    this.post({ type: 'rennet/panel/error', message });
  }

  private post(message: ToWebview): void {
    if (!this.ready || this.disposed) return; // the webview asks again with `ready`
    void this.panel.webview.postMessage(message).then(undefined, (error: unknown) => {
      this.deps.log.warn(`Posting ${message.type} to the Rennet panel failed: ${describe(error)}`);
    });
  }
}

async function exists(uri: vscode.Uri): Promise<boolean> {
  try {
    const stat = await vscode.workspace.fs.stat(uri);
    return (stat.type & vscode.FileType.File) !== 0;
  } catch {
    return false;
  }
}
