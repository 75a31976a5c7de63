import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { capturePatchset } from '../../../host/capture/capture';
import { openRepo } from '../../../host/capture/repo';
import type { EarlierReview } from '../../../host/forge/types';
import { gitChangeSource } from '../../../host/read/gitSource';
import { readSurface } from '../../../host/read/tools';
import { AUTHOR_BASE_REF_PREFIX, authorBaseFile, parseRawZ, parseZeroHunks, splitLines } from '../../../host/rereview/authorDelta';
import { verifyClosures } from '../../../host/rereview/closures';
import { evidenceOnDelta, gitLineMap } from '../../../host/rereview/evidenceLines';
import { planRereview, rereviewDeltaOf } from '../../../host/rereview/run';
import { sinceLastReview, type SinceLastReview } from '../../../host/rereview/sinceLast';
import { ok } from '../../../protocol/result';
import { Patchset as PatchsetSchema, type Patchset } from '../../../protocol/patchset';
import { TestRepo } from '../../fixtures/gitRepo';

/**
 * The delta the lenses read after the base was merged into the request since the review: only the
 * author's work (their own commits, and inside each merge only its conflict resolutions), as a
 * patchset whose head is the real head and whose base is the author base — the head with the
 * author's work taken back out. Pure parts on fixtures; the rest on real histories.
 */
describe('host/rereview/authorDelta: the lenses read only the author’s work', function () {
  this.timeout(60_000);
  const repos: TestRepo[] = [];
  const dirs: string[] = [];
  after(() => {
    for (const r of repos) r.cleanup();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  const buf = (...lines: string[]) => lines.map((l) => Buffer.from(l));
  const text = (lines: readonly Buffer[]) => Buffer.concat(lines).toString('utf8');

  describe('pure parts', () => {
    it('parseZeroHunks reads all four numbers; a missing length is 1', () => {
      assert.deepEqual(parseZeroHunks('diff --git a/x b/x\n@@ -3,0 +4,2 @@\n+a\n+b\n@@ -10,2 +12 @@ f()\n-x\n-y\n+z\n@@ -20 +21,0 @@\n-q\n'), [
        { oldStart: 3, oldLines: 0, newStart: 4, newLines: 2 },
        { oldStart: 10, oldLines: 2, newStart: 12, newLines: 1 },
        { oldStart: 20, oldLines: 1, newStart: 21, newLines: 0 },
      ]);
    });

    it('splitLines keeps each line end (CR included) and a last line without one', () => {
      assert.deepEqual(splitLines(Buffer.from('a\r\nb\nc')).map(String), ['a\r\n', 'b\n', 'c']);
      assert.deepEqual(splitLines(Buffer.alloc(0)), []);
    });

    it('parseRawZ: mode, oids, status and a path with a space and a newline in it', () => {
      const z = '0'.repeat(40);
      const a = 'a'.repeat(40);
      const raw = `:100644 100644 ${a} ${'b'.repeat(40)} M\0src/a b.ts\0:000000 100644 ${z} ${a} A\0odd\nname\0`;
      assert.deepEqual(parseRawZ(raw), [
        { oldMode: '100644', newMode: '100644', oldOid: a, newOid: 'b'.repeat(40), status: 'M', path: 'src/a b.ts' },
        { oldMode: '000000', newMode: '100644', oldOid: z, newOid: a, status: 'A', path: 'odd\nname' },
      ]);
    });

    it('authorBaseFile: the base’s lines stay, the author’s added lines leave, the author’s deleted lines come back; lineOf follows', () => {
      // reviewed: r1..r6. head: the base changed r2 → B2 and added B9 after r6; the author deleted r4 and added A1 after r5.
      const reviewed = buf('r1\n', 'r2\n', 'r3\n', 'r4\n', 'r5\n', 'r6\n');
      const head = buf('r1\n', 'B2\n', 'r3\n', 'r5\n', 'A1\n', 'r6\n', 'B9\n');
      const hunks = [
        { oldStart: 2, oldLines: 1, newStart: 2, newLines: 1 },
        { oldStart: 4, oldLines: 1, newStart: 3, newLines: 0 },
        { oldStart: 5, oldLines: 0, newStart: 5, newLines: 1 },
        { oldStart: 6, oldLines: 0, newStart: 7, newLines: 1 },
      ];
      const file = authorBaseFile(reviewed, head, hunks, { added: new Set([5]), resolved: new Set(), deleted: new Set([4]) });
      assert.equal(text(file.lines), 'r1\nB2\nr3\nr4\nr5\nr6\nB9\n', 'the head without the author’s work: B2 and B9 stay, A1 leaves, r4 is back');
      assert.deepEqual(
        [...file.lineOf],
        [
          [1, 1],
          [3, 3],
          [4, 4],
          [5, 5],
          [6, 6],
        ],
      );
      assert.equal(file.lineOf.get(2), undefined, 'r2 is the base’s change: the author base has B2 there, not r2');
    });

    it('authorBaseFile: a conflict resolution replacing the reviewed lines brings them back; a base deletion next to an author line does not', () => {
      const reviewed = buf('a\n', 'mine\n', 'c\n', 'gone\n', 'e\n');
      const head = buf('a\n', 'resolved\n', 'c\n', 'new\n', 'e\n');
      const hunks = [
        { oldStart: 2, oldLines: 1, newStart: 2, newLines: 1 },
        { oldStart: 4, oldLines: 1, newStart: 4, newLines: 1 },
      ];
      // Line 2 is a merge's resolution; line 4 an author segment's line where the base deleted "gone".
      const file = authorBaseFile(reviewed, head, hunks, { added: new Set([2, 4]), resolved: new Set([2]), deleted: new Set() });
      assert.equal(text(file.lines), 'a\nmine\nc\ne\n');
      assert.equal(file.lineOf.get(2), 2);
      assert.equal(file.lineOf.get(4), undefined);
    });

    it('authorBaseFile: an unchanged line the segments call the author’s leaves (it shows as added); a line left without its end gets one', () => {
      const file = authorBaseFile(buf('x\n', '}\n', 'y'), buf('x\n', '}\n', 'y'), [], { added: new Set([2]), resolved: new Set(), deleted: new Set() });
      assert.equal(text(file.lines), 'x\ny');
      const restored = authorBaseFile(buf('x\n', 'tail'), buf('x\n', 'B\n'), [{ oldStart: 2, oldLines: 1, newStart: 2, newLines: 1 }], {
        added: new Set(),
        resolved: new Set(),
        deleted: new Set([2]),
      });
      assert.equal(text(restored.lines), 'x\ntail\nB\n', 'the restored last line gets a line end before the base’s line');
    });
  });

  describe('on real histories', () => {
    const lines = (n: number, p = 'line') => Array.from({ length: n }, (_, i) => `${p} ${i + 1}`).join('\n') + '\n';

    /** main: app.txt 1..20 and lib.txt; feature changes app.txt line 12 (the reviewed commit). */
    function reviewed() {
      const r = new TestRepo();
      repos.push(r);
      r.write('app.txt', lines(20)).write('lib.txt', lines(6, 'lib'));
      r.commit('base');
      r.branch('feature');
      r.write('app.txt', r.read('app.txt').replace('line 12\n', 'line twelve\n'));
      return { r, review: r.commit('feature') };
    }

    const earlier = (commitId: string): EarlierReview => ({
      reviewId: 3,
      url: 'u',
      commitId,
      state: 'CHANGES_REQUESTED',
      body: '',
      markerId: null,
      submittedAt: null,
      comments: [{ path: 'app.txt', line: 15, side: 'RIGHT', body: 'Drop line 15.' }],
    });

    async function decide(r: TestRepo, review: string): Promise<SinceLastReview> {
      const handle = await openRepo(r.dir);
      assert.ok(handle.ok);
      const full = await capturePatchset(handle.value, { kind: 'branch', base: 'main', head: 'feature' });
      assert.ok(full.ok, full.ok ? '' : full.error.message);
      const since = await sinceLastReview({ root: r.dir, full: full.value, earlier: earlier(review), ownRequest: false });
      assert.ok(since.ok, since.ok ? '' : since.error.message);
      return since.value;
    }

    const changed = (p: Patchset) =>
      p.files.flatMap((f) => f.hunks.flatMap((h) => h.lines.filter((l) => l.kind !== 'context').map((l) => `${f.path} ${l.kind === 'add' ? `+${l.newLine}` : `-${l.oldLine}`} ${l.text}`)));

    /** Every changed line says on its side exactly what git has there: head lines at the head, deleted lines at the patchset's base. */
    function linesOpen(r: TestRepo, p: Patchset): void {
      for (const f of p.files) {
        for (const h of f.hunks) {
          for (const l of h.lines) {
            if (l.kind === 'add') assert.equal(r.git('show', `${p.head}:${f.path}`).split('\n')[l.newLine! - 1], l.text, `${f.path} +${l.newLine}`);
            if (l.kind === 'del') assert.equal(r.git('show', `${p.base}:${f.oldPath ?? f.path}`).split('\n')[l.oldLine! - 1], l.text, `${f.path} -${l.oldLine}`);
          }
        }
      }
    }

    it('a merge of the base without conflicts: the lenses see the author’s commits before and after it, not the base’s file or lines; every line opens where it says', async () => {
      const { r, review } = reviewed();
      // The author: adds a guard after line 7, deletes line 15, and adds a new file.
      r.write('app.txt', r.read('app.txt').replace('line 7\n', 'line 7\nguard(7)\n').replace('line 15\n', '')).write('fix.txt', 'the fix\n');
      r.commit('fix: guard 7, drop 15');
      // The base moves: three header lines, a changed line 3, a changed lib.txt, a new file only it has.
      r.checkout('main');
      r.write('app.txt', `top 1\ntop 2\ntop 3\n${r.read('app.txt').replace('line 3\n', 'line three (main)\n')}`)
        .write('lib.txt', lines(6, 'lib').replace('lib 2\n', 'lib two\n'))
        .write('base-only.txt', 'only the base has this\n');
      r.commit('main moves');
      r.checkout('feature');
      r.git('merge', '-q', '--no-edit', 'main');
      // After the merge, the author changes line 5.
      r.write('app.txt', r.read('app.txt').replace('line 5\n', 'line five\n'));
      const head = r.commit('five');

      const since = await decide(r, review);
      const delta = since.deltaPatchset;
      assert.ok(delta && since.lensPatchset === delta);
      PatchsetSchema.parse(delta);
      assert.deepEqual(since.delta, { kind: 'ancestor', from: review, to: head, reason: null });
      assert.deepEqual(
        delta.files.map((f) => f.path),
        ['app.txt', 'fix.txt'],
        'base-only.txt and lib.txt are the base’s: not in the delta',
      );
      assert.deepEqual(changed(delta), ['app.txt -8 line 5', 'app.txt +8 line five', 'app.txt +11 guard(7)', 'app.txt -18 line 15', 'fix.txt +1 the fix']);
      assert.ok(!changed(delta).some((l) => /top|three|lib/.test(l)), 'no line the base brought is a changed line');
      linesOpen(r, delta);

      // The author base: a real commit on the reviewed commit, kept by a hidden ref; its tree is the head's minus the author's work.
      assert.equal(r.git('rev-parse', `${delta.base}^`), review);
      assert.equal(r.git('rev-parse', `${AUTHOR_BASE_REF_PREFIX}${delta.base}`), delta.base);
      assert.equal(r.git('show', `${delta.base}:base-only.txt`), 'only the base has this');
      assert.deepEqual([delta.head, delta.baseRef, delta.headRef], [head, review, 'feature']);
      assert.equal(r.git('rev-parse', 'HEAD'), head, 'HEAD did not move');
      assert.equal(r.git('status', '--porcelain'), '', 'the index and the work tree are untouched');

      // A lens's read tools list only the author's files.
      const read = readSurface(gitChangeSource({ repoDir: r.dir, patchset: delta, contextDir: mkdtemp() }));
      const listed = await read.call('list_changes', {});
      assert.ok(!listed.isError && listed.text.includes('app.txt') && listed.text.includes('fix.txt'), listed.text);
      assert.ok(!listed.text.includes('base-only.txt') && !listed.text.includes('lib.txt'), listed.text);

      // The same history drafted again gives the same author base and the same patchset.
      const again = await decide(r, review);
      assert.deepEqual([again.deltaPatchset?.base, again.deltaPatchset?.id], [delta.base, delta.id]);

      // A closure resolved on the deleted line 15: its evidence names the author base's line, which opens as "line 15".
      const unit = since.manifest.find((u) => u.kind === 'text-hunk' && u.path === 'app.txt' && u.body.split('\n').includes('-line 15'));
      assert.ok(unit && since.unitFrames, JSON.stringify(since.manifest));
      const verified = verifyClosures(since.items, since.manifest, [{ itemId: 'R1', closure: 'resolved', reason: 'Dropped.', evidenceIds: [unit.id] }]);
      assert.ok(verified.ok);
      const mapped = await evidenceOnDelta(verified.value, since.unitFrames, { from: review, to: head }, gitLineMap(r.dir), since.reviewedLineOnBase);
      const onBase = mapped[0]!.evidence.find((e) => e.side === 'base');
      assert.ok(onBase, JSON.stringify(mapped[0]!.evidence));
      assert.equal(onBase.line, 18);
      assert.equal(r.git('show', `${delta.base}:app.txt`).split('\n')[onBase.line! - 1], 'line 15');
    });

    it('a merge with a conflict: the resolution is in the delta as the author’s change of the reviewed line; the base’s clean line is not', async () => {
      const { r, review } = reviewed();
      r.checkout('main');
      r.write('app.txt', r.read('app.txt').replace('line 12\n', 'line 12 (main)\n').replace('line 2\n', 'line two (main)\n'));
      r.commit('main: two lines');
      r.checkout('feature');
      assert.throws(() => r.git('merge', '-q', 'main'), 'the merge conflicts on line 12');
      r.write('app.txt', r.read('app.txt').replace(/<<<<<<< [^\n]*\nline twelve\n=======\nline 12 \(main\)\n>>>>>>> [^\n]*\n/, 'line twelve (main’s too)\n'));
      const head = r.commit('merge main');
      const since = await decide(r, review);
      const delta = since.deltaPatchset;
      assert.ok(delta);
      assert.deepEqual(changed(delta), ['app.txt -12 line twelve', 'app.txt +12 line twelve (main’s too)']);
      assert.equal(delta.head, head);
      linesOpen(r, delta);
    });

    it('only a clean merge of the base since the review: nothing of the author’s to read, said', async () => {
      const { r, review } = reviewed();
      r.checkout('main');
      r.write('base-only.txt', 'b\n');
      r.commit('main moves');
      r.checkout('feature');
      r.git('merge', '-q', '--no-edit', 'main');
      const head = r.git('rev-parse', 'HEAD');
      const since = await decide(r, review);
      const reason = `nothing of the author's own changed since ${review.slice(0, 7)}: the commits since only merge the base, and the merge resolves nothing`;
      assert.deepEqual(since.delta, { kind: 'ancestor', from: review, to: head, reason });
      assert.deepEqual([since.lensPatchset, since.deltaPatchset, since.onlyBaseMerged], [null, null, true]);
      assert.equal(since.statement, `N${reason.slice(1)}.`);

      // The earlier item stays open, saying why; no seat is asked.
      const handle = await openRepo(r.dir);
      assert.ok(handle.ok);
      const full = await capturePatchset(handle.value, { kind: 'branch', base: 'main', head: 'feature' });
      assert.ok(full.ok);
      const planned = await planRereview(
        { earlier: async () => ok({ review: earlier(review), ownRequest: false }), closureHarness: async () => assert.fail('no closure seat is asked'), contextDir: mkdtemp() },
        r.dir,
        full.value,
      );
      assert.ok(planned.ok, planned.ok ? '' : planned.error.message);
      assert.deepEqual(
        planned.value.closures.map((c) => [c.item.id, c.closure, c.reason]),
        [['R1', 'open', "nothing of the author's own changed since the earlier review (its commits only merge the base, resolving nothing): nothing can have resolved it"]],
      );
      assert.equal(rereviewDeltaOf(planned.value), null, 'the lenses read nothing, so no delta scope');
    });
  });

  function mkdtemp(): string {
    const d = mkdtempSync(join(tmpdir(), 'rennet-author-delta-ctx-'));
    dirs.push(d);
    return d;
  }
});
