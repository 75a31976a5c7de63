import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { AskCommand } from '../../../protocol/asks';
import { readReviewMarker } from '../../../protocol/exits';
import { pullRequestRefs } from '../../../protocol/forge';
import type { PullRequestTarget } from '../../../protocol/session';
import { AskLog } from '../../../host/asks/log';
import { markSentThrough, Publisher } from '../../../host/exits/publish';
import { forgeAdapter } from '../../../host/forge/adapters';
import { pullRequestSource } from '../../../host/forge/pullRequests';
import { ForgeRegistryHolder, ForgeService } from '../../../host/forge/service';
import { currentGenerationId, readGenerationSnapshot } from '../../../host/generation/generationSnapshot';
import { ReviewService } from '../../../host/service';
import { Store } from '../../../host/store';
import { TestRepo } from '../../fixtures/gitRepo';
import { startFakeForge, type FakeForge } from '../../servers/fakeForge';

/**
 * Post review end to end on the host, against the loopback fake forge (which enforces the real
 * APIs' rules) and real git: a request is fetched into hidden refs and captured, asks are staged
 * on the durable log, the preview composes, and the post lands exactly once — through a double
 * click, a lost answer, a retry — or is refused before any mutation (moved head, stale preview,
 * bad credentials).
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
const git = async (cwd: string, ...args: string[]) => (await execFileP('git', args, { cwd, env: GIT_ENV, encoding: 'utf8' })).stdout.trim();

const numbered = (prefix: string, n: number, change: (i: number) => string[] | null = () => null) =>
  Array.from({ length: n }, (_, k) => change(k + 1) ?? [`${prefix}${k + 1}`])
    .flat()
    .join('\n') + '\n';

/** main: app.txt (40 lines), old.txt; feature: app.txt line 5 and 30 changed, added.txt, old.txt renamed to new.txt and edited. */
function source(): TestRepo {
  const repo = new TestRepo();
  repo.write('app.txt', numbered('a', 40)).write('old.txt', numbered('o', 10));
  repo.commit('base');
  repo.branch('feature');
  repo.write(
    'app.txt',
    numbered('a', 40, (i) => (i === 5 ? ['A5 changed'] : i === 30 ? ['A30 one', 'A30 two'] : null)),
  );
  repo.write('added.txt', 'x1\nx2\nx3\n');
  repo.git('mv', 'old.txt', 'new.txt');
  repo.write(
    'new.txt',
    numbered('o', 10, (i) => (i === 9 ? ['O9 edited'] : null)),
  );
  repo.commit('feature');
  repo.checkout('main');
  return repo;
}

describe('host/exits: Post review against the fake forge (GitHub and GitLab), exactly once', function () {
  this.timeout(120_000);
  let forge: FakeForge;
  let src: TestRepo;
  const temps: string[] = [];
  const stores: Store[] = [];

  before(async () => {
    src = source();
    forge = await startFakeForge();
    forge.addUser({ login: 'alice', token: 'alice-token' });
    forge.addUser({ login: 'bob', token: 'bob-token' });
  });
  after(async () => {
    for (const s of stores) s.close();
    await forge.close();
    rmSync(src.dir, { recursive: true, force: true });
    for (const t of temps) rmSync(t, { recursive: true, force: true });
  });

  let next = 0;
  /** A forge repository with one open request by alice, a clone of it checked out on main, and the host pieces, signed in as `token`. */
  async function setup(provider: 'github' | 'gitlab', token = 'bob-token') {
    const owner = provider === 'github' ? 'acme' : 'grp';
    const name = `widget${++next}`;
    await forge.createRepo({ provider, owner, name, from: src.dir });
    const issue = forge.addIssue({ provider, owner, name, title: 'old.txt has the wrong name', body: 'It should be called new.' });
    const pull = await forge.openPullRequest({
      provider,
      owner,
      name,
      author: 'alice',
      head: 'feature',
      base: 'main',
      title: 'Rename old to new',
      body: `Closes #${issue.number}. Follow-up of the cleanup.`,
    });
    const dir = mkdtempSync(join(tmpdir(), 'rennet-publish-'));
    temps.push(dir);
    const work = join(dir, 'work');
    await git(dir, 'clone', '--quiet', `${forge.url}/${owner}/${name}.git`, work);
    const host = new URL(forge.url).host;
    const registry = new ForgeRegistryHolder({ RENNET_FORGES: JSON.stringify([{ host, provider }]) });
    const envVar = provider === 'github' ? 'GITHUB_TOKEN' : 'GITLAB_TOKEN';
    const forges = new ForgeService(registry, { env: { [envVar]: token }, cli: false }, forgeAdapter);
    const store = await Store.open(join(dir, 'store'));
    stores.push(store);
    const service = new ReviewService({
      store,
      pullRequests: {
        prepare: (root, target) => {
          const access = forges.access();
          return access.ok ? pullRequestSource(access.value).prepare(root, target) : Promise.resolve(access);
        },
      },
    });
    const asks = new AskLog(store);
    const publisher = new Publisher({
      store,
      projection: (id) => asks.projection(id),
      generation: (id) => {
        const g = currentGenerationId(store, id);
        return g ? readGenerationSnapshot(store, g) : null;
      },
      pullRequest: (id) => service.pullRequestRecord(id),
      access: () => forges.access(),
      markSent: markSentThrough(asks, () => new Date()),
    });
    return { provider, owner, name, number: pull.number, work, forges, store, service, asks, publisher, host };
  }

  type Setup = Awaited<ReturnType<typeof setup>>;

  async function open(s: Setup) {
    const target = await s.forges.resolve(s.work, String(s.number));
    assert.ok(target.ok, target.ok ? '' : target.error.message);
    const opened = await s.service.openReview({ repo: s.work, target: target.value });
    assert.ok(opened.ok, opened.ok ? '' : opened.error.message);
    return { target: target.value as PullRequestTarget, snapshot: opened.value.snapshot };
  }

  function stage(s: Setup, sessionId: string, command: AskCommand) {
    const r = s.asks.command(sessionId, command, new Date().toISOString());
    assert.ok(r.ok, r.ok ? '' : r.error.message);
    return r.value.event.type === 'stage' ? r.value.event.askId : '';
  }

  function stageTypical(s: Setup, sessionId: string, patchsetId: string) {
    stage(s, sessionId, {
      type: 'stage',
      anchor: { kind: 'line', patchsetId, path: 'app.txt', side: 'head', startLine: 5, endLine: 5 },
      text: 'Say why the fifth line changed.',
      intent: 'question',
      lane: 'post-review',
    });
    stage(s, sessionId, {
      type: 'stage',
      anchor: { kind: 'line', patchsetId, path: 'app.txt', side: 'head', startLine: 30, endLine: 31 },
      text: 'Split these into two steps.',
      intent: 'request-change',
      lane: 'post-review',
    });
    stage(s, sessionId, {
      type: 'stage',
      anchor: { kind: 'line', patchsetId, path: 'new.txt', side: 'base', startLine: 9, endLine: 9 },
      text: 'The old ninth line was fine.',
      intent: 'comment',
      lane: 'post-review',
    });
    stage(s, sessionId, { type: 'stage', anchor: { kind: 'none' }, text: 'Overall the rename reads well.', intent: 'comment', lane: 'post-review' });
  }

  it('GitHub: a teammate request is fetched into hidden refs without touching the checkout; the post is the preview, once, pinned to the head', async () => {
    const s = await setup('github');
    const headBefore = await git(s.work, 'rev-parse', 'HEAD');
    const { target, snapshot } = await open(s);
    assert.equal(snapshot.session.target.kind, 'pull-request');
    assert.equal(snapshot.pullRequest?.entry, 'teammate');
    assert.equal(snapshot.pullRequest?.viewer, 'bob');
    assert.deepEqual(
      snapshot.pullRequest?.issues.map((i) => [i.title, i.state]),
      [['old.txt has the wrong name', 'open']],
      'the linked issue was read as context, with its state',
    );
    assert.equal(await git(s.work, 'rev-parse', 'HEAD'), headBefore, 'HEAD did not move');
    assert.equal(await git(s.work, 'status', '--porcelain'), '', 'the index and work tree are untouched');
    assert.equal(await git(s.work, 'branch', '--list', 'feature'), '', 'no branch was created');
    assert.equal(await git(s.work, 'rev-parse', pullRequestRefs(target).head), snapshot.patchset?.head);
    // Re-entering reattaches the same session.
    const again = await open(s);
    assert.equal(again.snapshot.session.id, snapshot.session.id);

    const sessionId = snapshot.session.id;
    stageTypical(s, sessionId, snapshot.patchset!.id);
    const preview = s.publisher.preview(sessionId);
    assert.ok(preview.ok, preview.ok ? '' : preview.error.message);
    assert.ok(preview.value.composed.ok);
    const composed = preview.value.composed.value;
    assert.equal(composed.descriptor.event, 'REQUEST_CHANGES');
    assert.deepEqual(
      composed.descriptor.comments.map((c) => [c.path, c.side, c.startLine ?? null, c.line]),
      [
        ['app.txt', 'RIGHT', null, 5],
        ['app.txt', 'RIGHT', 30, 31],
        ['new.txt', 'LEFT', null, 9],
      ],
    );
    assert.equal(preview.value.receipt, null);

    // A double click: two posts at once, one review.
    const [first, second] = await Promise.all([s.publisher.post(sessionId, composed.descriptor.compositionId), s.publisher.post(sessionId, composed.descriptor.compositionId)]);
    assert.ok(first.ok && second.ok, JSON.stringify([first, second]));
    assert.equal(first.value.reviewId, second.value.reviewId);
    const reviews = forge.reviews({ provider: 'github', owner: s.owner, name: s.name, number: s.number }) as Array<{
      body: string;
      state: string;
      commit_id: string;
      comments: Array<Record<string, unknown>>;
    }>;
    assert.equal(reviews.length, 1);
    const posted = reviews[0]!;
    assert.equal(posted.body, composed.descriptor.body, 'the posted body is the previewed one');
    assert.equal(readReviewMarker(posted.body), composed.markerId);
    assert.equal(posted.state, 'CHANGES_REQUESTED');
    assert.equal(posted.commit_id, snapshot.patchset!.head);
    assert.deepEqual(
      posted.comments.map((c) => [c.path, c.side, c.start_line ?? null, c.line, c.body]),
      composed.descriptor.comments.map((c) => [c.path, c.side, c.startLine ?? null, c.line, c.body]),
    );
    assert.equal(forge.requests({ method: 'POST', pathPattern: '/reviews$' }).length, 1, 'one review request for every comment');

    // The receipt survives a restart of the host: a new publisher over the same store answers it.
    const reopened = s.publisher.preview(sessionId);
    assert.ok(reopened.ok && reopened.value.receipt?.reviewId === first.value.reviewId);
    assert.equal(reopened.value.receipt?.comments, 3);

    // What posted is sent: the four asks retired, naming where they went; nothing is staged.
    const after = s.asks.projection(sessionId);
    assert.ok(after.ok);
    assert.equal(after.value.counts.staged, 0);
    assert.deepEqual(
      after.value.asks.map((a) => [a.state, a.retiredReason]),
      after.value.asks.map(() => ['retired', `posted to GitHub in ${first.value.url}`]),
    );
    // With nothing staged since, the exit stands at that review: no approving review of nothing.
    assert.ok(reopened.value.composed.ok && reopened.value.composed.value.placements.length === 0);
    const empty = await s.publisher.post(sessionId, reopened.value.composed.value.descriptor.compositionId);
    assert.ok(empty.ok && empty.value.reviewId === first.value.reviewId && empty.value.reused, JSON.stringify(empty));
    assert.equal(forge.reviews({ provider: 'github', owner: s.owner, name: s.name, number: s.number }).length, 1, 'a post of nothing new posts nothing');
    // A retry of the posted composition still answers its receipt.
    const retry = await s.publisher.post(sessionId, composed.descriptor.compositionId);
    assert.ok(retry.ok && retry.value.reviewId === first.value.reviewId && retry.value.reused, JSON.stringify(retry));

    // A follow-up: one more ask; a preview shown before a further change is stale.
    stage(s, sessionId, { type: 'stage', anchor: { kind: 'none' }, text: 'One more thing.', intent: 'comment', lane: 'post-review' });
    const followUp = s.publisher.preview(sessionId);
    assert.ok(followUp.ok && followUp.value.composed.ok && followUp.value.receipt === null, JSON.stringify(followUp));
    stage(s, sessionId, { type: 'stage', anchor: { kind: 'none' }, text: 'And another.', intent: 'question', lane: 'post-review' });
    const stale = await s.publisher.post(sessionId, followUp.value.composed.value.descriptor.compositionId);
    assert.ok(!stale.ok && stale.error.code === 'stale-composition', JSON.stringify(stale));
    assert.equal(forge.reviews({ provider: 'github', owner: s.owner, name: s.name, number: s.number }).length, 1);
    // Posting the follow-up carries only what was staged since: no line comment is posted twice.
    const current = s.publisher.preview(sessionId);
    assert.ok(current.ok && current.value.composed.ok);
    assert.equal(current.value.composed.value.descriptor.event, 'COMMENT');
    const second2 = await s.publisher.post(sessionId, current.value.composed.value.descriptor.compositionId);
    assert.ok(second2.ok, JSON.stringify(second2));
    const both = forge.reviews({ provider: 'github', owner: s.owner, name: s.name, number: s.number }) as Array<{ body: string; comments: unknown[] }>;
    assert.equal(both.length, 2);
    assert.equal(both[1]!.comments.length, 0);
    assert.match(both[1]!.body, /One more thing\./);
    assert.doesNotMatch(both[1]!.body, /Overall the rename reads well/);
  });

  it('GitHub: a lost answer after the review landed ends with exactly one review, found by its marker', async () => {
    const s = await setup('github');
    const { snapshot } = await open(s);
    stageTypical(s, snapshot.session.id, snapshot.patchset!.id);
    const preview = s.publisher.preview(snapshot.session.id);
    assert.ok(preview.ok && preview.value.composed.ok);
    forge.setFault({ kind: 'drop-response-after-mutation', method: 'POST', pathPattern: `/repos/${s.owner}/${s.name}/pulls/${s.number}/reviews$`, times: 1 });
    const result = await s.publisher.post(snapshot.session.id, preview.value.composed.value.descriptor.compositionId);
    forge.clearFaults();
    assert.ok(result.ok, JSON.stringify(result));
    assert.equal(result.value.reused, true, 'the review was found on the forge, not posted again');
    assert.equal(forge.reviews({ provider: 'github', owner: s.owner, name: s.name, number: s.number }).length, 1);
  });

  it('a host stopped between the receipt and marking its asks sent: the next preview marks them, and the exit stands at the posted review', async () => {
    const s = await setup('github');
    const { snapshot } = await open(s);
    const sessionId = snapshot.session.id;
    stageTypical(s, sessionId, snapshot.patchset!.id);
    const stopped = new Publisher({
      store: s.store,
      projection: (id) => s.asks.projection(id),
      generation: () => null,
      pullRequest: (id) => s.service.pullRequestRecord(id),
      access: () => s.forges.access(),
      markSent: () => {},
    });
    const preview = stopped.preview(sessionId);
    assert.ok(preview.ok && preview.value.composed.ok);
    const posted = await stopped.post(sessionId, preview.value.composed.value.descriptor.compositionId);
    assert.ok(posted.ok, JSON.stringify(posted));
    const before = s.asks.projection(sessionId);
    assert.ok(before.ok && before.value.counts.staged === 4, 'the stopped host marked nothing');
    const healed = s.publisher.preview(sessionId);
    assert.ok(healed.ok && healed.value.receipt?.reviewId === posted.value.reviewId, JSON.stringify(healed));
    const after = s.asks.projection(sessionId);
    assert.ok(after.ok && after.value.counts.staged === 0 && after.value.asks.every((a) => a.retiredReason === `posted to GitHub in ${posted.value.url}`));
    assert.equal(forge.reviews({ provider: 'github', owner: s.owner, name: s.name, number: s.number }).length, 1);
  });

  it('GitHub: a head that moved since the capture is refused before any mutation; an unknown token is refused naming the repair, never the token', async () => {
    const s = await setup('github');
    const { snapshot } = await open(s);
    stageTypical(s, snapshot.session.id, snapshot.patchset!.id);
    const preview = s.publisher.preview(snapshot.session.id);
    assert.ok(preview.ok && preview.value.composed.ok);
    const main = await git(s.work, 'rev-parse', 'origin/main');
    await forge.movePullRequestHead({ provider: 'github', owner: s.owner, name: s.name, number: s.number, sha: main });
    const moved = await s.publisher.post(snapshot.session.id, preview.value.composed.value.descriptor.compositionId);
    assert.ok(!moved.ok && moved.error.code === 'head-moved', JSON.stringify(moved));
    assert.equal(forge.reviews({ provider: 'github', owner: s.owner, name: s.name, number: s.number }).length, 0);

    const bad = await setup('github', 'not-a-token');
    const target = await bad.forges.resolve(bad.work, String(bad.number));
    assert.ok(target.ok);
    const refused = await bad.service.openReview({ repo: bad.work, target: target.value });
    assert.ok(!refused.ok && refused.error.code === 'forge-unauthorized', JSON.stringify(refused));
    assert.doesNotMatch(refused.error.message, /not-a-token/);
  });

  it('GitHub: on one’s own request the review cannot approve or request changes; it posts as a comment and says why', async () => {
    const s = await setup('github', 'alice-token');
    const { snapshot } = await open(s);
    assert.equal(snapshot.pullRequest?.entry, 'own');
    stageTypical(s, snapshot.session.id, snapshot.patchset!.id);
    const preview = s.publisher.preview(snapshot.session.id);
    assert.ok(preview.ok && preview.value.composed.ok);
    const composed = preview.value.composed.value;
    assert.equal(composed.descriptor.event, 'COMMENT');
    assert.equal(composed.verdict.downgradedFrom, 'REQUEST_CHANGES');
    assert.match(composed.verdict.notice ?? '', /own/);
    const posted = await s.publisher.post(snapshot.session.id, composed.descriptor.compositionId);
    assert.ok(posted.ok, JSON.stringify(posted));
    assert.equal(posted.value.event, 'COMMENT');
  });

  it('GitLab: the review lands as discussions and one body note published together; APPROVE adds the approval pinned to the head, once', async () => {
    const s = await setup('gitlab');
    const { snapshot } = await open(s);
    assert.equal(snapshot.pullRequest?.entry, 'teammate');
    const sessionId = snapshot.session.id;
    stageTypical(s, sessionId, snapshot.patchset!.id);
    const preview = s.publisher.preview(sessionId);
    assert.ok(preview.ok && preview.value.composed.ok, JSON.stringify(preview));
    const composed = preview.value.composed.value;
    const posted = await s.publisher.post(sessionId, composed.descriptor.compositionId);
    assert.ok(posted.ok, JSON.stringify(posted));
    const pr = { provider: 'gitlab' as const, owner: s.owner, name: s.name, number: s.number };
    const discussions = forge.discussions(pr) as Array<{ notes: Array<{ body: string; position?: Record<string, unknown> | null }> }>;
    const positioned = discussions.flatMap((d) => d.notes).filter((n) => n.position);
    assert.equal(positioned.length, 3, JSON.stringify(discussions));
    assert.deepEqual(positioned.map((n) => n.body).sort(), composed.descriptor.comments.map((c) => c.body).sort());
    const notes = forge.notes(pr) as Array<{ body: string }>;
    assert.equal(notes.filter((n) => readReviewMarker(n.body) === composed.markerId).length, 1, 'one body note carries the marker');
    assert.equal(posted.value.event, 'REQUEST_CHANGES');

    // An approving review of a second request: the note and the approval.
    const t = await setup('gitlab');
    const opened = await open(t);
    const set = t.asks.command(opened.snapshot.session.id, { type: 'setVerdictOverride', verdict: 'approve' }, new Date().toISOString());
    assert.ok(set.ok);
    const approving = t.publisher.preview(opened.snapshot.session.id);
    assert.ok(approving.ok && approving.value.composed.ok);
    assert.equal(approving.value.composed.value.descriptor.event, 'APPROVE');
    const approved = await t.publisher.post(opened.snapshot.session.id, approving.value.composed.value.descriptor.compositionId);
    assert.ok(approved.ok, JSON.stringify(approved));
    const approvals = forge.approvals({ provider: 'gitlab', owner: t.owner, name: t.name, number: t.number }) as { approved_by: Array<{ user: { username: string } }> };
    assert.deepEqual(
      approvals.approved_by.map((a) => a.user.username),
      ['bob'],
    );
    const twice = await t.publisher.post(opened.snapshot.session.id, approving.value.composed.value.descriptor.compositionId);
    assert.ok(twice.ok && twice.value.reviewId === approved.value.reviewId);
    assert.equal(forge.requests({ method: 'POST', pathPattern: '/approve$' }).length >= 1, true);
  });
});
