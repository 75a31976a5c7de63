import MarkdownIt from 'markdown-it';

/**
 * Model-written Markdown to HTML for the static review page (pure).
 *
 * markdown-it with `html: false` never passes raw HTML through: `<script>`, `<img onerror=…>` and
 * every other tag a model writes come out as escaped text, so no sanitizer pass is needed after
 * it. On top of its defaults:
 * - links: only http(s), mailto and scheme-less (relative, #fragment) targets become links (the
 *   default already refuses javascript:, vbscript:, file:, data:); they open nothing by themselves
 *   and carry rel="noopener noreferrer";
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
  md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
    tokens[idx]?.attrSet('rel', 'noopener noreferrer');
    return linkOpen(tokens, idx, options, env, self);
  };
  return md;
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
