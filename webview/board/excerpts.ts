/**
 * The code excerpts of the generation on screen (GenerationSnapshot.excerpts), handed to code cards
 * through a context, and the pure reading of an excerpt into table rows. A board rendered outside
 * a generation has no excerpts (null), and its cards say the lines were not sent.
 */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { excerptKey, type CitationSide, type CodeExcerpt, type DiffLine, type ExcerptState } from '../../protocol';

export type ExcerptMap = Readonly<Record<string, CodeExcerpt>>;

/** null: nothing supplies excerpts here. */
export const ExcerptsContext = createContext<ExcerptMap | null>(null);

/** The excerpt of a cited span, if the generation sent one. */
export function useExcerpt(path: string, side: CitationSide, startLine: number, endLine: number): CodeExcerpt | null {
  const excerpts = useContext(ExcerptsContext);
  return excerptFor(excerpts, path, side, startLine, endLine);
}

export function excerptFor(excerpts: ExcerptMap | null, path: string, side: CitationSide, startLine: number, endLine: number): CodeExcerpt | null {
  if (!excerpts) return null;
  const key = excerptKey({ path, side, startLine, endLine });
  return Object.prototype.hasOwnProperty.call(excerpts, key) ? (excerpts[key] ?? null) : null;
}

// ─── Rows ───────────────────────────────────────────────────────────────────────────────────

export type ExcerptRow =
  | { type: 'line'; line: DiffLine; cited: boolean }
  /** Lines the capture has but the excerpt skips (between two hunks). */
  | { type: 'gap' };

/**
 * The excerpt's lines as rows: each marked cited when it lies in the span on the excerpt's side (a
 * line that side does not number counts at the gap it sits in, before the side's next line), with
 * a gap row wherever the numbering jumps.
 */
export function excerptRows(excerpt: Pick<CodeExcerpt, 'side' | 'startLine' | 'endLine' | 'lines'>): ExcerptRow[] {
  const lines = excerpt.lines;
  const start = excerpt.startLine;
  const end = Math.max(excerpt.startLine, excerpt.endLine);
  const own = (line: DiffLine) => (excerpt.side === 'base' ? line.oldLine : line.newLine);
  // Position of each line on the excerpt's side: its number, else just before the next numbered line.
  const positions = new Array<number>(lines.length);
  let next: number | null = null;
  for (let i = lines.length - 1; i >= 0; i--) {
    const n = own(lines[i] as DiffLine);
    if (n !== null) next = n;
    positions[i] = n ?? (next !== null ? next - 0.5 : Number.POSITIVE_INFINITY);
  }
  const rows: ExcerptRow[] = [];
  let lastOld: number | null = null;
  let lastNew: number | null = null;
  lines.forEach((line, i) => {
    const jumped = (line.oldLine !== null && lastOld !== null && line.oldLine > lastOld + 1) || (line.newLine !== null && lastNew !== null && line.newLine > lastNew + 1);
    if (jumped) rows.push({ type: 'gap' });
    if (line.oldLine !== null) lastOld = line.oldLine;
    if (line.newLine !== null) lastNew = line.newLine;
    const position = positions[i] as number;
    rows.push({ type: 'line', line, cited: position >= start && position <= end });
  });
  return rows;
}

// ─── Words ──────────────────────────────────────────────────────────────────────────────────

/** What a card says when the generation sent no excerpt for its range. */
export const NOT_SENT_NOTE = 'The lines of this range were not sent to the panel; View opens them in the editor.';

/** What a card says when a state arrives without its own sentence. */
export const EXCERPT_STATE_WORDS: Record<ExcerptState, string> = {
  captured: 'No captured lines cover this range.',
  truncated: 'These lines lie past what the capture kept of this file.',
  binary: 'This is a binary file: it has no lines to show.',
  submodule: 'This is a submodule: its content is another repository.',
  'not-captured': 'These lines are not in the capture this generation reads.',
  omitted: 'These lines were not sent: the generation already carries as many lines as a panel is sent.',
};

/** The sentence under an excerpt, or null when its lines speak for themselves. */
export function excerptNote(excerpt: CodeExcerpt): string | null {
  if (excerpt.note) return excerpt.note;
  if (excerpt.state !== 'captured' || excerpt.lines.length === 0) return EXCERPT_STATE_WORDS[excerpt.state] ?? EXCERPT_STATE_WORDS['not-captured'];
  return null;
}

const MARKERS: Record<DiffLine['kind'], string> = { add: '+', del: '-', context: ' ' };
const KIND_WORDS: Record<DiffLine['kind'], string> = { add: 'added', del: 'removed', context: 'unchanged' };

/** The +/-/space marker of a diff line and its word (a fixed table: never model text). */
export function lineMarker(kind: DiffLine['kind']): { marker: string; word: string; kind: DiffLine['kind'] } {
  const safe: DiffLine['kind'] = kind === 'add' || kind === 'del' ? kind : 'context';
  return { marker: MARKERS[safe], word: KIND_WORDS[safe], kind: safe };
}
