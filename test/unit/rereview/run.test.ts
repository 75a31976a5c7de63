import assert from 'node:assert/strict';
import { join } from 'node:path';
import { capturePatchset } from '../../../host/capture/capture';
import { openRepo } from '../../../host/capture/repo';
import type { EarlierReview } from '../../../host/forge/types';
import type { Harness } from '../../../host/pipeline/ports';
import { planRereview, priorReviewOf, recordRereview, REREVIEW_EVENT_KIND, rereviewAtHead, rereviewRecords, type RereviewDeps, type RereviewPlan } from '../../../host/rereview/run';
import { readGenerationSnapshot } from '../../../host/generation/generationSnapshot';
import type { LensHarness } from '../../../host/harness/harnessConfig';
import { Store } from '../../../host/store';
import { err, ok, rennetError } from '../../../protocol/result';
import { PriorReview } from '../../../protocol/review';
import { TestRepo } from '../../fixtures/gitRepo';
import { T0, Temp, WASM_PATH, sessionFor } from '../pipeline/fixtures';
import { ReadingCloser } from './closerFixture';

/**
 * The re-review end to end below the CLI: the decision on a real repository, the closure seat's
 * one turn (an in-process harness that reads, then cites what it read), the "Prior review" line,
 * the record's shape, and the record filed on a real store: read back per session, per head, and
 * on the snapshot of the generation it names.
 */
describe('host/rereview/run: plan, record, read back', function () {
  this.timeout(60_000);
  const temp = new Temp();
  const repos: TestRepo[] = [];
  after(() => {
    for (const r of repos) r.cleanup();
    temp.cleanup();
  });

  /** main: app.txt 1..10; the reviewed commit changes line 5 to "line 5!"; `fix` spells it out. */
  async function world(fix: 'fast-forward' | 'none' | 'force-push' | 'empty') {
    const r = new TestRepo();
    repos.push(r);
    r.write('app.txt', Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n') + '\n');
    r.commit('base');
    r.branch('feature');
    r.write('app.txt', r.read('app.txt').replace('line 5\n', 'line 5!\n'));
    const review = r.commit('feature');
    if (fix === 'fast-forward') {
      r.write('app.txt', r.read('app.txt').replace('line 5!\n', 'line five\n'));
      r.commit('fix: spell five out');
    } else if (fix === 'empty') {
      r.commit('retrigger CI');
    } else if (fix === 'force-push') {
      r.write('app.txt', r.read('app.txt').replace('line 5!\n', 'line five\n'));
      r.git('add', '-A');
      r.git('commit', '-q', '--amend', '-m', 'feature, amended');
    }
    const handle = await openRepo(r.dir);
    assert.ok(handle.ok);
    const full = await capturePatchset(handle.value, { kind: 'branch', base: 'main', head: 'feature' });
    assert.ok(full.ok);
    return { r, review, head: r.head(), full: full.value };
  }

  const earlierAt = (commitId: string, over: Partial<EarlierReview> = {}): EarlierReview => ({
    reviewId: 41,
    url: 'https://github.example/acme/app/pull/3#pullrequestreview-41',
    commitId,
    state: 'CHANGES_REQUESTED',
    body: 'Also: add a test.\n\n<!-- rennet-review: 0123456789abcdef01234567 -->',
    markerId: '0123456789abcdef01234567',
    submittedAt: '2026-01-02T00:00:00Z',
    comments: [{ path: 'app.txt', line: 5, side: 'RIGHT', body: 'Spell five out.' }],
    ...over,
  });

  /** Resolves R1 on the app.txt hunk it read, leaves R2 open. */
  const resolvingR1 = () =>
    new ReadingCloser(['app.txt'], (read) => {
      assert.match(read.diffs.get('app.txt') ?? '', /^\+ +5 \| line five$/m, 'it saw the fix before it cited it');
      const hunk = read.units.find((u) => u.kind === 'text-hunk' && u.path === 'app.txt');
      assert.ok(hunk);
      return [
        {
          closures: [
            { itemId: 'R1', closure: 'resolved', evidenceIds: [hunk.id], reason: 'Line 5 reads "line five".' },
            { itemId: 'R2', closure: 'open', evidenceIds: [], reason: 'No test was added.' },
          ],
        },
      ];
    });

  function deps(review: EarlierReview | null, harness: Harness | null, log: string[] = []): RereviewDeps & { asked: () => number } {
    let asked = 0;
    return {
      earlier: async () => ok({ review, ownRequest: false }),
      closureHarness: async (): Promise<LensHarness> => {
        asked++;
        return { harness, hint: harness ? null : 'no harness configured' };
      },
      contextDir: temp.dir('rennet-rereview-ctx-'),
      log: (line) => log.push(line),
      asked: () => asked,
    };
  }

  it('a fast-forward fix: the seat reads and resolves one of two; the line, the record’s shape, the evidence on the fixed line', async () => {
    const w = await world('fast-forward');
    const log: string[] = [];
    const closer = resolvingR1();
    const planned = await planRereview(deps(earlierAt(w.review), closer, log), w.r.dir, w.full);
    assert.ok(planned.ok, planned.ok ? '' : planned.error.message);
    const plan = planned.value;
    assert.equal(closer.turns, 1);
    assert.equal(plan.line, 'Prior review: 1 of 2 resolved');
    assert.equal(plan.closureFailure, null);
    assert.deepEqual(log, ['[closures] scripted-closer: 1 of 2 resolved']);
    assert.ok(plan.since.deltaPatchset);

    const prior = priorReviewOf(plan);
    PriorReview.parse(prior);
    assert.deepEqual(prior, {
      delta: { kind: 'ancestor', from: w.review, to: w.head, reason: null },
      line: 'Prior review: 1 of 2 resolved',
      statement: `The delta since your review at ${w.review.slice(0, 7)} is reviewed.`,
      earlier: { reviewId: 41, url: 'https://github.example/acme/app/pull/3#pullrequestreview-41', state: 'CHANGES_REQUESTED', commitId: w.review },
      items: [
        {
          id: 'R1',
          path: 'app.txt',
          line: 5,
          text: 'Spell five out.',
          severity: 'blocker',
          closure: 'resolved',
          reason: 'Line 5 reads "line five".',
          evidence: [{ path: 'app.txt', side: 'head', line: 5 }],
        },
        { id: 'R2', path: null, line: null, text: 'Also: add a test.', severity: 'blocker', closure: 'open', reason: 'No test was added.', evidence: [] },
      ],
      closureFailure: null,
      deltaPatchsetId: plan.since.deltaPatchset.id,
    });
    assert.equal(w.r.git('show', `${w.head}:app.txt`).split('\n')[4], 'line five', 'the evidence is the fix’s line at the head');
  });

  it('a seat that fails: both open, the failure said, and the line counts none resolved', async () => {
    const w = await world('fast-forward');
    const failing: Harness = { kind: 'failing', origin: 'other', model: null, runTurn: async () => ({ outcome: 'failed', message: 'rate limited', usage: null }) };
    const planned = await planRereview(deps(earlierAt(w.review), failing), w.r.dir, w.full);
    assert.ok(planned.ok);
    assert.equal(planned.value.line, 'Prior review: 0 of 2 resolved');
    assert.equal(planned.value.closureFailure, 'the closure seat failed (rate limited); every item stays open');
    assert.deepEqual(
      priorReviewOf(planned.value).items.map((i) => [i.id, i.closure, i.reason]),
      [
        ['R1', 'open', 'the closure seat failed (rate limited); every item stays open'],
        ['R2', 'open', 'the closure seat failed (rate limited); every item stays open'],
      ],
    );
  });

  it('nothing since, only an empty commit since, a force push, no earlier review, an earlier review with no items: no seat asked; the line says which', async () => {
    const equal = await world('none');
    const d1 = deps(earlierAt(equal.review), resolvingR1());
    const same = await planRereview(d1, equal.r.dir, equal.full);
    assert.ok(same.ok);
    assert.equal(d1.asked(), 0);
    assert.equal(same.value.line, `Prior review: 0 of 2 resolved - no commits since ${equal.review.slice(0, 7)}`);
    assert.equal(same.value.since.lensPatchset, null);
    assert.deepEqual(
      same.value.closures.map((c) => [c.item.id, c.closure, c.reason]),
      [
        ['R1', 'open', 'no commits since the earlier review: nothing can have resolved it'],
        ['R2', 'open', 'no commits since the earlier review: nothing can have resolved it'],
      ],
    );
    assert.equal(priorReviewOf(same.value).deltaPatchsetId, null);

    const emptied = await world('empty');
    const d0 = deps(earlierAt(emptied.review), resolvingR1());
    const unchanged = await planRereview(d0, emptied.r.dir, emptied.full);
    assert.ok(unchanged.ok, unchanged.ok ? '' : unchanged.error.message);
    assert.equal(d0.asked(), 0);
    assert.equal(unchanged.value.line, 'Prior review: 0 of 2 resolved');
    assert.equal(unchanged.value.since.lensPatchset, null);
    assert.deepEqual(
      unchanged.value.closures.map((c) => [c.item.id, c.closure, c.reason]),
      ['R1', 'R2'].map((id) => [id, 'open', 'no code changed since the earlier review (its commits change no file): nothing can have resolved it']),
    );

    const forced = await world('force-push');
    const d2 = deps(earlierAt(forced.review), resolvingR1());
    const full = await planRereview(d2, forced.r.dir, forced.full);
    assert.ok(full.ok);
    assert.equal(d2.asked(), 0);
    assert.equal(full.value.line, `Prior review: baseline ${forced.review.slice(0, 7)} is not an ancestor of the head (force push or rebase), so the whole diff was reviewed`);
    assert.equal(full.value.since.lensPatchset, forced.full);
    assert.deepEqual(
      full.value.closures.map((c) => [c.item.id, c.closure, c.reason]),
      ['R1', 'R2'].map((id) => [id, 'open', "the earlier review's commit is not an ancestor of the head (force push or rebase): there is no delta to show a fix"]),
    );
    assert.deepEqual(priorReviewOf(full.value).delta, { kind: 'not-ancestor', from: forced.review, to: forced.head, reason: 'force push or rebase' });

    const d3 = deps(null, resolvingR1());
    const none = await planRereview(d3, forced.r.dir, forced.full);
    assert.ok(none.ok);
    assert.equal(none.value.line, 'Prior review: none of yours on this request; the whole change was reviewed');
    assert.deepEqual([none.value.closures, priorReviewOf(none.value).earlier, d3.asked()], [[], null, 0]);

    const ff = await world('fast-forward');
    const d4 = deps(earlierAt(ff.review, { body: '<!-- rennet-review: 0123456789abcdef01234567 -->', comments: [] }), resolvingR1());
    const empty = await planRereview(d4, ff.r.dir, ff.full);
    assert.ok(empty.ok);
    assert.equal(d4.asked(), 0);
    assert.equal(empty.value.line, `Prior review: no items posted at ${ff.review.slice(0, 7)}; the delta since it was reviewed`);
    assert.ok(empty.value.since.lensPatchset && empty.value.since.lensPatchset === empty.value.since.deltaPatchset, 'the lenses still read the delta');
  });

  it('the forge’s refusal to say the earlier review passes through', async () => {
    const w = await world('fast-forward');
    const refused = await planRereview({ ...deps(null, null), earlier: async () => err(rennetError('forge-unauthorized', 'no GitHub credentials')) }, w.r.dir, w.full);
    assert.ok(!refused.ok);
    assert.deepEqual([refused.error.code, refused.error.message], ['forge-unauthorized', 'no GitHub credentials']);
  });

  it('recorded on a real store: read back oldest first, the newest at a head, malformed records skipped, and on the snapshot of the generation it names', async () => {
    const w = await world('fast-forward');
    const planned = await planRereview(deps(earlierAt(w.review), resolvingR1()), w.r.dir, w.full);
    assert.ok(planned.ok);
    const store = await Store.open(join(temp.dir('rennet-rereview-store-'), 'store'), { wasmPath: WASM_PATH });
    try {
      const sessionId = sessionFor(store, w.r, w.full);
      store.createGeneration({ id: 'g-one', sessionId, patchsetId: w.full.id, now: T0 });
      store.createGeneration({ id: 'g-two', sessionId, patchsetId: w.full.id, now: T0 });
      // Another head's record first (an earlier re-review), then junk a reader must skip.
      const otherHead: RereviewPlan = { ...planned.value, line: 'Prior review: 0 of 2 resolved', since: { ...planned.value.since, delta: { ...planned.value.since.delta, to: w.review } } };
      const older = recordRereview(store, sessionId, 'g-two', otherHead, T0);
      store.appendEvent(sessionId, REREVIEW_EVENT_KIND, { generationId: 'g-one', prior: { line: 'not a record' } }, T0);
      store.appendEvent(sessionId, 'something.else', { prior: older }, T0);
      const first = recordRereview(store, sessionId, 'g-one', planned.value, T0);
      const none = recordRereview(store, sessionId, null, { ...planned.value, line: 'Prior review: 2 of 2 resolved' }, T0);
      assert.deepEqual(first, priorReviewOf(planned.value));

      const events = store.readEvents(sessionId).filter((e) => e.kind === REREVIEW_EVENT_KIND);
      assert.equal(events.length, 4);
      assert.deepEqual(events.at(-2)?.payload, { generationId: 'g-one', prior: first });
      assert.deepEqual(
        rereviewRecords(store, sessionId).map((r) => [r.generationId, r.prior.line]),
        [
          ['g-two', 'Prior review: 0 of 2 resolved'],
          ['g-one', 'Prior review: 1 of 2 resolved'],
          [null, 'Prior review: 2 of 2 resolved'],
        ],
      );
      assert.deepEqual(rereviewAtHead(store, sessionId, w.head), none, 'the newest at this head');
      assert.deepEqual(rereviewAtHead(store, sessionId, w.review), older);
      assert.equal(rereviewAtHead(store, sessionId, 'c'.repeat(40)), null);

      assert.deepEqual(readGenerationSnapshot(store, 'g-one')?.priorReview, first, 'the generation the record names');
      assert.deepEqual(readGenerationSnapshot(store, 'g-two')?.priorReview, older);
      const bare = store.createGeneration({ id: 'g-three', sessionId, patchsetId: w.full.id, now: T0 });
      assert.equal(readGenerationSnapshot(store, bare.id)?.priorReview, undefined, 'a generation no re-review drafted has none');
    } finally {
      store.close();
    }
  });
});
