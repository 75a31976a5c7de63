import assert from 'node:assert/strict';
import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildCitationIndex } from '../../../host/board/citations';
import { isSpecOnlyChange } from '../../../host/board/noise';
import { emptyBoard, type BoardState } from '../../../host/board/state';
import { applyVerb } from '../../../host/board/writer';
import { assembleDesignBoard, type DesignAssembly } from '../../../host/design/assemble';
import { detectSpec } from '../../../host/design/detect';
import { LABELS, codeBlockLabel, type CodeSpan } from '../../../host/design/model';
import { defaultDesignAssembler } from '../../../host/pipeline/design';
import type { DesignAssembly as PipelineAssembly } from '../../../host/pipeline/types';
import type { ElementOf } from '../../../protocol/board';
import type { Patchset } from '../../../protocol/patchset';
import { SPEC_FIXTURES, childrenOf, elements, ofKind, outlineOf, specBranches, stats, type SpecBranch } from './specRepo';

/**
 * Specifications as real repositories write them: commands, JSON and placeholders in inline code
 * spans, fenced examples in requirements, scenarios, designs, tasks and plans. The transcribed
 * register keeps inline code as the specification's own text; a code block is never copied: its
 * place is labelled with the file and lines, and where those lines are changed lines of the
 * capture, a code_ref cites them. A spec-only branch settles on the host, with no model turn.
 */

/** The code lines of every fenced block in a file (1-based, inclusive), as a reader counts them. */
function fencesOf(path: string, text: string): CodeSpan[] {
  const lines = text.split('\n');
  const out: CodeSpan[] = [];
  let open: { line: number; marker: string } | null = null;
  lines.forEach((line, i) => {
    const fence = line.match(/^\s*(`{3,}|~{3,})/);
    if (!fence) return;
    if (!open) open = { line: i, marker: fence[1] as string };
    else if (line.trim() === open.marker) {
      out.push({ path, start: open.line + 2, end: i });
      open = null;
    }
  });
  return out;
}

function fixtureText(fixture: string, path: string): string {
  return readFileSync(join(SPEC_FIXTURES, fixture, path), 'utf8');
}

function settled(assembly: DesignAssembly | PipelineAssembly): BoardState {
  assert.equal(assembly.kind, 'board', assembly.kind === 'fallback' ? `${'rule' in assembly ? assembly.rule : ''}: ${assembly.reason}` : assembly.kind);
  if (assembly.kind !== 'board') throw new Error('unreachable');
  const state = assembly.state;
  assert.equal(state.status, 'finished');
  assert.equal(state.document.prose_register, 'transcribed');
  for (const el of elements(state)) assert.equal(el.author, 'assembler');
  // Code is cited, never copied: no fence delimiter and no fenced code line lands on the board.
  for (const el of elements(state)) assert.ok(!JSON.stringify(el).includes('```'), `${el.id} carries a fence`);
  return state;
}

/** Requirement title → its scenario names, in board order. */
function requirementsOf(state: BoardState): Array<[string, string[]]> {
  return ofKind(state, 'requirement').map((r) => [
    r.title,
    childrenOf(state, r.id)
      .filter((c): c is ElementOf<'scenario'> => c.kind === 'scenario')
      .map((s) => s.name),
  ]);
}

/** The code_refs that cite a code block of the specification (a decision's evidence is labelled otherwise). */
function codeRefs(state: BoardState): Array<ElementOf<'code_ref'>> {
  return ofKind(state, 'code_ref').filter((r) => r.label === LABELS.specCodeBlock);
}

/** Every string field of every element and the document, joined: where a text landed is not the point here. */
function allText(state: BoardState): string {
  return [state.document.intro_markdown, ...elements(state).map((el) => JSON.stringify(el))].join('\n');
}

function requirement(state: BoardState, title: string): ElementOf<'requirement'> {
  const found = ofKind(state, 'requirement').find((r) => r.title === title);
  assert.ok(found, `no requirement "${title}" in\n${outlineOf(state)}`);
  return found;
}

function scenario(state: BoardState, name: string): ElementOf<'scenario'> {
  const found = ofKind(state, 'scenario').find((s) => s.name === name);
  assert.ok(found, `no scenario "${name}" in\n${outlineOf(state)}`);
  return found;
}

/** Each code_ref cites the head side of a changed file, resolves against the capture and is stamped with its hunk. */
function assertCitesChangedLines(state: BoardState, patchset: Patchset): void {
  const index = buildCitationIndex(patchset);
  for (const ref of ofKind(state, 'code_ref')) {
    assert.equal(ref.side, 'head');
    assert.ok(index.resolve(ref.path, 'head', ref.start_line, ref.end_line).ok, `${ref.path}:${ref.start_line}-${ref.end_line} does not resolve`);
    assert.ok(ref.hunk_ids.length > 0, `${ref.id} carries no hunk`);
    assert.equal(ref.patchset_id, patchset.id);
  }
}

const spanOf = (ref: ElementOf<'code_ref'>): CodeSpan => ({ path: ref.path, start: ref.start_line, end: ref.end_line });

describe('design assembler: inline code and code blocks in real-shaped specifications', () => {
  const branch = specBranches();

  describe('OpenSpec change', () => {
    const root = 'openspec/changes/add-csv-export';
    let made: SpecBranch;
    let state: BoardState;
    before(async () => {
      made = await branch(['openspec-code']);
      state = settled(await assembleDesignBoard(made.patchset, made.read));
    });

    it('is a spec-only change, and the production reader settles it on the host with no harness', async () => {
      assert.equal(isSpecOnlyChange(made.patchset), true);
      const production = settled(await defaultDesignAssembler(made.repo.dir)(made.patchset));
      assert.deepStrictEqual(production, state, 'the object-store reader assembles the same board');
    });

    it('keeps every requirement and every scenario, in source order', () => {
      assert.deepEqual(requirementsOf(state), [
        ['Export Command Help', ['Help lists the command']],
        ['CSV Export', ['Exporting a small report', 'Export settings from JSON', 'Quoting a field with a delimiter']],
        ['Export Failure Message', ['Disk full']],
        ['Report Formats', ['Unknown format']],
      ]);
      assert.deepEqual(stats(state), {
        Format: 'OpenSpec',
        Capabilities: '2',
        Requirements: '4',
        Scenarios: '6',
        Tasks: '5',
        'Tasks done': '1',
        Decisions: '1',
      });
    });

    it('keeps inline commands, JSON, placeholders and Markdown in backticks as the specification wrote them', () => {
      assert.match(
        state.document.intro_markdown,
        /^Finance copies report tables by hand because `report show <id>` only prints to the terminal\.\nA request such as `\{"report": 42, "format": "csv"\}` has nowhere to go today:/,
      );
      assert.equal(
        requirement(state, 'CSV Export').shall.split('\n')[0],
        'The system SHALL write a report as CSV when asked with `report export <id> --format csv`, one line per row after a header row.',
      );
      assert.equal(
        scenario(state, 'Export settings from JSON').text_markdown,
        '- **GIVEN** the saved settings hold `{"format": "csv", "delimiter": ";"}`\n- **WHEN** the user runs `report export 42`\n- **THEN** the file uses `;` between fields',
      );
      assert.equal(scenario(state, 'Export settings from JSON').scenario_condition, 'the saved settings hold `{"format": "csv", "delimiter": ";"}`\nthe user runs `report export 42`');
      assert.match(requirement(state, 'Report Formats').shall, /a heading written as `### Requirement: Name` in a note is still only text/);
      const tasks = ofKind(state, 'task').map((t) => t.text);
      assert.ok(tasks.includes('1.2 Stream rows with `createWriteStream(path, { flags: "w" })`'), tasks.join('\n'));
      assert.ok(tasks.includes('2.2 Mention `- [ ]` task marks are unchanged in the changelog'), tasks.join('\n'));
      const decision = ofKind(state, 'decision')[0];
      assert.equal(decision?.rationale, 'reports reach a million rows, and `rows.map(toCsv).join("\\n")` held them all in memory.');
    });

    it('cites each code block of a changed spec, design or task file by a code_ref to its own lines, labelled where it stood', () => {
      const expected = [
        ...fencesOf(`${root}/design.md`, fixtureText('openspec-code', `${root}/design.md`)),
        ...fencesOf(`${root}/specs/reports/spec.md`, fixtureText('openspec-code', `${root}/specs/reports/spec.md`)),
        ...fencesOf(`${root}/tasks.md`, fixtureText('openspec-code', `${root}/tasks.md`)),
      ];
      assert.equal(expected.length, 4);
      assert.deepEqual(codeRefs(state).map(spanOf), expected);
      assertCitesChangedLines(state, made.patchset);
      // The requirement's own example and its scenario's example are cited under the requirement, after its scenarios.
      const csv = requirement(state, 'CSV Export');
      const kids = childrenOf(state, csv.id);
      assert.deepEqual(
        kids.map((k) => k.kind),
        ['scenario', 'scenario', 'scenario', 'code_ref', 'code_ref'],
      );
      const [shallBlock, scenarioBlock] = kids.filter((k): k is ElementOf<'code_ref'> => k.kind === 'code_ref').map(spanOf);
      assert.ok(csv.shall.endsWith(`The header row SHALL be the column keys in report order, for example:\n\n${codeBlockLabel(shallBlock!)}`), csv.shall);
      assert.ok(scenario(state, 'Quoting a field with a delimiter').text_markdown.includes(codeBlockLabel(scenarioBlock!)));
      // A code block standing between a section's paragraphs is cited under that section.
      const layout = ofKind(state, 'section').find((s) => s.title === 'File layout');
      assert.ok(layout?.body_markdown?.includes(codeBlockLabel(expected[0]!)), layout?.body_markdown);
      assert.deepEqual(
        childrenOf(state, layout!.id).map((k) => k.kind),
        ['code_ref'],
      );
      // A task's code block is a code_ref right after the task, not a copy of the code.
      const task = ofKind(state, 'task').find((t) => t.text === '1.3 Cover the command with a test')!;
      const siblings = childrenOf(state, task.parent!);
      const next = siblings[siblings.indexOf(task) + 1];
      assert.equal(next?.kind, 'code_ref');
      assert.deepEqual(spanOf(next as ElementOf<'code_ref'>), expected[3]);
      assert.ok(!allText(state).includes('await run(['));
    });

    it('states a proposal’s code blocks by their label (file and lines) and never cites them', () => {
      const proposal = `${root}/proposal.md`;
      const [why, setting] = fencesOf(proposal, fixtureText('openspec-code', proposal));
      assert.ok(state.document.intro_markdown.includes(`\n\n${codeBlockLabel(why!)}\n\n`), state.document.intro_markdown);
      assert.equal(codeBlockLabel(why!), `[code block: ${proposal} line 8]`);
      const rows = ofKind(state, 'prose').map((p) => p.markdown);
      assert.ok(rows.includes(`Accept \`format: csv\` in the saved report settings\n\n${codeBlockLabel(setting!)}`), rows.join('\n---\n'));
      assert.equal(codeRefs(state).filter((r) => r.path === proposal).length, 0);
      assert.ok(!allText(state).includes('delimiter: ";"'));
    });
  });

  describe('a code block in unchanged lines of a changed spec', () => {
    const path = 'openspec/specs/notifications/spec.md';
    let made: SpecBranch;
    let state: BoardState;
    before(async () => {
      made = await branch(['openspec-specs-head'], undefined, (repo) => cpSync(join(SPEC_FIXTURES, 'openspec-specs-base'), repo.dir, { recursive: true }));
      state = settled(await assembleDesignBoard(made.patchset, made.read));
    });

    it('labels the unchanged block with its file and lines and cites only the changed one', () => {
      const [unchanged, changed] = fencesOf(path, fixtureText('openspec-specs-head', path));
      assert.deepEqual(codeRefs(state).map(spanOf), [changed]);
      assertCitesChangedLines(state, made.patchset);
      const template = requirement(state, 'Email Template');
      assert.equal(template.shall, `The system SHALL render every notification email from one template, whose placeholders look like this:\n\n${codeBlockLabel(unchanged!)}`);
      assert.equal(codeBlockLabel(unchanged!), `[code block: ${path} lines 12–13]`);
      assert.equal(childrenOf(state, template.id).filter((k) => k.kind === 'code_ref').length, 0);
      const digest = requirement(state, 'Digest Emails');
      assert.deepEqual(
        childrenOf(state, digest.id).map((k) => k.kind),
        ['scenario', 'code_ref'],
      );
      assert.ok(!allText(state).includes('{{name}}'));
    });

    it('keeps every requirement and scenario of the current spec', () => {
      assert.deepEqual(requirementsOf(state), [
        ['Email Template', ['Rendering a sign-in notice']],
        ['Quiet Hours', ['Notice during quiet hours']],
        ['Digest Emails', ['Digest enabled']],
      ]);
      assert.equal(state.document.intro_markdown, 'Notifications tell a user about account events by email, using the template named in `notify.template`.');
    });
  });

  describe('Kiro feature', () => {
    const root = '.kiro/specs/note-sync';
    let made: SpecBranch;
    let state: BoardState;
    before(async () => {
      made = await branch(['kiro-code']);
      state = settled(await assembleDesignBoard(made.patchset, made.read));
    });

    it('settles a spec-only change on the host, every requirement and acceptance criterion kept', async () => {
      assert.equal(isSpecOnlyChange(made.patchset), true);
      settled(await defaultDesignAssembler(made.repo.dir)(made.patchset));
      assert.deepEqual(requirementsOf(state), [
        ['Requirement 1', ['Acceptance criterion 1.1', 'Acceptance criterion 1.2', 'Acceptance criterion 1.3']],
        ['Requirement 2', ['Acceptance criterion 2.1', 'Acceptance criterion 2.2']],
      ]);
      assert.equal(stats(state)['Glossary terms'], '2');
    });

    it('keeps EARS lines with inline code verbatim and splits them', () => {
      const first = scenario(state, 'Acceptance criterion 1.1');
      assert.equal(
        first.text_markdown,
        'WHEN the client sends `PUT /notes/{id}` with `{"rev": 3, "text": "..."}` and the stored revision is 2 THEN the Sync Service SHALL store the note with `rev: 3`',
      );
      assert.equal(first.scenario_condition, 'the client sends `PUT /notes/{id}` with `{"rev": 3, "text": "..."}` and the stored revision is 2');
      assert.equal(first.scenario_response, 'the Sync Service SHALL store the note with `rev: 3`');
      assert.equal(scenario(state, 'Acceptance criterion 1.3').scenario_response, 'THE Client SHALL queue writes in `localStorage["sync-queue"]`');
      assert.ok(state.document.intro_markdown.includes('`PUT /notes/{id}`'));
      const tasks = ofKind(state, 'prose').map((p) => p.markdown);
      assert.ok(
        tasks.some((t) => t.includes('- Run `npm test -- sync` before committing')),
        tasks.join('\n---\n'),
      );
    });

    it('cites the criterion’s and the design’s code blocks; the criterion’s text labels its block', () => {
      const expected = [...fencesOf(`${root}/requirements.md`, fixtureText('kiro-code', `${root}/requirements.md`)), ...fencesOf(`${root}/design.md`, fixtureText('kiro-code', `${root}/design.md`))];
      assert.deepEqual(codeRefs(state).map(spanOf), expected);
      assertCitesChangedLines(state, made.patchset);
      const conflict = scenario(state, 'Acceptance criterion 1.2');
      assert.ok(conflict.text_markdown.endsWith(codeBlockLabel(expected[0]!)), conflict.text_markdown);
      assert.equal(codeRefs(state)[0]?.parent, requirement(state, 'Requirement 1').id);
      assert.ok(!allText(state).includes('stored text'));
    });

    it('selects a feature kept in a subfolder of .kiro/specs/ by its own directory', async () => {
      const archived = await branch([], (repo) => {
        cpSync(join(SPEC_FIXTURES, 'kiro-code', root), join(repo.dir, '.kiro/specs/_archived/note-sync'), { recursive: true });
      });
      const selection = await detectSpec(archived.patchset, archived.read);
      assert.equal(selection?.format === 'kiro' && selection.root, '.kiro/specs/_archived/note-sync');
      const board = settled(await assembleDesignBoard(archived.patchset, archived.read));
      assert.deepEqual(requirementsOf(board), requirementsOf(state));
    });
  });

  describe('BMAD story (v6 file name)', () => {
    const path = 'docs/stories/2-3-invoice-export-endpoint.md';
    let state: BoardState;
    let made: SpecBranch;
    before(async () => {
      made = await branch(['bmad-code']);
      state = settled(await assembleDesignBoard(made.patchset, made.read));
    });

    it('settles on the host through the production reader, the same board as the test reader', async () => {
      // docs/stories/ is not among the specification-only roots (host/board/noise.ts), so this
      // branch is not a spec-only change there; the Design lens settles it on the host all the same.
      const production = settled(await defaultDesignAssembler(made.repo.dir)(made.patchset));
      assert.deepStrictEqual(production, state, 'the object-store reader assembles the same board');
    });

    it('selects the story and keeps its story text, every criterion and every task with inline code', () => {
      assert.deepEqual(requirementsOf(state), [['Story 2.3: Invoice export endpoint', ['Acceptance criterion 1', 'Acceptance criterion 2', 'Acceptance criterion 3']]]);
      assert.equal(scenario(state, 'Acceptance criterion 3').text_markdown, 'A request without `month` answers `400` with `{"error": "month is required"}`');
      assert.match(state.document.intro_markdown, /I want to download a month of invoices with `GET \/api\/invoices\/export\?month=2025-05`,/);
      assert.deepEqual(
        ofKind(state, 'task').map((t) => [t.done, t.text]),
        [
          [false, 'Task 1: Route and handler (AC: 1, 3)'],
          [false, 'Add `router.get("/api/invoices/export", exportInvoices)`'],
          [false, 'Validate `month` against `/^\\d{4}-\\d{2}$/`'],
          [true, 'Task 2: CSV writer (AC: 2)'],
          [true, 'Reuse `toCsvLine(fields: string[]): string`'],
          [false, 'Task 3: Tests (AC: 1, 2, 3)'],
          [false, 'Run `pnpm vitest run invoices` until green'],
        ],
      );
    });

    it('cites the Dev Notes code block', () => {
      assert.deepEqual(codeRefs(state).map(spanOf), fencesOf(path, fixtureText('bmad-code', path)));
      assertCitesChangedLines(state, made.patchset);
      const notes = ofKind(state, 'section').find((s) => s.title === 'Dev Notes')!;
      assert.deepEqual(
        childrenOf(state, notes.id).map((k) => k.kind),
        ['code_ref'],
      );
    });
  });

  describe('Superpowers plan and design', () => {
    const plan = 'docs/superpowers/plans/2025-07-01-note-search.md';
    let made: SpecBranch;
    let state: BoardState;
    before(async () => {
      made = await branch(['superpowers-code']);
      state = settled(await assembleDesignBoard(made.patchset, made.read));
    });

    it('settles a spec-only change on the host; steps, Run/Expected lines and tables keep their inline code', async () => {
      assert.equal(isSpecOnlyChange(made.patchset), true);
      settled(await defaultDesignAssembler(made.repo.dir)(made.patchset));
      assert.equal(state.document.intro_markdown, 'Find notes by the words in their text, from an index under `.cache/<user>/search-index`.');
      const text = allText(state);
      assert.ok(text.includes('Run: `npm test -- test/search/index.test.ts`'));
      assert.ok(text.includes('| `\\"two words\\"` | notes with the exact phrase |'));
      const steps = ofKind(state, 'task').map((t) => t.text);
      assert.deepEqual(steps, [
        '**Step 1: Write the failing test**',
        '**Step 2: Run it and see it fail**',
        '**Step 3: Commit**',
        '**Step 1: Parse `"quoted phrases"` as one term**',
        '**Step 2: Check `| a | b |` table cells are not split as phrases**',
      ]);
      const decision = ofKind(state, 'decision')[0];
      assert.deepEqual(decision?.alternatives, ['Rebuild the whole index on every search', 'Rebuild nightly with `cron: "0 3 * * *"`']);
    });

    it('puts a code_ref to each step’s code block where the block stood', () => {
      const expected = fencesOf(plan, fixtureText('superpowers-code', plan));
      assert.equal(expected.length, 2);
      assert.deepEqual(codeRefs(state).map(spanOf), expected);
      assertCitesChangedLines(state, made.patchset);
      const task1 = ofKind(state, 'section').find((s) => s.title === 'Task 1: Index on save')!;
      const rows = childrenOf(state, task1.id).map((k) => (k.kind === 'task' ? k.text : k.kind));
      assert.deepEqual(rows.slice(-6), ['**Step 1: Write the failing test**', 'code_ref', '**Step 2: Run it and see it fail**', 'prose', '**Step 3: Commit**', 'code_ref']);
      assert.ok(!allText(state).includes('git commit -m'));
    });
  });

  describe('the transcribed register drops the voice rules only', () => {
    const index = { patchsetId: 'ps-1', resolve: () => ({ ok: false as const, reason: 'unknown-path' as const, message: 'unknown path', nearest: null }) };
    const ctx = { author: 'assembler', citations: index };
    const add = (board: BoardState, markdown: string) => applyVerb(board, { verb: 'add', kind: 'prose', input: { markdown } }, ctx).result;

    it('takes inline code as the source’s own formatting in transcribed prose, and still refuses it in authored prose', () => {
      const inline = 'Run `report export 42 --format csv` with `{"format": "csv"}`.';
      assert.equal(add(emptyBoard('design', 'ps-1', 'transcribed'), inline).status, 'accepted');
      const authored = add(emptyBoard('design', 'ps-1', 'authored'), inline);
      assert.equal(authored.status, 'refused');
      assert.equal(authored.status === 'refused' && authored.refusals[0]?.rule, 'no-code-bytes');
    });

    it('still refuses a code block carried as bytes in transcribed prose', () => {
      for (const text of ['Example:\n\n```json\n{ "a": 1 }\n```', 'Example:\n\n    const a = 1;\n    const b = 2;']) {
        const result = add(emptyBoard('design', 'ps-1', 'transcribed'), text);
        assert.equal(result.status, 'refused', text);
        assert.equal(result.status === 'refused' && result.refusals[0]?.rule, 'no-code-bytes');
      }
    });

    it('exempts process vocabulary in transcribed prose only', () => {
      const words = 'Each agent writes a draft to the board.';
      assert.equal(add(emptyBoard('design', 'ps-1', 'transcribed'), words).status, 'accepted');
      const authored = add(emptyBoard('design', 'ps-1', 'authored'), words);
      assert.equal(authored.status === 'refused' && authored.refusals[0]?.rule, 'process-vocabulary');
    });
  });

  it('drops a bare list marker and keeps a check box with no text, instead of falling back', async () => {
    const { patchset, read } = await branch([], (repo) => repo.write('.kiro/specs/x/tasks.md', '# Implementation Plan\n\n- [x] 1. First\n  - detail\n-\n\n- [ ]\n- [ ] 2. Second\n'));
    const state = settled(await assembleDesignBoard(patchset, read));
    assert.deepEqual(
      ofKind(state, 'task').map((t) => t.text),
      ['1. First', LABELS.emptyTask, '2. Second'],
    );
  });
});
