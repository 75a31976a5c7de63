/**
 * A store client run as a separate process by crash.test.ts (bundled with esbuild first).
 * Config comes as JSON in RENNET_CHILD. Prints `ready`, then `ack <sessionId> <seq> <i>` after
 * every acknowledged append (written synchronously, so a printed ack was acknowledged), then `done`.
 */
import * as fs from 'node:fs';
import { Store } from '../../../../host/store';
import type { DurableStep } from '../../../../host/store/durable-db';

export interface ChildConfig {
  dir: string;
  wasmPath: string;
  compactEvery: number;
  label: string;
  repoRoot: string;
  /** Appends to make; 0 = until killed. */
  count: number;
  /** Alternate appends between the own session and a session shared with other children. */
  shared: boolean;
  /** Every n appends, read the own session back and check it is contiguous (0 = never). */
  verifyEvery: number;
  /** Kill ourselves with SIGKILL the nth time this step is reached. */
  crashAt?: { step: DurableStep; nth: number };
}

const out = (line: string) => fs.writeSync(1, `${line}\n`);

async function main(): Promise<void> {
  const config = JSON.parse(process.env.RENNET_CHILD ?? '{}') as ChildConfig;
  let reached = 0;
  const crashAt = config.crashAt;
  const store = await Store.open(config.dir, {
    wasmPath: config.wasmPath,
    compactEvery: config.compactEvery,
    ...(crashAt
      ? {
          onStep: (step: DurableStep) => {
            if (step === crashAt.step && ++reached >= crashAt.nth) process.kill(process.pid, 'SIGKILL');
          },
        }
      : {}),
  });
  const now = () => new Date().toISOString();
  const own = store.getOrCreateSession({ repoRoot: config.repoRoot, target: { kind: 'branch', head: config.label, base: 'main' }, now: now() }).session;
  const shared = config.shared ? store.getOrCreateSession({ repoRoot: config.repoRoot, target: { kind: 'branch', head: 'shared', base: 'main' }, now: now() }).session : undefined;
  out(`ready ${process.pid}`);
  for (let i = 0; config.count === 0 || i < config.count; i++) {
    const session = shared && i % 2 === 1 ? shared : own;
    const { seq } = store.appendEvent(session.id, 'test.tick', { label: config.label, i }, now());
    out(`ack ${session.id} ${seq} ${i}`);
    if (config.verifyEvery > 0 && i % config.verifyEvery === 0) {
      const events = store.readEvents(own.id);
      events.forEach((e, k) => {
        if (e.seq !== k + 1) {
          out(`error own session not contiguous at ${k}: seq ${e.seq}`);
          process.exit(3);
        }
      });
    }
  }
  store.close();
  out('done');
}

main().catch((error: unknown) => {
  out(`error ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`.replace(/\n/g, ' | '));
  process.exit(2);
});
