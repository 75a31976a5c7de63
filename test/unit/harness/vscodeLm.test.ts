import assert from 'node:assert/strict';
import { failureOf, planMessages, TOOL_ERROR_PREFIX } from '../../../extension/lmMessages';
import { singleLensAssignment, VscodeLmHarness, type LmAsk } from '../../../host/harness/vscodeLm';
import type { ToolPort } from '../../../host/pipeline/ports';
import { RESULT_MAX_BYTES } from '../../../protocol/board';
import { LmChat, type LmChatParams, type LmChatResult, type LmMessage } from '../../../protocol/rpc';
import { checkParams } from '../../../protocol/rpcSchema';
import { seatKit, turnRequest, type SeatKit } from '../../servers/seatKit';

/**
 * The vscode-lm harness's host side: its tool loop (toolLoop.ts) over a fake `ask` that plays a
 * model the way the extension would answer `rennet/lm/chat`, against a REAL BoardSeat.
 */

type Call = { name: string; input: unknown; as?: string };
type Round = { text?: string; calls?: Call[]; usage?: { inputTokens: number; outputTokens: number } } | Extract<LmChatResult, { ok: false }>;

/**
 * A scripted model: round n answers rounds[n]. Like a real model it reads the tool results in the
 * transcript it is sent: `$name` in an input is the first `e<n>` id of the result of the call
 * recorded `as: name`.
 */
function fakeModel(rounds: Round[], model = 'rennet-scripted/m1') {
  const asked: LmChatParams[] = [];
  const signals: AbortSignal[] = [];
  const asName = new Map<string, string>();
  const ask: LmAsk = async (params, signal) => {
    // What the host sends is what the extension's edge accepts (rennet/lm/chat's schema).
    const checked = checkParams(LmChat, JSON.parse(JSON.stringify(params)));
    if (!checked.ok) throw new Error(`the extension would refuse this rennet/lm/chat: ${checked.message}`);
    asked.push(params);
    signals.push(signal);
    const round = rounds[asked.length - 1];
    if (!round) throw new Error(`the fake model has no round ${asked.length}`);
    if ('ok' in round) return round;
    const ids = new Map<string, string>();
    for (const m of params.messages) {
      if (m.role !== 'tool-results') continue;
      for (const r of m.results) {
        const name = asName.get(r.callId);
        const id = /\be\d+\b/.exec(r.text)?.[0];
        if (name && id && !r.isError) ids.set(name, id);
      }
    }
    const toolCalls = (round.calls ?? []).map((c, i) => {
      const callId = `call-${asked.length}-${i}`;
      if (c.as) asName.set(callId, c.as);
      return { callId, name: c.name, input: resolve(c.input, ids) as Record<string, unknown> };
    });
    return { ok: true, text: round.text ?? '', toolCalls, model, usage: round.usage ?? null };
  };
  return { ask, asked, signals };
}

function resolve(input: unknown, ids: ReadonlyMap<string, string>): unknown {
  if (typeof input === 'string') return input.replace(/\$([a-z]\w*)/g, (m, name: string) => ids.get(name) ?? m);
  if (Array.isArray(input)) return input.map((v) => resolve(v, ids));
  if (input && typeof input === 'object') return Object.fromEntries(Object.entries(input).map(([k, v]) => [k, resolve(v, ids)]));
  return input;
}

const SEQUENCE: Round[] = [
  {
    text: 'Reading the change.',
    calls: [
      { name: 'set_document', input: { title: 'Two lines change', intro_markdown: 'Two lines now say they changed. Nothing else moves.' } },
      { name: 'cite', input: { path: 'src/app.ts', side: 'head', start_line: 4, end_line: 6 }, as: 'c' },
      { name: 'add_section', input: { title: 'Reading order', body_markdown: 'Two lines of the module change.' }, as: 's' },
    ],
  },
  { calls: [{ name: 'add_order_step', input: { title: 'Line five changes', explanation_markdown: 'The fifth line now says it changed.', span: '$c', parent_id: '$s' } }] },
  { calls: [{ name: 'finish', input: {} }] },
  { text: 'The board is written.' },
];

function resultsOf(params: LmChatParams | undefined): Array<{ callId: string; text: string; isError: boolean }> {
  return (params?.messages ?? []).flatMap((m) => (m.role === 'tool-results' ? m.results : []));
}

describe('harness: vscode-lm (host tool loop over rennet/lm/chat)', function () {
  this.timeout(20_000);
  let kit: SeatKit;

  beforeEach(async () => {
    kit = await seatKit();
  });
  afterEach(() => kit.cleanup());

  it('drafts a Sequence board that settles, one model response per round trip', async () => {
    const model = fakeModel(SEQUENCE);
    const h = new VscodeLmHarness({ ask: model.ask, model: { vendor: 'rennet-scripted', id: 'm1' } });
    assert.equal(h.kind, 'vscode-lm');
    assert.equal(h.origin, 'other');
    assert.equal(h.model, 'rennet-scripted/m1');
    const request = turnRequest(kit.tools);
    const result = await h.runTurn(request);

    assert.deepEqual(result, { outcome: 'ended', message: null, usage: null });
    const board = kit.seat.snapshot();
    assert.equal(board.status, 'finished', JSON.stringify(board.lastFinish));
    assert.deepEqual(board.elements.map((e) => e.kind).sort(), ['code_ref', 'order_step', 'section']);
    assert.equal(kit.seat.stats().refusals, 0);

    assert.equal(model.asked.length, 4);
    for (const p of model.asked) {
      assert.equal(p.seatId, 'sequence:drafter');
      assert.equal(p.vendor, 'rennet-scripted');
      assert.equal(p.model, 'm1', 'a pinned model is asked for by id every round');
      assert.match(p.justification, /Sequence review board/);
      assert.deepEqual(
        p.tools.map((t) => t.name),
        kit.tools.tools.map((t) => t.name),
      );
    }
    assert.deepEqual(model.asked[0]!.messages, [{ role: 'user', text: request.prompt }]);
    assert.deepEqual(
      model.asked[3]!.messages.map((m) => m.role),
      ['user', 'assistant', 'tool-results', 'assistant', 'tool-results', 'assistant', 'tool-results'],
    );
    assert.equal(resultsOf(model.asked[3]).length, 5);
    assert.ok(
      resultsOf(model.asked[3]).every((r) => !r.isError),
      JSON.stringify(resultsOf(model.asked[3])),
    );
    // The transcript kept for a follow-up ends with the closing text.
    assert.deepEqual(h.transcript('sequence:drafter').at(-1), { role: 'assistant', text: 'The board is written.', toolCalls: [] });
    const calls = request.events.filter((e) => e.type === 'tool-call').map((e) => (e as { name: string }).name);
    assert.deepEqual(calls, ['set_document', 'cite', 'add_section', 'add_order_step', 'finish']);
    assert.deepEqual(
      request.events.filter((e) => e.type === 'text').map((e) => (e as { text: string }).text),
      ['Reading the change.', 'The board is written.'],
    );
  });

  it('answers a bad tool name and bad arguments with error results, runs nothing, and goes on', async () => {
    const model = fakeModel([
      {
        calls: [
          { name: 'drop_database', input: {} },
          { name: 'cite', input: ['src/app.ts', 4, 6] },
          { name: 'add_section', input: 'title=Oops' },
          { name: 'cite', input: { path: 'src/app.ts', side: 'head', start_line: 'four', end_line: 6 } },
        ],
      },
      { text: 'I give up.' },
    ]);
    const h = new VscodeLmHarness({ ask: model.ask });
    const result = await h.runTurn(turnRequest(kit.tools));
    assert.equal(result.outcome, 'ended');
    const results = resultsOf(model.asked[1]);
    assert.equal(results.length, 4);
    assert.ok(
      results.every((r) => r.isError),
      JSON.stringify(results),
    );
    assert.match(results[0]!.text, /no tool named "drop_database".*cite/s);
    assert.match(results[1]!.text, /not valid JSON \(a JSON array, not an object\); the tool was not called/);
    assert.match(results[2]!.text, /not valid JSON/);
    // A well-formed object the board refuses: the board's own words come back.
    assert.doesNotMatch(results[3]!.text, /not valid JSON/);
    assert.equal(kit.seat.snapshot().elements.length, 0, 'a refused call wrote something');
    assert.equal(kit.seat.stats().calls, 1, 'only the well-formed cite reached the board');
    // No selector configured: the extension picks the first model.
    assert.equal(model.asked[0]!.vendor, undefined);
    assert.equal(h.model, 'rennet-scripted/m1', 'the model that answered names the harness');
  });

  it('bounds an oversized tool result to RESULT_MAX_BYTES, saying so', async () => {
    const big = 'x'.repeat(RESULT_MAX_BYTES * 5);
    const tools: ToolPort = {
      tools: [...kit.tools.tools, { name: 'read_everything', description: 'Returns a lot.', inputSchema: { type: 'object' } }],
      call: async (name, input) => (name === 'read_everything' ? { text: big, isError: false } : kit.tools.call(name, input)),
    };
    const model = fakeModel([{ calls: [{ name: 'read_everything', input: {} }] }, { text: 'done' }]);
    const result = await new VscodeLmHarness({ ask: model.ask }).runTurn(turnRequest(tools));
    assert.equal(result.outcome, 'ended');
    const [r] = resultsOf(model.asked[1]);
    assert.ok(r);
    assert.ok(Buffer.byteLength(r.text, 'utf8') <= RESULT_MAX_BYTES, `${Buffer.byteLength(r.text, 'utf8')} bytes`);
    assert.match(r.text, new RegExp(`the result was ${big.length} bytes, over the ${RESULT_MAX_BYTES}-byte ceiling`));
  });

  const failures: Array<[Extract<LmChatResult, { ok: false }>, RegExp]> = [
    [{ ok: false, reason: 'no-model', message: 'no chat model matches vendor "nobody"' }, /^no VS Code language model is available for vendor "nobody": no chat model matches/],
    [{ ok: false, reason: 'consent-denied', message: 'The user did not grant access' }, /did not allow Rennet to use the language model \(consent denied\): The user did not grant access; allow it/],
    [{ ok: false, reason: 'blocked', message: 'rate limited' }, /refused Rennet's request \(blocked: quota or policy\): rate limited/],
    [{ ok: false, reason: 'error', message: 'the provider crashed' }, /^the language model failed: the provider crashed/],
    [{ ok: false, reason: 'cancelled', message: 'Canceled' }, /cancelled in VS Code: Canceled/],
  ];
  for (const [answer, sentence] of failures) {
    it(`${/^[aeiou]/.test(answer.reason) ? 'an' : 'a'} ${answer.reason} answer fails the turn with a sentence naming it`, async () => {
      const model = fakeModel([answer]);
      const h = new VscodeLmHarness({ ask: model.ask, vendor: 'nobody' });
      const result = await h.runTurn(turnRequest(kit.tools));
      assert.equal(result.outcome, 'failed');
      assert.match(result.message ?? '', sentence);
      // Consent, policy and a missing model answer the same until the reviewer acts: no retry.
      assert.equal(result.final === true, ['consent-denied', 'blocked', 'no-model'].includes(answer.reason), `final for ${answer.reason}`);
      assert.equal(result.usage, null);
      assert.equal(model.asked[0]!.vendor, 'nobody');
      assert.equal(kit.seat.stats().calls, 0);
    });
  }

  it('a malformed answer, or an ask that throws, fails the turn (never a crash)', async () => {
    const malformed = await new VscodeLmHarness({ ask: async () => ({ ok: true, text: 7 }) as unknown as LmChatResult }).runTurn(turnRequest(kit.tools));
    assert.equal(malformed.outcome, 'failed');
    assert.match(malformed.message ?? '', /answer was malformed/);
    const thrown = await new VscodeLmHarness({
      ask: async () => {
        throw new Error('connection closed');
      },
    }).runTurn(turnRequest(kit.tools));
    assert.equal(thrown.outcome, 'failed');
    assert.match(thrown.message ?? '', /could not reach VS Code's language models through the extension: connection closed/);
  });

  it('an abort cancels the round trip in flight (its signal) and the turn ends aborted', async () => {
    const controller = new AbortController();
    let askSignal: AbortSignal | undefined;
    const h = new VscodeLmHarness({
      ask: (_params, signal) => {
        askSignal = signal;
        setTimeout(() => controller.abort(), 10);
        return new Promise<LmChatResult>((resolve) => signal.addEventListener('abort', () => resolve({ ok: false, reason: 'cancelled', message: 'Canceled' })));
      },
    });
    const result = await h.runTurn(turnRequest(kit.tools, { signal: controller.signal }));
    assert.equal(result.outcome, 'aborted');
    assert.equal(askSignal?.aborted, true, 'the ask was not cancelled');
  });

  it('does not wait for an extension that ignores the cancellation, nor for one that never answers', async () => {
    const controller = new AbortController();
    const hanging: LmAsk = () => {
      setTimeout(() => controller.abort(), 10);
      return new Promise<LmChatResult>(() => undefined);
    };
    const aborted = await new VscodeLmHarness({ ask: hanging }).runTurn(turnRequest(kit.tools, { signal: controller.signal }));
    assert.equal(aborted.outcome, 'aborted');
    const silent = await new VscodeLmHarness({ ask: () => new Promise<LmChatResult>(() => undefined), requestTimeoutMs: 50 }).runTurn(turnRequest(kit.tools));
    assert.equal(silent.outcome, 'failed');
    assert.match(silent.message ?? '', /did not answer within/);
  });

  it("the harness's own signal (a cancelled draft) aborts its turns too", async () => {
    const draft = new AbortController();
    draft.abort();
    const model = fakeModel([{ text: 'never' }]);
    const result = await new VscodeLmHarness({ ask: model.ask, signal: draft.signal }).runTurn(turnRequest(kit.tools));
    assert.equal(result.outcome, 'aborted');
    assert.equal(model.asked.length, 0);
  });

  it('stops a model that never ends its turn after maxRoundTrips', async () => {
    const model = fakeModel(Array.from({ length: 10 }, () => ({ calls: [{ name: 'add_prose', input: { markdown: 'More.' } }] })));
    const result = await new VscodeLmHarness({ ask: model.ask, maxRoundTrips: 3 }).runTurn(turnRequest(kit.tools));
    assert.equal(result.outcome, 'failed');
    assert.match(result.message ?? '', /stopped after 3 model round trips/);
    assert.equal(model.asked.length, 3);
  });

  it('sums usage when the provider reports it; null when it reports none', async () => {
    const reported = fakeModel([
      { calls: [{ name: 'add_prose', input: { markdown: 'A note.' } }], usage: { inputTokens: 100, outputTokens: 20 } },
      { text: 'ok', usage: { inputTokens: 150, outputTokens: 5 } },
    ]);
    const a = await new VscodeLmHarness({ ask: reported.ask }).runTurn(turnRequest(kit.tools));
    assert.deepEqual(a.usage, { inputTokens: 250, outputTokens: 25, priceUsd: null });
    const silent = fakeModel([{ text: 'ok' }]);
    const b = await new VscodeLmHarness({ ask: silent.ask }).runTurn(turnRequest(kit.tools));
    assert.equal(b.usage, null);
  });

  it('a follow-up turn continues the seat thread; a first turn starts a new one', async () => {
    const model = fakeModel([{ text: 'first' }, { text: 'second' }, { text: 'fresh' }]);
    const h = new VscodeLmHarness({ ask: model.ask });
    await h.runTurn(turnRequest(kit.tools, { prompt: 'P1' }));
    await h.runTurn(turnRequest(kit.tools, { prompt: 'the last verdict', followUp: true }));
    const expected: LmMessage[] = [
      { role: 'user', text: 'P1' },
      { role: 'assistant', text: 'first', toolCalls: [] },
      { role: 'user', text: 'the last verdict' },
    ];
    assert.deepEqual(model.asked[1]!.messages, expected);
    await h.runTurn(turnRequest(kit.tools, { prompt: 'P2' }));
    assert.deepEqual(model.asked[2]!.messages, [{ role: 'user', text: 'P2' }]);
  });

  it('singleLensAssignment gives the harness to one lens only (Flagged: reviewer and compiler)', () => {
    const h = new VscodeLmHarness({ ask: fakeModel([]).ask });
    const seq = singleLensAssignment('sequence', h);
    assert.equal(seq.sequence, h);
    assert.equal(seq.design, null);
    assert.deepEqual(seq.flagged, { reviewers: [], compiler: null });
    assert.match(seq.missingHint ?? '', /only the Sequence lens with vscode-lm/);
    const flagged = singleLensAssignment('flagged', h);
    assert.deepEqual(flagged.flagged, { reviewers: [h], compiler: h });
    assert.equal(flagged.sequence, null);
  });
});

describe('extension: vscode.lm message plan and failure mapping (pure)', () => {
  it('one Assistant message per reply (text, then calls); results and the next user text merge into one User message, results first', () => {
    const plan = planMessages([
      { role: 'user', text: 'Draft it.' },
      {
        role: 'assistant',
        text: '',
        toolCalls: [
          { callId: 'a', name: 'cite', input: { path: 'x' } },
          { callId: 'b', name: 'nope', input: [1] as unknown as Record<string, unknown> },
        ],
      },
      {
        role: 'tool-results',
        results: [
          { callId: 'a', text: 'e1', isError: false },
          { callId: 'b', text: 'no tool', isError: true },
        ],
      },
      { role: 'user', text: 'Finish was refused: …' },
      { role: 'assistant', text: 'Done.', toolCalls: [] },
    ]);
    assert.deepEqual(plan, [
      { role: 'user', parts: [{ kind: 'text', text: 'Draft it.' }] },
      {
        role: 'assistant',
        parts: [
          { kind: 'call', callId: 'a', name: 'cite', input: { path: 'x' } },
          { kind: 'call', callId: 'b', name: 'nope', input: {} },
        ],
      },
      {
        role: 'user',
        parts: [
          { kind: 'result', callId: 'a', text: 'e1' },
          { kind: 'result', callId: 'b', text: `${TOOL_ERROR_PREFIX}no tool` },
          { kind: 'text', text: 'Finish was refused: …' },
        ],
      },
      { role: 'assistant', parts: [{ kind: 'text', text: 'Done.' }] },
    ]);
  });

  it('maps LanguageModelError codes and cancellations to typed reasons', () => {
    const lmError = (code: string, message: string) => Object.assign(new Error(message), { code });
    assert.deepEqual(failureOf(lmError('NoPermissions', 'denied'), false), { reason: 'consent-denied', message: 'denied' });
    assert.deepEqual(failureOf(lmError('NotFound', 'gone'), false), { reason: 'no-model', message: 'gone' });
    assert.deepEqual(failureOf(lmError('Blocked', 'quota'), false), { reason: 'blocked', message: 'quota' });
    assert.equal(failureOf(lmError('Unknown', 'boom'), true).reason, 'cancelled');
    assert.equal(failureOf(Object.assign(new Error('Canceled'), { name: 'Canceled' }), false).reason, 'cancelled');
    assert.deepEqual(failureOf(Object.assign(lmError('Unknown', 'failed'), { cause: new Error('HTTP 500') }), false), { reason: 'error', message: 'failed (HTTP 500)' });
    assert.deepEqual(failureOf('plain', false), { reason: 'error', message: 'plain' });
  });
});
