import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { capGitWords, landingFor, landingLine, landWorkBranch, recordPushDestination } from '../../../host/rounds/landing';
import { bindWorkspace } from '../../../host/rounds/workspace';
import { LAND_REFUSAL_MAX_CHARS } from '../../../protocol/rounds';
import type { Session } from '../../../protocol/session';
import { SiblingWorld } from '../../fixtures/siblingWorld';

/**
 * Landing a sibling, on real repositories with a bare origin: the line beside the branch in its
 * three states (has not moved; behind the push destination once the sibling's tip reached it;
 * nothing once the branch contains the tip, including after committing on top), and the land —
 * `git merge --ff-only` in the checkout that has the branch out: a fast-forward that carries
 * unrelated uncommitted work along, git's own refusal of a diverged branch and of a merge over a
 * locally edited file (verbatim, nothing changed), and nothing to land under share.
 */
describe('host/rounds/landing: the landing line and the land', function () {
  this.timeout(60_000);
  const worlds: SiblingWorld[] = [];
  after(() => worlds.forEach((w) => w.cleanup()));

  async function sibling(w: SiblingWorld, id = 's-1'): Promise<{ session: Session; root: string }> {
    const session = w.session(id);
    const bound = await bindWorkspace(w.store, session, { dataDir: w.data, now: () => 'now', mode: 'own' });
    assert.ok(bound.ok && bound.value.kind === 'sibling', JSON.stringify(bound));
    return { session, root: bound.value.root };
  }
  const line = async (w: SiblingWorld, s: Session) => {
    const read = await landingFor(w.store, s);
    assert.ok(read.ok, read.ok ? '' : read.error.message);
    return read.value.line;
  };
  const world = () => {
    const w = new SiblingWorld();
    worlds.push(w);
    return w;
  };

  it('words: pure', () => {
    const base = { branch: 'feat/x', workBranch: 'rennet/feat/x' };
    assert.equal(landingLine({ ...base, branchContains: false, destination: null }), "The round's commits are on rennet/feat/x. feat/x has not moved.");
    assert.equal(landingLine({ ...base, branchContains: false, destination: { name: 'origin/feat/x', contains: true, behind: 1 } }), 'feat/x is behind origin/feat/x by 1 commit.');
    assert.equal(landingLine({ ...base, branchContains: false, destination: { name: 'origin/feat/x', contains: true, behind: 3 } }), 'feat/x is behind origin/feat/x by 3 commits.');
    assert.equal(
      landingLine({ ...base, branchContains: false, destination: { name: 'origin/feat/x', contains: false, behind: 2 } }),
      "The round's commits are on rennet/feat/x. feat/x has not moved.",
    );
    assert.equal(landingLine({ ...base, branchContains: true, destination: { name: 'origin/feat/x', contains: true, behind: 2 } }), null);
  });

  it('the three lines as the sibling moves, is pushed, and lands; committing on top of the landing brings none back', async () => {
    const w = world();
    const { session, root } = await sibling(w);
    assert.equal(await line(w, session), null, 'a fresh sibling is the branch’s own head: contained');
    w.commitIn(root, 'a.txt', 'one\ntwo\nthree\n', 'round 1');
    assert.equal(await line(w, session), "The round's commits are on rennet/feature. feature has not moved.");

    // The push a pull request makes: the sibling's commits under the branch's name on origin.
    w.repo.git('push', '-q', 'origin', 'refs/heads/rennet/feature:refs/heads/feature');
    recordPushDestination(w.store, session.id, { remote: 'origin', branch: 'feature', workBranch: 'rennet/feature' }, 'now');
    assert.equal(await line(w, session), 'feature is behind origin/feature by 1 commit.');

    // A later round's commit, not pushed yet: the sibling's tip is not in the destination.
    w.commitIn(root, 'a.txt', 'one\ntwo\nthree\nfour\n', 'round 2');
    assert.equal(await line(w, session), "The round's commits are on rennet/feature. feature has not moved.");
    w.repo.git('push', '-q', 'origin', 'refs/heads/rennet/feature:refs/heads/feature');
    assert.equal(await line(w, session), 'feature is behind origin/feature by 2 commits.');

    const landed = await landWorkBranch(w.store, session);
    assert.ok(landed.ok, landed.ok ? '' : landed.error.message);
    assert.equal(landed.value.landed, true);
    assert.equal(w.repo.head('feature'), w.repo.head('rennet/feature'));
    assert.equal(await line(w, session), null);
    w.repo.write('c.txt', 'mine\n');
    w.repo.commit('on top of the landing');
    assert.notEqual(w.repo.head('feature'), w.repo.head('rennet/feature'));
    assert.equal(await line(w, session), null, 'containment, not equal tips');
  });

  it('land fast-forwards the branch in the checkout that has it out (not the clone root), with unrelated uncommitted work riding along', async () => {
    const w = world();
    // The clone root has main out; the reviewer works on feature in a checkout of their own.
    w.repo.checkout('main');
    const mine = join(w.data, 'mine');
    w.repo.git('worktree', 'add', '--quiet', mine, 'feature');
    const { session, root } = await sibling(w);
    const tip = w.commitIn(root, 'a.txt', 'one\ntwo\nthree\n', 'round 1');
    writeFileSync(join(mine, 'b.txt'), 'bee, edited\n');
    writeFileSync(join(mine, 'notes.txt'), 'untracked\n');
    const mainTip = w.repo.head('main');
    const landed = await landWorkBranch(w.store, session);
    assert.ok(landed.ok, landed.ok ? '' : landed.error.message);
    assert.equal(landed.value.landed, true);
    assert.equal(landed.value.worktree, mine);
    assert.equal(landed.value.to, tip);
    assert.match(landed.value.message, /^feature fast-forwarded to rennet\/feature \(1 commit\)/);
    assert.equal(w.repo.head('feature'), tip);
    assert.equal(readFileSync(join(mine, 'a.txt'), 'utf8'), 'one\ntwo\nthree\n', 'the checkout has the round’s change');
    assert.equal(readFileSync(join(mine, 'b.txt'), 'utf8'), 'bee, edited\n', 'the unrelated edit rode along');
    assert.equal(readFileSync(join(mine, 'notes.txt'), 'utf8'), 'untracked\n');
    assert.equal(w.repo.head('main'), mainTip);
    assert.equal(w.repo.git('rev-parse', '--abbrev-ref', 'HEAD'), 'main', 'the clone root is untouched');
    assert.equal(w.repo.read('a.txt'), 'one\n');
  });

  it('a diverged branch: git’s refusal verbatim, nothing changed', async () => {
    const w = world();
    const { session, root } = await sibling(w);
    w.commitIn(root, 'a.txt', 'one\ntwo\nthree\n', 'round 1');
    w.repo.write('c.txt', 'mine\n');
    const mineTip = w.repo.commit('the reviewer moved on');
    const status = w.repo.git('status', '--porcelain');
    const refused = await landWorkBranch(w.store, session);
    assert.ok(!refused.ok);
    assert.equal(refused.error.code, 'git-failed');
    assert.equal(w.repo.head('feature'), mineTip, 'the branch did not move');
    assert.equal(w.repo.git('status', '--porcelain'), status, 'nor did the checkout');
    // What git says to the same command, run again by hand (it changes nothing, so it says the same).
    let words = '';
    try {
      execFileSync('git', ['merge', '--ff-only', 'rennet/feature'], {
        cwd: w.repo.dir,
        env: { ...process.env, LC_ALL: 'C', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      assert.fail('git fast-forwarded a diverged branch');
    } catch (error) {
      const e = error as { stdout: Buffer; stderr: Buffer };
      words = [e.stdout.toString().trim(), e.stderr.toString().trim()].filter(Boolean).join('\n');
    }
    assert.match(words, /Not possible to fast-forward/);
    assert.equal(refused.error.detail?.git, words);
    assert.ok(refused.error.message.endsWith(`; nothing changed:\n${words}`), refused.error.message);
  });

  it('a merge that would overwrite a locally edited file: git’s refusal verbatim, the edit and the branch untouched', async () => {
    const w = world();
    const { session, root } = await sibling(w);
    w.commitIn(root, 'a.txt', 'one\ntwo\nthree\n', 'round 1');
    const tip = w.repo.head('feature');
    w.repo.write('a.txt', 'one\ntwo\nmy own edit\n');
    const refused = await landWorkBranch(w.store, session);
    assert.ok(!refused.ok);
    assert.match(refused.error.detail?.git ?? '', /Your local changes to the following files would be overwritten by merge:\n\s+a\.txt/);
    assert.equal(w.repo.head('feature'), tip);
    assert.equal(w.repo.read('a.txt'), 'one\ntwo\nmy own edit\n');
    assert.equal(await line(w, session), "The round's commits are on rennet/feature. feature has not moved.", 'the line (and the action) stay');
  });

  it('under share there is nothing to land, and no line', async () => {
    const w = world();
    const session = w.session('s-share');
    const bound = await bindWorkspace(w.store, session, { dataDir: w.data, now: () => 'now', mode: 'share' });
    assert.ok(bound.ok && bound.value.kind === 'share');
    const tip = w.repo.head('feature');
    const land = await landWorkBranch(w.store, session);
    assert.ok(land.ok);
    assert.deepEqual([land.value.landed, land.value.workBranch], [false, null]);
    assert.match(land.value.message, /^Nothing to land: this review's rounds commit on feature itself/);
    assert.equal(w.repo.head('feature'), tip);
    assert.equal(await line(w, session), null);
  });

  it('no checkout has the branch out: refused in words, nothing changed', async () => {
    const w = world();
    const { session, root } = await sibling(w);
    w.commitIn(root, 'a.txt', 'one\ntwo\nthree\n', 'round 1');
    w.repo.checkout('main');
    const tip = w.repo.head('feature');
    const refused = await landWorkBranch(w.store, session);
    assert.ok(!refused.ok);
    assert.match(refused.error.message, /^no checkout has feature out/);
    assert.equal(w.repo.head('feature'), tip);
  });

  it('git’s words are capped with an honest marker', () => {
    const long = 'x'.repeat(LAND_REFUSAL_MAX_CHARS + 42);
    const capped = capGitWords(long);
    assert.equal(capped, `${'x'.repeat(LAND_REFUSAL_MAX_CHARS)}… [git's message cut here: ${LAND_REFUSAL_MAX_CHARS} of its ${LAND_REFUSAL_MAX_CHARS + 42} characters shown]`);
    assert.equal(capGitWords('short'), 'short');
  });
});
