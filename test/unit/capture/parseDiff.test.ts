import assert from 'node:assert/strict';
import { DiffParseError, parseDiffOutput, parseRaw, parseSection, regionsOf } from '../../../host/capture/parseDiff';

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
    assert.deepEqual(regionsOf(files[1]!.hunks).map((r) => [r.side, r.startLine, r.endLine]), [['head', 1, 1]]);
  });

  it('reads rename records with both paths and the similarity score', () => {
    const { records } = parseRaw(Buffer.from(`:100644 100644 ${OID_A} ${OID_B} R087${Z}old/name.ts${Z}new/name.ts${Z}`));
    assert.deepEqual(records[0], {
      oldMode: '100644', newMode: '100644', oldOid: OID_A, newOid: OID_B, letter: 'R', score: 87, path: 'new/name.ts', oldPath: 'old/name.ts',
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

  it('refuses a hunk that ends before its header says', () => {
    assert.throws(() => parseSection('f', 'diff --git a/f b/f\n@@ -1,3 +1,3 @@\n a\n'), /ends early/);
  });
});
