/**
 * The VS Code half of the text seam (uiText.ts is the pure half): the only file that hands text to
 * a VS Code API that renders links, icons or Markdown. Every function here takes `UiText` or `Md`,
 * which only uiText.ts mints, so a raw path, ref, host message or model text cannot reach these
 * surfaces by accident; test/unit/extension/uiSeam.test.ts fails the build when any other file
 * calls one of these APIs itself or assigns an unbranded string to a rendered property.
 */
import * as vscode from 'vscode';
import type { Md, UiPickItem, UiText } from './uiText';

export type { Md, UiPickItem, UiText } from './uiText';

export type NoticeKind = 'info' | 'warning' | 'error';

const SHOW = {
  info: vscode.window.showInformationMessage,
  warning: vscode.window.showWarningMessage,
  error: vscode.window.showErrorMessage,
} as const;

/** A notification with optional action buttons; resolves to the button chosen. */
export function notify<A extends UiText>(kind: NoticeKind, message: UiText, ...actions: A[]): Thenable<A | undefined> {
  return SHOW[kind](message, ...actions);
}

/** A modal dialog: `detail` is a second paragraph; resolves to the button chosen (undefined on Cancel). */
export function confirmModal<A extends UiText>(kind: NoticeKind, message: UiText, detail: UiText | undefined, ...actions: A[]): Thenable<A | undefined> {
  return SHOW[kind](message, { modal: true, ...(detail !== undefined ? { detail } : {}) }, ...actions);
}

export interface UiProgressOptions {
  location: vscode.ProgressLocation;
  title: UiText;
  cancellable?: boolean;
}

/** `window.withProgress` with a UI-text title (a notification's title renders links). */
export function withProgress<R>(options: UiProgressOptions, task: (progress: vscode.Progress<{ message?: UiText; increment?: number }>, token: vscode.CancellationToken) => Thenable<R>): Thenable<R> {
  return vscode.window.withProgress(options, task);
}

export interface UiPickOptions {
  title: UiText;
  placeHolder: UiText;
  matchOnDescription?: boolean;
  matchOnDetail?: boolean;
  ignoreFocusOut?: boolean;
}

/** `window.showQuickPick` over rows whose label, description and detail are UI text. */
export function pickOne<T extends UiPickItem>(items: readonly T[], options: UiPickOptions): Thenable<T | undefined> {
  return vscode.window.showQuickPick([...items], options);
}

/** `window.createQuickPick` with its title and placeholder set; its rows are UI text by type. */
export function quickPick<T extends UiPickItem>(options: { title: UiText; placeholder: UiText; matchOnDescription?: boolean }): vscode.QuickPick<T> {
  const picker = vscode.window.createQuickPick<T>();
  picker.title = options.title;
  picker.placeholder = options.placeholder;
  picker.matchOnDescription = options.matchOnDescription ?? false;
  return picker;
}

export interface UiInputOptions {
  title: UiText;
  prompt: UiText;
  placeHolder?: UiText;
  /** Text the box starts with: an editable field's content, shown as typed (never rendered). */
  value?: string;
  password?: boolean;
  ignoreFocusOut?: boolean;
  validateInput?: (value: string) => UiText | undefined;
}

/** `window.showInputBox` with UI-text title, prompt, placeholder and validation messages. */
export function inputBox(options: UiInputOptions): Thenable<string | undefined> {
  return vscode.window.showInputBox(options);
}

/**
 * A MarkdownString from Markdown built in uiText.ts: no HTML, no theme icons, and trusted for
 * exactly the command ids its own links name (`{ enabledCommands }`), never `true`; untrusted when
 * it names none.
 */
export function markdownString(markdown: Md): vscode.MarkdownString {
  const out = new vscode.MarkdownString(markdown.source, false);
  out.supportHtml = false;
  out.isTrusted = markdown.commands.length > 0 ? { enabledCommands: [...markdown.commands] } : false;
  return out;
}

/**
 * The body of a comment while the reviewer edits it: VS Code puts it in the comment's edit box as
 * text and renders nothing of it; preview mode gets `markdownString` again on Save or Cancel.
 */
export function editableBody(text: string): string {
  return text;
}

/** A transient status bar message (the status bar renders `$(icon)`). */
export function statusMessage(text: UiText, hideAfterMs: number): vscode.Disposable {
  return vscode.window.setStatusBarMessage(text, hideAfterMs);
}

/**
 * `window.createTreeView`. Its title, description, message and badge tooltip are set by the caller
 * and take UI text only (the seam test checks those assignments); its rows come from `treeItem`.
 */
export function treeView<T>(viewId: string, options: vscode.TreeViewOptions<T>): vscode.TreeView<T> {
  return vscode.window.createTreeView(viewId, options);
}

/** A tree row with a UI-text label (description and tooltip are set on it, UI text or `markdownString` by type). */
export function treeItem(label: UiText, collapsibleState: vscode.TreeItemCollapsibleState = vscode.TreeItemCollapsibleState.None): vscode.TreeItem {
  return new vscode.TreeItem(label, collapsibleState);
}

/** `window.createWebviewPanel` with a UI-text tab title. */
export function webviewPanel(
  viewType: string,
  title: UiText,
  showOptions: { viewColumn: vscode.ViewColumn; preserveFocus?: boolean },
  options: vscode.WebviewPanelOptions & vscode.WebviewOptions,
): vscode.WebviewPanel {
  return vscode.window.createWebviewPanel(viewType, title, showOptions, options);
}
