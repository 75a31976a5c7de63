import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUILTIN_EVAL_CATEGORIES, EvalCorpus } from '../../protocol/eval';
import { isolatedCliEnv, TestRepo, tempDir } from '../fixtures/gitRepo';

const CLI = join(__dirname, '..', '..', 'dist', 'cli.js');

function rennet(args: string[]) {
  const result = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: isolatedCliEnv() });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('rennet eval corpus (built dist/cli.js)', function () {
  // Each case spawns the CLI several times; generous for a loaded machine.
  this.timeout(300_000);
  let repo: TestRepo;
  let out: string;
  const evalRefs = () => repo.git('for-each-ref', '--format=%(refname) %(objectname)', 'refs/rennet/eval');
  beforeEach(() => {
    repo = new TestRepo();
    repo.write('src/range.ts', 'export const last = (n: number) => n;\n').commit('Add range');
    out = join(tempDir('rennet-eval-out-'), 'corpus.json');
  });
  afterEach(() => {
    repo.cleanup();
    rmSync(join(out, '..'), { recursive: true, force: true });
  });

  it('a wrong command line is a usage error (exit 2) that names the problem and reads nothing', () => {
    const cases: Array<[string[], RegExp]> = [
      [['eval', 'corpus', '--repo', repo.dir], /needs --out FILE/],
      [['eval', 'corpus', '--out', out], /exactly one of --repo DIR or --builtin DIR/],
      [['eval', 'corpus', '--repo', repo.dir, '--builtin', out, '--out', out], /exactly one of/],
      [['eval', 'corpus', '--repo', repo.dir, '--since', '2 weeks ago', '--out', out], /--since "2 weeks ago" is not a date/],
      [['eval', 'corpus', '--repo', repo.dir, '--since', '2024-02-30', '--out', out], /is not a date/],
      [['eval', 'corpus', '--repo', repo.dir, '--limit', '0', '--out', out], /--limit "0" is not a whole number/],
      [['eval', 'corpus', '--repo', repo.dir, '--limit', '5x', '--out', out], /--limit "5x"/],
      [['eval', 'corpus', '--builtin', out, '--limit', '5', '--out', out], /apply to --repo only/],
      [['eval', 'corpus', '--repo', repo.dir, '--out', out, '--bogus'], /eval corpus: Unknown option '--bogus'/],
    ];
    for (const [args, message] of cases) {
      const result = rennet(args);
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, message);
      assert.match(result.stderr, /rennet eval corpus --repo DIR/, 'the eval usage follows');
    }
    assert.equal(existsSync(out), false);
    assert.equal(evalRefs(), '');
  });

  it('refuses (exit 1, nothing written) a folder that is not a repository, a history with no fix, and an --out it cannot write', () => {
    const plain = tempDir('rennet-eval-plain-');
    try {
      const notRepo = rennet(['eval', 'corpus', '--repo', plain, '--out', out]);
      assert.equal(notRepo.code, 1);
      assert.match(notRepo.stderr, /is not a git repository/);
    } finally {
      rmSync(plain, { recursive: true, force: true });
    }
    repo.write('docs/a.md', 'a\n').commit('docs: fix a typo');
    const noFix = rennet(['eval', 'corpus', '--repo', repo.dir, '--out', out]);
    assert.equal(noFix.code, 1);
    assert.match(noFix.stderr, /no case found on the first-parent history of HEAD of .*: 2 commits, 0 whose message says they fix a bug; nothing written/);
    assert.equal(existsSync(out), false);

    repo.write('src/range.ts', 'export const last = (n: number) => n - 1;\n').commit('fix: off-by-one in last()');
    const missingFolder = rennet(['eval', 'corpus', '--repo', repo.dir, '--out', join(out, '..', 'absent', 'corpus.json')]);
    assert.equal(missingFolder.code, 1);
    assert.match(missingFolder.stderr, /cannot write --out: the folder .*absent does not exist/);
    const folder = rennet(['eval', 'corpus', '--repo', repo.dir, '--out', join(out, '..')]);
    assert.equal(folder.code, 1);
    assert.match(folder.stderr, /is a directory/);
    assert.equal(evalRefs(), '', 'no case head is made when the corpus cannot be written');
  });

  it('writes the corpus, its heads under refs/rennet/eval, and the same bytes on a second run', () => {
    const fix = repo.write('src/range.ts', 'export const last = (n: number) => n - 1;\n').commit('fix: off-by-one in last()');
    const first = rennet(['eval', 'corpus', '--repo', repo.dir, '--out', out]);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /^wrote 1 cases to .*corpus\.json from the first-parent history of HEAD of .*: 2 commits, 1 whose message says they fix a bug\n$/);
    const text = readFileSync(out, 'utf8');
    const corpus = EvalCorpus.parse(JSON.parse(text));
    assert.equal(corpus.repo, repo.git('rev-parse', '--show-toplevel'));
    assert.deepEqual(Object.keys(JSON.parse(text).cases[0]), ['id', 'fix', 'base', 'head', 'category', 'truth', 'note']);
    const [item] = corpus.cases;
    assert.equal(item!.fix, fix);
    assert.equal(item!.category, 'off-by-one');
    assert.deepEqual(item!.truth, [{ path: 'src/range.ts', side: 'head', startLine: 1, endLine: 1 }]);
    assert.equal(repo.git('show', `${item!.head}:src/range.ts`), 'export const last = (n: number) => n;');
    assert.equal(evalRefs(), `refs/rennet/eval/${item!.id} ${item!.head}`);
    writeFileSync(out, 'stale');
    const second = rennet(['eval', 'corpus', '--repo', repo.dir, '--limit', '10', '--since', '2020-01-01', '--out', out]);
    assert.equal(second.code, 0, second.stderr);
    assert.equal(readFileSync(out, 'utf8'), text);
  });

  it('--builtin writes every category with its clean twin, and refuses a folder that is not empty', () => {
    const dir = join(out, '..', 'repos');
    const built = rennet(['eval', 'corpus', '--builtin', dir, '--out', out]);
    assert.equal(built.code, 0, built.stderr);
    assert.match(built.stdout, /wrote 14 built-in cases \(7 bugs, 7 clean twins\)/);
    const corpus = EvalCorpus.parse(JSON.parse(readFileSync(out, 'utf8')));
    assert.deepEqual([...new Set(corpus.cases.map((c) => c.category))], [...BUILTIN_EVAL_CATEGORIES]);
    assert.equal(corpus.cases.filter((c) => c.clean === true && c.truth.length === 0).length, BUILTIN_EVAL_CATEGORIES.length);
    const other = join(out, '..', 'other.json');
    const again = rennet(['eval', 'corpus', '--builtin', dir, '--out', other]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /is not empty/);
    assert.equal(existsSync(other), false);
  });
});
