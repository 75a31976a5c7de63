import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freshnessRefs, readFreshness } from '../../../host/forge/freshness';
import { pullRequestRefs, type ForgeEntry, type PullRequestRef } from '../../../protocol/forge';
import { BranchFreshness } from '../../../protocol/gates';
import { tempDir, type TestRepo } from '../../fixtures/gitRepo';
import { forgeFixture } from './fixtures';
import { startFakeForge, type FakeForge } from '../../servers/fakeForge';

/**
 * Freshness (host/forge/freshness.ts) with real git repositories: a clone of a repository the
 * fake forge serves, its branch, its remote-tracking ref and the request's head compared by refs —
 * in sync, behind, ahead, diverged, the forge moved since the last fetch (the head not here, or
 * the tracking ref stale), no local branch, and a review's captured head. git runs asynchronously:
 * the forge serves from this process.
 */

const execFileP = promisify(execFile);
const ENV = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_TERMINAL_PROMPT: '0',
  GIT_AUTHOR_NAME: 'T',
  GIT_AUTHOR_EMAIL: 't@example.com',
  GIT_COMMITTER_NAME: 'T',
  GIT_COMMITTER_EMAIL: 't@example.com',
};
const git = async (cwd: string, ...args: string[]) => (await execFileP('git', args, { cwd, env: ENV, encoding: 'utf8' })).stdout.trim();

describe('forge: freshness of the local copy against the request’s head (real git)', function () {
  this.timeout(60_000);
  let forge: FakeForge;
  let source: TestRepo;
  let scratch: string;
  let registry: ForgeEntry[];
  let n = 0;

  before(async () => {
    source = forgeFixture({ featureNext: true });
    forge = await startFakeForge();
    forge.addUser({ login: 'alice', token: 'alice-token' });
    scratch = tempDir('rennet-freshness-');
    registry = [{ host: `127.0.0.1:${forge.port}`, provider: 'github', apiUrl: forge.githubApiUrl }];
  });
  after(async () => {
    await forge?.close();
    source?.cleanup();
    rmSync(scratch, { recursive: true, force: true });
  });

  /** A served repository with request #1 (feature → main) and a clone of it. */
  async function world() {
    const name = `f${++n}`;
    await forge.createRepo({ provider: 'github', owner: 'acme', name, from: source.dir });
    const pull = await forge.openPullRequest({ provider: 'github', owner: 'acme', name, author: 'alice', head: 'feature', base: 'main', title: 'F' });
    const clone = join(scratch, name);
    await execFileP('git', ['clone', '-q', `${forge.url}/acme/${name}.git`, clone], { env: ENV });
    const target: PullRequestRef = { provider: 'github', host: `127.0.0.1:${forge.port}`, owner: 'acme', repo: name, number: pull.number };
    const read = async (prHead: string) => BranchFreshness.parse(await readFreshness(clone, await freshnessRefs(clone, target, 'feature', registry), prHead));
    return { name, clone, target, head: pull.headSha, read, ref: { owner: 'acme', name, number: pull.number } };
  }
  const commitIn = async (dir: string, file: string) => {
    writeFileSync(join(dir, file), `${file}\n`);
    await git(dir, 'add', file);
    await git(dir, 'commit', '-q', '-m', `add ${file}`);
    return git(dir, 'rev-parse', 'HEAD');
  };

  it('in sync: the branch is the head; no branch but the remote-tracking one at the head: check it out', async () => {
    const w = await world();
    const none = await w.read(w.head);
    assert.deepEqual([none.state, none.action, none.localRef], ['no-local-ref', 'checkout', null]);
    assert.match(none.message, /git switch feature/);
    await git(w.clone, 'switch', '-q', 'feature');
    const synced = await w.read(w.head);
    assert.deepEqual([synced.state, synced.action, synced.localRef, synced.localKind, synced.local, synced.tracking], ['in-sync', 'none', 'refs/heads/feature', 'branch', w.head, w.head]);
    assert.equal(synced.trackingRef, 'refs/remotes/origin/feature');
  });

  it('remote moved: the head is not in this repository (fetch); after a fetch the branch is behind (pull)', async () => {
    const w = await world();
    await git(w.clone, 'switch', '-q', 'feature');
    // A teammate pushes a commit this clone has never seen.
    const other = join(scratch, `${w.name}-other`);
    const url = new URL(forge.url);
    await execFileP('git', ['clone', '-q', '-b', 'feature', `${url.protocol}//alice:alice-token@${url.host}/acme/${w.name}.git`, other], { env: ENV });
    const next = await commitIn(other, 'theirs.txt');
    await git(other, 'push', '-q', 'origin', 'feature');
    const moved = await w.read(next);
    assert.deepEqual([moved.state, moved.action], ['remote-moved', 'fetch']);
    assert.match(moved.message, /not in this repository.*git fetch origin/);
    await git(w.clone, 'fetch', '-q', 'origin');
    const behind = await w.read(next);
    assert.deepEqual([behind.state, behind.action, behind.ahead, behind.behind], ['local-behind', 'pull', 0, 1]);
    assert.match(behind.message, /1 commit behind/);
  });

  it('remote moved: the head is here (fetched under another name) but the remote-tracking ref is stale', async () => {
    const w = await world();
    await git(w.clone, 'switch', '-q', 'feature');
    await git(w.clone, 'fetch', '-q', 'origin', 'feature-next');
    const next = source.head('feature-next');
    await forge.movePullRequestHead({ ...w.ref, sha: next });
    const stale = await w.read(next);
    assert.deepEqual([stale.state, stale.action, stale.tracking], ['remote-moved', 'fetch', w.head]);
    assert.match(stale.message, /origin\/feature is at [0-9a-f]{7}, the request's head is/);
  });

  it('local ahead (push) and diverged (rebase)', async () => {
    const w = await world();
    await git(w.clone, 'switch', '-q', 'feature');
    await commitIn(w.clone, 'mine.txt');
    const ahead = await w.read(w.head);
    assert.deepEqual([ahead.state, ahead.action, ahead.ahead, ahead.behind], ['local-ahead', 'push', 1, 0]);
    assert.match(ahead.message, /git push origin feature/);
    const next = source.head('feature-next');
    await forge.movePullRequestHead({ ...w.ref, sha: next });
    await git(w.clone, 'fetch', '-q', 'origin');
    const diverged = await w.read(next);
    assert.deepEqual([diverged.state, diverged.action, diverged.ahead, diverged.behind], ['diverged', 'rebase', 1, 1]);
  });

  it('a review’s captured head: behind the request’s head → Capture New Head; nothing at all here → fetch', async () => {
    const w = await world();
    const fresh = await w.read(w.head);
    assert.equal(fresh.state, 'no-local-ref');
    // A clone without the request's branch, as a teammate's review leaves it: only the hidden refs.
    await git(w.clone, 'update-ref', '-d', 'refs/remotes/origin/feature');
    assert.deepEqual(await w.read(w.head).then((f) => [f.state, f.action]), ['no-local-ref', 'fetch']);
    await git(w.clone, 'update-ref', pullRequestRefs(w.target).head, w.head);
    const captured = await w.read(w.head);
    assert.deepEqual([captured.state, captured.localKind, captured.action], ['in-sync', 'captured', 'none']);
    const next = source.head('feature-next');
    await forge.movePullRequestHead({ ...w.ref, sha: next });
    await git(w.clone, 'fetch', '-q', 'origin', 'feature-next');
    const behind = await w.read(next);
    assert.deepEqual([behind.state, behind.action], ['local-behind', 'capture-new-head']);
    assert.match(behind.message, /The review read [0-9a-f]{7}, 1 commit behind the request's head [0-9a-f]{7}: Capture New Head/);
  });
});
