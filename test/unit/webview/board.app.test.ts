import * as assert from 'node:assert/strict';
import type { ToWebview } from '../../../protocol';
import { initialModel, reduce } from '../../../webview/state';
import { generation } from './boardFixtures';
import { snapshot } from './fixtures';
import { all, byTestId, click, FakeBridge, happyDomPerTest, mountApp, one, text } from './happyDom';

describe('webview/App with lens boards (happy-dom)', () => {
  const { dom } = happyDomPerTest();
  let bridge: FakeBridge;
  const mount = () => mountApp(dom.root, bridge);
  const send = (message: ToWebview) => bridge.send(message);

  beforeEach(() => {
    bridge = new FakeBridge();
  });

  it('reduces a generation message whole and keeps the chosen lens', () => {
    const g = generation();
    const model = reduce(reduce(initialModel, { type: 'select-lens', lens: 'noise' }), { type: 'message', message: { type: 'rennet/panel/generation', snapshot: g } });
    assert.equal(model.generation, g);
    assert.equal(model.generationReceived, true);
    assert.equal(model.lens, 'noise');
    const none = reduce(initialModel, { type: 'message', message: { type: 'rennet/panel/generation', snapshot: null } });
    assert.equal(none.generation, null);
    assert.equal(none.generationReceived, true);
  });

  it('shows the board between the capture header and the files once a generation arrives', async () => {
    await mount();
    await send({ type: 'rennet/panel/snapshot', snapshot: snapshot() });
    assert.equal(all(dom.root, byTestId('board')).length, 0, 'no board before a generation');
    assert.ok(one(dom.root, byTestId('file-list')));
    await send({ type: 'rennet/panel/generation', snapshot: generation() });
    const board = one(dom.root, byTestId('board'));
    assert.equal(board.getAttribute('data-lens'), 'flagged');
    const order = all(dom.root, `${byTestId('patchset-header')}, ${byTestId('generation')}, ${byTestId('file-list')}`).map((e) => e.getAttribute('data-testid'));
    assert.deepEqual(order, ['patchset-header', 'generation', 'file-list']);
    assert.equal(all(dom.root, byTestId('file-row')).length, snapshot().patchset?.files.length);
  });

  it('posts openCitation through the bridge when a citation is clicked', async () => {
    await mount();
    await send({ type: 'rennet/panel/snapshot', snapshot: snapshot() });
    await send({ type: 'rennet/panel/generation', snapshot: generation() });
    await click(one(dom.root, '[data-testid="lens-tab"][data-lens="sequence"]'));
    const citation = one(dom.root, `[data-id="s7"] ${byTestId('citation')}`);
    await click(citation);
    assert.deepEqual(bridge.posted.at(-1), { type: 'rennet/panel/openCitation', path: 'src/retry.ts', side: 'head', startLine: 1, endLine: 20 });
  });

  it('keeps the lens and a pinned frozen generation in the panel state, beside the session id', async () => {
    await mount();
    await send({ type: 'rennet/panel/snapshot', snapshot: snapshot() });
    await send({ type: 'rennet/panel/generation', snapshot: generation() });
    assert.deepEqual(bridge.state, { sessionId: 'ses-1' });
    await click(one(dom.root, '[data-testid="lens-tab"][data-lens="decisions"]'));
    assert.deepEqual(bridge.state, { sessionId: 'ses-1', lens: 'decisions' });
    await send({ type: 'rennet/panel/generation', snapshot: generation({ generationId: 'g-old', status: 'frozen' }) });
    assert.deepEqual(bridge.state, { sessionId: 'ses-1', lens: 'decisions', generationId: 'g-old' });
    await send({ type: 'rennet/panel/generation', snapshot: generation() });
    assert.deepEqual(bridge.state, { sessionId: 'ses-1', lens: 'decisions' });
  });

  it('restores the lens and asks for the pinned generation after ready', async () => {
    bridge = new FakeBridge({ sessionId: 'ses-1', lens: 'noise', generationId: 'g-old' });
    await mount();
    assert.deepEqual(bridge.posted, [{ type: 'rennet/panel/ready' }, { type: 'rennet/panel/selectGeneration', generationId: 'g-old' }]);
    await send({ type: 'rennet/panel/snapshot', snapshot: snapshot() });
    assert.deepEqual(bridge.state, { sessionId: 'ses-1', lens: 'noise', generationId: 'g-old' }, 'the pin survives until a generation answers');
    await send({ type: 'rennet/panel/generation', snapshot: generation({ generationId: 'g-old', status: 'frozen' }) });
    assert.equal(one(dom.root, byTestId('board')).getAttribute('data-lens'), 'noise');
    assert.ok(one(dom.root, byTestId('frozen-note')));
  });

  it('offers to draft the boards when the session has no generation yet', async () => {
    await mount();
    await send({ type: 'rennet/panel/snapshot', snapshot: snapshot() });
    await send({ type: 'rennet/panel/generation', snapshot: null });
    assert.match(text(one(dom.root, byTestId('board-none'))), /No lens boards yet/);
    await click(one(dom.root, byTestId('run-lenses')));
    assert.deepEqual(bridge.posted.at(-1), { type: 'rennet/panel/runLenses' });
  });

  it('Draft again on a failed lane posts runLenses through the bridge', async () => {
    await mount();
    await send({ type: 'rennet/panel/snapshot', snapshot: snapshot() });
    const g = generation();
    g.lanes = g.lanes.map((l) => (l.lens === 'flagged' ? { ...l, state: 'failed', board: null, failure: { message: 'boom', retryable: true, attempts: 1 } } : l));
    await send({ type: 'rennet/panel/generation', snapshot: g });
    // Flagged has no board, so the first lens with one is shown until the reviewer picks Flagged.
    assert.equal(one(dom.root, byTestId('board')).getAttribute('data-lens'), 'design');
    await click(one(dom.root, '[data-testid="lens-tab"][data-lens="flagged"]'));
    await click(one(dom.root, byTestId('draft-again')));
    assert.deepEqual(bridge.posted.at(-1), { type: 'rennet/panel/runLenses' });
  });
});
