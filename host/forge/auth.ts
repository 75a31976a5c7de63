import { execFile } from 'node:child_process';
import type { ForgeProvider } from '../../protocol/exits';

/**
 * Where a forge token comes from, in order. GitHub: the editor's GitHub sign-in (VS Code's
 * authentication session, asked of the extension), then GITHUB_TOKEN / GH_TOKEN, then the gh CLI.
 * GitLab: GITLAB_TOKEN, then the token stored with "Rennet: Set GitLab Token" (SecretStorage, asked
 * of the extension), then the glab CLI. A token is never logged, never written to the store, and
 * never put in an error message; only its source is named.
 */

export type TokenSource = 'vscode' | 'secret-storage' | 'env:GITHUB_TOKEN' | 'env:GH_TOKEN' | 'env:GITLAB_TOKEN' | 'gh' | 'glab';

export interface ForgeToken {
  token: string;
  source: TokenSource;
}

export interface TokenSources {
  env: Readonly<Record<string, string | undefined>>;
  /** The editor's credentials (VS Code): GitHub's authentication session, GitLab's stored token. Absent in the CLI. */
  editor?: (provider: ForgeProvider, host: string) => Promise<string | null>;
  /** Whether to ask the gh / glab CLIs (off in tests that must not reach a developer's real login). */
  cli: boolean;
  /** Ceiling on one CLI call. */
  cliTimeoutMs?: number;
}

const CLI_TIMEOUT_MS = 5_000;

export async function resolveToken(provider: ForgeProvider, host: string, sources: TokenSources): Promise<ForgeToken | null> {
  const bare = host.replace(/:\d+$/, '');
  const env = (name: 'GITHUB_TOKEN' | 'GH_TOKEN' | 'GITLAB_TOKEN'): ForgeToken | null => {
    const value = sources.env[name]?.trim();
    return value ? { token: value, source: `env:${name}` } : null;
  };
  const editor = async (source: 'vscode' | 'secret-storage'): Promise<ForgeToken | null> => {
    if (!sources.editor) return null;
    try {
      const token = (await sources.editor(provider, host))?.trim();
      return token ? { token, source } : null;
    } catch {
      return null;
    }
  };
  const cli = async (command: 'gh' | 'glab', args: string[]): Promise<ForgeToken | null> => {
    if (!sources.cli) return null;
    const token = await new Promise<string | null>((resolve) => {
      execFile(command, args, { timeout: sources.cliTimeoutMs ?? CLI_TIMEOUT_MS, windowsHide: true, env: { ...process.env, GH_PROMPT_DISABLED: '1', NO_COLOR: '1' } }, (error, stdout) =>
        resolve(error ? null : String(stdout).trim() || null),
      );
    });
    return token && !/\s/.test(token) ? { token, source: command } : null;
  };
  if (provider === 'github') {
    return (await editor('vscode')) ?? env('GITHUB_TOKEN') ?? env('GH_TOKEN') ?? (await cli('gh', ['auth', 'token', '--hostname', bare]));
  }
  return env('GITLAB_TOKEN') ?? (await editor('secret-storage')) ?? (await cli('glab', ['config', 'get', 'token', '--host', bare]));
}

/** What to do when no token was found, in words. */
export function missingTokenRepair(provider: ForgeProvider, host: string, editor: boolean): string {
  if (provider === 'github') {
    return editor
      ? `sign in to GitHub in VS Code (Accounts menu), or set GITHUB_TOKEN, or run \`gh auth login --hostname ${host}\``
      : `set GITHUB_TOKEN (or GH_TOKEN), or run \`gh auth login --hostname ${host}\``;
  }
  return editor ? `run "Rennet: Set GitLab Token", or set GITLAB_TOKEN, or run \`glab auth login --hostname ${host}\`` : `set GITLAB_TOKEN, or run \`glab auth login --hostname ${host}\``;
}
