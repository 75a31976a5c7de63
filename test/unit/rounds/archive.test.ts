import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { archiveSession } from '../../../host/rounds/archive';
import { landWorkBranch } from '../../../host/rounds/landing';
import { bindWorkspace, isArchived, listWorktrees, recordedBinding } from '../../../host/rounds/workspace';
import type { Session } from '../../../protocol/session';
import { SiblingWorld } from '../../fixtures/siblingWorld';

/**
 * Archiving a review bound on a sibling, on real repositories: the sibling (worktree and branch) is
 * collected only when the branch contains its tip — locally, or through origin's ref of it (where
 * `git branch -d` alone would refuse, the proven reachability lets `-D` finish) — and the session's
 * recorded workspace is cleared; a sibling with commits the branch lacks is kept with how far ahead
 * it is; a sibling another live session is bound to is never collected.
 */
describe('host/rounds/archive: collecting a sibling', function () {
  this.timeout(60_000);
  const worlds: SiblingWorld[] = [];
  after(() => worlds.forEach((w) => w.cleanup()));
  const world = () => {
    const w = new SiblingWorld();
    worlds.push(w);
    return w;
  };
  async function sibling(w: SiblingWorld, id = 's-1'): Promise<{ session: Session; root: string }> {
    const session = w.session(id);
    const bound = await bindWorkspace(w.store, session, { dataDir: w.data, now: () => 'now', mode: 'own' });
    assert.ok(bound.ok && bound.value.kind === 'sibling', JSON.stringify(bound));
    return { session, root: bound.value.root };
  }
  const siblingRefs = (w: SiblingWorld) => w.repo.git('for-each-ref', '--format=%(refname)', 'refs/heads/rennet/');
  const registered = async (w: SiblingWorld, root: string) => {
    const listed = await listWorktrees(w.repo.dir);
    assert.ok(listed.ok);
    return listed.value.some((e) => e.path === root);
  };

  it('a landed sibling: its worktree and branch removed, the recorded workspace cleared', async () => {
    const w = world();
    const { session, root } = await sibling(w);
    w.commitIn(root, 'a.txt', 'one\ntwo\nthree\n', 'round 1');
    assert.ok((await landWorkBranch(w.store, session)).ok);
    const archived = await archiveSession(w.store, session, { now: () => 'now' });
    assert.ok(archived.ok, archived.ok ? '' : archived.error.message);
    assert.equal(archived.value.collection.outcome, 'collected');
    assert.ok(!existsSync(root));
    assert.equal(await registered(w, root), false);
    assert.equal(siblingRefs(w), '');
    assert.equal(recordedBinding(w.store, session.id), null, 'the next use binds again');
    assert.equal(isArchived(w.store, session.id), true);
  });

  it('a sibling pushed under the branch’s name but not landed: reachable through origin/feature, so collected (-d alone would refuse)', async () => {
    const w = world();
    const { session, root } = await sibling(w);
    w.commitIn(root, 'a.txt', 'one\ntwo\nthree\n', 'round 1');
    w.repo.git('push', '-q', 'origin', 'refs/heads/rennet/feature:refs/heads/feature');
    const featureTip = w.repo.head('feature');
    assert.throws(() => w.repo.git('merge-base', '--is-ancestor', 'rennet/feature', 'HEAD'), 'the clone’s HEAD does not contain it: git branch -d would refuse');
    const archived = await archiveSession(w.store, session, { now: () => 'now' });
    assert.ok(archived.ok, archived.ok ? '' : archived.error.message);
    assert.equal(archived.value.collection.outcome, 'collected', archived.value.message);
    assert.match(archived.value.message, /is in origin\/feature/);
    assert.ok(!existsSync(root));
    assert.equal(siblingRefs(w), '');
    assert.equal(w.repo.head('feature'), featureTip, 'the local branch did not move');
  });

  it('a sibling with commits the branch lacks keeps its worktree and branch, and says how far ahead it is', async () => {
    const w = world();
    const { session, root } = await sibling(w);
    w.commitIn(root, 'a.txt', 'one\ntwo\nthree\n', 'round 1');
    const tip = w.commitIn(root, 'a.txt', 'one\ntwo\nthree\nfour\n', 'round 2');
    const archived = await archiveSession(w.store, session, { now: () => 'now' });
    assert.ok(archived.ok, archived.ok ? '' : archived.error.message);
    const c = archived.value.collection;
    assert.equal(c.outcome, 'kept');
    assert.equal(c.outcome === 'kept' ? c.ahead : -1, 2);
    assert.match(archived.value.message, /it is 2 commits ahead of feature/);
    assert.ok(existsSync(root));
    assert.equal(await registered(w, root), true);
    assert.equal(w.repo.head('rennet/feature'), tip);
    assert.ok(recordedBinding(w.store, session.id), 'the binding stays: its worktree is still there');
  });

  it('a sibling another live session is bound to is not collected, even when reachable; once that one is archived too, it is', async () => {
    const w = world();
    const first = await sibling(w, 's-1');
    const second = await sibling(w, 's-2');
    assert.equal(second.root, first.root, 'the two share the sibling');
    w.commitIn(first.root, 'a.txt', 'one\ntwo\nthree\n', 'round 1');
    assert.ok((await landWorkBranch(w.store, first.session)).ok);
    const kept = await archiveSession(w.store, first.session, { now: () => 'now' });
    assert.ok(kept.ok);
    assert.equal(kept.value.collection.outcome, 'kept');
    assert.match(kept.value.message, /the review session s-2 is still bound to it/);
    assert.ok(existsSync(first.root));
    assert.equal(siblingRefs(w), 'refs/heads/rennet/feature');
    const collected = await archiveSession(w.store, second.session, { now: () => 'now' });
    assert.ok(collected.ok);
    assert.equal(collected.value.collection.outcome, 'collected', collected.value.message);
    assert.ok(!existsSync(first.root));
    assert.equal(siblingRefs(w), '');
  });
});
