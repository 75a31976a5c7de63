import { blockText, blocksOf, fenceSpan, itemText, leadingTitle, outline, ownEnd, parseMarkdown, textOf, titleOf, type ListItem, type MdBlock, type MdFile, type MdNode } from './markdown';
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
      const detail = textOf(file, item.firstEnd, end, item.contentIndent, code, item.first !== '');
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
  const tail = end > item.firstEnd ? textOf(file, item.firstEnd, end, item.contentIndent, sink, item.first !== '') : '';
  // A blank line after the first paragraph stays a paragraph break.
  const gap = (file.lines[item.firstEnd] ?? '').trim() === '' ? '\n\n' : '\n';
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

/** A Given/When/Then line as criteria write it: "**Given** …", "- **When** …", "2. **Then** …", "Then: …". */
const GHERKIN_LINE = /^\s*(?:(?:[-*+]|\d{1,9}[.)])\s+)?(?:\*\*|__)?(Given|When|Then|And|But|GIVEN|WHEN|THEN|AND|BUT)(?:\*\*|__)?(?::|\s)\s*/;

/**
 * A criterion written as Given/When/Then lines, each clause on its own line (or bullet): Given and
 * When (and And before Then) are the condition, Then and what follows it the response. The clause
 * texts are the criterion's own words after the keyword.
 */
export function splitGherkin(text: string): { condition: string; response: string } | null {
  const clauses: Array<{ keyword: string; text: string }> = [];
  for (const line of text.split('\n')) {
    const match = line.match(GHERKIN_LINE);
    if (match) clauses.push({ keyword: (match[1] as string).toUpperCase(), text: line.slice((match[0] as string).length).trim() });
    else if (clauses.length > 0 && line.trim() !== '') (clauses[clauses.length - 1] as { text: string }).text += `\n${line.trim()}`;
    else if (line.trim() !== '') return null;
  }
  if (!clauses.some((c) => c.keyword === 'THEN') || !clauses.some((c) => c.keyword === 'GIVEN' || c.keyword === 'WHEN')) return null;
  const { condition, response } = splitClauses(clauses);
  return condition !== null && response !== null ? { condition, response } : null;
}

/** A criterion's condition and response: EARS when it is EARS-shaped, else Given/When/Then lines. */
export function splitCriterion(text: string): { condition: string | null; response: string | null } {
  const split = splitEars(text) ?? splitGherkin(text);
  return { condition: split?.condition ?? null, response: split?.response ?? null };
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
      clauses.push({
        keyword: match[1] as string,
        text: itemText(file, item, false)
          .slice((match[0] as string).length)
          .trim(),
      });
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

/** A note of a requirement: its text that is neither its statement nor a scenario, at its 0-based line. */
export interface Note {
  line: number;
  text: string;
}

const byLine = (a: Note, b: Note) => a.line - b.line;

/**
 * "### Requirement: <name>": the text before its first scenario is the normative text, verbatim;
 * each "#### Scenario: <name>" child its scenario; any other child heading a note. A requirement
 * that goes straight to its scenarios (a MODIFIED delta adding one) is labelled as having no text
 * of its own; one with neither text nor scenarios cannot be a requirement.
 */
export function openSpecRequirement(file: MdFile, node: MdNode, delta: SpecDelta | null): Block {
  const heading = titleOf(node);
  const name = (heading.match(REQUIREMENT_HEADING)?.[1] ?? heading).trim();
  const line = (node.heading?.index ?? 0) + 1;
  const code: CodeSpan[] = [];
  let shall = textOf(file, node.contentStart, node.contentEnd, 0, code);
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
  if (shall === '') {
    if (delta === 'removed') shall = LABELS.removedNoReason;
    else if (scenarios.length > 0 || notes.length > 0) shall = LABELS.noRequirementText;
    else throw new SpecParseError('spec-requirement-text', file.path, line, `requirement "${name}" has no normative text and no scenario`);
  }
  return { kind: 'requirement', title: name, shall, sourcePath: file.path, sourceLine: line, candidate: heading, delta, scenarios, notes, ...withCode(code) };
}

/**
 * A user-story requirement (Kiro "### Requirement N", a BMAD epic story): the story text is the
 * normative text; each acceptance criterion a scenario, split when it is EARS- or
 * Given/When/Then-shaped; whatever else the criteria heading holds, and every other child
 * heading, a note in source order.
 */
export function storyRequirement(file: MdFile, node: MdNode, number: string | null): Block {
  const heading = titleOf(node);
  const line = (node.heading?.index ?? 0) + 1;
  let criteria = node.children.find((c) => /acceptance criteria/i.test(titleOf(c)));
  const code: CodeSpan[] = [];
  // BMAD v6 epics write the criteria under a bold "**Acceptance Criteria:**" line, not a heading.
  const label = criteria ? -1 : criteriaLabelLine(file, node.contentStart, node.contentEnd);
  let shall = textOf(file, node.contentStart, label >= 0 ? label : node.contentEnd, 0, code);
  if (label >= 0) criteria = { heading: null, contentStart: label + 1, contentEnd: node.contentEnd, end: node.contentEnd, children: [] };
  const read = criteria ? criteriaOf(file, criteria, number, code) : { scenarios: [], notes: [] };
  const notes: Note[] = [...read.notes];
  for (const child of node.children) {
    if (child === criteria) continue;
    const note = textOf(file, child.heading?.index ?? child.contentStart, child.end, 0, code);
    if (note !== '') notes.push({ line: child.heading?.index ?? child.contentStart, text: note });
  }
  if (shall === '') {
    if (read.scenarios.length === 0) throw new SpecParseError('spec-requirement-text', file.path, line, `requirement "${heading}" has no story or normative text`);
    shall = LABELS.noRequirementText;
  }
  return {
    kind: 'requirement',
    title: heading,
    shall,
    sourcePath: file.path,
    sourceLine: line,
    candidate: heading,
    delta: null,
    scenarios: read.scenarios,
    notes: notes.sort(byLine).map((n) => n.text),
    ...withCode(code),
  };
}

/** A criterion written as a line of its own in a paragraph: "1: …", "1.7.2: …", "AC3: …". */
const CRITERION_LINE = /^\s*(?:\*\*)?(?:AC[\s-]?)?(\d+(?:\.\d+)*)(?:\*\*)?\s*:(?:\*\*)?\s+(.*\S)\s*$/;

/**
 * True when a list is the Given/When/Then clauses of one criterion written as bullets: every item
 * opens with a clause keyword, one of them with Then, and none is a whole EARS criterion by itself.
 */
function clauseList(items: ReadonlyArray<{ item: ListItem }>): boolean {
  if (items.length < 2 || !items.every(({ item }) => GHERKIN_LINE.test(item.first))) return false;
  if (!items.some(({ item }) => /^then$/i.test(item.first.match(GHERKIN_LINE)?.[1] ?? ''))) return false;
  return !items.some(({ item }) => splitEars(item.first) !== null);
}

/**
 * The acceptance criteria under a heading, losing nothing: each top-level list item (its check box
 * kept as written), each numbered criterion line and each subheading with no criteria of its own
 * is one scenario; a list whose items are the Given/When/Then clauses of one criterion is one; a
 * subheading that groups criteria, and any other text, is a note at its line. `code` receives the
 * code blocks the notes label (a scenario keeps its own).
 */
export function criteriaOf(file: MdFile, node: MdNode, prefix: string | null, code: CodeSpan[]): { scenarios: ScenarioBlock[]; notes: Note[] } {
  const scenarios: ScenarioBlock[] = [];
  const notes: Note[] = [];
  let count = 0;
  const name = (own: string | null) => criterionLabel(prefix ? `${prefix}.${own ?? count}` : (own ?? String(count)));
  const push = (label: string, text: string, own: CodeSpan[] = []) => {
    const { condition, response } = splitCriterion(text);
    scenarios.push({ name: label, text, condition, response, ...withCode(own) });
  };
  const note = (start: number, end: number) => {
    const text = textOf(file, start, end, 0, code);
    if (text !== '') notes.push({ line: start, text });
  };
  const hasCriteria = (n: MdNode): boolean =>
    blocksOf(file, n.contentStart, n.contentEnd).some((b) => (b.kind === 'list' && !clauseList(topLevel(b.items))) || (b.kind === 'para' && rangeHasCriterionLine(file, b.start, b.end))) ||
    n.children.some(hasCriteria);

  const readRange = (start: number, end: number) => {
    for (const block of blocksOf(file, start, end)) {
      if (block.kind === 'para') {
        // A paragraph of Given/When/Then lines is one criterion.
        if (!rangeHasCriterionLine(file, block.start, block.end)) {
          const own: CodeSpan[] = [];
          const text = textOf(file, block.start, block.end, 0, own);
          if (splitGherkin(text)) {
            count++;
            push(name(null), text, own);
            continue;
          }
        }
        // BMAD writes criteria as "1: …" lines, which are not a Markdown list; other lines are notes.
        let plain = block.start;
        for (let i = block.start; i < block.end; i++) {
          const numbered = (file.lines[i] as string).match(CRITERION_LINE);
          if (!numbered) continue;
          note(plain, i);
          plain = i + 1;
          count++;
          push(name(numbered[1] as string), numbered[2] as string);
        }
        note(plain, block.end);
        continue;
      }
      if (block.kind === 'fence') {
        note(block.start, block.end);
        continue;
      }
      const items = topLevel(block.items);
      if (clauseList(items)) {
        // One criterion per Given/When … Then run: "1. Given … 2. When … 3. Then … 4. And …"; a Given or When after a Then opens the next.
        const groups: Array<Array<{ item: ListItem; end: number }>> = [];
        for (const entry of items) {
          const keyword = (entry.item.first.match(GHERKIN_LINE)?.[1] ?? '').toUpperCase();
          const current = groups[groups.length - 1];
          const thenSeen = current?.some((e) => (e.item.first.match(GHERKIN_LINE)?.[1] ?? '').toUpperCase() === 'THEN') ?? false;
          if (!current || ((keyword === 'GIVEN' || keyword === 'WHEN') && thenSeen)) groups.push([entry]);
          else current.push(entry);
        }
        for (const group of groups) {
          const own: CodeSpan[] = [];
          count++;
          push(name(null), textOf(file, (group[0] as { item: ListItem }).item.start, (group[group.length - 1] as { end: number }).end, 0, own), own);
        }
        continue;
      }
      for (const { item, end: itemEnd } of items) {
        const own: CodeSpan[] = [];
        const text = rowText(file, item, itemEnd, own);
        if (text === '' && !item.box) continue;
        count++;
        // A criterion's check box stays as written (an in-progress mark is already at the head of its text).
        push(name(item.number), item.box && /^\[[ xX]\]$/.test(item.box) ? `${item.box} ${text}`.trimEnd() : text, own);
      }
    }
  };
  const readNode = (n: MdNode) => {
    readRange(n.contentStart, n.contentEnd);
    for (const child of n.children) {
      const at = child.heading?.index ?? child.contentStart;
      if (hasCriteria(child)) {
        // A heading that groups criteria is a note; its criteria are scenarios.
        note(at, at + 1);
        readNode(child);
        continue;
      }
      // A heading with no criteria of its own is one criterion, named by its heading.
      const own: CodeSpan[] = [];
      const text = textOf(file, child.contentStart, child.end, 0, own);
      count++;
      push(titleOf(child) || name(null), text || LABELS.emptyHeading, own);
    }
  };
  readNode(node);
  return { scenarios, notes };
}

/** The 0-based line of a "**Acceptance Criteria:**" label paragraph in a range, or -1. */
function criteriaLabelLine(file: MdFile, start: number, end: number): number {
  for (let i = start; i < end; i++) {
    if (!file.fenced[i] && /^\s*\*\*Acceptance Criteria:?\*\*:?\s*$/i.test(file.lines[i] as string)) return i;
  }
  return -1;
}

function rangeHasCriterionLine(file: MdFile, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (CRITERION_LINE.test(file.lines[i] as string)) return true;
  return false;
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
 * One decision under a Decisions heading, as a subheading: its first unlabelled paragraph (or a
 * "Decision:" paragraph), written before any rationale or alternatives, states it; a
 * "Rationale:"/"Why:" paragraph gives the stated rationale; an "Alternatives considered:"
 * paragraph or the list after it the alternatives. Every other block under the heading (a further
 * paragraph, a list, a code block) stays, in source order, as a row after the decision, so the
 * decision element takes nothing away from the text. A subheading whose first words are not a
 * statement (code first, a label first) is its own section.
 */
export function subheadingDecision(r: FileRenderer, node: MdNode): Block {
  const file = r.file;
  const blocks = blocksOf(file, node.contentStart, node.contentEnd);
  let statement: { text: string; start: number; end: number } | null = null;
  let rationale: string | null = null;
  const alternatives: string[] = [];
  const code: CodeSpan[] = [];
  /** Blocks the decision's fields do not carry: rows after the decision, in source order. */
  const rest: Block[] = [];
  let labelled = false;
  let unstated = false;
  let expectAlternatives = false;
  for (const block of blocks) {
    if (block.kind === 'list') {
      if (expectAlternatives) alternatives.push(...topItems(file, block.items, code));
      else rest.push(...listRows(r, block.items, 'plain'));
      expectAlternatives = false;
      continue;
    }
    if (block.kind === 'fence') {
      if (!statement) unstated = true;
      rest.push({ kind: 'code', span: fenceSpan(file, file.fences.find((f) => f.start === block.start) ?? { start: block.start, end: block.end - 1 }) });
      expectAlternatives = false;
      continue;
    }
    const own: CodeSpan[] = [];
    const text = blockText(file, block, own);
    if (RATIONALE_LABEL.test(text) && rationale === null) {
      rationale = text.replace(RATIONALE_LABEL, '').trim() || null;
      code.push(...own);
      labelled = true;
      expectAlternatives = false;
    } else if (ALTERNATIVES_LABEL.test(text)) {
      const after = text.replace(ALTERNATIVES_LABEL, '').trim();
      if (after !== '') alternatives.push(after);
      code.push(...own);
      labelled = true;
      expectAlternatives = after === '';
    } else if (!statement && !labelled && !unstated) {
      const stated = text.replace(DECISION_LABEL, '').trim();
      if (stated !== '') statement = { text: stated, start: block.start, end: block.end };
      code.push(...own);
      expectAlternatives = false;
    } else {
      rest.push(prose(text, false, own));
      expectAlternatives = false;
    }
  }
  const fallback = [genericSection(r, node, titleOf(node))];
  if (!statement || node.children.length > 0) return fallback[0] as Block;
  const data = decisionData(titleOf(node), statement.text, rationale, alternatives, file.path, statement.start, statement.end, code);
  return { kind: 'decision', decision: data, preferred: [{ kind: 'decision-slot' }, ...rest], fallback };
}

/**
 * "- Decision: …" / "- Rationale: …" / "- Alternatives considered: …" items under a Decisions
 * heading (the OpenSpec design.md template). Any other item of a group (a trade-off, a note) stays
 * as a row after its decision.
 */
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
    const rest: Block[] = [];
    const code: CodeSpan[] = [...head.code];
    for (const part of group.slice(1)) {
      if (RATIONALE_LABEL.test(part.text) && rationale === null) {
        rationale = part.text.replace(RATIONALE_LABEL, '').trim() || null;
        code.push(...part.code);
      } else if (ALTERNATIVES_LABEL.test(part.text)) {
        const after = part.text.replace(ALTERNATIVES_LABEL, '').trim();
        if (after !== '')
          alternatives.push(
            ...after
              .split('\n')
              .map((s) => s.replace(/^\s*[-*+]\s+/, '').trim())
              .filter((s) => s !== ''),
          );
        code.push(...part.code);
      } else rest.push(prose(part.text, false, part.code));
    }
    const fallback: Block[] = group.map((part) => prose(part.text, false, part.code));
    const data = decisionData(statement.split('\n')[0] ?? statement, statement, rationale, alternatives, file.path, head.item.start, ownEnd(file, head.item), code);
    return { kind: 'decision', decision: data, preferred: [{ kind: 'decision-slot' }, ...rest], fallback } satisfies Block;
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

export function decisionData(
  title: string,
  statement: string,
  rationale: string | null,
  alternatives: string[],
  sourcePath: string,
  start0: number,
  end0: number,
  code: CodeSpan[] = [],
): DecisionData {
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
