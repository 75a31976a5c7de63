/**
 * The bench page's own script, served (with the page's nonce) before dist/webview.js. It stands in
 * for VS Code's side of the webview: `acquireVsCodeApi` records what the panel posts and keeps its
 * state, and `window.rennetBench` lets the bench post ToWebview messages, click, and time each
 * act to the frame that paints it, on the page's own clock.
 *
 * `installProbe` is sent to the page as source text (`installProbe.toString()`), so it must not
 * close over anything outside its body; only type imports are allowed in this file.
 */

/** What the DOM must show before the act counts as done. */
export type WaitSpec =
  /** At least `atLeast` distinct `data-id` values inside `within` (board elements and code cards). */
  | { kind: 'ids'; within: string; atLeast: number; expandAll?: boolean }
  /** An element matching `selector` whose text includes `includes`. */
  | { kind: 'text'; selector: string; includes: string }
  /** An element matching `selector`. */
  | { kind: 'present'; selector: string };

/** Milliseconds from the act (postMessage or click) to each point, on the page's clock. */
export interface FrameTiming {
  /** The DOM first satisfied the wait (a MutationObserver callback). */
  domMs: number;
  /**
   * A task queued from the next requestAnimationFrame callback ran: the frame holding the change
   * has been styled, laid out and painted on the main thread (and handed to the compositor).
   */
  paintMs: number;
  /** The rAF callback of the frame after it (the double-rAF measure; up to one vsync later). */
  nextFrameMs: number;
  /** Epoch milliseconds (timeOrigin + now) of the act, to join the page's clock with Node's. */
  actEpochMs: number;
}

export interface PostedMessage {
  at: number;
  message: unknown;
}

export interface BenchProbe {
  posted(): PostedMessage[];
  /** Keep a message in the page so a timed post does not include its transfer from Node. */
  stage(name: string, message: unknown): void;
  /** postMessage a staged message (as VS Code delivers one to a webview) and time it to `wait`. */
  post(name: string, wait: WaitSpec): Promise<FrameTiming>;
  /** Post a message straight away (untimed), e.g. the session snapshot or an earlier push. */
  deliver(message: unknown): void;
  /** element.click() on `selector` and time it to `wait`. */
  click(selector: string, wait: WaitSpec): Promise<FrameTiming>;
  /**
   * Scroll `selector` into the middle of the view and time it to the painted frame: the panel's
   * off-screen elements skip style, layout and paint (content-visibility: auto) until they come
   * near the view, so this is where that deferred work lands.
   */
  jump(selector: string): Promise<FrameTiming>;
  /** Baseline: a posted message whose listener writes staged rows as plain `<div>`s with innerHTML. */
  baselineRows(name: string): Promise<FrameTiming>;
  /** Baseline: a posted message whose listener sets one plain div's text. */
  baselineText(text: string): Promise<FrameTiming>;
  /** Baseline: a click on a plain button whose handler sets one plain div's text. */
  baselineClick(text: string): Promise<FrameTiming>;
  /** Scroll the page (its scrolling element) to its end or its start and time it to `wait`. */
  scrollPage(to: 'end' | 'start', wait: WaitSpec): Promise<FrameTiming>;
  /** Empty the baseline's rows (untimed), so they no longer add to the page. */
  clearBaseline(): void;
  /** The longest main-thread task (a 'longtask' entry, 50 ms or more) that began at or after `sinceEpochMs`; 0 when none. */
  longestTask(sinceEpochMs: number): number;
  /** Wait (untimed) until `wait` holds. */
  until(wait: WaitSpec, timeoutMs?: number): Promise<void>;
}

declare global {
  interface Window {
    rennetBench: BenchProbe;
    acquireVsCodeApi?: () => { postMessage(message: unknown): void; getState(): unknown; setState(state: unknown): void };
  }
}

export function installProbe(): void {
  const posted: PostedMessage[] = [];
  const query = new URLSearchParams(location.search).get('state');
  let state: unknown = query ? JSON.parse(query) : undefined;
  window.acquireVsCodeApi = () => ({
    postMessage: (message: unknown) => {
      posted.push({ at: performance.now(), message });
    },
    getState: () => state,
    setState: (next: unknown) => {
      state = next;
    },
  });

  const staged = new Map<string, unknown>();
  const TIMEOUT_MS = 30_000;

  // Bench-only DOM, outside #root: the baselines draw here.
  let baseline: HTMLDivElement | null = null;
  let baselineText: HTMLDivElement | null = null;
  let baselineButton: HTMLButtonElement | null = null;
  const ensureBaseline = () => {
    if (baseline && baselineText && baselineButton) return;
    baselineButton = document.createElement('button');
    baselineButton.id = 'bench-baseline-button';
    baselineButton.type = 'button';
    baselineButton.textContent = 'baseline';
    baselineText = document.createElement('div');
    baselineText.id = 'bench-baseline-text';
    baseline = document.createElement('div');
    baseline.id = 'bench-baseline';
    document.body.append(baselineButton, baselineText, baseline);
    baselineButton.addEventListener('click', () => {
      if (baselineText) baselineText.textContent = baselineButton?.dataset['next'] ?? '';
    });
  };
  const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  window.addEventListener('message', (event: MessageEvent<unknown>) => {
    const data = event.data as { type?: unknown; rows?: unknown; text?: unknown } | null;
    if (!data || typeof data.type !== 'string' || !data.type.startsWith('bench/')) return;
    // Registered before the panel's bridge: the baselines' messages never reach (or cost) the panel.
    event.stopImmediatePropagation();
    ensureBaseline();
    if (data.type === 'bench/rows' && Array.isArray(data.rows) && baseline) {
      baseline.innerHTML = (data.rows as string[]).map((row, i) => `<div class="row" data-row="${i}">${escapeHtml(row)}</div>`).join('');
    } else if (data.type === 'bench/text' && typeof data.text === 'string' && baselineText) {
      baselineText.textContent = data.text;
    }
  });

  const distinctIds = (within: string): number => {
    const root = document.querySelector(within);
    if (!root) return 0;
    const ids = new Set<string>();
    for (const node of root.querySelectorAll('[data-id]')) ids.add(node.getAttribute('data-id') ?? '');
    return ids.size;
  };

  const met = (wait: WaitSpec): boolean => {
    switch (wait.kind) {
      case 'ids': {
        if (wait.expandAll) {
          // Pressed as soon as the board mounts, before its first paint: the frame measured holds every element.
          const expand = document.querySelector<HTMLButtonElement>(`${wait.within} [data-testid="expand-all"]`);
          if (expand && expand.textContent?.startsWith('Expand')) expand.click();
        }
        return distinctIds(wait.within) >= wait.atLeast;
      }
      case 'text':
        return [...document.querySelectorAll(wait.selector)].some((node) => node.textContent?.includes(wait.includes) ?? false);
      case 'present':
        return document.querySelector(wait.selector) !== null;
    }
  };

  const describe = (wait: WaitSpec): string => (wait.kind === 'ids' ? `${distinctIds(wait.within)} of ${wait.atLeast} ids in ${wait.within}` : JSON.stringify(wait));

  /** After the next frame: a task queued from its rAF callback runs once that frame is rendered. */
  const afterPaint = (): Promise<{ paint: number; next: number }> =>
    new Promise((resolve) => {
      requestAnimationFrame(() => {
        let paint = 0;
        let next = 0;
        const settle = () => {
          if (paint > 0 && next > 0) resolve({ paint, next });
        };
        const channel = new MessageChannel();
        channel.port1.onmessage = () => {
          paint = performance.now();
          channel.port1.close();
          settle();
        };
        channel.port2.postMessage(null);
        requestAnimationFrame(() => {
          next = performance.now();
          settle();
        });
      });
    });

  /** Arms an observer, runs `act`, resolves at the painted frame that satisfies `wait`. */
  const timed = (act: () => void, wait: WaitSpec): Promise<FrameTiming> =>
    new Promise((resolve, reject) => {
      let done = false;
      let t0 = 0;
      const observer = new MutationObserver(() => check());
      const timer = setTimeout(() => {
        if (done) return;
        done = true;
        observer.disconnect();
        reject(new Error(`the page never showed ${describe(wait)} within ${TIMEOUT_MS} ms`));
      }, TIMEOUT_MS);
      const check = () => {
        if (done || !met(wait)) return;
        done = true;
        const dom = performance.now();
        observer.disconnect();
        clearTimeout(timer);
        void afterPaint().then(({ paint, next }) => resolve({ domMs: dom - t0, paintMs: paint - t0, nextFrameMs: next - t0, actEpochMs: performance.timeOrigin + t0 }));
      };
      observer.observe(document.body, { childList: true, subtree: true, characterData: true, attributes: true });
      t0 = performance.now();
      act();
      check();
    });

  const post = (message: unknown) => window.postMessage(message, '*');

  // Tasks of 50 ms or more on the main thread: what a reader would feel as a freeze.
  const longTasks: Array<{ start: number; duration: number }> = [];
  try {
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) longTasks.push({ start: entry.startTime, duration: entry.duration });
    }).observe({ type: 'longtask', buffered: true });
  } catch {
    // no long-task timing in this browser: longestTask answers 0
  }

  window.rennetBench = {
    posted: () => posted.slice(),
    stage: (name, message) => {
      staged.set(name, message);
    },
    post: (name, wait) => {
      if (!staged.has(name)) return Promise.reject(new Error(`nothing staged as ${name}`));
      const message = staged.get(name);
      return timed(() => post(message), wait);
    },
    deliver: (message) => post(message),
    click: (selector, wait) => {
      const target = document.querySelector<HTMLElement>(selector);
      if (!target) return Promise.reject(new Error(`nothing to click: ${selector}`));
      return timed(() => target.click(), wait);
    },
    jump: (selector) => {
      const target = document.querySelector<HTMLElement>(selector);
      if (!target) return Promise.reject(new Error(`nothing to scroll to: ${selector}`));
      return timed(() => target.scrollIntoView({ block: 'center' }), { kind: 'present', selector });
    },
    baselineRows: (name) => {
      const rows = staged.get(name);
      if (!Array.isArray(rows)) return Promise.reject(new Error(`no rows staged as ${name}`));
      ensureBaseline();
      if (baseline) baseline.textContent = '';
      return timed(() => post({ type: 'bench/rows', rows }), { kind: 'present', selector: `#bench-baseline [data-row="${rows.length - 1}"]` });
    },
    baselineText: (text) => {
      ensureBaseline();
      return timed(() => post({ type: 'bench/text', text }), { kind: 'text', selector: '#bench-baseline-text', includes: text });
    },
    baselineClick: (text) => {
      ensureBaseline();
      if (baselineButton) baselineButton.dataset['next'] = text;
      return timed(() => baselineButton?.click(), { kind: 'text', selector: '#bench-baseline-text', includes: text });
    },
    scrollPage: (to, wait) =>
      timed(() => {
        const scroller = document.scrollingElement ?? document.documentElement;
        scroller.scrollTop = to === 'end' ? scroller.scrollHeight : 0;
      }, wait),
    clearBaseline: () => {
      if (baseline) baseline.textContent = '';
    },
    longestTask: (sinceEpochMs) => {
      const since = sinceEpochMs - performance.timeOrigin;
      return longTasks.filter((t) => t.start >= since - 1).reduce((max, t) => Math.max(max, t.duration), 0);
    },
    until: (wait, timeoutMs = TIMEOUT_MS) =>
      new Promise((resolve, reject) => {
        const end = performance.now() + timeoutMs;
        const poll = () => {
          if (met(wait)) return resolve();
          if (performance.now() > end) return reject(new Error(`the page never showed ${describe(wait)} within ${timeoutMs} ms`));
          setTimeout(poll, 10);
        };
        poll();
      }),
  };
}
