import * as assert from 'node:assert/strict';
import { h } from 'preact';
import { act } from 'preact/test-utils';
import { render } from 'preact';
import { FromWebview, type GenerationSnapshot, type Round, type RoundDiffFocus } from '../../../protocol';
import { RoundsArea } from '../../../webview/board/Rounds';
import { generation } from './boardFixtures';
import { snapshot } from './fixtures';
import { all, byTestId, click, FakeBridge, happyDomPerTest, mount, mountApp, one, text } from './happyDom';
import { CANARY, PAYLOADS } from './hostileFixtures';
import { FROM, TO, report, returned, round } from './roundFixtures';

/**
 * The panel's rounds area in happy-dom: the run view while a round runs (and the same view after a
 * remount mid-round: it is drawn from the record alone), a failed and a cancelled round, the report
 * greeting with evidence opening the round's own diff, hostile ask text and notes rendered inert
 * with scripts ON, and a six-round ledger whose every row opens its own report and its own diff.
 */
describe('webview/board/Rounds: run view, greeting and ledger (happy-dom)', () => {
  const { dom, actions, reinstall } = happyDomPerTest();
  let opened: Array<{ roundId: string; at?: RoundDiffFocus }> = [];
  beforeEach(() => {
    opened = [];
  });
  const show = (rounds: Round[], gen: GenerationSnapshot | null = null) =>
    mount(dom, actions, h(RoundsArea, { rounds, generation: gen, onOpenRoundDiff: (roundId: string, at?: RoundDiffFocus) => opened.push(at ? { roundId, at } : { roundId }) }));
  const phases = () => all(dom.root, byTestId('rounds-phase')).map((li) => [li.getAttribute('data-phase'), li.getAttribute('data-mark')]);

  it('is absent until the review has a round', async () => {
    await show([]);
    assert.equal(all(dom.root, byTestId('rounds')).length, 0);
    assert.equal(dom.root.innerHTML, '');
  });

  it('the run view: ordinal, worker and version, dispatched asks, and every phase done / current / pending', async () => {
    const running = round({ ordinal: 4, phase: 'report', asks: ['a-1', 'a-2', 'a-3'] });
    await show([returned(1), returned(2), returned(3), running]);
    const run = one(dom.root, byTestId('rounds-run'));
    assert.equal(run.getAttribute('data-state'), 'running');
    assert.equal(run.getAttribute('data-phase'), 'report');
    assert.equal(text(one(run, 'h2')), 'Round 4 is running');
    assert.equal(text(one(run, '[data-fact="worker"]')), 'Claude Code 2.1.3');
    assert.equal(text(one(run, '[data-fact="asks"]')), '3 asks dispatched');
    assert.deepEqual(phases(), [
      ['prep', 'done'],
      ['worker', 'done'],
      ['commit', 'done'],
      ['report', 'current'],
      ['verification', 'pending'],
      ['regeneration', 'pending'],
    ]);
    assert.equal(one(run, '[aria-current="step"]').getAttribute('data-phase'), 'report');
    assert.match(text(one(run, byTestId('rounds-now'))), /^Report: /);
    assert.equal(all(dom.root, byTestId('rounds-greeting')).length, 0, 'no greeting while the newest round runs');

    // Reattach: a panel reloaded mid-round draws the same run from the same record.
    const before = dom.root.innerHTML;
    await act(() => render(null, dom.root));
    assert.equal(dom.root.innerHTML, '');
    await show([returned(1), returned(2), returned(3), running]);
    assert.equal(dom.root.innerHTML, before);
  });

  it('a failed round shows its failure phase and message, whether it is retryable, and where Retry is', async () => {
    const failed = round({ ordinal: 2, state: 'failed', phase: 'verification', failure: { phase: 'verification', message: 'the report cited ev-x twice <b>', retryable: true } });
    await show([returned(1), failed]);
    const run = one(dom.root, byTestId('rounds-run'));
    assert.equal(run.getAttribute('data-state'), 'failed');
    assert.equal(text(one(run, 'h2')), 'Round 2 failed at verification');
    assert.equal(text(one(run, byTestId('rounds-failure'))), 'the report cited ev-x twice <b>');
    assert.equal(all(run, 'b').length, 0, 'the host’s words are text');
    const retry = one(run, byTestId('rounds-retry'));
    assert.equal(retry.getAttribute('data-retryable'), 'true');
    assert.match(text(retry), /Hand off view/);
    assert.deepEqual(
      phases().map(([, mark]) => mark),
      ['done', 'done', 'done', 'done', 'failed', 'skipped'],
    );
    assert.equal(all(dom.root, 'button').filter((b) => /retry/i.test(text(b))).length, 0, 'Retry is not offered here');

    await show([returned(1), { ...failed, failure: { phase: 'worker', message: 'claude exited 1', retryable: false }, phase: 'worker' }]);
    const lead = one(dom.root, byTestId('rounds-run'));
    assert.equal(one(lead, byTestId('rounds-retry')).getAttribute('data-retryable'), 'false');
    assert.match(text(one(lead, byTestId('rounds-retry'))), /^Not retryable/);
    // The ledger row of a failed round says the same.
    const row = one(dom.root, `${byTestId('rounds-row')}[data-ordinal="2"]`);
    assert.equal(text(one(row, byTestId('rounds-row-state'))), 'failed at worker');
    assert.equal(text(one(row, byTestId('rounds-failure'))), 'claude exited 1');
  });

  it('a cancelled round says so, and where it stopped', async () => {
    await show([round({ ordinal: 1, state: 'cancelled', phase: 'worker' })]);
    const run = one(dom.root, byTestId('rounds-run'));
    assert.equal(run.getAttribute('data-state'), 'cancelled');
    assert.equal(text(one(run, 'h2')), 'Round 1 was cancelled');
    assert.match(text(one(run, byTestId('rounds-cancelled'))), /stopped at worker/);
  });

  it('the greeting: "Round N is back", the counts, one row per ask with outcome, note and evidence opening the round’s own diff', async () => {
    const r = returned(3, 'Rename `foo` to `bar`', {
      report: report('r-3', [
        { askId: 'ask-a', askText: 'Rename `foo` to `bar`', outcome: 'addressed', note: 'Renamed in **both** places.', path: 'src/foo.ts', line: 12 },
        { askId: 'ask-b', askText: 'Drop the old flag', outcome: 'partial', note: 'Only one call site.', path: 'src/flag.ts', line: 4, side: 'base' },
        { askId: 'ask-c', askText: 'Add a test', outcome: 'untouched' },
      ]),
    });
    await show([returned(1), returned(2), r]);
    const greeting = one(dom.root, byTestId('rounds-greeting'));
    assert.equal(text(one(greeting, 'h2')), 'Round 3 is back');
    assert.deepEqual(
      all(one(greeting, byTestId('rounds-counts')), '[data-count]').map((c) => [c.getAttribute('data-count'), c.getAttribute('data-value')]),
      [
        ['addressed', '1'],
        ['partial', '1'],
        ['untouched', '1'],
        ['beyond', '0'],
      ],
    );
    const outcomes = all(greeting, byTestId('rounds-outcome'));
    assert.deepEqual(
      outcomes.map((o) => [o.getAttribute('data-ask-id'), o.getAttribute('data-outcome'), text(one(o, byTestId('rounds-outcome-kind')))]),
      [
        ['ask-a', 'addressed', 'Addressed'],
        ['ask-b', 'partial', 'Partial'],
        ['ask-c', 'untouched', 'Untouched'],
      ],
    );
    assert.deepEqual(
      all(outcomes[0]!, 'code').map((c) => c.textContent),
      ['foo', 'bar'],
      'ask text is Markdown',
    );
    assert.equal(one(outcomes[0]!, 'strong').textContent, 'both', 'the note is Markdown');
    const evidence = all(greeting, byTestId('rounds-evidence'));
    assert.deepEqual(
      evidence.map((e) => text(e)),
      ['src/foo.ts:12 (new)', 'src/flag.ts:4 (old)'],
    );
    await click(evidence[0]!);
    await click(evidence[1]!);
    await click(one(greeting, byTestId('round-diff')));
    assert.deepEqual(opened, [{ roundId: 'r-3', at: { path: 'src/foo.ts', side: 'head', line: 12 } }, { roundId: 'r-3', at: { path: 'src/flag.ts', side: 'base', line: 4 } }, { roundId: 'r-3' }]);
    assert.deepEqual(actions.calls, [], 'evidence never opens on the review’s capture');
  });

  it('an unchanged round says the worker changed nothing, and offers no round diff', async () => {
    await show([returned(1), round({ ordinal: 2, state: 'unchanged', phase: 'commit', range: { from: TO, to: TO } })]);
    const lead = one(dom.root, byTestId('rounds-greeting'));
    assert.equal(lead.getAttribute('data-state'), 'unchanged');
    assert.equal(text(one(lead, 'h2')), 'Round 2 changed nothing');
    assert.match(text(one(lead, byTestId('rounds-unchanged'))), /without changing a file/);
    assert.equal(all(lead, byTestId('round-diff')).length, 0);
    const rows = all(dom.root, byTestId('rounds-row'));
    assert.equal(all(rows[0]!, byTestId('round-diff')).length, 0, 'absent, not disabled');
    assert.equal(all(rows[1]!, byTestId('round-diff')).length, 1);
  });

  it('six rounds: six ledger rows, newest first, each opening its own report and its own diff', async () => {
    const rounds = [1, 2, 3, 4, 5, 6].map((n) => returned(n, `ask text of round ${n}`));
    const gen = generation({ generationId: 'g-r-6', status: 'live', frozen: [1, 2, 3, 4, 5].map((n) => ({ generationId: `g-r-${n}`, patchsetId: `ps-r-${n}`, createdAt: '2025-03-01T10:00:00Z' })) });
    await show(rounds, gen);
    const ledger = one(dom.root, byTestId('rounds-ledger'));
    assert.equal(ledger.tagName, 'DETAILS');
    assert.equal(text(one(ledger, 'summary')), 'Rounds (6)');
    const rows = all(ledger, byTestId('rounds-row'));
    assert.deepEqual(
      rows.map((r) => r.getAttribute('data-ordinal')),
      ['6', '5', '4', '3', '2', '1'],
    );
    assert.equal(all(ledger, byTestId('rounds-report')).length, 0, 'reports stay folded until asked for');
    for (const row of rows) {
      assert.equal(text(one(row, byTestId('rounds-row-range'))), `${FROM.slice(0, 7)}..${TO.slice(0, 7)}`);
      assert.equal(text(one(row, byTestId('rounds-row-worker'))), 'Claude Code 2.1.3');
      assert.equal(text(one(row, byTestId('rounds-row-workspace'))), '/work/repo · feature');
      assert.equal(text(one(row, byTestId('rounds-row-asks'))), '1 ask');
    }
    // Each row opens its own report, not a shared one.
    for (const [i, row] of rows.entries()) {
      const n = 6 - i;
      const toggle = one(row, byTestId('rounds-report-toggle'));
      assert.equal(toggle.getAttribute('aria-expanded'), 'false');
      await click(toggle);
      assert.equal(toggle.getAttribute('aria-expanded'), 'true');
      const shown = one(row, byTestId('rounds-report'));
      assert.equal(shown.getAttribute('data-round-id'), `r-${n}`);
      assert.equal(text(one(shown, byTestId('rounds-ask-text'))), `ask text of round ${n}`);
      assert.equal(text(one(shown, byTestId('rounds-evidence'))), `src/app.js:${n} (new)`);
      assert.equal(all(ledger, byTestId('rounds-report')).length, 1, 'only the row asked for opens');
      await click(toggle);
      assert.equal(all(row, byTestId('rounds-report')).length, 0);
    }
    // Each row's round diff is its own.
    for (const row of rows) await click(one(row, byTestId('round-diff')));
    assert.deepEqual(
      opened.map((o) => o.roundId),
      ['r-6', 'r-5', 'r-4', 'r-3', 'r-2', 'r-1'],
    );
    // The generation each minted, and the one before it frozen, selectable read-only.
    assert.match(text(one(rows[0]!, byTestId('rounds-row-generation'))), /g-r-6 minted by this round; shown now/);
    assert.equal(all(one(rows[0]!, byTestId('rounds-row-generation')), 'button').length, 0, 'the shown generation is not offered again');
    const earlier = one(rows[0]!, byTestId('rounds-row-earlier'));
    assert.match(text(earlier), /g-r-5 frozen, kept read-only/);
    await click(one(earlier, byTestId('rounds-select-generation')));
    assert.deepEqual(actions.calls, [{ type: 'selectGeneration', generationId: 'g-r-5' }]);
    assert.match(text(one(rows[5]!, byTestId('rounds-row-earlier'))), /g-first live when it started/, 'a generation the panel does not list as frozen is not offered');
    assert.equal(all(one(rows[5]!, byTestId('rounds-row-earlier')), 'button').length, 0);
  });

  it('hostile ask text and notes render inert (scripts ENABLED): nothing runs, no active element, no live bad link', async () => {
    await reinstall({ scripts: true });
    const hostile = PAYLOADS.map((p, i) => ({
      askId: `ask-${i}`,
      askText: p,
      outcome: (i % 3 === 2 ? 'untouched' : 'addressed') as 'addressed' | 'untouched',
      note: `note ${p}`,
      path: `src/${i}.ts`,
      line: i + 1,
    }));
    const r = returned(1, 'x', { report: report('r-1', hostile, [{ evidence: [], note: PAYLOADS.join('\n\n') }]) });
    await show([r, returned(2, PAYLOADS.join('\n\n'))]);
    const pwned = () => (dom.window as unknown as { __pwned?: number }).__pwned ?? 0;
    assert.deepEqual(
      all(dom.root, 'script, iframe, object, embed, img, style, svg, form, input, link').map((e) => e.tagName),
      [],
    );
    for (const toggle of all(dom.root, byTestId('rounds-report-toggle'))) await click(toggle);
    assert.ok(all(dom.root, byTestId('rounds-outcome')).length >= PAYLOADS.length, 'every hostile ask has its row');
    assert.deepEqual(
      all(dom.root, 'script, iframe, object, embed, img, style, svg, form, input, link').map((e) => e.tagName),
      [],
    );
    for (const el of all(dom.root, '*')) {
      for (const name of el.getAttributeNames()) assert.ok(!/^on/i.test(name) && name !== 'style' && name !== 'src', `${el.tagName} carries ${name}`);
      const href = el.getAttribute('href');
      if (href !== null) assert.match(href, /^(https?:|mailto:|#)/i);
    }
    assert.ok(text(dom.root).includes('<script>'), 'markup shows as text');
    for (const button of all(dom.root, 'button')) await click(button);
    assert.equal(pwned(), 0, `the canary ran: ${CANARY}`);
  });
});

describe('webview/App: the rounds area from rennet/panel/rounds (happy-dom)', () => {
  const { dom } = happyDomPerTest();

  it('draws the rounds the extension sends whole, above the boards, and posts openRoundDiff as the contract says', async () => {
    const bridge = new FakeBridge();
    await mountApp(dom.root, bridge);
    await bridge.send({ type: 'rennet/panel/snapshot', snapshot: snapshot() });
    await bridge.send({ type: 'rennet/panel/generation', snapshot: generation() });
    assert.equal(all(dom.root, byTestId('rounds')).length, 0);
    await bridge.send({ type: 'rennet/panel/rounds', sessionId: 'ses-1', rounds: [round({ ordinal: 1, phase: 'worker' })] });
    assert.equal(one(dom.root, byTestId('rounds-run')).getAttribute('data-phase'), 'worker');
    const order = all(dom.root, `${byTestId('patchset-header')}, ${byTestId('rounds')}, ${byTestId('generation')}`).map((e) => e.getAttribute('data-testid'));
    assert.deepEqual(order, ['patchset-header', 'rounds', 'generation']);
    // The next snapshot replaces it whole: the round came back.
    await bridge.send({ type: 'rennet/panel/rounds', sessionId: 'ses-1', rounds: [returned(1)] });
    assert.equal(all(dom.root, byTestId('rounds-run')).length, 0);
    assert.equal(text(one(dom.root, `${byTestId('rounds-greeting')} h2`)), 'Round 1 is back');
    // Another session's rounds are not this panel's.
    await bridge.send({ type: 'rennet/panel/rounds', sessionId: 'ses-2', rounds: [round({ ordinal: 7 })] });
    assert.equal(text(one(dom.root, `${byTestId('rounds-greeting')} h2`)), 'Round 1 is back');
    bridge.posted.length = 0;
    await click(one(dom.root, `${byTestId('rounds-greeting')} ${byTestId('rounds-evidence')}`));
    await click(one(dom.root, `${byTestId('rounds-greeting')} ${byTestId('round-diff')}`));
    assert.deepEqual(bridge.posted, [
      { type: 'rennet/panel/openRoundDiff', roundId: 'r-1', at: { path: 'src/app.js', side: 'head', line: 1 } },
      { type: 'rennet/panel/openRoundDiff', roundId: 'r-1' },
    ]);
    for (const message of bridge.posted) assert.ok(FromWebview.safeParse(message).success);
  });
});
