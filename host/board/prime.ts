import type { Lens } from '../../protocol/board';
import { pathOnSide, type Patchset } from '../../protocol/patchset';
import { BoardSeat, type SeatResult } from './seat';
import { emptyBoard, type WriterContext } from './state';

/**
 * The board writer's first call in a process runs cold: V8 compiles the tool schemas, the element
 * rules and the prose checks as they are first reached, which on this machine made a seat's first
 * write 5–60 ms where the next took under 1 ms — and the first writes are the ones a reviewer
 * waits on. `warmBoardWriter` makes those calls on scratch boards nobody sees (no frames, no
 * store), while the seats wait for their models, so the first real write finds the code compiled.
 *
 * Pure: it builds throwaway BoardSeats over the run's own citation index and returns what each
 * call answered, so a test can hold that every warming call is accepted (a refused one would warm
 * only the refusal path).
 */
export interface WarmCall {
  lens: Lens;
  tool: string;
  refused: string | null;
}

/** The lenses whose tools cover the shared rules: a section and a citation on a core board. */
const WARMED_LENSES: readonly Lens[] = ['sequence'];

export function warmBoardWriter(patchset: Patchset, context: WriterContext): WarmCall[] {
  const calls: WarmCall[] = [];
  const range = firstChangedRange(patchset);
  for (const lens of WARMED_LENSES) {
    const seat = new BoardSeat({ state: emptyBoard(lens, patchset.id), context });
    const call = (tool: string, input: Record<string, unknown>) => {
      const outcome = seat.call(tool, input);
      calls.push({ lens, tool, refused: outcome.isError ? outcome.text : null });
      return outcome;
    };
    call('set_document', { title: 'Warming the writer', intro_markdown: 'The change renames a value. Nothing else moves.' });
    const section = call('add_section', { title: 'Warm section', body_markdown: 'Read the changed lines in order.' });
    if (range) {
      const cited = call('cite', { path: range.path, side: range.side, start_line: range.line, end_line: range.line });
      const parent = createdId(section.result);
      const ref = createdId(cited.result);
      if (parent && ref) call('add_order_step', { parent_id: parent, title: 'First step', explanation_markdown: 'Start where the change starts.', span: ref });
    }
  }
  return calls;
}

/** The first changed line of the change: an added line on the head side or a deleted one on the base side. */
function firstChangedRange(patchset: Patchset): { path: string; side: 'head' | 'base'; line: number } | null {
  for (const file of patchset.files) {
    for (const hunk of file.hunks) {
      let head = hunk.newStart;
      let base = hunk.oldStart;
      for (const line of hunk.lines) {
        if (line.kind === 'add') return { path: pathOnSide(file, 'head'), side: 'head', line: head };
        if (line.kind === 'del') return { path: pathOnSide(file, 'base'), side: 'base', line: base };
        head++;
        base++;
      }
    }
  }
  return null;
}

/** The id an accepted verb created (a section, a code_ref). */
function createdId(result: SeatResult): string | null {
  return 'status' in result && result.status === 'accepted' ? result.id : null;
}
