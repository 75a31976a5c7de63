/**
 * The board panel's HTML shell. Pure (no `vscode` import) so the CSP can be unit-tested.
 * The bundle (dist/webview.js) injects its own stylesheet in a `<style>` carrying the same nonce.
 * `<meta property="csp-nonce">` is where FAST (under the webview-ui-toolkit) looks for the nonce
 * for the one `<style>` element it creates (its :focus-visible probe).
 */

export interface PanelHtmlInput {
  /** `webview.cspSource` */
  cspSource: string;
  /** `webview.asWebviewUri(dist/webview.js)` as a string */
  scriptUri: string;
  /** A fresh random nonce per render. */
  nonce: string;
  /** Shown until the app mounts (and if scripts never run). */
  title: string;
  /**
   * Which root the bundle mounts (`<div id="root" data-view="…">`): the board panel (default) or
   * the review preview. One bundle, one CSP, one sanitizer for both.
   */
  view?: 'board' | 'review-preview';
}

export function contentSecurityPolicy(cspSource: string, nonce: string): string {
  return [`default-src 'none'`, `script-src 'nonce-${nonce}'`, `style-src ${cspSource} 'nonce-${nonce}'`, `img-src ${cspSource} data:`, `font-src ${cspSource}`].join('; ') + ';';
}

export function panelHtml({ cspSource, scriptUri, nonce, title, view = 'board' }: PanelHtmlInput): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(contentSecurityPolicy(cspSource, nonce))}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<meta property="csp-nonce" content="${escapeHtml(nonce)}">
<title>${escapeHtml(title)}</title>
</head>
<body>
<div id="root" data-testid="rennet-root" data-view="${escapeHtml(view)}"><p class="rennet-boot">Loading ${escapeHtml(title)}…</p></div>
<script nonce="${escapeHtml(nonce)}" src="${escapeHtml(scriptUri)}"></script>
</body>
</html>`;
}

export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}
