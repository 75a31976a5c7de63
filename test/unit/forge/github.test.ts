import assert from 'node:assert/strict';
import { capturePatchset } from '../../../host/capture/capture';
import { openRepo } from '../../../host/capture/repo';
import { composeReview } from '../../../host/exits/compose';
import { githubAdapter } from '../../../host/forge/github';
import { ForgeError, type ForgeAdapter, type ForgeAdapterOptions } from '../../../host/forge/types';
import { ComposedReview as ComposedReviewSchema, reviewMarker, type ComposedReview } from '../../../protocol/exits';
import type { ForgeRepo } from '../../../protocol/forge';
import type { Patchset } from '../../../protocol/patchset';
import type { TestRepo } from '../../fixtures/gitRepo';
import { forgeFixture } from './fixtures';
import { startFakeForge, type FakeForge } from '../../servers/fakeForge';
import { Asks, GROUNDING, SESSION, line } from '../exits/fixtures';

/**
 * The GitHub adapter (host/forge/github.ts: @octokit/rest + plugin-retry + plugin-throttling)
 * against the fake forge, which enforces GitHub's rules (comment lines on the PR's diff, one hunk
 * per range, own-PR approval, duplicates), over a real repository captured by the real capture and
 * a review composed by the real composer — so the comments are exactly what production posts.
 */

const TOKENS = { alice: 'ghp_alice-secret-0001', bob: 'ghp_bob-secret-0002', carol: 'ghp_carol-secret-0003' };
/** Small pages (to cross them), fast read retries, no write spacing; Retry-After is honoured in real seconds. */
const FAST: ForgeAdapterOptions = { pageSize: 2, readRetryBaseMs: 1, retryAfterUnitMs: 1000, spaceWrites: false };

function isForgeError(kind: ForgeError['kind'], words?: RegExp | string) {
  return (e: unknown) => {
    assert.ok(e instanceof ForgeError, `not a ForgeError: ${String(e)}`);
    assert.equal(e.kind, kind, `kind ${e.kind}: ${e.message}`);
    if (typeof words === 'string') assert.equal(e.message, words);
    else if (words) assert.match(e.message, words);
    for (const t of Object.values(TOKENS)) assert.ok(!e.message.includes(t), 'a token in the message');
    return true;
  };
}

describe('forge: the GitHub adapter against the fake forge', function () {
  this.timeout(120_000);
  let forge: FakeForge;
  let source: TestRepo;
  let ps: Patchset;
  let nextRepo = 0;

  before(async () => {
    source = forgeFixture();
    const handle = await openRepo(source.dir);
    assert.ok(handle.ok);
    const captured = await capturePatchset(handle.value, { kind: 'branch', base: 'main', head: 'feature' });
    assert.ok(captured.ok, captured.ok ? '' : captured.error.message);
    ps = captured.value;
    forge = await startFakeForge();
    for (const [login, token] of Object.entries(TOKENS)) forge.addUser({ login, token });
  });
  after(async () => {
    await forge?.close();
    source?.cleanup();
  });

  /** A fresh repository (and its ForgeRepo) for a test. */
  async function newRepo(): Promise<ForgeRepo> {
    const name = `app${++nextRepo}`;
    await forge.createRepo({ provider: 'github', owner: 'acme', name, from: source.dir });
    return { provider: 'github', host: `127.0.0.1:${forge.port}`, owner: 'acme', repo: name, apiUrl: forge.githubApiUrl, webUrl: `${forge.url}/acme/${name}` };
  }
  const open = async (r: ForgeRepo, author = 'alice', head = 'feature') => (await forge.openPullRequest({ owner: r.owner, name: r.repo, author, head, base: 'main', title: `PR from ${head}` })).number;
  const adapter = (r: ForgeRepo, who: keyof typeof TOKENS = 'bob', options: ForgeAdapterOptions = FAST): ForgeAdapter => githubAdapter(r, TOKENS[who], options);
  const pull = (r: ForgeRepo, number: number) => ({ owner: r.owner, name: r.repo, number });

  function compose(r: ForgeRepo, number: number, asks: Asks, ownPullRequest = false): ComposedReview {
    const result = composeReview({
      sessionId: SESSION,
      patchset: ps,
      projection: asks.projection(),
      target: { provider: 'github', host: r.host, owner: r.owner, repo: r.repo, number, headSha: ps.head, baseSha: ps.base },
      ownPullRequest,
      grounding: GROUNDING,
    });
    assert.ok(result.ok, result.ok ? '' : result.error.message);
    return ComposedReviewSchema.parse(result.value);
  }

  /** Every kind of comment: single, range, LEFT, context, a deleted file, a rename (both sides), an added file; one folds. */
  function everyKind(): Asks {
    const a = new Asks();
    a.ask(line(ps, 'mod.txt', 'head', 5), 'the added line', 'request-change');
    a.ask(line(ps, 'mod.txt', 'head', 28, 31), 'a range from context into added lines');
    a.ask(line(ps, 'mod.txt', 'base', 5), 'LEFT: the deleted line');
    a.ask(line(ps, 'mod.txt', 'head', 3), 'a context line');
    a.ask(line(ps, 'gone.txt', 'base', 1, 2), 'a LEFT range in a deleted file', 'question');
    a.ask(line(ps, 'new-name.txt', 'head', 10), 'the renamed file, added line');
    a.ask(line(ps, 'new-name.txt', 'base', 8), 'the renamed file, LEFT context line');
    a.ask(line(ps, 'added.txt', 'head', 1, 3), 'the whole added file');
    a.ask(line(ps, 'mod.txt', 'head', 18), 'outside the diff: folds into the body');
    return a;
  }

  const wire = (c: ComposedReview['descriptor']['comments'][number]) => [c.path, c.line, c.side, c.startLine ?? null, c.startSide ?? null, c.body];

  it('posts one review with exactly the descriptor body and every kind of comment (single, range, LEFT, context, deleted, renamed, added)', async () => {
    const r = await newRepo();
    const number = await open(r);
    const composed = compose(r, number, everyKind());
    const d = composed.descriptor;
    assert.equal(d.comments.length, 8, 'the composer placed every comment but the one outside the diff');
    assert.deepEqual(
      d.folded.map((f) => f.reason),
      ['outside-diff'],
    );
    assert.equal(d.event, 'REQUEST_CHANGES');

    const posted = await adapter(r).post(number, composed, ps.head, ps.files);
    const reviews = forge.reviews(pull(r, number)) as { id: number; body: string; state: string; commit_id: string; user: { login: string }; comments: Record<string, unknown>[] }[];
    assert.equal(reviews.length, 1);
    const review = reviews[0]!;
    assert.equal(review.body, d.body, 'the body, marker last, exactly');
    assert.equal(review.state, 'CHANGES_REQUESTED');
    assert.equal(review.commit_id, ps.head);
    assert.equal(review.user.login, 'bob');
    assert.deepEqual(
      review.comments.map((c) => [c['path'], c['line'], c['side'], c['start_line'], c['start_side'], c['body']]),
      d.comments.map(wire),
    );
    assert.deepEqual(posted, { reviewId: review.id, url: `${forge.url}/acme/${r.repo}/pull/${number}#pullrequestreview-${review.id}`, event: 'REQUEST_CHANGES', comments: 8 });
    assert.equal(forge.requests({ method: 'POST', pathPattern: `/${r.repo}/pulls/${number}/reviews$` }).length, 1, 'one createReview');
  });

  it('earlierReview: the signed-in user’s review carrying Rennet’s marker (not another reviewer’s), its commit, state, body and every line comment; null when they have none', async () => {
    const r = await newRepo();
    const number = await open(r);
    const bob = adapter(r, 'bob');
    assert.equal(await bob.earlierReview!(number), null, 'no review yet');
    const asks = new Asks();
    asks.ask(line(ps, 'mod.txt', 'head', 5), 'Rename this.', 'request-change');
    asks.ask(line(ps, 'mod.txt', 'base', 5), 'Why was this removed?', 'question');
    const composed = compose(r, number, asks);
    const posted = await bob.post(number, composed, ps.head, ps.files);
    // Someone else's review does not count.
    const carols = new Asks();
    carols.ask(line(ps, 'mod.txt', 'head', 5), 'carol here');
    await adapter(r, 'carol').post(number, compose(r, number, carols), ps.head, ps.files);
    const earlier = await bob.earlierReview!(number);
    assert.ok(earlier);
    assert.equal(earlier.reviewId, posted.reviewId);
    assert.deepEqual([earlier.commitId, earlier.state, earlier.markerId], [ps.head, 'CHANGES_REQUESTED', composed.markerId]);
    assert.equal(earlier.body, composed.descriptor.body);
    assert.deepEqual(
      earlier.comments.map((c) => [c.path, c.line, c.side, c.body]),
      composed.descriptor.comments.map((c) => [c.path, c.line, c.side, c.body]),
    );
    assert.equal(await adapter(r, 'alice').earlierReview!(number), null, 'the author has no review of their own request');
  });

  it('findPosted: finds the review by its marker across pages, only among the signed-in user’s reviews', async () => {
    const r = await newRepo();
    const number = await open(r);
    const composed = compose(r, number, everyKind());
    const bob = adapter(r);
    assert.equal(await bob.findPosted(number, composed.markerId), null, 'nothing yet');
    // Other reviews first (GitHub lists reviews oldest first): three by carol, one of them ending
    // with the very marker line — not bob's, so not his review.
    const carol = (body: string) =>
      fetch(`${forge.githubApiUrl}/repos/acme/${r.repo}/pulls/${number}/reviews`, {
        method: 'POST',
        headers: { authorization: `token ${TOKENS.carol}`, 'content-type': 'application/json' },
        body: JSON.stringify({ commit_id: ps.head, event: 'COMMENT', body }),
      }).then((x) => assert.equal(x.status, 200));
    await carol('first');
    await carol(`copied\n\n${reviewMarker(composed.markerId)}`);
    await carol('third');
    assert.equal(await bob.findPosted(number, composed.markerId), null, "another user's review with the marker is not ours");
    const posted = await bob.post(number, composed, ps.head, ps.files);
    forge.clearRequests();
    const found = await bob.findPosted(number, composed.markerId);
    assert.deepEqual(found, posted);
    assert.ok(forge.requests({ method: 'GET', pathPattern: `/${r.repo}/pulls/${number}/reviews$` }).length >= 2, 'more than one page of reviews was read');
    assert.ok(forge.requests({ method: 'GET', pathPattern: `/reviews/${posted.reviewId}/comments$` }).length >= 4, 'its 8 comments were counted over pages of 2');
    assert.equal(await bob.findPosted(number, 'f'.repeat(24)), null);
  });

  it('a dropped answer to createReview is "unreachable", never re-sent: exactly one review, which findPosted then finds', async () => {
    const r = await newRepo();
    const number = await open(r);
    const composed = compose(r, number, everyKind());
    const bob = adapter(r, 'bob', { ...FAST, readRetries: 3 });
    forge.setFault({ kind: 'drop-response-after-mutation', method: 'POST', pathPattern: '/reviews$' });
    await assert.rejects(bob.post(number, composed, ps.head, ps.files), isForgeError('unreachable', /POST not re-sent: it may have landed/));
    assert.equal(forge.reviews(pull(r, number)).length, 1, 'the review landed once');
    assert.equal(forge.requests({ method: 'POST', pathPattern: `/${r.repo}/pulls/${number}/reviews$` }).length, 1, 'and was sent once');
    const found = await bob.findPosted(number, composed.markerId);
    assert.equal(found?.reviewId, (forge.reviews(pull(r, number))[0] as { id: number }).id);
    assert.equal(found?.event, 'REQUEST_CHANGES');
    assert.equal(found?.comments, 8);
  });

  it('a 5xx answer to a mutation is not re-sent either; a read is retried past it', async () => {
    const r = await newRepo();
    const bob = adapter(r);
    forge.setFault({ kind: 'status', status: 502, method: 'POST', pathPattern: `/${r.repo}/pulls$` });
    await assert.rejects(bob.create({ headBranch: 'b1', baseBranch: 'main', title: 'T', body: '' }), isForgeError('unreachable'));
    assert.equal(forge.requests({ method: 'POST', pathPattern: `/${r.repo}/pulls$` }).length, 1);
    forge.setFault({ kind: 'status', status: 502, method: 'GET', pathPattern: '^/api/v3/user$', times: 2 });
    assert.equal(await bob.currentUser(), 'bob');
    forge.setFault({ kind: 'drop-response-after-mutation', method: 'GET', pathPattern: `/${r.repo}/pulls$` });
    forge.setFault({ kind: 'status', status: 500, method: 'GET', pathPattern: `/${r.repo}/pulls$` });
    forge.clearRequests();
    assert.deepEqual(await bob.listOpen(10), [], 'a 500 and a dropped answer to a read are retried');
    assert.deepEqual(
      forge.requests({ method: 'GET', pathPattern: `/${r.repo}/pulls$` }).map((x) => [x.status, x.dropped]),
      [
        [500, false],
        [200, true],
        [200, false],
      ],
    );
    forge.setFault({ kind: 'status', status: 503, method: 'GET', pathPattern: `/${r.repo}/pulls$`, times: 10 });
    await assert.rejects(bob.listOpen(10), isForgeError('unreachable', /Service Unavailable/));
    forge.clearFaults();
    forge.setFault({ kind: 'status', status: 403, method: 'GET', pathPattern: `/${r.repo}/pulls$` });
    await assert.rejects(bob.listOpen(10), isForgeError('forbidden', 'Forbidden'));
  });

  it('a rate limit with Retry-After is waited out and the review posts once; past the retries it is "rate-limited"', async () => {
    const r = await newRepo();
    const number = await open(r);
    const composed = compose(r, number, everyKind());
    forge.setFault({ kind: 'rate-limit', times: 1, retryAfterSeconds: 1, method: 'POST', pathPattern: `/${r.repo}/pulls/${number}/reviews$` });
    const started = Date.now();
    await adapter(r).post(number, composed, ps.head, ps.files);
    assert.ok(Date.now() - started >= 950, `waited ${Date.now() - started} ms for Retry-After: 1`);
    assert.equal(forge.reviews(pull(r, number)).length, 1);
    assert.deepEqual(
      forge.requests({ method: 'POST', pathPattern: `/${r.repo}/pulls/${number}/reviews$` }).map((x) => x.status),
      [403, 200],
    );

    // Past the retries, and a reset further away than the adapter waits: rate-limited, nothing posted.
    const other = await open(r);
    const again = compose(r, other, everyKind());
    forge.setFault({ kind: 'rate-limit', times: 5, retryAfterSeconds: 1, pathPattern: `/pulls/${other}/reviews$` });
    await assert.rejects(adapter(r, 'bob', { ...FAST, rateLimitRetries: 1, retryAfterUnitMs: 10 }).post(other, again, ps.head, ps.files), isForgeError('rate-limited', /secondary rate limit/));
    forge.clearFaults();
    forge.setFault({ kind: 'rate-limit', variant: 'primary', times: 1, retryAfterSeconds: 3600, method: 'GET', pathPattern: `/${r.repo}/pulls/${other}$` });
    await assert.rejects(adapter(r).get(other), isForgeError('rate-limited', /API rate limit exceeded/));
    assert.equal(forge.reviews(pull(r, other)).length, 0);
    forge.clearFaults();
  });

  it("refuses with GitHub's own words: approving one's own pull request, a comment off the diff, a moved head", async () => {
    const r = await newRepo();
    const number = await open(r, 'alice');
    // Composed as if for a teammate (no comments → APPROVE), posted by the author.
    const approve = compose(r, number, new Asks());
    assert.equal(approve.descriptor.event, 'APPROVE');
    await assert.rejects(adapter(r, 'alice').post(number, approve, ps.head, ps.files), isForgeError('refused', 'Can not approve your own pull request'));
    assert.equal(forge.reviews(pull(r, number)).length, 0);

    // A comment moved off the diff (tampered after composing) is refused whole.
    const composed = compose(r, number, everyKind());
    const tampered: ComposedReview = { ...composed, descriptor: { ...composed.descriptor, comments: composed.descriptor.comments.map((c, i) => (i === 0 ? { ...c, line: 20 } : c)) } };
    await assert.rejects(adapter(r).post(number, tampered, ps.head, ps.files), isForgeError('refused', 'Line could not be resolved'));
    assert.equal(forge.reviews(pull(r, number)).length, 0, 'all or nothing');

    // A descriptor for another head or request is refused before anything is sent.
    forge.clearRequests();
    await assert.rejects(adapter(r).post(number, composed, source.head('b1'), ps.files), isForgeError('refused', /nothing was posted/));
    await assert.rejects(adapter(r).post(number + 1, composed, ps.head, ps.files), isForgeError('refused', /nothing was posted/));
    assert.equal(forge.requests({ method: 'POST' }).length, 0);

    // The head moved on the forge: GitHub (here, stricter) refuses the old commit.
    await forge.movePullRequestHead({ owner: r.owner, name: r.repo, number, sha: source.head('b2') });
    await assert.rejects(adapter(r).post(number, composed, ps.head, ps.files), isForgeError('refused', 'The commitOID is not part of the pull request'));
  });

  it('a bad token is "unauthorized" and no message carries it', async () => {
    const r = await newRepo();
    const number = await open(r);
    const composed = compose(r, number, everyKind());
    const secret = 'ghp_this-token-must-never-leak-42';
    const bad = githubAdapter(r, secret, FAST);
    for (const run of [() => bad.currentUser(), () => bad.get(number), () => bad.post(number, composed, ps.head, ps.files), () => bad.findPosted(number, composed.markerId)]) {
      await assert.rejects(run(), (e: unknown) => {
        assert.ok(e instanceof ForgeError);
        assert.equal(e.kind, 'unauthorized');
        assert.equal(e.status, 401);
        assert.match(e.message, /Bad credentials/);
        assert.ok(!e.message.includes(secret) && !e.stack?.includes(secret));
        return true;
      });
    }
    assert.equal(forge.reviews(pull(r, number)).length, 0);
  });

  it('reads: get, listOpen newest first over pages, currentUser, linkedIssues (404s and pull requests skipped)', async () => {
    const r = await newRepo();
    const numbers: number[] = [];
    for (let i = 1; i <= 5; i++)
      numbers.push((await forge.openPullRequest({ owner: r.owner, name: r.repo, author: 'alice', head: `b${i}`, base: 'main', title: `B${i}`, body: i === 1 ? 'Closes #9' : '' })).number);
    const bob = adapter(r);
    assert.equal(await bob.currentUser(), 'bob');

    const info = await bob.get(numbers[0]!);
    assert.deepEqual(info, {
      number: numbers[0],
      title: 'B1',
      body: 'Closes #9',
      state: 'open',
      draft: false,
      author: 'alice',
      webUrl: `${forge.url}/acme/${r.repo}/pull/${numbers[0]}`,
      headRef: 'b1',
      headSha: source.head('b1'),
      baseRef: 'main',
      baseSha: source.head('main'),
      diffRefs: null,
      headRepo: null,
    });
    await forge.setPullRequestState({ owner: r.owner, name: r.repo, number: numbers[4]!, state: 'merged' });
    assert.equal((await bob.get(numbers[4]!)).state, 'merged');
    await forge.setPullRequestState({ owner: r.owner, name: r.repo, number: numbers[4]!, state: 'closed' });
    assert.equal((await bob.get(numbers[4]!)).state, 'closed');
    await assert.rejects(bob.get(999), isForgeError('not-found', /Not Found/));

    forge.clearRequests();
    const listed = await bob.listOpen(100);
    assert.deepEqual(
      listed.map((p) => p.number),
      [...numbers.slice(0, 4)].reverse(),
    );
    assert.equal(forge.requests({ method: 'GET', pathPattern: `/${r.repo}/pulls$` }).length, 2, 'two pages of 2');
    assert.deepEqual(
      (await bob.listOpen(3)).map((p) => p.number),
      [numbers[3], numbers[2], numbers[1]],
    );

    const issue = forge.addIssue({ owner: r.owner, name: r.repo, title: 'The bug', body: 'Steps…' });
    assert.deepEqual(await bob.linkedIssues([issue.number, 999, numbers[0]!, issue.number]), [
      { number: issue.number, title: 'The bug', body: 'Steps…', webUrl: `${forge.url}/acme/${r.repo}/issues/${issue.number}`, state: 'open' },
    ]);
  });

  it('findOpenFor and create: a duplicate is refused in GitHub’s words, and the open one is found to reuse', async () => {
    const r = await newRepo();
    const bob = adapter(r);
    assert.equal(await bob.findOpenFor('b3', 'main'), null);
    const created = await bob.create({ headBranch: 'b3', baseBranch: 'main', title: 'Add b3', body: 'Why: tests' });
    assert.equal(created.headRef, 'b3');
    assert.equal(created.headSha, source.head('b3'));
    assert.equal(created.author, 'bob');
    assert.equal(created.body, 'Why: tests');
    await assert.rejects(bob.create({ headBranch: 'b3', baseBranch: 'main', title: 'Again', body: '' }), isForgeError('refused', 'A pull request already exists for acme:b3.'));
    assert.equal((await bob.findOpenFor('b3', 'main'))?.number, created.number);
    assert.equal(await bob.findOpenFor('b3', 'b1'), null);
    await assert.rejects(bob.create({ headBranch: 'nope', baseBranch: 'main', title: 'T', body: '' }), isForgeError('refused', 'PullRequest head invalid'));
  });
});
