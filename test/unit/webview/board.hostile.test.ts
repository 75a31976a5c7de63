/**
 * A hostile board: every string a model (or a tampered store) controls carries markup, handlers,
 * script URLs, CSS escapes, a megabyte, or 200 levels of nesting. Rendered into happy-dom WITH
 * script evaluation enabled — a <script> element or an on* attribute that reached the DOM would
 * run and bump the canary — then every control is clicked. Nothing may run, nothing may crash.
 */
import * as assert from 'node:assert/strict';
import { h } from 'preact';
import { useState } from 'preact/hooks';
import { LENSES, ToWebview, type BoardElement, type GenerationSnapshot, type Lens, type LensBoardView } from '../../../protocol';
import { BoardBody } from '../../../webview/board/Board';
import { GenerationView } from '../../../webview/board/GenerationView';
import { markdownBlock } from '../../../webview/board/markdown';
import { boardView, codeRef, elements, generation, lane } from './boardFixtures';
import { CANARY, deepList, deepQuote, hostileBoard, hostileLine, ONE_MB } from './hostileFixtures';
import { all, byTestId, click, happyDomPerTest, mount, recordingActions, text } from './happyDom';

function Harness({ snapshot }: { snapshot: GenerationSnapshot }) {
  const [lens, setLens] = useState<Lens | null>(null);
  return h(GenerationView, { snapshot, lens, onSelectLens: setLens });
}

describe('webview/board: a hostile board renders inert (happy-dom, scripts ENABLED)', function () {
  this.timeout(120_000);
  const { dom } = happyDomPerTest({ scripts: true });
  const pwned = () => (dom.window as unknown as { __pwned?: number }).__pwned ?? 0;


  /** Everything the DOM must never hold. */
  function assertInert(root: HTMLElement): void {
    const forbidden = all(root, 'script, iframe, frame, object, embed, img, style, link, svg, math, base, meta, form, input, textarea');
    assert.deepEqual(
      forbidden.map((e) => e.tagName),
      [],
      'no active or loading element',
    );
    for (const el of all(root, '*')) {
      for (const name of el.getAttributeNames()) {
        assert.ok(!/^on/i.test(name), `${el.tagName} carries ${name}`);
        assert.ok(!['style', 'src', 'srcdoc', 'srcset', 'formaction', 'action', 'xlink:href', 'background', 'poster'].includes(name.toLowerCase()), `${el.tagName} carries ${name}`);
      }
      const href = el.getAttribute('href');
      if (href !== null) {
        assert.equal(el.tagName, 'A', 'only links carry href');
        assert.match(href, /^(https?:|mailto:|#)/i, `href ${href.slice(0, 80)}`);
        assert.doesNotMatch(href, /^\s*(javascript|data|vbscript|file):/i);
      }
    }
    // (innerHTML is not checked with a regex: the serializer leaves `<` unescaped inside attribute
    // values, so a data-path of "<script>" would read as a tag that does not exist.)
  }

  it('the canary works: this DOM does run a script element and a handler attribute', async () => {
    const script = dom.document.createElement('script');
    script.textContent = CANARY;
    dom.document.body.appendChild(script);
    const div = dom.document.createElement('div');
    div.setAttribute('onclick', CANARY);
    dom.document.body.appendChild(div);
    div.click();
    assert.equal(pwned(), 2);
  });

  it('the hostile board is a valid message: the bridge schema lets it through to the renderer', () => {
    const snapshot = generation({ lanes: LENSES.map((l) => lane(l, 'settled', { board: hostileBoard(l, false) })) });
    assert.ok(ToWebview.safeParse({ type: 'rennet/panel/generation', snapshot }).success);
  });

  it('renders every lens of a hostile generation with nothing executed, nothing active, no crash', async () => {
    const snapshot = generation({
      lanes: LENSES.map((l) =>
        l === 'design'
          ? lane(l, 'failed', { failure: { message: `<script>${CANARY}</script>\n${hostileLine}`, retryable: null, attempts: 1 } })
          : l === 'noise'
            ? lane(l, 'absent', { absence: 'no-noise', board: hostileBoard(l, false) })
            : lane(l, 'settled', { board: hostileBoard(l, l === 'flagged') }),
      ),
      frozen: [{ generationId: `"><script>${CANARY}</script>`, patchsetId: 'p', createdAt: `<img src=x onerror="${CANARY}">` }],
    });
    const actions = recordingActions();
    await mount(dom, actions, h(Harness, { snapshot }));
    for (const lens of LENSES) {
      await click(dom.root.querySelector(`[data-testid="lens-tab"][data-lens="${lens}"]`) as HTMLElement);
      for (const toggle of all(dom.root, byTestId('fold-toggle'))) if (toggle.getAttribute('aria-expanded') === 'false') await click(toggle);
      assertInert(dom.root);
      // Click every control on the board (citations, cards, regions, chips, pills, links).
      for (const control of all(dom.root, `${byTestId('board')} button, ${byTestId('board')} a`)) {
        if (control.getAttribute('data-testid') === 'fold-toggle' || control.getAttribute('data-testid') === 'expand-all') continue;
        control.click();
      }
      assertInert(dom.root);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(pwned(), 0, 'no hostile string executed');
    // The markup was shown as text, not dropped; the megabyte strings are on the board.
    await click(dom.root.querySelector('[data-testid="lens-tab"][data-lens="flagged"]') as HTMLElement);
    await click(dom.root.querySelector('[data-testid="expand-all"]') as HTMLElement);
    assert.match(text(dom.root), /<script>window\.__pwned/);
    for (const id of ['big1', 'big2', 'big3', 'big4']) assert.ok(dom.root.querySelector(`[data-id="${id}"]`), id);
    assert.ok(text(dom.root.querySelector('[data-id="big1"]')).length >= ONE_MB);
    // Only the protocol's shapes were posted; every citation a safe range.
    for (const call of actions.calls) {
      if (call.type === 'openCitation') assert.ok(call.startLine >= 1 && call.endLine >= call.startLine);
    }
  });

  it('enum fields outside the schema never become class names or attributes', async () => {
    const pool = elements([
      codeRef('r', 'src/a.ts', 1, 1),
      {
        id: 'f',
        kind: 'finding',
        severity: 'major" onclick="x' as never,
        category: '<script>x</script>' as never,
        title: 't',
        body_markdown: 'b',
        remedy_markdown: 'r',
        anchor: ['r'],
        status: 'open',
        concurrence: [],
        accord: 'x" onmouseover="y' as never,
      },
      { id: 'c', kind: 'callout', tone: 'x y" onclick="z' as never, markdown: 'm' },
      { id: 'o', kind: 'round_outcome', ask_id: 'a', outcome: '"><img src=x onerror=alert(1)>' as never },
    ] as BoardElement[] as never);
    await mount(dom, recordingActions(), h(BoardBody, { board: boardView('flagged', pool) }));
    assertInert(dom.root);
    for (const el of all(dom.root, '[class]')) assert.match(el.getAttribute('class') ?? '', /^[a-z0-9 -]*$/, el.getAttribute('class') ?? '');
  });

  it('markdown of 200-deep lists and quotes parses to a bounded tree', () => {
    const depth = (nodes: unknown[]): number => {
      let max = 0;
      for (const node of nodes) {
        const children = (node as { props?: { children?: unknown } })?.props?.children;
        if (Array.isArray(children)) max = Math.max(max, 1 + depth(children));
      }
      return max;
    };
    assert.ok(depth(markdownBlock(deepList)) <= 60);
    assert.ok(depth(markdownBlock(deepQuote)) <= 60);
  });
});
