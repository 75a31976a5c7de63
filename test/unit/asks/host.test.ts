import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildSync } from 'esbuild';
import type { AskProjection } from '../../../protocol/asks';
import type { Result } from '../../../protocol/result';
import { AsksChanged, AsksCommand, AsksGet, AsksUndo, type AsksChangedParams } from '../../../protocol/rpc';
import { Store } from '../../../host/store';
import { startHost, type HostUnderTest } from '../../contract/hostProcess';
import { WASM_PATH, tempDirs } from '../store/helpers';

function value<T>(result: Result<T>): T {
  if (!result.ok) assert.fail(`expected ok, got ${result.error.code}: ${result.error.message}`);
  return result.value;
}

/**
 * The four ask messages over real JSON-RPC: host/main.ts bundled into a temp directory (with
 * sql-wasm.wasm beside it, as in dist/) and spawned over stdio.
 */
describe('asks: rennet/asks/* through the host process', function () {
  this.timeout(60_000);
  const dirs = tempDirs('rennet-asks-host-');
  let bundle: string;

  before(() => {
    const out = dirs.make();
    bundle = path.join(out, 'host.js');
    buildSync({
      entryPoints: [path.join(__dirname, '..', '..', '..', 'host', 'main.ts')],
      outfile: bundle,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      logLevel: 'error',
      define: { __RENNET_VERSION__: JSON.stringify('0.0.0-test') },
    });
    fs.copyFileSync(WASM_PATH, path.join(out, 'sql-wasm.wasm'));
  });
  after(() => dirs.cleanup());

  it('command, changed, undo and get; a restarted host reads the same projection', async () => {
    const storeDir = dirs.make();
    const seed = await Store.open(storeDir, { wasmPath: WASM_PATH });
    const sessionId = seed.getOrCreateSession({ repoRoot: '/repo/host', target: { kind: 'branch', head: 'topic', base: 'main' }, now: '2026-03-01T00:00:00.000Z' }).session.id;
    seed.close();

    let host: HostUnderTest | undefined = await startHost(storeDir, bundle);
    let after: AskProjection;
    try {
      const pushed: AsksChangedParams[] = [];
      host.connection.onNotification(AsksChanged, (change: AsksChangedParams) => {
        pushed.push(change);
      });
      const staged = value(
        await host.connection.sendRequest(AsksCommand, {
          sessionId,
          command: {
            type: 'stage',
            anchor: { kind: 'line', patchsetId: 'ps-1', path: 'src/a.ts', side: 'head', startLine: 2, endLine: 5 },
            text: 'Handle the empty list',
            intent: 'request-change',
            lane: 'post-review',
          },
        }),
      );
      assert.equal(staged.seq, 1);
      assert.equal(staged.projection.counts.staged, 1);
      const refused = await host.connection.sendRequest(AsksCommand, { sessionId, command: { type: 'restore', askId: staged.projection.asks[0]?.id ?? '' } });
      assert.equal(refused.ok ? 'ok' : refused.error.detail?.refusal, 'not-retired');
      const verdict = value(await host.connection.sendRequest(AsksCommand, { sessionId, command: { type: 'setVerdictOverride', verdict: 'comment' } }));
      const undone = value(await host.connection.sendRequest(AsksUndo, { sessionId, receipt: verdict.receipt }));
      assert.equal(undone.seq, 3);
      assert.deepEqual(undone.projection, staged.projection);
      after = value(await host.connection.sendRequest(AsksGet, { sessionId }));
      assert.deepEqual(after, undone.projection);
      const unknown = await host.connection.sendRequest(AsksGet, { sessionId: 's-missing' });
      assert.equal(unknown.ok ? 'ok' : unknown.error.code, 'not-found');
      // One push per append (the refusal pushed nothing), each with the projection after it.
      for (let i = 0; i < 50 && pushed.length < 3; i++) await new Promise((r) => setTimeout(r, 20));
      assert.deepEqual(
        pushed.map((p) => p.seq),
        [1, 2, 3],
      );
      assert.deepEqual(pushed[2]?.projection, after);
    } finally {
      await host.stop();
      host = undefined;
    }

    const restarted = await startHost(storeDir, bundle);
    try {
      assert.deepEqual(value(await restarted.connection.sendRequest(AsksGet, { sessionId })), after);
    } finally {
      await restarted.stop();
    }
  });
});
