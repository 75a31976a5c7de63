/**
 * Model-written Markdown to preact nodes — the ONE place the webview reads Markdown.
 *
 * markdown-it (maintained, `html: false`) parses; this module turns its token stream into
 * preact vnodes itself, so no HTML string is ever produced or parsed and nothing here (or
 * anywhere in the webview) uses `dangerouslySetInnerHTML`. What that buys, on top of
 * markdown-it's own escaping of raw HTML (`<script>`, `<img onerror>` come out as text):
 * - only the elements and attributes below are ever created — no `style`, no `on*`, no `src`;
 * - links follow host/review/markdown.ts: http(s) and mailto become links (with
 *   rel="noopener noreferrer"), `#fragment` stays a link, any other scheme (javascript:,
 *   vbscript:, data:, file:, …) is refused by `validateLink` and stays text; a scheme-less
 *   relative target has nothing to resolve against inside a webview, so it renders as inert text
 *   with the target in its title;
 * - an http(s) link to this machine or a private network (protocol/links.ts, the one rule: VS Code
 *   opens those without asking) is never a link: its text is followed by its URL and why it was
 *   not opened, "label (http://127.0.0.1:8080/x — not opened: …)";
 * - images are never loaded: `![alt](src)` renders as the text "[image: alt]";
 * - headings are demoted (h1 → h4 …) so a model's `# Heading` cannot outrank the board's own;
 * - no linkify, no typographer; nesting is capped (MAX_NESTING) so a hostile 200-deep list parses
 *   to a bounded tree. markdown-it stops reading a document where the cap is reached, so the rest
 *   of it would vanish: a text that reaches the cap shows whole, as plain text, and says why;
 * - a text longer than MARKDOWN_MAX_CHARS is not parsed: its first MARKDOWN_MAX_CHARS characters
 *   show as plain text, followed by how many more there are (MarkdownView offers the whole text,
 *   still plain). Parsing and laying out a megabyte of model text held the panel's main thread
 *   for seconds (markdown-it spends microseconds a character on `[`-heavy input), and no reader
 *   needs that much prose formatted;
 * - table alignment (markdown-it's `style="text-align:…"`) becomes a class, so nothing needs
 *   'unsafe-inline'.
 * Citations in prose text (`repo/path.ext:12`, `:12-20`, head side) are handed to a callback that
 * renders them (a button that opens the cited range); citations inside code or links stay text.
 */
import { escapeInvisible } from '../../protocol/text';
import MarkdownIt from 'markdown-it';
import type { Token } from 'markdown-it';
import { h, type ComponentChild, type VNode } from 'preact';
import { SOURCE_EXTENSIONS } from '../../protocol/board';
import { inertLinkNote, inertLinkReason, inertLinkSuffix } from '../../protocol/links';
import { plural } from './words';

const SAFE_LINK = /^(?:https?:|mailto:)/i;
const HAS_SCHEME = /^[a-z][a-z0-9+.-]*:/i;
const HEADING_SHIFT = 3;
/** markdown-it's block/inline nesting ceiling (its default is 100). */
export const MAX_NESTING = 50;
/** Longest text formatted as Markdown; a longer one shows its first this-many characters as plain text. */
export const MARKDOWN_MAX_CHARS = 50_000;

function build(): MarkdownIt {
  const md = new MarkdownIt({ html: false, linkify: false, typographer: false, breaks: false });
  // Not in @types/markdown-it's Options, but read by both parsers (options.maxNesting).
  (md.options as { maxNesting?: number }).maxNesting = MAX_NESTING;
  md.validateLink = (url: string) => isAllowedHref(url);
  return md;
}

/** The link rule of host/review/markdown.ts: http(s), mailto, or no scheme at all. */
export function isAllowedHref(url: string): boolean {
  const compact = url.trim().replace(/[\u0000-\u001f\s]/g, '');
  return SAFE_LINK.test(compact) || !HAS_SCHEME.test(compact);
}

const md = build();

// ─── Citations ───────────────────────────────────────────────────────────────────────────────

/** A `path:line` citation found in prose (head side). */
export interface Citation {
  path: string;
  start: number;
  end: number;
  /** As written. */
  raw: string;
}

/** Extensions that make `x.ext:12` a source path: protocol's one list, also the host's. */
export const CITATION_EXTENSIONS: readonly string[] = SOURCE_EXTENSIONS;
const EXTENSION_SET = new Set(CITATION_EXTENSIONS);

// A path starts after anything that is not a path character (so `/abs/x.ts:1` and `~/x.ts:1` are
// not repo-relative citations), and its line range is not followed by a word character.
const PATH_CHARS = String.raw`\p{L}\p{N}_~@+.\/\\-`;
const CITATION = new RegExp(String.raw`(?<![${PATH_CHARS}])([\p{L}\p{N}_@+.-][\p{L}\p{N}_~@+.\/-]*\.([A-Za-z][A-Za-z0-9]{0,11})):(\d{1,9})(?:-(\d{1,9}))?(?![\p{L}\p{N}_\/\\])`, 'gu');

/** Repo-relative `path:line` / `path:start-end` citations in a run of prose text, in order. */
export function findCitations(text: string): Citation[] {
  const out: Citation[] = [];
  for (const match of text.matchAll(CITATION)) {
    const path = match[1] ?? '';
    const ext = (match[2] ?? '').toLowerCase();
    if (!EXTENSION_SET.has(ext)) continue;
    if (!isCanonicalPath(path)) continue;
    const start = Number(match[3]);
    const end = match[4] !== undefined ? Number(match[4]) : start;
    if (!Number.isSafeInteger(start) || start < 1 || end < start) continue;
    out.push({ path, start, end, raw: match[0] });
  }
  return out;
}

function isCanonicalPath(path: string): boolean {
  if (path.includes('//')) return false;
  return path.split('/').every((segment) => segment !== '.' && segment !== '..' && segment.length > 0);
}

/** The text with its citations handed to `render`; plain strings in between. */
export function withCitations(text: string, render: CitationRenderer | undefined): ComponentChild[] {
  if (!render) return [escapeInvisible(text)];
  const citations = text.length > 0 ? findCitations(text) : [];
  if (citations.length === 0) return [escapeInvisible(text)];
  const out: ComponentChild[] = [];
  let at = 0;
  citations.forEach((citation, i) => {
    const index = text.indexOf(citation.raw, at);
    if (index < 0) return;
    if (index > at) out.push(escapeInvisible(text.slice(at, index)));
    out.push(render(citation, i));
    at = index + citation.raw.length;
  });
  if (at < text.length) out.push(escapeInvisible(text.slice(at)));
  return out;
}

export type CitationRenderer = (citation: Citation, key: number) => VNode;

// ─── Tokens to vnodes ────────────────────────────────────────────────────────────────────────

interface Frame {
  /** null: a transparent frame (a tight list's hidden paragraph); children go to the parent. */
  tag: string | null;
  props: Record<string, unknown>;
  children: ComponentChild[];
  /** An inert link's URL and note, appended as text after its label when the frame closes. */
  inert?: { url: string; note: string };
}

/** Tags this module may create from open/close tokens. Anything else is rendered as its content. */
const BLOCK_TAGS = new Set(['p', 'blockquote', 'ul', 'ol', 'li', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'em', 'strong', 's', 'a']);

function demote(tag: string): string {
  const level = Number(tag.slice(1));
  return `h${Math.min(6, (Number.isFinite(level) ? level : 1) + HEADING_SHIFT)}`;
}

function openProps(token: Token, state: RenderState): { tag: string | null; props: Record<string, unknown>; inert?: Frame['inert'] } {
  const tag = token.tag;
  if (/^h[1-6]$/.test(tag)) return { tag: demote(tag), props: {} };
  if (tag === 'a') {
    const href = token.attrGet('href') ?? '';
    const title = token.attrGet('title');
    state.linkDepth++;
    const compact = href.trim();
    const reason = inertLinkReason(href);
    if (reason !== null) {
      // This machine or a private network: shown, never opened (protocol/links.ts).
      return { tag: 'span', props: { class: 'rn-md-link-inert' }, inert: { url: compact, note: inertLinkNote(reason) } };
    }
    if (compact.startsWith('#') || SAFE_LINK.test(compact.replace(/[\u0000-\u001f\s]/g, ''))) {
      return { tag: 'a', props: { href: compact, rel: 'noopener noreferrer', title: title ?? undefined, class: 'rn-md-link' } };
    }
    // Relative: nothing to resolve against inside a webview. Text, with the target shown on hover.
    return { tag: 'span', props: { class: 'rn-md-link-inert', title: href } };
  }
  if (tag === 'ol') {
    const start = Number(token.attrGet('start'));
    return { tag, props: Number.isSafeInteger(start) && start !== 1 ? { start } : {} };
  }
  if (tag === 'th' || tag === 'td') {
    const style = token.attrGet('style') ?? '';
    const align = /text-align:\s*(left|center|right)/.exec(style)?.[1];
    return { tag, props: align ? { class: `rn-md-align-${align}` } : {} };
  }
  if (BLOCK_TAGS.has(tag)) return { tag, props: {} };
  return { tag: null, props: {} };
}

interface RenderState {
  linkDepth: number;
  citation: CitationRenderer | undefined;
}

function renderLeaf(token: Token, state: RenderState, out: ComponentChild[]): void {
  switch (token.type) {
    case 'text':
    case 'text_special':
      for (const part of withCitations(token.content, state.linkDepth > 0 ? undefined : state.citation)) out.push(part);
      return;
    case 'code_inline':
      out.push(h('code', null, escapeInvisible(token.content)));
      return;
    case 'softbreak':
      out.push('\n');
      return;
    case 'hardbreak':
      out.push(h('br', null));
      return;
    case 'fence':
    case 'code_block':
      out.push(h('pre', { class: 'rn-md-pre' }, h('code', null, escapeInvisible(token.content))));
      return;
    case 'hr':
      out.push(h('hr', null));
      return;
    case 'image': {
      const alt = (token.children ?? []).map((child) => child.content).join('') || token.content;
      out.push(h('span', { class: 'rn-md-image' }, `[image${alt ? `: ${escapeInvisible(alt)}` : ''}]`));
      return;
    }
    case 'inline':
      renderTokens(token.children ?? [], state, out);
      return;
    default:
      // html_block / html_inline cannot occur with html: false; anything unknown stays text.
      if (token.content) out.push(escapeInvisible(token.content));
  }
}

function renderTokens(tokens: readonly Token[], state: RenderState, out: ComponentChild[]): void {
  const stack: Frame[] = [{ tag: null, props: {}, children: out }];
  const top = () => stack[stack.length - 1] as Frame;
  for (const token of tokens) {
    if (token.nesting === 1) {
      const { tag, props, inert } = token.hidden ? { tag: null, props: {} } : openProps(token, state);
      stack.push({ tag, props, children: tag === null ? top().children : [], ...(inert ? { inert } : {}) });
    } else if (token.nesting === -1) {
      if (stack.length <= 1) continue;
      const frame = stack.pop() as Frame;
      if (token.tag === 'a') state.linkDepth = Math.max(0, state.linkDepth - 1);
      if (frame.inert) frame.children.push(inertSuffix(frame.children, frame.inert));
      if (frame.tag !== null) top().children.push(h(frame.tag, frame.props, frame.children));
    } else {
      renderLeaf(token, state, top().children);
    }
  }
  // Unbalanced tokens (should not happen): close what is open, keeping its content.
  while (stack.length > 1) {
    const frame = stack.pop() as Frame;
    if (frame.inert) frame.children.push(inertSuffix(frame.children, frame.inert));
    if (frame.tag !== null) top().children.push(h(frame.tag, frame.props, frame.children));
  }
}

/**
 * What follows an inert link's label: " (URL — note)", or " (note)" when the label already is
 * the URL (an autolink, `<http://localhost:3000>`).
 */
function inertSuffix(label: readonly ComponentChild[], inert: NonNullable<Frame['inert']>): string {
  const labelIsUrl = label.every((child) => typeof child === 'string') && label.join('') === inert.url;
  return inertLinkSuffix(inert.url, inert.note, labelIsUrl);
}

// ─── Texts too long to format ────────────────────────────────────────────────────────────────

/** What shows of a text longer than MARKDOWN_MAX_CHARS (never half a surrogate pair), and how many characters do not; null for a text short enough to format. */
export function longTextCut(text: string): { shown: string; hidden: number } | null {
  if (text.length <= MARKDOWN_MAX_CHARS) return null;
  const code = text.charCodeAt(MARKDOWN_MAX_CHARS - 1);
  const end = code >= 0xd800 && code <= 0xdbff ? MARKDOWN_MAX_CHARS - 1 : MARKDOWN_MAX_CHARS;
  return { shown: text.slice(0, end), hidden: text.length - end };
}

/** The note after a text nested too deep to format. */
export const DEEP_TEXT_NOTE = 'Nested too deep to format: shown as plain text';

/** markdown-it reached MAX_NESTING (it drops everything from there on). */
function reachesNestingCap(tokens: readonly Token[]): boolean {
  return tokens.some((token) => token.level >= MAX_NESTING - 1);
}

/** The note after a cut text. */
export function longTextNote(hidden: number): string {
  return `… ${plural(hidden, 'more character')} not shown: too long to format`;
}

/** A whole text as plain text (line breaks kept, invisible characters made visible), not parsed. */
export function plainTextBlock(text: string): ComponentChild[] {
  return [h('p', { class: 'rn-md-plain', 'data-testid': 'long-text' }, escapeInvisible(text))];
}

// ─── Entry points ────────────────────────────────────────────────────────────────────────────

/** Block Markdown (paragraphs, lists, code, tables, quotes) as vnodes; past MARKDOWN_MAX_CHARS, the cut as plain text and a note; nested to the cap, the whole text plain and a note. */
export function markdownBlock(text: string, citation?: CitationRenderer): ComponentChild[] {
  const out: ComponentChild[] = [];
  if (!text) return out;
  const cut = longTextCut(text);
  if (cut) return [...plainTextBlock(cut.shown), h('p', { class: 'rn-md-long-note', 'data-testid': 'long-text-note' }, longTextNote(cut.hidden))];
  const tokens = md.parse(text, {});
  if (reachesNestingCap(tokens)) return [...plainTextBlock(text), h('p', { class: 'rn-md-long-note', 'data-testid': 'deep-text-note' }, DEEP_TEXT_NOTE)];
  renderTokens(tokens, { linkDepth: 0, citation }, out);
  return out;
}

/** One line of inline Markdown (emphasis, `code`, links) as vnodes, for titles and short fields; past MARKDOWN_MAX_CHARS, the cut as plain text and a note. */
export function markdownInline(text: string, citation?: CitationRenderer): ComponentChild[] {
  const out: ComponentChild[] = [];
  if (!text) return out;
  const cut = longTextCut(text);
  if (cut) return [escapeInvisible(cut.shown), h('span', { class: 'rn-md-long-note', 'data-testid': 'long-text-note' }, ` ${longTextNote(cut.hidden)}`)];
  renderTokens(md.parseInline(text, {}), { linkDepth: 0, citation }, out);
  return out;
}

/** The words of a Markdown text, without its markup (for titles, tooltips, accessible names). */
export function markdownPlain(text: string): string {
  const parts: string[] = [];
  const walk = (tokens: readonly Token[]) => {
    for (const token of tokens) {
      if (token.type === 'inline') walk(token.children ?? []);
      else if (token.type === 'text' || token.type === 'code_inline' || token.type === 'text_special') parts.push(token.content);
      else if (token.type === 'softbreak' || token.type === 'hardbreak') parts.push(' ');
      else if (token.type === 'fence' || token.type === 'code_block') parts.push(token.content);
      else if (token.type === 'paragraph_close' || token.type === 'heading_close' || token.type === 'list_item_close') parts.push(' ');
    }
  };
  const cut = longTextCut(text);
  const read = cut ? cut.shown : text;
  const tokens = md.parse(read, {});
  if (reachesNestingCap(tokens)) parts.push(read);
  else walk(tokens);
  const words = escapeInvisible(parts.join('').replace(/\s+/g, ' ').trim());
  return cut ? `${words} ${longTextNote(cut.hidden)}` : words;
}
