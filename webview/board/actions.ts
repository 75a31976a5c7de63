/**
 * What the board view may ask of the extension. The App implements it over the PanelBridge;
 * component tests pass a recording fake. The board never touches the bridge itself.
 */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { CitationSide } from '../../protocol';

export interface BoardActions {
  /** Open a cited range (1-based, inclusive) in the editor. */
  openCitation(path: string, side: CitationSide, startLine: number, endLine: number): void;
  /** Open a repo-relative file (a source chip). */
  openFile(path: string, side: CitationSide): void;
  /** Draft the lens boards again. */
  runLenses(): void;
  /** Show a frozen generation, or with null the live one. */
  selectGeneration(generationId: string | null): void;
}

export const BoardActionsContext = createContext<BoardActions | null>(null);

export function useBoardActions(): BoardActions {
  const actions = useContext(BoardActionsContext);
  if (!actions) throw new Error('Board components need BoardActions');
  return actions;
}

/** A 1-based inclusive range the protocol accepts, whatever a board carried. */
export function normalizeRange(startLine: number, endLine: number): { startLine: number; endLine: number } {
  const start = Number.isFinite(startLine) ? Math.max(1, Math.floor(startLine)) : 1;
  const end = Number.isFinite(endLine) ? Math.max(start, Math.floor(endLine)) : start;
  return { startLine: start, endLine: end };
}
