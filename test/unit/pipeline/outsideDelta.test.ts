import assert from 'node:assert/strict';
import { capturePatchset } from '../../../host/capture/capture';
import { openRepo } from '../../../host/capture/repo';
import { loadBoard } from '../../../host/board/persist';
import { emptyBoard, type BoardState } from '../../../host/board/state';
import { scriptedAssignment } from '../../../host/harness/scripted';
import { newGenerationId, runLensPipeline } from '../../../host/pipeline/run';
import { deltaLines, keepFindingsInDelta, OUTSIDE_DELTA_LISTED, outsideDeltaNote, type LeftOutFinding } from '../../../host/pipeline/outsideDelta';
import { sinceLastReview } from '../../../host/rereview/sinceLast';
import type { BoardElement } from '../../../protocol/board';
import type { DiffLine, FileChange, Patchset } from '../../../protocol/patchset';
import { TestRepo } from '../../fixtures/gitRepo';
import { Temp, observe, openStore, sessionFor, testPrompts, tickingClock } from './fixtures';

/**
 * New findings of a re-review's delta generation: inside the fix delta at their severity, outside
 * it only at blocker, the others left out and said on the board. The pure rule on fixtures, then
 * the pipeline over a real delta (a base merged into the request) with a scripted Flagged seat.
 */
describe('host/pipeline/outsideDelta: findings outside the fix delta', function () {
  this.timeout(60_000);
  const temp = new Temp();
  const repos: TestRepo[] = [];
  after(() => {
    for (const r of repos) r.cleanup();
    temp.cleanup();
  });

  /** A modified file with one hunk of these lines (old/new numbers given per line). */
  function file(path: string, lines: Array<[DiffLine['kind'], number | null, number | null]>, over: Partial<FileChange> = {}): FileChange {
    return {
      path,
      oldPath: null,
      status: 'modified',
      oldMode: '100644',
      newMode: '100644',
      modeChanged: false,
      oldOid: 'a'.repeat(40),
      newOid: 'b'.repeat(40),
      binary: false,
      submodule: false,
      truncated: false,
      truncation: null,
      similarity: null,
      additions: 0,
      deletions: 0,
      hunks: [
        {
          id: `h-${path}`,
          header: '@@',
          oldStart: 1,
          oldLines: 1,
          newStart: 1,
          newLines: 1,
          additions: 0,
          deletions: 0,
          lines: lines.map(([kind, oldLine, newLine]) => ({ kind, text: 'x', oldLine, newLine })),
        },
      ],
      regions: [],
      ...over,
    };
  }
  const patchsetOf = (files: FileChange[]) => ({ files }) as unknown as Patchset;

  it('deltaLines: added lines on the head, deleted lines on the base, context is not changed; a rename answers to its old name on the base; a truncated tail counts', () => {
    const lines = deltaLines(
      patchsetOf([
        file('a.ts', [
          ['context', 9, 9],
          ['del', 10, null],
          ['add', null, 10],
          ['add', null, 11],
          ['context', 11, 12],
        ]),
        file(
          'new.ts',
          [
            ['context', 4, 4],
            ['del', 5, null],
          ],
          { oldPath: 'old.ts', status: 'renamed' },
        ),
        file('big.ts', [['add', null, 2]], { truncated: true, truncation: { reason: 'patch-size', limitBytes: 1, baseBytes: null, headBytes: null, tailFrom: { base: null, head: 40 } } }),
      ]),
    );
    assert.equal(lines.touches('a.ts', 'head', 9, 9), false);
    assert.equal(lines.touches('a.ts', 'head', 12, 14), false);
    assert.equal(lines.touches('a.ts', 'head', 11, 11), true);
    assert.equal(lines.touches('a.ts', 'head', 7, 10), true, 'a range that reaches an added line');
    assert.equal(lines.touches('a.ts', 'base', 10, 10), true);
    assert.equal(lines.touches('a.ts', 'base', 9, 9), false);
    assert.equal(lines.touches('old.ts', 'base', 5, 5), true);
    assert.equal(lines.touches('new.ts', 'base', 5, 5), true, 'a rename named by its new path on the base side');
    assert.equal(lines.touches('new.ts', 'head', 5, 5), false);
    assert.equal(lines.touches('big.ts', 'head', 50, 52), true);
    assert.equal(lines.touches('big.ts', 'head', 3, 39), false);
    assert.equal(lines.touches('other.ts', 'head', 1, 1), false);
  });

  /** A Flagged board: a section, code cards and findings, as a settled board holds them. */
  function board(): BoardState {
    const el = (id: string, kind: string, parent: string | null, fields: Record<string, unknown>, seq: number) => ({ id, kind, parent, author: 'scripted', seq, ...fields }) as unknown as BoardElement;
    const ref = (id: string, line: number, seq: number, side = 'head') =>
      el(id, 'code_ref', null, { path: 'a.ts', side, start_line: line, end_line: line, patchset_id: 'ps-1', hunk_ids: ['h-a.ts'] }, seq);
    const finding = (id: string, severity: string, title: string, anchor: string[], seq: number) =>
      el(id, 'finding', 'e1', { severity, category: 'correctness', title, body_markdown: 'b', remedy_markdown: 'r', anchor, status: 'open', concurrence: [], accord: 'solo' }, seq);
    const elements: BoardElement[] = [
      el('e1', 'section', null, { title: 'Correctness', body_markdown: 'b', delta: null }, 0),
      ref('e2', 11, 1),
      ref('e3', 9, 2),
      ref('e4', 12, 3),
      finding('e5', 'major', 'Off by one in the header', ['e3'], 4),
      finding('e6', 'blocker', 'The header leaks a token', ['e3'], 5),
      finding('e7', 'minor', 'The new line is slow', ['e2'], 6),
      finding('e8', 'nit', 'Naming', ['e4', 'e2'], 7),
      ref('e9', 12, 8),
      finding('e10', 'minor', 'Trailing `space`', ['e9'], 9),
      el('e11', 'callout', 'e10', { tone: 'note', markdown: 'n' }, 10),
    ];
    return { ...emptyBoard('flagged', 'ps-1'), status: 'finished', elements: new Map(elements.map((e) => [e.id, e])), nextId: 12, revision: 7 };
  }
  const lines = deltaLines(
    patchsetOf([
      file('a.ts', [
        ['context', 9, 9],
        ['del', 10, null],
        ['add', null, 10],
        ['add', null, 11],
        ['context', 11, 12],
      ]),
    ]),
  );

  it('keepFindingsInDelta: a major and a minor off the changed lines leave, with their own code cards and children; a blocker off them and findings on them stay; one host note says which', () => {
    const before = board();
    const scoped = keepFindingsInDelta(before, lines, 'abcdef0123456789');
    assert.deepEqual(scoped.leftOut, [
      { id: 'e5', title: 'Off by one in the header', severity: 'major', places: ['a.ts:9'] },
      { id: 'e10', title: 'Trailing `space`', severity: 'minor', places: ['a.ts:12'] },
    ]);
    const ids = [...scoped.board.elements.keys()];
    assert.deepEqual(ids, ['e1', 'e2', 'e3', 'e4', 'e6', 'e7', 'e8', 'e12'], 'e3 stays (the blocker cites it), e9 and the callout under e10 leave with it');
    const note = scoped.board.elements.get('e12');
    assert.ok(note?.kind === 'callout');
    assert.deepEqual([note.author, note.parent, note.tone, note.seq], ['host', null, 'note', 11]);
    assert.equal(
      note.markdown,
      '2 findings outside the fix delta below blocker were left out: a re-review keeps a new finding on lines the author did not change since abcdef0 only when it is a blocker — “Off by one in the header” (major; a.ts:9); “Trailing \\`space\\`” (minor; a.ts:12).',
    );
    assert.deepEqual([scoped.board.nextId, scoped.board.revision], [13, 9]);
    assert.equal(before.elements.size, 11, 'the board it was given is not changed');

    const again = keepFindingsInDelta(scoped.board, lines, 'abcdef0123456789');
    assert.equal(again.board, scoped.board, 'applied again: nothing changes');
    assert.deepEqual(again.leftOut, []);
  });

  it('keepFindingsInDelta: nothing outside, nothing changes; a finding whose anchor is not a code card stays', () => {
    const b = board();
    const inside = deltaLines(
      patchsetOf([
        file('a.ts', [
          ['add', null, 9],
          ['add', null, 11],
          ['add', null, 12],
        ]),
      ]),
    );
    const scoped = keepFindingsInDelta(b, inside, 'abcdef0');
    assert.equal(scoped.board, b);
    const odd = new Map(b.elements);
    odd.set('e5', { ...(b.elements.get('e5') as BoardElement), anchor: ['e1'] } as BoardElement);
    const kept = keepFindingsInDelta({ ...b, elements: odd }, lines, 'abcdef0');
    assert.deepEqual(
      kept.leftOut.map((f) => f.id),
      ['e10'],
    );
  });

  it('outsideDeltaNote: one is said in the singular; past the listed number the rest are counted; a base-side place says so', () => {
    const one: LeftOutFinding = { id: 'e1', title: 'T', severity: 'nit', places: ['a.ts:3-4 (base)'] };
    assert.equal(
      outsideDeltaNote([one], '1234567890'),
      '1 finding outside the fix delta below blocker was left out: a re-review keeps a new finding on lines the author did not change since 1234567 only when it is a blocker — “T” (nit; a.ts:3-4 (base)).',
    );
    const many = Array.from({ length: OUTSIDE_DELTA_LISTED + 2 }, (_, i) => ({ ...one, id: `e${i}`, title: `T${i}` }));
    const text = outsideDeltaNote(many, '1234567890');
    assert.ok(text.startsWith(`${OUTSIDE_DELTA_LISTED + 2} findings outside the fix delta below blocker were left out:`), text);
    assert.ok(text.endsWith(`“T${OUTSIDE_DELTA_LISTED - 1}” (nit; a.ts:3-4 (base)), and 2 more.`), text);
    assert.ok(!text.includes(`“T${OUTSIDE_DELTA_LISTED}”`));
  });

  it('the pipeline over a real delta after a base merge: the Flagged compiler’s major on the base’s line is left out and said, its blocker there and its minor on the author’s line stay', async () => {
    const r = new TestRepo();
    repos.push(r);
    r.write('app.txt', Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join('\n') + '\n');
    r.commit('base');
    r.branch('feature');
    r.write('app.txt', r.read('app.txt').replace('line 12\n', 'line twelve\n'));
    const review = r.commit('feature');
    r.checkout('main');
    r.write('app.txt', r.read('app.txt').replace('line 6\n', 'line six (main)\n'));
    r.commit('main: six');
    r.checkout('feature');
    r.git('merge', '-q', '--no-edit', 'main');
    r.write('app.txt', r.read('app.txt').replace('line 8\n', 'line eight\n'));
    r.commit('eight');

    const handle = await openRepo(r.dir);
    assert.ok(handle.ok);
    const full = await capturePatchset(handle.value, { kind: 'branch', base: 'main', head: 'feature' });
    assert.ok(full.ok);
    const since = await sinceLastReview({
      root: r.dir,
      full: full.value,
      earlier: { reviewId: 1, url: 'u', commitId: review, state: 'COMMENTED', body: '', markerId: null, submittedAt: null, comments: [] },
      ownRequest: false,
    });
    assert.ok(since.ok && since.value.lensPatchset);
    const delta = since.value.lensPatchset;
    // The base's line 6 is context of the author's hunk (line 8), not a changed line of it.
    const hunk = delta.files[0]!.hunks[0]!;
    assert.deepEqual(
      hunk.lines.filter((l) => l.kind !== 'context').map((l) => `${l.kind} ${l.text}`),
      ['del line 8', 'add line eight'],
    );
    assert.ok(hunk.lines.some((l) => l.kind === 'context' && l.text === 'line six (main)' && l.newLine === 6));

    const finding = (severity: string, title: string, anchor: string) => ({
      tool: 'add_finding',
      input: {
        severity,
        category: 'correctness',
        title,
        body_markdown: 'It goes wrong for callers.',
        remedy_markdown: 'Fix it.',
        anchor: [anchor],
        parent_id: '$s',
        origin: 'claude',
        agreement: 'solo',
        score: 70,
      },
    });
    const script = {
      seats: {
        'flagged:reviewer:claude': { turns: [[{ tool: 'submit_findings', input: { findings_markdown: '# Findings\n\n- app.txt:6 and app.txt:8.\n' } }]] },
        'flagged:compiler': {
          turns: [
            [
              { tool: 'set_document', input: { title: 'What could go wrong', intro_markdown: 'Two lines of the delta read wrong.' } },
              { tool: 'add_section', input: { title: 'Correctness', body_markdown: 'Where the lines break callers.' }, as: 's' },
              { tool: 'cite', input: { path: 'app.txt', side: 'head', start_line: 6, end_line: 6 }, as: 'six' },
              { tool: 'cite', input: { path: 'app.txt', side: 'head', start_line: 8, end_line: 8 }, as: 'eight' },
              finding('major', 'Line six reads wrong', '$six'),
              finding('blocker', 'Line six leaks a secret', '$six'),
              finding('minor', 'Line eight reads wrong', '$eight'),
              { tool: 'finish' },
            ],
          ],
        },
      },
    };
    const store = await openStore(temp);
    const sessionId = sessionFor(store, r, delta);
    const generationId = newGenerationId();
    const log: string[] = [];
    const obs = observe();
    const outcome = await runLensPipeline(
      { patchset: delta, sessionId, generationId, workspaceDir: r.dir, contextDir: `.rennet/context/${sessionId}`, harnesses: scriptedAssignment(script), rereviewDelta: { from: review } },
      { prompts: testPrompts, clock: tickingClock(), store, onFrame: obs.onFrame, onLane: obs.onLane, log: (l) => log.push(l) },
    );
    const flagged = outcome.lanes.find((l) => l.lens === 'flagged')!;
    assert.equal(flagged.state, 'settled', JSON.stringify(flagged.failure));
    const findings = [...flagged.board.elements.values()].filter((e) => e.kind === 'finding').map((e) => (e.kind === 'finding' ? `${e.severity} ${e.title}` : ''));
    assert.deepEqual(findings, ['blocker Line six leaks a secret', 'minor Line eight reads wrong']);
    const notes = [...flagged.board.elements.values()].filter((e) => e.kind === 'callout' && e.author === 'host').map((e) => (e.kind === 'callout' ? e.markdown : ''));
    assert.deepEqual(notes, [
      `1 finding outside the fix delta below blocker was left out: a re-review keeps a new finding on lines the author did not change since ${review.slice(0, 7)} only when it is a blocker — “Line six reads wrong” (major; app.txt:6).`,
    ]);
    assert.ok(log.includes('[flagged] 1 finding outside the fix delta below blocker left out: Line six reads wrong (major; app.txt:6)'), log.join('\n'));
    // Durable before the lane settled: the stored board is the scoped one, and the last frame showed it.
    const stored = loadBoard(store, { sessionId, generationId, patchsetId: delta.id, lens: 'flagged' });
    assert.deepEqual([...stored!.elements.keys()], [...flagged.board.elements.keys()]);
    const last = obs.frames.filter((f) => f.lens === 'flagged').at(-1)!;
    assert.equal(last.kind, 'closed');
    assert.ok([...last.board.elements.values()].some((e) => e.kind === 'callout' && e.author === 'host'));

    // Without the re-review's scope the same script keeps all three.
    const plain = await runLensPipeline(
      { patchset: delta, sessionId, generationId: newGenerationId(), workspaceDir: r.dir, contextDir: `.rennet/context/${sessionId}`, harnesses: scriptedAssignment(script) },
      { prompts: testPrompts, clock: tickingClock(), store },
    );
    assert.equal([...plain.lanes.find((l) => l.lens === 'flagged')!.board.elements.values()].filter((e) => e.kind === 'finding').length, 3);
  });
});
