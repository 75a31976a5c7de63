import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Synchronous fs helpers whose return means "on disk". */

export function randomHex(bytes: number): string {
  return crypto.randomBytes(bytes).toString('hex');
}

const sleepCell = new Int32Array(new SharedArrayBuffer(4));
/** Blocks the thread (the store is synchronous by contract). */
export function sleepSync(ms: number): void {
  if (ms > 0) Atomics.wait(sleepCell, 0, 0, ms);
}

/** fsync a directory so a rename/create inside it is durable. Windows cannot open directories; NTFS journals renames. */
export function fsyncDir(dir: string): void {
  if (process.platform === 'win32') return;
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Some file systems refuse fsync on directories; there is nothing better to do there.
    if (code !== 'EINVAL' && code !== 'EISDIR' && code !== 'EPERM' && code !== 'ENOTSUP') throw error;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

export function writeFully(fd: number, data: Uint8Array, position: number | null): void {
  let written = 0;
  while (written < data.length) {
    const n = fs.writeSync(fd, data, written, data.length - written, position === null ? null : position + written);
    if (n <= 0) throw new Error('write returned 0 bytes');
    written += n;
  }
}

export function readFully(fd: number, length: number, position: number): Buffer {
  const buf = Buffer.allocUnsafe(length);
  let got = 0;
  while (got < length) {
    const n = fs.readSync(fd, buf, got, length - got, position + got);
    if (n === 0) break;
    got += n;
  }
  return got === length ? buf : buf.subarray(0, got);
}

/** A temp name next to `target`, tagged with our pid so a cleaner can tell whose it is. */
export function tempPathFor(target: string): string {
  return `${target}.tmp-${process.pid}-${randomHex(4)}`;
}

/** Parses the pid out of a name made by tempPathFor, or undefined. */
export function tempOwnerPid(name: string): number | undefined {
  const m = /\.tmp-(\d+)-[0-9a-f]+$/.exec(name);
  return m ? Number(m[1]) : undefined;
}

/**
 * Write `data` to `target` atomically and durably: temp file, fsync, rename, fsync directory.
 * Readers see the old file or the whole new one, never a prefix; after return it survives a crash.
 */
export function writeFileAtomic(target: string, data: Uint8Array | string, beforeRename?: () => void): void {
  const tmp = tempPathFor(target);
  const fd = fs.openSync(tmp, 'w', 0o644);
  try {
    try {
      writeFully(fd, typeof data === 'string' ? Buffer.from(data, 'utf8') : data, 0);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    beforeRename?.();
    fs.renameSync(tmp, target);
  } catch (error) {
    try {
      fs.unlinkSync(tmp);
    } catch {
      // already gone or never made
    }
    throw error;
  }
  fsyncDir(path.dirname(target));
}

/** True when a process with this pid exists on this machine (a zombie counts as dead). */
export function isPidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  if (process.platform === 'linux') {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (state === 'Z' || state === 'X') return false;
    } catch {
      // /proc unavailable: trust kill(0)
    }
  }
  return true;
}

/**
 * Removes leftovers of interrupted atomic writes and lock attempts in `dir` (`*.tmp-<pid>-<hex>`,
 * `*.stale-<pid>-<hex>`) whose process is gone. Our own pid counts as gone: the store is
 * synchronous, so none of our writes is in flight while this runs.
 */
export function removeStaleTemps(dir: string): void {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  for (const name of names) {
    const m = /\.(?:tmp|stale)-(\d+)-[0-9a-f]+$/.exec(name);
    if (!m) continue;
    const pid = Number(m[1]);
    if (pid === process.pid || !isPidAlive(pid)) fs.rmSync(path.join(dir, name), { recursive: true, force: true });
  }
}
