/**
 * A re-review's Prior items, shown with the Flagged lens (GenerationSnapshot.priorReview): the
 * line the next post opens with, what was reviewed and why, and each item of the reviewer's
 * earlier review — resolved, with the changed lines of the fix delta that show it (each opens the
 * line on this generation's capture), or open, with why. Item text is the earlier review's
 * (forge text: rendered through the sanitizer, citations off); the reasons are the closure seat's.
 */
import { escapeControls } from '../../protocol/text';
import type { PriorReview } from '../../protocol';
import { useBoardActions } from './actions';
import { Markdown } from './MarkdownView';

export function priorItemsSummary(prior: PriorReview): string {
  const resolved = prior.items.filter((i) => i.closure === 'resolved').length;
  if (prior.items.length === 0) return 'Your earlier review had no items to follow up.';
  return `${resolved} of ${prior.items.length} earlier item${prior.items.length === 1 ? '' : 's'} resolved.`;
}

export function PriorItems({ prior }: { prior: PriorReview }) {
  const actions = useBoardActions();
  return (
    <section class="rn-prior" data-testid="prior-items" aria-labelledby="rn-prior-title">
      <h3 id="rn-prior-title" class="rn-prior-title">
        Prior items
      </h3>
      <p class="rn-prior-line" data-testid="prior-line">
        {escapeControls(prior.line)}
      </p>
      <p class="rn-muted" data-testid="prior-statement">
        {escapeControls(prior.statement)} {priorItemsSummary(prior)}
      </p>
      {prior.closureFailure && (
        <p class="rn-banner rn-banner-warning" role="note" data-testid="prior-failure">
          <strong class="rn-banner-label">Not judged</strong> {escapeControls(prior.closureFailure)}
        </p>
      )}
      {prior.items.length > 0 && (
        <ol class="rn-prior-items">
          {prior.items.map((item) => (
            <li key={item.id} class={`rn-prior-item rn-prior-${item.closure}`} data-testid="prior-item" data-closure={item.closure} data-item={item.id}>
              <div class="rn-prior-head">
                <span class={`rn-badge rn-prior-closure-${item.closure}`} data-testid="prior-closure">
                  {item.closure}
                </span>{' '}
                <span class="rn-badge" data-testid="prior-severity">
                  {item.severity}
                </span>{' '}
                <span class="rn-muted">
                  {item.id}
                  {item.path ? ` · ${escapeControls(item.path)}${item.line ? `:${item.line}` : ''}` : ''}
                </span>
              </div>
              <blockquote class="rn-prior-text">
                <Markdown text={item.text} citations={false} />
              </blockquote>
              <p class="rn-prior-reason" data-testid="prior-reason">
                {escapeControls(item.reason)}
              </p>
              {item.evidence.length > 0 && (
                <p class="rn-prior-evidence">
                  {item.evidence.map((e) => (
                    <button
                      type="button"
                      class="rn-link"
                      key={`${e.side}|${e.path}|${e.line}`}
                      data-testid="prior-evidence"
                      title={`Open ${e.path} line ${e.line} (${e.side === 'base' ? 'before' : 'after'} the fix)`}
                      onClick={() => actions.openCitation(e.path, e.side, e.line, e.line)}
                    >
                      {escapeControls(e.path)}:{e.line}
                    </button>
                  ))}
                </p>
              )}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
