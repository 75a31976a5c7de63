// A real git repository for the real-VS-Code tests, and git's own answer for what Rennet must show.
// git is always called with an argv (execFileSync), never through a shell.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export function git(repo, args, { input } = {}) {
  return execFileSync('git', args, {
    cwd: repo,
    encoding: 'utf8',
    input,
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' },
    stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    maxBuffer: 64 * 1024 * 1024,
  });
}

function write(repo, rel, content, mode) {
  const p = path.join(repo, rel);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, content);
  if (mode !== undefined) fs.chmodSync(p, mode);
}

const lines = (prefix, n) => Array.from({ length: n }, (_, i) => `${prefix} line ${i + 1}`).join('\n') + '\n';

/** Bytes that git detects as binary (a NUL in the first 8000 bytes): a PNG signature, then `size` bytes made from `seed`. */
export function pngBytes(seed, size = 512) {
  const head = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d]);
  const body = Buffer.alloc(size);
  for (let i = 0; i < body.length; i++) body[i] = (i * 31 + seed * 7) % 256;
  return Buffer.concat([head, body]);
}

/**
 * `main` with one extra commit after `feature` branched off (so the merge-base is not main's tip),
 * and `feature`, checked out, whose diff against main covers: modified, added, deleted, renamed
 * with an edit, a pure mode change, a binary file, and paths with spaces.
 */
/** Over 1 MiB of CSV text; `changed` edits one row in the middle. */
function bigCsv(changed) {
  const rows = [];
  for (let i = 0; i < 30_000; i++) rows.push(i === 15_000 && changed ? `${i},changed,row` : `${i},ordinary,row with some padding text`);
  return `${rows.join('\n')}\n`;
}

export const CAPTURE_LIMIT_BYTES = 1024 * 1024;

/** An empty repository at `dir` (made if missing) on branch `main`, with a test identity, no signing and no CRLF conversion. */
export function initRepo(dir) {
  fs.mkdirSync(dir, { recursive: true });
  git(dir, ['init', '-q', '-b', 'main']);
  git(dir, ['config', 'user.name', 'Rennet Test']);
  git(dir, ['config', 'user.email', 'rennet-test@example.invalid']);
  git(dir, ['config', 'commit.gpgsign', 'false']);
  git(dir, ['config', 'core.autocrlf', 'false']);
  return dir;
}

export function makeFixtureRepo(dir) {
  initRepo(dir);

  write(dir, 'README.md', '# Fixture\n\nA repository for Rennet tests.\n');
  write(dir, 'src/app.js', lines('app', 30));
  write(dir, 'notes/meeting notes.md', lines('note', 10));
  write(dir, 'obsolete.txt', lines('obsolete', 5));
  write(dir, 'docs/old-name.md', lines('doc', 20));
  write(dir, 'scripts/run.sh', '#!/bin/sh\necho run\n', 0o644);
  write(dir, 'assets/logo.png', pngBytes(1));
  write(dir, 'data/big.csv', bigCsv(false));
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-q', '-m', 'initial']);

  git(dir, ['checkout', '-q', '-b', 'feature']);
  // modified: three lines changed, two added
  const app = lines('app', 30).split('\n');
  app[4] = 'app line 5 (changed)';
  app[9] = 'app line 10 (changed)';
  app[19] = 'app line 20 (changed)';
  app.splice(25, 0, 'app inserted A', 'app inserted B');
  write(dir, 'src/app.js', app.join('\n'));
  // added, with a space in its path
  write(dir, 'src/new feature.js', lines('feature', 12));
  // modified, with a space in its path
  write(dir, 'notes/meeting notes.md', lines('note', 10).replace('note line 3', 'note line 3, decided'));
  // deleted
  fs.rmSync(path.join(dir, 'obsolete.txt'));
  // renamed, with an edit
  fs.rmSync(path.join(dir, 'docs/old-name.md'));
  write(dir, 'docs/new-name.md', lines('doc', 20).replace('doc line 7', 'doc line 7 (renamed and edited)'));
  // mode change only
  fs.chmodSync(path.join(dir, 'scripts/run.sh'), 0o755);
  // binary, modified
  write(dir, 'assets/logo.png', pngBytes(2));
  // text over the default 1 MiB capture limit: captured truncated, its size stated
  write(dir, 'data/big.csv', bigCsv(true));
  git(dir, ['add', '-A']);
  // a submodule (gitlink): recorded but not reviewed; an empty directory is how an
  // uninitialized submodule looks in a checkout
  git(dir, ['update-index', '--add', '--cacheinfo', `160000,${'5'.repeat(40)},vendor/lib`]);
  fs.mkdirSync(path.join(dir, 'vendor/lib'), { recursive: true });
  git(dir, ['commit', '-q', '-m', 'feature work']);

  // main moves on after the branch point: not part of the reviewed diff.
  git(dir, ['checkout', '-q', 'main']);
  write(dir, 'README.md', '# Fixture\n\nA repository for Rennet tests, moved on.\n');
  git(dir, ['commit', '-q', '-am', 'main moves on']);
  git(dir, ['checkout', '-q', 'feature']);
  return dir;
}

/**
 * What git says the review of `head` against `base` must show: ids, and per file the status,
 * binary flag, mode change and line counts. `head === null` compares the merge-base with the
 * working tree (untracked files included by `untracked`).
 */
export function expectedDiff(repo, { base, head, untracked = [] }) {
  const headId = head ? git(repo, ['rev-parse', `${head}^{commit}`]).trim() : git(repo, ['rev-parse', 'HEAD']).trim();
  const mergeBase = git(repo, ['merge-base', base, headId]).trim();
  const range = head ? [mergeBase, headId] : [mergeBase];
  const raw = git(repo, ['diff', '--raw', '-z', '-M', '--no-abbrev', ...range]).split('\0');
  const files = new Map();
  for (let i = 0; i < raw.length - 1;) {
    const meta = raw[i++];
    if (!meta.startsWith(':')) continue;
    const [oldMode, newMode, oldOid, newOid, statusField] = meta.slice(1).split(' ');
    const letter = statusField[0];
    let oldPath = null;
    let p = raw[i++];
    if (letter === 'R' || letter === 'C') {
      oldPath = p;
      p = raw[i++];
    }
    const status = { A: 'added', M: 'modified', D: 'deleted', R: 'renamed', T: 'modified' }[letter] ?? letter;
    files.set(p, {
      path: p,
      oldPath,
      status,
      oldMode: oldMode === '000000' ? null : oldMode,
      newMode: newMode === '000000' ? null : newMode,
      modeChanged: oldMode !== '000000' && newMode !== '000000' && oldMode !== newMode,
      binary: false,
      submodule: oldMode === '160000' || newMode === '160000',
      truncated: false,
      oldOid,
      newOid,
      additions: 0,
      deletions: 0,
      hunks: 0,
    });
  }
  const num = git(repo, ['diff', '--numstat', '-z', '-M', ...range]).split('\0');
  for (let i = 0; i < num.length - 1;) {
    const rec = num[i++];
    if (!rec) continue;
    const [a, d, p0] = rec.split('\t');
    let p = p0;
    if (p0 === '') {
      i++; // old path
      p = num[i++];
    }
    const f = files.get(p);
    if (!f) throw new Error(`numstat names ${p}, --raw does not`);
    if (a === '-') {
      f.binary = true;
      f.additions = null;
      f.deletions = null;
    } else {
      f.additions = Number(a);
      f.deletions = Number(d);
    }
  }
  const blobSize = (oid, p) => {
    if (!oid || /^0+$/.test(oid)) return fs.existsSync(path.join(repo, p)) ? fs.statSync(path.join(repo, p)).size : 0;
    return Number(git(repo, ['cat-file', '-s', oid]).trim());
  };
  for (const f of files.values()) {
    if (f.submodule) {
      // a gitlink has no lines to review: counts unknown, no hunks
      f.additions = null;
      f.deletions = null;
      f.hunks = 0;
      continue;
    }
    const sizes = [f.oldMode ? blobSize(f.oldOid, f.oldPath ?? f.path) : 0, f.newMode ? blobSize(f.newOid, f.path) : 0];
    if (!f.binary && sizes.some((n) => n > CAPTURE_LIMIT_BYTES)) {
      f.truncated = true;
      f.additions = null;
      f.deletions = null;
      f.hunks = 0;
      continue;
    }
    const patch = git(repo, ['diff', '-U3', '-M', '--no-color', '--no-ext-diff', ...range, '--', ...(f.oldPath ? [f.oldPath] : []), f.path]);
    f.hunks = patch.split('\n').filter((l) => l.startsWith('@@ ')).length;
  }
  for (const u of untracked) {
    const text = fs.readFileSync(path.join(repo, u), 'utf8');
    files.set(u, {
      path: u,
      oldPath: null,
      status: 'added',
      oldMode: null,
      newMode: fs.statSync(path.join(repo, u)).mode & 0o111 ? '100755' : '100644',
      modeChanged: false,
      binary: false,
      submodule: false,
      truncated: false,
      additions: text.split('\n').length - (text.endsWith('\n') ? 1 : 0),
      deletions: 0,
      hunks: text.length ? 1 : 0,
    });
  }
  const list = [...files.values()];
  return {
    base: mergeBase,
    head: headId,
    files: list,
    totals: {
      files: list.length,
      additions: list.reduce((s, f) => s + (f.additions ?? 0), 0),
      deletions: list.reduce((s, f) => s + (f.deletions ?? 0), 0),
      hunks: list.reduce((s, f) => s + f.hunks, 0),
      binary: list.filter((f) => f.binary).length,
      submodules: list.filter((f) => f.submodule).length,
      truncated: list.filter((f) => f.truncated).length,
      uncounted: list.filter((f) => f.additions === null).length,
    },
  };
}

/**
 * git's own hunks, line by line, for every text file of the review of `head` against `base`:
 * `path → { oldPath, hunks: [{ oldStart, oldLines, newStart, newLines, lines: [{ kind, old, new, text }] }] }`
 * with `kind` one of add, del, context and the old/new line numbers (null on the side a line lacks).
 * The reading scenario cites these lines and checks what the board shows against them.
 */
export function diffHunks(repo, { base, head }) {
  const expected = expectedDiff(repo, { base, head });
  const range = [expected.base, expected.head];
  const out = new Map();
  for (const f of expected.files) {
    if (f.binary || f.submodule || f.truncated || f.hunks === 0) continue;
    const patch = git(repo, ['diff', '-U3', '-M', '--no-color', '--no-ext-diff', ...range, '--', ...(f.oldPath ? [f.oldPath] : []), f.path]);
    const hunks = [];
    let hunk = null;
    let oldNo = 0;
    let newNo = 0;
    for (const line of patch.split('\n')) {
      const header = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(line);
      if (header) {
        const [oldStart, oldLines, newStart, newLines] = [header[1], header[2] ?? '1', header[3], header[4] ?? '1'].map(Number);
        hunk = { oldStart, oldLines, newStart, newLines, lines: [] };
        hunks.push(hunk);
        oldNo = oldStart;
        newNo = newStart;
        continue;
      }
      if (!hunk || line.startsWith('\\')) continue;
      const mark = line[0];
      const text = line.slice(1);
      if (mark === '+') hunk.lines.push({ kind: 'add', old: null, new: newNo++, text });
      else if (mark === '-') hunk.lines.push({ kind: 'del', old: oldNo++, new: null, text });
      else if (mark === ' ') hunk.lines.push({ kind: 'context', old: oldNo++, new: newNo++, text });
    }
    out.set(f.path, { oldPath: f.oldPath, hunks });
  }
  return out;
}

/**
 * How many of git's hunks (`diffHunks()`) no citation lands in: a citation (`{path, start, end}`,
 * head lines) inside a hunk's head range cancels the hunk. The host places those hunks on the
 * Noise board as its members.
 */
export function uncitedHunkCount(hunks, cited) {
  let uncited = 0;
  for (const [p, f] of hunks) {
    for (const h of f.hunks) {
      const hit = cited.some((c) => c.path === p && h.newLines > 0 && c.start >= h.newStart && c.end <= h.newStart + h.newLines - 1);
      if (!hit) uncited++;
    }
  }
  return uncited;
}
