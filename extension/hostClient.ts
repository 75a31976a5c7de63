import * as vscode from 'vscode';
import {
  CancellationTokenSource,
  CloseAction,
  ErrorAction,
  ErrorCodes,
  LanguageClient,
  ResponseError,
  RevealOutputChannelOn,
  State,
  TransportKind,
  type CloseHandlerResult,
  type ErrorHandlerResult,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';
import type { NotificationType, RequestParam, RequestType } from 'vscode-jsonrpc';
import {
  AsksChanged,
  ExitsPosted,
  GenerationChanged,
  GenerationDeltaPushed,
  GenerationGet,
  HostHello,
  HostLog,
  RoundsChanged,
  SessionChanged,
  type AsksChangedParams,
  type HostInfo,
  type RoundsChangedParams,
} from '../protocol/rpc';
import { errorMessage, type GenerationDelta } from '../protocol';
import { rpcEdge, type RpcEdge } from '../protocol/rpcEdge';
import type { HostStatus, PublishReceipt, SessionSnapshot } from '../protocol';
import { GenerationFold, type GenerationChange } from './generationFold';
import { notify } from './ui';
import { ui, uiText } from './uiText';

/** Ceiling on an ordinary request (list branches, read a session). */
export const REQUEST_TIMEOUT_MS = 15_000;
/** Ceiling on a request that captures a change (git diff, blob reads, store writes). */
export const CAPTURE_TIMEOUT_MS = 120_000;
/** Automatic restarts allowed inside RESTART_WINDOW_MS before the host is left stopped. */
export const MAX_RESTARTS = 5;
export const RESTART_WINDOW_MS = 3 * 60_000;

const RESTART_COMMAND = 'rennet.restartHost';
const RESTART_ACTION = ui`Restart Rennet Host`;

/** A request could not reach the host, or the host did not answer in time. */
export class HostUnavailableError extends Error {
  override readonly name = 'HostUnavailableError';
}

/**
 * Owns the LanguageClient that runs the sidecar host (dist/host.js over Node IPC).
 *
 * - Starts lazily: nothing runs until the first `start()` / `request()`.
 * - Every request is bounded by a timeout and fails with a sentence a person can act on.
 * - A host that dies after it was running is restarted (at most MAX_RESTARTS times in
 *   RESTART_WINDOW_MS); after each restart `onDidRecover` fires so panels re-read their sessions.
 */
export class HostClient implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<HostInfo> | undefined;
  private info: HostInfo | undefined;
  private currentStatus: HostStatus | null = null;
  /** Times of the automatic restarts inside the current window. */
  private restarts: number[] = [];
  /** The current client has completed HostHello at least once (crashes after that restart it). */
  private everRunning = false;
  /** A crash-restart is in flight; the next Running state re-says hello and recovers panels. */
  private recovering = false;
  /** Settles `starting` once a crash-restart has answered hello (or failed). */
  private recovery: { resolve(info: HostInfo): void; reject(error: Error): void } | undefined;
  private disposed = false;
  private readonly disposables: vscode.Disposable[] = [];
  /** Installs host → extension request handlers on each LanguageClient's edge (restarts included). */
  private readonly installers: Array<(edge: RpcEdge) => void> = [];
  /** The edge of the current LanguageClient: every host → extension message is received through it. */
  private edge: RpcEdge | undefined;
  /** Notifications every fresh host gets right after HostHello, before any other request (forges). */
  private readonly greeters: Array<(send: <P>(type: NotificationType<P>, params: P) => Promise<void>) => Promise<void> | void> = [];

  private readonly statusEmitter = new vscode.EventEmitter<HostStatus>();
  /** The host's state changed (starting, running, restarting, failed). */
  readonly onDidChangeStatus = this.statusEmitter.event;
  private readonly recoverEmitter = new vscode.EventEmitter<HostInfo>();
  /** The host is running again after a crash or a user restart: re-read what you show. */
  readonly onDidRecover = this.recoverEmitter.event;
  private readonly sessionEmitter = new vscode.EventEmitter<SessionSnapshot>();
  /** The host pushed a session snapshot (`rennet/session/changed`). */
  readonly onSessionChanged = this.sessionEmitter.event;
  private readonly generationEmitter = new vscode.EventEmitter<GenerationChange>();
  /**
   * A session's live generation changed: pushed whole (`rennet/generation/changed`), or a delta
   * (`rennet/generation/delta`) folded on the one held — then `delta` is the delta, so a panel
   * showing its base can be sent just that. A delta that does not apply is answered by reading the
   * generation whole (`rennet/generation/get`), said in the log; it fires once that answers.
   */
  readonly onGenerationChanged = this.generationEmitter.event;
  /** Each session's live generation as the pushes made it. */
  private readonly generations = new GenerationFold();
  /** Sessions whose generation is being read whole after a delta that did not apply. */
  private readonly generationReads = new Set<string>();
  private readonly asksEmitter = new vscode.EventEmitter<AsksChangedParams>();
  /** The host appended to a session's ask log and pushed the whole projection (`rennet/asks/changed`). */
  readonly onAsksChanged = this.asksEmitter.event;
  private readonly postedEmitter = new vscode.EventEmitter<PublishReceipt>();
  /** A session's review was posted, or found already posted (`rennet/exits/posted`). */
  readonly onExitsPosted = this.postedEmitter.event;
  private readonly roundsEmitter = new vscode.EventEmitter<RoundsChangedParams>();
  /** A round passed a receipt (`rennet/rounds/changed`). */
  readonly onRoundsChanged = this.roundsEmitter.event;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.disposables.push(this.statusEmitter, this.recoverEmitter, this.sessionEmitter, this.generationEmitter, this.asksEmitter, this.postedEmitter, this.roundsEmitter);
  }

  /** Null until the host was first asked to start. */
  get status(): HostStatus | null {
    return this.currentStatus;
  }

  /** The last HostHello answer, if the host is up. */
  get hostInfo(): HostInfo | undefined {
    return this.info;
  }

  get isStarted(): boolean {
    return this.client !== undefined;
  }

  /**
   * Handlers for host → extension requests (`rennet/lm/*`, `rennet/auth/token`): installed on the
   * edge of every LanguageClient this creates from now on, so a restarted host can ask too, and
   * only ever called with params their message's schema accepted. Call before the first start.
   */
  installHostRequestHandlers(install: (edge: RpcEdge) => void): void {
    this.installers.push(install);
    if (this.edge) install(this.edge);
  }

  /**
   * What every fresh host is told right after HostHello — at first start, after a crash restart and
   * after "Restart Host" — before the status turns running, so no request can overtake it (the
   * JSON-RPC connection keeps order). `greet` sends with the `send` it is given.
   */
  onEveryStart(greet: (send: <P>(type: NotificationType<P>, params: P) => Promise<void>) => Promise<void> | void): void {
    this.greeters.push(greet);
  }

  /**
   * Send a notification to a running host; does nothing while none runs (a host that starts later
   * is told by its `onEveryStart` greeters). Never starts the host.
   */
  async sendNotification<P>(type: NotificationType<P>, params: P): Promise<void> {
    const client = this.client;
    if (!client || !this.info) return;
    try {
      await client.sendNotification(type, params as RequestParam<P>);
    } catch (error) {
      this.log.warn(`Could not send ${type.method} to the Rennet host: ${errorMessage(error)}`);
    }
  }

  /** Start the host if it is not running yet; resolves with its HostHello answer. */
  start(): Promise<HostInfo> {
    if (this.disposed) return Promise.reject(new HostUnavailableError('The Rennet extension is shutting down.'));
    if (this.currentStatus?.state === 'failed' && !this.starting) {
      return Promise.reject(new HostUnavailableError(this.failedSentence()));
    }
    if (!this.starting) {
      this.starting = this.startFresh().catch((error: unknown) => {
        this.starting = undefined;
        throw error;
      });
    }
    return this.starting;
  }

  /** Stop whatever runs and start a fresh host (the "Rennet: Restart Host" command). */
  async restart(): Promise<HostInfo> {
    await this.stopClient();
    this.restarts = [];
    this.currentStatus = null;
    this.starting = undefined;
    const info = await this.start();
    this.generations.clear(); // a new host process: its push streams are new
    this.recoverEmitter.fire(info);
    return info;
  }

  /**
   * Send one request. Starts the host if needed. Never hangs: a host that is down or silent
   * fails the promise with a HostUnavailableError naming the request and what to do.
   */
  async request<P, R>(type: RequestType<P, R, void>, params: P, timeoutMs: number = REQUEST_TIMEOUT_MS): Promise<R> {
    await this.start();
    const client = this.client;
    if (!client) throw new HostUnavailableError(this.failedSentence());
    return this.send(client, type, params, timeoutMs);
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    try {
      await this.stopClient();
    } finally {
      for (const d of this.disposables.splice(0)) d.dispose();
    }
  }

  // ---------------------------------------------------------------------------------------------

  private async startFresh(): Promise<HostInfo> {
    this.setStatus({ state: 'starting', message: null });
    await this.ensureStoreDir();
    const client = this.createClient();
    this.client = client;
    this.everRunning = false;
    try {
      await client.start();
      const info = await this.send(client, HostHello, {}, REQUEST_TIMEOUT_MS);
      this.info = info;
      this.everRunning = true;
      await this.greet(client);
      this.log.info(`Rennet host ${info.version} running (pid ${info.pid}, store schema ${info.storeSchema}, ${info.sessions} session(s) read back).`);
      this.setStatus({ state: 'running', message: null });
      return info;
    } catch (error) {
      const message = `The Rennet host could not start: ${errorMessage(error)}`;
      this.log.error(message);
      await this.stopClient();
      this.setStatus({ state: 'failed', message });
      this.offerRestart(message);
      throw new HostUnavailableError(message);
    }
  }

  private async ensureStoreDir(): Promise<void> {
    try {
      await vscode.workspace.fs.createDirectory(this.context.globalStorageUri);
    } catch (error) {
      // The host reports a store it cannot open; say it here too.
      this.log.warn(`Could not create the store folder ${this.context.globalStorageUri.fsPath}: ${errorMessage(error)}`);
    }
  }

  private createClient(): LanguageClient {
    const storeDir = this.context.globalStorageUri.fsPath;
    const module = this.context.asAbsolutePath('dist/host.js');
    const run = {
      module,
      transport: TransportKind.ipc,
      options: { env: { ...process.env, RENNET_STORE_DIR: storeDir } },
    } as const;
    const serverOptions: ServerOptions = { run, debug: run };
    const clientOptions: LanguageClientOptions = {
      // No LSP document features: the host is a JSON-RPC sidecar, not a language server.
      documentSelector: [],
      outputChannel: this.log,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      errorHandler: {
        error: (error, _message, count): ErrorHandlerResult => {
          this.log.warn(`Rennet host connection error: ${error.message}`);
          if (count !== undefined && count <= 3) return { action: ErrorAction.Continue, handled: true };
          // The client stops the host itself; say so, so requests fail with the real reason.
          this.fail(`The Rennet host connection kept failing (${error.message}); the host was stopped.`);
          return { action: ErrorAction.Shutdown, handled: true };
        },
        closed: (): CloseHandlerResult => this.onClosed(),
      },
      initializationFailedHandler: (error) => {
        this.log.error(`Rennet host failed to initialize: ${errorMessage(error)}`);
        return false;
      },
    };
    // The client id decides which `<id>.trace.server` setting turns on message tracing. No such
    // setting is contributed for this id: a trace would print request bodies, and runLenses
    // carries API keys, which must never reach a log.
    const client = new LanguageClient('rennetHost', 'Rennet Host', serverOptions, clientOptions);

    // Every host → extension message is received through the edge (protocol/rpcEdge.ts): params
    // checked against their schema (a bad one is dropped or refused, and logged), handler throws
    // answered as typed errors.
    const edge = rpcEdge(client, (level, message) => this.log[level](`[host message] ${message}`));
    this.edge = edge;
    edge.notification(HostLog, (line) => {
      const text = `[host] ${line.message}`;
      if (line.level === 'error') this.log.error(text);
      else if (line.level === 'warn') this.log.warn(text);
      else this.log.info(text);
    });
    edge.notification(SessionChanged, (snapshot) => this.sessionEmitter.fire(snapshot));
    edge.notification(GenerationChanged, (snapshot) => {
      this.generations.whole(snapshot);
      this.generationEmitter.fire({ snapshot, delta: null });
    });
    edge.notification(GenerationDeltaPushed, (delta) => this.onGenerationDelta(delta));
    edge.notification(AsksChanged, (params) => this.asksEmitter.fire(params));
    edge.notification(ExitsPosted, (receipt) => this.postedEmitter.fire(receipt));
    edge.notification(RoundsChanged, (params) => this.roundsEmitter.fire(params));
    for (const install of this.installers) install(edge);
    client.onDidChangeState((event) => {
      if (event.newState === State.Running && this.recovering && client === this.client) {
        void this.recover(client);
      }
    });
    return client;
  }

  /** A generation delta: folded on the session's generation, or — when it does not apply there — the generation read whole. */
  private onGenerationDelta(delta: GenerationDelta): void {
    const applied = this.generations.delta(delta);
    if (applied.ok) {
      this.generationEmitter.fire({ snapshot: applied.snapshot, delta });
      return;
    }
    const { sessionId, generationId } = delta;
    if (applied.refusal === 'stale' || this.generationReads.has(sessionId)) return;
    this.log.warn(`[host message] generation delta ${delta.revision} of ${generationId} does not apply (${applied.message}); reading the generation whole.`);
    this.generationReads.add(sessionId);
    void this.request(GenerationGet, { sessionId, generationId })
      .then((result) => {
        if (!result.ok) {
          this.log.warn(`Reading generation ${generationId} whole after a delta that did not apply: ${result.error.message}`);
          return;
        }
        if (!result.value) return;
        this.generations.whole(result.value);
        this.generationEmitter.fire({ snapshot: result.value, delta: null });
      })
      .catch((error: unknown) => this.log.warn(`Reading generation ${generationId} whole after a delta that did not apply: ${errorMessage(error)}`))
      .finally(() => this.generationReads.delete(sessionId));
  }

  /** The connection closed without us asking: decide whether to restart. */
  private onClosed(): CloseHandlerResult {
    if (this.disposed || !this.everRunning) {
      // Shutting down, or the host died while starting: startFresh reports it.
      return { action: CloseAction.DoNotRestart, handled: true };
    }
    const now = Date.now();
    this.restarts = this.restarts.filter((t) => now - t < RESTART_WINDOW_MS);
    if (this.restarts.length >= MAX_RESTARTS) {
      this.fail(`The Rennet host stopped unexpectedly ${this.restarts.length + 1} times in ${RESTART_WINDOW_MS / 60_000} minutes; it will not be restarted automatically.`);
      return { action: CloseAction.DoNotRestart, handled: true };
    }
    this.restarts.push(now);
    this.info = undefined;
    this.recovering = true;
    // Callers of start() (every request) wait for the restarted host instead of reusing the
    // dead one's hello.
    this.starting = new Promise<HostInfo>((resolve, reject) => {
      this.recovery = { resolve, reject };
    });
    this.starting.catch(() => {
      /* surfaced through request() and the status */
    });
    this.log.warn(`Rennet host stopped unexpectedly; restarting (${this.restarts.length} of ${MAX_RESTARTS} in ${RESTART_WINDOW_MS / 60_000} minutes).`);
    this.setStatus({ state: 'restarting', message: 'The Rennet host stopped unexpectedly and is restarting.' });
    return { action: CloseAction.Restart, handled: true };
  }

  private async recover(client: LanguageClient): Promise<void> {
    this.recovering = false;
    try {
      const info = await this.send(client, HostHello, {}, REQUEST_TIMEOUT_MS);
      this.info = info;
      await this.greet(client);
      this.log.info(`Rennet host restarted (pid ${info.pid}); ${info.sessions} session(s) read back from the store.`);
      this.setStatus({ state: 'running', message: null });
      this.recovery?.resolve(info);
      this.recovery = undefined;
      void notify('warning', ui`Rennet host stopped unexpectedly; restarted — your sessions are read back from the store.`);
      this.generations.clear(); // a new host process: its push streams are new
      this.recoverEmitter.fire(info);
    } catch (error) {
      this.fail(`The Rennet host restarted but does not answer: ${errorMessage(error)}`);
    }
  }

  /** The host is down for good until the user restarts it: say so everywhere, wake every waiter. */
  private fail(message: string): void {
    this.log.error(message);
    this.info = undefined;
    this.recovering = false;
    this.recovery?.reject(new HostUnavailableError(message));
    this.recovery = undefined;
    this.starting = undefined;
    this.setStatus({ state: 'failed', message });
    this.offerRestart(message);
  }

  /** Runs the `onEveryStart` greeters on a host that has just said hello; a failing one is logged, never fatal. */
  private async greet(client: LanguageClient): Promise<void> {
    const send = async <P>(type: NotificationType<P>, params: P): Promise<void> => {
      await client.sendNotification(type, params as RequestParam<P>);
    };
    for (const greet of this.greeters) {
      try {
        await greet(send);
      } catch (error) {
        this.log.warn(`Telling the Rennet host its settings failed: ${errorMessage(error)}`);
      }
    }
  }

  private async send<P, R>(client: LanguageClient, type: RequestType<P, R, void>, params: P, timeoutMs: number): Promise<R> {
    const cancel = new CancellationTokenSource();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        cancel.cancel();
        reject(
          new HostUnavailableError(
            `The Rennet host did not answer ${type.method} within ${Math.round(timeoutMs / 1000)} s` + (this.currentStatus?.state === 'restarting' ? ' (it is restarting).' : '.'),
          ),
        );
      }, timeoutMs);
    });
    try {
      return await Promise.race([client.sendRequest(type, params as RequestParam<P>, cancel.token), timeout]);
    } catch (error) {
      if (error instanceof HostUnavailableError) throw error;
      throw new HostUnavailableError(this.transportSentence(type.method, error));
    } finally {
      clearTimeout(timer);
      cancel.dispose();
    }
  }

  private transportSentence(method: string, error: unknown): string {
    if (error instanceof ResponseError) {
      if (error.code === ErrorCodes.ConnectionInactive) {
        return `The Rennet host is not running (${method} was not sent). ${this.currentStatus?.state === 'failed' ? `Run “${RESTART_ACTION}”.` : 'Try again in a moment.'}`;
      }
      return `The Rennet host refused ${method}: ${error.message}`;
    }
    const text = errorMessage(error);
    if (/disposed|closed|not running|inactive/i.test(text)) {
      return `The Rennet host stopped while handling ${method}; it is restarting — try again in a moment.`;
    }
    return `The Rennet host failed on ${method}: ${text}`;
  }

  private failedSentence(): string {
    const why = this.currentStatus?.message ? `${this.currentStatus.message} ` : '';
    return `${why}Run “Rennet: Restart Host” to start it again.`;
  }

  private offerRestart(message: string): void {
    void notify('error', uiText(message), RESTART_ACTION).then((choice) => {
      if (choice === RESTART_ACTION) void vscode.commands.executeCommand(RESTART_COMMAND);
    });
  }

  private async stopClient(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.edge = undefined;
    this.info = undefined;
    this.recovering = false;
    this.recovery?.reject(new HostUnavailableError('The Rennet host was stopped before its restart finished.'));
    this.recovery = undefined;
    this.everRunning = false;
    if (!client) return;
    try {
      if (client.needsStop()) await client.stop(2_000);
    } catch (error) {
      this.log.warn(`Stopping the Rennet host: ${errorMessage(error)}`);
    }
    try {
      await client.dispose(2_000);
    } catch {
      // Already stopped: nothing left to release.
    }
  }

  private setStatus(status: HostStatus): void {
    this.currentStatus = status;
    this.statusEmitter.fire(status);
  }
}
