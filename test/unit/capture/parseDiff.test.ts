import assert from 'node:assert/strict';
import { DiffParseError, parseDiffOutput, parseRaw, parseSection, regionsOf } from '../../../host/capture/parseDiff';
import { modeKind, typeChanged } from '../../../protocol/patchset';

/** Pure fixtures in git's exact `diff --raw -p -z --full-index --no-abbrev` byte format. */
const Z = '\0';
const OID_A = '1'.repeat(40);
const OID_B = '2'.repeat(40);
const ZERO = '0'.repeat(40);

function fixture(raw: string[], patch: string): Buffer {
  return Buffer.from(raw.join('') + Z + patch, 'utf8');
}

describe('parseDiff (pure)', () => {
  it('pairs raw records with patch sections in order and reads exact paths from the raw part', () => {
    const buf = fixture(
      [`:100644 100644 ${OID_A} ${OID_B} M${Z}we"ird\npath.txt${Z}`, `:000000 100755 ${ZERO} ${OID_B} A${Z}bin/run${Z}`],
      [
        `diff --git "a/we\\"ird\\npath.txt" "b/we\\"ird\\npath.txt"\nindex ${OID_A}..${OID_B} 100644\n--- "a/we\\"ird\\npath.txt"\n+++ "b/we\\"ird\\npath.txt"\n`,
        '@@ -1,2 +1,2 @@\n keep\n-old\n+new\n',
        `diff --git a/bin/run b/bin/run\nnew file mode 100755\nindex ${ZERO}..${OID_B}\n--- /dev/null\n+++ b/bin/run\n`,
        '@@ -0,0 +1 @@\n+#!/bin/sh\n',
      ].join(''),
    );
    const files = parseDiffOutput(buf, { maxPatchBytesPerFile: 1 << 20 });
    assert.equal(files.length, 2);
    assert.equal(files[0]!.path, 'we"ird\npath.txt');
    assert.equal(files[0]!.hunks[0]!.lines.length, 3);
    assert.deepEqual(files[0]!.hunks[0]!.lines[2], { kind: 'add', text: 'new', oldLine: null, newLine: 2 });
    assert.equal(files[1]!.status, 'added');
    assert.equal(files[1]!.oldOid, null);
    assert.equal(files[1]!.oldMode, null);
    assert.equal(files[1]!.hunks[0]!.newLines, 1, 'a missing ",count" means one line');
    assert.deepEqual(
      regionsOf(files[1]!.hunks).map((r) => [r.side, r.startLine, r.endLine]),
      [['head', 1, 1]],
    );
  });

  it('reads rename records with both paths and the similarity score', () => {
    const { records } = parseRaw(Buffer.from(`:100644 100644 ${OID_A} ${OID_B} R087${Z}old/name.ts${Z}new/name.ts${Z}`));
    assert.deepEqual(records[0], {
      oldMode: '100644',
      newMode: '100644',
      oldOid: OID_A,
      newOid: OID_B,
      letter: 'R',
      score: 87,
      path: 'new/name.ts',
      oldPath: 'old/name.ts',
    });
  });

  it('does not mistake a content line that mentions "diff --git" for a file boundary', () => {
    const buf = fixture(
      [`:100644 100644 ${OID_A} ${OID_B} M${Z}notes.md${Z}`],
      `diff --git a/notes.md b/notes.md\nindex ${OID_A}..${OID_B} 100644\n--- a/notes.md\n+++ b/notes.md\n@@ -1 +1 @@\n-diff --git a/x b/x\n+diff --git a/y b/y\n`,
    );
    const files = parseDiffOutput(buf, { maxPatchBytesPerFile: 1 << 20 });
    assert.equal(files.length, 1);
    assert.equal(files[0]!.hunks[0]!.lines[1]!.text, 'diff --git a/y b/y');
  });

  it('reads a blank context line that lost its marker as context, also as the last line of a section', () => {
    // diff.suppressBlankEmpty prints a blank context line as an empty line; the capture pins it off,
    // but the parser's own rule holds wherever the line falls.
    const section = (path: string) => `diff --git a/${path} b/${path}\nindex ${OID_A}..${OID_B} 100644\n--- a/${path}\n+++ b/${path}\n@@ -1,4 +1,4 @@\n one\n\n-two\n+TWO\n\n`;
    const buf = fixture([`:100644 100644 ${OID_A} ${OID_B} M${Z}a.txt${Z}`, `:100644 100644 ${OID_A} ${OID_B} M${Z}b.txt${Z}`], section('a.txt') + section('b.txt'));
    const files = parseDiffOutput(buf, { maxPatchBytesPerFile: 1 << 20 });
    for (const file of files) {
      assert.deepEqual(
        file.hunks[0]!.lines.map((l) => [l.kind, l.text, l.oldLine, l.newLine]),
        [
          ['context', 'one', 1, 1],
          ['context', '', 2, 2],
          ['del', 'two', 3, null],
          ['add', 'TWO', null, 3],
          ['context', '', 4, 4],
        ],
        file.path,
      );
    }
  });

  it('gives byte-identical hunks in one file different ids (the header carries line numbers)', () => {
    const section = '@@ -1,1 +1,1 @@\n-a\n+b\n@@ -10,1 +10,1 @@\n-a\n+b\n';
    const { hunks } = parseSection('f.txt', `diff --git a/f.txt b/f.txt\n${section}`);
    assert.equal(hunks.length, 2);
    assert.notEqual(hunks[0]!.id, hunks[1]!.id);
    const again = parseSection('f.txt', `diff --git a/f.txt b/f.txt\n${section}`);
    assert.equal(again.hunks[0]!.id, hunks[0]!.id, 'same content, same id');
    const otherPath = parseSection('g.txt', `diff --git a/g.txt b/g.txt\n${section}`);
    assert.notEqual(otherPath.hunks[0]!.id, hunks[0]!.id, 'the path is part of the identity');
  });

  it('refuses a disagreement between raw records and patch sections instead of guessing', () => {
    const buf = fixture([`:100644 100644 ${OID_A} ${OID_B} M${Z}a${Z}`, `:100644 100644 ${OID_A} ${OID_B} M${Z}b${Z}`], 'diff --git a/a b/a\n');
    assert.throws(() => parseDiffOutput(buf, { maxPatchBytesPerFile: 1 << 20 }), DiffParseError);
  });

  describe('a type change (one raw record, two patch sections)', () => {
    const symlinkOid = OID_B;
    const typeChange = `:100644 120000 ${OID_A} ${symlinkOid} T${Z}f.txt${Z}`;
    const deletion = `diff --git a/f.txt b/f.txt\ndeleted file mode 100644\nindex ${OID_A}..${ZERO}\n--- a/f.txt\n+++ /dev/null\n@@ -1,3 +0,0 @@\n-one\n-two\n-three\n`;
    const creation = `diff --git a/f.txt b/f.txt\nnew file mode 120000\nindex ${ZERO}..${symlinkOid}\n--- /dev/null\n+++ b/f.txt\n@@ -0,0 +1 @@\n+target\n\\ No newline at end of file\n`;
    const other = `diff --git a/z.txt b/z.txt\nindex ${OID_A}..${OID_B} 100644\n--- a/z.txt\n+++ b/z.txt\n@@ -1 +1 @@\n-x\n+y\n`;
    const otherRecord = `:100644 100644 ${OID_A} ${OID_B} M${Z}z.txt${Z}`;

    it("becomes one modified file: the deletion's lines on the base side, the creation's on the head side", () => {
      const files = parseDiffOutput(fixture([typeChange, otherRecord], deletion + creation + other), { maxPatchBytesPerFile: 1 << 20 });
      assert.deepEqual(
        files.map((f) => f.path),
        ['f.txt', 'z.txt'],
      );
      const f = files[0]!;
      assert.deepEqual([f.status, f.oldMode, f.newMode, f.modeChanged, f.oldOid, f.newOid], ['modified', '100644', '120000', true, OID_A, symlinkOid]);
      assert.ok(typeChanged(f));
      assert.deepEqual(
        f.hunks.map((h) => h.header),
        ['@@ -1,3 +0,0 @@', '@@ -0,0 +1 @@'],
      );
      assert.deepEqual(
        f.hunks[0]!.lines.map((l) => [l.kind, l.oldLine, l.newLine]),
        [
          ['del', 1, null],
          ['del', 2, null],
          ['del', 3, null],
        ],
      );
      assert.deepEqual(f.hunks[1]!.lines, [{ kind: 'add', text: 'target', oldLine: null, newLine: 1, noNewlineAtEof: true }]);
      assert.deepEqual([f.additions, f.deletions], [1, 3]);
      assert.deepEqual(f.regions, [
        { side: 'base', startLine: 1, endLine: 3, hunkId: f.hunks[0]!.id },
        { side: 'head', startLine: 1, endLine: 1, hunkId: f.hunks[1]!.id },
      ]);
      assert.equal(files[1]!.hunks[0]!.lines.length, 2, 'the next file still gets its own section');
    });

    it('states a size-truncated type change per side: only a side whose own hunk was dropped has a tail', () => {
      // The deletion's hunk is 33 bytes as printed; the creation's (with its no-newline marker) 51.
      const limit = 40;
      const [f] = parseDiffOutput(fixture([typeChange], deletion + creation), { maxPatchBytesPerFile: limit });
      assert.equal(f!.truncated, true);
      assert.deepEqual(
        f!.hunks.map((h) => h.header),
        ['@@ -1,3 +0,0 @@'],
      );
      assert.deepEqual(f!.truncation?.tailFrom, { base: null, head: 1 });
      assert.deepEqual([f!.additions, f!.deletions], [1, 3], 'counts cover both sections');
    });

    it("refuses a type change whose second section is missing or is another file's", () => {
      assert.throws(() => parseDiffOutput(fixture([typeChange], deletion), { maxPatchBytesPerFile: 1 << 20 }), /printed only one of its two patch sections/);
      assert.throws(() => parseDiffOutput(fixture([typeChange, otherRecord], deletion + other), { maxPatchBytesPerFile: 1 << 20 }), /no "new file mode 120000" line/);
      assert.throws(() => parseDiffOutput(fixture([typeChange], creation + deletion), { maxPatchBytesPerFile: 1 << 20 }), /no "deleted file mode 100644" line/);
    });

    it('still refuses more sections than records once the type change has its two', () => {
      assert.throws(() => parseDiffOutput(fixture([typeChange], deletion + creation + other), { maxPatchBytesPerFile: 1 << 20 }), /more patch sections than the 1 changed files/);
    });

    it('blocks a type change to a submodule as a whole, consuming both sections', () => {
      const gitlink = 'a'.repeat(40);
      const toSubmodule = `:100644 160000 ${OID_A} ${gitlink} T${Z}f.txt${Z}`;
      const subCreation = `diff --git a/f.txt b/f.txt\nnew file mode 160000\nindex ${ZERO}..${gitlink}\n--- /dev/null\n+++ b/f.txt\n@@ -0,0 +1 @@\n+Subproject commit ${gitlink}\n`;
      const files = parseDiffOutput(fixture([toSubmodule, otherRecord], deletion + subCreation + other), { maxPatchBytesPerFile: 1 << 20 });
      assert.equal(files.length, 2);
      const f = files[0]!;
      assert.deepEqual([f.status, f.submodule, f.oldMode, f.newMode, f.hunks.length, f.additions, f.deletions], ['modified', true, '100644', '160000', 0, null, null]);
    });
  });

  it('names the kind a mode is, and a type change only when the kinds differ', () => {
    assert.deepEqual(['100644', '100755', '120000', '160000', '040000'].map(modeKind), ['regular', 'regular', 'symlink', 'submodule', 'other']);
    assert.equal(typeChanged({ oldMode: '100644', newMode: '100755' }), false, 'an executable bit is a mode change, not a type change');
    assert.equal(typeChanged({ oldMode: '120000', newMode: '100644' }), true);
    assert.equal(typeChanged({ oldMode: null, newMode: '120000' }), false, 'an added file has no old kind');
  });

  it('refuses a hunk that ends before its header says', () => {
    assert.throws(() => parseSection('f', 'diff --git a/f b/f\n@@ -1,3 +1,3 @@\n a\n'), /ends early/);
  });
});
