import { EVAL_DOCUMENT_VERSION, type EvalCase, type EvalCaseResult, type EvalRunManifest } from '../../../protocol/eval';
import { LENSES } from '../../../protocol/board';
import type { ReportBoard, ReportElement, ReviewReport } from '../../../protocol/review';

/**
 * Hand-built eval fixtures for the pure score, compare and HTML modules: cases, and case results
 * whose review report carries a Flagged board with findings anchored on code_refs, as
 * `rennet review --json` writes them (camelCase elements).
 */

export const BUG: EvalCase = {
  id: 'bug-1',
  fix: 'f1',
  base: 'f1',
  head: 'h1',
  category: 'off-by-one',
  truth: [
    { path: 'src/a.ts', side: 'head', startLine: 10, endLine: 12 },
    { path: 'src/b.ts', side: 'base', startLine: 5, endLine: 5 },
  ],
};
export const CLEAN: EvalCase = { id: 'bug-1-clean', fix: 'f1', base: 'f1', head: 'c1', category: 'off-by-one', truth: [], clean: true };
export const OTHER: EvalCase = { id: 'await-1', fix: 'f2', base: 'f2', head: 'h2', category: 'missing-await', truth: [{ path: 'src/c.ts', side: 'head', startLine: 3, endLine: 3 }] };

export interface FindingSpec {
  severity: string;
  title?: string;
  /** Each anchor: path, side, start, end. */
  at: Array<[string, 'head' | 'base', number, number]>;
}

function board(lens: (typeof LENSES)[number], elements: ReportElement[], state: ReportBoard['state'] = 'settled'): ReportBoard {
  return {
    lens,
    state,
    absence: null,
    failure: state === 'failed' ? { message: 'the compiler gave up', retryable: false, attempts: 2 } : null,
    document: { title: '', introMarkdown: '', measure: 'reading', proseRegister: 'authored' },
    elements,
  };
}

export function reportWith(findings: readonly FindingSpec[], options: { flaggedState?: ReportBoard['state']; otherLensElements?: ReportElement[] } = {}): ReviewReport {
  const elements: ReportElement[] = [{ id: 'e1', kind: 'section', parent: null, title: 'Findings' }];
  let next = 2;
  findings.forEach((f, i) => {
    const anchor: string[] = [];
    for (const [path, side, startLine, endLine] of f.at) {
      const id = `e${next++}`;
      elements.push({ id, kind: 'code_ref', parent: 'e1', path, side, startLine, endLine });
      anchor.push(id);
    }
    elements.push({
      id: `e${next++}`,
      kind: 'finding',
      parent: 'e1',
      severity: f.severity,
      category: 'correctness',
      title: f.title ?? `finding ${i + 1}`,
      bodyMarkdown: 'b',
      remedyMarkdown: 'r',
      anchor,
    });
  });
  return {
    patchset: 'ps-0123456789abcdef',
    generation: 'g-0123456789abcdef',
    base: 'f1',
    head: 'h1',
    boards: LENSES.map((lens) => (lens === 'flagged' ? board(lens, elements, options.flaggedState) : board(lens, lens === 'sequence' ? (options.otherLensElements ?? []) : []))),
    spend: [
      { seat: 'flagged:compiler', lens: 'flagged', role: 'compiler', harness: 'anthropic', model: 'm', durationMs: 10, inputTokens: 100, outputTokens: 20, toolCalls: 3, refusals: 0, priceUsd: 0.25 },
      {
        seat: 'flagged:reviewer:claude',
        lens: 'flagged',
        role: 'reviewer',
        harness: 'anthropic',
        model: 'm',
        durationMs: 10,
        inputTokens: 50,
        outputTokens: 10,
        toolCalls: 1,
        refusals: 0,
        priceUsd: null,
      },
    ],
    timings: [],
  };
}

export function resultOf(evalCase: EvalCase, report: ReviewReport | null, status: EvalCaseResult['status'] = 'reviewed', reason: string | null = null): EvalCaseResult {
  return {
    version: EVAL_DOCUMENT_VERSION,
    id: evalCase.id,
    key: 'k',
    case: evalCase,
    repo: '/repo',
    status,
    reason,
    startedAt: '2026-01-01T00:00:00.000Z',
    durationMs: 2000,
    spend: { turns: 2, priceUsd: 0.25, unpricedTurns: 1, inputTokens: 150, outputTokens: 30, untokenedTurns: 0 },
    sessionId: 's-1',
    report,
  };
}

export function manifestOf(cases: EvalCase[], harness = 'anthropic'): EvalRunManifest {
  return {
    version: EVAL_DOCUMENT_VERSION,
    casesFile: '/corpus/cases.json',
    casesDigest: 'd'.repeat(64),
    settings: { harness, baseUrl: null, model: 'm', scriptDigest: null },
    jobs: 1,
    store: '/out/store',
    startedAt: '2026-01-01T00:00:00.000Z',
    resumedAt: [],
    finishedAt: '2026-01-01T00:10:00.000Z',
    cases,
  };
}
