import * as vscode from 'vscode';
import { FORGES_SETTING } from '../protocol/forge';
import { errorMessage, type RennetError } from '../protocol/result';
import { AuthToken, ForgesConfigure, type AuthTokenParams } from '../protocol/rpc';
import type { HostClient } from './hostClient';
import { forgeRepair, githubAuthProvider, gitlabTokenKey, parseAuthTokenParams, type ForgeRepair, type MissingToken } from './forgePlan';
import { notify } from './ui';
import { ui, type UiText } from './uiText';

/**
 * The editor's side of forge access:
 * - `rennet.forges` reaches the host (`rennet/forges/configure`) right after every host start and
 *   on every change of the setting; the host validates it and reports a bad value on use.
 * - The host asks for a token (`rennet/auth/token`) when it is about to call a forge: GitHub hosts
 *   answer VS Code's GitHub (or GitHub Enterprise) sign-in, silently — the reviewer is never
 *   prompted by a background call; GitLab hosts answer the token "Rennet: Set GitLab Token" stored
 *   in SecretStorage. A token is never logged, shown or kept here.
 * - A refusal of a forge act is said with its obvious repair (sign in, set a token, the setting,
 *   capture the new head).
 */
export class Forges implements vscode.Disposable {
  /** The last forge the host asked a token for and got none (what a sign-in would repair). */
  private missing: { forge: MissingToken; at: number } | null = null;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    host: HostClient,
    private readonly secrets: vscode.SecretStorage,
    private readonly log: vscode.LogOutputChannel,
  ) {
    host.onEveryStart((send) => send(ForgesConfigure, { entries: configuredForges() }));
    host.installHostRequestHandlers((edge) => {
      edge.request(AuthToken, (params) => this.token(params));
    });
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration(FORGES_SETTING)) void host.sendNotification(ForgesConfigure, { entries: configuredForges() });
      }),
    );
  }

  /** The forge whose token the host asked for last and did not get, if it asked within `withinMs`. */
  missingToken(withinMs = 5 * 60_000): MissingToken | null {
    return this.missing && Date.now() - this.missing.at <= withinMs ? this.missing.forge : null;
  }

  /** Forget the last missing token (before an act whose refusal is judged on its own). */
  clearMissing(): void {
    this.missing = null;
  }

  /**
   * Show a refusal of a forge act as an error with its obvious repair; choosing it runs the repair.
   * `captureNewHead` is what Capture New Head runs for this refusal's session.
   */
  async showRefusal(message: UiText, error: Pick<RennetError, 'code' | 'message'>, captureNewHead?: () => unknown): Promise<void> {
    const repair = forgeRepair(error, this.missingToken());
    const usable = repair && (repair.kind !== 'capture-new-head' || captureNewHead) ? repair : null;
    const choice = usable ? await notify('error', message, usable.label) : await notify('error', message);
    if (usable && choice === usable.label) await this.repair(usable, captureNewHead);
  }

  /** Runs a repair: sign in, store a token, open the setting, or capture the new head. */
  async repair(repair: ForgeRepair, captureNewHead?: () => unknown): Promise<void> {
    switch (repair.kind) {
      case 'sign-in-github':
        await this.signInToGitHub(repair.host);
        return;
      case 'set-gitlab-token':
        await vscode.commands.executeCommand('rennet.setGitLabToken', repair.host);
        return;
      case 'forge-settings':
        await vscode.commands.executeCommand('workbench.action.openSettings', FORGES_SETTING);
        return;
      case 'capture-new-head':
        await captureNewHead?.();
        return;
    }
  }

  /**
   * Ask VS Code for a GitHub sign-in for `host`, prompting when there is none (or Rennet was not
   * allowed to use it yet). Only ever run from an act of the reviewer's — a command or a repair
   * they chose — never from the host's background token requests. Answers whether one exists now.
   */
  async signInToGitHub(host = 'github.com'): Promise<boolean> {
    const provider = githubAuthProvider(host, enterpriseUri());
    if (!provider) {
      const action = ui`Open Settings`;
      const choice = await notify(
        'warning',
        ui`VS Code signs in to one GitHub Enterprise server, the one the “github-enterprise.uri” setting names; set it to https://${host} to review its requests, or set GITHUB_TOKEN for the Rennet host.`,
        action,
      );
      if (choice === action) await vscode.commands.executeCommand('workbench.action.openSettings', 'github-enterprise.uri');
      return false;
    }
    try {
      const session = await vscode.authentication.getSession(provider, ['repo'], { createIfNone: true });
      if (this.missing?.forge.host === host) this.missing = null;
      return Boolean(session);
    } catch (error) {
      this.log.warn(`GitHub sign-in for ${host} did not complete: ${errorMessage(error)}`);
      return false;
    }
  }

  /** Whether VS Code holds a GitHub sign-in Rennet may use for `host`, without prompting. */
  async hasGitHubSession(host = 'github.com'): Promise<boolean> {
    return (await this.githubToken(host)) !== null;
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }

  /** `rennet/auth/token`: the token the editor holds for a forge, or null. Never prompts, never logs the token. */
  private async token(asked: AuthTokenParams): Promise<string | null> {
    // The edge checked the shape; the host name is normalised (and checked to be one) here.
    const params = parseAuthTokenParams(asked);
    if (!params) {
      this.log.warn('The Rennet host asked for a forge token for something that is not a forge host name; none was given.');
      return null;
    }
    const token = params.provider === 'github' ? await this.githubToken(params.host) : await this.gitlabToken(params.host);
    if (token === null) this.missing = { forge: params, at: Date.now() };
    else if (this.missing?.forge.host === params.host) this.missing = null;
    this.log.info(`Forge credentials for ${params.host} (${params.provider}): ${token === null ? 'none held by VS Code' : 'answered from VS Code'}.`);
    return token;
  }

  private async githubToken(host: string): Promise<string | null> {
    const provider = githubAuthProvider(host, enterpriseUri());
    if (!provider) return null;
    try {
      const session = await vscode.authentication.getSession(provider, ['repo'], { silent: true });
      return session?.accessToken ?? null;
    } catch (error) {
      // An auth provider that is not there (GitHub Enterprise unconfigured) holds nothing.
      this.log.warn(`VS Code's ${provider} sign-in could not be read: ${errorMessage(error)}`);
      return null;
    }
  }

  private async gitlabToken(host: string): Promise<string | null> {
    try {
      const token = (await this.secrets.get(gitlabTokenKey(host)))?.trim();
      return token ? token : null;
    } catch (error) {
      this.log.warn(`The GitLab token for ${host} could not be read from secret storage: ${errorMessage(error)}`);
      return null;
    }
  }
}

/** The `rennet.forges` setting as written (the host validates it). */
export function configuredForges(): unknown {
  return vscode.workspace.getConfiguration().get<unknown>(FORGES_SETTING, []) ?? [];
}

function enterpriseUri(): string | undefined {
  const uri = vscode.workspace.getConfiguration('github-enterprise').get<string>('uri');
  return typeof uri === 'string' && uri.trim() ? uri.trim() : undefined;
}
