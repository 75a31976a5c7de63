import type { Target } from '../protocol';

/** Title of a board panel: `Rennet · <head> vs <base>` or `Rennet · working tree vs <base>`. */
export function panelTitle(target: Target): string {
  return target.kind === 'branch'
    ? `Rennet · ${target.head} vs ${target.base}`
    : `Rennet · working tree vs ${target.base}`;
}

/** Progress title while a target is captured. */
export function captureTitle(target: Target, currentBranch?: string | null): string {
  return target.kind === 'branch'
    ? `Rennet: capturing ${target.head} against ${target.base}…`
    : `Rennet: capturing the working tree${currentBranch ? ` of ${currentBranch}` : ''} against ${target.base}…`;
}

/** One line naming a target for pickers and messages. */
export function targetLabel(target: Target): string {
  return target.kind === 'branch' ? `${target.head} vs ${target.base}` : `working tree vs ${target.base}`;
}
