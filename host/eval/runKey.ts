import { createHash } from 'node:crypto';
import type { EvalCase, EvalHarnessSettings } from '../../protocol/eval';
import { canonicalJson } from '../capture/ids';

export { canonicalJson };

/**
 * Identities of a run's inputs (pure): sha256 digests over the one canonical JSON (host/capture/ids.ts:
 * keys sorted, so formatting and key order do not matter).
 */

export function sha256(text: string | Uint8Array): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The corpus digest two runs must share to be compared. */
export function casesDigest(cases: readonly EvalCase[]): string {
  return sha256(canonicalJson(cases));
}

/**
 * A case result's key: the case, the repository it is reviewed in and the harness settings. A
 * result file with another key is of another question and is reviewed again.
 */
export function caseKey(evalCase: EvalCase, repo: string, settings: EvalHarnessSettings): string {
  return sha256(canonicalJson({ case: evalCase, repo, settings }));
}
