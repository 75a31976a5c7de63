import * as assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SUBMIT_FINDINGS, reviewSurface } from '../../../host/pipeline/reviewers';

describe('pipeline/reviewers: the review seat writes only its findings file', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'rennet-reviewers-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('writes the file under a plain findings folder', () => {
    const file = join(root, 'ctx', 'findings', 'claude.md');
    const surface = reviewSurface(file, '.rennet/context/s/findings/claude.md');
    const result = surface.call(SUBMIT_FINDINGS, { findings_markdown: '# Findings\n' });
    assert.equal(result.isError, false, result.text);
    assert.equal(readFileSync(file, 'utf8'), '# Findings\n');
  });

  it('refuses to write through a findings folder the checkout planted as a symlink', () => {
    const elsewhere = join(root, 'elsewhere');
    mkdirSync(elsewhere);
    mkdirSync(join(root, 'ctx'));
    symlinkSync(elsewhere, join(root, 'ctx', 'findings'));
    const surface = reviewSurface(join(root, 'ctx', 'findings', 'claude.md'), '.rennet/context/s/findings/claude.md');
    const result = surface.call(SUBMIT_FINDINGS, { findings_markdown: '# Findings\n' });
    assert.equal(result.isError, true);
    assert.match(result.text, /not a plain directory/);
    assert.deepEqual(readdirSync(elsewhere), [], 'nothing was written through the link');
    assert.equal(surface.submitted, false);
    assert.equal(existsSync(join(elsewhere, 'claude.md')), false);
  });
});
