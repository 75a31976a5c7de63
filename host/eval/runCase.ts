import type { EvalCase } from '../../protocol/eval';
import type { HarnessAssignment } from '../pipeline/types';
import { ReviewRefusal, runReview } from '../review/command';
import { reviewDeps } from '../review/seams';
import { ReviewService } from '../service';
import type { Store } from '../store';
import type { CaseReview, EvalRunDeps } from './run';

/**
 * One eval case through the normal review path — what `rennet review --repo R --base B --head H
 * --harness … --json FILE` does: the capture opened as a session in the store, the lens pipeline
 * with the production seams (host/review/seams.ts: prompts, context directory, Design assembler,
 * seat snapshot, run claims), every generation kept. A session whose generation a killed run left
 * interrupted is resumed (runReview), not drawn again.
 *
 * A case fails when it cannot be captured, the review is refused or breaks, or its Flagged lane
 * fails (the lane that is scored): failed is recorded with its reason, never as zero findings.
 */
export function caseReviewer(store: Store, harnesses: () => Promise<HarnessAssignment>): EvalRunDeps['reviewCase'] {
  const service = new ReviewService({ store });
  return async (evalCase: EvalCase, repo: string, log: (text: string) => void): Promise<CaseReview> => {
    const failed = (reason: string, sessionId: string | null = null): CaseReview => ({ status: 'failed', reason, report: null, sessionId });
    const opened = await service.openReview({ repo, target: { kind: 'branch', head: evalCase.head, base: evalCase.base } });
    if (!opened.ok) return failed(`cannot capture ${evalCase.base}..${evalCase.head} in ${repo}: ${opened.error.message}`);
    const { session, patchset: summary } = opened.value.snapshot;
    if (!summary) return failed(`the capture of ${evalCase.base}..${evalCase.head} holds no patchset`, session.id);
    const patchset = service.getPatchset(summary.id);
    if (!patchset.ok) return failed(patchset.error.message, session.id);
    let assignment: HarnessAssignment;
    try {
      assignment = await harnesses();
    } catch (error) {
      return failed(`the harness could not be loaded: ${(error as Error).message}`, session.id);
    }
    try {
      const report = await runReview(
        { patchset: patchset.value, sessionId: session.id, workspace: session.repoRoot, harnesses: assignment, jsonFile: null, htmlFile: null, store },
        reviewDeps(session.repoRoot, { stdout: log, stderr: log }),
      );
      const flagged = report.boards.find((b) => b.lens === 'flagged');
      if (!flagged) return { status: 'failed', reason: 'the review report has no Flagged board', report, sessionId: session.id };
      if (flagged.state === 'failed') return { status: 'failed', reason: `the Flagged lane failed: ${flagged.failure?.message ?? 'without an account'}`, report, sessionId: session.id };
      return { status: 'reviewed', reason: null, report, sessionId: session.id };
    } catch (error) {
      if (error instanceof ReviewRefusal) return failed(`the review was refused: ${error.message}`, session.id);
      return failed(`the review broke: ${(error as Error).message}`, session.id);
    }
  };
}
