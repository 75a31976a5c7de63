import * as assert from 'node:assert/strict';
import { h } from 'preact';
import { useState } from 'preact/hooks';
import { LENSES, type GenerationSnapshot, type Lens } from '../../../protocol';
import { GenerationView } from '../../../webview/board/GenerationView';
import { NOISE_WAITING_EXPLANATION } from '../../../webview/board/words';
import { boardView, generation, lane } from './boardFixtures';
import { all, byTestId, click, happyDomPerTest, key, mount, one, text } from './happyDom';

/** GenerationView with the selection held the way the App holds it. */
function Harness({ snapshot, initial = null }: { snapshot: GenerationSnapshot; initial?: Lens | null }) {
  const [lens, setLens] = useState<Lens | null>(initial);
  return h(GenerationView, { snapshot, lens, onSelectLens: setLens });
}

describe('webview/board: the lens rail (happy-dom)', () => {
  const { dom, actions } = happyDomPerTest();
  const show = (snapshot: GenerationSnapshot, initial: Lens | null = null) => mount(dom, actions, h(Harness, { snapshot, initial }));
  const tabs = () => all(dom.root, byTestId('lens-tab'));
  const tab = (lens: Lens) => one(dom.root, `[data-testid="lens-tab"][data-lens="${lens}"]`);
  const selected = () =>
    tabs()
      .filter((t) => t.getAttribute('aria-selected') === 'true')
      .map((t) => t.getAttribute('data-lens'));
  const shownLens = () => one(dom.root, byTestId('board')).getAttribute('data-lens');

  const mixed = () =>
    generation({
      lanes: [
        lane('design', 'failed', { failure: { message: 'x', retryable: true, attempts: 1 } }),
        lane('sequence', 'working', { board: boardView('sequence', [], { status: 'drafting' }) }),
        lane('decisions', 'absent', { absence: 'no-decisions', board: boardView('decisions', [], { status: 'absent', absence: 'no-decisions' }) }),
        lane('flagged', 'settled'),
        lane('noise', 'waiting'),
      ],
    });

  it('has one tab per lens in canonical order, each with its seat state in words and a glyph', async () => {
    await show(mixed());
    const rail = one(dom.root, byTestId('lens-rail'));
    assert.equal(rail.getAttribute('role'), 'tablist');
    assert.deepEqual(
      tabs().map((t) => [t.getAttribute('data-lens'), t.getAttribute('data-state'), text(t)]),
      [
        ['design', 'failed', 'Design ✕ failed'],
        ['sequence', 'working', 'Sequence ◐ working'],
        ['decisions', 'absent', 'Decisions ∅ absent'],
        ['flagged', 'settled', 'Flagged ✓ settled'],
        ['noise', 'waiting', 'Noise ◷ waiting'],
      ],
    );
    for (const t of tabs()) {
      assert.equal(t.tagName, 'BUTTON');
      assert.equal(t.getAttribute('role'), 'tab');
      assert.ok(!t.hasAttribute('disabled'), 'a tab is never disabled');
      assert.equal(t.getAttribute('aria-disabled'), null);
      assert.equal(one(t, '.rn-state-icon').getAttribute('aria-hidden'), 'true');
    }
  });

  it('selects Flagged by default, with a roving tabindex and a labelled tabpanel', async () => {
    await show(mixed());
    assert.deepEqual(selected(), ['flagged']);
    assert.deepEqual(
      tabs().map((t) => t.getAttribute('tabindex')),
      ['-1', '-1', '-1', '0', '-1'],
    );
    const panel = one(dom.root, '[role="tabpanel"]');
    assert.equal(panel.getAttribute('aria-labelledby'), tab('flagged').id);
    assert.equal(tab('flagged').getAttribute('aria-controls'), panel.id);
    assert.equal(shownLens(), 'flagged');
  });

  it('selects the first lens with a board when Flagged has none, and takes Flagged back when it arrives', async () => {
    const early = generation({
      lanes: [lane('design', 'queued'), lane('sequence', 'settled'), lane('decisions', 'working'), lane('flagged', 'queued'), lane('noise', 'queued')],
    });
    await show(early);
    assert.deepEqual(selected(), ['sequence']);
    await show(generation({ lanes: early.lanes.map((l) => (l.lens === 'flagged' ? lane('flagged', 'settled') : l)) }));
    assert.deepEqual(selected(), ['flagged'], 'the unchosen selection follows the Flagged arrival');
  });

  it('keeps a chosen lens across snapshots; a running lens is selectable', async () => {
    await show(mixed());
    await click(tab('sequence'));
    assert.deepEqual(selected(), ['sequence']);
    assert.equal(one(dom.root, byTestId('board')).getAttribute('data-state'), 'working');
    await show(generation());
    assert.deepEqual(selected(), ['sequence']);
  });

  it('moves along the rail with the arrow keys, Home and End, focus following the selection', async () => {
    await show(mixed());
    tab('flagged').focus();
    await key(tab('flagged'), 'ArrowRight');
    assert.deepEqual(selected(), ['noise']);
    assert.equal(dom.document.activeElement, tab('noise'));
    assert.equal(shownLens(), 'noise');
    await key(tab('noise'), 'ArrowRight');
    assert.deepEqual(selected(), ['design'], 'wraps around');
    assert.equal(dom.document.activeElement, tab('design'));
    await key(tab('design'), 'ArrowLeft');
    assert.deepEqual(selected(), ['noise']);
    await key(tab('noise'), 'Home');
    assert.deepEqual(selected(), ['design']);
    await key(tab('design'), 'End');
    assert.deepEqual(selected(), ['noise']);
    assert.deepEqual(
      tabs().map((t) => t.getAttribute('tabindex')),
      ['-1', '-1', '-1', '-1', '0'],
    );
    await key(tab('noise'), 'x');
    assert.deepEqual(selected(), ['noise'], 'other keys do nothing');
  });

  it('explains a waiting Noise lane on hover (title) and keyboard focus (aria-describedby)', async () => {
    await show(mixed());
    const noise = tab('noise');
    assert.equal(noise.getAttribute('title'), NOISE_WAITING_EXPLANATION);
    const describedBy = noise.getAttribute('aria-describedby');
    assert.ok(describedBy);
    const tooltip = dom.document.getElementById(describedBy);
    assert.ok(tooltip);
    assert.equal(tooltip.getAttribute('role'), 'tooltip');
    assert.equal(text(tooltip), NOISE_WAITING_EXPLANATION);
    assert.ok(noise.classList.contains('rn-tab-described'), 'the stylesheet shows the tooltip on :focus-visible');
    // Once Noise runs, no explanation is attached.
    await show(generation());
    assert.equal(tab('noise').getAttribute('aria-describedby'), null);
    assert.equal(all(dom.root, byTestId('noise-waiting-explanation')).length, 0);
  });

  it('never drops a tab as lanes move through their states', async () => {
    const states = ['queued', 'waiting', 'working', 'settled', 'absent', 'failed'] as const;
    await show(generation(), 'design');
    for (const state of states) {
      await show(generation({ lanes: LENSES.map((l) => lane(l, state, state === 'failed' ? { failure: { message: 'm', retryable: null, attempts: 0 } } : {})) }));
      assert.deepEqual(
        tabs().map((t) => t.getAttribute('data-lens')),
        [...LENSES],
      );
      assert.ok(tabs().every((t) => t.getAttribute('data-state') === state));
      assert.equal(all(dom.root, byTestId('board')).length, 1, `a board view for ${state}`);
    }
  });

  it("a round successor's settled lanes read carrying forward or reworked from the composition's verdict; other lanes and generations read nothing more", async () => {
    const delta = (verdict: 'carrying-forward' | 'reworked', patch: Partial<{ added: number; reworked: number; removed: string[] }> = {}) => ({
      verdict,
      round: 3,
      added: 0,
      reworked: 0,
      removed: [],
      ...patch,
    });
    await show(
      generation({
        lanes: [
          lane('design', 'settled', { delta: delta('carrying-forward') }),
          lane('sequence', 'settled', { delta: delta('reworked', { added: 1 }) }),
          lane('decisions', 'absent', {
            absence: 'no-decisions',
            board: boardView('decisions', [], { status: 'absent', absence: 'no-decisions' }),
            delta: delta('reworked', { removed: ['Storage'] }),
          }),
          lane('flagged', 'working', { board: boardView('flagged', [], { status: 'drafting' }), delta: delta('carrying-forward') }),
          lane('noise', 'settled'),
        ],
      }),
    );
    assert.deepEqual(
      tabs().map((t) => text(t)),
      ['Design ✓ settled carrying forward', 'Sequence ✓ settled •reworked', 'Decisions ∅ absent •reworked', 'Flagged ◐ working', 'Noise ✓ settled'],
    );
    assert.match(tab('sequence').getAttribute('title') ?? '', /Round 3: re-drafted; sections 1 new\.$/);
    assert.match(tab('decisions').getAttribute('title') ?? '', /sections 1 removed\.$/);
    assert.match(tab('design').getAttribute('title') ?? '', /Round 3: re-drafted, and nothing on this board changed\.$/);
  });
});
