/**
 * What the harness-configuration tests give `assignmentFromConfig` and `lensHarnessFromConfig`:
 * discovered CLIs (both missing, both installed), recording ports, and a configuration from the
 * fields a test sets.
 */
import type { DiscoveredCli } from '../../../host/harness/discover';
import type { HarnessConfigPorts } from '../../../host/review/harnessConfig';
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

/** Ports that answer `clis` and `models` (an Error: listing fails), counting discoveries and recording model selectors. */
export function ports(clis: DiscoveredCli[], models: LmModelInfo[] | Error = []): HarnessConfigPorts & { discovered: number; listed: unknown[] } {
  const p = {
    discovered: 0,
    listed: [] as unknown[],
    async discover() {
      p.discovered++;
      return clis;
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
