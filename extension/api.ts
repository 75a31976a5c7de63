import type { HostStatus, Lens, Result, Target } from '../protocol';
import type { DraftLensResult, HostInfo } from '../protocol/rpc';

/**
 * What `activate` returns: reachable by a test extension through
 * `vscode.extensions.getExtension('rennet.rennet')!.exports`. Nothing here bypasses the host.
 */
export interface RennetApi {
  /** Starts the host if needed and answers its HostHello (pid, store, sessions read back). */
  hostInfo(): Promise<HostInfo>;
  /** Null while the host was never asked to start (it starts lazily on the first command). */
  hostStatus(): HostStatus | null;
  /** Session ids that have an open board panel. */
  openSessions(): string[];
  /**
   * Capture (or reattach) a target without pickers and show its panel — what the Review commands
   * do after their QuickPicks. Answers the session id, or the host's refusal.
   */
  openReview(repo: string, target: Target): Promise<Result<{ sessionId: string; reattached: boolean; captured: boolean }>>;
  /** Same as "Rennet: Restart Host". */
  restartHost(): Promise<HostInfo>;
  /**
   * Draft one lens of a session with a VS Code chat model (`rennet/review/draftLens`): the host
   * selects the model through the extension, runs the seat's tool loop, and answers the generation
   * report. vendor/family default to the `rennet.harness.vscodeLm.*` settings.
   */
  draftLens(sessionId: string, lens: Lens, options?: { vendor?: string; family?: string; model?: string }): Promise<Result<DraftLensResult>>;
}
