import { closeSync, mkdtempSync, openSync, readSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FileChange, Patchset, PatchsetTotals } from '../../protocol/patchset';
import { addToTotals, compareUtf8, emptyTotals } from './fileList';
import { PartsHash, canonicalJson, fileIdPart } from './ids';

/** Serialized files are kept in buffers of about this many bytes, and read back in chunks of about as many. */
export const SPOOL_CHUNK_BYTES = 1 << 20;
/** Up to this many bytes of serialized files stay in memory; past it they go to the spool's temp file. */
export const SPOOL_MEMORY_BYTES = 16 << 20;

/** A captured patchset whose files are in a spool: its id, its store row, and its JSON read back. */
export interface SpooledPatchset {
  id: string;
  /** What the store's row records (Store.beginPatchsetBody). */
  row: { id: string; base: string; head: string; baseRef: string; headRef: string; targetKind: Patchset['targetKind']; fileCount: number; hunkCount: number };
  totals: PatchsetTotals;
  /** `JSON.stringify` of the patchset as UTF-8, in chunks of about SPOOL_CHUNK_BYTES (the spool's own buffers where it can: read, never modify). Can be read more than once. */
  chunks(): Generator<Buffer>;
  /** Closes and removes the spool. */
  dispose(): void;
}

interface Entry {
  path: string;
  /** Where the file's JSON is in the spool's bytes (in memory or in the temp file). */
  offset: number;
  length: number;
  /** The file itself while it may still change (a binary file: settleOversizedFiles); serialized at finish. */
  held: FileChange | null;
  /** fileIdPart(file): small (the path and the hunk ids), kept out of the spool so the files' bytes lie end to end. */
  idPart: string;
}

/** Spool bytes kept in memory, from `start`. */
interface Batch {
  start: number;
  bytes: Buffer;
}

/**
 * The files of one capture as they are parsed, each serialized (`JSON.stringify`, the bytes
 * capturePatchset's patchset has for it) with its part of the patchset id, and dropped: a capture
 * holds per file only its path and where its bytes are — never the hunks and lines. The bytes
 * stay in memory up to `memoryBytes`; past that, all of them go to an unlinked temp file (without
 * a temp directory — full, read-only — they stay in memory). `finish` sorts by path, totals the
 * files and computes the id exactly as capturePatchset does.
 */
export class PatchsetSpool {
  private entries: Entry[] = [];
  private totals = emptyTotals();
  private readonly chunkBytes: number;
  private memoryBytes: number;
  private readonly tempRoot: string;
  private dir: string | null = null;
  private fd: number | null = null;
  /** Sealed buffers still in memory; the temp file holds the bytes before the first. */
  private batches: Batch[] = [];
  private batchedBytes = 0;
  /** Spool bytes before `current`. */
  private sealed = 0;
  private current: Buffer;
  private used = 0;

  /** `tempRoot`: where the temp file's directory goes; `chunkBytes`: buffer and read-back size; `memoryBytes`: what stays in memory. */
  constructor(options: { tempRoot?: string; chunkBytes?: number; memoryBytes?: number } = {}) {
    this.chunkBytes = Math.max(1, options.chunkBytes ?? SPOOL_CHUNK_BYTES);
    this.memoryBytes = options.memoryBytes ?? SPOOL_MEMORY_BYTES;
    this.tempRoot = options.tempRoot ?? tmpdir();
    this.current = Buffer.allocUnsafe(this.chunkBytes);
  }

  /** Spools one parsed file (a binary one is held as it is: it has no hunks). */
  add(file: FileChange): void {
    if (file.binary) {
      this.entries.push({ path: file.path, offset: 0, length: 0, held: file, idPart: '' });
      return;
    }
    this.entries.push(this.spooled(file));
  }

  /** Drops every file added so far (their bytes are never read). */
  reset(): void {
    this.entries = [];
    this.totals = emptyTotals();
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
    this.seal(0, false);
    const entries = this.entries.sort((a, b) => compareUtf8(a.path, b.path));
    const totals = this.totals;
    const fields = meta(totals);
    const id = this.idOf(fields, entries);
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
    this.closeTemp();
    this.batches = [];
  }

  private closeTemp(): void {
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
    const [offset, length] = this.append(JSON.stringify(file));
    return { path: file.path, offset, length, held: null, idPart: fileIdPart(file) };
  }

  /**
   * Appends a string's UTF-8 and a comma to the spool: where the string is, how long (the comma
   * not counted). Encoded straight into the current buffer; a string never spans two. The comma
   * is the JSON's separator, so files spooled in the order they are printed read back as the
   * spool's own buffers, uncopied (read).
   */
  private append(text: string): [number, number] {
    if (text.length * 3 + 1 > this.current.length - this.used) {
      const length = Buffer.byteLength(text, 'utf8') + 1;
      if (length > this.current.length - this.used) this.seal(length, true);
    }
    const offset = this.sealed + this.used;
    const length = this.current.write(text, this.used, 'utf8');
    this.used += length;
    this.current[this.used++] = 0x2c; // ,
    return [offset, length];
  }

  /**
   * patchsetIdOf(meta, the files' id parts in order), hashed as they are read back: SHA-256 over
   * the same UTF-8 with the same NUL separators (contentId), so the same id.
   */
  private idOf(meta: Omit<Patchset, 'id' | 'files'>, entries: readonly Entry[]): string {
    const parts = new PartsHash();
    parts.add(Buffer.from(canonicalJson(meta), 'utf8'));
    for (const entry of entries) parts.add(Buffer.from(entry.idPart, 'utf8'));
    return parts.id('ps');
  }

  /** Keeps the current buffer's bytes (spilling to the temp file past memoryBytes) and starts one of at least `room` bytes. */
  private seal(room: number, spill: boolean): void {
    if (this.used > 0) {
      this.batches.push({ start: this.sealed, bytes: this.current.subarray(0, this.used) });
      this.batchedBytes += this.used;
      this.sealed += this.used;
    }
    if (spill && this.batchedBytes > this.memoryBytes) this.spill();
    this.current = Buffer.allocUnsafe(Math.max(this.chunkBytes, room));
    this.used = 0;
  }

  /** Writes the in-memory bytes to the temp file (opened on first use) and lets them go. */
  private spill(): void {
    if (this.fd === null && !this.openTemp()) {
      this.memoryBytes = Infinity;
      return;
    }
    for (const batch of this.batches) {
      for (let done = 0; done < batch.bytes.length;) {
        const n = writeSync(this.fd as number, batch.bytes, done, batch.bytes.length - done, batch.start + done);
        if (n <= 0) throw new Error('could not write the capture spool');
        done += n;
      }
    }
    this.batches = [];
    this.batchedBytes = 0;
  }

  private openTemp(): boolean {
    try {
      this.dir = mkdtempSync(join(this.tempRoot, 'rennet-capture-'));
      const file = join(this.dir, 'files');
      this.fd = openSync(file, 'w+', 0o600);
      try {
        // The descriptor stays valid without the name (Windows refuses while open: removed with its directory).
        unlinkSync(file);
      } catch {
        // removed with its directory at dispose
      }
      return true;
    } catch {
      this.closeTemp();
      return false;
    }
  }

  /**
   * Every spooled byte is in memory and is, in order, exactly the sorted files each followed by
   * its comma: git printed them in path order, none was held (binary) or dropped (reset).
   */
  private inPrintedOrder(entries: readonly Entry[]): boolean {
    if (this.fd !== null || entries.length === 0 || this.batches.length === 0) return false;
    let next = (this.batches[0] as Batch).start;
    for (const entry of entries) {
      if (entry.offset !== next) return false;
      next = entry.offset + entry.length + 1;
    }
    return next === this.sealed;
  }

  /** Copies spool bytes [offset, offset + length) into `target` at `at`. */
  private copyOut(offset: number, length: number, target: Buffer, at: number): void {
    const first = this.batches[0];
    if (first && offset >= first.start) {
      // Batches are in spool order: the last one starting at or before the entry holds all of it.
      let lo = 0;
      let hi = this.batches.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if ((this.batches[mid] as Batch).start <= offset) lo = mid;
        else hi = mid - 1;
      }
      const batch = this.batches[lo] as Batch;
      batch.bytes.copy(target, at, offset - batch.start, offset - batch.start + length);
      return;
    }
    for (let got = 0; got < length;) {
      const n = readSync(this.fd as number, target, at + got, length - got, offset + got);
      if (n <= 0) throw new Error('the capture spool ended early');
      got += n;
    }
  }

  private *read(head: Buffer, entries: readonly Entry[]): Generator<Buffer> {
    if (this.inPrintedOrder(entries)) {
      // The files' bytes, with their commas, are the batches end to end: no copy.
      yield head;
      const last = this.batches.length - 1;
      for (let i = 0; i < last; i++) yield (this.batches[i] as Batch).bytes;
      const tail = (this.batches[last] as Batch).bytes;
      // The last file's comma becomes the closing `]}`.
      if (tail.length > 1) yield tail.subarray(0, tail.length - 1);
      yield Buffer.from(']}', 'latin1');
      return;
    }
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
      this.copyOut(entry.offset, entry.length, chunk, used);
      used += entry.length;
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
