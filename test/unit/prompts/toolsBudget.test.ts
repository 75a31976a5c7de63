import * as assert from 'node:assert/strict';
import { SEAT_PROMPTS } from '../../../prompts/manifest';
import { buildBoardTools } from '../../../host/board/tools';
import { reviewSurface } from '../../../host/pipeline/reviewers';
import { readSurface, type ChangeSource } from '../../../host/read/tools';

/**
 * The tool-schema tripwire: what a seat is offered (the read tools and its own) rides with every
 * model request, like the prompt. Each seat's schemas, as a provider receives them, stay under the
 * pinned budget in prompts/manifest.ts; growing them is a decision, made there.
 */

const NO_SOURCE: ChangeSource = {
  patchset: {} as ChangeSource['patchset'],
  readTreeFile: async () => ({ kind: 'missing' }),
  search: async () => ({ kind: 'matches', matches: [], truncated: false }),
  readContext: async () => ({ kind: 'missing', available: [] }),
};

function schemaBytes(tools: ReadonlyArray<{ name: string; description: string; inputSchema: unknown }>): number {
  return Buffer.byteLength(JSON.stringify(tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema }))), 'utf8');
}

describe('seat tools: the tool-schema budget tripwire', () => {
  const read = readSurface(NO_SOURCE).tools;
  for (const entry of SEAT_PROMPTS) {
    const key = `${entry.lens}:${entry.role}`;
    it(`${key}: its offered tool schemas stay within ${entry.toolsBudgetBytes} bytes`, () => {
      const own = entry.role === 'reviewer' ? reviewSurface('/nonexistent/findings.md', 'findings.md').tools : buildBoardTools(entry.lens);
      const bytes = schemaBytes(read) + schemaBytes(own);
      assert.ok(bytes <= entry.toolsBudgetBytes, `${key}: ${bytes} bytes of tool schemas, over the pinned ${entry.toolsBudgetBytes}: raise toolsBudgetBytes in prompts/manifest.ts on purpose, or cut`);
      assert.ok(bytes > entry.toolsBudgetBytes * 0.7, `${key}: ${bytes} bytes is far under the pinned ${entry.toolsBudgetBytes}; re-measure and lower it`);
    });
  }
});
