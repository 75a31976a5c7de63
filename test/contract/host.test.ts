import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import type { SessionSnapshot } from '../../protocol/session';
import { HostHello, PatchsetGet, PatchsetReadBlob, RepoListBranches, ReviewOpen, SessionChanged, SessionGet, SessionList } from '../../protocol/rpc';
import { TestRepo, tempDir } from '../fixtures/gitRepo';
import { killAndRestart, startHost, type HostUnderTest } from './hostProcess';

/** Speaks JSON-RPC to the built host process exactly as the extension does (typed constants). */
describe('host JSON-RPC contract (built dist/host.js)', function () {
  this.timeout(60_000);
  let repo: TestRepo;
  let storeDir: string;
  let host: HostUnderTest | undefined;

  beforeEach(() => {
    repo = new TestRepo();
    repo.write('src/a.ts', 'export const a = 1;\n').write('old.txt', 'old\n').commit('base');
    repo.branch('feature').write('src/a.ts', 'export const a = 2;\n').remove('old.txt').write('src/b.ts', 'export {};\n').commit('change');
    storeDir = tempDir('rennet-store-');
  });
  afterEach(async () => {
    await host?.stop();
    host = undefined;
    repo.cleanup();
    rmSync(storeDir, { recursive: true, force: true });
  });

  it('answers hello, lists branches and opens a review with a full snapshot', async () => {
    host = await startHost(storeDir);
    const hello = await host.connection.sendRequest(HostHello, {});
    assert.equal(hello.storeDir, storeDir);
    assert.equal(hello.sessions, 0);
    assert.ok(hello.storeSchema >= 1);

    const branches = await host.connection.sendRequest(RepoListBranches, { repo: repo.dir });
    assert.ok(branches.ok);
    assert.deepEqual(branches.value.branches, ['feature', 'main']);
    assert.equal(branches.value.current, 'feature');
    assert.equal(branches.value.defaultBase, 'main');

    const changed = new Promise<SessionSnapshot>((resolve) => host!.connection.onNotification(SessionChanged, resolve));
    const opened = await host.connection.sendRequest(ReviewOpen, { repo: repo.dir, target: { kind: 'branch', head: 'feature', base: 'main' } });
    assert.ok(opened.ok, opened.ok ? '' : opened.error.message);
    assert.equal(opened.value.reattached, false);
    assert.equal(opened.value.captured, true);
    const { session, patchset } = opened.value.snapshot;
    assert.ok(patchset);
    assert.equal(patchset.head, repo.head('feature'));
    assert.equal(patchset.base, repo.head('main'));
    assert.deepEqual(
      patchset.files.map((f) => `${f.status}:${f.path}`),
      ['deleted:old.txt', 'modified:src/a.ts', 'added:src/b.ts'],
    );
    assert.equal((await changed).session.id, session.id);

    const again = await host.connection.sendRequest(ReviewOpen, { repo: repo.dir, target: { kind: 'branch', head: 'feature', base: 'main' } });
    assert.ok(again.ok);
    assert.equal(again.value.reattached, true);
    assert.equal(again.value.captured, false, 'the same range stores nothing new');
    assert.equal(again.value.snapshot.session.id, session.id);

    const full = await host.connection.sendRequest(PatchsetGet, { patchsetId: patchset.id });
    assert.ok(full.ok);
    assert.equal(full.value.files[1]!.hunks[0]!.lines.find((l) => l.kind === 'add')!.text, 'export const a = 2;');
    const blob = await host.connection.sendRequest(PatchsetReadBlob, { patchsetId: patchset.id, path: 'src/a.ts', side: 'base' });
    assert.ok(blob.ok);
    assert.equal(blob.value.text, 'export const a = 1;\n');
    const refusedPath = await host.connection.sendRequest(PatchsetReadBlob, { patchsetId: patchset.id, path: '/etc/passwd', side: 'head' });
    assert.ok(!refusedPath.ok);
    assert.equal(refusedPath.error.code, 'invalid-path');
  });

  it('refuses bad input with a typed error and writes nothing', async () => {
    host = await startHost(storeDir);
    const unknown = await host.connection.sendRequest(ReviewOpen, { repo: repo.dir, target: { kind: 'branch', head: 'nope', base: 'main' } });
    assert.ok(!unknown.ok);
    assert.equal(unknown.error.code, 'unknown-ref');
    const notRepo = await host.connection.sendRequest(ReviewOpen, { repo: storeDir, target: { kind: 'branch', head: 'feature', base: 'main' } });
    assert.ok(!notRepo.ok);
    assert.equal(notRepo.error.code, 'not-a-repository');
    const empty = await host.connection.sendRequest(ReviewOpen, { repo: repo.dir, target: { kind: 'branch', head: 'main', base: 'main' } });
    assert.ok(!empty.ok);
    assert.equal(empty.error.code, 'empty-change');
    const malformed = await host.connection.sendRequest(ReviewOpen, { repo: repo.dir, target: { kind: 'branch', head: '', base: 'main' } as never });
    assert.ok(!malformed.ok);
    assert.equal(malformed.error.code, 'invalid-request');
    assert.deepEqual(await host.connection.sendRequest(SessionList, {}), [], 'no session was created by refused requests');
  });

  it('reads state back from the store after the host is killed', async () => {
    host = await startHost(storeDir);
    const opened = await host.connection.sendRequest(ReviewOpen, { repo: repo.dir, target: { kind: 'branch', head: 'feature', base: 'main' } });
    assert.ok(opened.ok);
    host = await killAndRestart(host, storeDir);
    const hello = await host.connection.sendRequest(HostHello, {});
    assert.equal(hello.sessions, 1);
    const snapshot = await host.connection.sendRequest(SessionGet, { sessionId: opened.value.snapshot.session.id });
    assert.ok(snapshot.ok);
    assert.deepEqual(snapshot.value, opened.value.snapshot);
  });
});
