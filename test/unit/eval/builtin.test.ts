import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { buildSync } from 'esbuild';
import { builtinCaseId, writeBuiltinCorpus } from '../../../host/eval/builtin';
import { applyEdits, BUILTIN_CASE_SPECS, type BuiltinEvalCategory } from '../../../host/eval/builtinCases';
import { corpusJson } from '../../../host/eval/corpus';
import { BUILTIN_EVAL_CATEGORIES, EvalCorpus, evalCaseRef, type EvalCase } from '../../../protocol/eval';
import { tempDir } from '../../fixtures/gitRepo';

/**
 * Behaviour probes: each runs the category's program and prints "correct" or "buggy", so the
 * test shows the fix commit is right, its revert (the head) really has the bug, and the clean
 * twin's change is harmless.
 */
const PROBES: Record<BuiltinEvalCategory, { runner: 'node' | 'python'; file: string; source: string }> = {
  'off-by-one': {
    runner: 'node',
    file: 'probe.ts',
    source: `import { paginate } from './src/paginate';
const page = paginate([1, 2, 3, 4, 5], 1, 2);
console.log(JSON.stringify(page.items) === '[1,2]' ? 'correct' : 'buggy');
`,
  },
  'missing-await': {
    runner: 'node',
    file: 'probe.ts',
    source: `import { transfer } from './src/transfer';
import type { Ledger, Transaction } from './src/ledger';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const balances = new Map([['a', 10], ['b', 0]]);
let open = false;
let outsideTransaction = false;
const tx: Transaction = {
  async balance(account) { return balances.get(account) ?? 0; },
  async debit(account, amount) { await sleep(1); if (!open) outsideTransaction = true; balances.set(account, (balances.get(account) ?? 0) - amount); },
  async credit(account, amount) { await sleep(5); if (!open) outsideTransaction = true; balances.set(account, (balances.get(account) ?? 0) + amount); },
};
const ledger = { async transaction(work: (t: Transaction) => Promise<unknown>) { open = true; try { return await work(tx); } finally { open = false; } } } as Ledger;
transfer(ledger, 'a', 'b', 4).then(async () => {
  await sleep(20);
  console.log(!outsideTransaction && balances.get('b') === 4 ? 'correct' : 'buggy');
});
`,
  },
  'sql-injection': {
    runner: 'python',
    file: 'probe.py',
    source: `import sqlite3, sys
sys.path.insert(0, ".")
from app.users import find_by_email
conn = sqlite3.connect(":memory:")
conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT, email TEXT)")
conn.execute("INSERT INTO users (name, email) VALUES ('Ada', 'ada@example.com')")
try:
    injected = find_by_email(conn, "nobody') OR 1=1 --")
except sqlite3.Error:
    injected = "error"
print("correct" if injected is None and find_by_email(conn, "ADA@example.com ") is not None else "buggy")
`,
  },
  'swapped-argument': {
    runner: 'node',
    file: 'probe.ts',
    source: `import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { backup } from './src/backup';
const dir = join(process.cwd(), 'probe-data');
mkdirSync(dir, { recursive: true });
const source = join(dir, 'data.txt');
writeFileSync(source, 'precious');
backup(source, join(dir, 'backups'), new Date(Date.UTC(2024, 0, 1))).then(
  (copy) => console.log(readFileSync(copy, 'utf8') === 'precious' && readFileSync(source, 'utf8') === 'precious' ? 'correct' : 'buggy'),
  () => console.log('buggy'),
);
`,
  },
  'missing-null-check': {
    runner: 'node',
    file: 'probe.cjs',
    source: `const { displayName } = require('./src/users');
let invited;
try { invited = displayName({ id: '1', email: 'ada@example.com', profile: null }); } catch { invited = null; }
const named = displayName({ id: '2', email: 'x@example.com', profile: { firstName: 'Ada', lastName: 'Lovelace' } });
console.log(invited === 'ada@example.com' && named === 'Ada Lovelace' ? 'correct' : 'buggy');
`,
  },
  'unclosed-handle': {
    runner: 'python',
    file: 'probe.py',
    source: `import builtins, os, sys
sys.path.insert(0, "tools")
opened = []
real_open = builtins.open
def tracking_open(*args, **kwargs):
    handle = real_open(*args, **kwargs)
    opened.append(handle)
    return handle
import logstats
path = os.path.join(os.getcwd(), "probe.log")
with real_open(path, "w") as log:
    log.write("2024-01-01 10:00 ERROR boom\\n2024-01-01 10:01 INFO ok\\n")
builtins.open = tracking_open
counts = logstats.count_levels(path)
builtins.open = real_open
print("correct" if counts["ERROR"] == 1 and opened and all(h.closed for h in opened) else "buggy")
`,
  },
  'wrong-lock': {
    runner: 'node',
    file: 'probe.ts',
    source: `import { Inventory, type StockStore } from './src/inventory';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const counts = new Map([['sku-1', 1]]);
const store: StockStore = {
  async available(sku) { await sleep(5); return counts.get(sku) ?? 0; },
  async setAvailable(sku, count) { await sleep(5); counts.set(sku, count); },
};
const inventory = new Inventory(store);
Promise.all([
  inventory.reserve({ orderId: 'o1', sku: 'sku-1', quantity: 1 }),
  inventory.reserve({ orderId: 'o2', sku: 'sku-1', quantity: 1 }),
]).then((results) => console.log(results.filter(Boolean).length === 1 && counts.get('sku-1') === 0 ? 'correct' : 'buggy'));
`,
  },
};

function git(repo: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd: repo, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' } }).replace(/\n$/, '');
}

/** Lines startLine..endLine of a file at a commit. */
function linesAt(repo: string, commit: string, path: string, startLine: number, endLine: number): string {
  return git(repo, 'show', `${commit}:${path}`)
    .split('\n')
    .slice(startLine - 1, endLine)
    .join('\n');
}

/** Runs the category's probe against the program as it is at `commit`. */
function probe(repo: string, commit: string, category: BuiltinEvalCategory): string {
  const work = mkdtempSync(join(tmpdir(), 'rennet-eval-probe-'));
  try {
    for (const path of git(repo, 'ls-tree', '-r', '--name-only', commit).split('\n')) {
      mkdirSync(dirname(join(work, path)), { recursive: true });
      writeFileSync(join(work, path), git(repo, 'show', `${commit}:${path}`) + '\n');
    }
    const { runner, file, source } = PROBES[category];
    writeFileSync(join(work, file), source);
    if (runner === 'python') return execFileSync('python3', [file], { cwd: work, encoding: 'utf8' }).trim();
    let entry = file;
    if (file.endsWith('.ts')) {
      const bundle = buildSync({ entryPoints: [join(work, file)], bundle: true, platform: 'node', format: 'cjs', write: false, logLevel: 'silent' });
      entry = 'probe.bundle.cjs';
      writeFileSync(join(work, entry), bundle.outputFiles[0]!.text);
    }
    return execFileSync(process.execPath, [entry], { cwd: work, encoding: 'utf8' }).trim();
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

describe('eval built-in corpus (generated repositories)', function () {
  // 21 program runs and 14 generated repositories: generous for a loaded machine.
  this.timeout(300_000);
  let dir: string;
  let corpus: EvalCorpus;
  before(async () => {
    dir = tempDir('rennet-eval-builtin-');
    const written = await writeBuiltinCorpus(join(dir, 'repos'));
    assert.ok(written.ok, written.ok ? '' : written.error.message);
    corpus = EvalCorpus.parse(JSON.parse(corpusJson(written.value)));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const caseOf = (id: string) => corpus.cases.find((c) => c.id === id) as EvalCase;

  it('has every built-in category, each as a bug case and a clean twin with no truth', () => {
    assert.deepEqual(
      corpus.cases.map((c) => [c.category, c.clean === true]),
      BUILTIN_EVAL_CATEGORIES.flatMap((category) => [
        [category, false],
        [category, true],
      ]),
    );
    for (const spec of BUILTIN_CASE_SPECS) {
      const bug = caseOf(builtinCaseId(spec, false));
      const twin = caseOf(builtinCaseId(spec, true));
      assert.ok(bug.truth.length > 0, bug.id);
      assert.deepEqual(twin.truth, []);
      assert.equal(twin.base, bug.base, 'the twin starts from the same fix');
      assert.equal(bug.repo, twin.repo);
      for (const item of [bug, twin]) {
        assert.equal(git(item.repo as string, 'rev-parse', evalCaseRef(item.id)), item.head);
        assert.equal(git(item.repo as string, 'rev-parse', `${item.head}^`), item.base);
        assert.equal(git(item.repo as string, 'log', '-1', '--format=%B', item.head), 'Change under review\n', 'the head message never tells a bug from a twin');
      }
      assert.equal(git(bug.repo as string, 'rev-parse', `${bug.head}^{tree}`), git(bug.repo as string, 'rev-parse', `${bug.fix}^^{tree}`), 'the head is the exact revert of the fix');
      const twinChanged = git(twin.repo as string, 'diff', '--numstat', twin.base, twin.head).split('\n');
      assert.equal(twinChanged.length, 1, 'the twin changes one file');
      assert.ok(Number(twinChanged[0]!.split('\t')[0]) > 0);
      assert.equal(git(bug.repo as string, 'symbolic-ref', 'HEAD'), 'refs/heads/main');
      assert.equal(git(bug.repo as string, 'rev-parse', 'main'), bug.fix);
      assert.equal(git(bug.repo as string, 'status', '--porcelain'), '', 'the repository is checked out clean at the fix');
    }
  });

  it("points every bug's truth at the buggy lines: head ranges hold the bug's text, base ranges the fix's", () => {
    for (const spec of BUILTIN_CASE_SPECS) {
      const bug = caseOf(builtinCaseId(spec, false));
      const repo = bug.repo as string;
      for (const range of bug.truth) assert.equal(range.path, spec.bug.path);
      const head = bug.truth.filter((r) => r.side === 'head').map((r) => linesAt(repo, bug.head, r.path, r.startLine, r.endLine) + '\n');
      const base = bug.truth.filter((r) => r.side === 'base').map((r) => linesAt(repo, bug.base, r.path, r.startLine, r.endLine) + '\n');
      if (spec.bug.to === '') {
        assert.deepEqual(head, [], spec.category);
        assert.deepEqual(base, [spec.bug.from], `${spec.category}: the removed guard is the truth`);
      } else {
        assert.deepEqual(base, [], spec.category);
        assert.deepEqual(head, [spec.bug.to], `${spec.category}: the re-introduced line(s) are the truth`);
      }
    }
    assert.ok(
      corpus.cases.some((c) => c.truth.some((r) => r.side === 'base')),
      'one case exercises base-side truth',
    );
  });

  it('the fix is correct, the head re-introduces the bug and the clean twin stays correct (the programs run)', () => {
    for (const spec of BUILTIN_CASE_SPECS) {
      const bug = caseOf(builtinCaseId(spec, false));
      const twin = caseOf(builtinCaseId(spec, true));
      const repo = bug.repo as string;
      assert.equal(probe(repo, bug.base, spec.category), 'correct', `${spec.category}: the fix`);
      assert.equal(probe(repo, bug.head, spec.category), 'buggy', `${spec.category}: the head`);
      assert.equal(probe(repo, twin.head, spec.category), 'correct', `${spec.category}: the clean twin`);
    }
  });

  it('gives the same commit ids wherever it is written, and refuses a folder that is not empty', async () => {
    const other = tempDir('rennet-eval-builtin-other-');
    try {
      const again = await writeBuiltinCorpus(other);
      assert.ok(again.ok);
      assert.deepEqual(
        again.value.cases.map(({ repo: _repo, ...rest }) => rest),
        corpus.cases.map(({ repo: _repo, ...rest }) => rest),
      );
      const refused = await writeBuiltinCorpus(other);
      assert.ok(!refused.ok);
      assert.match(refused.error.message, /is not empty/);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });

  it('applyEdits refuses an edit that does not match exactly once (a data error, never a silent no-op)', () => {
    assert.deepEqual(applyEdits({ 'a.ts': 'x = 1\n' }, [{ path: 'a.ts', from: '1', to: '2' }]), { 'a.ts': 'x = 2\n' });
    assert.throws(() => applyEdits({ 'a.ts': 'x = 1\n' }, [{ path: 'a.ts', from: '3', to: '2' }]), /exactly once/);
    assert.throws(() => applyEdits({ 'a.ts': 'x = 1 + 1\n' }, [{ path: 'a.ts', from: '1', to: '2' }]), /exactly once/);
    assert.throws(() => applyEdits({ 'a.ts': 'x\n' }, [{ path: 'b.ts', from: 'x', to: 'y' }]), /does not have/);
  });
});
