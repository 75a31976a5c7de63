import { LENSES, LENS_ADMISSIBLE_ABSENCES, LENS_TITLES, type Lens } from '../../protocol/board';
import { fileOnSide, type DiffLine, type FileChange, type Hunk, type Patchset } from '../../protocol/patchset';
import type { ReportBoard, ReportElement, ReviewReport } from '../../protocol/review';
import { escapeHtml as esc, markdownBlock, markdownInline } from './markdown';
import { countSummary, retryText } from './report';
import { REVIEW_CSS } from './style';

/**
 * The review as ONE self-contained static HTML page (pure): no script, no external resource
 * (a CSP meta forbids every load but inline style), readable with CSS off and on paper.
 *
 * Lens tabs are radio inputs and `:checked` selectors; every board is in the document, so
 * printing or a reader without CSS gets all five in canonical order. Model-written text goes
 * through markdown.ts (raw HTML escaped, images not loaded); everything else through escapeHtml.
 * Code cards show the captured hunk lines for the cited range, from the patchset.
 */

/** Ceiling on the diff rows one code card shows; the rest are counted, not dropped silently. */
export const CODE_CARD_MAX_ROWS = 400;

export function renderReviewHtml(report: ReviewReport, patchset: Patchset): string {
  const boards = LENSES.map((lens) => report.boards.find((b) => b.lens === lens) ?? null);
  const first = 0;
  const radios = LENSES.map((lens, i) => `<input class="tab" type="radio" name="lens" id="tab-${lens}" aria-controls="board-${lens}"${i === first ? ' checked' : ''}>`).join('\n');
  const rail = LENSES.map((lens, i) => railItem(lens, boards[i] ?? null)).join('\n');
  const panels = LENSES.map((lens, i) => boardPanel(lens, boards[i] ?? null, patchset)).join('\n');
  const tabCss = LENSES.map(
    (lens) =>
      `#tab-${lens}:checked ~ .boards #board-${lens}{display:block}\n` +
      `#tab-${lens}:checked ~ .rail label[for="tab-${lens}"]{background:var(--selected);border-color:var(--accent)}\n` +
      `#tab-${lens}:focus-visible ~ .rail label[for="tab-${lens}"]{outline:2px solid var(--accent);outline-offset:2px}`,
  ).join('\n');
  const title = `Rennet review · ${patchset.headRef} against ${patchset.baseRef}`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="rennet review">
<title>${esc(title)}</title>
<style>
${REVIEW_CSS}
${tabCss}
</style>
</head>
<body>
${pageHeader(report, patchset)}
<main class="review">
${radios}
<nav class="rail" aria-label="Lens boards">
<p class="rail-heading">Lenses</p>
${rail}
</nav>
<div class="boards">
${panels}
</div>
</main>
${pageFooter(report)}
</body>
</html>
`;
}

// ─── Header, footer ────────────────────────────────────────────────────────────────────────

function pageHeader(report: ReviewReport, patchset: Patchset): string {
  const t = patchset.totals;
  const head = patchset.targetKind === 'working-tree' ? `working tree of ${patchset.headRef}` : patchset.headRef;
  const totals =
    `${t.files} file${t.files === 1 ? '' : 's'} changed, +${t.additions} −${t.deletions}, ${t.hunks} hunk${t.hunks === 1 ? '' : 's'}` +
    (t.uncounted ? `; ${t.uncounted} without line counts` : '') +
    (t.truncated ? `; ${t.truncated} truncated` : '');
  return `<header class="page-header">
<p class="brand">Rennet review</p>
<h1>${esc(head)} <span class="muted">against</span> ${esc(patchset.baseRef)}</h1>
<dl class="ids">
<div><dt>Head</dt><dd>${commitId(report.head)} <span class="muted">(${esc(head)})</span></dd></div>
<div><dt>Base</dt><dd>${commitId(report.base)} <span class="muted">(merge-base with ${esc(patchset.baseRef)})</span></dd></div>
<div><dt>Range</dt><dd><code>${esc(short(report.base))}..${esc(short(report.head))}</code> <span class="muted">${esc(totals)}</span></dd></div>
<div><dt>Patchset</dt><dd><code>${esc(report.patchset)}</code></dd></div>
<div><dt>Generation</dt><dd><code>${esc(report.generation)}</code></dd></div>
</dl>
</header>`;
}

function commitId(id: string): string {
  return `<code title="${esc(id)}">${esc(short(id))}</code>`;
}

function short(id: string): string {
  return /^[0-9a-f]{40,64}$/.test(id) ? id.slice(0, 12) : id;
}

function pageFooter(report: ReviewReport): string {
  const parts: string[] = [];
  if (report.spend.length > 0) {
    const rows = report.spend
      .map(
        (s) =>
          `<tr><td><code>${esc(s.seat)}</code></td><td>${esc(LENS_TITLES[s.lens])}</td><td>${esc(s.role)}</td><td>${esc(s.harness)}</td><td>${s.model === null ? '<span class="muted">not reported</span>' : esc(s.model)}</td>` +
          `<td class="num">${seconds(s.durationMs)}</td><td class="num">${orUnknown(s.inputTokens)}</td><td class="num">${orUnknown(s.outputTokens)}</td>` +
          `<td class="num">${orUnknown(s.toolCalls)}</td><td class="num">${orUnknown(s.refusals)}</td><td class="num">${s.readCalls === undefined || s.readCalls === null ? '<span class="muted">—</span>' : `${s.readCalls} (${Math.ceil((s.readBytes ?? 0) / 1024)} KiB)`}</td><td class="num">${s.readMs === undefined || s.readMs === null ? '<span class="muted">—</span>' : seconds(s.readMs)}</td><td class="num">${s.priceUsd === null ? '<span class="muted">—</span>' : `$${s.priceUsd.toFixed(4)}`}</td></tr>`,
      )
      .join('\n');
    parts.push(`<details><summary>Spend: ${report.spend.length} seat turn${report.spend.length === 1 ? '' : 's'}</summary>
<div class="scroll"><table class="data"><thead><tr><th>Seat</th><th>Lens</th><th>Role</th><th>Harness</th><th>Model</th><th>Time</th><th>Input tokens</th><th>Output tokens</th><th>Tool calls</th><th>Refusals</th><th>Reads</th><th>Read time</th><th>Price</th></tr></thead>
<tbody>${rows}</tbody></table></div></details>`);
  }
  if (report.timings.length > 0) {
    const rows = report.timings
      .map(
        (t) =>
          `<tr><td>${esc(t.phase)}</td><td>${t.lens ? esc(LENS_TITLES[t.lens]) : '<span class="muted">—</span>'}</td><td>${t.seat ? `<code>${esc(t.seat)}</code>` : '<span class="muted">—</span>'}</td><td>${esc(t.startedAt)}</td><td class="num">${seconds(t.durationMs)}</td></tr>`,
      )
      .join('\n');
    parts.push(`<details><summary>Timings: ${report.timings.length} phase${report.timings.length === 1 ? '' : 's'}</summary>
<div class="scroll"><table class="data"><thead><tr><th>Phase</th><th>Lens</th><th>Seat</th><th>Started</th><th>Duration</th></tr></thead>
<tbody>${rows}</tbody></table></div></details>`);
  }
  return `<footer class="page-footer">
${parts.join('\n')}
<p class="muted">Written by <code>rennet review</code>. Model-written text is rendered from Markdown with raw HTML escaped; code lines are the captured hunks of patchset <code>${esc(report.patchset)}</code>.</p>
</footer>`;
}

function seconds(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

function orUnknown(n: number | null): string {
  return n === null ? '<span class="muted">—</span>' : n.toLocaleString('en-US');
}

// ─── Rail ──────────────────────────────────────────────────────────────────────────────────

function absenceMeaning(lens: Lens, absence: string | null): string {
  const row = LENS_ADMISSIBLE_ABSENCES[lens].find((r) => r.absence === absence);
  return row?.meaning ?? (absence ? `Settled absent (${absence}).` : 'Settled absent.');
}

function railItem(lens: Lens, board: ReportBoard | null): string {
  const state = board?.state ?? 'failed';
  let detail = '';
  if (!board) detail = `<span class="rail-detail">Not in this report.</span>`;
  else if (board.state === 'settled') {
    const counts = countSummary(lens, board.elements);
    detail = counts ? `<span class="rail-detail">${esc(counts)}</span>` : '';
  } else if (board.state === 'absent') {
    detail = `<span class="rail-detail"><code>${esc(board.absence ?? 'absent')}</code> ${esc(absenceMeaning(lens, board.absence))}</span>`;
  } else if (board.failure) {
    detail = `<span class="rail-detail"><strong>${esc(retryText(board.failure))}.</strong> ${esc(board.failure.message)}</span>`;
  }
  return `<label class="rail-item state-${state}" for="tab-${lens}"><span class="rail-title">${esc(LENS_TITLES[lens])}</span> <span class="state-badge state-${state}">${state}</span>${detail}</label>`;
}

// ─── Board panel ───────────────────────────────────────────────────────────────────────────

function boardPanel(lens: Lens, board: ReportBoard | null, patchset: Patchset): string {
  const lensTitle = LENS_TITLES[lens];
  const open = `<section class="board" id="board-${lens}" aria-labelledby="board-${lens}-title">
<p class="board-lens">${esc(lensTitle)} <span class="state-badge state-${board?.state ?? 'failed'}">${board?.state ?? 'failed'}</span></p>`;
  if (!board) {
    return `${open}
<h2 id="board-${lens}-title">${esc(lensTitle)}</h2>
<div class="lane-status failed" role="note"><p>The report carries no ${esc(lensTitle)} board.</p></div>
</section>`;
  }
  const title = board.document.title.trim() || lensTitle;
  const intro = board.document.introMarkdown.trim() ? `<div class="intro">${markdownBlock(board.document.introMarkdown)}</div>` : '';
  if (board.state === 'failed') {
    const failure = board.failure;
    const draft =
      board.elements.length > 0
        ? `<p class="muted">The unfinished draft (${board.elements.length} element${board.elements.length === 1 ? '' : 's'}) is not shown; it was not settled. The JSON report carries it.</p>`
        : '';
    return `${open}
<h2 id="board-${lens}-title">${esc(lensTitle)}</h2>
<div class="lane-status failed" role="note">
<p class="lane-status-head">This lane failed${failure ? ` (${esc(retryText(failure))})` : ''}.</p>
${failure ? `<p class="failure-message">${esc(failure.message)}</p>` : ''}
${draft}
</div>
</section>`;
  }
  if (board.state === 'absent') {
    const hasContent = board.elements.length > 0;
    return `${open}
<h2 id="board-${lens}-title">${esc(board.document.title.trim() || lensTitle)}</h2>
<div class="lane-status absent" role="note">
<p class="lane-status-head">Settled absent: <code>${esc(board.absence ?? 'absent')}</code></p>
<p>${esc(absenceMeaning(lens, board.absence))}</p>
</div>
${intro}
${hasContent ? renderElements(lens, board.elements, patchset) : ''}
</section>`;
  }
  return `${open}
<h2 id="board-${lens}-title">${markdownInline(title)}</h2>
${intro}
${board.elements.length > 0 ? renderElements(lens, board.elements, patchset) : '<p class="muted">This board holds no elements.</p>'}
</section>`;
}

// ─── Elements ──────────────────────────────────────────────────────────────────────────────

interface Ctx {
  lens: Lens;
  byId: Map<string, ReportElement>;
  children: Map<string | null, ReportElement[]>;
  /** Code refs another element names (span, evidence, anchor, trace): shown there, not in place. */
  referenced: Set<string>;
  patchset: Patchset;
  step: number;
}

const REFERENCE_KEYS = ['span', 'evidence', 'anchor', 'trace'] as const;

function renderElements(lens: Lens, elements: readonly ReportElement[], patchset: Patchset): string {
  const byId = new Map(elements.map((e) => [e.id, e]));
  const children = new Map<string | null, ReportElement[]>();
  for (const e of elements) {
    const parent = e.parent !== null && byId.has(e.parent) ? e.parent : null;
    const list = children.get(parent) ?? [];
    list.push(e);
    children.set(parent, list);
  }
  const referenced = new Set<string>();
  for (const e of elements) {
    for (const key of REFERENCE_KEYS) for (const id of ids(e, key)) if (byId.get(id)?.kind === 'code_ref') referenced.add(id);
  }
  const ctx: Ctx = { lens, byId, children, referenced, patchset, step: 0 };
  return `<div class="elements">${renderList(ctx, children.get(null) ?? [], 3)}</div>`;
}

/** Siblings in order; consecutive tasks, scenarios and loose noise members render as one list. */
function renderList(ctx: Ctx, list: readonly ReportElement[], level: number): string {
  const out: string[] = [];
  for (let i = 0; i < list.length;) {
    const e = list[i] as ReportElement;
    if (e.kind === 'task' || e.kind === 'noise_member') {
      let j = i;
      while (j < list.length && list[j]?.kind === e.kind) j++;
      const run = list.slice(i, j);
      out.push(e.kind === 'task' ? taskList(run) : memberList(ctx, run));
      i = j;
      continue;
    }
    out.push(renderElement(ctx, e, level));
    i++;
  }
  return out.join('\n');
}

function childrenOf(ctx: Ctx, e: ReportElement, level: number): string {
  const kids = ctx.children.get(e.id) ?? [];
  return kids.length > 0 ? renderList(ctx, kids, level) : '';
}

function h(level: number, content: string, cls = ''): string {
  const n = Math.min(6, Math.max(2, level));
  return `<h${n}${cls ? ` class="${cls}"` : ''}>${content}</h${n}>`;
}

function renderElement(ctx: Ctx, e: ReportElement, level: number): string {
  const anchor = `${ctx.lens}-${e.id}`;
  switch (e.kind) {
    case 'section': {
      const delta = str(e, 'delta') ? ` <span class="badge delta">${esc(str(e, 'delta'))}</span>` : '';
      const sources = strs(e, 'sourcePaths');
      return `<section class="el section" id="${esc(anchor)}">
${h(level, markdownInline(str(e, 'title')) + delta)}
${md(str(e, 'bodyMarkdown'))}
${sources.length > 0 ? `<p class="sources">Read from ${sources.map((p) => `<code>${esc(p)}</code>`).join(', ')}</p>` : ''}
${childrenOf(ctx, e, level + 1)}
</section>`;
    }
    case 'prose':
      return `<div class="el prose" id="${esc(anchor)}">${md(str(e, 'markdown'))}</div>`;
    case 'callout':
      return callout(str(e, 'tone') || 'note', markdownBlock(str(e, 'markdown')), anchor);
    case 'code_ref':
      return ctx.referenced.has(e.id) ? '' : codeCard(ctx, e);
    case 'order_step': {
      ctx.step += 1;
      const span = ctx.byId.get(str(e, 'span'));
      return `<article class="el step" id="${esc(anchor)}">
${h(level, `<span class="step-no" aria-label="Step ${ctx.step}">${ctx.step}</span> ${markdownInline(str(e, 'title'))}`)}
${md(str(e, 'explanationMarkdown'))}
${span?.kind === 'code_ref' ? codeCard(ctx, span) : ''}
${childrenOf(ctx, e, level + 1)}
</article>`;
    }
    case 'decision': {
      const inferred = e.inferred === true ? ' <span class="badge inferred" title="The rationale is reconstructed by analysis, not stated by a source">model analysis</span>' : '';
      const alternatives = strs(e, 'alternatives');
      const source = str(e, 'sourcePath');
      return `<article class="el decision" id="${esc(anchor)}">
${h(level, markdownInline(str(e, 'title')) + inferred)}
<p class="statement">${markdownInline(str(e, 'statement'))}</p>
<p class="rationale"><span class="field-label">Rationale</span> ${markdownInline(str(e, 'rationale'))}</p>
${alternatives.length > 0 ? `${h(level + 1, 'Alternatives not taken', 'sub')}<ul class="alternatives">${alternatives.map((a) => `<li>${markdownInline(a)}</li>`).join('')}</ul>` : ''}
${source ? `<p class="sources">Stated in <code>${esc(source)}</code></p>` : ''}
${codeCards(ctx, ids(e, 'evidence'), 'Evidence')}
${childrenOf(ctx, e, level + 1)}
</article>`;
    }
    case 'finding':
      return finding(ctx, e, level, anchor);
    case 'requirement': {
      const delta = str(e, 'specDelta') ? ` <span class="badge delta">${esc(str(e, 'specDelta'))}</span>` : '';
      const sourcePath = str(e, 'sourcePath');
      const line = num(e, 'sourceLine');
      const candidate = str(e, 'sourceCandidate');
      const source = [sourcePath ? `<code>${esc(sourcePath)}${line !== null ? `:${line}` : ''}</code>` : '', candidate ? esc(candidate) : ''].filter(Boolean).join(' · ');
      const related = strs(e, 'relatedFiles');
      return `<article class="el requirement" id="${esc(anchor)}">
${h(level, markdownInline(str(e, 'title')) + delta)}
<blockquote class="shall">${markdownInline(str(e, 'shall'))}</blockquote>
${source ? `<p class="sources">Source: ${source}</p>` : ''}
${related.length > 0 ? `<p class="sources">Implemented in ${related.map((p) => `<code>${esc(p)}</code>`).join(', ')}</p>` : ''}
${childrenOf(ctx, e, level + 1)}
${codeCards(ctx, ids(e, 'trace'), 'Traced to')}
</article>`;
    }
    case 'scenario': {
      const when = str(e, 'scenarioCondition');
      const then = str(e, 'scenarioResponse');
      const body = when ? `<dl class="when-then"><dt>WHEN</dt><dd>${markdownInline(when)}</dd><dt>THEN</dt><dd>${markdownInline(then)}</dd></dl>` : md(str(e, 'textMarkdown'));
      return `<div class="el scenario" id="${esc(anchor)}"><p class="scenario-name"><span class="field-label">Scenario</span> ${markdownInline(str(e, 'name'))}</p>${body}${childrenOf(ctx, e, level + 1)}</div>`;
    }
    case 'task':
      return taskList([e]);
    case 'stat': {
      const labels = strs(e, 'statLabels');
      const values = strs(e, 'statValues');
      return `<dl class="el stats" id="${esc(anchor)}">${labels.map((l, i) => `<div class="stat"><dt>${markdownInline(l)}</dt><dd>${markdownInline(values[i] ?? '')}</dd></div>`).join('')}</dl>`;
    }
    case 'noise_group': {
      const members = (ctx.children.get(e.id) ?? []).filter((c) => c.kind === 'noise_member');
      const others = (ctx.children.get(e.id) ?? []).filter((c) => c.kind !== 'noise_member');
      return `<article class="el noise-group" id="${esc(anchor)}">
${h(level, `${markdownInline(str(e, 'title'))} <span class="count">${members.length} changed region${members.length === 1 ? '' : 's'}</span>`)}
<p class="reason">${markdownInline(str(e, 'reason'))}</p>
${members.length > 0 ? memberList(ctx, members) : ''}
${others.length > 0 ? renderList(ctx, others, level + 1) : ''}
</article>`;
    }
    case 'noise_member':
      return memberList(ctx, [e]);
    case 'round_outcome': {
      const outcome = str(e, 'outcome');
      return `<div class="el outcome outcome-${esc(outcome)}" id="${esc(anchor)}">
<p><span class="badge">${esc(outcome)}</span> Ask <code>${esc(str(e, 'askId'))}</code></p>
${str(e, 'note') ? `<p>${markdownInline(str(e, 'note'))}</p>` : ''}
${codeCards(ctx, ids(e, 'evidence'), 'Evidence')}
</div>`;
    }
    default:
      return `<div class="el unknown" id="${esc(anchor)}"><p class="muted">An element of kind <code>${esc(e.kind)}</code>.</p></div>`;
  }
}

function finding(ctx: Ctx, e: ReportElement, level: number, anchor: string): string {
  const severity = str(e, 'severity');
  const category = str(e, 'category');
  const titles = strs(e, 'partTitles');
  const bodies = strs(e, 'partBodies');
  const status = str(e, 'status');
  const accord = str(e, 'accord');
  const accordText = accord === 'concur' ? 'both reviews raised it' : accord === 'conflict' ? 'the reviews disagree' : '';
  const meta = [status && status !== 'open' ? status : '', e.author ? `raised by ${String(e.author)}` : '', accordText].filter(Boolean).map(esc).join(' · ');
  const parts = titles.map((t, i) => `${h(level + 1, markdownInline(t), 'sub')}${md(bodies[i] ?? '')}`).join('\n');
  return `<article class="el finding sev-${esc(severity)}" id="${esc(anchor)}">
${h(level, `<span class="badge sev sev-${esc(severity)}">${esc(severity)}</span> ${markdownInline(str(e, 'title'))}`)}
<p class="meta"><span class="badge cat">${esc(category)}</span>${meta ? ` <span class="muted">${meta}</span>` : ''}</p>
${md(str(e, 'bodyMarkdown'))}
${parts}
${str(e, 'remedyMarkdown') ? callout('remedy', markdownBlock(str(e, 'remedyMarkdown'))) : ''}
${codeCards(ctx, ids(e, 'anchor'), 'Where')}
${childrenOf(ctx, e, level + 1)}
</article>`;
}

const TONE_LABEL: Record<string, string> = { note: 'Note', warning: 'Warning', question: 'Question', remedy: 'Remedy' };

function callout(tone: string, html: string, anchor?: string): string {
  return `<aside class="callout tone-${esc(tone)}"${anchor ? ` id="${esc(anchor)}"` : ''} role="note"><p class="callout-label">${esc(TONE_LABEL[tone] ?? tone)}</p>${html}</aside>`;
}

function taskList(tasks: readonly ReportElement[]): string {
  const items = tasks.map((t) => {
    const done = t.done === true;
    const path = str(t, 'sourcePath');
    const line = num(t, 'sourceLine');
    return `<li class="task${done ? ' done' : ''}"><span class="check" role="img" aria-label="${done ? 'done' : 'not done'}">${done ? '✓' : ''}</span> <span>${markdownInline(str(t, 'text'))}</span>${path ? ` <code class="src">${esc(path)}${line !== null ? `:${line}` : ''}</code>` : ''}</li>`;
  });
  return `<ul class="el tasks">${items.join('')}</ul>`;
}

function memberList(ctx: Ctx, members: readonly ReportElement[]): string {
  const items = members.map((m) => {
    const region = `${str(m, 'path')}:${rangeText(num(m, 'startLine'), num(m, 'endLine'))}`;
    const card = codeTable(ctx.patchset, {
      path: str(m, 'path'),
      side: str(m, 'side') === 'base' ? 'base' : 'head',
      start: num(m, 'startLine') ?? 0,
      end: num(m, 'endLine') ?? 0,
      hunkIds: str(m, 'hunkId') ? [str(m, 'hunkId')] : [],
    });
    return `<li><details><summary><code>${esc(region)}</code> <span class="muted">(${esc(str(m, 'side'))})</span></summary><div class="code-card">${card}</div></details></li>`;
  });
  return `<ul class="regions">${items.join('')}</ul>`;
}

// ─── Code cards ────────────────────────────────────────────────────────────────────────────

function codeCards(ctx: Ctx, refIds: readonly string[], label: string): string {
  const cards = refIds.map((id) => ctx.byId.get(id)).filter((e): e is ReportElement => e?.kind === 'code_ref');
  if (cards.length === 0) return '';
  return `<div class="cards" aria-label="${esc(label)}">${cards.map((c) => codeCard(ctx, c)).join('\n')}</div>`;
}

function codeCard(ctx: Ctx, ref: ReportElement): string {
  const path = str(ref, 'path');
  const side = str(ref, 'side') === 'base' ? 'base' : 'head';
  const start = num(ref, 'startLine') ?? 0;
  const end = num(ref, 'endLine') ?? start;
  const label = str(ref, 'label');
  return `<figure class="code-card" id="${esc(`${ctx.lens}-${ref.id}`)}">
<figcaption><code class="path">${esc(path)}</code> <span class="range">${side === 'head' ? '' : 'base '}${end > start ? 'lines' : 'line'} ${esc(rangeText(start, end))}</span>${label ? ` <span class="label">${markdownInline(label)}</span>` : ''}</figcaption>
${codeTable(ctx.patchset, { path, side, start, end, hunkIds: strs(ref, 'hunkIds') })}
</figure>`;
}

export interface CitedRange {
  path: string;
  side: 'base' | 'head';
  start: number;
  end: number;
  /** The hunks the host resolved the citation to, when known. */
  hunkIds: readonly string[];
}

/** The file a citation names on its side (protocol/patchset.ts's one rule, `fileOnSide`). */
export function fileForCitation(patchset: Patchset, path: string, side: 'base' | 'head'): FileChange | undefined {
  return fileOnSide(patchset.files, path, side);
}

export interface CardBlock {
  hunkId: string;
  lines: DiffLine[];
}

/**
 * The captured lines a range shows, per hunk: every line whose number on the cited side is in
 * range, plus the other side's lines that sit between them (so a head range shows the deletions
 * it replaced).
 */
export function citedLines(patchset: Patchset, range: CitedRange): { file: FileChange | undefined; blocks: CardBlock[] } {
  const file = fileForCitation(patchset, range.path, range.side);
  if (!file) return { file, blocks: [] };
  const wanted = new Set(range.hunkIds);
  const hunks: Hunk[] = wanted.size > 0 ? file.hunks.filter((hk) => wanted.has(hk.id)) : file.hunks;
  const pool = hunks.length > 0 ? hunks : file.hunks;
  const blocks: CardBlock[] = [];
  for (const hunk of pool) {
    let first = -1;
    let last = -1;
    hunk.lines.forEach((l, i) => {
      const n = range.side === 'head' ? l.newLine : l.oldLine;
      if (n !== null && n >= range.start && n <= range.end) {
        if (first < 0) first = i;
        last = i;
      }
    });
    if (first >= 0) blocks.push({ hunkId: hunk.id, lines: hunk.lines.slice(first, last + 1) });
  }
  return { file, blocks };
}

function codeTable(patchset: Patchset, range: CitedRange): string {
  const { file, blocks } = citedLines(patchset, range);
  if (blocks.length === 0) return `<p class="code-missing">${esc(missingReason(file, range))}</p>`;
  let rows = 0;
  let hidden = 0;
  const body = blocks
    .map((block, b) => {
      const sep = b > 0 ? '<tr class="gap"><td class="ln"></td><td class="ln"></td><td class="mk"></td><td class="tx">⋯</td></tr>' : '';
      const lines = block.lines
        .map((l) => {
          if (rows >= CODE_CARD_MAX_ROWS) {
            hidden++;
            return '';
          }
          rows++;
          const mark = l.kind === 'add' ? '+' : l.kind === 'del' ? '−' : ' ';
          const eof = l.noNewlineAtEof ? '<span class="eof" title="No newline at end of file">⏎̸</span>' : '';
          return `<tr class="${l.kind}"><td class="ln">${l.oldLine ?? ''}</td><td class="ln">${l.newLine ?? ''}</td><td class="mk" aria-hidden="true">${mark}</td><td class="tx">${esc(l.text)}${eof}</td></tr>`;
        })
        .join('');
      return sep + lines;
    })
    .join('');
  const more = hidden > 0 ? `<p class="muted code-more">…and ${hidden.toLocaleString('en-US')} more line${hidden === 1 ? '' : 's'} of this range (not shown).</p>` : '';
  return `<div class="scroll"><table class="diff"><thead class="sr-only"><tr><th>Base line</th><th>Head line</th><th>Change</th><th>Code</th></tr></thead><tbody>${body}</tbody></table></div>${more}`;
}

function missingReason(file: FileChange | undefined, range: CitedRange): string {
  const where = `${range.path}:${rangeText(range.start, range.end)}`;
  if (!file) return `${where} is not a changed file of this capture.`;
  if (file.binary) return `${range.path} is a binary file; it has no lines to show.`;
  if (file.submodule) return `${range.path} is a submodule; its content is another repository.`;
  const tail = file.truncation?.tailFrom[range.side] ?? null;
  if (file.truncation && (file.truncation.reason === 'file-size' || (tail !== null && range.start >= tail))) {
    return `${where} (${range.side}) was not captured: the file is truncated (${file.truncation.reason === 'file-size' ? `over the ${file.truncation.limitBytes}-byte file limit` : `patch over ${file.truncation.limitBytes} bytes`}).`;
  }
  return `${where} (${range.side}) is not in the captured hunks.`;
}

function rangeText(start: number | null, end: number | null): string {
  if (start === null) return '?';
  return end === null || end === start ? String(start) : `${start}-${end}`;
}

// ─── Field access (report elements are open records) ──────────────────────────────────────

function md(text: string): string {
  return text.trim() ? markdownBlock(text) : '';
}

function str(e: ReportElement, key: string): string {
  const v = e[key];
  return typeof v === 'string' ? v : '';
}

function strs(e: ReportElement, key: string): string[] {
  const v = e[key];
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

function ids(e: ReportElement, key: string): string[] {
  const v = e[key];
  if (typeof v === 'string') return v ? [v] : [];
  return strs(e, key);
}

function num(e: ReportElement, key: string): number | null {
  const v = e[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}
