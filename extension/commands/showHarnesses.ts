import * as vscode from 'vscode';
import { LENSES } from '../../protocol/board';
import { HarnessDiscover, HarnessDiscoverLocal, type CliHarnessInfo, type LmModelInfo, type LocalModelInfo, type LocalServerInfo } from '../../protocol/rpc';
import type { Ctx } from '../ctx';
import { errorMessage } from '../../protocol/result';
import { listChatModels } from '../lm';
import { ui, type UiText } from '../uiText';
import { API_KEY_PROVIDERS, apiKeySecret, PROVIDER_LABELS, type ApiKeyProvider } from '../apiKeys';

/** What "Rennet: Show Harnesses" found (also the command's return value, for tests). */
export interface HarnessReport {
  configured: { default: string; lenses: Record<string, string> };
  vscodeLm: {
    selector: { vendor: string | null; family: string | null };
    /** Every chat model VS Code lists. */
    models: LmModelInfo[];
    /** Those the selector picks (the first drafts). */
    matching: LmModelInfo[];
  };
  /** CLI harnesses as the host discovered them, or why discovery could not run. */
  cli: { harnesses: CliHarnessInfo[]; unavailable: string | null };
  /** Local model servers (Ollama, LM Studio on their loopback ports) as the host probed them, or why it could not. */
  local: { servers: LocalServerInfo[]; unavailable: string | null };
  http: Array<{ provider: ApiKeyProvider; keyStored: boolean; baseUrl: string; model: string }>;
}

/**
 * "Rennet: Show Harnesses": what could draft the lens boards here, and why the rest cannot. The
 * extension lists the vscode.lm chat models itself; the host discovers the CLI harnesses
 * (`rennet/harness/discover`) and probes the local model servers (`rennet/harness/discoverLocal`:
 * Ollama and LM Studio on their loopback ports, with each model's tool support); the HTTP
 * harnesses are settings plus a stored key (presence only). The report goes to the Rennet output
 * channel; the servers' text (model names, their words) goes through uiText.
 */
export const showHarnesses = (ctx: Ctx) => async (): Promise<HarnessReport> => {
  const config = vscode.workspace.getConfiguration('rennet.harness');
  const vendor = config.get<string>('vscodeLm.vendor')?.trim() || null;
  const family = config.get<string>('vscodeLm.family')?.trim() || null;
  const lenses = config.get<Record<string, string>>('lenses') ?? {};

  let models: LmModelInfo[] = [];
  let matching: LmModelInfo[] = [];
  let lmProblem: string | null = null;
  try {
    models = await listChatModels({});
    matching = await listChatModels({ ...(vendor ? { vendor } : {}), ...(family ? { family } : {}) });
  } catch (error) {
    lmProblem = errorMessage(error);
  }

  const cli: HarnessReport['cli'] = { harnesses: [], unavailable: null };
  const local: HarnessReport['local'] = { servers: [], unavailable: null };
  const noMethod = (error: unknown, what: string) => {
    const text = errorMessage(error);
    return /unhandled method|method not found/i.test(text) ? `this host has no ${what} yet` : text;
  };
  await Promise.all([
    ctx.host.request(HarnessDiscover, {}, 60_000).then(
      (result) => (result.ok ? (cli.harnesses = result.value) : (cli.unavailable = result.error.message)),
      (error: unknown) => (cli.unavailable = noMethod(error, 'CLI discovery')),
    ),
    ctx.host.request(HarnessDiscoverLocal, {}, 30_000).then(
      (result) => (result.ok ? (local.servers = result.value) : (local.unavailable = result.error.message)),
      (error: unknown) => (local.unavailable = noMethod(error, 'local model discovery')),
    ),
  ]);

  const http: HarnessReport['http'] = [];
  for (const provider of API_KEY_PROVIDERS) {
    const section = vscode.workspace.getConfiguration(`rennet.harness.${provider}`);
    http.push({
      provider,
      keyStored: (await ctx.extension.secrets.get(apiKeySecret(provider))) !== undefined,
      baseUrl: section.get<string>('baseUrl') ?? '',
      model: section.get<string>('model') ?? '',
    });
  }

  const report: HarnessReport = {
    configured: { default: config.get<string>('default') ?? 'auto', lenses },
    vscodeLm: { selector: { vendor, family }, models, matching },
    cli,
    local,
    http,
  };
  for (const line of reportLines(report, lmProblem)) ctx.log.info(line);
  ctx.log.show(true);
  return report;
};

export function reportLines(report: HarnessReport, lmProblem: string | null = null): string[] {
  const lines = ['Rennet harnesses'];
  const overrides = LENSES.filter((l) => report.configured.lenses[l]).map((l) => `${l}: ${report.configured.lenses[l]}`);
  lines.push(`  configured: default ${report.configured.default}${overrides.length ? `; per lens ${overrides.join(', ')}` : ''}`);

  const { vendor, family } = report.vscodeLm.selector;
  const selector = [vendor && `vendor ${vendor}`, family && `family ${family}`].filter(Boolean).join(', ') || 'any model';
  lines.push(`  vscode-lm (${selector}):`);
  if (lmProblem) lines.push(`    not available: ${lmProblem}`);
  else if (report.vscodeLm.models.length === 0) lines.push('    not available: VS Code lists no chat models (install and sign in to a model provider such as GitHub Copilot)');
  else {
    const chosen = report.vscodeLm.matching[0];
    for (const m of report.vscodeLm.models) {
      const match = report.vscodeLm.matching.some((x) => x.vendor === m.vendor && x.id === m.id);
      const tools = m.toolCalling === null ? '' : m.toolCalling ? ', tool calling' : ', NO tool calling';
      const mark = chosen && chosen.vendor === m.vendor && chosen.id === m.id ? 'drafts' : match ? 'matches' : 'not selected';
      lines.push(`    ${m.vendor}/${m.id} — ${m.name} (family ${m.family}${tools}): ${mark}`);
    }
    if (!chosen) lines.push(`    none matches ${selector}: change rennet.harness.vscodeLm.vendor / family`);
  }

  lines.push('  CLI harnesses:');
  if (report.cli.unavailable) lines.push(`    not discovered: ${report.cli.unavailable}`);
  else if (report.cli.harnesses.length === 0) lines.push('    none found');
  for (const h of report.cli.harnesses) {
    const where = [h.version, h.path].filter(Boolean).join(' at ');
    lines.push(`    ${h.kind}: ${h.available ? `available${where ? ` (${where})` : ''}` : 'not available'}${h.reason ? ` — ${h.reason}` : ''}`);
  }

  lines.push(...localServerLines(report.local));

  lines.push('  HTTP APIs:');
  for (const h of report.http) {
    const missing = [!h.keyStored && !isLoopbackUrl(h.baseUrl) && 'no API key stored (run “Rennet: Set API Key”)', !h.model && `no model set (rennet.harness.${h.provider}.model)`].filter(Boolean);
    lines.push(
      `    ${h.provider} (${PROVIDER_LABELS[h.provider]}, ${h.baseUrl || 'no base URL'}${h.model ? `, model ${h.model}` : ''}): ${missing.length ? `not ready — ${missing.join('; ')}` : 'ready'}`,
    );
  }
  return lines;
}

/**
 * The local model servers, each running or not, with its models by what they can do. Model names
 * and the servers' words are the servers' text: uiText escapes them.
 */
export function localServerLines(local: HarnessReport['local']): UiText[] {
  const lines: UiText[] = [ui`  Local model servers (auto uses the first tool-capable model when no CLI and no VS Code chat model is available):`];
  if (local.unavailable) return [...lines, ui`    not probed: ${local.unavailable}`];
  for (const server of local.servers) {
    // One ui template per line: every value (the servers' words included) is escaped exactly once.
    const dash = server.detail ? ` — ${server.detail}` : '';
    const state = {
      running: `running${dash}`,
      'not-running': `not running${server.detail ? ` (${server.detail})` : ''}`,
      'no-answer': `not answering${dash}`,
      error: `answering, but not as ${server.label}${dash}`,
    }[server.status];
    lines.push(ui`    ${server.label} (${server.baseUrl}): ${state}`);
    if (server.status !== 'running') continue;
    if (server.models.length === 0) lines.push(ui`      no models (pull or download one with tool support)`);
    for (const model of server.models) lines.push(ui`      ${model.name}: ${localModelVerdict(model)}`);
    if (server.omitted > 0) lines.push(ui`      ${server.omitted} more not listed`);
  }
  return lines;
}

/** What a listed model is to Rennet (plain words; the caller escapes them with the line). */
function localModelVerdict(model: LocalModelInfo): string {
  if (model.remote !== null) return `runs on ${model.remote}, not on this machine — not used`;
  const loaded = model.loaded === true ? ' (loaded)' : '';
  if (model.tools === true) return `tool calling${loaded} — usable`;
  if (model.tools === false) return `no tool support${loaded} — not usable`;
  return `tool support unknown${loaded} — not used by auto (to try it, choose openai with this server's /v1 base URL)`;
}

/** A base URL on this machine needs no key. */
function isLoopbackUrl(text: string): boolean {
  try {
    const host = new URL(text).hostname.replace(/^\[|\]$/g, '');
    return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
  } catch {
    return false;
  }
}
