import * as assert from 'node:assert/strict';
import { h } from 'preact';
import type { GenerationSnapshot, PriorReview } from '../../../protocol';
import { GenerationView } from '../../../webview/board/GenerationView';
import { priorItemsSummary } from '../../../webview/board/PriorItems';
import { generation } from './boardFixtures';
import { all, byTestId, click, happyDomPerTest, mount, one, text } from './happyDom';

/** A re-review's Prior items with the Flagged lens: the line, each item resolved (its evidence opens) or open, hostile forge text inert. */
describe('webview/board: Prior items of a re-review (happy-dom)', () => {
  const { dom, actions } = happyDomPerTest({ scripts: true });
  const prior: PriorReview = {
    delta: { kind: 'ancestor', from: 'a'.repeat(40), to: 'b'.repeat(40), reason: null },
    line: 'Prior review: 1 of 2 resolved',
    statement: 'The delta since your review at aaaaaaa is reviewed.',
    earlier: { reviewId: 7, url: 'https://github.com/acme/app/pull/3#pullrequestreview-7', state: 'CHANGES_REQUESTED', commitId: 'a'.repeat(40) },
    items: [
      {
        id: 'R1',
        path: 'src/app.js',
        line: 3,
        text: 'Check `n` before use.',
        severity: 'blocker',
        closure: 'resolved',
        reason: 'The head checks n first.',
        evidence: [{ path: 'src/app.js', side: 'head', line: 4 }],
      },
      {
        id: 'R2',
        path: null,
        line: null,
        text: 'Also [run](command:workbench.action.terminal.new) <img src=x onerror="window.pwned=1"> $(terminal)',
        severity: 'blocker',
        closure: 'open',
        reason: 'Nothing in the delta touches it.',
        evidence: [],
      },
    ],
    closureFailure: null,
    deltaPatchsetId: 'ps-delta',
  };
  const show = (snapshot: GenerationSnapshot) => mount(dom, actions, h(GenerationView, { snapshot, lens: 'flagged', onSelectLens: () => undefined }));

  it('shows the line, the summary and every item with its closure; resolved evidence opens its line on this capture', async () => {
    await show({ ...generation(), priorReview: prior });
    const section = one(dom.root, byTestId('prior-items'));
    assert.equal(text(one(section, byTestId('prior-line'))), 'Prior review: 1 of 2 resolved');
    assert.match(text(one(section, byTestId('prior-statement'))), /1 of 2 earlier items resolved\.$/);
    assert.deepEqual(
      all(section, byTestId('prior-item')).map((li) => [li.getAttribute('data-item'), li.getAttribute('data-closure')]),
      [
        ['R1', 'resolved'],
        ['R2', 'open'],
      ],
    );
    const evidence = all(section, byTestId('prior-evidence'));
    assert.deepEqual(evidence.map(text), ['src/app.js:4']);
    await click(evidence[0] as HTMLElement);
    assert.deepEqual(actions.calls.at(-1), { type: 'openCitation', path: 'src/app.js', side: 'head', startLine: 4, endLine: 4 });
  });

  it('renders the earlier review’s text inert: no command link, no image, no script', async () => {
    await show({ ...generation(), priorReview: prior });
    const section = one(dom.root, byTestId('prior-items'));
    assert.equal(all(section, 'a[href^="command:"]').length, 0);
    assert.equal(all(section, 'img').length, 0);
    assert.equal((dom.window as unknown as { pwned?: number }).pwned, undefined);
    assert.match(text(section), /\$\(terminal\)/);
  });

  it('says when no item could be judged, and is absent on other lenses and on generations no re-review drafted', async () => {
    await show({ ...generation(), priorReview: { ...prior, closureFailure: 'no harness is available to judge the earlier items; they stay open' } });
    assert.match(text(one(dom.root, byTestId('prior-failure'))), /^Not judged no harness is available/);
    await show(generation());
    assert.equal(all(dom.root, byTestId('prior-items')).length, 0);
    await mount(dom, actions, h(GenerationView, { snapshot: { ...generation(), priorReview: prior }, lens: 'design', onSelectLens: () => undefined }));
    assert.equal(all(dom.root, byTestId('prior-items')).length, 0);
    assert.equal(priorItemsSummary({ ...prior, items: [] }), 'Your earlier review had no items to follow up.');
  });
});
