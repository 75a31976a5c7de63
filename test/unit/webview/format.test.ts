import * as assert from 'node:assert/strict';
import {
  additionsText,
  deletionsText,
  formatKiB,
  headLabel,
  headNote,
  mergeBaseNote,
  openSide,
  shortId,
  stateBadges,
  statusLabel,
  statusTitle,
  targetKindLabel,
  targetLabel,
  totalsParts,
  truncationText,
} from '../../../webview/format';
import { file, patchset } from './fixtures';

describe('webview/format', () => {
  it('shortens commit ids to 12 characters', () => {
    assert.equal(shortId('a1b2c3d4e5f60718293a4b5c6d7e8f9012345678'), 'a1b2c3d4e5f6');
    assert.equal(shortId('abc'), 'abc');
  });

  it('formats sizes in KiB, the unit of the limits', () => {
    assert.equal(formatKiB(1048576), '1024 KiB');
    assert.equal(formatKiB(524288), '512 KiB');
    assert.equal(formatKiB(1536), '1.5 KiB');
    assert.equal(formatKiB(1024), '1 KiB');
  });

  it('names targets as head vs base, or working tree vs base', () => {
    assert.equal(targetLabel({ kind: 'branch', head: 'feat', base: 'main' }), 'feat vs main');
    assert.equal(targetLabel({ kind: 'working-tree', base: 'main' }), 'working tree vs main');
  });

  it("names a request by its forge's word: pull request on GitHub, merge request on GitLab", () => {
    const request = { kind: 'pull-request', host: 'forge.example', owner: 'grp', repo: 'widgets', number: 1 } as const;
    assert.equal(targetKindLabel({ ...request, provider: 'github' }), 'pull request');
    assert.equal(targetKindLabel({ ...request, provider: 'gitlab' }), 'merge request');
    assert.equal(targetKindLabel({ kind: 'branch', head: 'feat', base: 'main' }), 'branch');
    assert.equal(targetKindLabel({ kind: 'working-tree', base: 'main' }), 'working tree');
  });

  it('labels every status in words', () => {
    for (const status of ['added', 'modified', 'deleted', 'renamed'] as const) {
      assert.equal(statusLabel({ status }), status);
    }
    assert.equal(statusTitle({ status: 'renamed', oldPath: 'a.ts', similarity: 92 }), 'renamed from a.ts (92% similar)');
  });

  it('never shows 0 for an unknown line count', () => {
    assert.deepEqual(additionsText(null), { text: '—', title: 'line counts unknown', known: false });
    assert.deepEqual(deletionsText(null), { text: '—', title: 'line counts unknown', known: false });
    assert.equal(additionsText(0).text, '+0');
    assert.equal(additionsText(12).text, '+12');
    assert.equal(deletionsText(3).text, '\u22123');
    assert.equal(additionsText(1).title, '1 line added');
  });

  it('gives no state badges to a plain modification', () => {
    assert.deepEqual(stateBadges(file({ path: 'a.ts' })), []);
  });

  it('states a mode change', () => {
    const badges = stateBadges(file({ path: 'run.sh', modeChanged: true, oldMode: '100644', newMode: '100755' }));
    assert.deepEqual(
      badges.map((b) => [b.kind, b.text]),
      [['mode', 'mode 100644→100755']],
    );
  });

  it('states binary and blocked submodules', () => {
    assert.deepEqual(
      stateBadges(file({ path: 'x.png', binary: true })).map((b) => b.text),
      ['binary'],
    );
    assert.deepEqual(
      stateBadges(file({ path: 'vendor/lib', submodule: true })).map((b) => b.text),
      ['submodule — not reviewed (blocked)'],
    );
  });

  it('states a size truncation with its limit', () => {
    const t = truncationText({
      reason: 'file-size',
      limitBytes: 1048576,
      baseBytes: 2048,
      headBytes: 2000000,
      tailFrom: { base: 1, head: 1 },
    });
    assert.equal(t.text, 'truncated — over 1024 KiB limit');
    assert.match(t.title, /1024 KiB/);
  });

  it('states a patch truncation with the last captured line', () => {
    const t = truncationText({
      reason: 'patch-size',
      limitBytes: 524288,
      baseBytes: null,
      headBytes: null,
      tailFrom: { base: 180, head: 201 },
    });
    assert.equal(t.text, 'truncated after line 200 (patch over limit)');
    assert.match(t.title, /from line 201/);
  });

  it('names the base side when only the base was cut', () => {
    const t = truncationText({
      reason: 'patch-size',
      limitBytes: 524288,
      baseBytes: null,
      headBytes: null,
      tailFrom: { base: 50, head: null },
    });
    assert.equal(t.text, 'truncated after line 49 on the base side (patch over limit)');
  });

  it('does not claim "after line 0"', () => {
    const t = truncationText({
      reason: 'patch-size',
      limitBytes: 524288,
      baseBytes: null,
      headBytes: null,
      tailFrom: { base: null, head: 1 },
    });
    assert.equal(t.text, 'truncated (patch over 512 KiB limit)');
    assert.equal(truncationText(null).text, 'truncated');
  });

  it('orders badges mode, binary, submodule, truncated', () => {
    const badges = stateBadges(
      file({
        path: 'odd',
        modeChanged: true,
        binary: true,
        submodule: true,
        truncated: true,
        truncation: null,
      }),
    );
    assert.deepEqual(
      badges.map((b) => b.kind),
      ['mode', 'binary', 'submodule', 'truncated'],
    );
  });

  it('lists totals, adding the rare counts only when non-zero', () => {
    const plain = totalsParts({
      files: 1,
      additions: 3,
      deletions: 0,
      hunks: 1,
      binary: 0,
      submodules: 0,
      truncated: 0,
      uncounted: 0,
    });
    assert.deepEqual(
      plain.map((p) => p.text),
      ['1 file', '+3', '\u22120', '1 hunk'],
    );
    const all = totalsParts(patchset().totals);
    assert.deepEqual(
      all.map((p) => p.text),
      ['9 files', '+203', '\u221235', '11 hunks', '1 binary', '1 submodule', '2 truncated', '3 uncounted'],
    );
    assert.match(all.find((p) => p.key === 'uncounted')!.title!, /not included/);
  });

  it('explains the merge-base, and when the base moved on', () => {
    const moved = mergeBaseNote(patchset());
    assert.match(moved, /merge-base a1b2c3d4e5f6 of main and feature\/login/);
    assert.match(moved, /now at 0123456789ab/);
    const same = mergeBaseNote(patchset({ baseTip: patchset().base }));
    assert.match(same, /main \(a1b2c3d4e5f6\) is the merge-base/);
  });

  it('says a working-tree head is a recorded commit', () => {
    assert.equal(headNote(patchset()), null);
    assert.match(headNote(patchset({ targetKind: 'working-tree' }))!, /recorded from the working tree of feature\/login, uncommitted/);
  });

  it('names the working tree once, whatever the host put in headRef', () => {
    assert.equal(headLabel({ targetKind: 'branch', headRef: 'feat' }), 'feat');
    assert.equal(headLabel({ targetKind: 'working-tree', headRef: 'feat' }), 'working tree of feat');
    assert.equal(headLabel({ targetKind: 'working-tree', headRef: 'feat (working tree)' }), 'feat (working tree)');
  });

  it('opens deleted files on the base side', () => {
    assert.equal(openSide({ status: 'deleted' }), 'base');
    assert.equal(openSide({ status: 'renamed' }), 'head');
  });
});
