import type { AskProjection, GenerationSnapshot, HarnessConfig, HostStatus, Lens, PreviewSnapshot, Result, Target } from '../protocol';
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
  /**
   * The citation marks applied now to the visible editors of the document `uri` (a URI string):
   * one per lens and run of lines, 1-based inclusive lines, sorted; [] when it shows none.
   */
  citationMarks(uri: string): Array<{ lens: Lens; startLine: number; endLine: number }>;
  /**
   * The gutter icons applied now to the visible editors of `uri`: one per run of lines with the
   * same citing lenses (1-based inclusive, sorted), every lens citing them, and the file name of
   * the icon drawn — `lens-<lens>.svg` for one lens; for several, each `lens-<lens>` in canonical
   * order joined by `_` (`lens-sequence_lens-flagged.svg`). [] when it shows none.
   */
  citationGutter(uri: string): Array<{ lenses: Lens[]; icon: string; startLine: number; endLine: number }>;
  /** The Rennet comment threads drawn on the document `uri` (a URI string), by start line; [] when none. */
  commentThreads(uri: string): CommentThreadView[];
  /** A session's ask projection, read from the host now (rejects with the host's message). */
  asks(sessionId: string): Promise<AskProjection>;
  /** Same as "Rennet: Undo Last Ask Action" for a session: what was undone, or why nothing was. */
  undoAsk(sessionId: string): Promise<Result<{ label: string }>>;
  /**
   * Stage a comment ask on lines `startLine`..`endLine` (1-based, inclusive) of the document `uri`
   * in the active review, through the comment box's own "Stage Ask" handler: the new ask's id, or
   * the refusal the reviewer would see.
   */
  stageLineComment(uri: string, startLine: number, endLine: number, text: string): Promise<Result<{ sessionId: string; askId: string }>>;
  /**
   * What the Hand off view shows now for the active review: its description, message, badge (the
   * staged ask count) and rows (label, description, context value; a lane's children under it).
   */
  handOff(): HandOffSnapshot;
  /** The last snapshot the session's review preview accepted (null: no preview open, or not ready yet). */
  reviewPreview(sessionId: string): PreviewSnapshot | null;
}

export interface HandOffRowView {
  label: string;
  description: string | undefined;
  contextValue: string;
}

export interface HandOffSnapshot {
  description: string | undefined;
  message: string | undefined;
  badge: number | undefined;
  rows: Array<HandOffRowView & { children: HandOffRowView[] }>;
}

/** One Rennet comment thread as drawn: a staged ask or a Flagged finding. Lines are 1-based, inclusive. */
export interface CommentThreadView {
  label: string | undefined;
  contextValue: string | undefined;
  startLine: number;
  endLine: number;
  /** Each comment's Markdown source. */
  bodies: string[];
}
