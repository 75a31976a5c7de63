import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * Fake local model servers for local discovery tests (host/harness/discover.ts): real HTTP servers on
 * 127.0.0.1 (ephemeral ports) that answer in Ollama's and LM Studio's wire shapes and record every
 * request they receive. Never a real model.
 *
 * - Ollama: `GET /api/tags` → `{ models: [{ name, model, modified_at, size, digest, details, remote_host? }] }`;
 *   `POST /api/show {"model"}` → `{ …, capabilities }` (omitted for a model given none: an old Ollama);
 *   `POST /v1/chat/completions` (non-streamed) → one assistant message, no tool call.
 * - LM Studio: `GET /api/v0/models` → `{ object: "list", data: [{ id, object, type, state, capabilities? }] }`
 *   (404 when the test says the native API is not served); `GET /v1/models` → `{ object: "list", data: [{ id, object }] }`.
 */

export interface RecordedLocalRequest {
  method: string;
  path: string;
  /** The parsed JSON body, or null. */
  body: unknown;
  /** The request's headers (lower-case names), for the servers that check a token. */
  headers?: Record<string, string | string[] | undefined>;
}

/** An answer: a status and a JSON value or raw text, or `hang` (the request is never answered). */
export type LocalAnswer = { status?: number; json?: unknown; raw?: string } | 'hang';

export interface FakeLocalServer {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  requests: RecordedLocalRequest[];
  close(): Promise<void>;
}

export async function startFakeServer(answer: (request: RecordedLocalRequest) => LocalAnswer): Promise<FakeLocalServer> {
  const requests: RecordedLocalRequest[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown = null;
      try {
        body = raw ? (JSON.parse(raw) as unknown) : null;
      } catch {
        body = null;
      }
      const request = { method: req.method ?? '', path: req.url ?? '', body, headers: req.headers };
      requests.push(request);
      const a = answer(request);
      if (a === 'hang') return;
      res.writeHead(a.status ?? 200, { 'content-type': 'application/json' });
      res.end(a.raw ?? JSON.stringify(a.json ?? {}));
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

const NOT_FOUND: LocalAnswer = { status: 404, raw: '404 page not found' };

export interface FakeOllamaModel {
  name: string;
  /** Omitted: /api/show answers without `capabilities` (an Ollama too old to report them). */
  capabilities?: string[];
  /** An Ollama cloud model. */
  remote_host?: string;
}

export function ollamaAnswers(models: FakeOllamaModel[], options: { hangShow?: boolean; chatText?: string } = {}): (r: RecordedLocalRequest) => LocalAnswer {
  return (r) => {
    if (r.method === 'GET' && r.path === '/api/tags') {
      return {
        json: {
          models: models.map((m) => ({
            name: m.name,
            model: m.name,
            modified_at: '2025-10-03T23:34:03.409490317-07:00',
            size: 3338801804,
            digest: 'a2af6cc3eb7fa8be8504abaf9b04e88f17a119ec3f04a3addf55f92841195f5a',
            details: { format: 'gguf', family: 'llama', families: ['llama'], parameter_size: '8B', quantization_level: 'Q4_K_M' },
            ...(m.remote_host ? { remote_model: m.name.replace(/-cloud$/, ''), remote_host: m.remote_host } : {}),
          })),
        },
      };
    }
    if (r.method === 'POST' && r.path === '/api/show') {
      if (options.hangShow) return 'hang';
      const name = (r.body as { model?: unknown } | null)?.model;
      const model = models.find((m) => m.name === name);
      if (!model) return { status: 404, json: { error: `model '${String(name)}' not found` } };
      return {
        json: {
          license: 'Terms of use…',
          modelfile: '# Modelfile',
          parameters: 'temperature 0.7',
          template: '{{ .Prompt }}',
          details: { parent_model: '', format: 'gguf', family: 'llama' },
          model_info: { 'general.architecture': 'llama' },
          ...(model.capabilities ? { capabilities: model.capabilities } : {}),
          modified_at: '2025-08-14T15:49:43.634137516-07:00',
        },
      };
    }
    if (r.method === 'GET' && r.path === '/v1/models') {
      return { json: { object: 'list', data: models.map((m) => ({ id: m.name, object: 'model', created: 1, owned_by: 'library' })) } };
    }
    if (r.method === 'POST' && r.path === '/v1/chat/completions') {
      const model = (r.body as { model?: unknown } | null)?.model;
      return {
        json: {
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created: 1,
          model,
          choices: [{ index: 0, message: { role: 'assistant', content: options.chatText ?? 'Nothing to do.' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 },
        },
      };
    }
    return NOT_FOUND;
  };
}

export interface FakeLmStudioModel {
  id: string;
  type?: 'llm' | 'vlm' | 'embeddings';
  state?: 'loaded' | 'not-loaded';
  capabilities?: string[];
}

/**
 * LM Studio's answers. `native: false`: `/api/v0/models` is not served (404), as on an LM Studio
 * without its native API. `v1: true`: LM Studio 0.4+, which also serves `/api/v1/models` (its
 * `models[].capabilities.trained_for_tool_use` set from `capabilities` holding "tool_use"; an
 * embedding model carries no capabilities). `token`: every endpoint wants this bearer token (401).
 */
export function lmStudioAnswers(models: FakeLmStudioModel[], options: { native: boolean; v1?: boolean; token?: string }): (r: RecordedLocalRequest) => LocalAnswer {
  return (r) => {
    if (options.token !== undefined && r.headers?.authorization !== `Bearer ${options.token}`) {
      return { status: 401, json: { error: { message: 'Invalid or missing API token', type: 'invalid_request_error' } } };
    }
    if (options.v1 && r.method === 'GET' && r.path === '/api/v1/models') {
      return {
        json: {
          models: models.map((m) => {
            const embedding = m.type === 'embeddings';
            return {
              type: embedding ? 'embedding' : 'llm',
              publisher: 'lmstudio-community',
              key: m.id,
              display_name: m.id,
              ...(embedding ? {} : { architecture: 'llama' }),
              quantization: { name: 'Q4_K_M', bits_per_weight: 4 },
              size_bytes: 4_920_000_000,
              params_string: '7B',
              loaded_instances: m.state === 'loaded' ? [{ id: m.id, config: { context_length: 8192 } }] : [],
              max_context_length: 131072,
              format: 'gguf',
              ...(embedding ? {} : { capabilities: { vision: m.type === 'vlm', trained_for_tool_use: (m.capabilities ?? []).includes('tool_use') } }),
            };
          }),
        },
      };
    }
    if (r.method === 'GET' && r.path === '/api/v0/models') {
      if (!options.native) return { status: 404, json: { error: 'Unexpected endpoint or method. (GET /api/v0/models)' } };
      return {
        json: {
          object: 'list',
          data: models.map((m) => ({
            id: m.id,
            object: 'model',
            type: m.type ?? 'llm',
            publisher: 'lmstudio-community',
            arch: 'llama',
            compatibility_type: 'gguf',
            quantization: 'Q4_K_M',
            state: m.state ?? 'not-loaded',
            max_context_length: 131072,
            ...(m.capabilities ? { capabilities: m.capabilities } : {}),
          })),
        },
      };
    }
    if (r.method === 'GET' && r.path === '/v1/models') return { json: { object: 'list', data: models.map((m) => ({ id: m.id, object: 'model', owned_by: 'organization_owner' })) } };
    return NOT_FOUND;
  };
}

/** The origin of a loopback port nothing listens on (a server that is not running). */
export async function closedOrigin(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** Records the URL of every fetch made in the process until restored (calls still go through). */
export function recordFetches(): { urls: string[]; restore(): void } {
  const original = globalThis.fetch;
  const urls: string[] = [];
  globalThis.fetch = (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
    urls.push(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    return original(input, init);
  };
  return { urls, restore: () => (globalThis.fetch = original) };
}
