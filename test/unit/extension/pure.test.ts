import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { baseItems, headItems } from '../../../extension/branchItems';
import { contentSecurityPolicy, escapeHtml, panelHtml } from '../../../extension/html';
import { checkRepoRelativePath, repoRelativePath, resolvesInsideRepo } from '../../../extension/paths';
import { captureTitle, panelTitle } from '../../../extension/titles';
import { TestRepo } from '../../fixtures/gitRepo';

describe('extension (pure parts)', () => {
  describe('checkRepoRelativePath', () => {
    it('accepts plain repo-relative paths', () => {
      assert.deepEqual(checkRepoRelativePath('src/app.ts'), { ok: true, segments: ['src', 'app.ts'] });
      assert.deepEqual(checkRepoRelativePath('README.md'), { ok: true, segments: ['README.md'] });
      assert.equal(checkRepoRelativePath('a/..b/c..').ok, true);
    });

    it('refuses absolute, escaping and odd paths', () => {
      for (const bad of ['', '/etc/passwd', '\\\\server\\share', 'C:/x', 'c:\\x', '../x', 'a/../../x', 'a\\..\\x', 'a//b', './a', 'a/\0b']) {
        assert.equal(checkRepoRelativePath(bad).ok, false, JSON.stringify(bad));
      }
    });
  });

  describe('repoRelativePath', () => {
    it('answers git paths under the repository and null outside it', () => {
      assert.equal(repoRelativePath('/r/repo', '/r/repo/src/new feature.js', path.posix), 'src/new feature.js');
      assert.equal(repoRelativePath('/r/repo', '/r/repo/..hidden/a.js', path.posix), '..hidden/a.js', 'a name starting with two dots stays inside');
      assert.equal(repoRelativePath('/r/repo', '/r/other/x.js', path.posix), null);
      assert.equal(repoRelativePath('/r/repo', '/r/repo', path.posix), null);
      assert.equal(repoRelativePath('C:\\r\\repo', 'C:\\r\\repo\\src\\a.ts', path.win32), 'src/a.ts');
      assert.equal(repoRelativePath('C:\\r\\repo', 'D:\\r\\repo\\a.ts', path.win32), null);
    });
  });

  describe('resolvesInsideRepo (the board opens a workspace file only inside the repository)', () => {
    let repo: TestRepo;
    let outside: string;
    before(() => {
      outside = mkdtempSync(path.join(tmpdir(), 'rennet-outside-'));
      writeFileSync(path.join(outside, 'secret.txt'), 'not the repository\n');
      repo = new TestRepo();
      repo.write('src/app.js', 'app\n');
      // Committed symlinks: to a file outside, to a folder outside, to a file inside, and dangling.
      symlinkSync(path.join(outside, 'secret.txt'), path.join(repo.dir, 'escape.txt'));
      symlinkSync(outside, path.join(repo.dir, 'elsewhere'));
      symlinkSync('src/app.js', path.join(repo.dir, 'alias.js'));
      symlinkSync('../../nowhere', path.join(repo.dir, 'dangling'));
      repo.git('add', '-A');
      repo.commit('symlinks');
    });
    after(() => {
      repo.cleanup();
      rmSync(outside, { recursive: true, force: true });
    });

    it('the fixture commits its links as symlinks (mode 120000)', () => {
      const modes = repo
        .git('ls-files', '-s', 'escape.txt', 'elsewhere', 'alias.js', 'dangling')
        .split('\n')
        .map((l) => `${l.split(' ')[0]} ${l.split('\t')[1]}`);
      assert.deepEqual(modes.sort(), ['120000 alias.js', '120000 dangling', '120000 elsewhere', '120000 escape.txt']);
    });

    it('a file of the repository, or a symlink to one, resolves inside', async () => {
      assert.equal(await resolvesInsideRepo(repo.dir, ['src', 'app.js']), true);
      assert.equal(await resolvesInsideRepo(repo.dir, ['alias.js']), true);
    });

    it('a committed symlink to a file or a folder outside, a dangling one, a missing file and the root itself do not', async () => {
      assert.equal(await resolvesInsideRepo(repo.dir, ['escape.txt']), false);
      assert.equal(await resolvesInsideRepo(repo.dir, ['elsewhere', 'secret.txt']), false);
      assert.equal(await resolvesInsideRepo(repo.dir, ['dangling']), false);
      assert.equal(await resolvesInsideRepo(repo.dir, ['missing.txt']), false);
      assert.equal(await resolvesInsideRepo(repo.dir, []), false);
    });

    it('a repository reached through a symlinked path still holds its own files', async () => {
      const link = path.join(outside, 'repo-link');
      symlinkSync(repo.dir, link);
      assert.equal(await resolvesInsideRepo(link, ['src', 'app.js']), true);
      assert.equal(await resolvesInsideRepo(link, ['escape.txt']), false);
    });
  });

  describe('panel html', () => {
    const html = panelHtml({
      cspSource: 'https://file+.vscode-resource.vscode-cdn.net',
      scriptUri: 'https://file+.vscode-resource.vscode-cdn.net/ext/dist/webview.js',
      nonce: 'n0nce',
      title: 'Rennet · a vs b',
    });

    it('has a strict CSP: nonce scripts and styles, nothing inline or remote', () => {
      const csp = contentSecurityPolicy('https://x', 'n0nce');
      assert.equal(csp, "default-src 'none'; script-src 'nonce-n0nce'; style-src https://x 'nonce-n0nce'; img-src https://x data:; font-src https://x;");
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*/);
      assert.ok(html.includes(`content="${escapeHtml(contentSecurityPolicy('https://file+.vscode-resource.vscode-cdn.net', 'n0nce'))}"`));
    });

    it('loads the bundle with the nonce, and hands FAST the nonce', () => {
      assert.match(html, /<script nonce="n0nce" src="https:\/\/file\+\.vscode-resource\.vscode-cdn\.net\/ext\/dist\/webview\.js"><\/script>/);
      assert.match(html, /<meta property="csp-nonce" content="n0nce">/);
      assert.equal((html.match(/<script/g) ?? []).length, 1);
      assert.doesNotMatch(html, /style="/);
    });

    it('escapes the title', () => {
      const evil = panelHtml({ cspSource: 'x', scriptUri: 'y', nonce: 'n', title: '<img src=x onerror=alert(1)>' });
      assert.doesNotMatch(evil, /<img/);
    });

    it('names the root the bundle mounts: the board by default, the review preview when asked (same CSP, same one script)', () => {
      assert.match(html, /<div id="root" data-testid="rennet-root" data-view="board">/);
      const preview = panelHtml({ cspSource: 'https://x', scriptUri: 'https://x/dist/webview.js', nonce: 'n0nce', title: 'Post review', view: 'review-preview' });
      assert.match(preview, /<div id="root" data-testid="rennet-root" data-view="review-preview">/);
      assert.ok(preview.includes(`content="${escapeHtml(contentSecurityPolicy('https://x', 'n0nce'))}"`));
      assert.equal((preview.match(/<script/g) ?? []).length, 1);
    });
  });

  describe('titles', () => {
    it('names panels by target', () => {
      assert.equal(panelTitle({ kind: 'branch', head: 'feat', base: 'main' }), 'Rennet · feat vs main');
      assert.equal(panelTitle({ kind: 'working-tree', base: 'main' }), 'Rennet · working tree vs main');
      assert.equal(captureTitle({ kind: 'branch', head: 'feat', base: 'main' }), 'Rennet: capturing feat against main…');
      assert.equal(captureTitle({ kind: 'working-tree', base: 'main' }, 'feat'), 'Rennet: capturing the working tree of feat against main…');
    });
  });

  describe('branch picker items', () => {
    const list = { repoRoot: '/r', current: 'feat', branches: ['feat', 'main', 'dev'], defaultBase: 'main' };

    it('puts the current branch first, marked current', () => {
      assert.deepEqual(
        headItems({ ...list, branches: ['main', 'feat', 'dev'] }).map((i) => [i.ref, i.description]),
        [
          ['feat', 'current'],
          ['main', undefined],
          ['dev', undefined],
        ],
      );
      assert.deepEqual(
        headItems({ ...list, current: null }).map((i) => i.ref),
        ['feat', 'main', 'dev'],
      );
    });

    it('puts the default base first, marked default, and never offers the head', () => {
      assert.deepEqual(
        baseItems(list, 'feat').map((i) => [i.ref, i.description]),
        [
          ['main', 'default'],
          ['dev', undefined],
        ],
      );
      assert.deepEqual(
        baseItems(list, 'main').map((i) => [i.ref, i.description]),
        [
          ['feat', 'current'],
          ['dev', undefined],
        ],
      );
      assert.deepEqual(
        baseItems({ ...list, defaultBase: null }, 'dev').map((i) => i.ref),
        ['feat', 'main'],
      );
    });
  });
});
