import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { loadScriptedWorkerFile, parseScriptedWorkerFile, runScriptedWorker } from '../../../host/rounds/scriptedWorker';
import { TestRepo, tempDir } from '../../fixtures/gitRepo';

describe('rounds: the scripted worker', function () {
  this.timeout(60_000);
  let repo: TestRepo;
  const extraDirs: string[] = [];
  afterEach(() => {
    repo?.cleanup();
    for (const dir of extraDirs.splice(0)) new TestRepo(dir, false).cleanup();
  });

  function base(): TestRepo {
    repo = new TestRepo();
    repo.write('README.md', 'readme\n').write('src/old.ts', 'old\n');
    repo.commit('initial');
    return repo;
  }

  const read = (path: string) => readFileSync(join(repo.dir, path), 'utf8');

  it('applies write, delete and commit in order', async () => {
    base();
    const start = repo.head();
    const run = await runScriptedWorker(repo.dir, {
      steps: [
        { write: { path: 'src/deep/new.ts', content: 'export const x = 1;\n' } },
        { delete: 'src/old.ts' },
        { commit: 'first: add new, drop old' },
        { write: { path: 'src/deep/new.ts', content: 'export const x = 2;\n' } },
        { write: { path: 'README.md', content: 'readme, edited\n' } },
        { commit: 'second: edit' },
        { write: { path: 'left-uncommitted.txt', content: 'dirty\n' } },
      ],
    });
    assert.ok(run.ok, run.ok ? '' : run.error.message);
    assert.equal(run.value.steps, 7);
    assert.equal(run.value.commits.length, 2);
    assert.equal(run.value.commits[1], repo.head());
    assert.equal(repo.git('rev-parse', `${run.value.commits[0]}^`), start);
    assert.equal(
      repo.git('log', '--format=%s|%an <%ae>', `${start}..HEAD`),
      'second: edit|Rennet Scripted Worker <scripted-worker@localhost>\nfirst: add new, drop old|Rennet Scripted Worker <scripted-worker@localhost>',
    );
    assert.equal(repo.git('show', `${run.value.commits[0]}:src/deep/new.ts`), 'export const x = 1;');
    assert.equal(repo.git('ls-tree', '--name-only', '-r', run.value.commits[0] as string), 'README.md\nsrc/deep/new.ts');
    assert.equal(read('src/deep/new.ts'), 'export const x = 2;\n');
    assert.equal(read('README.md'), 'readme, edited\n');
    assert.equal(repo.git('status', '--porcelain'), '?? left-uncommitted.txt');
  });

  it('commits with a given identity', async () => {
    base();
    const run = await runScriptedWorker(repo.dir, { steps: [{ write: { path: 'a.txt', content: 'a\n' } }, { commit: 'by someone' }] }, { identity: { name: 'Demo', email: 'demo@example.com' } });
    assert.ok(run.ok);
    assert.equal(repo.git('log', '-1', '--format=%an <%ae> / %cn <%ce>'), 'Demo <demo@example.com> / Demo <demo@example.com>');
  });

  it('refuses paths that escape the workspace or reach into .git, at the step that names them', async () => {
    base();
    const outside = tempDir('rennet-outside-');
    extraDirs.push(outside);
    symlinkSync(outside, join(repo.dir, 'linked'));
    symlinkSync(join(repo.dir, '.git'), join(repo.dir, 'gitlink-dir'));
    writeFileSync(join(outside, 'victim.txt'), 'keep me\n');
    symlinkSync(join(outside, 'victim.txt'), join(repo.dir, 'victim-link'));
    const headBefore = repo.head();
    const escapee = `${basename(repo.dir)}-escaped.txt`;
    const cases: Array<[unknown, RegExp]> = [
      [{ write: { path: `../${escapee}`, content: 'x' } }, /is not a repository-relative path: it has an empty, "\." or "\.\." segment/],
      [{ write: { path: '/abs', content: 'x' } }, /it is absolute/],
      [{ write: { path: '.git/config', content: 'x' } }, /inside a \.git directory/],
      [{ write: { path: 'sub/.GIT/hooks/pre-commit', content: 'x' } }, /inside a \.git directory/],
      [{ delete: '.git/HEAD' }, /inside a \.git directory/],
      [{ write: { path: 'linked/escaped.txt', content: 'x' } }, /linked resolves outside the workspace/],
      [{ write: { path: 'linked/new/dir/escaped.txt', content: 'x' } }, /linked resolves outside the workspace/],
      [{ delete: 'linked/victim.txt' }, /linked resolves outside the workspace/],
      [{ write: { path: 'gitlink-dir/config', content: 'x' } }, /gitlink-dir resolves outside the workspace/],
      [{ write: { path: 'victim-link', content: 'overwritten\n' } }, /a symlink that resolves outside the workspace/],
    ];
    for (const [step, message] of cases) {
      const run = await runScriptedWorker(repo.dir, { steps: [{ write: { path: 'fine.txt', content: 'ok\n' } }, step] });
      assert.ok(!run.ok, JSON.stringify(step));
      assert.equal(run.error.code, 'invalid-path', JSON.stringify(step));
      assert.match(run.error.message, /^step 2 \(/);
      assert.match(run.error.message, message);
      assert.equal(run.error.detail?.step, '2');
    }
    assert.equal(readFileSync(join(outside, 'victim.txt'), 'utf8'), 'keep me\n');
    assert.ok(!existsSync(join(outside, 'escaped.txt')) && !existsSync(join(outside, 'new')));
    assert.ok(!existsSync(join(repo.dir, '..', escapee)));
    assert.equal(repo.head(), headBefore);
    // The first step's work stays, as a real worker's partial work would.
    assert.equal(read('fine.txt'), 'ok\n');

    // Deleting a symlink removes the link itself, never its target.
    const run = await runScriptedWorker(repo.dir, { steps: [{ delete: 'victim-link' }] });
    assert.ok(run.ok, run.ok ? '' : run.error.message);
    assert.ok(!existsSync(join(repo.dir, 'victim-link')));
    assert.equal(readFileSync(join(outside, 'victim.txt'), 'utf8'), 'keep me\n');
  });

  it('writes through a symlinked directory that stays inside the workspace', async () => {
    base();
    mkdirSync(join(repo.dir, 'real'));
    symlinkSync('real', join(repo.dir, 'alias'));
    const run = await runScriptedWorker(repo.dir, { steps: [{ write: { path: 'alias/a.txt', content: 'a\n' } }] });
    assert.ok(run.ok, run.ok ? '' : run.error.message);
    assert.equal(read('real/a.txt'), 'a\n');
  });

  it('refuses an empty commit, naming the step, and a delete of a missing file, naming the file', async () => {
    base();
    const empty = await runScriptedWorker(repo.dir, { steps: [{ write: { path: 'README.md', content: 'readme\n' } }, { commit: 'nothing changed' }] });
    assert.ok(!empty.ok);
    assert.equal(empty.error.code, 'empty-change');
    assert.match(empty.error.message, /^step 2 \(commit "nothing changed"\) failed: nothing to commit/);

    const missing = await runScriptedWorker(repo.dir, { steps: [{ delete: 'src/nope.ts' }, { write: { path: 'after.txt', content: 'x' } }] });
    assert.ok(!missing.ok);
    assert.equal(missing.error.code, 'not-found');
    assert.match(missing.error.message, /^step 1 \(delete src\/nope\.ts\) failed: src\/nope\.ts does not exist/);
    assert.ok(!existsSync(join(repo.dir, 'after.txt')), 'it stops at the first failing step');

    const directory = await runScriptedWorker(repo.dir, { steps: [{ delete: 'src' }] });
    assert.ok(!directory.ok);
    assert.match(directory.error.message, /src is a directory/);
  });

  it('refuses a bad script with its first problem, before touching anything', async () => {
    base();
    const cases: Array<[unknown, RegExp]> = [
      [null, /invalid: \(the file\): .*expected object/],
      [{}, /invalid: steps: .*expected array/],
      [{ steps: [], extra: 1 }, /invalid: \(the file\): Unrecognized key: "extra"/],
      [{ steps: [{ commit: 'ok' }, 'write'] }, /invalid: steps\[1\]: a step is an object/],
      [{ steps: [{ wrote: { path: 'a', content: 'b' } }] }, /invalid: steps\[0\]: a step has exactly one key, write, delete, commit or wait \(it has "wrote"\)/],
      [{ steps: [{ commit: 'a', delete: 'b' }] }, /it has "commit", "delete"/],
      [{ steps: [{ write: { path: 'a' } }] }, /invalid: steps\[0\]\.write\.content: .*expected string/],
      [{ steps: [{ write: { path: 'a', content: 'b' } }, { commit: '' }] }, /invalid: steps\[1\]\.commit: /],
      [{ steps: [{ delete: 7 }] }, /invalid: steps\[0\]\.delete: .*expected string/],
      [{ steps: [{ wait: -1 }] }, /invalid: steps\[0\]\.wait: /],
      [{ steps: [{ wait: 600_001 }] }, /invalid: steps\[0\]\.wait: /],
      [{ steps: [{ wait: 'soon' }] }, /invalid: steps\[0\]\.wait: .*expected number/],
    ];
    for (const [script, message] of cases) {
      const run = await runScriptedWorker(repo.dir, script);
      assert.ok(!run.ok, JSON.stringify(script));
      assert.equal(run.error.code, 'invalid-request');
      assert.match(run.error.message, message);
      assert.equal(parseScriptedWorkerFile(script).ok, false);
    }
    assert.equal(repo.git('status', '--porcelain'), '');
  });

  it('stops between steps once aborted', async () => {
    base();
    // A signal that turns aborted once the first step has started: checked before every step.
    let checks = 0;
    const signal = {
      get aborted() {
        return ++checks > 1;
      },
    } as AbortSignal;
    const result = await runScriptedWorker(repo.dir, { steps: [{ write: { path: 'one.txt', content: '1\n' } }, { commit: 'one' }, { write: { path: 'two.txt', content: '2\n' } }] }, { signal });
    assert.ok(!result.ok);
    assert.match(result.error.message, /stopped before step 2 \(commit "one"\); 1 of 3 steps applied/);
    assert.equal(result.error.detail?.reason, 'aborted');
    assert.equal(read('one.txt'), '1\n');
    assert.ok(!existsSync(join(repo.dir, 'two.txt')));
    assert.equal(repo.git('log', '--format=%s'), 'initial');

    const already = new AbortController();
    already.abort();
    const none = await runScriptedWorker(repo.dir, { steps: [{ write: { path: 'three.txt', content: '3\n' } }] }, { signal: already.signal });
    assert.ok(!none.ok);
    assert.match(none.error.message, /stopped before step 1 \(write three\.txt\); 0 of 1 steps applied/);
    assert.ok(!existsSync(join(repo.dir, 'three.txt')));
  });

  it('waits between steps, and a cancel ends a wait at once, naming the step', async () => {
    base();
    const started = Date.now();
    const waited = await runScriptedWorker(repo.dir, { steps: [{ write: { path: 'one.txt', content: '1\n' } }, { wait: 300 }, { commit: 'one' }] });
    assert.ok(waited.ok, waited.ok ? '' : waited.error.message);
    assert.ok(Date.now() - started >= 290, 'the wait took its time');
    assert.equal(repo.git('log', '-1', '--format=%s'), 'one');

    const abort = new AbortController();
    const stopping = runScriptedWorker(repo.dir, { steps: [{ write: { path: 'two.txt', content: '2\n' } }, { wait: 600_000 }, { commit: 'two' }] }, { signal: abort.signal });
    // Cancel once the worker is in the wait (its first step's file is there), not after a fixed delay:
    // on a loaded machine the first step can take longer than any delay would allow.
    while (!existsSync(join(repo.dir, 'two.txt'))) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 50));
    abort.abort();
    const t0 = Date.now();
    const stopped = await stopping;
    assert.ok(Date.now() - t0 < 10_000, 'the cancel ended the wait');
    assert.ok(!stopped.ok);
    assert.match(stopped.error.message, /stopped during step 2 \(wait 600000 ms\); 1 of 3 steps applied/);
    assert.equal(stopped.error.detail?.reason, 'aborted');
    assert.equal(read('two.txt'), '2\n');
    assert.equal(repo.git('log', '-1', '--format=%s'), 'one', 'no step after the wait ran');
  });

  it('loads a scripted worker file, or says why not', async () => {
    const dir = tempDir('rennet-script-');
    extraDirs.push(dir);
    const good = join(dir, 'good.json');
    writeFileSync(good, JSON.stringify({ steps: [{ write: { path: 'a.txt', content: 'a' } }, { commit: 'c' }] }));
    const loaded = await loadScriptedWorkerFile(good);
    assert.ok(loaded.ok);
    assert.equal(loaded.value.steps.length, 2);

    const missing = await loadScriptedWorkerFile(join(dir, 'nope.json'));
    assert.ok(!missing.ok);
    assert.equal(missing.error.code, 'not-found');

    writeFileSync(join(dir, 'bad.json'), '{ "steps": [ ');
    const notJson = await loadScriptedWorkerFile(join(dir, 'bad.json'));
    assert.ok(!notJson.ok);
    assert.match(notJson.error.message, /is not JSON/);

    writeFileSync(join(dir, 'shape.json'), JSON.stringify({ steps: [{ delete: '' }] }));
    const shape = await loadScriptedWorkerFile(join(dir, 'shape.json'));
    assert.ok(!shape.ok);
    assert.match(shape.error.message, /shape\.json: the scripted worker file is invalid: steps\[0\]\.delete: /);
  });
});
