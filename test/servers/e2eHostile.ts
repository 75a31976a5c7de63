/**
 * The model servers of the end-to-end hostile scenario (test/e2e/hostile.mjs), as a process:
 *
 *   npx tsx test/servers/e2eHostile.ts PLAN.json
 *
 * PLAN.json is `{ seats: { '<lens>:<role>': ScriptedCall[] }, closing? }`: the scenario writes every
 * tool call of every lens seat itself (the payloads carry a loopback beacon's port, so they are made
 * at run time), and this process only plays them. Like e2eReading.ts it runs through
 * e2eProcess.ts: a scripted OpenAI-compatible server and a scripted Anthropic server on 127.0.0.1
 * answering Rennet's real lens seats by position (routed by the production prompt header, so
 * every generation replays the whole script), prints ONE JSON line
 * `{"openaiBaseUrl","anthropicOrigin","model"}` on stdout, then one JSON line per model request
 * on stderr:
 * `{server, path, seat, step, unresolved, toolResults}` — `toolResults` are the tool results the
 * client resent with that request (the last one answers the seat's previous call), so the
 * scenario can say which payloads the board tools refused. Exits when its stdin closes or on
 * SIGTERM/SIGINT.
 */
import { runLensScriptProcess } from './e2eProcess';
import { positionalScript, requestTexts, stepsOfCalls, type ScriptedCall } from './lensScripts';

interface HostilePlan {
  seats: Record<string, ScriptedCall[]>;
  closing?: string;
}

// Every request's resent tool results go along: the scenario says which payloads a board tool refused.
runLensScriptProcess<HostilePlan>(
  'e2eHostile',
  (plan) => positionalScript(Object.fromEntries(Object.entries(plan.seats).map(([seat, calls]) => [seat, stepsOfCalls(calls, plan.closing ?? 'Done.')]))),
  (r) => ({ toolResults: requestTexts(r.body).toolResults }),
);
