import assert from 'node:assert/strict';
import { checkAncestry, fixDelta, type DeltaSegment } from '../../../host/rereview/delta';
import { TestRepo } from '../../fixtures/gitRepo';

/**
 * The fix delta since an earlier review, on real histories: a fast-forward fix, equal heads, a
 * force push, a rebase onto a moved base, a merge of the base without conflicts (nothing inside it
 * counts) and with one (only the resolution counts), and a review commit git does not have.
 */
describe('host/rereview/delta: ancestry and the fix delta', () => {
  const repos: TestRepo[] = [];
  after(() => {
    for (const r of repos) r.cleanup();
  });

  /** main: app.txt 1..10; feature changes line 2 (the reviewed head). */
  function reviewed() {
    const r = new TestRepo();
    repos.push(r);
    r.write('app.txt', Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n') + '\n');
    r.commit('base');
    r.branch('feature');
    r.write('app.txt', r.read('app.txt').replace('line 2\n', 'line two\n'));
    r.commit('feature: two');
    return { r, review: r.git('rev-parse', 'HEAD') };
  }
  const changedLines = (segments: readonly DeltaSegment[]) =>
    segments.map((s) => ({
      kind: s.kind,
      lines: s.files.flatMap((f) => f.hunks.flatMap((h) => h.lines.filter((l) => l.kind !== 'context').map((l) => `${f.path} ${l.kind === 'add' ? '+' : '-'}${l.text}`))),
    }));

  it('a fast-forward fix: ancestor; the delta is exactly the fix commit', async () => {
    const { r, review } = reviewed();
    r.write('app.txt', r.read('app.txt').replace('line 5\n', 'line five\n'));
    r.commit('fix: five');
    const head = r.git('rev-parse', 'HEAD');
    const ancestry = await checkAncestry(r.dir, review, head);
    assert.deepEqual(ancestry, { kind: 'ancestor', from: review, to: head, equal: false });
    const delta = await fixDelta(r.dir, ancestry);
    assert.ok(delta.ok && delta.value.kind === 'delta');
    assert.deepEqual(changedLines(delta.value.segments), [{ kind: 'diff', lines: ['app.txt -line 5', 'app.txt +line five'] }]);
  });

  it('equal heads: no commits since, no diff, said in words', async () => {
    const { r, review } = reviewed();
    const ancestry = await checkAncestry(r.dir, review, review);
    assert.deepEqual(ancestry, { kind: 'ancestor', from: review, to: review, equal: true });
    const delta = await fixDelta(r.dir, ancestry);
    assert.ok(delta.ok && delta.value.kind === 'none');
    assert.equal(delta.value.statement, `no commits since ${review.slice(0, 7)} - no code diff`);
  });

  it('a force push (the reviewed commit rewritten) and a rebase onto a moved base: not an ancestor; a full review, stated', async () => {
    const { r, review } = reviewed();
    r.git('commit', '-q', '--amend', '-m', 'feature: two (amended)');
    const amended = r.git('rev-parse', 'HEAD');
    const forced = await checkAncestry(r.dir, review, amended);
    assert.deepEqual(forced, { kind: 'not-ancestor', from: review, to: amended, reason: 'force push or rebase' });
    const full = await fixDelta(r.dir, forced);
    assert.ok(full.ok && full.value.kind === 'full');
    assert.match(full.value.statement, new RegExp(`^the earlier review's commit ${review.slice(0, 7)} is not an ancestor of the head \\(force push or rebase\\)`));

    const { r: r2, review: review2 } = reviewed();
    r2.checkout('main');
    r2.write('other.txt', 'o\n');
    r2.commit('main moves');
    r2.checkout('feature');
    r2.git('rebase', '-q', 'main');
    const rebased = await checkAncestry(r2.dir, review2, r2.git('rev-parse', 'HEAD'));
    assert.equal(rebased.kind, 'not-ancestor');
  });

  it('a review commit git does not have, or none: not an ancestor with the reason', async () => {
    const { r } = reviewed();
    const head = r.git('rev-parse', 'HEAD');
    const unknown = await checkAncestry(r.dir, 'f'.repeat(40), head);
    assert.equal(unknown.kind, 'not-ancestor');
    assert.ok(unknown.kind === 'not-ancestor' && unknown.reason !== 'force push or rebase' && unknown.reason.length > 0, JSON.stringify(unknown));
    assert.deepEqual(await checkAncestry(r.dir, null, head), { kind: 'not-ancestor', from: null, to: head, reason: 'review commit is missing' });
  });

  it('the base merged in cleanly after the review: the author’s segments count, the clean merge adds nothing', async () => {
    const { r, review } = reviewed();
    r.write('app.txt', r.read('app.txt').replace('line 9\n', 'line nine\n'));
    r.commit('fix: nine');
    r.checkout('main');
    r.write('base-only.txt', 'from main\n');
    r.commit('main: a new file');
    r.checkout('feature');
    r.git('merge', '-q', '--no-edit', 'main');
    r.write('app.txt', r.read('app.txt').replace('line 10\n', 'line ten\n'));
    r.commit('fix: ten');
    const head = r.git('rev-parse', 'HEAD');
    const delta = await fixDelta(r.dir, await checkAncestry(r.dir, review, head));
    assert.ok(delta.ok && delta.value.kind === 'delta');
    assert.deepEqual(changedLines(delta.value.segments), [
      { kind: 'diff', lines: ['app.txt -line 9', 'app.txt +line nine'] },
      { kind: 'remerge', lines: [] },
      { kind: 'diff', lines: ['app.txt -line 10', 'app.txt +line ten'] },
    ]);
    assert.ok(!JSON.stringify(delta.value.segments).includes('from main'), 'the base’s own change is not author work');
  });

  it('a merge with a conflict: only its resolution counts as author work', async () => {
    const { r, review } = reviewed();
    r.checkout('main');
    r.write('app.txt', r.read('app.txt').replace('line 2\n', 'line 2 (main)\n').replace('line 7\n', 'line seven (main)\n'));
    r.commit('main: two lines');
    r.checkout('feature');
    assert.throws(() => r.git('merge', '-q', 'main'), 'the merge conflicts on line 2');
    r.write('app.txt', r.read('app.txt').replace(/<<<<<<< [^\n]*\nline two\n=======\nline 2 \(main\)\n>>>>>>> [^\n]*\n/, 'line two (resolved)\n'));
    r.commit('merge main');
    const head = r.git('rev-parse', 'HEAD');
    const delta = await fixDelta(r.dir, await checkAncestry(r.dir, review, head));
    assert.ok(delta.ok && delta.value.kind === 'delta');
    const lines = changedLines(delta.value.segments);
    assert.deepEqual(
      lines.map((s) => s.kind),
      ['remerge'],
      'the merge follows the review directly: no author segment before it',
    );
    const inside = lines[0]!.lines;
    assert.ok(inside.includes('app.txt +line two (resolved)'), JSON.stringify(inside));
    assert.ok(
      inside.some((l) => l.startsWith('app.txt -<<<<<<<')),
      'the re-merge’s conflict markers are what the resolution replaced',
    );
    assert.ok(!inside.some((l) => l.includes('seven')), `the base’s clean change on line 7 is not author work: ${JSON.stringify(inside)}`);
  });
});
