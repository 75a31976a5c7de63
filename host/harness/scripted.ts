import { readFileSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { z } from 'zod';
import type { Lens } from '../../protocol/board';
import { HOST_VERSION } from '../version';
import type { HarnessAssignment } from '../pipeline/types';
import type { Harness, TurnRequest, TurnResult } from '../pipeline/ports';

/**
 * The `scripted` harness: a real harness that plays a recorded list of tool calls per seat. It is
 * never presented as a model (`model: null`) and reports no usage (`usage: null`), because it
 * has none. Script format: host/harness/README.md.
 *
 * Tools are called through the turn's in-process ToolPort by default, or through the seat's
 * loopback MCP endpoint with the SDK Client (`transport: 'mcp'`), so a benchmark pays the real
 * MCP round trips.
 */

const NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;

export const ScriptCall = z.strictObject({
  tool: z.string().min(1),
  input: z.record(z.string(), z.unknown()).optional(),
  /** Records the first `e<n>` id of the result under this name; `"$name"` in later inputs is replaced by it. */
  as: z.string().regex(NAME).optional(),
});
export type ScriptCall = z.infer<typeof ScriptCall>;

export const ScriptTurn = z.union([
  z.array(ScriptCall),
  /** A turn that stops without finishing (and writes nothing). */
  z.strictObject({ end: z.literal('unsettled') }),
  /** A harness failure carrying this message; `final`: one no attempt can mend (TurnResult.final). */
  z.strictObject({ fail: z.string().min(1), final: z.literal(true).optional() }),
  /** A turn that calls settle_absent and nothing else. */
  z.strictObject({ absent: z.literal(true) }),
]);
export type ScriptTurn = z.infer<typeof ScriptTurn>;

export const ScriptOrigin = z.enum(['claude', 'codex']);

export const SeatScript = z.strictObject({
  turns: z.array(ScriptTurn),
  /** For a review seat keyed `flagged:reviewer`: which model's review it plays. */
  origin: ScriptOrigin.optional(),
});
export type SeatScript = z.infer<typeof SeatScript>;

export const HarnessScript = z.strictObject({
  /** Keyed by seat id (`sequence:drafter`, `flagged:reviewer:claude`) or `lens:role` (`flagged:reviewer`). */
  seats: z.record(z.string(), SeatScript),
});
export type HarnessScript = z.infer<typeof HarnessScript>;

export interface ScriptedHarnessOptions {
  /** The origin this harness maps to (a Flagged review harness writes `findings/<origin>.md`). Default `other`. */
  origin?: 'claude' | 'codex' | 'other';
  /** `in-process` (default): request.tools. `mcp`: the seat's MCP endpoint through the SDK Client. */
  transport?: 'in-process' | 'mcp';
}

/** One turn the harness was asked to run, as it received it (tests assert on these). */
export interface ScriptedTurnRecord {
  seatId: string;
  lens: Lens;
  role: string;
  prompt: string;
  followUp: boolean;
  /** Which scripted turn answered (0-based), or null when the script had none. */
  turn: number | null;
  /** Tool calls made in the turn, with whether each was refused. */
  calls: Array<{ tool: string; isError: boolean; text: string }>;
}

/** Parses a script (an object or JSON text); throws a readable error naming the bad field. */
export function parseHarnessScript(value: unknown): HarnessScript {
  const raw = typeof value === 'string' ? (JSON.parse(value) as unknown) : value;
  const parsed = HarnessScript.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 5).map((i) => `${i.path.map(String).join('.') || '(script)'}: ${i.message}`);
    throw new Error(`not a harness script: ${issues.join('; ')}`);
  }
  return parsed.data;
}

export function loadHarnessScript(file: string): HarnessScript {
  return parseHarnessScript(readFileSync(file, 'utf8'));
}

type CallPort = { call(name: string, input: Record<string, unknown>): Promise<{ text: string; isError: boolean }>; close(): Promise<void> };

export class ScriptedHarness implements Harness {
  readonly kind = 'scripted';
  readonly model = null;
  readonly origin: 'claude' | 'codex' | 'other';
  private readonly script: HarnessScript;
  private readonly transport: 'in-process' | 'mcp';
  private readonly nextTurn = new Map<string, number>();
  private readonly names = new Map<string, Map<string, string>>();
  private readonly recorded: ScriptedTurnRecord[] = [];

  /** `script`: a HarnessScript, or any value to check as one (parseHarnessScript). */
  constructor(script: unknown, options: ScriptedHarnessOptions = {}) {
    this.script = parseHarnessScript(script);
    this.origin = options.origin ?? 'other';
    this.transport = options.transport ?? 'in-process';
  }

  /** Every turn asked of this harness, in order. */
  get turns(): readonly ScriptedTurnRecord[] {
    return this.recorded;
  }

  /** Turns asked of one seat (by seat id) or of every seat of a lens. */
  turnsOf(seatIdOrLens: string): ScriptedTurnRecord[] {
    return this.recorded.filter((t) => t.seatId === seatIdOrLens || t.lens === seatIdOrLens);
  }

  async runTurn(request: TurnRequest): Promise<TurnResult> {
    const { seat } = request;
    const record: ScriptedTurnRecord = { seatId: seat.seatId, lens: seat.lens, role: seat.role, prompt: request.prompt, followUp: request.followUp, turn: null, calls: [] };
    this.recorded.push(record);
    const key = scriptKeyFor(this.script, seat.seatId, seat.lens, seat.role);
    const seatScript = key === null ? undefined : this.script.seats[key];
    if (key === null || !seatScript) return failed(`the script has no seat ${seat.seatId} (nor ${seat.lens}:${seat.role})`);
    const index = this.nextTurn.get(seat.seatId) ?? 0;
    const turn = seatScript.turns[index];
    if (turn === undefined) return failed(`the script has no turn ${index + 1} for ${key} (it has ${seatScript.turns.length})`);
    this.nextTurn.set(seat.seatId, index + 1);
    record.turn = index;

    if (!Array.isArray(turn)) {
      if ('fail' in turn) return turn.final ? { ...failed(turn.fail), final: true } : failed(turn.fail);
      if ('end' in turn) return ended();
    }
    const calls: ScriptCall[] = Array.isArray(turn) ? turn : [{ tool: 'settle_absent', input: {} }];
    const names = this.names.get(seat.seatId) ?? new Map<string, string>();
    this.names.set(seat.seatId, names);

    let port: CallPort;
    try {
      port = this.transport === 'mcp' ? await mcpPort(request) : inProcessPort(request);
    } catch (error) {
      return failed(`could not reach the seat's tools: ${(error as Error).message}`);
    }
    try {
      for (const call of calls) {
        if (request.signal.aborted) return { outcome: 'aborted', message: 'the turn was cancelled', usage: null };
        const input = substitute(call.input ?? {}, names);
        if (!input.ok) return failed(input.message);
        request.onEvent({ type: 'tool-call', name: call.tool });
        const result = await port.call(call.tool, input.value);
        request.onEvent({ type: 'tool-result', name: call.tool, isError: result.isError });
        record.calls.push({ tool: call.tool, isError: result.isError, text: result.text });
        if (call.as !== undefined) {
          const minted = result.isError ? null : /\be\d+\b/.exec(result.text);
          if (minted) names.set(call.as, minted[0]);
          else names.set(call.as, `\u0000refused:${result.text.slice(0, 200)}`);
        }
      }
    } catch (error) {
      return failed(`a tool call failed: ${(error as Error).message}`);
    } finally {
      await port.close().catch(() => undefined);
    }
    return ended();
  }
}

/** The script entry answering a seat: its seat id, else `lens:role`, else the lens alone. */
export function scriptKeyFor(script: HarnessScript, seatId: string, lens: Lens, role: string): string | null {
  for (const key of [seatId, `${lens}:${role}`, lens]) if (Object.hasOwn(script.seats, key)) return key;
  return null;
}

/**
 * The review origins a script plays: `flagged:reviewer:<origin>` keys, and the `origin` of a
 * `flagged:reviewer` entry (default claude). One review harness runs per origin.
 */
export function scriptedReviewOrigins(script: HarnessScript): Array<'claude' | 'codex'> {
  const out = new Set<'claude' | 'codex'>();
  for (const [key, entry] of Object.entries(script.seats)) {
    const match = /^flagged:reviewer:(claude|codex)$/.exec(key);
    if (match) out.add(match[1] as 'claude' | 'codex');
    else if (key === 'flagged:reviewer') out.add(entry.origin ?? 'claude');
  }
  return [...out].sort();
}

/**
 * A harness assignment that plays `script` (checked as a HarnessScript): a drafter for every
 * lens the script has an entry for (`<lens>:…` or `<lens>`), one review harness per scripted
 * review origin, and a compiler when the script has `flagged:compiler`. A lens without an entry
 * gets no harness, so the pipeline settles it as "no model harness is configured".
 */
export function scriptedAssignment(script: unknown, options: Omit<ScriptedHarnessOptions, 'origin'> = {}): HarnessAssignment & { harnesses: ScriptedHarness[] } {
  const parsed = parseHarnessScript(script);
  const drafter = new ScriptedHarness(parsed, options);
  const has = (lens: Lens) => Object.keys(parsed.seats).some((key) => key === lens || key.startsWith(`${lens}:`));
  const reviewers = scriptedReviewOrigins(parsed).map((origin) => new ScriptedHarness(parsed, { ...options, origin }));
  const compiler = Object.hasOwn(parsed.seats, 'flagged:compiler') ? drafter : null;
  const pick = (lens: Exclude<Lens, 'flagged'>) => (has(lens) ? drafter : null);
  return {
    design: pick('design'),
    sequence: pick('sequence'),
    decisions: pick('decisions'),
    noise: pick('noise'),
    flagged: { reviewers, compiler },
    harnesses: [drafter, ...reviewers],
  };
}

// ─── Helpers ─────────────────────────────────────────────────────────────────────────────────

function failed(message: string): TurnResult {
  return { outcome: 'failed', message, usage: null };
}

function ended(): TurnResult {
  return { outcome: 'ended', message: null, usage: null };
}

type Substituted = { ok: true; value: Record<string, unknown> } | { ok: false; message: string };

/**
 * Replaces `$name` in every string of the input (top-level strings and array elements, whole or
 * inside a longer string such as write_board's entries_json) with the id recorded under that
 * name. A whole-string `$name` that names nothing recorded (or a refused call) is a script error.
 */
export function substitute(input: Record<string, unknown>, names: ReadonlyMap<string, string>): Substituted {
  let problem: string | null = null;
  const one = (value: string): string => {
    const whole = /^\$([A-Za-z_][A-Za-z0-9_-]*)$/.exec(value);
    if (whole) {
      const name = whole[1] as string;
      const id = names.get(name);
      if (id === undefined) problem ??= `the script names $${name}, which no earlier call recorded with "as"`;
      else if (id.startsWith('\u0000refused:')) problem ??= `the script names $${name}, but the call recorded as ${name} minted no id: ${id.slice(9)}`;
      return id ?? value;
    }
    return value.replace(/\$([A-Za-z_][A-Za-z0-9_-]*)/g, (match, name: string) => {
      const id = names.get(name);
      return id !== undefined && !id.startsWith('\u0000') ? id : match;
    });
  };
  const value: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(input)) {
    value[key] = typeof v === 'string' ? one(v) : Array.isArray(v) ? v.map((item: unknown) => (typeof item === 'string' ? one(item) : item)) : v;
  }
  return problem === null ? { ok: true, value } : { ok: false, message: problem };
}

function inProcessPort(request: TurnRequest): CallPort {
  return { call: (name, input) => request.tools.call(name, input), close: async () => undefined };
}

async function mcpPort(request: TurnRequest): Promise<CallPort> {
  if (!request.mcp) throw new Error('this turn has no MCP endpoint');
  const client = new Client({ name: 'rennet-scripted', version: HOST_VERSION });
  await client.connect(new StreamableHTTPClientTransport(new URL(request.mcp.url), { requestInit: { headers: request.mcp.headers } }));
  return {
    async call(name, input) {
      const result = await client.callTool({ name, arguments: input });
      const content = (result.content ?? []) as Array<{ type: string; text?: string }>;
      const text = content.map((c) => (c.type === 'text' ? (c.text ?? '') : `[${c.type}]`)).join('\n');
      return { text, isError: result.isError === true };
    },
    close: () => client.close(),
  };
}
