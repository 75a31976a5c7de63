import assert from 'node:assert/strict';
import { childIndex, flaggedSectionReachesFinding, readBoard, reachableFindings } from '../../../host/board/read';
import { emptyBoard, type BoardState } from '../../../host/board/state';
import { BoardElement, LensBoardView, type Lens } from '../../../protocol/board';

/** Elements in creation order; ids e1, e2, … follow the list unless given. Host fields defaulted. */
function board(lens: Lens, elements: Array<Record<string, unknown>>, patch: Partial<BoardState> = {}): BoardState {
  const map = new Map<string, BoardElement>();
  elements.forEach((e, i) => {
    const id = String(e.id ?? `e${i + 1}`);
    const defaults: Record<string, unknown> = { id, parent: null, author: 'claude', seq: i + 1 };
    if (e.kind === 'section') defaults.delta = null;
    if (e.kind === 'finding') Object.assign(defaults, finding);
    if (e.kind === 'code_ref') Object.assign(defaults, { side: 'head', start_line: 1, end_line: 2, patchset_id: 'ps-1', hunk_ids: ['h-1'] });
    if (e.kind === 'noise_member') Object.assign(defaults, { path: 'a.ts', side: 'head', start_line: 1, end_line: 1, hunk_id: `h-${id}`, verdict: 'noise', judge: 'deterministic', author: 'host' });
    map.set(id, BoardElement.parse({ ...defaults, ...e }));
  });
  return { ...emptyBoard(lens, 'ps-1'), elements: map, nextId: elements.length + 1, ...patch };
}

const finding = {
  severity: 'major',
  category: 'correctness',
  body_markdown: 'What breaks.',
  remedy_markdown: 'The fix.',
  anchor: [],
  status: 'open',
  concurrence: [],
  accord: 'split',
};

const counts = (view: LensBoardView, sectionId: string) => view.folds.find((f) => f.sectionId === sectionId)?.counts.map((c) => `${c.count} ${c.label}`);

describe('readBoard: fold lines', () => {
  it('counts reader-facing objects among a section’s direct children, never structure', () => {
    const state = board('design', [
      { id: 's1', kind: 'section', title: 'Upload retries' },
      { kind: 'requirement', parent: 's1', title: 'Retry', shall: 'The client SHALL retry.' },
      { kind: 'requirement', parent: 's1', title: 'Back off', shall: 'The client SHALL back off.' },
      { kind: 'decision', parent: 's1', title: 'Exponential', statement: 'Exponential back-off.', rationale: 'Load.', alternatives: [], evidence: [] },
      { kind: 'prose', parent: 's1', markdown: 'Structural prose.' },
      { kind: 'prose', parent: 's1', markdown: 'More prose.' },
      { kind: 'task', parent: 's1', text: 'Write it', done: false },
      { kind: 'stat', parent: 's1', stat_labels: ['files'], stat_values: ['3'] },
      { kind: 'code_ref', parent: 's1', path: 'src/a.ts' },
      { kind: 'code_ref', parent: 's1', path: 'src/a.ts', start_line: 9, end_line: 9 },
      { kind: 'code_ref', parent: 's1', path: 'src/b.ts' },
      { kind: 'callout', parent: 's1', tone: 'question', markdown: 'Why three?' },
      { id: 's2', kind: 'section', parent: 's1', title: 'Nested' },
      { kind: 'requirement', parent: 's2', title: 'Deep', shall: 'Not a direct child.' },
      { kind: 'code_ref', parent: 's2', path: 'src/c.ts' },
    ]);
    const view = readBoard(state);
    assert.deepEqual(
      view.folds.map((f) => f.sectionId),
      ['s1'],
      'one fold line per top-level section',
    );
    assert.deepEqual(counts(view, 's1'), ['1 decision', '2 requirements', '2 files', '1 comment']);
    assert.deepEqual(
      view.folds[0]?.counts.map((c) => c.key),
      ['decisions', 'requirements', 'files', 'comments'],
    );
  });

  it('counts steps and outcomes; a section with nothing countable has no counts', () => {
    const state = board('sequence', [
      { id: 's1', kind: 'section', title: 'Request path' },
      { kind: 'code_ref', parent: 's1', path: 'src/a.ts' },
      { kind: 'order_step', parent: 's1', title: 'Parse', explanation_markdown: 'Parses.', span: 'e2' },
      { kind: 'order_step', parent: 's1', title: 'Route', explanation_markdown: 'Routes.', span: 'e2' },
      { kind: 'round_outcome', parent: 's1', ask_id: 'a1', outcome: 'addressed' },
      { id: 's2', kind: 'section', title: 'Notes', body_markdown: 'Only words.' },
      { kind: 'prose', parent: 's2', markdown: 'Structure.' },
    ]);
    const view = readBoard(state);
    assert.deepEqual(counts(view, 's1'), ['2 steps', '1 outcome', '1 file']);
    assert.deepEqual(counts(view, 's2'), []);
  });

  it('Noise: a section’s groups count the members inside them, labelled changed regions; a top-level group folds too', () => {
    const state = board('noise', [
      { id: 's1', kind: 'section', title: 'Formatting' },
      { id: 'g1', kind: 'noise_group', parent: 's1', title: 'Whitespace', reason: 'Indentation only.' },
      { id: 'g2', kind: 'noise_group', parent: 's1', title: 'Imports', reason: 'Sorted imports.' },
      { kind: 'noise_member', parent: 'g1' },
      { kind: 'noise_member', parent: 'g1' },
      { kind: 'noise_member', parent: 'g2' },
      { kind: 'noise_member', parent: 'g2' },
      { kind: 'noise_member', parent: 'g2' },
      { id: 'g3', kind: 'noise_group', title: 'Lockfile', reason: 'Regenerated lockfile.' },
      { kind: 'noise_member', parent: 'g3' },
      { kind: 'noise_member' },
    ]);
    const view = readBoard(state);
    assert.deepEqual(
      view.folds.map((f) => f.sectionId),
      ['s1', 'g3'],
    );
    assert.deepEqual(counts(view, 's1'), ['5 changed regions']);
    assert.deepEqual(view.folds[0]?.counts[0]?.key, 'groups');
    assert.deepEqual(view.folds[0]?.preview, ['Whitespace', 'Imports']);
    assert.deepEqual(view.folds[1], {
      sectionId: 'g3',
      title: 'Lockfile',
      preview: { text: 'Regenerated lockfile.' },
      counts: [{ key: 'groups', label: 'changed region', count: 1 }],
    });
  });
});

describe('readBoard: the Flagged exception and the orphan-section guard', () => {
  const flagged = () =>
    board('flagged', [
      { id: 's1', kind: 'section', title: 'Correctness' },
      { id: 'c1', kind: 'code_ref', path: 'src/a.ts' },
      { kind: 'finding', parent: 's1', title: 'Direct', anchor: ['c1'] },
      { id: 's2', kind: 'section', parent: 's1', title: 'Edge cases' },
      { kind: 'finding', parent: 's2', title: 'Nested one', anchor: ['c1'] },
      { id: 's3', kind: 'section', parent: 's2', title: 'Deeper' },
      { kind: 'finding', parent: 's3', title: 'Nested two', anchor: ['c1'] },
      { kind: 'code_ref', parent: 's1', path: 'src/b.ts' },
      { kind: 'callout', parent: 's1', tone: 'warning', markdown: 'Careful.' },
      { id: 'o1', kind: 'section', title: 'Orphan', body_markdown: 'Nothing found here.' },
      { kind: 'code_ref', parent: 'o1', path: 'src/c.ts' },
      { kind: 'prose', parent: 'o1', markdown: 'Words.' },
      { id: 'o2', kind: 'section', title: 'Hollow' },
      { id: 'o3', kind: 'section', parent: 'o2', title: 'Empty nested' },
    ]);

  it('counts findings reached through nested sections, never a code_ref as a file, and drops finding-less sections', () => {
    const state = flagged();
    const view = readBoard(state);
    assert.deepEqual(
      view.folds.map((f) => f.sectionId),
      ['s1'],
      'o1 and o2 reach no finding and are dropped',
    );
    assert.deepEqual(counts(view, 's1'), ['3 findings', '1 comment']);
    assert.equal(view.elements.length, state.elements.size, 'the element pool is still whole');
  });

  it('the guard is one exported predicate, the same for any reader', () => {
    const state = flagged();
    const index = childIndex(state.elements);
    assert.deepEqual(
      reachableFindings(state.elements, 's1', index).map((f) => f.id),
      ['e3', 'e5', 'e7'],
    );
    assert.equal(flaggedSectionReachesFinding(state.elements, 's1'), true);
    assert.equal(flaggedSectionReachesFinding(state.elements, 's2'), true);
    assert.equal(flaggedSectionReachesFinding(state.elements, 'o1'), false);
    assert.equal(flaggedSectionReachesFinding(state.elements, 'o2'), false);
  });

  it('the guard applies only on Flagged: the same shape on another lens keeps every section', () => {
    const other = { ...flagged(), lens: 'decisions' as const };
    const view = readBoard(other);
    assert.deepEqual(
      view.folds.map((f) => f.sectionId),
      ['s1', 'o1', 'o2'],
    );
    assert.deepEqual(counts(view, 's1'), ['1 finding', '1 file', '1 comment'], 'elsewhere: direct children only, code refs are files');
    assert.deepEqual(counts(view, 'o1'), ['1 file']);
  });
});

describe('readBoard: previews', () => {
  it('lists titled children’s headings in document order, never the section’s own title', () => {
    const state = board('design', [
      { id: 's1', kind: 'section', title: 'Storage', body_markdown: 'Not used when there are headings.' },
      { kind: 'requirement', parent: 's1', title: 'Durable writes', shall: 'x' },
      { kind: 'prose', parent: 's1', markdown: 'Untitled.' },
      { kind: 'section', parent: 's1', title: 'Storage' },
      { kind: 'decision', parent: 's1', title: 'sql.js', statement: 's', rationale: 'r', alternatives: [], evidence: [] },
    ]);
    assert.deepEqual(readBoard(state).folds[0]?.preview, ['Durable writes', 'sql.js']);
  });

  it('falls back to the body, then the first prose, stored whole; a leading line restating the title is dropped', () => {
    const long = Array.from({ length: 8 }, (_, i) => `Line ${i + 1} of a long opening paragraph.`).join('\n');
    const state = board('sequence', [
      { id: 's1', kind: 'section', title: 'Overview', body_markdown: `## Overview\n${long}` },
      { id: 's2', kind: 'section', title: 'Flow' },
      { kind: 'prose', parent: 's2', markdown: 'First prose.' },
      { kind: 'prose', parent: 's2', markdown: 'Second prose.' },
      { id: 's3', kind: 'section', title: 'Bare' },
      { id: 's4', kind: 'section', title: 'Echo', body_markdown: '**Echo**' },
      { id: 's5', kind: 'section', title: 'Same', body_markdown: 'Own body.' },
      { kind: 'section', parent: 's5', title: 'same' },
    ]);
    const folds = readBoard(state).folds;
    assert.deepEqual(folds.find((f) => f.sectionId === 's1')?.preview, { text: long }, 'the UI clamps to two lines; the text is whole');
    assert.deepEqual(folds.find((f) => f.sectionId === 's2')?.preview, { text: 'First prose.' });
    assert.deepEqual(folds.find((f) => f.sectionId === 's3')?.preview, []);
    assert.deepEqual(folds.find((f) => f.sectionId === 's4')?.preview, [], 'a body that only repeats the title previews nothing');
    assert.deepEqual(folds.find((f) => f.sectionId === 's5')?.preview, { text: 'Own body.' }, 'a child titled like the section is no heading');
    assert.deepEqual(
      folds.map((f) => f.title),
      ['Overview', 'Flow', 'Bare', 'Echo', 'Same'],
    );
  });
});

describe('readBoard: the view', () => {
  it('carries the document, status, absence and revision, and the pool in creation order; it parses as a LensBoardView', () => {
    const state = board(
      'decisions',
      [
        { id: 'e5', kind: 'section', title: 'Later id, first created' },
        { id: 'e2', kind: 'decision', parent: 'e5', title: 'D', statement: 's', rationale: 'r', alternatives: ['a'], evidence: [] },
      ],
      {
        document: { title: 'Calls', intro_markdown: 'Two calls.', measure: 'reading', prose_register: 'authored' },
        status: 'finished',
        revision: 4,
      },
    );
    const view = readBoard(state);
    assert.deepEqual(
      view.elements.map((e) => e.id),
      ['e5', 'e2'],
    );
    assert.deepEqual([view.lens, view.status, view.absence, view.revision], ['decisions', 'finished', null, 4]);
    assert.deepEqual(view.document, state.document);
    assert.deepEqual(LensBoardView.parse(view), view);
  });

  it('an absent board reads with its absence and no folds', () => {
    const view = readBoard({ ...emptyBoard('flagged', 'ps-1'), status: 'absent', absence: 'no-findings', revision: 1 });
    assert.deepEqual([view.status, view.absence, view.folds, view.elements], ['absent', 'no-findings', [], []]);
  });
});
