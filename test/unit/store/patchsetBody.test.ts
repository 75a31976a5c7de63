import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Store, StoreError, patchsetJsonChunks } from '../../../host/store';
import { JOURNAL_FILE } from '../../../host/store/durable-db';
import type { Patchset } from '../../../protocol';
import { WASM_PATH, fileSize, makePatchset, tempDirs } from './helpers';

describe('store: a patchset body written in chunks', function () {
  this.timeout(20_000);
  const dirs = tempDirs();
  const open: Store[] = [];
  const openStore = async (dir: string) => {
    const store = await Store.open(dir, { wasmPath: WASM_PATH });
    open.push(store);
    return store;
  };
  afterEach(() => {
    for (const s of open.splice(0)) s.close();
  });
  after(() => dirs.cleanup());

  const body = (dir: string, id: string) => path.join(dir, 'patchsets', `${id}.json`);
  const patchsetFiles = (dir: string) => fs.readdirSync(path.join(dir, 'patchsets')).sort();

  describe('patchsetJsonChunks', () => {
    it('joins to exactly JSON.stringify of the patchset, whatever the chunk size', () => {
      const ps = makePatchset('chunks', 40, 5);
      const whole = JSON.stringify(ps);
      for (const size of [1, 100, 4096, 1 << 16, 1 << 24]) {
        const chunks = [...patchsetJsonChunks(ps, size)];
        assert.equal(chunks.join(''), whole, `chunk size ${size}`);
        if (size <= 4096) assert.ok(chunks.length > 10, `${chunks.length} chunks of at most about ${size} characters`);
      }
      assert.deepEqual(JSON.parse([...patchsetJsonChunks(ps)].join('')), ps);
    });

    it('leaves out undefined properties, writes undefined entries as null and keeps key order, as JSON.stringify does', () => {
      const odd = { id: 'ps-odd', extra: undefined, files: [makePatchset('o', 1, 1).files[0], undefined], base: 'b' } as unknown as Patchset;
      assert.equal([...patchsetJsonChunks(odd, 1)].join(''), JSON.stringify(odd));
      const empty = { ...makePatchset('e', 0, 0), files: [] };
      assert.equal([...patchsetJsonChunks(empty)].join(''), JSON.stringify(empty));
    });
  });

  it('beginPatchset: the body is in place and its row journaled only at commit, byte-identical to putPatchset', async () => {
    const dir = dirs.make();
    const store = await openStore(dir);
    const ps = makePatchset('streamed', 30, 4);
    const writer = store.beginPatchset(ps);
    assert.ok(writer);
    const journalBefore = fileSize(path.join(dir, JOURNAL_FILE));
    for (const chunk of patchsetJsonChunks(ps, 512)) writer.write(Buffer.from(chunk, 'utf8'));
    assert.equal(store.hasPatchset(ps.id), false, 'no row before commit');
    assert.ok(!fs.existsSync(body(dir, ps.id)), 'no body under its name before commit');
    assert.equal(fileSize(path.join(dir, JOURNAL_FILE)), journalBefore);
    assert.deepEqual(writer.commit(), { created: true });
    assert.deepEqual(store.getPatchset(ps.id), ps);
    assert.equal(fs.readFileSync(body(dir, ps.id), 'utf8'), JSON.stringify(ps));
    assert.deepEqual(patchsetFiles(dir), [`${ps.id}.json`], 'no temp file left');
    assert.equal(store.beginPatchset(ps), null, 'a stored id needs no body');
    assert.throws(
      () => writer.write('more'),
      (e: unknown) => e instanceof StoreError && /already committed/.test(e.message),
    );
  });

  it('abort leaves nothing; a commit that finds the id stored by another process meanwhile writes no second row', async () => {
    const dir = dirs.make();
    const store = await openStore(dir);
    const other = await openStore(dir);
    const ps = makePatchset('raced', 3, 2);
    const dropped = store.beginPatchset(ps);
    assert.ok(dropped);
    dropped.write('{"partial":');
    dropped.abort();
    assert.deepEqual(patchsetFiles(dir), []);
    assert.equal(store.hasPatchset(ps.id), false);

    const writer = store.beginPatchset(ps);
    assert.ok(writer);
    for (const chunk of patchsetJsonChunks(ps)) writer.write(chunk);
    assert.deepEqual(other.putPatchset(ps), { created: true });
    const seq = other.stats().seq;
    assert.deepEqual(writer.commit(), { created: false });
    assert.equal(store.stats().seq, seq, 'no journal record of its own');
    assert.deepEqual(patchsetFiles(dir), [`${ps.id}.json`]);
    assert.deepEqual(store.getPatchset(ps.id), ps);
  });
});
