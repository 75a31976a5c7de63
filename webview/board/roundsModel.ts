/**
 * PURE. Every word and decision of the panel's rounds area, from the durable round records the
 * extension sends whole (`rennet/panel/rounds`): the run view of the newest round (its phases
 * done / current / pending), the greeting once it is back, and the ledger of every round.
 * Nothing here is remembered between snapshots: a panel reloaded mid-round draws the same view
 * from the same record (it reattaches; it never re-dispatches).
 */
import { ROUND_PHASES, roundHasDiff, type ReportEvidence, type Round, type RoundOutcomeKind, type RoundPhase, type RoundReport, type RoundWorker } from '../../protocol';
import { plural } from '../format';
import { shortGenerationId } from './words';

// ─── Phases ──────────────────────────────────────────────────────────────────────────────────

export const ROUND_PHASE_LABELS: Readonly<Record<RoundPhase, string>> = {
  prep: 'Prep',
  worker: 'Worker',
  commit: 'Commit',
  report: 'Report',
  verification: 'Verification',
  regeneration: 'Regeneration',
};

/**
 * What happens in a phase, in a few words (shown beside the current one). As the host runs them
 * (host/rounds/runner.ts): `report` captures the successor, `verification` holds the report seat's
 * classification turn and the host's check of it (the Hand off view's "capturing the result" and
 * "drafting and verifying the report").
 */
export const ROUND_PHASE_DETAILS: Readonly<Record<RoundPhase, string>> = {
  prep: 'writing the work order and taking the starting checkpoint',
  worker: 'the coding agent edits and commits in the workspace',
  commit: 'measuring what changed between the two checkpoints',
  report: 'capturing the new head the boards will be drafted over',
  verification: 'drafting the report on each ask and checking every claim against the measured diff',
  regeneration: 'drafting the lens boards over the new head',
};

/**
 * - `done`: the phase ended in its receipt;
 * - `current`: the round is in it now;
 * - `failed` / `stopped`: the round failed, or was cancelled, in it;
 * - `pending`: not reached yet (a running round);
 * - `skipped`: never reached by a round that has ended (unchanged, failed, cancelled).
 */
export type PhaseMark = 'done' | 'current' | 'pending' | 'failed' | 'stopped' | 'skipped';

export interface PhaseStep {
  phase: RoundPhase;
  label: string;
  mark: PhaseMark;
}

/** The phase a round is at: a failed round's failure phase, else its recorded phase. */
export function roundAt(round: Round): RoundPhase {
  return round.state === 'failed' && round.failure ? round.failure.phase : round.phase;
}

/** Each phase of the round, in order, marked from its record alone (phases before the one it is at are done). */
export function phaseSteps(round: Round): PhaseStep[] {
  const at = ROUND_PHASES.indexOf(roundAt(round));
  const here: PhaseMark = round.state === 'running' ? 'current' : round.state === 'failed' ? 'failed' : round.state === 'cancelled' ? 'stopped' : 'done';
  return ROUND_PHASES.map((phase, i) => ({
    phase,
    label: ROUND_PHASE_LABELS[phase],
    mark: i < at ? 'done' : i === at ? here : round.state === 'running' ? 'pending' : 'skipped',
  }));
}

export const PHASE_MARK_WORDS: Readonly<Record<PhaseMark, string>> = {
  done: 'done',
  current: 'in progress',
  pending: 'pending',
  failed: 'failed here',
  stopped: 'stopped here',
  skipped: 'not reached',
};

export const PHASE_MARK_GLYPHS: Readonly<Record<PhaseMark, string>> = {
  done: '✓',
  current: '◐',
  pending: '○',
  failed: '✕',
  stopped: '■',
  skipped: '–',
};

// ─── What the area leads with ───────────────────────────────────────────────────────────────

/** The newest round decides what the area leads with; null: no round yet (the area is absent). */
export type RoundsLead =
  | { kind: 'run'; round: Round }
  | { kind: 'failed'; round: Round }
  | { kind: 'cancelled'; round: Round }
  | { kind: 'greeting'; round: Round; report: RoundReport | null }
  | { kind: 'unchanged'; round: Round };

/** The newest round (highest ordinal). */
export function newestRound(rounds: readonly Round[]): Round | null {
  let newest: Round | null = null;
  for (const round of rounds) if (!newest || round.ordinal > newest.ordinal) newest = round;
  return newest;
}

export function roundsLead(rounds: readonly Round[]): RoundsLead | null {
  const round = newestRound(rounds);
  if (!round) return null;
  switch (round.state) {
    case 'running':
      return { kind: 'run', round };
    case 'failed':
      return { kind: 'failed', round };
    case 'cancelled':
      return { kind: 'cancelled', round };
    case 'returned':
      return { kind: 'greeting', round, report: round.report };
    case 'unchanged':
      return { kind: 'unchanged', round };
  }
}

// ─── Words ───────────────────────────────────────────────────────────────────────────────────

const WORKER_NAMES: Readonly<Record<RoundWorker['kind'], string>> = {
  'claude-code': 'Claude Code',
  codex: 'Codex',
  scripted: 'scripted worker',
};

/** "Claude Code 2.1.3", "Codex", "scripted worker" (never presented as a model). */
export function workerText(worker: RoundWorker): string {
  const name = WORKER_NAMES[worker.kind] ?? worker.kind;
  return worker.version ? `${name} ${worker.version}` : name;
}

export function dispatchedText(round: Round): string {
  return `${plural(round.asks.length, 'ask')} dispatched`;
}

export function runTitle(round: Round): string {
  return `Round ${round.ordinal} is running`;
}

export function greetingTitle(round: Round): string {
  return `Round ${round.ordinal} is back`;
}

export function currentPhaseText(round: Round): string {
  const phase = round.phase;
  return `${ROUND_PHASE_LABELS[phase]}: ${ROUND_PHASE_DETAILS[phase]}…`;
}

export function failedTitle(round: Round): string {
  return `Round ${round.ordinal} failed at ${ROUND_PHASE_LABELS[roundAt(round)].toLowerCase()}`;
}

/** Whether a failed round can be retried, and where Retry is (the panel has no Retry of its own). */
export function retryText(round: Round): string {
  if (round.failure?.retryable) {
    return 'Retryable. Retry is on this round’s row in the Hand off view (Source Control): it resumes from the last receipt, and the coding agent does not run again. Its asks stay staged meanwhile.';
  }
  return 'Not retryable. Its asks stay staged for the next round.';
}

export function cancelledTitle(round: Round): string {
  return `Round ${round.ordinal} was cancelled`;
}

export function cancelledText(round: Round): string {
  return `It was stopped at ${ROUND_PHASE_LABELS[round.phase].toLowerCase()}. What the coding agent changed so far stays in the workspace; its asks stay staged.`;
}

export function unchangedTitle(round: Round): string {
  return `Round ${round.ordinal} changed nothing`;
}

export const UNCHANGED_TEXT = 'The coding agent ended its turn without changing a file. The boards stay as they were, and no report was drawn up.';

export const OUTCOME_LABELS: Readonly<Record<RoundOutcomeKind, string>> = {
  addressed: 'Addressed',
  partial: 'Partial',
  untouched: 'Untouched',
};

export type CountKey = 'addressed' | 'partial' | 'untouched' | 'beyond';
export const COUNT_KEYS: readonly CountKey[] = ['addressed', 'partial', 'untouched', 'beyond'];

/** The report's counts, every one shown (they were verified: a zero is a real zero). */
export function countParts(report: RoundReport): Array<{ key: CountKey; count: number; text: string }> {
  return COUNT_KEYS.map((key) => ({ key, count: report.counts[key], text: `${report.counts[key]} ${key}` }));
}

/** `src/app.js:12 (new)`, `src/old.js:4 (old)`; a unit without a line says what it is. */
export function evidenceLabel(evidence: ReportEvidence): string {
  if (evidence.line !== null) return `${evidence.path}:${evidence.line} (${evidence.side === 'base' ? 'old' : 'new'})`;
  const what = evidence.kind === 'rename' ? 'renamed' : evidence.kind === 'mode-change' ? 'mode changed' : evidence.kind === 'binary' ? 'binary' : 'changed';
  return `${evidence.path} (${what})`;
}

/** Where evidence opens in the round's own diff: its line on its side, or the file's diff. */
export function evidenceFocus(evidence: ReportEvidence): { path: string; side: 'base' | 'head'; line: number | null } {
  return { path: evidence.path, side: evidence.side ?? 'head', line: evidence.line };
}

/** `1a2b3c4..5d6e7f8`; null when the round has no range yet. */
export function rangeText(round: Round): string | null {
  return round.range ? `${round.range.from.slice(0, 7)}..${round.range.to.slice(0, 7)}` : null;
}

export function workspaceText(round: Round): string {
  const { root, branch, workBranch } = round.workspace;
  return workBranch && workBranch !== branch ? `${root} · ${workBranch} (for ${branch})` : `${root} · ${branch}`;
}

export const ROUND_STATE_WORDS: Readonly<Record<Round['state'], string>> = {
  running: 'running',
  returned: 'back',
  unchanged: 'changed nothing',
  failed: 'failed',
  cancelled: 'cancelled',
};

/** The state in words, with the phase where it matters: "running · worker", "failed at report". */
export function stateText(round: Round): string {
  if (round.state === 'running') return `running · ${ROUND_PHASE_LABELS[round.phase].toLowerCase()}`;
  if (round.state === 'failed') return `failed at ${ROUND_PHASE_LABELS[roundAt(round)].toLowerCase()}${round.failure?.retryable ? ' · retryable' : ''}`;
  return ROUND_STATE_WORDS[round.state];
}

// ─── The ledger ──────────────────────────────────────────────────────────────────────────────

/** What the panel knows of generations: the one shown, whether it is live, and the frozen ones listed. */
export interface GenerationsKnown {
  shownId: string | null;
  shownLive: boolean;
  frozenIds: ReadonlySet<string>;
}

/**
 * A generation a row names. `select`: what a click asks for — the generation's id (a frozen one,
 * pinned read-only), null (the live one, when a frozen one is shown), or absent (it is shown now,
 * or the panel does not list it).
 */
export interface GenerationRef {
  id: string;
  short: string;
  frozen: boolean;
  shown: boolean;
  select?: string | null;
}

function generationRef(id: string, known: GenerationsKnown): GenerationRef {
  const frozen = known.frozenIds.has(id);
  const shown = known.shownId === id;
  const ref: GenerationRef = { id, short: shortGenerationId(id), frozen, shown };
  if (shown) return ref;
  if (frozen) ref.select = id;
  // Not frozen and not shown while a frozen one is: it is the live generation.
  else if (known.shownId !== null && !known.shownLive) ref.select = null;
  return ref;
}

export interface LedgerRow {
  round: Round;
  title: string;
  state: string;
  asks: string;
  range: string | null;
  worker: string;
  workspace: string;
  /** The generation the round minted (a returned round), and the one live when it started. */
  generation: GenerationRef | null;
  earlier: GenerationRef | null;
  /** Its commits can be opened as its own diff (absent otherwise, never disabled). */
  hasDiff: boolean;
  /** It has a report to open. */
  hasReport: boolean;
}

/** Every round, newest first (the newest is what the area leads with; the ledger reads back from it). */
export function ledgerRows(rounds: readonly Round[], known: GenerationsKnown): LedgerRow[] {
  return [...rounds]
    .sort((a, b) => b.ordinal - a.ordinal)
    .map((round) => ({
      round,
      title: `Round ${round.ordinal}`,
      state: stateText(round),
      asks: plural(round.asks.length, 'ask'),
      range: rangeText(round),
      worker: workerText(round.worker),
      workspace: workspaceText(round),
      generation: round.generationId ? generationRef(round.generationId, known) : null,
      earlier: round.fromGenerationId && round.fromGenerationId !== round.generationId ? generationRef(round.fromGenerationId, known) : null,
      hasDiff: roundHasDiff(round),
      hasReport: round.report !== null,
    }));
}

export function ledgerSummary(rounds: readonly Round[]): string {
  return `Rounds (${rounds.length})`;
}
