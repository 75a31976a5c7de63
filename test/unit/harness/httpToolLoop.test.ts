import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AnthropicHarness } from '../../../host/harness/anthropic';
import { OpenAiCompatibleHarness } from '../../../host/harness/openai';
import { BoundedText, MAX_ROUND_TRIPS, boundResult, boundText, parseArguments, runToolLoop, serverMessage, type CallAnswer, type ModelReply, type ModelThread } from '../../../host/harness/toolLoop';
import type { HarnessEvent, TurnRequest } from '../../../host/pipeline/ports';
import { RESULT_MAX_BYTES } from '../../../protocol/board';

/** The tool loop's bounds and parsing, and key hygiene, without a model. */

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

function request(overrides: Partial<TurnRequest> = {}): TurnRequest & { events: HarnessEvent[]; calls: string[] } {
  const events: HarnessEvent[] = [];
  const calls: string[] = [];
  return {
    seat: { seatId: 'sequence:drafter', lens: 'sequence', role: 'drafter' },
    prompt: 'p',
    followUp: false,
    cwd: '.',
    tools: {
      tools: [{ name: 'echo', description: 'echo', inputSchema: { type: 'object' } }],
      call: async (name, input) => {
        calls.push(`${name} ${JSON.stringify(input)}`);
        return { text: 'ok e1', isError: false };
      },
    },
    mcp: null,
    signal: new AbortController().signal,
    onEvent: (e) => events.push(e),
    ...overrides,
    events,
    calls,
  };
}

/** A thread that plays replies in order and records what was committed. */
function playing(replies: ModelReply[]): ModelThread & { committed: Array<{ reply: ModelReply; answers: readonly CallAnswer[] }> } {
  const committed: Array<{ reply: ModelReply; answers: readonly CallAnswer[] }> = [];
  let i = 0;
  return {
    committed,
    send: async () => {
      const reply = replies[i++];
      if (!reply) throw new Error('no more replies');
      return reply;
    },
    commit: (reply, answers) => committed.push({ reply, answers }),
  };
}

describe('harness: the in-host tool loop', () => {
  it('bounds: a tool result ≤ RESULT_MAX_BYTES with a marker, on a character boundary', () => {
    assert.equal(boundResult('short'), 'short');
    for (const unit of ['a', 'é', '😀']) {
      const out = boundResult(unit.repeat(10_000));
      assert.ok(bytes(out) <= RESULT_MAX_BYTES, `${unit}: ${bytes(out)}`);
      assert.ok(!out.includes('\uFFFD'), 'no broken character');
      assert.match(out, /cut by the host: the result was \d+ bytes, over the 4096-byte ceiling\)$/);
    }
    assert.ok(bytes(boundText('x'.repeat(1000), 100)) <= 100);
    const t = new BoundedText(50);
    for (let i = 0; i < 20; i++) t.append('0123456789');
    assert.ok(t.overflowed);
    assert.ok(bytes(t.text()) <= 50);
    assert.equal(t.bytes, 200);
  });

  it('parses arguments as one JSON object, naming what is wrong otherwise', () => {
    assert.deepEqual(parseArguments('{"a":1}'), { ok: true, value: { a: 1 } });
    assert.deepEqual(parseArguments(''), { ok: true, value: {} });
    assert.deepEqual(parseArguments({ a: 1 }), { ok: true, value: { a: 1 } });
    assert.equal(parseArguments('{"a":').ok, false);
    assert.deepEqual(parseArguments('[1]'), { ok: false, reason: 'a JSON array, not an object' });
    assert.deepEqual(parseArguments('null'), { ok: false, reason: 'a JSON null, not an object' });
  });

  it('quotes a vendor error message bounded, and the text when it is not JSON', () => {
    assert.equal(serverMessage('{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'), 'Overloaded');
    assert.equal(serverMessage('{"error":"nope"}'), 'nope');
    assert.equal(serverMessage('<html>bad gateway</html>'), '<html>bad gateway</html>');
    assert.ok(serverMessage('x'.repeat(10_000)).length < 600);
  });

  it('runs several calls of one reply in order, answers each, and ends when the model stops calling', async () => {
    const thread = playing([
      {
        text: 'Two calls.',
        calls: [
          { id: '1', name: 'echo', arguments: '{"n":1}' },
          { id: '2', name: 'echo', arguments: { n: 2 } },
        ],
        usage: { input: 5, output: null },
      },
      { text: '', calls: [], usage: null },
    ]);
    const req = request();
    const result = await runToolLoop(req, thread);
    assert.deepEqual(result, { outcome: 'ended', message: null, usage: { inputTokens: 5, outputTokens: null, priceUsd: null } });
    assert.deepEqual(req.calls, ['echo {"n":1}', 'echo {"n":2}']);
    assert.deepEqual(
      thread.committed[0]!.answers.map((a) => a.input),
      [{ n: 1 }, { n: 2 }],
    );
    assert.equal(thread.committed.length, 2);
    assert.deepEqual(
      req.events.map((e) => e.type),
      ['text', 'tool-call', 'tool-result', 'tool-call', 'tool-result'],
    );
  });

  it('a tool port that throws fails the turn; the rest of the reply is answered "not run"', async () => {
    const thread = playing([
      {
        text: '',
        calls: [
          { id: '1', name: 'echo', arguments: '{}' },
          { id: '2', name: 'echo', arguments: '{}' },
        ],
        usage: null,
      },
    ]);
    const req = request();
    req.tools = { tools: req.tools.tools, call: async () => Promise.reject(new Error('store is gone')) };
    const result = await runToolLoop(req, thread);
    assert.equal(result.outcome, 'failed');
    assert.match(result.message ?? '', /a tool call failed in the host: store is gone/);
    assert.deepEqual(
      thread.committed[0]!.answers.map((a) => [a.isError, a.text.slice(0, 8)]),
      [
        [true, 'Not run:'],
        [true, 'Not run:'],
      ],
    );
  });

  it('a thread that throws a plain error fails the turn with its message; the ceiling is 64 round trips', async () => {
    const result = await runToolLoop(request(), playing([]));
    assert.equal(result.outcome, 'failed');
    assert.match(result.message ?? '', /the model request failed: no more replies/);
    assert.equal(MAX_ROUND_TRIPS, 64);
  });

  it('a server error (5xx) fails the turn for the ladder to try again; refused credentials (401/403) are final', async () => {
    for (const [status, final] of [
      [500, false],
      [503, false],
      [401, true],
      [403, true],
    ] as const) {
      const server: Server = createServer((_req, res) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `status ${status}` } }));
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      try {
        for (const h of [new AnthropicHarness({ baseUrl: origin, model: 'm' }), new OpenAiCompatibleHarness({ baseUrl: `${origin}/v1`, model: 'm' })]) {
          const result = await h.runTurn(request());
          assert.equal(result.outcome, 'failed', `${h.kind} on ${status}`);
          assert.match(result.message ?? '', new RegExp(`HTTP ${status}`));
          assert.equal(result.final === true, final, `${h.kind} on ${status}: final should be ${final}`);
        }
      } finally {
        server.closeAllConnections();
        await new Promise<void>((r) => server.close(() => r()));
      }
    }
  });

  it('never quotes the key, even when the server echoes it in its error', async () => {
    const key = 'sk-very-secret-key-123';
    const server: Server = createServer((req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { type: 'authentication_error', message: `invalid x-api-key ${req.headers['x-api-key'] ?? ''}${String(req.headers['authorization'] ?? '')}` } }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      for (const h of [new AnthropicHarness({ baseUrl: origin, apiKey: key, model: 'm' }), new OpenAiCompatibleHarness({ baseUrl: `${origin}/v1`, apiKey: key, model: 'm' })]) {
        const result = await h.runTurn(request());
        assert.equal(result.outcome, 'failed');
        assert.match(result.message ?? '', /HTTP 401.*invalid x-api-key .*\[redacted\]/);
        assert.equal(result.final, true, 'refused credentials: another attempt cannot mend it');
        assert.doesNotMatch(result.message ?? '', /sk-very-secret/);
      }
    } finally {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
