// The scripted model servers of the end-to-end scenarios, as a child process that prints its URLs
// and ends with the test: `test/servers/<script>` (e2eReading.ts, e2eHostile.ts; both run through
// test/servers/e2eProcess.ts) under the repository's tsx, given the scenario's plan as a JSON file.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import * as rig from './rig.mjs';

/**
 * Writes `plan` to `<dir>/<label>-plan.json`, starts `test/servers/<script>` on it in its own
 * process group, and waits for its URL line. Every JSON line on its stderr is a model request
 * (`requests`, in order); any other line is kept in `stderr`. `stop()` closes its stdin (the
 * servers close and exit), then kills the group; it is also registered as a rig cleanup.
 * Answers `{ openaiBaseUrl, anthropicOrigin, model, requests, stderr, stop }`.
 */
export async function startModelServers({ script, plan, dir, label }) {
  const planFile = path.join(dir, `${label}-plan.json`);
  fs.writeFileSync(planFile, JSON.stringify(plan, null, 2));
  const requests = [];
  const { urls, stderr, stop, pid } = await startServerProcess({
    script: path.join('test/servers', script),
    args: [planFile],
    what: 'the model servers',
    // Every JSON line on stderr is a model request; anything else is kept as text.
    onStderrLine: (line) => {
      try {
        requests.push(JSON.parse(line));
        return true;
      } catch {
        return false;
      }
    },
  });
  const child = { pid };
  rig.log(`${label}: model servers: openai ${urls.openaiBaseUrl}, anthropic ${urls.anthropicOrigin} (pid ${child.pid})`);
  return { ...urls, requests, stderr, stop };
}

/**
 * The code-server user settings that point Rennet at the servers: the OpenAI-compatible one by
 * default, the Anthropic one for Flagged, both with the scripted model (no key: loopback).
 */
export function harnessSettings(models) {
  return {
    'rennet.harness.default': 'openai',
    'rennet.harness.openai.baseUrl': models.openaiBaseUrl,
    'rennet.harness.openai.model': models.model,
    'rennet.harness.lenses': { flagged: 'anthropic' },
    'rennet.harness.anthropic.baseUrl': models.anthropicOrigin,
    'rennet.harness.anthropic.model': models.model,
  };
}

/**
 * Starts `tsx <script> ...args` (a path under the repository) in its own process group and waits
 * for its first stdout line, a JSON object of URLs. Stderr lines go to `onStderrLine` (answering
 * true keeps them out of `stderr`). `stop()` closes its stdin (the server closes and exits), then
 * kills the group; it is also registered as a rig cleanup. Answers `{ urls, stderr, stop, pid }`.
 */
export async function startServerProcess({ script, args = [], what, onStderrLine = () => false }) {
  const tsx = path.join(rig.ROOT, 'node_modules/.bin/tsx');
  const child = spawn(tsx, [path.join(rig.ROOT, script), ...args], { cwd: rig.ROOT, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  const stderr = [];
  let buffered = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk) => {
    buffered += chunk;
    for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (line && !onStderrLine(line)) stderr.push(line);
    }
  });
  let exited = null;
  child.on('exit', (code, sig) => {
    exited = { code, sig };
  });
  const stop = async () => {
    if (exited) return;
    child.stdin.end();
    for (let i = 0; i < 30 && !exited; i++) await rig.sleep(100);
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {}
  };
  rig.onCleanup(stop);
  const urls = await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`${what} printed no URLs within 60 s; stderr: ${stderr.join('\n')}`)), 60_000);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const nl = out.indexOf('\n');
      if (nl < 0) return;
      clearTimeout(timer);
      try {
        resolve(JSON.parse(out.slice(0, nl)));
      } catch (e) {
        reject(new Error(`${what} printed ${JSON.stringify(out.slice(0, 200))}: ${e.message}`));
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${code}) before printing its URLs: ${stderr.join('\n')}`));
    });
  });
  return { urls, stderr, stop, pid: child.pid };
}
