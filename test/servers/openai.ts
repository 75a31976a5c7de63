import type { ServerResponse } from 'node:http';
import {
  BAD_JSON_ARGUMENTS,
  DEFAULT_EXHAUSTED_TEXT,
  DEFAULT_USAGE,
  ScriptState,
  disconnect,
  json,
  oversized,
  pieces,
  sleep,
  sse,
  sseHead,
  startServer,
  substituteIds,
  textOf,
  type RecordedRequest,
  type ReturnedResult,
  type ScriptInput,
  type ScriptedServer,
  type ServerOptions,
  type Step,
} from './common';

/**
 * A scripted OpenAI server on 127.0.0.1 (port 0), two wire formats over one script:
 * - Chat Completions, `POST /v1/chat/completions`: `tool_calls` with JSON-string arguments; JSON
 *   or streaming SSE (`delta.tool_calls[i].function.arguments` pieces, a final usage chunk when
 *   `stream_options.include_usage`, `data: [DONE]`). Tool results: `role: 'tool'` messages.
 * - Responses, `POST /v1/responses` (what Codex speaks): SSE `response.created`,
 *   `response.output_item.added`, `response.output_text.delta`, `response.output_item.done`,
 *   `response.completed` (with usage); JSON when `stream` is not true. Tools may come as
 *   `{type:'namespace', name:'mcp__rennet', tools:[{type:'function', name}]}` (Codex's MCP tools);
 *   a call to one of them carries `namespace`. Tool results: `function_call_output` input items.
 * - `GET /v1/models`.
 *
 * Base URL for clients: `server.baseUrl` (`<origin>/v1`).
 */

export interface ScriptedOpenAiServer extends ScriptedServer {
  /** `<origin>/v1`, what OpenAI clients take as their base URL. */
  readonly baseUrl: string;
}

interface Call {
  id: string;
  name: string;
  namespace: string | null;
  arguments: string;
}

interface Answer {
  text: string | null;
  calls: Call[];
  usage: { input: number; output: number } | null;
  fault: 'disconnect' | { status: number } | null;
}

export async function startOpenAiServer(script: ScriptInput, options: ServerOptions = {}): Promise<ScriptedOpenAiServer> {
  const state = new ScriptState(script, options);
  const timers = new Set<NodeJS.Timeout>();
  const exhausted = options.exhaustedText ?? DEFAULT_EXHAUSTED_TEXT;
  const models = options.models ?? ['scripted-model'];

  const server = await startServer(
    async ({ req, res, path, body, raw, record }) => {
      if (req.method === 'GET' && path === '/v1/models') {
        return json(res, 200, { object: 'list', data: models.map((id) => ({ id, object: 'model', created: 1767225600, owned_by: 'rennet-scripted' })) });
      }
      if (req.method !== 'POST') return json(res, 404, openAiError(`no route ${req.method} ${path}`, 'not_found'));
      if (body === null) return json(res, 400, openAiError('the body is not a JSON object', 'invalid_request_error'));
      const api = path === '/v1/chat/completions' ? 'chat' : path === '/v1/responses' ? 'responses' : null;
      if (api === null) return json(res, 404, openAiError(`no route POST ${path}`, 'not_found'));

      const resolved = state.take(body, raw);
      record.seat = resolved.seat;
      record.step = resolved.index;
      const step: Step = resolved.step ?? { text: exhausted };
      if (step.delayMs !== undefined) await sleep(step.delayMs, timers);
      if (step.waitFor !== undefined) await step.waitFor();
      const answer = answerFor(step, body, api, state, record);
      if (answer.fault !== null && typeof answer.fault === 'object') {
        return json(res, answer.fault.status, openAiError(`scripted failure (HTTP ${answer.fault.status}): the model server broke on purpose`, 'server_error'));
      }
      const model = typeof body['model'] === 'string' ? body['model'] : (models[0] ?? 'scripted-model');
      const streaming = body['stream'] === true;
      if (api === 'chat') {
        if (streaming) return chatStream(res, answer, model, body, state, timers);
        return finishJson(res, chatJson(answer, model, state), answer, timers);
      }
      if (streaming) return responsesStream(res, answer, model, state, timers);
      return finishJson(res, responsesJson(answer, model, state, state.mintId('resp_')), answer, timers);
    },
    state,
    timers,
  );
  return { ...server, baseUrl: `${server.origin}/v1` };
}

function openAiError(message: string, type: string) {
  return { error: { message, type, param: null, code: null } };
}

async function finishJson(res: ServerResponse, value: unknown, answer: Answer, timers: Set<NodeJS.Timeout>): Promise<void> {
  if (answer.fault !== 'disconnect') return json(res, 200, value);
  const text = JSON.stringify(value);
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.write(text.slice(0, Math.floor(text.length / 2)));
  await sleep(20, timers);
  disconnect(res);
}

/** The tool results of a Chat Completions or Responses conversation, in order. */
export function openAiToolResults(body: Record<string, unknown>): ReturnedResult[] {
  const out: ReturnedResult[] = [];
  const messages = Array.isArray(body['messages']) ? (body['messages'] as Array<Record<string, unknown>>) : [];
  for (const m of messages) if (m['role'] === 'tool') out.push({ callId: String(m['tool_call_id'] ?? ''), text: textOf(m['content']) });
  const input = Array.isArray(body['input']) ? (body['input'] as Array<Record<string, unknown>>) : [];
  for (const item of input) if (item['type'] === 'function_call_output') out.push({ callId: String(item['call_id'] ?? ''), text: textOf(item['output']) });
  return out;
}

/** Offered tool names, each with the namespace it sits in (Responses API namespaces). */
function offeredTools(body: Record<string, unknown>): Array<{ name: string; namespace: string | null }> {
  const tools = Array.isArray(body['tools']) ? (body['tools'] as Array<Record<string, unknown>>) : [];
  const out: Array<{ name: string; namespace: string | null }> = [];
  for (const t of tools) {
    if (t['type'] === 'namespace' && Array.isArray(t['tools'])) {
      for (const inner of t['tools'] as Array<Record<string, unknown>>) if (typeof inner['name'] === 'string') out.push({ name: inner['name'], namespace: String(t['name']) });
    } else if (t['function'] !== null && typeof t['function'] === 'object') {
      const name = (t['function'] as Record<string, unknown>)['name'];
      if (typeof name === 'string') out.push({ name, namespace: null });
    } else if (typeof t['name'] === 'string') out.push({ name: t['name'], namespace: null });
  }
  return out;
}

function pick(name: string, offered: Array<{ name: string; namespace: string | null }>): { name: string; namespace: string | null } {
  return offered.find((o) => o.name === name) ?? offered.find((o) => o.name.endsWith(`__${name}`)) ?? { name, namespace: null };
}

function answerFor(step: Step, body: Record<string, unknown>, api: 'chat' | 'responses', state: ScriptState, record: RecordedRequest): Answer {
  const usage = step.usage === undefined ? DEFAULT_USAGE : step.usage;
  const offered = offeredTools(body);
  const callId = () => state.mintId(api === 'chat' ? 'call_' : 'call_');
  if (step.malformed !== undefined) {
    switch (step.malformed) {
      case 'http-500':
        return { text: null, calls: [], usage, fault: { status: step.status ?? 500 } };
      case 'disconnect-mid-stream':
        return { text: 'I will start reading the change and then', calls: [], usage, fault: 'disconnect' };
      case 'oversized-text':
        return { text: oversized(step.bytes ?? 256 * 1024), calls: [], usage, fault: null };
      case 'unknown-tool':
        return { text: null, calls: [{ id: callId(), name: step.name ?? 'no_such_tool', namespace: null, arguments: '{}' }], usage, fault: null };
      case 'bad-json-arguments': {
        const target = pick(step.name ?? offered[0]?.name ?? 'cite', offered);
        return { text: null, calls: [{ id: callId(), ...target, arguments: BAD_JSON_ARGUMENTS }], usage, fault: null };
      }
    }
  }
  const text = step.text !== undefined && step.text.length > 0 ? step.text : null;
  if (step.toolCalls === undefined) return { text, calls: [], usage, fault: null };
  const results = openAiToolResults(body);
  const calls: Call[] = step.toolCalls.map((call) => {
    const id = callId();
    if (call.as !== undefined) state.asByCallId.set(id, call.as);
    const { value, unresolved } = substituteIds(call.input ?? {}, results, state.asByCallId);
    record.unresolved.push(...unresolved);
    return { id, ...pick(call.name, offered), arguments: JSON.stringify(value) };
  });
  return { text, calls, usage, fault: null };
}

// ─── Chat Completions ────────────────────────────────────────────────────────────────────────

function chatUsage(usage: Answer['usage']) {
  return usage === null ? undefined : { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output };
}

function chatJson(answer: Answer, model: string, state: ScriptState) {
  const message: Record<string, unknown> = { role: 'assistant', content: answer.text };
  if (answer.calls.length > 0) message['tool_calls'] = answer.calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
  const value: Record<string, unknown> = {
    id: state.mintId('chatcmpl-'),
    object: 'chat.completion',
    created: 1767225600,
    model,
    choices: [{ index: 0, message, finish_reason: answer.calls.length > 0 ? 'tool_calls' : 'stop' }],
  };
  const usage = chatUsage(answer.usage);
  if (usage !== undefined) value['usage'] = usage;
  return value;
}

async function chatStream(res: ServerResponse, answer: Answer, model: string, body: Record<string, unknown>, state: ScriptState, timers: Set<NodeJS.Timeout>): Promise<void> {
  sseHead(res);
  const id = state.mintId('chatcmpl-');
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    sse(res, null, { id, object: 'chat.completion.chunk', created: 1767225600, model, choices: [{ index: 0, delta, finish_reason: finish }] });
  chunk({ role: 'assistant', content: '' }, null);
  if (answer.text !== null) {
    for (const piece of pieces(answer.text, 16 * 1024)) {
      chunk({ content: piece }, null);
      if (answer.fault === 'disconnect') {
        await sleep(20, timers);
        return disconnect(res);
      }
    }
  }
  for (const [index, call] of answer.calls.entries()) {
    chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }, null);
    for (const piece of pieces(call.arguments, 24)) chunk({ tool_calls: [{ index, function: { arguments: piece } }] }, null);
  }
  chunk({}, answer.calls.length > 0 ? 'tool_calls' : 'stop');
  const options = body['stream_options'];
  const includeUsage = options !== null && typeof options === 'object' && (options as Record<string, unknown>)['include_usage'] === true;
  const usage = chatUsage(answer.usage);
  if (includeUsage && usage !== undefined) sse(res, null, { id, object: 'chat.completion.chunk', created: 1767225600, model, choices: [], usage });
  sse(res, null, '[DONE]');
  res.end();
}

// ─── Responses ───────────────────────────────────────────────────────────────────────────────

function responsesItems(answer: Answer, state: ScriptState): Array<Record<string, unknown>> {
  const items: Array<Record<string, unknown>> = [];
  if (answer.text !== null) {
    items.push({ type: 'message', id: state.mintId('msg_'), status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: answer.text, annotations: [] }] });
  }
  for (const c of answer.calls) {
    const item: Record<string, unknown> = { type: 'function_call', id: state.mintId('fc_'), status: 'completed', call_id: c.id, name: c.name, arguments: c.arguments };
    if (c.namespace !== null) item['namespace'] = c.namespace;
    items.push(item);
  }
  return items;
}

function responsesUsage(usage: Answer['usage']) {
  return usage === null
    ? null
    : {
        input_tokens: usage.input,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: usage.output,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: usage.input + usage.output,
      };
}

function responsesJson(answer: Answer, model: string, state: ScriptState, id: string, items = responsesItems(answer, state)) {
  return { id, object: 'response', created_at: 1767225600, status: 'completed', model, output: items, usage: responsesUsage(answer.usage) };
}

async function responsesStream(res: ServerResponse, answer: Answer, model: string, state: ScriptState, timers: Set<NodeJS.Timeout>): Promise<void> {
  sseHead(res);
  const id = state.mintId('resp_');
  let seq = 0;
  const ev = (type: string, data: Record<string, unknown>) => sse(res, type, { type, sequence_number: seq++, ...data });
  ev('response.created', { response: { id, object: 'response', created_at: 1767225600, status: 'in_progress', model, output: [] } });
  const items = responsesItems(answer, state);
  for (const [index, item] of items.entries()) {
    if (item['type'] === 'message') {
      ev('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', content: [] } });
      for (const piece of pieces(answer.text ?? '', 16 * 1024)) {
        ev('response.output_text.delta', { item_id: item['id'], output_index: index, content_index: 0, delta: piece });
        if (answer.fault === 'disconnect') {
          await sleep(20, timers);
          return disconnect(res);
        }
      }
    } else {
      ev('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', arguments: '' } });
      for (const piece of pieces(String(item['arguments']), 24)) ev('response.function_call_arguments.delta', { item_id: item['id'], output_index: index, delta: piece });
    }
    ev('response.output_item.done', { output_index: index, item });
  }
  ev('response.completed', { response: responsesJson(answer, model, state, id, items) });
  res.end();
}
