import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONTROL_METHODS, ForgeControl, handleControl } from './control';
import { githubError, githubHeaders, githubRateLimited, githubUser, handleGithub, type ApiContext } from './github';
import { gitlabHeaders, gitlabRateLimited, gitlabUnauthorized, gitlabUser, handleGitlab } from './gitlab';
import { matchGitRoute, serveGit } from './gitHttp';
import { readBody, reply, type Reply } from './http';
import { ForgeState, nowIso, type RequestRecord } from './state';

/**
 * A loopback fake forge for tests: one HTTP server on 127.0.0.1 serving a subset of the GitHub
 * REST API v3 (`/api/v3`), a subset of the GitLab REST API v4 (`/api/v4`), the repositories over
 * git smart HTTP (`/<owner>/<name>.git`, the real `git http-backend`), and a control API
 * (`/_fake/<method>`, and the same methods on the returned handle). It enforces the forges' rules
 * (diff positions, self-approval, duplicates, stale heads) so an adapter that passes against it
 * passes against the real forges. Routes, rules and faults: README.md.
 */

export interface FakeForgeOptions {
  /** Where bare repositories live (default: a fresh temp directory, removed on close). */
  root?: string;
}

export interface FakeForge extends ForgeControl {
  /** `http://127.0.0.1:<port>` — GitLab host, git remote base. */
  readonly url: string;
  readonly port: number;
  /** `<url>/api/v3` — Octokit's `baseUrl`. */
  readonly githubApiUrl: string;
  /** `<url>/api/v4`. */
  readonly gitlabApiUrl: string;
  close(): Promise<void>;
}

export type { FaultSpec, Provider, RequestRecord } from './state';
export type { CreatedRepo, OpenedPull, PullRef, RepoRef, RequestFilter } from './control';

export async function startFakeForge(options: FakeForgeOptions = {}): Promise<FakeForge> {
  const ownRoot = options.root === undefined;
  const root = options.root ?? mkdtempSync(join(tmpdir(), 'rennet-fake-forge-'));
  const state = new ForgeState(root);
  const control = new ForgeControl(state);
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    handle(state, control, req, res).catch((error: unknown) => {
      if (!res.headersSent) {
        const text = JSON.stringify({ message: `fake forge error: ${(error as Error).message}` });
        res.writeHead(500, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.end(text);
      } else res.destroy();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  state.origin = `http://127.0.0.1:${port}`;
  const close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => {
        if (ownRoot) rmSync(root, { recursive: true, force: true });
        resolve();
      });
    });
  // Bound, so a test may pass `forge.addUser` around or destructure it.
  const methods = control as unknown as Record<string, (...a: unknown[]) => unknown>;
  for (const name of CONTROL_METHODS) methods[name] = (methods[name] as (...a: unknown[]) => unknown).bind(control);
  return Object.assign(control, { url: state.origin, port, githubApiUrl: `${state.origin}/api/v3`, gitlabApiUrl: `${state.origin}/api/v4`, close }) as FakeForge;
}

function surfaceOf(pathname: string): RequestRecord['surface'] {
  if (pathname === '/api/v3' || pathname.startsWith('/api/v3/')) return 'github';
  if (pathname === '/api/v4' || pathname.startsWith('/api/v4/')) return 'gitlab';
  return 'other';
}

function write(res: ServerResponse, r: Reply, extra: Record<string, string>): void {
  const headers: Record<string, string> = { ...extra, ...r.headers };
  if (r.body !== null) headers['content-length'] = String(Buffer.byteLength(r.body));
  res.writeHead(r.status, headers);
  res.end(r.body ?? undefined);
}

/** Path segments after the API prefix, each decoded (`owner%2Fname` stays one segment). */
function segmentsOf(pathname: string): string[] | null {
  try {
    return pathname
      .split('/')
      .slice(3)
      .filter((s, i, all) => s !== '' || i < all.length - 1)
      .map((s) => decodeURIComponent(s));
  } catch {
    return null;
  }
}

async function handle(state: ForgeState, control: ForgeControl, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', state.origin);
  const method = (req.method ?? 'GET').toUpperCase();
  if (url.pathname === '/_fake' || url.pathname.startsWith('/_fake/')) return handleControl(control, req, res, url);
  const gitRoute = matchGitRoute(state, url.pathname);
  const record: RequestRecord = {
    seq: state.seq(),
    method,
    path: url.pathname,
    url: `${url.pathname}${url.search}`,
    status: null,
    surface: gitRoute !== null ? 'git' : surfaceOf(url.pathname),
    user: null,
    fault: null,
    dropped: false,
    at: nowIso(),
  };
  state.requests.push(record);
  res.on('finish', () => {
    if (!record.dropped) record.status = res.statusCode;
  });
  const isApi = record.surface === 'github' || record.surface === 'gitlab';
  const pre = state.matchFault(['rate-limit', 'status'], method, url.pathname, isApi);
  if (pre !== undefined) {
    state.consume(pre);
    record.fault = pre.spec.kind;
    req.resume();
    return write(res, faultReply(pre, record.surface), {});
  }
  const move = isApi ? state.matchFault(['move-head'], method, url.pathname, isApi) : undefined;
  if (move !== undefined && move.spec.kind === 'move-head') {
    state.consume(move);
    record.fault = 'move-head';
    const spec = move.spec;
    await control.movePullRequestHead({ owner: spec.owner, name: spec.name, number: Number(spec.number), sha: spec.sha });
  }
  if (gitRoute !== null) {
    record.user = await serveGit(state, gitRoute, req, res, url);
    return;
  }
  if (!isApi) {
    req.resume();
    return write(res, reply(404, { message: 'Not Found' }), {});
  }
  const raw = await readBody(req);
  const segments = segmentsOf(url.pathname);
  const ctx: ApiContext = {
    state,
    method,
    segments: segments ?? [],
    query: url.searchParams,
    raw,
    headers: req.headers,
    origin: state.origin,
    pathname: url.pathname,
    setUser: (login) => {
      record.user = login;
    },
  };
  let result: Reply;
  let extra: Record<string, string>;
  if (record.surface === 'github') {
    const user = githubUser(state, req.headers);
    extra = githubHeaders(state, user === 'bad' ? null : user);
    if (user === 'bad') result = githubError(401, 'Bad credentials');
    else if (user === null) result = githubError(401, 'Requires authentication');
    else if (segments === null) result = githubError(404, 'Not Found');
    else result = await handleGithub(ctx, user);
  } else {
    const user = gitlabUser(state, req.headers);
    extra = gitlabHeaders();
    if (user === null) result = gitlabUnauthorized();
    else if (segments === null) result = reply(404, { error: '404 Not Found' });
    else result = await handleGitlab(ctx, user);
  }
  const drop = result.status < 300 ? state.matchFault(['drop-response-after-mutation'], method, url.pathname, isApi) : undefined;
  if (drop !== undefined) {
    state.consume(drop);
    record.fault = drop.spec.kind;
    record.dropped = true;
    record.status = result.status;
    res.socket?.destroy();
    res.destroy();
    return;
  }
  write(res, result, extra);
}

function faultReply(fault: NonNullable<ReturnType<ForgeState['matchFault']>>, surface: RequestRecord['surface']): Reply {
  const spec = fault.spec;
  if (spec.kind === 'rate-limit') return surface === 'gitlab' ? gitlabRateLimited(fault) : githubRateLimited(fault);
  const status = spec.kind === 'status' ? spec.status : 500;
  const body = spec.kind === 'status' ? spec.body : undefined;
  if (body !== undefined) return reply(status, body);
  const reason = STATUS_TEXT[status] ?? 'Error';
  if (surface === 'gitlab') return reply(status, { message: `${status} ${reason}` });
  if (surface === 'github') return githubError(status, reason);
  return { status, headers: { 'content-type': 'text/plain' }, body: `${status} ${reason}\n` };
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};
