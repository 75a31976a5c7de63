import assert from 'node:assert/strict';
import { LENSES } from '../../protocol/board';
import { GenerationSnapshot, type HarnessConfig } from '../../protocol/review';
import { GenerationGet, HostLog, ReviewOpen, ReviewRunLenses } from '../../protocol/rpc';
import type { TestRepo } from '../fixtures/gitRepo';
import { startOpenAiServer, type ScriptedOpenAiServer, type Step } from '../servers';
import { codeChange, compileTurn, decisionsTurn, designTurn, noiseTurn, regionsOf, reviewTurn, sequenceTurn, type Region } from '../unit/pipeline/fixtures';
import { generationContent, listenGenerations } from './generationPushes';
import { removeDir, tempDir } from './harnessSupport';
import { killAndRestart, startHost, type HostUnderTest } from './hostProcess';

/**
 * `rennet/review/runLenses`, `rennet/generation/changed` / `rennet/generation/delta` (folded as
 * the extension folds them: generationPushes.ts) and `rennet/generation/get` against the built
 * host (dist/host.js), drafting with the `openai` harness pointed at the scripted OpenAI
 * server on loopback (never a real model). The server routes each request to its seat by the
 * production prompt's header (`# Rennet: <Lens> (<role>)`), as test/contract/reviewHarnesses does.
 */

type Call = { tool: string; input?: Record<string, unknown>; as?: string };
const steps = (calls: readonly Call[]): Step[] => [...calls.map((c): Step => ({ toolCalls: [{ name: c.tool, input: c.input ?? {}, ...(c.as ? { as: c.as } : {}) }] })), { text: 'Done.' }];

function seatOfHeader(body: Record<string, unknown>, raw: string): string | null {
  if (!Array.isArray(body.tools) || body.tools.length === 0) return null;
  const match = /# Rennet: (Design|Sequence|Decisions|Flagged|Noise) \((writer|review|compiler)\)/.exec(raw);
  if (!match) return null;
  const role = { writer: 'drafter', review: 'reviewer', compiler: 'compiler' }[match[2] as 'writer' | 'review' | 'compiler'];
  return `${(match[1] as string).toLowerCase()}:${role}`;
}

function script(regions: Region[]): Record<string, Step[]> {
  const [, app1, app2, util] = regions as [Region, Region, Region, Region];
  return {
    'design:drafter': steps(designTurn()),
    'sequence:drafter': steps(sequenceTurn([app1])),
    'decisions:drafter': steps(decisionsTurn([app2])),
    'flagged:reviewer': steps(reviewTurn()),
    // Every seat runs on the OpenAI-compatible harness, whose one review has origin `other`.
    'flagged:compiler': steps(compileTurn([util], [{ origin: 'other', agreement: 'solo', title: 'Callers match the old text' }])),
    'noise:drafter': steps(noiseTurn(1)),
  };
}

const SECRET = 'sk-rennet-contract-secret-0123456789';

function config(partial: Partial<HarnessConfig> & Pick<HarnessConfig, 'default'>): HarnessConfig {
  return { lenses: {}, vscodeLm: {}, openai: {}, anthropic: {}, ...partial };
}

const TERMINAL = new Set(['settled', 'absent', 'failed']);
const settledAll = (s: GenerationSnapshot) => s.lanes.length === LENSES.length && s.lanes.every((l) => TERMINAL.has(l.state));

async function until(predicate: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Waits until no notification arrived for `quietMs` (the throttle's last push has gone out). */
async function quiet(received: () => number, quietMs = 400): Promise<void> {
  let count = received();
  let since = Date.now();
  while (Date.now() - since < quietMs) {
    await new Promise((r) => setTimeout(r, 25));
    if (received() !== count) {
      count = received();
      since = Date.now();
    }
  }
}

describe('lens runs over JSON-RPC: runLenses, generation/changed, generation/get (built dist/host.js)', function () {
  this.timeout(180_000);
  let repo: TestRepo | null = null;
  let server: ScriptedOpenAiServer | null = null;
  let host: HostUnderTest | null = null;
  let storeDir = '';

  afterEach(async () => {
    await host?.stop();
    await server?.close();
    repo?.cleanup();
    if (storeDir) removeDir(storeDir);
    host = server = repo = null;
    storeDir = '';
  });

  function listen(h: HostUnderTest) {
    const { pushes, problems } = listenGenerations(h.connection);
    const logs: string[] = [];
    h.connection.onNotification(HostLog, (line) => {
      logs.push(line.message);
    });
    return { pushes, problems, logs };
  }

  it('drafts all five lanes in the background, pushes the generation (whole, then per-lane deltas), and reads the same generation back, also after a restart', async () => {
    const change = await codeChange();
    repo = change.repo;
    server = await startOpenAiServer({ seats: script(regionsOf(change.patchset)) }, { seatOf: seatOfHeader });
    storeDir = tempDir('rennet-generation-store-');
    host = await startHost(storeDir);
    const { pushes, problems, logs } = listen(host);

    const opened = await host.connection.sendRequest(ReviewOpen, { repo: repo.dir, target: { kind: 'branch', head: 'feature', base: 'main' } });
    assert.ok(opened.ok, opened.ok ? '' : opened.error.message);
    const sessionId = opened.value.snapshot.session.id;
    assert.equal(opened.value.snapshot.patchset?.id, change.patchset.id, 'the host captured the same patchset the script was built from');

    const nothing = await host.connection.sendRequest(GenerationGet, { sessionId });
    assert.deepEqual(nothing, { ok: true, value: null }, 'a session with no generation answers null');

    const harness = config({ default: 'openai', openai: { baseUrl: server.baseUrl, model: 'scripted-model', apiKey: SECRET } });
    const [first, second] = await Promise.all([host.connection.sendRequest(ReviewRunLenses, { sessionId, harness }), host.connection.sendRequest(ReviewRunLenses, { sessionId, harness })]);
    assert.ok(first.ok, first.ok ? '' : first.error.message);
    assert.ok(second.ok, second.ok ? '' : second.error.message);
    const { generationId } = first.value;
    assert.match(generationId, /^g-[0-9a-f]{16}$/);
    assert.equal(second.value.generationId, generationId, 'a second request while the run starts answers the same generation');

    // Answered at once: the generation exists, every board is open, no lane has settled yet.
    const early = await host.connection.sendRequest(GenerationGet, { sessionId });
    assert.ok(early.ok && early.value, 'the live generation is readable right after runLenses answers');
    assert.equal(early.value.generationId, generationId);
    assert.equal(early.value.status, 'live');
    assert.deepEqual(
      early.value.lanes.map((l) => l.lens),
      [...LENSES],
    );
    for (const lane of early.value.lanes) assert.ok(lane.board, `${lane.lens} has no board at the start`);
    const again = await host.connection.sendRequest(ReviewRunLenses, { sessionId, harness });
    assert.ok(again.ok);
    if (!settledAll(early.value)) assert.equal(again.value.generationId, generationId, 'a request while the run is live answers its generation');

    await until(() => pushes.some((p) => settledAll(p.snapshot)), 'a pushed snapshot with all five lanes settled');
    await quiet(() => pushes.length);
    const last = pushes[pushes.length - 1]!.snapshot;
    assert.equal(last.generationId, generationId);
    assert.equal(last.sessionId, sessionId);
    assert.equal(last.patchsetId, change.patchset.id);
    assert.deepEqual(
      last.lanes.map((l) => l.lens),
      [...LENSES],
      'lanes in canonical order',
    );
    for (const lane of last.lanes) {
      assert.equal(lane.state, 'settled', `${lane.lens}: ${JSON.stringify(lane.failure)}\n${logs.join('\n')}`);
      assert.ok(lane.board, `${lane.lens} has no board`);
      assert.equal(lane.board.lens, lane.lens);
      assert.equal(lane.board.status, 'finished');
      assert.ok(lane.board.elements.length > 0, `${lane.lens}: an empty board`);
      assert.ok(lane.board.folds.length > 0, `${lane.lens}: no fold lines (readBoard)`);
    }
    const flagged = last.lanes.find((l) => l.lens === 'flagged')!;
    assert.ok(flagged.board!.elements.some((e) => e.kind === 'finding' && (e as { title?: string }).title === 'Callers match the old text'));
    assert.ok(last.spend.length >= 6, `a turn per seat: ${JSON.stringify(last.spend)}`);
    for (const s of last.spend) assert.equal(s.harness, 'openai-compatible');
    assert.ok(
      last.timings.some((t) => t.phase === 'reveal'),
      'the final push carries the generation-wide timings',
    );
    assert.deepEqual(last.frozen, []);

    // The generation whole once, then deltas on it, in order, throttled; every delta applied.
    assert.deepEqual(problems, []);
    assert.ok(pushes.length >= 2, `only ${pushes.length} pushes`);
    assert.equal(pushes[0]!.kind, 'whole');
    assert.ok(
      pushes.slice(1).every((p) => p.kind === 'delta'),
      `a later push came whole: ${pushes.map((p) => p.kind).join(', ')}`,
    );
    assert.ok(pushes.every((p) => p.snapshot.generationId === generationId && p.snapshot.lanes.length === LENSES.length));
    // At most one delta per lane per 50 ms (measured on arrival, so a little jitter is allowed).
    for (const lens of LENSES) {
      const times = pushes.filter((p) => p.delta?.lane?.lens === lens).map((p) => p.at);
      const span = times.length > 1 ? times[times.length - 1]! - times[0]! : 0;
      assert.ok(span >= 50 * (times.length - 1) - 100, `${lens}: ${times.length} deltas in ${span} ms (the throttle allows one batch per 50 ms)`);
    }
    const working = pushes.find((p) => p.snapshot.lanes.some((l) => l.state === 'working' || l.state === 'queued' || l.state === 'waiting'));
    assert.ok(working, 'no push showed a lane in flight');

    // get answers exactly what the pushes made (the run is over: read back from the store, no stream open).
    const got = await host.connection.sendRequest(GenerationGet, { sessionId });
    assert.ok(got.ok && got.value);
    assert.equal(got.value.revision, undefined, 'the run is over: no push stream is open');
    assert.deepEqual(generationContent(got.value), generationContent(last));
    const named = await host.connection.sendRequest(GenerationGet, { sessionId, generationId });
    assert.ok(named.ok && named.value);
    assert.deepEqual(generationContent(named.value), generationContent(last));
    assert.ok(!logs.some((l) => /differed from the store/.test(l)), logs.join('\n'));

    // The key went to the model server and nowhere else.
    assert.ok(server.requestsTo('/v1/chat/completions').every((r) => r.headers.authorization === `Bearer ${SECRET}`));
    assert.ok(!logs.join('\n').includes(SECRET), 'a host log line quotes the key');
    assert.ok(!host.stderr().includes(SECRET), 'the host stderr quotes the key');

    // Killed and started again on the same store: the same snapshot, read back.
    host = await killAndRestart(host, storeDir);
    const restarted = await host.connection.sendRequest(GenerationGet, { sessionId });
    assert.ok(restarted.ok && restarted.value, restarted.ok ? 'no generation after the restart' : restarted.error.message);
    assert.deepEqual(generationContent(restarted.value), generationContent(last));
    const restartedNamed = await host.connection.sendRequest(GenerationGet, { sessionId, generationId });
    assert.ok(restartedNamed.ok && restartedNamed.value);
    assert.deepEqual(generationContent(restartedNamed.value), generationContent(last));

    // A new run freezes the first: with no harness, the model lanes fail and say why.
    const after = listen(host);
    const none = await host.connection.sendRequest(ReviewRunLenses, { sessionId, harness: config({ default: 'none' }) });
    assert.ok(none.ok, none.ok ? '' : none.error.message);
    assert.notEqual(none.value.generationId, generationId);
    await until(() => after.pushes.some((p) => p.snapshot.generationId === none.value.generationId && settledAll(p.snapshot)), 'the second generation to settle');
    await quiet(() => after.pushes.length);
    assert.deepEqual(after.problems, []);
    const second2 = (await host.connection.sendRequest(GenerationGet, { sessionId })) as { ok: true; value: GenerationSnapshot };
    assert.equal(second2.value.generationId, none.value.generationId);
    assert.deepEqual(
      second2.value.frozen.map((f) => f.generationId),
      [generationId],
    );
    for (const lens of ['sequence', 'decisions', 'flagged'] as const) {
      const lane = second2.value.lanes.find((l) => l.lens === lens)!;
      assert.equal(lane.state, 'failed');
      assert.match(lane.failure?.message ?? '', /no model harness is configured: .*none/);
      assert.equal(lane.failure?.retryable, false);
    }
    const frozen = await host.connection.sendRequest(GenerationGet, { sessionId, generationId });
    assert.ok(frozen.ok && frozen.value);
    assert.equal(frozen.value.status, 'frozen');
    assert.deepEqual(frozen.value.lanes, last.lanes, 'freezing changes no lane');
  });

  it('refuses what it cannot run with a typed error, and never quotes a key', async () => {
    const change = await codeChange();
    repo = change.repo;
    storeDir = tempDir('rennet-generation-store-');
    host = await startHost(storeDir);
    const { logs, pushes } = listen(host);
    const opened = await host.connection.sendRequest(ReviewOpen, { repo: repo.dir, target: { kind: 'branch', head: 'feature', base: 'main' } });
    assert.ok(opened.ok);
    const sessionId = opened.value.snapshot.session.id;
    const run = (harness: unknown, id = sessionId) => host!.connection.sendRequest(ReviewRunLenses, { sessionId: id, harness } as never);

    const cases: Array<[unknown, RegExp, string?]> = [
      [config({ default: 'openai', openai: { baseUrl: 'https://models.example.com/v1', model: 'm' } }), /openai harness at https:\/\/models\.example\.com needs an API key: run “Rennet: Set API Key”/],
      [config({ default: 'anthropic', anthropic: { model: 'm' } }), /anthropic harness at https:\/\/api\.anthropic\.com needs an API key/],
      [config({ default: 'openai', openai: { baseUrl: 'http://127.0.0.1:9/v1', apiKey: SECRET } }), /the openai harness needs a model: set rennet\.harness\.openai\.model/],
      [config({ default: 'openai', openai: { baseUrl: 'ftp://x', model: 'm', apiKey: SECRET } }), /baseUrl is not an http\(s\) URL/],
      [config({ default: 'none', lenses: { sequenc: 'none' } }), /unknown lens "sequenc"/],
      // No extension answers rennet/lm/models on this connection.
      [config({ default: 'vscode-lm' }), /could not list VS Code's language models/],
      [{ default: 'gpt-7', lenses: {}, vscodeLm: {}, openai: { apiKey: SECRET }, anthropic: {} }, /^rennet\/review\/runLenses: harness\.default: Invalid option/],
    ];
    for (const [harness, expected] of cases) {
      const result = await run(harness);
      assert.equal(result.ok, false, `accepted: ${JSON.stringify(harness)}`);
      if (result.ok) continue;
      assert.match(result.error.message, expected);
      assert.ok(!result.error.message.includes(SECRET), `the refusal quotes the key: ${result.error.message}`);
    }
    const unknown = await run(config({ default: 'none' }), 's-nope');
    assert.ok(!unknown.ok && unknown.error.code === 'not-found');
    const missing = await host.connection.sendRequest(GenerationGet, { sessionId, generationId: 'g-0000000000000000' });
    assert.ok(!missing.ok && missing.error.code === 'not-found');
    assert.deepEqual(await host.connection.sendRequest(GenerationGet, { sessionId }), { ok: true, value: null }, 'a refusal files no generation');
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(pushes.length, 0, 'a refusal pushes nothing');
    assert.ok(!logs.join('\n').includes(SECRET) && !host.stderr().includes(SECRET));
  });
});
