import { loadavg } from 'node:os';
import { join } from 'node:path';
import { benchFirstElement, formatFirstElement } from './firstElement';
import { chromiumPath, launchChromium } from './page/browser';
import { startPanelServer } from './page/server';
import { benchWebviewRender, formatWebviewRender } from './webviewRender';
import { benchFileList, formatFileList } from './webviewFiles';

/**
 * The board panel section of `npm run bench`: one headless Chromium and one loopback page server
 * for the render and latency figures (webviewRender.ts) and the end-to-end first element
 * (firstElement.ts). `distDir` holds the built webview.js and host.js (the bench runs from dist/).
 * Without Chromium this throws, saying how to install it: a figure is never skipped silently.
 */
export async function benchWebview(distDir: string, runs: number): Promise<string> {
  const executable = chromiumPath();
  const server = await startPanelServer(join(distDir, 'webview.js'));
  const browser = await launchChromium(executable);
  try {
    // Two cores shared with whatever else runs: the load average says how quiet the machine was.
    const load = () => loadavg()[0]?.toFixed(2) ?? '?';
    const header = `Chromium ${browser.version()} headless (software compositing), ${executable}; dist/webview.js as built; load average ${load()} at the start`;
    const render = await benchWebviewRender(browser, server, runs);
    const files = await benchFileList(browser, server, runs);
    const first = await benchFirstElement(browser, server, join(distDir, 'host.js'), runs);
    return [
      header,
      formatWebviewRender(render),
      '',
      '### Changed files of a 20,000-file capture (virtualized rows)',
      formatFileList(files),
      '',
      '### First element on screen after its write (real host, scripted model)',
      formatFirstElement(first),
      `(load average ${load()} at the end)`,
    ].join('\n');
  } finally {
    await browser.close();
    await server.close();
  }
}
