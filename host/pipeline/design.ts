import type { Patchset } from '../../protocol/patchset';
import { assembleDesignBoard } from '../design/assemble';
import { runGit } from '../git/run';
import type { DesignAssembler } from './types';

/**
 * The Design fast path the pipeline uses when its caller supplies none: host/design's assembler,
 * reading specification files at the captured head from the workspace's object store (never the
 * work tree, which may have moved on).
 */

/** A specification file past this is not read (the assembler then falls back to the seat). */
export const DESIGN_HEAD_READ_MAX_BYTES = 4 * 1024 * 1024;

export function defaultDesignAssembler(workspaceDir: string): DesignAssembler {
  return (patchset: Patchset) => assembleDesignBoard(patchset, (path) => readFileAtCommit(workspaceDir, patchset.head, path));
}

/** A file's text at a commit, or null when the commit has no such file (or it is too large). */
export async function readFileAtCommit(repoDir: string, commit: string, path: string): Promise<string | null> {
  if (path.startsWith('-') || path.includes('\0') || !/^[0-9a-f]{7,64}$/i.test(commit)) return null;
  const result = await runGit(['cat-file', 'blob', `${commit}:${path}`], { cwd: repoDir, maxStdoutBytes: DESIGN_HEAD_READ_MAX_BYTES + 1 });
  if (result.code !== 0 || result.cut || result.stdout.length > DESIGN_HEAD_READ_MAX_BYTES) return null;
  return result.stdout.toString('utf8');
}
