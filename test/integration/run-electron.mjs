// `npm run test:electron`: the same integration suites in a desktop VS Code downloaded by
// @vscode/test-electron. Needs network access to download VS Code, so it is NOT part of `npm test`
// here (this workplace has none; code-server carries the suites instead, see run.mjs). Loads Rennet
// and the test extension as development extensions; the test extension runs the suites on start-up
// and writes a result file, which electron-tests.cjs waits for and turns into a pass/fail.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runTests } from '@vscode/test-electron';
import { makeFixtureRepo } from '../e2e/fixture.mjs';
import { buildIntegrationExtension } from './build.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '../..');

execFileSync(process.execPath, ['esbuild.mjs'], { cwd: ROOT, stdio: 'inherit' });
await buildIntegrationExtension();
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'rennet-electron-'));
const repo = path.join(scratch, 'fixture repo');
makeFixtureRepo(repo);
const resultFile = path.join(scratch, 'result.json');

try {
  await runTests({
    extensionDevelopmentPath: [ROOT, HERE],
    extensionTestsPath: path.join(HERE, 'electron-tests.cjs'),
    launchArgs: [repo, '--disable-workspace-trust', '--user-data-dir', path.join(scratch, 'user-data')],
    extensionTestsEnv: { RENNET_IT_RESULT: resultFile, RENNET_IT_REPO: repo },
  });
  console.log('electron integration: passed');
} catch (error) {
  console.error(`electron integration: failed (${error instanceof Error ? error.message : error})`);
  process.exitCode = 1;
}
