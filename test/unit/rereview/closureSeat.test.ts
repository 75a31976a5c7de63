import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { capturePatchset } from '../../../host/capture/capture';
import { openRepo } from '../../../host/capture/repo';
import type { EarlierReview } from '../../../host/forge/types';
import type { Harness } from '../../../host/pipeline/ports';
import { READ_PRIOR_ITEMS, runClosureTurn, SUBMIT_CLOSURES, type ClosureOutcome, type ClosureTurnInput } from '../../../host/rereview/closureSeat';
import { sinceLastReview } from '../../../host/rereview/sinceLast';
import type { LensHarness } from '../../../host/harness/harnessConfig';
import { evidenceManifest } from '../../../host/rounds/evidence';
import { READ_RESULT_MAX_BYTES, READ_TOOL_NAMES } from '../../../protocol/read';
import type { EvidenceUnit } from '../../../protocol/rounds';
import { TestRepo } from '../../fixtures/gitRepo';
import { ReadingCloser, type Closure, type Reading } from './closerFixture';

/**
 * The closure seat's one turn, driven by an in-process harness that behaves like a model: it reads
 * every read_prior_items page, reads the fixed file through read_diff (the read tools over the fix
 * delta) and cites only the ev- ids it read. Lies are refused at once and may be corrected within
 * the turn; a turn that hands in nothing, a refused last word, a broken or stopped harness and no
 * harness at all leave every item open with the reason; no items means no turn.
 */

describe('host/rereview/closureSeat: one turn, verified at once, never throws', function () {
  this.timeout(60_000);
  let repo: TestRepo;
  let dir: string;
  let input: ClosureTurnInput;
  /** The reviewed change's own hunk (line 2): a unit of the whole change, not of the fix delta. */
  let outside: EvidenceUnit;
  let head: string;

  before(async () => {
    repo = new TestRepo();
    repo.write('app.txt', Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join('\n') + '\n').write('old.txt', 'keep\n');
    repo.commit('base');
    repo.branch('feature');
    repo.write('app.txt', repo.read('app.txt').replace('line 2\n', 'line two\n').replace('line 5\n', 'line 5!\n'));
    const review = repo.commit('feature');
    repo.write('app.txt', repo.read('app.txt').replace('line 5!\n', 'line five\n'));
    repo.git('mv', 'old.txt', 'new.txt');
    head = repo.commit('fix: spell five out, rename old');
    const handle = await openRepo(repo.dir);
    assert.ok(handle.ok);
    const full = await capturePatchset(handle.value, { kind: 'branch', base: 'main', head: 'feature' });
    assert.ok(full.ok);
    const whole = evidenceManifest(full.value.files);
    assert.ok(whole.ok);
    outside = whole.value.find((u) => u.kind === 'text-hunk' && u.body.includes('+line two')) as EvidenceUnit;
    assert.ok(outside);
    const earlier: EarlierReview = {
      reviewId: 1,
      url: 'https://github.example/acme/app/pull/1#pullrequestreview-1',
      commitId: review,
      state: 'CHANGES_REQUESTED',
      body: '- Rename old.txt.\n- Add a test.',
      markerId: null,
      submittedAt: null,
      comments: [{ path: 'app.txt', line: 5, side: 'RIGHT', body: 'Spell five out; no exclamation.' }],
    };
    const since = await sinceLastReview({ root: repo.dir, full: full.value, earlier, ownRequest: false });
    assert.ok(since.ok && since.value.deltaPatchset);
    dir = mkdtempSync(join(tmpdir(), 'rennet-closures-'));
    const s = since.value;
    input = { from: review, to: head, items: s.items, manifest: s.manifest, workspace: repo.dir, delta: s.deltaPatchset as NonNullable<typeof s.deltaPatchset>, contextDir: dir };
    assert.deepEqual(
      input.items.map((i) => i.id),
      ['R1', 'R2', 'R3'],
    );
    assert.deepEqual(
      input.manifest.map((u) => [u.kind, u.path]),
      [
        ['text-hunk', 'app.txt'],
        ['rename', 'new.txt'],
      ],
    );
    assert.ok(!input.manifest.some((u) => u.id === outside.id), 'the reviewed change’s hunk is not a unit of the delta');
  });
  after(() => {
    repo?.cleanup();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const using = (harness: Harness | null, hint: string | null = null) => {
    let asked = 0;
    const of = async (): Promise<LensHarness> => {
      asked++;
      return { harness, hint };
    };
    return { of, asked: () => asked };
  };
  const turn = async (
    harnessOf: (signal: AbortSignal) => Promise<LensHarness>,
    over: Partial<ClosureTurnInput> = {},
    options: { signal?: AbortSignal; timeoutMs?: number } = {},
  ): Promise<ClosureOutcome> => {
    const r = await runClosureTurn(harnessOf, { ...input, ...over }, options);
    assert.ok(r.ok, 'a closure turn answers ok whatever happens');
    return r.value;
  };
  const unitOf = (read: Reading, kind: EvidenceUnit['kind'], path: string) => {
    const u = read.units.find((x) => x.kind === kind && x.path === path);
    assert.ok(u, `the seat read a ${kind} of ${path}`);
    return u.id;
  };
  const allOpenWith = (outcome: ClosureOutcome, why: RegExp) => {
    assert.ok(outcome.failure && why.test(outcome.failure), outcome.failure ?? 'no failure');
    assert.deepEqual(
      outcome.closures.map((c) => [c.item.id, c.closure, c.reason, c.evidence]),
      input.items.map((i) => [i.id, 'open', outcome.failure, []]),
    );
  };

  it('reads, then cites what it read: accepted; the evidence is the changed line the host derives', async () => {
    const closer = new ReadingCloser(['app.txt'], (read) => {
      // A model cites only after it has seen the fix where the item pointed.
      assert.match(read.diffs.get('app.txt') ?? '', /^\+ +5 \| line five$/m);
      return [
        {
          closures: [
            { itemId: 'R1', closure: 'resolved', evidenceIds: [unitOf(read, 'text-hunk', 'app.txt')], reason: 'Line 5 now reads "line five".' },
            { itemId: 'R2', closure: 'resolved', evidenceIds: [unitOf(read, 'rename', 'new.txt'), unitOf(read, 'text-hunk', 'app.txt')], reason: 'old.txt is renamed to new.txt.' },
            { itemId: 'R3', closure: 'open', evidenceIds: [], reason: 'No test was added.' },
          ],
        },
      ];
    });
    const h = using(closer);
    const outcome = await turn(h.of);
    assert.equal(closer.turns, 1);
    assert.deepEqual([...closer.offered].sort(), [...READ_TOOL_NAMES, READ_PRIOR_ITEMS, SUBMIT_CLOSURES].sort(), 'its own tools and the read tools');
    assert.equal(closer.reading?.pages, 1);
    assert.deepEqual(
      closer.reading?.items.map((i) => [i.id, i.path, i.line, i.text]),
      [
        ['R1', 'app.txt', 5, 'Spell five out; no exclamation.'],
        ['R2', null, null, 'Rename old.txt.'],
        ['R3', null, null, 'Add a test.'],
      ],
    );
    const diff = closer.reading?.diffs.get('app.txt') ?? '';
    assert.match(diff, /^\+ +5 \| line five$/m, `read_diff serves the fix delta: the fix added at head line 5: ${diff}`);
    assert.match(diff, /^- +5 +\| line 5!$/m, 'and the reviewed line taken out');
    assert.match(diff, /^ +2 +2 \| line two$/m, 'the reviewed change on line 2 is only context here: its base is the reviewed commit');
    assert.deepEqual(
      closer.answers.map((a) => [a.isError, a.text]),
      [[false, 'The closures are accepted: 2 of 3 items resolved. End your turn now.']],
    );

    assert.equal(outcome.failure, null);
    assert.deepEqual([outcome.harness, outcome.model], ['scripted-closer', null]);
    assert.ok(outcome.spend);
    assert.deepEqual([outcome.spend.seat, outcome.spend.lens, outcome.spend.inputTokens, outcome.spend.toolCalls, outcome.spend.readCalls], ['rereview:closures', 'flagged', 1000, 3, 1]);
    const hunk = input.manifest.find((u) => u.kind === 'text-hunk') as EvidenceUnit;
    const rename = input.manifest.find((u) => u.kind === 'rename') as EvidenceUnit;
    assert.deepEqual(
      outcome.closures.map((c) => [c.item.id, c.closure, c.reason, c.evidence]),
      [
        ['R1', 'resolved', 'Line 5 now reads "line five".', [{ evidenceId: hunk.id, kind: 'text-hunk', path: 'app.txt', side: 'head', line: 5 }]],
        [
          'R2',
          'resolved',
          'old.txt is renamed to new.txt.',
          [
            { evidenceId: rename.id, kind: 'rename', path: 'new.txt', side: null, line: null },
            { evidenceId: hunk.id, kind: 'text-hunk', path: 'app.txt', side: 'head', line: 5 },
          ],
        ],
        ['R3', 'open', 'No test was added.', []],
      ],
    );
    assert.equal(repo.git('show', `${head}:app.txt`).split('\n')[4], 'line five', 'the derived line is the fixed line at the head');
  });

  it('lies are refused at once, each with why, and corrected within the turn; a second hand-in after acceptance is refused and changes nothing', async () => {
    const closer = new ReadingCloser(
      [],
      (read) => {
        const hunk = unitOf(read, 'text-hunk', 'app.txt');
        const rename = unitOf(read, 'rename', 'new.txt');
        const one = (c: Closure) => ({ closures: [c] });
        return [
          // A unit of the whole change, not of the fix delta.
          one({ itemId: 'R1', closure: 'resolved', evidenceIds: [outside.id], reason: 'Line 2 was spelled out.' }),
          // A context line, named by where it is: only units are citable.
          one({ itemId: 'R1', closure: 'resolved', evidenceIds: ['app.txt:head:4'], reason: 'Line 4 shows it.' }),
          // Only a rename: nothing about a line.
          one({ itemId: 'R1', closure: 'resolved', evidenceIds: [rename], reason: 'Renamed.' }),
          // Resolved on nothing at all.
          one({ itemId: 'R1', closure: 'resolved', evidenceIds: [], reason: 'Trust me.' }),
          // An item the earlier review does not have.
          one({ itemId: 'R9', closure: 'open', evidenceIds: [], reason: 'Not there.' }),
          // The same item twice.
          {
            closures: [
              { itemId: 'R1', closure: 'open', evidenceIds: [], reason: 'a' },
              { itemId: 'R1', closure: 'resolved', evidenceIds: [hunk], reason: 'b' },
            ],
          },
          // No reason.
          one({ itemId: 'R3', closure: 'open', evidenceIds: [], reason: '   ' }),
          // Not the tool's shape.
          { closures: [{ itemId: 'R1', closure: 'fixed', evidenceIds: [hunk], reason: 'x' }] },
          // Corrected.
          one({ itemId: 'R1', closure: 'resolved', evidenceIds: [hunk], reason: 'Line 5 reads "line five".' }),
        ];
      },
      { afterAccepted: true },
    );
    const outcome = await turn(using(closer).of);
    const texts = closer.answers.map((a) => `${a.isError ? 'ERR' : 'OK'} ${a.text}`);
    const expected = [
      /^ERR The closures were not accepted \(unknown-evidence\): the closure of R1 cites ev-[0-9a-f]+, which is not a unit of the fix delta\. Correct them/,
      /^ERR The closures were not accepted \(unknown-evidence\): the closure of R1 cites app\.txt:head:4, which is not a unit/,
      /^ERR The closures were not accepted \(no-line-evidence\): R1 is closed as resolved without a changed line/,
      /^ERR The closures were not accepted \(no-line-evidence\)/,
      /^ERR The closures were not accepted \(unknown-item\): a closure names item R9/,
      /^ERR The closures were not accepted \(duplicate-item\): item R1 is closed twice/,
      /^ERR The closures were not accepted \(no-reason\): the closure of R3 says nothing about why/,
      /^ERR The input of submit_closures is not valid \(closures\.0\.closure: /,
      /^OK The closures are accepted: 1 of 3 items resolved\. End your turn now\.$/,
      /^ERR The closures were already accepted; they stand\. End your turn now\.$/,
    ];
    assert.equal(texts.length, expected.length, texts.join('\n'));
    expected.forEach((re, i) => assert.match(texts[i] as string, re));
    assert.equal(outcome.failure, null);
    assert.ok(outcome.spend && outcome.spend.refusals === 9, JSON.stringify(outcome.spend));
    assert.deepEqual(
      outcome.closures.map((c) => [c.item.id, c.closure, c.reason, c.evidence.map((e) => [e.path, e.side, e.line])]),
      [
        ['R1', 'resolved', 'Line 5 reads "line five".', [['app.txt', 'head', 5]]],
        ['R2', 'open', 'no closure was given for it: it stays open', []],
        ['R3', 'open', 'no closure was given for it: it stays open', []],
      ],
    );
  });

  it('a lie never corrected: every item open, the refusal said', async () => {
    const closer = new ReadingCloser([], () => [{ closures: [{ itemId: 'R1', closure: 'resolved', evidenceIds: [outside.id], reason: 'Line 2 was spelled out.' }] }]);
    const outcome = await turn(using(closer).of);
    allOpenWith(outcome, /^the closure seat's last closures were refused \(unknown-evidence: the closure of R1 cites ev-[0-9a-f]+, which is not a unit of the fix delta\); every item stays open$/);
    assert.equal(outcome.harness, 'scripted-closer');
  });

  it('a turn that never hands in closures: every item open, with what it did', async () => {
    const closer = new ReadingCloser(['app.txt'], () => []);
    const outcome = await turn(using(closer).of);
    assert.equal(closer.reading?.pages, 1, 'it read, but handed in nothing');
    allOpenWith(outcome, /^the closure seat ended its turn without handing in closures \(1 tool call, 1 page read; 1 read, \d+ KiB, \d+ ms of the change\); every item stays open$/);
  });

  it('a harness that fails, throws or is stopped: every item open, said', async () => {
    const failing: Harness = { kind: 'failing', origin: 'other', model: 'm1', runTurn: async () => ({ outcome: 'failed', message: 'the model said no', usage: null }) };
    allOpenWith(await turn(using(failing).of), /^the closure seat failed \(the model said no\); every item stays open$/);
    const throwing: Harness = {
      kind: 'throwing',
      origin: 'other',
      model: null,
      runTurn: async () => {
        throw new Error('socket hang up');
      },
    };
    allOpenWith(await turn(using(throwing).of), /^the closure seat failed \(the harness broke: socket hang up\); every item stays open$/);

    // Stopped: by the turn's own timeout, and by the caller's signal.
    const waiting: Harness = {
      kind: 'waiting',
      origin: 'other',
      model: null,
      runTurn: (request) => new Promise((resolve) => request.signal.addEventListener('abort', () => resolve({ outcome: 'aborted', message: null, usage: null }), { once: true })),
    };
    allOpenWith(await turn(using(waiting).of, {}, { timeoutMs: 50 }), /^the closure seat was stopped before it handed in its closures; every item stays open$/);
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 50);
    allOpenWith(await turn(using(waiting).of, {}, { signal: stop.signal }), /^the closure seat was stopped before/);

    const broken = async (): Promise<LensHarness> => {
      throw new Error('no such model');
    };
    allOpenWith(await turn(broken), /^the closure seat's harness could not be used: no such model$/);
  });

  it('no harness: every item open, with the hint', async () => {
    const h = using(null, 'run `rennet harnesses` to set one up');
    const outcome = await turn(h.of);
    assert.equal(h.asked(), 1);
    allOpenWith(outcome, /^no harness is available to judge the earlier items \(run `rennet harnesses` to set one up\); they stay open$/);
    assert.deepEqual([outcome.harness, outcome.model, outcome.spend], [null, null, null]);
    allOpenWith(await turn(using(null).of), /^no harness is available to judge the earlier items; they stay open$/);
  });

  it('no items: no turn at all, not even a harness asked for', async () => {
    const closer = new ReadingCloser([], () => []);
    const h = using(closer);
    const outcome = await turn(h.of, { items: [] });
    assert.deepEqual(outcome, { closures: [], failure: null, harness: null, model: null, spend: null });
    assert.equal(h.asked(), 0);
    assert.equal(closer.turns, 0);
  });

  it('a delta too large for one page: the seat pages through every page and may cite a unit from the last', async () => {
    const r = new TestRepo();
    try {
      const files = Array.from({ length: 48 }, (_, i) => `src/f${String(i).padStart(2, '0')}.txt`);
      for (const f of files) r.write(f, 'one\n');
      r.commit('base');
      r.branch('feature');
      r.write('app.txt', 'reviewed\n');
      const review = r.commit('feature');
      // Each file gains one long line: the units together are well over one page.
      for (const f of files) r.write(f, `one\n${`${f} `.repeat(60)}\n`);
      const fixHead = r.commit('fix: many files');
      const handle = await openRepo(r.dir);
      assert.ok(handle.ok);
      const full = await capturePatchset(handle.value, { kind: 'branch', base: 'main', head: 'feature' });
      assert.ok(full.ok);
      const since = await sinceLastReview({
        root: r.dir,
        full: full.value,
        earlier: { reviewId: 2, url: 'u', commitId: review, state: 'COMMENTED', body: 'Touch the last file.', markerId: null, submittedAt: null, comments: [] },
        ownRequest: false,
      });
      assert.ok(since.ok && since.value.deltaPatchset);
      assert.equal(since.value.manifest.length, files.length);
      const last = files.at(-1) as string;
      const closer = new ReadingCloser([last], (read) => [
        { closures: [{ itemId: 'R1', closure: 'resolved', evidenceIds: [unitOf(read, 'text-hunk', last)], reason: 'The last file gained its line.' }] },
      ]);
      const outcome = await turn(using(closer).of, { from: review, to: fixHead, items: since.value.items, manifest: since.value.manifest, workspace: r.dir, delta: since.value.deltaPatchset });
      const pages = closer.reading?.pages ?? 0;
      assert.ok(pages >= 2, `pages: ${pages}`);
      assert.equal(closer.reading?.units.length, files.length, 'every unit, across the pages');
      assert.equal(outcome.failure, null);
      assert.deepEqual(
        outcome.closures.map((c) => [c.item.id, c.closure, c.item.severity, c.evidence.map((e) => [e.path, e.side, e.line])]),
        [['R1', 'resolved', 'nit', [[last, 'head', 2]]]],
      );
    } finally {
      r.cleanup();
    }
  });

  it('every page fits the read tools’ result limit; past the last page is refused', async () => {
    const { priorItemPages, closureSurface } = await import('../../../host/rereview/closureSeat');
    const many = Array.from({ length: 80 }, (_, i): EvidenceUnit => ({
      kind: 'text-hunk',
      id: `ev-${i.toString(16).padStart(16, '0')}`,
      path: `p${i}.txt`,
      header: '@@ -1 +1,2 @@',
      body: ` one\n+${'x'.repeat(400)}`,
      anchor: { side: 'head', line: 2 },
    }));
    const pages = priorItemPages({ from: 'a'.repeat(40), to: 'b'.repeat(40), items: input.items, manifest: many });
    assert.ok(pages.length >= 2);
    for (const [i, p] of pages.entries()) {
      assert.ok(Buffer.byteLength(p, 'utf8') <= READ_RESULT_MAX_BYTES, `page ${i + 1}: ${Buffer.byteLength(p, 'utf8')} bytes`);
      assert.match(
        p,
        i + 1 < pages.length
          ? new RegExp(`\\[page ${i + 1} of ${pages.length}; continue with read_prior_items \\{"page": ${i + 2}\\}\\]$`)
          : new RegExp(`\\[page ${i + 1} of ${pages.length}: the last\\]$`),
      );
    }
    const units = pages.flatMap((p) => p.split('\n').filter((l) => l.startsWith('{"') && l.includes('"kind"')));
    assert.equal(units.length, many.length, 'every unit on exactly one page');
    const surface = closureSurface({ from: 'a'.repeat(40), to: 'b'.repeat(40), items: input.items, manifest: many });
    const past = surface.call(READ_PRIOR_ITEMS, { page: pages.length + 1 });
    assert.deepEqual(past, { text: `There are ${pages.length} pages; page ${pages.length + 1} does not exist.`, isError: true });
    assert.equal(surface.call('read_everything', {}).isError, true);
    assert.deepEqual(surface.stats(), { calls: 2, refusals: 2, pagesRead: 0 });
  });
});
