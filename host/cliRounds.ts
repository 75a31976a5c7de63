import { err, ok, rennetError, type Result } from '../protocol/result';
import { ROUNDS_WORKSPACE_DEFAULT, type Round, type RoundsWorkspaceMode } from '../protocol/rounds';
import type { Session } from '../protocol/session';
import { AskLog } from './asks/log';
import { listBranches, openRepo } from './capture/repo';
import type { HarnessAssignment } from './pipeline/types';
import { prepareLensRun, progressLine } from './review/command';
import { reviewDeps } from './review/seams';
import { RoundRunner, type RoundContext, type WorkerPort } from './rounds/runner';
import { bindWorkspace } from './rounds/workspace';
export { workerFromFlag } from './rounds/workers';
import type { ReviewService } from './service';
import type { Store } from './store';

/**
 * The CLI's rounds (`rennet round`, `rennet rounds`) over the same host code as the VS Code host:
 * the branch's review session (made by `rennet review`) or one's own request's (`rennet review
 * --pr`; its rounds commit on the request's head branch), its staged coding asks (`rennet ask
 * --branch` / `--pr`), one RoundRunner.
 */

/** The branch review's session in this repository (never created here: `rennet review` makes it). */
export async function branchSession(service: ReviewService, repoDir: string, branch: string, base: string | undefined): Promise<Result<{ session: Session }>> {
  const repo = await openRepo(repoDir);
  if (!repo.ok) return repo;
  let baseRef = base;
  if (baseRef === undefined) {
    const branches = await listBranches(repo.value);
    if (!branches.ok) return branches;
    baseRef = branches.value.defaultBase ?? undefined;
    if (!baseRef) return err(rennetError('unknown-ref', 'no default base found (no origin/HEAD, main or master); pass --base REF'));
  }
  const session = service.findSession(repo.value.root, { kind: 'branch', head: branch, base: baseRef });
  if (!session) return err(rennetError('not-found', `${branch} against ${baseRef} has no review here yet: run rennet review --repo ${repoDir} --head ${branch} --base ${baseRef} first`));
  return ok({ session });
}

/** The CLI's runner over the store (its receipts, asks and workspaces); `mode` decides a first bind (`--workspace`). */
export function cliRoundRunner(store: Store, stderr: (text: string) => void, mode: RoundsWorkspaceMode = ROUNDS_WORKSPACE_DEFAULT): RoundRunner {
  return new RoundRunner({
    store,
    asks: new AskLog(store),
    bindWorkspace: (session, options) =>
      bindWorkspace(store, session, { dataDir: store.dir, now: () => new Date().toISOString(), mode, log: (level, message) => stderr(`[${level}] ${message}\n`), ...options }),
    log: (level, message) => stderr(`[${level}] ${message}\n`),
  });
}

/** What a CLI round runs with: lenses drafted in-process with the --harness assignment (awaited), the report seat on its Design harness. */
export function cliRoundContext(store: Store, harnesses: HarnessAssignment, stderr: (text: string) => void, worker?: WorkerPort): RoundContext {
  return {
    ...(worker ? { worker } : {}),
    reportHarness: async () => ({ harness: harnesses.design ?? harnesses.flagged.compiler, hint: harnesses.missingHint ?? null }),
    async draftGeneration({ session, patchset, workspace, report, round, asks, compose, onComposed }) {
      const deps = reviewDeps(workspace, { stdout: () => undefined, stderr });
      try {
        const prepared = await prepareLensRun({ patchset, sessionId: session.id, workspace, harnesses, store, roundReport: { ordinal: round.ordinal, report, asks }, compose }, deps, {
          onLane: (change) => stderr(progressLine(change)),
          onComposed,
        });
        stderr(`Generation ${prepared.generationId}: drafting the lenses over the round's successor\n`);
        const outcome = await deps.runPipeline(prepared.input, prepared.seams);
        return ok({ generationId: outcome.generationId || prepared.generationId });
      } catch (error) {
        return err(rennetError('invalid-request', `the lenses could not be drafted: ${(error as Error).message}`));
      }
    },
  };
}

/** The JSON a round prints: the contract (docs/rounds.md). */
export function roundJson(round: Round): Record<string, unknown> {
  return {
    round: round.ordinal,
    id: round.id,
    state: round.state,
    phase: round.phase,
    failure: round.failure,
    asks: round.asks,
    worker: round.worker,
    workspace: round.workspace,
    report: round.report
      ? {
          outcomes: round.report.outcomes.map((o) => ({ ask: o.askId, outcome: o.outcome, note: o.note, evidence: o.evidence.map((e) => ({ path: e.path, side: e.side, line: e.line })) })),
          beyond: round.report.beyond.map((b) => ({ note: b.note, evidence: b.evidence.map((e) => ({ path: e.path, side: e.side, line: e.line })) })),
        }
      : null,
    successorPatchset: round.successorPatchsetId,
    generation: round.generationId,
    diff: round.diff,
    range: round.range,
    startedAt: round.startedAt,
    endedAt: round.endedAt,
  };
}
