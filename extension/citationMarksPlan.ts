/**
 * What the gutter citation marks show, computed without VS Code: which lines of a document carry a
 * mark of which lens, and the hover of each marked range. Pure (no `vscode` import), so unit tests
 * run in plain Node; `citationMarks.ts` turns the plan into decorations.
 *
 * Lines are 1-based and inclusive here, as in `CitationMark`.
 */
import { LENSES, LENS_TITLES, type CitationSide, type Lens } from '../protocol/board';
import type { CitationMark } from '../protocol/review';

export const REVEAL_ELEMENT_COMMAND = 'rennet.revealElement';

/** Citations listed in one hover at most; the rest are counted (the board lists them all). */
export const HOVER_MAX_ENTRIES = 8;
/** Claims are bounded by the host already; this is only a guard for the hover's size. */
const CLAIM_MAX_CHARS = 400;

/** What `rennet.revealElement` takes; the hover's "Show on board" link carries it. */
export interface RevealElementArgs {
  sessionId: string;
  generationId: string;
  lens: Lens;
  elementId: string;
}

/** A changed file of the capture, as far as matching citations to documents needs it. */
export interface CaptureFileName {
  path: string;
  oldPath: string | null;
}

/** Which side of which captured file a document shows. */
export interface DocumentSide {
  path: string;
  side: CitationSide;
}

export interface PlannedMark {
  lens: Lens;
  startLine: number;
  endLine: number;
  /** Markdown listing every citation on these lines (all lenses); null on the other lenses' marks of the same lines. */
  hover: string | null;
}

export type MarksPlan = Record<Lens, PlannedMark[]>;

export function emptyPlan(): MarksPlan {
  return { design: [], sequence: [], decisions: [], flagged: [], noise: [] };
}

/**
 * The citations that land on the document showing `doc`. A rename's base side may be named by
 * either its old or its new path (the host accepts both, old names first), so both resolve to the
 * same captured file; with no file list (not read yet) only the exact path matches.
 */
export function citationsOfDocument(citations: readonly CitationMark[], doc: DocumentSide, files: readonly CaptureFileName[] | null): CitationMark[] {
  if (!files) return citations.filter((c) => c.side === doc.side && c.path === doc.path);
  const fileOf = (path: string, side: CitationSide): CaptureFileName | undefined =>
    side === 'head' ? files.find((f) => f.path === path) : (files.find((f) => f.oldPath === path) ?? files.find((f) => f.path === path));
  const target = fileOf(doc.path, doc.side);
  if (!target) return [];
  return citations.filter((c) => c.side === doc.side && fileOf(c.path, c.side) === target);
}

/**
 * The marks of one document: for every run of lines covered by the same citations, one mark per
 * lens present (so a line cited by two lenses shows both marks and a line cited twice by one lens
 * shows one), and one hover on the first lens's mark listing every citation of the run.
 * Only lines 1..min(lineCount, verifiedLines) are marked: past them the document is not known to
 * hold the captured lines (see `capturedLineCount` in capturedHeadsPlan.ts).
 */
export function planMarks(citations: readonly CitationMark[], doc: { lineCount: number; verifiedLines: number }, reveal: { sessionId: string; generationId: string }): MarksPlan {
  const plan = emptyPlan();
  const lastLine = Math.min(doc.lineCount, doc.verifiedLines);
  if (lastLine < 1) return plan;

  // Clamp, drop what starts past the end, and drop repeats (one element citing a range twice).
  const spans: CitationMark[] = [];
  const seen = new Set<string>();
  for (const c of citations) {
    if (c.startLine > lastLine || c.endLine < c.startLine) continue;
    const span = { ...c, endLine: Math.min(c.endLine, lastLine) };
    const key = `${span.lens}\u0000${span.elementId}\u0000${span.startLine}\u0000${span.endLine}`;
    if (seen.has(key)) continue;
    seen.add(key);
    spans.push(span);
  }
  if (spans.length === 0) return plan;

  // Runs: between consecutive boundaries the set of covering citations does not change.
  const boundaries = [...new Set(spans.flatMap((s) => [s.startLine, s.endLine + 1]))].sort((a, b) => a - b);
  for (let i = 0; i + 1 < boundaries.length; i++) {
    const start = boundaries[i] as number;
    const end = (boundaries[i + 1] as number) - 1;
    const covering = spans.filter((s) => s.startLine <= start && s.endLine >= end);
    if (covering.length === 0) continue;
    const lenses = LENSES.filter((lens) => covering.some((s) => s.lens === lens));
    const hover = hoverMarkdown(covering, reveal);
    lenses.forEach((lens, index) => plan[lens].push({ lens, startLine: start, endLine: end, hover: index === 0 ? hover : null }));
  }
  return plan;
}

/**
 * The hover of a marked run: one paragraph per cited element (lens order, then line), each naming
 * the lens and the claim and linking to the element on the board. Claims are model-written: they
 * are escaped so no character of theirs is Markdown (no link, image, HTML or emphasis can come of
 * them); the only link is ours, to `rennet.revealElement`, the one command the hover may run.
 */
export function hoverMarkdown(citations: readonly CitationMark[], reveal: { sessionId: string; generationId: string }): string {
  const entries: CitationMark[] = [];
  const seen = new Set<string>();
  const ordered = [...citations].sort((a, b) => LENSES.indexOf(a.lens) - LENSES.indexOf(b.lens) || a.startLine - b.startLine);
  for (const c of ordered) {
    const key = `${c.lens}\u0000${c.elementId}`;
    if (seen.has(key)) continue;
    seen.add(key);
    entries.push(c);
  }
  const shown = entries.slice(0, HOVER_MAX_ENTRIES).map((c) => {
    const claim = collapse(c.claim);
    const text = claim ? escapeMarkdown(claim.length > CLAIM_MAX_CHARS ? `${claim.slice(0, CLAIM_MAX_CHARS - 1)}…` : claim) : '*(no claim)*';
    const link = revealCommandUri({ sessionId: reveal.sessionId, generationId: reveal.generationId, lens: c.lens, elementId: c.elementId });
    return `**${LENS_TITLES[c.lens]}** — ${text} · [Show on board](${link})`;
  });
  const rest = entries.length - shown.length;
  if (rest > 0) shown.push(`*and ${rest} more on the board*`);
  return shown.join('\n\n');
}

/** `command:rennet.revealElement?<args>`: JSON args, percent-encoded, parentheses too (they would end the link). */
export function revealCommandUri(args: RevealElementArgs): string {
  const query = encodeURIComponent(JSON.stringify([args])).replace(/\(/g, '%28').replace(/\)/g, '%29');
  return `command:${REVEAL_ELEMENT_COMMAND}?${query}`;
}

/**
 * Text that Markdown renders as itself: every ASCII punctuation character backslash-escaped
 * (CommonMark allows escaping any of them), so `[x](…)`, `<img>`, `*`, `#`, `|` and entity
 * references stay literal, and a bare URL cannot be auto-linked (its `:` and `/` are escaped).
 */
export function escapeMarkdown(text: string): string {
  return text.replace(/[!-/:-@[-`{-~]/g, '\\$&');
}

function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
