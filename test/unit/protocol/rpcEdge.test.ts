import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { ErrorCodes, ResponseError } from 'vscode-jsonrpc';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node';
import { err, rennetError } from '../../../protocol/result';
import { AsksCommand, ForgesConfigure, HostHello, HostLog, SessionGet, type HostInfo } from '../../../protocol/rpc';
import { rpcEdge, unknownNotificationLogger, UNKNOWN_NOTIFICATIONS_LOGGED } from '../../../protocol/rpcEdge';

/**
 * The receiving edge over a real JSON-RPC connection pair (vscode-jsonrpc over in-memory streams):
 * what a handler sees, and what a sender of bad params, of a throwing handler's request, or of an
 * unknown method gets back.
 */
describe('protocol/rpcEdge', () => {
  let client: MessageConnection;
  let server: MessageConnection;
  let logs: Array<[string, string]>;

  beforeEach(() => {
    const toServer = new PassThrough();
    const toClient = new PassThrough();
    client = createMessageConnection(new StreamMessageReader(toClient), new StreamMessageWriter(toServer));
    server = createMessageConnection(new StreamMessageReader(toServer), new StreamMessageWriter(toClient));
    logs = [];
  });
  afterEach(() => {
    client.dispose();
    server.dispose();
  });

  function listen() {
    server.listen();
    client.listen();
  }

  const HELLO: HostInfo = { version: 'test', pid: 1, storeDir: '/nowhere', storeSchema: 1, sessions: 0 };

  it("hands a handler only params its schema accepted, and answers refusals in the message's own shape", async () => {
    const edge = rpcEdge(server, (level, message) => logs.push([level, message]));
    const seen: unknown[] = [];
    edge.request(SessionGet, (params) => {
      seen.push(params);
      return err(rennetError('not-found', `no session ${params.sessionId}`));
    });
    edge.request(HostHello, () => HELLO);
    edge.request(AsksCommand, () => {
      throw new Error('the handler must not run');
    });
    listen();

    const found = await client.sendRequest('rennet/session/get', { sessionId: 's-1', extra: true });
    assert.deepEqual(found, { ok: false, error: { code: 'not-found', message: 'no session s-1' } });
    assert.deepEqual(seen, [{ sessionId: 's-1' }], 'keys the schema does not name are dropped');

    const wrongType = await client.sendRequest('rennet/session/get', { sessionId: 5 });
    assert.deepEqual(wrongType, {
      ok: false,
      error: { code: 'invalid-request', message: 'rennet/session/get: sessionId: Invalid input: expected string, received number', detail: { field: 'sessionId' } },
    });
    const none = (await client.sendRequest('rennet/session/get')) as { ok: boolean; error: { code: string; detail: Record<string, string> } };
    assert.equal(none.ok, false);
    assert.deepEqual([none.error.code, none.error.detail], ['invalid-request', { field: '(params)' }]);
    const byPosition = (await client.sendRequest('rennet/session/get', { sessionId: 's-1' }, 'two')) as { ok: boolean; error: { message: string } };
    assert.match(byPosition.error.message, /takes one params object by name, not 2 values by position/);
    const asks = (await client.sendRequest('rennet/asks/command', { sessionId: 's-1', command: { type: 'nonsense' } })) as { error: { code: string; detail: Record<string, string> } };
    assert.deepEqual([asks.error.code, asks.error.detail.refusal, asks.error.detail.field], ['invalid-request', 'invalid', 'command.type'], 'the asks refusal names detail.refusal');
    assert.equal(seen.length, 1, 'no refused request reached the handler');

    // A request whose answer is not a Result is refused with a JSON-RPC InvalidParams error.
    assert.deepEqual(await client.sendRequest(HostHello, {}), HELLO);
    await assert.rejects(client.sendRequest('rennet/host/hello', 'not an object'), (error: unknown) => {
      assert.ok(error instanceof ResponseError);
      assert.equal(error.code, ErrorCodes.InvalidParams);
      assert.match(error.message, /^rennet\/host\/hello: \(params\): Invalid input: expected object/);
      return true;
    });
    assert.equal(logs.filter(([level, line]) => level === 'warn' && line.startsWith('refused ')).length, 5, JSON.stringify(logs));
  });

  it('answers a handler that throws with a typed internal error and keeps serving', async () => {
    const edge = rpcEdge(server, (level, message) => logs.push([level, message]));
    edge.request(SessionGet, () => {
      throw new Error('the store exploded');
    });
    edge.request(HostHello, () => {
      throw new Error('hello exploded');
    });
    listen();
    assert.deepEqual(await client.sendRequest(SessionGet, { sessionId: 's-1' }), {
      ok: false,
      error: { code: 'internal-error', message: 'rennet/session/get failed: the store exploded' },
    });
    await assert.rejects(client.sendRequest(HostHello, {}), (error: unknown) => error instanceof ResponseError && error.code === ErrorCodes.InternalError && /hello exploded/.test(error.message));
    assert.deepEqual(logs, [
      ['error', 'rennet/session/get failed: the store exploded'],
      ['error', 'rennet/host/hello failed: hello exploded'],
    ]);
  });

  it('drops a notification whose params its schema refuses, with a log line, and delivers the rest', async () => {
    const edge = rpcEdge(server, (level, message) => logs.push([level, message]));
    const delivered: unknown[] = [];
    edge.notification(HostLog, (line) => void delivered.push(line));
    edge.notification(ForgesConfigure, () => {
      throw new Error('configure exploded');
    });
    listen();
    await client.sendNotification('rennet/host/log', { level: 'loud', message: 'x' });
    await client.sendNotification('rennet/host/log');
    await client.sendNotification(HostLog, { level: 'info', message: 'kept' });
    await client.sendNotification(ForgesConfigure, { entries: [] });
    // The connection keeps order: once a request is answered, every notification before it was handled.
    server.onRequest('test/flush', () => 'flushed');
    assert.equal(await client.sendRequest('test/flush'), 'flushed');
    assert.deepEqual(delivered, [{ level: 'info', message: 'kept' }]);
    assert.deepEqual(
      logs.map(([level, line]) => `${level} ${line.replace(/:.*/, '')}`),
      ['warn dropped rennet/host/log', 'warn dropped rennet/host/log', 'error rennet/forges/configure failed'],
    );
  });

  it('leaves unknown requests to vscode-jsonrpc (MethodNotFound) and logs each unknown notification once', async () => {
    rpcEdge(server, (level, message) => logs.push([level, message]));
    server.onNotification(unknownNotificationLogger((level, message) => logs.push([level, message])));
    listen();
    await assert.rejects(client.sendRequest('rennet/no/such', {}), (error: unknown) => error instanceof ResponseError && error.code === ErrorCodes.MethodNotFound);
    for (let i = 0; i < 3; i++) await client.sendNotification('rennet/no/such', { i });
    for (let i = 0; i < UNKNOWN_NOTIFICATIONS_LOGGED + 5; i++) await client.sendNotification(`rennet/made/up${i}`, {});
    server.onRequest('test/flush', () => 'flushed');
    await client.sendRequest('test/flush');
    assert.equal(logs.length, UNKNOWN_NOTIFICATIONS_LOGGED, 'one line per method, and no more than the cap');
    assert.deepEqual(logs[0], ['warn', 'ignored notification "rennet/no/such": no such message']);
  });
});
