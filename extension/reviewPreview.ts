import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { FromPreview, PreviewState, type HostStatus, type PreviewPostRefusal, type PreviewSnapshot, type ToPreview } from '../protocol/webview';
import { askActLabel, type AskClient } from './asks';
import type { ExitsState } from './exits';
import { isForgeLink, unlinkableUrl } from './forgePlan';
import type { Forges } from './forges';
import { errorMessage } from '../protocol/result';
import type { HostClient } from './hostClient';
import { panelHtml } from './html';
import { notify, webviewPanel } from './ui';
import { ui, type UiText } from './uiText';

export const PREVIEW_VIEW_TYPE = 'rennet.reviewPreview';

export interface PreviewDeps {
  context: vscode.ExtensionContext;
  host: HostClient;
  log: vscode.LogOutputChannel;
  asks: AskClient;
  exits: ExitsState;
  forges: Forges;
}

/**
 * The "Post review" previews: one webview editor tab per session, showing the exact review the
 * host would post (`rennet/exits/previewReview`) with one Post button. The page is the board
 * panel's bundle booted as its second root (`data-view="review-preview"`), under the same CSP and
 * Markdown sanitizer. Like the board, it says `ready` and then gets whole snapshots: the preview is
 * composed again on every ask change, post and capture, so what is shown is what would post.
 */
export class ReviewPreviews implements vscode.Disposable, vscode.WebviewPanelSerializer<unknown> {
  private readonly panels = new Map<string, ReviewPreviewPanel>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly deps: PreviewDeps) {
    this.disposables.push(
      deps.exits.onDidChange((sessionId) => this.panels.get(sessionId)?.push()),
      deps.asks.onDidChange(({ sessionId }) => this.panels.get(sessionId)?.recompose()),
      deps.host.onSessionChanged((snapshot) => this.panels.get(snapshot.session.id)?.onSessionChanged(snapshot.session.activePatchsetId)),
      // The opener states what the boards came to: a board that settles changes the review.
      deps.host.onGenerationChanged(({ snapshot }) => this.panels.get(snapshot.sessionId)?.recompose()),
      deps.host.onExitsPosted((receipt) => this.panels.get(receipt.sessionId)?.recompose()),
      deps.host.onDidRecover(() => {
        for (const panel of this.panels.values()) void panel.recompose();
      }),
      deps.host.onDidChangeStatus((status) => {
        for (const panel of this.panels.values()) panel.postStatus(status);
      }),
    );
  }

  get(sessionId: string): ReviewPreviewPanel | undefined {
    return this.panels.get(sessionId);
  }

  /** Reveal the session's preview, or open one beside the active editor. */
  show(sessionId: string, title: UiText): ReviewPreviewPanel {
    const existing = this.panels.get(sessionId);
    if (existing) {
      void existing.recompose();
      existing.reveal();
      return existing;
    }
    const panel = webviewPanel(PREVIEW_VIEW_TYPE, title, { viewColumn: vscode.ViewColumn.Beside, preserveFocus: false }, this.webviewOptions());
    return this.attach(sessionId, panel);
  }

  /** WebviewPanelSerializer: a preview comes back after a window reload (its receipt is read from the store). */
  async deserializeWebviewPanel(panel: vscode.WebviewPanel, state: unknown): Promise<void> {
    const parsed = PreviewState.safeParse(state);
    if (!parsed.success || this.panels.has(parsed.data.sessionId)) {
      if (!parsed.success) this.deps.log.warn(`A Rennet review preview could not be restored: its saved state is not a PreviewState (${parsed.error.message}).`);
      panel.dispose();
      return;
    }
    panel.webview.options = this.webviewOptions();
    this.attach(parsed.data.sessionId, panel);
    this.deps.host.start().catch((error: unknown) => this.deps.log.warn(`Restoring a Rennet review preview: ${errorMessage(error)}`));
  }

  dispose(): void {
    for (const panel of [...this.panels.values()]) panel.dispose();
    for (const d of this.disposables.splice(0)) d.dispose();
  }

  private attach(sessionId: string, panel: vscode.WebviewPanel): ReviewPreviewPanel {
    const preview = new ReviewPreviewPanel(sessionId, panel, this.deps, () => {
      if (this.panels.get(sessionId) === preview) this.panels.delete(sessionId);
    });
    this.panels.set(sessionId, preview);
    return preview;
  }

  private webviewOptions(): vscode.WebviewPanelOptions & vscode.WebviewOptions {
    return {
      enableScripts: true,
      retainContextWhenHidden: false,
      enableFindWidget: true,
      localResourceRoots: [vscode.Uri.joinPath(this.deps.context.extensionUri, 'dist')],
    };
  }
}

export class ReviewPreviewPanel implements vscode.Disposable {
  private ready = false;
  private disposed = false;
  private posting = false;
  private refusal: PreviewPostRefusal | null = null;
  /** The composition the refusal was shown with (null: being composed again); another one clears it. */
  private refusalShownWith: string | null = null;
  /** A compose is in flight / another was asked for meanwhile (one runs at a time, the last ask wins). */
  private composing: Promise<void> | null = null;
  private composeAgain = false;
  private patchsetId: string | null | undefined = undefined;
  /** The last snapshot posted (the test API reads it). */
  private lastPosted: PreviewSnapshot | null = null;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    readonly sessionId: string,
    readonly panel: vscode.WebviewPanel,
    private readonly deps: PreviewDeps,
    private readonly onDisposed: () => void,
  ) {
    const webview = panel.webview;
    const nonce = randomBytes(16).toString('hex');
    const scriptUri = webview.asWebviewUri(vscode.Uri.joinPath(deps.context.extensionUri, 'dist', 'webview.js'));
    webview.html = panelHtml({ cspSource: webview.cspSource, scriptUri: scriptUri.toString(), nonce, title: panel.title, view: 'review-preview' });
    this.disposables.push(
      webview.onDidReceiveMessage((raw: unknown) => this.onMessage(raw)),
      panel.onDidChangeViewState(({ webviewPanel }) => {
        // Without retainContextWhenHidden a hidden webview is torn down; it says ready again.
        if (!webviewPanel.visible) this.ready = false;
      }),
      panel.onDidDispose(() => this.dispose()),
    );
  }

  reveal(): void {
    this.panel.reveal(undefined, false);
  }

  /** What the preview shows now (null before the webview said ready). */
  get shown(): PreviewSnapshot | null {
    return this.lastPosted;
  }

  /** Compose the review again on the host (asks changed, a post landed, the host restarted). */
  recompose(): Promise<void> {
    if (this.composing) {
      this.composeAgain = true;
      return this.composing;
    }
    this.composing = (async () => {
      do {
        this.composeAgain = false;
        await this.deps.exits.preview(this.sessionId);
      } while (this.composeAgain && !this.disposed);
    })().finally(() => {
      this.composing = null;
    });
    return this.composing;
  }

  /** The session was captured again (Capture New Head): compose the new review and read the head again. */
  onSessionChanged(activePatchsetId: string | null): void {
    const moved = this.patchsetId !== undefined && this.patchsetId !== activePatchsetId;
    this.patchsetId = activePatchsetId;
    void this.recompose();
    if (moved) void this.deps.exits.freshness(this.sessionId);
  }

  postStatus(status: HostStatus): void {
    void this.post({ type: 'rennet/preview/hostStatus', status });
  }

  /** Sends the whole snapshot of what is known now. */
  push(): void {
    if (this.disposed) return;
    const preview = this.deps.exits.lastPreview(this.sessionId);
    const freshness = this.deps.exits.lastFreshness(this.sessionId);
    const compositionId = preview?.ok && preview.value.composed.ok ? preview.value.composed.value.descriptor.compositionId : null;
    if (this.refusal && this.refusalShownWith !== null && compositionId !== this.refusalShownWith) {
      // The review changed again since the refusal was said: it no longer describes what is shown.
      this.refusal = null;
      this.refusalShownWith = null;
    }
    if (preview?.ok) {
      const t = preview.value.target;
      this.panel.title = ui`Post review · ${preview.value.label} · ${t.owner}/${t.repo}`;
    }
    const snapshot: PreviewSnapshot = {
      sessionId: this.sessionId,
      preview: preview?.ok ? preview.value : null,
      error: preview && !preview.ok ? preview.error.message : null,
      freshness: freshness?.ok ? freshness.value : null,
      freshnessError: freshness && !freshness.ok ? freshness.error.message : null,
      posting: this.posting,
      refusal: this.refusal,
    };
    void this.post({ type: 'rennet/preview/snapshot', snapshot }).then((delivered) => {
      if (delivered) this.lastPosted = snapshot;
    });
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.ready = false;
    for (const d of this.disposables.splice(0)) d.dispose();
    this.panel.dispose();
    this.onDisposed();
  }

  // ─── Messages ────────────────────────────────────────────────────────────────────────────

  private onMessage(raw: unknown): void {
    const parsed = FromPreview.safeParse(raw);
    if (!parsed.success) {
      this.deps.log.warn(
        `Dropped an invalid message from the Rennet review preview (${this.sessionId}): ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`,
      );
      return;
    }
    const message = parsed.data;
    switch (message.type) {
      case 'rennet/preview/ready':
        this.ready = true;
        this.postStatus(this.deps.host.status ?? { state: 'starting', message: null });
        this.push();
        void this.recompose();
        if (!this.deps.exits.lastFreshness(this.sessionId)) void this.deps.exits.freshness(this.sessionId);
        return;
      case 'rennet/preview/post':
        void this.postReview(message.compositionId);
        return;
      case 'rennet/preview/setVerdict':
        void this.setVerdict(message.verdict);
        return;
      case 'rennet/preview/refresh':
        void Promise.all([this.recompose(), this.deps.exits.freshness(this.sessionId)]);
        return;
      case 'rennet/preview/captureNewHead':
        void vscode.commands.executeCommand('rennet.captureNewHead', this.sessionId);
        return;
      case 'rennet/preview/openLink':
        void this.openLink(message.url);
        return;
      case 'rennet/preview/repair':
        void this.repair(message.action);
        return;
    }
  }

  /** Post exactly the composition shown. A refusal is said in the preview (and the preview composed again when it was stale). */
  private async postReview(compositionId: string): Promise<void> {
    if (this.posting) return;
    this.posting = true;
    this.refusal = null;
    this.refusalShownWith = null;
    this.push();
    const result = await this.deps.exits.post(this.sessionId, compositionId);
    this.posting = false;
    if (!result.ok) {
      const { code, message } = result.error;
      this.deps.log.warn(`Post review of ${this.sessionId} refused (${code}): ${message}`);
      this.refusal = { code, message, compositionId, repreviewed: code === 'stale-composition' };
      if (code === 'head-moved') void this.deps.exits.freshness(this.sessionId);
    }
    // After a post the receipt is read back with the preview; after a stale refusal, the review as it is now.
    await this.recompose();
    if (this.refusal) {
      const now = this.deps.exits.lastPreview(this.sessionId);
      this.refusalShownWith = now?.ok && now.value.composed.ok ? now.value.composed.value.descriptor.compositionId : compositionId;
    }
    this.push();
  }

  private async setVerdict(verdict: 'approve' | 'request-changes' | 'comment' | null): Promise<void> {
    const command = { type: 'setVerdictOverride', verdict } as const;
    const result = await this.deps.asks.command(this.sessionId, command, askActLabel(command));
    if (!result.ok) void notify('error', ui`Rennet: the verdict was not changed: ${result.error.message}`);
    // The ask change composes the preview again; so does this, in case the change was a no-op refusal.
    await this.recompose();
  }

  private async openLink(url: string): Promise<void> {
    const preview = this.deps.exits.lastPreview(this.sessionId);
    const host = preview?.ok ? preview.value.target.host : null;
    if (!host || !isForgeLink(url, host)) {
      this.deps.log.warn(`Review preview: a link that is not an http(s) page of the review's forge was not opened: ${unlinkableUrl(url)}`);
      void notify('warning', ui`Rennet did not open ${url}: it is not a page of the review's forge.`);
      return;
    }
    await vscode.env.openExternal(vscode.Uri.parse(url, true));
  }

  private async repair(action: 'sign-in-github' | 'set-gitlab-token' | 'forge-settings'): Promise<void> {
    const preview = this.deps.exits.lastPreview(this.sessionId);
    const host = preview?.ok ? preview.value.target.host : action === 'set-gitlab-token' ? 'gitlab.com' : 'github.com';
    if (action === 'sign-in-github') await this.deps.forges.repair({ kind: 'sign-in-github', host, label: ui`Sign in to GitHub` });
    else if (action === 'set-gitlab-token') await this.deps.forges.repair({ kind: 'set-gitlab-token', host, label: ui`Set GitLab Token` });
    else await this.deps.forges.repair({ kind: 'forge-settings', label: ui`Open Settings` });
  }

  /** Resolves true when the webview took the message. */
  private post(message: ToPreview): Promise<boolean> {
    if (!this.ready || this.disposed) return Promise.resolve(false);
    return Promise.resolve(this.panel.webview.postMessage(message)).then(
      (delivered) => delivered,
      (error: unknown) => {
        this.deps.log.warn(`Posting ${message.type} to the Rennet review preview failed: ${errorMessage(error)}`);
        return false;
      },
    );
  }
}
