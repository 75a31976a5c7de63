// Integration level: Rennet's .vsix and the test extension's .vsix installed side by side in a real
// code-server; a browser opens the workbench (which starts the extension host); the test extension
// runs the mocha suites on activation and writes a JSON result file, which this runner reads and
// reports test by test. `npm run test:integration` runs this file alone; test/e2e/run.mjs calls
// runIntegration() after its own scenarios.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as rig from '../e2e/rig.mjs';
import { makeFixtureRepo } from '../e2e/fixture.mjs';
import { buildIntegrationExtension } from './build.mjs';

const RESULT_TIMEOUT_MS = 180_000;

/**
 * Runs the suites and records one named test per mocha test in `runner`.
 * Starts and stops its own code-server (a fresh profile, so nothing from the e2e run leaks in).
 */
export async function runIntegration({ paths, rennetVsix, runner, browser }) {
  const itVsix = await buildIntegrationExtension();
  const work = rig.mkTmp('rennet-it-');
  const repo = makeFixtureRepo(path.join(work, 'fixture repo'));
  const resultFile = path.join(work, 'result.json');
  const cs = await rig.startCodeServer({
    paths,
    name: 'it',
    vsixes: [rennetVsix, itVsix],
    settings: { 'rennetIntegration.resultFile': resultFile, 'rennetIntegration.fixtureRepo': repo },
    env: { RENNET_IT_RESULT: resultFile, RENNET_IT_REPO: repo },
  });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  let result = null;
  const failures = [];
  try {
    await rig.openWorkbench(page, cs, repo);
    const deadline = Date.now() + RESULT_TIMEOUT_MS;
    while (!fs.existsSync(resultFile) && Date.now() < deadline) await rig.sleep(250);
    // For the screenshot only (the suites assert through the API): let the last board draw.
    await page
      .locator('iframe.webview')
      .filter({ visible: true })
      .first()
      .contentFrame()
      .locator('iframe#active-frame')
      .contentFrame()
      .locator('[data-testid="file-row"]')
      .first()
      .waitFor({ state: 'visible', timeout: 20_000 })
      .catch(() => {});
    await page.screenshot({ path: path.join(rig.ARTIFACTS, 'integration-done.png'), fullPage: true });
    if (fs.existsSync(resultFile)) result = JSON.parse(fs.readFileSync(resultFile, 'utf8'));
  } catch (e) {
    failures.push(e);
  }
  const dumpLogs = () => {
    console.log(`--- code-server (last 100 lines) ---\n${cs.tail(100)}`);
    for (const f of cs.logsMatching(/(Rennet|exthost|remoteexthost)/i)) {
      const text = fs.readFileSync(f, 'utf8').split('\n').slice(-100).join('\n');
      console.log(`--- ${path.relative(cs.userData, f)} (last 100 lines) ---\n${text}`);
    }
  };
  if (!result) {
    await runner.test('integration: the test extension wrote its result file', async () => {
      dumpLogs();
      throw new Error(failures[0]?.message ?? `no result at ${resultFile} within ${RESULT_TIMEOUT_MS / 1000} s: the test extension did not activate or crashed (logs above)`);
    });
  } else {
    rig.log(`integration suites ran in VS Code ${result.vscodeVersion}: ${result.passed} passed, ${result.failed} failed`);
    if (result.fatal) {
      await runner.test('integration: mocha ran the suites', async () => {
        throw new Error(`the test extension could not run mocha:\n${result.fatal}`);
      });
    }
    for (const t of result.tests) {
      const error = t.state === 'failed' ? new Error(t.error ?? 'failed') : t.state === 'pending' ? new Error('pending: a suite marked this test as not runnable here') : null;
      runner.record(`integration: ${t.fullTitle}`, error, t.durationMs);
    }
    if (result.failed) dumpLogs();
  }
  await page.close().catch(() => {});
  await cs.stop();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  fs.mkdirSync(rig.ARTIFACTS, { recursive: true });
  const runner = rig.testRunner();
  let code = 1;
  try {
    const paths = rig.installCodeServer();
    const rennetVsix = rig.buildAndPackageRennet();
    const browser = await rig.launchBrowser(paths);
    await runIntegration({ paths, rennetVsix, runner, browser });
    code = runner.summary() ? 1 : 0;
  } catch (e) {
    console.error(`[integration] setup failed: ${e?.stack ?? e}`);
    runner.results.push({ name: 'setup', ok: false, error: e });
    runner.summary();
  } finally {
    await rig.cleanup({ keepTmp: code !== 0 });
  }
  process.exit(code);
}
