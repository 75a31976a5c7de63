import type { Target } from '../protocol';
import { ui, type UiText } from './uiText';

/** Title of a board panel: `Rennet · <head> vs <base>` or `Rennet · working tree vs <base>`. */
export function panelTitle(target: Target): UiText {
  return target.kind === 'branch' ? ui`Rennet · ${target.head} vs ${target.base}` : ui`Rennet · working tree vs ${target.base}`;
}

/** Progress title while a target is captured. */
export function captureTitle(target: Target, currentBranch?: string | null): UiText {
  if (target.kind === 'branch') return ui`Rennet: capturing ${target.head} against ${target.base}…`;
  return currentBranch
    ? ui`Rennet: capturing the working tree of ${currentBranch} against ${target.base}…`
    : ui`Rennet: capturing the working tree against ${target.base}…`;
}

/** One line naming a target for pickers and messages. */
export function targetLabel(target: Target): UiText {
  return target.kind === 'branch' ? ui`${target.head} vs ${target.base}` : ui`working tree vs ${target.base}`;
}
