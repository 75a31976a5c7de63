import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import type { Patchset, Side } from '../../protocol/patchset';
import { BLOB_READ_MAX_BYTES } from '../../protocol/limits';
import { READ_CONTEXT_MAX_BYTES, SEARCH_MAX_MATCHES, SEARCH_MAX_MATCHES_PER_FILE } from '../../protocol/read';
import { escapeControls } from '../../protocol/text';
import { readBlobBounded } from '../capture/blob';
import { checkTreePath } from '../capture/paths';
import { runGit } from '../git/run';
import type { ChangeSource, ContextFile, SearchMatch, SearchResult, TreeFile } from './tools';

/**
 * The read tools' source over git: files and searches of the captured base or head commit (by
 * its full id, so later edits to the checkout never show), and the session's context directory.
 * git runs with argv and literal pathspecs; a path is checked repo-relative before it is used.
 */

export interface GitSourceOptions {
  /** A directory of the repository holding the captured objects (the bound workspace). */
  repoDir: string;
  patchset: Patchset;
  /** The session's context directory: absolute, or relative to repoDir. */
  contextDir: string;
}

/** Bytes of git grep output read before the search is cut (and says so). */
const SEARCH_OUTPUT_MAX_BYTES = 1024 * 1024;
/** Context file names: plain segments, at most one folder deep (findings/claude.md). */
const CONTEXT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*(?:\/[A-Za-z0-9][A-Za-z0-9._-]*)?$/;

export function gitChangeSource(options: GitSourceOptions): ChangeSource {
  const { repoDir, patchset } = options;
  const contextAbs = isAbsolute(options.contextDir) ? options.contextDir : resolve(repoDir, options.contextDir);
  const commitOf = (side: Side) => (side === 'base' ? patchset.base : patchset.head);
  /** A path as given, or the changed path whose escaped form it is. */
  const unescape = (path: string): string => {
    for (const f of patchset.files) {
      if (f.path !== path && escapeControls(f.path) === path) return f.path;
      if (f.oldPath !== null && f.oldPath !== path && escapeControls(f.oldPath) === path) return f.oldPath;
    }
    return path;
  };

  return {
    patchset,

    async readTreeFile(side, rawPath) {
      const path = unescape(rawPath);
      const checked = checkTreePath(path);
      if (!checked.ok) return { kind: 'error', message: checked.error.message };
      const spec = `${commitOf(side)}:${path}`;
      const type = await runGit(['cat-file', '-t', spec], { cwd: repoDir });
      if (type.code !== 0) return { kind: 'missing' };
      const kind = type.stdout.toString('utf8').trim();
      if (kind === 'commit') return { kind: 'submodule' };
      if (kind === 'tree') return { kind: 'error', message: 'it is a folder; read_file reads files (list its files with search_code and a path)' };
      if (kind !== 'blob') return { kind: 'error', message: `it is a ${kind}, not a file` };
      const blob = await readBlobBounded(repoDir, spec);
      if (!blob.ok) return { kind: 'error', message: blob.stderr.slice(0, 300) || `git cat-file exited ${blob.code}` };
      const { text, bytes, truncated } = blob.value;
      if (text === null) return { kind: 'binary', bytes } satisfies TreeFile;
      if (truncated) {
        // Stated with its size, never served in part.
        const size = await runGit(['cat-file', '-s', spec], { cwd: repoDir });
        const total = Number(size.stdout.toString('utf8').trim());
        return { kind: 'too-large', bytes: size.code === 0 && Number.isSafeInteger(total) ? total : null, limitBytes: BLOB_READ_MAX_BYTES };
      }
      return { kind: 'text', text, bytes };
    },

    async search(pattern, side, rawPath): Promise<SearchResult> {
      const path = rawPath === null ? null : unescape(rawPath).replace(/\/+$/, '');
      if (path !== null) {
        const checked = checkTreePath(path);
        if (!checked.ok) return { kind: 'error', message: checked.error.message };
      }
      const args = ['--literal-pathspecs', 'grep', '-n', '-I', '-E', '-z', '--no-color', `--max-count=${SEARCH_MAX_MATCHES_PER_FILE}`, '-e', pattern, commitOf(side)];
      if (path !== null) args.push('--', path);
      const result = await runGit(args, { cwd: repoDir, maxStdoutBytes: SEARCH_OUTPUT_MAX_BYTES });
      if (result.code === 1 && !result.cut) return { kind: 'matches', matches: [], truncated: false };
      if (result.code !== 0 && !result.cut) {
        const why = result.stderr
          .toString()
          .replace(/^fatal:\s*/m, '')
          .trim();
        return { kind: 'error', message: why.slice(0, 300) || `git grep exited ${result.code}` };
      }
      return parseGrep(result.stdout.toString('utf8'), commitOf(side), result.cut);
    },

    async readContext(name): Promise<ContextFile> {
      if (!CONTEXT_NAME.test(name) || name.split('/').some((s) => s === '..' || s === '.')) return { kind: 'missing', available: contextNames(contextAbs) };
      // The folder sits in the checkout: refuse any component that is a symlink (a change could plant one).
      let current = contextAbs;
      for (const segment of ['', ...name.split('/')]) {
        current = segment ? join(current, segment) : current;
        let stat;
        try {
          stat = lstatSync(current);
        } catch {
          return { kind: 'missing', available: contextNames(contextAbs) };
        }
        if (stat.isSymbolicLink()) return { kind: 'error', message: 'it is a symbolic link in the checkout; not followed' };
        if (segment === name.split('/').at(-1) && segment && !stat.isFile()) return { kind: 'missing', available: contextNames(contextAbs) };
      }
      const buffer = readFileSync(current);
      const truncated = buffer.length > READ_CONTEXT_MAX_BYTES;
      return { kind: 'text', text: buffer.subarray(0, READ_CONTEXT_MAX_BYTES).toString('utf8'), truncated };
    },
  };
}

/**
 * `git grep -z -n` output: `<commit>:<path>\0<line>\0<text>\n` per match. Read field by field:
 * a path may hold a line break (never a NUL); a line's text holds neither.
 */
function parseGrep(output: string, commit: string, cut: boolean): SearchResult {
  const matches: SearchMatch[] = [];
  let truncated = cut;
  const prefix = `${commit}:`;
  let at = 0;
  while (at < output.length) {
    const pathEnd = output.indexOf('\0', at);
    const lineEnd = pathEnd < 0 ? -1 : output.indexOf('\0', pathEnd + 1);
    if (lineEnd < 0) break; // a record cut short by the output limit
    const textEnd = output.indexOf('\n', lineEnd + 1);
    if (textEnd < 0) break;
    if (matches.length >= SEARCH_MAX_MATCHES) {
      truncated = true;
      break;
    }
    const where = output.slice(at, pathEnd);
    matches.push({ path: where.startsWith(prefix) ? where.slice(prefix.length) : where, line: Number(output.slice(pathEnd + 1, lineEnd)), text: output.slice(lineEnd + 1, textEnd) });
    at = textEnd + 1;
  }
  return { kind: 'matches', matches, truncated };
}

/** The files a context directory holds (top level and findings/), for a "did you mean" answer. */
function contextNames(dir: string): string[] {
  const out: string[] = [];
  const list = (sub: string) => {
    try {
      for (const entry of readdirSync(join(dir, sub), { withFileTypes: true })) {
        const name = sub ? `${sub}/${entry.name}` : entry.name;
        if (entry.isFile() && !entry.name.includes('.tmp')) out.push(name);
        else if (entry.isDirectory() && !sub) list(entry.name);
      }
    } catch {
      // an absent folder lists nothing
    }
  };
  list('');
  return out.sort();
}
