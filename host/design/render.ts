import type { CitationIndexLike, BoardState, VerbCall, WriterContext } from '../board/state';
import { emptyBoard } from '../board/state';
import { applyVerb } from '../board/writer';
import { FORMAT_NAMES, LABELS, codeBlockLabel, type Block, type CodeSpan, type DecisionData, type SpecDocument } from './model';
import { countBlocks, type Counts } from './obligations';

/**
 * The model → the board, one verb at a time through applyVerb, so every element the assembler
 * writes passes the same boundary tier a seat's would. The board is in the transcribed
 * register. The first refusal stops the write; finish settles it or answers with pointers.
 *
 * A code block of the specification is never copied: its text carries its label (file and
 * lines), and where its lines are changed lines of this patchset (the same predicate the
 * citation rules use) a code_ref cites them; a code block standing on its own whose lines are not
 * changed is its label, as prose.
 */

/** True when every line of the span sits in one captured changed region on the head side. */
export function codeCitable(span: CodeSpan, citations: CitationIndexLike): boolean {
  return citations.resolve(span.path, 'head', span.start, span.end).ok;
}

export type WriteOutcome = { ok: true; state: BoardState } | { ok: false; rule: string; reason: string };

// ─── Decisions: element or sections ──────────────────────────────────────────────────────────

/**
 * A stated decision becomes a decision element only when the spec states what the element
 * needs — a statement, a rationale, at least one alternative — and its statement's own lines sit
 * in one changed region of this patchset, so the element's evidence is a code_ref to where the
 * decision is written. Otherwise the same text lands as sections and prose.
 */
export function decisionWritable(decision: DecisionData, citations: CitationIndexLike): boolean {
  if (decision.title.trim() === '' || decision.statement.trim() === '' || !decision.rationale?.trim()) return false;
  if (!decision.alternatives.some((a) => a.trim() !== '')) return false;
  return citations.resolve(decision.sourcePath, 'head', decision.range.start, decision.range.end).ok;
}

/** Replaces every decision block by its element form or its section form; re-checks section previews. */
export function resolveDecisions(blocks: readonly Block[], citations: CitationIndexLike): Block[] {
  const out: Block[] = [];
  for (const block of blocks) {
    if (block.kind === 'decision') {
      const writable = decisionWritable(block.decision, citations);
      const chosen = writable ? block.preferred.map((b) => (b.kind === 'decision-slot' ? { kind: 'decision-slot' as const, decision: block.decision } : b)) : block.fallback;
      out.push(...resolveDecisions(chosen, citations));
    } else if (block.kind === 'section') {
      const children = resolveDecisions(block.children, citations);
      const titled = children.some((c) => c.kind === 'section' || c.kind === 'requirement' || (c.kind === 'decision-slot' && c.decision));
      const body = block.body ?? (titled ? null : children.length === 0 ? LABELS.emptyHeading : LABELS.rowsFollow);
      out.push({ ...block, body, children });
    } else out.push(block);
  }
  return out;
}

// ─── Stats ───────────────────────────────────────────────────────────────────────────────────

export function statsOf(doc: SpecDocument, counts: Counts, decisions: number): { labels: string[]; values: string[] } {
  const rows: Array<[string, string]> = [[LABELS.statFormat, FORMAT_NAMES[doc.format]]];
  if (doc.capabilities !== null) rows.push([LABELS.statCapabilities, String(doc.capabilities)]);
  rows.push([LABELS.statRequirements, String(counts.requirements)]);
  if (counts.scenarios > 0) rows.push([LABELS.statScenarios, String(counts.scenarios)]);
  rows.push([LABELS.statTasks, String(counts.tasks)]);
  if (counts.tasks > 0) rows.push([LABELS.statTasksDone, String(counts.tasksDone)]);
  if (decisions > 0) rows.push([LABELS.statDecisions, String(decisions)]);
  if (counts.glossary > 0) rows.push([LABELS.statGlossary, String(counts.glossary)]);
  if (doc.ledger) rows.push([LABELS.statGroupsComplete, `${doc.ledger.complete} of ${doc.ledger.groups}`]);
  return { labels: rows.map((r) => r[0]), values: rows.map((r) => r[1]) };
}

// ─── Writing ─────────────────────────────────────────────────────────────────────────────────

class Refused extends Error {
  constructor(
    readonly rule: string,
    readonly reason: string,
  ) {
    super(reason);
  }
}

export function writeBoard(doc: SpecDocument, patchsetId: string, ctx: WriterContext): WriteOutcome {
  let state = emptyBoard('design', patchsetId, 'transcribed');
  const apply = (call: VerbCall): string | null => {
    const { state: next, result } = applyVerb(state, call, ctx);
    if (result.status === 'refused') {
      const first = result.refusals[0];
      const what = call.verb === 'add' || call.verb === 'update' ? `${call.verb} ${call.kind}` : call.verb;
      throw new Refused(first?.rule ?? 'input-shape', `${what} refused: ${first ? `${first.rule} on ${first.field}: ${first.message}` : 'no reason given'}`);
    }
    state = next;
    return result.status === 'accepted' ? result.id : null;
  };
  const add = (kind: Extract<VerbCall, { verb: 'add' }>['kind'], input: Record<string, unknown>, parent: string | null): string => {
    const id = apply({ verb: 'add', kind, input: parent === null ? input : { ...input, parent_id: parent } });
    return id as string;
  };
  /** A code_ref to a code block's lines when they are changed lines; false when they are not. */
  const cite = (span: CodeSpan, parent: string | null): boolean => {
    if (!codeCitable(span, ctx.citations)) return false;
    add('code_ref', { path: span.path, side: 'head', start_line: span.start, end_line: span.end, label: LABELS.specCodeBlock }, parent);
    return true;
  };
  const citeAll = (spans: readonly CodeSpan[] | undefined, parent: string | null): void => {
    const seen = new Set<string>();
    for (const span of [...(spans ?? [])].sort((a, b) => a.start - b.start)) {
      const key = `${span.path}:${span.start}-${span.end}`;
      if (seen.has(key)) continue;
      seen.add(key);
      cite(span, parent);
    }
  };

  const write = (block: Block, parent: string | null): void => {
    switch (block.kind) {
      case 'section': {
        const id = add('section', { title: block.title, ...(block.body !== null ? { body_markdown: block.body } : {}), ...(block.sourcePaths ? { source_paths: block.sourcePaths } : {}) }, parent);
        citeAll(block.code, id);
        for (const child of block.children) write(child, id);
        return;
      }
      case 'prose':
        add('prose', { markdown: block.markdown }, parent);
        citeAll(block.code, parent);
        return;
      case 'code':
        if (!cite(block.span, parent)) add('prose', { markdown: codeBlockLabel(block.span) }, parent);
        return;
      case 'requirement': {
        const id = add(
          'requirement',
          {
            title: block.title,
            shall: block.shall,
            source_path: block.sourcePath,
            source_candidate: block.candidate,
            source_line: block.sourceLine,
            trace: [],
            ...(block.delta ? { spec_delta: block.delta } : {}),
          },
          parent,
        );
        for (const scenario of block.scenarios) {
          add(
            'scenario',
            {
              name: scenario.name,
              text_markdown: scenario.text,
              ...(scenario.condition !== null && scenario.response !== null ? { scenario_condition: scenario.condition, scenario_response: scenario.response } : {}),
            },
            id,
          );
        }
        for (const note of block.notes) add('prose', { markdown: note }, id);
        citeAll([...(block.code ?? []), ...block.scenarios.flatMap((s) => s.code ?? [])], id);
        return;
      }
      case 'task':
        add('task', { text: block.text, done: block.done, source_path: block.sourcePath, source_line: block.sourceLine }, parent);
        return;
      case 'decision-slot': {
        const decision = block.decision;
        if (!decision) return;
        const evidence = add('code_ref', { path: decision.sourcePath, side: 'head', start_line: decision.range.start, end_line: decision.range.end, label: LABELS.decisionSource }, parent);
        add(
          'decision',
          {
            title: decision.title,
            statement: decision.statement,
            rationale: decision.rationale,
            alternatives: decision.alternatives,
            evidence: [evidence],
            inferred: false,
            source_path: decision.sourcePath,
          },
          parent,
        );
        citeAll(decision.code, parent);
        return;
      }
      case 'decision':
        throw new Error('decision blocks are resolved before writing');
    }
  };

  try {
    const decisions = countBlocks(doc.files).decisions;
    const files = resolveDecisions(doc.files, ctx.citations);
    const stats = statsOf(doc, countBlocks(files), decisions);
    apply({ verb: 'set_document', input: { title: doc.title, intro_markdown: doc.intro } });
    add('stat', { stat_labels: stats.labels, stat_values: stats.values }, null);
    for (const file of files) write(file, null);
  } catch (error) {
    if (error instanceof Refused) return { ok: false, rule: error.rule, reason: error.reason };
    throw error;
  }
  const finished = applyVerb(state, { verb: 'finish' }, ctx);
  if (finished.result.status === 'pointers') {
    const first = finished.result.pointers[0];
    return {
      ok: false,
      rule: first?.rule ?? 'document-present',
      reason: `finish returned ${finished.result.pointers.length} pointer(s): ${first ? `${first.rule} at ${first.element}: ${first.sentence}` : ''}`,
    };
  }
  return { ok: true, state: finished.state };
}
