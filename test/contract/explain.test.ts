import assert from 'node:assert/strict';
import { READ_TOOL_NAMES } from '../../protocol/read';
import type { AskProjection } from '../../protocol/asks';
import { LENSES } from '../../protocol/board';
import type { GenerationSnapshot, HarnessConfig } from '../../protocol/review';
import { AsksChanged, AsksExplain, AsksGet, GenerationGet, ReviewOpen, ReviewRunLenses, type AsksChangedParams } from '../../protocol/rpc';
import type { TestRepo } from '../fixtures/gitRepo';
import { startOpenAiServer, type ScriptedOpenAiServer, type Step } from '../servers';
import { codeChange, regionsOf, sequenceTurn, type Region } from '../unit/pipeline/fixtures';
import { removeDir, tempDir } from './harnessSupport';
import { startHost, type HostUnderTest } from './hostProcess';

/**
 * `rennet/asks/explain` against the built host (dist/host.js): a generation whose Sequence board
 * the `openai` harness drafted (the scripted OpenAI server on loopback, never a real model), then
 * explanations of the Sequence step's prose by a second scripted server, routed by the explain
 * prompt's header (`# Rennet: <Lens> (explain)`). Set RENNET_HOST_BUNDLE to run another bundle.
 */

type Call = { tool: string; input?: Record<string, unknown>; as?: string };
const steps = (calls: readonly Call[]): Step[] => [...calls.map((c): Step => ({ toolCalls: [{ name: c.tool, input: c.input ?? {}, ...(c.as ? { as: c.as } : {}) }] })), { text: 'Done.' }];

/** Drafting seats, by the production prompt header. */
function draftSeat(body: Record<string, unknown>, raw: string): string | null {
  if (!Array.isArray(body.tools) || body.tools.length === 0) return null;
  const match = /# Rennet: (Design|Sequence|Decisions|Flagged|Noise) \((writer|review|compiler)\)/.exec(raw);
  if (!match) return null;
  const role = { writer: 'drafter', review: 'reviewer', compiler: 'compiler' }[match[2] as 'writer' | 'review' | 'compiler'];
  return `${(match[1] as string).toLowerCase()}:${role}`;
}

/** Explain turns, by the explain prompt header: `explain:<lens>`. */
function explainSeat(body: Record<string, unknown>, raw: string): string | null {
  if (!Array.isArray(body.tools) || body.tools.length === 0) return null;
  const match = /# Rennet: (Design|Sequence|Decisions|Flagged|Noise) \(explain\)/.exec(raw);
  return match ? `explain:${(match[1] as string).toLowerCase()}` : null;
}

const config = (partial: Partial<HarnessConfig> & Pick<HarnessConfig, 'default'>): HarnessConfig => ({ lenses: {}, vscodeLm: {}, openai: {}, anthropic: {}, ...partial });
const TERMINAL = new Set(['settled', 'absent', 'failed']);
const QUESTION = 'Explain this passage.';
const PROVENANCE = '— explained by openai-compatible · scripted-model';

async function until(predicate: () => Promise<boolean> | boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

type ChatMessage = { role: string; content: unknown };
const messagesOf = (body: Record<string, unknown> | null) => (body?.messages ?? []) as ChatMessage[];
const textOf = (content: unknown) => (typeof content === 'string' ? content : JSON.stringify(content ?? ''));

describe('rennet/asks/explain over JSON-RPC (built dist/host.js)', function () {
  this.timeout(180_000);
  let repo: TestRepo | null = null;
  let drafter: ScriptedOpenAiServer | null = null;
  let explainer: ScriptedOpenAiServer | null = null;
  let host: HostUnderTest | null = null;
  let storeDir = '';
  let sessionId = '';
  let generationId = '';
  let region: Region;
  /** The Sequence step explained: its id and its prose (the quote). */
  let stepId = '';
  let quote = '';
  const changes: AsksChangedParams[] = [];

  before(async () => {
    const change = await codeChange();
    repo = change.repo;
    region = regionsOf(change.patchset)[1] as Region;
    drafter = await startOpenAiServer({ seats: { 'sequence:drafter': steps(sequenceTurn([region])) } }, { seatOf: draftSeat });
    storeDir = tempDir('rennet-explain-store-');
    host = await startHost(storeDir, process.env.RENNET_HOST_BUNDLE || undefined);
    host.connection.onNotification(AsksChanged, (params) => {
      changes.push(params);
    });
    const opened = await host.connection.sendRequest(ReviewOpen, { repo: repo.dir, target: { kind: 'branch', head: 'feature', base: 'main' } });
    assert.ok(opened.ok, opened.ok ? '' : opened.error.message);
    sessionId = opened.value.snapshot.session.id;
    const run = await host.connection.sendRequest(ReviewRunLenses, {
      sessionId,
      harness: config({ default: 'none', lenses: { sequence: 'openai' }, openai: { baseUrl: drafter.baseUrl, model: 'scripted-model' } }),
    });
    assert.ok(run.ok, run.ok ? '' : run.error.message);
    generationId = run.value.generationId;
    let snapshot: GenerationSnapshot | null = null;
    await until(async () => {
      const got = await host!.connection.sendRequest(GenerationGet, { sessionId, generationId });
      snapshot = got.ok ? got.value : null;
      return snapshot !== null && snapshot.lanes.length === LENSES.length && snapshot.lanes.every((l) => TERMINAL.has(l.state));
    }, 'the generation to settle');
    const sequence = (snapshot as GenerationSnapshot | null)?.lanes.find((l) => l.lens === 'sequence');
    assert.equal(sequence?.state, 'settled', JSON.stringify(sequence?.failure));
    const step = sequence?.board?.elements.find((e) => e.kind === 'order_step') as { id: string; explanation_markdown: string } | undefined;
    assert.ok(step, 'the Sequence board has a step');
    stepId = step.id;
    quote = step.explanation_markdown;
  });

  after(async () => {
    await host?.stop();
    await drafter?.close();
    repo?.cleanup();
    removeDir(storeDir);
  });

  afterEach(async () => {
    await explainer?.close();
    explainer = null;
  });

  const anchor = (over: Partial<{ generationId: string; elementId: string; quote: string }> = {}) => ({
    kind: 'quote' as const,
    generationId,
    lens: 'sequence' as const,
    elementId: stepId,
    quote,
    ...over,
  });
  const openai = (server: ScriptedOpenAiServer) => config({ default: 'openai', openai: { baseUrl: server.baseUrl, model: 'scripted-model' } });
  const projection = async (id = sessionId): Promise<AskProjection> => {
    const got = await host!.connection.sendRequest(AsksGet, { sessionId: id });
    assert.ok(got.ok, got.ok ? '' : got.error.message);
    return got.value;
  };

  it('answers in a quote thread through the lens harness: the question, then the answer with its provenance; the quote reaches the model only through tools', async () => {
    const citation = `${region.path}:${region.start}-${region.end}`;
    const answerText = `The step follows the renamed line that callers now read (${citation}).`;
    explainer = await startOpenAiServer(
      {
        seats: {
          'explain:sequence': [
            { toolCalls: [{ name: 'read_quote', input: {} }] },
            { toolCalls: [{ name: 'read_excerpt', input: { path: region.path, side: region.side, start_line: region.start, end_line: region.end } }] },
            { toolCalls: [{ name: 'answer', input: { markdown: answerText } }] },
            { text: 'Done.' },
            // The second explanation, in the same thread.
            { toolCalls: [{ name: 'answer', input: { markdown: `Again: ${citation}.` } }] },
            { text: 'Done.' },
          ],
        },
      },
      { seatOf: explainSeat },
    );
    const before = changes.length;
    const result = await host!.connection.sendRequest(AsksExplain, { sessionId, anchor: anchor(), harness: openai(explainer) });
    assert.ok(result.ok, result.ok ? '' : `${result.error.message} ${JSON.stringify(result.error.detail)}`);
    const { threadId, answer, provenance } = result.value;
    assert.deepEqual(provenance, { harness: 'openai-compatible', model: 'scripted-model' });
    assert.equal(answer.author, 'agent');
    assert.equal(answer.text, `${answerText}\n\n${PROVENANCE}`);

    const thread = (await projection()).quoteThreads[threadId];
    assert.ok(thread, 'the thread is in the projection');
    assert.deepEqual(thread.anchor, anchor());
    assert.equal(thread.open, true);
    assert.deepEqual(
      thread.messages.map((m) => [m.author, m.text]),
      [
        ['reviewer', QUESTION],
        ['agent', answer.text],
      ],
    );
    assert.deepEqual(thread.messages[1], answer);
    await until(() => changes.length >= before + 3, 'AsksChanged for the open, the question and the answer', 5_000);
    const pushed = changes.slice(before).filter((c) => c.sessionId === sessionId);
    assert.deepEqual(pushed[pushed.length - 1]?.projection.quoteThreads[threadId], thread, 'the last push carries the answered thread');

    // What the model was sent: the prompt holds no quote; the tool results do.
    const requests = explainer.requestsTo('/v1/chat/completions').filter((r) => r.seat === 'explain:sequence');
    assert.equal(requests.length, 4, 'one request per scripted step of the turn');
    const first = messagesOf(requests[0]!.body);
    assert.deepEqual(
      first.map((m) => m.role),
      ['system', 'user'],
    );
    assert.match(textOf(first[1]!.content), /^# Rennet: Sequence \(explain\)\n/);
    for (const request of requests) {
      for (const message of messagesOf(request.body).filter((m) => m.role === 'system' || m.role === 'user')) {
        assert.ok(!textOf(message.content).includes(quote), `a ${message.role} message carries the quote`);
        assert.ok(!textOf(message.content).includes(stepId), `a ${message.role} message names the element`);
      }
    }
    const tools = messagesOf(requests[3]!.body)
      .filter((m) => m.role === 'tool')
      .map((m) => textOf(m.content));
    assert.ok(tools[0]?.includes(quote), 'read_quote returned the quote');
    assert.match(tools[1] ?? '', /^ +\d+ +\d* [+-]/m, 'read_excerpt returned captured diff lines');
    assert.match(tools[2] ?? '', /Your explanation is recorded/);
    const offered = ((requests[0]!.body?.tools ?? []) as Array<{ function: { name: string } }>).map((t) => t.function.name);
    // The read tools every seat gets, then the explainer's own four.
    assert.deepEqual(offered, [...READ_TOOL_NAMES, 'read_quote', 'read_element', 'read_excerpt', 'answer']);

    // Asked again in the same thread: no new thread, two more messages.
    const threads = Object.keys((await projection()).quoteThreads).length;
    const again = await host!.connection.sendRequest(AsksExplain, { sessionId, anchor: anchor(), threadId, harness: openai(explainer) });
    assert.ok(again.ok, again.ok ? '' : again.error.message);
    assert.equal(again.value.threadId, threadId);
    const after = await projection();
    assert.equal(Object.keys(after.quoteThreads).length, threads);
    assert.deepEqual(
      after.quoteThreads[threadId]?.messages.map((m) => m.author),
      ['reviewer', 'agent', 'reviewer', 'agent'],
    );
    assert.equal(after.quoteThreads[threadId]?.messages[3]?.text, `Again: ${citation}.\n\n${PROVENANCE}`);
  });

  it('with no harness configured: refused no-harness, naming the settings; the thread holds only the question', async () => {
    const result = await host!.connection.sendRequest(AsksExplain, { sessionId, anchor: anchor(), harness: config({ default: 'openai', lenses: { sequence: 'none' } }) });
    assert.equal(result.ok, false);
    if (result.ok) return;
    assert.equal(result.error.code, 'invalid-request');
    assert.equal(result.error.detail?.reason, 'no-harness');
    assert.match(result.error.message, /No harness is configured to explain Sequence passages .*rennet\.harness\.default.*Rennet: Show Harnesses/);
    const threadId = result.error.detail?.threadId;
    assert.ok(threadId, 'the refusal names the thread');
    const thread = (await projection()).quoteThreads[threadId];
    assert.deepEqual(
      thread?.messages.map((m) => [m.author, m.text]),
      [['reviewer', QUESTION]],
      'no agent message is made up',
    );
  });

  it('refuses an anchor that names nothing of this session, and appends nothing', async () => {
    const other = await host!.connection.sendRequest(ReviewOpen, { repo: repo!.dir, target: { kind: 'branch', head: 'feature', base: 'feature~1' } });
    assert.ok(other.ok, other.ok ? '' : other.error.message);
    const otherId = other.value.snapshot.session.id;
    assert.notEqual(otherId, sessionId);
    const beforeMine = await projection();
    const beforeOther = await projection(otherId);
    const pushes = changes.length;
    const harness = config({ default: 'none' });
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ sessionId, anchor: anchor({ elementId: 'e999' }), harness }, 'not-found', 'unknown-element'],
      [{ sessionId, anchor: anchor({ generationId: 'g-0000000000000000' }), harness }, 'not-found', 'unknown-generation'],
      [{ sessionId: otherId, anchor: anchor(), harness }, 'invalid-request', 'wrong-session'],
      [{ sessionId: 's-nope', anchor: anchor(), harness }, 'not-found', 'unknown-session'],
      [{ sessionId, anchor: anchor({ quote: 'x'.repeat(16 * 1024 + 1) }), harness }, 'invalid-request', 'invalid'],
      [{ sessionId, anchor: anchor(), threadId: 'qt-0000000000000000', harness }, 'not-found', 'unknown-thread'],
    ];
    for (const [params, code, reason] of cases) {
      const result = await host!.connection.sendRequest(AsksExplain, params as never);
      assert.equal(result.ok, false, `accepted: ${reason}`);
      if (result.ok) continue;
      assert.equal(result.error.code, code, `${reason}: ${result.error.message}`);
      assert.equal(result.error.detail?.reason, reason, result.error.message);
      assert.equal(result.error.detail?.threadId, undefined, `${reason}: no thread was opened`);
    }
    assert.deepEqual(await projection(), beforeMine, 'nothing appended to the session');
    assert.deepEqual(await projection(otherId), beforeOther, 'nothing appended to the other session');
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(changes.length, pushes, 'a refusal pushes nothing');
  });

  it('a model that never calls answer, or a harness that fails: refused with its words, the thread keeps the question, no agent message', async () => {
    explainer = await startOpenAiServer(
      {
        seats: {
          'explain:sequence': [{ toolCalls: [{ name: 'read_quote', input: {} }] }, { text: 'It is about renaming a line.' }, { malformed: 'http-500' }],
        },
      },
      { seatOf: explainSeat },
    );
    const silent = await host!.connection.sendRequest(AsksExplain, { sessionId, anchor: anchor(), harness: openai(explainer) });
    assert.equal(silent.ok, false);
    if (silent.ok) return;
    assert.equal(silent.error.detail?.reason, 'no-answer');
    assert.match(silent.error.message, /openai-compatible \(scripted-model\) ended its turn without handing in an explanation/);
    const silentThread = silent.error.detail?.threadId;
    assert.ok(silentThread);
    assert.deepEqual(
      (await projection()).quoteThreads[silentThread]?.messages.map((m) => [m.author, m.text]),
      [['reviewer', QUESTION]],
    );

    const broken = await host!.connection.sendRequest(AsksExplain, { sessionId, anchor: anchor(), threadId: silentThread, harness: openai(explainer) });
    assert.equal(broken.ok, false);
    if (broken.ok) return;
    assert.equal(broken.error.detail?.reason, 'harness-failed');
    assert.equal(broken.error.detail?.threadId, silentThread);
    assert.match(broken.error.message, /could not explain the passage: .*HTTP 500/);
    assert.deepEqual(
      (await projection()).quoteThreads[silentThread]?.messages.map((m) => m.author),
      ['reviewer', 'reviewer'],
      'each ask is kept; no answer is invented',
    );
  });
});
