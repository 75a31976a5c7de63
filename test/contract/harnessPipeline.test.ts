import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LENSES } from '../../protocol/board';
import { ClaudeCodeHarness } from '../../host/harness/claudeCode';
import { CodexHarness } from '../../host/harness/codex';
import { newGenerationId, runLensPipeline } from '../../host/pipeline/run';
import type { PromptReader } from '../../host/pipeline/ports';
import type { HarnessAssignment } from '../../host/pipeline/types';
import { startAnthropicServer, startOpenAiServer, type ScriptedAnthropicServer, type ScriptedOpenAiServer, type Step } from '../servers';
import type { TestRepo } from '../fixtures/gitRepo';
import { codeChange, compileTurn, decisionsTurn, designTurn, noiseTurn, observe, realClock, regionsOf, reviewTurn, sequenceTurn, type Region } from '../unit/pipeline/fixtures';
import { claudeTestEnv, codexTestEnv, codexTestHome, newMark, realBin, removeDir, tempDir } from './harnessSupport';

/**
 * One whole generation of the lens pipeline on the REAL vendor CLIs against scripted model
 * servers on loopback: Claude Code drafts Design, Sequence, Decisions and Noise and compiles
 * Flagged; Codex and Claude Code are the two Flagged reviewers. Every seat connects to its own
 * real MCP server; the pipeline is the production scheduler (runLensPipeline).
 */

type Call = { tool: string; input?: Record<string, unknown>; as?: string };

/** A scripted-harness turn as model steps: one tool call per model request, then a closing text. */
function steps(calls: readonly Call[]): Step[] {
  return [...calls.map((c): Step => ({ toolCalls: [{ name: c.tool, input: c.input ?? {}, ...(c.as ? { as: c.as } : {}) }] })), { text: 'Done.' }];
}

/** Prompts that name the seat (`Seat: <id>`), which is how the scripted servers route a request. */
const prompts: PromptReader = {
  seatPrompt: (seat, context) => `Seat: ${seat.seatId}\nWrite your part of the review. The context directory is ${context.contextDir}.`,
  followUpPrompt: (_seat, verdict) => `VERDICT ${verdict ?? '(finish was never called)'}`,
};

describe('runLensPipeline on the real Claude Code and Codex CLIs', function () {
  this.timeout(180_000);
  let anthropic: ScriptedAnthropicServer | null = null;
  let openai: ScriptedOpenAiServer | null = null;
  let repo: TestRepo | null = null;
  const dirs: string[] = [];

  afterEach(async () => {
    await anthropic?.close();
    await openai?.close();
    repo?.cleanup();
    for (const d of dirs.splice(0)) removeDir(d);
    anthropic = openai = repo = null;
  });

  it('settles all five lanes: Claude drafts and compiles, Codex and Claude review', async function () {
    const claudeBin = realBin(this, 'RENNET_CLAUDE_BIN');
    const codexBin = realBin(this, 'RENNET_CODEX_BIN');
    const change = await codeChange();
    repo = change.repo;
    const { patchset } = change;
    const [, app1, app2, util] = regionsOf(patchset) as [Region, Region, Region, Region];

    anthropic = await startAnthropicServer({
      seats: {
        'design:drafter': steps(designTurn()),
        'sequence:drafter': steps(sequenceTurn([app1])),
        'decisions:drafter': steps(decisionsTurn([app2])),
        'flagged:reviewer:claude': steps(reviewTurn('# Findings\n\n- src/util.ts:5 renames a line callers match on.\n')),
        'flagged:compiler': steps(
          compileTurn(
            [util],
            [
              { origin: 'claude', agreement: 'concur', title: 'Callers match the old text' },
              { origin: 'codex', agreement: 'diverge', title: 'The rename is not covered by a test' },
            ],
          ),
        ),
        'noise:drafter': steps(noiseTurn(1)),
      },
    });
    openai = await startOpenAiServer({ seats: { 'flagged:reviewer:codex': steps(reviewTurn('# Findings\n\n- The rename in src/util.ts breaks a match.\n')) } });

    const claudeHome = tempDir('rennet-claude-home-');
    const codexHome = tempDir('rennet-codex-home-');
    dirs.push(claudeHome, codexHome);
    codexTestHome(codexHome, openai.baseUrl);
    const mark = newMark();
    const claude = new ClaudeCodeHarness({ bin: claudeBin, model: 'claude-sonnet-4-5', env: claudeTestEnv(claudeHome, anthropic.origin, mark) });
    const codex = new CodexHarness({ bin: codexBin, model: 'scripted-model', env: codexTestEnv(codexHome, mark) });
    const harnesses: HarnessAssignment = { design: claude, sequence: claude, decisions: claude, noise: claude, flagged: { reviewers: [codex, claude], compiler: claude } };

    const obs = observe();
    const started = Date.now();
    const outcome = await runLensPipeline(
      { patchset, sessionId: 's-cli', generationId: newGenerationId(), workspaceDir: repo.dir, contextDir: '.rennet/context/s-cli', harnesses },
      { prompts, clock: realClock, design: null, onFrame: obs.onFrame, onLane: obs.onLane },
    );
    const elapsed = Date.now() - started;

    for (const lane of outcome.lanes) assert.equal(lane.state, 'settled', `${lane.lens}: ${JSON.stringify(lane.failure)}`);
    assert.deepEqual(
      outcome.lanes.map((l) => [l.lens, l.attempts]),
      LENSES.map((l) => [l, 0]),
    );
    // One turn per seat, each on the harness assigned, with the usage the CLI reported.
    const spend = outcome.spend.map((s) => [s.seat, s.harness, s.model]).sort();
    assert.deepEqual(spend, [
      ['decisions:drafter', 'claude-code', 'claude-sonnet-4-5'],
      ['design:drafter', 'claude-code', 'claude-sonnet-4-5'],
      ['flagged:compiler', 'claude-code', 'claude-sonnet-4-5'],
      ['flagged:reviewer:claude', 'claude-code', 'claude-sonnet-4-5'],
      ['flagged:reviewer:codex', 'codex', 'scripted-model'],
      ['noise:drafter', 'claude-code', 'claude-sonnet-4-5'],
      ['sequence:drafter', 'claude-code', 'claude-sonnet-4-5'],
    ]);
    for (const s of outcome.spend) {
      assert.ok((s.inputTokens ?? 0) > 0 && (s.outputTokens ?? 0) > 0, `${s.seat} reports usage`);
      assert.equal(s.priceUsd === null, s.harness === 'codex', `${s.seat}: Claude Code reports a cost, Codex none`);
    }
    // Both reviews reached their findings files through their own MCP servers.
    const findings = join(repo.dir, '.rennet/context/s-cli/findings');
    assert.match(readFileSync(join(findings, 'claude.md'), 'utf8'), /callers match on/);
    assert.match(readFileSync(join(findings, 'codex.md'), 'utf8'), /breaks a match/);
    const flagged = outcome.lanes.find((l) => l.lens === 'flagged')!;
    const findingsOnBoard = [...flagged.board.elements.values()].filter((e) => e.kind === 'finding') as unknown as Array<{ title: string; author: string; accord: string }>;
    assert.deepEqual(
      findingsOnBoard.map((f) => [f.title, f.author, f.accord]),
      [
        ['Callers match the old text', 'claude', 'concur'],
        ['The rename is not covered by a test', 'codex', 'conflict'],
      ],
    );
    assert.ok(elapsed < 60_000, `the generation took ${elapsed} ms`);
    console.log(`      (a whole generation on the real CLIs: ${elapsed} ms)`);
  });
});
