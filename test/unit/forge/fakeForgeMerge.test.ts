import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { TestRepo } from '../../fixtures/gitRepo';
import { forgeFixture } from './fixtures';
import { startFakeForge, type FakeForge } from '../../servers/fakeForge';

/**
 * The fake forge's merge surface on the wire, with plain fetch(): GitHub check runs, combined
 * status, branch protection's required reviews, compare, mergeability and `PUT …/merge` (405 when
 * it may not merge, 409 when `sha` is not the head, the base branch moved to a real merge commit);
 * GitLab merge request pipelines and jobs, diff versions, approvals with their system notes,
 * detailed_merge_status and `PUT …/merge` (405 / 409). The rules are the real forges' (docs/forges.md).
 */

const execFileP = promisify(execFile);
const GIT_ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
const git = async (cwd: string, ...args: string[]) => (await execFileP('git', args, { cwd, env: GIT_ENV, encoding: 'utf8' })).stdout.trim();

interface Res {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the forge's JSON, read field by field by the assertions
  json: any;
}

async function call(url: string, init: RequestInit): Promise<Res> {
  const r = await fetch(url, init);
  const text = await r.text();
  return { status: r.status, headers: r.headers, json: text.length > 0 ? JSON.parse(text) : null };
}

describe('fake forge: merge gates and merging', function () {
  this.timeout(60_000);
  let forge: FakeForge;
  let source: TestRepo;
  let n = 0;

  const api =
    (base: () => string, auth: (t: string) => Record<string, string>) =>
    (token: string) =>
    (method: string, path: string, body?: unknown): Promise<Res> =>
      call(`${base()}${path}`, {
        method,
        headers: { ...auth(token), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
  const gh = api(
    () => forge.githubApiUrl,
    (t) => ({ authorization: `token ${t}`, accept: 'application/vnd.github+json' }),
  );
  const gl = api(
    () => forge.gitlabApiUrl,
    (t) => ({ 'private-token': t }),
  );
  const bob = gh('bob-token');
  const carol = gh('carol-token');
  const glBob = gl('bob-token');

  async function newRepo(provider: 'github' | 'gitlab') {
    const name = `m${++n}`;
    const owner = provider === 'github' ? 'acme' : 'grp';
    const created = await forge.createRepo({ provider, owner, name, from: source.dir });
    const pull = await forge.openPullRequest({ provider, owner, name, author: 'alice', head: 'feature', base: 'main', title: 'Feature' });
    return { owner, name, dir: created.dir, pull, ref: { owner, name, number: pull.number }, enc: encodeURIComponent(`${owner}/${name}`) };
  }

  before(async () => {
    source = forgeFixture({ featureNext: true, baseMoves: true });
    forge = await startFakeForge();
    for (const login of ['alice', 'bob', 'carol']) forge.addUser({ login, token: `${login}-token` });
  });
  after(async () => {
    await forge?.close();
    source?.cleanup();
  });

  describe('GitHub', () => {
    it('check runs: the newest run per name (filter=all: every run), paginated with total_count; an unknown ref is 422', async () => {
      const r = await newRepo('github');
      const head = r.pull.headSha;
      await forge.setCheckRun({ ...r.ref, check: 'build', conclusion: 'failure', title: 'first run' });
      await forge.setCheckRun({ ...r.ref, check: 'build', conclusion: 'success' });
      await forge.setCheckRun({ ...r.ref, check: 'lint', status: 'in_progress' });
      await forge.setCheckRun({ ...r.ref, sha: source.head('main'), check: 'elsewhere' });
      const base = `/repos/acme/${r.name}/commits/${head}/check-runs`;
      const latest = await bob('GET', `${base}?per_page=1`);
      assert.equal(latest.status, 200);
      assert.equal(latest.json.total_count, 2);
      assert.equal(latest.json.check_runs.length, 1);
      assert.match(latest.headers.get('link') ?? '', /rel="next"/);
      const all = await bob('GET', `${base}?filter=all&per_page=100`);
      assert.deepEqual(
        all.json.check_runs.map((c: { name: string; status: string; conclusion: string | null }) => [c.name, c.status, c.conclusion]),
        [
          ['build', 'completed', 'failure'],
          ['build', 'completed', 'success'],
          ['lint', 'in_progress', null],
        ],
      );
      const byBranch = await bob('GET', `/repos/acme/${r.name}/commits/feature/check-runs`);
      assert.equal(byBranch.json.total_count, 2, 'a branch name is a ref');
      const unknown = await bob('GET', `/repos/acme/${r.name}/commits/nope/check-runs`);
      assert.deepEqual([unknown.status, unknown.json.message], [422, 'No commit found for SHA: nope']);
    });

    it('combined status: failure if any context fails, pending if none or any pending, success when every context succeeds; the newest per context', async () => {
      const r = await newRepo('github');
      const path = `/repos/acme/${r.name}/commits/${r.pull.headSha}/status`;
      const none = await bob('GET', path);
      assert.deepEqual([none.json.state, none.json.total_count, none.json.statuses], ['pending', 0, []]);
      await forge.setCommitStatus({ ...r.ref, context: 'ci/a', state: 'failure', description: 'red' });
      await forge.setCommitStatus({ ...r.ref, context: 'ci/b', state: 'pending' });
      assert.equal((await bob('GET', path)).json.state, 'failure');
      await forge.setCommitStatus({ ...r.ref, context: 'ci/a', state: 'success' });
      const pending = await bob('GET', path);
      assert.equal(pending.json.state, 'pending');
      assert.deepEqual(pending.json.statuses.map((s: { context: string; state: string }) => [s.context, s.state]).sort(), [
        ['ci/a', 'success'],
        ['ci/b', 'pending'],
      ]);
      await forge.setCommitStatus({ ...r.ref, context: 'ci/b', state: 'success' });
      assert.equal((await bob('GET', path)).json.state, 'success');
    });

    it('branch protection: 404 "Branch not protected", the required reviews, 404 "… not enabled", 403 for a non-admin', async () => {
      const r = await newRepo('github');
      const path = `/repos/acme/${r.name}/branches/main/protection/required_pull_request_reviews`;
      assert.deepEqual(await bob('GET', path).then((x) => [x.status, x.json.message]), [404, 'Branch not protected']);
      forge.setBranchProtection({ owner: 'acme', name: r.name, branch: 'main', protection: { requiredApprovingReviewCount: 2, dismissStaleReviews: true } });
      const got = await bob('GET', path);
      assert.deepEqual([got.status, got.json.required_approving_review_count, got.json.dismiss_stale_reviews], [200, 2, true]);
      forge.setBranchProtection({ owner: 'acme', name: r.name, branch: 'main', protection: { requiredStatusChecks: ['build'] } });
      assert.deepEqual(await bob('GET', path).then((x) => [x.status, x.json.message]), [404, 'Required pull request reviews not enabled']);
      assert.deepEqual((await bob('GET', `/repos/acme/${r.name}/branches/main/protection`)).json.required_status_checks.contexts, ['build']);
      forge.setRepoOptions({ owner: 'acme', name: r.name, admins: ['alice'] });
      assert.deepEqual(await bob('GET', path).then((x) => [x.status, x.json.message]), [403, 'Must have admin rights to Repository.']);
    });

    it('the pull request: mergeable_state clean, unstable, draft, blocked, dirty; requested reviewers leave the list when they review', async () => {
      const r = await newRepo('github');
      const pr = () => bob('GET', `/repos/acme/${r.name}/pulls/${r.pull.number}`).then((x) => x.json);
      assert.deepEqual([(await pr()).mergeable, (await pr()).mergeable_state], [true, 'clean']);
      await forge.setCheckRun({ ...r.ref, check: 'build', status: 'queued' });
      assert.equal((await pr()).mergeable_state, 'unstable');
      await forge.setPullRequestOptions({ ...r.ref, draft: true });
      assert.deepEqual([(await pr()).draft, (await pr()).mergeable_state], [true, 'draft']);
      await forge.setPullRequestOptions({ ...r.ref, draft: false, mergeableComputing: true });
      assert.deepEqual([(await pr()).mergeable, (await pr()).mergeable_state], [null, 'unknown']);
      await forge.setPullRequestOptions({ ...r.ref, mergeableComputing: false });
      forge.setBranchProtection({ owner: 'acme', name: r.name, branch: 'main', protection: { requiredApprovingReviewCount: 1 } });
      assert.equal((await pr()).mergeable_state, 'blocked');
      const asked = await bob('POST', `/repos/acme/${r.name}/pulls/${r.pull.number}/requested_reviewers`, { reviewers: ['carol'] });
      assert.equal(asked.status, 201);
      assert.deepEqual(
        (await pr()).requested_reviewers.map((u: { login: string }) => u.login),
        ['carol'],
      );
      assert.equal((await bob('POST', `/repos/acme/${r.name}/pulls/${r.pull.number}/requested_reviewers`, { reviewers: ['alice'] })).status, 422, 'not from the author');
      assert.equal((await carol('POST', `/repos/acme/${r.name}/pulls/${r.pull.number}/reviews`, { event: 'APPROVE', commit_id: r.pull.headSha })).status, 200);
      assert.deepEqual((await pr()).requested_reviewers, []);
      assert.equal((await pr()).mergeable_state, 'unstable', 'approved; the queued check still runs');
      await forge.moveBranch({ owner: 'acme', name: r.name, branch: 'main', sha: source.head('main-clash') });
      assert.deepEqual([(await pr()).mergeable, (await pr()).mergeable_state], [false, 'dirty']);
    });

    it('a push dismisses stale approvals when protection says so; compare counts how far behind the base the head is', async () => {
      const r = await newRepo('github');
      forge.setBranchProtection({ owner: 'acme', name: r.name, branch: 'main', protection: { requiredApprovingReviewCount: 1, dismissStaleReviews: true } });
      await bob('POST', `/repos/acme/${r.name}/pulls/${r.pull.number}/reviews`, { event: 'APPROVE', commit_id: r.pull.headSha });
      await forge.movePullRequestHead({ ...r.ref, sha: source.head('feature-next') });
      const reviews = await bob('GET', `/repos/acme/${r.name}/pulls/${r.pull.number}/reviews`);
      assert.deepEqual(
        reviews.json.map((x: { state: string; commit_id: string }) => [x.state, x.commit_id]),
        [['DISMISSED', r.pull.headSha]],
      );
      const even = await bob('GET', `/repos/acme/${r.name}/compare/main...${source.head('feature-next')}`);
      assert.deepEqual([even.json.status, even.json.ahead_by, even.json.behind_by], ['ahead', 2, 0]);
      await forge.moveBranch({ owner: 'acme', name: r.name, branch: 'main', sha: source.head('main-next') });
      const behind = await bob('GET', `/repos/acme/${r.name}/compare/main...${source.head('feature-next')}`);
      assert.deepEqual([behind.json.status, behind.json.ahead_by, behind.json.behind_by, behind.json.merge_base_commit.sha], ['diverged', 2, 1, source.head('main')]);
    });

    it('PUT …/merge: 422 for an unknown method, 409 for a sha that is not the head, 405 for a draft, a block or conflicts; then a real merge commit, once', async () => {
      const r = await newRepo('github');
      const path = `/repos/acme/${r.name}/pulls/${r.pull.number}/merge`;
      const head = r.pull.headSha;
      assert.equal((await bob('PUT', path, { sha: head, merge_method: 'octopus' })).status, 422);
      const moved = await bob('PUT', path, { sha: source.head('main'), merge_method: 'merge' });
      assert.deepEqual([moved.status, moved.json.message], [409, 'Head branch was modified. Review and try the merge again.']);
      await forge.setPullRequestOptions({ ...r.ref, draft: true });
      assert.deepEqual(await bob('PUT', path, { sha: head }).then((x) => [x.status, x.json.message]), [405, 'Pull Request is still a draft']);
      await forge.setPullRequestOptions({ ...r.ref, draft: false });
      forge.setBranchProtection({ owner: 'acme', name: r.name, branch: 'main', protection: { requiredApprovingReviewCount: 1, requiredStatusChecks: ['build'] } });
      assert.deepEqual(await bob('PUT', path, { sha: head }).then((x) => [x.status, x.json.message]), [405, 'At least 1 approving review is required by reviewers with write access.']);
      await carol('POST', `/repos/acme/${r.name}/pulls/${r.pull.number}/reviews`, { event: 'APPROVE', commit_id: head });
      assert.deepEqual(await bob('PUT', path, { sha: head }).then((x) => [x.status, x.json.message]), [405, 'Required status check "build" is expected.']);
      await forge.setCheckRun({ ...r.ref, check: 'build', conclusion: 'failure' });
      assert.deepEqual(await bob('PUT', path, { sha: head }).then((x) => [x.status, x.json.message]), [405, 'Required status check "build" is failing.']);
      await forge.setCheckRun({ ...r.ref, check: 'build' });
      await forge.moveBranch({ owner: 'acme', name: r.name, branch: 'main', sha: source.head('main-clash') });
      assert.deepEqual(await bob('PUT', path, { sha: head }).then((x) => [x.status, x.json.message]), [405, 'Pull Request is not mergeable']);
      await forge.moveBranch({ owner: 'acme', name: r.name, branch: 'main', sha: source.head('main-next') });
      assert.equal((await bob('GET', path)).status, 404, 'not merged yet');

      const merged = await bob('PUT', path, { sha: head, merge_method: 'merge' });
      assert.equal(merged.status, 200, JSON.stringify(merged.json));
      assert.equal(merged.json.merged, true);
      assert.equal(await git(r.dir, 'rev-parse', 'refs/heads/main'), merged.json.sha, 'the base branch is the merge commit');
      assert.equal(await git(r.dir, 'rev-parse', `${merged.json.sha}^1`), source.head('main-next'));
      assert.equal(await git(r.dir, 'rev-parse', `${merged.json.sha}^2`), head);
      const pr = (await bob('GET', `/repos/acme/${r.name}/pulls/${r.pull.number}`)).json;
      assert.deepEqual([pr.state, pr.merged, pr.merge_commit_sha, pr.merged_by.login], ['closed', true, merged.json.sha, 'bob']);
      assert.equal((await bob('GET', path)).status, 204);
      assert.equal((await bob('PUT', path, { sha: head })).status, 405, 'merged already');
    });

    it('squash: one commit over the base; a head that moves while the merge is sent (a move-head fault) is 409', async () => {
      const r = await newRepo('github');
      const path = `/repos/acme/${r.name}/pulls/${r.pull.number}/merge`;
      forge.setFault({ kind: 'move-head', owner: 'acme', name: r.name, number: r.pull.number, sha: source.head('feature-next'), method: 'PUT', pathPattern: '/merge$' });
      const raced = await bob('PUT', path, { sha: r.pull.headSha, merge_method: 'squash' });
      assert.equal(raced.status, 409);
      const head = source.head('feature-next');
      const squashed = await bob('PUT', path, { sha: head, merge_method: 'squash' });
      assert.equal(squashed.status, 200);
      assert.equal(await git(r.dir, 'rev-list', '--count', `${source.head('main')}..${squashed.json.sha}`), '1');
      assert.equal(await git(r.dir, 'rev-parse', `${squashed.json.sha}^`), source.head('main'));
    });
  });

  describe('GitLab', () => {
    it('pipelines of a merge request (newest first), their jobs, the head pipeline; diff versions per pushed head', async () => {
      const r = await newRepo('gitlab');
      const mrPath = `/projects/${r.enc}/merge_requests/${r.pull.number}`;
      assert.equal((await glBob('GET', mrPath)).json.head_pipeline, null);
      const first = await forge.setPipeline({
        ...r.ref,
        jobs: [
          { name: 'build', status: 'success' },
          { name: 'test', status: 'failed' },
        ],
      });
      assert.equal(first.status, 'failed');
      const second = await forge.setPipeline({
        ...r.ref,
        jobs: [
          { name: 'build', status: 'success' },
          { name: 'test', status: 'running' },
          { name: 'docs', status: 'failed', allowFailure: true },
        ],
      });
      assert.equal(second.status, 'running');
      const list = await glBob('GET', `${mrPath}/pipelines`);
      assert.deepEqual(
        list.json.map((p: { id: number }) => p.id),
        [second.id, first.id],
      );
      const mr = (await glBob('GET', mrPath)).json;
      assert.deepEqual([mr.head_pipeline.id, mr.head_pipeline.status, mr.head_pipeline.sha], [second.id, 'running', r.pull.headSha]);
      const jobs = await glBob('GET', `/projects/${r.enc}/pipelines/${second.id}/jobs`);
      assert.deepEqual(jobs.json.map((j: { name: string; status: string; allow_failure: boolean }) => [j.name, j.status, j.allow_failure]).sort(), [
        ['build', 'success', false],
        ['docs', 'failed', true],
        ['test', 'running', false],
      ]);
      assert.equal((await glBob('GET', `/projects/${r.enc}/pipelines/999999/jobs`)).status, 404);
      await forge.movePullRequestHead({ ...r.ref, sha: source.head('feature-next') });
      const versions = (await glBob('GET', `${mrPath}/versions`)).json;
      assert.deepEqual(
        versions.map((v: { head_commit_sha: string }) => v.head_commit_sha),
        [source.head('feature-next'), source.head('feature')],
      );
      assert.ok(versions[0].created_at > versions[1].created_at);
      assert.equal((await glBob('GET', mrPath)).json.head_pipeline, null, 'no pipeline has run on the new head');
    });

    it('approvals: required and left; an approval writes a system note; detailed_merge_status and has_conflicts follow the rules', async () => {
      const r = await newRepo('gitlab');
      const mrPath = `/projects/${r.enc}/merge_requests/${r.pull.number}`;
      const status = async () => (await glBob('GET', mrPath)).json.detailed_merge_status as string;
      assert.equal(await status(), 'mergeable');
      forge.setRepoOptions({ owner: 'grp', name: r.name, approvalsRequired: 1, onlyAllowMergeIfPipelineSucceeds: true });
      assert.equal(await status(), 'ci_must_pass');
      await forge.setPipeline({ ...r.ref, jobs: [{ name: 'test', status: 'pending' }] });
      assert.equal(await status(), 'ci_still_running');
      await forge.setPipeline({ ...r.ref, jobs: [{ name: 'test', status: 'success' }] });
      assert.equal(await status(), 'not_approved');
      const before = (await glBob('GET', `${mrPath}/approvals`)).json;
      assert.deepEqual([before.approvals_required, before.approvals_left, before.approved], [1, 1, false]);
      assert.equal((await glBob('POST', `${mrPath}/approve`, { sha: r.pull.headSha })).status, 201);
      const after = (await glBob('GET', `${mrPath}/approvals`)).json;
      assert.deepEqual([after.approvals_left, after.approved], [0, true]);
      const notes = (await glBob('GET', `${mrPath}/notes?sort=asc`)).json;
      assert.deepEqual(
        notes.map((x: { body: string; system: boolean; author: { username: string } }) => [x.body, x.system, x.author.username]),
        [['approved this merge request', true, 'bob']],
      );
      assert.deepEqual(forge.notes({ owner: 'grp', name: r.name, iid: r.pull.number }), [], 'the control lists the notes users wrote');
      assert.equal(await status(), 'mergeable');
      await forge.setPullRequestOptions({ ...r.ref, draft: true });
      assert.equal(await status(), 'draft_status');
      await forge.setPullRequestOptions({ ...r.ref, draft: false });
      await forge.moveBranch({ owner: 'grp', name: r.name, branch: 'main', sha: source.head('main-clash') });
      const mr = (await glBob('GET', mrPath)).json;
      assert.deepEqual([mr.detailed_merge_status, mr.has_conflicts, mr.merge_status], ['conflict', true, 'cannot_be_merged']);
    });

    it('PUT …/merge: 405 while it may not merge, 409 for a sha that is not the head, then merged (squash: one commit)', async () => {
      const r = await newRepo('gitlab');
      const mrPath = `/projects/${r.enc}/merge_requests/${r.pull.number}`;
      const head = r.pull.headSha;
      forge.setRepoOptions({ owner: 'grp', name: r.name, onlyAllowMergeIfPipelineSucceeds: true });
      assert.deepEqual(await glBob('PUT', `${mrPath}/merge`, { sha: head }).then((x) => [x.status, x.json]), [405, { message: '405 Method Not Allowed' }]);
      await forge.setPipeline({ ...r.ref, jobs: [{ name: 'test', status: 'success' }] });
      const wrong = await glBob('PUT', `${mrPath}/merge`, { sha: source.head('main') });
      assert.deepEqual([wrong.status, wrong.json.message], [409, `SHA does not match HEAD of source branch: ${head}`]);
      const merged = await glBob('PUT', `${mrPath}/merge`, { sha: head, squash: true });
      assert.equal(merged.status, 200, JSON.stringify(merged.json));
      assert.deepEqual([merged.json.state, merged.json.merged_by.username], ['merged', 'bob']);
      assert.equal(await git(r.dir, 'rev-parse', 'refs/heads/main'), merged.json.merge_commit_sha);
      assert.equal(await git(r.dir, 'rev-parse', `${merged.json.merge_commit_sha}^`), source.head('main'));
      assert.equal((await glBob('PUT', `${mrPath}/merge`, { sha: head })).status, 405, 'merged already');
    });
  });
});
