/**
 * Repo-relative path checks for paths that arrive from the webview. Pure: no `vscode` import, so
 * unit tests run in plain Node.
 */

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
