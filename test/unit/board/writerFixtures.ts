import assert from 'node:assert/strict';
import { capturePatchset } from '../../../host/capture/capture';
import { openRepo } from '../../../host/capture/repo';
import { buildCitationIndex, type CitationIndex, type CitationIndexOptions } from '../../../host/board/citations';
import { applyVerb } from '../../../host/board/writer';
import { emptyBoard, type BoardState, type VerbCall, type VerbResult, type WriterContext } from '../../../host/board/state';
import { BoardElement as BoardElementSchema, type Lens, type ProseRegister } from '../../../protocol/board';
import type { CaptureOptions, FileChange, Patchset } from '../../../protocol/patchset';
import { Patchset as PatchsetSchema } from '../../../protocol/patchset';
import { TestRepo } from '../../fixtures/gitRepo';

/** Shared fixtures for the board engine suites: real temp repositories, real captures. */

export const lines = (n: number, prefix = 'line') => Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}`).join('\n') + '\n';

export async function capture(repo: TestRepo, options?: Partial<CaptureOptions>): Promise<Patchset> {
  const handle = await openRepo(repo.dir);
  assert.ok(handle.ok, handle.ok ? '' : handle.error.message);
  const result = await capturePatchset(handle.value, { kind: 'branch', head: 'feature', base: 'main' }, options);
  assert.ok(result.ok, result.ok ? '' : `${result.error.code}: ${result.error.message}`);
  PatchsetSchema.parse(result.value);
  return result.value;
}

export function fileOf(patchset: Patchset, path: string): FileChange {
  const found = patchset.files.find((f) => f.path === path);
  assert.ok(found, `${path} not in [${patchset.files.map((f) => f.path).join(', ')}]`);
  return found;
}

export interface ChangeFixture {
  repo: TestRepo;
  /** Default capture options. */
  patchset: Patchset;
  /** The same change captured with small limits: big/huge.txt file-size truncated, many.txt patch-size truncated. */
  truncated: Patchset;
}

const SUB_BASE = 'a'.repeat(40);
const SUB_HEAD = 'b'.repeat(40);

/**
 * One branch exercising every citation case:
 * - src/app.ts: two modification hunks (head 7-13 and 28-34; base 7-13 and 28-33)
 * - src/old_name.ts → src/new_name.ts: a rename with one changed line (15)
 * - src/gone.ts deleted, src/added.ts added
 * - assets/logo.png binary, vendor/sub a submodule
 * - README.md a root-level file; src/util/index.ts and lib/index.ts share a basename
 * - big/huge.txt (≈3.4 kB) and many.txt (30 spaced changes) for the truncated capture
 */
export async function changeFixture(): Promise<ChangeFixture> {
  const repo = new TestRepo();
  const renamed = lines(30, 'old content');
  repo
    .write('src/app.ts', lines(40))
    .write('src/old_name.ts', renamed)
    .write('src/gone.ts', lines(8, 'gone'))
    .write('assets/logo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 1, 2, 3]))
    .write('README.md', '# Title\nold intro\n\nmore\n')
    .write('src/util/index.ts', lines(10, 'util'))
    .write('lib/index.ts', lines(10, 'lib'))
    .write('big/huge.txt', lines(400, 'big'))
    .write('many.txt', lines(300, 'm'));
  repo.git('add', '-A');
  repo.git('update-index', '--add', '--cacheinfo', `160000,${SUB_BASE},vendor/sub`);
  repo.git('commit', '-q', '-m', 'base');
  repo.branch('feature');
  repo
    .write('src/app.ts', lines(40).replace('line 10\n', 'line ten\n').replace('line 30\n', 'line 30\nline 30b\n'))
    .remove('src/old_name.ts')
    .write('src/new_name.ts', renamed.replace('old content 15\n', 'new content 15\n'))
    .remove('src/gone.ts')
    .write('src/added.ts', lines(5, 'added'))
    .write('assets/logo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 9, 9, 9]))
    .write('README.md', '# Title\nnew intro\n\nmore\n')
    .write('src/util/index.ts', lines(10, 'util').replace('util 5\n', 'UTIL 5\n'))
    .write('lib/index.ts', lines(10, 'lib').replace('lib 5\n', 'LIB 5\n'))
    .write('big/huge.txt', lines(400, 'big').replace('big 200\n', 'BIG 200\n'))
    .write('many.txt', lines(300, 'm').replace(/m (\d*0)\n/g, 'M $1\n'));
  repo.git('add', '-A', '--', '.', ':!vendor/sub');
  repo.git('update-index', '--cacheinfo', `160000,${SUB_HEAD},vendor/sub`);
  repo.git('commit', '-q', '-m', 'change');
  const patchset = await capture(repo);
  const truncated = await capture(repo, { maxFileBytes: 2048, maxPatchBytesPerFile: 1000 });
  return { repo, patchset, truncated };
}

export function contextFor(patchset: Patchset, author = 'claude', options?: CitationIndexOptions): WriterContext & { citations: CitationIndex } {
  return { author, citations: buildCitationIndex(patchset, options) };
}

export function boardFor(lens: Lens, patchset: Patchset, register: ProseRegister = 'authored'): BoardState {
  return emptyBoard(lens, patchset.id, register);
}

/** Applies calls in order; every one must be accepted. Returns the board and the minted ids. */
export function build(state: BoardState, ctx: WriterContext, calls: VerbCall[]): { state: BoardState; ids: Array<string | null> } {
  const ids: Array<string | null> = [];
  let board = state;
  for (const call of calls) {
    const { state: next, result } = applyVerb(board, call, ctx);
    assert.equal(result.status, 'accepted', `${JSON.stringify(call)} → ${JSON.stringify(result)}`);
    ids.push(result.status === 'accepted' ? result.id : null);
    board = next;
  }
  return { state: board, ids };
}

export function accepted(result: VerbResult): Extract<VerbResult, { status: 'accepted' }> {
  assert.equal(result.status, 'accepted', JSON.stringify(result));
  return result as Extract<VerbResult, { status: 'accepted' }>;
}

export function refused(result: VerbResult, rule?: string, field?: string): Extract<VerbResult, { status: 'refused' }> {
  assert.equal(result.status, 'refused', JSON.stringify(result));
  const r = result as Extract<VerbResult, { status: 'refused' }>;
  if (rule) {
    assert.ok(
      r.refusals.some((x) => x.rule === rule && (field === undefined || x.field === field)),
      `expected ${rule}${field ? ` at ${field}` : ''} in ${JSON.stringify(r.refusals)}`,
    );
  }
  return r;
}

/** Every element conforms to the persisted element schema (host fields included). */
export function assertSchema(state: BoardState): void {
  for (const el of state.elements.values()) BoardElementSchema.parse(el);
}

/** Deep-freezes a board so any mutation of the input throws. */
export function deepFreeze(state: BoardState): BoardState {
  const freeze = (value: unknown): void => {
    if (value && typeof value === 'object' && !Object.isFrozen(value)) {
      Object.freeze(value);
      for (const v of Object.values(value)) freeze(v);
    }
  };
  const map = new Map(state.elements);
  for (const el of map.values()) freeze(el);
  const fail = () => {
    throw new Error('the input board was mutated');
  };
  Object.assign(map, { set: fail, delete: fail, clear: fail });
  Object.freeze(map);
  const out = { ...state, elements: map };
  freeze(out.document);
  freeze(out.repairs);
  freeze(out.lastFinish);
  return Object.freeze(out);
}

/** A one-line citation call. */
export function cite(path: string, side: 'base' | 'head', start: number, end = start, label?: string): VerbCall {
  return { verb: 'cite', input: { path, side, start_line: start, end_line: end, ...(label ? { label } : {}) } };
}
