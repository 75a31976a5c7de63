import type { EvalTruthRange } from '../../protocol/eval';
import type { FileChange, Hunk } from '../../protocol/patchset';

/**
 * A case's ground truth from the parsed diff base → head (pure). Per hunk: its added lines as a
 * `head` range (line numbers on the head); a hunk that only deletes lines (the fix only added
 * code there: a guard, an `await`, a `finally`) gives its deleted lines as a `base` range instead.
 * Per hunk rather than per file, so a removed guard still counts when the same file also has a
 * changed line elsewhere. Paths are the file's path in the diff (the head's name of a rename,
 * the base's of a deletion). Order: by path, then hunk order; deterministic.
 */
export function truthOfDiff(files: readonly FileChange[]): EvalTruthRange[] {
  const ordered = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const truth: EvalTruthRange[] = [];
  for (const file of ordered) {
    for (const hunk of file.hunks) {
      const added = runsOf(hunk, 'add');
      const ranges = added.length > 0 ? added.map((run) => ({ side: 'head' as const, ...run })) : runsOf(hunk, 'del').map((run) => ({ side: 'base' as const, ...run }));
      for (const range of ranges) truth.push({ path: file.path, side: range.side, startLine: range.startLine, endLine: range.endLine });
    }
  }
  return truth;
}

/** Contiguous runs of one kind's line numbers in a hunk (one run per hunk at zero context). */
function runsOf(hunk: Hunk, kind: 'add' | 'del'): Array<{ startLine: number; endLine: number }> {
  const runs: Array<{ startLine: number; endLine: number }> = [];
  for (const line of hunk.lines) {
    if (line.kind !== kind) continue;
    const number = (kind === 'add' ? line.newLine : line.oldLine) as number;
    const last = runs[runs.length - 1];
    if (last && last.endLine === number - 1) last.endLine = number;
    else runs.push({ startLine: number, endLine: number });
  }
  return runs;
}
