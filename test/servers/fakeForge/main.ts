import { startFakeForge } from './index';

/**
 * `npx tsx test/servers/fakeForge/main.ts` — the fake forge as its own process (for a VS Code
 * end-to-end test): prints `{"url","githubApiUrl","gitlabApiUrl"}` as one line on stdout, is
 * driven through `/_fake/<method>`, and exits when its stdin closes or on SIGINT/SIGTERM.
 */
async function main(): Promise<void> {
  const forge = await startFakeForge();
  process.stdout.write(`${JSON.stringify({ url: forge.url, githubApiUrl: forge.githubApiUrl, gitlabApiUrl: forge.gitlabApiUrl })}\n`);
  let closing = false;
  const stop = () => {
    if (closing) return;
    closing = true;
    void forge.close().then(() => process.exit(0));
  };
  process.stdin.on('end', stop);
  process.stdin.on('close', stop);
  process.stdin.resume();
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

void main();
