import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EvalCaseResult, EvalRunManifest, type EvalCase, type EvalCorpus, type EvalHarnessSettings } from '../../../protocol/eval';
import { caseRepo, durationText, EvalRunRefusal, runEval, type CaseReview, type EvalRunDeps, type EvalRunOptions } from '../../../host/eval/run';
import { tempDir } from '../../fixtures/gitRepo';
import { BUG, CLEAN, OTHER, reportWith } from './scoreFixtures';

/**
 * The run loop over real directories, with the review injected: which cases run, which are
 * skipped, what is written, how many run at once, and what a start over an existing run refuses.
 * The whole path through the real pipeline is test/contract/evalRun.test.ts.
 */

const SETTINGS: EvalHarnessSettings = { harness: 'anthropic', baseUrl: 'http://127.0.0.1:1', model: 'm', scriptDigest: null };

describe('eval run loop: results, resume, concurrency, refusals', () => {
  let dir: string;
  let lines: string[];
  let reviewed: string[];
  let clock: number;
  beforeEach(() => {
    dir = tempDir('rennet-eval-loop-');
    lines = [];
    reviewed = [];
    clock = 0;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const corpus: EvalCorpus = { repo: 'repo', cases: [BUG, CLEAN, OTHER] };
  const options = (overrides: Partial<EvalRunOptions> = {}): EvalRunOptions => ({
    casesFile: join(dir, 'cases.json'),
    corpus,
    settings: SETTINGS,
    jobs: 1,
    outDir: join(dir, 'out'),
    storeDir: join(dir, 'out', 'store'),
    ...overrides,
  });
  const deps = (review: (c: EvalCase) => Promise<CaseReview> | CaseReview): EvalRunDeps => ({
    async reviewCase(c, _repo, log) {
      reviewed.push(c.id);
      log(`reviewing ${c.id}\n`);
      clock += 1000;
      return review(c);
    },
    now: () => new Date(Date.UTC(2026, 0, 1, 0, 0, clock / 1000)),
    monotonicMs: () => clock,
    stderr: (t) => lines.push(t),
  });
  const ok = (): CaseReview => ({ status: 'reviewed', reason: null, report: reportWith([{ severity: 'major', at: [['src/a.ts', 'head', 10, 10]] }]), sessionId: 's-1' });
  const readResult = (id: string) => EvalCaseResult.parse(JSON.parse(readFileSync(join(dir, 'out', 'cases', `${id}.json`), 'utf8')));

  it('resolves case repositories against the corpus file', () => {
    assert.equal(caseRepo(BUG, corpus, '/c/cases.json'), '/c/repo');
    assert.equal(caseRepo({ ...BUG, repo: '/elsewhere' }, corpus, '/c/cases.json'), '/elsewhere');
    assert.equal(caseRepo({ ...BUG, repo: '../r2' }, corpus, '/c/cases.json'), '/r2');
    assert.equal(caseRepo(BUG, { cases: [] }, '/c/cases.json'), null);
  });

  it('writes one result per case, a failure with its reason, the manifest, and progress with spend and ETA', async () => {
    const outcome = await runEval(
      options(),
      deps((c) => (c.id === OTHER.id ? Promise.reject(new Error('harness exploded')) : ok())),
    );
    assert.deepEqual([outcome.reviewed, outcome.skipped, outcome.failed], [3, 0, 1]);
    const bug = readResult(BUG.id);
    assert.deepEqual([bug.status, bug.repo, bug.durationMs, bug.sessionId], ['reviewed', join(dir, 'repo'), 1000, 's-1']);
    assert.deepEqual([bug.spend.turns, bug.spend.priceUsd, bug.spend.unpricedTurns], [2, 0.25, 1]);
    const other = readResult(OTHER.id);
    assert.deepEqual([other.status, other.reason, other.report], ['failed', 'the review broke: harness exploded', null]);
    const manifest = EvalRunManifest.parse(JSON.parse(readFileSync(join(dir, 'out', 'run.json'), 'utf8')));
    assert.deepEqual(
      manifest.cases.map((c) => c.id),
      [BUG.id, CLEAN.id, OTHER.id],
    );
    assert.deepEqual([manifest.resumedAt, typeof manifest.finishedAt], [[], 'string']);
    assert.equal(readFileSync(join(dir, 'out', 'logs', `${BUG.id}.log`), 'utf8').split('\n')[1], `reviewing ${BUG.id}`);
    const text = lines.join('');
    assert.match(text, /eval: 3 cases; 0 already reviewed \(skipped\); 3 to review with --harness anthropic --base-url http:\/\/127\.0\.0\.1:1 --model m, 1 at a time/);
    assert.match(
      text,
      /eval: \[1\/3\] bug-1 caught \(1 Flagged finding\) in 1\.0 s\neval: 1 of 3 done \(0 skipped, 0 failed\) · spend so far: \$0\.25 \+ 1 turn without a price · 150 tokens in, 30 out · ETA 2\.0 s/,
    );
    assert.match(
      text,
      /eval: \[3\/3\] await-1 failed: the review broke: harness exploded in 1\.0 s\neval: 3 of 3 done \(0 skipped, 1 failed\) · spend so far: \$0\.50 \+ 2 turns without a price · 300 tokens in, 60 out · done/,
    );
    assert.ok(!existsSync(join(dir, 'out', 'run.lock')), 'the lock is released');
  });

  it('a second start skips reviewed cases, reviews failed, changed and torn ones again', async () => {
    await runEval(
      options(),
      deps((c) => (c.id === OTHER.id ? { status: 'failed', reason: 'the Flagged lane failed: x', report: null, sessionId: null } : ok())),
    );
    reviewed = [];
    writeFileSync(join(dir, 'out', 'cases', `${CLEAN.id}.json`), '{"version":1,"id":"bug-1-cl');
    const changed = { ...BUG, truth: [{ path: 'src/a.ts', side: 'head' as const, startLine: 1, endLine: 1 }] };
    const outcome = await runEval(
      options({ corpus: { ...corpus, cases: [changed, CLEAN, OTHER] } }),
      deps(() => ok()),
    );
    assert.deepEqual(reviewed.sort(), [BUG.id, CLEAN.id, OTHER.id].sort(), 'the changed case, the torn file and the failed case');
    assert.equal(outcome.skipped, 0);
    reviewed = [];
    const third = await runEval(
      options({ corpus: { ...corpus, cases: [changed, CLEAN, OTHER] } }),
      deps(() => ok()),
    );
    assert.deepEqual([reviewed, third.skipped], [[], 3]);
    const manifest = EvalRunManifest.parse(JSON.parse(readFileSync(join(dir, 'out', 'run.json'), 'utf8')));
    assert.equal(manifest.resumedAt.length, 2);
    assert.match(lines.join(''), /eval: 3 cases; 3 already reviewed \(skipped\); 0 to review/);
  });

  it('--jobs N reviews N cases at once, never more', async () => {
    let inFlight = 0;
    let most = 0;
    const many: EvalCorpus = { repo: 'repo', cases: Array.from({ length: 6 }, (_, i) => ({ ...BUG, id: `c${i}` })) };
    await runEval(
      options({ corpus: many, jobs: 2 }),
      deps(async () => {
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise((r) => setTimeout(r, 20));
        inFlight--;
        return ok();
      }),
    );
    assert.equal(most, 2);
    assert.equal(reviewed.length, 6);
  });

  it('refuses, changing nothing: duplicate ids, a case without a repository, another setting, a foreign directory, a live lock', async () => {
    const refused = async (o: EvalRunOptions, message: RegExp) => {
      await assert.rejects(
        runEval(
          o,
          deps(() => ok()),
        ),
        (e: Error) => e instanceof EvalRunRefusal && message.test(e.message),
      );
    };
    await refused(options({ corpus: { repo: 'r', cases: [BUG, BUG] } }), /case ids must be unique; repeated: bug-1/);
    await refused(options({ corpus: { cases: [BUG] } }), /no repository for bug-1/);
    assert.ok(!existsSync(join(dir, 'out')), 'nothing was written');
    mkdirSync(join(dir, 'foreign'));
    writeFileSync(join(dir, 'foreign', 'notes.txt'), 'mine');
    await refused(options({ outDir: join(dir, 'foreign'), storeDir: join(dir, 'foreign', 'store') }), /is not empty and holds no run\.json/);
    await runEval(
      options(),
      deps(() => ok()),
    );
    await refused(
      options({ settings: { ...SETTINGS, model: 'other' } }),
      /holds a run with --harness anthropic --base-url http:\/\/127\.0\.0\.1:1 --model m; this is .* --model other: use another --out/,
    );
    await refused(options({ storeDir: join(dir, 'elsewhere') }), /keeps its generations in .*out\/store; pass --store/);
    writeFileSync(join(dir, 'out', 'run.lock'), `${process.ppid}\n`);
    await refused(options(), new RegExp(`another eval run \\(pid ${process.ppid}\\) is writing`));
  });

  it('durationText reads at a glance', () => {
    assert.deepEqual([durationText(850), durationText(12_340), durationText(245_000), durationText(3_720_000)], ['850 ms', '12.3 s', '4 min 05 s', '1 h 02 min']);
  });
});
