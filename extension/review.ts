import * as vscode from 'vscode';
import { CAPTURE_MAX_FILE_BYTES, CAPTURE_MIN_FILE_BYTES, type Result, type Target } from '../protocol';
import { ReviewOpen, type OpenReviewResult } from '../protocol/rpc';
import { CAPTURE_TIMEOUT_MS, type HostClient } from './hostClient';
import { captureTitle } from './titles';
import { withProgress } from './ui';

/** `rennet.capture.maxFileBytes`, clamped to what the host accepts. */
export function configuredMaxFileBytes(): number {
  const raw = vscode.workspace.getConfiguration('rennet').get<number>('capture.maxFileBytes', CAPTURE_MAX_FILE_BYTES);
  if (typeof raw !== 'number' || !Number.isFinite(raw)) return CAPTURE_MAX_FILE_BYTES;
  return Math.max(CAPTURE_MIN_FILE_BYTES, Math.floor(raw));
}

/**
 * Ask the host to find or create the session for `target` and capture it, with a progress
 * notification. Resolves with the host's Result; rejects only when the host cannot be reached.
 */
export function openReview(host: HostClient, repo: string, target: Target, currentBranch?: string | null): Promise<Result<OpenReviewResult>> {
  return Promise.resolve(
    withProgress({ location: vscode.ProgressLocation.Notification, title: captureTitle(target, currentBranch), cancellable: false }, () =>
      host.request(ReviewOpen, { repo, target, maxFileBytes: configuredMaxFileBytes() }, CAPTURE_TIMEOUT_MS),
    ),
  );
}
