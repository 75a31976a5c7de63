/**
 * The ONE way text from a repository, a forge or a model becomes text in VS Code's UI.
 *
 * VS Code renders more than text in many places: a notification (and a progress notification's
 * title) turns `[label](command:…)` into a live link that runs the command; QuickPick rows and the
 * status bar turn `$(name)` into an icon; a MarkdownString (hover, comment body, tooltip) renders
 * links, images and emphasis. A path, a ref, a PR title or a claim is attacker-controlled, so it
 * reaches those surfaces only as one of the two branded values minted here:
 *
 * - `UiText` — plain text for notifications, dialogs, progress titles, QuickPick and InputBox
 *   fields, tree items, status bar, comment thread labels and tab titles. Interpolated values have
 *   their control and invisible characters written as visible escapes (protocol/text.ts), and the
 *   two sequences VS Code would render — `](` of a link and `$(` of an icon — are split by an
 *   invisible WORD JOINER, so they read as they are and render as nothing else.
 * - `Md` — Markdown source plus the exact command ids its own links may run. Plain values are
 *   escaped so every character renders as itself; model-written Markdown is re-emitted from
 *   markdown-it's tokens as a safe subset (no HTML, images as text, links only to public http(s)
 *   and mailto, every other target shown as text with its URL); `mdCommand` is the only way to make
 *   a command link, and it names its command.
 *
 * This half is pure (no runtime `vscode` import) so the plans and their unit tests use it; ui.ts is
 * the VS Code half, the only file that hands text to those APIs (a unit test scans the sources).
 */
import MarkdownIt from 'markdown-it';
import type { Token } from 'markdown-it';
import type { QuickPickItem } from 'vscode';
import { inertLinkNote, inertLinkReason, inertLinkSuffix } from '../protocol/links';
import { escapeControls } from '../protocol/text';

declare const uiTextBrand: unique symbol;
/** Plain text that renders as itself on every VS Code surface (no link, no icon). Minted here only. */
export type UiText = string & { readonly [uiTextBrand]: true };

/** A QuickPick row whose visible fields are UI text (VS Code renders `$(icon)` in all three). */
export type UiPickItem = Omit<QuickPickItem, 'label' | 'description' | 'detail'> & {
  label: UiText;
  description?: UiText;
  detail?: UiText;
};

/** Value that may be interpolated into `ui`: anything shown as its string form. */
export type UiValue = string | number | boolean | null | undefined;

const WORD_JOINER = '\u2060';

/** Link and icon syntax VS Code renders in plain-text surfaces, split so it stays text. */
function splitRenderedSyntax(text: string): string {
  return text.replace(/\]\(/g, `]${WORD_JOINER}(`).replace(/\$\(/g, `$${WORD_JOINER}(`);
}

/**
 * Plain UI text: the template's literal parts are ours and kept as written; every interpolated
 * value is untrusted and escaped. `ui\`${path} is a submodule\``.
 */
export function ui(strings: TemplateStringsArray, ...values: readonly UiValue[]): UiText {
  let out = strings[0] ?? '';
  values.forEach((value, i) => {
    out += uiEscape(value) + (strings[i + 1] ?? '');
  });
  return out as UiText;
}

/** One untrusted value, whole, as UI text (a host's error message, a ref, a path). */
export function uiText(value: UiValue): UiText {
  return uiEscape(value) as UiText;
}

/** Several UI texts joined by a separator of ours. */
export function uiJoin(parts: readonly UiText[], separator: string): UiText {
  return parts.join(separator) as UiText;
}

function uiEscape(value: UiValue): string {
  if (value === null || value === undefined) return '';
  return splitRenderedSyntax(escapeControls(String(value)));
}

// ─── Markdown ────────────────────────────────────────────────────────────────────────────────

/** Mints `Md`; module-private, so Markdown is built only by the functions below. */
let mintMd: (source: string, commands?: readonly string[]) => Md;

/** Markdown source for a MarkdownString, with the command ids its own links run (none for untrusted text). */
export class Md {
  private constructor(
    readonly source: string,
    readonly commands: readonly string[],
  ) {}

  static {
    mintMd = (source, commands = []) => new Md(source, [...new Set(commands)]);
  }
}

/** Value that may be interpolated into `md`: text (escaped) or Markdown built here (kept). */
export type MdValue = UiValue | Md;

/**
 * Markdown: literal parts are our markup (`**`, `*`, paragraph breaks); a string value is escaped
 * so it renders as its own text; an `Md` value (from `mdModel`, `mdCommand`, another `md`) is kept
 * with its commands.
 */
export function md(strings: TemplateStringsArray, ...values: readonly MdValue[]): Md {
  let source = strings[0] ?? '';
  const commands: string[] = [];
  values.forEach((value, i) => {
    if (value instanceof Md) {
      source += value.source;
      commands.push(...value.commands);
    } else {
      source += escapeMarkdownText(value === null || value === undefined ? '' : String(value));
    }
    source += strings[i + 1] ?? '';
  });
  return mintMd(source, commands);
}

/** Several Markdown pieces joined by a separator of ours (e.g. a paragraph break). */
export function mdJoin(parts: readonly Md[], separator: string): Md {
  return mintMd(
    parts.map((p) => p.source).join(separator),
    parts.flatMap((p) => p.commands),
  );
}

/**
 * A link that runs one of Rennet's own commands: `[label](command:id?args)`. The label is escaped
 * text; the arguments are JSON, percent-encoded (parentheses too, or they would end the link).
 * The MarkdownString made from this trusts exactly this command id.
 */
export function mdCommand(label: string, commandId: string, args: readonly unknown[]): Md {
  if (!/^[A-Za-z0-9_.-]+$/.test(commandId)) throw new Error(`not a command id: ${commandId}`);
  const query = encodeURIComponent(JSON.stringify(args)).replace(/\(/g, '%28').replace(/\)/g, '%29');
  return mintMd(`[${escapeMarkdownText(label)}](command:${commandId}?${query})`, [commandId]);
}

/**
 * Text that Markdown renders as itself: controls shown as escapes, whitespace runs as one space,
 * and every ASCII punctuation character backslash-escaped (CommonMark and VS Code's renderer allow
 * escaping any of them), so no link, autolink (`https\:\/\/`, `www\.`), image, HTML, entity,
 * emphasis, heading, table or icon can come of it.
 */
export function escapeMarkdownText(text: string): string {
  return escapeControls(text.replace(/[ \t\r\n]+/g, ' ')).replace(/[!-/:-@[-`{-~]/g, '\\$&');
}

/**
 * Model- or reviewer-written Markdown as a safe subset, rebuilt from markdown-it's tokens (so what
 * VS Code renders is what we emitted, not what its parser makes of hostile input): paragraphs,
 * emphasis, strike, inline code, code blocks, lists, quotes, tables, rules; headings as bold
 * paragraphs; raw HTML as text; images as `[image: alt]`; links live only to public http(s) and
 * mailto — anything else (command:, javascript:, file:, relative, this machine or a private
 * network) is its label followed by the URL as text.
 */
export function mdModel(markdown: string): Md {
  return mintMd(renderSafeMarkdown(markdown));
}

const parser = (() => {
  const it = new MarkdownIt({ html: false, linkify: false, typographer: false });
  (it.options as { maxNesting?: number }).maxNesting = 20;
  // Every target parses, so the renderer (not markdown-it) decides what a link becomes.
  it.validateLink = () => true;
  return it;
})();

function renderSafeMarkdown(markdown: string): string {
  const tokens = parser.parse(markdown, {});
  const out: string[] = [];
  renderBlocks(tokens, 0, tokens.length, out);
  return out
    .join('\n\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** Renders block tokens [from, to) as Markdown blocks pushed to `out`. */
function renderBlocks(tokens: readonly Token[], from: number, to: number, out: string[]): void {
  let i = from;
  while (i < to) {
    const token = tokens[i] as Token;
    switch (token.type) {
      case 'paragraph_open': {
        const inline = tokens[i + 1];
        out.push(renderInline(inline?.children ?? []));
        i = closeOf(tokens, i) + 1;
        break;
      }
      case 'heading_open': {
        const inline = tokens[i + 1];
        const text = renderInline(inline?.children ?? []);
        out.push(text ? `**${text}**` : '');
        i = closeOf(tokens, i) + 1;
        break;
      }
      case 'fence':
      case 'code_block':
        out.push(codeBlock(token.content));
        i++;
        break;
      case 'hr':
        out.push('---');
        i++;
        break;
      case 'blockquote_open': {
        const close = closeOf(tokens, i);
        const inner: string[] = [];
        renderBlocks(tokens, i + 1, close, inner);
        out.push(
          inner
            .join('\n\n')
            .split('\n')
            .map((line) => (line ? `> ${line}` : '>'))
            .join('\n'),
        );
        i = close + 1;
        break;
      }
      case 'bullet_list_open':
      case 'ordered_list_open': {
        const close = closeOf(tokens, i);
        out.push(renderList(tokens, i, close, token.type === 'ordered_list_open', Number(token.attrGet('start') ?? 1)));
        i = close + 1;
        break;
      }
      case 'table_open': {
        const close = closeOf(tokens, i);
        out.push(renderTable(tokens, i, close));
        i = close + 1;
        break;
      }
      case 'inline':
        out.push(renderInline(token.children ?? []));
        i++;
        break;
      default:
        // html_block cannot occur with html: false; anything else unknown shows its text.
        if (token.content) out.push(escapeMarkdownText(token.content));
        i++;
    }
  }
}

function renderList(tokens: readonly Token[], open: number, close: number, ordered: boolean, start: number): string {
  const items: string[] = [];
  let n = Number.isSafeInteger(start) && start >= 0 ? start : 1;
  for (let i = open + 1; i < close;) {
    const token = tokens[i] as Token;
    if (token.type !== 'list_item_open') {
      i++;
      continue;
    }
    const itemClose = closeOf(tokens, i);
    const inner: string[] = [];
    renderBlocks(tokens, i + 1, itemClose, inner);
    const marker = ordered ? `${n++}. ` : '- ';
    const pad = ' '.repeat(marker.length);
    const body = inner.join('\n\n').split('\n');
    items.push([`${marker}${body[0] ?? ''}`, ...body.slice(1).map((line) => (line ? `${pad}${line}` : ''))].join('\n'));
    i = itemClose + 1;
  }
  return items.join('\n');
}

function renderTable(tokens: readonly Token[], open: number, close: number): string {
  const rows: string[][] = [];
  let row: string[] | null = null;
  for (let i = open + 1; i < close; i++) {
    const token = tokens[i] as Token;
    if (token.type === 'tr_open') row = [];
    else if (token.type === 'tr_close' && row) {
      rows.push(row);
      row = null;
    } else if (token.type === 'inline' && row) row.push(renderInline(token.children ?? []).replace(/\n/g, ' '));
  }
  if (rows.length === 0) return '';
  const width = Math.max(...rows.map((r) => r.length));
  const line = (cells: readonly string[]) => `| ${Array.from({ length: width }, (_, k) => cells[k] ?? '').join(' | ')} |`;
  return [line(rows[0] ?? []), `|${' --- |'.repeat(width)}`, ...rows.slice(1).map(line)].join('\n');
}

function renderInline(tokens: readonly Token[]): string {
  let out = '';
  const links: Array<{ live: boolean; href: string }> = [];
  for (const token of tokens) {
    switch (token.type) {
      case 'text':
      case 'text_special':
        out += escapeMarkdownText(token.content);
        break;
      case 'code_inline':
        out += codeSpan(token.content);
        break;
      case 'softbreak':
        out += '\n';
        break;
      case 'hardbreak':
        out += '\\\n';
        break;
      case 'em_open':
      case 'em_close':
        out += '*';
        break;
      case 'strong_open':
      case 'strong_close':
        out += '**';
        break;
      case 's_open':
      case 's_close':
        out += '~~';
        break;
      case 'link_open': {
        const href = token.attrGet('href') ?? '';
        const live = isLiveHref(href);
        links.push({ live, href });
        if (live) out += '[';
        break;
      }
      case 'link_close': {
        const link = links.pop();
        if (!link) break;
        out += link.live ? `](<${encodeHref(link.href)}>)` : escapeMarkdownText(inertLinkSuffix(link.href, inertNote(link.href)));
        break;
      }
      case 'image': {
        const alt = (token.children ?? []).map((c) => c.content).join('') || token.content;
        out += escapeMarkdownText(`[image${alt ? `: ${alt}` : ''}]`);
        break;
      }
      default:
        if (token.content) out += escapeMarkdownText(token.content);
    }
  }
  return out;
}

/** A link stays live only to a public http(s) host or a mailto address. */
function isLiveHref(href: string): boolean {
  const compact = href.trim();
  if (/[\u0000-\u001f\u007f\s]/.test(compact)) return false;
  if (/^mailto:[^\s<>()]+$/i.test(compact)) return true;
  return /^https?:\/\//i.test(compact) && inertLinkReason(compact) === null;
}

/** Why a link is shown as text: the shared private-network note, or that it is no web link at all (command:, javascript:, relative). */
function inertNote(href: string): string {
  const reason = inertLinkReason(href);
  return reason ? inertLinkNote(reason) : 'not opened: not a web link';
}

/** An http(s)/mailto target inside `<…>`: nothing in it can end the destination early. */
function encodeHref(href: string): string {
  return href.trim().replace(/[<>\\ ]/g, (c) => encodeURIComponent(c));
}

function codeSpan(content: string): string {
  const text = escapeControls(content.replace(/\n/g, ' '));
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  const pad = text.startsWith('`') || text.endsWith('`') || text.startsWith(' ') ? ' ' : '';
  return `${fence}${pad}${text}${pad}${fence}`;
}

function codeBlock(content: string): string {
  const text = content.replace(/\n$/, '').split('\n').map(escapeControls).join('\n');
  const longest = Math.max(0, ...[...text.matchAll(/`{3,}/g)].map((m) => m[0].length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `${fence}\n${text}\n${fence}`;
}

/** Index of the token closing the block opened at `open` (same level, nesting −1). */
function closeOf(tokens: readonly Token[], open: number): number {
  const level = (tokens[open] as Token).level;
  for (let i = open + 1; i < tokens.length; i++) {
    const t = tokens[i] as Token;
    if (t.nesting === -1 && t.level === level) return i;
  }
  return tokens.length - 1;
}
