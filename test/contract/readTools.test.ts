import assert, { AssertionError } from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LIST_CHANGES, READ_DIFF, READ_FILE, READ_TOOL_NAMES } from '../../protocol/read';
import { startSeatServer, type SeatServerHandle } from '../../host/board/mcpServer';
import { capturePatchset } from '../../host/capture/capture';
import { openRepo } from '../../host/capture/repo';
import { AnthropicHarness } from '../../host/harness/anthropic';
import { ClaudeCodeHarness } from '../../host/harness/claudeCode';
import { CodexHarness } from '../../host/harness/codex';
import { OpenAiCompatibleHarness } from '../../host/harness/openai';
import type { Harness, HarnessEvent, SeatSpec, TurnRequest } from '../../host/pipeline/ports';
import { reviewSurface, SUBMIT_FINDINGS } from '../../host/pipeline/reviewers';
import { withReadTools } from '../../host/read/compose';
import { gitChangeSource } from '../../host/read/gitSource';
import { readSurface, type ReadSurface } from '../../host/read/tools';
import { anthropicToolResults, openAiToolResults, startAnthropicServer, startOpenAiServer, type RecordedRequest, type Step } from '../servers';
import { TestRepo } from '../fixtures/gitRepo';
import { claudeTestEnv, codexTestEnv, codexTestHome, newMark, realBin, removeDir, tempDir } from './harnessSupport';

/**
 * A seat that must read: on every harness, a Flagged reviewer's scripted model lists the changes,
 * reads a changed file's diff, the CHANGED file itself and an UNCHANGED caller at the head, then
 * hands in its findings. The repository's checkout is on main, not the reviewed branch: the tool
 * results the client resends must carry the reviewed head's lines (which the checkout does not
 * have) — each in the result of the call that read it. The seat's tools are the production
 * composition (withReadTools over reviewSurface), in-process for the HTTP adapters and over the
 * seat's MCP server for the CLIs. A negative control runs the same helper on a seat offered no
 * read tools, and it must fail.
 */

const SEAT: SeatSpec = { seatId: 'flagged:reviewer:x', lens: 'flagged', role: 'reviewer' };
const PROMPT = `Seat: ${SEAT.seatId}\nReview the change; hand in your findings.`;
/** Only at the reviewed head: the checkout (main) has the old signature. */
const HEAD_ONLY = 'start = 0';
/** The changed file's first line at the reviewed head, as read_file numbers it. */
const HEAD_FILE_LINE = `1| export function total(xs: number[], ${HEAD_ONLY}) {`;
/** The unchanged caller's body. */
const CALLER_LINE = 'CALLER_MARKER(total(xs))';

const STEPS: Step[] = [
  { toolCalls: [{ name: LIST_CHANGES, input: {} }] },
  { toolCalls: [{ name: READ_DIFF, input: { path: 'src/sum.ts' } }] },
  { toolCalls: [{ name: READ_FILE, input: { path: 'src/sum.ts', side: 'head' } }] },
  { toolCalls: [{ name: READ_FILE, input: { path: 'src/report.ts', side: 'head' } }] },
  { toolCalls: [{ name: SUBMIT_FINDINGS, input: { findings_markdown: '# Findings\n\n- src/sum.ts:1 adds `start`; src/report.ts still calls total(xs).\n' } }] },
  { text: 'Done.' },
];

interface Rig {
  repo: TestRepo;
  served: ReturnType<typeof withReadTools>;
  server: SeatServerHandle;
  findings: string;
}

/** A read surface that serves nothing: the seat is offered no read tools (the negative control). */
const NO_READ_TOOLS: ReadSurface = {
  tools: [],
  call: async (name) => ({ text: `There is no read tool named "${name}".`, isError: true }),
  stats: () => ({ calls: 0, refusals: 0, bytes: 0, ms: 0 }),
};

async function reviewerRig(options: { readTools?: boolean } = {}): Promise<Rig> {
  const repo = new TestRepo();
  repo.write('src/sum.ts', 'export function total(xs: number[]) {\n  return xs.reduce((a, b) => a + b, 0);\n}\n');
  repo.write('src/report.ts', `import { total } from './sum';\nexport const report = (xs: number[]) => ${CALLER_LINE};\n`);
  repo.commit('base');
  repo.git('checkout', '-q', '-b', 'feature');
  repo.write('src/sum.ts', `export function total(xs: number[], ${HEAD_ONLY}) {\n  return xs.reduce((a, b) => a + b, start);\n}\n`);
  repo.commit('feature');
  repo.git('checkout', '-q', 'main');
  assert.ok(!readFileSync(join(repo.dir, 'src/sum.ts'), 'utf8').includes(HEAD_ONLY), 'fixture: the checkout is the base');
  const handle = await openRepo(repo.dir);
  assert.ok(handle.ok);
  const captured = await capturePatchset(handle.value, { kind: 'branch', base: 'main', head: 'feature' });
  assert.ok(captured.ok);
  const contextDir = join(repo.dir, '.rennet', 'context', 's-read');
  mkdirSync(contextDir, { recursive: true });
  const findings = join(contextDir, 'findings', 'x.md');
  const read = options.readTools === false ? NO_READ_TOOLS : readSurface(gitChangeSource({ repoDir: repo.dir, patchset: captured.value, contextDir }));
  const served = withReadTools(reviewSurface(findings, '.rennet/context/s-read/findings/x.md'), read);
  const server = await startSeatServer({ seat: served });
  return { repo, served, server, findings };
}

function turnOf(rig: Rig, events: HarnessEvent[]): TurnRequest {
  return {
    seat: SEAT,
    prompt: PROMPT,
    followUp: false,
    cwd: rig.repo.dir,
    tools: rig.served.port(),
    mcp: { url: rig.server.url, headers: { ...rig.server.headers } },
    signal: new AbortController().signal,
    onEvent: (e) => events.push(e),
  };
}

/** Every model request after the first resends the tool results so far: the last one holds them all. */
function lastRequestText(requests: readonly RecordedRequest[]): string {
  const seat = requests.filter((r) => r.seat !== null);
  return seat.at(-1)?.raw ?? '';
}

/** The tool results the last model request resends, each as its own text (Chat Completions, Responses or Messages). */
function resentResults(requests: readonly RecordedRequest[]): string[] {
  const body = requests.filter((r) => r.seat !== null).at(-1)?.body ?? {};
  return [...openAiToolResults(body), ...anthropicToolResults(body)].map((r) => r.text);
}

/** Tool names offered in the first model request, without an MCP prefix. */
function offeredNames(request: RecordedRequest | undefined): string[] {
  const raw = JSON.stringify(request?.body?.tools ?? []);
  return [...raw.matchAll(/"name":"(?:mcp__rennet__)?([a-z_]+)"/g)].map((m) => m[1] as string);
}

async function expectReadTurn(harness: Harness, rig: Rig, requests: () => readonly RecordedRequest[]): Promise<void> {
  const events: HarnessEvent[] = [];
  const result = await harness.runTurn(turnOf(rig, events));
  assert.equal(result.outcome, 'ended', result.message ?? '');
  const calls = events.filter((e): e is Extract<HarnessEvent, { type: 'tool-result' }> => e.type === 'tool-result').map((e) => `${e.name.replace(/^mcp__rennet__/, '')}:${e.isError ? 'error' : 'ok'}`);
  assert.deepEqual(calls, [`${LIST_CHANGES}:ok`, `${READ_DIFF}:ok`, `${READ_FILE}:ok`, `${READ_FILE}:ok`, `${SUBMIT_FINDINGS}:ok`], JSON.stringify(events));
  const offered = offeredNames(requests().find((r) => r.seat !== null));
  for (const name of READ_TOOL_NAMES) assert.ok(offered.includes(name), `the model was not offered ${name}: ${JSON.stringify(offered)}`);
  const resent = lastRequestText(requests());
  assert.ok(resent.includes(HEAD_ONLY), `the resent tool results do not carry the reviewed head's line (${HEAD_ONLY})`);
  assert.ok(resent.includes(CALLER_LINE), 'the resent tool results do not carry the unchanged caller read at the head');
  assert.ok(resent.includes('src/sum.ts — modified'), 'list_changes was not resent');
  // read_file on the CHANGED file answers its head: the line only the reviewed branch has, in that call's own result
  // (Codex prefixes a tool's output with its wall time).
  const results = resentResults(requests());
  const headFile = results.find((text) => text.includes('src/sum.ts at the head'));
  assert.ok(headFile, `read_file src/sum.ts (head) is not among the resent results: ${JSON.stringify(results.map((t) => t.slice(0, 60)))}`);
  assert.ok(headFile.includes(HEAD_FILE_LINE), `read_file of the changed file does not carry the head's line ${JSON.stringify(HEAD_FILE_LINE)}:\n${headFile}`);
  assert.match(readFileSync(rig.findings, 'utf8'), /still calls total/);
  assert.equal(rig.served.stats().readCalls, 4);
}

describe('every harness gives a seat the read tools (a scripted model that must read)', function () {
  this.timeout(120_000);
  let rig: Rig | null = null;
  const closers: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
    await rig?.server.close();
    rig?.repo.cleanup();
    rig = null;
  });

  it('OpenAI-compatible chat completions (in-process tools)', async () => {
    rig = await reviewerRig();
    const server = await startOpenAiServer({ seats: { [SEAT.seatId]: STEPS } });
    closers.push(() => server.close());
    await expectReadTurn(new OpenAiCompatibleHarness({ baseUrl: server.baseUrl, model: 'scripted-model' }), rig, () => server.requestsTo('/v1/chat/completions'));
  });

  it('negative control: the same helper fails on a seat offered no read tools (the calls are refused, nothing of the head is read)', async () => {
    rig = await reviewerRig({ readTools: false });
    const server = await startOpenAiServer({ seats: { [SEAT.seatId]: STEPS } });
    closers.push(() => server.close());
    const offered = rig.served.port().tools.map((t) => t.name);
    assert.deepEqual(offered, [SUBMIT_FINDINGS], 'the control seat is offered its own tool only');
    await assert.rejects(
      expectReadTurn(new OpenAiCompatibleHarness({ baseUrl: server.baseUrl, model: 'scripted-model' }), rig, () => server.requestsTo('/v1/chat/completions')),
      (error: unknown) => error instanceof AssertionError && JSON.stringify(error.actual).includes(`${LIST_CHANGES}:error`),
    );
    assert.ok(!JSON.stringify(server.requestsTo('/v1/chat/completions').map((r) => r.raw)).includes(HEAD_ONLY), 'no request carries the reviewed head');
  });

  it('Anthropic messages (in-process tools)', async () => {
    rig = await reviewerRig();
    const server = await startAnthropicServer({ seats: { [SEAT.seatId]: STEPS } });
    closers.push(() => server.close());
    await expectReadTurn(new AnthropicHarness({ baseUrl: server.origin, model: 'scripted-model' }), rig, () => server.requestsTo('/v1/messages'));
  });

  it('Claude Code CLI (the seat MCP server)', async function () {
    const bin = realBin(this, 'RENNET_CLAUDE_BIN');
    rig = await reviewerRig();
    const server = await startAnthropicServer({ seats: { [SEAT.seatId]: STEPS } });
    const home = tempDir('rennet-read-claude-');
    closers.push(
      () => server.close(),
      () => removeDir(home),
    );
    await expectReadTurn(new ClaudeCodeHarness({ bin, model: 'scripted-model', env: claudeTestEnv(home, server.origin, newMark()) }), rig, () => server.requestsTo('/v1/messages'));
  });

  it('Codex CLI (the seat MCP server)', async function () {
    const bin = realBin(this, 'RENNET_CODEX_BIN');
    rig = await reviewerRig();
    const server = await startOpenAiServer({ seats: { [SEAT.seatId]: STEPS } });
    const home = tempDir('rennet-read-codex-');
    codexTestHome(home, server.baseUrl);
    closers.push(
      () => server.close(),
      () => removeDir(home),
    );
    await expectReadTurn(new CodexHarness({ bin, model: 'scripted-model', env: codexTestEnv(home, newMark()) }), rig, () => server.requestsTo('/v1/responses'));
  });
});
