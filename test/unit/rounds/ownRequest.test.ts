import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AskLog } from '../../../host/asks/log';
import { markSentThrough, Publisher } from '../../../host/exits/publish';
import { openPullRequest } from '../../../host/exits/openPr';
import { forgeAdapter } from '../../../host/forge/adapters';
import { pullRequestSource } from '../../../host/forge/pullRequests';
import { ForgeRegistryHolder, ForgeService } from '../../../host/forge/service';
import type { Harness, TurnRequest, TurnResult } from '../../../host/pipeline/ports';
import { RoundRunner, type RoundContext, type WorkerPort } from '../../../host/rounds/runner';
import { DISPATCH_REFUSAL_WORDS } from '../../../host/rounds/workOrder';
import { bindWorkspace, worktreePlacement } from '../../../host/rounds/workspace';
import { ReviewService } from '../../../host/service';
import { Store } from '../../../host/store';
import { PULL_REQUEST_EVENT_KIND } from '../../../protocol/forge';
import type { EvidenceUnit } from '../../../protocol/rounds';
import { TestRepo } from '../../fixtures/gitRepo';
import { startFakeForge, type FakeForge } from '../../servers/fakeForge';

/**
 * Rounds on one's own pull request, against the loopback fake forge (which enforces where a review
 * comment may land and on which head) and real git: the request's review loops like a branch's,
 * on the request's head branch — refused while that branch is not here (naming the fetch), while
 * it lacks the head the review read, and for a head in another repository; a teammate's request
 * has no round lane. The round's successor names the head branch over the request's own base.
 * Until the round's commits are pushed the request's head is behind the review: the head check
 * says so, and Post review refuses having posted nothing; the own-branch push (Open pull request)
 * reuses the request, after which the same review posts on the round's commit.
 *
 * The report seat is an in-process harness that reads the evidence and cites every unit for the
 * one ask; landing the generation is fabricated (labelled) — lenses are tested elsewhere.
 */

const execFileP = promisify(execFile);
const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_TERMINAL_PROMPT: '0',
  GIT_AUTHOR_NAME: 'A',
  GIT_AUTHOR_EMAIL: 'a@example.com',
  GIT_COMMITTER_NAME: 'A',
  GIT_COMMITTER_EMAIL: 'a@example.com',
};
const git = async (cwd: string, ...args: string[]) => (await execFileP('git', args, { cwd, env: GIT_ENV, encoding: 'utf8' })).stdout.trim();

const lines = (change: (i: number) => string[] | null = () => null) =>
  Array.from({ length: 12 }, (_, k) => change(k + 1) ?? [`a${k + 1}`])
    .flat()
    .join('\n') + '\n';

/** Reads every evidence page and marks the one ask addressed, citing every unit it read. */
class EvidenceReader implements Harness {
  readonly kind = 'scripted';
  readonly origin = 'other' as const;
  readonly model = null;
  async runTurn(request: TurnRequest): Promise<TurnResult> {
    const ids: string[] = [];
    let asks: string[] = [];
    for (let page = 1; ; page++) {
      const read = await request.tools.call('read_evidence', { page });
      assert.equal(read.isError, false, read.text);
      for (const line of read.text.split('\n').filter((l) => l.startsWith('{'))) {
        const value = JSON.parse(line) as { asks?: Array<{ id: string }> } & Partial<EvidenceUnit>;
        if (value.asks) asks = value.asks.map((a) => a.id);
        else if (value.id) ids.push(value.id);
      }
      if (!/continue with read_evidence/.test(read.text)) break;
    }
    const outcomes = asks.map((askId) => ({ askId, outcome: 'addressed', evidenceIds: ids, note: 'Done as asked.' }));
    const submitted = await request.tools.call('submit_report', { outcomes, beyond: [] });
    assert.equal(submitted.isError, false, submitted.text);
    return { outcome: 'ended', message: null, usage: null };
  }
}

describe('host/rounds: rounds on one’s own pull request (fake forge, real git)', function () {
  this.timeout(120_000);
  let forge: FakeForge;
  let src: TestRepo;
  const temps: string[] = [];
  const stores: Store[] = [];
  let next = 0;

  before(async () => {
    src = new TestRepo();
    src.write('src/app.txt', lines()).commit('base');
    src.branch('feature');
    src
      .write(
        'src/app.txt',
        lines((i) => (i === 5 ? ['A5'] : null)),
      )
      .commit('Capitalise line five');
    src.checkout('main');
    forge = await startFakeForge();
    forge.addUser({ login: 'alice', token: 'alice-token' });
    forge.addUser({ login: 'bob', token: 'bob-token' });
  });
  after(async () => {
    for (const s of stores) s.close();
    await forge.close();
    src.cleanup();
    for (const t of temps) rmSync(t, { recursive: true, force: true });
  });

  /** A forge repository with alice's open request (feature → main), a clone on main (pushing as alice), and the host pieces signed in as `token`. */
  async function setup(token: 'alice-token' | 'bob-token') {
    const name = `app${++next}`;
    await forge.createRepo({ provider: 'github', owner: 'acme', name, from: src.dir, defaultBranch: 'main' });
    const pull = await forge.openPullRequest({ provider: 'github', owner: 'acme', name, author: 'alice', head: 'feature', base: 'main', title: 'Capitalise line five' });
    const dir = mkdtempSync(join(tmpdir(), 'rennet-own-pr-'));
    temps.push(dir);
    const work = join(dir, 'work');
    const url = new URL(forge.url);
    await git(dir, 'clone', '--quiet', `${url.protocol}//alice:alice-token@${url.host}/acme/${name}.git`, work);
    const forges = new ForgeService(new ForgeRegistryHolder({ RENNET_FORGES: JSON.stringify([{ host: url.host, provider: 'github' }]) }), { env: { GITHUB_TOKEN: token }, cli: false }, forgeAdapter);
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
    const target = await forges.resolve(work, String(pull.number));
    assert.ok(target.ok, target.ok ? '' : target.error.message);
    const opened = await service.openReview({ repo: work, target: target.value });
    assert.ok(opened.ok, opened.ok ? '' : opened.error.message);
    const sessionId = opened.value.snapshot.session.id;
    const asks = new AskLog(store);
    const patchset = store.getPatchset(opened.value.snapshot.session.activePatchsetId as string);
    assert.ok(patchset);
    const runner = new RoundRunner({ store, asks, bindWorkspace: (s, o) => bindWorkspace(store, s, { dataDir: store.dir, now: () => new Date().toISOString(), ...o }) });
    const stage = (text: string) => {
      const staged = asks.command(
        sessionId,
        { type: 'stage', anchor: { kind: 'line', patchsetId: patchset.id, path: 'src/app.txt', side: 'head', startLine: 5, endLine: 5 }, text, intent: 'request-change', lane: 'changes' },
        new Date().toISOString(),
      );
      assert.ok(staged.ok, staged.ok ? '' : staged.error.message);
    };
    const publisher = new Publisher({
      store,
      projection: (id) => asks.projection(id),
      generation: () => null,
      pullRequest: (id) => service.pullRequestRecord(id),
      access: () => forges.access(),
      markSent: markSentThrough(asks, () => new Date()),
    });
    return { name, number: pull.number, prHead: pull.headSha, work, forges, store, service, asks, sessionId, patchset, runner, stage, publisher };
  }

  const context: RoundContext = {
    reportHarness: async () => ({ harness: new EvidenceReader(), hint: null }),
    // Fixture-authored landing: no lenses are drafted here.
    draftGeneration: async () => ({ ok: true, value: { generationId: 'g-fixture' } }),
  };
  /** Doubles line five and commits, in the round's workspace. */
  const worker: WorkerPort = {
    worker: { kind: 'scripted', version: null },
    async run({ root }) {
      writeFileSync(
        join(root, 'src', 'app.txt'),
        lines((i) => (i === 5 ? ['A5 A5'] : null)),
      );
      await git(root, 'commit', '--quiet', '-am', 'Say A5 twice');
      return { outcome: 'done', message: null };
    },
  };

  it('own request: refused while its head branch is not here (naming the fetch) or lacks the reviewed head; then it binds on the head branch and a round returns with the successor on that branch over the request’s base', async () => {
    const s = await setup('alice-token');
    assert.equal(s.service.pullRequestRecord(s.sessionId)?.entry, 'own');
    s.stage('Say A5 twice.');

    // The clone has only main: the head branch is not a branch here.
    const missing = await s.runner.order(s.sessionId);
    assert.ok(!missing.ok);
    assert.equal(missing.error.code, 'unknown-ref');
    assert.match(missing.error.message, /^feature, the request's head branch, is not a branch in .*git fetch origin feature:feature, then dispatch$/);
    assert.equal(missing.error.detail?.['command'], 'git fetch origin feature:feature');
    assert.deepEqual(s.runner.rounds(s.sessionId), []);

    // A local feature that lacks the head the review read is refused: the asks were written on that head.
    await git(s.work, 'branch', 'feature', 'origin/main');
    const behind = await s.runner.order(s.sessionId);
    assert.ok(!behind.ok);
    assert.match(behind.error.message, new RegExp(`^feature is at [0-9a-f]{12}, which does not contain ${s.prHead.slice(0, 12)}, the head this review read`));
    await git(s.work, 'branch', '-D', 'feature');

    // The command the refusal named makes it; no checkout has it out, so Rennet's worktree of it is the workspace.
    await git(s.work, 'fetch', 'origin', 'feature:feature');
    const placed = await s.runner.order(s.sessionId);
    assert.ok(placed.ok, placed.ok ? '' : placed.error.message);
    assert.deepEqual(placed.value.workspace, { root: worktreePlacement(s.store.dir, s.work, 'feature'), branch: 'feature', kind: 'worktree' });
    // With the clone on feature, the bind shares it, as for a branch review.
    await git(s.work, 'switch', '--quiet', 'feature');
    const shared = await s.runner.order(s.sessionId);
    assert.ok(shared.ok, shared.ok ? '' : shared.error.message);
    assert.deepEqual(shared.value.workspace, { root: s.work, branch: 'feature', kind: 'share' });
    assert.equal(shared.value.order.asks.length, 1);

    const dispatched = await s.runner.dispatch(s.sessionId, { ...context, worker }, { expectDigest: shared.value.order.digest });
    assert.ok(dispatched.ok, dispatched.ok ? '' : dispatched.error.message);
    const round = await dispatched.value.done;
    assert.equal(round.state, 'returned', JSON.stringify(round.failure));
    const tip = await git(s.work, 'rev-parse', 'refs/heads/feature');
    assert.deepEqual(round.range, { from: s.prHead, to: tip });
    assert.equal(await git(s.work, 'log', '-1', '--format=%s', 'feature'), 'Say A5 twice');
    // The successor: the head branch's tip, named by the branch, over the request's own base.
    const successor = s.store.getPatchset(round.successorPatchsetId as string);
    assert.ok(successor);
    assert.equal(s.store.getSession(s.sessionId)?.activePatchsetId, successor.id);
    assert.deepEqual([successor.head, successor.headRef], [tip, 'feature']);
    assert.deepEqual([successor.base, successor.baseRef, successor.baseTip], [s.patchset.base, s.patchset.baseRef, s.patchset.baseTip]);
    assert.deepEqual(
      successor.files.map((f) => f.path),
      ['src/app.txt'],
    );
    assert.equal(s.runner.rounds(s.sessionId)[0]?.report?.counts.addressed, 1);
    // The forge's request has not moved: the round's commit is only here.
    assert.equal(((await forge.pullRequest({ owner: 'acme', name: s.name, number: s.number })) as { head: { sha: string } }).head.sha, s.prHead);
  });

  it('after a round, until it is pushed: the head check says the request is behind (not moved), Post review refuses and posts nothing; Open pull request pushes and reuses the request, and the same review then posts on the round’s commit', async () => {
    const s = await setup('alice-token');
    await git(s.work, 'switch', '--quiet', '-c', 'feature', 'origin/feature');
    s.stage('Say A5 twice.');
    const dispatched = await s.runner.dispatch(s.sessionId, { ...context, worker });
    assert.ok(dispatched.ok, dispatched.ok ? '' : dispatched.error.message);
    const round = await dispatched.value.done;
    assert.equal(round.state, 'returned', JSON.stringify(round.failure));
    const successor = s.store.getPatchset(round.successorPatchsetId as string);
    assert.ok(successor);
    const tip = successor.head;

    const fresh = await s.forges.freshness(s.store.getSession(s.sessionId)!, tip, true);
    assert.ok(fresh.ok, fresh.ok ? '' : fresh.error.message);
    assert.deepEqual(fresh.value, { capturedHeadSha: tip, liveHeadSha: s.prHead, moved: true, unpushed: 1, state: 'open' });

    // A line comment on the round's line, then Post review: refused before anything is sent.
    const comment = s.asks.command(
      s.sessionId,
      { type: 'setLineComment', anchor: { patchsetId: successor.id, path: 'src/app.txt', side: 'head', startLine: 5, endLine: 5 }, text: 'Twice reads better.' },
      new Date().toISOString(),
    );
    assert.ok(comment.ok, comment.ok ? '' : comment.error.message);
    const preview = s.publisher.preview(s.sessionId);
    assert.ok(preview.ok && preview.value.composed.ok, JSON.stringify(preview));
    const compositionId = preview.value.composed.value.descriptor.compositionId;
    assert.equal(preview.value.composed.value.descriptor.target.headSha, tip);
    const refused = await s.publisher.post(s.sessionId, compositionId);
    assert.ok(!refused.ok);
    assert.equal(refused.error.code, 'head-moved');
    assert.match(refused.error.message, new RegExp(`head ${s.prHead.slice(0, 12)} is 1 commit behind ${tip.slice(0, 12)}, the head this review read on feature: its commits are not pushed`));
    assert.match(refused.error.message, /rennet open-pr --branch feature --base main.*nothing was posted$/);
    assert.equal(forge.reviews({ owner: 'acme', name: s.name, number: s.number }).length, 0, 'nothing was posted');

    // The push exit: the branch is pushed and the open request for the same head and base reused.
    const access = s.forges.access();
    assert.ok(access.ok);
    const opened = await openPullRequest({ repoDir: s.work, branch: 'feature', base: 'main' }, access.value);
    assert.ok(opened.ok, opened.ok ? '' : opened.error.message);
    assert.deepEqual([opened.value.number, opened.value.reused], [s.number, true]);
    assert.equal(((await forge.pullRequest({ owner: 'acme', name: s.name, number: s.number })) as { head: { sha: string } }).head.sha, tip);
    const again = await s.forges.freshness(s.store.getSession(s.sessionId)!, tip, true);
    assert.ok(again.ok);
    assert.deepEqual(again.value, { capturedHeadSha: tip, liveHeadSha: tip, moved: false, state: 'open' });

    const posted = await s.publisher.post(s.sessionId, compositionId);
    assert.ok(posted.ok, posted.ok ? '' : posted.error.message);
    const reviews = forge.reviews({ owner: 'acme', name: s.name, number: s.number }) as Array<{ commit_id: string; comments: Array<{ path: string; line: number; body: string }> }>;
    assert.equal(reviews.length, 1);
    assert.equal(reviews[0]!.commit_id, tip);
    assert.deepEqual(
      reviews[0]!.comments.map((c) => [c.path, c.line]),
      [['src/app.txt', 5]],
    );
  });

  it('a teammate’s request has no round lane; a head in another repository (a fork) is refused saying so', async () => {
    const s = await setup('bob-token');
    assert.equal(s.service.pullRequestRecord(s.sessionId)?.entry, 'teammate');
    await git(s.work, 'fetch', 'origin', 'feature:feature');
    s.stage('Say A5 twice.');
    const teammate = await s.runner.order(s.sessionId);
    assert.ok(!teammate.ok);
    assert.equal(teammate.error.detail?.['refusal'], 'no-round-lane');
    assert.equal(teammate.error.message, DISPATCH_REFUSAL_WORDS['no-round-lane']);
    let ran = false;
    const dispatched = await s.runner.dispatch(s.sessionId, { ...context, worker: { ...worker, run: async () => ((ran = true), { outcome: 'done', message: null }) } });
    assert.ok(!dispatched.ok && dispatched.error.detail?.['refusal'] === 'no-round-lane');
    assert.equal(ran, false);
    assert.deepEqual(s.runner.rounds(s.sessionId), []);

    // The same request, read as one's own but with its head in a fork.
    const record = s.service.pullRequestRecord(s.sessionId);
    assert.ok(record);
    s.store.appendEvent(s.sessionId, PULL_REQUEST_EVENT_KIND, { ...record, entry: 'own', viewer: 'alice', headRepo: 'alice/app' }, new Date().toISOString());
    const fork = await s.runner.order(s.sessionId);
    assert.ok(!fork.ok);
    assert.match(fork.error.message, /^this request's head is alice\/app:feature, a branch of another repository \(a fork\)/);
    // Read as one's own, in this repository: it loops.
    s.store.appendEvent(s.sessionId, PULL_REQUEST_EVENT_KIND, { ...record, entry: 'own', viewer: 'alice', headRepo: null }, new Date().toISOString());
    const own = await s.runner.order(s.sessionId);
    assert.ok(own.ok, own.ok ? '' : own.error.message);
    assert.equal(own.value.workspace.branch, 'feature');
  });
});
