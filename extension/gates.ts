import * as vscode from 'vscode';
import type { GatesReport, MergeMethod, MergeResult } from '../protocol/gates';
import { GatesMerge, GatesRead } from '../protocol/gatesRpc';
import { err, errorMessage, rennetError, type Result } from '../protocol/result';
import { CAPTURE_TIMEOUT_MS, type HostClient } from './hostClient';

/**
 * The window's view of a pull-request session's merge gates (`rennet/gates/read`) and its merge
 * (`rennet/gates/merge`), per session. The Hand off view reads it and redraws on `onDidChange`;
 * nothing here decides whether a request may merge — the host reads the gates again and refuses.
 */
export class GatesState implements vscode.Disposable {
  private readonly reads = new Map<string, Result<GatesReport>>();
  private readonly merges = new Map<string, MergeResult>();
  /** Per session, the newest read: an older answer never replaces a newer one. */
  private readonly seqs = new Map<string, number>();
  private readonly emitter = new vscode.EventEmitter<string>();
  /** What is known of a session's gates changed (carries the session id). */
  readonly onDidChange = this.emitter.event;

  constructor(private readonly host: HostClient) {}

  /** The last gates read for a session (undefined: never read, or a read is under way). */
  last(sessionId: string): Result<GatesReport> | undefined {
    return this.reads.get(sessionId);
  }

  /** The merge this window made of the session's request, if any. */
  merged(sessionId: string): MergeResult | undefined {
    return this.merges.get(sessionId);
  }

  /** Read the request's gates and the local copy's freshness now (forge calls), and keep them. */
  async read(sessionId: string): Promise<Result<GatesReport>> {
    const seq = (this.seqs.get(sessionId) ?? 0) + 1;
    this.seqs.set(sessionId, seq);
    const result = await this.ask(() => this.host.request(GatesRead, { sessionId }, CAPTURE_TIMEOUT_MS));
    if (seq !== this.seqs.get(sessionId)) return result;
    this.reads.set(sessionId, result);
    this.emitter.fire(sessionId);
    return result;
  }

  /** Merge the request by `method`, pinned to `expectHead` (the host refuses a moved head or a gate that does not pass). */
  async merge(sessionId: string, expectHead: string, method: MergeMethod): Promise<Result<MergeResult>> {
    const result = await this.ask(() => this.host.request(GatesMerge, { sessionId, expectHead, method }, CAPTURE_TIMEOUT_MS));
    if (result.ok) {
      this.merges.set(sessionId, result.value);
      this.emitter.fire(sessionId);
    }
    return result;
  }

  dispose(): void {
    this.emitter.dispose();
  }

  private async ask<T>(run: () => Promise<Result<T>>): Promise<Result<T>> {
    try {
      return await run();
    } catch (error) {
      return err(rennetError('host-unavailable', errorMessage(error)));
    }
  }
}
