import { pullRequestLabel, type Target } from '../protocol';
import { ui, type UiText } from './uiText';

/** Title of a board panel: `Rennet · <head> vs <base>`, `Rennet · working tree vs <base>`, `Rennet · Pull Request #12`. */
export function panelTitle(target: Target): UiText {
  if (target.kind === 'pull-request') return ui`Rennet · ${pullRequestLabel(target)} · ${target.owner}/${target.repo}`;
  return target.kind === 'branch' ? ui`Rennet · ${target.head} vs ${target.base}` : ui`Rennet · working tree vs ${target.base}`;
}

/** Progress title while a target is captured. */
export function captureTitle(target: Target, currentBranch?: string | null): UiText {
  if (target.kind === 'branch') return ui`Rennet: capturing ${target.head} against ${target.base}…`;
  if (target.kind === 'pull-request') return ui`Rennet: fetching and capturing ${pullRequestLabel(target)} of ${target.owner}/${target.repo}…`;
  return currentBranch ? ui`Rennet: capturing the working tree of ${currentBranch} against ${target.base}…` : ui`Rennet: capturing the working tree against ${target.base}…`;
}

/** One line naming a target for pickers and messages. */
export function targetLabel(target: Target): UiText {
  if (target.kind === 'pull-request') return ui`${pullRequestLabel(target)} · ${target.owner}/${target.repo}`;
  return target.kind === 'branch' ? ui`${target.head} vs ${target.base}` : ui`working tree vs ${target.base}`;
}
