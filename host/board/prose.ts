/**
 * Pure readings of authored prose: where its code lives (fenced, indented, inline), which
 * `path:line` strings are citations and whether each is repo-relative, and where it names the
 * review machinery. Every vocabulary the readings use is a named, exported list.
 */
import { SOURCE_EXTENSIONS } from '../../protocol/board';
import type { Patchset } from '../../protocol/patchset';

// ─── Vocabularies ────────────────────────────────────────────────────────────────────────────

/** File extensions that make `x.ext:12` a citation (protocol/board.ts, shared with the panel). */
export { SOURCE_EXTENSIONS };
const SOURCE_EXTENSION_SET = new Set(SOURCE_EXTENSIONS);

/** Words that name the review machinery rather than the change (matched as whole words, any case). */
export const PROCESS_VOCABULARY: readonly string[] = ['lens', 'lenses', 'board', 'boards', 'agent', 'agents', 'seat', 'seats', 'draft', 'drafts', 'drafting', 'drafted'];

/** Lens names, screened when used as the name of a reading ("the Flagged tab", "the Noise lane"). */
export const LENS_NAMES: readonly string[] = ['Design', 'Sequence', 'Decisions', 'Flagged', 'Noise'];
/** Nouns that turn a lens name into a name for the machinery. */
export const LENS_NAME_NOUNS: readonly string[] = ['lens', 'lenses', 'board', 'boards', 'tab', 'tabs', 'lane', 'lanes', 'seat', 'seats', 'reading'];

/** Ordinary phrases that contain a process word and are not about the machinery. */
export const PROCESS_VOCABULARY_EXEMPT: readonly string[] = ['user agent', 'user-agent', 'circuit board', 'on board', 'board of directors'];

// ─── Code regions ────────────────────────────────────────────────────────────────────────────

export type CodeKind = 'fenced' | 'indented' | 'inline';

export interface CodeRegion {
  kind: CodeKind;
  /** Offsets into the text: [start, end). For inline spans, the whole span including backticks. */
  start: number;
  end: number;
  /** The code itself (an inline span's content, trimmed the CommonMark way). */
  content: string;
}

const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})/;
const LIST_ITEM = /^(\s*)([-*+]|\d{1,9}[.)])(\s+)/;

/** Finds fenced blocks, indented blocks (multi-line text only) and inline code spans. */
export function codeRegions(text: string): CodeRegion[] {
  const regions: CodeRegion[] = [];
  const lines = splitLines(text);
  const multiLine = lines.length > 1;
  let fence: { marker: string; start: number; contentStart: number } | null = null;
  let previousBlank = true;
  let listContentIndent: number | null = null;
  let indented: { start: number; end: number } | null = null;
  let proseStart: number | null = null;
  const flushIndented = () => {
    if (indented) regions.push({ kind: 'indented', start: indented.start, end: indented.end, content: text.slice(indented.start, indented.end) });
    indented = null;
  };
  const flushProse = (end: number) => {
    if (proseStart !== null) regions.push(...inlineSpans(text, proseStart, end));
    proseStart = null;
  };

  for (const { start, end, line } of lines) {
    if (fence) {
      const close = line.match(FENCE_OPEN);
      if (close && close[1]?.[0] === fence.marker[0] && (close[1]?.length ?? 0) >= fence.marker.length && line.trim() === close[1]) {
        regions.push({ kind: 'fenced', start: fence.start, end, content: text.slice(fence.contentStart, start) });
        fence = null;
        previousBlank = false;
      }
      continue;
    }
    const open = line.match(FENCE_OPEN);
    if (open) {
      flushIndented();
      flushProse(start);
      fence = { marker: open[1] as string, start, contentStart: Math.min(end + 1, text.length) };
      continue;
    }
    const blank = line.trim() === '';
    const indent = indentOf(line);
    if (blank) {
      if (indented) indented.end = end;
      flushProse(start);
      previousBlank = true;
      continue;
    }
    const item = line.match(LIST_ITEM);
    if (item && indent < 4 + (listContentIndent ?? 0)) {
      flushIndented();
      listContentIndent = (item[1]?.length ?? 0) + (item[2]?.length ?? 0) + (item[3]?.length ?? 0);
      if (proseStart === null) proseStart = start;
      previousBlank = false;
      continue;
    }
    const codeIndent = 4 + (listContentIndent ?? 0);
    const isCode = multiLine && indent >= codeIndent && (indented !== null || previousBlank);
    if (isCode) {
      flushProse(start);
      if (indented) indented.end = end;
      else indented = { start, end };
      previousBlank = false;
      continue;
    }
    flushIndented();
    if (indent === 0 && listContentIndent !== null && previousBlank) listContentIndent = null;
    if (proseStart === null) proseStart = start;
    previousBlank = false;
  }
  if (fence) regions.push({ kind: 'fenced', start: fence.start, end: text.length, content: text.slice(fence.contentStart) });
  flushIndented();
  flushProse(text.length);
  return regions.sort((a, b) => a.start - b.start);
}

function splitLines(text: string): Array<{ start: number; end: number; line: string }> {
  const out: Array<{ start: number; end: number; line: string }> = [];
  let start = 0;
  while (start <= text.length) {
    const nl = text.indexOf('\n', start);
    const end = nl < 0 ? text.length : nl;
    out.push({ start, end, line: text.slice(start, end).replace(/\r$/, '') });
    if (nl < 0) break;
    start = nl + 1;
  }
  return out;
}

function indentOf(line: string): number {
  let n = 0;
  for (const ch of line) {
    if (ch === ' ') n++;
    else if (ch === '\t') n += 4 - (n % 4);
    else break;
  }
  return n;
}

/** CommonMark code spans: a run of n backticks closed by the next run of exactly n. */
function inlineSpans(text: string, from: number, to: number): CodeRegion[] {
  const spans: CodeRegion[] = [];
  let i = from;
  while (i < to) {
    const open = text.indexOf('`', i);
    if (open < 0 || open >= to) break;
    if (open > from && text[open - 1] === '\\') {
      i = open + 1;
      continue;
    }
    let n = 0;
    while (text[open + n] === '`') n++;
    let search = open + n;
    let close = -1;
    while (search < to) {
      const next = text.indexOf('`', search);
      if (next < 0 || next >= to) break;
      let m = 0;
      while (text[next + m] === '`') m++;
      if (m === n) {
        close = next;
        break;
      }
      search = next + m;
    }
    if (close < 0) {
      i = open + n;
      continue;
    }
    let content = text.slice(open + n, close).replace(/\r?\n/g, ' ');
    if (content.length > 2 && content.startsWith(' ') && content.endsWith(' ') && content.trim() !== '') content = content.slice(1, -1);
    spans.push({ kind: 'inline', start: open, end: close + n, content });
    i = close + n;
  }
  return spans;
}

/** The text with every code region replaced by spaces (offsets preserved; newlines kept). */
export function proseOnly(text: string, regions: readonly CodeRegion[] = codeRegions(text)): string {
  if (regions.length === 0) return text;
  let out = '';
  let at = 0;
  for (const region of regions) {
    if (region.start < at) continue;
    out += text.slice(at, region.start) + text.slice(region.start, region.end).replace(/[^\n]/g, ' ');
    at = region.end;
  }
  return out + text.slice(at);
}

// ─── Code bytes ──────────────────────────────────────────────────────────────────────────────

/** Shapes an inline code span may take and still name a thing rather than carry code. */
export const IDENTIFIER_LIKE_SHAPES: readonly RegExp[] = [
  // identifiers, qualified names, paths, ids, globs, file:line: ReviewService, a.b.c, host/x.ts, ps-…, *.ts, Foo::bar
  /^[@~.*]?[\p{L}\p{N}_$][\p{L}\p{N}_$.\-/\\@#:*]*(\[\])?$/u,
  // dotfiles and extensions: .gitignore, .ts
  /^\.[\p{L}\p{N}_][\p{L}\p{N}_.-]*$/u,
  // flags: --flag, -x, --flag=value
  /^--?[\p{L}\p{N}][\p{L}\p{N}_-]*(=[^\s;{}]*)?$/u,
  // calls and generics without statements: foo(), useState(initial), Map<string, number>, Array<T>[]
  /^[\p{L}\p{N}_$][\p{L}\p{N}_$.:]*(<[\p{L}\p{N}_$.,[\] |<>]*>)?(\(([\p{L}\p{N}_$.'"]+(, ?[\p{L}\p{N}_$.'"]+)*)?\))?(\[\])?$/u,
  // a short quoted literal: 'open', "drafting"
  /^(['"])[^'"\n;{}]{0,40}\1$/u,
  // an HTML/JSX tag name: <div>, </Panel>, <br/>
  /^<\/?[\p{L}][\p{L}\p{N}_.-]*\s?\/?>$/u,
];

export function isIdentifierLike(content: string): boolean {
  const trimmed = content.trim();
  if (trimmed === '') return true;
  return IDENTIFIER_LIKE_SHAPES.some((shape) => shape.test(trimmed));
}

export interface CodeBytes {
  kind: CodeKind;
  /** A short excerpt of the offending code, for the refusal. */
  excerpt: string;
}

/** Code carried as bytes: fenced or indented blocks, and inline spans that are not identifier-like. */
export function findCodeBytes(text: string, regions: readonly CodeRegion[] = codeRegions(text)): CodeBytes[] {
  const out: CodeBytes[] = [];
  for (const region of regions) {
    if (region.kind === 'inline' && isIdentifierLike(region.content)) continue;
    out.push({ kind: region.kind, excerpt: clip(region.content.trim(), 60) });
  }
  return out;
}

// ─── Citations ───────────────────────────────────────────────────────────────────────────────

/** What the citation scan knows about the patchset's paths (a CitationIndex provides it). */
export interface PathKnowledge {
  hasPath(path: string): boolean;
  pathsNamed(basename: string): readonly string[];
}

export type CitationProblem = 'absolute' | 'home-rooted' | 'github-anchor' | 'bare-basename' | 'not-canonical' | 'backslash' | 'bad-range';

export interface ProseCitation {
  /** The citation as written. */
  raw: string;
  path: string;
  start: number;
  end: number;
  /** Offset of `raw` in the text. */
  index: number;
  /** Why it is not a repo-relative citation, when it is not. */
  problem: CitationProblem | null;
  /** What to write instead. */
  advice: string | null;
}

const PATH_CHARS = String.raw`\p{L}\p{N}_~@+.\/\\-`;
const CITATION = new RegExp(String.raw`(?<![${PATH_CHARS}])([${PATH_CHARS}]*)\.([A-Za-z0-9]+)(?::(\d+)(?:-(\d+))?|#L(\d+)(?:-L?(\d+))?)(?![\p{L}\p{N}_])`, 'gu');

/**
 * Citations in prose, outside code: `path.ext:12`, `path.ext:12-20` (head side), and the forms
 * that look like citations but are not repo-relative (each with its problem and advice).
 */
export function findProseCitations(text: string, knowledge?: PathKnowledge, regions?: readonly CodeRegion[]): ProseCitation[] {
  const prose = proseOnly(text, regions ?? codeRegions(text));
  const out: ProseCitation[] = [];
  for (const match of prose.matchAll(CITATION)) {
    const stem = match[1] ?? '';
    const ext = match[2] ?? '';
    if (!SOURCE_EXTENSION_SET.has(ext.toLowerCase())) continue;
    const path = `${stem}.${ext}`;
    const github = match[5] !== undefined;
    const start = Number(github ? match[5] : match[3]);
    const end = Number((github ? match[6] : match[4]) ?? start);
    const citation: ProseCitation = { raw: match[0], path, start, end, index: match.index ?? 0, problem: null, advice: null };
    classify(citation, github, knowledge);
    out.push(citation);
  }
  return out;
}

function classify(c: ProseCitation, github: boolean, knowledge: PathKnowledge | undefined): void {
  const range = c.start === c.end ? `${c.start}` : `${c.start}-${c.end}`;
  const set = (problem: CitationProblem, advice: string) => {
    c.problem = problem;
    c.advice = advice;
  };
  const suggestion = (path: string) => `${path}:${range}`;
  if (c.path.includes('\\')) return set('backslash', `a repo-relative path with forward slashes, e.g. ${suggestion(c.path.replace(/\\/g, '/').replace(/^[A-Za-z]:\//, ''))}`);
  if (c.path.startsWith('~')) return set('home-rooted', `the path from the repository root, e.g. ${suggestion(suffixInPatchset(c.path, knowledge) ?? 'dir/file.ext')}`);
  if (c.path.startsWith('/')) return set('absolute', `the path from the repository root, e.g. ${suggestion(suffixInPatchset(c.path, knowledge) ?? 'dir/file.ext')}`);
  if (github) return set('github-anchor', `the path:line form, ${suggestion(c.path)}`);
  if (c.path.startsWith('./') || c.path.startsWith('../') || c.path.includes('/./') || c.path.includes('/../') || c.path.includes('//')) {
    return set('not-canonical', `the path exactly as the change names it, from the repository root, e.g. ${suggestion(c.path.replace(/^(\.\.?\/)+/, ''))}`);
  }
  if (c.start < 1 || c.end < c.start) return set('bad-range', `a 1-based range with start ≤ end, e.g. ${c.path}:${Math.max(1, Math.min(c.start, c.end))}-${Math.max(c.start, c.end, 1)}`);
  if (!c.path.includes('/') && knowledge && !knowledge.hasPath(c.path)) {
    const named = knowledge.pathsNamed(c.path);
    if (named.length === 1) return set('bare-basename', `the repo-relative path, ${suggestion(named[0] as string)}`);
    if (named.length > 1) {
      const shown = named.slice(0, 3).join(', ');
      const more = named.length > 3 ? ` and ${named.length - 3} more` : '';
      return set('bare-basename', `the repo-relative path of the one you mean (${named.length} changed files are named ${c.path}: ${shown}${more})`);
    }
  }
}

/** The longest changed path the absolute path ends with, if any. */
function suffixInPatchset(path: string, knowledge: PathKnowledge | undefined): string | null {
  if (!knowledge) return null;
  const parts = path.split('/');
  for (let i = 1; i < parts.length; i++) {
    const candidate = parts.slice(i).join('/');
    if (candidate && knowledge.hasPath(candidate)) return candidate;
  }
  return null;
}

// ─── Process vocabulary ──────────────────────────────────────────────────────────────────────

export interface VocabularyHit {
  word: string;
  index: number;
}

const VOCABULARY = new RegExp(String.raw`(?<![\p{L}\p{N}_-])(${PROCESS_VOCABULARY.join('|')})(?![\p{L}\p{N}_-])`, 'giu');
const LENS_NAME = new RegExp(String.raw`\b(${LENS_NAMES.join('|')})\s+(${LENS_NAME_NOUNS.join('|')})\b`, 'gu');
const EXEMPT = new RegExp(PROCESS_VOCABULARY_EXEMPT.map(escapeRegExp).join('|'), 'giu');

/** Words in prose (outside code) that name the review machinery. */
export function findProcessVocabulary(text: string, regions?: readonly CodeRegion[]): VocabularyHit[] {
  const prose = proseOnly(text, regions ?? codeRegions(text)).replace(EXEMPT, (m) => ' '.repeat(m.length));
  const hits: VocabularyHit[] = [];
  for (const m of prose.matchAll(LENS_NAME)) hits.push({ word: m[0], index: m.index ?? 0 });
  for (const m of prose.matchAll(VOCABULARY)) {
    const index = m.index ?? 0;
    if (hits.some((h) => index >= h.index && index < h.index + h.word.length)) continue;
    hits.push({ word: m[0], index });
  }
  return hits.sort((a, b) => a.index - b.index);
}

/**
 * The words the change itself uses: every identifier part (camelCase, snake_case and kebab-case
 * split) of every captured line and path, lower-cased. A process word that is one of them — an
 * `agent` loop, a `draft` state, a `Board` component — is the change's vocabulary, not the review
 * machinery's, and the process-vocabulary rule lets it through.
 */
export function changeVocabulary(patchset: Pick<Patchset, 'files'>): ReadonlySet<string> {
  const words = new Set<string>();
  const add = (text: string) => {
    for (const token of text.matchAll(/[\p{L}][\p{L}\p{N}]*/gu)) {
      for (const part of token[0].split(/(?<=\p{Ll})(?=\p{Lu})/u)) words.add(part.toLowerCase());
    }
  };
  for (const file of patchset.files) {
    add(file.path);
    if (file.oldPath) add(file.oldPath);
    for (const hunk of file.hunks) for (const line of hunk.lines) add(line.text);
  }
  return words;
}

/** Whether every word of a process-vocabulary hit is a word of the change (a plural counts as its singular). */
export function isChangeVocabulary(hit: string, vocabulary: ReadonlySet<string>): boolean {
  const parts = hit
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
  return parts.length > 0 && parts.every((w) => vocabulary.has(w) || (w.endsWith('s') && vocabulary.has(w.slice(0, -1))) || (w.endsWith('es') && vocabulary.has(w.slice(0, -2))));
}

// ─── Helpers ─────────────────────────────────────────────────────────────────────────────────

export function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
