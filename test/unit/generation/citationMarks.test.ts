import assert from 'node:assert/strict';
import { buildCitationIndex } from '../../../host/board/citations';
import { readBoard } from '../../../host/board/read';
import { emptyBoard, type BoardState, type VerbCall } from '../../../host/board/state';
import { placeNoiseMembers } from '../../../host/board/writer';
import { citationMarks, plainText } from '../../../host/generation/citationMarks';
import type { BoardElement, Lens } from '../../../protocol/board';
import { CITATION_CLAIM_MAX_CHARS, CitationMark, type LaneView } from '../../../protocol/review';
import { boardFor, build, changeFixture, cite, contextFor, type ChangeFixture } from '../board/writerFixtures';

/** Citation marks over boards written through the real writer on a real capture (host/generation/citationMarks.ts). */

const FINDING = { severity: 'major', category: 'correctness', body_markdown: 'Callers see the new text.', remedy_markdown: 'Update the callers.' };

const laneOf = (state: BoardState): LaneView => ({ lens: state.lens, state: 'settled', absence: null, failure: null, board: readBoard(state) });

/** A board from an element pool as a tampered store or an older build could hold it (not through the writer). */
function pooled(lens: Lens, patchsetId: string, pool: Array<Record<string, unknown>>): LaneView {
  const state = emptyBoard(lens, patchsetId, 'authored');
  const elements = new Map<string, BoardElement>();
  pool.forEach((input, seq) => elements.set(String(input.id), { author: 'claude', parent: null, seq, ...input } as unknown as BoardElement));
  return laneOf({ ...state, elements, nextId: pool.length + 1 });
}

const brief = (marks: readonly CitationMark[]) => marks.map((m) => `${m.lens} ${m.elementId} ${m.path}:${m.startLine}-${m.endLine} ${m.side} | ${m.claim}`);

describe('generation/citationMarks: every citation of a generation, for gutter marks', function () {
  this.timeout(60_000);
  let fx: ChangeFixture;
  before(async () => {
    fx = await changeFixture();
  });
  after(() => fx?.repo.cleanup());

  function flagged(): BoardState {
    const ctx = contextFor(fx.patchset, 'claude');
    return build(boardFor('flagged', fx.patchset), ctx, [
      { verb: 'add', kind: 'section', input: { title: 'Parsing' } },
      cite('src/app.ts', 'head', 10),
      cite('src/gone.ts', 'base', 2, 3, 'The removed helper'),
      {
        verb: 'add',
        kind: 'finding',
        input: { ...FINDING, title: '**Line ten** breaks `parse`', body_markdown: 'The caller at src/app.ts:31 still expects the old text.', anchor: ['e2', 'e3'], parent_id: 'e1' },
      },
      { verb: 'add', kind: 'finding', input: { ...FINDING, title: 'A second reading of line ten', anchor: ['e2', 'e2'], parent_id: 'e1' } },
      { verb: 'add', kind: 'prose', input: { markdown: 'See also src/added.ts:2-3.', parent_id: 'e4' } },
      cite('src/added.ts', 'head', 1, 1, 'Where the _new_ file starts'),
    ] as VerbCall[]).state;
  }

  function sequence(): BoardState {
    const ctx = contextFor(fx.patchset, 'claude');
    return build(boardFor('sequence', fx.patchset), ctx, [
      { verb: 'add', kind: 'section', input: { title: 'Reading order' } },
      cite('src/app.ts', 'head', 31),
      { verb: 'add', kind: 'order_step', input: { title: 'The new line joins the list', explanation_markdown: 'It is read with src/util/index.ts:5.', span: 'e2', parent_id: 'e1' } },
      cite('src/new_name.ts', 'head', 15),
      { verb: 'update', kind: 'code_ref', input: { id: 'e4', parent_id: 'e3' } },
    ] as VerbCall[]).state;
  }

  function noise(): BoardState {
    const ctx = contextFor(fx.patchset, 'host');
    const util = fx.patchset.files.find((f) => f.path === 'lib/index.ts')!;
    const hunk = util.hunks[0]!;
    let board = placeNoiseMembers(
      boardFor('noise', fx.patchset),
      [{ path: 'lib/index.ts', side: 'head', start_line: hunk.newStart, end_line: hunk.newStart + hunk.newLines - 1, hunk_id: hunk.id }],
      ctx,
    ).state;
    board = build(board, ctx, [
      { verb: 'add', kind: 'noise_group', input: { title: 'Case *only*', reason: 'A word changes case.' } },
      { verb: 'update', kind: 'noise_member', input: { id: 'e1', parent_id: 'e2' } },
    ] as VerbCall[]).state;
    return board;
  }

  it('marks code_refs at the elements that cite them, prose citations at their claim, noise regions with their group', () => {
    const lanes = [laneOf(noise()), laneOf(flagged()), laneOf(sequence())];
    const marks = citationMarks(lanes, { citations: buildCitationIndex(fx.patchset) });
    for (const mark of marks) CitationMark.parse(mark);
    assert.deepEqual(brief(marks), [
      // Sequence first (canonical order), whatever order the lanes came in.
      'sequence e3 src/app.ts:31-31 head | The new line joins the list',
      'sequence e3 src/util/index.ts:5-5 head | The new line joins the list',
      // A code_ref nothing references, under a step, lands on the step.
      'sequence e3 src/new_name.ts:15-15 head | The new line joins the list',
      'flagged e4 src/app.ts:10-10 head | Line ten breaks parse',
      'flagged e4 src/gone.ts:2-3 base | Line ten breaks parse',
      'flagged e4 src/app.ts:31-31 head | Line ten breaks parse',
      // The same code_ref cited by a second finding is marked for it too; its repeated anchor once.
      'flagged e5 src/app.ts:10-10 head | A second reading of line ten',
      // Prose under a finding lands on the finding.
      'flagged e4 src/added.ts:2-3 head | Line ten breaks parse',
      // A code_ref nobody references, at the top level, is its own landing, captioned by its label.
      'flagged e7 src/added.ts:1-1 head | Where the new file starts',
      'noise e1 lib/index.ts:2-8 head | Case only',
    ]);
  });

  it('drops prose citations the capture does not resolve (when it is known), and malformed ones always', () => {
    const lane = pooled('flagged', fx.patchset.id, [
      { id: 'p1', kind: 'prose', markdown: 'Compare src/app.ts:20 (unchanged), /abs/src/app.ts:10 (absolute), `src/app.ts:10` (code) and src/app.ts:10.' },
    ]);
    const withIndex = citationMarks([lane], { citations: buildCitationIndex(fx.patchset) });
    assert.deepEqual(brief(withIndex), ['flagged p1 src/app.ts:10-10 head | Compare src/app.ts:20 (unchanged), /abs/src/app.ts:10 (absolute), src/app.ts:10 (code) and src/app.ts:10.']);
    const without = citationMarks([lane]);
    assert.deepEqual(
      without.map((m) => `${m.path}:${m.startLine}`),
      ['src/app.ts:20', 'src/app.ts:10'],
      'without a capture every well-formed citation stays; the absolute path and the code span never count',
    );
  });

  it('a transcribed board marks its code_refs but reads path-shaped prose as text', () => {
    const ctx = contextFor(fx.patchset, 'assembler');
    const design = build(boardFor('design', fx.patchset, 'transcribed'), ctx, [
      { verb: 'add', kind: 'section', input: { title: 'Overview', body_markdown: 'The spec names src/app.ts:10 as the place.' } },
      cite('src/app.ts', 'head', 10, 10, 'Where it lands'),
    ] as VerbCall[]).state;
    assert.deepEqual(brief(citationMarks([laneOf(design)])), ['design e2 src/app.ts:10-10 head | Where it lands']);
  });

  it('claims are plain text cut at CITATION_CLAIM_MAX_CHARS; markup stays text; lanes without boards mark nothing', () => {
    const long = `${'word '.repeat(100)}end`;
    const lane = pooled('flagged', fx.patchset.id, [
      { id: 'c1', kind: 'code_ref', path: 'src/app.ts', side: 'head', start_line: 10, end_line: 10, patchset_id: fx.patchset.id, hunk_ids: [] },
      { id: 'c2', kind: 'code_ref', path: 'src/app.ts', side: 'head', start_line: 31, end_line: 31, patchset_id: fx.patchset.id, hunk_ids: [] },
      { id: 'f1', kind: 'finding', ...FINDING, title: long, anchor: ['c1'], status: 'open', concurrence: [], accord: 'split' },
      { id: 'f2', kind: 'finding', ...FINDING, title: '<script>alert(1)</script> [link](javascript:x) <img src=x onerror=y>', anchor: ['c2'], status: 'open', concurrence: [], accord: 'split' },
    ]);
    const empty: LaneView = { lens: 'decisions', state: 'failed', absence: null, failure: { message: 'broke', retryable: true, attempts: 1 }, board: null };
    const marks = citationMarks([lane, empty]);
    assert.equal(marks.length, 2);
    const [first, second] = marks as [CitationMark, CitationMark];
    assert.equal(first.claim.length, CITATION_CLAIM_MAX_CHARS);
    assert.ok(first.claim.endsWith('…'));
    assert.ok(first.claim.startsWith('word word'));
    // markdown-it refuses the javascript: link, so it stays as written; nothing is dropped or run.
    assert.equal(second.claim, '<script>alert(1)</script> [link](javascript:x) <img src=x onerror=y>');
  });

  it('plainText strips emphasis, code marks, links, headings and lists', () => {
    assert.equal(plainText('# Title\n\n- **bold** and _em_ with `code` and [a link](https://x.test)\n- ![alt text](x.png)'), 'Title bold and em with code and a link alt text');
    assert.equal(plainText('a\nb'), 'a b');
    assert.equal(plainText('x'.repeat(10), 5), 'xxxx…');
  });
});
