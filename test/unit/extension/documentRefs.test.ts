import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { documentRef, parseBlobUri, type DocumentUri } from '../../../extension/documentRefs';

/** A URI as vscode.Uri.file / vscode.Uri.from build them (scheme, path, query, fsPath). */
const file = (fsPath: string): DocumentUri => ({ scheme: 'file', path: fsPath, query: '', fsPath });
const blob = (p: string, query: string): DocumentUri => ({ scheme: 'rennet-blob', path: `/${p}`, query, fsPath: `/${p}` });

describe('document refs', () => {
  it('a checkout file is a repo-relative path under the repository root, nothing outside it', () => {
    assert.deepEqual(documentRef(file('/r/repo/src/new feature.js'), '/r/repo', path.posix), { kind: 'workspace', path: 'src/new feature.js' });
    assert.deepEqual(documentRef(file('C:\\r\\repo\\src\\app.js'), 'C:\\r\\repo', path.win32), { kind: 'workspace', path: 'src/app.js' });
    for (const outside of ['/r/repo', '/r/other/src/app.js', '/r/repo-2/app.js', '/elsewhere']) {
      assert.equal(documentRef(file(outside), '/r/repo', path.posix), null, outside);
    }
    assert.equal(documentRef(file('D:\\r\\repo\\a.ts'), 'C:\\r\\repo', path.win32), null, 'another drive');
  });

  it('a rennet-blob: document is its capture, path and side; the absent side shows no captured lines', () => {
    assert.deepEqual(documentRef(blob('src/app.js', 'patchset=ps-1&side=head'), '/r/repo'), { kind: 'blob', patchsetId: 'ps-1', path: 'src/app.js', side: 'head' });
    assert.deepEqual(documentRef(blob('docs/old-name.md', 'patchset=ps-1&side=base'), '/r/repo'), { kind: 'blob', patchsetId: 'ps-1', path: 'docs/old-name.md', side: 'base' });
    assert.deepEqual(documentRef(blob('gone.txt', 'patchset=ps-1&side=absent'), '/r/repo'), { kind: 'absent', patchsetId: 'ps-1', path: 'gone.txt' });
  });

  it('malformed blob addresses, escaping blob paths and other schemes show nothing', () => {
    assert.equal(documentRef(blob('src/app.js', 'patchset=ps-1&side=middle'), '/r/repo'), null);
    assert.equal(documentRef(blob('src/app.js', 'side=head'), '/r/repo'), null);
    assert.equal(documentRef(blob('../etc/passwd', 'patchset=ps-1&side=head'), '/r/repo'), null);
    assert.equal(documentRef({ scheme: 'untitled', path: 'Untitled-1', query: '', fsPath: 'Untitled-1' }, '/r/repo'), null);
    assert.equal(parseBlobUri({ scheme: 'file', path: '/r/repo/a.js', query: 'patchset=ps-1&side=head' }), null);
    assert.deepEqual(parseBlobUri(blob('a.js', 'patchset=ps-1&side=absent')), { patchsetId: 'ps-1', path: 'a.js', side: 'absent' });
  });
});
