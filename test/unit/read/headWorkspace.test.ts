import * as assert from 'node:assert/strict';
import { existsSync, lstatSync, readFileSync, readdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Patchset } from '../../../protocol/patchset';
import { dropHeadWorkspaces, HEAD_WORKSPACES_KEPT, headWorkspace } from '../../../host/read/headWorkspace';
import { archiveSession, sessionPatchsetIds } from '../../../host/rounds/archive';
import type { Harness } from '../../../host/pipeline/ports';
import { prepareLensRun } from '../../../host/review/command';
import { writeContextDir, writeNoiseOffer } from '../../../host/pipeline/contextDir';
import { newGenerationId } from '../../../host/pipeline/run';
import { Store } from '../../../host/store';
import { TestRepo, tempDir } from '../../fixtures/gitRepo';
import { captureBranch, testPrompts, tickingClock } from '../pipeline/fixtures';

const WASM_PATH = require.resolve('sql.js/dist/sql-wasm.wasm');

/** The reviewed head as the seats' working directory: a detached worktree, the checkout untouched. */
describe('host/read/headWorkspace: the seats run in a snapshot of the reviewed head', () => {
  let repo: TestRepo;
  let patchset: Patchset;
  let data: string;

  beforeEach(async () => {
    repo = new TestRepo();
    repo.write('src/app.ts', 'export const version = 1;\n').commit('base');
    repo.branch('feature').write('src/app.ts', 'export const version = 2;\n').write('src/new.ts', 'export const added = true;\n').commit('change');
    patchset = await captureBranch(repo);
    repo.git('checkout', '-q', 'main');
    data = tempDir('rennet-head-ws-');
  });
  afterEach(() => {
    repo.cleanup();
    rmSync(data, { recursive: true, force: true });
  });

  it('writes the captured head tree and leaves the checkout, HEAD, index and worktree list alone', async () => {
    const statusBefore = repo.git('status', '--porcelain');
    const made = await headWorkspace(data, repo.dir, patchset);
    assert.ok(made.ok, made.ok ? '' : made.error.message);
    const dir = made.value;
    assert.equal(dir, join(data, 'heads', patchset.id));
    assert.equal(readFileSync(join(dir, 'src/app.ts'), 'utf8'), 'export const version = 2;\n');
    assert.ok(existsSync(join(dir, 'src/new.ts')));
    assert.ok(!existsSync(join(dir, '.git')), 'a plain snapshot, not a repository');
    assert.equal(
      repo
        .git('worktree', 'list', '--porcelain')
        .split('\n')
        .filter((l) => l.startsWith('worktree ')).length,
      1,
      'nothing registered in the user’s repository',
    );
    assert.equal(readFileSync(join(repo.dir, 'src/app.ts'), 'utf8'), 'export const version = 1;\n', 'the checkout still has main');
    assert.equal(repo.git('symbolic-ref', '--short', 'HEAD').trim(), 'main');
    assert.equal(repo.git('status', '--porcelain'), statusBefore);
  });

  it('writes a symbolic link of the change as a plain file holding its target', async () => {
    repo.git('checkout', '-q', 'feature');
    symlinkSync('/etc/passwd', join(repo.dir, 'link'));
    repo.git('add', 'link');
    repo.commit('a link');
    const ps = await captureBranch(repo);
    repo.git('checkout', '-q', 'main');
    const made = await headWorkspace(data, repo.dir, ps);
    assert.ok(made.ok);
    assert.equal(lstatSync(join(made.value, 'link')).isSymbolicLink(), false);
    assert.equal(readFileSync(join(made.value, 'link'), 'utf8'), '/etc/passwd');
  });

  it('is reused for the same capture, and remade when its directory holds something else', async () => {
    const first = await headWorkspace(data, repo.dir, patchset);
    const [again, concurrent] = await Promise.all([headWorkspace(data, repo.dir, patchset), headWorkspace(data, repo.dir, patchset)]);
    assert.ok(first.ok && again.ok && concurrent.ok);
    assert.equal(again.value, first.value);
    // A snapshot whose record names another commit (or none) is written again.
    writeFileSync(`${first.value}.head`, `${patchset.base}\n`);
    writeFileSync(join(first.value, 'src/app.ts'), 'tampered\n');
    const remade = await headWorkspace(data, repo.dir, patchset);
    assert.ok(remade.ok);
    assert.equal(readFileSync(join(remade.value, 'src/app.ts'), 'utf8'), 'export const version = 2;\n');
  });

  it('is dropped with its review: archiving the session removes the snapshots of its patchsets, and a later seat writes it again', async () => {
    const made = await headWorkspace(data, repo.dir, patchset);
    assert.ok(made.ok && existsSync(made.value) && existsSync(`${made.value}.head`));
    const store = await Store.open(join(data, 'store'));
    try {
      const { session } = store.getOrCreateSession({ repoRoot: repo.dir, target: { kind: 'branch', head: 'feature', base: 'main' }, now: '2026-12-02T00:00:00.000Z' });
      store.putPatchset(patchset);
      store.attachPatchset(session.id, patchset.id, '2026-12-02T00:00:00.000Z');
      assert.deepEqual(sessionPatchsetIds(store, session.id), [patchset.id]);
      const archived = await archiveSession(store, store.getSession(session.id)!, {
        now: () => '2026-12-02T00:00:01.000Z',
        snapshots: { dataDir: data, patchsetIds: sessionPatchsetIds(store, session.id) },
      });
      assert.ok(archived.ok, archived.ok ? '' : archived.error.message);
    } finally {
      store.close();
    }
    assert.ok(!existsSync(made.value) && !existsSync(`${made.value}.head`), 'the snapshot went with the archived review');
    assert.deepEqual(dropHeadWorkspaces(data, ['not-a-patchset', '../x']), [], 'only patchset ids name snapshots');
    const again = await headWorkspace(data, repo.dir, patchset);
    assert.ok(again.ok && existsSync(join(again.value, 'src/new.ts')));
  });

  it(`keeps the ${HEAD_WORKSPACES_KEPT} most recently used and removes older ones`, async () => {
    const made: string[] = [];
    for (let i = 0; i < HEAD_WORKSPACES_KEPT + 2; i++) {
      repo.git('checkout', '-q', 'feature');
      repo.write('src/app.ts', `export const version = ${10 + i};\n`).commit(`c${i}`);
      const ps = await captureBranch(repo);
      repo.git('checkout', '-q', 'main');
      const ws = await headWorkspace(data, repo.dir, ps);
      assert.ok(ws.ok);
      made.push(ws.value);
      // distinct, increasing use times
      const t = new Date(Date.now() - (HEAD_WORKSPACES_KEPT + 2 - i) * 1000);
      utimesSync(ws.value, t, t);
    }
    const left = readdirSync(join(data, 'heads')).filter((n) => !n.endsWith('.head'));
    assert.equal(left.length, HEAD_WORKSPACES_KEPT, `${left.length} left`);
    assert.ok(!existsSync(made[0] as string) && !existsSync(made[1] as string), 'the two oldest were removed');
    assert.ok(existsSync(made.at(-1) as string), 'the newest stays');
    assert.ok(!existsSync(`${made[0]}.head`), 'its record went with it');
  });

  it('prepareLensRun gives CLI seats the snapshot as their directory, HTTP-only runs none; the context folder stays in the checkout', async () => {
    const store = await Store.open(join(data, 'store'), { wasmPath: WASM_PATH });
    try {
      // A CLI seat (never run here) reads its directory; an HTTP seat does not.
      const harness = (kind: string): Harness => ({ kind, origin: 'other', model: null, runTurn: async () => ({ outcome: 'failed', message: 'not run', usage: null }) });
      const assignment = (seat: Harness) => ({ design: null, sequence: seat, decisions: null, noise: null, flagged: { reviewers: [], compiler: null } });
      const deps = { writeContextDir, writeNoiseOffer, prompts: testPrompts, clock: tickingClock(), newGenerationId, headWorkspace };
      const httpOnly = await prepareLensRun({ patchset, sessionId: 's-head', workspace: repo.dir, harnesses: assignment(harness('openai-compatible')), store }, deps);
      assert.equal(httpOnly.input.seatDir, undefined, 'no snapshot is written for seats that never read their directory');
      assert.ok(!existsSync(join(store.dir, 'heads', patchset.id)));
      const prepared = await prepareLensRun({ patchset, sessionId: 's-head', workspace: repo.dir, harnesses: assignment(harness('claude-code')), store }, deps);
      assert.equal(prepared.input.seatDir, join(store.dir, 'heads', patchset.id));
      assert.equal(readFileSync(join(prepared.input.seatDir as string, 'src/app.ts'), 'utf8'), 'export const version = 2;\n');
      assert.equal(prepared.input.workspaceDir, repo.dir);
      assert.ok(existsSync(join(repo.dir, prepared.input.contextDir, 'README.md')));
    } finally {
      store.close();
    }
  });
});
