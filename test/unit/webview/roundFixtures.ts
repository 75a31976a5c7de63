/**
 * Round records for the panel's rounds area tests, in the shape the host's ledger folds them
 * (protocol/rounds.ts `Round`), checked with the schema so a fixture cannot drift from the contract.
 */
import { Round, type RoundReport } from '../../../protocol';

let evidenceSeq = 0;
/** A well-formed evidence id (`ev-` and 16 hex), fresh each call. */
export function evidenceId(): string {
  evidenceSeq++;
  return `ev-${evidenceSeq.toString(16).padStart(16, '0')}`;
}

export const FROM = '1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d';
export const TO = '9f8e7d6c5b4a39281706f5e4d3c2b1a098f7e6d5';

export function report(
  roundId: string,
  outcomes: Array<{ askId: string; askText: string; outcome: 'addressed' | 'partial' | 'untouched'; note?: string; path?: string; line?: number; side?: 'base' | 'head' }>,
  beyond: RoundReport['beyond'] = [],
): RoundReport {
  const rows = outcomes.map((o) => ({
    askId: o.askId,
    askText: o.askText,
    outcome: o.outcome,
    note: o.note ?? '',
    evidence: o.outcome === 'untouched' ? [] : [{ evidenceId: evidenceId(), kind: 'text-hunk' as const, path: o.path ?? 'src/app.js', side: o.side ?? ('head' as const), line: o.line ?? 3 }],
  }));
  const count = (k: string) => rows.filter((r) => r.outcome === k).length;
  return {
    roundId,
    successorPatchsetId: `ps-${roundId}`,
    outcomes: rows,
    beyond,
    counts: { addressed: count('addressed'), partial: count('partial'), untouched: count('untouched'), beyond: beyond.length },
  };
}

export function round(over: Partial<Round> & { ordinal: number }): Round {
  const id = over.id ?? `r-${over.ordinal}`;
  return Round.parse({
    id,
    sessionId: 's-1',
    asks: ['ask-1', 'ask-2'],
    workOrderDigest: 'digest',
    worker: { kind: 'claude-code', version: '2.1.3' },
    workspace: { root: '/work/repo', branch: 'feature' },
    fromPatchsetId: `ps-before-${id}`,
    fromGenerationId: `g-before-${id}`,
    startedAt: '2025-03-01T10:00:00Z',
    phase: 'worker',
    state: 'running',
    failure: null,
    range: null,
    diff: null,
    successorPatchsetId: null,
    report: null,
    generationId: null,
    endedAt: null,
    ...over,
  });
}

/** A returned round with its report, range and successor generation. */
export function returned(ordinal: number, askText = `the ask of round ${ordinal}`, over: Partial<Round> = {}): Round {
  const id = over.id ?? `r-${ordinal}`;
  return round({
    ordinal,
    id,
    state: 'returned',
    phase: 'regeneration',
    asks: [`ask-${ordinal}`],
    range: { from: FROM, to: TO },
    diff: { files: 1, additions: 2, deletions: 1 },
    successorPatchsetId: `ps-${id}`,
    generationId: `g-${id}`,
    fromGenerationId: ordinal === 1 ? 'g-first' : `g-r-${ordinal - 1}`,
    report: report(id, [{ askId: `ask-${ordinal}`, askText, outcome: 'addressed', note: `note of round ${ordinal}`, line: ordinal }]),
    endedAt: '2025-03-01T10:05:00Z',
    ...over,
  });
}
