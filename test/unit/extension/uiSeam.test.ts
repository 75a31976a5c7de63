import * as assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
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
 *    of ours, `UiText` (minted by uiText.ts), or a MarkdownString (made only by ui.ts) — whether
 *    it is written `x.label = …`, `x['label'] = …`, in an object literal (spread included) or
 *    through `Object.assign`; `+=` onto one is refused outright (two escaped halves can join into
 *    `](` or `$(`).
 * 3. Only uiText.ts asserts a type into the seam (`as UiText`, `as Md`, `<UiText>x`, or a type
 *    holding one, such as `as UiPickItem`): anywhere else a cast would mint the brand unescaped.
 * 4. Only ui.ts touches a MarkdownString's source or trust (`value`, `isTrusted`, `supportHtml`,
 *    `supportThemeIcons`, `baseUri`, `appendMarkdown`/`appendText`/`appendCodeblock`); and not even
 *    ui.ts may make one trusted, HTML-rendering or icon-rendering (`true`).
 * 5. `env.openExternal` opens only a URL the same function checked with `isForgeLink` and parsed
 *    strictly (`Uri.parse(url, true)`).
 */

const ROOT = join(__dirname, '../../..');
const EXTENSION = join(ROOT, 'extension');
const SEAM_FILE = join(EXTENSION, 'ui.ts');
/** The pure half of the seam: the one file that mints `UiText` and `Md`. */
const MINT_FILE = join(EXTENSION, 'uiText.ts');

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
  'Hover',
  'CodeLens',
  'registerHoverProvider',
]);

/** MarkdownString members that set its source or how it renders; only ui.ts uses them. */
const MARKDOWN_WRITES = new Set(['value', 'isTrusted', 'supportThemeIcons', 'supportHtml', 'baseUri']);
const MARKDOWN_APPENDS = new Set(['appendMarkdown', 'appendText', 'appendCodeblock']);
/** MarkdownString switches that must never be `true`, in ui.ts too. */
const MARKDOWN_NEVER_TRUE = new Set(['isTrusted', 'supportThemeIcons', 'supportHtml']);

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
  Command: ['title', 'tooltip'],
  QuickInputButton: ['tooltip'],
};

export interface Violation {
  file: string;
  line: number;
  rule: 'rendering-call' | 'unescaped-text' | 'seam-cast' | 'markdown-write' | 'markdown-trust' | 'external-open';
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
  const config = ts.readConfigFile(join(EXTENSION, 'tsconfig.json'), ts.sys.readFile);
  return ts.parseJsonConfigFileContent(config.config, ts.sys, EXTENSION).options;
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

  const isVscodeDeclaration = (decl: ts.Declaration | undefined): boolean => decl !== undefined && /[\\/]@types[\\/]vscode[\\/]index\.d\.ts$/.test(decl.getSourceFile().fileName);

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

  const checkValue = (symbol: ts.Symbol | undefined, value: ts.Expression) => {
    if (!isRendered(symbol)) return;
    if (isSafeType(checker.getTypeAtLocation(value))) return;
    report(value, 'unescaped-text', `${symbol?.getName()} = ${value.getText().slice(0, 80)} (type ${checker.typeToString(checker.getTypeAtLocation(value))})`);
  };

  /** The VS Code declaration a call or `new` resolves to, with its name. */
  const calledVscode = (node: ts.CallExpression | ts.NewExpression): { decl: ts.Declaration; name: string; owner: string | null } | null => {
    const decl = checker.getResolvedSignature(node)?.getDeclaration();
    if (!decl || !isVscodeDeclaration(decl)) return null;
    const name = ts.isConstructorDeclaration(decl) ? decl.parent.name?.text : (decl as ts.SignatureDeclaration).name?.getText();
    if (!name) return null;
    return { decl, name, owner: ts.isConstructorDeclaration(decl) ? (decl.parent.name?.text ?? null) : declaringType(decl) };
  };

  /** A member of VS Code's MarkdownString class. */
  const markdownMember = (symbol: ts.Symbol | undefined): string | null => {
    const decl = symbol?.declarations?.[0];
    return decl && isVscodeDeclaration(decl) && declaringType(decl) === 'MarkdownString' ? symbol.getName() : null;
  };

  /** Whether a type is, holds or could be `UiText` or `Md` (looked into unions, arrays and, two levels deep, properties). */
  const holdsSeamType = (type: ts.Type, depth = 0): boolean => {
    if (type.isUnionOrIntersection()) return type.types.some((t) => holdsSeamType(t, depth));
    if (type.getProperties().some((p) => p.getName().startsWith('__@uiTextBrand'))) return true;
    const symbol = type.getSymbol();
    if (symbol?.getName() === 'Md' && symbol.declarations?.some((d) => d.getSourceFile().fileName === MINT_FILE)) return true;
    if (checker.isArrayType(type) || checker.isTupleType(type)) return checker.getTypeArguments(type as ts.TypeReference).some((t) => holdsSeamType(t, depth));
    if (depth >= 2 || !(type.flags & ts.TypeFlags.Object)) return false;
    if (symbol && symbol.declarations?.some((d) => isVscodeDeclaration(d) || /[\\/]typescript[\\/]lib[\\/]/.test(d.getSourceFile().fileName))) return false;
    return type.getProperties().some((p) => holdsSeamType(checker.getTypeOfSymbol(p), depth + 1));
  };

  /** The properties an element access names: its literal key(s), or null when the key is any string. */
  const accessedProperties = (access: ts.ElementAccessExpression): ts.Symbol[] | null => {
    const objectType = checker.getTypeAtLocation(access.expression);
    const keyType = checker.getTypeAtLocation(access.argumentExpression);
    const keys = keyType.isUnion() ? keyType.types : [keyType];
    if (!keys.every((k) => k.isStringLiteral() || k.isNumberLiteral())) return null;
    return keys.map((k) => objectType.getProperty(String((k as ts.LiteralType).value))).filter((s): s is ts.Symbol => s !== undefined);
  };

  /** Whether a type declares any rendered property (so a write to it by a computed key may be one). */
  const hasRendered = (type: ts.Type): boolean => (type.isUnion() ? type.types : [type]).some((t) => t.getProperties().some((p) => isRendered(p)));

  /** Checks each property of `sourceType` that lands on a rendered property of `targetType`. */
  const checkPropertiesInto = (at: ts.Node, targetType: ts.Type, sourceType: ts.Type, how: string) => {
    for (const prop of sourceType.getProperties()) {
      const targets = (targetType.isUnion() ? targetType.types : [targetType]).map((t) => t.getProperty(prop.getName())).filter((s): s is ts.Symbol => s !== undefined);
      if (!targets.some((t) => isRendered(t))) continue;
      const type = checker.getTypeOfSymbolAtLocation(prop, at);
      if (!isSafeType(type)) report(at, 'unescaped-text', `${how}: ${prop.getName()} (type ${checker.typeToString(type)}) — ${at.getText().slice(0, 80)}`);
    }
  };

  const ASSIGNMENTS = new Set([
    ts.SyntaxKind.EqualsToken,
    ts.SyntaxKind.PlusEqualsToken,
    ts.SyntaxKind.QuestionQuestionEqualsToken,
    ts.SyntaxKind.BarBarEqualsToken,
    ts.SyntaxKind.AmpersandAmpersandEqualsToken,
  ]);

  /** Whether `value` could be `true`. */
  const couldBeTrue = (value: ts.Expression): boolean => checker.isTypeAssignableTo(checker.getTrueType(), checker.getTypeAtLocation(value));

  const unwrap = (e: ts.Expression): ts.Expression => (ts.isParenthesizedExpression(e) ? unwrap(e.expression) : e);
  /** `isForgeLink(<url>, …)`, the URL written as `url`. */
  const isForgeCheck = (e: ts.Expression, url: string): boolean => {
    const call = unwrap(e);
    return ts.isCallExpression(call) && call.expression.getText() === 'isForgeLink' && call.arguments[0]?.getText() === url;
  };
  /** A condition that holds only when the check passed: the call, or an `&&` chain holding it. */
  const passedIn = (e: ts.Expression, url: string): boolean => {
    const c = unwrap(e);
    if (ts.isBinaryExpression(c) && c.operatorToken.kind === ts.SyntaxKind.AmpersandAmpersandToken) return passedIn(c.left, url) || passedIn(c.right, url);
    return isForgeCheck(c, url);
  };
  /** A condition that holds whenever the check failed: `!call`, or an `||` chain holding it. */
  const failedIn = (e: ts.Expression, url: string): boolean => {
    const c = unwrap(e);
    if (ts.isBinaryExpression(c) && c.operatorToken.kind === ts.SyntaxKind.BarBarToken) return failedIn(c.left, url) || failedIn(c.right, url);
    return ts.isPrefixUnaryExpression(c) && c.operator === ts.SyntaxKind.ExclamationToken && isForgeCheck(c.operand, url);
  };
  /** A statement that never falls through: return or throw, or a block ending in one. */
  const leaves = (st: ts.Statement): boolean =>
    ts.isReturnStatement(st) || ts.isThrowStatement(st) || (ts.isBlock(st) && st.statements.length > 0 && leaves(st.statements[st.statements.length - 1] as ts.Statement));
  /**
   * Whether `node` runs only after `isForgeLink(<url>, …)` passed in its own function: inside
   * `if (…isForgeLink(url, …)…) { here }`, or after `if (…!isForgeLink(url, …)…) { …; return; }`.
   */
  const guardedByForgeLink = (node: ts.Node, url: string): boolean => {
    for (let child: ts.Node = node, parent = node.parent; parent && !ts.isFunctionLike(child); child = parent, parent = parent.parent) {
      if (ts.isIfStatement(parent) && parent.thenStatement === child && passedIn(parent.expression, url)) return true;
      if (ts.isBlock(parent) || ts.isSourceFile(parent)) {
        for (const st of parent.statements) {
          if (st === child) break;
          if (ts.isIfStatement(st) && failedIn(st.expression, url) && leaves(st.thenStatement)) return true;
        }
      }
    }
    return false;
  };

  for (const source of program.getSourceFiles()) {
    if (!source.fileName.startsWith(EXTENSION)) continue;
    const inSeam = source.fileName === SEAM_FILE;
    const inMint = source.fileName === MINT_FILE;
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node) || ts.isNewExpression(node)) {
        const called = calledVscode(node);
        if (called && !inSeam && RENDERING_CALLS.has(called.name)) {
          report(node, 'rendering-call', `${node.getText().slice(0, 80)} — call it through extension/ui.ts`);
        }
        if (called && called.owner === 'MarkdownString' && MARKDOWN_APPENDS.has(called.name) && !inSeam) {
          report(node, 'markdown-write', `${node.getText().slice(0, 80)} — MarkdownString is built only in extension/ui.ts`);
        }
        if (called && ts.isNewExpression(node) && called.name === 'MarkdownString' && node.arguments?.[1] && couldBeTrue(node.arguments[1])) {
          report(node, 'markdown-trust', `${node.getText().slice(0, 80)} — supportThemeIcons may be true`);
        }
        if (called && called.name === 'openExternal') {
          const arg = node.arguments?.[0];
          const parse = arg && ts.isCallExpression(arg) ? calledVscode(arg) : null;
          const strict = parse?.name === 'parse' && arg && ts.isCallExpression(arg) && arg.arguments.length === 2 && arg.arguments[1]?.kind === ts.SyntaxKind.TrueKeyword;
          const url = strict && arg && ts.isCallExpression(arg) ? arg.arguments[0] : undefined;
          if (!url || !guardedByForgeLink(node, url.getText())) {
            report(node, 'external-open', `${node.getText().slice(0, 80)} — open only a URL checked with isForgeLink, parsed with Uri.parse(url, true)`);
          }
        }
      }
      // Object.assign(target, …sources): each source property landing on a rendered one.
      if (ts.isCallExpression(node) && node.expression.getText() === 'Object.assign' && node.arguments.length > 1) {
        const targetType = checker.getTypeAtLocation(node.arguments[0] as ts.Expression);
        if (hasRendered(targetType)) for (const src of node.arguments.slice(1)) checkPropertiesInto(src, targetType, checker.getTypeAtLocation(src), 'Object.assign');
      }
      // Casts into the seam's types.
      if ((ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) && !inMint && !ts.isConstTypeReference(node.type)) {
        const type = checker.getTypeFromTypeNode(node.type);
        if (holdsSeamType(type)) report(node, 'seam-cast', `${node.getText().slice(0, 80)} — only extension/uiText.ts mints UiText and Md`);
        // A VS Code type with rendered properties cast to one without (any, unknown, a record): its writes would go unchecked.
        else if (hasRendered(checker.getTypeAtLocation(node.expression)) && !hasRendered(type)) {
          report(node, 'seam-cast', `${node.getText().slice(0, 80)} — erases the rendered properties of ${checker.typeToString(checker.getTypeAtLocation(node.expression))}`);
        }
      }
      if (ts.isBinaryExpression(node) && ASSIGNMENTS.has(node.operatorToken.kind) && (ts.isPropertyAccessExpression(node.left) || ts.isElementAccessExpression(node.left))) {
        const left = node.left;
        const symbols: ts.Symbol[] | null = ts.isPropertyAccessExpression(left) ? [checker.getSymbolAtLocation(left.name)].filter((s): s is ts.Symbol => s !== undefined) : accessedProperties(left);
        if (symbols === null) {
          // A computed key: any rendered property of the object could be the one written.
          if (hasRendered(checker.getTypeAtLocation((left as ts.ElementAccessExpression).expression)) && !isSafeType(checker.getTypeAtLocation(node.right))) {
            report(node, 'unescaped-text', `${node.getText().slice(0, 80)} — a computed key on a type with rendered properties`);
          }
        }
        const before = violations.length;
        for (const symbol of symbols ?? []) {
          if (violations.length > before) break; // one report per write, however many properties its key names
          if (node.operatorToken.kind === ts.SyntaxKind.PlusEqualsToken && isRendered(symbol)) {
            report(node.right, 'unescaped-text', `${symbol.getName()} += ${node.right.getText().slice(0, 80)} — concatenation can join escaped halves into rendered syntax`);
          } else {
            checkValue(symbol, node.right);
          }
          const member = markdownMember(symbol);
          if (member && MARKDOWN_WRITES.has(member) && !inSeam) report(node, 'markdown-write', `${node.getText().slice(0, 80)} — MarkdownString is built only in extension/ui.ts`);
          if (member && MARKDOWN_NEVER_TRUE.has(member) && couldBeTrue(node.right)) report(node, 'markdown-trust', `${node.getText().slice(0, 80)} — ${member} may be true`);
        }
      }
      if ((ts.isPropertyAssignment(node) || ts.isShorthandPropertyAssignment(node)) && ts.isObjectLiteralExpression(node.parent)) {
        const contextual = checker.getContextualType(node.parent);
        const name = node.name.getText();
        const symbols = contextual ? (contextual.isUnion() ? contextual.types : [contextual]).map((t) => t.getProperty(name)).filter((s): s is ts.Symbol => s !== undefined) : [];
        const value = ts.isPropertyAssignment(node) ? node.initializer : node.name;
        for (const symbol of symbols) checkValue(symbol, value);
      }
      // `{ ...other }` where the literal is a rendered type: each spread property landing on a rendered one.
      if (ts.isSpreadAssignment(node) && ts.isObjectLiteralExpression(node.parent)) {
        const contextual = checker.getContextualType(node.parent);
        if (contextual && hasRendered(contextual)) checkPropertiesInto(node, contextual, checker.getTypeAtLocation(node.expression), 'spread');
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return violations;
}

/** extension/ui.ts with one more line in markdownString: icons turned on (the trust rule holds in ui.ts too). */
const UI_SOURCE = readFileSync(SEAM_FILE, 'utf8');
const UI_TRUST_ANCHOR = '  out.supportHtml = false;\n';
const UI_WITH_TRUST = UI_SOURCE.replace(UI_TRUST_ANCHOR, `${UI_TRUST_ANCHOR}  out.supportThemeIcons = Boolean(markdown.source);\n`);
const UI_TRUST_LINE = `ui.ts:${UI_SOURCE.slice(0, UI_SOURCE.indexOf(UI_TRUST_ANCHOR) + UI_TRUST_ANCHOR.length).split('\n').length}`;

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
      [
        file('badCasts'),
        [
          "import * as vscode from 'vscode';",
          "import { Md, type UiPickItem, type UiText } from './uiText';",
          'export function badCasts(path: string, item: vscode.TreeItem) {',
          '  const a = path as UiText;',
          '  const b = <UiText>path;',
          '  const c = { source: path, commands: [] } as unknown as Md;',
          '  const d = [{ label: path }] as UiPickItem[];',
          '  const e = (path as UiText | undefined) ?? a;',
          '  (item as any).label = path;',
          '  return [a, b, c, d, e];',
          '}',
        ].join('\n'),
      ],
      [
        file('badMarkdown'),
        [
          "import { markdownString } from './ui';",
          "import { md } from './uiText';",
          'export function badMarkdown(path: string, trusted: boolean) {',
          '  const out = markdownString(md`ok`);',
          '  out.value = path;',
          '  out.value += path;',
          '  out.isTrusted = true;',
          '  out.supportThemeIcons = trusted;',
          '  out.supportHtml = false;',
          '  out.appendMarkdown(path);',
          '  out.appendText(path);',
          "  out.appendCodeblock(path, 'js');",
          "  out['isTrusted'] = { enabledCommands: ['workbench.action.terminal.new'] };",
          '  return out.value;',
          '}',
        ].join('\n'),
      ],
      [
        file('badWrites'),
        [
          "import * as vscode from 'vscode';",
          "import { ui } from './uiText';",
          "export function badWrites(path: string, key: 'label' | 'detail', name: string, item: vscode.TreeItem, pick: vscode.QuickPickItem, status: vscode.StatusBarItem, scm: vscode.SourceControl) {",
          "  item['label'] = path;",
          '  pick[key] = path;',
          '  (item as unknown as Record<string, unknown>)[name] = path;',
          '  item.description += ui`, more`;',
          '  Object.assign(item, { label: path, tooltip: ui`ok` });',
          '  const raw = { detail: path };',
          '  const row: vscode.QuickPickItem = { label: ui`ok`, ...raw };',
          '  status.text = path;',
          '  scm.inputBox.placeholder = path;',
          "  const button: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon('x'), tooltip: path };",
          "  const command: vscode.Command = { command: 'x', title: path };",
          '  const lens = new vscode.CodeLens(new vscode.Range(0, 0, 0, 0), command);',
          '  const hover = new vscode.Hover(path);',
          "  const provider = vscode.languages.registerHoverProvider('*', { provideHover: () => hover });",
          '  return [row, button, lens, provider];',
          '}',
        ].join('\n'),
      ],
      [
        file('badOpen'),
        [
          "import * as vscode from 'vscode';",
          "import { isForgeLink } from './forgePlan';",
          'export async function badOpen(url: string, host: string) {',
          '  if (/^https?:\\/\\//.test(url)) await vscode.env.openExternal(vscode.Uri.parse(url));',
          '  if (isForgeLink(url, host)) await vscode.env.openExternal(vscode.Uri.parse(url));',
          '  await vscode.env.openExternal(vscode.Uri.parse(url, true));',
          '  if (isForgeLink(host, host)) await vscode.env.openExternal(vscode.Uri.parse(url, true));',
          '}',
        ].join('\n'),
      ],
      [
        file('goodMore'),
        [
          "import * as vscode from 'vscode';",
          "import { isForgeLink } from './forgePlan';",
          "import { markdownString } from './ui';",
          "import { md, ui, uiText, type UiText } from './uiText';",
          'export async function goodMore(path: string, url: string, host: string, item: vscode.TreeItem, status: vscode.StatusBarItem, scm: vscode.SourceControl) {',
          "  item['label'] = uiText(path);",
          '  Object.assign(item, { label: ui`x`, description: uiText(path), id: path });',
          '  const raw = { label: uiText(path) };',
          '  const row: vscode.QuickPickItem = { ...raw, picked: true };',
          '  status.text = ui`$(sync) ${path}`;',
          '  scm.inputBox.placeholder = ui`Message`;',
          "  const command: vscode.Command = { command: 'x', title: 'Open', tooltip: ui`Open ${path}`, arguments: [path] };",
          '  const out = markdownString(md`**${path}**`);',
          '  const text: string = out.value;',
          '  const widened = uiText(path) as string;',
          '  const checked = ui`ok` satisfies UiText;',
          "  const literal = { kind: 'x' } as const;",
          '  if (!isForgeLink(url, host)) return [];',
          '  await vscode.env.openExternal(vscode.Uri.parse(url, true));',
          '  return [row, command, text, widened, checked, literal];',
          '}',
        ].join('\n'),
      ],
      // ui.ts itself may not make a MarkdownString trusted, or render icons or HTML.
      [SEAM_FILE, UI_WITH_TRUST],
    ]);
    const found = scanUiSeam(overlay).filter((v) => v.file.includes('__seam_fixture_') || v.file === 'extension/ui.ts');
    assert.ok(UI_WITH_TRUST !== UI_SOURCE, 'the ui.ts fixture found no `out.supportHtml = false;` line to follow');
    const summary = found.map((v) => `${v.file.replace(/^extension\/(__seam_fixture_)?/, '')}:${v.line} ${v.rule}`);
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
        // Casts into the seam (and one erasing a rendered type to write through it).
        'badCasts.ts:4 seam-cast',
        'badCasts.ts:5 seam-cast',
        'badCasts.ts:6 seam-cast',
        'badCasts.ts:7 seam-cast',
        'badCasts.ts:8 seam-cast',
        'badCasts.ts:9 seam-cast',
        // MarkdownString source and trust, outside ui.ts; `true` nowhere.
        'badMarkdown.ts:5 markdown-write',
        'badMarkdown.ts:6 markdown-write',
        'badMarkdown.ts:7 markdown-write',
        'badMarkdown.ts:7 markdown-trust',
        'badMarkdown.ts:8 markdown-write',
        'badMarkdown.ts:8 markdown-trust',
        'badMarkdown.ts:9 markdown-write',
        'badMarkdown.ts:10 markdown-write',
        'badMarkdown.ts:11 markdown-write',
        'badMarkdown.ts:12 markdown-write',
        'badMarkdown.ts:13 markdown-write',
        `${UI_TRUST_LINE} markdown-trust`,
        // Element access, computed keys, +=, Object.assign, spread; status bar, SCM input, buttons, commands, lenses, hovers.
        'badWrites.ts:4 unescaped-text',
        'badWrites.ts:5 unescaped-text',
        'badWrites.ts:6 seam-cast',
        'badWrites.ts:7 unescaped-text',
        'badWrites.ts:8 unescaped-text',
        'badWrites.ts:10 unescaped-text',
        'badWrites.ts:11 unescaped-text',
        'badWrites.ts:12 unescaped-text',
        'badWrites.ts:13 unescaped-text',
        'badWrites.ts:14 unescaped-text',
        'badWrites.ts:15 rendering-call',
        'badWrites.ts:16 rendering-call',
        'badWrites.ts:17 rendering-call',
        // openExternal without isForgeLink on the same URL, or without a strict parse.
        'badOpen.ts:4 external-open',
        'badOpen.ts:5 external-open',
        'badOpen.ts:6 external-open',
        'badOpen.ts:7 external-open',
      ].sort(),
      found.map((v) => `${v.file}:${v.line} ${v.rule}: ${v.text}`).join('\n'),
    );
  });
});
