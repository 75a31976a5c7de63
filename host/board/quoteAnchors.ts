import { QuoteAnchor, type AskProjection, type QuoteAnchorEvent } from '../../protocol/asks';
import { LENSES, PROSE_FIELDS, elementStrings, type BoardElement, type Lens } from '../../protocol/board';

/**
 * Quote threads across a round. PURE: no I/O, inputs never mutated; imports only protocol/.
 *
 * A quote thread is anchored on a span of board prose: (generation, lens, element, exact text).
 * A round mints a successor generation whose boards are drafted afresh, so element ids mean
 * nothing across it. The seed rule: a thread moves onto the corresponding lens of the successor
 * only when its exact quote occurs exactly once in that board's prose — every PROSE_FIELDS field
 * (each item of an array field on its own) of every element, every occurrence counted, overlapping
 * ones too (`aa` occurs twice in `aaa`). The match is exact: no trimming, no whitespace or case
 * folding, no Markdown stripping. No occurrence, or more than one, and the thread is detached: it
 * keeps its last anchor and its messages, is listed as detached and drawn on no board. Nothing is
 * ever guessed onto prose.
 */

export interface SuccessorBoard {
  generationId: string;
  lens: Lens;
  elements: Iterable<BoardElement>;
}

export type QuoteReanchor = { kind: 'moved'; anchor: QuoteAnchor } | { kind: 'detached'; reason: 'no-match' | 'ambiguous'; matches: number };

/** The reader-facing prose strings of an element (PROSE_FIELDS), each array item on its own. */
export function proseStrings(element: BoardElement): string[] {
  return (PROSE_FIELDS[element.kind] ?? []).flatMap((name) => elementStrings(element, name));
}

/** How many positions of `text` start an exact occurrence of `quote` (overlapping ones count). */
export function countOccurrences(text: string, quote: string): number {
  if (quote.length === 0) return 0;
  let count = 0;
  for (let at = text.indexOf(quote); at !== -1; at = text.indexOf(quote, at + 1)) count += 1;
  return count;
}

/**
 * Where `anchor` lands on the successor board of its lens: moved (onto the one element whose
 * prose holds the quote exactly once, in `successor.generationId`) or detached with why and how
 * many occurrences there were. Throws when `successor.lens` is not the anchor's lens: a quote
 * never crosses lenses.
 */
export function reanchorQuote(anchor: QuoteAnchor, successor: SuccessorBoard): QuoteReanchor {
  if (successor.lens !== anchor.lens) throw new Error(`reanchorQuote: a ${anchor.lens} quote cannot be re-anchored on the ${successor.lens} board`);
  let matches = 0;
  let elementId: string | null = null;
  for (const element of successor.elements) {
    for (const text of proseStrings(element)) {
      const n = countOccurrences(text, anchor.quote);
      if (n === 0) continue;
      matches += n;
      elementId = element.id;
    }
  }
  if (matches === 0 || elementId === null) return { kind: 'detached', reason: 'no-match', matches: 0 };
  if (matches > 1) return { kind: 'detached', reason: 'ambiguous', matches };
  return { kind: 'moved', anchor: { kind: 'quote', generationId: successor.generationId, lens: anchor.lens, elementId, quote: anchor.quote } };
}

/** The successor generation as the round composed it: its boards by lens (a lens without one is absent). */
export interface ReanchorSuccessor {
  generationId: string;
  boards: Partial<Record<Lens, Iterable<BoardElement>>>;
}

/**
 * Why a thread was detached, beyond reanchorQuote's reasons: `no-board` (the successor has no
 * board of its lens), `unnameable` (its one match is in an element, or a generation, whose id the
 * ask log cannot hold).
 */
export type ThreadOutcome = QuoteReanchor | { kind: 'detached'; reason: 'no-board' | 'unnameable'; matches: number };

export interface ThreadReanchor {
  threadId: string;
  /** The quoteAnchor event to append (host/asks/log.ts appendHostEvent). */
  event: QuoteAnchorEvent;
  outcome: ThreadOutcome;
}

/**
 * The quoteAnchor events a round's successor implies: one per quote thread (open or closed,
 * attached or detached) anchored on `priorGenerationId`, in thread-id order. Moved: the new
 * anchor, attached. Otherwise: the thread's own anchor, detached. A thread whose event would
 * change nothing (already detached there, or the successor is the prior) gets none, so the
 * events always apply to `projection`. Each lens's elements are read once, whatever iterable
 * they come as.
 */
export function reanchorThreads(projection: AskProjection, priorGenerationId: string, successor: ReanchorSuccessor): ThreadReanchor[] {
  const boards = new Map<Lens, readonly BoardElement[]>();
  for (const lens of LENSES) {
    const elements = Object.hasOwn(successor.boards, lens) ? successor.boards[lens] : undefined;
    if (elements !== undefined) boards.set(lens, [...elements]);
  }
  const out: ThreadReanchor[] = [];
  for (const threadId of Object.keys(projection.quoteThreads).sort()) {
    const thread = projection.quoteThreads[threadId];
    if (!thread || thread.anchor.generationId !== priorGenerationId) continue;
    const from = thread.anchor;
    const elements = boards.get(from.lens);
    let outcome: ThreadOutcome = elements ? reanchorQuote(from, { generationId: successor.generationId, lens: from.lens, elements }) : { kind: 'detached', reason: 'no-board', matches: 0 };
    if (outcome.kind === 'moved' && !QuoteAnchor.safeParse(outcome.anchor).success) outcome = { kind: 'detached', reason: 'unnameable', matches: 1 };
    const anchor = outcome.kind === 'moved' ? outcome.anchor : from;
    const detached = outcome.kind === 'detached';
    const same = anchor.generationId === from.generationId && anchor.elementId === from.elementId && anchor.lens === from.lens && anchor.quote === from.quote;
    if (same && detached === thread.detached) continue;
    out.push({
      threadId,
      event: { type: 'quoteAnchor', threadId, anchor: { kind: 'quote', generationId: anchor.generationId, lens: anchor.lens, elementId: anchor.elementId, quote: anchor.quote }, detached },
      outcome,
    });
  }
  return out;
}
