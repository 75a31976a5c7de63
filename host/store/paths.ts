import * as os from 'node:os';
import * as path from 'node:path';

/**
 * Where the store lives when nobody says otherwise (the CLI). The VS Code extension passes its
 * globalStorage path instead. `RENNET_DATA_DIR` wins everywhere.
 */
export function defaultDataDir(env: Record<string, string | undefined> = process.env, platform: NodeJS.Platform = process.platform): string {
  const explicit = env.RENNET_DATA_DIR;
  if (explicit) return explicit;
  const p = platform === 'win32' ? path.win32 : path.posix;
  const home = env.HOME || env.USERPROFILE || os.homedir();
  if (platform === 'win32') {
    const local = env.LOCALAPPDATA || p.join(env.USERPROFILE || home, 'AppData', 'Local');
    return p.join(local, 'rennet');
  }
  if (platform === 'darwin') return p.join(home, 'Library', 'Application Support', 'rennet');
  const xdg = env.XDG_DATA_HOME;
  // The XDG spec says a relative XDG_DATA_HOME is invalid and must be ignored.
  if (xdg && p.isAbsolute(xdg)) return p.join(xdg, 'rennet');
  return p.join(home, '.local', 'share', 'rennet');
}
