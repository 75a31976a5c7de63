import * as vscode from 'vscode';
import { LENS_TITLES } from '../protocol/board';
import { err, errorMessage, rennetError, type Result } from '../protocol/result';
import { HarnessName, type GenerationSnapshot, type HarnessConfig, type PriorReview } from '../protocol/review';
import { GenerationGet, RereviewRun, ReviewRunLenses } from '../protocol/rpc';
import { apiKeySecret, API_KEY_PROVIDERS, type ApiKeyProvider } from './apiKeys';
import type { HostClient } from './hostClient';
import { notify } from './ui';
import { ui, uiText } from './uiText';

/**
 * Drafting the lens boards from VS Code: the settings (`rennet.harness.*`) and the stored API keys
 * (SecretStorage `rennet.apiKey.<provider>`) become a HarnessConfig for `rennet/review/runLenses`;
 * the host decides everything else. A refusal is shown as a warning with the way out (settings,
 * "Set API Key", "Show Harnesses"); so is a generation in which no seat could run because no model
 * harness is configured (its lanes say so on the board too).
 *
 * Keys ride the request only: never logged, never kept here.
 */

/** Resolving harnesses (CLI discovery, VS Code's model list) and opening the boards. */
export const RUN_LENSES_TIMEOUT_MS = 60_000;
/** A re-review reads the forge and runs the closure seat's turn before the generation is filed. */
export const REREVIEW_TIMEOUT_MS = 12 * 60_000;

const SHOW_HARNESSES = ui`Show Harnesses`;
const OPEN_SETTINGS = ui`Open Settings`;
const SET_API_KEY = ui`Set API Key`;

/** The harness configuration the settings name, with the keys of the providers it uses. */
export async function readHarnessConfig(secrets: vscode.SecretStorage): Promise<HarnessConfig> {
  const config = vscode.workspace.getConfiguration('rennet.harness');
  const named = HarnessName.safeParse(config.get('default'));
  const fallback: HarnessName = named.success ? named.data : 'auto';
  // Passed through as written: the host validates lens names and harness names and says what is wrong.
  const lenses = { ...(config.get<Record<string, HarnessName>>('lenses') ?? {}) };
  const used = new Set<string>([fallback, ...Object.values(lenses)]);
  const text = (key: string) => config.get<string>(key)?.trim() || undefined;
  const section = async (provider: ApiKeyProvider) => {
    const apiKey = used.has(provider) ? (await secrets.get(apiKeySecret(provider)))?.trim() || undefined : undefined;
    return compact({ baseUrl: text(`${provider}.baseUrl`), model: text(`${provider}.model`), apiKey });
  };
  const [openai, anthropic] = (await Promise.all(API_KEY_PROVIDERS.map(section))) as [HarnessConfig['openai'], HarnessConfig['anthropic']];
  return {
    default: fallback,
    lenses,
    vscodeLm: compact({ vendor: text('vscodeLm.vendor'), family: text('vscodeLm.family') }),
    openai,
    anthropic,
  };
}

function compact<T extends Record<string, string | undefined>>(value: T): { [K in keyof T]?: string } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as { [K in keyof T]?: string };
}

/** True when no seat of the generation ran and a lane failed for want of a model harness. */
export function draftedNothingForWantOfHarness(snapshot: GenerationSnapshot): boolean {
  const terminal = snapshot.lanes.every((l) => l.state === 'settled' || l.state === 'absent' || l.state === 'failed');
  return terminal && snapshot.spend.length === 0 && snapshot.lanes.some((l) => l.state === 'failed' && /^no model harness is configured/.test(l.failure?.message ?? ''));
}

export class LensRuns implements vscode.Disposable {
  /** Generations started from this window whose outcome has not been looked at yet. */
  private readonly watching = new Set<string>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly host: HostClient,
    private readonly secrets: vscode.SecretStorage,
    private readonly log: vscode.LogOutputChannel,
  ) {
    this.disposables.push(host.onGenerationChanged(({ snapshot }) => this.watch(snapshot)));
  }

  /**
   * Asks the host to draft the session's boards (`rennet/review/runLenses`) with the settings'
   * harnesses, or `override`. Shows a warning when the host refuses or cannot be reached.
   */
  async start(sessionId: string, override?: HarnessConfig): Promise<Result<{ generationId: string }>> {
    let result: Result<{ generationId: string }>;
    try {
      const harness = override ?? (await readHarnessConfig(this.secrets));
      result = await this.host.request(ReviewRunLenses, { sessionId, harness }, RUN_LENSES_TIMEOUT_MS);
    } catch (error) {
      result = err(rennetError('host-unavailable', errorMessage(error)));
    }
    if (!result.ok) {
      this.log.warn(`Drafting the boards of ${sessionId} was refused: ${result.error.message}`);
      this.warn(`Rennet could not draft the boards: ${result.error.message}`);
      return result;
    }
    this.watching.add(result.value.generationId);
    this.log.info(`Drafting the boards of ${sessionId}: generation ${result.value.generationId}.`);
    return result;
  }

  /**
   * "Re-review Since Last Review" (`rennet/rereview/run`): the host measures the request against
   * the reviewer's earlier review, judges its items, and drafts a generation over the delta. The
   * answer's line is what the next post opens with; it is shown, escaped, as it will be posted.
   */
  async rereview(sessionId: string): Promise<Result<{ generationId: string | null; prior: PriorReview }>> {
    let result: Result<{ generationId: string | null; prior: PriorReview }>;
    try {
      const harness = await readHarnessConfig(this.secrets);
      result = await this.host.request(RereviewRun, { sessionId, harness }, REREVIEW_TIMEOUT_MS);
    } catch (error) {
      result = err(rennetError('host-unavailable', errorMessage(error)));
    }
    if (!result.ok) {
      this.log.warn(`Re-reviewing ${sessionId} was refused: ${result.error.message}`);
      this.warn(`Rennet could not re-review since your last review: ${result.error.message}`);
      return result;
    }
    const { generationId, prior } = result.value;
    if (generationId) this.watching.add(generationId);
    this.log.info(`Re-review of ${sessionId}: ${prior.statement} ${prior.line}`);
    void notify('info', ui`Rennet: ${prior.statement} ${prior.line}.`);
    return result;
  }

  /**
   * After a review is opened: draft its boards, unless its current generation already covers the
   * active patchset and nothing in it failed (re-opening a review shows what it has; "Rennet: Draft
   * Boards" drafts again). A generation a stopped host left unsettled reads as failed, so opening
   * the review again asks runLenses, and the host resumes that generation (host/review/resume.ts).
   */
  async startUnlessDrafted(sessionId: string, patchsetId: string | null): Promise<void> {
    try {
      const current = await this.host.request(GenerationGet, { sessionId });
      const g = current.ok ? current.value : null;
      if (g && g.patchsetId === patchsetId && g.lanes.every((l) => l.state !== 'failed')) {
        this.log.info(`Review ${sessionId} already has generation ${g.generationId} for patchset ${patchsetId}; not drafting again.`);
        return;
      }
    } catch (error) {
      this.log.warn(`Reading the boards of ${sessionId}: ${errorMessage(error)}`);
    }
    await this.start(sessionId);
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }

  private watch(snapshot: GenerationSnapshot): void {
    if (!this.watching.has(snapshot.generationId)) return;
    const terminal = snapshot.lanes.every((l) => l.state === 'settled' || l.state === 'absent' || l.state === 'failed');
    if (!terminal) return;
    this.watching.delete(snapshot.generationId);
    if (!draftedNothingForWantOfHarness(snapshot)) return;
    const failed = snapshot.lanes.filter((l) => l.state === 'failed').map((l) => LENS_TITLES[l.lens]);
    const why = snapshot.lanes.find((l) => /^no model harness is configured/.test(l.failure?.message ?? ''))?.failure?.message ?? '';
    this.warn(`Rennet drafted no board (${failed.join(', ')}): ${why}`);
  }

  private warn(message: string): void {
    const actions = /API key/i.test(message) ? [SET_API_KEY, OPEN_SETTINGS] : [SHOW_HARNESSES, OPEN_SETTINGS];
    void notify('warning', uiText(message), ...actions).then((choice) => {
      if (choice === SHOW_HARNESSES) void vscode.commands.executeCommand('rennet.showHarnesses');
      else if (choice === OPEN_SETTINGS) void vscode.commands.executeCommand('workbench.action.openSettings', 'rennet.harness');
      else if (choice === SET_API_KEY) {
        const provider = API_KEY_PROVIDERS.find((p) => message.includes(`${p} harness`));
        void vscode.commands.executeCommand('rennet.setApiKey', provider);
      }
    });
  }
}
