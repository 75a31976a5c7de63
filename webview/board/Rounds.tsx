/**
 * The panel's rounds area (a review of one's own branch): the newest round leads — its run view
 * while it runs (or the failure or cancellation it ended in), the report greeting once it is back,
 * or what an unchanged round means — and under it the ledger of every round, newest first, each
 * row opening its own report and its own read-only round diff.
 *
 * Drawn from the round records alone (`rennet/panel/rounds`, whole); the only state here is which
 * rows the reviewer unfolded. Ask text (the reviewer's) and notes (the report seat's) go through
 * the one Markdown reader with citations off: their `path:line` would name lines of another
 * capture. Evidence opens in the round's own diff (`openRoundDiff` with `at`), never on the
 * review's capture, whose coordinates are another diff's.
 */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { roundHasDiff, type GenerationSnapshot, type Round, type RoundDiffFocus, type RoundReport } from '../../protocol';
import { escapeControls } from '../../protocol/text';
import { useBoardActions } from './actions';
import { Markdown } from './MarkdownView';
import {
  PHASE_MARK_GLYPHS,
  PHASE_MARK_WORDS,
  OUTCOME_LABELS,
  UNCHANGED_TEXT,
  cancelledText,
  cancelledTitle,
  countParts,
  currentPhaseText,
  dispatchedText,
  evidenceFocus,
  evidenceLabel,
  failedTitle,
  greetingTitle,
  ledgerRows,
  ledgerSummary,
  phaseSteps,
  rangeText,
  retryText,
  roundsLead,
  runTitle,
  unchangedTitle,
  workerText,
  type GenerationRef,
  type GenerationsKnown,
  type LedgerRow,
  type RoundsLead,
} from './roundsModel';

export type OpenRoundDiff = (roundId: string, at?: RoundDiffFocus) => void;

export interface RoundsAreaProps {
  rounds: readonly Round[];
  /** The generation shown (for the ledger's generation links); null: none yet. */
  generation: GenerationSnapshot | null;
  onOpenRoundDiff: OpenRoundDiff;
}

/** Nothing at all until the review has a round (absent, never an empty frame). */
export function RoundsArea({ rounds, generation, onOpenRoundDiff }: RoundsAreaProps) {
  const lead = roundsLead(rounds);
  if (!lead) return null;
  const known: GenerationsKnown = {
    shownId: generation?.generationId ?? null,
    shownLive: generation?.status === 'live',
    frozenIds: new Set((generation?.frozen ?? []).map((f) => f.generationId)),
  };
  return (
    <section class="rn-rounds" data-testid="rounds" aria-label="Rounds">
      <Lead lead={lead} onOpenRoundDiff={onOpenRoundDiff} />
      <Ledger rounds={rounds} known={known} onOpenRoundDiff={onOpenRoundDiff} />
    </section>
  );
}

function Lead({ lead, onOpenRoundDiff }: { lead: RoundsLead; onOpenRoundDiff: OpenRoundDiff }) {
  const { round } = lead;
  switch (lead.kind) {
    case 'run':
      return (
        <RunFrame round={round} title={runTitle(round)}>
          <p class="rn-round-now" data-testid="rounds-now" role="status">
            {currentPhaseText(round)}
          </p>
          <p class="rn-muted rn-round-hint">Read from the round’s own record: reopening the panel shows the same run.</p>
        </RunFrame>
      );
    case 'failed':
      return (
        <RunFrame round={round} title={failedTitle(round)}>
          <Failure round={round} />
        </RunFrame>
      );
    case 'cancelled':
      return (
        <RunFrame round={round} title={cancelledTitle(round)}>
          <p class="rn-round-note" data-testid="rounds-cancelled">
            {cancelledText(round)}
          </p>
        </RunFrame>
      );
    case 'unchanged':
      return (
        <div class="rn-round-lead" data-testid="rounds-greeting" data-round-id={round.id} data-state={round.state}>
          <h2 class="rn-round-title">{unchangedTitle(round)}</h2>
          <Facts round={round} />
          <p class="rn-round-note" data-testid="rounds-unchanged">
            {UNCHANGED_TEXT}
          </p>
        </div>
      );
    case 'greeting':
      return (
        <div class="rn-round-lead" data-testid="rounds-greeting" data-round-id={round.id} data-state={round.state}>
          <h2 class="rn-round-title">{greetingTitle(round)}</h2>
          <Facts round={round} />
          {lead.report ? <Report round={round} report={lead.report} onOpenRoundDiff={onOpenRoundDiff} /> : <p class="rn-muted">This round’s report is not in its record.</p>}
          <RoundDiffButton round={round} onOpenRoundDiff={onOpenRoundDiff} />
        </div>
      );
  }
}

/** The run view: the round's phases, each done / current / pending, from its record. */
function RunFrame({ round, title, children }: { round: Round; title: string; children: ComponentChildren }) {
  return (
    <div class="rn-round-lead rn-round-run" data-testid="rounds-run" data-round-id={round.id} data-state={round.state} data-phase={round.phase}>
      <h2 class="rn-round-title">{title}</h2>
      <Facts round={round} />
      <ol class="rn-round-phases" aria-label={`Phases of round ${round.ordinal}`}>
        {phaseSteps(round).map((step) => (
          <li
            key={step.phase}
            class={`rn-round-phase rn-round-phase-${step.mark}`}
            data-testid="rounds-phase"
            data-phase={step.phase}
            data-mark={step.mark}
            aria-current={step.mark === 'current' ? 'step' : undefined}
          >
            <span class="rn-state-icon" aria-hidden="true">
              {PHASE_MARK_GLYPHS[step.mark]}
            </span>{' '}
            <span class="rn-round-phase-label">{step.label}</span> <span class="rn-muted">{PHASE_MARK_WORDS[step.mark]}</span>
          </li>
        ))}
      </ol>
      {children}
    </div>
  );
}

/** Ordinal-level facts: worker, dispatched asks, commit range. */
function Facts({ round }: { round: Round }) {
  const range = rangeText(round);
  return (
    <p class="rn-round-facts rn-muted" data-testid="rounds-facts">
      <span data-fact="worker">{escapeControls(workerText(round.worker))}</span>
      {' · '}
      <span data-fact="asks">{dispatchedText(round)}</span>
      {range && (
        <>
          {' · '}
          <code data-fact="range">{range}</code>
        </>
      )}
    </p>
  );
}

function Failure({ round }: { round: Round }) {
  return (
    <>
      {round.failure && (
        <p class="rn-round-failure" data-testid="rounds-failure" role="alert">
          {escapeControls(round.failure.message)}
        </p>
      )}
      <p class="rn-round-note" data-testid="rounds-retry" data-retryable={round.failure?.retryable ? 'true' : 'false'}>
        {retryText(round)}
      </p>
    </>
  );
}

/** A round's report: its counts, one row per dispatched ask, and what no ask asked for. */
function Report({ round, report, onOpenRoundDiff }: { round: Round; report: RoundReport; onOpenRoundDiff: OpenRoundDiff }) {
  return (
    <div class="rn-round-report" data-testid="rounds-report" data-round-id={round.id}>
      <p class="rn-round-counts" data-testid="rounds-counts">
        {countParts(report).map((part, i) => (
          <span key={part.key} class={`rn-round-count rn-round-count-${part.key}`} data-count={part.key} data-value={String(part.count)}>
            {i > 0 && ' · '}
            {part.text}
          </span>
        ))}
      </p>
      <ul class="rn-round-outcomes">
        {report.outcomes.map((outcome) => (
          <li key={outcome.askId} class="rn-round-outcome" data-testid="rounds-outcome" data-ask-id={outcome.askId} data-outcome={outcome.outcome}>
            <span class={`rn-chip rn-outcome-${outcome.outcome}`} data-testid="rounds-outcome-kind">
              {OUTCOME_LABELS[outcome.outcome]}
            </span>
            <div class="rn-round-ask" data-testid="rounds-ask-text">
              <Markdown text={outcome.askText} citations={false} />
            </div>
            {outcome.note.trim() !== '' && (
              <div class="rn-round-note" data-testid="rounds-note">
                <Markdown text={outcome.note} citations={false} />
              </div>
            )}
            <Evidence round={round} evidence={outcome.evidence} onOpenRoundDiff={onOpenRoundDiff} />
          </li>
        ))}
      </ul>
      {report.beyond.length > 0 && (
        <div class="rn-round-beyond">
          <h3 class="rn-round-subtitle">Beyond the asks</h3>
          <ul class="rn-round-outcomes">
            {report.beyond.map((entry, i) => (
              <li key={i} class="rn-round-outcome" data-testid="rounds-beyond">
                <div class="rn-round-note" data-testid="rounds-note">
                  <Markdown text={entry.note} citations={false} />
                </div>
                <Evidence round={round} evidence={entry.evidence} onOpenRoundDiff={onOpenRoundDiff} />
              </li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}

/** Evidence anchors: each opens the round's own diff at its line, on its side. */
function Evidence({ round, evidence, onOpenRoundDiff }: { round: Round; evidence: RoundReport['outcomes'][number]['evidence']; onOpenRoundDiff: OpenRoundDiff }) {
  if (evidence.length === 0) return null;
  const canOpen = roundHasDiff(round);
  return (
    <p class="rn-round-evidence">
      {evidence.map((e) => {
        const label = escapeControls(evidenceLabel(e));
        const focus = evidenceFocus(e);
        return canOpen ? (
          <button
            key={e.evidenceId}
            type="button"
            class="rn-citation"
            data-testid="rounds-evidence"
            data-path={e.path}
            data-side={focus.side}
            data-line={focus.line === null ? undefined : String(focus.line)}
            title={`Open ${label} in round ${round.ordinal}’s diff`}
            onClick={() => onOpenRoundDiff(round.id, focus)}
          >
            {label}
          </button>
        ) : (
          <code key={e.evidenceId} data-testid="rounds-evidence" data-path={e.path}>
            {label}
          </code>
        );
      })}
    </p>
  );
}

/** Absent when the round committed nothing (no disabled control). */
function RoundDiffButton({ round, onOpenRoundDiff }: { round: Round; onOpenRoundDiff: OpenRoundDiff }) {
  if (!roundHasDiff(round)) return null;
  return (
    <button
      type="button"
      class="rn-chip-button"
      data-testid="round-diff"
      data-round-id={round.id}
      title={`Open round ${round.ordinal}’s own diff (${rangeText(round) ?? ''}), read-only`}
      onClick={() => onOpenRoundDiff(round.id)}
    >
      Open round diff
    </button>
  );
}

function Ledger({ rounds, known, onOpenRoundDiff }: { rounds: readonly Round[]; known: GenerationsKnown; onOpenRoundDiff: OpenRoundDiff }) {
  const rows = ledgerRows(rounds, known);
  return (
    <details class="rn-details rn-rounds-ledger" data-testid="rounds-ledger">
      <summary>{ledgerSummary(rounds)}</summary>
      <ol class="rn-rounds-rows">
        {rows.map((row) => (
          <LedgerRowView key={row.round.id} row={row} onOpenRoundDiff={onOpenRoundDiff} />
        ))}
      </ol>
    </details>
  );
}

function LedgerRowView({ row, onOpenRoundDiff }: { row: LedgerRow; onOpenRoundDiff: OpenRoundDiff }) {
  const [open, setOpen] = useState(false);
  const { round } = row;
  const reportId = `rn-round-report-${round.id}`;
  return (
    <li class="rn-rounds-row" data-testid="rounds-row" data-round-id={round.id} data-ordinal={String(round.ordinal)} data-state={round.state}>
      <div class="rn-rounds-row-head">
        <strong class="rn-rounds-row-title">{row.title}</strong>{' '}
        <span class="rn-chip" data-testid="rounds-row-state">
          {row.state}
        </span>{' '}
        <span class="rn-muted" data-testid="rounds-row-asks">
          {row.asks}
        </span>
        {row.range && (
          <>
            {' · '}
            <code data-testid="rounds-row-range">{row.range}</code>
          </>
        )}
      </div>
      <dl class="rn-rounds-row-facts">
        <div>
          <dt>Worker</dt>
          <dd data-testid="rounds-row-worker">{escapeControls(row.worker)}</dd>
        </div>
        <div>
          <dt>Workspace</dt>
          <dd data-testid="rounds-row-workspace">{escapeControls(row.workspace)}</dd>
        </div>
        {row.generation && (
          <div>
            <dt>Generation</dt>
            <dd data-testid="rounds-row-generation">
              <GenerationLink gen={row.generation} note="minted by this round" />
            </dd>
          </div>
        )}
        {row.earlier && (
          <div>
            <dt>Before it</dt>
            <dd data-testid="rounds-row-earlier">
              <GenerationLink gen={row.earlier} note={row.earlier.frozen ? 'frozen, kept read-only' : 'live when it started'} />
            </dd>
          </div>
        )}
      </dl>
      {round.state === 'failed' && <Failure round={round} />}
      {round.state === 'unchanged' && <p class="rn-muted">{UNCHANGED_TEXT}</p>}
      <div class="rn-rounds-row-actions">
        {row.hasReport && (
          <button type="button" class="rn-link" data-testid="rounds-report-toggle" aria-expanded={open ? 'true' : 'false'} aria-controls={reportId} onClick={() => setOpen(!open)}>
            {open ? 'Hide its report' : 'Read its report'}
          </button>
        )}{' '}
        {row.hasDiff && <RoundDiffButton round={round} onOpenRoundDiff={onOpenRoundDiff} />}
      </div>
      {open && round.report && (
        <div id={reportId}>
          <Report round={round} report={round.report} onOpenRoundDiff={onOpenRoundDiff} />
        </div>
      )}
    </li>
  );
}

function GenerationLink({ gen, note }: { gen: GenerationRef; note: string }) {
  const actions = useBoardActions();
  return (
    <>
      <code title={gen.id}>{escapeControls(gen.short)}</code> <span class="rn-muted">{gen.shown ? `${note}; shown now` : note}</span>
      {gen.select !== undefined && (
        <>
          {' '}
          <button type="button" class="rn-link" data-testid="rounds-select-generation" data-generation-id={gen.id} onClick={() => actions.selectGeneration(gen.select ?? null)}>
            {gen.select === null ? 'Show it (latest)' : 'Show it (read-only)'}
          </button>
        </>
      )}
    </>
  );
}
