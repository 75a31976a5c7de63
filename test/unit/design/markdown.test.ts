import assert from 'node:assert/strict';
import { blocksOf, outline, parseMarkdown, textOf, titleOf, withoutCodeBlocks } from '../../../host/design/markdown';
import { LABELS, type CodeSpan } from '../../../host/design/model';
import { splitClauses, splitEars } from '../../../host/design/obligations';

/** The assembler's Markdown reading and clause splitting, on strings. */

describe('design assembler: markdown reading', () => {
  it('outlines ATX headings and ignores a heading inside a fence', () => {
    const file = parseMarkdown('a.md', '# Title\n\nlead\n\n## One\n```md\n## not a heading\n```\n### One.a\n## Two\n');
    const root = outline(file);
    const [title] = root.children;
    assert.equal(titleOf(title!), 'Title');
    assert.deepEqual(title!.children.map(titleOf), ['One', 'Two']);
    assert.deepEqual(title!.children[0]!.children.map(titleOf), ['One.a']);
    assert.equal(textOf(file, title!.contentStart, title!.contentEnd), 'lead');
    const code: CodeSpan[] = [];
    assert.equal(textOf(file, title!.children[0]!.contentStart, title!.children[0]!.contentEnd, 0, code), '[code block: a.md line 7]');
    assert.deepEqual(code, [{ path: 'a.md', start: 7, end: 7 }]);
  });

  it('skips front matter and keeps CRLF files line-for-line', () => {
    const file = parseMarkdown('a.md', '---\ninclusion: always\n---\r\n# T\r\nbody\r\n');
    assert.deepEqual(file.frontMatter, { start: 0, end: 2 });
    assert.equal(file.headings[0]?.index, 3);
    assert.equal(textOf(file, 0, file.lines.length), '# T\nbody');
  });

  it('reads list items with check marks, nesting and continuation lines', () => {
    const file = parseMarkdown('t.md', '- [x] 1. Done\n  - detail\n- [ ] 2. Open\ncontinued\n\nafter\n');
    const blocks = blocksOf(file, 0, file.lines.length);
    assert.deepEqual(
      blocks.map((b) => b.kind),
      ['list', 'para'],
    );
    const list = blocks[0]!;
    assert.ok(list.kind === 'list');
    assert.deepEqual(
      list.items.map((i) => [i.checkbox, i.first, i.indent]),
      [
        ['done', '1. Done', 0],
        [null, 'detail', 2],
        // A line that continues the item's text (no blank line, no marker) is that text.
        ['open', '2. Open\ncontinued', 0],
      ],
    );
  });

  it('lets a list interrupt a paragraph (**Files:** then items)', () => {
    const file = parseMarkdown('p.md', '**Files:**\n- Create: `a.ts`\n');
    assert.deepEqual(
      blocksOf(file, 0, file.lines.length).map((b) => b.kind),
      ['para', 'list'],
    );
  });

  it('replaces indented code blocks the board would refuse with the label', () => {
    assert.equal(withoutCodeBlocks('Run this:\n\n    make all\n\nThen stop.'), `Run this:\n\n${LABELS.codeBlock}\n\nThen stop.`);
    assert.equal(withoutCodeBlocks('- item\n\n    continued item text'), '- item\n\n    continued item text');
  });

  it('labels an indented code block of a file with the file and its own lines', () => {
    const file = parseMarkdown('b.md', '# T\n\nRun this:\n\n    make all\n    make test\n\nThen stop, keeping `make -j4` as written.\n');
    const code: CodeSpan[] = [];
    assert.equal(textOf(file, 1, file.lines.length, 0, code), 'Run this:\n\n[code block: b.md lines 5–6]\n\nThen stop, keeping `make -j4` as written.');
    assert.deepEqual(code, [{ path: 'b.md', start: 5, end: 6 }]);
  });

  it('splits WHEN/THEN clause bullets, with AND on either side of THEN', () => {
    assert.deepEqual(
      splitClauses([
        { keyword: 'GIVEN', text: 'a user' },
        { keyword: 'WHEN', text: 'they sign in' },
        { keyword: 'AND', text: 'the code is valid' },
        { keyword: 'THEN', text: 'a session starts' },
        { keyword: 'AND', text: 'an email is sent' },
      ]),
      { condition: 'a user\nthey sign in\nthe code is valid', response: 'a session starts\nan email is sent' },
    );
    assert.deepEqual(splitClauses([{ keyword: 'THEN', text: 'only a result' }]), { condition: null, response: null });
  });

  it('splits EARS criteria in the WHEN … THEN and the WHEN …, THE … SHALL forms only', () => {
    assert.deepEqual(splitEars('WHEN a user saves THEN the system SHALL store it'), { condition: 'a user saves', response: 'the system SHALL store it' });
    assert.deepEqual(splitEars('IF the name is taken, THEN the system SHALL ask'), { condition: 'the name is taken', response: 'the system SHALL ask' });
    assert.deepEqual(splitEars('WHILE offline, THE App SHALL queue writes'), { condition: 'offline', response: 'THE App SHALL queue writes' });
    assert.equal(splitEars('The system SHALL keep fifty'), null);
    assert.equal(splitEars('when lower-case then not EARS'), null);
  });
});
