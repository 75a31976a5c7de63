import type { Lens } from '../protocol/board';
import type { PromptFileName } from './generated';

/**
 * The prompt manifest: for every seat (lens + role), which prompt file it reads, which shared
 * partials follow it and in what order, and the pinned UTF-8 byte budget of the assembled prompt.
 * host/pipeline/prompts.ts expands it; test/unit/prompts/ holds every assembled prompt to its budget.
 *
 * A budget is the size measured when it was pinned (with a `s-` + 16-hex session id in the
 * header) plus ten percent. A prompt that grows on
 * purpose raises its budget in the same change and says so; one that grows by accident fails the
 * tripwire test. Nothing here, and nothing a prompt file says, is derived from a change.
 */

/** Bump when a prompt's meaning changes, so recorded seat runs can say which prompts they ran. */
export const PROMPTS_VERSION = 6;

/** Seat roles, as host/pipeline/ports.ts's SeatRole names them. */
export type PromptSeatRole = 'drafter' | 'reviewer' | 'compiler';

export const PARTIALS = ['investigation', 'reader-voice', 'tool-guidance'] as const;
export type PromptPartial = (typeof PARTIALS)[number];

export const PARTIAL_FILES: Readonly<Record<PromptPartial, PromptFileName>> = {
  investigation: 'partials/investigation.md',
  'reader-voice': 'partials/reader-voice.md',
  'tool-guidance': 'partials/tool-guidance.md',
};

export interface SeatPromptEntry {
  readonly lens: Lens;
  readonly role: PromptSeatRole;
  /** The seat's own instructions; assembled first, after the fixed header. */
  readonly file: PromptFileName;
  /** Shared partials appended after the file, in this order. */
  readonly partials: readonly PromptPartial[];
  /** Ceiling on the assembled prompt's UTF-8 bytes (header included). */
  readonly budgetBytes: number;
  /**
   * Ceiling on the UTF-8 bytes of the tool schemas the seat is offered (the read tools and its own,
   * as a provider receives them: name, description, input schema). They ride with every request.
   */
  readonly toolsBudgetBytes: number;
}

/** Prompts that are not a lens seat's first turn: read by other jobs. */
export const DOCUMENT_PROMPT_IDS = ['reviewer-voice', 'round-report', 'round-worker', 'prior-closure', 'eval-judge'] as const;
export type DocumentPromptId = (typeof DOCUMENT_PROMPT_IDS)[number];

export interface DocumentPromptEntry {
  readonly id: DocumentPromptId;
  readonly file: PromptFileName;
  readonly partials: readonly PromptPartial[];
  readonly budgetBytes: number;
  /** For a prompt read by a seat with tools (the round report): the ceiling on its offered tool schemas, as for a lens seat. */
  readonly toolsBudgetBytes?: number;
}

const ALL: readonly PromptPartial[] = ['investigation', 'reader-voice', 'tool-guidance'];

/** One entry per seat a generation can run. The Flagged lens has review seats and one compiler. */
export const SEAT_PROMPTS: readonly SeatPromptEntry[] = [
  { lens: 'design', role: 'drafter', file: 'design.md', partials: ALL, budgetBytes: 15_261 /* measured 13,873 */, toolsBudgetBytes: 22_033 /* measured 20,030 */ },
  { lens: 'sequence', role: 'drafter', file: 'sequence.md', partials: ALL, budgetBytes: 11_708 /* measured 10,643 */, toolsBudgetBytes: 13_538 /* measured 12,307 */ },
  { lens: 'decisions', role: 'drafter', file: 'decisions.md', partials: ALL, budgetBytes: 11_489 /* measured 10,444 */, toolsBudgetBytes: 14_960 /* measured 13,600 */ },
  // A review seat writes a findings file, not a board: no board-tool guidance.
  { lens: 'flagged', role: 'reviewer', file: 'flagged-review.md', partials: ['investigation', 'reader-voice'], budgetBytes: 10_173 /* measured 9,248 */, toolsBudgetBytes: 3_853 /* measured 3,503 */ },
  { lens: 'flagged', role: 'compiler', file: 'flagged-compile.md', partials: ALL, budgetBytes: 12_871 /* measured 11,700 */, toolsBudgetBytes: 16_162 /* measured 14,693 */ },
  { lens: 'noise', role: 'drafter', file: 'noise.md', partials: ALL, budgetBytes: 11_774 /* measured 10,703 */, toolsBudgetBytes: 14_237 /* measured 12,943 */ },
];

export const DOCUMENT_PROMPTS: readonly DocumentPromptEntry[] = [
  // Copied verbatim into the context directory for the job that writes review text; no header.
  { id: 'reviewer-voice', file: 'reviewer-voice.md', partials: [], budgetBytes: 2_010 /* measured 1,827 */ },
  // The landed-round classifier: one structured turn over evidence.json, with the read tools over the successor.
  {
    id: 'round-report',
    file: 'round-report.md',
    partials: [],
    budgetBytes: 3_985 /* measured 3,622: it teaches read_evidence, submit_report and the read tools */,
    toolsBudgetBytes: 5_331 /* measured 4,846 */,
  },
  // The coding round's worker: a header naming work-order.md, then this file (the order holds the asks).
  { id: 'round-worker', file: 'round-worker.md', partials: [], budgetBytes: 765 /* measured 695 */ },
  // The re-review's closure seat: one structured turn over the earlier review's items and the fix delta, with the read tools over the delta.
  { id: 'prior-closure', file: 'prior-closure.md', partials: [], budgetBytes: 3_262 /* measured 2,965 */, toolsBudgetBytes: 4_928 /* measured 4,480 */ },
  // `rennet eval score --judge`: one turn per catching finding, read_finding and grade_finding, with the read tools over the case's change.
  { id: 'eval-judge', file: 'eval-judge.md', partials: [], budgetBytes: 1_905 /* measured 1,732 */, toolsBudgetBytes: 4_240 /* measured 3,855 */ },
];

/**
 * The explainer's prompt (rennet/asks/explain, host/asks/explain.ts): a one-line header naming the
 * lens, `# Rennet: <Lens> (explain)`, then this file. No partials and no context directory: the
 * quote, the document and the code reach the explainer through its tools only (its own four and
 * the read tools).
 */
export interface ExplainPromptEntry {
  readonly file: PromptFileName;
  readonly budgetBytes: number;
  /** Ceiling on the seat's offered tool schemas (the read tools and its own), as for a lens seat. */
  readonly toolsBudgetBytes: number;
}

// Measured with the longest header (Decisions).
export const EXPLAIN_PROMPT: ExplainPromptEntry = { file: 'explain.md', budgetBytes: 3_517 /* measured 3,197: it teaches the read tools */, toolsBudgetBytes: 5_268 /* measured 4,789 */ };

export function seatPromptEntry(lens: Lens, role: PromptSeatRole): SeatPromptEntry | undefined {
  return SEAT_PROMPTS.find((entry) => entry.lens === lens && entry.role === role);
}

export function documentPromptEntry(id: DocumentPromptId): DocumentPromptEntry {
  const entry = DOCUMENT_PROMPTS.find((e) => e.id === id);
  if (!entry) throw new Error(`no prompt manifest entry for ${id}`);
  return entry;
}

/**
 * The pull-request opener's prompt (own-branch Open Pull Request, host/exits/prPolish.ts): the
 * header `# Rennet: Design (pull request)`, then this file. No partials, no context directory in
 * the prompt: the draft, the commits and the change reach the seat through its tools only.
 */
export const PR_OPENER_PROMPT: ExplainPromptEntry = { file: 'pr-opener.md', budgetBytes: 2_223 /* measured 2,021 */, toolsBudgetBytes: 4_317 /* measured 3,924 */ };
