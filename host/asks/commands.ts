import {
  ASK_MAX_ASKS,
  ASK_MAX_FINDING_DISPOSITIONS,
  ASK_MAX_LINE_COMMENTS,
  ASK_MAX_QUOTE_THREADS,
  ASK_THREAD_MAX_MESSAGES,
  AskCommand,
  lineCommentKey,
  type AskEvent,
  type AskProjection,
  type AskRefusal,
} from '../../protocol/asks';

/** What the host supplies to turn a command into an event. */
export interface MintContext {
  /** The session whose log this is: a finding's board id must name it. */
  sessionId: string;
  /** ISO timestamp of this command. */
  now: string;
  /** Staging ordinal for a new ask: the seq its stage event is expected to get. */
  ordinal: number;
  /** A fresh id: `ask-…` for asks, `qt-…` for threads, `qm-…` for thread messages. */
  newId: (prefix: 'ask' | 'qt' | 'qm') => string;
}

export type Minted = { ok: true; event: AskEvent } | { ok: false; refusal: AskRefusal };

const refused = (code: AskRefusal['code'], message: string): Minted => ({ ok: false, refusal: { code, message } });
const minted = (event: AskEvent): Minted => ({ ok: true, event });

/** Validates an untrusted command (schema and size limits): the parsed command or an 'invalid' refusal. */
export function parseAskCommand(input: unknown): { ok: true; command: AskCommand } | { ok: false; refusal: AskRefusal } {
  const parsed = AskCommand.safeParse(input);
  if (parsed.success) return { ok: true, command: parsed.data };
  const issue = parsed.error.issues[0];
  const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
  return { ok: false, refusal: { code: 'invalid', message: `invalid ask command: ${where}${issue?.message ?? 'unknown'}` } };
}

function boardSession(boardId: string): string {
  return boardId.split('/')[0] ?? '';
}

/**
 * Turns a parsed command into the one event it appends: ids and timestamps minted here,
 * count limits and session scoping checked here. Whether the event applies to the projection
 * (unknown ask, closed thread, no change…) is the fold's check, run by the caller next.
 */
export function mintAskEvent(projection: AskProjection, command: AskCommand, ctx: MintContext): Minted {
  const { now } = ctx;
  switch (command.type) {
    case 'stage': {
      if (projection.asks.length >= ASK_MAX_ASKS) return refused('limit', `a session holds at most ${ASK_MAX_ASKS} asks`);
      if (command.anchor.kind === 'finding' && boardSession(command.anchor.boardId) !== ctx.sessionId) {
        return refused('wrong-session', `board ${command.anchor.boardId} is not a board of session ${ctx.sessionId}`);
      }
      return minted({
        type: 'stage',
        askId: ctx.newId('ask'),
        anchor: command.anchor,
        text: command.text,
        intent: command.intent,
        lane: command.lane,
        createdAt: now,
        editedAt: null,
        ordinal: ctx.ordinal,
      });
    }
    case 'edit': {
      const ask = projection.asks.find((a) => a.id === command.askId);
      if (!ask) return refused('unknown-ask', `no ask ${command.askId}`);
      return minted({ type: 'edit', askId: ask.id, text: command.text ?? ask.text, intent: command.intent ?? ask.intent, editedAt: now });
    }
    case 'retire':
      return minted({ type: 'retire', askId: command.askId, reason: command.reason ?? null, at: now });
    case 'restore':
      return minted({ type: 'restore', askId: command.askId });
    case 'unstage':
      return minted({ type: 'unstage', askId: command.askId });
    case 'quoteOpen': {
      if (command.threadId !== undefined) {
        const thread = Object.hasOwn(projection.quoteThreads, command.threadId) ? projection.quoteThreads[command.threadId] : undefined;
        if (!thread) return refused('unknown-thread', `no quote thread ${command.threadId}`);
        return minted({ type: 'quoteOpen', threadId: command.threadId, anchor: thread.anchor, openedAt: thread.openedAt });
      }
      if (!command.anchor) return refused('invalid', 'quoteOpen names an anchor or a threadId');
      if (Object.keys(projection.quoteThreads).length >= ASK_MAX_QUOTE_THREADS) {
        return refused('limit', `a session holds at most ${ASK_MAX_QUOTE_THREADS} quote threads`);
      }
      return minted({ type: 'quoteOpen', threadId: ctx.newId('qt'), anchor: command.anchor, openedAt: now });
    }
    case 'quoteReply': {
      const thread = Object.hasOwn(projection.quoteThreads, command.threadId) ? projection.quoteThreads[command.threadId] : undefined;
      if (thread && thread.messages.length >= ASK_THREAD_MAX_MESSAGES) {
        return refused('limit', `a quote thread holds at most ${ASK_THREAD_MAX_MESSAGES} messages`);
      }
      return minted({ type: 'quoteReply', threadId: command.threadId, message: { id: ctx.newId('qm'), author: command.author, text: command.text, at: now } });
    }
    case 'quoteClose':
      return minted({ type: 'quoteClose', threadId: command.threadId });
    case 'setVerdictOverride':
      return minted({ type: 'setVerdictOverride', verdict: command.verdict });
    case 'setLineComment': {
      const key = lineCommentKey(command.anchor);
      const existing = Object.hasOwn(projection.lineComments, key) ? projection.lineComments[key] : undefined;
      if (!existing && Object.keys(projection.lineComments).length >= ASK_MAX_LINE_COMMENTS) {
        return refused('limit', `a session holds at most ${ASK_MAX_LINE_COMMENTS} line comments`);
      }
      return minted({ type: 'setLineComment', anchor: command.anchor, text: command.text, createdAt: existing?.createdAt ?? now, updatedAt: now });
    }
    case 'clearLineComment':
      return minted({ type: 'clearLineComment', key: command.key });
    case 'dismissFinding':
    case 'restoreFinding': {
      if (boardSession(command.boardId) !== ctx.sessionId) {
        return refused('wrong-session', `board ${command.boardId} is not a board of session ${ctx.sessionId}`);
      }
      if (command.type === 'dismissFinding' && Object.keys(projection.findingDispositions).length >= ASK_MAX_FINDING_DISPOSITIONS) {
        return refused('limit', `a session holds at most ${ASK_MAX_FINDING_DISPOSITIONS} finding dispositions`);
      }
      return minted({ type: command.type, generationId: command.generationId, boardId: command.boardId, findingId: command.findingId });
    }
  }
}
