import * as vscode from 'vscode';
import { boundedQuote, type QuoteAnchor } from '../protocol/asks';
import { askLaneFor } from '../protocol/session';
import { errorMessage, type Result } from '../protocol/result';
import type { ActiveReview } from './activeReview';
import type { AskClient } from './asks';
import { markdownString, notify, statusMessage } from './ui';
import * as plan from './commentsPlan';
import { ui } from './uiText';
import { runAskCommand, stageAsk } from './askThreads';

/** Flagged findings as comment threads (behind `rennet.editor.findingThreads`): the comment, the setting and the acts. */

export const FINDING_THREADS_SETTING = 'findingThreads';

/**
 * A finding as the one comment of its thread. sessionId, generationId, lens and elementId say
 * where it sits on its board: `rennet.revealElement` (this comment's title action) reads them.
 */
export class FindingComment implements vscode.Comment {
  readonly body: vscode.MarkdownString;
  readonly mode = vscode.CommentMode.Preview;
  readonly author: vscode.CommentAuthorInformation;
  readonly contextValue = 'finding';
  readonly lens = 'flagged';
  readonly sessionId: string;
  readonly generationId: string;
  readonly elementId: string;

  constructor(finding: plan.FindingPlacement) {
    this.body = markdownString(plan.findingMarkdown(finding));
    this.author = { name: plan.findingAuthor(finding) };
    this.sessionId = finding.sessionId;
    this.generationId = finding.generationId;
    this.elementId = finding.findingId;
  }
}

export function findingThreadsOn(): boolean {
  return vscode.workspace.getConfiguration('rennet.editor').get<boolean>(FINDING_THREADS_SETTING, true);
}

export async function toggleFindingThreads(): Promise<void> {
  const config = vscode.workspace.getConfiguration('rennet.editor');
  const next = !config.get<boolean>(FINDING_THREADS_SETTING, true);
  await config.update(FINDING_THREADS_SETTING, next, vscode.ConfigurationTarget.Global);
  statusMessage(next ? ui`Rennet: Flagged findings shown in the editor` : ui`Rennet: Flagged findings hidden from the editor`, 4000);
}

/** What the finding acts use (CommentsDeps, comments.ts, adds the captured heads). */
export interface FindingActsDeps {
  asks: AskClient;
  review: ActiveReview;
  log: vscode.LogOutputChannel;
  /** Ask the session's agent about a span (extension/explain.ts): Discuss's anchored turn. */
  explain(sessionId: string, anchor: QuoteAnchor, threadId?: string): Promise<Result<{ threadId: string }>>;
}

/**
 * The acts on a Flagged finding's thread: request a change, dismiss or restore it, discuss it with
 * the agent. `findingOf` finds the finding the controller drew on a thread.
 */
export class FindingThreadActs {
  constructor(
    private readonly deps: FindingActsDeps,
    private readonly findingOf: (arg: unknown) => { finding: plan.FindingPlacement; acts: plan.FindingActs } | undefined,
  ) {}

  async requestFinding(arg: unknown): Promise<void> {
    const found = this.findingOf(arg);
    const view = this.deps.review.current;
    if (!found || !view || view.sessionId !== found.finding.sessionId) return;
    if (found.acts.requestStaged) {
      void notify('info', ui`A change request for this finding is already staged.`);
      return;
    }
    await stageAsk(this.deps.asks, view.sessionId, plan.planFindingRequest(found.finding, askLaneFor(view.session)));
  }

  /** Dismiss or restore a finding. */
  async decideFinding(arg: unknown, type: 'dismissFinding' | 'restoreFinding'): Promise<void> {
    const found = this.findingOf(arg);
    if (!found) return;
    const { generationId, boardId, findingId, sessionId } = found.finding;
    await runAskCommand(this.deps.asks, sessionId, { type, generationId, boardId, findingId });
  }

  /**
   * Discuss: the board shows the finding, and the agent is asked about it in a quote thread on its
   * claim — the open one when there is one (a closed one is reopened first), else a new one the
   * host opens — exactly as the panel's Discuss does. A failure (no harness, the model's error) is
   * said here; the thread keeps the question.
   */
  async discussFinding(arg: unknown): Promise<void> {
    const found = this.findingOf(arg);
    if (!found) return;
    const { sessionId, generationId, findingId, title } = found.finding;
    // The panel's Discuss quotes the same way, so both name one thread.
    const anchor: QuoteAnchor = { kind: 'quote', generationId, lens: 'flagged', elementId: findingId, quote: boundedQuote(title) };
    // A detached thread is on no passage any more: Discuss opens a fresh one rather than reviving it.
    const existing = plan.discussThreadOn(this.deps.asks.projection(sessionId) ?? null, anchor);
    if (existing && !existing.open && !(await runAskCommand(this.deps.asks, sessionId, { type: 'quoteOpen', threadId: existing.threadId }))) return;
    try {
      await vscode.commands.executeCommand('rennet.revealElement', { sessionId, generationId, lens: 'flagged', elementId: findingId });
    } catch (error) {
      this.deps.log.warn(`Could not show finding ${findingId} on its board: ${errorMessage(error)}`);
    }
    const result = await this.deps.explain(sessionId, anchor, existing?.threadId);
    if (!result.ok) void notify('warning', ui`Rennet could not discuss the finding: ${result.error.message}`);
  }
}
