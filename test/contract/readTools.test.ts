import assert from 'node:assert/strict';
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
import { readSurface } from '../../host/read/tools';
import { startAnthropicServer, startOpenAiServer, type RecordedRequest, type Step } from '../servers';
import { TestRepo } from '../fixtures/gitRepo';
import { claudeTestEnv, codexTestEnv, codexTestHome, newMark, realBin, removeDir, tempDir } from './harnessSupport';

/**
 * A seat that must read: on every harness, a Flagged reviewer's scripted model lists the changes,
 * reads a changed file's diff and an UNCHANGED caller at the head, then hands in its findings. The
 * repository's checkout is on main, not the reviewed branch: the tool results the client resends
 * must carry the reviewed head's lines (which the checkout does not have). The seat's tools are
 * the production composition (withReadTools over reviewSurface), in-process for the HTTP adapters
 * and over the seat's MCP server for the CLIs.
 */

const SEAT: SeatSpec = { seatId: 'flagged:reviewer:x', lens: 'flagged', role: 'reviewer' };
const PROMPT = `Seat: ${SEAT.seatId}\nReview the change; hand in your findings.`;
/** Only at the reviewed head: the checkout (main) has the old signature. */
const HEAD_ONLY = 'start = 0';
/** The unchanged caller's body. */
const CALLER_LINE = 'CALLER_MARKER(total(xs))';

const STEPS: Step[] = [
  { toolCalls: [{ name: LIST_CHANGES, input: {} }] },
  { toolCalls: [{ name: READ_DIFF, input: { path: 'src/sum.ts' } }] },
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

async function reviewerRig(): Promise<Rig> {
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
  const served = withReadTools(reviewSurface(findings, '.rennet/context/s-read/findings/x.md'), readSurface(gitChangeSource({ repoDir: repo.dir, patchset: captured.value, contextDir })));
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
  assert.deepEqual(calls, [`${LIST_CHANGES}:ok`, `${READ_DIFF}:ok`, `${READ_FILE}:ok`, `${SUBMIT_FINDINGS}:ok`], JSON.stringify(events));
  const offered = offeredNames(requests().find((r) => r.seat !== null));
  for (const name of READ_TOOL_NAMES) assert.ok(offered.includes(name), `the model was not offered ${name}: ${JSON.stringify(offered)}`);
  const resent = lastRequestText(requests());
  assert.ok(resent.includes(HEAD_ONLY), `the resent tool results do not carry the reviewed head's line (${HEAD_ONLY})`);
  assert.ok(resent.includes(CALLER_LINE), 'the resent tool results do not carry the unchanged caller read at the head');
  assert.ok(resent.includes('src/sum.ts — modified'), 'list_changes was not resent');
  assert.match(readFileSync(rig.findings, 'utf8'), /still calls total/);
  assert.equal(rig.served.stats().readCalls, 3);
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
    closers.push(() => server.close(), () => removeDir(home));
    await expectReadTurn(new ClaudeCodeHarness({ bin, model: 'scripted-model', env: claudeTestEnv(home, server.origin, newMark()) }), rig, () => server.requestsTo('/v1/messages'));
  });

  it('Codex CLI (the seat MCP server)', async function () {
    const bin = realBin(this, 'RENNET_CODEX_BIN');
    rig = await reviewerRig();
    const server = await startOpenAiServer({ seats: { [SEAT.seatId]: STEPS } });
    const home = tempDir('rennet-read-codex-');
    codexTestHome(home, server.baseUrl);
    closers.push(() => server.close(), () => removeDir(home));
    await expectReadTurn(new CodexHarness({ bin, model: 'scripted-model', env: codexTestEnv(home, newMark()) }), rig, () => server.requestsTo('/v1/responses'));
  });
});
