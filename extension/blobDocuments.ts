import * as vscode from 'vscode';
import { PatchsetReadBlob } from '../protocol/rpc';
import type { Side } from '../protocol';
import type { HostClient } from './hostClient';

/**
 * Read-only documents holding a captured base or head blob: `rennet-blob:/<path>?patchset=…&side=…`.
 * `side=absent` is the empty side of an added (no base) or deleted (no head) file, so a diff editor
 * has something to show against; it reads nothing from the host and is always empty.
 */
export const BLOB_SCHEME = 'rennet-blob';

/** What a `rennet-blob:` document shows: a side of a captured file, or the empty side of one. */
export type BlobDocumentSide = Side | 'absent';

export interface BlobAddress {
  patchsetId: string;
  /** Repo-relative, as the capture names it (a rename's base side may use its old path). */
  path: string;
  side: BlobDocumentSide;
}

export function blobUri(patchsetId: string, path: string, side: Side): vscode.Uri {
  return blobAddressUri({ patchsetId, path, side });
}

/** The empty document standing for the side a file does not have (`path` names it in titles). */
export function absentBlobUri(patchsetId: string, path: string): vscode.Uri {
  return blobAddressUri({ patchsetId, path, side: 'absent' });
}

function blobAddressUri({ patchsetId, path, side }: BlobAddress): vscode.Uri {
  const query = new URLSearchParams({ patchset: patchsetId, side }).toString();
  return vscode.Uri.from({ scheme: BLOB_SCHEME, path: `/${path}`, query });
}

/** The address a `rennet-blob:` URI names; null for any other URI or a malformed one. */
export function parseBlobUri(uri: vscode.Uri): BlobAddress | null {
  if (uri.scheme !== BLOB_SCHEME) return null;
  const query = new URLSearchParams(uri.query);
  const patchsetId = query.get('patchset');
  const side = query.get('side');
  const path = uri.path.replace(/^\//, '');
  if (!patchsetId || !path || (side !== 'base' && side !== 'head' && side !== 'absent')) return null;
  return { patchsetId, path, side };
}

export class BlobDocumentProvider implements vscode.TextDocumentContentProvider {
  constructor(private readonly host: HostClient) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const address = parseBlobUri(uri);
    if (!address) throw new Error(`Not a Rennet blob address: ${uri.toString()}`);
    const { patchsetId, path, side } = address;
    if (side === 'absent') return '';
    const result = await this.host.request(PatchsetReadBlob, { patchsetId, path, side });
    if (!result.ok) throw new Error(result.error.message);
    const blob = result.value;
    if (blob.text === null) {
      return `Rennet: ${path} is binary on the ${side} side (${blob.bytes} bytes); it has no text to show.`;
    }
    return blob.truncated
      ? `${blob.text}\n\n[Rennet: truncated — the ${side} blob is ${blob.bytes} bytes; only the start is shown.]`
      : blob.text;
  }
}
