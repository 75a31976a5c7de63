/**
 * The board's ask affordances: a finding's actions and marks, the selection toolbar on board
 * prose with its inline composer, quote threads with their messages, and Explain progress. They
 * send acts through the ask surface and draw only what the host's projection says; nothing here
 * keeps ask state of its own beyond what is being typed.
 */
import { createContext, type ComponentChildren, type RefObject } from 'preact';
import { useContext, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { AskKeyPart, findingKey, flaggedBoardId, type AskCommand, type BoardElement, type ElementOf, type GenerationSnapshot, type Lens, type QuoteAnchor } from '../../protocol';
import { memoBy } from '../memo';
import { AskSurfaceContext, BoardAsksContext, FROZEN_REASON, useBoardAsks, type BoardAsks } from './askContext';
import {
  AUTHOR_LABELS,
  askText,
  DETACHED_REASON,
  detachedByLens,
  findingAnchorFor,
  findingMarksIndex,
  findingRefFor,
  findingRequestText,
  hasStagedQuoteAsk,
  latestExplainByPlace,
  NO_MARKS,
  placeKey,
  quoteAnchorFor,
  threadsByPlace,
  type ExplainRequest,
  type FindingMarks,
  type ThreadEntry,
} from './asks';
import { Markdown } from './MarkdownView';
import { ASK_UI_ATTRIBUTE, selectionInElement, type ElementSelection } from './selection';
import { shortGenerationId } from './words';

const askUi = { [ASK_UI_ATTRIBUTE]: 'true' };
const NO_PROJECTION_REASON = 'The review’s asks have not been read yet.';
const NO_TARGET_REASON = 'The review’s target is not known yet.';

// ─── The generation's ask view ──────────────────────────────────────────────────────────────

/** Narrows the App's ask surface to the shown generation (nothing when there is no surface). */
export function BoardAsksProvider({ snapshot, children }: { snapshot: GenerationSnapshot; children: ComponentChildren }) {
  const surface = useContext(AskSurfaceContext);
  const { sessionId, generationId, patchsetId, status, frozen } = snapshot;
  const projection = surface?.projection ?? null;
  const explains = surface?.explains;
  const marks = useMemo(() => (projection ? findingMarksIndex(projection) : new Map<string, FindingMarks>()), [projection]);
  const threads = useMemo(() => threadsByPlace(projection, generationId), [projection, generationId]);
  const detached = useMemo(() => detachedByLens(projection, { generationId, status, frozen }), [projection, generationId, status, frozen]);
  const explainsByPlace = useMemo(() => latestExplainByPlace(explains ?? {}, generationId), [explains, generationId]);
  const value = useMemo<BoardAsks | null>(
    () => (surface ? { ...surface, scope: { sessionId, generationId, patchsetId }, frozen: status === 'frozen', marks, threads, detached, explainsByPlace } : null),
    [surface, sessionId, generationId, patchsetId, status, marks, threads, detached, explainsByPlace],
  );
  return <BoardAsksContext.Provider value={value}>{children}</BoardAsksContext.Provider>;
}

/** A plain button that says why it is disabled (the title is the reason). */
function AskButton({ testId, blocked, title, onClick, children }: { testId: string; blocked: string | null; title: string; onClick(): void; children: ComponentChildren }) {
  return (
    <button
      type="button"
      class="rn-ask-button"
      data-testid={testId}
      disabled={blocked !== null}
      title={blocked ?? title}
      // Keep the text selection while the pointer presses the button.
      onMouseDown={(event: MouseEvent) => event.preventDefault()}
      onClick={() => {
        if (blocked === null) onClick();
      }}
    >
      {children}
    </button>
  );
}

/** Why another Explain under this element would wait: one is being answered there. */
function explainBusy(asks: BoardAsks, lens: Lens, elementId: string): string | null {
  return asks.explainsByPlace.get(placeKey(asks.scope.generationId, lens, elementId))?.state === 'working' ? 'The agent is still answering here.' : null;
}

// ─── Findings ───────────────────────────────────────────────────────────────────────────────

/** What the ask log says about a finding of the shown Flagged board (none without a surface). */
export function useFindingMarks(lens: Lens, findingId: string): FindingMarks {
  const asks = useBoardAsks();
  if (!asks || lens !== 'flagged') return NO_MARKS;
  const { sessionId, generationId } = asks.scope;
  return asks.marks.get(findingKey({ generationId, boardId: flaggedBoardId(sessionId, generationId), findingId })) ?? NO_MARKS;
}

/**
 * A finding's marks (change requested, dismissed) and its actions: Request change, Dismiss or
 * Restore, Discuss. Only on the Flagged board, only with an ask surface.
 */
export function FindingActions({ finding, lens, byId }: { finding: ElementOf<'finding'>; lens: Lens; byId: ReadonlyMap<string, BoardElement> }) {
  const asks = useBoardAsks();
  const marks = useFindingMarks(lens, finding.id);
  if (!asks || lens !== 'flagged') return null;
  const ref = findingRefFor(asks.scope, finding.id);
  const blocked = asks.frozen ? FROZEN_REASON : asks.projection === null ? NO_PROJECTION_REASON : ref.ok ? null : ref.reason;
  const requestBlocked =
    blocked ??
    (asks.lane === null
      ? NO_TARGET_REASON
      : marks.requested
        ? 'A change request for this finding is already staged.'
        : marks.dismissed
          ? 'You dismissed this finding; restore it to request a change.'
          : null);
  const discussAnchor = quoteAnchorFor({ generationId: asks.scope.generationId, lens: 'flagged', elementId: finding.id }, finding.title ?? '');
  const discussBlocked = blocked ?? (discussAnchor.ok ? explainBusy(asks, 'flagged', finding.id) : discussAnchor.reason);

  const request = () => {
    const anchor = findingAnchorFor(asks.scope, finding, byId);
    if (!anchor.ok || asks.lane === null) return;
    asks.command({ type: 'stage', anchor: anchor.value, text: findingRequestText(finding), intent: 'request-change', lane: asks.lane });
  };
  const dispose = (type: 'dismissFinding' | 'restoreFinding') => {
    if (ref.ok) asks.command({ type, ...ref.value });
  };
  // The host opens the quote thread on the finding and asks the agent in it (rennet/asks/explain).
  const discuss = () => {
    if (discussAnchor.ok) asks.explain(discussAnchor.value);
  };

  return (
    <div class="rn-finding-actions" role="group" aria-label="Act on this finding" data-testid="finding-actions" {...askUi}>
      {marks.requested && (
        <span class="rn-ask-chip rn-ask-chip-requested" data-testid="finding-state" data-state="requested" title="A change request for this finding is staged.">
          Change requested
        </span>
      )}
      {marks.dismissed && (
        <span class="rn-ask-chip rn-ask-chip-dismissed" data-testid="finding-state" data-state="dismissed" title="You dismissed this finding; it no longer counts as open.">
          Dismissed
        </span>
      )}
      <AskButton testId="finding-request" blocked={requestBlocked} title="Stage a change request for this finding" onClick={request}>
        Request change
      </AskButton>
      {marks.dismissed ? (
        <AskButton testId="finding-restore" blocked={blocked} title="Restore this finding: it counts as open again" onClick={() => dispose('restoreFinding')}>
          Restore
        </AskButton>
      ) : (
        <AskButton testId="finding-dismiss" blocked={blocked} title="Dismiss this finding: it stops counting as open" onClick={() => dispose('dismissFinding')}>
          Dismiss
        </AskButton>
      )}
      <AskButton testId="finding-discuss" blocked={discussBlocked} title="Open a thread on this finding and ask the agent about it" onClick={discuss}>
        Discuss
      </AskButton>
    </div>
  );
}

// ─── Selection ──────────────────────────────────────────────────────────────────────────────

interface ComposerState {
  elementId: string;
  anchor: QuoteAnchor;
  intent: 'comment' | 'request-change';
}

interface BoardSelection {
  lens: Lens;
  /** The selection the toolbar acts on; null: no toolbar. */
  selection: ElementSelection | null;
  composer: ComposerState | null;
  openComposer(state: ComposerState): void;
  /** Close the toolbar and the composer; focus goes back to the element the selection was in. */
  close(): void;
}

const SelectionCtx = createContext<BoardSelection | null>(null);

/** Element roots carry data-id; find one without building a selector from an id. */
function elementRoot(container: Element, elementId: string): HTMLElement | null {
  for (const el of container.querySelectorAll('[data-testid="element"]')) if (el.getAttribute('data-id') === elementId) return el as HTMLElement;
  return null;
}

/**
 * Watches the document's selection inside one board: a selection within an element's text shows
 * the toolbar under that element. Escape closes; Tab from the selection moves into the toolbar.
 */
export function SelectionScope({ lens, children }: { lens: Lens; children: ComponentChildren }) {
  const asks = useBoardAsks();
  const container = useRef<HTMLDivElement>(null);
  const [selection, setSelection] = useState<ElementSelection | null>(null);
  const [composer, setComposer] = useState<ComposerState | null>(null);
  const active = asks !== null;
  const state = useRef({ selection, composer });
  state.current = { selection, composer };

  // The toolbar and composer carry the quote from here on; the highlight would only go stale.
  const clearDocumentSelection = () => container.current?.ownerDocument.getSelection()?.removeAllRanges();
  const close = () => {
    const last = state.current.composer?.elementId ?? state.current.selection?.elementId;
    clearDocumentSelection();
    setSelection(null);
    setComposer(null);
    const root = container.current && last ? elementRoot(container.current, last) : null;
    root?.focus();
  };

  useEffect(() => {
    const scope = container.current;
    const doc = scope?.ownerDocument;
    if (!active || !scope || !doc) return;
    const update = () => {
      const next = selectionInElement(doc.getSelection(), scope);
      if (next) {
        setSelection((prev) => (prev && prev.elementId === next.elementId && prev.text === next.text ? prev : next));
        return;
      }
      // Focus moved into the toolbar (keyboard): the selection it acts on stays.
      if ((doc.activeElement as Element | null)?.closest?.('[data-testid="selection-toolbar"]')) return;
      setSelection(null);
    };
    const onKey = (event: KeyboardEvent) => {
      const { selection: shown, composer: open } = state.current;
      if (event.key === 'Escape' && (shown || open)) {
        event.preventDefault();
        close();
        return;
      }
      if (event.key === 'Tab' && !event.shiftKey && shown) {
        const toolbar = scope.querySelector('[data-testid="selection-toolbar"]');
        if (!toolbar || toolbar.contains(doc.activeElement)) return;
        const first = toolbar.querySelector('button:not([disabled])') as HTMLElement | null;
        if (!first) return;
        event.preventDefault();
        first.focus();
      }
    };
    doc.addEventListener('selectionchange', update);
    doc.addEventListener('keydown', onKey);
    return () => {
      doc.removeEventListener('selectionchange', update);
      doc.removeEventListener('keydown', onKey);
    };
  }, [active]);

  const value = useMemo<BoardSelection>(
    () => ({
      lens,
      selection,
      composer,
      openComposer: (next) => {
        clearDocumentSelection();
        setSelection(null);
        setComposer(next);
      },
      close,
    }),
    // close reads refs and state setters only.
    [lens, selection, composer],
  );
  return (
    <SelectionCtx.Provider value={value}>
      <div class="rn-selection-scope" ref={container}>
        {children}
      </div>
    </SelectionCtx.Provider>
  );
}

export interface SelectionToolbarProps {
  /** Why nothing can be done with this selection; null: the actions are live. */
  blocked: string | null;
  /** Why Explain in particular waits (an answer is under way there); null or absent: it does not. */
  explainBlocked?: string | null;
  onComment(): void;
  onRequest(): void;
  onExplain(): void;
}

/** The toolbar a selection of board prose shows: Comment, Request changes, Explain. */
export function SelectionToolbar({ blocked, explainBlocked = null, onComment, onRequest, onExplain }: SelectionToolbarProps) {
  const buttons = useRef<HTMLDivElement>(null);
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key !== 'ArrowRight' && event.key !== 'ArrowLeft') return;
    const all = [...(buttons.current?.querySelectorAll('button:not([disabled])') ?? [])] as HTMLElement[];
    const at = all.indexOf(event.target as HTMLElement);
    if (at < 0 || all.length === 0) return;
    event.preventDefault();
    all[(at + (event.key === 'ArrowRight' ? 1 : all.length - 1)) % all.length]?.focus();
  };
  return (
    <div class="rn-selection-toolbar" role="toolbar" aria-label="Act on the selected text" data-testid="selection-toolbar" ref={buttons} onKeyDown={onKeyDown} {...askUi}>
      <AskButton testId="selection-comment" blocked={blocked} title="Comment on the selected text" onClick={onComment}>
        Comment
      </AskButton>
      <AskButton testId="selection-request" blocked={blocked} title="Ask for a change about the selected text" onClick={onRequest}>
        Request changes
      </AskButton>
      <AskButton testId="selection-explain" blocked={blocked ?? explainBlocked} title="Ask the agent to explain the selected text" onClick={onExplain}>
        Explain
      </AskButton>
      {blocked !== null && <span class="rn-muted rn-toolbar-reason">{blocked}</span>}
    </div>
  );
}

/** How a quote is shown in a label: the first line, shortened (the whole quote is in the anchor). */
function quoteLabel(quote: string): string {
  const line = quote.split('\n', 1)[0] ?? '';
  return line.length > 120 || line.length < quote.length ? `${line.slice(0, 120)}…` : line;
}

/** Stage a comment or change request on a quoted span: the text, then Stage. */
function AskComposer({ composer, asks, onDone }: { composer: ComposerState; asks: BoardAsks; onDone(): void }) {
  const [text, setText] = useState('');
  const { pending, send } = usePendingText(asks);
  const field = useRef<HTMLTextAreaElement>(null);
  useEffect(() => field.current?.focus(), []);
  useEffect(() => {
    if (pending !== null && hasStagedQuoteAsk(asks.projection, composer.anchor, pending, composer.intent)) onDone();
  }, [asks.projection, pending]);

  const checked = askText(text);
  const lane = asks.lane;
  const blocked = asks.frozen ? FROZEN_REASON : lane === null ? NO_TARGET_REASON : pending !== null ? 'Staging…' : checked.ok ? null : checked.reason;
  const stage = () => {
    if (blocked !== null || lane === null || !checked.ok) return;
    send(checked.value, { type: 'stage', anchor: composer.anchor, text: checked.value, intent: composer.intent, lane });
  };
  const verb = composer.intent === 'comment' ? 'Comment on' : 'Request a change about';
  return (
    <div class="rn-composer" data-testid="ask-composer" data-intent={composer.intent} {...askUi}>
      <p class="rn-composer-label">
        {verb} <q class="rn-composer-quote">{quoteLabel(composer.anchor.quote)}</q>
      </p>
      <ActText
        field={field}
        testIds={{ text: 'ask-composer-text', submit: 'ask-composer-stage', cancel: 'ask-composer-cancel' }}
        label={composer.intent === 'comment' ? 'Your comment' : 'The change you ask for'}
        rows={3}
        text={text}
        onText={setText}
        pending={pending !== null}
        blocked={blocked}
        submit={{ label: 'Stage', pendingLabel: 'Staging…', title: 'Stage this ask (Ctrl+Enter)', run: stage }}
        onCancel={onDone}
      />
    </div>
  );
}

/**
 * The text of an act sent to the host, until the caller sees it land (and clears it) or the host
 * refuses an act meanwhile (the refusal count moves), which makes it editable again.
 */
function usePendingText(asks: BoardAsks): { pending: string | null; clear(): void; send(text: string, command: AskCommand): void } {
  const [pending, setPending] = useState<string | null>(null);
  const refusalAtSend = useRef(asks.refusalSeq);
  useEffect(() => {
    if (pending !== null && asks.refusalSeq !== refusalAtSend.current) setPending(null);
  }, [asks.refusalSeq]);
  return {
    pending,
    clear: () => setPending(null),
    send(text, command) {
      refusalAtSend.current = asks.refusalSeq;
      setPending(text);
      asks.command(command);
    },
  };
}

/**
 * The box an act's text is written in, with its primary button and Cancel: Ctrl/Cmd+Enter is the
 * primary button, the box is read-only while the text is being sent, and the primary button's
 * title says why it cannot run when it cannot.
 */
function ActText(props: {
  field: RefObject<HTMLTextAreaElement>;
  testIds: { text: string; submit: string; cancel: string };
  label: string;
  rows: number;
  text: string;
  onText(text: string): void;
  pending: boolean;
  blocked: string | null;
  submit: { label: string; pendingLabel: string; title: string; run(): void };
  onCancel(): void;
}) {
  const { submit } = props;
  return (
    <>
      <textarea
        ref={props.field}
        class="rn-textarea"
        data-testid={props.testIds.text}
        aria-label={props.label}
        rows={props.rows}
        value={props.text}
        disabled={props.pending}
        onInput={(event) => props.onText((event.currentTarget as HTMLTextAreaElement).value)}
        onKeyDown={(event: KeyboardEvent) => {
          if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
            event.preventDefault();
            submit.run();
          }
        }}
      />
      <div class="rn-composer-actions">
        <button type="button" class="rn-ask-button rn-ask-primary" data-testid={props.testIds.submit} disabled={props.blocked !== null} title={props.blocked ?? submit.title} onClick={submit.run}>
          {props.pending ? submit.pendingLabel : submit.label}
        </button>
        <button type="button" class="rn-ask-button" data-testid={props.testIds.cancel} onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </>
  );
}

// ─── Under an element: toolbar, composer, threads, Explain ──────────────────────────────────

/**
 * Everything the ask log and the selection put under one element: the selection toolbar and the
 * composer (when the selection is in it), its quote threads, the latest Explain asked there.
 * Memoized on its two strings: a write elsewhere re-renders the list it sits in, and what it
 * reads (the ask view, the selection) reaches it through context anyway.
 */
export const ElementAsks = memoBy(AsksUnderElement, (a, b) => a.lens === b.lens && a.elementId === b.elementId);

function AsksUnderElement({ lens, elementId }: { lens: Lens; elementId: string }) {
  const asks = useBoardAsks();
  const sel = useContext(SelectionCtx);
  if (!asks) return null;
  const key = placeKey(asks.scope.generationId, lens, elementId);
  const threads = asks.threads.get(key) ?? [];
  const explain = asks.explainsByPlace.get(key);
  const selection = sel?.selection?.elementId === elementId ? sel.selection : null;
  const composer = sel?.composer?.elementId === elementId ? sel.composer : null;
  if (!selection && !composer && threads.length === 0 && !explain) return null;

  let toolbar = null;
  if (selection && sel) {
    const anchor = quoteAnchorFor({ generationId: asks.scope.generationId, lens, elementId }, selection.text);
    const blocked = asks.frozen ? FROZEN_REASON : anchor.ok ? null : anchor.reason;
    const open = (intent: ComposerState['intent']) => {
      if (anchor.ok) sel.openComposer({ elementId, anchor: anchor.value, intent });
    };
    toolbar = (
      <SelectionToolbar
        blocked={blocked}
        explainBlocked={explainBusy(asks, lens, elementId)}
        onComment={() => open('comment')}
        onRequest={() => open('request-change')}
        onExplain={() => {
          if (!anchor.ok) return;
          asks.explain(anchor.value);
          sel.close();
        }}
      />
    );
  }
  return (
    <div class="rn-ask-area" data-testid="ask-area" data-for={elementId} {...askUi}>
      {toolbar}
      {composer && sel && <AskComposer key={`${composer.intent}:${composer.anchor.quote}`} composer={composer} asks={asks} onDone={sel.close} />}
      {threads.map((entry) => (
        <QuoteThreadView key={entry.threadId} entry={entry} asks={asks} />
      ))}
      {explain && <ExplainStatusView request={explain} />}
    </div>
  );
}

/** The asks under each element of a run rendered as one list (tasks, changed regions). */
export function ElementAsksRun({ lens, ids }: { lens: Lens; ids: readonly string[] }) {
  return (
    <>
      {ids.map((id, i) => (
        <ElementAsks key={`${i}:${id}`} lens={lens} elementId={id} />
      ))}
    </>
  );
}

/**
 * Threads of this board whose element is not on it (a tampered store, a board re-read without
 * it): listed at the end rather than lost.
 */
export function UnplacedThreads({ lens, byId }: { lens: Lens; byId: ReadonlyMap<string, BoardElement> }) {
  const asks = useBoardAsks();
  if (!asks) return null;
  const prefix = `${asks.scope.generationId}|${lens}|`;
  const entries: ThreadEntry[] = [];
  for (const [key, list] of asks.threads) {
    if (key.startsWith(prefix) && !byId.has(key.slice(prefix.length))) entries.push(...list);
  }
  if (entries.length === 0) return null;
  return (
    <section class="rn-unplaced-threads" data-testid="unplaced-threads" aria-label="Threads on elements not on this board" {...askUi}>
      <p class="rn-field-label">Threads on elements not on this board</p>
      {entries.map((entry) => (
        <QuoteThreadView key={entry.threadId} entry={entry} asks={asks} />
      ))}
    </section>
  );
}

/**
 * Threads of this lens a round detached: their quote no longer occurs exactly once on the new
 * board, so none is drawn on a passage. Listed here with their quote and messages; they still
 * take replies and close.
 */
export function DetachedThreads({ lens }: { lens: Lens }) {
  const asks = useBoardAsks();
  const entries = asks?.detached.get(lens) ?? [];
  if (!asks || entries.length === 0) return null;
  return (
    <section class="rn-detached-threads" data-testid="detached-threads" data-lens={lens} aria-label="Detached threads" {...askUi}>
      <p class="rn-field-label">Detached</p>
      <p class="rn-muted rn-detached-why" data-testid="detached-why">
        {DETACHED_REASON}
      </p>
      {entries.map((entry) => (
        <QuoteThreadView key={entry.threadId} entry={entry} asks={asks} />
      ))}
    </section>
  );
}

// ─── Threads ────────────────────────────────────────────────────────────────────────────────

function QuoteThreadView({ entry, asks }: { entry: ThreadEntry; asks: BoardAsks }) {
  const { threadId, thread } = entry;
  const [replying, setReplying] = useState(false);
  const [text, setText] = useState('');
  const { pending, clear, send: sendAct } = usePendingText(asks);
  const field = useRef<HTMLTextAreaElement>(null);
  const messages = thread.messages;
  const last = messages[messages.length - 1];
  useEffect(() => {
    // The reply landed: it is the thread's last message now.
    if (pending !== null && last?.author === 'reviewer' && last.text === pending) {
      clear();
      setText('');
      setReplying(false);
    }
  }, [last, pending]);
  useEffect(() => {
    if (replying) field.current?.focus();
  }, [replying]);

  const blocked = asks.frozen ? FROZEN_REASON : asks.projection === null ? NO_PROJECTION_REASON : AskKeyPart.safeParse(threadId).success ? null : 'This thread’s id cannot be named in the ask log.';
  const checked = askText(text);
  const sendBlocked = blocked ?? (pending !== null ? 'Sending…' : checked.ok ? null : checked.reason);
  const send = () => {
    if (sendBlocked !== null || !checked.ok) return;
    sendAct(checked.value, { type: 'quoteReply', threadId, author: 'reviewer', text: checked.value });
  };
  const detached = thread.detached;
  const label = `${thread.open ? 'Thread' : 'Closed thread'} on a quoted passage${detached ? ', detached' : ''}`;
  return (
    <section
      class={`rn-thread${thread.open ? '' : ' rn-thread-closed'}${detached ? ' rn-thread-detached' : ''}`}
      data-testid="quote-thread"
      data-thread-id={threadId}
      data-state={thread.open ? 'open' : 'closed'}
      data-detached={detached ? 'true' : 'false'}
      aria-label={label}
    >
      <blockquote class="rn-thread-quote" data-testid="quote-thread-quote">
        {thread.anchor.quote}
      </blockquote>
      {detached && (
        <p class="rn-muted rn-thread-origin" data-testid="quote-thread-origin">
          Quoted on generation <code title={thread.anchor.generationId}>{shortGenerationId(thread.anchor.generationId)}</code>.
        </p>
      )}
      {messages.length === 0 ? (
        <p class="rn-muted rn-thread-empty">No messages yet.</p>
      ) : (
        <ol class="rn-thread-messages">
          {messages.map((message) => (
            <li key={message.id} class={`rn-thread-message rn-author-${message.author === 'agent' ? 'agent' : 'reviewer'}`} data-testid="quote-message" data-author={message.author}>
              <span class="rn-thread-author">{AUTHOR_LABELS[message.author]}</span>{' '}
              {message.author === 'agent' ? <Markdown text={message.text} class="rn-thread-text" /> : <p class="rn-thread-text rn-thread-plain">{message.text}</p>}
            </li>
          ))}
        </ol>
      )}
      {thread.open && replying && (
        <div class="rn-composer rn-thread-reply">
          <ActText
            field={field}
            testIds={{ text: 'quote-reply-text', submit: 'quote-reply-send', cancel: 'quote-reply-cancel' }}
            label="Your reply"
            rows={2}
            text={text}
            onText={setText}
            pending={pending !== null}
            blocked={sendBlocked}
            submit={{ label: 'Send', pendingLabel: 'Sending…', title: 'Send this reply (Ctrl+Enter)', run: send }}
            onCancel={() => setReplying(false)}
          />
        </div>
      )}
      <div class="rn-thread-actions">
        {detached && (
          <span class="rn-ask-chip rn-ask-chip-detached" data-testid="quote-thread-detached" title={DETACHED_REASON}>
            Detached
          </span>
        )}
        {!thread.open && (
          <span class="rn-ask-chip" data-testid="quote-thread-closed">
            Closed
          </span>
        )}
        {thread.open && !replying && (
          <AskButton testId="quote-reply" blocked={blocked} title="Reply in this thread" onClick={() => setReplying(true)}>
            Reply
          </AskButton>
        )}
        {thread.open ? (
          <AskButton testId="quote-close" blocked={blocked} title="Close this thread" onClick={() => asks.command({ type: 'quoteClose', threadId })}>
            Close
          </AskButton>
        ) : (
          <AskButton testId="quote-reopen" blocked={blocked} title="Reopen this thread" onClick={() => asks.command({ type: 'quoteOpen', threadId })}>
            Reopen
          </AskButton>
        )}
      </div>
    </section>
  );
}

function ExplainStatusView({ request }: { request: ExplainRequest & { requestId: string } }) {
  switch (request.state) {
    case 'working':
      return (
        <p class="rn-explain-status rn-explain-working" data-testid="explain-status" data-state="working" role="status">
          <span class="rn-state-icon rn-spin" aria-hidden="true">
            ◐
          </span>{' '}
          Asking the agent to explain this passage…
        </p>
      );
    case 'answered':
      return (
        <p class="rn-explain-status rn-muted" data-testid="explain-status" data-state="answered" role="status">
          The agent answered in the thread.
        </p>
      );
    case 'failed':
      return (
        <p class="rn-explain-status rn-explain-failed" data-testid="explain-status" data-state="failed" role="alert">
          <strong>No explanation.</strong> <span data-testid="explain-failure">{request.message ?? 'The request failed without saying why.'}</span>
        </p>
      );
  }
}
