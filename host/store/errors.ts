import { rennetError, type ErrorCode, type RennetError } from '../../protocol';

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

/** A short description of any thrown value, for wrapping into a StoreError message. */
export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code && !error.message.includes(code) ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}

export function storeFailed(message: string, cause?: unknown, detail?: Record<string, string>): StoreError {
  const full = cause === undefined ? message : `${message}: ${describeError(cause)}`;
  return new StoreError('store-failed', full, detail, cause === undefined ? undefined : { cause });
}
