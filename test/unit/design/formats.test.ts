import assert from 'node:assert/strict';
import { assembleDesignBoard, type DesignAssembly } from '../../../host/design/assemble';
import { LABELS } from '../../../host/design/model';
import type { BoardState } from '../../../host/board/state';
import type { ElementOf } from '../../../protocol/board';
import { childrenOf, elements, ofKind, outlineOf, specBranch, stats, type SpecBranch } from './specRepo';

/**
 * One suite per format: a real repository whose feature branch adds the fixture under
 * test/fixtures/specs/<format>/, captured, read back at the captured head, assembled.
 */

function settled(assembly: DesignAssembly): { state: BoardState; sources: string[] } {
  assert.equal(assembly.kind, 'board', assembly.kind === 'fallback' ? `${assembly.rule}: ${assembly.reason}` : assembly.kind);
  if (assembly.kind !== 'board') throw new Error('unreachable');
  return { state: assembly.state, sources: assembly.sources };
}

function requirement(state: BoardState, title: string): ElementOf<'requirement'> {
  const found = ofKind(state, 'requirement').find((r) => r.title === title);
  assert.ok(found, `no requirement "${title}" in\n${outlineOf(state)}`);
  return found;
}

function scenariosOf(state: BoardState, id: string): Array<ElementOf<'scenario'>> {
  return childrenOf(state, id).filter((el): el is ElementOf<'scenario'> => el.kind === 'scenario');
}

function section(state: BoardState, title: string): ElementOf<'section'> {
  const found = ofKind(state, 'section').find((s) => s.title === title);
  assert.ok(found, `no section "${title}" in\n${outlineOf(state)}`);
  return found;
}

/** Every board invariant that does not depend on the format. */
function assertCommon(state: BoardState, sources: string[]): void {
  assert.equal(state.status, 'finished');
  assert.equal(state.lens, 'design');
  assert.equal(state.document.prose_register, 'transcribed');
  assert.equal(state.document.measure, 'structured');
  for (const el of elements(state)) assert.equal(el.author, 'assembler');
  // One top-level section per source file, in reading order, each naming its file.
  const tops = ofKind(state, 'section').filter((s) => s.parent === null);
  assert.deepEqual(
    tops.map((s) => s.source_paths),
    sources.map((p) => [p]),
  );
  // Each stat label once; the stat sits at the top level.
  const labels = ofKind(state, 'stat').flatMap((s) => s.stat_labels);
  assert.equal(new Set(labels).size, labels.length);
  // No code bytes: every fence became the label.
  for (const el of elements(state)) assert.ok(!JSON.stringify(el).includes('```'), `${el.id} carries a fence`);
}

async function assembleTwice(branch: SpecBranch): Promise<DesignAssembly> {
  const first = await assembleDesignBoard(branch.patchset, branch.read);
  const second = await assembleDesignBoard(branch.patchset, branch.read);
  assert.deepStrictEqual(second, first, 'the same patchset assembles the same board');
  return first;
}

describe('design assembler: formats', () => {
  const branches: SpecBranch[] = [];
  after(() => branches.forEach((b) => b.repo.cleanup()));
  const branch = async (fixtures: string[], edit?: Parameters<typeof specBranch>[1]) => {
    const made = await specBranch(fixtures, edit);
    branches.push(made);
    return made;
  };

  describe('OpenSpec', () => {
    let state: BoardState;
    let sources: string[];
    const root = 'openspec/changes/add-two-factor-auth';
    before(async () => ({ state, sources } = settled(await assembleTwice(await branch(['openspec'])))));

    it('settles a transcribed board titled by the change, introduced by the proposal Why verbatim', () => {
      assertCommon(state, sources);
      assert.equal(state.document.title, 'add-two-factor-auth');
      assert.equal(
        state.document.intro_markdown,
        'Accounts protected by a password alone are taken over whenever that password leaks.\nA second factor stops a leaked password from being enough to sign in.',
      );
    });

    it('reads proposal, design, capability deltas and tasks in that order', () => {
      assert.deepEqual(sources, [`${root}/proposal.md`, `${root}/design.md`, `${root}/specs/auth/spec.md`, `${root}/specs/notifications/spec.md`, `${root}/tasks.md`]);
    });

    it('counts capabilities, requirements and tasks from the files, each stat once', () => {
      assert.deepEqual(stats(state), {
        Format: 'OpenSpec',
        Capabilities: '2',
        Requirements: '6',
        Scenarios: '5',
        Tasks: '5',
        'Tasks done': '2',
        Decisions: '2',
      });
    });

    it('renders What Changes as one row per listed change and does not repeat Why', () => {
      const rows = childrenOf(state, section(state, 'What Changes').id);
      assert.deepEqual(
        rows.map((r) => (r.kind === 'prose' ? r.markdown : r.kind)),
        [
          'Add a time-based one-time password (TOTP) second factor to sign-in',
          'Add recovery codes that can each be used once',
          '**BREAKING**: Sessions created before enrolment are revoked when a user enrols',
        ],
      );
      assert.ok(!ofKind(state, 'section').some((s) => s.title === 'Why'));
      assert.ok(section(state, 'Impact'));
      assert.equal(childrenOf(state, section(state, 'Rollout').id)[0]?.kind, 'section', 'deeper headings nest again');
    });

    it('keeps requirement text verbatim with its source, line and delta operation', () => {
      const enrol = requirement(state, 'Two-Factor Enrolment');
      assert.equal(enrol.shall, 'The system SHALL let a signed-in user enrol a TOTP authenticator by confirming one valid code.');
      assert.equal(enrol.source_path, `${root}/specs/auth/spec.md`);
      assert.equal(enrol.source_line, 3);
      assert.equal(enrol.source_candidate, 'Requirement: Two-Factor Enrolment');
      assert.equal(enrol.spec_delta, 'added');
      assert.deepEqual(enrol.trace, []);
      assert.equal(requirement(state, 'Session Revocation').spec_delta, 'modified');
      const removed = requirement(state, 'Password-Only Sign-In Notice');
      assert.equal(removed.spec_delta, 'removed');
      assert.match(removed.shall, /^\*\*Reason\*\*: Replaced by the enrolment notice/);
      const renamed = requirement(state, 'Sign-In Email');
      assert.equal(renamed.spec_delta, 'renamed');
      assert.equal(renamed.shall, 'Renamed from: Login Email');
    });

    it('puts one capability root per spec file with its operation sections beneath in source order', () => {
      const capability = section(state, 'notifications');
      assert.deepEqual(capability.source_paths, [`${root}/specs/notifications/spec.md`]);
      assert.deepEqual(
        childrenOf(state, capability.id).map((c) => (c.kind === 'section' ? c.title : c.kind)),
        ['ADDED Requirements', 'REMOVED Requirements', 'RENAMED Requirements'],
      );
      const added = childrenOf(state, section(state, 'auth').id).find((c) => c.kind === 'section' && c.title === 'ADDED Requirements');
      assert.deepEqual(
        childrenOf(state, added!.id).map((c) => c.kind),
        ['requirement', 'requirement'],
      );
    });

    it('splits scenario clauses: WHEN (GIVEN, AND before THEN) is the condition, THEN and what follows the response', () => {
      const [ok, invalid] = scenariosOf(state, requirement(state, 'Two-Factor Enrolment').id);
      assert.equal(ok?.name, 'Successful enrolment');
      assert.equal(ok?.scenario_condition, 'a signed-in user scans the enrolment secret and submits a valid code');
      assert.equal(ok?.scenario_response, 'the authenticator is stored for that user\nten recovery codes are shown exactly once');
      assert.match(ok?.text_markdown ?? '', /^- \*\*WHEN\*\* a signed-in user/);
      assert.equal(invalid?.scenario_condition, 'a user submits a code that does not match the secret');
      const [signIn] = scenariosOf(state, requirement(state, 'Second-Factor Challenge').id);
      assert.equal(signIn?.scenario_condition, 'a user with an enrolled authenticator\nthe user submits the correct password\nthen submits a valid TOTP code');
      assert.equal(signIn?.scenario_response, 'a session is created');
    });

    it('keeps each task group with the source’s own marks', () => {
      const group = section(state, '1. Enrolment');
      const tasks = childrenOf(state, group.id).filter((t): t is ElementOf<'task'> => t.kind === 'task');
      assert.deepEqual(
        tasks.map((t) => [t.text, t.done, t.source_line]),
        [
          ['1.1 Add the authenticator table and migration', true, 2],
          ['1.2 Add the enrolment endpoint', true, 3],
          ['1.3 Show recovery codes once after enrolment', false, 4],
        ],
      );
      assert.ok(tasks.every((t) => t.source_path === `${root}/tasks.md`));
    });

    it('writes a stated decision with alternatives as a decision element grounded in its own lines', () => {
      const [decision, ...more] = ofKind(state, 'decision');
      assert.equal(more.length, 0);
      assert.equal(decision?.title, 'Use TOTP rather than SMS codes');
      assert.equal(decision?.statement, 'Second factors are time-based one-time passwords generated by an authenticator app.');
      assert.equal(decision?.rationale, 'TOTP works without network access and cannot be intercepted by SIM swapping.');
      assert.deepEqual(decision?.alternatives, ['SMS one-time codes', 'Email magic links']);
      assert.equal(decision?.inferred, false);
      assert.equal(decision?.source_path, `${root}/design.md`);
      const [evidence] = ofKind(state, 'code_ref');
      assert.deepEqual(decision?.evidence, [evidence?.id]);
      assert.equal(evidence?.path, `${root}/design.md`);
      assert.equal(evidence?.start_line, 13);
      assert.ok((evidence?.hunk_ids.length ?? 0) > 0);
    });

    it('renders a stated decision with no rationale or alternatives as a section with its text', () => {
      const hashed = section(state, 'Store recovery codes hashed');
      assert.equal(hashed.body_markdown, 'Recovery codes are stored as salted hashes, never in plain text.');
    });
  });

  describe('Kiro', () => {
    let state: BoardState;
    let sources: string[];
    const root = '.kiro/specs/saved-searches';
    before(async () => ({ state, sources } = settled(await assembleTwice(await branch(['kiro'])))));

    it('settles a board titled by the feature, introduced by the Introduction verbatim', () => {
      assertCommon(state, sources);
      assert.equal(state.document.title, 'saved-searches');
      assert.equal(state.document.intro_markdown, 'Saved searches let a user keep a search query and its filters under a name and run it again later from the sidebar.');
      assert.deepEqual(sources, [`${root}/requirements.md`, `${root}/design.md`, `${root}/tasks.md`]);
    });

    it('counts requirements, criteria, tasks, decisions and glossary terms', () => {
      assert.deepEqual(stats(state), {
        Format: 'Kiro',
        Requirements: '2',
        Scenarios: '5',
        Tasks: '5',
        'Tasks done': '2',
        Decisions: '1',
        'Glossary terms': '2',
      });
    });

    it('makes each numbered requirement its user story, with each acceptance criterion a scenario', () => {
      const first = requirement(state, 'Requirement 1');
      assert.equal(first.shall, '**User Story:** As a returning user, I want to save a search under a name, so that I can run it again without retyping the filters.');
      assert.equal(first.source_path, `${root}/requirements.md`);
      assert.equal(first.source_line, 9);
      const criteria = scenariosOf(state, first.id);
      assert.deepEqual(
        criteria.map((c) => c.name),
        ['Acceptance criterion 1.1', 'Acceptance criterion 1.2', 'Acceptance criterion 1.3'],
      );
      assert.equal(criteria[0]?.text_markdown, 'WHEN the user chooses Save search on a results page THEN the system SHALL store the query and every active filter under the name the user gives');
      assert.equal(criteria[0]?.scenario_condition, 'the user chooses Save search on a results page');
      assert.equal(criteria[0]?.scenario_response, 'the system SHALL store the query and every active filter under the name the user gives');
      assert.equal(criteria[1]?.scenario_condition, 'the user gives a name that is already used');
      assert.equal(criteria[2]?.scenario_condition, undefined, 'a ubiquitous criterion names neither half');
      const [sidebar] = scenariosOf(state, requirement(state, 'Requirement 2').id);
      assert.equal(sidebar?.scenario_condition, 'the user opens the sidebar');
      assert.equal(sidebar?.scenario_response, 'THE Sidebar SHALL list saved searches in the order they were created');
    });

    it('keeps numbered tasks with their marks and their _Requirements_ detail beside them', () => {
      const plan = section(state, 'Implementation Plan');
      const rows = childrenOf(state, plan.id).map((el) => (el.kind === 'task' ? `[${el.done ? 'x' : ' '}] ${el.text}` : el.kind === 'prose' ? el.markdown : el.kind));
      assert.deepEqual(rows, [
        '[x] 1. Add the saved search model',
        '- Create the table with user, name, query and filters\n- _Requirements: 1.1, 1.3_',
        '[ ] 2. Add the save endpoint',
        '[x] 2.1 Reject duplicate names with a replace prompt',
        '- _Requirements: 1.2_',
        '[ ] 2.2 Enforce the limit of fifty per user',
        '- _Requirements: 1.3_',
        '[ ] 3. List saved searches in the sidebar',
        '- _Requirements: 2.1, 2.2_',
      ]);
    });

    it('renders glossary entries as prose and the design decision as a decision', () => {
      const glossary = childrenOf(state, section(state, 'Glossary').id);
      assert.deepEqual(
        glossary.map((g) => (g.kind === 'prose' ? g.markdown : g.kind)),
        ['**Saved search**: a named query together with its filters', '**Sidebar**: the collapsible panel on the left of every page'],
      );
      const [decision] = ofKind(state, 'decision');
      assert.equal(decision?.title, 'Store filters as a JSON document');
      assert.deepEqual(decision?.alternatives, ['One column per filter', 'A separate filter table keyed by saved search']);
    });
  });

  describe('BMAD story', () => {
    let state: BoardState;
    let sources: string[];
    const story = 'docs/stories/1.2.password-reset.story.md';
    before(async () => ({ state, sources } = settled(await assembleTwice(await branch(['bmad'])))));

    it('settles one story as one requirement: its story text, its acceptance criteria as scenarios', () => {
      assertCommon(state, sources);
      assert.deepEqual(sources, [story]);
      assert.equal(state.document.title, 'Story 1.2: Password reset by email');
      const shall = '**As a** registered user,\n**I want** to reset my password through a link sent to my email address,\n**so that** I can regain access when I forget my password';
      assert.equal(state.document.intro_markdown, shall);
      const req = requirement(state, 'Story 1.2: Password reset by email');
      assert.equal(req.shall, shall);
      assert.equal(req.source_line, 7);
      const criteria = scenariosOf(state, req.id);
      assert.deepEqual(
        criteria.map((c) => c.name),
        ['Acceptance criterion 1', 'Acceptance criterion 2', 'Acceptance criterion 3'],
      );
      assert.equal(criteria[1]?.text_markdown, 'A request for an unknown address shows the same confirmation as a known one');
      assert.equal(criteria[2]?.scenario_condition, 'the user sets a new password through a valid link');
      assert.ok(!ofKind(state, 'section').some((s) => s.title === 'Acceptance Criteria'), 'criteria are owned by the requirement only');
    });

    it('keeps tasks and subtasks with their marks, and every other heading in order', () => {
      assert.deepEqual(stats(state), { Format: 'BMAD', Requirements: '1', Scenarios: '3', Tasks: '5', 'Tasks done': '2' });
      const tasks = ofKind(state, 'task');
      assert.deepEqual(
        tasks.map((t) => [t.text, t.done]),
        [
          ['Add the reset token table (AC: 1)', true],
          ['Store tokens hashed with their expiry', true],
          ['Add the request endpoint (AC: 1, 2)', false],
          ['Send the email through the existing mailer', false],
          ['Add the reset form (AC: 3)', false],
        ],
      );
      const top = ofKind(state, 'section').find((s) => s.parent === null)!;
      assert.deepEqual(
        childrenOf(state, top.id).map((c) => (c.kind === 'section' || c.kind === 'requirement' ? c.title : c.kind)),
        ['Status', 'Story 1.2: Password reset by email', 'Tasks / Subtasks', 'Dev Notes', 'Change Log'],
      );
      assert.equal(section(state, 'Status').body_markdown, 'Approved');
    });
  });

  describe('BMAD planning documents', () => {
    let state: BoardState;
    let sources: string[];
    before(async () => ({ state, sources } = settled(await assembleTwice(await branch(['bmad-planning'])))));

    it('reads FR/NFR items and epic stories as requirements, in a BMAD repository', () => {
      assertCommon(state, sources);
      assert.deepEqual(sources, ['docs/prd.md', 'docs/architecture.md']);
      assert.equal(state.document.title, 'Team Calendar Product Requirements Document (PRD)');
      assert.equal(state.document.intro_markdown, 'Teams arrange meetings by asking each member for free slots in chat, which takes a day for a five-person meeting.');
      assert.equal(requirement(state, 'FR1').shall, "The system shall show every team member's busy and free slots for the selected week.");
      assert.equal(requirement(state, 'NFR1').source_line, 23);
      const story = requirement(state, 'Story 1.1 Week view');
      assert.equal(scenariosOf(state, story.id).length, 2);
      assert.equal(stats(state).Requirements, '4');
    });
  });

  describe('Superpowers', () => {
    let state: BoardState;
    let sources: string[];
    before(async () => ({ state, sources } = settled(await assembleTwice(await branch(['superpowers'])))));

    it('reads the design, then the plan, then the bound progress ledger', () => {
      assertCommon(state, sources);
      assert.deepEqual(sources, [
        'docs/superpowers/specs/2025-06-10-rate-limiter-design.md',
        'docs/superpowers/plans/2025-06-10-rate-limiter.md',
        'docs/superpowers/progress/2025-06-10-rate-limiter.md',
      ]);
      assert.equal(state.document.title, 'Rate Limiter Implementation Plan');
      assert.equal(state.document.intro_markdown, 'Limit each API key to a steady request rate with short bursts allowed.');
    });

    it('makes each Task heading a group of its step check boxes, plan marks untouched, code cited', () => {
      const group = section(state, 'Task 1: Token bucket');
      assert.equal(group.body_markdown, '**Files:**');
      const rows = childrenOf(state, group.id).map((el) =>
        el.kind === 'task' ? `[${el.done ? 'x' : ' '}] ${el.text}` : el.kind === 'prose' ? el.markdown : el.kind === 'code_ref' ? `${el.path}:${el.start_line}-${el.end_line} (${el.label})` : el.kind,
      );
      assert.deepEqual(rows, [
        'Create: `src/limiter/bucket.ts`',
        'Test: `test/limiter/bucket.test.ts`',
        '[x] **Step 1: Write the failing test**',
        `docs/superpowers/plans/2025-06-10-rate-limiter.md:20-22 (${LABELS.specCodeBlock})`,
        '[x] **Step 2: Implement the bucket**',
        '[x] **Step 3: Commit**',
      ]);
    });

    it('completes a group only on a Task N: complete line of a ledger bound to the plan', () => {
      assert.deepEqual(stats(state), {
        Format: 'Superpowers',
        Requirements: '0',
        Tasks: '5',
        'Tasks done': '3',
        Decisions: '1',
        'Task groups complete (progress ledger)': '1 of 2',
      });
      const ledger = section(state, 'Progress: docs/superpowers/plans/2025-06-10-rate-limiter.md');
      assert.match(ledger.body_markdown ?? '', /Task 2: fix-round 1 \(handler test flaked\)/, 'other ledger lines stay visible');
    });

    it('ignores a ledger whose first line names another plan', async () => {
      const other = await branch(['superpowers'], (repo) =>
        repo.write('docs/superpowers/progress/2025-06-10-rate-limiter.md', '# Progress: docs/superpowers/plans/2025-06-01-other.md\n\nTask 1: complete (x)\n'),
      );
      const { state: unbound, sources: read } = settled(await assembleDesignBoard(other.patchset, other.read));
      assert.equal(read.length, 2);
      assert.equal(stats(unbound)['Task groups complete (progress ledger)'], undefined);
    });
  });

  describe('grill-with-docs', () => {
    let state: BoardState;
    let sources: string[];
    before(async () => ({ state, sources } = settled(await assembleTwice(await branch(['grill-with-docs'])))));

    it('reads context maps, glossaries, then ADRs by path', () => {
      assertCommon(state, sources);
      assert.deepEqual(sources, ['CONTEXT-MAP.md', 'CONTEXT.md', 'docs/adr/0001-record-architecture-decisions.md', 'docs/adr/0002-publish-order-paid-events.md']);
      assert.equal(state.document.title, LABELS.grillTitle);
      assert.deepEqual(stats(state), { Format: 'grill-with-docs', Requirements: '0', Tasks: '0', Decisions: '2', 'Glossary terms': '3' });
    });

    it('renders each glossary entry as its own prose, verbatim', () => {
      const language = childrenOf(state, section(state, 'Language').id);
      assert.deepEqual(
        language.map((el) => (el.kind === 'prose' ? el.markdown : el.kind)),
        [
          '**Basket**: the items a customer has chosen but not yet paid for.',
          '**Order**: a basket the customer has paid for; it can no longer change.\n_Avoid_: purchase, sale',
          '**Fulfilment**: the work of picking, packing and shipping an order.',
        ],
      );
    });

    it('writes an ADR with considered options as a decision: Decision Outcome stated, Context the rationale', () => {
      const [decision, ...more] = ofKind(state, 'decision');
      assert.equal(more.length, 0);
      assert.equal(decision?.title, '2. Publish order-paid events to a queue');
      assert.equal(decision?.statement, 'Ordering publishes an order-paid event to a durable queue, and Shipping consumes it.');
      assert.equal(decision?.rationale, 'Shipping polls the ordering database for paid orders, which couples the two contexts to one schema.');
      assert.deepEqual(decision?.alternatives, ['Keep polling the ordering database', 'Call the shipping service directly when an order is paid', 'Publish an order-paid event to a queue']);
      assert.equal(decision?.source_path, 'docs/adr/0002-publish-order-paid-events.md');
      const adr = section(state, '2. Publish order-paid events to a queue');
      assert.deepEqual(
        childrenOf(state, adr.id).map((c) => (c.kind === 'section' ? c.title : c.kind)),
        ['Status', 'code_ref', 'decision', 'Consequences'],
      );
    });

    it('renders an ADR that states no alternatives as its own sections', () => {
      const adr = section(state, '1. Record architecture decisions');
      assert.equal(adr.body_markdown, 'Date: 2025-01-15');
      assert.deepEqual(
        childrenOf(state, adr.id).map((c) => (c.kind === 'section' ? `${c.title}: ${c.body_markdown}` : c.kind)),
        [
          'Status: Accepted',
          'Context: Decisions about the ordering system were made in chat and lost.',
          'Decision: We will record architecture decisions as short Markdown files under docs/adr.',
          'Consequences: Every significant decision gets a numbered record that later changes can supersede.',
        ],
      );
    });
  });
});
