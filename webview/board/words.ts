/**
 * Every word and number the board view shows about a generation, a lane and its elements,
 * decided here so it is unit-tested without a DOM. Pure; protocol types only.
 */
import {
  LENSES,
  LENS_ADMISSIBLE_ABSENCES,
  LENS_TITLES,
  type Absence,
  accordWord,
  type Accord,
  type FoldCount,
  type GenerationSnapshot,
  type Lens,
  type LaneDelta,
  type LaneFailure,
  type LaneState,
  type LaneView,
  type SeatSpend,
  type Severity,
} from '../../protocol';
import { formatKiB } from '../format';

// ─── Lanes and the rail ──────────────────────────────────────────────────────────────────────

export const LANE_STATE_LABELS: Record<LaneState, string> = {
  queued: 'queued',
  waiting: 'waiting',
  working: 'working',
  settled: 'settled',
  absent: 'absent',
  failed: 'failed',
};

/** A glyph beside the state word (decorative: the word carries the meaning). */
export const LANE_STATE_ICONS: Record<LaneState, string> = {
  queued: '○',
  waiting: '◷',
  working: '◐',
  settled: '✓',
  absent: '∅',
  failed: '✕',
};

/** Why the Noise lane waits: it files only what the four core readings leave uncited. */
export const NOISE_WAITING_EXPLANATION = 'Noise starts after Design, Sequence, Decisions and Flagged have settled: it lists the changed regions none of them cites, so it needs their citations first.';

/**
 * A round successor's settled lane: what its re-draft found, from the composition's stamps. A lane
 * whose sections moved can never read "carrying forward".
 */
export function laneDeltaWords(delta: LaneDelta): { label: string; title: string } {
  if (delta.verdict === 'carrying-forward') return { label: 'carrying forward', title: `Round ${delta.round}: re-drafted, and nothing on this board changed.` };
  const parts = [delta.added > 0 ? `${delta.added} new` : null, delta.reworked > 0 ? `${delta.reworked} reworked` : null, delta.removed.length > 0 ? `${delta.removed.length} removed` : null].filter(
    (p): p is string => p !== null,
  );
  const what = parts.length > 0 ? `sections ${parts.join(', ')}` : 'its title, introduction or loose notes changed';
  return { label: 'reworked', title: `Round ${delta.round}: re-drafted; ${what}.` };
}

/** The rail tab's hover text. */
export function laneStateTitle(lens: Lens, state: LaneState): string {
  const title = LENS_TITLES[lens];
  switch (state) {
    case 'queued':
      return `${title}: queued, not started yet.`;
    case 'waiting':
      return lens === 'noise' ? NOISE_WAITING_EXPLANATION : `${title}: waiting for what it reads to be ready.`;
    case 'working':
      return `${title}: being written; what is already written is readable.`;
    case 'settled':
      return `${title}: settled.`;
    case 'absent':
      return `${title}: settled absent — a stated result, not a failure.`;
    case 'failed':
      return `${title}: failed; the reason is on the board.`;
  }
}

/** A lane for every lens, in canonical order; a lane the snapshot lacks is a stated failure. */
export function lanesInOrder(snapshot: GenerationSnapshot): LaneView[] {
  return LENSES.map(
    (lens) =>
      snapshot.lanes.find((lane) => lane.lens === lens) ?? {
        lens,
        state: 'failed',
        absence: null,
        failure: { message: `This generation carries no ${LENS_TITLES[lens]} lane.`, retryable: null, attempts: 0 },
        board: null,
      },
  );
}

/**
 * The lens shown when the reviewer has not chosen one: Flagged when its board exists, else the
 * first lens (canonical order) with a board, else Flagged. Recomputed on every snapshot, so a
 * Flagged board that arrives later takes the unchosen selection back.
 */
export function defaultLens(snapshot: GenerationSnapshot | null): Lens {
  if (!snapshot) return 'flagged';
  const lanes = lanesInOrder(snapshot);
  if (lanes.find((lane) => lane.lens === 'flagged')?.board) return 'flagged';
  return lanes.find((lane) => lane.board !== null)?.lens ?? 'flagged';
}

export function selectedLens(snapshot: GenerationSnapshot | null, chosen: Lens | null): Lens {
  return chosen ?? defaultLens(snapshot);
}

/** The reader-facing meaning of an absence, from LENS_ADMISSIBLE_ABSENCES. */
export function absenceMeaning(lens: Lens, absence: Absence | null): string {
  const row = LENS_ADMISSIBLE_ABSENCES[lens].find((r) => r.absence === absence);
  if (row) return row.meaning;
  return absence ? `Settled absent (${absence}).` : 'Settled absent; no reason was recorded.';
}

export type RetryKind = 'retryable' | 'terminal' | 'unknown';

export function retryKind(failure: LaneFailure | null): RetryKind {
  if (!failure || failure.retryable === null) return 'unknown';
  return failure.retryable ? 'retryable' : 'terminal';
}

export function retryLabel(failure: LaneFailure | null): string {
  const kind = retryKind(failure);
  return kind === 'retryable' ? 'retryable' : kind === 'terminal' ? 'terminal' : 'retry not known';
}

export function retryTitle(failure: LaneFailure | null): string {
  const kind = retryKind(failure);
  const attempts = failure && failure.attempts > 0 ? ` after ${plural(failure.attempts, 'attempt')}` : '';
  if (kind === 'retryable') return `Failed${attempts}; another attempt could plausibly succeed.`;
  if (kind === 'terminal') return `Failed${attempts}; another attempt with the same setup would fail the same way.`;
  return `Failed${attempts}; the drafter did not say whether another attempt could succeed.`;
}

/** What a lane says while nothing is written yet. */
export function pendingText(lens: Lens, state: LaneState): string {
  switch (state) {
    case 'queued':
      return `${LENS_TITLES[lens]} is queued; it has not started.`;
    case 'waiting':
      return lens === 'noise' ? NOISE_WAITING_EXPLANATION : `${LENS_TITLES[lens]} is waiting to start.`;
    default:
      return 'Being written…';
  }
}

// ─── Spend and timing ───────────────────────────────────────────────────────────────────────

// One formatter for every count: Number#toLocaleString builds a new one per call, which a
// re-render after every seat write paid once per count on screen.
const COUNT_FORMAT = new Intl.NumberFormat('en-US');

/** A count with its thousands separators, as the panel writes every count (1,234). */
export function countText(count: number): string {
  return COUNT_FORMAT.format(count);
}

export function plural(count: number, one: string, many = `${one}s`): string {
  return `${countText(count)} ${count === 1 ? one : many}`;
}

export function duration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const minutes = Math.floor(seconds / 60);
  return `${minutes}m ${Math.round(seconds - minutes * 60)}s`;
}

export interface SpendPart {
  key: 'turns' | 'tokens' | 'tools' | 'reads' | 'time' | 'price' | 'wall' | 'first';
  text: string;
  title?: string;
}

/**
 * The spend of some seat turns as reader-facing parts: turns, tokens (or "no usage reported" —
 * never a fake zero), tool calls, seat time, price when any turn priced itself.
 */
export function spendParts(spend: readonly SeatSpend[]): SpendPart[] {
  if (spend.length === 0) return [{ key: 'turns', text: 'no seat turns yet' }];
  const parts: SpendPart[] = [{ key: 'turns', text: plural(spend.length, 'seat turn') }];
  const reported = spend.filter((s) => s.inputTokens !== null || s.outputTokens !== null);
  if (reported.length === 0) {
    parts.push({ key: 'tokens', text: 'no usage reported', title: 'No seat turn reported its token usage.' });
  } else {
    const input = reported.reduce((sum, s) => sum + (s.inputTokens ?? 0), 0);
    const output = reported.reduce((sum, s) => sum + (s.outputTokens ?? 0), 0);
    const missing = spend.length - reported.length;
    parts.push({
      key: 'tokens',
      text: `${countText(input)} tokens in, ${countText(output)} out${missing > 0 ? ` (${plural(missing, 'turn')} reported no usage)` : ''}`,
    });
  }
  const withTools = spend.filter((s) => s.toolCalls !== null);
  if (withTools.length > 0) {
    const calls = withTools.reduce((sum, s) => sum + (s.toolCalls ?? 0), 0);
    const refusals = withTools.reduce((sum, s) => sum + (s.refusals ?? 0), 0);
    parts.push({ key: 'tools', text: `${plural(calls, 'tool call')}${refusals > 0 ? ` (${countText(refusals)} refused)` : ''}` });
    const reading = withTools.filter((s) => typeof s.readCalls === 'number');
    if (reading.length > 0) {
      const reads = reading.reduce((sum, s) => sum + (s.readCalls ?? 0), 0);
      const bytes = reading.reduce((sum, s) => sum + (s.readBytes ?? 0), 0);
      const ms = reading.reduce((sum, s) => sum + (s.readMs ?? 0), 0);
      parts.push({
        key: 'reads',
        text: `${plural(reads, 'read')} (${formatKiB(bytes)} in ${duration(ms)})`,
        title: 'Calls to the read tools (list_changes, read_diff, read_file, search_code, read_context): what the seats read of the change.',
      });
    }
  }
  const seatMs = spend.reduce((sum, s) => sum + s.durationMs, 0);
  parts.push({ key: 'time', text: `${duration(seatMs)} seat time`, title: 'The seat turns’ durations added up (they may overlap).' });
  const priced = spend.filter((s) => s.priceUsd !== null);
  if (priced.length > 0) {
    const usd = priced.reduce((sum, s) => sum + (s.priceUsd ?? 0), 0);
    parts.push({ key: 'price', text: `$${usd.toFixed(4)}${priced.length < spend.length ? ' (some turns unpriced)' : ''}` });
  }
  return parts;
}

/** Spend and timing of a whole generation: spendParts plus wall clock and first arrivals. */
export function generationSpendParts(snapshot: Pick<GenerationSnapshot, 'spend' | 'timings'>): SpendPart[] {
  const parts = spendParts(snapshot.spend);
  const timed = snapshot.timings
    .map((t) => ({ start: Date.parse(t.startedAt), end: Date.parse(t.startedAt) + t.durationMs, phase: t.phase, durationMs: t.durationMs }))
    .filter((t) => Number.isFinite(t.start));
  if (timed.length > 0) {
    const start = timed.reduce((min, t) => Math.min(min, t.start), Infinity);
    const end = timed.reduce((max, t) => Math.max(max, t.end), -Infinity);
    parts.push({ key: 'wall', text: `${duration(end - start)} wall clock`, title: 'From the first phase that started to the last that ended.' });
  }
  const firstBoard = snapshot.timings.find((t) => t.phase === 'first-core-board');
  if (firstBoard) parts.push({ key: 'first', text: `first board after ${duration(firstBoard.durationMs)}` });
  return parts;
}

// ─── Generations ────────────────────────────────────────────────────────────────────────────

export function shortGenerationId(id: string): string {
  return id.length > 14 ? id.slice(0, 14) : id;
}

/** "2026-11-30 12:14" (UTC, as stored) or the raw text when it is not a date. */
export function createdAtText(iso: string): string {
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})/.exec(iso);
  return match ? `${match[1]} ${match[2]} UTC` : iso;
}

// ─── Elements ───────────────────────────────────────────────────────────────────────────────

export function foldCountsText(counts: readonly FoldCount[]): string {
  return counts.map((c) => `${countText(c.count)} ${c.label}`).join(' · ');
}

export function rangeText(start: number, end: number): string {
  return end > start ? `${start}-${end}` : String(start);
}

/** "lines 5–9" / "line 5", with "base" when the range is on the base side. */
export function rangeLabel(side: 'base' | 'head', start: number, end: number): string {
  const lines = end > start ? `lines ${start}–${end}` : `line ${start}`;
  return side === 'base' ? `base ${lines}` : lines;
}

export function basename(path: string): string {
  const index = path.lastIndexOf('/');
  return index >= 0 ? path.slice(index + 1) : path;
}

/** The directory of a path without its trailing slash ('' at the root). */
export function dirname(path: string): string {
  const index = path.lastIndexOf('/');
  return index > 0 ? path.slice(0, index) : '';
}

export const SEVERITY_TITLES: Record<Severity, string> = {
  blocker: 'Blocker: must not merge as is.',
  major: 'Major: should be fixed before merging.',
  minor: 'Minor: worth fixing.',
  nit: 'Nit: optional polish.',
};

export const ACCORD_TITLES: Record<Accord, string> = {
  concur: 'Concur: both reviews raised this alike.',
  split: 'Split: one review raised this; the other did not.',
  conflict: 'Conflict: both reviews raised this and disagree about it.',
};

/**
 * The accord mark as a reader should read it: a `split` tallied for one model only means no
 * second model reviewed the change, so it reads "solo", not as a disagreement.
 */
export function accordMark(accord: Accord, models: number): { label: string; title: string } {
  const word = accordWord(accord, models);
  return word === 'solo' ? { label: word, title: 'Solo: raised by the only review of this change; no second model reviewed it.' } : { label: word, title: ACCORD_TITLES[word] };
}

export const TONE_LABELS: Record<'note' | 'warning' | 'question' | 'remedy', string> = {
  note: 'Note',
  warning: 'Warning',
  question: 'Question',
  remedy: 'Remedy',
};

/** Only known enum values become class names; anything else maps to a neutral class. */
export function enumClass<T extends string>(value: unknown, allowed: readonly T[], fallback: T): T {
  return typeof value === 'string' && (allowed as readonly string[]).includes(value) ? (value as T) : fallback;
}
