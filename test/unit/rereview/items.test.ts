import assert from 'node:assert/strict';
import { bodyItems, priorItems, priorReviewLine, PRIOR_ITEM_TEXT_MAX_CHARS } from '../../../host/rereview/items';
import { composeReview } from '../../../host/exits/compose';
import { reviewMarker } from '../../../protocol/exits';
import { Asks, captureFixture, input, line, target } from '../exits/fixtures';

/** The earlier review's items (inline comments, then body items) and the re-review's first line. */
describe('host/rereview/items: prior items and the "Prior review" line', () => {
  const A = 'a'.repeat(40);

  it('inline comments then body list items, numbered R1…; blockers when changes were requested or the request was one’s own', () => {
    const review = {
      state: 'CHANGES_REQUESTED' as const,
      body: `**Verdict: changes requested**\n\nNotes:\n\n- Split the retry loop.\n  It does two things.\n- Name the constant.\n\nThanks.\n${reviewMarker('0123456789abcdef01234567')}`,
      comments: [
        { path: 'src/a.ts', line: 12, side: 'RIGHT' as const, body: 'Off by one here.' },
        { path: 'src/b.ts', line: 3, side: 'LEFT' as const, body: '  ' },
        { path: 'src/b.ts', line: 4, side: 'LEFT' as const, body: 'This removal breaks callers.' },
      ],
      ownRequest: false,
    };
    assert.deepEqual(priorItems(review), [
      { id: 'R1', path: 'src/a.ts', line: 12, side: 'head', text: 'Off by one here.', severity: 'blocker' },
      { id: 'R2', path: 'src/b.ts', line: 4, side: 'base', text: 'This removal breaks callers.', severity: 'blocker' },
      { id: 'R3', path: null, line: null, side: null, text: 'Split the retry loop.\nIt does two things.', severity: 'blocker' },
      { id: 'R4', path: null, line: null, side: null, text: 'Name the constant.', severity: 'blocker' },
    ]);
    assert.deepEqual(
      priorItems({ ...review, state: 'COMMENTED' }).map((i) => i.severity),
      ['nit', 'nit', 'nit', 'nit'],
    );
    assert.deepEqual(
      priorItems({ ...review, state: 'COMMENTED', ownRequest: true }).map((i) => i.severity),
      ['blocker', 'blocker', 'blocker', 'blocker'],
    );
  });

  it('a body without a list is one item, the marker never is; an empty body none; long text is cut, said', () => {
    assert.deepEqual(bodyItems(`Please rename the helper.\n${reviewMarker('0123456789abcdef01234567')}\n`), ['Please rename the helper.']);
    assert.deepEqual(bodyItems(reviewMarker('0123456789abcdef01234567')), []);
    assert.deepEqual(bodyItems('1. first\n2) second'), ['first', 'second']);
    const long = priorItems({ state: 'COMMENTED', body: 'x'.repeat(PRIOR_ITEM_TEXT_MAX_CHARS + 10), comments: [], ownRequest: false });
    assert.ok(long[0]!.text.endsWith('[cut: the comment is longer]') && long[0]!.text.length < PRIOR_ITEM_TEXT_MAX_CHARS + 40);
  });

  it('a body Rennet composed: its own lines (prior line, verdict label, opener) are no items; each note is one, an approval’s none', async function () {
    this.timeout(60_000);
    const { repo, patchset: ps } = await captureFixture();
    try {
      const a = new Asks();
      a.ask(line(ps, 'src/a.ts', 'head', 10), 'Name this ten.', 'request-change');
      a.ask({ kind: 'none' }, 'Split the README reflow out.\n\nIt is unrelated.', 'request-change');
      a.ask(line(ps, 'src/a.ts', 'head', 20), 'Why is this line here?', 'question');
      a.ask({ kind: 'none' }, 'The retry path is covered.', 'approval');
      for (const over of [{}, { target: target(ps, { provider: 'gitlab' as const }), prior: { line: 'Prior review: 1 of 2 resolved', headTwins: [] } }]) {
        const composed = composeReview(input(ps, a.projection(), over));
        assert.ok(composed.ok);
        const d = composed.value.descriptor;
        assert.match(d.body, /^(Prior review: 1 of 2 resolved\n\n\*\*Verdict: changes requested\*\*\n\n)?Reviewed `[0-9a-f]{12}`: 6 files, /);
        const items = priorItems({ state: 'CHANGES_REQUESTED', body: d.body, comments: d.comments.map((c) => ({ path: c.path, line: c.line, side: c.side, body: c.body })), ownRequest: false });
        assert.deepEqual(
          items.map((i) => [i.id, i.path, i.line, i.text]),
          [
            ['R1', 'src/a.ts', 10, 'Name this ten.'],
            ['R2', null, null, '**Change requested**\n\nSplit the README reflow out.\n\nIt is unrelated.'],
            ['R3', null, null, '**Question** · `src/a.ts` line 20 (head) — outside the lines the diff shows\n\nWhy is this line here?'],
          ],
          d.body,
        );
      }
      // Nothing but Rennet's own lines: no items.
      const quiet = composeReview(input(ps, new Asks().projection()));
      assert.ok(quiet.ok);
      assert.deepEqual(bodyItems(quiet.value.descriptor.body), []);
      // Written text before the notes is still read, list by list.
      const opened = composeReview(input(ps, a.projection(), { opener: 'Two asks:\n\n- Rename the helper.\n- Drop the flag.' }));
      assert.ok(opened.ok);
      assert.deepEqual(bodyItems(opened.value.descriptor.body).slice(0, 2), ['Rename the helper.', 'Drop the flag.']);
    } finally {
      repo.cleanup();
    }
  });

  it('the first line: counts on an ancestor, no commits since when equal, no items, and a full review with the reason', () => {
    assert.equal(priorReviewLine({ kind: 'ancestor', from: A, to: 'b'.repeat(40), equal: false }, 2, 3), 'Prior review: 2 of 3 resolved');
    assert.equal(priorReviewLine({ kind: 'ancestor', from: A, to: A, equal: true }, 0, 3), 'Prior review: 0 of 3 resolved - no commits since aaaaaaa');
    assert.equal(priorReviewLine({ kind: 'ancestor', from: A, to: A, equal: true }, 0, 0), 'Prior review: no items posted at aaaaaaa; the delta since it was reviewed');
    assert.equal(
      priorReviewLine({ kind: 'not-ancestor', from: A, to: 'c'.repeat(40), reason: 'force push or rebase' }, 0, 2),
      'Prior review: baseline aaaaaaa is not an ancestor of the head (force push or rebase), so the whole diff was reviewed',
    );
    assert.equal(
      priorReviewLine({ kind: 'not-ancestor', from: null, to: 'c'.repeat(40), reason: 'review commit is missing' }, 0, 0),
      'Prior review: baseline unknown is not an ancestor of the head (review commit is missing), so the whole diff was reviewed',
    );
  });
});
