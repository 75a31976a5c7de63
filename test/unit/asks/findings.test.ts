import * as assert from 'node:assert/strict';
import { AskCommand, flaggedBoardId, findingKey, type AskProjection, type FindingRef } from '../../../protocol/asks';
import { mintAskEvent, parseAskCommand } from '../../../host/asks/commands';
import { EMPTY_ASK_PROJECTION, flaggedOpenCount, stepAsks } from '../../../host/asks/fold';
import { SESSION, testContext } from './gen';

const ctx = testContext();
let ordinal = 0;

function run(p: AskProjection, command: AskCommand): { p: AskProjection; id: string } {
  const parsed = parseAskCommand(command);
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.refusal.message);
  const minted = mintAskEvent(p, parsed.command, ctx(++ordinal));
  assert.ok(minted.ok, minted.ok ? '' : minted.refusal.message);
  const step = stepAsks(p, minted.event);
  assert.ok(step.ok, step.ok ? '' : step.refusal.message);
  return { p: step.projection, id: minted.event.type === 'stage' ? minted.event.askId : '' };
}

const finding = (generationId: string, findingId: string): FindingRef => ({ generationId, boardId: flaggedBoardId(SESSION, generationId), findingId });

describe('asks: finding dispositions and the Flagged open count', () => {
  const g1 = ['e1', 'e2', 'e3', 'e4'].map((id) => finding('g-one', id));
  // A retried draft: a new generation whose Flagged board reuses the same element ids.
  const g2 = ['e1', 'e2', 'e3', 'e4'].map((id) => finding('g-two', id));

  it('binds a dismissal to (generation, board, finding): a retried draft does not inherit it', () => {
    let { p } = run(EMPTY_ASK_PROJECTION, { type: 'dismissFinding', ...finding('g-one', 'e1') });
    assert.deepEqual(p.findingDispositions, { [findingKey(finding('g-one', 'e1'))]: 'dismissed' });
    assert.equal(flaggedOpenCount(g1, p), 3);
    assert.equal(flaggedOpenCount(g2, p), 4, 'the same element id in the next generation is still open');
    // Restoring in the successor is refused: it was never dismissed there.
    const minted = mintAskEvent(p, { type: 'restoreFinding', ...finding('g-two', 'e1') }, ctx(++ordinal));
    assert.ok(minted.ok);
    assert.equal(stepAsks(p, minted.event).ok, false);
    ({ p } = run(p, { type: 'restoreFinding', ...finding('g-one', 'e1') }));
    assert.deepEqual(p.findingDispositions, {});
    assert.equal(flaggedOpenCount(g1, p), 4);
  });

  it('derives the open count: findings minus dismissed minus those with a staged request-change ask', () => {
    let p = EMPTY_ASK_PROJECTION;
    ({ p } = run(p, { type: 'dismissFinding', ...finding('g-one', 'e1') }));
    const requested = run(p, {
      type: 'stage',
      anchor: { kind: 'finding', ...finding('g-one', 'e2'), codeRef: { patchsetId: 'ps-a', path: 'src/a.ts', side: 'head', startLine: 4, endLine: 9 } },
      text: 'Guard the null case',
      intent: 'request-change',
      lane: 'post-review',
    });
    p = requested.p;
    ({ p } = run(p, { type: 'stage', anchor: { kind: 'finding', ...finding('g-one', 'e3') }, text: 'Is this reachable?', intent: 'question', lane: 'post-review' }));
    ({ p } = run(p, { type: 'stage', anchor: { kind: 'finding', ...finding('g-two', 'e4') }, text: 'Fix in the successor', intent: 'request-change', lane: 'post-review' }));
    assert.equal(flaggedOpenCount(g1, p), 2, 'e3 (a question does not close it) and e4 (the ask names g-two) stay open');
    assert.equal(flaggedOpenCount([...g1, ...g1], p), 2, 'a finding listed twice counts once');
    assert.equal(flaggedOpenCount(g2, p), 3);
    // Retiring the request-change ask reopens its finding; the count is never stored, only derived.
    ({ p } = run(p, { type: 'retire', askId: requested.id }));
    assert.equal(flaggedOpenCount(g1, p), 3);
    assert.ok(!('flaggedOpen' in p.counts));
  });

  it('refuses a board id that is not this generation’s Flagged board, or another session’s', () => {
    assert.equal(AskCommand.safeParse({ type: 'dismissFinding', generationId: 'g-two', boardId: flaggedBoardId(SESSION, 'g-one'), findingId: 'e1' }).success, false);
    assert.equal(AskCommand.safeParse({ type: 'dismissFinding', generationId: 'g-one', boardId: `${SESSION}/g-one/design`, findingId: 'e1' }).success, false);
    const foreign = mintAskEvent(EMPTY_ASK_PROJECTION, { type: 'dismissFinding', ...{ generationId: 'g-one', boardId: flaggedBoardId('s-other', 'g-one'), findingId: 'e1' } }, ctx(++ordinal));
    assert.equal(foreign.ok ? 'minted' : foreign.refusal.code, 'wrong-session');
  });
});
