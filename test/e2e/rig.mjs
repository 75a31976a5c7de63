// Shared machinery for the real-VS-Code tests: install, build, package, a code-server in its own
// process group, a Chromium driven by playwright-core, and a tiny named-test runner.
// Plain Node ESM on purpose: it runs before anything is built. See docs/testing.md.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const ARTIFACTS = path.join(ROOT, 'test/e2e/artifacts');

export const log = (...a) => console.log(`[rig ${new Date().toISOString().slice(11, 19)}]`, ...a);

/** Run a program (argv, never a shell string); inherit stdio unless `capture`. */
export function run(cmd, args, { cwd = ROOT, env, capture = false, timeout } = {}) {
  return execFileSync(cmd, args, {
    cwd,
    env: env ? { ...process.env, ...env } : process.env,
    stdio: capture ? ['ignore', 'pipe', 'pipe'] : 'inherit',
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    timeout,
  });
}

/** install-code-server.sh (idempotent); returns paths.json. */
export function installCodeServer() {
  log('install-code-server.sh');
  run('bash', [path.join(ROOT, 'test/e2e/install-code-server.sh')]);
  const cache = process.env.RENNET_TEST_CACHE || path.join(os.homedir(), '.cache/rennet-test');
  return JSON.parse(fs.readFileSync(path.join(cache, 'paths.json'), 'utf8'));
}

/** `npm run build` (unless RENNET_SKIP_BUILD=1) and `npm run package`; returns the .vsix path. */
export function buildAndPackageRennet() {
  if (process.env.RENNET_SKIP_BUILD === '1') log('RENNET_SKIP_BUILD=1: not building');
  else {
    log('npm run build');
    run('npm', ['run', '--silent', 'build']);
  }
  log('npm run package');
  run('npm', ['run', '--silent', 'package']);
  const vsix = path.join(ROOT, 'dist/rennet.vsix');
  if (!fs.existsSync(vsix)) throw new Error(`npm run package did not write ${vsix}`);
  return vsix;
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const tmpDirs = [];
/** A fresh temp folder, removed at cleanup unless RENNET_KEEP_TMP=1 or a test failed. */
export function mkTmp(prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  tmpDirs.push(dir);
  return dir;
}

/** Every cleanup registered here runs once, on normal exit, failure, SIGINT or SIGTERM. */
const cleanups = [];
export function onCleanup(fn) {
  cleanups.push(fn);
}
export function cleanup(options = {}) {
  cleaning ??= doCleanup(options);
  return cleaning;
}
let cleaning = null;
/** Set by SIGINT/SIGTERM: the remaining tests are not started. */
export let aborted = null;
async function doCleanup({ keepTmp = false }) {
  for (const fn of cleanups.reverse()) {
    try {
      await fn();
    } catch (e) {
      console.error('[rig] cleanup:', e?.message ?? e);
    }
  }
  if (keepTmp || process.env.RENNET_KEEP_TMP === '1') {
    if (tmpDirs.length) console.log(`[rig] kept for inspection: ${tmpDirs.join(' ')}`);
  } else {
    for (const dir of tmpDirs) fs.rmSync(dir, { recursive: true, force: true });
  }
}
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    console.error(`[rig] ${sig}: stopping`);
    aborted = sig;
    cleanup({ keepTmp: true }).finally(() => process.exit(130));
  });
}
process.on('exit', () => {
  // Last resort, synchronous: kill any process group still registered.
  for (const pgid of liveGroups) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {}
  }
});
const liveGroups = new Set();

/**
 * A code-server with its own user-data and extensions directories, its own config file, the given
 * .vsix files installed, listening on a free 127.0.0.1 port, in its own process group.
 */
export async function startCodeServer({ paths, vsixes = [], settings = {}, env = {}, name = 'cs' }) {
  const dir = mkTmp(`rennet-${name}-`);
  const userData = path.join(dir, 'user-data');
  const extensions = path.join(dir, 'extensions');
  const config = path.join(dir, 'config.yaml');
  fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
  fs.mkdirSync(extensions, { recursive: true });
  fs.writeFileSync(config, 'bind-addr: 127.0.0.1:0\nauth: none\ncert: false\n');
  fs.writeFileSync(
    path.join(userData, 'User/settings.json'),
    JSON.stringify(
      {
        'security.workspace.trust.enabled': false,
        'workbench.startupEditor': 'none',
        'workbench.tips.enabled': false,
        'workbench.enableExperiments': false,
        'workbench.welcomePage.walkthroughs.openOnInstall': false,
        'extensions.autoCheckUpdates': false,
        'extensions.autoUpdate': false,
        'extensions.ignoreRecommendations': true,
        'telemetry.telemetryLevel': 'off',
        'update.mode': 'none',
        'git.enabled': false,
        'git.autoRepositoryDetection': false,
        'chat.disableAIFeatures': true,
        'chat.commandCenter.enabled': false,
        'window.commandCenter': false,
        'workbench.secondarySideBar.defaultVisibility': 'hidden',
        'files.hotExit': 'off',
        'window.restoreWindows': 'none',
        ...settings,
      },
      null,
      2,
    ),
  );
  const node = paths.node24;
  const base = ['--config', config, '--user-data-dir', userData, '--extensions-dir', extensions];
  const childEnv = { ...process.env, ...env, PATH: `${path.dirname(node)}:${process.env.PATH}` };
  delete childEnv.NODE_OPTIONS;
  if (vsixes.length) {
    log(`installing ${vsixes.map((v) => path.basename(v)).join(', ')}`);
    const args = [paths.codeServer, ...base];
    for (const v of vsixes) args.push('--install-extension', v);
    args.push('--force');
    const out = execFileSync(node, args, { env: childEnv, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    for (const v of vsixes) {
      if (!/successfully installed/i.test(out)) throw new Error(`--install-extension ${v} failed:\n${out}`);
    }
  }
  const port = await freePort();
  const logFile = path.join(dir, 'code-server.log');
  const fd = fs.openSync(logFile, 'a');
  const child = spawn(
    node,
    [
      paths.codeServer,
      ...base,
      '--auth',
      'none',
      '--bind-addr',
      `127.0.0.1:${port}`,
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      '--disable-getting-started-override',
      '--ignore-last-opened',
    ],
    { detached: true, stdio: ['ignore', fd, fd], env: childEnv },
  );
  fs.closeSync(fd);
  liveGroups.add(child.pid);
  let exited = null;
  child.on('exit', (code, sig) => {
    exited = { code, sig };
  });
  const cs = {
    dir,
    userData,
    extensions,
    port,
    url: `http://127.0.0.1:${port}`,
    logFile,
    pid: child.pid,
    async stop() {
      if (!liveGroups.has(child.pid)) return;
      liveGroups.delete(child.pid);
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {}
      for (let i = 0; i < 30 && !exited; i++) await sleep(100);
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {}
    },
    /** Last n lines of code-server's own output. */
    tail(n = 100) {
      try {
        return fs.readFileSync(logFile, 'utf8').split('\n').slice(-n).join('\n');
      } catch {
        return '(no code-server log)';
      }
    },
    /** Every log file VS Code wrote whose name matches `re` (e.g. the Rennet output channel). */
    logsMatching(re) {
      const found = [];
      const walk = (d) => {
        for (const e of fs.readdirSync(d, { withFileTypes: true })) {
          const p = path.join(d, e.name);
          if (e.isDirectory()) walk(p);
          else if (re.test(e.name)) found.push(p);
        }
      };
      try {
        walk(path.join(userData, 'logs'));
      } catch {}
      return found;
    },
  };
  onCleanup(() => cs.stop());
  // Wait until it answers.
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited) throw new Error(`code-server exited early (${JSON.stringify(exited)}):\n${cs.tail(40)}`);
    try {
      const res = await fetch(`${cs.url}/healthz`);
      if (res.ok) break;
    } catch {}
    if (Date.now() > deadline) throw new Error(`code-server did not answer on ${cs.url} within 60 s:\n${cs.tail(40)}`);
    await sleep(250);
  }
  log(`code-server up on ${cs.url} (pid ${child.pid}, dir ${dir})`);
  return cs;
}

/** Chromium from Debian via playwright-core. */
export async function launchBrowser(paths) {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: paths.chromium,
    headless: true,
    // Our own SIGINT/SIGTERM handler closes the browser and code-server in order.
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  onCleanup(() => browser.close());
  return browser;
}

/** Open the workbench on a folder and wait until it is usable. */
export async function openWorkbench(page, cs, folder) {
  await page.goto(`${cs.url}/?folder=${encodeURIComponent(folder)}`);
  await waitForWorkbench(page);
}

export async function waitForWorkbench(page, timeout = 90_000) {
  await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout });
  // The status bar and the activity bar appear once the workbench has restored its parts.
  await page.locator('#workbench\\.parts\\.statusbar').waitFor({ state: 'visible', timeout });
  await page.locator('.monaco-workbench .part.editor').waitFor({ state: 'visible', timeout });
}

/**
 * F1, type a command's title, run it (the exact entry, not the first fuzzy match). Right after
 * the workbench appears, extension-contributed commands may not be known yet and the open palette
 * does not refresh, so it is closed and reopened until the entry shows up.
 */
export async function runCommand(page, title, { timeout = 60_000 } = {}) {
  const input = page.locator('.quick-input-widget .quick-input-box input');
  const row = page
    .locator('.quick-input-widget .monaco-list-row')
    .filter({ has: page.locator('.label-name', { hasText: new RegExp(`^${escapeRe(title)}$`) }) })
    .first();
  const deadline = Date.now() + timeout;
  for (;;) {
    await page.keyboard.press('Escape');
    await page.keyboard.press('F1');
    const opened = await input.waitFor({ state: 'visible', timeout: 5_000 }).then(
      () => true,
      () => false,
    );
    // The palette can close under us (a reload finishing, a host restart's notification taking
    // focus): a fill that does not land within a few seconds is retried with a fresh palette.
    const filled =
      opened &&
      (await input.fill(`>${title}`, { timeout: 5_000 }).then(
        () => true,
        () => false,
      ));
    if (filled) {
      const found = await row.waitFor({ state: 'visible', timeout: 5_000 }).then(
        () => true,
        () => false,
      );
      // The list can re-render under the pointer (recently used rows move): a click that does not
      // land within a few seconds is retried with a fresh palette rather than waited on.
      if (
        found &&
        (await row.click({ timeout: 5_000 }).then(
          () => true,
          () => false,
        ))
      )
        break;
    } else if (!opened) {
      // Focus may be inside a webview, which swallows F1: click a neutral spot of the workbench.
      await page
        .locator('#workbench\\.parts\\.statusbar')
        .click({ position: { x: 2, y: 2 }, force: true })
        .catch(() => {});
    }
    if (Date.now() > deadline) {
      const rows = await page
        .locator('.quick-input-widget .monaco-list-row .label-name')
        .allInnerTexts()
        .catch(() => []);
      throw new Error(`the command palette offers no "${title}", or its row could not be clicked, after ${timeout / 1000} s (it shows ${JSON.stringify(rows.slice(0, 8))})`);
    }
  }
  // The palette closes (or hands over to the command's own QuickPick, whose input is not a ">" query).
  await page.waitForFunction(
    () => {
      const w = document.querySelector('.quick-input-widget');
      const i = w?.querySelector('.quick-input-box input');
      return !w || w.style.display === 'none' || !w.offsetParent || !i || !i.value.startsWith('>');
    },
    null,
    { timeout },
  );
}

/**
 * Wait for a QuickPick whose placeholder or title contains `text`, with its rows rendered;
 * answers its labels in order.
 */
export async function waitForQuickPick(page, text, { timeout = 60_000 } = {}) {
  try {
    await page.waitForFunction(
      (want) => {
        const w = document.querySelector('.quick-input-widget');
        if (!w || w.style.display === 'none' || !w.offsetParent) return false;
        const i = w.querySelector('.quick-input-box input');
        const title = w.querySelector('.quick-input-title')?.textContent ?? '';
        const matches = (i?.getAttribute('placeholder') ?? '').includes(want) || title.includes(want);
        return matches && w.querySelectorAll('.monaco-list-row .label-name').length > 0;
      },
      text,
      { timeout },
    );
  } catch {
    const ph = await page
      .locator('.quick-input-widget .quick-input-box input')
      .getAttribute('placeholder', { timeout: 1_000 })
      .catch(() => null);
    const title = await page
      .locator('.quick-input-widget .quick-input-title')
      .innerText({ timeout: 1_000 })
      .catch(() => null);
    throw new Error(`QuickPick "${text}" did not appear within ${timeout / 1000} s (visible quick input: placeholder ${JSON.stringify(ph)}, title ${JSON.stringify(title)})`);
  }
  return quickPickLabels(page);
}

/** Ctrl+P, type a file name, open the exact match. */
export async function quickOpen(page, fileName, { timeout = 15_000 } = {}) {
  await page.keyboard.press('Escape');
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget .quick-input-box input');
  await input.waitFor({ state: 'visible', timeout });
  await input.fill(fileName);
  const row = page
    .locator('.quick-input-widget .monaco-list-row')
    .filter({ has: page.locator('.label-name', { hasText: new RegExp(`^${escapeRe(fileName)}$`) }) })
    .first();
  await row.waitFor({ state: 'visible', timeout });
  await row.click();
}

/** Pick the entry labelled `label` in the QuickPick whose placeholder or title says `text`. */
export async function pickQuickPick(page, text, label, { timeout = 60_000 } = {}) {
  const labels = await waitForQuickPick(page, text, { timeout });
  const row = page
    .locator('.quick-input-widget .monaco-list-row')
    .filter({ has: page.locator('.label-name', { hasText: new RegExp(`^\\s*${escapeRe(label)}\\s*$`) }) })
    .first();
  await row.waitFor({ state: 'visible', timeout: 5_000 }).catch(() => {
    throw new Error(`QuickPick "${text}" offers no "${label}"; it offers ${JSON.stringify(labels)}`);
  });
  await row.click();
}

/** The labels a visible QuickPick offers, in order. */
export async function quickPickLabels(page) {
  return (await page.locator('.quick-input-widget .monaco-list-row .label-name').allInnerTexts()).map((s) => s.trim());
}

export function escapeRe(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Named tests, run in order, with a closing `N passed, M failed` line. */
export function testRunner({ onFailure } = {}) {
  const results = [];
  return {
    results,
    async test(name, fn) {
      if (aborted) {
        results.push({ name, ok: false, error: new Error(`not run: ${aborted}`) });
        return;
      }
      const t0 = Date.now();
      log(`▶ ${name}`);
      try {
        await fn();
        results.push({ name, ok: true });
        log(`✔ ${name} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
      } catch (e) {
        results.push({ name, ok: false, error: e });
        console.error(
          `✘ ${name} (${((Date.now() - t0) / 1000).toFixed(1)} s)\n  ${String(e?.stack ?? e)
            .split('\n')
            .join('\n  ')}`,
        );
        if (onFailure) await onFailure(name, e).catch((err) => console.error('[rig] onFailure:', err));
      }
    },
    /** Record a result computed elsewhere (the integration suites report their own). */
    record(name, error, durationMs) {
      const secs = durationMs == null ? '' : ` (${(durationMs / 1000).toFixed(1)} s)`;
      if (!error) {
        results.push({ name, ok: true });
        log(`✔ ${name}${secs}`);
      } else {
        results.push({ name, ok: false, error });
        console.error(
          `✘ ${name}${secs}\n  ${String(error?.stack ?? error)
            .split('\n')
            .join('\n  ')}`,
        );
      }
    },
    summary() {
      const passed = results.filter((r) => r.ok).length;
      const failed = results.length - passed;
      if (failed) {
        console.log('\nFailed:');
        for (const r of results.filter((x) => !x.ok)) console.log(`  - ${r.name}: ${String(r.error?.message ?? r.error).split('\n')[0]}`);
      }
      console.log(`${passed} passed, ${failed} failed`);
      // test/run-all.mjs (npm test) sums every level from this file.
      if (process.env.RENNET_TEST_SUMMARY) {
        const tests = results.map((r) => ({ name: r.name, ok: r.ok, error: r.ok ? null : String(r.error?.message ?? r.error) }));
        fs.writeFileSync(process.env.RENNET_TEST_SUMMARY, JSON.stringify({ passed, failed, skipped: 0, tests }, null, 2));
      }
      return failed;
    },
  };
}

/** An assertion that names what was expected and what was found. */
export function expect(cond, message) {
  if (!cond) throw new Error(message);
}
