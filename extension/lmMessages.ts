import { errorMessage } from '../protocol/result';
import type { LmFailureReason, LmMessage } from '../protocol/rpc';

/**
 * Pure parts of the vscode.lm bridge (no runtime `vscode` import; unit-tested in plain Node):
 * the host's JSON transcript → the shape of LanguageModelChatMessages, and a thrown error → a
 * typed failure reason. extension/lm.ts turns plans into real vscode objects.
 */

export type PlannedPart = { kind: 'text'; text: string } | { kind: 'call'; callId: string; name: string; input: Record<string, unknown> } | { kind: 'result'; callId: string; text: string };

export interface PlannedMessage {
  role: 'user' | 'assistant';
  parts: PlannedPart[];
}

/** What an error tool result starts with (LanguageModelToolResultPart has no error flag). */
export const TOOL_ERROR_PREFIX = 'Error: ';

/**
 * One User message per run of user text and tool results (VS Code wants the results of an
 * Assistant message's calls in the User message after it), one Assistant message per assistant
 * entry (its text, then its calls). A tool call input that is not an object is sent as `{}`
 * (the host answered it with an error result already).
 */
export function planMessages(messages: readonly LmMessage[]): PlannedMessage[] {
  const out: PlannedMessage[] = [];
  const user = (): PlannedPart[] => {
    const last = out[out.length - 1];
    if (last?.role === 'user') return last.parts;
    const parts: PlannedPart[] = [];
    out.push({ role: 'user', parts });
    return parts;
  };
  for (const message of messages) {
    if (message.role === 'user') {
      user().push({ kind: 'text', text: message.text });
    } else if (message.role === 'tool-results') {
      const parts = user();
      for (const r of message.results) parts.push({ kind: 'result', callId: r.callId, text: r.isError ? `${TOOL_ERROR_PREFIX}${r.text}` : r.text });
    } else {
      const parts: PlannedPart[] = [];
      if (message.text !== '' || message.toolCalls.length === 0) parts.push({ kind: 'text', text: message.text });
      for (const c of message.toolCalls) {
        const input = typeof c.input === 'object' && c.input !== null && !Array.isArray(c.input) ? c.input : {};
        parts.push({ kind: 'call', callId: c.callId, name: c.name, input });
      }
      out.push({ role: 'assistant', parts });
    }
  }
  // Tool results must sit right after the Assistant message holding their calls: results
  // placed first in a merged User message keep that order (user text follows them).
  for (const m of out) if (m.role === 'user') m.parts.sort((a, b) => rank(a) - rank(b));
  return out;
}

function rank(part: PlannedPart): number {
  return part.kind === 'result' ? 0 : 1;
}

/**
 * A LanguageModelError's `code` (NoPermissions, NotFound, Blocked), a cancellation, or anything
 * else → the typed reason of `rennet/lm/chat`.
 */
export function failureOf(error: unknown, cancelled: boolean): { reason: LmFailureReason; message: string } {
  const code = typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : '';
  const message = error === undefined || error === null ? '' : errorMessage(error);
  if (cancelled || code === 'Canceled' || (error instanceof Error && (error.name === 'Canceled' || error.name === 'CancellationError'))) {
    return { reason: 'cancelled', message: message || 'the request was cancelled' };
  }
  switch (code) {
    case 'NoPermissions':
      return { reason: 'consent-denied', message };
    case 'NotFound':
      return { reason: 'no-model', message };
    case 'Blocked':
      return { reason: 'blocked', message };
    default:
      return { reason: 'error', message };
  }
}
