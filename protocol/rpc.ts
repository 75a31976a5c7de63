import { z } from 'zod';
import { AskCommand, AskKeyPart, AskProjection, AskReceipt, QuoteAnchorInput } from './asks';
import { Lens } from './board';
import { ForgeProvider, PublishReceipt } from './exits';
import { CAPTURE_MIN_FILE_BYTES, RPC_BULK_PARAMS_MAX_CHARS } from './limits';
import { Side, type Patchset } from './patchset';
import { GenerationSnapshot, HarnessConfig, type ReviewReport } from './review';
import { GenerationDelta } from './generationDelta';
import { Round, RoundBlobParams, RoundRef, RoundsLandParams, RoundsWorkspaceMode } from './rounds';
import { answersResult, answersValue, NoParams, rpcNotification, rpcRequest } from './rpcSchema';
import { SessionSnapshot, Target, type BranchList, type Session } from './session';

/**
 * The extension ⇄ host contract. One constant per message, named `rennet/<domain>/<verb>`,
 * declared with `rpcRequest` / `rpcNotification` (rpcSchema.ts): its params are a zod schema and
 * their TS type is inferred from it; the receiving side checks them at its edge (rpcEdge.ts)
 * before any handler runs. Every extension → host request answers a Result so the caller decides
 * on a typed failure (refused params: `invalid-request` naming the field); transport errors (host
 * gone) surface as JSON-RPC errors instead.
 */

/** A repository folder as the extension names it (any path inside the work tree). */
const RepoDir = z.string().min(1);
/** A session, patchset, round or generation id. */
const Id = z.string().min(1);

export interface HostInfo {
  version: string;
  pid: number;
  storeDir: string;
  /** Schema version of the opened store. */
  storeSchema: number;
  /** Sessions read back from the store at start-up. */
  sessions: number;
}

/** extension → host: liveness and identity; the first request after start or restart. */
export const HostHello = rpcRequest('rennet/host/hello', NoParams, answersValue<HostInfo>());

export const ListBranchesParams = z.object({ repo: RepoDir });
export type ListBranchesParams = z.infer<typeof ListBranchesParams>;
/** extension → host: local branches for the picker (current first) and the default base. */
export const RepoListBranches = rpcRequest('rennet/repo/listBranches', ListBranchesParams, answersResult<BranchList>());

export const OpenReviewParams = z.object({
  repo: RepoDir,
  target: Target,
  /** Per-capture overrides from settings (the extension clamps the setting to this). */
  maxFileBytes: z.number().int().min(CAPTURE_MIN_FILE_BYTES).optional(),
});
export type OpenReviewParams = z.infer<typeof OpenReviewParams>;
export interface OpenReviewResult {
  snapshot: SessionSnapshot;
  /** True when an existing session was reattached. */
  reattached: boolean;
  /** True when this open captured a patchset the store did not hold yet. */
  captured: boolean;
}
/** extension → host: find or create the session for a target and capture it if needed. */
export const ReviewOpen = rpcRequest('rennet/review/open', OpenReviewParams, answersResult<OpenReviewResult>());

export const SessionIdParams = z.object({ sessionId: Id });
export type SessionIdParams = z.infer<typeof SessionIdParams>;
/** extension → host: the full snapshot of one session (after a reload or a host restart). */
export const SessionGet = rpcRequest('rennet/session/get', SessionIdParams, answersResult<SessionSnapshot>());
/** extension → host: every session the store holds, most recently updated first. */
export const SessionList = rpcRequest('rennet/session/list', NoParams, answersValue<Session[]>());

export const PatchsetIdParams = z.object({ patchsetId: Id });
export type PatchsetIdParams = z.infer<typeof PatchsetIdParams>;
/** extension → host: one patchset with its hunks. */
export const PatchsetGet = rpcRequest('rennet/patchset/get', PatchsetIdParams, answersResult<Patchset>());

/** `path` is only typed here: the host checks it is repo-relative and captured (`invalid-path`). */
export const ReadBlobParams = z.object({ patchsetId: Id, path: z.string(), side: Side });
export type ReadBlobParams = z.infer<typeof ReadBlobParams>;
export interface BlobContent {
  path: string;
  side: Side;
  oid: string;
  /** UTF-8 text; null for a binary blob. */
  text: string | null;
  binary: boolean;
  bytes: number;
  truncated: boolean;
}
/** extension → host: an immutable base or head blob of a captured file. */
export const PatchsetReadBlob = rpcRequest('rennet/patchset/readBlob', ReadBlobParams, answersResult<BlobContent>());

/** host → extension: a session changed; the extension fetches or receives its snapshot. */
export const SessionChanged = rpcNotification('rennet/session/changed', SessionSnapshot, { maxParamsChars: RPC_BULK_PARAMS_MAX_CHARS });

export const HostLogParams = z.object({ level: z.enum(['info', 'warn', 'error']), message: z.string() });
export type HostLogParams = z.infer<typeof HostLogParams>;
/** host → extension: a line for the Rennet output channel (never secrets). */
export const HostLog = rpcNotification('rennet/host/log', HostLogParams);

// ─── Language models through VS Code (vscode.lm) ────────────────────────────────────────────
//
// The host runs the tool loop of a `vscode-lm` seat; each round trip asks the extension for ONE
// model response with these server→client requests. Everything on the wire is JSON-safe: the
// extension rebuilds LanguageModelChatMessage / TextPart / ToolCallPart / ToolResultPart from it.
// Cancellation: the JSON-RPC cancellation token of the request ($/cancelRequest), which the
// extension links to the CancellationToken it passes to `model.sendRequest`.

/** A JSON object whose fields are the model's or a tool's own (checked where they are used). */
const JsonObject = z.record(z.string(), z.unknown());

/** A tool call the model asked for. `input` is the model's JSON object, unvalidated. */
export const LmToolCall = z.object({ callId: z.string(), name: z.string(), input: JsonObject });
export type LmToolCall = z.infer<typeof LmToolCall>;

/** The answer to one tool call. An error result reaches the model with the text prefixed `Error: `. */
export const LmToolResult = z.object({ callId: z.string(), text: z.string(), isError: z.boolean() });
export type LmToolResult = z.infer<typeof LmToolResult>;

/** One entry of the transcript the host keeps per seat thread. */
export const LmMessage = z.discriminatedUnion('role', [
  z.object({ role: z.literal('user'), text: z.string() }),
  z.object({ role: z.literal('assistant'), text: z.string(), toolCalls: z.array(LmToolCall) }),
  /** The results of the previous assistant message's tool calls (sent as a User message). */
  z.object({ role: z.literal('tool-results'), results: z.array(LmToolResult) }),
]);
export type LmMessage = z.infer<typeof LmMessage>;

/** A tool offered to the model: exactly a seat's tool (name, description, JSON schema). */
export const LmTool = z.object({ name: z.string(), description: z.string(), inputSchema: JsonObject });
export type LmTool = z.infer<typeof LmTool>;

export const LmChatParams = z.object({
  /** The seat asking, e.g. `sequence:drafter` (for logs and the consent justification). */
  seatId: z.string(),
  /** `lm.selectChatModels` selector parts; `model` is a model id. All absent: the first model VS Code lists. */
  vendor: z.string().optional(),
  family: z.string().optional(),
  model: z.string().optional(),
  messages: z.array(LmMessage),
  tools: z.array(LmTool),
  /** Shown by VS Code when it asks the user's consent to use the model. */
  justification: z.string(),
});
export type LmChatParams = z.infer<typeof LmChatParams>;

/**
 * Why no model response: `no-model` (nothing matches the selector, or the model vanished),
 * `consent-denied` (LanguageModelError NoPermissions: the user did not allow Rennet),
 * `blocked` (LanguageModelError Blocked: quota or policy), `cancelled` (the request's token),
 * `error` (anything else, with the model's or VS Code's words).
 */
export type LmFailureReason = 'no-model' | 'consent-denied' | 'blocked' | 'cancelled' | 'error';

export interface LmUsage {
  inputTokens: number;
  outputTokens: number;
}

/**
 * One model response. Unlike the extension → host requests this is not a `Result`: the host's
 * harness decides on the typed `reason` (it becomes the turn's failure message).
 */
export type LmChatResult =
  | {
      ok: true;
      /** The response's text parts, concatenated. */
      text: string;
      toolCalls: LmToolCall[];
      /** The model that answered: `<vendor>/<id>`. */
      model: string;
      /** null: the provider reports no usage (vscode.lm has no usage API today), never a fake zero. */
      usage?: LmUsage | null;
    }
  | { ok: false; reason: LmFailureReason; message: string };

/** host → extension: one model response for a seat's transcript (one round trip of the host's tool loop). */
export const LmChat = rpcRequest('rennet/lm/chat', LmChatParams, answersValue<LmChatResult>(), { maxParamsChars: RPC_BULK_PARAMS_MAX_CHARS });

export const LmModelsParams = z.object({ vendor: z.string().optional(), family: z.string().optional() });
export type LmModelsParams = z.infer<typeof LmModelsParams>;

export interface LmModelInfo {
  vendor: string;
  family: string;
  id: string;
  name: string;
  version: string;
  maxInputTokens: number;
  /** null: this VS Code does not say (the stable consumer API does not expose capabilities). */
  toolCalling: boolean | null;
}

/** host → extension: the chat models `vscode.lm.selectChatModels` answers for a selector (empty: none). */
export const LmModels = rpcRequest('rennet/lm/models', LmModelsParams, answersValue<LmModelInfo[]>());

// ─── Harnesses ──────────────────────────────────────────────────────────────────────────────

/** One CLI harness as discovery saw it (host/harness/discover.ts). */
export interface CliHarnessInfo {
  /** `claude-code`, `codex`, … */
  kind: string;
  available: boolean;
  /** Where the executable was found, when it was. */
  path: string | null;
  version: string | null;
  /** Why it is not available (not on PATH, too old, not logged in, …), or a note when it is. */
  reason: string | null;
}

/** extension → host: discover the CLI harnesses (Claude Code, Codex) on this machine. */
export const HarnessDiscover = rpcRequest('rennet/harness/discover', NoParams, answersResult<CliHarnessInfo[]>());

/** One model a local model server lists (host/harness/discover.ts LocalModel). `name` is the server's text, untrusted. */
export interface LocalModelInfo {
  name: string;
  /** true: the server says it calls tools (usable); false: it says it does not; null: it does not say. */
  tools: boolean | null;
  /** Where the server forwards it (an Ollama cloud model): never used. null: it runs here. */
  remote: string | null;
  loaded: boolean | null;
}

/** One local OpenAI-compatible model server (Ollama, LM Studio) as discovery saw it. */
export interface LocalServerInfo {
  /** `ollama`, `lm-studio`. */
  kind: string;
  label: string;
  /** Its fixed loopback origin, e.g. `http://127.0.0.1:11434`. */
  baseUrl: string;
  status: 'running' | 'not-running' | 'no-answer' | 'error';
  /** Why it is not running or not usable, or a note on a running one; null when nothing needs saying. */
  detail: string | null;
  models: LocalModelInfo[];
  /** Models not listed (past the bound, or unreadable names). */
  omitted: number;
}

/** extension → host: probe the local model servers (Ollama on 127.0.0.1:11434, LM Studio on 127.0.0.1:1234) and list their models. */
export const HarnessDiscoverLocal = rpcRequest('rennet/harness/discoverLocal', NoParams, answersResult<LocalServerInfo[]>());

export const DraftLensParams = z.object({
  sessionId: Id,
  lens: Lens,
  harness: z.literal('vscode-lm'),
  /** The vscode.lm selector (from `rennet.harness.vscodeLm.vendor` / `family` when the caller has none). */
  vendor: z.string().optional(),
  family: z.string().optional(),
  /** A model id, to pin one model of the vendor. */
  model: z.string().optional(),
});
export type DraftLensParams = z.infer<typeof DraftLensParams>;

export interface DraftLensResult {
  /** The model the host selected through `rennet/lm/models`. */
  model: LmModelInfo;
  /** The generation the draft ran as: only `lens` has a harness; the other model lanes fail "no model harness". */
  report: ReviewReport;
}

/**
 * extension → host: run a generation of the session's active patchset in which `lens` is drafted
 * by a vscode.lm model (its tool loop in the host, its model calls through `rennet/lm/chat`) and
 * settles through the host's board writer. Refused (`not-found`) when no model matches.
 */
export const ReviewDraftLens = rpcRequest('rennet/review/draftLens', DraftLensParams, answersResult<DraftLensResult>());

export const RunLensesParams = z.object({ sessionId: Id, harness: HarnessConfig });
export type RunLensesParams = z.infer<typeof RunLensesParams>;
/**
 * extension → host: draft a new generation of the five lens boards over the session's active
 * patchset with the harnesses the settings name; answers at once with the generation id, then
 * pushes `rennet/generation/changed` as lanes and boards move. Keys ride this request only.
 */
export const ReviewRunLenses = rpcRequest('rennet/review/runLenses', RunLensesParams, answersResult<{ generationId: string }>());

/**
 * extension → host: "Re-review Since Last Review" of a pull-request session. The host reads the
 * signed-in reviewer's earlier review, checks its commit against the head, judges each earlier
 * item with the closure seat (Flagged compiler's harness, else Design's), and drafts a generation
 * over the fix delta (or the whole change, said); answers once that generation is filed (null when
 * nothing changed since the review), then pushes `rennet/generation/changed` as for runLenses.
 * The next post opens with the answer's `prior.line`. Keys ride this request only.
 */
export const RereviewRun = rpcRequest('rennet/rereview/run', RunLensesParams, answersResult<{ generationId: string | null; prior: import('./review').PriorReview }>());

export const GetGenerationParams = z.object({
  sessionId: Id,
  /** A frozen generation to read; omitted: the live one. */
  generationId: Id.optional(),
});
export type GetGenerationParams = z.infer<typeof GetGenerationParams>;
/** extension → host: a generation whole (null when the session has none yet). */
export const GenerationGet = rpcRequest('rennet/generation/get', GetGenerationParams, answersResult<GenerationSnapshot | null>());

/**
 * host → extension: a generation, whole — when a push stream opens (a run starts; a change no
 * seat frame describes, such as a draft made elsewhere) and when a run ends without one. Throttled
 * with the deltas. `revision` present: deltas follow on that stream.
 */
export const GenerationChanged = rpcNotification('rennet/generation/changed', GenerationSnapshot, { maxParamsChars: RPC_BULK_PARAMS_MAX_CHARS });

/**
 * host → extension: one lane of the live generation changed (protocol/generationDelta.ts): the
 * elements its seat frames touched, its settlement, the derived parts that moved. At most one
 * batch per PUBLISH_INTERVAL_MS per session, one delta per lane changed, revisions in order. A
 * delta that does not apply on what the extension holds (a gap) is answered by reading the
 * generation whole (`rennet/generation/get`).
 */
export const GenerationDeltaPushed = rpcNotification('rennet/generation/delta', GenerationDelta, { maxParamsChars: RPC_BULK_PARAMS_MAX_CHARS });

// ─── Asks: the durable per-session ask log (protocol/asks.ts, host/asks/) ────────────────────
//
// Every reviewer act on asks is one command that appends one event to the session's log; the
// projection is the fold of that log and is pushed whole after every append. A refusal appends
// nothing and answers a RennetError with `detail.refusal` = an AskRefusalCode (params the edge
// refuses too: `invalid`).

const ASK_REFUSAL_INVALID = { invalidDetail: { refusal: 'invalid' } } as const;

export const AsksCommandParams = z.object({ sessionId: Id, command: AskCommand });
export type AsksCommandParams = z.infer<typeof AsksCommandParams>;
export interface AsksCommandResult {
  /** The appended event: a staged ask's id is `event.askId`, a new thread's `event.threadId`. */
  event: import('./asks').AskEvent;
  /** Its seq in the session's event log. */
  seq: number;
  /** The undo of this append: hand it to `rennet/asks/undo` (once). */
  receipt: import('./asks').AskReceipt;
  projection: import('./asks').AskProjection;
}
/** extension → host: run one ask command (stage, edit, retire, …, unstage); durable when it answers. */
export const AsksCommand = rpcRequest('rennet/asks/command', AsksCommandParams, answersResult<AsksCommandResult>(), ASK_REFUSAL_INVALID);

export const AsksUndoParams = z.object({ sessionId: Id, receipt: AskReceipt });
export type AsksUndoParams = z.infer<typeof AsksUndoParams>;
/** extension → host: append a receipt's inverse (the next append; nothing is deleted). Answers a receipt that redoes. */
export const AsksUndo = rpcRequest('rennet/asks/undo', AsksUndoParams, answersResult<AsksCommandResult>(), ASK_REFUSAL_INVALID);

/** extension → host: the session's current ask projection (the fold of its log; reads never write). */
export const AsksGet = rpcRequest('rennet/asks/get', SessionIdParams, answersResult<AskProjection>(), ASK_REFUSAL_INVALID);

export const AsksChangedParams = z.object({
  sessionId: Id,
  /** The seq of the append this projection includes. */
  seq: z.number().int().nonnegative(),
  projection: AskProjection,
});
export type AsksChangedParams = z.infer<typeof AsksChangedParams>;
/** host → extension: the whole ask projection of a session, after every append to its log. */
export const AsksChanged = rpcNotification('rennet/asks/changed', AsksChangedParams, { maxParamsChars: RPC_BULK_PARAMS_MAX_CHARS });

export const AsksExplainParams = z.object({
  sessionId: AskKeyPart,
  /** The span of board prose to explain; its generation must belong to the session. */
  anchor: QuoteAnchorInput,
  /** An open thread on that anchor to ask in; omitted: the host opens one (quoteOpen). */
  threadId: AskKeyPart.optional(),
  /** The harnesses the settings name (the anchor's lens picks its harness, as for a draft). */
  harness: HarnessConfig,
});
export type AsksExplainParams = z.infer<typeof AsksExplainParams>;
export interface AsksExplainResult {
  threadId: string;
  /** The agent's answer as appended to the thread (author `agent`). */
  answer: import('./asks').QuoteMessage;
  /** Which harness and model answered (also stated at the end of the answer's text). */
  provenance: { harness: string; model: string | null };
}
/**
 * extension → host: explain a span of board prose. The host opens (or reuses) the quote thread,
 * appends the reviewer's question, runs one read-only turn of the anchor lens's harness — the
 * board and the patchset reach the model through tools, never inside the prompt — and appends the
 * answer as an `agent` reply. No harness configured: refused (`invalid-request`, detail.reason
 * `no-harness`) with the thread holding the question, saying so.
 *
 * Every refusal names `detail.reason`. Before the thread exists (nothing appended): `invalid`,
 * `unknown-session`, `unknown-generation`, `wrong-session`, `unknown-board`, `unreadable-board`,
 * `unknown-element`, `unknown-patchset`, `unknown-thread`, `thread-closed`, `anchor-mismatch`.
 * Once the question is in the thread, the refusal also carries `detail.threadId` (the thread
 * holding it): `no-harness`, `harness-config` (the settings cannot be used as written),
 * `harness-failed` (the harness's own words), `no-answer` (the turn ended without an answer),
 * `cancelled`. `ask-log`: the log refused an append (`detail.refusal`; `threadId` once it exists).
 * host/asks/explain.ts.
 */
export const AsksExplain = rpcRequest('rennet/asks/explain', AsksExplainParams, answersResult<AsksExplainResult>(), { invalidDetail: { reason: 'invalid' } });

// ─── Forges and exits (host/forge/, host/exits/) ─────────────────────────────────────────────

export const ForgesConfigParams = z.object({
  /** The `rennet.forges` setting, as written (validated by the host; a bad value is reported, never half-used). */
  entries: z.unknown(),
});
export type ForgesConfigParams = z.infer<typeof ForgesConfigParams>;
/** extension → host: the registered forges from settings; sent after start and on every change. The host joins them with RENNET_FORGES. */
export const ForgesConfigure = rpcNotification('rennet/forges/configure', ForgesConfigParams);

export const AuthTokenParams = z.object({ provider: ForgeProvider, host: z.string().min(1) });
export type AuthTokenParams = z.infer<typeof AuthTokenParams>;
/**
 * host → extension: a forge token the editor holds — GitHub: VS Code's GitHub (or GitHub
 * Enterprise) authentication session, without prompting; GitLab: the token "Rennet: Set GitLab
 * Token" stored in SecretStorage. null when it holds none. The token is used for the one forge
 * call and never logged or stored by the host.
 */
export const AuthToken = rpcRequest('rennet/auth/token', AuthTokenParams, answersValue<string | null>());

export const PullRequestListParams = z.object({ repo: RepoDir });
export type PullRequestListParams = z.infer<typeof PullRequestListParams>;
export interface PullRequestSummary {
  number: number;
  title: string;
  author: string;
  headRef: string;
  baseRef: string;
  draft: boolean;
  webUrl: string;
  /** The target to open its review with. */
  target: Extract<Target, { kind: 'pull-request' }>;
}
export interface PullRequestListResult {
  /** The forge repository of the workspace's push remote. */
  repo: { provider: import('./exits').ForgeProvider; host: string; owner: string; repo: string; webUrl: string };
  viewer: string | null;
  open: PullRequestSummary[];
}
/** extension → host: the open requests of the workspace's forge repository (for "Rennet: Review Pull Request"). */
export const PullRequestList = rpcRequest('rennet/pr/list', PullRequestListParams, answersResult<PullRequestListResult>());

export const PullRequestResolveParams = z.object({
  repo: RepoDir,
  /** What the reviewer pasted: `12`, `#12`, `!7`, or the request's URL. */
  input: z.string(),
});
export type PullRequestResolveParams = z.infer<typeof PullRequestResolveParams>;
/** extension → host: a pasted number or URL as a pull-request target of the workspace's forge (refused when it names another repository). */
export const PullRequestResolve = rpcRequest('rennet/pr/resolve', PullRequestResolveParams, answersResult<Extract<Target, { kind: 'pull-request' }>>());

export interface PullRequestFreshness {
  /** The head the session captured. */
  capturedHeadSha: string;
  /** The request's head on the forge now. */
  liveHeadSha: string;
  moved: boolean;
  /**
   * When the live head is an ancestor of the captured one (one's own request after a round, its
   * commits not pushed yet): how many commits the request's head lacks. Absent otherwise.
   */
  unpushed?: number;
  state: 'open' | 'closed' | 'merged';
}
/** extension → host: re-read the request's live head (every exit does first); `moved` marks the session stale. */
export const PullRequestFreshnessGet = rpcRequest('rennet/pr/freshness', SessionIdParams, answersResult<PullRequestFreshness>());

/** extension → host: the exact review that would post now (descriptor, folds, verdict) and any receipt for it. */
export const ExitsPreviewReview = rpcRequest('rennet/exits/previewReview', SessionIdParams, answersResult<import('./exits').ReviewPreview>());

export const ExitsPostReviewParams = z.object({
  sessionId: Id,
  /** The compositionId of the preview the reviewer clicked Post on; a different composition now is refused (stale-composition). */
  compositionId: z.string(),
});
export type ExitsPostReviewParams = z.infer<typeof ExitsPostReviewParams>;
/**
 * extension → host: post the previewed review, exactly once: a receipt or a review carrying its
 * marker is answered instead of posting again; a moved head is refused before any mutation.
 * The receipt is durable when this answers.
 */
export const ExitsPostReview = rpcRequest('rennet/exits/postReview', ExitsPostReviewParams, answersResult<PublishReceipt>());

/** host → extension: a session's review was posted (or found posted): the Hand off view and preview show it. */
export const ExitsPosted = rpcNotification('rennet/exits/posted', PublishReceipt);

export const ExitsPullRequestParams = z.object({
  repo: RepoDir,
  /** The branch to open a request for; absent: the current branch. */
  branch: z.string().optional(),
  base: z.string().optional(),
  /** The reviewer's edits over the drafted title and description. */
  title: z.string().optional(),
  body: z.string().optional(),
  /** The reviewer's harness settings: the Design lens's harness polishes the draft (none: the deterministic draft). */
  harness: HarnessConfig.optional(),
});
export type ExitsPullRequestParams = z.infer<typeof ExitsPullRequestParams>;
export interface OpenPullRequestPreview {
  compositionId: string;
  provider: import('./exits').ForgeProvider;
  destination: { host: string; owner: string; repo: string; remote: string; webUrl: string };
  branch: string;
  base: string;
  title: string;
  body: string;
  /** Where the draft came from: `commits`, `design`, `sequence`, `decisions`, `model`, `edited`. */
  sources: string[];
  /** Whether a model polished the drafted text, and how that went. */
  polish: import('./exits').PrPolish;
  /** The open request for this head and base, which opening reuses; null: one is created. */
  existing: { number: number; url: string } | null;
}
/** extension → host: exactly what "Open Pull Request" would push and submit (destination, branches, title, description); nothing is sent. */
export const ExitsPreviewPullRequest = rpcRequest('rennet/exits/previewPullRequest', ExitsPullRequestParams, answersResult<OpenPullRequestPreview>());

export const ExitsOpenPullRequestParams = ExitsPullRequestParams.extend({
  /** The previewed composition; a different destination, branch or text now is refused (stale-composition) before the push. */
  compositionId: z.string(),
});
export type ExitsOpenPullRequestParams = z.infer<typeof ExitsOpenPullRequestParams>;
export interface OpenPullRequestResult {
  url: string;
  number: number;
  /** An open request for the same head and base was reused. */
  reused: boolean;
  provider: import('./exits').ForgeProvider;
}
/** extension → host: push the branch (`refs/heads/<b>:refs/heads/<b>`, no upstream written) and open or reuse its request. */
export const ExitsOpenPullRequest = rpcRequest('rennet/exits/openPullRequest', ExitsOpenPullRequestParams, answersResult<OpenPullRequestResult>());

// ─── Rounds (own-branch loop) ────────────────────────────────────────────────────────────────

export interface RoundsOrderResult {
  /** The work order as it would go out now, and its digest (Dispatch binds to it). */
  markdown: string;
  digest: string;
  asks: string[];
  /** Where it would run; `workBranch` when the commits go on a sibling (`rennet/<branch>`) rather than the branch. */
  workspace: import('./rounds').RoundWorkspace;
}
export const RoundsOrderParams = SessionIdParams.extend({
  /** How a first bind takes its workspace (the setting `rennet.rounds.workspace`); a recorded binding is never decided again. Default share. */
  workspace: RoundsWorkspaceMode.optional(),
});
export type RoundsOrderParams = z.infer<typeof RoundsOrderParams>;
/** extension → host: the work order a dispatch would send now, or why none can (detail.refusal: no-round-lane | nothing-staged | no-coding-asks). */
export const RoundsOrderGet = rpcRequest('rennet/rounds/order', RoundsOrderParams, answersResult<RoundsOrderResult>());

export const RoundsDispatchParams = z.object({
  sessionId: Id,
  /** The order the reviewer saw; a different one now is refused (stale-composition). */
  digest: z.string(),
  /** `claude-code`, `codex`, or `scripted:<file>` (tests and demos). */
  worker: z.string(),
  /** The reviewer's harness settings: the report seat and the successor's lenses. */
  harness: HarnessConfig,
  /** How a first bind takes its workspace (`rennet.rounds.workspace`). Default share. */
  workspace: RoundsWorkspaceMode.optional(),
});
export type RoundsDispatchParams = z.infer<typeof RoundsDispatchParams>;
/** extension → host: dispatch the staged coding asks as one round; answers once it has started (RoundsChanged follows every phase). */
export const RoundsDispatch = rpcRequest('rennet/rounds/dispatch', RoundsDispatchParams, answersResult<Round>());

export const RoundsRetryParams = z.object({ sessionId: Id, roundId: Id, worker: z.string(), harness: HarnessConfig });
export type RoundsRetryParams = z.infer<typeof RoundsRetryParams>;
/** extension → host: resume a failed round from its last receipt (its worker never runs twice). */
export const RoundsRetry = rpcRequest('rennet/rounds/retry', RoundsRetryParams, answersResult<Round>());

/** extension → host: stop the session's running round (the worker's process group). */
export const RoundsCancel = rpcRequest('rennet/rounds/cancel', SessionIdParams, answersResult<{ cancelled: boolean }>());

/** extension → host: the session's rounds ledger, oldest first. */
export const RoundsList = rpcRequest('rennet/rounds/list', SessionIdParams, answersResult<Round[]>());

export const RoundsChangedParams = z.object({ sessionId: Id, round: Round });
export type RoundsChangedParams = z.infer<typeof RoundsChangedParams>;
/** host → extension: a round passed a receipt (started, a phase, measured, reported, ended). */
export const RoundsChanged = rpcNotification('rennet/rounds/changed', RoundsChangedParams, { maxParamsChars: RPC_BULK_PARAMS_MAX_CHARS });

/**
 * extension → host: land the session's sibling — `git merge --ff-only rennet/<branch>` in the
 * worktree that has the branch out. Params: protocol/rounds.ts `RoundsLandParams`. A refusal by
 * git is a failed Result carrying git's words (capped, LAND_REFUSAL_MAX_CHARS) and nothing changed;
 * under share the answer says there is nothing to land.
 */
export const RoundsLand = rpcRequest('rennet/rounds/land', RoundsLandParams, answersResult<import('./rounds').RoundsLandResult>());

/** extension → host: the session's landing line beside the branch, read from git now (null: nothing to say). */
export const RoundsLandingGet = rpcRequest('rennet/rounds/landing', SessionIdParams, answersResult<import('./rounds').RoundsLanding>());

/**
 * extension → host: the files a round's commits changed (`git diff --raw` of range.from → range.to
 * in its bound workspace), for its read-only round diff. Params: protocol/rounds.ts `RoundRef`. A
 * round without commits of its own (no range, or from = to) is refused `not-found`.
 */
export const RoundsDiffFiles = rpcRequest('rennet/rounds/diffFiles', RoundRef, answersResult<import('./rounds').RoundDiffFiles>());

/**
 * extension → host: one side of one file of a round's diff (`git cat-file blob <commit>:<path>`,
 * bounded as every blob read is). Only a file that round changed, on a side it has. Params:
 * protocol/rounds.ts `RoundBlobParams`.
 */
export const RoundsReadBlob = rpcRequest('rennet/rounds/readBlob', RoundBlobParams, answersResult<BlobContent>());

/** extension → host: archive the session; its sibling is collected only when the branch (or a remote's ref of it) contains its tip. */
export const SessionArchive = rpcRequest('rennet/session/archive', SessionIdParams, answersResult<import('./rounds').SessionArchiveResult>());
