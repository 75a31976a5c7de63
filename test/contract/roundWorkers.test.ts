import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { workerFromFlag } from '../../host/rounds/workers';
import { excludeFromGit } from '../../host/pipeline/contextDir';
import { roundWorkerPrompt } from '../../host/pipeline/prompts';
import { CLAUDE_WORKER_TOOLS, claudeCodeWorker, cliWorker, codexWorker, workerVersion, writableGitDirs } from '../../host/rounds/cliWorkers';
import type { WorkerPort } from '../../host/rounds/runner';
import { WORK_ORDER_FILE } from '../../protocol/rounds';
import { TestRepo } from '../fixtures/gitRepo';
import { startAnthropicServer, startOpenAiServer, type RecordedRequest, type ScriptedAnthropicServer, type ScriptedOpenAiServer, type Step } from '../servers';
import { anthropicUserText, claudeTestEnv, codexTestEnv, codexTestHome, newMark, ownPgid, processesMarked, psGroup, realBin, removeDir, tempDir, until } from './harnessSupport';

/**
 * The round workers on the REAL `claude` and `codex` CLIs (RENNET_CLAUDE_BIN / RENNET_CODEX_BIN,
 * installed by test/install-agent-clis.sh) against the scripted model servers on loopback — never
 * a real model. Each turn runs in a real git repository with a branch checked out and a work
 * order in `.rennet/context/s-test/`; the scripted model does what a real one would: reads the
 * order, edits a file, commits with git through the CLI's own shell tool, and ends with text.
 */

const CONTEXT_DIR = '.rennet/context/s-test';
const ORDER_PATH = `${CONTEXT_DIR}/${WORK_ORDER_FILE}`;
/** Words only the work order holds: the prompt must never carry them (it is only the pointer). */
const ASK_TEXT = 'ASK-7c2e: say hello to the round instead of the world';
const ORIGINAL = "export const greeting = 'Hello, world';\n";
const CHANGED = "export const greeting = 'Hello, round';\n";
const COMMIT_MESSAGE = 'Say hello to the round';

interface Workspace {
  repo: TestRepo;
  /** HEAD before the worker's turn. */
  before: string;
  prompt: string;
}

/** A repository on branch `feature` (one commit past main) with the work order written as the runner writes it (excluded from git). */
async function workspace(): Promise<Workspace> {
  const repo = new TestRepo();
  repo.write('src/greet.ts', ORIGINAL).write('README.md', '# greet\n').commit('initial');
  repo.branch('feature');
  repo.write('src/use.ts', "import { greeting } from './greet';\nconsole.log(greeting);\n").commit('use the greeting');
  await excludeFromGit(join(repo.dir, '.git', 'info', 'exclude'));
  repo.write(ORDER_PATH, `# Work order\n\nBranch: feature\n\n## src/greet.ts line 1\n\n> ${ASK_TEXT}\n\n- Commit your work before you finish.\n`);
  return { repo, before: repo.head(), prompt: roundWorkerPrompt({ contextDir: CONTEXT_DIR }) };
}

/** What the worker left: HEAD moved by exactly one commit on `feature`, holding only src/greet.ts, the tree clean. */
function assertOneCommit(ws: Workspace): void {
  const { repo, before } = ws;
  assert.equal(readFileSync(join(repo.dir, 'src/greet.ts'), 'utf8'), CHANGED);
  assert.equal(repo.git('rev-list', '--count', `${before}..HEAD`), '1', 'HEAD moved by exactly one commit');
  assert.equal(repo.git('rev-parse', 'HEAD^'), before, 'on top of the branch as it was');
  assert.equal(repo.git('rev-parse', '--abbrev-ref', 'HEAD'), 'feature', 'still on the branch');
  assert.equal(repo.git('log', '-1', '--format=%s'), COMMIT_MESSAGE);
  assert.equal(repo.git('show', '--name-only', '--format=', 'HEAD'), 'src/greet.ts', 'the work order is not committed');
  assert.equal(repo.git('status', '--porcelain'), '', 'nothing left uncommitted');
}

describe('round workers on the real agent CLIs', function () {
  this.timeout(120_000);
  let home = '';
  let mark = '';
  let ws: Workspace | null = null;
  let claudeModel: ScriptedAnthropicServer | null = null;
  let codexModel: ScriptedOpenAiServer | null = null;

  beforeEach(() => {
    mark = newMark();
  });

  afterEach(async () => {
    await claudeModel?.close();
    await codexModel?.close();
    claudeModel = null;
    codexModel = null;
    ws?.repo.cleanup();
    ws = null;
    removeDir(home);
    home = '';
  });

  describe('claude-code', () => {
    let bin: string;
    beforeEach(function () {
      bin = realBin(this, 'RENNET_CLAUDE_BIN');
      home = tempDir('rennet-claude-worker-home-');
    });

    const worker = (server: ScriptedAnthropicServer, env: NodeJS.ProcessEnv = {}) =>
      claudeCodeWorker({ bin, version: 'test', model: 'claude-sonnet-4-5', env: { ...claudeTestEnv(home, server.origin, mark), ...env } });
    const requests = (server: ScriptedAnthropicServer) => server.requestsTo('/v1/messages').filter((r) => r.seat !== null);

    it('reads the work order, edits, commits with git through Bash: done, one commit; offered the edit and shell tools and no MCP tool; the prompt is only the pointer', async () => {
      ws = await workspace();
      const dir = ws.repo.dir;
      claudeModel = await startAnthropicServer([
        { toolCalls: [{ name: 'Read', input: { file_path: join(dir, ORDER_PATH) } }] },
        { toolCalls: [{ name: 'Read', input: { file_path: join(dir, 'src/greet.ts') } }] },
        { toolCalls: [{ name: 'Edit', input: { file_path: join(dir, 'src/greet.ts'), old_string: 'Hello, world', new_string: 'Hello, round' } }] },
        { toolCalls: [{ name: 'Bash', input: { command: `git add -A && git commit -m "${COMMIT_MESSAGE}"`, description: 'Commit the change' } }] },
        { text: 'Changed the greeting in src/greet.ts and committed it.' },
      ]);

      const turn = await worker(claudeModel).run({ root: dir, prompt: ws.prompt, contextDir: CONTEXT_DIR, signal: new AbortController().signal });

      assert.equal(turn.outcome, 'done', turn.message ?? '');
      assert.equal(turn.message, 'Changed the greeting in src/greet.ts and committed it.');
      assertOneCommit(ws);

      const sent = requests(claudeModel);
      assert.equal(sent.length, 5, 'every scripted step was asked for');
      // Offered: exactly the edit and shell built-ins; no MCP tool at all.
      const offered = ((sent[0]?.body?.tools ?? []) as Array<{ name: string }>).map((t) => t.name).sort();
      assert.deepEqual(offered, CLAUDE_WORKER_TOOLS.split(',').sort());
      assert.ok(!sent.some((r) => ((r.body?.tools ?? []) as Array<{ name: string }>).some((t) => t.name.startsWith('mcp__'))), 'no MCP tool is offered');
      // The prompt names the work order and carries none of its asks; the order's words arrive only through Read.
      const messages = sent[0]?.body?.messages as Array<{ role: string; content: unknown }>;
      assert.ok(anthropicUserText(messages[0]?.content).includes(ORDER_PATH), 'the prompt names the work order');
      assert.ok(!(sent[0]?.raw ?? '').includes(ASK_TEXT), 'no ask text in the first request');
      assert.ok((sent[1]?.raw ?? '').includes(ASK_TEXT), 'the work order was read');
      // Every tool call succeeded (the shell was not refused).
      const last = JSON.stringify(sent[4]?.body?.messages);
      assert.equal((last.match(/"type":"tool_result"/g) ?? []).length, 4);
      assert.ok(!/"is_error":true/.test(last), last.slice(-2000));
    });

    it('a shell command outside the pre-approved ones, or a write outside the workspace, is refused at once (no prompt, no hang) and named; git never waits for an editor', async () => {
      ws = await workspace();
      const dir = ws.repo.dir;
      const outside = join(home, 'outside.txt');
      claudeModel = await startAnthropicServer([
        { toolCalls: [{ name: 'Read', input: { file_path: join(dir, ORDER_PATH) } }] },
        { toolCalls: [{ name: 'Bash', input: { command: 'git push origin feature', description: 'Push' } }] },
        { toolCalls: [{ name: 'Write', input: { file_path: outside, content: 'not the workspace' } }] },
        // No -m: with an editor git would wait for ever; GIT_EDITOR=true ends it ("empty commit message").
        { toolCalls: [{ name: 'Bash', input: { command: 'git commit --allow-empty', description: 'Commit' } }] },
        { text: 'I could not push.' },
      ]);
      const turn = await worker(claudeModel).run({ root: dir, prompt: ws.prompt, contextDir: CONTEXT_DIR, signal: new AbortController().signal });
      assert.equal(turn.outcome, 'done', turn.message ?? '');
      assert.equal(turn.message, `I could not push. (refused as not pre-approved: Bash: git push origin feature; Write: ${outside})`);
      assert.equal(existsSync(outside), false);
      assert.match(JSON.stringify(requests(claudeModel).at(-1)?.body?.messages), /Aborting commit due to empty commit message/);
      assert.equal(ws.repo.head(), ws.before);
    });

    it('an aborted turn ends aborted and leaves no process behind', async () => {
      ws = await workspace();
      claudeModel = await startAnthropicServer([{ text: 'never sent', delayMs: 60_000 }]);
      const controller = new AbortController();
      const running = worker(claudeModel).run({ root: ws.repo.dir, prompt: ws.prompt, contextDir: CONTEXT_DIR, signal: controller.signal });

      await until(() => requests(claudeModel!).length > 0, 'the model request');
      const pgid = oneGroup(mark);
      const started = Date.now();
      controller.abort();
      const turn = await running;
      assert.equal(turn.outcome, 'aborted', turn.message ?? '');
      assert.ok(Date.now() - started < 10_000, 'aborted promptly');
      assert.deepEqual(psGroup(pgid), [], 'no process of the group is left');
      assert.deepEqual(processesMarked(mark), [], 'no process of the turn is left');
      assert.equal(ws.repo.head(), ws.before);
    });

    it('a model server answering HTTP 500 fails the turn with the CLI’s words', async () => {
      ws = await workspace();
      claudeModel = await startAnthropicServer([{ malformed: 'http-500' }, { malformed: 'http-500' }]);
      // Test only: Claude Code would otherwise retry a 500 with backoff for minutes.
      const turn = await worker(claudeModel, { CLAUDE_CODE_MAX_RETRIES: '0' }).run({ root: ws.repo.dir, prompt: ws.prompt, contextDir: CONTEXT_DIR, signal: new AbortController().signal });
      assert.equal(turn.outcome, 'failed');
      assert.match(turn.message ?? '', /^Claude Code: API Error: 500\b.*scripted failure \(HTTP 500\)/);
      assert.equal(ws.repo.head(), ws.before);
    });
  });

  describe('codex', () => {
    let bin: string;
    beforeEach(function () {
      bin = realBin(this, 'RENNET_CODEX_BIN');
      home = tempDir('rennet-codex-worker-home-');
    });

    const start = async (steps: Step[]) => {
      codexModel = await startOpenAiServer(steps);
      codexTestHome(home, codexModel.baseUrl);
      return codexModel;
    };
    const worker = () => codexWorker({ bin, version: 'test', model: 'scripted-model', env: codexTestEnv(home, mark) });
    const responses = (server: ScriptedOpenAiServer) => server.requestsTo('/v1/responses').filter((r) => r.seat !== null);
    const outputs = (request: RecordedRequest | undefined) =>
      ((request?.body?.input ?? []) as Array<{ type?: string; output?: unknown }>).filter((i) => i.type === 'function_call_output').map((i) => String(i.output));
    const EDIT_AND_COMMIT: Step[] = [
      { toolCalls: [{ name: 'exec_command', input: { cmd: `cat ${ORDER_PATH}` } }] },
      { toolCalls: [{ name: 'exec_command', input: { cmd: `printf '%s\\n' "export const greeting = 'Hello, round';" > src/greet.ts` } }] },
      { toolCalls: [{ name: 'exec_command', input: { cmd: `git add -A && git commit -m "${COMMIT_MESSAGE}"` } }] },
      { text: 'Changed the greeting in src/greet.ts and committed it.' },
    ];

    it('reads the work order, edits, commits with git through its shell in the workspace-write sandbox: done, one commit; no MCP tool; the prompt is only the pointer', async () => {
      ws = await workspace();
      const model = await start(EDIT_AND_COMMIT);

      const turn = await worker().run({ root: ws.repo.dir, prompt: ws.prompt, contextDir: CONTEXT_DIR, signal: new AbortController().signal });

      assert.equal(turn.outcome, 'done', turn.message ?? '');
      assert.equal(turn.message, 'Changed the greeting in src/greet.ts and committed it.');
      assertOneCommit(ws);

      const sent = responses(model);
      assert.equal(sent.length, 4, 'every scripted step was asked for');
      const first = sent[0];
      // Offered: its shell (exec_command); no MCP namespace (the lens seats' is `mcp__rennet`).
      const tools = (first?.body?.tools ?? []) as Array<{ type?: string; name?: string }>;
      assert.ok(
        tools.some((t) => t.name === 'exec_command'),
        JSON.stringify(tools.map((t) => t.name)),
      );
      assert.ok(!tools.some((t) => (t.name ?? '').startsWith('mcp__')), JSON.stringify(tools.map((t) => t.name)));
      // Codex tells the model its sandbox.
      assert.match(JSON.stringify(first?.body?.input), /`sandbox_mode` is `workspace-write`/);
      const userTexts = ((first?.body?.input ?? []) as Array<{ type?: string; role?: string; content?: Array<{ text?: string }> }>)
        .filter((i) => i.type === 'message' && i.role === 'user')
        .map((i) => (i.content ?? []).map((c) => c.text ?? '').join(''));
      assert.ok(
        userTexts.some((t) => t.includes(ORDER_PATH)),
        'the prompt names the work order',
      );
      assert.ok(!(first?.raw ?? '').includes(ASK_TEXT), 'no ask text in the first request');
      assert.ok(
        outputs(sent[1]).some((o) => o.includes(ASK_TEXT)),
        'the work order was read',
      );
      const commitOutput = outputs(sent[3]).at(-1) ?? '';
      assert.match(commitOutput, /Process exited with code 0/, commitOutput);
      assert.ok(!/Read-only file system/.test(commitOutput), commitOutput);
    });

    it('commits from a linked worktree too (the main repository’s git directory is writable)', async () => {
      ws = await workspace();
      const main = ws.repo;
      const tree = join(tempDir('rennet-worker-wt-'), 'wt');
      main.git('checkout', '-q', 'main');
      main.git('worktree', 'add', '-q', tree, 'feature');
      await excludeFromGit(join(main.dir, '.git', 'info', 'exclude'));
      mkdirSync(join(tree, CONTEXT_DIR), { recursive: true });
      writeFileSync(join(tree, ORDER_PATH), readFileSync(join(main.dir, ORDER_PATH), 'utf8'));
      const dirs = await writableGitDirs(tree);
      assert.ok(dirs.ok);
      assert.deepEqual(dirs.value, [join(main.dir, '.git', 'worktrees', 'wt'), join(main.dir, '.git')]);
      const model = await start(EDIT_AND_COMMIT);
      try {
        const turn = await worker().run({ root: tree, prompt: ws.prompt, contextDir: CONTEXT_DIR, signal: new AbortController().signal });
        assert.equal(turn.outcome, 'done', turn.message ?? '');
        const commitOutput = outputs(responses(model)[3]).at(-1) ?? '';
        assert.match(commitOutput, /Process exited with code 0/, commitOutput);
        assert.equal(readFileSync(join(tree, 'src/greet.ts'), 'utf8'), CHANGED);
        assert.equal(main.git('rev-list', '--count', `${ws.before}..feature`), '1');
        assert.equal(main.git('log', '-1', '--format=%s', 'feature'), COMMIT_MESSAGE);
      } finally {
        removeDir(join(tree, '..'));
      }
    });

    it('an aborted turn ends aborted and leaves no process behind (launcher and native binary)', async () => {
      ws = await workspace();
      const model = await start([{ text: 'never sent', delayMs: 60_000 }]);
      const controller = new AbortController();
      const running = worker().run({ root: ws.repo.dir, prompt: ws.prompt, contextDir: CONTEXT_DIR, signal: controller.signal });

      await until(() => responses(model).length > 0, 'the model request');
      const procs = processesMarked(mark);
      assert.ok(procs.length >= 2, `the launcher and the native codex: ${JSON.stringify(procs.map((p) => p.cmdline.slice(0, 2)))}`);
      assert.ok(procs.flatMap((p) => p.cmdline).includes('workspace-write'), 'the workspace-write sandbox is on the command line');
      const pgid = oneGroup(mark);
      const started = Date.now();
      controller.abort();
      const turn = await running;
      assert.equal(turn.outcome, 'aborted', turn.message ?? '');
      assert.ok(Date.now() - started < 10_000, 'aborted promptly');
      assert.deepEqual(psGroup(pgid), [], 'no process of the group is left');
      assert.deepEqual(processesMarked(mark), [], 'no process of the turn is left');
      assert.equal(ws.repo.head(), ws.before);
    });

    it('a model server answering HTTP 500 fails the turn with the CLI’s words', async () => {
      ws = await workspace();
      await start([{ malformed: 'http-500' }]);
      const turn = await worker().run({ root: ws.repo.dir, prompt: ws.prompt, contextDir: CONTEXT_DIR, signal: new AbortController().signal });
      assert.equal(turn.outcome, 'failed');
      // codex-cli 0.171.0 words any HTTP 500 this way (turn.failed), without the server's body.
      assert.equal(turn.message, 'Codex: We’re currently experiencing high demand, which may cause temporary errors.');
      assert.equal(ws.repo.head(), ws.before);
    });
  });

  describe('finding the CLI (--worker claude-code|codex)', () => {
    it('records the installed CLI’s version', async function () {
      const claude = realBin(this, 'RENNET_CLAUDE_BIN');
      const codex = realBin(this, 'RENNET_CODEX_BIN');
      const env = { RENNET_CLAUDE_BIN: claude, RENNET_CODEX_BIN: codex };
      const versions = await Promise.all([workerVersion(claude), workerVersion(codex)]);
      assert.ok(
        versions.every((v) => v.ok && /^\d+\.\d+\.\d+/.test(v.value)),
        JSON.stringify(versions),
      );
      const ports = await Promise.all([workerFromFlag('claude-code', { env }), workerFromFlag('codex', { env })]);
      const workers = ports.map((p) => (p.ok ? (p.value as WorkerPort).worker : p.error.message));
      assert.deepEqual(workers, [
        { kind: 'claude-code', version: (versions[0] as { value: string }).value },
        { kind: 'codex', version: (versions[1] as { value: string }).value },
      ]);
    });

    it('a missing CLI is refused, naming what to install', async () => {
      const env = { PATH: '/nonexistent', RENNET_CLAUDE_BIN: '', RENNET_CODEX_BIN: '' };
      const claude = await cliWorker('claude-code', { env });
      assert.equal(claude.ok, false);
      assert.equal(
        !claude.ok && claude.error.message,
        'the claude-code worker needs Claude Code, which is not available here (claude not found on PATH): install it (npm install -g @anthropic-ai/claude-code) and log in, or point RENNET_CLAUDE_BIN at its executable',
      );
      const codex = await workerFromFlag('codex', { env: { ...env, RENNET_CODEX_BIN: '/nonexistent/codex' } });
      assert.equal(codex.ok, false);
      assert.match(
        !codex.ok ? codex.error.message : '',
        /^the codex worker needs Codex, which is not available here \(RENNET_CODEX_BIN=\/nonexistent\/codex: not found or not executable\): install it \(npm install -g @openai\/codex\)/,
      );
    });
  });
});

/** The one process group of the turn's processes (the CLI leads it; not the test's own). */
function oneGroup(mark: string): number {
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
  return pgid;
}
