import assert from 'node:assert/strict';
import { buildCitationIndex, type CitationIndex } from '../../../host/board/citations';
import type { CitationResolution } from '../../../host/board/state';
import type { Patchset } from '../../../protocol/patchset';
import { changeFixture, fileOf, type ChangeFixture } from './writerFixtures';

function ok(resolution: CitationResolution): Extract<CitationResolution, { ok: true }> {
  assert.equal(resolution.ok, true, JSON.stringify(resolution));
  return resolution as Extract<CitationResolution, { ok: true }>;
}

function no(resolution: CitationResolution, reason: string): Extract<CitationResolution, { ok: false }> {
  assert.equal(resolution.ok, false, JSON.stringify(resolution));
  const failure = resolution as Extract<CitationResolution, { ok: false }>;
  assert.equal(failure.reason, reason, failure.message);
  return failure;
}

describe('board citations: the changed-region predicate over real captures', function () {
  this.timeout(60_000);
  let fx: ChangeFixture;
  let index: CitationIndex;
  let truncated: CitationIndex;

  before(async () => {
    fx = await changeFixture();
    index = buildCitationIndex(fx.patchset);
    truncated = buildCitationIndex(fx.truncated);
  });
  after(() => fx?.repo.cleanup());

  it('accepts a range inside one hunk on the named side and returns that hunk id', () => {
    const app = fileOf(fx.patchset, 'src/app.ts');
    const [first, second] = app.hunks;
    assert.deepEqual(ok(index.resolve('src/app.ts', 'head', 10, 10)).hunkIds, [first!.id]);
    assert.deepEqual(ok(index.resolve('src/app.ts', 'head', 7, 13)).hunkIds, [first!.id]);
    assert.deepEqual(ok(index.resolve('src/app.ts', 'head', 28, 34)).hunkIds, [second!.id]);
    assert.deepEqual(ok(index.resolve('src/app.ts', 'base', 28, 33)).hunkIds, [second!.id]);
    assert.equal(index.patchsetId, fx.patchset.id);
  });

  it('refuses a range one line past a hunk, naming the path, the range and the nearest changed range', () => {
    const past = no(index.resolve('src/app.ts', 'head', 13, 14), 'outside-changed-regions');
    assert.match(past.message, /src\/app\.ts:13-14 \(head\)/);
    assert.equal(past.nearest, 'src/app.ts:7-13');
    // the base side of the second hunk is one line shorter than its head side
    const basePast = no(index.resolve('src/app.ts', 'base', 34, 34), 'outside-changed-regions');
    assert.equal(basePast.nearest, 'src/app.ts:28-33');
    const before = no(index.resolve('src/app.ts', 'head', 1, 6), 'outside-changed-regions');
    assert.equal(before.nearest, 'src/app.ts:7-13');
  });

  it('refuses a range spanning the gap between two hunks', () => {
    const span = no(index.resolve('many.txt', 'head', 10, 20), 'outside-changed-regions');
    assert.ok(span.nearest === 'many.txt:7-13' || span.nearest === 'many.txt:17-23', span.nearest ?? 'null');
    const gap = no(index.resolve('many.txt', 'head', 14, 16), 'outside-changed-regions');
    assert.ok(['many.txt:7-13', 'many.txt:17-23'].includes(gap.nearest ?? ''), gap.nearest ?? 'null');
    assert.equal(no(index.resolve('many.txt', 'head', 16, 16), 'outside-changed-regions').nearest, 'many.txt:17-23');
    assert.equal(no(index.resolve('many.txt', 'head', 14, 14), 'outside-changed-regions').nearest, 'many.txt:7-13');
  });

  it("answers a rename's base side to the old and the new name, and its head side to the new name only", () => {
    const renamed = fileOf(fx.patchset, 'src/new_name.ts');
    assert.equal(renamed.oldPath, 'src/old_name.ts');
    const hunk = renamed.hunks[0]!.id;
    assert.deepEqual(ok(index.resolve('src/old_name.ts', 'base', 15, 15)).hunkIds, [hunk]);
    assert.deepEqual(ok(index.resolve('src/new_name.ts', 'base', 15, 15)).hunkIds, [hunk]);
    assert.deepEqual(ok(index.resolve('src/new_name.ts', 'head', 12, 18)).hunkIds, [hunk]);
    assert.equal(ok(index.resolve('src/new_name.ts', 'base', 15, 15)).path, 'src/old_name.ts');
    const oldHead = no(index.resolve('src/old_name.ts', 'head', 15, 15), 'side-absent');
    assert.match(oldHead.message, /renamed to src\/new_name\.ts/);
    assert.ok(index.hasPath('src/old_name.ts') && index.hasPath('src/new_name.ts'));
  });

  it('refuses the side an added or deleted file does not have', () => {
    assert.ok(ok(index.resolve('src/added.ts', 'head', 1, 5)));
    assert.match(no(index.resolve('src/added.ts', 'base', 1, 1), 'side-absent').message, /added/);
    assert.ok(ok(index.resolve('src/gone.ts', 'base', 1, 8)));
    assert.match(no(index.resolve('src/gone.ts', 'head', 1, 1), 'side-absent').message, /deleted/);
  });

  it('counts a file-size truncated file as changed throughout, with no hunk ids', () => {
    const huge = fileOf(fx.truncated, 'big/huge.txt');
    assert.equal(huge.truncation?.reason, 'file-size');
    assert.deepEqual(ok(truncated.resolve('big/huge.txt', 'head', 1, 400)).hunkIds, []);
    assert.deepEqual(ok(truncated.resolve('big/huge.txt', 'base', 50, 60)).hunkIds, []);
    // the untruncated capture of the same file answers only its one hunk
    no(index.resolve('big/huge.txt', 'head', 1, 5), 'outside-changed-regions');
  });

  it("counts a patch-size truncated file's tail as changed, and still refuses the gaps before it", () => {
    const many = fileOf(fx.truncated, 'many.txt');
    const tail = many.truncation!.tailFrom.head!;
    assert.equal(many.truncation?.reason, 'patch-size');
    assert.ok(ok(truncated.resolve('many.txt', 'head', tail, tail + 100)));
    assert.ok(ok(truncated.resolve('many.txt', 'base', 290, 295)));
    no(truncated.resolve('many.txt', 'head', tail - 2, tail), 'outside-changed-regions');
    no(truncated.resolve('many.txt', 'head', 14, 16), 'outside-changed-regions');
    const lastKept = many.hunks[many.hunks.length - 1]!;
    assert.deepEqual(ok(truncated.resolve('many.txt', 'head', lastKept.newStart, lastKept.newStart)).hunkIds, [lastKept.id]);
  });

  it('refuses binary and submodule files with their own reason', () => {
    assert.match(no(index.resolve('assets/logo.png', 'head', 1, 1), 'not-line-addressable').message, /binary/);
    assert.match(no(index.resolve('vendor/sub', 'head', 1, 1), 'not-line-addressable').message, /submodule/);
  });

  it('refuses a path the change does not touch', () => {
    no(index.resolve('src/nowhere.ts', 'head', 1, 1), 'unknown-path');
    no(index.resolve('app.ts', 'head', 10, 10), 'unknown-path');
  });

  it('reports past-end-of-file as the only reason when the line count is known', () => {
    const counted = buildCitationIndex(fx.patchset, { lineCounts: { 'src/app.ts': { head: 41, base: 40 }, 'big/huge.txt': { head: 400 } } });
    const over = no(counted.resolve('src/app.ts', 'head', 40, 44), 'past-end-of-file');
    assert.equal(over.nearest, null);
    assert.match(over.message, /41 lines/);
    no(counted.resolve('src/app.ts', 'base', 41, 41), 'past-end-of-file');
    assert.ok(ok(counted.resolve('src/app.ts', 'head', 28, 34)));
    const countedTruncated = buildCitationIndex(fx.truncated, { lineCounts: new Map([['big/huge.txt', { head: 400 }]]) });
    no(countedTruncated.resolve('big/huge.txt', 'head', 399, 401), 'past-end-of-file');
    assert.ok(ok(countedTruncated.resolve('big/huge.txt', 'head', 399, 400)));
    // unknown lengths fall back to the region test
    no(index.resolve('src/app.ts', 'head', 40, 44), 'outside-changed-regions');
  });

  it('refuses a range that is not 1-based with start ≤ end', () => {
    no(index.resolve('src/app.ts', 'head', 12, 10), 'outside-changed-regions');
    no(index.resolve('src/app.ts', 'head', 0, 10), 'outside-changed-regions');
  });

  it('knows basenames for the bare-basename check', () => {
    assert.deepEqual([...index.pathsNamed('index.ts')].sort(), ['lib/index.ts', 'src/util/index.ts']);
    assert.deepEqual(index.pathsNamed('README.md'), ['README.md']);
    assert.equal(
      index.regionCount,
      fx.patchset.files.reduce((n, f) => n + f.regions.length, 0),
    );
  });

  it('scales: a 1,000-file, 10,000-hunk index resolves every region and every gap correctly', () => {
    const synthetic = syntheticPatchset(1000, 10);
    const big = buildCitationIndex(synthetic);
    assert.equal(big.regionCount, 20_000);
    let checked = 0;
    for (const file of synthetic.files) {
      for (const hunk of file.hunks) {
        assert.deepEqual(ok(big.resolve(file.path, 'head', hunk.newStart, hunk.newStart + hunk.newLines - 1)).hunkIds, [hunk.id]);
        no(big.resolve(file.path, 'head', hunk.newStart + hunk.newLines, hunk.newStart + hunk.newLines), 'outside-changed-regions');
        checked++;
      }
    }
    assert.equal(checked, 10_000);
  });
});

/** A patchset-shaped value at capture scale (the geometry only; content is not read). */
function syntheticPatchset(files: number, hunksPerFile: number): Patchset {
  return {
    id: 'ps-synthetic',
    base: 'b',
    head: 'h',
    headTree: 't',
    baseRef: 'main',
    headRef: 'feature',
    baseTip: 'b',
    targetKind: 'branch',
    diffCommand: 'git diff',
    options: { maxFileBytes: 1, maxPatchBytesPerFile: 1, contextLines: 3 },
    totals: { files, additions: 0, deletions: 0, hunks: files * hunksPerFile, binary: 0, submodules: 0, truncated: 0, uncounted: 0 },
    files: Array.from({ length: files }, (_, f) => {
      const hunks = Array.from({ length: hunksPerFile }, (_, h) => ({
        id: `h-${f}-${h}`,
        header: '@@',
        oldStart: 1 + h * 20,
        oldLines: 7,
        newStart: 1 + h * 20,
        newLines: 7,
        additions: 1,
        deletions: 1,
        lines: [],
      }));
      return {
        path: `pkg${f % 37}/file${f}.ts`,
        oldPath: null,
        status: 'modified' as const,
        oldMode: '100644',
        newMode: '100644',
        modeChanged: false,
        oldOid: 'o',
        newOid: 'n',
        binary: false,
        submodule: false,
        truncated: false,
        truncation: null,
        similarity: null,
        additions: hunksPerFile,
        deletions: hunksPerFile,
        hunks,
        regions: hunks.flatMap((h) => [
          { side: 'base' as const, startLine: h.oldStart, endLine: h.oldStart + 6, hunkId: h.id },
          { side: 'head' as const, startLine: h.newStart, endLine: h.newStart + 6, hunkId: h.id },
        ]),
      };
    }),
  };
}
