import { z } from 'zod';
import { Absence, CitationSide, Lens, LensBoardView } from './board';
import { DiffLine } from './patchset';

/**
 * A generation's lanes and the document `rennet review --json FILE` writes (docs/review-json.md).
 * Element fields are camelCase here (startLine, introMarkdown), converted from the board's
 * snake_case tool-input names at the edge.
 */

/** Seat state of one lane, as the rail shows it. */
export const LaneState = z.enum(['queued', 'waiting', 'working', 'settled', 'absent', 'failed']);
export type LaneState = z.infer<typeof LaneState>;

/** A typed failure: the drafter's words and whether another attempt could plausibly succeed. */
export const LaneFailure = z.object({
  message: z.string(),
  /** null: no account (an unknown ladder is not an exhausted one). */
  retryable: z.boolean().nullable(),
  attempts: z.number().int().nonnegative(),
});
export type LaneFailure = z.infer<typeof LaneFailure>;

/** Spend of one seat turn. A turn without usage says so (null), never a fake zero. */
export const SeatSpend = z.object({
  seat: z.string(),
  lens: Lens,
  role: z.enum(['drafter', 'reviewer', 'compiler']),
  harness: z.string(),
  model: z.string().nullable(),
  durationMs: z.number().nonnegative(),
  inputTokens: z.number().int().nonnegative().nullable(),
  outputTokens: z.number().int().nonnegative().nullable(),
  /** Tool calls the seat made (its own tools and the read tools), refusals included; null when unknown. */
  toolCalls: z.number().int().nonnegative().nullable(),
  refusals: z.number().int().nonnegative().nullable(),
  /** Of those, calls to the read tools (protocol/read.ts), the bytes they sent and the time they took. Absent on records from before the read tools. */
  readCalls: z.number().int().nonnegative().nullable().optional(),
  readBytes: z.number().int().nonnegative().nullable().optional(),
  readMs: z.number().nonnegative().nullable().optional(),
  priceUsd: z.number().nonnegative().nullable(),
});
export type SeatSpend = z.infer<typeof SeatSpend>;

export const PhaseName = z.enum(['report', 'lens-draft', 'lens-repair', 'reveal', 'first-core-board', 'first-element']);
export const PhaseTiming = z.object({
  phase: PhaseName,
  /** Required for lane-scoped phases, absent on generation-wide ones. */
  lens: Lens.nullable(),
  seat: z.string().nullable(),
  startedAt: z.string(),
  durationMs: z.number().nonnegative(),
});
export type PhaseTiming = z.infer<typeof PhaseTiming>;

export const ReportElement = z.object({ id: z.string(), kind: z.string(), parent: z.string().nullable() }).catchall(z.unknown());
export type ReportElement = z.infer<typeof ReportElement>;

export const ReportBoard = z.object({
  lens: Lens,
  state: z.enum(['settled', 'absent', 'failed']),
  absence: Absence.nullable(),
  failure: LaneFailure.nullable(),
  document: z.object({ title: z.string(), introMarkdown: z.string(), measure: z.string(), proseRegister: z.string() }),
  elements: z.array(ReportElement),
});
export type ReportBoard = z.infer<typeof ReportBoard>;

/** What `rennet review --json FILE` writes. */
/** A review of a pull or merge request: which one, at which commits. */
export const ReportTarget = z.object({
  kind: z.literal('pr'),
  provider: z.enum(['github', 'gitlab']),
  owner: z.string(),
  repo: z.string(),
  number: z.number().int().positive(),
  headSha: z.string(),
  baseSha: z.string(),
});
export type ReportTarget = z.infer<typeof ReportTarget>;

/**
 * A re-review's answer about the reviewer's earlier review (`rennet review --pr N --since-last-review`,
 * "Re-review Since Last Review"): how the head relates to the earlier review's commit, and each
 * earlier item with its closure. A resolved item rests on changed lines of the fix delta (host-derived).
 */
export const RereviewDelta = z.object({
  /** none: the reviewer has no earlier review of this request (the whole change is reviewed). */
  kind: z.enum(['ancestor', 'not-ancestor', 'none']),
  from: z.string().nullable(),
  to: z.string(),
  reason: z.string().nullable(),
});
export type RereviewDelta = z.infer<typeof RereviewDelta>;

export const PriorItemView = z.object({
  id: z.string(),
  path: z.string().nullable(),
  line: z.number().int().positive().nullable(),
  text: z.string(),
  severity: z.enum(['blocker', 'nit']),
  closure: z.enum(['resolved', 'open']),
  reason: z.string(),
  evidence: z.array(z.object({ path: z.string(), side: CitationSide, line: z.number().int().positive() })),
});
export type PriorItemView = z.infer<typeof PriorItemView>;

/** What a generation drafted by a re-review shows beside its Flagged board. */
export const PriorReview = z.object({
  delta: RereviewDelta,
  /** The line the next posted review opens with ("Prior review: k of n resolved"). */
  line: z.string(),
  /** One sentence: what was reviewed and why. */
  statement: z.string(),
  earlier: z.object({ reviewId: z.number().int(), url: z.string(), state: z.string(), commitId: z.string().nullable() }).nullable(),
  items: z.array(PriorItemView),
  /** Why no item could be judged (the closure seat failed or had no harness); null when it judged them. */
  closureFailure: z.string().nullable(),
  /** The patchset the lenses read (the fix delta); null when nothing changed since. */
  deltaPatchsetId: z.string().nullable(),
});
export type PriorReview = z.infer<typeof PriorReview>;

export const ReviewReport = z.object({
  /** Present when the review is of a pull or merge request (`rennet review --pr`). */
  target: ReportTarget.optional(),
  /** The capture's id. */
  patchset: z.string(),
  generation: z.string(),
  base: z.string(),
  head: z.string(),
  boards: z.array(ReportBoard),
  spend: z.array(SeatSpend),
  timings: z.array(PhaseTiming),
  /** `--since-last-review`: the delta since the reviewer's earlier review. */
  delta: RereviewDelta.optional(),
  /** `--since-last-review`: the earlier review's items and their closures. */
  priorItems: z.array(PriorItemView).optional(),
});
export type ReviewReport = z.infer<typeof ReviewReport>;

// ─── A generation as the panel reads it ─────────────────────────────────────────────────────

/**
 * What a round's re-draft of a lens found, read from the section stamps its composition wrote
 * (new / reworked) and the predecessor's sections it no longer has. `carrying-forward` only when
 * nothing was added, reworked or removed and the board's envelope is unchanged.
 */
export const LaneDelta = z.object({
  verdict: z.enum(['carrying-forward', 'reworked']),
  /** The round whose successor this is. */
  round: z.number().int().positive(),
  added: z.number().int().nonnegative(),
  reworked: z.number().int().nonnegative(),
  /** Titles of the predecessor's sections this board no longer has. */
  removed: z.array(z.string()),
});
export type LaneDelta = z.infer<typeof LaneDelta>;

/** One lane of a generation: its seat state and, once anything was written, its board. */
export const LaneView = z.object({
  lens: Lens,
  state: LaneState,
  absence: Absence.nullable(),
  failure: LaneFailure.nullable(),
  /** null until the lane's board exists (it exists, empty, from the moment the generation starts). */
  board: LensBoardView.nullable(),
  /** A round successor's settled lane: what the re-draft changed. Absent on every other generation. */
  delta: LaneDelta.optional(),
});
export type LaneView = z.infer<typeof LaneView>;

// ─── Code excerpts and citation marks (what code cards and gutter marks draw) ──────────────

/** Lines of captured context a code excerpt keeps either side of its cited span (inside the captured hunks). */
export const EXCERPT_CONTEXT_LINES = 3;
/** Most diff lines one excerpt carries; a longer span is cut there and says so (`clipped`). */
export const EXCERPT_MAX_LINES = 400;
/** Most diff lines all excerpts of one generation snapshot carry; past it excerpts are `omitted` and say so. */
export const GENERATION_EXCERPT_MAX_LINES = 40_000;
/** Characters of an element's claim a citation mark carries (hover text). */
export const CITATION_CLAIM_MAX_CHARS = 240;

/**
 * Why an excerpt has (or lacks) lines. captured: the captured hunk lines over the span. truncated:
 * the span lies in a truncated file's uncaptured tail. binary / submodule: no text was captured.
 * not-captured: the path or span is not in the capture (a frozen generation of another capture,
 * or a board written against a dropped file). omitted: over GENERATION_EXCERPT_MAX_LINES.
 */
export const ExcerptState = z.enum(['captured', 'truncated', 'binary', 'submodule', 'not-captured', 'omitted']);
export type ExcerptState = z.infer<typeof ExcerptState>;

/** A cited span's captured diff lines: the hunks over it with old/new numbers and +/- kinds. */
export const CodeExcerpt = z.object({
  path: z.string(),
  side: CitationSide,
  startLine: z.number().int().positive(),
  endLine: z.number().int().positive(),
  state: ExcerptState,
  /** In diff order; context lines within EXCERPT_CONTEXT_LINES of the span are kept. */
  lines: z.array(DiffLine),
  /** True when `lines` was cut at EXCERPT_MAX_LINES. */
  clipped: z.boolean(),
  /** A sentence for the reader when state is not captured or lines were clipped; null otherwise. */
  note: z.string().nullable(),
});
export type CodeExcerpt = z.infer<typeof CodeExcerpt>;

/** The key of a span in `GenerationSnapshot.excerpts`: `<side>|<start>-<end>|<path>`. */
export function excerptKey(span: { path: string; side: 'base' | 'head'; startLine: number; endLine: number }): string {
  return `${span.side}|${span.startLine}-${span.endLine}|${span.path}`;
}

/**
 * One citation of a generation as the editor marks it: a code_ref, or a path:line citation in
 * prose. `elementId` is the element a reader should land on (the finding, step or decision that
 * cites the code, else the code_ref or prose element itself); `claim` is its title or claim as
 * plain text, at most CITATION_CLAIM_MAX_CHARS.
 */
export const CitationMark = z.object({
  lens: Lens,
  elementId: z.string(),
  path: z.string(),
  side: CitationSide,
  startLine: z.number().int().positive(),
  endLine: z.number().int().positive(),
  claim: z.string(),
});
export type CitationMark = z.infer<typeof CitationMark>;

/**
 * Where a generation snapshot stands in the host's push stream (protocol/generationDelta.ts): a
 * stream is one host process's pushes of one live generation, `n` how many deltas it has sent
 * (0: the full snapshot that opened it). A delta applies only on top of the same stream at its
 * base revision.
 */
export const GenerationRevision = z.object({ stream: z.string().min(1).max(200), n: z.number().int().nonnegative() });
export type GenerationRevision = z.infer<typeof GenerationRevision>;

/**
 * A whole generation: pushed whole when a stream opens (a run starts, a change no frame
 * describes) and answered whole by `rennet/generation/get`; while its run writes, the host pushes
 * per-lane deltas on top of it instead (protocol/generationDelta.ts).
 */
export const GenerationSnapshot = z.object({
  generationId: z.string(),
  sessionId: z.string(),
  patchsetId: z.string(),
  status: z.enum(['live', 'frozen']),
  /** All five lanes, in canonical order, from the moment the generation starts. */
  lanes: z.array(LaneView),
  spend: z.array(SeatSpend),
  timings: z.array(PhaseTiming),
  /** Earlier generations of the session, newest first, for the generation switcher. */
  frozen: z.array(z.object({ generationId: z.string(), patchsetId: z.string(), createdAt: z.string() })),
  /** excerptKey → the captured lines of every span a code_ref of this generation cites. */
  excerpts: z.record(z.string(), CodeExcerpt),
  /** Every citation of the generation, lane by lane in canonical order, for gutter marks. */
  citations: z.array(CitationMark),
  /** A generation a re-review drafted: the earlier review's items and their closures (shown with Flagged). */
  priorReview: PriorReview.optional(),
  /**
   * The push stream this snapshot stands in, when its generation's run is live in the host that
   * answered (deltas follow on it); absent when no stream is open. Bookkeeping of the transport,
   * not part of what the generation says: compare generations without it.
   */
  revision: GenerationRevision.optional(),
});
export type GenerationSnapshot = z.infer<typeof GenerationSnapshot>;

/** Which harness drafts which lens, as the extension reads it from settings and SecretStorage. */
export const HarnessName = z.enum(['auto', 'claude-code', 'codex', 'vscode-lm', 'openai', 'anthropic', 'none']);
export type HarnessName = z.infer<typeof HarnessName>;
/**
 * What each harness name means, as the settings UI shows it. package.json's harness enums (the
 * default and each per-lens override) are generated from HarnessName and this table
 * (`npm run manifest`); test/unit/protocol/manifest.test.ts fails when they differ.
 */
export const HARNESS_DESCRIPTIONS: Readonly<Record<HarnessName, string>> = {
  auto: 'Discover what this machine has: the installed Claude Code / Codex CLIs (with both, Flagged gets a review from each), else a VS Code chat model; APIs are used only when named.',
  'claude-code': 'The Claude Code CLI, with your own Claude Code login and settings.',
  codex: 'The Codex CLI, with your own Codex login and configuration.',
  'vscode-lm': 'A VS Code chat model (vscode.lm: GitHub Copilot or another model provider), selected by rennet.harness.vscodeLm.vendor / family.',
  openai: 'An OpenAI-compatible chat completions API (rennet.harness.openai.baseUrl / model; the key from “Rennet: Set API Key”).',
  anthropic: 'The Anthropic Messages API (rennet.harness.anthropic.baseUrl / model; the key from “Rennet: Set API Key”).',
  none: 'No model: lanes that need one fail and say so; host-settled lanes still settle.',
};
export const HarnessConfig = z.object({
  default: HarnessName,
  /** Per-lens overrides; a lens not named uses `default`. */
  lenses: z.record(z.string(), HarnessName),
  vscodeLm: z.object({ vendor: z.string().optional(), family: z.string().optional() }),
  openai: z.object({ baseUrl: z.string().optional(), model: z.string().optional(), apiKey: z.string().optional() }),
  anthropic: z.object({ baseUrl: z.string().optional(), model: z.string().optional(), apiKey: z.string().optional() }),
});
export type HarnessConfig = z.infer<typeof HarnessConfig>;
