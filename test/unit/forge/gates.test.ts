import assert from 'node:assert/strict';
import { githubAdapter } from '../../../host/forge/github';
import { gitlabAdapter } from '../../../host/forge/gitlab';
import { ForgeError, type ForgeAdapter, type ForgeAdapterOptions, type PullRequestGates } from '../../../host/forge/types';
import type { ForgeRepo } from '../../../protocol/forge';
import type { Gate } from '../../../protocol/gates';
import type { TestRepo } from '../../fixtures/gitRepo';
import { forgeFixture } from './fixtures';
import { startFakeForge, type FakeForge } from '../../servers/fakeForge';

/**
 * The adapters' merge gates and merge (host/forge/github.ts, gitlab.ts) against the fake forge,
 * which serves GitHub's check runs, statuses, protection and merge rules and GitLab's pipelines,
 * approvals, versions and merge rules: every gate kind by name, an approval of an earlier commit
 * that does not count, behind-base, draft, conflicts, fail-closed reads, and a merge pinned to the
 * head (a moved head refused before the call; the forge's 409 mapped to the same refusal).
 */

const TOKENS = { alice: 'tok-alice-0001', bob: 'tok-bob-0002', carol: 'tok-carol-0003' };
const FAST: ForgeAdapterOptions = { pageSize: 2, readRetryBaseMs: 1, retryAfterUnitMs: 1000, spaceWrites: false };

const byName = (g: PullRequestGates) => Object.fromEntries(g.gates.map((x) => [x.name, x]));
const summary = (g: PullRequestGates) => g.gates.map((x) => [x.kind, x.name, x.state]);

function isForgeError(kind: ForgeError['kind'], words?: RegExp) {
  return (e: unknown) => {
    assert.ok(e instanceof ForgeError, `not a ForgeError: ${String(e)}`);
    assert.equal(e.kind, kind, `kind ${e.kind}: ${e.message}`);
    if (words) assert.match(e.message, words);
    return true;
  };
}

describe('forge: merge gates and merge, both adapters against the fake forge', function () {
  this.timeout(120_000);
  let forge: FakeForge;
  let source: TestRepo;
  let n = 0;

  before(async () => {
    source = forgeFixture({ featureNext: true, baseMoves: true });
    forge = await startFakeForge();
    for (const [login, token] of Object.entries(TOKENS)) forge.addUser({ login, token });
  });
  after(async () => {
    await forge?.close();
    source?.cleanup();
  });

  async function setUp(provider: 'github' | 'gitlab') {
    const name = `g${++n}`;
    const owner = provider === 'github' ? 'acme' : 'grp';
    const created = await forge.createRepo({ provider, owner, name, from: source.dir });
    const repo: ForgeRepo = {
      provider,
      host: `127.0.0.1:${forge.port}`,
      owner,
      repo: name,
      apiUrl: provider === 'github' ? forge.githubApiUrl : forge.gitlabApiUrl,
      webUrl: `${forge.url}/${owner}/${name}`,
    };
    const pull = await forge.openPullRequest({ provider, owner, name, author: 'alice', head: 'feature', base: 'main', title: 'Feature' });
    const as = (who: keyof typeof TOKENS): ForgeAdapter => (provider === 'github' ? githubAdapter(repo, TOKENS[who], FAST) : gitlabAdapter(repo, TOKENS[who], FAST));
    return { repo, dir: created.dir, number: pull.number, head: pull.headSha, ref: { owner, name, number: pull.number }, as };
  }

  const gh = (token: string, method: string, path: string, body?: unknown) =>
    fetch(`${forge.githubApiUrl}${path}`, { method, headers: { authorization: `token ${token}`, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const gl = (token: string, method: string, path: string, body?: unknown) =>
    fetch(`${forge.gitlabApiUrl}${path}`, { method, headers: { 'private-token': token, 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const approveGh = async (s: { repo: ForgeRepo; number: number }, who: keyof typeof TOKENS, commit: string) =>
    assert.equal((await gh(TOKENS[who], 'POST', `/repos/${s.repo.owner}/${s.repo.repo}/pulls/${s.number}/reviews`, { event: 'APPROVE', commit_id: commit })).status, 200);
  const approveGl = async (s: { repo: ForgeRepo; number: number }, who: keyof typeof TOKENS, sha: string) =>
    assert.equal((await gl(TOKENS[who], 'POST', `/projects/${encodeURIComponent(`${s.repo.owner}/${s.repo.repo}`)}/merge_requests/${s.number}/approve`, { sha })).status, 201);

  describe('GitHub', () => {
    it('reads every gate by name — check runs (newest per name), statuses, draft, mergeable, behind-base, required-reviews, review-at-head — and merges pinned to the head', async () => {
      const s = await setUp('github');
      forge.setBranchProtection({ ...s.ref, branch: 'main', protection: { requiredApprovingReviewCount: 1 } });
      await forge.setCheckRun({ ...s.ref, check: 'build', conclusion: 'failure' });
      await forge.setCheckRun({ ...s.ref, check: 'build', conclusion: 'success', title: 'all green' });
      await forge.setCheckRun({ ...s.ref, check: 'lint', conclusion: 'neutral' });
      await forge.setCheckRun({ ...s.ref, check: 'zz-third-page', conclusion: 'skipped' });
      await forge.setCommitStatus({ ...s.ref, context: 'ci/legacy', state: 'success', description: 'ok' });
      const bob = s.as('bob');
      const before = await bob.readGates!(s.number);
      assert.equal(before.head, s.head);
      assert.deepEqual(summary(before), [
        ['check', 'build', 'pass'],
        ['check', 'lint', 'pass'],
        ['check', 'zz-third-page', 'pass'],
        ['status', 'ci/legacy', 'pass'],
        ['draft', 'draft', 'pass'],
        ['mergeable', 'mergeable', 'pass'],
        ['behind-base', 'behind-base', 'pass'],
        ['required-reviews', 'required-reviews', 'fail'],
        ['review-at-head', 'review-at-head', 'fail'],
      ]);
      assert.equal(byName(before)['build']?.detail, 'success: all green');
      assert.match(byName(before)['required-reviews']?.detail ?? '', /0 of 1 required approval/);
      await approveGh(s, 'carol', s.head);
      const after = await bob.readGates!(s.number);
      assert.ok(
        after.gates.every((g) => g.state === 'pass'),
        JSON.stringify(after.gates),
      );
      assert.match(byName(after)['review-at-head']?.detail ?? '', new RegExp(`approved at the head ${s.head.slice(0, 7)} by carol`));

      const merged = await bob.merge!(s.number, { expectHead: s.head, method: 'squash' });
      const pr = (await forge.pullRequest({ ...s.ref })) as { merged: boolean; merge_commit_sha: string };
      assert.deepEqual([pr.merged, pr.merge_commit_sha], [true, merged.sha]);
      assert.match(merged.url, /\/pull\/1$/);
    });

    it('review-at-head: an approval of an earlier commit does not count (required-reviews still does, without dismissal); a new approval at the head does', async () => {
      const s = await setUp('github');
      forge.setBranchProtection({ ...s.ref, branch: 'main', protection: { requiredApprovingReviewCount: 1 } });
      await approveGh(s, 'bob', s.head);
      const next = source.head('feature-next');
      await forge.movePullRequestHead({ ...s.ref, sha: next });
      const gates = await s.as('carol').readGates!(s.number);
      assert.equal(gates.head, next);
      assert.equal(byName(gates)['required-reviews']?.state, 'pass');
      const atHead = byName(gates)['review-at-head'] as Gate;
      assert.equal(atHead.state, 'fail');
      assert.match(atHead.detail, new RegExp(`bob approved ${s.head.slice(0, 7)} — not the head ${next.slice(0, 7)}`));
      await approveGh(s, 'carol', next);
      assert.equal(byName(await s.as('bob').readGates!(s.number))['review-at-head']?.state, 'pass');
    });

    it('fail-closed: a failing check, a pending status, a draft, conflicts, a base that moved on, mergeability still computing; changes requested', async () => {
      const s = await setUp('github');
      await forge.setCheckRun({ ...s.ref, check: 'build', conclusion: 'timed_out' });
      await forge.setCheckRun({ ...s.ref, check: 'e2e', status: 'in_progress' });
      await forge.setCommitStatus({ ...s.ref, context: 'deploy', state: 'pending', description: 'waiting' });
      await forge.setPullRequestOptions({ ...s.ref, draft: true });
      const carol = s.as('carol');
      let g = byName(await carol.readGates!(s.number));
      assert.deepEqual([g['build']?.state, g['build']?.detail], ['fail', 'timed out']);
      assert.deepEqual([g['e2e']?.state, g['deploy']?.state, g['deploy']?.detail], ['pending', 'pending', 'pending: waiting']);
      assert.equal(g['draft']?.state, 'fail');
      await forge.setPullRequestOptions({ ...s.ref, draft: false, mergeableComputing: true });
      assert.equal(byName(await carol.readGates!(s.number))['mergeable']?.state, 'pending');
      await forge.setPullRequestOptions({ ...s.ref, mergeableComputing: false });
      await forge.moveBranch({ ...s.ref, branch: 'main', sha: source.head('main-next') });
      g = byName(await carol.readGates!(s.number));
      assert.deepEqual([g['behind-base']?.state, g['behind-base']?.detail], ['fail', '1 commit behind main: merge or rebase main into it and push']);
      assert.equal(g['mergeable']?.state, 'pass');
      await forge.moveBranch({ ...s.ref, branch: 'main', sha: source.head('main-clash') });
      g = byName(await carol.readGates!(s.number));
      assert.deepEqual([g['mergeable']?.state, g['mergeable']?.detail], ['fail', 'conflicts with main: merge or rebase main into it, resolve, and push']);
      assert.equal((await gh(TOKENS.bob, 'POST', `/repos/acme/${s.repo.repo}/pulls/${s.number}/reviews`, { event: 'REQUEST_CHANGES', body: 'no', commit_id: s.head })).status, 200);
      g = byName(await carol.readGates!(s.number));
      assert.deepEqual([g['required-reviews']?.state, g['required-reviews']?.detail], ['fail', 'changes requested by bob']);
    });

    it('branch protection a token cannot read: GitHub’s own verdict (mergeable_state) decides required-reviews, and says so', async () => {
      const s = await setUp('github');
      forge.setBranchProtection({ ...s.ref, branch: 'main', protection: { requiredApprovingReviewCount: 1 } });
      forge.setRepoOptions({ ...s.ref, admins: ['alice'] });
      const blocked = byName(await s.as('bob').readGates!(s.number))['required-reviews'] as Gate;
      assert.equal(blocked.state, 'fail');
      assert.match(blocked.detail, /not readable with this token \(Must have admin rights to Repository\.\); GitHub reports the request blocked/);
      await approveGh(s, 'carol', s.head);
      assert.equal(byName(await s.as('bob').readGates!(s.number))['required-reviews']?.state, 'pass');
    });

    it('merge: a head that moved is refused before anything is sent; one that moves during the call comes back as the forge’s 409, the same refusal; 405 in GitHub’s words', async () => {
      const s = await setUp('github');
      const bob = s.as('bob');
      const next = source.head('feature-next');
      const mergePath = `/repos/acme/${s.repo.repo}/pulls/${s.number}/merge$`;
      await forge.movePullRequestHead({ ...s.ref, sha: next });
      await assert.rejects(
        bob.merge!(s.number, { expectHead: s.head, method: 'merge' }),
        isForgeError('head-moved', new RegExp(`moved to ${next.slice(0, 7)}; the merge was pinned to ${s.head.slice(0, 7)}; nothing was merged`)),
      );
      assert.equal(forge.requests({ method: 'PUT', pathPattern: mergePath }).length, 0, 'no merge was sent');
      forge.setFault({ kind: 'move-head', owner: 'acme', name: s.repo.repo, number: s.number, sha: s.head, method: 'PUT', pathPattern: mergePath });
      await assert.rejects(bob.merge!(s.number, { expectHead: next, method: 'merge' }), isForgeError('head-moved', /Head branch was modified\. Review and try the merge again\..*is no longer/));
      assert.equal(forge.requests({ method: 'PUT', pathPattern: mergePath }).length, 1, 'sent once, never re-sent');
      assert.equal(((await forge.pullRequest({ ...s.ref })) as { merged: boolean }).merged, false);
      await forge.setPullRequestOptions({ ...s.ref, draft: true });
      await assert.rejects(bob.merge!(s.number, { expectHead: s.head, method: 'merge' }), isForgeError('refused', /GitHub refused the merge: Pull Request is still a draft/));
    });
  });

  describe('GitLab', () => {
    it('reads every gate by name — the head pipeline’s jobs (newest per name), the pipeline, draft, mergeable, behind-base, required-reviews, review-at-head — and merges pinned to the head', async () => {
      const s = await setUp('gitlab');
      forge.setRepoOptions({ ...s.ref, approvalsRequired: 1, onlyAllowMergeIfPipelineSucceeds: true });
      await forge.setPipeline({ ...s.ref, jobs: [{ name: 'test', status: 'failed' }] });
      await forge.setPipeline({
        ...s.ref,
        jobs: [
          { name: 'build', stage: 'build', status: 'success' },
          { name: 'test', status: 'success' },
          { name: 'docs', status: 'failed', allowFailure: true },
        ],
      });
      const bob = s.as('bob');
      const before = await bob.readGates!(s.number);
      assert.deepEqual(summary(before), [
        ['job', 'build', 'pass'],
        ['job', 'docs', 'pass'],
        ['job', 'test', 'pass'],
        ['pipeline', 'pipeline', 'pass'],
        ['draft', 'draft', 'pass'],
        ['mergeable', 'mergeable', 'pass'],
        ['behind-base', 'behind-base', 'pass'],
        ['required-reviews', 'required-reviews', 'fail'],
        ['review-at-head', 'review-at-head', 'fail'],
      ]);
      assert.equal(byName(before)['docs']?.detail, 'failed, allowed to fail (test)');
      assert.equal(byName(before)['build']?.detail, 'success (build)');
      await approveGl(s, 'carol', s.head);
      const after = await bob.readGates!(s.number);
      assert.ok(
        after.gates.every((g) => g.state === 'pass'),
        JSON.stringify(after.gates),
      );
      assert.match(byName(after)['review-at-head']?.detail ?? '', /approved at the head [0-9a-f]{7} by carol/);
      const merged = await bob.merge!(s.number, { expectHead: s.head, method: 'merge' });
      const mr = (await forge.pullRequest({ ...s.ref })) as { state: string; merge_commit_sha: string };
      assert.deepEqual([mr.state, mr.merge_commit_sha], ['merged', merged.sha]);
    });

    it('review-at-head: an approval given before the head was pushed does not count (GitLab’s versions and approval notes say when); a new one does', async () => {
      const s = await setUp('gitlab');
      forge.setRepoOptions({ ...s.ref, approvalsRequired: 1 });
      await approveGl(s, 'bob', s.head);
      const next = source.head('feature-next');
      await forge.movePullRequestHead({ ...s.ref, sha: next });
      const carol = s.as('carol');
      const g = byName(await carol.readGates!(s.number));
      assert.equal(g['required-reviews']?.state, 'pass', 'the project does not remove approvals on push');
      assert.deepEqual(
        [g['review-at-head']?.state, g['review-at-head']?.detail],
        ['fail', `bob approved an earlier commit — not the head ${next.slice(0, 7)}; an approval of an earlier commit does not count`],
      );
      await approveGl(s, 'carol', next);
      assert.equal(byName(await s.as('bob').readGates!(s.number))['review-at-head']?.state, 'pass');
      forge.setRepoOptions({ ...s.ref, resetApprovalsOnPush: true });
      await forge.movePullRequestHead({ ...s.ref, sha: s.head });
      const reset = byName(await carol.readGates!(s.number));
      assert.deepEqual([reset['required-reviews']?.state, reset['review-at-head']?.state], ['fail', 'fail']);
    });

    it('fail-closed: a failing job, a manual job, no pipeline on the head, a draft, conflicts, a target that moved on', async () => {
      const s = await setUp('gitlab');
      forge.setRepoOptions({ ...s.ref, onlyAllowMergeIfPipelineSucceeds: true });
      const bob = s.as('bob');
      let g = byName(await bob.readGates!(s.number));
      assert.deepEqual([g['pipeline']?.state, g['pipeline']?.detail], ['fail', `the project requires a successful pipeline and none ran on the head ${s.head.slice(0, 7)}`]);
      await forge.setPipeline({
        ...s.ref,
        jobs: [
          { name: 'unit', status: 'failed' },
          { name: 'deploy', status: 'manual' },
        ],
      });
      g = byName(await bob.readGates!(s.number));
      assert.deepEqual([g['unit']?.state, g['deploy']?.state, g['pipeline']?.state], ['fail', 'pending', 'fail']);
      await forge.movePullRequestHead({ ...s.ref, sha: source.head('feature-next') });
      g = byName(await bob.readGates!(s.number));
      assert.equal(g['unit'], undefined, 'jobs of another head are not gates');
      assert.deepEqual([g['pipeline']?.state, g['pipeline']?.detail.startsWith('no pipeline has run on the head')], ['pending', true]);
      await forge.setPullRequestOptions({ ...s.ref, draft: true });
      assert.equal(byName(await bob.readGates!(s.number))['draft']?.state, 'fail');
      await forge.setPullRequestOptions({ ...s.ref, draft: false });
      await forge.moveBranch({ ...s.ref, branch: 'main', sha: source.head('main-next') });
      g = byName(await bob.readGates!(s.number));
      assert.deepEqual([g['behind-base']?.state, g['mergeable']?.state], ['fail', 'pass']);
      await forge.moveBranch({ ...s.ref, branch: 'main', sha: source.head('main-clash') });
      assert.equal(byName(await bob.readGates!(s.number))['mergeable']?.state, 'fail');
    });

    it('merge: rebase is not GitLab’s per request; a moved head is refused before the call, and GitLab’s 409 is the same refusal; 405 in GitLab’s words', async () => {
      const s = await setUp('gitlab');
      const bob = s.as('bob');
      const next = source.head('feature-next');
      const mergePath = `/merge_requests/${s.number}/merge$`;
      await assert.rejects(bob.merge!(s.number, { expectHead: s.head, method: 'rebase' }), isForgeError('refused', /merge or squash, not rebase/));
      await forge.movePullRequestHead({ ...s.ref, sha: next });
      await assert.rejects(bob.merge!(s.number, { expectHead: s.head, method: 'merge' }), isForgeError('head-moved', /moved to/));
      assert.equal(forge.requests({ method: 'PUT', pathPattern: `${s.repo.repo}${mergePath}` }).length, 0);
      forge.setFault({ kind: 'move-head', owner: 'grp', name: s.repo.repo, number: s.number, sha: s.head, method: 'PUT', pathPattern: mergePath });
      await assert.rejects(bob.merge!(s.number, { expectHead: next, method: 'squash' }), isForgeError('head-moved', /SHA does not match HEAD of source branch/));
      assert.equal(forge.requests({ method: 'PUT', pathPattern: `${s.repo.repo}${mergePath}` }).length, 1);
      await forge.setPullRequestOptions({ ...s.ref, draft: true });
      await assert.rejects(bob.merge!(s.number, { expectHead: s.head, method: 'merge' }), isForgeError('refused', /GitLab refused the merge: 405 Method Not Allowed/));
    });
  });
});
