import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { promisify } from 'node:util';
import { tempDir, type TestRepo } from '../../fixtures/gitRepo';
import { forgeFixture } from './fixtures';
import { startFakeForge, type FakeForge } from '../../servers/fakeForge';

/**
 * The fake forge (test/servers/fakeForge) on the wire: GitHub REST v3 and GitLab REST v4 rules
 * with plain fetch(), git smart HTTP with the real git client, faults, the control API in-process
 * and over /_fake, and the real client libraries (Octokit with its retry and throttling plugins,
 * gitbeaker). Git clients run asynchronously: the forge serves from this same process.
 */

const execFileP = promisify(execFile);
const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_TERMINAL_PROMPT: '0',
  GIT_AUTHOR_NAME: 'T',
  GIT_AUTHOR_EMAIL: 't@example.com',
  GIT_COMMITTER_NAME: 'T',
  GIT_COMMITTER_EMAIL: 't@example.com',
};

async function git(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await execFileP('git', args, { cwd, env: GIT_ENV, encoding: 'utf8' });
  return stdout.trim();
}

async function gitFails(cwd: string, ...args: string[]): Promise<string> {
  try {
    await execFileP('git', args, { cwd, env: GIT_ENV, encoding: 'utf8' });
  } catch (e) {
    return String((e as { stderr?: string }).stderr ?? e);
  }
  throw new Error(`git ${args.join(' ')} succeeded`);
}

interface Res {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the forge's JSON, read field by field by the assertions
  json: any;
  text: string;
}

async function call(url: string, init: RequestInit): Promise<Res> {
  const r = await fetch(url, init);
  const text = await r.text();
  let json: unknown = null;
  try {
    json = text.length > 0 ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  return { status: r.status, headers: r.headers, json, text };
}

const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
const sha1 = (s: string) => createHash('sha1').update(s).digest('hex');

describe('fake forge', function () {
  this.timeout(60_000);
  let forge: FakeForge;
  let source: TestRepo;
  const scratch: string[] = [];

  const gh =
    (token: string | null) =>
    (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Res> =>
      call(`${forge.githubApiUrl}${path}`, {
        method,
        headers: {
          accept: 'application/vnd.github+json',
          ...(token === null ? {} : { authorization: `token ${token}` }),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
  const gl =
    (token: string | null) =>
    (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Res> =>
      call(`${forge.gitlabApiUrl}${path}`, {
        method,
        headers: { ...(token === null ? {} : { 'private-token': token }), ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
  const alice = gh('alice-token');
  const bob = gh('bob-token');
  const glAlice = gl('alice-token');
  const glBob = gl('bob-token');

  let nextRepo = 0;
  async function newRepo(provider: 'github' | 'gitlab', withPull = true) {
    const name = `r${++nextRepo}`;
    const owner = provider === 'github' ? 'acme' : 'grp';
    await forge.createRepo({ provider, owner, name, from: source.dir });
    const pull = withPull ? await forge.openPullRequest({ provider, owner, name, author: 'alice', head: 'feature', base: 'main', title: 'Feature', body: 'Closes #9' }) : null;
    return { owner, name, path: `${owner}/${name}`, enc: encodeURIComponent(`${owner}/${name}`), pull };
  }

  before(async () => {
    source = forgeFixture({ same: true });
    forge = await startFakeForge();
    forge.addUser({ login: 'alice', token: 'alice-token' });
    forge.addUser({ login: 'bob', token: 'bob-token' });
  });
  after(async () => {
    await forge.close();
    source.cleanup();
    for (const d of scratch) rmSync(d, { recursive: true, force: true });
  });

  // ---------------------------------------------------------------- auth

  it('answers 401 without a known token, on both APIs, with each forge body', async () => {
    const none = await gh(null)('GET', '/user');
    assert.equal(none.status, 401);
    assert.equal(none.json.message, 'Requires authentication');
    const bad = await gh('nope')('GET', '/user');
    assert.equal(bad.status, 401);
    assert.equal(bad.json.message, 'Bad credentials');
    assert.equal(typeof bad.json.documentation_url, 'string');
    const bearer = await call(`${forge.githubApiUrl}/user`, { headers: { authorization: 'Bearer bob-token' } });
    assert.equal(bearer.json.login, 'bob');
    assert.equal(bearer.headers.get('x-ratelimit-limit'), '5000');
    assert.ok(Number(bearer.headers.get('x-ratelimit-remaining')) < 5000);
    const glNone = await gl(null)('GET', '/user');
    assert.equal(glNone.status, 401);
    assert.deepEqual(glNone.json, { message: '401 Unauthorized' });
    assert.equal((await gl('nope')('GET', '/user')).status, 401);
    assert.equal((await glBob('GET', '/user')).json.username, 'bob');
    const glBearer = await call(`${forge.gitlabApiUrl}/user`, { headers: { authorization: 'Bearer alice-token' } });
    assert.equal(glBearer.json.username, 'alice');
  });

  // ---------------------------------------------------------------- git smart HTTP

  it('serves the repository over git smart HTTP: clone, fetch refs/pull/N/head, authenticated push moves the pull request', async () => {
    const r = await newRepo('github');
    const work = tempDir('rennet-forge-clone-');
    scratch.push(work);
    const remote = `${forge.url}/${r.path}.git`;
    await git(work, 'clone', '-q', remote, 'c');
    const clone = `${work}/c`;
    assert.equal(await git(clone, 'rev-parse', 'origin/feature'), r.pull?.headSha);
    await git(clone, 'fetch', '-q', remote, 'refs/pull/1/head:refs/rennet/x');
    assert.equal(await git(clone, 'rev-parse', 'refs/rennet/x'), r.pull?.headSha);

    // Push without credentials is refused; with a token it lands and moves the pull request.
    await git(clone, 'checkout', '-q', 'feature');
    await git(clone, 'commit', '-q', '--allow-empty', '-m', 'more');
    const pushed = await git(clone, 'rev-parse', 'HEAD');
    assert.match(await gitFails(clone, 'push', '-q', remote, 'feature'), /Authentication failed|could not read Username|401/);
    assert.match(await gitFails(clone, 'push', '-q', `http://x:wrong@127.0.0.1:${forge.port}/${r.path}.git`, 'feature'), /Authentication failed|401/);
    await git(clone, 'push', '-q', `http://x-access-token:bob-token@127.0.0.1:${forge.port}/${r.path}.git`, 'feature');
    const pr = await bob('GET', `/repos/${r.path}/pulls/1`);
    assert.equal(pr.json.head.sha, pushed);
    await git(clone, 'fetch', '-q', remote, '+refs/pull/1/head:refs/rennet/x');
    assert.equal(await git(clone, 'rev-parse', 'refs/rennet/x'), pushed);
    const log = forge.requests({ surface: 'git', method: 'POST', pathPattern: 'git-receive-pack$' });
    assert.equal(log.at(-1)?.user, 'bob');
    assert.equal(log.at(-1)?.status, 200);

    // GitLab: refs/merge-requests/<iid>/head, and movePullRequestHead moves the branch.
    const g = await newRepo('gitlab');
    await git(clone, 'fetch', '-q', `${forge.url}/${g.path}.git`, 'refs/merge-requests/1/head:refs/rennet/mr');
    assert.equal(await git(clone, 'rev-parse', 'refs/rennet/mr'), g.pull?.headSha);
    const mainSha = source.head('b1');
    await forge.movePullRequestHead({ provider: 'gitlab', owner: g.owner, name: g.name, number: 1, sha: mainSha });
    assert.equal((await glBob('GET', `/projects/${g.enc}/merge_requests/1`)).json.sha, mainSha);
    await git(clone, 'fetch', '-q', `${forge.url}/${g.path}.git`, '+refs/merge-requests/1/head:refs/rennet/mr');
    assert.equal(await git(clone, 'rev-parse', 'refs/rennet/mr'), mainSha);
  });

  // ---------------------------------------------------------------- GitHub pulls

  it('GitHub: repository, pull request fields, list filters and Link pagination', async () => {
    const r = await newRepo('github');
    for (let i = 1; i <= 5; i++) await forge.openPullRequest({ owner: r.owner, name: r.name, author: 'alice', head: `b${i}`, base: 'main', title: `B${i}` });
    const repo = await bob('GET', `/repos/${r.path}`);
    assert.equal(repo.json.full_name, r.path);
    assert.equal(repo.json.default_branch, 'main');
    const one = await bob('GET', `/repos/${r.path}/pulls/1`);
    assert.equal(one.status, 200);
    const p = one.json;
    assert.equal(p.number, 1);
    assert.equal(p.state, 'open');
    assert.equal(p.title, 'Feature');
    assert.equal(p.body, 'Closes #9');
    assert.equal(p.html_url, `${forge.url}/${r.path}/pull/1`);
    assert.equal(p.user.login, 'alice');
    assert.deepEqual([p.head.ref, p.head.sha, p.head.repo.full_name], ['feature', source.head('feature'), r.path]);
    assert.deepEqual([p.base.ref, p.base.sha], ['main', source.head('main')]);
    assert.equal(p.draft, false);
    assert.equal(p.merged, false);
    assert.equal(p.changed_files, 4);

    // Pagination: 6 open pulls, 2 a page, newest first; Link rel="next"/"last" then "prev"/"first".
    const seen: number[] = [];
    let url: string | null = `${forge.githubApiUrl}/repos/${r.path}/pulls?per_page=2`;
    const links: string[] = [];
    while (url !== null) {
      const page: Res = await call(url, { headers: { authorization: 'token bob-token' } });
      seen.push(...(page.json as { number: number }[]).map((x) => x.number));
      const link = page.headers.get('link') ?? '';
      links.push(link);
      url = /<([^>]+)>; rel="next"/.exec(link)?.[1] ?? null;
    }
    assert.deepEqual(seen, [6, 5, 4, 3, 2, 1]);
    assert.match(links[0] as string, /page=2[^>]*>; rel="next", <[^>]*page=3[^>]*>; rel="last"/);
    assert.match(links[2] as string, /rel="prev".*rel="first"/);
    assert.doesNotMatch(links[2] as string, /rel="next"/);

    const byHead = await bob('GET', `/repos/${r.path}/pulls?head=${r.owner}:b3`);
    assert.deepEqual(
      byHead.json.map((x: { number: number }) => x.number),
      [4],
    );
    assert.equal((await bob('GET', `/repos/${r.path}/pulls?head=someone-else:b3`)).json.length, 0);
    assert.equal((await bob('GET', `/repos/${r.path}/pulls?base=feature`)).json.length, 0);
    await bob('PATCH', `/repos/${r.path}/pulls/2`, { state: 'closed' });
    assert.equal((await bob('GET', `/repos/${r.path}/pulls?state=closed`)).json[0].number, 2);
    assert.equal((await bob('GET', `/repos/${r.path}/pulls?state=all&per_page=100`)).json.length, 6);
    assert.equal((await bob('GET', `/repos/${r.path}/pulls/99`)).status, 404);
    assert.equal((await bob('GET', `/repos/acme/nope`)).json.message, 'Not Found');
    const diff = await bob('GET', `/repos/${r.path}/pulls/1`, undefined, { accept: 'application/vnd.github.v3.diff' });
    assert.match(diff.text, /^diff --git a\/added.txt b\/added.txt/m);
  });

  it('GitHub: creating and updating pull requests (duplicates, no commits, unknown branches, reopen)', async () => {
    const r = await newRepo('github', false);
    const created = await alice('POST', `/repos/${r.path}/pulls`, { title: 'T', head: `${r.owner}:feature`, base: 'main', body: 'B' });
    assert.equal(created.status, 201);
    assert.equal(created.json.number, 1);
    assert.equal(created.headers.get('location'), `${forge.githubApiUrl}/repos/${r.path}/pulls/1`);
    const dup = await alice('POST', `/repos/${r.path}/pulls`, { title: 'T', head: 'feature', base: 'main' });
    assert.equal(dup.status, 422);
    assert.equal(dup.json.message, 'Validation Failed');
    assert.equal(dup.json.errors[0].message, `A pull request already exists for ${r.owner}:feature.`);
    const none = await alice('POST', `/repos/${r.path}/pulls`, { title: 'T', head: 'same', base: 'main' });
    assert.equal(none.status, 422);
    assert.equal(none.json.errors[0].message, 'No commits between main and same');
    const unknown = await alice('POST', `/repos/${r.path}/pulls`, { title: 'T', head: 'nope', base: 'main' });
    assert.deepEqual(unknown.json.errors[0], { resource: 'PullRequest', field: 'head', code: 'invalid' });
    const missing = await alice('POST', `/repos/${r.path}/pulls`, { head: 'b1', base: 'main' });
    assert.deepEqual(missing.json.errors[0], { resource: 'PullRequest', code: 'missing_field', field: 'title' });
    const badJson = await call(`${forge.githubApiUrl}/repos/${r.path}/pulls`, { method: 'POST', headers: { authorization: 'token alice-token' }, body: '{nope' });
    assert.equal(badJson.status, 400);
    assert.equal(badJson.json.message, 'Problems parsing JSON');

    const patched = await alice('PATCH', `/repos/${r.path}/pulls/1`, { title: 'T2', body: 'B2', state: 'closed' });
    assert.equal(patched.status, 200);
    assert.deepEqual([patched.json.title, patched.json.body, patched.json.state], ['T2', 'B2', 'closed']);
    assert.equal((await alice('POST', `/repos/${r.path}/pulls`, { title: 'again', head: 'feature', base: 'main' })).status, 201);
    const reopen = await alice('PATCH', `/repos/${r.path}/pulls/1`, { state: 'open' });
    assert.equal(reopen.status, 422);
    assert.match(reopen.json.errors[0].message, /A pull request already exists/);
  });

  it('GitHub: files (status, previous_filename, patch; paginated), issues, issue comments', async () => {
    const r = await newRepo('github');
    forge.addIssue({ provider: 'github', owner: r.owner, name: r.name, number: 9, title: 'Linked', body: 'Issue body' });
    const files = await bob('GET', `/repos/${r.path}/pulls/1/files`);
    const byName = Object.fromEntries(files.json.map((f: { filename: string }) => [f.filename, f]));
    assert.deepEqual(Object.keys(byName).sort(), ['added.txt', 'gone.txt', 'mod.txt', 'new-name.txt']);
    assert.equal(byName['added.txt'].status, 'added');
    assert.equal(byName['gone.txt'].status, 'removed');
    assert.equal(byName['mod.txt'].status, 'modified');
    assert.equal(byName['new-name.txt'].status, 'renamed');
    assert.equal(byName['new-name.txt'].previous_filename, 'old-name.txt');
    assert.match(byName['mod.txt'].patch, /^@@ -2,7 \+2,7 @@/);
    assert.match(byName['mod.txt'].patch, /\n@@ -27,7 \+27,8 @@/);
    const p1 = await bob('GET', `/repos/${r.path}/pulls/1/files?per_page=3`);
    assert.equal(p1.json.length, 3);
    assert.match(p1.headers.get('link') ?? '', /rel="next"/);
    const issue = await bob('GET', `/repos/${r.path}/issues/9`);
    assert.deepEqual([issue.json.number, issue.json.title, issue.json.body, issue.json.state], [9, 'Linked', 'Issue body', 'open']);
    assert.equal(issue.json.pull_request, undefined);
    assert.ok((await bob('GET', `/repos/${r.path}/issues/1`)).json.pull_request);
    assert.equal((await bob('GET', `/repos/${r.path}/issues/10`)).status, 404);
    const c = await bob('POST', `/repos/${r.path}/issues/1/comments`, { body: 'general' });
    assert.equal(c.status, 201);
    assert.equal((await bob('GET', `/repos/${r.path}/issues/1/comments`)).json[0].body, 'general');
    // The next pull request number skips the issue's.
    const next = await forge.openPullRequest({ owner: r.owner, name: r.name, author: 'alice', head: 'b1', base: 'main', title: 'x' });
    assert.equal(next.number, 10);
  });

  // ---------------------------------------------------------------- GitHub reviews

  it('GitHub reviews: line/side must be on the diff (modified, added, deleted, renamed files), ranges in one hunk', async () => {
    const r = await newRepo('github');
    const head = r.pull?.headSha as string;
    const review = (comments: Record<string, unknown>[], extra: Record<string, unknown> = {}) =>
      bob('POST', `/repos/${r.path}/pulls/1/reviews`, { commit_id: head, event: 'COMMENT', body: 'b', comments, ...extra });
    const ok = async (c: Record<string, unknown>) => {
      const res = await review([{ body: 'x', ...c }]);
      assert.equal(res.status, 200, `${JSON.stringify(c)} → ${res.text}`);
    };
    const refused = async (c: Record<string, unknown>, message: string) => {
      const res = await review([{ body: 'x', ...c }]);
      assert.equal(res.status, 422, `${JSON.stringify(c)} was accepted`);
      assert.equal(res.json.message, 'Unprocessable Entity');
      assert.deepEqual(res.json.errors, [message], JSON.stringify(c));
    };
    // mod.txt: hunk 1 covers old/new 2-8 (5 replaced), hunk 2 old 27-33 / new 27-34 (30 → two lines).
    await ok({ path: 'mod.txt', line: 5, side: 'RIGHT' }); // added
    await ok({ path: 'mod.txt', line: 5 }); // side defaults to RIGHT
    await ok({ path: 'mod.txt', line: 5, side: 'LEFT' }); // deleted
    await ok({ path: 'mod.txt', line: 2, side: 'RIGHT' }); // context, new side
    await ok({ path: 'mod.txt', line: 2, side: 'LEFT' }); // context, old side
    await ok({ path: 'mod.txt', line: 31, side: 'RIGHT' });
    await ok({ path: 'mod.txt', line: 33, side: 'LEFT' });
    await ok({ path: 'mod.txt', line: 34, side: 'RIGHT' });
    await refused({ path: 'mod.txt', line: 1, side: 'RIGHT' }, 'Line could not be resolved');
    await refused({ path: 'mod.txt', line: 15, side: 'RIGHT' }, 'Line could not be resolved');
    await refused({ path: 'mod.txt', line: 34, side: 'LEFT' }, 'Line could not be resolved');
    await refused({ path: 'mod.txt', line: 35, side: 'RIGHT' }, 'Line could not be resolved');
    await ok({ path: 'added.txt', line: 3, side: 'RIGHT' });
    await refused({ path: 'added.txt', line: 1, side: 'LEFT' }, 'Line could not be resolved');
    await ok({ path: 'gone.txt', line: 1, side: 'LEFT' });
    await refused({ path: 'gone.txt', line: 1, side: 'RIGHT' }, 'Line could not be resolved');
    await ok({ path: 'new-name.txt', line: 10, side: 'RIGHT' });
    await ok({ path: 'new-name.txt', line: 10, side: 'LEFT' });
    await ok({ path: 'new-name.txt', line: 7, side: 'LEFT' });
    await refused({ path: 'new-name.txt', line: 6, side: 'RIGHT' }, 'Line could not be resolved');
    await refused({ path: 'old-name.txt', line: 10, side: 'LEFT' }, 'Path could not be resolved');
    await refused({ path: 'elsewhere.txt', line: 1 }, 'Path could not be resolved');
    // Ranges.
    await ok({ path: 'mod.txt', start_line: 3, line: 6, side: 'RIGHT' });
    await ok({ path: 'mod.txt', start_line: 5, start_side: 'LEFT', line: 5, side: 'RIGHT' }); // deleted → added, one hunk
    await refused({ path: 'mod.txt', start_line: 5, line: 30, side: 'RIGHT' }, 'Pull request review thread start line must be part of the same hunk as the line.');
    await refused({ path: 'mod.txt', start_line: 6, line: 4, side: 'RIGHT' }, 'Pull request review thread start line must precede the end line.');
    await refused({ path: 'mod.txt', start_line: 4, line: 4, side: 'RIGHT' }, 'Pull request review thread start line must precede the end line.');
    // Legacy position: the 4th line below the first @@ of mod.txt is "-m5".
    const byPos = await review([{ path: 'mod.txt', position: 4, body: 'p' }]);
    assert.equal(byPos.status, 200);
    const posComment = forge.reviewComments({ owner: r.owner, name: r.name, number: 1 }).at(-1) as Record<string, unknown>;
    assert.deepEqual([posComment['line'], posComment['side'], posComment['position']], [5, 'LEFT', 4]);
    assert.equal(posComment['diff_hunk'], '@@ -2,7 +2,7 @@ m1\n m2\n m3\n m4\n-m5');
  });

  it('GitHub reviews: atomic, one request, current head only, author and body rules, pagination', async () => {
    const r = await newRepo('github');
    const head = r.pull?.headSha as string;
    const url = `/repos/${r.path}/pulls/1/reviews`;
    const ref = { owner: r.owner, name: r.name, number: 1 };
    forge.clearRequests();
    const mixed = await bob('POST', url, {
      commit_id: head,
      event: 'REQUEST_CHANGES',
      body: 'fix',
      comments: [
        { path: 'mod.txt', line: 5, body: 'a' },
        { path: 'mod.txt', line: 15, body: 'not in the diff' },
      ],
    });
    assert.equal(mixed.status, 422);
    assert.equal(forge.reviews(ref).length, 0, 'a refused review stores nothing');
    const good = await bob('POST', url, {
      commit_id: head,
      event: 'REQUEST_CHANGES',
      body: 'fix',
      comments: [
        { path: 'mod.txt', line: 5, body: 'a' },
        { path: 'added.txt', line: 1, body: 'b' },
        { path: 'gone.txt', line: 2, side: 'LEFT', body: 'c' },
      ],
    });
    assert.equal(good.status, 200);
    assert.equal(good.json.state, 'CHANGES_REQUESTED');
    assert.equal(good.json.commit_id, head);
    assert.equal(good.json.user.login, 'bob');
    assert.match(good.json.html_url, /#pullrequestreview-\d+$/);
    assert.equal(forge.reviews(ref)[0]?.['comments'] instanceof Array && (forge.reviews(ref)[0]?.['comments'] as unknown[]).length, 3);
    assert.equal(forge.requests({ method: 'POST', pathPattern: '/pulls/\\d+/reviews$' }).length, 2, 'one POST per review, whatever the comment count');
    const listed = await bob('GET', `/repos/${r.path}/pulls/1/comments`);
    assert.deepEqual(
      listed.json.map((c: { path: string; line: number; side: string; pull_request_review_id: number }) => [c.path, c.line, c.side, c.pull_request_review_id]),
      [
        ['mod.txt', 5, 'RIGHT', good.json.id],
        ['added.txt', 1, 'RIGHT', good.json.id],
        ['gone.txt', 2, 'LEFT', good.json.id],
      ],
    );

    // Stale and foreign heads are refused (deliberately: a stale head too).
    const stale = await bob('POST', url, { commit_id: source.head('main'), event: 'COMMENT', body: 'x' });
    assert.equal(stale.status, 422);
    assert.deepEqual(stale.json.errors, ['The commitOID is not part of the pull request']);
    // Author rules.
    const selfApprove = await alice('POST', url, { commit_id: head, event: 'APPROVE' });
    assert.deepEqual([selfApprove.status, selfApprove.json.errors], [422, ['Can not approve your own pull request']]);
    const selfChanges = await alice('POST', url, { commit_id: head, event: 'REQUEST_CHANGES', body: 'x' });
    assert.deepEqual(selfChanges.json.errors, ['Can not request changes on your own pull request']);
    assert.equal((await alice('POST', url, { commit_id: head, event: 'COMMENT', body: 'own comment' })).status, 200);
    // Body rules.
    assert.equal((await bob('POST', url, { commit_id: head, event: 'REQUEST_CHANGES', body: '' })).status, 422);
    assert.equal((await bob('POST', url, { commit_id: head, event: 'COMMENT' })).status, 422);
    assert.equal((await bob('POST', url, { commit_id: head, event: 'APPROVE' })).json.state, 'APPROVED');
    assert.equal((await bob('POST', url, { commit_id: head, event: 'SHIP_IT' })).status, 422);
    // Pending review: one per user, visible to its author only, submitted later.
    const pending = await bob('POST', url, { commit_id: head, body: 'draft', comments: [{ path: 'mod.txt', line: 5, body: 'p' }] });
    assert.equal(pending.json.state, 'PENDING');
    assert.equal(pending.json.submitted_at, undefined);
    assert.deepEqual((await bob('POST', url, { commit_id: head, event: 'COMMENT', body: 'x' })).json.errors, ['User can only have one pending review per pull request']);
    assert.ok(!(await alice('GET', url)).json.some((x: { id: number }) => x.id === pending.json.id));
    const submitted = await bob('POST', `${url}/${pending.json.id}/events`, { event: 'COMMENT' });
    assert.equal(submitted.json.state, 'COMMENTED');

    // The head moves: the old head is now stale.
    await forge.movePullRequestHead({ ...ref, sha: source.head('b2') });
    const moved = await bob('POST', url, { commit_id: head, event: 'APPROVE' });
    assert.equal(moved.status, 422);

    // Pagination of reviews.
    const page = await bob('GET', `${url}?per_page=2`);
    assert.equal(page.json.length, 2);
    assert.match(page.headers.get('link') ?? '', /page=2[^>]*>; rel="next"/);
    const all = await bob('GET', `${url}?per_page=100`);
    assert.deepEqual(
      all.json.map((x: { state: string }) => x.state),
      ['CHANGES_REQUESTED', 'COMMENTED', 'APPROVED', 'COMMENTED'],
    );
  });

  // ---------------------------------------------------------------- faults

  it('faults: drop-response-after-mutation, rate limits (GitHub 403, GitLab 429), status', async () => {
    const r = await newRepo('github');
    const ref = { owner: r.owner, name: r.name, number: 1 };
    forge.setFault({ kind: 'drop-response-after-mutation', method: 'POST', pathPattern: '/reviews$' });
    await assert.rejects(bob('POST', `/repos/${r.path}/pulls/1/reviews`, { commit_id: r.pull?.headSha, event: 'APPROVE' }), /fetch failed/);
    assert.equal(forge.reviews(ref).length, 1, 'the mutation happened');
    const dropped = forge.requests({ pathPattern: '/reviews$' }).at(-1);
    assert.deepEqual([dropped?.dropped, dropped?.status, dropped?.fault], [true, 200, 'drop-response-after-mutation']);
    assert.equal((await bob('GET', `/repos/${r.path}/pulls/1/reviews`)).json.length, 1, 'the fault fired once');

    forge.setFault({ kind: 'rate-limit', times: 1, retryAfterSeconds: 7 });
    const limited = await bob('GET', '/user');
    assert.equal(limited.status, 403);
    assert.equal(limited.headers.get('retry-after'), '7');
    assert.equal(limited.headers.get('x-ratelimit-remaining'), '0');
    assert.match(limited.json.message, /secondary rate limit/);
    assert.equal((await bob('GET', '/user')).status, 200);
    forge.setFault({ kind: 'rate-limit', variant: 'primary', retryAfterSeconds: 30 });
    const primary = await bob('GET', '/user');
    assert.equal(primary.status, 403);
    assert.equal(primary.headers.get('x-ratelimit-remaining'), '0');
    assert.ok(Number(primary.headers.get('x-ratelimit-reset')) >= Math.floor(Date.now() / 1000) + 29);
    assert.match(primary.json.message, /API rate limit exceeded/);

    forge.setFault({ kind: 'rate-limit', times: 2, retryAfterSeconds: 3, pathPattern: '^/api/v4/' });
    for (let i = 0; i < 2; i++) {
      const gl429 = await glBob('GET', '/user');
      assert.equal(gl429.status, 429);
      assert.equal(gl429.headers.get('retry-after'), '3');
      assert.equal(gl429.text, 'Retry later\n');
    }
    assert.equal((await glBob('GET', '/user')).status, 200);

    forge.setFault({ kind: 'status', status: 502, pathPattern: '/pulls$', times: 1 });
    const s502 = await bob('GET', `/repos/${r.path}/pulls`);
    assert.equal(s502.status, 502);
    assert.equal(s502.json.message, 'Bad Gateway');
    assert.equal((await bob('GET', `/repos/${r.path}/pulls`)).status, 200);
    assert.equal(forge.requests({ pathPattern: '/pulls$' }).at(-2)?.fault, 'status');
  });

  // ---------------------------------------------------------------- GitLab

  it('GitLab: projects by path or id, merge request fields, list filters and pagination headers, create/update rules', async () => {
    const g = await newRepo('gitlab', false);
    const project = await glBob('GET', `/projects/${g.enc}`);
    assert.equal(project.status, 200);
    assert.equal(project.json.path_with_namespace, g.path);
    assert.equal((await glBob('GET', `/projects/${project.json.id}`)).json.path_with_namespace, g.path);
    assert.deepEqual((await glBob('GET', '/projects/grp%2Fnope')).json, { message: '404 Project Not Found' });

    const created = await glAlice('POST', `/projects/${g.enc}/merge_requests`, { source_branch: 'feature', target_branch: 'main', title: 'Feature', description: 'D' });
    assert.equal(created.status, 201);
    const mr = created.json;
    assert.equal(mr.iid, 1);
    assert.deepEqual([mr.title, mr.description, mr.state, mr.author.username, mr.source_branch, mr.target_branch], ['Feature', 'D', 'opened', 'alice', 'feature', 'main']);
    assert.equal(mr.web_url, `${forge.url}/${g.path}/-/merge_requests/1`);
    assert.equal(mr.sha, source.head('feature'));
    assert.deepEqual(mr.diff_refs, { base_sha: source.head('main'), start_sha: source.head('main'), head_sha: source.head('feature') });
    const dup = await glAlice('POST', `/projects/${g.enc}/merge_requests`, { source_branch: 'feature', target_branch: 'main', title: 'again' });
    assert.equal(dup.status, 409);
    assert.deepEqual(dup.json, { message: ['Another open merge request already exists for this source branch: !1'] });
    const missing = await glAlice('POST', `/projects/${g.enc}/merge_requests`, { source_branch: 'b1' });
    assert.deepEqual([missing.status, missing.json], [400, { error: 'target_branch is missing, title is missing' }]);
    // Form-encoded bodies are accepted too (Grape).
    const form = await call(`${forge.gitlabApiUrl}/projects/${g.enc}/merge_requests`, {
      method: 'POST',
      headers: { 'private-token': 'alice-token', 'content-type': 'application/x-www-form-urlencoded' },
      body: 'source_branch=b1&target_branch=main&title=B1',
    });
    assert.equal(form.status, 201);
    for (let i = 2; i <= 5; i++) assert.equal((await glAlice('POST', `/projects/${g.enc}/merge_requests`, { source_branch: `b${i}`, target_branch: 'main', title: `B${i}` })).status, 201);

    const p1 = await glBob('GET', `/projects/${g.enc}/merge_requests?state=opened&per_page=4`);
    assert.deepEqual(
      p1.json.map((m: { iid: number }) => m.iid),
      [6, 5, 4, 3],
    );
    assert.deepEqual([p1.headers.get('x-next-page'), p1.headers.get('x-total'), p1.headers.get('x-total-pages'), p1.headers.get('x-page')], ['2', '6', '2', '1']);
    assert.match(p1.headers.get('link') ?? '', /page=2[^>]*>; rel="next"/);
    const p2 = await glBob('GET', `/projects/${g.enc}/merge_requests?state=opened&per_page=4&page=2`);
    assert.deepEqual(
      p2.json.map((m: { iid: number }) => m.iid),
      [2, 1],
    );
    assert.equal(p2.headers.get('x-next-page'), '');
    const bySource = await glBob('GET', `/projects/${g.enc}/merge_requests?state=opened&source_branch=b3`);
    assert.deepEqual(
      bySource.json.map((m: { iid: number }) => m.iid),
      [4],
    );
    assert.equal((await glBob('GET', `/projects/${g.enc}/merge_requests?target_branch=feature`)).json.length, 0);

    const put = await glAlice('PUT', `/projects/${g.enc}/merge_requests/1`, { title: 'Renamed', description: 'D2', state_event: 'close' });
    assert.deepEqual([put.status, put.json.title, put.json.description, put.json.state], [200, 'Renamed', 'D2', 'closed']);
    assert.equal((await glBob('GET', `/projects/${g.enc}/merge_requests?state=closed`)).json[0].iid, 1);
    assert.equal((await glAlice('POST', `/projects/${g.enc}/merge_requests`, { source_branch: 'feature', target_branch: 'main', title: 'new' })).status, 201);
    assert.equal((await glAlice('PUT', `/projects/${g.enc}/merge_requests/1`, { state_event: 'reopen' })).status, 409);
    assert.deepEqual((await glBob('GET', `/projects/${g.enc}/merge_requests/99`)).json, { message: '404 Not found' });
  });

  it('GitLab: notes and discussions; positions must name diff lines exactly (added new_line, deleted old_line, context both; line codes)', async () => {
    const g = await newRepo('gitlab');
    forge.addIssue({ provider: 'gitlab', owner: g.owner, name: g.name, title: 'Bug', body: 'It breaks' });
    const issue = await glBob('GET', `/projects/${g.enc}/issues/1`);
    assert.deepEqual([issue.json.iid, issue.json.title, issue.json.description], [1, 'Bug', 'It breaks']);
    const mrPath = `/projects/${g.enc}/merge_requests/1`;
    const refs = (await glBob('GET', mrPath)).json.diff_refs;
    const note = await glBob('POST', `${mrPath}/notes`, { body: 'general' });
    assert.equal(note.status, 201);
    assert.deepEqual([note.json.body, note.json.author.username, note.json.type], ['general', 'bob', null]);
    assert.deepEqual((await glBob('POST', `${mrPath}/notes`, {})).json, { error: 'body is missing' });

    const discuss = (position: Record<string, unknown>) => glBob('POST', `${mrPath}/discussions`, { body: 'here', position: { position_type: 'text', ...refs, ...position } });
    const ok = async (p: Record<string, unknown>) => {
      const res = await discuss(p);
      assert.equal(res.status, 201, `${JSON.stringify(p)} → ${res.text}`);
      return res.json;
    };
    const refused = async (p: Record<string, unknown>) => {
      const res = await discuss(p);
      assert.equal(res.status, 400, `${JSON.stringify(p)} was accepted`);
      return res.json;
    };
    const mod = { old_path: 'mod.txt', new_path: 'mod.txt' };
    const added = await ok({ ...mod, new_line: 5 });
    assert.equal(added.individual_note, false);
    assert.equal(added.notes[0].type, 'DiffNote');
    assert.equal(added.notes[0].position.new_line, 5);
    assert.equal(added.notes[0].position.old_line, null);
    assert.equal(added.notes[0].line_code, `${sha1('mod.txt')}_6_5`);
    await ok({ ...mod, old_line: 5 }); // deleted
    await ok({ ...mod, old_line: 2, new_line: 2 }); // context
    await ok({ ...mod, old_line: 31, new_line: 32 }); // context after the added line of hunk 2
    const blank = await refused({ ...mod, new_line: 2 }); // context needs both
    assert.deepEqual(blank, { message: `400 Bad request - Note {:line_code=>["can't be blank", "must be a valid line code"]}` });
    await refused({ ...mod, old_line: 5, new_line: 5 });
    await refused({ ...mod, new_line: 15 });
    await refused({ ...mod, old_line: 2 });
    await ok({ old_path: 'added.txt', new_path: 'added.txt', new_line: 1 });
    await refused({ old_path: 'added.txt', new_path: 'added.txt', old_line: 1 });
    await ok({ old_path: 'gone.txt', new_path: 'gone.txt', old_line: 3 });
    await refused({ old_path: 'gone.txt', new_path: 'gone.txt', new_line: 3 });
    await ok({ old_path: 'old-name.txt', new_path: 'new-name.txt', new_line: 10 });
    await ok({ old_path: 'old-name.txt', new_path: 'new-name.txt', old_line: 7, new_line: 7 });
    await refused({ old_path: 'new-name.txt', new_path: 'new-name.txt', new_line: 10 });
    await refused({ old_path: 'nope.txt', new_path: 'nope.txt', new_line: 1 });
    // Stale or foreign shas.
    await refused({ ...mod, new_line: 5, head_sha: source.head('main') });
    await refused({ ...mod, new_line: 5, base_sha: source.head('feature') });
    assert.deepEqual((await glBob('POST', `${mrPath}/discussions`, { body: 'x', position: { position_type: 'text', new_line: 5 } })).json, {
      error: 'position[base_sha] is missing, position[start_sha] is missing, position[head_sha] is missing',
    });
    // line_range: line codes of the file, end = the position's line, start not after it.
    const code = (o: number, n: number) => `${sha1('mod.txt')}_${o}_${n}`;
    const ranged = await ok({ ...mod, new_line: 5, line_range: { start: { line_code: code(2, 2), type: 'old', old_line: 2, new_line: 2 }, end: { line_code: code(6, 5), type: 'new', new_line: 5 } } });
    assert.equal(ranged.notes[0].position.line_range.start.line_code, code(2, 2));
    const badRange = await refused({ ...mod, new_line: 5, line_range: { start: { line_code: code(3, 2), type: 'old' }, end: { line_code: code(6, 5), type: 'new' } } });
    assert.match(badRange.message, /^400 Bad request - Note \{:line_range=>/);
    await refused({ ...mod, new_line: 5, line_range: { start: { line_code: code(2, 2) }, end: { line_code: code(3, 3) } } });
    await refused({ ...mod, old_line: 2, new_line: 2, line_range: { start: { line_code: code(6, 5), type: 'new' }, end: { line_code: code(2, 2) } } });
    // A general discussion, a reply, and the lists.
    const general = await glBob('POST', `${mrPath}/discussions`, { body: 'thread' });
    assert.equal(general.json.notes[0].type, 'DiscussionNote');
    const reply = await glAlice('POST', `${mrPath}/discussions/${added.id}/notes`, { body: 'reply' });
    assert.equal(reply.status, 201);
    assert.equal(reply.json.type, 'DiffNote');
    const discussions = await glBob('GET', `${mrPath}/discussions?per_page=100`);
    const thread = discussions.json.find((d: { id: string }) => d.id === added.id);
    assert.deepEqual(
      thread.notes.map((n: { body: string }) => n.body),
      ['here', 'reply'],
    );
    const notes = await glBob('GET', `${mrPath}/notes?per_page=2`);
    assert.equal(notes.json.length, 2);
    assert.equal(notes.headers.get('x-next-page'), '2');
    assert.equal(notes.json[0].body, 'reply', 'notes are newest first by default');
  });

  it('GitLab: draft notes publish atomically; approvals (sha must be the head, the author may not approve)', async () => {
    const g = await newRepo('gitlab');
    const mrPath = `/projects/${g.enc}/merge_requests/1`;
    const refs = (await glBob('GET', mrPath)).json.diff_refs;
    const d1 = await glBob('POST', `${mrPath}/draft_notes`, { note: 'one', position: { position_type: 'text', ...refs, old_path: 'mod.txt', new_path: 'mod.txt', new_line: 5 } });
    assert.equal(d1.status, 201);
    assert.equal(d1.json.note, 'one');
    assert.equal(d1.json.line_code, `${sha1('mod.txt')}_6_5`);
    const bad = await glBob('POST', `${mrPath}/draft_notes`, { note: 'bad', position: { position_type: 'text', ...refs, old_path: 'mod.txt', new_path: 'mod.txt', new_line: 16 } });
    assert.equal(bad.status, 400);
    assert.equal((await glBob('POST', `${mrPath}/draft_notes`, { note: 'two' })).status, 201);
    assert.equal((await glAlice('GET', `${mrPath}/draft_notes`)).json.length, 0, "drafts are their author's");
    assert.equal(forge.discussions({ owner: g.owner, name: g.name, iid: 1 }).length, 0);
    const published = await glBob('POST', `${mrPath}/draft_notes/bulk_publish`);
    assert.equal(published.status, 204);
    const threads = forge.discussions({ owner: g.owner, name: g.name, iid: 1 });
    assert.equal(threads.length, 2);
    assert.equal((await glBob('GET', `${mrPath}/draft_notes`)).json.length, 0);

    // A draft whose head moved on is refused at publish, and nothing is published.
    await glBob('POST', `${mrPath}/draft_notes`, { note: 'three', position: { position_type: 'text', ...refs, old_path: 'added.txt', new_path: 'added.txt', new_line: 2 } });
    await glBob('POST', `${mrPath}/draft_notes`, { note: 'four' });
    await forge.movePullRequestHead({ owner: g.owner, name: g.name, iid: 1, sha: source.head('b3') });
    assert.equal((await glBob('POST', `${mrPath}/draft_notes/bulk_publish`)).status, 400);
    assert.equal(forge.discussions({ owner: g.owner, name: g.name, iid: 1 }).length, 2);
    await forge.movePullRequestHead({ owner: g.owner, name: g.name, iid: 1, sha: source.head('feature') });

    // Approvals.
    const head = source.head('feature');
    const wrong = await glBob('POST', `${mrPath}/approve`, { sha: source.head('main') });
    assert.deepEqual([wrong.status, wrong.json], [409, { message: `SHA does not match HEAD of source branch: ${head}` }]);
    const own = await glAlice('POST', `${mrPath}/approve`, { sha: head });
    assert.deepEqual([own.status, own.json], [401, { message: '401 Unauthorized' }]);
    const approved = await glBob('POST', `${mrPath}/approve`, { sha: head });
    assert.equal(approved.status, 201);
    assert.deepEqual(
      approved.json.approved_by.map((a: { user: { username: string } }) => a.user.username),
      ['bob'],
    );
    assert.equal((await glBob('POST', `${mrPath}/approve`, { sha: head })).status, 401, 'approving twice');
    const state = await glAlice('GET', `${mrPath}/approvals`);
    assert.deepEqual([state.json.approved, state.json.approved_by[0].user.username, state.json.user_can_approve], [true, 'bob', false]);
    forge.setRepoOptions({ owner: g.owner, name: g.name, preventAuthorApproval: false });
    assert.equal((await glAlice('POST', `${mrPath}/approve`)).status, 201);
    assert.equal((await glBob('POST', `${mrPath}/unapprove`)).status, 201);
    assert.deepEqual(
      (forge.approvals({ owner: g.owner, name: g.name, iid: 1 })['approved_by'] as { user: { username: string } }[]).map((a) => a.user.username),
      ['alice'],
    );
  });

  // ---------------------------------------------------------------- control over HTTP

  it('control API over /_fake: JSON in, JSON out, errors as 400', async () => {
    const post = (method: string, body: unknown) => call(`${forge.url}/_fake/${method}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    assert.equal((await post('addUser', { login: 'carol', token: 'carol-token' })).json.result.login, 'carol');
    const repo = await post('createRepo', { provider: 'github', owner: 'ctl', name: 'repo', from: source.dir });
    assert.equal(repo.json.result.cloneUrl, `${forge.url}/ctl/repo.git`);
    const pr = await post('openPullRequest', { provider: 'github', owner: 'ctl', name: 'repo', author: 'carol', head: 'feature', base: 'main', title: 'T' });
    assert.equal(pr.json.result.number, 1);
    await gh('bob-token')('POST', '/repos/ctl/repo/pulls/1/reviews', { commit_id: pr.json.result.headSha, event: 'APPROVE' });
    const reviews = await call(`${forge.url}/_fake/reviews?owner=ctl&name=repo&number=1`, {});
    assert.equal(reviews.json.result[0].state, 'APPROVED');
    const log = await post('requests', { method: 'POST', pathPattern: '^/api/v3/repos/ctl/' });
    assert.equal(log.json.result.length, 1);
    assert.equal(log.json.result[0].status, 200);
    assert.equal((await post('setFault', { kind: 'status', status: 500, times: 1 })).json.result.id > 0, true);
    assert.equal((await gh('bob-token')('GET', '/user')).status, 500);
    const error = await post('openPullRequest', { owner: 'ctl', name: 'repo', author: 'carol', head: 'nope', base: 'main', title: 'T' });
    assert.equal(error.status, 400);
    assert.match(error.json.error, /no branch nope/);
    assert.equal((await post('noSuchMethod', {})).status, 404);
  });

  it('runs as its own process (main.ts): prints its URLs, is driven over /_fake, exits when stdin closes', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/servers/fakeForge/main.ts'], { stdio: ['pipe', 'pipe', 'inherit'] });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      const first = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (c: Buffer) => {
          out += c.toString('utf8');
          if (out.includes('\n')) resolve(out.split('\n')[0] as string);
        });
        child.on('error', reject);
      });
      const urls = JSON.parse(first) as { url: string; githubApiUrl: string; gitlabApiUrl: string };
      assert.equal(urls.githubApiUrl, `${urls.url}/api/v3`);
      const added = await call(`${urls.url}/_fake/addUser`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login: 'dora', token: 'dora-token' }) });
      assert.equal(added.json.result.login, 'dora');
      assert.equal((await call(`${urls.gitlabApiUrl}/user`, { headers: { 'private-token': 'dora-token' } })).json.username, 'dora');
    } finally {
      child.stdin.end();
    }
    assert.equal(await exited, 0);
  });

  // ---------------------------------------------------------------- the real client libraries

  describe('with the real client libraries', () => {
    it('Octokit (paginate-rest, retry, throttling): paginate pulls and reviews, createReview, a refused review, a secondary rate limit retried', async () => {
      const { Octokit } = await import('@octokit/rest');
      const { retry } = await import('@octokit/plugin-retry');
      const { throttling } = await import('@octokit/plugin-throttling');
      const r = await newRepo('github');
      for (let i = 1; i <= 4; i++) await forge.openPullRequest({ owner: r.owner, name: r.name, author: 'alice', head: `b${i}`, base: 'main', title: `B${i}` });
      const limited: number[] = [];
      const Kit = Octokit.plugin(retry, throttling);
      const octokit = new Kit({
        auth: 'bob-token',
        log: quiet,
        baseUrl: forge.githubApiUrl,
        throttle: {
          onRateLimit: () => false,
          onSecondaryRateLimit: (after: number, _o: unknown, _k: unknown, count: number) => {
            limited.push(after);
            return count < 1;
          },
        },
        retry: { retries: 0 },
      });
      const pulls = await octokit.paginate(octokit.rest.pulls.list, { owner: r.owner, repo: r.name, state: 'open', per_page: 2 });
      assert.deepEqual(
        pulls.map((p) => p.number),
        [5, 4, 3, 2, 1],
      );
      assert.equal(forge.requests({ method: 'GET', pathPattern: `^/api/v3/repos/${r.path}/pulls$` }).length, 3);
      const head = pulls.find((p) => p.number === 1)?.head.sha as string;
      const created = await octokit.rest.pulls.createReview({
        owner: r.owner,
        repo: r.name,
        pull_number: 1,
        commit_id: head,
        event: 'REQUEST_CHANGES',
        body: 'Please fix',
        comments: [
          { path: 'mod.txt', line: 5, side: 'RIGHT', body: 'one' },
          { path: 'mod.txt', start_line: 28, line: 31, side: 'RIGHT', body: 'range' },
          { path: 'gone.txt', line: 1, side: 'LEFT', body: 'why' },
        ],
      });
      assert.equal(created.status, 200);
      assert.equal(created.data.state, 'CHANGES_REQUESTED');
      await assert.rejects(
        octokit.rest.pulls.createReview({ owner: r.owner, repo: r.name, pull_number: 1, commit_id: head, event: 'COMMENT', body: 'x', comments: [{ path: 'mod.txt', line: 20, body: 'outside' }] }),
        (e: { status?: number; response?: { data?: { errors?: string[] } } }) => e.status === 422 && e.response?.data?.errors?.[0] === 'Line could not be resolved',
      );
      await octokit.rest.pulls.createReview({ owner: r.owner, repo: r.name, pull_number: 1, commit_id: head, event: 'COMMENT', body: 'second' });
      forge.setFault({ kind: 'rate-limit', times: 1, retryAfterSeconds: 1, pathPattern: '/reviews$', method: 'GET' });
      const reviews = await octokit.paginate(octokit.rest.pulls.listReviews, { owner: r.owner, repo: r.name, pull_number: 1, per_page: 1 });
      assert.deepEqual(
        reviews.map((x) => x.state),
        ['CHANGES_REQUESTED', 'COMMENTED'],
      );
      assert.deepEqual(limited, [1], 'the throttling plugin saw the secondary limit and retried after retry-after');
      const comments = await octokit.paginate(octokit.rest.pulls.listReviewComments, { owner: r.owner, repo: r.name, pull_number: 1, per_page: 2 });
      assert.deepEqual(
        comments.map((c) => [c.path, c.start_line, c.line, c.side]),
        [
          ['mod.txt', null, 5, 'RIGHT'],
          ['mod.txt', 28, 31, 'RIGHT'],
          ['gone.txt', null, 1, 'LEFT'],
        ],
      );
    });

    it("Octokit's retry plugin re-sends a POST whose response was dropped: the forge shows the duplicate", async () => {
      const { Octokit } = await import('@octokit/rest');
      const { retry } = await import('@octokit/plugin-retry');
      const r = await newRepo('github');
      const octokit = new (Octokit.plugin(retry))({ auth: 'bob-token', log: quiet, baseUrl: forge.githubApiUrl, retry: { retryAfterBaseValue: 10 } });
      forge.setFault({ kind: 'drop-response-after-mutation', method: 'POST', pathPattern: '/reviews$' });
      await octokit.rest.pulls.createReview({ owner: r.owner, repo: r.name, pull_number: 1, commit_id: r.pull?.headSha as string, event: 'COMMENT', body: 'once?' });
      assert.equal(forge.reviews({ owner: r.owner, name: r.name, number: 1 }).length, 2);
      assert.equal(forge.requests({ method: 'POST', pathPattern: '/reviews$' }).filter((x) => x.path.includes(`/${r.name}/`)).length, 2);
    });

    it('gitbeaker: merge requests paginated, a positioned discussion (multipart form), a refused one, approve', async () => {
      const { Gitlab } = await import('@gitbeaker/rest');
      const g = await newRepo('gitlab');
      for (let i = 1; i <= 4; i++) await forge.openPullRequest({ owner: g.owner, name: g.name, author: 'alice', head: `b${i}`, base: 'main', title: `B${i}` });
      const api = new Gitlab({ host: forge.url, token: 'bob-token' });
      const mrs = await api.MergeRequests.all({ projectId: g.path, state: 'opened', perPage: 2 });
      assert.deepEqual(
        mrs.map((m) => m.iid),
        [5, 4, 3, 2, 1],
      );
      const mr = await api.MergeRequests.show(g.path, 1);
      const refs = mr.diff_refs;
      const discussion = await api.MergeRequestDiscussions.create(g.path, 1, 'Positioned', {
        position: {
          baseSha: refs.base_sha,
          startSha: refs.start_sha,
          headSha: refs.head_sha,
          positionType: 'text',
          oldPath: 'mod.txt',
          newPath: 'mod.txt',
          newLine: '5',
          lineRange: { start: { lineCode: `${sha1('mod.txt')}_2_2`, type: 'old', oldLine: 2, newLine: 2 }, end: { lineCode: `${sha1('mod.txt')}_6_5`, type: 'new', newLine: 5 } },
        },
      });
      const note = discussion.notes?.[0] as unknown as { type: string; position: { new_line: number; line_range: { start: { old_line: number } } } };
      assert.equal(note.type, 'DiffNote');
      assert.equal(note.position.new_line, 5);
      assert.equal(note.position.line_range.start.old_line, 2);
      assert.equal(forge.requests({ method: 'POST', pathPattern: '/discussions$' }).at(-1)?.status, 201);
      await assert.rejects(
        api.MergeRequestDiscussions.create(g.path, 1, 'Context line, new side only', {
          position: { baseSha: refs.base_sha, startSha: refs.start_sha, headSha: refs.head_sha, positionType: 'text', oldPath: 'mod.txt', newPath: 'mod.txt', newLine: '2' },
        }),
        (e: Error) => e.name === 'GitbeakerRequestError' && /must be a valid line code/.test(e.message),
      );
      await assert.rejects(api.MergeRequestApprovals.approve(g.path, 1, { sha: refs.base_sha }), (e: Error) => /SHA does not match HEAD of source branch/.test(e.message));
      const approval = await api.MergeRequestApprovals.approve(g.path, 1, { sha: refs.head_sha });
      assert.deepEqual(
        (approval.approved_by as { user: { username: string } }[]).map((a) => a.user.username),
        ['bob'],
      );
      const asAuthor = new Gitlab({ host: forge.url, token: 'alice-token' });
      await assert.rejects(asAuthor.MergeRequestApprovals.approve(g.path, 1, { sha: refs.head_sha }), (e: Error) => /401 Unauthorized/.test(e.message));
      forge.setFault({ kind: 'rate-limit', times: 1, retryAfterSeconds: 1, pathPattern: '/approvals$' });
      const config = await api.MergeRequestApprovals.showConfiguration(g.path, { mergerequestIId: 1 });
      assert.equal((config as unknown as { approved: boolean }).approved, true, 'gitbeaker retried the 429');
    });
  });
});
