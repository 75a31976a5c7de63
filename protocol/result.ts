import { z } from 'zod';
import { ERROR_MESSAGE_MAX_CHARS } from './limits';

/** A result a caller must decide on: success carries a value, failure a typed error. */
export type Result<T, E = RennetError> = { ok: true; value: T } | { ok: false; error: E };

export const ok = <T>(value: T): Result<T, never> => ({ ok: true, value });
export const err = <E>(error: E): Result<never, E> => ({ ok: false, error });

/** Why a request was refused. Codes are stable; messages are for people. */
export const ErrorCode = z.enum([
  'not-a-repository',
  'unknown-ref',
  'not-a-commit',
  'empty-change',
  'no-merge-base',
  'shallow-missing-merge-base',
  'detached-head',
  'bare-working-tree',
  'invalid-path',
  'not-found',
  'git-failed',
  'store-failed',
  'host-unavailable',
  'invalid-request',
  /** The forge has no credentials for this host, or refused them (401): nothing was sent. */
  'forge-unauthorized',
  /** The forge refused a request or could not be reached; the message carries its words. */
  'forge-failed',
  /** The request's head moved since the capture: the review would land on code nobody read. */
  'head-moved',
  /** What is about to post is not what was previewed (the composition changed since). */
  'stale-composition',
  /** A merge gate does not pass (a failing or pending check, a draft, conflicts, reviews missing): nothing was merged. */
  'gates-blocked',
  /** The receiver failed while handling a request it had accepted; the message carries its words. */
  'internal-error',
]);
export type ErrorCode = z.infer<typeof ErrorCode>;

export const RennetError = z.object({
  code: ErrorCode,
  message: z.string(),
  /** Optional machine-readable detail (the ref that was unknown, the path that was refused). */
  detail: z.record(z.string(), z.string()).optional(),
});
export type RennetError = z.infer<typeof RennetError>;

export function rennetError(code: ErrorCode, message: string, detail?: Record<string, string>): RennetError {
  const bounded = message.length > ERROR_MESSAGE_MAX_CHARS ? `${message.slice(0, ERROR_MESSAGE_MAX_CHARS)}… [truncated, ${message.length} characters in all]` : message;
  return detail ? { code, message: bounded, detail } : { code, message: bounded };
}

/** zod schema for a Result over the wire. */
export const resultSchema = <T extends z.ZodTypeAny>(value: T) => z.discriminatedUnion('ok', [z.object({ ok: z.literal(true), value }), z.object({ ok: z.literal(false), error: RennetError })]);

/** How many causes `errorMessage` follows down a chain (a cycle ends there too). */
const ERROR_CAUSES_SHOWN = 3;

/**
 * The text of any thrown value, for a person: an Error's message, then each cause's in parentheses
 * (`failed (HTTP 500)`; skipped when the text already says it); a string as it is; an object's
 * `message` string; anything else as JSON, else `String(value)`. Never throws.
 */
export function errorMessage(error: unknown): string {
  let text = ownMessage(error);
  let cause = causeOf(error);
  for (let shown = 0; shown < ERROR_CAUSES_SHOWN && cause !== undefined; shown += 1) {
    const more = ownMessage(cause);
    if (more && !text.includes(more)) text = text ? `${text} (${more})` : more;
    cause = causeOf(cause);
  }
  return text;
}

function ownMessage(value: unknown): string {
  if (value instanceof Error) return value.message;
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null) {
    const message = (value as { message?: unknown }).message;
    if (typeof message === 'string') return message;
  }
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function causeOf(value: unknown): unknown {
  return typeof value === 'object' && value !== null && 'cause' in value ? (value as { cause: unknown }).cause : undefined;
}
