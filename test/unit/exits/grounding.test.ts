import assert from 'node:assert/strict';
import { groundingOf } from '../../../host/exits/grounding';
import type { GenerationSnapshot } from '../../../protocol/review';
import { Asks } from './fixtures';

/** A generation whose lanes hold just the elements grounding reads (kind, parent). */
function generation(lanes: Array<{ lens: string; state: string; elements?: Array<{ id: string; kind: string; parent: string | null }> }>): GenerationSnapshot {
  return {
    sessionId: 's-1',
    generationId: 'g-1',
    lanes: lanes.map((l) => ({ lens: l.lens, state: l.state, board: l.elements ? { elements: l.elements } : null })),
  } as unknown as GenerationSnapshot;
}

describe('groundingOf', () => {
  it('counts a settled Noise board by its groups (it writes no sections), the others by their top-level sections', () => {
    const g = groundingOf(
      generation([
        {
          lens: 'design',
          state: 'settled',
          elements: [
            { id: 's1', kind: 'section', parent: null },
            { id: 's2', kind: 'section', parent: 's1' },
          ],
        },
        {
          lens: 'noise',
          state: 'settled',
          elements: [
            { id: 'g1', kind: 'noise_group', parent: null },
            { id: 'e1', kind: 'noise_member', parent: 'g1' },
            { id: 'g2', kind: 'noise_group', parent: null },
          ],
        },
        { lens: 'sequence', state: 'drafting', elements: [{ id: 's1', kind: 'section', parent: null }] },
      ]),
      new Asks().projection(),
    );
    assert.deepEqual(g.lenses, [
      { lens: 'design', state: 'settled', sections: 1, findings: 0, groups: 0 },
      { lens: 'noise', state: 'settled', sections: 0, findings: 0, groups: 2 },
    ]);
  });
});
