import * as vscode from 'vscode';
import { PatchsetReadBlob } from '../protocol/rpc';
import type { Side } from '../protocol';
import { BLOB_SCHEME, parseBlobUri, type BlobAddress } from './documentRefs';
import type { HostClient } from './hostClient';

/**
 * The `rennet-blob:` documents (address format and parsing in documentRefs.ts): a captured base or
 * head blob, read-only. The `absent` side reads nothing from the host and is always empty.
 */

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
    return blob.truncated ? `${blob.text}\n\n[Rennet: truncated — the ${side} blob is ${blob.bytes} bytes; only the start is shown.]` : blob.text;
  }
}
