import { buildCitationIndex } from '../../host/board/citations';
import { BoardSeat } from '../../host/board/seat';
import { emptyBoard } from '../../host/board/state';
import type { HarnessEvent, SeatSpec, ToolPort, TurnRequest } from '../../host/pipeline/ports';
import type { Lens } from '../../protocol/board';
import type { Patchset } from '../../protocol/patchset';
import { capturedFixture } from '../contract/mcpFixture';
import type { TestRepo } from '../fixtures/gitRepo';
import type { Step } from './common';

/**
 * For harness tests against the scripted servers: a REAL BoardSeat over a REAL captured change
 * (test/contract/mcpFixture.ts: src/app.ts changed at lines 5 and 30, head regions 2-8 and
 * 27-33), its in-process ToolPort, and a TurnRequest that records events.
 */

export interface SeatKit {
  repo: TestRepo;
  patchset: Patchset;
  seat: BoardSeat;
  tools: ToolPort;
  cleanup(): void;
}

export async function seatKit(lens: Lens = 'sequence'): Promise<SeatKit> {
  const { repo, patchset } = await capturedFixture();
  const seat = new BoardSeat({ state: emptyBoard(lens, patchset.id), context: { author: 'scripted-model', citations: buildCitationIndex(patchset) } });
  const tools: ToolPort = {
    tools: seat.tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })),
    call: async (name, input) => {
      const r = seat.call(name, input);
      return { text: r.text, isError: r.isError };
    },
  };
  return { repo, patchset, seat, tools, cleanup: () => repo.cleanup() };
}

export type RecordingRequest = TurnRequest & { events: HarnessEvent[] };

export function turnRequest(tools: ToolPort, overrides: Partial<TurnRequest> & { seat?: SeatSpec } = {}): RecordingRequest {
  const events: HarnessEvent[] = [];
  const seat = overrides.seat ?? { seatId: 'sequence:drafter', lens: 'sequence', role: 'drafter' };
  return {
    seat,
    prompt: `Seat: ${seat.seatId}\nWrite the Sequence board of this change.`,
    followUp: false,
    cwd: '.',
    tools,
    mcp: null,
    signal: new AbortController().signal,
    ...overrides,
    onEvent: (event) => {
      events.push(event);
      overrides.onEvent?.(event);
    },
    events,
  };
}

/**
 * A Sequence board that settles, one tool call per model step: cite → section → step →
 * set_document → finish, then the model's closing text. The step names the citation and the
 * section through `as` names; `$last`-style ids come from the tool results the client sends back.
 */
export const SEQUENCE_STEPS: Step[] = [
  { toolCalls: [{ name: 'cite', input: { path: 'src/app.ts', side: 'head', start_line: 4, end_line: 6 }, as: 'c' }] },
  { toolCalls: [{ name: 'add_section', input: { title: 'Reading order', body_markdown: 'Two lines of the module change.' }, as: 's' }] },
  { toolCalls: [{ name: 'add_order_step', input: { title: 'Line five changes', explanation_markdown: 'The fifth line now says it changed.', span: '$c', parent_id: '$s' } }] },
  { toolCalls: [{ name: 'set_document', input: { title: 'Two lines change', intro_markdown: 'Two lines now say they changed. Nothing else moves.' } }] },
  { toolCalls: [{ name: 'finish', input: {} }] },
  { text: 'The board is written.' },
];
