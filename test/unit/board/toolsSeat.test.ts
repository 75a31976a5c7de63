import assert from 'node:assert/strict';
import { RESULT_MAX_BYTES } from '../../../protocol/board';
import { syntheticPatchset } from '../../bench/boardTools';
import { buildCitationIndex } from '../../../host/board/citations';
import { BoardSeat, openDraftingBoard, renderBatch, type SeatFrame, type WriteBoardResult } from '../../../host/board/seat';
import { emptyBoard, type WriterContext } from '../../../host/board/state';

/** The in-process path: BoardSeat.call, as a harness with its own tool loop drives it. */

function noiseSeat(files = 3, hunks = 6) {
  const patchset = syntheticPatchset(files, hunks);
  const context: WriterContext = { author: 'test-model', citations: buildCitationIndex(patchset) };
  const frames: SeatFrame[] = [];
  const seat = new BoardSeat({ state: openDraftingBoard('noise', patchset, context), context, onFrame: (f) => frames.push(f) });
  const members = [...seat.state.elements.values()].filter((e) => e.kind === 'noise_member').map((e) => e.id);
  return { patchset, context, seat, frames, members };
}

const DOC = { title: 'Skippable edits', intro_markdown: 'Mechanical renames. They repeat one pattern.' };

describe('BoardSeat (in-process tool calls)', () => {
  it('opens a Noise board with the host-derived members placed, one per hunk', () => {
    const { seat, members, patchset } = noiseSeat();
    assert.equal(members.length, patchset.totals.hunks);
    assert.equal(seat.state.status, 'drafting');
    const sequence = openDraftingBoard('sequence', patchset, { author: 'x', citations: buildCitationIndex(patchset) });
    assert.equal(sequence.elements.size, 0, 'only a lens with host-derived members gets them');
  });

  it('validates input with the tool schema: refusal names the field, rule input-shape, nothing written', () => {
    const { seat } = noiseSeat();
    const before = seat.state;
    const out = seat.call('add_noise_group', { title: '', reason: 7, colour: 'red' });
    assert.equal(out.isError, true);
    assert.equal(out.result.status, 'refused');
    const refusals = (out.result as { refusals: ReadonlyArray<{ rule: string; field: string }> }).refusals;
    assert.ok(refusals.every((r) => r.rule === 'input-shape'));
    assert.deepEqual(refusals.map((r) => r.field).sort(), ['colour', 'reason', 'title']);
    assert.match(out.text, /Nothing was created/);
    assert.equal(seat.state, before);
  });

  it('bounds a schema refusal to ten listed issues and counts the rest', () => {
    const patchset = syntheticPatchset(1, 1);
    const context = { author: 'm', citations: buildCitationIndex(patchset) };
    const seat = new BoardSeat({ state: emptyBoard('design', patchset.id), context });
    const input = Object.fromEntries(Array.from({ length: 14 }, (_, i) => [`extra_${i}`, i]));
    const out = seat.call('add_task', input);
    assert.equal(out.isError, true);
    assert.match(out.text, /…and \d+ more/);
    const listed = out.text.split('\n').filter((l) => l.startsWith('refused ('));
    assert.ok(listed.length <= 10, out.text);
  });

  it('refuses a host-owned field by its own rule and an unknown tool by name', () => {
    const { seat } = noiseSeat();
    const owned = seat.call('add_noise_group', { title: 'G', reason: 'R', verdict: 'noise' });
    assert.equal(owned.isError, true);
    assert.match(owned.text, /host-owned-field/);
    const unknown = seat.call('add_noise_member', {});
    assert.equal(unknown.isError, true);
    assert.equal(unknown.result.status, 'unknown-tool');
    assert.match(unknown.text, /no tool "add_noise_member"/);
    assert.deepEqual(seat.stats().calls, 2);
    assert.deepEqual(seat.stats().refusals, 2);
  });

  it('emits one frame per accepted write, naming what it touched', () => {
    const { seat, frames, members } = noiseSeat();
    const group = seat.call('add_noise_group', { title: 'Renames', reason: 'Each is a one-line rename.' });
    assert.equal(group.isError, false, group.text);
    const groupId = (group.result as { id: string }).id;
    seat.call('update_noise_member', { id: members[0], parent_id: groupId });
    seat.call('update_noise_member', { id: 'e9999', parent_id: groupId });
    assert.equal(frames.length, 2, 'refusals emit nothing');
    assert.ok(frames[0]!.touched.includes(groupId));
    assert.ok(frames[1]!.touched.includes(members[0]!));
    assert.ok(frames[1]!.revision > frames[0]!.revision);
    assert.equal(frames[1]!.lens, 'noise');
    assert.equal(frames[1]!.state, seat.state);
  });

  it('snapshot() is the board as JSON: document, elements in creation order, status, absence, revision', () => {
    const { seat, members } = noiseSeat();
    seat.call('set_document', DOC);
    const snap = JSON.parse(JSON.stringify(seat.snapshot()));
    assert.deepEqual(Object.keys(snap).sort(), ['absence', 'document', 'elements', 'lastFinish', 'lens', 'patchsetId', 'repairs', 'revision', 'status'].sort());
    assert.equal(snap.document.title, DOC.title);
    assert.deepEqual(
      snap.elements.map((e: { id: string }) => e.id),
      members,
    );
    assert.equal(snap.status, 'drafting');
  });

  it('settle_absent settles with the fixed reason (Flagged)', () => {
    const patchset = syntheticPatchset(1, 2);
    const context = { author: 'm', citations: buildCitationIndex(patchset) };
    const seat = new BoardSeat({ state: emptyBoard('flagged', patchset.id), context });
    const out = seat.call('settle_absent', {});
    assert.equal(out.isError, false, out.text);
    assert.equal(seat.state.status, 'absent');
    assert.equal(seat.state.absence, 'no-findings');
  });
});

describe('write_board (Noise)', () => {
  it('applies every entry in order, resolves local_id names, and finishes when every entry landed', () => {
    const { seat, members, frames } = noiseSeat();
    const entries = [
      { tool: 'set_document', input: DOC },
      { tool: 'add_noise_group', input: { title: 'Renames', reason: 'Each is a one-line rename.' }, local_id: 'renames' },
      ...members.map((id) => ({ tool: 'update_noise_member', input: { id, parent_id: 'renames' } })),
    ];
    const out = seat.call('write_board', { entries_json: JSON.stringify(entries) });
    const batch = out.result as WriteBoardResult;
    assert.equal(batch.status, 'batch');
    assert.equal(out.isError, false, out.text);
    assert.equal(batch.applied.length, entries.length);
    const groupId = batch.ids.renames!;
    assert.match(groupId, /^e\d+$/);
    for (const id of members) assert.equal(seat.state.elements.get(id)?.parent, groupId);
    assert.equal(batch.finish?.status, 'settled', out.text);
    assert.equal(seat.state.status, 'finished');
    assert.equal(frames.length, entries.length + 1, 'a frame per applied entry and one for the settlement');
    assert.match(out.text, /renames=e\d+/);
  });

  it('reports refused entries by position, skips the entries hung under them, keeps the rest, and does not finish', () => {
    const { seat, members } = noiseSeat();
    const entries = [
      { tool: 'set_document', input: DOC },
      { tool: 'add_noise_group', input: { title: 'Renames', reason: 'Each is a one-line rename.' }, local_id: 'good' },
      { tool: 'add_noise_group', input: { title: 'Broken' }, local_id: 'bad' },
      { tool: 'update_noise_member', input: { id: members[0], parent_id: 'good' } },
      { tool: 'update_noise_member', input: { id: members[1], parent_id: 'bad' } },
      { tool: 'add_prose', input: { markdown: 'Hangs under the broken group.', parent_id: 'bad' }, local_id: 'p' },
      { tool: 'update_prose', input: { id: 'p', markdown: 'Hangs under a skipped entry.' } },
      { tool: 'write_board', input: { entries_json: '[]' } },
      { tool: 'update_noise_member', input: { id: members[2], parent_id: 'good' } },
    ];
    const out = seat.call('write_board', { entries_json: JSON.stringify(entries) });
    const batch = out.result as WriteBoardResult;
    assert.equal(out.isError, true);
    assert.deepEqual(
      batch.refused.map((r) => r.position),
      [2, 7],
    );
    assert.deepEqual(
      batch.skipped.map((s) => s.position),
      [4, 5, 6],
    );
    assert.deepEqual(batch.skipped[0]!.names, ['bad']);
    assert.deepEqual(batch.applied, [0, 1, 3, 8]);
    assert.equal(batch.finish, null);
    assert.equal(seat.state.status, 'drafting');
    assert.equal(seat.state.elements.get(members[0]!)?.parent, batch.ids.good);
    assert.equal(seat.state.elements.get(members[2]!)?.parent, batch.ids.good);
    assert.equal(seat.state.elements.get(members[1]!)?.parent, null);
    assert.match(out.text, /entries\[2\] add_noise_group: refused \(input-shape\) at reason/);
    assert.match(out.text, /entries\[7\] write_board/);
    assert.match(out.text, /Skipped, not applied: entries\[4\]/);
    assert.match(out.text, /finish did not run/);
  });

  it('refuses a payload that is not a JSON array, applying nothing', () => {
    const { seat } = noiseSeat();
    const before = seat.state;
    for (const entries_json of ['{not json', '{"tool":"finish"}']) {
      const out = seat.call('write_board', { entries_json });
      assert.equal(out.isError, true);
      assert.match(out.text, /entries_json/);
      assert.match(out.text, /Nothing was applied/);
    }
    assert.equal(seat.state, before);
  });

  it('keeps its answer under the result ceiling on the 1,252-member board, even when every entry is refused', () => {
    const { seat, members } = noiseSeat(95, 1252);
    const entries = members.map((id) => ({ tool: 'update_noise_member', input: { id, parent_id: 'nowhere' } }));
    const out = seat.call('write_board', { entries_json: JSON.stringify(entries) });
    const batch = out.result as WriteBoardResult;
    assert.equal(batch.refused.length, members.length);
    assert.ok(Buffer.byteLength(out.text, 'utf8') <= RESULT_MAX_BYTES, `${Buffer.byteLength(out.text, 'utf8')} bytes`);
    assert.match(out.text, /entries \[0\], \[1\], .*\[19\] …and 1,232 more \(not listed\) \(1,252 entries\) update_noise_member: refused \(parent-admissible\)/);
    const different = members.map((id, i) => ({ tool: 'update_noise_member', input: { id, parent_id: `nowhere-${i}` } }));
    const many = seat.call('write_board', { entries_json: JSON.stringify(different) });
    assert.ok(Buffer.byteLength(many.text, 'utf8') <= RESULT_MAX_BYTES, `${Buffer.byteLength(many.text, 'utf8')} bytes`);
    assert.match(many.text, /…and 1,242 more \(not listed\) refused entries, for 1,242 other reasons/);
    assert.ok(Buffer.byteLength(renderBatch(batch), 'utf8') <= RESULT_MAX_BYTES);
  });
});
