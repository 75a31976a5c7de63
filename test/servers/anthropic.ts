import type { ServerResponse } from 'node:http';
import {
  BAD_JSON_ARGUMENTS,
  DEFAULT_EXHAUSTED_TEXT,
  DEFAULT_USAGE,
  ScriptState,
  disconnect,
  json,
  offeredName,
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
 * A scripted Anthropic Messages server on 127.0.0.1 (port 0). Speaks what the real HTTP adapter
 * and Claude Code send: `POST /v1/messages` (with or without `?beta=true`), JSON or streaming SSE
 * (`stream: true`), `POST /v1/messages/count_tokens`, `GET /v1/models`. Tool results come back as
 * user messages with `tool_result` blocks; their text feeds `$last`/`$n`/`$name` substitution.
 *
 * Base URL for clients: `server.origin` (the SDK and Claude Code add `/v1/messages` themselves).
 */

export type ScriptedAnthropicServer = ScriptedServer;

type Block = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: unknown; rawInput?: string };

interface Answer {
  blocks: Block[];
  stopReason: 'end_turn' | 'tool_use';
  usage: { input: number; output: number } | null;
  fault: 'disconnect' | { status: number } | null;
}

export async function startAnthropicServer(script: ScriptInput, options: ServerOptions = {}): Promise<ScriptedAnthropicServer> {
  const state = new ScriptState(script, options);
  const timers = new Set<NodeJS.Timeout>();
  const exhausted = options.exhaustedText ?? DEFAULT_EXHAUSTED_TEXT;
  const models = options.models ?? ['scripted-model'];

  return startServer(
    async ({ req, res, path, body, raw, record }) => {
      if (req.method === 'GET' && (path === '/v1/models' || path.startsWith('/v1/models/'))) {
        const data = models.map((id) => ({ type: 'model', id, display_name: id, created_at: '2026-01-01T00:00:00Z' }));
        if (path !== '/v1/models') return json(res, 200, data.find((m) => `/v1/models/${m.id}` === path) ?? data[0]);
        return json(res, 200, { data, has_more: false, first_id: models[0] ?? null, last_id: models[models.length - 1] ?? null });
      }
      if (req.method !== 'POST') return json(res, 404, anthropicError('not_found_error', `no route ${req.method} ${path}`));
      if (body === null) return json(res, 400, anthropicError('invalid_request_error', 'the body is not a JSON object'));
      if (path === '/v1/messages/count_tokens') return json(res, 200, { input_tokens: Math.max(1, Math.ceil(raw.length / 4)) });
      if (path !== '/v1/messages') return json(res, 404, anthropicError('not_found_error', `no route POST ${path}`));

      const resolved = state.take(body, raw);
      record.seat = resolved.seat;
      record.step = resolved.index;
      const step: Step = resolved.step ?? { text: exhausted };
      if (step.delayMs !== undefined) await sleep(step.delayMs, timers);
      if (step.waitFor !== undefined) await step.waitFor();
      const answer = answerFor(step, body, state, record);
      const model = typeof body['model'] === 'string' ? body['model'] : (models[0] ?? 'scripted-model');
      if (answer.fault !== null && typeof answer.fault === 'object') {
        return json(res, answer.fault.status, anthropicError('api_error', `scripted failure (HTTP ${answer.fault.status}): the model server broke on purpose`));
      }
      if (body['stream'] === true) return stream(res, answer, model, state, timers);
      const message = {
        id: state.mintId('msg_'),
        type: 'message',
        role: 'assistant',
        model,
        content: answer.blocks.map((b) => (b.type === 'text' ? b : { type: 'tool_use', id: b.id, name: b.name, input: b.rawInput ?? b.input })),
        stop_reason: answer.stopReason,
        stop_sequence: null,
        usage: { input_tokens: answer.usage?.input ?? 0, output_tokens: answer.usage?.output ?? 0 },
      };
      if (answer.usage === null) delete (message as { usage?: unknown }).usage;
      if (answer.fault === 'disconnect') {
        const text = JSON.stringify(message);
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.write(text.slice(0, Math.floor(text.length / 2)));
        await sleep(20, timers);
        return disconnect(res);
      }
      return json(res, 200, message);
    },
    state,
    timers,
  );
}

function anthropicError(type: string, message: string) {
  return { type: 'error', error: { type, message } };
}

/** The tool results of an Anthropic conversation, in order. */
export function anthropicToolResults(body: Record<string, unknown>): ReturnedResult[] {
  const out: ReturnedResult[] = [];
  const messages = Array.isArray(body['messages']) ? (body['messages'] as Array<Record<string, unknown>>) : [];
  for (const m of messages) {
    if (m['role'] !== 'user' || !Array.isArray(m['content'])) continue;
    for (const block of m['content'] as Array<Record<string, unknown>>) {
      if (block['type'] === 'tool_result') out.push({ callId: String(block['tool_use_id'] ?? ''), text: textOf(block['content']) });
    }
  }
  return out;
}

function offeredTools(body: Record<string, unknown>): string[] {
  const tools = Array.isArray(body['tools']) ? (body['tools'] as Array<Record<string, unknown>>) : [];
  return tools.map((t) => (typeof t['name'] === 'string' ? t['name'] : '')).filter((n) => n.length > 0);
}

function answerFor(step: Step, body: Record<string, unknown>, state: ScriptState, record: RecordedRequest): Answer {
  const usage = step.usage === undefined ? DEFAULT_USAGE : step.usage;
  const offered = offeredTools(body);
  if (step.malformed !== undefined) {
    switch (step.malformed) {
      case 'http-500':
        return { blocks: [], stopReason: 'end_turn', usage, fault: { status: step.status ?? 500 } };
      case 'disconnect-mid-stream':
        return { blocks: [{ type: 'text', text: 'I will start reading the change and then' }], stopReason: 'end_turn', usage, fault: 'disconnect' };
      case 'oversized-text':
        return { blocks: [{ type: 'text', text: oversized(step.bytes ?? 256 * 1024) }], stopReason: 'end_turn', usage, fault: null };
      case 'unknown-tool':
        return { blocks: [{ type: 'tool_use', id: state.mintId('toolu_'), name: step.name ?? 'no_such_tool', input: {} }], stopReason: 'tool_use', usage, fault: null };
      case 'bad-json-arguments':
        return {
          blocks: [{ type: 'tool_use', id: state.mintId('toolu_'), name: offeredName(step.name ?? offered[0] ?? 'cite', offered), input: {}, rawInput: BAD_JSON_ARGUMENTS }],
          stopReason: 'tool_use',
          usage,
          fault: null,
        };
    }
  }
  const blocks: Block[] = [];
  if (step.text !== undefined && step.text.length > 0) blocks.push({ type: 'text', text: step.text });
  if (step.toolCalls === undefined) return { blocks, stopReason: 'end_turn', usage, fault: null };
  const results = anthropicToolResults(body);
  for (const call of step.toolCalls) {
    const id = state.mintId('toolu_');
    if (call.as !== undefined) state.asByCallId.set(id, call.as);
    const { value, unresolved } = substituteIds(call.input ?? {}, results, state.asByCallId);
    record.unresolved.push(...unresolved);
    blocks.push({ type: 'tool_use', id, name: offeredName(call.name, offered), input: value });
  }
  return { blocks, stopReason: 'tool_use', usage, fault: null };
}

async function stream(res: ServerResponse, answer: Answer, model: string, state: ScriptState, timers: Set<NodeJS.Timeout>): Promise<void> {
  sseHead(res);
  const usage = answer.usage;
  sse(res, 'message_start', {
    type: 'message_start',
    message: {
      id: state.mintId('msg_'),
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      ...(usage === null ? {} : { usage: { input_tokens: usage.input, output_tokens: 1 } }),
    },
  });
  sse(res, 'ping', { type: 'ping' });
  for (const [index, block] of answer.blocks.entries()) {
    if (block.type === 'text') {
      sse(res, 'content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      for (const piece of pieces(block.text, 16 * 1024)) {
        sse(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } });
        if (answer.fault === 'disconnect') {
          await sleep(20, timers);
          return disconnect(res);
        }
      }
    } else {
      sse(res, 'content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
      const args = block.rawInput ?? JSON.stringify(block.input);
      for (const piece of pieces(args, 24)) sse(res, 'content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } });
    }
    sse(res, 'content_block_stop', { type: 'content_block_stop', index });
  }
  sse(res, 'message_delta', {
    type: 'message_delta',
    delta: { stop_reason: answer.stopReason, stop_sequence: null },
    ...(usage === null ? {} : { usage: { input_tokens: usage.input, output_tokens: usage.output } }),
  });
  sse(res, 'message_stop', { type: 'message_stop' });
  res.end();
}
