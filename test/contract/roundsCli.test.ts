import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { EvidenceUnit } from '../../protocol/rounds';
import { evidenceManifest } from '../../host/rounds/evidence';
import { measureRound, takeCheckpoint } from '../../host/rounds/checkpoint';
import { runScriptedWorker } from '../../host/rounds/scriptedWorker';
import { captureTreeDiff } from '../../host/capture/capture';
import { openRepo } from '../../host/capture/repo';
import { isolatedCliEnv, TestRepo } from '../fixtures/gitRepo';
import { openAiToolResults, startOpenAiServer, type ScriptedOpenAiServer } from '../servers/openai';
import type { Step } from '../servers/common';

/**
 * `rennet ask --branch`, `rennet round`, `rennet rounds` (built dist/cli.js, a separate process) on
 * a real repository: coding asks go out as a work order, a scripted worker edits and commits in the
 * reviewer's checkout (which has the branch out: the session shares it), the round is measured from
 * checkpoints, a classification seat on the scripted OpenAI server reads the evidence and hands in
 * its report, the host verifies it, the successor is captured and becomes the review's patchset.
 * A lying report is refused and the round fails at verification with the asks still staged;
 * --retry resumes it from its receipts without running the worker again.
 */

const CLI = join(__dirname, '..', '..', 'dist', 'cli.js');
const execFileP = promisify(execFile);

const APP = ['const x = 1;', 'function add(a, b) {', '  return a + b;', '}', 'module.exports = { add, x };', ''].join('\n');
const APP_FEATURE = ['const x = 1;', 'function add(a, b) {', '  const sum = a + b;', '  return sum;', '}', 'module.exports = { add, x };', ''].join('\n');
const APP_ROUND = ['const x = 1;', 'function add(a, b) {', '  const total = a + b;', '  return total;', '}', 'module.exports = { add, x };', ''].join('\n');
const WORKER = {
  steps: [
    { write: { path: 'src/app.js', content: APP_ROUND } },
    { write: { path: 'CHANGELOG.md', content: '# Changelog\n\n- add() names its result total.\n' } },
    { commit: 'Name the sum total; add a changelog' },
  ],
};

describe('rennet round: a scripted worker, a verified report, the successor (built dist/cli.js)', function () {
  this.timeout(180_000);
  let repo: TestRepo;
  let data: string;
  let env: NodeJS.ProcessEnv;
  let workerFile: string;
  /** The manifest the round will measure, computed by an independent run of the same worker on a copy. */
  let expected: EvidenceUnit[];
  const servers: ScriptedOpenAiServer[] = [];

  async function rennet(args: string[]) {
    try {
      const { stdout, stderr } = await execFileP(process.execPath, [CLI, ...args], { env, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code?: number; stdout?: string; stderr?: string };
      return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
    }
  }

  const reporter = (body: Record<string, unknown>, raw: string) => (Array.isArray(body.tools) && body.tools.length > 0 && raw.includes('# Rennet: round report') ? 'report' : null);
  async function reportServer(steps: Step[]) {
    const server = await startOpenAiServer({ seats: { report: steps } }, { seatOf: reporter });
    servers.push(server);
    return server;
  }
  const harness = (server: ScriptedOpenAiServer) => ['--harness', 'openai', '--base-url', server.baseUrl, '--model', 'scripted-model'];

  before(async () => {
    repo = new TestRepo();
    repo.write('src/app.js', APP).write('README.md', '# app\n');
    repo.commit('base');
    repo.branch('feature');
    repo.write('src/app.js', APP_FEATURE);
    repo.commit('Name the sum');
    data = mkdtempSync(join(tmpdir(), 'rennet-rounds-data-'));
    workerFile = join(data, 'worker.json');
    writeFileSync(workerFile, JSON.stringify(WORKER));
    env = isolatedCliEnv({ RENNET_DATA_DIR: join(data, 'store'), GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@example.com' });

    // The oracle: the same worker on a copy of the repository, measured the same way.
    const copy = mkdtempSync(join(tmpdir(), 'rennet-rounds-oracle-'));
    cpSync(repo.dir, copy, { recursive: true });
    const before = await takeCheckpoint(copy, 'oracle', 'before');
    assert.ok(before.ok);
    assert.ok((await runScriptedWorker(copy, WORKER)).ok);
    const after = await takeCheckpoint(copy, 'oracle', 'after');
    assert.ok(after.ok);
    const measured = await measureRound(copy, before.value.commit, after.value.commit);
    assert.ok(measured.ok);
    const manifest = evidenceManifest(measured.value.files);
    assert.ok(manifest.ok);
    expected = manifest.value;
    rmSync(copy, { recursive: true, force: true });
  });
  after(async () => {
    for (const s of servers) await s.close();
    repo.cleanup();
    rmSync(data, { recursive: true, force: true });
  });

  it('refuses a dispatch with nothing to do (exit 3), stages asks on the branch review, and the round returns with a verified report and the successor as the review’s patchset', async () => {
    assert.equal((await rennet(['review', '--repo', repo.dir, '--base', 'main', '--json'])).code, 0);
    const idle = await reportServer([{ text: 'Nothing.' }]);
    const nothing = await rennet(['round', '--repo', repo.dir, '--base', 'main', '--worker', `scripted:${workerFile}`, ...harness(idle)]);
    assert.equal(nothing.code, 3, nothing.stderr);
    assert.match(nothing.stderr, /Nothing is staged for the Changes lane/);

    const question = await rennet(['ask', '--repo', repo.dir, '--branch', 'feature', '--base', 'main', '--intent', 'question', '--text', 'Why a local?', '--json']);
    assert.equal(question.code, 0, question.stderr);
    const onlyQuestions = await rennet(['round', '--repo', repo.dir, '--base', 'main', '--worker', `scripted:${workerFile}`, ...harness(idle)]);
    assert.equal(onlyQuestions.code, 3);
    assert.match(onlyQuestions.stderr, /Only questions and approvals are staged/);

    const rename = JSON.parse(
      (
        await rennet([
          'ask',
          '--repo',
          repo.dir,
          '--branch',
          'feature',
          '--base',
          'main',
          '--intent',
          'request-change',
          '--path',
          'src/app.js',
          '--line',
          '3',
          '--end-line',
          '4',
          '--text',
          'Call it total, not sum.',
          '--json',
        ])
      ).stdout,
    ) as { ask: string };
    const changelog = JSON.parse((await rennet(['ask', '--repo', repo.dir, '--branch', 'feature', '--base', 'main', '--intent', 'comment', '--text', 'Add a changelog entry.', '--json'])).stdout) as {
      ask: string;
    };

    // The manifest: the app.js hunk (anchored on its first added line) and the new CHANGELOG.md.
    const app = expected.find((u) => u.path === 'src/app.js' && u.kind === 'text-hunk');
    const log = expected.find((u) => u.path === 'CHANGELOG.md' && u.kind === 'text-hunk');
    assert.ok(app && log && expected.length === 2, JSON.stringify(expected.map((u) => [u.kind, u.path])));
    const server = await reportServer([
      { toolCalls: [{ name: 'read_evidence', input: { page: 1 } }] },
      // The read tools over the round's successor: the changed file's diff, base → the round's commit.
      { toolCalls: [{ name: 'read_diff', input: { path: 'src/app.js' } }] },
      {
        toolCalls: [
          {
            name: 'submit_report',
            input: {
              outcomes: [
                { askId: changelog.ask, outcome: 'addressed', evidenceIds: [log.id], note: 'A changelog entry says add() names its result total.' },
                { askId: rename.ask, outcome: 'addressed', evidenceIds: [app.id], note: 'The local is now total.' },
              ],
              beyond: [],
            },
          },
        ],
      },
      { text: 'Done.' },
    ]);
    const out = join(data, 'round1.json');
    const ran = await rennet(['round', '--repo', repo.dir, '--base', 'main', '--worker', `scripted:${workerFile}`, ...harness(server), '--json', out]);
    assert.equal(ran.code, 0, ran.stderr);
    const round = JSON.parse(readFileSync(out, 'utf8')) as {
      round: number;
      state: string;
      failure: unknown;
      asks: string[];
      report: { outcomes: Array<{ ask: string; outcome: string; evidence: Array<{ path: string; side: string; line: number }> }> } | null;
      diff: { files: number; additions: number; deletions: number };
      range: { from: string; to: string };
      successorPatchset: string;
      generation: string | null;
      workspace: { root: string; branch: string };
    };
    assert.equal(round.state, 'returned', JSON.stringify(round.failure));
    assert.equal(round.round, 1);
    assert.deepEqual(round.asks, [rename.ask, changelog.ask], 'the work order’s order: code first, then the general ask; the question stays out');
    assert.equal(round.workspace.root, repo.dir, 'the checkout has the branch out: the round shares it');
    // The range is what git says the worker committed.
    assert.equal(round.range.to, repo.git('rev-parse', 'feature'));
    assert.equal(round.range.from, repo.git('rev-parse', 'feature~1'));
    assert.equal(repo.git('log', '-1', '--format=%s', 'feature'), 'Name the sum total; add a changelog');
    assert.deepEqual(round.diff, { files: 2, additions: 5, deletions: 2 });
    // The report in dispatch order, each anchor an added line of the round's own diff, as git shows it.
    assert.deepEqual(
      round.report?.outcomes.map((o) => [o.ask, o.outcome]),
      [
        [rename.ask, 'addressed'],
        [changelog.ask, 'addressed'],
      ],
    );
    const anchor = round.report!.outcomes[0]!.evidence[0]!;
    assert.deepEqual([anchor.path, anchor.side], ['src/app.js', 'head']);
    assert.equal(repo.git('show', `feature:src/app.js`).split('\n')[anchor.line - 1], '  const total = a + b;');
    assert.match(repo.git('diff', `${round.range.from}..${round.range.to}`, '--', 'src/app.js'), /^\+ {2}const total = a \+ b;$/m);
    // The seat read the evidence before it reported; nothing of the change was in its prompt.
    const turns = server.requests.filter((r) => r.seat === 'report');
    const results = turns.flatMap((r) => openAiToolResults(r.body ?? {}));
    assert.ok(
      results.some((r) => r.text.includes(app.id) && r.text.includes('const total')),
      'read_evidence answered the manifest',
    );
    const offered = JSON.stringify(turns[0]?.body?.tools ?? []);
    for (const name of ['list_changes', 'read_diff', 'read_file', 'search_code', 'read_context', 'read_evidence', 'submit_report'])
      assert.ok(offered.includes(`"${name}"`), `the report seat was not offered ${name}`);
    const diff = results.find((r) => r.text.startsWith('src/app.js — modified'));
    assert.ok(diff, `read_diff was not answered: ${JSON.stringify(results.map((r) => r.text.slice(0, 80)))}`);
    assert.match(diff.text, /^\+ +3 \| {3}const total = a \+ b;$/m, `read_diff does not carry the successor's added line:\n${diff.text}`);
    assert.match(diff.text, /^- +3 +\| {3}return a \+ b;$/m, 'read_diff reads from the reviewed base (main), not the round’s own start');
    const prompt = JSON.stringify((turns[0]?.body?.messages as unknown[] | undefined)?.slice(0, 2) ?? []);
    assert.ok(prompt.includes('evidence.json') && !prompt.includes('total') && !prompt.includes('Call it total'), 'the prompt names the file, never its content');
    // The successor is the review's patchset now; the dispatched asks left the lane, the question stayed.
    const snapshot = JSON.parse((await rennet(['review', '--repo', repo.dir, '--base', 'main', '--json'])).stdout) as { snapshot: { session: { id: string }; patchset: { id: string; head: string } } };
    assert.equal(snapshot.snapshot.patchset.id, round.successorPatchset);
    assert.equal(snapshot.snapshot.patchset.head, round.range.to);
    // The lenses drafted over the successor had the verified report as their round context.
    const contextReport = readFileSync(join(repo.dir, '.rennet', 'context', snapshot.snapshot.session.id, 'round-report.md'), 'utf8');
    assert.match(contextReport, /^# Round 1 report\n/);
    assert.match(contextReport, new RegExp(`## addressed: ask ${rename.ask}\\n\\n> Call it total, not sum\\.\\n\\nChanged: \`src/app\\.js\` line 3 \\(new\\)\\.`));
    assert.ok(!/\?\? /.test(repo.git('status', '--porcelain')), 'the context directory stays out of git status');
    // The ledger.
    const rounds = JSON.parse((await rennet(['rounds', '--repo', repo.dir, '--base', 'main', '--json'])).stdout) as { rounds: Array<{ round: number; state: string }> };
    assert.deepEqual(
      rounds.rounds.map((r) => [r.round, r.state]),
      [[1, 'returned']],
    );
    const again = await rennet(['round', '--repo', repo.dir, '--base', 'main', '--worker', `scripted:${workerFile}`, ...harness(idle)]);
    assert.equal(again.code, 3, 'the dispatched asks were consumed: only the question is left');
    assert.match(again.stderr, /Only questions and approvals are staged/);
  });

  it('a lying report (an invented evidence id) fails the round at verification with the ask still staged; --retry resumes from the receipts without running the worker again', async () => {
    const WORKER2 = { steps: [{ write: { path: 'README.md', content: '# app\n\nAdds numbers.\n' } }, { commit: 'Describe the app' }] };
    const file2 = join(data, 'worker2.json');
    writeFileSync(file2, JSON.stringify(WORKER2));
    const ask = JSON.parse(
      (await rennet(['ask', '--repo', repo.dir, '--branch', 'feature', '--base', 'main', '--intent', 'comment', '--text', 'Say what the app does in the README.', '--json'])).stdout,
    ) as { ask: string };
    const liar = await reportServer([
      { toolCalls: [{ name: 'read_evidence', input: {} }] },
      { toolCalls: [{ name: 'submit_report', input: { outcomes: [{ askId: ask.ask, outcome: 'addressed', evidenceIds: ['ev-0000000000000000'], note: 'Done.' }], beyond: [] } }] },
      { text: 'Done.' },
    ]);
    const failed = await rennet(['round', '--repo', repo.dir, '--base', 'main', '--worker', `scripted:${file2}`, ...harness(liar), '--json']);
    assert.equal(failed.code, 1, failed.stderr);
    const round = JSON.parse(failed.stdout) as { round: number; state: string; failure: { phase: string; message: string; retryable: boolean }; range: { to: string } };
    assert.deepEqual([round.round, round.state, round.failure.phase, round.failure.retryable], [2, 'failed', 'verification', true]);
    assert.match(round.failure.message, /unknown-evidence/);
    const head = repo.git('rev-parse', 'feature');
    assert.equal(round.range.to, head, 'the worker’s commit is measured and kept');
    // The ask is still staged (a third dispatch would take it), and nothing was consumed.
    const rounds = JSON.parse((await rennet(['rounds', '--repo', repo.dir, '--base', 'main', '--json'])).stdout) as { rounds: Array<{ round: number; state: string }> };
    assert.deepEqual(
      rounds.rounds.map((r) => [r.round, r.state]),
      [
        [1, 'returned'],
        [2, 'failed'],
      ],
    );

    // Retry with a truthful report. Its evidence id is the README hunk's, from the diff git shows for the round's commit.
    const handle = await openRepo(repo.dir);
    assert.ok(handle.ok);
    const files = await captureTreeDiff(handle.value, `${head}~1`, head);
    assert.ok(files.ok);
    const manifest = evidenceManifest(files.value);
    assert.ok(manifest.ok && manifest.value.length === 1, JSON.stringify(manifest));
    const truthful = await reportServer([
      { toolCalls: [{ name: 'read_evidence', input: {} }] },
      {
        toolCalls: [
          { name: 'submit_report', input: { outcomes: [{ askId: ask.ask, outcome: 'addressed', evidenceIds: [manifest.value[0]!.id], note: 'The README says the app adds numbers.' }], beyond: [] } },
        ],
      },
      { text: 'Done.' },
    ]);
    const retried = await rennet(['round', '--repo', repo.dir, '--base', 'main', '--worker', `scripted:${file2}`, '--retry', ...harness(truthful), '--json']);
    assert.equal(retried.code, 0, retried.stderr);
    const resumed = JSON.parse(retried.stdout) as { round: number; state: string; report: { outcomes: Array<{ ask: string; outcome: string; evidence: Array<{ path: string; line: number }> }> } };
    assert.deepEqual([resumed.round, resumed.state], [2, 'returned'], 'the same round, resumed');
    assert.equal(repo.git('rev-parse', 'feature'), head, 'the worker did not run again (its commit would be a new one)');
    assert.deepEqual(
      resumed.report.outcomes.map((o) => [o.ask, o.outcome, o.evidence[0]?.path, o.evidence[0]?.line]),
      [[ask.ask, 'addressed', 'README.md', 2]],
      'anchored on the hunk’s first added line (the blank line before the new sentence)',
    );
    assert.match(repo.git('diff', `${head}~1`, head, '--', 'README.md'), /^@@ -1 \+1,3 @@\n # app\n\+\n\+Adds numbers\.$/m);
    const ledger = JSON.parse((await rennet(['rounds', '--repo', repo.dir, '--base', 'main', '--json'])).stdout) as { rounds: Array<{ round: number; state: string }> };
    assert.deepEqual(
      ledger.rounds.map((r) => [r.round, r.state]),
      [
        [1, 'returned'],
        [2, 'returned'],
      ],
    );
  });
});
