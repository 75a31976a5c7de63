import { randomBytes } from 'node:crypto';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { CORE_LENSES, LENSES, LENS_TITLES, type Absence, type Lens, type ReviewName } from '../../protocol/board';
import type { LaneFailure, LaneState, PhaseTiming, SeatSpend } from '../../protocol/review';
import { buildCitationIndex, type CitationIndex } from '../board/citations';
import { warmBoardWriter } from '../board/prime';
import { startSeatServer, type SeatServerHandle } from '../board/mcpServer';
import { composeRound } from '../board/compose';
import { changeVocabulary } from '../board/prose';
import { isSpecOnlyChange, proseCitationResolver, type ResolveProseCitations } from '../board/noise';
import { loadBoard, persistOpenedBoard, persistVerb } from '../board/persist';
import { BoardSeat, type SeatFrame } from '../board/seat';
import { emptyBoard, type BoardState, type VerbCall } from '../board/state';
import { boardKeyOf, type Store, type StoredLaneOutcome } from '../store';
import type { Harness, SeatSpec, TurnResult } from './ports';
import { withReadTools } from '../read/compose';
import { gitChangeSource } from '../read/gitSource';
import { readSurface, type ChangeSource } from '../read/tools';
import { admitSettlement, exhaustedFailure, inferredCall, verdictOf, type Settlement } from './settlement';
import { DEFAULT_ATTEMPT_BUDGET, type AttemptBudget, type GenerationOutcome, type LensPipelineInput, type LensPipelineSeams, type PipelineFrame, type RoundCompose } from './types';
import { keepInsideDelta, runDesign, runDrafted, runFlagged, runNoise } from './lanes';
import type { Lane, LadderParams, LadderResult, LaneRun } from './laneRun';

/**
 * The lens pipeline scheduler (host/pipeline/README.md). Pure over its seams: harnesses, a
 * prompt reader, a clock, and optionally the durable store.
 *
 * runLensPipeline drafts a fresh generation: every board opened (empty, drafting, addressable)
 * before any seat starts; the four core lanes concurrently; Noise on their settlements.
 * resumeLensPipeline picks a generation back up after the process was lost: settled and absent
 * lanes and terminal failures are rebuilt from the store with no harness call; retryable failures
 * and unsettled lanes are cleared (metadata first, then a fresh attempt on the element log) and
 * redrafted on the reduced repeat budget.
 */

export function newGenerationId(): string {
  return `g-${randomBytes(8).toString('hex')}`;
}

export function runLensPipeline(input: LensPipelineInput, seams: LensPipelineSeams): Promise<GenerationOutcome> {
  return new GenerationRun(input, seams).run('fresh');
}

export function resumeLensPipeline(input: LensPipelineInput, seams: LensPipelineSeams): Promise<GenerationOutcome> {
  return new GenerationRun(input, seams).run('resume');
}

// ─── Internals ───────────────────────────────────────────────────────────────────────────────

const GENERATION_WIDE: ReadonlySet<PhaseTiming['phase']> = new Set(['reveal', 'first-core-board', 'first-element']);

/** The board writer runs once per process on scratch boards (board/prime.ts) before the first seat writes. */
let writerWarmed = false;

class GenerationRun implements LaneRun {
  private readonly store: Store | null;
  readonly lanes: Record<Lens, Lane>;
  readonly citations: CitationIndex;
  readonly proseCitations: ResolveProseCitations;
  private readonly budget: AttemptBudget;
  private readonly controller = new AbortController();
  readonly contextAbs: string;
  readonly promptContextDir: string;
  private readonly specOnly: boolean;
  /** Where every seat's read tools read: the capture and the context directory. */
  readonly changeSource: ChangeSource;
  /** The words the change uses (their process words pass the vocabulary rule). */
  private readonly changeWords: ReadonlySet<string>;
  private fatal: { error: unknown } | null = null;
  private cancelled = false;
  private origin = 0;
  private firstCoreAt: number | null = null;
  private firstElementAt: number | null = null;
  private lastRevealAt: number | null = null;
  private priorSpend: SeatSpend[] = [];
  private priorTimings: PhaseTiming[] = [];
  private readonly spend: SeatSpend[] = [];
  private readonly timings: PhaseTiming[] = [];
  private readonly laneChanges: Array<Parameters<NonNullable<LensPipelineSeams['onLane']>>[0]> = [];
  private laneBusy: Promise<void> | null = null;

  constructor(
    readonly input: LensPipelineInput,
    readonly seams: LensPipelineSeams,
  ) {
    this.store = seams.store ?? null;
    this.citations = buildCitationIndex(input.patchset);
    this.proseCitations = proseCitationResolver(this.citations);
    const first = Math.max(1, Math.floor(input.budget?.first ?? DEFAULT_ATTEMPT_BUDGET.first));
    this.budget = { first, repeat: Math.max(1, Math.floor(input.budget?.repeat ?? DEFAULT_ATTEMPT_BUDGET.repeat)) };
    this.contextAbs = isAbsolute(input.contextDir) ? input.contextDir : resolve(input.workspaceDir, input.contextDir);
    const rel = relative(input.workspaceDir, this.contextAbs);
    this.promptContextDir = isAbsolute(input.contextDir) && !rel.startsWith('..') && !isAbsolute(rel) ? rel.split(sep).join('/') : input.contextDir;
    this.specOnly = isSpecOnlyChange(input.patchset);
    this.changeWords = changeVocabulary(input.patchset);
    this.changeSource = seams.changeSource?.(input) ?? gitChangeSource({ repoDir: input.workspaceDir, patchset: input.patchset, contextDir: this.contextAbs });
    this.lanes = Object.fromEntries(LENSES.map((lens) => [lens, this.newLane(lens)])) as Record<Lens, Lane>;
  }

  private newLane(lens: Lens): Lane {
    let resolveDone!: () => void;
    const done = new Promise<void>((r) => (resolveDone = r));
    return {
      lens,
      state: 'queued',
      board: emptyBoard(lens, this.input.patchset.id),
      persisted: null,
      frameRevision: -1,
      seat: null,
      buffered: [],
      flushQueued: false,
      outcome: null,
      done,
      resolveDone,
    };
  }

  private now(): number {
    return this.seams.clock.now().getTime();
  }

  private iso(ms: number): string {
    return new Date(ms).toISOString();
  }

  get stopped(): boolean {
    return this.fatal !== null || this.controller.signal.aborted;
  }

  private fail(error: unknown): void {
    this.fatal ??= { error };
    this.controller.abort();
  }

  log(line: string): void {
    try {
      this.seams.log?.(line);
    } catch {
      // A log observer's failure is its own.
    }
  }

  async run(mode: 'fresh' | 'resume'): Promise<GenerationOutcome> {
    const external = this.seams.signal;
    const onAbort = () => {
      this.cancelled = true;
      this.controller.abort();
    };
    if (external?.aborted) onAbort();
    external?.addEventListener('abort', onAbort, { once: true });
    const startedAt = this.now();
    this.origin = this.input.waitOrigin?.getTime() ?? startedAt;
    try {
      if (mode === 'fresh') this.prepareFresh();
      for (const lens of LENSES) this.laneChange(this.lanes[lens], 'queued');
      const redraft = mode === 'fresh' ? this.openFresh() : this.planResume();
      const budget = mode === 'fresh' ? this.budget.first : this.budget.repeat;
      const runners: Promise<void>[] = [];
      if (this.specOnly) {
        for (const lens of LENSES) if (lens !== 'design' && !this.lanes[lens].outcome) this.hostAbsence(this.lanes[lens], 'spec-only');
      }
      for (const lens of CORE_LENSES) {
        if (!redraft.has(lens) || this.lanes[lens].outcome) continue;
        runners.push(this.guarded(this.lanes[lens], () => (lens === 'design' ? runDesign(this, budget) : lens === 'flagged' ? runFlagged(this, budget) : runDrafted(this, lens, budget))));
      }
      const noise = this.lanes.noise;
      if (!noise.outcome && redraft.has('noise')) {
        this.laneChange(noise, 'waiting');
        runners.push(this.guarded(noise, () => runNoise(this, budget)));
      }
      // While the seats wait for their models: their first writes then find the writer compiled.
      if (!writerWarmed && runners.length > 0) {
        writerWarmed = true;
        setImmediate(() => warmBoardWriter(this.input.patchset, { author: 'host', citations: this.citations, changeWords: this.changeWords }));
      }
      await Promise.all(runners);
    } catch (error) {
      this.fail(error);
    } finally {
      external?.removeEventListener('abort', onAbort);
      for (const lens of LENSES) this.lanes[lens].resolveDone();
    }
    await this.drainLaneChanges();
    if (!this.fatal) {
      try {
        this.persistRecords(true);
      } catch (error) {
        this.fail(error);
      }
    }
    if (this.fatal) throw this.fatal.error;
    if (this.cancelled) throw new Error(`the lens pipeline for generation ${this.input.generationId} was cancelled`);
    return this.outcome();
  }

  private outcome(): GenerationOutcome {
    return {
      generationId: this.input.generationId,
      sessionId: this.input.sessionId,
      patchsetId: this.input.patchset.id,
      specOnly: this.specOnly,
      lanes: LENSES.map((lens) => {
        const outcome = this.lanes[lens].outcome;
        if (!outcome) throw new Error(`the ${lens} lane ended without an outcome`);
        return outcome;
      }),
      spend: [...this.priorSpend, ...this.spend],
      timings: this.allTimings(true),
    };
  }

  // ─── Store preparation ────────────────────────────────────────────────────────────────────

  private place() {
    return { sessionId: this.input.sessionId, generationId: this.input.generationId };
  }

  private boardKey(lens: Lens): string {
    return boardKeyOf({ ...this.place(), patchsetId: this.input.patchset.id, lens });
  }

  private prepareFresh(): void {
    const store = this.store;
    if (!store) return;
    const { sessionId, generationId, patchset } = this.input;
    if (!store.getSession(sessionId)) throw new Error(`no session ${sessionId} in the store`);
    if (!store.hasPatchset(patchset.id)) store.putPatchset(patchset);
    const existing = store.getGeneration(generationId);
    if (!existing) {
      store.createGeneration({ id: generationId, sessionId, patchsetId: patchset.id, now: this.iso(this.now()) });
      return;
    }
    if (existing.status !== 'live') throw new Error(`generation ${generationId} is frozen: nothing rewrites it`);
    if (existing.sessionId !== sessionId || existing.patchsetId !== patchset.id) throw new Error(`generation ${generationId} belongs to ${existing.sessionId} / ${existing.patchsetId}`);
    const started = store.listLaneOutcomes(generationId).length > 0 || store.listBoardMeta(sessionId).some((m) => m.generationId === generationId);
    if (started) throw new Error(`generation ${generationId} has already started: resume it with resumeLensPipeline`);
  }

  /** Opens all five boards (persisted, then an `opened` frame each) before any seat exists. */
  private openFresh(): Set<Lens> {
    for (const lens of LENSES) this.openBoard(this.lanes[lens], emptyBoard(lens, this.input.patchset.id));
    return new Set(LENSES);
  }

  private openBoard(lane: Lane, board: BoardState): void {
    if (this.store) persistOpenedBoard(this.store, this.place(), board, this.iso(this.now()));
    lane.board = board;
    lane.persisted = board;
    this.emitFrame(lane, 'opened', board.revision, [...board.elements.keys()], board);
  }

  /**
   * Decides, lane by lane, what the store already says. Returns the lanes to (re)draft; every
   * other lane is settled here from the store, with no harness call.
   */
  private planResume(): Set<Lens> {
    const store = this.store;
    if (!store) throw new Error('resuming a generation needs the store');
    const { generationId, patchset, sessionId } = this.input;
    const generation = store.getGeneration(generationId);
    if (!generation) throw new Error(`no generation ${generationId} in the store`);
    if (generation.status !== 'live') throw new Error(`generation ${generationId} is frozen: nothing rewrites it`);
    if (generation.patchsetId !== patchset.id || generation.sessionId !== sessionId) {
      throw new Error(`generation ${generationId} reads ${generation.sessionId} / ${generation.patchsetId}, not ${sessionId} / ${patchset.id}`);
    }
    this.priorSpend = generation.spend;
    this.priorTimings = generation.timings;
    const stored = new Map(store.listLaneOutcomes(generationId).map((o) => [o.lens, o]));
    const redraft = new Set<Lens>();
    for (const lens of CORE_LENSES) {
      if (this.specOnly && lens !== 'design') {
        if (!this.reconstruct(lens, stored.get(lens), 'host')) this.reopen(this.lanes[lens]); // settled spec-only by run()
        continue;
      }
      if (!this.reconstruct(lens, stored.get(lens), lens === 'design' ? 'any' : 'seat')) redraft.add(lens);
    }
    // Noise is the complement of its siblings: any sibling redrafted means Noise is redrafted too.
    if (this.specOnly) {
      if (!this.reconstruct('noise', stored.get('noise'), 'host')) this.reopen(this.lanes.noise);
    } else if (redraft.size > 0 || !this.reconstruct('noise', stored.get('noise'), 'host')) {
      redraft.add('noise');
    }
    for (const lens of redraft) this.reopen(this.lanes[lens]);
    return redraft;
  }

  /** Settles a lane from the store when its outcome and its board agree; false when it must be redrafted. */
  private reconstruct(lens: Lens, stored: StoredLaneOutcome | undefined, by: 'seat' | 'host' | 'any'): boolean {
    const store = this.store as Store;
    const lane = this.lanes[lens];
    let board: BoardState | null;
    try {
      board = loadBoard(store, { ...this.place(), patchsetId: this.input.patchset.id, lens });
    } catch (error) {
      this.log(`[pipeline] ${lens}: the stored board does not replay (${(error as Error).message}); redrafting it`);
      board = null;
    }
    if (stored?.state === 'failed') {
      if (stored.failure?.retryable !== false) return false;
      this.settleReconstructed(lane, board ?? emptyBoard(lens, this.input.patchset.id), { state: 'failed', absence: null, failure: stored.failure }, stored.attempts);
      return true;
    }
    if (!board) return false;
    const settlement = admitSettlement(lens, board, by);
    if (!settlement || settlement.state === 'failed') return false;
    if (stored) {
      if (stored.state !== settlement.state || stored.absence !== settlement.absence) return false;
      this.settleReconstructed(lane, board, settlement, stored.attempts);
      return true;
    }
    // The board settled and the process was lost before the lane's outcome was written: the board
    // is durable evidence of what the lane said, so the outcome is written now.
    store.putLaneOutcome({ generationId: this.input.generationId, lens, ...settlement, attempts: 0, now: this.iso(this.now()) });
    this.settleReconstructed(lane, board, settlement, 0);
    return true;
  }

  private settleReconstructed(lane: Lane, board: BoardState, settlement: Settlement, attempts: number): void {
    lane.board = board;
    lane.persisted = board;
    this.emitFrame(lane, 'opened', board.revision, [...board.elements.keys()], board);
    this.settle(lane, settlement, attempts, { write: false, reconstructed: true });
  }

  /** Replaces a partial board: metadata removed first (with the lane's outcome), then a fresh attempt opened. */
  private reopen(lane: Lane): void {
    const store = this.store as Store;
    const floor = store.clearLane(this.input.generationId, lane.lens, this.boardKey(lane.lens), this.iso(this.now()));
    // +2: above every write frame of the cleared attempt and the closed frame that may have followed it.
    this.openBoard(lane, { ...emptyBoard(lane.lens, this.input.patchset.id), revision: floor + 2 });
  }

  // ─── Lanes ───────────────────────────────────────────────────────────────────────────────

  private async guarded(lane: Lane, body: () => Promise<void>): Promise<void> {
    try {
      await body();
    } catch (error) {
      if (this.stopped) return;
      // A lane that threw without an account stays retryable: an unknown ladder is not an exhausted one.
      try {
        this.log(`[pipeline] ${lane.lens}: ${(error as Error).message}`);
        this.settle(
          lane,
          { state: 'failed', absence: null, failure: { message: `The ${LENS_TITLES[lane.lens]} lane stopped on a host error: ${(error as Error).message}`, retryable: null, attempts: 0 } },
          0,
        );
      } catch (again) {
        this.fail(again);
      }
    } finally {
      lane.resolveDone();
    }
  }

  // ─── Seats ───────────────────────────────────────────────────────────────────────────────

  /** `reviewedBy`: for the Flagged compiler, the names of the reviews it compiles (WriterContext.reviewedBy). */
  async runBoardSeat(lane: Lane, spec: SeatSpec, harness: Harness, budget: number, reviewedBy?: readonly ReviewName[]): Promise<LadderResult> {
    const seat = new BoardSeat({
      state: lane.board,
      context: { author: harness.model ?? harness.kind, citations: this.citations, changeWords: this.changeWords, ...(reviewedBy ? { reviewedBy } : {}) },
      onFrame: (frame) => this.onSeatFrame(lane, frame),
    });
    lane.seat = seat;
    let server: SeatServerHandle | null = null;
    try {
      const served = withReadTools(
        {
          tools: seat.tools,
          call: (name: string, input: unknown) => {
            const outcome = seat.call(name, input);
            this.flush(lane);
            return outcome;
          },
          stats: () => seat.stats(),
        },
        readSurface(this.changeSource),
      );
      server = await startSeatServer({ seat: served });
      return await this.ladder({
        lane,
        spec,
        harness,
        budget,
        tools: served.port(),
        mcp: { url: server.url, headers: { ...server.headers } },
        settled: () => (seat.state.status === 'finished' ? 'settled' : seat.state.status === 'absent' ? 'absent' : null),
        verdict: () => verdictOf(seat.state.lastFinish),
        stats: () => served.stats(),
        afterTurn: () => this.flush(lane),
      });
    } finally {
      this.flush(lane);
      lane.seat = null;
      await server?.close();
    }
  }

  /**
   * The attempt ladder. A turn that ends with the seat unsettled — it stopped, or the harness
   * failed — spends one attempt and the board is kept; the next turn is a follow-up on the same
   * thread carrying only the last finish verdict.
   */
  async ladder(p: LadderParams): Promise<LadderResult> {
    let spent = 0;
    let harnessFailure: string | null = null;
    while (spent < p.budget) {
      if (this.stopped) return { kind: 'cancelled' };
      const followUp = spent > 0;
      const prompt = followUp ? this.seams.prompts.followUpPrompt(p.spec, p.verdict()) : this.seams.prompts.seatPrompt(p.spec, { contextDir: this.promptContextDir });
      const before = p.stats();
      const started = this.now();
      let result: TurnResult;
      try {
        result = await p.harness.runTurn({
          seat: p.spec,
          prompt,
          followUp,
          cwd: this.input.seatDir ?? this.input.workspaceDir,
          tools: p.tools,
          mcp: p.mcp,
          signal: this.controller.signal,
          onEvent: () => undefined,
        });
      } catch (error) {
        result = { outcome: 'failed', message: `the harness threw: ${(error as Error).message}`, usage: null };
      }
      p.afterTurn();
      const ended = this.now();
      this.recordTurn(p, followUp, started, ended, result, before);
      if (this.stopped) return { kind: 'cancelled' };
      const settled = p.settled();
      if (settled) return { kind: settled, attempts: spent };
      spent++;
      harnessFailure = result.outcome === 'ended' ? null : (result.message ?? `the turn ${result.outcome}`);
      if (harnessFailure !== null) this.log(`[seat] ${p.spec.seatId}: attempt ${spent} of ${p.budget} failed in the harness: ${harnessFailure}`);
      // Consent denied, credentials refused: the next attempt would get the same answer.
      if (result.outcome === 'failed' && result.final) return { kind: 'exhausted', attempts: spent, lastVerdict: p.verdict(), harnessFailure, final: true };
    }
    return { kind: 'exhausted', attempts: spent, lastVerdict: p.verdict(), harnessFailure };
  }

  private recordTurn(p: LadderParams, followUp: boolean, started: number, ended: number, result: TurnResult, before: ReturnType<LadderParams['stats']>): void {
    const after = p.stats();
    const durationMs = Math.max(0, ended - started);
    const tokens = (n: number | null | undefined) => (typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : null);
    const price = result.usage?.priceUsd;
    this.spend.push({
      seat: p.spec.seatId,
      lens: p.spec.lens,
      role: p.spec.role,
      harness: p.harness.kind,
      model: p.harness.model,
      durationMs,
      inputTokens: tokens(result.usage?.inputTokens),
      outputTokens: tokens(result.usage?.outputTokens),
      toolCalls: after.calls - before.calls,
      refusals: after.refusals - before.refusals,
      ...(after.readCalls !== undefined
        ? { readCalls: after.readCalls - (before.readCalls ?? 0), readBytes: (after.readBytes ?? 0) - (before.readBytes ?? 0), readMs: Math.round((after.readMs ?? 0) - (before.readMs ?? 0)) }
        : {}),
      priceUsd: typeof price === 'number' && Number.isFinite(price) && price >= 0 ? price : null,
    });
    this.timings.push({ phase: followUp ? 'lens-repair' : 'lens-draft', lens: p.spec.lens, seat: p.spec.seatId, startedAt: this.iso(started), durationMs });
    try {
      this.persistRecords(false);
    } catch (error) {
      this.fail(error);
    }
  }

  settleSeat(lane: Lane, result: LadderResult): void {
    switch (result.kind) {
      case 'cancelled':
        return;
      case 'settled':
      case 'absent': {
        const settlement = admitSettlement(lane.lens, lane.board, 'seat');
        if (!settlement) throw new Error(`the ${lane.lens} seat settled, but its board is ${lane.board.status}`);
        this.settle(lane, settlement, settlement.state === 'failed' ? 0 : result.attempts);
        return;
      }
      case 'exhausted':
        this.settle(lane, { state: 'failed', absence: null, failure: exhaustedFailure(lane.lens, result.attempts, result.lastVerdict, result.harnessFailure, result.final ?? false) }, result.attempts);
        return;
    }
  }

  /** An absence the host settles with no seat (spec-only, no-noise): written on the board, then settled. */
  hostAbsence(lane: Lane, absence: Absence): void {
    const next: BoardState = { ...lane.board, status: 'absent', absence, lastFinish: [], revision: lane.board.revision + 1 };
    const settlement = admitSettlement(lane.lens, next, 'host');
    if (!settlement) throw new Error(`the host cannot settle ${lane.lens} as ${absence}`);
    if (settlement.state === 'absent') {
      this.commit(lane, next, { verb: 'settle_absent' });
      this.emitFrame(lane, 'write', next.revision, [], next);
    }
    this.settle(lane, settlement, 0);
  }

  /**
   * A lane settles once: its outcome is durable first, then published (lane change, then the
   * closed frame), in the order lanes settle.
   */
  settle(lane: Lane, settlement: Settlement, attempts: number, options: { write?: boolean; reconstructed?: boolean } = {}): void {
    if (lane.outcome) return;
    if (this.stopped && !options.reconstructed) return;
    if (this.input.rereviewDelta && lane.lens === 'flagged' && settlement.state === 'settled') keepInsideDelta(this, lane, this.input.rereviewDelta.from);
    if (this.input.compose && settlement.state !== 'failed') this.compose(lane, this.input.compose);
    const at = this.now();
    if (this.store && options.write !== false) {
      this.store.putLaneOutcome({ generationId: this.input.generationId, lens: lane.lens, ...settlement, attempts, now: this.iso(at) });
    }
    lane.outcome = { lens: lane.lens, ...settlement, board: lane.board, attempts, reconstructed: options.reconstructed === true };
    if (!options.reconstructed && settlement.state !== 'failed') {
      this.lastRevealAt = at;
      if ((CORE_LENSES as readonly Lens[]).includes(lane.lens)) this.firstCoreAt ??= at;
    }
    this.laneChange(lane, settlement.state, settlement.absence, settlement.failure);
    this.emitFrame(lane, 'closed', lane.frameRevision + 1, [], lane.board);
    lane.resolveDone();
  }

  /** A round's successor lane: its board composed against the predecessor's, durable before the lane settles. */
  private compose(lane: Lane, round: RoundCompose): void {
    const composition = composeRound(lane.board, {
      ordinal: round.ordinal,
      prior: round.prior[lane.lens] ?? null,
      addressed: round.addressed,
      dispositions: round.dispositions,
      resolveHunks: (path, side, start, end) => {
        const resolved = this.citations.resolve(path, side, start, end);
        return resolved.ok ? resolved.hunkIds : null;
      },
    });
    if (composition.board !== lane.board) {
      this.commit(lane, composition.board, { verb: 'finish' });
      this.emitFrame(lane, 'write', composition.board.revision, [...composition.board.elements.keys()], composition.board);
    }
    this.seams.onComposed?.(this.input.generationId, lane.lens, composition);
  }

  // ─── Boards, frames and lane changes ────────────────────────────────────────────────────

  /** A host write on a lane's board: persisted, then the lane holds it. */
  commit(lane: Lane, next: BoardState, call: VerbCall): void {
    if (this.store) persistVerb(this.store, this.place(), lane.persisted ?? lane.board, next, call, this.iso(this.now()));
    lane.board = next;
    lane.persisted = next;
  }

  private onSeatFrame(lane: Lane, frame: SeatFrame): void {
    lane.buffered.push(frame);
    if (!lane.flushQueued) {
      lane.flushQueued = true;
      queueMicrotask(() => this.flush(lane));
    }
  }

  /**
   * Persists what the seat wrote since the last flush (one transaction for one tool call, however
   * many writes a write_board made), then publishes its frames. Durable before visible.
   */
  private flush(lane: Lane): void {
    lane.flushQueued = false;
    const current = lane.seat ? lane.seat.state : lane.board;
    const frames = lane.buffered.splice(0);
    if (this.fatal) return;
    if (current !== lane.persisted) {
      if (this.store && lane.persisted) {
        try {
          persistVerb(this.store, this.place(), lane.persisted, current, inferredCall(lane.persisted, current), this.iso(this.now()));
        } catch (error) {
          this.fail(error);
          return;
        }
      }
      lane.persisted = current;
      lane.board = current;
    }
    for (const frame of frames) this.emitFrame(lane, 'write', frame.revision, frame.touched, frame.state);
  }

  emitFrame(lane: Lane, kind: PipelineFrame['kind'], revision: number, touched: string[], board: BoardState): void {
    const rev = Math.max(revision, lane.frameRevision + 1);
    lane.frameRevision = rev;
    if (kind === 'write' && this.firstElementAt === null && touched.some((id) => board.elements.has(id))) this.firstElementAt = this.now();
    try {
      this.seams.onFrame?.({ generation: this.input.generationId, lens: lane.lens, revision: rev, kind, touched, board });
    } catch {
      // An observer's failure is its own; the write already landed.
    }
  }

  /** Lane changes go out in order through one serialized callback. */
  laneChange(lane: Lane, state: LaneState, absence: Absence | null = null, failure: LaneFailure | null = null): void {
    lane.state = state;
    this.laneChanges.push({ generation: this.input.generationId, lens: lane.lens, state, absence, failure });
    if (!this.laneBusy) this.pumpLaneChanges();
  }

  private pumpLaneChanges(): void {
    const onLane = this.seams.onLane;
    while (this.laneChanges.length > 0) {
      const change = this.laneChanges.shift() as (typeof this.laneChanges)[number];
      if (!onLane) continue;
      let returned: void | Promise<void>;
      try {
        returned = onLane(change);
      } catch (error) {
        this.log(`[pipeline] a lane observer failed: ${(error as Error).message}`);
        continue;
      }
      if (returned && typeof (returned as Promise<void>).then === 'function') {
        this.laneBusy = (returned as Promise<void>)
          .catch((error: unknown) => this.log(`[pipeline] a lane observer failed: ${(error as Error).message}`))
          .then(() => {
            this.laneBusy = null;
            this.pumpLaneChanges();
          });
        return;
      }
    }
  }

  private async drainLaneChanges(): Promise<void> {
    while (this.laneBusy) await this.laneBusy;
  }

  // ─── Timings and spend ──────────────────────────────────────────────────────────────────

  private generationWide(): PhaseTiming[] {
    const out: PhaseTiming[] = [];
    const record = (phase: PhaseTiming['phase'], end: number | null) => {
      if (end !== null) out.push({ phase, lens: null, seat: null, startedAt: this.iso(this.origin), durationMs: Math.max(0, end - this.origin) });
    };
    record('first-core-board', this.firstCoreAt);
    record('first-element', this.firstElementAt);
    record('reveal', this.lastRevealAt);
    return out;
  }

  /** Earlier runs' records, this run's lane records, and the generation-wide ones this run measured (replacing earlier ones). */
  private allTimings(final: boolean): PhaseTiming[] {
    const measured = final ? this.generationWide() : [];
    const replaced = new Set(measured.map((t) => t.phase));
    return [...this.priorTimings.filter((t) => !(GENERATION_WIDE.has(t.phase) && replaced.has(t.phase))), ...this.timings, ...measured];
  }

  private persistRecords(final: boolean): void {
    if (!this.store) return;
    this.store.putGenerationRecords(this.input.generationId, { timings: this.allTimings(final), spend: [...this.priorSpend, ...this.spend] }, this.iso(this.now()));
  }
}
