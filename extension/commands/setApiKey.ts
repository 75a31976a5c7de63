import type { Ctx } from '../ctx';
import { errorMessage } from '../../protocol/result';
import { confirmModal, inputBox, notify, pickOne } from '../ui';
import { ui, type UiPickItem } from '../uiText';
import { API_KEY_PROVIDERS, PROVIDER_LABELS, apiKeySecret, isApiKeyProvider, type ApiKeyProvider } from '../apiKeys';

type ProviderItem = UiPickItem & {
  provider: ApiKeyProvider;
};

/**
 * "Rennet: Set API Key": pick a provider (or pass it as the argument), type the key in a password
 * box, and it goes to `context.secrets` under `rennet.apiKey.<provider>`. An empty key removes a
 * stored one (after asking). The key is never logged, shown or returned.
 */
export const setApiKey =
  (ctx: Ctx) =>
  async (providerArg?: unknown): Promise<{ provider: ApiKeyProvider; stored: boolean } | undefined> => {
    try {
      const secrets = ctx.extension.secrets;
      let provider: ApiKeyProvider | undefined = isApiKeyProvider(providerArg) ? providerArg : undefined;
      if (!provider) {
        const items: ProviderItem[] = [];
        for (const p of API_KEY_PROVIDERS) {
          const stored = (await secrets.get(apiKeySecret(p))) !== undefined;
          items.push({
            label: ui`${PROVIDER_LABELS[p]}`,
            description: ui`${p}`,
            detail: stored ? ui`A key is stored; entering a new one replaces it.` : ui`No key stored.`,
            provider: p,
          });
        }
        const pick = await pickOne(items, { title: ui`Rennet: Set API Key`, placeHolder: ui`Provider whose API key to store` });
        if (!pick) return undefined;
        provider = pick.provider;
      }
      const label = PROVIDER_LABELS[provider];
      const key = await inputBox({
        title: ui`Rennet: ${label} key`,
        prompt: ui`Stored in VS Code's secret storage, never in settings. Leave empty to remove a stored key.`,
        password: true,
        ignoreFocusOut: true,
        validateInput: (value) => (/\s/.test(value.trim()) ? ui`An API key has no spaces or line breaks.` : undefined),
      });
      if (key === undefined) return undefined;
      const secret = apiKeySecret(provider);
      if (key.trim() === '') {
        if ((await secrets.get(secret)) === undefined) {
          void notify('info', ui`Rennet: no ${label} key is stored; nothing changed.`);
          return { provider, stored: false };
        }
        const removeAction = ui`Remove`;
        const remove = await confirmModal('warning', ui`Remove the stored ${label} key?`, undefined, removeAction);
        if (remove !== removeAction) return undefined;
        await secrets.delete(secret);
        ctx.log.info(`The ${provider} API key was removed from secret storage.`);
        void notify('info', ui`Rennet: the ${label} key was removed.`);
        return { provider, stored: false };
      }
      await secrets.store(secret, key.trim());
      // Never the key itself, nor its length or prefix.
      ctx.log.info(`An ${provider} API key was stored in secret storage.`);
      void notify('info', ui`Rennet: the ${label} key is stored.`);
      return { provider, stored: true };
    } catch (error) {
      void notify('error', ui`Rennet could not store the key: ${errorMessage(error)}`);
      return undefined;
    }
  };
