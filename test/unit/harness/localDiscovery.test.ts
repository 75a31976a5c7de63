import assert from 'node:assert/strict';
import { discoverLocalModels, firstLocalModel, LOCAL_MODEL_SERVERS, LOCAL_PROBE_TIMEOUT_MS, localServerSummary, type DiscoveredLocalServer } from '../../../host/harness/discover';
import { discoveryLines } from '../../../host/harness/harnessChoice';
import { closedOrigin, lmStudioAnswers, ollamaAnswers, recordFetches, startFakeServer, type FakeLocalServer, type LocalAnswer } from './localServers';

/**
 * Local model discovery against real HTTP servers on 127.0.0.1 that speak Ollama's and LM Studio's
 * wire shapes (./localServers.ts), injected through discoverLocalModels' test-only `baseUrls`.
 * Every fetch the process makes is recorded: nothing is asked anywhere but the servers under test.
 */

describe('harness: local model discovery (Ollama, LM Studio on loopback)', function () {
  this.timeout(20_000);
  const servers: FakeLocalServer[] = [];
  let fetches: ReturnType<typeof recordFetches>;

  beforeEach(() => {
    fetches = recordFetches();
  });
  afterEach(async () => {
    fetches.restore();
    for (const s of servers.splice(0)) await s.close();
  });

  async function serve(answer: (r: { method: string; path: string; body: unknown }) => LocalAnswer): Promise<FakeLocalServer> {
    const s = await startFakeServer(answer);
    servers.push(s);
    return s;
  }
  /** Every fetch went to one of these origins. */
  function onlyAsked(origins: string[]) {
    assert.ok(fetches.urls.length > 0, 'something was asked');
    for (const url of fetches.urls) assert.ok(origins.includes(new URL(url).origin), `${url} is not one of ${origins.join(', ')}`);
  }
  const byName = (server: DiscoveredLocalServer) => Object.fromEntries(server.models.map((m) => [m.name, m]));

  it('the fixed endpoints are the two loopback defaults, in the order auto prefers', () => {
    assert.deepEqual(
      LOCAL_MODEL_SERVERS.map((s) => [s.kind, s.baseUrl]),
      [
        ['ollama', 'http://127.0.0.1:11434'],
        ['lm-studio', 'http://127.0.0.1:1234'],
      ],
    );
    assert.ok(LOCAL_PROBE_TIMEOUT_MS >= 300 && LOCAL_PROBE_TIMEOUT_MS <= 500);
  });

  it('both down: each is "not running (connection refused)", quickly, and nothing is usable', async () => {
    const [ollama, lmStudio] = [await closedOrigin(), await closedOrigin()];
    const started = Date.now();
    const found = await discoverLocalModels({ baseUrls: { ollama, 'lm-studio': lmStudio } });
    assert.ok(Date.now() - started < LOCAL_PROBE_TIMEOUT_MS, `took ${Date.now() - started} ms`);
    assert.deepEqual(
      found.map((s) => [s.kind, s.baseUrl, s.status, s.detail, s.models.length]),
      [
        ['ollama', ollama, 'not-running', 'connection refused', 0],
        ['lm-studio', lmStudio, 'not-running', 'connection refused', 0],
      ],
    );
    assert.equal(firstLocalModel(found), null);
    assert.equal(localServerSummary(found[0]!), `Ollama (${ollama}) not running (connection refused)`);
    onlyAsked([ollama, lmStudio]);
    assert.deepEqual(fetches.urls, [`${ollama}/api/tags`, `${lmStudio}/api/v1/models`], 'a refused list is not followed by anything');
  });

  it('Ollama with a tool-capable and a non-tool model: /api/tags, then /api/show {model} for each local model; a cloud model is listed, never asked about, never used', async () => {
    const ollama = await serve(
      ollamaAnswers([
        { name: 'gemma2:2b', capabilities: ['completion'] },
        { name: 'qwen3:8b', capabilities: ['completion', 'tools', 'thinking'] },
        { name: 'gpt-oss:120b-cloud', capabilities: ['completion', 'tools'], remote_host: 'https://ollama.com:443' },
      ]),
    );
    const lmStudio = await closedOrigin();
    const found = await discoverLocalModels({ baseUrls: { ollama: ollama.origin, 'lm-studio': lmStudio } });
    const server = found[0]!;
    assert.equal(server.status, 'running');
    assert.equal(server.detail, null);
    assert.deepEqual(byName(server), {
      'gemma2:2b': { name: 'gemma2:2b', tools: false, remote: null, loaded: null },
      'qwen3:8b': { name: 'qwen3:8b', tools: true, remote: null, loaded: null },
      'gpt-oss:120b-cloud': { name: 'gpt-oss:120b-cloud', tools: null, remote: 'https://ollama.com:443', loaded: null },
    });
    assert.deepEqual(ollama.requests.map((r) => `${r.method} ${r.path} ${JSON.stringify(r.body)}`).sort(), [
      'GET /api/tags null',
      'POST /api/show {"model":"gemma2:2b"}',
      'POST /api/show {"model":"qwen3:8b"}',
    ]);
    const first = firstLocalModel(found);
    assert.equal(first?.server.kind, 'ollama');
    assert.equal(first?.model.name, 'qwen3:8b');
    onlyAsked([ollama.origin, lmStudio]);

    const lines = discoveryLines([], found, 'qwen3:8b on Ollama (openai-compatible, …)');
    assert.equal(
      lines.find((l) => l.includes('Ollama ')),
      `  Ollama     ${ollama.origin} running; tool calling: qwen3:8b; no tool support (not usable): gemma2:2b; run elsewhere (https://ollama.com:443; not used): gpt-oss:120b-cloud`,
    );
  });

  it('an Ollama too old to report capabilities: models listed, tool support unknown, none used', async () => {
    const ollama = await serve(ollamaAnswers([{ name: 'llama3.1:8b' }]));
    const found = await discoverLocalModels({ baseUrls: { ollama: ollama.origin, 'lm-studio': await closedOrigin() } });
    assert.deepEqual(found[0]!.models, [{ name: 'llama3.1:8b', tools: null, remote: null, loaded: null }]);
    assert.match(found[0]!.detail ?? '', /reported no capabilities for 1 model .*tool support is unknown/);
    assert.equal(firstLocalModel(found), null);
  });

  it('LM Studio without its native endpoint: the models of /v1/models, tool support unknown, saying why', async () => {
    const lm = await serve(lmStudioAnswers([{ id: 'llama-3.2-3b-instruct' }, { id: 'text-embedding-nomic-embed-text-v1.5' }], { native: false }));
    const found = await discoverLocalModels({ baseUrls: { ollama: await closedOrigin(), 'lm-studio': lm.origin } });
    const server = found[1]!;
    assert.equal(server.status, 'running');
    assert.deepEqual(
      server.models.map((m) => [m.name, m.tools]),
      [
        ['llama-3.2-3b-instruct', null],
        ['text-embedding-nomic-embed-text-v1.5', null],
      ],
    );
    assert.equal(server.detail, 'GET /api/v0/models answered HTTP 404 Not Found, so tool support is unknown (models from GET /v1/models)');
    assert.deepEqual(
      lm.requests.map((r) => `${r.method} ${r.path}`),
      ['GET /api/v1/models', 'GET /api/v0/models', 'GET /v1/models'],
    );
    assert.equal(firstLocalModel(found), null, 'a model of unknown tool support is not used');
    assert.match(discoveryLines([], found, 'none').join('\n'), /tool support unknown \(not used\): llama-3\.2-3b-instruct, text-embedding-nomic-embed-text-v1\.5/);
  });

  it('LM Studio with its native endpoint: "tool_use" in capabilities is usable, loaded first; no capabilities or an embeddings model is not', async () => {
    const lm = await serve(
      lmStudioAnswers(
        [
          { id: 'mistralai/mistral-small-3.2', type: 'vlm', state: 'loaded' },
          { id: 'qwen2.5-7b-instruct', capabilities: ['tool_use'] },
          { id: 'llama-3.2-3b-instruct', state: 'loaded', capabilities: ['tool_use'] },
          { id: 'text-embedding-qwen3-embedding-0.6b', type: 'embeddings', capabilities: ['tool_use'] },
        ],
        { native: true },
      ),
    );
    const found = await discoverLocalModels({ baseUrls: { ollama: await closedOrigin(), 'lm-studio': lm.origin } });
    assert.deepEqual(
      found[1]!.models.map((m) => [m.name, m.tools, m.loaded]),
      [
        ['mistralai/mistral-small-3.2', false, true],
        ['qwen2.5-7b-instruct', true, false],
        ['llama-3.2-3b-instruct', true, true],
        ['text-embedding-qwen3-embedding-0.6b', false, false],
      ],
    );
    assert.equal(found[1]!.detail, null);
    assert.equal(firstLocalModel(found)?.model.name, 'llama-3.2-3b-instruct', 'a loaded tool-capable model first');
    assert.deepEqual(
      lm.requests.map((r) => r.path),
      ['/api/v1/models', '/api/v0/models'],
      'the native list is enough',
    );
  });

  it('LM Studio 0.4+: /api/v1/models alone; trained_for_tool_use decides, loaded instances first, an embedding model never chats', async () => {
    const lm = await serve(
      lmStudioAnswers(
        [
          { id: 'google/gemma-3-4b', type: 'vlm', state: 'loaded' },
          { id: 'qwen/qwen3-8b', capabilities: ['tool_use'] },
          { id: 'openai/gpt-oss-20b', state: 'loaded', capabilities: ['tool_use'] },
          { id: 'text-embedding-nomic-embed-text-v1.5', type: 'embeddings' },
        ],
        { native: true, v1: true },
      ),
    );
    const found = await discoverLocalModels({ baseUrls: { ollama: await closedOrigin(), 'lm-studio': lm.origin } });
    assert.deepEqual(
      found[1]!.models.map((m) => [m.name, m.tools, m.loaded]),
      [
        ['google/gemma-3-4b', false, true],
        ['qwen/qwen3-8b', true, false],
        ['openai/gpt-oss-20b', true, true],
        ['text-embedding-nomic-embed-text-v1.5', false, false],
      ],
    );
    assert.equal(found[1]!.detail, null);
    assert.equal(firstLocalModel(found)?.model.name, 'openai/gpt-oss-20b');
    assert.deepEqual(
      lm.requests.map((r) => r.path),
      ['/api/v1/models'],
      'the v1 list is enough',
    );
  });

  it('an LM Studio that requires an API token is named as such, not as a server that is down', async () => {
    const lm = await serve(lmStudioAnswers([{ id: 'qwen/qwen3-8b', capabilities: ['tool_use'] }], { native: true, v1: true, token: 'secret' }));
    const found = await discoverLocalModels({ baseUrls: { ollama: await closedOrigin(), 'lm-studio': lm.origin } });
    assert.equal(found[1]!.status, 'error');
    assert.match(found[1]!.detail ?? '', /^GET \/api\/v1\/models answered HTTP 401.*requires an API token/);
    assert.equal(firstLocalModel(found), null);
    assert.deepEqual(
      lm.requests.map((r) => r.path),
      ['/api/v1/models'],
    );
  });

  it('an LM Studio list where no model carries capabilities says nothing about tools: unknown', async () => {
    const lm = await serve(lmStudioAnswers([{ id: 'qwen2.5-7b-instruct', state: 'loaded' }], { native: true }));
    const found = await discoverLocalModels({ baseUrls: { ollama: await closedOrigin(), 'lm-studio': lm.origin } });
    assert.deepEqual(found[1]!.models, [{ name: 'qwen2.5-7b-instruct', tools: null, remote: null, loaded: true }]);
    assert.match(found[1]!.detail ?? '', /reported no capabilities, so tool support is unknown/);
  });

  it('a server that hangs past the timeout: discovery still returns quickly and says so', async () => {
    const hanging = await serve(() => 'hang');
    const ollamaShowHangs = await serve(ollamaAnswers([{ name: 'qwen3:8b', capabilities: ['tools'] }], { hangShow: true }));
    const started = Date.now();
    const found = await discoverLocalModels({ baseUrls: { ollama: ollamaShowHangs.origin, 'lm-studio': hanging.origin } });
    const took = Date.now() - started;
    // The list round and the details round are each bounded: at most two timeouts, plus slack.
    assert.ok(took < 2 * LOCAL_PROBE_TIMEOUT_MS + 400, `took ${took} ms`);
    assert.ok(took >= LOCAL_PROBE_TIMEOUT_MS - 50, `took ${took} ms: the hang was waited for`);
    assert.equal(found[1]!.status, 'no-answer');
    assert.equal(found[1]!.detail, `GET /api/v1/models did not answer within ${LOCAL_PROBE_TIMEOUT_MS} ms`);
    assert.equal(localServerSummary(found[1]!), `LM Studio (${hanging.origin}) not answering: GET /api/v1/models did not answer within ${LOCAL_PROBE_TIMEOUT_MS} ms`);
    assert.deepEqual(
      hanging.requests.map((r) => r.path),
      ['/api/v1/models'],
      'a server that does not answer is not asked again',
    );
    assert.equal(found[0]!.status, 'running');
    assert.deepEqual(found[0]!.models, [{ name: 'qwen3:8b', tools: null, remote: null, loaded: null }]);
    assert.match(found[0]!.detail ?? '', new RegExp(`1 model could not be asked about tool support: POST /api/show did not answer within ${LOCAL_PROBE_TIMEOUT_MS} ms`));
    assert.equal(firstLocalModel(found), null);
    onlyAsked([hanging.origin, ollamaShowHangs.origin]);
  });

  it('a server answering garbage JSON is not taken for Ollama or LM Studio, and says what it answered', async () => {
    const garbage = await serve(() => ({ raw: '{"models": [ {"name": "qwen3' }));
    const wrongShape = await serve(() => ({ json: { models: 'all of them', data: 42 } }));
    const found = await discoverLocalModels({ baseUrls: { ollama: garbage.origin, 'lm-studio': wrongShape.origin } });
    assert.deepEqual(
      found.map((s) => [s.status, s.detail, s.models.length]),
      [
        ['error', 'GET /api/tags answered something that is not JSON', 0],
        ['error', 'GET /api/v0/models answered JSON without a "data" list; GET /v1/models answered JSON without a "data" list', 0],
      ],
    );
    assert.equal(localServerSummary(found[0]!), `Ollama (${garbage.origin}) answering, but not as Ollama: GET /api/tags answered something that is not JSON`);
    assert.equal(firstLocalModel(found), null);
  });

  it('model names are the servers’ text: the discovery lines escape control characters; bad names are counted, not listed', async () => {
    const ollama = await serve(
      (r) => (r.path === '/api/tags' ? { json: { models: [{ name: 'evil\u001b[31m:latest' }, { name: 42 }, { name: 'x'.repeat(500) }] } } : { json: { capabilities: ['tools'] } }) as LocalAnswer,
    );
    const found = await discoverLocalModels({ baseUrls: { ollama: ollama.origin, 'lm-studio': await closedOrigin() } });
    assert.deepEqual(
      found[0]!.models.map((m) => m.name),
      ['evil\u001b[31m:latest'],
    );
    assert.equal(found[0]!.omitted, 2);
    const line = discoveryLines([], found, 'none').find((l) => l.includes('Ollama')) ?? '';
    assert.ok(!line.includes('\u001b'), line);
    assert.match(line, /tool calling: evil\\u001B\[31m:latest; 2 more not listed/);
  });

  it('refuses to ask anything that is not loopback, even when a caller passes it', async () => {
    await assert.rejects(discoverLocalModels({ baseUrls: { ollama: 'http://192.0.2.1:11434' } }), /loopback addresses only, not http:\/\/192\.0\.2\.1:11434/);
    assert.deepEqual(fetches.urls, [], 'nothing was asked');
  });
});
