import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { measureRound, takeCheckpoint } from '../../host/rounds/checkpoint';
import { evidenceManifest } from '../../host/rounds/evidence';
import { runScriptedWorker } from '../../host/rounds/scriptedWorker';
import { worktreePlacement } from '../../host/rounds/workspace';
import { Store } from '../../host/store';
import { isolatedCliEnv, TestRepo } from '../fixtures/gitRepo';
import { startOpenAiServer, type ScriptedOpenAiServer } from '../servers/openai';

/**
 * `rennet round --workspace own`, `rennet land`, `rennet rounds --json`'s landing line and
 * `rennet archive` (built dist/cli.js, separate processes) on a real repository whose checkout has
 * the branch out: the scripted worker commits on the sibling `rennet/feature`, the reviewer's branch
 * and files do not move, the successor is feature at the sibling's tip; the landing line says the
 * branch has not moved; a land git refuses (a local edit in the way) exits 3 with git's words and
 * changes nothing; the land fast-forwards feature and the line is gone; archive collects the sibling.
 */

const CLI = join(__dirname, '..', '..', 'dist', 'cli.js');
const execFileP = promisify(execFile);

const APP = ['const x = 1;', 'function add(a, b) {', '  return a + b;', '}', 'module.exports = { add, x };', ''].join('\n');
const APP_FEATURE = ['const x = 1;', 'function add(a, b) {', '  const sum = a + b;', '  return sum;', '}', 'module.exports = { add, x };', ''].join('\n');
const APP_ROUND = ['const x = 1;', 'function add(a, b) {', '  const total = a + b;', '  return total;', '}', 'module.exports = { add, x };', ''].join('\n');
const WORKER = { steps: [{ write: { path: 'src/app.js', content: APP_ROUND } }, { commit: 'Name the sum total' }] };

describe('rennet round --workspace own, land, rounds --json, archive (built dist/cli.js)', function () {
  this.timeout(180_000);
  let repo: TestRepo;
  let data: string;
  let env: NodeJS.ProcessEnv;
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
  const where = ['--repo', '', '--branch', 'feature', '--base', 'main'];

  before(() => {
    repo = new TestRepo();
    repo.write('src/app.js', APP).write('README.md', '# app\n');
    repo.commit('base');
    repo.branch('feature');
    repo.write('src/app.js', APP_FEATURE);
    repo.commit('Name the sum');
    where[1] = repo.dir;
    data = mkdtempSync(join(tmpdir(), 'rennet-land-data-'));
    env = isolatedCliEnv({ RENNET_DATA_DIR: join(data, 'store'), GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@example.com' });
  });
  after(async () => {
    for (const s of servers) await s.close();
    repo.cleanup();
    rmSync(data, { recursive: true, force: true });
  });

  it('the round commits on rennet/feature; the line says feature has not moved; a refused land exits 3 and changes nothing; the land clears the line; archive collects the sibling', async () => {
    assert.equal((await rennet(['review', '--repo', repo.dir, '--base', 'main', '--json'])).code, 0);
    const ask = JSON.parse(
      (await rennet(['ask', ...where, '--intent', 'request-change', '--path', 'src/app.js', '--line', '3', '--end-line', '4', '--text', 'Call it total, not sum.', '--json'])).stdout,
    ) as { ask: string };

    // The one evidence unit the round will measure: the same worker on a copy, measured the same way.
    const copy = mkdtempSync(join(tmpdir(), 'rennet-land-oracle-'));
    cpSync(repo.dir, copy, { recursive: true });
    const b = await takeCheckpoint(copy, 'oracle', 'before');
    assert.ok(b.ok && (await runScriptedWorker(copy, WORKER)).ok);
    const a = await takeCheckpoint(copy, 'oracle', 'after');
    assert.ok(a.ok);
    const measured = await measureRound(copy, b.value.commit, a.value.commit);
    assert.ok(measured.ok);
    const manifest = evidenceManifest(measured.value.files);
    assert.ok(manifest.ok && manifest.value.length === 1);
    rmSync(copy, { recursive: true, force: true });

    const reporter = (body: Record<string, unknown>, raw: string) => (Array.isArray(body.tools) && body.tools.length > 0 && raw.includes('# Rennet: round report') ? 'report' : null);
    const server = await startOpenAiServer(
      {
        seats: {
          report: [
            { toolCalls: [{ name: 'read_evidence', input: {} }] },
            { toolCalls: [{ name: 'submit_report', input: { outcomes: [{ askId: ask.ask, outcome: 'addressed', evidenceIds: [manifest.value[0]!.id], note: 'The local is total.' }], beyond: [] } }] },
            { text: 'Done.' },
          ],
        },
      },
      { seatOf: reporter },
    );
    servers.push(server);
    const workerFile = join(data, 'worker.json');
    writeFileSync(workerFile, JSON.stringify(WORKER));
    const featureTip = repo.head('feature');

    assert.equal((await rennet(['rounds', ...where, '--workspace', 'own', '--json'])).code, 2, '--workspace is an option of round');
    assert.equal((await rennet(['round', ...where, '--workspace', 'mine', '--worker', `scripted:${workerFile}`])).code, 2);

    const ran = await rennet([
      'round',
      ...where,
      '--workspace',
      'own',
      '--worker',
      `scripted:${workerFile}`,
      '--harness',
      'openai',
      '--base-url',
      server.baseUrl,
      '--model',
      'scripted-model',
      '--json',
    ]);
    assert.equal(ran.code, 0, ran.stderr);
    const round = JSON.parse(ran.stdout) as {
      state: string;
      failure: unknown;
      workspace: { root: string; branch: string; workBranch?: string };
      range: { from: string; to: string };
      successorPatchset: string;
    };
    assert.equal(round.state, 'returned', JSON.stringify(round.failure));
    const place = worktreePlacement(join(data, 'store'), repo.dir, 'rennet/feature');
    assert.deepEqual(round.workspace, { root: place, branch: 'feature', workBranch: 'rennet/feature' });
    assert.equal(repo.head('rennet/feature'), round.range.to, 'the worker committed on the sibling');
    assert.equal(round.range.from, featureTip);
    assert.equal(repo.head('feature'), featureTip, 'the reviewer’s branch did not move');
    assert.equal(repo.read('src/app.js'), APP_FEATURE, 'nor did the reviewer’s files');
    assert.equal(repo.git('status', '--porcelain'), '');
    const store = await Store.open(join(data, 'store'));
    try {
      const successor = store.getPatchset(round.successorPatchset);
      assert.deepEqual([successor?.headRef, successor?.head], ['feature', round.range.to], 'the successor is feature, at the sibling’s tip');
    } finally {
      store.close();
    }

    const rounds = async () => {
      const listed = await rennet(['rounds', ...where, '--json']);
      assert.equal(listed.code, 0, listed.stderr);
      return JSON.parse(listed.stdout) as { rounds: Array<{ state: string }>; landing: string | null };
    };
    const before = await rounds();
    assert.deepEqual(
      before.rounds.map((r) => r.state),
      ['returned'],
    );
    assert.equal(before.landing, "The round's commits are on rennet/feature. feature has not moved.");

    // A land git refuses: the reviewer has an edit of the file the round changed.
    repo.write('src/app.js', `${APP_FEATURE}// mine\n`);
    const refused = await rennet(['land', ...where, '--json']);
    assert.equal(refused.code, 3, refused.stderr);
    assert.match(
      refused.stderr,
      /git refused to fast-forward feature to rennet\/feature in .*; nothing changed:\n[^]*Your local changes to the following files would be overwritten by merge:\n\s+src\/app\.js/,
    );
    assert.equal(repo.head('feature'), featureTip);
    assert.equal(repo.read('src/app.js'), `${APP_FEATURE}// mine\n`);
    repo.git('checkout', '--', 'src/app.js');

    const landed = await rennet(['land', ...where, '--json']);
    assert.equal(landed.code, 0, landed.stderr);
    const land = JSON.parse(landed.stdout) as { landed: boolean; worktree: string; from: string; to: string; workBranch: string };
    assert.deepEqual([land.landed, land.workBranch, land.from, land.to], [true, 'rennet/feature', featureTip, round.range.to]);
    assert.equal(repo.head('feature'), round.range.to);
    assert.equal(repo.read('src/app.js'), APP_ROUND);
    assert.equal((await rounds()).landing, null, 'feature contains the sibling’s tip');

    const archived = await rennet(['archive', ...where, '--json']);
    assert.equal(archived.code, 0, archived.stderr);
    const result = JSON.parse(archived.stdout) as { archived: boolean; collection: { outcome: string } };
    assert.deepEqual([result.archived, result.collection.outcome], [true, 'collected']);
    assert.ok(!existsSync(place), 'the sibling’s worktree is gone');
    assert.equal(repo.git('for-each-ref', 'refs/heads/rennet/'), '', 'and its branch');
    const again = await rennet(['land', ...where]);
    assert.equal(again.code, 0);
    assert.match(again.stdout, /^Nothing to land/);
  });
});
