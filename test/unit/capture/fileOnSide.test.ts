/**
 * One rule for which captured file a path names on a side (protocol/patchset.ts `fileOnSide`),
 * checked through every reader of a capture: the host's citation index, excerpts, blob reads and
 * HTML report, and the extension's documents, threads, marks and Open Changes. The captures are
 * real (a temp git repository); the ambiguous ones are put together from real captured files,
 * because git's rename detection as the capture runs it (`--find-renames`, no `-B`) never pairs
 * a rename with a new file at its old path: it reports that change as a modification plus an
 * addition (checked first). A stored capture is still read by this rule, whatever shape it has.
 */
import assert from 'node:assert/strict';
import { buildCitationIndex } from '../../../host/board/citations';
import { readCapturedBlob } from '../../../host/capture/blob';
import { capturePatchset } from '../../../host/capture/capture';
import { openRepo } from '../../../host/capture/repo';
import { buildExcerpts } from '../../../host/generation/excerpts';
import { citedLines, fileForCitation } from '../../../host/review/html';
import { citationsOfDocument } from '../../../extension/citationMarksPlan';
import { commentingSpans, resolveDocument, spanIsOn } from '../../../extension/commentsPlan';
import { findChangedFile } from '../../../extension/openChangesPlan';
import { fileOnSide, pathOnSide, hasSide, Patchset as PatchsetSchema, type FileChange, type Patchset, type Side } from '../../../protocol/patchset';
import type { CitationMark } from '../../../protocol/review';
import type { CaptureTarget as Target } from '../../../protocol/session';
import { TestRepo } from '../../fixtures/gitRepo';

const lines = (prefix: string, n: number, edit: Record<number, string> = {}) => Array.from({ length: n }, (_, i) => edit[i + 1] ?? `${prefix} line ${i + 1}`).join('\n') + '\n';

/** Which file of the capture a (path, side) must name, by the file's own description. */
type Expected = [path: string, side: Side, file: string | null];

describe('one rule for the file a path names on a side, for every reader of a capture', function () {
  this.timeout(60_000);
  let repo: TestRepo;
  /** Real captures of the repository below. */
  let renamed: Patchset;
  let added: Patchset;
  let deleted: Patchset;
  let both: Patchset;

  async function capture(target: Target): Promise<Patchset> {
    const handle = await openRepo(repo.dir);
    assert.ok(handle.ok);
    const result = await capturePatchset(handle.value, target);
    assert.ok(result.ok, result.ok ? '' : result.error.message);
    return PatchsetSchema.parse(result.value);
  }

  before(async () => {
    repo = new TestRepo();
    repo.write('keep.txt', lines('keep', 3));
    repo.commit('before a.txt');
    repo.branch('pre');
    repo.checkout('main');
    repo.write('a.txt', lines('alpha', 30));
    repo.commit('a.txt');
    // a.txt renamed to b.txt, line 7 edited.
    repo.branch('renamed', 'main');
    repo.remove('a.txt');
    repo.write('b.txt', lines('alpha', 30, { 7: 'alpha line 7 (renamed)' }));
    repo.commit('rename');
    // A new a.txt, on a base that never had one.
    repo.branch('fresh', 'pre');
    repo.write('a.txt', lines('fresh', 12));
    repo.commit('fresh a.txt');
    // a.txt deleted.
    repo.branch('dropped', 'main');
    repo.remove('a.txt');
    repo.commit('drop a.txt');
    // a.txt renamed to b.txt and a new a.txt in one change.
    repo.branch('both', 'main');
    repo.remove('a.txt');
    repo.write('b.txt', lines('alpha', 30, { 7: 'alpha line 7 (renamed)' }));
    repo.write('a.txt', lines('fresh', 12));
    repo.commit('rename and re-add');
    renamed = await capture({ kind: 'branch', base: 'main', head: 'renamed' });
    added = await capture({ kind: 'branch', base: 'pre', head: 'fresh' });
    deleted = await capture({ kind: 'branch', base: 'main', head: 'dropped' });
    both = await capture({ kind: 'branch', base: 'main', head: 'both' });
  });

  after(() => repo.cleanup());

  const only = (ps: Patchset): FileChange => {
    assert.equal(ps.files.length, 1, ps.files.map((f) => `${f.status} ${f.path}`).join(', '));
    return ps.files[0] as FileChange;
  };
  const describeFile = (f: FileChange) => `${f.status} ${f.oldPath ? `${f.oldPath} → ` : ''}${f.path}`;
  /** A capture holding these (real, captured) files. */
  const composed = (id: string, files: FileChange[]): Patchset => PatchsetSchema.parse({ ...renamed, id, files });

  it('git, as the capture runs it, reports a rename beside a new file at the old path as a modification and an addition', () => {
    assert.deepEqual(both.files.map(describeFile).sort(), ['added b.txt', 'modified a.txt']);
    assert.equal(describeFile(only(renamed)), 'renamed a.txt → b.txt');
    assert.equal(describeFile(only(added)), 'added a.txt');
    assert.equal(describeFile(only(deleted)), 'deleted a.txt');
  });

  const cases: Array<{ name: string; patchset: () => Patchset; expected: Expected[] }> = [
    {
      name: 'a.txt renamed to b.txt, and a new a.txt added',
      patchset: () => composed('ps-rename-and-new', [only(renamed), only(added)]),
      expected: [
        ['a.txt', 'head', 'added a.txt'],
        ['a.txt', 'base', 'renamed a.txt → b.txt'],
        ['b.txt', 'head', 'renamed a.txt → b.txt'],
        // A rename's base may be named by its new path too (citations do).
        ['b.txt', 'base', 'renamed a.txt → b.txt'],
      ],
    },
    {
      name: 'the same, files listed the other way round',
      patchset: () => composed('ps-new-and-rename', [only(added), only(renamed)]),
      expected: [
        ['a.txt', 'head', 'added a.txt'],
        ['a.txt', 'base', 'renamed a.txt → b.txt'],
        ['b.txt', 'head', 'renamed a.txt → b.txt'],
        ['b.txt', 'base', 'renamed a.txt → b.txt'],
      ],
    },
    {
      name: 'a.txt deleted and a new a.txt added (how a type change may be listed)',
      patchset: () => composed('ps-deleted-and-new', [only(deleted), only(added)]),
      expected: [
        ['a.txt', 'head', 'added a.txt'],
        ['a.txt', 'base', 'deleted a.txt'],
      ],
    },
    {
      name: 'the real capture of a rename beside a new a.txt',
      patchset: () => both,
      expected: [
        ['a.txt', 'head', 'modified a.txt'],
        ['a.txt', 'base', 'modified a.txt'],
        ['b.txt', 'head', 'added b.txt'],
        ['b.txt', 'base', null],
      ],
    },
    {
      name: 'a plain rename',
      patchset: () => renamed,
      expected: [
        ['a.txt', 'head', null],
        ['a.txt', 'base', 'renamed a.txt → b.txt'],
        ['b.txt', 'head', 'renamed a.txt → b.txt'],
        ['b.txt', 'base', 'renamed a.txt → b.txt'],
      ],
    },
  ];

  for (const { name, patchset, expected } of cases) {
    it(`${name}: every reader names the same file per side`, async () => {
      const ps = patchset();
      const index = buildCitationIndex(ps);
      for (const [path, side, want] of expected) {
        const at = `${path} (${side})`;
        const file = want === null ? undefined : ps.files.find((f) => describeFile(f) === want);
        assert.ok(want === null || file, `${want} is not in the capture`);

        // protocol: the rule itself, and the extension's and the HTML report's lookups.
        assert.equal(fileOnSide(ps.files, path, side), file, `fileOnSide ${at}`);
        assert.equal(findChangedFile(ps.files, path, side), file, `findChangedFile ${at}`);
        assert.equal(fileForCitation(ps, path, side), file, `fileForCitation ${at}`);
        assert.equal(citedLines(ps, { path, side, start: 1, end: 1, hunkIds: [] }).file, file, `citedLines ${at}`);

        // The host's blob read: the named file's blob on that side, or a refusal.
        const blob = await readCapturedBlob(repo.dir, ps, path, side);
        if (file) {
          assert.ok(blob.ok, `readCapturedBlob ${at}: ${blob.ok ? '' : blob.error.message}`);
          assert.equal(blob.value.oid, side === 'base' ? file.oldOid : file.newOid, `readCapturedBlob ${at}`);
        } else assert.equal(blob.ok, false, `readCapturedBlob ${at} read something`);

        // The citation index and the excerpts: a changed line of the named file's side resolves to its hunk.
        const line = file?.regions.find((r) => r.side === side)?.startLine ?? 1;
        const resolution = index.resolve(path, side, line, line);
        const excerpt = Object.values(buildExcerpts(ps, [{ path, side, startLine: line, endLine: line }]))[0];
        if (file) {
          assert.ok(resolution.ok, `citation ${at}:${line}: ${resolution.ok ? '' : resolution.message}`);
          assert.ok(resolution.hunkIds.every((id) => file.hunks.some((h) => h.id === id)) && resolution.hunkIds.length === 1, `citation ${at}:${line} resolved to another file's hunk`);
          assert.equal(resolution.path, pathOnSide(file, side), `citation ${at}: the side's own name`);
          assert.equal(excerpt?.state, 'captured', `excerpt ${at}: ${excerpt?.note}`);
          const ownLines = new Set(file.hunks.flatMap((h) => h.lines.map((l) => JSON.stringify(l))));
          assert.ok(excerpt.lines.length > 0 && excerpt.lines.every((l) => ownLines.has(JSON.stringify(l))), `excerpt ${at} shows another file's lines`);
        } else {
          assert.equal(resolution.ok, false, `citation ${at} resolved`);
          assert.notEqual(excerpt?.state, 'captured', `excerpt ${at}`);
        }

        // The extension: the document of (path, side) shows the named file ...
        const blobDoc = resolveDocument({ kind: 'blob', patchsetId: ps.id, path, side }, ps, () => undefined);
        if (file || !blobDoc.ok) assert.equal(blobDoc.ok ? blobDoc.value.file : undefined, file, `blob document ${at}`);
        else {
          // Only a file that lacks this side may stand behind such a document, showing no lines.
          assert.equal(hasSide(blobDoc.value.file, side), false, `blob document ${at} shows ${describeFile(blobDoc.value.file)}`);
          assert.deepEqual(commentingSpans(blobDoc.value, ps.id), [], `blob document ${at} takes asks`);
        }
        if (side === 'head') {
          const checkout = resolveDocument({ kind: 'workspace', path }, ps, () => undefined);
          assert.equal(checkout.ok ? checkout.value.file : undefined, file, `checkout document ${path}`);
        }
        // ... and a span or citation of (path, side) lands on that file's documents of this side only.
        const mark: CitationMark = { lens: 'flagged', elementId: 'e1', path, side, startLine: line, endLine: line, claim: 'c' };
        for (const other of ps.files.filter((f) => hasSide(f, side))) {
          for (const name of new Set([pathOnSide(other, side), other.path])) {
            const shown = resolveDocument({ kind: 'blob', patchsetId: ps.id, path: name, side }, ps, () => undefined);
            if (!shown.ok || shown.value.file !== other) continue;
            const lands = other === file;
            assert.equal(spanIsOn({ patchsetId: ps.id, path, side }, shown.value), lands, `ask on ${at} drawn on ${name} (${describeFile(other)})`);
            assert.equal(citationsOfDocument([mark], { path: name, side }, ps.files).length, lands ? 1 : 0, `mark of ${at} drawn on ${name} (${describeFile(other)})`);
          }
        }
      }
    });
  }
});
