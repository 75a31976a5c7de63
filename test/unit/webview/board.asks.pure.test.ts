/**
 * The pure side of the board's ask affordances: the open count, lanes, anchors, marks, thread
 * grouping, the reveal's fold lookup and the reducer's ask state. Projections are folded by the
 * host's own fold (host/asks/fold.ts) from real events, never written by hand.
 */
import * as assert from 'node:assert/strict';
import { foldAsks } from '../../../host/asks/fold';
import { ASK_QUOTE_MAX_BYTES, ASK_TEXT_MAX_BYTES, AskCommand, findingKey, flaggedBoardId, utf8Length, type AskEvent, type ElementOf, type QuoteAnchor, type ToWebview } from '../../../protocol';
import {
  askText,
  cutToUtf8Bytes,
  detachedByLens,
  findingAnchorFor,
  findingMarksIndex,
  findingRefFor,
  findingRequestText,
  latestExplainByPlace,
  openThreadOn,
  placeKey,
  quoteAnchorFor,
  threadsByPlace,
} from '../../../webview/board/asks';
import { openCountText, openFindingCount } from '../../../webview/board/openCount';
import { rootContaining } from '../../../webview/board/reveal';
import { buildTree } from '../../../webview/board/tree';
import { initialModel, reduce, type PanelModel } from '../../../webview/state';
import { elements, flaggedBoard, PATCHSET } from './boardFixtures';

const SESSION = 'ses-1';
const GEN = 'g-0011223344556677';
const BOARD = flaggedBoardId(SESSION, GEN);
const AT = '2026-01-01T10:00:00.000Z';
const scope = { sessionId: SESSION, generationId: GEN, patchsetId: PATCHSET };

const dismiss = (findingId: string, generationId = GEN): AskEvent => ({
  type: 'dismissFinding',
  generationId,
  boardId: flaggedBoardId(SESSION, generationId),
  findingId,
});
const stageOn = (findingId: string, askId: string, intent: 'request-change' | 'comment' = 'request-change', ordinal = 1): AskEvent => ({
  type: 'stage',
  askId,
  anchor: { kind: 'finding', generationId: GEN, boardId: BOARD, findingId },
  text: 'Fix it',
  intent,
  lane: 'post-review',
  createdAt: AT,
  editedAt: null,
  ordinal,
});
const finding = (id: string): ElementOf<'finding'> => {
  const found = flaggedBoard().elements.find((e) => e.id === id);
  assert.ok(found?.kind === 'finding');
  return found;
};

describe('webview/board/openCount: the Flagged open count is derived', () => {
  const pool = flaggedBoard().elements;

  it('counts every open finding when nothing is dismissed', () => {
    assert.equal(openFindingCount(pool, scope, foldAsks([])), 3);
  });

  it('takes dismissed findings off and puts restored ones back', () => {
    assert.equal(openFindingCount(pool, scope, foldAsks([dismiss('f4')])), 2);
    assert.equal(openFindingCount(pool, scope, foldAsks([dismiss('f4'), dismiss('f8')])), 1);
    assert.equal(openFindingCount(pool, scope, foldAsks([dismiss('f4'), { type: 'restoreFinding', generationId: GEN, boardId: BOARD, findingId: 'f4' }])), 3);
  });

  it('takes a finding with a staged change request off the count (the reviewer decided it), and puts it back on unstage', () => {
    assert.equal(openFindingCount(pool, scope, foldAsks([stageOn('f4', 'ask-1')])), 2);
    assert.equal(openFindingCount(pool, scope, foldAsks([stageOn('f4', 'ask-1'), { type: 'unstage', askId: 'ask-1' }])), 3);
  });

  it('ignores dispositions of another generation or session that reuse the finding id', () => {
    assert.equal(openFindingCount(pool, scope, foldAsks([dismiss('f4', 'g-other')])), 3);
    assert.equal(openFindingCount(pool, { sessionId: 'ses-2', generationId: GEN }, foldAsks([dismiss('f4')])), 3);
  });

  it('counts only findings whose status is open, and an id listed twice once', () => {
    const resolved = pool.map((e) => (e.id === 'f5' && e.kind === 'finding' ? { ...e, status: 'resolved' as const } : e));
    assert.equal(openFindingCount(resolved, scope, foldAsks([])), 2);
    const twice = [...pool, ...pool.filter((e) => e.id === 'f8')];
    assert.equal(openFindingCount(twice, scope, foldAsks([])), 3);
    assert.equal(openFindingCount(elements([]), scope, foldAsks([])), 0);
  });

  it('says the count in words', () => {
    assert.equal(openCountText(0), 'none open');
    assert.equal(openCountText(2), '2 open');
  });
});

describe('webview/board/asks: lanes, text and finding anchors', () => {
  it('cuts text to a byte budget without splitting a character', () => {
    assert.equal(cutToUtf8Bytes('abc', 2), 'ab');
    assert.equal(cutToUtf8Bytes('aé', 2), 'a', 'é is two bytes');
    assert.equal(cutToUtf8Bytes('a😀b', 4), 'a', 'the surrogate pair is four bytes, kept whole or not at all');
    assert.equal(cutToUtf8Bytes('a😀b', 5), 'a😀');
    const long = 'ü'.repeat(ASK_QUOTE_MAX_BYTES);
    const cut = cutToUtf8Bytes(long, ASK_QUOTE_MAX_BYTES);
    assert.equal(utf8Length(cut), ASK_QUOTE_MAX_BYTES);
    assert.equal(cut.length, ASK_QUOTE_MAX_BYTES / 2);
  });

  it('refuses blank and oversized ask text with a reason', () => {
    assert.deepEqual(askText('  fix  '), { ok: true, value: '  fix  ' });
    assert.equal(askText(' \n ').ok, false);
    const over = askText('x'.repeat(ASK_TEXT_MAX_BYTES + 1));
    assert.equal(over.ok, false);
    assert.match(over.ok ? '' : over.reason, /longer than 64 KiB/);
  });

  it('names a finding by generation, Flagged board and id; an id the log cannot hold is refused', () => {
    assert.deepEqual(findingRefFor(scope, 'f4'), { ok: true, value: { generationId: GEN, boardId: BOARD, findingId: 'f4' } });
    assert.equal(findingRefFor(scope, 'has/slash').ok, false);
    assert.equal(findingRefFor({ ...scope, generationId: 'bad|gen' }, 'f4').ok, false);
  });

  it('anchors a change request on the finding and its first code ref, read against the generation’s capture', () => {
    const tree = buildTree(flaggedBoard().elements);
    const anchor = findingAnchorFor(scope, finding('f4'), tree.byId);
    assert.deepEqual(anchor, {
      ok: true,
      value: { kind: 'finding', generationId: GEN, boardId: BOARD, findingId: 'f4', codeRef: { patchsetId: PATCHSET, path: 'src/retry.ts', side: 'head', startLine: 6, endLine: 8 } },
    });
    const command = { type: 'stage', anchor: anchor.ok ? anchor.value : null, text: findingRequestText(finding('f4')), intent: 'request-change', lane: 'post-review' };
    assert.ok(AskCommand.safeParse(command).success, 'the command passes the contract');
  });

  it('leaves the code ref out when the first anchor is not a usable code ref', () => {
    const pool = flaggedBoard().elements.map((e) => (e.id === 'f2' && e.kind === 'code_ref' ? { ...e, path: '/etc/passwd' } : e));
    const anchor = findingAnchorFor(scope, finding('f5'), buildTree(pool).byId);
    assert.deepEqual(anchor, { ok: true, value: { kind: 'finding', generationId: GEN, boardId: BOARD, findingId: 'f5' } });
    const missing = findingAnchorFor(scope, { ...finding('f5'), anchor: ['nope'] }, buildTree(pool).byId);
    assert.equal(missing.ok && missing.value.codeRef, undefined);
  });

  it('asks for the claim and its remedy', () => {
    assert.equal(findingRequestText(finding('f5')), 'A thrown non-Error value is lost\n\nKeep whatever was thrown.');
    assert.equal(findingRequestText({ title: 'Only a claim', remedy_markdown: '  ' }), 'Only a claim');
    assert.equal(utf8Length(findingRequestText({ title: 'x'.repeat(ASK_TEXT_MAX_BYTES), remedy_markdown: 'y' })), ASK_TEXT_MAX_BYTES);
  });

  it('marks findings from the projection: dismissed, and requested only by a staged request-change on that finding', () => {
    const marks = findingMarksIndex(
      foldAsks([dismiss('f5'), stageOn('f4', 'ask-1'), stageOn('f8', 'ask-2', 'comment', 2), stageOn('f5', 'ask-3', 'request-change', 3), { type: 'unstage', askId: 'ask-3' }]),
    );
    const key = (id: string) => findingKey({ generationId: GEN, boardId: BOARD, findingId: id });
    assert.deepEqual(marks.get(key('f4')), { dismissed: false, requested: true });
    assert.deepEqual(marks.get(key('f5')), { dismissed: true, requested: false });
    assert.equal(marks.get(key('f8')), undefined, 'a comment is not a change request');
  });
});

describe('webview/board/asks: quotes, threads and Explains', () => {
  const place = { generationId: GEN, lens: 'sequence' as const, elementId: 's7' };

  it('maps a selection to a quote anchor: trimmed, cut to the quote limit, under the nearest element', () => {
    assert.deepEqual(quoteAnchorFor(place, '  Both files are new  '), { ok: true, value: { kind: 'quote', ...place, quote: 'Both files are new' } });
    const long = quoteAnchorFor(place, 'é'.repeat(ASK_QUOTE_MAX_BYTES));
    assert.ok(long.ok);
    assert.equal(utf8Length(long.value.quote), ASK_QUOTE_MAX_BYTES);
    assert.ok(AskCommand.safeParse({ type: 'quoteOpen', anchor: long.value }).success);
  });

  it('refuses a blank selection and an element id the log cannot hold', () => {
    assert.equal(quoteAnchorFor(place, ' \n\t ').ok, false);
    assert.equal(quoteAnchorFor({ ...place, elementId: 'a/b' }, 'text').ok, false);
    assert.equal(quoteAnchorFor({ ...place, elementId: '' }, 'text').ok, false);
  });

  const anchor = (elementId: string, generationId = GEN): QuoteAnchor => ({ kind: 'quote', generationId, lens: 'sequence', elementId, quote: 'q' });

  it('groups the shown generation’s threads under their element, oldest first', () => {
    const projection = foldAsks([
      { type: 'quoteOpen', threadId: 'qt-b', anchor: anchor('s7'), openedAt: '2026-01-01T10:00:02.000Z' },
      { type: 'quoteOpen', threadId: 'qt-a', anchor: anchor('s7'), openedAt: '2026-01-01T10:00:01.000Z' },
      { type: 'quoteOpen', threadId: 'qt-c', anchor: anchor('s3'), openedAt: AT },
      { type: 'quoteOpen', threadId: 'qt-old', anchor: anchor('s7', 'g-old'), openedAt: AT },
    ]);
    const grouped = threadsByPlace(projection, GEN);
    assert.deepEqual(
      grouped.get(placeKey(GEN, 'sequence', 's7'))?.map((t) => t.threadId),
      ['qt-a', 'qt-b'],
    );
    assert.deepEqual(
      grouped.get(placeKey(GEN, 'sequence', 's3'))?.map((t) => t.threadId),
      ['qt-c'],
    );
    assert.equal([...grouped.values()].flat().length, 3, 'another generation’s thread is not shown here');
    assert.equal(threadsByPlace(null, GEN).size, 0);
  });

  it('puts a detached thread under no element, and lists it by lens for the generations it belongs to', () => {
    const detach = (threadId: string, a: QuoteAnchor): AskEvent => ({ type: 'quoteAnchor', threadId, anchor: a, detached: true });
    const projection = foldAsks([
      { type: 'quoteOpen', threadId: 'qt-here', anchor: anchor('s7'), openedAt: AT },
      { type: 'quoteOpen', threadId: 'qt-gone', anchor: anchor('s7'), openedAt: '2026-01-01T10:00:05.000Z' },
      { type: 'quoteOpen', threadId: 'qt-old', anchor: anchor('s3', 'g-old'), openedAt: '2026-01-01T10:00:01.000Z' },
      { type: 'quoteOpen', threadId: 'qt-flag', anchor: { ...anchor('f4', 'g-old'), lens: 'flagged' }, openedAt: AT },
      detach('qt-gone', anchor('s7')),
      detach('qt-old', anchor('s3', 'g-old')),
      detach('qt-flag', { ...anchor('f4', 'g-old'), lens: 'flagged' }),
    ]);
    // Its old spot draws nothing: only the attached thread is under s7.
    assert.deepEqual(
      threadsByPlace(projection, GEN)
        .get(placeKey(GEN, 'sequence', 's7'))
        ?.map((t) => t.threadId),
      ['qt-here'],
    );
    assert.equal(threadsByPlace(projection, 'g-old').size, 0, 'nor on the generation it was detached from');

    // The live generation lists every detached thread, by lens, oldest first.
    const live = detachedByLens(projection, { generationId: GEN, status: 'live', frozen: [{ generationId: 'g-old' }, { generationId: 'g-older' }] });
    assert.deepEqual(
      live.get('sequence')?.map((t) => t.threadId),
      ['qt-old', 'qt-gone'],
    );
    assert.deepEqual(
      live.get('flagged')?.map((t) => t.threadId),
      ['qt-flag'],
    );
    assert.equal(live.get('design'), undefined);
    // A frozen generation lists those detached from it or from an earlier one, never from a later one.
    const frozenOld = detachedByLens(projection, { generationId: 'g-old', status: 'frozen', frozen: [{ generationId: 'g-old' }, { generationId: 'g-older' }] });
    assert.deepEqual(
      frozenOld.get('sequence')?.map((t) => t.threadId),
      ['qt-old'],
    );
    const frozenOlder = detachedByLens(projection, { generationId: 'g-older', status: 'frozen', frozen: [{ generationId: 'g-old' }, { generationId: 'g-older' }] });
    assert.equal(frozenOlder.size, 0);
    assert.equal(detachedByLens(null, { generationId: GEN, status: 'live', frozen: [] }).size, 0);

    // Discuss and Explain continue an open, attached thread on the very anchor — never a detached one.
    assert.equal(openThreadOn(projection, anchor('s7')), 'qt-here');
    assert.equal(openThreadOn(projection, anchor('s3', 'g-old')), undefined);
  });

  it('keeps the latest Explain per element', () => {
    const latest = latestExplainByPlace(
      {
        r1: { anchor: anchor('s7'), state: 'failed', threadId: null, message: 'no', order: 1 },
        r2: { anchor: anchor('s7'), state: 'working', threadId: null, message: null, order: 2 },
        r3: { anchor: null, state: 'answered', threadId: 'qt-1', message: null, order: 3 },
      },
      GEN,
    );
    assert.equal(latest.size, 1);
    assert.equal(latest.get(placeKey(GEN, 'sequence', 's7'))?.requestId, 'r2');
  });
});

describe('webview/board/reveal: which folded section holds an element', () => {
  it('finds the top-level node whose subtree renders the element', () => {
    const tree = buildTree(flaggedBoard().elements);
    assert.equal(rootContaining(tree.roots, 'f8')?.element.id, 'f6');
    assert.equal(rootContaining(tree.roots, 'f4')?.element.id, 'f1');
    assert.equal(rootContaining(tree.roots, 'f1')?.element.id, 'f1');
    assert.equal(rootContaining(tree.roots, 'nope'), null);
  });
});

describe('webview/state: the ask log, reveals, Explains and refusals', () => {
  const send = (model: PanelModel, message: ToWebview) => reduce(model, { type: 'message', message });

  it('takes the projection and the undo label whole', () => {
    const projection = foldAsks([dismiss('f4')]);
    const model = send(initialModel, { type: 'rennet/panel/asks', projection, undo: { label: 'dismiss finding' } });
    assert.equal(model.asks, projection);
    assert.equal(model.undoLabel, 'dismiss finding');
    assert.equal(send(model, { type: 'rennet/panel/asks', projection, undo: null }).undoLabel, null);
  });

  it('selects the reveal’s lens at once and keeps the reveal until it is carried out', () => {
    const model = send(initialModel, { type: 'rennet/panel/reveal', generationId: GEN, lens: 'decisions', elementId: 'c5' });
    assert.equal(model.lens, 'decisions');
    assert.deepEqual(model.reveal, { generationId: GEN, lens: 'decisions', elementId: 'c5', seq: 1 });
    const again = send(model, { type: 'rennet/panel/reveal', generationId: GEN, lens: 'decisions', elementId: 'c6' });
    assert.equal(again.reveal?.seq, 2);
    assert.equal(reduce(again, { type: 'reveal-done', seq: 1, found: true }).reveal?.seq, 2, 'a late done never ends a newer reveal');
    assert.equal(reduce(again, { type: 'reveal-done', seq: 2, found: true }).reveal, null);
    const missing = reduce(again, { type: 'reveal-done', seq: 2, found: false });
    assert.equal(missing.notice?.kind, 'reveal-missing');
    assert.match(missing.notice?.message ?? '', /c6/);
  });

  it('tracks an Explain from the request to the extension’s status', () => {
    const anchor: QuoteAnchor = { kind: 'quote', generationId: GEN, lens: 'flagged', elementId: 'f4', quote: 'q' };
    const asked = reduce(initialModel, { type: 'explain-requested', requestId: 'r1', anchor });
    assert.deepEqual(asked.explains.r1, { anchor, state: 'working', threadId: null, message: null, order: 1 });
    const failed = send(asked, { type: 'rennet/panel/explainStatus', requestId: 'r1', state: 'failed', threadId: 'qt-1', message: 'No harness is configured' });
    assert.deepEqual(failed.explains.r1, { anchor, state: 'failed', threadId: 'qt-1', message: 'No harness is configured', order: 1 });
    const stray = send(initialModel, { type: 'rennet/panel/explainStatus', requestId: 'r9', state: 'working', threadId: null, message: null });
    assert.equal(stray.explains.r9?.anchor, null);
  });

  it('shows a refusal until dismissed and counts refusals', () => {
    const refused = send(initialModel, { type: 'rennet/panel/askRefused', message: 'already dismissed' });
    assert.deepEqual(refused.notice, { kind: 'ask-refused', message: 'already dismissed', seq: 1 });
    assert.equal(refused.refusals, 1);
    const dismissed = reduce(refused, { type: 'dismiss-notice' });
    assert.equal(dismissed.notice, null);
    assert.equal(dismissed.refusals, 1);
  });
});
