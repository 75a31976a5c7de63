import { z } from 'zod';
import { ForgeProvider } from './exits';

/**
 * Forges: which host is which provider, where its API lives, and how a pull or merge request is
 * named. github.com and gitlab.com are known; every other host (GitHub Enterprise, self-managed
 * GitLab, the tests' loopback fake) is registered by the user. An unregistered host is refused:
 * a request for it is never sent to github.com or gitlab.com.
 */

/** The setting and the environment variable that register forges (a JSON list of ForgeEntry). */
export const FORGES_SETTING = 'rennet.forges';
export const FORGES_ENV = 'RENNET_FORGES';

/** A registered forge. `apiUrl` defaults to `<scheme>://<host>/api/v3` (GitHub) or `/api/v4` (GitLab). */
export const ForgeEntry = z.strictObject({
  host: z
    .string()
    .min(1)
    .max(255)
    .regex(/^[A-Za-z0-9.-]+(:[0-9]{1,5})?$/, 'a host name, with a port when the remote names one (git.example.com, 127.0.0.1:8080)'),
  provider: ForgeProvider,
  apiUrl: z
    .string()
    .url()
    .refine((u) => /^https?:\/\//.test(u), 'an http(s) URL')
    .optional(),
});
export type ForgeEntry = z.infer<typeof ForgeEntry>;
export const ForgeEntries = z.array(ForgeEntry).max(64);

/** The forges every install knows. */
export const KNOWN_FORGES: readonly ForgeEntry[] = [
  { host: 'github.com', provider: 'github', apiUrl: 'https://api.github.com' },
  { host: 'gitlab.com', provider: 'gitlab', apiUrl: 'https://gitlab.com/api/v4' },
];

/** A repository on a forge, as a remote URL names it. */
export const ForgeRepo = z.object({
  provider: ForgeProvider,
  /** As the remote names it, lower-cased, with a port when one is named (`github.com`, `127.0.0.1:8080`). */
  host: z.string().min(1),
  /** GitHub: the owner; GitLab: the namespace, which may hold subgroups (`group/sub`). */
  owner: z.string().min(1),
  repo: z.string().min(1),
  /** The REST API root: `https://api.github.com`, `https://ghe.example/api/v3`, `https://gitlab.com/api/v4`. */
  apiUrl: z.string().url(),
  /** The repository's web page (`https://github.com/o/r`), for links and for matching pasted URLs. */
  webUrl: z.string().url(),
});
export type ForgeRepo = z.infer<typeof ForgeRepo>;

/** The identity of a pull or merge request: one session per identity. */
export const PullRequestRef = z.object({
  provider: ForgeProvider,
  host: z.string().min(1),
  owner: z.string().min(1),
  repo: z.string().min(1),
  number: z.number().int().positive(),
});
export type PullRequestRef = z.infer<typeof PullRequestRef>;

/** `github:github.com/o/r#12`, `gitlab:gitlab.com/g/sub/r!7`: the session key part of a request. */
export function pullRequestKey(ref: PullRequestRef): string {
  return `${ref.provider}:${ref.host.toLowerCase()}/${ref.owner}/${ref.repo}${ref.provider === 'gitlab' ? '!' : '#'}${ref.number}`;
}

/** How the provider names one: "Pull Request #12", "Merge Request !7". */
export function pullRequestLabel(ref: Pick<PullRequestRef, 'provider' | 'number'>): string {
  return ref.provider === 'gitlab' ? `Merge Request !${ref.number}` : `Pull Request #${ref.number}`;
}

/**
 * Where a fetched request's head and base tip are kept: hidden refs, never branches, never checked
 * out. Named by a digest of the request's key, since owners and hosts may hold characters a ref
 * name cannot (`:` in `host:port`, a leading `.` in `.github`).
 */
export function pullRequestRefs(ref: PullRequestRef): { head: string; base: string } {
  const dir = `refs/rennet/pr/${ref.provider}-${keyDigest(pullRequestKey(ref))}`;
  return { head: `${dir}/head`, base: `${dir}/base` };
}

/** 16 hex: two 32-bit FNV-1a passes with different offsets (an id, not a security boundary). */
function keyDigest(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193) >>> 0;
    b = Math.imul(b ^ c, 0x01000193 + 2) >>> 0;
  }
  return a.toString(16).padStart(8, '0') + b.toString(16).padStart(8, '0');
}
/** The ref the forge serves a request's head under. */
export function forgeHeadRefName(provider: ForgeProvider, number: number): string {
  return provider === 'gitlab' ? `refs/merge-requests/${number}/head` : `refs/pull/${number}/head`;
}

/**
 * Who the review is for. A teammate's request concludes in a posted review; one's own request
 * continues in rounds (and a review of one's own request cannot approve or request changes).
 */
export const EntryMode = z.enum(['teammate', 'own']);
export type EntryMode = z.infer<typeof EntryMode>;

/** A request as last read from its forge, recorded on the session at each capture (`forge.pullRequest`). */
export const PullRequestRecord = z.object({
  number: z.number().int().positive(),
  title: z.string(),
  /** The description as written: data, shown and handed to seats as context, never instructions. */
  body: z.string(),
  author: z.string(),
  /** The signed-in forge user, when credentials were available; null when read anonymously. */
  viewer: z.string().nullable(),
  entry: EntryMode,
  webUrl: z.string(),
  state: z.enum(['open', 'closed', 'merged']),
  draft: z.boolean(),
  headRef: z.string(),
  headSha: z.string(),
  /**
   * The repository the head branch lives in when it is not this one (a fork: `owner/name`); null
   * when it is this one. Absent on records read before it was kept.
   */
  headRepo: z.string().nullable().optional(),
  baseRef: z.string(),
  baseSha: z.string(),
  /** When the forge was read (ISO). */
  readAt: z.string(),
  /** The issues its description links (`#12`, `closes #12`, issue URLs of this repository), as read then: data. */
  issues: z.array(z.object({ number: z.number().int().positive(), title: z.string(), body: z.string(), webUrl: z.string(), state: z.enum(['open', 'closed']).optional() })).default([]),
});
export type PullRequestRecord = z.infer<typeof PullRequestRecord>;

/** Most linked issues read for one request. */
export const LINKED_ISSUES_MAX = 10;

/**
 * The issue numbers a request's description links, in order of first mention: `#12`, `closes
 * #12`, `GH-12`, and issue URLs of the same repository (`…/owner/repo/issues/12`,
 * `…/group/repo/-/issues/12`). A reference to another repository (`other/repo#3`) is not this
 * repository's issue. At most LINKED_ISSUES_MAX.
 */
export function linkedIssueNumbers(body: string, repo: { owner: string; repo: string }): number[] {
  const found: number[] = [];
  const add = (n: number) => {
    if (n > 0 && !found.includes(n) && found.length < LINKED_ISSUES_MAX) found.push(n);
  };
  const escaped = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const url = new RegExp(`/${escaped(repo.owner)}/${escaped(repo.repo)}/(?:-/)?issues/(\\d+)`, 'gi');
  const pattern = /(^|[^\w/.#-])(?:#|GH-)(\d+)\b|(https?:\/\/\S+)/gi;
  for (const m of body.matchAll(pattern)) {
    if (m[2]) add(Number(m[2]));
    else if (m[3]) for (const u of m[3].matchAll(url)) add(Number(u[1]));
  }
  return found;
}

/** The session event a request's record is kept under. */
export const PULL_REQUEST_EVENT_KIND = 'forge.pullRequest';
