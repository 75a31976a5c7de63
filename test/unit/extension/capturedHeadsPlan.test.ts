import * as assert from 'node:assert/strict';
import { readCapturedBlob } from '../../../host/capture/blob';
import { capturePatchset } from '../../../host/capture/capture';
import { openRepo } from '../../../host/capture/repo';
import { BLOB_READ_MAX_BYTES } from '../../../protocol/limits';
import type { Patchset } from '../../../protocol/patchset';
import type { BlobContent } from '../../../protocol/rpc';
import { capturedLineCount, readAgainstCaptured, sameReading, type HeadReading } from '../../../extension/capturedHeadsPlan';
import { TestRepo } from '../../fixtures/gitRepo';

const lines = (prefix: string, n: number, edit: Record<number, string> = {}) => Array.from({ length: n }, (_, i) => edit[i + 1] ?? `${prefix} line ${i + 1}`).join('\n') + '\n';

/** Lines of 100 bytes, enough of them that the head is cut at BLOB_READ_MAX_BYTES. */
const LONG_LINE = 100;
const longFile = (edit: Record<number, string> = {}) =>
  Array.from({ length: Math.ceil(BLOB_READ_MAX_BYTES / LONG_LINE) + 50 }, (_, i) => (edit[i + 1] ?? `long ${i + 1}`).padEnd(LONG_LINE - 1, '.')).join('\n') + '\n';

describe('captured heads (pure)', () => {
  let repo: TestRepo;
  let ps: Patchset;
  const app = lines('app', 30, { 5: 'app line 5 (changed)' });
  const bom = `\uFEFF${lines('bom', 4, { 2: 'bom line 2 (changed)' })}`;
  const long = longFile({ 3: 'long 3 (changed)' });

  async function head(path: string): Promise<BlobContent> {
    const blob = await readCapturedBlob(repo.dir, ps, path, 'head');
    assert.ok(blob.ok, blob.ok ? '' : blob.error.message);
    return blob.value;
  }

  before(async () => {
    repo = new TestRepo();
    repo.write('src/app.js', lines('app', 30));
    repo.write('bom.txt', `\uFEFF${lines('bom', 4)}`);
    repo.write('long.txt', longFile());
    repo.write('logo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]));
    repo.commit('initial');
    repo.branch('feature');
    repo.write('src/app.js', app);
    repo.write('bom.txt', bom);
    repo.write('long.txt', long);
    repo.write('logo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 9, 9, 9]));
    repo.commit('feature');
    const handle = await openRepo(repo.dir);
    assert.ok(handle.ok);
    const captured = await capturePatchset(handle.value, { kind: 'branch', head: 'feature', base: 'main' });
    assert.ok(captured.ok, captured.ok ? '' : captured.error.message);
    ps = captured.value;
  });

  after(() => repo.cleanup());

  it('a checkout file reads as its captured head whatever its line endings, and not after an edit', async () => {
    const blob = await head('src/app.js');
    assert.deepEqual(readAgainstCaptured(app, blob), { kind: 'captured' });
    assert.deepEqual(readAgainstCaptured(app.replace(/\n/g, '\r\n'), blob), { kind: 'captured' }, 'CRLF checkout of an LF capture');
    assert.deepEqual(readAgainstCaptured(app, { ...blob, text: app.replace(/\n/g, '\r') }), { kind: 'captured' }, 'CR capture');
    assert.deepEqual(readAgainstCaptured(`// new first line\n${app}`, blob), { kind: 'changed' });
    assert.deepEqual(readAgainstCaptured(app.replace('app line 7', 'app line seven'), blob), { kind: 'changed' });
  });

  it('a UTF-8 BOM of the captured head is not editor text', async () => {
    const blob = await head('bom.txt');
    assert.ok(blob.text?.startsWith('\uFEFF'), 'the host keeps the BOM');
    assert.deepEqual(readAgainstCaptured(bom.slice(1), blob), { kind: 'captured' }, 'the editor’s text');
    assert.deepEqual(readAgainstCaptured(bom, blob), { kind: 'captured' }, 'the file as decoded from disk');
    assert.deepEqual(readAgainstCaptured(bom.replace('bom line 3', 'bom line three'), blob), { kind: 'changed' });
  });

  it('a truncated head vouches for the whole lines of its captured start, when the document starts with them', async () => {
    const blob = await head('long.txt');
    assert.equal(blob.truncated, true);
    const wholeLines = Math.floor(BLOB_READ_MAX_BYTES / LONG_LINE);
    assert.deepEqual(readAgainstCaptured(long, blob), { kind: 'captured-prefix', lines: wholeLines });
    // An edit inside the captured start: lines may have moved, exactly as for a whole head.
    assert.deepEqual(readAgainstCaptured(long.replace('long 3 (changed)', 'long 3 (edited)'), blob), { kind: 'changed' });
    assert.deepEqual(readAgainstCaptured('anything\n', { text: 'no whole line', truncated: true }), { kind: 'captured-prefix', lines: 0 });
  });

  it('a binary head has no lines to compare', async () => {
    const blob = await head('logo.png');
    assert.equal(blob.text, null);
    assert.deepEqual(readAgainstCaptured('\u0089PNG', blob), { kind: 'binary' });
  });

  it('capturedLineCount: every line, a prefix, none, or unknown', () => {
    const cases: Array<[HeadReading, number | null]> = [
      [{ kind: 'captured' }, Number.POSITIVE_INFINITY],
      [{ kind: 'captured-prefix', lines: 12 }, 12],
      [{ kind: 'changed' }, 0],
      [{ kind: 'binary' }, null],
      [{ kind: 'unreadable', message: 'host down' }, null],
    ];
    for (const [reading, count] of cases) assert.equal(capturedLineCount(reading), count, reading.kind);
  });

  it('sameReading tells a changed answer from a repeated one', () => {
    assert.equal(sameReading({ kind: 'captured' }, { kind: 'captured' }), true);
    assert.equal(sameReading({ kind: 'captured-prefix', lines: 2 }, { kind: 'captured-prefix', lines: 2 }), true);
    assert.equal(sameReading({ kind: 'captured-prefix', lines: 2 }, { kind: 'captured-prefix', lines: 3 }), false);
    assert.equal(sameReading({ kind: 'captured' }, { kind: 'changed' }), false);
    assert.equal(sameReading(undefined, { kind: 'changed' }), false);
    assert.equal(sameReading(undefined, undefined), true);
  });
});
