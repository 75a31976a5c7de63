import assert from 'node:assert/strict';
import { byteLength, renderResult } from '../../../host/board/render';
import { applyVerb, placeNoiseMembers, type NoiseMemberPlacement } from '../../../host/board/writer';
import type { BoardState, VerbCall, VerbResult, WriterContext } from '../../../host/board/state';
import { RESULT_MAX_BYTES } from '../../../protocol/board';
import type { Patchset } from '../../../protocol/patchset';
import { TestRepo } from '../../fixtures/gitRepo';
import { boardFor, capture, contextFor, lines } from './writerFixtures';

/**
 * Every tool result is bounded: on a 1,252-element board (the Noise complement of a 95-file
 * branch) each result type renders within RESULT_MAX_BYTES and grows less than tenfold from the
 * same result on a small board.
 */

const BIG = 1252;
const SMALL = 5;

/** 126 files × 10 hunks: every 12th line of a 120-line file changes. */
async function wideChange(): Promise<{ repo: TestRepo; patchset: Patchset }> {
  const repo = new TestRepo();
  const files = Array.from({ length: 126 }, (_, i) => `pkg${i % 9}/module_${String(i).padStart(3, '0')}.ts`);
  for (const path of files) repo.write(path, lines(120, path));
  repo.commit('base');
  repo.branch('feature');
  for (const path of files)
    repo.write(
      path,
      lines(120, path).replace(/^(.* (\d+))$/gm, (line, _all, n: string) => (Number(n) % 12 === 6 ? `${line} changed` : line)),
    );
  repo.commit('change');
  return { repo, patchset: await capture(repo) };
}

function regions(patchset: Patchset, count: number): NoiseMemberPlacement[] {
  const out: NoiseMemberPlacement[] = [];
  for (const file of patchset.files) {
    for (const hunk of file.hunks) {
      if (out.length === count) return out;
      out.push({ path: file.path, side: 'head', start_line: hunk.newStart, end_line: hunk.newStart + hunk.newLines - 1, hunk_id: hunk.id });
    }
  }
  return out;
}

/** A noise board holding `count` host-placed members. */
function noiseBoard(patchset: Patchset, ctx: WriterContext, count: number): BoardState {
  const placed = placeNoiseMembers(boardFor('noise', patchset), regions(patchset, count), { ...ctx, author: 'host' });
  assert.equal(placed.result.status, 'accepted');
  assert.equal(placed.state.elements.size, count);
  return placed.state;
}

/** A sequence board: one section holding `count - 1` code cards, one per hunk. */
function sequenceBoard(patchset: Patchset, ctx: WriterContext, count: number): BoardState {
  let board = applyVerb(boardFor('sequence', patchset), { verb: 'add', kind: 'section', input: { title: 'Every module' } }, ctx).state;
  for (const r of regions(patchset, count - 1)) {
    const { state, result } = applyVerb(board, { verb: 'add', kind: 'code_ref', input: { path: r.path, side: r.side, start_line: r.start_line, end_line: r.end_line, parent_id: 'e1' } }, ctx);
    assert.equal(result.status, 'accepted', JSON.stringify(result));
    board = state;
  }
  assert.equal(board.elements.size, count);
  return board;
}

interface Probe {
  name: string;
  run(noise: BoardState, sequence: BoardState): VerbResult;
  expect: VerbResult['status'];
}

describe('board results stay bounded on a 1,252-element board', function () {
  this.timeout(120_000);
  let repo: TestRepo;
  let patchset: Patchset;
  let ctx: WriterContext;
  const boards: Record<'small' | 'big', { noise: BoardState; sequence: BoardState }> = {} as never;

  before(async () => {
    ({ repo, patchset } = await wideChange());
    assert.ok(patchset.totals.hunks >= BIG, `captured ${patchset.totals.hunks} hunks`);
    ctx = contextFor(patchset, 'claude');
    boards.small = { noise: noiseBoard(patchset, ctx, SMALL), sequence: sequenceBoard(patchset, ctx, SMALL) };
    boards.big = { noise: noiseBoard(patchset, ctx, BIG), sequence: sequenceBoard(patchset, ctx, BIG) };
  });
  after(() => repo?.cleanup());

  const probes: Probe[] = [
    {
      name: 'a refusal listing the held ids of a kind',
      run: (noise) => applyVerb(noise, { verb: 'update', kind: 'noise_member', input: { id: 'e99999', parent_id: 'e1' } }, ctx).result,
      expect: 'refused',
    },
    {
      name: 'a refusal listing held code_refs for a dangling span',
      run: (_noise, sequence) =>
        applyVerb(sequence, { verb: 'add', kind: 'order_step', input: { title: 'Walk', explanation_markdown: 'It walks the modules.', span: 'e99999', parent_id: 'e1' } }, ctx).result,
      expect: 'refused',
    },
    {
      name: 'a refusal with many violations',
      run: (noise) => {
        const input: Record<string, unknown> = { title: 'G', reason: 'R' };
        for (let i = 0; i < 40; i++) input[`unknown_field_${i}`] = i;
        return applyVerb(noise, { verb: 'add', kind: 'noise_group', input }, ctx).result;
      },
      expect: 'refused',
    },
    {
      name: 'a removal that strands references from many elements',
      run: (_noise, sequence) => {
        // thirty steps in another section walk cards that sit under e1
        const step = applyVerb(sequence, { verb: 'add', kind: 'section', input: { title: 'Steps' } }, ctx);
        let board = step.state;
        const stepsSection = (step.result as { id: string }).id;
        for (const id of [...sequence.elements.keys()].filter((k) => k !== 'e1').slice(0, 30)) {
          board = applyVerb(board, { verb: 'add', kind: 'order_step', input: { title: 'S', explanation_markdown: 'It moves on.', span: id, parent_id: stepsSection } }, ctx).state;
        }
        return applyVerb(board, { verb: 'remove_element', input: { id: 'e1' } }, ctx).result;
      },
      expect: 'refused',
    },
    { name: 'finish pointers', run: (noise) => applyVerb(noise, { verb: 'finish' }, ctx).result, expect: 'pointers' },
    { name: 'a removal receipt', run: (_noise, sequence) => applyVerb(sequence, { verb: 'remove_element', input: { id: 'e1' } }, ctx).result, expect: 'accepted' },
    {
      name: 'an accepted update',
      run: (noise) => {
        const group = applyVerb(noise, { verb: 'add', kind: 'noise_group', input: { title: 'Suffixes', reason: 'Only a comment word changes.' } }, ctx);
        const id = (group.result as { id: string }).id;
        return applyVerb(group.state, { verb: 'update', kind: 'noise_member', input: { id: 'e1', parent_id: id } }, ctx).result;
      },
      expect: 'accepted',
    },
    { name: 'an accepted citation', run: (noise) => applyVerb(noise, { verb: 'cite', input: regionInput(patchset) } as VerbCall, ctx).result, expect: 'accepted' },
  ];

  for (const probe of probes) {
    it(`${probe.name}: ≤ ${RESULT_MAX_BYTES} bytes and < 10× the small board`, () => {
      const small = probe.run(boards.small.noise, boards.small.sequence);
      const big = probe.run(boards.big.noise, boards.big.sequence);
      assert.equal(small.status, probe.expect, JSON.stringify(small).slice(0, 400));
      assert.equal(big.status, probe.expect, JSON.stringify(big).slice(0, 400));
      const smallText = renderResult(small);
      const bigText = renderResult(big);
      if (process.env.RENNET_PRINT_RESULTS) console.log(`--- ${probe.name} (${byteLength(smallText)} → ${byteLength(bigText)} bytes)\n${bigText}`);
      assert.ok(byteLength(bigText) <= RESULT_MAX_BYTES, `${byteLength(bigText)} bytes:\n${bigText}`);
      assert.ok(byteLength(smallText) <= RESULT_MAX_BYTES);
      assert.ok(byteLength(bigText) < 10 * byteLength(smallText), `${byteLength(smallText)} → ${byteLength(bigText)} bytes`);
      if (probe.expect !== 'accepted' || probe.name.includes('removal')) {
        // a truncated collection says how much it left out
        if (bigText.length > smallText.length + 40) assert.match(bigText, /…and [\d,]+ more/);
      }
    });
  }

  it('names the count it truncates, honestly', () => {
    const text = renderResult(applyVerb(boards.big.noise, { verb: 'update', kind: 'noise_member', input: { id: 'e99999' } }, ctx).result);
    assert.match(text, /the board holds 1,252 noise_member elements: e1, e2, .*e20 …and 1,232 more \(not listed\)/);
    const pointers = renderResult(applyVerb(boards.big.noise, { verb: 'finish' }, ctx).result);
    assert.match(pointers, /finish found 1,254 things to fix/);
    assert.match(pointers, /…and 1,234 more \(not listed\)/);
    const receipt = renderResult(applyVerb(boards.big.sequence, { verb: 'remove_element', input: { id: 'e1' } }, ctx).result);
    assert.match(receipt, /removed e1 and 1,251 elements under it \(1,252 in all\)/);
    assert.match(receipt, /…and 1,232 more \(not listed\)/);
  });
});

function regionInput(patchset: Patchset): Record<string, unknown> {
  const file = patchset.files[0]!;
  const hunk = file.hunks[0]!;
  return { path: file.path, side: 'head', start_line: hunk.newStart, end_line: hunk.newStart };
}
