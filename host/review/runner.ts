import { randomBytes } from 'node:crypto';
import type { z } from 'zod';
import type { GenerationDelta } from '../../protocol/generationDelta';
import type { Patchset } from '../../protocol/patchset';
import { LENSES, type Lens } from '../../protocol/board';
import { err, errorMessage, ok, rennetError, type Result } from '../../protocol/result';
import type { GenerationSnapshot, HarnessConfig, LaneState } from '../../protocol/review';
import { GetGenerationParams, RunLensesParams } from '../../protocol/rpc';
import type { HarnessAssignment, LensPipelineInput, LensPipelineSeams } from '../pipeline/types';
import type { ReviewService } from '../service';
import type { Store } from '../store';
import { prepareLensRun, ReviewRefusal, type LensRunOptions, type ReviewRunDeps } from './command';
import { currentGenerationId, readGenerationSnapshot, readLaneRoundDelta, snapshotCapture } from '../generation/generationSnapshot';
import { GenerationPusher, type GenerationFields } from './generationPush';
import { resumableGeneration, roundCompositionOfGeneration, roundReportOfGeneration } from './resume';
import { describeAssignment, HarnessConfigRefusal } from '../harness/harnessConfig';
import { pullRequestContext } from '../forge/context';

/**
 * The VS Code host's lens runs (`rennet/review/runLenses`, `rennet/generation/get`): the same
 * preparation and pipeline as `rennet review` (command.ts prepareLensRun, the production seams of
 * seams.ts), with the store on, started in the background.
 *
 * - One live run per session: a request while one runs (or is starting) answers its generation id.
 * - A session whose live generation was interrupted (this host's predecessor was killed mid-run;
 *   its unsettled lanes read as failed "stopped", resumable) is resumed by `runLenses`
 *   (resume.ts): the same generation id, its settled lanes rebuilt with no model call, only the
 *   unsettled ones drafted. Nothing resumes on host start: the harness configuration (and its
 *   keys) comes with the extension's request — "Draft again", or opening the review again.
 * - The answer comes once the generation exists in the store (harnesses resolved, context
 *   directory written, boards opened), before any seat has run.
 * - Every frame and lane change pokes a per-session throttle: at most one send per interval, and
 *   what is sent is built when it is sent, so the last state always goes out (the end of a run
 *   pokes once more, after the final records are written).
 * - Incremental pushes (generationPush.ts, protocol/generationDelta.ts): the first send of a run
 *   reads the generation whole from the store and opens a push stream (`publish`, with its
 *   revision); every later send is one delta per lane changed (`publishDelta`), built from the
 *   frames' touched element ids and the lane changes — no lane is replayed, the generation is not
 *   read whole. When the run ends the stream is reconciled with the store (what differs is sent as
 *   deltas) and closed. A change no frame describes (`publishCurrent`: a draft made elsewhere, a
 *   re-review's record) sends the generation whole again.
 * - `get` answers the open stream's copy (what its deltas made) while a run is live here, else
 *   the generation read back from the store (generationSnapshot.ts), so a push and a later `get`
 *   (even after a restart) agree.
 *
 * Never logs a key: the configuration is logged as harness kinds and model names only.
 */

/** A round successor's composition (host/board/compose.ts): what its lanes are composed against, and who is told. */
export type RoundComposition = Partial<Pick<LensPipelineInput, 'compose'> & Pick<LensPipelineSeams, 'onComposed'>>;

interface StartOptions {
  roundReport?: LensRunOptions['roundReport'];
  resume?: boolean;
  composition?: RoundComposition;
  patchset?: Patchset;
  /** With `patchset`: it is a re-review's fix delta since this commit (LensPipelineInput.rereviewDelta). */
  rereviewDelta?: { from: string };
  filed?(generationId: string): void;
}

/** The params of rennet/review/runLenses and rennet/generation/get, as protocol/rpc.ts declares them. */
export const RunLensesInput = RunLensesParams;
export const GetGenerationInput = GetGenerationParams;

/**
 * At most one push (`rennet/generation/changed` or `/delta`) per session per this many
 * milliseconds. A push is a small delta since issue 15 (2.5 KB per write, ~5 ms to paint), so the
 * window only coalesces a burst; a write landing inside it waits for the rest of it.
 */
export const PUBLISH_INTERVAL_MS = 25;

export interface LensRunnerDeps {
  store: Store;
  service: Pick<ReviewService, 'getSnapshot' | 'getPatchset'>;
  /** The production seams for a workspace (seats' cwd): reviewDeps. */
  runDeps(workspace: string): ReviewRunDeps;
  /** The configuration → the pipeline's assignment; `signal` aborts the run's model calls. Throws HarnessConfigRefusal. */
  assign(config: HarnessConfig, signal: AbortSignal): Promise<HarnessAssignment>;
  /** `rennet/generation/changed`: a generation whole (with `revision` when a push stream opens). */
  publish(snapshot: GenerationSnapshot): void;
  /** `rennet/generation/delta`: one lane of an open push stream changed. */
  publishDelta(delta: GenerationDelta): void;
  log(level: 'info' | 'warn' | 'error', message: string): void;
  intervalMs?: number;
}

interface LiveRun {
  sessionId: string;
  generationId: string;
  states: Map<Lens, LaneState>;
  abort: AbortController;
}

interface Publisher {
  throttle: Throttle;
  /** The generation the session's pushes are about: the newest run started here. */
  generationId: string;
  /** The open push stream of that generation (null: none; the next send reads it whole). */
  pusher: GenerationPusher | null;
  /** The next send reads the generation whole: something no frame describes changed it. */
  whole: boolean;
  /** The run ended: the next send reconciles the stream with the store and closes it. */
  closing: boolean;
}

export class LensRunner {
  private readonly live = new Map<string, LiveRun>();
  private readonly starting = new Map<string, Promise<Result<{ generationId: string }>>>();
  /** Sessions another request (`rennet/review/draftLens`) is drafting, with what it is. */
  private readonly reserved = new Map<string, string>();
  /** Why a run of a generation stopped in this process before every lane settled. */
  private readonly stopped = new Map<string, string>();
  private readonly publishers = new Map<string, Publisher>();
  private disposed = false;

  constructor(private readonly deps: LensRunnerDeps) {}

  /** `rennet/review/runLenses`. */
  runLenses(raw: unknown): Promise<Result<{ generationId: string }>> {
    const parsed = RunLensesInput.safeParse(raw);
    if (!parsed.success) return Promise.resolve(err(rennetError('invalid-request', `invalid runLenses request: ${issues(parsed.error)}`)));
    const { sessionId, harness } = parsed.data;
    const running = this.live.get(sessionId);
    if (running) return Promise.resolve(ok({ generationId: running.generationId }));
    const pending = this.starting.get(sessionId);
    if (pending) return pending;
    const other = this.reserved.get(sessionId);
    if (other) return Promise.resolve(err(rennetError('invalid-request', `${other} of session ${sessionId} is running; draft the boards when it is done`)));
    if (this.disposed) return Promise.resolve(err(rennetError('invalid-request', 'the Rennet host is shutting down')));
    const started = this.start(sessionId, harness, { resume: true }).finally(() => this.starting.delete(sessionId));
    this.starting.set(sessionId, started);
    return started;
  }

  /** A round's successor: the lenses drafted with the round's report in the context directory (round-report.md). */
  runRoundLenses(sessionId: string, harness: HarnessConfig, roundReport: NonNullable<LensRunOptions['roundReport']>, composition: RoundComposition = {}): Promise<Result<{ generationId: string }>> {
    const busy = this.live.get(sessionId) ?? this.starting.get(sessionId) ?? this.reserved.get(sessionId);
    if (busy) return Promise.resolve(err(rennetError('invalid-request', `the lenses of session ${sessionId} are being drafted; the round's boards are drafted when that is done`)));
    if (this.disposed) return Promise.resolve(err(rennetError('invalid-request', 'the Rennet host is shutting down')));
    const started = this.start(sessionId, harness, { roundReport, composition }).finally(() => this.starting.delete(sessionId));
    this.starting.set(sessionId, started);
    return started;
  }

  /** `rennet/generation/get`. */
  get(raw: unknown): Result<GenerationSnapshot | null> {
    const parsed = GetGenerationInput.safeParse(raw);
    if (!parsed.success) return err(rennetError('invalid-request', `invalid generation request: ${issues(parsed.error)}`));
    const { sessionId, generationId } = parsed.data;
    const session = this.deps.service.getSnapshot(sessionId);
    if (!session.ok) return session;
    const id = generationId ?? currentGenerationId(this.deps.store, sessionId);
    if (id === null) return ok(null);
    // While a stream is open its copy is what the pushes made: the deltas that follow apply on it.
    const open = this.publishers.get(sessionId);
    if (open?.pusher && open.pusher.generationId === id && !open.whole && !open.closing) return ok(open.pusher.snapshot);
    const snapshot = this.snapshotOf(id);
    if (!snapshot || snapshot.sessionId !== sessionId) {
      return err(rennetError('not-found', `no generation ${id} of session ${sessionId} in the store`, { sessionId, generationId: id }));
    }
    return ok(snapshot);
  }

  /**
   * Claims a session for another drafting request; null when claimed, else why it cannot be (a
   * run is live or starting, or another draft holds it). Release with `release`.
   */
  reserve(sessionId: string, what: string): string | null {
    const running = this.live.get(sessionId);
    if (running) return `the lenses of session ${sessionId} are being drafted (generation ${running.generationId})`;
    if (this.starting.has(sessionId)) return `the lenses of session ${sessionId} are starting`;
    const other = this.reserved.get(sessionId);
    if (other) return `${other} of session ${sessionId} is already running`;
    this.reserved.set(sessionId, what);
    return null;
  }

  release(sessionId: string): void {
    this.reserved.delete(sessionId);
  }

  /** Pushes the session's current generation (after a generation made elsewhere, e.g. draftLens). */
  publishCurrent(sessionId: string): void {
    const id = currentGenerationId(this.deps.store, sessionId);
    if (!id) return;
    const publisher = this.publisherFor(sessionId, id);
    publisher.whole = true;
    publisher.throttle.poke();
  }

  /** Cancels every run (the host is shutting down); their unsettled lanes stay unsettled in the store. */
  dispose(): void {
    this.disposed = true;
    for (const run of this.live.values()) run.abort.abort();
    for (const p of this.publishers.values()) p.throttle.cancel();
  }

  // ---------------------------------------------------------------------------------------------

  /** `resume`: an interrupted generation of this capture is resumed (resume.ts) rather than a new one drawn. */
  /**
   * A re-review's lenses (host/rereview/run.ts): drafted over `patchset` — the fix delta since the
   * reviewer's earlier review, or the whole change — rather than the session's active capture.
   * `filed` is told the generation id once the generation exists, before any seat runs.
   * `rereviewDelta`: the patchset is the fix delta since that commit (Flagged keeps findings off it only at blocker).
   */
  runPatchsetLenses(sessionId: string, harness: HarnessConfig, patchset: Patchset, filed: (generationId: string) => void, rereviewDelta?: { from: string }): Promise<Result<{ generationId: string }>> {
    const busy = this.live.get(sessionId) ?? this.starting.get(sessionId) ?? this.reserved.get(sessionId);
    if (busy) return Promise.resolve(err(rennetError('invalid-request', `the lenses of session ${sessionId} are being drafted; re-review when that is done`)));
    if (this.disposed) return Promise.resolve(err(rennetError('invalid-request', 'the Rennet host is shutting down')));
    const started = this.start(sessionId, harness, { patchset, filed, ...(rereviewDelta ? { rereviewDelta } : {}) }).finally(() => this.starting.delete(sessionId));
    this.starting.set(sessionId, started);
    return started;
  }

  /**
   * `resume`: an interrupted generation of this capture is resumed (resume.ts) rather than a new one drawn.
   * `patchset`: drafted over it instead of the session's active capture (a re-review's delta).
   */
  private async start(sessionId: string, config: HarnessConfig, options: StartOptions = {}): Promise<Result<{ generationId: string }>> {
    const { roundReport, resume = false, composition = {} } = options;
    const { store, service } = this.deps;
    const snapshot = service.getSnapshot(sessionId);
    if (!snapshot.ok) return snapshot;
    if (!snapshot.value.patchset) return err(rennetError('not-found', `session ${sessionId} has no captured patchset to draft`));
    const patchset = options.patchset ? ok(options.patchset) : service.getPatchset(snapshot.value.patchset.id);
    if (!patchset.ok) return patchset;

    const abort = new AbortController();
    let harnesses: HarnessAssignment;
    try {
      harnesses = await this.deps.assign(config, abort.signal);
    } catch (error) {
      if (error instanceof HarnessConfigRefusal) return err(rennetError(error.code, error.message));
      return err(rennetError('invalid-request', `the harness configuration could not be used: ${(error as Error).message}`));
    }
    if (this.disposed) return err(rennetError('invalid-request', 'the Rennet host is shutting down'));

    const workspace = snapshot.value.session.repoRoot;
    const runDeps = this.deps.runDeps(workspace);
    const decision = resume && runDeps.resumePipeline ? resumableGeneration(store, sessionId, patchset.value.id, harnesses) : null;
    const plan = decision?.plan ?? null;
    if (decision && !decision.plan && store.listGenerations(sessionId).length > 0) this.deps.log('info', `session ${sessionId}: a new generation (nothing to resume: ${decision.why})`);
    const resumedRound = plan && !roundReport ? roundReportOfGeneration(store, sessionId, plan.generationId) : null;
    const composing: RoundComposition = composition.compose ? composition : plan ? (roundCompositionOfGeneration(store, sessionId, plan.generationId) ?? {}) : {};
    const states = new Map<Lens, LaneState>(LENSES.map((lens) => [lens, 'queued']));
    // A round's successor: its settled lanes carry a verdict against the predecessor's boards.
    const roundSuccessor = Boolean(roundReport ?? resumedRound ?? composing.compose);
    // The generation id is minted inside prepareLensRun; the observers find the run through this box.
    const box: { run: LiveRun | null } = { run: null };
    const poke = () => {
      if (box.run) this.publisherFor(sessionId, box.run.generationId).throttle.poke();
    };
    // The open stream of this run's generation, if any: frames and lane changes are noted on it.
    const pusher = () => {
      const run = box.run;
      const publisher = run ? this.publishers.get(sessionId) : undefined;
      return run && publisher?.pusher?.generationId === run.generationId && !publisher.closing ? publisher.pusher : null;
    };
    let prepared: Awaited<ReturnType<typeof prepareLensRun>>;
    try {
      const target = snapshot.value.session.target;
      const record = target.kind === 'pull-request' ? (snapshot.value.pullRequest ?? null) : null;
      const pullRequest = record && target.kind === 'pull-request' ? pullRequestContext(record, target.provider) : null;
      const round = roundReport ?? resumedRound;
      prepared = await prepareLensRun(
        {
          patchset: patchset.value,
          sessionId,
          workspace,
          harnesses,
          store,
          pullRequest,
          ...(round ? { roundReport: round } : {}),
          ...(plan ? { generationId: plan.generationId } : {}),
          ...(composing.compose ? { compose: composing.compose } : {}),
          ...(options.rereviewDelta ? { rereviewDelta: options.rereviewDelta } : {}),
        },
        runDeps,
        {
          ...(composing.onComposed ? { onComposed: composing.onComposed } : {}),
          onFrame: (frame) => {
            pusher()?.noteFrame(frame);
            poke();
          },
          onLane: (change) => {
            states.set(change.lens, change.state);
            const open = pusher();
            if (open) {
              open.noteLane(change.lens, { state: change.state, absence: change.absence, failure: change.failure });
              // A round successor's lane reads its verdict once settled (its outcome is in the store by now).
              if (roundSuccessor && (change.state === 'settled' || change.state === 'absent'))
                open.noteLane(change.lens, { state: change.state, absence: change.absence, failure: change.failure, roundDelta: readLaneRoundDelta(store, change.generation, change.lens) });
            }
            poke();
          },
          log: (line) => this.deps.log('info', line),
          signal: abort.signal,
        },
      );
    } catch (error) {
      const message = error instanceof ReviewRefusal ? error.message : `the lenses could not be prepared: ${errorMessage(error)}`;
      return err(rennetError('invalid-request', message));
    }

    const { generationId } = prepared;
    const run: LiveRun = { sessionId, generationId, states, abort };
    box.run = run;
    this.live.set(sessionId, run);
    this.stopped.delete(generationId);
    // Synchronously up to its first await, the pipeline files the generation and opens every board.
    const done = plan && runDeps.resumePipeline ? runDeps.resumePipeline(prepared.input, prepared.seams) : runDeps.runPipeline(prepared.input, prepared.seams);
    const filed = store.getGeneration(generationId) !== undefined;
    const finished = done.then(
      (outcome) => {
        const states = outcome.lanes.map((l) => `${l.lens} ${l.state}`).join(', ');
        this.deps.log('info', `generation ${generationId} of session ${sessionId}: ${states}`);
      },
      (error: unknown) => {
        const message = errorMessage(error);
        this.stopped.set(generationId, message);
        this.deps.log(abort.signal.aborted ? 'warn' : 'error', `generation ${generationId} of session ${sessionId} stopped: ${message}`);
        return message;
      },
    );
    void finished.finally(() => {
      if (this.live.get(sessionId) === run) this.live.delete(sessionId);
      // The last push: every lane's outcome and the final records are in the store now.
      const publisher = this.publisherFor(sessionId, generationId);
      if (publisher.generationId !== generationId) return poke();
      // Now, not at the next tick: from here `get` reads the store, and the stream must agree with it.
      publisher.closing = true;
      publisher.throttle.flush();
    });
    if (!filed) {
      const why = await finished;
      return err(rennetError('invalid-request', `the lenses could not start: ${typeof why === 'string' ? why : 'the generation was not filed'}`));
    }
    const resuming = plan ? `resuming (kept with no model call: ${plan.kept.join(', ') || 'none'}; drafting again: ${plan.redrafted.join(', ')}), ` : '';
    this.deps.log('info', `generation ${generationId} of session ${sessionId} (patchset ${patchset.value.id}): ${resuming}drafting with ${describeAssignment(harnesses)}`);
    options.filed?.(generationId);
    poke();
    return ok({ generationId });
  }

  /**
   * One throttled send for a session: the generation whole when no stream of it is open (opening
   * one while its run is live here), the stream's deltas while it is, and at the end of the run
   * the deltas that reconcile it with the store (then the stream closes).
   */
  private send(publisher: Publisher): void {
    const id = publisher.generationId;
    const running = [...this.live.values()].some((r) => r.generationId === id);
    const pusher = publisher.pusher?.generationId === id ? publisher.pusher : null;
    if (!pusher || publisher.whole) {
      publisher.whole = false;
      publisher.pusher = null;
      const snapshot = this.snapshotOf(id);
      if (!snapshot) return;
      if (running && !publisher.closing) {
        const stream = `${id}.${randomBytes(6).toString('hex')}`;
        publisher.pusher = new GenerationPusher(snapshot, stream, snapshotCapture(this.deps.store, snapshot.patchsetId));
        this.deps.publish(publisher.pusher.snapshot);
      } else {
        publisher.closing = false;
        this.deps.publish(snapshot);
      }
      return;
    }
    const generation = this.deps.store.getGeneration(id);
    if (!generation) return;
    const fields: GenerationFields = {
      status: generation.status,
      spend: generation.spend,
      timings: generation.timings,
      frozen: pusher.snapshot.frozen,
    };
    for (const delta of pusher.drain(fields)) this.deps.publishDelta(delta);
    if (publisher.closing) {
      publisher.closing = false;
      publisher.pusher = null;
      const snapshot = this.snapshotOf(id);
      if (!snapshot) return;
      const { deltas, repaired } = pusher.reconcile(snapshot);
      if (repaired.length > 0) {
        const which = repaired.map((r) => `${r.lens} ${r.ids.slice(0, 10).join(', ')}${r.ids.length > 10 ? ` and ${r.ids.length - 10} more` : ''}`).join('; ');
        this.deps.log('warn', `generation ${id}: elements of the pushed boards differed from the store at the end of the run, sent again (${which})`);
      }
      for (const delta of deltas) this.deps.publishDelta(delta);
    }
  }

  private snapshotOf(generationId: string): GenerationSnapshot | null {
    const run = [...this.live.values()].find((r) => r.generationId === generationId);
    return readGenerationSnapshot(this.deps.store, generationId, {
      ...(run ? { live: run.states } : {}),
      stopped: this.stopped.get(generationId) ?? null,
      onBoardError: (lens, error) => this.deps.log('warn', `generation ${generationId}: the ${lens} board does not replay: ${error.message}`),
    });
  }

  private publisherFor(sessionId: string, generationId: string): Publisher {
    let publisher = this.publishers.get(sessionId);
    if (!publisher) {
      const created: Publisher = {
        generationId,
        pusher: null,
        whole: false,
        closing: false,
        throttle: new Throttle(this.deps.intervalMs ?? PUBLISH_INTERVAL_MS, () => {
          if (!this.disposed) this.send(created);
        }),
      };
      publisher = created;
      this.publishers.set(sessionId, publisher);
    }
    // A newer generation of the session takes over its pushes; an older one is read with `get`.
    if (publisher.generationId !== generationId) {
      const newer = this.deps.store.getGeneration(generationId);
      const current = this.deps.store.getGeneration(publisher.generationId);
      if (!current || (newer && newer.createdAt >= current.createdAt)) publisher.generationId = generationId;
    }
    return publisher;
  }
}

/**
 * Coalesces pokes into at most one `send` per interval. `send` never runs inside the poke and reads
 * the state when it runs: the last poke is always followed by a send that sees it. A poke after a
 * quiet interval sends as soon as the poker's task is done (a microtask), not on the next timer
 * tick: when several seats' answers arrive together, Node runs their I/O callbacks one after the
 * other before any timer, so a timer would hold the first write's push behind every queued call.
 */
export class Throttle {
  private timer: NodeJS.Timeout | null = null;
  /** A microtask send is queued (cleared by cancel: the queued task then does nothing). */
  private soon = false;
  private last = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly intervalMs: number,
    private readonly send: () => void,
    private readonly now: () => number = () => Date.now(),
  ) {}

  poke(): void {
    if (this.timer || this.soon) return;
    const wait = this.last + this.intervalMs - this.now();
    if (wait <= 0) {
      this.soon = true;
      queueMicrotask(() => {
        if (!this.soon) return;
        this.soon = false;
        this.fire();
      });
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = null;
      this.fire();
    }, wait);
  }

  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.soon = false;
  }

  /** Sends now (dropping a pending send: this one reads the same state). */
  flush(): void {
    this.cancel();
    this.fire();
  }

  private fire(): void {
    this.last = this.now();
    try {
      this.send();
    } catch {
      // A failed push is the next poke's to repair; the state is in the store.
    }
  }
}

function issues(error: z.ZodError): string {
  // Paths and zod's own words: zod does not quote the values (a key rides in this request).
  return error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
}
