import { createContext, Fragment, type ComponentChildren } from 'preact';
import { escapeControls } from '../protocol/text';
import { useContext, useEffect, useMemo, useReducer, useRef, useState } from 'preact/hooks';
import {
  AskCommand,
  askLaneFor,
  QuoteAnchorInput,
  type AskProjection,
  type FileSummary,
  type GenerationSnapshot,
  type HostStatus,
  type Lens,
  type PanelState,
  type PatchsetSummary,
  type Session,
  type SessionSnapshot,
} from '../protocol';
import { BoardActionsContext, normalizeRange, type BoardActions } from './board/actions';
import { AskSurfaceContext, type AskSurface } from './board/askContext';
import { openThreadOn } from './board/asks';
import { GenerationView } from './board/GenerationView';
import { RoundsArea } from './board/Rounds';
import type { PanelBridge } from './bridge';
import { Button, CountBadge } from './components';
import {
  additionsText,
  deletionsText,
  headLabel,
  headNote,
  mergeBaseNote,
  openSide,
  plural,
  shortId,
  stateBadges,
  statusLabel,
  statusTitle,
  targetKindLabel,
  targetLabel,
  totalsParts,
} from './format';
import { FILE_ROW_HEIGHT_PX, FILE_VIEW_FALLBACK_PX, gapBlocks, navigatedRow, rowWindow, windowPieces, type RowWindow } from './fileWindow';
import { memoBy } from './memo';
import { initModel, reduce, type PanelAction, type PanelNotice } from './state';

const BridgeContext = createContext<PanelBridge | null>(null);

function useBridge(): PanelBridge {
  const bridge = useContext(BridgeContext);
  if (!bridge) throw new Error('App components need a PanelBridge');
  return bridge;
}

export interface AppProps {
  bridge: PanelBridge;
}

/**
 * The board panel. Says `ready` on mount; draws whatever snapshots the extension sends: the
 * capture (header and files) and, once a generation exists, the lens boards between them.
 */
export function App({ bridge }: AppProps) {
  // What VS Code kept for this panel: the reviewer's lens and a pinned (frozen) generation.
  const restored = useRef<PanelState | undefined>(undefined);
  const [model, dispatch] = useReducer(reduce, undefined, () => {
    restored.current = bridge.getState();
    return initModel(restored.current);
  });

  useEffect(() => {
    const unsubscribe = bridge.onMessage((message) => dispatch({ type: 'message', message }));
    bridge.post({ type: 'rennet/panel/ready' });
    const pinned = restored.current?.generationId;
    if (pinned) bridge.post({ type: 'rennet/panel/selectGeneration', generationId: pinned });
    return unsubscribe;
  }, [bridge]);

  // A generation delta that did not apply: ask for the generation whole, once per gap, saying why.
  const gap = model.generationGap;
  useEffect(() => {
    if (gap?.open) bridge.post({ type: 'rennet/panel/generationGap', generationId: gap.generationId, reason: gap.reason.slice(0, 2000) });
  }, [bridge, gap?.seq]);

  const sessionId = model.snapshot?.session.id ?? model.generation?.sessionId ?? restored.current?.sessionId;
  const pinnedGeneration = model.generationReceived ? (model.generation?.status === 'frozen' ? model.generation.generationId : null) : (restored.current?.generationId ?? null);
  useEffect(() => {
    if (!sessionId) return;
    const state: PanelState = { sessionId };
    if (model.lens) state.lens = model.lens;
    if (pinnedGeneration) state.generationId = pinnedGeneration;
    bridge.setState(state);
  }, [bridge, sessionId, model.lens, pinnedGeneration]);

  const actions = useMemo<BoardActions>(
    () => ({
      openCitation: (path, side, startLine, endLine) => bridge.post({ type: 'rennet/panel/openCitation', path, side, ...normalizeRange(startLine, endLine) }),
      openFile: (path, side) => bridge.post({ type: 'rennet/panel/openFile', path, side }),
      runLenses: () => bridge.post({ type: 'rennet/panel/runLenses' }),
      selectGeneration: (generationId) => bridge.post({ type: 'rennet/panel/selectGeneration', generationId }),
    }),
    [bridge],
  );

  const revealing = model.reveal && model.generation?.generationId === model.reveal.generationId ? model.reveal : null;
  const lane = model.snapshot ? askLaneFor(model.snapshot) : null;
  const surface = useMemo<AskSurface>(
    () => ({
      lane,
      projection: model.asks,
      explains: model.explains,
      refusalSeq: model.refusals,
      command(command) {
        // The real bridge throws on a message the contract refuses; say it instead.
        const parsed = AskCommand.safeParse(command);
        if (!parsed.success) {
          dispatch({ type: 'ask-unsendable', message: `This act could not be sent: ${issuesText(parsed.error.issues)}` });
          return;
        }
        bridge.post({ type: 'rennet/panel/askCommand', command: parsed.data });
      },
      explain(anchor) {
        const parsed = QuoteAnchorInput.safeParse(anchor);
        if (!parsed.success) {
          dispatch({ type: 'ask-unsendable', message: `This passage could not be sent to explain: ${issuesText(parsed.error.issues)}` });
          return;
        }
        const requestId = freshRequestId();
        dispatch({ type: 'explain-requested', requestId, anchor: parsed.data });
        // Asking again about the same span continues its open thread rather than opening another.
        const threadId = openThreadOn(model.asks, parsed.data);
        bridge.post({ type: 'rennet/panel/explain', requestId, anchor: parsed.data, ...(threadId ? { threadId } : {}) });
      },
      reveal: revealing,
      revealDone: (seq, found) => dispatch({ type: 'reveal-done', seq, found }),
    }),
    [bridge, lane, model.asks, model.explains, model.refusals, revealing],
  );

  const recapture = () => {
    dispatch({ type: 'refresh-requested' });
    bridge.post({ type: 'rennet/panel/refresh' });
  };
  const selectLens = (lens: Lens) => dispatch({ type: 'select-lens', lens });

  const boards = model.generationReceived ? (
    <BoardActionsContext.Provider value={actions}>
      <AskSurfaceContext.Provider value={surface}>
        <Boards generation={model.generation} lens={model.lens} onSelectLens={selectLens} canDraft={Boolean(model.snapshot?.patchset)} />
      </AskSurfaceContext.Provider>
    </BoardActionsContext.Provider>
  ) : null;
  // The rounds area (run view, report greeting, ledger) once the review has a round; above the boards.
  const roundsArea =
    model.rounds && model.rounds.length > 0 ? (
      <BoardActionsContext.Provider value={actions}>
        <RoundsArea rounds={model.rounds} generation={model.generation} onOpenRoundDiff={(roundId, at) => bridge.post({ type: 'rennet/panel/openRoundDiff', roundId, ...(at ? { at } : {}) })} />
      </BoardActionsContext.Provider>
    ) : null;
  const asksStrip = model.asks ? <AsksStrip projection={model.asks} undoLabel={model.undoLabel} onUndo={() => bridge.post({ type: 'rennet/panel/undo' })} /> : null;

  return (
    <BridgeContext.Provider value={bridge}>
      <main class="rn-panel" data-testid="rennet-panel" aria-busy={model.refreshing ? 'true' : 'false'}>
        <HostStatusBanner status={model.hostStatus} />
        {model.error !== null && <ErrorBanner message={model.error} dispatch={dispatch} />}
        {model.notice !== null && <Notice notice={model.notice} dispatch={dispatch} />}
        {!model.received || !model.snapshot ? (
          <>
            <p class="rn-muted" data-testid="loading" role="status">
              {model.error ? 'The review could not be loaded.' : 'Loading the review…'}
            </p>
            {boards}
          </>
        ) : (
          <Review snapshot={model.snapshot} refreshing={model.refreshing} onRecapture={recapture} boards={boards} asks={asksStrip} rounds={roundsArea} />
        )}
      </main>
    </BridgeContext.Provider>
  );
}

interface BoardsProps {
  generation: GenerationSnapshot | null;
  lens: Lens | null;
  onSelectLens(lens: Lens): void;
  /** The session has a capture to draft from. */
  canDraft: boolean;
}

/** The lens boards, or — when the session has no generation yet — a way to draft them. */
function Boards({ generation, lens, onSelectLens, canDraft }: BoardsProps) {
  const bridge = useBridge();
  if (generation) return <GenerationView snapshot={generation} lens={lens} onSelectLens={onSelectLens} />;
  return (
    <section class="rn-empty rn-board-none" data-testid="board-none">
      <h2>No lens boards yet</h2>
      <p>This review has not been drafted: no Design, Sequence, Decisions, Flagged or Noise reading exists for it.</p>
      {canDraft && (
        <Button onClick={() => bridge.post({ type: 'rennet/panel/runLenses' })} testId="run-lenses">
          Draft the boards
        </Button>
      )}
    </section>
  );
}

function HostStatusBanner({ status }: { status: HostStatus | null }) {
  if (!status || status.state === 'running') return null;
  const text =
    status.state === 'starting'
      ? 'Starting the Rennet host…'
      : status.state === 'restarting'
        ? 'The Rennet host stopped unexpectedly and is restarting; this review is read back from the store when it is up.'
        : 'The Rennet host is stopped. Run “Rennet: Restart Host” from the Command Palette.';
  return (
    <div class={`rn-banner rn-banner-${status.state === 'failed' ? 'error' : 'warning'}`} data-testid="host-status" data-state={status.state} role={status.state === 'failed' ? 'alert' : 'status'}>
      <strong class="rn-banner-label">Host {status.state}</strong> <span>{text}</span>
      {status.message && <div class="rn-banner-detail">{status.message}</div>}
    </div>
  );
}

function ErrorBanner({ message, dispatch }: { message: string; dispatch: (action: PanelAction) => void }) {
  return (
    <DismissibleBanner
      tone="error"
      testIds={{ banner: 'error-banner', message: 'error-message', dismiss: 'dismiss-error' }}
      label="Error"
      message={message}
      dismissLabel="Dismiss error"
      onDismiss={() => dispatch({ type: 'dismiss-error' })}
    />
  );
}

/** An ask act the host refused, or a reveal that found nothing: said inline until dismissed. */
function Notice({ notice, dispatch }: { notice: PanelNotice; dispatch: (action: PanelAction) => void }) {
  return (
    <DismissibleBanner
      tone="warning"
      extraClass="rn-ask-notice"
      testIds={{ banner: notice.kind, message: 'notice-message', dismiss: 'dismiss-notice' }}
      label={notice.kind === 'ask-refused' ? 'Not done' : 'Not found'}
      message={notice.message}
      dismissLabel="Dismiss this notice"
      onDismiss={() => dispatch({ type: 'dismiss-notice' })}
    />
  );
}

/** A message said as an alert until the reviewer dismisses it. */
function DismissibleBanner(props: {
  tone: 'error' | 'warning';
  extraClass?: string;
  testIds: { banner: string; message: string; dismiss: string };
  label: string;
  message: string;
  dismissLabel: string;
  onDismiss(): void;
}) {
  return (
    <div class={`rn-banner rn-banner-${props.tone}${props.extraClass ? ` ${props.extraClass}` : ''}`} data-testid={props.testIds.banner} role="alert">
      <strong class="rn-banner-label">{props.label}</strong> <span data-testid={props.testIds.message}>{props.message}</span>
      <button type="button" class="rn-link rn-banner-dismiss" aria-label={props.dismissLabel} data-testid={props.testIds.dismiss} onClick={props.onDismiss}>
        Dismiss
      </button>
    </div>
  );
}

/** The staged-asks strip in the header: how many asks are staged, and Undo of the last act. */
function AsksStrip({ projection, undoLabel, onUndo }: { projection: AskProjection; undoLabel: string | null; onUndo(): void }) {
  const staged = projection.counts.staged;
  return (
    <div class="rn-asks-strip" data-testid="asks-strip">
      <span class="rn-asks-count" data-testid="asks-count" data-count={String(staged)}>
        {staged === 0 ? 'No asks staged' : `${plural(staged, 'ask')} staged`}
      </span>
      <Button appearance="secondary" onClick={onUndo} disabled={undoLabel === null} title={undoLabel === null ? 'Nothing to undo in this window' : `Undo: ${undoLabel}`} testId="undo-ask">
        {undoLabel === null ? 'Undo' : `Undo ${undoLabel}`}
      </Button>
    </div>
  );
}

function issuesText(issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>): string {
  return issues.map((issue) => `${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`).join('; ');
}

let requestCounter = 0;

/** A requestId of this panel's own for an Explain (the extension echoes it in explainStatus). */
function freshRequestId(): string {
  requestCounter++;
  const random = typeof globalThis.crypto?.randomUUID === 'function' ? globalThis.crypto.randomUUID() : Math.random().toString(36).slice(2);
  return `ex-${requestCounter}-${random}`.slice(0, 64);
}

interface ReviewProps {
  snapshot: SessionSnapshot;
  refreshing: boolean;
  onRecapture: () => void;
  /** The lens boards, shown between the capture header and its files. */
  boards: ComponentChildren;
  /** The staged-asks strip (once the ask log is read). */
  asks: ComponentChildren;
  /** The rounds area (once the review has a round), above the boards. */
  rounds?: ComponentChildren;
}

function Review({ snapshot, refreshing, onRecapture, boards, asks, rounds }: ReviewProps) {
  const { session, patchset } = snapshot;
  return (
    <>
      <header class="rn-header" data-testid="patchset-header" data-session-id={session.id}>
        <div class="rn-title-row">
          <h1 class="rn-title" data-testid="target-title">
            {targetLabel(session.target)}
          </h1>
          <span class="rn-chip" data-testid="target-kind" data-kind={session.target.kind}>
            {targetKindLabel(session.target)}
          </span>
          <span class="rn-spacer" />
          <Button onClick={onRecapture} disabled={refreshing} ariaLabel={refreshing ? 'Recapturing the target' : 'Recapture the target (new commits, working-tree edits)'} testId="recapture">
            {refreshing ? 'Recapturing…' : 'Recapture'}
          </Button>
        </div>
        {asks}
        {patchset ? <PatchsetFacts patchset={patchset} /> : null}
      </header>
      {rounds}
      {boards}
      {patchset ? <ChangedFiles patchset={patchset} /> : <NotCaptured session={session} />}
    </>
  );
}

function PatchsetFacts({ patchset }: { patchset: PatchsetSummary }) {
  const note = headNote(patchset);
  return (
    <>
      <dl class="rn-ids">
        <div>
          <dt>Base</dt>
          <dd>
            <code class="rn-id" data-testid="base-id" data-full-id={patchset.base} title={patchset.base}>
              {shortId(patchset.base)}
            </code>{' '}
            <span class="rn-muted">merge-base with {patchset.baseRef}</span>
          </dd>
        </div>
        <div>
          <dt>Head</dt>
          <dd>
            <code class="rn-id" data-testid="head-id" data-full-id={patchset.head} title={patchset.head}>
              {shortId(patchset.head)}
            </code>{' '}
            <span class="rn-muted">{headLabel(patchset)}</span>
          </dd>
        </div>
      </dl>
      <p class="rn-note" data-testid="merge-base-note">
        {mergeBaseNote(patchset)}
      </p>
      {note && (
        <p class="rn-note" data-testid="head-note">
          {note}
        </p>
      )}
      <p class="rn-totals" data-testid="totals" aria-label="Totals">
        {totalsParts(patchset.totals).map((part, index) => (
          <Fragment key={part.key}>
            {index > 0 && (
              <span class="rn-sep" aria-hidden="true">
                {' '}
                ·{' '}
              </span>
            )}
            <span class={`rn-total rn-total-${part.key}`} data-total={part.key} title={part.title}>
              {part.text}
            </span>
          </Fragment>
        ))}
      </p>
      <details class="rn-details" data-testid="capture-details">
        <summary>Full commit ids and the command that reproduces this diff</summary>
        <dl class="rn-full-ids">
          <dt>Base (merge-base)</dt>
          <dd>
            <code data-testid="base-id-full">{patchset.base}</code>
          </dd>
          <dt>{patchset.baseRef} tip</dt>
          <dd>
            <code>{patchset.baseTip}</code>
          </dd>
          <dt>Head</dt>
          <dd>
            <code data-testid="head-id-full">{patchset.head}</code>
          </dd>
          <dt>Patchset</dt>
          <dd>
            <code>{patchset.id}</code>
          </dd>
          <dt>Diff command</dt>
          <dd>
            <code class="rn-command">{patchset.diffCommand}</code>
          </dd>
        </dl>
      </details>
    </>
  );
}

function NotCaptured({ session }: { session: Session }) {
  return (
    <section class="rn-empty" data-testid="empty-state">
      <h2>Not captured yet</h2>
      <p>This review of {targetLabel(session.target)} has no captured change. Use Recapture to capture it now; the capture is pinned and later edits never change it.</p>
    </section>
  );
}

/** The file table, drawn again only for another capture (a generation's writes leave it as it is). */
const ChangedFiles = memoBy(FileList, (a, b) => a.patchset === b.patchset);

function FileList({ patchset }: { patchset: PatchsetSummary }) {
  if (patchset.files.length === 0) {
    return (
      <section class="rn-empty" data-testid="empty-state">
        <h2>No changed files</h2>
        <p>This capture holds no file changes.</p>
      </section>
    );
  }
  return (
    <section class="rn-files" aria-labelledby="rn-files-heading">
      <h2 id="rn-files-heading" class="rn-section-title">
        Changed files <CountBadge count={patchset.files.length} label={plural(patchset.files.length, 'file')} testId="file-count" />
      </h2>
      <div class="rn-table-wrap">
        <table class="rn-file-table" data-testid="file-list" aria-rowcount={patchset.files.length + 1}>
          <thead>
            <tr aria-rowindex={1}>
              <th scope="col" class="rn-col-status">
                Status
              </th>
              <th scope="col">File</th>
              <th scope="col" class="rn-num">
                Added
              </th>
              <th scope="col" class="rn-num">
                Deleted
              </th>
              <th scope="col" class="rn-num">
                Hunks
              </th>
            </tr>
          </thead>
          <FileRows files={patchset.files} />
        </table>
      </div>
    </section>
  );
}

/** The viewport's height, or a fallback where there is no layout to ask (webview/fileWindow.ts). */
function viewHeight(): number {
  return typeof window !== 'undefined' && window.innerHeight > 0 ? window.innerHeight : FILE_VIEW_FALLBACK_PX;
}

/**
 * The table body, virtualized (webview/fileWindow.ts): only the rows in view and an overscan are
 * in the DOM, gap rows of the same height stand for the rest, so 20,000 files draw as fast as 100.
 * The page's scroll moves the window. Arrow keys, Page Up/Down, Home and End move the focus
 * between the rows' Open buttons, rendering and scrolling to the row they reach; the focused row
 * stays rendered when it scrolls out of view.
 */
function FileRows({ files }: { files: readonly FileSummary[] }) {
  const body = useRef<HTMLTableSectionElement>(null);
  const [rows, setRows] = useState<RowWindow>(() => rowWindow(files.length, 0, viewHeight()));
  const [focused, setFocused] = useState<number | null>(null);
  const focusNext = useRef<number | null>(null);

  useEffect(() => {
    if (typeof window === 'undefined' || typeof window.addEventListener !== 'function') return;
    let frame = 0;
    const measure = () => {
      frame = 0;
      const element = body.current;
      if (!element || typeof element.getBoundingClientRect !== 'function') return;
      const next = rowWindow(files.length, -element.getBoundingClientRect().top, viewHeight());
      setRows((shown) => (shown.start === next.start && shown.end === next.end ? shown : next));
    };
    const schedule = () => {
      if (frame === 0) frame = window.requestAnimationFrame(measure);
    };
    // Capture: a scroll of any container holding the panel moves the rows in view.
    window.addEventListener('scroll', schedule, { capture: true, passive: true });
    window.addEventListener('resize', schedule, { passive: true });
    measure();
    return () => {
      window.removeEventListener('scroll', schedule, { capture: true });
      window.removeEventListener('resize', schedule);
      if (frame !== 0) window.cancelAnimationFrame(frame);
    };
  }, [files.length]);

  // A row reached by the keyboard: focus its Open button once it is rendered, and show it.
  useEffect(() => {
    const index = focusNext.current;
    if (index === null) return;
    focusNext.current = null;
    const row = body.current?.querySelector<HTMLElement>(`[data-index="${index}"]`);
    const button = row?.querySelector<HTMLElement>('[data-testid="open-file"]');
    if (!row || !button) return;
    button.focus({ preventScroll: true });
    if (typeof row.scrollIntoView === 'function') row.scrollIntoView({ block: 'nearest' });
  });

  const rowIndexOf = (target: EventTarget | null): number | null => {
    const row = (target as HTMLElement | null)?.closest?.('[data-index]');
    const index = row ? Number(row.getAttribute('data-index')) : NaN;
    return Number.isInteger(index) ? index : null;
  };
  const onKeyDown = (event: KeyboardEvent) => {
    const from = rowIndexOf(event.target);
    if (from === null) return;
    const to = navigatedRow(event.key, from, files.length, Math.floor(viewHeight() / FILE_ROW_HEIGHT_PX) - 1);
    if (to === null) return;
    event.preventDefault();
    if (to === from) return;
    focusNext.current = to;
    setFocused(to);
  };
  const onFocusIn = (event: FocusEvent) => {
    const index = rowIndexOf(event.target);
    if (index !== null) setFocused(index);
  };

  const keep = focused !== null && focused < files.length ? focused : null;
  return (
    <tbody ref={body} onKeyDown={onKeyDown} onFocusIn={onFocusIn}>
      {windowPieces(files.length, rows, keep).map((piece) =>
        piece.kind === 'gap' ? (
          <tr key={piece.key} class="rn-file-gap" aria-hidden="true" data-testid="file-gap" data-rows={piece.rows}>
            <td colSpan={5}>
              {gapBlocks(piece.rows).map((block, i) => (
                <div key={i} class={`rn-gap rn-gap-${block}`} />
              ))}
            </td>
          </tr>
        ) : (
          <FileRow key={(files[piece.index] as FileSummary).path} file={files[piece.index] as FileSummary} index={piece.index} />
        ),
      )}
    </tbody>
  );
}

function FileRow({ file, index }: { file: FileSummary; index: number }) {
  const bridge = useBridge();
  const adds = additionsText(file.additions);
  const dels = deletionsText(file.deletions);
  const badges = stateBadges(file);
  const side = openSide(file);
  const open = () => bridge.post({ type: 'rennet/panel/openFile', path: file.path, side });
  return (
    <tr
      class="rn-file-row"
      data-testid="file-row"
      data-index={index}
      aria-rowindex={index + 2}
      data-path={file.path}
      data-status={file.status}
      data-binary={file.binary ? 'true' : undefined}
      data-submodule={file.submodule ? 'true' : undefined}
      data-truncated={file.truncated ? 'true' : undefined}
    >
      <td>
        <span class={`rn-status rn-status-${file.status}`} data-testid="file-status" title={statusTitle(file)}>
          {statusLabel(file)}
        </span>
      </td>
      <td class="rn-path-cell">
        <div class="rn-path-line">
          <button
            type="button"
            class="rn-link rn-path"
            data-testid="open-file"
            aria-label={`Open ${file.path}${side === 'base' ? ' (base side)' : ''}`}
            title={side === 'base' ? `Open ${escapeControls(file.path)} as it was at the base` : `Open ${escapeControls(file.path)}`}
            onClick={open}
          >
            {escapeControls(file.path)}
          </button>
          {file.oldPath && (
            <span class="rn-renamed-from" data-testid="renamed-from" title={`renamed from ${escapeControls(file.oldPath)}`}>
              renamed from <code>{escapeControls(file.oldPath)}</code>
            </span>
          )}
          {badges.length > 0 && (
            <span class="rn-badges">
              {badges.map((badge) => (
                <span key={badge.kind} class={`rn-badge rn-badge-${badge.kind}`} data-testid="file-badge" data-kind={badge.kind} title={badge.title}>
                  {badge.text}
                </span>
              ))}
            </span>
          )}
        </div>
      </td>
      <td class={`rn-num rn-add${adds.known ? '' : ' rn-unknown'}`} data-testid="file-additions" title={adds.title}>
        {adds.text}
      </td>
      <td class={`rn-num rn-del${dels.known ? '' : ' rn-unknown'}`} data-testid="file-deletions" title={dels.title}>
        {dels.text}
      </td>
      <td class="rn-num" data-testid="file-hunks" title={`${plural(file.hunkCount, 'hunk')} captured`}>
        {file.hunkCount}
      </td>
    </tr>
  );
}
