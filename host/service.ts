import { summarizePatchset, type CaptureOptions, type Patchset } from '../protocol/patchset';
import { err, ok, rennetError, type Result } from '../protocol/result';
import type { BlobContent, OpenReviewParams, OpenReviewResult, ReadBlobParams } from '../protocol/rpc';
import { PULL_REQUEST_EVENT_KIND, PullRequestRecord } from '../protocol/forge';
import { Target, targetKey, type BranchList, type CaptureTarget, type PullRequestTarget, type Session, type SessionSnapshot } from '../protocol/session';
import { readCapturedBlob } from './capture/blob';
import { capturePatchset } from './capture/capture';
import { listBranches, openRepo } from './capture/repo';

/** What the review service needs from the durable store (host/store implements it). */
export interface ReviewStore {
  putPatchset(patchset: Patchset): { created: boolean };
  getPatchset(id: string): Patchset | undefined;
  findSession(repoRoot: string, targetKey: string): Session | undefined;
  getOrCreateSession(input: { repoRoot: string; target: Target; now: string }): { session: Session; created: boolean };
  getSession(id: string): Session | undefined;
  listSessions(): Session[];
  attachPatchset(sessionId: string, patchsetId: string, now: string): Session;
  appendEvent(sessionId: string, kind: string, payload: unknown, now: string): { seq: number };
  readEvents(sessionId: string, afterSeq?: number): Array<{ seq: number; kind: string; payload: unknown }>;
}

/**
 * A pull or merge request made ready to capture: read on its forge, its head and base fetched
 * into hidden refs. host/forge/pullRequests.ts implements it; the CLI and the VS Code host give it
 * their credentials and forge registry.
 */
export interface PullRequestSource {
  prepare(repoRoot: string, target: PullRequestTarget): Promise<Result<{ capture: Extract<CaptureTarget, { kind: 'branch' }>; record: PullRequestRecord }>>;
}

export interface ReviewServiceDeps {
  store: ReviewStore;
  now?: () => Date;
  /** Absent: pull-request targets are refused with what is missing. */
  pullRequests?: PullRequestSource;
}

/**
 * The host's use cases, shared by the JSON-RPC host (VS Code) and the CLI (in-process). Every
 * method answers a Result; bad input writes nothing.
 */
export class ReviewService {
  private readonly store: ReviewStore;
  private readonly now: () => Date;
  private readonly pullRequests: PullRequestSource | null;

  constructor(deps: ReviewServiceDeps) {
    this.store = deps.store;
    this.now = deps.now ?? (() => new Date());
    this.pullRequests = deps.pullRequests ?? null;
  }

  async listBranches(repoDir: string): Promise<Result<BranchList>> {
    const repo = await openRepo(repoDir);
    if (!repo.ok) return repo;
    return listBranches(repo.value);
  }

  /** Captures a target and stores it; no session is created (the CLI's `capture`). */
  async capture(repoDir: string, target: Target, options?: Partial<CaptureOptions>): Promise<Result<{ patchset: Patchset; created: boolean }>> {
    const parsed = Target.safeParse(target);
    if (!parsed.success) return err(rennetError('invalid-request', `invalid target: ${parsed.error.issues[0]?.message ?? 'unknown'}`));
    const repo = await openRepo(repoDir);
    if (!repo.ok) return repo;
    if (parsed.data.kind === 'pull-request') return err(rennetError('invalid-request', 'a pull request is captured by opening its review (it is fetched from its forge first)'));
    const patchset = await capturePatchset(repo.value, parsed.data, options);
    if (!patchset.ok) return patchset;
    const { created } = this.store.putPatchset(patchset.value);
    return ok({ patchset: patchset.value, created });
  }

  /**
   * Finds or creates the one session of (repository, target) and makes the target's current
   * capture its active patchset. Capture runs first, so a refused target leaves no session behind.
   */
  async openReview(params: OpenReviewParams): Promise<Result<OpenReviewResult>> {
    const parsed = Target.safeParse(params.target);
    if (!parsed.success) return err(rennetError('invalid-request', `invalid target: ${parsed.error.issues[0]?.message ?? 'unknown'}`));
    const repo = await openRepo(params.repo);
    if (!repo.ok) return repo;
    const overrides = params.maxFileBytes !== undefined ? { maxFileBytes: params.maxFileBytes } : undefined;
    let captureTarget: CaptureTarget;
    let record: PullRequestRecord | null = null;
    if (parsed.data.kind === 'pull-request') {
      if (!this.pullRequests) return err(rennetError('invalid-request', 'this host has no forge access configured, so a pull request cannot be fetched'));
      const prepared = await this.pullRequests.prepare(repo.value.root, parsed.data);
      if (!prepared.ok) return prepared;
      captureTarget = prepared.value.capture;
      record = prepared.value.record;
    } else {
      captureTarget = parsed.data;
    }
    const patchset = await capturePatchset(repo.value, captureTarget, overrides);
    if (!patchset.ok) return patchset;
    const { created: captured } = this.store.putPatchset(patchset.value);
    const stamp = this.now().toISOString();
    const { session, created } = this.store.getOrCreateSession({ repoRoot: repo.value.root, target: parsed.data, now: stamp });
    const attached = session.activePatchsetId === patchset.value.id ? session : this.store.attachPatchset(session.id, patchset.value.id, stamp);
    if (record) this.store.appendEvent(session.id, PULL_REQUEST_EVENT_KIND, record, stamp);
    return ok({
      snapshot: { session: attached, patchset: summarizePatchset(patchset.value), ...(record ? { pullRequest: record } : {}) },
      reattached: !created,
      captured,
    });
  }

  getSnapshot(sessionId: string): Result<SessionSnapshot> {
    const session = this.store.getSession(sessionId);
    if (!session) return err(rennetError('not-found', `no session ${sessionId} in the store`, { sessionId }));
    const pullRequest = this.pullRequestRecord(sessionId);
    const extra = pullRequest ? { pullRequest } : {};
    if (!session.activePatchsetId) return ok({ session, patchset: null, ...extra });
    const patchset = this.store.getPatchset(session.activePatchsetId);
    if (!patchset) {
      return err(rennetError('store-failed', `session ${sessionId} names patchset ${session.activePatchsetId}, which the store no longer holds`));
    }
    return ok({ session, patchset: summarizePatchset(patchset), ...extra });
  }

  /** The request as last read from its forge (the newest `forge.pullRequest` event); null for other targets. */
  pullRequestRecord(sessionId: string): PullRequestRecord | null {
    const events = this.store.readEvents(sessionId).filter((e) => e.kind === PULL_REQUEST_EVENT_KIND);
    const last = events.at(-1);
    if (!last) return null;
    const parsed = PullRequestRecord.safeParse(last.payload);
    return parsed.success ? parsed.data : null;
  }

  listSessions(): Session[] {
    return this.store.listSessions();
  }

  getPatchset(id: string): Result<Patchset> {
    const patchset = this.store.getPatchset(id);
    return patchset ? ok(patchset) : err(rennetError('not-found', `no patchset ${id} in the store`, { patchsetId: id }));
  }

  async readBlob(params: ReadBlobParams): Promise<Result<BlobContent>> {
    const patchset = this.store.getPatchset(params.patchsetId);
    if (!patchset) return err(rennetError('not-found', `no patchset ${params.patchsetId} in the store`));
    const session = this.store.listSessions().find((s) => s.patchsetIds.includes(params.patchsetId));
    if (!session) return err(rennetError('not-found', `patchset ${params.patchsetId} belongs to no session, so its repository is unknown`));
    return readCapturedBlob(session.repoRoot, patchset, params.path, params.side);
  }

  findSession(repoRoot: string, target: Target): Session | undefined {
    return this.store.findSession(repoRoot, targetKey(target));
  }
}
