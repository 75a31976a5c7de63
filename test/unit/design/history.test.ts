import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isSpecOnlyChange } from '../../../host/board/noise';
import type { BoardState } from '../../../host/board/state';
import { assembleDesignBoard, type DesignAssembly } from '../../../host/design/assemble';
import { detectSpec } from '../../../host/design/detect';
import { LABELS, codeBlockLabel } from '../../../host/design/model';
import { defaultDesignAssembler } from '../../../host/pipeline/design';
import type { DesignAssembly as PipelineAssembly } from '../../../host/pipeline/types';
import type { ElementOf } from '../../../protocol/board';
import { SPEC_FIXTURES, childrenOf, elements, ofKind, outlineOf, specBranches, stats, type SpecBranch } from './specRepo';

/**
 * Constructs that real specification histories carry and a first reader lost or refused: task
 * text wrapped under its check box, Kiro's optional-task star, acceptance criteria grouped under
 * subheadings or phase labels (with traceability lines, check marks, dotted numbers and
 * Given/When/Then criteria), link reference definitions, a MODIFIED requirement that only adds a
 * scenario, a spec file's own title, decisions with more to say than statement, rationale and
 * alternatives, BMAD v6 stories under _bmad-output/, and Superpowers plans in docs/plans/.
 * Each fixture is a spec-only branch; each settles on the host with every requirement and
 * scenario, and no line of its text is lost.
 */

function settled(assembly: DesignAssembly | PipelineAssembly): BoardState {
  assert.equal(assembly.kind, 'board', assembly.kind === 'fallback' ? `${'rule' in assembly ? assembly.rule : ''}: ${assembly.reason}` : assembly.kind);
  if (assembly.kind !== 'board') throw new Error('unreachable');
  const state = assembly.state;
  assert.equal(state.status, 'finished');
  assert.equal(state.document.prose_register, 'transcribed');
  for (const el of elements(state)) assert.ok(!JSON.stringify(el).includes('```'), `${el.id} carries a fence`);
  return state;
}

/** Assembled with the test reader and with the production reader (the object store): the same board. */
async function assembled(made: SpecBranch): Promise<BoardState> {
  const state = settled(await assembleDesignBoard(made.patchset, made.read));
  const production = settled(await defaultDesignAssembler(made.repo.dir)(made.patchset));
  assert.deepStrictEqual(production, state, 'the object-store reader assembles the same board');
  return state;
}

function requirementsOf(state: BoardState): Array<[string, string[]]> {
  return ofKind(state, 'requirement').map((r) => [
    r.title,
    childrenOf(state, r.id)
      .filter((c): c is ElementOf<'scenario'> => c.kind === 'scenario')
      .map((s) => s.name),
  ]);
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

function section(state: BoardState, title: string): ElementOf<'section'> {
  const found = ofKind(state, 'section').find((s) => s.title === title);
  assert.ok(found, `no section "${title}" in\n${outlineOf(state)}`);
  return found;
}

/** A node's children as short rows: a task's mark and text, a prose's text, a code_ref's lines, else the kind or title. */
function rows(state: BoardState, id: string): string[] {
  return childrenOf(state, id).map((el) =>
    el.kind === 'task'
      ? `[${el.done ? 'x' : ' '}] ${el.text}`
      : el.kind === 'prose'
        ? el.markdown
        : el.kind === 'code_ref'
          ? `code_ref ${el.start_line}-${el.end_line}`
          : el.kind === 'section' || el.kind === 'decision' || el.kind === 'requirement'
            ? `${el.kind}: ${el.title}`
            : el.kind,
  );
}

/**
 * Every line of text in the fixture's files (code blocks and front matter aside) lands somewhere
 * on the board, as written: list markers, check boxes and heading marks aside, and the words the
 * board states by structure (a Scenario:/Requirement: prefix, a decision's labels, the headings
 * whose content becomes a requirement's story or its criteria).
 */
function assertNoTextLost(state: BoardState, fixture: string, paths: readonly string[]): void {
  const board = [
    state.document.title,
    state.document.intro_markdown,
    ...elements(state).flatMap((el) =>
      Object.values(el)
        .flat()
        .filter((v): v is string => typeof v === 'string'),
    ),
  ]
    .join('\n')
    .replace(/\s+/g, ' ');
  const lost: string[] = [];
  for (const path of paths) {
    let fence = false;
    const lines = readFileSync(join(SPEC_FIXTURES, fixture, path), 'utf8').split('\n');
    // Front matter is labelled, not transcribed.
    const frontMatterEnd = lines[0] === '---' ? lines.indexOf('---', 1) : -1;
    lines.forEach((line, i) => {
      if (i <= frontMatterEnd) return;
      if (/^\s*(```|~~~)/.test(line)) fence = !fence;
      if (fence || /^\s*(```|~~~)/.test(line)) return;
      let text = line.trim();
      const heading = /^#{1,6}\s/.test(text);
      // A criterion's own number ("1.", "4.2.3:") is its marker: the scenario's name carries it.
      text = text
        .replace(/^#{1,6}\s+/, '')
        .replace(/^>\s?/, '')
        .replace(/^(?:[-*+]|\d+[.)]|\d+(?:\.\d+)*:)\s+/, '')
        .replace(/^\[[ xX]\]\s*/, '');
      if (heading && /^(?:why|acceptance criteria|story|introduction|decisions)$/i.test(text)) return;
      if (/^\*\*Acceptance Criteria:\*\*$/.test(text)) return;
      // An FR item's id is its requirement's title.
      text = text
        .replace(/^(?:Scenario|Requirement):\s*/, '')
        .replace(/^\*\*(?:Rationale|Alternatives considered):\*\*\s*/, '')
        .replace(/^N?FR\d+:\s*/, '')
        .trim();
      if (text.length > 3 && !board.includes(text.replace(/\s+/g, ' '))) lost.push(`${path}:${i + 1}: ${text}`);
    });
  }
  assert.deepEqual(lost, [], `text lost from the board:\n${outlineOf(state)}`);
}

describe('design assembler: constructs from real specification histories', () => {
  const branch = specBranches();

  describe('OpenSpec change: a spec title, a scenario-only MODIFIED requirement, decisions with more to say', () => {
    const root = 'openspec/changes/update-invoice-reminders';
    const files = ['proposal.md', 'design.md', 'specs/billing/spec.md', 'specs/reminders/spec.md', 'tasks.md'].map((f) => `${root}/${f}`);
    let made: SpecBranch;
    let state: BoardState;
    before(async () => {
      made = await branch(['openspec-history']);
      state = await assembled(made);
    });

    it('is a spec-only change that settles on the host with every requirement and scenario', () => {
      assert.equal(isSpecOnlyChange(made.patchset), true);
      assert.deepEqual(requirementsOf(state), [
        ['Reminder Audit', ['Recording a reminder']],
        ['Due Date Reminder', ['Second reminder after the due date']],
        ['Reminder Opt-Out', ['Turning reminders off']],
      ]);
      assert.equal(stats(state).Scenarios, '3');
    });

    it('labels a MODIFIED requirement that only adds a scenario instead of falling back', () => {
      const modified = requirement(state, 'Due Date Reminder');
      assert.equal(modified.shall, LABELS.noRequirementText);
      assert.equal(modified.spec_delta, 'modified');
      assert.equal(
        scenario(state, 'Second reminder after the due date').scenario_response,
        'a second reminder is sent to the billing contact\nthe reminder names the invoice number as `INV-<number>`',
      );
    });

    it('titles a capability by its file’s own H1, else by the capability', () => {
      assert.deepEqual(section(state, 'Delta for Reminders').source_paths, [`${root}/specs/reminders/spec.md`]);
      assert.deepEqual(section(state, 'billing').source_paths, [`${root}/specs/billing/spec.md`]);
    });

    it('keeps a decision’s further paragraphs and code beside the decision element', () => {
      const [decision, ...more] = ofKind(state, 'decision');
      assert.equal(more.length, 0, outlineOf(state));
      assert.equal(decision?.title, '1. Keep reminders in the nightly job');
      assert.equal(decision?.statement, 'Reminders stay in the nightly job rather than a new queue consumer.');
      assert.deepEqual(decision?.alternatives, ['A queue consumer per invoice: more moving parts for two emails', 'A cron entry per reminder: two schedules to keep in step']);
      const siblings = rows(state, decision!.parent!);
      const at = siblings.indexOf('decision: 1. Keep reminders in the nightly job');
      assert.deepEqual(siblings.slice(at + 1, at + 4), ['**Schedule entry:**', 'code_ref 15-16', 'Both reminders share one template, picked by `reminder.kind`.']);
    });

    it('renders a decision whose heading opens with code as its own section, every block kept', () => {
      const states = section(state, '2. Reminder states');
      assert.ok(states.body_markdown?.startsWith(codeBlockLabel({ path: `${root}/design.md`, start: 28, end: 28 })), states.body_markdown);
      assert.match(states.body_markdown ?? '', /\*\*Stored as:\*\*\n- one row per invoice and reminder kind/);
    });

    it('loses no line of the change’s text', () => assertNoTextLost(state, 'openspec-history', files));
  });

  describe('Kiro feature: wrapped task text, optional tasks, grouped criteria, link definitions', () => {
    const root = '.kiro/specs/photo-backup';
    let made: SpecBranch;
    let state: BoardState;
    before(async () => {
      made = await branch(['kiro-history']);
      state = await assembled(made);
    });

    it('is a spec-only change that settles with every requirement and every criterion', () => {
      assert.equal(isSpecOnlyChange(made.patchset), true);
      assert.deepEqual(requirementsOf(state), [
        ['Requirement 1 — Nightly copy', ['Acceptance criterion 1.1', 'Acceptance criterion 1.2', 'Acceptance criterion 1.3']],
        ['Requirement 2', ['Acceptance criterion 2.1']],
      ]);
    });

    it('keeps the criteria’s group headings and a link definition as the requirement’s notes', () => {
      const first = requirement(state, 'Requirement 1 — Nightly copy');
      assert.equal(first.shall, '**User Story:** As a parent, I want new photos copied to the server every\nnight, so that a lost phone loses nothing.');
      const notes = childrenOf(state, first.id)
        .filter((c): c is ElementOf<'prose'> => c.kind === 'prose')
        .map((p) => p.markdown);
      assert.deepEqual(notes, ['##### Scheduling', '##### Integrity', '[protocol]: https://example.org/household-sync']);
      // A nested list right under a criterion's text, however deep, continues it: not an indented code block.
      assert.equal(
        scenario(state, 'Acceptance criterion 2.1').text_markdown,
        'WHEN the user opens Backup THEN the app SHALL show the count and the time of the last copy, with:\n    - the photos copied\n    - the photos skipped, each with its reason',
      );
      assert.equal(scenario(state, 'Acceptance criterion 1.3').text_markdown, "The app SHALL compare each photo's `sha256` with the server's answer to\n`HEAD /photos/{id}` before marking it copied.");
    });

    it('reads a task’s wrapped lines as its text, never as an indented code block, and keeps the optional-task star', () => {
      assert.deepEqual(rows(state, section(state, 'Implementation Plan').id), [
        '[x] 1. **Schedule the copy** — the job runs only while charging, on the home\nnetwork, and never twice in one night.',
        // A paragraph aligned under the task's text (past the check box) is text, not an indented code block.
        'The job records the last photo it confirmed, so an interrupted night\nresumes where it stopped.\n\nUse the platform scheduler rather than a timer, so the copy survives the\napp being closed.',
        '[x] 1.1 Register the nightly job with the scheduler, keyed by\n`photo-backup-nightly` so a second registration replaces the first.',
        '[ ] * 1.2 Write a property test for the charging and network conditions',
        "[ ] 2. Verify each photo against the server's hash",
        '- _Requirements: 1.3_',
        // An in-progress mark stays at the head of the text; a wrapped line opening with "2025." is text, not a list.
        '[ ] [-] 3. **Run a week of nightly copies** — started in August\n2025. Two nights so far, both complete.',
      ]);
      assert.equal(stats(state).Tasks, '5');
    });

    it('loses no line of the feature’s text', () => assertNoTextLost(state, 'kiro-history', [`${root}/requirements.md`, `${root}/tasks.md`]));
  });

  describe('BMAD story: criteria with phases, check marks, dotted numbers and a Given/When/Then subheading', () => {
    const path = 'docs/stories/epic-4/4.2.shelf-labels.story.md';
    let made: SpecBranch;
    let state: BoardState;
    before(async () => {
      made = await branch(['bmad-history']);
      state = await assembled(made);
    });

    it('settles through the production reader with its one requirement and every criterion', () => {
      assert.deepEqual(requirementsOf(state), [
        ['Story 4.2: Printable shelf labels', ['Acceptance criterion 1', 'Acceptance criterion 2', 'Acceptance criterion 3', 'Acceptance criterion 4.2.3', 'AC4: Reprinting a label']],
      ]);
      assert.deepEqual(stats(state), { Format: 'BMAD', Requirements: '1', Scenarios: '5', Tasks: '3', 'Tasks done': '2' });
    });

    it('keeps a criterion’s check mark as written, splits Given/When/Then, and keeps the rest as notes', () => {
      assert.equal(scenario(state, 'Acceptance criterion 1').text_markdown, '[x] A label shows the shelf name and a QR code for `/shelves/{id}`');
      assert.equal(scenario(state, 'Acceptance criterion 4.2.3').text_markdown, 'Printing never changes the inventory');
      const reprint = scenario(state, 'AC4: Reprinting a label');
      assert.equal(reprint.scenario_condition, 'a shelf whose name changed,\nthe volunteer prints its label again,');
      assert.equal(reprint.scenario_response, 'the new label shows the new name.');
      const notes = childrenOf(state, requirement(state, 'Story 4.2: Printable shelf labels').id)
        .filter((c): c is ElementOf<'prose'> => c.kind === 'prose')
        .map((p) => p.markdown);
      assert.deepEqual(notes, ['Traceability: derived from Epic 4 and FR12. [Source: docs/prd.md#fr12]', '**Phase 1 (Required)**: ✅ COMPLETE', '**Phase 2 (Moved to Story 4.3)**:']);
    });

    it('loses no line of the story', () => assertNoTextLost(state, 'bmad-history', [path]));
  });

  describe('BMAD v6 story under _bmad-output/implementation-artifacts/', () => {
    const path = '_bmad-output/implementation-artifacts/3-2-volunteer-shift-swap.md';
    let made: SpecBranch;
    let state: BoardState;
    before(async () => {
      made = await branch(['bmad-v6']);
      state = await assembled(made);
    });

    it('selects the story by its v6 path and name', async () => {
      const selection = await detectSpec(made.patchset, made.read);
      assert.deepEqual(selection, { format: 'bmad', kind: 'story', root: path, touched: [path] });
    });

    it('reads a plain story, Given/When/Then criteria with hard line breaks, and tasks with inline code', () => {
      assert.deepEqual(requirementsOf(state), [['Story 3.2: Volunteer shift swap', ['Acceptance criterion 1', 'Acceptance criterion 2', 'Acceptance criterion 3']]]);
      assert.equal(state.document.intro_markdown, 'As a volunteer,\nI want to offer my shift to another volunteer,\nso that a missed shift still gets covered.');
      const first = scenario(state, 'Acceptance criterion 1');
      assert.equal(first.scenario_condition, 'a volunteer with an upcoming shift\nthey choose Offer shift');
      assert.equal(first.scenario_response, 'every volunteer trained for that station is notified.');
      assert.equal(scenario(state, 'Acceptance criterion 3').scenario_response, 'it is answered with `409` and `{"error": "already taken"}`.');
      assert.equal(stats(state).Tasks, '4');
      const top = ofKind(state, 'section').find((s) => s.parent === null)!;
      assert.match(top.body_markdown ?? '', /^Status: ready-for-dev\n\n<!-- Note: Validation is optional\./);
    });

    it('reads criteria numbered clause by clause as one criterion per Given/When … Then run', async () => {
      const story = '_bmad-output/implementation-artifacts/3-3-close-an-offer.md';
      const clauses = await branch([], (repo) =>
        repo.write(
          story,
          '# Story 3.3: Close an offer\n\n## Story\n\nAs a coordinator,\nI want to close an offer,\nso that nobody takes a cancelled shift.\n\n## Acceptance Criteria\n\n' +
            '1. **Given** an open offer\n2. **When** the coordinator closes it\n3. **Then** it leaves `GET /offers`\n4. **And** its volunteer is told\n' +
            '5. **Given** a closed offer\n6. **When** someone accepts it\n7. **Then** the answer is `410`\n',
        ),
      );
      const board = await assembled(clauses);
      assert.deepEqual(requirementsOf(board), [['Story 3.3: Close an offer', ['Acceptance criterion 1', 'Acceptance criterion 2']]]);
      assert.equal(scenario(board, 'Acceptance criterion 1').scenario_response, 'it leaves `GET /offers`\nits volunteer is told');
      assert.equal(scenario(board, 'Acceptance criterion 2').scenario_condition, 'a closed offer\nsomeone accepts it');
      assert.equal(scenario(board, 'Acceptance criterion 2').text_markdown, '5. **Given** a closed offer\n6. **When** someone accepts it\n7. **Then** the answer is `410`');
    });

    it('cites the Dev Notes code block and loses no line of the story', () => {
      assert.equal(ofKind(state, 'code_ref').filter((r) => r.label === LABELS.specCodeBlock).length, 1);
      assertNoTextLost(state, 'bmad-v6', [path]);
    });
  });

  describe('BMAD v6 planning artifacts: FR items and epic stories with bold-labelled Given/When/Then criteria', () => {
    const root = '_bmad-output/planning-artifacts';
    let made: SpecBranch;
    let state: BoardState;
    before(async () => {
      made = await branch(['bmad-v6-planning']);
      state = await assembled(made);
    });

    it('selects the planning artifacts by their v6 path, with no installation probe', async () => {
      const selection = await detectSpec(made.patchset, made.read);
      assert.deepEqual(selection, { format: 'bmad', kind: 'planning', root, touched: [`${root}/prd.md`, `${root}/epics.md`] });
    });

    it('reads FR items and each story, one Given/When/Then paragraph per criterion', () => {
      assert.deepEqual(requirementsOf(state), [
        ['FR1', []],
        ['FR2', []],
        ['Story 3.1: Offer a shift', ['Acceptance criterion 3.1.1', 'Acceptance criterion 3.1.2']],
      ]);
      assert.equal(requirement(state, 'Story 3.1: Offer a shift').shall, 'As a volunteer,\nI want to offer my shift,\nSo that someone trained can take it.');
      const offered = scenario(state, 'Acceptance criterion 3.1.1');
      assert.equal(offered.scenario_condition, 'a volunteer with an upcoming shift\nthey choose Offer shift');
      assert.equal(offered.scenario_response, 'every volunteer trained for the station is notified\nthe offer appears under `GET /offers`');
      assert.equal(state.document.intro_markdown, 'Volunteers swap shifts by text message, and a third of swaps are never written down.');
    });

    it('loses no line of the planning text', () => assertNoTextLost(state, 'bmad-v6-planning', [`${root}/prd.md`, `${root}/epics.md`]));
  });

  describe('Superpowers plan and design in docs/plans/', () => {
    const plan = 'docs/plans/2025-08-04-tag-filter-implementation.md';
    const design = 'docs/plans/2025-08-04-tag-filter-design.md';
    let made: SpecBranch;
    let state: BoardState;
    before(async () => {
      made = await branch(['superpowers-plans']);
      state = await assembled(made);
    });

    it('selects the plan that names a superpowers skill, with the design of its topic', async () => {
      const selection = await detectSpec(made.patchset, made.read);
      assert.deepEqual(selection, { format: 'superpowers', kind: 'topic', plan, design, touched: [plan, design] });
    });

    it('settles the design, then the plan: goal as intro, decision, tasks and cited steps', () => {
      assert.equal(state.document.title, 'Tag Filter Implementation Plan');
      assert.equal(state.document.intro_markdown, 'Show only the recipes that carry every chosen tag.');
      assert.equal(ofKind(state, 'decision')[0]?.title, 'Match every chosen tag');
      assert.deepEqual(
        ofKind(state, 'task').map((t) => t.text),
        ['Render one chip per tag above the list', "Toggle a chip's tag in the chosen set on click"],
      );
      assert.equal(ofKind(state, 'code_ref').filter((r) => r.label === LABELS.specCodeBlock).length, 2);
      assertNoTextLost(state, 'superpowers-plans', [design, plan]);
    });

    it('leaves an undated or unmarked plan in docs/plans/ to the seat', async () => {
      const other = await branch([], (repo) => repo.write('docs/plans/2025-08-05-cleanup.md', '# Cleanup\n\n- [ ] Remove the old list view\n').write('docs/plans/roadmap.md', '# Roadmap\n'));
      assert.equal(await detectSpec(other.patchset, other.read), null);
    });
  });
});
