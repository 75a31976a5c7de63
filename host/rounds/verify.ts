import type { z } from 'zod';
import { err, ok, type Result } from '../../protocol/result';
import {
  Classification,
  REPORT_BEYOND_MAX_ENTRIES,
  REPORT_RESPONSE_MAX_BYTES,
  RoundReport as RoundReportSchema,
  type EvidenceUnit,
  type ReportEvidence,
  type ReportRefusal,
  type RoundReport,
} from '../../protocol/rounds';
import { canonicalJson } from '../capture/ids';

/**
 * PURE. The verifier: a classification handed in by the report seat becomes a RoundReport only
 * when every claim checks out against the evidence manifest (the measured diff). The seat cites
 * evidence ids and nothing else; every path, side and line in the report is derived here from the
 * manifest. The report is built deterministically: outcomes in dispatch order, evidence in
 * manifest order, beyond entries by their first evidence. A refusal keeps nothing.
 *
 * Checks run in a fixed order, so one defect always gives one reason: size, shape, the beyond
 * count, the asks (unknown, duplicate, missing), the partition of the manifest's ids (unknown,
 * duplicate, unaccounted), then each outcome's own rule (untouched cites nothing; addressed and
 * partial cite a text hunk).
 */

export interface ReportVerificationFailure {
  reason: ReportRefusal;
  message: string;
  detail?: Record<string, string>;
}

/** A dispatched ask as the verifier needs it: its id and exact text. */
export interface DispatchedAsk {
  id: string;
  text: string;
}

export interface VerifyClassificationInput {
  roundId: string;
  successorPatchsetId: string;
  manifest: readonly EvidenceUnit[];
  /** In dispatch (work-order) order: the report's outcome order. */
  asks: readonly DispatchedAsk[];
  /** What the seat handed in: an object, or its JSON text. */
  raw: unknown;
  /** The size of what was handed in, in UTF-8 bytes, when the caller measured it at the wire. */
  rawBytes?: number;
}

type VerifyResult = Result<RoundReport, ReportVerificationFailure>;

/** Seat-supplied strings (ask and evidence ids) are named in messages, but never at length. */
const NAMED_MAX_CHARS = 80;
const ISSUE_MESSAGE_MAX_CHARS = 200;

function named(value: string): string {
  return value.length > NAMED_MAX_CHARS ? `${value.slice(0, NAMED_MAX_CHARS)}…` : value;
}

function refuse(reason: ReportRefusal, message: string, detail?: Record<string, string>): VerifyResult {
  return err(detail ? { reason, message, detail } : { reason, message });
}

export function verifyClassification(input: VerifyClassificationInput): VerifyResult {
  const measured = handedInBytes(input.raw);
  if (measured === null) return refuse('invalid-shape', 'The classification cannot be read as JSON.');
  const bytes = Math.max(measured, input.rawBytes ?? 0);
  if (bytes > REPORT_RESPONSE_MAX_BYTES) {
    return refuse('too-large', `The classification is ${bytes} bytes; at most ${REPORT_RESPONSE_MAX_BYTES} are accepted.`, {
      bytes: String(bytes),
      limit: String(REPORT_RESPONSE_MAX_BYTES),
    });
  }
  let value: unknown = input.raw;
  if (typeof input.raw === 'string') {
    try {
      value = JSON.parse(input.raw) as unknown;
    } catch {
      // JSON.parse's own message quotes the input; it is not repeated.
      return refuse('invalid-shape', 'The classification is not valid JSON.');
    }
  }
  const parsed = Classification.safeParse(value);
  if (!parsed.success) return refuse('invalid-shape', ...describeIssue(parsed.error));
  return buildReport(parsed.data, input);
}

/**
 * Re-verify a stored report (the recovery path) against a manifest rebuilt from the same diff:
 * the report must be for this successor patchset, its citations must pass every check a fresh
 * classification passes, and it must equal, field for field, the report those citations build.
 * A cited unit whose path, side or line is not what the manifest derives is refused
 * 'unknown-evidence' (the report cites evidence the manifest does not have); an ask text that is
 * not the dispatched text, 'unknown-ask'; any other difference (order, counts, notes), 'invalid-shape'.
 */
export function reverifyReport(report: RoundReport, manifest: readonly EvidenceUnit[], asks: readonly DispatchedAsk[], successorPatchsetId: string): VerifyResult {
  const stored = RoundReportSchema.safeParse(report);
  if (!stored.success) return refuse('invalid-shape', ...describeIssue(stored.error));
  const given = stored.data;
  if (given.successorPatchsetId !== successorPatchsetId) {
    return refuse('stale-patchset', `The report was verified against patchset ${named(given.successorPatchsetId)}, not the round's successor ${successorPatchsetId}.`, {
      reported: given.successorPatchsetId,
      expected: successorPatchsetId,
    });
  }
  const classification: Classification = {
    outcomes: given.outcomes.map((o) => ({ askId: o.askId, outcome: o.outcome, evidenceIds: o.evidence.map((e) => e.evidenceId), note: o.note })),
    beyond: given.beyond.map((b) => ({ evidenceIds: b.evidence.map((e) => e.evidenceId), note: b.note })),
  };
  const rebuilt = verifyClassification({ roundId: given.roundId, successorPatchsetId, manifest, asks, raw: classification });
  if (!rebuilt.ok) return rebuilt;
  const difference = firstDifference(given, rebuilt.value);
  return difference ? err(difference) : rebuilt;
}

// ─── Building ────────────────────────────────────────────────────────────────────────────────

function buildReport(classification: Classification, input: VerifyClassificationInput): VerifyResult {
  const { manifest, asks } = input;

  if (classification.beyond.length > REPORT_BEYOND_MAX_ENTRIES) {
    return refuse('too-many-beyond', `The classification has ${classification.beyond.length} beyond entries; at most ${REPORT_BEYOND_MAX_ENTRIES} are accepted.`, {
      entries: String(classification.beyond.length),
      limit: String(REPORT_BEYOND_MAX_ENTRIES),
    });
  }

  // Asks: each dispatched ask exactly once, and nothing else.
  const dispatched = new Map(asks.map((ask) => [ask.id, ask]));
  const outcomeOf = new Map<string, Classification['outcomes'][number]>();
  for (const outcome of classification.outcomes) {
    if (!dispatched.has(outcome.askId)) {
      return refuse('unknown-ask', `The classification has an outcome for ask ${named(outcome.askId)}, which this round did not dispatch.`, {
        askId: named(outcome.askId),
      });
    }
    if (outcomeOf.has(outcome.askId)) {
      return refuse('duplicate-ask', `The classification has two outcomes for ask ${outcome.askId}.`, { askId: outcome.askId });
    }
    outcomeOf.set(outcome.askId, outcome);
  }
  for (const ask of asks) {
    if (!outcomeOf.has(ask.id)) return refuse('missing-ask', `The classification has no outcome for ask ${ask.id}.`, { askId: ask.id });
  }

  // Evidence: the cited ids partition the manifest (each id in exactly one list, once).
  const position = new Map(manifest.map((unit, index) => [unit.id, index]));
  const citedBy = new Map<string, string>();
  const lists: Array<{ owner: string; ids: readonly string[] }> = [
    ...classification.outcomes.map((o) => ({ owner: `ask ${o.askId}`, ids: o.evidenceIds })),
    ...classification.beyond.map((b, index) => ({ owner: `beyond entry ${index + 1}`, ids: b.evidenceIds })),
  ];
  for (const { owner, ids } of lists) {
    for (const id of ids) {
      if (!position.has(id)) {
        return refuse('unknown-evidence', `${capitalize(owner)} cites evidence ${named(id)}, which is not in the round's manifest.`, {
          evidenceId: named(id),
        });
      }
      const earlier = citedBy.get(id);
      if (earlier !== undefined) {
        const where = earlier === owner ? `${owner} cites it twice` : `it is cited by ${earlier} and by ${owner}`;
        return refuse('duplicate-evidence', `Evidence ${id} is accounted for more than once: ${where}.`, { evidenceId: id });
      }
      citedBy.set(id, owner);
    }
  }
  for (const unit of manifest) {
    if (!citedBy.has(unit.id)) {
      return refuse('unaccounted-evidence', `Evidence ${unit.id} (${unit.kind} of ${unit.path}) is in no outcome and no beyond entry; every unit of the diff must be accounted for.`, {
        evidenceId: unit.id,
      });
    }
  }

  // Each outcome's own rule.
  const unitOf = new Map(manifest.map((unit) => [unit.id, unit]));
  for (const outcome of classification.outcomes) {
    if (outcome.outcome === 'untouched' && outcome.evidenceIds.length > 0) {
      return refuse('untouched-with-evidence', `Ask ${outcome.askId} is classified untouched but cites ${outcome.evidenceIds.length} evidence unit(s); an untouched ask cites none.`, {
        askId: outcome.askId,
      });
    }
    if (outcome.outcome !== 'untouched' && !outcome.evidenceIds.some((id) => unitOf.get(id)?.kind === 'text-hunk')) {
      return refuse(
        'no-line-evidence',
        `Ask ${outcome.askId} is classified ${outcome.outcome} but cites no changed lines (no text hunk); a rename, mode change or binary change has no line to stand on.`,
        { askId: outcome.askId },
      );
    }
  }

  const evidenceOf = (ids: readonly string[]): ReportEvidence[] => [...ids].sort((a, b) => (position.get(a) ?? 0) - (position.get(b) ?? 0)).map((id) => reportEvidence(unitOf.get(id) as EvidenceUnit));

  const outcomes: RoundReport['outcomes'] = asks.map((ask) => {
    const outcome = outcomeOf.get(ask.id) as Classification['outcomes'][number];
    return { askId: ask.id, askText: ask.text, outcome: outcome.outcome, evidence: evidenceOf(outcome.evidenceIds), note: outcome.note.trim() };
  });
  const firstPosition = (ids: readonly string[]): number => Math.min(...ids.map((id) => position.get(id) ?? 0));
  const beyond: RoundReport['beyond'] = [...classification.beyond]
    .sort((a, b) => firstPosition(a.evidenceIds) - firstPosition(b.evidenceIds))
    .map((entry) => ({ evidence: evidenceOf(entry.evidenceIds), note: entry.note.trim() }));
  const count = (kind: RoundReport['outcomes'][number]['outcome']): number => outcomes.filter((o) => o.outcome === kind).length;

  return ok({
    roundId: input.roundId,
    successorPatchsetId: input.successorPatchsetId,
    outcomes,
    beyond,
    counts: { addressed: count('addressed'), partial: count('partial'), untouched: count('untouched'), beyond: beyond.length },
  });
}

/** A unit as a report cites it: only a text hunk has a side and line (its anchor). */
export function reportEvidence(unit: EvidenceUnit): ReportEvidence {
  return unit.kind === 'text-hunk'
    ? { evidenceId: unit.id, kind: unit.kind, path: unit.path, side: unit.anchor.side, line: unit.anchor.line }
    : { evidenceId: unit.id, kind: unit.kind, path: unit.path, side: null, line: null };
}

// ─── Helpers ─────────────────────────────────────────────────────────────────────────────────

/** UTF-8 bytes of what was handed in (a string as is, anything else as its JSON); null: not serializable. */
function handedInBytes(raw: unknown): number | null {
  if (typeof raw === 'string') return Buffer.byteLength(raw, 'utf8');
  try {
    const text = JSON.stringify(raw) as string | undefined;
    return text === undefined ? 0 : Buffer.byteLength(text, 'utf8');
  } catch {
    return null;
  }
}

/** The first issue's path and message; zod's messages name what was expected, never the value given. */
function describeIssue(error: z.ZodError): [string, Record<string, string>] {
  const issue = error.issues[0];
  if (!issue) return ['The classification does not have the expected shape.', {}];
  const path = issue.path.length > 0 ? issue.path.map(String).join('.') : '(top level)';
  const message = issue.message.length > ISSUE_MESSAGE_MAX_CHARS ? `${issue.message.slice(0, ISSUE_MESSAGE_MAX_CHARS)}…` : issue.message;
  return [`The classification does not have the expected shape at ${path}: ${message}.`, { path }];
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Where a stored report departs from the report its citations build, as a refusal; null: equal. */
function firstDifference(stored: RoundReport, rebuilt: RoundReport): ReportVerificationFailure | null {
  const storedEvidence = [...stored.outcomes.flatMap((o) => o.evidence), ...stored.beyond.flatMap((b) => b.evidence)];
  const derived = new Map([...rebuilt.outcomes.flatMap((o) => o.evidence), ...rebuilt.beyond.flatMap((b) => b.evidence)].map((e) => [e.evidenceId, e]));
  for (const cited of storedEvidence) {
    const expected = derived.get(cited.evidenceId);
    if (expected && canonicalJson(expected) !== canonicalJson(cited)) {
      const at = (e: ReportEvidence): string => `${e.kind} of ${e.path}${e.side === null ? '' : ` at ${e.side}:${e.line}`}`;
      return {
        reason: 'unknown-evidence',
        message: `The report cites evidence ${cited.evidenceId} as ${at(cited)}, but the manifest derives ${at(expected)}.`,
        detail: { evidenceId: cited.evidenceId },
      };
    }
  }
  const textOf = new Map(rebuilt.outcomes.map((o) => [o.askId, o.askText]));
  for (const outcome of stored.outcomes) {
    if (textOf.get(outcome.askId) !== outcome.askText) {
      return { reason: 'unknown-ask', message: `The report's text for ask ${outcome.askId} is not the text that was dispatched.`, detail: { askId: outcome.askId } };
    }
  }
  if (canonicalJson(stored) !== canonicalJson(rebuilt)) {
    return {
      reason: 'invalid-shape',
      message: 'The report is not the report its citations build (its order, notes, counts or round differ).',
    };
  }
  return null;
}
