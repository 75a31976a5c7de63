/**
 * Webview entry (dist/webview.js, an IIFE loaded with the page's CSP nonce).
 * Injects the stylesheet under the same nonce, registers the toolkit, mounts <App>.
 */
import './zodConfig'; // must stay first: configures zod before any schema module is evaluated
import { render } from 'preact';
import { App } from './App';
import { createVsCodeBridge } from './bridge';
import { registerToolkit } from './components';
import css from './styles.css';

// Read while this script runs: `currentScript` is null once evaluation has finished.
const scriptNonce = (document.currentScript as HTMLScriptElement | null)?.nonce ?? '';

function injectStyles(text: string, nonce: string): void {
  const style = document.createElement('style');
  if (nonce) style.nonce = nonce;
  style.setAttribute('data-rennet', 'styles');
  style.textContent = text;
  document.head.appendChild(style);
}

async function boot(): Promise<void> {
  injectStyles(css, scriptNonce);
  await registerToolkit();
  const root = document.getElementById('root');
  if (!root) throw new Error('Rennet panel: #root is missing');
  root.textContent = '';
  render(<App bridge={createVsCodeBridge()} />, root);
}

void boot().catch((error: unknown) => {
  console.error('[rennet] the panel failed to start', error);
  const root = document.getElementById('root');
  if (root) root.textContent = `The Rennet panel failed to start: ${String(error)}`;
});
