import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Harness, TurnRequest, TurnResult } from '../../../host/pipeline/ports';
import { AskLog } from '../../../host/asks/log';
import { branchOpenPrInput } from '../../../host/exits/openPr';
import { draftPullRequest } from '../../../host/exits/prDraft';
import { RoundRunner, type RoundContext, type WorkerPort } from '../../../host/rounds/runner';
import { runScriptedWorker } from '../../../host/rounds/scriptedWorker';
import { bindWorkspace } from '../../../host/rounds/workspace';
import { ReviewService } from '../../../host/service';
import { Store } from '../../../host/store';
import { READ_DIFF, READ_TOOL_NAMES } from '../../../protocol/read';
import type { EvidenceUnit } from '../../../protocol/rounds';
import type { SeatSpend } from '../../../protocol/review';
import { TestRepo } from '../../fixtures/gitRepo';

/**
 * The loop has no cap (seed: arbitrary-N, since a three-round journey only disproves a cap of two):
 * six rounds over the real dispatch, work order, checkpoints, report verification and ask log, on
 * a real repository. Every cycle emits the same ordered receipts, with the ordinal present only as
 * data; each cycle's work order starts from the previous cycle's successor; the refusals read the
 * same before the first round and after the sixth.
 *
 * The classifier here is an in-process harness that behaves like a model: it reads every evidence
 * page through read_evidence, reads the changed file's diff through read_diff (the read tools over
 * the round's successor), then cites exactly the ids it read. Landing the generation is
 * fabricated (labelled): draftGeneration answers a generation id without drafting lenses.
 */

/** A model that reads the evidence and attributes every unit to the first ask, marking all asks addressed. */
class ReadingClassifier implements Harness {
  readonly kind = 'scripted';
  readonly origin = 'other' as const;
  readonly model = null;
  turns = 0;
  /** Per turn: the tools it was offered, and what read_diff answered for the changed file. */
  readonly offered: string[][] = [];
  readonly diffs: string[] = [];
  async runTurn(request: TurnRequest): Promise<TurnResult> {
    this.turns++;
    this.offered.push(request.tools.tools.map((t) => t.name));
    const ids: string[] = [];
    let asks: string[] = [];
    for (let page = 1; ; page++) {
      const read = await request.tools.call('read_evidence', { page });
      assert.equal(read.isError, false, read.text);
      const lines = read.text.split('\n').filter((l) => l.startsWith('{'));
      for (const line of lines) {
        const value = JSON.parse(line) as { asks?: Array<{ id: string }> } & Partial<EvidenceUnit>;
        if (value.asks) asks = value.asks.map((a) => a.id);
        else if (value.id) ids.push(value.id);
      }
      if (!/continue with read_evidence/.test(read.text)) break;
    }
    const diff = await request.tools.call(READ_DIFF, { path: 'src/counter.txt' });
    assert.equal(diff.isError, false, diff.text);
    this.diffs.push(diff.text);
    const outcomes = asks.map((askId, i) => ({ askId, outcome: i === 0 ? 'addressed' : 'untouched', evidenceIds: i === 0 ? ids : [], note: i === 0 ? 'Done as asked.' : 'Not touched.' }));
    const submitted = await request.tools.call('submit_report', { outcomes, beyond: [] });
    assert.equal(submitted.isError, false, submitted.text);
    return { outcome: 'ended', message: null, usage: null };
  }
}

describe('host/rounds: the loop is unbounded (six rounds, the same transitions each time)', function () {
  this.timeout(120_000);
  let repo: TestRepo;
  let dir: string;
  let store: Store;

  before(async () => {
    repo = new TestRepo();
    repo.write('src/counter.txt', 'count 0\n').write('README.md', '# loop\n');
    repo.commit('base');
    repo.branch('feature');
    repo.write('src/counter.txt', 'count 0\nstep 0\n');
    repo.commit('start the steps');
    dir = mkdtempSync(join(tmpdir(), 'rennet-loop-'));
    store = await Store.open(join(dir, 'store'));
  });
  after(() => {
    store.close();
    repo.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('six rounds, each from the previous successor: the same receipts in the same order, asks consumed, no cap; the refusals read the same after the sixth as before the first', async () => {
    const service = new ReviewService({ store });
    const opened = await service.openReview({ repo: repo.dir, target: { kind: 'branch', head: 'feature', base: 'main' } });
    assert.ok(opened.ok, opened.ok ? '' : opened.error.message);
    const sessionId = opened.value.snapshot.session.id;
    const asks = new AskLog(store);
    const runner = new RoundRunner({ store, asks, bindWorkspace: (s, options) => bindWorkspace(store, s, { dataDir: store.dir, now: () => new Date().toISOString(), ...options }) });
    const classifier = new ReadingClassifier();
    let fabricated = 0;
    const context: RoundContext = {
      reportHarness: async () => ({ harness: classifier, hint: null }),
      // Fixture-authored landing: no lenses are drafted here (their runs are tested elsewhere).
      draftGeneration: async () => ({ ok: true, value: { generationId: `g-fixture-${++fabricated}` } }),
    };
    const before = await runner.order(sessionId);
    assert.ok(!before.ok && before.error.detail?.['refusal'] === 'nothing-staged');

    // The PR exit, composed from this review, and from a review of the same branch in a store that never ran a round.
    const exitOf = async (reviews: Store, reviewService: ReviewService) => {
      const input = branchOpenPrInput({ store: reviews, findSession: (root, target) => reviewService.findSession(root, target) }, repo.dir, { repoDir: repo.dir, branch: 'feature', base: 'main' });
      const commits = repo
        .git('log', '--reverse', '--format=%H%x00%s', 'main..feature')
        .split('\n')
        .filter(Boolean)
        .map((line) => ({ sha: line.split('\0')[0] as string, subject: line.split('\0')[1] as string }));
      const draft = draftPullRequest({ branch: 'feature', base: 'main', commits, generation: input.generation?.('feature', 'main') ?? null, edit: input.draftEdits?.read('feature', 'main') ?? null });
      return JSON.stringify(draft);
    };
    const control = async () => {
      const controlStore = await Store.open(join(dir, `control-${Date.now()}`));
      try {
        const controlService = new ReviewService({ store: controlStore });
        assert.ok((await controlService.openReview({ repo: repo.dir, target: { kind: 'branch', head: 'feature', base: 'main' } })).ok);
        return await exitOf(controlStore, controlService);
      } finally {
        controlStore.close();
      }
    };
    const exitAtZero = await exitOf(store, service);
    assert.equal(exitAtZero, await control(), 'at zero rounds the exit is what a review with no rounds composes');

    const N = 6;
    const sequences: string[][] = [];
    let previousSuccessor = opened.value.snapshot.patchset?.id ?? '';
    for (let n = 1; n <= N; n++) {
      const patchsetId = store.getSession(sessionId)?.activePatchsetId as string;
      assert.equal(patchsetId, previousSuccessor, `round ${n} starts from the previous successor`);
      const staged = asks.command(
        sessionId,
        {
          type: 'stage',
          anchor: { kind: 'line', patchsetId, path: 'src/counter.txt', side: 'head', startLine: n + 1, endLine: n + 1 },
          text: `Add step ${n}.`,
          intent: 'request-change',
          lane: 'changes',
        },
        new Date().toISOString(),
      );
      assert.ok(staged.ok, staged.ok ? '' : staged.error.message);
      asks.command(sessionId, { type: 'stage', anchor: { kind: 'none' }, text: `Is step ${n} needed?`, intent: 'question', lane: 'changes' }, new Date().toISOString());
      const lines = ['count 0', ...Array.from({ length: n + 1 }, (_, i) => `step ${i}`)];
      const worker: WorkerPort = {
        worker: { kind: 'scripted', version: null },
        run: async ({ root, signal }) => {
          const ran = await runScriptedWorker(root, { steps: [{ write: { path: 'src/counter.txt', content: `${lines.join('\n')}\n` } }, { commit: `Add step ${n}` }] }, { signal });
          return ran.ok ? { outcome: 'done', message: null } : { outcome: 'failed', message: ran.error.message };
        },
      };
      const seqBefore = store.readEvents(sessionId).length;
      const dispatched = await runner.dispatch(sessionId, { ...context, worker });
      assert.ok(dispatched.ok, dispatched.ok ? '' : dispatched.error.message);
      assert.equal(dispatched.value.round.ordinal, n);
      const round = await dispatched.value.done;
      assert.equal(round.state, 'returned', JSON.stringify(round.failure));
      assert.deepEqual(
        round.report?.outcomes.map((o) => o.outcome),
        ['addressed'],
      );
      const added = round.report?.outcomes[0]?.evidence[0];
      assert.equal(repo.git('show', `feature:src/counter.txt`).split('\n')[(added?.line ?? 0) - 1], `step ${n}`, `round ${n}'s evidence is the line it added`);
      // The report seat read the round's successor: its read_diff carries the line this round added, at its head line.
      for (const name of READ_TOOL_NAMES) assert.ok(classifier.offered[n - 1]?.includes(name), `round ${n}'s report seat was not offered ${name}`);
      const diff = classifier.diffs[n - 1] ?? '';
      assert.match(diff, new RegExp(`^\\+ +${n + 2} \\| step ${n}$`, 'm'), `round ${n}'s read_diff does not carry the successor's added line:\n${diff}`);
      // Its spend rides on the reported receipt: one read of the change, its bytes and time.
      const reported = store
        .readEvents(sessionId)
        .filter((e) => e.kind === 'round.reported')
        .at(-1)?.payload as { spend?: SeatSpend } | undefined;
      assert.equal(reported?.spend?.seat, 'round:report');
      assert.equal(reported?.spend?.harness, 'scripted');
      assert.equal(reported?.spend?.readCalls, 1);
      assert.ok((reported?.spend?.readBytes ?? 0) >= Buffer.byteLength(diff), JSON.stringify(reported?.spend));
      assert.equal(typeof reported?.spend?.readMs, 'number');
      assert.ok((reported?.spend?.toolCalls ?? 0) >= 3, JSON.stringify(reported?.spend));
      // The receipts of this cycle, as kinds (phase receipts name their phase), with ordinals stripped.
      const cycle = store
        .readEvents(sessionId)
        .slice(seqBefore)
        // The workspace binding is recorded once, by the first round; it is not a round's transition.
        .filter((e) => e.kind !== 'session.workspace')
        .map((e) =>
          e.kind === 'round.phase' ? `round.phase:${(e.payload as { phase: string }).phase}` : e.kind === 'round.checkpoint' ? `round.checkpoint:${(e.payload as { label: string }).label}` : e.kind,
        );
      sequences.push(cycle);
      // Consumed: the change request is retired naming the round; the question stays staged.
      const projection = asks.projection(sessionId);
      assert.ok(projection.ok);
      const mine = projection.value.asks.filter((a) => a.text === `Add step ${n}.`);
      assert.deepEqual(
        mine.map((a) => [a.state, a.retiredReason]),
        [['retired', `round ${n}: addressed`]],
      );
      previousSuccessor = round.successorPatchsetId as string;
    }
    for (const [i, cycle] of sequences.entries()) assert.deepEqual(cycle, sequences[0], `cycle ${i + 1} emitted other receipts than cycle 1`);
    assert.deepEqual(sequences[0], [
      'round.started',
      'round.phase:worker',
      'round.checkpoint:before',
      'round.worker',
      'round.phase:commit',
      'round.checkpoint:after',
      'round.measured',
      'round.phase:report',
      'round.successor',
      'round.phase:verification',
      'round.reported',
      'round.phase:regeneration',
      'round.generation',
      'ask.retire',
      'round.ended',
    ]);
    assert.equal(classifier.turns, N, 'one classification turn per round');
    assert.equal(store.readEvents(sessionId).filter((e) => e.kind === 'session.workspace').length, 1, 'the workspace is bound once');
    assert.deepEqual(
      runner.rounds(sessionId).map((r) => [r.ordinal, r.state]),
      Array.from({ length: N }, (_, i) => [i + 1, 'returned']),
    );
    // The exit after the Nth round: byte-equal to the one a review that never ran a round composes
    // over the same branch — the rounds leave nothing in it but the commits they made.
    const exitAtN = await exitOf(store, service);
    assert.equal(exitAtN, await control(), `after round ${N} the exit is what a review with no rounds composes`);
    assert.notEqual(exitAtN, exitAtZero, 'the commits the rounds made are in it');
    assert.ok(!/Round \d/.test(exitAtN), 'no round ordinal reaches the exit');
    // Only questions are left: the refusal is the same words it would be before any round.
    const after = await runner.order(sessionId);
    assert.ok(!after.ok && after.error.detail?.['refusal'] === 'no-coding-asks', JSON.stringify(after));
  });
});
