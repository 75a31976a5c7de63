import { createConnection, ProposedFeatures } from 'vscode-languageserver/node';
import {
  HostHello,
  HostLog,
  PatchsetGet,
  PatchsetReadBlob,
  RepoListBranches,
  ReviewOpen,
  SessionChanged,
  SessionGet,
  SessionList,
  type HostInfo,
} from '../protocol/rpc';
import { err, rennetError } from '../protocol/result';
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

connection.onShutdown(async () => {
  (await ready.catch(() => undefined))?.store.close();
});

connection.listen();
