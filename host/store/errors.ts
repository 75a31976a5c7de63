import { errorMessage, rennetError, type ErrorCode, type RennetError } from '../../protocol';

/**
 * The one error type the store throws. `code` is a protocol ErrorCode so the host can hand it
 * across the wire unchanged (`toRennetError()`): 'store-failed' for anything about the files or
 * their format, 'not-found' for a missing session/patchset, 'invalid-request' for a refused call.
 */
export class StoreError extends Error {
  override readonly name = 'StoreError';
  readonly code: ErrorCode;
  readonly detail: Record<string, string> | undefined;

  constructor(code: ErrorCode, message: string, detail?: Record<string, string>, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.detail = detail;
  }

  toRennetError(): RennetError {
    return rennetError(this.code, this.message, this.detail);
  }
}

export function isStoreError(value: unknown): value is StoreError {
  return value instanceof StoreError;
}

/**
 * A short description of any thrown value, for wrapping into a StoreError message: `errorMessage`
 * with a Node error's code in front when the message does not already say it (`ENOSPC: …`).
 */
export function describeError(error: unknown): string {
  const message = errorMessage(error);
  const code = error instanceof Error ? (error as NodeJS.ErrnoException).code : undefined;
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}

export function storeFailed(message: string, cause?: unknown, detail?: Record<string, string>): StoreError {
  const full = cause === undefined ? message : `${message}: ${describeError(cause)}`;
  return new StoreError('store-failed', full, detail, cause === undefined ? undefined : { cause });
}
