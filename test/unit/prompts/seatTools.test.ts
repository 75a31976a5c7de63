import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { explainPrompt, explainSurface } from '../../../host/asks/explainTools';
import { polishSurface, prOpenerPrompt } from '../../../host/exits/prPolish';
import { buildCitationIndex } from '../../../host/board/citations';
import { buildBoardTools } from '../../../host/board/tools';
import type { SeatSpec } from '../../../host/pipeline/ports';
import { createPromptReader, priorClosurePrompt, reviewerVoiceText, roundReportPrompt } from '../../../host/pipeline/prompts';
import { reviewSurface } from '../../../host/pipeline/reviewers';
import { REPORT_TOOLS } from '../../../host/rounds/reportSeat';
import { CLOSURE_TOOLS } from '../../../host/rereview/closureSeat';
import { gitChangeSource } from '../../../host/read/gitSource';
import { readSurface } from '../../../host/read/tools';
import { FINDING_SCORE_FLOOR, LENSES } from '../../../protocol/board';
import type { Patchset } from '../../../protocol/patchset';
import { READ_TOOL_NAMES } from '../../../protocol/read';
import { SEAT_PROMPTS } from '../../../prompts/manifest';
import type { TestRepo } from '../../fixtures/gitRepo';
import { capture, smallChangeRepo, writeFixtureContext } from './fixtures';

/**
 * Every seat's expanded prompt names only tools that seat is served. The served surfaces come from
 * the code that serves them, never from a hand list: the read tools every seat gets
 * (host/read/tools.ts over a real capture), plus the seat's own — a lens's board tools
 * (buildBoardTools), a Flagged review's submit_findings (reviewSurface), an explainer's four
 * (explainSurface), the pull-request opener's three (polishSurface), the round report's two
 * (REPORT_TOOLS, which host/rounds/reportSeat.ts serves). A backticked word that is any seat's tool name is a tool mention and must be
 * one this seat is served; any other backticked snake_case word must be a field this seat can meet:
 * an input of one of its tools, a name one of its tools' descriptions uses (write_board's
 * `local_id`), or a field the context directory's README describes (noise-offer.json's
 * `member_id`, `path_escaped`, …). And no prompt tells a seat to run git: the read tools are how
 * every seat, on every harness, reads the change.
 */

interface Tool {
  name: string;
  description: string;
  inputSchema: unknown;
}

interface Reader {
  key: string;
  text: string;
  tools: readonly Tool[];
}

const SNAKE = /^[a-z]+(?:_[a-z]+)+$/;
const GIT_COMMAND = /\bgit\s+(?:diff|show|log)\b/i;

const backticked = (text: string): string[] => [...text.matchAll(/`([^`\n]+)`/g)].map((m) => m[1] as string);
const snakeWords = (text: string): string[] => text.match(/[a-z]+(?:_[a-z]+)+/g) ?? [];
const inputFields = (tool: Tool): string[] => Object.keys((tool.inputSchema as { properties?: object }).properties ?? {});

describe('seat prompts: only tools the seat is served, and no git', function () {
  this.timeout(60_000);
  let repo: TestRepo;
  let readers: Reader[];
  let allToolNames: Set<string>;
  let contextFields: Set<string>;
  let others: Array<[string, string]>;

  before(async () => {
    repo = smallChangeRepo();
    const patchset: Patchset = await capture(repo);
    const ctx = await writeFixtureContext(repo, patchset);
    const read = readSurface(gitChangeSource({ repoDir: repo.dir, patchset, contextDir: ctx.relative })).tools;
    assert.deepEqual(
      read.map((t) => t.name),
      [...READ_TOOL_NAMES],
      'the read surface serves READ_TOOL_NAMES',
    );
    contextFields = new Set(backticked(readFileSync(join(ctx.dir, 'README.md'), 'utf8')).filter((w) => SNAKE.test(w)));

    const reader = createPromptReader();
    readers = SEAT_PROMPTS.map((entry) => {
      const seat: SeatSpec = { seatId: `${entry.lens}:${entry.role}`, lens: entry.lens, role: entry.role };
      const own: readonly Tool[] = entry.role === 'reviewer' ? reviewSurface(join(ctx.dir, 'findings', 'claude.md'), 'findings/claude.md').tools : buildBoardTools(entry.lens);
      return { key: seat.seatId, text: reader.seatPrompt(seat, { contextDir: ctx.relative }), tools: [...read, ...own] };
    });
    const explainTools = explainSurface({
      anchor: { kind: 'quote', generationId: 'g-0123456789abcdef', lens: 'sequence', elementId: 'e1', quote: 'x' },
      elements: new Map(),
      boardTitle: '',
      patchset,
      paths: buildCitationIndex(patchset),
    }).tools;
    for (const lens of LENSES) readers.push({ key: `${lens}:explain`, text: explainPrompt(lens), tools: [...read, ...explainTools] });
    const openerTools = polishSurface({ draft: { title: 't', body: 'b' }, commits: [] }).tools;
    readers.push({ key: 'design:pr-opener', text: prOpenerPrompt(), tools: [...read, ...openerTools] });
    readers.push({ key: 'round:report', text: roundReportPrompt({ contextDir: ctx.relative }), tools: [...read, ...REPORT_TOOLS] });
    readers.push({ key: 'rereview:closures', text: priorClosurePrompt(), tools: [...read, ...CLOSURE_TOOLS] });

    allToolNames = new Set([
      ...read.map((t) => t.name),
      ...LENSES.flatMap((lens) => buildBoardTools(lens).map((t) => t.name)),
      ...reviewSurface(join(ctx.dir, 'findings', 'x.md'), 'x.md').tools.map((t) => t.name),
      ...explainTools.map((t) => t.name),
      ...openerTools.map((t) => t.name),
      ...REPORT_TOOLS.map((t) => t.name),
      ...CLOSURE_TOOLS.map((t) => t.name),
    ]);
    others = [['reviewer-voice', reviewerVoiceText()]];
  });
  after(() => repo?.cleanup());

  it('derives a real vocabulary: the context README describes the noise-offer fields, and every seat has a prompt', () => {
    for (const field of ['member_id', 'start_line', 'end_line', 'path_escaped', 'file_index']) assert.ok(contextFields.has(field), `the context README no longer describes \`${field}\``);
    assert.equal(readers.length, SEAT_PROMPTS.length + LENSES.length + 3);
  });

  it('names no tool a seat is not served, and no snake_case word that is neither its tool nor a field it meets', () => {
    const problems: string[] = [];
    for (const { key, text, tools } of readers) {
      const offered = new Set(tools.map((t) => t.name));
      const fields = new Set([...contextFields, ...tools.flatMap(inputFields), ...tools.flatMap((t) => snakeWords(t.description))]);
      for (const word of new Set(backticked(text))) {
        if (allToolNames.has(word)) {
          if (!offered.has(word)) problems.push(`${key} names \`${word}\`, a tool it is not served`);
        } else if (SNAKE.test(word) && !fields.has(word)) {
          problems.push(`${key} names \`${word}\`, which looks like a tool and is neither one of its tools nor a field it meets`);
        }
      }
    }
    assert.deepEqual(problems, []);
  });

  it('teaches every seat the read tools it is served: the pipeline seats, the explainers, the pull-request opener and the round report', () => {
    const problems: string[] = [];
    for (const { key, text, tools } of readers) {
      const offered = new Set(tools.map((t) => t.name));
      for (const name of READ_TOOL_NAMES) {
        if (!offered.has(name)) problems.push(`${key} is not served \`${name}\``);
        else if (!text.includes(`\`${name}\``)) problems.push(`${key} does not teach \`${name}\``);
      }
    }
    assert.deepEqual(problems, []);
    assert.ok(
      ['sequence:explain', 'design:pr-opener', 'round:report'].every((key) => readers.some((r) => r.key === key)),
      'a one-shot seat is missing from the readers',
    );
  });

  it('gives the Flagged compiler the score floor the host enforces (finding-scored), and no other number for it', () => {
    const compiler = readers.find((r) => r.key === 'flagged:compiler');
    assert.ok(compiler, 'no flagged:compiler prompt');
    const floors = [...compiler.text.matchAll(/finding under (\d+)/g)].map((m) => Number(m[1]));
    assert.deepEqual(floors, [FINDING_SCORE_FLOOR]);
    assert.ok(compiler.text.includes('`score`'), 'the compiler prompt does not name the score field');
  });

  it('tells no seat to run git (no git diff, git show or git log in any expanded prompt)', () => {
    const problems: string[] = [];
    for (const [key, text] of [...readers.map((r) => [r.key, r.text] as const), ...others]) {
      const hit = text.match(GIT_COMMAND);
      if (hit) problems.push(`${key} says "${hit[0]}"`);
    }
    assert.deepEqual(problems, []);
  });
});
