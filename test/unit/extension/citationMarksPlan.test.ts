import * as assert from 'node:assert/strict';
import MarkdownIt from 'markdown-it';
import type { CitationMark } from '../../../protocol/review';
import {
  citationsOfDocument,
  escapeMarkdown,
  hoverMarkdown,
  HOVER_MAX_ENTRIES,
  planMarks,
  revealCommandUri,
  type MarksPlan,
} from '../../../extension/citationMarksPlan';

const reveal = { sessionId: 's-1', generationId: 'g-0123456789abcdef' };

function mark(lens: CitationMark['lens'], elementId: string, startLine: number, endLine: number, extra: Partial<CitationMark> = {}): CitationMark {
  return { lens, elementId, path: 'src/app.ts', side: 'head', startLine, endLine, claim: `${lens} ${elementId}`, ...extra };
}

/** Lens → [start, end] of every planned mark, for readable comparisons. */
function ranges(plan: MarksPlan): Record<string, Array<[number, number]>> {
  const out: Record<string, Array<[number, number]>> = {};
  for (const [lens, marks] of Object.entries(plan)) if (marks.length) out[lens] = marks.map((m) => [m.startLine, m.endLine]);
  return out;
}

/** Renders Markdown more permissively than VS Code does (raw HTML on, bare URLs linked). */
const permissive = new MarkdownIt({ html: true, linkify: true });

function links(html: string): string[] {
  return [...html.matchAll(/<a href="([^"]*)"/g)].map((m) => m[1] as string);
}

describe('citation marks plan', () => {
  describe('citationsOfDocument', () => {
    const files = [
      { path: 'src/app.ts', oldPath: null },
      { path: 'docs/new-name.md', oldPath: 'docs/old-name.md' },
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
      assert.deepEqual(citationsOfDocument(citations, { path: 'src/app.ts', side: 'head' }, files).map((c) => c.elementId), ['a']);
      assert.deepEqual(citationsOfDocument(citations, { path: 'src/app.ts', side: 'base' }, files).map((c) => c.elementId), ['b']);
      assert.deepEqual(citationsOfDocument(citations, { path: 'docs/new-name.md', side: 'head' }, files).map((c) => c.elementId), ['e']);
    });

    it('a rename’s base side is the same document under its old or new path', () => {
      for (const docPath of ['docs/old-name.md', 'docs/new-name.md']) {
        assert.deepEqual(citationsOfDocument(citations, { path: docPath, side: 'base' }, files).map((c) => c.elementId), ['c', 'd'], docPath);
      }
    });

    it('a path that is not a changed file gets nothing; without the file list only exact paths match', () => {
      assert.deepEqual(citationsOfDocument(citations, { path: 'other.ts', side: 'head' }, files), []);
      assert.deepEqual(citationsOfDocument(citations, { path: 'docs/old-name.md', side: 'base' }, null).map((c) => c.elementId), ['c']);
    });
  });

  describe('planMarks', () => {
    it('marks each cited run once per lens, in canonical lens order, with one hover per run', () => {
      const plan = planMarks([mark('sequence', 's1', 5, 5), mark('design', 'd1', 3, 6)], { lineCount: 30, verifiedLines: Infinity }, reveal);
      assert.deepEqual(ranges(plan), { design: [[3, 4], [5, 5], [6, 6]], sequence: [[5, 5]] });
      // Line 5 carries both lenses; the hover (on Design's mark, first in lens order) lists both.
      const design5 = plan.design.find((m) => m.startLine === 5);
      assert.match(design5?.hover ?? '', /\*\*Design\*\* — design d1.*\n\n\*\*Sequence\*\* — sequence s1/s);
      assert.equal(plan.sequence[0]?.hover, null);
      assert.doesNotMatch(plan.design[0]?.hover ?? '', /Sequence/);
    });

    it('drops repeats of one element on the same lines, and merges one lens’s overlapping citations into runs', () => {
      const plan = planMarks(
        [mark('flagged', 'x', 2, 4), mark('flagged', 'x', 2, 4), mark('flagged', 'y', 3, 3)],
        { lineCount: 30, verifiedLines: Infinity },
        reveal,
      );
      assert.deepEqual(ranges(plan), { flagged: [[2, 2], [3, 3], [4, 4]] });
      const hover3 = plan.flagged[1]?.hover ?? '';
      assert.equal(hover3.split('\n\n').length, 2, hover3);
      assert.equal((plan.flagged[0]?.hover ?? '').split('\n\n').length, 1, 'x listed twice');
    });

    it('marks only lines the document has and that are verified as captured', () => {
      const citations = [mark('design', 'a', 2, 8), mark('noise', 'b', 12, 12)];
      assert.deepEqual(ranges(planMarks(citations, { lineCount: 10, verifiedLines: Infinity }, reveal)), { design: [[2, 8]] });
      assert.deepEqual(ranges(planMarks(citations, { lineCount: 30, verifiedLines: 5 }, reveal)), { design: [[2, 5]] });
      assert.deepEqual(ranges(planMarks(citations, { lineCount: 30, verifiedLines: 0 }, reveal)), {});
      assert.deepEqual(ranges(planMarks([], { lineCount: 30, verifiedLines: Infinity }, reveal)), {});
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
        const md = hoverMarkdown([mark('flagged', 'f1', 3, 3, { claim })], reveal);
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
      const md = hoverMarkdown([mark('decisions', 'el (1)', 3, 3)], reveal);
      const [href] = links(permissive.render(md));
      const query = decodeURIComponent((href as string).split('?')[1] as string);
      assert.deepEqual(JSON.parse(query), [{ ...reveal, lens: 'decisions', elementId: 'el (1)' }]);
      assert.doesNotMatch(revealCommandUri({ ...reveal, lens: 'decisions', elementId: 'a)b(' }), /[()]/);
    });

    it('lists elements once, lens order first, and counts what it leaves out', () => {
      const many = Array.from({ length: HOVER_MAX_ENTRIES + 3 }, (_, i) => mark('noise', `n${i}`, 1, 1));
      const md = hoverMarkdown([...many, mark('design', 'd', 1, 1), mark('design', 'd', 1, 1)], reveal);
      const paragraphs = md.split('\n\n');
      assert.equal(paragraphs.length, HOVER_MAX_ENTRIES + 1);
      assert.match(paragraphs[0] as string, /^\*\*Design\*\* — design d/);
      assert.equal(paragraphs.at(-1), '*and 4 more on the board*');
      assert.match(hoverMarkdown([mark('design', 'e', 1, 1, { claim: '  ' })], reveal), /\*\(no claim\)\*/);
    });

    it('escapeMarkdown backslash-escapes every ASCII punctuation character and nothing else', () => {
      assert.equal(escapeMarkdown('a_b [c](d) <e> é 1.'), 'a\\_b \\[c\\]\\(d\\) \\<e\\> é 1\\.');
    });
  });
});
