import assert from 'node:assert/strict';
import { countSummary, retryText, toReviewReport, type ReviewOutcome } from '../../../host/review/report';
import { emptyBoard } from '../../../host/board/state';
import { LENSES } from '../../../protocol/board';
import { ReviewReport } from '../../../protocol/review';
import { reviewFixture, settledOutcome, SPEND, type ReviewFixture } from './fixtures';

describe('review report: toReviewReport', function () {
  this.timeout(30_000);
  let fx: ReviewFixture;
  before(async () => {
    fx = await reviewFixture();
  });
  after(() => fx.repo.cleanup());

  it('validates against the ReviewReport schema, with every lens in canonical order', () => {
    const report = ReviewReport.parse(toReviewReport(settledOutcome(fx), fx.patchset, 'g-0123456789abcdef'));
    assert.deepEqual(
      report.boards.map((b) => b.lens),
      [...LENSES],
    );
    assert.equal(report.patchset, fx.patchset.id);
    assert.equal(report.generation, 'g-0123456789abcdef');
    assert.equal(report.base, fx.patchset.base);
    assert.equal(report.head, fx.patchset.head);
    assert.deepEqual(report.spend, SPEND);
    assert.equal(report.timings.length, 1);
    for (const board of report.boards) {
      assert.equal(board.state, 'settled');
      assert.equal(board.absence, null);
      assert.equal(board.failure, null);
      assert.ok(board.document.title.length > 0, board.lens);
      assert.equal(board.elements.length, fx.boards[board.lens].elements.size, `${board.lens}: every element, in creation order`);
      assert.deepEqual(
        board.elements.map((e) => e.id),
        [...fx.boards[board.lens].elements.keys()],
      );
    }
  });

  it('converts every field name to camelCase (document and elements), keeping values', () => {
    const report = toReviewReport(settledOutcome(fx), fx.patchset, 'g-1');
    const design = report.boards[0]!;
    assert.deepEqual(Object.keys(design.document).sort(), ['introMarkdown', 'measure', 'proseRegister', 'title']);
    assert.equal(design.document.introMarkdown, fx.boards.design.document.intro_markdown);
    for (const board of report.boards) {
      for (const element of board.elements) {
        for (const key of Object.keys(element)) assert.ok(!key.includes('_'), `${board.lens} ${element.id}.${key} is camelCase`);
      }
    }
    const ref = report.boards[1]!.elements.find((e) => e.kind === 'code_ref')!;
    assert.deepEqual(
      { path: ref.path, side: ref.side, startLine: ref.startLine, endLine: ref.endLine, patchsetId: ref.patchsetId },
      { path: 'src/upload.ts', side: 'head', startLine: 1, endLine: 5, patchsetId: fx.patchset.id },
    );
    assert.ok(Array.isArray(ref.hunkIds) && ref.hunkIds.length === 1);
    const finding = report.boards[3]!.elements.find((e) => e.kind === 'finding')!;
    assert.equal(finding.bodyMarkdown, 'After the **final** failure the loop waits once more, delaying the error by 400 ms.');
    assert.deepEqual(finding.partTitles, ['Who notices']);
    assert.equal(typeof finding.remedyMarkdown, 'string');
    assert.equal(finding.parent, report.boards[3]!.elements.find((e) => e.kind === 'section')!.id);
    const decision = report.boards[2]!.elements.find((e) => e.kind === 'decision')!;
    assert.equal(decision.inferred, true);
    const member = report.boards[4]!.elements.find((e) => e.kind === 'noise_member')!;
    assert.deepEqual(
      Object.keys(member)
        .filter((k) => ['startLine', 'endLine', 'hunkId', 'path', 'side'].includes(k))
        .sort(),
      ['endLine', 'hunkId', 'path', 'side', 'startLine'],
    );
  });

  it('puts lanes in canonical order whatever order the outcome lists them, and states absent and failed lanes', () => {
    const base = settledOutcome(fx);
    const outcome: ReviewOutcome = {
      ...base,
      lanes: [
        {
          lens: 'noise',
          state: 'failed',
          absence: null,
          failure: { message: 'Noise cannot be derived: the citations of Flagged are unknown because that lane failed.', retryable: true, attempts: 0 },
          board: emptyBoard('noise', fx.patchset.id),
        },
        {
          lens: 'flagged',
          state: 'failed',
          absence: null,
          failure: { message: 'no model harness is configured: Flagged review.', retryable: false, attempts: 0 },
          board: emptyBoard('flagged', fx.patchset.id),
        },
        { lens: 'decisions', state: 'absent', absence: 'no-decisions', failure: null, board: { ...emptyBoard('decisions', fx.patchset.id), status: 'absent', absence: 'no-decisions' } },
        base.lanes[0]!,
        // Sequence is missing: the report still carries it, as a typed failure.
      ],
    };
    const report = ReviewReport.parse(toReviewReport(outcome, fx.patchset, 'g-2'));
    assert.deepEqual(
      report.boards.map((b) => [b.lens, b.state]),
      [
        ['design', 'settled'],
        ['sequence', 'failed'],
        ['decisions', 'absent'],
        ['flagged', 'failed'],
        ['noise', 'failed'],
      ],
    );
    assert.equal(report.boards[2]!.absence, 'no-decisions');
    assert.equal(report.boards[2]!.failure, null);
    assert.deepEqual(report.boards[3]!.failure, { message: 'no model harness is configured: Flagged review.', retryable: false, attempts: 0 });
    assert.equal(report.boards[3]!.absence, null);
    assert.match(report.boards[1]!.failure!.message, /no Sequence lane/);
    assert.equal(report.boards[1]!.failure!.retryable, null);
  });

  it('counts what a lens is about, and says how a failure retries', () => {
    const report = toReviewReport(settledOutcome(fx), fx.patchset, 'g-3');
    assert.deepEqual(
      report.boards.map((b) => countSummary(b.lens, b.elements)),
      ['1 requirement, 1 scenario, 2 tasks, 1 stat', '2 steps', '1 decision', '1 finding', '1 group, 1 changed region'],
    );
    assert.equal(countSummary('flagged', [{ kind: 'section' }, { kind: 'section' }]), '2 sections');
    assert.equal(countSummary('flagged', []), '');
    assert.equal(retryText({ message: '', retryable: true, attempts: 3 }), 'retryable after 3 attempts');
    assert.equal(retryText({ message: '', retryable: false, attempts: 1 }), 'terminal after 1 attempt');
    assert.equal(retryText({ message: '', retryable: null, attempts: 0 }), 'no retry account');
  });
});
