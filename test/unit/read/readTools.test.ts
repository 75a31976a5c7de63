import * as assert from 'node:assert/strict';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BLOB_READ_MAX_BYTES } from '../../../protocol/limits';
import type { Patchset } from '../../../protocol/patchset';
import { LIST_CHANGES, READ_CONTEXT, READ_DIFF, READ_FILE, READ_RESULT_MAX_BYTES, READ_TOOL_NAMES, SEARCH_CODE } from '../../../protocol/read';
import { buildCitationIndex } from '../../../host/board/citations';
import { capturePatchset } from '../../../host/capture/capture';
import { openRepo } from '../../../host/capture/repo';
import { gitChangeSource } from '../../../host/read/gitSource';
import { readSurface, type ReadSurface } from '../../../host/read/tools';
import { TestRepo } from '../../fixtures/gitRepo';

/**
 * The read tools over a real repository whose checkout is NOT the reviewed branch: every answer
 * must come from the captured commits, and read_diff's line numbers must be exactly the ones a
 * citation may name.
 */

const CALLER = ['import { total } from "./sum";', '', 'export function report(xs: number[]) {', '  return `total: ${total(xs)}`;', '}', ''].join('\n');

function makeRepo(): TestRepo {
  const repo = new TestRepo();
  repo.write('src/sum.ts', ['export function total(xs: number[]) {', '  let t = 0;', '  for (const x of xs) t += x;', '  return t;', '}', ''].join('\n'));
  repo.write('src/report.ts', CALLER);
  repo.write('docs/old-name.md', Array.from({ length: 12 }, (_, i) => `note line ${i + 1}`).join('\n') + '\n');
  repo.write('gone.txt', 'this file is deleted\n');
  repo.write('crlf.txt', 'one\r\ntwo\r\nthree\r\n');
  repo.commit('base');
  repo.git('checkout', '-q', '-b', 'feature');
  repo.write('src/sum.ts', ['export function total(xs: readonly number[], start = 0) {', '  let t = start;', '  for (const x of xs) t += x;', '  return t;', '}', ''].join('\n'));
  repo.git('mv', 'docs/old-name.md', 'docs/new-name.md');
  repo.write('docs/new-name.md', Array.from({ length: 12 }, (_, i) => (i === 5 ? 'note line six, reworded' : `note line ${i + 1}`)).join('\n') + '\n');
  repo.remove('gone.txt');
  repo.write('crlf.txt', 'one\r\n2\r\nthree\r\n');
  repo.write('src/added.ts', 'export const answer = 42;\nexport const other = 7;');
  repo.write('image.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 1, 2, 3]));
  repo.write('odd\nname.txt', 'a file whose name has a line break\n');
  repo.commit('feature');
  // The reviewer's checkout stays on main: a read from the working tree would show the old files.
  repo.git('checkout', '-q', 'main');
  return repo;
}

describe('host/read: the read tools every seat gets', () => {
  let repo: TestRepo;
  let patchset: Patchset;
  let contextDir: string;
  let tools: ReadSurface;

  before(async () => {
    repo = makeRepo();
    const handle = await openRepo(repo.dir);
    assert.ok(handle.ok);
    const captured = await capturePatchset(handle.value, { kind: 'branch', base: 'main', head: 'feature' });
    assert.ok(captured.ok, captured.ok ? '' : captured.error.message);
    patchset = captured.value;
    contextDir = join(repo.dir, '.rennet', 'context', 's-test');
    mkdirSync(join(contextDir, 'findings'), { recursive: true });
    writeFileSync(join(contextDir, 'README.md'), '# Review context\n');
    writeFileSync(join(contextDir, 'findings', 'claude.md'), '# Findings\n- one\n');
    tools = readSurface(gitChangeSource({ repoDir: repo.dir, patchset, contextDir }));
  });
  after(() => rmSync(repo.dir, { recursive: true, force: true }));

  const call = async (name: string, input: Record<string, unknown> = {}) => tools.call(name, input);

  it('offers the five tools with flat inputs', () => {
    assert.deepEqual(
      tools.tools.map((t) => t.name),
      [...READ_TOOL_NAMES],
    );
    for (const tool of tools.tools) {
      for (const [field, schema] of Object.entries((tool.inputSchema.properties ?? {}) as Record<string, { type?: string }>)) {
        assert.ok(['string', 'integer', 'number', 'boolean', undefined].includes(schema.type), `${tool.name}.${field} is ${schema.type}`);
      }
    }
  });

  it('list_changes names every changed file, its status, counts, flags and hunks', async () => {
    const result = await call(LIST_CHANGES);
    assert.equal(result.isError, false, result.text);
    for (const want of [
      /^src\/sum\.ts — modified · \+2 −2$/m,
      /^docs\/new-name\.md — renamed from docs\/old-name\.md · \+1 −1$/m,
      /^gone\.txt — deleted · \+0 −1$/m,
      /^src\/added\.ts — added · \+2 −0$/m,
      /^image\.png — added · binary: no lines to read$/m,
      /^odd\\nname\.txt — added · \+1 −0$/m,
      /^ {2}@@ -1,5 \+1,5 @@$/m,
    ]) {
      assert.match(result.text, want);
    }
    assert.doesNotMatch(result.text, /report\.ts/, 'an unchanged file is not listed');
  });

  it('read_diff lines are exactly the lines a citation may name, on both sides of every file', async () => {
    const index = buildCitationIndex(patchset);
    for (const file of patchset.files.filter((f) => !f.binary && !f.submodule)) {
      const result = await call(READ_DIFF, { path: file.path });
      assert.equal(result.isError, false, result.text);
      const shown = { base: new Set<number>(), head: new Set<number>() };
      for (const line of result.text.split('\n')) {
        const m = /^([+\- ]) ([ \d]{5}) ([ \d]{5}) \| /.exec(line);
        if (!m) continue;
        if (m[2]?.trim()) shown.base.add(Number(m[2]));
        if (m[3]?.trim()) shown.head.add(Number(m[3]));
      }
      for (const side of ['base', 'head'] as const) {
        const path = side === 'base' ? (file.oldPath ?? file.path) : file.path;
        const citable = new Set<number>();
        for (let n = 1; n <= 40; n++) if (index.resolve(path, side, n, n).ok) citable.add(n);
        assert.deepEqual(
          [...shown[side]].sort((a, b) => a - b),
          [...citable].sort((a, b) => a - b),
          `${file.path} ${side}: shown vs citable\n${result.text}`,
        );
      }
    }
  });

  it('read_diff shows the reviewed head though the checkout is on main, and accepts an escaped path', async () => {
    const sum = await call(READ_DIFF, { path: 'src/sum.ts' });
    assert.match(sum.text, /^\+ {11}1 \| export function total\(xs: readonly number\[\], start = 0\) \{$/m);
    assert.match(sum.text, /^- {5}1 {7}\| export function total\(xs: number\[\]\) \{$/m);
    const odd = await call(READ_DIFF, { path: 'odd\\nname.txt' });
    assert.equal(odd.isError, false, odd.text);
    assert.match(odd.text, /a file whose name has a line break/);
    const renamedByOldName = await call(READ_DIFF, { path: 'docs/old-name.md' });
    assert.match(renamedByOldName.text, /renamed from docs\/old-name\.md/);
    const binary = await call(READ_DIFF, { path: 'image.png' });
    assert.match(binary.text, /binary file: there are no lines to read/);
    const unchanged = await call(READ_DIFF, { path: 'src/report.ts' });
    assert.equal(unchanged.isError, true);
    assert.match(unchanged.text, /not a changed file.*read_file/);
  });

  it('read_file reads any file at either side, numbered and bounded', async () => {
    const caller = await call(READ_FILE, { path: 'src/report.ts', side: 'head' });
    assert.equal(caller.isError, false, caller.text);
    assert.match(caller.text, /^src\/report\.ts at the head, lines 1–5 of 5:$/m);
    assert.match(caller.text, /^4\| {3}return `total: \$\{total\(xs\)\}`;$/m);
    assert.match(caller.text, /\[end of file\]$/);
    const head = await call(READ_FILE, { path: 'src/sum.ts', side: 'head', start_line: 1, end_line: 2 });
    assert.match(head.text, /1\| export function total\(xs: readonly number\[\], start = 0\)/);
    assert.match(head.text, /\[more: lines 3–5; continue with start_line 3\]/);
    const base = await call(READ_FILE, { path: 'src/sum.ts', side: 'base' });
    assert.match(base.text, /1\| export function total\(xs: number\[\]\) \{/);
    assert.match((await call(READ_FILE, { path: 'gone.txt', side: 'head' })).text, /does not exist at the head/);
    assert.match((await call(READ_FILE, { path: 'gone.txt', side: 'base' })).text, /this file is deleted/);
    assert.match((await call(READ_FILE, { path: 'image.png', side: 'head' })).text, /binary at the head/);
    assert.match((await call(READ_FILE, { path: 'src', side: 'head' })).text, /it is a folder/);
    for (const bad of ['../etc/passwd', '/etc/passwd', 'src/../../x']) {
      const refused = await call(READ_FILE, { path: bad, side: 'head' });
      assert.equal(refused.isError, true, bad);
      assert.doesNotMatch(refused.text, /root:/);
    }
  });

  it('a long file is paged within the result limit', async () => {
    const big = new TestRepo();
    big.write('big.txt', Array.from({ length: 1500 }, (_, i) => `line ${i + 1} ${'x'.repeat(80)}`).join('\n'));
    big.commit('base');
    big.git('checkout', '-q', '-b', 'f');
    big.write('big.txt', Array.from({ length: 1500 }, (_, i) => `LINE ${i + 1} ${'y'.repeat(80)}`).join('\n'));
    big.commit('all changed');
    const handle = await openRepo(big.dir);
    assert.ok(handle.ok);
    const captured = await capturePatchset(handle.value, { kind: 'branch', base: 'main', head: 'f' });
    assert.ok(captured.ok);
    const surface = readSurface(gitChangeSource({ repoDir: big.dir, patchset: captured.value, contextDir: join(big.dir, '.rennet') }));
    let page = 1;
    const heads = new Set<number>();
    for (;;) {
      const result = await surface.call(READ_DIFF, { path: 'big.txt', page });
      assert.equal(result.isError, false, result.text);
      assert.ok(Buffer.byteLength(result.text, 'utf8') <= READ_RESULT_MAX_BYTES, `page ${page} is ${Buffer.byteLength(result.text)} bytes`);
      for (const m of result.text.matchAll(/^\+ +(\d+) \| /gm)) heads.add(Number(m[1]));
      const next = /continue with read_diff \{"path":"big\.txt","page":(\d+)\}/.exec(result.text);
      if (!next) {
        assert.match(result.text, /: the last\]$/);
        break;
      }
      page = Number(next[1]);
    }
    assert.equal(heads.size, 1500, 'every added line is on some page');
    const file = await surface.call(READ_FILE, { path: 'big.txt', side: 'head', start_line: 1, end_line: 300 });
    assert.ok(Buffer.byteLength(file.text, 'utf8') <= READ_RESULT_MAX_BYTES);
    assert.match(file.text, /\[cut at line \d+ to stay within 16384 bytes; continue with start_line \d+\]$/);
    rmSync(big.dir, { recursive: true, force: true });
  });

  it('a file over the size Rennet reads is stated as too large, with its size, and none of its content is sent', async () => {
    const huge = new TestRepo();
    try {
      const lines = Array.from({ length: 300_000 }, (_, i) => `huge line ${String(i + 1).padStart(6, '0')} ${'z'.repeat(12)}`);
      const text = `${lines.join('\n')}\n`;
      const size = Buffer.byteLength(text, 'utf8');
      assert.ok(size > BLOB_READ_MAX_BYTES, `fixture: ${size} bytes is not over ${BLOB_READ_MAX_BYTES}`);
      huge.write('data/huge.txt', text).write('small.txt', 'one\n');
      huge.commit('base');
      huge.git('checkout', '-q', '-b', 'f');
      huge.write('small.txt', 'one\ntwo\n');
      huge.commit('small change');
      huge.git('checkout', '-q', 'main');
      const handle = await openRepo(huge.dir);
      assert.ok(handle.ok);
      const captured = await capturePatchset(handle.value, { kind: 'branch', base: 'main', head: 'f' });
      assert.ok(captured.ok, captured.ok ? '' : captured.error.message);
      const surface = readSurface(gitChangeSource({ repoDir: huge.dir, patchset: captured.value, contextDir: join(huge.dir, '.rennet') }));
      for (const side of ['head', 'base'] as const) {
        const result = await surface.call(READ_FILE, { path: 'data/huge.txt', side, start_line: 1, end_line: 5 });
        assert.equal(result.isError, true, result.text.slice(0, 200));
        assert.equal(
          result.text,
          `data/huge.txt is too large to read at the ${side} (${size} bytes; Rennet reads files of at most ${BLOB_READ_MAX_BYTES} bytes): its content is not served. search_code still finds lines in it.`,
        );
        assert.doesNotMatch(result.text, /huge line/, 'no line of the file is sent');
      }
      // A file under the limit next to it is read as usual, and the search the refusal points at finds a line.
      assert.match((await surface.call(READ_FILE, { path: 'small.txt', side: 'head' })).text, /^2\| two$/m);
      const found = await surface.call(SEARCH_CODE, { pattern: 'huge line 299999 ', path: 'data' });
      assert.match(found.text, /^data\/huge\.txt:299999: huge line 299999 z{12}$/m);
    } finally {
      huge.cleanup();
    }
  });

  it('search_code searches the captured tree, not the checkout, and says when nothing matched', async () => {
    const found = await call(SEARCH_CODE, { pattern: 'start = 0' });
    assert.match(found.text, /^src\/sum\.ts:1: export function total\(xs: readonly number\[\], start = 0\) \{$/m);
    const base = await call(SEARCH_CODE, { pattern: 'start = 0', side: 'base' });
    assert.match(base.text, /^No line at the base matches/);
    const callers = await call(SEARCH_CODE, { pattern: '\\btotal\\(', path: 'src/report.ts' });
    assert.match(callers.text, /^src\/report\.ts:4: return `total: \$\{total\(xs\)\}`;$/m);
    const odd = await call(SEARCH_CODE, { pattern: 'line break' });
    assert.match(odd.text, /^odd\\nname\.txt:1: a file whose name has a line break$/m);
    const bad = await call(SEARCH_CODE, { pattern: 'unbalanced(' });
    assert.equal(bad.isError, true);
    assert.match(bad.text, /search_code failed/);
    const magic = await call(SEARCH_CODE, { pattern: 'x', path: ':(exclude)src' });
    assert.equal(magic.isError, false, 'a pathspec is literal: no magic');
    assert.match(magic.text, /No line at the head matches/);
  });

  it('read_context serves the context folder, lists what exists, and follows no symlink', async () => {
    assert.equal((await call(READ_CONTEXT, { name: 'README.md' })).text, '# Review context\n');
    assert.match((await call(READ_CONTEXT, { name: 'findings/claude.md' })).text, /- one/);
    const missing = await call(READ_CONTEXT, { name: 'pr.md' });
    assert.equal(missing.isError, true);
    assert.match(missing.text, /Available: README\.md, findings\/claude\.md/);
    assert.equal((await call(READ_CONTEXT, { name: '../../../etc/passwd' })).isError, true);
    symlinkSync('/etc', join(contextDir, 'linked'));
    const linked = await call(READ_CONTEXT, { name: 'linked/passwd' });
    assert.equal(linked.isError, true);
    assert.match(linked.text, /symbolic link/);
  });

  it('counts calls, refusals and bytes for the seat’s spend', async () => {
    const fresh = readSurface(gitChangeSource({ repoDir: repo.dir, patchset, contextDir }));
    await fresh.call(LIST_CHANGES, {});
    await fresh.call(READ_DIFF, { path: 'nope.ts' });
    await fresh.call('read_everything', {});
    const stats = fresh.stats();
    assert.equal(stats.calls, 3);
    assert.equal(stats.refusals, 2);
    assert.ok(stats.bytes > 100);
  });
});
