/**
 * A generation as the panel shows it: the lens rail, the selected lane's board (a tabpanel), the
 * generation switcher when earlier generations exist (frozen ones are read-only), and one
 * spend/timing line for the whole generation.
 */
import { useMemo } from 'preact/hooks';
import type { GenerationSnapshot, Lens } from '../../protocol';
import { useBoardActions } from './actions';
import { useAskSurface } from './askContext';
import { BoardAsksProvider } from './AskViews';
import { LanePanel } from './Board';
import { PriorItems } from './PriorItems';
import { ExcerptsContext } from './excerpts';
import { openCountOf, openFindingIds } from './openCount';
import { LENS_PANEL_ID, Rail, lensTabId } from './Rail';
import { createdAtText, generationSpendParts, lanesInOrder, selectedLens, shortGenerationId } from './words';

export interface GenerationViewProps {
  snapshot: GenerationSnapshot;
  /** The lens the reviewer chose; null: the default (Flagged when it has a board). */
  lens: Lens | null;
  onSelectLens(lens: Lens): void;
}

export function GenerationView({ snapshot, lens, onSelectLens }: GenerationViewProps) {
  const actions = useBoardActions();
  const lanes = lanesInOrder(snapshot);
  const selected = selectedLens(snapshot, lens);
  const lane = lanes.find((l) => l.lens === selected) ?? lanes[0];
  const frozen = snapshot.status === 'frozen';
  const hasSwitcher = snapshot.frozen.length > 0 || frozen;
  // Derived from the board and the ask log (again only when either changed); unknown until the log is read.
  const projection = useAskSurface()?.projection ?? null;
  const flagged = lanes.find((l) => l.lens === 'flagged');
  const flaggedElements = flagged?.board && flagged.state !== 'failed' ? flagged.board.elements : null;
  // A write that changed no finding's status keeps the key, so the count is not taken again.
  const openIds = useMemo(() => (flaggedElements ? openFindingIds(flaggedElements) : null), [flaggedElements]);
  const openCount = useMemo(
    () => (projection && openIds !== null ? openCountOf(openIds, { sessionId: snapshot.sessionId, generationId: snapshot.generationId }, projection) : null),
    [projection, openIds, snapshot.sessionId, snapshot.generationId],
  );
  // The spend line reads only spend and timings, which a seat's write to a board leaves as they were.
  const spendLine = useMemo(() => generationSpendParts({ spend: snapshot.spend, timings: snapshot.timings }), [snapshot.spend, snapshot.timings]);
  return (
    <BoardAsksProvider snapshot={snapshot}>
      <section class="rn-generation" data-testid="generation" data-generation-id={snapshot.generationId} data-status={snapshot.status} aria-label="Lens boards">
        <div class="rn-gen-bar">
          <Rail lanes={lanes} selected={selected} onSelect={onSelectLens} openCounts={openCount === null ? {} : { flagged: openCount }} />
          {hasSwitcher && <GenerationSwitcher snapshot={snapshot} />}
        </div>
        {frozen && (
          <p class="rn-banner rn-banner-info" data-testid="frozen-note" role="note">
            <strong class="rn-banner-label">Read-only</strong> An earlier generation of this review, kept as it was drafted.{' '}
            <button type="button" class="rn-link" data-testid="show-live" onClick={() => actions.selectGeneration(null)}>
              Show the latest
            </button>
          </p>
        )}
        {lane && (
          <div class="rn-tabpanel" role="tabpanel" id={LENS_PANEL_ID} aria-labelledby={lensTabId(lane.lens)}>
            <ExcerptsContext.Provider value={snapshot.excerpts ?? null}>
              {lane.lens === 'flagged' && snapshot.priorReview && <PriorItems prior={snapshot.priorReview} />}
              <LanePanel
                key={`${snapshot.generationId}:${lane.lens}`}
                lane={lane}
                spend={snapshot.spend.filter((s) => s.lens === lane.lens)}
                readOnly={frozen}
                openCount={lane.lens === 'flagged' ? openCount : null}
              />
            </ExcerptsContext.Provider>
          </div>
        )}
        <p class="rn-spend rn-muted" data-testid="generation-spend">
          <span class="rn-spend-label">
            Generation <code title={snapshot.generationId}>{shortGenerationId(snapshot.generationId)}</code>
          </span>
          {spendLine.map((part) => (
            <span key={part.key} class="rn-spend-part" data-part={part.key} title={part.title}>
              {' · '}
              {part.text}
            </span>
          ))}
        </p>
      </section>
    </BoardAsksProvider>
  );
}

function GenerationSwitcher({ snapshot }: { snapshot: GenerationSnapshot }) {
  const actions = useBoardActions();
  const value = snapshot.status === 'frozen' ? snapshot.generationId : '';
  const options = [
    {
      value: '',
      label: snapshot.status === 'live' ? `Latest (${shortGenerationId(snapshot.generationId)})` : 'Latest',
    },
    ...snapshot.frozen
      .filter((f) => f.generationId !== '' && !(snapshot.status === 'live' && f.generationId === snapshot.generationId))
      .map((f) => ({ value: f.generationId, label: `${createdAtText(f.createdAt)} · ${shortGenerationId(f.generationId)} (read-only)` })),
  ];
  if (value && !options.some((o) => o.value === value)) {
    options.push({ value, label: `${shortGenerationId(value)} (read-only)` });
  }
  return (
    <label class="rn-gen-switch">
      <span class="rn-field-label">Generation</span>
      <select
        class="rn-select"
        data-testid="generation-switcher"
        value={value}
        onChange={(event) => {
          const next = (event.currentTarget as HTMLSelectElement).value;
          actions.selectGeneration(next === '' ? null : next);
        }}
      >
        {options.map((option) => (
          <option key={option.value} value={option.value} selected={option.value === value}>
            {option.label}
          </option>
        ))}
      </select>
    </label>
  );
}
