import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { bindWorkspace, listWorktrees, recordedBinding, WORKSPACE_EVENT_KIND, worktreePlacement, type WorkspaceStore } from '../../../host/rounds/workspace';
import type { RoundsWorkspaceMode } from '../../../protocol/rounds';
import type { Session } from '../../../protocol/session';
import { TestRepo } from '../../fixtures/gitRepo';

/**
 * `own` on real repositories: beside a checkout Rennet did not place, a sibling `rennet/<branch>`
 * forked from the branch's head in its own worktree, shared as it stands by a later session; where
 * Rennet's own worktree has the branch out, or no checkout has it, Rennet's branch worktree as under
 * `share`. The refusals name what stops them — an unreachable registration (with git's reason), a
 * placement that is a worktree on another ref (with the ref and the session there), the clone root —
 * and a bind that is refused records nothing.
 */

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function memoryStore(repoRoot: () => string) {
  const events: Array<{ sessionId: string; kind: string; payload: unknown }> = [];
  const ids = new Set<string>();
  const store: WorkspaceStore & { events: typeof events; track(id: string): void } = {
    events,
    track: (id) => ids.add(id),
    appendEvent: (sessionId, kind, payload) => events.push({ sessionId, kind, payload }),
    readEvents: (sessionId) => events.filter((e) => e.sessionId === sessionId),
    listSessions: () => [...ids].map((id) => ({ id, repoRoot: repoRoot() })),
  };
  return store;
}

describe('host/rounds/workspace: own — the sibling, Rennet’s worktree, and the refusals', function () {
  this.timeout(60_000);
  let repo: TestRepo;
  let data: string;
  let mine: string;
  let store: ReturnType<typeof memoryStore>;
  const now = () => new Date().toISOString();
  const session = (id: string, head: string, root = repo.dir): Session => {
    store.track(id);
    return { id, repoRoot: root, targetKey: `branch:${head}...main`, target: { kind: 'branch', head, base: 'main' }, activePatchsetId: null, patchsetIds: [], createdAt: 'x', updatedAt: 'x' };
  };
  const bind = (id: string, head: string, mode: RoundsWorkspaceMode, extra: { dryRun?: boolean } = {}) => bindWorkspace(store, session(id, head), { dataDir: data, now, mode, ...extra });
  const recorded = (id: string) => store.events.filter((e) => e.sessionId === id && e.kind === WORKSPACE_EVENT_KIND).length;

  before(() => {
    repo = new TestRepo();
    repo.write('a.txt', 'a\n');
    repo.commit('base');
    for (const b of ['other', 'third', 'fourth', 'fifth', 'sixth']) {
      repo.branch(b, 'main');
      repo.write(`${b}.txt`, `${b}\n`);
      repo.commit(b);
    }
    repo.branch('feature', 'main');
    repo.write('a.txt', 'b\n');
    repo.commit('b');
    data = realpathSync(mkdtempSync(join(tmpdir(), 'rennet-ws-own-')));
    // A checkout of the reviewer's own beside the clone, with `third` out (Rennet did not place it).
    mine = join(data, 'mine');
    repo.git('worktree', 'add', '--quiet', mine, 'third');
    store = memoryStore(() => repo.dir);
  });
  after(() => {
    repo.cleanup();
    rmSync(data, { recursive: true, force: true });
  });

  it('own, with the reviewer’s checkout on the branch: a dry run names the sibling’s placement and makes nothing; the bind forks rennet/feature from the branch’s head into its own worktree', async () => {
    const place = worktreePlacement(data, repo.dir, 'rennet/feature');
    const featureTip = repo.head('feature');
    const status = repo.git('status', '--porcelain');
    const dry = await bind('s-own', 'feature', 'own', { dryRun: true });
    assert.ok(dry.ok, dry.ok ? '' : dry.error.message);
    assert.deepEqual(dry.value, { root: place, branch: 'feature', kind: 'sibling', workBranch: 'rennet/feature' });
    assert.ok(!existsSync(place), 'a dry run adds no worktree');
    assert.equal(repo.git('for-each-ref', 'refs/heads/rennet/'), '', 'and no branch');
    assert.equal(recorded('s-own'), 0, 'and records nothing');

    const bound = await bind('s-own', 'feature', 'own');
    assert.ok(bound.ok, bound.ok ? '' : bound.error.message);
    assert.deepEqual(bound.value, { root: place, branch: 'feature', kind: 'sibling', workBranch: 'rennet/feature' });
    assert.equal(repo.head('rennet/feature'), featureTip, 'forked from the branch’s head');
    const listed = await listWorktrees(repo.dir);
    assert.ok(listed.ok && listed.value.some((w) => w.path === place && w.branch === 'rennet/feature'), JSON.stringify(listed));
    assert.equal(repo.git('rev-parse', '--abbrev-ref', 'HEAD'), 'feature', 'the reviewer’s checkout keeps its branch');
    assert.equal(repo.head('feature'), featureTip, 'and the branch does not move');
    assert.equal(repo.git('status', '--porcelain'), status);
    assert.throws(() => repo.git('config', '--get', 'branch.rennet/feature.merge'), 'no upstream is written');
    assert.deepEqual(recordedBinding(store, 's-own'), bound.value, 'the work branch is recorded with the binding');

    // The same question under share binds the reviewer's checkout: the mode is what decides.
    const shared = await bind('s-share', 'feature', 'share');
    assert.ok(shared.ok);
    assert.deepEqual(shared.value, { root: repo.dir, branch: 'feature', kind: 'share' });
  });

  it('a second session takes the sibling as it stands: its commits, its untracked file and its index untouched', async () => {
    const place = worktreePlacement(data, repo.dir, 'rennet/feature');
    const sib = new TestRepo(place, false);
    sib.write('round.txt', 'from a round\n');
    sib.git('add', 'round.txt');
    sib.git('-c', 'user.name=T', '-c', 'user.email=t@example.com', 'commit', '-qm', 'a round');
    sib.write('scratch.txt', 'untracked\n');
    sib.write('a.txt', 'staged edit\n');
    sib.git('add', 'a.txt');
    const tip = sib.head();
    const before = sib.git('status', '--porcelain');
    const second = await bind('s-own-2', 'feature', 'own');
    assert.ok(second.ok, second.ok ? '' : second.error.message);
    assert.deepEqual(second.value, { root: place, branch: 'feature', kind: 'sibling', workBranch: 'rennet/feature' });
    assert.equal(sib.head(), tip);
    assert.equal(sib.git('status', '--porcelain'), before);
    assert.equal(repo.git('for-each-ref', '--format=%(refname)', 'refs/heads/rennet/'), 'refs/heads/rennet/feature', 'one sibling per repository and branch');
    sib.git('reset', '--quiet', '--hard');
    rmSync(join(place, 'scratch.txt'));
  });

  it('own, with no checkout on the branch: Rennet’s branch worktree, no sibling; and own again where Rennet’s worktree has it out binds there', async () => {
    const place = worktreePlacement(data, repo.dir, 'other');
    const bound = await bind('s-other', 'other', 'own');
    assert.ok(bound.ok, bound.ok ? '' : bound.error.message);
    assert.deepEqual(bound.value, { root: place, branch: 'other', kind: 'worktree' });
    const again = await bind('s-other-2', 'other', 'own');
    assert.ok(again.ok, again.ok ? '' : again.error.message);
    assert.deepEqual(again.value, { root: place, branch: 'other', kind: 'worktree' }, 'Rennet’s own worktree is not the reviewer’s tree: no sibling is forked away from it');
    assert.equal(repo.git('for-each-ref', 'refs/heads/rennet/other'), '');
  });

  it('a registration git cannot reach refuses the bind, naming the path and git’s reason; nothing is recorded', async () => {
    // The sibling of `third` (the reviewer's checkout `mine` has it out), then its directory lost.
    const sibling = await bind('s-third', 'third', 'own');
    assert.ok(sibling.ok && sibling.value.kind === 'sibling', JSON.stringify(sibling));
    rmSync(sibling.value.root, { recursive: true, force: true });
    const refused = await bind('s-third-2', 'third', 'own');
    assert.ok(!refused.ok);
    assert.match(refused.error.message, new RegExp(`${escape(sibling.value.root)}.*git cannot reach \\(gitdir file points to non-existent location\\)`));
    assert.equal(recorded('s-third-2'), 0);
    assert.ok((await listWorktrees(repo.dir)).ok, 'nothing was pruned');
    assert.match(repo.git('worktree', 'list', '--porcelain'), new RegExp(`worktree ${escape(sibling.value.root)}\\n`));

    // Rennet's branch worktree, lost the same way.
    const own = await bind('s-fourth', 'fourth', 'share');
    assert.ok(own.ok && own.value.kind === 'worktree');
    rmSync(own.value.root, { recursive: true, force: true });
    const lost = await bind('s-fourth-2', 'fourth', 'own');
    assert.ok(!lost.ok);
    assert.match(lost.error.message, new RegExp(`${escape(own.value.root)}.*git cannot reach \\(gitdir file points to non-existent location\\)`));
    assert.equal(recorded('s-fourth-2'), 0);
  });

  it('a placement that is already a worktree on another ref refuses, naming the path, the ref and the session working there; nothing is recorded', async () => {
    const bound = await bind('s-fifth', 'fifth', 'share');
    assert.ok(bound.ok && bound.value.kind === 'worktree');
    const wt = new TestRepo(bound.value.root, false);
    wt.git('checkout', '--quiet', '-b', 'stray');
    const refused = await bind('s-fifth-2', 'fifth', 'share');
    assert.ok(!refused.ok);
    assert.match(
      refused.error.message,
      new RegExp(`^${escape(bound.value.root)}, where Rennet places its worktree of fifth, is already a worktree on stray \\(the review session s-fifth works there\\)`),
    );
    assert.equal(recorded('s-fifth-2'), 0);

    // The sibling's placement, taken by a worktree of another branch: refused whatever is on it.
    const place = worktreePlacement(data, repo.dir, 'rennet/sixth');
    mkdirSync(dirname(place), { recursive: true });
    repo.git('worktree', 'add', '--quiet', '-b', 'not-a-sibling', place, 'main');
    new TestRepo(mine, false).git('checkout', '--quiet', 'sixth');
    const sibling = await bind('s-sixth', 'sixth', 'own');
    assert.ok(!sibling.ok);
    assert.match(sibling.error.message, new RegExp(`^${escape(place)}, where Rennet places its worktree of rennet/sixth, is already a worktree on not-a-sibling`));
    assert.equal(recorded('s-sixth'), 0);
    assert.equal(repo.git('for-each-ref', 'refs/heads/rennet/sixth'), '', 'no sibling branch was left behind');
  });

  it('a recorded sibling that lost its work branch refuses the round, naming both', async () => {
    const place = worktreePlacement(data, repo.dir, 'rennet/feature');
    const sib = new TestRepo(place, false);
    sib.git('checkout', '--quiet', '--detach');
    const refused = await bind('s-own', 'feature', 'own');
    assert.ok(!refused.ok);
    assert.match(refused.error.message, new RegExp(`${escape(place)} has a detached HEAD out, not rennet/feature`));
    sib.git('checkout', '--quiet', 'rennet/feature');
    assert.ok((await bind('s-own', 'feature', 'own')).ok);
  });
});

describe('host/rounds/workspace: the clone root is never Rennet’s branch worktree', function () {
  this.timeout(60_000);
  let data: string;
  after(() => rmSync(data, { recursive: true, force: true }));

  it('where the placement of a branch is the clone itself, the bind refuses naming it, and records nothing', async () => {
    data = realpathSync(mkdtempSync(join(tmpdir(), 'rennet-ws-clone-')));
    // The session reads the repository through a linked worktree; Rennet's placement for `feature`
    // under this data directory happens to be where the clone lives.
    const linked = join(data, 'linked');
    const place = worktreePlacement(data, linked, 'feature');
    mkdirSync(place, { recursive: true });
    const clone = new TestRepo(place);
    clone.write('a.txt', 'a\n');
    clone.commit('base');
    clone.branch('feature');
    clone.write('a.txt', 'b\n');
    clone.commit('b');
    clone.branch('elsewhere', 'main');
    clone.checkout('main');
    clone.git('worktree', 'add', '--quiet', linked, 'elsewhere');
    const store = memoryStore(() => linked);
    const s: Session = {
      id: 's-clone',
      repoRoot: linked,
      targetKey: 'branch:feature...main',
      target: { kind: 'branch', head: 'feature', base: 'main' },
      activePatchsetId: null,
      patchsetIds: [],
      createdAt: 'x',
      updatedAt: 'x',
    };
    for (const mode of ['share', 'own'] as const) {
      const refused = await bindWorkspace(store, s, { dataDir: data, now: () => 'now', mode });
      assert.ok(!refused.ok, mode);
      assert.match(refused.error.message, new RegExp(`^${escape(place)} is this repository's clone root: Rennet never uses it as its worktree of feature`));
    }
    assert.equal(store.events.length, 0, 'nothing recorded');
    assert.equal(clone.git('rev-parse', '--abbrev-ref', 'HEAD'), 'main', 'the clone keeps its branch');
  });
});
