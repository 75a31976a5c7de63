import { flaggedBoardId, flaggedOpenCount, type AskProjection, type FindingRef } from '../../protocol/asks';
import type { ReviewGrounding } from '../../protocol/exits';
import type { GenerationSnapshot } from '../../protocol/review';

/**
 * PURE. The facts an approving review's opener states, read from the session's current
 * generation and its ask projection. A lane still drafting is left out (it has come to nothing
 * yet); a settled, absent or failed lane is stated as it is.
 */
export function groundingOf(generation: GenerationSnapshot | null, projection: AskProjection): ReviewGrounding {
  if (!generation) return { lenses: [], findings: { open: 0, dismissed: 0 } };
  const lenses: ReviewGrounding['lenses'] = [];
  const findings: FindingRef[] = [];
  for (const lane of generation.lanes) {
    if (lane.state !== 'settled' && lane.state !== 'absent' && lane.state !== 'failed') continue;
    const elements = lane.state === 'settled' ? (lane.board?.elements ?? []) : [];
    const sections = elements.filter((e) => e.kind === 'section' && e.parent === null).length;
    const laneFindings = elements.filter((e) => e.kind === 'finding');
    const groups = elements.filter((e) => e.kind === 'noise_group').length;
    if (lane.lens === 'flagged') {
      const boardId = flaggedBoardId(generation.sessionId, generation.generationId);
      for (const f of laneFindings) findings.push({ generationId: generation.generationId, boardId, findingId: f.id });
    }
    lenses.push({ lens: lane.lens, state: lane.state, sections, findings: laneFindings.length, groups });
  }
  const open = flaggedOpenCount(findings, projection);
  const dismissed = findings.filter((f) => Object.hasOwn(projection.findingDispositions, `${f.generationId}|${f.boardId}|${f.findingId}`)).length;
  return { lenses, findings: { open, dismissed } };
}
