/**
 * One component per element kind, plus code cards, the tabbed evidence viewer and region lists.
 * Every element's root carries data-testid="element", data-kind and data-id; class names come
 * only from fixed tables (never from model text); model text goes through <Markdown>.
 */
import { escapeControls } from '../../protocol/text';
import { createContext, Fragment, h, type ComponentChildren } from 'preact';
import { useContext, useRef, useState } from 'preact/hooks';
import type { BoardElement, CitationSide, ElementOf, Lens } from '../../protocol';
import { memoBy } from '../memo';
import { useBoardActions } from './actions';
import { ElementAsks, ElementAsksRun, FindingActions, useFindingMarks } from './AskViews';
import { CodeCard } from './CodeCard';
import { Markdown } from './MarkdownView';
import { codeRefs, scenarioClauses, type BoardTree, type TreeNode } from './tree';
import { accordMark, SEVERITY_TITLES, TONE_LABELS, basename, enumClass, plural, rangeLabel, rangeText } from './words';

// ─── Context ────────────────────────────────────────────────────────────────────────────────

export interface ElementContext {
  lens: Lens;
  tree: BoardTree;
}

export const ElementCtx = createContext<ElementContext | null>(null);

function useElementCtx(): ElementContext {
  const ctx = useContext(ElementCtx);
  if (!ctx) throw new Error('Elements render inside a board');
  return ctx;
}

/** The DOM id of an element on a lens board (unique per panel: one board is shown at a time). */
export function elementDomId(lens: Lens, id: string): string {
  return `rn-${lens}-el-${id}`;
}

function rootAttrs(lens: Lens, element: BoardElement) {
  return {
    'data-testid': 'element',
    'data-kind': element.kind,
    'data-id': element.id,
    id: elementDomId(lens, element.id),
    tabIndex: -1,
  };
}

// ─── Shared pieces ──────────────────────────────────────────────────────────────────────────

export function Heading({ level, class: cls, children }: { level: number; class?: string; children: ComponentChildren }) {
  const n = Math.min(6, Math.max(3, level));
  return h(`h${n}`, { class: cls }, children);
}

/** Keyboard movement along a row of tabs (roving tabindex): the index to move to, or null. */
export function rovingIndex(key: string, index: number, count: number): number | null {
  if (count <= 0) return null;
  switch (key) {
    case 'ArrowRight':
    case 'ArrowDown':
      return (index + 1) % count;
    case 'ArrowLeft':
    case 'ArrowUp':
      return (index - 1 + count) % count;
    case 'Home':
      return 0;
    case 'End':
      return count - 1;
    default:
      return null;
  }
}

function SourceChip({ path }: { path: string }) {
  const actions = useBoardActions();
  return (
    <button type="button" class="rn-chip-button" data-testid="source-chip" data-path={path} title={`Open ${escapeControls(path)}`} onClick={() => actions.openFile(path, 'head')}>
      {escapeControls(path)}
    </button>
  );
}

function SourceChips({ label, paths }: { label: string; paths: readonly string[] }) {
  if (paths.length === 0) return null;
  return (
    <p class="rn-sources">
      <span class="rn-field-label">{label}</span>{' '}
      {paths.map((path, i) => (
        <Fragment key={`${i}:${path}`}>
          {i > 0 && ' '}
          <SourceChip path={path} />
        </Fragment>
      ))}
    </p>
  );
}

function Missing({ ids, what }: { ids: readonly string[]; what: string }) {
  if (ids.length === 0) return null;
  return (
    <p class="rn-muted rn-missing" data-testid="missing-ref">
      {what} {ids.length === 1 ? 'names' : 'name'} {ids.map((id) => `“${id}”`).join(', ')}, not on this board.
    </p>
  );
}

// ─── Code cards ─────────────────────────────────────────────────────────────────────────────

/** A cited range with its captured lines: ./CodeCard.tsx (re-exported here for existing importers). */
export { CodeCard };

function CodeCards({ ids, label }: { ids: readonly string[] | undefined; label: string }) {
  const { tree } = useElementCtx();
  const { refs, missing } = codeRefs(tree, ids);
  if (refs.length === 0 && missing.length === 0) return null;
  return (
    <div class="rn-cards" role="group" aria-label={label}>
      {refs.map((ref, i) => (
        <CodeCard key={`${i}:${ref.id}`} codeRef={ref} />
      ))}
      <Missing ids={missing} what={label} />
    </div>
  );
}

/** Several evidence sites as ONE tabbed code viewer: pill tabs, one visible card. */
export function EvidenceViewer({ ids, owner }: { ids: readonly string[] | undefined; owner: string }) {
  const { tree, lens } = useElementCtx();
  const { refs, missing } = codeRefs(tree, ids);
  const [active, setActive] = useState(0);
  const tabs = useRef<(HTMLButtonElement | null)[]>([]);
  if (refs.length === 0) return <Missing ids={missing} what="The evidence" />;
  if (refs.length === 1) {
    return (
      <div class="rn-evidence" role="group" aria-label="Evidence">
        <CodeCard codeRef={refs[0] as ElementOf<'code_ref'>} />
        <Missing ids={missing} what="The evidence" />
      </div>
    );
  }
  const current = Math.min(active, refs.length - 1);
  const base = `rn-${lens}-ev-${owner}`;
  const select = (index: number, focus: boolean) => {
    setActive(index);
    if (focus) tabs.current[index]?.focus();
  };
  return (
    <div class="rn-evidence" data-testid="evidence-viewer">
      <div class="rn-pills" role="tablist" aria-label="Evidence sites">
        {refs.map((ref, i) => (
          <button
            key={`${i}:${ref.id}`}
            ref={(el) => {
              tabs.current[i] = el;
            }}
            type="button"
            role="tab"
            id={`${base}-tab-${i}`}
            class="rn-pill"
            data-testid="evidence-tab"
            aria-selected={i === current ? 'true' : 'false'}
            aria-controls={`${base}-panel`}
            tabIndex={i === current ? 0 : -1}
            onClick={() => select(i, false)}
            onKeyDown={(event: KeyboardEvent) => {
              const next = rovingIndex(event.key, i, refs.length);
              if (next === null) return;
              event.preventDefault();
              select(next, true);
            }}
          >
            {escapeControls(basename(ref.path))}:{rangeText(ref.start_line, Math.max(ref.start_line, ref.end_line))}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`${base}-panel`} aria-labelledby={`${base}-tab-${current}`}>
        <CodeCard codeRef={refs[current] as ElementOf<'code_ref'>} />
      </div>
      <Missing ids={missing} what="The evidence" />
    </div>
  );
}

// ─── Children (runs of tasks, regions and scenarios render as one list) ─────────────────────

export function Children({ nodes, level }: { nodes: readonly TreeNode[]; level: number }) {
  const { tree, lens } = useElementCtx();
  const out: ComponentChildren[] = [];
  for (let i = 0; i < nodes.length;) {
    const node = nodes[i] as TreeNode;
    const kind = node.element.kind;
    if (kind === 'task' || kind === 'noise_member') {
      let j = i;
      while (j < nodes.length && nodes[j]?.element.kind === kind) j++;
      const run = nodes.slice(i, j);
      out.push(
        kind === 'task' ? <TaskList key={`run-${node.index}`} nodes={run} level={level} /> : <RegionList key={`run-${node.index}`} members={run.map((n) => n.element as ElementOf<'noise_member'>)} />,
      );
      // Quote threads, the selection toolbar and Explain status of the run's elements, under the list.
      out.push(<ElementAsksRun key={`asks-run-${node.index}`} lens={lens} ids={run.map((n) => n.element.id)} />);
      i = j;
      continue;
    }
    if (kind === 'code_ref' && tree.referenced.has(node.element.id)) {
      i++;
      continue;
    }
    out.push(<ElementView key={node.index} node={node} level={level} />);
    out.push(<ElementAsks key={`asks-${node.index}`} lens={lens} elementId={node.element.id} />);
    i++;
  }
  return <>{out}</>;
}

/**
 * One element as its kind draws it. Memoized by node identity: a node is the same object only
 * while its element, its children and what it reads from the tree are unchanged (tree.ts
 * reuseNodes), so a write to one element re-renders that element and its ancestors, not the board.
 */
export const ElementView = memoBy(ElementOfKind, (a, b) => a.node === b.node && a.level === b.level);

function ElementOfKind({ node, level }: { node: TreeNode; level: number }) {
  const e = node.element;
  switch (e.kind) {
    case 'section':
      return <SectionView node={node} element={e} level={level} />;
    case 'prose':
      return <ProseView node={node} element={e} level={level} />;
    case 'callout':
      return <CalloutView node={node} element={e} level={level} />;
    case 'code_ref':
      return <CodeRefView node={node} element={e} level={level} />;
    case 'order_step':
      return <OrderStepView node={node} element={e} level={level} />;
    case 'decision':
      return <DecisionView node={node} element={e} level={level} />;
    case 'finding':
      return <FindingView node={node} element={e} level={level} />;
    case 'requirement':
      return <RequirementView node={node} element={e} level={level} />;
    case 'scenario':
      return <ScenarioView node={node} element={e} level={level} />;
    case 'task':
      return <TaskList nodes={[node]} level={level} />;
    case 'stat':
      return <StatView node={node} element={e} level={level} />;
    case 'noise_group':
      return <NoiseGroupView node={node} element={e} level={level} />;
    case 'noise_member':
      return <RegionList members={[e]} />;
    case 'round_outcome':
      return <RoundOutcomeView node={node} element={e} level={level} />;
    default:
      return <UnknownView element={e as BoardElement} />;
  }
}

interface KindProps<K extends BoardElement['kind']> {
  node: TreeNode;
  element: ElementOf<K>;
  level: number;
}

// ─── Kinds ──────────────────────────────────────────────────────────────────────────────────

const DELTAS = ['new', 'reworked'] as const;
const SPEC_DELTAS = ['added', 'modified', 'removed', 'renamed'] as const;

function DeltaBadge({ value, allowed, title }: { value: string | null | undefined; allowed: readonly string[]; title: string }) {
  if (!value) return null;
  const known = enumClass(value, allowed, '');
  return (
    <span class={`rn-badge rn-badge-delta${known ? ` rn-delta-${known}` : ''}`} data-testid="delta" title={title}>
      {value}
    </span>
  );
}

/** Section body: opening paragraph, sources, children. Shared by nested and folded sections. */
export function SectionBody({ node, element, level }: KindProps<'section'>) {
  return (
    <>
      {element.body_markdown ? <Markdown text={element.body_markdown} class="rn-section-intro" /> : null}
      <SourceChips label="Read from" paths={element.source_paths ?? []} />
      <Children nodes={node.children} level={level + 1} />
    </>
  );
}

function SectionView({ node, element, level }: KindProps<'section'>) {
  const { lens } = useElementCtx();
  return (
    <section class="rn-section" {...rootAttrs(lens, element)}>
      <Heading level={level} class="rn-section-title">
        <Markdown text={element.title} inline /> <DeltaBadge value={element.delta} allowed={DELTAS} title="Changed since the previous generation" />
      </Heading>
      <SectionBody node={node} element={element} level={level} />
    </section>
  );
}

function ProseView({ node, element, level }: KindProps<'prose'>) {
  const { lens } = useElementCtx();
  return (
    <div class="rn-prose" {...rootAttrs(lens, element)}>
      <Markdown text={element.markdown} />
      <Children nodes={node.children} level={level + 1} />
    </div>
  );
}

const TONES = ['note', 'warning', 'question', 'remedy'] as const;

function CalloutView({ node, element, level }: KindProps<'callout'>) {
  const { lens } = useElementCtx();
  const tone = enumClass(element.tone, TONES, 'note');
  return (
    <aside class={`rn-callout rn-tone-${tone}`} role="note" data-tone={tone} {...rootAttrs(lens, element)}>
      <p class="rn-callout-label">{TONE_LABELS[tone]}</p>
      <Markdown text={element.markdown} />
      <Children nodes={node.children} level={level + 1} />
    </aside>
  );
}

function CodeRefView({ node, element, level }: KindProps<'code_ref'>) {
  const { lens } = useElementCtx();
  return (
    <div class="rn-code-ref" {...rootAttrs(lens, element)}>
      <CodeCard codeRef={element} />
      <Children nodes={node.children} level={level + 1} />
    </div>
  );
}

function OrderStepView({ node, element, level }: KindProps<'order_step'>) {
  const { lens, tree } = useElementCtx();
  const number = tree.stepNumbers.get(element.id);
  const span = tree.byId.get(element.span);
  return (
    <article class="rn-step" {...rootAttrs(lens, element)}>
      <Heading level={level} class="rn-step-title">
        {number !== undefined && (
          <span class="rn-step-no" aria-label={`Step ${number}`}>
            {number}
          </span>
        )}{' '}
        <Markdown text={element.title} inline />
      </Heading>
      <Markdown text={element.explanation_markdown} />
      {span?.kind === 'code_ref' ? <CodeCard codeRef={span} /> : <Missing ids={element.span ? [element.span] : []} what="This step’s code" />}
      <Children nodes={node.children} level={level + 1} />
    </article>
  );
}

function DecisionView({ node, element, level }: KindProps<'decision'>) {
  const { lens } = useElementCtx();
  const title = element.title?.trim();
  const alternatives = element.alternatives ?? [];
  return (
    <article class="rn-decision" {...rootAttrs(lens, element)}>
      <Heading level={level} class="rn-decision-title">
        <Markdown text={title || element.statement} inline />
        {element.inferred === true && (
          <>
            {' '}
            <span class="rn-badge rn-badge-inferred" data-testid="model-analysis" title="The rationale is reconstructed by analysis of the change, not stated by its author or a document.">
              model analysis
            </span>
          </>
        )}
      </Heading>
      {title ? (
        <p class="rn-decision-statement">
          <Markdown text={element.statement} inline />
        </p>
      ) : null}
      <p class="rn-decision-rationale">
        <span class="rn-field-label">{element.inferred === true ? 'Rationale (model analysis)' : 'Rationale'}</span> <Markdown text={element.rationale} inline />
      </p>
      {alternatives.length > 0 && (
        <div class="rn-alternatives">
          <p class="rn-field-label">Alternatives not taken</p>
          <ul>
            {alternatives.map((alternative, i) => (
              <li key={i}>
                <Markdown text={alternative} inline />
              </li>
            ))}
          </ul>
        </div>
      )}
      {element.source_path ? <SourceChips label="Stated in" paths={[element.source_path]} /> : null}
      <EvidenceViewer ids={element.evidence} owner={element.id} />
      <Children nodes={node.children} level={level + 1} />
    </article>
  );
}

const SEVERITIES = ['blocker', 'major', 'minor', 'nit'] as const;
const ACCORDS = ['concur', 'split', 'conflict'] as const;

function FindingView({ node, element, level }: KindProps<'finding'>) {
  const { lens, tree } = useElementCtx();
  const marks = useFindingMarks(lens, element.id);
  const severity = enumClass(element.severity, SEVERITIES, 'minor');
  const accord = enumClass(element.accord, ACCORDS, 'split');
  const titles = element.part_titles ?? [];
  const bodies = element.part_bodies ?? [];
  const concurrence = element.concurrence ?? [];
  return (
    <article
      class={`rn-finding rn-sev-${severity}${marks.dismissed ? ' rn-finding-dismissed' : ''}`}
      data-severity={severity}
      data-dismissed={marks.dismissed ? 'true' : undefined}
      {...rootAttrs(lens, element)}
    >
      <Heading level={level} class="rn-finding-title">
        <span class={`rn-sev rn-sev-${severity}`} data-testid="severity" title={SEVERITY_TITLES[severity]}>
          {element.severity}
        </span>{' '}
        <Markdown text={element.title} inline />
      </Heading>
      <p class="rn-finding-meta">
        <span class="rn-badge rn-badge-category" data-testid="category">
          {element.category}
        </span>
        {element.status && element.status !== 'open' ? (
          <span class="rn-badge" data-testid="finding-status">
            {element.status}
          </span>
        ) : null}
        <span class="rn-muted" data-testid="raised-by">
          raised by {element.author}
        </span>
        {element.accord ? (
          <span class={`rn-accord rn-accord-${accord}`} data-testid="accord" data-accord={accord} title={accordMark(accord, concurrence.length).title}>
            {accordMark(accord, concurrence.length).label}
          </span>
        ) : null}
        {concurrence.length > 0 && (
          <span class="rn-muted rn-concurrence" data-testid="concurrence" title="Per model: how many of its reviews agree, out of how many">
            {concurrence.map((c) => `${c.model} ${c.agree}/${c.total}`).join(', ')}
          </span>
        )}
      </p>
      <FindingActions finding={element} lens={lens} byId={tree.byId} />
      <Markdown text={element.body_markdown} />
      {titles.map((partTitle, i) => (
        <div class="rn-finding-part" key={i}>
          <Heading level={level + 1} class="rn-part-title">
            <Markdown text={partTitle} inline />
          </Heading>
          {bodies[i] ? <Markdown text={bodies[i] as string} /> : null}
        </div>
      ))}
      {element.remedy_markdown ? (
        <aside class="rn-callout rn-tone-remedy rn-remedy" role="note" data-testid="remedy">
          <p class="rn-callout-label">Proposed remedy</p>
          <Markdown text={element.remedy_markdown} />
        </aside>
      ) : null}
      <CodeCards ids={element.anchor} label="Where it shows" />
      <Children nodes={node.children} level={level + 1} />
    </article>
  );
}

function RequirementView({ node, element, level }: KindProps<'requirement'>) {
  const { lens } = useElementCtx();
  const actions = useBoardActions();
  const line = element.source_line;
  const path = element.source_path;
  return (
    <article class="rn-requirement" {...rootAttrs(lens, element)}>
      <Heading level={level} class="rn-requirement-title">
        <Markdown text={element.title} inline /> <DeltaBadge value={element.spec_delta} allowed={SPEC_DELTAS} title="The specification's own change to this requirement" />
      </Heading>
      <blockquote class="rn-shall">
        <Markdown text={element.shall} inline />
      </blockquote>
      {path || element.source_candidate ? (
        <p class="rn-sources">
          <span class="rn-field-label">Source</span>{' '}
          {path && line !== undefined ? (
            <button
              type="button"
              class="rn-citation"
              data-testid="citation"
              data-path={path}
              data-start={String(line)}
              data-end={String(line)}
              title={`Open ${escapeControls(path)}, line ${line}`}
              onClick={() => actions.openCitation(path, 'head', line, line)}
            >
              {escapeControls(path)}:{line}
            </button>
          ) : path ? (
            <SourceChip path={path} />
          ) : null}
          {element.source_candidate ? <span class="rn-muted"> {element.source_candidate}</span> : null}
        </p>
      ) : null}
      <SourceChips label="Implemented in" paths={element.related_files ?? []} />
      <Children nodes={node.children} level={level + 1} />
      <CodeCards ids={element.trace} label="Traced to" />
    </article>
  );
}

function ScenarioView({ node, element, level }: KindProps<'scenario'>) {
  const { lens } = useElementCtx();
  const clauses = scenarioClauses(element);
  return (
    <div class="rn-scenario" {...rootAttrs(lens, element)}>
      <p class="rn-scenario-name">
        <span class="rn-field-label">Scenario</span> <Markdown text={element.name} inline />
      </p>
      {clauses.length > 0 ? (
        <dl class="rn-clauses">
          {clauses.map((clause, i) => (
            <div class="rn-clause" data-testid="clause" data-keyword={clause.keyword} key={i}>
              <dt>{clause.keyword}</dt>
              <dd>
                <Markdown text={clause.text} inline />
              </dd>
            </div>
          ))}
        </dl>
      ) : (
        <Markdown text={element.text_markdown} />
      )}
      <Children nodes={node.children} level={level + 1} />
    </div>
  );
}

function TaskList({ nodes, level }: { nodes: readonly TreeNode[]; level: number }) {
  const { lens } = useElementCtx();
  return (
    <ul class="rn-tasks">
      {nodes.map((node) => {
        const task = node.element as ElementOf<'task'>;
        const done = task.done === true;
        return (
          <li key={node.index} class={`rn-task${done ? ' rn-task-done' : ''}`} data-done={done ? 'true' : 'false'} {...rootAttrs(lens, task)}>
            <span class="rn-check" role="img" aria-label={done ? 'done' : 'not done'} data-testid="task-check">
              {done ? '✓' : '\u00a0'}
            </span>
            <span class="rn-task-text">
              <Markdown text={task.text} inline />
            </span>
            {task.source_path ? (
              <code class="rn-task-source">
                {escapeControls(task.source_path)}
                {task.source_line !== undefined ? `:${task.source_line}` : ''}
              </code>
            ) : null}
            {node.children.length > 0 && <Children nodes={node.children} level={level + 1} />}
          </li>
        );
      })}
    </ul>
  );
}

function StatView({ element }: KindProps<'stat'>) {
  const { lens } = useElementCtx();
  const labels = element.stat_labels ?? [];
  const values = element.stat_values ?? [];
  return (
    <dl class="rn-stats" {...rootAttrs(lens, element)}>
      {labels.map((label, i) => (
        <div class="rn-stat" key={i}>
          <dt>
            <Markdown text={label} inline />
          </dt>
          <dd>{values[i] !== undefined ? <Markdown text={values[i] as string} inline /> : <span class="rn-muted">—</span>}</dd>
        </div>
      ))}
    </dl>
  );
}

/** The changed regions of a noise group: each `path:start-end` opens the region. */
export function RegionList({ members }: { members: readonly ElementOf<'noise_member'>[] }) {
  const { lens } = useElementCtx();
  const actions = useBoardActions();
  return (
    <ul class="rn-regions">
      {members.map((member, i) => {
        const side: CitationSide = member.side === 'base' ? 'base' : 'head';
        const end = Math.max(member.start_line, member.end_line);
        const region = `${escapeControls(member.path)}:${rangeText(member.start_line, end)}`;
        return (
          <li key={`${i}:${member.id}`} class="rn-region" {...rootAttrs(lens, member)}>
            <button
              type="button"
              class="rn-link rn-region-link"
              data-testid="region"
              data-path={member.path}
              data-side={side}
              data-start={String(member.start_line)}
              data-end={String(end)}
              title={`Open ${escapeControls(member.path)}, ${rangeLabel(side, member.start_line, end)}`}
              onClick={() => actions.openCitation(member.path, side, member.start_line, end)}
            >
              {region}
            </button>
            {side === 'base' && (
              <>
                {' '}
                <span class="rn-badge">base side</span>
              </>
            )}
          </li>
        );
      })}
    </ul>
  );
}

/** A noise group's reason, regions and any other children (the body of a fold, too). */
export function NoiseGroupBody({ node, element, level }: KindProps<'noise_group'>) {
  const members = node.children.filter((c) => c.element.kind === 'noise_member').map((c) => c.element as ElementOf<'noise_member'>);
  const others = node.children.filter((c) => c.element.kind !== 'noise_member');
  return (
    <>
      <p class="rn-reason">
        <Markdown text={element.reason} inline />
      </p>
      {members.length > 0 ? <RegionList members={members} /> : <p class="rn-muted">No changed region is filed under this group.</p>}
      {others.length > 0 && <Children nodes={others} level={level + 1} />}
    </>
  );
}

export function memberCount(node: TreeNode): number {
  return node.children.filter((c) => c.element.kind === 'noise_member').length;
}

function NoiseGroupView({ node, element, level }: KindProps<'noise_group'>) {
  const { lens } = useElementCtx();
  const count = memberCount(node);
  return (
    <article class="rn-noise-group" {...rootAttrs(lens, element)}>
      <Heading level={level} class="rn-noise-title">
        <Markdown text={element.title} inline /> <span class="rn-fold-counts">{plural(count, 'changed region')}</span>
      </Heading>
      <NoiseGroupBody node={node} element={element} level={level} />
    </article>
  );
}

const OUTCOMES = ['addressed', 'partial', 'untouched', 'beyond'] as const;

function RoundOutcomeView({ node, element, level }: KindProps<'round_outcome'>) {
  const { lens } = useElementCtx();
  const outcome = enumClass(element.outcome, OUTCOMES, 'untouched');
  return (
    <div class={`rn-outcome rn-outcome-${outcome}`} {...rootAttrs(lens, element)}>
      <p>
        <span class="rn-badge" data-testid="outcome">
          {element.outcome}
        </span>{' '}
        Ask <code>{element.ask_id}</code>
      </p>
      {element.note ? <Markdown text={element.note} /> : null}
      <CodeCards ids={element.evidence} label="Evidence" />
      <Children nodes={node.children} level={level + 1} />
    </div>
  );
}

function UnknownView({ element }: { element: BoardElement }) {
  const { lens } = useElementCtx();
  return (
    <div class="rn-unknown" {...rootAttrs(lens, element)}>
      <p class="rn-muted">
        An element of kind <code>{String((element as { kind: unknown }).kind)}</code> this panel cannot show.
      </p>
    </div>
  );
}
