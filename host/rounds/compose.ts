import { findingKey, flaggedBoardId, type Ask, type AskProjection } from '../../protocol/asks';
import { LENSES, type Lens } from '../../protocol/board';
import type { Round, RoundReport } from '../../protocol/rounds';
import type { FindingDispositionInput, LensComposition, RoundAddressed } from '../board/compose';
import { loadBoard } from '../board/persist';
import { reanchorThreads } from '../board/quoteAnchors';
import type { Result } from '../../protocol/result';
import type { BoardState } from '../board/state';
import type { RoundCompose } from '../pipeline/types';
import type { Store } from '../store';

/**
 * What a round's successor is composed against (host/board/compose.ts does the composing): the
 * predecessor generation's boards, the asks the verified report found addressed, and the
 * predecessor findings the round settled — an addressed ask written on a finding, or the
 * reviewer's dismissal of one. Everything is read from the store and the ask log; nothing is
 * taken from the model's words but the verified outcomes.
 */

export type ComposeStore = Pick<Store, 'getBoardMeta' | 'readBoardEvents'> & { getGeneration(id: string): { id: string; sessionId: string; patchsetId: string } | undefined };

export function roundCompose(store: ComposeStore, input: { sessionId: string; round: Round; report: RoundReport; projection: AskProjection }): RoundCompose | null {
  const priorId = input.round.fromGenerationId;
  const prior = priorId ? store.getGeneration(priorId) : undefined;
  if (!priorId || !prior || prior.sessionId !== input.sessionId) return null;
  const boards: Partial<Record<Lens, BoardState>> = {};
  for (const lens of LENSES) {
    let board: BoardState | null = null;
    try {
      board = loadBoard(store, { sessionId: input.sessionId, generationId: priorId, patchsetId: prior.patchsetId, lens });
    } catch {
      // A board that does not replay is composed against as absent: every section reads new.
    }
    if (board && board.status !== 'drafting') boards[lens] = board;
  }
  const asks = new Map<string, Ask>(input.projection.asks.map((a) => [a.id, a]));
  const addressed: RoundAddressed[] = [];
  const dispositions: FindingDispositionInput[] = [];
  for (const outcome of input.report.outcomes) {
    if (outcome.outcome !== 'addressed') continue;
    addressed.push({
      askId: outcome.askId,
      text: outcome.askText,
      evidence: outcome.evidence.flatMap((e) => (e.side !== null && e.line !== null ? [{ path: e.path, side: e.side, line: e.line }] : [])),
    });
    const anchor = asks.get(outcome.askId)?.anchor;
    if (anchor?.kind === 'finding' && anchor.generationId === priorId) dispositions.push({ findingId: anchor.findingId, disposition: 'addressed' });
  }
  const flagged = flaggedBoardId(input.sessionId, priorId);
  for (const key of Object.keys(input.projection.findingDispositions).sort()) {
    const [generationId, boardId, findingId] = key.split('|');
    if (generationId === priorId && boardId === flagged && findingId && !dispositions.some((d) => d.findingId === findingId)) dispositions.push({ findingId, disposition: 'dismissed' });
  }
  return { ordinal: input.round.ordinal, priorGenerationId: priorId, prior: boards, addressed, dispositions };
}

/** The ask log as composition uses it (host/asks/log.ts AskLog). */
export interface CompositionAsks {
  command(sessionId: string, input: unknown, now: string): unknown;
  projection(sessionId: string): Result<AskProjection>;
  appendHostEvent?(sessionId: string, input: unknown, now: string): unknown;
}

/**
 * What a lane's composition leaves outside its board: a dismissal uniquely reattached is cloned
 * onto the successor's finding (the predecessor keeps its own), and the quote threads on the
 * predecessor's board of this lens move to the successor's where their quote occurs exactly once,
 * else they are detached (host/board/quoteAnchors.ts). What was anchored on the successor's draft
 * while its lane was live — a quote thread, a dismissal — follows its element when the
 * composition carried it onto a predecessor id or renumbered it (`composition.renamed`). Refusals
 * on a second composition after a restart (already dismissed, no change) are expected and ignored.
 */
export function applyComposition(asks: CompositionAsks, place: { sessionId: string; priorGenerationId: string; generationId: string }, lens: Lens, composition: LensComposition, now: string): void {
  const { sessionId, generationId } = place;
  const renamed = composition.renamed;
  if (lens === 'flagged') {
    const boardId = flaggedBoardId(sessionId, generationId);
    if (renamed.size > 0) followRenamedDismissals(asks, { sessionId, generationId, boardId }, renamed, now);
    for (const f of composition.findings) {
      if (f.result !== 'dismissed' || f.successor === null) continue;
      asks.command(sessionId, { type: 'dismissFinding', generationId, boardId, findingId: f.successor }, now);
    }
  }
  if (!asks.appendHostEvent) return;
  const projection = asks.projection(sessionId);
  if (!projection.ok) return;
  // This lens's threads only: another lens's board is composed (and its threads placed) when its own lane settles.
  const threads = Object.entries(projection.value.quoteThreads).filter(([, t]) => t.anchor.lens === lens);
  for (const [threadId, thread] of threads) {
    const to = thread.anchor.generationId === generationId ? renamed.get(thread.anchor.elementId) : undefined;
    if (to === undefined) continue;
    asks.appendHostEvent(sessionId, { type: 'quoteAnchor', threadId, anchor: { ...thread.anchor, elementId: to }, detached: thread.detached === true }, now);
  }
  const quoteThreads = Object.fromEntries(threads);
  for (const planned of reanchorThreads({ ...projection.value, quoteThreads }, place.priorGenerationId, { generationId, boards: { [lens]: composition.board.elements.values() } })) {
    asks.appendHostEvent(sessionId, planned.event, now);
  }
}

/**
 * Dismissals made on the successor's draft, moved with their findings: each renamed one is
 * restored under the id it left (which may now name another finding) before any is dismissed
 * under its new id, so a swap of two ids moves both.
 */
function followRenamedDismissals(asks: CompositionAsks, ref: { sessionId: string; generationId: string; boardId: string }, renamed: ReadonlyMap<string, string>, now: string): void {
  const projection = asks.projection(ref.sessionId);
  if (!projection.ok) return;
  const dismissed = (findingId: string) => Object.hasOwn(projection.value.findingDispositions, findingKey({ generationId: ref.generationId, boardId: ref.boardId, findingId }));
  const moving = [...renamed].filter(([from]) => dismissed(from));
  const { sessionId, generationId, boardId } = ref;
  for (const [from] of moving) asks.command(sessionId, { type: 'restoreFinding', generationId, boardId, findingId: from }, now);
  for (const [, to] of moving) asks.command(sessionId, { type: 'dismissFinding', generationId, boardId, findingId: to }, now);
}
