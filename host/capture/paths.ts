import { err, ok, rennetError, type Result } from '../../protocol/result';

/** A path crossing a boundary must be repo-relative: no absolute, ~-rooted, backslash or .. forms. */
export function checkRepoRelativePath(path: string): Result<string> {
  const refuse = (why: string) => err(rennetError('invalid-path', `"${path}" is not a repository-relative path: ${why}`, { path }));
  if (path.length === 0) return refuse('it is empty');
  if (path.includes('\0')) return refuse('it contains a NUL byte');
  if (path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path)) return refuse('it is absolute');
  if (path.startsWith('~')) return refuse('it is rooted at a home directory');
  if (path.includes('\\')) return refuse('it uses backslashes');
  if (path.split('/').some((segment) => segment === '..' || segment === '.' || segment === '')) return refuse('it has an empty, "." or ".." segment');
  return ok(path);
}

/**
 * A path that is only ever looked up inside a captured git tree (`<commit>:<path>`, a literal
 * pathspec, a patchset's files), never joined onto the filesystem. There `~` and `\` are ordinary
 * characters — a changed file may be named `~notes.md` or `a\b.txt` on POSIX — so only what no
 * tree path can be is refused: empty, a NUL, absolute, and an empty, "." or ".." segment.
 */
export function checkTreePath(path: string): Result<string> {
  const refuse = (why: string) => err(rennetError('invalid-path', `"${path}" is not a repository-relative path: ${why}`, { path }));
  if (path.length === 0) return refuse('it is empty');
  if (path.includes('\0')) return refuse('it contains a NUL byte');
  if (path.startsWith('/')) return refuse('it is absolute');
  if (path.split('/').some((segment) => segment === '..' || segment === '.' || segment === '')) return refuse('it has an empty, "." or ".." segment');
  return ok(path);
}
