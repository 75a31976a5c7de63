import { defaultDataDir } from './store';

/** The store directory: `--store DIR`, else RENNET_STORE_DIR, else the platform's data directory. */
export function resolveStoreDir(argv: readonly string[], env: NodeJS.ProcessEnv): string {
  const flag = argv.indexOf('--store');
  if (flag >= 0 && argv[flag + 1]) return argv[flag + 1] as string;
  if (env.RENNET_STORE_DIR) return env.RENNET_STORE_DIR;
  return defaultDataDir(env);
}
