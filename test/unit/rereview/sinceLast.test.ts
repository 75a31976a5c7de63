import assert from 'node:assert/strict';
import { capturePatchset } from '../../../host/capture/capture';
import { openRepo } from '../../../host/capture/repo';
import type { EarlierReview } from '../../../host/forge/types';
import { sinceLastReview, type SinceLastReview } from '../../../host/rereview/sinceLast';
import { Patchset as PatchsetSchema, type Patchset } from '../../../protocol/patchset';
import { TestRepo } from '../../fixtures/gitRepo';

/**
 * The re-review's decision on real histories: no earlier review (the whole change), a
 * fast-forward fix (the delta as a patchset whose base is the reviewed commit), equal heads
 * (nothing to read, said), a force push and a rebase (the whole change, with the reason), and a
 * merge of the base with a conflict (only the resolution is citable, and only it is what the lenses read).
 */
describe('host/rereview/sinceLast: what a re-review reads, on real histories', function () {
  this.timeout(60_000);
  const repos: TestRepo[] = [];
  after(() => {
    for (const r of repos) r.cleanup();
  });

  const TEN = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

  /** main: app.txt 1..10 and notes.txt; feature changes line 2 (the reviewed commit). */
  function reviewed() {
    const r = new TestRepo();
    repos.push(r);
    r.write('app.txt', TEN).write('notes.txt', 'a note\n');
    r.commit('base');
    r.branch('feature');
    r.write('app.txt', r.read('app.txt').replace('line 2\n', 'line two\n'));
    const review = r.commit('feature: two');
    return { r, review };
  }

  async function full(r: TestRepo): Promise<Patchset> {
    const handle = await openRepo(r.dir);
    assert.ok(handle.ok);
    const captured = await capturePatchset(handle.value, { kind: 'branch', base: 'main', head: 'feature' });
    assert.ok(captured.ok, captured.ok ? '' : captured.error.message);
    return captured.value;
  }

  /** What the forge adapter reads back: the reviewer's review at `commitId`, one inline comment and a body list. */
  function earlier(commitId: string | null): EarlierReview {
    return {
      reviewId: 7,
      url: 'https://github.example/acme/app/pull/1#pullrequestreview-7',
      commitId,
      state: 'CHANGES_REQUESTED',
      body: 'Two things:\n\n- Spell out line 2.\n- Add a note.\n',
      markerId: null,
      submittedAt: '2026-01-01T00:00:00Z',
      comments: [{ path: 'app.txt', line: 2, side: 'RIGHT', body: 'Say "two" the long way.' }],
    };
  }

  async function decide(r: TestRepo, review: EarlierReview | null): Promise<{ since: SinceLastReview; ps: Patchset }> {
    const ps = await full(r);
    const result = await sinceLastReview({ root: r.dir, full: ps, earlier: review, ownRequest: false });
    assert.ok(result.ok, result.ok ? '' : result.error.message);
    return { since: result.value, ps };
  }

  const changed = (p: Patchset) => p.files.flatMap((f) => f.hunks.flatMap((h) => h.lines.filter((l) => l.kind !== 'context').map((l) => `${f.path} ${l.kind === 'add' ? '+' : '-'}${l.text}`)));

  it('no earlier review: delta none, the whole change is what the lenses read, no items, no manifest', async () => {
    const { r } = reviewed();
    const { since, ps } = await decide(r, null);
    assert.deepEqual(since.delta, { kind: 'none', from: null, to: ps.head, reason: 'no earlier review of yours on this request' });
    assert.equal(since.ancestry, null);
    assert.equal(since.earlier, null);
    assert.equal(since.lensPatchset, ps, 'the pull request’s own capture');
    assert.equal(since.deltaPatchset, null);
    assert.deepEqual([since.items, since.manifest], [[], []]);
    assert.equal(since.statement, 'You have no earlier review of this request, so the whole change is reviewed.');
  });

  it('a fast-forward fix: ancestor; the lenses read the delta as a patchset based on the reviewed commit; its units are the manifest', async () => {
    const { r, review } = reviewed();
    r.write('app.txt', r.read('app.txt').replace('line 5\n', 'line five\n')).write('notes.txt', 'a note\nanother note\n');
    const head = r.commit('fix: five, a note');
    const { since, ps } = await decide(r, earlier(review));
    assert.equal(ps.head, head);
    assert.deepEqual(since.delta, { kind: 'ancestor', from: review, to: head, reason: null });
    assert.deepEqual(since.ancestry, { kind: 'ancestor', from: review, to: head, equal: false });
    assert.deepEqual(since.earlier, { reviewId: 7, url: 'https://github.example/acme/app/pull/1#pullrequestreview-7', state: 'CHANGES_REQUESTED', commitId: review, markerId: null });
    assert.deepEqual(
      since.items.map((i) => [i.id, i.path, i.line, i.side, i.severity, i.text]),
      [
        ['R1', 'app.txt', 2, 'head', 'blocker', 'Say "two" the long way.'],
        ['R2', null, null, null, 'blocker', 'Spell out line 2.'],
        ['R3', null, null, null, 'blocker', 'Add a note.'],
      ],
    );

    const delta = since.deltaPatchset;
    assert.ok(delta);
    PatchsetSchema.parse(delta);
    assert.equal(since.lensPatchset, delta, 'the lenses read the delta');
    assert.deepEqual([delta.base, delta.head, delta.baseTip, delta.baseRef, delta.headRef], [review, head, review, review, ps.headRef]);
    assert.notEqual(delta.id, ps.id);
    assert.deepEqual(changed(delta), ['app.txt -line 5', 'app.txt +line five', 'notes.txt +another note'], 'only the fix commit: not the reviewed change on line 2');
    assert.ok(changed(ps).includes('app.txt +line two'), 'the whole change still has line 2');

    // The manifest: one text hunk per changed file, each anchored on its first added line at the head.
    assert.deepEqual(
      since.manifest.map((u) => [u.kind, u.path, u.kind === 'text-hunk' ? [u.anchor.side, u.anchor.line] : null]),
      [
        ['text-hunk', 'app.txt', ['head', 5]],
        ['text-hunk', 'notes.txt', ['head', 2]],
      ],
    );
    assert.ok(since.manifest.every((u) => /^ev-[0-9a-f]+$/.test(u.id)));
    assert.equal(r.git('show', `${head}:app.txt`).split('\n')[4], 'line five', 'the anchor is the fixed line at the head');
    assert.equal(since.statement, `The delta since your review at ${review.slice(0, 7)} is reviewed.`);
  });

  it('equal heads: ancestor, nothing to read, said in words; the items are still there to report open', async () => {
    const { r, review } = reviewed();
    const { since } = await decide(r, earlier(review));
    assert.deepEqual(since.delta, { kind: 'ancestor', from: review, to: review, reason: `no commits since ${review.slice(0, 7)} - no code diff` });
    assert.deepEqual(since.ancestry, { kind: 'ancestor', from: review, to: review, equal: true });
    assert.equal(since.lensPatchset, null);
    assert.equal(since.deltaPatchset, null);
    assert.deepEqual(since.manifest, []);
    assert.equal(since.items.length, 3);
    assert.equal(since.statement, `No commits since ${review.slice(0, 7)} - no code diff.`);
  });

  it('commits since that change no file (an empty commit, a change and its revert): ancestor, nothing to read, said — not a refusal', async () => {
    const { r, review } = reviewed();
    r.commit('retrigger CI');
    r.write('notes.txt', 'a note\nbriefly\n');
    r.commit('add a line');
    r.write('notes.txt', 'a note\n');
    const head = r.commit('Revert "add a line"');
    const { since } = await decide(r, earlier(review));
    assert.deepEqual(since.ancestry, { kind: 'ancestor', from: review, to: head, equal: false });
    assert.deepEqual(since.delta, { kind: 'ancestor', from: review, to: head, reason: `no code changed since ${review.slice(0, 7)}: the commits since change no file` });
    assert.deepEqual([since.lensPatchset, since.deltaPatchset, since.manifest], [null, null, []]);
    assert.equal(since.items.length, 3);
    assert.equal(since.statement, `No code changed since ${review.slice(0, 7)}: the commits since change no file.`);
  });

  it('a force push and a rebase: not an ancestor, the whole change is read, with the reason', async () => {
    const { r, review } = reviewed();
    r.write('app.txt', r.read('app.txt').replace('line two\n', 'line TWO\n'));
    r.git('add', '-A');
    r.git('commit', '-q', '--amend', '-m', 'feature: two (amended)');
    const amended = r.head();
    const { since, ps } = await decide(r, earlier(review));
    assert.deepEqual(since.delta, { kind: 'not-ancestor', from: review, to: amended, reason: 'force push or rebase' });
    assert.equal(since.lensPatchset, ps, 'the whole change');
    assert.equal(since.deltaPatchset, null);
    assert.deepEqual(since.manifest, []);
    assert.equal(since.items.length, 3, 'the items stay, to be reported open');
    assert.equal(since.statement, `The earlier review's commit ${review.slice(0, 7)} is not an ancestor of the head (force push or rebase), so the whole change is reviewed.`);

    const { r: r2, review: review2 } = reviewed();
    r2.checkout('main');
    r2.write('other.txt', 'o\n');
    r2.commit('main moves');
    r2.checkout('feature');
    r2.git('rebase', '-q', 'main');
    const rebased = await decide(r2, earlier(review2));
    assert.deepEqual(rebased.since.delta, { kind: 'not-ancestor', from: review2, to: r2.head(), reason: 'force push or rebase' });
    assert.equal(rebased.since.lensPatchset, rebased.ps);

    // A review commit git does not have: git's own words are the reason.
    const missing = await decide(r2, earlier('f'.repeat(40)));
    assert.equal(missing.since.delta.kind, 'not-ancestor');
    assert.ok(missing.since.delta.reason && missing.since.delta.reason !== 'force push or rebase', JSON.stringify(missing.since.delta));
    assert.equal(missing.since.lensPatchset, missing.ps);
    // The forge did not say which commit was reviewed.
    const unknown = await decide(r2, earlier(null));
    assert.deepEqual(unknown.since.delta, { kind: 'not-ancestor', from: null, to: r2.head(), reason: 'review commit is missing' });
    assert.match(unknown.since.statement, /^The earlier review's commit unknown is not an ancestor/);
  });

  it('the base merged in with a conflict: the manifest has only the resolution; the statement says so', async () => {
    const { r, review } = reviewed();
    r.checkout('main');
    r.write('app.txt', r.read('app.txt').replace('line 2\n', 'line 2 (main)\n').replace('line 7\n', 'line seven (main)\n'));
    r.commit('main: two lines');
    r.checkout('feature');
    assert.throws(() => r.git('merge', '-q', 'main'), 'the merge conflicts on line 2');
    r.write('app.txt', r.read('app.txt').replace(/<<<<<<< [^\n]*\nline two\n=======\nline 2 \(main\)\n>>>>>>> [^\n]*\n/, 'line two (resolved)\n'));
    const head = r.commit('merge main');
    const { since } = await decide(r, earlier(review));
    assert.deepEqual(since.delta, { kind: 'ancestor', from: review, to: head, reason: null });
    assert.ok(since.deltaPatchset && since.lensPatchset === since.deltaPatchset);
    // What the lenses read is the author's work only: the resolution replacing the reviewed line, not the base's line 7.
    assert.deepEqual([since.deltaPatchset.head, since.deltaPatchset.baseRef], [head, review]);
    assert.equal(r.git('rev-parse', `${since.deltaPatchset.base}^`), review, 'its base is the author base, written on the reviewed commit');
    assert.deepEqual(changed(since.deltaPatchset), ['app.txt -line two', 'app.txt +line two (resolved)']);
    const hunks = since.manifest.filter((u) => u.kind === 'text-hunk');
    assert.equal(hunks.length, 1, JSON.stringify(since.manifest));
    const unit = hunks[0]!;
    assert.ok(unit.kind === 'text-hunk' && unit.path === 'app.txt');
    assert.ok(unit.body.split('\n').includes('+line two (resolved)'), unit.body);
    assert.ok(!since.manifest.some((u) => JSON.stringify(u).includes('seven')), 'the base’s clean change on line 7 is not citable as the author’s work');
    assert.equal(since.statement, `The delta since your review at ${review.slice(0, 7)} is reviewed (inside 1 merge, only what was resolved there counts).`);
  });
});
