import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { branchOpenPrInput, openPullRequest, previewPullRequest, sessionDraftEdits, type OpenPrInput } from '../../../host/exits/openPr';
import { draftPullRequest, humanize } from '../../../host/exits/prDraft';
import { landingFor, recordedPushDestination } from '../../../host/rounds/landing';
import { forgeAdapter } from '../../../host/forge/adapters';
import { ForgeRegistryHolder, ForgeService } from '../../../host/forge/service';
import { ReviewService } from '../../../host/service';
import { Store } from '../../../host/store';
import type { GenerationSnapshot } from '../../../protocol/review';
import type { Target } from '../../../protocol/session';
import { TestRepo } from '../../fixtures/gitRepo';
import { startFakeForge, type FakeForge } from '../../servers/fakeForge';

/**
 * Open pull request (one's own branch): the draft from commits and boards, a saved edit that the
 * next preview and the submission read, and the push + create against the fake forge.
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

describe('host/exits: the own-branch pull request (draft, saved edits, push and open)', function () {
  this.timeout(60_000);

  it('drafts a title from one commit, from the Design board, or from the branch name; the body from the boards, else the commits', () => {
    const one = draftPullRequest({ branch: 'fix/x', base: 'main', commits: [{ sha: 'a'.repeat(40), subject: 'Fix the retry loop' }], generation: null });
    assert.equal(one.title, 'Fix the retry loop');
    assert.match(one.body, /^## Commits\n\n- Fix the retry loop \(aaaaaaa\)$/);
    const generation = {
      lanes: [
        { lens: 'design', state: 'settled', board: { document: { title: 'Uploads retry', intro_markdown: 'Uploads are retried with back-off.' }, elements: [] } },
        { lens: 'sequence', state: 'settled', board: { document: { title: '', intro_markdown: '' }, elements: [{ kind: 'order_step', id: 'e1', parent: null, title: 'Wrap the upload in a retry' }] } },
        { lens: 'decisions', state: 'settled', board: { document: { title: '', intro_markdown: '' }, elements: [{ kind: 'decision', id: 'e2', parent: null, title: 'Exponential back-off' }] } },
      ],
    } as unknown as GenerationSnapshot;
    const two = [
      { sha: 'b'.repeat(40), subject: 'Add retry' },
      { sha: 'c'.repeat(40), subject: 'Tune back-off' },
    ];
    const boards = draftPullRequest({ branch: 'feat/retry-uploads', base: 'main', commits: two, generation });
    assert.equal(boards.title, 'Uploads retry');
    assert.deepEqual(boards.sources, ['design', 'sequence', 'decisions', 'commits']);
    assert.match(boards.body, /^Uploads are retried with back-off\.\n\n## Changes\n\n- Wrap the upload in a retry\n\n## Decisions\n\n- Exponential back-off\n\n## Commits/);
    assert.equal(draftPullRequest({ branch: 'feat/retry-uploads', base: 'main', commits: two, generation: null }).title, 'Retry uploads');
    // A Sequence with sections only lists their titles — never the host's round chapters, which narrate the review.
    const chaptered = {
      lanes: [
        {
          lens: 'sequence',
          state: 'settled',
          board: {
            document: { title: '', intro_markdown: '' },
            elements: [
              { kind: 'section', id: 'e1', parent: null, author: 'claude', title: 'Wrap the upload' },
              { kind: 'section', id: 'e2', parent: null, author: 'host', title: 'Round 1 · Addressed' },
            ],
          },
        },
      ],
    } as unknown as GenerationSnapshot;
    assert.match(draftPullRequest({ branch: 'b', base: 'main', commits: [two[0]!], generation: chaptered }).body, /^## Changes\n\n- Wrap the upload$/);
    assert.equal(humanize('team/JIRA-12_fix.the-thing'), 'JIRA 12 fix the thing');
    const edited = draftPullRequest({ branch: 'b', base: 'main', commits: two, generation, edit: { title: 'Mine', body: 'Line one\r\nLine two' } });
    assert.deepEqual([edited.title, edited.body, edited.sources], ['Mine', 'Line one\nLine two', ['edited']]);
  });

  describe('against the fake forge', () => {
    let forge: FakeForge;
    let dir: string;
    let work: string;
    let store: Store;
    let service: ReviewService;
    let forges: ForgeService;

    before(async () => {
      const src = new TestRepo();
      src.write('app.txt', 'one\n').commit('base');
      forge = await startFakeForge();
      forge.addUser({ login: 'alice', token: 'alice-token' });
      await forge.createRepo({ provider: 'github', owner: 'acme', name: 'app', from: src.dir, defaultBranch: 'main' });
      src.cleanup();
      dir = mkdtempSync(join(tmpdir(), 'rennet-openpr-'));
      work = join(dir, 'work');
      const url = new URL(forge.url);
      await git(dir, 'clone', '--quiet', `${url.protocol}//alice:alice-token@${url.host}/acme/app.git`, work);
      await git(work, 'checkout', '--quiet', '-b', 'feat/two-lines');
      writeFileSync(join(work, 'app.txt'), 'one\ntwo\n');
      await git(work, 'commit', '--quiet', '-am', 'Add the second line');
      store = await Store.open(join(dir, 'store'));
      service = new ReviewService({ store });
      forges = new ForgeService(
        new ForgeRegistryHolder({ RENNET_FORGES: JSON.stringify([{ host: url.host, provider: 'github' }]) }),
        { env: { GITHUB_TOKEN: 'alice-token' }, cli: false },
        forgeAdapter,
      );
      // The branch was reviewed: its session keeps the saved edits.
      const opened = await service.openReview({ repo: work, target: { kind: 'branch', head: 'feat/two-lines', base: 'main' } });
      assert.ok(opened.ok, opened.ok ? '' : opened.error.message);
    });
    after(async () => {
      store.close();
      await forge.close();
      rmSync(dir, { recursive: true, force: true });
    });

    const input = (extra: Partial<OpenPrInput> = {}): OpenPrInput => ({
      repoDir: work,
      draftEdits: sessionDraftEdits(store, (branch, base) => service.findSession(service.listSessions()[0]!.repoRoot, { kind: 'branch', head: branch, base })?.id ?? null),
      ...extra,
    });

    it('an edit is saved on the branch review: the next preview and the submission read it; a stale composition is refused before the push', async () => {
      const access = forges.access();
      assert.ok(access.ok);
      const first = await previewPullRequest(input(), access.value);
      assert.ok(first.ok, first.ok ? '' : first.error.message);
      assert.equal(first.value.title, 'Add the second line');
      const edited = await previewPullRequest(input({ title: 'Two lines, not one' }), access.value);
      assert.ok(edited.ok);
      assert.equal(edited.value.title, 'Two lines, not one');
      const reread = await previewPullRequest(input(), access.value);
      assert.ok(reread.ok);
      assert.equal(reread.value.title, 'Two lines, not one', 'the saved edit survives into a preview that names none');
      assert.equal(reread.value.compositionId, edited.value.compositionId);

      const stale = await openPullRequest({ ...input(), expectComposition: first.value.compositionId }, access.value);
      assert.ok(!stale.ok && stale.error.code === 'stale-composition');
      assert.equal(await git(work, 'ls-remote', 'origin', 'refs/heads/feat/two-lines'), '', 'nothing was pushed');

      const opened = await openPullRequest({ ...input(), expectComposition: reread.value.compositionId }, access.value);
      assert.ok(opened.ok, opened.ok ? '' : opened.error.message);
      assert.equal(opened.value.reused, false);
      const pr = (await forge.pullRequest({ provider: 'github', owner: 'acme', name: 'app', number: opened.value.number })) as { title: string };
      assert.equal(pr.title, 'Two lines, not one');
    });

    it('a review bound on a sibling: its commits are pushed under the branch’s name (the local branch does not move), the destination is recorded, and the landing line counts what the branch lacks', async () => {
      const access = forges.access();
      assert.ok(access.ok);
      // Alice's own second branch, reviewed with its rounds on a sibling rennet/feat/sib (bound as a round would bind it).
      await git(work, 'checkout', '--quiet', '-b', 'feat/sib', 'main');
      writeFileSync(join(work, 'app.txt'), 'one\nsib\n');
      await git(work, 'commit', '--quiet', '-am', 'Start the sibling work');
      const reviewed = await service.openReview({ repo: work, target: { kind: 'branch', head: 'feat/sib', base: 'main' } });
      assert.ok(reviewed.ok, reviewed.ok ? '' : reviewed.error.message);
      const session = reviewed.value.snapshot.session;
      await git(work, 'branch', 'rennet/feat/sib', 'feat/sib');
      await git(work, 'checkout', '--quiet', 'rennet/feat/sib');
      writeFileSync(join(work, 'app.txt'), 'one\nsib\nround one\n');
      await git(work, 'commit', '--quiet', '-am', 'Round 1: add a line');
      await git(work, 'checkout', '--quiet', 'feat/sib');
      store.appendEvent(session.id, 'session.workspace', { root: work, branch: 'feat/sib', kind: 'sibling', workBranch: 'rennet/feat/sib' }, '2026-12-02T00:00:00.000Z');
      const branchTip = await git(work, 'rev-parse', 'feat/sib');
      const siblingTip = await git(work, 'rev-parse', 'rennet/feat/sib');
      const reviews = { store, findSession: (root: string, target: Target) => service.findSession(root, target) };

      const preview = await previewPullRequest(branchOpenPrInput(reviews, work, { repoDir: work, branch: 'feat/sib', base: 'main' }), access.value);
      assert.ok(preview.ok, preview.ok ? '' : preview.error.message);
      assert.match(preview.value.body, /Round 1: add a line/, "the draft lists the sibling's commits");
      const opened = await openPullRequest({ ...branchOpenPrInput(reviews, work, { repoDir: work, branch: 'feat/sib', base: 'main' }), expectComposition: preview.value.compositionId }, access.value);
      assert.ok(opened.ok, opened.ok ? '' : opened.error.message);
      assert.equal((await git(work, 'ls-remote', 'origin', 'refs/heads/feat/sib')).split(/\s/)[0], siblingTip, "the request's branch holds the sibling's tip");
      assert.equal(await git(work, 'rev-parse', 'feat/sib'), branchTip, 'the local branch did not move');
      assert.deepEqual(recordedPushDestination(store, session.id), { remote: 'origin', branch: 'feat/sib', workBranch: 'rennet/feat/sib' });
      const landing = await landingFor(store, store.getSession(session.id)!);
      assert.ok(landing.ok, landing.ok ? '' : landing.error.message);
      assert.equal(landing.value.line, 'feat/sib is behind origin/feat/sib by 1 commit.');
    });
  });
});
