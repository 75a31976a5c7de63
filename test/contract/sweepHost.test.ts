import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { landWorkBranch } from '../../host/rounds/landing';
import { ARCHIVED_EVENT_KIND, bindWorkspace, recordedBinding } from '../../host/rounds/workspace';
import { ReviewService } from '../../host/service';
import { Store } from '../../host/store';
import { HostHello } from '../../protocol/rpc';
import { TestRepo } from '../fixtures/gitRepo';
import { startHost, type HostUnderTest } from './hostProcess';

/**
 * Starting the built host (dist/host.js) runs the daemon-start sweep once, on its own, before any
 * request binds: a store left holding an archived review whose landed sibling was never collected
 * (here written in-process, then closed) finds that sibling gone once the host has started, the
 * stderr log saying what it did, and the session's record untouched; a sibling ahead of its branch
 * is kept, the log saying how far ahead.
 */
describe('the host process sweeps at start (built dist/host.js)', function () {
  this.timeout(120_000);
  let repo: TestRepo;
  let dir: string;
  let host: HostUnderTest | null = null;

  before(() => {
    repo = new TestRepo();
    repo.write('notes.txt', 'one\n');
    repo.commit('base');
    repo.branch('ahead');
    repo.write('ahead.txt', 'ahead\n');
    repo.commit('ahead');
    repo.checkout('main');
    repo.branch('feature');
    repo.write('notes.txt', 'one\ntwo\n');
    repo.commit('two');
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'rennet-sweep-host-')));
  });
  after(async () => {
    await host?.stop();
    repo.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('collects the orphan sibling its branch contains and keeps the one ahead, logging both', async () => {
    const storeDir = join(dir, 'store');
    const store = await Store.open(storeDir);
    let landed: { id: string; root: string };
    let ahead: { id: string; root: string };
    try {
      const service = new ReviewService({ store });
      const sibling = async (head: string) => {
        repo.checkout(head); // the reviewer's clone has the branch out: own forks a sibling
        const opened = await service.openReview({ repo: repo.dir, target: { kind: 'branch', head, base: 'main' } });
        assert.ok(opened.ok, opened.ok ? '' : opened.error.message);
        const session = opened.value.snapshot.session;
        const bound = await bindWorkspace(store, session, { dataDir: store.dir, now: () => new Date().toISOString(), mode: 'own' });
        assert.ok(bound.ok && bound.value.kind === 'sibling', JSON.stringify(bound));
        const wt = new TestRepo(bound.value.root, false);
        wt.write('notes.txt', `${head} round\n`);
        wt.git('commit', '-qam', `round on ${head}`);
        return { session, root: bound.value.root };
      };
      const a = await sibling('ahead');
      ahead = { id: a.session.id, root: a.root };
      const f = await sibling('feature');
      assert.ok((await landWorkBranch(store, f.session)).ok);
      landed = { id: f.session.id, root: f.root };
      for (const id of [landed.id, ahead.id]) store.appendEvent(id, ARCHIVED_EVENT_KIND, { at: 'x' }, new Date().toISOString());
    } finally {
      store.close();
    }
    assert.ok(existsSync(landed.root) && existsSync(ahead.root));

    host = await startHost(storeDir);
    const hello = await host.connection.sendRequest(HostHello, {});
    assert.equal(hello.sessions, 2);
    const deadline = Date.now() + 60_000;
    while (!host.stderr().includes('start sweep: done') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const log = host.stderr();
    assert.match(log, /rennet host: start sweep: done: 1 repository, 1 sibling collected, 1 kept, nothing pruned/, log);
    assert.match(log, new RegExp(`start sweep: ${repo.dir}: collected rennet/feature \\(its tip [0-9a-f]{12} is in feature\\) and its worktree ${landed.root}`));
    assert.match(log, new RegExp(`start sweep: ${repo.dir}: kept rennet/ahead and its worktree ${ahead.root}: it is 1 commit ahead of ahead`));
    assert.ok(!existsSync(landed.root), 'the landed sibling’s worktree is gone');
    assert.equal(repo.git('for-each-ref', '--format=%(refname:short)', 'refs/heads/rennet/'), 'rennet/ahead', 'its branch too; the one ahead stays');
    assert.ok(existsSync(ahead.root));
    await host.stop();
    host = null;

    const after = await Store.open(storeDir);
    try {
      assert.equal(recordedBinding(after, landed.id)?.root, landed.root, 'the sweep clears no session record');
    } finally {
      after.close();
    }
  });
});
