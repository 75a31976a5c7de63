import type { Row } from './durable-db';
import { storeFailed } from './errors';

/**
 * Typed reads of one column of a stored row. A value of the wrong type means the store files are
 * not what this version wrote: a StoreError ('store-failed') naming the column, never a cast.
 */

export function textColumn(row: Row, column: string): string {
  const value = row[column];
  if (typeof value !== 'string') throw storeFailed(`Store column ${column} is not text`);
  return value;
}

export function numberColumn(row: Row, column: string): number {
  const value = row[column];
  if (typeof value !== 'number') throw storeFailed(`Store column ${column} is not a number`);
  return value;
}

export function jsonColumn(row: Row, column: string): unknown {
  const value = textColumn(row, column);
  try {
    return JSON.parse(value) as unknown;
  } catch (error) {
    throw storeFailed(`Store column ${column} is not valid JSON`, error);
  }
}
