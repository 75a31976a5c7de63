/**
 * Pure formatting for the board panel: every word and number the panel shows about a capture is
 * decided here, so it is unit-tested without a DOM. No imports beyond protocol types.
 */
import { pullRequestLabel, type FileStatus, type FileSummary, type PatchsetSummary, type PatchsetTotals, type Target, type Truncation } from '../protocol';

/** Hex characters shown for a commit id; the full id is always one hover (title) away. */
export const SHORT_ID_LENGTH = 12;

export function shortId(id: string): string {
  return id.slice(0, SHORT_ID_LENGTH);
}

export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

/** Bytes as KiB (the unit the limits are configured in): 1048576 → "1024 KiB", 1536 → "1.5 KiB". */
export function formatKiB(bytes: number): string {
  const kib = bytes / 1024;
  const text = Number.isInteger(kib) ? String(kib) : kib.toFixed(1).replace(/\.0$/, '');
  return `${text} KiB`;
}

/** The header's chip: "branch", "working tree", "pull request" (GitHub) or "merge request" (GitLab). */
export function targetKindLabel(target: Target): string {
  if (target.kind === 'pull-request') return target.provider === 'gitlab' ? 'merge request' : 'pull request';
  return target.kind === 'branch' ? 'branch' : 'working tree';
}

/** "feature vs main" / "working tree vs main" / "Pull Request #12 · octo/hello". */
export function targetLabel(target: Target): string {
  if (target.kind === 'pull-request') return `${pullRequestLabel(target)} · ${target.owner}/${target.repo}`;
  return target.kind === 'branch' ? `${target.head} vs ${target.base}` : `working tree vs ${target.base}`;
}

/**
 * The head side as a person names it: the branch, or "working tree of <branch>". A host may
 * already spell the working tree into headRef (e.g. "feature (working tree)"); then it is kept.
 */
export function headLabel(patchset: Pick<PatchsetSummary, 'targetKind' | 'headRef'>): string {
  if (patchset.targetKind !== 'working-tree' || /working tree/i.test(patchset.headRef)) return patchset.headRef;
  return `working tree of ${patchset.headRef}`;
}

export const STATUS_LABELS: Record<FileStatus, string> = {
  added: 'added',
  modified: 'modified',
  deleted: 'deleted',
  renamed: 'renamed',
};

export function statusLabel(file: Pick<FileSummary, 'status'>): string {
  return STATUS_LABELS[file.status];
}

/** Tooltip for the status badge (rename similarity when git reported one). */
export function statusTitle(file: Pick<FileSummary, 'status' | 'oldPath' | 'similarity'>): string {
  if (file.status === 'renamed') {
    const from = file.oldPath ? ` from ${file.oldPath}` : '';
    const similarity = file.similarity !== null ? ` (${file.similarity}% similar)` : '';
    return `renamed${from}${similarity}`;
  }
  return `${file.status} in this change`;
}

export type StateBadgeKind = 'mode' | 'binary' | 'submodule' | 'truncated';

export interface StateBadge {
  kind: StateBadgeKind;
  text: string;
  /** Longer explanation for the tooltip. */
  title: string;
}

export interface TruncationText {
  text: string;
  title: string;
}

/** "truncated — over 1024 KiB limit" / "truncated after line 200 (patch over limit)". */
export function truncationText(truncation: Truncation | null): TruncationText {
  if (!truncation) return { text: 'truncated', title: 'Captured truncated; the host did not say why.' };
  const limit = formatKiB(truncation.limitBytes);
  const sizes = [truncation.baseBytes !== null ? `base ${formatKiB(truncation.baseBytes)}` : null, truncation.headBytes !== null ? `head ${formatKiB(truncation.headBytes)}` : null]
    .filter((s): s is string => s !== null)
    .join(', ');
  const sizeNote = sizes ? ` (${sizes})` : '';
  if (truncation.reason === 'file-size') {
    return {
      text: `truncated — over ${limit} limit`,
      title: `A blob is larger than the ${limit} capture limit${sizeNote}; no hunks were read and the whole file counts as changed.`,
    };
  }
  const side: 'head' | 'base' | null = truncation.tailFrom.head !== null ? 'head' : truncation.tailFrom.base !== null ? 'base' : null;
  const from = side ? truncation.tailFrom[side] : null;
  const lastCaptured = from !== null ? from - 1 : 0;
  const where = side === 'base' ? ' on the base side' : '';
  const title = `The patch is larger than the ${limit} per-file limit${sizeNote}; hunks past the limit were dropped${
    from !== null ? ` and everything from line ${from}${where} to the end of the file counts as changed` : ''
  }.`;
  return lastCaptured >= 1 ? { text: `truncated after line ${lastCaptured}${where} (patch over limit)`, title } : { text: `truncated (patch over ${limit} limit)`, title };
}

/** Badges beyond the status, in a stable order: mode, binary, submodule, truncated. */
export function stateBadges(file: FileSummary): StateBadge[] {
  const badges: StateBadge[] = [];
  if (file.modeChanged) {
    const from = file.oldMode ?? '?';
    const to = file.newMode ?? '?';
    badges.push({ kind: 'mode', text: `mode ${from}→${to}`, title: `File mode changed from ${from} to ${to}.` });
  }
  if (file.binary) {
    badges.push({ kind: 'binary', text: 'binary', title: 'Binary content: no lines to review, line counts unknown.' });
  }
  if (file.submodule) {
    badges.push({
      kind: 'submodule',
      text: 'submodule — not reviewed (blocked)',
      title: 'A submodule (gitlink): its content is another repository and is not reviewed here.',
    });
  }
  if (file.truncated) {
    const { text, title } = truncationText(file.truncation);
    badges.push({ kind: 'truncated', text, title });
  }
  return badges;
}

export interface LineCount {
  /** "+12", "−3", or "—" when unknown. Never "0" for unknown. */
  text: string;
  /** Tooltip: "12 lines added" or "line counts unknown". */
  title: string;
  known: boolean;
}

const MINUS = '\u2212';

export function additionsText(additions: number | null): LineCount {
  if (additions === null) return { text: '—', title: 'line counts unknown', known: false };
  return { text: `+${additions}`, title: `${plural(additions, 'line')} added`, known: true };
}

export function deletionsText(deletions: number | null): LineCount {
  if (deletions === null) return { text: '—', title: 'line counts unknown', known: false };
  return { text: `${MINUS}${deletions}`, title: `${plural(deletions, 'line')} deleted`, known: true };
}

export interface TotalsPart {
  key: keyof PatchsetTotals;
  text: string;
  title?: string;
}

/** "3 files · +10 · −2 · 4 hunks" plus binary/submodule/truncated/uncounted when non-zero. */
export function totalsParts(totals: PatchsetTotals): TotalsPart[] {
  const parts: TotalsPart[] = [
    { key: 'files', text: plural(totals.files, 'file') },
    {
      key: 'additions',
      text: `+${totals.additions}`,
      title: `${plural(totals.additions, 'line')} added${totals.uncounted ? ` in counted files` : ''}`,
    },
    {
      key: 'deletions',
      text: `${MINUS}${totals.deletions}`,
      title: `${plural(totals.deletions, 'line')} deleted${totals.uncounted ? ` in counted files` : ''}`,
    },
    { key: 'hunks', text: plural(totals.hunks, 'hunk') },
  ];
  if (totals.binary) parts.push({ key: 'binary', text: `${totals.binary} binary` });
  if (totals.submodules) parts.push({ key: 'submodules', text: plural(totals.submodules, 'submodule') });
  if (totals.truncated) parts.push({ key: 'truncated', text: `${totals.truncated} truncated` });
  if (totals.uncounted) {
    parts.push({
      key: 'uncounted',
      text: `${totals.uncounted} uncounted`,
      title: `${plural(totals.uncounted, 'file')} whose line counts are unknown (binary, submodule or truncated by size); not included in +/−`,
    });
  }
  return parts;
}

/**
 * What the old side of the diff is. The diff runs from the merge-base of base and head; say so,
 * and say when the base ref has moved on since.
 */
export function mergeBaseNote(patchset: PatchsetSummary): string {
  const mergeBase = shortId(patchset.base);
  if (patchset.baseTip === patchset.base) {
    return `${patchset.baseRef} (${mergeBase}) is the merge-base: the diff shows everything ${headLabel(patchset)} adds to it.`;
  }
  return `Compared with the merge-base ${mergeBase} of ${patchset.baseRef} and ${headLabel(patchset)}; ${patchset.baseRef} itself is now at ${shortId(patchset.baseTip)}, and its newer commits are not part of this diff.`;
}

/** A working-tree capture's head is a synthetic commit; say what it holds. */
export function headNote(patchset: PatchsetSummary): string | null {
  return patchset.targetKind === 'working-tree' ? `Head ${shortId(patchset.head)} is a commit Rennet recorded from the ${headLabel(patchset)}, uncommitted and untracked files included.` : null;
}

/** The side to open when a file is clicked: a deleted file only exists on the base side. */
export function openSide(file: Pick<FileSummary, 'status'>): 'base' | 'head' {
  return file.status === 'deleted' ? 'base' : 'head';
}
