import assert from 'node:assert/strict';
import { startAnthropicServer } from '../../servers/anthropic';
import { startOpenAiServer } from '../../servers/openai';

/**
 * The scripted model servers themselves, on the wire shapes the real CLIs use (Claude Code:
 * Messages with `mcp__rennet__` tool names; Codex: the Responses API with namespaced MCP tools).
 */

const post = (url: string, body: unknown) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const sseEvents = (text: string) =>
  text
    .split('\n\n')
    .filter((b) => b.trim().length > 0)
    .map((b) => {
      const event = /^event: (.*)$/m.exec(b)?.[1] ?? null;
      const data = /^data: (.*)$/m.exec(b)?.[1] ?? '';
      return { event, data: data === '[DONE]' ? data : (JSON.parse(data) as Record<string, unknown>) };
    });

describe('scripted model servers', function () {
  this.timeout(10_000);

  it('Responses API (Codex): namespaced MCP tools, function_call items with namespace, ids from function_call_output, usage', async () => {
    const server = await startOpenAiServer({
      seats: {
        'sequence:drafter': [
          { toolCalls: [{ name: 'cite', input: { path: 'src/app.ts' }, as: 'c' }] },
          { toolCalls: [{ name: 'add_order_step', input: { span: '$c', also: '$last', first: '$1' } }] },
          { text: 'Done.' },
        ],
      },
    });
    try {
      const tools = [
        {
          type: 'namespace',
          name: 'mcp__rennet',
          tools: [
            { type: 'function', name: 'cite' },
            { type: 'function', name: 'add_order_step' },
          ],
        },
        { type: 'function', name: 'shell' },
      ];
      const input = [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Seat: sequence:drafter\nWrite.' }] }];
      const r1 = sseEvents(await (await post(`${server.baseUrl}/responses`, { model: 'gpt-x', stream: true, tools, input })).text());
      assert.deepEqual(
        r1.map((e) => e.event),
        ['response.created', 'response.output_item.added', 'response.function_call_arguments.delta', 'response.output_item.done', 'response.completed'],
      );
      const item = (r1[3]!.data as { item: Record<string, unknown> }).item;
      assert.equal(item['type'], 'function_call');
      assert.equal(item['name'], 'cite');
      assert.equal(item['namespace'], 'mcp__rennet');
      assert.equal(item['arguments'], '{"path":"src/app.ts"}');
      const completed = (r1[4]!.data as { response: { usage: Record<string, unknown> } }).response;
      assert.equal(completed.usage['input_tokens'], 100);
      assert.equal(completed.usage['output_tokens'], 20);

      const r2 = sseEvents(
        await (
          await post(`${server.baseUrl}/responses`, {
            model: 'gpt-x',
            stream: true,
            tools,
            input: [...input, item, { type: 'function_call_output', call_id: item['call_id'], output: [{ type: 'input_text', text: 'cited e7 (src/app.ts:4-6)' }] }],
          })
        ).text(),
      );
      const second = (r2.find((e) => e.event === 'response.output_item.done')!.data as { item: Record<string, unknown> }).item;
      assert.equal(second['arguments'], '{"span":"e7","also":"e7","first":"e7"}');
      assert.equal(server.requests[1]!.seat, 'sequence:drafter');
      assert.equal(server.requests[1]!.step, 1);

      const r3 = sseEvents(await (await post(`${server.baseUrl}/responses`, { model: 'gpt-x', stream: true, tools, input })).text());
      const message = (r3.find((e) => e.event === 'response.output_item.done')!.data as { item: Record<string, unknown> }).item;
      assert.deepEqual(message['content'], [{ type: 'output_text', text: 'Done.', annotations: [] }]);
      assert.ok(r3.some((e) => e.event === 'response.output_text.delta'));

      const models = (await (await fetch(`${server.baseUrl}/models`)).json()) as { data: Array<{ id: string }> };
      assert.deepEqual(
        models.data.map((m) => m.id),
        ['scripted-model'],
      );
    } finally {
      await server.close();
    }
  });

  it('Messages API (Claude Code): ?beta=true, mcp__rennet__ names, seat markers, side requests without tools consume nothing, count_tokens', async () => {
    const server = await startAnthropicServer({
      seats: {
        'flagged:reviewer': [{ toolCalls: [{ name: 'submit_findings', input: { findings_markdown: 'none' } }] }],
        'flagged:reviewer:claude': [{ text: 'claude review' }],
      },
    });
    try {
      const tools = [{ name: 'Read' }, { name: 'mcp__rennet__submit_findings' }];
      const ask = async (prompt: string, withTools = true) =>
        (await (
          await post(`${server.origin}/v1/messages?beta=true`, { model: 'claude-x', max_tokens: 10, ...(withTools ? { tools } : {}), messages: [{ role: 'user', content: prompt }] })
        ).json()) as {
          content: Array<Record<string, unknown>>;
          stop_reason: string;
        };
      const side = await ask('Seat: flagged:reviewer:claude — summarise this title', false);
      assert.equal(side.content[0]!['text'], 'Nothing more to do.');
      const claude = await ask('Seat: flagged:reviewer:claude\nReview.');
      assert.equal(claude.content[0]!['text'], 'claude review', 'the longest matching seat key wins');
      const plain = await ask('Seat: flagged:reviewer\nReview.');
      assert.equal(plain.stop_reason, 'tool_use');
      assert.equal(plain.content[0]!['name'], 'mcp__rennet__submit_findings');
      const exhausted = await ask('Seat: flagged:reviewer\nAgain.');
      assert.equal(exhausted.content[0]!['text'], 'Nothing more to do.');
      assert.deepEqual(
        server.requests.map((r) => [r.seat, r.step]),
        [
          [null, null],
          ['flagged:reviewer:claude', 0],
          ['flagged:reviewer', 0],
          ['flagged:reviewer', null],
        ],
      );
      const count = (await (await post(`${server.origin}/v1/messages/count_tokens`, { model: 'claude-x', messages: [] })).json()) as { input_tokens: number };
      assert.ok(count.input_tokens > 0);
      assert.equal((await post(`${server.origin}/v1/other`, {})).status, 404);
    } finally {
      await server.close();
    }
  });

  it('close() ends pending delayed answers and open sockets', async () => {
    const server = await startAnthropicServer([{ text: 'late', delayMs: 60_000 }]);
    const pending = post(`${server.origin}/v1/messages`, { model: 'm', tools: [{ name: 't' }], messages: [] }).then(
      () => 'answered',
      () => 'cut',
    );
    while (server.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    const started = Date.now();
    await server.close();
    assert.equal(await pending, 'cut');
    assert.ok(Date.now() - started < 2_000);
  });
});
