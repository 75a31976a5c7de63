import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { measureRound, takeCheckpoint } from '../../host/rounds/checkpoint';
import { evidenceManifest } from '../../host/rounds/evidence';
import { runScriptedWorker } from '../../host/rounds/scriptedWorker';
import type { HarnessConfig } from '../../protocol/review';
import type { Round } from '../../protocol/rounds';
import { AsksCommand, ReviewOpen, RoundsChanged, RoundsDispatch, RoundsList, RoundsOrderGet, RoundsRetry, type RoundsChangedParams } from '../../protocol/rpc';
import { TestRepo } from '../fixtures/gitRepo';
import type { Step } from '../servers/common';
import { startOpenAiServer, type ScriptedOpenAiServer } from '../servers/openai';
import { killAndRestart, startHost, type HostUnderTest } from './hostProcess';

/**
 * Rounds over JSON-RPC against the built host (dist/host.js): the order, a dispatch with the
 * scripted worker, the phases pushed as RoundsChanged, and recovery — the host is killed with
 * SIGKILL while the report seat is mid-turn; a new host settles that round as failed at its phase
 * (retryable), and Retry resumes it from its receipts: the worker is not run again, the report is
 * drafted once more and verified, the round returns.
 */

const config = (server: ScriptedOpenAiServer): HarnessConfig => ({
  default: 'none',
  lenses: { design: 'openai' },
  vscodeLm: {},
  openai: { baseUrl: server.baseUrl, model: 'scripted-model' },
  anthropic: {},
});
const reporter = (body: Record<string, unknown>, raw: string) => (Array.isArray(body.tools) && body.tools.length > 0 && raw.includes('# Rennet: round report') ? 'report' : null);

async function until<T>(read: () => T | Promise<T>, ok: (v: T) => boolean, what: string, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}: ${JSON.stringify(v)?.slice(0, 400)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('rennet/rounds/* over JSON-RPC (built dist/host.js): dispatch, phases, SIGKILL mid-report, Retry', function () {
  this.timeout(180_000);
  let repo: TestRepo;
  let dir: string;
  let host: HostUnderTest | null = null;
  const servers: ScriptedOpenAiServer[] = [];
  const WORKER = { steps: [{ write: { path: 'notes.txt', content: 'one\ntwo\nthree\n' } }, { commit: 'Write the notes' }] };

  before(() => {
    repo = new TestRepo();
    repo.write('notes.txt', 'one\n').write('README.md', '# r\n');
    repo.commit('base');
    repo.branch('feature');
    repo.write('notes.txt', 'one\ntwo\n');
    repo.commit('two');
    dir = mkdtempSync(join(tmpdir(), 'rennet-rounds-host-'));
    writeFileSync(join(dir, 'worker.json'), JSON.stringify(WORKER));
  });
  after(async () => {
    await host?.stop();
    for (const s of servers) await s.close();
    repo.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('dispatches, is killed mid-report, settles as failed at verification on the next host, and Retry returns without running the worker again', async () => {
    // The manifest the round will measure (the same worker on a copy, measured the same way).
    const copy = join(dir, 'oracle');
    cpSync(repo.dir, copy, { recursive: true });
    const b = await takeCheckpoint(copy, 'oracle', 'before');
    assert.ok(b.ok && (await runScriptedWorker(copy, WORKER)).ok);
    const a = await takeCheckpoint(copy, 'oracle', 'after');
    assert.ok(a.ok);
    const measured = await measureRound(copy, b.value.commit, a.value.commit);
    assert.ok(measured.ok);
    const manifest = evidenceManifest(measured.value.files);
    assert.ok(manifest.ok && manifest.value.length === 1);
    const evidenceId = manifest.value[0]!.id;

    const store = join(dir, 'store');
    host = await startHost(store);
    const changes: RoundsChangedParams[] = [];
    host.connection.onNotification(RoundsChanged, (p) => {
      changes.push(p);
    });
    const opened = await host.connection.sendRequest(ReviewOpen, { repo: repo.dir, target: { kind: 'branch', head: 'feature', base: 'main' } });
    assert.ok(opened.ok, opened.ok ? '' : opened.error.message);
    const sessionId = opened.value.snapshot.session.id;
    const patchsetId = opened.value.snapshot.patchset!.id;
    const staged = await host.connection.sendRequest(AsksCommand, {
      sessionId,
      command: {
        type: 'stage',
        anchor: { kind: 'line', patchsetId, path: 'notes.txt', side: 'head', startLine: 2, endLine: 2 },
        text: 'Count on to three.',
        intent: 'request-change',
        lane: 'changes',
      },
    });
    assert.ok(staged.ok, staged.ok ? '' : staged.error.message);
    const askId = staged.value.event.type === 'stage' ? staged.value.event.askId : '';

    const order = await host.connection.sendRequest(RoundsOrderGet, { sessionId });
    assert.ok(order.ok, order.ok ? '' : order.error.message);
    assert.ok(order.value.markdown.includes('> Count on to three.') && order.value.asks[0] === askId && order.value.workspace.root === repo.dir);

    // The report seat reads, then stalls before handing in: the host is killed in that window.
    const slow = await startOpenAiServer(
      { seats: { report: [{ toolCalls: [{ name: 'read_evidence', input: {} }] }, { toolCalls: [{ name: 'submit_report', input: {} }], delayMs: 60_000 } as Step] } },
      { seatOf: reporter },
    );
    servers.push(slow);
    const dispatched = await host.connection.sendRequest(RoundsDispatch, { sessionId, digest: order.value.digest, worker: `scripted:${join(dir, 'worker.json')}`, harness: config(slow) });
    assert.ok(dispatched.ok, dispatched.ok ? '' : dispatched.error.message);
    const roundId = dispatched.value.id;
    await until(
      () => slow.requests.filter((r) => r.seat === 'report').length,
      (n) => n >= 2,
      'the report seat to read the evidence and start its second step',
    );
    const phases = changes.filter((c) => c.round.id === roundId).map((c) => c.round.phase);
    assert.ok(phases.includes('worker') && phases.includes('commit') && phases.at(-1) === 'verification', JSON.stringify(phases));
    const head = repo.git('rev-parse', 'feature');
    assert.equal(repo.git('log', '-1', '--format=%s', 'feature'), 'Write the notes');
    host = await killAndRestart(host, store);
    const listed = await host.connection.sendRequest(RoundsList, { sessionId });
    assert.ok(listed.ok);
    const settled = listed.value.find((r: Round) => r.id === roundId);
    assert.deepEqual([settled?.state, settled?.failure?.phase, settled?.failure?.retryable], ['failed', 'verification', true], JSON.stringify(settled));
    assert.match(settled?.failure?.message ?? '', /host stopped during the verification phase/);

    const truthful = await startOpenAiServer(
      {
        seats: {
          report: [
            { toolCalls: [{ name: 'read_evidence', input: {} }] },
            { toolCalls: [{ name: 'submit_report', input: { outcomes: [{ askId, outcome: 'addressed', evidenceIds: [evidenceId], note: 'The notes count to three.' }], beyond: [] } }] },
            { text: 'Done.' },
          ],
        },
      },
      { seatOf: reporter },
    );
    servers.push(truthful);
    const changes2: RoundsChangedParams[] = [];
    host.connection.onNotification(RoundsChanged, (p) => {
      changes2.push(p);
    });
    const retried = await host.connection.sendRequest(RoundsRetry, { sessionId, roundId, worker: 'scripted:unused', harness: config(truthful) });
    assert.ok(retried.ok, retried.ok ? '' : retried.error.message);
    const ended = await until(
      () => changes2.filter((c) => c.round.id === roundId).at(-1)?.round,
      (r) => r !== undefined && r.state !== 'running',
      'the retried round to end',
    );
    assert.equal(ended?.state, 'returned', JSON.stringify(ended?.failure));
    assert.equal(repo.git('rev-parse', 'feature'), head, 'the worker did not run again');
    assert.deepEqual(
      ended?.report?.outcomes.map((o) => [o.askId, o.outcome, o.evidence[0]?.path, o.evidence[0]?.line]),
      [[askId, 'addressed', 'notes.txt', 3]],
    );
    assert.ok(ended?.generationId, 'the successor generation was started');
    const final = await host.connection.sendRequest(RoundsList, { sessionId });
    assert.ok(final.ok);
    assert.deepEqual(
      final.value.map((r: Round) => [r.ordinal, r.state]),
      [[1, 'returned']],
      'one ledger row: the retry resumed the same round',
    );
  });
});
