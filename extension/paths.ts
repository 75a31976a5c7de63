/**
 * Repo-relative paths: checks for paths that arrive from the webview, and the repo-relative path
 * of a checkout file. Pure: no `vscode` import, so unit tests run in plain Node.
 */
import { realpath } from 'node:fs/promises';
import * as nodePath from 'node:path';

export type PathCheck = { ok: true; segments: string[] } | { ok: false; reason: string };

/**
 * Accept only a repo-relative path made of plain segments: not empty, not absolute (POSIX, UNC
 * or drive-letter), no `.`/`..` or empty segments, no NUL. Splits on `/` (git's separator) and
 * also treats `\` as a separator for the checks so `..\x` cannot slip through on Windows.
 */
export function checkRepoRelativePath(path: string): PathCheck {
  if (path.length === 0) return { ok: false, reason: 'the path is empty' };
  if (path.includes('\0')) return { ok: false, reason: 'the path contains a NUL character' };
  if (path.startsWith('/') || path.startsWith('\\')) return { ok: false, reason: 'the path is absolute' };
  if (/^[A-Za-z]:/.test(path)) return { ok: false, reason: 'the path starts with a drive letter' };
  const parts = path.split(/[\\/]/);
  for (const part of parts) {
    if (part === '') return { ok: false, reason: 'the path has an empty segment' };
    if (part === '..') return { ok: false, reason: 'the path leaves the repository (“..”)' };
    if (part === '.') return { ok: false, reason: 'the path has a “.” segment' };
  }
  return { ok: true, segments: path.split('/') };
}

/**
 * The repo-relative path (git's `/` separators) of a file under `repoRoot`, or null when it is
 * outside the repository or is the root itself. `pathApi` is node's path for the platform (tests
 * pass posix or win32).
 */
export function repoRelativePath(repoRoot: string, filePath: string, pathApi: Pick<typeof nodePath, 'relative' | 'sep'> = nodePath): string | null {
  const relative = pathApi.relative(repoRoot, filePath);
  if (!relative) return null;
  const gitPath = pathApi.sep === '/' ? relative : relative.split(pathApi.sep).join('/');
  return checkRepoRelativePath(gitPath).ok ? gitPath : null;
}

/**
 * Whether the checkout file `repoRoot/segments…`, every symlink followed (a committed symlink, or
 * a symlinked folder on the way), is a file under `repoRoot` (itself resolved): false when it
 * resolves outside the repository, to the root itself, or does not resolve at all. The board
 * opens a workspace file only when this holds; otherwise it opens the captured blob.
 */
export async function resolvesInsideRepo(repoRoot: string, segments: readonly string[]): Promise<boolean> {
  try {
    const [root, file] = await Promise.all([realpath(repoRoot), realpath(nodePath.join(repoRoot, ...segments))]);
    const relative = nodePath.relative(root, file);
    return relative !== '' && relative !== '..' && !relative.startsWith(`..${nodePath.sep}`) && !nodePath.isAbsolute(relative);
  } catch {
    return false;
  }
}
