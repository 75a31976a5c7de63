import assert from 'node:assert/strict';
import { buildCitationIndex } from '../../../host/board/citations';
import { assembleDesignBoard } from '../../../host/design/assemble';
import { LABELS, type SpecDocument } from '../../../host/design/model';
import { writeBoard } from '../../../host/design/render';
import { ofKind, specBranches } from './specRepo';

/** When the host cannot settle a specification: the rule that refused it, and the sources it located. */

const CHANGE = 'openspec/changes/add-export';

const proposal = (why: string, changes = '- Add a CSV export of the report') => `# Change: Add export\n\n## Why\n${why}\n\n## What Changes\n${changes}\n\n## Impact\n- Affected specs: reports\n`;

const spec = (body: string) => `## ADDED Requirements\n\n### Requirement: CSV Export\n${body}\n#### Scenario: Export\n- **WHEN** the user exports a report\n- **THEN** a CSV file is downloaded\n`;

describe('design assembler: fallback and labels', () => {
  const branch = specBranches();

  it('falls back, naming the rule, when a requirement has neither normative text nor a scenario', async () => {
    const { patchset, read } = await branch([], (repo) =>
      repo
        .write(`${CHANGE}/proposal.md`, proposal('Reports cannot leave the app.'))
        .write(`${CHANGE}/specs/reports/spec.md`, '## ADDED Requirements\n\n### Requirement: CSV Export\n\n### Requirement: PDF Export\nThe system SHALL export a report as PDF.\n'),
    );
    const assembly = await assembleDesignBoard(patchset, read);
    assert.equal(assembly.kind, 'fallback');
    if (assembly.kind !== 'fallback') return;
    assert.equal(assembly.format, 'openspec');
    assert.equal(assembly.rule, 'spec-requirement-text');
    assert.match(assembly.reason, /specs\/reports\/spec\.md:3: requirement "CSV Export" has no normative text and no scenario/);
    assert.deepEqual(assembly.sources, [`${CHANGE}/proposal.md`, `${CHANGE}/specs/reports/spec.md`]);
  });

  it('settles a requirement that goes straight to its scenarios (a MODIFIED delta adding one), labelled as having no text of its own', async () => {
    const { patchset, read } = await branch([], (repo) => repo.write(`${CHANGE}/proposal.md`, proposal('Reports cannot leave the app.')).write(`${CHANGE}/specs/reports/spec.md`, spec('')));
    const assembly = await assembleDesignBoard(patchset, read);
    assert.equal(assembly.kind, 'board', assembly.kind === 'fallback' ? `${assembly.rule}: ${assembly.reason}` : '');
    if (assembly.kind !== 'board') return;
    const [requirement] = ofKind(assembly.state, 'requirement');
    assert.equal(requirement?.shall, LABELS.noRequirementText);
    assert.deepEqual(
      ofKind(assembly.state, 'scenario').map((s) => s.name),
      ['Export'],
    );
  });

  it('states a fenced code block in a proposal by its label (file and lines), in the intro and in the rows, never cited', async () => {
    const why = 'Reports cannot leave the app today, so users copy tables by hand:\n\n```sql\nSELECT * FROM report;\n```\n\nAn export ends the copying.';
    const changes = '- Add a CSV export of the report\n\n  ```ts\n  export function toCsv(rows: Row[]): string {}\n  ```\n- Add an export button';
    const { patchset, read } = await branch([], (repo) =>
      repo.write(`${CHANGE}/proposal.md`, proposal(why, changes)).write(`${CHANGE}/specs/reports/spec.md`, spec('The system SHALL export a report as CSV.\n')),
    );
    const assembly = await assembleDesignBoard(patchset, read);
    assert.equal(assembly.kind, 'board', assembly.kind === 'fallback' ? `${assembly.rule}: ${assembly.reason}` : '');
    if (assembly.kind !== 'board') return;
    assert.equal(assembly.state.status, 'finished');
    assert.equal(
      assembly.state.document.intro_markdown,
      `Reports cannot leave the app today, so users copy tables by hand:\n\n[code block: ${CHANGE}/proposal.md line 7]\n\nAn export ends the copying.`,
    );
    const rows = ofKind(assembly.state, 'prose').map((p) => p.markdown);
    assert.ok(rows.includes(`Add a CSV export of the report\n\n[code block: ${CHANGE}/proposal.md line 16]`), rows.join('\n---\n'));
    assert.ok(rows.includes('Add an export button'));
    assert.equal(ofKind(assembly.state, 'code_ref').length, 0, 'a proposal’s fence is illustration: labelled, not cited');
    assert.ok(!JSON.stringify([...assembly.state.elements.values()]).includes('SELECT'));
  });

  it('settles with an inline command kept as written: inline code is the specification’s own text', async () => {
    const { patchset, read } = await branch([], (repo) =>
      repo
        .write(`${CHANGE}/proposal.md`, proposal('Reports cannot leave the app.', '- Run `npm run export -- --csv` to export'))
        .write(`${CHANGE}/specs/reports/spec.md`, spec('The system SHALL export a report as CSV.\n')),
    );
    const assembly = await assembleDesignBoard(patchset, read);
    assert.equal(assembly.kind, 'board', assembly.kind === 'fallback' ? `${assembly.rule}: ${assembly.reason}` : '');
    if (assembly.kind !== 'board') return;
    assert.ok(ofKind(assembly.state, 'prose').some((p) => p.markdown === 'Run `npm run export -- --csv` to export'));
  });

  it('falls back with the board rule when prose would carry a code block as bytes', async () => {
    const { patchset } = await branch([], (repo) => repo.write('openspec/changes/x/specs/a/spec.md', spec('The system SHALL work.\n')));
    const path = 'openspec/changes/x/specs/a/spec.md';
    const doc: SpecDocument = {
      format: 'openspec',
      title: 'x',
      intro: 'An intro.',
      sources: [path],
      capabilities: 1,
      ledger: null,
      files: [{ kind: 'section', title: 'a', body: 'Example:\n\n```sh\nnpm run export\n```', sourcePaths: [path], children: [] }],
    };
    const outcome = writeBoard(doc, patchset.id, { author: 'assembler', citations: buildCitationIndex(patchset) });
    assert.equal(outcome.ok, false);
    if (outcome.ok) return;
    assert.equal(outcome.rule, 'no-code-bytes');
    assert.match(outcome.reason, /add section refused: no-code-bytes on body_markdown/);
  });

  it('falls back as unreadable when a touched file cannot be read at the head', async () => {
    const { patchset, read } = await branch([], (repo) =>
      repo.write(`${CHANGE}/proposal.md`, proposal('Reports cannot leave the app.')).write(`${CHANGE}/tasks.md`, '## 1. Export\n- [ ] 1.1 Add it\n'),
    );
    const assembly = await assembleDesignBoard(patchset, async (path) => (path.endsWith('tasks.md') ? null : read(path)));
    assert.equal(assembly.kind, 'fallback');
    if (assembly.kind !== 'fallback') return;
    assert.equal(assembly.rule, 'spec-unreadable');
    assert.deepEqual(assembly.sources, [`${CHANGE}/proposal.md`, `${CHANGE}/tasks.md`]);
  });

  it('renders a stated decision as sections when its lines are not part of the change', async () => {
    const adr = (status: string) =>
      `# 3. Use a queue\n\n## Status\n\n${status}\n\n## Context\n\nPolling couples the services.\n\n## Considered Options\n\n- Polling\n- A queue\n\n## Decision\n\nWe will publish events to a queue.\n`;
    const { patchset, read } = await branch(
      [],
      (repo) => repo.write('docs/adr/0003-use-a-queue.md', adr('Accepted')),
      (repo) => repo.write('docs/adr/0003-use-a-queue.md', adr('Proposed')),
    );
    const assembly = await assembleDesignBoard(patchset, read);
    assert.equal(assembly.kind, 'board', assembly.kind === 'fallback' ? assembly.reason : '');
    if (assembly.kind !== 'board') return;
    assert.equal(ofKind(assembly.state, 'decision').length, 0, 'the Decision lines are unchanged, so nothing in the change evidences them');
    const decision = ofKind(assembly.state, 'section').find((s) => s.title === 'Decision');
    assert.equal(decision?.body_markdown, 'We will publish events to a queue.');
    assert.equal(ofKind(assembly.state, 'stat')[0]?.stat_values[ofKind(assembly.state, 'stat')[0]!.stat_labels.indexOf('Decisions')], '1');
  });

  it('falls back when finish answers with pointers', async () => {
    const { patchset } = await branch([], (repo) => repo.write('openspec/changes/x/specs/a/spec.md', spec('The system SHALL work.\n')));
    const doc: SpecDocument = {
      format: 'openspec',
      title: 'x',
      intro: 'An intro.',
      sources: ['openspec/changes/x/specs/a/spec.md'],
      capabilities: 1,
      ledger: null,
      files: [
        {
          kind: 'section',
          title: 'a',
          body: null,
          sourcePaths: ['openspec/changes/x/specs/a/spec.md'],
          children: [
            {
              kind: 'requirement',
              title: 'Blank',
              shall: '   ',
              sourcePath: 'openspec/changes/x/specs/a/spec.md',
              sourceLine: 3,
              candidate: 'Requirement: Blank',
              delta: 'added',
              scenarios: [],
              notes: [],
            },
          ],
        },
      ],
    };
    const outcome = writeBoard(doc, patchset.id, { author: 'assembler', citations: buildCitationIndex(patchset) });
    assert.equal(outcome.ok, false);
    if (outcome.ok) return;
    assert.equal(outcome.rule, 'design-requirement-scenarios');
    assert.match(outcome.reason, /^finish returned 1 pointer/);
  });
});
