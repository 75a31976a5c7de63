/**
 * The HTTP harnesses whose keys Rennet keeps in VS Code's secret storage, and where. Shared by the
 * "Set API Key" command and the harness configuration it feeds (lenses.ts), which must not import
 * a command (that import closed a circle through ctx.ts).
 */
export const API_KEY_PROVIDERS = ['openai', 'anthropic'] as const;
export type ApiKeyProvider = (typeof API_KEY_PROVIDERS)[number];

export const PROVIDER_LABELS: Record<ApiKeyProvider, string> = {
  openai: 'OpenAI-compatible API',
  anthropic: 'Anthropic API',
};

/** The secret storage key of a provider's API key. */
export function apiKeySecret(provider: ApiKeyProvider): string {
  return `rennet.apiKey.${provider}`;
}

export function isApiKeyProvider(value: unknown): value is ApiKeyProvider {
  return typeof value === 'string' && (API_KEY_PROVIDERS as readonly string[]).includes(value);
}
