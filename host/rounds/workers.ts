import { err, ok, rennetError, type Result } from '../../protocol/result';
import { cliWorker } from './cliWorkers';
import type { WorkerPort } from './runner';
import { loadScriptedWorkerFile, runScriptedWorker } from './scriptedWorker';

/**
 * The worker a choice names — the CLI's `--worker` and VS Code's `rennet.rounds.worker` alike:
 * `claude-code`, `codex`, or `scripted:<file>`.
 */

/**
 * `--worker claude-code|codex|scripted:FILE`. claude-code and codex: the user's own CLI, found as
 * the lens harnesses find it (RENNET_CLAUDE_BIN / RENNET_CODEX_BIN, else PATH), its version
 * recorded (host/rounds/cliWorkers.ts); a missing CLI is refused, naming what to install.
 */
export async function workerFromFlag(flag: string, options: { model?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Result<WorkerPort>> {
  if (flag.startsWith('scripted:')) {
    const file = await loadScriptedWorkerFile(flag.slice('scripted:'.length));
    if (!file.ok) return file;
    return ok({
      worker: { kind: 'scripted', version: null },
      async run({ root, signal }) {
        const ran = await runScriptedWorker(root, file.value, { signal });
        if (ran.ok) return { outcome: 'done', message: `${ran.value.steps} scripted steps, ${ran.value.commits.length} commits` };
        return { outcome: signal.aborted ? 'aborted' : 'failed', message: ran.error.message };
      },
    });
  }
  if (flag === 'claude-code' || flag === 'codex') return cliWorker(flag, options);
  return err(rennetError('invalid-request', `--worker is claude-code, codex or scripted:FILE, not "${flag}"`));
}
