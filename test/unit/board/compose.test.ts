import assert from 'node:assert/strict';
import fc from 'fast-check';
import { composeRound, lensDelta, roundChapterTitle, type RoundComposeInput } from '../../../host/board/compose';
import { boardEventsFor, boardMetaOf, boardOpenedEvent, replayBoard } from '../../../host/board/persist';
import { emptyBoard, type BoardState } from '../../../host/board/state';
import { BoardElement, LensBoardView, REFERENCE_FIELDS, type Lens } from '../../../protocol/board';
import { readBoard } from '../../../host/board/read';

/** A finished board; ids e1, e2, … follow the list unless given; host fields defaulted. */
function board(lens: Lens, elements: Array<Record<string, unknown>>, patch: Partial<BoardState> = {}): BoardState {
  const map = new Map<string, BoardElement>();
  elements.forEach((e, i) => {
    const id = String(e.id ?? `e${i + 1}`);
    const defaults: Record<string, unknown> = { id, parent: null, author: 'claude', seq: i + 1 };
    if (e.kind === 'section') defaults.delta = null;
    if (e.kind === 'finding')
      Object.assign(defaults, { severity: 'major', category: 'correctness', body_markdown: 'What breaks.', remedy_markdown: 'The fix.', anchor: [], status: 'open', concurrence: [], accord: 'split' });
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

  it("an unchanged subtree is carried (no stamp) in the predecessor's own bytes; ids, authors and patchset stamps do not count as change", () => {
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
    assert.deepEqual([...c.board.elements], [...prior.elements], "every element is the predecessor's, id, author and seq included");
    assert.deepEqual(c.delta.carried, ['s1', 's3', 's5']);
    assert.deepEqual(
      c.renamed,
      new Map([
        ['e10', 's1'],
        ['e11', 'e2'],
        ['e12', 's3'],
        ['e13', 'e4'],
        ['e14', 's5'],
        ['e15', 'e6'],
      ]),
    );
    assert.ok(c.board.nextId > 15, "the draft's ids are never minted again on this board");
    assert.equal(composeRound(c.board, input(prior)).board, c.board, 'nothing more to write: the same board comes back');
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
    const drafted = board(
      'decisions',
      [...prior.elements.values()].map((e) => ({ ...e })),
      { document: { ...prior.document, intro_markdown: 'Another intro.' } },
    );
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

  it('a dismissal is reported for cloning onto its unique match, which stays on the board, under its composed id', () => {
    const c = composeRound(successor(), input(prior, { dispositions: [{ findingId: 'e4', disposition: 'dismissed' }] }));
    // The first "Typo in log" is the predecessor's e5 unchanged, so it is carried onto e5; the
    // changed findings drafted under ids the predecessor used (e3, its prose e4, the re-titled
    // "leaked  handle" e5) are renumbered past both boards' ids.
    assert.deepEqual(c.findings, [{ prior: 'e4', disposition: 'dismissed', result: 'dismissed', successor: 'e10', candidates: ['e10'] }]);
    assert.equal((c.board.elements.get('e10') as { title?: string }).title, 'leaked  handle');
    assert.deepEqual(c.board.elements.get('e5'), prior.elements.get('e5'));
    assert.deepEqual(
      c.renamed,
      new Map([
        ['e3', 'e8'],
        ['e4', 'e9'],
        ['e5', 'e10'],
        ['e6', 'e5'],
      ]),
    );
  });

  it('an ambiguous match detaches: nothing is hidden and a host callout says so', () => {
    const c = composeRound(successor(), input(prior, { dispositions: [{ findingId: 'e5', disposition: 'addressed' }] }));
    assert.equal(c.findings[0]?.result, 'detached');
    // The first candidate is the predecessor's own finding, carried onto its id.
    assert.deepEqual(c.findings[0]?.candidates, ['e5', 'e7']);
    assert.ok(c.board.elements.has('e5') && c.board.elements.has('e7'));
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
      input(
        board('flagged', [
          { kind: 'section', title: 'Defects' },
          { kind: 'finding', parent: 'e1', title: 'Gone now', anchor: [] },
        ]),
        {
          dispositions: [
            { findingId: 'e2', disposition: 'addressed' },
            { findingId: 'e99', disposition: 'dismissed' },
          ],
        },
      ),
    );
    assert.deepEqual(
      c.findings.map((f) => f.result),
      ['unmatched', 'unknown'],
    );
    // Nothing removed, nothing said (ids the predecessor used are renumbered, as always).
    assert.deepEqual(
      [...c.board.elements.values()].map((e) => e.kind),
      [...drafted.elements.values()].map((e) => e.kind),
    );
  });
});

describe('composeRound: Sequence chapters', () => {
  const addressed = [
    { askId: 'ask-1', text: 'Await the save.', evidence: [{ path: 'src/a.ts', side: 'head' as const, line: 4 }] },
    {
      askId: 'ask-2',
      text: 'Close the handle.',
      evidence: [
        { path: 'src/b.ts', side: 'base' as const, line: 9 },
        { path: 'src/gone.ts', side: 'head' as const, line: 1 },
      ],
    },
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
    assert.deepEqual(
      under(roundChapterTitle(1)).map((e) => [e.kind, e.kind === 'round_outcome' ? e.evidence : null]),
      [
        ['round_outcome', []],
        ['round_outcome', []],
      ],
    );
    assert.deepEqual(
      under(roundChapterTitle(2)).map((e) => e.kind),
      ['code_ref', 'round_outcome'],
    );
    const again = composeRound(second.board, input(first, { ordinal: 2, addressed: [addressed[0] as (typeof addressed)[0]], resolveHunks }));
    assert.equal(again.board, second.board);
  });

  it('no addressed ask adds no chapter', () => {
    const drafted = board('sequence', [{ kind: 'section', title: 'Walk' }]);
    assert.equal(composeRound(drafted, input(null, { addressed: [] })).board.elements.size, 1);
  });
});

// ─── Verbatim carry ──────────────────────────────────────────────────────────────────────────

/** The fields that belong to one generation (compose.ts GENERATION_FIELDS): never compared, never carried. */
const GENERATION: Partial<Record<string, readonly string[]>> = { section: ['delta'], code_ref: ['patchset_id', 'hunk_ids'], noise_member: ['hunk_id'] };
const sorted = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1)));

/** What a reader reads of an element's subtree, with no id in it: references rendered as what they name. */
function render(b: BoardState, id: string, seen: ReadonlySet<string> = new Set()): string {
  const el = b.elements.get(id) as unknown as Record<string, unknown> & { kind: string };
  const refs = REFERENCE_FIELDS[el.kind as BoardElement['kind']] ?? {};
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(el)) {
    if (['id', 'parent', 'seq', 'author'].includes(k) || GENERATION[el.kind]?.includes(k)) continue;
    out[k] = k in refs ? (Array.isArray(v) ? (v as string[]) : [v as string]).map((r) => (b.elements.has(r) && !seen.has(r) ? render(b, r, new Set(seen).add(id)) : `missing:${r}`)) : v;
  }
  const kids = [...b.elements.values()].filter((c) => c.parent === id).map((c) => render(b, c.id, new Set(seen).add(id)));
  return JSON.stringify([sorted(out), kids]);
}

/** An element without its generation fields and references: what must be the predecessor's own bytes. */
function ownBytes(el: BoardElement): string {
  const skip = [...(GENERATION[el.kind] ?? []), ...Object.keys(REFERENCE_FIELDS[el.kind] ?? {})];
  return JSON.stringify(Object.fromEntries(Object.entries(el).filter(([k]) => !skip.includes(k))));
}

/** Every parent and reference names an element of the board, of a kind the field admits; every id is its key; positions are unique. */
function assertWellFormed(b: BoardState): void {
  const seqs = new Set<number>();
  for (const [key, el] of b.elements) {
    assert.equal(el.id, key);
    assert.ok(!seqs.has(el.seq), `seq ${el.seq} is used twice`);
    seqs.add(el.seq);
    if (el.parent !== null) assert.ok(b.elements.has(el.parent), `${el.id}: parent ${el.parent} is not on the board`);
    for (const [field, spec] of Object.entries(REFERENCE_FIELDS[el.kind] ?? {})) {
      const value = (el as unknown as Record<string, unknown>)[field];
      for (const ref of value === undefined ? [] : Array.isArray(value) ? (value as string[]) : [value as string]) {
        const target = b.elements.get(ref);
        assert.ok(target && spec.kinds.includes(target.kind), `${el.id}.${field} names ${ref}, which is not a ${spec.kinds.join('/')} on the board`);
      }
    }
    const numbered = /^e(\d+)$/.exec(el.id);
    if (numbered) assert.ok(Number(numbered[1]) < b.nextId, `${el.id} is not below nextId ${b.nextId}`);
  }
}

/** A board replayed from its drafted state and the events of the composition's write. */
function replayed(drafted: BoardState, composed: BoardState): BoardState {
  const events = [
    boardOpenedEvent({ ...drafted, elements: new Map() }),
    ...[...drafted.elements.values()].map((element) => ({ verb: 'element.created', payload: { call: 'add', revision: 1, element } })),
    ...boardEventsFor(drafted, composed, { verb: 'finish' }),
  ];
  return replayBoard(boardMetaOf(composed, { sessionId: 's', generationId: 'g' }, 'now'), events);
}

describe('composeRound: verbatim carry (a carried element is byte-identical across generations)', () => {
  const prior = board(
    'decisions',
    [
      { kind: 'section', title: 'Storage' },
      { kind: 'prose', parent: 'e1', markdown: 'Rows are kept for a day.' },
      { kind: 'code_ref', parent: 'e1', path: 'src/store.ts', start_line: 3, end_line: 4, patchset_id: 'ps-1', hunk_ids: ['h-old'] },
      { kind: 'decision', parent: 'e1', title: 'Keep a day', statement: 'Rows live a day.', rationale: 'Disk is cheap.', alternatives: ['A week.'], evidence: ['e3'] },
      { kind: 'section', title: 'Retries', delta: 'new' },
      { kind: 'prose', parent: 'e5', markdown: 'Three attempts.' },
      { kind: 'decision', parent: 'e5', title: 'Back off', statement: 'Waits double.', rationale: 'Spares the server.', alternatives: ['Fixed waits.'], evidence: ['e3'] },
      { kind: 'prose', parent: 'e5', markdown: 'Jitter is added.' },
    ],
    { patchsetId: 'ps-1' },
  );
  // The re-draft: its own ids (past the predecessor's, as the pipeline mints them), another model, the successor's capture.
  const drafted = () =>
    board(
      'decisions',
      [
        { id: 'e20', kind: 'section', title: 'Storage', author: 'codex' },
        { id: 'e21', kind: 'prose', parent: 'e20', markdown: 'Rows are kept for a day.', author: 'codex' },
        { id: 'e22', kind: 'code_ref', parent: 'e20', path: 'src/store.ts', start_line: 3, end_line: 4, hunk_ids: ['h-new'], author: 'codex' },
        { id: 'e23', kind: 'decision', parent: 'e20', title: 'Keep a day', statement: 'Rows live a day.', rationale: 'Disk is cheap.', alternatives: ['A week.'], evidence: ['e22'], author: 'codex' },
        { id: 'e24', kind: 'section', title: 'Retries', author: 'codex' },
        { id: 'e25', kind: 'prose', parent: 'e24', markdown: 'Five attempts.', author: 'codex' },
        {
          id: 'e26',
          kind: 'decision',
          parent: 'e24',
          title: 'Back off',
          statement: 'Waits double.',
          rationale: 'Spares the server.',
          alternatives: ['Fixed waits.'],
          evidence: ['e22'],
          author: 'codex',
        },
        { id: 'e27', kind: 'prose', parent: 'e24', markdown: 'Jitter is added.', author: 'codex' },
        { id: 'e28', kind: 'section', title: 'Caching', author: 'codex' },
        { id: 'e29', kind: 'prose', parent: 'e28', markdown: 'Nothing is cached.', author: 'codex' },
      ],
      { nextId: 30, repairs: [{ element: 'e26', field: 'evidence', from: 'E22', to: 'e22' }] },
    );

  it("a carried section is the predecessor's subtree, ids included; only the capture's own stamps are the successor's", () => {
    const c = composeRound(drafted(), input(prior));
    assert.deepEqual(deltas(c.board), { Storage: null, Retries: 'reworked', Caching: 'new' });
    for (const id of ['e1', 'e2', 'e4']) assert.deepEqual(c.board.elements.get(id), prior.elements.get(id), `${id} is byte-identical`);
    assert.equal(JSON.stringify(c.board.elements.get('e2')), JSON.stringify(prior.elements.get('e2')), 'key order included');
    // The code card cites the patchset this generation reads: same lines, the successor's capture.
    assert.deepEqual(c.board.elements.get('e3'), { ...prior.elements.get('e3'), patchset_id: 'ps-2', hunk_ids: ['h-new'] });
    assert.deepEqual(c.delta, { verdict: 'reworked', added: ['e28'], reworked: ['e5'], carried: ['e1'], removed: [], envelopeChanged: false });
  });

  it("a reworked section keeps its predecessor's id; what did not change inside it carries, and references across sections still resolve", () => {
    const c = composeRound(drafted(), input(prior));
    const retries = c.board.elements.get('e5');
    assert.ok(retries && retries.kind === 'section');
    assert.deepEqual([retries.title, retries.delta, retries.author], ['Retries', 'reworked', 'codex'], "the section is the re-draft's, under the id it had");
    assert.deepEqual(c.board.elements.get('e7'), prior.elements.get('e7'), 'the unchanged decision, citing the carried code card by its carried id');
    assert.deepEqual(c.board.elements.get('e8'), prior.elements.get('e8'));
    const changed = c.board.elements.get('e25');
    assert.ok(changed && changed.kind === 'prose' && changed.parent === 'e5' && changed.markdown === 'Five attempts.', 'the changed prose keeps its draft id, under the carried parent');
    assert.deepEqual([...c.board.elements.keys()], ['e1', 'e2', 'e3', 'e4', 'e5', 'e25', 'e7', 'e8', 'e28', 'e29'], "the draft's order is kept");
    assert.deepEqual(c.board.repairs, [{ element: 'e7', field: 'evidence', from: 'E22', to: 'e3' }], 'the recorded repair names the composed ids');
    assert.deepEqual(
      c.renamed,
      new Map([
        ['e20', 'e1'],
        ['e21', 'e2'],
        ['e22', 'e3'],
        ['e23', 'e4'],
        ['e24', 'e5'],
        ['e26', 'e7'],
        ['e27', 'e8'],
      ]),
    );
    assertWellFormed(c.board);
    assert.ok(prior.elements.get('e5')?.kind === 'section' && (prior.elements.get('e5') as { delta: unknown }).delta === 'new', 'the predecessor is untouched');
  });

  it('a successor element drafted under a predecessor id is renumbered past both boards, and every reference to it follows', () => {
    const before = board('decisions', [
      { kind: 'section', title: 'Notes' },
      { kind: 'prose', parent: 'e1', markdown: 'Kept.' },
    ]);
    // Numbered from e1 like the Design assembler's board: e1 and e2 collide with the predecessor's.
    const after = board('decisions', [
      { kind: 'section', title: 'Intro' },
      { kind: 'code_ref', parent: 'e1', path: 'src/a.ts' },
      { kind: 'section', title: 'Notes' },
      { kind: 'prose', parent: 'e3', markdown: 'Kept.' },
      { kind: 'decision', parent: 'e1', title: 'Use a', statement: 'a.', rationale: 'b.', alternatives: [], evidence: ['e2'] },
    ]);
    const c = composeRound(after, input(before));
    assertWellFormed(c.board);
    assert.deepEqual(
      c.renamed,
      new Map([
        ['e1', 'e6'],
        ['e2', 'e7'],
        ['e3', 'e1'],
        ['e4', 'e2'],
      ]),
    );
    assert.deepEqual([...c.board.elements.keys()], ['e6', 'e7', 'e1', 'e2', 'e5']);
    assert.deepEqual(c.board.elements.get('e1'), before.elements.get('e1'));
    assert.deepEqual(c.board.elements.get('e2'), before.elements.get('e2'));
    const decision = c.board.elements.get('e5');
    assert.ok(decision && decision.kind === 'decision');
    assert.deepEqual([decision.parent, decision.evidence], ['e6', ['e7']]);
    assert.deepEqual(deltas(c.board), { Intro: 'new', Notes: null });
    assert.equal(c.board.nextId, 8);
    assert.deepEqual(
      [...c.board.elements.values()].map((e) => e.seq),
      [6, 7, 1, 2, 5],
      'positions stay unique: the renumbered ones move past the carried ones',
    );
  });

  it('is idempotent, lensDelta reads the same stamps back, and the write replays to the same board, order included', () => {
    const d = drafted();
    const once = composeRound(d, input(prior));
    const again = composeRound(once.board, input(prior));
    assert.equal(again.board, once.board, 'composing the composed board changes nothing');
    assert.deepEqual(again.delta, once.delta);
    assert.deepEqual(again.renamed, new Map());
    assert.deepEqual(lensDelta(once.board, prior), once.delta);
    assert.equal(once.board.revision, d.revision + 1, 'one composition, one write');
    const back = replayed(d, once.board);
    assert.deepEqual([...back.elements], [...once.board.elements]);
    assert.equal(back.nextId, once.board.nextId);
  });

  it("the finding lifecycle names composed ids: a dismissal is cloned onto the carried finding's own id", () => {
    const before = board('flagged', [
      { kind: 'section', title: 'Defects' },
      { kind: 'code_ref', parent: 'e1', path: 'src/a.ts' },
      { kind: 'finding', parent: 'e1', title: 'Missing await', anchor: ['e2'] },
      { kind: 'finding', parent: 'e1', title: 'Leaked handle', category: 'reliability' },
      { kind: 'finding', parent: 'e1', title: 'Typo in log', category: 'maintainability' },
    ]);
    const after = board(
      'flagged',
      [
        { id: 'e10', kind: 'section', title: 'Defects' },
        { id: 'e11', kind: 'code_ref', parent: 'e10', path: 'src/a.ts' },
        { id: 'e12', kind: 'finding', parent: 'e10', title: 'Missing await', anchor: ['e11'] },
        { id: 'e13', kind: 'finding', parent: 'e10', title: 'Leaked handle', category: 'reliability' },
        { id: 'e14', kind: 'finding', parent: 'e10', title: 'Typo in log', category: 'maintainability' },
        { id: 'e15', kind: 'finding', parent: 'e10', title: 'Unbounded queue', category: 'performance' },
      ],
      { nextId: 16 },
    );
    const dispositions = [
      { findingId: 'e5', disposition: 'addressed' as const },
      { findingId: 'e4', disposition: 'dismissed' as const },
    ];
    const c = composeRound(after, input(before, { dispositions }));
    assert.deepEqual(c.findings, [
      { prior: 'e5', disposition: 'addressed', result: 'dropped', successor: 'e14', candidates: ['e14'] },
      { prior: 'e4', disposition: 'dismissed', result: 'dismissed', successor: 'e4', candidates: ['e4'] },
    ]);
    assert.deepEqual(c.board.elements.get('e4'), before.elements.get('e4'), "the dismissed finding is the predecessor's, so the clone lands on the same id");
    assert.deepEqual(c.board.elements.get('e3'), before.elements.get('e3'));
    assert.ok(!c.board.elements.has('e14') && !c.board.elements.has('e5'), 'the addressed finding is gone under every name');
    assert.deepEqual(deltas(c.board), { Defects: 'reworked' });
    assertWellFormed(c.board);
    assert.equal(composeRound(c.board, input(before, { dispositions })).board, c.board);
  });

  it('a round chapter carried on is the earlier chapter under its own ids, its outcomes without the code cards left behind', () => {
    const addressed = [{ askId: 'ask-1', text: 'Await the save.', evidence: [{ path: 'src/a.ts', side: 'head' as const, line: 4 }] }];
    const first = composeRound(board('sequence', [{ kind: 'section', title: 'Walk' }]), input(null, { ordinal: 1, addressed })).board;
    const second = composeRound(board('sequence', [{ kind: 'section', title: 'Walk' }], { nextId: first.nextId }), input(first, { ordinal: 2, addressed: [] })).board;
    const chapter = [...first.elements.values()].find((e) => e.kind === 'section' && e.title === roundChapterTitle(1)) as BoardElement;
    assert.deepEqual(second.elements.get(chapter.id), { ...first.elements.get(chapter.id), delta: null }, "its stamp is this round's: carried");
    const outcome = [...first.elements.values()].find((e) => e.kind === 'round_outcome') as BoardElement;
    assert.deepEqual(second.elements.get(outcome.id), { ...first.elements.get(outcome.id), evidence: [] });
    assert.ok(![...second.elements.values()].some((e) => e.kind === 'code_ref'), "round 1's code card cites round 1's capture and stays behind");
    assertWellFormed(second);
  });
});

// ─── Random boards ───────────────────────────────────────────────────────────────────────────

type Op = { kind: 'section' | 'prose' | 'code_ref' | 'decision' | 'finding'; parent: number; text: number; ref: number };
const opArb: fc.Arbitrary<Op> = fc.record({ kind: fc.constantFrom('section', 'section', 'prose', 'code_ref', 'decision', 'finding'), parent: fc.nat(12), text: fc.nat(2), ref: fc.nat(12) });

/** A finished board built from ops (few titles and texts, so equal subtrees are frequent), ids from e<start>. */
function built(lens: Lens, ops: readonly Op[], at: { start: number; author: string; patchset: string }): BoardState {
  const els: Array<Record<string, unknown>> = [];
  const sections: string[] = [];
  const codeRefs: string[] = [];
  let n = at.start;
  for (const op of ops) {
    const id = `e${n}`;
    const inSection = sections.length > 0 ? sections[op.parent % sections.length] : undefined;
    const anywhere = [null, ...sections][op.parent % (sections.length + 1)] ?? null;
    const cited = codeRefs.length > 0 ? [codeRefs[op.ref % codeRefs.length] as string] : [];
    let el: Record<string, unknown>;
    if (op.kind === 'section') el = { kind: 'section', parent: anywhere, title: ['Storage', 'Retries', 'Logging'][op.text] };
    else if (op.kind === 'prose') el = { kind: 'prose', parent: anywhere, markdown: `Words ${op.text}.` };
    else if (op.kind === 'code_ref')
      el = { kind: 'code_ref', parent: anywhere, path: `src/${op.text}.ts`, start_line: 1, end_line: 2, patchset_id: at.patchset, hunk_ids: [`${at.patchset}-${op.text}`] };
    else if (!inSection) continue;
    else if (op.kind === 'decision') el = { kind: 'decision', parent: inSection, title: `Call ${op.text}`, statement: 'S.', rationale: 'R.', alternatives: [], evidence: cited };
    else el = { kind: 'finding', parent: inSection, title: `Defect ${op.text}`, anchor: cited };
    els.push({ id, author: at.author, seq: n, ...el });
    if (op.kind === 'section') sections.push(id);
    if (op.kind === 'code_ref') codeRefs.push(id);
    n += 1;
  }
  return board(lens, els, { nextId: n, patchsetId: at.patchset });
}

describe('composeRound over random predecessor and successor boards (fast-check)', () => {
  const scenario = fc.record({
    lens: fc.constantFrom<Lens>('decisions', 'flagged'),
    ops: fc.array(opArb, { maxLength: 16 }),
    edits: fc.array(fc.oneof(fc.constant<'keep'>('keep'), fc.constant<'keep'>('keep'), fc.constant<'drop'>('drop'), fc.nat(2)), { maxLength: 16 }),
    extra: fc.array(opArb, { maxLength: 4 }),
    start: fc.integer({ min: 1, max: 24 }),
    disposition: fc.option(fc.record({ pick: fc.nat(16), disposition: fc.constantFrom<'addressed' | 'dismissed'>('addressed', 'dismissed') })),
  });

  it("never leaves a dangling reference or a shared id, keeps what the draft says, carries in the predecessor's bytes, and composes once", () => {
    fc.assert(
      fc.property(scenario, ({ lens, ops, edits, extra, start, disposition }) => {
        const prior = built(lens, ops, { start: 1, author: 'claude', patchset: 'ps-1' });
        const successorOps = [
          ...ops.flatMap((op, i) => {
            const edit = edits[i] ?? 'keep';
            return edit === 'keep' ? [op] : edit === 'drop' ? [] : [{ ...op, text: edit }];
          }),
          ...extra,
        ];
        const drafted = built(lens, successorOps, { start, author: 'codex', patchset: 'ps-2' });
        const findings = [...prior.elements.values()].filter((e) => e.kind === 'finding');
        const dispositions = disposition && findings.length > 0 ? [{ findingId: (findings[disposition.pick % findings.length] as BoardElement).id, disposition: disposition.disposition }] : [];
        const c = composeRound(drafted, input(prior, { dispositions }));

        assertWellFormed(c.board);
        assert.equal(composeRound(c.board, input(prior, { dispositions })).board, c.board, 'idempotent');
        assert.deepEqual(lensDelta(c.board, prior), c.delta);
        assert.deepEqual([...replayed(drafted, c.board).elements], [...c.board.elements], 'the write replays to the composed board');
        if (dispositions.length === 0) {
          // Only ids, positions, authors and stamps may change: the board reads as drafted.
          const roots = (b: BoardState) => [...b.elements.values()].filter((e) => e.parent === null).map((e) => render(b, e.id));
          assert.deepEqual(roots(c.board), roots(drafted));
          assert.deepEqual(
            [...c.renamed.keys()].filter((id) => !drafted.elements.has(id)),
            [],
          );
        }
        // An id both generations hold names one element: the predecessor's, in its own bytes (a
        // reworked section is the re-draft's, under the title it had).
        for (const el of c.board.elements.values()) {
          const was = prior.elements.get(el.id);
          if (!was) continue;
          assert.equal(el.kind, was.kind);
          assert.equal(el.parent, was.parent, `${el.id} sits where it sat`);
          if (el.kind === 'section') assert.equal(el.title.trim(), (was as { title: string }).title.trim());
          else {
            assert.equal(ownBytes(el), ownBytes(was), `${el.id} is the predecessor's`);
            assert.equal(render(c.board, el.id), render(prior, was.id));
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it("a re-draft that changed nothing but its ids, model and capture composes to the predecessor's elements", () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 16 }), fc.integer({ min: 1, max: 24 }), (ops, start) => {
        const prior = built('decisions', ops, { start: 1, author: 'claude', patchset: 'ps-1' });
        const drafted = built('decisions', ops, { start, author: 'codex', patchset: 'ps-2' });
        const c = composeRound(drafted, input(prior));
        const withCapture = (b: BoardState, from: BoardState) =>
          [...b.elements.values()].map((e) =>
            e.kind === 'code_ref' ? { ...e, patchset_id: 'ps-2', hunk_ids: (from.elements.get(e.id) as { hunk_ids?: string[] } | undefined)?.hunk_ids ?? e.hunk_ids } : e,
          );
        assert.deepEqual([...c.board.elements.values()], withCapture(prior, c.board));
        assert.equal(c.delta.verdict, 'carrying-forward');
      }),
      { numRuns: 200 },
    );
  });
});
