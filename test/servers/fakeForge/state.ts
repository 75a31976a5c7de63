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
  /** A system note (GitLab writes one for an approval: "approved this merge request"). */
  system?: boolean;
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
  /** The head when it was given (GitLab does not say it on the wire; its system note's time does). */
  headSha: string;
}

/** GitHub: a check run on a commit (Checks API). The list answers the newest run per name by default. */
export interface CheckRunRecord {
  id: number;
  name: string;
  headSha: string;
  status: 'queued' | 'in_progress' | 'completed' | 'waiting' | 'requested' | 'pending';
  /** success, failure, neutral, cancelled, skipped, timed_out, action_required, stale; null until completed. */
  conclusion: string | null;
  title: string | null;
  summary: string | null;
  startedAt: string;
  completedAt: string | null;
}

/** GitHub: a commit status (Statuses API), by context; the newest per context counts. */
export interface CommitStatusRecord {
  id: number;
  sha: string;
  context: string;
  state: 'error' | 'failure' | 'pending' | 'success';
  description: string | null;
  targetUrl: string | null;
  createdAt: string;
}

/** GitHub: branch protection of one branch. `requiredApprovingReviewCount: null`: reviews not required. */
export interface BranchProtectionRecord {
  requiredApprovingReviewCount: number | null;
  dismissStaleReviews: boolean;
  /** Contexts (check names or status contexts) that must succeed; null: none required. */
  requiredStatusChecks: string[] | null;
  /** Required status checks demand a head that contains the base tip. */
  strict: boolean;
}

/** GitLab: a CI job of a pipeline. */
export interface JobRecord {
  id: number;
  name: string;
  stage: string;
  /** created, pending, running, success, failed, canceled, skipped, manual, scheduled, waiting_for_resource, preparing. */
  status: string;
  allowFailure: boolean;
  createdAt: string;
}

/** GitLab: a pipeline, run for a merge request's head (`source: merge_request_event`). */
export interface PipelineRecord {
  id: number;
  iid: number;
  sha: string;
  ref: string;
  status: string;
  source: string;
  mergeRequestIid: number | null;
  createdAt: string;
  jobs: JobRecord[];
}

/** GitLab: a merge request diff version (one per head the source branch had). */
export interface VersionRecord {
  id: number;
  headSha: string;
  baseSha: string;
  startSha: string;
  createdAt: string;
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
  /** GitHub: users asked for a review (a submitted review takes its author off the list). */
  requestedReviewerIds: number[];
  /** GitLab: diff versions, oldest first. */
  versions: VersionRecord[];
  /** GitHub `mergeable: null` while set (the forge is still computing it). */
  mergeableComputing: boolean;
  mergeCommitSha: string | null;
  mergedById: number | null;
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
  /** GitLab: approvals a merge request needs (approval rules reduced to a count). */
  approvalsRequired: number;
  /** GitLab: "Pipelines must succeed" (`only_allow_merge_if_pipeline_succeeds`). */
  onlyAllowMergeIfPipelineSucceeds: boolean;
  /** GitLab: a push removes every approval ("Remove all approvals when commits are added"). */
  resetApprovalsOnPush: boolean;
  /** GitHub: who may read branch protection (admin); null: every known user. */
  admins: string[] | null;
  /** GitHub: branch protections by branch name. */
  protections: Map<string, BranchProtectionRecord>;
  checkRuns: CheckRunRecord[];
  statuses: CommitStatusRecord[];
  pipelines: PipelineRecord[];
  nextPipelineIid: number;
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
  | { kind: 'status'; status: number; method?: string; pathPattern?: string | RegExp; times?: number; body?: unknown }
  /** Before the matched request is handled, the pull request's head branch moves to `sha` (a push racing the request). */
  | { kind: 'move-head'; owner: string; name: string; number: number; sha: string; method?: string; pathPattern?: string | RegExp; times?: number };

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

let lastPrecise = 0;
/** Milliseconds, strictly increasing within the process: GitLab's note and version times order events. */
export function preciseNow(): string {
  lastPrecise = Math.max(lastPrecise + 1, Date.now());
  return new Date(lastPrecise).toISOString();
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
  private readonly mergeTrees = new Map<string, Promise<{ tree: string | null }>>();

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
      approvalsRequired: 0,
      onlyAllowMergeIfPipelineSucceeds: false,
      resetApprovalsOnPush: false,
      admins: null,
      protections: new Map(),
      checkRuns: [],
      statuses: [],
      pipelines: [],
      nextPipelineIid: 1,
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
        const base = refs.get(`refs/heads/${pull.base}`);
        if (base !== undefined) pull.baseSha = base;
        if (tip !== undefined && tip !== pull.headSha) {
          pull.headSha = tip;
          pull.updatedAt = nowIso();
          await this.headMoved(repo, pull);
        }
      }
      const ref = ForgeState.pullRef(repo, pull.number);
      if (refs.get(ref) !== pull.headSha) await git(repo.dir, ['update-ref', ref, pull.headSha]);
    }
  }

  /** What a push to the head does beyond moving it: a GitLab diff version, stale approvals dismissed or removed. */
  private async headMoved(repo: RepoRecord, pull: PullRecord): Promise<void> {
    if (repo.provider === 'gitlab') {
      await this.recordVersion(repo, pull);
      if (repo.resetApprovalsOnPush) pull.approvals = [];
      return;
    }
    const protection = repo.protections.get(pull.base);
    if (protection?.dismissStaleReviews) for (const r of pull.reviews) if (r.state === 'APPROVED' && r.commitId !== pull.headSha) r.state = 'DISMISSED';
  }

  async recordVersion(repo: RepoRecord, pull: PullRecord): Promise<void> {
    const s = await this.shas(repo, pull);
    pull.versions.push({ id: this.id(), headSha: s.head, baseSha: s.mergeBase, startSha: s.baseTip, createdAt: preciseNow() });
  }

  /**
   * Whether head merges into the base tip without conflicts (`git merge-tree --write-tree`):
   * the merged tree, or null on conflicts. Cached per pair.
   */
  mergeTree(repo: RepoRecord, base: string, head: string): Promise<{ tree: string | null }> {
    const key = `tree\0${repo.dir}\0${base}\0${head}`;
    let hit = this.mergeTrees.get(key);
    if (hit === undefined) {
      hit = git(repo.dir, ['merge-tree', '--write-tree', '--no-messages', base, head]).then(
        (out) => ({ tree: out.split('\n')[0]?.trim() || null }),
        (e: unknown) => {
          if ((e as { code?: number | null }).code === 1) return { tree: null };
          throw e;
        },
      );
      this.mergeTrees.set(key, hit);
    }
    return hit;
  }

  async hasConflicts(repo: RepoRecord, pull: PullRecord): Promise<boolean> {
    return (await this.mergeTree(repo, pull.baseSha, pull.headSha)).tree === null;
  }

  /** Commits the base tip has that the head lacks, and the other way round. */
  async aheadBehind(repo: RepoRecord, base: string, head: string): Promise<{ ahead: number; behind: number }> {
    const out = (await git(repo.dir, ['rev-list', '--left-right', '--count', `${base}...${head}`])).trim().split(/\s+/);
    return { behind: Number(out[0] ?? 0), ahead: Number(out[1] ?? 0) };
  }

  /**
   * Merges a pull request into its base branch as the forge would: a merge commit (`merge`), one
   * commit over the base (`squash`), or the head itself when it already contains the base, else
   * one commit over the base (`rebase`; replaying each commit is not modelled). Moves the base
   * branch (compare-and-swap) and marks the request merged. Answers the new base tip.
   */
  async mergePull(repo: RepoRecord, pull: PullRecord, method: 'merge' | 'squash' | 'rebase', userId: number, message?: string): Promise<string> {
    const base = pull.baseSha;
    const head = pull.headSha;
    const { tree } = await this.mergeTree(repo, base, head);
    if (tree === null) throw new Error('the request has conflicts');
    const who = this.user(userId);
    const ident = ['-c', `user.name=${who.name}`, '-c', `user.email=${who.email}`];
    const title = message ?? (method === 'merge' ? `Merge pull request #${pull.number} from ${repo.owner}/${pull.head}\n\n${pull.title}` : `${pull.title} (#${pull.number})`);
    let commit: string;
    const ff = (await mergeBase(repo.dir, base, head)) === base;
    if (method === 'rebase' && ff) commit = head;
    else if (method === 'merge') commit = (await git(repo.dir, [...ident, 'commit-tree', tree, '-p', base, '-p', head, '-m', title])).trim();
    else commit = (await git(repo.dir, [...ident, 'commit-tree', tree, '-p', base, '-m', title])).trim();
    await git(repo.dir, ['update-ref', `refs/heads/${pull.base}`, commit, base]);
    const at = nowIso();
    pull.state = 'merged';
    pull.closedAt = at;
    pull.updatedAt = at;
    pull.mergeCommitSha = commit;
    pull.mergedById = userId;
    await this.sync(repo);
    return commit;
  }

  /** The pipeline GitLab shows as the merge request's head pipeline: the newest for its head. */
  headPipeline(repo: RepoRecord, pull: PullRecord): PipelineRecord | null {
    const mine = repo.pipelines.filter((p) => p.mergeRequestIid === pull.number && p.sha === pull.headSha);
    return mine.at(-1) ?? null;
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
      requestedReviewerIds: [],
      versions: [],
      mergeableComputing: false,
      mergeCommitSha: null,
      mergedById: null,
    };
    repo.pulls.set(number, pull);
    await git(repo.dir, ['update-ref', ForgeState.pullRef(repo, number), headSha]);
    if (repo.provider === 'gitlab') await this.recordVersion(repo, pull);
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
    if (spec.kind === 'move-head' && (typeof spec.sha !== 'string' || typeof spec.owner !== 'string' || typeof spec.name !== 'string' || !Number.isInteger(Number(spec.number))))
      throw new Error('move-head needs owner, name, number and sha');
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
