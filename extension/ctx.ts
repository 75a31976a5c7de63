import type * as vscode from 'vscode';
import type { ActiveReview } from './activeReview';
import type { AskClient } from './asks';
import type { BoardPanels } from './boardPanel';
import type { ExitsState } from './exits';
import type { Forges } from './forges';
import type { HostClient } from './hostClient';
import type { LensRuns } from './lenses';
import type { ReviewPreviews } from './reviewPreview';

/** What every command factory receives (rust-analyzer style: `(ctx) => async () => {…}`). */
export interface Ctx {
  readonly extension: vscode.ExtensionContext;
  readonly host: HostClient;
  readonly panels: BoardPanels;
  readonly lenses: LensRuns;
  readonly log: vscode.LogOutputChannel;
  readonly asks: AskClient;
  /** The review the editor surfaces follow (gutter marks, comment threads, Open Changes, Hand off). */
  readonly review: ActiveReview;
  /** Forge settings and credentials, and how a forge refusal is said (with its repair). */
  readonly forges: Forges;
  /** What the host says of each session's exit: previews, the request's head, receipts. */
  readonly exits: ExitsState;
  /** The "Post review" preview tabs. */
  readonly previews: ReviewPreviews;
}

export type CommandFactory = (ctx: Ctx) => (...args: unknown[]) => Promise<unknown>;
