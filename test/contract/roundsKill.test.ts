import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, cpSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { promisify } from 'node:util';
import type { GenerationSnapshot, HarnessConfig } from '../../protocol/review';
import type { Round } from '../../protocol/rounds';
import { AsksCommand, AsksGet, GenerationGet, HostLog, LmModels, ReviewOpen, ReviewRunLenses, RoundsDispatch, RoundsList, RoundsOrderGet, RoundsRetry } from '../../protocol/rpc';
import { measureRound, takeCheckpoint } from '../../host/rounds/checkpoint';
import { evidenceManifest } from '../../host/rounds/evidence';
import { ROUND_EVENT_KINDS } from '../../host/rounds/ledger';
import { runScriptedWorker } from '../../host/rounds/scriptedWorker';
import { Store } from '../../host/store';
import { isolatedCliEnv, tempDir, type TestRepo } from '../fixtures/gitRepo';
import type { Step } from '../servers/common';
import { ROUND_REPORT_SEAT, seatOfPromptHeader, stepsOfCalls } from '../servers/lensScripts';
import { startOpenAiServer, type ScriptedOpenAiServer } from '../servers/openai';
import { codeChange, compileTurn, decisionsTurn, designTurn, noiseTurn, regionsOf, reviewTurn, sequenceTurn, WASM_PATH, type Region } from '../unit/pipeline/fixtures';
import { killAndRestart, startHost, type HostUnderTest } from './hostProcess';

/**
 * Issue H, "kill -9 of the host at every phase boundary of a round and of a generation": the built
 * host (dist/host.js) over JSON-RPC, a real repository, the scripted worker, and the scripted
 * OpenAI server on loopback answering Rennet's production prompts (routed by their headers:
 * `# Rennet: <Lens> (<role>)`, `# Rennet: round report`) and counting requests per seat.
 *
 * Every case drafts the review's first generation, stages one coding ask, dispatches a round, and
 * SIGKILLs the host just past one receipt — each moment held by a real part, never a product hook:
 *
 *   worker start  only the started receipt: the repository's clean filter (an identity filter, as
 *                 git-lfs's is a real one) holds the before checkpoint's `git add` under its
 *                 temporary index — no worker has started
 *   worker        the before checkpoint, no worker receipt: the scripted worker's `wait` step,
 *                 after its one commit
 *   commit        the worker receipt: the same filter holds the after checkpoint's `git add`
 *   measured      the measured receipt: the repository's reference-transaction hook holds the drop
 *                 of the checkpoint refs (and refuses it once the host is dead: the drop never lands)
 *   report        the successor receipt: the report seat's model request, held by the server (the
 *                 runner records the round at `verification` while the classification turn runs)
 *   verification  the verified report's receipt: the successor's harnesses are being resolved and
 *                 the extension has not answered `rennet/lm/models` (one lens on vscode-lm)
 *   regeneration  the generation receipt (the round returned): Design, Decisions and Flagged of
 *                 the successor settled, Sequence's model request held by the server
 *
 * A new host then starts on the same data directory. The round reads failed at the phase it was
 * in, retryable (regeneration: the round had returned; its generation reads interrupted), and Retry
 * (for the generation, drafting again) resumes it from its receipts — except before the worker
 * started: nothing to resume, the round ends failed, not retryable, and the ask, still staged, goes
 * out with the next dispatch. Proven each time: the worker
 * ran once (one worker commit, its file not written again although Retry is offered the same
 * worker, nothing after its wait), the ledger has one row and every receipt once, the report seat
 * is asked again only when no report receipt existed, lanes that settled before the kill are not
 * asked again, the checkpoint refs are dropped, the round ends `returned`, and its successor
 * generation settles every lane, composed against the first (Sequence's `Round N · Addressed`).
 * And while the host is alive, `rennet round` on the same data directory (another process) neither
 * settles, retries nor dispatches past the round it drives (its run claim).
 *
 * Not reachable without a product hook: inside the report phase proper (after its phase receipt:
 * the successor's capture, git object reads only, then synchronous store writes) and the step from
 * a filed successor generation to its `round.generation` receipt (microtasks, no I/O) — no real
 * part can hold either.
 */

const HELD_MS = 600_000;
const CLI = join(__dirname, '..', '..', 'dist', 'cli.js');
const EXTRA = { path: 'src/extra.ts', content: 'export const extra = (n: number) => n + 1;\n' };
const ASK_TEXT = 'Move the helper into its own module, src/extra.ts.';
const WORKER_COMMIT = 'Add the extra module';
const WORKER_STEPS = [{ write: EXTRA }, { commit: WORKER_COMMIT }];
const LENS_SEATS = ['design:drafter', 'sequence:drafter', 'decisions:drafter', 'flagged:reviewer', 'flagged:compiler', 'noise:drafter'] as const;
type Seat = (typeof LENS_SEATS)[number] | typeof ROUND_REPORT_SEAT;
type Scripts = Partial<Record<Seat, Step[]>>;

const routeByHeader = (body: Record<string, unknown>, raw: string) => (Array.isArray(body.tools) && body.tools.length > 0 ? seatOfPromptHeader(raw) : null);
const harness = (server: ScriptedOpenAiServer, lenses: HarnessConfig['lenses'] = {}): HarnessConfig => ({
  default: 'openai',
  lenses,
  vscodeLm: {},
  openai: { baseUrl: server.baseUrl, model: 'scripted-model' },
  anthropic: {},
});
const asked = (server: ScriptedOpenAiServer, seat: string) => server.requests.filter((r) => r.seat === seat).length;
const askedAll = (server: ScriptedOpenAiServer) => Object.fromEntries([...LENS_SEATS, ROUND_REPORT_SEAT].map((s) => [s, asked(server, s)]));

/** One turn of every lens that settles on codeChange() and on its successor (the worker adds a file; the cited regions do not move). */
function lensTurns(patchset: Parameters<typeof regionsOf>[0]): Record<(typeof LENS_SEATS)[number], Step[]> {
  const regions = regionsOf(patchset);
  const at = (path: string, n = 0) => regions.filter((r) => r.path === path)[n] as Region;
  return {
    'design:drafter': stepsOfCalls(designTurn()),
    'sequence:drafter': stepsOfCalls(sequenceTurn([at('src/app.ts', 0)])),
    'decisions:drafter': stepsOfCalls(decisionsTurn([at('src/app.ts', 1)])),
    'flagged:reviewer': stepsOfCalls(reviewTurn()),
    'flagged:compiler': stepsOfCalls(compileTurn([at('src/util.ts')], [{ origin: 'other', agreement: 'solo', title: 'Callers match the old text' }])),
    'noise:drafter': stepsOfCalls(noiseTurn(1)),
  };
}

/** The report seat: reads the evidence, hands in the one outcome, ends its turn. */
const reportTurn = (askId: string, evidenceId: string): Step[] =>
  stepsOfCalls([
    { tool: 'read_evidence' },
    { tool: 'submit_report', input: { outcomes: [{ askId, outcome: 'addressed', evidenceIds: [evidenceId], note: 'The helper moved into src/extra.ts.' }], beyond: [] } },
  ]);

const TERMINAL = new Set(['settled', 'absent', 'failed']);
const lane = (s: GenerationSnapshot, lens: string) => s.lanes.find((l) => l.lens === lens)!;

async function until<T>(read: () => T | Promise<T>, ok: (v: T) => boolean, what: string, timeoutMs = 90_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}: ${JSON.stringify(v)?.slice(0, 600)}`);
    await new Promise((r) => setTimeout(r, 40));
  }
}

/**
 * The repository's clean filter on `path` (an identity filter, as git-lfs's is a real one): while
 * the gate exists, a `git add` under a temporary index — a checkpoint; the worker's own commit uses
 * the repository's index — waits in it. Answers the gate.
 */
function holdCheckpointAdds(repo: TestRepo, dir: string, path: string): string {
  const gate = join(dir, 'gate');
  const filter = join(dir, 'hold-filter.sh');
  writeFileSync(
    filter,
    [
      '#!/bin/sh',
      `if [ -n "$GIT_INDEX_FILE" ] && [ -e '${gate}' ]; then`,
      `  printf '%s' "$GIT_INDEX_FILE" > '${gate}.tmp' && mv '${gate}.tmp' '${gate}.held'`,
      `  while [ -e '${gate}' ]; do sleep 0.05; done`,
      `  touch '${gate}.released'`,
      'fi',
      'exec cat',
      '',
    ].join('\n'),
  );
  chmodSync(filter, 0o755);
  repo.git('config', 'filter.hold.clean', filter);
  const attributes = repo.git('rev-parse', '--git-path', 'info/attributes');
  writeFileSync(isAbsolute(attributes) ? attributes : join(repo.dir, attributes), `${path} filter=hold\n`);
  writeFileSync(gate, '');
  return gate;
}

/** After the kill the held `git add` is an orphan: open the gate, let it end, and drop the temporary index it wrote. */
async function releaseOrphanedAdd(gate: string): Promise<void> {
  const scratch = dirname(readFileSync(`${gate}.held`, 'utf8'));
  rmSync(gate);
  await until(
    () => existsSync(`${gate}.released`) && !existsSync(join(scratch, 'index.lock')),
    (v) => v,
    'the orphaned checkpoint add to end',
  );
  rmSync(scratch, { recursive: true, force: true });
}

interface Scenario {
  repo: TestRepo;
  dir: string;
  storeDir: string;
  host: HostUnderTest;
  logs: string[];
  sessionId: string;
  askId: string;
  evidenceId: string;
  turns: ReturnType<typeof lensTurns>;
  firstGeneration: string;
  startHead: string;
  /** Server A: the first generation, and the round until the kill. */
  before: ScriptedOpenAiServer;
  /** Server B: everything after the restart. */
  after: ScriptedOpenAiServer | null;
  /** The scripted worker's file: Retry is offered the same worker (it must not run it). */
  workerFile: string;
  /** `rennet/lm/models` requests the host sent this (extension) side; never answered. */
  lmAsked: number;
}

describe('kill -9 of the host at every phase boundary of a round and of its successor generation (built dist/host.js)', function () {
  this.timeout(240_000);
  let s: Scenario | null = null;
  const servers: ScriptedOpenAiServer[] = [];
  const dirs: string[] = [];

  afterEach(async () => {
    await s?.host.stop();
    for (const server of servers.splice(0)) await server.close();
    s?.repo.cleanup();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
    s = null;
  });

  function listen(host: HostUnderTest, logs: string[]): void {
    host.connection.onNotification(HostLog, (line) => {
      logs.push(line.message);
    });
  }

  async function rounds(host: HostUnderTest, sessionId: string): Promise<Round[]> {
    const listed = await host.connection.sendRequest(RoundsList, { sessionId });
    assert.ok(listed.ok, listed.ok ? '' : listed.error.message);
    return listed.value;
  }

  async function generation(host: HostUnderTest, sessionId: string, generationId: string): Promise<GenerationSnapshot> {
    const got = await host.connection.sendRequest(GenerationGet, { sessionId, generationId });
    assert.ok(got.ok && got.value, got.ok ? `no generation ${generationId}` : got.error.message);
    return got.value;
  }

  async function settled(host: HostUnderTest, sessionId: string, generationId: string, logs: string[]): Promise<GenerationSnapshot> {
    const done = await until(
      () => generation(host, sessionId, generationId),
      (g) => g.lanes.every((l) => TERMINAL.has(l.state)),
      `generation ${generationId} to settle every lane`,
    );
    for (const l of done.lanes) assert.equal(l.state, 'settled', `${l.lens}: ${JSON.stringify(l.failure)}\n${logs.join('\n')}`);
    return done;
  }

  /**
   * A review of codeChange() with its first generation settled on server A, one coding ask staged,
   * and a round dispatched with `worker` (its file in `dir`). `beforeRound` runs just before the dispatch.
   */
  async function dispatch(options: {
    worker: unknown[];
    report: (askId: string, evidenceId: string) => Step[];
    successor?: (turns: ReturnType<typeof lensTurns>) => Scripts;
    lenses?: HarnessConfig['lenses'];
    beforeRound?(repo: TestRepo, dir: string): void;
  }): Promise<Scenario & { roundId: string }> {
    const change = await codeChange();
    const repo = change.repo;
    const dir = tempDir('rennet-rounds-kill-');
    dirs.push(dir);
    const turns = lensTurns(change.patchset);

    // The evidence id the round will measure: the worker's committed steps on a copy, measured as a round measures.
    const copy = join(dir, 'oracle');
    cpSync(repo.dir, copy, { recursive: true });
    const b = await takeCheckpoint(copy, 'oracle', 'before');
    assert.ok(b.ok && (await runScriptedWorker(copy, { steps: WORKER_STEPS })).ok);
    const a = await takeCheckpoint(copy, 'oracle', 'after');
    assert.ok(a.ok);
    const measured = await measureRound(copy, b.value.commit, a.value.commit);
    assert.ok(measured.ok);
    const manifest = evidenceManifest(measured.value.files);
    assert.ok(manifest.ok && manifest.value.length === 1, 'the worker makes one evidence unit');
    const evidenceId = manifest.value[0]!.id;

    // Server A's script is filled once the ask id is known (the report cites it).
    const script: Record<string, Step[]> = {};
    const before = await startOpenAiServer({ seats: script }, { seatOf: routeByHeader });
    servers.push(before);
    const successor = options.successor?.(turns) ?? {};
    for (const seat of LENS_SEATS) script[seat] = [...turns[seat], ...(successor[seat] ?? [])];

    const storeDir = join(dir, 'store');
    const host = await startHost(storeDir);
    const logs: string[] = [];
    listen(host, logs);
    // The extension side: asked which VS Code chat models exist, it has not answered yet (only a lens on vscode-lm asks).
    const lm = { asked: 0 };
    host.connection.onRequest(LmModels, () => {
      lm.asked++;
      return new Promise<never>(() => undefined);
    });
    const opened = await host.connection.sendRequest(ReviewOpen, { repo: repo.dir, target: { kind: 'branch', head: 'feature', base: 'main' } });
    assert.ok(opened.ok, opened.ok ? '' : opened.error.message);
    const sessionId = opened.value.snapshot.session.id;
    const patchsetId = opened.value.snapshot.patchset!.id;

    const first = await host.connection.sendRequest(ReviewRunLenses, { sessionId, harness: harness(before) });
    assert.ok(first.ok, first.ok ? '' : first.error.message);
    await settled(host, sessionId, first.value.generationId, logs);

    const staged = await host.connection.sendRequest(AsksCommand, {
      sessionId,
      command: { type: 'stage', anchor: { kind: 'line', patchsetId, path: 'src/util.ts', side: 'head', startLine: 5, endLine: 5 }, text: ASK_TEXT, intent: 'request-change', lane: 'changes' },
    });
    assert.ok(staged.ok, staged.ok ? '' : staged.error.message);
    const askId = staged.value.event.type === 'stage' ? staged.value.event.askId : '';
    script[ROUND_REPORT_SEAT] = options.report(askId, evidenceId);

    const order = await host.connection.sendRequest(RoundsOrderGet, { sessionId });
    assert.ok(order.ok, order.ok ? '' : order.error.message);
    assert.deepEqual(order.value.asks, [askId]);
    const workerFile = join(dir, 'worker.json');
    writeFileSync(workerFile, JSON.stringify({ steps: options.worker }));
    options.beforeRound?.(repo, dir);
    const startHead = repo.git('rev-parse', 'feature');
    const dispatched = await host.connection.sendRequest(RoundsDispatch, { sessionId, digest: order.value.digest, worker: `scripted:${workerFile}`, harness: harness(before, options.lenses) });
    assert.ok(dispatched.ok, dispatched.ok ? '' : dispatched.error.message);
    s = {
      repo,
      dir,
      storeDir,
      host,
      logs,
      sessionId,
      askId,
      evidenceId,
      turns,
      firstGeneration: first.value.generationId,
      startHead,
      before,
      after: null,
      workerFile,
      get lmAsked() {
        return lm.asked;
      },
    };
    return { ...s, roundId: dispatched.value.id };
  }

  /** The worker's file as it stands (null: not written yet). */
  function extraStatNow(): { mtimeMs: number; ino: number } | null {
    const path = join((s as Scenario).repo.dir, EXTRA.path);
    if (!existsSync(path)) return null;
    const st = statSync(path);
    return { mtimeMs: st.mtimeMs, ino: st.ino };
  }

  /** kill -9 now; a new host on the same data directory; server B answers everything after. */
  async function restart(scripts: Scripts): Promise<{ host: HostUnderTest; after: ScriptedOpenAiServer; extraStat: { mtimeMs: number; ino: number } | null }> {
    const sc = s as Scenario;
    const spentBefore = askedAll(sc.before);
    sc.host = await killAndRestart(sc.host, sc.storeDir);
    sc.logs = [];
    listen(sc.host, sc.logs);
    const after = await startOpenAiServer({ seats: scripts as Record<string, Step[]> }, { seatOf: routeByHeader });
    servers.push(after);
    sc.after = after;
    assert.deepEqual(askedAll(sc.before), spentBefore, 'nothing was asked of the model between the kill and the restart');
    // The worker's file as its one turn left it: a worker run again would write it again.
    return { host: sc.host, after, extraStat: extraStatNow() };
  }

  /** The first ledger read on the new host settles the interrupted round: failed at `phase`, retryable. */
  async function settledAt(roundId: string, phase: string, message: RegExp): Promise<Round> {
    const sc = s as Scenario;
    const listed = await rounds(sc.host, sc.sessionId);
    assert.deepEqual(
      listed.map((r) => [r.id, r.ordinal]),
      [[roundId, 1]],
    );
    const round = listed[0]!;
    assert.deepEqual([round.state, round.failure?.phase, round.failure?.retryable], ['failed', phase, true], JSON.stringify(round));
    assert.match(round.failure?.message ?? '', message);
    return round;
  }

  async function retryToReturned(roundId: string): Promise<Round> {
    const sc = s as Scenario;
    // Offered the round's own worker again: a Retry that ran it would rewrite its file (and, mid-turn, wait again).
    const retried = await sc.host.connection.sendRequest(RoundsRetry, { sessionId: sc.sessionId, roundId, worker: `scripted:${sc.workerFile}`, harness: harness(sc.after!) });
    assert.ok(retried.ok, retried.ok ? '' : retried.error.message);
    const ended = await until(
      () => rounds(sc.host, sc.sessionId),
      (r) => r[0]?.state !== 'running',
      'the retried round to end',
    );
    assert.equal(ended[0]?.state, 'returned', `${JSON.stringify(ended[0]?.failure)}\n${sc.logs.join('\n')}`);
    return ended[0]!;
  }

  /**
   * What every case ends with: one returned round (its report the verified one), the worker's one
   * commit and its file untouched since, a successor generation with every lane settled and composed
   * against the first, the ask retired once, and every receipt in the store once.
   */
  async function finish(
    roundId: string,
    extraStat: { mtimeMs: number; ino: number } | null,
    expect: { worker: 'done' | 'lost'; ended: string[]; resumed: number; ledger?: Array<[string, number, string]> },
  ): Promise<GenerationSnapshot> {
    const sc = s as Scenario;
    const listed = await rounds(sc.host, sc.sessionId);
    assert.deepEqual(
      listed.map((r) => [r.id, r.ordinal, r.state]),
      expect.ledger ?? [[roundId, 1, 'returned']],
      'one ledger row per round: the same round, returned',
    );
    const round = listed.find((r) => r.id === roundId)!;
    assert.deepEqual(
      round.report?.outcomes.map((o) => [o.askId, o.outcome, o.evidence[0]?.path]),
      [[sc.askId, 'addressed', EXTRA.path]],
    );
    assert.equal(round.range?.from, sc.startHead);
    assert.equal(round.fromGenerationId, sc.firstGeneration);
    assert.ok(round.generationId && round.generationId !== sc.firstGeneration, 'a successor generation');

    // The worker ran once: one commit of its own on the branch, its file as its turn left it.
    assert.deepEqual(sc.repo.git('log', '--format=%s|%an', `${sc.startHead}..feature`).split('\n'), [`${WORKER_COMMIT}|Rennet Scripted Worker`]);
    assert.equal(round.range?.to, sc.repo.git('rev-parse', 'feature'));
    const st = statSync(join(sc.repo.dir, EXTRA.path));
    assert.ok(extraStat, 'the worker wrote its file before the kill');
    assert.deepEqual({ mtimeMs: st.mtimeMs, ino: st.ino }, extraStat, 'the worker file was not written again after the kill');
    assert.equal(sc.repo.git('status', '--porcelain', '--untracked-files=all', '--', 'src'), '');
    assert.equal(sc.repo.git('for-each-ref', 'refs/rennet/checkpoints/'), '', 'the checkpoint refs are dropped once the diff is kept');

    const successor = await settled(sc.host, sc.sessionId, round.generationId, sc.logs);
    assert.equal(successor.status, 'live');
    assert.equal(successor.patchsetId, round.successorPatchsetId);
    const sequence = lane(successor, 'sequence').board!;
    assert.ok(
      sequence.elements.some((e) => e.kind === 'section' && (e as { title?: string }).title === `Round ${round.ordinal} · Addressed`),
      `the successor's Sequence is composed against the first generation (its Round ${round.ordinal} chapter): ${JSON.stringify(sequence.elements.filter((e) => e.kind === 'section'))}`,
    );
    assert.equal((await generation(sc.host, sc.sessionId, sc.firstGeneration)).status, 'frozen', 'the first generation is frozen');
    const projection = await sc.host.connection.sendRequest(AsksGet, { sessionId: sc.sessionId });
    assert.ok(projection.ok);
    assert.deepEqual(
      projection.value.asks.map((a) => [a.id, a.state]),
      [[sc.askId, 'retired']],
    );

    // Every receipt once (phase receipts mark progress and may repeat).
    await sc.host.stop();
    const store = await Store.open(sc.storeDir, { wasmPath: WASM_PATH });
    try {
      const events = store.readEvents(sc.sessionId);
      const of = (kind: string) => events.filter((e) => e.kind === kind && (e.payload as { round?: string }).round === roundId).map((e) => e.payload as Record<string, unknown>);
      assert.equal(of(ROUND_EVENT_KINDS.started).length, 1);
      assert.deepEqual(
        of(ROUND_EVENT_KINDS.checkpoint).map((p) => p.label),
        ['before', 'after'],
      );
      assert.deepEqual(
        of(ROUND_EVENT_KINDS.worker).map((p) => p.outcome),
        [expect.worker],
        'one worker receipt',
      );
      assert.equal(of(ROUND_EVENT_KINDS.measured).length, 1);
      assert.equal(of(ROUND_EVENT_KINDS.successor).length, 1);
      assert.equal(of(ROUND_EVENT_KINDS.reported).length, 1);
      assert.equal(of(ROUND_EVENT_KINDS.generation).length, 1);
      assert.equal(of(ROUND_EVENT_KINDS.resumed).length, expect.resumed);
      assert.deepEqual(
        of(ROUND_EVENT_KINDS.ended).map((p) => p.state),
        expect.ended,
      );
      assert.equal(events.filter((e) => e.kind === 'ask.retire').length, 1, 'the ask was retired once');
      assert.deepEqual(
        store.listGenerations(sc.sessionId).map((g) => g.id),
        [sc.firstGeneration, round.generationId],
        'two generations: no second successor was drawn',
      );
    } finally {
      store.close();
    }
    return successor;
  }

  /** Every lens of the successor asked once, on server B (one whole turn each), and the report seat as said. */
  function assertSuccessorDraftedOnceAfter(report: number): void {
    const sc = s as Scenario;
    const after = sc.after!;
    for (const seat of LENS_SEATS) assert.equal(asked(after, seat), sc.turns[seat].length, `${seat}: one whole turn after the restart`);
    assert.equal(asked(after, ROUND_REPORT_SEAT), report, 'report seat requests after the restart');
  }

  it('worker start: killed while the before checkpoint is taken (no worker started); the round ends failed, not retryable, its ask staged, and a new dispatch runs the worker once', async () => {
    let gate = '';
    const { roundId } = await dispatch({
      worker: WORKER_STEPS,
      report: reportTurn,
      beforeRound(repo, dir) {
        gate = holdCheckpointAdds(repo, dir, 'src/app.ts');
        // Saved again unchanged (an editor's save): stat-dirty, so the before checkpoint's add reads it through the filter.
        writeFileSync(join(repo.dir, 'src/app.ts'), readFileSync(join(repo.dir, 'src/app.ts')));
      },
    });
    const sc = s as Scenario;
    await until(
      () => existsSync(`${gate}.held`),
      (held) => held,
      'the before checkpoint to reach the held filter',
    );
    const running = await rounds(sc.host, sc.sessionId);
    assert.deepEqual([running[0]?.state, running[0]?.phase], ['running', 'worker']);
    assert.equal(sc.repo.git('rev-parse', 'feature'), sc.startHead, 'the worker has not started');

    await restart({ ...sc.turns, [ROUND_REPORT_SEAT]: reportTurn(sc.askId, sc.evidenceId) });
    await releaseOrphanedAdd(gate);
    const listed = await rounds(sc.host, sc.sessionId);
    assert.deepEqual(
      listed.map((r) => [r.id, r.ordinal, r.state, r.failure?.phase, r.failure?.retryable]),
      [[roundId, 1, 'failed', 'worker', false]],
      JSON.stringify(listed[0]?.failure),
    );
    assert.match(listed[0]!.failure!.message, /host stopped before the worker started: nothing ran/);
    const refused = await sc.host.connection.sendRequest(RoundsRetry, { sessionId: sc.sessionId, roundId, worker: `scripted:${sc.workerFile}`, harness: harness(sc.after!) });
    assert.ok(!refused.ok, 'nothing to resume: Retry is refused');
    const projection = await sc.host.connection.sendRequest(AsksGet, { sessionId: sc.sessionId });
    assert.ok(projection.ok);
    assert.deepEqual(
      projection.value.asks.map((a) => [a.id, a.state]),
      [[sc.askId, 'staged']],
      'the ask stays staged',
    );

    // Dispatched again (the same order): round 2 runs the worker, once.
    const order = await sc.host.connection.sendRequest(RoundsOrderGet, { sessionId: sc.sessionId });
    assert.ok(order.ok, order.ok ? '' : order.error.message);
    const again = await sc.host.connection.sendRequest(RoundsDispatch, { sessionId: sc.sessionId, digest: order.value.digest, worker: `scripted:${sc.workerFile}`, harness: harness(sc.after!) });
    assert.ok(again.ok, again.ok ? '' : again.error.message);
    const ended = await until(
      () => rounds(sc.host, sc.sessionId),
      (r) => r[1]?.state !== undefined && r[1].state !== 'running',
      'round 2 to end',
    );
    assert.equal(ended[1]?.state, 'returned', JSON.stringify(ended[1]?.failure));
    await finish(again.value.id, extraStatNow(), {
      worker: 'done',
      ended: ['returned'],
      resumed: 0,
      ledger: [
        [roundId, 1, 'failed'],
        [again.value.id, 2, 'returned'],
      ],
    });
    assertSuccessorDraftedOnceAfter(reportTurn('', '').length);
  });

  it('worker: killed mid-turn (after its commit, in its wait); Retry measures what it left and never runs it again', async () => {
    const { roundId } = await dispatch({
      worker: [...WORKER_STEPS, { wait: HELD_MS }, { write: { path: 'src/late.ts', content: 'export const late = true;\n' } }, { commit: 'Too late' }],
      report: reportTurn,
    });
    const sc = s as Scenario;
    await until(
      () => sc.repo.git('rev-parse', 'feature'),
      (head) => head !== sc.startHead,
      'the worker to commit',
    );
    const running = await rounds(sc.host, sc.sessionId);
    assert.deepEqual([running[0]?.state, running[0]?.phase], ['running', 'worker']);
    assert.equal(asked(sc.before, ROUND_REPORT_SEAT), 0);

    const { extraStat } = await restart({ ...sc.turns, [ROUND_REPORT_SEAT]: reportTurn(sc.askId, sc.evidenceId) });
    await settledAt(roundId, 'worker', /host stopped while the worker ran.*Retry measures it and goes on without running the worker again/);
    await retryToReturned(roundId);
    assert.ok(!existsSync(join(sc.repo.dir, 'src/late.ts')), 'nothing after the wait ran');
    assert.equal(asked(sc.before, ROUND_REPORT_SEAT), 0);
    await finish(roundId, extraStat, { worker: 'lost', ended: ['failed', 'returned'], resumed: 1 });
    assertSuccessorDraftedOnceAfter(reportTurn('', '').length);
  });

  it('another process meanwhile: `rennet round` on the same data directory neither settles, retries nor joins a round the live host drives; once the host is killed, recovery proceeds', async () => {
    const { roundId } = await dispatch({ worker: [...WORKER_STEPS, { wait: HELD_MS }], report: reportTurn });
    const sc = s as Scenario;
    await until(
      () => sc.repo.git('rev-parse', 'feature'),
      (head) => head !== sc.startHead,
      'the worker to commit',
    );
    const cli = async (...args: string[]) => {
      const base = [
        'round',
        '--repo',
        sc.repo.dir,
        '--branch',
        'feature',
        '--base',
        'main',
        '--store',
        sc.storeDir,
        '--harness',
        'openai',
        '--base-url',
        sc.before.baseUrl,
        '--model',
        'scripted-model',
      ];
      return promisify(execFile)(process.execPath, [CLI, ...base, ...args], { env: isolatedCliEnv({ OPENAI_API_KEY: '' }), encoding: 'utf8' }).then(
        (r) => ({ code: 0, stderr: r.stderr }),
        (e: { code?: number; stderr?: string }) => ({ code: e.code ?? -1, stderr: e.stderr ?? '' }),
      );
    };
    const pid = sc.host.child.pid;
    for (const args of [['--retry'], ['--worker', `scripted:${sc.workerFile}`]]) {
      const refused = await cli(...args);
      assert.equal(refused.code, 3, `rennet round ${args.join(' ')} is refused: ${refused.stderr}`);
      assert.match(refused.stderr, new RegExp(`round 1 of this review is running in another Rennet process \\(process ${pid} on `), refused.stderr);
    }
    const still = await rounds(sc.host, sc.sessionId);
    assert.deepEqual(
      still.map((r) => [r.id, r.state, r.phase, r.failure]),
      [[roundId, 'running', 'worker', null]],
      'the live round was not settled by the other process',
    );
    assert.equal(asked(sc.before, ROUND_REPORT_SEAT), 0);

    // Killed: its claim is dead with it, and the next host settles and resumes the round as ever.
    const { extraStat } = await restart({ ...sc.turns, [ROUND_REPORT_SEAT]: reportTurn(sc.askId, sc.evidenceId) });
    await settledAt(roundId, 'worker', /host stopped while the worker ran/);
    await retryToReturned(roundId);
    await finish(roundId, extraStat, { worker: 'lost', ended: ['failed', 'returned'], resumed: 1 });
    assertSuccessorDraftedOnceAfter(reportTurn('', '').length);
  });

  it('commit: killed while the after checkpoint is taken (the worker receipt written); Retry measures once and returns', async () => {
    let gate = '';
    const { roundId } = await dispatch({
      // The worker touches its file again after committing (same bytes), as formatters do: the checkpoint's `git add` re-reads it through the filter.
      worker: [...WORKER_STEPS, { write: EXTRA }],
      report: reportTurn,
      beforeRound(repo, dir) {
        gate = holdCheckpointAdds(repo, dir, EXTRA.path);
      },
    });
    const sc = s as Scenario;
    await until(
      () => existsSync(`${gate}.held`),
      (held) => held,
      'the after checkpoint to reach the held filter',
    );
    const running = await rounds(sc.host, sc.sessionId);
    assert.deepEqual([running[0]?.state, running[0]?.phase, running[0]?.range], ['running', 'commit', null], 'killed in the commit phase, before the measured receipt');
    assert.equal(sc.repo.git('log', '-1', '--format=%s', 'feature'), WORKER_COMMIT);

    const { extraStat } = await restart({ ...sc.turns, [ROUND_REPORT_SEAT]: reportTurn(sc.askId, sc.evidenceId) });
    await releaseOrphanedAdd(gate);

    await settledAt(roundId, 'commit', /host stopped during the commit phase; Retry resumes the round from there/);
    await retryToReturned(roundId);
    assert.equal(asked(sc.before, ROUND_REPORT_SEAT), 0);
    await finish(roundId, extraStat, { worker: 'done', ended: ['failed', 'returned'], resumed: 1 });
    assertSuccessorDraftedOnceAfter(reportTurn('', '').length);
  });

  it('measured: killed after the measured receipt, while the checkpoint refs are dropped; Retry keeps the measure and drops them', async () => {
    let gate = '';
    const { roundId } = await dispatch({
      worker: WORKER_STEPS,
      report: reportTurn,
      beforeRound(repo, dir) {
        // The repository's reference-transaction hook: while the gate exists, a deletion of a
        // checkpoint ref waits in its prepared state; once the gate is gone (the host that asked is
        // dead) that transaction is refused, so the drop the killed host started never lands —
        // as a drop a crash cuts short.
        gate = join(dir, 'gate');
        const hooks = repo.git('rev-parse', '--git-path', 'hooks');
        const hook = join(isAbsolute(hooks) ? hooks : join(repo.dir, hooks), 'reference-transaction');
        writeFileSync(
          hook,
          [
            '#!/bin/sh',
            'input=$(cat)',
            `if [ "$1" = prepared ] && [ -e '${gate}' ] && printf '%s\\n' "$input" | grep -q '^[0-9a-f]* 0\\{40\\} refs/rennet/checkpoints/'; then`,
            `  touch '${gate}.held'`,
            `  while [ -e '${gate}' ]; do sleep 0.05; done`,
            `  touch '${gate}.refused'`,
            '  exit 1',
            'fi',
            'exit 0',
            '',
          ].join('\n'),
        );
        chmodSync(hook, 0o755);
        writeFileSync(gate, '');
      },
    });
    const sc = s as Scenario;
    await until(
      () => existsSync(`${gate}.held`),
      (held) => held,
      'the measured round to drop its checkpoint refs',
    );
    const running = await rounds(sc.host, sc.sessionId);
    assert.deepEqual([running[0]?.state, running[0]?.phase, running[0]?.successorPatchsetId], ['running', 'commit', null]);
    assert.equal(running[0]?.range?.to, sc.repo.git('rev-parse', 'feature'), 'the measured receipt is written');

    const { extraStat } = await restart({ ...sc.turns, [ROUND_REPORT_SEAT]: reportTurn(sc.askId, sc.evidenceId) });
    rmSync(gate);
    await until(
      () => existsSync(`${gate}.refused`),
      (v) => v,
      'the orphaned drop to be refused',
    );
    await until(
      () => sc.repo.git('for-each-ref', '--format=%(refname)', 'refs/rennet/checkpoints/').split('\n').filter(Boolean).length,
      (n) => n === 2,
      'the checkpoint refs the killed host left',
    );

    await settledAt(roundId, 'commit', /host stopped during the commit phase; Retry resumes the round from there/);
    await retryToReturned(roundId);
    assert.equal(asked(sc.before, ROUND_REPORT_SEAT), 0);
    await finish(roundId, extraStat, { worker: 'done', ended: ['failed', 'returned'], resumed: 1 });
    assertSuccessorDraftedOnceAfter(reportTurn('', '').length);
  });

  it('report: killed while the report seat is held mid-turn; Retry asks it again (no report receipt), the worker not', async () => {
    const { roundId } = await dispatch({ worker: WORKER_STEPS, report: () => [{ toolCalls: [{ name: 'read_evidence', input: {} }] }, { text: 'held past the kill', delayMs: HELD_MS }] });
    const sc = s as Scenario;
    await until(
      () => asked(sc.before, ROUND_REPORT_SEAT),
      (n) => n === 2,
      'the report seat to read the evidence and be held',
    );
    const running = await rounds(sc.host, sc.sessionId);
    assert.deepEqual([running[0]?.state, running[0]?.phase, running[0]?.report], ['running', 'verification', null]);
    const successorPatchset = running[0]?.successorPatchsetId;
    assert.ok(successorPatchset, 'the successor receipt was written before the report turn');

    const { extraStat } = await restart({ ...sc.turns, [ROUND_REPORT_SEAT]: reportTurn(sc.askId, sc.evidenceId) });
    await settledAt(roundId, 'verification', /host stopped during the verification phase; Retry resumes the round from there/);
    const ended = await retryToReturned(roundId);
    assert.equal(ended.successorPatchsetId, successorPatchset, 'the successor was not captured again');
    assert.equal(asked(sc.before, ROUND_REPORT_SEAT), 2, 'the held turn was the only one before the kill');
    await finish(roundId, extraStat, { worker: 'done', ended: ['failed', 'returned'], resumed: 1 });
    assertSuccessorDraftedOnceAfter(reportTurn('', '').length);
  });

  it('verification: killed after the verified report receipt, before the successor generation is filed; Retry re-verifies it and never asks the report seat again', async () => {
    // Noise on vscode-lm: the successor's harnesses are resolved before its generation is filed, and
    // the extension has not answered rennet/lm/models when the host dies.
    const { roundId } = await dispatch({ worker: WORKER_STEPS, report: reportTurn, lenses: { noise: 'vscode-lm' } });
    const sc = s as Scenario;
    await until(
      () => sc.lmAsked,
      (n) => n > 0,
      'the successor generation to resolve its harnesses',
    );
    const running = await rounds(sc.host, sc.sessionId);
    assert.deepEqual([running[0]?.state, running[0]?.phase, running[0]?.generationId], ['running', 'regeneration', null]);
    assert.deepEqual(
      running[0]?.report?.outcomes.map((o) => [o.askId, o.outcome]),
      [[sc.askId, 'addressed']],
      'the verified report receipt is written',
    );
    assert.equal(asked(sc.before, ROUND_REPORT_SEAT), reportTurn('', '').length);

    const { extraStat } = await restart({ ...sc.turns });
    const failed = await settledAt(roundId, 'regeneration', /host stopped during the regeneration phase; Retry resumes the round from there/);
    assert.deepEqual(failed.report, running[0]?.report, 'the report survives the kill');
    await retryToReturned(roundId);
    assert.equal(asked(sc.before, ROUND_REPORT_SEAT), reportTurn('', '').length, 'the report seat was asked once in all');
    await finish(roundId, extraStat, { worker: 'done', ended: ['failed', 'returned'], resumed: 1 });
    assertSuccessorDraftedOnceAfter(0);
  });

  it('regeneration: killed while Sequence is held (Design, Decisions, Flagged settled); drafting again resumes the same successor, composed, and asks only Sequence and Noise', async () => {
    const { roundId } = await dispatch({
      worker: WORKER_STEPS,
      report: reportTurn,
      // Server A, after the first generation's turns: the successor's Design, Decisions and Flagged settle; Sequence is held.
      successor: (turns) => ({
        'design:drafter': turns['design:drafter'],
        'decisions:drafter': turns['decisions:drafter'],
        'flagged:reviewer': turns['flagged:reviewer'],
        'flagged:compiler': turns['flagged:compiler'],
        'sequence:drafter': [{ text: 'held past the kill', delayMs: HELD_MS }],
      }),
    });
    const sc = s as Scenario;
    const returned = await until(
      () => rounds(sc.host, sc.sessionId),
      (r) => r[0]?.state !== 'running',
      'the round to return (its successor generation filed)',
    );
    assert.equal(returned[0]?.state, 'returned', JSON.stringify(returned[0]?.failure));
    const successorId = returned[0]!.generationId!;
    await until(
      () => generation(sc.host, sc.sessionId, successorId),
      (g) => ['design', 'decisions', 'flagged'].every((l) => lane(g, l).state === 'settled') && asked(sc.before, 'sequence:drafter') === sc.turns['sequence:drafter'].length + 1,
      'Design, Decisions and Flagged of the successor settled while Sequence is held',
    );
    const spent = askedAll(sc.before);
    assert.equal(spent['noise:drafter'], sc.turns['noise:drafter'].length, 'Noise of the successor waits for Sequence');

    const { extraStat } = await restart({ 'sequence:drafter': sc.turns['sequence:drafter'], 'noise:drafter': sc.turns['noise:drafter'] });
    // The round had returned when its generation was filed: it stays returned (nothing to settle, nothing to retry).
    const listed = await rounds(sc.host, sc.sessionId);
    assert.deepEqual(
      listed.map((r) => [r.id, r.state, r.generationId]),
      [[roundId, 'returned', successorId]],
    );
    const refused = await sc.host.connection.sendRequest(RoundsRetry, { sessionId: sc.sessionId, roundId, worker: `scripted:${sc.workerFile}`, harness: harness(sc.after!) });
    assert.ok(!refused.ok, 'a returned round is not retried');
    assert.match(refused.error.message, /returned; only a failed round is retried/);
    const stopped = await generation(sc.host, sc.sessionId, successorId);
    for (const l of ['design', 'decisions', 'flagged']) assert.equal(lane(stopped, l).state, 'settled', l);
    for (const l of ['sequence', 'noise']) {
      assert.equal(lane(stopped, l).state, 'failed', l);
      assert.equal(lane(stopped, l).failure?.retryable, true, l);
      assert.match(lane(stopped, l).failure?.message ?? '', /Draft again resumes this generation/);
    }

    const again = await sc.host.connection.sendRequest(ReviewRunLenses, { sessionId: sc.sessionId, harness: harness(sc.after!) });
    assert.ok(again.ok, again.ok ? '' : again.error.message);
    assert.equal(again.value.generationId, successorId, 'the same successor generation continues');
    await settled(sc.host, sc.sessionId, successorId, sc.logs);
    assert.ok(
      sc.logs.some((l) => l.includes(`generation ${successorId}`) && /resuming \(kept with no model call: design, decisions, flagged; drafting again: sequence, noise\)/.test(l)),
      sc.logs.join('\n'),
    );
    const after = sc.after!;
    for (const seat of ['design:drafter', 'decisions:drafter', 'flagged:reviewer', 'flagged:compiler'] as const)
      assert.equal(asked(after, seat), 0, `${seat} settled before the kill and was not asked again`);
    assert.equal(asked(after, 'sequence:drafter'), sc.turns['sequence:drafter'].length);
    assert.equal(asked(after, 'noise:drafter'), sc.turns['noise:drafter'].length);
    assert.equal(asked(after, ROUND_REPORT_SEAT), 0);
    assert.deepEqual(askedAll(sc.before), spent, 'nothing more went to the server of the killed host');
    assert.equal(asked(sc.before, ROUND_REPORT_SEAT), reportTurn('', '').length);
    await finish(roundId, extraStat, { worker: 'done', ended: ['returned'], resumed: 0 });
  });
});
