import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { baseItems, headItems } from '../../../extension/branchItems';
import { contentSecurityPolicy, escapeHtml, panelHtml } from '../../../extension/html';
import { checkRepoRelativePath, repoRelativePath } from '../../../extension/paths';
import { captureTitle, panelTitle } from '../../../extension/titles';

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

  describe('panel html', () => {
    const html = panelHtml({
      cspSource: 'https://file+.vscode-resource.vscode-cdn.net',
      scriptUri: 'https://file+.vscode-resource.vscode-cdn.net/ext/dist/webview.js',
      nonce: 'n0nce',
      title: 'Rennet · a vs b',
    });

    it('has a strict CSP: nonce scripts and styles, nothing inline or remote', () => {
      const csp = contentSecurityPolicy('https://x', 'n0nce');
      assert.equal(
        csp,
        "default-src 'none'; script-src 'nonce-n0nce'; style-src https://x 'nonce-n0nce'; img-src https://x data:; font-src https://x;",
      );
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
      assert.equal(
        captureTitle({ kind: 'working-tree', base: 'main' }, 'feat'),
        'Rennet: capturing the working tree of feat against main…',
      );
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
