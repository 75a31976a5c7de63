import assert from 'node:assert/strict';
import { checkAncestry, fixDelta } from '../../../host/rereview/delta';
import { deltaManifest, verifyClosures } from '../../../host/rereview/closures';
import { priorItems } from '../../../host/rereview/items';
import { TestRepo } from '../../fixtures/gitRepo';

/**
 * Prior-item closures against a real fix delta: a resolved closure stands only on a changed line of
 * the delta (the host derives where); a lying one — an id the delta does not have, only a rename —
 * is refused; an item nobody closed stays open, said.
 */
describe('host/rereview/closures: verified like a round report', () => {
  let repo: TestRepo;
  after(() => repo?.cleanup());

  it('resolved on the delta’s changed line; open with why; unclosed stays open; lies refused', async () => {
    repo = new TestRepo();
    repo.write('app.txt', 'one\ntwo\nthree\n').write('old.txt', 'keep\n');
    repo.commit('base');
    repo.branch('feature');
    repo.write('app.txt', 'one\n2\nthree\n');
    const review = repo.commit('feature');
    repo.write('app.txt', 'one\ntwo\nthree\n');
    repo.git('mv', 'old.txt', 'new.txt');
    const head = repo.commit('fix: spell it out, rename old');
    const delta = await fixDelta(repo.dir, await checkAncestry(repo.dir, review, head));
    assert.ok(delta.ok && delta.value.kind === 'delta');
    const manifest = deltaManifest(delta.value.segments);
    assert.ok(manifest.ok);
    const hunk = manifest.value.find((u) => u.kind === 'text-hunk' && u.path === 'app.txt');
    const rename = manifest.value.find((u) => u.kind === 'rename');
    assert.ok(hunk && rename, JSON.stringify(manifest.value.map((u) => [u.kind, u.path])));

    const items = priorItems({
      state: 'CHANGES_REQUESTED',
      body: '- Rename old.txt.\n- Add a test.',
      comments: [{ path: 'app.txt', line: 2, side: 'RIGHT', body: 'Spell two out.' }],
      ownRequest: false,
    });
    assert.deepEqual(
      items.map((i) => i.id),
      ['R1', 'R2', 'R3'],
    );
    const closed = verifyClosures(items, manifest.value, [
      { itemId: 'R1', closure: 'resolved', reason: 'Line 2 reads two again.', evidenceIds: [hunk.id] },
      { itemId: 'R3', closure: 'open', reason: 'No test was added.', evidenceIds: [] },
    ]);
    assert.ok(closed.ok, JSON.stringify(closed));
    assert.deepEqual(
      closed.value.map((c) => [c.item.id, c.closure, c.reason, c.evidence.map((e) => [e.path, e.side, e.line])]),
      [
        ['R1', 'resolved', 'Line 2 reads two again.', [['app.txt', 'head', 2]]],
        ['R2', 'open', 'no closure was given for it: it stays open', []],
        ['R3', 'open', 'No test was added.', []],
      ],
    );
    assert.equal(repo.git('show', `${head}:app.txt`).split('\n')[1], 'two', 'the anchor is the line the fix changed');

    const refused = (closures: Parameters<typeof verifyClosures>[2]) => {
      const r = verifyClosures(items, manifest.value, closures);
      assert.ok(!r.ok);
      return r.error.reason;
    };
    assert.equal(refused([{ itemId: 'R1', closure: 'resolved', reason: 'done', evidenceIds: ['ev-0000000000000000'] }]), 'unknown-evidence');
    assert.equal(refused([{ itemId: 'R2', closure: 'resolved', reason: 'renamed', evidenceIds: [rename.id] }]), 'no-line-evidence');
    assert.equal(refused([{ itemId: 'R9', closure: 'open', reason: 'x', evidenceIds: [] }]), 'unknown-item');
    assert.equal(
      refused([
        { itemId: 'R1', closure: 'open', reason: 'x', evidenceIds: [] },
        { itemId: 'R1', closure: 'open', reason: 'y', evidenceIds: [] },
      ]),
      'duplicate-item',
    );
    assert.equal(refused([{ itemId: 'R3', closure: 'open', reason: '  ', evidenceIds: [] }]), 'no-reason');
  });
});
