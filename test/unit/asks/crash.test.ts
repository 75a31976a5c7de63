import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import { buildSync } from 'esbuild';
import { targetKey } from '../../../protocol';
import { AskLog, decodeAskEvent } from '../../../host/asks/log';
import { Store } from '../../../host/store';
import { WASM_PATH, tempDirs } from '../store/helpers';
import type { AskChildConfig } from './child/ask-child';

/**
 * Real processes, real SIGKILL (the pattern of test/unit/store/crash.test.ts). The child runs ask
 * commands in a loop and prints an ack only after a command returned; after every kill the
 * store is reopened and every acknowledged command must be in the folded projection.
 */

interface ChildRun {
  lines: string[];
  signal: NodeJS.Signals | null;
  code: number | null;
  stderr: string;
}

/**
 * Runs the child and SIGKILLs it `killAfterMs` after its `killAfterAcks`-th acknowledged command:
 * a random moment inside the stream of writes, however slowly a loaded machine starts the child.
 */
function runChild(bundle: string, config: AskChildConfig, kill: { afterAcks: number; afterMs: number }): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bundle], {
      env: { ...process.env, RENNET_ASK_CHILD: JSON.stringify(config) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const lines: string[] = [];
    let stderr = '';
    let pending = '';
    let timer: NodeJS.Timeout | undefined;
    const backstop = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      pending += chunk;
      let nl: number;
      while ((nl = pending.indexOf('\n')) !== -1) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        lines.push(line);
        if (line.startsWith('ack ') && !timer && lines.filter((l) => l.startsWith('ack ')).length >= kill.afterAcks) timer = setTimeout(() => child.kill('SIGKILL'), kill.afterMs);
      }
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(backstop);
      if (timer) clearTimeout(timer);
      resolve({ lines, signal, code, stderr });
    });
  });
}

const KIND_OF_ACK: Record<string, string> = { stage: 'ask.stage', edit: 'ask.edit', undo: 'ask.unstage', line: 'ask.setLineComment', dismiss: 'ask.dismissFinding' };

describe('asks: kill -9 while commands are appended', function () {
  this.timeout(120_000);
  const dirs = tempDirs('rennet-ask-crash-');
  let bundle: string;

  before(() => {
    bundle = path.join(dirs.make(), 'ask-child.js');
    buildSync({
      entryPoints: [path.join(__dirname, 'child', 'ask-child.ts')],
      outfile: bundle,
      bundle: true,
      platform: 'node',
      format: 'cjs',
      target: 'node20',
      logLevel: 'error',
    });
  });
  after(() => dirs.cleanup());

  it('every acknowledged command is in the projection folded after the kill (20 kills, with compactions)', async () => {
    const dir = dirs.make();
    const repoRoot = '/repo/ask-kill';
    const staged = new Map<string, string>();
    const edited = new Map<string, string>();
    const undone = new Set<string>();
    const lineKeys: string[] = [];
    const dismissKeys: string[] = [];
    const ackSeqs = new Map<number, string>();
    let lastCount = 0;
    let acks = 0;
    for (let round = 0; round < 20; round++) {
      const config: AskChildConfig = { dir, wasmPath: WASM_PATH, compactEvery: [4, 9, 30][round % 3] as number, repoRoot, label: `r${round}` };
      const run = await runChild(bundle, config, { afterAcks: 2 + Math.floor(Math.random() * 4), afterMs: Math.floor(Math.random() * 40) });
      assert.equal(run.signal, 'SIGKILL', `round ${round}: child was not killed: code ${run.code} ${run.lines.slice(-3).join(' / ')} ${run.stderr}`);
      if (process.env.CRASH_DEBUG) console.log(`round ${round}: ${run.lines.filter((l) => l.startsWith('ack')).length} acks, last: ${run.lines.at(-1)}`);
      for (const line of run.lines) {
        const [word, what, seqText, a, b] = line.split(' ');
        if (word === 'error') assert.fail(`round ${round}: child failed: ${line}`);
        if (word !== 'ack' || !what || !a) continue;
        acks += 1;
        const seq = Number(seqText);
        ackSeqs.set(seq, KIND_OF_ACK[what] ?? '?');
        if (what === 'stage') staged.set(a, b ?? '');
        else if (what === 'edit') edited.set(a, b ?? '');
        else if (what === 'undo') undone.add(a);
        else if (what === 'line') lineKeys.push(a);
        else if (what === 'dismiss') dismissKeys.push(a);
      }

      const store = await Store.open(dir, { wasmPath: WASM_PATH });
      try {
        const session = store.findSession(repoRoot, targetKey({ kind: 'branch', head: 'killed', base: 'main' }));
        if (!session) {
          assert.equal(acks, 0, 'acknowledged commands but no session');
          continue;
        }
        const events = store.readEvents(session.id);
        assert.ok(events.length >= lastCount, `events went backwards: ${events.length} < ${lastCount}`);
        lastCount = events.length;
        const bySeq = new Map(events.map((e) => [e.seq, e]));
        for (const [seq, kind] of ackSeqs) assert.equal(bySeq.get(seq)?.kind, kind, `acknowledged #${seq} (${kind}) is missing`);
        assert.ok(
          events.every((e) => decodeAskEvent(e)?.ok),
          'every logged event reads back',
        );

        const fresh = new AskLog(store).read(session.id);
        assert.ok(fresh.ok);
        assert.deepEqual(fresh.value.skipped, [], 'every logged command applied');
        const p = fresh.value.projection;
        const asks = new Map(p.asks.map((x) => [x.id, x]));
        for (const [askId, text] of staged) {
          const ask = asks.get(askId);
          if (undone.has(askId)) {
            assert.equal(ask, undefined, `ask ${askId} was unstaged (acknowledged) but is back`);
            continue;
          }
          if (!text.startsWith('undone-')) assert.ok(ask, `acknowledged stage of ${askId} (${text}) is missing`);
          if (!ask) continue;
          const edit = edited.get(askId);
          if (edit) assert.equal(ask.text, edit, `acknowledged edit of ${askId} is missing`);
          else assert.ok(ask.text === text || ask.text.startsWith('edited-'), `ask ${askId} has text ${ask.text}`);
        }
        for (const key of lineKeys) assert.ok(Object.hasOwn(p.lineComments, key), `acknowledged line comment ${key} is missing`);
        for (const key of dismissKeys) assert.equal(p.findingDispositions[key], 'dismissed', `acknowledged dismissal ${key} is missing`);
      } finally {
        store.close();
      }
    }
    assert.ok(acks >= 40, `only ${acks} acknowledged commands across all kills`);
  });
});
