/**
 * From the document's text selection to the board element it sits in. The only DOM reading the
 * selection toolbar does; what the selection becomes (a quote anchor) is decided in ./asks.ts.
 */

/** A selection inside one element's rendered text. */
export interface ElementSelection {
  /** `data-id` of the nearest element root (`[data-testid="element"]`). */
  elementId: string;
  /** The selected text, as the browser reads it. */
  text: string;
}

/** Marks the panel's own ask UI (threads, toolbar, composer): selecting there quotes nothing. */
export const ASK_UI_ATTRIBUTE = 'data-ask-ui';

/**
 * The element a selection quotes: the selection lies within `container`, is not collapsed, holds
 * non-blank text, is not inside the panel's own ask UI or a text field, and has an element root
 * around all of it (the nearest one is the quoted element). Anything else quotes nothing.
 */
export function selectionInElement(selection: Selection | null, container: Element): ElementSelection | null {
  if (!selection || selection.rangeCount === 0 || selection.isCollapsed) return null;
  const range = selection.getRangeAt(0);
  const common = range.commonAncestorContainer;
  const start = common.nodeType === 1 ? (common as Element) : common.parentElement;
  if (!start || !container.contains(start)) return null;
  if (start.closest(`[${ASK_UI_ATTRIBUTE}], textarea, input, select`)) return null;
  const root = start.closest('[data-testid="element"]');
  if (!root || !container.contains(root)) return null;
  const elementId = root.getAttribute('data-id');
  const text = selection.toString();
  if (!elementId || text.trim().length === 0) return null;
  return { elementId, text };
}
