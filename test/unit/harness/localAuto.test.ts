import assert from 'node:assert/strict';
import { discoverLocalModels } from '../../../host/harness/discover';
import { OpenAiCompatibleHarness } from '../../../host/harness/openai';
import type { ToolPort } from '../../../host/pipeline/ports';
import { assignmentFromConfig } from '../../../host/harness/harnessConfig';
import { loadHarnessAssignment } from '../../../host/harness/harnessChoice';
import type { LmModelInfo } from '../../../protocol/rpc';
import { turnRequest } from '../../servers/seatKit';
import { closedOrigin, lmStudioAnswers, ollamaAnswers, recordFetches, startFakeServer, type FakeLocalServer } from './localServers';
import { BOTH, config, MISSING, ports } from './harnessConfigFixtures';

/**
 * `auto` with no agent CLI: the first tool-capable model of a local model server, through the
 * OpenAI-compatible harness at that server's `/v1`, with no key. The servers are real HTTP servers
 * on 127.0.0.1 in Ollama's and LM Studio's wire shapes, injected through discoverLocalModels'
 * test-only `baseUrls`; every fetch is recorded, so nothing is asked anywhere else.
 */

/** The harness's private Chat Completions URL and options (asserted, not used). */
const wiring = (h: unknown) => h as { url: string; options: { baseUrl: string; apiKey?: string; stream?: boolean } };

const NO_TOOLS: ToolPort = { tools: [{ name: 'finish', description: 'End the turn.', inputSchema: { type: 'object', properties: {} } }], call: async () => ({ text: 'ok', isError: false }) };

describe('auto: a local model when no CLI is installed', function () {
  this.timeout(20_000);
  let ollama: FakeLocalServer;
  let lmStudio: FakeLocalServer;
  let fetches: ReturnType<typeof recordFetches>;

  beforeEach(async () => {
    ollama = await startFakeServer(
      ollamaAnswers([
        { name: 'gemma2:2b', capabilities: ['completion'] },
        { name: 'qwen3:8b', capabilities: ['completion', 'tools'] },
      ]),
    );
    lmStudio = await startFakeServer(lmStudioAnswers([{ id: 'llama-3.2-3b-instruct', state: 'loaded', capabilities: ['tool_use'] }], { native: true }));
    fetches = recordFetches();
  });
  afterEach(async () => {
    fetches.restore();
    await ollama.close();
    await lmStudio.close();
  });

  const local = (baseUrls: { ollama?: string; 'lm-studio'?: string }) => () => discoverLocalModels({ baseUrls });
  function onlyAsked(origins: string[]) {
    for (const url of fetches.urls) assert.ok(origins.includes(new URL(url).origin), `${url} is not one of ${origins.join(', ')}`);
  }

  it('rennet review --harness auto, no CLI: the first tool-capable model, on Ollama’s /v1, no key, not streamed; one turn reaches it; the discovery lines say so', async () => {
    let lines: string[] = [];
    const assignment = await loadHarnessAssignment(
      { kind: 'auto' },
      {},
      {
        discover: async () => MISSING,
        discoverLocal: local({ ollama: ollama.origin, 'lm-studio': lmStudio.origin }),
        report: (l) => (lines = l),
      },
    );
    const harness = assignment.sequence;
    assert.ok(harness instanceof OpenAiCompatibleHarness);
    assert.equal(harness.kind, 'openai-compatible');
    assert.equal(harness.model, 'qwen3:8b', 'Ollama comes first, and its non-tool model is skipped');
    assert.equal(wiring(harness).options.baseUrl, `${ollama.origin}/v1`);
    assert.equal(wiring(harness).url, `${ollama.origin}/v1/chat/completions`);
    assert.equal(wiring(harness).options.apiKey, undefined);
    assert.equal(wiring(harness).options.stream, false);
    for (const lens of ['design', 'sequence', 'decisions', 'noise'] as const) assert.equal(assignment[lens], harness);
    assert.deepEqual(assignment.flagged, { reviewers: [harness], compiler: harness });
    assert.equal(assignment.missingHint, undefined);

    assert.deepEqual(lines, [
      'Harness discovery (auto):',
      '  claude-code  not available: claude not found on PATH',
      '  codex        not available: codex not found on PATH',
      `  Ollama       ${ollama.origin} running; tool calling: qwen3:8b; no tool support (not usable): gemma2:2b`,
      `  LM Studio    ${lmStudio.origin} running; tool calling: llama-3.2-3b-instruct`,
      `  → drafting with qwen3:8b on Ollama (openai-compatible, ${ollama.origin}/v1)`,
    ]);

    const result = await harness.runTurn(turnRequest(NO_TOOLS));
    assert.equal(result.outcome, 'ended', result.message ?? '');
    const chat = ollama.requests.filter((r) => r.path === '/v1/chat/completions');
    assert.equal(chat.length, 1);
    const body = chat[0]!.body as { model: string; stream?: unknown; tools: unknown[] };
    assert.equal(body.model, 'qwen3:8b');
    assert.equal(body.stream, undefined, 'not streamed');
    assert.equal(body.tools.length, 1);
    onlyAsked([ollama.origin, lmStudio.origin]);
  });

  it('Ollama down: LM Studio’s tool-capable model on LM Studio’s /v1', async () => {
    const down = await closedOrigin();
    const assignment = await loadHarnessAssignment({ kind: 'auto' }, {}, { discover: async () => MISSING, discoverLocal: local({ ollama: down, 'lm-studio': lmStudio.origin }) });
    assert.equal(assignment.design?.model, 'llama-3.2-3b-instruct');
    assert.equal(wiring(assignment.design).options.baseUrl, `${lmStudio.origin}/v1`);
    onlyAsked([down, lmStudio.origin]);
  });

  it('with a CLI installed the CLIs draft, and the discovery lines still list the local servers', async () => {
    let lines: string[] = [];
    const assignment = await loadHarnessAssignment(
      { kind: 'auto' },
      {},
      { discover: async () => BOTH, discoverLocal: local({ ollama: ollama.origin, 'lm-studio': lmStudio.origin }), report: (l) => (lines = l) },
    );
    assert.equal(assignment.sequence?.kind, 'claude-code');
    assert.match(lines.join('\n'), /Ollama .* running; tool calling: qwen3:8b/);
    assert.equal(lines.at(-1), '  → drafting with claude-code + codex');
  });

  it('neither CLIs nor a usable local model: the "no harness" failure stays, its hint naming the local servers', async () => {
    const [a, b] = [await closedOrigin(), await closedOrigin()];
    let lines: string[] = [];
    const assignment = await loadHarnessAssignment({ kind: 'auto' }, {}, { discover: async () => MISSING, discoverLocal: local({ ollama: a, 'lm-studio': b }), report: (l) => (lines = l) });
    assert.equal(assignment.sequence, null);
    assert.equal(
      assignment.missingHint,
      `auto discovery found no model harness (claude not found on PATH; codex not found on PATH; Ollama (${a}) not running (connection refused); LM Studio (${b}) not running (connection refused)); ` +
        'install Claude Code or Codex, run Ollama or LM Studio here with a tool-capable model, or pass --harness openai|anthropic --base-url URL --model NAME, or scripted:FILE',
    );
    assert.equal(lines.at(-1), '  → drafting with nothing (no model harness found)');
    assert.equal(lines[3], `  Ollama       ${a} not running (connection refused)`);
  });

  describe('in VS Code (rennet.harness.default auto)', () => {
    const lm: LmModelInfo = { vendor: 'copilot', family: 'gpt-4o', id: 'gpt-4o', name: 'GPT-4o', version: '1', maxInputTokens: 1000, toolCalling: true };

    it('no CLI and no VS Code chat model: the local model, through the OpenAI-compatible harness', async () => {
      const p = ports(MISSING, [], local({ ollama: ollama.origin, 'lm-studio': lmStudio.origin }));
      const assignment = await assignmentFromConfig(config({ default: 'auto' }), p);
      assert.ok(assignment.sequence instanceof OpenAiCompatibleHarness);
      assert.equal(assignment.sequence.model, 'qwen3:8b');
      assert.equal(wiring(assignment.sequence).options.baseUrl, `${ollama.origin}/v1`);
      assert.equal(p.discoveredLocal, 1, 'probed once for all lenses');
      onlyAsked([ollama.origin, lmStudio.origin]);
    });

    it('a VS Code chat model comes before a local one, and the local servers are then not asked', async () => {
      const p = ports(MISSING, [lm], local({ ollama: ollama.origin, 'lm-studio': lmStudio.origin }));
      const assignment = await assignmentFromConfig(config({ default: 'auto' }), p);
      assert.equal(assignment.sequence?.kind, 'vscode-lm');
      assert.equal(p.discoveredLocal, 0);
      assert.deepEqual(fetches.urls, []);
    });

    it('nothing anywhere: none, with a hint naming the local servers and how to use them', async () => {
      const none = await assignmentFromConfig(config({ default: 'auto' }), ports(MISSING));
      assert.equal(none.sequence, null);
      assert.match(
        none.missingHint ?? '',
        /auto discovery found no model harness \(claude not found on PATH; codex not found on PATH; VS Code lists no chat models\) and no local model server with a tool-capable model \(Ollama \(http:\/\/127\.0\.0\.1:11434\) not running \(connection refused\); LM Studio \(http:\/\/127\.0\.0\.1:1234\) not running \(connection refused\)\)/,
      );
      assert.match(none.missingHint ?? '', /run Ollama or LM Studio here with a tool-capable model/);
      assert.deepEqual(fetches.urls, [], 'the fixtures stand in for the real ports');
    });
  });
});
