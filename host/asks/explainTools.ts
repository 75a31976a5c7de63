import { z } from 'zod';
import { ASK_TEXT_MAX_BYTES, utf8Length, type QuoteAnchor } from '../../protocol/asks';
import { CitationSide, LENS_TITLES, PROSE_FIELDS, REFERENCE_FIELDS, RESULT_MAX_BYTES, elementField, elementStrings, type BoardElement, type Lens } from '../../protocol/board';
import type { Patchset } from '../../protocol/patchset';
import { EXCERPT_CONTEXT_LINES } from '../../protocol/review';
import { buildExcerpts } from '../generation/excerpts';
import { PROMPT_FILES } from '../../prompts/generated';
import { EXPLAIN_PROMPT } from '../../prompts/manifest';
import { findProseCitations, type PathKnowledge } from '../board/prose';
import { checkToolCall } from '../pipeline/oneTurn';
import { renderInputSchema, type JsonSchemaObject } from '../board/tools';

/**
 * PURE. The explainer's side of rennet/asks/explain: its prompt (static per lens) and its four
 * read-only tools over one board element, its board and the captured patchset. host/asks/explain.ts
 * serves them to a harness (in-process and over the seat MCP server) and appends the answer.
 *
 * The quote, the board and the change reach the model only as tool results, never in the prompt.
 * Every result is bounded to RESULT_MAX_BYTES (the ceiling every seat tool result has) with a
 * marker saying what was cut.
 */

export const READ_QUOTE = 'read_quote';
export const READ_ELEMENT = 'read_element';
export const READ_EXCERPT = 'read_excerpt';
export const ANSWER = 'answer';

/** Bytes kept free in a thread message for the provenance line appended to the answer. */
export const PROVENANCE_RESERVE_BYTES = 1024;
/** Largest answer the `answer` tool takes: a thread message, less room for the provenance line. */
export const ANSWER_MAX_BYTES = ASK_TEXT_MAX_BYTES - PROVENANCE_RESERVE_BYTES;
/** Characters of one diff line an excerpt shows. */
const EXCERPT_LINE_MAX_CHARS = 400;
/** Lines one read_excerpt call may ask for (the result is bounded in bytes as well). */
export const EXCERPT_RANGE_MAX_LINES = 400;

// ─── The prompt ──────────────────────────────────────────────────────────────────────────────

/**
 * The explainer's whole first-turn prompt for a lens: a header the harness servers can route by,
 * then prompts/explain.md. Nothing derived from the change, the board or the quote.
 */
export function explainPrompt(lens: Lens): string {
  return `# Rennet: ${LENS_TITLES[lens]} (explain)\n\n${PROMPT_FILES[EXPLAIN_PROMPT.file].replace(/\s+$/, '')}\n`;
}

/** The line that ends an agent answer: which harness and model wrote it. */
export function provenanceLine(harness: string, model: string | null): string {
  return `— explained by ${harness} · ${model ?? 'model not reported'}`;
}

// ─── The tool surface ────────────────────────────────────────────────────────────────────────

export interface ExplainSubject {
  anchor: QuoteAnchor;
  /** Every element of the anchor lens's board in that generation, by id. */
  elements: ReadonlyMap<string, BoardElement>;
  /** The board's title, for orientation. */
  boardTitle: string;
  /** The generation's captured patchset (the excerpts' source). */
  patchset: Patchset;
  /** Which changed paths exist, for the answer's citation check (a CitationIndex is one). */
  paths: PathKnowledge;
}

export interface ExplainTool {
  name: string;
  description: string;
  inputSchema: JsonSchemaObject;
  zod: z.ZodObject;
}

export interface ExplainSurface {
  readonly tools: readonly ExplainTool[];
  /** Synchronous, as the seat MCP server calls it. */
  call(name: string, input: unknown): { text: string; isError: boolean };
  /** The answer handed in with `answer`, once; null until then. */
  readonly answer: string | null;
  stats(): { calls: number; refusals: number };
}

const ANSWER_DESCRIPTION =
  `Hand in your explanation of the quoted passage, as Markdown (at most ${ANSWER_MAX_BYTES} bytes). ` +
  'It must cite the code it rests on as repo-relative path:line or path:start-end. Call it once, at the end; a second call is refused and the first answer stands.';

const TOOLS: readonly ExplainTool[] = [
  explainTool(
    READ_QUOTE,
    'Read the passage the reviewer asked about: the quoted text, the element it sits in (id, kind, its own text as Markdown, its parent) and the code that element cites. Call it first.',
    z.strictObject({}),
  ),
  explainTool(
    READ_ELEMENT,
    'Read any element of the same document by id, as JSON, with the ids and kinds of its children.',
    z.strictObject({ id: z.string().min(1).describe('The element id, such as e7.') }),
  ),
  explainTool(
    READ_EXCERPT,
    `Read the captured diff lines of one changed file over a line range of one side (with ${EXCERPT_CONTEXT_LINES} lines of captured context either side): old and new line numbers, + for added, - for deleted. At most ${EXCERPT_RANGE_MAX_LINES} lines per call.`,
    z.strictObject({
      path: z.string().min(1).describe('Repo-relative path of a changed file.'),
      side: CitationSide.describe('head for added or kept lines, base for deleted lines.'),
      start_line: z.number().int().positive(),
      end_line: z.number().int().positive(),
    }),
  ),
  explainTool(ANSWER, ANSWER_DESCRIPTION, z.strictObject({ markdown: z.string().min(1).describe('The explanation, in Markdown, citing path:line.') })),
];

function explainTool(name: string, description: string, zod: z.ZodObject): ExplainTool {
  return { name, description, inputSchema: renderInputSchema(zod), zod };
}

export function explainSurface(subject: ExplainSubject): ExplainSurface {
  let answer: string | null = null;
  let calls = 0;
  let refusals = 0;
  const refuse = (text: string) => {
    refusals++;
    return { text: bounded(text), isError: true };
  };
  return {
    tools: TOOLS,
    get answer() {
      return answer;
    },
    stats: () => ({ calls, refusals }),
    call(name, input) {
      calls++;
      const checked = checkToolCall(TOOLS, name, input, 'nothing was read');
      if (!checked.ok) return refuse(checked.text);
      const value = checked.value;
      switch (name) {
        case READ_QUOTE:
          return { text: bounded(quoteText(subject), `${READ_ELEMENT} ${subject.anchor.elementId} gives the element whole`), isError: false };
        case READ_ELEMENT: {
          const id = String(value.id);
          const element = subject.elements.get(id);
          if (!element) return refuse(`There is no element ${id.slice(0, 60)} in this document; the quoted passage sits in ${subject.anchor.elementId} (${READ_QUOTE}).`);
          return { text: bounded(elementJson(element, subject.elements)), isError: false };
        }
        case READ_EXCERPT: {
          const start = Number(value.start_line);
          const end = Number(value.end_line);
          if (end < start) return refuse('end_line is before start_line; nothing was read.');
          if (end - start + 1 > EXCERPT_RANGE_MAX_LINES) return refuse(`That range is ${end - start + 1} lines; ask for at most ${EXCERPT_RANGE_MAX_LINES} per call.`);
          const excerpt = excerptText(subject.patchset, String(value.path), value.side as CitationSide, start, end);
          return excerpt.ok ? { text: bounded(excerpt.text, 'ask for a narrower range'), isError: false } : refuse(excerpt.text);
        }
        case ANSWER: {
          if (answer !== null) return refuse('An answer was already handed in; it stands. End your turn now.');
          const checked = checkAnswer(String(value.markdown), subject.paths);
          if (!checked.ok) return refuse(checked.message);
          answer = checked.markdown;
          return { text: `Your explanation is recorded (${utf8Length(answer)} bytes). End your turn now, without further tool calls.`, isError: false };
        }
        default:
          return refuse(`There is no tool named "${name}".`);
      }
    },
  };
}

// ─── The answer's check ──────────────────────────────────────────────────────────────────────

export type AnswerCheck = { ok: true; markdown: string } | { ok: false; message: string };

/** An answer is non-blank, within ANSWER_MAX_BYTES, and cites code only as repo-relative path:line — at least once. */
export function checkAnswer(markdown: string, paths: PathKnowledge): AnswerCheck {
  const text = markdown.trim();
  if (text.length === 0) return { ok: false, message: 'markdown is blank; nothing was recorded.' };
  const bytes = utf8Length(text);
  if (bytes > ANSWER_MAX_BYTES) return { ok: false, message: `markdown is ${bytes} bytes, over the ${ANSWER_MAX_BYTES}-byte ceiling; shorten it. Nothing was recorded.` };
  const citations = findProseCitations(text, paths);
  const bad = citations.find((c) => c.problem !== null);
  if (bad)
    return { ok: false, message: `The citation ${bad.raw.slice(0, 120)} is not a repo-relative path:line (${bad.problem}); write ${bad.advice ?? 'path/from/root.ext:LINE'}. Nothing was recorded.` };
  if (citations.length === 0) {
    return {
      ok: false,
      message: 'The explanation cites no code. Ground it in the lines it rests on, cited as path:line or path:start-end (e.g. src/app.ts:12-20), outside code spans. Nothing was recorded.',
    };
  }
  return { ok: true, markdown: text };
}

// ─── read_quote and read_element ─────────────────────────────────────────────────────────────

function quoteText(subject: ExplainSubject): string {
  const { anchor, elements } = subject;
  const element = elements.get(anchor.elementId);
  const lines = [`Document: ${LENS_TITLES[anchor.lens]} — ${subject.boardTitle || '(untitled)'}`, '', 'The passage the reviewer selected:', '<<<', anchor.quote, '>>>'];
  if (!element) {
    lines.push('', `The element ${anchor.elementId} it was quoted from is not on this document.`);
    return lines.join('\n');
  }
  const parent = element.parent === null ? null : elements.get(element.parent);
  lines.push(
    '',
    `It sits in element ${element.id} (${element.kind})${parent ? `, under ${parent.id} (${parent.kind}${titleOf(parent) ? `: ${titleOf(parent)}` : ''})` : ', at the top level'}.`,
    '',
    "The element's text:",
    '<<<',
    elementMarkdown(element) || '(no prose)',
    '>>>',
  );
  const cited = citedCode(element, elements);
  lines.push('', cited.length === 0 ? 'The element cites no code itself; its parent or siblings may (read_element).' : 'The code it cites (read the lines with read_excerpt):');
  for (const ref of cited) lines.push(`- ${ref}`);
  return lines.join('\n');
}

function elementJson(element: BoardElement, elements: ReadonlyMap<string, BoardElement>): string {
  const children = [...elements.values()].filter((e) => e.parent === element.id).map((e) => ({ id: e.id, kind: e.kind }));
  return JSON.stringify({ element, children });
}

/** An element's own reader-facing text as Markdown: its title or name as a heading, then its prose fields. */
export function elementMarkdown(element: BoardElement): string {
  const fields = PROSE_FIELDS[element.kind] ?? [];
  const out: string[] = [];
  for (const field of fields) {
    const value = elementField(element, field);
    if (field === 'title' || field === 'name') {
      if (typeof value === 'string' && value.trim()) out.push(`### ${value.trim()}`);
    } else if (typeof value === 'string' && value.trim()) {
      out.push(value.trim());
    } else if (Array.isArray(value) && value.length > 0) {
      out.push(value.map((item) => `- ${String(item)}`).join('\n'));
    }
  }
  if (element.kind === 'finding') out.splice(1, 0, `Severity: ${element.severity}; category: ${element.category}.`);
  return out.join('\n\n');
}

function titleOf(element: BoardElement): string {
  const title = elementField(element, 'title') ?? elementField(element, 'name');
  return typeof title === 'string' ? title.trim().slice(0, 120) : '';
}

/** The code an element cites: itself (a code_ref), its reference fields, and its code_ref children. */
function citedCode(element: BoardElement, elements: ReadonlyMap<string, BoardElement>): string[] {
  const ids: string[] = [];
  if (element.kind === 'code_ref' || element.kind === 'noise_member') ids.push(element.id);
  for (const field of Object.keys(REFERENCE_FIELDS[element.kind] ?? {})) for (const id of elementStrings(element, field)) if (!ids.includes(id)) ids.push(id);
  for (const child of elements.values()) if (child.parent === element.id && child.kind === 'code_ref' && !ids.includes(child.id)) ids.push(child.id);
  return ids.flatMap((id) => {
    const ref = elements.get(id);
    if (!ref || (ref.kind !== 'code_ref' && ref.kind !== 'noise_member')) return [];
    const range = ref.start_line === ref.end_line ? `line ${ref.start_line}` : `lines ${ref.start_line}-${ref.end_line}`;
    const label = ref.kind === 'code_ref' && ref.label ? ` (${ref.label})` : '';
    return [`${ref.id}: ${ref.path}, ${ref.side} side, ${range}${label}`];
  });
}

// ─── read_excerpt ────────────────────────────────────────────────────────────────────────────

/**
 * The captured diff lines of `path` on `side` over start..end — the same excerpt a code card
 * shows (host/generation/excerpts.ts) — as text: old line, new line, +/- mark and the line; or why
 * there are none (not changed, binary, submodule, in a truncated file's uncaptured tail).
 */
export function excerptText(patchset: Patchset, path: string, side: CitationSide, start: number, end: number): { ok: boolean; text: string } {
  const excerpt = Object.values(buildExcerpts(patchset, [{ path, side, startLine: start, endLine: end }]))[0];
  if (!excerpt) return { ok: false, text: `${path.slice(0, 200)}: no excerpt could be read.` };
  const asked = start === end ? `line ${start}` : `lines ${start}-${end}`;
  if (excerpt.lines.length === 0) {
    const changed = patchset.files.slice(0, 20).map((f) => f.path);
    const more = patchset.files.length > changed.length ? ` and ${patchset.files.length - changed.length} more` : '';
    return { ok: false, text: `${excerpt.note ?? `No captured line of ${path} (${side} side) lies at ${asked}.`} Changed paths: ${changed.join(', ')}${more}.` };
  }
  const out: string[] = [`${path} (${side} side), ${asked}; columns: old line, new line, then the line with its +/- mark.`];
  for (const line of excerpt.lines) {
    const mark = line.kind === 'add' ? '+' : line.kind === 'del' ? '-' : ' ';
    const text = line.text.length > EXCERPT_LINE_MAX_CHARS ? `${line.text.slice(0, EXCERPT_LINE_MAX_CHARS)}…` : line.text;
    out.push(`${pad(line.oldLine)} ${pad(line.newLine)} ${mark}${text}`);
  }
  if (excerpt.note) out.push(excerpt.note);
  return { ok: true, text: out.join('\n') };
}

function pad(n: number | null): string {
  return (n === null ? '' : String(n)).padStart(5, ' ');
}

// ─── Bounds ──────────────────────────────────────────────────────────────────────────────────

/** `text` within RESULT_MAX_BYTES, cut on a character boundary with a marker saying so. */
export function bounded(text: string, hint?: string): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= RESULT_MAX_BYTES) return text;
  const marker = `\n…(cut: the result was ${bytes.length} bytes, over the ${RESULT_MAX_BYTES}-byte ceiling${hint ? `; ${hint}` : ''})`;
  let endAt = RESULT_MAX_BYTES - Buffer.byteLength(marker, 'utf8');
  while (endAt > 0 && ((bytes[endAt] ?? 0) & 0xc0) === 0x80) endAt--;
  return `${bytes.subarray(0, endAt).toString('utf8')}${marker}`;
}
