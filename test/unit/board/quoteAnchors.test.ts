import * as assert from 'node:assert/strict';
import { AskEvent, type QuoteAnchor } from '../../../protocol/asks';
import { BoardElement } from '../../../protocol/board';
import { foldAskLog, foldAsks } from '../../../host/asks/fold';
import { countOccurrences, reanchorQuote, reanchorThreads } from '../../../host/board/quoteAnchors';

const AT = '2026-02-01T09:00:00.000Z';
const PRIOR = 'g-prior';
const NEXT = 'g-next';

/** A board element, checked against the protocol's own schema (so fixtures are real elements). */
function el(id: string, fields: Record<string, unknown>): BoardElement {
  return BoardElement.parse({ id, parent: null, author: 'claude', seq: Number(id.slice(1)) || 0, ...fields });
}
const prose = (id: string, markdown: string) => el(id, { kind: 'prose', markdown });
const section = (id: string, title: string, body_markdown?: string) => el(id, { kind: 'section', title, delta: null, ...(body_markdown ? { body_markdown } : {}) });
const codeRef = (id: string, path: string, label?: string) =>
  el(id, { kind: 'code_ref', path, side: 'head', start_line: 1, end_line: 2, patchset_id: 'ps-1', hunk_ids: [], ...(label ? { label } : {}) });
const decision = (id: string, alternatives: string[]) =>
  el(id, { kind: 'decision', title: 'Store events', statement: 'Events are appended.', rationale: 'Replays are exact.', alternatives, evidence: [] });

const quote = (text: string, elementId = 'e3', lens: QuoteAnchor['lens'] = 'design'): QuoteAnchor => ({ kind: 'quote', generationId: PRIOR, lens, elementId, quote: text });
const on = (elements: BoardElement[], lens: QuoteAnchor['lens'] = 'design') => ({ generationId: NEXT, lens, elements });

describe('quote anchors across a round: reanchorQuote', () => {
  it('moves onto the one element that holds the quote, under its new id and the successor generation', () => {
    const board = [section('e1', 'Storage'), prose('e2', 'The log is append-only.'), prose('e7', 'Every write goes through the cache, which is global.')];
    assert.deepEqual(reanchorQuote(quote('the cache, which is global'), on(board)), {
      kind: 'moved',
      anchor: { kind: 'quote', generationId: NEXT, lens: 'design', elementId: 'e7', quote: 'the cache, which is global' },
    });
  });

  it('moves onto the same element id when that is where the quote is', () => {
    const board = [prose('e2', 'Unrelated.'), prose('e3', 'The fold is pure.')];
    const result = reanchorQuote(quote('The fold is pure.', 'e3'), on(board));
    assert.deepEqual(result, { kind: 'moved', anchor: { kind: 'quote', generationId: NEXT, lens: 'design', elementId: 'e3', quote: 'The fold is pure.' } });
  });

  it('detaches with no-match when the quote is nowhere in the prose', () => {
    const board = [prose('e1', 'The fold is pure.'), section('e2', 'Storage', 'Events are durable.')];
    assert.deepEqual(reanchorQuote(quote('the cache is global'), on(board)), { kind: 'detached', reason: 'no-match', matches: 0 });
    assert.deepEqual(reanchorQuote(quote('anything'), on([])), { kind: 'detached', reason: 'no-match', matches: 0 });
  });

  it('detaches as ambiguous when the quote occurs twice in one field', () => {
    const board = [prose('e1', 'Retry on failure. Later: retry on failure.'), prose('e2', 'Other words.')];
    assert.deepEqual(reanchorQuote(quote('etry on failure'), on(board)), { kind: 'detached', reason: 'ambiguous', matches: 2 });
    // Overlapping occurrences are occurrences too.
    assert.equal(countOccurrences('aaa', 'aa'), 2);
    assert.deepEqual(reanchorQuote(quote('aa'), on([prose('e1', 'aaa')])), { kind: 'detached', reason: 'ambiguous', matches: 2 });
  });

  it('detaches as ambiguous when the quote occurs in two elements, or in two fields of one', () => {
    const board = [prose('e1', 'Today the cache is global.'), section('e5', 'Why the cache is global')];
    assert.deepEqual(reanchorQuote(quote('the cache is global'), on(board)), { kind: 'detached', reason: 'ambiguous', matches: 2 });
    const twoFields = [section('e2', 'Cache scope', 'Cache scope is per session.')];
    assert.deepEqual(reanchorQuote(quote('Cache scope'), on(twoFields)), { kind: 'detached', reason: 'ambiguous', matches: 2 });
  });

  it('matches a quote that is only part of a field', () => {
    const board = [prose('e4', 'First sentence. The middle part of a long paragraph stands here. Last sentence.')];
    const result = reanchorQuote(quote('middle part of a long'), on(board));
    assert.equal(result.kind, 'moved');
    assert.equal(result.kind === 'moved' && result.anchor.elementId, 'e4');
  });

  it('matches Markdown characters literally, and does not see through Markdown markup', () => {
    const md = 'Call `applyVerb()` — it returns **null** when [the rule](src/rules.ts:12) refuses; *never* throws.';
    const board = [prose('e2', md)];
    const literal = '`applyVerb()` — it returns **null** when [the rule](src/rules.ts:12)';
    assert.deepEqual(reanchorQuote(quote(literal), on(board)), { kind: 'moved', anchor: { kind: 'quote', generationId: NEXT, lens: 'design', elementId: 'e2', quote: literal } });
    // The rendered words without their markup are not the field's text: exact, so no match.
    assert.deepEqual(reanchorQuote(quote('it returns null when'), on(board)), { kind: 'detached', reason: 'no-match', matches: 0 });
    // Regex metacharacters are plain text.
    assert.equal(reanchorQuote(quote('(src/rules.ts:12)'), on(board)).kind, 'moved');
    assert.equal(reanchorQuote(quote('.*'), on(board)).kind, 'detached');
  });

  it('is whitespace- and case-exact: no trimming, folding or normalization', () => {
    const board = [prose('e1', 'Two  spaces here.\nA second line.'), prose('e2', 'Tabs\tbetween words.')];
    assert.equal(reanchorQuote(quote('Two  spaces'), on(board)).kind, 'moved');
    assert.deepEqual(reanchorQuote(quote('Two spaces'), on(board)), { kind: 'detached', reason: 'no-match', matches: 0 });
    assert.equal(reanchorQuote(quote('here.\nA second'), on(board)).kind, 'moved');
    assert.equal(reanchorQuote(quote('here. A second'), on(board)).kind, 'detached');
    assert.equal(reanchorQuote(quote('Tabs between'), on(board)).kind, 'detached');
    assert.equal(reanchorQuote(quote('tabs\tbetween'), on(board)).kind, 'detached');
    assert.equal(reanchorQuote(quote(' Two  spaces'), on(board)).kind, 'detached');
  });

  it('reads only prose fields, each array item on its own', () => {
    const board = [codeRef('e1', 'src/cache/global.ts', 'the cache module'), decision('e2', ['Keep a global cache.', 'Cache per session.'])];
    // A path is not prose; a code_ref label is.
    assert.equal(reanchorQuote(quote('src/cache/global.ts'), on(board)).kind, 'detached');
    assert.equal(reanchorQuote(quote('the cache module'), on(board)).kind, 'moved');
    // One alternative matches; text that would span two items matches nothing.
    assert.deepEqual(reanchorQuote(quote('Cache per session.'), on(board)), {
      kind: 'moved',
      anchor: { kind: 'quote', generationId: NEXT, lens: 'design', elementId: 'e2', quote: 'Cache per session.' },
    });
    assert.equal(reanchorQuote(quote('global cache. Cache per'), on(board)).kind, 'detached');
    // An element id is not prose either.
    assert.equal(reanchorQuote(quote('e2'), on(board)).kind, 'detached');
  });

  it('takes any iterable of elements, and never crosses lenses', () => {
    function* board() {
      yield prose('e1', 'Only once here.');
    }
    assert.equal(reanchorQuote(quote('Only once'), { generationId: NEXT, lens: 'design', elements: board() }).kind, 'moved');
    assert.throws(() => reanchorQuote(quote('Only once', 'e1', 'design'), on([prose('e1', 'Only once here.')], 'flagged')), /cannot be re-anchored/);
  });
});

describe('quote anchors across a round: reanchorThreads', () => {
  const anchorOn = (generationId: string, lens: QuoteAnchor['lens'], elementId: string, text: string): QuoteAnchor => ({ kind: 'quote', generationId, lens, elementId, quote: text });
  const log: AskEvent[] = [
    // Design, unique in the successor (under another id), with messages, closed.
    { type: 'quoteOpen', threadId: 'qt-a', anchor: anchorOn(PRIOR, 'design', 'e3', 'the cache is global'), openedAt: AT },
    { type: 'quoteReply', threadId: 'qt-a', message: { id: 'qm-1', author: 'reviewer', text: 'Why global?', at: AT } },
    { type: 'quoteReply', threadId: 'qt-a', message: { id: 'qm-2', author: 'agent', text: 'Shared by design.', at: AT } },
    { type: 'quoteClose', threadId: 'qt-a' },
    // Design, twice in the successor.
    { type: 'quoteOpen', threadId: 'qt-b', anchor: anchorOn(PRIOR, 'design', 'e4', 'retry'), openedAt: AT },
    // Sequence: the successor has no Sequence board.
    { type: 'quoteOpen', threadId: 'qt-c', anchor: anchorOn(PRIOR, 'sequence', 'e2', 'reads the body once'), openedAt: AT },
    // Another generation: not this round's business.
    { type: 'quoteOpen', threadId: 'qt-d', anchor: anchorOn('g-older', 'design', 'e3', 'the cache is global'), openedAt: AT },
    // Flagged, gone from the successor.
    { type: 'quoteOpen', threadId: 'qt-e', anchor: anchorOn(PRIOR, 'flagged', 'e1', 'off by one'), openedAt: AT },
  ];
  const projection = foldAsks(log);
  // One-shot iterables: each lens's elements must be read once for all its threads.
  function* design() {
    yield section('e1', 'Caching');
    yield prose('e8', 'Here the cache is global, for now.');
    yield prose('e9', 'We retry once, then retry again.');
  }
  function* flagged() {
    yield el('e1', {
      kind: 'finding',
      severity: 'minor',
      category: 'correctness',
      title: 'Loop bound',
      body_markdown: 'The loop stops early.',
      remedy_markdown: 'Use <=.',
      anchor: [],
      status: 'open',
      concurrence: [],
      accord: 'concur',
    });
  }

  it('one event per thread of the prior generation: moved, ambiguous, no board, no match; other generations untouched', () => {
    const planned = reanchorThreads(projection, PRIOR, { generationId: NEXT, boards: { design: design(), flagged: flagged() } });
    assert.deepEqual(
      planned.map((p) => [p.threadId, p.outcome]),
      [
        ['qt-a', { kind: 'moved', anchor: anchorOn(NEXT, 'design', 'e8', 'the cache is global') }],
        ['qt-b', { kind: 'detached', reason: 'ambiguous', matches: 2 }],
        ['qt-c', { kind: 'detached', reason: 'no-board', matches: 0 }],
        ['qt-e', { kind: 'detached', reason: 'no-match', matches: 0 }],
      ],
    );
    assert.deepEqual(
      planned.map((p) => p.event),
      [
        { type: 'quoteAnchor', threadId: 'qt-a', anchor: anchorOn(NEXT, 'design', 'e8', 'the cache is global'), detached: false },
        { type: 'quoteAnchor', threadId: 'qt-b', anchor: anchorOn(PRIOR, 'design', 'e4', 'retry'), detached: true },
        { type: 'quoteAnchor', threadId: 'qt-c', anchor: anchorOn(PRIOR, 'sequence', 'e2', 'reads the body once'), detached: true },
        { type: 'quoteAnchor', threadId: 'qt-e', anchor: anchorOn(PRIOR, 'flagged', 'e1', 'off by one'), detached: true },
      ],
    );
    for (const p of planned) assert.ok(AskEvent.safeParse(p.event).success, `${p.threadId}: the event is a valid log event`);

    // The events all apply; the moved thread keeps its messages and closed state.
    const folded = foldAskLog(
      planned.map((p) => p.event),
      projection,
    );
    assert.deepEqual(folded.skipped, []);
    const after = folded.projection.quoteThreads;
    assert.deepEqual(after['qt-a'], { ...projection.quoteThreads['qt-a'], anchor: anchorOn(NEXT, 'design', 'e8', 'the cache is global'), detached: false });
    assert.equal(after['qt-a']?.messages.length, 2);
    assert.equal(after['qt-a']?.open, false);
    assert.deepEqual(
      Object.entries(after).map(([id, t]) => [id, t.detached]),
      [
        ['qt-a', false],
        ['qt-b', true],
        ['qt-c', true],
        ['qt-d', false],
        ['qt-e', true],
      ],
    );
    assert.deepStrictEqual(after['qt-d'], projection.quoteThreads['qt-d']);

    // A second pass over the same successor changes nothing: no events, so nothing refused.
    const again = reanchorThreads(folded.projection, PRIOR, { generationId: NEXT, boards: { design: design(), flagged: flagged() } });
    assert.deepEqual(
      again.map((p) => p.threadId),
      [],
      'moved threads are no longer on the prior; detached ones are already so',
    );
  });

  it('a detached thread re-attaches when a successor of the same generation is composed again and holds its quote once', () => {
    const detached = foldAskLog([{ type: 'quoteAnchor', threadId: 'qt-b', anchor: anchorOn(PRIOR, 'design', 'e4', 'retry'), detached: true }], projection).projection;
    const planned = reanchorThreads(detached, PRIOR, { generationId: 'g-retried', boards: { design: [prose('e2', 'We retry once.')] } });
    const b = planned.find((p) => p.threadId === 'qt-b');
    assert.deepEqual(b?.event, { type: 'quoteAnchor', threadId: 'qt-b', anchor: anchorOn('g-retried', 'design', 'e2', 'retry'), detached: false });
  });

  it('a sole match in an element whose id the ask log cannot name detaches rather than writing a bad anchor', () => {
    const odd = { ...prose('e1', 'the cache is global'), id: 'bad/id' } as BoardElement;
    const planned = reanchorThreads(projection, PRIOR, { generationId: NEXT, boards: { design: [odd] } });
    const a = planned.find((p) => p.threadId === 'qt-a');
    assert.deepEqual(a?.outcome, { kind: 'detached', reason: 'unnameable', matches: 1 });
    assert.equal(a?.event.detached, true);
  });
});
