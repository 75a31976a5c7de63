import * as assert from 'node:assert/strict';
import { Window } from 'happy-dom';
import MarkdownIt from 'markdown-it';
import { marked } from 'marked';
import { md, mdCommand, mdJoin, mdModel, ui, uiText, type Md } from '../../../extension/uiText';
import { inertLinkReason } from '../../../protocol/links';
import { escapeControls } from '../../../protocol/text';

/**
 * The escaping seam against a corpus of payloads, judged the way VS Code renders them:
 * - plain UI text by VS Code's own two rules (1.139, read from the shipped workbench): a
 *   notification's `[label](http(s)://|command:|file:…)` is a live link; `$(name)` is an icon
 *   unless written `\$(name)`;
 * - Markdown by two CommonMark renderers (marked, the engine VS Code's MarkdownString uses, and
 *   markdown-it), the HTML read back as a DOM.
 */

const BEACON = 'http://127.0.0.1:9/beacon';
const PAYLOADS: readonly string[] = [
  '[run](command:workbench.action.terminal.sendSequence?%7B%22text%22%3A%22touch%20pwned%5Cn%22%7D)',
  '[x](javascript:alert(1))',
  `![i](${BEACON}.png)`,
  `[local](${BEACON})`,
  '[file](file:///etc/passwd)',
  '<a href="command:evil">a</a>',
  '<img src=x onerror="fetch(\'http://127.0.0.1:9\')">',
  '"onmouseover="alert(1)".txt',
  '$(terminal) $(alert~spin) open.txt',
  '\\$(terminal) already escaped',
  '`code` ``double`` ```fence```',
  '<script>alert(1)</script>',
  '</style><style>*{display:none}</style>',
  'line one\nline two\r\nthree\u2028four',
  'gpj.\u202Eexe.txt',
  'zero\u200Bwidth\u2060joiner\uFEFFbom',
  'see https://evil.example/path and www.evil.example and <https://evil.example>',
  '**bold** _em_ # head | a | b |',
  '&lt;script&gt; &#60;b&#62; &amp;',
  '[ref][r]\n\n[r]: command:evil',
  '[a]( command:evil )',
  '[a](<command:evil>)',
  '[a](HTTP://127.0.0.1)',
  '[a](http://0x7f.1/)',
  'x](command:evil)',
];

/** VS Code's notification link rule (vs/base/common/linkedText.ts), as a test oracle. */
const VSCODE_LINK = /\[([^\]]+)\]\(((?:https?:\/\/|command:|file:)[^)\s]+)(?: (["'])(.+?)(\3))?\)/gi;
/** VS Code's icon rule (vs/base/browser/ui/iconLabel/iconLabels.ts): an unescaped `$(name)`. */
const VSCODE_ICON = /(\\)?\$\(([a-z0-9-]+?(?:~[a-z0-9-]*?)?)\)/gi;

function liveLinks(text: string): string[] {
  return [...text.matchAll(VSCODE_LINK)].map((m) => m[2] as string);
}
function liveIcons(text: string): string[] {
  return [...text.matchAll(VSCODE_ICON)].filter((m) => !m[1]).map((m) => m[2] as string);
}
/** What a reader sees: the text without the invisible word joiners the seam inserts. */
function seen(text: string): string {
  return text.replace(/\u2060/g, '');
}

const window = new Window();
const markdownIt = new MarkdownIt({ html: true, linkify: true });

interface Rendered {
  html: string;
  text: string;
  links: string[];
  elements: string[];
  handlers: string[];
}

function render(source: string, engine: 'marked' | 'markdown-it'): Rendered {
  const html = engine === 'marked' ? (marked.parse(source, { gfm: true, async: false }) as string) : markdownIt.render(source);
  const doc = new window.DOMParser().parseFromString(`<body>${html}</body>`, 'text/html');
  const all = [...doc.body.querySelectorAll('*')];
  return {
    html,
    text: doc.body.textContent ?? '',
    links: all.filter((e) => e.tagName === 'A').map((e) => e.getAttribute('href') ?? ''),
    elements: all.map((e) => e.tagName.toLowerCase()),
    handlers: all.flatMap((e) => [...e.attributes].map((a) => a.name)).filter((name) => /^on|^style$|^src$/.test(name)),
  };
}

describe('extension/uiText: the one escaping seam', () => {
  describe('ui (plain UI text)', () => {
    it('no payload makes a notification link or an icon, and every payload reads as itself', () => {
      for (const payload of PAYLOADS) {
        const text = ui`Rennet: ${payload} is a submodule`;
        assert.deepEqual(liveLinks(text), [], `${JSON.stringify(payload)} → ${JSON.stringify(text)}`);
        assert.deepEqual(liveIcons(text), [], `${JSON.stringify(payload)} → ${JSON.stringify(text)}`);
        assert.equal(seen(text), `Rennet: ${escapeControls(payload)} is a submodule`);
      }
    });

    it('the oracles do find the raw payloads, so the test can fail', () => {
      assert.deepEqual(liveLinks(PAYLOADS[0] as string).length, 1);
      assert.deepEqual(liveIcons('$(terminal) $(alert~spin)'), ['terminal', 'alert~spin']);
      assert.deepEqual(liveIcons('\\$(terminal)'), []);
    });

    it('line breaks and bidirectional or invisible characters are visible escapes', () => {
      assert.equal(uiText('evil\nname.txt'), 'evil\\nname.txt');
      assert.equal(uiText('gpj.\u202Eexe'), 'gpj.\\u202Eexe');
      assert.equal(uiText('a\u200Bb\u2060c\uFEFF'), 'a\\u200Bb\\u2060c\\uFEFF');
      assert.equal(uiText('C:\\no\\controls'), 'C:\\no\\controls', 'a backslash alone is kept as it is');
      assert.equal(uiText('a\\b\nc'), 'a\\\\b\\nc', 'with an escape in the text, backslashes double so it reads back exactly');
    });

    it('literal parts are ours and kept; numbers, null and undefined interpolate', () => {
      assert.equal(ui`Rennet host restarted (pid ${4242}); ${null}${undefined}done`, 'Rennet host restarted (pid 4242); done');
      assert.equal(ui`[our](https://example.com) link`, '[our](https://example.com) link');
    });
  });

  describe('md (Markdown of ours with escaped values)', () => {
    for (const engine of ['marked', 'markdown-it'] as const) {
      it(`every payload renders as its own text, nothing else (${engine})`, () => {
        for (const payload of PAYLOADS) {
          const out = render(md`**Claim** — ${payload}`.source, engine);
          const where = `${JSON.stringify(payload)} →\n${out.html}`;
          assert.deepEqual(out.links, [], where);
          assert.deepEqual(out.handlers, [], where);
          assert.deepEqual(
            out.elements.filter((e) => e !== 'p' && e !== 'strong'),
            [],
            where,
          );
          assert.equal(out.text.trim(), `Claim — ${escapeControls(payload.replace(/[ \t\r\n]+/g, ' '))}`.trim(), where);
        }
      });
    }

    it('a command link trusts exactly its own command, with its arguments intact', () => {
      const link = mdCommand('Show on board', 'rennet.revealElement', [{ elementId: 'a)b(', note: '[x](command:evil)' }]);
      const doc = md`**Flagged** — ${'[x](command:evil)'} · ${link}`;
      assert.deepEqual(doc.commands, ['rennet.revealElement']);
      const out = render(doc.source, 'marked');
      assert.equal(out.links.length, 1, out.html);
      const href = out.links[0] as string;
      assert.ok(href.startsWith('command:rennet.revealElement?'), href);
      assert.deepEqual(JSON.parse(decodeURIComponent(href.slice(href.indexOf('?') + 1))), [{ elementId: 'a)b(', note: '[x](command:evil)' }]);
      assert.throws(() => mdCommand('x', 'evil) [y](command:other', []), /not a command id/);
    });

    it('joined pieces keep every command once and untrusted pieces add none', () => {
      const a = mdCommand('A', 'rennet.a', []);
      const joined = mdJoin([a, md`${'text'}`, mdModel('[x](command:rennet.b)'), a], '\n\n');
      assert.deepEqual(joined.commands, ['rennet.a']);
    });
  });

  describe('mdModel (model-written Markdown, re-emitted safe)', () => {
    const judge = (doc: Md, engine: 'marked' | 'markdown-it') => {
      const out = render(doc.source, engine);
      const where = `${doc.source}\n→\n${out.html}`;
      assert.deepEqual(out.handlers, [], where);
      assert.deepEqual(
        out.elements.filter((e) => ['img', 'script', 'style', 'iframe', 'svg', 'input', 'form', 'object'].includes(e)),
        [],
        where,
      );
      for (const href of out.links) {
        const live = /^mailto:/.test(href) || (/^https?:\/\//.test(href) && inertLinkReason(href) === null);
        assert.ok(live, `only public http(s) and mailto links stay live, not ${href}: ${where}`);
      }
      return out;
    };

    for (const engine of ['marked', 'markdown-it'] as const) {
      it(`no payload yields a command, script, image, private link or handler (${engine})`, () => {
        for (const payload of PAYLOADS) judge(mdModel(payload), engine);
        judge(mdModel(PAYLOADS.join('\n\n')), engine);
        judge(mdModel(PAYLOADS.map((p) => `- ${p}`).join('\n')), engine);
        judge(mdModel(PAYLOADS.map((p) => `> ${p}`).join('\n')), engine);
        judge(mdModel(`| a | b |\n| - | - |\n${PAYLOADS.map((p) => `| ${p.replace(/\|/g, '/')} | x |`).join('\n')}`), engine);
      });
    }

    it('keeps the structure a reader needs: emphasis, code, lists, quotes, tables, public links', () => {
      const source = [
        '# Heading',
        'Some **bold**, *em*, ~~gone~~ and `a `` b` code, [docs](https://example.com/a_(b)) and [mail](mailto:a@b.c).',
        '',
        '1. one',
        '2. two with `x`',
        '   - nested',
        '',
        '> quoted [link](https://github.com/o/r)',
        '',
        '```ts',
        'const x = "[a](command:evil)"; // ``` inside',
        '```',
        '',
        '| a | b |',
        '| - | - |',
        '| 1 | 2 |',
      ].join('\n');
      const out = judge(mdModel(source), 'marked');
      assert.deepEqual(out.links, ['https://example.com/a_(b)', 'mailto:a@b.c', 'https://github.com/o/r']);
      for (const tag of ['strong', 'em', 'del', 'code', 'ol', 'ul', 'li', 'blockquote', 'pre', 'table', 'td']) assert.ok(out.elements.includes(tag), `${tag} kept: ${out.html}`);
      assert.match(out.text, /Heading/);
      assert.match(out.text, /const x = "\[a\]\(command:evil\)"; \/\/ ``` inside/, 'code keeps its text verbatim');
    });

    it('a link it will not open shows its label and its URL, saying why', () => {
      const out = render(mdModel(`See [the metrics](${BEACON}) and [run](command:evil) and [rel](docs/a.md).`).source, 'marked');
      assert.deepEqual(out.links, []);
      assert.match(out.text, /the metrics \(http:\/\/127\.0\.0\.1:9\/beacon — not opened: it points at this machine or a private network\)/);
      assert.match(out.text, /run \(command:evil — not opened: not a web link\)/);
      assert.match(out.text, /rel \(docs\/a\.md — not opened: not a web link\)/);
    });

    it('an image is its alt text, never fetched', () => {
      const out = render(mdModel(`![chart of ${'[x](command:y)'}](https://example.com/c.png)`).source, 'marked');
      assert.deepEqual(
        out.elements.filter((e) => e === 'img' || e === 'a'),
        [],
      );
      assert.match(out.text, /\[image: chart of/);
    });

    it('a hostile nesting depth stays bounded', () => {
      const deep = `${'> '.repeat(500)}x\n\n${'- '.repeat(500)}y\n\n${'['.repeat(2000)}`;
      const doc = mdModel(deep);
      assert.ok(doc.source.length < deep.length * 8, `${doc.source.length} chars`);
      judge(doc, 'marked');
    });
  });
});
