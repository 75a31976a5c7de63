import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { capturePatchset } from '../../../host/capture/capture';
import { openRepo } from '../../../host/capture/repo';
import { buildCitationIndex } from '../../../host/board/citations';
import {
  SPEC_ARTIFACT_ROOTS,
  citedHunkIds,
  deriveNoiseMembers,
  isSpecOnlyChange,
  proseCitationResolver,
  type CoreLaneOutcomes,
  type LaneOutcome,
  type NoiseMemberInput,
} from '../../../host/board/noise';
import { emptyBoard, type BoardState } from '../../../host/board/state';
import { BoardElement } from '../../../protocol/board';
import type { CaptureOptions, FileChange, Patchset } from '../../../protocol/patchset';
import { Patchset as PatchsetSchema } from '../../../protocol/patchset';
import { TestRepo } from '../../fixtures/gitRepo';

const lines = (n: number, prefix = 'line') => Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}`).join('\n') + '\n';

const absent: LaneOutcome = { kind: 'absent', absence: 'no-findings' };
const settled = (...ids: string[]): LaneOutcome => ({ kind: 'settled', citedHunkIds: new Set(ids) });
const failed = (retryable: boolean | null): LaneOutcome => ({ kind: 'failed', retryable });

function lanes(overrides: Partial<CoreLaneOutcomes> = {}): CoreLaneOutcomes {
  return { design: absent, sequence: absent, decisions: absent, flagged: absent, ...overrides };
}

function members(patchset: Patchset, outcomes: CoreLaneOutcomes = lanes()): NoiseMemberInput[] {
  const result = deriveNoiseMembers(patchset, outcomes);
  assert.equal(result.kind, 'members', JSON.stringify(result));
  return result.kind === 'members' ? result.members : [];
}

function file(patchset: Patchset, path: string): FileChange {
  const found = patchset.files.find((f) => f.path === path);
  assert.ok(found, `${path} not in [${patchset.files.map((f) => f.path).join(', ')}]`);
  return found;
}

function citedAt(patchset: Patchset, path: string, side: 'base' | 'head', start: number, end = start): string[] {
  const resolved = buildCitationIndex(patchset).resolve(path, side, start, end);
  assert.ok(resolved.ok, resolved.ok ? '' : resolved.message);
  return [...resolved.hunkIds];
}

describe('noise: deriveNoiseMembers over real captured patchsets', function () {
  this.timeout(60_000);
  const repos: TestRepo[] = [];
  after(() => repos.forEach((r) => r.cleanup()));

  async function captureChange(setup: (r: TestRepo) => void, change: (r: TestRepo) => void, options?: Partial<CaptureOptions>): Promise<Patchset> {
    const repo = new TestRepo();
    repos.push(repo);
    setup(repo);
    repo.commit('base');
    repo.branch('feature');
    change(repo);
    repo.commit('change');
    const handle = await openRepo(repo.dir);
    assert.ok(handle.ok);
    const result = await capturePatchset(handle.value, { kind: 'branch', head: 'feature', base: 'main' }, options);
    assert.ok(result.ok, result.ok ? '' : result.error.message);
    return PatchsetSchema.parse(result.value);
  }

  it('files each uncited hunk of a modification once, on its head-side region', async () => {
    const ps = await captureChange(
      (r) => r.write('src/app.ts', lines(40)),
      (r) => r.write('src/app.ts', lines(40).replace('line 10\n', 'line ten\n').replace('line 30\n', 'line 30\nline 30b\n')),
    );
    const f = file(ps, 'src/app.ts');
    assert.equal(f.hunks.length, 2);
    const [first, second] = f.hunks as [FileChange['hunks'][0], FileChange['hunks'][0]];
    const head = (id: string) => f.regions.find((r) => r.hunkId === id && r.side === 'head')!;

    assert.deepEqual(members(ps), [
      { path: 'src/app.ts', side: 'head', start_line: head(first.id).startLine, end_line: head(first.id).endLine, hunk_id: first.id },
      { path: 'src/app.ts', side: 'head', start_line: head(second.id).startLine, end_line: head(second.id).endLine, hunk_id: second.id },
    ]);
    // A head-side citation of the first hunk cancels it; the other stays, filed once.
    const cited = citedAt(ps, 'src/app.ts', 'head', 10);
    assert.deepEqual(cited, [first.id]);
    assert.deepEqual(
      members(ps, lanes({ sequence: settled(...cited) })).map((m) => m.hunk_id),
      [second.id],
    );
  });

  it('a citation of the base side cancels the whole hunk (the hunk is the unit, not the side)', async () => {
    const ps = await captureChange(
      (r) => r.write('src/app.ts', lines(40)),
      (r) => r.write('src/app.ts', lines(40).replace('line 10\n', 'line ten\n').replace('line 30\n', 'line thirty\n')),
    );
    const f = file(ps, 'src/app.ts');
    const [first, second] = f.hunks as [FileChange['hunks'][0], FileChange['hunks'][0]];
    const baseCited = citedAt(ps, 'src/app.ts', 'base', 10);
    assert.deepEqual(baseCited, [first.id]);
    const left = members(ps, lanes({ flagged: settled(...baseCited) }));
    assert.deepEqual(
      left.map((m) => [m.hunk_id, m.side]),
      [[second.id, 'head']],
      'no base-side remainder of the cited hunk',
    );
    // Base side of one hunk in one lane, head side of the other in another: the complement is empty.
    const headCited = citedAt(ps, 'src/app.ts', 'head', 30);
    assert.deepEqual(deriveNoiseMembers(ps, lanes({ design: settled(...baseCited), decisions: settled(...headCited) })), { kind: 'no-noise' });
  });

  it('files a pure deletion on its base side: a deleted file, and a -U0 deletion inside a file', async () => {
    const ps = await captureChange(
      (r) => r.write('gone.ts', lines(5)).write('kept.ts', lines(20)),
      (r) => r.remove('gone.ts').write('kept.ts', lines(20).replace('line 8\nline 9\n', '')),
      { contextLines: 0 },
    );
    const gone = file(ps, 'gone.ts');
    const kept = file(ps, 'kept.ts');
    assert.equal(gone.status, 'deleted');
    assert.deepEqual(members(ps), [
      { path: 'gone.ts', side: 'base', start_line: 1, end_line: 5, hunk_id: gone.hunks[0]!.id },
      { path: 'kept.ts', side: 'base', start_line: 8, end_line: 9, hunk_id: kept.hunks[0]!.id },
    ]);
  });

  it('files a pure addition on its head side', async () => {
    const ps = await captureChange(
      (r) => r.write('README.md', 'hello\n'),
      (r) => r.write('src/new.ts', lines(7)),
    );
    const added = file(ps, 'src/new.ts');
    assert.equal(added.status, 'added');
    assert.deepEqual(members(ps), [{ path: 'src/new.ts', side: 'head', start_line: 1, end_line: 7, hunk_id: added.hunks[0]!.id }]);
  });

  it('files a renamed and edited file once, under its current path; a citation by the old name cancels it', async () => {
    const ps = await captureChange(
      (r) => r.write('src/old-name.ts', lines(30)),
      (r) => {
        r.git('mv', 'src/old-name.ts', 'src/new-name.ts');
        r.write('src/new-name.ts', lines(30).replace('line 15\n', 'line fifteen\n'));
      },
    );
    const renamed = file(ps, 'src/new-name.ts');
    assert.equal(renamed.status, 'renamed');
    assert.equal(renamed.oldPath, 'src/old-name.ts');
    assert.equal(renamed.hunks.length, 1);
    const found = members(ps);
    assert.equal(found.length, 1, 'one change, one member');
    assert.equal(found[0]!.path, 'src/new-name.ts');
    assert.equal(found[0]!.side, 'head');
    assert.ok(!found.some((m) => m.path === 'src/old-name.ts'));
    const byOldName = citedAt(ps, 'src/old-name.ts', 'base', 15);
    assert.deepEqual(deriveNoiseMembers(ps, lanes({ design: settled(...byOldName) })), { kind: 'no-noise' });
  });

  it('binary, mode-only and submodule changes have no hunks and so no members', async () => {
    const ps = await captureChange(
      (r) => {
        r.write('img.bin', Buffer.from([0, 1, 2, 3, 0, 255]));
        r.write('run.sh', '#!/bin/sh\necho hi\n');
        r.write('src/a.ts', lines(10));
      },
      (r) => {
        r.write('img.bin', Buffer.from([0, 9, 9, 9, 0, 254]));
        r.chmod('run.sh', 0o755);
        // An unpopulated submodule: a gitlink in the index and an empty directory in the work tree.
        mkdirSync(join(r.dir, 'vendor', 'lib'), { recursive: true });
        r.git('update-index', '--add', '--cacheinfo', `160000,${'1'.repeat(40)},vendor/lib`);
        r.write('src/a.ts', lines(10).replace('line 5', 'five'));
      },
    );
    assert.equal(file(ps, 'img.bin').binary, true);
    assert.equal(file(ps, 'run.sh').modeChanged, true);
    assert.equal(file(ps, 'run.sh').hunks.length, 0);
    assert.equal(file(ps, 'vendor/lib').submodule, true);
    assert.deepEqual(
      members(ps).map((m) => m.path),
      ['src/a.ts'],
    );
    // With the only text hunk cited, nothing is left: binary/mode/submodule files are never noise.
    const cited = file(ps, 'src/a.ts').hunks.map((h) => h.id);
    assert.deepEqual(deriveNoiseMembers(ps, lanes({ design: settled(...cited) })), { kind: 'no-noise' });
  });

  it('a truncated file contributes only its captured hunks; the uncaptured tail is never a member', async () => {
    const before = lines(2000);
    const after = before.replace(/line (\d*0)\n/g, 'LINE $1\n');
    const ps = await captureChange(
      (r) => r.write('many.txt', before).write('big.log', lines(6000)),
      (r) => r.write('many.txt', after).write('big.log', lines(6000).replace('line 1500\n', 'changed\n')),
      { maxPatchBytesPerFile: 2048, maxFileBytes: 32768 },
    );
    const many = file(ps, 'many.txt');
    const big = file(ps, 'big.log');
    assert.equal(many.truncation?.reason, 'patch-size');
    assert.equal(big.truncation?.reason, 'file-size');
    assert.equal(big.hunks.length, 0);
    const found = members(ps);
    assert.deepEqual(
      found.map((m) => m.hunk_id),
      many.hunks.map((h) => h.id),
      'exactly the captured hunks',
    );
    const tail = many.truncation?.tailFrom.head ?? 0;
    assert.ok(
      found.every((m) => m.path === 'many.txt' && m.end_line < tail),
      'no member reaches into the uncaptured tail',
    );
  });
});

describe('noise: what the four lanes said (settled, absent and failed are three cases)', function () {
  this.timeout(60_000);
  let ps: Patchset;
  let ids: string[];
  let repo: TestRepo;

  before(async () => {
    repo = new TestRepo();
    repo.write('a.ts', lines(60)).write('b.ts', lines(10));
    repo.commit('base');
    repo.branch('feature');
    repo.write('a.ts', lines(60).replace('line 5\n', 'five\n').replace('line 40\n', 'forty\n')).write('b.ts', lines(10).replace('line 2', 'two'));
    repo.commit('change');
    const handle = await openRepo(repo.dir);
    assert.ok(handle.ok);
    const result = await capturePatchset(handle.value, { kind: 'branch', head: 'feature', base: 'main' });
    assert.ok(result.ok);
    ps = result.value;
    ids = ps.files.flatMap((f) => f.hunks.map((h) => h.id));
    assert.equal(ids.length, 3);
  });
  after(() => repo.cleanup());

  it('a settled lane subtracts its citations; the lanes union', () => {
    const [a1, a2, b1] = ids as [string, string, string];
    assert.deepEqual(
      members(ps, lanes({ design: settled(a1), flagged: settled(b1) })).map((m) => m.hunk_id),
      [a2],
    );
  });

  it('an absence subtracts nothing: it is an empty citation set', () => {
    const everyHunk = members(ps, lanes());
    assert.deepEqual(
      everyHunk.map((m) => m.hunk_id),
      ids,
    );
    assert.deepEqual(members(ps, lanes({ design: settled() })), everyHunk, 'an absence equals a settled board citing nothing');
  });

  it('an empty complement settles no-noise', () => {
    const [a1, a2, b1] = ids as [string, string, string];
    assert.deepEqual(deriveNoiseMembers(ps, lanes({ design: settled(a1, a2), sequence: settled(b1) })), { kind: 'no-noise' });
  });

  it('any failed lane makes Noise a typed failure naming the failed lanes, even when the rest cite everything', () => {
    assert.deepEqual(deriveNoiseMembers(ps, lanes({ design: settled(...ids), flagged: failed(true) })), {
      kind: 'failed',
      lanes: ['flagged'],
      retryable: true,
    });
  });

  const accounting: Array<[string, Partial<CoreLaneOutcomes>, string[], boolean]> = [
    ['one retryable lane → retryable', { sequence: failed(true) }, ['sequence'], true],
    ['one terminal lane → terminal', { sequence: failed(false) }, ['sequence'], false],
    ['no account (unknown ladder) → retryable', { decisions: failed(null) }, ['decisions'], true],
    ['every named lane terminal → terminal', { design: failed(false), flagged: failed(false) }, ['design', 'flagged'], false],
    ['terminal + retryable → retryable', { design: failed(false), decisions: failed(true) }, ['design', 'decisions'], true],
    ['terminal + unknown → retryable', { flagged: failed(false), sequence: failed(null) }, ['sequence', 'flagged'], true],
    [
      'all four failed, named in canonical order',
      { flagged: failed(false), decisions: failed(false), sequence: failed(false), design: failed(false) },
      ['design', 'sequence', 'decisions', 'flagged'],
      false,
    ],
  ];
  for (const [name, overrides, named, retryable] of accounting) {
    it(`failure accounting: ${name}`, () => {
      assert.deepEqual(deriveNoiseMembers(ps, lanes(overrides)), { kind: 'failed', lanes: named, retryable });
    });
  }

  it('citedHunkIds collects code_ref hunk ids and the hunks prose cites (the real prose resolver)', () => {
    const index = buildCitationIndex(ps);
    const aHead = index.resolve('a.ts', 'head', 40, 40);
    assert.ok(aHead.ok);
    const board = boardWith('flagged', [
      { id: 'e1', kind: 'section', parent: null, title: 'Risks', body_markdown: 'See b.ts:2 for the rename.' },
      { id: 'e2', kind: 'code_ref', parent: 'e1', path: 'a.ts', side: 'head', start_line: 5, end_line: 5, patchset_id: ps.id, hunk_ids: [ids[0]] },
      { id: 'e3', kind: 'prose', parent: 'e1', markdown: 'Also `a.ts:40` in code is not a citation, but a.ts:40 is.' },
    ]);
    assert.deepEqual([...citedHunkIds(board, proseCitationResolver(index))].sort(), [ids[0], ...aHead.hunkIds, ids[2]].sort());
    // Without a prose resolver only the code_refs count.
    assert.deepEqual([...citedHunkIds(board)], [ids[0]]);
  });

  it('citedHunkIds reads every Markdown field (and the intro) through an injected resolver', () => {
    const seen: string[] = [];
    const board = boardWith('flagged', [
      { id: 'e1', kind: 'section', parent: null, title: 'S' },
      {
        id: 'e2',
        kind: 'finding',
        parent: 'e1',
        severity: 'minor',
        category: 'correctness',
        title: 'T',
        body_markdown: 'body',
        remedy_markdown: 'remedy',
        part_titles: ['p'],
        part_bodies: ['part'],
        anchor: [],
        status: 'open',
        concurrence: [],
        accord: 'concur',
      },
      { id: 'e3', kind: 'callout', parent: 'e1', tone: 'note', markdown: 'callout' },
    ]);
    const withIntro: BoardState = { ...board, document: { ...board.document, intro_markdown: 'intro' } };
    const cited = citedHunkIds(withIntro, (md) => {
      seen.push(md);
      return [`h-${md}`];
    });
    assert.deepEqual(seen.sort(), ['body', 'callout', 'intro', 'part', 'remedy'].sort());
    assert.deepEqual([...cited].sort(), ['h-body', 'h-callout', 'h-intro', 'h-part', 'h-remedy'].sort());
  });
});

function boardWith(lens: 'flagged' | 'design', elements: Array<Record<string, unknown>>): BoardState {
  const board = emptyBoard(lens, 'ps-test');
  const map = new Map<string, BoardElement>();
  elements.forEach((e, i) => map.set(String(e.id), BoardElement.parse({ author: 'test', seq: i, ...(e.kind === 'section' ? { delta: null } : {}), ...e })));
  return { ...board, elements: map, nextId: elements.length + 1 };
}

describe('noise: isSpecOnlyChange', () => {
  const change = (...paths: Array<string | [string, string]>) => ({
    files: paths.map((p) => (Array.isArray(p) ? { path: p[1], oldPath: p[0] } : { path: p, oldPath: null })) as unknown as FileChange[],
  });

  const table: Array<[string, ReturnType<typeof change>, boolean]> = [
    ['an OpenSpec change', change('openspec/changes/add-x/proposal.md', 'openspec/changes/add-x/tasks.md'), true],
    ['the OpenSpec index beside a change', change('openspec/changes/README.md', 'openspec/changes/add-x/proposal.md'), true],
    ['Kiro specs', change('.kiro/specs/feature/requirements.md'), true],
    ['BMAD', change('.bmad/prd.md', '.bmad-core/agents/pm.md'), true],
    ['BMAD stories', change('docs/stories/1.2.upload-retries.md'), true],
    ['BMAD v6 output', change('_bmad-output/implementation-artifacts/1-2-upload-retries.md', '_bmad-output/planning-artifacts/prd.md'), true],
    ['docs/plans alone is docs, not a specification root', change('docs/plans/2026-01-01-x-design.md'), false],
    ['superpowers plans', change('docs/superpowers/plans/x.md', '.superpowers/notes.md'), true],
    ['an ADR under docs/adr', change('docs/adr/0001-use-sqlite.md'), true],
    ['an ADR under a nested docs/decisions', change('services/api/docs/decisions/2024-01-01-retry.md'), true],
    ['CONTEXT files in any directory', change('CONTEXT.md', 'packages/core/CONTEXT-MAP.md'), true],
    ['a rename inside openspec', change(['openspec/changes/a/design.md', 'openspec/changes/b/design.md']), true],
    ['a rename OUT of openspec is a code change', change(['openspec/specs/x.md', 'src/x.md']), false],
    ['a rename INTO openspec from code is a code change', change(['src/x.md', 'openspec/specs/x.md']), false],
    ['README-only is not spec-only', change('README.md'), false],
    ['docs-only is not spec-only', change('docs/guide.md', 'docs/api/index.md'), false],
    ['a non-Markdown file under docs/adr is not an ADR', change('docs/adr/diagram.png'), false],
    ['a spec plus one code file', change('openspec/changes/a/proposal.md', 'src/index.ts'), false],
    ['openspec is anchored at the root', change('src/openspec/notes.md'), false],
    ['a file named like a root is not under it', change('openspec.md'), false],
    ['an empty file list', change(), false],
  ];
  for (const [name, patchset, expected] of table) {
    it(`${expected ? 'spec-only' : 'not spec-only'}: ${name}`, () => {
      assert.equal(isSpecOnlyChange(patchset), expected);
    });
  }

  it('keeps the roots in one named table', () => {
    assert.deepEqual(
      SPEC_ARTIFACT_ROOTS.map((r) => r.pattern),
      [
        'openspec/**',
        '.kiro/**',
        '.bmad/**',
        '.bmad-core/**',
        'docs/stories/**',
        '_bmad-output/**',
        'docs/superpowers/**',
        '.superpowers/**',
        '**/docs/adr/**/*.md',
        '**/docs/decisions/**/*.md',
        '**/CONTEXT.md',
        '**/CONTEXT-MAP.md',
      ],
    );
  });
});
