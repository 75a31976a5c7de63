import * as assert from 'node:assert/strict';
import { findingKey, flaggedBoardId, type AskProjection } from '../../../protocol/asks';
import { AskCommand } from '../../../protocol/asks';
import type { PublishReceipt } from '../../../protocol/exits';
import type { PullRequestRecord } from '../../../protocol/forge';
import type { Round } from '../../../protocol/rounds';
import { err, ok, rennetError } from '../../../protocol/result';
import { SessionSnapshot, targetKey, type Target } from '../../../protocol/session';
import { anchorWords, editableText, editedText, firstLine, HAND_OFF_COMMANDS, handOffMode, planHandOff, receiptRow, type HandOffRow } from '../../../extension/handOffPlan';
import { Md } from '../../../extension/uiText';
import { Asks } from '../exits/fixtures';

const SID = 'ses-pr';
const PS = 'ps-2';
const HEAD = 'a'.repeat(40);
const LIVE = 'b'.repeat(40);
const PR_TARGET: Target = { kind: 'pull-request', provider: 'github', host: 'github.com', owner: 'acme', repo: 'widgets', number: 12 };

function record(entry: 'teammate' | 'own'): PullRequestRecord {
  return {
    number: 12,
    title: 'Retry the flaky fetch',
    body: '',
    author: 'dana',
    viewer: entry === 'own' ? 'dana' : 'sam',
    entry,
    webUrl: 'https://github.com/acme/widgets/pull/12',
    state: 'open',
    draft: false,
    headRef: 'retry',
    headSha: HEAD,
    baseRef: 'main',
    baseSha: 'c'.repeat(40),
    readAt: '2026-01-01T00:00:00.000Z',
    issues: [],
  };
}

function session(target: Target, pullRequest?: PullRequestRecord): SessionSnapshot {
  return SessionSnapshot.parse({
    session: {
      id: SID,
      repoRoot: '/r/widgets',
      targetKey: targetKey(target),
      target,
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
      activePatchsetId: PS,
      patchsetIds: ['ps-1', PS],
    },
    patchset: null,
    ...(pullRequest ? { pullRequest } : {}),
  });
}

const teammate = () => session(PR_TARGET, record('teammate'));
const own = () => session(PR_TARGET, record('own'));
const branch = () => session({ kind: 'branch', head: 'feature', base: 'main' });
const workingTree = () => session({ kind: 'working-tree', base: 'main' });

const line = (path: string, startLine: number, endLine = startLine, side: 'head' | 'base' = 'head', patchsetId = PS) => ({ kind: 'line', patchsetId, path, side, startLine, endLine }) as const;
const GEN = 'g-one';
const BOARD = flaggedBoardId(SID, GEN);

/**
 * Staged asks through the host's own fold: a line comment, a request on a finding with its code_ref,
 * a question quoting the Design board, a general note, a retired ask (never shown), an ask on the
 * earlier capture, a `changes` ask, and a bare line comment.
 */
function projection(): { projection: AskProjection; ids: Record<string, string> } {
  const asks = new Asks();
  const ids = {
    line: asks.ask(line('src/fetch.ts', 10, 14), 'Retry three times\nthen give up', 'comment'),
    finding: asks.ask(
      { kind: 'finding', generationId: GEN, boardId: BOARD, findingId: 'f-1', codeRef: { patchsetId: PS, path: 'src/fetch.ts', side: 'head', startLine: 3, endLine: 3 } },
      '## Unbounded retries\n\nCap them.',
      'request-change',
    ),
    quote: asks.ask({ kind: 'quote', generationId: GEN, lens: 'design', elementId: 'e-7', quote: 'The client owns retries' }, 'Why the client?', 'question'),
    general: asks.ask({ kind: 'none' }, 'Looks good overall', 'approval'),
    retired: asks.ask({ kind: 'none' }, 'never mind', 'comment'),
    earlier: asks.ask(line('src/old.ts', 4, 4, 'base', 'ps-1'), 'Was this intended?', 'question'),
    change: asks.ask(line('src/fetch.ts', 20), 'Rename the helper', 'request-change', 'changes'),
  };
  asks.retire(ids.retired);
  asks.lineComment({ patchsetId: PS, path: 'src/util.ts', side: 'head', startLine: 2, endLine: 2 }, 'typo here');
  return { projection: asks.projection(), ids };
}

const labels = (rows: readonly HandOffRow[]) => rows.map((r) => r.label as string);
const laneOf = (rows: readonly HandOffRow[], id: string) => rows.find((r) => r.id === id);

describe('extension/handOffPlan', () => {
  it('with no active review, says how to open one; no badge, no rows', () => {
    const plan = planHandOff({ session: null, projection: null });
    assert.equal(plan.rows.length, 0);
    assert.equal(plan.badge, undefined);
    assert.match(plan.message ?? '', /Review Pull Request/);
    assert.equal(plan.mode, null);
  });

  it('while the asks are read, names the target and says so', () => {
    const plan = planHandOff({ session: teammate(), projection: null });
    assert.equal(plan.description, "Pull Request #12 · acme/widgets · teammate's");
    assert.match(plan.message ?? '', /Reading the staged asks/);
    assert.deepEqual(plan.rows, []);
  });

  it('entry mode: a teammate’s request, one’s own, a branch, the working tree', () => {
    assert.equal(handOffMode(teammate()), 'teammate');
    assert.equal(handOffMode(own()), 'own-request');
    assert.equal(handOffMode(session(PR_TARGET)), 'teammate', 'a request read without its record is a teammate’s');
    assert.equal(handOffMode(branch()), 'branch');
    assert.equal(handOffMode(workingTree()), 'working-tree');
  });

  describe('a teammate’s request', () => {
    const { projection: p, ids } = projection();
    const plan = planHandOff({ session: teammate(), projection: p, findingTitles: new Map([[findingKey({ generationId: GEN, boardId: BOARD, findingId: 'f-1' }), 'Unbounded retries']]) });

    it('badge = the staged ask count, with a tooltip', () => {
      assert.deepEqual(plan.badge, { value: 6, tooltip: '6 asks staged in this review' });
      assert.equal(p.counts.staged, 6);
    });

    it('one lane, Post review: post-review asks in staging order, then bare line comments; then Preview', () => {
      assert.deepEqual(labels(plan.rows), [
        'Post review',
        'Preview and post review…',
        'Re-review since your last review…',
        'Changes',
        "Work orders are for your own branch or request; on a teammate's request these asks stay staged.",
      ]);
      assert.ok(!plan.rows.some((r) => r.id === 'exit:dispatch-round' || r.id === 'notice:dispatch-reading'), 'a teammate’s request has no round lane');
      // The re-review row runs its command on this session.
      const rereview = plan.rows.find((r) => r.id === 'exit:rereview');
      assert.equal(rereview?.command?.id, 'rennet.rereviewSinceLastReview');
      assert.deepEqual(rereview?.command?.arguments, [teammate().session.id]);
      const post = laneOf(plan.rows, 'lane:post-review')!;
      assert.equal(post.description, '6 staged');
      assert.deepEqual(
        post.children!.map((r) => [r.id, r.label, r.description, r.icon, r.contextValue]),
        [
          [`ask:${ids.line}`, 'Retry three times', 'src/fetch.ts:10-14 (new)', 'comment', 'handoff-ask-open'],
          [`ask:${ids.finding}`, 'Unbounded retries', 'finding: Unbounded retries', 'request-changes', 'handoff-ask-open-board'],
          [`ask:${ids.quote}`, 'Why the client?', 'board: Design', 'question', 'handoff-ask-board'],
          [`ask:${ids.general}`, 'Looks good overall', 'general', 'pass', 'handoff-ask'],
          [`ask:${ids.earlier}`, 'Was this intended?', 'src/old.ts:4 (old) · earlier capture', 'question', 'handoff-ask-open'],
          [`line:${PS}|head|src/util.ts:2-2`, 'typo here', 'src/util.ts:2 (new)', 'comment-discussion', 'handoff-line-comment-open'],
        ],
      );
      assert.ok(!post.children!.some((r) => r.label === 'never mind'), 'a retired ask is not staged');
    });

    it('a click opens line anchors in the editor, shows board anchors on the board; the row is the argument', () => {
      const rows = laneOf(plan.rows, 'lane:post-review')!.children!;
      assert.deepEqual(
        rows.map((r) => r.command?.id),
        [HAND_OFF_COMMANDS.open, HAND_OFF_COMMANDS.open, HAND_OFF_COMMANDS.reveal, HAND_OFF_COMMANDS.edit, HAND_OFF_COMMANDS.open, HAND_OFF_COMMANDS.open],
      );
      assert.ok(rows.every((r) => r.command?.arguments === undefined));
      const finding = rows[1]!;
      assert.deepEqual(finding.subject, {
        kind: 'ask',
        sessionId: SID,
        askId: ids.finding,
        text: '## Unbounded retries\n\nCap them.',
        intent: 'request-change',
        anchor: p.asks.find((a) => a.id === ids.finding)!.anchor,
      });
      const comment = rows[5]!;
      assert.equal(comment.subject?.kind, 'line-comment');
    });

    it('the tooltip is the ask’s Markdown, made safe, after its intent and anchor', () => {
      const tooltip = laneOf(plan.rows, 'lane:post-review')!.children![0]!.tooltip;
      assert.ok(tooltip instanceof Md);
      assert.equal(tooltip.source, '**Comment** · src\\/fetch\\.ts\\:10\\-14 \\(new\\)\n\nRetry three times\nthen give up');
      assert.deepEqual(tooltip.commands, []);
    });

    it('Preview runs rennet.previewReview for the session', () => {
      const row = plan.rows.find((r) => r.id === 'exit:preview')!;
      assert.deepEqual(row.command, { id: 'rennet.previewReview', title: 'Preview and post review', arguments: [SID] });
      assert.equal(row.contextValue, 'handoff-exit-preview');
    });

    it('asks staged for another exit are listed with what becomes of them', () => {
      const changes = laneOf(plan.rows, 'lane:changes')!;
      assert.deepEqual(labels(changes.children!), ['Rename the helper']);
    });

    it('with nothing staged, the lane says what the review would be and Preview is still there', () => {
      const empty = planHandOff({ session: teammate(), projection: new Asks().projection() });
      assert.equal(empty.badge, undefined);
      assert.deepEqual(labels(empty.rows), ['Post review', 'Preview and post review…', 'Re-review since your last review…']);
      assert.match(labels(laneOf(empty.rows, 'lane:post-review')!.children!)[0] ?? '', /proposes Approve/);
    });
  });

  describe('the exit rows of a request', () => {
    const { projection: p } = projection();
    const receipt: PublishReceipt = {
      sessionId: SID,
      markerId: '0123456789abcdef01234567',
      compositionId: '0123456789abcdef01234567'.padEnd(64, '0'),
      provider: 'github',
      number: 12,
      url: 'https://github.com/acme/widgets/pull/12#pullrequestreview-9',
      reviewId: 9,
      event: 'REQUEST_CHANGES',
      comments: 2,
      reused: false,
      headSha: HEAD,
      postedAt: '2026-01-02T00:00:00.000Z',
    };

    it('a receipt for the composition now: "Posted: <verdict> · N comments", opening the review', () => {
      const plan = planHandOff({ session: teammate(), projection: p, receipt: { receipt, current: true } });
      const row = plan.rows.find((r) => r.id === `receipt:${receipt.markerId}`)!;
      assert.equal(row.label, 'Posted: Request changes · 2 comments');
      assert.equal(row.description, undefined);
      assert.deepEqual(row.command, { id: HAND_OFF_COMMANDS.openLink, title: 'Open the posted review' });
      assert.deepEqual(row.subject, { kind: 'link', sessionId: SID, url: receipt.url });
      assert.equal(row.contextValue, 'handoff-receipt');
    });

    it('a reused receipt says it was already there; an earlier composition’s says so', () => {
      assert.equal(receiptRow(SID, { ...receipt, reused: true, comments: 1 }, true).description, 'already on GitHub');
      assert.equal(receiptRow(SID, { ...receipt, provider: 'gitlab', reused: true }, true).description, 'already on GitLab');
      const earlier = receiptRow(SID, receipt, false);
      assert.equal(earlier.label, 'Posted earlier: Request changes · 2 comments');
      assert.equal(earlier.description, 'an earlier version of this review');
      assert.equal(earlier.icon, 'history');
    });

    it('a refusal to compose is stated where the exit is, and still opens the preview that details it', () => {
      const plan = planHandOff({ session: teammate(), projection: p, composeRefusal: 'the review body is 70000 characters; GitHub takes 65536' });
      assert.ok(!plan.rows.some((r) => r.id === 'exit:preview'));
      const row = plan.rows.find((r) => r.id === 'exit:refused')!;
      assert.equal(row.label, 'Cannot post this review: the review body is 70000 characters; GitHub takes 65536');
      assert.equal(row.command?.id, 'rennet.previewReview');
    });

    it('a moved head is the first row, running Capture New Head for the session', () => {
      const plan = planHandOff({ session: teammate(), projection: p, freshness: ok({ capturedHeadSha: HEAD, liveHeadSha: LIVE, moved: true, state: 'open' }) });
      const row = plan.rows[0]!;
      assert.equal(row.label, 'Head moved to bbbbbbb since capture — Capture New Head');
      assert.deepEqual(row.command, { id: 'rennet.captureNewHead', title: 'Capture New Head', arguments: [SID] });
      assert.equal(row.contextValue, 'handoff-stale');
    });

    it('a fresh head adds nothing; a merged request and an unreadable head are said', () => {
      const fresh = planHandOff({ session: teammate(), projection: p, freshness: ok({ capturedHeadSha: HEAD, liveHeadSha: HEAD, moved: false, state: 'open' }) });
      assert.equal(fresh.rows[0]!.id, 'lane:post-review');
      const merged = planHandOff({ session: teammate(), projection: p, freshness: ok({ capturedHeadSha: HEAD, liveHeadSha: HEAD, moved: false, state: 'merged' }) });
      assert.equal(merged.rows[0]!.label, 'This request is merged: a review is posted only to an open request.');
      const failed = planHandOff({ session: teammate(), projection: p, freshness: err(rennetError('forge-unauthorized', 'no GitHub credentials for github.com')) });
      assert.equal(failed.rows[0]!.label, "Could not read the request's head: no GitHub credentials for github.com");
      assert.equal(failed.rows[0]!.command?.id, HAND_OFF_COMMANDS.refresh);
    });
  });

  describe('one’s own request, a branch, the working tree', () => {
    const { projection: p } = projection();
    const refusal = 'Rounds run on a branch review: review the branch (Rennet: Review Branch) to dispatch these asks to a coding agent. They stay staged.';
    const reading = 'Reading what a round would do…';

    it('own request: lane Changes with Dispatch where a branch review has it (the host’s order, or its refusal in its words); its post-review asks keep their exit', () => {
      const plan = planHandOff({ session: own(), projection: p, rounds: { order: undefined, ledger: [] } });
      assert.equal(plan.description, 'Pull Request #12 · acme/widgets · yours');
      assert.deepEqual(labels(plan.rows), ['Changes', reading, 'Post review', 'Preview and post review…', 'Re-review since your last review…']);
      assert.deepEqual(labels(laneOf(plan.rows, 'lane:changes')!.children!), ['Rename the helper']);
      const order = { markdown: '# Work order', digest: 'd'.repeat(64), asks: ['ask-1'], workspace: { root: '/r/widgets', branch: 'retry' } };
      const live = planHandOff({ session: own(), projection: p, rounds: { order: ok(order), ledger: [] } });
      const dispatch = live.rows[1]!;
      assert.equal(dispatch.id, 'exit:dispatch-round');
      assert.equal(dispatch.label, 'Dispatch round 1…');
      assert.deepEqual(dispatch.command, { id: HAND_OFF_COMMANDS.dispatchRound, title: 'Dispatch Round', arguments: [SID] });
      assert.match(String(dispatch.tooltip), /in \/r\/widgets, on retry\./);
      const missing = "retry, the request's head branch, is not a branch in /r/widgets: a round commits on it. Make it here with git fetch origin retry:retry, then dispatch";
      const refused = planHandOff({ session: own(), projection: p, rounds: { order: err(rennetError('unknown-ref', missing)), ledger: [] } });
      assert.equal(refused.rows[1]!.label, missing);
      assert.equal(refused.rows[1]!.command, undefined, 'a stated refusal, not a dead button');
      assert.ok(!live.rows.some((r) => r.id === 'exit:open-request'), 'the request exists: no Open pull request row of a branch review');
    });

    it('own request whose head is behind a round’s commits: said with the push (Open pull request reuses the request), never Capture New Head', () => {
      const unpushed = planHandOff({ session: own(), projection: p, freshness: ok({ capturedHeadSha: HEAD, liveHeadSha: LIVE, moved: true, unpushed: 2, state: 'open' }) });
      const row = unpushed.rows[0]!;
      assert.equal(row.label, "The request's head is 2 commits behind your retry — Push");
      assert.equal(row.description, 'bbbbbbb → aaaaaaa');
      assert.deepEqual(row.command, { id: HAND_OFF_COMMANDS.openPullRequest, title: 'Push', arguments: [{ repo: '/r/widgets', branch: 'retry', base: 'main' }] });
      assert.ok(!unpushed.rows.some((r) => r.command?.id === HAND_OFF_COMMANDS.captureNewHead));
      // A head that moved its own way is still Capture New Head; a teammate's request never reads as unpushed.
      const moved = planHandOff({ session: own(), projection: p, freshness: ok({ capturedHeadSha: HEAD, liveHeadSha: LIVE, moved: true, state: 'open' }) });
      assert.equal(moved.rows[0]!.command?.id, HAND_OFF_COMMANDS.captureNewHead);
      const theirs = planHandOff({ session: teammate(), projection: p, freshness: ok({ capturedHeadSha: HEAD, liveHeadSha: LIVE, moved: true, unpushed: 2, state: 'open' }) });
      assert.equal(theirs.rows[0]!.command?.id, HAND_OFF_COMMANDS.captureNewHead);
    });

    it('a branch review: Changes, and its post-review asks stated as having no request to post to', () => {
      const plan = planHandOff({ session: branch(), projection: p });
      assert.equal(plan.description, 'feature vs main');
      assert.deepEqual(labels(plan.rows).slice(0, 4), ['Changes', reading, 'Pull request: feature → main opens from here once nothing is left to ask.', 'Post review']);
      assert.match(labels(plan.rows)[4] ?? '', /^A branch review has no pull or merge request to post to; these asks stay staged\./);
      assert.ok(!plan.rows.some((r) => r.command?.id === 'rennet.previewReview'), 'no Preview without a request');
      assert.ok(!plan.rows.some((r) => r.command?.id === 'rennet.openPullRequest'), 'asks remain: the request is a destination, not yet an action');
    });

    it('one’s own branch with nothing left to ask: the exit is the pull request itself, for the reviewed branch', () => {
      const plan = planHandOff({ session: branch(), projection: new Asks().projection() });
      const row = plan.rows.find((r) => r.id === 'exit:open-request');
      assert.ok(row, JSON.stringify(labels(plan.rows)));
      assert.equal(row.label, 'Open pull request…');
      assert.equal(row.description, 'feature → main');
      assert.deepEqual(row.command, { id: 'rennet.openPullRequest', title: 'Open Pull Request', arguments: [{ repo: branch().session.repoRoot, branch: 'feature', base: 'main' }] });
    });

    it('a branch review with coding asks: Dispatch round N… is live; the host’s refusal is said where it would be', () => {
      const asks = new Asks();
      const id = asks.ask(line('src/a.ts', 1), 'fix the name', 'request-change', 'changes');
      const order = { markdown: '# Work order', digest: 'd'.repeat(64), asks: [id], workspace: { root: '/repo', branch: 'feature' } };
      const plan = planHandOff({ session: branch(), projection: asks.projection(), rounds: { order: { ok: true, value: order }, ledger: [] } });
      const dispatch = plan.rows.find((r) => r.id === 'exit:dispatch-round');
      assert.equal(dispatch?.label, 'Dispatch round 1…');
      assert.equal(dispatch?.description, '1 ask to the coding agent');
      assert.deepEqual(dispatch?.command, { id: HAND_OFF_COMMANDS.dispatchRound, title: 'Dispatch Round', arguments: [branch().session.id] });
      const refused = planHandOff({
        session: branch(),
        projection: asks.projection(),
        rounds: { order: err(rennetError('invalid-request', 'Only questions and approvals are staged.', { refusal: 'no-coding-asks' })), ledger: [] },
      });
      const row = refused.rows.find((r) => r.id === 'notice:dispatch-refusal');
      assert.equal(row?.label, 'Only questions and approvals are staged.');
      assert.equal(row?.command, undefined, 'a stated refusal, not a dead button');
    });

    it('a sibling’s landing line: a row in the host’s words with Land; none when the host has nothing to say; hostile refs stay text', () => {
      const asks = new Asks();
      const plan = (landing: { branch: string; workBranch: string | null; line: string | null } | undefined) =>
        planHandOff({ session: branch(), projection: asks.projection(), rounds: { order: undefined, ledger: [], landing } });
      const row = plan({ branch: 'feature', workBranch: 'rennet/feature', line: "The round's commits are on rennet/feature. feature has not moved." }).rows.find(
        (r) => r.contextValue === 'handoff-landing',
      );
      assert.ok(row);
      assert.equal(row.label, "The round's commits are on rennet/feature. feature has not moved.");
      assert.equal(row.description, 'Land');
      assert.deepEqual(row.command, { id: 'rennet.rounds.land', title: 'Land', arguments: [branch().session.id] });
      assert.match(String(row.tooltip), /git merge --ff-only rennet\/feature/);
      for (const quiet of [undefined, { branch: 'feature', workBranch: 'rennet/feature', line: null }, { branch: 'feature', workBranch: null, line: null }]) {
        assert.ok(!plan(quiet).rows.some((r) => r.contextValue === 'handoff-landing'), JSON.stringify(quiet));
      }
      const hostile = plan({
        branch: 'x](command:evil)',
        workBranch: 'rennet/x](command:evil)',
        line: "The round's commits are on rennet/x](command:evil). x](command:evil) has not moved.",
      }).rows.find((r) => r.contextValue === 'handoff-landing');
      assert.ok(hostile && !String(hostile.label).includes('](') && !String(hostile.tooltip).includes(']('), 'link syntax is split');
    });

    it('the rounds: a running one with Cancel in place of Dispatch; the ledger newest first, a retryable failure with Retry', () => {
      const asks = new Asks();
      asks.ask(line('src/a.ts', 1), 'fix the name', 'request-change', 'changes');
      const round = (ordinal: number, over: Partial<Round>): Round => ({
        id: `r-${ordinal}`,
        sessionId: branch().session.id,
        ordinal,
        asks: ['ask-1'],
        workOrderDigest: 'd',
        worker: { kind: 'claude-code', version: '2.1.197' },
        workspace: { root: '/repo', branch: 'feature' },
        fromPatchsetId: PS,
        fromGenerationId: null,
        startedAt: '2026-12-01T10:00:00.000Z',
        phase: 'regeneration',
        state: 'returned',
        failure: null,
        range: { from: 'a'.repeat(40), to: 'b'.repeat(40) },
        diff: { files: 1, additions: 2, deletions: 1 },
        successorPatchsetId: 'ps-next',
        report: { roundId: `r-${ordinal}`, successorPatchsetId: 'ps-next', outcomes: [], beyond: [], counts: { addressed: 1, partial: 0, untouched: 1, beyond: 0 } },
        generationId: 'g-next',
        endedAt: '2026-12-01T10:05:00.000Z',
        ...over,
      });
      const ledger = [
        round(1, {}),
        round(2, { state: 'failed', phase: 'verification', failure: { phase: 'verification', message: 'the round report: refused (unknown-evidence).', retryable: true }, report: null }),
        round(3, { state: 'running', phase: 'worker', range: null, diff: null, report: null, endedAt: null }),
      ];
      const plan = planHandOff({ session: branch(), projection: asks.projection(), rounds: { order: undefined, ledger } });
      const running = plan.rows.find((r) => r.id === 'round:running:r-3');
      assert.equal(running?.label, 'Round 3: the coding agent is working…');
      assert.deepEqual(running?.command?.id, HAND_OFF_COMMANDS.cancelRound);
      assert.ok(!plan.rows.some((r) => r.id === 'exit:dispatch-round'), 'one round at a time: no Dispatch while one runs');
      const history = plan.rows.find((r) => r.id === 'rounds');
      assert.deepEqual(labels(history!.children!), ['Round 2 failed at verification — Retry', 'Round 1 is back: 1 addressed · 0 partial · 1 untouched']);
      assert.deepEqual(history!.children![0]!.command, { id: HAND_OFF_COMMANDS.retryRound, title: 'Retry Round', arguments: [branch().session.id, 'r-2'] });
      assert.equal(history!.children![1]!.description, 'claude-code · aaaaaaa..bbbbbbb');
    });

    it('the working tree with only changes asks: one lane and the refusal', () => {
      const asks = new Asks();
      asks.ask(line('src/a.ts', 1), 'fix the name', 'request-change', 'changes');
      const plan = planHandOff({ session: workingTree(), projection: asks.projection() });
      assert.equal(plan.description, 'working tree vs main');
      assert.deepEqual(labels(plan.rows), ['Changes', refusal]);
      assert.deepEqual(plan.badge, { value: 1, tooltip: '1 ask staged in this review' });
    });
  });

  describe('words', () => {
    it('an ask’s label is its first non-empty line without Markdown markers, cut with an ellipsis', () => {
      assert.equal(firstLine('\n\n  ## Heading here\nmore'), 'Heading here');
      assert.equal(firstLine('> quoted\nx'), 'quoted');
      assert.equal(firstLine('- item'), 'item');
      assert.equal(firstLine('x'.repeat(200)).length, 120);
      assert.ok(firstLine('x'.repeat(200)).endsWith('…'));
    });

    it('hostile text stays text: link and icon syntax is split, controls are escaped', () => {
      const asks = new Asks();
      asks.ask(line('src/$(zap)](command:x).ts', 1), '[click](command:rennet.restartHost) $(alert)\u202Egnp.exe', 'comment');
      const plan = planHandOff({ session: teammate(), projection: asks.projection() });
      const row = laneOf(plan.rows, 'lane:post-review')!.children![0]!;
      assert.doesNotMatch(row.label, /\]\(|\$\(/);
      assert.match(row.label, /\\u202E/);
      assert.doesNotMatch(row.description ?? '', /\]\(|\$\(/);
      const tooltip = row.tooltip as Md;
      assert.deepEqual(tooltip.commands, [], 'no command link can come of ask text');
      assert.doesNotMatch(tooltip.source, /\]\(command:/);
    });

    it('anchors in words', () => {
      assert.equal(anchorWords(line('a.ts', 5), PS), 'a.ts:5 (new)');
      assert.equal(anchorWords(line('a.ts', 5, 9, 'base'), PS), 'a.ts:5-9 (old)');
      assert.equal(anchorWords({ kind: 'finding', generationId: GEN, boardId: BOARD, findingId: 'f-9' }, PS), 'finding: f-9');
      // A finding not on the shown boards (an earlier generation's) is named by its code, not its element id.
      const codeRef = { patchsetId: 'ps-old', path: 'a.ts', side: 'head' as const, startLine: 3, endLine: 4 };
      assert.equal(anchorWords({ kind: 'finding', generationId: GEN, boardId: BOARD, findingId: 'f-9', codeRef }, PS), 'finding on a.ts:3-4 (new) · earlier capture');
      const titles = new Map([[findingKey({ generationId: GEN, boardId: BOARD, findingId: 'f-9' }), 'Retries never stop']]);
      assert.equal(anchorWords({ kind: 'finding', generationId: GEN, boardId: BOARD, findingId: 'f-9', codeRef }, PS, titles), 'finding: Retries never stop');
      assert.equal(anchorWords({ kind: 'quote', generationId: GEN, lens: 'noise', elementId: 'e', quote: 'q' }, PS), 'board: Noise');
      assert.equal(anchorWords({ kind: 'none' }, PS), 'general');
    });

    it('the one-line edit box round-trips line breaks, and what it sends is an edit the contract takes', () => {
      const text = 'first\nsecond\r\nthird';
      assert.equal(editableText(text), 'first⏎second⏎third');
      assert.equal(editedText(editableText(text)), 'first\nsecond\nthird');
      assert.ok(AskCommand.safeParse({ type: 'edit', askId: 'ask-0001', text: editedText('a⏎b') }).success);
    });
  });
});
