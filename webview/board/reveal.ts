/**
 * Bringing an element into view on request (a gutter hover's link, a thread's "Show on board"):
 * which folded top-level section must open first, and the scroll, focus and flash.
 */
import type { TreeNode } from './tree';

/** The top-level node whose subtree holds an element with this id (as the board renders it); null: none. */
export function rootContaining(roots: readonly TreeNode[], elementId: string): TreeNode | null {
  for (const root of roots) {
    const stack: TreeNode[] = [root];
    while (stack.length > 0) {
      const node = stack.pop() as TreeNode;
      if (node.element.id === elementId) return root;
      for (const child of node.children) stack.push(child);
    }
  }
  return null;
}

/** The class that flashes a revealed element (styles.css); removed again after the flash. */
export const REVEALED_CLASS = 'rn-revealed';
const FLASH_MS = 2000;

/** Scroll an element root into the middle of the view, focus it, and flash it once. */
export function revealInDom(element: HTMLElement): void {
  if (typeof element.scrollIntoView === 'function') element.scrollIntoView({ block: 'center' });
  element.focus({ preventScroll: true });
  element.classList.remove(REVEALED_CLASS);
  element.classList.add(REVEALED_CLASS);
  const view = element.ownerDocument.defaultView;
  (view ?? globalThis).setTimeout(() => element.classList.remove(REVEALED_CLASS), FLASH_MS);
}
