import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { storeFailed } from './errors';
import { isPidAlive, randomHex, sleepSync } from './fsutil';

/**
 * A short-lived cross-process lock: the file `<lockPath>`, created with O_CREAT|O_EXCL (as git
 * does with index.lock) and holding `pid host nonce`. A lock whose pid is dead on this host — or
 * is our own pid: the store is synchronous, so a lock we meet from inside a call can only be a
 * leftover — is stale and is broken. A lock file still empty after 2 s (its creator died between
 * create and write) is stale too.
 *
 * Limits (README): owners on another host are never judged stale; pid reuse can make a stale
 * lock look alive until the timeout; two processes breaking the same stale lock at the same
 * instant is made unlikely, not impossible (the journal's append check is the backstop).
 */
export class FileLock {
  private held: string | undefined;

  constructor(
    readonly lockPath: string,
    private readonly timeoutMs = 10_000,
  ) {}

  get isHeld(): boolean {
    return this.held !== undefined;
  }

  acquire(): void {
    if (this.held) throw new Error(`lock ${this.lockPath} is already held by this store`);
    const owner = `${process.pid} ${os.hostname()} ${randomHex(8)}\n`;
    const deadline = Date.now() + this.timeoutMs;
    let delay = 0.05;
    for (;;) {
      if (this.tryCreate(owner)) {
        this.held = owner;
        return;
      }
      const seen = readOwner(this.lockPath);
      if (isStale(seen)) {
        this.breakStale(seen);
        continue;
      }
      if (Date.now() > deadline) {
        const who = seen.kind === 'owner' ? `process ${seen.pid} on ${seen.host}` : 'an unknown process';
        throw storeFailed(`The Rennet store at ${path.dirname(this.lockPath)} stayed locked by ${who} for ${this.timeoutMs} ms. ` + `If no Rennet process is running, delete ${this.lockPath}.`);
      }
      sleepSync(delay);
      delay = Math.min(delay * 2, 4);
    }
  }

  release(): void {
    const mine = this.held;
    if (!mine) return;
    this.held = undefined;
    try {
      // Someone broke our lock believing it stale: leave theirs alone.
      if (fs.readFileSync(this.lockPath, 'utf8') === mine) fs.unlinkSync(this.lockPath);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }

  private tryCreate(owner: string): boolean {
    let fd: number;
    try {
      fd = fs.openSync(this.lockPath, 'wx', 0o644);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw storeFailed(`Could not create the lock ${this.lockPath}`, error);
    }
    try {
      fs.writeSync(fd, owner);
    } catch (error) {
      fs.closeSync(fd);
      fs.unlinkSync(this.lockPath);
      throw storeFailed(`Could not write the lock ${this.lockPath}`, error);
    }
    fs.closeSync(fd);
    return true;
  }

  /**
   * Moves the stale lock aside. If what we moved is not the lock we judged (it was released and
   * re-taken in between), put it back with link(2), which fails rather than replace a newer lock.
   */
  private breakStale(seen: OwnerInfo): void {
    const victim = `${this.lockPath}.stale-${process.pid}-${randomHex(4)}`;
    try {
      fs.renameSync(this.lockPath, victim);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    const moved = readOwner(victim);
    const same = seen.kind === 'owner' ? moved.kind === 'owner' && moved.raw === seen.raw : moved.kind === 'empty';
    if (!same) {
      try {
        fs.linkSync(victim, this.lockPath);
      } catch {
        // the path was taken meanwhile; the journal's append check guards the rest
      }
    }
    fs.rmSync(victim, { force: true });
  }
}

/** Who holds an owner file (`<pid> <host>\n`): its owner, a file still being written (empty), or none. Shared with run claims (runClaims.ts). */
export type OwnerInfo = { kind: 'owner'; pid: number; host: string; raw: string } | { kind: 'empty'; mtimeMs: number } | { kind: 'gone' };

export function readOwner(lockPath: string): OwnerInfo {
  try {
    const raw = fs.readFileSync(lockPath, 'utf8');
    if (raw.endsWith('\n')) {
      const [pid, host] = raw.trim().split(' ');
      return { kind: 'owner', pid: Number(pid), host: host ?? '', raw };
    }
    return { kind: 'empty', mtimeMs: fs.statSync(lockPath).mtimeMs };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'gone' };
    throw storeFailed(`Could not read the lock ${lockPath}`, error);
  }
}

function isStale(seen: OwnerInfo): boolean {
  if (seen.kind === 'gone') return false; // released between our attempt and our look: retry now
  if (seen.kind === 'empty') return Date.now() - seen.mtimeMs > 2_000; // a creator mid-write, or one that died there
  if (seen.host !== os.hostname()) return false;
  if (seen.pid === process.pid) return true;
  return !isPidAlive(seen.pid);
}
