import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AskLog } from '../../../host/asks/log';
import { RoundRunner, type RoundContext } from '../../../host/rounds/runner';
import { bindWorkspace, worktreePlacement } from '../../../host/rounds/workspace';
import { ReviewService } from '../../../host/service';
import { Store } from '../../../host/store';
import { TestRepo } from '../../fixtures/gitRepo';

/**
 * A round on a sibling (workspace `own`, the reviewer's checkout on the branch), on a real
 * repository: the work order says to work on `rennet/<branch>`, the worker commits there, the
 * reviewer's branch and checkout do not move, and the successor still names the reviewed branch as
 * its head reference with the sibling's tip as its head commit.
 */
describe('host/rounds/runner on a sibling: the successor names the reviewed branch at the work branch’s tip', function () {
  this.timeout(60_000);
  const temps: string[] = [];
  const stores: Store[] = [];
  after(() => {
    for (const s of stores) s.close();
    for (const t of temps) rmSync(t, { recursive: true, force: true });
  });

  it('commits on rennet/feature; feature stays; the successor is feature at rennet/feature’s tip', async () => {
    const repo = new TestRepo();
    temps.push(repo.dir);
    repo.write('a.txt', 'one\n');
    repo.commit('base');
    repo.branch('feature');
    repo.write('a.txt', 'one\ntwo\n');
    const featureTip = repo.commit('two');
    const dir = mkdtempSync(join(tmpdir(), 'rennet-sibling-'));
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
    const runner = new RoundRunner({ store, asks, bindWorkspace: (s, o) => bindWorkspace(store, s, { dataDir: store.dir, now: () => new Date().toISOString(), mode: 'own', ...o }) });
    const noReport: RoundContext = {
      reportHarness: async () => ({ harness: null, hint: 'none configured' }),
      draftGeneration: async () => ({ ok: true, value: { generationId: 'g-fixture' } }),
    };
    const place = worktreePlacement(store.dir, repo.dir, 'rennet/feature');
    const order = await runner.order(sessionId);
    assert.ok(order.ok, order.ok ? '' : order.error.message);
    assert.deepEqual(order.value.workspace, { root: place, branch: 'feature', kind: 'sibling', workBranch: 'rennet/feature' });
    assert.match(order.value.order.markdown, /^- Work on `rennet\/feature` \(a branch of `feature` for this review's rounds\)/m);

    let ranIn = '';
    const d = await runner.dispatch(sessionId, {
      ...noReport,
      worker: {
        worker: { kind: 'scripted', version: null },
        run: async ({ root }) => {
          ranIn = root;
          writeFileSync(join(root, 'a.txt'), 'one\ntwo\nthree\n');
          const wt = new TestRepo(root, false);
          wt.git('commit', '-qam', 'three');
          return { outcome: 'done', message: null };
        },
      },
    });
    assert.ok(d.ok, d.ok ? '' : d.error.message);
    const round = await d.value.done;
    assert.equal(ranIn, place, 'the worker ran in the sibling');
    assert.deepEqual(round.workspace, { root: place, branch: 'feature', workBranch: 'rennet/feature' });
    assert.match(readFileSync(join(place, '.rennet', 'context', sessionId, 'work-order.md'), 'utf8'), /Work on `rennet\/feature`/);
    assert.equal(round.failure?.phase, 'report', 'no report harness: it stops after the successor is captured');
    const siblingTip = repo.head('rennet/feature');
    assert.notEqual(siblingTip, featureTip);
    assert.equal(round.range?.to, siblingTip);
    assert.equal(repo.head('feature'), featureTip, 'the reviewed branch has not moved');
    assert.equal(repo.git('rev-parse', '--abbrev-ref', 'HEAD'), 'feature');
    assert.equal(repo.read('a.txt'), 'one\ntwo\n', 'nor has the reviewer’s checkout');
    const successor = store.getPatchset(round.successorPatchsetId as string);
    assert.ok(successor);
    assert.equal(successor.headRef, 'feature', 'the successor is the review of feature');
    assert.equal(successor.head, siblingTip, 'at the work branch’s tip');
    assert.equal(store.getSession(sessionId)?.activePatchsetId, successor.id);
  });
});
