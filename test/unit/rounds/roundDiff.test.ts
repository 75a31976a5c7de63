import assert from 'node:assert/strict';
import { fileOnRoundSide, parseRawDiff, readRoundBlob, roundDiffFiles, type RoundDiffDeps } from '../../../host/rounds/roundDiff';
import { roundHasDiff, type Round } from '../../../protocol/rounds';
import { TestRepo } from '../../fixtures/gitRepo';

/**
 * A round's own diff (`rennet/rounds/diffFiles`, `rennet/rounds/readBlob`) on a real repository:
 * the files its commits changed (modified, added, deleted, renamed, binary) read from git over
 * range.from → range.to of its workspace, each side's blob as git holds it, and the refusals —
 * a path the round did not change, a side a file does not have, an escaping path, a round that
 * committed nothing, an unknown round or session.
 */
describe('host/rounds/roundDiff: a round’s own diff, read-only', function () {
  this.timeout(60_000);
  let repo: TestRepo;
  let from: string;
  let to: string;

  before(() => {
    repo = new TestRepo();
    repo.write('src/app.js', 'one\ntwo\nthree\n').write('gone.txt', 'bye\n').write('docs/old name.md', 'a\nb\nc\nd\ne\nf\n').write('same.txt', 'unchanged\n');
    from = repo.commit('before the round');
    repo
      .write('src/app.js', 'one\nTWO\nthree\nfour\n')
      .remove('gone.txt')
      .write('added.txt', 'new\n')
      .write('logo.bin', Buffer.from([0x89, 0x50, 0x00, 0x01, 0x02]));
    repo.git('mv', 'docs/old name.md', 'docs/new name.md');
    repo.write('docs/new name.md', 'a\nb\nc\nd\ne\nF\n');
    to = repo.commit('the round');
  });
  after(() => repo.cleanup());

  const round = (over: Partial<Round> = {}): Round => ({
    id: 'r-1',
    sessionId: 's-1',
    ordinal: 2,
    asks: ['ask-1'],
    workOrderDigest: 'd',
    worker: { kind: 'scripted', version: null },
    workspace: { root: repo.dir, branch: 'main' },
    fromPatchsetId: 'ps-0',
    fromGenerationId: 'g-0',
    startedAt: '2025-01-01T00:00:00Z',
    phase: 'regeneration',
    state: 'returned',
    failure: null,
    range: { from, to },
    diff: { files: 5, additions: 4, deletions: 3 },
    successorPatchsetId: 'ps-1',
    report: null,
    generationId: 'g-1',
    endedAt: '2025-01-01T00:01:00Z',
    ...over,
  });
  const deps = (rounds: Round[], repoRoot = repo.dir): RoundDiffDeps => ({
    rounds: (sessionId) => (sessionId === 's-1' ? rounds : []),
    getSession: (sessionId) => (sessionId === 's-1' ? { id: 's-1', repoRoot } : undefined),
  });

  it('lists the files the round’s commits changed, with their status, renames found', async () => {
    const listed = await roundDiffFiles(deps([round()]), { sessionId: 's-1', roundId: 'r-1' });
    assert.ok(listed.ok, listed.ok ? '' : listed.error.message);
    assert.equal(listed.value.ordinal, 2);
    assert.deepEqual([listed.value.from, listed.value.to], [from, to]);
    const byPath = Object.fromEntries(listed.value.files.map((f) => [f.path, f]));
    assert.deepEqual(byPath['src/app.js'], { path: 'src/app.js', oldPath: null, status: 'modified' });
    assert.deepEqual(byPath['added.txt'], { path: 'added.txt', oldPath: null, status: 'added' });
    assert.deepEqual(byPath['logo.bin'], { path: 'logo.bin', oldPath: null, status: 'added' });
    assert.deepEqual(byPath['gone.txt'], { path: 'gone.txt', oldPath: null, status: 'deleted' });
    assert.deepEqual(byPath['docs/new name.md'], { path: 'docs/new name.md', oldPath: 'docs/old name.md', status: 'renamed' });
    assert.equal(byPath['same.txt'], undefined, 'an unchanged file is not in the round’s diff');
    assert.equal(listed.value.files.length, 5);
  });

  it('reads each side of a changed file as git holds it at range.from and range.to', async () => {
    const d = deps([round()]);
    const read = async (path: string, side: 'base' | 'head') => {
      const r = await readRoundBlob(d, { sessionId: 's-1', roundId: 'r-1', path, side });
      assert.ok(r.ok, r.ok ? '' : r.error.message);
      return r.value;
    };
    assert.equal((await read('src/app.js', 'base')).text, 'one\ntwo\nthree\n');
    assert.equal((await read('src/app.js', 'head')).text, 'one\nTWO\nthree\nfour\n');
    assert.equal((await read('src/app.js', 'head')).oid, repo.git('rev-parse', `${to}:src/app.js`));
    assert.equal((await read('docs/old name.md', 'base')).text, 'a\nb\nc\nd\ne\nf\n', 'a rename’s base is read by its old path');
    assert.equal((await read('docs/new name.md', 'head')).text, 'a\nb\nc\nd\ne\nF\n');
    assert.equal((await read('gone.txt', 'base')).text, 'bye\n');
    const bin = await read('logo.bin', 'head');
    assert.equal(bin.binary, true);
    assert.equal(bin.text, null);
    assert.equal(bin.bytes, 5);
  });

  it('refuses a path the round did not change, a side a file does not have, and an escaping path', async () => {
    const d = deps([round()]);
    const refused = async (path: string, side: 'base' | 'head', code: string) => {
      const r = await readRoundBlob(d, { sessionId: 's-1', roundId: 'r-1', path, side });
      assert.ok(!r.ok, `${path} ${side} should be refused`);
      assert.equal(r.error.code, code, r.error.message);
    };
    await refused('same.txt', 'head', 'not-found');
    await refused('gone.txt', 'head', 'not-found');
    await refused('added.txt', 'base', 'not-found');
    await refused('docs/new name.md', 'base', 'not-found');
    await refused('../etc/passwd', 'head', 'invalid-path');
    await refused('/etc/passwd', 'base', 'invalid-path');
  });

  it('a round without commits of its own, an unknown round or session, has no diff to read', async () => {
    const none = round({ id: 'r-0', range: { from, to: from } });
    const running = round({ id: 'r-9', range: null, state: 'running' });
    assert.equal(roundHasDiff(none), false);
    assert.equal(roundHasDiff(running), false);
    assert.equal(roundHasDiff(round()), true);
    const d = deps([none, running, round()]);
    for (const roundId of ['r-0', 'r-9', 'r-404']) {
      const r = await roundDiffFiles(d, { sessionId: 's-1', roundId });
      assert.ok(!r.ok);
      assert.equal(r.error.code, 'not-found', roundId);
    }
    const other = await roundDiffFiles(d, { sessionId: 's-2', roundId: 'r-1' });
    assert.ok(!other.ok && other.error.code === 'not-found');
    const forged = await roundDiffFiles(deps([round({ range: { from: '--output=/tmp/x', to } })]), { sessionId: 's-1', roundId: 'r-1' });
    assert.ok(!forged.ok && forged.error.code === 'invalid-request', 'a range that is not two commit ids never reaches git');
  });

  it('reads from the repository when the round’s worktree is gone (its objects are shared)', async () => {
    const d = deps([round({ workspace: { root: `${repo.dir}-removed-worktree`, branch: 'main', workBranch: 'rennet/main' } })]);
    const r = await readRoundBlob(d, { sessionId: 's-1', roundId: 'r-1', path: 'added.txt', side: 'head' });
    assert.ok(r.ok, r.ok ? '' : r.error.message);
    assert.equal(r.value.text, 'new\n');
  });

  it('parses git’s raw diff: statuses, renames, copies, type changes, deleted and added sides (pure)', () => {
    const z = '0'.repeat(40);
    const a = 'a'.repeat(40);
    const b = 'b'.repeat(40);
    const raw = [
      `:100644 100644 ${a} ${b} M`,
      'm.txt',
      `:000000 100644 ${z} ${b} A`,
      'new.txt',
      `:100644 000000 ${a} ${z} D`,
      'old.txt',
      `:100644 100644 ${a} ${b} R087`,
      'from.txt',
      'to.txt',
      `:100644 100644 ${a} ${b} C100`,
      'orig.txt',
      'copy.txt',
      `:100644 120000 ${a} ${b} T`,
      'link',
      '',
    ].join('\0');
    const files = parseRawDiff(raw);
    assert.deepEqual(
      files.map((f) => [f.path, f.oldPath, f.status, f.oldOid, f.newOid]),
      [
        ['m.txt', null, 'modified', a, b],
        ['new.txt', null, 'added', null, b],
        ['old.txt', null, 'deleted', a, null],
        ['to.txt', 'from.txt', 'renamed', a, b],
        ['copy.txt', null, 'added', null, b],
        ['link', null, 'modified', a, b],
      ],
    );
    assert.equal(fileOnRoundSide(files, 'from.txt', 'base')?.oid, a);
    assert.equal(fileOnRoundSide(files, 'from.txt', 'head'), null);
    assert.equal(fileOnRoundSide(files, 'to.txt', 'head')?.oid, b);
    assert.equal(fileOnRoundSide(files, 'new.txt', 'base'), null);
    assert.deepEqual(parseRawDiff(''), []);
  });
});
