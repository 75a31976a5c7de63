import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LENSES } from '../../protocol/board';
import { ReviewReport } from '../../protocol/review';
import { isolatedCliEnv, type TestRepo } from '../fixtures/gitRepo';
import { startAnthropicServer, startOpenAiServer, type ScriptedAnthropicServer, type ScriptedOpenAiServer, type Step } from '../servers';
import { codeChange, compileTurn, decisionsTurn, designTurn, noiseTurn, regionsOf, reviewTurn, sequenceTurn, type Region } from '../unit/pipeline/fixtures';
import { claudeTestEnv, codexTestEnv, codexTestHome, newMark, realBin, removeDir, tempDir } from './harnessSupport';

/**
 * `rennet review --harness <name>` end to end through the built CLI, for every model harness,
 * against scripted model servers on loopback (never a real model): the CLI captures, writes the
 * context directory, runs the production prompts and the real pipeline, and writes the report.
 * The scripted servers route each request to its seat by the production prompt's own header
 * (`# Rennet: <Lens> (<role>)`).
 */

const CLI = join(__dirname, '..', '..', 'dist', 'cli.js');

type Call = { tool: string; input?: Record<string, unknown>; as?: string };
const steps = (calls: readonly Call[]): Step[] => [...calls.map((c): Step => ({ toolCalls: [{ name: c.tool, input: c.input ?? {}, ...(c.as ? { as: c.as } : {}) }] })), { text: 'Done.' }];

/** Which seat a request belongs to, read from the production prompt header in the request body. */
function seatOfHeader(body: Record<string, unknown>, raw: string): string | null {
  // A request that offers no tools is a CLI's side request (a title, a summary): no seat's step.
  if (!Array.isArray(body.tools) || body.tools.length === 0) return null;
  const match = /# Rennet: (Design|Sequence|Decisions|Flagged|Noise) \((writer|review|compiler)\)/.exec(raw);
  if (!match) return null;
  const lens = (match[1] as string).toLowerCase();
  const role = { writer: 'drafter', review: 'reviewer', compiler: 'compiler' }[match[2] as 'writer' | 'review' | 'compiler'];
  return `${lens}:${role}`;
}

/**
 * `origin` is the origin of the one review harness (every seat runs on the same harness), so the
 * compiler's solo finding names the review that really ran.
 */
function script(regions: Region[], origin: 'claude' | 'codex' | 'other'): Record<string, Step[]> {
  const [, app1, app2, util] = regions as [Region, Region, Region, Region];
  return {
    'design:drafter': steps(designTurn()),
    'sequence:drafter': steps(sequenceTurn([app1])),
    'decisions:drafter': steps(decisionsTurn([app2])),
    'flagged:reviewer': steps(reviewTurn('# Findings\n\n- src/util.ts:5 renames a line callers match on.\n')),
    'flagged:compiler': steps(compileTurn([util], [{ origin, agreement: 'solo', title: 'Callers match the old text' }])),
    'noise:drafter': steps(noiseTurn(1)),
  };
}

function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('rennet review --harness NAME through the built CLI, against scripted model servers', function () {
  this.timeout(180_000);
  let repo: TestRepo | null = null;
  let anthropic: ScriptedAnthropicServer | null = null;
  let openai: ScriptedOpenAiServer | null = null;
  const dirs: string[] = [];

  afterEach(async () => {
    await anthropic?.close();
    await openai?.close();
    repo?.cleanup();
    for (const d of dirs.splice(0)) removeDir(d);
    anthropic = openai = repo = null;
  });

  async function review(harnessArgs: string[], env: NodeJS.ProcessEnv, expectHarness: string): Promise<ReviewReport> {
    const out = tempDir('rennet-review-harness-');
    dirs.push(out);
    const json = join(out, 'review.json');
    const merged = isolatedCliEnv({ RENNET_DATA_DIR: join(out, 'data'), ...env });
    for (const key of Object.keys(merged)) if (merged[key] === undefined) delete merged[key];
    const run = await runCli(['review', '--repo', repo!.dir, ...harnessArgs, '--json', json], merged);
    assert.equal(run.code, 0, run.stderr);
    const report = ReviewReport.parse(JSON.parse(readFileSync(json, 'utf8')));
    for (const board of report.boards) assert.equal(board.state, 'settled', `${board.lens}: ${JSON.stringify(board.failure)}\n${run.stderr}`);
    assert.deepEqual(
      report.boards.map((b) => b.lens),
      [...LENSES],
    );
    for (const s of report.spend) assert.equal(s.harness, expectHarness, `${s.seat} ran on ${s.harness}`);
    assert.ok(report.spend.length >= 6, 'a turn per seat');
    const finding = report.boards[3]!.elements.find((e) => e.kind === 'finding') as { title?: string } | undefined;
    assert.equal(finding?.title, 'Callers match the old text');
    return report;
  }

  it('anthropic: the Messages API at --base-url with --model', async () => {
    const change = await codeChange();
    repo = change.repo;
    anthropic = await startAnthropicServer({ seats: script(regionsOf(change.patchset), 'claude') }, { seatOf: seatOfHeader });
    const report = await review(['--harness', 'anthropic', '--base-url', anthropic.origin, '--model', 'scripted-model'], { ANTHROPIC_API_KEY: '' }, 'anthropic');
    for (const s of report.spend) assert.ok((s.inputTokens ?? 0) > 0, `${s.seat} reports usage`);
    assert.ok(
      anthropic.requests.every((r) => !('x-api-key' in r.headers)),
      'no key is sent to a loopback server when none is set',
    );
  });

  it('openai: chat completions at --base-url with --model', async () => {
    const change = await codeChange();
    repo = change.repo;
    openai = await startOpenAiServer({ seats: script(regionsOf(change.patchset), 'other') }, { seatOf: seatOfHeader });
    await review(['--harness', 'openai', '--base-url', openai.baseUrl, '--model', 'scripted-model'], { OPENAI_API_KEY: '' }, 'openai-compatible');
    assert.ok(openai.requestsTo('/v1/chat/completions').length >= 6);
  });

  it('claude-code: the real Claude Code CLI (user settings from HOME, pointed at the scripted server)', async function () {
    const bin = realBin(this, 'RENNET_CLAUDE_BIN');
    const change = await codeChange();
    repo = change.repo;
    anthropic = await startAnthropicServer({ seats: script(regionsOf(change.patchset), 'claude') }, { seatOf: seatOfHeader });
    const home = tempDir('rennet-claude-home-');
    dirs.push(home);
    const report = await review(['--harness', 'claude-code', '--model', 'claude-sonnet-4-5'], { ...claudeTestEnv(home, anthropic.origin, newMark()), RENNET_CLAUDE_BIN: bin }, 'claude-code');
    for (const s of report.spend) assert.ok((s.inputTokens ?? 0) > 0, `${s.seat} reports usage`);
  });

  it('codex: the real Codex CLI (provider from CODEX_HOME, pointed at the scripted Responses server)', async function () {
    const bin = realBin(this, 'RENNET_CODEX_BIN');
    const change = await codeChange();
    repo = change.repo;
    openai = await startOpenAiServer({ seats: script(regionsOf(change.patchset), 'codex') }, { seatOf: seatOfHeader });
    const home = tempDir('rennet-codex-home-');
    dirs.push(home);
    codexTestHome(home, openai.baseUrl);
    await review(['--harness', 'codex'], { ...codexTestEnv(home, newMark()), RENNET_CODEX_BIN: bin, PATH: `${process.env.PATH}` }, 'codex');
    assert.ok(openai.requestsTo('/v1/responses').length >= 6, 'Codex spoke the Responses API');
  });
});
