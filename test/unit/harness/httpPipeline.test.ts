import assert from 'node:assert/strict';
import { AnthropicHarness } from '../../../host/harness/anthropic';
import type { PromptReader } from '../../../host/pipeline/ports';
import { newGenerationId, runLensPipeline } from '../../../host/pipeline/run';
import type { Patchset } from '../../../protocol/patchset';
import type { TestRepo } from '../../fixtures/gitRepo';
import type { Step } from '../../servers/common';
import { startAnthropicServer, type ScriptedAnthropicServer } from '../../servers/anthropic';
import { Temp, codeChange, observe, openStore, regionsOf, sessionFor, tickingClock, type Region } from '../pipeline/fixtures';

/**
 * One full lens pipeline with the Anthropic HTTP harness drafting Sequence and Decisions against
 * one scripted server; the server tells the seats apart by the `Seat: <id>` marker in the prompt.
 */

const markerPrompts: PromptReader = {
  seatPrompt: (seat, context) => `Seat: ${seat.seatId}\nDraft the ${seat.lens} board. Context: ${context.contextDir}`,
  followUpPrompt: (seat, verdict) => `Seat: ${seat.seatId}\n${verdict ?? 'finish was never called'}`,
};

const cite = (r: Region, as: string): Step => ({ toolCalls: [{ name: 'cite', input: { path: r.path, side: r.side, start_line: r.start, end_line: r.end }, as }] });
const doc = (title: string): Step => ({ toolCalls: [{ name: 'set_document', input: { title, intro_markdown: 'The change renames a few lines. Nothing else moves.' } }] });

describe('harness: anthropic through runLensPipeline (scripted server)', function () {
  this.timeout(60_000);
  const temp = new Temp();
  let repo: TestRepo;
  let patchset: Patchset;
  let server: ScriptedAnthropicServer | null = null;

  before(async () => {
    ({ repo, patchset } = await codeChange());
  });
  after(async () => {
    await server?.close();
    repo?.cleanup();
    temp.cleanup();
  });

  it('Sequence and Decisions settle through the HTTP harness; spend carries the summed usage and the model', async () => {
    const [, app1, app2] = regionsOf(patchset) as [Region, Region, Region, Region];
    server = await startAnthropicServer({
      seats: {
        'sequence:drafter': [
          cite(app1, 'c'),
          { toolCalls: [{ name: 'add_section', input: { title: 'Walkthrough', body_markdown: 'Read the renamed line.' }, as: 's' }] },
          { toolCalls: [{ name: 'add_order_step', input: { title: 'Step 1', explanation_markdown: 'The renamed line is what callers now read.', span: '$c', parent_id: '$s' } }] },
          doc('Reading order'),
          { toolCalls: [{ name: 'finish', input: {} }] },
          { text: 'Done.' },
        ],
        'decisions:drafter': [
          // Two calls in one reply: $1 and $2 name their results in order.
          {
            toolCalls: [
              { name: 'cite', input: { path: app2.path, side: app2.side, start_line: app2.start, end_line: app2.end } },
              { name: 'add_section', input: { title: 'Naming', body_markdown: 'One naming call shapes the change.' } },
            ],
          },
          {
            toolCalls: [
              {
                name: 'add_decision',
                input: {
                  title: 'Spell the number out',
                  statement: 'Lines name their number in words.',
                  rationale: 'Words read better in logs.',
                  alternatives: ['Keep the digits.'],
                  evidence: ['$1'],
                  parent_id: '$2',
                },
              },
            ],
          },
          doc('Calls made'),
          { toolCalls: [{ name: 'finish', input: {} }] },
          { text: 'Done.' },
        ],
      },
    });
    const harness = new AnthropicHarness({ baseUrl: server.origin, model: 'claude-scripted' });
    const store = await openStore(temp);
    const sessionId = sessionFor(store, repo, patchset);
    const generationId = newGenerationId();
    const obs = observe();
    const outcome = await runLensPipeline(
      {
        patchset,
        sessionId,
        generationId,
        workspaceDir: repo.dir,
        contextDir: `.rennet/context/${sessionId}`,
        harnesses: { design: null, sequence: harness, decisions: harness, noise: null, flagged: { reviewers: [], compiler: null } },
      },
      { prompts: markerPrompts, clock: tickingClock(), store, onFrame: obs.onFrame, onLane: obs.onLane, design: null },
    );

    for (const lens of ['sequence', 'decisions'] as const) {
      const lane = outcome.lanes.find((l) => l.lens === lens)!;
      assert.equal(lane.state, 'settled', `${lens}: ${JSON.stringify(lane.failure)}`);
      const spend = outcome.spend.filter((s) => s.lens === lens);
      assert.equal(spend.length, 1, `${lens}: one turn`);
      assert.equal(spend[0]!.harness, 'anthropic');
      assert.equal(spend[0]!.model, 'claude-scripted');
      assert.equal(spend[0]!.inputTokens, lens === 'sequence' ? 600 : 500);
      assert.equal(spend[0]!.outputTokens, lens === 'sequence' ? 120 : 100);
      assert.equal(spend[0]!.refusals, 0);
      assert.equal(spend[0]!.priceUsd, null);
    }
    const decisions = [...outcome.lanes.find((l) => l.lens === 'decisions')!.board.elements.values()];
    assert.deepEqual(decisions.map((e) => e.kind).sort(), ['code_ref', 'decision', 'section']);
    assert.equal(server.consumed('sequence:drafter'), 6);
    assert.equal(server.consumed('decisions:drafter'), 5);
    for (const r of server.requestsTo('/v1/messages')) {
      assert.ok(r.seat === 'sequence:drafter' || r.seat === 'decisions:drafter', `every request matched a seat: ${r.seat}`);
      assert.deepEqual(r.unresolved, []);
      assert.equal(r.headers['x-api-key'], undefined, 'no key on loopback');
    }
  });
});
