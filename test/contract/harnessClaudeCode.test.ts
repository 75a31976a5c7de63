import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClaudeCodeHarness } from '../../host/harness/claudeCode';
import type { HarnessEvent } from '../../host/pipeline/ports';
import { startAnthropicServer, type ScriptedAnthropicServer } from '../servers';
import {
  FIRST_TURN_STEPS,
  FOLLOW_UP_STEPS,
  SETTLING_STEPS,
  anthropicUserText,
  boardToolCalls,
  claudeTestEnv,
  newMark,
  ownPgid,
  processesMarked,
  psGroup,
  realBin,
  removeDir,
  sequenceSeat,
  tempDir,
  turn,
  until,
  type SeatRig,
} from './harnessSupport';

/**
 * The Claude Code harness driving the REAL `claude` CLI (RENNET_CLAUDE_BIN, installed by
 * test/install-agent-clis.sh) against the scripted Anthropic server on loopback — never a real
 * model — writing a real board through the seat's real MCP server. The test isolates HOME and
 * points ANTHROPIC_BASE_URL at the scripted server; the harness itself never does either.
 */

const MODEL = 'claude-sonnet-4-5';
const PROMPT = 'Seat: sequence:drafter\nWrite the Sequence board for this change.';

describe('ClaudeCodeHarness with the real claude CLI', function () {
  this.timeout(120_000);
  let bin: string;
  let model: ScriptedAnthropicServer | null = null;
  let rig: SeatRig | null = null;
  let home = '';
  let mark: string;

  beforeEach(function () {
    bin = realBin(this, 'RENNET_CLAUDE_BIN');
    home = tempDir('rennet-claude-home-');
    mark = newMark();
  });

  afterEach(async () => {
    await model?.close();
    await rig?.cleanup();
    model = null;
    rig = null;
    removeDir(home);
    home = '';
  });

  const harness = (server: ScriptedAnthropicServer) => new ClaudeCodeHarness({ bin, model: MODEL, env: claudeTestEnv(home, server.origin, mark) });
  const messageRequests = (server: ScriptedAnthropicServer) => server.requestsTo('/v1/messages').filter((r) => r.seat !== null);

  it('settles a Sequence board through the seat server: events, a refused call as an error result, usage and cost', async () => {
    model = await startAnthropicServer({ seats: { 'sequence:drafter': SETTLING_STEPS } });
    rig = await sequenceSeat('claude');
    const events: HarnessEvent[] = [];
    const configsBefore = readdirSync(tmpdir()).filter((n) => n.startsWith('rennet-claude-mcp-')).length;

    const result = await harness(model).runTurn(turn(rig, PROMPT, { events }));

    assert.equal(result.outcome, 'ended', result.message ?? '');
    assert.equal(result.message, null);
    const board = rig.seat.snapshot();
    assert.equal(board.status, 'finished', JSON.stringify(board));
    assert.deepEqual(
      board.elements.map((e) => e.kind),
      ['code_ref', 'section', 'order_step'],
    );
    assert.equal(rig.seat.stats().refusals, 1);
    assert.deepEqual(boardToolCalls(events), [
      { name: 'cite', isError: true },
      { name: 'cite', isError: false },
      { name: 'add_section', isError: false },
      { name: 'add_order_step', isError: false },
      { name: 'set_document', isError: false },
      { name: 'finish', isError: false },
    ]);
    assert.deepEqual(
      events.filter((e) => e.type === 'tool-call').map((e) => (e as { name: string }).name),
      ['cite', 'cite', 'add_section', 'add_order_step', 'set_document', 'finish'],
    );
    assert.ok(
      events.some((e) => e.type === 'text' && e.text === 'The board is finished.'),
      JSON.stringify(events),
    );
    // Seven model requests at the scripted server's default usage (100 in, 20 out each).
    assert.equal(messageRequests(model).length, 7);
    assert.deepEqual({ input: result.usage?.inputTokens, output: result.usage?.outputTokens }, { input: 700, output: 140 });
    assert.equal(typeof result.usage?.priceUsd, 'number');
    assert.ok((result.usage?.priceUsd ?? 0) > 0, 'the CLI reports a cost for the turn');

    // What the model was offered: the read-only built-ins and exactly the seat's board tools.
    const offered = ((messageRequests(model)[0]?.body?.tools ?? []) as Array<{ name: string }>).map((t) => t.name).sort();
    const board_tools = rig.seat.tools.map((t) => `mcp__rennet__${t.name}`);
    assert.deepEqual(offered, ['Glob', 'Grep', 'Read', ...board_tools].sort());
    assert.equal(messageRequests(model)[0]?.body?.model, MODEL);
    // The private MCP config file is gone.
    assert.equal(readdirSync(tmpdir()).filter((n) => n.startsWith('rennet-claude-mcp-')).length, configsBefore);
  });

  it('the read-only built-ins work in the workspace; Bash is not there; reads outside the workspace are refused', async () => {
    rig = await sequenceSeat('claude');
    const outside = join(home, 'outside.txt');
    writeFileSync(outside, 'not the workspace');
    const ranBash = join(home, 'bash-ran');
    model = await startAnthropicServer({
      seats: {
        'sequence:drafter': [
          { toolCalls: [{ name: 'Read', input: { file_path: join(rig.repo.dir, 'src/app.ts') } }] },
          { toolCalls: [{ name: 'Grep', input: { pattern: 'changed line', path: rig.repo.dir } }] },
          { toolCalls: [{ name: 'Glob', input: { pattern: '**/*.ts' } }] },
          { toolCalls: [{ name: 'Bash', input: { command: `touch ${ranBash}` } }] },
          { toolCalls: [{ name: 'Read', input: { file_path: outside } }] },
          { text: 'Read what I could.' },
        ],
      },
    });
    const events: HarnessEvent[] = [];
    const result = await harness(model).runTurn(turn(rig, PROMPT, { events }));
    assert.equal(result.outcome, 'ended', result.message ?? '');
    assert.deepEqual(boardToolCalls(events), [
      { name: 'Read', isError: false },
      { name: 'Grep', isError: false },
      { name: 'Glob', isError: false },
      { name: 'Bash', isError: true },
      { name: 'Read', isError: true },
    ]);
    assert.equal(existsSync(ranBash), false);
    const last = messageRequests(model).pop();
    assert.match(JSON.stringify(last?.body?.messages), /5\\tchanged line 5/, 'the file was read');
    assert.match(JSON.stringify(last?.body?.messages), /No such tool available: Bash/);
  });

  it('a follow-up turn resumes the same thread and sends only the verdict', async () => {
    model = await startAnthropicServer({ seats: { 'sequence:drafter': [...FIRST_TURN_STEPS, ...FOLLOW_UP_STEPS] } });
    rig = await sequenceSeat('claude');
    const h = harness(model);

    const first = await h.runTurn(turn(rig, PROMPT));
    assert.equal(first.outcome, 'ended', first.message ?? '');
    assert.equal(rig.seat.snapshot().status, 'drafting');
    const firstCount = messageRequests(model).length;
    assert.equal(firstCount, 2);

    const verdict = 'Your previous turn ended before the document settled, and `finish` was never called.';
    const second = await h.runTurn(turn(rig, verdict, { followUp: true }));
    assert.equal(second.outcome, 'ended', second.message ?? '');
    assert.equal(rig.seat.snapshot().status, 'finished');

    const requests = messageRequests(model);
    const resumed = requests[firstCount];
    assert.ok(resumed?.body, 'the follow-up reached the model');
    const messages = resumed.body.messages as Array<{ role: string; content: unknown }>;
    // The earlier conversation is there: the first prompt, the citation and its result …
    assert.ok(anthropicUserText(messages[0]?.content).includes('Write the Sequence board'), JSON.stringify(messages[0]));
    const raw = JSON.stringify(messages);
    assert.match(raw, /"type":"tool_use"[^}]*"name":"mcp__rennet__cite"/);
    assert.match(raw, /"type":"tool_result"/);
    assert.match(raw, /I stop here for now\./);
    // … and the new user message is the verdict alone.
    const last = messages[messages.length - 1];
    assert.equal(last?.role, 'user');
    assert.equal(anthropicUserText(last?.content).trim(), verdict);
    assert.equal((raw.match(/Write the Sequence board/g) ?? []).length, 1, 'the first prompt is not sent again');
    // One session: Claude Code names it on every request.
    assert.equal(requests[0]?.headers['x-claude-code-session-id'], resumed.headers['x-claude-code-session-id']);
    // The follow-up's usage is its own (5 requests), not the thread's.
    assert.deepEqual({ input: second.usage?.inputTokens, output: second.usage?.outputTokens }, { input: 500, output: 100 });
  });

  it('a model error fails the turn with the CLI’s own message', async () => {
    model = await startAnthropicServer({ seats: { 'sequence:drafter': [{ malformed: 'http-500', status: 400 }] } });
    rig = await sequenceSeat('claude');
    const result = await harness(model).runTurn(turn(rig, PROMPT));
    assert.equal(result.outcome, 'failed');
    assert.match(result.message ?? '', /^Claude Code: API Error: 400\b.*scripted failure \(HTTP 400\)/);
    assert.ok((result.message ?? '').length <= 2100);
  });

  it('an unreachable seat server fails the turn, stopping the CLI at init', async () => {
    model = await startAnthropicServer({ seats: { 'sequence:drafter': [{ text: 'I have no tools.' }] } });
    rig = await sequenceSeat('claude');
    const request = turn(rig, PROMPT);
    await rig.server.close();
    const result = await harness(model).runTurn(request);
    assert.equal(result.outcome, 'failed');
    assert.equal(result.message, 'Claude Code could not connect to the seat\'s MCP server (its status was "failed")');
    // Stopped when init reports the server failed: at most the first request, already in flight, went out.
    assert.ok(model.consumed('sequence:drafter') <= 1, `requests: ${model.consumed('sequence:drafter')}`);
  });

  it('a prompt too long for one argument goes through stdin', async () => {
    model = await startAnthropicServer({ seats: { 'sequence:drafter': SETTLING_STEPS } });
    rig = await sequenceSeat('claude');
    const filler = `${'Read every changed line before you write. '.repeat(4000)}END-OF-LONG-PROMPT`;
    assert.ok(Buffer.byteLength(filler) > 128 * 1024);
    const result = await harness(model).runTurn(turn(rig, `${PROMPT}\n${filler}`));
    assert.equal(result.outcome, 'ended', result.message ?? '');
    assert.equal(rig.seat.snapshot().status, 'finished');
    assert.match(messageRequests(model)[0]?.raw ?? '', /END-OF-LONG-PROMPT/);
  });

  it('the reviewed checkout’s .claude/settings.json hooks and .mcp.json servers never run; the user’s own settings do', async () => {
    model = await startAnthropicServer({ seats: { 'sequence:drafter': [{ text: 'Nothing to write.' }] } });
    rig = await sequenceSeat('claude');
    const fromChange = join(home, 'ran-the-change-authors-hook');
    const fromChangeMcp = join(home, 'ran-the-change-authors-mcp-server');
    const fromUser = join(home, 'ran-the-users-own-hook');
    const hook = (file: string) => ({ hooks: [{ type: 'command', command: `touch ${file}` }] });
    rig.repo.write('.claude/settings.json', JSON.stringify({ hooks: { SessionStart: [hook(fromChange)], UserPromptSubmit: [hook(fromChange)] } }));
    rig.repo.write('.mcp.json', JSON.stringify({ mcpServers: { evil: { command: 'sh', args: ['-c', `touch ${fromChangeMcp}`] } } }));
    mkdirSync(join(home, '.claude'), { recursive: true });
    writeFileSync(join(home, '.claude', 'settings.json'), JSON.stringify({ hooks: { UserPromptSubmit: [hook(fromUser)] } }));

    const result = await harness(model).runTurn(turn(rig, PROMPT));
    assert.equal(result.outcome, 'ended', result.message ?? '');
    assert.equal(existsSync(fromUser), true, 'the user’s own settings (HOME) apply');
    assert.equal(existsSync(fromChange), false, 'the change’s project settings are not loaded (--setting-sources user)');
    assert.equal(existsSync(fromChangeMcp), false, 'the change’s .mcp.json is not loaded (--strict-mcp-config)');
  });

  it('abort mid-turn ends the whole process group and removes the MCP config', async () => {
    model = await startAnthropicServer({ seats: { 'sequence:drafter': [{ text: 'never sent', delayMs: 60_000 }] } });
    rig = await sequenceSeat('claude');
    const controller = new AbortController();
    const running = harness(model).runTurn(turn(rig, PROMPT, { signal: controller.signal }));

    await until(() => messageRequests(model!).length > 0, 'the model request');
    const procs = processesMarked(mark);
    assert.ok(procs.length > 0, 'the CLI is running');
    const groups = [...new Set(procs.map((p) => p.pgid))];
    assert.equal(groups.length, 1, `one process group: ${JSON.stringify(procs)}`);
    const pgid = groups[0] as number;
    assert.ok(
      procs.some((p) => p.pid === pgid),
      'the CLI leads its own group',
    );
    assert.notEqual(pgid, ownPgid(), 'not the test process group');
    // The MCP config: a private file while the turn runs.
    const configArg = procs.flatMap((p) => p.cmdline).find((a) => a.includes('rennet-claude-mcp-'));
    assert.ok(configArg && existsSync(configArg), 'the --mcp-config file exists during the turn');
    assert.equal(statSync(configArg).mode & 0o777, 0o600);
    assert.match(readFileSync(configArg, 'utf8'), new RegExp(rig.server.url.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')));
    assert.ok(!procs.some((p) => p.cmdline.some((a) => a.includes(rig!.server.headers['x-rennet-seat-secret']))), 'the seat secret is not in argv');

    const started = Date.now();
    controller.abort();
    const result = await running;
    assert.equal(result.outcome, 'aborted');
    assert.ok(Date.now() - started < 10_000, 'aborted promptly');
    assert.deepEqual(psGroup(pgid), [], 'no process of the group is left');
    assert.deepEqual(processesMarked(mark), [], 'no process of the turn is left');
    assert.equal(existsSync(configArg), false, 'the MCP config file is removed');
  });
});
