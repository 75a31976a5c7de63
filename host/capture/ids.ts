import * as crypto from 'node:crypto';
import { CONTENT_ID_HEX_LENGTH } from '../../protocol/limits';
import type { FileChange } from '../../protocol/patchset';

/** Node's one-shot digest (20.12+; VS Code's Electron may be older): a third of createHash's cost on a hunk. */
const oneShotHash = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string }).hash;

/** `prefix-` + the first 16 hex characters of SHA-256 over the parts, NUL-separated. */
export function contentId(prefix: string, parts: readonly string[]): string {
  // The joined string's UTF-8 is the parts' UTF-8 with NUL bytes between: the same digest.
  if (oneShotHash) return `${prefix}-${oneShotHash('sha256', parts.join('\0'), 'hex').slice(0, CONTENT_ID_HEX_LENGTH)}`;
  const hash = crypto.createHash('sha256');
  parts.forEach((part, index) => {
    if (index > 0) hash.update('\0');
    hash.update(part, 'utf8');
  });
  return `${prefix}-${hash.digest('hex').slice(0, CONTENT_ID_HEX_LENGTH)}`;
}

/** contentId over parts given one at a time as UTF-8 (a caller that never holds them all). */
export class PartsHash {
  private readonly hash = crypto.createHash('sha256');
  private first = true;

  add(part: Uint8Array): void {
    if (!this.first) this.hash.update('\0');
    this.first = false;
    this.hash.update(part);
  }

  id(prefix: string): string {
    return `${prefix}-${this.hash.digest('hex').slice(0, CONTENT_ID_HEX_LENGTH)}`;
  }
}

/**
 * A hunk's identity is its path, its verbatim @@ header (which carries line numbers, so two
 * byte-identical hunks in one file never collide) and its body.
 */
export function hunkId(path: string, header: string, body: string): string {
  return contentId('h', [path, header, body]);
}

/** Deterministic JSON: object keys sorted, so equal content always hashes equally. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      const sorted: Record<string, unknown> = {};
      for (const key of Object.keys(v as Record<string, unknown>).sort()) {
        sorted[key] = (v as Record<string, unknown>)[key];
      }
      return sorted;
    }
    return v;
  });
}

/**
 * A file's part of its patchset's id: its fields other than hunks and regions, canonical, then its
 * hunk ids. Hunk ids already hash every hunk's path, header and body, so the patchset id covers
 * the whole capture without hashing every line again.
 */
export function fileIdPart(file: FileChange): string {
  const { hunks, regions: _regions, ...fileMeta } = file;
  return `${canonicalJson(fileMeta)}\n${hunks.map((h) => h.id).join(',')}`;
}

/** The patchset's content address: its fields other than id and files, canonical, then each file's part in files[] order. */
export function patchsetIdOf(meta: unknown, fileParts: readonly string[]): string {
  return contentId('ps', [canonicalJson(meta), ...fileParts]);
}
