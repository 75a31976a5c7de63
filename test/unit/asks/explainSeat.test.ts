import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { explainSpan } from '../../../host/asks/explain';
import { ANSWER, READ_QUOTE } from '../../../host/asks/explainTools';
import { AskLog } from '../../../host/asks/log';
import { scriptedAssignment } from '../../../host/harness/scripted';
import type { Harness, TurnRequest, TurnResult } from '../../../host/pipeline/ports';
import { newGenerationId, runLensPipeline } from '../../../host/pipeline/run';
import type { Store } from '../../../host/store';
import type { Patchset } from '../../../protocol/patchset';
import { READ_FILE, READ_TOOL_NAMES } from '../../../protocol/read';
import type { HarnessConfig, SeatSpend } from '../../../protocol/review';
import type { TestRepo } from '../../fixtures/gitRepo';
import { Temp, codeChange, fullScriptFor, openStore, sessionFor, testPrompts, tickingClock } from '../pipeline/fixtures';

/**
 * rennet/asks/explain in-process over a real generation (the pipeline drafted its boards with the
 * scripted harness into a real store): the explainer is offered the read tools, reads the changed
 * file at the reviewed head through read_file, and its spend — the reads included — is logged. A
 * CLI explainer (Claude Code, Codex) runs in the snapshot of the reviewed head under the data
 * directory, never the user's checkout (which is on main here); any other runs in the repository.
 *
 * The explainer is an in-process harness that behaves like a model and reports the harness kind
 * it stands for; it records the directory and the tools its turn was given.
 */

class ReadingExplainer implements Harness {
  readonly origin = 'other' as const;
  readonly model = 'scripted-explainer';
  readonly turns: Array<{ cwd: string; offered: string[]; headFile: string }> = [];
  constructor(readonly kind: string) {}
  async runTurn(request: TurnRequest): Promise<TurnResult> {
    const quote = await request.tools.call(READ_QUOTE, {});
    assert.equal(quote.isError, false, quote.text);
    const file = await request.tools.call(READ_FILE, { path: 'src/app.ts', side: 'head', start_line: 9, end_line: 11 });
    assert.equal(file.isError, false, file.text);
    this.turns.push({ cwd: request.cwd, offered: request.tools.tools.map((t) => t.name), headFile: file.text });
    const answered = await request.tools.call(ANSWER, { markdown: 'Callers now read `line ten` (src/app.ts:10).' });
    assert.equal(answered.isError, false, answered.text);
    return { outcome: 'ended', message: null, usage: { inputTokens: 120, outputTokens: 30, priceUsd: null } };
  }
}

const CONFIG: HarnessConfig = { default: 'none', lenses: {}, vscodeLm: {}, openai: {}, anthropic: {} };

describe('explain: the explainer reads the change at the reviewed head, and its reads are spend', function () {
  this.timeout(60_000);
  const temp = new Temp();
  let repo: TestRepo;
  let patchset: Patchset;
  let store: Store;
  let sessionId: string;
  let generationId: string;
  let stepId: string;

  before(async () => {
    ({ repo, patchset } = await codeChange());
    store = await openStore(temp);
    sessionId = sessionFor(store, repo, patchset);
    generationId = newGenerationId();
    const outcome = await runLensPipeline(
      { patchset, sessionId, generationId, workspaceDir: repo.dir, contextDir: `.rennet/context/${sessionId}`, harnesses: scriptedAssignment(fullScriptFor(patchset)) },
      { prompts: testPrompts, clock: tickingClock(), store },
    );
    const sequence = outcome.lanes.find((l) => l.lens === 'sequence');
    assert.equal(sequence?.state, 'settled', JSON.stringify(sequence?.failure));
    stepId = [...(sequence?.board.elements.values() ?? [])].find((e) => e.kind === 'order_step')?.id ?? '';
    assert.ok(stepId, 'the Sequence board has a step');
    // The reviewer's checkout moves off the reviewed branch: its files are the base's now.
    repo.git('checkout', '-q', 'main');
    assert.ok(!readFileSync(join(repo.dir, 'src/app.ts'), 'utf8').includes('line ten'));
  });
  after(() => {
    store?.close();
    repo?.cleanup();
    temp.cleanup();
  });

  async function explainWith(harness: ReadingExplainer): Promise<string[]> {
    const logged: string[] = [];
    const result = await explainSpan(
      {
        store,
        asks: new AskLog(store),
        harnessFor: async () => ({ harness, hint: null }),
        now: () => new Date().toISOString(),
        log: (level, message) => logged.push(`${level} ${message}`),
      },
      { sessionId, anchor: { kind: 'quote', generationId, lens: 'sequence', elementId: stepId, quote: 'what callers now read' }, harness: CONFIG },
    );
    assert.ok(result.ok, result.ok ? '' : result.error.message);
    assert.match(result.value.answer.text, /src\/app\.ts:10/);
    return logged;
  }

  function loggedSpend(logged: readonly string[]): SeatSpend {
    const line = logged.find((l) => l.startsWith('info ') && l.includes(': spend {'));
    assert.ok(line, `no spend line in ${JSON.stringify(logged)}`);
    return JSON.parse(line.slice(line.indexOf('spend {') + 'spend '.length, line.lastIndexOf('} (') + 1)) as SeatSpend;
  }

  it('an HTTP explainer runs in the repository, reading only through the tools: no snapshot is written for it', async () => {
    const heads = join(store.dir, 'heads', patchset.id);
    const http = new ReadingExplainer('openai-compatible');
    const logged = await explainWith(http);
    assert.equal(http.turns[0]?.cwd, store.getSession(sessionId)?.repoRoot);
    assert.match(http.turns[0]?.headFile ?? '', /^10\| line ten$/m, 'the read tools read the capture whatever the directory');
    assert.equal(loggedSpend(logged).readCalls, 1);
    assert.ok(!existsSync(heads), 'no head snapshot for an HTTP explainer');
  });

  it('a CLI explainer runs in the snapshot of the reviewed head; it is offered the read tools and read_file answers the head', async () => {
    const claude = new ReadingExplainer('claude-code');
    const logged = await explainWith(claude);
    const turn = claude.turns[0];
    assert.ok(turn);
    assert.equal(turn.cwd, join(store.dir, 'heads', patchset.id), 'the explainer runs in the head snapshot under the data directory');
    assert.ok(readFileSync(join(turn.cwd, 'src/app.ts'), 'utf8').includes('line ten\n'), 'the snapshot holds the reviewed head');
    for (const name of READ_TOOL_NAMES) assert.ok(turn.offered.includes(name), `the explainer was not offered ${name}`);
    assert.match(turn.headFile, /^10\| line ten$/m, 'read_file answers the reviewed head, not the checkout');
    const spend = loggedSpend(logged);
    assert.deepEqual(
      [spend.seat, spend.lens, spend.harness, spend.model, spend.toolCalls, spend.refusals, spend.readCalls, spend.inputTokens, spend.outputTokens],
      ['sequence:explain', 'sequence', 'claude-code', 'scripted-explainer', 3, 0, 1, 120, 30],
    );
    assert.ok((spend.readBytes ?? 0) >= Buffer.byteLength(turn.headFile), JSON.stringify(spend));
    assert.equal(typeof spend.readMs, 'number');
  });
});
