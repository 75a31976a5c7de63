import { readFileSync } from 'node:fs';
import { AnthropicHarness } from './anthropic';
import { ClaudeCodeHarness } from './claudeCode';
import { CodexHarness } from './codex';
import {
  discoverCliHarnesses,
  discoverLocalModels,
  firstLocalModel,
  localHarnessFor,
  localModelUsable,
  localServerSummary,
  localStatusWords,
  type DiscoveredCli,
  type DiscoveredLocalServer,
} from './discover';
import { OpenAiCompatibleHarness } from './openai';
import { isLoopback as isLoopbackUrl } from './toolLoop';
import { parseHarnessScript, scriptedAssignment } from './scripted';
import type { Harness } from '../pipeline/ports';
import type { HarnessAssignment } from '../pipeline/types';
import { escapeControls } from '../../protocol/text';

/**
 * `rennet review --harness NAME`: which harness drafts the lanes.
 *
 * - `auto` (default): the agent CLIs installed on this machine (Claude Code, Codex), which carry
 *   the user's own login and settings; with none, the first tool-capable model of a local model
 *   server (Ollama on 127.0.0.1:11434, then LM Studio on 127.0.0.1:1234) through the
 *   OpenAI-compatible harness. Other HTTP endpoints are used only when named explicitly
 *   (`--harness openai|anthropic`): nothing is sent anywhere the user did not configure. With two
 *   CLIs, Flagged gets one review seat from each. What discovery found is reported as lines
 *   (`discoveryLines`), which `rennet review` prints on stderr.
 * - `claude-code`, `codex`: that CLI (found on PATH, or RENNET_CLAUDE_BIN / RENNET_CODEX_BIN).
 * - `openai`, `anthropic`: an HTTP API at `--base-url` with `--model`; the key comes from
 *   OPENAI_API_KEY / ANTHROPIC_API_KEY (optional for a loopback base URL).
 * - `vscode-lm`: VS Code's language models, only inside VS Code (refused here, saying so).
 * - `scripted:<file>`: the scripted harness playing a recorded JSON script (host/harness/README.md).
 * - `none`: no model; host-settled lanes still settle, the others say what is missing.
 */

export type HarnessChoice =
  | { kind: 'auto' }
  | { kind: 'none' }
  | { kind: 'scripted'; file: string }
  | { kind: 'claude-code' }
  | { kind: 'codex' }
  | { kind: 'openai'; baseUrl: string; model: string; apiKey: string | undefined }
  | { kind: 'anthropic'; baseUrl: string; model: string; apiKey: string | undefined };

export const HARNESS_NAMES = ['auto', 'claude-code', 'codex', 'openai', 'anthropic', 'vscode-lm', 'scripted:<file>', 'none'] as const;

/** The public endpoints used when --base-url is not given. */
export const DEFAULT_BASE_URLS = { openai: 'https://api.openai.com/v1', anthropic: 'https://api.anthropic.com' } as const;

/** A bad --harness value or a missing companion flag: a usage error (exit 2). */
export class HarnessChoiceError extends Error {}

/** A script that cannot be read or parsed, or a harness that cannot run here: refused (exit 1). */
export class HarnessLoadError extends Error {}

export interface HarnessFlags {
  baseUrl?: string | undefined;
  model?: string | undefined;
}

/** A base URL on this machine (a key is optional there): the adapters' own test, on a string. */
export function isLoopback(url: string): boolean {
  try {
    return isLoopbackUrl(new URL(url));
  } catch {
    return false;
  }
}

export function parseHarnessChoice(value: string | undefined, flags: HarnessFlags = {}, env: NodeJS.ProcessEnv = process.env): HarnessChoice {
  const name = value ?? 'auto';
  const httpOnly = (flag: string) => {
    if (name !== 'openai' && name !== 'anthropic') throw new HarnessChoiceError(`${flag} applies to --harness openai or anthropic only`);
  };
  if (flags.baseUrl !== undefined) httpOnly('--base-url');
  if (flags.model !== undefined && !['openai', 'anthropic', 'claude-code', 'codex'].includes(name)) {
    throw new HarnessChoiceError('--model applies to --harness openai, anthropic, claude-code or codex');
  }
  switch (name) {
    case 'auto':
    case 'none':
    case 'claude-code':
    case 'codex':
      return { kind: name };
    case 'vscode-lm':
      throw new HarnessChoiceError('--harness vscode-lm runs inside VS Code (the extension asks the editor for its language models); in a terminal pick claude-code, codex, openai or anthropic');
    case 'openai':
    case 'anthropic': {
      if (!flags.model) throw new HarnessChoiceError(`--harness ${name} needs --model NAME`);
      const baseUrl = flags.baseUrl ?? DEFAULT_BASE_URLS[name];
      try {
        const url = new URL(baseUrl);
        if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http(s)');
      } catch {
        throw new HarnessChoiceError(`--base-url ${baseUrl} is not an http(s) URL`);
      }
      const keyName = name === 'openai' ? 'OPENAI_API_KEY' : 'ANTHROPIC_API_KEY';
      const apiKey = env[keyName] || undefined;
      if (!apiKey && !isLoopback(baseUrl)) {
        throw new HarnessChoiceError(`--harness ${name} at ${baseUrl} needs ${keyName} in the environment (a key is optional only for a loopback base URL)`);
      }
      return { kind: name, baseUrl, model: flags.model, apiKey };
    }
    default:
      if (name === 'scripted' || name === 'scripted:') throw new HarnessChoiceError('--harness scripted needs a script file: --harness scripted:FILE');
      if (name.startsWith('scripted:')) return { kind: 'scripted', file: name.slice('scripted:'.length) };
      throw new HarnessChoiceError(`unknown harness "${name}" (one of ${HARNESS_NAMES.join(', ')})`);
  }
}

/** One harness drafting every lane; Flagged gets it as its one reviewer and its compiler. */
function everywhere(harness: Harness, reviewers: Harness[] = [harness]): HarnessAssignment {
  return { design: harness, sequence: harness, decisions: harness, noise: harness, flagged: { reviewers, compiler: harness } };
}

function noneAssignment(hint: string): HarnessAssignment {
  return { design: null, sequence: null, decisions: null, noise: null, flagged: { reviewers: [], compiler: null }, missingHint: hint };
}

export function cliHarness(cli: DiscoveredCli, model?: string): Harness {
  const options = model ? { bin: cli.bin, model } : { bin: cli.bin };
  return cli.kind === 'claude-code' ? new ClaudeCodeHarness(options) : new CodexHarness(options);
}

/** How loadHarnessAssignment discovers (tests pass their own) and whom it tells what `auto` found. */
export interface HarnessDiscovery {
  /** The agent CLIs (default: discoverCliHarnesses()). */
  discover?: () => Promise<DiscoveredCli[]>;
  /** The local model servers (default: discoverLocalModels(), the two fixed loopback addresses). */
  discoverLocal?: () => Promise<DiscoveredLocalServer[]>;
  /** Given discoveryLines() once `auto` has chosen (rennet review prints them on stderr). */
  report?: (lines: string[]) => void;
}

/**
 * The pipeline's assignment for a choice. Reads a script or discovers CLIs (and, for `auto`, the
 * local model servers) now, before anything is captured, so a bad choice changes nothing.
 */
export async function loadHarnessAssignment(choice: HarnessChoice, flags: HarnessFlags = {}, discovery: HarnessDiscovery = {}): Promise<HarnessAssignment> {
  const discover = discovery.discover ?? (() => discoverCliHarnesses());
  switch (choice.kind) {
    case 'none':
      return noneAssignment('--harness none was chosen; pick claude-code, codex, openai, anthropic or scripted:FILE to draft');
    case 'openai':
      return everywhere(new OpenAiCompatibleHarness({ baseUrl: choice.baseUrl, model: choice.model, ...(choice.apiKey ? { apiKey: choice.apiKey } : {}) }));
    case 'anthropic':
      return everywhere(new AnthropicHarness({ baseUrl: choice.baseUrl, model: choice.model, ...(choice.apiKey ? { apiKey: choice.apiKey } : {}) }));
    case 'claude-code':
    case 'codex': {
      const found = (await discover()).find((cli) => cli.kind === choice.kind);
      if (!found?.available) throw new HarnessLoadError(`--harness ${choice.kind}: ${found?.reason ?? 'not found'}`);
      return everywhere(cliHarness(found, flags.model));
    }
    case 'auto': {
      // Both at once: the local probe is bounded (LOCAL_PROBE_TIMEOUT_MS) and shorter than a CLI's --version.
      const [clis, servers] = await Promise.all([discover(), (discovery.discoverLocal ?? (() => discoverLocalModels()))()]);
      const available = clis.filter((cli) => cli.available);
      const local = available.length === 0 ? firstLocalModel(servers) : null;
      let assignment: HarnessAssignment;
      let chosen: string;
      if (available.length > 0) {
        // Two different providers review independently when both are installed.
        const reviewers = available.map((cli) => cliHarness(cli));
        assignment = everywhere(reviewers[0] as Harness, reviewers);
        chosen = available.map((cli) => cli.kind).join(' + ');
      } else if (local) {
        const harness = localHarnessFor(local.server, local.model);
        assignment = everywhere(harness);
        chosen = `${escapeControls(local.model.name)} on ${local.server.label} (openai-compatible, ${local.server.baseUrl}/v1)`;
      } else {
        const why = [...clis.map((cli) => cli.reason).filter(Boolean), ...servers.map(localServerSummary)].join('; ');
        assignment = noneAssignment(
          `auto discovery found no model harness (${why}); install Claude Code or Codex, run Ollama or LM Studio here with a tool-capable model, or pass --harness openai|anthropic --base-url URL --model NAME, or scripted:FILE`,
        );
        chosen = 'none';
      }
      discovery.report?.(discoveryLines(clis, servers, chosen));
      return assignment;
    }
    case 'scripted': {
      let text: string;
      try {
        text = readFileSync(choice.file, 'utf8');
      } catch (error) {
        throw new HarnessLoadError(`cannot read the harness script ${choice.file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
      }
      let script: unknown;
      try {
        script = parseHarnessScript(JSON.parse(text) as unknown);
      } catch (error) {
        throw new HarnessLoadError(`${choice.file} is not a harness script: ${(error as Error).message}`);
      }
      const { harnesses: _harnesses, ...assignment } = scriptedAssignment(script as Parameters<typeof scriptedAssignment>[0]);
      return { ...assignment, missingHint: `the script ${choice.file} has no seat for it` };
    }
  }
}

/**
 * What `auto` discovery found, one line per CLI and per local model server, then what drafts:
 *
 *   Harness discovery (auto):
 *     claude-code  not available: claude not found on PATH
 *     Ollama       http://127.0.0.1:11434 running; tool calling: qwen3:8b; no tool support (not usable): gemma2:2b
 *     LM Studio    http://127.0.0.1:1234 not running (connection refused)
 *     → drafting with qwen3:8b on Ollama (openai-compatible, http://127.0.0.1:11434/v1)
 *
 * Model names come from the servers: control characters are written as escapes.
 */
export function discoveryLines(clis: readonly DiscoveredCli[], servers: readonly DiscoveredLocalServer[], chosen: string): string[] {
  const width = Math.max(...[...clis.map((c) => c.kind), ...servers.map((s) => s.label)].map((n) => n.length)) + 2;
  const lines = ['Harness discovery (auto):'];
  for (const cli of clis) {
    const state = cli.available ? `available (${[cli.version, cli.bin].filter(Boolean).join(' at ')})` : `not available: ${cli.reason ?? 'not found'}`;
    lines.push(`  ${cli.kind.padEnd(width)}${state}`);
  }
  for (const server of servers) lines.push(`  ${server.label.padEnd(width)}${server.baseUrl} ${localServerWords(server)}`);
  lines.push(`  → drafting with ${chosen === 'none' ? 'nothing (no model harness found)' : chosen}`);
  return lines;
}

/** A server's state and its models by what they can do (names escaped). */
function localServerWords(server: DiscoveredLocalServer): string {
  if (server.status !== 'running') return localStatusWords(server);
  const names = (models: typeof server.models) => models.map((m) => escapeControls(m.name)).join(', ');
  const groups: string[] = [];
  const usable = server.models.filter(localModelUsable);
  const remote = server.models.filter((m) => m.remote !== null);
  const none = server.models.filter((m) => m.remote === null && m.tools === false);
  const unknown = server.models.filter((m) => m.remote === null && m.tools === null);
  if (usable.length > 0) groups.push(`tool calling: ${names(usable)}`);
  if (unknown.length > 0) groups.push(`tool support unknown (not used): ${names(unknown)}`);
  if (none.length > 0) groups.push(`no tool support (not usable): ${names(none)}`);
  if (remote.length > 0) groups.push(`run elsewhere (${escapeControls([...new Set(remote.map((m) => m.remote))].join(', '))}; not used): ${names(remote)}`);
  if (server.models.length === 0) groups.push('no models');
  if (server.omitted > 0) groups.push(`${server.omitted} more not listed`);
  return `running${server.detail ? ` (${escapeControls(server.detail)})` : ''}; ${groups.join('; ')}`;
}
