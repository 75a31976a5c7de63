import type { Writable } from 'node:stream';
import type { Patchset, PatchsetSummary } from '../protocol/patchset';
import type { CaptureTarget } from '../protocol/session';
import type { Result } from '../protocol/result';
import { capturePatchset, capturePatchsetSpooled } from './capture/capture';
import type { SpooledPatchset } from './capture/spool';
import { openRepo } from './capture/repo';
import { formatPatchsetSummary } from './format';
import { Store } from './store/store';

/** What `rennet capture` was asked, checked by the command line. */
export interface CaptureRequest {
  repo: string;
  target: CaptureTarget;
  maxFileBytes: number | undefined;
  /** Print the patchset as JSON (else the readable summary). */
  json: boolean;
  storeDir: string;
}

export interface CaptureIo {
  stdout: Writable;
  stderr: (text: string) => void;
}

/**
 * `rennet capture`: capture the range, store it, print it. Exit 0 printed and stored, 1 refused.
 *
 * The store opens while git runs. With --json the patchset is never whole in memory: each file is
 * serialized as it is parsed into a spool (capturePatchsetSpooled) and dropped; then the spool is
 * read back in chunks, each written to stdout (waiting on a full pipe) and to the store's body
 * file, so the same bytes serve both. The body is made durable (fsync, rename, its row journaled)
 * after stdout has the whole JSON and before the exit: exit 0 still means stored. A repeat capture
 * of a stored id prints the same JSON and writes nothing.
 */
export async function captureCommand(request: CaptureRequest, io: CaptureIo): Promise<number> {
  const opening = Store.open(request.storeDir);
  // Observed here so a store that fails to open while git still runs is not an unhandled rejection.
  opening.catch(() => undefined);
  if (request.json) return captureJson(request, io, opening);
  const captured = await captureRange(request);
  const store = await opening;
  try {
    if (!captured.ok) {
      io.stderr(`rennet: ${captured.message}\n`);
      return 1;
    }
    const patchset = captured.patchset;
    const { created } = store.putPatchset(patchset);
    return (await writeAll(io.stdout, [`${summaryText(patchset, created)}\n`])) ? 0 : stdoutFailed(io, 'the capture is stored');
  } finally {
    store.close();
  }
}

async function captureJson(request: CaptureRequest, io: CaptureIo, opening: Promise<Store>): Promise<number> {
  let captured: Result<SpooledPatchset>;
  try {
    captured = await captureSpooled(request);
  } catch (error) {
    (await opening.catch(() => null))?.close();
    throw error;
  }
  let store: Store;
  try {
    store = await opening;
  } catch (error) {
    if (captured.ok) captured.value.dispose();
    throw error;
  }
  try {
    if (!captured.ok) {
      io.stderr(`rennet: ${captured.error.message}\n`);
      return 1;
    }
    const spooled = captured.value;
    const body = store.beginPatchsetBody(spooled.row);
    let printed: boolean;
    try {
      printed = await writeAll(io.stdout, teeChunks(spooled.chunks(), body));
    } catch (error) {
      body?.abort();
      throw error;
    }
    if (!printed) {
      body?.abort();
      return stdoutFailed(io, 'nothing was stored');
    }
    body?.commit();
    return 0;
  } finally {
    if (captured.ok) captured.value.dispose();
    store.close();
  }
}

async function captureRange(request: CaptureRequest): Promise<{ ok: true; patchset: Patchset } | { ok: false; message: string }> {
  const repo = await openRepo(request.repo);
  if (!repo.ok) return { ok: false, message: repo.error.message };
  const patchset = await capturePatchset(repo.value, request.target, request.maxFileBytes === undefined ? undefined : { maxFileBytes: request.maxFileBytes });
  return patchset.ok ? { ok: true, patchset: patchset.value } : { ok: false, message: patchset.error.message };
}

async function captureSpooled(request: CaptureRequest): Promise<Result<SpooledPatchset>> {
  const repo = await openRepo(request.repo);
  if (!repo.ok) return repo;
  return capturePatchsetSpooled(repo.value, request.target, request.maxFileBytes === undefined ? undefined : { maxFileBytes: request.maxFileBytes });
}

/** The JSON's UTF-8 chunks, each also written to the store's body when it is new; then the final newline. */
function* teeChunks(chunks: Iterable<Buffer>, body: { write(chunk: Buffer): void } | null): Generator<Buffer> {
  for (const bytes of chunks) {
    body?.write(bytes);
    yield bytes;
  }
  yield Buffer.from('\n');
}

/**
 * Writes every chunk, waiting for 'drain' whenever the stream's buffer is full (an asynchronous
 * pipe), so the output is never queued whole in memory. False when the stream failed (a closed
 * pipe): the rest is not written.
 */
async function writeAll(stream: Writable, chunks: Iterable<string | Buffer>): Promise<boolean> {
  let failed = false;
  // Left attached: a failed write's error may arrive after the last chunk, and unheard it would crash.
  stream.on('error', () => {
    failed = true;
  });
  for (const chunk of chunks) {
    if (failed) return false;
    if (!stream.write(chunk)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          stream.off('drain', done);
          stream.off('error', done);
          resolve();
        };
        stream.on('drain', done);
        stream.on('error', done);
      });
    }
  }
  // A failed write is reported on a later tick; give it that tick before saying "printed".
  await new Promise<void>((resolve) => setImmediate(resolve));
  return !failed;
}

function stdoutFailed(io: CaptureIo, stored: string): number {
  io.stderr(`rennet: could not write the capture to stdout (a closed pipe?); ${stored}\n`);
  return 1;
}

function summaryText(patchset: Patchset, created: boolean): string {
  const summary: PatchsetSummary = { ...patchset, files: patchset.files.map(({ hunks, regions: _r, ...f }) => ({ ...f, hunkCount: hunks.length })) };
  return `${formatPatchsetSummary(summary)}\n${created ? 'stored' : 'already stored; nothing new written'}`;
}
