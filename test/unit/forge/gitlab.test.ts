import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { capturePatchset } from '../../../host/capture/capture';
import { openRepo } from '../../../host/capture/repo';
import { composeReview } from '../../../host/exits/compose';
import { gitlabAdapter, gitlabLineCode } from '../../../host/forge/gitlab';
import { ForgeError, type ForgeAdapter, type ForgeAdapterOptions } from '../../../host/forge/types';
import { ComposedReview as ComposedReviewSchema, GITLAB_VERDICT_LABELS, reviewMarker, type ComposedReview } from '../../../protocol/exits';
import type { ForgeRepo } from '../../../protocol/forge';
import type { Patchset } from '../../../protocol/patchset';
import type { TestRepo } from '../../fixtures/gitRepo';
import { forgeFixture } from './fixtures';
import { startFakeForge, type FakeForge } from '../../servers/fakeForge';
import { Asks, GROUNDING, SESSION, line } from '../exits/fixtures';

/**
 * The GitLab adapter (host/forge/gitlab.ts: @gitbeaker/rest with its request handler replaced to
 * send mutations once) against the fake forge, which enforces GitLab's position rules (diff_refs,
 * old/new line pairs, line codes of ranges), atomic bulk publish, approvals and duplicates; over a
 * real repository captured by the real capture and a review composed by the real composer.
 */

const sha1 = (s: string) => createHash('sha1').update(s).digest('hex');
const TOKENS = { alice: 'glpat-alice-secret-0001', bob: 'glpat-bob-secret-0002', carol: 'glpat-carol-secret-0003' };
/** Small pages (to cross them), fast read retries; Retry-After is honoured in real seconds. */
const FAST: ForgeAdapterOptions = { pageSize: 2, readRetryBaseMs: 1, retryAfterUnitMs: 1000 };

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

interface Note {
  id: number;
  type: string | null;
  body: string;
  author: { username: string };
  position?: {
    old_path: string;
    new_path: string;
    old_line: number | null;
    new_line: number | null;
    line_range: { start: { line_code: string; type: string | null }; end: { line_code: string; type: string | null } } | null;
  };
}

describe('forge: the GitLab adapter against the fake forge', function () {
  this.timeout(120_000);
  let forge: FakeForge;
  let source: TestRepo;
  let ps: Patchset;
  let nextRepo = 0;

  before(async () => {
    source = forgeFixture({ featureNext: true });
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

  async function newRepo(): Promise<ForgeRepo> {
    const name = `app${++nextRepo}`;
    await forge.createRepo({ provider: 'gitlab', owner: 'grp', name, from: source.dir });
    return { provider: 'gitlab', host: `127.0.0.1:${forge.port}`, owner: 'grp', repo: name, apiUrl: forge.gitlabApiUrl, webUrl: `${forge.url}/grp/${name}` };
  }
  const open = async (r: ForgeRepo, author = 'alice', head = 'feature') => (await forge.openPullRequest({ owner: r.owner, name: r.repo, author, head, base: 'main', title: `MR from ${head}` })).number;
  const adapter = (r: ForgeRepo, who: keyof typeof TOKENS = 'bob', options: ForgeAdapterOptions = FAST): ForgeAdapter => gitlabAdapter(r, TOKENS[who], options);
  const mr = (r: ForgeRepo, number: number) => ({ owner: r.owner, name: r.repo, iid: number });
  const notes = (r: ForgeRepo, number: number) => forge.notes(mr(r, number)) as unknown as Note[];
  const drafts = (r: ForgeRepo, number: number) => forge.draftNotes(mr(r, number)) as unknown as { id: number; author_id: number; note: string }[];
  const requests = (method: string, r: ForgeRepo, number: number, tail: string) => forge.requests({ method, pathPattern: `/projects/grp%2F${r.repo}/merge_requests/${number}/${tail}$` });
  const glPost = (token: string, path: string, body: unknown) =>
    fetch(`${forge.gitlabApiUrl}${path}`, { method: 'POST', headers: { 'private-token': token, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(async (x) => {
      if (x.status >= 300) assert.fail(`${x.status} ${await x.text()}`);
      return x;
    });

  function compose(r: ForgeRepo, number: number, asks: Asks, ownPullRequest = false): ComposedReview {
    const result = composeReview({
      sessionId: SESSION,
      patchset: ps,
      projection: asks.projection(),
      target: { provider: 'gitlab', host: r.host, owner: r.owner, repo: r.repo, number, headSha: ps.head, baseSha: ps.base },
      ownPullRequest,
      grounding: GROUNDING,
    });
    assert.ok(result.ok, result.ok ? '' : result.error.message);
    return ComposedReviewSchema.parse(result.value);
  }

  /** Every kind of comment: single, range, LEFT, context, a deleted file, a rename (both sides), an added file; one folds. */
  function everyKind(intent: 'request-change' | 'comment' | 'approval' = 'request-change'): Asks {
    const a = new Asks();
    a.ask(line(ps, 'mod.txt', 'head', 5), 'the added line', intent);
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
  const commentsOnly = () => {
    const a = new Asks();
    a.ask(line(ps, 'mod.txt', 'head', 5), 'only comments', 'comment');
    a.ask(line(ps, 'added.txt', 'head', 1, 2), 'and a range', 'comment');
    return a;
  };

  /** What GitLab stores for each comment of everyKind(), written out by hand (GitLab's counters). */
  const M = sha1('mod.txt');
  const EXPECTED_POSITIONS: Record<string, [string, string, number | null, number | null, [string, string | null, string, string | null] | null]> = {
    'the added line': ['mod.txt', 'mod.txt', null, 5, null],
    'a range from context into added lines': ['mod.txt', 'mod.txt', null, 31, [`${M}_28_28`, null, `${M}_31_31`, 'new']],
    'LEFT: the deleted line': ['mod.txt', 'mod.txt', 5, null, null],
    'a context line': ['mod.txt', 'mod.txt', 3, 3, null],
    'a LEFT range in a deleted file': ['gone.txt', 'gone.txt', 2, null, [`${sha1('gone.txt')}_1_0`, 'old', `${sha1('gone.txt')}_2_0`, 'old']],
    'the renamed file, added line': ['old-name.txt', 'new-name.txt', null, 10, null],
    'the renamed file, LEFT context line': ['old-name.txt', 'new-name.txt', 8, 8, null],
    'the whole added file': ['added.txt', 'added.txt', null, 3, [`${sha1('added.txt')}_0_1`, 'new', `${sha1('added.txt')}_0_3`, 'new']],
  };
  const stored = (n: Note) => {
    const p = n.position;
    assert.ok(p, `note ${n.body} has no position`);
    const range = p.line_range === null ? null : [p.line_range.start.line_code, p.line_range.start.type, p.line_range.end.line_code, p.line_range.end.type];
    return [p.old_path, p.new_path, p.old_line, p.new_line, range];
  };

  it('line codes follow GitLab’s counters: an added line carries the next old number, a deleted one the next new', () => {
    const file = (path: string) => ps.files.find((f) => f.path === path)!;
    assert.deepEqual(gitlabLineCode(file('mod.txt'), { oldLine: null, newLine: 5 }), { lineCode: `${M}_6_5`, type: 'new' });
    assert.deepEqual(gitlabLineCode(file('mod.txt'), { oldLine: 5, newLine: null }), { lineCode: `${M}_5_5`, type: 'old' });
    assert.deepEqual(gitlabLineCode(file('mod.txt'), { oldLine: 3, newLine: 3 }), { lineCode: `${M}_3_3`, type: null });
    assert.deepEqual(gitlabLineCode(file('mod.txt'), { oldLine: 31, newLine: 32 }), { lineCode: `${M}_31_32`, type: null });
    assert.deepEqual(gitlabLineCode(file('added.txt'), { oldLine: null, newLine: 2 }), { lineCode: `${sha1('added.txt')}_0_2`, type: 'new' });
    assert.deepEqual(gitlabLineCode(file('gone.txt'), { oldLine: 3, newLine: null }), { lineCode: `${sha1('gone.txt')}_3_0`, type: 'old' });
    assert.equal(gitlabLineCode(file('mod.txt'), { oldLine: 20, newLine: 20 }), null, 'not a line of the diff');
  });

  it('posts draft notes with exact positions and the body, published by ONE bulk publish: exactly the descriptor', async () => {
    const r = await newRepo();
    const number = await open(r);
    const composed = compose(r, number, everyKind());
    const d = composed.descriptor;
    assert.equal(d.comments.length, 8, 'the composer placed every comment but the one outside the diff');
    assert.equal(d.event, 'REQUEST_CHANGES');
    assert.ok(d.body.startsWith(GITLAB_VERDICT_LABELS.REQUEST_CHANGES));

    const posted = await adapter(r).post(number, composed, ps.head, ps.files);
    const all = notes(r, number);
    assert.equal(all.length, 9);
    assert.ok(all.every((n) => n.author.username === 'bob'));
    const body = all.filter((n) => n.type !== 'DiffNote');
    assert.deepEqual(
      body.map((n) => [n.body, n.position ?? null]),
      [[d.body, null]],
      'one note without a position: the body, marker last',
    );
    const diffNotes = all.filter((n) => n.type === 'DiffNote');
    assert.deepEqual(diffNotes.map((n) => n.body).sort(), d.comments.map((c) => c.body).sort());
    for (const n of diffNotes) assert.deepEqual(stored(n), EXPECTED_POSITIONS[n.body], n.body);
    const refs = (await forge.pullRequest(mr(r, number)))['diff_refs'] as Record<string, string>;
    for (const n of diffNotes)
      assert.deepEqual([(n.position as Record<string, unknown> | undefined)?.['base_sha'], (n.position as Record<string, unknown> | undefined)?.['head_sha']], [refs['base_sha'], ps.head]);

    assert.equal(requests('POST', r, number, 'draft_notes/bulk_publish').length, 1, 'one bulk publish');
    assert.equal(requests('POST', r, number, 'draft_notes').length, 9, 'one draft per comment, one for the body');
    assert.equal(requests('POST', r, number, 'notes').length + requests('POST', r, number, 'discussions').length, 0, 'nothing posted outside the drafts');
    assert.equal(drafts(r, number).length, 0);
    assert.deepEqual(posted, { reviewId: body[0]!.id, url: `${forge.url}/grp/${r.repo}/-/merge_requests/${number}#note_${body[0]!.id}`, event: 'REQUEST_CHANGES', comments: 8 });
    assert.equal(requests('POST', r, number, 'approve').length, 0, 'no approval unless APPROVE');
  });

  it('a wrong line is refused by GitLab’s position rules in its own words; the attempt’s drafts are taken back and nothing publishes', async () => {
    const r = await newRepo();
    const number = await open(r);
    const composed = compose(r, number, everyKind());
    // The context line 3 (old 3, new 3) claimed as an added line: new_line only, which GitLab refuses.
    const at = composed.descriptor.comments.findIndex((c) => c.body === 'a context line');
    const tampered: ComposedReview = {
      ...composed,
      placements: composed.placements.map((p, i) => (i === at ? { ...p, start: { oldLine: null, newLine: 3 }, end: { oldLine: null, newLine: 3 } } : p)),
    };
    await assert.rejects(adapter(r).post(number, tampered, ps.head, ps.files), isForgeError('refused', /must be a valid line code/));
    assert.equal(notes(r, number).length, 0, 'nothing published');
    assert.equal(drafts(r, number).length, 0, 'the drafts this attempt made were deleted');
    assert.equal(requests('POST', r, number, 'draft_notes/bulk_publish').length, 0);

    // A range whose start is not where the placement says: GitLab refuses its line code.
    const rangeAt = composed.descriptor.comments.findIndex((c) => c.body === 'a range from context into added lines');
    const badRange: ComposedReview = { ...composed, placements: composed.placements.map((p, i) => (i === rangeAt ? { ...p, start: { oldLine: 27, newLine: 28 } } : p)) };
    await assert.rejects(adapter(r).post(number, badRange, ps.head, ps.files), isForgeError('refused'));
    assert.equal(notes(r, number).length + drafts(r, number).length, 0);

    // The untampered review then posts cleanly.
    await adapter(r).post(number, composed, ps.head, ps.files);
    assert.equal(notes(r, number).length, 9);
  });

  it('earlierReview: the user’s body note carrying the marker, its verdict as a state, the diff notes published with it and their head; none for another user', async () => {
    const r = await newRepo();
    const number = await open(r);
    assert.equal(await adapter(r).earlierReview!(number), null);
    const composed = compose(r, number, everyKind());
    const posted = await adapter(r).post(number, composed, ps.head, ps.files);
    const earlier = await adapter(r).earlierReview!(number);
    assert.ok(earlier);
    assert.deepEqual([earlier.reviewId, earlier.state, earlier.markerId, earlier.commitId, earlier.body], [posted.reviewId, 'CHANGES_REQUESTED', composed.markerId, ps.head, composed.descriptor.body]);
    // GitLab keeps both numbers of a context line, so a comment there reads back on its head side
    // (the same line: old 8 is new 8 in the renamed file); every other comment reads back as posted.
    const asPosted = (c: { path: string; side: string; line: number; body: string }) =>
      c.body === 'the renamed file, LEFT context line' ? `${c.path}|RIGHT|8|${c.body}` : `${c.path}|${c.side}|${c.line}|${c.body}`;
    assert.deepEqual(earlier.comments.map((c) => `${c.path}|${c.side}|${c.line}|${c.body}`).sort(), composed.descriptor.comments.map(asPosted).sort());
    assert.equal(await adapter(r, 'carol').earlierReview!(number), null, 'another user has no earlier review here');
  });

  it('findPosted: finds the body note by its marker across pages, only among the signed-in user’s notes, and counts its comments', async () => {
    const r = await newRepo();
    const number = await open(r);
    const composed = compose(r, number, everyKind());
    const bob = adapter(r);
    assert.equal(await bob.findPosted(number, composed.markerId), null);
    const posted = await bob.post(number, composed, ps.head, ps.files);
    // Newer notes after it (GitLab lists notes newest first): more than a page of them, one by alice
    // ending with the very marker line — not bob's, so not his review.
    const path = `/projects/grp%2F${r.repo}/merge_requests/${number}/notes`;
    await glPost(TOKENS.alice, path, { body: `quoting\n\n${reviewMarker(composed.markerId)}` });
    for (let i = 0; i < 4; i++) await glPost(i % 2 === 0 ? TOKENS.carol : TOKENS.bob, path, { body: `later note ${i}` });
    forge.clearRequests();
    assert.deepEqual(await bob.findPosted(number, composed.markerId, composed.descriptor.comments), posted);
    assert.ok(requests('GET', r, number, 'notes').length >= 5, 'every page of notes was read');
    const loose = await bob.findPosted(number, composed.markerId);
    assert.equal(loose?.comments, 8, 'without the comments: the diff notes published with the body');
    assert.equal(loose?.event, 'REQUEST_CHANGES');
    assert.equal(await adapter(r, 'carol').findPosted(number, composed.markerId), null, 'not a review of carol’s');
    assert.equal(await bob.findPosted(number, 'f'.repeat(24)), null);
  });

  it('a dropped answer to the bulk publish is "unreachable", never re-sent: the review landed once, and findPosted finds it', async () => {
    const r = await newRepo();
    const number = await open(r);
    const composed = compose(r, number, everyKind());
    const bob = adapter(r);
    forge.setFault({ kind: 'drop-response-after-mutation', method: 'POST', pathPattern: '/draft_notes/bulk_publish$' });
    await assert.rejects(bob.post(number, composed, ps.head, ps.files), isForgeError('unreachable', /not re-sent/));
    assert.equal(requests('POST', r, number, 'draft_notes/bulk_publish').length, 1);
    assert.equal(notes(r, number).length, 9, 'published once');
    const found = await bob.findPosted(number, composed.markerId, composed.descriptor.comments);
    assert.equal(found?.reviewId, notes(r, number).find((n) => n.type !== 'DiffNote')?.id);
    assert.equal(found?.comments, 8);
  });

  it("a dropped draft: the retry deletes the user's identical leftover drafts, never others, and refuses while others would publish", async () => {
    const r = await newRepo();
    const number = await open(r);
    const composed = compose(r, number, commentsOnly());
    const bob = adapter(r);
    const path = `/projects/grp%2F${r.repo}/merge_requests/${number}/draft_notes`;
    // carol's own pending draft on the same MR: not bob's to see, delete or publish.
    await glPost(TOKENS.carol, path, { note: "carol's draft" });

    // The first draft lands but its answer is lost: the post stops there, leaving it behind.
    forge.setFault({ kind: 'drop-response-after-mutation', method: 'POST', pathPattern: `${r.repo}/merge_requests/${number}/draft_notes$` });
    await assert.rejects(bob.post(number, composed, ps.head, ps.files), isForgeError('unreachable'));
    assert.deepEqual(
      drafts(r, number).map((x) => x.note),
      ["carol's draft", composed.descriptor.comments[0]!.body],
      'one of bob’s drafts was left',
    );
    assert.equal(notes(r, number).length, 0);

    // A draft of bob's own that this review did not write: the post is refused, nothing touched.
    const own = await (await glPost(TOKENS.bob, path, { note: 'my unrelated draft' })).json();
    await assert.rejects(bob.post(number, composed, ps.head, ps.files), isForgeError('refused', /1 pending draft note .* did not write/));
    assert.equal(drafts(r, number).length, 3);
    await fetch(`${forge.gitlabApiUrl}${path}/${(own as { id: number }).id}`, { method: 'DELETE', headers: { 'private-token': TOKENS.bob } });

    // Now the retry deletes the leftover and posts the review once.
    forge.clearRequests();
    await bob.post(number, composed, ps.head, ps.files);
    assert.equal(requests('DELETE', r, number, 'draft_notes/\\d+').length, 1, 'the leftover, nothing else');
    const published = notes(r, number);
    assert.deepEqual(published.map((n) => n.body).sort(), [...composed.descriptor.comments.map((c) => c.body), composed.descriptor.body].sort(), 'each comment once, the body once');
    assert.deepEqual(
      drafts(r, number).map((x) => x.note),
      ["carol's draft"],
      "carol's draft is untouched and unpublished",
    );
  });

  it('APPROVE: the notes, then the approval pinned to the head; findPosted reports it approved', async () => {
    const r = await newRepo();
    const number = await open(r);
    // Every kind of comment, and the verdict overridden to approve.
    const approving = compose(r, number, everyKind('approval').override('approve'));
    assert.equal(approving.descriptor.event, 'APPROVE');
    assert.equal(approving.descriptor.comments.length, 8);
    const posted = await adapter(r).post(number, approving, ps.head, ps.files);
    assert.equal(posted.event, 'APPROVE');
    assert.equal(posted.approved, true);
    assert.ok(approving.descriptor.body.startsWith(GITLAB_VERDICT_LABELS.APPROVE));
    assert.deepEqual(
      (forge.approvals(mr(r, number))['approved_by'] as { user: { username: string } }[]).map((a) => a.user.username),
      ['bob'],
    );
    const approveCalls = requests('POST', r, number, 'approve');
    assert.equal(approveCalls.length, 1);
    assert.deepEqual(await adapter(r).findPosted(number, approving.markerId, approving.descriptor.comments), posted);
  });

  it('APPROVE retry path: the approval failed after the notes landed → findPosted says approved: false → approve() once', async () => {
    const r = await newRepo();
    const number = await open(r);
    const approving = compose(r, number, new Asks());
    assert.equal(approving.descriptor.event, 'APPROVE');
    const bob = adapter(r);
    forge.setFault({ kind: 'status', status: 500, method: 'POST', pathPattern: `${r.repo}/merge_requests/${number}/approve$` });
    await assert.rejects(bob.post(number, approving, ps.head, ps.files), isForgeError('unreachable'));
    assert.equal(requests('POST', r, number, 'approve').length, 1, 'the approval is a mutation: not re-sent');
    const found = await bob.findPosted(number, approving.markerId, approving.descriptor.comments);
    assert.equal(found?.event, 'APPROVE');
    assert.equal(found?.approved, false);
    assert.equal(found?.comments, 0);
    assert.ok(bob.approve);
    await bob.approve(number, ps.head);
    assert.equal(requests('POST', r, number, 'approve').length, 2);
    assert.equal((await bob.findPosted(number, approving.markerId))?.approved, true);
    assert.equal(notes(r, number).length, 1, 'the body note once');
    // Approving again: GitLab's 401 for "may not approve" is told apart from a bad token.
    await assert.rejects(bob.approve(number, ps.head), isForgeError('forbidden', /may not approve|approved it already/));
  });

  it('a moved head: the post is refused before anything is sent, and approve() is refused in GitLab’s words', async () => {
    const r = await newRepo();
    const number = await open(r);
    const approving = compose(r, number, new Asks());
    await forge.movePullRequestHead({ owner: r.owner, name: r.repo, iid: number, sha: source.head('feature-next') });
    forge.clearRequests();
    await assert.rejects(adapter(r).post(number, approving, ps.head, ps.files), isForgeError('refused', /head moved/));
    assert.equal(forge.requests({ method: 'POST' }).length, 0, 'nothing sent');
    await assert.rejects(adapter(r).approve!(number, ps.head), isForgeError('refused', `SHA does not match HEAD of source branch: ${source.head('feature-next')}`));
    assert.equal((forge.approvals(mr(r, number))['approved_by'] as unknown[]).length, 0);
    // The author may not approve her own MR (the project prevents it): not a bad token.
    await assert.rejects(adapter(r, 'alice').approve!(number, source.head('feature-next')), isForgeError('forbidden'));
  });

  it('gitbeaker no longer re-sends a POST on 502; reads are retried past a 502; a 429 with Retry-After is waited out, then "rate-limited"', async () => {
    const r = await newRepo();
    const number = await open(r);
    const composed = compose(r, number, commentsOnly());
    const bob = adapter(r);
    forge.setFault({ kind: 'status', status: 502, method: 'POST', pathPattern: `${r.repo}/merge_requests/${number}/draft_notes$` });
    forge.clearRequests();
    await assert.rejects(bob.post(number, composed, ps.head, ps.files), isForgeError('unreachable', /502 Bad Gateway/));
    assert.equal(requests('POST', r, number, 'draft_notes').length, 1, 'sent once');

    forge.setFault({ kind: 'status', status: 502, method: 'GET', pathPattern: `${r.repo}/merge_requests/${number}$`, times: 2 });
    forge.setFault({ kind: 'drop-response-after-mutation', method: 'GET', pathPattern: `${r.repo}/merge_requests/${number}$` });
    forge.clearRequests();
    assert.equal((await bob.get(number)).number, number, 'two 502s and a dropped answer to a read are retried');
    assert.deepEqual(
      forge.requests({ method: 'GET', pathPattern: `${r.repo}/merge_requests/${number}$` }).map((x) => [x.status, x.dropped]),
      [
        [502, false],
        [502, false],
        [200, true],
        [200, false],
      ],
    );
    forge.setFault({ kind: 'status', status: 403, method: 'GET', pathPattern: `${r.repo}/merge_requests/${number}$` });
    await assert.rejects(bob.get(number), isForgeError('forbidden', '403 Forbidden'));

    forge.setFault({ kind: 'rate-limit', times: 1, retryAfterSeconds: 1, method: 'POST', pathPattern: `${r.repo}/merge_requests/${number}/draft_notes$` });
    const started = Date.now();
    await bob.post(number, composed, ps.head, ps.files);
    assert.ok(Date.now() - started >= 950, `waited ${Date.now() - started} ms for Retry-After: 1`);
    assert.deepEqual(
      requests('POST', r, number, 'draft_notes').map((x) => x.status),
      [429, 201, 201, 201],
    );
    assert.equal(notes(r, number).length, 3, 'two comments and the body, once');

    forge.setFault({ kind: 'rate-limit', times: 5, retryAfterSeconds: 1, method: 'GET', pathPattern: `${r.repo}/merge_requests/${number}$` });
    await assert.rejects(adapter(r, 'bob', { ...FAST, rateLimitRetries: 1, retryAfterUnitMs: 10 }).get(number), isForgeError('rate-limited', /retry after 1 s/));
    forge.clearFaults();
    forge.setFault({ kind: 'rate-limit', times: 1, retryAfterSeconds: 3600, method: 'GET', pathPattern: `${r.repo}/merge_requests/${number}$` });
    await assert.rejects(bob.get(number), isForgeError('rate-limited'));
    forge.clearFaults();
  });

  it('a bad token is "unauthorized" and no message carries it', async () => {
    const r = await newRepo();
    const number = await open(r);
    const composed = compose(r, number, commentsOnly());
    const secret = 'glpat-this-token-must-never-leak-42';
    const bad = gitlabAdapter(r, secret, FAST);
    for (const run of [() => bad.currentUser(), () => bad.get(number), () => bad.post(number, composed, ps.head, ps.files), () => bad.findPosted(number, composed.markerId)]) {
      await assert.rejects(run(), (e: unknown) => {
        assert.ok(e instanceof ForgeError);
        assert.equal(e.kind, 'unauthorized');
        assert.equal(e.status, 401);
        assert.equal(e.message, '401 Unauthorized');
        assert.ok(!e.message.includes(secret) && !e.stack?.includes(secret));
        return true;
      });
    }
    assert.equal(notes(r, number).length + drafts(r, number).length, 0);
  });

  it('reads: get (diff_refs), listOpen newest first over pages, currentUser, linkedIssues (404s skipped)', async () => {
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
      webUrl: `${forge.url}/grp/${r.repo}/-/merge_requests/${numbers[0]}`,
      headRef: 'b1',
      headSha: source.head('b1'),
      baseRef: 'main',
      baseSha: source.head('main'),
      diffRefs: { baseSha: source.head('main'), startSha: source.head('main'), headSha: source.head('b1') },
      headRepo: null,
    });
    await forge.setPullRequestState({ owner: r.owner, name: r.repo, number: numbers[4]!, state: 'merged' });
    assert.equal((await bob.get(numbers[4]!)).state, 'merged');
    await assert.rejects(bob.get(999), isForgeError('not-found', '404 Not found'));

    forge.clearRequests();
    const listed = await bob.listOpen(100);
    assert.deepEqual(
      listed.map((p) => p.number),
      [...numbers.slice(0, 4)].reverse(),
    );
    assert.equal(forge.requests({ method: 'GET', pathPattern: `grp%2F${r.repo}/merge_requests$` }).length, 2, 'two pages of 2');
    assert.equal(listed[0]?.diffRefs, null, 'list entries carry no diff_refs');
    assert.deepEqual(
      (await bob.listOpen(3)).map((p) => p.number),
      [numbers[3], numbers[2], numbers[1]],
    );

    const issue = forge.addIssue({ owner: r.owner, name: r.repo, title: 'The bug', body: 'Steps…' });
    const got = await bob.linkedIssues([issue.number, 999, issue.number]);
    assert.deepEqual(
      got.map((i) => [i.number, i.title, i.body, i.state]),
      [[issue.number, 'The bug', 'Steps…', 'open']],
    );
  });

  it('findOpenFor and create: a duplicate is refused in GitLab’s words, and the open one is found to reuse', async () => {
    const r = await newRepo();
    const bob = adapter(r);
    assert.equal(await bob.findOpenFor('b3', 'main'), null);
    const created = await bob.create({ headBranch: 'b3', baseBranch: 'main', title: 'Add b3', body: 'Why: tests' });
    assert.deepEqual([created.headRef, created.headSha, created.author, created.body, created.baseSha], ['b3', source.head('b3'), 'bob', 'Why: tests', source.head('main')]);
    await assert.rejects(
      bob.create({ headBranch: 'b3', baseBranch: 'main', title: 'Again', body: '' }),
      isForgeError('refused', `Another open merge request already exists for this source branch: !${created.number}`),
    );
    const found = await bob.findOpenFor('b3', 'main');
    assert.equal(found?.number, created.number);
    assert.ok(found?.diffRefs);
    assert.equal(await bob.findOpenFor('b3', 'b1'), null);
    await assert.rejects(bob.create({ headBranch: 'nope', baseBranch: 'main', title: 'T', body: '' }), isForgeError('refused', 'source_branch Source branch "nope" does not exist'));
  });
});

describe('forge/gitlab: the verdict line of a Rennet body note', () => {
  it('is the first line, or the first after a re-review’s "Prior review:" line', async () => {
    const { verdictLineOf } = await import('../../../host/forge/gitlab');
    const { GITLAB_VERDICT_LABELS } = await import('../../../protocol/exits');
    const label = GITLAB_VERDICT_LABELS.REQUEST_CHANGES;
    assert.equal(verdictLineOf(`${label}\n\nOpener.`), label);
    assert.equal(verdictLineOf(`Prior review: 1 of 2 resolved\n\n${label}\n\nOpener.`), label);
    assert.equal(verdictLineOf('\r\n  Prior review: 0 of 1 resolved\r\n\r\nOpener.'), 'Opener.');
    assert.equal(verdictLineOf(''), '');
  });
});
