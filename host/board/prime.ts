import type { Lens } from '../../protocol/board';
import { pathOnSide, type ChangedRegion, type Patchset } from '../../protocol/patchset';
import { BoardSeat, type SeatResult } from './seat';
import { emptyBoard, type WriterContext } from './state';

/**
 * The board writer's first call in a process runs cold: V8 compiles the tool schemas, the element
 * rules and the prose checks as they are first reached, which on this machine made a seat's first
 * write 5–60 ms where the next took under 1 ms — and the first writes are the ones a reviewer
 * waits on. `warmBoardWriter` makes those calls on a scratch board nobody sees (no frames, no
 * store), while the seats wait for their models, so the first real write finds the code compiled.
 *
 * Pure: it builds a throwaway BoardSeat over the run's own citation index and returns what each
 * call answered, so a test can hold that every warming call is accepted (a refused one would warm
 * only the refusal path).
 */
export interface WarmCall {
  tool: string;
  refused: string | null;
}

/** One core board covers the shared rules: the document, a section, a citation and a step citing it. */
const WARMED_LENS: Lens = 'sequence';

export function warmBoardWriter(patchset: Patchset, context: WriterContext): WarmCall[] {
  const calls: WarmCall[] = [];
  const seat = new BoardSeat({ state: emptyBoard(WARMED_LENS, patchset.id), context });
  const call = (tool: string, input: Record<string, unknown>) => {
    const outcome = seat.call(tool, input);
    calls.push({ tool, refused: outcome.isError ? outcome.text : null });
    return outcome;
  };
  call('set_document', { title: 'Warming the writer', intro_markdown: 'The change renames a value. Nothing else moves.' });
  const section = call('add_section', { title: 'Warm section', body_markdown: 'Read the changed lines in order.' });
  const cited = firstCitable(patchset);
  if (cited) {
    const ref = createdId(call('cite', { path: cited.path, side: cited.region.side, start_line: cited.region.startLine, end_line: cited.region.startLine }).result);
    const parent = createdId(section.result);
    if (parent && ref) call('add_order_step', { parent_id: parent, title: 'First step', explanation_markdown: 'Start where the change starts.', span: ref });
  }
  return calls;
}

/** The capture's first changed region that came from a hunk, with its file's path on that side. */
function firstCitable(patchset: Patchset): { path: string; region: ChangedRegion } | null {
  for (const file of patchset.files) {
    const region = file.regions.find((r) => r.hunkId !== null);
    if (region) return { path: pathOnSide(file, region.side), region };
  }
  return null;
}

/** The id an accepted verb created (a section, a code_ref). */
function createdId(result: SeatResult): string | null {
  return 'status' in result && result.status === 'accepted' ? result.id : null;
}
