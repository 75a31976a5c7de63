/**
 * A real DOM for the board tests: happy-dom (a devDependency), installed as the global
 * `document` preact renders into. Unlike miniDom.ts it has focus, keyboard events, selectors and
 * an HTML serializer. With `scripts: true` it EXECUTES script elements and inline event-handler
 * attributes, so a hostile-board test that finds its canary untouched proves nothing ran — not
 * merely that nothing looked like a script.
 */
import * as assert from 'node:assert/strict';
import { h, render, type ComponentChildren } from 'preact';
import { act } from 'preact/test-utils';
import { Window } from 'happy-dom';
import { ToWebview as ToWebviewSchema, type CitationSide, type FromWebview, type PanelState, type ToWebview } from '../../../protocol';
import { App } from '../../../webview/App';
import { BoardActionsContext, type BoardActions } from '../../../webview/board/actions';
import type { PanelBridge } from '../../../webview/bridge';

export interface HappyDom {
  window: Window;
  document: Document;
  /** A mounted container in the body. */
  root: HTMLElement;
  restore(): Promise<void>;
}

export function installHappyDom(options: { scripts?: boolean } = {}): HappyDom {
  const window = new Window({
    url: 'https://rennet.panel.test/',
    settings: {
      enableJavaScriptEvaluation: options.scripts === true,
      suppressInsecureJavaScriptEnvironmentWarning: true,
      disableJavaScriptFileLoading: true,
      navigation: { disableMainFrameNavigation: true, disableChildFrameNavigation: true, disableChildPageNavigation: true, disableFallbackToSetURL: true },
    },
  });
  const document = window.document as unknown as Document;
  const g = globalThis as Record<string, unknown>;
  const previous = { document: g.document, window: g.window };
  g.document = document;
  g.window = window;
  const root = document.createElement('div');
  document.body.appendChild(root);
  return {
    window,
    document,
    root,
    async restore() {
      await act(() => render(null, root));
      for (const [key, value] of Object.entries(previous)) {
        if (value === undefined) delete g[key];
        else g[key] = value;
      }
      await window.happyDOM.close();
    },
  };
}

/**
 * A fresh happy-dom for every test of the calling `describe` (its own mocha hooks), restored after
 * each, with recording board actions whose calls start empty in each test. `dom` reads through to
 * the current test's DOM, so it can be taken once at the top of the `describe`; `reinstall` swaps
 * it for a new one within a test (e.g. one that runs scripts).
 */
export function happyDomPerTest(options: { scripts?: boolean } = {}): {
  dom: HappyDom;
  actions: RecordingActions;
  reinstall(options: { scripts?: boolean }): Promise<void>;
} {
  let current: HappyDom | undefined;
  const actions = recordingActions();
  beforeEach(() => {
    current = installHappyDom(options);
    actions.calls.length = 0;
  });
  afterEach(async () => {
    await current?.restore();
    current = undefined;
  });
  const live = (): HappyDom => {
    assert.ok(current, 'the DOM exists only while a test runs');
    return current;
  };
  const dom: HappyDom = {
    get window() {
      return live().window;
    },
    get document() {
      return live().document;
    },
    get root() {
      return live().root;
    },
    restore: () => live().restore(),
  };
  const reinstall = async (next: { scripts?: boolean }) => {
    await live().restore();
    current = installHappyDom(next);
  };
  return { dom, actions, reinstall };
}

export type Recorded =
  | { type: 'openCitation'; path: string; side: CitationSide; startLine: number; endLine: number }
  | { type: 'openFile'; path: string; side: CitationSide }
  | { type: 'runLenses' }
  | { type: 'selectGeneration'; generationId: string | null };

export type RecordingActions = BoardActions & { calls: Recorded[] };

export function recordingActions(): RecordingActions {
  const calls: Recorded[] = [];
  return {
    calls,
    openCitation: (path, side, startLine, endLine) => calls.push({ type: 'openCitation', path, side, startLine, endLine }),
    openFile: (path, side) => calls.push({ type: 'openFile', path, side }),
    runLenses: () => calls.push({ type: 'runLenses' }),
    selectGeneration: (generationId) => calls.push({ type: 'selectGeneration', generationId }),
  };
}

/** Render board components with recording actions into the DOM's root. */
export async function mount(dom: HappyDom, actions: BoardActions, node: ComponentChildren): Promise<void> {
  await act(() => {
    render(h(BoardActionsContext.Provider, { value: actions }, node), dom.root);
  });
}

/**
 * The panel's bridge as App sees it: records what App posts and keeps its state; `send` delivers a
 * host message the way the real bridge does (only what ToWebview accepts reaches App) and lets
 * App redraw.
 */
export class FakeBridge implements PanelBridge {
  readonly posted: FromWebview[] = [];
  private readonly listeners = new Set<(message: ToWebview) => void>();
  constructor(public state: PanelState | undefined = undefined) {}
  post(message: FromWebview): void {
    this.posted.push(message);
  }
  onMessage(callback: (message: ToWebview) => void): () => void {
    this.listeners.add(callback);
    return () => this.listeners.delete(callback);
  }
  getState(): PanelState | undefined {
    return this.state;
  }
  setState(state: PanelState): void {
    this.state = state;
  }
  get listenerCount(): number {
    return this.listeners.size;
  }
  async send(message: ToWebview): Promise<void> {
    const parsed = ToWebviewSchema.parse(message);
    await act(() => {
      for (const listener of this.listeners) listener(parsed);
    });
  }
}

/** Render the real App, talking to `bridge`, into `root` (happy-dom's, or miniDom's cast). */
export async function mountApp(root: HTMLElement, bridge: PanelBridge): Promise<void> {
  await act(() => {
    render(h(App, { bridge }), root);
  });
}

export const text = (el: Element | null | undefined): string => (el?.textContent ?? '').replace(/\s+/g, ' ').trim();

export function all(root: ParentNode, selector: string): HTMLElement[] {
  return [...root.querySelectorAll(selector)] as HTMLElement[];
}

export function one(root: ParentNode, selector: string): HTMLElement {
  const found = all(root, selector);
  if (found.length !== 1) throw new Error(`expected one ${selector}, found ${found.length}`);
  return found[0] as HTMLElement;
}

export const byTestId = (id: string) => `[data-testid="${id}"]`;

export async function click(el: Element): Promise<void> {
  await act(() => {
    (el as HTMLElement).click();
  });
}

export async function key(el: Element, keyName: string): Promise<void> {
  await act(() => {
    const KeyboardEventCtor = (globalThis as unknown as { window: { KeyboardEvent: typeof KeyboardEvent } }).window.KeyboardEvent;
    el.dispatchEvent(new KeyboardEventCtor('keydown', { key: keyName, bubbles: true, cancelable: true }));
  });
}
