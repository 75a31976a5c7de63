import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { documentRef, isReviewDocumentScheme } from '../../../extension/documentRefs';
import { parseRoundUri, planRoundDiff, ROUND_SCHEME, roundDiffEntry, roundUriParts, type RoundAddress } from '../../../extension/roundDiffPlan';
import type { RoundDiffFiles } from '../../../protocol/rounds';

/**
 * A round's own diff as the extension opens it (pure half): the `rennet-round:` addresses of each
 * side, the multi-file diff's tuples (the empty stand-in for an added file's before and a deleted
 * file's after, a rename's before under its old path), where one piece of evidence opens, and that
 * these documents are never the review's (no commenting ranges, no threads, no marks).
 */
describe('extension/roundDiffPlan: a round’s own diff, read-only', () => {
  const FROM = '1111111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
  const TO = '2222222bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
  const round = { id: 'r-3', ordinal: 3 };
  const diff = (files: RoundDiffFiles['files']): RoundDiffFiles => ({ roundId: 'r-3', ordinal: 3, from: FROM, to: TO, files });
  const files: RoundDiffFiles['files'] = [
    { path: 'src/app.js', oldPath: null, status: 'modified' },
    { path: 'src/new.js', oldPath: null, status: 'added' },
    { path: 'old.txt', oldPath: null, status: 'deleted' },
    { path: 'docs/b.md', oldPath: 'docs/a.md', status: 'renamed' },
  ];
  const at = (path: string, side: RoundAddress['side']): RoundAddress => ({ sessionId: 's-1', roundId: 'r-3', path, side });

  it('plans every changed file as [resource, before, after], with empty stand-ins and a rename’s old path', () => {
    const plan = planRoundDiff('s-1', round, diff(files));
    assert.equal(plan.kind, 'changes');
    if (plan.kind !== 'changes') return;
    assert.equal(plan.title, 'Round 3 · 1111111..2222222 (read-only)');
    assert.deepEqual(
      plan.entries.map((e) => [e.label, e.original, e.modified]),
      [
        [at('src/app.js', 'head'), at('src/app.js', 'base'), at('src/app.js', 'head')],
        [at('src/new.js', 'head'), at('src/new.js', 'absent'), at('src/new.js', 'head')],
        [at('old.txt', 'base'), at('old.txt', 'base'), at('old.txt', 'absent')],
        [at('docs/b.md', 'head'), at('docs/a.md', 'base'), at('docs/b.md', 'head')],
      ],
    );
  });

  it('opens evidence where its line means what it says: the after side in the file’s diff, a before line in the before document', () => {
    const head = planRoundDiff('s-1', round, diff(files), { path: 'src/app.js', side: 'head', line: 12 });
    assert.deepEqual(head, { kind: 'diff', title: 'src/app.js · round 3 · 1111111..2222222 (read-only)', entry: roundDiffEntry('s-1', 'r-3', files[0]!), line: 12 });
    assert.deepEqual(planRoundDiff('s-1', round, diff(files), { path: 'old.txt', side: 'base', line: 4 }), { kind: 'before', address: at('old.txt', 'base'), line: 4 });
    assert.deepEqual(planRoundDiff('s-1', round, diff(files), { path: 'docs/a.md', side: 'base', line: 2 }), { kind: 'before', address: at('docs/a.md', 'base'), line: 2 });
    const renamed = planRoundDiff('s-1', round, diff(files), { path: 'docs/b.md', side: 'head', line: null });
    assert.equal(renamed.kind, 'diff');
    if (renamed.kind === 'diff') assert.equal(renamed.line, null);
    const baseNoLine = planRoundDiff('s-1', round, diff(files), { path: 'src/app.js', side: 'base', line: null });
    assert.equal(baseNoLine.kind, 'diff', 'a before-side unit without a line opens the file’s diff');
    const deletedBinary = planRoundDiff('s-1', round, diff(files), { path: 'old.txt', side: 'head', line: null });
    assert.equal(deletedBinary.kind, 'diff', 'a unit without a line names its file on either side (a deleted binary)');
    if (deletedBinary.kind === 'diff') assert.deepEqual(deletedBinary.entry.modified, at('old.txt', 'absent'));
  });

  it('says why there is nothing to open: no file changed, or a path the round did not change on that side', () => {
    assert.deepEqual(planRoundDiff('s-1', round, diff([])), { kind: 'none', message: "Round 3's commits (1111111..2222222) change no file." });
    const notChanged = planRoundDiff('s-1', round, diff(files), { path: 'README.md', side: 'head', line: 1 });
    assert.equal(notChanged.kind, 'none');
    assert.equal(planRoundDiff('s-1', round, diff(files), { path: 'old.txt', side: 'head', line: 1 }).kind, 'none', 'a deleted file has no after side');
    assert.equal(planRoundDiff('s-1', round, diff(files), { path: 'src/new.js', side: 'base', line: 1 }).kind, 'none', 'an added file has no before side');
    assert.equal(planRoundDiff('s-1', round, diff(files), { path: 'docs/b.md', side: 'base', line: 1 }).kind, 'none', 'a rename’s before side is its old path');
  });

  it('titles are UI text: a hostile path renders no link or icon', () => {
    const hostile = '](command:rennet.x) $(alert).js';
    const plan = planRoundDiff('s-1', round, diff([{ path: hostile, oldPath: null, status: 'modified' }]), { path: hostile, side: 'head', line: 1 });
    assert.equal(plan.kind, 'diff');
    if (plan.kind !== 'diff') return;
    assert.ok(!plan.title.includes(']('), plan.title);
    assert.ok(!plan.title.includes('$('), plan.title);
  });

  it('round addresses survive their URI, and malformed or escaping ones are refused', () => {
    for (const address of [at('src/app.js', 'head'), at('docs/a b.md', 'base'), at('gone.txt', 'absent')]) {
      const parts = roundUriParts(address);
      assert.equal(parts.scheme, ROUND_SCHEME);
      assert.deepEqual(parseRoundUri(parts), address);
    }
    assert.equal(parseRoundUri({ scheme: ROUND_SCHEME, path: '/../etc/passwd', query: 'session=s-1&round=r-3&side=head' }), null);
    assert.equal(parseRoundUri({ scheme: ROUND_SCHEME, path: '/a.js', query: 'session=s-1&side=head' }), null);
    assert.equal(parseRoundUri({ scheme: ROUND_SCHEME, path: '/a.js', query: 'session=s-1&round=r-3&side=middle' }), null);
    assert.equal(parseRoundUri({ scheme: 'rennet-blob', path: '/a.js', query: 'session=s-1&round=r-3&side=head' }), null);
  });

  it('a round’s documents are not the review’s: no commenting ranges, threads or marks there', () => {
    assert.equal(isReviewDocumentScheme(ROUND_SCHEME), false);
    assert.equal(isReviewDocumentScheme('rennet-work-order'), false);
    assert.equal(isReviewDocumentScheme('untitled'), false);
    assert.equal(isReviewDocumentScheme('file'), true);
    assert.equal(isReviewDocumentScheme('rennet-blob'), true);
    const parts = roundUriParts(at('src/app.js', 'head'));
    assert.equal(documentRef({ ...parts, fsPath: parts.path }, '/r/repo'), null, 'no captured file, side or capture is read from a round document');
  });

  it('the comment controller asks for commenting ranges only on the review’s own documents', () => {
    // The one wiring the pure predicate cannot prove: comments.ts's range provider and its drawing
    // loop both gate on isReviewDocumentScheme before anything else.
    const source = readFileSync(join(__dirname, '../../../extension/comments.ts'), 'utf8');
    const ranges = /private async commentingRanges\(document: vscode\.TextDocument\)[^{]*\{([\s\S]*?)\n {2}\}/.exec(source);
    assert.ok(ranges, 'commentingRanges is found');
    const body = ranges[1] ?? '';
    const gate = body.indexOf('if (!isReviewDocumentScheme(document.uri.scheme)) return [];');
    assert.ok(gate >= 0, 'commentingRanges returns none for other schemes');
    assert.ok(gate < body.indexOf('stagingTarget'), 'before it resolves anything');
    assert.ok(
      /for \(const document of vscode\.workspace\.textDocuments\) \{\s*if \(!isReviewDocumentScheme\(document\.uri\.scheme\)\) continue;/.test(source),
      'threads are drawn only on the review’s documents',
    );
  });
});
