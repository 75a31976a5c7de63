import assert from 'node:assert/strict';
import { buildCitationIndex } from '../../../host/board/citations';
import { startSeatServer, type SeatServerHandle } from '../../../host/board/mcpServer';
import { BoardSeat } from '../../../host/board/seat';
import { emptyBoard } from '../../../host/board/state';
import { ScriptedHarness, parseHarnessScript, scriptedAssignment, scriptedReviewOrigins, substitute, type HarnessScript } from '../../../host/harness/scripted';
import type { HarnessEvent, SeatSpec, ToolPort, TurnRequest } from '../../../host/pipeline/ports';
import type { Patchset } from '../../../protocol/patchset';
import type { TestRepo } from '../../fixtures/gitRepo';
import { codeChange, regionsOf, type Region } from './fixtures';

describe('scripted harness', function () {
  this.timeout(30_000);
  let repo: TestRepo;
  let patchset: Patchset;
  let app1: Region;
  const SEQ: SeatSpec = { seatId: 'sequence:drafter', lens: 'sequence', role: 'drafter' };

  before(async () => {
    ({ repo, patchset } = await codeChange());
    app1 = regionsOf(patchset)[1]!;
  });
  after(() => repo?.cleanup());

  function seatFor(lens: 'sequence' | 'decisions' = 'sequence'): { seat: BoardSeat; port: ToolPort } {
    const seat = new BoardSeat({ state: emptyBoard(lens, patchset.id), context: { author: 'scripted', citations: buildCitationIndex(patchset) } });
    const port: ToolPort = { tools: seat.tools, call: async (name, input) => seat.call(name, input) };
    return { seat, port };
  }

  function request(spec: SeatSpec, port: ToolPort, extra: Partial<TurnRequest> = {}): TurnRequest & { events: HarnessEvent[] } {
    const events: HarnessEvent[] = [];
    return { seat: spec, prompt: 'P', followUp: false, cwd: repo.dir, tools: port, mcp: null, signal: new AbortController().signal, onEvent: (e) => events.push(e), events, ...extra };
  }

  const citeApp1 = () => ({ tool: 'cite', input: { path: app1.path, side: app1.side, start_line: app1.start, end_line: app1.end }, as: 'c' });

  it('is never a model: kind scripted, model null, no usage', async () => {
    const { seat, port } = seatFor();
    const harness = new ScriptedHarness({ seats: { 'sequence:drafter': { turns: [[citeApp1()]] } } });
    assert.equal(harness.kind, 'scripted');
    assert.equal(harness.model, null);
    assert.equal(harness.origin, 'other');
    const req = request(SEQ, port);
    const result = await harness.runTurn(req);
    assert.deepEqual(result, { outcome: 'ended', message: null, usage: null });
    assert.equal(seat.state.elements.size, 1);
    assert.deepEqual(req.events, [
      { type: 'tool-call', name: 'cite' },
      { type: 'tool-result', name: 'cite', isError: false },
    ]);
  });

  it('replaces $name with the id the call recorded `as` minted: whole strings, array elements, inside entries_json', async () => {
    const { seat, port } = seatFor('decisions');
    const script: HarnessScript = {
      seats: {
        decisions: {
          turns: [
            [
              citeApp1(),
              { tool: 'add_section', input: { title: 'Naming', body_markdown: 'One call.' }, as: 's' },
              {
                tool: 'add_decision',
                input: { title: 'Words', statement: 'Lines use words.', rationale: 'Readable.', alternatives: ['Digits.'], evidence: ['$c'], parent_id: '$s' },
                as: 'd',
              },
            ],
          ],
        },
      },
    };
    await new ScriptedHarness(script).runTurn(request({ seatId: 'decisions:drafter', lens: 'decisions', role: 'drafter' }, port));
    const decision = [...seat.state.elements.values()].find((e) => e.kind === 'decision') as unknown as { evidence: string[]; parent: string };
    assert.deepEqual(decision.evidence, ['e1']);
    assert.equal(decision.parent, 'e2');

    const names = new Map([['g', 'e7']]);
    assert.deepEqual(substitute({ a: '$g', b: ['x', '$g'], c: '[{"id":"$g"}]', d: 3, e: '$5 costs' }, names), {
      ok: true,
      value: { a: 'e7', b: ['x', 'e7'], c: '[{"id":"e7"}]', d: 3, e: '$5 costs' },
    });
    const unknown = substitute({ a: '$nope' }, names);
    assert.equal(unknown.ok, false);
  });

  it('a reference to a refused call fails the turn, naming the refusal', async () => {
    const { port } = seatFor();
    const harness = new ScriptedHarness({
      seats: {
        'sequence:drafter': {
          turns: [
            [
              { tool: 'cite', input: { path: 'src/app.ts', side: 'head', start_line: 1, end_line: 1 }, as: 'c' },
              { tool: 'add_order_step', input: { title: 't', explanation_markdown: 'x', span: '$c' } },
            ],
          ],
        },
      },
    });
    const result = await harness.runTurn(request(SEQ, port));
    assert.equal(result.outcome, 'failed');
    assert.match(result.message!, /\$c, but the call recorded as c minted no id: refused \(citation-resolves\)/);
  });

  it('{end}, {fail}, {absent}; a missing seat or turn is a harness failure naming it', async () => {
    const { seat, port } = seatFor('decisions');
    const decisions: SeatSpec = { seatId: 'decisions:drafter', lens: 'decisions', role: 'drafter' };
    const harness = new ScriptedHarness({ seats: { 'decisions:drafter': { turns: [{ end: 'unsettled' }, { fail: 'context ran out' }, { absent: true }] } } });
    assert.deepEqual(await harness.runTurn(request(decisions, port)), { outcome: 'ended', message: null, usage: null });
    assert.deepEqual(await harness.runTurn(request(decisions, port)), { outcome: 'failed', message: 'context ran out', usage: null });
    assert.equal((await harness.runTurn(request(decisions, port))).outcome, 'ended');
    assert.deepEqual([seat.state.status, seat.state.absence], ['absent', 'no-decisions']);
    const fourth = await harness.runTurn(request(decisions, port));
    assert.deepEqual([fourth.outcome, fourth.message], ['failed', 'the script has no turn 4 for decisions:drafter (it has 3)']);
    const other = await harness.runTurn(request(SEQ, seatFor().port));
    assert.match(other.message!, /the script has no seat sequence:drafter/);
    assert.deepEqual(
      harness.turns.map((t) => [t.seatId, t.turn]),
      [
        ['decisions:drafter', 0],
        ['decisions:drafter', 1],
        ['decisions:drafter', 2],
        ['decisions:drafter', null],
        ['sequence:drafter', null],
      ],
    );
  });

  it('seat lookup: seat id, then lens:role, then the lens', () => {
    const script = parseHarnessScript({
      seats: { 'flagged:reviewer': { turns: [], origin: 'codex' }, 'flagged:reviewer:claude': { turns: [] }, noise: { turns: [] }, 'flagged:compiler': { turns: [] } },
    });
    assert.deepEqual(scriptedReviewOrigins(script), ['claude', 'codex']);
    const assignment = scriptedAssignment(script);
    assert.equal(assignment.design, null);
    assert.equal(assignment.sequence, null);
    assert.ok(assignment.noise);
    assert.deepEqual(
      assignment.flagged.reviewers.map((h) => h.origin),
      ['claude', 'codex'],
    );
    assert.ok(assignment.flagged.compiler);
  });

  it('refuses a malformed script, naming where', () => {
    assert.throws(() => parseHarnessScript({ seats: { x: { turns: [[{ tool: 'cite', as: '1bad' }]] } } }), /seats\.x\.turns\.0/);
    assert.throws(() => parseHarnessScript('{"seats": {"x": {"turns": [{"end": "settled"}]}}}'), /not a harness script/);
    assert.throws(() => parseHarnessScript({ seats: {}, extra: 1 }), /not a harness script/);
  });

  it('transport mcp: calls go through the seat’s loopback MCP server with the SDK client', async () => {
    const { seat } = seatFor();
    const server: SeatServerHandle = await startSeatServer({ seat });
    try {
      const unused: ToolPort = { tools: [], call: async () => assert.fail('the in-process port must not be used') };
      const harness = new ScriptedHarness({ seats: { sequence: { turns: [[citeApp1(), { tool: 'nope' }]] } } }, { transport: 'mcp' });
      const req = request(SEQ, unused, { mcp: { url: server.url, headers: { ...server.headers } } });
      assert.equal((await harness.runTurn(req)).outcome, 'ended');
      assert.equal(seat.state.elements.size, 1);
      assert.deepEqual(seat.stats().calls, 2);
      assert.equal(harness.turns[0]!.calls[1]!.isError, true);
      const noEndpoint = await new ScriptedHarness({ seats: { sequence: { turns: [[citeApp1()]] } } }, { transport: 'mcp' }).runTurn(request(SEQ, unused));
      assert.equal(noEndpoint.outcome, 'failed');
      assert.match(noEndpoint.message!, /no MCP endpoint/);
    } finally {
      await server.close();
    }
  });

  it('an aborted turn stops between calls', async () => {
    const { seat, port } = seatFor();
    const controller = new AbortController();
    controller.abort();
    const result = await new ScriptedHarness({ seats: { sequence: { turns: [[citeApp1()]] } } }).runTurn(request(SEQ, port, { signal: controller.signal }));
    assert.equal(result.outcome, 'aborted');
    assert.equal(seat.state.elements.size, 0);
  });
});
