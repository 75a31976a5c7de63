import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ARCHIVED_EVENT_KIND, bindWorkspace, listWorktrees, WORKSPACE_EVENT_KIND } from '../../../host/rounds/workspace';
import { TestRepo } from '../../fixtures/gitRepo';
import { SiblingWorld } from '../../fixtures/siblingWorld';

/**
 * The drift repair, on real repositories: Rennet's worktree of a branch that has drifted onto
 * another branch, with no live session bound there, is checked back out to the branch by the
 * branch bind; git's refusal (an uncommitted change the switch would overwrite) is the only thing
 * that stops it, and comes back in git's words with nothing recorded. A drifted worktree a live
 * session is bound to, and a detached one, stay refused; so does an occupied sibling placement.
 */
describe('host/rounds/workspace: the drift repair of Rennet’s branch worktree', function () {
  this.timeout(60_000);
  const worlds: SiblingWorld[] = [];
  after(() => worlds.forEach((w) => w.cleanup()));

  /** A world with `other` (Rennet's worktree of it placed by s-1, then archived) drifted onto `stray`, which changed a.txt. */
  async function drifted() {
    const w = new SiblingWorld();
    worlds.push(w);
    w.repo.branch('other', 'main');
    w.repo.branch('stray', 'main');
    w.repo.write('a.txt', 'stray\n');
    w.repo.commit('stray');
    w.repo.checkout('feature');
    const first = await bindWorkspace(w.store, w.session('s-1', 'other'), { dataDir: w.data, now: () => 'now' });
    assert.ok(first.ok && first.value.kind === 'worktree', JSON.stringify(first));
    w.store.appendEvent('s-1', ARCHIVED_EVENT_KIND, { at: 'now' }, 'now');
    const wt = new TestRepo(first.value.root, false);
    wt.git('checkout', '--quiet', 'stray');
    return { w, root: first.value.root, wt };
  }
  const recorded = (w: SiblingWorld, id: string) => w.events.filter((e) => e.sessionId === id && e.kind === WORKSPACE_EVENT_KIND).length;

  it('checks the drifted worktree back out to the branch and binds there, saying so', async () => {
    const { w, root, wt } = await drifted();
    writeFileSync(join(root, 'untracked.txt'), 'rides along\n');
    const lines: string[] = [];
    const dry = await bindWorkspace(w.store, w.session('s-2', 'other'), { dataDir: w.data, now: () => 'now', dryRun: true });
    assert.ok(dry.ok && dry.value.root === root);
    assert.equal(wt.git('rev-parse', '--abbrev-ref', 'HEAD'), 'stray', 'a dry run checks nothing out');
    const bound = await bindWorkspace(w.store, w.session('s-2', 'other'), { dataDir: w.data, now: () => 'now', log: (_l, line) => lines.push(line) });
    assert.ok(bound.ok, bound.ok ? '' : bound.error.message);
    assert.deepEqual(bound.value, { root, branch: 'other', kind: 'worktree' });
    assert.equal(wt.git('rev-parse', '--abbrev-ref', 'HEAD'), 'other');
    assert.equal(wt.read('a.txt'), 'one\n', 'other’s files are out');
    assert.equal(wt.read('untracked.txt'), 'rides along\n', 'untracked work rides along as git allows');
    assert.equal(w.repo.git('rev-parse', '--abbrev-ref', 'HEAD'), 'feature', 'the reviewer’s clone is untouched');
    assert.deepEqual(lines, [`session s-2: Rennet's worktree ${root} had drifted onto stray; other is checked back out there`]);
    assert.equal(recorded(w, 's-2'), 1);
  });

  it('git’s refusal (an uncommitted change the switch would overwrite) comes back verbatim; nothing changes or is recorded', async () => {
    const { w, root, wt } = await drifted();
    writeFileSync(join(root, 'a.txt'), 'my edit on stray\n');
    const refused = await bindWorkspace(w.store, w.session('s-2', 'other'), { dataDir: w.data, now: () => 'now' });
    assert.ok(!refused.ok);
    assert.equal(refused.error.code, 'git-failed');
    assert.match(
      refused.error.message,
      /Rennet's worktree of other, has drifted onto stray, and git refused to check other back out there:\n[^]*Your local changes to the following files would be overwritten by checkout:\n\s+a\.txt/,
    );
    assert.equal(wt.git('rev-parse', '--abbrev-ref', 'HEAD'), 'stray');
    assert.equal(wt.read('a.txt'), 'my edit on stray\n');
    assert.equal(recorded(w, 's-2'), 0);
  });

  it('a drifted worktree a live session is bound to stays refused, and so does a detached one', async () => {
    const { w, root, wt } = await drifted();
    // A live session that shares the worktree as it now stands (Rennet's worktree of stray).
    const live = await bindWorkspace(w.store, w.session('s-live', 'stray'), { dataDir: w.data, now: () => 'now' });
    assert.ok(live.ok && live.value.root === root, JSON.stringify(live));
    const refused = await bindWorkspace(w.store, w.session('s-2', 'other'), { dataDir: w.data, now: () => 'now' });
    assert.ok(!refused.ok);
    assert.match(refused.error.message, /is already a worktree on stray \(the review session s-live works there\)/);
    assert.equal(wt.git('rev-parse', '--abbrev-ref', 'HEAD'), 'stray');

    w.store.appendEvent('s-live', ARCHIVED_EVENT_KIND, { at: 'now' }, 'now');
    wt.git('checkout', '--quiet', '--detach');
    const detached = await bindWorkspace(w.store, w.session('s-3', 'other'), { dataDir: w.data, now: () => 'now' });
    assert.ok(!detached.ok);
    assert.match(detached.error.message, /is already a worktree on a detached HEAD/);
    const listed = await listWorktrees(w.repo.dir);
    assert.ok(listed.ok && listed.value.some((e) => e.path === root && e.detached));
  });
});
