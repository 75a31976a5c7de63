import assert from 'node:assert/strict';
import { unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Patchset } from '../../../protocol/patchset';
import { READ_DIFF, READ_FILE } from '../../../protocol/read';
import { escapeControls } from '../../../protocol/text';
import { buildCitationIndex } from '../../../host/board/citations';
import { BoardSeat } from '../../../host/board/seat';
import { emptyBoard } from '../../../host/board/state';
import { readCapturedBlob } from '../../../host/capture/blob';
import { capturePatchset, compareUtf8 } from '../../../host/capture/capture';
import { openRepo } from '../../../host/capture/repo';
import { gitChangeSource } from '../../../host/read/gitSource';
import { readSurface } from '../../../host/read/tools';
import { TestRepo } from '../../fixtures/gitRepo';

/**
 * The counter-examples test/unit/capture/captureFuzz.test.ts found, shrunk, each against the real
 * capture, read tools and cite tool. They failed before their fixes.
 */

async function captured(repo: TestRepo): Promise<Patchset> {
  const handle = await openRepo(repo.dir);
  assert.ok(handle.ok);
  const result = await capturePatchset(handle.value, { kind: 'branch', base: 'main', head: 'feature' });
  assert.ok(result.ok, result.ok ? '' : result.error.message);
  return result.value;
}

function seatFor(patchset: Patchset): BoardSeat {
  return new BoardSeat({ state: emptyBoard('sequence', patchset.id), context: { author: 'test', citations: buildCitationIndex(patchset) } });
}

describe('capture fuzz regressions (shrunk counter-examples)', function () {
  this.timeout(60_000);
  let repo: TestRepo;
  afterEach(() => repo?.cleanup());

  it('cite accepts a path with a line break as read_diff prints it (escaped), and stores the path as the change names it', async () => {
    // Shrunk: a text file "x\ndiff --git a/with space" modified; read_diff printed and accepted
    // "x\\ndiff --git a/with space", but cite refused that form as "uses backslashes" and "not a changed file".
    const path = 'x\ndiff --git a/with space';
    repo = new TestRepo();
    repo.write(path, 'one\n').commit('base');
    repo.branch('feature').write(path, 'one\ntwo\n').commit('feature');
    repo.checkout('main');
    const patchset = await captured(repo);
    const surface = readSurface(gitChangeSource({ repoDir: repo.dir, patchset, contextDir: join(repo.dir, '.ctx') }));
    const printed = escapeControls(path);
    assert.equal(printed, 'x\\ndiff --git a/with space');
    const diff = await surface.call(READ_DIFF, { path: printed });
    assert.equal(diff.isError, false, diff.text);
    assert.match(diff.text, /^\+ +2 \| two$/m);

    const seat = seatFor(patchset);
    const out = seat.call('cite', { path: printed, side: 'head', start_line: 2, end_line: 2 });
    assert.equal(out.isError, false, out.text);
    const element = seat.state.elements.get((out.result as { id: string }).id) as unknown as { path: string; hunk_ids: string[] };
    assert.equal(element.path, path, 'the code_ref names the file as the change does');
    assert.deepEqual(element.hunk_ids, [patchset.files[0]?.hunks[0]?.id]);
    // The raw form still works, and an escaped form of no changed path is still refused.
    assert.equal(seat.call('cite', { path, side: 'head', start_line: 2, end_line: 2 }).isError, false);
    const other = seat.call('cite', { path: 'y\\nz', side: 'head', start_line: 2, end_line: 2 });
    assert.equal(other.isError, true);
    assert.match(other.text, /citation-well-formed/);
  });

  it('refuses a change with a file name that is not valid UTF-8, naming its bytes, instead of merging two names', async () => {
    // Found probing the fuzzer's hostile names: "f\xFF.t" and "f\xFE.t" (Latin-1 bytes) were both
    // captured as "f\uFFFD.t"; read_diff of either showed the second file's lines, read_file said
    // the added file "does not exist at the head", and cite accepted lines of the wrong file.
    repo = new TestRepo();
    repo.write('keep.txt', 'a\n').commit('base');
    repo.branch('feature');
    writeFileSync(Buffer.concat([Buffer.from(`${repo.dir}/f`), Buffer.from([0xff]), Buffer.from('.t')]), 'one\n');
    writeFileSync(Buffer.concat([Buffer.from(`${repo.dir}/f`), Buffer.from([0xfe]), Buffer.from('.t')]), 'two\n');
    repo.write('fine.txt', 'ok\n').commit('feature');
    repo.checkout('main');
    const handle = await openRepo(repo.dir);
    assert.ok(handle.ok);
    for (const target of [
      { kind: 'branch', base: 'main', head: 'feature' },
      { kind: 'working-tree', base: 'main' },
    ] as const) {
      if (target.kind === 'working-tree') repo.checkout('feature').write('more.txt', 'x\n');
      const result = await capturePatchset(handle.value, target);
      assert.ok(!result.ok, `${target.kind}: captured ${result.ok ? JSON.stringify(result.value.files.map((f) => f.path)) : ''}`);
      assert.equal(result.error.code, 'invalid-path');
      assert.match(result.error.message, /not valid UTF-8 \("f\\x(FE|FF)\.t"\); Rennet names files by their UTF-8 paths, so nothing was captured/);
      assert.match(result.error.detail?.path ?? '', /^f\\x(FE|FF)\.t$/);
    }
  });

  it('a working-tree capture sees a file rewritten with the same size right after the commit (racy git)', async () => {
    // Shrunk: a 2-byte file "with space" committed, then rewritten at once with 2 other bytes; the
    // working-tree capture answered empty-change. The snapshot's copy of the index was newer than
    // every entry, so git trusted the cached stat (same second, same size, the inode reused)
    // instead of treating the entry as racily clean and hashing the file again. A race: several
    // rounds make a pass by luck unlikely (before the fix, about 7 rounds in 10 failed).
    for (let round = 0; round < 6; round++) {
      repo?.cleanup();
      repo = new TestRepo();
      const file = join(repo.dir, 'with space');
      writeFileSync(file, Buffer.from([0, 37]));
      repo.commit('base');
      unlinkSync(file);
      writeFileSync(file, Buffer.from([0, 39]));
      const handle = await openRepo(repo.dir);
      assert.ok(handle.ok);
      const result = await capturePatchset(handle.value, { kind: 'working-tree', base: 'main' });
      assert.ok(result.ok, `round ${round}: ${result.ok ? '' : `${result.error.code}: ${result.error.message}`}`);
      assert.deepEqual(
        result.value.files.map((f) => [f.path, f.status, f.binary]),
        [['with space', 'modified', true]],
      );
    }
  });

  it('lists files in byte order of their UTF-8 paths, as docs/capture-json.md states, across the surrogate range', async () => {
    // Shrunk: two added files "🧀" and "ｆｕｌｌ" were listed 🧀 first (UTF-16 order: U+D83E < U+FF46),
    // though in UTF-8 bytes "ｆｕｌｌ" (EF BD 86 …) comes before "🧀" (F0 9F A7 80).
    repo = new TestRepo();
    repo.write('keep.txt', 'a\n').commit('base');
    repo.branch('feature').write('🧀', 'x\n').write('ｆｕｌｌ', 'y\n').write('\ufffd.txt', 'z\n').write('a.txt', 'w\n').write('日本', 'v\n').commit('feature');
    repo.checkout('main');
    const patchset = await captured(repo);
    assert.deepEqual(
      patchset.files.map((f) => f.path),
      ['a.txt', '日本', 'ｆｕｌｌ', '\ufffd.txt', '🧀'],
    );
    assert.deepEqual(
      ['🧀', 'ｆｕｌｌ', 'a', '\ue000', '\ud7ff', 'ab', 'a\u{10000}', 'a\uffff'].sort(compareUtf8),
      ['🧀', 'ｆｕｌｌ', 'a', '\ue000', '\ud7ff', 'ab', 'a\u{10000}', 'a\uffff'].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y))),
    );
  });

  it('cite, read_file and the blob read accept changed files named ~tilde/a, back\\slash and notes#L1 (legal git paths)', async () => {
    // Shrunk: "0" renamed to "~tilde/a"; cite of head line 1 was refused "is rooted at ~" and
    // read_file "is not a repository-relative path: it is rooted at a home directory", though
    // read_diff showed the file. The same held for a backslash (and, for cite, a "#L1") in a name.
    repo = new TestRepo();
    repo.write('0', 'keep one\nkeep two\nkeep three\n').write('b/plain.txt', 'x\n').commit('base');
    repo.branch('feature');
    repo.remove('0').write('~tilde/a', 'keep one\nkeep two\nkeep three\nadded\n');
    repo.write('back\\slash.txt', 'new\n').write('notes#L1.md', 'new\n').commit('feature');
    repo.checkout('main');
    const patchset = await captured(repo);
    const renamed = patchset.files.find((f) => f.path === '~tilde/a');
    assert.ok(renamed && renamed.status === 'renamed' && renamed.oldPath === '0', JSON.stringify(patchset.files.map((f) => [f.status, f.oldPath, f.path])));
    const surface = readSurface(gitChangeSource({ repoDir: repo.dir, patchset, contextDir: join(repo.dir, '.ctx') }));
    const seat = seatFor(patchset);
    for (const [path, line] of [
      ['~tilde/a', 4],
      ['back\\slash.txt', 1],
      ['notes#L1.md', 1],
    ] as const) {
      const out = seat.call('cite', { path, side: 'head', start_line: line, end_line: line });
      assert.equal(out.isError, false, `cite ${path}: ${out.text}`);
      const file = await surface.call(READ_FILE, { path, side: 'head' });
      assert.equal(file.isError, false, `read_file ${path}: ${file.text}`);
      const blob = await readCapturedBlob(repo.dir, patchset, path, 'head');
      assert.ok(blob.ok, `blob read ${path}: ${blob.ok ? '' : blob.error.message}`);
    }
    // A ~-rooted or traversing path that names no changed file is still refused, each with its reason.
    const home = seat.call('cite', { path: '~/a', side: 'head', start_line: 1, end_line: 1 });
    assert.match(home.text, /citation-well-formed.*rooted at ~/s);
    const traversal = await surface.call(READ_FILE, { path: '../~tilde/a', side: 'head' });
    assert.ok(traversal.isError);
    assert.match(traversal.text, /not a repository-relative path: it has an empty, "\." or "\.\." segment/);
    const escape = await readCapturedBlob(repo.dir, patchset, '../etc/passwd', 'head');
    assert.ok(!escape.ok && escape.error.code === 'invalid-path');
  });
});
