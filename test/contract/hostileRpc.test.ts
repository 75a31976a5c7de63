import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { RPC_PARAMS_MAX_CHARS, RPC_PARAMS_MAX_DEPTH } from '../../protocol/limits';
import { AsksChanged, GenerationChanged, HostLog, SessionChanged } from '../../protocol/rpc';
import { checkParams } from '../../protocol/rpcSchema';
import { TestRepo, tempDir } from '../fixtures/gitRepo';
import { HOST_BUNDLE } from './hostProcess';

/**
 * A misbehaving extension, played over the built host's stdio with hand-made JSON-RPC frames: wrong
 * types, missing params, params by position, a huge and a deeply nested payload, an unknown method
 * and notification, frames that are not JSON-RPC at all. Each is refused with a typed error (or
 * MethodNotFound, or dropped with a log line), nothing is written, and the host keeps answering.
 */

interface Frame {
  id?: number | string | null;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

/** The host process spoken to byte by byte: Content-Length frames out, frames parsed back. */
class RawHost {
  private buffer = Buffer.alloc(0);
  private nextId = 1;
  private readonly waiting = new Map<number, (frame: Frame) => void>();
  readonly notifications: Frame[] = [];
  stderr = '';

  constructor(readonly child: ChildProcess) {
    child.stdout!.on('data', (chunk: Buffer) => this.take(chunk));
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => (this.stderr += chunk));
  }

  static start(storeDir: string): RawHost {
    return new RawHost(spawn(process.execPath, [HOST_BUNDLE, '--stdio', '--store', storeDir], { stdio: ['pipe', 'pipe', 'pipe'] }));
  }

  /** Writes `body` as one frame, exactly as given (a string is sent as is, not re-encoded). */
  write(body: unknown): void {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    this.child.stdin!.write(`Content-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
  }

  writeBytes(text: string): void {
    this.child.stdin!.write(text);
  }

  /** A request with these exact fields (params omitted when `undefined`); answers the response frame. */
  request(method: string, params?: unknown): Promise<Frame> {
    const id = this.nextId++;
    const answered = new Promise<Frame>((resolve) => this.waiting.set(id, resolve));
    this.write(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params });
    return answered;
  }

  /** A request whose params are given as JSON text (nesting JSON.stringify could not write). */
  requestText(method: string, paramsJson: string): Promise<Frame> {
    const id = this.nextId++;
    const answered = new Promise<Frame>((resolve) => this.waiting.set(id, resolve));
    this.write(`{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(method)},"params":${paramsJson}}`);
    return answered;
  }

  notify(method: string, params?: unknown): void {
    this.write(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params });
  }

  /** The host's log lines (rennet/host/log) so far. */
  logs(): string[] {
    return this.notifications.filter((n) => n.method === HostLog.method).map((n) => (n.params as { level: string; message: string }).message);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGTERM');
    await exited;
  }

  private take(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const end = this.buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/Content-Length: (\d+)/i.exec(this.buffer.subarray(0, end).toString('ascii'))?.[1]);
      if (this.buffer.length < end + 4 + length) return;
      const frame = JSON.parse(this.buffer.subarray(end + 4, end + 4 + length).toString('utf8')) as Frame;
      this.buffer = this.buffer.subarray(end + 4 + length);
      if (typeof frame.id === 'number' && frame.method === undefined) this.waiting.get(frame.id)?.(frame);
      else if (frame.method !== undefined && frame.id === undefined) this.notifications.push(frame);
    }
  }
}

/** The failed Result a refused extension → host request answers. */
function refusal(frame: Frame): { code: string; message: string; detail?: Record<string, string> } {
  assert.equal(frame.error, undefined, `a JSON-RPC error instead of a typed Result: ${JSON.stringify(frame.error)}`);
  const result = frame.result as { ok: boolean; error?: { code: string; message: string; detail?: Record<string, string> } };
  assert.equal(result.ok, false, `accepted: ${JSON.stringify(result)}`);
  return result.error!;
}

async function until(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('host JSON-RPC edge under hostile input (built dist/host.js)', function () {
  this.timeout(120_000);
  let repo: TestRepo;
  let storeDir: string;
  let host: RawHost;

  beforeEach(async () => {
    repo = new TestRepo();
    repo.write('src/a.ts', 'export const a = 1;\n').commit('base');
    repo.branch('feature').write('src/a.ts', 'export const a = 2;\n').commit('change');
    storeDir = tempDir('rennet-hostile-store-');
    host = RawHost.start(storeDir);
    const init = await host.request('initialize', { processId: process.pid, rootUri: null, capabilities: {} });
    assert.ok(init.result, JSON.stringify(init));
    host.notify('initialized', {});
  });
  afterEach(async () => {
    await host.stop();
    repo.cleanup();
    rmSync(storeDir, { recursive: true, force: true });
  });

  async function stillAnswers(): Promise<void> {
    const hello = await host.request('rennet/host/hello', {});
    assert.equal((hello.result as { storeDir: string }).storeDir, storeDir, JSON.stringify(hello));
    assert.equal(host.child.exitCode, null, 'the host exited');
    assert.deepEqual((await host.request('rennet/session/list', {})).result, [], 'a refused request wrote a session');
  }

  it('refuses wrong types, missing params and params by position with invalid-request naming the field', async () => {
    const cases: Array<[string, unknown, string, RegExp]> = [
      ['rennet/repo/listBranches', { repo: 5 }, 'repo', /expected string, received number/],
      ['rennet/review/open', { repo: repo.dir, target: { kind: 'branch', head: 7, base: 'main' } }, 'target.head', /expected string/],
      ['rennet/review/open', { repo: repo.dir, target: { kind: 'tarball' } }, 'target.kind', /Invalid/],
      ['rennet/review/open', { repo: repo.dir, target: { kind: 'branch', head: 'feature', base: 'main' }, maxFileBytes: 'big' }, 'maxFileBytes', /expected number/],
      ['rennet/review/draftLens', { sessionId: 's-1', lens: 'vibes', harness: 'vscode-lm' }, 'lens', /Invalid option/],
      ['rennet/review/draftLens', { sessionId: 's-1', lens: 'flagged', harness: 'openai' }, 'harness', /Invalid input/],
      ['rennet/gates/merge', { sessionId: 's-1', expectHead: 'not-a-sha', method: 'merge' }, 'expectHead', /Invalid string/],
      ['rennet/rounds/dispatch', { sessionId: 's-1', digest: 1, worker: 'codex', harness: {} }, 'digest', /expected string/],
      ['rennet/session/archive', { sessionId: '' }, 'sessionId', /Too small/],
      ['rennet/patchset/readBlob', { patchsetId: 'ps-1', path: 'a.ts', side: 'middle' }, 'side', /Invalid option/],
      ['rennet/session/get', undefined, '(params)', /expected object, received undefined/],
      ['rennet/session/get', null, '(params)', /expected object, received null/],
      ['rennet/session/get', [{ sessionId: 's-1' }, 'extra'], '(params)', /takes one params object by name, not 2 values by position/],
      ['rennet/generation/get', 'a string', '(params)', /expected object, received string/],
    ];
    for (const [method, params, field, why] of cases) {
      const error = refusal(await host.request(method, params));
      assert.equal(error.code, 'invalid-request', `${method}: ${error.message}`);
      assert.equal(error.detail?.field, field, `${method}: ${error.message}`);
      assert.ok(error.message.startsWith(`${method}: `), error.message);
      assert.match(error.message, why);
    }
    // The asks and explain refusals keep naming the detail their callers switch on.
    const ask = refusal(await host.request('rennet/asks/command', { sessionId: 's-1', command: { type: 'stage', text: 42 } }));
    assert.deepEqual([ask.code, ask.detail?.refusal], ['invalid-request', 'invalid']);
    const explain = refusal(await host.request('rennet/asks/explain', { sessionId: 's-1' }));
    assert.deepEqual([explain.code, explain.detail?.reason], ['invalid-request', 'invalid']);
    // A request whose answer is no Result is refused with a JSON-RPC InvalidParams error.
    const hello = await host.request('rennet/host/hello', 'not an object');
    assert.equal(hello.error?.code, -32602, JSON.stringify(hello));
    const list = await host.request('rennet/session/list');
    assert.equal(list.error?.code, -32602, JSON.stringify(list));
    // Each refusal is one log line naming the method and the field, never the values.
    await until('the refusals logged', () => host.logs().filter((l) => l.startsWith('refused ')).length >= cases.length + 4);
    assert.ok(
      host.logs().some((l) => l === 'refused rennet/repo/listBranches: repo: Invalid input: expected string, received number'),
      host.logs().join('\n'),
    );
    await stillAnswers();
  });

  it('refuses a huge payload and a deeply nested one before any handler runs', async () => {
    const huge = refusal(await host.request('rennet/review/open', { repo: repo.dir, target: { kind: 'branch', head: 'x'.repeat(RPC_PARAMS_MAX_CHARS + 10), base: 'main' } }));
    assert.equal(huge.code, 'invalid-request');
    assert.match(huge.message, new RegExp(`^rennet/review/open: the params are over ${RPC_PARAMS_MAX_CHARS} characters`));
    // Written as text: JSON.stringify itself would overflow on this nesting.
    const nested = `${'{"n":'.repeat(10_000)}"leaf"${'}'.repeat(10_000)}`;
    const deep = refusal(await host.request('rennet/asks/command', JSON.parse(`{"sessionId":"s-1","command":${'{"n":'.repeat(100)}0${'}'.repeat(100)}}`)));
    assert.match(deep.message, new RegExp(`deeper than ${RPC_PARAMS_MAX_DEPTH} levels`));
    const deeper = await host.requestText('rennet/asks/command', `{"sessionId":"s-1","command":${nested}}`);
    assert.match(refusal(deeper).message, new RegExp(`deeper than ${RPC_PARAMS_MAX_DEPTH} levels`));
    await stillAnswers();
  });

  it('answers an unknown method MethodNotFound, logs an unknown notification, drops a malformed one', async () => {
    const unknown = await host.request('rennet/no/such', {});
    assert.equal(unknown.error?.code, -32601, JSON.stringify(unknown));
    host.notify('rennet/no/such', { x: 1 });
    host.notify('rennet/forges/configure', 7);
    host.notify('rennet/forges/configure');
    const dropped = () => host.logs().filter((l) => l.startsWith('dropped rennet/forges/configure: (params): Invalid input: expected object'));
    await until('the notifications logged', () => dropped().length === 2 && host.logs().includes('ignored notification "rennet/no/such": no such message'));
    assert.deepEqual(
      host.logs().filter((l) => l.startsWith('ignored notification')),
      ['ignored notification "rennet/no/such": no such message'],
      'the client lifecycle is not logged as unknown',
    );
    await stillAnswers();
  });

  it('survives frames that are not JSON-RPC at all', async () => {
    host.write('this is not json');
    host.write('{"jsonrpc":"2.0","id":');
    host.write([1, 2, 3]);
    host.write('"a string"');
    host.write('null');
    host.write({ foo: 1 });
    host.write({ jsonrpc: '2.0', id: 99, method: 42 });
    host.write({ jsonrpc: '2.0', method: '$/cancelRequest' });
    await stillAnswers();
    // A header without Content-Length: the reader refuses it and reads on from the next frame.
    host.writeBytes('Garbage: yes\r\n\r\n');
    await new Promise((r) => setTimeout(r, 200));
    await stillAnswers();
    assert.equal(host.child.exitCode, null);
  });

  it('sends the extension only notifications its edge accepts (the schemas match what the host sends)', async () => {
    const opened = await host.request('rennet/review/open', { repo: repo.dir, target: { kind: 'branch', head: 'feature', base: 'main' } });
    const value = (opened.result as { ok: true; value: { snapshot: { session: { id: string } } } }).value;
    const sessionId = value.snapshot.session.id;
    const none = { default: 'none', lenses: {}, vscodeLm: {}, openai: {}, anthropic: {} };
    const started = await host.request('rennet/review/runLenses', { sessionId, harness: none });
    assert.equal((started.result as { ok: boolean }).ok, true, JSON.stringify(started));
    const staged = await host.request('rennet/asks/command', {
      sessionId,
      command: { type: 'setVerdictOverride', verdict: 'comment' },
    });
    assert.equal((staged.result as { ok: boolean }).ok, true, JSON.stringify(staged));
    await until('a session, a generation and an asks push', () => [SessionChanged, GenerationChanged, AsksChanged].every((type) => host.notifications.some((n) => n.method === type.method)));
    const checks: Record<string, (params: unknown) => ReturnType<typeof checkParams>> = {
      [SessionChanged.method]: (params) => checkParams(SessionChanged, params),
      [GenerationChanged.method]: (params) => checkParams(GenerationChanged, params),
      [AsksChanged.method]: (params) => checkParams(AsksChanged, params),
      [HostLog.method]: (params) => checkParams(HostLog, params),
    };
    let checked = 0;
    for (const notification of host.notifications) {
      const check = checks[notification.method!];
      if (!check) continue;
      const result = check(notification.params);
      assert.ok(result.ok, result.ok ? '' : result.message);
      checked++;
    }
    assert.ok(checked >= 3);
  });
});
