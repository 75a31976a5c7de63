import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHECKPOINT_REF_PREFIX } from '../../../protocol/rounds';
import { checkpointRef, checkRoundId, dropCheckpoints, hasSubmodules, measureRound, takeCheckpoint, type Checkpoint } from '../../../host/rounds/checkpoint';
import { runScriptedWorker } from '../../../host/rounds/scriptedWorker';
import { TestRepo } from '../../fixtures/gitRepo';

const lines = (n: number, prefix = 'line') => Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}`).join('\n') + '\n';

async function checkpoint(repo: TestRepo, roundId: string, label: 'before' | 'after'): Promise<Checkpoint> {
  const result = await takeCheckpoint(repo.dir, roundId, label);
  assert.ok(result.ok, result.ok ? '' : `${result.error.code}: ${result.error.message}`);
  return result.value;
}

/** Everything checkpointing must leave alone: HEAD, the branch, the user's index (as git reads it, and its bytes). */
function userState(repo: TestRepo): { head: string; branch: string; cached: string; index: Buffer } {
  return {
    head: repo.head(),
    branch: repo.git('symbolic-ref', 'HEAD'),
    cached: repo.git('diff', '--cached', '--no-color'),
    index: readFileSync(join(repo.dir, '.git', 'index')),
  };
}

describe('rounds: checkpoints and the measured round', function () {
  this.timeout(60_000);
  let repo: TestRepo;
  afterEach(() => repo?.cleanup());

  /** Committed files, then the user's own dirty state: a modification, a staged change, an untracked and an ignored file. */
  function dirtyRepo(): TestRepo {
    repo = new TestRepo();
    repo
      .write('.gitignore', '*.log\nbuild/\n')
      .write('a.txt', lines(10, 'a'))
      .write('b.txt', lines(10, 'b'))
      .write('c.txt', lines(5, 'c'))
      .write('keep.txt', lines(10, 'keep'))
      .write('old.txt', lines(20, 'old'));
    repo.commit('initial');
    repo.write('a.txt', lines(10, 'a').replace('a 3\n', 'a three (the user’s)\n'));
    repo.write('b.txt', lines(10, 'b').replace('b 5\n', 'b five (staged)\n'));
    repo.git('add', 'b.txt');
    repo.write('notes.txt', 'the user’s untracked notes\n');
    repo.write('debug.log', 'ignored\n');
    return repo;
  }

  it('measures exactly the worker’s change, never the dirty state that was there before, never ignored files', async () => {
    dirtyRepo();
    const startHead = repo.head();
    const userBefore = userState(repo);
    const before = await checkpoint(repo, 'r-1', 'before');
    assert.deepEqual(userState(repo), userBefore, 'the before checkpoint touched HEAD, the branch or the index');
    assert.equal(before.head, startHead);
    assert.equal(repo.git('rev-parse', checkpointRef('r-1', 'before')), before.commit);
    assert.equal(repo.git('rev-parse', `${before.commit}^`), startHead, 'a checkpoint’s parent is HEAD');

    // The worker: edits and renames (committed, with the user's staged change swept along), a
    // deletion and a new untracked file (left uncommitted), and more ignored output.
    repo.write('keep.txt', lines(10, 'keep').replace('keep 7\n', 'keep seven\n'));
    repo.git('mv', 'old.txt', 'renamed.txt');
    repo.write('renamed.txt', lines(20, 'old').replace('old 10\n', 'old ten\n'));
    repo.git('add', 'keep.txt', 'renamed.txt');
    repo.git('commit', '-q', '-m', 'worker commit');
    const workerHead = repo.head();
    repo.remove('c.txt');
    repo.write('new.txt', 'brand new\n');
    repo.write('build/out.js', 'ignored output\n');
    repo.write('worker.log', 'ignored log\n');

    const userAfterWorker = userState(repo);
    const after = await checkpoint(repo, 'r-1', 'after');
    assert.deepEqual(userState(repo), userAfterWorker, 'the after checkpoint touched HEAD, the branch or the index');
    assert.equal(after.head, workerHead);
    assert.notEqual(after.commit, before.commit);

    const measured = await measureRound(repo.dir, before.commit, after.commit);
    assert.ok(measured.ok, measured.ok ? '' : measured.error.message);
    const { files, changedPaths, totals } = measured.value;
    assert.deepEqual(
      files.map((f) => [f.path, f.status, f.oldPath]),
      [
        ['c.txt', 'deleted', null],
        ['keep.txt', 'modified', null],
        ['new.txt', 'added', null],
        ['renamed.txt', 'renamed', 'old.txt'],
      ],
    );
    // --name-only without rename detection: a rename's old and new paths both changed.
    assert.deepEqual(changedPaths, ['c.txt', 'keep.txt', 'new.txt', 'old.txt', 'renamed.txt']);
    const keep = files.find((f) => f.path === 'keep.txt');
    assert.deepEqual(
      keep?.hunks.flatMap((h) => h.lines.filter((l) => l.kind !== 'context').map((l) => `${l.kind} ${l.text}`)),
      ['del keep 7', 'add keep seven'],
    );
    assert.deepEqual(totals, { files: 4, additions: 1 + 1 + 1, deletions: 5 + 1 + 1 });
    for (const path of ['a.txt', 'b.txt', 'notes.txt', 'debug.log', 'worker.log', 'build/out.js']) {
      assert.ok(!changedPaths.includes(path), `${path} is not the worker's change`);
      assert.ok(!files.some((f) => f.path === path || f.oldPath === path), `${path} is not the worker's change`);
    }
    // Ignored files are in neither checkpoint.
    for (const commit of [before.commit, after.commit]) {
      const tree = repo.git('ls-tree', '-r', '--name-only', commit).split('\n');
      assert.ok(tree.includes('notes.txt') && !tree.includes('debug.log') && !tree.some((p) => p.startsWith('build/')));
    }

    const dropped = await dropCheckpoints(repo.dir, 'r-1');
    assert.ok(dropped.ok);
    assert.equal(dropped.value.dropped, 2);
    assert.equal(repo.git('for-each-ref', CHECKPOINT_REF_PREFIX), '');
    const again = await dropCheckpoints(repo.dir, 'r-1');
    assert.ok(again.ok, 'dropping twice is fine');
    assert.equal(again.value.dropped, 0);
    assert.equal(repo.git('symbolic-ref', 'HEAD'), 'refs/heads/main');
  });

  it('a rename with an edit is one renamed FileChange with hunks', async () => {
    repo = new TestRepo();
    repo.write('src/old-name.ts', lines(30, 'code'));
    repo.commit('initial');
    const before = await checkpoint(repo, 'rename', 'before');
    repo.remove('src/old-name.ts');
    repo.write('src/new-name.ts', lines(30, 'code').replace('code 15\n', 'code fifteen\n'));
    const after = await checkpoint(repo, 'rename', 'after');
    const measured = await measureRound(repo.dir, before.commit, after.commit);
    assert.ok(measured.ok);
    assert.equal(measured.value.files.length, 1);
    const [renamed] = measured.value.files;
    assert.equal(renamed?.status, 'renamed');
    assert.equal(renamed?.path, 'src/new-name.ts');
    assert.equal(renamed?.oldPath, 'src/old-name.ts');
    assert.ok((renamed?.similarity ?? 0) >= 90);
    assert.equal(renamed?.hunks.length, 1);
    assert.equal(renamed?.additions, 1);
    assert.equal(renamed?.deletions, 1);
    assert.deepEqual(measured.value.changedPaths, ['src/new-name.ts', 'src/old-name.ts']);
    assert.deepEqual(measured.value.totals, { files: 1, additions: 1, deletions: 1 });
    // No commit was made: the range is empty, HEAD..HEAD.
    assert.equal(before.head, after.head);
  });

  it('a worker that changed nothing measures files [] (not an error), over a dirty tree', async () => {
    dirtyRepo();
    const before = await checkpoint(repo, 'idle', 'before');
    repo.write('more.log', 'ignored\n');
    const after = await checkpoint(repo, 'idle', 'after');
    assert.equal(repo.git('rev-parse', `${after.commit}^{tree}`), repo.git('rev-parse', `${before.commit}^{tree}`));
    assert.equal(after.head, before.head);
    const beforeAgain = await checkpoint(repo, 'idle', 'before');
    assert.equal(beforeAgain.commit, before.commit, 'the same tree, parent and label give the same commit id');
    const measured = await measureRound(repo.dir, before.commit, after.commit);
    assert.ok(measured.ok, measured.ok ? '' : measured.error.message);
    assert.deepEqual(measured.value, { files: [], changedPaths: [], totals: { files: 0, additions: 0, deletions: 0 } });
  });

  it('a worker that committed only (clean tree after) is measured through its commits; range heads are before..after', async () => {
    repo = new TestRepo();
    repo.write('a.txt', lines(5));
    const first = repo.commit('initial');
    const before = await checkpoint(repo, 'commits', 'before');
    repo.write('a.txt', lines(6));
    repo.commit('one');
    repo.write('b.txt', 'b\n');
    const last = repo.commit('two');
    const after = await checkpoint(repo, 'commits', 'after');
    assert.deepEqual([before.head, after.head], [first, last]);
    assert.equal(repo.git('rev-list', '--count', `${before.head}..${after.head}`), '2');
    const measured = await measureRound(repo.dir, before.commit, after.commit);
    assert.ok(measured.ok);
    assert.deepEqual(measured.value.changedPaths, ['a.txt', 'b.txt']);
    assert.deepEqual(measured.value.totals, { files: 2, additions: 2, deletions: 0 });
  });

  it('a failed worker still yields its diff: measuring needs only the two checkpoints', async () => {
    repo = new TestRepo();
    repo.write('a.txt', lines(5));
    repo.commit('initial');
    const before = await checkpoint(repo, 'failed', 'before');
    const run = await runScriptedWorker(repo.dir, {
      steps: [{ write: { path: 'partial.txt', content: 'half done\n' } }, { delete: 'missing.txt' }, { write: { path: 'never.txt', content: 'x\n' } }],
    });
    assert.ok(!run.ok);
    const after = await checkpoint(repo, 'failed', 'after');
    const measured = await measureRound(repo.dir, before.commit, after.commit);
    assert.ok(measured.ok);
    assert.deepEqual(measured.value.changedPaths, ['partial.txt']);
  });

  it('works on a detached HEAD, and keeps rounds apart', async () => {
    repo = new TestRepo();
    repo.write('a.txt', lines(5));
    const first = repo.commit('initial');
    repo.git('checkout', '-q', '--detach');
    const one = await checkpoint(repo, 'one', 'before');
    repo.write('a.txt', lines(7));
    const two = await checkpoint(repo, 'two', 'before');
    assert.equal(one.head, first);
    assert.notEqual(one.commit, two.commit);
    assert.ok((await dropCheckpoints(repo.dir, 'one')).ok);
    assert.equal(repo.git('for-each-ref', '--format=%(refname)', CHECKPOINT_REF_PREFIX), `${CHECKPOINT_REF_PREFIX}two/before`);
    assert.equal(repo.git('rev-parse', 'HEAD'), first);
  });

  it('refuses round ids that could name another ref, and commits that do not exist', async () => {
    repo = new TestRepo();
    repo.write('a.txt', 'a\n');
    repo.commit('initial');
    for (const bad of ['', '../x', 'a/b', 'a..b', '.hidden', 'x.lock', 'sp ace', 'semi;colon', 'x'.repeat(129)]) {
      assert.equal(checkRoundId(bad).ok, false, JSON.stringify(bad));
      const taken = await takeCheckpoint(repo.dir, bad, 'before');
      assert.ok(!taken.ok);
      assert.equal(taken.error.code, 'invalid-request');
    }
    for (const good of ['r-1', 'round_2', 'rd.3', 'ABC123']) assert.equal(checkRoundId(good).ok, true, good);
    const measured = await measureRound(repo.dir, 'HEAD', 'no-such-ref');
    assert.ok(!measured.ok);
    assert.equal(measured.error.code, 'unknown-ref');
    assert.equal(repo.git('for-each-ref', CHECKPOINT_REF_PREFIX), '');
  });

  describe('hasSubmodules', () => {
    it('is false for a plain repository', async () => {
      repo = new TestRepo();
      repo.write('src/a.ts', 'a\n');
      repo.commit('initial');
      assert.equal(await hasSubmodules(repo.dir), false);
      assert.equal(await hasSubmodules(join(repo.dir, 'src')), false);
    });

    it('is true for a committed gitlink (mode 160000) anywhere in the tree', async () => {
      repo = new TestRepo();
      repo.write('a.txt', 'a\n');
      const first = repo.commit('initial');
      repo.git('update-index', '--add', '--cacheinfo', `160000,${first},deps/sub`);
      assert.equal(await hasSubmodules(repo.dir), true, 'a staged gitlink counts for HEAD');
      assert.equal(await hasSubmodules(repo.dir, first), false, 'but not for a commit without one');
      repo.git('commit', '-q', '-m', 'add a gitlink');
      assert.equal(await hasSubmodules(repo.dir), true);
      assert.equal(await hasSubmodules(repo.dir, 'HEAD'), true);
    });

    it('is true for a .gitmodules file, committed or in the working tree', async () => {
      repo = new TestRepo();
      repo.write('a.txt', 'a\n');
      const first = repo.commit('initial');
      repo.write('.gitmodules', '[submodule "x"]\n\tpath = x\n\turl = ./x\n');
      assert.equal(await hasSubmodules(repo.dir), true);
      repo.commit('gitmodules');
      assert.equal(await hasSubmodules(repo.dir, 'HEAD'), true);
      assert.equal(await hasSubmodules(repo.dir, first), false);
    });

    it('catches an untracked embedded repository through a checkpoint commit', async () => {
      repo = new TestRepo();
      repo.write('a.txt', 'a\n');
      repo.commit('initial');
      const inner = new TestRepo(join(repo.dir, 'vendor', 'inner'), false);
      mkdirSync(inner.dir, { recursive: true });
      inner.git('init', '-q', '-b', 'main');
      inner.write('x.txt', 'x\n');
      inner.git('-c', 'user.name=T', '-c', 'user.email=t@example.com', 'add', '-A');
      inner.git('-c', 'user.name=T', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'inner');
      assert.equal(await hasSubmodules(repo.dir), false, 'nothing in HEAD, the index or .gitmodules');
      const before = await checkpoint(repo, 'embedded', 'before');
      assert.equal(await hasSubmodules(repo.dir, before.commit), true);
    });
  });
});
