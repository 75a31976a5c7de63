import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';

/**
 * Debian's Chromium, headless, through playwright-core, launched as test/e2e/rig.mjs launches it.
 * Its path comes from the paths.json test/e2e/install-code-server.sh writes. Absent Chromium is a
 * failure that says how to get it, never a silently skipped figure.
 */

export class ChromiumMissing extends Error {
  override name = 'ChromiumMissing';
}

export function chromiumPath(): string {
  const cache = process.env.RENNET_TEST_CACHE || join(homedir(), '.cache/rennet-test');
  const pathsFile = join(cache, 'paths.json');
  const fix = 'run test/e2e/install-code-server.sh (it installs Debian’s chromium and writes that file), then npm run bench again';
  if (!existsSync(pathsFile)) throw new ChromiumMissing(`the webview bench needs Chromium, and ${pathsFile} does not exist: ${fix}`);
  let chromium: unknown;
  try {
    chromium = (JSON.parse(readFileSync(pathsFile, 'utf8')) as { chromium?: unknown }).chromium;
  } catch (error) {
    throw new ChromiumMissing(`the webview bench needs Chromium, and ${pathsFile} is not readable JSON (${(error as Error).message}): ${fix}`);
  }
  if (typeof chromium !== 'string' || chromium === '') throw new ChromiumMissing(`the webview bench needs Chromium, and ${pathsFile} names none: ${fix}`);
  if (!existsSync(chromium)) throw new ChromiumMissing(`the webview bench needs Chromium, and ${chromium} (from ${pathsFile}) does not exist: ${fix}`);
  return chromium;
}

export async function launchChromium(executablePath: string): Promise<Browser> {
  // Loaded at run time, not bundled: playwright-core finds its own files beside itself.
  const { chromium } = createRequire(__filename)('playwright-core') as typeof import('playwright-core');
  return chromium.launch({
    executablePath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
