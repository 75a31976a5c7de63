import { lstatSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { JsonSchemaObject } from '../board/tools';
import type { SeatTool } from './ports';

/** A tool of this surface: its schema is a JSON Schema object, as the seat MCP server lists it. */
type ReviewTool = SeatTool & { inputSchema: JsonSchemaObject };

/**
 * A Flagged review seat's tool surface: ONE tool, `submit_findings`, that writes the seat's
 * findings file (`<contextDir>/findings/<origin>.md`) and nothing else. A review seat has no
 * board, no board tools and no general write tool.
 */

export const SUBMIT_FINDINGS = 'submit_findings';
/** Findings files above this are refused (the compiler reads them whole). */
export const FINDINGS_MAX_BYTES = 512 * 1024;

const TOOL: ReviewTool = {
  name: SUBMIT_FINDINGS,
  description:
    'Submit your review: every finding you raise, as one Markdown document (for each: a title, the severity, the file and changed lines it concerns, what goes wrong and the fix). Calling it again replaces what you submitted. It returns nothing else.',
  inputSchema: {
    type: 'object',
    properties: { findings_markdown: { type: 'string', minLength: 1, description: 'The whole review, in Markdown.' } },
    required: ['findings_markdown'],
    additionalProperties: false,
  },
};

export interface ReviewSurface {
  readonly tools: readonly ReviewTool[];
  /** Synchronous, like BoardSeat.call (the seat MCP server calls it this way). */
  call(name: string, input: unknown): { text: string; isError: boolean };
  /** True once a findings file was written. */
  readonly submitted: boolean;
  stats(): { calls: number; refusals: number };
}

export function reviewSurface(file: string, displayPath: string): ReviewSurface {
  let submitted = false;
  let calls = 0;
  let refusals = 0;
  const refuse = (text: string) => {
    refusals++;
    return { text, isError: true };
  };
  return {
    tools: [TOOL],
    get submitted() {
      return submitted;
    },
    stats: () => ({ calls, refusals }),
    call(name, input) {
      calls++;
      if (name !== SUBMIT_FINDINGS) return refuse(`this seat has no tool "${name.slice(0, 60)}"; its one tool is ${SUBMIT_FINDINGS}. Nothing was written.`);
      const record = input !== null && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
      const extra = Object.keys(record).filter((key) => key !== 'findings_markdown');
      if (extra.length > 0) return refuse(`${SUBMIT_FINDINGS} has no field ${extra[0]!.slice(0, 40)}; it takes findings_markdown only. Nothing was written.`);
      const markdown = record.findings_markdown;
      if (typeof markdown !== 'string' || markdown.trim() === '') return refuse('findings_markdown is required: a non-empty Markdown string. Nothing was written.');
      const bytes = Buffer.byteLength(markdown, 'utf8');
      if (bytes > FINDINGS_MAX_BYTES) return refuse(`findings_markdown is ${bytes} bytes, over the ${FINDINGS_MAX_BYTES}-byte ceiling. Nothing was written.`);
      mkdirSync(dirname(file), { recursive: true });
      // The folder sits in the reviewed checkout: a change could plant it as a symlink to elsewhere.
      const folder = lstatSync(dirname(file));
      if (folder.isSymbolicLink() || !folder.isDirectory()) return refuse(`the findings folder ${dirname(displayPath)} is not a plain directory in the checkout; nothing was written.`);
      const temp = `${file}.tmp-${process.pid}`;
      writeFileSync(temp, markdown);
      renameSync(temp, file);
      submitted = true;
      return { text: `saved your review to ${displayPath} (${bytes} bytes).`, isError: false };
    },
  };
}
