/**
 * The model servers of the end-to-end hostile scenario (test/e2e/hostile.mjs), as a process:
 *
 *   npx tsx test/servers/e2eHostile.ts PLAN.json
 *
 * PLAN.json is `{ seats: { '<lens>:<role>': ScriptedCall[] }, closing?, hold? }`: the scenario writes
 * every tool call of every lens seat itself (the payloads carry a loopback beacon's port, so they are
 * made at run time), and this process only plays them. `hold` is a file path: every seat's first
 * request is answered only once that file exists (the scenario writes it when it is ready to
 * watch the boards arrive; test/e2e/hostileRender.mjs). Like e2eReading.ts it runs through
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
import { existsSync } from 'node:fs';
import type { Step } from './common';
import { runLensScriptProcess } from './e2eProcess';
import { positionalScript, requestTexts, stepsOfCalls, type ScriptedCall } from './lensScripts';

interface HostilePlan {
  seats: Record<string, ScriptedCall[]>;
  closing?: string;
  hold?: string;
}

/** Settles once `file` exists (polled every 200 ms). */
async function untilExists(file: string): Promise<void> {
  while (!existsSync(file)) await new Promise((resolve) => setTimeout(resolve, 200));
}

/** A seat's steps; with a hold, its first step waits for the hold file. */
function seatSteps(calls: readonly ScriptedCall[], plan: HostilePlan): Step[] {
  const steps = stepsOfCalls(calls, plan.closing ?? 'Done.');
  const hold = plan.hold;
  if (hold === undefined || steps.length === 0) return steps;
  return [{ ...steps[0], waitFor: () => untilExists(hold) } as Step, ...steps.slice(1)];
}

// Every request's resent tool results go along: the scenario says which payloads a board tool refused.
runLensScriptProcess<HostilePlan>(
  'e2eHostile',
  (plan) => positionalScript(Object.fromEntries(Object.entries(plan.seats).map(([seat, calls]) => [seat, seatSteps(calls, plan)]))),
  (r) => ({ toolResults: requestTexts(r.body).toolResults }),
);
