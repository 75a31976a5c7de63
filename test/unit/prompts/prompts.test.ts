import assert from 'node:assert/strict';
import { buildBoardTools } from '../../../host/board/tools';
import type { SeatSpec } from '../../../host/pipeline/ports';
import {
  FOLLOW_UP_VERDICT_MAX_BYTES,
  assembleSeatPrompt,
  createPromptReader,
  priorClosurePrompt,
  evalJudgePrompt,
  promptBytes,
  reviewerVoiceText,
  roundReportPrompt,
} from '../../../host/pipeline/prompts';
import { KIND_INPUTS, INPUT_ONLY_FIELDS, type Lens } from '../../../protocol/board';
import type { Patchset } from '../../../protocol/patchset';
import { READ_TOOL_NAMES } from '../../../protocol/read';
import { PROMPT_FILES } from '../../../prompts/generated';
import { DOCUMENT_PROMPTS, PARTIAL_FILES, PARTIALS, SEAT_PROMPTS, documentPromptEntry, type SeatPromptEntry } from '../../../prompts/manifest';
import type { TestRepo } from '../../fixtures/gitRepo';
import { FIXTURE_PR, FIXTURE_RELATED, FIXTURE_SESSION_ID, capture, largeChangeRepo, smallChangeRepo, writeFixtureContext } from './fixtures';

const seatOf = (entry: SeatPromptEntry, suffix = ''): SeatSpec => ({
  seatId: `${entry.lens}:${entry.role}${suffix}`,
  lens: entry.lens,
  role: entry.role,
});

interface Rendered {
  patchset: Patchset;
  contextDir: string;
  seat: Map<string, string>;
  roundReport: string;
}

async function renderAll(repo: TestRepo): Promise<Rendered> {
  const patchset = await capture(repo);
  const ctx = await writeFixtureContext(repo, patchset);
  const reader = createPromptReader();
  const seat = new Map<string, string>();
  for (const entry of SEAT_PROMPTS) seat.set(`${entry.lens}:${entry.role}`, reader.seatPrompt(seatOf(entry), { contextDir: ctx.relative }));
  return { patchset, contextDir: ctx.relative, seat, roundReport: roundReportPrompt({ contextDir: ctx.relative }) };
}

describe('seat prompts: the prompt-budget tripwire', function () {
  this.timeout(120_000);
  const repos: TestRepo[] = [];
  let small: Rendered;
  let large: Rendered;

  before(async () => {
    const a = smallChangeRepo();
    const b = largeChangeRepo();
    repos.push(a, b);
    small = await renderAll(a);
    large = await renderAll(b);
  });
  after(() => repos.forEach((r) => r.cleanup()));

  it('renders a real small capture and a 74-file, 292-hunk capture into the same context directory', () => {
    assert.equal(large.patchset.totals.files, 74);
    assert.equal(large.patchset.totals.hunks, 292);
    assert.ok(small.patchset.totals.files < 10);
    assert.equal(small.contextDir, large.contextDir);
    assert.equal(small.contextDir, `.rennet/context/${FIXTURE_SESSION_ID}`);
  });

  for (const entry of SEAT_PROMPTS) {
    const key = `${entry.lens}:${entry.role}`;
    it(`${key}: at most its pinned ${entry.budgetBytes} bytes, and byte-identical for both changes`, () => {
      const text = small.seat.get(key) as string;
      const bytes = promptBytes(text);
      assert.ok(bytes <= entry.budgetBytes, `${key} is ${bytes} bytes, over its pinned budget of ${entry.budgetBytes}: raise the budget in prompts/manifest.ts on purpose, or cut`);
      assert.equal(large.seat.get(key), text, `${key} differs between a small and a large change: something derived from the change reached the prompt`);
    });
  }

  it('round-report: at most its pinned budget, and byte-identical for both changes', () => {
    const { budgetBytes } = documentPromptEntry('round-report');
    assert.ok(promptBytes(small.roundReport) <= budgetBytes, `round-report is ${promptBytes(small.roundReport)} bytes, budget ${budgetBytes}`);
    assert.equal(large.roundReport, small.roundReport);
  });

  it('prior-closure: at most its pinned budget, and within a tenth of it', () => {
    const { budgetBytes } = documentPromptEntry('prior-closure');
    const bytes = promptBytes(priorClosurePrompt());
    assert.ok(bytes <= budgetBytes && bytes > budgetBytes * 0.85, `prior-closure is ${bytes} bytes, budget ${budgetBytes}: re-measure it in prompts/manifest.ts`);
  });

  it('eval-judge: at most its pinned budget, within a tenth of it, and naming its two tools', () => {
    const { budgetBytes } = documentPromptEntry('eval-judge');
    const prompt = evalJudgePrompt();
    const bytes = promptBytes(prompt);
    assert.ok(bytes <= budgetBytes && bytes > budgetBytes * 0.85, `eval-judge is ${bytes} bytes, budget ${budgetBytes}: re-measure it in prompts/manifest.ts`);
    assert.ok(prompt.startsWith('# Rennet: eval judge\n\n') && prompt.includes('`read_finding`') && prompt.includes('`grade_finding`'));
  });

  it('reviewer-voice: at most its pinned budget', () => {
    const { budgetBytes } = documentPromptEntry('reviewer-voice');
    assert.ok(promptBytes(reviewerVoiceText()) <= budgetBytes);
  });

  it('carries nothing from the change: no changed path, commit id, ref, PR or issue text', () => {
    for (const rendered of [small, large]) {
      const needles = [
        rendered.patchset.base,
        rendered.patchset.head,
        rendered.patchset.base.slice(0, 12),
        rendered.patchset.head.slice(0, 12),
        rendered.patchset.id,
        rendered.patchset.diffCommand,
        FIXTURE_PR.title,
        'per-tenant quota ledger',
        'Ignore all previous instructions',
        ...FIXTURE_RELATED.flatMap((item) => [item.title, item.id]),
        ...rendered.patchset.files.flatMap((f) => [f.path, ...f.hunks.map((h) => h.id)]),
      ];
      for (const [key, text] of [...rendered.seat, ['round-report', rendered.roundReport] as const]) {
        for (const needle of needles) assert.ok(!text.includes(needle), `${key} contains "${needle}"`);
      }
    }
  });
});

describe('seat prompts: assembly', () => {
  const contextDir = `.rennet/context/${FIXTURE_SESSION_ID}`;

  it('opens with a fixed header saying how to read the context folder, the same for every session', () => {
    for (const entry of SEAT_PROMPTS) {
      const text = assembleSeatPrompt(entry, { contextDir });
      const header = text.slice(0, text.indexOf(PROMPT_FILES[entry.file].trimEnd()));
      assert.match(header, /^# Rennet: /);
      assert.ok(!text.includes(contextDir) && !text.includes('s-'), `${entry.file}: the prompt carries the session's context directory (it must be the same for every review)`);
      assert.equal(assembleSeatPrompt(entry, { contextDir: '.rennet/context/another-session' }), text, `${entry.file}: the prompt differs between sessions`);
      assert.ok(header.includes('`README.md` first') && header.includes('`read_context`'), `${entry.file}: header does not say to read the README with read_context`);
      assert.ok(promptBytes(header) < 600, `${entry.file}: the header is ${promptBytes(header)} bytes`);
    }
  });

  it('places the seat file, then every declared partial in manifest order, and no undeclared partial', () => {
    for (const entry of SEAT_PROMPTS) {
      const text = assembleSeatPrompt(entry, { contextDir });
      let at = text.indexOf(PROMPT_FILES[entry.file].trimEnd());
      assert.ok(at > 0, `${entry.file} is missing from its own prompt`);
      for (const partial of entry.partials) {
        const next = text.indexOf(PROMPT_FILES[PARTIAL_FILES[partial]].trimEnd());
        assert.ok(next > at, `${entry.lens}:${entry.role}: ${partial} is missing or out of order`);
        at = next;
      }
      for (const partial of PARTIALS.filter((p) => !entry.partials.includes(p))) {
        assert.ok(!text.includes(PROMPT_FILES[PARTIAL_FILES[partial]].trimEnd()), `${entry.lens}:${entry.role} carries undeclared ${partial}`);
      }
      assert.ok(text.endsWith('\n') && !text.endsWith('\n\n'));
    }
  });

  it('declares the partials each seat needs: investigation for all, board-tool guidance for every seat that writes a board', () => {
    for (const entry of SEAT_PROMPTS) {
      assert.ok(entry.partials.includes('investigation'), `${entry.file} lacks investigation`);
      assert.ok(entry.partials.includes('reader-voice'), `${entry.file} lacks reader-voice`);
      assert.equal(entry.partials.includes('tool-guidance'), entry.role !== 'reviewer', `${entry.file}: tool-guidance`);
    }
  });

  it('names the same prompt for every seat of a role, whatever its id (one prompt per review seat, not per model)', () => {
    const reader = createPromptReader();
    const entry = SEAT_PROMPTS.find((e) => e.role === 'reviewer') as SeatPromptEntry;
    assert.equal(reader.seatPrompt(seatOf(entry, ':claude'), { contextDir }), reader.seatPrompt(seatOf(entry, ':codex'), { contextDir }));
  });

  it('refuses a seat with no prompt, and a context directory that is not repo-relative', () => {
    const reader = createPromptReader();
    assert.throws(() => reader.seatPrompt({ seatId: 'sequence:reviewer', lens: 'sequence', role: 'reviewer' }, { contextDir }), /no prompt for seat sequence:reviewer/);
    const entry = SEAT_PROMPTS[0] as SeatPromptEntry;
    for (const bad of ['/abs/.rennet/context/s-1', '../x', '~/x', '']) {
      assert.throws(() => reader.seatPrompt(seatOf(entry), { contextDir: bad }), /context directory/);
    }
    assert.equal(reader.seatPrompt(seatOf(entry), { contextDir: `${contextDir}/` }), reader.seatPrompt(seatOf(entry), { contextDir }));
  });

  it('teaches only tools and fields the seat is served (lens files against `rennet tools --lens`, plus the read tools)', () => {
    // Backticked snake_case words in a board seat's own file are tool names or input fields of its
    // lens, the read tools every seat gets, or fields of a context file (noise-offer.json) or of a
    // write_board entry. seatTools.test.ts checks the whole expanded prompt of every seat.
    const notTools = new Set(['member_id', 'start_line', 'end_line', 'local_id', 'path_escaped', 'file_index']);
    for (const entry of SEAT_PROMPTS.filter((e) => e.role !== 'reviewer')) {
      const tools = buildBoardTools(entry.lens as Lens);
      const names = new Set<string>([...tools.map((t) => t.name), ...READ_TOOL_NAMES]);
      const fields = new Set(tools.flatMap((t) => Object.keys((t.inputSchema as { properties?: object }).properties ?? {})));
      for (const [, word] of PROMPT_FILES[entry.file].matchAll(/`([a-z]+(?:_[a-z]+)+)`/g)) {
        assert.ok(names.has(word as string) || fields.has(word as string) || notTools.has(word as string), `${entry.file} teaches \`${word}\`, which the ${entry.lens} tools do not have`);
      }
    }
    // The shared tool guidance names only verbs every board seat has, and the read tools every seat has.
    const common: string[] = ['set_document', 'cite', 'finish', 'remove_element', ...READ_TOOL_NAMES];
    for (const [, word] of PROMPT_FILES['partials/tool-guidance.md'].matchAll(/`([a-z]+(?:_[a-z]+)+|cite|finish)`/g)) {
      assert.ok(
        common.includes(word as string) || ['parent_id', 'add_code_ref'].includes(word as string) || Object.values(KIND_INPUTS).some((s) => (word as string) in s.shape),
        `tool-guidance teaches \`${word}\``,
      );
    }
    assert.ok('origin' in INPUT_ONLY_FIELDS.finding.shape && 'agreement' in INPUT_ONLY_FIELDS.finding.shape);
  });

  it('the manifest covers each document prompt once', () => {
    assert.deepEqual(
      DOCUMENT_PROMPTS.map((d) => d.id),
      ['reviewer-voice', 'round-report', 'round-worker', 'prior-closure', 'eval-judge'],
    );
    // The re-review's closure seat: the same bytes for every request (read_prior_items serves the items and the delta).
    const closure = priorClosurePrompt();
    assert.ok(closure.startsWith('# Rennet: prior items\n\n') && closure.includes('`read_prior_items`') && closure.includes('`submit_closures`'));
    assert.equal(reviewerVoiceText(), PROMPT_FILES['reviewer-voice.md']);
    // The round report's prompt is the same for every session: read_evidence serves evidence.json, read_context the folder.
    const report = roundReportPrompt({ contextDir });
    assert.ok(report.startsWith('# Rennet: round report\n\n') && report.includes('`evidence.json`') && report.includes('`read_evidence`'));
    assert.ok(!report.includes(contextDir) && !report.includes('s-'), 'the round report prompt carries the session’s context directory');
    assert.equal(roundReportPrompt({ contextDir: '.rennet/context/another-session' }), report, 'the round report prompt differs between sessions');
    assert.throws(() => roundReportPrompt({ contextDir: '/abs/.rennet/context/s-1' }), /context directory/);
  });
});

describe('follow-up prompts', () => {
  const reader = createPromptReader();
  const verdict = 'not settled: 2 pointers\n- step-reachable e7: This step is under no top-level section.\n- section-preview e3: This section has no preview.';

  for (const entry of SEAT_PROMPTS) {
    const seat = seatOf(entry);
    it(`${entry.lens}:${entry.role}: carries the last verdict inside a short fixed frame, and nothing of the seat prompt`, () => {
      const text = reader.followUpPrompt(seat, verdict);
      assert.ok(text.includes(verdict));
      assert.ok(promptBytes(text) - promptBytes(verdict) < 400, `frame is ${promptBytes(text) - promptBytes(verdict)} bytes`);
      const own = [PROMPT_FILES[entry.file], ...entry.partials.map((p) => PROMPT_FILES[PARTIAL_FILES[p]])].join('\n');
      for (const line of own.split('\n').filter((l) => l.trim().length > 30)) assert.ok(!text.includes(line), `follow-up repeats "${line}"`);
      assert.ok(!text.includes('.rennet/context'), 'a follow-up names no context directory');
      const other = reader.followUpPrompt(seat, 'settled');
      assert.equal(text.replace(verdict, 'settled'), other, 'the frame is fixed: only the verdict varies');
    });

    it(`${entry.lens}:${entry.role}: says so when there was no verdict, and asks the seat to continue and settle`, () => {
      const text = reader.followUpPrompt(seat, null);
      if (entry.role === 'reviewer') {
        assert.match(text, /`submit_findings` was never called/);
        assert.match(text, /hand in the findings document with `submit_findings`/);
      } else {
        assert.match(text, /`finish` was never called/);
        assert.match(text, /Continue writing where you stopped, then call `finish`/);
      }
      assert.ok(promptBytes(text) < 400);
    });
  }

  it('bounds a verdict larger than any capped finish result, on a character boundary', () => {
    const seat = seatOf(SEAT_PROMPTS[0] as SeatPromptEntry);
    const huge = 'é'.repeat(FOLLOW_UP_VERDICT_MAX_BYTES);
    const text = reader.followUpPrompt(seat, huge);
    assert.ok(promptBytes(text) < FOLLOW_UP_VERDICT_MAX_BYTES + 600);
    assert.match(text, new RegExp(`verdict truncated: ${FOLLOW_UP_VERDICT_MAX_BYTES * 2} bytes in all`));
    assert.ok(!text.includes('\uFFFD'));
  });
});
