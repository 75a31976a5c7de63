import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { isPidAlive, randomHex } from './fsutil';
import { readOwner, type OwnerInfo } from './lock';

/**
 * Which process is drafting a generation: `<dataDir>/runs/<generationId>`, created with
 * O_CREAT|O_EXCL and holding `pid host nonce` (the store lock's technique, lock.ts), for as long
 * as a run of the generation is in flight; removed when it ends. It is not store data: it answers
 * one question, "may this process resume that generation?", so a second VS Code window (or the
 * CLI) never clears lanes that another live process is drafting.
 *
 * A claim is stale — and is broken — when its pid is dead on this host, or is this process's own
 * pid without this process holding it (a leftover of an earlier process with the same pid), or it
 * is still empty after 2 s. A claim from another host is never judged stale (as the lock).
 */

export interface RunHolder {
  pid: number;
  host: string;
}

export interface RunClaim {
  readonly generationId: string;
  release(): void;
}

export type ClaimResult = { ok: true; claim: RunClaim } | { ok: false; holder: RunHolder };

const RUNS_DIR = 'runs';
const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
/** The claims this process holds, by file: they are alive whatever their pid says. */
const heldHere = new Map<string, string>();

export function runClaimPath(dataDir: string, generationId: string): string {
  if (!SAFE_ID.test(generationId)) throw new Error(`not a generation id: ${JSON.stringify(generationId)}`);
  return path.join(dataDir, RUNS_DIR, generationId);
}

/** Claims the generation's run for this process; or the live process that holds it. */
export function claimGenerationRun(dataDir: string, generationId: string): ClaimResult {
  const file = runClaimPath(dataDir, generationId);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const owner = `${process.pid} ${os.hostname()} ${randomHex(8)}\n`;
  for (let tries = 0; tries < 5; tries++) {
    if (tryCreate(file, owner)) {
      heldHere.set(file, owner);
      return { ok: true, claim: { generationId, release: () => release(file, owner) } };
    }
    const seen = readOwner(file);
    if (seen.kind === 'gone') continue;
    if (!isStale(file, seen)) return { ok: false, holder: seen.kind === 'owner' ? { pid: seen.pid, host: seen.host } : { pid: 0, host: '' } };
    breakStale(file, seen);
  }
  const seen = readOwner(file);
  return { ok: false, holder: seen.kind === 'owner' ? { pid: seen.pid, host: seen.host } : { pid: 0, host: '' } };
}

/** The live process drafting the generation (this one included), or null when no run holds it. */
export function generationRunHolder(dataDir: string, generationId: string): RunHolder | null {
  const file = runClaimPath(dataDir, generationId);
  const seen = readOwner(file);
  if (seen.kind === 'gone' || isStale(file, seen)) return null;
  return seen.kind === 'owner' ? { pid: seen.pid, host: seen.host } : { pid: 0, host: '' };
}

export function describeHolder(holder: RunHolder): string {
  return holder.pid > 0 ? `process ${holder.pid} on ${holder.host}` : 'another process';
}

// ─── Internals ───────────────────────────────────────────────────────────────────────────────

function tryCreate(file: string, owner: string): boolean {
  let fd: number;
  try {
    fd = fs.openSync(file, 'wx', 0o644);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    fs.writeSync(fd, owner);
  } finally {
    fs.closeSync(fd);
  }
  return true;
}

function isStale(file: string, seen: OwnerInfo): boolean {
  if (seen.kind === 'gone') return false;
  if (seen.kind === 'empty') return Date.now() - seen.mtimeMs > 2_000;
  if (heldHere.get(file) === seen.raw) return false;
  if (seen.host !== os.hostname()) return false;
  if (seen.pid === process.pid) return true;
  return !isPidAlive(seen.pid);
}

/** Moves the stale claim aside; if what moved is not what we judged, puts it back (link fails rather than replace). */
function breakStale(file: string, seen: OwnerInfo): void {
  const victim = `${file}.stale-${process.pid}-${randomHex(4)}`;
  try {
    fs.renameSync(file, victim);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const moved = readOwner(victim);
  const same = seen.kind === 'owner' ? moved.kind === 'owner' && moved.raw === seen.raw : moved.kind === 'empty';
  if (!same) {
    try {
      fs.linkSync(victim, file);
    } catch {
      // taken meanwhile by a newer claim; ours was not it
    }
  }
  fs.rmSync(victim, { force: true });
}

function release(file: string, owner: string): void {
  if (heldHere.get(file) !== owner) return;
  heldHere.delete(file);
  try {
    if (fs.readFileSync(file, 'utf8') === owner) fs.unlinkSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
