import assert from 'node:assert/strict';
import { readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { capturePatchset, capturePatchsetSpooled, patchsetId } from '../../../host/capture/capture';
import { openRepo, type RepoHandle } from '../../../host/capture/repo';
import { PatchsetSpool } from '../../../host/capture/spool';
import type { CaptureOptions, FileChange, Hunk, Patchset } from '../../../protocol/patchset';
import type { CaptureTarget } from '../../../protocol/session';
import { TestRepo, tempDir } from '../../fixtures/gitRepo';

/**
 * The spooled capture (`rennet capture --json`) against the whole-patchset capture: the bytes it
 * reads back are exactly `JSON.stringify` of the patchset capturePatchset answers, id included —
 * over generated file lists (any order, any path, held binary files settled late, any chunk
 * size, with and without a temp directory) and over real repositories.
 */

const joined = (chunks: Iterable<Buffer>) => Buffer.concat([...chunks]);
const byteOrder = (a: FileChange, b: FileChange) => Buffer.compare(Buffer.from(a.path, 'utf8'), Buffer.from(b.path, 'utf8'));

const META: Omit<Patchset, 'id' | 'files' | 'totals'> = {
  base: 'a'.repeat(40),
  head: 'b'.repeat(40),
  headTree: 'c'.repeat(40),
  baseRef: 'main',
  headRef: 'feature',
  baseTip: 'd'.repeat(40),
  targetKind: 'branch',
  diffCommand: 'git diff',
  options: { maxFileBytes: 1000, maxPatchBytesPerFile: 1000, contextLines: 3 } satisfies CaptureOptions,
};

// Paths of any code points but lone surrogates (a path is UTF-8: git never names one).
const pathArb = fc.string({ unit: fc.constantFrom('a', 'b', '/', ' ', 'é', '\uff41', '\u{1f600}', '\n', '"', '\\', '\u0000', '\u2028'), minLength: 1, maxLength: 6 });
const textArb = fc.string({ unit: 'grapheme', maxLength: 30 });
const hunkArb: fc.Arbitrary<Hunk> = fc.record({
  id: fc.string({ unit: fc.constantFrom('0', '1', 'f'), minLength: 1, maxLength: 4 }).map((s) => `h-${s}`),
  header: textArb.map((t) => `@@ -1,2 +1,2 @@${t}`),
  oldStart: fc.nat(1000),
  oldLines: fc.nat(5),
  newStart: fc.nat(1000),
  newLines: fc.nat(5),
  additions: fc.nat(5),
  deletions: fc.nat(5),
  lines: fc.array(
    fc.record(
      {
        kind: fc.constantFrom('context' as const, 'add' as const, 'del' as const),
        text: textArb,
        oldLine: fc.option(fc.nat(1000)),
        newLine: fc.option(fc.nat(1000)),
        noNewlineAtEof: fc.constant(true as const),
      },
      { requiredKeys: ['kind', 'text', 'oldLine', 'newLine'] },
    ),
    { maxLength: 4 },
  ),
});
const fileArb = (path: string): fc.Arbitrary<FileChange> =>
  fc.record({
    path: fc.constant(path),
    oldPath: fc.option(pathArb),
    status: fc.constantFrom('added' as const, 'modified' as const, 'deleted' as const, 'renamed' as const),
    oldMode: fc.option(fc.constantFrom('100644', '100755', '120000')),
    newMode: fc.option(fc.constantFrom('100644', '100755', '160000')),
    modeChanged: fc.boolean(),
    oldOid: fc.option(fc.constant('1'.repeat(40))),
    newOid: fc.option(fc.constant('2'.repeat(40))),
    similarity: fc.option(fc.nat(100)),
    binary: fc.boolean(),
    submodule: fc.boolean(),
    truncated: fc.boolean(),
    truncation: fc.constant(null),
    additions: fc.option(fc.nat(50)),
    deletions: fc.option(fc.nat(50)),
    hunks: fc.array(hunkArb, { maxLength: 3 }),
    regions: fc.constant([]),
  });
const filesArb = fc.uniqueArray(pathArb, { minLength: 1, maxLength: 12, selector: (p) => p }).chain((paths) => fc.tuple(...paths.map(fileArb)));

/** What capturePatchset would answer for these files (a binary file has no hunks, as parsed). */
function wholePatchset(files: FileChange[]): Patchset {
  const sorted = [...files].sort(byteOrder);
  const totals = { files: 0, additions: 0, deletions: 0, hunks: 0, binary: 0, submodules: 0, truncated: 0, uncounted: 0 };
  for (const f of sorted) {
    totals.files++;
    totals.additions += f.additions ?? 0;
    totals.deletions += f.deletions ?? 0;
    totals.hunks += f.hunks.length;
    totals.binary += f.binary ? 1 : 0;
    totals.submodules += f.submodule ? 1 : 0;
    totals.truncated += f.truncated ? 1 : 0;
    totals.uncounted += f.additions === null || f.deletions === null ? 1 : 0;
  }
  const body = { ...META, totals, files: sorted };
  return { id: patchsetId(body), ...body };
}

describe('capture spool: the streamed capture reads back the whole capture byte for byte', function () {
  this.timeout(120_000);

  it('any files in any order, any buffer size, in memory, spilled to the temp file or without one: JSON.stringify of the patchset, same id', () => {
    const root = tempDir('rennet-spool-test-');
    try {
      fc.assert(
        fc.property(filesArb, fc.integer({ min: 1, max: 4096 }), fc.integer({ min: 0, max: 8192 }), fc.boolean(), fc.boolean(), (generated, chunkBytes, memoryBytes, withTemp, resetFirst) => {
          const files = generated.map((f) => (f.binary ? { ...f, hunks: [], regions: [] } : f));
          const spool = new PatchsetSpool({ tempRoot: withTemp ? root : join(root, 'missing'), chunkBytes, memoryBytes });
          try {
            if (resetFirst) {
              // A first diff's files dropped (the criss-cross retry): none of them may show.
              for (const f of files) spool.add({ ...f, path: `${f.path}-dropped` });
              spool.reset();
            }
            for (const f of files) spool.add(f);
            // Held binary files may be settled (a text file over the size limit) before finish.
            for (const held of spool.heldFiles()) {
              assert.ok(held.binary);
              if (held.path.length % 2 === 0) Object.assign(held, { binary: false, truncated: true, additions: null });
            }
            const expected = wholePatchset(files.map((f) => ({ ...f })).map((f) => (f.binary && f.path.length % 2 === 0 ? { ...f, binary: false, truncated: true, additions: null } : f)));
            const spooled = spool.finish((totals) => ({ ...META, totals }));
            assert.equal(spooled.id, expected.id);
            const bytes = joined(spooled.chunks());
            assert.equal(bytes.toString('utf8'), JSON.stringify(expected));
            assert.ok(bytes.equals(Buffer.from(JSON.stringify(expected), 'utf8')));
            assert.ok(joined(spooled.chunks()).equals(bytes), 'read back twice, the same bytes');
            assert.deepEqual(spooled.row, {
              id: expected.id,
              base: META.base,
              head: META.head,
              baseRef: META.baseRef,
              headRef: META.headRef,
              targetKind: META.targetKind,
              fileCount: files.length,
              hunkCount: expected.totals.hunks,
            });
          } finally {
            spool.dispose();
          }
        }),
        { seed: 20260616, numRuns: 300 },
      );
      assert.deepEqual(readdirSync(root), [], 'every spool removed');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("files spooled in path order, all in memory, read back as the spool's own buffers (no copy), byte for byte", () => {
    const root = tempDir('rennet-spool-test-');
    let fast = 0;
    try {
      fc.assert(
        fc.property(filesArb, fc.integer({ min: 1, max: 4096 }), (generated, chunkBytes) => {
          const files = generated.filter((f) => !f.binary).sort((a, b) => Buffer.compare(Buffer.from(a.path, 'utf8'), Buffer.from(b.path, 'utf8')));
          if (files.length === 0) return;
          const spool = new PatchsetSpool({ tempRoot: root, chunkBytes, memoryBytes: Number.MAX_SAFE_INTEGER });
          try {
            for (const f of files) spool.add(f);
            const expected = wholePatchset(files.map((f) => ({ ...f })));
            const spooled = spool.finish((totals) => ({ ...META, totals }));
            assert.equal(spooled.id, expected.id);
            const first = [...spooled.chunks()];
            assert.equal(Buffer.concat(first).toString('utf8'), JSON.stringify(expected));
            // Only the uncopied read gives the same buffers twice (a copy allocates new ones).
            const second = [...spooled.chunks()];
            if (first.length > 2 && first.slice(1, -1).every((b, i) => b.buffer === second[i + 1]?.buffer && b.byteOffset === second[i + 1]?.byteOffset)) fast++;
          } finally {
            spool.dispose();
          }
        }),
        { seed: 20261202, numRuns: 200 },
      );
      assert.ok(fast > 100, `the uncopied read ran in ${fast} of 200 cases`);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  describe('against real repositories', () => {
    let repo: TestRepo;
    afterEach(() => repo?.cleanup());

    async function handle(): Promise<RepoHandle> {
      const opened = await openRepo(repo.dir);
      assert.ok(opened.ok);
      return opened.value;
    }

    async function sameAsWhole(target: CaptureTarget, options?: Partial<CaptureOptions>): Promise<Patchset> {
      const h = await handle();
      const whole = await capturePatchset(h, target, options);
      const spooled = await capturePatchsetSpooled(h, target, options);
      assert.ok(whole.ok, whole.ok ? '' : whole.error.message);
      assert.ok(spooled.ok, spooled.ok ? '' : spooled.error.message);
      try {
        assert.equal(spooled.value.id, whole.value.id);
        assert.equal(joined(spooled.value.chunks()).toString('utf8'), JSON.stringify(whole.value));
      } finally {
        spooled.value.dispose();
      }
      return whole.value;
    }

    it('renames, binaries, a text file over the size limit, a patch over its limit, a symlink type change, non-ASCII paths', async () => {
      repo = new TestRepo();
      const lines = (n: number, tag = '') => Array.from({ length: n }, (_, i) => `line ${i}${tag}`).join('\n') + '\n';
      repo
        .write('src/a.ts', lines(50))
        .write('src/move-me.ts', lines(40))
        .write('img.bin', Buffer.from([0, 1, 2, 3, 0]))
        .write('big.txt', lines(400))
        .write('long.txt', lines(300))
        .write('link', 'target');
      repo.write('ünï/cödé 😀.ts', lines(10));
      repo.commit('base');
      repo.branch('feature');
      repo
        .write('src/a.ts', lines(50, ' changed'))
        .write('img.bin', Buffer.from([0, 9, 9, 9, 0]))
        .write('big.txt', lines(420, ' grown'))
        .write('long.txt', lines(300).replace(/line (\d*5)\n/g, 'line $1 edited\n'));
      repo.git('mv', 'src/move-me.ts', 'src/moved.ts');
      rmSync(join(repo.dir, 'link'));
      symlinkSync('elsewhere', join(repo.dir, 'link'));
      writeFileSync(join(repo.dir, 'ünï/cödé 😀.ts'), lines(12));
      repo.commit('change');
      const ps = await sameAsWhole({ kind: 'branch', base: 'main', head: 'feature' }, { maxFileBytes: 4000, maxPatchBytesPerFile: 600 });
      assert.ok(ps.totals.truncated >= 2 && ps.totals.binary === 1, JSON.stringify(ps.totals));
      assert.ok(ps.files.some((f) => f.status === 'renamed'));
    });

    it('a criss-cross history (the --merge-base diff fails, the retry is what is spooled) and a working tree', async () => {
      repo = new TestRepo();
      repo.write('shared.txt', 'root\n').commit('root');
      repo.branch('x').write('x.txt', 'x1\n').commit('x1');
      repo.checkout('main').branch('y').write('y.txt', 'y1\n').commit('y1');
      repo.checkout('x');
      repo.git('merge', '-q', '--no-ff', '-m', 'x takes y1', 'y');
      repo.checkout('y');
      repo.git('merge', '-q', '--no-ff', '-m', 'y takes x1', 'x~1');
      repo.checkout('x').write('x.txt', 'x2\n').commit('x2');
      assert.equal(repo.git('merge-base', '--all', 'x', 'y').split('\n').length, 2, 'the fixture has two merge-bases');
      await sameAsWhole({ kind: 'branch', base: 'y', head: 'x' });
      repo.write('untracked.txt', 'new\n').write('shared.txt', 'edited\n');
      await sameAsWhole({ kind: 'working-tree', base: 'main' });
    });

    it('refuses as capturePatchset does (an empty change) and leaves no spool behind', async () => {
      repo = new TestRepo();
      repo.write('f.txt', 'x\n').commit('base');
      repo.branch('feature');
      const spoolRoot = tempDir('rennet-spool-root-');
      const saved = process.env.TMPDIR;
      process.env.TMPDIR = spoolRoot;
      try {
        const spooled = await capturePatchsetSpooled(await handle(), { kind: 'branch', base: 'main', head: 'feature' });
        assert.ok(!spooled.ok);
        assert.equal(spooled.error.code, 'empty-change');
        assert.deepEqual(readdirSync(spoolRoot), []);
      } finally {
        if (saved === undefined) delete process.env.TMPDIR;
        else process.env.TMPDIR = saved;
        rmSync(spoolRoot, { recursive: true, force: true });
      }
    });
  });
});
