import assert from 'node:assert/strict';
import {
  IDENTIFIER_LIKE_SHAPES,
  LENS_NAMES,
  PROCESS_VOCABULARY,
  SOURCE_EXTENSIONS,
  codeRegions,
  findCodeBytes,
  findProcessVocabulary,
  findProseCitations,
  isIdentifierLike,
  proseOnly,
  type PathKnowledge,
} from '../../../host/board/prose';

const knowledge: PathKnowledge = (() => {
  const paths = ['src/app.tsx', 'src/util/index.ts', 'lib/index.ts', 'README.md', 'package.json', 'host/capture.ts'];
  return {
    hasPath: (p) => paths.includes(p),
    pathsNamed: (b) => paths.filter((p) => p === b || p.endsWith(`/${b}`)),
  };
})();

function cites(text: string, k: PathKnowledge | undefined = knowledge) {
  return findProseCitations(text, k).map((c) => ({ path: c.path, start: c.start, end: c.end, problem: c.problem }));
}

describe('board prose: citations in prose', () => {
  it('reads path:line and path:start-end as head-side citations', () => {
    assert.deepEqual(cites('See src/app.tsx:12 and src/app.tsx:20-24.'), [
      { path: 'src/app.tsx', start: 12, end: 12, problem: null },
      { path: 'src/app.tsx', start: 20, end: 24, problem: null },
    ]);
    assert.deepEqual(cites('(host/capture.ts:3), [lib/index.ts:5]'), [
      { path: 'host/capture.ts', start: 3, end: 3, problem: null },
      { path: 'lib/index.ts', start: 5, end: 5, problem: null },
    ]);
  });

  it('ignores anything inside code spans and fenced blocks', () => {
    assert.deepEqual(cites('Run `src/app.tsx:12` as shown.'), []);
    assert.deepEqual(cites('Text\n\n```\nsrc/app.tsx:12\n```\n'), []);
  });

  it('keeps hosts and ports, versions, times and ordinals as prose', () => {
    assert.deepEqual(cites('It listens on 127.0.0.1:0 and localhost:8080 since v1.2:3, at 12:30, the 2nd:4 try.'), []);
    assert.deepEqual(cites('Open http://localhost:3000/index.html in a browser.'), []);
  });

  it('accepts a root-level file by its bare name', () => {
    assert.deepEqual(cites('README.md:3 and package.json:4'), [
      { path: 'README.md', start: 3, end: 3, problem: null },
      { path: 'package.json', start: 4, end: 4, problem: null },
    ]);
  });

  it('refuses a bare basename that is not a root file, suggesting the path when it is unique', () => {
    const [one] = findProseCitations('app.tsx:551 breaks', knowledge);
    assert.equal(one?.problem, 'bare-basename');
    assert.match(one?.advice ?? '', /src\/app\.tsx:551/);
    const [two] = findProseCitations('index.ts:3 breaks', knowledge);
    assert.equal(two?.problem, 'bare-basename');
    assert.match(two?.advice ?? '', /2 changed files are named index\.ts/);
    // a bare name no changed path carries is left to citation-resolves
    assert.equal(cites('other.ts:1')[0]?.problem, null);
    // without path knowledge the bare form cannot be judged here
    assert.equal(findProseCitations('app.tsx:551')[0]?.problem, null);
  });

  it('refuses absolute, home-rooted, GitHub-anchor, backslash and dot-relative forms', () => {
    const abs = findProseCitations('/home/me/repo/src/app.tsx:10 fails', knowledge)[0];
    assert.equal(abs?.problem, 'absolute');
    assert.match(abs?.advice ?? '', /src\/app\.tsx:10/);
    assert.equal(cites('~/repo/src/app.tsx:3')[0]?.problem, 'home-rooted');
    assert.deepEqual(
      cites('src/app.tsx#L12 and src/app.tsx#L12-L20').map((c) => [c.problem, c.start, c.end]),
      [
        ['github-anchor', 12, 12],
        ['github-anchor', 12, 20],
      ],
    );
    assert.equal(cites('src\\app.tsx:3')[0]?.problem, 'backslash');
    assert.equal(cites('./src/app.tsx:3')[0]?.problem, 'not-canonical');
    assert.equal(cites('see https://example.com/src/app.tsx:3')[0]?.problem, 'absolute');
    assert.equal(cites('src/app.tsx:20-12')[0]?.problem, 'bad-range');
  });

  it('keeps one named extension list', () => {
    assert.ok(SOURCE_EXTENSIONS.includes('ts') && SOURCE_EXTENSIONS.includes('yaml') && SOURCE_EXTENSIONS.includes('md'));
    assert.ok(!SOURCE_EXTENSIONS.some((e) => /^\d+$/.test(e)), 'no numeric extension');
  });
});

describe('board prose: code bytes', () => {
  it('finds fenced blocks (backtick and tilde) and indented blocks', () => {
    assert.deepEqual(
      findCodeBytes('Intro\n\n```ts\nconst a = 1;\n```\n').map((c) => c.kind),
      ['fenced'],
    );
    assert.deepEqual(
      findCodeBytes('Intro\n\n~~~\nx\n~~~').map((c) => c.kind),
      ['fenced'],
    );
    assert.deepEqual(
      findCodeBytes('Intro\n\n    const a = 1;\n    return a;\n\nAfter.').map((c) => c.kind),
      ['indented'],
    );
    assert.deepEqual(findCodeBytes('Unclosed\n```\ncode'), [{ kind: 'fenced', excerpt: 'code' }]);
  });

  it('does not read list continuation lines or a paragraph continuation as indented code', () => {
    assert.deepEqual(findCodeBytes('- first point\n  continues here\n\n  still the same item\n- second'), []);
    assert.deepEqual(findCodeBytes('A paragraph\n    that continues lazily.'), []);
    assert.deepEqual(findCodeBytes('    A single-line title with leading spaces'), []);
  });

  it('allows identifier- and path-like inline spans', () => {
    for (const ok of [
      'ReviewService',
      'host/capture.ts',
      '--flag',
      '--max=3',
      'foo()',
      'useState(initial)',
      'a.b.c',
      'ps-0123456789abcdef',
      'h-0a1b2c3d4e5f6789',
      'Map<string, number>',
      "'open'",
      '.gitignore',
      'string[]',
      '<div>',
      'src/app.ts:12',
      'snake_case',
      'Foo::bar',
    ]) {
      assert.ok(isIdentifierLike(ok), ok);
    }
    assert.deepEqual(findCodeBytes('Calls `ReviewService` via `foo()` with `--flag`.'), []);
  });

  it('refuses inline spans that carry statements or expressions', () => {
    for (const code of ['if (x) { return y; }', 'a = b + 1;', 'x => x * 2', 'a+b', 'let x', 'x === y']) {
      assert.ok(!isIdentifierLike(code), code);
    }
    assert.deepEqual(
      findCodeBytes('It runs `if (x) { return y; }` first.').map((c) => c.kind),
      ['inline'],
    );
    assert.ok(IDENTIFIER_LIKE_SHAPES.length > 0);
  });

  it('blanks code out of prose while keeping offsets', () => {
    const text = 'a `b` c';
    const prose = proseOnly(text, codeRegions(text));
    assert.equal(prose.length, text.length);
    assert.equal(prose, 'a     c');
  });
});

describe('board prose: process vocabulary', () => {
  it('flags words naming the review machinery, outside code', () => {
    const words = (t: string) => findProcessVocabulary(t).map((h) => h.word);
    assert.deepEqual(words('This board shows what the agent drafted.'), ['board', 'agent', 'drafted']);
    assert.deepEqual(words('Seats and lenses; Drafting; the drafts.'), ['Seats', 'lenses', 'Drafting', 'drafts']);
    assert.deepEqual(words('See the Flagged tab and the Noise lane.'), ['Flagged tab', 'Noise lane']);
    assert.deepEqual(words('Names `board` and `AgentPool` in code.'), []);
  });

  it('leaves ordinary words and exempt phrases alone', () => {
    assert.deepEqual(findProcessVocabulary('The keyboard, the dashboard, the user agent header and the Design of the API.'), []);
    assert.deepEqual(findProcessVocabulary('A flagged value, a noisy log.'), []);
  });

  it('keeps its lists named', () => {
    assert.ok(PROCESS_VOCABULARY.includes('board') && PROCESS_VOCABULARY.includes('drafting'));
    assert.deepEqual(LENS_NAMES, ['Design', 'Sequence', 'Decisions', 'Flagged', 'Noise']);
  });
});
