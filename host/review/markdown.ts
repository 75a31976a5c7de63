import MarkdownIt from 'markdown-it';
import type { Token } from 'markdown-it';
import { inertLinkNote, inertLinkReason, inertLinkSuffix } from '../../protocol/links';

/**
 * Model-written Markdown to HTML for the static review page (pure).
 *
 * markdown-it with `html: false` never passes raw HTML through: `<script>`, `<img onerror=…>` and
 * every other tag a model writes come out as escaped text, so no sanitizer pass is needed after
 * it. On top of its defaults:
 * - links: only http(s), mailto and scheme-less (relative, #fragment) targets become links (the
 *   default already refuses javascript:, vbscript:, file:, data:); they open nothing by themselves
 *   and carry rel="noopener noreferrer";
 * - an http(s) link to this machine or a private network (protocol/links.ts, the one rule; VS Code
 *   opens those without asking) is never a link: its label is followed by its URL and why it was
 *   not opened, as escaped text — `<span class="md-link-inert">label (http://127.0.0.1/x — not
 *   opened: …)</span>`; a label that already is the URL (an autolink) gets only the note;
 * - images are never loaded: `![alt](src)` renders as the text "[image: alt]", so the page stays
 *   self-contained;
 * - headings are demoted to h4–h6 so a model's `# Heading` cannot outrank the board's own;
 * - no linkify, no typographer: bare URLs stay text, quotes stay as written.
 */

const SAFE_LINK = /^(?:https?:|mailto:)/i;
const HAS_SCHEME = /^[a-z][a-z0-9+.-]*:/i;
const HEADING_SHIFT = 3;

function build(): MarkdownIt {
  const md = new MarkdownIt({ html: false, linkify: false, typographer: false, breaks: false });
  md.validateLink = (url: string) => {
    const trimmed = url.trim();
    return SAFE_LINK.test(trimmed) || !HAS_SCHEME.test(trimmed.replace(/[\u0000-\u001f\s]/g, ''));
  };
  md.core.ruler.push('rennet_demote_headings', (state) => {
    for (const token of state.tokens) {
      if (token.type !== 'heading_open' && token.type !== 'heading_close') continue;
      const level = Number(token.tag.slice(1));
      token.tag = `h${Math.min(6, level + HEADING_SHIFT)}`;
    }
    return true;
  });
  md.renderer.rules.image = (tokens, idx) => {
    const token = tokens[idx];
    const alt = token?.content ?? '';
    return `<span class="md-image">[image${alt ? `: ${md.utils.escapeHtml(alt)}` : ''}]</span>`;
  };
  const linkOpen = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
  const linkClose = md.renderer.rules.link_close ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
  md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
    const token = tokens[idx];
    const href = token?.attrGet('href') ?? '';
    const reason = inertLinkReason(href);
    const close = reason !== null ? matchingClose(tokens, idx) : -1;
    if (reason !== null && close >= 0) {
      const url = href.trim();
      const label = tokens.slice(idx + 1, close);
      const labelIsUrl = label.every((t) => t.type === 'text') && label.map((t) => t.content).join('') === url;
      const note = inertLinkNote(reason);
      (tokens[close] as Token).meta = { ...((tokens[close]?.meta as object | null | undefined) ?? {}), rennetInert: inertLinkSuffix(url, note, labelIsUrl) };
      return '<span class="md-link-inert">';
    }
    token?.attrSet('rel', 'noopener noreferrer');
    return linkOpen(tokens, idx, options, env, self);
  };
  md.renderer.rules.link_close = (tokens, idx, options, env, self) => {
    const suffix = (tokens[idx]?.meta as { rennetInert?: unknown } | null)?.rennetInert;
    if (typeof suffix === 'string') return `${md.utils.escapeHtml(suffix)}</span>`;
    return linkClose(tokens, idx, options, env, self);
  };
  return md;
}

/** The index of the link_close that ends the link opened at `open`, or -1. */
function matchingClose(tokens: readonly Token[], open: number): number {
  let depth = 0;
  for (let i = open; i < tokens.length; i++) {
    const type = tokens[i]?.type;
    if (type === 'link_open') depth++;
    else if (type === 'link_close' && --depth === 0) return i;
  }
  return -1;
}

const md = build();

/** Block Markdown (paragraphs, lists, code, tables, quotes). */
export function markdownBlock(text: string): string {
  return md.render(text);
}

/** One line of inline Markdown (emphasis, `code`, links), for titles and plain-text fields. */
export function markdownInline(text: string): string {
  return md.renderInline(text);
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for HTML element content and double- or single-quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}
