/**
 * The model servers of the end-to-end reading scenario (test/e2e/reading.mjs), as a process:
 *
 *   npx tsx test/servers/e2eReading.ts PLAN.json
 *
 * PLAN.json names, per lens, the ranges its seat cites (the scenario takes them from git's own
 * hunks of the fixture repository, so every citation lands on changed lines), the Flagged findings,
 * the number of Noise members, and what an explainer (rennet/asks/explain) reads and answers. This
 * process starts a scripted OpenAI-compatible server and a scripted Anthropic server on 127.0.0.1
 * answering every lens seat, and every lens's explainer, from that plan (positional scripts routed
 * by the production prompt header: any number of generations replay it), prints ONE JSON line
 * `{"openaiBaseUrl","anthropicOrigin","model"}` on stdout, then one JSON line per model request on
 * stderr (`{server, path, seat, step, unresolved}`, and for an explainer's request also `prompt`
 * and `toolResults`: what the client said itself and what it resent as tool results), and exits
 * when its stdin closes or on SIGTERM/SIGINT.
 */
import { readFileSync } from 'node:fs';
import { compileTurn, decisionsTurn, designTurn, noiseTurn, reviewTurn, sequenceTurn, type FindingSpec, type Region } from '../unit/pipeline/fixtures';
import type { RecordedRequest, ScriptedServer, Step } from './common';
import { startAnthropicServer } from './anthropic';
import { positionalScript, positionalSeatOf, requestTexts, stepsOfCalls } from './lensScripts';
import { startOpenAiServer } from './openai';

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
}

const LENSES = ['design', 'sequence', 'decisions', 'flagged', 'noise'] as const;

export const SCRIPTED_MODEL = 'scripted-model';

function regions(ranges: readonly PlannedRange[]): Region[] {
  return ranges.map((r) => ({ path: r.path, side: r.side, start: r.start, end: r.end, hunkId: '' }));
}

export function readingSeats(plan: ReadingPlan): Record<string, Step[]> {
  return {
    'design:drafter': stepsOfCalls(designTurn(regions(plan.design))),
    'sequence:drafter': stepsOfCalls(sequenceTurn(regions(plan.sequence))),
    'decisions:drafter': stepsOfCalls(decisionsTurn(regions(plan.decisions))),
    'flagged:reviewer': stepsOfCalls(reviewTurn(plan.review)),
    'flagged:compiler': stepsOfCalls(compileTurn(regions(plan.flagged), plan.findings)),
    'noise:drafter': stepsOfCalls(noiseTurn(plan.noiseMembers)),
    ...Object.fromEntries(LENSES.map((lens) => [`${lens}:explainer`, explainSteps(plan.explain)])),
  };
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

async function main(): Promise<void> {
  const planFile = process.argv[2];
  if (!planFile) throw new Error('usage: e2eReading.ts PLAN.json');
  const plan = JSON.parse(readFileSync(planFile, 'utf8')) as ReadingPlan;
  const script = positionalScript(readingSeats(plan));
  const openai = await startOpenAiServer(script, { seatOf: positionalSeatOf(), models: [SCRIPTED_MODEL] });
  const anthropic = await startAnthropicServer(script, { seatOf: positionalSeatOf(), models: [SCRIPTED_MODEL] });

  const servers: Array<[string, ScriptedServer]> = [
    ['openai', openai],
    ['anthropic', anthropic],
  ];
  const reported = new Map<string, number>(servers.map(([name]) => [name, 0]));
  // An explainer's prompt and resent tool results go along: the scenario checks the quote reaches
  // the model only as a tool result.
  const report = (name: string, r: RecordedRequest) => {
    const texts = r.seat?.includes(':explainer@') ? requestTexts(r.body) : {};
    process.stderr.write(`${JSON.stringify({ server: name, path: r.path, seat: r.seat, step: r.step, unresolved: r.unresolved, ...texts })}\n`);
  };
  // Seat and step are set synchronously when a request arrives, so anything listed is routed.
  const flush = () => {
    for (const [name, server] of servers) {
      for (const r of server.requests.slice(reported.get(name))) report(name, r);
      reported.set(name, server.requests.length);
    }
  };
  const ticker = setInterval(flush, 200);

  let closing = false;
  const close = async (code: number) => {
    if (closing) return;
    closing = true;
    clearInterval(ticker);
    flush();
    await Promise.all(servers.map(([, s]) => s.close()));
    process.exit(code);
  };
  process.stdin.on('end', () => void close(0));
  process.stdin.on('close', () => void close(0));
  process.stdin.resume();
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(sig, () => void close(0));

  process.stdout.write(`${JSON.stringify({ openaiBaseUrl: openai.baseUrl, anthropicOrigin: anthropic.origin, model: SCRIPTED_MODEL })}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`e2eReading: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
