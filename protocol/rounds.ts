import { z } from 'zod';
import { AskIntent, AskKeyPart } from './asks';
import { CitationSide } from './board';
import { FileStatus, Side } from './patchset';

/**
 * Rounds: the own-branch loop. The reviewer's coding asks go out as one work order to a coding
 * worker in the session's bound workspace; the round measures what changed between two
 * checkpoints (never from the worker's account), a classification seat maps that measured change
 * onto the asks through an evidence manifest, the host verifies every claim against the measured
 * diff, and a successor generation is drafted over the new head.
 *
 * What lives here: the limits (named once), the evidence manifest and the classification the
 * report seat hands in, the verified report, the round record and its durable events, the scripted
 * worker's file format. host/rounds/ implements them.
 */

// ─── Limits ──────────────────────────────────────────────────────────────────────────────────

/** The serialized evidence manifest (one serializer, UTF-8 bytes) the classifier may receive. Over it: a typed failure, no model call. */
export const EVIDENCE_MANIFEST_MAX_BYTES = 262_144;
/** Evidence units the classifier may receive. Over it: a typed failure, no model call. */
export const EVIDENCE_MANIFEST_MAX_ENTRIES = 400;
/** The classification's size as handed in (UTF-8 bytes of its JSON); over it the report is refused. */
export const REPORT_RESPONSE_MAX_BYTES = 131_072;
/** Output tokens the classification turn asks its provider for, where the harness can say so. */
export const REPORT_OUTPUT_TOKENS_MAX = 32_768;
/** Entries of the `beyond` bucket (work the worker did that no ask asked for). */
export const REPORT_BEYOND_MAX_ENTRIES = 100;
/** Characters of the note on one outcome. */
export const REPORT_NOTE_MAX_CHARS = 2_000;
/** Hex characters after `ev-` in an evidence id. */
export const EVIDENCE_ID_HEX_LENGTH = 16;
/** The work order's file in the session's context directory (`.rennet/context/<session>/`). */
export const WORK_ORDER_FILE = 'work-order.md';
/** The classifier's input file in the session's context directory. */
export const EVIDENCE_FILE = 'evidence.json';
/** Session-log event kinds of a round all start with this (`round.started`, `round.phase`, …). */
export const ROUND_EVENT_PREFIX = 'round.';
/** Hidden refs that hold a round's checkpoints while its diff is collected. */
export const CHECKPOINT_REF_PREFIX = 'refs/rennet/checkpoints/';

/** The intents a worker turns into code. Questions and approvals are never coding work. */
export const CODING_INTENTS = ['request-change', 'comment'] as const satisfies readonly AskIntent[];
export function isCodingIntent(intent: AskIntent): boolean {
  return (CODING_INTENTS as readonly AskIntent[]).includes(intent);
}

// ─── Dispatch refusals (depth-blind: none names a round count) ───────────────────────────────

export const DispatchRefusal = z.enum([
  /** A teammate's request (its exit is Post review) or a retrospective review: there is no round lane. */
  'no-round-lane',
  /** Nothing is staged for the Changes lane. */
  'nothing-staged',
  /** Only questions and approvals are staged: they compose no task, and stay staged. */
  'no-coding-asks',
]);
export type DispatchRefusal = z.infer<typeof DispatchRefusal>;

// ─── The evidence manifest ───────────────────────────────────────────────────────────────────

export const EvidenceId = z.string().regex(/^ev-[0-9a-f]{16}$/, 'not an evidence id (ev- and 16 hex)');

/**
 * One unit of the round's measured diff. Ordered by path (code-unit order), then kind (rename,
 * mode-change, binary, text-hunk), then position in the file. The id is `ev-` + 16 hex of SHA-256
 * over (kind, path, identity): the verbatim hunk (header and body), the mode pair, the previous
 * path, or the change status. Only a text hunk has a line anchor: its first added line (head
 * side), or its first deleted line (base side) when it only removes.
 */
export const EvidenceUnit = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('rename'), id: EvidenceId, path: z.string(), previousPath: z.string() }),
  z.object({ kind: z.literal('mode-change'), id: EvidenceId, path: z.string(), oldMode: z.string(), newMode: z.string() }),
  z.object({ kind: z.literal('binary'), id: EvidenceId, path: z.string(), status: z.enum(['added', 'modified', 'deleted', 'renamed']) }),
  z.object({
    kind: z.literal('text-hunk'),
    id: EvidenceId,
    path: z.string(),
    /** The verbatim @@ line. */
    header: z.string(),
    /** The hunk's lines, each with its marker (`+`, `-`, space), joined by `\n`. */
    body: z.string(),
    anchor: z.object({ side: CitationSide, line: z.number().int().positive() }),
  }),
]);
export type EvidenceUnit = z.infer<typeof EvidenceUnit>;
export const EVIDENCE_KIND_ORDER = ['rename', 'mode-change', 'binary', 'text-hunk'] as const;

/** A dispatched ask as the classifier reads it: its id, where it points, and its words. */
export const ReportAsk = z.object({
  id: AskKeyPart,
  intent: AskIntent,
  /** The file it names; null for an ask about no file. */
  path: z.string().nullable(),
  /** Its anchor on the reviewed patchset, when it has lines. */
  anchor: z.object({ path: z.string(), side: CitationSide, startLine: z.number().int().positive(), endLine: z.number().int().positive() }).nullable(),
  instruction: z.string(),
});
export type ReportAsk = z.infer<typeof ReportAsk>;

/** `evidence.json`: all the classifier receives (through its tools, never in its prompt). */
export const EvidenceFile = z.object({
  successorPatchsetId: z.string(),
  asks: z.array(ReportAsk),
  changedPaths: z.array(z.string()),
  range: z.object({ from: z.string(), to: z.string() }),
  manifest: z.array(EvidenceUnit),
});
export type EvidenceFile = z.infer<typeof EvidenceFile>;

// ─── The classification (what the report seat hands in) ──────────────────────────────────────

export const RoundOutcomeKind = z.enum(['addressed', 'partial', 'untouched']);
export type RoundOutcomeKind = z.infer<typeof RoundOutcomeKind>;

/**
 * One outcome per dispatched ask, and the `beyond` bucket; they cite evidence ids only — never a
 * path, side or line. Every manifest id appears in exactly one outcome or beyond entry; an
 * untouched outcome cites none; addressed and partial cite at least one text hunk.
 */
export const Classification = z.strictObject({
  outcomes: z.array(
    z.strictObject({
      askId: z.string().min(1),
      outcome: RoundOutcomeKind,
      evidenceIds: z.array(z.string()),
      note: z.string().max(REPORT_NOTE_MAX_CHARS),
    }),
  ),
  beyond: z.array(z.strictObject({ evidenceIds: z.array(z.string()).min(1), note: z.string().max(REPORT_NOTE_MAX_CHARS) })),
});
export type Classification = z.infer<typeof Classification>;

/** Why a classification is refused (nothing of it is kept). */
export const ReportRefusal = z.enum([
  'too-large',
  'invalid-shape',
  'unknown-ask',
  'duplicate-ask',
  'missing-ask',
  'unknown-evidence',
  'duplicate-evidence',
  'unaccounted-evidence',
  'untouched-with-evidence',
  'no-line-evidence',
  'too-many-beyond',
  'stale-patchset',
]);
export type ReportRefusal = z.infer<typeof ReportRefusal>;

// ─── The verified report (host-built, deterministic) ─────────────────────────────────────────

/** A cited evidence unit as the report shows it; a line only for a text hunk. */
export const ReportEvidence = z.object({
  evidenceId: EvidenceId,
  kind: z.enum(EVIDENCE_KIND_ORDER),
  path: z.string(),
  side: CitationSide.nullable(),
  line: z.number().int().positive().nullable(),
});
export type ReportEvidence = z.infer<typeof ReportEvidence>;

export const RoundReport = z.object({
  roundId: z.string(),
  successorPatchsetId: z.string(),
  /** In dispatch order: exactly one per dispatched ask, with its exact text. */
  outcomes: z.array(z.object({ askId: AskKeyPart, askText: z.string(), outcome: RoundOutcomeKind, evidence: z.array(ReportEvidence), note: z.string() })),
  beyond: z.array(z.object({ evidence: z.array(ReportEvidence), note: z.string() })),
  /** Outcomes by kind, and the reworks the report verified (addressed + partial). */
  counts: z.object({ addressed: z.number().int().nonnegative(), partial: z.number().int().nonnegative(), untouched: z.number().int().nonnegative(), beyond: z.number().int().nonnegative() }),
});
export type RoundReport = z.infer<typeof RoundReport>;

// ─── Workspaces and landing ──────────────────────────────────────────────────────────────────

/**
 * How a session's first bind takes its workspace (the VS Code setting `rennet.rounds.workspace`,
 * the CLI's `rennet round --workspace`). `share`: the checkout that has the branch out, whoever's
 * it is. `own`: when a checkout Rennet did not place has the branch out, a sibling branch
 * `rennet/<branch>` forked from the branch's head, in a worktree of its own; otherwise as `share`.
 * Decided once: a recorded binding is never decided again.
 */
export const RoundsWorkspaceMode = z.enum(['share', 'own']);
export type RoundsWorkspaceMode = z.infer<typeof RoundsWorkspaceMode>;
export const ROUNDS_WORKSPACE_DEFAULT: RoundsWorkspaceMode = 'share';

/** The sibling work branch of `branch` (`rennet/<branch>`). */
export const SIBLING_BRANCH_PREFIX = 'rennet/';
export function siblingBranchOf(branch: string): string {
  return `${SIBLING_BRANCH_PREFIX}${branch}`;
}

/** Characters of git's own refusal a land answers with, before an honest truncation marker. */
export const LAND_REFUSAL_MAX_CHARS = 1_500;

/**
 * Where a round runs: the bound workspace's root, the reviewed branch, and the branch its commits
 * land on when that is not the reviewed branch (a sibling, `rennet/<branch>`). Absent: the
 * reviewed branch itself.
 */
export const RoundWorkspace = z.object({ root: z.string(), branch: z.string(), workBranch: z.string().optional() });
export type RoundWorkspace = z.infer<typeof RoundWorkspace>;

/** extension → host (`rennet/rounds/land`) and `rennet land`: fast-forward the reviewed branch to the session's work branch. */
export const RoundsLandParams = z.object({ sessionId: z.string().min(1) });
export type RoundsLandParams = z.infer<typeof RoundsLandParams>;

/**
 * What a land did. `landed` false, `message` saying why: nothing to land (the session's rounds
 * commit on the reviewed branch itself, it has no sibling now, or the branch already contains it). A refusal by git is a failed Result instead: its
 * message carries git's words (at most LAND_REFUSAL_MAX_CHARS of them), and nothing changed.
 */
export const RoundsLandResult = z.object({
  branch: z.string(),
  workBranch: z.string().nullable(),
  landed: z.boolean(),
  /** The worktree that has the reviewed branch out, where the fast-forward ran. */
  worktree: z.string().nullable(),
  /** The branch's commit before and after. */
  from: z.string().nullable(),
  to: z.string().nullable(),
  /** In words: what moved, or why there was nothing to land. */
  message: z.string(),
});
export type RoundsLandResult = z.infer<typeof RoundsLandResult>;

/**
 * extension → host (`rennet/rounds/landing`) and `rennet rounds --json`'s `landing`: the one line
 * beside the branch that says where the round's commits stand, read from git when asked; null
 * when there is nothing to say (no sibling, or the branch already contains its tip).
 */
export const RoundsLanding = z.object({ branch: z.string(), workBranch: z.string().nullable(), line: z.string().nullable() });
export type RoundsLanding = z.infer<typeof RoundsLanding>;

/** What archiving a session did with its sibling: collected, kept (and why), or nothing to collect. */
export const SiblingCollection = z.discriminatedUnion('outcome', [
  z.object({ outcome: z.literal('none') }),
  z.object({ outcome: z.literal('collected'), workBranch: z.string(), root: z.string(), tip: z.string() }),
  z.object({
    outcome: z.literal('kept'),
    workBranch: z.string(),
    root: z.string(),
    /** Commits the sibling holds that the reviewed branch does not (0 when kept for another reason). */
    ahead: z.number().int().nonnegative(),
    reason: z.string(),
  }),
]);
export type SiblingCollection = z.infer<typeof SiblingCollection>;

export const SessionArchiveResult = z.object({ sessionId: z.string(), archived: z.boolean(), collection: SiblingCollection, message: z.string() });
export type SessionArchiveResult = z.infer<typeof SessionArchiveResult>;

// ─── The round record ────────────────────────────────────────────────────────────────────────

/** The phases a round passes through, in order; each ends in a durable receipt. */
export const ROUND_PHASES = ['prep', 'worker', 'commit', 'report', 'verification', 'regeneration'] as const;
export const RoundPhase = z.enum(ROUND_PHASES);
export type RoundPhase = z.infer<typeof RoundPhase>;

/**
 * - `running`: a phase is under way (or the host stopped in one and resumes from its receipt);
 * - `returned`: verified report, successor generation drafted;
 * - `unchanged`: the worker changed nothing; no report, the generation stays;
 * - `failed`: stopped at `failure.phase`; the asks stay staged; `retryable` says whether Retry resumes it;
 * - `cancelled`: the reviewer stopped it.
 */
export const RoundState = z.enum(['running', 'returned', 'unchanged', 'failed', 'cancelled']);
export type RoundState = z.infer<typeof RoundState>;

export const RoundFailure = z.object({ phase: RoundPhase, message: z.string(), retryable: z.boolean() });
export type RoundFailure = z.infer<typeof RoundFailure>;

/** Who did the coding: a harness and its version, or the scripted worker (never shown as a model). */
export const RoundWorker = z.object({ kind: z.enum(['claude-code', 'codex', 'scripted']), version: z.string().nullable() });
export type RoundWorker = z.infer<typeof RoundWorker>;

export const RoundDiffTotals = z.object({ files: z.number().int().nonnegative(), additions: z.number().int().nonnegative(), deletions: z.number().int().nonnegative() });
export type RoundDiffTotals = z.infer<typeof RoundDiffTotals>;

/** A round as the ledger shows it: the fold of its `round.*` events. */
export const Round = z.object({
  id: z.string(),
  sessionId: z.string(),
  /** 1, 2, 3, …: display and ledger data, never a limit. */
  ordinal: z.number().int().positive(),
  /** The dispatched asks, in work-order order. */
  asks: z.array(AskKeyPart),
  workOrderDigest: z.string(),
  worker: RoundWorker,
  workspace: RoundWorkspace,
  /** The patchset the asks were written on, and the generation live when it started (frozen when the successor lands). */
  fromPatchsetId: z.string(),
  fromGenerationId: z.string().nullable(),
  startedAt: z.string(),
  phase: RoundPhase,
  state: RoundState,
  failure: RoundFailure.nullable(),
  /** HEAD before and after the worker's turn (the observed commit range). */
  range: z.object({ from: z.string(), to: z.string() }).nullable(),
  diff: RoundDiffTotals.nullable(),
  successorPatchsetId: z.string().nullable(),
  report: RoundReport.nullable(),
  generationId: z.string().nullable(),
  endedAt: z.string().nullable(),
});
export type Round = z.infer<typeof Round>;

// ─── A round's own diff (read-only) ──────────────────────────────────────────────────────────

/**
 * Whether a round has a diff of its own to open: its worker's commits moved HEAD (range.from and
 * range.to differ). A round that committed nothing offers no round diff at all (absent, never a
 * disabled control).
 */
export function roundHasDiff(round: Pick<Round, 'range'>): boolean {
  return round.range !== null && round.range.from !== round.range.to;
}

/** Which round of which session (`rennet/rounds/diffFiles`, and the base of `rennet/rounds/readBlob`). */
export const RoundRef = z.object({ sessionId: z.string().min(1), roundId: z.string().min(1) });
export type RoundRef = z.infer<typeof RoundRef>;

/** One file the round's commits changed, range.from → range.to, as git names it (renames found). */
export const RoundDiffFile = z.object({ path: z.string(), oldPath: z.string().nullable(), status: FileStatus });
export type RoundDiffFile = z.infer<typeof RoundDiffFile>;

/** A round's changed files, read from git in its bound workspace when asked (never stored). */
export const RoundDiffFiles = z.object({
  roundId: z.string(),
  ordinal: z.number().int().positive(),
  from: z.string(),
  to: z.string(),
  files: z.array(RoundDiffFile),
});
export type RoundDiffFiles = z.infer<typeof RoundDiffFiles>;

/** One side of one changed file of a round: `base` is range.from, `head` is range.to. `path` names the file on that side (a rename's old path on base). */
export const RoundBlobParams = RoundRef.extend({ path: z.string().min(1), side: Side });
export type RoundBlobParams = z.infer<typeof RoundBlobParams>;

// ─── The scripted worker ─────────────────────────────────────────────────────────────────────

/** The longest a scripted worker's `wait` step may pause (ten minutes). */
export const SCRIPTED_WAIT_MAX_MS = 600_000;

/**
 * A file of edits and commits applied in the bound workspace in order, as a worker's turn would
 * (tests and demos). `wait` pauses the turn for that many milliseconds (a worker that takes time:
 * the run view mid-turn, a cancel or a host stopping while the worker runs); a cancel ends it early.
 */
export const ScriptedWorkerFile = z.strictObject({
  steps: z.array(
    z.union([
      z.strictObject({ write: z.strictObject({ path: z.string().min(1), content: z.string() }) }),
      z.strictObject({ delete: z.string().min(1) }),
      z.strictObject({ commit: z.string().min(1) }),
      z.strictObject({ wait: z.number().int().min(0).max(SCRIPTED_WAIT_MAX_MS) }),
    ]),
  ),
});
export type ScriptedWorkerFile = z.infer<typeof ScriptedWorkerFile>;
