/**
 * The lens rail: one tab per lens in canonical order, from the moment a generation exists, each
 * with its seat state in words and a glyph. A running lens is selectable (never disabled); a tab
 * never disappears. Roving tabindex: arrow keys, Home and End move along the rail and select.
 */
import { Fragment } from 'preact';
import { useRef } from 'preact/hooks';
import { LENS_TITLES, type Lens, type LaneView } from '../../protocol';
import { rovingIndex } from './Elements';
import { openCountText } from './openCount';
import { LANE_STATE_ICONS, LANE_STATE_LABELS, NOISE_WAITING_EXPLANATION, laneDeltaWords, laneStateTitle } from './words';

export const LENS_PANEL_ID = 'rn-lens-panel';
export const NOISE_WAITING_ID = 'rn-noise-waiting';

export function lensTabId(lens: Lens): string {
  return `rn-lens-tab-${lens}`;
}

export interface RailProps {
  lanes: readonly LaneView[];
  selected: Lens;
  onSelect(lens: Lens): void;
  /** Counts of open items per lens (Flagged: open findings), derived by the caller; absent: not shown. */
  openCounts?: Partial<Record<Lens, number>>;
}

export function Rail({ lanes, selected, onSelect, openCounts = {} }: RailProps) {
  const tabs = useRef<(HTMLButtonElement | null)[]>([]);
  const noiseWaiting = lanes.some((lane) => lane.lens === 'noise' && lane.state === 'waiting');
  return (
    <div class="rn-rail-wrap">
      <div class="rn-rail" role="tablist" aria-label="Lenses" aria-orientation="horizontal" data-testid="lens-rail">
        {lanes.map((lane, index) => {
          const isSelected = lane.lens === selected;
          const describe = lane.lens === 'noise' && lane.state === 'waiting';
          const open = openCounts[lane.lens];
          // A round successor's settled lane reads what its re-draft found, from the composition's stamps.
          const delta = lane.delta && (lane.state === 'settled' || lane.state === 'absent') ? laneDeltaWords(lane.delta) : null;
          return (
            <Fragment key={lane.lens}>
              <button
                ref={(el) => {
                  tabs.current[index] = el;
                }}
                type="button"
                role="tab"
                id={lensTabId(lane.lens)}
                class={`rn-tab rn-tab-${lane.state}${isSelected ? ' rn-tab-selected' : ''}${describe ? ' rn-tab-described' : ''}`}
                data-testid="lens-tab"
                data-lens={lane.lens}
                data-state={lane.state}
                aria-selected={isSelected ? 'true' : 'false'}
                aria-controls={LENS_PANEL_ID}
                aria-describedby={describe ? NOISE_WAITING_ID : undefined}
                tabIndex={isSelected ? 0 : -1}
                title={delta ? `${laneStateTitle(lane.lens, lane.state)} ${delta.title}` : laneStateTitle(lane.lens, lane.state)}
                onClick={() => onSelect(lane.lens)}
                onKeyDown={(event: KeyboardEvent) => {
                  const next = rovingIndex(event.key, index, lanes.length);
                  if (next === null) return;
                  event.preventDefault();
                  const lens = lanes[next]?.lens;
                  if (!lens) return;
                  onSelect(lens);
                  tabs.current[next]?.focus();
                }}
              >
                <span class="rn-tab-title">{LENS_TITLES[lane.lens]}</span>{' '}
                <span class={`rn-tab-state rn-state-${lane.state}`} data-testid="lens-tab-state">
                  <span class={`rn-state-icon${lane.state === 'working' ? ' rn-spin' : ''}`} aria-hidden="true">
                    {LANE_STATE_ICONS[lane.state]}
                  </span>{' '}
                  {LANE_STATE_LABELS[lane.state]}
                </span>
                {delta && (
                  <>
                    {' '}
                    <span class={`rn-tab-delta rn-tab-delta-${lane.delta?.verdict}`} data-testid="lens-tab-delta" data-verdict={lane.delta?.verdict}>
                      {lane.delta?.verdict === 'reworked' && (
                        <span class="rn-delta-dot" aria-hidden="true">
                          •
                        </span>
                      )}
                      {delta.label}
                    </span>
                  </>
                )}
                {open !== undefined && (
                  <>
                    {' '}
                    <span class="rn-tab-count" data-testid="open-count" data-count={String(open)}>
                      {openCountText(open)}
                    </span>
                  </>
                )}
              </button>
            </Fragment>
          );
        })}
      </div>
      {noiseWaiting && (
        <p role="tooltip" id={NOISE_WAITING_ID} class="rn-tooltip" data-testid="noise-waiting-explanation">
          {NOISE_WAITING_EXPLANATION}
        </p>
      )}
    </div>
  );
}
