import assert from 'node:assert/strict';
import { ANTHROPIC_VERSION, AnthropicHarness } from '../../../host/harness/anthropic';
import { SEAT_SYSTEM_PROMPT } from '../../../host/harness/httpHarness';
import { MAX_TEXT_BYTES, STREAM_ENDED } from '../../../host/harness/toolLoop';
import type { ToolPort } from '../../../host/pipeline/ports';
import { RESULT_MAX_BYTES } from '../../../protocol/board';
import { startAnthropicServer, type ScriptedAnthropicServer } from '../../servers/anthropic';
import type { ScriptInput, Step } from '../../servers/common';
import { SEQUENCE_STEPS, seatKit, turnRequest, type SeatKit } from '../../servers/seatKit';

/** The Anthropic Messages adapter and its tool loop, against the scripted server, through a real BoardSeat. */

type Msg = { role: string; content: Array<Record<string, unknown>> };
const messagesOf = (body: Record<string, unknown> | null) => (body?.['messages'] ?? []) as Msg[];
const toolResultsOf = (body: Record<string, unknown> | null) => messagesOf(body).flatMap((m) => m.content.filter((b) => b['type'] === 'tool_result'));
const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

describe('harness: anthropic (Messages API over HTTP, scripted server)', function () {
  this.timeout(20_000);
  let kit: SeatKit;
  let server: ScriptedAnthropicServer | null = null;

  beforeEach(async () => {
    kit = await seatKit();
  });
  afterEach(async () => {
    await server?.close();
    server = null;
    kit.cleanup();
  });

  async function serve(script: ScriptInput) {
    server = await startAnthropicServer(script);
    return server;
  }
  const harness = (s: ScriptedAnthropicServer, extra: Partial<ConstructorParameters<typeof AnthropicHarness>[0]> = {}) =>
    new AnthropicHarness({ baseUrl: s.origin, apiKey: 'sk-test-secret', model: 'claude-scripted', maxTokens: 1024, ...extra });

  it('writes a Sequence board that settles; usage summed; events; the request bodies carry tools, system, key', async () => {
    const s = await serve({ seats: { 'sequence:drafter': SEQUENCE_STEPS } });
    const h = harness(s);
    assert.equal(h.kind, 'anthropic');
    assert.equal(h.origin, 'claude');
    assert.equal(h.model, 'claude-scripted');
    const request = turnRequest(kit.tools);
    const result = await h.runTurn(request);

    assert.deepEqual(result, { outcome: 'ended', message: null, usage: { inputTokens: 600, outputTokens: 120, priceUsd: null } });
    const board = kit.seat.snapshot();
    assert.equal(board.status, 'finished', JSON.stringify(board.lastFinish));
    assert.deepEqual(
      board.elements.map((e) => e.kind),
      ['code_ref', 'section', 'order_step'],
    );
    assert.equal(kit.seat.stats().refusals, 0);

    const tools = ['cite', 'add_section', 'add_order_step', 'set_document', 'finish'];
    assert.deepEqual(
      request.events.filter((e) => e.type === 'tool-call').map((e) => (e as { name: string }).name),
      tools,
    );
    assert.deepEqual(
      request.events.filter((e) => e.type === 'tool-result').map((e) => [(e as { name: string }).name, (e as { isError: boolean }).isError]),
      tools.map((t) => [t, false]),
    );
    assert.deepEqual(
      request.events.filter((e) => e.type === 'text'),
      [{ type: 'text', text: 'The board is written.' }],
    );

    const posts = s.requestsTo('/v1/messages');
    assert.equal(posts.length, 6);
    for (const r of posts) {
      assert.equal(r.headers['x-api-key'], 'sk-test-secret');
      assert.equal(r.headers['anthropic-version'], ANTHROPIC_VERSION);
      assert.equal(r.body?.['stream'], true);
      assert.equal(r.body?.['model'], 'claude-scripted');
      assert.equal(r.body?.['max_tokens'], 1024);
      assert.deepEqual(r.body?.['system'], [{ type: 'text', text: SEAT_SYSTEM_PROMPT, cache_control: { type: 'ephemeral' } }]);
      assert.equal(r.body?.['tool_choice'], undefined);
      const offered = r.body?.['tools'] as Array<{ name: string; description: string; input_schema: Record<string, unknown> }>;
      assert.deepEqual(
        offered.map((t) => t.name),
        kit.tools.tools.map((t) => t.name),
      );
      // The stable prefix ends in cache breakpoints: the last tool, the system prompt, the seat prompt.
      assert.deepEqual((offered.at(-1) as { cache_control?: unknown }).cache_control, { type: 'ephemeral' });
      assert.equal(offered.filter((t) => (t as { cache_control?: unknown }).cache_control !== undefined).length, 1);
      for (const t of offered) {
        assert.equal(t.input_schema['type'], 'object', t.name);
        assert.ok(t.description.length > 0);
      }
      assert.deepEqual(r.unresolved, []);
    }
    // The turn's prompt is the first user message; each later request carries the results so far.
    assert.deepEqual(messagesOf(posts[0]!.body), [{ role: 'user', content: [{ type: 'text', text: request.prompt, cache_control: { type: 'ephemeral' } }] }]);
    const last = posts[5]!.body;
    assert.equal(toolResultsOf(last).length, 5);
    assert.deepEqual(
      messagesOf(last).map((m) => m.role),
      ['user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user'],
    );
    const step = messagesOf(last)[5]!.content[0]!;
    assert.equal(step['name'], 'add_order_step');
    assert.match(JSON.stringify(step['input']), /"span":"e\d+","parent_id":"e\d+"/);
  });

  it('sends no key header when none is given (loopback) and refuses a remote base URL without a key', async () => {
    const s = await serve([{ text: 'Nothing to write.' }]);
    const result = await new AnthropicHarness({ baseUrl: s.origin, model: 'claude-scripted', maxTokens: 1024 }).runTurn(turnRequest(kit.tools));
    assert.equal(result.outcome, 'ended');
    assert.equal(s.requests[0]!.headers['x-api-key'], undefined);
    assert.equal(s.requests[0]!.headers['authorization'], undefined);
    assert.throws(() => new AnthropicHarness({ baseUrl: 'https://api.anthropic.com', model: 'm' }), /an API key is required/);
  });

  it('bad JSON arguments: the tool is not called, the model reads an error result, the turn goes on and settles', async () => {
    const s = await serve([{ malformed: 'bad-json-arguments', name: 'cite' }, ...SEQUENCE_STEPS]);
    const request = turnRequest(kit.tools);
    const result = await harness(s).runTurn(request);
    assert.equal(result.outcome, 'ended', result.message ?? '');
    assert.equal(kit.seat.snapshot().status, 'finished');
    assert.equal(kit.seat.stats().calls, 5, 'the malformed call never reached the seat');
    const [first] = toolResultsOf(s.requestsTo('/v1/messages')[1]!.body);
    assert.equal(first?.['is_error'], true);
    assert.match(String(first?.['content']), /arguments of this cite call were not valid JSON .*the tool was not called/);
    assert.deepEqual(request.events.slice(0, 2), [
      { type: 'tool-call', name: 'cite' },
      { type: 'tool-result', name: 'cite', isError: true },
    ]);
    // The malformed call goes back in the thread with an empty input (the API needs an object).
    const assistant = messagesOf(s.requestsTo('/v1/messages')[1]!.body)[1]!;
    assert.deepEqual(assistant.content[0]!['input'], {});
  });

  it('an unknown tool gets an error result naming the seat tools; the turn goes on', async () => {
    const s = await serve([{ malformed: 'unknown-tool', name: 'delete_everything' }, { text: 'Sorry.' }]);
    const result = await harness(s).runTurn(turnRequest(kit.tools));
    assert.equal(result.outcome, 'ended');
    const [answer] = toolResultsOf(s.requestsTo('/v1/messages')[1]!.body);
    assert.equal(answer?.['is_error'], true);
    assert.match(String(answer?.['content']), /no tool named "delete_everything".*The tools are: .*cite.*finish/);
    assert.equal(kit.seat.stats().calls, 0);
  });

  it('an oversized tool result reaches the model cut to RESULT_MAX_BYTES with a marker', async () => {
    const s = await serve([SEQUENCE_STEPS[0]!, { text: 'ok' }]);
    const inflated: ToolPort = {
      tools: kit.tools.tools,
      call: async (name, input) => {
        const r = await kit.tools.call(name, input);
        return { text: `${r.text}\n${'é'.repeat(20_000)}`, isError: r.isError };
      },
    };
    const result = await harness(s).runTurn(turnRequest(inflated));
    assert.equal(result.outcome, 'ended');
    const [answer] = toolResultsOf(s.requestsTo('/v1/messages')[1]!.body);
    const text = String(answer?.['content']);
    assert.ok(bytes(text) <= RESULT_MAX_BYTES, `${bytes(text)} bytes`);
    assert.match(text, /cut by the host: the result was \d+ bytes, over the 4096-byte ceiling\)$/);
    assert.match(text, /\be\d+\b/, 'the minted id survives the cut');
  });

  it('oversized model text is kept bounded (events and thread); a follow-up continues the same thread', async () => {
    const s = await serve([{ malformed: 'oversized-text', bytes: 300_000 }, { text: 'Done.' }]);
    const h = harness(s);
    const first = turnRequest(kit.tools);
    assert.equal((await h.runTurn(first)).outcome, 'ended');
    const texts = first.events.filter((e) => e.type === 'text') as Array<{ text: string }>;
    assert.equal(texts.length, 1);
    assert.ok(bytes(texts[0]!.text) <= MAX_TEXT_BYTES);
    assert.match(texts[0]!.text, /…\(cut: 300000 bytes\)$/);

    const follow = turnRequest(kit.tools, { followUp: true, prompt: 'VERDICT finish was never called' });
    assert.equal((await h.runTurn(follow)).outcome, 'ended');
    const thread = messagesOf(s.requestsTo('/v1/messages')[1]!.body);
    assert.deepEqual(
      thread.map((m) => m.role),
      ['user', 'assistant', 'user'],
    );
    assert.ok(bytes(String(thread[1]!.content[0]!['text'])) <= MAX_TEXT_BYTES);
    assert.deepEqual(thread[2]!.content, [{ type: 'text', text: 'VERDICT finish was never called' }]);
  });

  it('HTTP 500 → failed with the status and the server message, never the key', async () => {
    const s = await serve([{ malformed: 'http-500' }]);
    const result = await harness(s).runTurn(turnRequest(kit.tools));
    assert.equal(result.outcome, 'failed');
    assert.match(result.message ?? '', /answered HTTP 500.*scripted failure \(HTTP 500\)/);
    assert.doesNotMatch(result.message ?? '', /sk-test-secret/);
    assert.equal(result.usage, null);
  });

  it('HTTP 429 after some round trips → failed, with the usage spent so far', async () => {
    const s = await serve([SEQUENCE_STEPS[0]!, { malformed: 'http-500', status: 429 }]);
    const result = await harness(s).runTurn(turnRequest(kit.tools));
    assert.equal(result.outcome, 'failed');
    assert.match(result.message ?? '', /HTTP 429/);
    assert.deepEqual(result.usage, { inputTokens: 100, outputTokens: 20, priceUsd: null });
  });

  it('a mid-stream disconnect → failed "the model stream ended before the message completed", no hang', async function () {
    this.timeout(5_000);
    const s = await serve([{ malformed: 'disconnect-mid-stream' }]);
    const result = await harness(s).runTurn(turnRequest(kit.tools));
    assert.equal(result.outcome, 'failed');
    assert.equal(result.message, STREAM_ENDED);
  });

  it('abort → aborted promptly (the fetch is cancelled)', async function () {
    this.timeout(5_000);
    const s = await serve([{ text: 'late', delayMs: 10_000 }]);
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 100);
    const result = await harness(s).runTurn(turnRequest(kit.tools, { signal: controller.signal }));
    assert.equal(result.outcome, 'aborted');
    assert.ok(Date.now() - started < 2_000, `${Date.now() - started} ms`);
  });

  it('abort between tool calls stops the loop before the next round trip', async () => {
    const s = await serve([
      {
        toolCalls: [
          { name: 'cite', input: { path: 'src/app.ts', side: 'head', start_line: 4, end_line: 6 } },
          { name: 'add_section', input: { title: 'x', body_markdown: 'y' } },
        ],
      },
      { text: 'never' },
    ]);
    const controller = new AbortController();
    const tools: ToolPort = {
      tools: kit.tools.tools,
      call: async (name, input) => {
        controller.abort();
        return kit.tools.call(name, input);
      },
    };
    const result = await harness(s).runTurn(turnRequest(tools, { signal: controller.signal }));
    assert.equal(result.outcome, 'aborted');
    assert.equal(s.requestsTo('/v1/messages').length, 1);
    assert.equal(kit.seat.stats().calls, 1, 'the second call of the reply was not run');
  });

  it('a request timeout → failed, naming the timeout', async function () {
    this.timeout(5_000);
    const s = await serve([{ text: 'late', delayMs: 5_000 }]);
    const result = await harness(s, { requestTimeoutMs: 200 }).runTurn(turnRequest(kit.tools));
    assert.equal(result.outcome, 'failed');
    assert.match(result.message ?? '', /the model did not answer within 200 ms/);
  });

  it('a model that never stops calling tools is stopped at the round-trip ceiling', async () => {
    const again: Step = { toolCalls: [{ name: 'finish', input: {} }] };
    const s = await serve([again, again, again, again]);
    const result = await harness(s, { maxRoundTrips: 3 }).runTurn(turnRequest(kit.tools));
    assert.equal(result.outcome, 'failed');
    assert.match(result.message ?? '', /stopped after 3 model round trips/);
    assert.equal(s.requestsTo('/v1/messages').length, 3);
    assert.deepEqual(result.usage, { inputTokens: 300, outputTokens: 60, priceUsd: null });
  });

  it('a server that reports no usage gives usage null (never zero)', async () => {
    const s = await serve([{ text: 'Nothing.', usage: null }]);
    const result = await harness(s).runTurn(turnRequest(kit.tools));
    assert.deepEqual(result, { outcome: 'ended', message: null, usage: null });
  });

  it('an unreachable server → failed naming the server, not the key', async () => {
    const s = await serve([]);
    const origin = s.origin;
    await s.close();
    server = null;
    const result = await new AnthropicHarness({ baseUrl: origin, apiKey: 'sk-test-secret', model: 'm' }).runTurn(turnRequest(kit.tools));
    assert.equal(result.outcome, 'failed');
    assert.match(result.message ?? '', /could not reach the Anthropic API/);
    assert.doesNotMatch(result.message ?? '', /sk-test-secret/);
  });
});
