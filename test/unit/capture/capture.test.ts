import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { capturePatchset, capturePatchsetSpooled } from '../../../host/capture/capture';
import { readCapturedBlob } from '../../../host/capture/blob';
import { openRepo, type RepoHandle } from '../../../host/capture/repo';
import { buildCitationIndex } from '../../../host/board/citations';
import { typeChanged, type FileChange, type Patchset } from '../../../protocol/patchset';
import { Patchset as PatchsetSchema } from '../../../protocol/patchset';
import type { CaptureTarget as Target } from '../../../protocol/session';
import { TestRepo, tempDir } from '../../fixtures/gitRepo';

async function handle(dir: string): Promise<RepoHandle> {
  const repo = await openRepo(dir);
  assert.ok(repo.ok, repo.ok ? '' : repo.error.message);
  return repo.value;
}

async function capture(repo: TestRepo, target: Target, options?: { maxFileBytes?: number; maxPatchBytesPerFile?: number }): Promise<Patchset> {
  const result = await capturePatchset(await handle(repo.dir), target, options);
  assert.ok(result.ok, result.ok ? '' : `${result.error.code}: ${result.error.message}`);
  PatchsetSchema.parse(result.value);
  return result.value;
}

/** The spooled capture (`rennet capture --json`'s) of the same range prints exactly `expected`. */
async function assertSpooledAlike(repo: TestRepo, target: Target, expected: Patchset, message: string): Promise<void> {
  const spooled = await capturePatchsetSpooled(await handle(repo.dir), target);
  assert.ok(spooled.ok, spooled.ok ? '' : spooled.error.message);
  try {
    assert.equal(Buffer.concat([...spooled.value.chunks()]).toString('utf8'), JSON.stringify(expected), message);
  } finally {
    spooled.value.dispose();
  }
}

function file(patchset: Patchset, path: string): FileChange {
  const found = patchset.files.find((f) => f.path === path);
  assert.ok(found, `${path} not in [${patchset.files.map((f) => JSON.stringify(f.path)).join(', ')}]`);
  return found;
}

const lines = (n: number, prefix = 'line') => Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}`).join('\n') + '\n';

describe('capture against real git repositories', function () {
  this.timeout(60_000);
  let repo: TestRepo;
  afterEach(() => repo?.cleanup());

  function branchRange(setup: (r: TestRepo) => void, change: (r: TestRepo) => void): { base: string; head: string } {
    repo = new TestRepo();
    setup(repo);
    const base = repo.commit('base');
    repo.branch('feature');
    change(repo);
    const head = repo.commit('change');
    return { base, head };
  }

  it('records a modification with hunks, line numbers, regions and counts that match git', async () => {
    const { base, head } = branchRange(
      (r) => r.write('src/app.ts', lines(40)),
      (r) => r.write('src/app.ts', lines(40).replace('line 10\n', 'line ten\n').replace('line 30\n', 'line 30\nline 30b\n')),
    );
    const ps = await capture(repo, { kind: 'branch', head: 'feature', base: 'main' });
    assert.equal(ps.base, base);
    assert.equal(ps.head, head);
    assert.match(ps.id, /^ps-[0-9a-f]{16}$/);
    const f = file(ps, 'src/app.ts');
    assert.equal(f.status, 'modified');
    assert.equal(f.oldPath, null);
    assert.equal(f.hunks.length, 2);
    const [first, second] = f.hunks as [FileChange['hunks'][0], FileChange['hunks'][0]];
    assert.deepEqual([first.oldStart, first.oldLines, first.newStart, first.newLines], [7, 7, 7, 7]);
    assert.deepEqual([second.oldStart, second.oldLines, second.newStart, second.newLines], [28, 6, 28, 7]);
    assert.match(first.id, /^h-[0-9a-f]{16}$/);
    assert.notEqual(first.id, second.id);
    const changed = first.lines.find((l) => l.kind === 'add');
    assert.deepEqual(changed, { kind: 'add', text: 'line ten', oldLine: null, newLine: 10 });
    assert.deepEqual(
      f.regions.filter((r) => r.hunkId === second.id),
      [
        { side: 'base', startLine: 28, endLine: 33, hunkId: second.id },
        { side: 'head', startLine: 28, endLine: 34, hunkId: second.id },
      ],
    );
    const numstat = repo.git('diff', '--numstat', base, head).split('\t');
    assert.equal(f.additions, Number(numstat[0]));
    assert.equal(f.deletions, Number(numstat[1]));
    assert.deepEqual(ps.totals, { files: 1, additions: 2, deletions: 1, hunks: 2, binary: 0, submodules: 0, truncated: 0, uncounted: 0 });
  });

  it("keeps git's hunk headers verbatim, with the function-context text git prints after the second @@", async () => {
    // Most hunks of the real histories run over carry the enclosing function's line in the header.
    const body = (n: number) => Array.from({ length: 8 }, (_, i) => `    step${n}_${i}();`).join('\n');
    const source = `static int first(void)\n{\n${body(1)}\n}\n\nint second(int n)\n{\n${body(2)}\n    return n;\n}\n`;
    const { base, head } = branchRange(
      (r) => r.write('src/steps.c', source),
      (r) => r.write('src/steps.c', source.replace('step2_6();', 'step2_6(n);')),
    );
    const ps = await capture(repo, { kind: 'branch', head: 'feature', base: 'main' });
    const headers = file(ps, 'src/steps.c').hunks.map((h) => h.header);
    const gits = repo
      .git('diff', '--no-color', '-U3', '--diff-algorithm=myers', base, head)
      .split('\n')
      .filter((l) => l.startsWith('@@ '));
    assert.deepEqual(headers, gits);
    assert.deepEqual(headers, ['@@ -18,7 +18,7 @@ int second(int n)']);
  });

  it('detects a pure rename and a rename with an edit', async () => {
    branchRange(
      (r) => r.write('a/pure.ts', lines(20, 'pure')).write('a/edited.ts', lines(20, 'edited')),
      (r) => {
        r.remove('a/pure.ts').remove('a/edited.ts');
        r.write('b/pure.ts', lines(20, 'pure'));
        r.write('b/edited.ts', lines(20, 'edited').replace('edited 5\n', 'edited five\n'));
      },
    );
    const ps = await capture(repo, { kind: 'branch', head: 'feature', base: 'main' });
    const pure = file(ps, 'b/pure.ts');
    assert.equal(pure.status, 'renamed');
    assert.equal(pure.oldPath, 'a/pure.ts');
    assert.equal(pure.similarity, 100);
    assert.equal(pure.hunks.length, 0);
    assert.deepEqual([pure.additions, pure.deletions], [0, 0]);
    const edited = file(ps, 'b/edited.ts');
    assert.equal(edited.status, 'renamed');
    assert.equal(edited.oldPath, 'a/edited.ts');
    assert.ok((edited.similarity ?? 0) >= 50 && (edited.similarity ?? 0) < 100);
    assert.deepEqual([edited.additions, edited.deletions], [1, 1]);
    assert.equal(ps.files.length, 2);
  });

  it('finds renames with edits whatever diff.renameLimit the user set', async () => {
    branchRange(
      (r) => r.write('old/one.ts', lines(20, 'one')).write('old/two.ts', lines(20, 'two')),
      (r) => {
        r.remove('old/one.ts').remove('old/two.ts');
        r.write('new/first.ts', lines(20, 'one').replace('one 3\n', 'one three\n'));
        r.write('new/second.ts', lines(20, 'two').replace('two 9\n', 'two nine\n'));
      },
    );
    const target = { kind: 'branch', head: 'feature', base: 'main' } as const;
    const plain = await capture(repo, target);
    assert.deepEqual(
      plain.files.map((f) => [f.status, f.oldPath, f.path]),
      [
        ['renamed', 'old/one.ts', 'new/first.ts'],
        ['renamed', 'old/two.ts', 'new/second.ts'],
      ],
    );
    // Two sources by two destinations (no shared basenames) is over a limit of 1: git alone skips inexact renames.
    repo.git('config', 'diff.renameLimit', '1');
    assert.doesNotMatch(repo.git('diff', '--name-status', '--find-renames', 'main', 'feature'), /^R/m, 'git itself now finds no rename');
    assert.equal((await capture(repo, target)).id, plain.id);
  });

  it('records added and deleted files with the absent side null', async () => {
    branchRange(
      (r) => r.write('gone.txt', 'bye\n').write('keep.txt', 'k\n'),
      (r) => r.remove('gone.txt').write('new.txt', 'hello\nworld\n'),
    );
    const ps = await capture(repo, { kind: 'branch', head: 'feature', base: 'main' });
    const added = file(ps, 'new.txt');
    assert.equal(added.status, 'added');
    assert.equal(added.oldMode, null);
    assert.equal(added.oldOid, null);
    assert.equal(added.newMode, '100644');
    assert.deepEqual([added.additions, added.deletions], [2, 0]);
    assert.deepEqual(
      added.regions.map((r) => r.side),
      ['head'],
    );
    const deleted = file(ps, 'gone.txt');
    assert.equal(deleted.status, 'deleted');
    assert.equal(deleted.newOid, null);
    assert.deepEqual([deleted.additions, deleted.deletions], [0, 1]);
    assert.deepEqual(
      deleted.regions.map((r) => r.side),
      ['base'],
    );
  });

  it('marks binary files and mode changes, and counts binary lines as unknown rather than zero', async () => {
    branchRange(
      (r) => r.write('run.sh', 'echo hi\n').write('logo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3])),
      (r) => r.chmod('run.sh', 0o755).write('logo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 9, 9, 9, 9])),
    );
    const ps = await capture(repo, { kind: 'branch', head: 'feature', base: 'main' });
    const bin = file(ps, 'logo.png');
    assert.equal(bin.binary, true);
    assert.equal(bin.additions, null);
    assert.equal(bin.deletions, null);
    assert.equal(bin.hunks.length, 0);
    const mode = file(ps, 'run.sh');
    assert.equal(mode.modeChanged, true);
    assert.equal(mode.oldMode, '100644');
    assert.equal(mode.newMode, '100755');
    assert.equal(mode.status, 'modified');
    assert.deepEqual([mode.additions, mode.deletions], [0, 0]);
    assert.equal(ps.totals.binary, 1);
    assert.equal(ps.totals.uncounted, 1);
  });

  it('states a submodule as blocked (no hunks, unknown counts)', async () => {
    repo = new TestRepo();
    repo.write('README.md', 'r\n').commit('base');
    repo.branch('feature');
    const fakeCommit = 'a'.repeat(40);
    repo.git('update-index', '--add', '--cacheinfo', `160000,${fakeCommit},vendor/lib`);
    repo.git('commit', '-q', '-m', 'add submodule');
    const ps = await capture(repo, { kind: 'branch', head: 'feature', base: 'main' });
    const sub = file(ps, 'vendor/lib');
    assert.equal(sub.submodule, true);
    assert.equal(sub.newMode, '160000');
    assert.equal(sub.newOid, fakeCommit);
    assert.equal(sub.hunks.length, 0);
    assert.equal(sub.additions, null);
    assert.equal(ps.totals.submodules, 1);
  });

  it('states a submodule moved to another commit and a removed one as blocked, beside a text change', async () => {
    // Real histories bump a gitlink's commit and drop submodules; the fuzz generates no gitlinks.
    // Committed from the index alone: `git add -A` would drop gitlinks that have no folder here.
    repo = new TestRepo();
    const [first, second, gone] = ['b'.repeat(40), 'c'.repeat(40), 'd'.repeat(40)];
    repo.write('notes.txt', 'one\n').git('add', 'notes.txt');
    repo.git('update-index', '--add', '--cacheinfo', `160000,${first},deps/kept`);
    repo.git('update-index', '--add', '--cacheinfo', `160000,${gone},deps/dropped`);
    repo.git('commit', '-q', '-m', 'base');
    repo.branch('feature').write('notes.txt', 'one\ntwo\n').git('add', 'notes.txt');
    repo.git('update-index', '--cacheinfo', `160000,${second},deps/kept`);
    repo.git('update-index', '--force-remove', 'deps/dropped');
    repo.git('commit', '-q', '-m', 'bump and drop');
    const target = { kind: 'branch', head: 'feature', base: 'main' } as const;
    const ps = await capture(repo, target);
    const shape = (f: FileChange) => [
      f.status,
      f.oldMode,
      f.newMode,
      f.oldOid,
      f.newOid,
      f.modeChanged,
      f.submodule,
      f.binary,
      f.hunks.length,
      f.regions.length,
      f.additions,
      f.deletions,
      f.truncated,
    ];
    assert.deepEqual(shape(file(ps, 'deps/kept')), ['modified', '160000', '160000', first, second, false, true, false, 0, 0, null, null, false]);
    assert.deepEqual(shape(file(ps, 'deps/dropped')), ['deleted', '160000', null, gone, null, false, true, false, 0, 0, null, null, false]);
    assert.deepEqual([file(ps, 'notes.txt').additions, ps.totals.submodules, ps.totals.files], [1, 2, 3]);
    await assertSpooledAlike(repo, target, ps, 'the spooled capture alike');
  });

  it('keeps a missing trailing newline and CRLF line endings exactly', async () => {
    branchRange(
      (r) => r.write('eof.txt', 'a\nb').write('dos.txt', 'one\r\ntwo\r\n'),
      (r) => r.write('eof.txt', 'a\nB').write('dos.txt', 'one\r\nTWO\r\n'),
    );
    const ps = await capture(repo, { kind: 'branch', head: 'feature', base: 'main' });
    const eof = file(ps, 'eof.txt').hunks[0]!;
    const del = eof.lines.find((l) => l.kind === 'del')!;
    const add = eof.lines.find((l) => l.kind === 'add')!;
    assert.equal(del.text, 'b');
    assert.equal(del.noNewlineAtEof, true);
    assert.equal(add.text, 'B');
    assert.equal(add.noNewlineAtEof, true);
    const dos = file(ps, 'dos.txt').hunks[0]!;
    assert.equal(dos.lines.find((l) => l.kind === 'add')!.text, 'TWO\r');
    assert.equal(dos.lines.find((l) => l.kind === 'context')!.text, 'one\r');
  });

  it('handles paths with spaces, unicode and a newline in the name', async () => {
    const weird = 'dir with space/naïve ✓\nname.md';
    branchRange(
      (r) => r.write('dir with space/plain file.txt', 'x\n'),
      (r) => r.write('dir with space/plain file.txt', 'y\n').write(weird, 'hello\n').write('日本語/ファイル.ts', 'export {};\n'),
    );
    const ps = await capture(repo, { kind: 'branch', head: 'feature', base: 'main' });
    assert.equal(file(ps, 'dir with space/plain file.txt').status, 'modified');
    assert.equal(file(ps, weird).status, 'added');
    assert.equal(file(ps, '日本語/ファイル.ts').status, 'added');
    assert.equal(ps.files.length, 3);
  });

  it('refuses an empty change and a base equal to head, saying so', async () => {
    repo = new TestRepo();
    repo.write('a.txt', 'a\n').commit('base');
    repo.branch('feature');
    const same = await capturePatchset(await handle(repo.dir), { kind: 'branch', head: 'feature', base: 'main' });
    assert.ok(!same.ok);
    assert.equal(same.error.code, 'empty-change');
    assert.match(same.error.message, /nothing to review/);
    repo.commit('empty commit, same tree');
    const emptyTree = await capturePatchset(await handle(repo.dir), { kind: 'branch', head: 'feature', base: 'main' });
    assert.ok(!emptyTree.ok);
    assert.equal(emptyTree.error.code, 'empty-change');
  });

  it('truncates a file over the size limit and states the limit', async () => {
    branchRange(
      (r) => r.write('big.log', lines(3000)),
      (r) => r.write('big.log', lines(3000).replace('line 1500\n', 'changed\n')),
    );
    const ps = await capture(repo, { kind: 'branch', head: 'feature', base: 'main' }, { maxFileBytes: 4096 });
    const big = file(ps, 'big.log');
    assert.equal(big.truncated, true);
    assert.equal(big.binary, false, 'a text file over the limit is truncated, not binary');
    assert.equal(big.truncation?.reason, 'file-size');
    assert.equal(big.truncation?.limitBytes, 4096);
    assert.ok((big.truncation?.headBytes ?? 0) > 4096);
    assert.deepEqual(big.truncation?.tailFrom, { base: 1, head: 1 });
    assert.equal(big.hunks.length, 0);
    assert.equal(big.additions, null);
    assert.equal(ps.totals.truncated, 1);
  });

  it('keeps the hunks that fit when a patch is over its limit and states where the tail starts', async () => {
    const before = lines(2000);
    const after = before.replace(/line (\d*0)\n/g, 'LINE $1\n');
    branchRange(
      (r) => r.write('many.txt', before),
      (r) => r.write('many.txt', after),
    );
    const ps = await capture(repo, { kind: 'branch', head: 'feature', base: 'main' }, { maxPatchBytesPerFile: 2048 });
    const many = file(ps, 'many.txt');
    assert.equal(many.truncated, true);
    assert.equal(many.truncation?.reason, 'patch-size');
    assert.ok(many.hunks.length > 0 && many.hunks.length < 200, `kept ${many.hunks.length}`);
    const lastKept = many.hunks[many.hunks.length - 1]!;
    assert.ok((many.truncation?.tailFrom.head ?? 0) > lastKept.newStart + lastKept.newLines - 1);
    assert.equal(many.additions, 200, 'counts cover the whole file even when hunks are dropped');
  });

  it('is content-addressed: the same range twice gives the same id and ids', async () => {
    branchRange(
      (r) => r.write('a.txt', lines(10)),
      (r) => r.write('a.txt', lines(10).replace('line 3', 'three')),
    );
    const first = await capture(repo, { kind: 'branch', head: 'feature', base: 'main' });
    const second = await capture(repo, { kind: 'branch', head: 'feature', base: 'main' });
    assert.equal(first.id, second.id);
    assert.deepEqual(first, second);
    repo.write('a.txt', lines(10).replace('line 3', 'THREE')).commit('again');
    const third = await capture(repo, { kind: 'branch', head: 'feature', base: 'main' });
    assert.notEqual(third.id, first.id);
  });

  it('diffs from the merge-base, not from the moved base tip', async () => {
    repo = new TestRepo();
    repo.write('a.txt', 'a\n').write('b.txt', 'b\n');
    const forkPoint = repo.commit('base');
    repo.branch('feature').write('a.txt', 'A\n').commit('feature work');
    repo.checkout('main').write('b.txt', 'B on main\n').commit('main moved');
    const ps = await capture(repo, { kind: 'branch', head: 'feature', base: 'main' });
    assert.equal(ps.base, forkPoint);
    assert.equal(ps.baseTip, repo.head('main'));
    assert.deepEqual(
      ps.files.map((f) => f.path),
      ['a.txt'],
    );
  });

  it('captures a criss-cross history (two merge-bases) from the one git merge-base chooses', async () => {
    repo = new TestRepo();
    repo.write('shared.txt', 'root\n').commit('root');
    repo.branch('x').write('x.txt', 'x1\n').commit('x1');
    repo.checkout('main').branch('y').write('y.txt', 'y1\n').commit('y1');
    repo.checkout('x');
    repo.git('merge', '-q', '--no-ff', '-m', 'x takes y1', 'y');
    repo.checkout('y');
    repo.git('merge', '-q', '--no-ff', '-m', 'y takes x1', 'x~1');
    repo.checkout('x').write('x.txt', 'x2\n').commit('x2');
    assert.equal(repo.git('merge-base', '--all', 'x', 'y').split('\n').length, 2, 'the fixture has two merge-bases');
    const ps = await capture(repo, { kind: 'branch', head: 'x', base: 'y' });
    assert.equal(ps.base, repo.git('merge-base', 'x', 'y'));
    const expected = repo.git('diff', '--name-only', ps.base, 'x').split('\n').sort();
    assert.deepEqual(
      ps.files.map((f) => f.path),
      expected,
    );
  });

  it('captures a bare repository when both refs are commits', async () => {
    branchRange(
      (r) => r.write('a.txt', 'a\n'),
      (r) => r.write('a.txt', 'b\n'),
    );
    const bareDir = tempDir('rennet-bare-');
    execFileSync('git', ['clone', '-q', '--bare', repo.dir, bareDir]);
    const bare = await handle(bareDir);
    assert.equal(bare.bare, true);
    const result = await capturePatchset(bare, { kind: 'branch', head: 'feature', base: 'main' });
    assert.ok(result.ok, result.ok ? '' : result.error.message);
    assert.deepEqual(
      result.value.files.map((f) => f.path),
      ['a.txt'],
    );
    const wt = await capturePatchset(bare, { kind: 'working-tree', base: 'main' });
    assert.ok(!wt.ok);
    assert.equal(wt.error.code, 'bare-working-tree');
  });

  it('refuses bad input with a clear message: not a repository, unknown ref, non-commit', async () => {
    const plain = tempDir('rennet-plain-');
    const notRepo = await openRepo(plain);
    assert.ok(!notRepo.ok);
    assert.equal(notRepo.error.code, 'not-a-repository');
    const missing = await openRepo(join(plain, 'nope'));
    assert.ok(!missing.ok);
    repo = new TestRepo();
    repo.write('a.txt', 'a\n').commit('base');
    const h = await handle(repo.dir);
    const unknown = await capturePatchset(h, { kind: 'branch', head: 'no-such-branch', base: 'main' });
    assert.ok(!unknown.ok);
    assert.equal(unknown.error.code, 'unknown-ref');
    assert.match(unknown.error.message, /no-such-branch/);
    const optionLike = await capturePatchset(h, { kind: 'branch', head: '--output=/tmp/x', base: 'main' });
    assert.ok(!optionLike.ok);
    assert.equal(optionLike.error.code, 'unknown-ref');
    const tree = await capturePatchset(h, { kind: 'branch', head: 'HEAD^{tree}', base: 'main' });
    assert.ok(!tree.ok);
    assert.equal(tree.error.code, 'not-a-commit');
    // Names one rev-parse of both refs would read as several objects or as a path: each still refused alone.
    repo.branch('feature').write('b.txt', 'b\n').commit('change');
    for (const head of ['main..feature', 'main...feature', 'b.txt']) {
      const odd = await capturePatchset(h, { kind: 'branch', head, base: 'main' });
      assert.ok(!odd.ok, head);
      assert.equal(odd.error.code, 'unknown-ref', `${head}: ${odd.error.message}`);
    }
    const good = await capturePatchset(h, { kind: 'branch', head: 'feature', base: 'main' });
    assert.ok(good.ok);
    assert.deepEqual([good.value.head, good.value.baseTip, good.value.headTree], [repo.git('rev-parse', 'feature'), repo.git('rev-parse', 'main'), repo.git('rev-parse', 'feature^{tree}')]);
  });

  it('refuses a shallow clone that lacks the merge-base, naming the fix', async () => {
    repo = new TestRepo();
    repo.write('a.txt', 'a\n').commit('root');
    repo.write('a.txt', 'b\n').commit('second');
    repo.branch('feature').write('f.txt', 'f\n').commit('f1');
    repo.write('f.txt', 'g\n').commit('f2');
    repo.checkout('main').write('m.txt', 'm\n').commit('m1');
    repo.write('m.txt', 'n\n').commit('m2');
    const shallow = tempDir('rennet-shallow-');
    execFileSync('git', ['clone', '-q', '--depth=1', '--no-single-branch', `file://${repo.dir}`, shallow]);
    const h = await handle(shallow);
    assert.equal(h.shallow, true);
    const result = await capturePatchset(h, { kind: 'branch', head: 'origin/feature', base: 'origin/main' });
    assert.ok(!result.ok);
    assert.equal(result.error.code, 'shallow-missing-merge-base');
    assert.match(result.error.message, /unshallow|deepen/);
  });

  it('captures the working tree (tracked, deleted, untracked; not ignored) without touching HEAD or the index', async () => {
    repo = new TestRepo();
    repo.write('.gitignore', 'ignored.log\n').write('tracked.txt', 'one\n').write('doomed.txt', 'x\n').commit('base');
    repo.branch('feature').write('committed.txt', 'c\n').commit('feature commit');
    repo.write('tracked.txt', 'two\n').remove('doomed.txt').write('untracked.txt', 'u\n').write('ignored.log', 'noise\n');
    repo.write('staged.txt', 'staged\n');
    repo.git('add', 'staged.txt');
    const headBefore = repo.head();
    const indexBefore = readFileSync(join(repo.dir, '.git', 'index'));
    const statusBefore = repo.git('status', '--porcelain');
    const ps = await capture(repo, { kind: 'working-tree', base: 'main' });
    assert.equal(repo.head(), headBefore, 'HEAD unchanged');
    assert.deepEqual(readFileSync(join(repo.dir, '.git', 'index')), indexBefore, 'index bytes unchanged');
    assert.equal(repo.git('status', '--porcelain'), statusBefore);
    assert.equal(repo.git('symbolic-ref', '--short', 'HEAD'), 'feature');
    assert.deepEqual(
      ps.files.map((f) => `${f.status}:${f.path}`),
      ['added:committed.txt', 'deleted:doomed.txt', 'added:staged.txt', 'modified:tracked.txt', 'added:untracked.txt'],
    );
    assert.equal(ps.targetKind, 'working-tree');
    assert.equal(ps.headRef, 'feature', 'the branch whose working tree was captured');
    assert.equal(repo.git('rev-parse', `refs/rennet/captures/${ps.head}`), ps.head, 'a hidden ref keeps the capture reachable');
    const again = await capture(repo, { kind: 'working-tree', base: 'main' });
    assert.equal(again.id, ps.id, 'an unchanged working tree captures to the same id');
  });

  it('refuses a working-tree review on a detached HEAD', async () => {
    repo = new TestRepo();
    repo.write('a.txt', 'a\n').commit('base');
    repo.write('a.txt', 'b\n').commit('second');
    repo.git('checkout', '-q', '--detach', 'HEAD');
    const result = await capturePatchset(await handle(repo.dir), { kind: 'working-tree', base: 'main' });
    assert.ok(!result.ok);
    assert.equal(result.error.code, 'detached-head');
  });

  it('is not changed by diff.suppressBlankEmpty: a blank context line keeps its marker, its hunk id and the capture', async () => {
    // The blank line closing the only hunk of the last file is where a marker-less line once ended the parse.
    const before = 'first\n\nsecond\nthird\n\n';
    const { base, head } = branchRange(
      (r) => r.write('spaced.txt', before),
      (r) => r.write('spaced.txt', before.replace('second', 'SECOND')),
    );
    const target = { kind: 'branch', base, head } as const;
    const plain = await capture(repo, target);
    repo.git('config', 'diff.suppressBlankEmpty', 'true');
    assert.match(repo.git('diff', base, head), /\n third\n$/, 'git now prints the blank context line without its marker');
    const suppressed = await capture(repo, target);
    assert.equal(suppressed.id, plain.id);
    const hunk = file(suppressed, 'spaced.txt').hunks[0];
    assert.ok(hunk);
    assert.deepEqual(
      hunk.lines.map((l) => [l.kind, l.text]),
      [
        ['context', 'first'],
        ['context', ''],
        ['del', 'second'],
        ['add', 'SECOND'],
        ['context', 'third'],
        ['context', ''],
      ],
    );
  });

  it('reads no .gitattributes from the checkout: the same range captures the same lines and id whichever branch is checked out', async () => {
    // Real histories carry .gitattributes that call whole folders binary (or name hunk-header
    // drivers); git reads them from the work tree, so the checkout, not the range, decided.
    branchRange(
      (r) => r.write('records.dat', lines(12, 'record')),
      (r) => r.write('records.dat', lines(12, 'record').replace('record 7\n', 'record seven\n')),
    );
    const target = { kind: 'branch', base: 'main', head: 'feature' } as const;
    repo.checkout('main');
    const plain = await capture(repo, target);
    const records = file(plain, 'records.dat');
    assert.deepEqual([records.binary, records.additions, records.deletions], [false, 1, 1]);
    // An uncommitted .gitattributes in the checkout, then one committed on the branch checked out.
    repo.write('.gitattributes', '*.dat binary\n');
    assert.match(repo.git('diff', '--numstat', 'main', 'feature'), /^-\t-\trecords\.dat$/, 'git itself now calls the file binary');
    const untracked = await capture(repo, target);
    repo.branch('attributes').commit('attributes');
    const committed = await capture(repo, target);
    for (const [name, ps] of [
      ['an untracked .gitattributes', untracked],
      ['a .gitattributes on the checked-out branch', committed],
    ] as const) {
      assert.deepEqual(file(ps, 'records.dat'), records, `${name} changes nothing in the file`);
      assert.equal(ps.id, plain.id, `${name} changes nothing in the id`);
    }
    await assertSpooledAlike(repo, target, plain, 'the spooled capture (rennet capture --json) alike');
  });

  it('reads base and head blobs immutably: later edits to the checkout change nothing', async () => {
    branchRange(
      (r) => r.write('a.txt', 'old\n'),
      (r) => r.write('a.txt', 'new\n'),
    );
    repo.write('a.txt', 'edited after capture\n');
    const ps = await capture(repo, { kind: 'working-tree', base: 'main' });
    writeFileSync(join(repo.dir, 'a.txt'), 'edited again\n');
    repo.write('a.txt', 'and once more\n').commit('moved on');
    const head = await readCapturedBlob(repo.dir, ps, 'a.txt', 'head');
    const base = await readCapturedBlob(repo.dir, ps, 'a.txt', 'base');
    assert.ok(head.ok && base.ok);
    assert.equal(head.value.text, 'edited after capture\n');
    assert.equal(base.value.text, 'old\n');
    const escape = await readCapturedBlob(repo.dir, ps, '../etc/passwd', 'head');
    assert.ok(!escape.ok);
    assert.equal(escape.error.code, 'invalid-path');
  });
});

describe('capture of type changes (file ↔ symlink ↔ submodule) against real git repositories', function () {
  this.timeout(60_000);
  let repo: TestRepo;
  afterEach(() => repo?.cleanup());

  const GITLINK = 'b'.repeat(40);
  const OTHER_BEFORE = lines(10, 'other');
  const OTHER_AFTER = OTHER_BEFORE.replace('other 4\n', 'other four\n');

  /** A base with `setup`, then a feature commit with `change` and an ordinary edit to other.txt. */
  async function typeChangeRange(setup: (r: TestRepo) => void, change: (r: TestRepo) => void): Promise<Patchset> {
    repo = new TestRepo();
    repo.write('other.txt', OTHER_BEFORE);
    setup(repo);
    // Plain `git commit`: `add -A` would drop a gitlink that has no checkout behind it.
    repo.git('add', '--', 'other.txt');
    repo.git('commit', '-q', '-m', 'base');
    repo.branch('feature');
    repo.write('other.txt', OTHER_AFTER);
    repo.git('add', '--', 'other.txt');
    change(repo);
    repo.git('commit', '-q', '-m', 'type change');
    return capture(repo, { kind: 'branch', head: 'feature', base: 'main' });
  }

  const symlink = (r: TestRepo, path: string, target: string): void => {
    symlinkSync(target, join(r.dir, path));
    r.git('add', '--', path);
  };
  const regular = (r: TestRepo, path: string, content: string): void => {
    r.write(path, content);
    r.git('add', '--', path);
  };
  const gitlink = (r: TestRepo, path: string): void => {
    r.git('update-index', '--add', '--cacheinfo', `160000,${GITLINK},${path}`);
  };
  const unlink = (r: TestRepo, path: string): void => {
    r.git('rm', '-q', '--cached', '--', path);
    rmSync(join(r.dir, path), { force: true });
  };

  /** The ordinary edit beside every type change: still captured on its own. */
  function assertOtherFile(ps: Patchset): void {
    const other = file(ps, 'other.txt');
    assert.deepEqual([other.status, other.modeChanged, other.additions, other.deletions, other.hunks.length], ['modified', false, 1, 1, 1]);
    assert.deepEqual(
      other.hunks[0]!.lines.find((l) => l.kind === 'add'),
      { kind: 'add', text: 'other four', oldLine: null, newLine: 4 },
    );
  }

  /** One modified file; its deletion hunk holds the base lines and its creation hunk the head lines. */
  function assertBothSides(f: FileChange, base: string[], head: string[]): void {
    assert.equal(f.status, 'modified');
    assert.equal(f.modeChanged, true);
    assert.ok(typeChanged(f), `${f.oldMode} → ${f.newMode} is a type change`);
    assert.deepEqual([f.binary, f.submodule, f.truncated], [false, false, false]);
    assert.deepEqual([f.deletions, f.additions], [base.length, head.length]);
    assert.equal(f.hunks.length, 2);
    const [deletion, creation] = f.hunks as [FileChange['hunks'][0], FileChange['hunks'][0]];
    assert.deepEqual([deletion.oldStart, deletion.oldLines, deletion.newStart, deletion.newLines], [1, base.length, 0, 0]);
    assert.deepEqual(
      deletion.lines.map((l) => [l.kind, l.text, l.oldLine, l.newLine]),
      base.map((text, i) => ['del', text, i + 1, null]),
    );
    assert.deepEqual([creation.oldStart, creation.oldLines, creation.newStart, creation.newLines], [0, 0, 1, head.length]);
    assert.deepEqual(
      creation.lines.map((l) => [l.kind, l.text, l.oldLine, l.newLine]),
      head.map((text, i) => ['add', text, null, i + 1]),
    );
    assert.notEqual(deletion.id, creation.id);
    assert.deepEqual(f.regions, [
      { side: 'base', startLine: 1, endLine: base.length, hunkId: deletion.id },
      { side: 'head', startLine: 1, endLine: head.length, hunkId: creation.id },
    ]);
  }

  it('captures a file that becomes a symlink as one modified file with both sides citable', async () => {
    const ps = await typeChangeRange(
      (r) => regular(r, 'f.txt', 'one\ntwo\nthree\n'),
      (r) => {
        unlink(r, 'f.txt');
        symlink(r, 'f.txt', 'docs/target.md');
      },
    );
    const f = file(ps, 'f.txt');
    assert.deepEqual([f.oldMode, f.newMode], ['100644', '120000']);
    assertBothSides(f, ['one', 'two', 'three'], ['docs/target.md']);
    assert.equal(f.hunks[1]!.lines[0]!.noNewlineAtEof, true, "a symlink's target has no newline");
    const numstat = repo.git('diff', '--numstat', ps.base, ps.head, '--', 'f.txt').split('\t');
    assert.deepEqual([f.additions, f.deletions], [Number(numstat[0]), Number(numstat[1])]);
    assertOtherFile(ps);
    assert.deepEqual(ps.totals, { files: 2, additions: 2, deletions: 4, hunks: 3, binary: 0, submodules: 0, truncated: 0, uncounted: 0 });

    const citations = buildCitationIndex(ps);
    assert.deepEqual(citations.resolve('f.txt', 'base', 2, 3), { ok: true, path: 'f.txt', hunkIds: [f.hunks[0]!.id] });
    assert.deepEqual(citations.resolve('f.txt', 'head', 1, 1), { ok: true, path: 'f.txt', hunkIds: [f.hunks[1]!.id] });
    assert.equal(citations.resolve('f.txt', 'head', 2, 2).ok, false, 'the symlink has one line');
    const base = await readCapturedBlob(repo.dir, ps, 'f.txt', 'base');
    const head = await readCapturedBlob(repo.dir, ps, 'f.txt', 'head');
    assert.ok(base.ok && head.ok);
    assert.deepEqual([base.value.text, head.value.text], ['one\ntwo\nthree\n', 'docs/target.md']);
  });

  it('captures a symlink that becomes a file', async () => {
    const ps = await typeChangeRange(
      (r) => symlink(r, 'link', '../elsewhere'),
      (r) => {
        unlink(r, 'link');
        regular(r, 'link', 'now\na file\n');
      },
    );
    const f = file(ps, 'link');
    assert.deepEqual([f.oldMode, f.newMode], ['120000', '100644']);
    assertBothSides(f, ['../elsewhere'], ['now', 'a file']);
    assertOtherFile(ps);
    assert.deepEqual(ps.totals, { files: 2, additions: 3, deletions: 2, hunks: 3, binary: 0, submodules: 0, truncated: 0, uncounted: 0 });
  });

  it('captures a file that becomes a submodule as one blocked submodule', async () => {
    const ps = await typeChangeRange(
      (r) => regular(r, 'vendor/lib', 'was a file\n'),
      (r) => {
        unlink(r, 'vendor/lib');
        gitlink(r, 'vendor/lib');
      },
    );
    const sub = file(ps, 'vendor/lib');
    assert.deepEqual([sub.status, sub.oldMode, sub.newMode, sub.modeChanged, sub.newOid], ['modified', '100644', '160000', true, GITLINK]);
    assert.ok(typeChanged(sub));
    assert.deepEqual([sub.submodule, sub.binary, sub.hunks.length, sub.regions.length, sub.additions, sub.deletions], [true, false, 0, 0, null, null]);
    assertOtherFile(ps);
    assert.deepEqual(ps.totals, { files: 2, additions: 1, deletions: 1, hunks: 1, binary: 0, submodules: 1, truncated: 0, uncounted: 1 });
    const cited = buildCitationIndex(ps).resolve('vendor/lib', 'base', 1, 1);
    assert.equal(cited.ok ? 'ok' : cited.reason, 'not-line-addressable');
  });

  it('captures a submodule that becomes a file as one blocked submodule', async () => {
    const ps = await typeChangeRange(
      (r) => gitlink(r, 'vendor/lib'),
      (r) => {
        r.git('rm', '-q', '--cached', '--', 'vendor/lib');
        regular(r, 'vendor/lib', 'a file now\n');
      },
    );
    const sub = file(ps, 'vendor/lib');
    assert.deepEqual([sub.status, sub.oldMode, sub.newMode, sub.oldOid], ['modified', '160000', '100644', GITLINK]);
    assert.deepEqual([sub.submodule, sub.hunks.length, sub.additions, sub.deletions], [true, 0, null, null]);
    assertOtherFile(ps);
    assert.deepEqual(ps.totals, { files: 2, additions: 1, deletions: 1, hunks: 1, binary: 0, submodules: 1, truncated: 0, uncounted: 1 });
  });

  it('captures a binary file that becomes a symlink as binary, as any change with a binary side', async () => {
    const ps = await typeChangeRange(
      (r) => regular(r, 'logo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]).toString('latin1')),
      (r) => {
        unlink(r, 'logo.png');
        symlink(r, 'logo.png', 'assets/logo.png');
      },
    );
    const bin = file(ps, 'logo.png');
    assert.deepEqual([bin.status, bin.oldMode, bin.newMode, bin.binary, bin.hunks.length, bin.additions], ['modified', '100644', '120000', true, 0, null]);
    assertOtherFile(ps);
    assert.deepEqual([ps.totals.files, ps.totals.binary, ps.totals.uncounted], [2, 1, 1]);
  });

  it('keeps a type change content-addressed: the same range twice gives the same ids', async () => {
    const first = await typeChangeRange(
      (r) => regular(r, 'f.txt', 'one\n'),
      (r) => {
        unlink(r, 'f.txt');
        symlink(r, 'f.txt', 'one');
      },
    );
    const second = await capture(repo, { kind: 'branch', head: 'feature', base: 'main' });
    assert.deepEqual(second, first);
    repo.git('rm', '-q', '--cached', '--', 'f.txt');
    rmSync(join(repo.dir, 'f.txt'));
    symlinkSync('two', join(repo.dir, 'f.txt'));
    repo.git('add', '--', 'f.txt');
    repo.git('commit', '-q', '-m', 'retarget');
    const third = await capture(repo, { kind: 'branch', head: 'feature', base: 'main' });
    assert.notEqual(third.id, first.id);
  });

  it('captures a type change in the working tree', async () => {
    repo = new TestRepo();
    repo.write('f.txt', 'one\ntwo\n').write('other.txt', OTHER_BEFORE).commit('base');
    repo.branch('feature');
    repo.remove('f.txt').write('other.txt', OTHER_AFTER);
    symlinkSync('other.txt', join(repo.dir, 'f.txt'));
    const ps = await capture(repo, { kind: 'working-tree', base: 'main' });
    assertBothSides(file(ps, 'f.txt'), ['one', 'two'], ['other.txt']);
    assertOtherFile(ps);
  });

  it('never pairs a file with a symlink as a rename: git keeps them a deletion and an addition, and a moved-away file beside a type change an addition', async () => {
    // The symlink's blob is the deleted file's exact bytes, and git still does not call it a rename.
    const ps = await typeChangeRange(
      (r) => {
        regular(r, 'a.txt', 'target');
        regular(r, 'moved.txt', lines(20, 'moved'));
      },
      (r) => {
        unlink(r, 'a.txt');
        symlink(r, 'b', 'target');
        unlink(r, 'moved.txt');
        regular(r, 'moved/away.txt', lines(20, 'moved'));
        symlink(r, 'moved.txt', 'moved/away.txt');
      },
    );
    const raw = repo.git('diff', '--raw', '--find-renames', ps.base, ps.head);
    assert.doesNotMatch(raw, / R\d+\t/, 'git reported no rename');
    assert.equal(file(ps, 'a.txt').status, 'deleted');
    assert.equal(file(ps, 'b').status, 'added');
    assert.equal(file(ps, 'b').newMode, '120000');
    assert.equal(file(ps, 'moved/away.txt').status, 'added');
    assertBothSides(file(ps, 'moved.txt'), lines(20, 'moved').trimEnd().split('\n'), ['moved/away.txt']);
    assertOtherFile(ps);
    assert.equal(ps.totals.files, 5);
    assert.ok(ps.files.every((f) => f.oldPath === null));
  });
});

describe('repository queries', function () {
  this.timeout(30_000);
  it('lists local branches with the current one first and finds the default base', async () => {
    const { listBranches } = await import('../../../host/capture/repo');
    const repo = new TestRepo();
    try {
      repo.write('a.txt', 'a\n').commit('base');
      repo.branch('older').write('b.txt', 'b\n').commit('older work');
      repo.checkout('main').branch('feature').write('c.txt', 'c\n').commit('feature work');
      const previousEditor = process.env.EDITOR;
      process.env.EDITOR = 'vim'; // a user's shell variable must not break the listing
      const result = await listBranches(await handle(repo.dir));
      if (previousEditor === undefined) delete process.env.EDITOR;
      else process.env.EDITOR = previousEditor;
      assert.ok(result.ok, result.ok ? '' : result.error.message);
      assert.equal(result.value.current, 'feature');
      assert.equal(result.value.branches[0], 'feature');
      assert.deepEqual([...result.value.branches].sort(), ['feature', 'main', 'older']);
      assert.equal(result.value.defaultBase, 'main');
      repo.git('branch', '-m', 'main', 'trunk');
      repo.git('update-ref', 'refs/remotes/origin/trunk', 'trunk');
      repo.git('symbolic-ref', 'refs/remotes/origin/HEAD', 'refs/remotes/origin/trunk');
      const viaOrigin = await listBranches(await handle(repo.dir));
      assert.ok(viaOrigin.ok);
      assert.equal(viaOrigin.value.defaultBase, 'trunk', "origin/HEAD's branch wins, named by its local branch");
    } finally {
      repo.cleanup();
    }
  });
});
