import type { IncomingMessage } from 'node:http';

/**
 * HTTP plumbing of the fake forge: what a route handler returns (a Reply, written by the
 * dispatcher so faults can intercept it), request body parsing (JSON; for GitLab also form and
 * multipart bodies with Rails bracket keys, as Grape accepts them), and offset pagination.
 */

export interface Reply {
  status: number;
  headers: Record<string, string>;
  body: string | null;
}

export const MAX_BODY_BYTES = 32 * 1024 * 1024;

export function reply(status: number, value: unknown, headers: Record<string, string> = {}): Reply {
  return { status, headers: { 'content-type': 'application/json; charset=utf-8', ...headers }, body: JSON.stringify(value) };
}

export function textReply(status: number, text: string, contentType = 'text/plain; charset=utf-8', headers: Record<string, string> = {}): Reply {
  return { status, headers: { 'content-type': contentType, ...headers }, body: text };
}

export function noContent(headers: Record<string, string> = {}): Reply {
  return { status: 204, headers, body: null };
}

/** Reads a whole request body (refuses more than MAX_BODY_BYTES). */
export function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error('request body too large'));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export type Params = Record<string, unknown>;

export class BodyError extends Error {}

/** A JSON object body (GitHub accepts only JSON). Empty → {}. Throws BodyError when it is not a JSON object. */
export function jsonObject(raw: Buffer): Params {
  if (raw.length === 0) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new BodyError('Problems parsing JSON');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new BodyError('Body should be a JSON object');
  return parsed as Params;
}

/** Sets `a[b][c]` = value in a nested object (Rails/Grape bracket notation; `a[]` appends). */
function setBracketed(target: Params, key: string, value: unknown): void {
  const m = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(key);
  if (m === null) {
    target[key] = value;
    return;
  }
  const parts = [m[1] as string, ...[...(m[2] ?? '').matchAll(/\[([^[\]]*)\]/g)].map((x) => x[1] as string)];
  let cur: Record<string, unknown> | unknown[] = target;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as string;
    const last = i === parts.length - 1;
    const nextIsArray = !last && parts[i + 1] === '';
    if (Array.isArray(cur)) {
      if (last) cur.push(value);
      else {
        const fresh = nextIsArray ? [] : {};
        cur.push(fresh);
        cur = fresh;
      }
      continue;
    }
    if (last) {
      cur[part] = value;
      continue;
    }
    const existing: unknown = cur[part];
    if (existing !== null && typeof existing === 'object') cur = existing as Record<string, unknown> | unknown[];
    else {
      const fresh = nextIsArray ? [] : {};
      cur[part] = fresh;
      cur = fresh;
    }
  }
}

export function bracketParams(entries: Iterable<[string, unknown]>): Params {
  const out: Params = {};
  for (const [k, v] of entries) setBracketed(out, k, v);
  return out;
}

/**
 * GitLab-style parameters: query parameters merged with a JSON, urlencoded or multipart body
 * (body wins), bracket keys nested. Values from forms and queries stay strings; routes coerce.
 */
export async function gitlabParams(raw: Buffer, contentType: string | undefined, query: URLSearchParams): Promise<Params> {
  const out = bracketParams(query.entries());
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (raw.length === 0) return out;
  let body: Params = {};
  if (type === 'application/x-www-form-urlencoded') body = bracketParams(new URLSearchParams(raw.toString('utf8')).entries());
  else if (type === 'multipart/form-data') {
    const form = await new Response(new Uint8Array(raw), { headers: { 'content-type': contentType ?? '' } }).formData();
    const entries: [string, unknown][] = [];
    form.forEach((value, key) => entries.push([key, typeof value === 'string' ? value : '']));
    body = bracketParams(entries);
  } else body = jsonObject(raw);
  return { ...out, ...body };
}

export interface Page<T> {
  items: T[];
  page: number;
  perPage: number;
  total: number;
  totalPages: number;
}

/** Offset pagination: `page` (1-based) and `per_page` (default `defaultPer`, at most `maxPer`). */
export function paginate<T>(all: readonly T[], query: URLSearchParams, defaultPer: number, maxPer = 100): Page<T> {
  const perRaw = Number.parseInt(query.get('per_page') ?? '', 10);
  const pageRaw = Number.parseInt(query.get('page') ?? '', 10);
  const perPage = Number.isFinite(perRaw) && perRaw > 0 ? Math.min(perRaw, maxPer) : defaultPer;
  const page = Number.isFinite(pageRaw) && pageRaw > 0 ? pageRaw : 1;
  const totalPages = Math.max(1, Math.ceil(all.length / perPage));
  return { items: all.slice((page - 1) * perPage, page * perPage), page, perPage, total: all.length, totalPages };
}

/** `<url>; rel="..."` entries for the pages around `page` (the request URL with `page` replaced). */
export function linkHeader(origin: string, pathname: string, query: URLSearchParams, p: Page<unknown>, rels: readonly ('first' | 'prev' | 'next' | 'last')[]): string {
  const urlOf = (n: number) => {
    const q = new URLSearchParams(query);
    q.set('page', String(n));
    if (!q.has('per_page')) q.set('per_page', String(p.perPage));
    return `${origin}${pathname}?${q.toString()}`;
  };
  const out: string[] = [];
  for (const rel of rels) {
    if (rel === 'prev' && p.page > 1) out.push(`<${urlOf(p.page - 1)}>; rel="prev"`);
    if (rel === 'next' && p.page < p.totalPages) out.push(`<${urlOf(p.page + 1)}>; rel="next"`);
    if (rel === 'first') out.push(`<${urlOf(1)}>; rel="first"`);
    if (rel === 'last') out.push(`<${urlOf(p.totalPages)}>; rel="last"`);
  }
  return out.join(', ');
}

/** A positive integer from a number or a decimal string (form values), else null. */
export function intOf(v: unknown): number | null {
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (typeof v === 'string' && /^-?\d+$/.test(v.trim())) return Number.parseInt(v, 10);
  return null;
}

export function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

export function nowIso(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}
