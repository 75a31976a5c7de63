import assert from 'node:assert/strict';
import { planSweep, type SiblingReach, type SweepInput, type SweepSession } from '../../../host/rounds/sweepPlan';
import { parseWorktreeList } from '../../../host/rounds/workspace';

/**
 * The start sweep's decision (PURE) against fixtures: registrations as `git worktree list
 * --porcelain -z` prints them, the sessions of the repository, and what git answered about each
 * sibling's reachability. Collected only when reachable and no live session is bound; kept with how
 * far ahead otherwise; the prune only when every unreachable registration is Rennet's and claimed
 * by no live session (path in either spelling, or work branch), else held naming the paths.
 */

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const PLACE = '/data/worktrees/app-1234abcd';

/** One registration as git prints it in `--porcelain -z`. */
function reg(path: string, out: { branch?: string; detached?: boolean; bare?: boolean; prunable?: string }, head = A): string {
  const fields = [`worktree ${path}`];
  if (!out.bare) fields.push(`HEAD ${head}`);
  if (out.branch) fields.push(`branch refs/heads/${out.branch}`);
  if (out.detached) fields.push('detached');
  if (out.bare) fields.push('bare');
  if (out.prunable !== undefined) fields.push(out.prunable === '' ? 'prunable' : `prunable ${out.prunable}`);
  return `${fields.join('\0')}\0\0`;
}

const CLONE = reg('/src/app', { branch: 'feature' });
const reached = (via: string | null, ahead: number | null = 0): SiblingReach => ({ tip: B, reachedVia: via, ahead });
const live = (id: string, binding: SweepSession['binding']): SweepSession => ({ id, live: true, binding });
const archived = (id: string, binding: SweepSession['binding']): SweepSession => ({ id, live: false, binding });

function input(porcelain: string, extra: Partial<SweepInput> = {}): SweepInput {
  return { worktrees: parseWorktreeList(porcelain), siblingBranches: [], sessions: [], placementRoots: [PLACE], spellings: {}, reach: {}, ...extra };
}

describe('host/rounds/sweepPlan: the start sweep decides', () => {
  it('parses git worktree list --porcelain -z: branch, detached, bare, prunable with and without git’s reason', () => {
    const parsed = parseWorktreeList(
      reg('/src/app', { bare: true }) +
        reg(`${PLACE}/x`, { detached: true }) +
        reg(`${PLACE}/rennet/f`, { branch: 'rennet/f', prunable: 'gitdir file points to non-existent location' }) +
        reg('/mine', { branch: 'm', prunable: '' }),
    );
    assert.deepEqual(parsed, [
      { path: '/src/app', branch: null, head: null, detached: false, bare: true, prunable: null },
      { path: `${PLACE}/x`, branch: null, head: A, detached: true, bare: false, prunable: null },
      { path: `${PLACE}/rennet/f`, branch: 'rennet/f', head: A, detached: false, bare: false, prunable: 'gitdir file points to non-existent location' },
      { path: '/mine', branch: 'm', head: A, detached: false, bare: false, prunable: 'git reports it prunable' },
    ]);
  });

  it('an orphan sibling whose tip the branch (or a remote’s ref of it) contains is collected with its worktree; an archived session does not hold it', () => {
    const plan = planSweep(
      input(CLONE + reg(`${PLACE}/rennet/feature`, { branch: 'rennet/feature' }) + reg(`${PLACE}/rennet/other`, { branch: 'rennet/other' }), {
        siblingBranches: ['rennet/feature', 'rennet/other', 'rennet/solo'],
        sessions: [archived('s-1', { root: `${PLACE}/rennet/feature`, branch: 'feature', workBranch: 'rennet/feature' })],
        reach: { 'rennet/feature': reached('refs/heads/feature'), 'rennet/other': reached('refs/remotes/origin/other'), 'rennet/solo': reached('refs/heads/solo') },
      }),
    );
    assert.deepEqual(plan.siblings, [
      { action: 'collect', workBranch: 'rennet/feature', branch: 'feature', worktree: `${PLACE}/rennet/feature`, afterPrune: false, reachedVia: 'refs/heads/feature', tip: B },
      { action: 'collect', workBranch: 'rennet/other', branch: 'other', worktree: `${PLACE}/rennet/other`, afterPrune: false, reachedVia: 'refs/remotes/origin/other', tip: B },
      { action: 'collect', workBranch: 'rennet/solo', branch: 'solo', worktree: null, afterPrune: false, reachedVia: 'refs/heads/solo', tip: B },
    ]);
    assert.deepEqual(plan.prune, { action: 'none' });
  });

  it('a sibling holding commits the branch lacks is kept, saying how far ahead; one whose branch is gone says so', () => {
    const plan = planSweep(
      input(CLONE + reg(`${PLACE}/rennet/feature`, { branch: 'rennet/feature' }), {
        siblingBranches: ['rennet/feature', 'rennet/gone'],
        reach: { 'rennet/feature': reached(null, 3), 'rennet/gone': reached(null, null) },
      }),
    );
    const [ahead, gone] = plan.siblings;
    assert.equal(ahead?.action, 'keep');
    assert.ok(ahead?.action === 'keep' && gone?.action === 'keep');
    assert.deepEqual([ahead.why, ahead.ahead, ahead.worktree], ['ahead', 3, `${PLACE}/rennet/feature`]);
    assert.equal(ahead.reason, 'it is 3 commits ahead of feature, which does not contain its tip (land it or push it first)');
    assert.deepEqual([gone.why, gone.ahead, gone.reason], ['ahead', null, 'gone is not here to contain its tip']);
  });

  it('a sibling a live session is bound to is never collected — by work branch, or by its root in another spelling — nor one the clone has out', () => {
    const plan = planSweep(
      input(reg('/src/app', { branch: 'rennet/mine' }) + reg(`${PLACE}/rennet/feature`, { branch: 'rennet/feature' }) + reg(`${PLACE}/rennet/other`, { branch: 'rennet/other' }), {
        sessions: [
          live('s-branch', { root: '/elsewhere', branch: 'feature', workBranch: 'rennet/feature' }),
          live('s-path', { root: '/link/worktrees/app-1234abcd/rennet/other', branch: 'other', workBranch: 'rennet/other' }),
        ],
        spellings: { '/link/worktrees/app-1234abcd/rennet/other': [`${PLACE}/rennet/other`] },
        reach: { 'rennet/feature': reached('refs/heads/feature'), 'rennet/other': reached('refs/heads/other'), 'rennet/mine': reached('refs/heads/mine') },
      }),
    );
    assert.deepEqual(
      plan.siblings.map((v) => [v.workBranch, v.action, v.action === 'keep' ? v.why : '', v.action === 'keep' ? v.sessions : []]),
      [
        ['rennet/feature', 'keep', 'bound', ['s-branch']],
        ['rennet/mine', 'keep', 'clone', []],
        ['rennet/other', 'keep', 'bound', ['s-path']],
      ],
    );
    assert.match(plan.siblings[0]!.action === 'keep' ? plan.siblings[0]!.reason : '', /the live review session s-branch is bound to it/);
  });

  it('prunes when every unreachable registration is Rennet’s — under the placement root, or on a rennet/* branch — and unclaimed; a sibling whose registration was lost loses its branch after the prune', () => {
    const plan = planSweep(
      input(
        CLONE +
          reg(`${PLACE}/other`, { branch: 'other', prunable: 'gitdir file points to non-existent location' }) +
          reg('/anywhere/rennet-feature', { branch: 'rennet/feature', prunable: 'gitdir file points to non-existent location' }),
        {
          sessions: [archived('s-1', { root: `${PLACE}/other`, branch: 'other' }), live('s-2', { root: '/src/app', branch: 'feature' })],
          reach: { 'rennet/feature': reached('refs/heads/feature') },
        },
      ),
    );
    assert.deepEqual(plan.prune, { action: 'prune', paths: [`${PLACE}/other`, '/anywhere/rennet-feature'] });
    assert.deepEqual(plan.siblings, [{ action: 'collect', workBranch: 'rennet/feature', branch: 'feature', worktree: null, afterPrune: true, reachedVia: 'refs/heads/feature', tip: B }]);
  });

  it('holds the prune when an unreachable registration is not Rennet’s, naming it; and the lost sibling then keeps its branch', () => {
    const plan = planSweep(
      input(
        CLONE +
          reg('/home/me/scratch', { branch: 'scratch', prunable: 'gitdir file points to non-existent location' }) +
          reg(`${PLACE}/rennet/feature`, { branch: 'rennet/feature', prunable: 'gitdir file points to non-existent location' }),
        {
          reach: { 'rennet/feature': reached('refs/heads/feature') },
        },
      ),
    );
    assert.equal(plan.prune.action, 'hold');
    assert.deepEqual(plan.prune.action === 'hold' ? plan.prune.held.map((h) => h.path) : [], ['/home/me/scratch']);
    assert.match(plan.prune.action === 'hold' ? plan.prune.held[0]!.reason : '', /not Rennet's/);
    const [sib] = plan.siblings;
    assert.ok(sib?.action === 'keep');
    assert.equal(sib.why, 'not-pruned');
    assert.match(sib.reason, new RegExp(`its registration at ${PLACE}/rennet/feature cannot be reached and was not pruned this pass`));
  });

  it('holds the prune when a live session claims an unreachable Rennet registration — by work branch, or by path in git’s spelling or the daemon’s', () => {
    const lost = (path: string, branch: string) => reg(path, { branch, prunable: 'gitdir file points to non-existent location' });
    const byBranch = planSweep(input(CLONE + lost(`${PLACE}/other`, 'other'), { sessions: [live('s-1', { root: '/was/elsewhere', branch: 'other' })] }));
    assert.deepEqual(byBranch.prune, { action: 'hold', held: [{ path: `${PLACE}/other`, reason: 'the live review session s-1 claims it' }] });

    // The daemon recorded the root through a symlink; git registered the resolved path.
    const daemon = '/link/worktrees/app-1234abcd/third';
    const byDaemonSpelling = planSweep(input(CLONE + lost(`${PLACE}/third`, 'detour'), { sessions: [live('s-2', { root: daemon, branch: 'third' })], spellings: { [daemon]: [`${PLACE}/third`] } }));
    assert.equal(byDaemonSpelling.prune.action, 'hold');
    // git registered the symlinked path; the daemon recorded the resolved one.
    const byGitSpelling = planSweep(
      input(CLONE + lost(daemon, 'detour'), { sessions: [live('s-3', { root: `${PLACE}/third`, branch: 'third' })], spellings: { [daemon]: [`${PLACE}/third`] }, placementRoots: [PLACE] }),
    );
    assert.deepEqual(byGitSpelling.prune, { action: 'hold', held: [{ path: daemon, reason: 'the live review session s-3 claims it' }] });

    // The same registrations with the sessions archived: pruned.
    const free = planSweep(input(CLONE + lost(`${PLACE}/other`, 'other'), { sessions: [archived('s-1', { root: `${PLACE}/other`, branch: 'other' })] }));
    assert.deepEqual(free.prune, { action: 'prune', paths: [`${PLACE}/other`] });
  });

  it('a sibling whose tip could not be read is kept, saying so', () => {
    const plan = planSweep(input(CLONE, { siblingBranches: ['rennet/feature'] }));
    assert.deepEqual(
      plan.siblings.map((v) => (v.action === 'keep' ? [v.why, v.reason] : [])),
      [['unread', 'its tip could not be read']],
    );
  });
});
