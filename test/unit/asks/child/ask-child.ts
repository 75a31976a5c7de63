/**
 * An ask-log client run as a separate process by crash.test.ts (bundled with esbuild first), to
 * be SIGKILLed at random. Config comes as JSON in RENNET_ASK_CHILD. Prints `ready`, then one line
 * per acknowledged command, written synchronously after the command returned (so a printed line
 * is a command the log acknowledged as durable):
 *   ack stage <seq> <askId> <text>     ack edit <seq> <askId> <text>     ack undo <seq> <askId>
 *   ack line <seq> <key>               ack dismiss <seq> <findingKey>
 * Texts and keys contain no spaces.
 */
import * as fs from 'node:fs';
import { findingKey, lineCommentKey } from '../../../../protocol/asks';
import { AskLog } from '../../../../host/asks/log';
import { Store } from '../../../../host/store';

export interface AskChildConfig {
  dir: string;
  wasmPath: string;
  compactEvery: number;
  repoRoot: string;
  /** Distinguishes this run's texts and keys from other runs'. */
  label: string;
}

const out = (line: string) => fs.writeSync(1, `${line}\n`);

async function main(): Promise<void> {
  const config = JSON.parse(process.env.RENNET_ASK_CHILD ?? '{}') as AskChildConfig;
  const store = await Store.open(config.dir, { wasmPath: config.wasmPath, compactEvery: config.compactEvery });
  const now = () => new Date().toISOString();
  const sessionId = store.getOrCreateSession({ repoRoot: config.repoRoot, target: { kind: 'branch', head: 'killed', base: 'main' }, now: now() }).session.id;
  const log = new AskLog(store);
  const must = <T>(r: { ok: true; value: T } | { ok: false; error: { message: string } }): T => {
    if (!r.ok) {
      out(`error ${r.error.message}`);
      process.exit(3);
    }
    return r.value;
  };
  out(`ready ${process.pid}`);
  let lastStaged = '';
  for (let i = 0; ; i++) {
    const tag = `${config.label}-${i}`;
    switch (i % 5) {
      case 0:
      case 1: {
        const text = `ask-${tag}`;
        const r = must(log.command(sessionId, { type: 'stage', anchor: { kind: 'none' }, text, intent: 'comment', lane: 'post-review' }, now()));
        if (r.event.type === 'stage') lastStaged = r.event.askId;
        out(`ack stage ${r.seq} ${lastStaged} ${text}`);
        break;
      }
      case 2: {
        const text = `edited-${tag}`;
        const r = must(log.command(sessionId, { type: 'edit', askId: lastStaged, text }, now()));
        out(`ack edit ${r.seq} ${lastStaged} ${text}`);
        break;
      }
      case 3: {
        const text = `undone-${tag}`;
        const r = must(log.command(sessionId, { type: 'stage', anchor: { kind: 'none' }, text, intent: 'question', lane: 'changes' }, now()));
        const askId = r.event.type === 'stage' ? r.event.askId : '';
        out(`ack stage ${r.seq} ${askId} ${text}`);
        const u = must(log.undo(sessionId, r.receipt, now()));
        out(`ack undo ${u.seq} ${askId}`);
        break;
      }
      default: {
        const anchor = { patchsetId: 'ps-kill', path: `src/${tag}.ts`, side: 'head' as const, startLine: 1, endLine: 2 };
        const l = must(log.command(sessionId, { type: 'setLineComment', anchor, text: `comment-${tag}` }, now()));
        out(`ack line ${l.seq} ${lineCommentKey(anchor)}`);
        const ref = { generationId: `g-${config.label}`, boardId: `${sessionId}/g-${config.label}/flagged`, findingId: `e${i}` };
        const d = must(log.command(sessionId, { type: 'dismissFinding', ...ref }, now()));
        out(`ack dismiss ${d.seq} ${findingKey(ref)}`);
      }
    }
  }
}

main().catch((error: unknown) => {
  out(`error ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`.replace(/\n/g, ' | '));
  process.exit(2);
});
