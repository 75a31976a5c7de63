import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bindWorkspace, listWorktrees, WORKSPACE_EVENT_KIND, worktreePlacement } from '../../../host/rounds/workspace';
import type { Session } from '../../../protocol/session';
import { TestRepo } from '../../fixtures/gitRepo';

/**
 * The session's one workspace, on real repositories: shared when a checkout has the branch out,
 * a Rennet worktree under the data directory when none has; decided once and recorded; a dry run
 * (reading what a round would do) makes and records nothing; a workspace that lost the branch
 * refuses, naming both.
 */
describe('host/rounds/workspace: one workspace per session, asked of git', () => {
  let repo: TestRepo;
  let data: string;
  const events: Array<{ sessionId: string; kind: string; payload: unknown }> = [];
  const store = {
    appendEvent: (sessionId: string, kind: string, payload: unknown) => events.push({ sessionId, kind, payload }),
    readEvents: (sessionId: string) => events.filter((e) => e.sessionId === sessionId),
  };
  const session = (id: string, head: string): Session =>
    ({ id, repoRoot: repo.dir, target: { kind: 'branch', head, base: 'main' }, activePatchsetId: null, createdAt: 'x', updatedAt: 'x' }) as unknown as Session;
  const now = () => new Date().toISOString();

  before(() => {
    repo = new TestRepo();
    repo.write('a.txt', 'a\n');
    repo.commit('base');
    repo.branch('feature');
    repo.write('a.txt', 'b\n');
    repo.commit('b');
    repo.branch('other');
    repo.checkout('feature');
    data = realpathSync(mkdtempSync(join(tmpdir(), 'rennet-ws-')));
  });
  after(() => {
    repo.cleanup();
    rmSync(data, { recursive: true, force: true });
  });

  it('shares the checkout that has the branch out, and records it once', async () => {
    const bound = await bindWorkspace(store, session('s-1', 'feature'), { dataDir: data, now });
    assert.ok(bound.ok);
    assert.deepEqual(bound.value, { root: repo.dir, branch: 'feature', kind: 'share' });
    assert.equal(events.filter((e) => e.sessionId === 's-1' && e.kind === WORKSPACE_EVENT_KIND).length, 1);
    const again = await bindWorkspace(store, session('s-1', 'feature'), { dataDir: data, now });
    assert.ok(again.ok && again.value.root === repo.dir);
    assert.equal(events.filter((e) => e.sessionId === 's-1').length, 1, 'the recorded binding is read, not decided again');
  });

  it('a branch no checkout has out: a dry run names the placement and makes nothing; a bind adds Rennet’s worktree there', async () => {
    const place = worktreePlacement(data, repo.dir, 'other');
    const dry = await bindWorkspace(store, session('s-2', 'other'), { dataDir: data, now, dryRun: true });
    assert.ok(dry.ok);
    assert.deepEqual(dry.value, { root: place, branch: 'other', kind: 'worktree' });
    assert.ok(!existsSync(place), 'a dry run adds no worktree');
    assert.equal(events.filter((e) => e.sessionId === 's-2').length, 0, 'and records nothing');
    const bound = await bindWorkspace(store, session('s-2', 'other'), { dataDir: data, now });
    assert.ok(bound.ok, bound.ok ? '' : bound.error.message);
    assert.equal(bound.value.kind, 'worktree');
    const listed = await listWorktrees(repo.dir);
    assert.ok(listed.ok && listed.value.some((w) => w.path === place && w.branch === 'other'), JSON.stringify(listed));
    assert.equal(repo.git('rev-parse', '--abbrev-ref', 'HEAD'), 'feature', 'the reviewer’s checkout is untouched');
  });

  it('a recorded workspace that lost the branch refuses, naming both', async () => {
    const place = worktreePlacement(data, repo.dir, 'other');
    const wt = new TestRepo(place, false);
    wt.git('checkout', '--quiet', '--detach');
    const refused = await bindWorkspace(store, session('s-2', 'other'), { dataDir: data, now });
    assert.ok(!refused.ok);
    assert.match(refused.error.message, new RegExp(`${place.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} has a detached HEAD out, not other`));
    wt.git('checkout', '--quiet', 'other');
  });
});
