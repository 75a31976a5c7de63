import { ErrorCodes, ResponseError, type CancellationToken } from 'vscode-jsonrpc';
import type { z } from 'zod';
import { ERROR_MESSAGE_MAX_CHARS } from './limits';
import { err, errorMessage, rennetError } from './result';
import { checkParams, type RennetNotification, type RennetRequest } from './rpcSchema';

/**
 * The one place a process receives our JSON-RPC messages (the host from the extension, the
 * extension from the host). Every handler is registered through `rpcEdge`, which checks the params
 * against the message's schema before the handler runs:
 * - refused params never reach the handler: a Result request answers `invalid-request` naming the
 *   field and why, any other request a JSON-RPC InvalidParams error; a notification is dropped;
 * - a handler that throws is answered `internal-error` (or InternalError), never left to the
 *   transport;
 * - each refusal and failure is one log line (the method and why, never the params' values).
 * Unknown request methods are answered MethodNotFound by vscode-jsonrpc itself.
 */

export type EdgeLog = (level: 'warn' | 'error', message: string) => void;

/**
 * What registering needs of a connection. vscode-languageserver's `Connection` (host) and
 * vscode-languageclient's `LanguageClient` (extension) both are one.
 */
export interface RpcEndpoint {
  onRequest(method: string, handler: (...args: unknown[]) => Promise<unknown>): { dispose(): unknown };
  onNotification(method: string, handler: (...args: unknown[]) => Promise<void>): { dispose(): unknown };
}

export type EdgeRequestHandler<P extends z.ZodType, R> = (params: z.output<P>, token: CancellationToken) => R | Promise<R>;
export type EdgeNotificationHandler<P extends z.ZodType> = (params: z.output<P>) => void | Promise<void>;

export interface RpcEdge {
  /** Handle `message` with `handler`, which only ever sees params its schema accepted. */
  request<P extends z.ZodType, R>(message: RennetRequest<P, R>, handler: EdgeRequestHandler<P, R>): { dispose(): unknown };
  notification<P extends z.ZodType>(message: RennetNotification<P>, handler: EdgeNotificationHandler<P>): { dispose(): unknown };
}

export function rpcEdge(endpoint: RpcEndpoint, log: EdgeLog): RpcEdge {
  return {
    request<P extends z.ZodType, R>(message: RennetRequest<P, R>, handler: EdgeRequestHandler<P, R>) {
      // Registered by method name, so vscode-jsonrpc hands every shape over (params missing or by
      // position included) instead of answering some itself: the handler gets the params as they
      // came (spread when by position) and the cancellation token last.
      return endpoint.onRequest(message.method, async (...args: unknown[]) => {
        const token = args.pop() as CancellationToken;
        const checked =
          args.length > 1
            ? { ok: false as const, field: '(params)', message: `${message.method}: takes one params object by name, not ${args.length} values by position` }
            : checkParams(message, args[0]);
        if (!checked.ok) {
          log('warn', `refused ${bounded(checked.message)}`);
          return message.refusal === 'result'
            ? err(rennetError('invalid-request', checked.message, { ...message.invalidDetail, field: checked.field }))
            : new ResponseError(ErrorCodes.InvalidParams, bounded(checked.message), { field: checked.field });
        }
        try {
          return await handler(checked.params, token);
        } catch (error) {
          if (error instanceof ResponseError) return error;
          const why = `${message.method} failed: ${errorMessage(error)}`;
          log('error', bounded(why));
          return message.refusal === 'result' ? err(rennetError('internal-error', why)) : new ResponseError(ErrorCodes.InternalError, bounded(why));
        }
      });
    },

    notification<P extends z.ZodType>(message: RennetNotification<P>, handler: EdgeNotificationHandler<P>) {
      return endpoint.onNotification(message.method, async (...args: unknown[]) => {
        const checked = args.length > 1 ? { ok: false as const, message: `${message.method}: takes one params object by name, not ${args.length} values by position` } : checkParams(message, args[0]);
        if (!checked.ok) {
          log('warn', `dropped ${bounded(checked.message)}`);
          return;
        }
        try {
          await handler(checked.params);
        } catch (error) {
          log('error', bounded(`${message.method} failed: ${errorMessage(error)}`));
        }
      });
    },
  };
}

/** Distinct unknown notification methods logged per process; past it they are ignored silently. */
export const UNKNOWN_NOTIFICATIONS_LOGGED = 20;
const METHOD_SHOWN_CHARS = 120;

/**
 * For a connection's catch-all notification handler: logs each unknown method once (a flood of
 * one method, or of made-up names past UNKNOWN_NOTIFICATIONS_LOGGED, is ignored without a line).
 */
export function unknownNotificationLogger(log: EdgeLog): (method: string) => void {
  const seen = new Set<string>();
  return (method) => {
    const name = typeof method === 'string' ? method.slice(0, METHOD_SHOWN_CHARS) : String(method);
    if (seen.has(name) || seen.size >= UNKNOWN_NOTIFICATIONS_LOGGED) return;
    seen.add(name);
    log('warn', `ignored notification ${JSON.stringify(name)}: no such message`);
  };
}

function bounded(text: string): string {
  return text.length > ERROR_MESSAGE_MAX_CHARS ? `${text.slice(0, ERROR_MESSAGE_MAX_CHARS)}… [truncated, ${text.length} characters in all]` : text;
}
