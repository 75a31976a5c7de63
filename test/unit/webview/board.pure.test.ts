import * as assert from 'node:assert/strict';
import { SOURCE_EXTENSIONS } from '../../../host/board/prose';
import { LENSES, LENS_ADMISSIBLE_ABSENCES } from '../../../protocol';
import { CITATION_EXTENSIONS, findCitations, isAllowedHref, markdownPlain } from '../../../webview/board/markdown';
import { buildTree, MAX_ELEMENT_DEPTH, scenarioClauses, type TreeNode } from '../../../webview/board/tree';
import {
  absenceMeaning,
  defaultLens,
  generationSpendParts,
  lanesInOrder,
  laneStateTitle,
  NOISE_WAITING_EXPLANATION,
  rangeLabel,
  retryLabel,
  selectedLens,
  spendParts,
} from '../../../webview/board/words';
import { codeRef, elements, generation, lane, spend } from './boardFixtures';

describe('webview/board (pure)', () => {
  describe('citations in prose', () => {
    it('finds repo/path.ext:12 and :12-20, head side', () => {
      const found = findCitations('See src/retry.ts:8 and lib/a-b/c.test.tsx:12-20, then README.md:1.');
      assert.deepEqual(
        found.map((c) => [c.path, c.start, c.end, c.raw]),
        [
          ['src/retry.ts', 8, 8, 'src/retry.ts:8'],
          ['lib/a-b/c.test.tsx', 12, 20, 'lib/a-b/c.test.tsx:12-20'],
          ['README.md', 1, 1, 'README.md:1'],
        ],
      );
    });

    it('leaves what is not a repo-relative citation as prose', () => {
      for (const prose of [
        'listen on 127.0.0.1:0',
        'version v1.2:3',
        'http://example.com:8080/x',
        'example.com:8080',
        '/abs/path.ts:3',
        '~/home.ts:3',
        './rel.ts:3',
        'a/../b.ts:3',
        'src/x.ts:0',
        'src/x.ts:9-3',
        'src/x.ts#L3',
        'src/x.ts:3abc',
      ]) {
        assert.deepEqual(findCitations(prose), [], prose);
      }
    });

    it('keeps the same extension list as the host citation rule', () => {
      assert.deepEqual([...CITATION_EXTENSIONS].sort(), [...SOURCE_EXTENSIONS].sort());
    });

    it('scans a megabyte of path-like text in linear time', () => {
      const started = Date.now();
      findCitations(`${'a.'.repeat(500_000)}ts`);
      findCitations('a/'.repeat(500_000));
      assert.ok(Date.now() - started < 2000, 'citation scan is not linear');
    });
  });

  describe('links', () => {
    it('allows http(s), mailto and scheme-less targets only', () => {
      for (const ok of ['https://x.test', 'http://x.test', 'mailto:a@b.test', '#frag', 'docs/a.md']) assert.ok(isAllowedHref(ok), ok);
      for (const bad of ['javascript:alert(1)', 'JaVaScRiPt:alert(1)', ' javascript:x', 'java\tscript:x', 'data:text/html,x', 'vbscript:x', 'file:///etc/passwd', 'vscode:x']) {
        assert.ok(!isAllowedHref(bad), bad);
      }
    });

    it('reads Markdown as plain words', () => {
      assert.equal(markdownPlain('# Title\n\nSome *em* and `code`.'), 'Title Some em and code.');
    });
  });

  describe('lanes and selection', () => {
    it('defaults to Flagged when its board exists', () => {
      assert.equal(defaultLens(generation()), 'flagged');
      assert.equal(defaultLens(null), 'flagged');
    });

    it('defaults to the first lens with a board when Flagged has none', () => {
      const g = generation({
        lanes: [
          lane('design', 'queued'),
          lane('sequence', 'settled'),
          lane('decisions', 'settled'),
          lane('flagged', 'failed', { failure: { message: 'x', retryable: true, attempts: 1 } }),
          lane('noise', 'waiting'),
        ],
      });
      assert.equal(defaultLens(g), 'sequence');
      assert.equal(selectedLens(g, null), 'sequence');
      assert.equal(selectedLens(g, 'noise'), 'noise', 'a chosen lens wins, whatever its state');
    });

    it('falls back to Flagged when no lane has a board yet', () => {
      assert.equal(defaultLens(generation({ lanes: LENSES.map((l) => lane(l, 'queued')) })), 'flagged');
    });

    it('keeps all five lanes in canonical order; a missing lane is a stated failure', () => {
      const g = generation({ lanes: [lane('noise', 'settled'), lane('design', 'settled')] });
      const lanes = lanesInOrder(g);
      assert.deepEqual(
        lanes.map((l) => l.lens),
        [...LENSES],
      );
      assert.equal(lanes[1]?.state, 'failed');
      assert.match(lanes[1]?.failure?.message ?? '', /no Sequence lane/);
    });

    it('names every absence by its meaning and every retry', () => {
      for (const lens of LENSES) for (const row of LENS_ADMISSIBLE_ABSENCES[lens]) assert.equal(absenceMeaning(lens, row.absence), row.meaning);
      assert.equal(retryLabel({ message: 'm', retryable: true, attempts: 1 }), 'retryable');
      assert.equal(retryLabel({ message: 'm', retryable: false, attempts: 1 }), 'terminal');
      assert.equal(retryLabel({ message: 'm', retryable: null, attempts: 0 }), 'retry not known');
      assert.equal(laneStateTitle('noise', 'waiting'), NOISE_WAITING_EXPLANATION);
    });

    it('states a range with its side', () => {
      assert.equal(rangeLabel('head', 3, 3), 'line 3');
      assert.equal(rangeLabel('base', 3, 9), 'base lines 3–9');
    });
  });

  describe('spend', () => {
    it('says "no usage reported", never a fake zero', () => {
      const parts = spendParts([spend('flagged', { inputTokens: null, outputTokens: null })]);
      assert.equal(parts.find((p) => p.key === 'tokens')?.text, 'no usage reported');
    });

    it('adds up what was reported and counts what was not', () => {
      const parts = spendParts([spend('flagged'), spend('noise', { inputTokens: null, outputTokens: null, toolCalls: null })]);
      assert.equal(parts.find((p) => p.key === 'tokens')?.text, '12,000 tokens in, 1,500 out (1 turn reported no usage)');
      assert.equal(parts.find((p) => p.key === 'tools')?.text, '9 tool calls (1 refused)');
      assert.equal(spendParts([])[0]?.text, 'no seat turns yet');
    });

    it('says what the seats read through the read tools, and nothing for records from before them', () => {
      const parts = spendParts([spend('flagged', { readCalls: 7, readBytes: 3 * 1024, readMs: 240 }), spend('noise', { readCalls: 2, readBytes: 1024, readMs: 60 })]);
      assert.equal(parts.find((p) => p.key === 'reads')?.text, '9 reads (4 KiB in 300 ms)');
      assert.equal(
        spendParts([spend('flagged')]).find((p) => p.key === 'reads'),
        undefined,
      );
    });

    it('times a generation by its phases', () => {
      const parts = generationSpendParts(generation());
      assert.equal(parts.find((p) => p.key === 'wall')?.text, '40.0 s wall clock');
      assert.equal(parts.find((p) => p.key === 'first')?.text, 'first board after 21.0 s');
    });
  });

  describe('the element tree', () => {
    const flat = (nodes: readonly TreeNode[], out: string[] = []): string[] => {
      for (const n of nodes) {
        out.push(n.element.id);
        flat(n.children, out);
      }
      return out;
    };

    it('places every element once, in creation order, children under parents', () => {
      const pool = elements([
        { id: 'a', kind: 'section', title: 'A', delta: null },
        codeRef('r', 'src/a.ts', 1, 2),
        { id: 'b', kind: 'order_step', parent: 'a', title: 'B', explanation_markdown: 'x', span: 'r' },
        { id: 'c', kind: 'order_step', parent: 'a', title: 'C', explanation_markdown: 'x', span: 'missing' },
        { id: 'orphan', kind: 'prose', parent: 'nowhere', markdown: 'x' },
      ]);
      const tree = buildTree(pool);
      assert.deepEqual(
        tree.roots.map((n) => n.element.id),
        ['a', 'r', 'orphan'],
      );
      assert.deepEqual(flat(tree.roots), ['a', 'b', 'c', 'r', 'orphan']);
      assert.ok(tree.referenced.has('r'));
      assert.equal(tree.stepNumbers.get('b'), 1);
      assert.equal(tree.stepNumbers.get('c'), 2);
    });

    it('breaks parent cycles and self-parents without dropping anything', () => {
      const pool = elements([
        { id: 'x', kind: 'section', parent: 'y', title: 'X', delta: null },
        { id: 'y', kind: 'section', parent: 'x', title: 'Y', delta: null },
        { id: 'z', kind: 'section', parent: 'z', title: 'Z', delta: null },
      ]);
      const ids = flat(buildTree(pool).roots);
      assert.deepEqual([...ids].sort(), ['x', 'y', 'z']);
    });

    it('shows nesting deeper than the ceiling flat', () => {
      const pool = elements(Array.from({ length: 300 }, (_, i) => ({ id: `s${i}`, kind: 'section' as const, parent: i === 0 ? null : `s${i - 1}`, title: `S${i}`, delta: null })));
      const tree = buildTree(pool);
      assert.equal(flat(tree.roots).length, 300);
      assert.ok(tree.flattened);
      let depth = 0;
      for (let node: TreeNode | undefined = tree.roots[0]; node; node = node.children[0]) depth++;
      assert.ok(depth <= MAX_ELEMENT_DEPTH, `depth ${depth}`);
    });

    it('reads scenario clauses from the text first, then the WHEN/THEN pair', () => {
      assert.deepEqual(scenarioClauses({ text_markdown: '- **WHEN** a\n- **AND** b\n- **THEN** c' }), [
        { keyword: 'WHEN', text: 'a' },
        { keyword: 'AND', text: 'b' },
        { keyword: 'THEN', text: 'c' },
      ]);
      assert.deepEqual(scenarioClauses({ text_markdown: 'prose', scenario_condition: 'x', scenario_response: 'y' }), [
        { keyword: 'WHEN', text: 'x' },
        { keyword: 'THEN', text: 'y' },
      ]);
      assert.deepEqual(scenarioClauses({ text_markdown: 'prose' }), []);
    });
  });
});
