/**
 * What the gutter citation marks show, computed without VS Code: which lines of a document carry a
 * mark of which lens, the one gutter icon of each line (every lens citing it), and the hover of
 * each marked range. Pure (no `vscode` import), so unit tests run in plain Node; `citationMarks.ts`
 * turns the plan into decorations.
 *
 * Lines are 1-based and inclusive here, as in `CitationMark`.
 */
import { md, mdCommand, mdJoin, type Md } from './uiText';
import { LENSES, LENS_TITLES, type CitationSide, type Lens } from '../protocol/board';
import { filesOnSides, type SideNamedFile } from '../protocol/patchset';
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
export type CaptureFileName = SideNamedFile;

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
  hover: Md | null;
}

/**
 * The gutter icon of a run of lines: VS Code draws one glyph per line, so a line cited by several
 * lenses gets one icon showing all of them (`gutterIconName`).
 */
export interface GutterMark {
  /** Every lens citing these lines, in canonical order; never empty. */
  lenses: Lens[];
  startLine: number;
  endLine: number;
}

export interface MarksPlan {
  /** Per lens: its overview-ruler marks, carrying the hovers. */
  byLens: Record<Lens, PlannedMark[]>;
  /** The gutter icons, by line; adjacent lines with the same lenses share one. */
  gutter: GutterMark[];
}

export function emptyPlan(): MarksPlan {
  return { byLens: { design: [], sequence: [], decisions: [], flagged: [], noise: [] }, gutter: [] };
}

/**
 * The file name of the gutter icon for lines these lenses cite: a lens's own `lens-<lens>.svg`
 * (media/), and for several lenses their `lens-<lens>` names in canonical order joined by `_`
 * (`lens-sequence_lens-flagged.svg`), so every lens shown stays readable in the icon's URL.
 */
export function gutterIconName(lenses: readonly Lens[]): string {
  const ordered = LENSES.filter((lens) => lenses.includes(lens));
  if (ordered.length === 0) throw new RangeError('a gutter icon shows at least one lens');
  return `${ordered.map((lens) => `lens-${lens}`).join('_')}.svg`;
}

/**
 * The citations that land on the document showing `doc`: those whose path names the same captured
 * file on the document's side, by protocol/patchset.ts's one rule (so a rename's base side is the
 * same document under its old or new path); with no file list (not read yet) only the exact path
 * matches.
 */
export function citationsOfDocument(citations: readonly CitationMark[], doc: DocumentSide, files: readonly CaptureFileName[] | null): CitationMark[] {
  if (!files) return citations.filter((c) => c.side === doc.side && c.path === doc.path);
  const named = filesOnSides(files);
  const target = named.on(doc.path, doc.side);
  if (!target) return [];
  return citations.filter((c) => c.side === doc.side && named.on(c.path, c.side) === target);
}

/**
 * The marks of one document: for every run of lines covered by the same citations, one mark per
 * lens present (so a line cited by two lenses shows both marks and a line cited twice by one lens
 * shows one), one hover on the first lens's mark listing every citation of the run, and one gutter
 * icon naming every lens present (runs with the same lenses that touch are one icon range).
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
    lenses.forEach((lens, index) => plan.byLens[lens].push({ lens, startLine: start, endLine: end, hover: index === 0 ? hover : null }));
    const last = plan.gutter[plan.gutter.length - 1];
    if (last && last.endLine === start - 1 && last.lenses.join() === lenses.join()) last.endLine = end;
    else plan.gutter.push({ lenses, startLine: start, endLine: end });
  }
  return plan;
}

// ─── Combined gutter icons ───────────────────────────────────────────────────────────────────

/** Side of the combined icon's square box, in user units (the lens icons use the same box). */
const ICON_BOX = 16;
/** Of each lens icon, this fraction of its box is cropped from every edge: the shapes keep clear of it. */
const ICON_CROP = 1 / 16;

/** A lens icon as drawn: its viewBox (x, y, width, height) and the markup inside its `<svg>`. */
export interface IconDrawing {
  viewBox: [number, number, number, number];
  body: string;
}

/** The drawing of an SVG document (our own media/lens-<lens>.svg); why not, when it has none. */
export function svgDrawing(svg: string): { ok: true; drawing: IconDrawing } | { ok: false; reason: string } {
  const open = /<svg\b[^>]*>/.exec(svg);
  const close = svg.lastIndexOf('</svg>');
  if (!open || close < open.index + open[0].length) return { ok: false, reason: 'it is not an <svg> element' };
  const attr = (name: string) => new RegExp(`\\s${name}="([^"]*)"`).exec(open[0])?.[1];
  const box = attr('viewBox')
    ?.trim()
    .split(/[\s,]+/)
    .map(Number) ?? [0, 0, Number(attr('width')), Number(attr('height'))];
  if (box.length !== 4 || !box.every(Number.isFinite) || (box[2] as number) <= 0 || (box[3] as number) <= 0) return { ok: false, reason: 'it has no usable viewBox or size' };
  return { ok: true, drawing: { viewBox: box as IconDrawing['viewBox'], body: svg.slice(open.index + open[0].length, close) } };
}

/**
 * The one gutter icon of lines several lenses cite: each lens's own icon, cropped to its middle and
 * shrunk into a tile of a 16×16 box, in canonical lens order — two side by side, three or four in
 * two rows of two, five in a row of three over a row of two — rows and tiles centred.
 */
export function combinedIconSvg(icons: ReadonlyArray<{ lens: Lens; svg: string }>): { ok: true; svg: string } | { ok: false; reason: string } {
  const ordered = [...icons].sort((a, b) => LENSES.indexOf(a.lens) - LENSES.indexOf(b.lens));
  const n = ordered.length;
  if (n === 0) return { ok: false, reason: 'no lens to show' };
  const cols = n <= 2 ? n : n <= 4 ? 2 : 3;
  const rows = Math.ceil(n / cols);
  const tile = ICON_BOX / Math.max(cols, rows);
  const top = (ICON_BOX - rows * tile) / 2;
  const tiles: string[] = [];
  for (let i = 0; i < n; i++) {
    const { lens, svg } = ordered[i] as { lens: Lens; svg: string };
    const drawn = svgDrawing(svg);
    if (!drawn.ok) return { ok: false, reason: `the ${lens} icon cannot be combined: ${drawn.reason}` };
    const row = Math.floor(i / cols);
    const inRow = Math.min(cols, n - row * cols);
    const x = (ICON_BOX - inRow * tile) / 2 + (i - row * cols) * tile;
    const y = top + row * tile;
    const [bx, by, bw, bh] = drawn.drawing.viewBox;
    const viewBox = [bx + bw * ICON_CROP, by + bh * ICON_CROP, bw * (1 - 2 * ICON_CROP), bh * (1 - 2 * ICON_CROP)].map(num).join(' ');
    tiles.push(`<svg x="${num(x)}" y="${num(y)}" width="${num(tile)}" height="${num(tile)}" viewBox="${viewBox}">${drawn.drawing.body}</svg>`);
  }
  return {
    ok: true,
    svg: `<svg xmlns="http://www.w3.org/2000/svg" width="${ICON_BOX}" height="${ICON_BOX}" viewBox="0 0 ${ICON_BOX} ${ICON_BOX}">${tiles.join('')}</svg>\n`,
  };
}

/** A coordinate as SVG text: at most three decimals, no trailing zeros. */
function num(value: number): string {
  return String(Math.round(value * 1000) / 1000);
}

/**
 * The hover of a marked run: one paragraph per cited element (lens order, then line), each naming
 * the lens and the claim and linking to the element on the board. Claims are model-written: they
 * go in as escaped text (uiText.ts), so no character of theirs is Markdown; the only link is ours,
 * `mdCommand` to `rennet.revealElement`, the one command the hover's MarkdownString trusts.
 */
export function hoverMarkdown(citations: readonly CitationMark[], reveal: { sessionId: string; generationId: string }): Md {
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
    const text = claim ? md`${claim.length > CLAIM_MAX_CHARS ? `${claim.slice(0, CLAIM_MAX_CHARS - 1)}…` : claim}` : md`*(no claim)*`;
    const link = mdCommand('Show on board', REVEAL_ELEMENT_COMMAND, [revealArgs({ sessionId: reveal.sessionId, generationId: reveal.generationId, lens: c.lens, elementId: c.elementId })]);
    return md`**${LENS_TITLES[c.lens]}** — ${text} · ${link}`;
  });
  const rest = entries.length - shown.length;
  if (rest > 0) shown.push(md`*and ${String(rest)} more on the board*`);
  return mdJoin(shown, '\n\n');
}

/** The arguments `rennet.revealElement` takes, field by field (nothing else rides along). */
function revealArgs(args: RevealElementArgs): RevealElementArgs {
  return { sessionId: args.sessionId, generationId: args.generationId, lens: args.lens, elementId: args.elementId };
}

function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
