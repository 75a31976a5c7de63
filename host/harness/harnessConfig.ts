import { CORE_LENSES, LENSES, type Lens } from '../../protocol/board';
import type { HarnessConfig, HarnessName } from '../../protocol/review';
import type { LmModelInfo, LmModelsParams } from '../../protocol/rpc';
import { AnthropicHarness } from './anthropic';
import { firstLocalModel, localHarnessFor, localServerSummary, type DiscoveredCli, type DiscoveredLocalServer } from './discover';
import { OpenAiCompatibleHarness } from './openai';
import { VscodeLmHarness, type LmAsk } from './vscodeLm';
import type { Harness } from '../pipeline/ports';
import type { HarnessAssignment } from '../pipeline/types';
import { cliHarness, DEFAULT_BASE_URLS, isLoopback } from './harnessChoice';

/**
 * The VS Code settings' harness configuration (protocol/review.ts HarnessConfig, read by the
 * extension from `rennet.harness.*` and SecretStorage) → the pipeline's HarnessAssignment.
 *
 * Each lens takes `lenses[lens]`, else `default`. Every harness name the configuration uses is
 * resolved once (one harness instance per name, shared by the lenses that name it, as
 * `rennet review --harness` shares one):
 *
 * - `none`: no model; the lens's lane fails "no model harness is configured", saying why.
 * - `openai` / `anthropic`: the HTTP API at `baseUrl` (default the public endpoint) with `model`
 *   (required) and `apiKey` (required unless the base URL is loopback).
 * - `claude-code` / `codex`: that CLI, found by discovery (PATH, RENNET_CLAUDE_BIN / _CODEX_BIN).
 * - `vscode-lm`: the first VS Code chat model matching `vscodeLm.vendor` / `family`, listed through
 *   the extension (`rennet/lm/models`) and pinned; its tool loop runs in the host.
 * - `auto`: the installed CLIs (with two, Flagged gets one review seat from each); else the VS Code
 *   chat models the extension reports (with two vendors, one review seat each); else the first
 *   tool-capable model of a local model server (Ollama on 127.0.0.1:11434, then LM Studio on
 *   127.0.0.1:1234) through the OpenAI-compatible harness; else none, with a hint naming what to
 *   install, run or set. Other HTTP APIs are used only when named.
 *
 * A configuration that cannot be honoured as written (an unknown lens, no model for an HTTP API,
 * a non-loopback URL without a key, a named CLI that is not installed, no VS Code model for
 * `vscode-lm`) is refused with a HarnessConfigRefusal saying what to change; nothing runs.
 * Messages never quote a key.
 */

export class HarnessConfigRefusal extends Error {
  constructor(
    readonly code: 'invalid-request' | 'not-found',
    message: string,
  ) {
    super(message);
  }
}

export interface HarnessConfigPorts {
  /** The CLI harnesses on this machine (host/harness/discover.ts). */
  discover(): Promise<DiscoveredCli[]>;
  /** The local model servers (discoverLocalModels: Ollama and LM Studio on their loopback ports); asked only when auto needs them. */
  discoverLocal(): Promise<DiscoveredLocalServer[]>;
  /** The VS Code chat models for a selector, through the extension; throws when it cannot ask. */
  listLmModels(selector: LmModelsParams): Promise<LmModelInfo[]>;
  /** One model response through the extension (`rennet/lm/chat`). */
  lmAsk: LmAsk;
  /** Aborts every vscode-lm turn of the run (a cancelled or stopped run). */
  signal?: AbortSignal;
}

/** What one harness name resolved to: the drafter/compiler, and Flagged's review seats. */
interface Resolved {
  main: Harness | null;
  reviewers: Harness[];
  /** Why there is no harness (main null): appended to the lane's failure. */
  hint: string | null;
}

/** Which harness name drafts each lens. Refuses a lens the configuration names that does not exist. */
export function lensHarnessNames(config: HarnessConfig): Record<Lens, HarnessName> {
  for (const key of Object.keys(config.lenses)) {
    if (!(LENSES as readonly string[]).includes(key)) {
      throw new HarnessConfigRefusal('invalid-request', `rennet.harness.lenses names an unknown lens "${key}" (one of ${LENSES.join(', ')})`);
    }
  }
  return Object.fromEntries(LENSES.map((lens) => [lens, config.lenses[lens] ?? config.default])) as Record<Lens, HarnessName>;
}

/** Each discovery runs at most once per resolution, however many names need it. */
interface Discovery {
  clis(): Promise<DiscoveredCli[]>;
  local(): Promise<DiscoveredLocalServer[]>;
}

function discoveryOnce(ports: HarnessConfigPorts): Discovery {
  let clis: Promise<DiscoveredCli[]> | null = null;
  let local: Promise<DiscoveredLocalServer[]> | null = null;
  return { clis: () => (clis ??= ports.discover()), local: () => (local ??= ports.discoverLocal()) };
}

export async function assignmentFromConfig(config: HarnessConfig, ports: HarnessConfigPorts): Promise<HarnessAssignment> {
  const names = lensHarnessNames(config);
  const discover = discoveryOnce(ports);
  const resolved = new Map<HarnessName, Resolved>();
  // Resolved in a fixed order, one name at a time, so a refusal names the first problem.
  for (const lens of LENSES) {
    const name = names[lens];
    if (!resolved.has(name)) resolved.set(name, await resolveName(name, config, ports, discover));
  }
  const of = (lens: Lens) => resolved.get(names[lens]) as Resolved;

  const hints: string[] = [];
  const hint = (text: string | null) => {
    if (text && !hints.includes(text)) hints.push(text);
  };
  // Only lenses that would need a model are worth a hint (Noise is decided later; Design may be host-settled).
  for (const lens of [...CORE_LENSES, 'noise'] as Lens[]) if (!of(lens).main) hint(of(lens).hint);
  const flagged = of('flagged');
  return {
    design: of('design').main,
    sequence: of('sequence').main,
    decisions: of('decisions').main,
    noise: of('noise').main,
    flagged: { reviewers: flagged.main ? flagged.reviewers : [], compiler: flagged.main },
    ...(hints.length > 0 ? { missingHint: hints.join('; ') } : {}),
  };
}

/** The harness a draft of one lens would get, or null with the hint why there is none. */
export interface LensHarness {
  harness: Harness | null;
  hint: string | null;
}

/**
 * The harness that drafts `lens` under `config` — exactly the one assignmentFromConfig gives that
 * lens (for Flagged, its compiler) — resolving only that lens's harness name, so a problem with
 * another lens's setting does not refuse this one. Throws HarnessConfigRefusal as
 * assignmentFromConfig does. Used by rennet/asks/explain: an explanation of a lens's prose runs
 * on the harness that lens drafts with.
 */
export async function lensHarnessFromConfig(config: HarnessConfig, lens: Lens, ports: HarnessConfigPorts): Promise<LensHarness> {
  const name = lensHarnessNames(config)[lens];
  const resolved = await resolveName(name, config, ports, discoveryOnce(ports));
  return { harness: resolved.main, hint: resolved.main ? null : resolved.hint };
}

/** A one-line account of an assignment for the log: which harness drafts which lens (never a key). */
export function describeAssignment(assignment: HarnessAssignment): string {
  const label = (h: Harness | null) => (h ? `${h.kind}${h.model ? ` (${h.model})` : ''}` : 'none');
  const parts = (['design', 'sequence', 'decisions', 'noise'] as const).map((lens) => `${lens}: ${label(assignment[lens])}`);
  const reviewers = assignment.flagged.reviewers.map(label).join(' + ') || 'none';
  parts.splice(3, 0, `flagged: ${reviewers} → ${label(assignment.flagged.compiler)}`);
  return parts.join(', ');
}

async function resolveName(name: HarnessName, config: HarnessConfig, ports: HarnessConfigPorts, discover: Discovery): Promise<Resolved> {
  switch (name) {
    case 'none':
      return { main: null, reviewers: [], hint: `the settings choose no harness (none) for it; pick one in rennet.harness.default or rennet.harness.lenses` };
    case 'openai':
    case 'anthropic':
      return single(httpHarness(name, config));
    case 'claude-code':
    case 'codex': {
      const found = (await discover.clis()).find((cli) => cli.kind === name);
      if (!found?.available) {
        throw new HarnessConfigRefusal(
          'not-found',
          `the ${name} harness is not available here: ${found?.reason ?? 'not found'}; install it, or choose another harness in rennet.harness.default / rennet.harness.lenses`,
        );
      }
      return single(cliHarness(found));
    }
    case 'vscode-lm': {
      const selector = lmSelector(config);
      const models = await listModels(ports, selector);
      const model = models[0];
      if (!model) {
        const wanted = [selector.vendor && `vendor "${selector.vendor}"`, selector.family && `family "${selector.family}"`].filter(Boolean).join(', ');
        throw new HarnessConfigRefusal(
          'not-found',
          `no VS Code language model matches ${wanted || 'any selector'}; install and sign in to a model provider (such as GitHub Copilot), or change rennet.harness.vscodeLm.vendor / family`,
        );
      }
      return single(lmHarness(model, ports));
    }
    case 'auto':
      return auto(config, ports, discover);
  }
}

function single(harness: Harness): Resolved {
  return { main: harness, reviewers: [harness], hint: null };
}

async function auto(config: HarnessConfig, ports: HarnessConfigPorts, discover: Discovery): Promise<Resolved> {
  const clis = await discover.clis();
  const available = clis.filter((cli) => cli.available);
  if (available.length > 0) {
    // Two different providers review independently when both are installed.
    return { main: cliHarness(available[0] as DiscoveredCli), reviewers: available.map((cli) => cliHarness(cli)), hint: null };
  }
  let models: LmModelInfo[] = [];
  let lmWhy = 'VS Code lists no chat models';
  try {
    models = await ports.listLmModels(lmSelector(config));
  } catch (error) {
    lmWhy = `VS Code's chat models could not be listed (${(error as Error).message})`;
  }
  const first = models[0];
  if (first) {
    // A second review seat, at most one: a model of another vendor reviews most independently;
    // failing that, another family of the same vendor (Copilot serves several). Two reviews of
    // one provider are still two reviews: the compiler pairs them by name.
    const other = models.find((m) => m.vendor !== first.vendor) ?? models.find((m) => m.family !== first.family);
    const main = lmHarness(first, ports);
    return { main, reviewers: other ? [main, lmHarness(other, ports)] : [main], hint: null };
  }
  // Last: a local model is usually smaller than what the CLIs or the editor's providers offer.
  const servers = await discover.local();
  const local = firstLocalModel(servers);
  if (local) return single(localHarnessFor(local.server, local.model));
  const why = [...clis.map((cli) => cli.reason).filter((r): r is string => Boolean(r)), lmWhy].join('; ');
  return {
    main: null,
    reviewers: [],
    hint:
      `auto discovery found no model harness (${why}) and no local model server with a tool-capable model (${servers.map(localServerSummary).join('; ')}); ` +
      'install Claude Code or Codex, sign in to a VS Code chat model provider, run Ollama or LM Studio here with a tool-capable model, or choose openai / anthropic in rennet.harness.default',
  };
}

function lmSelector(config: HarnessConfig): LmModelsParams {
  const vendor = config.vscodeLm.vendor?.trim();
  const family = config.vscodeLm.family?.trim();
  return { ...(vendor ? { vendor } : {}), ...(family ? { family } : {}) };
}

async function listModels(ports: HarnessConfigPorts, selector: LmModelsParams): Promise<LmModelInfo[]> {
  try {
    return await ports.listLmModels(selector);
  } catch (error) {
    throw new HarnessConfigRefusal('invalid-request', `could not list VS Code's language models: ${(error as Error).message}`);
  }
}

function lmHarness(model: LmModelInfo, ports: HarnessConfigPorts): Harness {
  return new VscodeLmHarness({ ask: ports.lmAsk, model, ...(ports.signal ? { signal: ports.signal } : {}) });
}

function httpHarness(name: 'openai' | 'anthropic', config: HarnessConfig): Harness {
  const section = config[name];
  const setting = `rennet.harness.${name}`;
  const model = section.model?.trim();
  if (!model) throw new HarnessConfigRefusal('invalid-request', `the ${name} harness needs a model: set ${setting}.model`);
  const baseUrl = section.baseUrl?.trim() || DEFAULT_BASE_URLS[name];
  let url: URL;
  try {
    url = new URL(baseUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http(s)');
  } catch {
    throw new HarnessConfigRefusal('invalid-request', `${setting}.baseUrl is not an http(s) URL; set it to the API's base URL`);
  }
  const apiKey = section.apiKey?.trim() || undefined;
  if (!apiKey && !isLoopback(baseUrl)) {
    throw new HarnessConfigRefusal('invalid-request', `the ${name} harness at ${url.origin} needs an API key: run “Rennet: Set API Key” (a key is optional only for a loopback base URL)`);
  }
  const options = { baseUrl, model, ...(apiKey ? { apiKey } : {}) };
  return name === 'openai' ? new OpenAiCompatibleHarness(options) : new AnthropicHarness(options);
}
