// A test-only extension: on activation (onStartupFinished) it runs the integration suites with
// mocha inside this real extension host and writes a JSON result file the runner waits for.
// It does nothing unless a result file is configured (env RENNET_IT_RESULT or the setting
// rennetIntegration.resultFile), so a reload of the window never reruns the suites by accident.
import * as fs from 'node:fs';
import * as path from 'node:path';
import Mocha from 'mocha';
import * as vscode from 'vscode';
import { registerScriptedProvider } from './lmProvider';
import { registerSuites } from './suites/index';

interface TestRecord {
  title: string;
  fullTitle: string;
  state: 'passed' | 'failed' | 'pending';
  durationMs: number | null;
  error: string | null;
}

export interface IntegrationResult {
  done: true;
  vscodeVersion: string;
  startedAt: string;
  finishedAt: string;
  passed: number;
  failed: number;
  pending: number;
  tests: TestRecord[];
  /** A failure outside any test (mocha could not run). */
  fatal: string | null;
}

function writeAtomic(file: string, data: unknown): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(data, null, 2));
  fs.renameSync(tmp, file);
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const config = vscode.workspace.getConfiguration('rennetIntegration');
  const resultFile = process.env.RENNET_IT_RESULT || config.get<string>('resultFile') || '';
  if (!resultFile) return;
  const out = vscode.window.createOutputChannel('Rennet Integration Tests');
  context.subscriptions.push(out);
  // The scripted vscode.lm model the vscode-lm suites draft with (contributes.languageModelChatProviders).
  try {
    context.subscriptions.push(registerScriptedProvider());
  } catch (e) {
    out.appendLine(`could not register the scripted language model provider: ${(e as Error)?.stack ?? e}`);
  }
  const startedAt = new Date().toISOString();
  const tests: TestRecord[] = [];
  const finish = (fatal: string | null) => {
    const result: IntegrationResult = {
      done: true,
      vscodeVersion: vscode.version,
      startedAt,
      finishedAt: new Date().toISOString(),
      passed: tests.filter((t) => t.state === 'passed').length,
      failed: tests.filter((t) => t.state === 'failed').length + (fatal ? 1 : 0),
      pending: tests.filter((t) => t.state === 'pending').length,
      tests,
      fatal,
    };
    writeAtomic(resultFile, result);
    out.appendLine(`${result.passed} passed, ${result.failed} failed, ${result.pending} pending → ${resultFile}`);
  };

  try {
    // A reporter of our own: no dynamic require of mocha's reporters inside the bundle.
    function Reporter(this: unknown, runner: Mocha.Runner) {
      runner.on('pass', (t: Mocha.Test) => {
        tests.push({ title: t.title, fullTitle: t.fullTitle(), state: 'passed', durationMs: t.duration ?? null, error: null });
        out.appendLine(`✔ ${t.fullTitle()}`);
      });
      runner.on('fail', (t: Mocha.Test, e: Error) => {
        const error = `${e?.stack ?? e}`;
        tests.push({ title: t.title, fullTitle: t.fullTitle(), state: 'failed', durationMs: t.duration ?? null, error });
        out.appendLine(`✘ ${t.fullTitle()}\n${error}`);
      });
      runner.on('pending', (t: Mocha.Test) => {
        tests.push({ title: t.title, fullTitle: t.fullTitle(), state: 'pending', durationMs: null, error: null });
        out.appendLine(`- ${t.fullTitle()} (pending)`);
      });
    }
    const mocha = new Mocha({ ui: 'bdd', timeout: 60_000, reporter: Reporter as unknown as string, color: false });
    // What `mocha.addFile` + `loadFiles` would do for a file: hand the bdd globals to the suites.
    mocha.suite.emit('pre-require', globalThis, 'rennet-integration', mocha);
    registerSuites({ fixtureRepo: process.env.RENNET_IT_REPO || config.get<string>('fixtureRepo') || '' });
    mocha.suite.emit('post-require', globalThis, 'rennet-integration', mocha);
    await new Promise<void>((resolve) => mocha.run(() => resolve()));
    finish(null);
  } catch (e) {
    finish(`${(e as Error)?.stack ?? e}`);
  }
}

export function deactivate(): void {}
