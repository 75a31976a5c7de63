import * as assert from 'node:assert/strict';
import { render } from 'preact';
import { act } from 'preact/test-utils';
import type { ToWebview } from '../../../protocol';
import { snapshot, patchset } from './fixtures';
import { FakeBridge, mountApp } from './happyDom';
import { installMiniDom, type MiniElement } from './miniDom';

describe('webview/App (rendered into a minimal DOM)', () => {
  let dom: ReturnType<typeof installMiniDom>;
  let root: MiniElement;
  let bridge: FakeBridge;

  const mount = () => mountApp(root as unknown as HTMLElement, bridge);
  const send = (message: ToWebview) => bridge.send(message);
  const text = (el: MiniElement) => el.textContent.replace(/\s+/g, ' ').trim();

  beforeEach(() => {
    dom = installMiniDom();
    root = dom.document.createElement('div');
    dom.document.body.appendChild(root);
    bridge = new FakeBridge();
  });

  afterEach(async () => {
    await act(() => render(null, root as unknown as HTMLElement));
    dom.restore();
  });

  it('says ready on mount and shows loading until a snapshot arrives', async () => {
    await mount();
    assert.deepEqual(bridge.posted, [{ type: 'rennet/panel/ready' }]);
    assert.equal(bridge.listenerCount, 1);
    assert.equal(text(root.oneByTestId('loading')), 'Loading the review…');
    assert.equal(root.byTestId('file-row').length, 0);
  });

  it('renders the header, totals and one row per file', async () => {
    await mount();
    await send({ type: 'rennet/panel/snapshot', snapshot: snapshot() });

    const header = root.oneByTestId('patchset-header');
    assert.equal(header.getAttribute('data-session-id'), 'ses-1');
    assert.equal(text(root.oneByTestId('target-title')), 'feature/login vs main');
    assert.equal(text(root.oneByTestId('target-kind')), 'branch');

    const base = root.oneByTestId('base-id');
    assert.equal(text(base), 'a1b2c3d4e5f6');
    assert.equal(base.getAttribute('title'), patchset().base);
    assert.equal(base.localName, 'code');
    assert.equal(text(root.oneByTestId('head-id')), 'ffeeddccbbaa');
    assert.equal(text(root.oneByTestId('head-id-full')), patchset().head);

    assert.equal(text(root.oneByTestId('totals')), '9 files · +203 · \u221235 · 11 hunks · 1 binary · 1 submodule · 2 truncated · 3 uncounted');
    assert.match(text(root.oneByTestId('merge-base-note')), /merge-base a1b2c3d4e5f6/);

    const rows = root.byTestId('file-row');
    assert.deepEqual(
      rows.map((r) => r.getAttribute('data-path')),
      patchset().files.map((f) => f.path),
    );
    assert.equal(bridge.state?.sessionId, 'ses-1');
  });

  it('states every file fact in text', async () => {
    await mount();
    await send({ type: 'rennet/panel/snapshot', snapshot: snapshot() });
    const row = (path: string) => root.byTestId('file-row').find((r) => r.getAttribute('data-path') === path)!;
    const badges = (path: string) => row(path).byTestId('file-badge').map(text);

    assert.equal(text(row('src/new.ts').oneByTestId('file-status')), 'added');
    assert.equal(text(row('docs/old.md').oneByTestId('file-status')), 'deleted');
    assert.equal(text(row('src/renamed.ts').oneByTestId('renamed-from')), 'renamed from src/original.ts');
    assert.deepEqual(badges('bin/run.sh'), ['mode 100644→100755']);
    assert.deepEqual(badges('assets/logo.png'), ['binary']);
    assert.deepEqual(badges('vendor/lib'), ['submodule — not reviewed (blocked)']);
    assert.deepEqual(badges('data/huge.json'), ['truncated — over 1024 KiB limit']);
    assert.deepEqual(badges('src/generated.ts'), ['truncated after line 200 (patch over limit)']);

    const logo = row('assets/logo.png');
    assert.equal(text(logo.oneByTestId('file-additions')), '—');
    assert.equal(logo.oneByTestId('file-additions').getAttribute('title'), 'line counts unknown');
    assert.equal(text(logo.oneByTestId('file-deletions')), '—');
    assert.equal(text(row('src/app.ts').oneByTestId('file-additions')), '+12');
    assert.equal(text(row('src/app.ts').oneByTestId('file-deletions')), '\u22124');
  });

  it('posts openFile with the side that holds the file', async () => {
    await mount();
    await send({ type: 'rennet/panel/snapshot', snapshot: snapshot() });
    const open = (path: string) =>
      root
        .byTestId('file-row')
        .find((r) => r.getAttribute('data-path') === path)!
        .oneByTestId('open-file');
    assert.equal(open('src/app.ts').localName, 'button');
    assert.equal(open('src/app.ts').getAttribute('aria-label'), 'Open src/app.ts');
    await act(() => open('src/app.ts').click());
    await act(() => open('docs/old.md').click());
    assert.deepEqual(bridge.posted.slice(1), [
      { type: 'rennet/panel/openFile', path: 'src/app.ts', side: 'head' },
      { type: 'rennet/panel/openFile', path: 'docs/old.md', side: 'base' },
    ]);
  });

  it('recaptures once, shows it is busy, and clears on the answer', async () => {
    await mount();
    await send({ type: 'rennet/panel/snapshot', snapshot: snapshot() });
    const button = () => root.oneByTestId('recapture');
    assert.equal(text(button()), 'Recapture');
    await act(() => button().click());
    assert.deepEqual(bridge.posted.at(-1), { type: 'rennet/panel/refresh' });
    assert.equal(text(button()), 'Recapturing…');
    assert.ok(button().hasAttribute('disabled'));
    await send({ type: 'rennet/panel/snapshot', snapshot: snapshot() });
    assert.equal(text(button()), 'Recapture');
    assert.ok(!button().hasAttribute('disabled'));
  });

  it('shows an honest empty state when nothing is captured', async () => {
    await mount();
    await send({ type: 'rennet/panel/snapshot', snapshot: snapshot({ patchset: null }) });
    assert.match(text(root.oneByTestId('empty-state')), /^Not captured yet/);
    assert.equal(root.byTestId('totals').length, 0);
    assert.equal(root.byTestId('base-id').length, 0);
    assert.equal(root.byTestId('recapture').length, 1);
  });

  it('shows host status and errors as banners', async () => {
    await mount();
    await send({ type: 'rennet/panel/hostStatus', status: { state: 'restarting', message: 'pid 42 exited' } });
    const banner = root.oneByTestId('host-status');
    assert.equal(banner.getAttribute('data-state'), 'restarting');
    assert.equal(banner.getAttribute('role'), 'status');
    assert.match(text(banner), /restarting/);
    assert.match(text(banner), /pid 42 exited/);

    await send({ type: 'rennet/panel/hostStatus', status: { state: 'running', message: null } });
    assert.equal(root.byTestId('host-status').length, 0);

    await send({ type: 'rennet/panel/hostStatus', status: { state: 'failed', message: 'gave up' } });
    assert.equal(root.oneByTestId('host-status').getAttribute('role'), 'alert');

    await send({ type: 'rennet/panel/error', message: 'Nothing to review.' });
    assert.equal(text(root.oneByTestId('error-message')), 'Nothing to review.');
    assert.equal(text(root.oneByTestId('loading')), 'The review could not be loaded.');
    await act(() => root.oneByTestId('dismiss-error').click());
    assert.equal(root.byTestId('error-banner').length, 0);
  });

  it('stops listening when unmounted', async () => {
    await mount();
    assert.equal(bridge.listenerCount, 1);
    await act(() => render(null, root as unknown as HTMLElement));
    assert.equal(bridge.listenerCount, 0);
  });
});
