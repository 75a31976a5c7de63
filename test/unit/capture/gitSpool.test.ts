import assert from 'node:assert/strict';
import { readdirSync, rmSync } from 'node:fs';
import { runGit, runGitSpooled } from '../../../host/git/run';
import { TestRepo, tempDir } from '../../fixtures/gitRepo';

describe('runGitSpooled: git writes to a spool file, the reader follows', function () {
  this.timeout(60_000);
  let repo: TestRepo;
  let spoolRoot: string;
  const savedTmp = process.env.TMPDIR;
  beforeEach(() => {
    repo = new TestRepo();
    // The spool directory is made under os.tmpdir(): a private one shows what is left behind.
    spoolRoot = tempDir('rennet-spool-root-');
    process.env.TMPDIR = spoolRoot;
  });
  afterEach(() => {
    if (savedTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = savedTmp;
    rmSync(spoolRoot, { recursive: true, force: true });
    repo.cleanup();
  });

  it('hands on exactly the bytes git prints, in order, for an output of several MiB, and leaves no file', async () => {
    const big = (tag: string) => Array.from({ length: 60_000 }, (_, i) => `${tag} line ${i} ${'x'.repeat(i % 50)}`).join('\n') + '\n';
    repo
      .write('a.txt', big('base'))
      .write('b.bin', Buffer.from([0, 1, 2, 3]))
      .commit('base');
    repo
      .branch('feature')
      .write('a.txt', big('head'))
      .write('b.bin', Buffer.from([3, 2, 1, 0]))
      .commit('change');
    const args = ['diff', '--raw', '-p', '-z', 'main', 'feature'];
    const chunks: Buffer[] = [];
    const spooled = await runGitSpooled(args, { cwd: repo.dir, onStdout: (chunk) => chunks.push(chunk) });
    const piped = await runGit(args, { cwd: repo.dir });
    assert.equal(spooled.code, 0, spooled.stderr);
    assert.ok(piped.stdout.length > 4 << 20, `${piped.stdout.length} bytes: more than one read`);
    assert.ok(chunks.length > 1);
    assert.ok(chunks.every((c) => c.length <= 1 << 20));
    assert.ok(Buffer.concat(chunks).equals(piped.stdout));
    assert.deepEqual(readdirSync(spoolRoot), [], 'the spool directory is removed');
  });

  it('answers git’s exit code and message when git refuses, and a throwing reader stops git and fails', async () => {
    repo.write('a.txt', 'one\n').commit('base');
    const refused = await runGitSpooled(['diff', 'main', 'no-such-ref'], { cwd: repo.dir, onStdout: () => assert.fail('no output expected') });
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /no-such-ref/);
    repo.branch('feature').write('a.txt', 'two\n').commit('change');
    await assert.rejects(
      runGitSpooled(['diff', 'main', 'feature'], {
        cwd: repo.dir,
        onStdout: () => {
          throw new Error('reader failed');
        },
      }),
      /reader failed/,
    );
    assert.deepEqual(readdirSync(spoolRoot), []);
  });
});
