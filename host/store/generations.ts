import { z } from 'zod';
import { Absence, LENSES, LENS_ADMISSIBLE_ABSENCES, Lens } from '../../protocol/board';
import { LaneFailure, PhaseTiming, SeatSpend } from '../../protocol/review';
import type { Reader, Row, Tx } from './durable-db';
import { jsonColumn, textColumn } from './columns';
import { StoreError, storeFailed } from './errors';

/**
 * Generations in the store (migration 3): one row per generation of a session's lens boards, and
 * one row per settled lane of a generation.
 *
 * - `generations(id, session_id, patchset_id, status, created_at, frozen_at, updated_at,
 *   timings_json, spend_json, revision_floors_json)`. At most one generation of a session is
 *   `live`: creating one freezes every live generation of that session in the same transaction
 *   (append-then-freeze). A frozen generation is never rewritten: lane outcomes, records, lane
 *   clears and board writes filed under it are refused (`invalid-request`).
 * - `lane_outcomes(generation_id, lens, state, absence, failure_json, attempts, settled_at)`: a
 *   lane's settlement, written the moment it settles. An `absent` outcome must name an absence
 *   its lens admits (LENS_ADMISSIBLE_ABSENCES): the write is where a wrong pairing is refused;
 *   reads stay permissive.
 *
 * `revision_floors_json` keeps, per lens, the highest board revision a cleared attempt reached,
 * so a redraft opens above every frame an earlier attempt may have published (frame revisions
 * stay monotonic per generation and lens across a restart, even one that crashed mid-clear).
 */

export const GenerationStatus = z.enum(['live', 'frozen']);
export type GenerationStatus = z.infer<typeof GenerationStatus>;

export const LaneOutcomeState = z.enum(['settled', 'absent', 'failed']);
export type LaneOutcomeState = z.infer<typeof LaneOutcomeState>;

const KEY_PART = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

export interface GenerationInput {
  id: string;
  sessionId: string;
  patchsetId: string;
  now: string;
}

export interface StoredGeneration {
  id: string;
  sessionId: string;
  patchsetId: string;
  status: GenerationStatus;
  createdAt: string;
  frozenAt: string | null;
  updatedAt: string;
  timings: PhaseTiming[];
  spend: SeatSpend[];
  revisionFloors: Partial<Record<Lens, number>>;
}

export interface LaneOutcomeInput {
  generationId: string;
  lens: Lens;
  state: LaneOutcomeState;
  absence: Absence | null;
  failure: LaneFailure | null;
  /** Attempts the lane spent (0 for a host settlement). */
  attempts: number;
  now: string;
}

export interface StoredLaneOutcome extends Omit<LaneOutcomeInput, 'now'> {
  settledAt: string;
}

function checkPart(value: string, what: string): string {
  if (!KEY_PART.test(value)) throw new StoreError('invalid-request', `Refusing ${what} ${JSON.stringify(value)}: not a safe key part`);
  return value;
}

function frozenError(id: string): StoreError {
  return new StoreError('invalid-request', `Generation ${id} is frozen: nothing rewrites a frozen generation`, { generationId: id });
}

function notFound(id: string): StoreError {
  return new StoreError('not-found', `No generation ${id} in the store`, { generationId: id });
}

/** The generation row, or a typed refusal when it is unknown or frozen. */
function liveRow(tx: Reader, id: string): Row {
  const row = tx.get('SELECT * FROM generations WHERE id = ?', [id]);
  if (!row) throw notFound(id);
  if (row.status !== 'live') throw frozenError(id);
  return row;
}

/** Refuses a write filed under a frozen generation (board writes included). Unknown scopes pass. */
export function assertScopeWritableTx(tx: Reader, scope: string | null): void {
  if (scope === null) return;
  const row = tx.get('SELECT status FROM generations WHERE id = ?', [scope]);
  if (row && row.status !== 'live') throw frozenError(scope);
}

/**
 * Files a new live generation and freezes every other live generation of its session, in one
 * transaction. 'not-found' for an unknown session or patchset; 'invalid-request' for a known id.
 */
export function createGenerationTx(tx: Tx, input: GenerationInput): StoredGeneration {
  checkPart(input.id, 'generation id');
  if (!tx.get('SELECT 1 AS x FROM sessions WHERE id = ?', [input.sessionId])) {
    throw new StoreError('not-found', `No session ${input.sessionId} in the store`, { sessionId: input.sessionId });
  }
  if (!tx.get('SELECT 1 AS x FROM patchsets WHERE id = ?', [input.patchsetId])) {
    throw new StoreError('not-found', `No patchset ${input.patchsetId} in the store`, { patchsetId: input.patchsetId });
  }
  if (tx.get('SELECT 1 AS x FROM generations WHERE id = ?', [input.id])) {
    throw new StoreError('invalid-request', `Generation ${input.id} already exists`, { generationId: input.id });
  }
  tx.run("UPDATE generations SET status = 'frozen', frozen_at = ?, updated_at = ? WHERE session_id = ? AND status = 'live'", [input.now, input.now, input.sessionId]);
  tx.run(
    `INSERT INTO generations (id, session_id, patchset_id, status, created_at, frozen_at, updated_at, timings_json, spend_json, revision_floors_json)
     VALUES (?, ?, ?, 'live', ?, NULL, ?, '[]', '[]', '{}')`,
    [input.id, input.sessionId, input.patchsetId, input.now, input.now],
  );
  return generationFromRow(liveRow(tx, input.id));
}

export function freezeGenerationTx(tx: Tx, id: string, now: string): StoredGeneration {
  const row = tx.get('SELECT * FROM generations WHERE id = ?', [id]);
  if (!row) throw notFound(id);
  if (row.status === 'live') tx.run("UPDATE generations SET status = 'frozen', frozen_at = ?, updated_at = ? WHERE id = ?", [now, now, id]);
  const after = tx.get('SELECT * FROM generations WHERE id = ?', [id]);
  if (!after) throw notFound(id);
  return generationFromRow(after);
}

const Records = z.object({ timings: z.array(PhaseTiming), spend: z.array(SeatSpend) });

/** Replaces a live generation's timings and spend (the whole versioned record, validated). */
export function putGenerationRecordsTx(tx: Tx, id: string, records: { timings: readonly PhaseTiming[]; spend: readonly SeatSpend[] }, now: string): void {
  liveRow(tx, id);
  const parsed = Records.safeParse(records);
  if (!parsed.success) throw new StoreError('invalid-request', `Invalid generation records: ${parsed.error.message}`);
  tx.run('UPDATE generations SET timings_json = ?, spend_json = ?, updated_at = ? WHERE id = ?', [JSON.stringify(parsed.data.timings), JSON.stringify(parsed.data.spend), now, id]);
}

const OutcomeInput = z
  .object({
    generationId: z.string(),
    lens: Lens,
    state: LaneOutcomeState,
    absence: Absence.nullable(),
    failure: LaneFailure.nullable(),
    attempts: z.number().int().nonnegative(),
    now: z.string().min(1),
  })
  .superRefine((o, ctx) => {
    if (o.state === 'absent') {
      if (o.absence === null) ctx.addIssue({ code: 'custom', message: 'an absent lane names its absence' });
      else if (!LENS_ADMISSIBLE_ABSENCES[o.lens].some((row) => row.absence === o.absence)) {
        ctx.addIssue({ code: 'custom', message: `the ${o.lens} lens does not admit the absence ${o.absence}` });
      }
    } else if (o.absence !== null) ctx.addIssue({ code: 'custom', message: `a ${o.state} lane carries no absence` });
    if ((o.state === 'failed') !== (o.failure !== null)) ctx.addIssue({ code: 'custom', message: 'a failure is carried exactly by a failed lane' });
  });

/** Writes (or replaces) a lane's settlement on a live generation. */
export function putLaneOutcomeTx(tx: Tx, input: LaneOutcomeInput): StoredLaneOutcome {
  const parsed = OutcomeInput.safeParse(input);
  if (!parsed.success) throw new StoreError('invalid-request', `Refusing the ${String(input.lens)} lane outcome: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
  liveRow(tx, input.generationId);
  const o = parsed.data;
  tx.run(`INSERT OR REPLACE INTO lane_outcomes (generation_id, lens, state, absence, failure_json, attempts, settled_at) VALUES (?, ?, ?, ?, ?, ?, ?)`, [
    o.generationId,
    o.lens,
    o.state,
    o.absence,
    o.failure === null ? null : JSON.stringify(o.failure),
    o.attempts,
    o.now,
  ]);
  tx.run('UPDATE generations SET updated_at = ? WHERE id = ?', [o.now, o.generationId]);
  return { generationId: o.generationId, lens: o.lens, state: o.state, absence: o.absence, failure: o.failure, attempts: o.attempts, settledAt: o.now };
}

/**
 * The first step of replacing a partial lane: removes the board's metadata record and the lane's
 * outcome in one transaction (the element log stays; a `board.opened` starts the next attempt),
 * and raises the lens's revision floor to the highest revision the cleared attempt reached.
 * Returns that floor. Repeatable: a second clear after a crash finds nothing to remove.
 */
export function clearLaneTx(tx: Tx, generationId: string, lens: Lens, boardKey: string, now: string): number {
  const row = liveRow(tx, generationId);
  const floors = parseFloors(row);
  const meta = tx.get('SELECT revision FROM board_meta WHERE board_key = ?', [boardKey]);
  const revision = typeof meta?.revision === 'number' ? meta.revision : 0;
  const floor = Math.max(floors[lens] ?? 0, revision);
  floors[lens] = floor;
  tx.run('DELETE FROM board_meta WHERE board_key = ?', [boardKey]);
  tx.run('DELETE FROM lane_outcomes WHERE generation_id = ? AND lens = ?', [generationId, lens]);
  tx.run('UPDATE generations SET revision_floors_json = ?, updated_at = ? WHERE id = ?', [JSON.stringify(floors), now, generationId]);
  return floor;
}

export function getGeneration(r: Reader, id: string): StoredGeneration | undefined {
  const row = r.get('SELECT * FROM generations WHERE id = ?', [id]);
  return row ? generationFromRow(row) : undefined;
}

/** A session's generations, oldest first. */
export function listGenerations(r: Reader, sessionId: string): StoredGeneration[] {
  return r.all('SELECT * FROM generations WHERE session_id = ? ORDER BY created_at, rowid', [sessionId]).map(generationFromRow);
}

/** A generation's lane outcomes in canonical lens order (permissive: what was written is returned). */
export function listLaneOutcomes(r: Reader, generationId: string): StoredLaneOutcome[] {
  return r
    .all('SELECT * FROM lane_outcomes WHERE generation_id = ?', [generationId])
    .map(laneOutcomeFromRow)
    .sort((a, b) => LENSES.indexOf(a.lens) - LENSES.indexOf(b.lens));
}

// ─── Rows ────────────────────────────────────────────────────────────────────────────────────

const StoredFloors = z.record(z.string(), z.number().int().nonnegative());

function parseFloors(row: Row): Partial<Record<Lens, number>> {
  const parsed = StoredFloors.safeParse(jsonColumn(row, 'revision_floors_json'));
  if (!parsed.success) throw storeFailed(`Generation ${String(row.id)} revision floors do not match their schema`);
  const out: Partial<Record<Lens, number>> = {};
  for (const [lens, floor] of Object.entries(parsed.data)) if (Lens.safeParse(lens).success) out[lens as Lens] = floor;
  return out;
}

export function generationFromRow(row: Row): StoredGeneration {
  const records = Records.safeParse({ timings: jsonColumn(row, 'timings_json'), spend: jsonColumn(row, 'spend_json') });
  if (!records.success) throw storeFailed(`Generation ${String(row.id)} records do not match their schema: ${records.error.message}`);
  const status = GenerationStatus.safeParse(row.status);
  if (!status.success) throw storeFailed(`Generation ${String(row.id)} has status ${String(row.status)}`);
  return {
    id: textColumn(row, 'id'),
    sessionId: textColumn(row, 'session_id'),
    patchsetId: textColumn(row, 'patchset_id'),
    status: status.data,
    createdAt: textColumn(row, 'created_at'),
    frozenAt: row.frozen_at === null ? null : textColumn(row, 'frozen_at'),
    updatedAt: textColumn(row, 'updated_at'),
    timings: records.data.timings,
    spend: records.data.spend,
    revisionFloors: parseFloors(row),
  };
}

const StoredOutcome = z.object({
  generationId: z.string(),
  lens: Lens,
  state: LaneOutcomeState,
  absence: Absence.nullable(),
  failure: LaneFailure.nullable(),
  attempts: z.number().int().nonnegative(),
  settledAt: z.string(),
});

function laneOutcomeFromRow(row: Row): StoredLaneOutcome {
  const parsed = StoredOutcome.safeParse({
    generationId: row.generation_id,
    lens: row.lens,
    state: row.state,
    absence: row.absence,
    failure: row.failure_json === null ? null : jsonColumn(row, 'failure_json'),
    attempts: row.attempts,
    settledAt: row.settled_at,
  });
  if (!parsed.success) throw storeFailed(`Lane outcome ${String(row.generation_id)}/${String(row.lens)} does not match its schema: ${parsed.error.message}`);
  return parsed.data;
}
