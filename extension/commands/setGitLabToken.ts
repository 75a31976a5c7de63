import type { Ctx } from '../ctx';
import { gitlabTokenKey, isForgeHost } from '../forgePlan';
import { errorMessage } from '../../protocol/result';
import { inputBox, notify } from '../ui';
import { ui } from '../uiText';

/**
 * "Rennet: Set GitLab Token" (`rennet.setGitLabToken [host]`): a GitLab host (gitlab.com unless
 * named) and a personal access token in a password box, kept in VS Code's secret storage under
 * `rennet.gitlabToken/<host>` — the host asks for it (`rennet/auth/token`) when it calls that
 * GitLab. An empty token removes the stored one. The token is never logged, shown or returned.
 */
export const setGitLabToken =
  (ctx: Ctx) =>
  async (hostArg?: unknown): Promise<{ host: string; stored: boolean } | undefined> => {
    try {
      let host = typeof hostArg === 'string' && isForgeHost(hostArg.trim()) ? hostArg.trim().toLowerCase() : undefined;
      if (!host) {
        const typed = await inputBox({
          title: ui`Rennet: Set GitLab Token (1/2)`,
          prompt: ui`The GitLab host the token is for: gitlab.com, or a self-managed GitLab registered in rennet.forges.`,
          value: 'gitlab.com',
          ignoreFocusOut: true,
          validateInput: (value) => (isForgeHost(value.trim()) ? undefined : ui`A host name, with a port when the remote names one (gitlab.example.com, 127.0.0.1:8080).`),
        });
        if (typed === undefined) return undefined;
        host = typed.trim().toLowerCase();
      }
      const token = await inputBox({
        title: ui`Rennet: GitLab token for ${host} (2/2)`,
        prompt: ui`A personal access token with the api scope. Kept in VS Code's secret storage, never in settings. Leave empty to remove the stored one.`,
        password: true,
        ignoreFocusOut: true,
        validateInput: (value) => (/\s/.test(value.trim()) ? ui`A token has no spaces or line breaks.` : undefined),
      });
      if (token === undefined) return undefined;
      const secrets = ctx.extension.secrets;
      const key = gitlabTokenKey(host);
      if (token.trim() === '') {
        const had = (await secrets.get(key)) !== undefined;
        if (had) await secrets.delete(key);
        ctx.log.info(`GitLab token for ${host}: ${had ? 'removed from' : 'none was in'} secret storage.`);
        void notify('info', had ? ui`Rennet: the GitLab token for ${host} was removed.` : ui`Rennet: no GitLab token for ${host} was stored; nothing changed.`);
        return { host, stored: false };
      }
      await secrets.store(key, token.trim());
      // Never the token itself, nor its length or prefix.
      ctx.log.info(`A GitLab token for ${host} was stored in secret storage.`);
      void notify('info', ui`Rennet: the GitLab token for ${host} is stored.`);
      return { host, stored: true };
    } catch (error) {
      void notify('error', ui`Rennet could not store the GitLab token: ${errorMessage(error)}`);
      return undefined;
    }
  };
