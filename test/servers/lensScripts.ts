import { textOf, type ServerScript, type Step } from './common';

/**
 * Routing and script building for scripted servers that answer Rennet's real lens seats (the
 * production prompts, not a `Seat:` marker): each request is routed by the prompt's own header
 * `# Rennet: <Lens> (<writer|review|compiler|explain|pull request>)` — `explain` is the one-turn
 * explainer of rennet/asks/explain (host/asks/explainTools.ts), routed as `<lens>:explainer`;
 * `pull request` the Design lens's one-turn pass over an own-branch request's title and
 * description (host/exits/prPolish.ts), routed as `design:opener`. A round's classification turn
 * (host/rounds/reportSeat.ts), whose prompt opens `# Rennet: round report`, is routed as
 * `round:report`.
 *
 * Positional scripts answer a seat's request by WHERE it is in its conversation (how many assistant
 * messages the client resends), not by how many requests the seat made before. A seat's step n is
 * then the same for every conversation of that seat, so several generations, and concurrent runs of
 * the same seat, each play the whole script (a review that drafts when it opens and again on
 * "Draft Boards" needs exactly that).
 */

/** One scripted tool call, as the pipeline fixtures (test/unit/pipeline/fixtures.ts) write turns. */
export interface ScriptedCall {
  tool: string;
  input?: Record<string, unknown>;
  as?: string;
}

const ROLE_OF_LABEL = { writer: 'drafter', review: 'reviewer', compiler: 'compiler', explain: 'explainer', 'pull request': 'opener' } as const;
const HEADER = /# Rennet: (Design|Sequence|Decisions|Flagged|Noise) \((writer|review|compiler|explain|pull request)\)/;

/** The round report seat's prompt header (host/pipeline/prompts.ts `roundReportPrompt`). */
const ROUND_REPORT_HEADER = /# Rennet: round report\b/;
/** The seat key a round report request is routed to. */
export const ROUND_REPORT_SEAT = 'round:report';

/**
 * `lens:role` (e.g. `flagged:compiler`) from the production prompt header in a request, or
 * `round:report` for a round's classification turn; else null. When a request carries both kinds
 * of header (a resent tool result may quote one), the one that comes first — the prompt's — wins.
 */
export function seatOfPromptHeader(raw: string): string | null {
  const match = HEADER.exec(raw);
  const report = ROUND_REPORT_HEADER.exec(raw);
  if (report && (!match || report.index < match.index)) return ROUND_REPORT_SEAT;
  if (!match) return null;
  return `${(match[1] as string).toLowerCase()}:${ROLE_OF_LABEL[match[2] as keyof typeof ROLE_OF_LABEL]}`;
}

/** A turn's calls as server steps: one call per model reply, then a closing text. */
export function stepsOfCalls(calls: readonly ScriptedCall[], closing = 'Done.'): Step[] {
  return [...calls.map((c): Step => ({ toolCalls: [{ name: c.tool, input: c.input ?? {}, ...(c.as ? { as: c.as } : {}) }] })), { text: closing }];
}

/** How many assistant messages the request resends (Chat Completions and Messages both use `messages`). */
export function assistantTurns(body: Record<string, unknown>): number {
  const messages = body['messages'];
  if (!Array.isArray(messages)) return 0;
  return messages.filter((m) => m !== null && typeof m === 'object' && (m as Record<string, unknown>)['role'] === 'assistant').length;
}

/** The positional key of a request: `lens:role@n`, n = assistant messages so far. */
export function positionalKey(seat: string, position: number): string {
  return `${seat}@${position}`;
}

/**
 * A positional script: every seat's step n under `seat@n`, repeated `copies` times (each request
 * consumes one copy, so `copies` bounds how many conversations of a seat the script can answer).
 */
export function positionalScript(seats: Readonly<Record<string, readonly Step[]>>, copies = 16): ServerScript {
  const out: Record<string, Step[]> = {};
  for (const [seat, steps] of Object.entries(seats)) {
    steps.forEach((step, n) => {
      out[positionalKey(seat, n)] = Array.from({ length: copies }, () => step);
    });
  }
  return { seats: out };
}

/**
 * The server option `seatOf` for a positional script. A request that offers no tools (a side
 * request), or whose prompt has no lens header, consumes nothing. `onRoute` sees every decision.
 */
export function positionalSeatOf(onRoute?: (key: string | null, raw: string) => void): (body: Record<string, unknown>, raw: string) => string | null {
  return (body, raw) => {
    const tools = body['tools'];
    const seat = Array.isArray(tools) && tools.length > 0 ? seatOfPromptHeader(raw) : null;
    const key = seat === null ? null : positionalKey(seat, assistantTurns(body));
    onRoute?.(key, raw);
    return key;
  };
}

/**
 * A request's text split by who wrote it: `prompt` is what the client itself says (system text and
 * user text, Chat Completions or Messages), `toolResults` what it resends as tool results. A test
 * that must keep some text out of the prompt (an explainer's quote) reads the first.
 */
export function requestTexts(body: Record<string, unknown> | null): { prompt: string[]; toolResults: string[] } {
  const prompt: string[] = [];
  const toolResults: string[] = [];
  if (body === null) return { prompt, toolResults };
  // Messages API: the system prompt is a top-level field.
  if (body['system'] !== undefined) prompt.push(textOf(body['system']));
  const messages = Array.isArray(body['messages']) ? (body['messages'] as unknown[]) : [];
  for (const m of messages) {
    if (m === null || typeof m !== 'object') continue;
    const message = m as Record<string, unknown>;
    const role = message['role'];
    const content = message['content'];
    if (role === 'tool') toolResults.push(textOf(content));
    else if (role === 'system' || role === 'user') {
      if (!Array.isArray(content)) {
        prompt.push(textOf(content));
        continue;
      }
      for (const block of content as unknown[]) {
        const b = block !== null && typeof block === 'object' ? (block as Record<string, unknown>) : {};
        (b['type'] === 'tool_result' ? toolResults : prompt).push(textOf(b['type'] === 'tool_result' ? b['content'] : block));
      }
    }
  }
  return { prompt, toolResults };
}
