import * as vscode from 'vscode';
import { PatchsetReadBlob, type BlobContent } from '../protocol/rpc';
import { capturedLineCount, readAgainstCaptured, sameReading, type HeadReading } from './capturedHeadsPlan';
import { errorMessage } from '../protocol/result';
import type { HostClient } from './hostClient';

/** Captured head blobs kept (immutable; each can be megabytes); the least recently used goes first. */
const HEAD_BLOBS = 8;
/** Captured files one document is compared with at once (the marks may follow an earlier capture than the threads). */
const CHECKS_PER_DOCUMENT = 4;

type HeadRead = { ok: true; head: BlobContent } | { ok: false; message: string };

/** The newest comparison of a document version with one captured head. */
interface Check {
  version: number;
  reading: Promise<HeadReading>;
  settled: HeadReading | undefined;
  /** The newest settled reading of this document against this captured file (perhaps of an earlier version). */
  last: HeadReading | undefined;
}

/**
 * Whether workspace documents still read as the captured head of their file, so that line numbers
 * of the capture name the same lines there. One head-blob cache and one answer per (document,
 * version, capture, path), shared by the gutter marks, the comment threads and the board panel's
 * Open File (which may also read a file's saved text); the comparison itself is `readAgainstCaptured` (capturedHeadsPlan.ts). What a reading
 * that cannot be had (a binary or unreadable head) means is each caller's to say.
 */
export class CapturedHeads implements vscode.Disposable {
  /** `${patchsetId}|${path}` → the head's read, in least-recently-used order; failed reads are not kept. */
  private readonly heads = new Map<string, Promise<HeadRead>>();
  /** document uri → `${patchsetId}|${path}` → the newest check against that head. */
  private readonly checks = new Map<string, Map<string, Check>>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  /** A document's reading settled differently from the one before it (or for the first time). */
  readonly onDidChangeReading = this.changed.event;
  private readonly disposables: vscode.Disposable[];

  constructor(
    private readonly host: HostClient,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.disposables = [this.changed, vscode.workspace.onDidCloseTextDocument((document) => this.checks.delete(document.uri.toString()))];
  }

  /**
   * How the document reads against the head of `path` in capture `patchsetId`: compared once per
   * document version (an unreadable head is asked for again on the next call).
   */
  reading(document: vscode.TextDocument, patchsetId: string, path: string): Promise<HeadReading> {
    const check = this.checks.get(document.uri.toString())?.get(`${patchsetId}|${path}`);
    const reusable = check && check.version === document.version && check.settled?.kind !== 'unreadable';
    return reusable ? check.reading : this.check(document, patchsetId, path, check).reading;
  }

  /**
   * The newest settled reading of this document against this captured file, without waiting; it may
   * be of an earlier version (undefined: none yet). A check of the current version is started when
   * none was, and `onDidChangeReading` fires when it answers differently.
   */
  peek(document: vscode.TextDocument, patchsetId: string, path: string): HeadReading | undefined {
    const check = this.checks.get(document.uri.toString())?.get(`${patchsetId}|${path}`);
    if (check?.version !== document.version) void this.reading(document, patchsetId, path);
    return check?.last;
  }

  /**
   * How many leading lines of the document are the capture's (`capturedLineCount`): null when that
   * cannot be known (a binary or unreadable head), 0 when the document was edited while its head was
   * read (the edit's own update asks again).
   */
  async verifiedLines(document: vscode.TextDocument, patchsetId: string, path: string): Promise<number | null> {
    const version = document.version;
    const reading = await this.reading(document, patchsetId, path);
    return document.version === version ? capturedLineCount(reading) : 0;
  }

  /**
   * How `text` (a file as read from disk, not an editor's document) reads against the head of
   * `path` in capture `patchsetId`. Not kept: the text has no version to keep it by.
   */
  async readingOfText(text: string, patchsetId: string, path: string): Promise<HeadReading> {
    const read = await this.head(patchsetId, path);
    return read.ok ? readAgainstCaptured(text, read.head) : { kind: 'unreadable', message: read.message };
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
    this.checks.clear();
    this.heads.clear();
  }

  private check(document: vscode.TextDocument, patchsetId: string, path: string, previous: Check | undefined): Check {
    const uri = document.uri.toString();
    const head = `${patchsetId}|${path}`;
    const text = document.getText(); // this version's text, whatever is typed while the head is read
    const reading = this.head(patchsetId, path).then((read): HeadReading => {
      const settled: HeadReading = read.ok ? readAgainstCaptured(text, read.head) : { kind: 'unreadable', message: read.message };
      check.settled = settled;
      if (this.checks.get(uri)?.get(head) === check) {
        const before = check.last;
        check.last = settled;
        if (!sameReading(before, settled)) this.changed.fire(document.uri);
      }
      return settled;
    });
    const check: Check = { version: document.version, reading, settled: undefined, last: previous?.last };
    let ofDocument = this.checks.get(uri);
    if (!ofDocument) this.checks.set(uri, (ofDocument = new Map<string, Check>()));
    ofDocument.delete(head);
    ofDocument.set(head, check);
    while (ofDocument.size > CHECKS_PER_DOCUMENT) ofDocument.delete(ofDocument.keys().next().value as string);
    return check;
  }

  private head(patchsetId: string, path: string): Promise<HeadRead> {
    const key = `${patchsetId}|${path}`; // as in `checks`
    const cached = this.heads.get(key);
    if (cached) {
      this.heads.delete(key);
      this.heads.set(key, cached);
      return cached;
    }
    const read: Promise<HeadRead> = this.host
      .request(PatchsetReadBlob, { patchsetId, path, side: 'head' })
      .then(
        (result): HeadRead => (result.ok ? { ok: true, head: result.value } : { ok: false, message: result.error.message }),
        (error: unknown): HeadRead => ({ ok: false, message: errorMessage(error) }),
      )
      .then((result) => {
        if (!result.ok) {
          // Not kept: the next check asks again.
          if (this.heads.get(key) === read) this.heads.delete(key);
          this.log.warn(`Could not read the captured head of ${path} (capture ${patchsetId}): ${result.message}`);
        }
        return result;
      });
    this.heads.set(key, read);
    while (this.heads.size > HEAD_BLOBS) this.heads.delete(this.heads.keys().next().value as string);
    return read;
  }
}
