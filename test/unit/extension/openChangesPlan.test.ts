import * as assert from 'node:assert/strict';
import { changeRow, diffPlan, findChangedFile, type ChangedFile } from '../../../extension/openChangesPlan';

function file(path: string, status: ChangedFile['status'], extra: Partial<ChangedFile> = {}): ChangedFile {
  return { path, oldPath: null, status, binary: false, submodule: false, modeChanged: false, oldMode: '100644', newMode: '100644', additions: 3, deletions: 1, ...extra };
}

describe('open changes plan', () => {
  const renamed = file('docs/new-name.md', 'renamed', { oldPath: 'docs/old-name.md' });
  const files = [file('src/app.ts', 'modified'), renamed, file('src/new feature.js', 'added', { oldMode: null, deletions: 0 })];

  it('finds a changed file by its path or a rename’s old path', () => {
    assert.equal(findChangedFile(files, 'src/app.ts'), files[0]);
    assert.equal(findChangedFile(files, 'docs/old-name.md'), renamed);
    assert.equal(findChangedFile(files, 'docs/new-name.md'), renamed);
    assert.equal(findChangedFile(files, 'README.md'), undefined);
  });

  it('picker rows state status, counts, renames and mode changes', () => {
    assert.deepEqual(changeRow(files[0] as ChangedFile), { label: 'src/app.ts', description: 'modified · +3 −1' });
    assert.deepEqual(changeRow(renamed), { label: 'docs/new-name.md', description: 'renamed from docs/old-name.md · +3 −1' });
    assert.equal(changeRow(file('a.png', 'modified', { binary: true, additions: null, deletions: null })).description, 'modified · binary');
    assert.equal(changeRow(file('run.sh', 'modified', { modeChanged: true, newMode: '100755', additions: 0, deletions: 0 })).description, 'modified · +0 −0 · mode 100644 → 100755');
  });

  it('a modified file compares base ↔ head under its own path', () => {
    assert.deepEqual(diffPlan(files[0] as ChangedFile), {
      kind: 'diff',
      left: { path: 'src/app.ts', side: 'base' },
      right: { path: 'src/app.ts', side: 'head' },
      title: 'app.ts (base ↔ head) · Rennet',
    });
  });

  it('an added file has an empty base, a deleted one an empty head, a rename reads its base by the old path', () => {
    const added = diffPlan(files[2] as ChangedFile);
    assert.ok(added.kind === 'diff');
    assert.deepEqual([added.left, added.right, added.title], [{ path: 'src/new feature.js', side: 'absent' }, { path: 'src/new feature.js', side: 'head' }, 'new feature.js (added) · Rennet']);
    const deleted = diffPlan(file('obsolete.txt', 'deleted'));
    assert.ok(deleted.kind === 'diff');
    assert.deepEqual([deleted.left, deleted.right, deleted.title], [{ path: 'obsolete.txt', side: 'base' }, { path: 'obsolete.txt', side: 'absent' }, 'obsolete.txt (deleted) · Rennet']);
    const moved = diffPlan(renamed);
    assert.ok(moved.kind === 'diff');
    assert.deepEqual(
      [moved.left, moved.right, moved.title],
      [{ path: 'docs/old-name.md', side: 'base' }, { path: 'docs/new-name.md', side: 'head' }, 'old-name.md → new-name.md (base ↔ head) · Rennet'],
    );
  });

  it('binary files and submodules say why there is no diff', () => {
    const binary = diffPlan(file('assets/logo.png', 'modified', { binary: true }));
    assert.deepEqual(binary, { kind: 'no-text', message: 'assets/logo.png is a binary file: Rennet has no text to compare for it.' });
    const sub = diffPlan(file('vendor/lib', 'modified', { submodule: true }));
    assert.equal(sub.kind, 'no-text');
    assert.match(sub.kind === 'no-text' ? sub.message : '', /^vendor\/lib is a submodule/);
  });
});
