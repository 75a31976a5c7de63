/**
 * "Rennet: Open Changes" without VS Code: the picker rows of a capture's changed files and what
 * the diff of one of them compares. Pure (no `vscode` import), unit-tested in test/unit/extension/.
 */
import { filesOnSides, type FileStatus, type Side } from '../protocol/patchset';
import { ui, uiJoin, uiText, type UiText } from './uiText';

/** The fields of a captured file (`FileSummary`) this needs. */
export interface ChangedFile {
  path: string;
  oldPath: string | null;
  status: FileStatus;
  binary: boolean;
  submodule: boolean;
  modeChanged: boolean;
  oldMode: string | null;
  newMode: string | null;
  additions: number | null;
  deletions: number | null;
}

export interface ChangeRow {
  label: UiText;
  description: UiText;
}

/** One side of the diff: a captured blob, or the empty document of a side the file does not have. */
export interface DiffSide {
  path: string;
  side: 'base' | 'head' | 'absent';
}

export type DiffPlan =
  | { kind: 'diff'; left: DiffSide; right: DiffSide; title: UiText }
  /** Nothing to compare as text (binary, submodule): say this instead. */
  | { kind: 'no-text'; message: UiText };

/**
 * The changed file a path names. With a side (a document shows one), protocol/patchset.ts's one
 * rule; with none (a path typed or passed), the file it names on the head side, else on the base side.
 */
export function findChangedFile<F extends ChangedFile>(files: readonly F[], path: string, side?: Side): F | undefined {
  const named = filesOnSides(files);
  return side ? named.on(path, side) : (named.on(path, 'head') ?? named.on(path, 'base'));
}

/** `src/app.ts` · `modified · +3 −1`; a rename names its old path, a mode change its modes. */
export function changeRow(file: ChangedFile): ChangeRow {
  const parts: UiText[] = [file.status === 'renamed' && file.oldPath ? ui`renamed from ${file.oldPath}` : uiText(file.status)];
  if (file.submodule) parts.push(ui`submodule`);
  else if (file.binary) parts.push(ui`binary`);
  else if (file.additions !== null && file.deletions !== null) parts.push(ui`+${file.additions} −${file.deletions}`);
  if (file.modeChanged && file.oldMode && file.newMode) parts.push(ui`mode ${file.oldMode} → ${file.newMode}`);
  return { label: uiText(file.path), description: uiJoin(parts, ' · ') };
}

/**
 * What to compare: base ↔ head of the capture; an added file's base and a deleted file's head are
 * empty documents, a rename's base is read by its old path. Binary files and submodules have no
 * text to compare, which is said instead.
 */
export function diffPlan(file: ChangedFile): DiffPlan {
  if (file.submodule) return { kind: 'no-text', message: ui`${file.path} is a submodule: its content is another repository and is not reviewed here.` };
  if (file.binary) return { kind: 'no-text', message: ui`${file.path} is a binary file: Rennet has no text to compare for it.` };
  const basePath = file.oldPath ?? file.path;
  const left: DiffSide = file.status === 'added' ? { path: file.path, side: 'absent' } : { path: basePath, side: 'base' };
  const right: DiffSide = file.status === 'deleted' ? { path: file.path, side: 'absent' } : { path: file.path, side: 'head' };
  return { kind: 'diff', left, right, title: diffTitle(file) };
}

/** `app.ts (base ↔ head) · Rennet`; `old.md → new.md (…)` for a rename that changed the name. */
export function diffTitle(file: ChangedFile): UiText {
  const name = basename(file.path);
  const oldName = file.oldPath ? basename(file.oldPath) : name;
  const sides = file.status === 'added' ? 'added' : file.status === 'deleted' ? 'deleted' : 'base ↔ head';
  return oldName !== name ? ui`${oldName} → ${name} (${sides}) · Rennet` : ui`${name} (${sides}) · Rennet`;
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}
