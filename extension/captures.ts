import type * as vscode from 'vscode';
import type { Patchset } from '../protocol/patchset';
import { PatchsetGet } from '../protocol/rpc';
import { errorMessage } from '../protocol/result';
import type { HostClient } from './hostClient';

/** Patchsets kept in memory (each can be megabytes; the active one and a few earlier ones suffice). */
const PATCHSET_CACHE = 4;

/**
 * Whole captures read from the host, one window-wide cache: patchsets are immutable, so a read
 * serves the board panels (a frozen generation's earlier capture), the marks and the threads alike.
 * Concurrent reads of one id share one request.
 */
export class Captures {
  private readonly patchsets = new Map<string, Patchset>();
  private readonly loading = new Map<string, Promise<Patchset | null>>();

  constructor(
    private readonly host: HostClient,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  /** A patchset whole; null when the host cannot read it (logged; a later call asks again). */
  get(patchsetId: string): Promise<Patchset | null> {
    const cached = this.patchsets.get(patchsetId);
    if (cached) return Promise.resolve(cached);
    let pending = this.loading.get(patchsetId);
    if (!pending) {
      pending = this.host
        .request(PatchsetGet, { patchsetId })
        .then((result) => {
          if (!result.ok) {
            this.log.warn(`Could not read capture ${patchsetId}: ${result.error.message}`);
            return null;
          }
          this.patchsets.set(patchsetId, result.value);
          while (this.patchsets.size > PATCHSET_CACHE) this.patchsets.delete(this.patchsets.keys().next().value as string);
          return result.value;
        })
        .catch((error: unknown) => {
          this.log.warn(`Could not read capture ${patchsetId}: ${errorMessage(error)}`);
          return null;
        })
        .finally(() => this.loading.delete(patchsetId));
      this.loading.set(patchsetId, pending);
    }
    return pending;
  }

  /** The capture if it is in memory now (no request). */
  peek(patchsetId: string): Patchset | undefined {
    return this.patchsets.get(patchsetId);
  }
}
