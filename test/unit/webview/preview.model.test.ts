import * as assert from 'node:assert/strict';
import { FoldReason, type ReviewPreview } from '../../../protocol/exits';
import { commentWhere, earlierPosts, FOLD_REASON_WORDS, freshnessView, postArea, receiptWords, refusalView, reusedWords, splitMarker, targetWords, verdictView } from '../../../webview/preview/model';
import { Asks, line } from '../exits/fixtures';
import { previewSnapshot, previewWorld, type PreviewWorld } from './previewFixtures';

describe('webview/preview: the view model (reviews composed by the host)', function () {
  this.timeout(60_000);
  let world: PreviewWorld;
  let preview: ReviewPreview;

  before(async () => {
    world = await previewWorld();
    preview = world.preview(world.standardAsks());
  });
  after(() => world.repo.cleanup());

  it('the fixture composes: comments placed, the rest folded with reasons', () => {
    assert.ok(preview.composed.ok);
    const review = preview.composed.value;
    assert.deepEqual(
      review.descriptor.comments.map((c) => commentWhere(c)),
      ['src/a.ts · new side · line 10', 'wide.ts · new side · lines 9–11'],
    );
    assert.deepEqual(
      review.foldNotes.map((n) => n.reason),
      ['pathless', 'board-prose', 'outside-diff'],
    );
  });

  describe('verdict', () => {
    it('derived from the asks, with the rule that made it', () => {
      assert.ok(preview.composed.ok);
      const view = verdictView(preview.composed.value.verdict, 'github');
      assert.equal(view.event, 'Request changes');
      assert.equal(view.how, 'Proposed from your asks: a staged change request makes it Request changes.');
      assert.equal(view.downgrade, null);
      assert.equal(view.override, null);
    });

    it('an override says it is the reviewer’s and what the asks propose', () => {
      const asks = world.standardAsks().override('approve');
      const p = world.preview(asks);
      assert.ok(p.composed.ok);
      const view = verdictView(p.composed.value.verdict, 'github');
      assert.equal(view.event, 'Approve');
      assert.equal(view.how, 'Your choice; your asks propose Request changes.');
      assert.equal(view.override, 'approve');
      const same = world.preview(world.standardAsks().override('request-changes'));
      assert.ok(same.composed.ok);
      assert.equal(verdictView(same.composed.value.verdict, 'github').how, 'Your choice, which is also what your asks propose (Request changes).');
    });

    it('on one’s own request a change request is downgraded to Comment, and the notice is shown', () => {
      const own = world.preview(world.standardAsks(), { ownPullRequest: true });
      assert.ok(own.composed.ok);
      const view = verdictView(own.composed.value.verdict, 'github');
      assert.equal(view.event, 'Comment');
      assert.ok(view.downgrade && view.downgrade.length > 0);
      assert.equal(view.downgrade, own.composed.value.verdict.notice ?? view.downgrade);
    });

    it('with no asks the grounded review proposes Approve', () => {
      const empty = world.preview(new Asks());
      assert.ok(empty.composed.ok);
      assert.equal(verdictView(empty.composed.value.verdict, 'github').how, 'Proposed from your asks: with nothing asked, the review approves.');
    });
  });

  it('the body as the forge shows it: the marker line is hidden, and named', () => {
    assert.ok(preview.composed.ok);
    const body = preview.composed.value.descriptor.body;
    const { shown, markerId } = splitMarker(body);
    assert.equal(markerId, preview.composed.value.markerId);
    assert.ok(!shown.includes('rennet-review'), 'the marker is not in the rendered body');
    assert.ok(body.startsWith(shown), 'only the last line is taken off');
    assert.deepEqual(splitMarker('no marker here'), { shown: 'no marker here', markerId: null });
  });

  it('every fold reason has its own words', () => {
    const words = FoldReason.options.map((r) => FOLD_REASON_WORDS[r]);
    assert.equal(new Set(words).size, FoldReason.options.length);
    assert.ok(words.every((w) => w.length > 20));
    assert.match(FOLD_REASON_WORDS.superseded, /does not/);
  });

  describe('the Post area', () => {
    it('one Post for the composition shown, disabled only while a post is in flight', () => {
      assert.ok(preview.composed.ok);
      const id = preview.composed.value.descriptor.compositionId;
      assert.deepEqual(postArea(previewSnapshot(preview), false), { kind: 'post', compositionId: id, disabled: false, label: 'Post to GitHub' });
      assert.deepEqual(postArea(previewSnapshot(preview), true), { kind: 'post', compositionId: id, disabled: true, label: 'Posting…' });
      assert.deepEqual(postArea(previewSnapshot(preview, { posting: true }), false), { kind: 'post', compositionId: id, disabled: true, label: 'Posting…' });
      // A refusal does not disable Post (the reviewer posts again once they have read it).
      const refused = previewSnapshot(preview, { refusal: { code: 'forge-failed', message: 'timeout', compositionId: id, repreviewed: false } });
      assert.equal((postArea(refused, false) as { disabled: boolean }).disabled, false);
    });

    it('a receipt for the shown composition replaces Post with what was posted', () => {
      const receipt = world.receipt(preview);
      const posted = world.preview(world.standardAsks(), { receipt });
      const area = postArea(previewSnapshot(posted), false);
      assert.equal(area.kind, 'posted');
      assert.equal(area.kind === 'posted' && area.words, 'Posted: Request changes · 2 comments');
      assert.equal(area.kind === 'posted' && area.reused, null);
      assert.equal(reusedWords({ ...receipt, reused: true }), 'already on GitHub: a retry found this review there, so it was not posted twice');
      assert.equal(receiptWords({ ...receipt, event: 'APPROVE', comments: 1 }), 'Posted: Approve · 1 comment');
    });

    it('a composition the host refuses is stated where Post would be', () => {
      const refused: ReviewPreview = { ...preview, composed: { ok: false, error: { reason: 'body-too-long', message: 'the body is 70001 characters; GitHub takes 65536' } } };
      assert.deepEqual(postArea(previewSnapshot(refused), false), { kind: 'cannot-compose', reason: 'body-too-long', message: 'the body is 70001 characters; GitHub takes 65536' });
    });

    it('no preview: being composed, or the host’s reason', () => {
      assert.deepEqual(postArea(previewSnapshot(null), false), { kind: 'unavailable', message: 'Composing the review…' });
      assert.deepEqual(postArea(previewSnapshot(null, { error: 'the request was never read from its forge' }), false), { kind: 'unavailable', message: 'the request was never read from its forge' });
    });
  });

  describe('a refused post', () => {
    const refusal = (code: 'stale-composition' | 'head-moved' | 'forge-unauthorized' | 'forge-failed' | 'invalid-request', repreviewed = false) => ({
      code,
      message: 'the host’s words',
      compositionId: 'c'.repeat(64),
      repreviewed,
    });

    it('stale: composed again automatically, and it says so', () => {
      const view = refusalView(refusal('stale-composition', true), 'github');
      assert.equal(view.title, 'The review changed since it was shown');
      assert.match(view.note ?? '', /composed again: what is shown now is what Post sends/);
      assert.equal(view.repair, null);
    });

    it('head moved: Capture New Head', () => {
      assert.deepEqual(refusalView(refusal('head-moved'), 'github').repair, { action: 'capture-new-head', label: 'Capture New Head' });
    });

    it('unauthorized: how to sign in, per forge', () => {
      const github = refusalView(refusal('forge-unauthorized'), 'github');
      assert.deepEqual(github.repair, { action: 'sign-in-github', label: 'Sign in to GitHub' });
      assert.match(github.note ?? '', /Accounts menu/);
      const gitlab = refusalView(refusal('forge-unauthorized'), 'gitlab');
      assert.deepEqual(gitlab.repair, { action: 'set-gitlab-token', label: 'Set GitLab Token' });
      assert.match(gitlab.note ?? '', /Set GitLab Token/);
    });

    it('a forge failure says posting again is safe; an unregistered forge opens the setting', () => {
      assert.match(refusalView(refusal('forge-failed'), 'gitlab').note ?? '', /never posted twice/);
      assert.equal(refusalView({ ...refusal('invalid-request'), message: 'x is not a registered forge' }, 'github').repair?.action, 'forge-settings');
      assert.equal(refusalView(refusal('invalid-request'), 'github').repair, null);
    });
  });

  it('the request’s head: checking, fresh, moved, closed, unreadable', () => {
    const head = preview.target.headSha;
    assert.equal(freshnessView({ freshness: null, freshnessError: null }).kind, 'checking');
    assert.equal(freshnessView({ freshness: { capturedHeadSha: head, liveHeadSha: head, moved: false, state: 'open' }, freshnessError: null }).kind, 'fresh');
    const moved = freshnessView({ freshness: { capturedHeadSha: head, liveHeadSha: 'f'.repeat(40), moved: true, state: 'open' }, freshnessError: null });
    assert.equal(moved.kind, 'moved');
    assert.match(moved.text, /moved to fffffff since this review captured/);
    // One's own request after a round, not pushed: behind, with the push as the way on (no Capture New Head).
    const unpushed = freshnessView({ freshness: { capturedHeadSha: head, liveHeadSha: 'f'.repeat(40), moved: true, unpushed: 1, state: 'open' }, freshnessError: null });
    assert.equal(unpushed.kind, 'unpushed');
    assert.match(unpushed.text, new RegExp(`head fffffff is 1 commit behind ${head.slice(0, 7)}, the head this review read: push your branch`));
    assert.equal(freshnessView({ freshness: { capturedHeadSha: head, liveHeadSha: head, moved: false, state: 'closed' }, freshnessError: null }).kind, 'closed');
    assert.equal(freshnessView({ freshness: null, freshnessError: 'no GitHub credentials' }).kind, 'unknown');
  });

  it('the target and earlier posts', () => {
    assert.deepEqual(targetWords(preview), { title: 'Pull Request #42 · acme/widgets', entry: 'a teammate’s request' });
    const now = world.receipt(preview);
    const before = { ...now, markerId: 'f'.repeat(24), postedAt: '2026-01-01T00:00:00.000Z' };
    const posted = world.preview(world.standardAsks(), { receipt: now, history: [now, before] });
    assert.deepEqual(earlierPosts(posted), [before]);
  });

  it('a different set of asks is a different composition (the Post button names what is shown)', () => {
    const more = world.standardAsks();
    more.ask(line(world.patchset, 'src/a.ts', 'head', 11), 'And this', 'comment');
    const other = world.preview(more);
    assert.ok(other.composed.ok && preview.composed.ok);
    assert.notEqual(other.composed.value.descriptor.compositionId, preview.composed.value.descriptor.compositionId);
  });
});
