import assert from 'node:assert/strict';
import { renderResult } from '../../../host/board/render';
import { applyVerb, expandFindingAgreement, placeNoiseMembers } from '../../../host/board/writer';
import type { BoardState, VerbCall, WriterContext } from '../../../host/board/state';
import { accepted, assertSchema, boardFor, build, changeFixture, cite, contextFor, deepFreeze, refused, type ChangeFixture } from './writerFixtures';

type Loose = Record<string, unknown>;
const el = (state: BoardState, id: string): Loose => state.elements.get(id) as unknown as Loose;

const FINDING = {
  severity: 'major',
  category: 'correctness',
  title: 'The header is read twice',
  body_markdown: 'Every request parses the header a second time, doubling the cost on large files.',
  remedy_markdown: 'Parse once and pass the result down.',
};

describe('board writer', function () {
  this.timeout(60_000);
  let fx: ChangeFixture;
  let ctx: WriterContext;
  before(async () => {
    fx = await changeFixture();
    ctx = contextFor(fx.patchset, 'compiler');
  });
  after(() => fx?.repo.cleanup());

  /** A flagged board: section e1, citation e2 (src/app.ts:10), finding e3 under e1. */
  function flaggedBoard(): BoardState {
    return build(boardFor('flagged', fx.patchset), ctx, [
      { verb: 'set_document', input: { title: 'Header parsing', intro_markdown: 'Headers are parsed once. Large files open faster.' } },
      { verb: 'add', kind: 'section', input: { title: 'Parsing', body_markdown: 'How the header is read.' } },
      cite('src/app.ts', 'head', 10),
      { verb: 'add', kind: 'finding', input: { ...FINDING, anchor: ['e2'], parent_id: 'e1', origin: 'claude', agreement: 'solo' } },
    ]).state;
  }

  it('mints ids sequentially, returns them, and records creation order', () => {
    const { state, ids } = build(boardFor('flagged', fx.patchset), ctx, [
      { verb: 'add', kind: 'section', input: { title: 'A' } },
      cite('src/app.ts', 'head', 28, 30),
      { verb: 'add', kind: 'section', input: { title: 'B', parent_id: 'e1' } },
    ]);
    assert.deepEqual(ids, ['e1', 'e2', 'e3']);
    assert.deepEqual([...state.elements.keys()], ['e1', 'e2', 'e3']);
    assert.deepEqual(
      [...state.elements.values()].map((e) => e.seq),
      [1, 2, 3],
    );
    assert.equal(state.nextId, 4);
    assert.equal(el(state, 'e3').parent, 'e1');
    assert.equal(el(state, 'e1').author, 'compiler');
    // a refused call mints nothing
    const refusedCall = applyVerb(state, { verb: 'add', kind: 'section', input: { title: '' } }, ctx);
    assert.equal(refusedCall.state, state);
    assert.equal(accepted(applyVerb(state, { verb: 'add', kind: 'section', input: { title: 'C' } }, ctx).result).id, 'e4');
    assertSchema(state);
  });

  it('never mutates its input, for any verb, accepted or refused', () => {
    const frozen = deepFreeze(flaggedBoard());
    const calls: VerbCall[] = [
      { verb: 'set_document', input: { title: 'New title' } },
      { verb: 'add', kind: 'section', input: { title: 'More' } },
      cite('src/app.ts', 'head', 11),
      { verb: 'update', kind: 'finding', input: { id: 'e3', title: 'Renamed', agreement: 'concur' } },
      { verb: 'update', kind: 'section', input: { id: 'e1', parent_id: 'e1' } },
      { verb: 'remove_element', input: { id: 'e1' } },
      { verb: 'remove_element', input: { id: 'e2' } },
      { verb: 'finish' },
      { verb: 'settle_absent' },
      { verb: 'add', kind: 'finding', input: { ...FINDING, anchor: ['e404'], parent_id: 'e1' } },
    ];
    const before = JSON.stringify([...frozen.elements.entries()]);
    for (const call of calls) applyVerb(frozen, call, ctx);
    assert.equal(JSON.stringify([...frozen.elements.entries()]), before);
    // the finished board can be frozen and written again too
    const finished = deepFreeze(applyVerb(frozen, { verb: 'finish' }, ctx).state);
    applyVerb(finished, { verb: 'add', kind: 'section', input: { title: 'After' } }, ctx);
  });

  it('refuses a dangling reference and cannot construct a cycle', () => {
    const board = flaggedBoard();
    refused(applyVerb(board, { verb: 'update', kind: 'finding', input: { id: 'e3', anchor: ['e9'] } }, ctx).result, 'references-resolve', 'anchor');
    const nested = build(board, ctx, [
      { verb: 'add', kind: 'section', input: { title: 'Inner', parent_id: 'e1' } },
      { verb: 'add', kind: 'section', input: { title: 'Innermost', parent_id: 'e4' } },
    ]).state;
    refused(applyVerb(nested, { verb: 'update', kind: 'section', input: { id: 'e1', parent_id: 'e5' } }, ctx).result, 'references-acyclic', 'parent_id');
    // re-parenting that keeps the forest is accepted, and moves the subtree with it
    const moved = applyVerb(nested, { verb: 'update', kind: 'section', input: { id: 'e4', parent_id: 'e5' } }, ctx);
    refused(moved.result, 'references-acyclic');
    const top = build(nested, ctx, [
      { verb: 'add', kind: 'section', input: { title: 'Other' } },
      { verb: 'update', kind: 'section', input: { id: 'e4', parent_id: 'e6' } },
    ]).state;
    assert.equal(el(top, 'e4').parent, 'e6');
    assert.equal(el(top, 'e5').parent, 'e4');
  });

  it('finish answers pointers, keeps them as the last verdict, then settles once they are fixed', () => {
    let board = build(boardFor('flagged', fx.patchset), ctx, [{ verb: 'add', kind: 'section', input: { title: 'Parsing' } }]).state;
    const first = applyVerb(board, { verb: 'finish' }, ctx);
    assert.equal(first.result.status, 'pointers');
    const rules = first.result.status === 'pointers' ? first.result.pointers.map((p) => p.rule) : [];
    assert.deepEqual(rules, ['document-present', 'material-present', 'section-preview']);
    assert.deepEqual(
      first.state.lastFinish?.map((p) => p.rule),
      rules,
    );
    assert.equal(first.state.status, 'drafting');
    assert.equal(first.state.revision, board.revision, 'a verdict is not a write');
    assert.match(renderResult(first.result), /^not settled: finish found 3 things to fix/);
    board = build(first.state, ctx, [
      { verb: 'set_document', input: { title: 'Header parsing', intro_markdown: 'Headers are parsed once. Large files open faster.' } },
      cite('src/app.ts', 'head', 10),
      { verb: 'add', kind: 'finding', input: { ...FINDING, anchor: ['e2'], parent_id: 'e1' } },
    ]).state;
    const second = applyVerb(board, { verb: 'finish' }, ctx);
    assert.equal(second.result.status, 'settled');
    assert.equal(second.state.status, 'finished');
    assert.deepEqual(second.state.lastFinish, []);
    assert.equal(second.state.revision, board.revision + 1);
  });

  it('takes a finished board back to drafting on any accepted write, and says so', () => {
    const finished = applyVerb(flaggedBoard(), { verb: 'finish' }, ctx).state;
    assert.equal(finished.status, 'finished');
    const refusedWrite = applyVerb(finished, { verb: 'add', kind: 'section', input: { title: '' } }, ctx);
    assert.equal(refusedWrite.state.status, 'finished', 'a refused call changes nothing');
    const { state, result } = applyVerb(finished, { verb: 'update', kind: 'section', input: { id: 'e1', title: 'Renamed' } }, ctx);
    assert.equal(state.status, 'drafting');
    assert.match(accepted(result).message, /reopened/);
    assert.equal(state.revision, finished.revision + 1);
  });

  it('settles absent only where the lens admits it and only over an unwritten board', () => {
    const design = applyVerb(boardFor('design', fx.patchset), { verb: 'settle_absent' }, ctx);
    assert.deepEqual(design.result, { status: 'settled', absence: 'no-spec', message: design.result.status === 'settled' ? design.result.message : '' });
    assert.equal(design.state.status, 'absent');
    assert.equal(design.state.absence, 'no-spec');
    assert.equal(applyVerb(boardFor('decisions', fx.patchset), { verb: 'settle_absent' }, ctx).state.absence, 'no-decisions');
    refused(applyVerb(boardFor('sequence', fx.patchset), { verb: 'settle_absent' }, ctx).result, 'kind-allowlist');
    refused(applyVerb(flaggedBoard(), { verb: 'settle_absent' }, ctx).result, 'absence-admissible');
    // a written-then-emptied board may settle absent; a write after an absence reopens it
    const emptied = build(boardFor('flagged', fx.patchset), ctx, [
      { verb: 'add', kind: 'section', input: { title: 'x' } },
      { verb: 'remove_element', input: { id: 'e1' } },
    ]).state;
    const absent = applyVerb(emptied, { verb: 'settle_absent' }, ctx).state;
    assert.equal(absent.absence, 'no-findings');
    const reopened = applyVerb(absent, { verb: 'add', kind: 'section', input: { title: 'Found one after all' } }, ctx).state;
    assert.equal(reopened.status, 'drafting');
    assert.equal(reopened.absence, null);
  });

  it('expands origin/agreement into author, concurrence and accord, and writes status open', () => {
    const board = build(boardFor('flagged', fx.patchset), ctx, [{ verb: 'add', kind: 'section', input: { title: 'S', body_markdown: 'b' } }, cite('src/app.ts', 'head', 10)]).state;
    const add = (extra: Loose) => applyVerb(board, { verb: 'add', kind: 'finding', input: { ...FINDING, anchor: ['e2'], parent_id: 'e1', ...extra } }, ctx);
    const solo = el(add({ origin: 'codex', agreement: 'solo' }).state, 'e3');
    assert.equal(solo.author, 'codex');
    assert.deepEqual(solo.concurrence, [{ model: 'codex', agree: 1, total: 1 }]);
    assert.equal(solo.accord, 'split');
    assert.equal(solo.status, 'open');
    assert.ok(!('origin' in solo) && !('agreement' in solo), 'the enums are input-only');
    const concur = el(add({ origin: 'claude', agreement: 'concur' }).state, 'e3');
    assert.deepEqual(concur.concurrence, [
      { model: 'claude', agree: 1, total: 1 },
      { model: 'codex', agree: 1, total: 1 },
    ]);
    assert.equal(concur.accord, 'concur');
    const diverge = el(add({ origin: 'codex', agreement: 'diverge' }).state, 'e3');
    assert.deepEqual(diverge.concurrence, [
      { model: 'codex', agree: 1, total: 1 },
      { model: 'claude', agree: 1, total: 1 },
    ]);
    assert.equal(diverge.accord, 'conflict');
    assert.deepEqual(expandFindingAgreement('claude', 'concur').concurrence, expandFindingAgreement('claude', 'diverge').concurrence, 'only the accord tells them apart');
    const defaulted = el(add({}).state, 'e3');
    assert.equal(defaulted.author, 'compiler');
    assert.equal(defaulted.accord, 'split');
    // an update naming agreement re-expands from the finding's own origin
    const updated = applyVerb(add({ origin: 'codex', agreement: 'solo' }).state, { verb: 'update', kind: 'finding', input: { id: 'e3', agreement: 'concur' } }, ctx).state;
    assert.equal(el(updated, 'e3').accord, 'concur');
    assert.deepEqual(el(updated, 'e3').concurrence, [
      { model: 'codex', agree: 1, total: 1 },
      { model: 'claude', agree: 1, total: 1 },
    ]);
    assertSchema(updated);
  });

  it('partially updates: fields the call did not name keep their values', () => {
    const board = build(flaggedBoard(), ctx, [{ verb: 'update', kind: 'finding', input: { id: 'e3', part_titles: ['Read', 'Write'], part_bodies: ['Reads twice.', 'Writes twice.'] } }]).state;
    const { state } = applyVerb(board, { verb: 'update', kind: 'finding', input: { id: 'e3', severity: 'minor' } }, ctx);
    const after = el(state, 'e3');
    assert.equal(after.severity, 'minor');
    assert.equal(after.title, FINDING.title);
    assert.deepEqual(after.part_titles, ['Read', 'Write']);
    assert.deepEqual(after.part_bodies, ['Reads twice.', 'Writes twice.']);
    assert.deepEqual(after.anchor, ['e2']);
    assert.equal(after.parent, 'e1');
    assert.equal(after.accord, 'split');
    assert.equal(after.author, 'claude', 'author stays the origin');
    // aligned arrays change together or not at all
    refused(applyVerb(board, { verb: 'update', kind: 'finding', input: { id: 'e3', part_bodies: ['Only one'] } }, ctx).result, 'aligned-arrays', 'part_titles');
    refused(applyVerb(board, { verb: 'update', kind: 'finding', input: { id: 'e3', part_titles: ['A'], part_bodies: ['a', 'b'] } }, ctx).result, 'aligned-arrays', 'part_bodies');
    // an update must name something to change
    refused(applyVerb(board, { verb: 'update', kind: 'finding', input: { id: 'e3' } }, ctx).result, 'input-shape', '(input)');
    // set_document is partial too
    const doc = applyVerb(board, { verb: 'set_document', input: { title: 'Only the title' } }, ctx).state.document;
    assert.equal(doc.title, 'Only the title');
    assert.equal(doc.intro_markdown, board.document.intro_markdown);
    assert.equal(doc.measure, 'reading');
  });

  it('cites parentless code_refs and places code cards under a parent', () => {
    const board = flaggedBoard();
    const { state, result } = applyVerb(board, cite('src/gone.ts', 'base', 2, 4, 'Removed loader'), ctx);
    const id = accepted(result).id!;
    assert.match(renderResult(result), new RegExp(`cited src/gone\\.ts:2-4 \\(base\\) as ${id}`));
    assert.equal(el(state, id).parent, null);
    assert.equal(el(state, id).label, 'Removed loader');
    const card = applyVerb(state, { verb: 'add', kind: 'code_ref', input: { path: 'src/app.ts', side: 'head', start_line: 30, end_line: 31, parent_id: 'e1' } }, ctx);
    assert.equal(el(card.state, accepted(card.result).id!).parent, 'e1');
    refused(applyVerb(state, { verb: 'add', kind: 'code_ref', input: { path: 'src/app.ts', side: 'head', start_line: 30, end_line: 31, parent_id: 'e3' } }, ctx).result, 'parent-admissible');
    assertSchema(card.state);
  });

  it('removes an element with its descendants and lists what it removed', () => {
    const board = build(flaggedBoard(), ctx, [
      { verb: 'add', kind: 'section', input: { title: 'Inner', parent_id: 'e1' } }, // e4
      { verb: 'add', kind: 'prose', input: { markdown: 'Detail.', parent_id: 'e4' } }, // e5
      { verb: 'add', kind: 'section', input: { title: 'Elsewhere' } }, // e6
    ]).state;
    const { state, result } = applyVerb(board, { verb: 'remove_element', input: { id: 'e1' } }, ctx);
    const receipt = accepted(result);
    assert.deepEqual(receipt.removed, ['e1', 'e3', 'e4', 'e5']);
    assert.match(receipt.message, /removed e1 and 3 elements under it \(4 in all\)/);
    assert.deepEqual([...state.elements.keys()], ['e2', 'e6']);
    assert.equal(state.revision, board.revision + 1);
    assert.equal(state.nextId, board.nextId, 'ids are never reused');
    assert.match(renderResult(result), /removed ids: e1, e3, e4, e5/);
  });

  it('bumps the revision on every accepted write and on settling, never on a refusal', () => {
    let board = boardFor('noise', fx.patchset);
    const revisions: number[] = [];
    const app = fx.patchset.files.find((f) => f.path === 'src/app.ts')!;
    const placed = placeNoiseMembers(
      board,
      app.hunks.map((h) => ({ path: 'src/app.ts', side: 'head' as const, start_line: h.newStart, end_line: h.newStart + h.newLines - 1, hunk_id: h.id })),
      { ...ctx, author: 'host' },
    );
    board = placed.state;
    revisions.push(board.revision);
    for (const call of [
      { verb: 'set_document', input: { title: 'Skippable', intro_markdown: 'Two regions only reorder lines.' } },
      { verb: 'add', kind: 'noise_group', input: { title: 'Reorders', reason: 'Lines move without changing.' } },
      { verb: 'update', kind: 'noise_member', input: { id: 'e1', parent_id: 'e3' } },
      { verb: 'update', kind: 'noise_member', input: { id: 'e2', parent_id: 'e3' } },
      { verb: 'remove_element', input: { id: 'e1' } },
      { verb: 'finish' },
    ] as VerbCall[]) {
      const { state } = applyVerb(board, call, ctx);
      board = state;
      revisions.push(board.revision);
    }
    assert.deepEqual(revisions, [1, 2, 3, 4, 5, 5, 6]);
    assert.equal(board.status, 'finished');
  });
});
