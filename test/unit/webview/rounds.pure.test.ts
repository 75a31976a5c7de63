import * as assert from 'node:assert/strict';
import { ROUND_PHASES, ToWebview, FromWebview } from '../../../protocol';
import { countParts, evidenceFocus, evidenceLabel, ledgerRows, phaseSteps, rangeText, retryText, roundsLead, stateText, workerText, workspaceText } from '../../../webview/board/roundsModel';
import { initialModel, reduce } from '../../../webview/state';
import { FROM, TO, report, returned, round } from './roundFixtures';

/** The rounds area's pure model: phases, what leads, words, and the ledger rows. */
describe('webview/board/roundsModel: the run view, greeting and ledger model (pure)', () => {
  const marks = (r: Parameters<typeof phaseSteps>[0]) => phaseSteps(r).map((s) => s.mark);

  it('marks the phases of a running round: before its phase done, its phase current, after it pending', () => {
    assert.deepEqual(marks(round({ ordinal: 1, phase: 'prep' })), ['current', 'pending', 'pending', 'pending', 'pending', 'pending']);
    assert.deepEqual(marks(round({ ordinal: 1, phase: 'commit' })), ['done', 'done', 'current', 'pending', 'pending', 'pending']);
    assert.deepEqual(marks(round({ ordinal: 1, phase: 'regeneration' })), ['done', 'done', 'done', 'done', 'done', 'current']);
    assert.deepEqual(
      phaseSteps(round({ ordinal: 1, phase: 'report' })).map((s) => s.phase),
      [...ROUND_PHASES],
      'prep → worker → commit → report → verification → regeneration',
    );
    assert.deepEqual(
      phaseSteps(round({ ordinal: 1 })).map((s) => s.label),
      ['Prep', 'Worker', 'Commit', 'Report', 'Verification', 'Regeneration'],
    );
  });

  it('a failed round is marked at its failure phase; a cancelled one where it stopped; nothing after is pending', () => {
    const failed = round({ ordinal: 2, state: 'failed', phase: 'verification', failure: { phase: 'verification', message: 'missing-ask', retryable: true } });
    assert.deepEqual(marks(failed), ['done', 'done', 'done', 'done', 'failed', 'skipped']);
    const cancelled = round({ ordinal: 2, state: 'cancelled', phase: 'worker' });
    assert.deepEqual(marks(cancelled), ['done', 'stopped', 'skipped', 'skipped', 'skipped', 'skipped']);
    assert.equal(stateText(failed), 'failed at verification · retryable');
    assert.match(retryText(failed), /Hand off view/);
    assert.match(retryText({ ...failed, failure: { phase: 'verification', message: 'x', retryable: false } }), /^Not retryable/);
  });

  it('the newest round leads: run, failed, cancelled, the greeting, or unchanged', () => {
    assert.equal(roundsLead([]), null);
    assert.equal(roundsLead([returned(1), round({ ordinal: 2 })])?.kind, 'run');
    assert.equal(roundsLead([round({ ordinal: 2 }), returned(1)])?.kind, 'run', 'by ordinal, not by position');
    assert.equal(roundsLead([returned(1), round({ ordinal: 2, state: 'failed', failure: { phase: 'worker', message: 'x', retryable: false } })])?.kind, 'failed');
    assert.equal(roundsLead([round({ ordinal: 1, state: 'cancelled' })])?.kind, 'cancelled');
    assert.equal(roundsLead([round({ ordinal: 1, state: 'unchanged', phase: 'commit' })])?.kind, 'unchanged');
    const lead = roundsLead([returned(1), returned(2)]);
    assert.equal(lead?.kind, 'greeting');
    if (lead?.kind === 'greeting') assert.equal(lead.round.ordinal, 2);
  });

  it('words: worker with version, range, workspace, counts, evidence', () => {
    assert.equal(workerText({ kind: 'claude-code', version: '2.1.3' }), 'Claude Code 2.1.3');
    assert.equal(workerText({ kind: 'codex', version: null }), 'Codex');
    assert.equal(workerText({ kind: 'scripted', version: null }), 'scripted worker');
    assert.equal(rangeText(returned(1)), `${FROM.slice(0, 7)}..${TO.slice(0, 7)}`);
    assert.equal(rangeText(round({ ordinal: 1 })), null);
    assert.equal(workspaceText(round({ ordinal: 1 })), '/work/repo · feature');
    assert.equal(workspaceText(round({ ordinal: 1, workspace: { root: '/data/wt', branch: 'feature', workBranch: 'rennet/feature' } })), '/data/wt · rennet/feature (for feature)');
    const r = report('r-1', [
      { askId: 'a', askText: 'x', outcome: 'addressed' },
      { askId: 'b', askText: 'y', outcome: 'partial' },
      { askId: 'c', askText: 'z', outcome: 'untouched' },
    ]);
    assert.deepEqual(
      countParts(r).map((p) => p.text),
      ['1 addressed', '1 partial', '1 untouched', '0 beyond'],
    );
    const hunk = { evidenceId: 'ev-0000000000000001', kind: 'text-hunk' as const, path: 'src/a.ts', side: 'base' as const, line: 7 };
    assert.equal(evidenceLabel(hunk), 'src/a.ts:7 (old)');
    assert.deepEqual(evidenceFocus(hunk), { path: 'src/a.ts', side: 'base', line: 7 });
    const rename = { evidenceId: 'ev-0000000000000002', kind: 'rename' as const, path: 'src/b.ts', side: null, line: null };
    assert.equal(evidenceLabel(rename), 'src/b.ts (renamed)');
    assert.deepEqual(evidenceFocus(rename), { path: 'src/b.ts', side: 'head', line: null });
  });

  it('the ledger lists every round newest first, with its generation and the frozen one before it', () => {
    const rounds = [returned(1), returned(2), round({ ordinal: 3, state: 'unchanged', phase: 'commit', range: { from: TO, to: TO } })];
    const rows = ledgerRows(rounds, { shownId: 'g-r-2', shownLive: true, frozenIds: new Set(['g-r-1', 'g-first']) });
    assert.deepEqual(
      rows.map((r) => [r.title, r.state, r.asks, r.hasDiff, r.hasReport]),
      [
        ['Round 3', 'changed nothing', '2 asks', false, false],
        ['Round 2', 'back', '1 ask', true, true],
        ['Round 1', 'back', '1 ask', true, true],
      ],
    );
    const [, two, one] = rows;
    assert.deepEqual(two?.generation, { id: 'g-r-2', short: 'g-r-2', frozen: false, shown: true });
    assert.deepEqual(two?.earlier, { id: 'g-r-1', short: 'g-r-1', frozen: true, shown: false, select: 'g-r-1' });
    assert.deepEqual(one?.earlier, { id: 'g-first', short: 'g-first', frozen: true, shown: false, select: 'g-first' });
    // A frozen generation shown: the one not frozen is the live one, selected with null.
    const pinned = ledgerRows(rounds, { shownId: 'g-r-1', shownLive: false, frozenIds: new Set(['g-r-1', 'g-first']) });
    assert.equal(pinned[1]?.generation?.select, null);
    assert.equal(pinned[2]?.generation?.shown, true);
  });

  it('the contract: rounds arrive whole per session; openRoundDiff names a round and, optionally, a line', () => {
    const rounds = [returned(1), round({ ordinal: 2 })];
    assert.ok(ToWebview.safeParse({ type: 'rennet/panel/rounds', sessionId: 's-1', rounds }).success);
    assert.ok(!ToWebview.safeParse({ type: 'rennet/panel/rounds', sessionId: 's-1', rounds: [{ ...rounds[0], state: 'exploded' }] }).success);
    assert.ok(FromWebview.safeParse({ type: 'rennet/panel/openRoundDiff', roundId: 'r-1' }).success);
    assert.ok(FromWebview.safeParse({ type: 'rennet/panel/openRoundDiff', roundId: 'r-1', at: { path: 'a.js', side: 'base', line: 3 } }).success);
    assert.ok(!FromWebview.safeParse({ type: 'rennet/panel/openRoundDiff', roundId: '' }).success);
    assert.ok(!FromWebview.safeParse({ type: 'rennet/panel/openRoundDiff', roundId: 'r-1', at: { path: 'a.js', side: 'middle', line: 3 } }).success);
    // The reducer takes them whole, and only the panel's own session's.
    const model = reduce(initialModel, { type: 'message', message: { type: 'rennet/panel/rounds', sessionId: 's-1', rounds } });
    assert.equal(model.rounds, rounds);
  });
});
