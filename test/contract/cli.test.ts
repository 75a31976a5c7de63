import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { Patchset } from '../../protocol/patchset';
import { isolatedCliEnv, TestRepo, tempDir } from '../fixtures/gitRepo';

const CLI = join(__dirname, '..', '..', 'dist', 'cli.js');

/** The built CLI as a script would run it: argv in, stdout/stderr/exit code out. */
function rennet(args: string[], dataDir: string) {
  const result = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: isolatedCliEnv({ RENNET_DATA_DIR: dataDir }) });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('rennet CLI (built dist/cli.js)', function () {
  this.timeout(60_000);
  let repo: TestRepo;
  let dataDir: string;
  beforeEach(() => {
    repo = new TestRepo();
    repo.write('src/app.ts', 'one\ntwo\n').write('docs/old name.md', '# doc\n\ntext\n').commit('base');
    repo.branch('feature').write('src/app.ts', 'one\n2\n').remove('docs/old name.md').write('docs/new name.md', '# doc\n\ntext\n').commit('change');
    dataDir = tempDir('rennet-cli-data-');
  });
  afterEach(() => {
    repo.cleanup();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('capture --json prints the documented fields and stores nothing new the second time', () => {
    const first = rennet(['capture', '--repo', repo.dir, '--base', 'main', '--head', 'feature', '--json'], dataDir);
    assert.equal(first.code, 0, first.stderr);
    const json = JSON.parse(first.stdout) as Record<string, unknown>;
    const patchset = Patchset.parse(json);
    assert.equal(patchset.base, repo.head('main'));
    assert.equal(patchset.head, repo.head('feature'));
    const renamed = patchset.files.find((f) => f.path === 'docs/new name.md')!;
    assert.equal(renamed.status, 'renamed');
    assert.equal(renamed.oldPath, 'docs/old name.md');
    const modified = patchset.files.find((f) => f.path === 'src/app.ts')!;
    for (const key of ['path', 'oldPath', 'status', 'binary', 'submodule', 'truncated', 'oldMode', 'newMode', 'additions', 'deletions', 'hunks']) {
      assert.ok(key in modified, `files[].${key} is part of the documented contract`);
    }
    for (const key of ['id', 'oldStart', 'oldLines', 'newStart', 'newLines']) assert.ok(key in modified.hunks[0]!, `hunks[].${key}`);
    const stored = readdirSync(join(dataDir, 'patchsets'));
    const second = rennet(['capture', '--repo', repo.dir, '--base', 'main', '--head', 'feature', '--json'], dataDir);
    assert.equal(JSON.parse(second.stdout).id, patchset.id);
    assert.deepEqual(readdirSync(join(dataDir, 'patchsets')), stored);
  });

  it('capture --json prints a file that became a symlink as one modified file with both sides', () => {
    repo.checkout('main').branch('retype');
    repo.remove('src/app.ts');
    symlinkSync('../docs/old name.md', join(repo.dir, 'src/app.ts'));
    repo.write('docs/old name.md', '# doc\n\nmore text\n').commit('app.ts becomes a symlink');
    const result = rennet(['capture', '--repo', repo.dir, '--base', 'main', '--head', 'retype', '--json'], dataDir);
    assert.equal(result.code, 0, result.stderr);
    const patchset = Patchset.parse(JSON.parse(result.stdout));
    assert.deepEqual(
      patchset.files.map((f) => f.path),
      ['docs/old name.md', 'src/app.ts'],
    );
    const retyped = patchset.files.find((f) => f.path === 'src/app.ts')!;
    assert.deepEqual([retyped.status, retyped.oldMode, retyped.newMode, retyped.modeChanged], ['modified', '100644', '120000', true]);
    assert.deepEqual(
      retyped.hunks.map((h) => h.header),
      ['@@ -1,2 +0,0 @@', '@@ -0,0 +1 @@'],
    );
    assert.deepEqual(
      retyped.hunks[1]!.lines.map((l) => [l.kind, l.text, l.newLine]),
      [['add', '../docs/old name.md', 1]],
    );
    assert.deepEqual([patchset.totals.files, patchset.totals.additions, patchset.totals.deletions, patchset.totals.hunks], [2, 2, 3, 3]);
  });

  it('review prints a readable summary and reattaches on the second run', () => {
    const first = rennet(['review', '--repo', repo.dir], dataDir);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /Session s-[0-9a-f]+ \(new\)/);
    assert.match(first.stdout, /\+1 -1 {2}src\/app\.ts {2}\[modified\]/);
    assert.match(first.stdout, /docs\/new name\.md {2}\[renamed from docs\/old name\.md\]/);
    assert.ok(first.stdout.includes(repo.head('feature')));
    const session = /Session (s-[0-9a-f]+)/.exec(first.stdout)![1];
    const second = rennet(['review', '--repo', repo.dir, '--base', 'main'], dataDir);
    assert.match(second.stdout, new RegExp(`Session ${session} \\(reattached\\)`));
    assert.match(second.stdout, /nothing new was written/);
  });

  it('captures a bare repository when both refs are commits', () => {
    const bare = tempDir('rennet-cli-bare-');
    execFileSync('git', ['clone', '-q', '--bare', repo.dir, bare]);
    const result = rennet(['capture', '--repo', bare, '--base', 'main', '--head', 'feature', '--json'], dataDir);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(JSON.parse(result.stdout).head, repo.head('feature'));
    rmSync(bare, { recursive: true, force: true });
  });

  it('exits non-zero with the reason on stderr and writes nothing on bad input', () => {
    const cases: Array<[string[], RegExp, number]> = [
      [['capture', '--repo', dataDir, '--base', 'main', '--head', 'feature'], /is not a git repository/, 1],
      [['capture', '--repo', repo.dir, '--base', 'main', '--head', 'no-such'], /unknown ref "no-such"/, 1],
      [['capture', '--repo', repo.dir, '--base', 'main', '--head', 'main'], /nothing to review/, 1],
      [['review', '--repo', repo.dir, '--head', 'feature', '--working-tree'], /exclude each other/, 2],
      [['capture', '--repo', repo.dir], /needs --base/, 2],
      [['frobnicate'], /unknown command/, 2],
    ];
    for (const [args, message, code] of cases) {
      const result = rennet(args, dataDir);
      assert.equal(result.code, code, `${args.join(' ')} → ${result.code}: ${result.stderr}`);
      assert.match(result.stderr, message);
      assert.equal(result.stdout, '');
    }
    repo.git('checkout', '-q', '--detach', 'feature');
    const detached = rennet(['review', '--repo', repo.dir], dataDir);
    assert.equal(detached.code, 1);
    assert.match(detached.stderr, /HEAD is detached/);
    const sessions = rennet(['review', '--repo', repo.dir, '--head', 'no-such'], dataDir);
    assert.equal(sessions.code, 1);
    assert.deepEqual(readdirSync(join(dataDir, 'patchsets')), [], 'refused requests stored no patchset');
  });
});
