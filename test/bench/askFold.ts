import { performance } from 'node:perf_hooks';
import { ASK_LANES, lineCommentKey, type AskEvent, type AskIntent, type VerdictOverride } from '../../protocol/asks';
import { foldAskLog } from '../../host/asks/fold';

/**
 * Fold time of a long ask log: `events` valid events of every type in a realistic mix (mostly
 * staging, editing and thread replies), generated once from a fixed seed, then folded from empty
 * `runs` times. Figures for `npm run bench`; nothing is asserted.
 */
export interface AskFoldBench {
  events: number;
  runs: number;
  /** Median fold time of the whole log. */
  foldMs: number;
  minMs: number;
  eventsPerSecond: number;
  /** Size of the final projection. */
  asks: number;
  quoteThreads: number;
  lineComments: number;
  dismissals: number;
  /** Events the fold skipped (0: the generator writes only applicable events). */
  skipped: number;
}

export function benchAskFold(events = 100_000, runs = 5): AskFoldBench {
  const log = syntheticAskLog(events);
  const times: number[] = [];
  let last: ReturnType<typeof foldAskLog> | undefined;
  for (let r = 0; r < Math.max(1, runs); r++) {
    const t0 = performance.now();
    last = foldAskLog(log);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const foldMs = times[Math.floor(times.length / 2)] ?? 0;
  const p = last?.projection;
  return {
    events: log.length,
    runs: times.length,
    foldMs,
    minMs: times[0] ?? 0,
    eventsPerSecond: foldMs > 0 ? Math.round(log.length / (foldMs / 1000)) : 0,
    asks: p?.asks.length ?? 0,
    quoteThreads: p ? Object.keys(p.quoteThreads).length : 0,
    lineComments: p ? Object.keys(p.lineComments).length : 0,
    dismissals: p ? Object.keys(p.findingDispositions).length : 0,
    skipped: last?.skipped.length ?? 0,
  };
}

export function formatAskFoldBench(b: AskFoldBench): string {
  return [
    `fold of ${b.events.toLocaleString('en-US')} ask events: ${b.foldMs.toFixed(1)} ms median of ${b.runs} (min ${b.minMs.toFixed(1)} ms; ${b.eventsPerSecond.toLocaleString('en-US')} events/s)`,
    `final projection: ${b.asks} asks, ${b.quoteThreads} quote threads, ${b.lineComments} line comments, ${b.dismissals} dismissals; ${b.skipped} skipped`,
  ].join('\n');
}

/** A deterministic log of `n` applicable events (mulberry32, fixed seed). */
export function syntheticAskLog(n: number, seed = 0x5eed): AskEvent[] {
  let state = seed >>> 0;
  const rand = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const take = <T>(xs: T[]): T => xs.splice(Math.floor(rand() * xs.length), 1)[0] as T;
  const intents: AskIntent[] = ['request-change', 'comment', 'question', 'approval'];
  const verdicts: Array<VerdictOverride | null> = ['approve', 'request-changes', 'comment', null];
  const session = 's-bench';
  const staged: string[] = [];
  const retired: string[] = [];
  const open: Array<{ id: string; messages: number }> = [];
  const comments: string[] = [];
  const commented = new Set<string>();
  const dismissed: Array<{ generationId: string; boardId: string; findingId: string }> = [];
  let verdict: VerdictOverride | null = null;
  const out: AskEvent[] = [];
  const at = (i: number) => new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
  for (let i = 0; out.length < n; i++) {
    const now = at(i);
    const roll = rand();
    const generationId = `g-${Math.floor(i / 5000)}`;
    if (roll < 0.3 || staged.length === 0) {
      const id = `ask-${i}`;
      staged.push(id);
      const kind = i % 4;
      const anchor =
        kind === 0
          ? ({ kind: 'line', patchsetId: 'ps-bench', path: `src/m${i % 97}.ts`, side: 'head', startLine: (i % 300) + 1, endLine: (i % 300) + 3 } as const)
          : kind === 1
            ? ({ kind: 'finding', generationId, boardId: `${session}/${generationId}/flagged`, findingId: `e${i % 500}` } as const)
            : kind === 2
              ? ({ kind: 'quote', generationId, lens: 'design', elementId: `e${i % 200}`, quote: 'the exact quoted sentence' } as const)
              : ({ kind: 'none' } as const);
      out.push({ type: 'stage', askId: id, anchor, text: `ask body ${i} `.repeat(8), intent: pick(intents), lane: pick(ASK_LANES), createdAt: now, editedAt: null, ordinal: i + 1 });
    } else if (roll < 0.45) {
      out.push({ type: 'edit', askId: pick(staged), text: `edited body ${i} `.repeat(8), intent: pick(intents), editedAt: now });
    } else if (roll < 0.5) {
      const id = take(staged);
      retired.push(id);
      out.push({ type: 'retire', askId: id, reason: i % 2 ? 'superseded' : null, at: now });
    } else if (roll < 0.53 && retired.length > 0) {
      const id = take(retired);
      staged.push(id);
      out.push({ type: 'restore', askId: id });
    } else if (roll < 0.56) {
      out.push({ type: 'unstage', askId: take(staged) });
    } else if (roll < 0.6 || open.length === 0) {
      const id = `qt-${i}`;
      open.push({ id, messages: 0 });
      out.push({ type: 'quoteOpen', threadId: id, anchor: { kind: 'quote', generationId, lens: 'sequence', elementId: `e${i % 300}`, quote: 'a quoted span' }, openedAt: now });
    } else if (roll < 0.78) {
      const thread = pick(open);
      out.push({ type: 'quoteReply', threadId: thread.id, message: { id: `qm-${i}`, author: i % 2 ? 'agent' : 'reviewer', text: `reply ${i}`, at: now } });
      if (++thread.messages >= 20) {
        open.splice(open.indexOf(thread), 1);
        out.push({ type: 'quoteClose', threadId: thread.id });
      }
    } else if (roll < 0.8) {
      verdict = verdicts.filter((v) => v !== verdict)[Math.floor(rand() * 3)] ?? null;
      out.push({ type: 'setVerdictOverride', verdict });
    } else if (roll < 0.9) {
      const span = { patchsetId: 'ps-bench', path: `src/m${i % 89}.ts`, side: 'head', startLine: (i % 400) + 1, endLine: (i % 400) + 1 } as const;
      const key = lineCommentKey(span);
      if (!commented.has(key)) {
        commented.add(key);
        comments.push(key);
      }
      out.push({ type: 'setLineComment', anchor: span, text: `line comment ${i}`, createdAt: now, updatedAt: now });
    } else if (roll < 0.93 && comments.length > 0) {
      const key = take(comments);
      commented.delete(key);
      out.push({ type: 'clearLineComment', key });
    } else if (roll < 0.98) {
      const ref = { generationId, boardId: `${session}/${generationId}/flagged`, findingId: `e-${i}` };
      dismissed.push(ref);
      out.push({ type: 'dismissFinding', ...ref });
    } else if (dismissed.length > 0) {
      out.push({ type: 'restoreFinding', ...take(dismissed) });
    }
  }
  return out.slice(0, n);
}
