import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import type { Harness } from '../pipeline/ports';
import { ClaudeCodeHarness } from './claudeCode';
import { exitWords, runCli } from './cliProcess';
import { CodexHarness } from './codex';

/**
 * Finds the vendor agent CLIs on this machine: `claude` (Claude Code) and `codex`, on PATH or
 * where RENNET_CLAUDE_BIN / RENNET_CODEX_BIN point, and asks each for `--version` (a short
 * timeout). A CLI that is missing says "not found on PATH"; one that fails says its exact error.
 * Nothing here logs in, calls a model, or reads the user's configuration.
 */

export type CliHarnessKind = 'claude-code' | 'codex';

export interface DiscoveredCli {
  kind: CliHarnessKind;
  /** The executable run (an absolute path when found), or the bare name when it was not found. */
  bin: string;
  /** The version the CLI printed (e.g. `2.1.197`), null when it did not answer. */
  version: string | null;
  available: boolean;
  /** Why it is unavailable, in words; null when available. */
  reason: string | null;
}

export interface DiscoverOptions {
  /** `--version` must answer within this many milliseconds (default 10000). */
  timeoutMs?: number;
}

const CLIS: ReadonlyArray<{ kind: CliHarnessKind; name: string; override: string }> = [
  { kind: 'claude-code', name: 'claude', override: 'RENNET_CLAUDE_BIN' },
  { kind: 'codex', name: 'codex', override: 'RENNET_CODEX_BIN' },
];

export async function discoverCliHarnesses(env: NodeJS.ProcessEnv = process.env, options: DiscoverOptions = {}): Promise<DiscoveredCli[]> {
  return Promise.all(CLIS.map((cli) => discoverOne(cli, env, options.timeoutMs ?? 10_000)));
}

async function discoverOne(cli: (typeof CLIS)[number], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<DiscoveredCli> {
  const unavailable = (bin: string, reason: string): DiscoveredCli => ({ kind: cli.kind, bin, version: null, available: false, reason });
  const override = env[cli.override]?.trim();
  let bin: string;
  if (override) {
    const found = isAbsolute(override) || override.includes('/') || override.includes('\\') ? executableAt(resolve(override)) : findOnPath(override, env);
    if (found === null) return unavailable(override, `${cli.override}=${override}: not found${isAbsolute(override) ? '' : ' on PATH'} or not executable`);
    bin = found;
  } else {
    const found = findOnPath(cli.name, env);
    if (found === null) return unavailable(cli.name, `${cli.name} not found on PATH`);
    bin = found;
  }
  const answer = await version(bin, env, timeoutMs);
  if (!answer.ok) return unavailable(bin, answer.reason);
  return { kind: cli.kind, bin, version: answer.version, available: true, reason: null };
}

/** The first executable named `name` on env.PATH (PATHEXT on Windows), or null. */
export function findOnPath(name: string, env: NodeJS.ProcessEnv = process.env): string | null {
  const dirs = (env.PATH ?? env.Path ?? '').split(delimiter).filter((d) => d.length > 0);
  const exts = process.platform === 'win32' ? ['', ...(env.PATHEXT ?? '.EXE;.CMD;.BAT;.COM').split(';').filter((e) => e.length > 0)] : [''];
  for (const dir of dirs) {
    for (const ext of exts) {
      const found = executableAt(join(dir, name + ext));
      if (found !== null) return found;
    }
  }
  return null;
}

function executableAt(path: string): string | null {
  try {
    if (!statSync(path).isFile()) return null;
    accessSync(path, constants.X_OK);
    return path;
  } catch {
    return null;
  }
}

type VersionAnswer = { ok: true; version: string } | { ok: false; reason: string };

async function version(bin: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<VersionAnswer> {
  // Its own process group, killed whole on timeout (the npm `codex` launcher starts the native binary).
  const lines: string[] = [];
  const exit = await runCli({ bin, args: ['--version'], cwd: process.cwd(), env, signal: AbortSignal.timeout(timeoutMs), onLine: (l) => lines.push(l), graceMs: 500 });
  if (exit.spawnError !== null) return { ok: false, reason: `\`${bin} --version\` could not run: ${exit.spawnError}` };
  if (exit.aborted) return { ok: false, reason: `\`${bin} --version\` did not answer within ${timeoutMs} ms` };
  if (exit.code !== 0) {
    const said = (exit.stderr.trim() || lines.join('\n')).split(/\r?\n/).slice(0, 5).join('\n').slice(0, 1000);
    return { ok: false, reason: `\`${bin} --version\` ${exitWords(exit)}${said ? `: ${said}` : ''}` };
  }
  const first = (lines[0] ?? '').trim();
  if (!first) return { ok: false, reason: `\`${bin} --version\` printed nothing` };
  const semver = /\b\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?\b/.exec(first);
  return { ok: true, version: semver ? semver[0] : first.slice(0, 100) };
}

/** The harness for a discovered CLI (the CLI's `--harness` wiring builds its assignment from these). */
export function cliHarnessFor(found: DiscoveredCli, options: { model?: string; env?: NodeJS.ProcessEnv } = {}): Harness {
  return found.kind === 'claude-code' ? new ClaudeCodeHarness({ bin: found.bin, ...options }) : new CodexHarness({ bin: found.bin, ...options });
}
