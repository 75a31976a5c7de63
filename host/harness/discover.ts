import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import type { Harness } from '../pipeline/ports';
import { ClaudeCodeHarness } from './claudeCode';
import { exitWords, runCli } from './cliProcess';
import { CodexHarness } from './codex';
import { OpenAiCompatibleHarness } from './openai';
import { isLoopback } from './toolLoop';

/**
 * Finds the vendor agent CLIs on this machine: `claude` (Claude Code) and `codex`, on PATH or
 * where RENNET_CLAUDE_BIN / RENNET_CODEX_BIN point, and asks each for `--version` (a short
 * timeout). A CLI that is missing says "not found on PATH"; one that fails says its exact error.
 * Below, the local model servers (Ollama, LM Studio) on their fixed loopback ports: listed with
 * each model's tool support, never a failure when they are down.
 * Nothing here logs in, calls a model, or reads the user's configuration.
 */

export type CliHarnessKind = 'claude-code' | 'codex';

export interface DiscoveredCli {
  kind: CliHarnessKind;
  /** The executable run (an absolute path when found), or the bare name when it was not found. */
  bin: string;
  /** The version the CLI printed (e.g. `2.1.197`), null when it did not answer. */
  version: string | null;
  available: boolean;
  /** Why it is unavailable, in words; null when available. */
  reason: string | null;
}

export interface DiscoverOptions {
  /** `--version` must answer within this many milliseconds (default 10000). */
  timeoutMs?: number;
}

const CLIS: ReadonlyArray<{ kind: CliHarnessKind; name: string; override: string }> = [
  { kind: 'claude-code', name: 'claude', override: 'RENNET_CLAUDE_BIN' },
  { kind: 'codex', name: 'codex', override: 'RENNET_CODEX_BIN' },
];

export async function discoverCliHarnesses(env: NodeJS.ProcessEnv = process.env, options: DiscoverOptions = {}): Promise<DiscoveredCli[]> {
  return Promise.all(CLIS.map((cli) => discoverOne(cli, env, options.timeoutMs ?? 10_000)));
}

async function discoverOne(cli: (typeof CLIS)[number], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<DiscoveredCli> {
  const unavailable = (bin: string, reason: string): DiscoveredCli => ({ kind: cli.kind, bin, version: null, available: false, reason });
  const override = env[cli.override]?.trim();
  let bin: string;
  if (override) {
    const found = isAbsolute(override) || override.includes('/') || override.includes('\\') ? executableAt(resolve(override)) : findOnPath(override, env);
    if (found === null) return unavailable(override, `${cli.override}=${override}: not found${isAbsolute(override) ? '' : ' on PATH'} or not executable`);
    bin = found;
  } else {
    const found = findOnPath(cli.name, env);
    if (found === null) return unavailable(cli.name, `${cli.name} not found on PATH`);
    bin = found;
  }
  const answer = await version(bin, env, timeoutMs);
  if (!answer.ok) return unavailable(bin, answer.reason);
  return { kind: cli.kind, bin, version: answer.version, available: true, reason: null };
}

/** The first executable named `name` on env.PATH (PATHEXT on Windows), or null. */
export function findOnPath(name: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const dirs = (env.PATH ?? env.Path ?? '').split(delimiter).filter((d) => d.length > 0);
  const exts = process.platform === 'win32' ? ['', ...(env.PATHEXT ?? '.EXE;.CMD;.BAT;.COM').split(';').filter((e) => e.length > 0)] : [''];
  for (const dir of dirs) {
    for (const ext of exts) {
      const found = executableAt(join(dir, name + ext));
      if (found !== null) return found;
    }
  }
  return null;
}

function executableAt(path: string): string | null {
  try {
    if (!statSync(path).isFile()) return null;
    accessSync(path, constants.X_OK);
    return path;
  } catch {
    return null;
  }
}

export type VersionAnswer = { ok: true; version: string } | { ok: false; reason: string };

/** `<bin> --version` in its own process group, killed at the timeout: the first `x.y.z` it prints, or why it did not answer (also used by host/rounds/cliWorkers.ts). */
export async function version(bin: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<VersionAnswer> {
  // Its own process group, killed whole on timeout (the npm `codex` launcher starts the native binary).
  const lines: string[] = [];
  const exit = await runCli({ bin, args: ['--version'], cwd: process.cwd(), env, signal: AbortSignal.timeout(timeoutMs), onLine: (l) => lines.push(l), graceMs: 500 });
  if (exit.spawnError !== null) return { ok: false, reason: `\`${bin} --version\` could not run: ${exit.spawnError}` };
  if (exit.aborted) return { ok: false, reason: `\`${bin} --version\` did not answer within ${timeoutMs} ms` };
  if (exit.code !== 0) {
    const said = (exit.stderr.trim() || lines.join('\n')).split(/\r?\n/).slice(0, 5).join('\n').slice(0, 1000);
    return { ok: false, reason: `\`${bin} --version\` ${exitWords(exit)}${said ? `: ${said}` : ''}` };
  }
  const first = (lines[0] ?? '').trim();
  if (!first) return { ok: false, reason: `\`${bin} --version\` printed nothing` };
  const semver = /\b\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?\b/.exec(first);
  return { ok: true, version: semver ? semver[0] : first.slice(0, 100) };
}

/** The harness for a discovered CLI (the CLI's `--harness` wiring builds its assignment from these). */
export function cliHarnessFor(found: DiscoveredCli, options: { model?: string; env?: NodeJS.ProcessEnv } = {}): Harness {
  return found.kind === 'claude-code' ? new ClaudeCodeHarness({ bin: found.bin, ...options }) : new CodexHarness({ bin: found.bin, ...options });
}

// ─── Local model servers: Ollama and LM Studio on this machine ───────────────────────────────

/**
 * Local discovery asks two fixed loopback endpoints and nothing else: Ollama and LM Studio at their
 * default ports, read-only (model lists and model details), each request bounded by
 * LOCAL_PROBE_TIMEOUT_MS and LOCAL_MAX_BODY_BYTES, no redirect followed. A server that is down is
 * "not running", never a failure of discovery. The addresses are not a setting: only a test passes
 * other (loopback) ones, through `discoverLocalModels({ baseUrls })`.
 *
 * Wire shapes read (docs/harnesses.md#local-model-servers-ollama-and-lm-studio):
 * - Ollama: `GET /api/tags` → `{ models: [{ name, remote_host?, remote_model? }] }`, then per model
 *   `POST /api/show {"model": name}` → `{ capabilities: ["completion", "tools", …] }` ("tools": it
 *   calls tools; no `capabilities`: an Ollama too old to say). A model with `remote_host` /
 *   `remote_model` (or a `…cloud` tag) is an Ollama cloud model: Ollama forwards it to its cloud,
 *   so it is listed and never used, and never asked for details.
 * - LM Studio: `GET /api/v1/models` (0.4+) → `{ models: [{ type: "llm"|"embedding", key,
 *   loaded_instances: [...], capabilities?: { trained_for_tool_use } }] }`; before 0.4,
 *   `GET /api/v0/models` → `{ data: [{ id, type, state, capabilities?: ["tool_use"] }] }`
 *   (its native API); when neither is served, `GET /v1/models` → `{ data: [{ id }] }` and tool
 *   support is unknown. A list where no model carries `capabilities` says nothing about tools
 *   (unknown); once any does, a model without "tool_use" has none. `type: "embeddings"` never chats.
 */

export type LocalServerKind = 'ollama' | 'lm-studio';

/** The only addresses local discovery asks, in the order `auto` prefers them. */
export const LOCAL_MODEL_SERVERS: ReadonlyArray<{ kind: LocalServerKind; label: string; baseUrl: string }> = [
  { kind: 'ollama', label: 'Ollama', baseUrl: 'http://127.0.0.1:11434' },
  { kind: 'lm-studio', label: 'LM Studio', baseUrl: 'http://127.0.0.1:1234' },
];

/** Each probe request must answer within this; a server is asked in at most two rounds (list, then details). */
export const LOCAL_PROBE_TIMEOUT_MS = 400;
/** Models listed per server; more are counted (`omitted`), not listed. */
export const LOCAL_MAX_MODELS = 100;
/** A probe answer larger than this is refused (a model's details carry its license text). */
export const LOCAL_MAX_BODY_BYTES = 2 * 1024 * 1024;
const LOCAL_MAX_NAME_CHARS = 200;

/** running: it answered its model list. not-running: nothing listens (connection refused). no-answer: it did not answer in time. error: something answered, not as the server. */
export type LocalServerStatus = 'running' | 'not-running' | 'no-answer' | 'error';

export interface LocalModel {
  /** The model's name as the server lists it (untrusted text: escape it before showing it). */
  name: string;
  /** true: the server says the model calls tools; false: it says it does not; null: it does not say. */
  tools: boolean | null;
  /** Where the server forwards this model when it is not run here (an Ollama cloud model), else null. Never used. */
  remote: string | null;
  /** LM Studio: whether the model is loaded now; null when the server does not say. */
  loaded: boolean | null;
}

export interface DiscoveredLocalServer {
  kind: LocalServerKind;
  label: string;
  /** The server's origin (`http://127.0.0.1:11434`); its OpenAI-compatible API is `<baseUrl>/v1`. */
  baseUrl: string;
  status: LocalServerStatus;
  /** Why it is not running or not usable, or a note on a running one (e.g. why tool support is unknown); null when nothing needs saying. */
  detail: string | null;
  models: LocalModel[];
  /** Models past LOCAL_MAX_MODELS, or with a name that is not one short string: not listed, not used. */
  omitted: number;
}

export interface LocalDiscoverOptions {
  /** Tests only: loopback origins that stand in for the servers' fixed addresses. */
  baseUrls?: Partial<Record<LocalServerKind, string>>;
  /** Per request (default LOCAL_PROBE_TIMEOUT_MS). */
  timeoutMs?: number;
}

/** Asks both local servers, in parallel; always answers both, in LOCAL_MODEL_SERVERS order. */
export async function discoverLocalModels(options: LocalDiscoverOptions = {}): Promise<DiscoveredLocalServer[]> {
  const timeoutMs = options.timeoutMs ?? LOCAL_PROBE_TIMEOUT_MS;
  return Promise.all(
    LOCAL_MODEL_SERVERS.map((server) => {
      const baseUrl = (options.baseUrls?.[server.kind] ?? server.baseUrl).replace(/\/+$/, '');
      if (!isLoopbackOrigin(baseUrl)) throw new Error(`local model discovery asks loopback addresses only, not ${baseUrl}`);
      const probe = server.kind === 'ollama' ? probeOllama : probeLmStudio;
      return probe({ kind: server.kind, label: server.label, baseUrl }, timeoutMs);
    }),
  );
}

/** A model `auto` may draft with: the server says it calls tools, and it runs on this machine. */
export function localModelUsable(model: LocalModel): boolean {
  return model.tools === true && model.remote === null;
}

/** The model `auto` drafts with: the first usable one of the first server (in LOCAL_MODEL_SERVERS order) that has one, loaded models first. */
export function firstLocalModel(servers: readonly DiscoveredLocalServer[]): { server: DiscoveredLocalServer; model: LocalModel } | null {
  for (const server of servers) {
    if (server.status !== 'running') continue;
    const usable = server.models.filter(localModelUsable);
    const model = usable.find((m) => m.loaded === true) ?? usable[0];
    if (model) return { server, model };
  }
  return null;
}

/**
 * The OpenAI-compatible harness for a local model: `<baseUrl>/v1`, no key, not streamed (Ollama's
 * streamed tool calls have been unreliable across versions; the non-streamed answer carries them whole).
 */
export function localHarnessFor(server: DiscoveredLocalServer, model: LocalModel): OpenAiCompatibleHarness {
  return new OpenAiCompatibleHarness({ baseUrl: `${server.baseUrl}/v1`, model: model.name, stream: false });
}

/** One short clause for a server, for a "no harness" hint: `Ollama (http://127.0.0.1:11434) not running (connection refused)`. */
export function localServerSummary(server: DiscoveredLocalServer): string {
  const at = `${server.label} (${server.baseUrl})`;
  if (server.status !== 'running') return `${at} ${localStatusWords(server)}`;
  const usable = server.models.filter(localModelUsable).length;
  if (usable > 0) return `${at} running with ${usable} tool-capable model${usable === 1 ? '' : 's'}`;
  const count = server.models.length;
  return `${at} running with no tool-capable model (${count === 0 ? 'no models' : `${count} model${count === 1 ? '' : 's'} without known tool support`})`;
}

/** What a server's status means, in words (no model names). */
export function localStatusWords(server: DiscoveredLocalServer): string {
  switch (server.status) {
    case 'running':
      return `running${server.detail ? ` (${server.detail})` : ''}`;
    case 'not-running':
      return `not running${server.detail ? ` (${server.detail})` : ''}`;
    case 'no-answer':
      return `not answering: ${server.detail ?? 'no answer'}`;
    case 'error':
      return `answering, but not as ${server.label}: ${server.detail ?? 'an unexpected answer'}`;
  }
}

type Probe = { kind: LocalServerKind; label: string; baseUrl: string };

type Fetched = { ok: true; json: unknown } | { ok: false; failure: 'refused' | 'timeout' | 'network' | 'http' | 'not-json' | 'too-large'; words: string };

async function probeOllama(server: Probe, timeoutMs: number): Promise<DiscoveredLocalServer> {
  const listed = await askJson(server.baseUrl, 'GET', '/api/tags', undefined, timeoutMs);
  if (!listed.ok) return notListed(server, listed);
  const raw = objectField(listed.json, 'models');
  if (!Array.isArray(raw)) return { ...server, status: 'error', detail: 'GET /api/tags answered JSON without a "models" list', models: [], omitted: 0 };
  const { entries, omitted } = boundedEntries(raw, (item) => stringField(item, 'name') ?? stringField(item, 'model'));
  const models: LocalModel[] = entries.map(({ item, name }) => ({ name, tools: null, remote: ollamaRemote(item, name), loaded: null }));
  const failures: string[] = [];
  let unreported = 0;
  await Promise.all(
    models.map(async (model) => {
      if (model.remote !== null) return; // Asking about a cloud model could reach the cloud.
      const shown = await askJson(server.baseUrl, 'POST', '/api/show', { model: model.name }, timeoutMs);
      if (!shown.ok) {
        failures.push(shown.words);
        return;
      }
      const capabilities = objectField(shown.json, 'capabilities');
      if (Array.isArray(capabilities)) model.tools = capabilities.includes('tools');
      else unreported++;
    }),
  );
  const notes: string[] = [];
  if (unreported > 0) notes.push(`POST /api/show reported no capabilities for ${unreported} model${unreported === 1 ? '' : 's'} (an Ollama too old to say), so tool support is unknown`);
  if (failures.length > 0) notes.push(`${failures.length} model${failures.length === 1 ? '' : 's'} could not be asked about tool support: ${failures[0]}`);
  return { ...server, status: 'running', detail: notes.length > 0 ? notes.join('; ') : null, models, omitted };
}

async function probeLmStudio(server: Probe, timeoutMs: number): Promise<DiscoveredLocalServer> {
  // LM Studio 0.4+: the v1 REST API. Each model says whether it was trained for tool use.
  const v1 = await askJson(server.baseUrl, 'GET', '/api/v1/models', undefined, timeoutMs);
  if (!v1.ok && (v1.failure === 'refused' || v1.failure === 'timeout' || v1.failure === 'network')) return notListed(server, v1);
  const v1Models = v1.ok ? objectField(v1.json, 'models') : undefined;
  if (Array.isArray(v1Models)) {
    const { entries, omitted } = boundedEntries(v1Models, (item) => stringField(item, 'key'));
    const models = entries.map(({ item, name }): LocalModel => {
      const trained = objectField(objectField(item, 'capabilities'), 'trained_for_tool_use');
      const instances = objectField(item, 'loaded_instances');
      const tools = stringField(item, 'type') === 'embedding' ? false : typeof trained === 'boolean' ? trained : null;
      return { name, tools, remote: null, loaded: Array.isArray(instances) ? instances.length > 0 : null };
    });
    const unknown = models.filter((m) => m.tools === null).length;
    const detail = unknown > 0 ? `GET /api/v1/models did not say whether ${unknown} model${unknown === 1 ? '' : 's'} call tools` : null;
    return { ...server, status: 'running', detail, models, omitted };
  }
  if (!v1.ok && v1.failure === 'http' && /\b401\b/.test(v1.words)) {
    return { ...server, status: 'error', detail: `${v1.words}: this LM Studio requires an API token; Rennet reads its models only without one`, models: [], omitted: 0 };
  }
  const native = await askJson(server.baseUrl, 'GET', '/api/v0/models', undefined, timeoutMs);
  if (!native.ok && (native.failure === 'refused' || native.failure === 'timeout' || native.failure === 'network')) return notListed(server, native);
  const nativeData = native.ok ? objectField(native.json, 'data') : undefined;
  if (Array.isArray(nativeData)) {
    const { entries, omitted } = boundedEntries(nativeData, (item) => stringField(item, 'id'));
    // Models without tool use carry no `capabilities`, and an LM Studio before capabilities carries none at all.
    const reports = nativeData.some((item) => Array.isArray(objectField(item, 'capabilities')));
    const models = entries.map(({ item, name }): LocalModel => {
      const capabilities = objectField(item, 'capabilities');
      const state = stringField(item, 'state');
      const tools = stringField(item, 'type') === 'embeddings' ? false : reports ? Array.isArray(capabilities) && capabilities.includes('tool_use') : null;
      return { name, tools, remote: null, loaded: state === 'loaded' ? true : state === 'not-loaded' ? false : null };
    });
    const detail = reports || models.length === 0 ? null : 'GET /api/v0/models reported no capabilities, so tool support is unknown';
    return { ...server, status: 'running', detail, models, omitted };
  }
  const why = native.ok ? 'GET /api/v0/models answered JSON without a "data" list' : native.words;
  const listed = await askJson(server.baseUrl, 'GET', '/v1/models', undefined, timeoutMs);
  if (!listed.ok) return { ...notListed(server, listed), detail: `${why}; ${listed.words}` };
  const data = objectField(listed.json, 'data');
  if (!Array.isArray(data)) return { ...server, status: 'error', detail: `${why}; GET /v1/models answered JSON without a "data" list`, models: [], omitted: 0 };
  const { entries, omitted } = boundedEntries(data, (item) => stringField(item, 'id'));
  return {
    ...server,
    status: 'running',
    detail: `${why}, so tool support is unknown (models from GET /v1/models)`,
    models: entries.map(({ name }) => ({ name, tools: null, remote: null, loaded: null })),
    omitted,
  };
}

function notListed(server: Probe, fetched: Extract<Fetched, { ok: false }>): DiscoveredLocalServer {
  const status: LocalServerStatus = fetched.failure === 'refused' ? 'not-running' : fetched.failure === 'timeout' ? 'no-answer' : 'error';
  return { ...server, status, detail: fetched.words, models: [], omitted: 0 };
}

/** Ollama cloud models: `remote_host` / `remote_model` in the list, or a tag ending in `cloud`. */
function ollamaRemote(item: unknown, name: string): string | null {
  const host = stringField(item, 'remote_host');
  if (host) return host.slice(0, LOCAL_MAX_NAME_CHARS);
  if (stringField(item, 'remote_model') || /[:-]cloud$/i.test(name)) return 'Ollama cloud';
  return null;
}

function boundedEntries(items: unknown[], nameOf: (item: unknown) => string | undefined): { entries: Array<{ item: unknown; name: string }>; omitted: number } {
  const entries: Array<{ item: unknown; name: string }> = [];
  let omitted = 0;
  for (const item of items) {
    const name = nameOf(item);
    if (name === undefined || name.length === 0 || name.length > LOCAL_MAX_NAME_CHARS || entries.length >= LOCAL_MAX_MODELS) omitted++;
    else entries.push({ item, name });
  }
  return { entries, omitted };
}

function objectField(value: unknown, key: string): unknown {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>)[key] : undefined;
}

function stringField(value: unknown, key: string): string | undefined {
  const field = objectField(value, key);
  return typeof field === 'string' ? field : undefined;
}

/** One probe request: JSON in and out, within `timeoutMs`, at most LOCAL_MAX_BODY_BYTES, no redirect. */
async function askJson(baseUrl: string, method: 'GET' | 'POST', path: string, body: unknown, timeoutMs: number): Promise<Fetched> {
  const what = `${method} ${path}`;
  const signal = AbortSignal.timeout(timeoutMs);
  const timedOut = (): Fetched => ({ ok: false, failure: 'timeout', words: `${what} did not answer within ${timeoutMs} ms` });
  let response: Response;
  try {
    response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal,
      redirect: 'error',
    });
  } catch (error) {
    if (signal.aborted) return timedOut();
    const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
    if (cause?.code === 'ECONNREFUSED') return { ok: false, failure: 'refused', words: 'connection refused' };
    const reason = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : (error as Error).message;
    return { ok: false, failure: 'network', words: `${what} failed: ${reason}` };
  }
  let text: string | null;
  try {
    text = await readBounded(response, LOCAL_MAX_BODY_BYTES);
  } catch (error) {
    if (signal.aborted) return timedOut();
    return { ok: false, failure: 'network', words: `${what} failed while answering: ${(error as Error).message}` };
  }
  if (!response.ok) return { ok: false, failure: 'http', words: `${what} answered HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}` };
  if (text === null) return { ok: false, failure: 'too-large', words: `${what} answered more than ${LOCAL_MAX_BODY_BYTES} bytes` };
  try {
    return { ok: true, json: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, failure: 'not-json', words: `${what} answered something that is not JSON` };
  }
}

/** The body as text, or null past `max` bytes (the rest is not read). */
async function readBounded(response: Response, max: number): Promise<string | null> {
  if (!response.body) return '';
  const reader: ReadableStreamDefaultReader<Uint8Array> = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function isLoopbackOrigin(text: string): boolean {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' && isLoopback(url);
  } catch {
    return false;
  }
}
