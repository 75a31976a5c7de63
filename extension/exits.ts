import * as vscode from 'vscode';
import type { PublishReceipt, ReviewPreview } from '../protocol/exits';
import { err, errorMessage, rennetError, type Result } from '../protocol/result';
import { ExitsPostReview, ExitsPreviewReview, PullRequestFreshnessGet, type PullRequestFreshness } from '../protocol/rpc';
import { CAPTURE_TIMEOUT_MS, type HostClient } from './hostClient';

/**
 * The window's view of the host's forge exits, per session: the last review preview the host
 * composed (`rennet/exits/previewReview`), the request's live head (`rennet/pr/freshness`), and the
 * receipts of posted reviews (from previews and `rennet/exits/posted`). The Hand off view and the
 * preview panels read it and redraw on `onDidChange`; nothing here composes or decides — the host
 * does. Receipts live in the host's store, so a reload or a host restart reads them back.
 */
export class ExitsState implements vscode.Disposable {
  private readonly previews = new Map<string, Result<ReviewPreview>>();
  private readonly fresh = new Map<string, Result<PullRequestFreshness>>();
  /** Receipts seen per session (newest first), from previews and ExitsPosted. */
  private readonly posted = new Map<string, PublishReceipt[]>();
  /** Per session and kind, the newest request: an older answer never replaces a newer one. */
  private readonly seqs = new Map<string, number>();
  private readonly emitter = new vscode.EventEmitter<string>();
  /** What is known of a session's exit changed (carries the session id). */
  readonly onDidChange = this.emitter.event;
  private readonly disposables: vscode.Disposable[] = [this.emitter];

  constructor(private readonly host: HostClient) {
    this.disposables.push(
      host.onExitsPosted((receipt) => {
        this.remember(receipt.sessionId, [receipt]);
        this.emitter.fire(receipt.sessionId);
      }),
    );
  }

  /** The last preview read for a session (undefined: none read yet). */
  lastPreview(sessionId: string): Result<ReviewPreview> | undefined {
    return this.previews.get(sessionId);
  }

  /** The last freshness read for a session (undefined: never checked). */
  lastFreshness(sessionId: string): Result<PullRequestFreshness> | undefined {
    return this.fresh.get(sessionId);
  }

  /** Every receipt known for the session, newest first. */
  receipts(sessionId: string): PublishReceipt[] {
    return this.posted.get(sessionId) ?? [];
  }

  /** Compose the session's review preview on the host now, and keep it. */
  async preview(sessionId: string): Promise<Result<ReviewPreview>> {
    const seq = this.next(`preview|${sessionId}`);
    const result = await this.ask(() => this.host.request(ExitsPreviewReview, { sessionId }));
    if (seq !== this.seqs.get(`preview|${sessionId}`)) return result; // a newer read is in flight or done
    this.previews.set(sessionId, result);
    if (result.ok) this.remember(sessionId, [...(result.value.receipt ? [result.value.receipt] : []), ...result.value.history]);
    this.emitter.fire(sessionId);
    return result;
  }

  /** Re-read the request's live head (a forge call), and keep it. */
  async freshness(sessionId: string): Promise<Result<PullRequestFreshness>> {
    const seq = this.next(`fresh|${sessionId}`);
    const result = await this.ask(() => this.host.request(PullRequestFreshnessGet, { sessionId }));
    if (seq !== this.seqs.get(`fresh|${sessionId}`)) return result;
    this.fresh.set(sessionId, result);
    this.emitter.fire(sessionId);
    return result;
  }

  /** Post the previewed composition. The receipt is kept (the host also pushes `rennet/exits/posted`). */
  async post(sessionId: string, compositionId: string): Promise<Result<PublishReceipt>> {
    // Forge calls: the marker search, the live head, the post and its comments.
    const result = await this.ask(() => this.host.request(ExitsPostReview, { sessionId, compositionId }, CAPTURE_TIMEOUT_MS));
    if (result.ok) {
      this.remember(sessionId, [result.value]);
      this.emitter.fire(sessionId);
    }
    return result;
  }

  /** Forget what was read of a session's exit (its capture changed: the next read is the truth). */
  forgetFreshness(sessionId: string): void {
    if (this.fresh.delete(sessionId)) this.emitter.fire(sessionId);
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }

  private next(key: string): number {
    const seq = (this.seqs.get(key) ?? 0) + 1;
    this.seqs.set(key, seq);
    return seq;
  }

  private async ask<T>(run: () => Promise<Result<T>>): Promise<Result<T>> {
    try {
      return await run();
    } catch (error) {
      return err(rennetError('host-unavailable', errorMessage(error)));
    }
  }

  private remember(sessionId: string, receipts: readonly PublishReceipt[]): void {
    const byMarker = new Map<string, PublishReceipt>();
    for (const r of [...receipts, ...(this.posted.get(sessionId) ?? [])]) if (!byMarker.has(r.markerId)) byMarker.set(r.markerId, r);
    this.posted.set(
      sessionId,
      [...byMarker.values()].sort((a, b) => (a.postedAt < b.postedAt ? 1 : a.postedAt > b.postedAt ? -1 : 0)),
    );
  }
}
