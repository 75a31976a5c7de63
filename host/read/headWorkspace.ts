import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Patchset } from '../../protocol/patchset';
import { err, ok, rennetError, type Result } from '../../protocol/result';
import { runGit } from '../git/run';

/**
 * The reviewed head as a directory: a snapshot of the patchset's head tree under the data
 * directory (`<dataDir>/heads/<patchsetId>/`), where the seats run. A CLI seat's own reads
 * (Claude Code's Read/Grep/Glob, Codex's read-only shell) then see the files exactly as captured —
 * not the user's checkout, which may be another branch or have moved since.
 *
 * git writes it through a temporary index (`read-tree` + `checkout-index`), so nothing is
 * registered in the user's repository (no worktree entry, no ref) and their HEAD, index and
 * working tree are never touched. Symbolic links are written as plain files holding their target
 * (`core.symlinks=false`): a link in the change cannot point a seat's read outside the snapshot.
 * Reused per patchset (a `<id>.head` file beside it records the commit); the least recently used
 * beyond HEAD_WORKSPACES_KEPT are removed, and an archived review's go with it (dropHeadWorkspaces).
 */

export const HEAD_WORKSPACES_KEPT = 6;
const PATCHSET_ID = /^ps-[0-9a-f]{16}$/;

/** One creation at a time per directory (two generations of one capture share it). */
const pending = new Map<string, Promise<Result<string>>>();

export function headWorkspace(dataDir: string, repoDir: string, patchset: Patchset): Promise<Result<string>> {
  if (!PATCHSET_ID.test(patchset.id)) return Promise.resolve(err(rennetError('invalid-request', `not a patchset id: ${patchset.id}`)));
  const root = join(dataDir, 'heads');
  const dir = join(root, patchset.id);
  const running = pending.get(dir);
  if (running) return running;
  const made = (async (): Promise<Result<string>> => {
    mkdirSync(root, { recursive: true });
    const marker = `${dir}.head`;
    if (existsSync(dir) && existsSync(marker) && readFileSync(marker, 'utf8').trim() === patchset.head) {
      const now = new Date();
      utimesSync(dir, now, now);
      return ok(dir);
    }
    rmSync(dir, { recursive: true, force: true });
    rmSync(marker, { force: true });
    mkdirSync(dir);
    const index = `${dir}.index-${process.pid}`;
    const env = { GIT_INDEX_FILE: index };
    try {
      const read = await runGit(['read-tree', patchset.head], { cwd: repoDir, env });
      const written = read.code === 0 ? await runGit(['-c', 'core.symlinks=false', `--work-tree=${dir}`, 'checkout-index', '--all', '--force'], { cwd: repoDir, env }) : read;
      if (written.code !== 0) {
        rmSync(dir, { recursive: true, force: true });
        return err(rennetError('git-failed', `could not write the reviewed head ${patchset.head.slice(0, 12)}: ${written.stderr.toString().trim().slice(0, 300)}`));
      }
    } finally {
      rmSync(index, { force: true });
    }
    writeFileSync(marker, `${patchset.head}\n`);
    pruneOld(root, dir);
    return ok(dir);
  })().finally(() => pending.delete(dir));
  pending.set(dir, made);
  return made;
}

/**
 * Removes the snapshots of these patchsets (an archived review's), with their markers. Ids that
 * are not patchset ids are ignored; a snapshot being written now is left to its writer.
 */
export function dropHeadWorkspaces(dataDir: string, patchsetIds: Iterable<string>): string[] {
  const root = join(dataDir, 'heads');
  const dropped: string[] = [];
  for (const id of new Set(patchsetIds)) {
    if (!PATCHSET_ID.test(id)) continue;
    const dir = join(root, id);
    if (pending.has(dir) || !existsSync(dir)) continue;
    rmSync(dir, { recursive: true, force: true });
    rmSync(`${dir}.head`, { force: true });
    dropped.push(id);
  }
  return dropped;
}

/** Keeps the most recently used snapshots; older ones (and their markers) go. */
function pruneOld(root: string, keep: string): void {
  const entries = readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory() && PATCHSET_ID.test(e.name))
    .map((e) => ({ dir: join(root, e.name), used: statSync(join(root, e.name)).mtimeMs }))
    .sort((a, b) => b.used - a.used);
  for (const entry of entries.slice(HEAD_WORKSPACES_KEPT)) {
    if (entry.dir === keep) continue;
    rmSync(entry.dir, { recursive: true, force: true });
    rmSync(`${entry.dir}.head`, { force: true });
  }
}

/** Harnesses that run a process in the seat's directory and read files there with their own tools (Claude Code, Codex). */
export const DIRECTORY_HARNESSES: ReadonlySet<string> = new Set(['claude-code', 'codex']);

/**
 * Where one seat of `harnessKind` runs: the reviewed head's snapshot when its harness reads its
 * directory (a CLI), else `repoDir` — HTTP and vscode.lm seats read only through the read tools, so
 * no snapshot is written for them. A snapshot that could not be made leaves `repoDir`, with why
 * (the read tools read the capture either way).
 */
export async function seatWorkingDir(harnessKind: string, dataDir: string, repoDir: string, patchset: Patchset): Promise<{ dir: string; note: string | null }> {
  if (!DIRECTORY_HARNESSES.has(harnessKind)) return { dir: repoDir, note: null };
  const made = await headWorkspace(dataDir, repoDir, patchset);
  return made.ok ? { dir: made.value, note: null } : { dir: repoDir, note: made.error.message };
}
