import * as vscode from 'vscode';
import type { AskCommand, AskIntent } from '../protocol/asks';
import { ok, type Result } from '../protocol/result';
import { askActLabel, type AskClient } from './asks';
import { editableBody, markdownString, notify } from './ui';
import * as plan from './commentsPlan';
import { ui } from './uiText';

/** Staged asks as comment threads: the comment, its acts, and running an ask command from the editor. */

/** What the comment box holds after an edit: the text typed (a string while editing). */
export function bodyText(body: string | vscode.MarkdownString): string {
  return typeof body === 'string' ? body : body.value;
}

type StageCommand = Extract<AskCommand, { type: 'stage' }>;

/** A staged ask as the one comment of its thread. The edit box edits `body`; `text` is what the host holds. */
export class AskComment implements vscode.Comment {
  body: string | vscode.MarkdownString;
  mode = vscode.CommentMode.Preview;
  readonly author: vscode.CommentAuthorInformation;
  readonly contextValue: string;
  readonly timestamp: Date;

  constructor(
    readonly uri: string,
    readonly sessionId: string,
    readonly askId: string,
    readonly text: string,
    readonly intent: AskIntent,
    at: string,
  ) {
    this.body = markdownString(plan.askMarkdown(text));
    this.author = { name: plan.askAuthor(intent) };
    this.contextValue = plan.askContextValue(intent);
    this.timestamp = new Date(at);
  }
}

/**
 * The acts on a staged ask's thread (its comment's title and context actions): change its intent,
 * edit its text in place, unstage it. Every act goes through AskClient; `drawnAsk` finds the
 * thread the controller drew for a comment, `reconcile` redraws.
 */
export class AskThreadActs {
  constructor(
    private readonly asks: AskClient,
    private readonly drawnAsk: (comment: AskComment) => { thread: vscode.CommentThread } | undefined,
    private readonly reconcile: () => void,
  ) {}

  private askCommentOf(arg: unknown): { comment: AskComment; drawn: { thread: vscode.CommentThread } } | undefined {
    if (!(arg instanceof AskComment)) return undefined;
    const drawn = this.drawnAsk(arg);
    return drawn ? { comment: arg, drawn } : undefined;
  }

  async setIntent(arg: unknown, intent: AskIntent): Promise<void> {
    const found = this.askCommentOf(arg);
    if (!found || found.comment.intent === intent) return;
    await runAskCommand(this.asks, found.comment.sessionId, { type: 'edit', askId: found.comment.askId, intent });
  }

  beginEdit(arg: unknown): void {
    const found = this.askCommentOf(arg);
    if (!found) return;
    // The edit box shows the reviewer's own text, not the escaped Markdown that preview renders.
    found.comment.body = editableBody(found.comment.text);
    found.comment.mode = vscode.CommentMode.Editing;
    found.drawn.thread.comments = [found.comment];
  }

  cancelEdit(arg: unknown): void {
    const found = this.askCommentOf(arg);
    if (!found) return;
    found.comment.body = markdownString(plan.askMarkdown(found.comment.text));
    found.comment.mode = vscode.CommentMode.Preview;
    found.drawn.thread.comments = [found.comment];
    this.reconcile(); // anything that changed while it was being edited
  }

  async saveEdit(arg: unknown): Promise<void> {
    const found = this.askCommentOf(arg);
    if (!found) return;
    const { comment, drawn } = found;
    const text = bodyText(comment.body);
    if (text.trim().length === 0) {
      void notify('warning', ui`An ask needs text; to drop it, use Unstage.`);
      return;
    }
    if (text !== comment.text && !(await runAskCommand(this.asks, comment.sessionId, { type: 'edit', askId: comment.askId, text }))) return; // still editing: nothing is lost
    comment.mode = vscode.CommentMode.Preview;
    if (text === comment.text) {
      comment.body = markdownString(plan.askMarkdown(comment.text));
      drawn.thread.comments = [comment];
    }
    this.reconcile();
  }

  async unstage(arg: unknown): Promise<void> {
    const found = this.askCommentOf(arg);
    if (!found) return;
    await runAskCommand(this.asks, found.comment.sessionId, { type: 'unstage', askId: found.comment.askId });
  }
}

/** Runs an ask command; a host refusal is shown. Answers whether it was accepted. */
export async function runAskCommand(asks: AskClient, sessionId: string, command: AskCommand): Promise<boolean> {
  const result = await asks.command(sessionId, command, askActLabel(command));
  if (!result.ok) void notify('error', ui`Rennet: ${askActLabel(command)} was refused: ${result.error.message}`);
  return result.ok;
}

/** Runs a stage command; a host refusal is shown and changes nothing. Answers the new ask's id. */
export async function stageAsk(asks: AskClient, sessionId: string, command: StageCommand): Promise<Result<string>> {
  const result = await asks.command(sessionId, command, askActLabel(command));
  if (!result.ok) {
    void notify('error', ui`Rennet could not stage the ask: ${result.error.message}`);
    return result;
  }
  const event = result.value.event;
  return ok(event.type === 'stage' ? event.askId : '');
}
