import * as vscode from 'vscode';
import type { FileSummary, Side } from '../../protocol/patchset';
import { absentBlobUri, blobUri } from '../blobDocuments';
import type { Ctx } from '../ctx';
import { documentRef, type DocumentRef } from '../documentRefs';
import { errorMessage } from '../../protocol/result';
import { changeRow, diffPlan, findChangedFile, type DiffSide } from '../openChangesPlan';
import { notify, quickPick } from '../ui';
import { ui, type UiPickItem } from '../uiText';

type FileItem = UiPickItem & {
  file: FileSummary;
};

const STATUS_ICONS: Record<FileSummary['status'], string> = {
  added: 'diff-added',
  modified: 'diff-modified',
  deleted: 'diff-removed',
  renamed: 'diff-renamed',
};

/** The side a document shows, when it shows one (a checkout file is the head). */
function sideOf(ref: DocumentRef | null): Side | undefined {
  if (ref?.kind === 'workspace') return 'head';
  return ref?.kind === 'blob' ? ref.side : undefined;
}

/**
 * "Rennet: Open Changes [path]": a changed file of the active review (picked, the current editor's
 * file first in focus, or named by `path`) opened as a diff of its captured base and head, both
 * read-only `rennet-blob:` documents (so the gutter marks show on both sides). Answers whether a
 * diff was opened.
 */
export const openChanges =
  (ctx: Ctx) =>
  async (requested?: unknown): Promise<boolean> => {
    try {
      const view = ctx.review.current;
      const patchset = view?.session.patchset;
      if (!view || !patchset) {
        const choice = await notify(
          'info',
          view ? ui`This Rennet review has no capture yet: recapture it from its board.` : ui`No Rennet review is open: run “Rennet: Review Branch” first.`,
          ...(view ? [] : [ui`Review Branch`]),
        );
        if (choice) void vscode.commands.executeCommand('rennet.reviewBranch');
        return false;
      }
      const repoRoot = view.session.session.repoRoot;
      const files = patchset.files;
      let file: FileSummary | undefined;
      const requestedRef = requested instanceof vscode.Uri ? documentRef(requested, repoRoot) : null;
      const named = typeof requested === 'string' ? requested : requestedRef?.path;
      if (named !== undefined) {
        file = findChangedFile(files, named, sideOf(requestedRef));
        if (!file) {
          void notify('warning', ui`“${named}” is not a changed file of this review.`);
          return false;
        }
      } else {
        if (files.length === 0) {
          void notify('info', ui`This capture has no changed files.`);
          return false;
        }
        // The captured file the current editor shows (a checkout file, or any side of a blob), focused in the picker.
        const current = vscode.window.activeTextEditor ? documentRef(vscode.window.activeTextEditor.document.uri, repoRoot) : null;
        file = await pickFile(files, current ? findChangedFile(files, current.path, sideOf(current)) : undefined);
        if (!file) return false;
      }
      const plan = diffPlan(file);
      if (plan.kind === 'no-text') {
        void notify('info', plan.message);
        return false;
      }
      const uriOf = (side: DiffSide) => (side.side === 'absent' ? absentBlobUri(patchset.id, side.path) : blobUri(patchset.id, side.path, side.side));
      await vscode.commands.executeCommand('vscode.diff', uriOf(plan.left), uriOf(plan.right), plan.title, { preview: true } satisfies vscode.TextDocumentShowOptions);
      return true;
    } catch (error) {
      void notify('error', ui`Rennet could not open the changes: ${errorMessage(error)}`);
      return false;
    }
  };

async function pickFile(files: readonly FileSummary[], current: FileSummary | undefined): Promise<FileSummary | undefined> {
  const items: FileItem[] = files.map((file) => ({ ...changeRow(file), iconPath: new vscode.ThemeIcon(STATUS_ICONS[file.status]), file }));
  const picker = quickPick<FileItem>({ title: ui`Rennet: Open Changes`, placeholder: ui`Changed file to compare (base ↔ head)`, matchOnDescription: true });
  picker.items = items;
  const preselected = current ? items.find((item) => item.file === current) : undefined;
  if (preselected) picker.activeItems = [preselected];
  try {
    return await new Promise<FileSummary | undefined>((resolve) => {
      picker.onDidAccept(() => resolve(picker.selectedItems[0]?.file ?? picker.activeItems[0]?.file));
      picker.onDidHide(() => resolve(undefined));
      picker.show();
    });
  } finally {
    picker.dispose();
  }
}
