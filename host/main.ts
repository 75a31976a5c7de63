import { CancellationTokenSource, createConnection, ProposedFeatures } from 'vscode-languageserver/node';
import { LENSES } from '../protocol/board';
import {
  HarnessDiscover,
  HostHello,
  HostLog,
  LmChat,
  LmModels,
  ReviewDraftLens,
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
import { discoverCliHarnesses } from './harness/discover';
import { singleLensAssignment, VscodeLmHarness, type LmAsk } from './harness/vscodeLm';
import { runReview } from './review/command';
import { reviewDeps } from './review/seams';
import { resolveStoreDir } from './storeDir';
import { ReviewService } from './service';
import { Store } from './store';
import { HOST_VERSION } from './version';

/**
 * The sidecar host: a Node process the extension starts over IPC. It never imports `vscode`;
 * all state lives in the store, so a restarted host reads back exactly what the last one left.
 */
const connection = createConnection(ProposedFeatures.all);
const storeDir = resolveStoreDir(process.argv, process.env);
const ready = Store.open(storeDir).then((store) => ({ store, service: new ReviewService({ store }) }));

ready.catch((error: unknown) => {
  connection.sendNotification(HostLog, { level: 'error', message: `could not open the store at ${storeDir}: ${(error as Error).message}` });
});

connection.onInitialize(() => ({ capabilities: {}, serverInfo: { name: 'rennet-host', version: HOST_VERSION } }));

connection.onRequest(HostHello, async (): Promise<HostInfo> => {
  const { store, service } = await ready;
  return { version: HOST_VERSION, pid: process.pid, storeDir, storeSchema: store.schemaVersion, sessions: service.listSessions().length };
});

connection.onRequest(RepoListBranches, async (params) => (await ready).service.listBranches(params.repo));

connection.onRequest(ReviewOpen, async (params) => {
  const { service } = await ready;
  const result = await service.openReview(params);
  if (result.ok) {
    const verb = result.value.reattached ? 'reattached' : 'created';
    connection.sendNotification(HostLog, {
      level: 'info',
      message: `${verb} session ${result.value.snapshot.session.id}; patchset ${result.value.snapshot.session.activePatchsetId}${result.value.captured ? ' (new capture)' : ' (already stored)'}`,
    });
    connection.sendNotification(SessionChanged, result.value.snapshot);
  }
  return result;
});

connection.onRequest(SessionGet, async (params) => (await ready).service.getSnapshot(params.sessionId));
connection.onRequest(SessionList, async () => (await ready).service.listSessions());
connection.onRequest(PatchsetGet, async (params) => (await ready).service.getPatchset(params.patchsetId));
connection.onRequest(PatchsetReadBlob, async (params) => {
  try {
    return await (await ready).service.readBlob(params);
  } catch (error) {
    return err(rennetError('git-failed', (error as Error).message));
  }
});

connection.onRequest(HarnessDiscover, async () => {
  try {
    const found = await discoverCliHarnesses();
    return ok(found.map((h) => ({ kind: h.kind, available: h.available, path: h.available ? h.bin : null, version: h.version, reason: h.reason })));
  } catch (error) {
    return err(rennetError('invalid-request', `CLI discovery failed: ${(error as Error).message}`));
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

/** Sessions with a draft in flight: a second draft of the same session is refused, not interleaved. */
const drafting = new Set<string>();

connection.onRequest(ReviewDraftLens, async (params: DraftLensParams, token): Promise<Result<DraftLensResult>> => {
  const { service, store } = await ready;
  if (params.harness !== 'vscode-lm') return err(rennetError('invalid-request', `unknown harness "${String(params.harness)}" (this request drafts with vscode-lm)`));
  if (!(LENSES as readonly string[]).includes(params.lens)) return err(rennetError('invalid-request', `unknown lens "${String(params.lens)}" (one of ${LENSES.join(', ')})`));
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
    return err(rennetError('not-found', `no VS Code language model matches ${wanted || 'any selector'}; install and sign in to a model provider (such as GitHub Copilot), or change rennet.harness.vscodeLm.vendor / family`));
  }
  if (drafting.has(params.sessionId)) return err(rennetError('invalid-request', `a draft of session ${params.sessionId} is already running`));
  drafting.add(params.sessionId);
  const abort = new AbortController();
  const cancelled = token.onCancellationRequested(() => abort.abort());
  try {
    const harness = new VscodeLmHarness({ ask: askExtension, model, signal: abort.signal });
    const log = (text: string) => {
      for (const line of text.split('\n')) if (line.trim()) connection.sendNotification(HostLog, { level: 'info', message: line.trimEnd() });
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
    drafting.delete(params.sessionId);
  }
});

connection.onShutdown(async () => {
  (await ready.catch(() => undefined))?.store.close();
});

connection.listen();
