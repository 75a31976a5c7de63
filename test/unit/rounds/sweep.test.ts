import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { landWorkBranch } from '../../../host/rounds/landing';
import { sweepAtStart } from '../../../host/rounds/sweep';
import { ARCHIVED_EVENT_KIND, bindWorkspace, listWorktrees, recordedBinding, type WorkspaceStore } from '../../../host/rounds/workspace';
import type { Session } from '../../../protocol/session';
import { SiblingWorld } from '../../fixtures/siblingWorld';

/**
 * The daemon-start sweep on real repositories (SiblingWorld: a clone with `feature` out, an origin,
 * an in-memory session log). A session is "gone" here the way a store holds it after an archive
 * that collected nothing: `session.archived` on its log, its binding still recorded. The sweep
 * collects an orphan sibling its branch contains, keeps one ahead (saying by how much), never
 * touches a live session's sibling, prunes unreachable registrations that are all Rennet's, holds
 * the prune naming a registration that is not, and clears no session record; an archived session
 * used again whose recorded root is gone binds afresh.
 */
describe('host/rounds/sweep: the daemon-start sweep', function () {
  this.timeout(60_000);
  const worlds: SiblingWorld[] = [];
  after(() => worlds.forEach((w) => w.cleanup()));
  const world = () => {
    const w = new SiblingWorld();
    worlds.push(w);
    return w;
  };
  const sweep = async (w: SiblingWorld) => {
    const lines: string[] = [];
    const results = await sweepAtStart({ ...w.store, listSessions: w.store.listSessions! }, { dataDir: w.data, log: (level, line) => lines.push(`${level} ${line}`) });
    return { results, lines };
  };
  async function bind(w: SiblingWorld, session: Session, mode: 'own' | 'share') {
    const bound = await bindWorkspace(w.store, session, { dataDir: w.data, now: () => 'now', mode });
    assert.ok(bound.ok, bound.ok ? '' : bound.error.message);
    return bound.value;
  }
  const archive = (store: WorkspaceStore, id: string) => store.appendEvent(id, ARCHIVED_EVENT_KIND, { at: 'now' }, 'now');
  const siblingRefs = (w: SiblingWorld) => w.repo.git('for-each-ref', '--format=%(refname:short)', 'refs/heads/rennet/');
  const registered = async (w: SiblingWorld) => {
    const listed = await listWorktrees(w.repo.dir);
    assert.ok(listed.ok);
    return listed.value.map((e) => e.path);
  };

  it('collects an orphan sibling its branch contains (worktree and branch), clears no record; the archived session used again binds afresh', async () => {
    const w = world();
    const session = w.session('s-1');
    const bound = await bind(w, session, 'own');
    assert.equal(bound.kind, 'sibling');
    const tip = w.commitIn(bound.root, 'a.txt', 'one\ntwo\nthree\n', 'round 1');
    assert.ok((await landWorkBranch(w.store, session)).ok);
    archive(w.store, 's-1');

    const { results, lines } = await sweep(w);
    assert.deepEqual(
      results.map((r) => r.collected),
      [['rennet/feature']],
    );
    assert.ok(!existsSync(bound.root), 'the worktree is removed');
    assert.ok(!(await registered(w)).includes(bound.root));
    assert.equal(siblingRefs(w), '', 'and its branch');
    assert.ok(
      lines.some((l) => l === `info start sweep: ${w.repo.dir}: collected rennet/feature (its tip ${tip.slice(0, 12)} is in feature) and its worktree ${bound.root}`),
      lines.join('\n'),
    );
    assert.deepEqual(recordedBinding(w.store, 's-1'), bound, 'the sweep clears no session record');

    // Un-archiving: the recorded root is gone, so the bind starts afresh rather than answering a missing directory.
    const again = await bindWorkspace(w.store, session, { dataDir: w.data, now: () => 'now', mode: 'own' });
    assert.ok(again.ok, again.ok ? '' : again.error.message);
    assert.deepEqual(again.value, bound, 'a new sibling at the same placement');
    assert.ok(existsSync(bound.root));
    assert.equal(w.repo.head('rennet/feature'), w.repo.head('feature'), 'forked from the branch’s head again');
    const cleared = w.events.filter((e) => e.sessionId === 's-1' && (e.payload as { cleared?: boolean }).cleared === true);
    assert.equal(cleared.length, 1, 'the stale record was cleared once');
  });

  it('keeps an orphan sibling ahead of its branch — worktree and branch — and says how far ahead', async () => {
    const w = world();
    const session = w.session('s-1');
    const bound = await bind(w, session, 'own');
    w.commitIn(bound.root, 'a.txt', 'one\ntwo\nthree\n', 'round 1');
    w.commitIn(bound.root, 'a.txt', 'one\ntwo\nthree\nfour\n', 'round 2');
    archive(w.store, 's-1');
    const { results, lines } = await sweep(w);
    assert.deepEqual(results[0]?.collected, []);
    assert.deepEqual(results[0]?.kept, [{ workBranch: 'rennet/feature', worktree: bound.root, reason: 'it is 2 commits ahead of feature, which does not contain its tip (land it or push it first)' }]);
    assert.ok(
      lines.some((l) => l.includes(`kept rennet/feature and its worktree ${bound.root}: it is 2 commits ahead of feature`)),
      lines.join('\n'),
    );
    assert.ok(existsSync(bound.root));
    assert.equal(siblingRefs(w), 'rennet/feature');
  });

  it('a sibling pushed under the branch’s name is reachable through origin/feature and collected (git branch -d alone would refuse)', async () => {
    const w = world();
    const session = w.session('s-1');
    const bound = await bind(w, session, 'own');
    w.commitIn(bound.root, 'a.txt', 'one\ntwo\nthree\n', 'round 1');
    w.repo.git('push', '-q', 'origin', 'refs/heads/rennet/feature:refs/heads/feature');
    archive(w.store, 's-1');
    const { results, lines } = await sweep(w);
    assert.deepEqual(results[0]?.collected, ['rennet/feature'], lines.join('\n'));
    assert.ok(lines.some((l) => l.includes('is in origin/feature')));
    assert.ok(!existsSync(bound.root));
  });

  it('never touches a sibling a live session is bound to, though its tip is in the branch', async () => {
    const w = world();
    const bound = await bind(w, w.session('s-1'), 'own');
    await bind(w, w.session('s-2'), 'own');
    archive(w.store, 's-1'); // s-2 is still live and shares the sibling
    const { results } = await sweep(w);
    assert.deepEqual(results[0]?.collected, []);
    assert.equal(results[0]?.kept[0]?.reason, 'the live review session s-2 is bound to it');
    assert.ok(existsSync(bound.root));
    assert.equal(siblingRefs(w), 'rennet/feature');
  });

  it('prunes unreachable registrations that are all Rennet’s: its branch worktree lost, and a lost sibling whose branch then goes too', async () => {
    const w = world();
    w.repo.branch('other', 'main');
    w.repo.checkout('feature');
    const worktree = await bind(w, w.session('s-other', 'other'), 'share');
    assert.equal(worktree.kind, 'worktree');
    const sibling = await bind(w, w.session('s-sib'), 'own');
    archive(w.store, 's-other');
    archive(w.store, 's-sib');
    rmSync(worktree.root, { recursive: true, force: true });
    rmSync(sibling.root, { recursive: true, force: true });
    const { results, lines } = await sweep(w);
    assert.equal(results[0]?.pruned, true, lines.join('\n'));
    assert.ok(
      lines.some((l) => l === `info start sweep: ${w.repo.dir}: pruned the worktree registrations git cannot reach: ${worktree.root}, ${sibling.root}`),
      lines.join('\n'),
    );
    assert.deepEqual(await registered(w), [w.repo.dir]);
    assert.deepEqual(results[0]?.collected, ['rennet/feature']);
    assert.equal(siblingRefs(w), '');
    assert.equal(w.repo.git('for-each-ref', '--format=%(refname:short)', 'refs/heads/other'), 'other', 'the reviewed branch itself stays');
  });

  it('holds the prune when an unreachable registration is not Rennet’s, naming it; Rennet’s lost registrations stay too', async () => {
    const w = world();
    w.repo.branch('other', 'main');
    w.repo.branch('mine', 'main');
    w.repo.checkout('feature');
    const worktree = await bind(w, w.session('s-other', 'other'), 'share');
    archive(w.store, 's-other');
    const mine = join(w.data, 'my-own-checkout');
    w.repo.git('worktree', 'add', '--quiet', mine, 'mine');
    rmSync(worktree.root, { recursive: true, force: true });
    rmSync(mine, { recursive: true, force: true });
    const { results, lines } = await sweep(w);
    assert.equal(results[0]?.pruned, false);
    const held = lines.find((l) => l.includes('no git worktree prune this pass'));
    assert.ok(held, lines.join('\n'));
    assert.match(held, new RegExp(`^warn start sweep: .*: no git worktree prune this pass; held by ${mine.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(not Rennet's`));
    assert.ok(!held.includes(worktree.root), 'Rennet’s own registration holds nothing');
    assert.deepEqual((await registered(w)).sort(), [w.repo.dir, worktree.root, mine].sort(), 'nothing was pruned');
  });

  it('holds the prune when a live session claims an unreachable Rennet registration', async () => {
    const w = world();
    w.repo.branch('other', 'main');
    w.repo.checkout('feature');
    const worktree = await bind(w, w.session('s-other', 'other'), 'share');
    rmSync(worktree.root, { recursive: true, force: true });
    const { results, lines } = await sweep(w);
    assert.equal(results[0]?.pruned, false);
    assert.ok(
      lines.some((l) => l.includes(`held by ${worktree.root} (the live review session s-other claims it)`)),
      lines.join('\n'),
    );
    assert.ok((await registered(w)).includes(worktree.root));
  });
});
