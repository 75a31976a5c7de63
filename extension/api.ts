import type { GenerationSnapshot, HarnessConfig, HostStatus, Lens, Result, Target } from '../protocol';
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
   * do after their QuickPicks, except drafting the boards (`runLenses` does that, when asked).
   * Answers the session id, or the host's refusal.
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
  /**
   * Draft the session's five lens boards (`rennet/review/runLenses`) with the harnesses the
   * `rennet.harness.*` settings and the stored keys name, or with `config`; answers the new (or
   * the running) generation's id, or the host's refusal (also shown as a warning). The session's
   * panel follows the new generation.
   */
  runLenses(sessionId: string, config?: HarnessConfig): Promise<Result<{ generationId: string }>>;
  /**
   * The last generation snapshot the session's panel accepted (`rennet/panel/generation`): null
   * when none was posted yet, or when the session has no panel.
   */
  generation(sessionId: string): GenerationSnapshot | null;
  /** What the panel's `rennet/panel/openCitation` does, for the session's panel (no panel: nothing). */
  openCitation(sessionId: string, citation: { path: string; side: 'base' | 'head'; startLine: number; endLine: number }): Promise<void>;
}
