import type * as vscode from 'vscode';
import { EXPLAIN_TURN_TIMEOUT_MS, type QuoteAnchor } from '../protocol/asks';
import { err, errorMessage, rennetError, type Result } from '../protocol/result';
import { AsksExplain, type AsksExplainResult } from '../protocol/rpc';
import type { HostClient } from './hostClient';
import { readHarnessConfig } from './lenses';

/**
 * How long the extension waits for an Explain: the host's own turn limit plus a margin, so the
 * host's refusal (with its reason and thread) always arrives before this side gives up.
 */
export const EXPLAIN_TIMEOUT_MS = EXPLAIN_TURN_TIMEOUT_MS + 30_000;

/**
 * Explain a span of board prose (`rennet/asks/explain`) with the harnesses the settings name: the
 * host opens the thread (or asks in `threadId`, an open thread on that anchor), appends the
 * question, runs one read-only turn and appends the answer. The board panel's Explain and Discuss
 * and the editor's Discuss on a finding thread all come here. A refusal's `detail.threadId` names
 * the thread that holds the question when there is one.
 */
export async function explainSpan(host: HostClient, secrets: vscode.SecretStorage, sessionId: string, anchor: QuoteAnchor, threadId?: string): Promise<Result<AsksExplainResult>> {
  try {
    const harness = await readHarnessConfig(secrets);
    return await host.request(AsksExplain, { sessionId, anchor, harness, ...(threadId ? { threadId } : {}) }, EXPLAIN_TIMEOUT_MS);
  } catch (error) {
    return err(rennetError('host-unavailable', errorMessage(error)));
  }
}
