import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ReviewDescriptor } from '../../protocol/exits';
import { measureRound, takeCheckpoint } from '../../host/rounds/checkpoint';
import { evidenceManifest } from '../../host/rounds/evidence';
import { runScriptedWorker } from '../../host/rounds/scriptedWorker';
import { isolatedCliEnv, TestRepo } from '../fixtures/gitRepo';
import { startFakeForge, type FakeForge } from '../servers/fakeForge';
import { startOpenAiServer, type ScriptedOpenAiServer } from '../servers/openai';

/**
 * `rennet round --pr` (built dist/cli.js, a separate process) on one's own pull request, against
 * the loopback fake forge: `review --pr` captures the request, `ask --pr` stages a change request,
 * `round --pr` is refused (exit 3) naming the fetch while the head branch is not here, then a
 * scripted worker commits on it in Rennet's worktree of the branch, a classification seat on the
 * scripted OpenAI server reports, and the successor (the head branch's tip over the request's base)
 * becomes the review's patchset. `rounds --pr` lists it. Until pushed, `post-review --pr` refuses
 * (the request's head is behind) and posts nothing; `open-pr` pushes the branch and reuses the same
 * request, whose head is then the round's commit, and the review posts there.
 */

const CLI = join(__dirname, '..', '..', 'dist', 'cli.js');
const execFileP = promisify(execFile);

const APP = ['const x = 1;', 'function add(a, b) {', '  return a + b;', '}', 'module.exports = { add, x };', ''].join('\n');
const APP_FEATURE = ['const x = 1;', 'function add(a, b) {', '  const sum = a + b;', '  return sum;', '}', 'module.exports = { add, x };', ''].join('\n');
const APP_ROUND = ['const x = 1;', 'function add(a, b) {', '  const total = a + b;', '  return total;', '}', 'module.exports = { add, x };', ''].join('\n');
const WORKER = { steps: [{ write: { path: 'src/app.js', content: APP_ROUND } }, { commit: 'Name the sum total' }] };

describe('rennet round --pr: rounds on one’s own pull request, then open-pr pushes into the same request (built dist/cli.js, fake forge)', function () {
  this.timeout(180_000);
  let forge: FakeForge;
  let src: TestRepo;
  let dir: string;
  let work: string;
  let env: NodeJS.ProcessEnv;
  let server: ScriptedOpenAiServer | null = null;

  async function rennet(args: string[]) {
    try {
      const { stdout, stderr } = await execFileP(process.execPath, [CLI, ...args], { env, encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code?: number; stdout?: string; stderr?: string };
      return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
    }
  }
  /** The evidence id of the one unit the worker's change makes, measured on a copy of the request's head. */
  async function oracleEvidence(): Promise<string> {
    const copy = mkdtempSync(join(tmpdir(), 'rennet-rounds-pr-oracle-'));
    try {
      cpSync(src.dir, copy, { recursive: true });
      await execFileP('git', ['checkout', '--quiet', 'feature'], { cwd: copy, env });
      const before = await takeCheckpoint(copy, 'oracle', 'before');
      assert.ok(before.ok);
      assert.ok((await runScriptedWorker(copy, WORKER)).ok);
      const after = await takeCheckpoint(copy, 'oracle', 'after');
      assert.ok(after.ok);
      const measured = await measureRound(copy, before.value.commit, after.value.commit);
      assert.ok(measured.ok);
      const manifest = evidenceManifest(measured.value.files);
      assert.ok(manifest.ok && manifest.value.length === 1, JSON.stringify(manifest));
      return manifest.value[0]!.id;
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  }
  const git = async (...args: string[]) => (await execFileP('git', args, { cwd: work, env, encoding: 'utf8' })).stdout.trim();

  before(async () => {
    src = new TestRepo();
    src.write('src/app.js', APP).write('README.md', '# app\n').commit('base');
    src.branch('feature');
    src.write('src/app.js', APP_FEATURE).commit('Name the sum');
    src.checkout('main');
    forge = await startFakeForge();
    forge.addUser({ login: 'alice', token: 'alice-token' });
    await forge.createRepo({ provider: 'github', owner: 'acme', name: 'calc', from: src.dir, defaultBranch: 'main' });
    await forge.openPullRequest({ provider: 'github', owner: 'acme', name: 'calc', author: 'alice', head: 'feature', base: 'main', title: 'Name the sum' });
    dir = mkdtempSync(join(tmpdir(), 'rennet-rounds-pr-'));
    work = join(dir, 'work');
    env = isolatedCliEnv({
      RENNET_DATA_DIR: join(dir, 'data'),
      RENNET_FORGES: JSON.stringify([{ host: new URL(forge.url).host, provider: 'github' }]),
      GITHUB_TOKEN: 'alice-token',
      RENNET_FORGE_CLI_TOKENS: '0',
      GIT_AUTHOR_NAME: 'A',
      GIT_AUTHOR_EMAIL: 'a@example.com',
      GIT_COMMITTER_NAME: 'A',
      GIT_COMMITTER_EMAIL: 'a@example.com',
    });
    const url = new URL(forge.url);
    await execFileP('git', ['clone', '--quiet', `${url.protocol}//alice:alice-token@${url.host}/acme/calc.git`, work], { env });
  });
  after(async () => {
    await server?.close();
    await forge.close();
    src.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('review --pr, ask --pr, round --pr (refused naming the fetch, then returned), rounds --pr; post-review refuses until open-pr pushes into the same request', async () => {
    const prHead = src.head('feature');
    const reviewed = await rennet(['review', '--repo', work, '--pr', '1', '--json']);
    assert.equal(reviewed.code, 0, reviewed.stderr);
    const before = JSON.parse(reviewed.stdout) as { snapshot: { session: { id: string }; patchset: { id: string; head: string; base: string }; pullRequest: { entry: string } } };
    assert.equal(before.snapshot.pullRequest.entry, 'own');
    assert.equal(before.snapshot.patchset.head, prHead);

    const ask = await rennet([
      'ask',
      '--repo',
      work,
      '--pr',
      '1',
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
    ]);
    assert.equal(ask.code, 0, ask.stderr);
    const staged = JSON.parse(ask.stdout) as { ask: string; session: string };
    assert.equal(staged.session, before.snapshot.session.id);

    const workerFile = join(dir, 'worker.json');
    writeFileSync(workerFile, JSON.stringify(WORKER));
    const flags = (s: ScriptedOpenAiServer) => ['--worker', `scripted:${workerFile}`, '--harness', 'openai', '--base-url', s.baseUrl, '--model', 'scripted-model'];
    // The report reads the evidence and cites its one unit (the app.js hunk), whose id an independent run of the same worker on a copy measures.
    const evidenceId = await oracleEvidence();
    server = await startOpenAiServer(
      {
        seats: {
          report: [
            { toolCalls: [{ name: 'read_evidence', input: { page: 1 } }] },
            { toolCalls: [{ name: 'submit_report', input: { outcomes: [{ askId: staged.ask, outcome: 'addressed', evidenceIds: [evidenceId], note: 'The local is total now.' }], beyond: [] } }] },
            { text: 'Done.' },
          ],
        },
      },
      { seatOf: (body, raw) => (Array.isArray(body.tools) && body.tools.length > 0 && raw.includes('# Rennet: round report') ? 'report' : null) },
    );

    // The head branch is not a branch in the clone: refused, naming the one command, nothing recorded.
    const missing = await rennet(['round', '--repo', work, '--pr', '1', ...flags(server), '--json']);
    assert.equal(missing.code, 3, missing.stderr);
    assert.match(missing.stderr, /feature, the request's head branch, is not a branch in .*git fetch origin feature:feature, then dispatch/);
    const none = JSON.parse((await rennet(['rounds', '--repo', work, '--pr', '1', '--json'])).stdout) as { session: string; rounds: unknown[] };
    assert.deepEqual([none.session, none.rounds], [before.snapshot.session.id, []]);
    assert.equal((await rennet(['round', '--repo', work, '--pr', '1', '--branch', 'feature', ...flags(server)])).code, 2, '--pr and --branch exclude each other');

    await git('fetch', '--quiet', 'origin', 'feature:feature');
    const ran = await rennet(['round', '--repo', work, '--pr', '1', ...flags(server), '--json']);
    assert.equal(ran.code, 0, ran.stderr);
    const round = JSON.parse(ran.stdout) as {
      round: number;
      state: string;
      failure: unknown;
      asks: string[];
      workspace: { root: string; branch: string };
      range: { from: string; to: string };
      successorPatchset: string;
      report: { outcomes: Array<{ ask: string; outcome: string }> };
    };
    assert.equal(round.state, 'returned', JSON.stringify(round.failure));
    assert.deepEqual(round.asks, [staged.ask]);
    assert.match(evidenceId, /^ev-/);
    assert.deepEqual(
      round.report.outcomes.map((o) => [o.ask, o.outcome]),
      [[staged.ask, 'addressed']],
    );
    // No checkout had feature out: the round ran in Rennet's worktree of it, and committed on feature.
    assert.equal(round.workspace.branch, 'feature');
    assert.ok(round.workspace.root.startsWith(join(dir, 'data', 'worktrees')), round.workspace.root);
    const tip = await git('rev-parse', 'refs/heads/feature');
    assert.deepEqual(round.range, { from: prHead, to: tip });
    assert.equal(await git('show', 'feature:src/app.js'), APP_ROUND.trimEnd());

    // The successor is the review's patchset: the round's commit over the request's base.
    const after = JSON.parse((await rennet(['rounds', '--repo', work, '--pr', '1', '--json'])).stdout) as {
      rounds: Array<{ round: number; state: string; successorPatchset: string }>;
      landing: string | null;
    };
    assert.deepEqual(
      after.rounds.map((r) => [r.round, r.state, r.successorPatchset]),
      [[1, 'returned', round.successorPatchset]],
    );
    assert.equal(after.landing, null, 'shared workspace (no sibling): nothing to land');

    // Not pushed: the request's head is behind the review's; post-review refuses and posts nothing.
    const dry = await rennet(['post-review', '--repo', work, '--pr', '1', '--dry-run', '--json']);
    assert.equal(dry.code, 0, dry.stderr);
    const descriptor = ReviewDescriptor.parse(JSON.parse(dry.stdout));
    assert.equal(descriptor.target.headSha, tip);
    const early = await rennet(['post-review', '--repo', work, '--pr', '1', '--json']);
    assert.equal(early.code, 3, early.stderr);
    assert.match(early.stderr, new RegExp(`head ${prHead.slice(0, 12)} is 1 commit behind ${tip.slice(0, 12)}, the head this review read on feature: its commits are not pushed`));
    assert.equal(forge.reviews({ owner: 'acme', name: 'calc', number: 1 }).length, 0);

    // The push exit reuses the request for the same head and base; its head is the round's commit now.
    const pushed = await rennet(['open-pr', '--repo', work, '--branch', 'feature', '--base', 'main', '--json']);
    assert.equal(pushed.code, 0, pushed.stderr);
    const opened = JSON.parse(pushed.stdout) as { number: number; reused: boolean };
    assert.deepEqual([opened.number, opened.reused], [1, true]);
    assert.equal(((await forge.pullRequest({ owner: 'acme', name: 'calc', number: 1 })) as { head: { sha: string } }).head.sha, tip);
    assert.equal((await forge.pullRequests({ owner: 'acme', name: 'calc' })).length, 1, 'no second request');

    const posted = await rennet(['post-review', '--repo', work, '--pr', '1', '--expect-composition', descriptor.compositionId, '--json']);
    assert.equal(posted.code, 0, posted.stderr);
    const reviews = forge.reviews({ owner: 'acme', name: 'calc', number: 1 }) as Array<{ commit_id: string }>;
    assert.deepEqual(
      reviews.map((r) => r.commit_id),
      [tip],
    );
    assert.ok(readFileSync(join(round.workspace.root, 'src', 'app.js'), 'utf8').includes('total'));
  });
});
