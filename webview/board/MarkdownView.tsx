/**
 * Markdown and citations as components. All Markdown goes through ./markdown.ts (markdown-it,
 * html disabled, token → vnode; never innerHTML); citations become buttons that open the range.
 */
import { escapeControls } from '../../protocol/text';
import { useMemo, useState } from 'preact/hooks';
import { useBoardActions } from './actions';
import { MARKDOWN_MAX_CHARS, markdownBlock, markdownInline, plainTextBlock, type Citation, type CitationRenderer } from './markdown';
import { plural, rangeLabel } from './words';

export interface MarkdownProps {
  text: string;
  /** One line of inline Markdown (titles, statements) instead of blocks. */
  inline?: boolean;
  /** Turn `path:line` citations into buttons (off inside another control). */
  citations?: boolean;
  class?: string;
}

const renderCitation: CitationRenderer = (citation, key) => <CitationButton key={key} citation={citation} />;

export function Markdown({ text, inline = false, citations = true, class: cls }: MarkdownProps) {
  // A block too long to format shows cut (markdown.ts); the reader may ask for all of it, as plain text.
  const [whole, setWhole] = useState(false);
  const long = !inline && text.length > MARKDOWN_MAX_CHARS;
  const nodes = useMemo(() => (long && whole ? plainTextBlock(text) : (inline ? markdownInline : markdownBlock)(text, citations ? renderCitation : undefined)), [text, inline, citations, long, whole]);
  if (inline) return <>{nodes}</>;
  return (
    <div class={cls ? `rn-md ${cls}` : 'rn-md'}>
      {nodes}
      {long && !whole && (
        <p>
          <button type="button" class="rn-link" data-testid="show-long-text" onClick={() => setWhole(true)}>
            Show all {plural(text.length, 'character')} as plain text
          </button>
        </p>
      )}
    </div>
  );
}

/** A prose citation: opens the cited head-side range in the editor. */
export function CitationButton({ citation }: { citation: Citation }) {
  const actions = useBoardActions();
  const label = `${citation.path}, ${rangeLabel('head', citation.start, citation.end)}`;
  return (
    <button
      type="button"
      class="rn-citation"
      data-testid="citation"
      data-path={citation.path}
      data-start={String(citation.start)}
      data-end={String(citation.end)}
      title={`Open ${label}`}
      aria-label={`Open ${label}`}
      onClick={() => actions.openCitation(citation.path, 'head', citation.start, citation.end)}
    >
      {escapeControls(citation.raw)}
    </button>
  );
}
