import * as assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

/**
 * The rule that keeps repository, forge and model text from becoming a live link, command or icon
 * in VS Code's UI (extension/uiText.ts and extension/ui.ts): read with the TypeScript type
 * checker over every file of extension/.
 *
 * 1. Only extension/ui.ts calls a VS Code API that renders text (notifications, progress, quick
 *    picks, input boxes, webview panels, tree views, status bar, terminals, MarkdownString and
 *    TreeItem constructors).
 * 2. Anywhere else, a rendered property of a VS Code type (a QuickPick row's label, a panel's
 *    title, a comment thread's label, a comment's body, a hover, …) is given only a string literal
 *    of ours, `UiText` (minted by uiText.ts), or a MarkdownString (made only by ui.ts).
 */

const ROOT = join(__dirname, '../../..');
const EXTENSION = join(ROOT, 'extension');
const SEAM_FILE = join(EXTENSION, 'ui.ts');

/** VS Code functions and constructors that render text; only ui.ts may call them. */
const RENDERING_CALLS = new Set([
  'showInformationMessage',
  'showWarningMessage',
  'showErrorMessage',
  'showQuickPick',
  'createQuickPick',
  'showInputBox',
  'createInputBox',
  'withProgress',
  'createStatusBarItem',
  'setStatusBarMessage',
  'createWebviewPanel',
  'createTreeView',
  'registerTreeDataProvider',
  'createTerminal',
  'executeTask',
  'createSourceControl',
  'showOpenDialog',
  'showSaveDialog',
  'MarkdownString',
  'TreeItem',
]);

/** Rendered properties, by the VS Code type that declares them. */
const RENDERED: Record<string, readonly string[]> = {
  QuickPickItem: ['label', 'description', 'detail'],
  QuickPick: ['title', 'placeholder'],
  InputBox: ['title', 'prompt', 'placeholder', 'validationMessage'],
  QuickInput: ['title'],
  QuickPickOptions: ['title', 'placeHolder'],
  InputBoxOptions: ['title', 'prompt', 'placeHolder'],
  MessageOptions: ['detail'],
  MessageItem: ['title'],
  ProgressOptions: ['title'],
  TreeItem: ['label', 'description', 'tooltip'],
  TreeView: ['title', 'description', 'message', 'badge'],
  ViewBadge: ['tooltip'],
  StatusBarItem: ['text', 'tooltip', 'name'],
  WebviewPanel: ['title'],
  WebviewView: ['title', 'description', 'badge'],
  CommentThread: ['label'],
  Comment: ['body', 'label'],
  CommentAuthorInformation: ['name'],
  DecorationOptions: ['hoverMessage'],
  ThemableDecorationAttachmentRenderOptions: ['contentText'],
  SourceControl: ['count', 'statusBarCommands'],
  SourceControlInputBox: ['placeholder', 'value'],
  TerminalOptions: ['name', 'message'],
};

export interface Violation {
  file: string;
  line: number;
  rule: 'rendering-call' | 'unescaped-text';
  text: string;
}

function extensionFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return extensionFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

function compilerOptions(): ts.CompilerOptions {
  const config = ts.readConfigFile(join(ROOT, 'tsconfig.json'), ts.sys.readFile);
  return ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT).options;
}

/** Scans extension/ (plus `overlay`: in-memory files under extension/) and returns every violation. */
export function scanUiSeam(overlay: ReadonlyMap<string, string> = new Map()): Violation[] {
  const options = compilerOptions();
  const host = ts.createCompilerHost(options, true);
  const readFile = host.readFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const getSourceFile = host.getSourceFile.bind(host);
  host.readFile = (name) => overlay.get(name) ?? readFile(name);
  host.fileExists = (name) => overlay.has(name) || fileExists(name);
  host.getSourceFile = (name, language, onError, fresh) => {
    const text = overlay.get(name);
    return text !== undefined ? ts.createSourceFile(name, text, language, true) : getSourceFile(name, language, onError, fresh);
  };
  const program = ts.createProgram([...extensionFiles(EXTENSION), ...overlay.keys()], options, host);
  const checker = program.getTypeChecker();
  const violations: Violation[] = [];

  const isVscodeDeclaration = (decl: ts.Declaration | undefined): boolean =>
    decl !== undefined && /[\\/]@types[\\/]vscode[\\/]index\.d\.ts$/.test(decl.getSourceFile().fileName);

  const declaringType = (decl: ts.Declaration): string | null => {
    const parent = decl.parent;
    return (ts.isInterfaceDeclaration(parent) || ts.isClassDeclaration(parent)) && parent.name ? parent.name.text : null;
  };

  const isRendered = (symbol: ts.Symbol | undefined): boolean => {
    if (!symbol) return false;
    return (symbol.declarations ?? []).some((decl) => {
      if (!isVscodeDeclaration(decl)) return false;
      const owner = declaringType(decl);
      return owner !== null && (RENDERED[owner] ?? []).includes(symbol.getName());
    });
  };

  /** A value whose type proves it came through the seam (or is text of ours). */
  const isSafeType = (type: ts.Type): boolean => {
    if (type.isUnion()) return type.types.every(isSafeType);
    if (type.flags & (ts.TypeFlags.Undefined | ts.TypeFlags.Null | ts.TypeFlags.StringLiteral | ts.TypeFlags.NumberLiteral | ts.TypeFlags.Never)) return true;
    if (checker.getPropertiesOfType(type).some((p) => p.getName().startsWith('__@uiTextBrand'))) return true;
    const symbol = type.getSymbol();
    if (symbol && ['MarkdownString', 'ViewBadge'].includes(symbol.getName()) && isVscodeDeclaration(symbol.declarations?.[0])) return true;
    if (checker.isArrayType(type)) return checker.getTypeArguments(type as ts.TypeReference).every(isSafeType);
    return false;
  };

  const report = (node: ts.Node, rule: Violation['rule'], text: string) => {
    const source = node.getSourceFile();
    const { line } = source.getLineAndCharacterOfPosition(node.getStart());
    violations.push({ file: relative(ROOT, source.fileName), line: line + 1, rule, text });
  };

  const checkValue = (target: ts.Node, symbol: ts.Symbol | undefined, value: ts.Expression) => {
    if (!isRendered(symbol)) return;
    if (isSafeType(checker.getTypeAtLocation(value))) return;
    report(value, 'unescaped-text', `${symbol?.getName()} = ${value.getText().slice(0, 80)} (type ${checker.typeToString(checker.getTypeAtLocation(value))})`);
  };

  for (const source of program.getSourceFiles()) {
    if (!source.fileName.startsWith(EXTENSION) || source.fileName === SEAM_FILE) continue;
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node) || ts.isNewExpression(node)) {
        const decl = checker.getResolvedSignature(node)?.getDeclaration();
        const name = decl && (ts.isConstructorDeclaration(decl) ? decl.parent.name?.text : (decl as ts.SignatureDeclaration).name?.getText());
        if (decl && isVscodeDeclaration(decl) && name && RENDERING_CALLS.has(name)) {
          report(node, 'rendering-call', `${node.getText().slice(0, 80)} — call it through extension/ui.ts`);
        }
      }
      if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.EqualsToken && ts.isPropertyAccessExpression(node.left)) {
        checkValue(node.left, checker.getSymbolAtLocation(node.left.name), node.right);
      }
      if ((ts.isPropertyAssignment(node) || ts.isShorthandPropertyAssignment(node)) && ts.isObjectLiteralExpression(node.parent)) {
        const contextual = checker.getContextualType(node.parent);
        const name = node.name.getText();
        const symbols = contextual ? (contextual.isUnion() ? contextual.types : [contextual]).map((t) => t.getProperty(name)).filter((s): s is ts.Symbol => s !== undefined) : [];
        const value = ts.isPropertyAssignment(node) ? node.initializer : node.name;
        for (const symbol of symbols) checkValue(node, symbol, value);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return violations;
}

describe('extension: every rendered text goes through the escaping seam (uiText.ts / ui.ts)', function () {
  this.timeout(120_000);

  it('no file but extension/ui.ts calls a rendering API, and no rendered property takes unescaped text', () => {
    const found = scanUiSeam();
    assert.deepEqual(found, [], `\n${found.map((v) => `${v.file}:${v.line} ${v.rule}: ${v.text}`).join('\n')}`);
  });

  it('finds each way repository text could slip past it (so the rule can fail)', () => {
    const file = (name: string) => join(EXTENSION, `__seam_fixture_${name}.ts`);
    const overlay = new Map<string, string>([
      [
        file('bad'),
        [
          "import * as vscode from 'vscode';",
          "import { ui } from './uiText';",
          'export function bad(path: string, panel: vscode.WebviewPanel, thread: vscode.CommentThread) {',
          '  void vscode.window.showInformationMessage(`${path} is a submodule`);',
          "  void vscode.window.showWarningMessage('literal', { modal: true, detail: path });",
          '  panel.title = `Rennet · ${path}`;',
          '  thread.label = path;',
          '  const item: vscode.QuickPickItem = { label: path, description: ui`ok` };',
          '  const hover: vscode.DecorationOptions = { range: new vscode.Range(0, 0, 0, 0), hoverMessage: `**${path}**` };',
          '  const md = new vscode.MarkdownString(path);',
          '  return [item, hover, md];',
          '}',
        ].join('\n'),
      ],
      [
        file('good'),
        [
          "import * as vscode from 'vscode';",
          "import { notify, markdownString, pickOne } from './ui';",
          "import { md, ui, uiText, type UiPickItem } from './uiText';",
          'export function good(path: string, panel: vscode.WebviewPanel, thread: vscode.CommentThread) {',
          '  void notify("info", ui`${path} is a submodule`);',
          "  panel.title = 'Rennet';",
          '  panel.title = ui`Rennet · ${path}`;',
          '  thread.label = uiText(path);',
          '  const items: UiPickItem[] = [{ label: uiText(path) }];',
          '  void pickOne(items, { title: ui`Pick`, placeHolder: ui`One` });',
          '  const hover: vscode.DecorationOptions = { range: new vscode.Range(0, 0, 0, 0), hoverMessage: markdownString(md`**${path}**`) };',
          '  return hover;',
          '}',
        ].join('\n'),
      ],
      [
        file('badTree'),
        [
          "import * as vscode from 'vscode';",
          'export function badTree(path: string, view: vscode.TreeView<unknown>, item: vscode.TreeItem) {',
          '  view.description = path;',
          '  view.message = `Review of ${path}`;',
          '  const badge: vscode.ViewBadge = { value: 1, tooltip: path };',
          '  item.tooltip = path;',
          '  item.description = path;',
          '  const row = new vscode.TreeItem(path);',
          "  const tree = vscode.window.createTreeView('x', { treeDataProvider: { getTreeItem: (e: vscode.TreeItem) => e, getChildren: () => [] } });",
          '  return [badge, row, tree];',
          '}',
        ].join('\n'),
      ],
      [
        file('goodTree'),
        [
          "import * as vscode from 'vscode';",
          "import { markdownString, treeItem, treeView } from './ui';",
          "import { md, ui, uiText } from './uiText';",
          'export function goodTree(path: string, item: vscode.TreeItem) {',
          "  const view = treeView<vscode.TreeItem>('x', { treeDataProvider: { getTreeItem: (e) => e, getChildren: () => [] } });",
          '  view.description = uiText(path);',
          '  view.message = ui`Review of ${path}`;',
          '  const badge: vscode.ViewBadge = { value: 1, tooltip: ui`${path}` };',
          '  view.badge = badge;',
          '  item.tooltip = markdownString(md`**${path}**`);',
          '  return treeItem(uiText(path));',
          '}',
        ].join('\n'),
      ],
    ]);
    const found = scanUiSeam(overlay).filter((v) => v.file.includes('__seam_fixture_'));
    const summary = found.map((v) => `${v.file.replace(/^extension\/__seam_fixture_/, '')}:${v.line} ${v.rule}`);
    assert.deepEqual(
      summary.sort(),
      [
        'bad.ts:4 rendering-call',
        'bad.ts:5 rendering-call',
        'bad.ts:5 unescaped-text',
        'bad.ts:6 unescaped-text',
        'bad.ts:7 unescaped-text',
        'bad.ts:8 unescaped-text',
        'bad.ts:9 unescaped-text',
        'bad.ts:10 rendering-call',
        'badTree.ts:3 unescaped-text',
        'badTree.ts:4 unescaped-text',
        'badTree.ts:5 unescaped-text',
        'badTree.ts:6 unescaped-text',
        'badTree.ts:7 unescaped-text',
        'badTree.ts:8 rendering-call',
        'badTree.ts:9 rendering-call',
      ].sort(),
      found.map((v) => `${v.file}:${v.line} ${v.rule}: ${v.text}`).join('\n'),
    );
  });
});
