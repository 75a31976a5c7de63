import { readFileSync } from 'node:fs';
import { parseHarnessScript, scriptedAssignment } from '../harness/scripted';
import type { HarnessAssignment } from '../pipeline/types';

/**
 * `rennet review --harness NAME|auto|scripted:<file>`: which harness drafts the lanes.
 *
 * - `auto` (the default): discovery of an installed model harness. Discovery is not built yet,
 *   so auto finds none: every lane that needs a model settles as a typed failure naming what is
 *   missing (AUTO_HINT says how to configure one); host-settled lanes (Design from a
 *   specification, spec-only, no-noise) still settle.
 * - `scripted:<file>`: the scripted harness playing a recorded JSON script (host/harness/README.md).
 */

export type HarnessChoice = { kind: 'auto' } | { kind: 'scripted'; file: string };

export const HARNESS_NAMES = ['auto', 'scripted:<file>'] as const;

/** Appended to each "no model harness is configured" failure under auto. */
export const AUTO_HINT =
  'auto discovery found none on this machine; pass --harness scripted:FILE to play a recorded script';

/** A bad --harness value: a usage error (exit 2). */
export class HarnessChoiceError extends Error {}

/** A script that cannot be read or parsed: refused (exit 1). */
export class HarnessLoadError extends Error {}

export function parseHarnessChoice(value: string | undefined): HarnessChoice {
  if (value === undefined || value === 'auto') return { kind: 'auto' };
  if (value === 'scripted' || value === 'scripted:') throw new HarnessChoiceError('--harness scripted needs a script file: --harness scripted:FILE');
  if (value.startsWith('scripted:')) return { kind: 'scripted', file: value.slice('scripted:'.length) };
  throw new HarnessChoiceError(`unknown harness "${value}" (one of ${HARNESS_NAMES.join(', ')})`);
}

/** The pipeline's assignment for a choice. Reads and parses a script now, before anything is captured. */
export function loadHarnessAssignment(choice: HarnessChoice): HarnessAssignment {
  if (choice.kind === 'auto') {
    return { design: null, sequence: null, decisions: null, noise: null, flagged: { reviewers: [], compiler: null }, missingHint: AUTO_HINT };
  }
  let text: string;
  try {
    text = readFileSync(choice.file, 'utf8');
  } catch (error) {
    throw new HarnessLoadError(`cannot read the harness script ${choice.file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  let script: unknown;
  try {
    script = parseHarnessScript(JSON.parse(text) as unknown);
  } catch (error) {
    throw new HarnessLoadError(`${choice.file} is not a harness script: ${(error as Error).message}`);
  }
  const { harnesses: _harnesses, ...assignment } = scriptedAssignment(script);
  return { ...assignment, missingHint: `the script ${choice.file} has no seat for it` };
}
