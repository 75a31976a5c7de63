import assert from 'node:assert/strict';
import { loadBoard } from '../../../host/board/persist';
import { scriptedAssignment, type HarnessScript, type ScriptedHarness } from '../../../host/harness/scripted';
import type { Harness } from '../../../host/pipeline/ports';
import { newGenerationId, resumeLensPipeline, runLensPipeline } from '../../../host/pipeline/run';
import type { GenerationOutcome, HarnessAssignment, LensPipelineInput } from '../../../host/pipeline/types';
import { boardKeyOf, type Store } from '../../../host/store';
import { LENSES, type Lens } from '../../../protocol/board';
import type { Patchset } from '../../../protocol/patchset';
import type { TestRepo } from '../../fixtures/gitRepo';
import {
  Gate,
  T0,
  Temp,
  captureBranch,
  codeChange,
  decisionsTurn,
  fullScriptFor,
  killable,
  lines,
  observe,
  openStore,
  regionsOf,
  sequenceTurn,
  sessionFor,
  testPrompts,
  tickingClock,
  until,
  type Region,
} from './fixtures';

const SEATS = ['design:drafter', 'sequence:drafter', 'decisions:drafter', 'flagged:reviewer:claude', 'flagged:reviewer:codex', 'flagged:compiler', 'noise:drafter'] as const;

function gated(assignment: HarnessAssignment, blocked: (seatId: string) => boolean): { assignment: HarnessAssignment; gates: Gate[] } {
  const gates: Gate[] = [];
  const wrap = (h: Harness | null) => {
    if (!h) return null;
    const gate = new Gate(h, blocked);
    gates.push(gate);
    return gate;
  };
  return {
    assignment: {
      design: wrap(assignment.design),
      sequence: wrap(assignment.sequence),
      decisions: wrap(assignment.decisions),
      noise: wrap(assignment.noise),
      flagged: { reviewers: assignment.flagged.reviewers.map((h) => wrap(h) as Harness), compiler: wrap(assignment.flagged.compiler) },
    },
    gates,
  };
}

function turnCounts(harnesses: readonly ScriptedHarness[]): Record<string, number> {
  return Object.fromEntries(SEATS.map((seat) => [seat, harnesses.reduce((n, h) => n + h.turnsOf(seat).length, 0)]));
}

describe('lens pipeline: restart after the process was lost', function () {
  this.timeout(60_000);
  const temp = new Temp();
  let repo: TestRepo;
  let patchset: Patchset;
  let app1: Region, app2: Region;

  before(async () => {
    ({ repo, patchset } = await codeChange());
    [, app1, app2] = regionsOf(patchset) as [Region, Region, Region, Region];
  });
  after(() => {
    repo?.cleanup();
    temp.cleanup();
  });

  interface Setup {
    dir: string;
    store: Store;
    sessionId: string;
    input: (harnesses: HarnessAssignment) => LensPipelineInput;
  }

  async function setup(): Promise<Setup> {
    const dir = temp.dir('rennet-restart-store-');
    const store = await openStore(dir);
    const sessionId = sessionFor(store, repo, patchset);
    const generationId = newGenerationId();
    return {
      dir,
      store,
      sessionId,
      input: (harnesses) => ({ patchset, sessionId, generationId, workspaceDir: repo.dir, contextDir: `.rennet/context/${sessionId}`, harnesses }),
    };
  }

  /**
   * Runs a first pipeline whose seats `blocked` names are held; once `ready` holds, the store
   * dies (what is on disk is what a kill -9 leaves), the held turns are let go and the run
   * rejects. Returns the reopened store.
   */
  async function killedRun(s: Setup, script: HarnessScript, blocked: (seatId: string) => boolean, ready: (obs: ReturnType<typeof observe>, gates: Gate[]) => boolean) {
    const base = scriptedAssignment(script);
    const { assignment, gates } = gated(base, blocked);
    const dying = killable(s.store);
    const obs = observe();
    const running = runLensPipeline(s.input(assignment), { prompts: testPrompts, clock: tickingClock(), store: dying.store, onFrame: obs.onFrame, onLane: obs.onLane });
    await until(() => ready(obs, gates), 'the moment to kill');
    dying.kill();
    for (const gate of gates) gate.release();
    await assert.rejects(running, /killed/);
    s.store.close();
    const reopened = await openStore(s.dir);
    return { store: reopened, obs, first: base.harnesses };
  }

  async function resume(s: Setup, store: Store, script: HarnessScript) {
    const assignment = scriptedAssignment(script);
    const obs = observe();
    const outcome = await resumeLensPipeline(s.input(assignment), { prompts: testPrompts, clock: tickingClock(Date.parse(T0) + 60_000), store, onFrame: obs.onFrame, onLane: obs.onLane });
    return { outcome, obs, turns: turnCounts(assignment.harnesses) };
  }

  const lane = (outcome: GenerationOutcome, lens: Lens) => outcome.lanes.find((l) => l.lens === lens)!;
  const held = (gates: Gate[]) => gates.flatMap((g) => g.held);

  it('killed before any lane settled: every lane is cleared (metadata first) and redrafted on the repeat budget; frames stay monotonic', async () => {
    const s = await setup();
    const script = fullScriptFor(patchset);
    // Sequence writes part of its board in turn 1 and is held in turn 2; everyone else is held at once.
    script.seats['sequence:drafter'] = { turns: [sequenceTurn([app1], false).filter((c) => c.tool !== 'set_document'), sequenceTurn([app1])] };
    let sequenceTurns = 0;
    const { store, obs: before } = await killedRun(
      s,
      script,
      (seat) => seat !== 'sequence:drafter' || ++sequenceTurns > 1,
      (_obs, gates) => held(gates).length === 5,
    );
    const key = (lens: Lens) => boardKeyOf({ sessionId: s.sessionId, generationId: s.input(null as never).generationId, patchsetId: patchset.id, lens });
    const partial = loadBoard(store, { sessionId: s.sessionId, generationId: s.input(null as never).generationId, patchsetId: patchset.id, lens: 'sequence' })!;
    assert.ok(partial.elements.size > 0, 'the killed run left a partial board');
    assert.equal(store.listLaneOutcomes(s.input(null as never).generationId).length, 0);

    const { outcome, obs, turns } = await resume(s, store, fullScriptFor(patchset));
    assert.ok(
      outcome.lanes.every((l) => l.state === 'settled' && !l.reconstructed),
      JSON.stringify(outcome.lanes.map((l) => [l.lens, l.state, l.failure])),
    );
    assert.deepEqual(turns, Object.fromEntries(SEATS.map((seat) => [seat, 1])));
    // The partial board was replaced as one attempt: a second board.opened, none of the old elements.
    const events = store.readBoardEvents(key('sequence'));
    assert.equal(events.filter((e) => e.verb === 'board.opened').length, 2);
    assert.equal(lane(outcome, 'sequence').board.elements.size, sequenceTurn([app1]).length - 2, 'only this attempt’s elements');
    for (const lens of LENSES) {
      const lastBefore = Math.max(-1, ...before.frames.filter((f) => f.lens === lens).map((f) => f.revision));
      const after = obs.frames.filter((f) => f.lens === lens);
      assert.equal(after[0]!.kind, 'opened');
      assert.ok(after[0]!.revision > lastBefore, `${lens}: reopened at ${after[0]!.revision} after ${lastBefore}`);
    }
    // Spend adds to the killed run's (the turn it finished) rather than replacing it.
    assert.equal(outcome.spend.filter((x) => x.seat === 'sequence:drafter').length, 2);
    store.close();
  });

  it('killed after some lanes settled: settled lanes are rebuilt with no harness call; the rest are redrafted', async () => {
    const s = await setup();
    const { store } = await killedRun(
      s,
      fullScriptFor(patchset),
      (seat) => !['design:drafter', 'sequence:drafter'].includes(seat),
      (obs, gates) => obs.settlements().length === 2 && held(gates).length === 3,
    );
    const generationId = s.input(null as never).generationId;
    assert.deepEqual(
      store
        .listLaneOutcomes(generationId)
        .map((o) => o.lens)
        .sort(),
      ['design', 'sequence'],
    );

    const { outcome, obs, turns } = await resume(s, store, fullScriptFor(patchset));
    assert.deepEqual(turns, { ...Object.fromEntries(SEATS.map((seat) => [seat, 1])), 'design:drafter': 0, 'sequence:drafter': 0 });
    assert.deepEqual(
      outcome.lanes.map((l) => [l.lens, l.state, l.reconstructed]),
      [
        ['design', 'settled', true],
        ['sequence', 'settled', true],
        ['decisions', 'settled', false],
        ['flagged', 'settled', false],
        ['noise', 'settled', false],
      ],
    );
    assert.deepEqual(obs.statesOf('design'), ['queued', 'settled']);
    assert.deepEqual(obs.statesOf('noise'), ['queued', 'waiting', 'working', 'settled']);
    // The Noise complement subtracts the rebuilt lanes' citations too.
    const members = [...lane(outcome, 'noise').board.elements.values()].filter((e) => e.kind === 'noise_member');
    assert.equal(members.length, 1);
    store.close();
  });

  it('killed during Noise: the four core lanes are rebuilt; only the Noise seat runs again', async () => {
    const s = await setup();
    const { store } = await killedRun(
      s,
      fullScriptFor(patchset),
      (seat) => seat === 'noise:drafter',
      (obs, gates) => obs.statesOf('noise').includes('working') && held(gates).length === 1,
    );
    const generationId = s.input(null as never).generationId;
    const placed = loadBoard(store, { sessionId: s.sessionId, generationId, patchsetId: patchset.id, lens: 'noise' })!;
    assert.equal(placed.elements.size, 1, 'the host had placed the member before the kill');

    const { outcome, turns } = await resume(s, store, fullScriptFor(patchset));
    assert.deepEqual(turns, { ...Object.fromEntries(SEATS.map((seat) => [seat, 0])), 'noise:drafter': 1 });
    assert.ok(outcome.lanes.slice(0, 4).every((l) => l.reconstructed && l.state === 'settled'));
    assert.equal(lane(outcome, 'noise').state, 'settled');
    assert.equal(lane(outcome, 'noise').board.elements.size, 2, 'the member placed again, and its group');
    store.close();
  });

  it('a board that settled before its outcome was written is read as settled (the board is the evidence)', async () => {
    const s = await setup();
    const base = scriptedAssignment(fullScriptFor(patchset));
    const dying = killable(s.store, (method, args) => method === 'putLaneOutcome' && (args[0] as { lens: string }).lens === 'sequence');
    await assert.rejects(runLensPipeline(s.input(base), { prompts: testPrompts, clock: tickingClock(), store: dying.store }), /killed/);
    s.store.close();
    const store = await openStore(s.dir);
    const generationId = s.input(null as never).generationId;
    assert.ok(!store.listLaneOutcomes(generationId).some((o) => o.lens === 'sequence'));
    const { outcome, turns } = await resume(s, store, fullScriptFor(patchset));
    assert.equal(turns['sequence:drafter'], 0);
    assert.deepEqual([lane(outcome, 'sequence').state, lane(outcome, 'sequence').reconstructed], ['settled', true]);
    assert.equal(store.listLaneOutcomes(generationId).find((o) => o.lens === 'sequence')?.state, 'settled', 'the outcome is written now');
    store.close();
  });

  it('terminal failures are rebuilt; retryable ones are redrafted on the reduced budget; Noise follows its siblings’ account', async () => {
    const s = await setup();
    const script = fullScriptFor(patchset);
    script.seats['sequence:drafter'] = { turns: [{ end: 'unsettled' }, { end: 'unsettled' }, { end: 'unsettled' }] };
    script.seats['decisions:drafter'] = { turns: [{ fail: 'down' }, { fail: 'down' }, { fail: 'down' }] };
    const first = await runLensPipeline(s.input(scriptedAssignment(script)), { prompts: testPrompts, clock: tickingClock(), store: s.store });
    assert.deepEqual(
      first.lanes.map((l) => [l.lens, l.state, l.failure?.retryable ?? null]),
      [
        ['design', 'settled', null],
        ['sequence', 'failed', false],
        ['decisions', 'failed', true],
        ['flagged', 'settled', null],
        ['noise', 'failed', true],
      ],
    );

    // Restart 1: Decisions still cannot draw — it spends the repeat entry (2), not a fresh ladder of 3.
    const stillDown = fullScriptFor(patchset);
    stillDown.seats['decisions:drafter'] = { turns: [{ fail: 'down' }, { fail: 'down' }, { fail: 'down' }] };
    const r1 = await resume(s, s.store, stillDown);
    assert.deepEqual(r1.turns, { ...Object.fromEntries(SEATS.map((seat) => [seat, 0])), 'decisions:drafter': 2 });
    assert.deepEqual([lane(r1.outcome, 'decisions').failure!.attempts, lane(r1.outcome, 'decisions').failure!.retryable], [2, true]);

    // Restart 2: Decisions draws. Sequence's terminal failure is rebuilt, so Noise now fails terminal, with no seat.
    const drawn = fullScriptFor(patchset);
    drawn.seats['decisions:drafter'] = { turns: [decisionsTurn([app2])] };
    const r2 = await resume(s, s.store, drawn);
    assert.deepEqual(r2.turns, { ...Object.fromEntries(SEATS.map((seat) => [seat, 0])), 'decisions:drafter': 1 });
    assert.deepEqual(
      r2.outcome.lanes.map((l) => [l.lens, l.state, l.reconstructed]),
      [
        ['design', 'settled', true],
        ['sequence', 'failed', true],
        ['decisions', 'settled', false],
        ['flagged', 'settled', true],
        ['noise', 'failed', false],
      ],
    );
    assert.equal(lane(r2.outcome, 'noise').failure!.retryable, false);
    assert.equal(lane(r2.outcome, 'sequence').failure!.attempts, 3);

    // Restart 3: everything is settled evidence; no model is spent.
    const r3 = await resume(s, s.store, fullScriptFor(patchset));
    assert.deepEqual(r3.turns, Object.fromEntries(SEATS.map((seat) => [seat, 0])));
    assert.ok(r3.outcome.lanes.every((l) => l.reconstructed));
    assert.equal(r3.outcome.spend.length, r2.outcome.spend.length, 'spend accumulates across runs and nothing new was spent');
    s.store.close();
  });

  it('a crash between the two clearing steps (metadata gone, log intact) resumes cleanly', async () => {
    const s = await setup();
    await runLensPipeline(s.input(scriptedAssignment(fullScriptFor(patchset))), { prompts: testPrompts, clock: tickingClock(), store: s.store });
    const generationId = s.input(null as never).generationId;
    const key = boardKeyOf({ sessionId: s.sessionId, generationId, patchsetId: patchset.id, lens: 'decisions' });
    const revision = s.store.getBoardMeta(key)!.revision;
    // Step one of a redraft only: the metadata and the outcome go; the element log stays.
    assert.equal(s.store.clearLane(generationId, 'decisions', key, T0), revision);
    assert.equal(s.store.getBoardMeta(key), undefined);
    const { outcome, obs, turns } = await resume(s, s.store, fullScriptFor(patchset));
    assert.equal(turns['decisions:drafter'], 1);
    assert.equal(turns['sequence:drafter'], 0);
    assert.equal(lane(outcome, 'decisions').state, 'settled');
    assert.ok(obs.frames.find((f) => f.lens === 'decisions')!.revision >= revision + 2, 'reopened above the cleared attempt');
    assert.equal(turns['noise:drafter'], 1, 'a redrafted sibling means Noise is derived again');
    s.store.close();
  });

  it('a cancelled run leaves its unsettled lanes unsettled (no outcome written); a resume drafts them', async () => {
    const s = await setup();
    const { assignment, gates } = gated(scriptedAssignment(fullScriptFor(patchset)), (seat) => seat.startsWith('flagged:'));
    const controller = new AbortController();
    const running = runLensPipeline(s.input(assignment), { prompts: testPrompts, clock: tickingClock(), store: s.store, signal: controller.signal });
    await until(() => held(gates).length === 2 && s.store.listLaneOutcomes(s.input(null as never).generationId).length === 3, 'three lanes settled, Flagged held');
    controller.abort();
    await assert.rejects(running, /cancelled/);
    assert.deepEqual(
      s.store.listLaneOutcomes(s.input(null as never).generationId).map((o) => o.lens),
      ['design', 'sequence', 'decisions'],
    );
    const { outcome, turns } = await resume(s, s.store, fullScriptFor(patchset));
    assert.deepEqual(turns, { ...Object.fromEntries(SEATS.map((seat) => [seat, 1])), 'design:drafter': 0, 'sequence:drafter': 0, 'decisions:drafter': 0 });
    assert.ok(outcome.lanes.every((l) => l.state === 'settled'));
    s.store.close();
  });

  it('a new generation freezes the previous one; nothing rewrites a frozen generation', async () => {
    const s = await setup();
    const gen1 = s.input(scriptedAssignment(fullScriptFor(patchset)));
    await runLensPipeline(gen1, { prompts: testPrompts, clock: tickingClock(), store: s.store });
    const key = boardKeyOf({ sessionId: s.sessionId, generationId: gen1.generationId, patchsetId: patchset.id, lens: 'sequence' });
    const before = loadBoard(s.store, { sessionId: s.sessionId, generationId: gen1.generationId, patchsetId: patchset.id, lens: 'sequence' })!;

    // A new commit on the branch: a new patchset, a new generation over it.
    repo.checkout('feature');
    repo.write('src/util.ts', lines(20, 'util').replace('util 5\n', 'UTIL 5\n').replace('util 15\n', 'UTIL 15\n')).commit('more');
    const next = await captureBranch(repo);
    try {
      sessionFor(s.store, repo, next);
      const gen2: LensPipelineInput = { ...gen1, patchset: next, generationId: newGenerationId(), harnesses: scriptedAssignment(fullScriptFor(next)) };
      const outcome2 = await runLensPipeline(gen2, { prompts: testPrompts, clock: tickingClock(), store: s.store });
      assert.equal(outcome2.lanes.find((l) => l.lens === 'design')!.state, 'settled');
      assert.deepEqual(
        s.store.listGenerations(s.sessionId).map((g) => [g.id, g.status]),
        [
          [gen1.generationId, 'frozen'],
          [gen2.generationId, 'live'],
        ],
      );

      assert.throws(() => s.store.putLaneOutcome({ generationId: gen1.generationId, lens: 'sequence', state: 'settled', absence: null, failure: null, attempts: 0, now: T0 }), /frozen/);
      assert.throws(() => s.store.clearLane(gen1.generationId, 'sequence', key, T0), /frozen/);
      assert.throws(() => s.store.putGenerationRecords(gen1.generationId, { timings: [], spend: [] }, T0), /frozen/);
      assert.throws(() => s.store.commitBoardWrite({ ...s.store.getBoardMeta(key)!, updatedAt: T0 }, [{ verb: 'element.removed', payload: { id: 'e1' } }]), /frozen/);
      assert.throws(() => s.store.appendBoardEvents(key, [{ verb: 'board.opened', payload: {} }], T0), /frozen/);
      await assert.rejects(resumeLensPipeline(gen1, { prompts: testPrompts, clock: tickingClock(), store: s.store }), /frozen/);
      await assert.rejects(runLensPipeline(gen1, { prompts: testPrompts, clock: tickingClock(), store: s.store }), /frozen/);
      const after = loadBoard(s.store, { sessionId: s.sessionId, generationId: gen1.generationId, patchsetId: patchset.id, lens: 'sequence' })!;
      assert.deepEqual([...after.elements.values()], [...before.elements.values()], 'the frozen board reads back unchanged');
    } finally {
      repo.git('reset', '-q', '--hard', 'HEAD~1');
      s.store.close();
    }
  });
});
