import { z } from 'zod';
import type { AskLane } from './asks';
import { ForgeProvider } from './exits';
import { PullRequestRecord, pullRequestKey } from './forge';
import { PatchsetSummary, TargetKind } from './patchset';

/** What the reviewer asked to review. */
export const Target = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('branch'),
    /** The branch (or any commit-ish) under review. */
    head: z.string().min(1),
    /** What it is compared with; the merge-base of the two is the diff's old side. */
    base: z.string().min(1),
  }),
  z.object({
    kind: z.literal('working-tree'),
    /** The current branch is the head; uncommitted and untracked files are included. */
    base: z.string().min(1),
  }),
  /**
   * A pull or merge request, named by its forge identity. Its head and base are fetched into
   * hidden refs (protocol/forge.ts pullRequestRefs) and captured against their merge-base; the
   * user's HEAD, index and branches are never touched.
   */
  z.object({
    kind: z.literal('pull-request'),
    provider: ForgeProvider,
    host: z.string().min(1),
    owner: z.string().min(1),
    repo: z.string().min(1),
    number: z.number().int().positive(),
  }),
]);
export type Target = z.infer<typeof Target>;
/** What git captures directly: a pull request is captured as a branch between its fetched refs. */
export type CaptureTarget = Extract<Target, { kind: 'branch' | 'working-tree' }>;
/** A pull or merge request target. */
export type PullRequestTarget = Extract<Target, { kind: 'pull-request' }>;

/**
 * The exit lane a new ask joins, wherever it is staged (editor, board, CLI). A teammate's pull
 * request concludes in a posted review ('post-review'). One's own branch, one's own pull request
 * and a working-tree review are one's own work: what the reviewer concludes is work still to do on
 * it ('changes'), which a round dispatches. A request whose author is unknown (read without
 * credentials) counts as a teammate's.
 */
export function askLaneFor(snapshot: { session: { target: Target }; pullRequest?: { entry: 'teammate' | 'own' } | undefined }): AskLane {
  const target = snapshot.session.target;
  if (target.kind === 'pull-request') return snapshot.pullRequest?.entry === 'own' ? 'changes' : 'post-review';
  return 'changes';
}

/** Stable identity of a target within one repository: one session per (repository, key). */
export function targetKey(target: Target): string {
  switch (target.kind) {
    case 'branch':
      return `branch:${target.head}...${target.base}`;
    case 'working-tree':
      return `working-tree:${target.base}`;
    case 'pull-request':
      return `pr:${pullRequestKey(target)}`;
  }
}

export const Session = z.object({
  id: z.string(),
  repoRoot: z.string(),
  targetKey: z.string(),
  target: Target,
  createdAt: z.string(),
  updatedAt: z.string(),
  activePatchsetId: z.string().nullable(),
  /** Every patchset this session has captured, oldest first. */
  patchsetIds: z.array(z.string()),
});
export type Session = z.infer<typeof Session>;

/** Everything a surface needs to draw one session: sent whole, never as a diff. */
export const SessionSnapshot = z.object({
  session: Session,
  patchset: PatchsetSummary.nullable(),
  /** A pull-request session: the request as last read from its forge. Absent on other targets. */
  pullRequest: PullRequestRecord.optional(),
});
export type SessionSnapshot = z.infer<typeof SessionSnapshot>;

export const BranchList = z.object({
  repoRoot: z.string(),
  /** Null when HEAD is detached. */
  current: z.string().nullable(),
  /** Local branches, current first, then by most recent commit. */
  branches: z.array(z.string()),
  /** origin/HEAD's branch, else main, else master, else null. */
  defaultBase: z.string().nullable(),
});
export type BranchList = z.infer<typeof BranchList>;

export { TargetKind };
