/**
 * A hostile board: every string a model (or a tampered store) controls carries markup, handlers,
 * script URLs, CSS escapes, a megabyte, or 200 levels of nesting. Rendered into happy-dom WITH
 * script evaluation enabled — a <script> element or an on* attribute that reached the DOM would
 * run and bump the canary — then every control is clicked. Nothing may run, nothing may crash.
 */
import * as assert from 'node:assert/strict';
import { h } from 'preact';
import { useState } from 'preact/hooks';
import { LENSES, ToWebview, type BoardElement, type GenerationSnapshot, type Lens } from '../../../protocol';
import { BoardBody } from '../../../webview/board/Board';
import { GenerationView } from '../../../webview/board/GenerationView';
import { inertLinkReason } from '../../../protocol/links';
import { MARKDOWN_MAX_CHARS, markdownBlock, markdownInline, markdownPlain } from '../../../webview/board/markdown';
import { Markdown } from '../../../webview/board/MarkdownView';
import { boardView, codeRef, elements, generation, lane } from './boardFixtures';
import { CANARY, deepList, deepQuote, hostileBoard, hostileLine, ONE_MB } from './hostileFixtures';
import { all, byTestId, click, happyDomPerTest, mount, one, recordingActions, text } from './happyDom';

const PRIVATE_NOTE = 'not opened: it points at this machine or a private network';

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
        assert.equal(inertLinkReason(href), null, `a live link to this machine or a private network: ${href.slice(0, 80)}`);
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
    // A megabyte is shown cut, as plain text, with the count of the rest; all of it on request.
    const big1 = () => dom.root.querySelector('[data-id="big1"]') as HTMLElement;
    assert.equal(text(big1().querySelector(byTestId('long-text-note'))), `… ${(ONE_MB - MARKDOWN_MAX_CHARS).toLocaleString('en-US')} more characters not shown: too long to format`);
    assert.ok(text(big1()).length < MARKDOWN_MAX_CHARS + 200);
    await click(big1().querySelector(byTestId('show-long-text')) as HTMLElement);
    assert.ok(text(big1()).length >= ONE_MB);
    assert.equal(big1().querySelector(byTestId('show-long-text')), null);
    assertInert(dom.root);
    assert.equal(pwned(), 0);
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

  it('a link to this machine or a private network is text showing its URL, never a live link', async () => {
    await mount(dom, recordingActions(), h('div', null, markdownBlock('See [docs](http://127.0.0.1:8080/x) now.')));
    assert.deepEqual(
      all(dom.root, 'a').map((a) => a.getAttribute('href')),
      [],
    );
    assert.equal(all(dom.root, '[href]').length, 0);
    const inert = all(dom.root, '.rn-md-link-inert');
    assert.equal(inert.length, 1);
    assert.equal(text(inert[0]), `docs (http://127.0.0.1:8080/x — ${PRIVATE_NOTE})`);
    assert.equal(text(dom.root), `See docs (http://127.0.0.1:8080/x — ${PRIVATE_NOTE}) now.`);
  });

  it('every spelling of a private address stays text: metadata, localhost, numeric, IPv6, intranet names, autolinks', async () => {
    const targets = [
      'http://169.254.169.254/latest/meta-data',
      'http://localhost:3000',
      'HTTP://LOCALHOST.',
      'http://0x7f.1/',
      'http://2130706433/',
      'http://[::1]:8080/',
      'http://[::ffff:127.0.0.1]/',
      'https://user:pass@10.0.0.1/',
      'http://192.168.1.1/admin',
      'http://router/',
      'http://svc.internal/',
    ];
    const source = [...targets.map((t, i) => `[l${i}](${t})`), '<http://127.0.0.1:9/auto>', '[**bold** `code`](http://localhost/)'].join(' ');
    await mount(dom, recordingActions(), h('div', null, markdownBlock(source), h('p', null, markdownInline(source))));
    assert.equal(all(dom.root, 'a').length, 0, 'no live link');
    assert.equal(all(dom.root, '.rn-md-link-inert').length, 2 * (targets.length + 2));
    const shown = text(dom.root);
    for (const target of ['http://169.254.169.254/latest/meta-data', 'http://0x7f.1/', 'http://2130706433/', 'https://user:pass@10.0.0.1/', 'http://127.0.0.1:9/auto']) {
      assert.ok(shown.includes(target), target);
    }
    // The label keeps its own formatting; the URL and the note follow it.
    assert.ok(all(dom.root, '.rn-md-link-inert strong').length >= 1);
    assert.ok(shown.includes(`bold code (http://localhost/ — ${PRIVATE_NOTE})`), shown.slice(-300));
    // An autolink's label is its URL: shown once, then the note.
    assert.ok(shown.includes(`http://127.0.0.1:9/auto (${PRIVATE_NOTE})`), 'autolink');
  });

  it('a public link stays a live link with rel noopener', async () => {
    await mount(dom, recordingActions(), h('div', null, markdownBlock('[x](https://example.com) and [pr](https://github.com/o/r/pull/1) and [m](mailto:a@b.test) and [f](#frag)')));
    const links = all(dom.root, 'a');
    assert.deepEqual(
      links.map((a) => a.getAttribute('href')),
      ['https://example.com', 'https://github.com/o/r/pull/1', 'mailto:a@b.test', '#frag'],
    );
    for (const a of links) assert.equal(a.getAttribute('rel'), 'noopener noreferrer');
    assert.equal(text(links[0]), 'x');
    assert.ok(!text(dom.root).includes('not opened'));
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

  // The real webview took seconds to parse and lay out a megabyte (test/e2e/hostileRender.mjs):
  // past MARKDOWN_MAX_CHARS a text is not parsed at all, and shows cut.
  it('a text past MARKDOWN_MAX_CHARS is not parsed: its first characters show as plain text, then how many more there are', async () => {
    const head = '**bold** [live](https://example.com/x) <img src=x onerror=alert(1)> ';
    const long = `${head}${'['.repeat(ONE_MB)}`;
    await mount(dom, recordingActions(), h('div', null, markdownBlock(long)));
    assert.deepEqual(
      all(dom.root, 'strong, em, a, ul, blockquote').map((e) => e.tagName),
      [],
      'nothing formatted',
    );
    const shown = one(dom.root, byTestId('long-text'));
    assert.equal(shown.textContent?.length, MARKDOWN_MAX_CHARS);
    assert.ok(text(shown).startsWith('**bold** [live](https://example.com/x) <img src=x onerror=alert(1)>'));
    assert.equal(text(one(dom.root, byTestId('long-text-note'))), `… ${(long.length - MARKDOWN_MAX_CHARS).toLocaleString('en-US')} more characters not shown: too long to format`);
    // A text of exactly the limit is formatted as before.
    await mount(dom, recordingActions(), h('div', null, markdownBlock(`**bold** ${'x'.repeat(MARKDOWN_MAX_CHARS - 9)}`)));
    assert.equal(all(dom.root, 'strong').length, 1);
    assert.equal(all(dom.root, byTestId('long-text-note')).length, 0);
  });

  it('a cut never splits a surrogate pair, and bidi controls in it stay visible escapes', async () => {
    const long = `${'x'.repeat(MARKDOWN_MAX_CHARS - 1)}\u{1F600}\u202E${'y'.repeat(10)}`;
    await mount(dom, recordingActions(), h('div', null, markdownBlock(long)));
    const shown = one(dom.root, byTestId('long-text')).textContent ?? '';
    assert.equal(shown, 'x'.repeat(MARKDOWN_MAX_CHARS - 1));
    await mount(dom, recordingActions(), h('div', null, markdownBlock(`\u202E${'z'.repeat(MARKDOWN_MAX_CHARS)}`)));
    assert.ok((one(dom.root, byTestId('long-text')).textContent ?? '').startsWith('\\u202E'));
  });

  it('an inline field past the limit (a megabyte title) is cut with the same note; markdownPlain cuts too', async () => {
    const title = `<script>${CANARY}</script>`.repeat(ONE_MB / 40);
    await mount(dom, recordingActions(), h('h3', null, markdownInline(title)));
    assert.equal(all(dom.root, 'script').length, 0);
    assert.ok(text(dom.root).length < MARKDOWN_MAX_CHARS + 100);
    assert.match(text(one(dom.root, byTestId('long-text-note'))), /more characters not shown: too long to format$/);
    assert.match(markdownPlain(title), /more characters not shown: too long to format$/);
    assert.ok(markdownPlain(title).length < MARKDOWN_MAX_CHARS + 100);
  });

  it('a text nested to the cap shows whole, as plain text, and says so (markdown-it drops everything past the cap)', async () => {
    const deep = `${'- '.repeat(500)}innermost <script>${CANARY}</script>\n\nafter the list`;
    for (const [source, wanted] of [
      [deep, ['innermost <script>window.__pwned', 'after the list']],
      [Array.from({ length: 120 }, (_, i) => `${'  '.repeat(i)}- level ${i} <b onclick="${CANARY}">x</b>`).join('\n'), ['level 119 <b onclick=']],
      [deepQuote, ['deep <script>window.__pwned']],
    ] as const) {
      await mount(dom, recordingActions(), h('div', null, markdownBlock(source)));
      for (const w of wanted) assert.ok(text(dom.root).includes(w), `${w} is shown`);
      assert.equal(text(one(dom.root, byTestId('deep-text-note'))), 'Nested too deep to format: shown as plain text');
      assert.deepEqual(
        all(dom.root, 'ul, ol, blockquote, script, b').map((e) => e.tagName),
        [],
      );
    }
    assert.ok(markdownPlain(deep).includes('after the list'));
    // Twenty levels stay a formatted list.
    await mount(dom, recordingActions(), h('div', null, markdownBlock(Array.from({ length: 20 }, (_, i) => `${'  '.repeat(i)}- level ${i}`).join('\n'))));
    assert.equal(all(dom.root, 'ul').length, 20);
    assert.equal(all(dom.root, byTestId('deep-text-note')).length, 0);
  });

  it('the Markdown component offers the whole of a cut text, as plain text, and only for a block', async () => {
    const long = `*kept literal* ${'a '.repeat(MARKDOWN_MAX_CHARS)}end`;
    await mount(dom, recordingActions(), h('div', null, h(Markdown, { text: long }), h(Markdown, { text: long, inline: true })));
    const buttons = all(dom.root, byTestId('show-long-text'));
    assert.equal(buttons.length, 1, 'one Show all, for the block');
    assert.equal(text(buttons[0]), `Show all ${long.length.toLocaleString('en-US')} characters as plain text`);
    await click(buttons[0] as HTMLElement);
    const whole = all(dom.root, byTestId('long-text'));
    assert.equal(whole[0]?.textContent, long);
    assert.equal(all(dom.root, 'em').length, 0);
    assert.equal(all(dom.root, byTestId('show-long-text')).length, 0);
  });
});
