import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AskProjection } from '../../protocol/asks';
import type { Patchset } from '../../protocol/patchset';
import { err, ok, rennetError, type Result } from '../../protocol/result';
import { EVIDENCE_FILE, WORK_ORDER_FILE, type EvidenceFile, type Round, type RoundPhase, type RoundReport, type RoundWorker } from '../../protocol/rounds';
import type { Session } from '../../protocol/session';
import type { Lens } from '../../protocol/board';
import type { LensComposition } from '../board/compose';
import type { RoundCompose } from '../pipeline/types';
import { applyComposition, roundCompose, type ComposeStore } from './compose';
import { capturePatchset, patchsetId } from '../capture/capture';
import { openRepo, resolveCommit } from '../capture/repo';
import { gitText } from '../git/run';
import { CONTEXT_ROOT, excludeFromGit } from '../pipeline/contextDir';
import { roundWorkerPrompt } from '../pipeline/prompts';
import type { LensHarness } from '../harness/harnessConfig';
import { dropCheckpoints, hasSubmodules, measureRound, takeCheckpoint } from './checkpoint';
import { checkManifestLimits, evidenceManifest } from './evidence';
import { foldRounds, ledgerRows, ROUND_EVENT_KINDS, type RoundTrail } from './ledger';
import { runReportTurn } from './reportSeat';
import { composeWorkOrder, discoverCheckCommand, dispatchRefusal, DISPATCH_REFUSAL_WORDS, type CheckProbe, type WorkOrder } from './workOrder';
import { reverifyReport } from './verify';
import { requestHeadRefusal, roundModeOf } from './request';
import { readFile, access } from 'node:fs/promises';
import { claimGenerationRun, describeHolder, generationRunHolder, type RunHolder } from '../store';

/**
 * The round runner: dispatch, then every phase to its durable receipt (host/rounds/ledger.ts).
 *
 *   prep        the order composed (its digest must be the one the reviewer saw), written to
 *               `<workspace>/.rennet/context/<session>/work-order.md`; `round.started`
 *   worker      checkpoint before; ONE worker turn in the bound workspace; its receipt
 *   commit      checkpoint after; the measured diff (checkpoint to checkpoint, never the worker's
 *               word) and the observed commit range; the checkpoint refs dropped. Nothing changed →
 *               `unchanged`. Changes left uncommitted → failed here (the successor is a commit).
 *   report      the successor captured from the workspace (persisted base → the work branch's tip)
 *               and made the session's patchset; the evidence manifest within its limits; ONE
 *               classification turn
 *   verification  the report verified against the measured diff (in the turn, as it is handed in)
 *   regeneration  the five lenses drafted over the successor; the prior generation frozen; the
 *               dispatched asks consumed; `returned`
 *
 * A failure ends the round at its phase with the asks still staged; Retry resumes from the last
 * receipt. A host that stops mid-round resumes the same way — except that a worker turn that had
 * no receipt is never run again: it is recorded as lost, and Retry measures what it left.
 * One round in flight per session; a second dispatch of the same order joins the first.
 */

export interface WorkerPort {
  readonly worker: RoundWorker;
  /** One turn in `root`: edits and commits there. */
  run(input: { root: string; prompt: string; contextDir: string; signal: AbortSignal }): Promise<{ outcome: 'done' | 'failed' | 'aborted'; message: string | null }>;
}

export interface RoundStore {
  /**
   * The data directory: a driven round holds its run claim there (`runs/<round id>`,
   * host/store/runClaims.ts), so another process on the same store never settles, retries or
   * dispatches past a round a live process drives. Without it (tests' stores), only this process is known.
   */
  readonly dir?: string;
  getSession(id: string): Session | undefined;
  getPatchset(id: string): Patchset | undefined;
  putPatchset(patchset: Patchset): { created: boolean };
  attachPatchset(sessionId: string, patchsetId: string, now: string): Session;
  appendEvent(sessionId: string, kind: string, payload: unknown, now: string): { seq: number };
  readEvents(sessionId: string, afterSeq?: number): Array<{ seq: number; kind: string; payload: unknown }>;
  getGeneration(id: string): { id: string; sessionId: string; patchsetId: string; status: 'live' | 'frozen' } | undefined;
  /** The predecessor's boards, read to compose the successor against. */
  getBoardMeta: ComposeStore['getBoardMeta'];
  readBoardEvents: ComposeStore['readBoardEvents'];
  listGenerations(sessionId: string): Array<{ id: string; status: 'live' | 'frozen' }>;
  freezeGeneration(id: string, now: string): unknown;
}

/** What one dispatch or retry runs with: the reviewer's choices at that moment. */
export interface RoundContext {
  /** The worker (dispatch only: a retry never runs a worker). Its kind and version are pinned by the first round. */
  worker?: WorkerPort;
  /** The report seat's harness. */
  reportHarness(signal: AbortSignal): Promise<LensHarness>;
  /** Drafts the five lenses over the successor (the report is their round context); answers once the generation is filed. */
  draftGeneration(input: {
    session: Session;
    patchset: Patchset;
    workspace: string;
    report: RoundReport;
    round: Round;
    asks: ReadonlyArray<{ id: string; text: string }>;
    /** What the successor's lanes are composed against; null when the round has no predecessor generation. */
    compose: RoundCompose | null;
    /** Told as each lane is composed (after its board is durable): what lives outside boards. */
    onComposed(generationId: string, lens: Lens, composition: LensComposition): void;
  }): Promise<Result<{ generationId: string }>>;
}

export interface RoundDeps {
  store: RoundStore;
  asks: {
    projection(sessionId: string): Result<AskProjection>;
    command(sessionId: string, input: unknown, now: string): Result<unknown>;
    appendHostEvent?(sessionId: string, input: unknown, now: string): Result<unknown>;
  };
  /** The session's bound workspace (recorded once): where the worker runs and the successor is captured. `dryRun`: decide, make and record nothing. */
  bindWorkspace(session: Session, options?: { dryRun?: boolean }): Promise<Result<{ root: string; branch: string; workBranch?: string }>>;
  now?: () => Date;
  newRoundId?: () => string;
  log?(level: 'info' | 'warn', message: string): void;
  /** Told after every receipt (the panel and Hand off redraw from the ledger). */
  onChange?(sessionId: string, round: Round): void;
}

export interface Dispatched {
  round: Round;
  /** Settles when the round ends (returned, unchanged, failed or cancelled). */
  done: Promise<Round>;
}

export class RoundRunner {
  private readonly inFlight = new Map<string, { roundId: string; digest: string; done: Promise<Round>; abort: AbortController }>();
  private readonly now: () => Date;
  private readonly newRoundId: () => string;

  constructor(private readonly deps: RoundDeps) {
    this.now = deps.now ?? (() => new Date());
    this.newRoundId = deps.newRoundId ?? (() => `r-${randomBytes(8).toString('hex')}`);
  }

  /** The session's rounds, oldest first. */
  rounds(sessionId: string): Round[] {
    return ledgerRows(this.trails(sessionId));
  }

  private trails(sessionId: string): RoundTrail[] {
    return foldRounds(sessionId, this.deps.store.readEvents(sessionId)).trails;
  }

  /** The order a dispatch would send now, or why none can be sent. */
  async order(sessionId: string, options: { bind?: boolean } = {}): Promise<Result<{ order: WorkOrder; workspace: { root: string; branch: string; workBranch?: string } }>> {
    const session = this.deps.store.getSession(sessionId);
    if (!session) return err(rennetError('not-found', `no session ${sessionId}`));
    if (session.target.kind === 'working-tree') return err(rennetError('invalid-request', 'a working-tree review has no branch for a round to commit on: review the branch instead'));
    const patchset = session.activePatchsetId ? this.deps.store.getPatchset(session.activePatchsetId) : undefined;
    if (!patchset) return err(rennetError('invalid-request', 'the session has no capture yet'));
    const projection = this.deps.asks.projection(sessionId);
    if (!projection.ok) return projection;
    // A branch loops; a request loops when it is one's own (host/rounds/request.ts).
    const refusal = dispatchRefusal(roundModeOf(this.deps.store, session), projection.value);
    if (refusal) return err(rennetError('invalid-request', DISPATCH_REFUSAL_WORDS[refusal], { refusal }));
    const workspace = await this.deps.bindWorkspace(session, { dryRun: options.bind !== true });
    if (!workspace.ok) return workspace;
    const behind = await requestHeadRefusal(session, workspace.value, patchset.head);
    if (behind) return behind;
    const probe = await checkProbe(workspace.value.root);
    return ok({
      order: composeWorkOrder({
        branch: workspace.value.branch,
        ...(workspace.value.workBranch ? { workBranch: workspace.value.workBranch } : {}),
        patchset,
        projection: projection.value,
        checkCommand: discoverCheckCommand(probe),
      }),
      workspace: workspace.value,
    });
  }

  /**
   * Dispatches the session's staged coding asks. `expectDigest`: the order the reviewer saw; a
   * different one now is refused (stale). Answers once the round has started; `done` settles at its end.
   */
  async dispatch(sessionId: string, context: RoundContext & { worker: WorkerPort }, options: { expectDigest?: string } = {}): Promise<Result<Dispatched>> {
    const running = this.inFlight.get(sessionId);
    if (!running) {
      const elsewhere = this.drivenElsewhere(sessionId);
      if (elsewhere) return err(elsewhere);
      // A round a stopped process left running (no live claim) is settled before another starts.
      this.settleInterrupted([sessionId]);
    }
    const composed = await this.order(sessionId, { bind: running === undefined });
    if (running) {
      // One round at a time: the same order joins it; anything else waits for the next round.
      if (composed.ok && composed.value.order.digest === running.digest) {
        const round = this.rounds(sessionId).find((r) => r.id === running.roundId);
        if (round) return ok({ round, done: running.done });
      }
      return err(rennetError('invalid-request', 'a round is running for this review: asks staged now go out with the next round, once it returns'));
    }
    if (!composed.ok) return composed;
    const { order, workspace } = composed.value;
    if (options.expectDigest && options.expectDigest !== order.digest) {
      return err(rennetError('stale-composition', 'the asks changed since the work order was shown; look at it again before dispatching', { shown: options.expectDigest, now: order.digest }));
    }
    const session = this.deps.store.getSession(sessionId) as Session;
    if (await hasSubmodules(workspace.root)) {
      return err(
        rennetError('invalid-request', 'this repository has submodules: a round cannot measure its change through them (a gitlink can escape the checkpoint diff), so rounds are not run here'),
      );
    }
    const worker = { value: context.worker };
    const earlier = this.rounds(sessionId);
    const pinned = earlier.find((r) => r.worker.kind !== 'scripted')?.worker ?? null;
    if (pinned && worker.value.worker.kind !== 'scripted' && (pinned.kind !== worker.value.worker.kind || pinned.version !== worker.value.worker.version)) {
      return err(
        rennetError(
          'invalid-request',
          `this review's rounds run on ${pinned.kind}${pinned.version ? ` ${pinned.version}` : ''} (pinned by its first round); the worker offered now is ${worker.value.worker.kind}${worker.value.worker.version ? ` ${worker.value.worker.version}` : ''}`,
        ),
      );
    }

    // prep: the order on disk, then the round's first receipt.
    const contextDir = `${CONTEXT_ROOT}/${sessionId}`;
    try {
      await writeContextFile(workspace.root, contextDir, WORK_ORDER_FILE, order.markdown);
    } catch (error) {
      return err(rennetError('store-failed', `could not write the work order into ${workspace.root}: ${(error as Error).message}`));
    }
    const roundId = this.newRoundId();
    const claim = this.claim(roundId);
    if (!claim.ok) return claim;
    const patchset = this.deps.store.getPatchset(session.activePatchsetId as string) as Patchset;
    const fromGeneration = [...this.deps.store.listGenerations(sessionId)].reverse().find((g) => g.status === 'live')?.id ?? null;
    this.append(sessionId, ROUND_EVENT_KINDS.started, {
      round: roundId,
      ordinal: earlier.length + 1,
      asks: order.asks.map((a) => a.id),
      workOrderDigest: order.digest,
      worker: worker.value.worker,
      workspace,
      fromPatchsetId: patchset.id,
      fromGenerationId: fromGeneration,
      startedAt: this.iso(),
    });
    const round = this.rounds(sessionId).find((r) => r.id === roundId) as Round;
    const abort = new AbortController();
    const done = this.drive(sessionId, roundId, { ...context, order, signal: abort.signal });
    this.inFlight.set(sessionId, { roundId, digest: order.digest, done, abort });
    void done.finally(() => {
      if (this.inFlight.get(sessionId)?.roundId === roundId) this.inFlight.delete(sessionId);
      claim.value();
    });
    return ok({ round, done });
  }

  /** Stops the running round's worker (its process group, for a CLI worker); the round ends cancelled at its phase. */
  cancel(sessionId: string): boolean {
    const running = this.inFlight.get(sessionId);
    if (!running) return false;
    running.abort.abort();
    return true;
  }

  /** Resumes a failed round from its last receipt (never re-running a worker that has a receipt). */
  async retry(sessionId: string, roundId: string, context: RoundContext): Promise<Result<Dispatched>> {
    if (this.inFlight.has(sessionId)) return err(rennetError('invalid-request', 'a round is running for this review'));
    const elsewhere = this.drivenElsewhere(sessionId);
    if (elsewhere) return err(elsewhere);
    // A round a stopped process left running is settled first (its worker recorded lost), then resumed.
    this.settleInterrupted([sessionId]);
    const trail = this.trails(sessionId).find((t) => t.round.id === roundId);
    if (!trail) return err(rennetError('not-found', `no round ${roundId} in this review`));
    if (trail.round.state !== 'failed' && trail.round.state !== 'running')
      return err(rennetError('invalid-request', `round ${trail.round.ordinal} ${trail.round.state}; only a failed round is retried`));
    if (trail.round.failure && !trail.round.failure.retryable) return err(rennetError('invalid-request', `round ${trail.round.ordinal} cannot be retried: ${trail.round.failure.message}`));
    const claim = this.claim(roundId);
    if (!claim.ok) return claim;
    this.append(sessionId, ROUND_EVENT_KINDS.resumed, { round: roundId, at: this.iso() });
    const abort = new AbortController();
    const done = this.drive(sessionId, roundId, { reportHarness: context.reportHarness, draftGeneration: context.draftGeneration, order: null, signal: abort.signal });
    this.inFlight.set(sessionId, { roundId, digest: trail.round.workOrderDigest, done, abort });
    void done.finally(() => {
      if (this.inFlight.get(sessionId)?.roundId === roundId) this.inFlight.delete(sessionId);
      claim.value();
    });
    return ok({ round: this.rounds(sessionId).find((r) => r.id === roundId) as Round, done });
  }

  /**
   * After a host start: a round the store says is running has no process driving it any more. It
   * ends failed at its phase (retryable), a worker turn without a receipt recorded lost — never
   * run twice. Retry then resumes it from its receipts with the reviewer's current choices. A round
   * stopped before its worker started (no before checkpoint) has nothing to resume: it ends failed,
   * not retryable, its asks still staged for the next dispatch.
   */
  settleInterrupted(sessionIds: readonly string[]): Round[] {
    const settled: Round[] = [];
    for (const sessionId of sessionIds) {
      if (this.inFlight.has(sessionId)) continue;
      for (const trail of this.trails(sessionId).filter((t) => t.round.state === 'running')) {
        const id = trail.round.id;
        // Another live process drives it (its run claim): not interrupted.
        if (this.holderOf(id)) continue;
        if (!trail.checkpoints.before) {
          // The worker runs only after the before checkpoint's receipt: it never started, and Retry runs no worker.
          settled.push(
            this.end(sessionId, id, 'failed', {
              phase: trail.round.phase,
              message: 'the host stopped before the worker started: nothing ran, nothing changed. The asks stay staged: dispatch again.',
              retryable: false,
            }),
          );
          continue;
        }
        if (!trail.worker) {
          this.append(sessionId, ROUND_EVENT_KINDS.worker, { round: id, outcome: 'lost', message: 'the host stopped while the worker ran; it is not run again' });
        }
        const phase = trail.round.phase;
        const message =
          phase === 'worker' && !trail.worker
            ? 'the host stopped while the worker ran. Its work so far is in the workspace; Retry measures it and goes on without running the worker again.'
            : `the host stopped during the ${phase} phase; Retry resumes the round from there`;
        settled.push(this.end(sessionId, id, 'failed', { phase, message, retryable: true }));
      }
    }
    return settled;
  }

  /** The live process holding the round's run claim (this one included); null when none does, or nothing is known. */
  private holderOf(roundId: string): RunHolder | null {
    return this.deps.store.dir ? generationRunHolder(this.deps.store.dir, roundId) : null;
  }

  /** Why nothing may start on the session: a round of it another live process drives (refused, in words); else null. */
  private drivenElsewhere(sessionId: string): ReturnType<typeof rennetError> | null {
    for (const trail of this.trails(sessionId)) {
      if (trail.round.state !== 'running') continue;
      const holder = this.holderOf(trail.round.id);
      if (holder)
        return rennetError(
          'invalid-request',
          `round ${trail.round.ordinal} of this review is running in another Rennet process (${describeHolder(holder)}); it goes on there, and asks staged now go out with the next round`,
        );
    }
    return null;
  }

  /** The round's run claim for this process while it drives the round (released when it ends); nothing to claim without a data directory. */
  private claim(roundId: string): Result<() => void> {
    const dir = this.deps.store.dir;
    if (!dir) return ok(() => undefined);
    const claimed = claimGenerationRun(dir, roundId);
    if (!claimed.ok) return err(rennetError('invalid-request', `round ${roundId} is being driven by ${describeHolder(claimed.holder)}`));
    return ok(() => claimed.claim.release());
  }

  // ─── The phases ────────────────────────────────────────────────────────────────────────────

  private async drive(sessionId: string, roundId: string, run: RoundContext & { order: WorkOrder | null; signal: AbortSignal }): Promise<Round> {
    try {
      return await this.phases(sessionId, roundId, run);
    } catch (error) {
      const trail = this.trail(sessionId, roundId);
      return this.end(sessionId, roundId, 'failed', { phase: trail?.round.phase ?? 'prep', message: `the round broke: ${(error as Error).message}`, retryable: true });
    }
  }

  private async phases(sessionId: string, roundId: string, run: RoundContext & { order: WorkOrder | null; signal: AbortSignal }): Promise<Round> {
    let trail = this.trail(sessionId, roundId) as RoundTrail;
    const root = trail.round.workspace.root;
    const contextDir = `${CONTEXT_ROOT}/${sessionId}`;

    // worker
    if (!trail.checkpoints.before) {
      if (!run.worker)
        return this.end(sessionId, roundId, 'failed', {
          phase: 'worker',
          message: 'the worker never started, and Retry runs no worker: nothing changed. The asks stay staged: dispatch again.',
          retryable: false,
        });
      this.phase(sessionId, roundId, 'worker');
      const before = await takeCheckpoint(root, roundId, 'before');
      if (!before.ok) return this.end(sessionId, roundId, 'failed', { phase: 'worker', message: before.error.message, retryable: true });
      this.append(sessionId, ROUND_EVENT_KINDS.checkpoint, { round: roundId, label: 'before', ...before.value });
    }
    trail = this.trail(sessionId, roundId) as RoundTrail;
    if (!trail.worker) {
      if (!run.worker) {
        // The host stopped while the worker ran: it is never run twice. What it left is measured on Retry.
        this.append(sessionId, ROUND_EVENT_KINDS.worker, { round: roundId, outcome: 'lost', message: 'the host stopped while the worker ran; it is not run again' });
        return this.end(sessionId, roundId, 'failed', {
          phase: 'worker',
          message: 'the host stopped while the worker ran. Its work so far is in the workspace; Retry measures it and goes on without running the worker again.',
          retryable: true,
        });
      }
      if (run.signal.aborted) return this.end(sessionId, roundId, 'cancelled', { phase: 'worker', message: 'cancelled before the worker started', retryable: true });
      const turn = await run.worker
        .run({ root, prompt: roundWorkerPrompt({ contextDir }), contextDir, signal: run.signal })
        .catch((error: unknown) => ({ outcome: 'failed' as const, message: `the worker broke: ${(error as Error).message}` }));
      this.append(sessionId, ROUND_EVENT_KINDS.worker, { round: roundId, outcome: turn.outcome, message: turn.message });
      if (turn.outcome === 'aborted') {
        // Its partial work is measured all the same (a cancelled worker is not an empty round), then the round stops.
        await this.measure(sessionId, roundId, root);
        return this.end(sessionId, roundId, 'cancelled', { phase: 'worker', message: 'the reviewer cancelled the round; what the worker had changed is left in the workspace', retryable: false });
      }
    }

    // commit
    const measured = await this.measure(sessionId, roundId, root);
    if (!measured.ok) return this.end(sessionId, roundId, 'failed', { phase: 'commit', message: measured.error.message, retryable: true });
    trail = this.trail(sessionId, roundId) as RoundTrail;
    const m = trail.measured;
    if (!m || m.files.length === 0) {
      // A worker that failed and changed nothing did not do the asks: failed, not empty; the asks stay staged.
      const w = trail.worker;
      if (w && (w.outcome === 'failed' || w.outcome === 'lost')) {
        return this.end(sessionId, roundId, 'failed', {
          phase: 'worker',
          message: `the worker ${w.outcome === 'lost' ? 'was lost when the host stopped' : `failed: ${w.message ?? 'without saying why'}`}, and changed nothing. Its asks stay staged: dispatch again.`,
          retryable: false,
        });
      }
      return this.end(sessionId, roundId, 'unchanged', null);
    }
    if (m.range.from === m.range.to || !(await committedEverything(root, trail))) {
      const workerWords = trail.worker?.outcome === 'failed' && trail.worker.message ? ` (the worker failed: ${trail.worker.message})` : '';
      return this.end(sessionId, roundId, 'failed', {
        phase: 'commit',
        message: `the worker changed ${m.diff.files} file${m.diff.files === 1 ? '' : 's'} but left ${m.range.from === m.range.to ? 'them' : 'some of them'} uncommitted${workerWords}: a round's successor is a commit. The changes are in ${root}; commit or discard them, then dispatch again.`,
        retryable: false,
      });
    }

    // report: the successor, then one classification turn
    const session = this.deps.store.getSession(sessionId) as Session;
    if (!trail.round.successorPatchsetId) {
      this.phase(sessionId, roundId, 'report');
      const from = this.deps.store.getPatchset(trail.round.fromPatchsetId);
      if (!from)
        return this.end(sessionId, roundId, 'failed', { phase: 'report', message: `the patchset the asks were written on (${trail.round.fromPatchsetId}) is not in the store`, retryable: false });
      const successor = await captureSuccessor(root, from, trail.round.workspace.branch, m.range.to, trail.round.workspace.workBranch);
      if (!successor.ok) return this.end(sessionId, roundId, 'failed', { phase: 'report', message: `the successor could not be captured: ${successor.error.message}`, retryable: true });
      this.deps.store.putPatchset(successor.value);
      this.deps.store.attachPatchset(sessionId, successor.value.id, this.iso());
      this.append(sessionId, ROUND_EVENT_KINDS.successor, { round: roundId, patchsetId: successor.value.id });
      trail = this.trail(sessionId, roundId) as RoundTrail;
    }
    const successorId = trail.round.successorPatchsetId as string;
    const manifest = evidenceManifest(m.files);
    if (!manifest.ok) return this.end(sessionId, roundId, 'failed', { phase: 'report', message: manifest.error.message, retryable: false });
    const limits = checkManifestLimits(manifest.value);
    if (!limits.ok) return this.end(sessionId, roundId, 'failed', { phase: 'report', message: limits.error.message, retryable: false });
    const projection = this.deps.asks.projection(sessionId);
    if (!projection.ok) return this.end(sessionId, roundId, 'failed', { phase: 'report', message: projection.error.message, retryable: true });
    const askText = new Map(projection.value.asks.map((a) => [a.id, a]));
    const dispatched = trail.round.asks.map((id) => ({ id, text: askText.get(id)?.text ?? '' }));
    let report = trail.round.report;
    if (report) {
      // Recovered after a restart: verified again against the manifest rebuilt from the same diff.
      const again = reverifyReport(report, manifest.value, dispatched, successorId);
      if (!again.ok) report = null;
    }
    if (!report) {
      this.phase(sessionId, roundId, 'verification');
      const order = run.order ?? null;
      const reportAsks =
        order?.reportAsks ??
        dispatched.map((d) => {
          const ask = askText.get(d.id);
          return { id: d.id, intent: ask?.intent ?? 'comment', path: null, anchor: null, instruction: d.text };
        });
      const evidence: EvidenceFile = { successorPatchsetId: successorId, asks: reportAsks, changedPaths: m.changedPaths, range: m.range, manifest: manifest.value };
      await writeContextFile(root, contextDir, EVIDENCE_FILE, `${JSON.stringify(evidence, null, 1)}\n`).catch(() => undefined);
      const turn = await runReportTurn(
        run.reportHarness,
        { roundId, evidence, asks: dispatched, workspace: root, contextDir, successor: this.deps.store.getPatchset(successorId) as Patchset },
        { signal: run.signal },
      );
      if (!turn.ok) {
        const phase: RoundPhase = turn.error.kind === 'refused' ? 'verification' : 'report';
        return this.end(sessionId, roundId, turn.error.kind === 'cancelled' && run.signal.aborted ? 'cancelled' : 'failed', {
          phase,
          message: `the round report: ${turn.error.message}`,
          retryable: true,
        });
      }
      report = turn.value.report;
      this.append(sessionId, ROUND_EVENT_KINDS.reported, { round: roundId, report, harness: turn.value.harness, model: turn.value.model, spend: turn.value.spend });
    }

    // regeneration
    trail = this.trail(sessionId, roundId) as RoundTrail;
    if (!trail.round.generationId) {
      this.phase(sessionId, roundId, 'regeneration');
      const successor = this.deps.store.getPatchset(successorId) as Patchset;
      const latest = this.deps.asks.projection(sessionId);
      const compose = latest.ok ? roundCompose(this.deps.store, { sessionId, round: trail.round, report, projection: latest.value }) : null;
      const drafted = await run.draftGeneration({
        session,
        patchset: successor,
        workspace: root,
        report,
        round: trail.round,
        asks: dispatched,
        compose,
        onComposed: (generationId, lens, composition) => {
          if (compose) applyComposition(this.deps.asks, { sessionId, priorGenerationId: compose.priorGenerationId, generationId }, lens, composition, this.iso());
        },
      });
      if (!drafted.ok) return this.end(sessionId, roundId, 'failed', { phase: 'regeneration', message: drafted.error.message, retryable: true });
      this.append(sessionId, ROUND_EVENT_KINDS.generation, { round: roundId, generationId: drafted.value.generationId });
      const prior = trail.round.fromGenerationId ? this.deps.store.getGeneration(trail.round.fromGenerationId) : undefined;
      if (prior && prior.status === 'live' && prior.id !== drafted.value.generationId) this.deps.store.freezeGeneration(prior.id, this.iso());
    }
    this.consume(sessionId, trail.round, report);
    return this.end(sessionId, roundId, 'returned', null);
  }

  /** The after checkpoint and the measured diff, once (a receipt each); the checkpoint refs dropped after. */
  private async measure(sessionId: string, roundId: string, root: string): Promise<Result<void>> {
    let trail = this.trail(sessionId, roundId) as RoundTrail;
    if (trail.measured) {
      // Measured before a host stopped: its refs may not have been dropped yet (idempotent).
      await dropCheckpoints(root, roundId);
      return ok(undefined);
    }
    this.phase(sessionId, roundId, 'commit');
    if (!trail.checkpoints.after) {
      const after = await takeCheckpoint(root, roundId, 'after');
      if (!after.ok) return after;
      // A nested repository the worker made is recorded as a gitlink, which the diff cannot see into.
      if (await hasSubmodules(root, after.value.commit).catch(() => false)) {
        return err(rennetError('invalid-request', 'the worker left a nested git repository (a gitlink) in the workspace: its change cannot be measured, so the round stops here'));
      }
      this.append(sessionId, ROUND_EVENT_KINDS.checkpoint, { round: roundId, label: 'after', ...after.value });
      trail = this.trail(sessionId, roundId) as RoundTrail;
    }
    const before = trail.checkpoints.before;
    const after = trail.checkpoints.after;
    if (!before || !after) return err(rennetError('store-failed', 'a checkpoint receipt is missing'));
    const measured = await measureRound(root, before.commit, after.commit);
    if (!measured.ok) return measured;
    this.append(sessionId, ROUND_EVENT_KINDS.measured, {
      round: roundId,
      range: { from: before.head, to: after.head },
      diff: measured.value.totals,
      changedPaths: measured.value.changedPaths,
      files: measured.value.files,
    });
    await dropCheckpoints(root, roundId);
    return ok(undefined);
  }

  /** The dispatched asks leave the lane: each retired naming the round and what the report found. */
  private consume(sessionId: string, round: Round, report: RoundReport | null): void {
    const projection = this.deps.asks.projection(sessionId);
    if (!projection.ok) return;
    const staged = new Set(projection.value.asks.filter((a) => a.state === 'staged').map((a) => a.id));
    const outcome = new Map((report?.outcomes ?? []).map((o) => [o.askId, o.outcome]));
    const at = this.iso();
    for (const askId of round.asks) {
      if (!staged.has(askId)) continue;
      const found = outcome.get(askId);
      this.deps.asks.command(sessionId, { type: 'retire', askId, reason: found ? `round ${round.ordinal}: ${found}` : `round ${round.ordinal}: the worker changed nothing` }, at);
    }
  }

  private end(sessionId: string, roundId: string, state: 'returned' | 'unchanged' | 'failed' | 'cancelled', failure: { phase: RoundPhase; message: string; retryable: boolean } | null): Round {
    if (state === 'unchanged') {
      const trail = this.trail(sessionId, roundId);
      if (trail) this.consume(sessionId, trail.round, null);
    }
    this.append(sessionId, ROUND_EVENT_KINDS.ended, { round: roundId, state, failure, at: this.iso() });
    const round = this.rounds(sessionId).find((r) => r.id === roundId) as Round;
    this.deps.log?.(state === 'failed' ? 'warn' : 'info', `round ${round.ordinal} of ${sessionId}: ${state}${failure ? ` at ${failure.phase}: ${failure.message}` : ''}`);
    return round;
  }

  private phase(sessionId: string, roundId: string, phase: RoundPhase): void {
    this.append(sessionId, ROUND_EVENT_KINDS.phase, { round: roundId, phase });
  }

  private append(sessionId: string, kind: string, payload: { round: string } & Record<string, unknown>): void {
    this.deps.store.appendEvent(sessionId, kind, payload, this.iso());
    const round = this.rounds(sessionId).find((r) => r.id === payload.round);
    if (round) this.deps.onChange?.(sessionId, round);
  }

  private trail(sessionId: string, roundId: string): RoundTrail | undefined {
    return this.trails(sessionId).find((t) => t.round.id === roundId);
  }

  private iso(): string {
    return this.now().toISOString();
  }
}

// ─── Helpers ─────────────────────────────────────────────────────────────────────────────────

async function writeContextFile(root: string, contextDir: string, name: string, text: string): Promise<void> {
  const dir = join(root, contextDir);
  await mkdir(dir, { recursive: true });
  const excludePath = await gitText(['rev-parse', '--git-path', 'info/exclude'], { cwd: root });
  await excludeFromGit(excludePath.startsWith('/') ? excludePath : join(root, excludePath));
  await writeFile(join(dir, name), text, 'utf8');
}

/** Whether the after checkpoint holds nothing beyond its HEAD (the worker committed all it changed). */
async function committedEverything(root: string, trail: RoundTrail): Promise<boolean> {
  const after = trail.checkpoints.after;
  if (!after) return false;
  const [snapshotTree, headTree] = await Promise.all([gitText(['rev-parse', `${after.commit}^{tree}`], { cwd: root }), gitText(['rev-parse', `${after.head}^{tree}`], { cwd: root })]);
  return snapshotTree === headTree;
}

/**
 * The successor: the persisted base → the round's last commit. While the work branch's tip is that
 * commit, the reviewed branch names it (a sibling's commits are still the review of `branch`).
 */
async function captureSuccessor(root: string, from: Patchset, branch: string, head: string, workBranch?: string): Promise<Result<Patchset>> {
  const repo = await openRepo(root);
  if (!repo.ok) return repo;
  const tip = await resolveCommit(repo.value, `refs/heads/${workBranch ?? branch}`);
  const named = tip.ok && tip.value === head;
  const ref = named ? (workBranch ?? branch) : head;
  // Diffed from the persisted base commit (a base ref that moved since cannot change the round's
  // result), recorded under the review's own base ref, so a later capture of the same content by
  // the review is the same patchset.
  const captured = await capturePatchset(repo.value, { kind: 'branch', base: from.base, head: ref }, from.options);
  if (!captured.ok) return captured;
  const { id: _id, ...body } = { ...captured.value, ...(named ? { headRef: branch } : {}), baseRef: from.baseRef, baseTip: from.baseTip };
  return ok({ id: patchsetId(body), ...body });
}

/** What the workspace root holds, for its check command. */
async function checkProbe(root: string): Promise<CheckProbe> {
  const text = (name: string) => readFile(join(root, name), 'utf8').catch(() => null);
  const exists = (name: string) =>
    access(join(root, name)).then(
      () => true,
      () => false,
    );
  const [packageJson, makefile, pyprojectToml, setupCfg, toxIni, cargoToml, goMod, pytestIni, conftest, pnpm, yarn] = await Promise.all([
    text('package.json'),
    text('Makefile'),
    text('pyproject.toml'),
    text('setup.cfg'),
    text('tox.ini'),
    exists('Cargo.toml'),
    exists('go.mod'),
    exists('pytest.ini'),
    exists('conftest.py'),
    exists('pnpm-lock.yaml'),
    exists('yarn.lock'),
  ]);
  return { packageJson, makefile, pyprojectToml, setupCfg, toxIni, cargoToml, goMod, pytestIni, conftest, lockFiles: [...(pnpm ? ['pnpm-lock.yaml'] : []), ...(yarn ? ['yarn.lock'] : [])] };
}
