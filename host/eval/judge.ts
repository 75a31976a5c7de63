import { join } from 'node:path';
import { z } from 'zod';
import { RESULT_MAX_BYTES } from '../../protocol/board';
import {
  EVAL_JUDGE_REASON_MAX_CHARS,
  EVAL_JUDGE_TURN_TIMEOUT_MS,
  EvalJudgeGradeValue,
  type EvalCaseResult,
  type EvalHarnessSettings,
  type EvalJudge,
  type EvalJudgeGrade,
  type EvalScore,
} from '../../protocol/eval';
import type { Patchset } from '../../protocol/patchset';
import type { ReportElement } from '../../protocol/review';
import { checkToolCall, oneTurnSpend, runOneTurn } from '../pipeline/oneTurn';
import { renderInputSchema, type JsonSchemaObject } from '../board/tools';
import { CONTEXT_ROOT } from '../pipeline/contextDir';
import type { Harness, SeatSpec } from '../pipeline/ports';
import { evalJudgePrompt } from '../pipeline/prompts';
import { withReadTools } from '../read/compose';
import { gitChangeSource } from '../read/gitSource';
import { readSurface } from '../read/tools';
import { spendOf, NO_SPEND } from './scoreSpend';

/**
 * The optional judge pass of `rennet eval score --judge HARNESS`: for every finding that caught a
 * bug, one turn of a one-shot seat that reads the finding (`read_finding`: its text, its anchors
 * and the ground-truth lines, as data) and the change through the read tools, and hands in one
 * grade (`grade_finding`: explains, partly, does-not-explain, with a reason). The prompt is fixed
 * (prompts/eval-judge.md); nothing of the case is in it. A turn that gives no grade is recorded
 * with its reason and no grade, never a guessed one. Grades sit beside the deterministic score.
 */

export const READ_FINDING = 'read_finding';
export const GRADE_FINDING = 'grade_finding';
export const JUDGE_SEAT: SeatSpec = { seatId: 'eval:judge', lens: 'flagged', role: 'reviewer' };

interface JudgeTool {
  name: string;
  description: string;
  inputSchema: JsonSchemaObject;
  zod: z.ZodObject;
}

function tool(name: string, description: string, zod: z.ZodObject): JudgeTool {
  return { name, description, inputSchema: renderInputSchema(zod), zod };
}

export const JUDGE_TOOLS: readonly JudgeTool[] = [
  tool(READ_FINDING, 'Read the finding under judgement: its severity, title, body, remedy and parts, the code it is anchored on, and the lines the known fix changed.', z.strictObject({})),
  tool(
    GRADE_FINDING,
    'Hand in your grade once: explains (the finding says what goes wrong, for whom and when, matching the defect at those lines), partly (it points at the defect but misstates or omits its impact), or does-not-explain.',
    z.strictObject({
      grade: EvalJudgeGradeValue,
      reason: z.string().min(1).max(EVAL_JUDGE_REASON_MAX_CHARS).describe('One or two sentences: what the finding gets right or wrong about the impact.'),
    }),
  ),
];

/** What `read_finding` serves: the finding's reader-facing fields and its anchors, and the truth. */
export function findingBrief(result: EvalCaseResult, findingId: string): string | null {
  const board = result.report?.boards.find((b) => b.lens === 'flagged');
  const finding = board?.elements.find((e) => e.id === findingId && e.kind === 'finding');
  if (!board || !finding) return null;
  const byId = new Map(board.elements.map((e) => [e.id, e] as const));
  const pick = (e: ReportElement, keys: readonly string[]) => Object.fromEntries(keys.filter((k) => e[k] !== undefined).map((k) => [k, e[k]]));
  const anchors = (Array.isArray(finding.anchor) ? finding.anchor : [])
    .map((id) => byId.get(String(id)))
    .filter((e): e is ReportElement => e?.kind === 'code_ref')
    .map((e) => pick(e, ['path', 'side', 'startLine', 'endLine', 'label']));
  return JSON.stringify({
    finding: pick(finding, ['severity', 'category', 'title', 'bodyMarkdown', 'partTitles', 'partBodies', 'remedyMarkdown']),
    anchors,
    knownFixChangedLines: result.case.truth,
  });
}

interface JudgeSurface {
  readonly tools: readonly JudgeTool[];
  call(name: string, input: unknown): { text: string; isError: boolean };
  readonly grade: { grade: EvalJudgeGrade['grade']; reason: string } | null;
  stats(): { calls: number; refusals: number };
}

export function judgeSurface(brief: string): JudgeSurface {
  let grade: JudgeSurface['grade'] = null;
  let calls = 0;
  let refusals = 0;
  const refuse = (text: string) => {
    refusals++;
    return { text: text.slice(0, RESULT_MAX_BYTES), isError: true };
  };
  return {
    tools: JUDGE_TOOLS,
    get grade() {
      return grade;
    },
    stats: () => ({ calls, refusals }),
    call(name, input) {
      calls++;
      const checked = checkToolCall(JUDGE_TOOLS, name, input, 'no grade was recorded');
      if (!checked.ok) return refuse(checked.text);
      if (name === READ_FINDING) return { text: brief, isError: false };
      if (grade) return refuse('A grade was already recorded; it stands. End your turn now.');
      const value = checked.value as { grade: EvalJudgeGrade['grade']; reason: string };
      grade = { grade: value.grade, reason: value.reason };
      return { text: 'The grade is recorded. End your turn now.', isError: false };
    },
  };
}

export interface JudgeDeps {
  /** A fresh harness for one turn (null: the choice drafts nothing, with why). */
  harness(): Promise<{ harness: Harness | null; hint: string | null }>;
  patchset(result: EvalCaseResult): Patchset | null;
  log(line: string): void;
}

/** Grades every catching finding of a score, one turn each, in case order. Never throws. */
export async function runJudge(score: EvalScore, results: ReadonlyMap<string, EvalCaseResult>, settings: EvalHarnessSettings, deps: JudgeDeps): Promise<EvalJudge> {
  const grades: EvalJudgeGrade[] = [];
  for (const c of score.cases) {
    for (const f of c.findings.filter((x) => x.class === 'catch')) {
      const result = results.get(c.id);
      const none = (failure: string): EvalJudgeGrade => ({ caseId: c.id, findingId: f.id, grade: null, reason: '', failure, spend: NO_SPEND });
      const brief = result ? findingBrief(result, f.id) : null;
      const patchset = result ? deps.patchset(result) : null;
      if (!result || !brief) grades.push(none('the finding is not in the case result'));
      else if (!patchset) grades.push(none(`the store holds no patchset ${result.report?.patchset ?? '(none)'} for this case`));
      else grades.push(await judgeOne(c.id, f.id, result, brief, patchset, deps));
      const g = grades[grades.length - 1] as EvalJudgeGrade;
      deps.log(`judge: ${c.id} ${f.id}: ${g.grade ?? `no grade (${g.failure})`}`);
    }
  }
  return { settings, grades };
}

async function judgeOne(caseId: string, findingId: string, result: EvalCaseResult, brief: string, patchset: Patchset, deps: JudgeDeps): Promise<EvalJudgeGrade> {
  const none = (failure: string, spend = NO_SPEND): EvalJudgeGrade => ({ caseId, findingId, grade: null, reason: '', failure, spend });
  let chosen: { harness: Harness | null; hint: string | null };
  try {
    chosen = await deps.harness();
  } catch (error) {
    return none(`the judge's harness could not be used: ${(error as Error).message}`);
  }
  const harness = chosen.harness;
  if (!harness) return none(`no judge harness${chosen.hint ? ` (${chosen.hint})` : ''}`);
  const surface = judgeSurface(brief);
  const contextDir = result.sessionId ? join(result.repo, CONTEXT_ROOT, result.sessionId) : join(result.repo, CONTEXT_ROOT);
  const served = withReadTools(surface, readSurface(gitChangeSource({ repoDir: result.repo, patchset, contextDir })));
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), EVAL_JUDGE_TURN_TIMEOUT_MS);
  try {
    const started = performance.now();
    const turn = await runOneTurn(harness, { seat: JUDGE_SEAT, prompt: evalJudgePrompt(), cwd: result.repo, surface: served, signal: abort.signal });
    const spend = spendOf([oneTurnSpend(JUDGE_SEAT, harness, turn, performance.now() - started, served.stats())]);
    if (surface.grade) return { caseId, findingId, grade: surface.grade.grade, reason: surface.grade.reason, failure: null, spend };
    if (abort.signal.aborted) return none(`the judge did not grade within ${EVAL_JUDGE_TURN_TIMEOUT_MS / 60_000} minutes`, spend);
    if (turn.outcome === 'failed') return none(`the judge's turn failed: ${turn.message ?? 'without saying why'}`, spend);
    return none('the judge ended its turn without a grade', spend);
  } finally {
    clearTimeout(timer);
  }
}
