import assert from 'node:assert/strict';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ClaudeCodeHarness, ClaudeStream, claudeArgs, claudeMcpConfig } from '../../host/harness/claudeCode';
import { CodexHarness, CodexStream, codexArgs, codexHeaderEnv, codexMcpOverride, codexStderrReason, tomlString } from '../../host/harness/codex';
import type { HarnessEvent, TurnRequest } from '../../host/pipeline/ports';
import { newMark, processesMarked, removeDir, tempDir, until } from './harnessSupport';

/**
 * The CLI harnesses without the vendor CLIs: the exact argv they build, how they read the CLIs'
 * JSON lines (recorded from claude 2.1.197 and codex 0.171.0), and the process handling —
 * spawn errors, exits without a result, inherited environment, process-group kill with SIGKILL
 * escalation, stragglers — against small fake CLIs written in Node.
 */

const MCP = { url: 'http://127.0.0.1:4567/mcp', headers: { 'x-rennet-seat-secret': 's3cr3t' } };

describe('CLI harness adapters (no vendor CLI needed)', () => {
  describe('argv', () => {
    it('claude: a first turn and a follow-up', () => {
      const tools = ['cite', 'finish'];
      assert.deepEqual(claudeArgs({ prompt: 'Write it.', mcpConfigPath: '/tmp/x/mcp.json', tools, model: 'claude-sonnet-4-5', resume: null }), [
        '-p',
        '--output-format',
        'stream-json',
        '--verbose',
        '--mcp-config',
        '/tmp/x/mcp.json',
        '--strict-mcp-config',
        '--setting-sources',
        'user',
        '--tools',
        'Read,Grep,Glob',
        '--allowedTools',
        'mcp__rennet__cite,mcp__rennet__finish',
        '--model',
        'claude-sonnet-4-5',
        '--',
        'Write it.',
      ]);
      assert.deepEqual(claudeArgs({ prompt: '-a verdict', mcpConfigPath: '/c.json', tools, model: null, resume: 'sess-1' }), [
        '-p',
        '--output-format',
        'stream-json',
        '--verbose',
        '--mcp-config',
        '/c.json',
        '--strict-mcp-config',
        '--setting-sources',
        'user',
        '--tools',
        'Read,Grep,Glob',
        '--allowedTools',
        'mcp__rennet__cite,mcp__rennet__finish',
        '--resume',
        'sess-1',
        '--',
        '-a verdict',
      ]);
      const stdin = claudeArgs({ prompt: null, mcpConfigPath: '/c.json', tools: [], model: null, resume: null });
      assert.ok(!stdin.includes('--') && !stdin.includes('--allowedTools') && !stdin.includes('--model'));
      assert.deepEqual(JSON.parse(claudeMcpConfig(MCP)), { mcpServers: { rennet: { type: 'http', url: MCP.url, headers: { 'x-rennet-seat-secret': 's3cr3t' } } } });
    });

    it('codex: a first turn and a resume; the secret stays out of argv', () => {
      const override = 'mcp_servers.rennet={url="http://127.0.0.1:4567/mcp",env_http_headers={"x-rennet-seat-secret"="RENNET_MCP_HEADER_0"},default_tools_approval_mode="approve",required=true}';
      assert.equal(codexMcpOverride(MCP), override);
      assert.deepEqual(codexArgs({ prompt: 'Write it.', mcp: MCP, model: 'gpt-5.5', resume: null }), [
        'exec',
        '--json',
        '--skip-git-repo-check',
        '-s',
        'read-only',
        '-m',
        'gpt-5.5',
        '-c',
        override,
        '-c',
        'project_doc_max_bytes=0',
        '--',
        'Write it.',
      ]);
      assert.deepEqual(codexArgs({ prompt: 'VERDICT', mcp: MCP, model: null, resume: '01a2-thread' }), [
        'exec',
        '--json',
        '--skip-git-repo-check',
        '-s',
        'read-only',
        '-c',
        override,
        '-c',
        'project_doc_max_bytes=0',
        'resume',
        '01a2-thread',
        '--',
        'VERDICT',
      ]);
      assert.deepEqual(codexArgs({ prompt: null, mcp: MCP, model: null, resume: null }).slice(-2), ['--', '-']);
      assert.ok(!codexArgs({ prompt: 'x', mcp: MCP, model: null, resume: null }).join(' ').includes('s3cr3t'));
      assert.deepEqual(codexHeaderEnv(MCP), { RENNET_MCP_HEADER_0: 's3cr3t' });
    });

    it('codex: TOML strings are escaped', () => {
      assert.equal(tomlString('a"b\\c\nd\u0001é'), '"a\\"b\\\\c\\u000ad\\u0001é"');
    });
  });

  describe('stream parsing', () => {
    it('claude stream-json: session, events, usage with cache tokens, cost, error result', () => {
      const events: HarnessEvent[] = [];
      const s = new ClaudeStream((e) => events.push(e));
      const lines = [
        '{"type":"system","subtype":"init","session_id":"sess-1","mcp_servers":[{"name":"rennet","status":"connected"}],"model":"claude-sonnet-4-5"}',
        '{"type":"assistant","message":{"content":[{"type":"text","text":"Citing."},{"type":"tool_use","id":"toolu_1","name":"mcp__rennet__cite","input":{}}]},"session_id":"sess-1"}',
        '{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"refused","is_error":true,"tool_use_id":"toolu_1"}]},"session_id":"sess-1"}',
        'not json at all',
        '{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_2","name":"Read","input":{}}]}}',
        '{"type":"user","message":{"content":[{"type":"tool_result","content":"ok","tool_use_id":"toolu_2"}]}}',
        '{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"sess-1","total_cost_usd":0.0081,"usage":{"input_tokens":200,"cache_creation_input_tokens":30,"cache_read_input_tokens":70,"output_tokens":14}}',
      ];
      for (const l of lines) s.line(l);
      assert.equal(s.sessionId, 'sess-1');
      assert.equal(s.mcpFailed(), false);
      assert.deepEqual(events, [
        { type: 'text', text: 'Citing.' },
        { type: 'tool-call', name: 'cite' },
        { type: 'tool-result', name: 'cite', isError: true },
        { type: 'tool-call', name: 'Read' },
        { type: 'tool-result', name: 'Read', isError: false },
      ]);
      assert.deepEqual(s.usage(), { inputTokens: 300, outputTokens: 14, priceUsd: 0.0081 });

      const e = new ClaudeStream(() => undefined);
      e.line('{"type":"result","subtype":"success","is_error":true,"result":"API Error: 400 nope","modelUsage":{"m":{"costUSD":0.5}},"usage":{"input_tokens":0,"output_tokens":0}}');
      assert.equal(e.result?.isError, true);
      assert.equal(e.result?.text, 'API Error: 400 nope');
      assert.deepEqual(e.usage(), { inputTokens: 0, outputTokens: 0, priceUsd: 0.5 });
      assert.equal(new ClaudeStream(() => undefined).usage(), null, 'no result line: no usage (never a zero)');

      let stopped = false;
      const f = new ClaudeStream(
        () => undefined,
        () => (stopped = true),
      );
      f.line('{"type":"system","subtype":"init","mcp_servers":[{"name":"rennet","status":"failed"}]}');
      assert.equal(f.mcpFailed(), true);
      assert.equal(stopped, true);
    });

    it('codex --json: thread, items, warnings, usage as a difference of thread totals, failure', () => {
      const events: HarnessEvent[] = [];
      const s = new CodexStream((e) => events.push(e));
      for (const l of [
        '{"type":"thread.started","thread_id":"th-1"}',
        '{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `scripted` not found."}}',
        '{"type":"turn.started"}',
        '{"type":"item.started","item":{"id":"item_1","type":"mcp_tool_call","server":"rennet","tool":"cite","status":"in_progress"}}',
        '{"type":"item.completed","item":{"id":"item_1","type":"mcp_tool_call","server":"rennet","tool":"cite","result":{"content":[]},"error":null,"status":"failed"}}',
        '{"type":"item.completed","item":{"id":"item_2","type":"mcp_tool_call","server":"rennet","tool":"finish","result":{"content":[]},"error":null,"status":"completed"}}',
        '{"type":"item.started","item":{"id":"item_3","type":"command_execution","command":"rg x","status":"in_progress"}}',
        '{"type":"item.completed","item":{"id":"item_3","type":"command_execution","command":"rg x","exit_code":1,"status":"completed"}}',
        '{"type":"item.completed","item":{"id":"item_4","type":"agent_message","text":"done"}}',
        '{"type":"turn.completed","usage":{"input_tokens":300,"cached_input_tokens":60,"output_tokens":15}}',
      ])
        s.line(l);
      assert.equal(s.threadId, 'th-1');
      assert.equal(s.completed, true);
      assert.equal(s.failure, null);
      assert.deepEqual(events, [
        { type: 'tool-call', name: 'cite' },
        { type: 'tool-result', name: 'cite', isError: true },
        { type: 'tool-call', name: 'finish' },
        { type: 'tool-result', name: 'finish', isError: false },
        { type: 'tool-call', name: 'shell' },
        { type: 'tool-result', name: 'shell', isError: true },
        { type: 'text', text: 'done' },
      ]);
      assert.deepEqual(s.turnUsage(null), { inputTokens: 300, outputTokens: 15, priceUsd: null });
      assert.deepEqual(s.turnUsage({ input: 200, output: 10 }), { inputTokens: 100, outputTokens: 5, priceUsd: null });

      const f = new CodexStream(() => undefined);
      f.line('{"type":"error","message":"Reconnecting... 1/5"}');
      f.line('{"type":"turn.failed","error":{"message":"unexpected status 400"}}');
      assert.equal(f.failure, 'unexpected status 400');
      assert.equal(f.lastError, 'Reconnecting... 1/5');
      assert.equal(f.turnUsage(null), null);
      assert.equal(
        codexStderrReason(
          'WARNING: x\nReading additional input from stdin...\n2026-11-30T11:55:36.508772Z ERROR codex_core::session: Failed to create session: required MCP servers failed to initialize: rennet: boom\n',
        ),
        'Failed to create session: required MCP servers failed to initialize: rennet: boom',
      );
    });
  });

  describe('processes (fake CLIs)', function () {
    this.timeout(30_000);
    let dir: string;
    beforeEach(() => (dir = tempDir('rennet-fake-cli-')));
    afterEach(() => removeDir(dir));

    /** A fake CLI: a Node script run by this very Node. */
    const fake = (name: string, body: string): string => {
      const path = join(dir, name);
      writeFileSync(path, `#!${process.execPath}\n${body}\n`);
      chmodSync(path, 0o755);
      return path;
    };
    const request = (overrides: Partial<TurnRequest> = {}, events: HarnessEvent[] = []): TurnRequest => ({
      seat: { seatId: 'sequence:drafter', lens: 'sequence', role: 'drafter' },
      prompt: 'Write it.',
      followUp: false,
      cwd: dir,
      tools: { tools: [{ name: 'cite', description: '', inputSchema: {} }], call: async () => ({ text: '', isError: false }) },
      mcp: MCP,
      signal: new AbortController().signal,
      onEvent: (e) => events.push(e),
      ...overrides,
    });

    it('a missing executable fails with the spawn error; no MCP endpoint fails without spawning', async () => {
      const claude = await new ClaudeCodeHarness({ bin: join(dir, 'no-such-claude') }).runTurn(request());
      assert.equal(claude.outcome, 'failed');
      assert.match(claude.message ?? '', /^could not start Claude Code \(.*no-such-claude\): spawn .*no-such-claude ENOENT$/);
      const codex = await new CodexHarness({ bin: join(dir, 'no-such-codex') }).runTurn(request());
      assert.match(codex.message ?? '', /^could not start Codex \(.*no-such-codex\): spawn .*no-such-codex ENOENT$/);
      const none = await new ClaudeCodeHarness({ bin: join(dir, 'no-such-claude') }).runTurn(request({ mcp: null }));
      assert.match(none.message ?? '', /this turn has none/);
    });

    it('runs in request.cwd with the inherited environment (HOME untouched) plus options.env; argv as built', async () => {
      const bin = fake(
        'claude',
        `const fs = require('node:fs');
         const cfg = process.argv[process.argv.indexOf('--mcp-config') + 1];
         const said = { argv: process.argv.slice(2), cwd: process.cwd(), home: process.env.HOME, extra: process.env.RENNET_EXTRA, config: fs.readFileSync(cfg, 'utf8'), mode: fs.statSync(cfg).mode & 0o777 };
         console.log(JSON.stringify({ type: 'system', subtype: 'init', session_id: 'fake-session', mcp_servers: [{ name: 'rennet', status: 'connected' }] }));
         console.log(JSON.stringify({ type: 'assistant', message: { content: [{ type: 'text', text: JSON.stringify(said) }] } }));
         console.log(JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: 'ok', session_id: 'fake-session', total_cost_usd: 0.25, usage: { input_tokens: 3, output_tokens: 4 } }));`,
      );
      const events: HarnessEvent[] = [];
      const harness = new ClaudeCodeHarness({ bin, env: { RENNET_EXTRA: 'added' } });
      const result = await harness.runTurn(request({}, events));
      assert.deepEqual(result, { outcome: 'ended', message: null, usage: { inputTokens: 3, outputTokens: 4, priceUsd: 0.25 } });
      const said = JSON.parse((events[0] as { text: string }).text) as { argv: string[]; cwd: string; home: string; extra: string; config: string; mode: number };
      assert.equal(said.home, process.env.HOME);
      assert.equal(said.extra, 'added');
      assert.equal(said.cwd, dir);
      assert.equal(said.mode, 0o600);
      assert.deepEqual(JSON.parse(said.config), JSON.parse(claudeMcpConfig(MCP)));
      assert.deepEqual(said.argv, claudeArgs({ prompt: 'Write it.', mcpConfigPath: said.argv[said.argv.indexOf('--mcp-config') + 1] as string, tools: ['cite'], model: null, resume: null }));

      // The follow-up resumes the session the first turn's stream named.
      const again: HarnessEvent[] = [];
      await harness.runTurn(request({ followUp: true, prompt: 'VERDICT' }, again));
      const resumed = JSON.parse((again[0] as { text: string }).text) as { argv: string[] };
      assert.deepEqual(resumed.argv.slice(-4), ['--resume', 'fake-session', '--', 'VERDICT']);
    });

    it('an exit without a result line fails with the exit and stderr; a follow-up with no session replays the first prompt', async () => {
      const argvFile = join(dir, 'argv.json');
      const bin = fake(
        'claude',
        `require('node:fs').writeFileSync(${JSON.stringify(argvFile)}, JSON.stringify(process.argv.slice(2))); process.stderr.write('Invalid API key · Please run /login\\n'); process.exit(1);`,
      );
      const harness = new ClaudeCodeHarness({ bin });
      const result = await harness.runTurn(request());
      assert.deepEqual(result, { outcome: 'failed', message: 'Claude Code exited with code 1 before its result: Invalid API key · Please run /login', usage: null });
      // No session was ever named: the follow-up cannot resume, so it starts a thread carrying the first prompt, then the verdict.
      await harness.runTurn(request({ followUp: true, prompt: 'VERDICT' }));
      const argv = JSON.parse(readFileSync(argvFile, 'utf8')) as string[];
      assert.ok(!argv.includes('--resume'));
      assert.deepEqual(argv.slice(-2), ['--', 'Write it.\n\nVERDICT']);
      const codexBin = fake('codex', `process.stderr.write('Error: config.toml: unknown field\\n'); process.exit(2);`);
      const codex = await new CodexHarness({ bin: codexBin }).runTurn(request());
      assert.deepEqual(codex, { outcome: 'failed', message: 'Codex exited with code 2 before the turn completed: Error: config.toml: unknown field', usage: null });
    });

    it('abort kills the whole group, escalating to SIGKILL for a process that ignores SIGTERM', async () => {
      const mark = newMark();
      const bin = fake(
        'codex',
        `const { spawn } = require('node:child_process');
         // A leader that ignores SIGTERM — its handler installed before the grandchild exists, so
         // the test, which waits for both processes, never aborts a leader SIGTERM would still kill —
         // and a grandchild that ignores it too.
         process.on('SIGTERM', () => {});
         spawn(process.execPath, ['-e', "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000)"], { stdio: 'ignore' });
         console.log(JSON.stringify({ type: 'thread.started', thread_id: 'th' }));
         setInterval(() => {}, 1000);`,
      );
      const controller = new AbortController();
      const running = new CodexHarness({ bin, env: { RENNET_TEST_MARK: mark }, graceMs: 300 }).runTurn(request({ signal: controller.signal }));
      const procs = await until(
        () => {
          const p = processesMarked(mark);
          return p.length >= 2 ? p : null;
        },
        'the fake CLI and its grandchild',
        10_000,
      );
      assert.equal(new Set(procs.map((p) => p.pgid)).size, 1);
      const started = Date.now();
      controller.abort();
      const result = await running;
      assert.equal(result.outcome, 'aborted');
      assert.ok(Date.now() - started >= 250, 'SIGTERM was ignored, SIGKILL came after the grace period');
      assert.deepEqual(processesMarked(mark), []);
    });

    it('a CLI that exits normally leaves no straggler behind', async () => {
      const mark = newMark();
      const bin = fake(
        'claude',
        `const { spawn } = require('node:child_process');
         const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
         child.unref();
         console.log(JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: 'ok', usage: { input_tokens: 1, output_tokens: 1 } }));
         setTimeout(() => process.exit(0), 200);`,
      );
      const result = await new ClaudeCodeHarness({ bin, env: { RENNET_TEST_MARK: mark } }).runTurn(request());
      assert.equal(result.outcome, 'ended', result.message ?? '');
      await until(() => processesMarked(mark).length === 0, 'the straggler to be gone', 5_000);
    });

    it('an aborted signal before the turn starts spawns nothing', async () => {
      const controller = new AbortController();
      controller.abort();
      const result = await new ClaudeCodeHarness({ bin: join(dir, 'never-run') }).runTurn(request({ signal: controller.signal }));
      assert.deepEqual(result, { outcome: 'aborted', message: 'the turn was cancelled', usage: null });
    });
  });
});
