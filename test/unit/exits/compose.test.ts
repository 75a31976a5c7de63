import assert from 'node:assert/strict';
import { composeReview, forgeLineRuns, verifyComposition, closeFences, type ComposeReviewInput } from '../../../host/exits/compose';
import {
  ComposedReview as ComposedReviewSchema,
  GITHUB_REVIEW_COMMENT_MAX_CHARS,
  ReviewDescriptor as ReviewDescriptorSchema,
  isLineCommentRef,
  readReviewMarker,
  reviewMarker,
  type ComposedReview,
  type ComposeRefusal,
} from '../../../protocol/exits';
import { lineCommentKey } from '../../../protocol/asks';
import type { Patchset } from '../../../protocol/patchset';
import { capturePatchset } from '../../../host/capture/capture';
import { openRepo } from '../../../host/capture/repo';
import type { TestRepo } from '../../fixtures/gitRepo';
import { Asks, captureFixture, finding, input, line, span, target, SESSION } from './fixtures';

function composed(i: ComposeReviewInput): ComposedReview {
  const result = composeReview(i);
  assert.ok(result.ok, result.ok ? '' : `${result.error.reason}: ${result.error.message}`);
  ComposedReviewSchema.parse(result.value);
  ReviewDescriptorSchema.parse(result.value.descriptor);
  return result.value;
}

function refused(i: ComposeReviewInput): ComposeRefusal {
  const result = composeReview(i);
  assert.ok(!result.ok, 'expected a refusal');
  return result.error;
}

const bodyLines = (r: ComposedReview) => r.descriptor.body.split('\n');

describe('exits: composeReview over a captured repository', function () {
  this.timeout(60_000);
  let repo: TestRepo;
  let ps: Patchset;
  before(async () => {
    ({ repo, patchset: ps } = await captureFixture());
  });
  after(() => repo?.cleanup());

  describe('placement', () => {
    it('puts a head-side line on RIGHT with its new line number, and a range with startLine/startSide', () => {
      const a = new Asks();
      const one = a.ask(line(ps, 'src/a.ts', 'head', 31), 'why a new line?');
      const range = a.ask(line(ps, 'src/a.ts', 'head', 8, 12), 'this block');
      const r = composed(input(ps, a.projection()));
      assert.deepEqual(r.descriptor.comments, [
        { path: 'src/a.ts', line: 12, side: 'RIGHT', startLine: 8, startSide: 'RIGHT', body: 'this block' },
        { path: 'src/a.ts', line: 31, side: 'RIGHT', body: 'why a new line?' },
      ]);
      assert.deepEqual(
        r.placements.map((p) => p.ref),
        [range, one],
      );
      assert.deepEqual(r.placements[0]?.start, { oldLine: 8, newLine: 8 });
      assert.deepEqual(r.placements[1]?.end, { oldLine: null, newLine: 31 });
      assert.deepEqual(r.descriptor.folded, []);
    });

    it('puts a base-side line on LEFT with its old line number; a deleted file keeps its path', () => {
      const a = new Asks();
      a.ask(line(ps, 'src/a.ts', 'base', 10), 'the old line');
      a.ask(line(ps, 'gone.ts', 'base', 2, 4), 'why delete these?', 'question');
      const r = composed(input(ps, a.projection()));
      assert.deepEqual(r.descriptor.comments, [
        { path: 'gone.ts', line: 4, side: 'LEFT', startLine: 2, startSide: 'LEFT', body: 'why delete these?' },
        { path: 'src/a.ts', line: 10, side: 'LEFT', body: 'the old line' },
      ]);
    });

    it('a base-side span through a rename keeps its old line numbers and LEFT but posts on the current path, named either way', () => {
      const a = new Asks();
      a.ask(line(ps, 'old/name.ts', 'base', 5), 'by old path');
      a.ask(line(ps, 'new/name.ts', 'base', 3, 5), 'by new path');
      a.ask(line(ps, 'new/name.ts', 'head', 5), 'the head side');
      const r = composed(input(ps, a.projection()));
      assert.deepEqual(r.descriptor.comments, [
        { path: 'new/name.ts', line: 5, side: 'LEFT', startLine: 3, startSide: 'LEFT', body: 'by new path' },
        { path: 'new/name.ts', line: 5, side: 'LEFT', body: 'by old path' },
        { path: 'new/name.ts', line: 5, side: 'RIGHT', body: 'the head side' },
      ]);
      assert.deepEqual(r.placements[1]?.start, { oldLine: 5, newLine: null });
    });

    it("a head-side span named by a rename's old path names no file", () => {
      const a = new Asks();
      const id = a.ask(line(ps, 'old/name.ts', 'head', 5), 'wrong side of the rename');
      assert.deepEqual(composed(input(ps, a.projection())).descriptor.folded, [{ ask: id, reason: 'not-in-patchset' }]);
    });

    it('CRLF line endings change nothing: placement by line number, text with CRLF posts as LF and hashes the same', () => {
      const crlf = new Asks();
      crlf.ask(line(ps, 'crlf.txt', 'head', 5, 7), 'first\r\nsecond\r\n');
      const lf = new Asks();
      lf.ask(line(ps, 'crlf.txt', 'head', 5, 7), 'first\nsecond\n');
      const a = composed(input(ps, crlf.projection()));
      const b = composed(input(ps, lf.projection()));
      assert.deepEqual(a.descriptor.comments, [{ path: 'crlf.txt', line: 7, side: 'RIGHT', startLine: 5, startSide: 'RIGHT', body: 'first\nsecond\n' }]);
      assert.equal(a.descriptor.compositionId, b.descriptor.compositionId);
      assert.deepEqual(a.descriptor, b.descriptor);
    });

    it('a finding with a captured code_ref is a comment on that span; without one it folds', () => {
      const a = new Asks();
      a.ask(finding('f1', span(ps, 'src/a.ts', 'head', 10)), 'fix this', 'request-change');
      const bare = a.ask(finding('f2'), 'and this finding', 'request-change');
      const r = composed(input(ps, a.projection()));
      assert.deepEqual(r.descriptor.comments, [{ path: 'src/a.ts', line: 10, side: 'RIGHT', body: 'fix this' }]);
      assert.deepEqual(r.descriptor.folded, [{ ask: bare, reason: 'finding-without-code' }]);
      assert.match(r.descriptor.body, /\*\*Change requested\*\* · a Flagged finding \(`f2`\) that cites no code\n\nand this finding/);
    });
  });

  describe('folding into the body', () => {
    it('quote → board-prose, none → pathless, both as notes with their text', () => {
      const a = new Asks();
      const q = a.ask({ kind: 'quote', generationId: 'g-one', lens: 'design', elementId: 'e1', quote: 'The cache\nis   shared' }, 'Is it?', 'question');
      const n = a.ask({ kind: 'none' }, 'Overall this reads well.');
      const r = composed(input(ps, a.projection()));
      assert.deepEqual(r.descriptor.comments, []);
      assert.deepEqual(r.descriptor.folded, [
        { ask: q, reason: 'board-prose' },
        { ask: n, reason: 'pathless' },
      ]);
      const body = r.descriptor.body;
      assert.ok(body.includes('### Notes\n\n**Question** · on the Design board, “The cache is shared”\n\nIs it?\n\n**Comment**\n\nOverall this reads well.\n\n<!-- rennet-review: '), body);
    });

    it('an anchor from another patchset is a body note, never re-read onto the current file', () => {
      const a = new Asks();
      const id = a.ask({ kind: 'line', patchsetId: 'ps-0123456789abcdef', path: 'src/a.ts', side: 'head', startLine: 10, endLine: 10 }, 'from before');
      const r = composed(input(ps, a.projection()));
      assert.deepEqual(r.descriptor.comments, []);
      assert.deepEqual(r.descriptor.folded, [{ ask: id, reason: 'other-patchset' }]);
      assert.ok(r.descriptor.body.includes('`src/a.ts` line 10 (head, capture `ps-0123456789abcdef`) — from an earlier capture'), r.descriptor.body);
    });

    it('a range across two hunks folds WHOLE, its full start–end range named', () => {
      const a = new Asks();
      const id = a.ask(line(ps, 'src/a.ts', 'head', 9, 31), 'this whole stretch', 'request-change');
      const r = composed(input(ps, a.projection()));
      assert.deepEqual(r.descriptor.comments, []);
      assert.deepEqual(r.descriptor.folded, [{ ask: id, reason: 'range-across-hunks' }]);
      assert.ok(r.descriptor.body.includes('`src/a.ts` lines 9–31 (head) — not inside one hunk of the diff'));
      assert.equal(r.foldNotes[0]?.where, '`src/a.ts` lines 9–31 (head)');
    });

    it("a range running past its hunk's edge folds whole; a line wholly outside folds outside-diff", () => {
      const a = new Asks();
      const edge = a.ask(line(ps, 'src/a.ts', 'head', 12, 15), 'past the edge');
      const out = a.ask(line(ps, 'src/a.ts', 'head', 20), 'unchanged code');
      const r = composed(input(ps, a.projection()));
      assert.deepEqual(r.descriptor.folded, [
        { ask: edge, reason: 'range-across-hunks' },
        { ask: out, reason: 'outside-diff' },
      ]);
      assert.ok(r.descriptor.body.includes('`src/a.ts` lines 12–15 (head) — not inside one hunk'));
    });

    it('a binary file folds; an unknown path folds', () => {
      const a = new Asks();
      const bin = a.ask(line(ps, 'img.bin', 'head', 1), 'binary?');
      const none = a.ask(line(ps, 'nope.ts', 'head', 1), 'where?');
      assert.deepEqual(composed(input(ps, a.projection())).descriptor.folded, [
        { ask: bin, reason: 'binary-or-submodule' },
        { ask: none, reason: 'not-in-patchset' },
      ]);
    });

    it('retired asks and other lanes never leave; bare line comments always do', () => {
      const a = new Asks();
      const retired = a.ask(line(ps, 'src/a.ts', 'head', 10), 'retired');
      a.retire(retired);
      a.ask(line(ps, 'src/a.ts', 'head', 10), 'for the coding round', 'request-change', 'dispatch-round');
      a.ask({ kind: 'none' }, 'for the PR description', 'comment', 'changes');
      a.lineComment(span(ps, 'src/a.ts', 'head', 11), 'bare one');
      const r = composed(input(ps, a.projection()));
      assert.deepEqual(r.descriptor.comments, [{ path: 'src/a.ts', line: 11, side: 'RIGHT', body: 'bare one' }]);
      assert.deepEqual(r.descriptor.folded, []);
      assert.equal(r.placements[0]?.ref, lineCommentKey(span(ps, 'src/a.ts', 'head', 11)));
      assert.ok(isLineCommentRef(r.placements[0]?.ref ?? ''));
      assert.ok(!r.descriptor.body.includes('retired') && !r.descriptor.body.includes('coding round') && !r.descriptor.body.includes('PR description'));
      assert.equal(r.verdict.event, 'COMMENT');
    });
  });

  describe('order and superseding', () => {
    it('orders comments by path (code units), start, end, then ask ordinal', () => {
      const a = new Asks();
      const late = a.ask(line(ps, 'src/a.ts', 'head', 10), 'second at 10', 'comment', 'post-review', 50);
      const early = a.ask(line(ps, 'src/a.ts', 'head', 10), 'first at 10', 'comment', 'post-review', 5);
      a.ask(line(ps, 'src/a.ts', 'head', 9, 11), 'range 9-11');
      a.ask(line(ps, 'src/a.ts', 'head', 9, 10), 'range 9-10');
      a.ask(line(ps, 'new/name.ts', 'head', 5), 'N before s');
      a.ask(line(ps, 'crlf.txt', 'head', 6), 'c first');
      const r = composed(input(ps, a.projection()));
      assert.deepEqual(
        r.descriptor.comments.map((c) => c.body),
        ['c first', 'N before s', 'range 9-10', 'range 9-11', 'first at 10', 'second at 10'],
      );
      assert.deepEqual(
        r.placements.slice(4).map((p) => p.ref),
        [early, late],
      );
    });

    it('an exact single-line ask wins over a bare line comment on that line: the bare one folds superseded, out of the body', () => {
      const a = new Asks();
      const winner = a.ask(line(ps, 'new/name.ts', 'base', 5), 'the ask');
      a.lineComment(span(ps, 'old/name.ts', 'base', 5), 'the bare comment, same line via the old path');
      a.lineComment(span(ps, 'new/name.ts', 'base', 5, 6), 'a bare range starting there is not superseded');
      a.lineComment(span(ps, 'new/name.ts', 'head', 5), 'the other side is another line');
      const r = composed(input(ps, a.projection()));
      const key = lineCommentKey(span(ps, 'old/name.ts', 'base', 5));
      assert.deepEqual(r.descriptor.folded, [{ ask: key, reason: 'superseded' }]);
      assert.deepEqual(r.foldNotes[0], { ref: key, reason: 'superseded', intent: 'comment', where: '`old/name.ts` line 5 (base)', inBody: false, supersededBy: winner });
      assert.deepEqual(
        r.descriptor.comments.map((c) => c.body),
        ['the ask', 'the other side is another line', 'a bare range starting there is not superseded'],
      );
      assert.ok(!r.descriptor.body.includes('the bare comment'));
      assert.ok(!r.descriptor.body.includes('### Notes'));
    });

    it('a range ask does not supersede a bare comment on its first line', () => {
      const a = new Asks();
      a.ask(line(ps, 'src/a.ts', 'head', 10, 11), 'range ask');
      a.lineComment(span(ps, 'src/a.ts', 'head', 10), 'bare');
      const r = composed(input(ps, a.projection()));
      assert.equal(r.descriptor.comments.length, 2);
      assert.deepEqual(r.descriptor.folded, []);
    });
  });

  describe('verdict', () => {
    const compose = (build: (a: Asks) => void, over: Partial<ComposeReviewInput> = {}) => {
      const a = new Asks();
      build(a);
      return composed(input(ps, a.projection(), over));
    };

    it('request-change anywhere outbound (even folded) → REQUEST_CHANGES; comments/questions → COMMENT', () => {
      assert.equal(compose((a) => (a.ask({ kind: 'none' }, 'must fix', 'request-change'), a.ask(line(ps, 'src/a.ts', 'head', 10), 'nit'))).verdict.event, 'REQUEST_CHANGES');
      assert.equal(compose((a) => a.ask(line(ps, 'src/a.ts', 'head', 10), 'why?', 'question')).verdict.event, 'COMMENT');
    });

    it('with nothing outbound, or approvals only, the review approves, and approval text is in the body', () => {
      const empty = compose(() => undefined);
      assert.equal(empty.verdict.event, 'APPROVE');
      assert.ok(empty.descriptor.body.trim().length > 0);
      const approving = compose((a) => a.ask({ kind: 'none' }, 'Ship it: the retry path is covered.', 'approval'));
      assert.equal(approving.descriptor.event, 'APPROVE');
      assert.ok(approving.descriptor.body.includes('**Approval**\n\nShip it: the retry path is covered.'));
    });

    it('the durable override wins over the derived event', () => {
      const r = compose((a) => (a.ask({ kind: 'none' }, 'must fix', 'request-change'), a.override('approve')));
      assert.deepEqual(r.verdict, { derived: 'REQUEST_CHANGES', override: 'approve', event: 'APPROVE', downgradedFrom: null, notice: null });
      assert.equal(compose((a) => a.override('comment')).descriptor.event, 'COMMENT');
      assert.equal(compose((a) => (a.ask({ kind: 'none' }, 'ok', 'approval'), a.override('request-changes'))).descriptor.event, 'REQUEST_CHANGES');
    });

    it("on the reviewer's own request APPROVE and REQUEST_CHANGES post as COMMENT, and the preview says so", () => {
      const approve = compose(() => undefined, { ownPullRequest: true });
      assert.equal(approve.descriptor.event, 'COMMENT');
      assert.equal(approve.verdict.downgradedFrom, 'APPROVE');
      assert.match(approve.verdict.notice ?? '', /your own pull request: GitHub does not let its author approve it/);
      assert.ok(!approve.descriptor.body.includes('your own'), 'the notice is not forge text');
      const changes = compose((a) => a.ask({ kind: 'none' }, 'fix', 'request-change'), { ownPullRequest: true });
      assert.equal(changes.descriptor.event, 'COMMENT');
      assert.equal(changes.verdict.downgradedFrom, 'REQUEST_CHANGES');
      const comment = compose((a) => a.ask({ kind: 'none' }, 'note'), { ownPullRequest: true });
      assert.equal(comment.verdict.downgradedFrom, null);
      assert.equal(comment.verdict.notice, null);
    });

    it("GitLab gets the verdict label as the body's first line", () => {
      const r = compose((a) => a.ask({ kind: 'none' }, 'must fix', 'request-change'), { target: target(ps, { provider: 'gitlab', host: 'gitlab.com', owner: 'group/sub' }) });
      assert.equal(bodyLines(r)[0], '**Verdict: changes requested**');
      assert.equal(r.descriptor.provider, 'gitlab');
      assert.equal(bodyLines(compose(() => undefined, { target: target(ps, { provider: 'gitlab' }) }))[0], '**Verdict: approved**');
      const own = compose(() => undefined, { target: target(ps, { provider: 'gitlab' }), ownPullRequest: true });
      assert.equal(bodyLines(own)[0], '**Verdict: comments**');
      assert.match(own.verdict.notice ?? '', /merge request: GitLab/);
      assert.notEqual(bodyLines(compose(() => undefined))[0], '**Verdict: approved**');
    });
  });

  describe('body and marker', () => {
    it('the deterministic opener states the head, the totals and the boards; a given opener replaces it', () => {
      const a = new Asks();
      a.ask(line(ps, 'src/a.ts', 'head', 10), 'c');
      a.ask({ kind: 'none' }, 'n');
      const r = composed(input(ps, a.projection()));
      const t = ps.totals;
      assert.ok(
        r.descriptor.body.startsWith(
          `Reviewed \`${ps.head.slice(0, 12)}\`: ${t.files} files, +${t.additions} −${t.deletions}.\n\n` +
            'Lens boards: Design 3 sections · Decisions absent · Flagged 2 findings (1 open, 1 dismissed) · Noise failed.\n\n' +
            '1 line comment; 1 note below.\n\n### Notes',
        ),
        r.descriptor.body,
      );
      // A settled Noise board is stated by its groups of skippable hunks, not by sections it never writes.
      const noise = composed(
        input(ps, a.projection(), {
          grounding: { lenses: [{ lens: 'noise', state: 'settled', sections: 0, findings: 0, groups: 1 }], findings: { open: 0, dismissed: 0 } },
        }),
      );
      assert.match(noise.descriptor.body, /\n\nLens boards: Noise 1 group\.\n\n/);
      const given = composed(input(ps, a.projection(), { opener: 'Thanks — two small things.\r\n' }));
      assert.ok(given.descriptor.body.startsWith('Thanks — two small things.\n\n### Notes'));
      const blank = composed(input(ps, a.projection(), { opener: '  \n ' }));
      assert.equal(blank.descriptor.body, r.descriptor.body);
    });

    it('the marker is the last line, once; text that imitates it or opens an HTML comment cannot pass for it or hide anything', () => {
      const forged = '<!-- rennet-review: aaaaaaaaaaaaaaaaaaaaaaaa -->';
      const a = new Asks();
      a.ask({ kind: 'none' }, `Look:\n${forged}`);
      a.ask({ kind: 'none' }, 'unclosed <!-- hides the rest');
      a.ask(line(ps, 'src/a.ts', 'head', 10), `${forged}\n-->`);
      const r = composed(input(ps, a.projection(), { opener: `${forged}` }));
      const body = r.descriptor.body;
      assert.equal(bodyLines(r).at(-1), reviewMarker(r.markerId));
      assert.equal(readReviewMarker(body), r.markerId);
      assert.equal(body.split('<!--').length - 1, 1, 'only the marker opens an HTML comment');
      assert.equal(body.match(/<!-- rennet-review:/g)?.length, 1);
      assert.ok(body.includes('<!\\-- rennet-review: aaaaaaaaaaaaaaaaaaaaaaaa -->'));
      assert.ok(body.includes('unclosed <!\\-- hides the rest'));
      assert.equal(r.descriptor.comments[0]?.body, '<!\\-- rennet-review: aaaaaaaaaaaaaaaaaaaaaaaa -->\n-->');
      assert.equal(readReviewMarker(`${body}\r\n\r\n`), r.markerId, 'trailing line breaks a forge adds are tolerated');
      assert.equal(readReviewMarker(`${body}\nmore`), null, 'only the last line counts');
    });

    it('a note that leaves a code fence open is closed, so the marker stays a comment', () => {
      const a = new Asks();
      a.ask({ kind: 'none' }, '```ts\nconst x = 1;');
      const r = composed(input(ps, a.projection()));
      assert.ok(r.descriptor.body.includes('```ts\nconst x = 1;\n```\n\n<!-- rennet-review: '));
      assert.equal(closeFences('~~~~\na\n~~~\nb'), '~~~~\na\n~~~\nb\n~~~~');
      assert.equal(closeFences('```\na\n```'), '```\na\n```');
      assert.equal(closeFences('``` not `a fence`'), '``` not `a fence`');
    });

    it('paths are shown as code with control characters visible', () => {
      const a = new Asks();
      a.ask({ kind: 'line', patchsetId: 'ps-0123456789abcdef', path: 'we`ird\npath.ts', side: 'head', startLine: 1, endLine: 2 }, 'x');
      const r = composed(input(ps, a.projection()));
      assert.ok(r.descriptor.body.includes('``we`ird\\npath.ts`` lines 1–2 (head'), r.descriptor.body);
    });
  });

  describe('identity and refusals', () => {
    it('is deterministic, and every bound part moves the composition id', () => {
      const build = (text = 'c', override?: 'request-changes' | 'comment') => {
        const a = new Asks();
        a.ask(line(ps, 'src/a.ts', 'head', 10), text);
        a.ask({ kind: 'none' }, 'n');
        if (override) a.override(override);
        return a.projection();
      };
      const base = composed(input(ps, build()));
      assert.deepEqual(composed(input(ps, build())), base);
      assert.match(base.descriptor.compositionId, /^[0-9a-f]{64}$/);
      assert.equal(base.markerId, base.descriptor.compositionId.slice(0, 24));
      const ids = [
        composed(input(ps, build('c2'))),
        composed(input(ps, build(), { sessionId: 's-other' })),
        composed(input(ps, build(), { target: target(ps, { number: 43 }) })),
        composed(input(ps, build(), { target: target(ps, { owner: 'other' }) })),
        composed(input(ps, build(), { opener: 'hello' })),
        composed(input(ps, build('c', 'request-changes'))),
      ].map((r) => r.descriptor.compositionId);
      assert.equal(new Set([base.descriptor.compositionId, ...ids]).size, ids.length + 1);
      // What posts is what is bound: an override or own request that leaves the event COMMENT keeps the id.
      assert.equal(composed(input(ps, build('c', 'comment'))).descriptor.compositionId, base.descriptor.compositionId);
      assert.equal(composed(input(ps, build(), { ownPullRequest: true })).descriptor.compositionId, base.descriptor.compositionId);
      // Unbound: a retired ask changes nothing that posts.
      const a = new Asks();
      a.ask(line(ps, 'src/a.ts', 'head', 10), 'c');
      a.ask({ kind: 'none' }, 'n');
      a.retire(a.ask({ kind: 'none' }, 'gone'));
      assert.equal(composed(input(ps, a.projection())).descriptor.compositionId, base.descriptor.compositionId);
    });

    it('verifyComposition passes the previewed id and refuses a stale one', () => {
      const a = new Asks();
      a.ask(line(ps, 'src/a.ts', 'head', 10), 'c');
      const preview = composed(input(ps, a.projection()));
      const again = verifyComposition(input(ps, a.projection()), preview.descriptor.compositionId);
      assert.ok(again.ok);
      assert.deepEqual(again.value, preview);
      a.override('request-changes');
      const stale = verifyComposition(input(ps, a.projection()), preview.descriptor.compositionId);
      assert.ok(!stale.ok);
      assert.equal(stale.error.reason, 'stale-composition');
      assert.equal(stale.error.detail?.expected, preview.descriptor.compositionId);
    });

    it("refuses a target whose head or merge-base is not the patchset's, and invalid inputs", () => {
      const p = new Asks().projection();
      assert.equal(refused(input(ps, p, { target: target(ps, { headSha: 'f'.repeat(40) }) })).reason, 'target-mismatch');
      assert.equal(refused(input(ps, p, { target: target(ps, { baseSha: ps.baseTip === ps.base ? 'e'.repeat(40) : ps.baseTip }) })).reason, 'target-mismatch');
      assert.equal(refused(input(ps, p, { sessionId: 'a|b' })).reason, 'invalid-input');
      assert.equal(refused(input(ps, p, { target: { ...target(ps), number: 0 } })).reason, 'invalid-input');
      assert.equal(refused(input(ps, p, { grounding: { lenses: [], findings: { open: -1, dismissed: 0 } } })).reason, 'invalid-input');
    });

    it('refuses a comment or body over the forge limit instead of cutting it', () => {
      const long = 'x'.repeat(GITHUB_REVIEW_COMMENT_MAX_CHARS + 1);
      const a = new Asks();
      const id = a.ask(line(ps, 'src/a.ts', 'head', 10), long);
      const comment = refused(input(ps, a.projection()));
      assert.equal(comment.reason, 'comment-too-long');
      assert.equal(comment.detail?.ref, id);
      const b = new Asks();
      b.ask({ kind: 'none' }, 'y'.repeat(40_000));
      b.ask({ kind: 'none' }, 'z'.repeat(40_000));
      const body = refused(input(ps, b.projection()));
      assert.equal(body.reason, 'body-too-long');
      // GitLab's notes are larger: the same review fits there.
      assert.ok(composeReview(input(ps, b.projection(), { target: target(ps, { provider: 'gitlab' }) })).ok);
      const exact = new Asks();
      exact.ask(line(ps, 'src/a.ts', 'head', 10), 'x'.repeat(GITHUB_REVIEW_COMMENT_MAX_CHARS));
      assert.ok(composeReview(input(ps, exact.projection())).ok, 'exactly at the limit posts');
    });
  });

  describe('a re-review at this head (prior)', () => {
    /** The fix delta of a re-review: another patchset whose head is this one's (here: the same change captured with -U5). */
    let twin: Patchset;
    before(async () => {
      const handle = await openRepo(repo.dir);
      assert.ok(handle.ok);
      const captured = await capturePatchset(handle.value, { kind: 'branch', base: 'main', head: 'feature' }, { contextLines: 5 });
      assert.ok(captured.ok);
      twin = captured.value;
      assert.equal(twin.head, ps.head);
      assert.notEqual(twin.id, ps.id);
    });
    const LINE = 'Prior review: 1 of 2 resolved';
    const prior = () => ({ line: LINE, headTwins: [twin.id] });

    it('opens the body with the line (GitHub first, GitLab before its verdict label) and moves the composition id', () => {
      const a = new Asks();
      a.ask(line(ps, 'src/a.ts', 'head', 10), 'c', 'request-change');
      const without = composed(input(ps, a.projection()));
      const github = composed(input(ps, a.projection(), { prior: prior() }));
      assert.equal(bodyLines(github)[0], LINE);
      assert.equal(github.descriptor.body, `${LINE}\n\n${without.descriptor.body.replace(reviewMarker(without.markerId), reviewMarker(github.markerId))}`, 'the line, then the body as it was');
      assert.notEqual(github.descriptor.compositionId, without.descriptor.compositionId);
      assert.notEqual(github.markerId, without.markerId);
      assert.equal(readReviewMarker(github.descriptor.body), github.markerId);
      assert.deepEqual(github.descriptor.comments, without.descriptor.comments, 'the comments are as they were');

      const gitlab = composed(input(ps, a.projection(), { prior: prior(), target: target(ps, { provider: 'gitlab', host: 'gitlab.com' }) }));
      assert.deepEqual(bodyLines(gitlab).slice(0, 3), [LINE, '', '**Verdict: changes requested**']);
      const gitlabWithout = composed(input(ps, a.projection(), { target: target(ps, { provider: 'gitlab', host: 'gitlab.com' }) }));
      assert.notEqual(gitlab.descriptor.compositionId, gitlabWithout.descriptor.compositionId);

      // Another line is another composition; the line is one line of data, whatever it was given as.
      assert.notEqual(composed(input(ps, a.projection(), { prior: { ...prior(), line: 'Prior review: 2 of 2 resolved' } })).descriptor.compositionId, github.descriptor.compositionId);
      const messy = composed(input(ps, a.projection(), { prior: { line: '  Prior review:\n1 of 2\tresolved <!-- x --> ', headTwins: [] } }));
      assert.equal(bodyLines(messy)[0], 'Prior review: 1 of 2 resolved <!\\-- x -->');
      assert.equal(messy.descriptor.body.split('<!--').length - 1, 1, 'only the marker opens an HTML comment');
    });

    it('an ask on the head side of a head twin places as on the request’s head; its base side folds other-patchset; without prior both fold', () => {
      const a = new Asks();
      const head = a.ask(line(twin, 'src/a.ts', 'head', 31), 'this new line', 'request-change');
      const base = a.ask(line(twin, 'src/a.ts', 'base', 10), 'the old line');
      const elsewhere = a.ask(line({ ...twin, id: 'ps-0123456789abcdef' }, 'src/a.ts', 'head', 31), 'not a twin');
      const r = composed(input(ps, a.projection(), { prior: prior() }));
      assert.deepEqual(r.descriptor.comments, [{ path: 'src/a.ts', line: 31, side: 'RIGHT', body: 'this new line' }]);
      assert.deepEqual(
        r.placements.map((p) => p.ref),
        [head],
      );
      assert.deepEqual(r.descriptor.folded, [
        { ask: base, reason: 'other-patchset' },
        { ask: elsewhere, reason: 'other-patchset' },
      ]);
      // The request's own lines still decide: a head line the request's diff does not show folds.
      const outside = new Asks();
      const far = outside.ask(line(twin, 'src/a.ts', 'head', 20), 'outside the request’s diff');
      assert.deepEqual(composed(input(ps, outside.projection(), { prior: prior() })).descriptor.folded, [{ ask: far, reason: 'outside-diff' }]);

      const plain = composed(input(ps, a.projection()));
      assert.deepEqual(plain.descriptor.comments, []);
      assert.deepEqual(
        plain.descriptor.folded.map((f) => [f.ask, f.reason]),
        [
          [head, 'other-patchset'],
          [base, 'other-patchset'],
          [elsewhere, 'other-patchset'],
        ],
      );
    });
  });

  it('a session id from the fixture is what the id binds', () => {
    assert.equal(input(ps, new Asks().projection()).sessionId, SESSION);
  });
});

describe("exits: the forge's lines vs the capture's context", function () {
  this.timeout(60_000);

  it("the default capture (-U3) shows exactly the forge's lines: every hunk line on its side", async () => {
    const { repo, patchset } = await captureFixture();
    try {
      assert.equal(patchset.options.contextLines, 3);
      for (const file of patchset.files) {
        for (const side of ['head', 'base'] as const) {
          const shown = forgeLineRuns(file, side).reduce((n, r) => n + r.end - r.start + 1, 0);
          const hunkLines = file.hunks.reduce((n, h) => n + (side === 'head' ? h.newLines : h.oldLines), 0);
          assert.equal(shown, hunkLines, `${file.path} ${side}`);
        }
      }
    } finally {
      repo.cleanup();
    }
  });

  it('a capture with more context (-U5) offers only lines within 3 of a change, split where the forge splits', async () => {
    const { repo, patchset } = await captureFixture({ contextLines: 5 });
    try {
      const wide = patchset.files.find((f) => f.path === 'wide.ts');
      assert.equal(wide?.hunks.length, 1, 'one captured hunk at -U5');
      assert.deepEqual(
        forgeLineRuns(wide!, 'head').map((r) => [r.start, r.end]),
        [
          [7, 13],
          [17, 23],
        ],
      );
      const a = new Asks();
      const ok13 = a.ask(line(patchset, 'wide.ts', 'head', 11, 13), 'inside');
      const far = a.ask(line(patchset, 'wide.ts', 'head', 15), 'the forge does not show line 15');
      const across = a.ask(line(patchset, 'wide.ts', 'head', 12, 18), 'one captured hunk, two forge hunks');
      const edge = a.ask(line(patchset, 'wide.ts', 'head', 6), 'captured, four from the change');
      const r = composed(input(patchset, a.projection()));
      assert.deepEqual(
        r.placements.map((p) => p.ref),
        [ok13],
      );
      assert.deepEqual(r.descriptor.folded, [
        { ask: far, reason: 'outside-diff' },
        { ask: across, reason: 'range-across-hunks' },
        { ask: edge, reason: 'outside-diff' },
      ]);
    } finally {
      repo.cleanup();
    }
  });

  it('a capture with less context (-U1) folds what it cannot prove, though the forge shows it', async () => {
    const { repo, patchset } = await captureFixture({ contextLines: 1 });
    try {
      const a = new Asks();
      const near = a.ask(line(patchset, 'src/a.ts', 'head', 9, 11), 'captured');
      const unproven = a.ask(line(patchset, 'src/a.ts', 'head', 8), 'two from the change: not captured');
      const r = composed(input(patchset, a.projection()));
      assert.deepEqual(
        r.placements.map((p) => p.ref),
        [near],
      );
      assert.deepEqual(r.descriptor.folded, [{ ask: unproven, reason: 'outside-diff' }]);
    } finally {
      repo.cleanup();
    }
  });
});
