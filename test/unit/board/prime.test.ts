import assert from 'node:assert/strict';
import { warmBoardWriter } from '../../../host/board/prime';
import { buildCitationIndex } from '../../../host/board/citations';
import { changeVocabulary } from '../../../host/board/prose';
import type { Patchset } from '../../../protocol/patchset';
import { codeChange, specOnlyChange } from '../pipeline/fixtures';

function contextOf(patchset: Patchset) {
  return { author: 'host', citations: buildCitationIndex(patchset), changeWords: changeVocabulary(patchset) };
}

describe('warming the board writer (board/prime.ts)', () => {
  for (const [name, make] of [
    ['a code change', codeChange],
    ['a spec-only change', specOnlyChange],
  ] as const) {
    it(`every warming call on ${name} is accepted, so the write path (not only the refusal path) is compiled`, async () => {
      const { repo, patchset } = await make();
      try {
        const calls = warmBoardWriter(patchset, contextOf(patchset));
        assert.deepEqual(
          calls.map((c) => c.tool),
          ['set_document', 'add_section', 'cite', 'add_order_step'],
        );
        for (const c of calls) assert.equal(c.refused, null, `${c.tool} was refused: ${c.refused}`);
      } finally {
        repo.cleanup();
      }
    });
  }

  it('cites nothing on a change without a changed line, and still warms the document and section verbs', () => {
    const empty = { id: 'p-empty', files: [] } as unknown as Patchset;
    const calls = warmBoardWriter(empty, contextOf(empty));
    assert.deepEqual(
      calls.map((c) => [c.tool, c.refused]),
      [
        ['set_document', null],
        ['add_section', null],
      ],
    );
  });
});
