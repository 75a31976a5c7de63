import * as assert from 'node:assert/strict';
import { EXPLAIN_PROMPT, PR_OPENER_PROMPT, SEAT_PROMPTS, documentPromptEntry } from '../../../prompts/manifest';
import { explainSurface } from '../../../host/asks/explainTools';
import { polishSurface } from '../../../host/exits/prPolish';
import { buildBoardTools } from '../../../host/board/tools';
import { reviewSurface } from '../../../host/pipeline/reviewers';
import { readSurface, type ChangeSource } from '../../../host/read/tools';
import { REPORT_TOOLS } from '../../../host/rounds/reportSeat';
import { CLOSURE_TOOLS } from '../../../host/rereview/closureSeat';
import { JUDGE_TOOLS } from '../../../host/eval/judge';

/**
 * The tool-schema tripwire: what a seat is offered (the read tools and its own) rides with every
 * model request, like the prompt. Each seat's schemas, as a provider receives them, stay under the
 * pinned budget in prompts/manifest.ts; growing them is a decision, made there. The one-shot seats
 * are held the same way: an explainer, the pull-request opener and the round report.
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

function withinBudget(key: string, bytes: number, budget: number, where: string): void {
  assert.ok(bytes <= budget, `${key}: ${bytes} bytes of tool schemas, over the pinned ${budget}: raise ${where} in prompts/manifest.ts on purpose, or cut`);
  assert.ok(bytes > budget * 0.7, `${key}: ${bytes} bytes is far under the pinned ${budget}; re-measure and lower it`);
}

describe('seat tools: the tool-schema budget tripwire', () => {
  const read = readSurface(NO_SOURCE).tools;
  for (const entry of SEAT_PROMPTS) {
    const key = `${entry.lens}:${entry.role}`;
    it(`${key}: its offered tool schemas stay within ${entry.toolsBudgetBytes} bytes`, () => {
      const own = entry.role === 'reviewer' ? reviewSurface('/nonexistent/findings.md', 'findings.md').tools : buildBoardTools(entry.lens);
      withinBudget(key, schemaBytes(read) + schemaBytes(own), entry.toolsBudgetBytes, 'toolsBudgetBytes');
    });
  }

  const explain = explainSurface({
    anchor: { kind: 'quote', generationId: 'g-0123456789abcdef', lens: 'sequence', elementId: 'e1', quote: 'x' },
    elements: new Map(),
    boardTitle: '',
    patchset: { files: [] } as unknown as ChangeSource['patchset'],
    paths: { hasPath: () => false, pathsNamed: () => [] },
  }).tools;
  const opener = polishSurface({ draft: { title: 't', body: 'b' }, commits: [] }).tools;
  const report = documentPromptEntry('round-report').toolsBudgetBytes;
  const oneShot: Array<[string, readonly { name: string; description: string; inputSchema: unknown }[], number | undefined, string]> = [
    ['explain', explain, EXPLAIN_PROMPT.toolsBudgetBytes, 'EXPLAIN_PROMPT.toolsBudgetBytes'],
    ['design:pr-opener', opener, PR_OPENER_PROMPT.toolsBudgetBytes, 'PR_OPENER_PROMPT.toolsBudgetBytes'],
    ['round:report', REPORT_TOOLS, report, "the round-report entry's toolsBudgetBytes"],
    ['rereview:closures', CLOSURE_TOOLS, documentPromptEntry('prior-closure').toolsBudgetBytes, "the prior-closure entry's toolsBudgetBytes"],
    ['eval:judge', JUDGE_TOOLS, documentPromptEntry('eval-judge').toolsBudgetBytes, "the eval-judge entry's toolsBudgetBytes"],
  ];
  for (const [key, own, budget, where] of oneShot) {
    it(`${key}: the read tools and its own tools stay within ${budget} bytes`, () => {
      assert.ok(budget !== undefined, `${key} has no pinned tool-schema budget`);
      withinBudget(key, schemaBytes(read) + schemaBytes(own), budget, where);
    });
  }
});
