/**
 * Which captured file, side and capture an editor document shows, from its URI alone: a file of
 * the checkout, or a `rennet-blob:` document. Pure (no `vscode` import: a `vscode.Uri` fits
 * `DocumentUri`), so the gutter marks, the comment threads and Open Changes share one answer and
 * unit tests run in plain Node. Whether a checkout file still reads as its capture is asked of
 * `CapturedHeads` (capturedHeads.ts).
 */
import * as nodePath from 'node:path';
import type { Side } from '../protocol/patchset';
import { checkRepoRelativePath, repoRelativePath } from './paths';

/**
 * Read-only documents holding a captured base or head blob: `rennet-blob:/<path>?patchset=…&side=…`.
 * `side=absent` is the empty side of an added (no base) or deleted (no head) file, so a diff editor
 * has something to show against. blobDocuments.ts serves them.
 */
export const BLOB_SCHEME = 'rennet-blob';

/**
 * The schemes of documents that show the review's own captured lines: checkout files and
 * `rennet-blob:` documents. Only these take commenting ranges, asks' and findings' threads, and
 * citation marks. Any other scheme — a round's own diff (`rennet-round:`, whose line numbers are
 * the round's, measured between two checkpoints, not the review's patchset), a work order, an
 * untitled buffer — takes none: writing an ask there would key it on coordinates of another diff.
 */
export function isReviewDocumentScheme(scheme: string): boolean {
  return scheme === 'file' || scheme === BLOB_SCHEME;
}

/** What a `rennet-blob:` document shows: a side of a captured file, or the empty side of one. */
export type BlobDocumentSide = Side | 'absent';

export interface BlobAddress {
  patchsetId: string;
  /** Repo-relative, as the capture names it (a rename's base side may use its old path). */
  path: string;
  side: BlobDocumentSide;
}

/** The parts of a URI read here (`vscode.Uri` has them). */
export interface DocumentUri {
  scheme: string;
  path: string;
  query: string;
  fsPath: string;
}

/** The address a `rennet-blob:` URI names; null for any other URI or a malformed one. */
export function parseBlobUri(uri: Pick<DocumentUri, 'scheme' | 'path' | 'query'>): BlobAddress | null {
  if (uri.scheme !== BLOB_SCHEME) return null;
  const query = new URLSearchParams(uri.query);
  const patchsetId = query.get('patchset');
  const side = query.get('side');
  const path = uri.path.replace(/^\//, '');
  if (!patchsetId || !path || (side !== 'base' && side !== 'head' && side !== 'absent')) return null;
  return { patchsetId, path, side };
}

/**
 * What a document shows: a checkout file under the review's repository (the head side of whichever
 * capture is compared with it), one side of a file of one capture, or the empty stand-in side of an
 * added or deleted file (which shows no captured lines).
 */
export type DocumentRef = { kind: 'workspace'; path: string } | { kind: 'blob'; patchsetId: string; path: string; side: Side } | { kind: 'absent'; patchsetId: string; path: string };

/** A document that shows captured lines. */
export type TextDocumentRef = Exclude<DocumentRef, { kind: 'absent' }>;

/**
 * Which captured file a document shows; null when it is neither a checkout file under `repoRoot`
 * nor a well-formed `rennet-blob:` document with a repo-relative path. `pathApi` is node's path
 * for the running platform (tests pass posix or win32).
 */
export function documentRef(uri: DocumentUri, repoRoot: string, pathApi: Pick<typeof nodePath, 'relative' | 'sep'> = nodePath): DocumentRef | null {
  if (uri.scheme === 'file') {
    const path = repoRelativePath(repoRoot, uri.fsPath, pathApi);
    return path ? { kind: 'workspace', path } : null;
  }
  const blob = parseBlobUri(uri);
  if (!blob || !checkRepoRelativePath(blob.path).ok) return null;
  if (blob.side === 'absent') return { kind: 'absent', patchsetId: blob.patchsetId, path: blob.path };
  return { kind: 'blob', patchsetId: blob.patchsetId, path: blob.path, side: blob.side };
}
