/**
 * Not a test: measures applyVerb on a 1,252-element Noise board built from a real capture.
 * Run: npx tsx test/unit/board/writerBench.ts
 */
import { performance } from 'node:perf_hooks';
import { buildCitationIndex } from '../../../host/board/citations';
import { applyVerb, placeNoiseMembers, type NoiseMemberPlacement } from '../../../host/board/writer';
import type { BoardState, VerbCall, WriterContext } from '../../../host/board/state';
import { TestRepo } from '../../fixtures/gitRepo';
import { boardFor, capture, lines } from './writerFixtures';

async function main(): Promise<void> {
  const repo = new TestRepo();
  try {
    const files = Array.from({ length: 126 }, (_, i) => `pkg${i % 9}/module_${String(i).padStart(3, '0')}.ts`);
    for (const path of files) repo.write(path, lines(120, path));
    repo.commit('base');
    repo.branch('feature');
    for (const path of files)
      repo.write(
        path,
        lines(120, path).replace(/^(.* (\d+))$/gm, (line, _a, n: string) => (Number(n) % 12 === 6 ? `${line} changed` : line)),
      );
    repo.commit('change');
    const patchset = await capture(repo);

    const t0 = performance.now();
    const citations = buildCitationIndex(patchset);
    const indexMs = performance.now() - t0;
    const ctx: WriterContext = { author: 'claude', citations };
    const members: NoiseMemberPlacement[] = patchset.files
      .flatMap((f) => f.hunks.map((h) => ({ path: f.path, side: 'head' as const, start_line: h.newStart, end_line: h.newStart + h.newLines - 1, hunk_id: h.id })))
      .slice(0, 1252);
    let board: BoardState = placeNoiseMembers(boardFor('noise', patchset), members, { ...ctx, author: 'host' }).state;
    board = applyVerb(board, { verb: 'set_document', input: { title: 'Skippable', intro_markdown: 'Comment words change across modules.' } }, ctx).state;
    const groups: string[] = [];
    for (let g = 0; g < 40; g++) {
      const { state, result } = applyVerb(board, { verb: 'add', kind: 'noise_group', input: { title: `Group ${g}`, reason: 'Only a trailing word changes.' } }, ctx);
      board = state;
      if (result.status === 'accepted' && result.id) groups.push(result.id);
    }
    console.log(`board: ${board.elements.size} elements; index build ${indexMs.toFixed(2)} ms over ${patchset.files.length} files / ${patchset.totals.hunks} hunks`);

    const first = members[0]!;
    const calls: Array<[string, (i: number) => VerbCall]> = [
      ['update_noise_member (accepted)', (i) => ({ verb: 'update', kind: 'noise_member', input: { id: `e${(i % 1252) + 1}`, parent_id: groups[i % groups.length]! } })],
      ['cite (accepted)', () => ({ verb: 'cite', input: { path: first.path, side: 'head', start_line: first.start_line, end_line: first.end_line } })],
      [
        'add_section + prose-screened body (accepted)',
        () => ({ verb: 'add', kind: 'section', input: { title: 'Comment churn', body_markdown: 'Each module renames a trailing word; see pkg0/module_000.ts:6 for one.' } }),
      ],
      ['cite outside a hunk (refused)', () => ({ verb: 'cite', input: { path: first.path, side: 'head', start_line: 1, end_line: 1 } })],
      ['update unknown id (refused, lists held ids)', () => ({ verb: 'update', kind: 'noise_member', input: { id: 'e99999', parent_id: groups[0]! } })],
      ['remove_element group with members (refused)', () => ({ verb: 'remove_element', input: { id: groups[0]! } })],
      ['finish (1,252 pointers)', () => ({ verb: 'finish' })],
    ];

    const all: number[] = [];
    for (const [name, make] of calls) {
      for (let i = 0; i < 200; i++) applyVerb(board, make(i), ctx); // warm-up
      const times: number[] = [];
      let chained = board;
      for (let i = 0; i < 2000; i++) {
        const call = make(i);
        const start = performance.now();
        const { state } = applyVerb(chained, call, ctx);
        times.push((performance.now() - start) * 1000);
        // keep accepted writes chained for the member updates so the board stays at 1,252+ elements
        if (name.startsWith('update_noise_member')) chained = state;
      }
      all.push(...times);
      console.log(`${name.padEnd(48)} median ${pct(times, 50).toFixed(1).padStart(7)} µs   p99 ${pct(times, 99).toFixed(1).padStart(8)} µs`);
    }
    console.log(`${'all calls'.padEnd(48)} median ${pct(all, 50).toFixed(1).padStart(7)} µs   p99 ${pct(all, 99).toFixed(1).padStart(8)} µs`);
  } finally {
    repo.cleanup();
  }
}

function pct(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

void main();
