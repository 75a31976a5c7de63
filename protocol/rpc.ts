import { NotificationType, RequestType } from 'vscode-jsonrpc';
import type { Result } from './result';
import type { Target, Session, SessionSnapshot, BranchList } from './session';
import type { Patchset, Side } from './patchset';

/**
 * The extension ⇄ host contract. One constant per message, named `rennet/<domain>/<verb>`.
 * Every request answers a Result so the caller decides on a typed failure; transport errors
 * (host gone) surface as JSON-RPC errors instead.
 */

export interface HostInfo {
  version: string;
  pid: number;
  storeDir: string;
  /** Schema version of the opened store. */
  storeSchema: number;
  /** Sessions read back from the store at start-up. */
  sessions: number;
}

/** extension → host: liveness and identity; the first request after start or restart. */
export const HostHello = new RequestType<Record<string, never>, HostInfo, void>('rennet/host/hello');

export interface ListBranchesParams { repo: string }
/** extension → host: local branches for the picker (current first) and the default base. */
export const RepoListBranches = new RequestType<ListBranchesParams, Result<BranchList>, void>('rennet/repo/listBranches');

export interface OpenReviewParams {
  repo: string;
  target: Target;
  /** Per-capture overrides from settings. */
  maxFileBytes?: number;
}
export interface OpenReviewResult {
  snapshot: SessionSnapshot;
  /** True when an existing session was reattached. */
  reattached: boolean;
  /** True when this open captured a patchset the store did not hold yet. */
  captured: boolean;
}
/** extension → host: find or create the session for a target and capture it if needed. */
export const ReviewOpen = new RequestType<OpenReviewParams, Result<OpenReviewResult>, void>('rennet/review/open');

export interface SessionIdParams { sessionId: string }
/** extension → host: the full snapshot of one session (after a reload or a host restart). */
export const SessionGet = new RequestType<SessionIdParams, Result<SessionSnapshot>, void>('rennet/session/get');
/** extension → host: every session the store holds, most recently updated first. */
export const SessionList = new RequestType<Record<string, never>, Session[], void>('rennet/session/list');

export interface PatchsetIdParams { patchsetId: string }
/** extension → host: one patchset with its hunks. */
export const PatchsetGet = new RequestType<PatchsetIdParams, Result<Patchset>, void>('rennet/patchset/get');

export interface ReadBlobParams { patchsetId: string; path: string; side: Side }
export interface BlobContent {
  path: string;
  side: Side;
  oid: string;
  /** UTF-8 text; null for a binary blob. */
  text: string | null;
  binary: boolean;
  bytes: number;
  truncated: boolean;
}
/** extension → host: an immutable base or head blob of a captured file. */
export const PatchsetReadBlob = new RequestType<ReadBlobParams, Result<BlobContent>, void>('rennet/patchset/readBlob');

/** host → extension: a session changed; the extension fetches or receives its snapshot. */
export const SessionChanged = new NotificationType<SessionSnapshot>('rennet/session/changed');

/** host → extension: a line for the Rennet output channel (never secrets). */
export const HostLog = new NotificationType<{ level: 'info' | 'warn' | 'error'; message: string }>('rennet/host/log');
