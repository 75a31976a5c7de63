import type { FileChange, PatchsetTotals } from '../../protocol/patchset';

/**
 * Two paths in UTF-8 byte order (docs/capture-json.md), which is code point order. `<` compares
 * UTF-16 code units and so puts U+E000–U+FFFF (a fullwidth letter, U+FFFD) after every character
 * past U+FFFF (an emoji, a surrogate pair); ranking the units moves the surrogates last.
 */
export function compareUtf8(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return utf8Rank(x) - utf8Rank(y);
  }
  return a.length - b.length;
}

function utf8Rank(unit: number): number {
  return unit >= 0xe000 ? unit - 0x800 : unit >= 0xd800 ? unit + 0x2000 : unit;
}

export function emptyTotals(): PatchsetTotals {
  return { files: 0, additions: 0, deletions: 0, hunks: 0, binary: 0, submodules: 0, truncated: 0, uncounted: 0 };
}

/** Counts one file with `hunkCount` hunks into `totals`. */
export function addToTotals(totals: PatchsetTotals, file: Pick<FileChange, 'additions' | 'deletions' | 'binary' | 'submodule' | 'truncated'>, hunkCount: number): void {
  totals.files++;
  totals.additions += file.additions ?? 0;
  totals.deletions += file.deletions ?? 0;
  totals.hunks += hunkCount;
  if (file.binary) totals.binary++;
  if (file.submodule) totals.submodules++;
  if (file.truncated) totals.truncated++;
  if (file.additions === null || file.deletions === null) totals.uncounted++;
}

export function totalsOf(files: readonly FileChange[]): PatchsetTotals {
  const totals = emptyTotals();
  for (const file of files) addToTotals(totals, file, file.hunks.length);
  return totals;
}
