import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { WRITE_BOARD_MAX_BYTES } from '../../protocol/board';
import { errorMessage } from '../../protocol/result';
import { HOST_VERSION } from '../version';
import type { JsonSchemaObject } from './tools';

/**
 * The per-seat loopback MCP server: one seat's board tools over Streamable HTTP, bound to
 * 127.0.0.1 on a random port. Every request must carry the seat's secret header (compared in
 * constant time) and a Host header naming this server's own loopback address (a DNS-rebinding
 * guard: a page that rebinds a name to 127.0.0.1 sends its own name as Host and is refused).
 *
 * Sessions are stateful (Mcp-Session-Id), the SDK's default shape that Claude Code and Codex
 * both speak; every session shares the one seat, so the board is one board however many
 * connections write it.
 *
 * It serves any tool surface, not only a board: a BoardSeat, a Flagged review seat's
 * submit_findings, an explainer's read-only tools (host/asks/explain.ts).
 */

export const SEAT_SECRET_HEADER = 'x-rennet-seat-secret';
const MCP_PATH = '/mcp';
/** Sessions kept at once; the oldest is closed beyond this (a seat reconnects, it does not fan out). */
const MAX_SESSIONS = 32;

/** What the server serves: a tool listing and a call (BoardSeat is one; read tools answer asynchronously). */
export interface ServedToolSurface {
  readonly tools: ReadonlyArray<{ name: string; description: string; inputSchema: JsonSchemaObject }>;
  call(name: string, input: unknown): { text: string; isError: boolean } | Promise<{ text: string; isError: boolean }>;
}

export interface SeatServerOptions {
  seat: ServedToolSurface;
  /** Loopback only: anything else is refused. */
  host?: '127.0.0.1';
  port?: number;
  /** Server name clients show (default `rennet`). */
  name?: string;
}

export interface SeatServerHandle {
  url: string;
  headers: { [SEAT_SECRET_HEADER]: string };
  /** Where the socket is bound (always 127.0.0.1). */
  address: AddressInfo;
  close(): Promise<void>;
}

export async function startSeatServer(options: SeatServerOptions): Promise<SeatServerHandle> {
  const host = options.host ?? '127.0.0.1';
  if (host !== '127.0.0.1') throw new Error(`the seat server binds only to 127.0.0.1, not ${String(host)}`);
  const secret = randomBytes(32).toString('hex');
  const secretDigest = createHash('sha256').update(secret).digest();
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: Server }>();
  const listing = options.seat.tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema }));
  let allowedHosts: ReadonlySet<string> = new Set();
  let allowedOrigins: ReadonlySet<string> = new Set();

  const makeServer = (): Server => {
    const server = new Server({ name: options.name ?? 'rennet', version: HOST_VERSION }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listing }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      try {
        const outcome = await options.seat.call(request.params.name, request.params.arguments ?? {});
        return { content: [{ type: 'text' as const, text: outcome.text }], isError: outcome.isError };
      } catch (error) {
        // A host fault answers as a failed tool call (the seat reads it), not as a protocol error.
        const message = errorMessage(error);
        return {
          content: [{ type: 'text' as const, text: `host error: ${message.slice(0, 500)}. The call did not complete; read the board state from your next call before retrying.` }],
          isError: true,
        };
      }
    });
    return server;
  };

  const closeSession = async (id: string): Promise<void> => {
    const entry = sessions.get(id);
    if (!entry) return;
    sessions.delete(id);
    await entry.server.close().catch(() => undefined);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    // DNS-rebinding guard first: only our own loopback authority, and no foreign browser origin.
    const hostHeader = req.headers.host;
    if (!hostHeader || !allowedHosts.has(hostHeader.toLowerCase())) return plain(res, 403, 'Forbidden: this server answers only to its own loopback address.');
    const origin = req.headers.origin;
    if (origin !== undefined && !allowedOrigins.has(origin.toLowerCase())) return plain(res, 403, 'Forbidden: cross-origin requests are refused.');
    if (!secretMatches(req.headers[SEAT_SECRET_HEADER], secretDigest)) {
      return plain(res, 401, `Unauthorized: the ${SEAT_SECRET_HEADER} header is missing or wrong.`);
    }
    const path = (req.url ?? '/').split('?')[0];
    if (path !== MCP_PATH) return plain(res, 404, `Not found: the MCP endpoint is ${MCP_PATH}.`);
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > WRITE_BOARD_MAX_BYTES * 2) return plain(res, 413, 'Payload too large.');

    const sessionHeader = req.headers['mcp-session-id'];
    if (typeof sessionHeader === 'string') {
      const entry = sessions.get(sessionHeader);
      if (!entry) return jsonRpcError(res, 404, -32001, 'Session not found: initialize again.');
      await entry.transport.handleRequest(req, res);
      return;
    }
    if (req.method !== 'POST') return jsonRpcError(res, 400, -32000, 'Bad Request: no Mcp-Session-Id; initialize with a POST first.');
    const server = makeServer();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      maxRequestBodySize: WRITE_BOARD_MAX_BYTES * 2,
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, server });
        while (sessions.size > MAX_SESSIONS) {
          const oldest = sessions.keys().next().value as string;
          void closeSession(oldest);
        }
      },
      onsessionclosed: (id) => {
        void closeSession(id);
      },
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
    // A POST that did not initialize a session (anything but `initialize`) leaves nothing behind.
    if (!transport.sessionId || !sessions.has(transport.sessionId)) await server.close().catch(() => undefined);
  };

  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) plain(res, 500, `Internal error: ${(error as Error).message}`);
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen({ host, port: options.port ?? 0, exclusive: true }, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const address = http.address() as AddressInfo;
  allowedHosts = new Set([`127.0.0.1:${address.port}`, `localhost:${address.port}`]);
  allowedOrigins = new Set([`http://127.0.0.1:${address.port}`, `http://localhost:${address.port}`]);

  let closed: Promise<void> | null = null;
  return {
    url: `http://127.0.0.1:${address.port}${MCP_PATH}`,
    headers: { [SEAT_SECRET_HEADER]: secret },
    address,
    close: () =>
      (closed ??= (async () => {
        await Promise.all([...sessions.keys()].map(closeSession));
        await new Promise<void>((resolve) => {
          http.close(() => resolve());
          http.closeAllConnections();
        });
      })()),
  };
}

function secretMatches(given: string | string[] | undefined, expected: Buffer): boolean {
  if (typeof given !== 'string') return false;
  // Hashing first makes both sides 32 bytes, so the comparison is constant-time whatever was sent.
  return timingSafeEqual(createHash('sha256').update(given).digest(), expected);
}

function plain(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end(`${message}\n`);
}

function jsonRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }));
}
