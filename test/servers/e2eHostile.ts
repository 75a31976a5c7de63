/**
 * The model servers of the end-to-end hostile scenario (test/e2e/hostile.mjs), as a process:
 *
 *   npx tsx test/servers/e2eHostile.ts PLAN.json
 *
 * PLAN.json is `{ seats: { '<lens>:<role>': ScriptedCall[] }, closing? }`: the scenario writes every
 * tool call of every lens seat itself (the payloads carry a loopback beacon's port, so they are made
 * at run time), and this process only plays them. Like e2eReading.ts it starts a scripted
 * OpenAI-compatible server and a scripted Anthropic server on 127.0.0.1 answering Rennet's real
 * lens seats by position (routed by the production prompt header, so every generation replays the
 * whole script), prints ONE JSON line `{"openaiBaseUrl","anthropicOrigin","model"}` on stdout,
 * then one JSON line per model request on stderr:
 * `{server, path, seat, step, unresolved, toolResults}` — `toolResults` are the tool results the
 * client resent with that request (the last one answers the seat's previous call), so the
 * scenario can say which payloads the board tools refused. Exits when its stdin closes or on
 * SIGTERM/SIGINT.
 */
import { readFileSync } from 'node:fs';
import type { RecordedRequest, ScriptedServer } from './common';
import { startAnthropicServer } from './anthropic';
import { positionalScript, positionalSeatOf, requestTexts, stepsOfCalls, type ScriptedCall } from './lensScripts';
import { startOpenAiServer } from './openai';

interface HostilePlan {
  seats: Record<string, ScriptedCall[]>;
  closing?: string;
}

export const SCRIPTED_MODEL = 'scripted-model';

async function main(): Promise<void> {
  const planFile = process.argv[2];
  if (!planFile) throw new Error('usage: e2eHostile.ts PLAN.json');
  const plan = JSON.parse(readFileSync(planFile, 'utf8')) as HostilePlan;
  const script = positionalScript(Object.fromEntries(Object.entries(plan.seats).map(([seat, calls]) => [seat, stepsOfCalls(calls, plan.closing ?? 'Done.')])));
  const openai = await startOpenAiServer(script, { seatOf: positionalSeatOf(), models: [SCRIPTED_MODEL] });
  const anthropic = await startAnthropicServer(script, { seatOf: positionalSeatOf(), models: [SCRIPTED_MODEL] });

  const servers: Array<[string, ScriptedServer]> = [
    ['openai', openai],
    ['anthropic', anthropic],
  ];
  const reported = new Map<string, number>(servers.map(([name]) => [name, 0]));
  const report = (name: string, r: RecordedRequest) => {
    const { toolResults } = requestTexts(r.body);
    process.stderr.write(`${JSON.stringify({ server: name, path: r.path, seat: r.seat, step: r.step, unresolved: r.unresolved, toolResults })}\n`);
  };
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
  process.stderr.write(`e2eHostile: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
