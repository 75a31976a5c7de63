import assert from 'node:assert/strict';
import { foldAsks } from '../../../host/asks/fold';
import { capturePatchset } from '../../../host/capture/capture';
import { openRepo } from '../../../host/capture/repo';
import type { ComposeReviewInput } from '../../../host/exits/compose';
import { flaggedBoardId, type AskAnchor, type AskEvent, type AskIntent, type AskLane, type AskProjection, type CodeSpan, type VerdictOverride } from '../../../protocol/asks';
import type { ReviewGrounding, ReviewTarget } from '../../../protocol/exits';
import { Patchset as PatchsetSchema, type CaptureOptions, type Patchset } from '../../../protocol/patchset';
import { TestRepo } from '../../fixtures/gitRepo';

export const SESSION = 's-exits';
const lines = (n: number, prefix = 'line') => Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}`).join('\n') + '\n';

/**
 * One real repository, captured: what every fixture test composes over.
 * - src/a.ts: line 10 changed, a line added after 30 → hunks @@ -7,7 +7,7 @@ and @@ -28,6 +28,7 @@.
 * - old/name.ts → new/name.ts (renamed), line 5 changed → @@ -2,7 +2,7 @@.
 * - gone.ts deleted (5 lines); img.bin binary; crlf.txt (CRLF endings) line 6 changed.
 * - wide.ts: lines 10 and 20 changed, 9 unchanged lines between (one hunk at -U5, two at -U3).
 */
export async function captureFixture(options?: Partial<CaptureOptions>): Promise<{ repo: TestRepo; patchset: Patchset }> {
  const r = new TestRepo();
  r.write('src/a.ts', lines(40))
    .write('old/name.ts', lines(20, 'n'))
    .write('gone.ts', lines(5, 'g'))
    .write('img.bin', Buffer.from([0, 1, 2, 3]))
    .write('crlf.txt', lines(12, 'c').replace(/\n/g, '\r\n'))
    .write('wide.ts', lines(30, 'w'));
  r.commit('base');
  r.branch('feature');
  r.write('src/a.ts', lines(40).replace('line 10\n', 'line ten\n').replace('line 30\n', 'line 30\nline 30b\n'));
  r.remove('old/name.ts').write('new/name.ts', lines(20, 'n').replace('n 5\n', 'n five\n'));
  r.remove('gone.ts');
  r.write('img.bin', Buffer.from([0, 1, 2, 4]));
  r.write('crlf.txt', lines(12, 'c').replace(/\n/g, '\r\n').replace('c 6\r\n', 'c six\r\n'));
  r.write('wide.ts', lines(30, 'w').replace('w 10\n', 'w ten\n').replace('w 20\n', 'w twenty\n'));
  r.commit('change');
  const handle = await openRepo(r.dir);
  assert.ok(handle.ok);
  const captured = await capturePatchset(handle.value, { kind: 'branch', base: 'main', head: 'feature' }, options);
  assert.ok(captured.ok, captured.ok ? '' : captured.error.message);
  PatchsetSchema.parse(captured.value);
  return { repo: r, patchset: captured.value };
}

/** Builds a projection through the real fold, from the events the log would hold. */
export class Asks {
  private readonly events: AskEvent[] = [];
  private next = 1;
  private tick = 0;

  private now(): string {
    return new Date(Date.UTC(2026, 0, 1) + ++this.tick * 1000).toISOString();
  }

  ask(anchor: AskAnchor, text: string, intent: AskIntent = 'comment', lane: AskLane = 'post-review', ordinal?: number): string {
    const askId = `ask-${(this.next++).toString(16).padStart(4, '0')}`;
    this.events.push({ type: 'stage', askId, anchor, text, intent, lane, createdAt: this.now(), editedAt: null, ordinal: ordinal ?? this.events.length + 1 });
    return askId;
  }

  edit(askId: string, text: string, intent: AskIntent = 'comment'): this {
    this.events.push({ type: 'edit', askId, text, intent, editedAt: this.now() });
    return this;
  }

  retire(askId: string): this {
    this.events.push({ type: 'retire', askId, reason: null, at: this.now() });
    return this;
  }

  lineComment(anchor: CodeSpan, text: string): this {
    const at = this.now();
    this.events.push({ type: 'setLineComment', anchor, text, createdAt: at, updatedAt: at });
    return this;
  }

  override(verdict: VerdictOverride): this {
    this.events.push({ type: 'setVerdictOverride', verdict });
    return this;
  }

  projection(): AskProjection {
    return foldAsks(this.events);
  }
}

export function line(patchset: Patchset, path: string, side: 'base' | 'head', startLine: number, endLine = startLine): AskAnchor & CodeSpan {
  return { kind: 'line', patchsetId: patchset.id, path, side, startLine, endLine };
}

export function span(patchset: Patchset, path: string, side: 'base' | 'head', startLine: number, endLine = startLine): CodeSpan {
  return { patchsetId: patchset.id, path, side, startLine, endLine };
}

export function finding(findingId: string, codeRef?: CodeSpan): AskAnchor {
  const generationId = 'g-one';
  const base = { kind: 'finding' as const, generationId, boardId: flaggedBoardId(SESSION, generationId), findingId };
  return codeRef ? { ...base, codeRef } : base;
}

export function target(patchset: Patchset, over: Partial<ReviewTarget> = {}): ReviewTarget {
  return { provider: 'github', host: 'github.com', owner: 'acme', repo: 'widgets', number: 42, headSha: patchset.head, baseSha: patchset.base, ...over };
}

export const GROUNDING: ReviewGrounding = {
  lenses: [
    { lens: 'noise', state: 'failed', sections: 0, findings: 0, groups: 0 },
    { lens: 'design', state: 'settled', sections: 3, findings: 0, groups: 0 },
    { lens: 'flagged', state: 'settled', sections: 1, findings: 2, groups: 0 },
    { lens: 'decisions', state: 'absent', sections: 0, findings: 0, groups: 0 },
  ],
  findings: { open: 1, dismissed: 1 },
};

export function input(patchset: Patchset, projection: AskProjection, over: Partial<ComposeReviewInput> = {}): ComposeReviewInput {
  return { sessionId: SESSION, patchset, projection, target: target(patchset), ownPullRequest: false, grounding: GROUNDING, ...over };
}
