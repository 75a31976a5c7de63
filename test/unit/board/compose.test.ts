import assert from 'node:assert/strict';
import { composeRound, lensDelta, roundChapterTitle, type RoundComposeInput } from '../../../host/board/compose';
import { emptyBoard, type BoardState } from '../../../host/board/state';
import { BoardElement, LensBoardView, type Lens } from '../../../protocol/board';
import { readBoard } from '../../../host/board/read';

/** A finished board; ids e1, e2, … follow the list unless given; host fields defaulted. */
function board(lens: Lens, elements: Array<Record<string, unknown>>, patch: Partial<BoardState> = {}): BoardState {
  const map = new Map<string, BoardElement>();
  elements.forEach((e, i) => {
    const id = String(e.id ?? `e${i + 1}`);
    const defaults: Record<string, unknown> = { id, parent: null, author: 'claude', seq: i + 1 };
    if (e.kind === 'section') defaults.delta = null;
    if (e.kind === 'finding') Object.assign(defaults, { severity: 'major', category: 'correctness', body_markdown: 'What breaks.', remedy_markdown: 'The fix.', anchor: [], status: 'open', concurrence: [], accord: 'split' });
    if (e.kind === 'code_ref') Object.assign(defaults, { side: 'head', start_line: 1, end_line: 2, patchset_id: 'ps-2', hunk_ids: ['h-1'] });
    map.set(id, BoardElement.parse({ ...defaults, ...e }));
  });
  const doc = { title: 'Board', intro_markdown: 'Intro.', measure: 'reading' as const, prose_register: 'authored' as const };
  return { ...emptyBoard(lens, 'ps-2'), document: doc, elements: map, nextId: elements.length + 1, status: 'finished', lastFinish: [], revision: 7, ...patch };
}

const input = (prior: BoardState | null, patch: Partial<RoundComposeInput> = {}): RoundComposeInput => ({
  ordinal: 2,
  prior,
  addressed: [],
  dispositions: [],
  resolveHunks: () => ['h-9'],
  ...patch,
});

const deltas = (b: BoardState) => Object.fromEntries([...b.elements.values()].filter((e) => e.kind === 'section').map((e) => [(e as { title: string }).title, (e as { delta: unknown }).delta]));

describe('composeRound: section stamps (the one signal)', () => {
  const prior = board('decisions', [
    { id: 's1', kind: 'section', title: 'Storage' },
    { kind: 'prose', parent: 's1', markdown: 'Rows are kept for a day.' },
    { id: 's3', kind: 'section', title: 'Retries' },
    { kind: 'prose', parent: 's3', markdown: 'Three attempts.' },
    { id: 's5', kind: 'section', title: 'Logging' },
    { kind: 'prose', parent: 's5', markdown: 'Errors only.' },
  ]);

  it('an unchanged subtree is carried (no stamp); ids, authors and patchset stamps do not count as change', () => {
    const drafted = board('decisions', [
      { id: 'e10', kind: 'section', title: 'Storage', author: 'codex' },
      { id: 'e11', kind: 'prose', parent: 'e10', markdown: 'Rows are kept for a day.' },
      { id: 'e12', kind: 'section', title: 'Retries' },
      { id: 'e13', kind: 'prose', parent: 'e12', markdown: 'Three attempts.' },
      { id: 'e14', kind: 'section', title: 'Logging' },
      { id: 'e15', kind: 'prose', parent: 'e14', markdown: 'Errors only.' },
    ]);
    const c = composeRound(drafted, input(prior));
    assert.deepEqual(deltas(c.board), { Storage: null, Retries: null, Logging: null });
    assert.equal(c.delta.verdict, 'carrying-forward');
    assert.equal(c.board, drafted, 'nothing to write: the same board comes back');
  });

  it('new, reworked and removed sections are told apart, and removals alone make the lens reworked', () => {
    const drafted = board('decisions', [
      { kind: 'section', title: 'Storage' },
      { kind: 'prose', parent: 'e1', markdown: 'Rows are kept for a week.' },
      { kind: 'section', title: 'Retries' },
      { kind: 'prose', parent: 'e3', markdown: 'Three attempts.' },
      { kind: 'section', title: 'Caching' },
    ]);
    const c = composeRound(drafted, input(prior));
    assert.deepEqual(deltas(c.board), { Storage: 'reworked', Retries: null, Caching: 'new' });
    assert.deepEqual(c.delta.removed, ['Logging']);
    assert.equal(c.delta.verdict, 'reworked');
    assert.equal(c.board.revision, drafted.revision + 1);

    const onlyRemoved = board('decisions', [
      { kind: 'section', title: 'Storage' },
      { kind: 'prose', parent: 'e1', markdown: 'Rows are kept for a day.' },
      { kind: 'section', title: 'Retries' },
      { kind: 'prose', parent: 'e3', markdown: 'Three attempts.' },
    ]);
    const removal = composeRound(onlyRemoved, input(prior));
    assert.deepEqual(deltas(removal.board), { Storage: null, Retries: null });
    assert.equal(removal.delta.verdict, 'reworked', 'a round that only deleted sections is never carrying forward');
  });

  it('a change deep in a subtree reworks every section above it; a moved code citation is a change', () => {
    const before = board('sequence', [
      { kind: 'section', title: 'Flow' },
      { kind: 'section', parent: 'e1', title: 'Parse' },
      { kind: 'code_ref', parent: 'e2', path: 'src/a.ts', start_line: 3, end_line: 4 },
      { kind: 'order_step', parent: 'e2', title: 'Read', explanation_markdown: 'Reads.', span: 'e3' },
    ]);
    const after = board('sequence', [
      { kind: 'section', title: 'Flow' },
      { kind: 'section', parent: 'e1', title: 'Parse' },
      { kind: 'code_ref', parent: 'e2', path: 'src/a.ts', start_line: 5, end_line: 6 },
      { kind: 'order_step', parent: 'e2', title: 'Read', explanation_markdown: 'Reads.', span: 'e3' },
    ]);
    assert.deepEqual(deltas(composeRound(after, input(before)).board), { Flow: 'reworked', Parse: 'reworked' });
  });

  it('the document and loose elements count: a new intro reads reworked with every section carried', () => {
    const drafted = board('decisions', [...prior.elements.values()].map((e) => ({ ...e })), { document: { ...prior.document, intro_markdown: 'Another intro.' } });
    const c = composeRound(drafted, input(prior));
    assert.deepEqual(deltas(c.board), { Storage: null, Retries: null, Logging: null });
    assert.equal(c.delta.verdict, 'reworked');
  });

  it('with no predecessor board every section is new', () => {
    const c = composeRound(board('decisions', [{ kind: 'section', title: 'Only' }]), input(null));
    assert.deepEqual(deltas(c.board), { Only: 'new' });
    assert.equal(c.delta.verdict, 'reworked');
  });

  it('is idempotent, and lensDelta reads the same verdict back from the stored board', () => {
    const drafted = board('decisions', [
      { kind: 'section', title: 'Storage' },
      { kind: 'prose', parent: 'e1', markdown: 'Changed.' },
    ]);
    const once = composeRound(drafted, input(prior));
    const twice = composeRound(once.board, input(prior));
    assert.equal(twice.board, once.board);
    assert.deepEqual(lensDelta(once.board, prior), once.delta);
    // The stamps reach the reader's view.
    const view = LensBoardView.parse(readBoard(once.board));
    assert.ok(view);
  });

  it('an absent lane settled the same way both times carries forward; a new absence reworks', () => {
    const absent = (absence: 'no-decisions') => ({ ...board('decisions', []), status: 'absent' as const, absence });
    assert.equal(composeRound(absent('no-decisions'), input(absent('no-decisions'))).delta.verdict, 'carrying-forward');
    assert.equal(composeRound(absent('no-decisions'), input(prior)).delta.verdict, 'reworked');
  });
});

describe('composeRound: finding lifecycle (Flagged)', () => {
  const prior = board('flagged', [
    { kind: 'section', title: 'Defects' },
    { kind: 'code_ref', parent: 'e1', path: 'src/a.ts' },
    { kind: 'finding', parent: 'e1', title: 'Missing await on save', anchor: ['e2'] },
    { kind: 'finding', parent: 'e1', title: 'Leaked handle', category: 'reliability', anchor: [] },
    { kind: 'finding', parent: 'e1', title: 'Typo in log', category: 'maintainability', anchor: [] },
  ]);
  const successor = () =>
    board('flagged', [
      { kind: 'section', title: 'Defects' },
      { kind: 'code_ref', parent: 'e1', path: 'src/a.ts' },
      { kind: 'finding', parent: 'e1', title: 'Missing await on save.', anchor: ['e2'] },
      { kind: 'prose', parent: 'e3', markdown: 'Details.' },
      { kind: 'finding', parent: 'e1', title: 'leaked  handle', category: 'reliability', anchor: [] },
      { kind: 'finding', parent: 'e1', title: 'Typo in log', category: 'maintainability', anchor: [] },
      { kind: 'finding', parent: 'e1', title: 'Typo in log', category: 'maintainability', anchor: [] },
    ]);

  it('an addressed ask on a finding drops its unique match, with its subtree and the code it alone cited', () => {
    const c = composeRound(successor(), input(prior, { dispositions: [{ findingId: 'e3', disposition: 'addressed' }] }));
    assert.deepEqual(c.findings, [{ prior: 'e3', disposition: 'addressed', result: 'dropped', successor: 'e3', candidates: ['e3'] }]);
    assert.ok(!c.board.elements.has('e3') && !c.board.elements.has('e4'), 'the finding and its prose are gone');
    assert.ok(!c.board.elements.has('e2'), 'the code_ref only it cited is gone');
    assert.ok(c.board.elements.has('e5'));
    // The board says why it left: addressed, not lost.
    const notes = [...c.board.elements.values()].filter((e) => e.kind === 'callout' && e.author === 'host').map((e) => (e as { markdown: string }).markdown);
    assert.deepEqual(notes, ['Round 2: addressed as asked, so no longer listed here — “Missing await on save”.']);
    assert.equal(composeRound(c.board, input(prior, { dispositions: [{ findingId: 'e3', disposition: 'addressed' }] })).board, c.board, 'composing again changes nothing');
  });

  it('a dismissal is reported for cloning onto its unique match, which stays on the board', () => {
    const c = composeRound(successor(), input(prior, { dispositions: [{ findingId: 'e4', disposition: 'dismissed' }] }));
    assert.deepEqual(c.findings, [{ prior: 'e4', disposition: 'dismissed', result: 'dismissed', successor: 'e5', candidates: ['e5'] }]);
    assert.ok(c.board.elements.has('e5'));
  });

  it('an ambiguous match detaches: nothing is hidden and a host callout says so', () => {
    const c = composeRound(successor(), input(prior, { dispositions: [{ findingId: 'e5', disposition: 'addressed' }] }));
    assert.equal(c.findings[0]?.result, 'detached');
    assert.deepEqual(c.findings[0]?.candidates, ['e6', 'e7']);
    assert.ok(c.board.elements.has('e6') && c.board.elements.has('e7'));
    const callouts = [...c.board.elements.values()].filter((e) => e.kind === 'callout' && e.author === 'host');
    assert.equal(callouts.length, 1);
    assert.match((callouts[0] as { markdown: string }).markdown, /^Round 2: an earlier disposition of “Typo in log” matches more than one finding here/);
    // Composing again adds no second callout.
    const again = composeRound(c.board, input(prior, { dispositions: [{ findingId: 'e5', disposition: 'addressed' }] }));
    assert.equal([...again.board.elements.values()].filter((e) => e.kind === 'callout').length, 1);
  });

  it('a finding nobody re-raised is unmatched, and an id the predecessor lacks is unknown; neither changes the board', () => {
    const drafted = successor();
    const c = composeRound(
      drafted,
      input(board('flagged', [{ kind: 'section', title: 'Defects' }, { kind: 'finding', parent: 'e1', title: 'Gone now', anchor: [] }]), {
        dispositions: [
          { findingId: 'e2', disposition: 'addressed' },
          { findingId: 'e99', disposition: 'dismissed' },
        ],
      }),
    );
    assert.deepEqual(
      c.findings.map((f) => f.result),
      ['unmatched', 'unknown'],
    );
    assert.deepEqual([...c.board.elements.keys()], [...drafted.elements.keys()]);
  });
});

describe('composeRound: Sequence chapters', () => {
  const addressed = [
    { askId: 'ask-1', text: 'Await the save.', evidence: [{ path: 'src/a.ts', side: 'head' as const, line: 4 }] },
    { askId: 'ask-2', text: 'Close the handle.', evidence: [{ path: 'src/b.ts', side: 'base' as const, line: 9 }, { path: 'src/gone.ts', side: 'head' as const, line: 1 }] },
  ];
  const resolveHunks = (path: string) => (path === 'src/gone.ts' ? null : [`h-${path}`]);

  it('appends "Round N · Addressed" from the addressed asks, citing the lines they rest on', () => {
    const drafted = board('sequence', [{ kind: 'section', title: 'Walk' }]);
    const c = composeRound(drafted, input(null, { ordinal: 1, addressed, resolveHunks }));
    const els = [...c.board.elements.values()];
    const chapter = els.find((e) => e.kind === 'section' && e.title === roundChapterTitle(1));
    assert.ok(chapter && chapter.author === 'host' && chapter.parent === null);
    const outcomes = els.filter((e) => e.kind === 'round_outcome');
    assert.deepEqual(
      outcomes.map((o) => [o.ask_id, o.note, o.evidence?.length]),
      [
        ['ask-1', 'Await the save.', 1],
        ['ask-2', 'Close the handle.', 1],
      ],
    );
    const ref = c.board.elements.get((outcomes[1] as { evidence: string[] }).evidence[0] as string);
    assert.deepEqual(ref && ref.kind === 'code_ref' ? [ref.path, ref.side, ref.start_line, ref.hunk_ids, ref.patchset_id] : null, ['src/b.ts', 'base', 9, ['h-src/b.ts'], 'ps-2']);
    assert.equal(c.board.nextId, drafted.nextId + 5);
    assert.doesNotThrow(() => LensBoardView.parse(readBoard(c.board)));
  });

  it('carries earlier chapters (carried stamp) and adds the new one (new stamp); again is a no-op', () => {
    const first = composeRound(board('sequence', [{ kind: 'section', title: 'Walk' }]), input(null, { ordinal: 1, addressed, resolveHunks })).board;
    const second = composeRound(board('sequence', [{ kind: 'section', title: 'Walk' }]), input(first, { ordinal: 2, addressed: [addressed[0] as (typeof addressed)[0]], resolveHunks }));
    assert.deepEqual(deltas(second.board), { Walk: null, [roundChapterTitle(1)]: null, [roundChapterTitle(2)]: 'new' });
    const titles = [...second.board.elements.values()].filter((e) => e.kind === 'section').map((e) => (e as { title: string }).title);
    assert.deepEqual(titles, ['Walk', roundChapterTitle(1), roundChapterTitle(2)]);
    // Round 1's code cards cite round 1's capture: its chapter carries the asks and outcomes without them.
    const chapterOf = (title: string) => [...second.board.elements.values()].find((e) => e.kind === 'section' && e.title === title)?.id;
    const under = (title: string) => [...second.board.elements.values()].filter((e) => e.parent === chapterOf(title));
    assert.deepEqual(under(roundChapterTitle(1)).map((e) => [e.kind, e.kind === 'round_outcome' ? e.evidence : null]), [
      ['round_outcome', []],
      ['round_outcome', []],
    ]);
    assert.deepEqual(under(roundChapterTitle(2)).map((e) => e.kind), ['code_ref', 'round_outcome']);
    const again = composeRound(second.board, input(first, { ordinal: 2, addressed: [addressed[0] as (typeof addressed)[0]], resolveHunks }));
    assert.equal(again.board, second.board);
  });

  it('no addressed ask adds no chapter', () => {
    const drafted = board('sequence', [{ kind: 'section', title: 'Walk' }]);
    assert.equal(composeRound(drafted, input(null, { addressed: [] })).board.elements.size, 1);
  });
});
