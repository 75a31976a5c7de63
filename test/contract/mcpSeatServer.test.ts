import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Patchset } from '../../protocol/patchset';
import { buildCitationIndex } from '../../host/board/citations';
import { SEAT_SECRET_HEADER, startSeatServer, type SeatServerHandle } from '../../host/board/mcpServer';
import { BoardSeat, type SeatFrame } from '../../host/board/seat';
import { emptyBoard } from '../../host/board/state';
import { buildBoardTools, toolListing } from '../../host/board/tools';
import type { TestRepo } from '../fixtures/gitRepo';
import { callTool, capturedFixture, connectClient, mintedId, rawRequest, INITIALIZE } from './mcpFixture';

describe('seat MCP server (real capture, real SDK client, loopback HTTP)', function () {
  this.timeout(60_000);
  let repo: TestRepo;
  let patchset: Patchset;
  let seat: BoardSeat;
  let server: SeatServerHandle;
  let client: Client;
  const frames: SeatFrame[] = [];

  before(async () => {
    ({ repo, patchset } = await capturedFixture());
    seat = new BoardSeat({
      state: emptyBoard('sequence', patchset.id),
      context: { author: 'test-model', citations: buildCitationIndex(patchset) },
      onFrame: (frame) => frames.push(frame),
    });
    server = await startSeatServer({ seat });
    client = await connectClient(server.url, server.headers);
  });
  after(async () => {
    await client?.close();
    await server?.close();
    repo?.cleanup();
  });

  it('binds to 127.0.0.1 only and serves a random port', () => {
    assert.equal(server.address.address, '127.0.0.1');
    assert.ok(server.address.port > 0);
    assert.equal(new URL(server.url).hostname, '127.0.0.1');
    assert.match(server.headers[SEAT_SECRET_HEADER], /^[0-9a-f]{64}$/);
  });

  it('is not reachable on a non-loopback address', async function () {
    const external = Object.values(networkInterfaces())
      .flat()
      .find((info) => info && !info.internal && info.family === 'IPv4');
    if (!external) this.skip();
    const outcome = await new Promise<string>((resolve) => {
      const socket = connect({ host: external!.address, port: server.address.port });
      socket.once('connect', () => {
        socket.destroy();
        resolve('connected');
      });
      socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    });
    assert.equal(outcome, 'ECONNREFUSED', `connecting to ${external!.address}:${server.address.port}`);
  });

  it('lists exactly the tools buildBoardTools renders for the lens', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
      toolListing(buildBoardTools('sequence')),
    );
  });

  it('refuses a citation outside the changed regions, naming path, range and the nearest range; nothing is created', async () => {
    const before = seat.state.elements.size;
    const refused = await callTool(client, 'cite', { path: 'src/app.ts', side: 'head', start_line: 12, end_line: 14 });
    assert.equal(refused.isError, true);
    assert.ok(refused.text.includes('src/app.ts'), refused.text);
    assert.ok(refused.text.includes('12-14'), refused.text);
    assert.ok(refused.text.includes('src/app.ts:2-8'), `the nearest changed range: ${refused.text}`);
    assert.ok(refused.text.includes('Nothing was created'), refused.text);
    assert.equal(seat.state.elements.size, before);
  });

  it('refuses a schema failure naming the field (input-shape)', async () => {
    const refused = await callTool(client, 'cite', { path: 'src/app.ts', side: 'middle', start_line: 5, end_line: 5 });
    assert.equal(refused.isError, true);
    assert.match(refused.text, /input-shape/);
    assert.match(refused.text, /side/);
    const owned = await callTool(client, 'add_section', { title: 'T', author: 'me' });
    assert.equal(owned.isError, true);
    assert.match(owned.text, /host-owned-field/);
  });

  it('writes a board with citations, answers finish with pointers, and settles once they are fixed', async () => {
    const frameCount = frames.length;
    const citeId = mintedId(await callTool(client, 'cite', { path: 'src/app.ts', side: 'head', start_line: 4, end_line: 6, label: 'first change' }));
    const sectionId = mintedId(await callTool(client, 'add_section', { title: 'Reading order', body_markdown: 'The change renames two lines of the module.' }));
    const stepId = mintedId(
      await callTool(client, 'add_order_step', {
        title: 'Line five changes',
        explanation_markdown: 'The fifth line now says it changed, which is what the rest of the module reads.',
        span: citeId,
        parent_id: sectionId,
      }),
    );
    assert.equal(seat.state.elements.get(stepId)?.parent, sectionId);
    assert.ok(frames.length >= frameCount + 3, 'one frame per accepted write');
    assert.ok(frames.at(-1)!.touched.includes(stepId));

    const first = await callTool(client, 'finish');
    assert.equal(first.isError, false, first.text);
    assert.match(first.text, /document-present/, `the board has no document yet: ${first.text}`);
    assert.equal(seat.state.status, 'drafting');

    const doc = await callTool(client, 'set_document', {
      title: 'Two lines change',
      intro_markdown: 'Two lines of the module now say they changed. Nothing else moves.',
    });
    assert.equal(doc.isError, false, doc.text);
    const second = await callTool(client, 'finish');
    assert.equal(second.isError, false, second.text);
    assert.equal(seat.state.status, 'finished', `finish settles: ${second.text}`);

    const snapshot = seat.snapshot();
    assert.equal(snapshot.status, 'finished');
    assert.deepEqual(
      snapshot.elements.map((e) => e.kind),
      ['code_ref', 'section', 'order_step'],
    );
    assert.equal(snapshot.document.title, 'Two lines change');
    const stats = seat.stats();
    assert.ok(stats.calls >= 7 && stats.refusals >= 3, JSON.stringify(stats));
  });

  it('refuses every request without the secret header, or with a wrong one (401)', async () => {
    const host = { host: new URL(server.url).host };
    assert.equal((await rawRequest(server.url, host, INITIALIZE)).status, 401);
    assert.equal((await rawRequest(server.url, { ...host, [SEAT_SECRET_HEADER]: 'f'.repeat(64) }, INITIALIZE)).status, 401);
    assert.equal((await rawRequest(server.url, { ...host, [SEAT_SECRET_HEADER]: 'short' }, INITIALIZE)).status, 401);
    await assert.rejects(connectClient(server.url, {}), /401|Unauthorized/i);
    await assert.rejects(connectClient(server.url, { [SEAT_SECRET_HEADER]: '0'.repeat(64) }), /401|Unauthorized/i);
    const ok = await rawRequest(server.url, { ...host, ...server.headers }, INITIALIZE);
    assert.equal(ok.status, 200, ok.body);
  });

  it('refuses a foreign Host header or Origin (DNS-rebinding guard) even with the secret', async () => {
    const rebound = await rawRequest(server.url, { ...server.headers, host: `evil.example:${server.address.port}` }, INITIALIZE);
    assert.equal(rebound.status, 403);
    const otherPort = await rawRequest(server.url, { ...server.headers, host: `127.0.0.1:${server.address.port + 1}` }, INITIALIZE);
    assert.equal(otherPort.status, 403);
    const origin = await rawRequest(server.url, { ...server.headers, host: new URL(server.url).host, origin: 'http://evil.example' }, INITIALIZE);
    assert.equal(origin.status, 403);
    const localhost = await rawRequest(server.url, { ...server.headers, host: `localhost:${server.address.port}` }, INITIALIZE);
    assert.equal(localhost.status, 200, localhost.body);
  });

  it('serves every session the same board, and close() ends the server', async () => {
    const second = await connectClient(server.url, server.headers);
    const { tools } = await second.listTools();
    assert.equal(tools.length, buildBoardTools('sequence').length);
    const refused = await callTool(second, 'remove_element', { id: 'e999' });
    assert.equal(refused.isError, true);
    await second.close();
  });
});

describe('seat MCP server lifecycle', () => {
  it('refuses a non-loopback bind and stops listening on close', async () => {
    const { repo, patchset } = await capturedFixture();
    try {
      const seat = new BoardSeat({ state: emptyBoard('flagged', patchset.id), context: { author: 't', citations: buildCitationIndex(patchset) } });
      await assert.rejects(startSeatServer({ seat, host: '0.0.0.0' as '127.0.0.1' }), /only to 127\.0\.0\.1/);
      const server = await startSeatServer({ seat });
      const client = await connectClient(server.url, server.headers);
      assert.ok((await client.listTools()).tools.some((t) => t.name === 'settle_absent'));
      await server.close();
      await assert.rejects(rawRequest(server.url, { ...server.headers, host: new URL(server.url).host }, INITIALIZE), /ECONNREFUSED|socket hang up|ECONNRESET/);
      await client.close().catch(() => undefined);
    } finally {
      repo.cleanup();
    }
  });
});
