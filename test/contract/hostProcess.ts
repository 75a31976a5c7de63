import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node';

/**
 * The built host (dist/host.js), spawned as VS Code would, but over stdio so a test can talk to it;
 * and the recovery tests' kill -9 and restart on the same data directory.
 */
export const HOST_BUNDLE = join(__dirname, '..', '..', 'dist', 'host.js');

export interface HostUnderTest {
  child: ChildProcess;
  connection: MessageConnection;
  stderr: () => string;
  /** Shuts the host down (SIGTERM) once its connection is closed; nothing when it already exited. */
  stop(): Promise<void>;
  /** kill -9: the host dies where it stands (no shutdown, no flush); answers once it has exited. */
  kill(): Promise<void>;
}

/** SIGKILL `child` and wait for its exit; nothing when it already exited. */
export async function killProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

export async function startHost(storeDir: string, bundle = HOST_BUNDLE): Promise<HostUnderTest> {
  if (!existsSync(bundle)) throw new Error(`${bundle} is missing; run npm run build first`);
  const child = spawn(process.execPath, [bundle, '--stdio', '--store', storeDir], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => (stderr += chunk));
  const connection = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  connection.listen();
  await connection.sendRequest('initialize', { processId: process.pid, rootUri: null, capabilities: {} });
  await connection.sendNotification('initialized', {});
  return {
    child,
    connection,
    stderr: () => stderr,
    async stop() {
      connection.dispose();
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
    },
    async kill() {
      await killProcess(child);
      connection.dispose();
    },
  };
}

/** kill -9 of `host`, then a new host on the same data directory (what a crashed VS Code window's next start does). */
export async function killAndRestart(host: HostUnderTest, storeDir: string): Promise<HostUnderTest> {
  await host.kill();
  return startHost(storeDir);
}
