import assert from 'node:assert/strict';
import { capturePatchset } from '../../../host/capture/capture';
import { openRepo } from '../../../host/capture/repo';
import type { EarlierReview } from '../../../host/forge/types';
import { verifyClosures } from '../../../host/rereview/closures';
import { evidenceOnDelta, gitLineMap, mapLine, parseUnifiedZero } from '../../../host/rereview/evidenceLines';
import { sinceLastReview } from '../../../host/rereview/sinceLast';
import { TestRepo } from '../../fixtures/gitRepo';

/**
 * Evidence lines counted as the delta patchset counts them: a unit of a segment that ends before
 * the head (a base merge came after the fix) numbers its lines at the segment's end; they are
 * carried onto the head through git's own diff, and a line changed again later has no place.
 */
describe('host/rereview/evidenceLines: evidence lines land on the head', function () {
  this.timeout(60_000);
  const repos: TestRepo[] = [];
  after(() => {
    for (const r of repos) r.cleanup();
  });

  it('mapLine: lines before a hunk stay, lines after move by its size, lines it replaces have no place', () => {
    const hunks = parseUnifiedZero('@@ -3,0 +4,2 @@\n+a\n+b\n@@ -10,2 +12 @@\n-x\n-y\n+z\n');
    assert.deepEqual(hunks, [
      { a: 3, b: 0, d: 2 },
      { a: 10, b: 2, d: 1 },
    ]);
    assert.equal(mapLine(hunks, 3), 3, 'an insertion after line 3 does not move line 3');
    assert.equal(mapLine(hunks, 4), 6);
    assert.equal(mapLine(hunks, 10), null);
    assert.equal(mapLine(hunks, 11), null);
    assert.equal(mapLine(hunks, 12), 13);
    assert.equal(mapLine([], 7), 7);
  });

  it('a fix, then a merge of the base that adds lines above it: the resolved item’s evidence names the fix line at the head', async () => {
    const r = new TestRepo();
    repos.push(r);
    const lines = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`);
    r.write('app.txt', `${lines.join('\n')}\n`);
    r.commit('base');
    r.branch('feature');
    r.write('app.txt', r.read('app.txt').replace('line 12\n', 'line twelve\n'));
    const review = r.commit('feature');
    // The fix, then the base moves (three lines at the top) and is merged in cleanly.
    r.write('app.txt', r.read('app.txt').replace('line 15\n', 'line 15\nguard(15)\n'));
    r.commit('fix: guard 15');
    r.git('checkout', '-q', 'main');
    r.write('app.txt', `top 1\ntop 2\ntop 3\n${r.read('app.txt')}`);
    r.commit('main: a header');
    r.git('checkout', '-q', 'feature');
    r.git('merge', '-q', '--no-edit', 'main');
    const head = r.git('rev-parse', 'HEAD');

    const handle = await openRepo(r.dir);
    assert.ok(handle.ok);
    const full = await capturePatchset(handle.value, { kind: 'branch', base: 'main', head: 'feature' });
    assert.ok(full.ok);
    const earlier: EarlierReview = {
      reviewId: 1,
      url: 'u',
      commitId: review,
      state: 'CHANGES_REQUESTED',
      body: '',
      markerId: null,
      submittedAt: null,
      comments: [{ path: 'app.txt', line: 15, side: 'RIGHT', body: 'Guard 15.' }],
    };
    const since = await sinceLastReview({ root: r.dir, full: full.value, earlier, ownRequest: false });
    assert.ok(since.ok, since.ok ? '' : since.error.message);
    const unit = since.value.manifest.find((u) => u.kind === 'text-hunk' && u.path === 'app.txt');
    assert.ok(unit && since.value.unitFrames);
    const verified = verifyClosures(since.value.items, since.value.manifest, [{ itemId: 'R1', closure: 'resolved', reason: 'Guarded.', evidenceIds: [unit.id] }]);
    assert.ok(verified.ok);
    // As the unit counts it (at the fix commit), the guard is line 16; at the head, after three lines above, 19.
    assert.equal(verified.value[0]?.evidence[0]?.line, 16);
    const mapped = await evidenceOnDelta(verified.value, since.value.unitFrames, { from: review, to: head }, gitLineMap(r.dir));
    const at = mapped[0]?.evidence[0];
    assert.deepEqual([at?.path, at?.side, at?.line], ['app.txt', 'head', 19]);
    assert.equal(r.read('app.txt').split('\n')[(at?.line ?? 0) - 1], 'guard(15)', 'the line git has there is the fix');
  });

  it('a line a later commit changed again has no place: the evidence entry is left out, the closure stands', async () => {
    const map = async () => null;
    const closures = [
      {
        item: { id: 'R1', path: null, line: null, side: null, text: 't', severity: 'nit' as const },
        closure: 'resolved' as const,
        reason: 'r',
        evidence: [{ evidenceId: 'ev-1', kind: 'text-hunk' as const, path: 'a', side: 'head' as const, line: 3 }],
      },
    ];
    const out = await evidenceOnDelta(closures, new Map([['ev-1', { base: 'x', head: 'y' }]]), { from: 'f', to: 'z' }, map);
    assert.deepEqual([out[0]?.closure, out[0]?.evidence], ['resolved', []]);
    // A remerge unit's deleted line belongs to no commit: left out as well.
    const base = [{ ...closures[0]!, evidence: [{ ...closures[0]!.evidence[0]!, side: 'base' as const }] }];
    const remerge = await evidenceOnDelta(base, new Map([['ev-1', { base: null, head: 'm' }]]), { from: 'f', to: 'z' }, async (_a, _b, _p, l) => l);
    assert.deepEqual(remerge[0]?.evidence, []);
  });
});
