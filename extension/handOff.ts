import * as vscode from 'vscode';
import type { AskCommand } from '../protocol/asks';
import { SessionGet } from '../protocol/rpc';
import type { SessionSnapshot } from '../protocol/session';
import type { ActiveReview } from './activeReview';
import type { HandOffSnapshot } from './api';
import { askActLabel, type AskClient } from './asks';
import type { BoardPanels } from './boardPanel';
import { flaggedFindings } from './commentsPlan';
import type { CommandFactory } from './ctx';
import type { ExitsState } from './exits';
import type { GatesState } from './gates';
import { mergeMethodsOf, type MergeMethod } from '../protocol/gates';
import { pullRequestLabel } from '../protocol/forge';
import { ROUNDS_WORKER_SETTING, type RoundsState } from './rounds';
import { isForgeLink, unlinkableUrl } from './forgePlan';
import {
  boardElement,
  editableText,
  editedText,
  findingTitlesOf,
  HAND_OFF_COMMANDS,
  loopsRounds,
  openableSpan,
  planHandOff,
  type HandOffPlan,
  type HandOffRow,
  type HandOffSubject,
} from './handOffPlan';
import { errorMessage } from '../protocol/result';
import type { HostClient } from './hostClient';
import { confirmModal, inputBox, markdownString, notify, treeItem, treeView } from './ui';
import { Md, ui, uiText } from './uiText';

export const HAND_OFF_VIEW = 'rennet.handOff';

/** What a review is composed from, as the Hand off view last saw it. */
interface ComposeInputs {
  sessionId: string;
  patchsetId: string | null;
  projection: unknown;
  generation: unknown;
}

/** Quiet time after an ask change before the host composes the review again (for the exit row). */
const RECOMPOSE_SETTLE_MS = 300;

export interface HandOffDeps {
  host: HostClient;
  review: ActiveReview;
  asks: AskClient;
  exits: ExitsState;
  rounds: RoundsState;
  /** A request's merge gates and its merge. */
  gates: GatesState;
  panels: BoardPanels;
  log: vscode.LogOutputChannel;
}

/**
 * The Hand off view (Source Control container): the active review's staged asks by the exit they
 * leave through, the exit itself, and what the host refuses. Rows are decided in handOffPlan.ts;
 * this maps them onto a TreeView and runs their commands through AskClient (so Undo Last Ask Action
 * undoes them) and the board panel's openers. It follows `ActiveReview`: the session of the focused
 * (else last active) board.
 *
 * For a pull-request session it keeps what the host says of the exit current: the review is
 * composed again (ExitsPreviewReview, local and cheap) when asks change or a review is posted, and
 * the request's live head is read (a forge call) when the view becomes visible or another session
 * becomes active, and on Refresh.
 */
export class HandOffView implements vscode.TreeDataProvider<HandOffRow>, vscode.Disposable {
  private readonly view: vscode.TreeView<HandOffRow>;
  private plan: HandOffPlan = planHandOff({ session: null, projection: null });
  private readonly changeEmitter = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changeEmitter.event;
  /** The session whose head was read since it became active (null: read it when visible). */
  private checkedSession: string | null = null;
  /** The session and capture whose merge gates were last asked for (null: read them when visible). */
  private gatesReadFor: string | null = null;
  private recomposeTimer: ReturnType<typeof setTimeout> | undefined;
  private roundsTimer: ReturnType<typeof setTimeout> | undefined;
  /** What the rounds order was last read for. */
  private roundsFrom: ComposeInputs | null = null;
  /** What the last compose was asked for (compared by identity: the host's pushes are new objects). */
  private composedFrom: ComposeInputs | null = null;
  private readonly disposables: vscode.Disposable[] = [this.changeEmitter];

  /** The commands its rows and title run (main.ts registers them with the rest). */
  readonly commands: Record<string, CommandFactory>;

  constructor(private readonly deps: HandOffDeps) {
    this.view = treeView(HAND_OFF_VIEW, { treeDataProvider: this, showCollapseAll: false });
    this.disposables.push(
      this.view,
      deps.review.onDidChange(() => this.onReviewChanged()),
      deps.exits.onDidChange((sessionId) => {
        if (sessionId === this.sessionId()) this.redraw();
      }),
      deps.rounds.onDidChange((sessionId) => {
        if (sessionId === this.sessionId()) this.redraw();
      }),
      deps.gates.onDidChange((sessionId) => {
        if (sessionId === this.sessionId()) this.redraw();
      }),
      deps.host.onExitsPosted((receipt) => {
        if (receipt.sessionId === this.sessionId()) void this.deps.exits.preview(receipt.sessionId);
        // A posted approval can change review-at-head and required-reviews.
        if (receipt.sessionId === this.sessionId()) void this.deps.gates.read(receipt.sessionId);
      }),
      deps.host.onDidRecover(() => {
        this.checkedSession = null;
        this.gatesReadFor = null;
        this.composedFrom = null;
        this.onReviewChanged();
      }),
      this.view.onDidChangeVisibility(({ visible }) => {
        if (!visible) return;
        // Every time the view is shown, the request's head is read again.
        this.checkedSession = null;
        this.gatesReadFor = null;
        this.composedFrom = null;
        this.onReviewChanged();
      }),
    );

    const command =
      (run: (arg: unknown, ...rest: unknown[]) => Promise<unknown>): CommandFactory =>
      () =>
      (arg?: unknown, ...rest: unknown[]) =>
        run(arg, ...rest);
    this.commands = {
      [HAND_OFF_COMMANDS.open]: command((arg) => this.openInEditor(arg)),
      [HAND_OFF_COMMANDS.reveal]: command((arg) => this.showOnBoard(arg)),
      [HAND_OFF_COMMANDS.edit]: command((arg) => this.editText(arg)),
      [HAND_OFF_COMMANDS.unstage]: command((arg) => this.unstage(arg)),
      [HAND_OFF_COMMANDS.openLink]: command((arg) => this.openLink(arg)),
      [HAND_OFF_COMMANDS.refresh]: command(() => this.refresh()),
      [HAND_OFF_COMMANDS.dispatchRound]: command((arg) => this.dispatchRound(arg)),
      [HAND_OFF_COMMANDS.retryRound]: command((arg, ...rest) => this.retryRound(arg, rest[0])),
      [HAND_OFF_COMMANDS.cancelRound]: command((arg) => this.cancelRound(arg)),
      [HAND_OFF_COMMANDS.land]: command((arg) => this.land(arg)),
      [HAND_OFF_COMMANDS.merge]: command((arg, ...rest) => this.mergeRequest(arg, rest[0], rest[1], rest[2])),
      [HAND_OFF_COMMANDS.refreshGates]: command(() => this.refresh()),
    };
    this.onReviewChanged();
  }

  // ─── TreeDataProvider ─────────────────────────────────────────────────────────────────────

  getTreeItem(row: HandOffRow): vscode.TreeItem {
    const item = treeItem(row.label, row.children ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None);
    item.id = row.id;
    if (row.description) item.description = row.description;
    if (row.tooltip) item.tooltip = row.tooltip instanceof Md ? markdownString(row.tooltip) : row.tooltip;
    item.iconPath = row.iconColor ? new vscode.ThemeIcon(row.icon, new vscode.ThemeColor(row.iconColor)) : new vscode.ThemeIcon(row.icon);
    item.contextValue = row.contextValue;
    if (row.command) item.command = { command: row.command.id, title: uiText(row.command.title), arguments: row.command.arguments ?? [row] };
    return item;
  }

  getChildren(row?: HandOffRow): HandOffRow[] {
    return row ? (row.children ?? []) : this.plan.rows;
  }

  // ─── Test API ─────────────────────────────────────────────────────────────────────────────

  /** What the view shows now: description, message, badge and rows (labels as drawn). */
  snapshot(): HandOffSnapshot {
    const flat = (row: HandOffRow) => ({ label: row.label, description: row.description, contextValue: row.contextValue });
    return {
      description: this.plan.description,
      message: this.plan.message,
      badge: this.plan.badge?.value,
      rows: this.plan.rows.map((row) => ({ ...flat(row), children: (row.children ?? []).map(flat) })),
    };
  }

  dispose(): void {
    clearTimeout(this.recomposeTimer);
    clearTimeout(this.roundsTimer);
    for (const d of this.disposables.splice(0)) d.dispose();
  }

  // ─── Following the active review ─────────────────────────────────────────────────────────

  private sessionId(): string | undefined {
    return this.deps.review.current?.sessionId;
  }

  private onReviewChanged(): void {
    this.redraw();
    const current = this.deps.review.current;
    if (current && loopsRounds(current.session)) {
      // One's own branch or request: what a round would send follows the asks and the capture.
      const inputs = { sessionId: current.sessionId, patchsetId: current.session.session.activePatchsetId, projection: current.projection, generation: null };
      const last = this.roundsFrom;
      if (!last || last.sessionId !== inputs.sessionId || last.patchsetId !== inputs.patchsetId || last.projection !== inputs.projection || this.deps.rounds.order(inputs.sessionId) === undefined) {
        this.roundsFrom = inputs;
        clearTimeout(this.roundsTimer);
        this.roundsTimer = setTimeout(() => void this.deps.rounds.refresh(inputs.sessionId), RECOMPOSE_SETTLE_MS);
      }
      if (current.session.session.target.kind === 'branch') return;
    }
    if (!current || current.session.session.target.kind !== 'pull-request' || !this.view.visible) return;
    const sessionId = current.sessionId;
    // The exit row follows what the review is composed from (asks, capture, boards): compose again
    // once they settle, and only when one of them changed (not on a mere focus change).
    const inputs: ComposeInputs = { sessionId, patchsetId: current.session.session.activePatchsetId, projection: current.projection, generation: current.generation };
    const last = this.composedFrom;
    if (!last || Object.keys(inputs).some((k) => inputs[k as keyof ComposeInputs] !== last[k as keyof ComposeInputs]) || !this.deps.exits.lastPreview(sessionId)) {
      this.composedFrom = inputs;
      clearTimeout(this.recomposeTimer);
      this.recomposeTimer = setTimeout(() => void this.deps.exits.preview(sessionId), RECOMPOSE_SETTLE_MS);
    }
    // Read again for each new capture too: a round's successor on one's own request is ahead of the forge's head until pushed.
    const freshKey = `${sessionId}\0${current.session.session.activePatchsetId ?? ''}`;
    if (this.checkedSession !== freshKey) {
      this.checkedSession = freshKey;
      void this.deps.exits.freshness(sessionId);
    }
    // The merge gates (forge calls) are read when the view shows the session and again for each new capture.
    const gatesKey = `${sessionId}\0${current.session.session.activePatchsetId ?? ''}`;
    if (this.gatesReadFor !== gatesKey) {
      this.gatesReadFor = gatesKey;
      void this.deps.gates.read(sessionId);
    }
  }

  private redraw(): void {
    const current = this.deps.review.current;
    const session = current?.session ?? null;
    const sessionId = current?.sessionId;
    let receipt: { receipt: import('../protocol/exits').PublishReceipt; current: boolean } | null = null;
    let composeRefusal: string | null = null;
    if (sessionId && session?.session.target.kind === 'pull-request') {
      const preview = this.deps.exits.lastPreview(sessionId);
      const compositionId = preview?.ok && preview.value.composed.ok ? preview.value.composed.value.descriptor.compositionId : null;
      if (preview && !preview.ok) composeRefusal = preview.error.message;
      else if (preview?.ok && !preview.value.composed.ok) composeRefusal = preview.value.composed.error.message;
      const receipts = this.deps.exits.receipts(sessionId);
      // The host says where the exit stands (this composition's post, or the last post on this head with nothing staged since).
      const forNow = (preview?.ok ? preview.value.receipt : null) ?? (compositionId ? receipts.find((r) => r.compositionId === compositionId) : undefined);
      const newest = receipts[0];
      receipt = forNow ? { receipt: forNow, current: true } : newest ? { receipt: newest, current: false } : null;
    }
    this.plan = planHandOff({
      session,
      projection: current?.projection ?? null,
      ...(current?.generation ? { findingTitles: findingTitlesOf(flaggedFindings(current.generation)) } : {}),
      receipt,
      composeRefusal,
      freshness: sessionId ? (this.deps.exits.lastFreshness(sessionId) ?? null) : null,
      rounds:
        sessionId && session && loopsRounds(session) ? { order: this.deps.rounds.order(sessionId), ledger: this.deps.rounds.ledger(sessionId), landing: this.deps.rounds.landing(sessionId) } : null,
      gates: sessionId && session?.session.target.kind === 'pull-request' ? { read: this.deps.gates.last(sessionId), merged: this.deps.gates.merged(sessionId) ?? null } : null,
    });
    // '' removes either from the view, as undefined does (TreeView's contract).
    this.view.description = this.plan.description ?? '';
    this.view.message = this.plan.message ?? '';
    const badge: vscode.ViewBadge | undefined = this.plan.badge ? { value: this.plan.badge.value, tooltip: this.plan.badge.tooltip } : undefined;
    this.view.badge = badge;
    // The title bar's Preview Review is offered only where a review can be posted (a request).
    this.setContext('rennet.handOff.canPost', this.plan.mode === 'teammate' || this.plan.mode === 'own-request');
    this.setContext('rennet.handOff.hasReview', this.plan.mode !== null);
    this.changeEmitter.fire();
  }

  // ─── Rounds ───────────────────────────────────────────────────────────────────────────────

  /** Dispatch Round: the order read again, shown (counts, workspace, worker; the whole order on request), then sent bound to its digest. */
  private async dispatchRound(arg: unknown): Promise<unknown> {
    const sessionId = typeof arg === 'string' ? arg : this.sessionId();
    if (!sessionId) return undefined;
    await this.deps.rounds.refresh(sessionId);
    for (;;) {
      const order = this.deps.rounds.order(sessionId);
      if (!order) return undefined;
      if (!order.ok) {
        void notify('warning', ui`Rennet: no round to dispatch — ${order.error.message}`);
        return undefined;
      }
      const { asks, workspace, digest } = order.value;
      const worker = vscode.workspace.getConfiguration().get<string>(ROUNDS_WORKER_SETTING, 'claude-code');
      const n = this.deps.rounds.ledger(sessionId).length + 1;
      const go = ui`Dispatch`;
      const show = ui`Show Work Order`;
      const chosen = await confirmModal(
        'info',
        ui`Dispatch round ${n}: ${asks.length} ask${asks.length === 1 ? '' : 's'} to ${worker}`,
        ui`The work order goes to ${worker} in ${workspace.root}, on ${workspace.workBranch ?? workspace.branch}: it edits and commits there. The round then measures what changed, has the report verified against that diff, and drafts the boards again.`,
        go,
        show,
      );
      if (chosen === show) {
        await this.deps.rounds.showOrder(sessionId);
        continue;
      }
      if (chosen !== go) return undefined;
      const dispatched = await this.deps.rounds.dispatch(sessionId, digest);
      if (!dispatched.ok) {
        if (dispatched.error.code === 'stale-composition') {
          await this.deps.rounds.refresh(sessionId);
          void notify('warning', ui`Rennet: the asks changed since the work order was read; here it is again.`);
          continue;
        }
        void notify('error', ui`Rennet could not dispatch the round: ${dispatched.error.message}`);
        return undefined;
      }
      await this.deps.rounds.refresh(sessionId);
      return dispatched.value;
    }
  }

  private async retryRound(arg: unknown, roundId: unknown): Promise<unknown> {
    const sessionId = typeof arg === 'string' ? arg : this.sessionId();
    if (!sessionId || typeof roundId !== 'string') return undefined;
    const retried = await this.deps.rounds.retry(sessionId, roundId);
    if (!retried.ok) void notify('error', ui`Rennet could not retry the round: ${retried.error.message}`);
    await this.deps.rounds.refresh(sessionId);
    return retried.ok ? retried.value : undefined;
  }

  private async cancelRound(arg: unknown): Promise<unknown> {
    const sessionId = typeof arg === 'string' ? arg : this.sessionId();
    if (!sessionId) return undefined;
    const stop = ui`Cancel Round`;
    const chosen = await confirmModal(
      'warning',
      ui`Cancel the running round?`,
      ui`The coding agent's process is stopped; what it changed so far stays in the workspace, and its asks stay staged.`,
      stop,
    );
    if (chosen !== stop) return undefined;
    const cancelled = await this.deps.rounds.cancel(sessionId);
    if (!cancelled.ok) void notify('error', ui`Rennet could not cancel the round: ${cancelled.error.message}`);
    return cancelled.ok ? cancelled.value : undefined;
  }

  /** Land: the branch fast-forwarded to the review's sibling, after saying what runs where. */
  private async land(arg: unknown): Promise<unknown> {
    const sessionId = typeof arg === 'string' ? arg : this.sessionId();
    if (!sessionId) return undefined;
    await this.deps.rounds.refresh(sessionId);
    const landing = this.deps.rounds.landing(sessionId);
    if (!landing?.workBranch) {
      void notify('info', ui`Rennet: nothing to land — this review's rounds commit on its branch itself.`);
      return undefined;
    }
    const go = ui`Land`;
    const chosen = await confirmModal(
      'info',
      ui`Land ${landing.workBranch} on ${landing.branch}?`,
      ui`Runs git merge --ff-only ${landing.workBranch} in the checkout that has ${landing.branch} out. Git refuses a diverged branch, or a merge that would overwrite your uncommitted edits; then nothing changes.`,
      go,
    );
    if (chosen !== go) return undefined;
    const landed = await this.deps.rounds.land(sessionId);
    if (!landed.ok) {
      void notify('error', ui`Rennet could not land: ${landed.error.message}`);
      return undefined;
    }
    void notify('info', ui`Rennet: ${landed.value.message}`);
    return landed.value;
  }

  private readonly contextKeys = new Map<string, boolean>();

  private setContext(key: string, value: boolean): void {
    if (this.contextKeys.get(key) === value) return;
    this.contextKeys.set(key, value);
    void vscode.commands.executeCommand('setContext', key, value);
  }

  /** Read the request's head and compose the review again (the view's Refresh). */
  async refresh(): Promise<void> {
    const current = this.deps.review.current;
    if (!current) return;
    if (current.session.session.target.kind !== 'pull-request') {
      this.redraw();
      return;
    }
    this.checkedSession = `${current.sessionId}\0${current.session.session.activePatchsetId ?? ''}`;
    this.gatesReadFor = `${current.sessionId}\0${current.session.session.activePatchsetId ?? ''}`;
    await Promise.all([this.deps.exits.freshness(current.sessionId), this.deps.exits.preview(current.sessionId), this.deps.gates.read(current.sessionId)]);
  }

  // ─── Merge ────────────────────────────────────────────────────────────────────────────────

  /**
   * Merge…: one modal naming the head (sha7) with one button per merge method the forge takes;
   * the merge is pinned to that head. A moved head or a gate that no longer passes comes back as
   * the host's stated refusal, and the gates are read again.
   */
  private async mergeRequest(arg: unknown, head: unknown, provider: unknown, number: unknown): Promise<unknown> {
    const sessionId = typeof arg === 'string' ? arg : this.sessionId();
    if (!sessionId || typeof head !== 'string' || (provider !== 'github' && provider !== 'gitlab') || typeof number !== 'number') return undefined;
    const sha7 = head.slice(0, 7);
    const label = pullRequestLabel({ provider, number });
    const forge = provider === 'gitlab' ? 'GitLab' : 'GitHub';
    const buttons: Record<MergeMethod, ReturnType<typeof ui>> = {
      merge: ui`Merge commit at ${sha7}`,
      squash: ui`Squash and merge ${sha7}`,
      rebase: ui`Rebase and merge ${sha7}`,
    };
    const methods = mergeMethodsOf(provider);
    const chosen = await confirmModal(
      'warning',
      ui`Merge ${label} at ${sha7}?`,
      ui`${forge} merges the request pinned to head ${head}, by the method you choose (${methods.join(', ')}). If the head moves first, ${forge} refuses and nothing is merged.`,
      ...methods.map((m) => buttons[m]),
    );
    const method = methods.find((m) => buttons[m] === chosen);
    if (!method) return undefined;
    const merged = await this.deps.gates.merge(sessionId, head, method);
    if (!merged.ok) {
      const refused = merged.error.code === 'head-moved' || merged.error.code === 'gates-blocked';
      void notify(refused ? 'warning' : 'error', refused ? ui`Rennet did not merge ${label}: ${merged.error.message}` : ui`Rennet could not merge ${label}: ${merged.error.message}`);
      await this.deps.gates.read(sessionId);
      return undefined;
    }
    void notify('info', ui`Rennet: merged ${label} at ${sha7} (${method}).`);
    return merged.value;
  }

  // ─── Row commands ────────────────────────────────────────────────────────────────────────

  private subjectOf(arg: unknown): HandOffSubject | undefined {
    if (typeof arg !== 'object' || arg === null) return undefined;
    const subject = (arg as { subject?: HandOffSubject }).subject;
    return subject && typeof subject === 'object' && typeof subject.sessionId === 'string' ? subject : undefined;
  }

  private async session(sessionId: string): Promise<SessionSnapshot | undefined> {
    if (this.deps.review.current?.sessionId === sessionId) return this.deps.review.current.session;
    const open = this.deps.panels.get(sessionId)?.sessionSnapshot;
    if (open) return open;
    try {
      const read = await this.deps.host.request(SessionGet, { sessionId });
      return read.ok ? read.value : undefined;
    } catch {
      return undefined;
    }
  }

  private async openInEditor(arg: unknown): Promise<void> {
    const subject = this.subjectOf(arg);
    if (!subject || subject.kind === 'link') return;
    const span = subject.kind === 'ask' ? openableSpan(subject.anchor) : subject.anchor;
    if (!span) {
      void notify('info', ui`This ask names no captured lines; it has nothing to open in the editor.`);
      return;
    }
    let panel = this.deps.panels.get(subject.sessionId);
    if (!panel) {
      await vscode.commands.executeCommand('rennet.showBoard', subject.sessionId);
      panel = this.deps.panels.get(subject.sessionId);
    }
    if (!panel) return; // Show Board said why
    await panel.openSpan(span);
  }

  private async showOnBoard(arg: unknown): Promise<void> {
    const subject = this.subjectOf(arg);
    if (!subject || subject.kind !== 'ask') return;
    const element = boardElement(subject.anchor);
    if (!element) {
      void notify('info', ui`This ask is not about a board element; it has nothing to show on the board.`);
      return;
    }
    await vscode.commands.executeCommand('rennet.revealElement', { sessionId: subject.sessionId, ...element });
  }

  private async editText(arg: unknown): Promise<void> {
    const subject = this.subjectOf(arg);
    if (!subject || subject.kind === 'link') return;
    const multiline = /\r|\n/.test(subject.text);
    const value = await inputBox({
      title: subject.kind === 'ask' ? ui`Rennet: Edit Ask` : ui`Rennet: Edit Line Comment`,
      prompt: multiline ? ui`The text of the ask (⏎ stands for a line break). Saving is one undoable act.` : ui`The text of the ask. Saving is one undoable act.`,
      value: editableText(subject.text),
      ignoreFocusOut: true,
      validateInput: (v) => (v.trim().length === 0 ? ui`An ask needs text; to drop it, use Unstage.` : undefined),
    });
    if (value === undefined) return;
    const text = editedText(value);
    if (text === subject.text) return;
    const command: AskCommand = subject.kind === 'ask' ? { type: 'edit', askId: subject.askId, text } : { type: 'setLineComment', anchor: subject.anchor, text };
    await this.run(subject.sessionId, command);
  }

  private async unstage(arg: unknown): Promise<void> {
    const subject = this.subjectOf(arg);
    if (!subject || subject.kind === 'link') return;
    const command: AskCommand = subject.kind === 'ask' ? { type: 'unstage', askId: subject.askId } : { type: 'clearLineComment', key: subject.key };
    await this.run(subject.sessionId, command);
  }

  private async openLink(arg: unknown): Promise<void> {
    const subject = this.subjectOf(arg);
    if (!subject || subject.kind !== 'link') return;
    const session = await this.session(subject.sessionId);
    const target = session?.session.target;
    if (!target || target.kind !== 'pull-request' || !isForgeLink(subject.url, target.host)) {
      this.deps.log.warn(`Hand off: a link that is not an http(s) page of the review's forge was not opened: ${unlinkableUrl(subject.url)}`);
      void notify('warning', ui`Rennet did not open ${subject.url}: it is not a page of the review's forge.`);
      return;
    }
    await vscode.env.openExternal(vscode.Uri.parse(subject.url, true));
  }

  private async run(sessionId: string, command: AskCommand): Promise<void> {
    try {
      const result = await this.deps.asks.command(sessionId, command, askActLabel(command));
      if (!result.ok) void notify('error', ui`Rennet: ${askActLabel(command)} was refused: ${result.error.message}`);
    } catch (error) {
      void notify('error', ui`Rennet: ${askActLabel(command)} failed: ${errorMessage(error)}`);
    }
  }
}
