/**
 * The ONLY module that touches @vscode/webview-ui-toolkit.
 *
 * The toolkit was sunset by its maintainers (last release 1.4.0, deprecated 2025-01-01). It is
 * the user's choice, so the panel uses it for its buttons — but only through the small preact
 * components below. Moving to a maintained set (e.g. @vscode-elements/elements)
 * means rewriting this file and nothing else.
 *
 * The toolkit is loaded with dynamic imports of its individual component modules, so:
 * - the bundle only carries the button and the design system (esbuild inlines these
 *   imports into the single IIFE; no extra files, nothing for the CSP to allow);
 * - importing this module needs no DOM (unit tests render the plain fallbacks).
 * If registration fails (e.g. a webview without custom elements), every component falls back to
 * a plain element themed with the same --vscode-* variables.
 */
import { h, type ComponentChildren } from 'preact';

let toolkitReady = false;

/** Register the toolkit's custom elements. Resolves false (and logs) if they cannot be used. */
export async function registerToolkit(): Promise<boolean> {
  if (toolkitReady) return true;
  try {
    if (typeof customElements === 'undefined') throw new Error('custom elements are not available');
    const [{ provideVSCodeDesignSystem }, { vsCodeButton }] = await Promise.all([
      import('@vscode/webview-ui-toolkit/dist/vscode-design-system.js'),
      import('@vscode/webview-ui-toolkit/dist/button/index.js'),
    ]);
    provideVSCodeDesignSystem().register(vsCodeButton());
    toolkitReady = true;
  } catch (error) {
    console.warn(`[rennet] webview-ui-toolkit unavailable, using plain elements: ${String(error)}`);
    toolkitReady = false;
  }
  return toolkitReady;
}

/** Whether the toolkit's elements are in use (for diagnostics and tests). */
export function usingToolkit(): boolean {
  return toolkitReady;
}

export interface ButtonProps {
  onClick: () => void;
  disabled?: boolean;
  appearance?: 'primary' | 'secondary';
  /** Accessible name when the visible text is not enough. */
  ariaLabel?: string;
  title?: string;
  testId?: string;
  children: ComponentChildren;
}

export function Button({ onClick, disabled = false, appearance = 'primary', ariaLabel, title, testId, children }: ButtonProps) {
  const common = {
    'aria-label': ariaLabel,
    title,
    'data-testid': testId,
    disabled,
    'aria-disabled': disabled ? 'true' : undefined,
    onClick: () => {
      if (!disabled) onClick();
    },
  };
  if (toolkitReady) {
    return h('vscode-button', { ...common, appearance, class: 'rn-tk-button' }, children);
  }
  return h('button', { ...common, type: 'button', class: `rn-button rn-button-${appearance}` }, children);
}

export interface CountBadgeProps {
  count: number;
  /** What is counted, for assistive technology: "12 files". */
  label: string;
  testId?: string;
}

/**
 * A count badge. Deliberately NOT the toolkit's <vscode-badge>: its template carries an inline
 * `style` attribute, which the panel's strict CSP (no 'unsafe-inline') refuses and reports on
 * every render. A plain element themed with --vscode-badge-* looks the same.
 */
export function CountBadge({ count, label, testId }: CountBadgeProps) {
  return h('span', { 'aria-label': label, title: label, 'data-testid': testId, 'data-count': String(count), class: 'rn-count-badge' }, String(count));
}
