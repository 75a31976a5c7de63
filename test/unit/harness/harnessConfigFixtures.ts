/**
 * What the harness-configuration tests give `assignmentFromConfig` and `lensHarnessFromConfig`:
 * discovered CLIs (both missing, both installed), recording ports, and a configuration from the
 * fields a test sets.
 */
import type { DiscoveredCli, DiscoveredLocalServer } from '../../../host/harness/discover';
import type { HarnessConfigPorts } from '../../../host/harness/harnessConfig';
import type { HarnessConfig } from '../../../protocol/review';
import type { LmModelInfo } from '../../../protocol/rpc';

export const MISSING: DiscoveredCli[] = [
  { kind: 'claude-code', bin: 'claude', version: null, available: false, reason: 'claude not found on PATH' },
  { kind: 'codex', bin: 'codex', version: null, available: false, reason: 'codex not found on PATH' },
];
export const BOTH: DiscoveredCli[] = [
  { kind: 'claude-code', bin: '/opt/claude', version: '2.1.197', available: true, reason: null },
  { kind: 'codex', bin: '/opt/codex', version: '0.171.0', available: true, reason: null },
];

/** Neither local model server is running (what a machine without Ollama or LM Studio answers). */
export const LOCAL_DOWN: DiscoveredLocalServer[] = [
  { kind: 'ollama', label: 'Ollama', baseUrl: 'http://127.0.0.1:11434', status: 'not-running', detail: 'connection refused', models: [], omitted: 0 },
  { kind: 'lm-studio', label: 'LM Studio', baseUrl: 'http://127.0.0.1:1234', status: 'not-running', detail: 'connection refused', models: [], omitted: 0 },
];

/**
 * Ports that answer `clis`, `models` (an Error: listing fails) and `local` (default: both local
 * servers down; the real loopback ports are never asked), counting discoveries and recording
 * model selectors.
 */
export function ports(
  clis: DiscoveredCli[],
  models: LmModelInfo[] | Error = [],
  local: DiscoveredLocalServer[] | (() => Promise<DiscoveredLocalServer[]>) = LOCAL_DOWN,
): HarnessConfigPorts & { discovered: number; discoveredLocal: number; listed: unknown[] } {
  const p = {
    discovered: 0,
    discoveredLocal: 0,
    listed: [] as unknown[],
    async discover() {
      p.discovered++;
      return clis;
    },
    async discoverLocal() {
      p.discoveredLocal++;
      return typeof local === 'function' ? local() : local;
    },
    async listLmModels(selector: unknown) {
      p.listed.push(selector);
      if (models instanceof Error) throw models;
      return models;
    },
    lmAsk: async () => ({ ok: false as const, reason: 'error' as const, message: 'not in this test' }),
  };
  return p;
}

export const config = (partial: Partial<HarnessConfig> & Pick<HarnessConfig, 'default'>): HarnessConfig => ({ lenses: {}, vscodeLm: {}, openai: {}, anthropic: {}, ...partial });
