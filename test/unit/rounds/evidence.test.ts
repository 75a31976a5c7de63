import assert from 'node:assert/strict';
import { capturePatchset } from '../../../host/capture/capture';
import { openRepo } from '../../../host/capture/repo';
import { NO_NEWLINE_MARKER, checkManifestLimits, comparePaths, evidenceManifest, hunkBody, manifestBytes, serializeManifest } from '../../../host/rounds/evidence';
import type { CaptureOptions, FileChange, Hunk, Patchset } from '../../../protocol/patchset';
import { Patchset as PatchsetSchema } from '../../../protocol/patchset';
import { EVIDENCE_KIND_ORDER, EVIDENCE_MANIFEST_MAX_BYTES, EVIDENCE_MANIFEST_MAX_ENTRIES, EvidenceUnit as EvidenceUnitSchema, type EvidenceUnit } from '../../../protocol/rounds';
import { TestRepo } from '../../fixtures/gitRepo';

const lines = (n: number, prefix = 'line') => Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}`).join('\n') + '\n';

const UNICODE_PATH = 'ünï cödé/naïve file.txt';
const SPACED_PATH = 'dir with space/notes.md';

/** The base commit: every file the feature branch changes, each distinct enough that git pairs renames right. */
function seedBase(r: TestRepo): void {
  r.write('src/two.ts', lines(40));
  r.write('gone.txt', lines(6, 'doomed'));
  r.write('old-name.ts', lines(20, 'movable'));
  r.write('pure-old.txt', lines(8, 'unchanged payload'));
  r.write('run.sh', '#!/bin/sh\necho run\n');
  r.write('img.bin', Buffer.from([0, 1, 2, 3, 0, 255, 254, 0, 9]));
  r.write('nonl.txt', 'alpha\nbeta\ngamma');
  r.write('crlf.txt', 'one\r\ntwo\r\nthree\r\n');
  r.write(SPACED_PATH, lines(5, 'note'));
  r.write(UNICODE_PATH, lines(5, 'ünïcode'));
}

/** The feature commit: one change of every kind the manifest knows. */
function applyFeature(r: TestRepo): void {
  r.write('src/two.ts', lines(40).replace('line 15\n', 'line fifteen\n').replace('line 30\n', 'line 30\nline 30b\n'));
  r.remove('gone.txt');
  r.remove('old-name.ts');
  r.write('new-name.ts', lines(20, 'movable').replace('movable 10\n', 'movable ten\n'));
  r.remove('pure-old.txt');
  r.write('pure-new.txt', lines(8, 'unchanged payload'));
  r.chmod('run.sh', 0o755);
  r.write('img.bin', Buffer.from([0, 1, 2, 3, 0, 255, 254, 0, 10, 11]));
  r.write('nonl.txt', 'alpha\nbeta\nGAMMA');
  r.write('crlf.txt', 'one\r\nTWO\r\nthree\r\n');
  r.write(SPACED_PATH, lines(5, 'note').replace('note 3\n', 'note three\n'));
  r.write(UNICODE_PATH, lines(5, 'ünïcode').replace('ünïcode 2\n', 'ÜNÏCODE 2\n'));
  r.write('added.ts', 'export const added = 1;\n');
  r.write('Zeta.txt', 'upper case sorts before lower case by code unit\n');
}

const repos: TestRepo[] = [];

function buildRepo(): TestRepo {
  const r = new TestRepo();
  repos.push(r);
  seedBase(r);
  r.commit('base');
  r.branch('feature');
  applyFeature(r);
  r.commit('feature');
  return r;
}

async function capture(r: TestRepo, options?: Partial<CaptureOptions>): Promise<Patchset> {
  const handle = await openRepo(r.dir);
  assert.ok(handle.ok);
  const result = await capturePatchset(handle.value, { kind: 'branch', head: 'feature', base: 'main' }, options);
  assert.ok(result.ok, result.ok ? '' : result.error.message);
  return PatchsetSchema.parse(result.value);
}

function manifestOf(patchset: Patchset): EvidenceUnit[] {
  const result = evidenceManifest(patchset.files);
  assert.ok(result.ok, result.ok ? '' : result.error.message);
  return result.value;
}

function fileAt(patchset: Patchset, path: string): FileChange {
  const file = patchset.files.find((f) => f.path === path);
  assert.ok(file, `${path} not captured: [${patchset.files.map((f) => f.path).join(', ')}]`);
  return file;
}

function textHunks(units: readonly EvidenceUnit[], path: string): Array<Extract<EvidenceUnit, { kind: 'text-hunk' }>> {
  return units.filter((u): u is Extract<EvidenceUnit, { kind: 'text-hunk' }> => u.kind === 'text-hunk' && u.path === path);
}

describe('host/rounds/evidence: the manifest over real captured diffs', function () {
  this.timeout(60_000);
  after(() => repos.forEach((r) => r.cleanup()));

  let patchset: Patchset;
  let manifest: EvidenceUnit[];
  before(async () => {
    patchset = await capture(buildRepo());
    manifest = manifestOf(patchset);
  });

  it('gives every change its units: renames, mode changes, binaries, one unit per hunk (a moved and edited file gives both)', () => {
    const kindsByPath = new Map<string, string[]>();
    for (const unit of manifest) kindsByPath.set(unit.path, [...(kindsByPath.get(unit.path) ?? []), unit.kind]);
    assert.deepEqual(Object.fromEntries(kindsByPath), {
      'Zeta.txt': ['text-hunk'],
      'added.ts': ['text-hunk'],
      'crlf.txt': ['text-hunk'],
      [SPACED_PATH]: ['text-hunk'],
      'gone.txt': ['text-hunk'],
      'img.bin': ['binary'],
      'new-name.ts': ['rename', 'text-hunk'],
      'nonl.txt': ['text-hunk'],
      'pure-new.txt': ['rename'],
      'run.sh': ['mode-change'],
      'src/two.ts': ['text-hunk', 'text-hunk'],
      [UNICODE_PATH]: ['text-hunk'],
    });
    for (const unit of manifest) assert.ok(EvidenceUnitSchema.safeParse(unit).success, `${unit.id} is not an EvidenceUnit`);
    assert.deepEqual(
      manifest.find((u) => u.kind === 'rename' && u.path === 'new-name.ts'),
      { kind: 'rename', id: manifest.find((u) => u.kind === 'rename' && u.path === 'new-name.ts')?.id, path: 'new-name.ts', previousPath: 'old-name.ts' },
    );
    const mode = manifest.find((u) => u.kind === 'mode-change');
    assert.ok(mode && mode.kind === 'mode-change');
    assert.deepEqual([mode.path, mode.oldMode, mode.newMode], ['run.sh', '100644', '100755']);
    const binary = manifest.find((u) => u.kind === 'binary');
    assert.ok(binary && binary.kind === 'binary');
    assert.deepEqual([binary.path, binary.status], ['img.bin', 'modified']);
    // The whole diff is accounted for: every captured hunk of a text file is one unit.
    const hunkCount = patchset.files.filter((f) => !f.binary && !f.submodule).reduce((n, f) => n + f.hunks.length, 0);
    assert.equal(manifest.filter((u) => u.kind === 'text-hunk').length, hunkCount);
  });

  it('orders by path in code-unit order (never locale), then kind, then hunk order', () => {
    const paths = manifest.map((u) => u.path);
    assert.equal(paths[0], 'Zeta.txt', 'upper case sorts first by code unit');
    assert.equal(paths[paths.length - 1], UNICODE_PATH, 'non-ASCII sorts last by code unit');
    for (let i = 1; i < manifest.length; i++) {
      const a = manifest[i - 1] as EvidenceUnit;
      const b = manifest[i] as EvidenceUnit;
      const byPath = comparePaths(a.path, b.path);
      assert.ok(byPath < 0 || (byPath === 0 && EVIDENCE_KIND_ORDER.indexOf(a.kind) <= EVIDENCE_KIND_ORDER.indexOf(b.kind)), `${a.id} before ${b.id}`);
    }
    const file = fileAt(patchset, 'src/two.ts');
    assert.deepEqual(
      textHunks(manifest, 'src/two.ts').map((u) => u.header),
      file.hunks.map((h) => h.header),
    );
    assert.equal(comparePaths('Z', 'a'), -1);
    assert.equal(comparePaths('é', 'z'), 1);
    assert.equal(comparePaths('a', 'a'), 0);
  });

  it('anchors each text hunk on its first added line (head), or its first deleted line (base) when it only removes', () => {
    for (const unit of manifest) {
      if (unit.kind !== 'text-hunk') continue;
      const hunk = fileAt(patchset, unit.path).hunks.find((h) => h.header === unit.header);
      assert.ok(hunk, `${unit.id}: no hunk ${unit.header} in ${unit.path}`);
      const adds = hunk.lines.filter((l) => l.kind === 'add');
      const dels = hunk.lines.filter((l) => l.kind === 'del');
      const first = adds.length > 0 ? { side: 'head', line: adds[0]?.newLine } : { side: 'base', line: dels[0]?.oldLine };
      assert.deepEqual(unit.anchor, first, `${unit.path} ${unit.header}`);
      const onLine = unit.anchor.side === 'head' ? adds.some((l) => l.newLine === unit.anchor.line) : dels.some((l) => l.oldLine === unit.anchor.line);
      assert.ok(onLine, `${unit.id}'s anchor is not a changed line of its hunk`);
      assert.equal(unit.body, hunkBody(hunk));
    }
    assert.deepEqual(textHunks(manifest, 'gone.txt')[0]?.anchor, { side: 'base', line: 1 });
    assert.deepEqual(textHunks(manifest, 'added.ts')[0]?.anchor, { side: 'head', line: 1 });
    assert.deepEqual(
      textHunks(manifest, 'src/two.ts').map((u) => u.anchor),
      [
        { side: 'head', line: 15 },
        { side: 'head', line: 31 },
      ],
    );
    assert.deepEqual(textHunks(manifest, 'new-name.ts')[0]?.anchor, { side: 'head', line: 10 });
  });

  it("writes the body verbatim: markers, CRs kept, git's no-newline line after the line it follows", () => {
    const nonl = textHunks(manifest, 'nonl.txt')[0];
    assert.ok(nonl);
    assert.equal(nonl.header, '@@ -1,3 +1,3 @@');
    assert.equal(nonl.body, [' alpha', ' beta', '-gamma', NO_NEWLINE_MARKER, '+GAMMA', NO_NEWLINE_MARKER].join('\n'));
    const crlf = textHunks(manifest, 'crlf.txt')[0];
    assert.ok(crlf);
    assert.equal(crlf.body, [' one\r', '-two\r', '+TWO\r', ' three\r'].join('\n'));
    const unicode = textHunks(manifest, UNICODE_PATH)[0];
    assert.ok(unicode?.body.includes('+ÜNÏCODE 2'));
    for (const unit of textHunks(manifest, 'src/two.ts')) {
      for (const line of unit.body.split('\n')) assert.match(line, /^[-+ ]/);
    }
  });

  it('gives the same ids for the same diff: twice from one repository, and from a second repository built alike', async () => {
    const again = manifestOf(await capture(repos[0] as TestRepo));
    assert.deepEqual(again, manifest);
    const elsewhere = manifestOf(await capture(buildRepo()));
    assert.deepEqual(elsewhere, manifest);
    assert.equal(serializeManifest(elsewhere), serializeManifest(manifest));
    for (const unit of manifest) assert.match(unit.id, /^ev-[0-9a-f]{16}$/);
  });

  it("keeps a unit's id when another file changes; re-keys a hunk when a change above it in its file moves it", async () => {
    const r = buildRepo();
    r.write('added.ts', 'export const added = 2;\n');
    r.commit('another file changes');
    const otherFile = manifestOf(await capture(r));
    const withoutAdded = (units: EvidenceUnit[]) => units.filter((u) => u.path !== 'added.ts');
    assert.deepEqual(withoutAdded(otherFile), withoutAdded(manifest));
    assert.notEqual(textHunks(otherFile, 'added.ts')[0]?.id, textHunks(manifest, 'added.ts')[0]?.id);

    r.write('src/two.ts', `line 0\n${lines(40).replace('line 15\n', 'line fifteen\n').replace('line 30\n', 'line 30\nline 30b\n')}`);
    r.commit('a line above both hunks');
    const above = manifestOf(await capture(r));
    const before = textHunks(manifest, 'src/two.ts');
    const after = textHunks(above, 'src/two.ts');
    assert.equal(after.length, 3);
    const lastBefore = before[1];
    const lastAfter = after[2];
    assert.ok(lastBefore && lastAfter);
    assert.equal(lastAfter.body, lastBefore.body, 'the same lines changed');
    assert.notEqual(lastAfter.header, lastBefore.header);
    assert.notEqual(lastAfter.id, lastBefore.id, 'a moved hunk is a different unit');
    assert.deepEqual(lastAfter.anchor, { side: 'head', line: 32 });
    // Everything outside src/two.ts keeps its id.
    const outside = (units: EvidenceUnit[]) => units.filter((u) => u.path !== 'src/two.ts').map((u) => u.id);
    assert.deepEqual(outside(above), outside(otherFile));
  });

  it('a truncated file contributes the hunks that were captured and nothing for its uncaptured tail', async () => {
    const r = new TestRepo();
    repos.push(r);
    r.write('big.txt', lines(400));
    r.write('huge.txt', lines(2000));
    r.commit('base');
    r.branch('feature');
    let big = lines(400);
    for (const n of [20, 60, 100, 140, 180, 220, 260, 300, 340, 380]) big = big.replace(`line ${n}\n`, `line ${n} changed\n`);
    r.write('big.txt', big);
    r.write('huge.txt', lines(2000).replace('line 7\n', 'line seven\n'));
    r.commit('feature');
    const truncated = await capture(r, { maxPatchBytesPerFile: 400, maxFileBytes: 12_000 });
    const bigFile = fileAt(truncated, 'big.txt');
    assert.equal(bigFile.truncation?.reason, 'patch-size');
    assert.ok(bigFile.hunks.length > 0 && bigFile.hunks.length < 10, `kept ${bigFile.hunks.length} hunks`);
    const hugeFile = fileAt(truncated, 'huge.txt');
    assert.equal(hugeFile.truncation?.reason, 'file-size');
    assert.equal(hugeFile.hunks.length, 0);
    const units = manifestOf(truncated);
    assert.deepEqual(
      textHunks(units, 'big.txt').map((u) => u.header),
      bigFile.hunks.map((h) => h.header),
    );
    assert.equal(units.filter((u) => u.path === 'huge.txt').length, 0);
  });
});

// ─── Fabricated files: the rules real git cannot reach ───────────────────────────────────────

function hunkOf(header: string, lines: Hunk['lines']): Hunk {
  return {
    id: 'h-0000000000000000',
    header,
    oldStart: 1,
    oldLines: 1,
    newStart: 1,
    newLines: 1,
    additions: lines.filter((l) => l.kind === 'add').length,
    deletions: lines.filter((l) => l.kind === 'del').length,
    lines,
  };
}

function fileOf(path: string, overrides: Partial<FileChange> = {}): FileChange {
  return {
    path,
    oldPath: null,
    status: 'modified',
    oldMode: '100644',
    newMode: '100644',
    modeChanged: false,
    oldOid: 'a'.repeat(40),
    newOid: 'b'.repeat(40),
    binary: false,
    submodule: false,
    truncated: false,
    truncation: null,
    similarity: null,
    additions: 1,
    deletions: 0,
    hunks: [hunkOf('@@ -1,0 +1 @@', [{ kind: 'add', text: 'x', oldLine: null, newLine: 1 }])],
    regions: [],
    ...overrides,
  };
}

function textUnit(index: number, body = '+x'): EvidenceUnit {
  return { kind: 'text-hunk', id: `ev-${index.toString(16).padStart(16, '0')}`, path: `f${index}.ts`, header: `@@ -0,0 +${index + 1} @@`, body, anchor: { side: 'head', line: index + 1 } };
}

describe('host/rounds/evidence: fabricated files and limits', () => {
  it('refuses a repeated id as duplicate-id, never merging the two units', () => {
    const file = fileOf('dup.ts');
    const result = evidenceManifest([file, file]);
    assert.ok(!result.ok);
    assert.equal(result.error.reason, 'duplicate-id');
    assert.match(result.error.message, /ev-[0-9a-f]{16} names two units/);
    assert.equal(result.error.detail?.path, 'dup.ts');
  });

  it('two byte-identical hunks in one file are two units: their headers differ', () => {
    const same = [{ kind: 'add' as const, text: 'same', oldLine: null, newLine: 2 }];
    const result = evidenceManifest([fileOf('twice.ts', { hunks: [hunkOf('@@ -1 +2 @@', same), hunkOf('@@ -9 +10 @@', [{ ...same[0]!, newLine: 10 }])] })]);
    assert.ok(result.ok);
    assert.equal(result.value.length, 2);
    assert.notEqual(result.value[0]?.id, result.value[1]?.id);
  });

  it('skips a context-only hunk (it changes nothing); a submodule is a status-only unit like a binary', () => {
    const contextOnly = hunkOf('@@ -1 +1 @@', [{ kind: 'context', text: 'c', oldLine: 1, newLine: 1 }]);
    const result = evidenceManifest([
      fileOf('ctx.ts', { hunks: [contextOnly] }),
      fileOf('vendor/lib', { submodule: true, oldMode: '160000', newMode: '160000', hunks: [] }),
      fileOf('moved.bin', { status: 'renamed', oldPath: 'was.bin', binary: true, hunks: [] }),
      fileOf('typed', { modeChanged: true, oldMode: '100644', newMode: null }),
    ]);
    assert.ok(result.ok);
    assert.deepEqual(
      result.value.map((u) => [u.path, u.kind]),
      [
        ['moved.bin', 'rename'],
        ['moved.bin', 'binary'],
        ['typed', 'text-hunk'],
        ['vendor/lib', 'binary'],
      ],
    );
    const submodule = result.value[3];
    assert.ok(submodule?.kind === 'binary' && submodule.status === 'modified');
  });

  it('anchors a delete-only hunk on its base side, and keeps file order within one path', () => {
    const result = evidenceManifest([
      fileOf('same.ts', {
        status: 'deleted',
        newMode: null,
        newOid: null,
        hunks: [
          hunkOf('@@ -1,2 +0,0 @@', [
            { kind: 'del', text: 'a', oldLine: 1, newLine: null },
            { kind: 'del', text: 'b', oldLine: 2, newLine: null },
          ]),
        ],
      }),
      fileOf('same.ts', { status: 'added', oldMode: null, oldOid: null }),
    ]);
    assert.ok(result.ok);
    assert.deepEqual(
      result.value.map((u) => (u.kind === 'text-hunk' ? u.anchor : null)),
      [
        { side: 'base', line: 1 },
        { side: 'head', line: 1 },
      ],
    );
  });

  it(`refuses more than ${EVIDENCE_MANIFEST_MAX_ENTRIES} units as too-large, naming the count and the limit; exactly the limit passes`, () => {
    const atLimit = Array.from({ length: EVIDENCE_MANIFEST_MAX_ENTRIES }, (_, i) => textUnit(i));
    assert.ok(checkManifestLimits(atLimit).ok);
    const over = [...atLimit, textUnit(EVIDENCE_MANIFEST_MAX_ENTRIES)];
    const result = checkManifestLimits(over);
    assert.ok(!result.ok);
    assert.equal(result.error.reason, 'too-large');
    assert.match(result.error.message, new RegExp(`${EVIDENCE_MANIFEST_MAX_ENTRIES + 1} evidence units.*at most ${EVIDENCE_MANIFEST_MAX_ENTRIES}`));
    assert.deepEqual(result.error.detail, { entries: String(EVIDENCE_MANIFEST_MAX_ENTRIES + 1), limit: String(EVIDENCE_MANIFEST_MAX_ENTRIES) });

    const manyHunks = fileOf('many.ts', {
      hunks: Array.from({ length: EVIDENCE_MANIFEST_MAX_ENTRIES + 1 }, (_, i) => hunkOf(`@@ -${i + 1},0 +${i + 1} @@`, [{ kind: 'add', text: `l${i}`, oldLine: null, newLine: i + 1 }])),
    });
    const built = evidenceManifest([manyHunks]);
    assert.ok(!built.ok, 'nothing is truncated to fit');
    assert.equal(built.error.reason, 'too-large');
  });

  it(`refuses a manifest over ${EVIDENCE_MANIFEST_MAX_BYTES} UTF-8 bytes as too-large, measured with the one serializer`, () => {
    // Multi-byte text: 'é' is 2 bytes but 1 code unit, so a length count would pass it.
    const body = `+${'é'.repeat(Math.ceil(EVIDENCE_MANIFEST_MAX_BYTES / 4))}`;
    const units = [textUnit(1, body), textUnit(2, body)];
    assert.ok(body.length * 2 < EVIDENCE_MANIFEST_MAX_BYTES, 'fewer code units than the limit');
    assert.equal(manifestBytes(units), Buffer.byteLength(serializeManifest(units)));
    assert.ok(manifestBytes(units) > EVIDENCE_MANIFEST_MAX_BYTES);
    const result = checkManifestLimits(units);
    assert.ok(!result.ok);
    assert.equal(result.error.reason, 'too-large');
    assert.equal(result.error.detail?.bytes, String(manifestBytes(units)));
    assert.equal(result.error.detail?.limit, String(EVIDENCE_MANIFEST_MAX_BYTES));
    assert.ok(checkManifestLimits([textUnit(1, body)]).ok);
  });

  it('serializes with sorted keys, so a unit read back in another key order measures and serializes the same', () => {
    const unit = textUnit(3);
    const reordered = JSON.parse(JSON.stringify({ anchor: unit.kind === 'text-hunk' ? unit.anchor : null, ...unit })) as EvidenceUnit;
    assert.equal(serializeManifest([reordered]), serializeManifest([unit]));
    assert.equal(manifestBytes([unit]), Buffer.byteLength(JSON.stringify([unit])));
  });
});
