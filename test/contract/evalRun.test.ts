import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EvalCaseResult, EvalCompare, EvalRunManifest, EvalScore, type EvalCorpus } from '../../protocol/eval';
import { isolatedCliEnv, TestRepo, tempDir } from '../fixtures/gitRepo';

/**
 * `rennet eval run | score | compare` end to end through the built CLI (dist/cli.js), with the
 * scripted harness over a corpus built here in a real git repository: a bug case (an off-by-one
 * re-introduced on top of its fix), its clean twin (the same lines changed, no bug), and a case
 * whose head does not exist (the failure probe). Each case goes through the normal review
 * pipeline: capture, session, context directory, the lens seats, the store.
 */

const CLI = join(__dirname, '..', '..', 'dist', 'cli.js');

const FIXED = [
  '// Sums the first n items of a list.',
  'export function sumFirst(items: number[], n: number): number {',
  '  let total = 0;',
  '  for (let i = 0; i < n; i++) {',
  '    total += items[i] ?? 0;',
  '  }',
  '  return total;',
  '}',
  '',
  'export function lastOf(items: number[]): number | undefined {',
  '  return items[items.length - 1];',
  '}',
  '',
].join('\n');

/** The bug back: line 4 runs one past the end; line 11 is an unrelated, harmless rewrite. */
const BUGGY = FIXED.replace('i < n; i++', 'i <= n; i++').replace('items[items.length - 1]', 'items.at(-1)');
/** The clean twin: the same two lines changed, neither wrong. */
const CLEAN = FIXED.replace('i < n; i++', 'i < n; i += 1').replace('items[items.length - 1]', 'items.at(-1)');

interface Corpus {
  repo: TestRepo;
  dir: string;
  casesFile: string;
  corpus: EvalCorpus;
}

function buildCorpus(): Corpus {
  const repo = new TestRepo();
  repo.write('src/sum.ts', FIXED).commit('fix: sumFirst reads past the end of the list');
  const fix = repo.head();
  repo.branch('eval-bug').write('src/sum.ts', BUGGY);
  const bugHead = repo.commit('Revert "fix: sumFirst reads past the end of the list"');
  repo.checkout('main').branch('eval-clean').write('src/sum.ts', CLEAN);
  const cleanHead = repo.commit('refactor: step and last element');
  repo.checkout('main');
  repo.git('update-ref', 'refs/rennet/eval/off-by-one', bugHead);
  repo.git('update-ref', 'refs/rennet/eval/off-by-one-clean', cleanHead);
  const dir = tempDir('rennet-eval-corpus-');
  const corpus: EvalCorpus = {
    repo: repo.dir,
    cases: [
      { id: 'off-by-one', fix, base: fix, head: 'refs/rennet/eval/off-by-one', category: 'off-by-one', truth: [{ path: 'src/sum.ts', side: 'head', startLine: 4, endLine: 4 }] },
      { id: 'off-by-one-clean', fix, base: fix, head: 'refs/rennet/eval/off-by-one-clean', category: 'off-by-one', truth: [], clean: true },
    ],
  };
  const casesFile = join(dir, 'cases.json');
  writeFileSync(casesFile, `${JSON.stringify(corpus, null, 2)}\n`);
  return { repo, dir, casesFile, corpus };
}

/** A Flagged script: the review reads the change, the compiler reads the diff, cites `line` and raises one finding there. */
function flaggedScript(line: number, title: string, severity = 'major'): unknown {
  return {
    seats: {
      'flagged:reviewer': {
        origin: 'claude',
        turns: [
          [
            { tool: 'list_changes', input: {} },
            { tool: 'read_diff', input: { path: 'src/sum.ts' } },
            { tool: 'submit_findings', input: { findings_markdown: `## ${title} (${severity})\n\nsrc/sum.ts:${line}\n` } },
          ],
        ],
      },
      'flagged:compiler': {
        turns: [
          [
            { tool: 'read_diff', input: { path: 'src/sum.ts' } },
            { tool: 'set_document', input: { title: 'What could go wrong', intro_markdown: 'One defect in the summing helper.' } },
            { tool: 'add_section', input: { title: 'Summing' }, as: 's' },
            { tool: 'cite', input: { path: 'src/sum.ts', side: 'head', start_line: line, end_line: line }, as: 'c' },
            {
              tool: 'add_finding',
              input: {
                severity,
                category: 'correctness',
                title,
                body_markdown: 'A caller asking for every item reads one past the end and adds undefined.',
                remedy_markdown: 'Loop while i is less than n.',
                anchor: ['$c'],
                parent_id: '$s',
                origin: 'claude',
                agreement: 'solo',
                score: 80,
              },
            },
            { tool: 'finish' },
          ],
        ],
      },
    },
  };
}

function cli(args: string[], env: NodeJS.ProcessEnv = {}) {
  const result = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: isolatedCliEnv(env), timeout: 300_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

function readJson<T>(file: string, schema: { parse(v: unknown): T }): T {
  return schema.parse(JSON.parse(readFileSync(file, 'utf8')));
}

describe('rennet eval run, score and compare (built dist/cli.js, scripted harness)', function () {
  this.timeout(300_000);
  let corpus: Corpus;
  let work: string;
  beforeEach(() => {
    corpus = buildCorpus();
    work = tempDir('rennet-eval-run-');
  });
  afterEach(() => {
    corpus.repo.cleanup();
    rmSync(corpus.dir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  function script(name: string, value: unknown): string {
    const file = join(work, `${name}.json`);
    writeFileSync(file, JSON.stringify(value));
    return file;
  }

  function run(name: string, scriptFile: string, jobs: number, casesFile = corpus.casesFile) {
    const out = join(work, name);
    const result = cli(['eval', 'run', '--cases', casesFile, '--harness', `scripted:${scriptFile}`, '--jobs', String(jobs), '--out', out]);
    return { out, ...result };
  }

  it('a finding on the bug line catches it (100%, no noise), the same finding on the clean twin is a false positive, and a failed case is counted apart', () => {
    // A third case whose head does not exist: the review cannot run, and says why.
    const withMissing: EvalCorpus = {
      ...corpus.corpus,
      cases: [
        ...corpus.corpus.cases,
        { id: 'gone', fix: 'HEAD', base: 'main', head: 'refs/rennet/eval/gone', category: 'missing-await', truth: [{ path: 'src/a.ts', side: 'head', startLine: 1, endLine: 1 }] },
      ],
    };
    const casesFile = join(corpus.dir, 'with-missing.json');
    writeFileSync(casesFile, JSON.stringify(withMissing));
    const a = run('a', script('on-bug', flaggedScript(4, 'sumFirst reads one past the end')), 2, casesFile);
    // The failed case leaves the run unmeasured in part: exit 1, saying how many and how to retry them.
    assert.equal(a.code, 1, a.stderr);
    assert.match(a.stderr, /1 of 3 cases failed or did not run .* run the same command again to retry only those/);

    const manifest = readJson(join(a.out, 'run.json'), EvalRunManifest);
    assert.equal(manifest.settings.harness, 'scripted');
    assert.match(manifest.settings.scriptDigest ?? '', /^[0-9a-f]{64}$/);
    assert.equal(manifest.jobs, 2);
    assert.match(manifest.casesDigest, /^[0-9a-f]{64}$/);
    assert.ok(manifest.finishedAt !== null);
    assert.deepEqual(
      manifest.cases.map((c) => c.id),
      ['off-by-one', 'off-by-one-clean', 'gone'],
    );

    const bug = readJson(join(a.out, 'cases', 'off-by-one.json'), EvalCaseResult);
    assert.equal(bug.status, 'reviewed');
    assert.ok(bug.report, 'the review report is kept');
    assert.equal(bug.report.boards.find((b) => b.lens === 'flagged')?.state, 'settled');
    assert.ok(bug.spend.turns >= 2 && bug.spend.unpricedTurns === bug.spend.turns, 'the scripted harness reports no price, and that is said, not zeroed');
    assert.ok(bug.sessionId && existsSync(join(a.out, 'store')), 'the generation is kept in OUT/store');
    const gone = readJson(join(a.out, 'cases', 'gone.json'), EvalCaseResult);
    assert.equal(gone.status, 'failed');
    assert.match(gone.reason ?? '', /cannot capture .*refs\/rennet\/eval\/gone/);

    const score = readJson(join(a.out, 'score.json'), EvalScore);
    assert.deepEqual([score.rules.threshold, score.rules.tolerance], ['major', 3]);
    assert.equal(score.totals.catchRate, 1);
    assert.deepEqual([score.totals.caught, score.totals.missed, score.totals.failed, score.totals.noise], [1, 0, 1, 0]);
    assert.deepEqual([score.totals.cleanReviewed, score.totals.falsePositives, score.totals.falsePositivesPerCleanCase], [1, 1, 1]);
    assert.equal(score.totals.findingsPerReview, 1);
    const byId = new Map(score.cases.map((c) => [c.id, c]));
    assert.equal(byId.get('off-by-one')?.outcome, 'caught');
    assert.equal(byId.get('off-by-one')?.findings[0]?.class, 'catch');
    assert.deepEqual(byId.get('off-by-one')?.findings[0]?.anchors, [{ path: 'src/sum.ts', side: 'head', startLine: 4, endLine: 4 }]);
    assert.equal(byId.get('off-by-one-clean')?.outcome, 'false-positive');
    assert.equal(byId.get('gone')?.outcome, 'failed');
    assert.deepEqual(
      score.byCategory.map((c) => [c.category, c.catchRate, c.failed]),
      [
        ['off-by-one', 1, 0],
        ['missing-await', null, 1],
      ],
    );
    assert.match(a.stdout, /catch rate {8}100% \(1 of 1 reviewed bug cases\)/);
    assert.match(a.stdout, /failed {12}1 \(not counted as misses\)/);
    assert.match(a.stderr, /eval: \[\d\/3\] gone failed: cannot capture/);
    assert.match(a.stderr, /eval: 3 of 3 done \(0 skipped, 1 failed\) · spend so far: no price reported \(\d+ turns\) · no token counts reported · done/);
    const page = readFileSync(join(a.out, 'report.html'), 'utf8');
    assert.match(page, /<svg class="chart"/);
    assert.doesNotMatch(page, /<script|https?:\/\/|<link|<img/i);

    // Rescoring with a stricter threshold: the major finding no longer catches; it is on target, so not noise either.
    const strict = cli(['eval', 'score', '--run', a.out, '--threshold', 'blocker', '--json', join(work, 'strict.json')]);
    assert.equal(strict.code, 0, strict.stderr);
    const strictScore = readJson(join(work, 'strict.json'), EvalScore);
    assert.deepEqual([strictScore.totals.caught, strictScore.totals.missed, strictScore.totals.noise], [0, 1, 0]);
    assert.equal(strictScore.cases[0]?.findings[0]?.class, 'below-threshold');

    // The judge pass: one turn per catching finding, graded beside the score, never in it.
    const judge = script('judge', {
      seats: {
        'flagged:reviewer': {
          turns: [
            [
              { tool: 'read_finding' },
              { tool: 'read_diff', input: { path: 'src/sum.ts' } },
              { tool: 'grade_finding', input: { grade: 'explains', reason: 'It names the loop bound and what a caller gets back.' } },
            ],
          ],
        },
      },
    });
    const judged = cli(['eval', 'score', '--run', a.out, '--judge', `scripted:${judge}`, '--json', join(work, 'judged.json'), '--html', join(work, 'judged.html')]);
    assert.equal(judged.code, 0, judged.stderr);
    const judgedScore = readJson(join(work, 'judged.json'), EvalScore);
    assert.deepEqual(judgedScore.totals, score.totals, 'the grades change nothing in the score');
    assert.equal(judgedScore.judge?.settings.harness, 'scripted');
    assert.deepEqual(
      judgedScore.judge?.grades.map((g) => [g.caseId, g.grade, g.reason, g.failure]),
      [['off-by-one', 'explains', 'It names the loop bound and what a caller gets back.', null]],
    );
    assert.match(judged.stdout, /Judge \(scripted, beside the score\): 1 of 1 graded catching findings explain the impact; 0 without a grade/);
    assert.match(readFileSync(join(work, 'judged.html'), 'utf8'), /<td class="grade-explains">explains<\/td>/);
    // A judge that reads and never grades: recorded without a grade, with why; never a made-up one.
    const silent = script('silent-judge', { seats: { 'flagged:reviewer': { turns: [[{ tool: 'read_finding' }]] } } });
    const unjudged = cli(['eval', 'score', '--run', a.out, '--judge', `scripted:${silent}`, '--json', join(work, 'unjudged.json')]);
    assert.equal(unjudged.code, 0, unjudged.stderr);
    assert.deepEqual(
      readJson(join(work, 'unjudged.json'), EvalScore).judge?.grades.map((g) => [g.grade, g.failure]),
      [[null, 'the judge ended its turn without a grade']],
    );
  });

  it('a finding elsewhere misses (0%) with its noise counted, and compare lists the case that changed', () => {
    const a = run('a', script('on-bug', flaggedScript(4, 'sumFirst reads one past the end')), 1);
    assert.equal(a.code, 0, a.stderr);
    const b = run('b', script('elsewhere', flaggedScript(11, 'lastOf changed its spelling')), 2);
    assert.equal(b.code, 0, b.stderr);
    const score = readJson(join(b.out, 'score.json'), EvalScore);
    assert.equal(score.totals.catchRate, 0);
    assert.deepEqual([score.totals.caught, score.totals.missed, score.totals.noise, score.totals.noisePerBugCase], [0, 1, 1, 1]);
    assert.equal(score.cases[0]?.outcome, 'missed');
    assert.equal(score.cases[0]?.findings[0]?.class, 'noise');
    assert.equal(score.cases[1]?.outcome, 'false-positive');

    // Within the tolerance: line 11 is 7 lines from the truth, so --tolerance 7 catches it.
    const wide = cli(['eval', 'score', '--run', b.out, '--tolerance', '7', '--json', join(work, 'wide.json')]);
    assert.equal(wide.code, 0, wide.stderr);
    assert.equal(readJson(join(work, 'wide.json'), EvalScore).totals.caught, 1);

    const json = join(work, 'compare.json');
    const html = join(work, 'compare.html');
    const compared = cli(['eval', 'compare', '--run', a.out, '--run', b.out, '--json', json, '--html', html]);
    assert.equal(compared.code, 0, compared.stderr);
    const comparison = readJson(json, EvalCompare);
    assert.deepEqual(comparison.changed, [{ id: 'off-by-one', category: 'off-by-one', clean: false, a: 'caught', b: 'missed' }]);
    assert.deepEqual([comparison.a.totals.catchRate, comparison.b.totals.catchRate], [1, 0]);
    assert.match(compared.stdout, /off-by-one: caught → missed/);
    const page = readFileSync(html, 'utf8');
    assert.match(page, /class="bar-a"/);
    assert.match(page, /class="bar-b"/);
    assert.doesNotMatch(page, /<script|https?:\/\//i);

    // Another corpus: compare refuses, naming why, and writes nothing.
    const other: EvalCorpus = { ...corpus.corpus, cases: corpus.corpus.cases.slice(0, 1) };
    const otherFile = join(corpus.dir, 'other.json');
    writeFileSync(otherFile, JSON.stringify(other));
    const c = run('c', script('on-bug-2', flaggedScript(4, 'sumFirst reads one past the end')), 1, otherFile);
    assert.equal(c.code, 0, c.stderr);
    const refused = cli(['eval', 'compare', '--run', a.out, '--run', c.out, '--json', join(work, 'refused.json')]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /cannot compare: the runs reviewed different corpora/);
    assert.ok(!existsSync(join(work, 'refused.json')));
  });

  it('the HTML page escapes a hostile finding title and case text', () => {
    const hostile = '<img src=x onerror=alert(1)><script>alert(2)</script>';
    const a = run('a', script('hostile', flaggedScript(4, hostile)), 1);
    assert.equal(a.code, 0, a.stderr);
    const page = readFileSync(join(a.out, 'report.html'), 'utf8');
    assert.ok(!page.includes(hostile), 'the title is not written raw');
    assert.ok(page.includes('&lt;img src=x onerror=alert(1)&gt;&lt;script&gt;alert(2)&lt;/script&gt;'), 'the title is shown, escaped');
    assert.doesNotMatch(page, /<script|<img/i);
    assert.match(page, /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline';/);
  });

  it('resumes after kill -9 without re-running a finished case', async () => {
    // Four cases (the bug and its twin, twice over under other ids) so the kill lands mid-run.
    const four: EvalCorpus = { ...corpus.corpus, cases: [...corpus.corpus.cases, ...corpus.corpus.cases.map((c) => ({ ...c, id: `${c.id}-again` }))] };
    const casesFile = join(corpus.dir, 'four.json');
    writeFileSync(casesFile, JSON.stringify(four));
    const scriptFile = script('on-bug', flaggedScript(4, 'sumFirst reads one past the end'));
    const out = join(work, 'killed');
    const args = [CLI, 'eval', 'run', '--cases', casesFile, '--harness', `scripted:${scriptFile}`, '--jobs', '1', '--out', out];
    const child = spawn(process.execPath, args, { env: isolatedCliEnv(), stdio: ['ignore', 'ignore', 'ignore'] });
    const casesDir = join(out, 'cases');
    const finished = () => (existsSync(casesDir) ? readdirSync(casesDir).filter((n) => n.endsWith('.json')) : []);
    const start = Date.now();
    while (finished().length === 0) {
      if (Date.now() - start > 120_000) throw new Error('no case finished within two minutes');
      if (child.exitCode !== null) throw new Error(`the run exited (${child.exitCode}) before any case finished`);
      await new Promise((r) => setTimeout(r, 5));
    }
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const done = finished();
    assert.ok(done.length >= 1 && done.length < 4, `the kill landed mid-run (${done.length} of 4 finished)`);
    assert.ok(existsSync(join(out, 'run.lock')), 'the killed run left its lock behind');
    const before = new Map(done.map((name) => [name, statSync(join(casesDir, name))]));

    const resumed = cli(['eval', 'run', '--cases', casesFile, '--harness', `scripted:${scriptFile}`, '--jobs', '1', '--out', out]);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.match(resumed.stderr, new RegExp(`eval: 4 cases; ${done.length} already reviewed \\(skipped\\); ${4 - done.length} to review`));
    for (const [name, stat] of before) {
      const now = statSync(join(casesDir, name));
      assert.deepEqual([now.ino, now.mtimeMs], [stat.ino, stat.mtimeMs], `${name} was not written again`);
      assert.doesNotMatch(resumed.stderr, new RegExp(`\\] ${name.replace('.json', '')} `), `${name} was not reviewed again`);
    }
    const manifest = readJson(join(out, 'run.json'), EvalRunManifest);
    assert.equal(manifest.resumedAt.length, 1);
    const score = readJson(join(out, 'score.json'), EvalScore);
    assert.deepEqual([score.totals.caught, score.totals.missed, score.totals.failed, score.totals.notRun, score.totals.falsePositives], [2, 0, 0, 0, 2]);
    assert.ok(!existsSync(join(out, 'run.lock')), 'the finished run released its lock');

    // A third start finds everything reviewed and reviews nothing.
    const again = cli(['eval', 'run', '--cases', casesFile, '--harness', `scripted:${scriptFile}`, '--jobs', '2', '--out', out]);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stderr, /eval: 4 cases; 4 already reviewed \(skipped\); 0 to review/);
    // Another setting in the same directory is refused, naming it.
    const other = cli(['eval', 'run', '--cases', casesFile, '--harness', `scripted:${script('elsewhere', flaggedScript(11, 'x'))}`, '--out', out]);
    assert.equal(other.code, 1);
    assert.match(other.stderr, /holds a run with --harness scripted \(script [0-9a-f]{12}\); this is --harness scripted \(script [0-9a-f]{12}\): use another --out/);
  });

  it('refuses bad input before anything is written', () => {
    const scriptFile = script('on-bug', flaggedScript(4, 'x'));
    const out = join(work, 'never');
    const cases: Array<[string[], RegExp, number]> = [
      [['eval', 'run', '--harness', `scripted:${scriptFile}`, '--out', out], /eval run needs --cases FILE/, 2],
      [['eval', 'run', '--cases', corpus.casesFile, '--harness', `scripted:${scriptFile}`, '--jobs', '9', '--out', out], /--jobs is a whole number from 1 to 8, not "9"/, 2],
      [['eval', 'run', '--cases', corpus.casesFile, '--harness', 'gpt-7', '--out', out], /unknown harness "gpt-7"/, 2],
      [['eval', 'run', '--cases', join(work, 'missing.json'), '--harness', `scripted:${scriptFile}`, '--out', out], /cannot read --cases .*missing\.json: ENOENT/, 1],
      [['eval', 'score', '--run', out], /--run .* is not a directory/, 1],
      [['eval', 'score', '--run', work, '--threshold', 'huge'], /--threshold is one of blocker, major, minor, nit, not "huge"/, 2],
      [['eval', 'compare', '--run', work], /eval compare takes two runs/, 2],
    ];
    writeFileSync(join(work, 'dupes.json'), JSON.stringify({ ...corpus.corpus, cases: [corpus.corpus.cases[0], corpus.corpus.cases[0]] }));
    cases.push([['eval', 'run', '--cases', join(work, 'dupes.json'), '--harness', `scripted:${scriptFile}`, '--out', out], /case ids must be unique; repeated: off-by-one/, 1]);
    writeFileSync(join(work, 'bad.json'), JSON.stringify({ cases: [{ id: 'x' }] }));
    cases.push([['eval', 'run', '--cases', join(work, 'bad.json'), '--harness', `scripted:${scriptFile}`, '--out', out], /is not a case file \(cases\.0\.fix:/, 1]);
    for (const [args, message, code] of cases) {
      const result = cli(args);
      assert.equal(result.code, code, `${args.join(' ')}\n${result.stderr}`);
      assert.match(result.stderr, message, args.join(' '));
    }
    assert.ok(!existsSync(out), 'nothing was written');
  });
});
