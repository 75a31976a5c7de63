import { BLOB_READ_MAX_BYTES } from '../../protocol/limits';
import { fileOnSide, type Patchset, type Side } from '../../protocol/patchset';
import { err, ok, rennetError, type Result } from '../../protocol/result';
import type { BlobContent } from '../../protocol/rpc';
import { runGit } from '../git/run';
import { checkTreePath } from './paths';

/**
 * Reads a captured file's base or head blob by the object id recorded at capture time, so the
 * bytes never change with later edits to the checkout.
 */
export async function readCapturedBlob(repoRoot: string, patchset: Patchset, path: string, side: Side): Promise<Result<BlobContent>> {
  const checked = checkTreePath(path);
  if (!checked.ok) return checked;
  const file = fileOnSide(patchset.files, path, side);
  if (!file) {
    // The path may name a file on the other side only (added, deleted, a rename's old name): say so.
    const other = fileOnSide(patchset.files, path, side === 'base' ? 'head' : 'base');
    if (other) return err(rennetError('not-found', `${path} has no ${side} side in ${patchset.id} (${other.status === 'renamed' ? `renamed to ${other.path}` : other.status})`, { path }));
    return err(rennetError('not-found', `${path} is not a changed file of ${patchset.id}`, { path }));
  }
  const oid = side === 'base' ? file.oldOid : file.newOid;
  if (!oid) return err(rennetError('not-found', `${path} has no ${side} side in ${patchset.id} (${file.status})`, { path }));
  if (file.submodule) return err(rennetError('not-found', `${path} is a submodule; its content is another repository`, { path }));
  const read = await readBlobBounded(repoRoot, oid);
  if (!read.ok) return err(rennetError('git-failed', `could not read ${side} blob ${oid} of ${path}: ${read.stderr}`));
  return ok({ path, side, oid, ...read.value });
}

/** A blob's content as Rennet reads it: at most BLOB_READ_MAX_BYTES, binary when a NUL shows in its first 8000 bytes. */
export interface BoundedBlob {
  text: string | null;
  binary: boolean;
  bytes: number;
  truncated: boolean;
}

/**
 * `git cat-file blob <object>` (an object id, or `<commit>:<path>`), bounded and sniffed for
 * binary content: the one way Rennet reads a blob's bytes. `stderr` is git's own words on failure.
 */
export async function readBlobBounded(repoRoot: string, object: string): Promise<{ ok: true; value: BoundedBlob } | { ok: false; stderr: string; code: number }> {
  const result = await runGit(['cat-file', 'blob', object], { cwd: repoRoot, maxStdoutBytes: BLOB_READ_MAX_BYTES + 1 });
  if (result.code !== 0 && !result.cut) return { ok: false, stderr: result.stderr.trim(), code: result.code };
  const truncated = result.stdout.length > BLOB_READ_MAX_BYTES;
  const bytes = truncated ? result.stdout.subarray(0, BLOB_READ_MAX_BYTES) : result.stdout;
  const binary = bytes.subarray(0, 8000).includes(0);
  return { ok: true, value: { text: binary ? null : bytes.toString('utf8'), binary, bytes: bytes.length, truncated } };
}
