import { CancellationTokenSource, createConnection, ProposedFeatures } from 'vscode-languageserver/node';
import type { NotificationType, RequestParam } from 'vscode-jsonrpc';
import {
  AuthToken,
  HarnessDiscover,
  HarnessDiscoverLocal,
  HostHello,
  HostLog,
  LmChat,
  LmModels,
  GenerationChanged,
  GenerationDeltaPushed,
  GenerationGet,
  ReviewDraftLens,
  ReviewRunLenses,
  type DraftLensParams,
  type DraftLensResult,
  type LmModelInfo,
  PatchsetGet,
  PatchsetReadBlob,
  RepoListBranches,
  ReviewOpen,
  SessionChanged,
  SessionGet,
  SessionList,
  type HostInfo,
} from '../protocol/rpc';
import { err, ok, rennetError, type Result } from '../protocol/result';
import { rpcEdge, unknownNotificationLogger } from '../protocol/rpcEdge';
import { discoverCliHarnesses, discoverLocalModels } from './harness/discover';
import { singleLensAssignment, VscodeLmHarness, type LmAsk } from './harness/vscodeLm';
import { runReview } from './review/command';
import { assignmentFromConfig, type HarnessConfigPorts } from './harness/harnessConfig';
import { LensRunner } from './review/runner';
import { reviewDeps } from './review/seams';
import { resolveStoreDir } from './storeDir';
import { ReviewService } from './service';
import { forgeAdapter } from './forge/adapters';
import { ForgeRegistryHolder, ForgeService } from './forge/service';
import { Store } from './store';
import { HOST_VERSION } from './version';

/**
 * The sidecar host: a Node process the extension starts over IPC. It never imports `vscode`;
 * all state lives in the store, so a restarted host reads back exactly what the last one left.
 */
const connection = createConnection(ProposedFeatures.all);
/**
 * Sends a notification. It is one-way: one the connection cannot write (the extension went away,
 * and the host ends with it) is dropped here, not left as an unhandled rejection that would crash
 * the host before its own shutdown.
 */
function notify<P>(type: NotificationType<P>, params: RequestParam<P>): void {
  connection.sendNotification(type, params).catch(() => undefined);
}
// Every message is received through the edge (protocol/rpcEdge.ts): its params are checked against
// the message's schema before the handler runs, and a handler's throw is answered as a typed error.
// Requests of no known method are answered MethodNotFound by vscode-jsonrpc; notifications are logged here.
const edge = rpcEdge(connection, (level, message) => hostLog(level, message));
connection.onNotification(unknownNotificationLogger((level, message) => hostLog(level, message)));
const storeDir = resolveStoreDir(process.argv, process.env);
// Forges: RENNET_FORGES joined with the rennet.forges setting the extension sends; credentials
// from the editor (asked per use, never kept), the environment, then the gh / glab CLIs.
const forgeRegistry = new ForgeRegistryHolder(process.env);
const forges = new ForgeService(
  forgeRegistry,
  {
    env: process.env,
    cli: process.env.RENNET_FORGE_CLI_TOKENS !== '0',
    editor: async (provider, host) => {
      try {
        return await connection.sendRequest(AuthToken, { provider, host });
      } catch {
        return null; // an extension that cannot answer holds no token
      }
    },
  },
  forgeAdapter,
);
const ready = Store.open(storeDir).then((store) => {
  const service = new ReviewService({ store, pullRequests: forges.pullRequests() });
  return { store, service, runner: lensRunner(store, service) };
});

ready.catch((error: unknown) => {
  notify(HostLog, { level: 'error', message: `could not open the store at ${storeDir}: ${(error as Error).message}` });
});

connection.onInitialize(() => ({ capabilities: {}, serverInfo: { name: 'rennet-host', version: HOST_VERSION } }));
// The client's `initialized` asks nothing of the host; handled so it is not logged as unknown.
connection.onInitialized(() => undefined);

edge.request(HostHello, async (): Promise<HostInfo> => {
  const { store, service } = await ready;
  return { version: HOST_VERSION, pid: process.pid, storeDir, storeSchema: store.schemaVersion, sessions: service.listSessions().length };
});

edge.request(RepoListBranches, async (params) => (await ready).service.listBranches(params.repo));

edge.request(ReviewOpen, async (params) => {
  const { service } = await ready;
  const result = await service.openReview(params);
  if (result.ok) {
    const verb = result.value.reattached ? 'reattached' : 'created';
    notify(HostLog, {
      level: 'info',
      message: `${verb} session ${result.value.snapshot.session.id}; patchset ${result.value.snapshot.session.activePatchsetId}${result.value.captured ? ' (new capture)' : ' (already stored)'}`,
    });
    notify(SessionChanged, result.value.snapshot);
  }
  return result;
});

edge.request(SessionGet, async (params) => (await ready).service.getSnapshot(params.sessionId));
edge.request(SessionList, async () => (await ready).service.listSessions());
edge.request(PatchsetGet, async (params) => (await ready).service.getPatchset(params.patchsetId));
edge.request(PatchsetReadBlob, async (params) => {
  try {
    return await (await ready).service.readBlob(params);
  } catch (error) {
    return err(rennetError('git-failed', (error as Error).message));
  }
});

edge.request(HarnessDiscover, async () => {
  try {
    const found = await discoverCliHarnesses();
    return ok(found.map((h) => ({ kind: h.kind, available: h.available, path: h.available ? h.bin : null, version: h.version, reason: h.reason })));
  } catch (error) {
    return err(rennetError('invalid-request', `CLI discovery failed: ${(error as Error).message}`));
  }
});

edge.request(HarnessDiscoverLocal, async () => {
  try {
    return ok(await discoverLocalModels());
  } catch (error) {
    return err(rennetError('invalid-request', `local model discovery failed: ${(error as Error).message}`));
  }
});

// ─── vscode-lm: a lens drafted by a VS Code chat model (host/harness/vscodeLm.ts) ─────────────

/** One model response through the extension; the signal cancels the request's JSON-RPC token. */
const askExtension: LmAsk = async (params, signal) => {
  const cancel = new CancellationTokenSource();
  const onAbort = () => cancel.cancel();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await connection.sendRequest(LmChat, params, cancel.token);
  } finally {
    signal.removeEventListener('abort', onAbort);
    cancel.dispose();
  }
};

edge.request(ReviewDraftLens, async (params: DraftLensParams, token): Promise<Result<DraftLensResult>> => {
  const { service, store, runner } = await ready;
  const snapshot = service.getSnapshot(params.sessionId);
  if (!snapshot.ok) return snapshot;
  if (!snapshot.value.patchset) return err(rennetError('not-found', `session ${params.sessionId} has no captured patchset to draft`));
  const patchset = service.getPatchset(snapshot.value.patchset.id);
  if (!patchset.ok) return patchset;
  const selector = { ...(params.vendor ? { vendor: params.vendor } : {}), ...(params.family ? { family: params.family } : {}) };
  let listed: LmModelInfo[];
  try {
    listed = await connection.sendRequest(LmModels, selector);
  } catch (error) {
    return err(rennetError('invalid-request', `could not list VS Code's language models: ${(error as Error).message}`));
  }
  const models = listed.filter((m) => !params.model || m.id === params.model);
  const model = models[0];
  if (!model) {
    const wanted = [params.vendor && `vendor "${params.vendor}"`, params.family && `family "${params.family}"`, params.model && `id "${params.model}"`].filter(Boolean).join(', ');
    return err(
      rennetError(
        'not-found',
        `no VS Code language model matches ${wanted || 'any selector'}; install and sign in to a model provider (such as GitHub Copilot), or change rennet.harness.vscodeLm.vendor / family`,
      ),
    );
  }
  // A second draft (or a lens run) of the same session is refused, not interleaved.
  const busy = runner.reserve(params.sessionId, `a ${params.lens} draft`);
  if (busy) return err(rennetError('invalid-request', busy));
  const abort = new AbortController();
  const cancelled = token.onCancellationRequested(() => abort.abort());
  try {
    const harness = new VscodeLmHarness({ ask: askExtension, model, signal: abort.signal });
    const log = (text: string) => {
      for (const line of text.split('\n')) if (line.trim()) notify(HostLog, { level: 'info', message: line.trimEnd() });
    };
    const workspace = snapshot.value.session.repoRoot;
    const report = await runReview(
      { patchset: patchset.value, sessionId: params.sessionId, workspace, harnesses: singleLensAssignment(params.lens, harness), jsonFile: null, htmlFile: null, store },
      reviewDeps(workspace, { stdout: log, stderr: log }),
    );
    return ok({ model, report });
  } catch (error) {
    return err(rennetError('invalid-request', `the ${params.lens} draft could not run: ${(error as Error).message}`));
  } finally {
    cancelled.dispose();
    runner.release(params.sessionId);
    // The draft filed a generation: the session's panel shows it.
    runner.publishCurrent(params.sessionId);
  }
});

// ─── Lens runs: the five boards of a generation, drafted in the background ───────────────────

function hostLog(level: 'info' | 'warn' | 'error', text: string): void {
  for (const line of text.split('\n')) if (line.trim()) notify(HostLog, { level, message: line.trimEnd() });
}

/** How a HarnessConfig finds its harnesses here: CLI discovery, and VS Code's models through the extension. */
function harnessPorts(signal: AbortSignal): HarnessConfigPorts {
  return {
    discover: () => discoverCliHarnesses(),
    discoverLocal: () => discoverLocalModels(),
    // An extension that cannot answer (or a client with no handler) lists no models.
    listLmModels: (selector) => connection.sendRequest(LmModels, selector),
    lmAsk: askExtension,
    signal,
  };
}

function lensRunner(store: Store, service: ReviewService): LensRunner {
  return new LensRunner({
    store,
    service,
    runDeps: (workspace) => reviewDeps(workspace, { stdout: (t) => hostLog('info', t), stderr: (t) => hostLog('info', t) }),
    assign: (config, signal) => assignmentFromConfig(config, harnessPorts(signal)),
    publish: (snapshot) => notify(GenerationChanged, snapshot),
    publishDelta: (delta) => notify(GenerationDeltaPushed, delta),
    log: hostLog,
  });
}

edge.request(ReviewRunLenses, async (params) => (await ready).runner.runLenses(params));
edge.request(GenerationGet, async (params) => {
  try {
    return (await ready).runner.get(params);
  } catch (error) {
    return err(rennetError('store-failed', `the generation could not be read: ${(error as Error).message}`));
  }
});

connection.onShutdown(async () => {
  const opened = await ready.catch(() => undefined);
  opened?.runner.dispose();
  opened?.store.close();
});

// ─── Asks: the durable per-session ask log (host/asks/) ─────────────────────────────────────
// One block, its imports included, so it stays apart from the handlers above. Every append
// (command or undo) pushes the session's whole projection; a refusal appends and pushes nothing.
import { AsksChanged, AsksCommand, AsksExplain, AsksGet, AsksUndo } from '../protocol/rpc';
import { explainSpan } from './asks/explain';
import { AskLog } from './asks/log';
import { lensHarnessFromConfig } from './harness/harnessConfig';

let askLog: AskLog | undefined;
async function asks(): Promise<AskLog> {
  const { store } = await ready;
  askLog ??= new AskLog(store, {
    onAppend: ({ sessionId, seq, projection }) => notify(AsksChanged, { sessionId, seq, projection }),
    onSkipped: (sessionId, seq, reason) => notify(HostLog, { level: 'warn', message: `ask log of session ${sessionId}: event #${seq} does not apply and is skipped (${reason})` }),
  });
  return askLog;
}

edge.request(AsksCommand, async (params) => (await asks()).command(params.sessionId, params.command, new Date().toISOString()));
edge.request(AsksUndo, async (params) => (await asks()).undo(params.sessionId, params.receipt, new Date().toISOString()));
edge.request(AsksGet, async (params) => (await asks()).projection(params.sessionId));

// One read-only turn of the anchor lens's harness; the thread's appends push AsksChanged as above.
edge.request(AsksExplain, async (params, token) => {
  const [{ store }, log] = await Promise.all([ready, asks()]);
  const abort = new AbortController();
  const cancelled = token.onCancellationRequested(() => abort.abort());
  try {
    return await explainSpan(
      {
        store,
        asks: log,
        harnessFor: (config, lens, signal) => lensHarnessFromConfig(config, lens, harnessPorts(signal)),
        now: () => new Date().toISOString(),
        log: hostLog,
      },
      params,
      abort.signal,
    );
  } catch (error) {
    return err(rennetError('invalid-request', `the explanation could not run: ${(error as Error).message}`));
  } finally {
    cancelled.dispose();
  }
});

// ─── Forges and exits: pull-request targets, the review preview, Post review ──────────────────
import {
  ExitsOpenPullRequest,
  ExitsPosted,
  ExitsPostReview,
  ExitsPreviewPullRequest,
  ExitsPreviewReview,
  ForgesConfigure,
  PullRequestFreshnessGet,
  PullRequestList,
  PullRequestResolve,
  type ExitsPullRequestParams,
} from '../protocol/rpc';
import { branchOpenPrInput, openPullRequest, previewPullRequest, type OpenPrInput } from './exits/openPr';
import { openRepo } from './capture/repo';
import { sessionPublisher, type Publisher } from './exits/publish';
import { currentGenerationId } from './generation/generationSnapshot';

edge.notification(ForgesConfigure, (params) => forgeRegistry.configure(params.entries));

let publisher: Publisher | undefined;
async function publishing(): Promise<Publisher> {
  const [{ store, service }, log] = await Promise.all([ready, asks()]);
  publisher ??= sessionPublisher(store, service, log, () => forges.access());
  return publisher;
}

edge.request(PullRequestList, async (params) => forges.listOpen(params.repo));
edge.request(PullRequestResolve, async (params) => forges.resolve(params.repo, params.input));
edge.request(PullRequestFreshnessGet, async (params) => {
  const { service } = await ready;
  const snapshot = service.getSnapshot(params.sessionId);
  if (!snapshot.ok) return snapshot;
  if (!snapshot.value.patchset) return err(rennetError('invalid-request', 'the session has no capture yet'));
  return forges.freshness(snapshot.value.session, snapshot.value.patchset.head, snapshot.value.pullRequest?.entry === 'own');
});
edge.request(ExitsPreviewReview, async (params) => {
  try {
    return (await publishing()).preview(params.sessionId);
  } catch (error) {
    return err(rennetError('store-failed', `the review could not be composed: ${(error as Error).message}`));
  }
});
edge.request(ExitsPostReview, async (params) => {
  const result = await (await publishing()).post(params.sessionId, params.compositionId);
  if (result.ok) {
    hostLog('info', `review ${result.value.reused ? 'found already posted' : 'posted'}: ${result.value.url} (${result.value.event}, ${result.value.comments} comments)`);
    notify(ExitsPosted, result.value);
  }
  return result;
});

/** An own-branch request's input: the branch's own review (if any) feeds the draft; the Design lens's harness polishes it. */
async function openPrInput(params: ExitsPullRequestParams): Promise<OpenPrInput> {
  const { store, service } = await ready;
  const repo = await openRepo(params.repo);
  const root = repo.ok ? repo.value.root : params.repo;
  const config = params.harness;
  return branchOpenPrInput(
    { store, findSession: (r, t) => service.findSession(r, t) },
    root,
    { repoDir: params.repo, branch: params.branch, base: params.base, title: params.title, body: params.body },
    config ? { harness: (signal) => lensHarnessFromConfig(config, 'design', harnessPorts(signal)), log: hostLog } : null,
  );
}
edge.request(ExitsPreviewPullRequest, async (params) => {
  const access = forges.access();
  return access.ok ? previewPullRequest(await openPrInput(params), access.value) : access;
});
edge.request(ExitsOpenPullRequest, async (params) => {
  const access = forges.access();
  if (!access.ok) return access;
  const result = await openPullRequest({ ...(await openPrInput(params)), expectComposition: params.compositionId }, access.value);
  if (result.ok) hostLog('info', `${result.value.reused ? 'reused' : 'opened'} ${result.value.url}`);
  return result;
});

// ─── Merge gates (host/forge/gates.ts): a request's gates by name, and a merge pinned to its head ─
import { GatesMerge, GatesRead } from '../protocol/gatesRpc';
import { mergeWhenGatesPass, readGatesReport } from './forge/gates';

/** The forge access, repository and request of a pull-request session. */
async function gatesSession(sessionId: string) {
  const { service } = await ready;
  const snapshot = service.getSnapshot(sessionId);
  if (!snapshot.ok) return snapshot;
  const { session } = snapshot.value;
  if (session.target.kind !== 'pull-request') return err(rennetError('invalid-request', 'this session reviews no pull or merge request'));
  const access = forges.access();
  if (!access.ok) return access;
  return ok({ access: access.value, repoRoot: session.repoRoot, target: session.target });
}
edge.request(GatesRead, async (params) => {
  const found = await gatesSession(params.sessionId);
  return found.ok ? readGatesReport(found.value.access, found.value.repoRoot, found.value.target) : found;
});
edge.request(GatesMerge, async (params) => {
  const found = await gatesSession(params.sessionId);
  if (!found.ok) return found;
  const result = await mergeWhenGatesPass(found.value.access, found.value.repoRoot, found.value.target, { expectHead: params.expectHead, method: params.method });
  hostLog('info', result.ok ? `merged ${result.value.url} at ${result.value.head} (${result.value.method})` : `merge refused (${result.error.code}): ${result.error.message}`);
  return result;
});

connection.listen();

// ─── Rounds: the own-branch loop (host/rounds/) ──────────────────────────────────────────────
// One runner per host; every receipt pushes RoundsChanged. A round the store says is running when
// the host starts has no process driving it: it is settled failed (retryable) on first use.
import { RoundsCancel, RoundsChanged, RoundsDispatch, RoundsLand, RoundsLandingGet, RoundsList, RoundsOrderGet, RoundsRetry, SessionArchive, type RoundsDispatchParams } from '../protocol/rpc';
import { RoundRunner, type RoundContext } from './rounds/runner';
import { bindWorkspace } from './rounds/workspace';
import { landingFor, landWorkBranch } from './rounds/landing';
import { archiveSession, sessionPatchsetIds } from './rounds/archive';
import { ROUNDS_WORKSPACE_DEFAULT, type RoundsWorkspaceMode } from '../protocol/rounds';
import { RoundsDiffFiles, RoundsReadBlob } from '../protocol/rpc';
import { readRoundBlob, roundDiffFiles } from './rounds/roundDiff';
import { workerFromFlag } from './rounds/workers';
import { sweepAtStart } from './rounds/sweep';
import type { HarnessConfig } from '../protocol/review';

/** The sweep's lines go to the host log and to stderr (paths and branch names only). */
function sweepLog(level: 'info' | 'warn', line: string): void {
  hostLog(level, line);
  process.stderr.write(`rennet host: ${line}\n`);
}
// The daemon-start sweep (host/rounds/sweep.ts): once per host start, never from a bind. Every bind
// waits for it (roundsRunner), so it never collects a sibling a bind is about to take.
const startSweep: Promise<void> = ready
  .then(
    ({ store }) => sweepAtStart(store, { dataDir: store.dir, log: sweepLog }).then(() => undefined),
    () => undefined, // the store did not open: that is already logged, and nothing could be swept
  )
  .catch((error: unknown) => sweepLog('warn', `start sweep: stopped: ${(error as Error).message}`));

let roundRunner: RoundRunner | undefined;
/** The workspace mode the extension last sent for each session (`rennet.rounds.workspace`): it decides only a first bind. */
const workspaceModes = new Map<string, RoundsWorkspaceMode>();
function noteWorkspaceMode(sessionId: string, mode: RoundsWorkspaceMode | undefined): void {
  workspaceModes.set(sessionId, mode ?? ROUNDS_WORKSPACE_DEFAULT);
}
async function roundsRunner(): Promise<RoundRunner> {
  const [{ store, service }, log] = await Promise.all([ready, asks(), startSweep]);
  if (!roundRunner) {
    roundRunner = new RoundRunner({
      store,
      asks: log,
      bindWorkspace: (session, options) =>
        bindWorkspace(store, session, { dataDir: store.dir, now: () => new Date().toISOString(), mode: workspaceModes.get(session.id) ?? ROUNDS_WORKSPACE_DEFAULT, log: hostLog, ...options }),
      log: hostLog,
      onChange: (sessionId, round) => {
        notify(RoundsChanged, { sessionId, round });
        // A round's successor is the review's capture from its receipt on: every surface that
        // follows the session (the panel's header, the editor's marks and comment ranges) reads it.
        if (round.successorPatchsetId) {
          const snapshot = service.getSnapshot(sessionId);
          if (snapshot.ok) notify(SessionChanged, snapshot.value);
        }
      },
    });
    roundRunner.settleInterrupted(service.listSessions().map((s) => s.id));
  }
  return roundRunner;
}

/** What a round runs with here: the report seat on the Design lens's harness, the successor's lenses through the lens runner. */
async function roundContext(harness: HarnessConfig): Promise<RoundContext> {
  const { runner } = await ready;
  return {
    reportHarness: (signal) => lensHarnessFromConfig(harness, 'design', harnessPorts(signal)),
    draftGeneration: ({ session, report, round, asks, compose, onComposed }) =>
      runner.runRoundLenses(session.id, harness, { ordinal: round.ordinal, report, asks }, { ...(compose ? { compose } : {}), onComposed }),
  };
}

edge.request(RoundsOrderGet, async (params) => {
  noteWorkspaceMode(params.sessionId, params.workspace);
  const order = await (await roundsRunner()).order(params.sessionId);
  return order.ok ? ok({ markdown: order.value.order.markdown, digest: order.value.order.digest, asks: order.value.order.asks.map((a) => a.id), workspace: order.value.workspace }) : order;
});
edge.request(RoundsDispatch, async (params: RoundsDispatchParams) => {
  const worker = await workerFromFlag(params.worker);
  if (!worker.ok) return worker;
  noteWorkspaceMode(params.sessionId, params.workspace);
  const runner = await roundsRunner();
  const dispatched = await runner.dispatch(params.sessionId, { ...(await roundContext(params.harness)), worker: worker.value }, { expectDigest: params.digest });
  return dispatched.ok ? ok(dispatched.value.round) : dispatched;
});
edge.request(RoundsRetry, async (params) => {
  const retried = await (await roundsRunner()).retry(params.sessionId, params.roundId, await roundContext(params.harness));
  return retried.ok ? ok(retried.value.round) : retried;
});
edge.request(RoundsCancel, async (params) => ok({ cancelled: (await roundsRunner()).cancel(params.sessionId) }));
edge.request(RoundsList, async (params) => ok((await roundsRunner()).rounds(params.sessionId)));
edge.request(RoundsLandingGet, async (params) => {
  const { store } = await ready;
  const session = store.getSession(params.sessionId);
  return session ? landingFor(store, session) : err(rennetError('not-found', `no session ${params.sessionId}`));
});
edge.request(RoundsLand, async (params) => {
  const { store } = await ready;
  const session = store.getSession(params.sessionId);
  if (!session) return err(rennetError('not-found', `no session ${params.sessionId}`));
  const landed = await landWorkBranch(store, session);
  hostLog(landed.ok ? 'info' : 'warn', `land ${session.id}: ${landed.ok ? landed.value.message : landed.error.message}`);
  return landed;
});
// A round's own diff, read-only (host/rounds/roundDiff.ts): its changed files and their blobs, read from git.
const roundDiffDeps = async () => {
  const [{ store }, runner] = await Promise.all([ready, roundsRunner()]);
  return { rounds: (sessionId: string) => runner.rounds(sessionId), getSession: (sessionId: string) => store.getSession(sessionId) };
};
edge.request(RoundsDiffFiles, async (params) => roundDiffFiles(await roundDiffDeps(), params));
edge.request(RoundsReadBlob, async (params) => readRoundBlob(await roundDiffDeps(), params));
edge.request(SessionArchive, async (params) => {
  const { store } = await ready;
  const session = store.getSession(params.sessionId);
  if (!session) return err(rennetError('not-found', `no session ${params.sessionId}`));
  if ((await roundsRunner()).rounds(session.id).some((r) => r.state === 'running'))
    return err(rennetError('invalid-request', 'a round of this review is running: cancel it or let it end before archiving; nothing changed'));
  return archiveSession(store, session, { now: () => new Date().toISOString(), snapshots: { dataDir: store.dir, patchsetIds: sessionPatchsetIds(store, session.id) } });
});

// ─── Re-review since the last review (host/rereview/) ─────────────────────────────────────────

import { join as joinPath } from 'node:path';
import { RereviewRun } from '../protocol/rpc';
import type { PriorReview } from '../protocol/review';
import { CONTEXT_ROOT } from './pipeline/contextDir';
import { carryForwardOpenAsks, fileDeltaPatchset, planRereview, priorReviewOf, recordRereview, rereviewDeltaOf } from './rereview/run';

edge.request(RereviewRun, async (params) => {
  const { sessionId, harness } = params;
  const { store, service, runner } = await ready;
  const snapshot = service.getSnapshot(sessionId);
  if (!snapshot.ok) return snapshot;
  const session = snapshot.value.session;
  if (session.target.kind !== 'pull-request') return err(rennetError('invalid-request', 'Re-review Since Last Review is for a pull or merge request; this review is of a branch or the working tree'));
  if (!snapshot.value.patchset) return err(rennetError('invalid-request', 'this review has no capture yet'));
  const full = service.getPatchset(snapshot.value.patchset.id);
  if (!full.ok) return full;
  // Refused before the closure seat spends a turn: the lenses could not be drafted now anyway.
  const busy = runner.reserve(session.id, 'a re-review');
  if (busy) return err(rennetError('invalid-request', `${busy}; re-review when it is done`));
  runner.release(session.id);
  const planned = await planRereview(
    {
      earlier: () => forges.earlierReview(session),
      // The closure seat runs on the Flagged lens's harness (its compiler is the one that judges findings).
      closureHarness: (signal) => lensHarnessFromConfig(harness, 'flagged', harnessPorts(signal)),
      contextDir: joinPath(session.repoRoot, CONTEXT_ROOT, session.id),
      log: (line) => hostLog('info', line),
    },
    session.repoRoot,
    full.value,
  );
  if (!planned.ok) return planned;
  const plan = planned.value;
  hostLog('info', `re-review of ${session.id}: ${plan.since.statement} ${plan.line}`);
  const carried = carryForwardOpenAsks(store, await asks(), session.id, plan, new Date().toISOString());
  if (carried.length > 0) hostLog('info', `re-review of ${session.id}: staged again, their items still open: ${carried.join(', ')}`);
  const now = () => new Date().toISOString();
  fileDeltaPatchset(store, session.id, plan, full.value, now());
  if (!plan.since.lensPatchset) {
    // No commits since the earlier review: the boards stay; the items are recorded on them, open.
    const prior = recordRereview(store, session.id, currentGenerationId(store, session.id), plan, now());
    runner.publishCurrent(session.id);
    return ok({ generationId: null, prior });
  }
  let prior: PriorReview | null = null;
  const drafted = await runner.runPatchsetLenses(
    session.id,
    harness,
    plan.since.lensPatchset,
    (generationId) => {
      prior = recordRereview(store, session.id, generationId, plan, now());
    },
    rereviewDeltaOf(plan) ?? undefined,
  );
  if (!drafted.ok) return drafted;
  return ok({ generationId: drafted.value.generationId, prior: prior ?? priorReviewOf(plan) });
});
