/**
 * Whether a checkout file's text still is the captured head, decided without VS Code. Review
 * surfaces name lines by the capture's numbers (citations, asks, findings); once the file is
 * edited a number may name another line. Pure (no `vscode` import): `capturedHeads.ts` reads the
 * blobs and keeps the answers, and each caller decides what an answer that cannot be had means.
 */

/** The captured head as `PatchsetReadBlob` answers it (text null: binary). */
export interface CapturedHeadText {
  text: string | null;
  truncated: boolean;
}

/** How a document's text reads against the captured head of its file. */
export type HeadReading =
  /** The text is the captured head: every line is the capture's. */
  | { kind: 'captured' }
  /**
   * Only the head's start was captured (truncated): the document's first `lines` lines are its
   * whole captured lines; 0 when the document does not start with them, or no line was whole.
   */
  | { kind: 'captured-prefix'; lines: number }
  /** The text differs from the captured head. */
  | { kind: 'changed' }
  /** The head is binary: there are no lines to compare. */
  | { kind: 'binary' }
  /** The head could not be read (`message` says why); it may be asked again. */
  | { kind: 'unreadable'; message: string };

/** Text as the editor numbers its lines: no UTF-8 BOM, CRLF and CR read as LF. */
function asLines(text: string): string {
  const unmarked = text.startsWith('\uFEFF') ? text.slice(1) : text;
  return unmarked.includes('\r') ? unmarked.replace(/\r\n?/g, '\n') : unmarked;
}

/**
 * Reads a document's text (an editor's, or a file's as decoded from disk) against the captured
 * head. Line endings do not count (a checkout with other line endings, e.g. git's autocrlf, has
 * the same line numbers), nor does a UTF-8 BOM (it is not part of an editor's text).
 */
export function readAgainstCaptured(documentText: string, head: CapturedHeadText): HeadReading {
  if (head.text === null) return { kind: 'binary' };
  const text = asLines(documentText);
  const captured = asLines(head.text);
  if (!head.truncated) return text === captured ? { kind: 'captured' } : { kind: 'changed' };
  const prefix = captured.slice(0, captured.lastIndexOf('\n') + 1);
  if (prefix === '') return { kind: 'captured-prefix', lines: 0 };
  // The captured start no longer opens the document: lines may have moved, as for a whole head.
  if (!text.startsWith(prefix)) return { kind: 'changed' };
  let lines = 0;
  for (let i = prefix.indexOf('\n'); i >= 0; i = prefix.indexOf('\n', i + 1)) lines++;
  return { kind: 'captured-prefix', lines };
}

/**
 * How many leading lines of the document are known to be the capture's: all (Infinity), a
 * truncated head's matching whole lines, or none once it changed. null: it cannot be known (a
 * binary or unreadable head); the caller says what that means for it.
 */
export function capturedLineCount(reading: HeadReading): number | null {
  switch (reading.kind) {
    case 'captured':
      return Number.POSITIVE_INFINITY;
    case 'captured-prefix':
      return reading.lines;
    case 'changed':
      return 0;
    case 'binary':
    case 'unreadable':
      return null;
  }
}

/** Whether two readings say the same (an answer that changed is news to whoever drew on the old one). */
export function sameReading(a: HeadReading | undefined, b: HeadReading | undefined): boolean {
  if (!a || !b) return a === b;
  return a.kind === b.kind && capturedLineCount(a) === capturedLineCount(b);
}
