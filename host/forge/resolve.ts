import { ForgeEntries, KNOWN_FORGES, type ForgeEntry, type ForgeRepo, type PullRequestRef } from '../../protocol/forge';

/**
 * Which forge a remote URL names, and which request a pasted URL or number names. Pure: the git
 * and settings reads that feed it live in remote.ts. An unregistered host is an error, never a
 * guess: a request meant for a company's GitHub Enterprise must not reach github.com.
 */

export type ForgeResolution = { ok: true; value: ForgeRepo } | { ok: false; reason: 'unparsable-remote' | 'unknown-host'; message: string };

/** A remote URL's parts: scheme (`https`, `http`, `ssh`), host (lower-case, with a named port), path. */
export interface RemoteParts {
  scheme: string;
  host: string;
  /** Repository path without leading `/`, trailing `/` or `.git`: `owner/repo`, `group/sub/repo`. */
  path: string;
}

/**
 * Parses the URL forms git accepts for a forge remote: `https://host[:port]/o/r(.git)`,
 * `ssh://[user@]host[:port]/o/r.git`, scp-like `[user@]host:o/r.git`, `git://host/o/r`.
 * Credentials in a URL are dropped (never carried further).
 */
export function parseRemoteUrl(url: string): RemoteParts | null {
  const text = url.trim();
  if (text.length === 0 || /[\s\0]/.test(text)) return null;
  const withScheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(text);
  if (withScheme) {
    let parsed: URL;
    try {
      parsed = new URL(text);
    } catch {
      return null;
    }
    const scheme = parsed.protocol.replace(/:$/, '').toLowerCase();
    if (!['https', 'http', 'ssh', 'git'].includes(scheme)) return null;
    // An ssh port is not the web's: the host alone names the forge.
    const port = parsed.port && (scheme === 'http' || scheme === 'https') ? `:${parsed.port}` : '';
    const path = cleanPath(decodeURIComponent(parsed.pathname));
    return path && parsed.hostname ? { scheme, host: `${parsed.hostname.toLowerCase()}${port}`, path } : null;
  }
  // scp-like: user@host:path (no scheme, a colon before the first slash).
  const scp = /^(?:[^@/:]+@)?([A-Za-z0-9.-]+):(?!\/\/)(.+)$/.exec(text);
  if (scp?.[1] && scp[2]) {
    const path = cleanPath(scp[2]);
    return path ? { scheme: 'ssh', host: scp[1].toLowerCase(), path } : null;
  }
  return null;
}

function cleanPath(path: string): string | null {
  const trimmed = path
    .replace(/^\/+/, '')
    .replace(/\/+$/, '')
    .replace(/\.git$/, '');
  const parts = trimmed.split('/');
  if (parts.length < 2 || parts.some((p) => p.length === 0 || p === '.' || p === '..')) return null;
  return parts.join('/');
}

/** The registered forges: the known two, then the user's (a user entry for the same host wins). */
export function forgeRegistry(userEntries: readonly ForgeEntry[]): ForgeEntry[] {
  const hosts = new Set(userEntries.map((e) => e.host.toLowerCase()));
  return [...userEntries, ...KNOWN_FORGES.filter((e) => !hosts.has(e.host))];
}

/** Reads `RENNET_FORGES` / `rennet.forges`: a JSON list, validated; a bad value is an error naming what is wrong. */
export function parseForgeEntries(raw: unknown, source: string): { ok: true; value: ForgeEntry[] } | { ok: false; message: string } {
  let value = raw;
  if (typeof raw === 'string') {
    if (raw.trim() === '') return { ok: true, value: [] };
    try {
      value = JSON.parse(raw) as unknown;
    } catch (error) {
      return { ok: false, message: `${source} is not JSON: ${(error as Error).message}` };
    }
  }
  if (value === undefined || value === null) return { ok: true, value: [] };
  const parsed = ForgeEntries.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { ok: false, message: `${source} is not a list of {host, provider: "github"|"gitlab", apiUrl?}: ${issue ? `${issue.path.join('.') || '(value)'}: ${issue.message}` : 'invalid'}` };
  }
  return { ok: true, value: parsed.data.map((e) => ({ ...e, host: e.host.toLowerCase() })) };
}

/** The forge repository a remote URL names, by the registry; an unregistered host is refused. */
export function resolveForge(remoteUrl: string, registry: readonly ForgeEntry[]): ForgeResolution {
  const parts = parseRemoteUrl(remoteUrl);
  if (!parts) return { ok: false, reason: 'unparsable-remote', message: `the remote URL is not one Rennet can read as a forge repository (${redactUrl(remoteUrl)})` };
  const bare = parts.host.replace(/:\d+$/, '');
  const entry = registry.find((e) => e.host === parts.host) ?? registry.find((e) => e.host === bare);
  if (!entry) {
    return {
      ok: false,
      reason: 'unknown-host',
      message: `${parts.host} is not a registered forge: github.com and gitlab.com are known; register others in ${'rennet.forges'} (or RENNET_FORGES) as {"host": "${parts.host}", "provider": "github" | "gitlab"}`,
    };
  }
  const segments = parts.path.split('/');
  if (entry.provider === 'github' && segments.length !== 2) {
    return { ok: false, reason: 'unparsable-remote', message: `a GitHub repository is owner/name; the remote names ${parts.path}` };
  }
  const repo = segments.at(-1) as string;
  const owner = segments.slice(0, -1).join('/');
  // The web and API schemes follow the remote's when it is http(s); an ssh remote's forge is https.
  const webScheme = parts.scheme === 'http' ? 'http' : 'https';
  const webHost = entry.host.includes(':') || parts.scheme === 'http' || parts.scheme === 'https' ? parts.host : bare;
  const apiUrl = entry.apiUrl ?? `${webScheme}://${webHost}/api/${entry.provider === 'github' ? 'v3' : 'v4'}`;
  return { ok: true, value: { provider: entry.provider, host: entry.host, owner, repo, apiUrl: apiUrl.replace(/\/+$/, ''), webUrl: `${webScheme}://${webHost}/${owner}/${repo}` } };
}

/** The URL with any credentials removed, for messages. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^@/]*@/i, '$1');
}

export type PullRequestInput = { ok: true; value: { number: number; repo: Pick<ForgeRepo, 'provider' | 'host' | 'owner' | 'repo'> | null } } | { ok: false; message: string };

/**
 * What a reviewer pasted: a number (`12`, `#12`, `!7`), or a request URL
 * (`https://github.com/o/r/pull/12`, `https://gitlab.com/g/sub/r/-/merge_requests/7`). A URL names
 * its repository, which the caller checks against the workspace's forge.
 */
export function parsePullRequestInput(text: string, registry: readonly ForgeEntry[]): PullRequestInput {
  const input = text.trim();
  const number = /^[#!]?(\d{1,9})$/.exec(input);
  if (number?.[1]) {
    const n = Number(number[1]);
    return n > 0 ? { ok: true, value: { number: n, repo: null } } : { ok: false, message: 'a request number is 1 or more' };
  }
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return { ok: false, message: 'give a request number (12, #12, !7) or its URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { ok: false, message: 'a request URL is http(s)' };
  const host = `${url.hostname.toLowerCase()}${url.port ? `:${url.port}` : ''}`;
  const entry = registry.find((e) => e.host === host) ?? registry.find((e) => e.host === url.hostname.toLowerCase());
  if (!entry) return { ok: false, message: `${host} is not a registered forge` };
  const path = url.pathname.replace(/\/+$/, '');
  const match = entry.provider === 'github' ? /^\/([^/]+)\/([^/]+)\/pull\/(\d+)(?:\/.*)?$/.exec(path) : /^\/(.+)\/([^/]+)\/-\/merge_requests\/(\d+)(?:\/.*)?$/.exec(path);
  if (!match?.[1] || !match[2] || !match[3]) {
    return {
      ok: false,
      message: entry.provider === 'github' ? 'a pull request URL looks like https://github.com/owner/repo/pull/12' : 'a merge request URL looks like https://gitlab.com/group/repo/-/merge_requests/7',
    };
  }
  return { ok: true, value: { number: Number(match[3]), repo: { provider: entry.provider, host: entry.host, owner: decodeURIComponent(match[1]), repo: decodeURIComponent(match[2]) } } };
}

/** True when a pasted request's repository is the workspace's forge repository. */
export function sameRepository(a: Pick<ForgeRepo, 'provider' | 'host' | 'owner' | 'repo'>, b: Pick<PullRequestRef, 'provider' | 'host' | 'owner' | 'repo'>): boolean {
  return a.provider === b.provider && a.host.toLowerCase() === b.host.toLowerCase() && a.owner.toLowerCase() === b.owner.toLowerCase() && a.repo.toLowerCase() === b.repo.toLowerCase();
}
