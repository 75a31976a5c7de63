/**
 * Which rows of the changed-files table are in the DOM (pure). A capture of 20,000 files would be
 * 20,000 rows and a quarter of a million nodes; the table renders the rows in view and an
 * overscan around them, and stands the rest in with gap rows of the same height.
 *
 * Every row is FILE_ROW_HEIGHT_PX tall (styles.css gives `.rn-file-row` the same height and keeps
 * its content on one line), so a row's place is its index times that height. Gaps are drawn as
 * stacks of power-of-two blocks, each a CSS class of fixed height: the panel's CSP allows no
 * `style` attribute, so no element can be given an arbitrary height.
 */

/** The height of one file row in CSS pixels; `--rn-file-row-height` in styles.css must match. */
export const FILE_ROW_HEIGHT_PX = 28;
/** Rows rendered beyond each edge of the view, so a scroll of a few rows shows rows already there. */
export const FILE_ROW_OVERSCAN = 24;
/** The window moves in steps of this many rows, so a slow scroll re-renders once per step, not per row. */
export const FILE_WINDOW_STEP = 12;
/** The view assumed before anything was measured (and where nothing can be: no layout). */
export const FILE_VIEW_FALLBACK_PX = 1200;
/** The largest gap block (2^17 rows); styles.css has a class for every power of two up to it. */
export const FILE_GAP_MAX_BLOCK = 1 << 17;

/** The rows [start, end) rendered. */
export interface RowWindow {
  start: number;
  end: number;
}

/**
 * The rows to render for a view: `viewTop` is the top of the visible area measured from the top of
 * the first row (negative while the table starts below the view's top), `viewHeight` its height.
 * The start snaps down and the end up to FILE_WINDOW_STEP, within [0, count].
 */
export function rowWindow(count: number, viewTop: number, viewHeight: number, rowHeight = FILE_ROW_HEIGHT_PX, overscan = FILE_ROW_OVERSCAN): RowWindow {
  if (count <= 0) return { start: 0, end: 0 };
  const top = Math.max(0, viewTop);
  const bottom = Math.max(0, viewTop + Math.max(0, viewHeight));
  const first = Math.floor(top / rowHeight);
  const last = Math.ceil(bottom / rowHeight);
  const start = Math.max(0, Math.floor((first - overscan) / FILE_WINDOW_STEP) * FILE_WINDOW_STEP);
  const end = Math.min(count, Math.ceil((last + overscan) / FILE_WINDOW_STEP) * FILE_WINDOW_STEP);
  // A view below the last row renders none (an empty window at the end).
  const clamped = Math.min(start, count);
  return { start: clamped, end: Math.max(clamped, end) };
}

export type FilePiece = { kind: 'gap'; rows: number; key: string } | { kind: 'row'; index: number };

/**
 * The table body in order: gaps and rendered rows. `keep` (the row holding the keyboard focus) is
 * rendered even outside the window, so scrolling it out of view does not drop the focus.
 */
export function windowPieces(count: number, window: RowWindow, keep: number | null = null): FilePiece[] {
  const rows: number[] = [];
  const kept = keep !== null && keep >= 0 && keep < count && (keep < window.start || keep >= window.end) ? keep : null;
  if (kept !== null && kept < window.start) rows.push(kept);
  for (let i = window.start; i < window.end; i++) rows.push(i);
  if (kept !== null && kept >= window.end) rows.push(kept);
  const pieces: FilePiece[] = [];
  let next = 0;
  for (const index of rows) {
    if (index > next) pieces.push({ kind: 'gap', rows: index - next, key: `gap-${next}` });
    pieces.push({ kind: 'row', index });
    next = index + 1;
  }
  if (count > next) pieces.push({ kind: 'gap', rows: count - next, key: `gap-${next}` });
  return pieces;
}

/** A gap of `rows` rows as block sizes, largest first, each a power of two ≤ FILE_GAP_MAX_BLOCK. */
export function gapBlocks(rows: number): number[] {
  const blocks: number[] = [];
  let left = Math.max(0, Math.floor(rows));
  while (left >= FILE_GAP_MAX_BLOCK) {
    blocks.push(FILE_GAP_MAX_BLOCK);
    left -= FILE_GAP_MAX_BLOCK;
  }
  for (let block = FILE_GAP_MAX_BLOCK >> 1; block >= 1; block >>= 1) {
    if (left >= block) {
      blocks.push(block);
      left -= block;
    }
  }
  return blocks;
}

/** The row a navigation key moves to from `from`, or null for a key that does not navigate. */
export function navigatedRow(key: string, from: number, count: number, pageRows: number): number | null {
  if (count <= 0) return null;
  const clamp = (i: number) => Math.max(0, Math.min(count - 1, i));
  switch (key) {
    case 'ArrowDown':
      return clamp(from + 1);
    case 'ArrowUp':
      return clamp(from - 1);
    case 'PageDown':
      return clamp(from + Math.max(1, pageRows));
    case 'PageUp':
      return clamp(from - Math.max(1, pageRows));
    case 'Home':
      return 0;
    case 'End':
      return count - 1;
    default:
      return null;
  }
}
