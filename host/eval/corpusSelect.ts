import { modeKind, type FileChange } from '../../protocol/patchset';

/**
 * Pure rules of `rennet eval corpus --repo`: which commits of a history become review cases.
 * A commit is kept when its message says it fixes a bug, it changes code (not only docs, tests or
 * configuration), it is small enough to review and every file it changes is a text file. The
 * rules are deliberately conservative: a missed fix costs a case, a wrong "fix" costs a lie in
 * the catch rate.
 */

/** At most this many changed files (all files of the fix count: the reviewer reads them all). */
export const EVAL_CORPUS_MAX_FILES = 10;
/** At most this many changed lines (additions + deletions, all files). */
export const EVAL_CORPUS_MAX_CHANGED_LINES = 300;
/** Cases kept when --limit is not given (each case is one review, so one model bill). */
export const EVAL_CORPUS_DEFAULT_LIMIT = 100;
/** The largest --limit accepted. */
export const EVAL_CORPUS_MAX_LIMIT = 10_000;
/** Category of a fix whose message names no known kind of bug and no conventional scope. */
export const EVAL_DEFAULT_CATEGORY = 'bug';

// ── Messages ────────────────────────────────────────────────────────────────────────────────────

/** Why a message counts as a bug fix. */
export type FixSignal = 'conventional-fix' | 'issue-bug' | 'bug-word' | 'fix-subject';

const CONVENTIONAL_SUBJECT = /^([A-Za-z]+)(?:\(([^)]*)\))?!?:\s*\S/;
const FIX_TYPES = new Set(['fix', 'bugfix', 'hotfix']);
const ISSUE_REFERENCE = String.raw`(?:#\d+|gh-\d+|https?://\S+/issues/\d+)`;
const ISSUE_CLOSED = new RegExp(String.raw`\b(?:fix(?:e[sd])?|bugfix|close[sd]?|resolve[sd]?)\b:?\s+${ISSUE_REFERENCE}`, 'i');
const BUG_WORDING = /\b(?:bugs?|crash(?:es|ed|ing)?|regression|broken|wrong(?:ly)?|incorrect(?:ly)?|fail(?:s|ed|ing|ure)?|leak(?:s|ed|ing)?|hang(?:s|ing)?)\b/i;
const BUG_WORD = /\bbug(?:s|fix|fixes)?\b/i;
const FIX_SUBJECT = /^(?:fix|fixes|fixed|fixing)\b/i;
/** Subjects that fix something other than behaviour (a typo, lint, formatting). */
const NOT_A_BUG_SUBJECT = /\b(?:typos?|lint|linter|linting|eslint|prettier|spelling|formatting|whitespace|indentation|changelog)\b/i;
const REVERT_SUBJECT = /^revert\b/i;

/** The first line of a commit message. */
export function subjectOf(message: string): string {
  return (message.split('\n', 1)[0] ?? '').trim();
}

/**
 * Whether a commit message says it fixes a bug, and by which rule (first that applies):
 * 1. a conventional subject of type fix, bugfix or hotfix (`fix:`, `fix(scope):`, `fix!:`);
 *    a conventional subject of any other type (docs, chore, feat, …) is never a fix: its author
 *    classified it;
 * 2. an issue reference that closes it ("fixes #n", "fixed #n", "closes #n", "resolves #n";
 *    also gh-n and issue URLs) together with bug wording anywhere in the message (bug, crash,
 *    regression, broken, wrong, incorrect, fail…, leak…, hang…): an issue may be a feature request;
 * 3. the word "bug" (bugs, bugfix) anywhere;
 * 4. a subject that starts with "Fix" (Fixes, Fixed, Fixing).
 * Never: a subject starting with "Revert", or one about typos, lint, spelling, formatting,
 * whitespace or the changelog.
 */
export function fixSignal(message: string): FixSignal | null {
  const subject = subjectOf(message);
  if (subject.length === 0 || REVERT_SUBJECT.test(subject) || NOT_A_BUG_SUBJECT.test(subject)) return null;
  const conventional = CONVENTIONAL_SUBJECT.exec(subject);
  if (conventional) return FIX_TYPES.has((conventional[1] as string).toLowerCase()) ? 'conventional-fix' : null;
  if (ISSUE_CLOSED.test(message) && BUG_WORDING.test(message)) return 'issue-bug';
  if (BUG_WORD.test(message)) return 'bug-word';
  if (FIX_SUBJECT.test(subject)) return 'fix-subject';
  return null;
}

/** Keyword classes, checked in this order over the whole message; the first that matches names the category. */
const CATEGORY_KEYWORDS: ReadonlyArray<readonly [string, RegExp]> = [
  ['off-by-one', /\boff[- ]by[- ]one\b|\bfencepost\b|\bout of (?:range|bounds)\b/i],
  ['missing-await', /\bawait(?:ed|ing)?\b|\bunawaited\b|\bfloating promises?\b/i],
  ['sql-injection', /\bsql[- ]injection\b|\bsqli\b|\bunescaped sql\b/i],
  ['swapped-argument', /\bswap(?:ped)?\b.*\b(?:arguments?|params?|parameters?)\b|\b(?:argument|parameter) order\b/i],
  ['missing-null-check', /\bnull\b|\bundefined\b|\bnullish\b|\bcannot read propert|\bnull pointer\b/i],
  ['unclosed-handle', /\bleak(?:s|ed|ing)?\b|\bunclosed\b|\bnever closed\b|\bnot (?:being )?closed\b|\bfile (?:descriptor|handle)s?\b/i],
  ['wrong-lock', /\bmutex(?:es)?\b|\bdeadlocks?\b|\brace conditions?\b|\b(?:acquire|release)s? (?:the |a )?lock\b|\bwrong lock\b/i],
];

/**
 * A case's category: the first keyword class the message matches (the built-in corpus's
 * categories), else the conventional scope (lower-cased, reduced to [a-z0-9._-]), else "bug".
 */
export function categoryOf(message: string): string {
  for (const [category, pattern] of CATEGORY_KEYWORDS) if (pattern.test(message)) return category;
  const conventional = CONVENTIONAL_SUBJECT.exec(subjectOf(message));
  const scope = (conventional?.[2] ?? '')
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[-._]+|[-._]+$/g, '');
  return scope.length > 0 ? scope.slice(0, 40) : EVAL_DEFAULT_CATEGORY;
}

// ── Paths ───────────────────────────────────────────────────────────────────────────────────────

/** Extensions of program source (lower-cased, without the dot). */
const CODE_EXTENSIONS = new Set([
  'ts',
  'tsx',
  'mts',
  'cts',
  'js',
  'jsx',
  'mjs',
  'cjs',
  'vue',
  'svelte',
  'py',
  'pyi',
  'rb',
  'php',
  'go',
  'rs',
  'java',
  'kt',
  'kts',
  'scala',
  'groovy',
  'swift',
  'dart',
  'c',
  'h',
  'cc',
  'cpp',
  'cxx',
  'hh',
  'hpp',
  'hxx',
  'm',
  'mm',
  'cs',
  'fs',
  'vb',
  'ex',
  'exs',
  'erl',
  'hrl',
  'hs',
  'ml',
  'mli',
  'clj',
  'cljs',
  'elm',
  'lua',
  'pl',
  'pm',
  'r',
  'jl',
  'zig',
  'nim',
  'sh',
  'bash',
  'zsh',
  'ps1',
  'sql',
]);
/** A path with one of these directories (any depth, case-insensitive) is not product code. */
const NON_CODE_DIRECTORIES = new Set([
  'doc',
  'docs',
  'documentation',
  'example',
  'examples',
  'test',
  'tests',
  '__tests__',
  '__test__',
  'spec',
  'specs',
  '__mocks__',
  'mocks',
  'fixtures',
  '__fixtures__',
  'testdata',
  'test-data',
  'e2e',
  '.github',
  '.circleci',
  '.husky',
  '.vscode',
  '.devcontainer',
  'node_modules',
  'vendor',
  'third_party',
  'third-party',
  'dist',
  'coverage',
]);
const TEST_FILE = /\.(?:test|spec)(?:-d)?\.[^.]+$|_test\.[^.]+$|^test_[^/]*\.py$|^conftest\.py$/i;
const CONFIG_FILE = /^\.|\.config\.[cm]?[jt]s$|^(?:gulpfile|gruntfile|karma\.conf|jest\.config|webpack\.config|rollup\.config|vite\.config|babel\.config|eslint\.config|setup)\.[^.]+$/i;
const MINIFIED_FILE = /\.min\.[cm]?js$/i;

/**
 * Whether a repository path is product code: its extension is a programming language's (not
 * Markdown, JSON, YAML, lock files…), no directory on its way is docs, examples, tests, fixtures,
 * CI, vendored or built output, and its name is not a test (`*.test.*`, `*.spec.*`, `*_test.*`,
 * `test_*.py`), a configuration file (dotfiles, `*.config.js`, `webpack.config.*`, `setup.py`…)
 * or minified.
 */
export function isProductCode(path: string): boolean {
  const segments = path.split('/');
  const name = segments[segments.length - 1] ?? '';
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return false;
  if (!CODE_EXTENSIONS.has(name.slice(dot + 1).toLowerCase())) return false;
  if (segments.slice(0, -1).some((segment) => NON_CODE_DIRECTORIES.has(segment.toLowerCase()))) return false;
  return !TEST_FILE.test(name) && !CONFIG_FILE.test(name) && !MINIFIED_FILE.test(name);
}

// ── The change ─────────────────────────────────────────────────────────────────────────────────

/** Why a commit whose message says "fix" is still not a case. */
export type SkipReason = 'merge-or-root' | 'before-since' | 'no-code' | 'too-many-files' | 'too-many-lines' | 'not-text' | 'no-changed-lines';

export const SKIP_REASON_WORDS: Readonly<Record<SkipReason, string>> = {
  'merge-or-root': 'merges or root commits',
  'before-since': 'older than --since',
  'no-code': 'change no product code (only docs, tests, examples or configuration)',
  'too-many-files': `change more than ${EVAL_CORPUS_MAX_FILES} files`,
  'too-many-lines': `change more than ${EVAL_CORPUS_MAX_CHANGED_LINES} lines`,
  'not-text': 'change a binary file, a symlink or a submodule',
  'no-changed-lines': 'change no line (only modes or empty files)',
};

/** Whether the fix's own change (parent → fix, as `git diff` parses it) may become a case. */
export function judgeChange(files: readonly FileChange[]): SkipReason | null {
  for (const file of files) {
    if (file.binary || file.submodule || file.additions === null || file.deletions === null) return 'not-text';
    for (const mode of [file.oldMode, file.newMode]) if (mode !== null && modeKind(mode) !== 'regular') return 'not-text';
  }
  if (!files.some((file) => isProductCode(file.path) || (file.oldPath !== null && isProductCode(file.oldPath)))) return 'no-code';
  if (files.length > EVAL_CORPUS_MAX_FILES) return 'too-many-files';
  const changed = files.reduce((sum, file) => sum + (file.additions ?? 0) + (file.deletions ?? 0), 0);
  if (changed > EVAL_CORPUS_MAX_CHANGED_LINES) return 'too-many-lines';
  if (changed === 0) return 'no-changed-lines';
  return null;
}

// ── --since ─────────────────────────────────────────────────────────────────────────────────────

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?(Z|[+-]\d{2}:\d{2})$/;

/**
 * --since as Unix seconds: `YYYY-MM-DD` (midnight UTC) or `YYYY-MM-DDTHH:MM[:SS]` with `Z` or an
 * offset. Relative dates ("2 weeks ago") are refused: they would make the corpus depend on the
 * day it is built. Null when the text is not such a date.
 */
export function parseSinceDate(text: string): number | null {
  const dateOnly = DATE_ONLY.exec(text);
  const dateTime = dateOnly ? null : DATE_TIME.exec(text);
  const parts = dateOnly ?? dateTime;
  if (!parts) return null;
  const [year, month, day] = [Number(parts[1]), Number(parts[2]), Number(parts[3])];
  const calendar = new Date(Date.UTC(year, month - 1, day));
  if (calendar.getUTCFullYear() !== year || calendar.getUTCMonth() !== month - 1 || calendar.getUTCDate() !== day) return null;
  if (dateTime && (Number(dateTime[4]) > 23 || Number(dateTime[5]) > 59 || Number(dateTime[6] ?? 0) > 59)) return null;
  const millis = Date.parse(dateOnly ? `${text}T00:00:00Z` : text);
  return Number.isFinite(millis) ? Math.floor(millis / 1000) : null;
}
