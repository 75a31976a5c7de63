import assert from 'node:assert/strict';
import { SEAT_SYSTEM_PROMPT } from '../../../host/harness/httpHarness';
import { OpenAiCompatibleHarness, type OpenAiCompatibleHarnessOptions } from '../../../host/harness/openai';
import { MAX_TEXT_BYTES, STREAM_ENDED } from '../../../host/harness/toolLoop';
import type { ToolPort } from '../../../host/pipeline/ports';
import { RESULT_MAX_BYTES } from '../../../protocol/board';
import type { ScriptInput } from '../../servers/common';
import { startOpenAiServer, type ScriptedOpenAiServer } from '../../servers/openai';
import { SEQUENCE_STEPS, seatKit, turnRequest, type SeatKit } from '../../servers/seatKit';

/** The OpenAI-compatible Chat Completions adapter and its tool loop, against the scripted server, through a real BoardSeat. */

type Msg = Record<string, unknown> & { role: string };
const messagesOf = (body: Record<string, unknown> | null) => (body?.['messages'] ?? []) as Msg[];
const toolMessagesOf = (body: Record<string, unknown> | null) => messagesOf(body).filter((m) => m.role === 'tool');
const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

describe('harness: openai-compatible (Chat Completions over HTTP, scripted server)', function () {
  this.timeout(20_000);
  let kit: SeatKit;
  let server: ScriptedOpenAiServer | null = null;

  beforeEach(async () => {
    kit = await seatKit();
  });
  afterEach(async () => {
    await server?.close();
    server = null;
    kit.cleanup();
  });

  async function serve(script: ScriptInput) {
    server = await startOpenAiServer(script);
    return server;
  }
  const harness = (s: ScriptedOpenAiServer, extra: Partial<OpenAiCompatibleHarnessOptions> = {}) =>
    new OpenAiCompatibleHarness({ baseUrl: s.baseUrl, apiKey: 'sk-test-secret', model: 'gpt-scripted', ...extra });

  for (const stream of [true, false]) {
    it(`writes a Sequence board that settles (${stream ? 'streamed' : 'not streamed'}); usage summed; events; bodies carry tools and no tool_choice`, async () => {
      const s = await serve({ seats: { 'sequence:drafter': SEQUENCE_STEPS } });
      const h = harness(s, { stream });
      assert.equal(h.kind, 'openai-compatible');
      assert.equal(h.origin, 'other');
      assert.equal(h.model, 'gpt-scripted');
      const request = turnRequest(kit.tools);
      const result = await h.runTurn(request);

      assert.deepEqual(result, { outcome: 'ended', message: null, usage: { inputTokens: 600, outputTokens: 120, priceUsd: null } });
      const board = kit.seat.snapshot();
      assert.equal(board.status, 'finished', JSON.stringify(board.lastFinish));
      assert.deepEqual(
        board.elements.map((e) => e.kind),
        ['code_ref', 'section', 'order_step'],
      );
      const tools = ['cite', 'add_section', 'add_order_step', 'set_document', 'finish'];
      assert.deepEqual(
        request.events.filter((e) => e.type === 'tool-call').map((e) => (e as { name: string }).name),
        tools,
      );
      assert.equal(request.events.filter((e) => e.type === 'tool-result').length, 5);
      assert.deepEqual(
        request.events.filter((e) => e.type === 'text'),
        [{ type: 'text', text: 'The board is written.' }],
      );

      const posts = s.requestsTo('/v1/chat/completions');
      assert.equal(posts.length, 6);
      for (const r of posts) {
        assert.equal(r.headers['authorization'], 'Bearer sk-test-secret');
        assert.equal(r.body?.['model'], 'gpt-scripted');
        assert.equal('tool_choice' in (r.body ?? {}), false, 'no tool_choice unless the server supports it');
        if (stream) {
          assert.equal(r.body?.['stream'], true);
          assert.deepEqual(r.body?.['stream_options'], { include_usage: true });
        } else {
          assert.equal(r.body?.['stream'], undefined);
        }
        const offered = r.body?.['tools'] as Array<{ type: string; function: { name: string; description: string; parameters: Record<string, unknown> } }>;
        assert.deepEqual(
          offered.map((t) => t.function.name),
          kit.tools.tools.map((t) => t.name),
        );
        for (const t of offered) {
          assert.equal(t.type, 'function');
          assert.equal(t.function.parameters['type'], 'object', t.function.name);
        }
        assert.deepEqual(r.unresolved, []);
      }
      assert.deepEqual(messagesOf(posts[0]!.body), [
        { role: 'system', content: SEAT_SYSTEM_PROMPT },
        { role: 'user', content: request.prompt },
      ]);
      const last = messagesOf(posts[5]!.body);
      assert.equal(toolMessagesOf(posts[5]!.body).length, 5);
      const stepCall = (last[6]!['tool_calls'] as Array<{ function: { name: string; arguments: string } }>)[0]!;
      assert.equal(stepCall.function.name, 'add_order_step');
      assert.match(stepCall.function.arguments, /"span":"e\d+","parent_id":"e\d+"/);
    });
  }

  it('sends tool_choice "auto" when the server supports it, and no Authorization without a key', async () => {
    const s = await serve([{ text: 'Nothing to write.' }]);
    const result = await new OpenAiCompatibleHarness({ baseUrl: s.baseUrl, model: 'gpt-scripted', supportsToolChoice: true }).runTurn(turnRequest(kit.tools));
    assert.equal(result.outcome, 'ended');
    assert.equal(s.requests[0]!.body?.['tool_choice'], 'auto');
    assert.equal(s.requests[0]!.headers['authorization'], undefined);
  });

  it('bad JSON arguments: the tool is not called, the model reads an error result, the turn goes on and settles', async () => {
    const s = await serve([{ malformed: 'bad-json-arguments', name: 'cite' }, ...SEQUENCE_STEPS]);
    const result = await harness(s).runTurn(turnRequest(kit.tools));
    assert.equal(result.outcome, 'ended', result.message ?? '');
    assert.equal(kit.seat.snapshot().status, 'finished');
    assert.equal(kit.seat.stats().calls, 5);
    const second = s.requestsTo('/v1/chat/completions')[1]!.body;
    const [answer] = toolMessagesOf(second);
    assert.match(String(answer?.['content']), /arguments of this cite call were not valid JSON .*the tool was not called/);
    const call = (messagesOf(second)[2]!['tool_calls'] as Array<{ function: { arguments: string } }>)[0]!;
    assert.equal(call.function.arguments, '{}', 'unparsable arguments go back as {}');
  });

  it('an unknown tool gets an error result naming the seat tools', async () => {
    const s = await serve([{ malformed: 'unknown-tool' }, { text: 'Sorry.' }]);
    const result = await harness(s).runTurn(turnRequest(kit.tools));
    assert.equal(result.outcome, 'ended');
    const [answer] = toolMessagesOf(s.requestsTo('/v1/chat/completions')[1]!.body);
    assert.match(String(answer?.['content']), /no tool named "no_such_tool".*The tools are: .*cite/);
  });

  it('an oversized tool result reaches the model cut to RESULT_MAX_BYTES with a marker', async () => {
    const s = await serve([SEQUENCE_STEPS[0]!, { text: 'ok' }]);
    const inflated: ToolPort = {
      tools: kit.tools.tools,
      call: async (name, input) => {
        const r = await kit.tools.call(name, input);
        return { text: `${r.text}\n${'x'.repeat(50_000)}`, isError: r.isError };
      },
    };
    assert.equal((await harness(s).runTurn(turnRequest(inflated))).outcome, 'ended');
    const [answer] = toolMessagesOf(s.requestsTo('/v1/chat/completions')[1]!.body);
    const text = String(answer?.['content']);
    assert.ok(bytes(text) <= RESULT_MAX_BYTES);
    assert.match(text, /cut by the host/);
  });

  it('oversized model text is kept bounded', async () => {
    const s = await serve([{ malformed: 'oversized-text' }]);
    const request = turnRequest(kit.tools);
    assert.equal((await harness(s).runTurn(request)).outcome, 'ended');
    const [text] = request.events.filter((e) => e.type === 'text') as Array<{ text: string }>;
    assert.ok(text && bytes(text.text) <= MAX_TEXT_BYTES);
  });

  it('HTTP 500 → failed with the status and the server message, never the key', async () => {
    const s = await serve([{ malformed: 'http-500' }]);
    const result = await harness(s).runTurn(turnRequest(kit.tools));
    assert.equal(result.outcome, 'failed');
    assert.match(result.message ?? '', /HTTP 500.*scripted failure/);
    assert.doesNotMatch(result.message ?? '', /sk-test-secret/);
  });

  for (const stream of [true, false]) {
    it(`a mid-stream disconnect → failed, no hang (${stream ? 'streamed' : 'not streamed'})`, async function () {
      this.timeout(5_000);
      const s = await serve([{ malformed: 'disconnect-mid-stream' }]);
      const result = await harness(s, { stream }).runTurn(turnRequest(kit.tools));
      assert.equal(result.outcome, 'failed');
      assert.equal(result.message, STREAM_ENDED);
    });
  }

  it('abort → aborted promptly', async function () {
    this.timeout(5_000);
    const s = await serve([{ text: 'late', delayMs: 10_000 }]);
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 100);
    const result = await harness(s).runTurn(turnRequest(kit.tools, { signal: controller.signal }));
    assert.equal(result.outcome, 'aborted');
    assert.ok(Date.now() - started < 2_000);
  });

  it('a follow-up turn continues the seat thread with the verdict as the next user message', async () => {
    const s = await serve([SEQUENCE_STEPS[0]!, { text: 'Stopping.' }, { text: 'Still stopping.' }]);
    const h = harness(s);
    await h.runTurn(turnRequest(kit.tools));
    await h.runTurn(turnRequest(kit.tools, { followUp: true, prompt: 'VERDICT finish was never called' }));
    const thread = messagesOf(s.requestsTo('/v1/chat/completions')[2]!.body);
    assert.deepEqual(
      thread.map((m) => m.role),
      ['system', 'user', 'assistant', 'tool', 'assistant', 'user'],
    );
    assert.equal(thread[5]!['content'], 'VERDICT finish was never called');
    // A first turn for the same seat starts a new thread.
    s.requests.length = 0;
    await h.runTurn(turnRequest(kit.tools));
    assert.deepEqual(
      messagesOf(s.requests[0]!.body).map((m) => m.role),
      ['system', 'user'],
    );
  });
});
