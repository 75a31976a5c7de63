import assert from 'node:assert/strict';
import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Patchset } from '../../protocol/patchset';
import { capturePatchset } from '../../host/capture/capture';
import { openRepo } from '../../host/capture/repo';
import { TestRepo } from '../fixtures/gitRepo';

/** Shared by the seat-server contract tests: a real captured change and a real MCP client. */

/** A 40-line file changed at lines 5 and 30: two hunks, head regions 2-8 and 27-33. */
function fixtureRepo(): TestRepo {
  const lines = (changed: boolean) => Array.from({ length: 40 }, (_, i) => (changed && (i === 4 || i === 29) ? `changed line ${i + 1}` : `line ${i + 1}`)).join('\n') + '\n';
  const repo = new TestRepo();
  repo.write('src/app.ts', lines(false)).commit('base');
  repo.branch('feature').write('src/app.ts', lines(true)).commit('change');
  return repo;
}

export async function capturedFixture(): Promise<{ repo: TestRepo; patchset: Patchset }> {
  const repo = fixtureRepo();
  const handle = await openRepo(repo.dir);
  if (!handle.ok) throw new Error(handle.error.message);
  const captured = await capturePatchset(handle.value, { kind: 'branch', base: 'main', head: 'feature' });
  if (!captured.ok) throw new Error(captured.error.message);
  return { repo, patchset: captured.value };
}

export type ToolText = { text: string; isError: boolean };

export async function callTool(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolText> {
  const result = await client.callTool({ name, arguments: args });
  const content = result.content as Array<{ type: string; text?: string }>;
  assert.equal(content.length, 1, `${name}: one content block`);
  assert.equal(content[0]!.type, 'text', `${name}: text content`);
  return { text: content[0]!.text ?? '', isError: result.isError === true };
}

/** The id a create verb answers with (the host mints `e<n>`). */
export function mintedId(result: ToolText): string {
  assert.equal(result.isError, false, result.text);
  const match = /\be\d+\b/.exec(result.text);
  assert.ok(match, `an id in: ${result.text}`);
  return match[0];
}

export async function connectClient(url: string, headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'rennet-contract-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

export function rawRequest(url: string, headers: Record<string, string>, body = '{}'): Promise<{ status: number; body: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (data += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
});
