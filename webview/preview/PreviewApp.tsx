/**
 * The review preview: the exact review a forge would receive (verdict and how it was reached, the
 * body as the forge renders it and as raw text, every line comment, every ask folded into the
 * body and why) and ONE Post button for the composition shown. It is the board bundle's second
 * root (`data-view="review-preview"`): same CSP, same Markdown reader (../board/markdown.ts, no
 * HTML), no `innerHTML`, no inline style. It owns only UI state (raw or rendered, a click in
 * flight); everything else arrives whole from the extension after `ready`.
 */
import { useEffect, useMemo, useReducer } from 'preact/hooks';
import type { AskIntent, ComposedReview, ForgeProvider, HostStatus, PreviewSnapshot, PublishReceipt, ReviewPreview, ToPreview, VerdictOverride } from '../../protocol';
import { escapeControls, escapeInvisible } from '../../protocol/text';
import { markdownBlock, markdownInline } from '../board/markdown';
import type { PreviewBridge } from '../bridge';
import { Button, CountBadge } from '../components';
import {
  COMPOSE_REFUSAL_WORDS,
  commentWhere,
  count,
  earlierPosts,
  FOLD_REASON_WORDS,
  forgeName,
  freshnessView,
  postArea,
  receiptWords,
  refusalView,
  shownReview,
  splitMarker,
  targetWords,
  VERDICT_CHOICES,
  verdictView,
} from './model';

export interface PreviewModel {
  snapshot: PreviewSnapshot | null;
  hostStatus: HostStatus | null;
  /** Show the body and comments as raw text (exactly what is sent) instead of rendered. */
  raw: boolean;
  /** The composition the reviewer clicked Post on, until the extension's next snapshot. */
  pendingPost: string | null;
  /** A verdict click not yet answered by a snapshot. */
  pendingVerdict: boolean;
}

export type PreviewAction = { type: 'message'; message: ToPreview } | { type: 'toggle-raw' } | { type: 'post-clicked'; compositionId: string } | { type: 'verdict-clicked' };

export const initialPreviewModel: PreviewModel = { snapshot: null, hostStatus: null, raw: false, pendingPost: null, pendingVerdict: false };

export function reducePreview(model: PreviewModel, action: PreviewAction): PreviewModel {
  switch (action.type) {
    case 'message':
      if (action.message.type === 'rennet/preview/hostStatus') return { ...model, hostStatus: action.message.status };
      // Any snapshot answers a click: it says posting, or shows what came of it.
      return { ...model, snapshot: action.message.snapshot, pendingPost: null, pendingVerdict: false };
    case 'toggle-raw':
      return { ...model, raw: !model.raw };
    case 'post-clicked':
      return { ...model, pendingPost: action.compositionId };
    case 'verdict-clicked':
      return { ...model, pendingVerdict: true };
  }
}

const INTENT_WORDS: Record<AskIntent, string> = { 'request-change': 'change request', comment: 'comment', question: 'question', approval: 'approval' };

export function PreviewApp({ bridge }: { bridge: PreviewBridge }) {
  const [model, dispatch] = useReducer(reducePreview, initialPreviewModel);

  useEffect(() => {
    const unsubscribe = bridge.onMessage((message) => dispatch({ type: 'message', message }));
    bridge.post({ type: 'rennet/preview/ready' });
    return unsubscribe;
  }, [bridge]);

  const sessionId = model.snapshot?.sessionId;
  useEffect(() => {
    if (sessionId) bridge.setState({ sessionId });
  }, [bridge, sessionId]);

  const snapshot = model.snapshot;
  const preview = snapshot?.preview ?? null;
  const provider = preview?.target.provider ?? null;
  const openLink = (url: string) => bridge.post({ type: 'rennet/preview/openLink', url });
  const shown = preview ? shownReview(preview) : null;

  return (
    <main class="rn-panel rn-preview" data-testid="review-preview" data-session-id={sessionId}>
      <HostStatusBanner status={model.hostStatus} />
      {!snapshot ? (
        <p class="rn-muted" data-testid="preview-loading" role="status">
          Loading the review preview…
        </p>
      ) : (
        <>
          <Header preview={preview} onOpen={openLink} onRefresh={() => bridge.post({ type: 'rennet/preview/refresh' })} />
          {preview && <Freshness snapshot={snapshot} onCapture={() => bridge.post({ type: 'rennet/preview/captureNewHead' })} />}
          {!preview ? (
            <p class={snapshot.error ? 'rn-banner rn-banner-error' : 'rn-muted'} data-testid={snapshot.error ? 'preview-error' : 'preview-loading'} role={snapshot.error ? 'alert' : 'status'}>
              {snapshot.error ? `No review can be previewed: ${snapshot.error}` : 'Composing the review…'}
            </p>
          ) : shown ? (
            <>
              {shown.posted && (
                <p class="rn-banner rn-banner-info" data-testid="preview-as-posted" role="note">
                  This is the review as it was posted. Nothing has been staged or chosen since: stage an ask, or choose a verdict below, to compose a follow-up review.
                </p>
              )}
              <Composed
                review={shown.review}
                provider={preview.target.provider}
                raw={model.raw}
                verdictSelected={shown.posted ? null : undefined}
                verdictBusy={model.pendingVerdict || snapshot.posting}
                onToggleRaw={() => dispatch({ type: 'toggle-raw' })}
                onVerdict={(verdict) => {
                  dispatch({ type: 'verdict-clicked' });
                  bridge.post({ type: 'rennet/preview/setVerdict', verdict });
                }}
              />
            </>
          ) : null}
          <PostArea
            snapshot={snapshot}
            pending={model.pendingPost !== null}
            provider={provider}
            onPost={(compositionId) => {
              dispatch({ type: 'post-clicked', compositionId });
              bridge.post({ type: 'rennet/preview/post', compositionId });
            }}
            onOpen={openLink}
            onRepair={(action) => (action === 'capture-new-head' ? bridge.post({ type: 'rennet/preview/captureNewHead' }) : bridge.post({ type: 'rennet/preview/repair', action }))}
          />
          {preview && earlierPosts(preview).length > 0 && <EarlierPosts receipts={earlierPosts(preview)} onOpen={openLink} />}
        </>
      )}
    </main>
  );
}

function HostStatusBanner({ status }: { status: HostStatus | null }) {
  if (!status || status.state === 'running') return null;
  const text =
    status.state === 'starting'
      ? 'Starting the Rennet host…'
      : status.state === 'restarting'
        ? 'The Rennet host stopped unexpectedly and is restarting; the preview is composed again when it is up.'
        : 'The Rennet host is stopped. Run “Rennet: Restart Host” from the Command Palette.';
  return (
    <div class={`rn-banner rn-banner-${status.state === 'failed' ? 'error' : 'warning'}`} data-testid="host-status" data-state={status.state} role={status.state === 'failed' ? 'alert' : 'status'}>
      <strong class="rn-banner-label">Host {status.state}</strong> <span>{text}</span>
      {status.message && <div class="rn-banner-detail">{status.message}</div>}
    </div>
  );
}

function Header({ preview, onOpen, onRefresh }: { preview: ReviewPreview | null; onOpen(url: string): void; onRefresh(): void }) {
  const words = preview ? targetWords(preview) : null;
  return (
    <header class="rn-header" data-testid="preview-header">
      <div class="rn-title-row">
        <h1 class="rn-title" data-testid="preview-target">
          {words ? `Post review · ${escapeControls(words.title)}` : 'Post review'}
        </h1>
        {words && (
          <span class="rn-chip" data-testid="preview-entry" data-entry={preview?.entry}>
            {words.entry}
          </span>
        )}
        <span class="rn-spacer" />
        <Button appearance="secondary" onClick={onRefresh} testId="preview-refresh" title="Compose the review again and read the request's head">
          Refresh
        </Button>
      </div>
      {preview && (
        <p class="rn-note">
          <button type="button" class="rn-link" data-testid="preview-target-link" title={escapeControls(preview.webUrl)} onClick={() => onOpen(preview.webUrl)}>
            Open {preview.label} on {forgeName(preview.target.provider)}
          </button>{' '}
          <span class="rn-muted">
            · head <code>{preview.target.headSha.slice(0, 7)}</code>
          </span>
        </p>
      )}
    </header>
  );
}

function Freshness({ snapshot, onCapture }: { snapshot: PreviewSnapshot; onCapture(): void }) {
  const view = freshnessView(snapshot);
  const warn = view.kind === 'moved' || view.kind === 'unpushed' || view.kind === 'closed' || view.kind === 'unknown';
  return (
    <div class={warn ? 'rn-banner rn-banner-warning' : 'rn-note rn-muted'} data-testid="preview-freshness" data-state={view.kind} role={warn ? 'alert' : 'status'}>
      <span>{view.text}</span>
      {view.kind === 'moved' && (
        <>
          {' '}
          <Button onClick={onCapture} testId="capture-new-head">
            Capture New Head
          </Button>
        </>
      )}
    </div>
  );
}

interface ComposedProps {
  review: ComposedReview;
  provider: ForgeProvider;
  raw: boolean;
  /** The verdict choice to show as selected when it is not the review's own (a posted review's choice was cleared by posting it). */
  verdictSelected?: VerdictOverride | null | undefined;
  verdictBusy: boolean;
  onToggleRaw(): void;
  onVerdict(verdict: VerdictOverride | null): void;
}

function Composed({ review, provider, raw, verdictSelected, verdictBusy, onToggleRaw, onVerdict }: ComposedProps) {
  const { descriptor } = review;
  return (
    <>
      <Verdict review={review} provider={provider} selectedChoice={verdictSelected} busy={verdictBusy} onVerdict={onVerdict} />
      <section class="rn-preview-section" data-testid="preview-body" aria-labelledby="rn-preview-body">
        <div class="rn-title-row">
          <h2 id="rn-preview-body" class="rn-section-title">
            Review body
          </h2>
          <span class="rn-spacer" />
          <button type="button" class="rn-link" data-testid="body-raw-toggle" aria-pressed={raw ? 'true' : 'false'} onClick={onToggleRaw}>
            {raw ? `Show as ${forgeName(provider)} renders it` : 'Show the raw text'}
          </button>
        </div>
        <Body body={descriptor.body} raw={raw} provider={provider} />
      </section>
      <Comments review={review} raw={raw} />
      <Folded review={review} />
    </>
  );
}

function Verdict({
  review,
  provider,
  selectedChoice,
  busy,
  onVerdict,
}: {
  review: ComposedReview;
  provider: ForgeProvider;
  selectedChoice: VerdictOverride | null | undefined;
  busy: boolean;
  onVerdict(verdict: VerdictOverride | null): void;
}) {
  const view = verdictView(review.verdict, provider);
  const chosen = selectedChoice === undefined ? view.override : selectedChoice;
  return (
    <section class="rn-preview-section" data-testid="preview-verdict" aria-labelledby="rn-preview-verdict">
      <h2 id="rn-preview-verdict" class="rn-section-title">
        Verdict
      </h2>
      <p>
        <strong data-testid="verdict-event" data-event={review.verdict.event}>
          {view.event}
        </strong>{' '}
        <span data-testid="verdict-how">{view.how}</span>
      </p>
      {view.downgrade && (
        <p class="rn-banner rn-banner-info" data-testid="verdict-downgrade" role="note">
          {view.downgrade}
        </p>
      )}
      <div class="rn-verdict-choices" role="group" aria-label="Choose the verdict" data-testid="verdict-control">
        {VERDICT_CHOICES.map((choice) => {
          const selected = choice.value === chosen;
          return (
            <button
              key={choice.label}
              type="button"
              class={`rn-chip-button${selected ? ' rn-chip-selected' : ''}`}
              data-testid="verdict-choice"
              data-choice={choice.value ?? 'clear'}
              aria-pressed={selected ? 'true' : 'false'}
              disabled={busy || selected}
              title={choice.value === null ? 'Clear your choice: the verdict follows your asks again' : `Post as ${choice.label}`}
              onClick={() => onVerdict(choice.value)}
            >
              {choice.label}
            </button>
          );
        })}
      </div>
    </section>
  );
}

function Body({ body, raw, provider }: { body: string; raw: boolean; provider: ForgeProvider }) {
  const { shown, markerId } = useMemo(() => splitMarker(body), [body]);
  const rendered = useMemo(() => (raw ? null : markdownBlock(shown)), [shown, raw]);
  return (
    <>
      {raw ? (
        <pre class="rn-preview-raw" data-testid="body-raw">
          {escapeInvisible(body)}
        </pre>
      ) : (
        <div class="rn-md rn-preview-rendered" data-testid="body-rendered">
          {rendered}
        </div>
      )}
      {markerId && (
        <p class="rn-note rn-muted" data-testid="body-marker" data-marker-id={markerId}>
          The last line of the raw text is Rennet’s marker (rennet-review {markerId}), which {forgeName(provider)} does not show: posting again finds this review by it instead of posting it twice.
        </p>
      )}
    </>
  );
}

function Comments({ review, raw }: { review: ComposedReview; raw: boolean }) {
  const comments = review.descriptor.comments;
  return (
    <section class="rn-preview-section" data-testid="preview-comments" aria-labelledby="rn-preview-comments">
      <h2 id="rn-preview-comments" class="rn-section-title">
        Line comments <CountBadge count={comments.length} label={count(comments.length, 'line comment')} testId="comment-count" />
      </h2>
      {comments.length === 0 ? (
        <p class="rn-muted" data-testid="no-comments">
          No line comments: everything this review says is in its body.
        </p>
      ) : (
        <ol class="rn-preview-comments">
          {comments.map((comment, index) => {
            const placement = review.placements[index];
            return (
              <li
                key={`${comment.path}|${comment.side}|${comment.startLine ?? ''}|${comment.line}|${index}`}
                class="rn-preview-comment"
                data-testid="preview-comment"
                data-path={comment.path}
                data-side={comment.side}
                data-line={String(comment.line)}
                data-start-line={comment.startLine !== undefined ? String(comment.startLine) : undefined}
              >
                <div class="rn-preview-comment-where" data-testid="comment-where">
                  {escapeControls(commentWhere(comment))}
                  {placement && <span class="rn-muted"> · {INTENT_WORDS[placement.intent]}</span>}
                </div>
                {raw ? (
                  <pre class="rn-preview-raw" data-testid="comment-raw">
                    {escapeInvisible(comment.body)}
                  </pre>
                ) : (
                  <div class="rn-md" data-testid="comment-body">
                    {markdownBlock(comment.body)}
                  </div>
                )}
              </li>
            );
          })}
        </ol>
      )}
    </section>
  );
}

function Folded({ review }: { review: ComposedReview }) {
  const notes = review.foldNotes;
  if (notes.length === 0) return null;
  return (
    <section class="rn-preview-section" data-testid="preview-folded" aria-labelledby="rn-preview-folded">
      <h2 id="rn-preview-folded" class="rn-section-title">
        Not line comments <CountBadge count={notes.length} label={count(notes.length, 'folded ask')} testId="folded-count" />
      </h2>
      <p class="rn-note rn-muted">What this review says of these is in its body (one note each), except where a reason says otherwise. This list is not posted.</p>
      <ul class="rn-preview-folded">
        {notes.map((note, index) => (
          <li key={`${note.ref}|${index}`} data-testid="folded-ask" data-reason={note.reason} data-in-body={note.inBody ? 'true' : 'false'}>
            {/* The anchor as the body's note names it (Markdown: `path` in code): drawn as the forge draws it. */}
            <span class="rn-preview-comment-where" data-testid="folded-where">
              {markdownInline(note.where)}
            </span>
            <span class="rn-muted"> · {INTENT_WORDS[note.intent]}</span>
            <div data-testid="fold-reason">{FOLD_REASON_WORDS[note.reason]}</div>
          </li>
        ))}
      </ul>
    </section>
  );
}

interface PostAreaProps {
  snapshot: PreviewSnapshot;
  pending: boolean;
  provider: ForgeProvider | null;
  onPost(compositionId: string): void;
  onOpen(url: string): void;
  onRepair(action: 'capture-new-head' | 'sign-in-github' | 'set-gitlab-token' | 'forge-settings'): void;
}

function PostArea({ snapshot, pending, provider, onPost, onOpen, onRepair }: PostAreaProps) {
  const area = postArea(snapshot, pending);
  const refusal = snapshot.refusal ? refusalView(snapshot.refusal, provider) : null;
  return (
    <section class="rn-preview-post" data-testid="post-area" data-state={area.kind} aria-label="Post">
      {refusal && snapshot.refusal && (
        <div class="rn-banner rn-banner-warning" data-testid="post-refused" data-code={snapshot.refusal.code} role="alert">
          <strong class="rn-banner-label">{refusal.title}</strong> <span data-testid="post-refused-message">{refusal.message}</span>
          {refusal.note && <div class="rn-banner-detail">{refusal.note}</div>}
          {refusal.repair && (
            <div class="rn-banner-detail">
              <Button appearance="secondary" onClick={() => refusal.repair && onRepair(refusal.repair.action)} testId="post-repair">
                {refusal.repair.label}
              </Button>
            </div>
          )}
        </div>
      )}
      {area.kind === 'posted' && <Posted receipt={area.receipt} words={area.words} reused={area.reused} onOpen={onOpen} />}
      {area.kind === 'cannot-compose' && (
        <p class="rn-banner rn-banner-error" data-testid="cannot-post" data-reason={area.reason} role="alert">
          <strong class="rn-banner-label">Cannot post</strong> {COMPOSE_REFUSAL_WORDS[area.reason]} <span data-testid="cannot-post-message">{area.message}</span>
        </p>
      )}
      {area.kind === 'post' && (
        <div class="rn-title-row">
          <Button onClick={() => onPost(area.compositionId)} disabled={area.disabled} testId="post-review" ariaLabel={area.disabled ? 'Posting the review' : 'Post exactly this review'}>
            {area.label}
          </Button>
          <span class="rn-muted">Posts exactly what is shown above, once.</span>
        </div>
      )}
      {area.kind === 'unavailable' && (
        <p class="rn-muted" data-testid="post-unavailable">
          {area.message}
        </p>
      )}
    </section>
  );
}

function Posted({ receipt, words, reused, onOpen }: { receipt: PublishReceipt; words: string; reused: string | null; onOpen(url: string): void }) {
  return (
    <div class="rn-banner rn-banner-info" data-testid="posted" data-event={receipt.event} data-comments={String(receipt.comments)} data-reused={receipt.reused ? 'true' : 'false'} role="status">
      <strong class="rn-banner-label" data-testid="posted-words">
        {words}
      </strong>{' '}
      <button type="button" class="rn-link" data-testid="posted-link" title={escapeControls(receipt.url)} onClick={() => onOpen(receipt.url)}>
        Open the review on {forgeName(receipt.provider)}
      </button>
      {reused && (
        <div class="rn-banner-detail" data-testid="posted-reused">
          {reused}
        </div>
      )}
      <div class="rn-banner-detail rn-muted">
        Posted {receipt.postedAt} on head <code>{receipt.headSha.slice(0, 7)}</code>.
      </div>
    </div>
  );
}

function EarlierPosts({ receipts, onOpen }: { receipts: PublishReceipt[]; onOpen(url: string): void }) {
  return (
    <details class="rn-details" data-testid="earlier-posts">
      <summary>{count(receipts.length, 'earlier post')} of this review</summary>
      <ul>
        {receipts.map((r) => (
          <li key={r.markerId} data-testid="earlier-post">
            <button type="button" class="rn-link" title={escapeControls(r.url)} onClick={() => onOpen(r.url)}>
              {receiptWords(r)}
            </button>{' '}
            <span class="rn-muted">
              on head <code>{r.headSha.slice(0, 7)}</code>, {r.postedAt}
              {r.reused ? ` · already on ${forgeName(r.provider)}` : ''}
            </span>
          </li>
        ))}
      </ul>
    </details>
  );
}
