import {
  blockText,
  blocksOf,
  fenceSpan,
  itemText,
  leadingTitle,
  outline,
  ownEnd,
  parseMarkdown,
  textOf,
  titleOf,
  type ListItem,
  type MdBlock,
  type MdFile,
  type MdNode,
} from './markdown';
import { LABELS, SpecParseError, codeBlockLabel, criterionLabel, type Block, type CodeSpan, type DecisionData, type ScenarioBlock, type SpecDelta } from './model';

/**
 * Obligation extractors shared by every format reader: a heading becomes a section, a check box
 * a task, a requirement its normative text and scenarios, a stated decision a decision, a
 * glossary entry prose. A reader decides which heading is which; how each kind lands is decided
 * here once.
 */

/** How a heading's own content is laid out (check boxes always make task rows). */
export type ContentMode = 'plain' | 'rows' | 'glossary';

export interface FileRenderer {
  file: MdFile;
  /** Blocks to write in place of a node, or null for the generic section. */
  special?(node: MdNode, r: FileRenderer): Block[] | null;
  mode?(node: MdNode): ContentMode;
  /** A block to write in place of a top-level list item (BMAD "FR1: …"), or null for a row; `code` is what its text labels. */
  item?(file: MdFile, item: ListItem, text: string, code: CodeSpan[]): Block | null;
}

export function readFile(path: string, text: string): { file: MdFile; root: MdNode } {
  const file = parseMarkdown(path, text);
  return { file, root: outline(file) };
}

/** Renders one node: its special blocks, or a section with its content and children. */
export function renderNode(r: FileRenderer, node: MdNode): Block[] {
  const special = r.special?.(node, r);
  if (special) return special;
  return [genericSection(r, node, titleOf(node))];
}

export function renderChildren(r: FileRenderer, node: MdNode): Block[] {
  return node.children.flatMap((child) => renderNode(r, child));
}

export function genericSection(r: FileRenderer, node: MdNode, title: string, sourcePaths?: string[]): Extract<Block, { kind: 'section' }> {
  const { body, rows, code } = contentOf(r, node.contentStart, node.contentEnd, r.mode?.(node) ?? 'plain');
  const children = [...rows, ...renderChildren(r, node)];
  return section(title, body, children, sourcePaths, code);
}

/** A section whose preview is its body, or a titled child; otherwise a fixed label says why it is empty. */
export function section(title: string, body: string | null, children: Block[], sourcePaths?: string[], code: CodeSpan[] = []): Extract<Block, { kind: 'section' }> {
  const only = onlyCodeBlock(body, code);
  if (only) return section(title, null, [only, ...children], sourcePaths);
  const titled = children.some((c) => c.kind === 'section' || c.kind === 'requirement' || c.kind === 'decision');
  const lead = body ?? (titled ? null : children.length === 0 ? LABELS.emptyHeading : LABELS.rowsFollow);
  return { kind: 'section', title, body: lead, ...(sourcePaths ? { sourcePaths } : {}), children, ...withCode(code) };
}

/** A text that is one code block's label and nothing else is that code block, standing on its own. */
function onlyCodeBlock(text: string | null, code: readonly CodeSpan[]): Extract<Block, { kind: 'code' }> | null {
  if (text === null || code.length !== 1) return null;
  const span = code[0] as CodeSpan;
  return text.trim() === codeBlockLabel(span) ? { kind: 'code', span } : null;
}

/** `{ code }` when there is any, so blocks without code blocks keep their shape. */
export function withCode(code: readonly CodeSpan[] | undefined): { code?: CodeSpan[] } {
  return code && code.length > 0 ? { code: [...code] } : {};
}

/**
 * The same blocks with every code block stated by its label alone, never cited: a proposal's
 * fences are illustration, so they are left out and their place stated.
 */
export function labelledOnly(blocks: readonly Block[]): Block[] {
  return blocks.map((block): Block => {
    switch (block.kind) {
      case 'code':
        return { kind: 'prose', markdown: codeBlockLabel(block.span) };
      case 'section': {
        const { code: _code, ...rest } = block;
        return { ...rest, children: labelledOnly(block.children) };
      }
      case 'prose': {
        const { code: _code, ...rest } = block;
        return rest;
      }
      case 'requirement': {
        const { code: _code, ...rest } = block;
        return { ...rest, scenarios: block.scenarios.map(({ code: _c, ...scenario }) => scenario) };
      }
      case 'decision': {
        const { code: _code, ...decision } = block.decision;
        return { ...block, decision, preferred: labelledOnly(block.preferred), fallback: labelledOnly(block.fallback) };
      }
      default:
        return block;
    }
  });
}

/**
 * The top-level section of one source file: titled by its one opening H1 (whose content and
 * subheadings it takes), else by `fallbackTitle`. Front matter is stated with a label.
 */
export function fileSection(r: FileRenderer, root: MdNode, fallbackTitle: string, forcedTitle?: string): Block {
  const h1 = leadingTitle(r.file, root);
  const node = h1 ?? root;
  const title = forcedTitle ?? (h1 ? titleOf(h1) || fallbackTitle : fallbackTitle);
  const built = genericSection(r, node, title, [r.file.path]);
  if (r.file.frontMatter) built.children.unshift({ kind: 'prose', markdown: LABELS.frontMatter });
  return built;
}

// ─── Content ─────────────────────────────────────────────────────────────────────────────────

function hasCheckbox(blocks: readonly MdBlock[]): boolean {
  return blocks.some((b) => b.kind === 'list' && b.items.some((i) => i.checkbox !== null));
}

/** Top-level items of a list with the exclusive end of each (its nested plain items included). */
function topLevel(items: readonly ListItem[]): Array<{ item: ListItem; end: number }> {
  const out: Array<{ item: ListItem; end: number }> = [];
  let n = 0;
  while (n < items.length) {
    const item = items[n] as ListItem;
    let next = n + 1;
    while (next < items.length && (items[next] as ListItem).indent > item.indent && (items[next] as ListItem).checkbox === null) next++;
    out.push({ item, end: next < items.length ? (items[next] as ListItem).start : (items[next - 1] as ListItem).end });
    n = next;
  }
  return out;
}

function claimsItems(r: FileRenderer, blocks: readonly MdBlock[]): boolean {
  if (!r.item) return false;
  return blocks.some((b) => b.kind === 'list' && topLevel(b.items).some(({ item, end }) => item.checkbox === null && r.item?.(r.file, item, rowText(r.file, item, end), []) != null));
}

/**
 * A heading's own content: lead paragraphs become its body; the rest become rows. Plain content
 * with no check box (and no item a reader claims) is the body whole, verbatim. `code` is what the
 * body labels; a code block standing between rows is a row of its own.
 */
export function contentOf(r: FileRenderer, start: number, end: number, mode: ContentMode): { body: string | null; rows: Block[]; code: CodeSpan[] } {
  const file = r.file;
  const blocks = blocksOf(file, start, end);
  const code: CodeSpan[] = [];
  if (blocks.length === 0) return { body: null, rows: [], code };
  if (mode === 'plain' && !hasCheckbox(blocks) && !claimsItems(r, blocks)) return { body: textOf(file, start, end, 0, code) || null, rows: [], code };
  let lead = 0;
  while (lead < blocks.length && blocks[lead]?.kind === 'para' && !(mode === 'glossary' && isGlossaryEntry(file, blocks[lead] as MdBlock))) lead++;
  const body = lead > 0 ? textOf(file, (blocks[0] as MdBlock).start, (blocks[lead - 1] as MdBlock).end, 0, code) : null;
  const rows: Block[] = [];
  for (const block of blocks.slice(lead)) {
    if (block.kind === 'fence') {
      const fence = file.fences.find((f) => f.start === block.start) ?? { start: block.start, end: block.end - 1 };
      rows.push({ kind: 'code', span: fenceSpan(file, fence) });
    } else if (block.kind === 'para') {
      const own: CodeSpan[] = [];
      rows.push(prose(blockText(file, block, own), mode === 'glossary' && isGlossaryEntry(file, block), own));
    } else rows.push(...listRows(r, block.items, mode));
  }
  return { body, rows, code };
}

function prose(markdown: string, glossary = false, code: CodeSpan[] = []): Block {
  return onlyCodeBlock(markdown, code) ?? { kind: 'prose', markdown, ...(glossary ? { glossary: true } : {}), ...withCode(code) };
}

/**
 * A list's rows: each check box a task (its continuation lines and nested plain items a detail
 * prose after it); each other top-level item one prose row with its nested items.
 */
function listRows(r: FileRenderer, items: readonly ListItem[], mode: ContentMode): Block[] {
  const file = r.file;
  const out: Block[] = [];
  for (const { item, end } of topLevel(items)) {
    if (item.checkbox !== null) {
      out.push({ kind: 'task', text: item.first || LABELS.emptyTask, done: item.checkbox === 'done', sourcePath: file.path, sourceLine: item.start + 1 });
      const code: CodeSpan[] = [];
      const detail = textOf(file, item.start + 1, end, item.contentIndent, code);
      if (detail !== '') out.push(prose(detail, false, code));
      continue;
    }
    const code: CodeSpan[] = [];
    const text = rowText(file, item, end, code);
    // A bare list marker has no text to transcribe.
    if (text === '') continue;
    const claimed = r.item?.(file, item, text, code) ?? null;
    out.push(claimed ?? prose(text, mode === 'glossary' && GLOSSARY_ENTRY.test(text), code));
  }
  return out;
}

function rowText(file: MdFile, item: ListItem, end: number, sink?: CodeSpan[]): string {
  const tail = end > item.start + 1 ? textOf(file, item.start + 1, end, item.contentIndent, sink) : '';
  // A blank line after the marker line stays a paragraph break.
  const gap = (file.lines[item.start + 1] ?? '').trim() === '' ? '\n\n' : '\n';
  return [item.first, tail].filter((s) => s !== '').join(gap);
}

// ─── Glossary ────────────────────────────────────────────────────────────────────────────────

/** "**Term**: definition" or "**Term:** definition". */
export const GLOSSARY_ENTRY = /^\*\*[^*\n]+?\*\*\s*:|^\*\*[^*\n]+?:\*\*/;

function isGlossaryEntry(file: MdFile, block: MdBlock): boolean {
  return block.kind === 'para' && GLOSSARY_ENTRY.test((file.lines[block.start] as string).trim());
}

// ─── Requirements and scenarios ──────────────────────────────────────────────────────────────

const CLAUSE = /^(?:\*\*)?(GIVEN|WHEN|THEN|AND|BUT)(?:\*\*)?(?::|\s)\s*/;

/** Splits WHEN/THEN clause bullets: GIVEN/WHEN (and AND before THEN) are the condition; THEN (and AND/BUT after it) the response. */
export function splitClauses(clauses: ReadonlyArray<{ keyword: string; text: string }>): { condition: string | null; response: string | null } {
  const condition: string[] = [];
  const response: string[] = [];
  let afterThen = false;
  for (const { keyword, text } of clauses) {
    if (keyword === 'THEN') afterThen = true;
    (afterThen ? response : condition).push(text);
  }
  if (condition.length === 0 || response.length === 0) return { condition: null, response: null };
  return { condition: condition.join('\n'), response: response.join('\n') };
}

/**
 * EARS: "WHEN <condition> THEN <response>" (Kiro), or "WHEN|IF|WHILE|WHERE <condition>, THE
 * <system> SHALL <response>". Keywords must be capitalised as EARS writes them.
 */
export function splitEars(text: string): { condition: string; response: string } | null {
  const flat = text.replace(/\s*\n\s*/g, ' ').trim();
  const then = flat.match(/^(?:WHEN|IF|WHILE|WHERE)\s+(.+?),?\s+THEN\s+(.+)$/);
  if (then) return { condition: (then[1] as string).trim(), response: (then[2] as string).trim() };
  const comma = flat.match(/^(?:WHEN|IF|WHILE|WHERE)\s+(.+?),\s*((?:THE|the)\s.+?\b(?:SHALL|shall)\b.*)$/);
  if (comma) return { condition: (comma[1] as string).trim(), response: (comma[2] as string).trim() };
  return null;
}

/** A scenario node (#### Scenario: name) with - **WHEN** / - **THEN** bullets. */
export function scenarioOf(file: MdFile, node: MdNode, name: string): ScenarioBlock {
  const code: CodeSpan[] = [];
  const text = textOf(file, node.contentStart, node.end, 0, code) || LABELS.emptyHeading;
  const clauses: Array<{ keyword: string; text: string }> = [];
  for (const block of blocksOf(file, node.contentStart, node.end)) {
    if (block.kind !== 'list') continue;
    for (const item of block.items) {
      const match = item.first.match(CLAUSE);
      if (!match) continue;
      clauses.push({ keyword: match[1] as string, text: itemText(file, item, false).slice((match[0] as string).length).trim() });
    }
  }
  const { condition, response } = splitClauses(clauses);
  return { name, text, condition, response, ...withCode(code) };
}

const REQUIREMENT_HEADING = /^Requirement:\s*(.+)$/;
const SCENARIO_HEADING = /^Scenario:\s*(.+)$/;

export function isOpenSpecRequirement(node: MdNode): boolean {
  return REQUIREMENT_HEADING.test(titleOf(node));
}

/**
 * "### Requirement: <name>": the text before its first scenario is the normative text, verbatim;
 * each "#### Scenario: <name>" child its scenario; any other child heading a note.
 */
export function openSpecRequirement(file: MdFile, node: MdNode, delta: SpecDelta | null): Block {
  const heading = titleOf(node);
  const name = (heading.match(REQUIREMENT_HEADING)?.[1] ?? heading).trim();
  const line = (node.heading?.index ?? 0) + 1;
  const code: CodeSpan[] = [];
  let shall = textOf(file, node.contentStart, node.contentEnd, 0, code);
  if (shall === '') {
    if (delta !== 'removed') throw new SpecParseError('spec-requirement-text', file.path, line, `requirement "${name}" has no normative text before its first scenario`);
    shall = LABELS.removedNoReason;
  }
  const scenarios: ScenarioBlock[] = [];
  const notes: string[] = [];
  for (const child of node.children) {
    const scenario = titleOf(child).match(SCENARIO_HEADING);
    if (scenario) scenarios.push(scenarioOf(file, child, (scenario[1] as string).trim()));
    else {
      const note = textOf(file, child.heading?.index ?? child.contentStart, child.end, 0, code);
      if (note !== '') notes.push(note);
    }
  }
  return { kind: 'requirement', title: name, shall, sourcePath: file.path, sourceLine: line, candidate: heading, delta, scenarios, notes, ...withCode(code) };
}

/**
 * A user-story requirement (Kiro "### Requirement N", a BMAD epic story): the story text is the
 * normative text; each numbered acceptance criterion a scenario, split when it is EARS-shaped.
 */
export function storyRequirement(file: MdFile, node: MdNode, number: string | null): Block {
  const heading = titleOf(node);
  const line = (node.heading?.index ?? 0) + 1;
  const criteria = node.children.find((c) => /acceptance criteria/i.test(titleOf(c)));
  const code: CodeSpan[] = [];
  const shall = textOf(file, node.contentStart, node.contentEnd, 0, code);
  if (shall === '') throw new SpecParseError('spec-requirement-text', file.path, line, `requirement "${heading}" has no story or normative text`);
  const scenarios = criteria ? criteriaScenarios(file, criteria.contentStart, criteria.end, number) : [];
  const notes: string[] = [];
  for (const child of node.children) {
    if (child === criteria) continue;
    const note = textOf(file, child.heading?.index ?? child.contentStart, child.end, 0, code);
    if (note !== '') notes.push(note);
  }
  return { kind: 'requirement', title: heading, shall, sourcePath: file.path, sourceLine: line, candidate: heading, delta: null, scenarios, notes, ...withCode(code) };
}

/** Numbered (or bulleted) top-level criteria in a range, one scenario each. */
export function criteriaScenarios(file: MdFile, start: number, end: number, prefix: string | null): ScenarioBlock[] {
  const out: ScenarioBlock[] = [];
  let count = 0;
  for (const block of blocksOf(file, start, end)) {
    if (block.kind === 'para') {
      // BMAD writes criteria as "1: …" lines, which are not a Markdown list.
      for (let i = block.start; i < block.end; i++) {
        const numbered = (file.lines[i] as string).match(/^\s*(\d+)\s*:\s+(.*\S)\s*$/);
        if (!numbered) continue;
        count++;
        const text = numbered[2] as string;
        const split = splitEars(text);
        out.push({ name: criterionLabel(prefix ? `${prefix}.${numbered[1]}` : (numbered[1] as string)), text, condition: split?.condition ?? null, response: split?.response ?? null });
      }
      continue;
    }
    if (block.kind !== 'list') continue;
    for (const { item, end } of topLevel(block.items)) {
      const code: CodeSpan[] = [];
      const text = rowText(file, item, end, code);
      if (text === '') continue;
      count++;
      const own = item.number ?? String(count);
      const split = splitEars(text);
      out.push({ name: criterionLabel(prefix ? `${prefix}.${own}` : own), text, condition: split?.condition ?? null, response: split?.response ?? null, ...withCode(code) });
    }
  }
  return out;
}

// ─── Decisions ───────────────────────────────────────────────────────────────────────────────

const RATIONALE_LABEL = /^(?:\*\*)?(?:Rationale|Why|Reason|Reasoning)(?::\*\*|\*\*:|:)\s*/i;
const ALTERNATIVES_LABEL = /^(?:\*\*)?(?:Alternatives(?: considered)?|Options considered|Considered options|Rejected alternatives)(?::\*\*|\*\*:|:)\s*/i;
const DECISION_LABEL = /^(?:\*\*)?(?:Decision|Chosen option)(?::\*\*|\*\*:|:)\s*/i;

/** A heading that holds decisions: "Decisions", "Key Decisions", "Design Decisions", … */
export function isDecisionsHeading(node: MdNode): boolean {
  return /^(?:\d+[.)]?\s+)?(?:key |design |technical |architecture |architectural )?decisions\b/i.test(titleOf(node));
}

/**
 * One decision under a Decisions heading, as a subheading: its unlabelled paragraphs (or a
 * "Decision:" paragraph) state it; a "Rationale:"/"Why:" paragraph gives the stated rationale; an
 * "Alternatives considered:" paragraph or the list after it the alternatives.
 */
export function subheadingDecision(r: FileRenderer, node: MdNode): Block {
  const file = r.file;
  const blocks = blocksOf(file, node.contentStart, node.contentEnd);
  let statement: { text: string; start: number; end: number } | null = null;
  let rationale: string | null = null;
  const alternatives: string[] = [];
  const code: CodeSpan[] = [];
  /** Code blocks standing on their own under the decision's heading: rows after the decision. */
  const standalone: Block[] = [];
  let expectAlternatives = false;
  for (const block of blocks) {
    if (block.kind === 'list') {
      if (expectAlternatives) alternatives.push(...topItems(file, block.items, code));
      expectAlternatives = false;
      continue;
    }
    if (block.kind === 'fence') {
      standalone.push({ kind: 'code', span: fenceSpan(file, file.fences.find((f) => f.start === block.start) ?? { start: block.start, end: block.end - 1 }) });
      continue;
    }
    const text = blockText(file, block, code);
    if (RATIONALE_LABEL.test(text)) {
      rationale = text.replace(RATIONALE_LABEL, '').trim() || null;
      expectAlternatives = false;
    } else if (ALTERNATIVES_LABEL.test(text)) {
      const rest = text.replace(ALTERNATIVES_LABEL, '').trim();
      if (rest !== '') alternatives.push(rest);
      expectAlternatives = rest === '';
    } else if (!statement) {
      const stated = text.replace(DECISION_LABEL, '').trim();
      if (stated !== '') statement = { text: stated, start: block.start, end: block.end };
      expectAlternatives = false;
    }
  }
  const fallback = [genericSection(r, node, titleOf(node))];
  if (!statement || node.children.length > 0) return fallback[0] as Block;
  const data = decisionData(titleOf(node), statement.text, rationale, alternatives, file.path, statement.start, statement.end, code);
  return { kind: 'decision', decision: data, preferred: [{ kind: 'decision-slot' }, ...standalone], fallback };
}

/** "- Decision: …" / "- Rationale: …" / "- Alternatives considered: …" items under a Decisions heading (the OpenSpec design.md template). */
export function listDecisions(file: MdFile, items: readonly ListItem[]): Block[] | null {
  const top = Math.min(...items.map((i) => i.indent));
  type Part = { item: ListItem; text: string; end: number; code: CodeSpan[] };
  const groups: Part[][] = [];
  for (let n = 0; n < items.length; n++) {
    const item = items[n] as ListItem;
    if (item.indent !== top) continue;
    let next = n + 1;
    while (next < items.length && (items[next] as ListItem).indent > top) next++;
    const end = next < items.length ? (items[next] as ListItem).start : (items[next - 1] as ListItem).end;
    const code: CodeSpan[] = [];
    const text = rowText(file, item, end, code);
    if (DECISION_LABEL.test(text)) groups.push([{ item, text, end, code }]);
    else if (groups.length > 0) (groups[groups.length - 1] as Part[]).push({ item, text, end, code });
    else return null;
  }
  if (groups.length === 0) return null;
  return groups.map((group) => {
    const head = group[0] as Part;
    const statement = head.text.replace(DECISION_LABEL, '').trim();
    let rationale: string | null = null;
    const alternatives: string[] = [];
    for (const part of group.slice(1)) {
      if (RATIONALE_LABEL.test(part.text)) rationale = part.text.replace(RATIONALE_LABEL, '').trim() || null;
      else if (ALTERNATIVES_LABEL.test(part.text)) {
        const rest = part.text.replace(ALTERNATIVES_LABEL, '').trim();
        if (rest !== '') alternatives.push(...rest.split('\n').map((s) => s.replace(/^\s*[-*+]\s+/, '').trim()).filter((s) => s !== ''));
      }
    }
    const fallback: Block[] = group.map((part) => prose(part.text, false, part.code));
    const data = decisionData(statement.split('\n')[0] ?? statement, statement, rationale, alternatives, file.path, head.item.start, ownEnd(file, head.item), group.flatMap((part) => part.code));
    return { kind: 'decision', decision: data, preferred: [{ kind: 'decision-slot' }], fallback } satisfies Block;
  });
}

function topItems(file: MdFile, items: readonly ListItem[], sink?: CodeSpan[]): string[] {
  const top = Math.min(...items.map((i) => i.indent));
  const out: string[] = [];
  for (let n = 0; n < items.length; n++) {
    const item = items[n] as ListItem;
    if (item.indent !== top) continue;
    let next = n + 1;
    while (next < items.length && (items[next] as ListItem).indent > top) next++;
    out.push(rowText(file, item, next < items.length ? (items[next] as ListItem).start : (items[next - 1] as ListItem).end, sink));
  }
  return out.filter((s) => s !== '');
}

export function topItemsOf(file: MdFile, start: number, end: number, sink?: CodeSpan[]): string[] {
  return blocksOf(file, start, end).flatMap((b) => (b.kind === 'list' ? topItems(file, b.items, sink) : b.kind === 'para' ? [blockText(file, b, sink)] : []));
}

export function decisionData(title: string, statement: string, rationale: string | null, alternatives: string[], sourcePath: string, start0: number, end0: number, code: CodeSpan[] = []): DecisionData {
  return { title, statement, rationale, alternatives, sourcePath, range: { start: start0 + 1, end: Math.max(start0 + 1, end0) }, ...withCode(code) };
}

// ─── Counting ────────────────────────────────────────────────────────────────────────────────

export interface Counts {
  requirements: number;
  scenarios: number;
  tasks: number;
  tasksDone: number;
  decisions: number;
  glossary: number;
}

export function countBlocks(blocks: readonly Block[], into: Counts = { requirements: 0, scenarios: 0, tasks: 0, tasksDone: 0, decisions: 0, glossary: 0 }): Counts {
  for (const block of blocks) {
    switch (block.kind) {
      case 'section':
        countBlocks(block.children, into);
        break;
      case 'requirement':
        into.requirements++;
        into.scenarios += block.scenarios.length;
        break;
      case 'task':
        into.tasks++;
        if (block.done) into.tasksDone++;
        break;
      case 'prose':
        if (block.glossary) into.glossary++;
        break;
      case 'decision':
        // Counted once as a stated decision; what else it holds is counted where it is rendered.
        into.decisions++;
        break;
      case 'decision-slot':
      case 'code':
        break;
    }
  }
  return into;
}
