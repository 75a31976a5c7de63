import assert from 'node:assert/strict';
import type { LensComposition } from '../../../host/board/compose';
import { composeRound, roundChapterTitle } from '../../../host/board/compose';
import { loadBoard } from '../../../host/board/persist';
import { emptyBoard, type BoardState } from '../../../host/board/state';
import { scriptedAssignment } from '../../../host/harness/scripted';
import { newGenerationId, runLensPipeline } from '../../../host/pipeline/run';
import type { GenerationOutcome, RoundCompose } from '../../../host/pipeline/types';
import type { Store } from '../../../host/store';
import { BoardElement, LENSES, type Lens } from '../../../protocol/board';
import type { Patchset } from '../../../protocol/patchset';
import type { TestRepo } from '../../fixtures/gitRepo';
import { AskLog } from '../../../host/asks/log';
import { applyComposition, roundCompose } from '../../../host/rounds/compose';
import { findingKey, flaggedBoardId } from '../../../protocol/asks';
import type { Round, RoundReport } from '../../../protocol/rounds';
import { Temp, codeChange, fullScriptFor, openStore, regionsOf, sessionFor, testPrompts, tickingClock, type Region } from './fixtures';

/**
 * A round's successor drafted through the real pipeline and store: each lane's settled board is
 * composed against the predecessor's before its outcome is written (stamps, the finding
 * lifecycle, the round's chapter), durable, and told to the caller.
 */
describe('lens pipeline: a round successor is composed against its predecessor before it settles', function () {
  this.timeout(60_000);
  const temp = new Temp();
  let repo: TestRepo;
  let patchset: Patchset;
  let store: Store;
  let sessionId: string;
  let util: Region;

  before(async () => {
    ({ repo, patchset } = await codeChange());
    util = regionsOf(patchset)[3] as Region;
    store = await openStore(temp);
    sessionId = sessionFor(store, repo, patchset);
  });
  after(() => {
    repo?.cleanup();
    temp.cleanup();
  });

  async function draft(compose?: RoundCompose, onComposed?: (generationId: string, lens: Lens, c: LensComposition) => void): Promise<GenerationOutcome> {
    const generationId = newGenerationId();
    return runLensPipeline(
      {
        patchset,
        sessionId,
        generationId,
        workspaceDir: repo.dir,
        contextDir: `.rennet/context/${sessionId}`,
        harnesses: scriptedAssignment(fullScriptFor(patchset)),
        ...(compose ? { compose } : {}),
      },
      { prompts: testPrompts, clock: tickingClock(), store, ...(onComposed ? { onComposed } : {}) },
    );
  }
  const boardsOf = (outcome: GenerationOutcome): Partial<Record<Lens, BoardState>> => Object.fromEntries(outcome.lanes.map((l) => [l.lens, l.board]));
  const sections = (board: BoardState) => [...board.elements.values()].filter((e): e is Extract<BoardElement, { kind: 'section' }> => e.kind === 'section');
  const findingTitles = (board: BoardState) => [...board.elements.values()].flatMap((e) => (e.kind === 'finding' ? [e.title] : []));

  it('the same drafts carry every section; Sequence gains the round chapter; an addressed finding is dropped; all durable before settling', async () => {
    const first = await draft();
    for (const l of first.lanes) assert.equal(l.state, 'settled', `${l.lens}: ${JSON.stringify(l.failure)}`);
    const priorFlagged = first.lanes.find((l) => l.lens === 'flagged')!.board;
    const target = [...priorFlagged.elements.values()].find((e) => e.kind === 'finding' && e.title === 'The log line changes shape');
    assert.ok(target);

    const told: Array<[Lens, LensComposition]> = [];
    const toldFor = new Set<string>();
    const compose: RoundCompose = {
      ordinal: 1,
      priorGenerationId: first.generationId,
      prior: boardsOf(first),
      addressed: [{ askId: 'ask-1', text: 'Keep the util line as it was.', evidence: [{ path: 'src/util.ts', side: 'head', line: util.start }] }],
      dispositions: [{ findingId: target.id, disposition: 'addressed' }],
    };
    const second = await draft(compose, (generationId, lens, c) => {
      toldFor.add(generationId);
      told.push([lens, c]);
    });
    assert.deepEqual([...toldFor], [second.generationId]);
    for (const l of second.lanes) assert.equal(l.state, 'settled', `${l.lens}: ${JSON.stringify(l.failure)}`);
    assert.deepEqual(told.map(([lens]) => lens).sort(), [...LENSES].sort(), 'every lane was composed once');

    const verdicts = Object.fromEntries(told.map(([lens, c]) => [lens, c.delta.verdict]));
    assert.deepEqual(verdicts, { design: 'carrying-forward', decisions: 'carrying-forward', noise: 'carrying-forward', sequence: 'reworked', flagged: 'reworked' });

    const stored = (lens: Lens) => loadBoard(store, { sessionId, generationId: second.generationId, patchsetId: patchset.id, lens }) as BoardState;
    const priorOf = (lens: Lens) => first.lanes.find((l) => l.lens === lens)!.board;
    // Carried lanes are the predecessor's elements, ids, authors and positions included, durable as told.
    for (const lens of ['design', 'decisions', 'noise'] as const) {
      assert.deepEqual([...stored(lens).elements], [...priorOf(lens).elements], `${lens}: carried byte-identical`);
      assert.deepEqual([...stored(lens).elements], [...told.find(([l]) => l === lens)![1].board.elements]);
    }
    // Sequence: its drafted sections carried, the chapter new, the chapter's outcome citing the util line.
    const seq = stored('sequence');
    assert.deepEqual(
      sections(seq).map((s) => [s.title, s.delta]),
      [...sections(first.lanes.find((l) => l.lens === 'sequence')!.board).map((s) => [s.title, null]), [roundChapterTitle(1), 'new']],
    );
    const outcome = [...seq.elements.values()].find((e) => e.kind === 'round_outcome');
    assert.ok(outcome && outcome.kind === 'round_outcome');
    const ref = seq.elements.get(outcome.evidence?.[0] as string);
    assert.ok(ref && ref.kind === 'code_ref' && ref.path === 'src/util.ts' && ref.hunk_ids.includes(util.hunkId));
    // Flagged: the addressed finding is gone from the durable board, the others stay; its section reworked.
    const flagged = stored('flagged');
    assert.deepEqual(
      findingTitles(flagged),
      findingTitles(priorFlagged).filter((t) => t !== 'The log line changes shape'),
    );
    assert.deepEqual(
      sections(flagged).map((s) => s.delta),
      ['reworked'],
    );
    // The reworked section and the findings that did not change are the predecessor's, under their ids.
    assert.equal(sections(flagged)[0]?.id, sections(priorFlagged)[0]?.id);
    for (const el of flagged.elements.values()) if (el.kind === 'finding') assert.deepEqual(el, priorFlagged.elements.get(el.id));
    // The outcome was written after the composition: the stored board is the one the lane settled with.
    assert.deepEqual([...flagged.elements.values()], [...second.lanes.find((l) => l.lens === 'flagged')!.board.elements.values()]);
    // The predecessor is untouched.
    const before = loadBoard(store, { sessionId, generationId: first.generationId, patchsetId: patchset.id, lens: 'flagged' }) as BoardState;
    assert.ok(findingTitles(before).includes('The log line changes shape'));
    assert.ok(sections(before).every((s) => s.delta === null));
  });

  it('roundCompose reads the predecessor from the store and the settled findings from the ask log; a cloned dismissal lands on the successor', async () => {
    const first = await draft();
    const flaggedBoard = first.lanes.find((l) => l.lens === 'flagged')!.board;
    const byTitle = (t: string) => [...flaggedBoard.elements.values()].find((e) => e.kind === 'finding' && e.title === t)!.id;
    const asks = new AskLog(store);
    const boardId = flaggedBoardId(sessionId, first.generationId);
    const at = '2026-12-02T10:00:00.000Z';
    const staged = asks.command(
      sessionId,
      {
        type: 'stage',
        anchor: { kind: 'finding', generationId: first.generationId, boardId, findingId: byTitle('Callers match the old text') },
        text: 'Fix the callers.',
        intent: 'request-change',
        lane: 'changes',
      },
      at,
    );
    const untouched = asks.command(sessionId, { type: 'stage', anchor: { kind: 'none' }, text: 'Also tidy up.', intent: 'comment', lane: 'changes' }, at);
    assert.ok(staged.ok && untouched.ok);
    assert.ok(asks.command(sessionId, { type: 'dismissFinding', generationId: first.generationId, boardId, findingId: byTitle('The rename is not covered by a test') }, at).ok);
    const projection = asks.projection(sessionId);
    assert.ok(projection.ok);
    const [fix, tidy] = projection.value.asks.slice(-2).map((a) => a.id) as [string, string];
    const report: RoundReport = {
      roundId: 'r-1',
      successorPatchsetId: patchset.id,
      outcomes: [
        { askId: fix, askText: 'Fix the callers.', outcome: 'addressed', note: 'Done.', evidence: [{ evidenceId: 'ev-1', kind: 'text-hunk', path: 'src/util.ts', side: 'head', line: util.start }] },
        { askId: tidy, askText: 'Also tidy up.', outcome: 'untouched', note: 'Not done.', evidence: [] },
      ],
      beyond: [],
      counts: { addressed: 1, partial: 0, untouched: 1, beyond: 0 },
    };
    const round = { ordinal: 3, fromGenerationId: first.generationId } as Round;
    const compose = roundCompose(store, { sessionId, round, report, projection: projection.value });
    assert.ok(compose);
    assert.deepEqual(Object.keys(compose.prior).sort(), [...LENSES].sort());
    assert.deepEqual(compose.addressed, [{ askId: fix, text: 'Fix the callers.', evidence: [{ path: 'src/util.ts', side: 'head', line: util.start }] }]);
    assert.deepEqual(compose.dispositions, [
      { findingId: byTitle('Callers match the old text'), disposition: 'addressed' },
      { findingId: byTitle('The rename is not covered by a test'), disposition: 'dismissed' },
    ]);
    assert.equal(roundCompose(store, { sessionId, round: { ...round, fromGenerationId: null }, report, projection: projection.value }), null);

    // Quote threads on the predecessor: one quoting text the re-draft keeps once, one quoting text it no longer has.
    const decisionsPrior = first.lanes.find((l) => l.lens === 'decisions')!.board;
    const decision = [...decisionsPrior.elements.values()].find((e) => e.kind === 'decision')!;
    const kept = asks.command(sessionId, { type: 'quoteOpen', anchor: { kind: 'quote', generationId: first.generationId, lens: 'decisions', elementId: decision.id, quote: 'Words read better' } }, at);
    const gone = asks.command(
      sessionId,
      { type: 'quoteOpen', anchor: { kind: 'quote', generationId: first.generationId, lens: 'decisions', elementId: decision.id, quote: 'not on the new board' } },
      at,
    );
    assert.ok(kept.ok && gone.ok);
    const opened = asks.projection(sessionId);
    assert.ok(opened.ok);
    const threadIds = Object.keys(opened.value.quoteThreads);
    const second = await draft(compose, (generationId, lens, c) => applyComposition(asks, { sessionId, priorGenerationId: first.generationId, generationId }, lens, c, at));
    const successor = second.lanes.find((l) => l.lens === 'flagged')!.board;
    assert.deepEqual(findingTitles(successor), ['The rename is not covered by a test', 'The log line changes shape']);
    const clone = [...successor.elements.values()].find((e) => e.kind === 'finding' && e.title === 'The rename is not covered by a test')!.id;
    const after = asks.projection(sessionId);
    assert.ok(after.ok);
    assert.deepEqual(
      Object.keys(after.value.findingDispositions).sort(),
      [
        findingKey({ generationId: first.generationId, boardId, findingId: byTitle('The rename is not covered by a test') }),
        findingKey({ generationId: second.generationId, boardId: flaggedBoardId(sessionId, second.generationId), findingId: clone }),
      ].sort(),
      'the dismissal is cloned onto the successor; the predecessor keeps its own',
    );
    // The threads: the one whose quote the successor holds once moved onto it; the other is detached where it was.
    const threads = Object.entries(after.value.quoteThreads)
      .filter(([id]) => threadIds.includes(id))
      .map(([, t]) => t);
    const moved = threads.find((t) => t.anchor.quote === 'Words read better');
    const detached = threads.find((t) => t.anchor.quote === 'not on the new board');
    const successorDecision = [...second.lanes.find((l) => l.lens === 'decisions')!.board.elements.values()].find((e) => e.kind === 'decision')!;
    assert.deepEqual([moved?.anchor.generationId, moved?.anchor.elementId, moved?.detached], [second.generationId, successorDecision.id, false]);
    assert.deepEqual([detached?.anchor.generationId, detached?.detached], [first.generationId, true]);
  });

  it('what the reviewer anchored on the live draft follows its element when the composition carries or renumbers it', () => {
    const finding = (id: string, title: string, body: string) =>
      BoardElement.parse({
        id,
        kind: 'finding',
        parent: 'e1',
        author: 'claude',
        seq: Number(id.slice(1)),
        severity: 'major',
        category: 'reliability',
        title,
        body_markdown: body,
        remedy_markdown: 'Fix it.',
        anchor: [],
        status: 'open',
        concurrence: [],
        accord: 'split',
      });
    const flaggedBoard = (elements: BoardElement[]): BoardState => ({
      ...emptyBoard('flagged', patchset.id),
      document: { title: 'Flagged', intro_markdown: 'Two defects.', measure: 'reading', prose_register: 'authored' },
      elements: new Map(elements.map((e) => [e.id, e])),
      nextId: elements.length + 1,
      status: 'finished',
      lastFinish: [],
    });
    const section = BoardElement.parse({ id: 'e1', kind: 'section', parent: null, author: 'claude', seq: 1, title: 'Defects', delta: null });
    const prior = flaggedBoard([section, finding('e2', 'Leaked handle', 'Handles leak.')]);
    // The live draft: a new finding first, so the unchanged one was drafted under another id.
    const drafted = flaggedBoard([section, finding('e2', 'Unbounded queue', 'Queues grow without a bound.'), finding('e3', 'Leaked handle', 'Handles leak.')]);
    const composition = composeRound(drafted, { ordinal: 1, prior, addressed: [], dispositions: [], resolveHunks: () => null });
    assert.deepEqual(
      composition.renamed,
      new Map([
        ['e2', 'e4'],
        ['e3', 'e2'],
      ]),
      'the unchanged finding takes its own id back; the new one moves off it',
    );

    const asks = new AskLog(store);
    const at = '2026-12-03T10:00:00.000Z';
    const place = { sessionId, priorGenerationId: 'gen-before', generationId: 'gen-live' };
    const boardId = flaggedBoardId(sessionId, place.generationId);
    const opened = asks.command(sessionId, { type: 'quoteOpen', anchor: { kind: 'quote', generationId: place.generationId, lens: 'flagged', elementId: 'e2', quote: 'Queues grow' } }, at);
    assert.ok(opened.ok);
    assert.ok(asks.command(sessionId, { type: 'dismissFinding', generationId: place.generationId, boardId, findingId: 'e3' }, at).ok);
    const threadIds = new Set(Object.keys((asks.projection(sessionId) as { ok: true; value: { quoteThreads: object } }).value.quoteThreads));

    applyComposition(asks, place, 'flagged', composition, at);
    const after = asks.projection(sessionId);
    assert.ok(after.ok);
    const thread = Object.entries(after.value.quoteThreads).find(([id, t]) => threadIds.has(id) && t.anchor.generationId === place.generationId)?.[1];
    assert.deepEqual([thread?.anchor.elementId, thread?.detached], ['e4', false], 'the thread is on the queue finding, under its composed id');
    const dismissedHere = Object.keys(after.value.findingDispositions).filter((k) => k.startsWith(`${place.generationId}|`));
    assert.deepEqual(
      dismissedHere,
      [findingKey({ generationId: place.generationId, boardId, findingId: 'e2' })],
      'the dismissal moved with the handle finding, and the id it left names nothing dismissed',
    );
    assert.ok(composition.board.elements.get('e2')?.kind === 'finding' && (composition.board.elements.get('e2') as { title: string }).title === 'Leaked handle');
  });
});
