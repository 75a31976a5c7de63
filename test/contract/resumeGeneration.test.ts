import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LENSES } from '../../protocol/board';
import { GenerationSnapshot, ReviewReport, type HarnessConfig } from '../../protocol/review';
import { GenerationGet, HostLog, ReviewOpen, ReviewRunLenses } from '../../protocol/rpc';
import { isolatedCliEnv, type TestRepo } from '../fixtures/gitRepo';
import { startOpenAiServer, type ScriptedOpenAiServer, type Step } from '../servers';
import { codeChange, compileTurn, decisionsTurn, designTurn, noiseTurn, regionsOf, reviewTurn, sequenceTurn, type Region } from '../unit/pipeline/fixtures';
import { listenGenerations } from './generationPushes';
import { removeDir, tempDir } from './harnessSupport';
import { killAndRestart, killProcess, startHost, type HostUnderTest } from './hostProcess';

/**
 * Recovery of an ordinary generation (issue H): a process killed with SIGKILL while a generation is
 * drafting leaves its settled lanes in the store; the next request to draft the session's boards
 * resumes that generation (host/review/resume.ts) — the same generation id, the settled lanes
 * rebuilt with no model call, only the unsettled lanes drafted.
 *
 * Against the built host (dist/host.js) over JSON-RPC and the built CLI (dist/cli.js), drafting with
 * the `openai` harness at the scripted OpenAI server on loopback. Requests are routed to seats by
 * the production prompt's header (`# Rennet: <Lens> (<role>)`), and counted per seat: Sequence's
 * first turn is held by the server (a step that answers after ten minutes) while every other core
 * lane settles; the process is killed during that hold.
 */

const CLI = join(__dirname, '..', '..', 'dist', 'cli.js');
const SECRET = 'sk-rennet-resume-secret-0123456789';
const HELD_MS = 600_000;

type Call = { tool: string; input?: Record<string, unknown>; as?: string };
const steps = (calls: readonly Call[]): Step[] => [...calls.map((c): Step => ({ toolCalls: [{ name: c.tool, input: c.input ?? {}, ...(c.as ? { as: c.as } : {}) }] })), { text: 'Done.' }];

function seatOfHeader(body: Record<string, unknown>, raw: string): string | null {
  if (!Array.isArray(body.tools) || body.tools.length === 0) return null;
  const match = /# Rennet: (Design|Sequence|Decisions|Flagged|Noise) \((writer|review|compiler)\)/.exec(raw);
  if (!match) return null;
  const role = { writer: 'drafter', review: 'reviewer', compiler: 'compiler' }[match[2] as 'writer' | 'review' | 'compiler'];
  return `${(match[1] as string).toLowerCase()}:${role}`;
}

/** Every seat settles on its script, except Sequence, whose first request is held (the process dies in it). */
function script(regions: Region[]): Record<string, Step[]> {
  const [, app1, app2, util] = regions as [Region, Region, Region, Region];
  return {
    'design:drafter': steps(designTurn()),
    'sequence:drafter': [{ text: 'held past the kill', delayMs: HELD_MS }, ...steps(sequenceTurn([app1]))],
    'decisions:drafter': steps(decisionsTurn([app2])),
    'flagged:reviewer': steps(reviewTurn()),
    'flagged:compiler': steps(compileTurn([util], [{ origin: 'other', agreement: 'solo', title: 'Callers match the old text' }])),
    'noise:drafter': steps(noiseTurn(1)),
  };
}

const SEATS = ['design:drafter', 'sequence:drafter', 'decisions:drafter', 'flagged:reviewer', 'flagged:compiler', 'noise:drafter'] as const;
/** The seats of the lanes that settle before the kill. */
const SETTLED_SEATS = ['design:drafter', 'decisions:drafter', 'flagged:reviewer', 'flagged:compiler'] as const;

function counts(server: ScriptedOpenAiServer): Record<string, number> {
  return Object.fromEntries(SEATS.map((seat) => [seat, server.requests.filter((r) => r.seat === seat).length]));
}

const TERMINAL = new Set(['settled', 'absent', 'failed']);
const settledAll = (s: GenerationSnapshot) => s.lanes.length === LENSES.length && s.lanes.every((l) => TERMINAL.has(l.state));
const laneOf = (s: GenerationSnapshot, lens: string) => s.lanes.find((l) => l.lens === lens)!;

async function until(predicate: () => boolean, what: string, detail: () => string = () => '', timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}\n${detail()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

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

describe('an interrupted generation resumes: settled lanes are not drafted again (built dist/host.js and dist/cli.js)', function () {
  this.timeout(180_000);
  let repo: TestRepo | null = null;
  let server: ScriptedOpenAiServer | null = null;
  let host: HostUnderTest | null = null;
  const dirs: string[] = [];
  const children: ChildProcess[] = [];

  afterEach(async () => {
    for (const c of children.splice(0)) await killProcess(c);
    await host?.stop();
    await server?.close();
    repo?.cleanup();
    for (const d of dirs.splice(0)) removeDir(d);
    host = server = repo = null;
  });

  /** `pushes`: the generation after each push (whole ones as sent, deltas folded as the extension folds them). */
  function listen(h: HostUnderTest) {
    const generations = listenGenerations(h.connection);
    const logs: string[] = [];
    h.connection.onNotification(HostLog, (line) => {
      logs.push(line.message);
    });
    return {
      get pushes(): GenerationSnapshot[] {
        return generations.snapshots();
      },
      problems: generations.problems,
      logs,
    };
  }

  it('VS Code host: killed (-9) while Sequence is held; the next host resumes the same generation on runLenses and only Sequence and Noise are drafted', async () => {
    const change = await codeChange();
    repo = change.repo;
    server = await startOpenAiServer({ seats: script(regionsOf(change.patchset)) }, { seatOf: seatOfHeader });
    const storeDir = tempDir('rennet-resume-store-');
    dirs.push(storeDir);
    host = await startHost(storeDir);
    const first = listen(host);
    const opened = await host.connection.sendRequest(ReviewOpen, { repo: repo.dir, target: { kind: 'branch', head: 'feature', base: 'main' } });
    assert.ok(opened.ok, opened.ok ? '' : opened.error.message);
    const sessionId = opened.value.snapshot.session.id;
    const harness: HarnessConfig = { default: 'openai', lenses: {}, vscodeLm: {}, openai: { baseUrl: server.baseUrl, model: 'scripted-model', apiKey: SECRET }, anthropic: {} };

    const started = await host.connection.sendRequest(ReviewRunLenses, { sessionId, harness });
    assert.ok(started.ok, started.ok ? '' : started.error.message);
    const { generationId } = started.value;

    // The moment to kill: Design, Decisions and Flagged settled (outcomes in the store), Sequence's turn held at the server.
    const ready = (s: GenerationSnapshot) =>
      s.generationId === generationId && ['design', 'decisions', 'flagged'].every((l) => laneOf(s, l).state === 'settled') && laneOf(s, 'sequence').state === 'working';
    await until(
      () => first.pushes.some(ready) && counts(server!)['sequence:drafter'] === 1,
      'three core lanes settled while Sequence is held',
      () => `${JSON.stringify(first.pushes.at(-1)?.lanes.map((l) => [l.lens, l.state, l.failure?.message]))}\n${first.logs.join('\n')}`,
    );
    const before = counts(server);
    for (const seat of SETTLED_SEATS) assert.ok(before[seat]! > 0, `${seat} drafted before the kill: ${JSON.stringify(before)}`);
    assert.equal(before['noise:drafter'], 0, 'Noise waits for Sequence');
    const pidBefore = host.child.pid!;
    const claim = join(storeDir, 'runs', generationId);
    assert.ok(existsSync(claim), 'the run holds its generation claim while it drafts');
    assert.match(readFileSync(claim, 'utf8'), new RegExp(`^${pidBefore} `));

    host = await killAndRestart(host, storeDir);
    const second = listen(host);

    // Until it is resumed: the unsettled lanes say the run stopped, and that drafting again resumes them.
    const stopped = await host.connection.sendRequest(GenerationGet, { sessionId });
    assert.ok(stopped.ok && stopped.value, 'the interrupted generation reads back');
    assert.equal(stopped.value.generationId, generationId);
    assert.equal(stopped.value.status, 'live');
    for (const lens of ['design', 'decisions', 'flagged']) assert.equal(laneOf(stopped.value, lens).state, 'settled', lens);
    for (const lens of ['sequence', 'noise']) {
      const lane = laneOf(stopped.value, lens);
      assert.equal(lane.state, 'failed', lens);
      assert.equal(lane.failure?.retryable, true);
      assert.match(lane.failure?.message ?? '', /stopped before it settled \(the Rennet host stopped/);
      assert.match(lane.failure?.message ?? '', /Draft again resumes this generation: the boards that settled are kept/);
    }
    assert.deepEqual(counts(server), before, 'a host start spends nothing');

    const again = await host.connection.sendRequest(ReviewRunLenses, { sessionId, harness });
    assert.ok(again.ok, again.ok ? '' : again.error.message);
    assert.equal(again.value.generationId, generationId, 'the same generation continues');

    await until(
      () => second.pushes.some((s) => s.generationId === generationId && settledAll(s)),
      'the resumed generation to settle',
      () => `${JSON.stringify(second.pushes.at(-1)?.lanes.map((l) => [l.lens, l.state, l.failure?.message]))}\n${second.logs.join('\n')}`,
    );
    await quiet(() => second.pushes.length);
    assert.deepEqual([...first.problems, ...second.problems], [], 'every generation delta applied');
    const got = await host.connection.sendRequest(GenerationGet, { sessionId });
    assert.ok(got.ok && got.value);
    const last = got.value;
    assert.equal(last.generationId, generationId);
    assert.deepEqual(last.frozen, [], 'no other generation was drawn');
    for (const lane of last.lanes) {
      assert.equal(lane.state, 'settled', `${lane.lens}: ${JSON.stringify(lane.failure)}\n${second.logs.join('\n')}`);
      assert.equal(lane.board?.status, 'finished', lane.lens);
    }

    const after = counts(server);
    for (const seat of SETTLED_SEATS) assert.equal(after[seat], before[seat], `${seat} was asked again after the restart`);
    assert.ok(after['sequence:drafter']! > before['sequence:drafter']!, 'Sequence was drafted again');
    assert.ok(after['noise:drafter']! > 0, 'Noise was drafted');
    assert.ok(
      second.logs.some((l) => l.includes(`generation ${generationId}`) && /resuming \(kept with no model call: design, decisions, flagged; drafting again: sequence, noise\)/.test(l)),
      second.logs.join('\n'),
    );
    assert.ok(last.spend.some((s) => s.seat === 'design:drafter') && last.spend.some((s) => s.seat.startsWith('sequence:')), 'the spend of both runs is kept');
    assert.ok(!existsSync(claim), 'the claim is released when the run ends');
    assert.ok(!second.logs.join('\n').includes(SECRET) && !host.stderr().includes(SECRET));
  });

  it('rennet review: killed (-9) while Sequence is held; running it again resumes the same generation and asks only for Sequence and Noise', async () => {
    const change = await codeChange();
    repo = change.repo;
    server = await startOpenAiServer({ seats: script(regionsOf(change.patchset)) }, { seatOf: seatOfHeader });
    const out = tempDir('rennet-resume-cli-');
    dirs.push(out);
    const json = join(out, 'review.json');
    const env = isolatedCliEnv({ RENNET_DATA_DIR: join(out, 'data'), OPENAI_API_KEY: '' });
    const args = ['review', '--repo', repo.dir, '--head', 'feature', '--base', 'main', '--harness', 'openai', '--base-url', server.baseUrl, '--model', 'scripted-model', '--json', json];

    const first = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(first);
    let firstErr = '';
    first.stderr!.on('data', (c: Buffer) => (firstErr += c.toString('utf8')));
    first.stdout!.resume();
    await until(
      () => ['design', 'decisions', 'flagged'].every((l) => new RegExp(`^ {2}${l} +settled`, 'm').test(firstErr)) && counts(server!)['sequence:drafter'] === 1,
      'three core lanes settled while Sequence is held',
      () => firstErr,
    );
    const generationId = /Generation (g-[0-9a-f]{16}): running the lenses/.exec(firstErr)?.[1];
    assert.ok(generationId, firstErr);
    const before = counts(server);
    await killProcess(first);
    assert.ok(!existsSync(json), 'the killed run wrote no report');

    const second = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      children.push(child);
      let stdout = '';
      let stderr = '';
      child.stdout!.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
      child.stderr!.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stderr, new RegExp(`Generation ${generationId}: resuming the lenses interrupted earlier \\(kept: design, decisions, flagged; drafting: sequence, noise\\)`));
    const report = ReviewReport.parse(JSON.parse(readFileSync(json, 'utf8')));
    assert.equal(report.generation, generationId, 'the same generation continues');
    for (const board of report.boards) assert.equal(board.state, 'settled', `${board.lens}: ${JSON.stringify(board.failure)}\n${second.stderr}`);

    const after = counts(server);
    for (const seat of SETTLED_SEATS) assert.equal(after[seat], before[seat], `${seat} was asked again by the second run`);
    assert.ok(after['sequence:drafter']! > before['sequence:drafter']!, 'Sequence was drafted again');
    assert.ok(after['noise:drafter']! > 0, 'Noise was drafted');
  });
});
