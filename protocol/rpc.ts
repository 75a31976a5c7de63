import { NotificationType, RequestType } from 'vscode-jsonrpc';
import type { Result } from './result';
import type { Target, Session, SessionSnapshot, BranchList } from './session';
import type { Patchset, Side } from './patchset';
import type { Lens } from './board';
import type { ReviewReport } from './review';

/**
 * The extension ⇄ host contract. One constant per message, named `rennet/<domain>/<verb>`.
 * Every request answers a Result so the caller decides on a typed failure; transport errors
 * (host gone) surface as JSON-RPC errors instead.
 */

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
export const HostHello = new RequestType<Record<string, never>, HostInfo, void>('rennet/host/hello');

export interface ListBranchesParams { repo: string }
/** extension → host: local branches for the picker (current first) and the default base. */
export const RepoListBranches = new RequestType<ListBranchesParams, Result<BranchList>, void>('rennet/repo/listBranches');

export interface OpenReviewParams {
  repo: string;
  target: Target;
  /** Per-capture overrides from settings. */
  maxFileBytes?: number;
}
export interface OpenReviewResult {
  snapshot: SessionSnapshot;
  /** True when an existing session was reattached. */
  reattached: boolean;
  /** True when this open captured a patchset the store did not hold yet. */
  captured: boolean;
}
/** extension → host: find or create the session for a target and capture it if needed. */
export const ReviewOpen = new RequestType<OpenReviewParams, Result<OpenReviewResult>, void>('rennet/review/open');

export interface SessionIdParams { sessionId: string }
/** extension → host: the full snapshot of one session (after a reload or a host restart). */
export const SessionGet = new RequestType<SessionIdParams, Result<SessionSnapshot>, void>('rennet/session/get');
/** extension → host: every session the store holds, most recently updated first. */
export const SessionList = new RequestType<Record<string, never>, Session[], void>('rennet/session/list');

export interface PatchsetIdParams { patchsetId: string }
/** extension → host: one patchset with its hunks. */
export const PatchsetGet = new RequestType<PatchsetIdParams, Result<Patchset>, void>('rennet/patchset/get');

export interface ReadBlobParams { patchsetId: string; path: string; side: Side }
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
export const PatchsetReadBlob = new RequestType<ReadBlobParams, Result<BlobContent>, void>('rennet/patchset/readBlob');

/** host → extension: a session changed; the extension fetches or receives its snapshot. */
export const SessionChanged = new NotificationType<SessionSnapshot>('rennet/session/changed');

/** host → extension: a line for the Rennet output channel (never secrets). */
export const HostLog = new NotificationType<{ level: 'info' | 'warn' | 'error'; message: string }>('rennet/host/log');


// ─── Language models through VS Code (vscode.lm) ────────────────────────────────────────────
//
// The host runs the tool loop of a `vscode-lm` seat; each round trip asks the extension for ONE
// model response with these server→client requests. Everything on the wire is JSON-safe: the
// extension rebuilds LanguageModelChatMessage / TextPart / ToolCallPart / ToolResultPart from it.
// Cancellation: the JSON-RPC cancellation token of the request ($/cancelRequest), which the
// extension links to the CancellationToken it passes to `model.sendRequest`.

/** A tool call the model asked for. `input` is the model's JSON object, unvalidated. */
export interface LmToolCall {
  callId: string;
  name: string;
  input: Record<string, unknown>;
}

/** The answer to one tool call. An error result reaches the model with the text prefixed `Error: `. */
export interface LmToolResult {
  callId: string;
  text: string;
  isError: boolean;
}

/** One entry of the transcript the host keeps per seat thread. */
export type LmMessage =
  | { role: 'user'; text: string }
  | { role: 'assistant'; text: string; toolCalls: LmToolCall[] }
  /** The results of the previous assistant message's tool calls (sent as a User message). */
  | { role: 'tool-results'; results: LmToolResult[] };

/** A tool offered to the model: exactly a seat's tool (name, description, JSON schema). */
export interface LmTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export interface LmChatParams {
  /** The seat asking, e.g. `sequence:drafter` (for logs and the consent justification). */
  seatId: string;
  /** `lm.selectChatModels` selector parts; `model` is a model id. All absent: the first model VS Code lists. */
  vendor?: string;
  family?: string;
  model?: string;
  messages: LmMessage[];
  tools: LmTool[];
  /** Shown by VS Code when it asks the user's consent to use the model. */
  justification: string;
}

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
export const LmChat = new RequestType<LmChatParams, LmChatResult, void>('rennet/lm/chat');

export interface LmModelsParams {
  vendor?: string;
  family?: string;
}

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
export const LmModels = new RequestType<LmModelsParams, LmModelInfo[], void>('rennet/lm/models');

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
export const HarnessDiscover = new RequestType<Record<string, never>, Result<CliHarnessInfo[]>, void>('rennet/harness/discover');

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
export const HarnessDiscoverLocal = new RequestType<Record<string, never>, Result<LocalServerInfo[]>, void>('rennet/harness/discoverLocal');

export interface DraftLensParams {
  sessionId: string;
  lens: Lens;
  harness: 'vscode-lm';
  /** The vscode.lm selector (from `rennet.harness.vscodeLm.vendor` / `family` when the caller has none). */
  vendor?: string;
  family?: string;
  /** A model id, to pin one model of the vendor. */
  model?: string;
}

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
export const ReviewDraftLens = new RequestType<DraftLensParams, Result<DraftLensResult>, void>('rennet/review/draftLens');

export interface RunLensesParams {
  sessionId: string;
  harness: import('./review').HarnessConfig;
}
/**
 * extension → host: draft a new generation of the five lens boards over the session's active
 * patchset with the harnesses the settings name; answers at once with the generation id, then
 * pushes `rennet/generation/changed` as lanes and boards move. Keys ride this request only.
 */
export const ReviewRunLenses = new RequestType<RunLensesParams, Result<{ generationId: string }>, void>('rennet/review/runLenses');

/**
 * extension → host: "Re-review Since Last Review" of a pull-request session. The host reads the
 * signed-in reviewer's earlier review, checks its commit against the head, judges each earlier
 * item with the closure seat (Flagged compiler's harness, else Design's), and drafts a generation
 * over the fix delta (or the whole change, said); answers once that generation is filed (null when
 * nothing changed since the review), then pushes `rennet/generation/changed` as for runLenses.
 * The next post opens with the answer's `prior.line`. Keys ride this request only.
 */
export const RereviewRun = new RequestType<RunLensesParams, Result<{ generationId: string | null; prior: import('./review').PriorReview }>, void>('rennet/rereview/run');

export interface GetGenerationParams {
  sessionId: string;
  /** A frozen generation to read; omitted: the live one. */
  generationId?: string;
}
/** extension → host: a generation whole (null when the session has none yet). */
export const GenerationGet = new RequestType<GetGenerationParams, Result<import('./review').GenerationSnapshot | null>, void>('rennet/generation/get');

/** host → extension: a generation changed (a lane moved, a board was written); sent whole, throttled. */
export const GenerationChanged = new NotificationType<import('./review').GenerationSnapshot>('rennet/generation/changed');

// ─── Asks: the durable per-session ask log (protocol/asks.ts, host/asks/) ────────────────────
//
// Every reviewer act on asks is one command that appends one event to the session's log; the
// projection is the fold of that log and is pushed whole after every append. A refusal appends
// nothing and answers a RennetError with `detail.refusal` = an AskRefusalCode.

export interface AsksCommandParams {
  sessionId: string;
  command: import('./asks').AskCommand;
}
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
export const AsksCommand = new RequestType<AsksCommandParams, Result<AsksCommandResult>, void>('rennet/asks/command');

export interface AsksUndoParams {
  sessionId: string;
  receipt: import('./asks').AskReceipt;
}
/** extension → host: append a receipt's inverse (the next append; nothing is deleted). Answers a receipt that redoes. */
export const AsksUndo = new RequestType<AsksUndoParams, Result<AsksCommandResult>, void>('rennet/asks/undo');

/** extension → host: the session's current ask projection (the fold of its log; reads never write). */
export const AsksGet = new RequestType<SessionIdParams, Result<import('./asks').AskProjection>, void>('rennet/asks/get');

export interface AsksChangedParams {
  sessionId: string;
  /** The seq of the append this projection includes. */
  seq: number;
  projection: import('./asks').AskProjection;
}
/** host → extension: the whole ask projection of a session, after every append to its log. */
export const AsksChanged = new NotificationType<AsksChangedParams>('rennet/asks/changed');

export interface AsksExplainParams {
  sessionId: string;
  /** The span of board prose to explain; its generation must belong to the session. */
  anchor: import('./asks').QuoteAnchor;
  /** An open thread on that anchor to ask in; omitted: the host opens one (quoteOpen). */
  threadId?: string;
  /** The harnesses the settings name (the anchor's lens picks its harness, as for a draft). */
  harness: import('./review').HarnessConfig;
}
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
export const AsksExplain = new RequestType<AsksExplainParams, Result<AsksExplainResult>, void>('rennet/asks/explain');

// ─── Forges and exits (host/forge/, host/exits/) ─────────────────────────────────────────────

export interface ForgesConfigParams {
  /** The `rennet.forges` setting, as written (validated by the host; a bad value is reported, never half-used). */
  entries: unknown;
}
/** extension → host: the registered forges from settings; sent after start and on every change. The host joins them with RENNET_FORGES. */
export const ForgesConfigure = new NotificationType<ForgesConfigParams>('rennet/forges/configure');

export interface AuthTokenParams {
  provider: import('./exits').ForgeProvider;
  host: string;
}
/**
 * host → extension: a forge token the editor holds — GitHub: VS Code's GitHub (or GitHub
 * Enterprise) authentication session, without prompting; GitLab: the token "Rennet: Set GitLab
 * Token" stored in SecretStorage. null when it holds none. The token is used for the one forge
 * call and never logged or stored by the host.
 */
export const AuthToken = new RequestType<AuthTokenParams, string | null, void>('rennet/auth/token');

export interface PullRequestListParams {
  repo: string;
}
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
export const PullRequestList = new RequestType<PullRequestListParams, Result<PullRequestListResult>, void>('rennet/pr/list');

export interface PullRequestResolveParams {
  repo: string;
  /** What the reviewer pasted: `12`, `#12`, `!7`, or the request's URL. */
  input: string;
}
/** extension → host: a pasted number or URL as a pull-request target of the workspace's forge (refused when it names another repository). */
export const PullRequestResolve = new RequestType<PullRequestResolveParams, Result<Extract<Target, { kind: 'pull-request' }>>, void>('rennet/pr/resolve');

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
export const PullRequestFreshnessGet = new RequestType<SessionIdParams, Result<PullRequestFreshness>, void>('rennet/pr/freshness');

/** extension → host: the exact review that would post now (descriptor, folds, verdict) and any receipt for it. */
export const ExitsPreviewReview = new RequestType<SessionIdParams, Result<import('./exits').ReviewPreview>, void>('rennet/exits/previewReview');

export interface ExitsPostReviewParams {
  sessionId: string;
  /** The compositionId of the preview the reviewer clicked Post on; a different composition now is refused (stale-composition). */
  compositionId: string;
}
/**
 * extension → host: post the previewed review, exactly once: a receipt or a review carrying its
 * marker is answered instead of posting again; a moved head is refused before any mutation.
 * The receipt is durable when this answers.
 */
export const ExitsPostReview = new RequestType<ExitsPostReviewParams, Result<import('./exits').PublishReceipt>, void>('rennet/exits/postReview');

/** host → extension: a session's review was posted (or found posted): the Hand off view and preview show it. */
export const ExitsPosted = new NotificationType<import('./exits').PublishReceipt>('rennet/exits/posted');

export interface ExitsPullRequestParams {
  repo: string;
  /** The branch to open a request for; absent: the current branch. */
  branch?: string;
  base?: string;
  /** The reviewer's edits over the drafted title and description. */
  title?: string;
  body?: string;
  /** The reviewer's harness settings: the Design lens's harness polishes the draft (none: the deterministic draft). */
  harness?: import('./review').HarnessConfig;
}
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
export const ExitsPreviewPullRequest = new RequestType<ExitsPullRequestParams, Result<OpenPullRequestPreview>, void>('rennet/exits/previewPullRequest');

export interface ExitsOpenPullRequestParams extends ExitsPullRequestParams {
  /** The previewed composition; a different destination, branch or text now is refused (stale-composition) before the push. */
  compositionId: string;
}
export interface OpenPullRequestResult {
  url: string;
  number: number;
  /** An open request for the same head and base was reused. */
  reused: boolean;
  provider: import('./exits').ForgeProvider;
}
/** extension → host: push the branch (`refs/heads/<b>:refs/heads/<b>`, no upstream written) and open or reuse its request. */
export const ExitsOpenPullRequest = new RequestType<ExitsOpenPullRequestParams, Result<OpenPullRequestResult>, void>('rennet/exits/openPullRequest');

// ─── Rounds (own-branch loop) ────────────────────────────────────────────────────────────────

export interface RoundsOrderResult {
  /** The work order as it would go out now, and its digest (Dispatch binds to it). */
  markdown: string;
  digest: string;
  asks: string[];
  /** Where it would run; `workBranch` when the commits go on a sibling (`rennet/<branch>`) rather than the branch. */
  workspace: import('./rounds').RoundWorkspace;
}
export interface RoundsOrderParams extends SessionIdParams {
  /** How a first bind takes its workspace (the setting `rennet.rounds.workspace`); a recorded binding is never decided again. Default share. */
  workspace?: import('./rounds').RoundsWorkspaceMode;
}
/** extension → host: the work order a dispatch would send now, or why none can (detail.refusal: no-round-lane | nothing-staged | no-coding-asks). */
export const RoundsOrderGet = new RequestType<RoundsOrderParams, Result<RoundsOrderResult>, void>('rennet/rounds/order');

export interface RoundsDispatchParams {
  sessionId: string;
  /** The order the reviewer saw; a different one now is refused (stale-composition). */
  digest: string;
  /** `claude-code`, `codex`, or `scripted:<file>` (tests and demos). */
  worker: string;
  /** The reviewer's harness settings: the report seat and the successor's lenses. */
  harness: import('./review').HarnessConfig;
  /** How a first bind takes its workspace (`rennet.rounds.workspace`). Default share. */
  workspace?: import('./rounds').RoundsWorkspaceMode;
}
/** extension → host: dispatch the staged coding asks as one round; answers once it has started (RoundsChanged follows every phase). */
export const RoundsDispatch = new RequestType<RoundsDispatchParams, Result<import('./rounds').Round>, void>('rennet/rounds/dispatch');

export interface RoundsRetryParams {
  sessionId: string;
  roundId: string;
  worker: string;
  harness: import('./review').HarnessConfig;
}
/** extension → host: resume a failed round from its last receipt (its worker never runs twice). */
export const RoundsRetry = new RequestType<RoundsRetryParams, Result<import('./rounds').Round>, void>('rennet/rounds/retry');

/** extension → host: stop the session's running round (the worker's process group). */
export const RoundsCancel = new RequestType<SessionIdParams, Result<{ cancelled: boolean }>, void>('rennet/rounds/cancel');

/** extension → host: the session's rounds ledger, oldest first. */
export const RoundsList = new RequestType<SessionIdParams, Result<import('./rounds').Round[]>, void>('rennet/rounds/list');

export interface RoundsChangedParams {
  sessionId: string;
  round: import('./rounds').Round;
}
/** host → extension: a round passed a receipt (started, a phase, measured, reported, ended). */
export const RoundsChanged = new NotificationType<RoundsChangedParams>('rennet/rounds/changed');

/**
 * extension → host: land the session's sibling — `git merge --ff-only rennet/<branch>` in the
 * worktree that has the branch out. Params: protocol/rounds.ts `RoundsLandParams`. A refusal by
 * git is a failed Result carrying git's words (capped, LAND_REFUSAL_MAX_CHARS) and nothing changed;
 * under share the answer says there is nothing to land.
 */
export const RoundsLand = new RequestType<import('./rounds').RoundsLandParams, Result<import('./rounds').RoundsLandResult>, void>('rennet/rounds/land');

/** extension → host: the session's landing line beside the branch, read from git now (null: nothing to say). */
export const RoundsLandingGet = new RequestType<SessionIdParams, Result<import('./rounds').RoundsLanding>, void>('rennet/rounds/landing');

/**
 * extension → host: the files a round's commits changed (`git diff --raw` of range.from → range.to
 * in its bound workspace), for its read-only round diff. Params: protocol/rounds.ts `RoundRef`. A
 * round without commits of its own (no range, or from = to) is refused `not-found`.
 */
export const RoundsDiffFiles = new RequestType<import('./rounds').RoundRef, Result<import('./rounds').RoundDiffFiles>, void>('rennet/rounds/diffFiles');

/**
 * extension → host: one side of one file of a round's diff (`git cat-file blob <commit>:<path>`,
 * bounded as every blob read is). Only a file that round changed, on a side it has. Params:
 * protocol/rounds.ts `RoundBlobParams`.
 */
export const RoundsReadBlob = new RequestType<import('./rounds').RoundBlobParams, Result<BlobContent>, void>('rennet/rounds/readBlob');

/** extension → host: archive the session; its sibling is collected only when the branch (or a remote's ref of it) contains its tip. */
export const SessionArchive = new RequestType<SessionIdParams, Result<import('./rounds').SessionArchiveResult>, void>('rennet/session/archive');
