import assert from 'node:assert/strict';
import { parseDiffOutput } from '../../../host/capture/parseDiff';
import { categoryOf, EVAL_CORPUS_MAX_CHANGED_LINES, EVAL_CORPUS_MAX_FILES, fixSignal, isProductCode, judgeChange, parseSinceDate } from '../../../host/eval/corpusSelect';
import { truthOfDiff } from '../../../host/eval/corpusTruth';
import type { FileChange } from '../../../protocol/patchset';

const Z = '\0';
const OID_A = '1'.repeat(40);
const OID_B = '2'.repeat(40);
const ZERO = '0'.repeat(40);

/** A `git diff --raw -p -z -U0` fixture in git's exact byte format. */
function diff(raw: string[], patch: string[]): FileChange[] {
  return parseDiffOutput(Buffer.from(raw.join('') + Z + patch.join(''), 'utf8'), { maxPatchBytesPerFile: 1 << 20 });
}

function modified(path: string, hunks: string): [string, string] {
  return [`:100644 100644 ${OID_A} ${OID_B} M${Z}${path}${Z}`, `diff --git a/${path} b/${path}\nindex ${OID_A}..${OID_B} 100644\n--- a/${path}\n+++ b/${path}\n${hunks}`];
}

/** A file change with `lines` added lines, for the size rules. */
function changeOf(path: string, lines: number, mode = '100644'): FileChange {
  const body = Array.from({ length: lines }, (_, i) => `+line ${i}\n`).join('');
  const [raw, patch] = modified(path, `@@ -0,0 +1,${lines} @@\n${body}`);
  const [file] = diff([raw.replace(/100644 100644/, `${mode} ${mode}`)], [patch]);
  return file as FileChange;
}

describe('eval corpus rules (pure)', () => {
  it('fixSignal: conventional fixes, closed issues with bug wording, the word bug and Fix subjects count; other types, reverts and typo fixes do not', () => {
    const table: Array<[string, string | null]> = [
      ['fix: handle empty input', 'conventional-fix'],
      ['fix(parser)!: reject trailing commas', 'conventional-fix'],
      ['Hotfix(api): restore the timeout', 'conventional-fix'],
      ['feat: add retries\n\nFixes #12', null],
      ['docs(readme): fix the install line', null],
      ['chore: fix bug in release script', null],
      ['Handle a closed socket\n\nThe reader hangs on it; fixes #301', 'issue-bug'],
      ['Handle empty bodies (fixed GH-44: they crashed the parser)', 'issue-bug'],
      ['Rework the cache\n\ncloses #9: the cache returned a wrong entry', 'issue-bug'],
      ['Rework the cache\n\ncloses #9', null],
      ['Add zstd support\n\nFixes #2334', null],
      ['Avoid a bug with relative URLs', 'bug-word'],
      ['Add a debug flag', null],
      ['Fix crash when the list is empty', 'fix-subject'],
      ['Fixed typo in error message', null],
      ['fix: lint', null],
      ['Revert "fix: handle empty input"', null],
      ['Prefix every key', null],
      ['', null],
    ];
    for (const [message, expected] of table) assert.equal(fixSignal(message), expected, JSON.stringify(message));
  });

  it('categoryOf: keyword classes first, then the conventional scope, else "bug"', () => {
    assert.equal(categoryOf('fix(pager): off-by-one on the last page'), 'off-by-one');
    assert.equal(categoryOf('fix: await the write before closing'), 'missing-await');
    assert.equal(categoryOf('fix(db): SQL injection in search'), 'sql-injection');
    assert.equal(categoryOf('Fix swapped arguments to copy()'), 'swapped-argument');
    assert.equal(categoryOf('fix: cannot read properties of undefined'), 'missing-null-check');
    assert.equal(categoryOf('fix(fs): file descriptor leak'), 'unclosed-handle');
    assert.equal(categoryOf('fix: race condition between two writers'), 'wrong-lock');
    assert.equal(categoryOf('fix(Core/HTTP): keep the host header'), 'core-http');
    assert.equal(categoryOf('Fix the host header'), 'bug');
    assert.equal(categoryOf('fix(): keep the host header'), 'bug');
  });

  it('isProductCode: source files count; docs, tests, examples, configuration, vendored, built and minified files do not', () => {
    for (const path of ['src/app.ts', 'lib/core/Axios.js', 'index.d.ts', 'app/users.py', 'cmd/main.go', 'Src/Parser.TSX']) assert.ok(isProductCode(path), path);
    for (const path of [
      'README.md',
      'docs/guide.ts',
      'package.json',
      'test/app.ts',
      'src/__tests__/a.ts',
      'src/app.test.ts',
      'index.test-d.ts',
      'pkg/app_test.go',
      'tests/test_users.py',
      'test_users.py',
      'examples/demo.js',
      '.eslintrc.js',
      'webpack.config.js',
      'vite.config.ts',
      'setup.py',
      'dist/axios.js',
      'lib/app.min.js',
      'node_modules/x/index.js',
      '.github/scripts/x.js',
      'Makefile',
    ]) {
      assert.equal(isProductCode(path), false, path);
    }
  });

  it('judgeChange: keeps a small text change to code and names why it refuses the others', () => {
    assert.equal(judgeChange([changeOf('src/app.ts', 3), changeOf('test/app.test.ts', 10)]), null);
    assert.equal(judgeChange([changeOf('README.md', 3), changeOf('test/app.test.ts', 3)]), 'no-code');
    assert.equal(judgeChange(Array.from({ length: EVAL_CORPUS_MAX_FILES + 1 }, (_, i) => changeOf(`src/f${i}.ts`, 1))), 'too-many-files');
    assert.equal(judgeChange(Array.from({ length: EVAL_CORPUS_MAX_FILES }, (_, i) => changeOf(`src/f${i}.ts`, 1))), null);
    assert.equal(judgeChange([changeOf('src/app.ts', EVAL_CORPUS_MAX_CHANGED_LINES + 1)]), 'too-many-lines');
    assert.equal(judgeChange([changeOf('src/app.ts', EVAL_CORPUS_MAX_CHANGED_LINES)]), null);
    assert.equal(judgeChange([changeOf('src/app.ts', 1, '120000')]), 'not-text');
    const [binaryRaw] = modified('src/logo.ts', '');
    const binary = diff([binaryRaw], [`diff --git a/src/logo.ts b/src/logo.ts\nindex ${OID_A}..${OID_B} 100644\nBinary files a/src/logo.ts and b/src/logo.ts differ\n`]);
    assert.equal(judgeChange([changeOf('src/app.ts', 1), ...binary]), 'not-text');
    const modeOnly = diff([`:100644 100755 ${OID_A} ${OID_A} M${Z}src/run.ts${Z}`], [`diff --git a/src/run.ts b/src/run.ts\nold mode 100644\nnew mode 100755\n`]);
    assert.equal(judgeChange(modeOnly), 'no-changed-lines');
  });

  it('parseSinceDate: calendar dates (midnight UTC) and ISO times with a zone; no relative or impossible dates', () => {
    assert.equal(parseSinceDate('2024-03-01'), Date.UTC(2024, 2, 1) / 1000);
    assert.equal(parseSinceDate('2024-03-01T10:30Z'), Date.UTC(2024, 2, 1, 10, 30) / 1000);
    assert.equal(parseSinceDate('2024-03-01T10:30:15+02:00'), Date.UTC(2024, 2, 1, 8, 30, 15) / 1000);
    for (const text of ['2 weeks ago', 'yesterday', '2024-02-30', '2024-13-01', '2024-03-01T25:00Z', '2024-03-01T10:30', '20240301', '']) {
      assert.equal(parseSinceDate(text), null, text);
    }
  });

  it('truthOfDiff: added lines as head ranges per hunk, a hunk that only deletes as a base range, ordered by path', () => {
    const [appRaw, appPatch] = modified('src/b.ts', '@@ -3 +3 @@\n-a\n+b\n@@ -10,2 +9,0 @@\n-guard\n-guard2\n@@ -20,0 +19,2 @@\n+x\n+y\n');
    const [libRaw, libPatch] = modified('src/a.ts', '@@ -5,3 +5 @@\n-one\n-two\n-three\n+all\n');
    const deleted = [
      `:100644 000000 ${OID_A} ${ZERO} D${Z}src/c.ts${Z}`,
      `diff --git a/src/c.ts b/src/c.ts\ndeleted file mode 100644\nindex ${OID_A}..${ZERO}\n--- a/src/c.ts\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-one\n-two\n`,
    ];
    const files = diff([appRaw, libRaw, deleted[0] as string], [appPatch, libPatch, deleted[1] as string]);
    assert.deepEqual(truthOfDiff(files), [
      { path: 'src/a.ts', side: 'head', startLine: 5, endLine: 5 },
      { path: 'src/b.ts', side: 'head', startLine: 3, endLine: 3 },
      { path: 'src/b.ts', side: 'base', startLine: 10, endLine: 11 },
      { path: 'src/b.ts', side: 'head', startLine: 19, endLine: 20 },
      { path: 'src/c.ts', side: 'base', startLine: 1, endLine: 2 },
    ]);
  });
});
