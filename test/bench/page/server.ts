import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { escapeHtml, panelHtml } from '../../../extension/html';
import { installProbe } from './probe';

/**
 * A loopback server (127.0.0.1, port 0) for the bench page: the extension's own panel shell
 * (extension/html.ts, same CSP with a fresh nonce) with the probe script inserted before the built
 * bundle, and dist/webview.js as built. The bundle injects its own stylesheet, so there is no CSS
 * file to serve. A few `--vscode-*` theme variables stand in for the ones VS Code injects.
 */

export interface PanelServer {
  /** The panel page; `state` is what the stub's getState() answers (the restored PanelState). */
  url(state?: unknown): string;
  close(): Promise<void>;
}

const THEME = `:root {
  --vscode-font-family: system-ui, sans-serif; --vscode-font-size: 13px; --vscode-font-weight: normal;
  --vscode-editor-font-family: monospace; --vscode-editor-font-size: 13px;
  --vscode-foreground: #cccccc; --vscode-editor-background: #1f1f1f; --vscode-descriptionForeground: #9d9d9d;
  --vscode-textLink-foreground: #4daafc; --vscode-button-background: #0078d4; --vscode-button-foreground: #ffffff;
  --vscode-panel-border: #2b2b2b; --vscode-focusBorder: #0078d4; --vscode-badge-background: #616161; --vscode-badge-foreground: #f8f8f8;
}
body { font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); color: var(--vscode-foreground);
  background: var(--vscode-editor-background); margin: 0; padding: 0 20px; }`;

export async function startPanelServer(webviewBundle: string): Promise<PanelServer> {
  if (!existsSync(webviewBundle)) throw new Error(`${webviewBundle} is missing: run npm run build first`);
  const bundle = readFileSync(webviewBundle);
  const probe = `(${installProbe.toString()})();\n`;
  let origin = '';
  const page = (): string => {
    const nonce = randomBytes(16).toString('hex');
    const shell = panelHtml({ cspSource: origin, scriptUri: `${origin}/webview.js`, nonce, title: 'Rennet bench' });
    const extra = `<style nonce="${escapeHtml(nonce)}">${THEME}</style>\n<script nonce="${escapeHtml(nonce)}" src="${origin}/probe.js"></script>\n`;
    const at = shell.indexOf('<script nonce=');
    if (at < 0) throw new Error('extension/html.ts panelHtml has no nonce script tag to insert the probe before');
    return shell.slice(0, at) + extra + shell.slice(at);
  };

  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    const send = (type: string, body: string | Buffer) => {
      res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    if (path === '/panel.html') return send('text/html; charset=utf-8', page());
    if (path === '/probe.js') return send('text/javascript; charset=utf-8', probe);
    if (path === '/webview.js') return send('text/javascript; charset=utf-8', bundle);
    // Chromium asks for one; an answer keeps a 404 out of the page's console, which the bench watches.
    if (path === '/favicon.ico') return void res.writeHead(204).end();
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: (state) => `${origin}/panel.html${state === undefined ? '' : `?state=${encodeURIComponent(JSON.stringify(state))}`}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
