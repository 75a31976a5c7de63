import type { FileSummary, PatchsetSummary } from '../protocol/patchset';

/** Plain-text rendering of a capture for terminals; no colour, stable for scripts and tests. */
export function fileStateLabels(file: FileSummary): string[] {
  const labels: string[] = [file.oldPath ? `renamed from ${file.oldPath}` : file.status];
  if (file.modeChanged) labels.push(`mode ${file.oldMode}→${file.newMode}`);
  if (file.binary) labels.push('binary');
  if (file.submodule) labels.push('submodule (not reviewed)');
  if (file.truncation) {
    labels.push(
      file.truncation.reason === 'file-size'
        ? `truncated: over the ${file.truncation.limitBytes}-byte file limit`
        : `truncated: patch over ${file.truncation.limitBytes} bytes, hunks from line ${file.truncation.tailFrom.head ?? file.truncation.tailFrom.base} not captured`,
    );
  }
  return labels;
}

function counts(file: FileSummary): string {
  if (file.additions === null || file.deletions === null) return '   (unknown)';
  return `+${file.additions} -${file.deletions}`.padStart(12);
}

export function formatPatchsetSummary(patchset: PatchsetSummary): string {
  const t = patchset.totals;
  const header = [
    `Patchset ${patchset.id}`,
    `  head ${patchset.head}  (${patchset.targetKind === 'working-tree' ? `working tree of ${patchset.headRef}` : patchset.headRef})`,
    `  base ${patchset.base}  (merge-base with ${patchset.baseRef})`,
    `  ${t.files} file${t.files === 1 ? '' : 's'} changed, +${t.additions} -${t.deletions}, ${t.hunks} hunk${t.hunks === 1 ? '' : 's'}` +
      (t.uncounted ? `; ${t.uncounted} without line counts` : '') +
      (t.truncated ? `; ${t.truncated} truncated` : ''),
    '',
  ];
  const rows = patchset.files.map((file) => `${counts(file)}  ${file.path}  [${fileStateLabels(file).join(', ')}]`);
  return [...header, ...rows].join('\n');
}
