import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HarnessConfig } from '../../protocol/review';
import { AsksCommand, ReviewOpen, RoundsChanged, RoundsDispatch, RoundsLand, RoundsLandingGet, RoundsOrderGet, SessionArchive, type RoundsChangedParams } from '../../protocol/rpc';
import { TestRepo } from '../fixtures/gitRepo';
import { startHost, type HostUnderTest } from './hostProcess';

/**
 * The workspace setting, the landing line, Land and Archive over JSON-RPC against the built host
 * (dist/host.js): the order read with `workspace: own` names the sibling; the dispatch binds it and
 * the scripted worker commits there (no report harness: the round stops after its successor, which
 * is all this needs); `rennet/rounds/landing` says feature has not moved; `rennet/rounds/land`
 * fast-forwards it and the line is gone; `rennet/session/archive` collects the sibling.
 */
describe('rennet/rounds/land, rennet/rounds/landing, rennet/session/archive over JSON-RPC (built dist/host.js)', function () {
  this.timeout(120_000);
  let repo: TestRepo;
  let dir: string;
  let host: HostUnderTest | null = null;
  const none: HarnessConfig = { default: 'none', lenses: {}, vscodeLm: {}, openai: {}, anthropic: {} };

  before(() => {
    repo = new TestRepo();
    repo.write('notes.txt', 'one\n');
    repo.commit('base');
    repo.branch('feature');
    repo.write('notes.txt', 'one\ntwo\n');
    repo.commit('two');
    dir = mkdtempSync(join(tmpdir(), 'rennet-land-host-'));
    writeFileSync(join(dir, 'worker.json'), JSON.stringify({ steps: [{ write: { path: 'notes.txt', content: 'one\ntwo\nthree\n' } }, { commit: 'three' }] }));
  });
  after(async () => {
    await host?.stop();
    repo.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('own binds a sibling; the line, the land and the archive', async () => {
    host = await startHost(join(dir, 'store'));
    const ended = new Promise<RoundsChangedParams>((resolve) =>
      host!.connection.onNotification(RoundsChanged, (p: RoundsChangedParams) => {
        if (p.round.state !== 'running') resolve(p);
      }),
    );
    const opened = await host.connection.sendRequest(ReviewOpen, { repo: repo.dir, target: { kind: 'branch', head: 'feature', base: 'main' } });
    assert.ok(opened.ok, opened.ok ? '' : opened.error.message);
    const sessionId = opened.value.snapshot.session.id;
    const staged = await host.connection.sendRequest(AsksCommand, {
      sessionId,
      command: {
        type: 'stage',
        anchor: { kind: 'line', patchsetId: opened.value.snapshot.patchset!.id, path: 'notes.txt', side: 'head', startLine: 2, endLine: 2 },
        text: 'Count on to three.',
        intent: 'request-change',
        lane: 'changes',
      },
    });
    assert.ok(staged.ok);

    const shared = await host.connection.sendRequest(RoundsOrderGet, { sessionId });
    assert.ok(shared.ok && shared.value.workspace.root === repo.dir && shared.value.workspace.workBranch === undefined, JSON.stringify(shared));
    const order = await host.connection.sendRequest(RoundsOrderGet, { sessionId, workspace: 'own' });
    assert.ok(order.ok, order.ok ? '' : order.error.message);
    assert.equal(order.value.workspace.workBranch, 'rennet/feature');
    const place = order.value.workspace.root;
    assert.ok(!existsSync(place), 'reading the order makes nothing');

    const featureTip = repo.head('feature');
    const dispatched = await host.connection.sendRequest(RoundsDispatch, { sessionId, digest: order.value.digest, worker: `scripted:${join(dir, 'worker.json')}`, harness: none, workspace: 'own' });
    assert.ok(dispatched.ok, dispatched.ok ? '' : dispatched.error.message);
    const end = await ended;
    assert.equal(end.round.failure?.phase, 'report', JSON.stringify(end.round.failure));
    assert.equal(repo.head('rennet/feature'), end.round.range?.to);
    assert.equal(repo.head('feature'), featureTip);

    const line = async () => {
      const read = await host!.connection.sendRequest(RoundsLandingGet, { sessionId });
      assert.ok(read.ok, read.ok ? '' : read.error.message);
      return read.value.line;
    };
    assert.equal(await line(), "The round's commits are on rennet/feature. feature has not moved.");
    const landed = await host.connection.sendRequest(RoundsLand, { sessionId });
    assert.ok(landed.ok, landed.ok ? '' : landed.error.message);
    assert.deepEqual([landed.value.landed, landed.value.to], [true, end.round.range?.to]);
    assert.equal(repo.head('feature'), end.round.range?.to);
    assert.equal(await line(), null);
    const bad = await host.connection.sendRequest(RoundsLand, { sessionId: '' } as { sessionId: string });
    assert.ok(!bad.ok && bad.error.code === 'invalid-request', 'params are checked against their schema');

    const archived = await host.connection.sendRequest(SessionArchive, { sessionId });
    assert.ok(archived.ok, archived.ok ? '' : archived.error.message);
    assert.equal(archived.value.collection.outcome, 'collected');
    assert.ok(!existsSync(place));
  });
});
