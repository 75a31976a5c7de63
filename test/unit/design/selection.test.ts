import assert from 'node:assert/strict';
import { assembleDesignBoard } from '../../../host/design/assemble';
import { detectSpec, selectGrill, selectKiro, selectOpenSpec, touchedPaths } from '../../../host/design/detect';
import { LABELS } from '../../../host/design/model';
import { ledgerBinds } from '../../../host/design/readers/superpowers';
import type { Patchset } from '../../../protocol/patchset';
import { ofKind, specBranches, stats } from './specRepo';

/** Which specification a branch carries: the fixed format order, one spec per board, none when absent. */

const SPEC = (title: string, shall: string) => `## ADDED Requirements\n\n### Requirement: ${title}\n${shall}\n\n#### Scenario: It works\n- **WHEN** it runs\n- **THEN** it works\n`;

describe('design assembler: selection', () => {
  describe('path selection (pure)', () => {
    it('selects an OpenSpec change by directory only; the index beside it selects nothing', () => {
      assert.equal(selectOpenSpec(['openspec/changes/README.md']), null);
      assert.equal(selectOpenSpec(['openspec/changes/archive/README.md']), null);
      assert.equal(selectOpenSpec(['openspec/project.md', 'openspec/AGENTS.md']), null);
      const picked = selectOpenSpec(['openspec/changes/README.md', 'openspec/changes/add-x/proposal.md', 'openspec/changes/add-x/tasks.md']);
      assert.deepEqual(picked, { format: 'openspec', kind: 'change', root: 'openspec/changes/add-x', touched: ['openspec/changes/add-x/proposal.md', 'openspec/changes/add-x/tasks.md'] });
    });

    it('takes one change when a branch touches several: the first active one by path, archived after active', () => {
      const paths = ['openspec/changes/archive/2025-01-01-add-a/proposal.md', 'openspec/changes/zeta/proposal.md', 'openspec/changes/beta/tasks.md'];
      assert.equal((selectOpenSpec([...paths].sort()) as { root: string }).root, 'openspec/changes/beta');
      assert.equal((selectOpenSpec(['openspec/changes/archive/2025-01-01-add-a/proposal.md']) as { root: string }).root, 'openspec/changes/archive/2025-01-01-add-a');
    });

    it('falls back to current capability specs when no change directory is touched', () => {
      const picked = selectOpenSpec(['openspec/specs/b/spec.md', 'openspec/specs/a/spec.md']);
      assert.deepEqual(picked, { format: 'openspec', kind: 'specs', root: 'openspec/specs', touched: ['openspec/specs/b/spec.md', 'openspec/specs/a/spec.md'].sort() });
    });

    it('selects a Kiro feature, else steering documents', () => {
      assert.equal((selectKiro(['.kiro/steering/tech.md', '.kiro/specs/b/tasks.md', '.kiro/specs/a/design.md']) as { root: string }).root, '.kiro/specs/a');
      assert.equal(selectKiro(['.kiro/steering/tech.md'])?.kind, 'steering');
      assert.equal(selectKiro(['.kiro/hooks/on-save.kiro.hook', '.kiro/settings/mcp.json']), null);
    });

    it('collects grill-with-docs records at any depth, maps first, then glossaries, then ADRs', () => {
      const picked = selectGrill(['services/a/docs/decisions/0003-x.md', 'CONTEXT.md', 'docs/adr/0001-y.md', 'services/a/CONTEXT-MAP.md', 'docs/adr/diagram.png']);
      assert.deepEqual(picked?.touched, ['services/a/CONTEXT-MAP.md', 'CONTEXT.md', 'services/a/docs/decisions/0003-x.md', 'docs/adr/0001-y.md']);
    });

    it('reads head-side paths only: a deleted spec file selects nothing', async () => {
      const patchset = { files: [{ path: 'openspec/changes/add-x/proposal.md', status: 'deleted', submodule: false }] } as unknown as Pick<Patchset, 'files'>;
      assert.deepEqual(touchedPaths(patchset), []);
      assert.equal(await detectSpec(patchset, async () => null), null);
    });

    it('binds a progress ledger only by its exact first line', () => {
      const plan = 'docs/superpowers/plans/2025-06-10-x.md';
      assert.equal(ledgerBinds(`# Progress: ${plan}`, plan), true);
      assert.equal(ledgerBinds(plan, plan), true);
      assert.equal(ledgerBinds(`# Progress: ${plan}.bak`, plan), false);
      assert.equal(ledgerBinds('# Progress', plan), false);
    });
  });

  describe('real branches', () => {
    const branch = specBranches();

    it('renders OpenSpec only when a branch touches OpenSpec and Kiro', async () => {
      const { patchset, read } = await branch(['kiro', 'openspec']);
      assert.ok(patchset.files.some((f) => f.path.startsWith('.kiro/')));
      const assembly = await assembleDesignBoard(patchset, read);
      assert.equal(assembly.kind, 'board');
      if (assembly.kind !== 'board') return;
      assert.equal(assembly.format, 'openspec');
      assert.ok(assembly.sources.every((p) => p.startsWith('openspec/changes/add-two-factor-auth/')));
      assert.equal(stats(assembly.state).Format, 'OpenSpec');
      assert.ok(!ofKind(assembly.state, 'requirement').some((r) => r.source_path?.startsWith('.kiro/')));
    });

    it('still assembles the change when the README.md index beside it is touched', async () => {
      const { patchset, read } = await branch(['openspec'], (repo) => repo.write('openspec/changes/README.md', '# Changes\n\n- add-two-factor-auth\n'));
      assert.ok(patchset.files.some((f) => f.path === 'openspec/changes/README.md'));
      const assembly = await assembleDesignBoard(patchset, read);
      assert.equal(assembly.kind, 'board');
      if (assembly.kind !== 'board') return;
      assert.equal(assembly.state.document.title, 'add-two-factor-auth');
      assert.ok(!assembly.sources.includes('openspec/changes/README.md'));
    });

    it('lets the index alone select nothing, so the next format in the order is read', async () => {
      const { patchset, read } = await branch(['kiro'], (repo) => repo.write('openspec/changes/README.md', '# Changes\n'));
      const assembly = await assembleDesignBoard(patchset, read);
      assert.equal(assembly.kind === 'board' ? assembly.format : assembly.kind, 'kiro');
    });

    it('answers none for a branch with no specification, a docs-only branch included', async () => {
      const { patchset, read } = await branch([], (repo) => repo.write('src/app.ts', 'export const app = 2;\n').write('docs/guide.md', '# Guide\n\nHow to run it.\n').write('README.md', '# App\n'));
      assert.deepEqual(await assembleDesignBoard(patchset, read), { kind: 'none' });
    });

    it('does not read docs/prd.md as BMAD outside a BMAD repository', async () => {
      const { patchset, read } = await branch([], (repo) => repo.write('docs/prd.md', '# PRD\n\n## Requirements\n\n- FR1: The system shall work.\n'));
      assert.deepEqual(await assembleDesignBoard(patchset, read), { kind: 'none' });
    });

    it('renders touched current specs when no change directory is touched', async () => {
      const spec = (shall: string) =>
        `# auth Specification\n\n## Purpose\nSign-in for every account.\n\n## Requirements\n\n### Requirement: Sign In\n${shall}\n\n#### Scenario: Good password\n- **WHEN** the password matches\n- **THEN** a session is created\n`;
      const { patchset, read } = await branch(
        [],
        (repo) => repo.write('openspec/specs/auth/spec.md', spec('The system SHALL sign in users with a password and a second factor.')),
        (repo) => repo.write('openspec/specs/auth/spec.md', spec('The system SHALL sign in users with a password.')),
      );
      const assembly = await assembleDesignBoard(patchset, read);
      assert.equal(assembly.kind, 'board', assembly.kind === 'fallback' ? assembly.reason : '');
      if (assembly.kind !== 'board') return;
      assert.equal(assembly.state.document.title, LABELS.openspecSpecsTitle);
      assert.equal(assembly.state.document.intro_markdown, 'Sign-in for every account.');
      const [req] = ofKind(assembly.state, 'requirement');
      assert.equal(req?.shall, 'The system SHALL sign in users with a password and a second factor.');
      assert.equal(req?.spec_delta, undefined);
      assert.equal(stats(assembly.state).Capabilities, '1');
    });

    it('reads Kiro steering documents alone as sections', async () => {
      const { patchset, read } = await branch([], (repo) => repo.write('.kiro/steering/tech.md', '---\ninclusion: always\n---\n\n# Tech\n\nTypeScript on Node 20.\n'));
      const assembly = await assembleDesignBoard(patchset, read);
      assert.equal(assembly.kind, 'board', assembly.kind === 'fallback' ? assembly.reason : '');
      if (assembly.kind !== 'board') return;
      assert.equal(assembly.state.document.title, LABELS.kiroSteeringTitle);
      const [top] = ofKind(assembly.state, 'section');
      assert.equal(top?.title, 'Tech');
      assert.equal(top?.body_markdown, 'TypeScript on Node 20.');
      assert.ok(ofKind(assembly.state, 'prose').some((p) => p.markdown === LABELS.frontMatter));
    });

    it('takes the first of two touched change directories and never merges them', async () => {
      const { patchset, read } = await branch([], (repo) =>
        repo
          .write('openspec/changes/b-second/specs/x/spec.md', SPEC('Second', 'The system SHALL do the second thing.'))
          .write('openspec/changes/a-first/specs/x/spec.md', SPEC('First', 'The system SHALL do the first thing.')),
      );
      const assembly = await assembleDesignBoard(patchset, read);
      assert.equal(assembly.kind, 'board');
      if (assembly.kind !== 'board') return;
      assert.deepEqual(assembly.sources, ['openspec/changes/a-first/specs/x/spec.md']);
      assert.deepEqual(
        ofKind(assembly.state, 'requirement').map((r) => r.title),
        ['First'],
      );
      assert.equal(assembly.state.document.intro_markdown, LABELS.noProposalWhy);
    });
  });
});
