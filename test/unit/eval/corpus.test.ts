import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { buildHistoryCorpus, corpusJson, historyCaseId, type HistoryCorpusReport } from '../../../host/eval/corpus';
import { EVAL_CORPUS_MAX_CHANGED_LINES, EVAL_CORPUS_MAX_FILES } from '../../../host/eval/corpusSelect';
import { EvalCorpus, evalCaseRef, type EvalTruthRange } from '../../../protocol/eval';
import { TestRepo, tempDir } from '../../fixtures/gitRepo';

const lines = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix} ${i + 1}`).join('\n') + '\n';

/**
 * The truth as plain `git diff -U0` text says it, read here independently of host/capture: per
 * hunk header, the new side's lines when it has any, else the old side's.
 */
function gitTruth(repo: TestRepo, base: string, head: string): EvalTruthRange[] {
  const text = repo.git('diff', '-U0', '--no-color', '--find-renames', '--diff-algorithm=myers', base, head);
  const truth: EvalTruthRange[] = [];
  let oldPath = '';
  let path = '';
  for (const line of text.split('\n')) {
    if (line.startsWith('--- ')) oldPath = line === '--- /dev/null' ? '' : line.slice(6);
    else if (line.startsWith('+++ ')) path = line === '+++ /dev/null' ? oldPath : line.slice(6);
    else if (line.startsWith('@@ ')) {
      const [, a, b, c, d] = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(line) as RegExpExecArray;
      const oldCount = b === undefined ? 1 : Number(b);
      const newCount = d === undefined ? 1 : Number(d);
      if (newCount > 0) truth.push({ path, side: 'head', startLine: Number(c), endLine: Number(c) + newCount - 1 });
      else truth.push({ path, side: 'base', startLine: Number(a), endLine: Number(a) + oldCount - 1 });
    }
  }
  return truth.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
}

/** Everything of the user's a corpus build must leave alone. */
function userState(repo: TestRepo) {
  return {
    head: repo.git('symbolic-ref', 'HEAD'),
    headCommit: repo.head(),
    refs: repo.git('for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads', 'refs/tags', 'refs/remotes'),
    index: createHash('sha256')
      .update(readFileSync(join(repo.dir, '.git', 'index')))
      .digest('hex'),
    status: repo.git('status', '--porcelain=v1', '--untracked-files=all'),
    app: repo.read('src/app.ts'),
    scratch: repo.read('scratch.txt'),
  };
}

describe('eval corpus from history (real git repositories)', function () {
  this.timeout(120_000);
  let repo: TestRepo;
  /** The commits that must become cases, newest first. */
  let expected: string[];
  let offByOne: string;
  let guard: string;
  let testedFix: string;
  let newModule: string;

  before(() => {
    repo = new TestRepo();
    repo.write('src/app.ts', lines('app', 30)).write('README.md', '# app\n').write('docs/guide.md', 'guide\n').commit('Initial import');
    offByOne = repo.write('src/app.ts', lines('app', 30).replace('app 12\n', 'app 12 fixed\n')).commit('fix: off-by-one in the range end');
    repo.write('src/feature.ts', lines('feature', 5)).commit('Add the export feature\n\nFixes #8');
    repo.write('README.md', '# app\n\nfixed typo\n').commit('docs: fix typo in the README');
    repo.write('docs/guide.md', 'guide\nlink\n').commit('Fix broken link in the guide');
    repo.write('src/parser.ts', lines('parse', 10)).commit('Add the parser');
    guard = repo.write('src/parser.ts', lines('parse', 10).replace('parse 4\n', 'parse 4\nif (input === "") return null;\n')).commit('fix(parser): handle empty input');
    repo.write('src/big.ts', lines('big', EVAL_CORPUS_MAX_CHANGED_LINES + 1)).commit('Fix crash on big input');
    for (let i = 0; i <= EVAL_CORPUS_MAX_FILES; i++) repo.write(`src/many/f${i}.ts`, `export const f${i} = ${i};\n`);
    repo.commit('fix: rename the constants in every module');
    // A side branch merged with a merge commit: the merge is not a case, and the side's own fix
    // is not on the first-parent history.
    repo.branch('side').write('src/side.ts', 'side fixed\n').commit('fix: side fix');
    repo.checkout('main');
    repo.git('merge', '-q', '--no-ff', '-m', 'Merge branch side: fixes #12 bug', 'side');
    repo
      .write('assets/logo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 0, 3]))
      .write('src/logo.ts', 'export const logo = "logo.png";\n')
      .commit('fix: ship the logo');
    testedFix = repo
      .write('src/app.ts', lines('app', 30).replace('app 12\n', 'app 12 fixed\n').replace('app 25\n', 'total fixed\n'))
      .write('test/app.test.ts', 'it("totals", () => {});\n')
      .commit('Correct the total\n\nFixes #7: the total was wrong');
    repo.write('test/app.test.ts', 'it("totals", () => { check(); });\n').commit('fix: only the test');
    newModule = repo.write('src/new.ts', lines('new', 4)).commit('Fix bug: the missing module');
    repo.write('src/lint.ts', 'x\n').commit('chore: fix lint');
    expected = [newModule, testedFix, guard, offByOne];
    // The user's own state: a branch checked out, a staged change, an unstaged change, an untracked file.
    repo.write('src/app.ts', 'staged\n');
    repo.git('add', 'src/app.ts');
    repo.write('src/app.ts', 'unstaged\n').write('scratch.txt', 'untracked\n');
  });
  after(() => repo.cleanup());

  let first: HistoryCorpusReport;
  it('picks exactly the fixes that change code, are small, text-only and single-parent, newest first', async () => {
    const before = userState(repo);
    const built = await buildHistoryCorpus(repo.dir, { since: null, limit: 100 });
    assert.ok(built.ok, built.ok ? '' : built.error.message);
    first = built.value;
    assert.deepEqual(
      first.corpus.cases.map((c) => c.fix),
      expected,
    );
    assert.deepEqual(
      first.corpus.cases.map((c) => c.id),
      expected.map(historyCaseId),
    );
    assert.deepEqual(first.skipped, { 'no-code': 2, 'too-many-lines': 1, 'too-many-files': 1, 'merge-or-root': 1, 'not-text': 1 });
    assert.equal(first.fixMessages, 10);
    assert.equal(first.scanned, Number(repo.git('rev-list', '--count', '--first-parent', 'HEAD')));
    assert.equal(EvalCorpus.parse(JSON.parse(corpusJson(first.corpus))).cases.length, 4);
    assert.deepEqual(
      first.corpus.cases.map((c) => c.category),
      ['bug', 'bug', 'parser', 'off-by-one'],
    );
    assert.equal(first.corpus.cases[1]!.note, 'Correct the total');
    assert.deepEqual(userState(repo), before, 'HEAD, branches, index and working tree are untouched');
  });

  it('makes each head the exact revert of its fix, kept under refs/rennet/eval/<id>', () => {
    for (const item of first.corpus.cases) {
      assert.equal(item.base, item.fix);
      assert.equal(repo.git('rev-parse', `${item.head}^@`), item.fix, 'the head sits on the fix');
      assert.equal(repo.git('rev-parse', `${item.head}^{tree}`), repo.git('rev-parse', `${item.fix}^^{tree}`), "the head's tree is the fix's parent's");
      assert.equal(repo.git('rev-parse', evalCaseRef(item.id)), item.head);
      assert.equal(repo.git('log', '-1', '--format=%an <%ae> %cn <%ce>', item.head), 'Rennet eval <eval@rennet.invalid> Rennet eval <eval@rennet.invalid>');
      assert.equal(repo.git('log', '-1', '--format=%ct', item.head), repo.git('log', '-1', '--format=%ct', item.fix));
    }
  });

  it('states as truth exactly the diff base → head, checked against git', () => {
    for (const item of first.corpus.cases) assert.deepEqual(item.truth, gitTruth(repo, item.base, item.head), item.id);
    const byFix = new Map(first.corpus.cases.map((c) => [c.fix, c.truth]));
    assert.deepEqual(byFix.get(offByOne), [{ path: 'src/app.ts', side: 'head', startLine: 12, endLine: 12 }]);
    assert.deepEqual(byFix.get(guard), [{ path: 'src/parser.ts', side: 'base', startLine: 5, endLine: 5 }], 'a revert that only deletes gives base lines');
    assert.deepEqual(byFix.get(newModule), [{ path: 'src/new.ts', side: 'base', startLine: 1, endLine: 4 }]);
    assert.deepEqual(byFix.get(testedFix), [
      { path: 'src/app.ts', side: 'head', startLine: 25, endLine: 25 },
      { path: 'test/app.test.ts', side: 'base', startLine: 1, endLine: 1 },
    ]);
  });

  it('is deterministic: a second run and a fresh clone give byte-identical cases and the same ref targets', async () => {
    const refsBefore = repo.git('for-each-ref', '--format=%(refname) %(objectname)', 'refs/rennet/eval');
    const again = await buildHistoryCorpus(repo.dir, { since: null, limit: 100 });
    assert.ok(again.ok);
    assert.equal(corpusJson(again.value.corpus), corpusJson(first.corpus));
    assert.equal(repo.git('for-each-ref', '--format=%(refname) %(objectname)', 'refs/rennet/eval'), refsBefore);
    const cloneDir = tempDir('rennet-eval-clone-');
    try {
      const clone = new TestRepo(cloneDir, false);
      clone.git('clone', '-q', repo.dir, '.');
      const cloned = await buildHistoryCorpus(cloneDir, { since: null, limit: 100 });
      assert.ok(cloned.ok);
      assert.deepEqual(
        cloned.value.corpus.cases,
        first.corpus.cases.map((c) => ({ ...c })),
      );
      assert.equal(clone.git('for-each-ref', '--format=%(refname) %(objectname)', 'refs/rennet/eval'), refsBefore);
    } finally {
      rmSync(cloneDir, { recursive: true, force: true });
    }
  });

  it('--limit keeps the newest cases; --since drops fixes committed before it', async () => {
    const limited = await buildHistoryCorpus(repo.dir, { since: null, limit: 2 });
    assert.ok(limited.ok);
    assert.deepEqual(
      limited.value.corpus.cases.map((c) => c.fix),
      expected.slice(0, 2),
    );
    assert.equal(limited.value.limited, true);
    const since = Number(repo.git('log', '-1', '--format=%ct', testedFix));
    const recent = await buildHistoryCorpus(repo.dir, { since, limit: 100 });
    assert.ok(recent.ok);
    assert.deepEqual(
      recent.value.corpus.cases.map((c) => c.fix),
      expected.slice(0, 2),
    );
    assert.equal(recent.value.skipped['before-since'], 7, 'ten fix messages, three of them at or after --since');
    assert.equal(recent.value.limited, false);
  });

  it('refuses a folder that is not a repository and a repository with no commits, naming why', async () => {
    const plain = tempDir('rennet-eval-plain-');
    const empty = new TestRepo();
    try {
      const notRepo = await buildHistoryCorpus(plain, { since: null, limit: 10 });
      assert.ok(!notRepo.ok);
      assert.equal(notRepo.error.code, 'not-a-repository');
      const noCommits = await buildHistoryCorpus(empty.dir, { since: null, limit: 10 });
      assert.ok(!noCommits.ok);
      assert.match(noCommits.error.message, /has no commits yet/);
    } finally {
      rmSync(plain, { recursive: true, force: true });
      empty.cleanup();
    }
  });
});
