import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * Shared machinery of the scripted model servers (test/servers/anthropic.ts, openai.ts): the
 * script format, seat matching, `$last`/`$n`/`$name` substitution, request recording, and a
 * loopback HTTP server that can be closed without leaving sockets or timers behind.
 *
 * Never a real model: every answer is a scripted step. Format: test/servers/README.md.
 */

/** One tool call the scripted model makes. */
export interface ToolCallSpec {
  /**
   * The tool's bare name (`cite`). When the request offers no tool of exactly that name, the
   * server uses the offered tool whose name ends in `__<name>` (Claude Code's `mcp__rennet__cite`)
   * or, on the Responses API, the function inside a namespace (Codex's `mcp__rennet`).
   */
  name: string;
  /** Strings (deeply) may hold `$last`, `$<n>` or `$<as-name>`; see substituteIds. */
  input?: Record<string, unknown>;
  /** Names this call's result: later steps' `$<as>` is the first `e<n>` id of that result. */
  as?: string;
}

export type MalformedKind = 'bad-json-arguments' | 'unknown-tool' | 'disconnect-mid-stream' | 'http-500' | 'oversized-text';

export interface StepExtras {
  /** Usage reported for this step. Default `{ input: 100, output: 20 }`; `null` reports none. */
  usage?: { input: number; output: number } | null;
  /** Wait this long before answering (for abort and timeout tests). */
  delayMs?: number;
  /** Answer only once this settles (a scenario's gate: e.g. until a file the test writes exists). */
  waitFor?: () => Promise<void>;
}

export type Step =
  /** Assistant text, end of turn. */
  | ({ text: string; toolCalls?: undefined; malformed?: undefined } & StepExtras)
  /** The model calls these tools (optionally after some text); stop reason tool use. */
  | ({ toolCalls: ToolCallSpec[]; text?: string; malformed?: undefined } & StepExtras)
  /**
   * A fault. `bad-json-arguments`: a call to `name` (default: the first offered tool) whose
   * arguments are not valid JSON. `unknown-tool`: a call to `name` (default `no_such_tool`).
   * `disconnect-mid-stream`: the socket is destroyed after part of the answer. `http-500`: an
   * error status (`status`, default 500) with a vendor-shaped error body. `oversized-text`:
   * `bytes` (default 256 KiB) of assistant text, end of turn.
   */
  | ({ malformed: MalformedKind; name?: string; status?: number; bytes?: number; toolCalls?: undefined; text?: undefined } & StepExtras);

/** Steps per seat. A bare array is one seat `*` answering every request. */
export interface ServerScript {
  seats: Record<string, Step[]>;
}
export type ScriptInput = ServerScript | Step[];

export interface ServerOptions {
  /**
   * Which seat a request belongs to (null: answer without consuming a step, with the default
   * text). Default: the seat whose key follows a `Seat: ` marker anywhere in the request body
   * (longest key wins), else `*` when the script has it, else the only seat of a one-seat script.
   */
  seatOf?(body: Record<string, unknown>, raw: string): string | null;
  /**
   * Default true: a request that offers no tools (a CLI's title or summary side request) is
   * answered with the exhausted text and consumes no step. Ignored when `seatOf` is given.
   */
  toolsRequired?: boolean;
  /** Answer when a seat's steps are exhausted or a request names no seat. Default `Nothing more to do.` */
  exhaustedText?: string;
  /** Model ids listed by `/v1/models`. Default `['scripted-model']`. */
  models?: string[];
}

/** One request the server received, as received. */
export interface RecordedRequest {
  method: string;
  /** Path with query, e.g. `/v1/messages?beta=true`. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body (null when there was none or it did not parse). */
  body: Record<string, unknown> | null;
  raw: string;
  /** The seat it was matched to, and which of that seat's steps answered (null: none consumed). */
  seat: string | null;
  step: number | null;
  /** `$names` that could not be resolved (left in place). */
  unresolved: string[];
}

export const DEFAULT_USAGE = { input: 100, output: 20 };
export const DEFAULT_EXHAUSTED_TEXT = 'Nothing more to do.';

export function normalizeScript(script: ScriptInput): ServerScript {
  return Array.isArray(script) ? { seats: { '*': script } } : script;
}

/** A tool result the client sent back: the call id it answers and its text. */
export interface ReturnedResult {
  callId: string;
  text: string;
}

/** Resolved step for one request. */
export interface Resolved {
  seat: string | null;
  index: number | null;
  step: Step | null;
}

/** Per-server script state: seat step counters and `as` names by call id. */
export class ScriptState {
  readonly script: ServerScript;
  private readonly next = new Map<string, number>();
  /** call id → the `as` name of the call that minted it. */
  readonly asByCallId = new Map<string, string>();
  private ids = 0;

  constructor(
    script: ScriptInput,
    private readonly options: ServerOptions,
  ) {
    this.script = normalizeScript(script);
  }

  mintId(prefix: string): string {
    this.ids += 1;
    return `${prefix}${String(this.ids).padStart(4, '0')}`;
  }

  seatOf(body: Record<string, unknown>, raw: string): string | null {
    if (this.options.seatOf) return this.options.seatOf(body, raw);
    const tools = body['tools'];
    if ((this.options.toolsRequired ?? true) && !(Array.isArray(tools) && tools.length > 0)) return null;
    const keys = Object.keys(this.script.seats).sort((a, b) => b.length - a.length);
    for (const key of keys) {
      if (key === '*') continue;
      const at = raw.indexOf(`Seat: ${key}`);
      if (at < 0) continue;
      const after = raw[at + 6 + key.length];
      if (after === undefined || !/[A-Za-z0-9:_-]/.test(after)) return key;
    }
    if (Object.hasOwn(this.script.seats, '*')) return '*';
    return keys.length === 1 ? (keys[0] as string) : null;
  }

  take(body: Record<string, unknown>, raw: string): Resolved {
    const seat = this.seatOf(body, raw);
    if (seat === null) return { seat: null, index: null, step: null };
    const steps = this.script.seats[seat];
    const index = this.next.get(seat) ?? 0;
    const step = steps?.[index];
    if (step === undefined) return { seat, index: null, step: null };
    this.next.set(seat, index + 1);
    return { seat, index, step };
  }

  /** Steps consumed so far by a seat. */
  consumed(seat: string): number {
    return this.next.get(seat) ?? 0;
  }
}

const ID = /\be\d+\b/;

/**
 * Replaces, in every string of `input` (deeply): `$last` with the first `e<n>` id of the most
 * recent returned tool result; `$<n>` (1-based) with that of the n-th result of the conversation;
 * `$<name>` with that of the result answering the call scripted with `as: name`. Unresolvable
 * names stay in place and are reported.
 */
export function substituteIds(input: Record<string, unknown>, results: readonly ReturnedResult[], asByCallId: ReadonlyMap<string, string>): { value: Record<string, unknown>; unresolved: string[] } {
  const unresolved: string[] = [];
  const idOf = (text: string | undefined) => (text === undefined ? undefined : ID.exec(text)?.[0]);
  const byName = new Map<string, string>();
  for (const r of results) {
    const name = asByCallId.get(r.callId);
    const id = idOf(r.text);
    if (name !== undefined && id !== undefined) byName.set(name, id);
  }
  const resolve = (name: string): string | undefined => {
    if (name === 'last') return idOf(results[results.length - 1]?.text);
    if (/^\d+$/.test(name)) return idOf(results[Number(name) - 1]?.text);
    return byName.get(name);
  };
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string')
      return v.replace(/\$([A-Za-z_][A-Za-z0-9_-]*|\d+)/g, (match, name: string) => {
        const id = resolve(name);
        if (id === undefined) {
          unresolved.push(match);
          return match;
        }
        return id;
      });
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return { value: walk(input) as Record<string, unknown>, unresolved };
}

/** The text of a tool result content value, whatever its shape (string, blocks, parts). */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map(textOf).join('\n');
  if (content !== null && typeof content === 'object') {
    const o = content as Record<string, unknown>;
    if (typeof o['text'] === 'string') return o['text'];
    if (o['content'] !== undefined) return textOf(o['content']);
    if (o['output'] !== undefined) return textOf(o['output']);
  }
  return '';
}

/** Picks the offered tool a scripted name means (see ToolCallSpec.name). */
export function offeredName(name: string, offered: readonly string[]): string {
  if (offered.includes(name)) return name;
  return offered.find((o) => o.endsWith(`__${name}`)) ?? name;
}

export const sleep = (ms: number, timers: Set<NodeJS.Timeout>) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(() => {
      timers.delete(t);
      resolve();
    }, ms);
    timers.add(t);
  });

/** A deterministic oversized text. */
export function oversized(bytes: number): string {
  const unit = 'This scripted answer is deliberately far too long. ';
  return unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);
}

/** Splits a string into pieces of at most `size` characters (for streamed deltas). */
export function pieces(text: string, size: number): string[] {
  if (text.length === 0) return [''];
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

export const BAD_JSON_ARGUMENTS = '{"path": "src/app.ts", "side": "head", "start_line": ';

export interface Handled {
  seat: string | null;
  step: number | null;
  unresolved: string[];
}

export type RouteHandler = (ctx: { req: IncomingMessage; res: ServerResponse; path: string; body: Record<string, unknown> | null; raw: string; record: RecordedRequest }) => Promise<void>;

/** A running scripted server. */
export interface ScriptedServer {
  /** `http://127.0.0.1:<port>` (no path). */
  readonly origin: string;
  readonly port: number;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** Requests to a path (query ignored). */
  requestsTo(path: string): RecordedRequest[];
  /** Steps consumed so far by a seat. */
  consumed(seat: string): number;
  close(): Promise<void>;
}

export async function startServer(route: RouteHandler, state: ScriptState, timers: Set<NodeJS.Timeout>): Promise<ScriptedServer> {
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: Record<string, unknown> | null = null;
      try {
        const parsed = raw.length > 0 ? (JSON.parse(raw) as unknown) : null;
        body = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
      } catch {
        body = null;
      }
      const path = req.url ?? '/';
      const record: RecordedRequest = { method: req.method ?? 'GET', path, headers: { ...req.headers }, body, raw, seat: null, step: null, unresolved: [] };
      requests.push(record);
      route({ req, res, path: path.split('?')[0] ?? path, body, raw, record }).catch((error: unknown) => {
        if (!res.headersSent) json(res, 500, { error: { message: `scripted server error: ${(error as Error).message}` } });
        else res.destroy();
      });
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    requests,
    requestsTo: (p) => requests.filter((r) => (r.path.split('?')[0] ?? r.path) === p),
    consumed: (seat) => state.consumed(seat),
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        timers.clear();
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

export function json(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function sseHead(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
}

/** Writes one SSE event (`event:` line only when `event` is given). */
export function sse(res: ServerResponse, event: string | null, data: unknown): void {
  const payload = typeof data === 'string' ? data : JSON.stringify(data);
  res.write(`${event === null ? '' : `event: ${event}\n`}data: ${payload}\n\n`);
}

/** Ends the response abruptly after what was written (a mid-stream disconnect). */
export function disconnect(res: ServerResponse): void {
  res.socket?.destroy();
  res.destroy();
}
