import * as assert from 'node:assert/strict';
import { createVsCodeBridge, parsePanelState, parseToWebview } from '../../../webview/bridge';
import type { ToWebview } from '../../../protocol';
import { snapshot } from './fixtures';

describe('webview/bridge', () => {
  it('accepts every ToWebview message', () => {
    for (const message of [
      { type: 'rennet/panel/snapshot', snapshot: snapshot() },
      { type: 'rennet/panel/snapshot', snapshot: snapshot({ patchset: null }) },
      { type: 'rennet/panel/hostStatus', status: { state: 'restarting', message: null } },
      { type: 'rennet/panel/error', message: 'boom' },
    ]) {
      const parsed = parseToWebview(message);
      assert.equal(parsed.ok, true, JSON.stringify(parsed));
    }
  });

  it('refuses malformed messages and says why', () => {
    const cases: unknown[] = [
      null,
      'rennet/panel/snapshot',
      { type: 'rennet/panel/unknown' },
      { type: 'rennet/panel/error' },
      { type: 'rennet/panel/hostStatus', status: { state: 'sleeping', message: null } },
      { type: 'rennet/panel/snapshot', snapshot: { session: {}, patchset: null } },
    ];
    for (const message of cases) {
      const parsed = parseToWebview(message);
      assert.equal(parsed.ok, false, JSON.stringify(message));
      if (!parsed.ok) assert.ok(parsed.reason.length > 0);
    }
  });

  it('reads panel state only when it is a PanelState', () => {
    assert.deepEqual(parsePanelState({ sessionId: 's' }), { sessionId: 's' });
    assert.equal(parsePanelState(undefined), undefined);
    assert.equal(parsePanelState({ session: 's' }), undefined);
  });

  it('wraps acquireVsCodeApi and validates incoming messages', () => {
    const posted: unknown[] = [];
    let state: unknown = { sessionId: 'kept' };
    const g = globalThis as { acquireVsCodeApi?: unknown };
    g.acquireVsCodeApi = () => ({
      postMessage: (m: unknown) => posted.push(m),
      getState: () => state,
      setState: (s: unknown) => {
        state = s;
      },
    });
    const listeners = new Set<(event: { data: unknown }) => void>();
    const fakeWindow = {
      addEventListener: (_: string, l: (event: { data: unknown }) => void) => listeners.add(l),
      removeEventListener: (_: string, l: (event: { data: unknown }) => void) => listeners.delete(l),
    } as unknown as Window;
    const originalWarn = console.warn;
    const warnings: string[] = [];
    console.warn = (text: string) => warnings.push(text);
    try {
      const bridge = createVsCodeBridge(fakeWindow);
      assert.deepEqual(bridge.getState(), { sessionId: 'kept' });
      bridge.setState({ sessionId: 'next' });
      assert.deepEqual(state, { sessionId: 'next' });
      bridge.post({ type: 'rennet/panel/ready' });
      assert.deepEqual(posted, [{ type: 'rennet/panel/ready' }]);

      const received: ToWebview[] = [];
      const off = bridge.onMessage((m) => received.push(m));
      for (const l of listeners) l({ data: { type: 'rennet/panel/error', message: 'x' } });
      for (const l of listeners) l({ data: { type: 'nope' } });
      assert.deepEqual(received, [{ type: 'rennet/panel/error', message: 'x' }]);
      assert.equal(warnings.length, 1);
      off();
      assert.equal(listeners.size, 0);
    } finally {
      console.warn = originalWarn;
      delete g.acquireVsCodeApi;
    }
  });
});
