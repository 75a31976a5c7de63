import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCitationIndex } from '../../host/board/citations';
import { startSeatServer } from '../../host/board/mcpServer';
import { BoardSeat } from '../../host/board/seat';
import { emptyBoard } from '../../host/board/state';
import { capturedFixture } from './mcpFixture';

/**
 * The real vendor CLIs against the seat server, with a scripted model on loopback (no real model
 * call). `npm test` installs both (test/install-agent-clis.sh) and passes their paths:
 *   RENNET_CLAUDE_BIN=/path/to/claude   RENNET_CODEX_BIN=/path/to/codex
 * A bare `npx mocha` without them marks these two pending, and run-all counts a pending test as
 * a failure, so they never pass silently.
 * Each CLI writes the same small Sequence board: a refused citation, a citation, a section, a
 * step, the document, finish.
 */

type Step = { tool: string; input: (results: string[]) => Record<string, unknown> };
const idIn = (text: string | undefined) => /\be\d+\b/.exec(text ?? '')?.[0];
const STEPS: Step[] = [
  { tool: 'cite', input: () => ({ path: 'src/app.ts', side: 'head', start_line: 12, end_line: 14 }) },
  { tool: 'cite', input: () => ({ path: 'src/app.ts', side: 'head', start_line: 4, end_line: 6 }) },
  { tool: 'add_section', input: () => ({ title: 'Reading order', body_markdown: 'Two lines of the module change.' }) },
  { tool: 'add_order_step', input: (r) => ({ title: 'Line five changes', explanation_markdown: 'The fifth line now says it changed.', span: idIn(r[1]), parent_id: idIn(r[2]) }) },
  { tool: 'set_document', input: () => ({ title: 'Two lines change', intro_markdown: 'Two lines now say they changed. Nothing else moves.' }) },
  { tool: 'finish', input: () => ({}) },
];

function listen(handler: (body: Record<string, unknown>, url: string) => { status: number; type: string; body: string }): Promise<Server> {
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
    req.on('end', () => {
      const out = handler(raw ? (JSON.parse(raw) as Record<string, unknown>) : {}, req.url ?? '');
      res.writeHead(out.status, { 'content-type': out.type }).end(out.body);
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const sse = (events: Array<[string, Record<string, unknown>]>) => events.map(([type, data]) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`).join('');

/** Anthropic Messages (streaming, tool_use) — what Claude Code speaks. */
function fakeAnthropic(): Promise<Server> {
  return listen((body, url) => {
    if (url.includes('count_tokens')) return { status: 200, type: 'application/json', body: '{"input_tokens":10}' };
    if (!url.startsWith('/v1/messages')) return { status: 404, type: 'application/json', body: '{}' };
    const tools = ((body.tools ?? []) as Array<{ name: string }>).map((t) => t.name);
    const results: string[] = [];
    for (const m of (body.messages ?? []) as Array<{ content: unknown }>) {
      if (!Array.isArray(m.content)) continue;
      for (const b of m.content as Array<{ type: string; content?: unknown }>) {
        if (b.type !== 'tool_result') continue;
        results.push(typeof b.content === 'string' ? b.content : ((b.content ?? []) as Array<{ text?: string }>).map((x) => x.text ?? '').join(''));
      }
    }
    const step = tools.some((t) => t.startsWith('mcp__rennet__')) ? STEPS[results.length] : undefined;
    const block = step ? { type: 'tool_use', id: `toolu_${results.length}`, name: `mcp__rennet__${step.tool}`, input: step.input(results) } : { type: 'text', text: 'done' };
    const stop = step ? 'tool_use' : 'end_turn';
    const message = {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: String(body.model ?? 'fake'),
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 1 },
    };
    if (!body.stream) return { status: 200, type: 'application/json', body: JSON.stringify({ ...message, content: [block], stop_reason: stop }) };
    const start = block.type === 'tool_use' ? { ...block, input: {} } : { type: 'text', text: '' };
    const delta = block.type === 'tool_use' ? { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } : { type: 'text_delta', text: 'done' };
    return {
      status: 200,
      type: 'text/event-stream',
      body: sse([
        ['message_start', { message }],
        ['content_block_start', { index: 0, content_block: start }],
        ['content_block_delta', { index: 0, delta }],
        ['content_block_stop', { index: 0 }],
        ['message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 5 } }],
        ['message_stop', {}],
      ]),
    };
  });
}

/** OpenAI Responses (streaming, namespaced function calls) — what Codex speaks. */
function fakeResponses(): Promise<Server> {
  return listen((body, url) => {
    if (!url.includes('/responses')) return { status: 404, type: 'application/json', body: '{}' };
    const outputs = ((body.input ?? []) as Array<{ type: string; output?: unknown }>)
      .filter((i) => i.type === 'function_call_output')
      .map((i) => (typeof i.output === 'string' ? i.output : JSON.stringify(i.output)));
    const step = JSON.stringify(body.tools ?? []).includes('mcp__rennet') ? STEPS[outputs.length] : undefined;
    const item = step
      ? {
          type: 'function_call',
          id: `fc_${outputs.length}`,
          call_id: `call_${outputs.length}`,
          name: step.tool,
          namespace: 'mcp__rennet',
          arguments: JSON.stringify(step.input(outputs)),
          status: 'completed',
        }
      : { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'done', annotations: [] }] };
    const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 };
    return {
      status: 200,
      type: 'text/event-stream',
      body: sse([
        ['response.created', { response: { id: 'resp_1', status: 'in_progress', output: [] } }],
        ['response.output_item.added', { output_index: 0, item }],
        ['response.output_item.done', { output_index: 0, item }],
        ['response.completed', { response: { id: 'resp_1', status: 'completed', output: [item], usage } }],
      ]),
    };
  });
}

function run(bin: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(bin, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('seat server with the real vendor CLIs (opt-in)', function () {
  this.timeout(180_000);

  async function driveWith(author: string, drive: (server: { url: string; secret: string; dir: string; home: string }) => Promise<void>) {
    const { repo, patchset } = await capturedFixture();
    const home = mkdtempSync(join(tmpdir(), `rennet-${author}-home-`));
    const seat = new BoardSeat({ state: emptyBoard('sequence', patchset.id), context: { author, citations: buildCitationIndex(patchset) } });
    const server = await startSeatServer({ seat });
    try {
      await drive({ url: server.url, secret: server.headers['x-rennet-seat-secret'], dir: repo.dir, home });
      const board = seat.snapshot();
      assert.equal(board.status, 'finished', JSON.stringify(board));
      assert.deepEqual(
        board.elements.map((e) => e.kind),
        ['code_ref', 'section', 'order_step'],
      );
      assert.equal(seat.stats().refusals, 1, 'the citation outside the changed regions');
    } finally {
      await server.close();
      repo.cleanup();
      rmSync(home, { recursive: true, force: true });
    }
  }

  it('Claude Code writes and finishes a board through the seat server', async function () {
    const bin = process.env.RENNET_CLAUDE_BIN;
    if (!bin) this.skip();
    const model = await fakeAnthropic();
    try {
      await driveWith('claude', async ({ url, secret, dir, home }) => {
        const config = join(home, 'mcp.json');
        writeFileSync(config, JSON.stringify({ mcpServers: { rennet: { type: 'http', url, headers: { 'x-rennet-seat-secret': secret } } } }));
        const allowed = STEPS.map((s) => `mcp__rennet__${s.tool}`).join(',');
        const out = await run(
          bin!,
          [
            '-p',
            'Write the board.',
            '--mcp-config',
            config,
            '--strict-mcp-config',
            '--tools',
            'Read,Grep,Glob',
            '--allowedTools',
            allowed,
            '--output-format',
            'stream-json',
            '--verbose',
            '--model',
            'claude-sonnet-4-5',
          ],
          dir,
          {
            ...process.env,
            HOME: home,
            ANTHROPIC_BASE_URL: `http://127.0.0.1:${(model.address() as AddressInfo).port}`,
            ANTHROPIC_API_KEY: 'sk-scripted',
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
          },
        );
        assert.equal(out.code, 0, out.stderr);
        assert.match(out.stdout, /"name":"rennet","status":"connected"/);
        assert.match(out.stdout, /nearest changed range: src\/app\.ts:2-8/);
      });
    } finally {
      model.close();
    }
  });

  it('Codex writes and finishes a board through the seat server', async function () {
    const bin = process.env.RENNET_CODEX_BIN;
    if (!bin) this.skip();
    const model = await fakeResponses();
    try {
      await driveWith('codex', async ({ url, secret, dir, home }) => {
        const port = (model.address() as AddressInfo).port;
        const out = await run(
          bin!,
          [
            'exec',
            '--json',
            '--skip-git-repo-check',
            '-s',
            'read-only',
            '-m',
            'scripted',
            '-c',
            'model_provider=fake',
            '-c',
            `model_providers.fake={name="fake",base_url="http://127.0.0.1:${port}/v1",env_key="FAKE_KEY",wire_api="responses"}`,
            '-c',
            `mcp_servers.rennet={url="${url}",http_headers={"x-rennet-seat-secret"="${secret}"},default_tools_approval_mode="approve"}`,
            'Write the board.',
          ],
          dir,
          { ...process.env, CODEX_HOME: home, HOME: home, FAKE_KEY: 'scripted' },
        );
        assert.equal(out.code, 0, out.stderr);
        assert.match(out.stdout, /"type":"mcp_tool_call"/);
        assert.match(out.stdout, /settled: the board is finished/);
      });
    } finally {
      model.close();
    }
  });
});
