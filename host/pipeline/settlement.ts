import { LENS_ADMISSIBLE_ABSENCES, LENS_TITLES, seatAbsence, type Absence, type FinishPointer, type Lens } from '../../protocol/board';
import type { LaneFailure } from '../../protocol/review';
import { renderPointers } from '../board/render';
import type { BoardState, VerbCall } from '../board/state';

/** Pure pieces of a lane's settlement: the absence guard, the failure accounts, the verdict. */

export type Settlement = { state: 'settled'; absence: null; failure: null } | { state: 'absent'; absence: Absence; failure: null } | { state: 'failed'; absence: null; failure: LaneFailure };

/**
 * What a settled board amounts to, guarded where the outcome becomes durable: an absence must be
 * one its lens admits, and one the settler may declare (a seat declares only its lens's seat
 * absence; the host only the host-settled rows). Anything else is a producer defect that settles
 * as a typed failure, retryable at attempt zero. A board that is still drafting is not a
 * settlement (null).
 */
export function admitSettlement(lens: Lens, board: Pick<BoardState, 'status' | 'absence'>, by: 'seat' | 'host' | 'any'): Settlement | null {
  if (board.status === 'finished') return { state: 'settled', absence: null, failure: null };
  if (board.status !== 'absent') return null;
  const absence = board.absence;
  const admissible =
    absence !== null && LENS_ADMISSIBLE_ABSENCES[lens].some((row) => row.absence === absence && (by === 'any' || row.settledBy === by)) && (by !== 'seat' || seatAbsence(lens)?.absence === absence);
  if (admissible) return { state: 'absent', absence, failure: null };
  const admitted = LENS_ADMISSIBLE_ABSENCES[lens].filter((row) => by === 'any' || row.settledBy === by).map((row) => row.absence);
  return {
    state: 'failed',
    absence: null,
    failure: {
      message: `${LENS_TITLES[lens]} settled the absence ${absence ?? '(none)'}, which ${by === 'seat' ? 'its seat' : 'this lens'} may not declare (admissible: ${admitted.length > 0 ? admitted.join(', ') : 'none'}).`,
      retryable: true,
      attempts: 0,
    },
  };
}

/** The last finish verdict, as a follow-up turn carries it; null when finish was never called. */
export function verdictOf(lastFinish: readonly FinishPointer[] | null): string | null {
  if (lastFinish === null) return null;
  if (lastFinish.length === 0) return 'finish settled the board, and a later write reopened it: it is drafting again. Call finish again.';
  return renderPointers(lastFinish);
}

/** The terminal (or, after a harness failure, retryable) account of a ladder that ran out. */
export function exhaustedFailure(lens: Lens, attempts: number, lastVerdict: string | null, harnessFailure: string | null, final = false): LaneFailure {
  const title = LENS_TITLES[lens];
  const spent = `${attempts} attempt${attempts === 1 ? '' : 's'}`;
  const verdict = lastVerdict === null ? 'finish was never called' : `the last finish verdict was: ${lastVerdict}`;
  const cause = harnessFailure === null ? '' : ` The last turn failed in the harness: ${harnessFailure}.`;
  return {
    message: `${title} did not settle after ${spent}; ${verdict}.${cause}`.replace(/\.\.(?= |$)/, '.'),
    // A harness failure is another run's chance to draw — unless the harness said no attempt can
    // mend it as configured; a seat that ended unsettled every time is terminal.
    retryable: harnessFailure !== null && !final,
    attempts,
  };
}

/** "no model harness is configured: …" — terminal for this configuration (see README). */
export function missingHarnessFailure(what: string, hint: string | undefined): LaneFailure {
  return { message: `no model harness is configured: ${what}${hint ? ` (${hint})` : ''}.`, retryable: false, attempts: 0 };
}

/** Noise over a failed sibling: the named lanes' account, not an assumption about Noise. */
export function noiseDerivationFailure(lanes: readonly Lens[], retryable: boolean): LaneFailure {
  const names = lanes.map((l) => LENS_TITLES[l]).join(', ');
  return {
    message: `Noise cannot be derived: the citations of ${names} are unknown because ${lanes.length === 1 ? 'that lane' : 'those lanes'} failed.`,
    retryable,
    attempts: 0,
  };
}

/** The verb a coalesced write is filed under (the event log's audit stamp only). */
export function inferredCall(previous: BoardState, next: BoardState): VerbCall {
  if (next.status === 'finished' && previous.status !== 'finished') return { verb: 'finish' };
  if (next.status === 'absent' && previous.status !== 'absent') return { verb: 'settle_absent' };
  for (const id of previous.elements.keys()) if (!next.elements.has(id)) return { verb: 'remove_element', input: { id } };
  for (const [id, element] of next.elements) {
    if (!previous.elements.has(id)) return element.kind === 'code_ref' ? { verb: 'cite', input: {} } : { verb: 'add', kind: element.kind, input: {} };
  }
  for (const [id, element] of next.elements) if (previous.elements.get(id) !== element) return { verb: 'update', kind: element.kind, input: { id } };
  return { verb: 'set_document', input: {} };
}
