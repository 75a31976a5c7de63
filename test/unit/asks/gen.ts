import { ASK_LANES, flaggedBoardId, type AskAnchor, type AskCommand, type AskEvent, type AskIntent, type AskProjection, type CodeSpan, type VerdictOverride } from '../../../protocol/asks';
import type { MintContext } from '../../../host/asks/commands';

/** mulberry32: a small seeded PRNG, so a failing sequence is reproducible from its seed. */
export function prng(seed: number) {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick<T>(xs: readonly T[]): T {
      if (xs.length === 0) throw new Error('pick from an empty list');
      return xs[Math.floor(next() * xs.length)] as T;
    },
  };
}
export type Rand = ReturnType<typeof prng>;

export const SESSION = 's-test';
export const GENERATIONS = ['g-one', 'g-two'] as const;
const INTENTS: AskIntent[] = ['request-change', 'comment', 'question', 'approval'];
const VERDICTS: Array<VerdictOverride | null> = ['approve', 'request-changes', 'comment', null];

/** A pure mint context: a counter for ids, a ticking clock. */
export function testContext(sessionId = SESSION) {
  let ids = 0;
  let tick = 0;
  return (ordinal: number): MintContext => ({
    sessionId,
    now: new Date(Date.UTC(2026, 0, 1) + ++tick * 1000).toISOString(),
    ordinal,
    // Ids are not in minting order (as the host's random ones are not): order must come from ordinals.
    newId: (prefix) => `${prefix}-${(Math.imul(++ids, 2654435761) >>> 0).toString(16)}`,
  });
}

/** A small pool of spans, so comments land on the same keys and overwrite each other. */
function span(r: Rand): CodeSpan {
  const start = 1 + r.int(4);
  return { patchsetId: r.pick(['ps-a', 'ps-b']), path: r.pick(['src/a.ts', 'src/dir/b c.ts', 'x|y:1.ts']), side: r.pick(['base', 'head']), startLine: start, endLine: start + r.int(2) };
}

export function findingRef(r: Rand, sessionId = SESSION) {
  const generationId = r.pick(GENERATIONS);
  return { generationId, boardId: flaggedBoardId(sessionId, generationId), findingId: r.pick(['e1', 'e2', 'e3']) };
}

function anchor(r: Rand): AskAnchor {
  switch (r.int(5)) {
    case 0:
      return { kind: 'line', ...span(r) };
    case 1:
      return { kind: 'finding', ...findingRef(r) };
    case 2:
      return { kind: 'finding', ...findingRef(r), codeRef: span(r) };
    case 3:
      return { kind: 'quote', generationId: r.pick(GENERATIONS), lens: r.pick(['design', 'flagged']), elementId: `e${r.int(5)}`, quote: r.pick(['exact words', 'other “words”']) };
    default:
      return { kind: 'none' };
  }
}

let textCounter = 0;
const freshText = (what: string) => `${what} ${++textCounter}`;

/** A command that applies to `p`, of a type chosen at random among those that can. */
export function validCommand(r: Rand, p: AskProjection): AskCommand {
  const staged = p.asks.filter((a) => a.state === 'staged');
  const retired = p.asks.filter((a) => a.state === 'retired');
  const threads = Object.entries(p.quoteThreads);
  const open = threads.filter(([, t]) => t.open);
  const closed = threads.filter(([, t]) => !t.open);
  const comments = Object.keys(p.lineComments);
  const dismissed = Object.keys(p.findingDispositions);
  const options: Array<() => AskCommand> = [
    () => ({ type: 'stage', anchor: anchor(r), text: freshText('ask'), intent: r.pick(INTENTS), lane: r.pick(ASK_LANES) }),
    () => ({ type: 'quoteOpen', anchor: { kind: 'quote', generationId: r.pick(GENERATIONS), lens: 'sequence', elementId: `e${r.int(5)}`, quote: 'a span' } }),
    () => ({ type: 'setVerdictOverride', verdict: r.pick(VERDICTS.filter((v) => v !== p.verdictOverride)) }),
    () => ({ type: 'setLineComment', anchor: span(r), text: freshText('comment') }),
  ];
  if (staged.length > 0) {
    options.push(
      () => {
        const ask = r.pick(staged);
        const which = r.int(3);
        if (which === 0) return { type: 'edit', askId: ask.id, text: freshText('edited') };
        const intent = r.pick(INTENTS.filter((i) => i !== ask.intent));
        return which === 1 ? { type: 'edit', askId: ask.id, intent } : { type: 'edit', askId: ask.id, text: freshText('edited'), intent };
      },
      () => (r.int(2) ? { type: 'retire', askId: r.pick(staged).id, reason: 'superseded by round 2' } : { type: 'retire', askId: r.pick(staged).id }),
      () => ({ type: 'unstage', askId: r.pick(staged).id }),
    );
  }
  if (retired.length > 0) options.push(() => ({ type: 'restore', askId: r.pick(retired).id }));
  if (open.length > 0) {
    options.push(
      () => ({ type: 'quoteReply', threadId: r.pick(open)[0], author: r.pick(['reviewer', 'agent'] as const), text: freshText('message') }),
      () => ({ type: 'quoteReply', threadId: r.pick(open)[0], author: 'reviewer', text: freshText('message') }),
      () => ({ type: 'quoteClose', threadId: r.pick(open)[0] }),
    );
  }
  if (closed.length > 0) options.push(() => ({ type: 'quoteOpen', threadId: r.pick(closed)[0] }));
  if (comments.length > 0) options.push(() => ({ type: 'clearLineComment', key: r.pick(comments) }));
  const candidates = [...Array(6)].map(() => findingRef(r)).filter((f) => !dismissed.includes(`${f.generationId}|${f.boardId}|${f.findingId}`));
  if (candidates.length > 0) options.push(() => ({ type: 'dismissFinding', ...r.pick(candidates) }));
  if (dismissed.length > 0) {
    options.push(() => {
      const [generationId = '', boardId = '', findingId = ''] = r.pick(dismissed).split('|');
      return { type: 'restoreFinding', generationId, boardId, findingId };
    });
  }
  return r.pick(options)();
}

/** A well-formed command that does NOT apply to `p`, or undefined when none of its kind can be made. */
export function inapplicableCommand(r: Rand, p: AskProjection): AskCommand | undefined {
  const staged = p.asks.filter((a) => a.state === 'staged');
  const retired = p.asks.filter((a) => a.state === 'retired');
  const threads = Object.entries(p.quoteThreads);
  const open = threads.filter(([, t]) => t.open);
  const closed = threads.filter(([, t]) => !t.open);
  const dismissed = Object.keys(p.findingDispositions);
  const options: Array<() => AskCommand> = [
    () => (r.int(2) ? { type: 'edit', askId: 'ask-nope', text: 'x' } : { type: r.pick(['retire', 'restore', 'unstage'] as const), askId: 'ask-nope' }),
    () => ({ type: 'quoteReply', threadId: 'qt-nope', author: 'reviewer', text: 'x' }),
    () => ({ type: 'quoteClose', threadId: 'qt-nope' }),
    () => ({ type: 'quoteOpen', threadId: 'qt-nope' }),
    () => ({ type: 'clearLineComment', key: 'ps-a|head|nowhere.ts:1-1' }),
    () => ({ type: 'setVerdictOverride', verdict: p.verdictOverride }),
    () => ({ type: 'restoreFinding', generationId: 'g-zz', boardId: flaggedBoardId(SESSION, 'g-zz'), findingId: 'e9' }),
    () => ({ type: 'dismissFinding', generationId: 'g-one', boardId: flaggedBoardId('s-other', 'g-one'), findingId: 'e1' }),
  ];
  if (staged.length > 0) {
    options.push(
      () => ({ type: 'restore', askId: r.pick(staged).id }),
      () => {
        const ask = r.pick(staged);
        return { type: 'edit', askId: ask.id, text: ask.text, intent: ask.intent };
      },
    );
  }
  if (retired.length > 0) {
    options.push(
      () => ({ type: r.pick(['retire', 'unstage'] as const), askId: r.pick(retired).id }),
      () => ({ type: 'edit', askId: r.pick(retired).id, text: 'new text' }),
    );
  }
  if (open.length > 0) options.push(() => ({ type: 'quoteOpen', threadId: r.pick(open)[0] }));
  if (closed.length > 0) {
    options.push(
      () => ({ type: 'quoteReply', threadId: r.pick(closed)[0], author: 'agent', text: 'late' }),
      () => ({ type: 'quoteClose', threadId: r.pick(closed)[0] }),
    );
  }
  if (dismissed.length > 0) {
    options.push(() => {
      const [generationId = '', boardId = '', findingId = ''] = r.pick(dismissed).split('|');
      return { type: 'dismissFinding', generationId, boardId, findingId };
    });
  }
  const comments = Object.entries(p.lineComments);
  if (comments.length > 0) {
    options.push(() => {
      const [, c] = r.pick(comments);
      return { type: 'setLineComment', anchor: c.anchor, text: c.text };
    });
  }
  return r.pick(options)();
}

/** Quote anchors a host re-anchoring may set: a small pool, so moves land on and off each other. */
const HOST_ANCHORS = [
  { kind: 'quote', generationId: 'g-one', lens: 'sequence', elementId: 'e1', quote: 'a span' },
  { kind: 'quote', generationId: 'g-two', lens: 'sequence', elementId: 'e7', quote: 'a span' },
  { kind: 'quote', generationId: 'g-two', lens: 'sequence', elementId: 'e2', quote: 'a span' },
] as const;

/**
 * A host-only event (quoteAnchor) that applies to `p`: a thread moved, detached or both, never
 * set to what it already is; undefined when `p` has no thread.
 */
export function validHostEvent(r: Rand, p: AskProjection): AskEvent | undefined {
  const threads = Object.entries(p.quoteThreads);
  if (threads.length === 0) return undefined;
  const [threadId, thread] = r.pick(threads);
  for (;;) {
    const anchor = r.int(3) === 0 ? thread.anchor : r.pick(HOST_ANCHORS);
    const detached = r.int(2) === 0;
    const same = anchor.generationId === thread.anchor.generationId && anchor.elementId === thread.anchor.elementId && anchor.quote === thread.anchor.quote && anchor.lens === thread.anchor.lens;
    if (same && detached === thread.detached) continue;
    return { type: 'quoteAnchor', threadId, anchor: { ...anchor }, detached };
  }
}
