import { z } from 'zod';
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
]);
export type Target = z.infer<typeof Target>;

/** Stable identity of a target within one repository: one session per (repository, key). */
export function targetKey(target: Target): string {
  return target.kind === 'branch' ? `branch:${target.head}...${target.base}` : `working-tree:${target.base}`;
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
