import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Window } from 'happy-dom';
import MarkdownIt from 'markdown-it';
import { LENSES, type Lens } from '../../../protocol/board';
import type { CitationMark } from '../../../protocol/review';
import { citationsOfDocument, combinedIconSvg, gutterIconName, hoverMarkdown, HOVER_MAX_ENTRIES, planMarks, svgDrawing, type MarksPlan } from '../../../extension/citationMarksPlan';

const reveal = { sessionId: 's-1', generationId: 'g-0123456789abcdef' };

function mark(lens: CitationMark['lens'], elementId: string, startLine: number, endLine: number, extra: Partial<CitationMark> = {}): CitationMark {
  return { lens, elementId, path: 'src/app.ts', side: 'head', startLine, endLine, claim: `${lens} ${elementId}`, ...extra };
}

/** Lens → [start, end] of every planned mark, for readable comparisons. */
function ranges(plan: MarksPlan): Record<string, Array<[number, number]>> {
  const out: Record<string, Array<[number, number]>> = {};
  for (const [lens, marks] of Object.entries(plan.byLens)) if (marks.length) out[lens] = marks.map((m) => [m.startLine, m.endLine]);
  return out;
}

/** Every line's gutter icon name, for readable comparisons. */
function gutterByLine(plan: MarksPlan): Record<number, string> {
  const out: Record<number, string> = {};
  for (const g of plan.gutter) for (let n = g.startLine; n <= g.endLine; n++) out[n] = gutterIconName(g.lenses);
  return out;
}

/** The icons as shipped. */
const MEDIA = join(__dirname, '..', '..', '..', 'media');
const lensIcon = (lens: Lens) => ({ lens, svg: readFileSync(join(MEDIA, `lens-${lens}.svg`), 'utf8') });

/** Renders Markdown more permissively than VS Code does (raw HTML on, bare URLs linked). */
const permissive = new MarkdownIt({ html: true, linkify: true });

function links(html: string): string[] {
  return [...html.matchAll(/<a href="([^"]*)"/g)].map((m) => m[1] as string);
}

describe('citation marks plan', () => {
  describe('citationsOfDocument', () => {
    const files = [
      { path: 'src/app.ts', oldPath: null, status: 'modified' as const },
      { path: 'docs/new-name.md', oldPath: 'docs/old-name.md', status: 'renamed' as const },
    ];
    const citations: CitationMark[] = [
      mark('design', 'a', 1, 2),
      mark('sequence', 'b', 3, 3, { side: 'base' }),
      mark('flagged', 'c', 4, 4, { path: 'docs/old-name.md', side: 'base' }),
      mark('flagged', 'd', 5, 5, { path: 'docs/new-name.md', side: 'base' }),
      mark('noise', 'e', 6, 6, { path: 'docs/new-name.md', side: 'head' }),
      mark('design', 'f', 7, 7, { path: 'other.ts' }),
    ];

    it('keeps the citations of the document’s path and side', () => {
      assert.deepEqual(
        citationsOfDocument(citations, { path: 'src/app.ts', side: 'head' }, files).map((c) => c.elementId),
        ['a'],
      );
      assert.deepEqual(
        citationsOfDocument(citations, { path: 'src/app.ts', side: 'base' }, files).map((c) => c.elementId),
        ['b'],
      );
      assert.deepEqual(
        citationsOfDocument(citations, { path: 'docs/new-name.md', side: 'head' }, files).map((c) => c.elementId),
        ['e'],
      );
    });

    it('a rename’s base side is the same document under its old or new path', () => {
      for (const docPath of ['docs/old-name.md', 'docs/new-name.md']) {
        assert.deepEqual(
          citationsOfDocument(citations, { path: docPath, side: 'base' }, files).map((c) => c.elementId),
          ['c', 'd'],
          docPath,
        );
      }
    });

    it('a path that is not a changed file gets nothing; without the file list only exact paths match', () => {
      assert.deepEqual(citationsOfDocument(citations, { path: 'other.ts', side: 'head' }, files), []);
      assert.deepEqual(
        citationsOfDocument(citations, { path: 'docs/old-name.md', side: 'base' }, null).map((c) => c.elementId),
        ['c'],
      );
    });
  });

  describe('planMarks', () => {
    it('marks each cited run once per lens, in canonical lens order, with one hover per run', () => {
      const plan = planMarks([mark('sequence', 's1', 5, 5), mark('design', 'd1', 3, 6)], { lineCount: 30, verifiedLines: Infinity }, reveal);
      assert.deepEqual(ranges(plan), {
        design: [
          [3, 4],
          [5, 5],
          [6, 6],
        ],
        sequence: [[5, 5]],
      });
      // Line 5 carries both lenses; the hover (on Design's mark, first in lens order) lists both.
      const design5 = plan.byLens.design.find((m) => m.startLine === 5);
      assert.match(design5?.hover?.source ?? '', /\*\*Design\*\* — design d1.*\n\n\*\*Sequence\*\* — sequence s1/s);
      assert.equal(plan.byLens.sequence[0]?.hover, null);
      assert.doesNotMatch(plan.byLens.design[0]?.hover?.source ?? '', /Sequence/);
    });

    it('drops repeats of one element on the same lines, and merges one lens’s overlapping citations into runs', () => {
      const plan = planMarks([mark('flagged', 'x', 2, 4), mark('flagged', 'x', 2, 4), mark('flagged', 'y', 3, 3)], { lineCount: 30, verifiedLines: Infinity }, reveal);
      assert.deepEqual(ranges(plan), {
        flagged: [
          [2, 2],
          [3, 3],
          [4, 4],
        ],
      });
      const hover3 = plan.byLens.flagged[1]?.hover?.source ?? '';
      assert.equal(hover3.split('\n\n').length, 2, hover3);
      assert.equal((plan.byLens.flagged[0]?.hover?.source ?? '').split('\n\n').length, 1, 'x listed twice');
    });

    it('marks only lines the document has and that are verified as captured', () => {
      const citations = [mark('design', 'a', 2, 8), mark('noise', 'b', 12, 12)];
      assert.deepEqual(ranges(planMarks(citations, { lineCount: 10, verifiedLines: Infinity }, reveal)), { design: [[2, 8]] });
      assert.deepEqual(ranges(planMarks(citations, { lineCount: 30, verifiedLines: 5 }, reveal)), { design: [[2, 5]] });
      assert.deepEqual(ranges(planMarks(citations, { lineCount: 30, verifiedLines: 0 }, reveal)), {});
      assert.deepEqual(ranges(planMarks([], { lineCount: 30, verifiedLines: Infinity }, reveal)), {});
    });
  });

  describe('gutter icons', () => {
    it('a line shows one icon naming every lens that cites it; runs with the same lenses share one', () => {
      const plan = planMarks(
        [mark('design', 'd1', 10, 12), mark('design', 'd2', 13, 13), mark('sequence', 's1', 26, 27), mark('flagged', 'f1', 27, 28), mark('noise', 'n1', 27, 27)],
        { lineCount: 40, verifiedLines: Infinity },
        reveal,
      );
      assert.deepEqual(gutterByLine(plan), {
        10: 'lens-design.svg',
        11: 'lens-design.svg',
        12: 'lens-design.svg',
        13: 'lens-design.svg',
        26: 'lens-sequence.svg',
        27: 'lens-sequence_lens-flagged_lens-noise.svg',
        28: 'lens-flagged.svg',
      });
      assert.deepEqual(
        plan.gutter.map((g) => [g.lenses, g.startLine, g.endLine]),
        [
          [['design'], 10, 13],
          [['sequence'], 26, 26],
          [['sequence', 'flagged', 'noise'], 27, 27],
          [['flagged'], 28, 28],
        ],
      );
      // The ruler marks and hovers stay per lens: Flagged's own marks, the hover on Sequence's at 27.
      assert.deepEqual(ranges(plan).flagged, [
        [27, 27],
        [28, 28],
      ]);
      assert.match(plan.byLens.sequence.find((m) => m.startLine === 27)?.hover?.source ?? '', /Sequence.*Flagged.*Noise/s);
    });

    it('over many overlapping citations, each line’s icon names exactly the lenses marking it, once', () => {
      let seed = 7;
      const next = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
      const citations = Array.from({ length: 60 }, (_, i) => {
        const start = 1 + next(80);
        return mark(LENSES[next(LENSES.length)] as Lens, `e${i}`, start, start + next(6));
      });
      const plan = planMarks(citations, { lineCount: 84, verifiedLines: 70 }, reveal);
      const icons = new Map<number, Lens[]>();
      for (const g of plan.gutter) {
        assert.ok(g.startLine <= g.endLine && g.lenses.length > 0, JSON.stringify(g));
        for (let n = g.startLine; n <= g.endLine; n++) {
          assert.ok(!icons.has(n), `line ${n} has two gutter icons`);
          icons.set(n, g.lenses);
        }
      }
      for (let n = 1; n <= 84; n++) {
        const marked = LENSES.filter((lens) => plan.byLens[lens].some((m) => m.startLine <= n && m.endLine >= n));
        const cited = n > 70 ? [] : LENSES.filter((lens) => citations.some((c) => c.lens === lens && c.startLine <= n && c.endLine >= n));
        assert.deepEqual(marked, cited, `line ${n}: lens marks`);
        assert.deepEqual(icons.get(n) ?? [], cited, `line ${n}: gutter icon`);
      }
      assert.ok(
        [...icons.values()].some((lenses) => lenses.length >= 2),
        'the sample has no line two lenses cite',
      );
    });

    it('names: a lens’s own icon, else every lens’s name in lens order; 31 combinations, all distinct', () => {
      assert.equal(gutterIconName(['flagged']), 'lens-flagged.svg');
      assert.equal(gutterIconName(['flagged', 'sequence']), 'lens-sequence_lens-flagged.svg');
      assert.equal(gutterIconName(['noise', 'design', 'flagged', 'sequence', 'decisions']), 'lens-design_lens-sequence_lens-decisions_lens-flagged_lens-noise.svg');
      const names = new Set<string>();
      for (let bits = 1; bits < 32; bits++) {
        const lenses = LENSES.filter((_, i) => bits & (1 << i));
        const name = gutterIconName(lenses);
        names.add(name);
        assert.deepEqual(
          [...name.matchAll(/lens-([a-z]+)(?=[_.])/g)].map((m) => m[1]),
          lenses,
          name,
        );
        assert.match(name, /^[a-z_-]+\.svg$/, 'nothing a URL would encode');
      }
      assert.equal(names.size, 31);
      assert.throws(() => gutterIconName([]), RangeError);
    });

    it('a combined icon draws each lens’s own icon in its own tile inside the 16×16 box, in lens order', () => {
      const window = new Window();
      const parse = (svg: string) => new window.DOMParser().parseFromString(svg, 'image/svg+xml');
      const own = new Map(LENSES.map((lens) => [lens, parse(lensIcon(lens).svg).documentElement.innerHTML]));
      for (let bits = 1; bits < 32; bits++) {
        const lenses = LENSES.filter((_, i) => bits & (1 << i));
        if (lenses.length < 2) continue;
        const combined = combinedIconSvg([...lenses].reverse().map(lensIcon));
        assert.ok(combined.ok, combined.ok ? '' : combined.reason);
        const doc = parse(combined.svg);
        assert.equal(doc.querySelector('parsererror'), null, combined.svg);
        const root = doc.documentElement;
        assert.equal(root.getAttribute('viewBox'), '0 0 16 16');
        const tiles = [...root.children];
        assert.deepEqual(
          tiles.map((t) => t.innerHTML),
          lenses.map((lens) => own.get(lens)),
          lenses.join('+'),
        );
        const boxes = tiles.map((t) => ['x', 'y', 'width', 'height'].map((a) => Number(t.getAttribute(a))) as [number, number, number, number]);
        for (const [i, [x, y, w, h]] of boxes.entries()) {
          assert.ok(x >= 0 && y >= 0 && x + w <= 16.001 && y + h <= 16.001 && w >= 16 / 3 - 0.01, `${lenses.join('+')}: tile ${i} ${[x, y, w, h]}`);
          for (const [j, [x2, y2, w2, h2]] of boxes.entries()) {
            if (j <= i) continue;
            const apart = x + w <= x2 + 0.001 || x2 + w2 <= x + 0.001 || y + h <= y2 + 0.001 || y2 + h2 <= y + 0.001;
            assert.ok(apart, `${lenses.join('+')}: tiles ${i} and ${j} overlap`);
          }
        }
      }
      window.close();
    });

    it('an icon that is not an SVG drawing is refused with its reason, never drawn half', () => {
      assert.equal(svgDrawing('<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16"><circle r="2"/></svg>').ok, true);
      assert.deepEqual(svgDrawing('<p>not an icon</p>'), { ok: false, reason: 'it is not an <svg> element' });
      assert.equal(svgDrawing('<svg viewBox="0 0 0 16"></svg>').ok, false);
      const refused = combinedIconSvg([lensIcon('design'), { lens: 'noise', svg: 'broken' }]);
      assert.equal(refused.ok, false);
      assert.match(refused.ok ? '' : refused.reason, /the noise icon cannot be combined/);
    });
  });

  describe('hover text', () => {
    const hostile = [
      '[x](command:evil)',
      '<img src=x onerror=alert(1)>',
      '![pic](https://example.com/p.png)',
      'see https://evil.example/path and www.evil.example',
      '**bold** _em_ `code` # head | a | b |',
      '&lt;script&gt; &#60;b&#62;',
      '$(alert) \\[escaped\\]',
      'line one\n\n# a heading\n    indented code',
    ];

    it('a model-written claim renders as its own text: no link, image, HTML, emphasis or entity', () => {
      for (const claim of hostile) {
        const md = hoverMarkdown([mark('flagged', 'f1', 3, 3, { claim })], reveal).source;
        const html = permissive.render(md);
        assert.deepEqual(
          links(html).map((href) => href.split('?')[0]),
          ['command:rennet.revealElement'],
          `${JSON.stringify(claim)} →\n${html}`,
        );
        const claimHtml = html.replace('<p><strong>Flagged</strong>', '');
        assert.doesNotMatch(claimHtml, /<(img|script|strong|em|code|h\d|pre|table|b|p)\b/, `${JSON.stringify(claim)} →\n${html}`);
        const text = permissive
          .renderInline(md.split(' · [Show on board]')[0] as string)
          .replace(/&lt;/g, '<')
          .replace(/&gt;/g, '>')
          .replace(/&quot;/g, '"')
          .replace(/&amp;/g, '&');
        assert.equal(text, `<strong>Flagged</strong> — ${claim.replace(/\s+/g, ' ').trim()}`);
      }
    });

    it('the one link reveals the element on the board, its arguments intact', () => {
      const md = hoverMarkdown([mark('decisions', 'el (1)', 3, 3)], reveal).source;
      const [href] = links(permissive.render(md));
      const query = decodeURIComponent((href as string).split('?')[1] as string);
      assert.deepEqual(JSON.parse(query), [{ ...reveal, lens: 'decisions', elementId: 'el (1)' }]);
      const [odd] = links(permissive.render(hoverMarkdown([mark('decisions', 'a)b(', 3, 3)], reveal).source));
      assert.doesNotMatch((odd as string).split('?')[1] as string, /[()]/, 'parentheses in the arguments are percent-encoded');
      assert.deepEqual(hoverMarkdown([mark('decisions', 'a)b(', 3, 3)], reveal).commands, ['rennet.revealElement'], 'the hover trusts exactly its own command');
    });

    it('lists elements once, lens order first, and counts what it leaves out', () => {
      const many = Array.from({ length: HOVER_MAX_ENTRIES + 3 }, (_, i) => mark('noise', `n${i}`, 1, 1));
      const md = hoverMarkdown([...many, mark('design', 'd', 1, 1), mark('design', 'd', 1, 1)], reveal).source;
      const paragraphs = md.split('\n\n');
      assert.equal(paragraphs.length, HOVER_MAX_ENTRIES + 1);
      assert.match(paragraphs[0] as string, /^\*\*Design\*\* — design d/);
      assert.equal(paragraphs.at(-1), '*and 4 more on the board*');
      assert.match(hoverMarkdown([mark('design', 'e', 1, 1, { claim: '  ' })], reveal).source, /\*\(no claim\)\*/);
    });
  });
});
