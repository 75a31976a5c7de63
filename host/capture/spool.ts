import { closeSync, mkdtempSync, openSync, readSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FileChange, Patchset, PatchsetTotals } from '../../protocol/patchset';
import { addToTotals, compareUtf8, emptyTotals } from './fileList';
import { fileIdPart, patchsetIdOf } from './ids';

/** Serialized files are written to the spool in batches of about this many bytes, and read back in chunks of about as many. */
export const SPOOL_CHUNK_BYTES = 1 << 20;

/** A captured patchset whose files are in a spool: its id, its store row, and its JSON read back. */
export interface SpooledPatchset {
  id: string;
  /** What the store's row records (Store.beginPatchsetBody). */
  row: { id: string; base: string; head: string; baseRef: string; headRef: string; targetKind: Patchset['targetKind']; fileCount: number; hunkCount: number };
  totals: PatchsetTotals;
  /** `JSON.stringify` of the patchset as UTF-8, in chunks of about SPOOL_CHUNK_BYTES (each a buffer of its own). Can be read more than once. */
  chunks(): Generator<Buffer>;
  /** Closes and removes the spool. */
  dispose(): void;
}

interface Entry {
  path: string;
  /** The file's JSON: its byte range in the spool file, or its bytes when there is no file. */
  offset: number;
  length: number;
  bytes: Buffer | null;
  /** The file itself while it may still change (a binary file: settleOversizedFiles); serialized at finish. */
  held: FileChange | null;
  /** fileIdPart(file). */
  idPart: string;
}

/**
 * The files of one capture as they are parsed, each serialized (`JSON.stringify`, the bytes
 * capturePatchset's patchset has for it) into an unlinked temp file and dropped, so a capture
 * holds per file only its path, its place in the spool and its part of the patchset id — never
 * the hunks and lines. `finish` sorts by path, totals the files and computes the id exactly as
 * capturePatchset does. Without a temp directory (full, read-only) the bytes stay in memory.
 */
export class PatchsetSpool {
  private readonly entries: Entry[] = [];
  private totals = emptyTotals();
  private dir: string | null = null;
  private fd: number | null = null;
  /** Bytes written to the spool file so far. */
  private written = 0;
  private batch: Buffer[] = [];
  private batchBytes = 0;
  private readonly chunkBytes: number;

  /** `tempRoot`: where the spool's temp directory goes; `chunkBytes`: the batch and read-back size (SPOOL_CHUNK_BYTES). */
  constructor(options: { tempRoot?: string; chunkBytes?: number } = {}) {
    this.chunkBytes = options.chunkBytes ?? SPOOL_CHUNK_BYTES;
    try {
      this.dir = mkdtempSync(join(options.tempRoot ?? tmpdir(), 'rennet-capture-'));
      const file = join(this.dir, 'files');
      this.fd = openSync(file, 'w+', 0o600);
      try {
        // The descriptor stays valid without the name (Windows refuses while open: removed with its directory).
        unlinkSync(file);
      } catch {
        // removed with its directory at dispose
      }
    } catch {
      this.dispose();
    }
  }

  /** Spools one parsed file (a binary one is held as it is: it has no hunks). */
  add(file: FileChange): void {
    if (file.binary) {
      this.entries.push({ path: file.path, offset: 0, length: 0, bytes: null, held: file, idPart: '' });
      return;
    }
    this.entries.push(this.spooled(file));
  }

  /** Drops every file added so far. */
  reset(): void {
    this.entries.length = 0;
    this.totals = emptyTotals();
    this.batch = [];
    this.batchBytes = 0;
    // The spool file's old bytes are simply never read: entries point past them.
  }

  /** The files held unserialized (git called them binary), for settleOversizedFiles to settle. */
  heldFiles(): FileChange[] {
    return this.entries.flatMap((e) => (e.held ? [e.held] : []));
  }

  /**
   * Serializes the held files, orders everything by path and computes the id over
   * `meta(totals)` — the patchset's fields between id and files, in their JSON order.
   */
  finish(meta: (totals: PatchsetTotals) => Omit<Patchset, 'id' | 'files'>): SpooledPatchset {
    for (let i = 0; i < this.entries.length; i++) {
      const held = (this.entries[i] as Entry).held;
      if (held) this.entries[i] = this.spooled(held);
    }
    this.flush();
    const entries = this.entries.sort((a, b) => compareUtf8(a.path, b.path));
    const totals = this.totals;
    const fields = meta(totals);
    const id = patchsetIdOf(
      fields,
      entries.map((e) => e.idPart),
    );
    for (const entry of entries) entry.idPart = '';
    // files is the last field: its array is written between the two halves of this.
    const empty = JSON.stringify({ id, ...fields, files: [] });
    if (!empty.endsWith('"files":[]}')) throw new Error('a patchset field follows files');
    const head = Buffer.from(empty.slice(0, -2), 'utf8');
    const row = {
      id,
      base: fields.base,
      head: fields.head,
      baseRef: fields.baseRef,
      headRef: fields.headRef,
      targetKind: fields.targetKind,
      fileCount: totals.files,
      hunkCount: totals.hunks,
    };
    return { id, row, totals, chunks: () => this.read(head, entries), dispose: () => this.dispose() };
  }

  dispose(): void {
    if (this.fd !== null) {
      try {
        closeSync(this.fd);
      } catch {
        // nothing else to do with it
      }
      this.fd = null;
    }
    if (this.dir !== null) rmSync(this.dir, { recursive: true, force: true });
    this.dir = null;
  }

  private spooled(file: FileChange): Entry {
    addToTotals(this.totals, file, file.hunks.length);
    const bytes = Buffer.from(JSON.stringify(file), 'utf8');
    const idPart = fileIdPart(file);
    if (this.fd === null) return { path: file.path, offset: 0, length: bytes.length, bytes, held: null, idPart };
    const entry: Entry = { path: file.path, offset: this.written + this.batchBytes, length: bytes.length, bytes: null, held: null, idPart };
    this.batch.push(bytes);
    this.batchBytes += bytes.length;
    if (this.batchBytes >= this.chunkBytes) this.flush();
    return entry;
  }

  private flush(): void {
    if (this.fd === null || this.batchBytes === 0) return;
    const data = this.batch.length === 1 ? (this.batch[0] as Buffer) : Buffer.concat(this.batch, this.batchBytes);
    for (let done = 0; done < data.length;) {
      const n = writeSync(this.fd, data, done, data.length - done, this.written + done);
      if (n <= 0) throw new Error('could not write the capture spool');
      done += n;
    }
    this.written += data.length;
    this.batch = [];
    this.batchBytes = 0;
  }

  private *read(head: Buffer, entries: readonly Entry[]): Generator<Buffer> {
    let chunk = Buffer.allocUnsafe(Math.max(this.chunkBytes, head.length + 1));
    let used = head.copy(chunk, 0);
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i] as Entry;
      const need = entry.length + 1;
      if (used + need > chunk.length) {
        yield chunk.subarray(0, used);
        chunk = Buffer.allocUnsafe(Math.max(this.chunkBytes, need));
        used = 0;
      }
      if (i > 0) chunk[used++] = 0x2c; // ,
      if (entry.bytes) {
        used += entry.bytes.copy(chunk, used);
        continue;
      }
      for (let got = 0; got < entry.length;) {
        const n = readSync(this.fd as number, chunk, used, entry.length - got, entry.offset + got);
        if (n <= 0) throw new Error('the capture spool ended early');
        used += n;
        got += n;
      }
    }
    if (used + 2 > chunk.length) {
      yield chunk.subarray(0, used);
      chunk = Buffer.allocUnsafe(2);
      used = 0;
    }
    used += chunk.write(']}', used, 'latin1');
    yield chunk.subarray(0, used);
  }
}
