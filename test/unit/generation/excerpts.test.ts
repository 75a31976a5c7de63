import assert from 'node:assert/strict';
import { buildExcerpts, type ExcerptSpan } from '../../../host/generation/excerpts';
import type { DiffLine, Patchset } from '../../../protocol/patchset';
import { CodeExcerpt, EXCERPT_MAX_LINES, excerptKey } from '../../../protocol/review';
import { TestRepo } from '../../fixtures/gitRepo';
import { capture, changeFixture, fileOf, lines, type ChangeFixture } from '../board/writerFixtures';

/** Excerpts over real captures of real temp repositories (host/generation/excerpts.ts). */

const span = (path: string, side: 'base' | 'head', startLine: number, endLine = startLine): ExcerptSpan => ({ path, side, startLine, endLine });

function one(patchset: Patchset | null, s: ExcerptSpan, options?: Parameters<typeof buildExcerpts>[2]): CodeExcerpt {
  const all = buildExcerpts(patchset, [s], options);
  const excerpt = all[excerptKey(s)];
  assert.ok(excerpt, `no excerpt under ${excerptKey(s)}`);
  CodeExcerpt.parse(excerpt);
  return excerpt;
}

/** `kind old/new text` per line, the way a reader scans a diff. */
const rows = (ls: readonly DiffLine[]) => ls.map((l) => `${l.kind === 'add' ? '+' : l.kind === 'del' ? '-' : ' '}${l.oldLine ?? '·'}/${l.newLine ?? '·'} ${l.text}`);

describe('generation/excerpts: captured lines for cited spans (real captures)', function () {
  this.timeout(60_000);
  let fixture: ChangeFixture;
  before(async () => {
    fixture = await changeFixture();
  });
  after(() => fixture?.repo.cleanup());

  it('takes the one hunk over a head span, with three lines of context and the deletion it replaces', () => {
    const excerpt = one(fixture.patchset, span('src/app.ts', 'head', 10));
    assert.equal(excerpt.state, 'captured');
    assert.equal(excerpt.note, null);
    assert.equal(excerpt.clipped, false);
    assert.deepEqual(rows(excerpt.lines), [' 7/7 line 7', ' 8/8 line 8', ' 9/9 line 9', '-10/· line 10', '+·/10 line ten', ' 11/11 line 11', ' 12/12 line 12', ' 13/13 line 13']);
  });

  it('reads a file of several hunks hunk by hunk: a span in the second takes nothing of the first', () => {
    const second = one(fixture.patchset, span('src/app.ts', 'head', 31));
    assert.deepEqual(rows(second.lines), [' 28/28 line 28', ' 29/29 line 29', ' 30/30 line 30', '+·/31 line 30b', ' 31/32 line 31', ' 32/33 line 32', ' 33/34 line 33']);
    // A span over both hunks (no validated citation does this, a frozen board might) takes both, in order.
    const both = one(fixture.patchset, span('src/app.ts', 'head', 10, 31));
    const news = both.lines.map((l) => l.newLine).filter((n): n is number => n !== null);
    assert.deepEqual(news, [7, 8, 9, 10, 11, 12, 13, 28, 29, 30, 31, 32, 33, 34]);
    assert.ok(
      both.lines.some((l) => l.kind === 'del' && l.oldLine === 10),
      'the first hunk’s deletion sits inside the span',
    );
  });

  it('numbers a base span by old lines: a deletion-only span keeps the addition that replaced it', () => {
    const excerpt = one(fixture.patchset, span('src/app.ts', 'base', 10));
    assert.deepEqual(rows(excerpt.lines), [' 7/7 line 7', ' 8/8 line 8', ' 9/9 line 9', '-10/· line 10', '+·/10 line ten', ' 11/11 line 11', ' 12/12 line 12', ' 13/13 line 13']);
    // A head span on the hunk's first line: the window ends three lines on, so 11–13 stay out.
    assert.deepEqual(rows(one(fixture.patchset, span('src/app.ts', 'head', 7)).lines), [' 7/7 line 7', ' 8/8 line 8', ' 9/9 line 9', '-10/· line 10', '+·/10 line ten']);
  });

  it('a deleted file: its base span is all deletions; its head side is stated, not empty', () => {
    const excerpt = one(fixture.patchset, span('src/gone.ts', 'base', 3, 4));
    assert.equal(excerpt.state, 'captured');
    assert.deepEqual(rows(excerpt.lines), ['-1/· gone 1', '-2/· gone 2', '-3/· gone 3', '-4/· gone 4', '-5/· gone 5', '-6/· gone 6', '-7/· gone 7']);
    const head = one(fixture.patchset, span('src/gone.ts', 'head', 1));
    assert.equal(head.state, 'not-captured');
    assert.deepEqual(head.lines, []);
    assert.match(head.note ?? '', /src\/gone\.ts was deleted by this change, so it has no head side/);
  });

  it('an added file: its head span is all additions; its base side is stated', () => {
    const excerpt = one(fixture.patchset, span('src/added.ts', 'head', 2, 3));
    assert.deepEqual(rows(excerpt.lines), ['+·/1 added 1', '+·/2 added 2', '+·/3 added 3', '+·/4 added 4', '+·/5 added 5']);
    const base = one(fixture.patchset, span('src/added.ts', 'base', 2));
    assert.equal(base.state, 'not-captured');
    assert.match(base.note ?? '', /added by this change, so it has no base side/);
  });

  it('a rename: the head span by its new name, the base span by its old name (or its new one)', () => {
    const head = one(fixture.patchset, span('src/new_name.ts', 'head', 15));
    assert.deepEqual(rows(head.lines), [
      ' 12/12 old content 12',
      ' 13/13 old content 13',
      ' 14/14 old content 14',
      '-15/· old content 15',
      '+·/15 new content 15',
      ' 16/16 old content 16',
      ' 17/17 old content 17',
      ' 18/18 old content 18',
    ]);
    const byOldName = one(fixture.patchset, span('src/old_name.ts', 'base', 15));
    assert.equal(byOldName.path, 'src/old_name.ts', 'the excerpt keeps the name the span used');
    assert.deepEqual(rows(byOldName.lines), rows(head.lines));
    assert.deepEqual(rows(one(fixture.patchset, span('src/new_name.ts', 'base', 15)).lines), rows(head.lines));
    const oldHead = one(fixture.patchset, span('src/old_name.ts', 'head', 15));
    assert.equal(oldHead.state, 'not-captured');
    assert.match(oldHead.note ?? '', /renamed to src\/new_name\.ts/);
  });

  it('binary files and submodules have their own states and say why there are no lines', () => {
    const binary = one(fixture.patchset, span('assets/logo.png', 'head', 1));
    assert.equal(binary.state, 'binary');
    assert.deepEqual(binary.lines, []);
    assert.match(binary.note ?? '', /assets\/logo\.png is a binary file/);
    const submodule = one(fixture.patchset, span('vendor/sub', 'head', 1));
    assert.equal(submodule.state, 'submodule');
    assert.match(submodule.note ?? '', /vendor\/sub is a submodule/);
  });

  it('a path outside the capture, or a range no hunk covers, is not-captured with its reason', () => {
    const unknown = one(fixture.patchset, span('src/nowhere.ts', 'head', 1));
    assert.equal(unknown.state, 'not-captured');
    assert.match(unknown.note ?? '', /src\/nowhere\.ts is not a changed file of this capture/);
    const between = one(fixture.patchset, span('src/app.ts', 'head', 20, 21));
    assert.equal(between.state, 'not-captured');
    assert.deepEqual(between.lines, []);
    assert.match(between.note ?? '', /No captured hunk of src\/app\.ts covers head lines 20–21/);
  });

  it('a file over the size limit: truncated, naming the limit', () => {
    const huge = fileOf(fixture.truncated, 'big/huge.txt');
    assert.equal(huge.truncation?.reason, 'file-size');
    const excerpt = one(fixture.truncated, span('big/huge.txt', 'head', 200));
    assert.equal(excerpt.state, 'truncated');
    assert.deepEqual(excerpt.lines, []);
    assert.match(excerpt.note ?? '', /big\/huge\.txt is over the 2 KiB file-size limit/);
  });

  it('a patch over its limit: kept hunks read as captured, the tail is truncated, a span across both keeps the captured part', () => {
    const many = fileOf(fixture.truncated, 'many.txt');
    assert.equal(many.truncation?.reason, 'patch-size');
    const tail = many.truncation?.tailFrom.head as number;
    const kept = many.hunks[0]!;
    const changed = kept.lines.find((l) => l.kind === 'add')!.newLine as number;
    const inKept = one(fixture.truncated, span('many.txt', 'head', changed));
    assert.equal(inKept.state, 'captured');
    assert.ok(inKept.lines.some((l) => l.kind === 'add' && l.newLine === changed));
    const inTail = one(fixture.truncated, span('many.txt', 'head', tail + 5));
    assert.equal(inTail.state, 'truncated');
    assert.deepEqual(inTail.lines, []);
    assert.match(inTail.note ?? '', new RegExp(`Lines from ${tail} of many\\.txt were not captured: its patch is over the 1,000-byte per-file limit`));
    const lastKept = many.hunks[many.hunks.length - 1]!;
    const across = one(fixture.truncated, span('many.txt', 'head', lastKept.newStart, tail + 2));
    assert.equal(across.state, 'truncated');
    assert.ok(across.lines.length > 0, 'the captured lines before the tail are kept');
    assert.ok(across.lines.every((l) => l.newLine === null || l.newLine < tail));
    assert.match(across.note ?? '', /The lines before it are shown/);
  });

  it('builds each key once, in the order given, and states a missing capture on every excerpt', () => {
    const spans = [span('src/app.ts', 'head', 10), span('src/app.ts', 'head', 10), span('src/added.ts', 'head', 1)];
    const excerpts = buildExcerpts(fixture.patchset, spans);
    assert.deepEqual(Object.keys(excerpts), ['head|10-10|src/app.ts', 'head|1-1|src/added.ts']);
    const missing = buildExcerpts(null, spans, { missingReason: 'The capture ps-x is not in the store.' });
    assert.deepEqual(
      Object.values(missing).map((e) => [e.state, e.lines.length, e.note]),
      [
        ['not-captured', 0, 'The capture ps-x is not in the store.'],
        ['not-captured', 0, 'The capture ps-x is not in the store.'],
      ],
    );
  });

  it('past the generation budget, later excerpts are omitted and say so; stated states still show', () => {
    const spans = [span('src/app.ts', 'head', 10), span('src/app.ts', 'head', 31), span('assets/logo.png', 'head', 1), span('src/added.ts', 'head', 1)];
    const excerpts = buildExcerpts(fixture.patchset, spans, { budgetLines: 10 });
    assert.deepEqual(
      spans.map((s) => excerpts[excerptKey(s)]?.state),
      ['captured', 'omitted', 'binary', 'omitted'],
      'once the budget is spent, later excerpts with lines are omitted even when they would fit',
    );
    const omitted = excerpts[excerptKey(spans[1]!)]!;
    assert.deepEqual(omitted.lines, []);
    assert.match(omitted.note ?? '', /not sent: this generation's excerpts already carry the 10-line limit/);
  });
});

describe('generation/excerpts: clipping a long span', function () {
  this.timeout(60_000);
  let repo: TestRepo;
  after(() => repo?.cleanup());

  it(`cuts an excerpt at EXCERPT_MAX_LINES (${EXCERPT_MAX_LINES}) and says how many it had`, async () => {
    repo = new TestRepo();
    repo.write('README.md', 'r\n').commit('base');
    repo.branch('feature').write('src/long.ts', lines(450, 'long')).commit('long file');
    const patchset = await capture(repo);
    const excerpt = one(patchset, span('src/long.ts', 'head', 1, 450));
    assert.equal(excerpt.state, 'captured');
    assert.equal(excerpt.clipped, true);
    assert.equal(excerpt.lines.length, EXCERPT_MAX_LINES);
    assert.equal(excerpt.lines[0]?.newLine, 1);
    assert.equal(excerpt.lines[EXCERPT_MAX_LINES - 1]?.newLine, EXCERPT_MAX_LINES);
    assert.match(excerpt.note ?? '', /Showing the first 400 of 450 lines/);
    const short = one(patchset, span('src/long.ts', 'head', 100, 102));
    assert.equal(short.clipped, false);
    assert.equal(short.lines.length, 9);
  });
});
