import * as vscode from 'vscode';
import { PatchsetReadBlob } from '../protocol/rpc';
import type { Side } from '../protocol';
import type { HostClient } from './hostClient';

/** Read-only documents holding a captured base or head blob: `rennet-blob:/<path>?patchset=…&side=…`. */
export const BLOB_SCHEME = 'rennet-blob';

export function blobUri(patchsetId: string, path: string, side: Side): vscode.Uri {
  const query = new URLSearchParams({ patchset: patchsetId, side }).toString();
  return vscode.Uri.from({ scheme: BLOB_SCHEME, path: `/${path}`, query });
}

export class BlobDocumentProvider implements vscode.TextDocumentContentProvider {
  constructor(private readonly host: HostClient) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const query = new URLSearchParams(uri.query);
    const patchsetId = query.get('patchset');
    const side = query.get('side');
    const path = uri.path.replace(/^\//, '');
    if (!patchsetId || (side !== 'base' && side !== 'head')) {
      throw new Error(`Not a Rennet blob address: ${uri.toString()}`);
    }
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
