import * as vscode from 'vscode';
import { err, errorMessage, rennetError, type Result } from '../protocol/result';
import { ROUNDS_WORKSPACE_DEFAULT, RoundsWorkspaceMode, type Round, type RoundsLandResult, type RoundsLanding } from '../protocol/rounds';
import { RoundsCancel, RoundsDispatch, RoundsLand, RoundsLandingGet, RoundsList, RoundsOrderGet, RoundsRetry, type RoundsOrderResult } from '../protocol/rpc';
import type { HostClient } from './hostClient';
import { readHarnessConfig } from './lenses';

/** The setting that names the round worker: `claude-code`, `codex`, or `scripted:<file>` (tests and demos). */
export const ROUNDS_WORKER_SETTING = 'rennet.rounds.worker';
/** The setting that decides how a review's first round takes its workspace: `share` (default) or `own` (a sibling `rennet/<branch>` beside your checkout). */
export const ROUNDS_WORKSPACE_SETTING = 'rennet.rounds.workspace';
/** A land is one `git merge --ff-only`; it answers quickly. */
const LAND_TIMEOUT_MS = 60_000;

/** The workspace mode the settings name (an unknown value is the default). */
function workspaceMode(): RoundsWorkspaceMode {
  const parsed = RoundsWorkspaceMode.safeParse(vscode.workspace.getConfiguration().get<string>(ROUNDS_WORKSPACE_SETTING, ROUNDS_WORKSPACE_DEFAULT));
  return parsed.success ? parsed.data : ROUNDS_WORKSPACE_DEFAULT;
}
/** The read-only documents that show a work order (`rennet-work-order:/<session>/work-order.md`). */
export const WORK_ORDER_SCHEME = 'rennet-work-order';
/** A dispatch answers once the round has started; the worker's turn then runs in the background. */
const DISPATCH_TIMEOUT_MS = 120_000;

/**
 * The window's view of the host's rounds, per session: the work order a dispatch would send now
 * (or the host's refusal), and the rounds ledger, kept current from `rennet/rounds/changed`.
 * Nothing here decides: the host composes, refuses and runs. The Hand off view reads it.
 */
export class RoundsState implements vscode.Disposable {
  private readonly orders = new Map<string, Result<RoundsOrderResult>>();
  private readonly ledgers = new Map<string, Round[]>();
  private readonly landings = new Map<string, RoundsLanding>();
  private readonly seqs = new Map<string, number>();
  private readonly emitter = new vscode.EventEmitter<string>();
  readonly onDidChange = this.emitter.event;
  private readonly disposables: vscode.Disposable[] = [this.emitter];

  constructor(
    private readonly host: HostClient,
    private readonly secrets: vscode.SecretStorage,
  ) {
    this.disposables.push(
      // The order as the host composed it, read-only: nothing to save, nothing to edit into a dispatch.
      vscode.workspace.registerTextDocumentContentProvider(WORK_ORDER_SCHEME, {
        provideTextDocumentContent: (uri) => {
          const order = this.orders.get(uri.path.split('/')[1] ?? '');
          return order?.ok ? order.value.markdown : 'This work order is no longer current: dispatch again to read the one that would go out now.';
        },
      }),
      host.onRoundsChanged(({ sessionId, round }) => {
        const ledger = [...(this.ledgers.get(sessionId) ?? []).filter((r) => r.id !== round.id), round].sort((a, b) => a.ordinal - b.ordinal);
        this.ledgers.set(sessionId, ledger);
        this.emitter.fire(sessionId);
        // A round that ended changed what is staged: the order is read again.
        if (round.state !== 'running') void this.refresh(sessionId);
      }),
    );
  }

  order(sessionId: string): Result<RoundsOrderResult> | undefined {
    return this.orders.get(sessionId);
  }

  /** Opens the session's current work order, read-only, as Markdown. */
  async showOrder(sessionId: string): Promise<void> {
    const uri = vscode.Uri.from({ scheme: WORK_ORDER_SCHEME, path: `/${sessionId}/work-order.md` });
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.languages.setTextDocumentLanguage(doc, 'markdown');
    await vscode.window.showTextDocument(doc, { preview: true });
  }

  ledger(sessionId: string): Round[] {
    return this.ledgers.get(sessionId) ?? [];
  }

  /** Reads the session's ledger alone, whole (a board panel's rounds area; the order is not read). Fires onDidChange. */
  async readLedger(sessionId: string): Promise<void> {
    const list = await this.ask(() => this.host.request(RoundsList, { sessionId }));
    if (!list.ok) return;
    this.ledgers.set(sessionId, list.value);
    this.emitter.fire(sessionId);
  }

  /** Where the session's sibling commits stand (the landing line), as last read; undefined while unread. */
  landing(sessionId: string): RoundsLanding | undefined {
    return this.landings.get(sessionId);
  }

  /** Reads the order and the ledger again (the asks or the capture changed). */
  async refresh(sessionId: string): Promise<void> {
    const seq = (this.seqs.get(sessionId) ?? 0) + 1;
    this.seqs.set(sessionId, seq);
    const [order, list, landing] = await Promise.all([
      this.ask(() => this.host.request(RoundsOrderGet, { sessionId, workspace: workspaceMode() })),
      this.ask(() => this.host.request(RoundsList, { sessionId })),
      this.ask(() => this.host.request(RoundsLandingGet, { sessionId })),
    ]);
    if (seq !== this.seqs.get(sessionId)) return;
    this.orders.set(sessionId, order);
    if (list.ok) this.ledgers.set(sessionId, list.value);
    if (landing.ok) this.landings.set(sessionId, landing.value);
    else this.landings.delete(sessionId);
    this.emitter.fire(sessionId);
  }

  async dispatch(sessionId: string, digest: string): Promise<Result<Round>> {
    const worker = vscode.workspace.getConfiguration().get<string>(ROUNDS_WORKER_SETTING, 'claude-code');
    const harness = await readHarnessConfig(this.secrets);
    return this.ask(() => this.host.request(RoundsDispatch, { sessionId, digest, worker, harness, workspace: workspaceMode() }, DISPATCH_TIMEOUT_MS));
  }

  async retry(sessionId: string, roundId: string): Promise<Result<Round>> {
    const worker = vscode.workspace.getConfiguration().get<string>(ROUNDS_WORKER_SETTING, 'claude-code');
    const harness = await readHarnessConfig(this.secrets);
    return this.ask(() => this.host.request(RoundsRetry, { sessionId, roundId, worker, harness }, DISPATCH_TIMEOUT_MS));
  }

  /** Land: the branch fast-forwarded to the session's sibling; git's refusal comes back in its words. */
  async land(sessionId: string): Promise<Result<RoundsLandResult>> {
    const landed = await this.ask(() => this.host.request(RoundsLand, { sessionId }, LAND_TIMEOUT_MS));
    await this.refresh(sessionId);
    return landed;
  }

  async cancel(sessionId: string): Promise<Result<{ cancelled: boolean }>> {
    return this.ask(() => this.host.request(RoundsCancel, { sessionId }));
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }

  private async ask<T>(run: () => Promise<Result<T>>): Promise<Result<T>> {
    try {
      return await run();
    } catch (error) {
      return err(rennetError('host-unavailable', errorMessage(error)));
    }
  }
}
