/**
 * The model servers of the end-to-end reading scenario (test/e2e/reading.mjs), as a process:
 *
 *   npx tsx test/servers/e2eReading.ts PLAN.json
 *
 * PLAN.json names, per lens, the ranges its seat cites (the scenario takes them from git's own
 * hunks of the fixture repository, so every citation lands on changed lines), the Flagged findings,
 * the number of Noise members, what an explainer (rennet/asks/explain) reads and answers, and
 * (optionally) what the request opener (the Design lens's pass over an own-branch pull request's
 * title and description) reads and hands in, and (optionally) where a round's report seat finds the
 * classification it hands in. This file builds every lens seat's turn, every lens's explainer, the
 * opener and the round report seat from that plan (positional
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
import { runLensScriptProcess } from './e2eProcess';
import { ROUND_REPORT_SEAT, type ScriptedCall, positionalScript, requestTexts, stepsOfCalls } from './lensScripts';

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
}

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

export function readingSeats(plan: ReadingPlan): Record<string, Step[]> {
  const first = (ranges: readonly PlannedRange[]) => readsFirst((ranges[0] ?? plan.sequence[0] ?? plan.flagged[0])?.path ?? '');
  return {
    'design:drafter': stepsOfCalls([...first(plan.design), ...designTurn(regions(plan.design))]),
    'sequence:drafter': stepsOfCalls([...first(plan.sequence), ...sequenceTurn(regions(plan.sequence))]),
    'decisions:drafter': stepsOfCalls([...first(plan.decisions), ...decisionsTurn(regions(plan.decisions))]),
    'flagged:reviewer': stepsOfCalls([...first(plan.flagged), ...reviewTurn(plan.review)]),
    'flagged:compiler': stepsOfCalls([...first(plan.flagged), ...compileTurn(regions(plan.flagged), plan.findings)]),
    'noise:drafter': stepsOfCalls([...first(plan.sequence), ...noiseTurn(plan.noiseMembers)]),
    ...Object.fromEntries(LENSES.map((lens) => [`${lens}:explainer`, explainSteps(plan.explain)])),
    ...(plan.opener ? { 'design:opener': openerSteps(plan.opener) } : {}),
    ...(plan.roundReport ? { [ROUND_REPORT_SEAT]: roundReportSteps(plan.roundReport) } : {}),
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
// reaches it only through read_evidence, and reads what the host answered to submit_report.
runLensScriptProcess<ReadingPlan>(
  'e2eReading',
  (plan) => positionalScript(readingSeats(plan)),
  // Other seats: the last tool result they resent (the scenario reads what read_diff answered).
  (r) =>
    r.seat?.includes(':explainer@') || r.seat?.startsWith(`${ROUND_REPORT_SEAT}@`) ? requestTexts(r.body) : { toolResults: requestTexts(r.body).toolResults.slice(-1) },
);
