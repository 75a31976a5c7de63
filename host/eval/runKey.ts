import { createHash } from 'node:crypto';
import type { EvalCase, EvalHarnessSettings } from '../../protocol/eval';

/**
 * Identities of a run's inputs (pure): canonical JSON (keys sorted, so formatting and key order do
 * not matter) and the sha256 digests built from it.
 */

export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = sortKeys(v);
    }
    return out;
  }
  return value;
}

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
