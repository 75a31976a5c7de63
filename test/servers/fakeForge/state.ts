import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { computeDiff, type PullDiff } from './diff';
import { git, mergeBase, readRefs, resolveCommit } from './git';
import type { GitlabPosition } from './gitlabPosition';

/**
 * Everything the fake forge knows: users and their tokens, bare repositories on disk, pull and
 * merge requests with their reviews, comments, notes, discussions and approvals, the request log
 * and the armed faults. The forges' wire formats live in github.ts and gitlab.ts; this file holds
 * plain records.
 *
 * A request's head is read live: every request that touches a repository first syncs it (one
 * `git for-each-ref`), so a push to the head branch moves the pull request and its
 * `refs/pull/<n>/head` / `refs/merge-requests/<iid>/head` ref.
 */

export type Provider = 'github' | 'gitlab';

export interface UserRecord {
  id: number;
  login: string;
  name: string;
  email: string;
  tokens: string[];
  createdAt: string;
}

export interface ReviewRecord {
  id: number;
  userId: number;
  body: string;
  state: 'APPROVED' | 'CHANGES_REQUESTED' | 'COMMENTED' | 'PENDING' | 'DISMISSED';
  commitId: string;
  submittedAt: string | null;
}

export interface ReviewCommentRecord {
  id: number;
  reviewId: number;
  userId: number;
  path: string;
  subjectType: 'line' | 'file';
  line: number | null;
  side: 'LEFT' | 'RIGHT' | null;
  startLine: number | null;
  startSide: 'LEFT' | 'RIGHT' | null;
  position: number | null;
  diffHunk: string;
  body: string;
  commitId: string;
  inReplyToId: number | null;
  createdAt: string;
}

export interface IssueCommentRecord {
  id: number;
  userId: number;
  body: string;
  createdAt: string;
}

export interface NoteRecord {
  id: number;
  discussionId: string;
  /** A note made through POST /notes: its own one-note discussion. */
  individual: boolean;
  type: null | 'DiscussionNote' | 'DiffNote';
  body: string;
  authorId: number;
  createdAt: string;
  position: GitlabPosition | null;
  lineCode: string | null;
}

export interface DraftNoteRecord {
  id: number;
  authorId: number;
  note: string;
  position: GitlabPosition | null;
  lineCode: string | null;
  inReplyToDiscussionId: string | null;
  commitId: string | null;
  resolveDiscussion: boolean;
}

export interface ApprovalRecord {
  userId: number;
  at: string;
}

export interface PullRecord {
  /** Global id (GitHub `id`, GitLab `id`). */
  id: number;
  /** GitHub number / GitLab iid. */
  number: number;
  authorId: number;
  title: string;
  body: string;
  head: string;
  base: string;
  state: 'open' | 'closed' | 'merged';
  draft: boolean;
  /** Last head sha seen on the head branch (live while open). */
  headSha: string;
  /** Last base branch tip seen. */
  baseSha: string;
  createdAt: string;
  updatedAt: string;
  closedAt: string | null;
  reviews: ReviewRecord[];
  reviewComments: ReviewCommentRecord[];
  issueComments: IssueCommentRecord[];
  notes: NoteRecord[];
  draftNotes: DraftNoteRecord[];
  approvals: ApprovalRecord[];
}

export interface IssueRecord {
  id: number;
  number: number;
  title: string;
  body: string;
  authorId: number;
  state: 'open' | 'closed';
  createdAt: string;
  comments: IssueCommentRecord[];
}

export interface RepoRecord {
  provider: Provider;
  id: number;
  owner: string;
  name: string;
  dir: string;
  defaultBranch: string;
  private: boolean;
  /** GitLab: the project prevents a merge request's author from approving it. */
  preventAuthorApproval: boolean;
  /** GitHub: next number shared by pull requests and issues. GitLab: next merge request iid. */
  nextNumber: number;
  /** GitLab: next issue iid. */
  nextIssueIid: number;
  pulls: Map<number, PullRecord>;
  issues: Map<number, IssueRecord>;
  syncing: Promise<void>;
  createdAt: string;
}

export type FaultSpec =
  | { kind: 'drop-response-after-mutation'; method?: string; pathPattern?: string | RegExp; times?: number }
  | { kind: 'rate-limit'; method?: string; pathPattern?: string | RegExp; times?: number; retryAfterSeconds?: number; variant?: 'secondary' | 'primary' }
  | { kind: 'status'; status: number; method?: string; pathPattern?: string | RegExp; times?: number; body?: unknown };

export interface ArmedFault {
  id: number;
  spec: FaultSpec;
  pattern: RegExp | null;
  remaining: number;
}

export interface RequestRecord {
  seq: number;
  method: string;
  /** Path without the query. */
  path: string;
  /** Path with the query. */
  url: string;
  status: number | null;
  surface: 'github' | 'gitlab' | 'git' | 'other';
  user: string | null;
  /** The fault that answered (or dropped) this request. */
  fault: FaultSpec['kind'] | null;
  /** The socket was destroyed without a response. */
  dropped: boolean;
  at: string;
}

export function nowIso(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

const NAME = /^[A-Za-z0-9_.-]+$/;

export function validName(s: string): boolean {
  return NAME.test(s) && s !== '.' && s !== '..' && !s.endsWith('.git');
}

export class ForgeState {
  readonly users = new Map<number, UserRecord>();
  readonly repos = new Map<string, RepoRecord>();
  readonly requests: RequestRecord[] = [];
  faults: ArmedFault[] = [];
  origin = '';
  /** GitHub rate-limit counters per user (`u<id>`, `anonymous`). */
  readonly rateUsed = new Map<string, number>();
  private nextUserId = 1;
  private nextId = 1001;
  private nextRepoId = 1;
  private nextFaultId = 1;
  private nextSeq = 1;
  private readonly mergeBases = new Map<string, Promise<string | null>>();

  constructor(readonly root: string) {}

  id(): number {
    return this.nextId++;
  }

  seq(): number {
    return this.nextSeq++;
  }

  // ------------------------------------------------------------ users

  addUser(login: string, token?: string, name?: string, email?: string): UserRecord {
    if (!validName(login)) throw new Error(`invalid login: ${login}`);
    let user = this.userByLogin(login);
    if (user === undefined) {
      user = { id: this.nextUserId++, login, name: name ?? login, email: email ?? `${login}@example.com`, tokens: [], createdAt: nowIso() };
      this.users.set(user.id, user);
    }
    if (token !== undefined) {
      if (token.length === 0) throw new Error('empty token');
      const other = this.userByToken(token);
      if (other !== undefined && other.id !== user.id) throw new Error(`token already belongs to ${other.login}`);
      if (!user.tokens.includes(token)) user.tokens.push(token);
    }
    return user;
  }

  userByLogin(login: string): UserRecord | undefined {
    const l = login.toLowerCase();
    for (const u of this.users.values()) if (u.login.toLowerCase() === l) return u;
    return undefined;
  }

  userByToken(token: string): UserRecord | undefined {
    for (const u of this.users.values()) if (u.tokens.includes(token)) return u;
    return undefined;
  }

  user(id: number): UserRecord {
    const u = this.users.get(id);
    if (u === undefined) throw new Error(`no user ${id}`);
    return u;
  }

  // ------------------------------------------------------------ repositories

  repo(owner: string, name: string): RepoRecord | undefined {
    return this.repos.get(`${owner}/${name}`.toLowerCase());
  }

  repoById(id: number): RepoRecord | undefined {
    for (const r of this.repos.values()) if (r.id === id) return r;
    return undefined;
  }

  requireRepo(provider: Provider, owner: string, name: string): RepoRecord {
    const r = this.repo(owner, name);
    if (r === undefined || r.provider !== provider) throw new Error(`no ${provider} repository ${owner}/${name}`);
    return r;
  }

  async createRepo(opts: { provider: Provider; owner: string; name: string; from: string; defaultBranch?: string; private?: boolean; preventAuthorApproval?: boolean }): Promise<RepoRecord> {
    if (opts.provider !== 'github' && opts.provider !== 'gitlab') throw new Error(`unknown provider: ${String(opts.provider)}`);
    if (!validName(opts.owner) || !validName(opts.name)) throw new Error(`invalid repository name: ${opts.owner}/${opts.name}`);
    if (this.repo(opts.owner, opts.name) !== undefined) throw new Error(`repository ${opts.owner}/${opts.name} exists`);
    const ownerDir = join(this.root, opts.owner);
    mkdirSync(ownerDir, { recursive: true });
    const dir = join(ownerDir, `${opts.name}.git`);
    try {
      await git(ownerDir, ['clone', '--bare', '--quiet', '--no-hardlinks', '--', opts.from, dir]);
      await git(dir, ['config', 'uploadpack.allowReachableSHA1InWant', 'true']);
      await git(dir, ['config', 'receive.denyDeletes', 'false']);
      await git(dir, ['remote', 'remove', 'origin']).catch(() => undefined);
      if (opts.defaultBranch !== undefined) {
        if ((await resolveCommit(dir, `refs/heads/${opts.defaultBranch}`)) === null) throw new Error(`no branch ${opts.defaultBranch} in ${opts.from}`);
        await git(dir, ['symbolic-ref', 'HEAD', `refs/heads/${opts.defaultBranch}`]);
      }
    } catch (e) {
      rmSync(dir, { recursive: true, force: true });
      throw e;
    }
    const head = (await git(dir, ['symbolic-ref', '--short', 'HEAD'])).trim();
    const repo: RepoRecord = {
      provider: opts.provider,
      id: this.nextRepoId++,
      owner: opts.owner,
      name: opts.name,
      dir,
      defaultBranch: head,
      private: opts.private ?? false,
      preventAuthorApproval: opts.preventAuthorApproval ?? true,
      nextNumber: 1,
      nextIssueIid: 1,
      pulls: new Map(),
      issues: new Map(),
      syncing: Promise.resolve(),
      createdAt: nowIso(),
    };
    this.repos.set(`${opts.owner}/${opts.name}`.toLowerCase(), repo);
    return repo;
  }

  /** The ref a pull request's head is published at. */
  static pullRef(repo: RepoRecord, n: number): string {
    return repo.provider === 'github' ? `refs/pull/${n}/head` : `refs/merge-requests/${n}/head`;
  }

  /**
   * Reads the branches once and moves every open pull request's head (and its published ref) to
   * its head branch's tip; records base tips. Serialized per repository.
   */
  sync(repo: RepoRecord): Promise<void> {
    const run = repo.syncing.then(() => this.syncNow(repo));
    repo.syncing = run.catch(() => undefined);
    return run;
  }

  private async syncNow(repo: RepoRecord): Promise<void> {
    if (repo.pulls.size === 0) return;
    const refs = await readRefs(repo.dir, ['refs/heads', repo.provider === 'github' ? 'refs/pull' : 'refs/merge-requests']);
    for (const pull of repo.pulls.values()) {
      if (pull.state === 'open') {
        const tip = refs.get(`refs/heads/${pull.head}`);
        if (tip !== undefined && tip !== pull.headSha) {
          pull.headSha = tip;
          pull.updatedAt = nowIso();
        }
        const base = refs.get(`refs/heads/${pull.base}`);
        if (base !== undefined) pull.baseSha = base;
      }
      const ref = ForgeState.pullRef(repo, pull.number);
      if (refs.get(ref) !== pull.headSha) await git(repo.dir, ['update-ref', ref, pull.headSha]);
    }
  }

  async branchTip(repo: RepoRecord, branch: string): Promise<string | null> {
    if (branch.length === 0 || branch.startsWith('-')) return null;
    return resolveCommit(repo.dir, `refs/heads/${branch}`);
  }

  mergeBaseOf(repo: RepoRecord, a: string, b: string): Promise<string | null> {
    const key = `${repo.dir}\0${a}\0${b}`;
    let hit = this.mergeBases.get(key);
    if (hit === undefined) {
      hit = mergeBase(repo.dir, a, b);
      this.mergeBases.set(key, hit);
    }
    return hit;
  }

  /** The pull request's current shas: head, base tip, and the merge base the diff starts at. */
  async shas(repo: RepoRecord, pull: PullRecord): Promise<{ head: string; baseTip: string; mergeBase: string }> {
    const mb = await this.mergeBaseOf(repo, pull.baseSha, pull.headSha);
    return { head: pull.headSha, baseTip: pull.baseSha, mergeBase: mb ?? pull.baseSha };
  }

  /** The diff the pull request shows now. */
  async diff(repo: RepoRecord, pull: PullRecord): Promise<PullDiff> {
    const s = await this.shas(repo, pull);
    return computeDiff(repo.dir, s.mergeBase, s.head);
  }

  async openPull(repo: RepoRecord, opts: { authorId: number; head: string; base: string; title: string; body: string; draft: boolean }): Promise<PullRecord> {
    const headSha = await this.branchTip(repo, opts.head);
    if (headSha === null) throw new Error(`no branch ${opts.head} in ${repo.owner}/${repo.name}`);
    const baseSha = await this.branchTip(repo, opts.base);
    if (baseSha === null) throw new Error(`no branch ${opts.base} in ${repo.owner}/${repo.name}`);
    await this.sync(repo);
    const number = repo.nextNumber++;
    const at = nowIso();
    const pull: PullRecord = {
      id: this.id(),
      number,
      authorId: opts.authorId,
      title: opts.title,
      body: opts.body,
      head: opts.head,
      base: opts.base,
      state: 'open',
      draft: opts.draft,
      headSha,
      baseSha,
      createdAt: at,
      updatedAt: at,
      closedAt: null,
      reviews: [],
      reviewComments: [],
      issueComments: [],
      notes: [],
      draftNotes: [],
      approvals: [],
    };
    repo.pulls.set(number, pull);
    await git(repo.dir, ['update-ref', ForgeState.pullRef(repo, number), headSha]);
    return pull;
  }

  addIssue(repo: RepoRecord, opts: { number?: number; title: string; body: string; authorId: number }): IssueRecord {
    let number: number;
    if (repo.provider === 'github') {
      number = opts.number ?? repo.nextNumber;
      if (repo.pulls.has(number) || repo.issues.has(number)) throw new Error(`#${number} is taken in ${repo.owner}/${repo.name}`);
      repo.nextNumber = Math.max(repo.nextNumber, number + 1);
    } else {
      number = opts.number ?? repo.nextIssueIid;
      if (repo.issues.has(number)) throw new Error(`issue #${number} exists in ${repo.owner}/${repo.name}`);
      repo.nextIssueIid = Math.max(repo.nextIssueIid, number + 1);
    }
    if (!Number.isInteger(number) || number < 1) throw new Error(`invalid issue number ${number}`);
    const issue: IssueRecord = { id: this.id(), number, title: opts.title, body: opts.body, authorId: opts.authorId, state: 'open', createdAt: nowIso(), comments: [] };
    repo.issues.set(number, issue);
    return issue;
  }

  // ------------------------------------------------------------ faults

  setFault(spec: FaultSpec): number {
    const p = spec.pathPattern;
    const pattern = p === undefined ? null : p instanceof RegExp ? p : new RegExp(p);
    const times = spec.times ?? 1;
    if (!(times > 0)) throw new Error('times must be positive');
    if (spec.kind === 'status' && !(Number.isInteger(spec.status) && spec.status >= 100 && spec.status <= 599)) throw new Error('status must be an HTTP status');
    const fault: ArmedFault = { id: this.nextFaultId++, spec, pattern, remaining: times };
    this.faults.push(fault);
    return fault.id;
  }

  clearFaults(): void {
    this.faults = [];
  }

  /** The first armed fault of `kinds` matching the request (not consumed). */
  matchFault(kinds: readonly FaultSpec['kind'][], method: string, path: string, isApi: boolean): ArmedFault | undefined {
    return this.faults.find((f) => {
      if (f.remaining <= 0 || !kinds.includes(f.spec.kind)) return false;
      const m = f.spec.method?.toUpperCase();
      if (m !== undefined ? m !== method : f.spec.kind === 'drop-response-after-mutation' && method === 'GET') return false;
      if (f.pattern === null) return isApi;
      f.pattern.lastIndex = 0;
      return f.pattern.test(path);
    });
  }

  consume(f: ArmedFault): void {
    f.remaining--;
    if (f.remaining <= 0) this.faults = this.faults.filter((x) => x !== f);
  }
}
