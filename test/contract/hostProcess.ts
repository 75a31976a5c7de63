import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node';

/** The built host (dist/host.js), spawned as VS Code would, but over stdio so a test can talk to it. */
export const HOST_BUNDLE = join(__dirname, '..', '..', 'dist', 'host.js');

export interface HostUnderTest {
  child: ChildProcess;
  connection: MessageConnection;
  stderr: () => string;
  stop(): Promise<void>;
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
  connection.sendNotification('initialized', {});
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
  };
}
