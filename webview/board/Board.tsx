/**
 * One lane as a reader gets it: the lens name, the authored title and introduction, the lane's
 * honest state (failed, absent, still being written, queued, waiting), and the board: top-level
 * sections folded with their previews and counts (LensBoardView.folds), everything else in
 * document order.
 */
import { useCallback, useContext, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { LENS_TITLES, MEASURE_BY_LENS, type ElementOf, type Lens, type LaneView, type LensBoardView, type SeatSpend, type SectionFold } from '../../protocol';
import { Button } from '../components';
import { useBoardActions } from './actions';
import { useAskSurface } from './askContext';
import { DetachedThreads, ElementAsks, SelectionScope, UnplacedThreads } from './AskViews';
import { Children, ElementCtx, elementDomId, NoiseGroupBody, SectionBody, type ElementContext } from './Elements';
import { Markdown } from './MarkdownView';
import { memoBy } from '../memo';
import { openCountText } from './openCount';
import { revealInDom, rootContaining } from './reveal';
import { MAX_ELEMENT_DEPTH, updateTree, type BoardTree, type ShownTree, type TreeNode } from './tree';
import { absenceMeaning, foldCountsText, pendingText, plural, retryKind, retryLabel, retryTitle, spendParts } from './words';

export interface LanePanelProps {
  lane: LaneView;
  /** Spend of this lane's seat turns. */
  spend: readonly SeatSpend[];
  /** A frozen generation: nothing can be asked of it. */
  readOnly: boolean;
  /** DOM id of the lens heading (the tabpanel is labelled by the tab; this labels the article). */
  headingId?: string;
  /** Flagged: findings still open (derived from the board and the ask log); null/absent: not known. */
  openCount?: number | null;
}

export function LanePanel({ lane, spend, readOnly, headingId, openCount = null }: LanePanelProps) {
  const board = lane.board;
  const lens = lane.lens;
  const measure = board?.document.measure ?? MEASURE_BY_LENS[lens];
  const title = board?.document.title.trim() ?? '';
  const intro = board?.document.intro_markdown.trim() ?? '';
  const elements = board?.elements.length ?? 0;
  const showBoard = board !== null && elements > 0 && lane.state !== 'failed';
  const id = headingId ?? `rn-board-${lens}-title`;
  return (
    <article
      class={`rn-board rn-measure-${measure === 'structured' ? 'structured' : 'reading'}`}
      data-testid="board"
      data-lens={lens}
      data-state={lane.state}
      data-status={board?.status ?? 'none'}
      aria-labelledby={id}
    >
      <header class="rn-board-header">
        <h2 class="rn-board-lens" id={id}>
          {LENS_TITLES[lens]}
          {openCount !== null && (
            <>
              {' '}
              <span class="rn-open-count" data-testid="board-open-count" data-count={String(openCount)} title="Findings still waiting for your decision: open, not dismissed, no change request staged">
                {openCountText(openCount)}
              </span>
            </>
          )}
        </h2>
        {title && lane.state !== 'failed' ? (
          <p class="rn-board-title" data-testid="board-title">
            <Markdown text={title} inline />
          </p>
        ) : null}
        {intro && lane.state !== 'failed' ? <Markdown text={intro} class="rn-board-intro" /> : null}
      </header>
      <LaneStatus lane={lane} readOnly={readOnly} />
      {showBoard && <BoardBody board={board} />}
      <DetachedThreads lens={lens} />
      <p class="rn-lane-spend rn-muted" data-testid="lane-spend">
        {`${LENS_TITLES[lens]} spend: `}
        {spendParts(spend)
          .map((part) => part.text)
          .join(' · ')}
      </p>
    </article>
  );
}

function LaneStatus({ lane, readOnly }: { lane: LaneView; readOnly: boolean }) {
  const actions = useBoardActions();
  const [asked, setAsked] = useState(false);
  useEffect(() => setAsked(false), [lane]);
  const elements = lane.board?.elements.length ?? 0;
  switch (lane.state) {
    case 'failed': {
      const failure = lane.failure;
      const kind = retryKind(failure);
      return (
        <div class="rn-lane-status rn-lane-failed" data-testid="lane-failed" data-retry={kind}>
          <p class="rn-lane-status-head">
            <span class="rn-state-icon" aria-hidden="true">
              ✕
            </span>{' '}
            This reading failed{' '}
            <span class={`rn-badge rn-retry-${kind}`} data-testid="lane-retry" title={retryTitle(failure)}>
              {retryLabel(failure)}
            </span>
          </p>
          <p class="rn-failure-message" data-testid="lane-failure-message">
            {failure?.message ?? 'The drafter stopped without saying why.'}
          </p>
          {failure && failure.attempts > 0 ? <p class="rn-muted">{plural(failure.attempts, 'attempt')} made.</p> : null}
          {elements > 0 ? <p class="rn-muted">The unfinished draft ({plural(elements, 'element')}) is not shown: it never settled.</p> : null}
          {!readOnly && (
            <Button
              onClick={() => {
                setAsked(true);
                actions.runLenses();
              }}
              disabled={asked}
              testId="draft-again"
              ariaLabel="Draft the boards again"
            >
              {asked ? 'Drafting requested…' : 'Draft again'}
            </Button>
          )}
        </div>
      );
    }
    case 'absent':
      return (
        <div class="rn-lane-status rn-lane-absent" data-testid="lane-absent" data-absence={lane.absence ?? ''}>
          <p class="rn-lane-status-head">
            <span class="rn-state-icon" aria-hidden="true">
              ∅
            </span>{' '}
            Settled absent{lane.absence ? <code class="rn-absence-code">{lane.absence}</code> : null}
          </p>
          <p data-testid="lane-absence-meaning">{absenceMeaning(lane.lens, lane.absence)}</p>
        </div>
      );
    case 'settled':
      return elements === 0 ? (
        <p class="rn-lane-status rn-muted" data-testid="lane-empty">
          This reading settled without writing anything.
        </p>
      ) : null;
    case 'working':
      return elements === 0 ? (
        <p class="rn-lane-status rn-lane-pending" data-testid="lane-pending" data-state="working" role="status">
          <span class="rn-state-icon rn-spin" aria-hidden="true">
            ◐
          </span>{' '}
          {pendingText(lane.lens, 'working')}
        </p>
      ) : (
        <p class="rn-lane-status rn-lane-pending rn-muted" data-testid="lane-pending" data-state="working">
          Still being written: {plural(elements, 'element')} so far, more may arrive.
        </p>
      );
    case 'queued':
    case 'waiting':
      return (
        <p class="rn-lane-status rn-lane-pending" data-testid="lane-pending" data-state={lane.state} role="status">
          <span class="rn-state-icon" aria-hidden="true">
            {lane.state === 'queued' ? '○' : '◷'}
          </span>{' '}
          {pendingText(lane.lens, lane.state)}
        </p>
      );
  }
}

// ─── The board body ─────────────────────────────────────────────────────────────────────────

export function BoardBody({ board }: { board: LensBoardView }) {
  const lens = board.lens;
  // Nodes of elements that did not change are the previous tree's own (reuseNodes), so their
  // memoized views skip; the context object stays the same across writes for the same reason
  // (a new context value would re-render every element that reads it), and reads the latest tree.
  const shownTree = useRef<BoardTree | null>(null);
  const shown = useRef<ShownTree | null>(null);
  const tree = useMemo(() => updateTree(shown.current, board.elements), [board.elements]);
  shownTree.current = tree;
  shown.current = { elements: board.elements, tree };
  const folds = useMemo(() => new Map(board.folds.map((fold) => [fold.sectionId, fold])), [board.folds]);
  const [expanded, setExpanded] = useState<ReadonlySet<string>>(() => new Set());
  // A round's successor: the sections its composition touched (new / reworked) open expanded once,
  // carried ones stay folded to their previews — the board's own shape says what changed.
  const touched = useMemo(() => tree.roots.flatMap((n) => (n.element.kind === 'section' && n.element.delta ? [n.element.id] : [])).join('\n'), [tree]);
  const autoOpened = useRef(new Set<string>());
  useEffect(() => {
    const fresh = touched.split('\n').filter((id) => id !== '' && !autoOpened.current.has(id));
    if (fresh.length === 0) return;
    for (const id of fresh) autoOpened.current.add(id);
    setExpanded((current) => new Set([...current, ...fresh]));
  }, [touched]);
  const [focusId, setFocusId] = useState<string | null>(null);
  const ctx = useMemo<ElementContext>(
    () => ({
      lens,
      get tree() {
        return shownTree.current ?? tree;
      },
    }),
    [lens],
  );
  const surface = useAskSurface();
  const reveal = surface?.reveal?.lens === lens ? surface.reveal : null;
  /** A reveal whose section is opened; its element is focused once that render is on screen. */
  const [revealing, setRevealing] = useState<{ seq: number; elementId: string } | null>(null);

  useEffect(() => {
    if (!reveal || !surface) return;
    const root = rootContaining(tree.roots, reveal.elementId);
    if (!root) {
      surface.revealDone(reveal.seq, false);
      return;
    }
    if (foldFor(lens, root, folds) !== null) setExpanded((current) => (current.has(root.element.id) ? current : new Set([...current, root.element.id])));
    setRevealing({ seq: reveal.seq, elementId: reveal.elementId });
  }, [reveal?.seq]);

  useEffect(() => {
    if (!revealing || !surface) return;
    const target = typeof document !== 'undefined' ? document.getElementById(elementDomId(lens, revealing.elementId)) : null;
    if (target) revealInDom(target);
    surface.revealDone(revealing.seq, target !== null);
    setRevealing(null);
  }, [revealing]);

  useEffect(() => {
    if (focusId === null) return;
    const target = typeof document !== 'undefined' ? document.getElementById(elementDomId(lens, focusId)) : null;
    target?.focus();
    setFocusId(null);
  }, [focusId, lens]);

  const foldable = tree.roots.filter((node) => foldFor(lens, node, folds) !== null);
  const allOpen = foldable.length > 0 && foldable.every((node) => expanded.has(node.element.id));
  // Stable across renders, so a fold line whose section did not change skips its render (FoldedSection).
  const toggle = useCallback(
    (id: string) =>
      setExpanded((current) => {
        const next = new Set(current);
        if (next.has(id)) next.delete(id);
        else next.add(id);
        return next;
      }),
    [],
  );
  const open = useCallback((id: string, focus: string | null) => {
    setExpanded((current) => (current.has(id) ? current : new Set([...current, id])));
    if (focus) setFocusId(focus);
  }, []);

  return (
    <ElementCtx.Provider value={ctx}>
      <SelectionScope lens={lens}>
        <div class="rn-board-body" data-testid="board-body">
          {foldable.length > 1 && (
            <p class="rn-fold-all">
              <button type="button" class="rn-link" data-testid="expand-all" onClick={() => setExpanded(allOpen ? new Set() : new Set(foldable.map((node) => node.element.id)))}>
                {allOpen ? 'Collapse all sections' : 'Expand all sections'}
              </button>
            </p>
          )}
          {tree.flattened && (
            <p class="rn-muted" data-testid="flattened-note">
              Elements nested deeper than {MAX_ELEMENT_DEPTH} levels are shown flat under their deepest shown ancestor.
            </p>
          )}
          <TopLevel roots={tree.roots} folds={folds} expanded={expanded} onToggle={toggle} onOpen={open} lens={lens} />
          <UnplacedThreads lens={lens} byId={tree.byId} />
        </div>
      </SelectionScope>
    </ElementCtx.Provider>
  );
}

/** The fold line of a top-level section or noise group; null when it is not folded. */
function foldFor(lens: Lens, node: TreeNode, folds: ReadonlyMap<string, SectionFold>): SectionFold | null {
  const e = node.element;
  if (e.kind !== 'section' && e.kind !== 'noise_group') return null;
  const fold = folds.get(e.id);
  if (fold) return fold;
  if (e.kind === 'noise_group') return null;
  // A Flagged section without a fold line reaches no finding (host/board/read.ts's orphan guard).
  if (lens === 'flagged') return null;
  return { sectionId: e.id, title: e.title, preview: [], counts: [] };
}

interface TopLevelProps {
  roots: readonly TreeNode[];
  folds: ReadonlyMap<string, SectionFold>;
  expanded: ReadonlySet<string>;
  onToggle(id: string): void;
  onOpen(id: string, focus: string | null): void;
  lens: Lens;
}

function TopLevel({ roots, folds, expanded, onToggle, onOpen, lens }: TopLevelProps) {
  const out = [];
  let run: TreeNode[] = [];
  const flush = () => {
    if (run.length > 0) out.push(<Children key={`run-${run[0]?.index}`} nodes={run} level={3} />);
    run = [];
  };
  for (const node of roots) {
    const fold = foldFor(lens, node, folds);
    if (fold) {
      flush();
      out.push(<FoldedSection key={node.index} node={node} fold={fold} expanded={expanded.has(node.element.id)} onToggle={onToggle} onOpen={onOpen} />);
      continue;
    }
    // A Flagged orphan section (no fold line) is left out, as every reader of the board does.
    if (node.element.kind === 'section' && lens === 'flagged') continue;
    run.push(node);
  }
  flush();
  return <>{out}</>;
}

interface FoldedSectionProps {
  node: TreeNode;
  fold: SectionFold;
  expanded: boolean;
  /** Called with the section's id (stable callbacks: see FoldedSection). */
  onToggle(id: string): void;
  onOpen(id: string, focus: string | null): void;
}

/**
 * A top-level section's fold line and, unfolded, its body. Skips its render while its tree node,
 * fold line and folding are the same objects (reuseNodes and the generation fold keep them for
 * sections a write did not touch), so a write re-renders the one section it landed in.
 */
const FoldedSection = memoBy(FoldedSectionView, (a, b) => a.node === b.node && a.fold === b.fold && a.expanded === b.expanded && a.onToggle === b.onToggle && a.onOpen === b.onOpen);

function FoldedSectionView({ node, fold, expanded, onToggle: toggleId, onOpen: openId }: FoldedSectionProps) {
  const e = node.element as ElementOf<'section'> | ElementOf<'noise_group'>;
  const onToggle = () => toggleId(e.id);
  const onOpen = (focus: string | null) => openId(e.id, focus);
  const lens = useElementLens();
  const bodyId = `${elementDomId(lens, e.id)}-body`;
  const counts = foldCountsText(fold.counts);
  const preview = fold.preview;
  const delta = e.kind === 'section' ? e.delta : null;
  return (
    <section
      class={`rn-fold${expanded ? ' rn-fold-open' : ''}`}
      data-testid="element"
      data-kind={e.kind}
      data-id={e.id}
      data-expanded={expanded ? 'true' : 'false'}
      id={elementDomId(lens, e.id)}
      tabIndex={-1}
    >
      <h3 class="rn-fold-heading">
        <button type="button" class="rn-fold-toggle" data-testid="fold-toggle" aria-expanded={expanded ? 'true' : 'false'} aria-controls={expanded ? bodyId : undefined} onClick={onToggle}>
          <span class="rn-fold-chevron" aria-hidden="true">
            {expanded ? '▾' : '▸'}
          </span>
          <span class="rn-fold-title">
            <Markdown text={e.title || fold.title} inline citations={false} />
          </span>
        </button>
        {delta ? (
          <span class="rn-badge rn-badge-delta" data-testid="delta">
            {delta}
          </span>
        ) : null}
        {counts && (
          <span class="rn-fold-counts" data-testid="fold-counts">
            {counts}
          </span>
        )}
      </h3>
      {!expanded && <FoldPreview node={node} preview={preview} onOpen={onOpen} />}
      <ElementAsks lens={lens} elementId={e.id} />
      {expanded && (
        <div class="rn-fold-body" id={bodyId}>
          {e.kind === 'section' ? <SectionBody node={node} element={e} level={3} /> : <NoiseGroupBody node={node} element={e} level={3} />}
        </div>
      )}
    </section>
  );
}

function FoldPreview({ node, preview, onOpen }: { node: TreeNode; preview: SectionFold['preview']; onOpen(focus: string | null): void }) {
  if (Array.isArray(preview)) {
    if (preview.length === 0) return null;
    return (
      <ul class="rn-fold-preview rn-fold-headings" data-testid="fold-preview">
        {preview.map((heading, i) => {
          const target = node.children.find((child) => titleOf(child) === heading.trim());
          return (
            <li key={i}>
              <button type="button" class="rn-link" data-testid="fold-preview-entry" onClick={() => onOpen(target ? target.element.id : null)}>
                <Markdown text={heading} inline citations={false} />
              </button>
            </li>
          );
        })}
      </ul>
    );
  }
  if (!preview.text.trim()) return null;
  return (
    <div class="rn-fold-preview rn-clamp-2" data-testid="fold-preview">
      <Markdown text={preview.text} citations={false} />
    </div>
  );
}

function titleOf(node: TreeNode): string {
  const title = (node.element as { title?: unknown }).title;
  return typeof title === 'string' ? title.trim() : '';
}

function useElementLens(): Lens {
  return useContext(ElementCtx)?.lens ?? 'flagged';
}
