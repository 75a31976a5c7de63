import { spawn } from 'node:child_process';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gitEnv } from './git';
import type { ForgeState, RepoRecord, UserRecord } from './state';

/**
 * Git smart HTTP: `/<owner>/<name>.git/<service path>` is handed to the real `git http-backend`
 * as a CGI (argv spawn, never a shell). Fetch is anonymous unless the repository is private;
 * push (receive-pack) needs HTTP basic auth whose password (or user name) is a known token, and
 * runs as that user (`REMOTE_USER`). Before every request the repository is synced, so
 * `refs/pull/<n>/head` / `refs/merge-requests/<iid>/head` are current.
 */

/** Service paths http-backend answers (the rest is refused before a process starts). */
const SERVICE =
  /^(info\/refs|git-upload-pack|git-receive-pack|HEAD|objects\/info\/(alternates|http-alternates|packs)|objects\/[0-9a-f]{2}\/[0-9a-f]{38,62}|objects\/pack\/pack-[0-9a-f]{40,64}\.(pack|idx))$/;

export interface GitRoute {
  repo: RepoRecord;
  service: string;
}

/** Matches `/<owner>/<name>.git/<service>` (also without `.git`, as the forges allow). */
export function matchGitRoute(state: ForgeState, pathname: string): GitRoute | null {
  const m = /^\/([^/]+)\/([^/]+?)(?:\.git)?\/(.+)$/.exec(pathname);
  if (m === null) return null;
  let owner: string;
  let name: string;
  let service: string;
  try {
    owner = decodeURIComponent(m[1] as string);
    name = decodeURIComponent(m[2] as string);
    service = decodeURIComponent(m[3] as string);
  } catch {
    return null;
  }
  if (!SERVICE.test(service)) return null;
  const repo = state.repo(owner, name);
  return repo === undefined ? null : { repo, service };
}

function basicAuthUser(state: ForgeState, header: string | undefined): UserRecord | null | 'bad' {
  if (header === undefined) return null;
  const m = /^basic\s+(\S+)\s*$/i.exec(header);
  if (m === null) return 'bad';
  const decoded = Buffer.from(m[1] as string, 'base64').toString('utf8');
  const at = decoded.indexOf(':');
  const userPart = at < 0 ? decoded : decoded.slice(0, at);
  const password = at < 0 ? '' : decoded.slice(at + 1);
  return state.userByToken(password !== '' ? password : userPart) ?? 'bad';
}

function challenge(res: ServerResponse, repo: RepoRecord): void {
  const realm = repo.provider === 'github' ? 'GitHub' : 'GitLab';
  res.writeHead(401, { 'www-authenticate': `Basic realm="${realm}"`, 'content-type': 'text/plain' });
  res.end('HTTP Basic: Access denied\n');
}

/** Serves one git request; resolves the logged user once the response is written. */
export async function serveGit(state: ForgeState, route: GitRoute, req: IncomingMessage, res: ServerResponse, url: URL): Promise<string | null> {
  const { repo, service } = route;
  const push = service === 'git-receive-pack' || (service === 'info/refs' && url.searchParams.get('service') === 'git-receive-pack');
  const user = basicAuthUser(state, req.headers.authorization);
  if (user === 'bad' || ((push || repo.private) && user === null)) {
    req.resume();
    challenge(res, repo);
    return null;
  }
  await state.sync(repo);
  const env = gitEnv({
    GIT_PROJECT_ROOT: state.root,
    GIT_HTTP_EXPORT_ALL: '1',
    PATH_INFO: `/${repo.owner}/${repo.name}.git/${service}`,
    REQUEST_METHOD: req.method ?? 'GET',
    QUERY_STRING: url.search.replace(/^\?/, ''),
    CONTENT_TYPE: req.headers['content-type'] ?? '',
    REMOTE_ADDR: '127.0.0.1',
    GATEWAY_INTERFACE: 'CGI/1.1',
    SERVER_PROTOCOL: 'HTTP/1.1',
    SERVER_SOFTWARE: 'rennet-fake-forge',
  });
  if (user !== null) env['REMOTE_USER'] = user.login;
  if (req.headers['content-length'] !== undefined) env['CONTENT_LENGTH'] = req.headers['content-length'];
  const proto = req.headers['git-protocol'];
  if (typeof proto === 'string') env['HTTP_GIT_PROTOCOL'] = proto;
  const enc = req.headers['content-encoding'];
  if (typeof enc === 'string') env['HTTP_CONTENT_ENCODING'] = enc;
  const child = spawn('git', ['http-backend'], { env, cwd: repo.dir, stdio: ['pipe', 'pipe', 'pipe'] });
  req.pipe(child.stdin);
  child.stdin.on('error', () => undefined);
  const stderr: Buffer[] = [];
  child.stderr.on('data', (c: Buffer) => stderr.push(c));
  res.on('close', () => {
    if (child.exitCode === null) child.kill();
  });
  await new Promise<void>((resolve) => {
    let head = Buffer.alloc(0);
    let started = false;
    const start = (rest: Buffer) => {
      started = true;
      const text = head.toString('latin1');
      const headers: Record<string, string> = {};
      let status = 200;
      for (const line of text.split(/\r?\n/)) {
        const at = line.indexOf(':');
        if (at <= 0) continue;
        const name = line.slice(0, at).trim();
        const value = line.slice(at + 1).trim();
        if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10) || 500;
        else headers[name] = value;
      }
      res.writeHead(status, headers);
      if (rest.length > 0) res.write(rest);
    };
    child.stdout.on('data', (c: Buffer) => {
      if (started) {
        res.write(c);
        return;
      }
      head = Buffer.concat([head, c]);
      const crlf = head.indexOf('\r\n\r\n');
      const lf = head.indexOf('\n\n');
      const end = crlf >= 0 && (lf < 0 || crlf < lf) ? crlf + 4 : lf >= 0 ? lf + 2 : -1;
      if (end < 0) return;
      const rest = head.subarray(end);
      head = head.subarray(0, end);
      start(rest);
    });
    child.on('close', (code) => {
      if (!started) {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`git http-backend failed (${code}): ${Buffer.concat(stderr).toString('utf8')}`);
      } else res.end();
      resolve();
    });
    child.on('error', () => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('git http-backend could not start\n');
      resolve();
    });
  });
  if (push) await state.sync(repo).catch(() => undefined);
  return user?.login ?? null;
}
