/**
 * The Flagged board's open count, derived on every render and never stored: findings the board
 * says are open, counted by protocol's `flaggedOpenCount` — the host's own rule (a dismissed
 * finding, or one the reviewer staged a change request on, is no longer waiting for a decision).
 * Pure.
 */
import { flaggedBoardId, flaggedOpenCount, type AskProjection, type BoardElement, type FindingRef } from '../../protocol';

export interface OpenCountScope {
  sessionId: string;
  generationId: string;
}

/** Open findings among `elements` (a Flagged board's pool): status open, then `flaggedOpenCount`. */
export function openFindingCount(elements: readonly BoardElement[], scope: OpenCountScope, projection: AskProjection): number {
  return openCountOf(openFindingIds(elements), scope, projection);
}

/**
 * The ids of the findings whose status is open, one per line: a key that stays equal across a
 * write that changed no finding's status, so a caller memoizing on it counts again only then.
 */
export function openFindingIds(elements: readonly BoardElement[]): string {
  let ids = '';
  for (const element of elements) if (element.kind === 'finding' && element.status === 'open') ids += `${element.id}\n`;
  return ids;
}

/** `flaggedOpenCount` over the findings `openFindingIds` named. */
export function openCountOf(openIds: string, scope: OpenCountScope, projection: AskProjection): number {
  const boardId = flaggedBoardId(scope.sessionId, scope.generationId);
  const findings: FindingRef[] = [];
  for (const findingId of openIds.split('\n')) if (findingId !== '') findings.push({ generationId: scope.generationId, boardId, findingId });
  return flaggedOpenCount(findings, projection);
}

/** Words for the count: "3 open", "none open". */
export function openCountText(count: number): string {
  return count === 0 ? 'none open' : `${count} open`;
}
