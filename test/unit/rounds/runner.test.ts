import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AskLog } from '../../../host/asks/log';
import { RoundRunner, type RoundContext, type WorkerPort } from '../../../host/rounds/runner';
import { bindWorkspace } from '../../../host/rounds/workspace';
import { ReviewService } from '../../../host/service';
import { Store } from '../../../host/store';
import { TestRepo } from '../../fixtures/gitRepo';

/**
 * The round's honest endings on real repositories: a worker that failed and changed nothing is
 * failed (not "unchanged") and keeps its asks staged; a worker that changed nothing is unchanged
 * and its asks are consumed; changes left uncommitted fail the commit phase; no harness for the
 * report fails the report phase after the diff is measured; a repository with a submodule is
 * refused before anything runs.
 */
describe('host/rounds/runner: how a round ends', function () {
  this.timeout(60_000);
  const temps: string[] = [];
  const stores: Store[] = [];
  after(() => {
    for (const s of stores) s.close();
    for (const t of temps) rmSync(t, { recursive: true, force: true });
  });

  async function setup() {
    const repo = new TestRepo();
    temps.push(repo.dir);
    repo.write('a.txt', 'one\n');
    repo.commit('base');
    repo.branch('feature');
    repo.write('a.txt', 'one\ntwo\n');
    repo.commit('two');
    const dir = mkdtempSync(join(tmpdir(), 'rennet-runner-'));
    temps.push(dir);
    const store = await Store.open(join(dir, 'store'));
    stores.push(store);
    const opened = await new ReviewService({ store }).openReview({ repo: repo.dir, target: { kind: 'branch', head: 'feature', base: 'main' } });
    assert.ok(opened.ok, opened.ok ? '' : opened.error.message);
    const sessionId = opened.value.snapshot.session.id;
    const asks = new AskLog(store);
    const staged = asks.command(
      sessionId,
      {
        type: 'stage',
        anchor: { kind: 'line', patchsetId: opened.value.snapshot.patchset!.id, path: 'a.txt', side: 'head', startLine: 2, endLine: 2 },
        text: 'Say three.',
        intent: 'request-change',
        lane: 'changes',
      },
      new Date().toISOString(),
    );
    assert.ok(staged.ok);
    const runner = new RoundRunner({ store, asks, bindWorkspace: (s, o) => bindWorkspace(store, s, { dataDir: store.dir, now: () => new Date().toISOString(), ...o }) });
    const stagedCount = () => {
      const p = asks.projection(sessionId);
      assert.ok(p.ok);
      return p.value.counts.staged;
    };
    return { repo, store, sessionId, runner, stagedCount };
  }

  const noReport: RoundContext = {
    reportHarness: async () => ({ harness: null, hint: 'none configured' }),
    draftGeneration: async () => ({ ok: true, value: { generationId: 'g-fixture' } }),
  };
  const worker = (run: WorkerPort['run']): WorkerPort => ({ worker: { kind: 'scripted', version: null }, run });

  it('a worker that failed and changed nothing: failed at worker, not unchanged; the ask stays staged', async () => {
    const s = await setup();
    const d = await s.runner.dispatch(s.sessionId, { ...noReport, worker: worker(async () => ({ outcome: 'failed', message: 'the model refused' })) });
    assert.ok(d.ok);
    const round = await d.value.done;
    assert.deepEqual([round.state, round.failure?.phase, round.failure?.retryable], ['failed', 'worker', false]);
    assert.match(round.failure?.message ?? '', /the model refused.*changed nothing.*stay staged/);
    assert.equal(s.stagedCount(), 1);
  });

  it('a worker that changed nothing: unchanged, no report, the ask consumed', async () => {
    const s = await setup();
    const d = await s.runner.dispatch(s.sessionId, { ...noReport, worker: worker(async () => ({ outcome: 'done', message: 'nothing to do' })) });
    assert.ok(d.ok);
    const round = await d.value.done;
    assert.deepEqual([round.state, round.report, round.successorPatchsetId], ['unchanged', null, null]);
    assert.equal(s.stagedCount(), 0);
  });

  it('changes left uncommitted: failed at commit, the changes left in place, the ask staged', async () => {
    const s = await setup();
    const d = await s.runner.dispatch(s.sessionId, { ...noReport, worker: worker(async ({ root }) => (writeFileSync(join(root, 'a.txt'), 'one\ntwo\nthree\n'), { outcome: 'done', message: null })) });
    assert.ok(d.ok);
    const round = await d.value.done;
    assert.deepEqual([round.state, round.failure?.phase], ['failed', 'commit']);
    assert.match(round.failure?.message ?? '', /left them uncommitted/);
    assert.equal(s.repo.git('status', '--porcelain').trim(), 'M a.txt', 'the worker’s change is left in the workspace');
    assert.equal(s.stagedCount(), 1);
  });

  it('no harness for the report: the diff is measured and the successor captured, then the round fails at its report; retryable', async () => {
    const s = await setup();
    const d = await s.runner.dispatch(s.sessionId, {
      ...noReport,
      worker: worker(async ({ root }) => {
        writeFileSync(join(root, 'a.txt'), 'one\ntwo\nthree\n');
        s.repo.git('commit', '-qam', 'three');
        return { outcome: 'done', message: null };
      }),
    });
    assert.ok(d.ok);
    const round = await d.value.done;
    assert.deepEqual([round.state, round.failure?.phase, round.failure?.retryable], ['failed', 'report', true]);
    assert.match(round.failure?.message ?? '', /no harness is available for the round report \(none configured\)/);
    assert.deepEqual(round.diff, { files: 1, additions: 1, deletions: 0 });
    assert.ok(round.successorPatchsetId);
    assert.equal(s.stagedCount(), 1);
  });

  it('a repository with a submodule is refused before anything runs', async () => {
    const s = await setup();
    s.repo.git('update-index', '--add', '--cacheinfo', `160000,${s.repo.git('rev-parse', 'HEAD')},vendor/lib`);
    s.repo.git('commit', '-qm', 'a gitlink');
    let ran = false;
    const d = await s.runner.dispatch(s.sessionId, { ...noReport, worker: worker(async () => ((ran = true), { outcome: 'done', message: null })) });
    assert.ok(!d.ok);
    assert.match(d.error.message, /submodules/);
    assert.equal(ran, false);
    assert.deepEqual(s.runner.rounds(s.sessionId), [], 'no round was recorded');
  });
});
