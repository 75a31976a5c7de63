import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliHarnessFor, discoverCliHarnesses } from '../../host/harness/discover';
import { removeDir, tempDir } from './harnessSupport';

/**
 * CLI discovery: `claude` and `codex` on PATH (or RENNET_CLAUDE_BIN / RENNET_CODEX_BIN), each
 * asked for `--version` with a short timeout. Fake CLIs for every way it can go; the real ones
 * when the test run passes them.
 */

describe('discoverCliHarnesses', function () {
  this.timeout(30_000);
  let dir: string;
  beforeEach(() => (dir = tempDir('rennet-discover-')));
  afterEach(() => removeDir(dir));

  const script = (folder: string, name: string, body: string, mode = 0o755): string => {
    mkdirSync(folder, { recursive: true });
    const path = join(folder, name);
    writeFileSync(path, `#!/bin/sh\n${body}\n`);
    chmodSync(path, mode);
    return path;
  };

  it('finds both on PATH and reads their versions', async () => {
    const bin = join(dir, 'bin');
    const claude = script(bin, 'claude', 'echo "2.1.197 (Claude Code)"');
    const codex = script(bin, 'codex', 'echo "codex-cli 0.171.0"');
    const found = await discoverCliHarnesses({ PATH: `${join(dir, 'empty')}:${bin}` });
    assert.deepEqual(found, [
      { kind: 'claude-code', bin: claude, version: '2.1.197', available: true, reason: null },
      { kind: 'codex', bin: codex, version: '0.171.0', available: true, reason: null },
    ]);
    assert.equal(cliHarnessFor(found[0]!).kind, 'claude-code');
    assert.equal(cliHarnessFor(found[1]!, { model: 'gpt-5.5' }).model, 'gpt-5.5');
  });

  it('says "not found on PATH" for a missing CLI (a non-executable file does not count)', async () => {
    const bin = join(dir, 'bin');
    script(bin, 'claude', 'echo 1.0.0', 0o644);
    const found = await discoverCliHarnesses({ PATH: bin });
    assert.deepEqual(found, [
      { kind: 'claude-code', bin: 'claude', version: null, available: false, reason: 'claude not found on PATH' },
      { kind: 'codex', bin: 'codex', version: null, available: false, reason: 'codex not found on PATH' },
    ]);
  });

  it('a CLI that fails says its exact error; one that hangs says it did not answer', async () => {
    const bin = join(dir, 'bin');
    const claude = script(bin, 'claude', 'echo "Error: Claude Code requires Node 18 or newer" >&2; exit 3');
    const codex = script(bin, 'codex', `exec "${process.execPath}" -e "setTimeout(() => {}, 30000)"`);
    const found = await discoverCliHarnesses({ PATH: bin }, { timeoutMs: 400 });
    assert.deepEqual(found[0], {
      kind: 'claude-code',
      bin: claude,
      version: null,
      available: false,
      reason: `\`${claude} --version\` exited with code 3: Error: Claude Code requires Node 18 or newer`,
    });
    assert.deepEqual(found[1], { kind: 'codex', bin: codex, version: null, available: false, reason: `\`${codex} --version\` did not answer within 400 ms` });
  });

  it('RENNET_CLAUDE_BIN / RENNET_CODEX_BIN override PATH; a bad override says so', async () => {
    const other = join(dir, 'elsewhere');
    const codex = script(other, 'codex-nightly', 'echo "codex-cli 0.172.0-alpha.1"');
    const onPath = join(dir, 'bin');
    script(onPath, 'codex', 'echo "codex-cli 0.1.0"');
    const found = await discoverCliHarnesses({ PATH: onPath, RENNET_CODEX_BIN: codex, RENNET_CLAUDE_BIN: join(dir, 'missing', 'claude') });
    assert.deepEqual(found[1], { kind: 'codex', bin: codex, version: '0.172.0-alpha.1', available: true, reason: null });
    assert.deepEqual(found[0], {
      kind: 'claude-code',
      bin: join(dir, 'missing', 'claude'),
      version: null,
      available: false,
      reason: `RENNET_CLAUDE_BIN=${join(dir, 'missing', 'claude')}: not found or not executable`,
    });
  });

  it('the real CLIs this test run exercises', async function () {
    if (!process.env.RENNET_CLAUDE_BIN || !process.env.RENNET_CODEX_BIN) this.skip();
    const found = await discoverCliHarnesses({ PATH: process.env.PATH, RENNET_CLAUDE_BIN: process.env.RENNET_CLAUDE_BIN, RENNET_CODEX_BIN: process.env.RENNET_CODEX_BIN, HOME: dir });
    assert.deepEqual(
      found.map((f) => [f.kind, f.available, f.version, f.reason]),
      [
        ['claude-code', true, '2.1.197', null],
        ['codex', true, '0.171.0', null],
      ],
    );
  });
});
