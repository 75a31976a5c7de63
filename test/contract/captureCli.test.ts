import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Patchset } from '../../protocol/patchset';
import { isolatedCliEnv, TestRepo, tempDir } from '../fixtures/gitRepo';

const ROOT = join(__dirname, '..', '..');
const CLI = join(ROOT, 'dist', 'cli.js');
const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };

function rennet(args: string[], dataDir: string) {
  const result = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', env: isolatedCliEnv({ RENNET_DATA_DIR: dataDir }), maxBuffer: 64 << 20 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * `rennet capture` through the entry's fast path (built dist/cli.js): the printed JSON is the
 * stored body, other commands and every usage error still reach the whole CLI (dist/cli-full.js).
 */
describe('rennet capture and --version (built dist/cli.js entry)', function () {
  this.timeout(120_000);
  let repo: TestRepo;
  let dataDir: string;
  beforeEach(() => {
    repo = new TestRepo();
    for (let i = 0; i < 60; i++) repo.write(`src/f${i}.ts`, Array.from({ length: 200 }, (_, n) => `line ${n} of file ${i}`).join('\n') + '\n');
    repo.commit('base');
    repo.branch('feature');
    for (let i = 0; i < 60; i++) repo.write(`src/f${i}.ts`, Array.from({ length: 200 }, (_, n) => (n % 40 === 5 ? `changed ${n}` : `line ${n} of file ${i}`)).join('\n') + '\n');
    repo.commit('change');
    dataDir = tempDir('rennet-capture-cli-');
  });
  afterEach(() => {
    repo.cleanup();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const stored = () => readdirSync(join(dataDir, 'patchsets'));

  it('capture --json prints the patchset as one line of JSON, byte for byte the body it stored', () => {
    const result = rennet(['capture', '--repo', repo.dir, '--base', 'main', '--head', 'feature', '--json'], dataDir);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout.indexOf('\n'), result.stdout.length - 1, 'one line, ending in a newline');
    const patchset = Patchset.parse(JSON.parse(result.stdout));
    assert.deepEqual([patchset.totals.files, patchset.totals.hunks], [60, 300]);
    assert.deepEqual(stored(), [`${patchset.id}.json`]);
    assert.equal(readFileSync(join(dataDir, 'patchsets', `${patchset.id}.json`), 'utf8') + '\n', result.stdout);
    const again = rennet(['capture', '--repo', repo.dir, '--base', 'main', '--head', 'feature', '--json'], dataDir);
    assert.equal(again.stdout, result.stdout, 'a repeat prints the same bytes');
    const summary = rennet(['capture', '--repo', repo.dir, '--base', 'main', '--head', 'feature'], dataDir);
    assert.equal(summary.code, 0, summary.stderr);
    assert.match(summary.stdout, /already stored; nothing new written\n$/);
  });

  it('--version answers from the entry; other commands and usage errors reach the whole CLI', () => {
    const v = rennet(['--version'], dataDir);
    assert.deepEqual([v.code, v.stdout], [0, `rennet ${version}\n`]);
    const help = rennet(['--help'], dataDir);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /rennet capture --repo DIR --base REF/);
    const file = rennet(['capture', '--repo', repo.dir, '--base', 'main', '--head', 'feature', '--json', 'out.json'], dataDir);
    assert.equal(file.code, 2);
    assert.match(file.stderr, /unexpected argument "out\.json"/);
    const both = rennet(['capture', '--repo', repo.dir, '--base', 'main', '--head', 'feature', '--working-tree'], dataDir);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /--head and --working-tree exclude each other/);
    const tools = rennet(['tools', '--lens', 'noise', '--json'], dataDir);
    assert.equal(tools.code, 0, tools.stderr);
    assert.ok(Array.isArray(JSON.parse(tools.stdout)));
    assert.deepEqual(
      readdirSync(dataDir).filter((n) => n === 'patchsets'),
      [],
      'no usage error opened the store',
    );
  });

  it('a closed stdout fails the capture with a reason and stores nothing', async () => {
    const child = spawn(process.execPath, [CLI, 'capture', '--repo', repo.dir, '--base', 'main', '--head', 'feature', '--json'], {
      env: isolatedCliEnv({ RENNET_DATA_DIR: dataDir }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    assert.equal(code, 1, stderr);
    assert.match(stderr, /could not write the capture to stdout .*nothing was stored/);
    assert.deepEqual(stored(), []);
  });
});
