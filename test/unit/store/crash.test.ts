import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { buildSync } from 'esbuild';
import { targetKey } from '../../../protocol';
import { Store } from '../../../host/store';
import type { DurableStep } from '../../../host/store/durable-db';
import type { ChildConfig } from './child/store-child';
import { WASM_PATH, tempDirs } from './helpers';

/**
 * Real processes, real SIGKILL. The child prints `ack <session> <seq> <i>` only after
 * appendEvent returned, so every printed ack is a write the store acknowledged as durable.
 */

interface Ack {
  sessionId: string;
  seq: number;
  i: number;
  label: string;
}

interface ChildRun {
  acks: Ack[];
  lines: string[];
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

function runChild(bundle: string, config: ChildConfig, killAfterReadyMs?: number): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bundle], {
      env: { ...process.env, RENNET_CHILD: JSON.stringify(config) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const acks: Ack[] = [];
    const lines: string[] = [];
    let stderr = '';
    let pending = '';
    let timer: NodeJS.Timeout | undefined;
    // Safety net: a child that never reaches its crash point is killed anyway.
    const backstop = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      pending += chunk;
      let nl: number;
      while ((nl = pending.indexOf('\n')) !== -1) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        lines.push(line);
        const [word, a, b, c] = line.split(' ');
        if (word === 'ack') acks.push({ sessionId: a ?? '', seq: Number(b), i: Number(c), label: config.label });
        if (word === 'ready' && killAfterReadyMs !== undefined) timer = setTimeout(() => child.kill('SIGKILL'), killAfterReadyMs);
      }
    });
    child.on('error', reject);
    // 'close' comes after exit (the child is reaped) and after stdout is drained.
    child.on('close', (code, signal) => {
      clearTimeout(backstop);
      if (timer) clearTimeout(timer);
      resolve({ acks, lines, code, signal, stderr });
    });
  });
}

/** Every acknowledged event is present with its payload, and each session's seqs are exactly 1..n. */
function verify(store: Store, acks: readonly Ack[], sessionIds: Iterable<string>): Map<string, number> {
  const counts = new Map<string, number>();
  const bySession = new Map<string, Map<number, unknown>>();
  for (const id of sessionIds) {
    const events = store.readEvents(id);
    events.forEach((e, k) => assert.equal(e.seq, k + 1, `session ${id}: seq ${e.seq} at position ${k + 1}`));
    counts.set(id, events.length);
    bySession.set(id, new Map(events.map((e) => [e.seq, e.payload])));
  }
  for (const ack of acks) {
    const payload = bySession.get(ack.sessionId)?.get(ack.seq);
    assert.deepEqual(payload, { label: ack.label, i: ack.i }, `acknowledged event ${ack.sessionId}#${ack.seq} (i=${ack.i}) is missing`);
  }
  return counts;
}

describe('store: kill -9 and concurrent processes', function () {
  this.timeout(90_000);
  const dirs = tempDirs('rennet-crash-');
  let bundle: string;

  before(() => {
    const out = dirs.make();
    bundle = path.join(out, 'store-child.js');
    buildSync({
      entryPoints: [path.join(__dirname, 'child', 'store-child.ts')],
      outfile: bundle,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      logLevel: 'error',
    });
  });
  after(() => dirs.cleanup());

  it('every acknowledged append survives SIGKILL at a random moment (24 kills, with compactions)', async () => {
    const dir = dirs.make();
    const repoRoot = '/repo/kill';
    const label = 'killed';
    const allAcks: Ack[] = [];
    const steps: DurableStep[] = ['before-journal-fsync', 'snapshot-temp-written', 'snapshot-renamed', 'journal-temp-written', 'journal-renamed'];
    let randomKills = 0;
    let stepKills = 0;
    let maxEvents = 0;
    for (let round = 0; round < 24; round++) {
      const config: ChildConfig = {
        dir,
        wasmPath: WASM_PATH,
        compactEvery: [3, 7, 20][round % 3] as number,
        label,
        repoRoot,
        count: 0,
        shared: false,
        verifyEvery: 0,
      };
      // Every third round the child kills itself at a chosen point inside a write or a compaction.
      const step = round % 3 === 2 ? steps[Math.floor(round / 3) % steps.length] : undefined;
      if (step) config.crashAt = { step, nth: 1 + (round % 4) };
      const run = await runChild(bundle, config, step ? undefined : Math.floor(Math.random() * 60));
      assert.equal(run.signal, 'SIGKILL', `round ${round}: child was not killed: code ${run.code} ${run.lines.slice(-3).join(' / ')} ${run.stderr}`);
      if (step) stepKills++;
      else randomKills++;
      allAcks.push(...run.acks);
      if (process.env.CRASH_DEBUG) console.log(`round ${round} step=${step ?? '-'} acks=${run.acks.length} last=${run.acks.at(-1)?.seq}`);

      const store = await Store.open(dir, { wasmPath: WASM_PATH });
      try {
        const session = store.findSession(repoRoot, targetKey({ kind: 'branch', head: label, base: 'main' }));
        if (!session) {
          assert.equal(allAcks.length, 0, 'acknowledged events but no session');
          continue;
        }
        const counts = verify(store, allAcks, [session.id]);
        const n = counts.get(session.id) ?? 0;
        assert.ok(n >= maxEvents, `events went backwards: ${n} < ${maxEvents}`);
        maxEvents = n;
        const leftovers = fs.readdirSync(dir).filter((name) => /\.(tmp|stale)-/.test(name));
        assert.deepEqual(leftovers, [], 'temp files of dead processes are cleaned on open');
      } finally {
        store.close();
      }
    }
    assert.ok(allAcks.length > 0, 'the children acknowledged some writes');
    assert.ok(randomKills >= 16 && stepKills >= 8);
  });

  it('two processes appending to the same directory lose nothing and keep every session contiguous', async () => {
    const dir = dirs.make();
    const repoRoot = '/repo/two';
    const base = { dir, wasmPath: WASM_PATH, compactEvery: 10, repoRoot, count: 160, shared: true, verifyEvery: 10 };
    const [a, b] = await Promise.all([runChild(bundle, { ...base, label: 'alpha' }), runChild(bundle, { ...base, label: 'beta' })]);
    for (const run of [a, b]) {
      assert.equal(run.code, 0, `child failed: ${run.lines.slice(-3).join(' / ')} ${run.stderr}`);
      assert.equal(run.lines.at(-1), 'done');
      assert.equal(run.acks.length, 160);
    }
    const store = await Store.open(dir, { wasmPath: WASM_PATH });
    try {
      const key = (head: string) => targetKey({ kind: 'branch', head, base: 'main' });
      const ids = ['alpha', 'beta', 'shared'].map((head) => {
        const s = store.findSession(repoRoot, key(head));
        assert.ok(s, `session ${head}`);
        return s.id;
      });
      assert.equal(store.listSessions().length, 3, 'the shared session was created once');
      const counts = verify(store, [...a.acks, ...b.acks], ids);
      assert.deepEqual([...counts.values()], [80, 80, 160]);
      // Both processes really interleaved on the shared session.
      const shared = store.readEvents(ids[2] as string).map((e) => (e.payload as { label: string }).label);
      assert.ok(shared.slice(0, 150).includes('alpha') && shared.slice(0, 150).includes('beta'));
    } finally {
      store.close();
    }
  });
});
