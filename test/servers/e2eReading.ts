/**
 * The model servers of the end-to-end reading scenario (test/e2e/reading.mjs), as a process:
 *
 *   npx tsx test/servers/e2eReading.ts PLAN.json
 *
 * PLAN.json names, per lens, the ranges its seat cites (the scenario takes them from git's own
 * hunks of the fixture repository, so every citation lands on changed lines), the Flagged findings,
 * the number of Noise members, what an explainer (rennet/asks/explain) reads and answers, and
 * (optionally) what the request opener (the Design lens's pass over an own-branch pull request's
 * title and description) reads and hands in, (optionally) where a round's report seat finds the
 * classification it hands in, and (optionally) a re-review's delta generation and closure seat.
 * This file builds every lens seat's turn, every lens's explainer, the opener, the round report
 * seat and the re-review's seats from that plan (positional
 * scripts routed by the production prompt header: any number of generations replay it); the
 * process around it (e2eProcess.ts) starts a scripted OpenAI-compatible server and a scripted
 * Anthropic server on 127.0.0.1 answering them, prints ONE JSON line
 * `{"openaiBaseUrl","anthropicOrigin","model"}` on stdout, then one JSON line per model request on
 * stderr (`{server, path, seat, step, unresolved}`, and for an explainer's or the round report's
 * request also `prompt` and `toolResults`: what the client said itself and what it resent as tool
 * results), and exits when its stdin closes or on SIGTERM/SIGINT.
 */
import { readFileSync } from 'node:fs';
import { compileTurn, decisionsTurn, designTurn, noiseTurn, reviewTurn, sequenceTurn, type FindingSpec, type Region } from '../unit/pipeline/fixtures';
import type { Step } from './common';
import { runLensScriptProcess, type SeatRouter } from './e2eProcess';
import { ROUND_REPORT_SEAT, type ScriptedCall, assistantTurns, positionalKey, positionalScript, positionalSeatOf, requestTexts, stepsOfCalls } from './lensScripts';

interface PlannedRange {
  path: string;
  side: 'base' | 'head';
  start: number;
  end: number;
}

interface ReadingPlan {
  design: PlannedRange[];
  sequence: PlannedRange[];
  decisions: PlannedRange[];
  /** The compile turn anchors every finding on the first of these. */
  flagged: PlannedRange[];
  findings: FindingSpec[];
  /** What the review seat hands in (Markdown). */
  review: string;
  /** Uncited hunks the host places on the Noise board as e1…eN. */
  noiseMembers: number;
  /** Every lens's explainer: read_quote, read_excerpt over `excerpt`, then answer with `answer` (Markdown citing path:line). */
  explain: { excerpt: PlannedRange; answer: string };
  /**
   * The Design lens's pass over an own-branch request's draft (host/exits/prPolish.ts), when the
   * scenario opens one: read_draft, list_changes, read_diff of `path` (a file the change touches),
   * then set_title `title` and set_description `description`. Absent: no opener seat is scripted.
   */
  opener?: { path: string; title: string; description: string };
  /**
   * A round's report seat (host/rounds/reportSeat.ts), when the scenario dispatches one:
   * read_evidence page 1 (answered after `delayMs`, default none, so a scenario can watch the
   * round in its report phase), then submit_report with the JSON object in `file` — read when that
   * request arrives, not when the servers start, since the ask ids the report names are minted by
   * the host once the scenario has staged them. Absent: no report seat is scripted.
   */
  roundReport?: { file: string; delayMs?: number };
  /**
   * A re-review since the last review (host/rereview/), when the scenario runs one. `base` is the
   * reviewed commit: a lens seat whose list_changes answer reads "base <base>" is drafting the
   * re-review's generation over the fix delta, and plays this lens plan (citing the delta's lines)
   * instead of the request's. The closure seat (its prompt opens `# Rennet: prior items`, routed as
   * `rereview:closures`) reads page 1 of read_prior_items and the diff of `closures.path`, then hands
   * in resolved the item written on `closures.path` at `closures.line` (found among the items it
   * read, whatever its id), citing the ev- id of the text-hunk unit on that path it read, and every
   * other item it read open: an inline one with `openInline`, one of the body with `openBody`.
   */
  rereview?: RereviewPlan;
}

type LensPlan = Pick<ReadingPlan, 'design' | 'sequence' | 'decisions' | 'flagged' | 'findings' | 'review' | 'noiseMembers'>;

interface RereviewPlan extends LensPlan {
  base: string;
  closures: { path: string; line: number; resolved: string; openInline: string; openBody: string };
}

/** The re-review's closure seat (its prompt header `# Rennet: prior items`, host/pipeline/prompts.ts). */
export const CLOSURE_SEAT = 'rereview:closures';
const CLOSURE_HEADER = '# Rennet: prior items';
/** The lens seats a re-review's generation runs (not the explainers, the opener or a round's report). */
const LENS_SEAT_KEY = /^(design|sequence|decisions|flagged|noise):(drafter|reviewer|compiler)@\d+$/;

const LENSES = ['design', 'sequence', 'decisions', 'flagged', 'noise'] as const;

function regions(ranges: readonly PlannedRange[]): Region[] {
  return ranges.map((r) => ({ path: r.path, side: r.side, start: r.start, end: r.end, hunkId: '' }));
}

/**
 * What every lens seat does first, as a real model would: list the changes, then read the diff of
 * the file it will cite (the scenario checks the second result carries that file's head lines).
 */
function readsFirst(path: string): ScriptedCall[] {
  return [{ tool: 'list_changes' }, { tool: 'read_diff', input: { path } }];
}

/** The six lens seats' turns over one lens plan. */
function lensSeats(plan: LensPlan): Record<string, Step[]> {
  const first = (ranges: readonly PlannedRange[]) => readsFirst((ranges[0] ?? plan.sequence[0] ?? plan.flagged[0])?.path ?? '');
  return {
    'design:drafter': stepsOfCalls([...first(plan.design), ...designTurn(regions(plan.design))]),
    'sequence:drafter': stepsOfCalls([...first(plan.sequence), ...sequenceTurn(regions(plan.sequence))]),
    'decisions:drafter': stepsOfCalls([...first(plan.decisions), ...decisionsTurn(regions(plan.decisions))]),
    'flagged:reviewer': stepsOfCalls([...first(plan.flagged), ...reviewTurn(plan.review)]),
    'flagged:compiler': stepsOfCalls([...first(plan.flagged), ...compileTurn(regions(plan.flagged), plan.findings)]),
    'noise:drafter': stepsOfCalls([...first(plan.sequence), ...noiseTurn(plan.noiseMembers)]),
  };
}

export function readingSeats(plan: ReadingPlan): Record<string, Step[]> {
  return {
    ...lensSeats(plan),
    ...Object.fromEntries(LENSES.map((lens) => [`${lens}:explainer`, explainSteps(plan.explain)])),
    ...(plan.opener ? { 'design:opener': openerSteps(plan.opener) } : {}),
    ...(plan.roundReport ? { [ROUND_REPORT_SEAT]: roundReportSteps(plan.roundReport) } : {}),
    ...(plan.rereview
      ? { ...Object.fromEntries(Object.entries(lensSeats(plan.rereview)).map(([seat, steps]) => [`rereview:${seat}`, steps])), [CLOSURE_SEAT]: closureSteps(plan.rereview.closures) }
      : {}),
  };
}

/** The closure seat's request being answered: set by the router, read by the submit step in the same tick. */
let closureRequest: Record<string, unknown> | null = null;

/** Every JSON object line of what read_prior_items answered in the closure seat's conversation (its pages: the items first, then the delta's units). */
function priorPageLines(): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const result of requestTexts(closureRequest).toolResults) {
    for (const line of result.split('\n')) {
      if (!line.startsWith('{')) continue;
      try {
        const value = JSON.parse(line) as unknown;
        if (value !== null && typeof value === 'object' && !Array.isArray(value)) out.push(value as Record<string, unknown>);
      } catch {
        // Not a JSON line.
      }
    }
  }
  return out;
}

/** The ev- id of the text-hunk unit on `path` in the pages the closure seat read; null when none names one. */
function unitIdOn(path: string): string | null {
  const unit = priorPageLines().find((u) => u['kind'] === 'text-hunk' && u['path'] === path && typeof u['id'] === 'string' && u['id'].startsWith('ev-'));
  return unit ? (unit['id'] as string) : null;
}

/** The earlier items the closure seat read (page 1's `items`: id, path, line, …). */
function itemsRead(): Array<{ id: string; path: string | null; line: number | null }> {
  const head = priorPageLines().find((l) => Array.isArray(l['items']));
  return ((head?.['items'] as Array<{ id?: unknown; path?: unknown; line?: unknown }> | undefined) ?? []).flatMap((i) =>
    typeof i.id === 'string' ? [{ id: i.id, path: typeof i.path === 'string' ? i.path : null, line: typeof i.line === 'number' ? i.line : null }] : [],
  );
}

/**
 * The closure seat's turn, as a real model would take it: read the items and the delta's units,
 * read the fixed file's diff, then hand in the closures citing the unit it read (the submit step's
 * call is computed from the conversation when it is answered). With no such unit on the page it
 * read it says so and hands in nothing: the host then leaves every item open, said.
 */
function closureSteps(c: RereviewPlan['closures']): Step[] {
  const judged = () => {
    const id = unitIdOn(c.path);
    const items = itemsRead();
    const fixed = items.find((i) => i.path === c.path && i.line === c.line);
    if (id === null || !fixed) return null;
    return items.map((i) =>
      i === fixed
        ? { itemId: i.id, closure: 'resolved', evidenceIds: [id], reason: c.resolved }
        : { itemId: i.id, closure: 'open', evidenceIds: [], reason: i.path === null ? c.openBody : c.openInline },
    );
  };
  const submit = {
    get toolCalls() {
      const closures = judged();
      return closures === null ? undefined : [{ name: 'submit_closures', input: { closures } }];
    },
    get text() {
      return judged() === null ? `read_prior_items named no item on ${c.path}:${c.line} or no text-hunk unit on ${c.path}; no closures handed in.` : undefined;
    },
  } as unknown as Step;
  return [{ toolCalls: [{ name: 'read_prior_items', input: { page: 1 } }] }, { toolCalls: [{ name: 'read_diff', input: { path: c.path } }] }, submit, { text: 'Done.' }];
}

/**
 * The router: by the production prompt header (positionalSeatOf); with a re-review in the plan,
 * also the closure seat by its header, and a lens seat reading the fix delta (its list_changes
 * answer starts at the reviewed commit) to the re-review's lens plan.
 */
function readingRouter(plan: ReadingPlan): SeatRouter {
  const byHeader = positionalSeatOf();
  const rereview = plan.rereview;
  if (!rereview) return byHeader;
  const delta = `Reviewed change: base ${rereview.base.slice(0, 12)} `;
  return (body, raw) => {
    const tools = body['tools'];
    const at = raw.indexOf(CLOSURE_HEADER);
    // The closure seat's own prompt: its header comes before any lens header a tool result might quote.
    if (Array.isArray(tools) && tools.length > 0 && at >= 0 && !/# Rennet: (Design|Sequence|Decisions|Flagged|Noise) \(/.test(raw.slice(0, at))) {
      closureRequest = body;
      return positionalKey(CLOSURE_SEAT, assistantTurns(body));
    }
    const key = byHeader(body, raw);
    return key !== null && LENS_SEAT_KEY.test(key) && raw.includes(delta) ? `rereview:${key}` : key;
  };
}

/**
 * The round report's one turn: read the evidence, hand in the classification the scenario wrote to
 * `file`, end the turn. The submit step reads `file` each time it is answered (its `toolCalls` and
 * `text` are getters); while there is no such file it ends the turn with a text saying so, and the
 * host fails the round for want of a report.
 */
function roundReportSteps({ file, delayMs }: NonNullable<ReadingPlan['roundReport']>): Step[] {
  const classification = (): Record<string, unknown> | null => {
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    } catch {
      return null;
    }
  };
  const submit = {
    get toolCalls() {
      const input = classification();
      return input === null ? undefined : [{ name: 'submit_report', input }];
    },
    get text() {
      return classification() === null ? `No classification to hand in: ${file} is not there.` : undefined;
    },
  } as unknown as Step;
  return [{ toolCalls: [{ name: 'read_evidence', input: { page: 1 } }], ...(delayMs ? { delayMs } : {}) }, submit, { text: 'Reported.' }];
}

/** The request opener's turn, as a real model would take it: read the draft and the change, then hand in the text. */
function openerSteps({ path, title, description }: NonNullable<ReadingPlan['opener']>): Step[] {
  return stepsOfCalls([
    { tool: 'read_draft' },
    { tool: 'list_changes' },
    { tool: 'read_diff', input: { path } },
    { tool: 'set_title', input: { title } },
    { tool: 'set_description', input: { markdown: description } },
  ]);
}

/** One explain turn: read the quote, read the cited lines, hand in the answer, end the turn. */
function explainSteps({ excerpt, answer }: ReadingPlan['explain']): Step[] {
  return stepsOfCalls(
    [
      { tool: 'read_quote' },
      { tool: 'read_excerpt', input: { path: excerpt.path, side: excerpt.side, start_line: excerpt.start, end_line: excerpt.end } },
      { tool: 'answer', input: { markdown: answer } },
    ],
    'Answered.',
  );
}

// An explainer's prompt and resent tool results go along: the scenario checks the quote reaches
// the model only as a tool result. So do the round report's: the scenario checks the evidence
// reaches it only through read_evidence, and reads what the host answered to submit_report. So do
// the closure seat's: the scenario checks the earlier items reach it only through read_prior_items.
runLensScriptProcess<ReadingPlan>(
  'e2eReading',
  (plan) => positionalScript(readingSeats(plan)),
  // Other seats: the last tool result they resent (the scenario reads what read_diff answered).
  (r) =>
    r.seat?.includes(':explainer@') || r.seat?.startsWith(`${ROUND_REPORT_SEAT}@`) || r.seat?.startsWith(`${CLOSURE_SEAT}@`)
      ? requestTexts(r.body)
      : { toolResults: requestTexts(r.body).toolResults.slice(-1) },
  readingRouter,
);
