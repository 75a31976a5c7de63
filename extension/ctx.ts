import type * as vscode from 'vscode';
import type { ActiveReview } from './activeReview';
import type { AskClient } from './asks';
import type { BoardPanels } from './boardPanel';
import type { HostClient } from './hostClient';
import type { LensRuns } from './lenses';

/** What every command factory receives (rust-analyzer style: `(ctx) => async () => {…}`). */
export interface Ctx {
  readonly extension: vscode.ExtensionContext;
  readonly host: HostClient;
  readonly panels: BoardPanels;
  readonly lenses: LensRuns;
  readonly log: vscode.LogOutputChannel;
  readonly asks: AskClient;
  /** The review the editor surfaces follow (gutter marks, comment threads, Open Changes). */
  readonly review: ActiveReview;
}

export type CommandFactory = (ctx: Ctx) => (...args: unknown[]) => Promise<unknown>;
