import * as assert from 'node:assert/strict';
import type { BoardElement, GenerationDelta, GenerationSnapshot, LanePatch, ToWebview } from '../../../protocol';
import { initialModel, reduce, type PanelModel } from '../../../webview/state';
import { generation } from './boardFixtures';
import { snapshot } from './fixtures';
import { byTestId, click, FakeBridge, happyDomPerTest, mountApp, one } from './happyDom';

/**
 * The panel takes the shown generation's deltas (`rennet/panel/generationDelta`) on top of the
 * last generation posted, with the protocol's fold; one that does not apply changes nothing shown
 * and is asked about once (`rennet/panel/generationGap`), until a whole generation answers.
 */

const STREAM = 'g-0011223344556677.s1';
const shown = (): GenerationSnapshot => ({ ...generation(), revision: { stream: STREAM, n: 0 } });
const message = (m: ToWebview) => ({ type: 'message' as const, message: m });
const whole = (model: PanelModel, g: GenerationSnapshot | null) => reduce(model, message({ type: 'rennet/panel/generation', snapshot: g }));
const deltaMessage = (delta: GenerationDelta): ToWebview => ({ type: 'rennet/panel/generationDelta', delta });

function retitled(g: GenerationSnapshot, base: number, title: string): GenerationDelta {
  const board = g.lanes.find((l) => l.lens === 'flagged')!.board!;
  const finding = board.elements.find((e) => e.kind === 'finding') as Extract<BoardElement, { kind: 'finding' }>;
  const lane: LanePatch = { lens: 'flagged', board: { replace: false, status: board.status, absence: board.absence, revision: board.revision + 1, upserted: [{ ...finding, title }], removed: [] } };
  return { sessionId: g.sessionId, generationId: g.generationId, stream: STREAM, baseRevision: base, revision: base + 1, lane };
}

describe('webview/state: generation deltas', () => {
  it('applies a delta on the shown generation, keeping every other lane the same object, and the chosen lens', () => {
    const g = shown();
    const model = reduce(whole(initialModel, g), { type: 'select-lens', lens: 'sequence' });
    const next = reduce(model, message(deltaMessage(retitled(g, 0, 'Renamed'))));
    const flagged = next.generation!.lanes.find((l) => l.lens === 'flagged')!;
    assert.ok(flagged.board!.elements.some((e) => e.kind === 'finding' && e.title === 'Renamed'));
    assert.equal(
      next.generation!.lanes.find((l) => l.lens === 'sequence'),
      g.lanes.find((l) => l.lens === 'sequence'),
    );
    assert.deepEqual(next.generation!.revision, { stream: STREAM, n: 1 });
    assert.equal(next.lens, 'sequence');
    assert.equal(next.generationGap, null);
  });

  it('a delta that does not apply changes nothing shown and opens one gap; later ones wait; a whole generation closes it', () => {
    const g = shown();
    const model = whole(initialModel, g);
    const missed = reduce(model, message(deltaMessage(retitled(g, 1, 'Skipped one'))));
    assert.equal(missed.generation, model.generation, 'the shown generation is untouched');
    assert.equal(missed.generationGap?.open, true);
    assert.equal(missed.generationGap?.seq, 1);
    assert.match(missed.generationGap?.reason ?? '', /from revision 1 to 2, the generation held is at 0/);
    const again = reduce(missed, message(deltaMessage(retitled(g, 2, 'Another'))));
    assert.equal(again.generationGap, missed.generationGap, 'one question per gap');
    const answered = whole(again, { ...g, revision: { stream: STREAM, n: 2 } });
    assert.equal(answered.generationGap?.open, false);
    const next = reduce(answered, message(deltaMessage(retitled(g, 2, 'Applies'))));
    assert.equal(next.generation?.revision?.n, 3);
    // A stale delta (already held) is no gap.
    const stale = reduce(next, message(deltaMessage(retitled(g, 1, 'Old'))));
    assert.equal(stale, next);
    // No generation held yet: a gap too.
    assert.equal(reduce(initialModel, message(deltaMessage(retitled(g, 0, 'x')))).generationGap?.open, true);
  });
});

describe('webview/App: generation deltas (happy-dom)', () => {
  const { dom } = happyDomPerTest();

  it("paints a delta's element, and asks for the generation whole once when a delta does not apply", async () => {
    const bridge = new FakeBridge();
    await mountApp(dom.root, bridge);
    const g = shown();
    await bridge.send({ type: 'rennet/panel/snapshot', snapshot: snapshot() });
    await bridge.send({ type: 'rennet/panel/generation', snapshot: g });
    await click(one(dom.root, byTestId('expand-all')));
    const delta = retitled(g, 0, 'Painted from a delta');
    const id = delta.lane!.board!.upserted[0]!.id;
    await bridge.send(deltaMessage(delta));
    assert.match(one(dom.root, `${byTestId('board')} [data-id="${id}"]`).textContent ?? '', /Painted from a delta/);
    assert.equal(bridge.posted.filter((p) => p.type === 'rennet/panel/generationGap').length, 0);

    await bridge.send(deltaMessage(retitled(g, 5, 'Never shown')));
    await bridge.send(deltaMessage(retitled(g, 6, 'Never shown either')));
    const gaps = bridge.posted.filter((p) => p.type === 'rennet/panel/generationGap');
    assert.equal(gaps.length, 1, 'asked once');
    assert.deepEqual({ ...gaps[0], reason: undefined }, { type: 'rennet/panel/generationGap', generationId: g.generationId, reason: undefined });
    assert.doesNotMatch(one(dom.root, `${byTestId('board')} [data-id="${id}"]`).textContent ?? '', /Never shown/);
  });
});
