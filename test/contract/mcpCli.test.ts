import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { buildBoardTools, toolListing } from '../../host/board/tools';
import { tempDir, type TestRepo } from '../fixtures/gitRepo';
import { callTool, capturedFixture, connectClient, mintedId } from './mcpFixture';

const ROOT = join(__dirname, '..', '..');
const CLI = join(ROOT, 'dist', 'cli.js');

/** Lines of a child's stdout, as they arrive. */
function lineReader(child: ChildProcessWithoutNullStreams) {
  const lines: string[] = [];
  const waiters: Array<() => void> = [];
  let buffer = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    buffer += chunk;
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      lines.push(buffer.slice(0, nl));
      buffer = buffer.slice(nl + 1);
    }
    for (const wake of waiters.splice(0)) wake();
  });
  return {
    lines,
    async next(index: number, timeoutMs = 20_000): Promise<string> {
      const deadline = Date.now() + timeoutMs;
      while (lines.length <= index) {
        if (Date.now() > deadline) throw new Error(`no stdout line ${index} within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 200);
        });
      }
      return lines[index] as string;
    },
  };
}

describe('rennet seat-server and rennet tools (built dist/cli.js)', function () {
  this.timeout(120_000);
  let repo: TestRepo;
  let dataDir: string;

  before(() => {
    // The built CLI is what a harness spawns; build it from the sources under test.
    execFileSync(process.execPath, [join(ROOT, 'esbuild.mjs')], { cwd: ROOT, env: { ...process.env, RENNET_BUNDLES: 'cli' }, stdio: 'pipe' });
  });
  beforeEach(async () => {
    ({ repo } = await capturedFixture());
    dataDir = tempDir('rennet-seat-data-');
  });
  afterEach(() => {
    repo.cleanup();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('tools --lens noise --json prints the tool list exactly as served', () => {
    const result = spawnSync(process.execPath, [CLI, 'tools', '--lens', 'noise', '--json'], { encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), toolListing(buildBoardTools('noise')));
    const readable = spawnSync(process.execPath, [CLI, 'tools', '--lens', 'sequence'], { encoding: 'utf8' });
    assert.equal(readable.status, 0, readable.stderr);
    assert.match(readable.stdout, /^add_order_step\(title: string, explanation_markdown: string, span: string, parent_id\?: string\)$/m);
    assert.doesNotMatch(readable.stdout, /settle_absent/);
  });

  it('seat-server serves a board over MCP until stdin closes, then prints the board', async () => {
    const child = spawn(process.execPath, [CLI, 'seat-server', '--repo', repo.dir, '--base', 'main', '--head', 'feature', '--lens', 'sequence', '--author', 'cli-test'], {
      env: { ...process.env, RENNET_DATA_DIR: dataDir },
      stdio: 'pipe',
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const reader = lineReader(child);
    try {
      const hello = JSON.parse(await reader.next(0)) as { url: string; headers: Record<string, string> };
      assert.match(hello.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      assert.deepEqual(Object.keys(hello.headers), ['x-rennet-seat-secret']);

      const client = await connectClient(hello.url, hello.headers);
      const { tools } = await client.listTools();
      assert.deepEqual(
        tools.map((t) => t.name),
        buildBoardTools('sequence').map((t) => t.name),
      );
      const cite = mintedId(await callTool(client, 'cite', { path: 'src/app.ts', side: 'head', start_line: 28, end_line: 31 }));
      const section = mintedId(await callTool(client, 'add_section', { title: 'Reading order', body_markdown: 'Two lines of the module change.' }));
      mintedId(
        await callTool(client, 'add_order_step', {
          title: 'Line thirty changes',
          explanation_markdown: 'The thirtieth line now says it changed.',
          span: cite,
          parent_id: section,
        }),
      );
      const doc = await callTool(client, 'set_document', { title: 'Two lines change', intro_markdown: 'Two lines now say they changed. Nothing else moves.' });
      assert.equal(doc.isError, false, doc.text);
      const finish = await callTool(client, 'finish');
      assert.equal(finish.isError, false, finish.text);
      assert.match(finish.text, /settled/, finish.text);
      await client.close();

      child.stdin.end();
      assert.equal(await exited, 0, stderr);
      assert.equal(reader.lines.length, 2, `one hello line and one board line: ${reader.lines.join('\n')}`);
      const board = JSON.parse(reader.lines[1]!) as {
        lens: string;
        status: string;
        document: { title: string };
        elements: Array<{ id: string; kind: string; parent: string | null; author: string; span?: string }>;
      };
      assert.equal(board.lens, 'sequence');
      assert.equal(board.status, 'finished');
      assert.equal(board.document.title, 'Two lines change');
      assert.deepEqual(
        board.elements.map((e) => e.kind),
        ['code_ref', 'section', 'order_step'],
      );
      const step = board.elements[2]!;
      assert.equal(step.parent, section);
      assert.equal(step.span, cite);
      assert.ok(board.elements.every((e) => e.author === 'cli-test'));
    } finally {
      if (child.exitCode === null) child.kill('SIGTERM');
    }
  });

  it('seat-server ends on SIGTERM too and still prints the board', async () => {
    const child = spawn(process.execPath, [CLI, 'seat-server', '--repo', repo.dir, '--base', 'main', '--head', 'feature', '--lens', 'noise'], {
      env: { ...process.env, RENNET_DATA_DIR: dataDir },
      stdio: 'pipe',
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const reader = lineReader(child);
    JSON.parse(await reader.next(0));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
    const board = JSON.parse(await reader.next(1)) as { lens: string; elements: Array<{ kind: string }> };
    assert.equal(board.lens, 'noise');
    assert.deepEqual(
      board.elements.map((e) => e.kind),
      ['noise_member', 'noise_member'],
      'the host placed one member per captured hunk',
    );
  });

  it('refuses bad input with the reason on stderr (1: refused, 2: usage)', () => {
    const cases: Array<[string[], RegExp, number]> = [
      [['seat-server', '--repo', repo.dir, '--base', 'main', '--head', 'feature'], /needs --lens/, 2],
      [['seat-server', '--repo', repo.dir, '--base', 'main', '--head', 'feature', '--lens', 'vibes'], /unknown lens "vibes"/, 2],
      [['seat-server', '--repo', repo.dir, '--head', 'feature', '--lens', 'noise'], /needs --base/, 2],
      [['seat-server', '--repo', repo.dir, '--base', 'main', '--head', 'no-such', '--lens', 'noise'], /unknown ref "no-such"/, 1],
      [['tools'], /needs --lens/, 2],
      [['capture', '--repo', repo.dir, '--base', 'main', '--head', 'feature', '--lens', 'noise'], /--lens is not an option of capture/, 2],
    ];
    for (const [args, stderr, code] of cases) {
      const result = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: { ...process.env, RENNET_DATA_DIR: dataDir } });
      assert.equal(result.status, code, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, stderr, args.join(' '));
      assert.equal(result.stdout, '', args.join(' '));
    }
  });
});
