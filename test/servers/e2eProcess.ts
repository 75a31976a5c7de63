/**
 * The process around the end-to-end scenarios' model servers (e2eReading.ts, e2eHostile.ts):
 *
 *   npx tsx test/servers/<e2eReading|e2eHostile>.ts PLAN.json
 *
 * `runLensScriptProcess(name, scriptOf, extra)` reads PLAN.json (the first argument) and hands it
 * to `scriptOf`, which builds the positional script of that scenario's seats. `serveLensScripts`
 * then starts a scripted OpenAI-compatible server and a scripted Anthropic server on 127.0.0.1
 * answering that script (routed by `positionalSeatOf()`, test/servers/lensScripts.ts), prints ONE
 * JSON line `{"openaiBaseUrl","anthropicOrigin","model"}` on stdout, then one JSON line per model
 * request on stderr (`{server, path, seat, step, unresolved, ...extra(request)}`, every 200 ms and
 * once more at the end), and exits when its stdin closes or on SIGTERM/SIGINT/SIGHUP.
 */
import { readFileSync } from 'node:fs';
import type { RecordedRequest, ScriptedServer, ServerScript } from './common';
import { startAnthropicServer } from './anthropic';
import { positionalSeatOf } from './lensScripts';
import { startOpenAiServer } from './openai';

export const SCRIPTED_MODEL = 'scripted-model';

/** What a scenario adds to a request's stderr line (e.g. the texts it resent). */
export type ReportExtra = (request: RecordedRequest) => Record<string, unknown>;

/** How a request is routed to a seat of the script (default: `positionalSeatOf()`, by the production prompt header). */
export type SeatRouter = (body: Record<string, unknown>, raw: string) => string | null;

/** Starts both servers on `script`, reports every request on stderr, prints the URL line; closes on stdin end or a signal. */
export async function serveLensScripts(script: ServerScript, extra: ReportExtra = () => ({}), seatOf: SeatRouter = positionalSeatOf()): Promise<void> {
  const openai = await startOpenAiServer(script, { seatOf, models: [SCRIPTED_MODEL] });
  const anthropic = await startAnthropicServer(script, { seatOf, models: [SCRIPTED_MODEL] });

  const servers: Array<[string, ScriptedServer]> = [
    ['openai', openai],
    ['anthropic', anthropic],
  ];
  const reported = new Map<string, number>(servers.map(([name]) => [name, 0]));
  const report = (name: string, r: RecordedRequest) => {
    process.stderr.write(`${JSON.stringify({ server: name, path: r.path, seat: r.seat, step: r.step, unresolved: r.unresolved, ...extra(r) })}\n`);
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

/**
 * The whole process: PLAN.json from argv, `scriptOf(plan)` served by `serveLensScripts` (routed by
 * `routerOf(plan)` when given). A failure is written to stderr as `<name>: <stack>` and exits 1.
 */
export function runLensScriptProcess<Plan>(name: string, scriptOf: (plan: Plan) => ServerScript, extra?: ReportExtra, routerOf?: (plan: Plan) => SeatRouter): void {
  const main = async () => {
    const planFile = process.argv[2];
    if (!planFile) throw new Error(`usage: ${name}.ts PLAN.json`);
    const plan = JSON.parse(readFileSync(planFile, 'utf8')) as Plan;
    await serveLensScripts(scriptOf(plan), extra, routerOf ? routerOf(plan) : undefined);
  };
  main().catch((error: unknown) => {
    process.stderr.write(`${name}: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  });
}
