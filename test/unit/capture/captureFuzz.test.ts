import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { appendFileSync, chmodSync, mkdirSync, renameSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import { Patchset as PatchsetSchema, typeChanged, type FileChange, type Patchset, type Side } from '../../../protocol/patchset';
import { READ_DIFF, READ_FILE, SEARCH_CODE } from '../../../protocol/read';
import { escapeControls } from '../../../protocol/text';
import { buildCitationIndex, type CitationIndex } from '../../../host/board/citations';
import { BoardSeat } from '../../../host/board/seat';
import { emptyBoard, type WriterContext } from '../../../host/board/state';
import { readCapturedBlob } from '../../../host/capture/blob';
import { capturePatchset, capturePatchsetSpooled } from '../../../host/capture/capture';
import { openRepo } from '../../../host/capture/repo';
import { gitChangeSource } from '../../../host/read/gitSource';
import { readSurface, type ReadSurface } from '../../../host/read/tools';
import { TestRepo } from '../../fixtures/gitRepo';

/**
 * FUZZ, over generated real git repositories with hostile names and contents: capture never
 * throws and refuses only with a stated reason; its patchset parses with the protocol schema and
 * lists files in byte order of their paths (docs/capture-json.md); its files, statuses, renames,
 * modes, binary flags, line counts and changed line numbers are git's own (read from `git diff
 * --name-status -z -M`, `--numstat -z -M`, `ls-tree` and `-U3 --no-color -z`, parsed here by a small
 * parser of the test's own, not production's); a working-tree capture records what `git add -A`
 * would; read_diff shows exactly those changed lines with git's text, read_file and the panel's
 * blob read give each side's blob; `cite`
 * (the seat's board tool, in-process through BoardSeat) accepts every added head line and every
 * deleted base line and refuses, with a stated rule and message, unchanged lines outside the
 * captured hunks, lines past the end of the file and sides a file does not have; and the seat's
 * tool paths with `..`, absolute or home-rooted forms or leading dashes are refused with a reason,
 * never handed to git as an option or resolved outside the captured trees.
 *
 * Intended divergences from plain git, asserted as stated rather than skipped:
 * - A type change (file ↔ symlink, git's `T`) is one `modified` file whose modes name two kinds.
 * - Under the capture limits (some cases run with small ones), a file over the per-file size limit
 *   has no hunks and a tail from line 1 on each side it has; a patch over the per-file patch limit
 *   keeps its first hunks and states the rest as a tail. Every line git changed is then either a
 *   captured line or inside the stated tail, so it stays citable; the counts are still git's.
 * - A hunk's region includes its context lines (git's -U3 context, host/board/citations.ts), so a
 *   context line read_diff shows is citable; only unchanged lines outside every captured hunk are
 *   refused as "not inside a changed region".
 * - A truncated side's tail runs to any line (the production index is built without line counts),
 *   so "past the end of the file" is asserted on untruncated sides only.
 * - Content that did not change (a mode-only change, a 100% rename) is not read: not binary, 0/0
 *   lines, where git's numstat looks inside and answers "-" for a binary blob.
 * - A change naming a file by a path that is not valid UTF-8 is refused (`invalid-path`, its bytes
 *   named): paths are text past the capture, and decoding would merge such names.
 *
 * The generator: a pool of non-conflicting paths 1–6 segments deep whose segments carry spaces,
 * line breaks, a `diff --git` after a line break, tabs, CR, leading dashes, `..foo`, quotes,
 * backslashes, `~`, `#L1`, bidi and zero-width characters, DEL, NFC and NFD forms of the same letter
 * and other non-ASCII text (git C-quotes many of them in patch headers: core.quotepath is left at
 * its default); a base of regular files (644 or 755), binary files, files with a NUL past git's
 * 8,000-byte sniff (text to git), empty files and symlinks; contents with mixed LF / CRLF, no
 * trailing newline, lines of up to 60,000 characters, control characters, invalid UTF-8 and lines
 * that look like diff syntax; and per file keep (maybe chmod), modify, rewrite, empty, delete,
 * rename to a deep path (maybe with edits), file → symlink (and back) and a file replaced by a
 * folder of the same name; plus added files, now and then one with a Latin-1 name. Head is a
 * committed branch (the checkout stays on the base) or the uncommitted working tree; some cases
 * capture with small size and patch limits.
 *
 * RENNET_FUZZ_RUNS raises the number of runs for a local soak, RENNET_FUZZ_SEED picks another seed
 * (fixed by default; fast-check prints the seed and the shrunk counter-example on failure). The
 * counter-examples it found live on in captureFuzz.regressions.test.ts.
 */

const SEED = Number(process.env.RENNET_FUZZ_SEED ?? '') || 20260615;
const NUM_RUNS = Number(process.env.RENNET_FUZZ_RUNS ?? '') || 25;
/** Whole-property budget: past it fast-check stops and reports (with the case shrunk so far). */
const PROPERTY_TIME_LIMIT_MS = Math.max(150_000, NUM_RUNS * 15_000);

// ─── The model ───────────────────────────────────────────────────────────────────────────────

/** A line's text: a string, a huge run of characters, or raw bytes (possibly invalid UTF-8). */
type LineText = string | { huge: number } | { raw: number[] };
interface Line {
  text: LineText;
  crlf: boolean;
}
interface Edit {
  at: number;
  del: number;
  ins: Line[];
}
type Content =
  | { kind: 'text'; lines: Line[]; trailingNewline: boolean }
  /** NUL bytes early on: binary to git. */
  | { kind: 'binary'; size: number; salt: number }
  /** ~8 KB of text, then a NUL past git's 8,000-byte sniff: text to git, binary-looking to a person. */
  | { kind: 'lateNul'; salt: number }
  | { kind: 'symlink'; target: string };

type Op =
  | { kind: 'keep'; chmod: boolean }
  | { kind: 'modify'; edits: Edit[]; chmod: boolean; trailingNewline: boolean | null }
  | { kind: 'rewrite'; content: Content }
  | { kind: 'empty' }
  | { kind: 'delete' }
  | { kind: 'rename'; edits: Edit[] }
  | { kind: 'toSymlink'; target: string }
  /** Delete the file and create a folder of the same name holding one file. */
  | { kind: 'dirSwap'; content: Content };

interface BaseEntry {
  content: Content;
  exec: boolean;
  op: Op;
}

interface Limits {
  maxFileBytes: number;
  maxPatchBytesPerFile: number;
}

interface Plan {
  pool: string[][];
  base: BaseEntry[];
  added: Content[];
  target: 'branch' | 'working-tree';
  limits: Limits | null;
  /** Which hostile tool paths this case tries (a few per case; the runs cover them all). */
  hostile: number;
  /** The head also adds a file whose name is not valid UTF-8 (Latin-1 bytes). */
  nonUtf8Name: boolean;
}

const HOSTILE_SEGMENTS = [
  'with space',
  ' lead',
  'trail ',
  'new\nline',
  'x\ndiff --git a',
  'tab\there',
  'cr\rname',
  '-dash',
  '--help',
  '-',
  '-p',
  '..foo',
  '...',
  'foo..',
  '.hidden',
  'ünï',
  '\u00e9', // é, NFC
  'e\u0301', // é, NFD: a different name on Linux
  '日本',
  '🧀',
  'ｆｕｌｌ', // fullwidth: above the surrogates in UTF-16, below 🧀 in UTF-8
  'quo"te',
  "apo'strophe",
  'back\\slash',
  '~tilde',
  'star*',
  '[br]',
  ':colon',
  'notes#L1',
  'bidi\u202Ertl',
  'zero\u200Bwidth',
  'del\u007f',
  '@{-1}',
  'HEAD',
];

const segmentArb = fc.oneof({ arbitrary: fc.stringMatching(/^[a-z0-9]{1,6}$/), weight: 2 }, { arbitrary: fc.constantFrom(...HOSTILE_SEGMENTS), weight: 3 });
const pathArb = fc.array(segmentArb, { minLength: 1, maxLength: 6 });

const LINE_POOL = [
  '',
  'a',
  'b',
  'x = 1;',
  '}',
  '\ttabbed\tline',
  '-- looks deleted',
  '+ looks added',
  ' looks like context',
  '\\ No newline at end of file',
  '@@ -1 +1 @@',
  'diff --git a/x b/x',
  'ünïcödé',
  'e\u0301',
  '日本語の行',
  'emoji 🧀',
  'trailing space ',
  '\u0001\u0002 controls \u001b[31m',
  'del \u007f',
  '\u202Ebidi override',
  'mid\rcr',
  '\u000cform feed',
  '\ufeffbom',
];

const lineTextArb: fc.Arbitrary<LineText> = fc.oneof(
  { arbitrary: fc.constantFrom(...LINE_POOL), weight: 12 },
  { arbitrary: fc.stringMatching(/^[a-z0-9 ]{0,12}$/), weight: 6 },
  { arbitrary: fc.integer({ min: 5_000, max: 60_000 }).map((huge) => ({ huge })), weight: 1 },
  { arbitrary: fc.array(fc.integer({ min: 0x80, max: 0xff }), { minLength: 1, maxLength: 4 }).map((raw) => ({ raw })), weight: 1 },
);
const lineArb: fc.Arbitrary<Line> = fc.record({ text: lineTextArb, crlf: fc.oneof({ arbitrary: fc.constant(false), weight: 3 }, { arbitrary: fc.constant(true), weight: 1 }) });
const linesArb = (max: number) => fc.array(lineArb, { maxLength: max });
const editArb: fc.Arbitrary<Edit> = fc.record({ at: fc.nat(40), del: fc.nat(4), ins: linesArb(4) });
const editsArb = (min: number) => fc.array(editArb, { minLength: min, maxLength: 4 });
const symlinkTargetArb = fc.oneof(
  pathArb.map((segments) => segments.join('/')),
  fc.constantFrom('../../../etc/passwd', '/etc/passwd', '..', 'does/not/exist'),
);

const contentArb: fc.Arbitrary<Content> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('text' as const), lines: linesArb(24), trailingNewline: fc.boolean() }), weight: 10 },
  { arbitrary: fc.record({ kind: fc.constant('binary' as const), size: fc.integer({ min: 1, max: 300 }), salt: fc.nat(255) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('lateNul' as const), salt: fc.nat(50) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('symlink' as const), target: symlinkTargetArb }), weight: 1 },
);

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('keep' as const), chmod: fc.boolean() }), weight: 2 },
  {
    arbitrary: fc.record({ kind: fc.constant('modify' as const), edits: editsArb(1), chmod: fc.boolean(), trailingNewline: fc.option(fc.boolean()) }),
    weight: 6,
  },
  { arbitrary: fc.record({ kind: fc.constant('rewrite' as const), content: contentArb }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('empty' as const) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('delete' as const) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('rename' as const), edits: editsArb(0) }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant('toSymlink' as const), target: symlinkTargetArb }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('dirSwap' as const), content: contentArb }), weight: 1 },
);

const limitsArb: fc.Arbitrary<Limits | null> = fc.oneof(
  { arbitrary: fc.constant(null), weight: 2 },
  { arbitrary: fc.record({ maxFileBytes: fc.integer({ min: 1_024, max: 20_000 }), maxPatchBytesPerFile: fc.integer({ min: 100, max: 1_500 }) }), weight: 1 },
);

const planArb: fc.Arbitrary<Plan> = fc.record({
  pool: fc.array(pathArb, { minLength: 2, maxLength: 16 }),
  base: fc.array(fc.record({ content: contentArb, exec: fc.boolean(), op: opArb }), { minLength: 1, maxLength: 5 }),
  added: fc.array(contentArb, { maxLength: 2 }),
  target: fc.oneof({ arbitrary: fc.constant('branch' as const), weight: 3 }, { arbitrary: fc.constant('working-tree' as const), weight: 1 }),
  limits: limitsArb,
  hostile: fc.nat(),
  nonUtf8Name: fc.oneof({ arbitrary: fc.constant(false), weight: 12 }, { arbitrary: fc.constant(true), weight: 1 }),
});

// ─── Materializing a plan ────────────────────────────────────────────────────────────────────

/** The pool's paths with duplicates and folder/file conflicts (one a folder prefix of another) dropped. */
function usablePaths(pool: readonly string[][]): string[] {
  const kept: string[] = [];
  for (const segments of pool) {
    const path = segments.join('/');
    if (kept.some((k) => k === path || k.startsWith(`${path}/`) || path.startsWith(`${k}/`))) continue;
    kept.push(path);
  }
  return kept;
}

function lineBytes(text: LineText): Buffer {
  if (typeof text === 'string') return Buffer.from(text, 'utf8');
  if ('huge' in text) return Buffer.from('lorem ipsum '.repeat(Math.ceil(text.huge / 12)).slice(0, text.huge), 'utf8');
  return Buffer.from(text.raw);
}

function textBytes(lines: readonly Line[], trailingNewline: boolean): Buffer {
  const parts: Buffer[] = [];
  lines.forEach((line, i) => {
    parts.push(lineBytes(line.text));
    if (i < lines.length - 1 || trailingNewline) parts.push(Buffer.from(line.crlf ? '\r\n' : '\n'));
  });
  return Buffer.concat(parts);
}

function lateNulBytes(salt: number): Buffer {
  const rows = Array.from({ length: 1_000 }, (_, i) => `row ${String(i + 1).padStart(4, '0')}${i === salt * 7 ? ' changed' : ''}`);
  const text = Buffer.from(`${rows.join('\n')}\nnul\u0000here ${salt}\ntail\n`, 'utf8');
  assert.ok(text.indexOf(0) > 8_000, "the NUL is past git's 8,000-byte sniff");
  return text;
}

function applyEdits(lines: readonly Line[], edits: readonly Edit[]): Line[] {
  const out = [...lines];
  for (const edit of edits) out.splice(edit.at % (out.length + 1), edit.del, ...edit.ins);
  return out;
}

/** The head content of a modified base file (edits apply to text; other kinds change in kind). */
function modified(content: Content, edits: readonly Edit[], trailingNewline: boolean | null): Content {
  switch (content.kind) {
    case 'text':
      return { kind: 'text', lines: applyEdits(content.lines, edits), trailingNewline: trailingNewline ?? content.trailingNewline };
    case 'binary':
      return { ...content, salt: content.salt + 1 + edits.length };
    case 'lateNul':
      return { ...content, salt: (content.salt + 1 + edits.length) % 50 };
    case 'symlink':
      return { kind: 'symlink', target: `${content.target}${edits.length > 0 ? '-moved' : '~'}` };
  }
}

function writeContent(dir: string, path: string, content: Content, exec: boolean): void {
  const full = join(dir, path);
  mkdirSync(dirname(full), { recursive: true });
  if (content.kind === 'symlink') {
    symlinkSync(content.target, full);
    return;
  }
  const bytes =
    content.kind === 'text'
      ? textBytes(content.lines, content.trailingNewline)
      : content.kind === 'binary'
        ? Buffer.from(Array.from({ length: content.size }, (_, i) => (i % 5 === 0 ? 0 : (i * 37 + content.salt) % 256)))
        : lateNulBytes(content.salt);
  writeFileSync(full, bytes);
  chmodSync(full, exec ? 0o755 : 0o644);
}

function removePath(dir: string, path: string): void {
  unlinkSync(join(dir, path));
}

interface Built {
  repo: TestRepo;
  /** What the generated change did that the patchset alone does not show (for the coverage tally). */
  notes: Set<string>;
}

function build(plan: Plan): Built {
  // TestRepo's own set-up, with the configuration written directly: each git process costs.
  const repo = new TestRepo(undefined, false);
  const notes = new Set<string>();
  const commit = (message: string) => {
    repo.git('add', '-A');
    repo.git('commit', '-q', '--allow-empty', '-m', message);
  };
  try {
    repo.git('init', '-q', '-b', 'main');
    appendFileSync(join(repo.dir, '.git', 'config'), '[user]\n\tname = Test\n\temail = test@example.com\n[commit]\n\tgpgsign = false\n[core]\n\tautocrlf = false\n');
    const paths = usablePaths(plan.pool);
    let next = 0;
    const take = (): string | null => (next < paths.length ? (paths[next++] as string) : null);
    const base = plan.base.flatMap((entry) => {
      const path = take();
      return path === null ? [] : [{ ...entry, path }];
    });
    for (const entry of base) writeContent(repo.dir, entry.path, entry.content, entry.exec);
    commit('base');
    if (plan.target === 'branch') repo.git('checkout', '-q', '-b', 'feature');

    for (const entry of base) {
      const { path, op, content } = entry;
      switch (op.kind) {
        case 'keep':
          if (op.chmod && content.kind !== 'symlink') chmodSync(join(repo.dir, path), entry.exec ? 0o644 : 0o755);
          if (op.chmod && content.kind !== 'symlink') notes.add('chmod');
          break;
        case 'modify': {
          removePath(repo.dir, path);
          writeContent(repo.dir, path, modified(content, op.edits, op.trailingNewline), op.chmod ? !entry.exec : entry.exec);
          break;
        }
        case 'rewrite':
          removePath(repo.dir, path);
          writeContent(repo.dir, path, op.content, entry.exec);
          break;
        case 'empty':
          removePath(repo.dir, path);
          writeContent(repo.dir, path, { kind: 'text', lines: [], trailingNewline: false }, entry.exec);
          break;
        case 'delete':
          removePath(repo.dir, path);
          break;
        case 'rename': {
          const to = take();
          if (to === null) break;
          mkdirSync(dirname(join(repo.dir, to)), { recursive: true });
          if (op.edits.length === 0 || content.kind !== 'text') {
            renameSync(join(repo.dir, path), join(repo.dir, to));
          } else {
            removePath(repo.dir, path);
            writeContent(repo.dir, to, modified(content, op.edits, null), entry.exec);
          }
          notes.add(to.split('/').length > 2 ? 'deepRename' : 'rename');
          break;
        }
        case 'toSymlink':
          removePath(repo.dir, path);
          writeContent(repo.dir, path, content.kind === 'symlink' ? { kind: 'text', lines: [{ text: op.target, crlf: false }], trailingNewline: true } : { kind: 'symlink', target: op.target }, false);
          break;
        case 'dirSwap':
          removePath(repo.dir, path);
          writeContent(repo.dir, `${path}/inner.txt`, op.content, false);
          notes.add('dirSwap');
          break;
      }
    }
    for (const content of plan.added) {
      const path = take();
      if (path !== null) writeContent(repo.dir, path, content, false);
    }
    // "caf\xE9.txt" ("café.txt" in Latin-1): a name git stores as bytes and no UTF-8 string spells.
    if (plan.nonUtf8Name) writeFileSync(Buffer.concat([Buffer.from(`${repo.dir}/caf`), Buffer.from([0xe9]), Buffer.from('.txt')]), 'latin-1 name\n');
    if (plan.target === 'branch') {
      commit('feature');
      // The reviewer's checkout is not the reviewed branch: nothing may be read from the working tree.
      repo.git('checkout', '-q', 'main');
    }
    return { repo, notes };
  } catch (error) {
    repo.cleanup();
    throw error;
  }
}

// ─── git, read independently ─────────────────────────────────────────────────────────────────

function git(dir: string, args: readonly string[]): Buffer {
  return execFileSync('git', args, {
    cwd: dir,
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', LC_ALL: 'C' },
    maxBuffer: 256 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

interface GitFile {
  letter: string;
  score: number | null;
  path: string;
  oldPath: string | null;
}

/** `git diff --name-status -z -M`: a status (R with its score), then one path, or two for R/C. */
function nameStatus(dir: string, base: string, head: string): GitFile[] {
  const fields = git(dir, ['diff', '--name-status', '-z', '-M', base, head]).toString('utf8').split('\0');
  const out: GitFile[] = [];
  for (let i = 0; i + 1 < fields.length;) {
    const status = fields[i++] as string;
    const letter = status.charAt(0);
    const score = status.length > 1 ? Number(status.slice(1)) : null;
    if (letter === 'R' || letter === 'C') {
      out.push({ letter, score, oldPath: fields[i++] as string, path: fields[i++] as string });
    } else out.push({ letter, score, path: fields[i++] as string, oldPath: null });
  }
  return out;
}

/** `git diff --numstat -z -M`: per head path, lines added and deleted, or null for binary. */
function numstat(dir: string, base: string, head: string): Map<string, { added: number; deleted: number } | null> {
  const fields = git(dir, ['diff', '--numstat', '-z', '-M', base, head]).toString('utf8').split('\0');
  const out = new Map<string, { added: number; deleted: number } | null>();
  for (let i = 0; i + 1 < fields.length;) {
    // "added<TAB>deleted<TAB>path": the path itself may hold a tab.
    const record = fields[i++] as string;
    const first = record.indexOf('\t');
    const second = record.indexOf('\t', first + 1);
    const [added, deleted, path] = [record.slice(0, first), record.slice(first + 1, second), record.slice(second + 1)];
    let name = path;
    if (path === '') {
      i++; // the old name of a rename
      name = fields[i++] as string;
    }
    out.set(name, added === '-' ? null : { added: Number(added), deleted: Number(deleted) });
  }
  return out;
}

interface TreeEntry {
  mode: string;
  oid: string;
}

/** `git ls-tree -r -z`: every file of a commit with its mode and blob id. */
function lsTree(dir: string, commit: string): Map<string, TreeEntry> {
  const out = new Map<string, TreeEntry>();
  for (const record of git(dir, ['ls-tree', '-r', '-z', '--full-tree', commit]).toString('utf8').split('\0')) {
    if (!record) continue;
    const tab = record.indexOf('\t');
    const [mode, , oid] = record.slice(0, tab).split(' ') as [string, string, string];
    out.set(record.slice(tab + 1), { mode, oid });
  }
  return out;
}

/** One `diff --git` section of `git diff -U3`, as this test reads it. */
interface Section {
  header: string;
  binary: boolean;
  /** head line → its text; base line → its text. */
  added: Map<number, string>;
  deleted: Map<number, string>;
}

/**
 * An independent reading of `git diff -U3 --no-color -z -M`: sections start at a `diff --git `
 * line outside a hunk body, hunk bodies are consumed by the counts of their @@ header (so a body
 * line can never start a section), context lines count on both sides, and "\ No newline" lines
 * are skipped. Three lines of context, as the capture asks: git's -U0 can pair a large rewrite's
 * lines differently (seen on real lockfile rewrites), so it is not the same diff.
 */
function unifiedThree(dir: string, base: string, head: string): Section[] {
  const out = git(dir, ['diff', '-U3', '--no-color', '-z', '-M', base, head]);
  const sections: Section[] = [];
  let current: Section | null = null;
  let oldLeft = 0;
  let newLeft = 0;
  let oldLine = 0;
  let newLine = 0;
  let at = 0;
  while (at < out.length) {
    let nl = out.indexOf(0x0a, at);
    if (nl < 0) nl = out.length;
    const line = out.subarray(at, nl);
    at = nl + 1;
    const text = line.toString('utf8');
    if (oldLeft > 0 || newLeft > 0) {
      assert.ok(current, 'a hunk body outside a section');
      if (line[0] === 0x2d) {
        current.deleted.set(oldLine++, text.slice(1));
        oldLeft--;
      } else if (line[0] === 0x2b) {
        current.added.set(newLine++, text.slice(1));
        newLeft--;
      } else if (line[0] === 0x20) {
        oldLine++;
        newLine++;
        oldLeft--;
        newLeft--;
      } else if (line[0] !== 0x5c) assert.fail(`git printed a hunk body line with no marker: ${JSON.stringify(text.slice(0, 80))}`);
      continue;
    }
    if (text.startsWith('diff --git ')) {
      current = { header: text, binary: false, added: new Map(), deleted: new Map() };
      sections.push(current);
      continue;
    }
    if (line[0] === 0x5c) continue;
    assert.ok(current, `git diff output before any section: ${JSON.stringify(text.slice(0, 80))}`);
    const hunk = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(text);
    if (hunk) {
      oldLine = Number(hunk[1]);
      oldLeft = hunk[2] === undefined ? 1 : Number(hunk[2]);
      newLine = Number(hunk[3]);
      newLeft = hunk[4] === undefined ? 1 : Number(hunk[4]);
    } else if (/^Binary files .* differ$/.test(text)) current.binary = true;
  }
  return sections;
}

/** git's C-style quoting of a header path (quote.c): controls, `"`, `\`, DEL and (core.quotepath) bytes ≥ 0x80. */
function cQuote(name: string): string {
  const bytes = Buffer.from(name, 'utf8');
  if (!bytes.some((b) => b < 0x20 || b === 0x22 || b === 0x5c || b >= 0x7f)) return name;
  const named: Record<number, string> = { 7: 'a', 8: 'b', 9: 't', 10: 'n', 11: 'v', 12: 'f', 13: 'r', 0x22: '"', 0x5c: '\\' };
  let out = '"';
  for (const b of bytes) {
    if (named[b] !== undefined) out += `\\${named[b]}`;
    else if (b < 0x20 || b >= 0x7f) out += `\\${b.toString(8).padStart(3, '0')}`;
    else out += String.fromCharCode(b);
  }
  return `${out}"`;
}

/** Pairs each name-status record with its -U3 section(s) by order, checking the header names them. */
function sectionsByFile(files: readonly GitFile[], sections: readonly Section[]): Map<string, Section[]> {
  const out = new Map<string, Section[]>();
  let i = 0;
  for (const file of files) {
    const want = `diff --git ${cQuote(`a/${file.oldPath ?? file.path}`)} ${cQuote(`b/${file.path}`)}`;
    const count = file.letter === 'T' ? 2 : 1;
    const mine = sections.slice(i, i + count);
    i += count;
    for (const section of mine) assert.equal(section.header, want, `the -U3 section for ${JSON.stringify(file.path)} (${file.letter})`);
    assert.equal(mine.length, count, `git printed ${mine.length} sections for ${JSON.stringify(file.path)} (${file.letter})`);
    out.set(file.path, mine);
  }
  assert.equal(i, sections.length, 'every -U3 section belongs to a name-status record');
  return out;
}

function lineCountOf(bytes: Buffer): number {
  if (bytes.length === 0) return 0;
  let n = 0;
  for (const b of bytes) if (b === 0x0a) n++;
  return bytes[bytes.length - 1] === 0x0a ? n : n + 1;
}

// ─── The seat's tools ────────────────────────────────────────────────────────────────────────

/** Up to this many changed lines on a side, the cite tool is called for each line; past it, per run. */
const CITE_EACH_LINE_UP_TO = 40;
const NUMBERED = /^([+\- ]) ([ \d]{5}) ([ \d]{5}) \| (.*)$/;
const NO_NEWLINE = ' (no newline at end of file)';
const READ_LINE_MAX_CHARS = 400;

/** How the seat's tools show a line of code: one trailing CR dropped, tabs as four spaces, controls escaped, clipped. */
function asShown(text: string): string {
  const flat = escapeControls(text.replace(/\r$/, '').replace(/\t/g, '    '));
  return flat.length > READ_LINE_MAX_CHARS ? `${flat.slice(0, READ_LINE_MAX_CHARS - 1)}…` : flat;
}

interface Shown {
  kind: '+' | '-' | ' ';
  base: number | null;
  head: number | null;
  text: string;
}

async function readDiff(surface: ReadSurface, path: string): Promise<{ text: string; lines: Shown[] }> {
  const pages: string[] = [];
  let input: Record<string, unknown> = { path };
  for (;;) {
    const result = await surface.call(READ_DIFF, input);
    assert.equal(result.isError, false, `read_diff ${JSON.stringify(input)}: ${result.text.slice(0, 400)}`);
    pages.push(result.text);
    const more = /\n\[page \d+ of \d+; continue with read_diff (\{.*\})\]$/.exec(result.text);
    if (!more) break;
    input = JSON.parse(more[1] as string) as Record<string, unknown>;
    assert.ok(pages.length < 1_000, 'read_diff keeps paging');
  }
  const lines: Shown[] = [];
  for (const page of pages) {
    for (const line of page.split('\n')) {
      const m = NUMBERED.exec(line);
      if (!m) continue;
      lines.push({ kind: m[1] as Shown['kind'], base: m[2]?.trim() ? Number(m[2]) : null, head: m[3]?.trim() ? Number(m[3]) : null, text: m[4] as string });
    }
  }
  return { text: pages.join('\n'), lines };
}

interface CiteOutcome {
  ok: boolean;
  text: string;
  hunkIds: readonly string[];
}

function citer(patchset: Patchset, index: CitationIndex): (path: string, side: Side, start: number, end: number) => CiteOutcome {
  const context: WriterContext = { author: 'fuzz', citations: index };
  let seat = new BoardSeat({ state: emptyBoard('sequence', patchset.id), context });
  return (path, side, start, end) => {
    // Each citation is judged on its own merits; a fresh board now and then keeps the board small.
    if (seat.state.elements.size >= 50) seat = new BoardSeat({ state: emptyBoard('sequence', patchset.id), context });
    const out = seat.call('cite', { path, side, start_line: start, end_line: end });
    if (out.isError) {
      assert.equal(out.result.status, 'refused', `cite ${JSON.stringify(path)} ${side} ${start}-${end}: ${out.text}`);
      return { ok: false, text: out.text, hunkIds: [] };
    }
    const id = (out.result as { id: string }).id;
    const element = seat.state.elements.get(id) as { path?: string; hunk_ids?: string[] } | undefined;
    assert.ok(element && typeof element.path === 'string', `cite ${JSON.stringify(path)}: no code_ref ${id}`);
    // The code_ref names the file as the change does, whichever form the call used.
    assert.ok(
      patchset.files.some((f) => f.path === element.path || f.oldPath === element.path),
      `cite ${JSON.stringify(path)} stored ${JSON.stringify(element.path)}`,
    );
    return { ok: true, text: out.text, hunkIds: element.hunk_ids ?? [] };
  };
}

// ─── The property ────────────────────────────────────────────────────────────────────────────

const seen: Record<string, number> = {};
const saw = (what: string, yes = true) => {
  if (yes) seen[what] = (seen[what] ?? 0) + 1;
};
const MUST_SEE = [
  'added',
  'deleted',
  'modified',
  'renamed',
  'renamedWithEdits',
  'deepRename',
  'typeChange',
  'modeChange',
  'binary',
  'lateNul',
  'crlf',
  'noNewlineAtEof',
  'hugeLine',
  'invalidUtf8',
  'emptyFile',
  'dirSwap',
  'quotedPath',
  'newlineInPath',
  'leadingDash',
  'nfd',
  'workingTree',
  'truncatedPatch',
  'truncatedFile',
  'contextLine',
  'unchangedRefused',
  'pastEndRefused',
  'nonUtf8Refused',
  'blobRead:base',
  'blobRead:head',
];

async function checkPlan(plan: Plan): Promise<void> {
  const { repo, notes } = build(plan);
  try {
    const handle = await openRepo(repo.dir);
    assert.ok(handle.ok, 'openRepo');
    const target = plan.target === 'branch' ? ({ kind: 'branch', base: 'main', head: 'feature' } as const) : ({ kind: 'working-tree', base: 'main' } as const);
    // (1) A patchset or a typed refusal with its reason; never a throw (a throw fails the property).
    const captured = await capturePatchset(handle.value, target, plan.limits ?? undefined);
    // The spooled capture (`rennet capture --json`) refuses alike, or reads back exactly this patchset's JSON.
    const spooled = await capturePatchsetSpooled(handle.value, target, plan.limits ?? undefined);
    if (!captured.ok || !spooled.ok) {
      assert.deepEqual(spooled.ok ? 'captured' : spooled.error.code, captured.ok ? 'captured' : captured.error.code, 'the spooled capture refuses as the capture does');
    } else {
      try {
        assert.equal(spooled.value.id, captured.value.id);
        assert.equal(Buffer.concat([...spooled.value.chunks()]).toString('utf8'), JSON.stringify(captured.value), 'the spooled capture reads back the same JSON');
      } finally {
        spooled.value.dispose();
      }
    }
    // main, feature (when there is one) and the branch checked out, in one git process.
    const [baseCommit, featureCommit, checkedOut] = repo.git('rev-parse', 'main', ...(plan.target === 'branch' ? ['feature'] : ['main']), '--abbrev-ref', 'HEAD').split('\n');
    if (plan.nonUtf8Name) {
      // A path that is not UTF-8 cannot be named by the text paths everything past capture uses
      // (decoded, it could merge with another file's name): the capture is refused, naming its bytes.
      assert.ok(!captured.ok, 'a change with a non-UTF-8 file name is refused');
      assert.equal(captured.error.code, 'invalid-path', captured.error.message);
      assert.match(captured.error.message, /not valid UTF-8 \("caf\\xE9\.txt"\)/);
      saw('nonUtf8Refused');
      return;
    }
    if (!captured.ok) {
      assert.ok(captured.error.code.length > 0 && captured.error.message.trim().length > 0, 'a refusal states its reason');
      assert.equal(captured.error.code, 'empty-change', `capture refused a valid repository: ${captured.error.code}: ${captured.error.message}`);
      const headTree = plan.target === 'branch' ? repo.git('rev-parse', 'feature^{tree}') : (repo.git('add', '-A'), repo.git('write-tree'));
      assert.equal(headTree, repo.git('rev-parse', 'main^{tree}'), 'empty-change only when the trees are the same');
      saw('emptyChange');
      return;
    }
    const patchset = captured.value;
    PatchsetSchema.parse(patchset);
    // docs/capture-json.md: files[] sorted by path in byte order (of the UTF-8 path).
    const order = patchset.files.map((f) => f.path);
    assert.deepEqual(
      order,
      [...order].sort((a, b) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))),
      'files[] in byte order of their paths',
    );
    assert.equal(patchset.base, baseCommit);
    if (plan.target === 'branch') {
      assert.equal(patchset.head, featureCommit);
      assert.equal(checkedOut, 'main', 'the checkout stays on main');
    } else {
      // The snapshot is the working tree as `git add -A` would record it.
      repo.git('add', '-A');
      assert.equal(patchset.headTree, repo.git('write-tree'), 'the working-tree snapshot records the working tree');
      saw('workingTree');
    }
    for (const note of notes) saw(note);
    await checkAgainstGit(repo, patchset, plan.limits !== null, plan.hostile);
  } finally {
    blobs.clear();
    repo.cleanup();
  }
}

async function checkAgainstGit(repo: TestRepo, patchset: Patchset, limited: boolean, hostile: number): Promise<void> {
  const dir = repo.dir;
  const { base, head } = patchset;
  // (2) The files, statuses and renames are git's.
  const gitFiles = nameStatus(dir, base, head);
  const named = (f: { path: string; oldPath: string | null }, status: string) => `${status} ${JSON.stringify(f.oldPath)} → ${JSON.stringify(f.path)}`;
  const letterOf: Record<string, FileChange['status']> = { A: 'added', D: 'deleted', M: 'modified', T: 'modified', R: 'renamed' };
  assert.deepEqual(
    patchset.files.map((f) => named(f, f.status)).sort(),
    gitFiles.map((f) => named(f, letterOf[f.letter] ?? `unexpected ${f.letter}`)).sort(),
    'capture files ≠ git diff --name-status -z -M',
  );
  const counts = numstat(dir, base, head);
  const baseTree = lsTree(dir, base);
  const headTree = lsTree(dir, head);
  readBlobs(dir, [
    ...new Set(
      patchset.files
        .filter((f) => !f.submodule)
        .flatMap((f) => [f.oldOid, f.newOid])
        .filter((o): o is string => o !== null),
    ),
  ]);
  const sections = sectionsByFile(gitFiles, unifiedThree(dir, base, head));
  const index = buildCitationIndex(patchset);
  const cite = citer(patchset, index);
  const surface = readSurface(gitChangeSource({ repoDir: dir, patchset, contextDir: join(dir, '.rennet', 'context') }));

  for (const file of patchset.files) {
    const gitFile = gitFiles.find((g) => g.path === file.path) as GitFile;
    const where = `${JSON.stringify(file.path)} [${file.status}${file.oldPath !== null ? ` from ${JSON.stringify(file.oldPath)}` : ''}]`;
    if (gitFile.letter === 'R') assert.equal(file.similarity, gitFile.score, `${where}: similarity`);
    // Modes and blob ids are those of the trees.
    const before = file.status === 'added' ? undefined : baseTree.get(file.oldPath ?? file.path);
    const after = file.status === 'deleted' ? undefined : headTree.get(file.path);
    assert.deepEqual([file.oldMode, file.oldOid], [before?.mode ?? null, before?.oid ?? null], `${where}: base mode and blob`);
    assert.deepEqual([file.newMode, file.newOid], [after?.mode ?? null, after?.oid ?? null], `${where}: head mode and blob`);
    assert.equal(file.modeChanged, before !== undefined && after !== undefined && before.mode !== after.mode, `${where}: modeChanged`);
    assert.equal(typeChanged(file), gitFile.letter === 'T', `${where}: a type change is git's T`);
    saw('typeChange', gitFile.letter === 'T');
    saw('modeChange', file.modeChanged && gitFile.letter !== 'T');
    saw(file.status);
    saw('renamedWithEdits', file.status === 'renamed' && (file.hunks.length > 0 || file.truncated));
    saw('quotedPath', cQuote(file.path) !== file.path);
    saw('newlineInPath', file.path.includes('\n'));
    saw(
      'leadingDash',
      file.path.split('/').some((s) => s.startsWith('-')),
    );
    saw('nfd', file.path.includes('e\u0301'));
    saw('emptyFile', (file.status === 'added' && file.additions === 0 && !file.binary) || (after !== undefined && blob(after.oid).length === 0));

    // Binary is git's numstat binary; the counts are git's unless the file is over the size limit.
    const count = counts.get(file.path);
    assert.ok(count !== undefined, `${where}: git --numstat has it`);
    if (file.oldOid !== null && file.oldOid === file.newOid) {
      // The content did not change (a mode-only change, a 100% rename): git printed no content diff
      // and capture does not read the blob, so it is not called binary and has 0/0 lines changed,
      // even where git's numstat looks inside and answers "-" for a binary blob.
      assert.deepEqual([file.binary, file.hunks.length, file.additions, file.deletions], [false, 0, 0, 0], `${where}: unchanged content`);
      saw('unchangedBinary', count === null);
    } else assert.equal(file.binary, count === null, `${where}: binary is git's (numstat ${JSON.stringify(count)})`);
    saw('binary', file.binary);
    const sectionsOfFile = sections.get(file.path) as Section[];
    const gitAdded = new Map<number, string>();
    const gitDeleted = new Map<number, string>();
    for (const section of sectionsOfFile) {
      for (const [n, t] of section.added) gitAdded.set(n, t);
      for (const [n, t] of section.deleted) gitDeleted.set(n, t);
    }
    if (file.binary) {
      assert.ok(
        sectionsOfFile.some((s) => s.binary),
        `${where}: git -U3 also calls it binary`,
      );
      assert.deepEqual([file.hunks.length, file.additions, file.deletions], [0, null, null], `${where}: a binary file has no hunks or counts`);
    } else if (file.oldOid !== null && file.oldOid === file.newOid) {
      assert.match((await surface.call(READ_DIFF, { path: file.path })).text, /No lines changed \(a mode or rename-only change\)\./, `${where}: read_diff says no line changed`);
    } else if (file.truncation?.reason === 'file-size') {
      assert.ok(limited || count === null, `${where}: truncated by file size under the default limits`);
      assert.deepEqual([file.hunks.length, file.additions, file.deletions], [0, null, null], `${where}: over the size limit: no hunks, no counts`);
    } else {
      assert.ok(count !== null);
      assert.deepEqual([file.additions, file.deletions], [count.added, count.deleted], `${where}: +/- counts are git's`);
    }

    // (3) The changed line numbers (and their text) are git's -U3 ones.
    const capturedAdded = new Map<number, string>();
    const capturedDeleted = new Map<number, string>();
    for (const hunk of file.hunks) {
      for (const line of hunk.lines) {
        if (line.kind === 'add') capturedAdded.set(line.newLine as number, line.text);
        if (line.kind === 'del') capturedDeleted.set(line.oldLine as number, line.text);
        saw('crlf', line.text.endsWith('\r'));
        saw('noNewlineAtEof', line.noNewlineAtEof === true);
        saw('hugeLine', line.text.length >= 5_000);
        saw('invalidUtf8', line.text.includes('\ufffd'));
        saw('lateNul', line.text.includes('\u0000'));
      }
    }
    const tail = file.truncation?.tailFrom ?? { base: null, head: null };
    if (!file.binary) {
      for (const [side, got, want] of [
        ['head', capturedAdded, gitAdded],
        ['base', capturedDeleted, gitDeleted],
      ] as const) {
        const sideTail = tail[side];
        if (!file.truncated) {
          assert.deepEqual(
            [...got.keys()].sort((a, b) => a - b),
            [...want.keys()].sort((a, b) => a - b),
            `${where}: ${side} changed lines ≠ git -U3`,
          );
        } else {
          // Captured lines are git's, and each line git changed that capture left out is in the stated tail.
          for (const n of got.keys()) assert.ok(want.has(n), `${where}: captured ${side} line ${n} is not one git changed`);
          const missing = [...want.keys()].filter((n) => !got.has(n));
          assert.ok(
            missing.every((n) => sideTail !== null && n >= sideTail),
            `${where}: ${side} lines ${missing.slice(0, 5).join(', ')} are neither captured nor in the tail from ${sideTail}`,
          );
        }
        for (const [n, text] of got) assert.equal(text, want.get(n), `${where}: ${side} line ${n} text`);
      }
      saw('truncatedPatch', file.truncation?.reason === 'patch-size');
      saw('truncatedFile', file.truncation?.reason === 'file-size');
    }

    // (4) read_diff shows the same changed lines, by the raw path, its escaped form and a rename's old name.
    const shown = await readDiff(surface, file.path);
    if (escapeControls(file.path) !== file.path) assert.equal((await readDiff(surface, escapeControls(file.path))).text, shown.text, `${where}: read_diff by the escaped path`);
    if (file.oldPath !== null && file.oldPath !== file.path) assert.equal((await readDiff(surface, file.oldPath)).text, shown.text, `${where}: read_diff by the old name`);
    if (file.binary) {
      assert.match(shown.text, /A binary file: there are no lines to read\./, `${where}: read_diff states binary`);
      assert.equal(shown.lines.length, 0);
      for (const side of ['base', 'head'] as const) {
        const out = cite(side === 'base' ? (file.oldPath ?? file.path) : file.path, side, 1, 1);
        assert.ok(!out.ok && /binary file; it has no lines to cite/.test(out.text), `${where}: cite of a binary file is refused as such: ${out.text}`);
      }
      await checkReadFile(surface, dir, patchset, { baseTree, headTree }, file, before, after, where);
      continue;
    }
    if (file.truncated)
      assert.match(shown.text, /\[capture truncated: from base line \S+ \/ head line \S+ on, the file was not captured and counts as changed\]/, `${where}: read_diff states the truncation`);
    const shownAdded = new Map(shown.lines.filter((l) => l.kind === '+').map((l) => [l.head as number, l.text]));
    const shownDeleted = new Map(shown.lines.filter((l) => l.kind === '-').map((l) => [l.base as number, l.text]));
    for (const [side, got, want] of [
      ['head', shownAdded, capturedAdded],
      ['base', shownDeleted, capturedDeleted],
    ] as const) {
      assert.deepEqual(
        [...got.keys()].sort((a, b) => a - b),
        [...want.keys()].sort((a, b) => a - b),
        `${where}: read_diff ${side} changed lines ≠ the capture's`,
      );
      for (const [n, text] of got) {
        const eof = text.endsWith(NO_NEWLINE) && !asShown(want.get(n) as string).endsWith(NO_NEWLINE) ? text.slice(0, -NO_NEWLINE.length) : text;
        assert.equal(eof, asShown(gitTextOf(side === 'head' ? gitAdded : gitDeleted, n)), `${where}: read_diff ${side} line ${n} text`);
      }
    }

    // cite: every line git added (head) or deleted (base) is accepted, with a hunk id of this file
    // (none in a truncated tail), by the path as the change names it and as read_diff prints it.
    // Every line goes through the citation index the cite tool consults; through the tool itself
    // every line of a side with at most CITE_EACH_LINE_UP_TO changed lines, and otherwise each
    // run of consecutive changed lines as one range (a run lies inside one hunk, or in the tail).
    const fileHunks = new Set(file.hunks.map((h) => h.id));
    const basePath = file.oldPath ?? file.path;
    for (const [side, path, lines] of [
      ['head', file.path, gitAdded],
      ['base', basePath, gitDeleted],
    ] as const) {
      const sideTail = tail[side];
      const inTail = (n: number) => sideTail !== null && n >= sideTail;
      const numbers = [...lines.keys()].sort((a, b) => a - b);
      for (const n of numbers) {
        const resolution = index.resolve(path, side, n, n);
        assert.ok(resolution.ok, `${where}: ${side} line ${n} (git changed it) is not citable: ${resolution.ok ? '' : resolution.message}`);
        assert.ok(inTail(n) || (resolution.hunkIds.length === 1 && fileHunks.has(resolution.hunkIds[0] as string)), `${where}: ${side} ${n} resolves to hunks ${JSON.stringify(resolution.hunkIds)}`);
      }
      const ranges: Array<[number, number]> = [];
      for (const n of numbers) {
        const last = ranges[ranges.length - 1];
        if (numbers.length > CITE_EACH_LINE_UP_TO && last && last[1] === n - 1 && inTail(n) === inTail(last[0])) last[1] = n;
        else ranges.push([n, n]);
      }
      for (const [start, end] of ranges) {
        for (const form of escapeControls(path) === path ? [path] : [path, escapeControls(path)]) {
          const out = cite(form, side, start, end);
          assert.ok(out.ok, `${where}: cite ${JSON.stringify(form)} ${side} ${start}-${end} (git changed them) is refused: ${out.text}`);
          assert.ok(inTail(start) || (out.hunkIds.length === 1 && fileHunks.has(out.hunkIds[0] as string)), `${where}: cite ${side} ${start}-${end} names hunks ${JSON.stringify(out.hunkIds)}`);
        }
      }
      saw('citedByRange', numbers.length > CITE_EACH_LINE_UP_TO);
    }
    // Context lines read_diff shows are inside a hunk's region: citable by design.
    for (const line of shown.lines.filter((l) => l.kind === ' ').slice(0, 3)) {
      assert.ok(cite(file.path, 'head', line.head as number, line.head as number).ok, `${where}: context head line ${line.head} shown by read_diff`);
      saw('contextLine');
    }
    // Unchanged lines outside every captured hunk, and lines past the end, are refused with the rule and why.
    for (const side of ['base', 'head'] as const) {
      const entry = side === 'base' ? before : after;
      const path = side === 'base' ? basePath : file.path;
      if (!entry) {
        const out = cite(path, side, 1, 1);
        assert.ok(!out.ok && /citation-resolves/.test(out.text) && /has no (base|head) side/.test(out.text), `${where}: cite of the absent ${side} side: ${out.text}`);
        continue;
      }
      const total = lineCountOf(blob(entry.oid));
      const shownOnSide = new Set(shown.lines.map((l) => (side === 'base' ? l.base : l.head)).filter((n): n is number => n !== null));
      const sideTail = tail[side];
      const outside = Array.from({ length: total }, (_, i) => i + 1).filter((n) => !shownOnSide.has(n) && (sideTail === null || n < sideTail));
      for (const n of outside.slice(0, 4)) {
        const out = cite(path, side, n, n);
        assert.ok(!out.ok && /citation-resolves/.test(out.text) && /is not inside a changed region/.test(out.text), `${where}: cite of unchanged ${side} line ${n} outside every hunk: ${out.text}`);
        saw('unchangedRefused');
      }
      if (sideTail === null) {
        for (const n of [total + 1, total + 1_000]) {
          const out = cite(path, side, n, n);
          assert.ok(!out.ok && /citation-resolves/.test(out.text), `${where}: cite of ${side} line ${n} past the end (${total} lines): ${out.text}`);
          saw('pastEndRefused');
        }
      }
    }
    await checkReadFile(surface, dir, patchset, { baseTree, headTree }, file, before, after, where);
  }
  await checkHostilePaths(surface, patchset, cite, dir, baseTree, headTree, hostile);
}

function gitTextOf(lines: ReadonlyMap<number, string>, n: number): string {
  const text = lines.get(n);
  assert.ok(text !== undefined, `git changed no line ${n}`);
  return text;
}

/** Every blob of the changed files, read up front by one `git cat-file --batch`. */
const blobs = new Map<string, Buffer>();
function readBlobs(dir: string, oids: readonly string[]): void {
  const out = execFileSync('git', ['cat-file', '--batch'], {
    cwd: dir,
    input: `${oids.join('\n')}\n`,
    maxBuffer: 256 * 1024 * 1024,
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
  });
  let at = 0;
  for (const oid of oids) {
    const nl = out.indexOf(0x0a, at);
    const [name, type, size] = out.subarray(at, nl).toString('utf8').split(' ') as [string, string, string];
    assert.deepEqual([name, type], [oid, 'blob'], `cat-file --batch ${oid}`);
    blobs.set(oid, out.subarray(nl + 1, nl + 1 + Number(size)));
    at = nl + 1 + Number(size) + 1;
  }
}
function blob(oid: string): Buffer {
  const bytes = blobs.get(oid);
  assert.ok(bytes, `blob ${oid} was not read`);
  return bytes;
}

/**
 * read_file of each side a changed file has: its lines are the blob's, binary is stated; and the
 * panel's blob read (readCapturedBlob) gives the captured blob of that side.
 */
async function checkReadFile(
  surface: ReadSurface,
  dir: string,
  patchset: Patchset,
  trees: { baseTree: ReadonlyMap<string, TreeEntry>; headTree: ReadonlyMap<string, TreeEntry> },
  file: FileChange,
  before: TreeEntry | undefined,
  after: TreeEntry | undefined,
  where: string,
): Promise<void> {
  const { baseTree, headTree } = trees;
  const panelSide: Side = patchset.files.indexOf(file) % 2 === 0 ? 'base' : 'head';
  for (const [side, entry, path] of [
    ['base', before, file.oldPath ?? file.path],
    ['head', after, file.path],
  ] as const) {
    const out = await surface.call(READ_FILE, { path, side });
    // The panel's blob read: an absent side costs no git call; of the sides a file has, one per
    // file (base or head by the file's place in the list) keeps each case to fewer git processes.
    const panel = !entry || side === panelSide || !(before && after) ? await readCapturedBlob(dir, patchset, path, side) : null;
    if (!entry) {
      // A file replaced by a folder of its name (or the reverse) is a folder on that side, and read_file says so.
      const folder = [...(side === 'base' ? baseTree : headTree).keys()].some((p) => p.startsWith(`${path}/`));
      const why = folder ? /it is a folder; read_file reads files/ : /does not exist at the/;
      assert.ok(out.isError && why.test(out.text), `${where}: read_file of the absent ${side}: ${out.text.slice(0, 300)}`);
      assert.ok(panel && !panel.ok && panel.error.code === 'not-found' && panel.error.message.length > 0, `${where}: blob read of the absent ${side}`);
      continue;
    }
    const bytes = blob(entry.oid);
    if (panel) {
      assert.ok(panel.ok, `${where}: blob read of the ${side}: ${panel.ok ? '' : panel.error.message}`);
      assert.equal(panel.value.oid, entry.oid, `${where}: blob read of the ${side} reads the captured blob`);
      assert.equal(panel.value.text, bytes.subarray(0, 8000).includes(0) ? null : bytes.toString('utf8'), `${where}: blob read text of the ${side}`);
      saw(`blobRead:${side}`);
    }
    if (bytes.subarray(0, 8000).includes(0)) {
      assert.ok(out.isError && /is binary at the/.test(out.text), `${where}: read_file states a binary ${side}: ${out.text.slice(0, 300)}`);
      continue;
    }
    assert.equal(out.isError, false, `${where}: read_file ${side}: ${out.text.slice(0, 300)}`);
    const lines = bytes.toString('utf8').split('\n');
    if (lines[lines.length - 1] === '') lines.pop();
    const first = out.text.split('\n', 1)[0] as string;
    assert.ok(first.endsWith(` of ${lines.length}:`), `${where}: read_file ${side} counts ${lines.length} lines: ${first.slice(-60)}`);
    const width = String(Math.min(lines.length, 300)).length;
    const body = out.text.split('\n').slice(1);
    for (let n = 1; n <= Math.min(lines.length, 300); n++) {
      const row = body[n - 1] as string;
      if (row.startsWith('[cut at line')) break;
      assert.equal(row, `${String(n).padStart(width)}| ${asShown(lines[n - 1] as string)}`, `${where}: read_file ${side} line ${n}`);
    }
  }
}

/** Tool paths a seat might send that name no repository file: traversal, absolute and malformed forms. */
function traversalPaths(real: string, dir: string): string[] {
  return [`../${real}`, `x/../${real}`, `./${real}`, `${real}/.`, `/${real}`, join(dir, real), `${real}//`, '../../../../etc/passwd', '/etc/passwd', `${real}\u0000`];
}
/** Names a shell, git or a model could read as something else; in a git tree they are literal names. */
function literalPaths(real: string): string[] {
  return ['--help', '-p', '--output=/tmp/rennet-fuzz-pwned', '-', '--', '-C/', `~/${real}`, '~', `C:\\${real}`];
}
const HOSTILE_COUNT = traversalPaths('x', '/r').length + literalPaths('x').length;
const HOSTILE_PER_CASE = 3;

/**
 * Tool paths that are not repository-relative, or that a shell or git could take for something
 * else, are refused with a stated reason by every tool — unless the generated trees really hold a
 * file by that name, in which case it is read as that file and never as an option.
 */
async function checkHostilePaths(
  surface: ReadSurface,
  patchset: Patchset,
  cite: ReturnType<typeof citer>,
  dir: string,
  baseTree: ReadonlyMap<string, TreeEntry>,
  headTree: ReadonlyMap<string, TreeEntry>,
  pick: number,
): Promise<void> {
  const changed = patchset.files[0] as FileChange;
  const real = changed.path;
  const traversal = traversalPaths(real, dir);
  const dashes = literalPaths(real);
  // A file or a folder of either tree by that very name (a generated "-/a" makes "-" a real folder).
  const inTree = (tree: ReadonlyMap<string, TreeEntry>, p: string) => tree.has(p) || [...tree.keys()].some((k) => k.startsWith(`${p}/`));
  const exists = (p: string) => inTree(baseTree, p) || inTree(headTree, p) || patchset.files.some((f) => f.path === p || f.oldPath === p);
  const all = [...traversal, ...dashes];
  for (const path of Array.from({ length: HOSTILE_PER_CASE }, (_, i) => all[(pick + i) % all.length] as string)) {
    if (exists(path)) continue;
    saw(`hostile:${all.indexOf(path)}`);
    const label = JSON.stringify(path);
    const diff = await surface.call(READ_DIFF, { path });
    assert.ok(diff.isError && /is not a changed file/.test(diff.text), `read_diff ${label}: ${diff.text.slice(0, 200)}`);
    const file = await surface.call(READ_FILE, { path, side: 'head' });
    assert.ok(file.isError && file.text.trim().length > 0, `read_file ${label} is refused with a reason: ${file.text.slice(0, 200)}`);
    assert.doesNotMatch(file.text, /usage: git/, `read_file ${label} reached git as an option`);
    if (traversal.includes(path) && !path.endsWith('\u0000')) assert.match(file.text, /is not a repository-relative path/, `read_file ${label} names why`);
    const out = cite(path, 'head', 1, 1);
    assert.ok(!out.ok && /citation-(resolves|well-formed)/.test(out.text) && out.text.trim().length > 0, `cite ${label}: ${out.text.slice(0, 200)}`);
    const search = await surface.call(SEARCH_CODE, { pattern: 'a', path });
    assert.doesNotMatch(search.text, /usage: git/, `search_code under ${label} reached git as an option`);
    if (path === `${real}//`) {
      // search_code reads trailing slashes as naming a folder ("src/"): it searches under `real` only.
      const under = search.text
        .split('\n')
        .slice(1)
        .filter((l) => /^\S.*:\d+: /.test(l));
      assert.ok(search.isError || under.every((l) => l.startsWith(`${escapeControls(real)}`)), `search_code under ${label}: ${search.text.slice(0, 200)}`);
    } else if (traversal.includes(path) && !path.endsWith('\u0000'))
      assert.ok(search.isError && /not a repository-relative path/.test(search.text), `search_code under ${label}: ${search.text.slice(0, 200)}`);
    else assert.ok(search.isError || /^No line at the head matches/.test(search.text), `search_code under ${label} finds nothing or says why: ${search.text.slice(0, 200)}`);
  }
}

describe('capture, read_diff and cite against git over generated hostile repositories (fuzz)', () => {
  it('never throws, refuses only with a reason, and agrees with git on every generated case', async function () {
    this.timeout(PROPERTY_TIME_LIMIT_MS + 60_000);
    await fc.assert(
      fc.asyncProperty(planArb, async (plan) => {
        await checkPlan(plan);
      }),
      {
        seed: SEED,
        numRuns: NUM_RUNS,
        plugins: [fc.interruptAfterTimeLimit(PROPERTY_TIME_LIMIT_MS, { failOnInterrupt: true })],
      },
    );
    const missing = [...MUST_SEE, ...Array.from({ length: HOSTILE_COUNT }, (_, i) => `hostile:${i}`)].filter((what) => !seen[what]);
    assert.deepEqual(missing, [], `the generated repositories never covered: ${missing.join(', ')}\n${JSON.stringify(seen)}`);
  });
});
