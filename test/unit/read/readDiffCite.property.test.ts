import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { CAPTURE_MAX_FILE_BYTES, CAPTURE_MAX_PATCH_BYTES_PER_FILE } from '../../../protocol/limits';
import type { FileChange, Side } from '../../../protocol/patchset';
import { READ_DIFF, READ_RESULT_MAX_BYTES } from '../../../protocol/read';
import { buildCitationIndex, type CitationIndex } from '../../../host/board/citations';
import { capturePatchset } from '../../../host/capture/capture';
import { openRepo } from '../../../host/capture/repo';
import { gitChangeSource } from '../../../host/read/gitSource';
import { readSurface, type ReadSurface } from '../../../host/read/tools';
import { TestRepo } from '../../fixtures/gitRepo';

/**
 * PROPERTY, over generated real git repositories: read_diff shows exactly the line numbers a
 * citation accepts, on both sides of every changed text file, across every page; and the text it
 * shows for a line is that line of the captured commit.
 *
 * A truncated file follows the documented rule (docs/capture-json.md `tailFrom`, host/board/README):
 * its captured lines are shown and citable, and from `tailFrom` on a side "counts as changed" —
 * read_diff states that tail (and shows none of it) and cite accepts it. So for every side:
 *   citable(n)  ⇔  shown(n)  ∨  (tail ≠ null ∧ n ≥ tail)        and   shown(n) ⇒ n < tail.
 * (The index is built as production builds it, without line counts, so a tail runs to any line;
 * past the end of a truncated side nothing is asserted.) Against a capture of the same repository
 * with no limits: the kept hunks are its first hunks, and each side's tail starts after every kept
 * line and no later than the first line of a dropped hunk, so a dropped change is never uncitable.
 * A file that is not truncated is the whole change: the base with read_diff's - lines dropped and
 * + lines inserted at their numbers is exactly the head.
 *
 * read_diff's text for a line is the line as git stores it with one trailing CR dropped (a CRLF
 * file reads like an LF one) and tabs as four spaces (host/read/tools.ts `clip`), plus
 * " (no newline at end of file)" on a side's last line when the file does not end with one.
 *
 * The generator: a base commit of 1–6 text files; a head commit applying per file keep (maybe
 * chmod: a mode-only change), modify (runs of inserted / deleted / replaced lines, maybe a
 * different trailing newline or line ending), delete, rename (git mv) with or without edits, or
 * turn binary; new text or binary files; LF or CRLF per file; names with a space or non-ASCII
 * letters; and now and then one large file: long enough to page without truncation, over the
 * per-file patch limit (many hunks, or one whole-file hunk) or over the per-file size limit.
 * The reviewer's checkout stays on main, as in production.
 */

const SEED = 10;
const NUM_RUNS = 25;
/** Whole-property budget: past it fast-check stops and reports (with the case shrunk so far). */
const PROPERTY_TIME_LIMIT_MS = 150_000;
/** Limits high enough that the generated large files are captured whole (the truncation oracle). */
const UNLIMITED = 64 * 1024 * 1024;

// ---------------------------------------------------------------------------------------------
// The plan: a small, printable description of a repository (large contents are derived from it).

type Eol = 'lf' | 'crlf';
type NameStyle = 'plain' | 'space' | 'unicode';

/** Applied in order: at a position (mod length + 1), delete `del` lines and insert `ins`. */
interface Edit {
  at: number;
  del: number;
  ins: string[];
}

type Op =
  | { kind: 'keep'; chmod: boolean }
  | { kind: 'modify'; edits: Edit[]; chmod: boolean; eolAtHead: Eol | null; trailingNewlineAtHead: boolean | null }
  | { kind: 'delete' }
  | { kind: 'rename'; to: NameStyle; edits: Edit[] }
  | { kind: 'binary' };

interface TextFile {
  style: NameStyle;
  eol: Eol;
  trailingNewline: boolean;
  lines: string[];
}

interface BaseFile extends TextFile {
  op: Op;
}

type NewFile = ({ kind: 'text' } & TextFile) | { kind: 'binary'; style: NameStyle; size: number };

/**
 * One large file, its content computed from this description:
 * - long: ~1,300 lines, every fifth changed — one big hunk, several read_diff pages, no truncation;
 * - patch-spread: a base under the size limit, every eighth line changed — a patch over
 *   CAPTURE_MAX_PATCH_BYTES_PER_FILE: the hunks that fit are kept, the rest a stated tail;
 * - patch-whole: a whole file added or deleted — one hunk over the patch limit, none kept;
 * - size-both / size-grows / size-deleted: a side over CAPTURE_MAX_FILE_BYTES — no hunks at all.
 */
const BIG_KINDS = ['long', 'patch-spread', 'patch-whole-add', 'patch-whole-delete', 'size-both', 'size-grows', 'size-deleted'] as const;
interface Big {
  kind: (typeof BIG_KINDS)[number];
  eol: Eol;
}

interface Plan {
  base: BaseFile[];
  added: NewFile[];
  big: Big | null;
}

/** Lines that look like diff syntax, CRLF-unfriendly or non-ASCII, with repeats so diffs align. */
const POOL = [
  '',
  'a',
  'b',
  'c',
  'x = 1;',
  '}',
  '  indented',
  '\ttabbed\tline',
  '-- looks deleted',
  '+ looks added',
  '\\ No newline at end of file',
  '@@ -1 +1 @@',
  'ünïcödé',
  '日本語の行',
  'trailing space ',
  'emoji 🧀',
];

const lineArb = fc.oneof({ arbitrary: fc.constantFrom(...POOL), weight: 3 }, { arbitrary: fc.stringMatching(/^[a-z0-9 ]{0,12}$/), weight: 2 });
const linesArb = (max: number) => fc.array(lineArb, { maxLength: max });
const eolArb: fc.Arbitrary<Eol> = fc.oneof({ arbitrary: fc.constant<Eol>('lf'), weight: 3 }, { arbitrary: fc.constant<Eol>('crlf'), weight: 2 });
const styleArb: fc.Arbitrary<NameStyle> = fc.oneof({ arbitrary: fc.constant<NameStyle>('plain'), weight: 3 }, fc.constant<NameStyle>('space'), fc.constant<NameStyle>('unicode'));
const editArb: fc.Arbitrary<Edit> = fc.record({ at: fc.nat(40), del: fc.nat(4), ins: linesArb(4) });
const editsArb = (min: number) => fc.array(editArb, { minLength: min, maxLength: 4 });
const textFileArb = (maxLines: number) => fc.record({ style: styleArb, eol: eolArb, trailingNewline: fc.boolean(), lines: linesArb(maxLines) });

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('keep' as const), chmod: fc.boolean() }), weight: 1 },
  {
    arbitrary: fc.record({
      kind: fc.constant('modify' as const),
      edits: editsArb(1),
      chmod: fc.boolean(),
      eolAtHead: fc.oneof({ arbitrary: fc.constant(null), weight: 5 }, eolArb),
      trailingNewlineAtHead: fc.oneof({ arbitrary: fc.constant(null), weight: 3 }, fc.boolean()),
    }),
    weight: 5,
  },
  { arbitrary: fc.record({ kind: fc.constant('delete' as const) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('rename' as const), to: styleArb, edits: editsArb(0) }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('binary' as const) }), weight: 1 },
);

const newFileArb: fc.Arbitrary<NewFile> = fc.oneof(
  { arbitrary: textFileArb(12).map((f) => ({ kind: 'text' as const, ...f })), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constant('binary' as const), style: styleArb, size: fc.integer({ min: 1, max: 64 }) }), weight: 1 },
);

const bigArb: fc.Arbitrary<Big> = fc.record({
  kind: fc.constantFrom(...BIG_KINDS),
  eol: eolArb,
});

const planArb: fc.Arbitrary<Plan> = fc.record({
  base: fc.array(fc.record({ style: styleArb, eol: eolArb, trailingNewline: fc.boolean(), lines: linesArb(30), op: opArb }), { minLength: 1, maxLength: 6 }),
  added: fc.array(newFileArb, { maxLength: 2 }),
  big: fc.oneof({ arbitrary: fc.constant(null), weight: 3 }, { arbitrary: bigArb, weight: 2 }),
});

// ---------------------------------------------------------------------------------------------
// Building the repository for real.

function nameOf(style: NameStyle, folder: string, stem: string): string {
  switch (style) {
    case 'plain':
      return `${folder}/${stem}.txt`;
    case 'space':
      return `${folder}/with space/${stem} copy.md`;
    case 'unicode':
      return `${folder}/ünï/${stem}-日本.txt`;
  }
}

function textOf(lines: readonly string[], eol: Eol, trailingNewline: boolean): string {
  const sep = eol === 'crlf' ? '\r\n' : '\n';
  return lines.length === 0 ? '' : lines.join(sep) + (trailingNewline ? sep : '');
}

function applyEdits(lines: readonly string[], edits: readonly Edit[]): string[] {
  const out = [...lines];
  for (const edit of edits) out.splice(edit.at % (out.length + 1), edit.del, ...edit.ins);
  return out;
}

/** NUL bytes within git's 8,000-byte sniff: binary to git and to capture. */
function binaryOf(size: number, salt: number): Buffer {
  return Buffer.from(Array.from({ length: size }, (_, i) => (i % 3 === 0 ? 0 : (i * 31 + salt) % 256)));
}

/** `count` numbered lines of `width` bytes before the line ending. */
function bigLines(count: number, width: number, change: (i: number) => boolean = () => false): string[] {
  return Array.from({ length: count }, (_, i) => {
    const stem = `${change(i) ? 'CHANGED' : 'row'} ${String(i + 1).padStart(6, '0')} `;
    return stem + 'x'.repeat(Math.max(0, width - stem.length));
  });
}

/** Base and head contents of the large file (null: absent on that side). */
function bigContents(big: Big): { base: string | null; head: string | null } {
  const text = (lines: string[]) => textOf(lines, big.eol, true);
  const lineBytes = (width: number) => width + (big.eol === 'crlf' ? 2 : 1);
  // Lines enough that the file is over the size limit, resp. its patch over the patch limit.
  const overSize = Math.ceil((CAPTURE_MAX_FILE_BYTES * 1.05) / lineBytes(24));
  const overPatch = Math.ceil((CAPTURE_MAX_PATCH_BYTES_PER_FILE * 1.1) / lineBytes(24));
  switch (big.kind) {
    case 'long':
      return { base: text(bigLines(1300, 40)), head: text(bigLines(1300, 40, (i) => i % 5 === 0)) };
    case 'patch-spread': {
      // A change every 8th line leaves 7 unchanged lines between: separate hunks (git joins at ≤ 6).
      // Each hunk is ~8 lines for 8 lines of file, so the patch is about as large as the file.
      const count = Math.ceil(overPatch * 1.15);
      assert.ok(count * lineBytes(24) < CAPTURE_MAX_FILE_BYTES, 'patch-spread stays under the size limit');
      return { base: text(bigLines(count, 24)), head: text(bigLines(count, 24, (i) => i % 8 === 0)) };
    }
    case 'patch-whole-add':
      return { base: null, head: text(bigLines(overPatch, 24)) };
    case 'patch-whole-delete':
      return { base: text(bigLines(overPatch, 24)), head: null };
    case 'size-both':
      return { base: text(bigLines(overSize, 24)), head: text(bigLines(overSize, 24, (i) => i % 1000 === 7)) };
    case 'size-grows':
      return { base: text(bigLines(20, 24)), head: text(bigLines(overSize, 24)) };
    case 'size-deleted':
      return { base: text(bigLines(overSize, 24)), head: null };
  }
}

function buildRepo(plan: Plan): TestRepo {
  const repo = new TestRepo();
  try {
    plan.base.forEach((file, i) => repo.write(nameOf(file.style, 'base', `f${i}`), textOf(file.lines, file.eol, file.trailingNewline)));
    const big = plan.big ? bigContents(plan.big) : null;
    const bigPath = 'big/large file.log';
    if (big?.base != null) repo.write(bigPath, big.base);
    repo.commit('base');
    repo.git('checkout', '-q', '-b', 'feature');
    plan.base.forEach((file, i) => {
      const path = nameOf(file.style, 'base', `f${i}`);
      const op = file.op;
      switch (op.kind) {
        case 'keep':
          if (op.chmod) repo.chmod(path, 0o755);
          return;
        case 'modify':
          repo.write(path, textOf(applyEdits(file.lines, op.edits), op.eolAtHead ?? file.eol, op.trailingNewlineAtHead ?? file.trailingNewline));
          if (op.chmod) repo.chmod(path, 0o755);
          return;
        case 'delete':
          repo.remove(path);
          return;
        case 'rename': {
          const to = nameOf(op.to, 'moved', `r${i}`);
          mkdirSync(dirname(join(repo.dir, to)), { recursive: true });
          repo.git('mv', path, to);
          if (op.edits.length > 0) repo.write(to, textOf(applyEdits(file.lines, op.edits), file.eol, file.trailingNewline));
          return;
        }
        case 'binary':
          repo.write(path, binaryOf(40, i));
          return;
      }
    });
    plan.added.forEach((file, j) => {
      const path = nameOf(file.style, 'new', `n${j}`);
      repo.write(path, file.kind === 'binary' ? binaryOf(file.size, j) : textOf(file.lines, file.eol, file.trailingNewline));
    });
    if (big) {
      if (big.head === null) repo.remove(bigPath);
      else repo.write(bigPath, big.head);
    }
    repo.commit('feature');
    // The reviewer's checkout is NOT the reviewed branch: nothing may be read from the working tree.
    repo.git('checkout', '-q', 'main');
    return repo;
  } catch (error) {
    repo.cleanup();
    throw error;
  }
}

/** A blob's exact bytes as UTF-8 (TestRepo.git trims a trailing newline, so not through it). */
function show(dir: string, rev: string, path: string): string {
  return execFileSync('git', ['show', `${rev}:${path}`], {
    cwd: dir,
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
    maxBuffer: 64 * 1024 * 1024,
  }).toString('utf8');
}

// ---------------------------------------------------------------------------------------------
// Reading read_diff, every page.

interface ShownLine {
  kind: '+' | '-' | ' ';
  base: number | null;
  head: number | null;
  text: string;
}

const NUMBERED = /^([+\- ]) ([ \d]{5}) ([ \d]{5}) \| (.*)$/;
const NO_NEWLINE = ' (no newline at end of file)';

/** Every page of read_diff for `path`, following each page's own continuation call. */
async function readAllPages(surface: ReadSurface, path: string): Promise<string[]> {
  const pages: string[] = [];
  let input: Record<string, unknown> = { path };
  for (;;) {
    const result = await surface.call(READ_DIFF, input);
    const page = pages.length + 1;
    assert.equal(result.isError, false, `read_diff ${JSON.stringify(input)}: ${result.text.slice(0, 500)}`);
    const bytes = Buffer.byteLength(result.text, 'utf8');
    assert.ok(bytes <= READ_RESULT_MAX_BYTES, `read_diff ${path} page ${page} is ${bytes} bytes, over ${READ_RESULT_MAX_BYTES}`);
    pages.push(result.text);
    const next = /\n\[page (\d+) of (\d+); continue with read_diff (\{.*\})\]$/.exec(result.text);
    if (next) {
      assert.equal(Number(next[1]), page, `read_diff ${path}: page ${page} calls itself page ${next[1]}`);
      const call = JSON.parse(next[3] as string) as Record<string, unknown>;
      assert.deepEqual(call, { path, page: page + 1 }, `read_diff ${path} page ${page}: the continuation names another call`);
      assert.ok(page < 10_000, 'read_diff keeps paging');
      input = call;
      continue;
    }
    if (page > 1) assert.match(result.text, new RegExp(`\\n\\[page ${page} of ${page}: the last\\]$`), `read_diff ${path}: last page ${page} says so`);
    else assert.doesNotMatch(result.text, /\[page \d+ of \d+/, `read_diff ${path}: a one-page result names no page`);
    return pages;
  }
}

function numberedLines(pages: readonly string[]): ShownLine[] {
  const out: ShownLine[] = [];
  for (const page of pages) {
    for (const line of page.split('\n')) {
      const m = NUMBERED.exec(line);
      if (!m) continue;
      const base = m[2]?.trim() ? Number(m[2]) : null;
      const head = m[3]?.trim() ? Number(m[3]) : null;
      out.push({ kind: m[1] as ShownLine['kind'], base, head, text: m[4] as string });
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The property.

/** What the runs exercised (asserted after a passing run so a changed seed cannot silently test less). */
const seen = {
  runs: 0,
  emptyChanges: 0,
  files: 0,
  modified: 0,
  added: 0,
  deleted: 0,
  renamed: 0,
  renamedWithEdits: 0,
  modeOnly: 0,
  binary: 0,
  crlf: 0,
  noNewlineAtEof: 0,
  spaceName: 0,
  unicodeName: 0,
  multiPage: 0,
  patchSizeTruncated: 0,
  patchSizeTruncatedWithKeptHunks: 0,
  fileSizeTruncated: 0,
};

const bigKindsSeen = new Set<Big['kind']>();

/** read_diff's text for a line of a blob: one trailing CR dropped, tabs as four spaces. */
function asShown(line: string): string {
  return line.replace(/\r$/, '').replace(/\t/g, '    ');
}

interface SideContent {
  /** Lines as stored (a CRLF file's lines keep their CR). */
  lines: string[];
  /** The last line has no newline after it. */
  noNewlineAtEof: boolean;
}

function contentOf(text: string): SideContent {
  const lines = text.split('\n');
  const endsWithNewline = lines[lines.length - 1] === '';
  if (endsWithNewline) lines.pop();
  return { lines, noNewlineAtEof: !endsWithNewline && lines.length > 0 };
}

async function checkPlan(plan: Plan): Promise<void> {
  const repo = buildRepo(plan);
  try {
    const handle = await openRepo(repo.dir);
    assert.ok(handle.ok, 'openRepo');
    const captured = await capturePatchset(handle.value, { kind: 'branch', base: 'main', head: 'feature' });
    if (!captured.ok) {
      // Every op may cancel out (edits that delete nothing and insert nothing): nothing to review.
      assert.equal(captured.error.code, 'empty-change', captured.error.message);
      assert.equal(repo.git('rev-parse', 'main^{tree}'), repo.git('rev-parse', 'feature^{tree}'));
      seen.emptyChanges++;
      return;
    }
    const patchset = captured.value;
    assert.equal(patchset.base, repo.head('main'));
    assert.equal(patchset.head, repo.head('feature'));
    assert.equal(repo.git('rev-parse', '--abbrev-ref', 'HEAD'), 'main', 'the checkout stays on main');
    const index = buildCitationIndex(patchset);
    const surface = readSurface(gitChangeSource({ repoDir: repo.dir, patchset, contextDir: join(repo.dir, '.rennet', 'context') }));
    seen.runs++;
    if (plan.big) bigKindsSeen.add(plan.big.kind);
    // What a capture with no limit sees: the oracle for what a truncated file left out.
    let uncut: FileChange[] = [];
    if (patchset.files.some((f) => f.truncated)) {
      const full = await capturePatchset(handle.value, { kind: 'branch', base: 'main', head: 'feature' }, { maxFileBytes: UNLIMITED, maxPatchBytesPerFile: UNLIMITED });
      assert.ok(full.ok && full.value.files.every((f) => !f.truncated), 'a capture without limits truncates nothing');
      uncut = full.value.files;
    }
    for (const file of patchset.files) await checkFile(repo, index, surface, file, uncut.find((f) => f.path === file.path) ?? null);
  } finally {
    repo.cleanup();
  }
}

async function checkFile(repo: TestRepo, index: CitationIndex, surface: ReadSurface, file: FileChange, uncut: FileChange | null): Promise<void> {
  assert.equal(file.submodule, false, 'the generator makes no submodule');
  const pages = await readAllPages(surface, file.path);
  const all = pages.join('\n');
  const shown = numberedLines(pages);
  const where = `${file.path}${file.oldPath ? ` (from ${file.oldPath})` : ''} [${file.status}]`;
  count(file, pages.length);

  if (file.binary) {
    assert.match(all, /^A binary file: there are no lines to read\.$/m, `${where}: read_diff states it is binary\n${all}`);
    assert.equal(shown.length, 0, `${where}: a binary file shows no numbered line\n${all}`);
    for (const side of sidesOf(file)) {
      const resolution = index.resolve(pathOn(file, side), side, 1, 1);
      assert.ok(!resolution.ok && resolution.reason === 'not-line-addressable', `${where} ${side}: a binary file cannot be cited`);
    }
    return;
  }

  // Each numbered line is well formed: + has only a head number, - only a base one, context both.
  for (const line of shown) {
    const expected = { '+': [false, true], '-': [true, false], ' ': [true, true] }[line.kind];
    assert.deepEqual([line.base !== null, line.head !== null], expected, `${where}: numbers of a "${line.kind}" line\n${JSON.stringify(line)}`);
  }

  const truncation = file.truncated ? file.truncation : null;
  if (file.truncated) {
    assert.ok(truncation, `${where}: truncated with no truncation record`);
    const tail = truncation.tailFrom;
    const statement = `[capture truncated: from base line ${tail.base ?? '—'} / head line ${tail.head ?? '—'} on, the file was not captured and counts as changed]`;
    assert.ok(all.includes(statement), `${where}: read_diff states the truncation\n${statement}\n${all.slice(-600)}`);
    if (file.hunks.length === 0) assert.match(all, /No hunk was captured \(the file is over the capture limit\)\./, `${where}: no hunk, and says so`);
    // Against the uncut capture: the kept hunks are its first hunks, and on each side the tail
    // starts past every kept line and no later than the first line of a dropped hunk — so a
    // change the truncation dropped is never uncitable, and nothing kept is in the tail.
    assert.ok(uncut, `${where}: the uncut capture has the file`);
    assert.deepEqual(
      file.hunks.map((h) => h.id),
      uncut.hunks.slice(0, file.hunks.length).map((h) => h.id),
      `${where}: the kept hunks are the first hunks of the whole diff`,
    );
    for (const side of sidesOf(file)) {
      const linesOn = (hunks: FileChange['hunks']) => hunks.flatMap((h) => h.lines.map((l) => (side === 'base' ? l.oldLine : l.newLine)).filter((n): n is number => n !== null));
      const keptEnd = Math.max(0, ...linesOn(file.hunks));
      const droppedStart = Math.min(...linesOn(uncut.hunks.slice(file.hunks.length)));
      const tail = truncation.tailFrom[side];
      if (!Number.isFinite(droppedStart)) continue;
      assert.ok(tail !== null && keptEnd < tail && tail <= droppedStart, `${where} ${side}: tail from ${tail}, kept lines end at ${keptEnd}, dropped lines start at ${droppedStart}`);
    }
  } else {
    assert.doesNotMatch(all, /capture truncated/, `${where}: not truncated, and says nothing of it`);
  }

  if (!file.truncated) {
    // read_diff is the whole change: the base with its - lines dropped and + lines put in is the head.
    const read = (side: Side) => (sidesOf(file).includes(side) ? contentOf(show(repo.dir, side === 'base' ? 'main' : 'feature', pathOn(file, side))).lines.map(asShown) : []);
    const base = read('base');
    const head = read('head');
    const rebuilt: string[] = [];
    let next = 1;
    for (const line of shown) {
      const text = line.text.endsWith(NO_NEWLINE) ? line.text.slice(0, -NO_NEWLINE.length) : line.text;
      if (line.base !== null) {
        while (next < line.base) rebuilt.push(base[next++ - 1] as string);
        next = line.base + 1;
      }
      if (line.head !== null) {
        assert.equal(rebuilt.length + 1, line.head, `${where}: head line ${line.head} comes after ${rebuilt.length} rebuilt lines`);
        rebuilt.push(text);
      }
    }
    while (next <= base.length) rebuilt.push(base[next++ - 1] as string);
    assert.deepEqual(rebuilt, head, `${where}: the base with read_diff's lines applied is not the head\n${all.slice(0, 3000)}`);
  }

  for (const side of ['base', 'head'] as const) {
    const path = pathOn(file, side);
    const numbers = new Set<number>();
    for (const line of shown) {
      const n = side === 'base' ? line.base : line.head;
      if (n !== null) numbers.add(n);
    }
    const label = `${where} ${side} (cited as ${path})`;
    if (!sidesOf(file).includes(side)) {
      assert.equal(numbers.size, 0, `${label}: a side the file does not have shows no line`);
      for (let n = 1; n <= 5; n++) assert.equal(index.resolve(path, side, n, n).ok, false, `${label}: line ${n} of an absent side is citable`);
      continue;
    }
    const content = contentOf(show(repo.dir, side === 'base' ? 'main' : 'feature', path));
    const tail = truncation?.tailFrom[side] ?? null;
    const maxShown = Math.max(0, ...numbers);
    assert.ok(maxShown <= content.lines.length, `${label}: shows line ${maxShown} of a ${content.lines.length}-line file`);
    assert.ok(content.lines.length < 100_000, 'read_diff numbers are five wide; the generator stays below 100,000 lines');
    if (tail !== null) assert.ok(maxShown < tail, `${label}: shows line ${maxShown}, inside the truncated tail from ${tail}`);
    const last = Math.max(maxShown, content.lines.length) + 5;
    const mismatches: string[] = [];
    for (let n = 1; n <= last; n++) {
      const inTail = tail !== null && n >= tail;
      if (inTail && n > content.lines.length) continue; // past the end of a truncated side: not asserted
      const expected = numbers.has(n) || inTail;
      const resolution = index.resolve(path, side, n, n);
      if (resolution.ok !== expected) mismatches.push(`${n}: shown ${numbers.has(n)}, tail ${inTail}, citable ${resolution.ok}${resolution.ok ? '' : ` (${resolution.message})`}`);
      // A rename's base may be cited by its new name too; it must mean the same lines.
      if (side === 'base' && file.oldPath !== null) {
        const byNewName = index.resolve(file.path, 'base', n, n);
        if (byNewName.ok !== resolution.ok) mismatches.push(`${n}: citable by old name ${resolution.ok}, by new name ${byNewName.ok}`);
      }
      if (mismatches.length >= 10) break;
    }
    assert.deepEqual(mismatches, [], `${label}: shown ≠ citable (tail ${tail}, ${content.lines.length} lines)\n${all.slice(0, 3000)}`);

    // The text shown for a line is that line of the captured commit.
    for (const line of shown) {
      const n = side === 'base' ? line.base : line.head;
      if (n === null) continue;
      const raw = content.lines[n - 1] as string;
      const want = asShown(raw) + (content.noNewlineAtEof && n === content.lines.length ? NO_NEWLINE : '');
      assert.equal(line.text, want, `${label}: line ${n} ("${line.kind}") reads ${JSON.stringify(line.text)}, the blob has ${JSON.stringify(raw)}`);
    }
  }
}

function sidesOf(file: FileChange): Side[] {
  const sides: Side[] = [];
  if (file.oldOid !== null && file.status !== 'added') sides.push('base');
  if (file.newOid !== null && file.status !== 'deleted') sides.push('head');
  return sides;
}

function pathOn(file: FileChange, side: Side): string {
  return side === 'base' ? (file.oldPath ?? file.path) : file.path;
}

function count(file: FileChange, pages: number): void {
  seen.files++;
  if (file.status === 'modified' && !file.binary && file.hunks.length > 0) seen.modified++;
  if (file.status === 'added') seen.added++;
  if (file.status === 'deleted') seen.deleted++;
  if (file.status === 'renamed') seen.renamed++;
  if (file.status === 'renamed' && file.hunks.length > 0) seen.renamedWithEdits++;
  if (file.modeChanged && file.hunks.length === 0 && file.status === 'modified') seen.modeOnly++;
  if (file.binary) seen.binary++;
  if (file.hunks.some((h) => h.lines.some((l) => l.text.endsWith('\r')))) seen.crlf++;
  if (file.hunks.some((h) => h.lines.some((l) => l.noNewlineAtEof))) seen.noNewlineAtEof++;
  if (/ /.test(file.path)) seen.spaceName++;
  if (/[^\x20-\x7e]/.test(file.path)) seen.unicodeName++;
  if (pages > 1) seen.multiPage++;
  if (file.truncation?.reason === 'patch-size') seen.patchSizeTruncated++;
  if (file.truncation?.reason === 'patch-size' && file.hunks.length > 0) seen.patchSizeTruncatedWithKeptHunks++;
  if (file.truncation?.reason === 'file-size') seen.fileSizeTruncated++;
}

describe('host/read: read_diff ≡ cite over generated repositories (property)', () => {
  it('read_diff shows exactly the line numbers a citation accepts, with the captured text, on every page', async function () {
    this.timeout(PROPERTY_TIME_LIMIT_MS + 60_000);
    await fc.assert(
      fc.asyncProperty(planArb, async (plan) => {
        await checkPlan(plan);
      }),
      {
        seed: SEED,
        numRuns: NUM_RUNS,
        // Stop (and report the case shrunk so far) rather than let mocha's timeout swallow the report.
        plugins: [fc.interruptAfterTimeLimit(PROPERTY_TIME_LIMIT_MS, { failOnInterrupt: true })],
      },
    );
    // The fixed seed must keep exercising what this property is about.
    const missing = [
      ...Object.entries(seen)
        .filter(([key, n]) => key !== 'emptyChanges' && n === 0)
        .map(([key]) => key),
      ...BIG_KINDS.filter((k) => !bigKindsSeen.has(k)),
    ];
    assert.deepEqual(missing, [], `the generated repositories never covered: ${missing.join(', ')}\n${JSON.stringify(seen)}`);
  });
});
