/**
 * A code card: a cited range with its captured lines. The header names the file (a button that
 * opens the range), the range and the caption; the body is the excerpt the generation sent
 * (GenerationSnapshot.excerpts, through ExcerptsContext) as a diff table — old and new line
 * numbers, the +/-/space marker, the text — with the cited rows marked, and a sentence for any
 * state that has no lines or was cut. A range with no excerpt says its lines were not sent and
 * keeps the View button. Line text is rendered as text nodes only.
 */
import { escapeControls, escapeInvisible } from '../../protocol/text';
import type { CitationSide, CodeExcerpt, ElementOf } from '../../protocol';
import { Button } from '../components';
import { memoBy } from '../memo';
import { useBoardActions } from './actions';
import { excerptNote, excerptRows, lineMarker, NOT_SENT_NOTE, useExcerpt } from './excerpts';
import { Markdown } from './MarkdownView';
import { basename, dirname, rangeLabel, rangeText } from './words';

export function CodeCard({ codeRef }: { codeRef: ElementOf<'code_ref'> }) {
  const side: CitationSide = codeRef.side === 'base' ? 'base' : 'head';
  const excerpt = useExcerpt(codeRef.path, side, codeRef.start_line, codeRef.end_line);
  return <CodeCardView codeRef={codeRef} excerpt={excerpt} />;
}

/**
 * The card itself, skipped while its code ref and its excerpt are the same objects: a generation
 * whose excerpts changed anywhere re-renders every card's lookup above, not every card's table.
 */
const CodeCardView = memoBy(CodeCardOf, (a, b) => a.codeRef === b.codeRef && a.excerpt === b.excerpt);

function CodeCardOf({ codeRef, excerpt }: { codeRef: ElementOf<'code_ref'>; excerpt: CodeExcerpt | null }) {
  const actions = useBoardActions();
  const side: CitationSide = codeRef.side === 'base' ? 'base' : 'head';
  const start = codeRef.start_line;
  const end = Math.max(codeRef.start_line, codeRef.end_line);
  const range = rangeLabel(side, start, end);
  const open = () => actions.openCitation(codeRef.path, side, start, end);
  const dir = dirname(codeRef.path);
  const shown = excerpt !== null && excerpt.lines.length > 0;
  const note = excerpt ? excerptNote(excerpt) : NOT_SENT_NOTE;
  return (
    <figure
      class="rn-code-card"
      data-testid="code-card"
      data-id={codeRef.id}
      data-path={codeRef.path}
      data-side={side}
      data-start={String(start)}
      data-end={String(end)}
      data-excerpt={excerpt ? excerpt.state : 'not-sent'}
    >
      <figcaption class="rn-code-caption">
        <button type="button" class="rn-link rn-code-file" data-testid="code-card-file" title={`Open ${escapeControls(codeRef.path)}, ${range}`} onClick={open}>
          {escapeControls(basename(codeRef.path))}
        </button>
        {dir && <span class="rn-code-dir">{dir}</span>}
        <span class="rn-code-range" data-testid="code-card-range">
          {range}
        </span>
        {codeRef.label ? (
          <span class="rn-code-label">
            <Markdown text={codeRef.label} inline citations={false} />
          </span>
        ) : null}
      </figcaption>
      {excerpt && shown && <ExcerptTable excerpt={excerpt} path={codeRef.path} range={range} />}
      {note !== null && (
        <p class="rn-code-note" data-testid="code-excerpt-note" data-state={excerpt ? excerpt.state : 'not-sent'} data-clipped={excerpt?.clipped ? 'true' : 'false'}>
          {note}
        </p>
      )}
      {!shown && (
        <div class="rn-code-body">
          <code class="rn-code-loc">
            {escapeControls(codeRef.path)}:{rangeText(start, end)}
          </code>
          <Button appearance="secondary" onClick={open} testId="code-card-view" ariaLabel={`View ${codeRef.path}, ${range}`}>
            View
          </Button>
        </div>
      )}
    </figure>
  );
}

/** The excerpt as a diff table in a horizontally scrolling box (long lines never widen the card). */
function ExcerptTable({ excerpt, path, range }: { excerpt: CodeExcerpt; path: string; range: string }) {
  const rows = excerptRows(excerpt);
  return (
    <div class="rn-code-scroll" tabIndex={0} role="region" aria-label={`Changed lines of ${path}, ${range}`}>
      <table class="rn-code-table">
        <tbody>
          {rows.map((row, i) => {
            if (row.type === 'gap') {
              return (
                <tr key={i} class="rn-code-gap" data-testid="code-gap">
                  <td class="rn-code-no" colSpan={3} aria-label="lines not shown">
                    ⋯
                  </td>
                  <td class="rn-code-text" />
                </tr>
              );
            }
            const { line, cited } = row;
            const { marker, word, kind } = lineMarker(line.kind);
            const text = line.text.endsWith('\r') ? line.text.slice(0, -1) : line.text;
            return (
              <tr
                key={i}
                class={`rn-code-line rn-code-${kind}${cited ? ' rn-code-cited' : ''}`}
                data-testid="code-line"
                data-kind={kind}
                data-old={line.oldLine === null ? undefined : String(line.oldLine)}
                data-new={line.newLine === null ? undefined : String(line.newLine)}
                data-cited={cited ? 'true' : 'false'}
              >
                <td class="rn-code-no rn-code-old">{line.oldLine ?? ''}</td>
                <td class="rn-code-no rn-code-new">{line.newLine ?? ''}</td>
                <td class="rn-code-marker" title={word}>
                  {marker}
                </td>
                <td class="rn-code-text">
                  {escapeInvisible(text)}
                  {line.noNewlineAtEof ? (
                    <span class="rn-code-eof" title="No newline at end of file">
                      {' '}
                      (no newline at end of file)
                    </span>
                  ) : null}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
