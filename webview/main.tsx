/**
 * Webview entry (dist/webview.js, an IIFE loaded with the page's CSP nonce).
 * Injects the stylesheet under the same nonce, registers the toolkit, and mounts the root the page
 * names in `<div id="root" data-view="…">`: <App> (the board panel, the default) or <PreviewApp>
 * (`review-preview`, the preview of a forge review). One bundle, one CSP, one Markdown reader.
 */
import './zodConfig'; // must stay first: configures zod before any schema module is evaluated
import { render } from 'preact';
import { App } from './App';
import { createPreviewBridge, createVsCodeBridge } from './bridge';
import { PreviewApp } from './preview/PreviewApp';
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
  const view = root.getAttribute('data-view');
  root.textContent = '';
  render(view === 'review-preview' ? <PreviewApp bridge={createPreviewBridge()} /> : <App bridge={createVsCodeBridge()} />, root);
}

void boot().catch((error: unknown) => {
  console.error('[rennet] the panel failed to start', error);
  const root = document.getElementById('root');
  if (root) root.textContent = `The Rennet panel failed to start: ${String(error)}`;
});
