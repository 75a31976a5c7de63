import { RESULT_MAX_BYTES, RESULT_MAX_FINISH_POINTERS, RESULT_MAX_REMOVED_IDS, RESULT_MAX_VIOLATIONS, type FinishPointer, type Refusal } from '../../protocol/board';
import type { VerbCall, VerbResult } from './state';

/**
 * The text a seat reads back from a verb. Every collection a result interpolates is capped and
 * says how much it left out, because a tool result is billed like a prompt and re-read on every
 * later round trip of the turn.
 */

export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

/** "a, b, c …and 1,231 more (not listed)": at most `cap` items, with an honest remainder. */
export function boundedList(items: readonly string[], cap: number, separator = ', '): string {
  if (items.length <= cap) return items.join(separator);
  return `${items.slice(0, cap).join(separator)}${separator.trim() === '' ? separator : ' '}${moreMarker(items.length - cap)}`;
}

export function moreMarker(hidden: number): string {
  return `…and ${formatCount(hidden)} more (not listed)`;
}

const NOTHING_DONE: Record<VerbCall['verb'], string> = {
  set_document: 'The document was not changed.',
  add: 'Nothing was created.',
  cite: 'Nothing was created.',
  update: 'Nothing was changed.',
  remove_element: 'Nothing was removed.',
  finish: 'The board was not settled.',
  settle_absent: 'The board was not settled.',
};

export function renderRefusal(refusal: Refusal): string {
  const message = refusal.message.replace(/[.\s]+$/, '');
  const admissible = refusal.admissible.trim();
  return `refused (${refusal.rule}) at ${refusal.field}: ${message}.${admissible ? ` ${capitalise(admissible.replace(/[.\s]+$/, ''))}.` : ''}`;
}

export function renderPointer(pointer: FinishPointer): string {
  return `- (${pointer.rule}) ${pointer.element}: ${pointer.sentence}`;
}

/** The finish verdict, as carried into a follow-up turn. */
export function renderPointers(pointers: readonly FinishPointer[]): string {
  const head = `not settled: finish found ${formatCount(pointers.length)} thing${pointers.length === 1 ? '' : 's'} to fix; the board is still drafting. Answer each with further calls, then call finish again.`;
  return fitLines(head, pointers.map(renderPointer), RESULT_MAX_FINISH_POINTERS, '');
}

export function renderResult(result: VerbResult): string {
  switch (result.status) {
    case 'accepted': {
      const message = result.message.trim();
      if (!result.removed || result.removed.length === 0) return message;
      const removed = `removed ids: ${boundedList(result.removed, RESULT_MAX_REMOVED_IDS)}`;
      return fitBytes(`${message}\n${removed}`);
    }
    case 'refused': {
      const lines = result.refusals.map(renderRefusal);
      if (lines.length === 1) return fitBytes(`${lines[0]} ${NOTHING_DONE[result.verb]}`);
      const head = `refused: ${formatCount(lines.length)} problems with this call.`;
      return fitLines(head, lines, RESULT_MAX_VIOLATIONS, NOTHING_DONE[result.verb]);
    }
    case 'settled':
      return result.message.trim();
    case 'pointers':
      return renderPointers(result.pointers);
  }
}

/**
 * Joins a head, at most `cap` lines and a tail; if the text would still exceed the byte ceiling,
 * shows fewer lines. The marker always says how many were left out.
 */
function fitLines(head: string, lines: readonly string[], cap: number, tail: string): string {
  let shown = Math.min(cap, lines.length);
  for (;;) {
    const parts: string[] = [];
    if (head) parts.push(head);
    parts.push(...lines.slice(0, shown));
    if (shown < lines.length) parts.push(moreMarker(lines.length - shown));
    if (tail) parts.push(tail);
    const text = parts.join('\n');
    if (shown === 0 || byteLength(text) <= RESULT_MAX_BYTES) return shown === 0 ? fitBytes(text) : text;
    shown--;
  }
}

/** Last resort: a single oversized line is cut at the ceiling and says so. */
function fitBytes(text: string): string {
  if (byteLength(text) <= RESULT_MAX_BYTES) return text;
  const marker = ' …(cut to fit the result ceiling)';
  let cut = text.slice(0, RESULT_MAX_BYTES - marker.length);
  while (byteLength(cut) + byteLength(marker) > RESULT_MAX_BYTES) cut = cut.slice(0, -16);
  return cut + marker;
}

export function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

function capitalise(text: string): string {
  return text.length === 0 ? text : text[0]!.toUpperCase() + text.slice(1);
}
