import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadBoard } from '../../../host/board/persist';
import { emptyBoard, type BoardState } from '../../../host/board/state';
import { scriptedAssignment, type HarnessScript } from '../../../host/harness/scripted';
import type { Harness, TurnRequest } from '../../../host/pipeline/ports';
import { createPromptReader } from '../../../host/pipeline/prompts';
import { newGenerationId, runLensPipeline } from '../../../host/pipeline/run';
import { admitSettlement } from '../../../host/pipeline/settlement';
import type { DesignAssembler, GenerationOutcome, HarnessAssignment, LensPipelineSeams } from '../../../host/pipeline/types';
import type { Store } from '../../../host/store';
import { LENSES, type Lens } from '../../../protocol/board';
import type { Patchset } from '../../../protocol/patchset';
import { PhaseTiming, SeatSpend } from '../../../protocol/review';
import type { TestRepo } from '../../fixtures/gitRepo';
import {
  Temp,
  codeChange,
  compileTurn,
  fullScriptFor,
  decisionsTurn,
  designTurn,
  noiseTurn,
  observe,
  openStore,
  regionsOf,
  sequenceTurn,
  sessionFor,
  reviewTurn,
  specOnlyChange,
  testPrompts,
  tickingClock,
  type Region,
} from './fixtures';

describe('lens pipeline: runLensPipeline over a real capture and a real store', function () {
  this.timeout(60_000);
  const temp = new Temp();
  let repo: TestRepo;
  let patchset: Patchset;
  // docs/notes.md, src/app.ts (two hunks), src/util.ts — in patchset order.
  let notes: Region, app1: Region, app2: Region, util: Region;

  before(async () => {
    ({ repo, patchset } = await codeChange());
    const regions = regionsOf(patchset);
    [notes, app1, app2, util] = regions as [Region, Region, Region, Region];
    assert.deepEqual(
      regions.map((r) => r.path),
      ['docs/notes.md', 'src/app.ts', 'src/app.ts', 'src/util.ts'],
    );
  });
  after(() => {
    repo?.cleanup();
    temp.cleanup();
  });

  const fullScript = (): HarnessScript => fullScriptFor(patchset);

  interface Ran {
    outcome: GenerationOutcome;
    obs: ReturnType<typeof observe>;
    store: Store;
    sessionId: string;
    generationId: string;
    assignment: ReturnType<typeof scriptedAssignment>;
    turns: (seatId: string) => number;
  }

  async function run(
    script: HarnessScript,
    options: { patchset?: Patchset; repo?: TestRepo; assignment?: HarnessAssignment; seams?: Partial<LensPipelineSeams>; transport?: 'in-process' | 'mcp' } = {},
  ): Promise<Ran> {
    const ps = options.patchset ?? patchset;
    const rp = options.repo ?? repo;
    const store = await openStore(temp);
    const sessionId = sessionFor(store, rp, ps);
    const generationId = newGenerationId();
    const assignment = scriptedAssignment(script, { transport: options.transport ?? 'in-process' });
    const obs = observe();
    const outcome = await runLensPipeline(
      { patchset: ps, sessionId, generationId, workspaceDir: rp.dir, contextDir: `.rennet/context/${sessionId}`, harnesses: options.assignment ?? assignment },
      { prompts: testPrompts, clock: tickingClock(), store, onFrame: obs.onFrame, onLane: obs.onLane, ...options.seams },
    );
    const turns = (seatId: string) => assignment.harnesses.reduce((n, h) => n + h.turnsOf(seatId).length, 0);
    return { outcome, obs, store, sessionId, generationId, assignment, turns };
  }

  const lane = (outcome: GenerationOutcome, lens: Lens) => outcome.lanes.find((l) => l.lens === lens)!;
  const elementsOf = (board: BoardState, kind: string) => [...board.elements.values()].filter((e) => e.kind === kind);

  it('settles every lane; every board is opened before any seat starts; outcomes in canonical order, durable', async () => {
    const log: string[] = [];
    const script = fullScript();
    const base = scriptedAssignment(script);
    const logged = (h: Harness): Harness => ({
      kind: h.kind,
      origin: h.origin,
      model: h.model,
      runTurn: (request: TurnRequest) => {
        log.push(`turn ${request.seat.seatId}`);
        return h.runTurn(request);
      },
    });
    const assignment: HarnessAssignment = {
      design: logged(base.design!),
      sequence: logged(base.sequence!),
      decisions: logged(base.decisions!),
      noise: logged(base.noise!),
      flagged: { reviewers: base.flagged.reviewers.map(logged), compiler: logged(base.flagged.compiler!) },
    };
    const { outcome, store, sessionId, generationId } = await run(script, {
      assignment,
      seams: { onFrame: (f) => log.push(`${f.kind} ${f.lens}`) },
    });

    assert.deepEqual(
      outcome.lanes.map((l) => l.lens),
      [...LENSES],
    );
    for (const l of outcome.lanes) assert.equal(l.state, 'settled', `${l.lens}: ${JSON.stringify(l.failure)}`);
    const firstTurn = log.findIndex((e) => e.startsWith('turn '));
    assert.deepEqual(
      log.slice(0, firstTurn),
      LENSES.map((l) => `opened ${l}`),
      'five empty boards open before the first turn',
    );
    assert.equal(log.filter((e) => e.startsWith('turn ')).length, 7, 'one turn per seat: 4 drafters, 2 reviews, 1 compile');

    // Durable: every lane's outcome and board, under <sessionId>/<generationId>/<lens>.
    assert.deepEqual(
      store.listLaneOutcomes(generationId).map((o) => [o.lens, o.state, o.attempts]),
      LENSES.map((l) => [l, 'settled', 0]),
    );
    for (const l of outcome.lanes) {
      const stored = loadBoard(store, { sessionId, generationId, patchsetId: patchset.id, lens: l.lens });
      assert.ok(stored);
      assert.deepEqual([...stored.elements.values()], [...l.board.elements.values()], l.lens);
      assert.equal(stored.status, 'finished');
    }
    assert.equal(store.getGeneration(generationId)?.status, 'live');

    // The Noise board holds exactly the hunk no core lane cited, grouped.
    const members = elementsOf(lane(outcome, 'noise').board, 'noise_member') as Array<{ hunk_id: string; parent: string | null }>;
    assert.deepEqual(
      members.map((m) => m.hunk_id),
      [notes.hunkId],
    );
    assert.ok(members[0]!.parent);
  });

  for (const transport of ['in-process', 'mcp'] as const) {
    it(`every seat reads the change through the read tools before it writes (${transport})`, async () => {
      const script = fullScriptFor(patchset);
      const reads = [
        { tool: 'list_changes' },
        { tool: 'read_diff', input: { path: 'src/app.ts' } },
        { tool: 'read_file', input: { path: 'src/util.ts', side: 'head', start_line: 5, end_line: 5 } },
        { tool: 'search_code', input: { pattern: 'line thirty' } },
      ];
      for (const entry of Object.values(script.seats)) {
        const turn = entry.turns[0];
        if (Array.isArray(turn)) turn.unshift(...reads);
      }
      const { outcome, assignment } = await run(script, { transport });
      for (const l of outcome.lanes) assert.equal(l.state, 'settled', `${l.lens}: ${JSON.stringify(l.failure)}`);
      const seats = ['design:drafter', 'sequence:drafter', 'decisions:drafter', 'flagged:reviewer:claude', 'flagged:reviewer:codex', 'flagged:compiler', 'noise:drafter'];
      for (const seatId of seats) {
        const [first] = assignment.harnesses.flatMap((h) => h.turnsOf(seatId));
        assert.ok(first, `${seatId} ran no turn`);
        const [list, diff, file, search] = first.calls;
        for (const call of [list, diff, file, search]) assert.equal(call?.isError, false, `${seatId} ${call?.tool}: ${call?.text}`);
        assert.match(list?.text ?? '', /^src\/app\.ts — modified · \+2 −2$/m, seatId);
        assert.match(diff?.text ?? '', /^\+ +10 \| line ten$/m, seatId);
        assert.match(file?.text ?? '', /^5\| UTIL 5$/m, seatId);
        assert.match(search?.text ?? '', /^src\/app\.ts:30: line thirty$/m, seatId);
      }
      // Each seat's spend says what it read.
      for (const seatId of seats) {
        const turn = outcome.spend.find((x) => x.seat === seatId);
        assert.equal(turn?.readCalls, 4, `${seatId} spend: ${JSON.stringify(turn)}`);
        assert.ok((turn?.readBytes ?? 0) > 100 && typeof turn?.readMs === 'number', `${seatId} spend: ${JSON.stringify(turn)}`);
        assert.ok((turn?.toolCalls ?? 0) > 4, 'toolCalls counts the read calls and the seat’s own');
      }
    });
  }

  it('records spend per seat turn (no usage: null tokens, never zero) and durable per-phase timings', async () => {
    const { outcome, store, generationId } = await run(fullScript());
    for (const s of outcome.spend) SeatSpend.parse(s);
    for (const t of outcome.timings) PhaseTiming.parse(t);
    assert.deepEqual(outcome.spend.map((s) => s.seat).sort(), [
      'decisions:drafter',
      'design:drafter',
      'flagged:compiler',
      'flagged:reviewer:claude',
      'flagged:reviewer:codex',
      'noise:drafter',
      'sequence:drafter',
    ]);
    for (const s of outcome.spend) {
      assert.equal(s.harness, 'scripted');
      assert.equal(s.model, null);
      assert.equal(s.inputTokens, null);
      assert.equal(s.outputTokens, null);
      assert.equal(s.priceUsd, null);
      assert.ok(s.durationMs > 0);
    }
    const seq = outcome.spend.find((s) => s.seat === 'sequence:drafter')!;
    assert.equal(seq.toolCalls, sequenceTurn([app1]).length, 'every board tool call is counted');
    assert.equal(seq.refusals, 0);
    assert.equal(outcome.spend.find((s) => s.seat === 'flagged:reviewer:claude')!.toolCalls, 1);
    assert.equal(outcome.spend.find((s) => s.seat === 'noise:drafter')!.toolCalls, 1, 'one write_board call');

    const drafts = outcome.timings.filter((t) => t.phase === 'lens-draft');
    assert.equal(drafts.length, 7, 'one lens-draft record per seat');
    assert.ok(drafts.every((t) => t.lens !== null && t.seat !== null));
    for (const phase of ['first-core-board', 'first-element', 'reveal'] as const) {
      const t = outcome.timings.filter((x) => x.phase === phase);
      assert.equal(t.length, 1, phase);
      assert.equal(t[0]!.lens, null);
      assert.equal(t[0]!.seat, null);
    }
    const byPhase = (p: string) => outcome.timings.find((t) => t.phase === p)!.durationMs;
    assert.ok(byPhase('first-element') <= byPhase('first-core-board'));
    assert.ok(byPhase('first-core-board') <= byPhase('reveal'));
    const durable = store.getGeneration(generationId)!;
    assert.deepEqual(durable.spend, outcome.spend);
    assert.deepEqual(durable.timings, outcome.timings);
  });

  it('settles each admissible seat absence (no-spec, no-decisions, no-findings) and subtracts it as an empty citation set', async () => {
    const script = fullScript();
    script.seats['design:drafter'] = { turns: [{ absent: true }] };
    script.seats['decisions:drafter'] = { turns: [{ absent: true }] };
    script.seats['flagged:compiler'] = { turns: [{ absent: true }] };
    script.seats['noise:drafter'] = { turns: [noiseTurn(3)] };
    const { outcome, store, generationId } = await run(script);
    assert.deepEqual(
      outcome.lanes.map((l) => [l.lens, l.state, l.absence]),
      [
        ['design', 'absent', 'no-spec'],
        ['sequence', 'settled', null],
        ['decisions', 'absent', 'no-decisions'],
        ['flagged', 'absent', 'no-findings'],
        ['noise', 'settled', null],
      ],
    );
    assert.deepEqual(
      store.listLaneOutcomes(generationId).map((o) => o.absence),
      ['no-spec', null, 'no-decisions', 'no-findings', null],
    );
    const members = elementsOf(lane(outcome, 'noise').board, 'noise_member') as Array<{ hunk_id: string }>;
    assert.deepEqual(
      members.map((m) => m.hunk_id),
      [notes.hunkId, app2.hunkId, util.hunkId],
      'only Sequence cited anything',
    );
  });

  it('an absence the lens does not admit never becomes a clean result', async () => {
    // Sequence has no settle_absent: the call is refused, the turn ends unsettled and spends an attempt.
    const script = fullScript();
    script.seats['sequence:drafter'] = { turns: [{ absent: true }, sequenceTurn([app1])] };
    const { outcome, assignment } = await run(script);
    const seqTurns = assignment.harnesses[0]!.turnsOf('sequence:drafter');
    assert.equal(seqTurns[0]!.calls[0]!.tool, 'settle_absent');
    assert.equal(seqTurns[0]!.calls[0]!.isError, true);
    assert.match(seqTurns[0]!.calls[0]!.text, /no tool "settle_absent"/);
    assert.equal(lane(outcome, 'sequence').state, 'settled');
    assert.equal(lane(outcome, 'sequence').attempts, 1);

    // Guarded at the settlement point too: an assembled Design board declaring Flagged's absence.
    const assembler: DesignAssembler = (ps) => ({ kind: 'board', state: { ...emptyBoard('design', ps.id), status: 'absent', absence: 'no-findings', revision: 1 } });
    const again = await run(fullScript(), { seams: { design: assembler } });
    const design = lane(again.outcome, 'design');
    assert.equal(design.state, 'failed');
    assert.deepEqual({ retryable: design.failure!.retryable, attempts: design.failure!.attempts }, { retryable: true, attempts: 0 });
    assert.match(design.failure!.message, /no-findings/);
    assert.equal(again.turns('design:drafter'), 0);
    assert.deepEqual(again.store.listLaneOutcomes(again.generationId)[0]!.failure, design.failure, 'persisted as a typed failure');

    // The guard itself.
    assert.equal(admitSettlement('sequence', { status: 'absent', absence: 'no-decisions' }, 'seat')?.state, 'failed');
    assert.equal(admitSettlement('decisions', { status: 'absent', absence: 'spec-only' }, 'seat')?.state, 'failed', 'spec-only is the host’s');
    assert.equal(admitSettlement('decisions', { status: 'absent', absence: 'spec-only' }, 'host')?.state, 'absent');
    assert.equal(admitSettlement('noise', { status: 'absent', absence: 'no-noise' }, 'seat')?.state, 'failed');
    assert.equal(admitSettlement('flagged', { status: 'absent', absence: 'no-findings' }, 'seat')?.state, 'absent');
    assert.equal(admitSettlement('flagged', { status: 'drafting', absence: null }, 'seat'), null);
  });

  it('an unsettled turn spends an attempt, keeps the board, and the follow-up carries only the last finish verdict', async () => {
    const script = fullScript();
    // Turn 1: everything but the document, then finish, which answers with a pointer; the turn ends there.
    script.seats['sequence:drafter'] = {
      turns: [sequenceTurn([app1]).filter((c) => c.tool !== 'set_document'), [sequenceTurn([app1])[0]!, { tool: 'finish' }]],
    };
    // Decisions: a turn that writes nothing and stops, then a settling turn.
    script.seats['decisions:drafter'] = { turns: [{ end: 'unsettled' }, decisionsTurn([app2])] };
    const { outcome, assignment } = await run(script);
    const turns = assignment.harnesses[0]!.turnsOf('sequence:drafter');
    assert.equal(turns.length, 2);
    const verdict = turns[0]!.calls.at(-1)!;
    assert.equal(verdict.tool, 'finish');
    assert.match(verdict.text, /document-present/);
    assert.equal(turns[1]!.followUp, true);
    assert.equal(turns[1]!.prompt, `VERDICT ${verdict.text}`, 'the verdict and nothing else');
    assert.equal(turns[0]!.prompt, `PROMPT sequence:drafter in .rennet/context/${outcome.sessionId}`);
    const seq = lane(outcome, 'sequence');
    assert.equal(seq.state, 'settled');
    assert.equal(seq.attempts, 1);
    assert.equal(elementsOf(seq.board, 'order_step').length, 1, 'the board written in turn 1 was kept and repaired');

    const dTurns = assignment.harnesses[0]!.turnsOf('decisions:drafter');
    assert.equal(dTurns[1]!.prompt, 'VERDICT (finish was never called)');
    assert.equal(lane(outcome, 'decisions').attempts, 1);
    assert.deepEqual(
      outcome.timings.filter((t) => t.seat === 'sequence:drafter').map((t) => t.phase),
      ['lens-draft', 'lens-repair'],
    );
  });

  it('the real prompt reader: the follow-up frames the verdict and carries no part of the seat prompt', async () => {
    const script = fullScript();
    script.seats['decisions:drafter'] = { turns: [[{ tool: 'finish' }], decisionsTurn([app2])] };
    const { assignment, outcome } = await run(script, { seams: { prompts: createPromptReader() } });
    const [t1, t2] = assignment.harnesses[0]!.turnsOf('decisions:drafter');
    assert.ok(!t1!.prompt.includes(outcome.sessionId) && t1!.prompt.includes('`read_context`'), 'the seat prompt is the same for every session: context files are read by name');
    assert.ok(t2!.prompt.includes(t1!.calls[0]!.text.split('\n')[1]!), 'the verdict’s pointer is carried');
    assert.ok(!t2!.prompt.includes(t1!.prompt.split('\n')[0]!), 'the seat prompt is not');
    assert.ok(t2!.prompt.length < t1!.prompt.length / 4);
    assert.equal(lane(outcome, 'decisions').state, 'settled');
  });

  it('a ladder that runs out is a terminal failure naming the lens, the attempts and the last verdict; the elements stay; Noise fails terminal', async () => {
    const script = fullScript();
    const noFinish = sequenceTurn([app1], false).filter((c) => c.tool !== 'set_document');
    script.seats['sequence:drafter'] = { turns: [noFinish, [{ tool: 'finish' }, { tool: 'remove_element', input: { id: 'e999' } }], { end: 'unsettled' }] };
    const { outcome, store, sessionId, generationId, turns } = await run(script);
    const seq = lane(outcome, 'sequence');
    assert.equal(seq.state, 'failed');
    assert.equal(seq.failure!.retryable, false);
    assert.equal(seq.failure!.attempts, 3);
    assert.match(seq.failure!.message, /^Sequence did not settle after 3 attempts; the last finish verdict was: not settled/);
    assert.match(seq.failure!.message, /document-present/);
    assert.equal(elementsOf(seq.board, 'order_step').length, 1, 'what the seat wrote stays');
    const stored = loadBoard(store, { sessionId, generationId, patchsetId: patchset.id, lens: 'sequence' })!;
    assert.equal(stored.status, 'drafting');
    assert.equal(stored.elements.size, seq.board.elements.size);
    assert.equal(turns('sequence:drafter'), 3);
    const refusals = outcome.spend.filter((s) => s.seat === 'sequence:drafter').map((s) => s.refusals);
    assert.deepEqual(refusals, [0, 1, 0], 'refused calls are counted in spend');

    const noise = lane(outcome, 'noise');
    assert.equal(noise.state, 'failed');
    assert.equal(noise.failure!.retryable, false, 'terminal: the named lane exhausted its ladder');
    assert.match(noise.failure!.message, /Sequence/);
    assert.equal(turns('noise:drafter'), 0);
  });

  it('a harness failure spends an attempt; exhausting on one is retryable, and so is the Noise failure naming it', async () => {
    const script = fullScript();
    script.seats['decisions:drafter'] = { turns: [{ fail: 'the session died' }, { fail: 'the session died' }, { fail: 'the session died again' }] };
    const { outcome, turns } = await run(script);
    const d = lane(outcome, 'decisions');
    assert.equal(d.state, 'failed');
    assert.deepEqual({ retryable: d.failure!.retryable, attempts: d.failure!.attempts }, { retryable: true, attempts: 3 });
    assert.match(d.failure!.message, /the session died again/);
    assert.equal(turns('decisions:drafter'), 3);
    const noise = lane(outcome, 'noise');
    assert.equal(noise.state, 'failed');
    assert.equal(noise.failure!.retryable, true);
    assert.match(noise.failure!.message, /^Noise cannot be derived: the citations of Decisions are unknown/);
    assert.equal(noise.failure!.attempts, 0);
  });

  it('a harness failure no attempt can mend (consent denied, credentials refused) stops the ladder at once: not retryable', async () => {
    const script = fullScript();
    const good = script.seats['decisions:drafter']!.turns;
    script.seats['decisions:drafter'] = { turns: [{ fail: 'VS Code did not allow Rennet to use the language model (consent denied)', final: true }, ...good] };
    const { outcome, turns } = await run(script);
    const d = lane(outcome, 'decisions');
    assert.equal(d.state, 'failed');
    assert.deepEqual({ retryable: d.failure!.retryable, attempts: d.failure!.attempts }, { retryable: false, attempts: 1 });
    assert.match(d.failure!.message, /consent denied/);
    assert.equal(turns('decisions:drafter'), 1, 'the scripted good turns after the refusal were never asked for');
    assert.equal(lane(outcome, 'noise').failure!.retryable, false, 'Noise names a sibling that cannot be retried as configured');
  });

  it('Noise waits: queued → waiting until all four core lanes settle → working → settled', async () => {
    const { obs } = await run(fullScript());
    assert.deepEqual(obs.statesOf('noise'), ['queued', 'waiting', 'working', 'settled']);
    for (const lens of ['design', 'sequence', 'decisions', 'flagged']) assert.deepEqual(obs.statesOf(lens), ['queued', 'working', 'settled'], lens);
    const noiseWorking = obs.lanes.findIndex((c) => c.lens === 'noise' && c.state === 'working');
    const coreSettled = obs.lanes.map((c, i) => ({ c, i })).filter(({ c }) => c.lens !== 'noise' && c.state === 'settled');
    assert.equal(coreSettled.length, 4);
    assert.ok(
      coreSettled.every(({ i }) => i < noiseWorking),
      'Noise opens only after its siblings settle',
    );
    assert.equal(obs.settlements().at(-1), 'noise');
  });

  it('no-noise: when the core lanes cite every hunk, Noise settles absent with no seat', async () => {
    const script = fullScript();
    script.seats['design:drafter'] = { turns: [designTurn([notes])] };
    const { outcome, obs, turns } = await run(script);
    const noise = lane(outcome, 'noise');
    assert.deepEqual([noise.state, noise.absence], ['absent', 'no-noise']);
    assert.equal(noise.board.status, 'absent');
    assert.equal(turns('noise:drafter'), 0);
    assert.deepEqual(obs.statesOf('noise'), ['queued', 'waiting', 'absent']);
  });

  it('spec-only: Design runs alone (the assembler settles it for free); the other four lanes settle spec-only with no seat', async () => {
    const spec = await specOnlyChange();
    try {
      const script = fullScript();
      const { outcome, obs, turns, store, generationId } = await run(script, { patchset: spec.patchset, repo: spec.repo, seams: { design: null } });
      assert.equal(outcome.specOnly, true);
      assert.deepEqual(
        outcome.lanes.map((l) => [l.lens, l.state, l.absence]),
        [
          ['design', 'settled', null],
          ['sequence', 'absent', 'spec-only'],
          ['decisions', 'absent', 'spec-only'],
          ['flagged', 'absent', 'spec-only'],
          ['noise', 'absent', 'spec-only'],
        ],
      );
      assert.equal(turns('design:drafter'), 1);
      for (const seat of ['sequence:drafter', 'decisions:drafter', 'flagged:reviewer:claude', 'flagged:reviewer:codex', 'flagged:compiler', 'noise:drafter']) assert.equal(turns(seat), 0, seat);
      assert.deepEqual(obs.statesOf('sequence'), ['queued', 'absent']);
      assert.deepEqual(obs.settlements().slice(0, 4), ['sequence', 'decisions', 'flagged', 'noise'], 'settled before Design opens');
      assert.deepEqual(
        store.listLaneOutcomes(generationId).map((o) => o.absence),
        [null, 'spec-only', 'spec-only', 'spec-only', 'spec-only'],
      );

      // With the default fast path, host/design's assembler renders the OpenSpec change: no model turn at all.
      const free = await run(script, { patchset: spec.patchset, repo: spec.repo });
      assert.deepEqual(
        free.outcome.lanes.map((l) => l.state),
        ['settled', 'absent', 'absent', 'absent', 'absent'],
      );
      assert.equal(free.outcome.spend.length, 0);
      assert.equal(free.turns('design:drafter'), 0);
      const design = free.outcome.lanes[0]!.board;
      assert.equal(design.document.prose_register, 'transcribed');
      assert.ok([...design.elements.values()].every((e) => e.author === 'assembler'));
    } finally {
      spec.repo.cleanup();
    }
  });

  it('Flagged dual review: two findings files, one compiler; concur/diverge/solo expand into concurrence and accord', async () => {
    const { outcome, sessionId, turns } = await run(fullScript());
    const findingsDir = join(repo.dir, '.rennet/context', sessionId, 'findings');
    assert.deepEqual(readdirSync(findingsDir).sort(), ['claude.md', 'codex.md']);
    assert.match(readFileSync(join(findingsDir, 'codex.md'), 'utf8'), /breaks a match/);
    assert.equal(turns('flagged:compiler'), 1);
    const findings = elementsOf(lane(outcome, 'flagged').board, 'finding') as unknown as Array<Record<string, unknown>>;
    const view = findings.map((f) => ({ title: f.title, author: f.author, accord: f.accord, concurrence: f.concurrence }));
    assert.deepEqual(view, [
      {
        title: 'Callers match the old text',
        author: 'claude',
        accord: 'concur',
        concurrence: [
          { model: 'claude', agree: 1, total: 1 },
          { model: 'codex', agree: 1, total: 1 },
        ],
      },
      {
        title: 'The rename is not covered by a test',
        author: 'codex',
        accord: 'conflict',
        concurrence: [
          { model: 'codex', agree: 1, total: 1 },
          { model: 'claude', agree: 1, total: 1 },
        ],
      },
      { title: 'The log line changes shape', author: 'claude', accord: 'split', concurrence: [{ model: 'claude', agree: 1, total: 1 }] },
    ]);
    for (const f of findings) assert.ok(!('origin' in f) && !('agreement' in f), 'the enums ride the call, never the stored finding');
    assert.deepEqual(
      outcome.spend
        .filter((s) => s.lens === 'flagged')
        .map((s) => s.role)
        .sort(),
      ['compiler', 'reviewer', 'reviewer'],
    );
  });

  it('Flagged with one review harness compiles that review alone, every finding solo', async () => {
    const script = fullScript();
    delete script.seats['flagged:reviewer:codex'];
    script.seats['flagged:compiler'] = { turns: [compileTurn([util], [{ origin: 'claude', agreement: 'solo', title: 'Callers match the old text' }])] };
    const { outcome, sessionId, assignment } = await run(script);
    assert.equal(assignment.flagged.reviewers.length, 1);
    assert.deepEqual(readdirSync(join(repo.dir, '.rennet/context', sessionId, 'findings')), ['claude.md']);
    const findings = elementsOf(lane(outcome, 'flagged').board, 'finding') as unknown as Array<Record<string, unknown>>;
    assert.deepEqual(
      findings.map((f) => [f.accord, (f.concurrence as unknown[]).length]),
      [['split', 1]],
    );
  });

  it("Flagged agreement marks are facts about the reviews compiled: with one review the compiler's concur is refused as a tool error and it corrects to solo; with claude and codex, concur stands", async () => {
    const compilerCalls = (ran: Ran) => ran.assignment.harnesses.flatMap((h) => h.turnsOf('flagged:compiler'));
    const script = fullScript();
    delete script.seats['flagged:reviewer:codex'];
    const solo = {
      severity: 'minor',
      category: 'correctness',
      title: 'Callers match the old text',
      body_markdown: 'A caller matching the old text stops matching.',
      remedy_markdown: 'Update the caller to the new text.',
      anchor: ['$c0'],
      parent_id: '$s',
      origin: 'claude',
      agreement: 'solo',
      score: 70,
    };
    script.seats['flagged:compiler'] = {
      turns: [compileTurn([util], [{ origin: 'claude', agreement: 'concur', title: 'Callers match the old text' }]), [{ tool: 'add_finding', input: solo }, { tool: 'finish' }]],
    };
    const one = await run(script);
    const flagged = lane(one.outcome, 'flagged');
    assert.equal(flagged.state, 'settled', JSON.stringify(flagged.failure));
    const [first, second] = compilerCalls(one);
    assert.ok(first && second, 'the compiler took a follow-up turn');
    const claimed = first.calls.find((c) => c.tool === 'add_finding');
    assert.ok(claimed?.isError, `the concur claim reached the model as a tool error: ${JSON.stringify(claimed)}`);
    assert.match(claimed.text, /refused \(origin-compiled\) at agreement: agreement concur says a second review raised it too, and only the claude review was compiled; a finding can only be solo/);
    assert.equal(second.followUp, true);
    assert.deepEqual(
      second.calls.map((c) => [c.tool, c.isError]),
      [
        ['add_finding', false],
        ['finish', false],
      ],
    );
    const findings = elementsOf(flagged.board, 'finding') as unknown as Array<Record<string, unknown>>;
    assert.deepEqual(
      findings.map((f) => [f.author, f.accord, f.concurrence]),
      [['claude', 'split', [{ model: 'claude', agree: 1, total: 1 }]]],
      'no codex tally on the board: no codex review ran',
    );

    const two = fullScript();
    two.seats['flagged:compiler'] = { turns: [compileTurn([util], [{ origin: 'claude', agreement: 'concur', title: 'Callers match the old text' }])] };
    const both = await run(two);
    assert.ok(
      compilerCalls(both)
        .flatMap((t) => t.calls)
        .every((c) => !c.isError),
      JSON.stringify(compilerCalls(both)),
    );
    const concurred = elementsOf(lane(both.outcome, 'flagged').board, 'finding') as unknown as Array<Record<string, unknown>>;
    assert.deepEqual(
      concurred.map((f) => [f.author, f.accord, f.concurrence]),
      [
        [
          'claude',
          'concur',
          [
            { model: 'claude', agree: 1, total: 1 },
            { model: 'codex', agree: 1, total: 1 },
          ],
        ],
      ],
    );
  });

  it('Flagged with two reviews by one kind of model: their files are claude.md and claude-2.md, and the compiler pairs them by name (concur stands; a low-scored finding is refused and left out)', async () => {
    const script = fullScript();
    delete script.seats['flagged:reviewer:codex'];
    script.seats['flagged:reviewer:claude-2'] = { turns: [reviewTurn('# Findings\n\n- src/util.ts:5: the renamed line breaks callers that match on it.\n')] };
    const low = {
      severity: 'nit',
      category: 'maintainability',
      title: 'The message could be shorter',
      body_markdown: 'It is long.',
      remedy_markdown: 'Shorten it.',
      anchor: ['$c0'],
      parent_id: '$s',
      origin: 'claude-2',
      agreement: 'solo',
      score: 12,
    };
    const turn = compileTurn([util], [{ origin: 'claude-2', agreement: 'concur', title: 'Callers match the old text' }]);
    script.seats['flagged:compiler'] = { turns: [[...turn.slice(0, -1), { tool: 'add_finding', input: low }, ...turn.slice(-1)]] };
    const parsed = scriptedAssignment(script);
    const claude = parsed.flagged.reviewers[0]!;
    const second: Harness = { kind: claude.kind, origin: 'claude', model: claude.model, runTurn: (request) => claude.runTurn(request) };
    const assignment: HarnessAssignment = { ...parsed, flagged: { reviewers: [claude, second], compiler: parsed.flagged.compiler } };
    const { outcome, sessionId } = await run(script, { assignment });
    assert.deepEqual(readdirSync(join(repo.dir, '.rennet/context', sessionId, 'findings')).sort(), ['claude-2.md', 'claude.md']);
    const flagged = lane(outcome, 'flagged');
    assert.equal(flagged.state, 'settled', JSON.stringify(flagged.failure));
    const findings = elementsOf(flagged.board, 'finding') as unknown as Array<Record<string, unknown>>;
    assert.deepEqual(
      findings.map((f) => [f.author, f.accord, f.concurrence]),
      [
        [
          'claude-2',
          'concur',
          [
            { model: 'claude-2', agree: 1, total: 1 },
            { model: 'claude', agree: 1, total: 1 },
          ],
        ],
      ],
    );
    const calls = parsed.harnesses.flatMap((h) => h.turnsOf('flagged:compiler')).flatMap((t) => t.calls);
    const refusedLow = calls.find((c) => c.tool === 'add_finding' && c.isError);
    assert.match(refusedLow?.text ?? '', /refused \(finding-scored\) at score: score 12 is under the floor of 40/);
  });

  it('Flagged with one review seat failed compiles the survivor; with every review failed the lane fails retryable', async () => {
    const script = fullScript();
    script.seats['flagged:reviewer:codex'] = { turns: [{ fail: 'codex crashed' }, { fail: 'codex crashed' }, { fail: 'codex crashed' }] };
    const { outcome, sessionId, turns } = await run(script);
    const flagged = lane(outcome, 'flagged');
    assert.equal(flagged.state, 'settled');
    assert.deepEqual(readdirSync(join(repo.dir, '.rennet/context', sessionId, 'findings')), ['claude.md']);
    assert.equal(turns('flagged:reviewer:codex'), 3);
    assert.equal(turns('flagged:compiler'), 1);
    // The failed codex review was not compiled: the compiler's claims naming it were refused.
    const findings = elementsOf(flagged.board, 'finding') as unknown as Array<Record<string, unknown>>;
    assert.deepEqual(
      findings.map((f) => [f.title, f.author, f.accord]),
      [['The log line changes shape', 'claude', 'split']],
    );

    const none = fullScript();
    none.seats['flagged:reviewer:claude'] = { turns: [{ fail: 'claude crashed' }, { end: 'unsettled' }, { fail: 'claude crashed' }] };
    none.seats['flagged:reviewer:codex'] = { turns: [{ end: 'unsettled' }, { end: 'unsettled' }, { end: 'unsettled' }] };
    const failed = await run(none);
    const f = lane(failed.outcome, 'flagged');
    assert.equal(f.state, 'failed');
    assert.equal(f.failure!.retryable, true, 'retryable if any seat is');
    assert.match(f.failure!.message, /claude: claude crashed/);
    assert.match(f.failure!.message, /codex: no findings after 3 attempts/);
    assert.equal(failed.turns('flagged:compiler'), 0);
    const reviewFollowUps = failed.assignment.harnesses.flatMap((h) => h.turnsOf('flagged:reviewer:codex')).map((t) => t.prompt);
    assert.deepEqual(reviewFollowUps.slice(1), ['VERDICT (finish was never called)', 'VERDICT (finish was never called)']);
  });

  it('a lens with no harness at all settles a typed failure naming what is missing', async () => {
    const script = fullScript();
    delete script.seats['sequence:drafter'];
    delete script.seats['flagged:compiler'];
    const { outcome, obs } = await run(script);
    const seq = lane(outcome, 'sequence');
    assert.equal(seq.state, 'failed');
    assert.equal(seq.failure!.message, 'no model harness is configured: Sequence needs a drafter.');
    assert.deepEqual({ retryable: seq.failure!.retryable, attempts: seq.failure!.attempts }, { retryable: false, attempts: 0 });
    assert.deepEqual(obs.statesOf('sequence'), ['queued', 'failed']);
    assert.match(lane(outcome, 'flagged').failure!.message, /^no model harness is configured: Flagged needs a compiler/);
    assert.equal(lane(outcome, 'noise').failure!.retryable, false);
  });

  it('frames: opened first, revision monotonic per (generation, lens), closed last, published in settlement order', async () => {
    const { obs, outcome, generationId } = await run(fullScript());
    for (const lens of LENSES) {
      const frames = obs.frames.filter((f) => f.lens === lens);
      assert.ok(frames.every((f) => f.generation === generationId));
      assert.equal(frames[0]!.kind, 'opened', lens);
      assert.equal(frames.at(-1)!.kind, 'closed', lens);
      assert.equal(frames.filter((f) => f.kind === 'closed').length, 1);
      for (let i = 1; i < frames.length; i++) assert.ok(frames[i]!.revision > frames[i - 1]!.revision, `${lens}: ${frames.map((f) => f.revision).join(',')}`);
      const writes = frames.filter((f) => f.kind === 'write');
      assert.ok(writes.length > 0, lens);
      assert.equal(frames.at(-2)!.board.status, 'finished');
    }
    const seqWrites = obs.frames.filter((f) => f.lens === 'sequence' && f.kind === 'write');
    assert.equal(seqWrites.length, sequenceTurn([app1]).length, 'one frame per accepted write');
    const noiseWrites = obs.frames.filter((f) => f.lens === 'noise' && f.kind === 'write');
    assert.equal(noiseWrites[0]!.touched.length, 1, 'the host-placed member is published before the seat writes');
    const closedOrder = obs.frames.filter((f) => f.kind === 'closed').map((f) => f.lens);
    assert.deepEqual(closedOrder, obs.settlements(), 'each lane closes the moment it settles');
    assert.deepEqual(
      outcome.lanes.map((l) => l.lens),
      [...LENSES],
      'the outcome stays canonical whatever the order',
    );
  });

  it('lane changes go through one serialized callback: an async observer is awaited before the next change', async () => {
    const seen: string[] = [];
    let inFlight = 0;
    const { outcome } = await run(fullScript(), {
      seams: {
        onLane: async (change) => {
          inFlight++;
          assert.equal(inFlight, 1, 'never two at once');
          await new Promise((r) => setTimeout(r, 1));
          seen.push(`${change.lens}:${change.state}`);
          inFlight--;
        },
      },
    });
    assert.equal(seen.length, 5 + 5 + 1 + 5, 'queued ×5, working ×4 + waiting, working, settled ×5');
    assert.deepEqual(
      seen.slice(0, 5),
      LENSES.map((l) => `${l}:queued`),
    );
    assert.equal(seen.at(-1), 'noise:settled', 'the run resolves only after the last change was delivered');
    assert.ok(outcome.lanes.every((l) => l.state === 'settled'));
  });

  it('the placed Noise members are offered (ids and places, never text) before the Noise seat’s first turn', async () => {
    const order: string[] = [];
    const script = fullScript();
    const base = scriptedAssignment(script);
    const noise = base.noise!;
    const assignment: HarnessAssignment = { ...base, noise: { kind: noise.kind, origin: noise.origin, model: noise.model, runTurn: (r) => (order.push('noise turn'), noise.runTurn(r)) } };
    await run(script, {
      assignment,
      seams: {
        onNoiseOffer: async (regions) => {
          order.push(`offer ${JSON.stringify(regions)}`);
        },
      },
    });
    assert.deepEqual(order, [`offer ${JSON.stringify([{ memberId: 'e1', path: 'docs/notes.md', side: 'head', startLine: notes.start, endLine: notes.end }])}`, 'noise turn']);
  });

  it('the scripted harness over MCP (the SDK client on each seat’s loopback server) drafts the same generation', async () => {
    const inProcess = await run(fullScript());
    const mcp = await run(fullScript(), { transport: 'mcp' });
    for (const lens of LENSES) {
      const a = lane(inProcess.outcome, lens).board;
      const b = lane(mcp.outcome, lens).board;
      assert.equal(b.status, 'finished', lens);
      assert.deepEqual(
        [...b.elements.values()].map((e) => [e.id, e.kind, e.parent]),
        [...a.elements.values()].map((e) => [e.id, e.kind, e.parent]),
        lens,
      );
    }
    assert.deepEqual(mcp.outcome.spend.map((s) => [s.seat, s.toolCalls]).sort(), inProcess.outcome.spend.map((s) => [s.seat, s.toolCalls]).sort());
  });

  it('Design fast path: an assembled board settles the lane with no seat; a fallback runs the seat and logs the rule', async () => {
    const assembled: DesignAssembler = (ps) => ({
      kind: 'board',
      state: {
        ...emptyBoard('design', ps.id, 'transcribed'),
        document: { title: 'Add x', intro_markdown: 'Transcribed.', measure: 'structured', prose_register: 'transcribed' },
        elements: new Map([['e1', { id: 'e1', kind: 'section', parent: null, author: 'assembler', seq: 1, title: 'proposal.md', body_markdown: 'Why: new reason', delta: null } as never]]),
        nextId: 2,
        status: 'finished',
        revision: 3,
      },
    });
    const fast = await run(fullScript(), { seams: { design: assembled } });
    assert.equal(lane(fast.outcome, 'design').state, 'settled');
    assert.equal(fast.turns('design:drafter'), 0);
    assert.equal(lane(fast.outcome, 'design').board.elements.size, 1);
    const stored = loadBoard(fast.store, { sessionId: fast.sessionId, generationId: fast.generationId, patchsetId: patchset.id, lens: 'design' })!;
    assert.equal(stored.document.prose_register, 'transcribed');

    const logs: string[] = [];
    const fallback = await run(fullScript(), {
      seams: {
        design: () => ({ kind: 'fallback', reason: 'a requirement has no SHALL text', sources: ['openspec/changes/x/specs/a/spec.md'], rule: 'spec-requirement-text' }) as never,
        log: (l: string) => logs.push(l),
      },
    });
    assert.equal(fallback.turns('design:drafter'), 1);
    assert.equal(lane(fallback.outcome, 'design').state, 'settled');
    assert.ok(
      logs.some((l) => l.startsWith('[seat] design:') && l.includes('spec-requirement-text')),
      logs.join('\n'),
    );
  });

  it('runs without a store (in-memory) and refuses a generation that already started', async () => {
    const assignment = scriptedAssignment(fullScript());
    const outcome = await runLensPipeline(
      { patchset, sessionId: 's-mem', generationId: 'g-mem', workspaceDir: repo.dir, contextDir: '.rennet/context/s-mem', harnesses: assignment },
      { prompts: testPrompts, clock: tickingClock() },
    );
    assert.ok(outcome.lanes.every((l) => l.state === 'settled'));
    assert.ok(existsSync(join(repo.dir, '.rennet/context/s-mem/findings/claude.md')));

    const first = await run(fullScript());
    await assert.rejects(
      runLensPipeline(
        { patchset, sessionId: first.sessionId, generationId: first.generationId, workspaceDir: repo.dir, contextDir: '.rennet/context/x', harnesses: scriptedAssignment(fullScript()) },
        { prompts: testPrompts, clock: tickingClock(), store: first.store },
      ),
      /already started: resume it/,
    );
  });
});
