import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { BranchFreshness, Gate, MergeResult } from '../../protocol/gates';
import { isolatedCliEnv, tempDir, type TestRepo } from '../fixtures/gitRepo';
import { startFakeForge, type FakeForge } from '../servers/fakeForge';
import { forgeFixture } from '../unit/forge/fixtures';

/**
 * The CLI contract of `rennet gates` and `rennet merge` (built dist/cli.js, a separate process)
 * against the loopback fake forge: the gates as JSON ({head, freshness, gates}); a merge refused
 * (exit 3, nothing merged) while a check fails, when --expect-head is not the head, and when the
 * head moves between the gates and the merge (the forge's 409, mapped); then a merge pinned to the
 * head. Processes run asynchronously: the forge serves from this process.
 */

const CLI = join(__dirname, '..', '..', 'dist', 'cli.js');
const execFileP = promisify(execFile);

describe('rennet gates, rennet merge (built dist/cli.js) against the fake forge', function () {
  this.timeout(180_000);
  let forge: FakeForge;
  let src: TestRepo;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  async function rennet(args: string[], extra: NodeJS.ProcessEnv = {}) {
    try {
      const { stdout, stderr } = await execFileP(process.execPath, [CLI, ...args], { env: { ...env, ...extra }, encoding: 'utf8' });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code?: number; stdout?: string; stderr?: string };
      return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
    }
  }
  const gatesOf = (stdout: string) => {
    const parsed = JSON.parse(stdout) as { head: string; freshness: unknown; gates: unknown[] };
    assert.deepEqual(Object.keys(parsed).sort(), ['freshness', 'gates', 'head']);
    return { head: parsed.head, freshness: BranchFreshness.parse(parsed.freshness), gates: parsed.gates.map((g) => Gate.parse(g)) };
  };
  const state = (gates: Gate[], name: string) => gates.find((g) => g.name === name)?.state;

  before(async () => {
    src = forgeFixture({ featureNext: true });
    forge = await startFakeForge();
    for (const login of ['alice', 'bob', 'carol']) forge.addUser({ login, token: `${login}-token` });
    dir = tempDir('rennet-gates-cli-');
    env = isolatedCliEnv({ RENNET_DATA_DIR: join(dir, 'data'), RENNET_FORGE_CLI_TOKENS: '0' });
  });
  after(async () => {
    await forge?.close();
    src?.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('GitHub: gates as JSON; merge refused while a check fails, for another --expect-head, and when the head moves during the merge (409); then merged, pinned to the head', async () => {
    await forge.createRepo({ provider: 'github', owner: 'acme', name: 'app', from: src.dir });
    const pr = await forge.openPullRequest({ provider: 'github', owner: 'acme', name: 'app', author: 'alice', head: 'feature', base: 'main', title: 'Feature' });
    const ref = { provider: 'github' as const, owner: 'acme', name: 'app', number: pr.number };
    const work = join(dir, 'gh');
    await execFileP('git', ['clone', '--quiet', `${forge.url}/acme/app.git`, work], { env: isolatedCliEnv({}) });
    await execFileP('git', ['switch', '--quiet', 'feature'], { cwd: work, env: isolatedCliEnv({}) });
    const gh = { RENNET_FORGES: JSON.stringify([{ host: new URL(forge.url).host, provider: 'github' }]), GITHUB_TOKEN: 'bob-token' };
    forge.setBranchProtection({ owner: 'acme', name: 'app', branch: 'main', protection: { requiredApprovingReviewCount: 1 } });
    await forge.setCheckRun({ ...ref, check: 'build', conclusion: 'failure', title: 'tests failed' });

    const read = await rennet(['gates', '--repo', work, '--pr', '1', '--json'], gh);
    assert.equal(read.code, 0, read.stderr);
    const g = gatesOf(read.stdout);
    assert.equal(g.head, pr.headSha);
    assert.deepEqual([g.freshness.state, g.freshness.local, g.freshness.prHead], ['in-sync', pr.headSha, pr.headSha]);
    assert.deepEqual(
      g.gates.map((x) => [x.name, x.state]),
      [
        ['build', 'fail'],
        ['draft', 'pass'],
        ['mergeable', 'pass'],
        ['behind-base', 'pass'],
        ['required-reviews', 'fail'],
        ['review-at-head', 'fail'],
      ],
    );
    const text = await rennet(['gates', '--repo', work, '--pr', '#1'], gh);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /FAIL +build — failure: tests failed/);
    assert.match(text.stdout, /3 gates would block a merge/);

    const puts = () => forge.requests({ method: 'PUT', pathPattern: '/repos/acme/app/pulls/1/merge$' }).length;
    const failing = await rennet(['merge', '--repo', work, '--pr', '1', '--expect-head', pr.headSha, '--json'], gh);
    assert.equal(failing.code, 3);
    assert.match(failing.stderr, /is not merged: build fails \(failure: tests failed\); required-reviews fails .*; review-at-head fails .*; nothing was merged/);
    assert.equal(puts(), 0, 'a blocked gate sends no merge');

    await forge.setCheckRun({ ...ref, check: 'build', conclusion: 'success' });
    const approved = await fetch(`${forge.githubApiUrl}/repos/acme/app/pulls/1/reviews`, {
      method: 'POST',
      headers: { authorization: 'token carol-token', 'content-type': 'application/json' },
      body: JSON.stringify({ event: 'APPROVE', commit_id: pr.headSha }),
    });
    assert.equal(approved.status, 200);
    const ready = gatesOf((await rennet(['gates', '--repo', work, '--pr', '1', '--json'], gh)).stdout);
    assert.ok(
      ready.gates.every((x) => x.state === 'pass'),
      JSON.stringify(ready.gates),
    );

    const other = await rennet(['merge', '--repo', work, '--pr', '1', '--expect-head', src.head('main'), '--json'], gh);
    assert.equal(other.code, 3);
    assert.match(other.stderr, new RegExp(`head is ${pr.headSha.slice(0, 7)}, not the expected ${src.head('main').slice(0, 7)}.*nothing was merged`));
    assert.equal(puts(), 0);

    // A push lands between the gates and the merge: GitHub's 409, stated as the same refusal.
    forge.setFault({ kind: 'move-head', owner: 'acme', name: 'app', number: 1, sha: src.head('feature-next'), method: 'PUT', pathPattern: '/pulls/1/merge$' });
    const raced = await rennet(['merge', '--repo', work, '--pr', '1', '--expect-head', pr.headSha, '--json'], gh);
    assert.equal(raced.code, 3);
    assert.match(raced.stderr, /Head branch was modified\. Review and try the merge again\..*is no longer [0-9a-f]{7}; nothing was merged/);
    assert.equal(puts(), 1);
    assert.equal(((await forge.pullRequest(ref)) as { merged: boolean }).merged, false);
    const afterRace = gatesOf((await rennet(['gates', '--repo', work, '--pr', '1', '--json'], gh)).stdout);
    assert.deepEqual([afterRace.head, afterRace.freshness.state, state(afterRace.gates, 'review-at-head')], [src.head('feature-next'), 'remote-moved', 'fail']);

    await forge.movePullRequestHead({ ...ref, sha: pr.headSha });
    const merged = await rennet(['merge', '--repo', work, '--pr', '1', '--expect-head', pr.headSha, '--method', 'squash', '--json'], gh);
    assert.equal(merged.code, 0, merged.stderr);
    const result = MergeResult.parse(JSON.parse(merged.stdout));
    assert.deepEqual([result.provider, result.number, result.head, result.method], ['github', 1, pr.headSha, 'squash']);
    const live = (await forge.pullRequest(ref)) as { merged: boolean; merge_commit_sha: string; base: { sha: string } };
    assert.deepEqual([live.merged, live.merge_commit_sha], [true, result.sha]);

    const usage = await rennet(['merge', '--repo', work, '--pr', '1'], gh);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /merge needs --expect-head SHA/);
    assert.equal((await rennet(['gates', '--repo', work, '--pr', '1', '--method', 'squash'], gh)).code, 2);
    assert.equal((await rennet(['review', '--repo', work, '--expect-head', pr.headSha], gh)).code, 2);
  });

  it('GitLab: a failing pipeline job blocks; once it passes and someone approves the head, merge lands; rebase is refused', async () => {
    await forge.createRepo({ provider: 'gitlab', owner: 'grp', name: 'app', from: src.dir });
    const mr = await forge.openPullRequest({ provider: 'gitlab', owner: 'grp', name: 'app', author: 'alice', head: 'feature', base: 'main', title: 'Feature' });
    const ref = { provider: 'gitlab' as const, owner: 'grp', name: 'app', number: mr.number };
    forge.setRepoOptions({ owner: 'grp', name: 'app', onlyAllowMergeIfPipelineSucceeds: true });
    await forge.setPipeline({ ...ref, jobs: [{ name: 'unit', status: 'failed' }] });
    const work = join(dir, 'gl');
    await execFileP('git', ['clone', '--quiet', `${forge.url}/grp/app.git`, work], { env: isolatedCliEnv({}) });
    const gl = { RENNET_FORGES: JSON.stringify([{ host: new URL(forge.url).host, provider: 'gitlab' }]), GITLAB_TOKEN: 'bob-token' };
    const read = gatesOf((await rennet(['gates', '--repo', work, '--pr', '!1', '--json'], gl)).stdout);
    assert.deepEqual([state(read.gates, 'unit'), state(read.gates, 'pipeline'), read.freshness.state], ['fail', 'fail', 'no-local-ref']);
    const blocked = await rennet(['merge', '--repo', work, '--pr', '1', '--expect-head', mr.headSha], gl);
    assert.equal(blocked.code, 3);
    assert.match(blocked.stderr, /unit fails/);
    await forge.setPipeline({ ...ref, jobs: [{ name: 'unit', status: 'success' }] });
    const approved = await fetch(`${forge.gitlabApiUrl}/projects/grp%2Fapp/merge_requests/1/approve`, {
      method: 'POST',
      headers: { 'private-token': 'carol-token', 'content-type': 'application/json' },
      body: JSON.stringify({ sha: mr.headSha }),
    });
    assert.equal(approved.status, 201);
    const rebase = await rennet(['merge', '--repo', work, '--pr', '1', '--expect-head', mr.headSha, '--method', 'rebase'], gl);
    assert.equal(rebase.code, 3);
    assert.match(rebase.stderr, /merge or squash, not rebase/);
    const merged = await rennet(['merge', '--repo', work, '--pr', '1', '--expect-head', mr.headSha], gl);
    assert.equal(merged.code, 0, merged.stderr);
    assert.match(merged.stdout, /^merged !1 at [0-9a-f]{7} \(merge\): [0-9a-f]{40}/);
    assert.equal(((await forge.pullRequest(ref)) as { state: string }).state, 'merged');
  });
});
