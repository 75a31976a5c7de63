import * as vscode from 'vscode';
import type { AskCommand, AskProjection, AskReceipt } from '../protocol/asks';
import { err, errorMessage, rennetError, type Result } from '../protocol/result';
import { AsksCommand, AsksGet, AsksUndo, type AsksCommandResult } from '../protocol/rpc';
import type { HostClient } from './hostClient';

/**
 * The window's view of the host's ask logs: the last projection the host pushed per session, and
 * the receipts of this window's own acts (the undo stack). Every surface (board panel, comment
 * threads) sends its acts through `command` and redraws from `onDidChange`; nothing here decides
 * what an act means — the host's fold does.
 */

/** Receipts kept per session; older acts stay in the log but this window no longer offers to undo them. */
const UNDO_DEPTH = 100;

export interface AskChange {
  sessionId: string;
  projection: AskProjection;
}

interface UndoEntry {
  receipt: AskReceipt;
  label: string;
}

export class AskClient implements vscode.Disposable {
  private readonly projections = new Map<string, AskProjection>();
  /** Highest seq seen per session, so a late answer cannot replace a newer push. */
  private readonly seqs = new Map<string, number>();
  /** Projections accepted per session (any source), so a slow read can tell it was overtaken. */
  private readonly accepted = new Map<string, number>();
  private readonly undo = new Map<string, UndoEntry[]>();
  private readonly emitter = new vscode.EventEmitter<AskChange>();
  /** A session's projection changed (any append, from any surface or process), or its undo stack did. */
  readonly onDidChange = this.emitter.event;
  private readonly disposables: vscode.Disposable[] = [this.emitter];

  constructor(
    private readonly host: HostClient,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.disposables.push(
      host.onAsksChanged(({ sessionId, seq, projection }) => this.accept(sessionId, seq, projection)),
      host.onDidRecover(() => {
        for (const sessionId of [...this.projections.keys()]) void this.refresh(sessionId);
      }),
    );
  }

  /** The last projection known for a session (undefined: not read yet; call `refresh`). */
  projection(sessionId: string): AskProjection | undefined {
    return this.projections.get(sessionId);
  }

  /** Reads the projection from the host (reads never write) and announces it. */
  async refresh(sessionId: string): Promise<Result<AskProjection>> {
    // A read carries no seq: if a push (or an act's answer) landed while it was in flight, that
    // one is at least as new, and the read must not replace it.
    const acceptedBefore = this.accepted.get(sessionId) ?? 0;
    try {
      const result = await this.host.request(AsksGet, { sessionId });
      if (result.ok && (this.accepted.get(sessionId) ?? 0) === acceptedBefore) this.accept(sessionId, null, result.value);
      return result;
    } catch (error) {
      return err(rennetError('host-unavailable', errorMessage(error)));
    }
  }

  /**
   * Runs one reviewer act. On success the receipt joins the session's undo stack under `label`
   * ("Stage ask on src/app.ts:5") and the new projection is announced; a refusal appends nothing.
   */
  async command(sessionId: string, command: AskCommand, label: string): Promise<Result<AsksCommandResult>> {
    let result: Result<AsksCommandResult>;
    try {
      result = await this.host.request(AsksCommand, { sessionId, command });
    } catch (error) {
      return err(rennetError('host-unavailable', errorMessage(error)));
    }
    if (!result.ok) {
      this.log.warn(`Ask ${command.type} refused in ${sessionId}: ${result.error.message}`);
      return result;
    }
    const stack = this.undo.get(sessionId) ?? [];
    stack.push({ receipt: result.value.receipt, label });
    if (stack.length > UNDO_DEPTH) stack.splice(0, stack.length - UNDO_DEPTH);
    this.undo.set(sessionId, stack);
    this.accept(sessionId, result.value.seq, result.value.projection, true);
    return result;
  }

  /** What `undoLast` would undo, for the surfaces' labels; null: nothing. */
  undoLabel(sessionId: string): string | null {
    const stack = this.undo.get(sessionId);
    return stack?.[stack.length - 1]?.label ?? null;
  }

  /**
   * Undoes this window's last act in the session: appends its receipt's inverse (the next append;
   * it survives restarts like any other). A refused undo (the act was undone elsewhere, or no
   * longer applies) leaves the entry off the stack and says why.
   */
  async undoLast(sessionId: string): Promise<Result<AsksCommandResult & { label: string }>> {
    const stack = this.undo.get(sessionId);
    const entry = stack?.pop();
    if (!entry) return err(rennetError('not-found', 'There is nothing to undo in this review.'));
    let result: Result<AsksCommandResult>;
    try {
      result = await this.host.request(AsksUndo, { sessionId, receipt: entry.receipt });
    } catch (error) {
      stack?.push(entry); // the host never saw it: keep it for another try
      return err(rennetError('host-unavailable', errorMessage(error)));
    }
    if (!result.ok) {
      // The stack changed (its top is gone): surfaces relabel their Undo.
      const projection = this.projections.get(sessionId);
      if (projection) this.emitter.fire({ sessionId, projection });
      return result;
    }
    this.accept(sessionId, result.value.seq, result.value.projection, true);
    return { ok: true, value: { ...result.value, label: entry.label } };
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }

  private accept(sessionId: string, seq: number | null, projection: AskProjection, force = false): void {
    if (seq !== null) {
      const seen = this.seqs.get(sessionId) ?? 0;
      if (seq < seen && !force) return;
      this.seqs.set(sessionId, Math.max(seen, seq));
    }
    this.projections.set(sessionId, projection);
    this.accepted.set(sessionId, (this.accepted.get(sessionId) ?? 0) + 1);
    this.emitter.fire({ sessionId, projection });
  }
}

/** The words an Undo button or notification uses for an act ("Undo: dismiss finding"). */
export function askActLabel(command: AskCommand): string {
  switch (command.type) {
    case 'stage': {
      const where =
        command.anchor.kind === 'line'
          ? ` on ${command.anchor.path}:${command.anchor.startLine}`
          : command.anchor.kind === 'finding'
            ? ' on a finding'
            : command.anchor.kind === 'quote'
              ? ' on board prose'
              : '';
      return `stage ${command.intent === 'request-change' ? 'change request' : command.intent}${where}`;
    }
    case 'edit':
      return 'edit ask';
    case 'retire':
      return 'retire ask';
    case 'restore':
      return 'restore ask';
    case 'unstage':
      return 'unstage ask';
    case 'quoteOpen':
      return command.threadId ? 'reopen thread' : 'open thread';
    case 'quoteReply':
      return 'reply';
    case 'quoteClose':
      return 'close thread';
    case 'setVerdictOverride':
      return command.verdict ? `set verdict to ${command.verdict}` : 'clear verdict';
    case 'setLineComment':
      return 'line comment';
    case 'clearLineComment':
      return 'clear line comment';
    case 'dismissFinding':
      return 'dismiss finding';
    case 'restoreFinding':
      return 'restore finding';
  }
}
