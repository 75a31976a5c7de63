import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { CORE_LENSES, LENS_TITLES, type Absence, type Lens } from '../../protocol/board';
import type { LaneFailure } from '../../protocol/review';
import { startSeatServer } from '../board/mcpServer';
import { citedHunkIds, deriveNoiseMembers, type CoreLaneOutcomes } from '../board/noise';
import type { BoardState } from '../board/state';
import { admitReferences, placeNoiseMembers } from '../board/writer';
import type { Harness, SeatSpec } from './ports';
import { defaultDesignAssembler } from './design';
import { reviewSurface } from './reviewers';
import { withReadTools } from '../read/compose';
import { deltaLines, keepFindingsInDelta } from './outsideDelta';
import { readSurface } from '../read/tools';
import { admitSettlement, missingHarnessFailure, noiseDerivationFailure } from './settlement';
import type { Lane, LadderResult, LaneRun } from './laneRun';

/**
 * How each lane of a generation is drafted (host/pipeline/README.md, "A run"): Sequence and
 * Decisions by one drafter; Design by the host's assembler first, else its drafter; Flagged by one
 * review seat per review harness, then a compiler over the board (and, on a re-review's delta
 * generation, only the findings inside the delta at full severity); Noise, once the four have
 * settled, by the host placing their complement and a drafter grouping it. The scheduler core
 * (run.ts) runs the lanes, their seats and their settlement.
 */

/** The seat ids a generation's seats carry. */
export function seatIdOf(lens: Lens, role: SeatSpec['role'], suffix?: string): string {
  return suffix ? `${lens}:${role}:${suffix}` : `${lens}:${role}`;
}

function missing(run: LaneRun, lane: Lane, what: string): void {
  run.settle(lane, { state: 'failed', absence: null, failure: missingHarnessFailure(what, run.input.harnesses.missingHint) }, 0);
}

export async function runDrafted(run: LaneRun, lens: 'sequence' | 'decisions', budget: number): Promise<void> {
  const lane = run.lanes[lens];
  const harness = run.input.harnesses[lens];
  if (!harness) return missing(run, lane, `${LENS_TITLES[lens]} needs a drafter`);
  run.laneChange(lane, 'working');
  const result = await run.runBoardSeat(lane, { seatId: seatIdOf(lens, 'drafter'), lens, role: 'drafter' }, harness, budget);
  run.settleSeat(lane, result);
}

export async function runDesign(run: LaneRun, budget: number): Promise<void> {
  const lane = run.lanes.design;
  const harness = run.input.harnesses.design;
  // undefined: host/design's assembler over the workspace; null: no fast path.
  const assembler = run.seams.design === undefined ? defaultDesignAssembler(run.input.workspaceDir) : run.seams.design;
  if (!assembler && !harness) return missing(run, lane, 'Design needs a drafter');
  run.laneChange(lane, 'working');
  let why = 'no specification in a format the host renders';
  if (assembler) {
    let assembly: Awaited<ReturnType<typeof assembler>>;
    try {
      assembly = await assembler(run.input.patchset);
    } catch (error) {
      assembly = { kind: 'fallback', reason: `the assembler threw: ${(error as Error).message}`, sources: [] };
    }
    if (run.stopped) return;
    if (assembly.kind === 'board') {
      if (settleAssembled(run, lane, assembly.state)) return;
      why = 'the assembled specification board did not settle';
    } else if (assembly.kind === 'fallback') {
      const rule = (assembly as { rule?: unknown }).rule;
      why = `the specification could not be rendered on the host${typeof rule === 'string' ? ` (rule ${rule})` : ''}`;
      run.log(
        `[seat] design: the specification falls back to the seat${typeof rule === 'string' ? ` (rule ${rule})` : ''}: ${assembly.reason} (${assembly.sources.length} source file${assembly.sources.length === 1 ? '' : 's'})`,
      );
    }
  }
  if (!harness) return missing(run, lane, `Design needs a drafter (${why})`);
  const result = await run.runBoardSeat(lane, { seatId: seatIdOf('design', 'drafter'), lens: 'design', role: 'drafter' }, harness, budget);
  run.settleSeat(lane, result);
}

/** A Design board the host assembled: admitted reference by reference, then settled with no seat. */
function settleAssembled(run: LaneRun, lane: Lane, state: BoardState): boolean {
  if (state.lens !== 'design' || state.patchsetId !== run.input.patchset.id) {
    run.log(`[seat] design: the assembled board is for ${state.lens} / ${state.patchsetId}, not design / ${run.input.patchset.id}; the seat drafts instead`);
    return false;
  }
  const admitted = admitReferences(state);
  if ('failure' in admitted) {
    run.settle(
      lane,
      { state: 'failed', absence: null, failure: { message: `Design: the assembled board has an inadmissible reference: ${admitted.failure.message}`, retryable: true, attempts: 0 } },
      0,
    );
    return true;
  }
  const settlement = admitSettlement('design', admitted.state, 'any');
  if (!settlement) {
    run.log('[seat] design: the assembled board did not settle; the seat drafts instead');
    return false;
  }
  if (settlement.state === 'failed') {
    run.settle(lane, settlement, 0);
    return true;
  }
  const next: BoardState = { ...admitted.state, revision: Math.max(admitted.state.revision, lane.board.revision + 1) };
  run.commit(lane, next, { verb: 'finish' });
  run.emitFrame(lane, 'write', next.revision, ['/document', ...next.elements.keys()], next);
  run.settle(lane, settlement, 0);
  return true;
}

export async function runFlagged(run: LaneRun, budget: number): Promise<void> {
  const lane = run.lanes.flagged;
  const { reviewers, compiler } = run.input.harnesses.flagged;
  if (reviewers.length === 0 && !compiler) return missing(run, lane, 'Flagged needs a review harness and a compiler');
  if (reviewers.length === 0) return missing(run, lane, 'Flagged needs at least one review harness');
  if (!compiler) return missing(run, lane, 'Flagged needs a compiler');
  run.laneChange(lane, 'working');

  const findingsDir = join(run.contextAbs, 'findings');
  mkdirSync(findingsDir, { recursive: true });
  // Files from an earlier generation or attempt are not this review's.
  for (const name of readdirSync(findingsDir)) if (name.endsWith('.md')) rmSync(join(findingsDir, name), { force: true });

  const used = new Map<string, number>();
  const seats = reviewers.map((harness) => {
    const n = (used.get(harness.origin) ?? 0) + 1;
    used.set(harness.origin, n);
    const name = n === 1 ? harness.origin : `${harness.origin}-${n}`;
    return { harness, name, spec: { seatId: seatIdOf('flagged', 'reviewer', name), lens: 'flagged' as const, role: 'reviewer' as const } };
  });
  const reviews = await Promise.all(seats.map((s) => runReviewer(run, lane, s.spec, s.harness, join(findingsDir, `${s.name}.md`), `${run.promptContextDir}/findings/${s.name}.md`, budget)));
  if (run.stopped) return;
  const failed = reviews.map((r, i) => ({ r, name: (seats[i] as (typeof seats)[number]).name })).filter((x) => x.r.kind !== 'settled');
  if (failed.length === reviews.length) {
    const accounts = failed.map(({ r, name }) =>
      r.kind === 'exhausted' ? `${name}: ${r.harnessFailure ?? `no findings after ${r.attempts} attempt${r.attempts === 1 ? '' : 's'}`}` : `${name}: cancelled`,
    );
    const failure: LaneFailure = {
      message: `Flagged: no review produced findings (${accounts.join('; ')}).`,
      // Retryable if any seat is: the lens needs only one review to draw a board.
      retryable: failed.some(({ r }) => r.kind === 'exhausted' && r.harnessFailure !== null && !r.final),
      attempts: Math.max(...failed.map(({ r }) => (r.kind === 'exhausted' ? r.attempts : 0))),
    };
    run.settle(lane, { state: 'failed', absence: null, failure }, failure.attempts);
    return;
  }
  if (failed.length > 0) run.log(`[seat] flagged: compiling without ${failed.map((f) => f.name).join(', ')} (that review failed)`);
  // The compiler may attribute and pair findings only among the reviews that handed some in,
  // named as their files are (two reviews by one kind of model are two reviews).
  const reviewedBy = seats.filter((_, i) => (reviews[i] as LadderResult).kind === 'settled').map((s) => s.name);
  const result = await run.runBoardSeat(lane, { seatId: seatIdOf('flagged', 'compiler'), lens: 'flagged', role: 'compiler' }, compiler, budget, reviewedBy);
  run.settleSeat(lane, result);
}

async function runReviewer(run: LaneRun, lane: Lane, spec: SeatSpec, harness: Harness, file: string, display: string, budget: number): Promise<LadderResult> {
  const surface = reviewSurface(file, display);
  const served = withReadTools(surface, readSurface(run.changeSource));
  const server = await startSeatServer({ seat: served });
  try {
    return await run.ladder({
      lane,
      spec,
      harness,
      budget,
      tools: served.port(),
      mcp: { url: server.url, headers: { ...server.headers } },
      settled: () => (surface.submitted ? 'settled' : null),
      verdict: () => null,
      stats: () => served.stats(),
      afterTurn: () => undefined,
    });
  } finally {
    await server.close();
  }
}

export async function runNoise(run: LaneRun, budget: number): Promise<void> {
  const lane = run.lanes.noise;
  await Promise.all(CORE_LENSES.map((lens) => run.lanes[lens].done));
  if (run.stopped) return;
  const said = {} as CoreLaneOutcomes;
  for (const lens of CORE_LENSES) {
    const outcome = run.lanes[lens].outcome;
    said[lens] =
      outcome === null
        ? { kind: 'failed', retryable: null }
        : outcome.state === 'settled'
          ? { kind: 'settled', citedHunkIds: citedHunkIds(outcome.board, run.proseCitations) }
          : outcome.state === 'absent'
            ? { kind: 'absent', absence: outcome.absence as Absence }
            : { kind: 'failed', retryable: outcome.failure?.retryable ?? null };
  }
  const derived = deriveNoiseMembers(run.input.patchset, said);
  if (derived.kind === 'failed') return run.settle(lane, { state: 'failed', absence: null, failure: noiseDerivationFailure(derived.lanes, derived.retryable) }, 0);
  if (derived.kind === 'no-noise') return run.hostAbsence(lane, 'no-noise');
  const harness = run.input.harnesses.noise;
  if (!harness) return missing(run, lane, 'Noise needs a drafter');
  run.laneChange(lane, 'working');
  const placed = placeNoiseMembers(lane.board, derived.members, { author: 'host', citations: run.citations });
  if (placed.result.status === 'refused') throw new Error(`the derived members could not be placed: ${JSON.stringify(placed.result.refusals[0])}`);
  run.commit(lane, placed.state, { verb: 'add', kind: 'noise_member', input: {} });
  run.emitFrame(lane, 'write', placed.state.revision, placed.ids, placed.state);
  if (run.seams.onNoiseOffer) {
    const regions = placed.ids.map((memberId, i) => {
      const m = derived.members[i] as (typeof derived.members)[number];
      return { memberId, path: m.path, side: m.side, startLine: m.start_line, endLine: m.end_line };
    });
    await run.seams.onNoiseOffer(regions);
    if (run.stopped) return;
  }
  const result = await run.runBoardSeat(lane, { seatId: seatIdOf('noise', 'drafter'), lens: 'noise', role: 'drafter' }, harness, budget);
  run.settleSeat(lane, result);
}

/** A re-review's delta generation: Flagged findings off the delta's changed lines stay only at blocker, said on the board; durable before the lane settles. */
export function keepInsideDelta(run: LaneRun, lane: Lane, reviewedCommit: string): void {
  const scoped = keepFindingsInDelta(lane.board, deltaLines(run.input.patchset), reviewedCommit);
  if (scoped.board === lane.board) return;
  run.commit(lane, scoped.board, { verb: 'finish' });
  run.emitFrame(lane, 'write', scoped.board.revision, [...scoped.board.elements.keys()], scoped.board);
  const n = scoped.leftOut.length;
  run.log(`[flagged] ${n} finding${n === 1 ? '' : 's'} outside the fix delta below blocker left out: ${scoped.leftOut.map((f) => `${f.title} (${f.severity}; ${f.places.join(', ')})`).join('; ')}`);
}
